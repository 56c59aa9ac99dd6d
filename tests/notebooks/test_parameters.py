"""Every notebook parameter is one papermill can override: papermill finds each name the parameters cell
assigns (a comment holding `=` made it skip `ttls_h` and then warn that the override was unknown)."""

from __future__ import annotations

import ast
import json
import logging
from pathlib import Path

import pytest

NOTEBOOKS = sorted((Path(__file__).resolve().parents[2] / "notebooks").glob("*.ipynb"))


def _assigned(path: Path) -> list[str]:
    cells = json.loads(path.read_text())["cells"]
    (source,) = ["".join(c["source"]) for c in cells if "parameters" in c.get("metadata", {}).get("tags", [])]
    return [t.id for node in ast.parse(source).body if isinstance(node, ast.Assign)
            for t in node.targets if isinstance(t, ast.Name)]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.name)
def test_papermill_finds_every_parameter_the_cell_assigns(path: Path, caplog: pytest.LogCaptureFixture) -> None:
    import papermill

    with caplog.at_level(logging.WARNING):
        found = list(papermill.inspect_notebook(str(path)))
    assert found == _assigned(path)
    assert "Unable to parse" not in caplog.text
