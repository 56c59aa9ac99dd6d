"""Plots show themselves in Jupyter: IPython's display machinery finds a PNG for every plot function's
figure, which a bare matplotlib Figure (without pyplot's inline backend) does not have."""

from __future__ import annotations

import pandas as pd
from IPython.core.formatters import DisplayFormatter
from matplotlib.figure import Figure

from workbench.analysis import plots, sizing_plots
from workbench.analysis.figure import InlineFigure
from workbench.analysis.readings import Reading


def _mimes(obj: object) -> set[str]:
    data, _ = DisplayFormatter().format(obj)
    return set(data)


def test_a_bare_figure_has_no_image_but_ours_has_one() -> None:
    assert "image/png" not in _mimes(Figure())  # the bug: Jupyter printed <Figure size ...>
    assert "image/png" in _mimes(InlineFigure())


def test_every_plot_function_returns_a_figure_jupyter_displays() -> None:
    combined = pd.DataFrame({
        "config": ["x", "y"], "point": ["p0", "p1"], "monthly_cost": [100.0, 200.0], "layout": ["balanced"] * 2,
        "servers": [2, 4], "layout_kind": ["balanced", "2 replica groups"], "label": ["a", "b"],
        "meets_slo": [True, False], "servers_queried_mean": [2.0, 4.0], "gc_delayed_rate": [0.01, 0.02],
        **{f"latency_ms.{p}.{k}": [10.0, 20.0] for p in ("p50", "p95", "p99", "p99.9")
           for k in ("value", "ci_low", "ci_high")},
    })
    figures = [plots.percentiles_by_config(combined), plots.gc_delay_by_fanout(combined),
               sizing_plots.cost_vs_p99(combined, 15.0), sizing_plots.layout_comparison(combined, 15.0),
               sizing_plots.whatif_bars(combined, 15.0)]
    for fig in figures:
        assert isinstance(fig, InlineFigure) and "image/png" in _mimes(fig)


def test_a_reading_shows_as_markdown_with_its_facts_in_the_metadata() -> None:
    data, metadata = DisplayFormatter().format(Reading("It holds.", {"claim": "separates", "x": 1.5}))
    assert data["text/markdown"] == "**Reading.** It holds."
    assert metadata["text/markdown"]["workbench"]["facts"] == {"claim": "separates", "x": 1.5}
