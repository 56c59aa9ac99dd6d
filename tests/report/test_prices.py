"""Instance prices: the shipped table, choosing an instance for a shape, the user's own table."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from workbench import defaults as D
from workbench.errors import InputError
from workbench.report.options import parse_report_options
from workbench.report.prices import load_prices, parse_prices
from workbench.report.sizing import load_sizing_data

GIB = 1024**3


def test_the_shipped_table_says_where_its_prices_come_from() -> None:
    table = load_prices()
    assert table.source.startswith("https://") and table.as_of and table.currency == "USD"
    assert len(table.instances) >= 6
    assert all(i.per_hour > 0 and i.vcpus >= 2 and i.memory_bytes >= 4 * GIB for i in table.instances.values())
    assert str(D.INSTANCE_PRICES_FILE).endswith("instance_prices.yaml")


def test_the_cheapest_instance_that_fits_cores_and_heap_is_chosen() -> None:
    table = parse_prices({"instances": {
        "small": {"vcpus": 4, "memory": "16G", "per_hour": 0.19},
        "fat": {"vcpus": 4, "memory": "32G", "per_hour": 0.25},
        "wide": {"vcpus": 8, "memory": "16G", "per_hour": 0.34},
        "big": {"vcpus": 8, "memory": "64G", "per_hour": 0.50}}}, "t")
    assert table.cheapest_fit(4, 8 * GIB, 2.0).name == "small"  # 8G heap needs 16G of memory
    assert table.cheapest_fit(4, 16 * GIB, 2.0).name == "fat"
    assert table.cheapest_fit(8, 16 * GIB, 2.0).name == "big"  # wide has the cores but not the memory
    assert table.cheapest_fit(16, 8 * GIB, 2.0) is None
    assert table.monthly(table.instances["fat"], 6, 730.0) == pytest.approx(6 * 0.25 * 730)


@pytest.mark.parametrize(("bad", "where"), [
    ({"instances": {"x": {"vcpus": 0, "memory": "8G", "per_hour": 1}}}, "t.instances.x.vcpus"),
    ({"instances": {"x": {"vcpus": 2, "memory": "lots", "per_hour": 1}}}, "t.instances.x.memory"),
    ({"instances": {"x": {"vcpus": 2, "memory": "8G"}}}, "t.instances.x"),
    ({"instances": {}}, "t.instances"),
    ({"currency": "EUR", "instancez": {}}, "t.instancez"),
])
def test_a_bad_price_table_names_the_key(bad: dict[str, object], where: str) -> None:
    with pytest.raises(InputError) as err:
        parse_prices(bad, "t")
    assert err.value.where == where


def test_the_users_own_prices_set_the_monthly_cost(layout_sweep: Path, tmp_path: Path) -> None:
    prices = tmp_path / "prices.yaml"
    prices.write_text("currency: EUR\ninstances:\n  box: {vcpus: 2, memory: 8G, per_hour: 1.5}\n")
    options = parse_report_options({"prices": str(prices), "memory_per_heap": 0.25}, "t")
    d = load_sizing_data(layout_sweep, options)
    assert d.prices is not None and d.prices.currency == "EUR"
    assert set(d.combined["instance"]) == {"box"}
    for _, row in d.combined.iterrows():
        assert row["monthly_cost"] == pytest.approx(row["servers"] * 1.5 * D.HOURS_PER_MONTH)


def test_a_shape_no_instance_fits_has_no_money_cost(layout_sweep: Path) -> None:
    options = parse_report_options({"prices": {"instances": {"tiny": {"vcpus": 1, "memory": "1G", "per_hour": 0.01}}}},
                                   "t")
    d = load_sizing_data(layout_sweep, options)  # synthetic.yaml: 1 core, a 16G heap
    assert d.combined["instance"].isna().all() and all(math.isnan(v) for v in d.combined["monthly_cost"])


def test_the_cluster_costs_its_brokers_controllers_and_zookeeper_too(layout_sweep: Path) -> None:
    """Default table, by hand: a broker (4 vCPU, 16G) is an m6i.xlarge at 0.192/h, two controllers the same,
    three ZooKeeper nodes (2 vCPU, 8G) c6i.xlarge at 0.170/h; 730 h a month. The synthetic workload has no
    segment sizes, so storage is not priced."""
    d = load_sizing_data(layout_sweep)
    fixed = (1 * 0.192 + 2 * 0.192 + 3 * 0.170) * 730
    for _, row in d.combined.iterrows():
        assert row["cluster_cost"] - row["monthly_cost"] == pytest.approx(fixed)


def test_page_one_gives_the_whole_bill_one_line_per_part(layout_sweep: Path, tmp_path: Path) -> None:
    import pypdfium2 as pdfium

    from workbench.report.sizing import build_sizing_report

    pdf = build_sizing_report(layout_sweep, tmp_path / "r.pdf")
    text = " ".join(pdfium.PdfDocument(str(pdf))[0].get_textpage().get_text_range().split())
    assert "Monthly cost of the whole cluster" in text
    assert "brokers: 1 x m6i.xlarge, 140 USD/month" in text and "controllers: 2 x m6i.xlarge, 280 USD/month" in text
    assert "ZooKeeper: 3 x c6i.xlarge, 372 USD/month" in text and "storage: not priced" in text
