"""The sweep file's `report:` section: validated with the sweep, recorded in sweep.json, read by the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from workbench.errors import InputError
from workbench.report.options import ReportOptions, parse_report_options
from workbench.sweep import SweepError, load_sweep

ROOT = Path(__file__).resolve().parents[2]


def test_defaults_without_a_report_section() -> None:
    assert parse_report_options(None) == ReportOptions()


@pytest.mark.parametrize(("section", "where"), [
    ({"colour": "red"}, "sweep: report.colour"),
    ({"whatif": "yes"}, "sweep: report.whatif"),
    ({"headroom": [0.5]}, "sweep: report.headroom"),
    ({"memory_per_heap": -1}, "sweep: report.memory_per_heap"),
    ({"utilisation_warning": 1.5}, "sweep: report.utilisation_warning"),
    ({"prices": "nowhere.yaml"}, "sweep: report.prices"),
])
def test_bad_options_name_their_key(section: dict[str, object], where: str) -> None:
    with pytest.raises(InputError) as err:
        parse_report_options(section, "sweep", ROOT)
    assert err.value.where == where


def test_a_sweep_file_checks_and_records_its_report_options(tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("instances:\n  box: {vcpus: 2, memory: 8G, per_hour: 1.5}\n")
    sweep = tmp_path / "s.yaml"
    sweep.write_text(f"base: {ROOT / 'scenarios' / 'synthetic.yaml'}\ngrid:\n  cluster.servers: [2]\n"
                     "report:\n  prices: prices.yaml\n  headroom: [2, 1.5]\n  whatif: false\n")
    spec = load_sweep(sweep)
    assert spec.report.prices == str(prices.resolve()) and spec.report.headroom == (1.5, 2.0)
    bad = tmp_path / "bad.yaml"
    bad.write_text(f"base: {ROOT / 'scenarios' / 'synthetic.yaml'}\ngrid:\n  cluster.servers: [2]\nreport:\n  pdf: x\n")
    with pytest.raises(SweepError, match=r"report\.pdf: unknown key"):
        load_sweep(bad)


def test_sweep_json_carries_the_options_to_the_report(layout_sweep: Path) -> None:
    recorded = json.loads((layout_sweep / "sweep.json").read_text())["report"]
    assert recorded == ReportOptions().to_json()
