"""The sizing report's first section on today's cluster: the verdict (``workbench verdict``), when one is there.

A lead sizing from a calibrated cluster first asks whether today's cluster is too small or too big. When
the sweep directory holds ``verdict.json`` (``workbench verdict CALIBRATED --out SWEEP``), or the base
scenario's directory does (``--out`` the calibrated directory), page 1 opens with one sentence per load
(today's peak, after growth): the verdict, the change, what Pinot moves, the money and why.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from workbench.io.tables import read_json_file
from workbench.report.data import SizingData, size_text

__all__ = ["VERDICT_FILE", "answer_sentence", "verdict_sentences"]

#: The file ``workbench verdict`` writes (:data:`workbench.studies.verdict.VERDICT_FILE`).
VERDICT_FILE = "verdict.json"


def _where(d: SizingData) -> Path | None:
    places = [d.sweep_dir / VERDICT_FILE]
    if d.base_scenario is not None:
        places.append(d.base_scenario.base_dir / VERDICT_FILE)
    return next((p for p in places if p.is_file()), None)


def _money(value: Any, currency: str) -> str:
    return "an unknown amount" if value is None else f"{abs(float(value)):,.0f} {currency}"


def answer_sentence(a: Mapping[str, Any], currency: str) -> str:
    """One answer of ``verdict.json`` as a sentence.

    >>> a = {"label": "today's peak", "verdict": "OVER", "today": {"servers": 3, "instance": "m"},
    ...      "change": {"servers": 2, "instance": "m", "cores": 4}, "segments_moved": 12, "bytes_moved": 2**30,
    ...      "monthly_delta": -180.0, "why": "the next smaller shape breaks p99_ms"}
    >>> answer_sentence(a, "USD").split(". ")
    ["today's peak: OVER", '3 x m -> 2 x m: Pinot moves 12 segment replicas (1GB); saves 180 USD/month', \
'Why: the next smaller shape breaks p99_ms.']
    """
    t, c = a["today"], a.get("change")
    head = f"{a['label']}: {a['verdict']}."
    if c is None:
        fix = " Today's shape is the cheapest that meets the SLO." if a["verdict"] == "RIGHT" else \
            " No shape in the scan meets the SLO."
    else:
        word = "saves" if (a.get("monthly_delta") or 0) < 0 else "costs"
        fix = (f" {t['servers']} x {t['instance']} -> {c['servers']} x {c['instance']}: Pinot moves "
               f"{a['segments_moved']} segment replicas ({size_text(float(a['bytes_moved']))}B); "
               f"{word} {_money(a.get('monthly_delta'), currency)}/month.")
    return f"{head}{fix} Why: {a['why']}."


def verdict_sentences(d: SizingData) -> list[str] | None:
    """The verdict's sentences for page 1 (``None`` when no ``verdict.json`` is found)."""
    path = _where(d)
    if path is None:
        return None
    data = read_json_file(path, "verdict")
    currency = str(data.get("currency", ""))
    head = (f"Today's cluster ({data.get('source', '')}), at {data.get('peak', 'its peak')}, SLO p99 "
            f"{data.get('slo_p99_ms')} ms:")
    return [head, *(answer_sentence(a, currency) for a in data.get("answers", []))]
