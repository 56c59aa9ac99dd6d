"""The sizing report's detail pages, after page 1: each a function ``(data, findings) -> pages``.

Every plot carries one sentence that reads it, computed from the same numbers; a section returns no
pages when its data is absent (no replica-group layouts in the sweep, no rebalance to show...).
"""

from __future__ import annotations

import pandas as pd
from matplotlib.figure import Figure

from workbench.analysis import plots, sizing_plots
from workbench.analysis.readings import fanout_reading
from workbench.io.summary import GC_DELAYED_RATE, P99, P99_HIGH, P99_LOW, PARTIAL_RATE, UTILISATION_MEAN, latency_column
from workbench.report.data import SizingData, rank, size_text
from workbench.report.findings import Findings, layout_frame
from workbench.report.layout import A4_LANDSCAPE, Page, plot_page
from workbench.report.summary import money, ms

__all__ = ["configurations", "cost", "fanout", "gc_heap", "layouts", "whatifs"]


def _unit_table(d: SizingData, f: Findings) -> tuple[pd.DataFrame, int | None]:
    c = d.combined.copy()
    c = rank(c)
    currency = d.prices.currency if d.prices is not None else ""
    frame = pd.DataFrame({
        "swept values": c["config"].astype(str),
        "servers": c["servers"].astype(int),
        "instance": c["instance"].fillna("none fits"),
        "heap": [size_text(float(h)) for h in c["heap_bytes"]],
        "layout": c["layout"],
        f"servers {currency}/mo": [f"{v:,.0f}" if v == v else "–" for v in c["monthly_cost"]],
        f"cluster {currency}/mo": [f"{v:,.0f}" if v == v else "–" for v in c.get("cluster_cost", c["monthly_cost"])],
        "p50 (ms)": c[latency_column("p50")].round(1),
        "p99 (ms)": c[P99].round(1),
        "p99 95% interval (ms)": [f"[{lo:.0f}, {hi:.0f}]" for lo, hi in zip(c[P99_LOW],
                                                                           c[P99_HIGH], strict=True)],
        "busy (%)": (100 * c[UTILISATION_MEAN]).round(0).astype(int),
        "partial (%)": (100 * c[PARTIAL_RATE]).round(2),
        "meets SLO": c["meets_slo"].map({True: "yes", False: "no"}),
        "in its failure": [_survives(f, str(p)) for p in c["point"]],
    })
    highlight = None
    if f.best is not None:
        positions = list(c["point"])
        highlight = positions.index(f.best["point"])
    return frame, highlight


def _survives(f: Findings, point: str) -> str:
    """Whether a configuration met the SLO in its failure case (a dash: not run, it fails with every server up)."""
    s = f.survival.get(point)
    return "–" if s is None or f.survive == "none" else ("yes" if s.survives else "no")


def configurations(d: SizingData, f: Findings) -> list[Figure]:
    """Every configuration with its cost and latency, cheapest first, the recommendation highlighted."""
    frame, highlight = _unit_table(d, f)
    whose = "each table's 95% interval is under its own" if d.judging.tenant else "its 95% interval is under it"

    def page_of(start: int, rows: int) -> Page:
        page = Page("Every configuration simulated",
                    "in the report's order (cheapest cluster first); the recommendation is highlighted",
                    size=A4_LANDSCAPE, margin=0.04)
        hl = highlight - start if highlight is not None and start <= highlight < start + rows else None
        page.table(frame.iloc[start:start + rows].reset_index(drop=True), size=7.5, highlight=hl,
                   note=f"SLO: {d.judging.describe()}. A configuration meets it when the upper end of {whose}. "
                        "in its failure: whether it also meets it in the failure slo.survive names (the "
                        "recommendation must). busy: mean share of the servers' core time spent on queries. "
                        "partial: queries answered with some server's data missing. Cost: instances x price x 730 h; "
                        "the cluster adds brokers, "
                        "controllers, ZooKeeper and segment storage (page 1).")
        return page

    pages, start = [], 0
    while start < len(frame):
        rows = 34
        page = page_of(start, rows)
        while page.y < 0.02 and rows > 8:  # wrapped cells make rows taller: fewer rows on the page
            rows = int(rows * 0.75)
            page = page_of(start, rows)
        pages.append(page.fig)
        start += rows
    return pages


def cost(d: SizingData, f: Findings) -> list[Figure]:
    """Monthly cost against p99 for every configuration, by layout."""
    c = d.combined
    if c["monthly_cost"].isna().all():
        return []
    currency = d.prices.currency if d.prices is not None else ""
    best = f.best
    fig = sizing_plots.cost_vs_p99(c, d.judging.p99_ms, currency=currency,
                                   highlight=str(best["point"]) if best is not None else None)
    meets = int(c["meets_slo"].sum())
    text = f"{meets} of {len(c)} configurations keep their whole p99 interval under the SLO"
    if best is not None:
        text += (f"; the circled one is the cheapest of them, {best['shape']} at "
                 f"{money(float(best['monthly_cost']), currency)}/month")
    return [plot_page(fig, text + ". Points to the right cost more; points above the dashed line fail.")]


def layouts(d: SizingData, f: Findings) -> list[Figure]:
    """The routing seed's question: balanced against replica groups at the same server count, under GC."""
    frame = layout_frame(d, f.best)
    if frame["layout_kind"].nunique() < 2:
        return []
    agg = frame.sort_values(P99).drop_duplicates(["servers", "layout_kind"])
    fig = sizing_plots.layout_comparison(agg, d.judging.p99_ms)
    text = f.routing or ""
    cores, heap = int(frame["cores"].iloc[0]), size_text(float(frame["heap_bytes"].iloc[0]))
    return [plot_page(fig, f"{text} (Servers with {cores} cores and a {heap} heap, as recommended.) Fewer servers "
                           "per query means fewer chances to wait on a paused one, at the price of more work per "
                           "server for each query.")]


def whatifs(d: SizingData, f: Findings) -> list[Figure]:
    """The what-ifs of the recommendation, then its p99 as the load grows."""
    pages = []
    simulated = f.whatifs[f.whatifs[P99].notna()] if f.whatifs is not None else None
    if simulated is not None and len(simulated) > 1:
        fig = sizing_plots.whatif_bars(simulated, d.judging.p99_ms)
        parts = [f"{r['label']}: p99 {ms(r)}{'' if r['meets_slo'] else ' (breaks the SLO)'}"
                 for _, r in simulated.iterrows()]
        notes = "; ".join(f"{r['label']} is modelled as {r['note']}" for _, r in simulated.iloc[1:].iterrows())
        pages.append(plot_page(fig, "; ".join(parts) + f". ({notes}.)"))
    room = f.headroom
    if room is not None and len(room.runs) > 1:
        from workbench.report.summary import headroom_sentence

        fig = sizing_plots.headroom_curve(room.runs, d.judging.p99_ms)
        pages.append(plot_page(fig, headroom_sentence(f) + " Each point is the recommendation simulated at that "
                                                           "multiple of today's query rate."))
    return pages


def fanout(d: SizingData, f: Findings) -> list[Figure]:
    """How many servers and segments a query of the recommendation touches."""
    point = f.best["point"] if f.best is not None else d.combined.iloc[0]["point"]
    q = d.point_dirs[str(point)].read_table("queries")
    if q.empty or "servers_queried" not in q.columns:  # a `records: latency` run keeps no fan-out per query
        return []
    reading = fanout_reading(q)
    text = (f"{reading.text} The broker pruned {q['segments_pruned'].mean():.1f} segments per query on average; "
            "the more servers a query waits for, the likelier it meets a GC pause or a slow server.")
    fig = plots.fanout_histogram(q, "Fan-out of the recommended configuration")
    if fig is None:  # every query touched the same servers and segments: a sentence, not a one-bar plot
        page = Page("Fan-out of the recommended configuration", "servers and segments per query")
        page.paragraph(text)
        return [page.fig]
    return [plot_page(fig, text)]


def _heap_columns(servers: pd.DataFrame) -> tuple[str | None, str | None]:
    live = next((c for c in servers.columns if "heap" in c and "live" in c), None)
    peak = next((c for c in servers.columns if "heap" in c and "peak" in c), None)
    return live, peak


def gc_heap(d: SizingData, f: Findings) -> list[Figure]:
    """The recommendation's GC pauses by kind, its heap when the records carry it; upsert heap growth."""
    point = str(f.best["point"] if f.best is not None else d.combined.iloc[0]["point"])
    run = d.point_dirs[point]
    pauses = run.read_table("gc_pauses", ["replication"], what="GC pause records")
    pages = []
    sc = d.scenarios[point]
    if not pauses.empty:
        first = pauses[pauses["replication"] == pauses["replication"].min()]
        fig = sizing_plots.pause_timeline(first, "GC pauses of the recommended configuration (first replication)")
        q = run.read_table("queries", columns=["gc_delayed"])
        kinds = (", ".join(f"{n} {k}" for k, n in first["kind"].value_counts().items()) if "kind" in first
                 else f"{len(first)} pauses")
        text = (f"{kinds} on {first['server'].nunique()} servers; median {first['duration_ms'].median():.0f} ms, "
                f"longest {first['duration_ms'].max():.0f} ms; {q['gc_delayed'].mean():.1%} of queries met a pause.")
        servers = run.read_table("servers", what="server records")
        live, peak = _heap_columns(servers)
        heap = sc.cluster.server.heap
        if live is not None:
            text += f" Live heap per server {size_text(float(servers[live].mean()))}"
            text += (f", peak {size_text(float(servers[peak].max()))}" if peak is not None else "")
            text += f" of a {size_text(heap)} heap."
        else:
            text += (f" Heap {size_text(heap)} per server with {size_text(sc.cluster.gc.live_heap)} of long-lived data "
                     f"({sc.cluster.gc.collector}).")
        pages.append(plot_page(fig, text))
    heap_day = run.read_table("heap") if run.table_path("heap").is_file() else pd.DataFrame()
    if len(heap_day):
        pages.append(_upsert_day(d, point, heap_day))
    elif sc.table.is_upsert and (sc.cluster.gc.upsert_keys or 0) > 0:
        pages += _upsert_growth(d, f, point)
    return pages


def _upsert_day(d: SizingData, point: str, heap: pd.DataFrame) -> Figure:
    """Each server's live heap over the data's day (the upsert maps under the table's TTL, replayed from
    the data), the moment the run simulated, the heap and the SLO's limit."""
    sc = d.scenarios[point]
    summary = d.combined.set_index("point").loc[point]
    at = summary.get("heap.at_s")
    at_s = float(at) if at is not None and at == at else None
    fig = sizing_plots.heap_over_day(heap, at_s, sc.cluster.server.heap, sc.slo.max_heap,
                                     f"Upsert heap per server over the data's day ({point})")
    per = heap.groupby("server")["live_heap"].max()
    ttl = sc.table.upsert.metadata_ttl if sc.table.upsert is not None else 0.0
    text = (f"With metadataTTL {ttl:g} (comparison-column units), the busiest server peaks at "
            f"{size_text(float(per.max()))} of live heap ({int(heap['upsert_keys'].max()):,} primary keys) in a "
            f"{size_text(sc.cluster.server.heap)} heap; the run used the moment "
            f"{'' if at_s is None else f'{at_s / 3600:.1f} h '}into the data, where p99 was "
            f"{float(summary[P99]):.1f} ms and {float(summary[GC_DELAYED_RATE]):.1%} of queries "
            "met a GC pause.")
    if sc.slo.max_heap is not None:
        verdict = "within" if float(summary.get("heap.peak_max", 0.0)) <= sc.slo.max_heap else "over"
        text += f" Peak heap is {verdict} the SLO's {size_text(sc.slo.max_heap)}."
    return plot_page(fig, text)


def _allocation_rate(d: SizingData, point: str) -> float:
    """A point's allocation per server, bytes/s, when its scenario allocates per request only (``bytes_per_request``
    and no ``bytes_per_doc``, as a calibration writes): the run's throughput times the servers each query reached,
    over its servers, which is what its servers allocated. Otherwise (the documents each request scans are not in the
    sweep's table) 200 MiB/s, as before."""
    sc = d.scenarios[point]
    row = d.combined.set_index("point").loc[point]
    requests = float(row.get("throughput_qps", 0.0)) * float(row.get("servers_queried_mean", 0.0))
    per_server = requests / max(sc.cluster.servers, 1)
    if sc.cluster.gc.bytes_per_doc > 0 or not per_server > 0:
        return 200.0 * 1024**2
    return sc.cluster.gc.bytes_per_request * per_server


def _upsert_growth(d: SizingData, f: Findings, point: str) -> list[Figure]:
    """Heap per server and its young pauses as the upsert key count grows from today's."""
    from workbench.analysis.upsert_day import gc_at
    from workbench.pinot.heap import upsert_bytes_per_key

    sc = d.scenarios[point]
    gc = sc.cluster.gc
    keys_now = float(gc.upsert_keys or 0)
    hash_function = sc.table.upsert.hash_function.value if sc.table.upsert is not None else "NONE"
    rate = gc.allocation_rate if gc.allocation_rate is not None else _allocation_rate(d, point)
    updates = gc.update_rate or 0.0
    rows = []
    for factor in (0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0):
        keys = keys_now * factor
        per_key = upsert_bytes_per_key(["LONG"], hash_function, num_keys=max(1, int(keys)))
        pause = gc_at(gc.live_heap, keys, per_key, sc.cluster.server.heap, allocation_rate=float(rate),
                      update_rate=updates)
        rows.append({"keys": keys / 1e6, "factor": factor, "live_bytes": gc.live_heap + keys * per_key, **pause})
    frame = pd.DataFrame(rows)
    heap = sc.cluster.server.heap
    limits = {"heap (-Xmx)": heap, "IHOP (marking starts)": gc.ihop * heap}
    fig = sizing_plots.heap_and_pauses(frame, limits, x="keys", xlabel="upsert keys per server (millions)",
                                       title="Upsert heap per server as keys grow, and the young pauses it causes")
    now = frame[frame["factor"] == 1.0].iloc[0]
    text = (f"today's {keys_now / 1e6:.3g}M keys per server hold {size_text(now['live_bytes'])} live of a "
            f"{size_text(heap)} heap, with young pauses of {now['young_p50_ms']:.0f} ms (p50) and "
            f"{now['young_p99_ms']:.0f} ms (p99) in the G1 model fitted to real logs")
    trouble = frame[(frame["full"] > 0) | (frame["oom"] > 0)]
    if len(trouble):
        first = trouble.iloc[0]
        text += (f"; at {first['factor']:g}x the keys ({first['keys']:.3g}M) "
                 + ("the JVM runs out of memory" if first["oom"] else "full GCs begin"))
    else:
        text += f"; even at {frame['factor'].max():g}x the keys no full GC occurs"
    text += (f"; {updates:,.0f} key updates per second per server" if updates else
             "; no key updates are assumed (gc.update_rate), so young pauses do not scan the map here")
    return [plot_page(fig, text + ". The upsert notebook (04) follows the map over days for a key rate and TTL.")]
