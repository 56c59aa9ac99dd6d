"""The sizing report's last pages: data movement on scale-out, the result cache, Pinot's provisioning
matrix, and the method note (what the model includes and what it leaves out)."""

from __future__ import annotations

from matplotlib.figure import Figure

from workbench.analysis import plots, sizing_plots
from workbench.analysis.provisioning import ProvisioningInputs, binary_bytes, provisioning_matrix
from workbench.analysis.readings import provisioning_reading
from workbench.report.data import SizingData, workload_of
from workbench.report.findings import Findings
from workbench.report.layout import A4_LANDSCAPE, Page, plot_page
from workbench.report.whatif import movement_frame, read_movement
from workbench.scenario.schema import ServiceSpec

__all__ = ["METHOD_NOTE", "cache", "method", "movement", "provisioning", "service_cost"]

#: Requests of the workload's query log replayed through the broker-cache study (enough for the curve's
#: shape, small enough to stay a second or two).
CACHE_TRACE_REQUESTS = 8_000


def movement(d: SizingData, f: Findings) -> list[Figure]:
    """What a rebalance moves and p99 after it: today's servers to the recommendation, and the
    recommendation's next step."""
    if f.best is None:
        return []
    moves = read_movement(d, f.best)  # what notebook 05 reads too: one source for both
    if not moves:
        return []
    fig = sizing_plots.data_movement(movement_frame(moves), "Data each server loads when the table is rebalanced")
    reading = "; ".join(m.sentence() for m in moves)
    return [plot_page(fig, reading + ". Pinot's instance and segment reassignment of the table's current layout "
                           "(workbench.studies.scale_out); sizes are the workload's segments unless said otherwise.")]


def cache(d: SizingData, f: Findings) -> list[Figure]:
    """Hit rate of a broker result cache against its size on the workload's own queries, with the optimum."""
    from workbench.analysis.cache_trace import broker_trace
    from workbench.pinot.cache.trace import hit_rate_curve

    data = workload_of(d.base_scenario)
    if data is None or not data.has_queries():
        return []
    queries = data.queries(["arrival_s", "sql"]).head(CACHE_TRACE_REQUESTS)
    trace = broker_trace(queries)
    distinct = int(trace.groupby("key")["size_bytes"].first().sum())
    sizes = sorted({max(1024, int(distinct * share)) for share in (0.01, 0.05, 0.2, 0.5, 1.0)})
    curve = hit_rate_curve(trace, sizes)
    fig = plots.hit_rate_vs_size(curve, "Broker result cache on this workload's queries (RFC design)")
    lru = curve[curve["policy"] == "lru"].sort_values("max_bytes")
    best = curve[curve["policy"] != "lru"].sort_values("max_bytes")
    return [plot_page(fig, f"with {binary_bytes(sizes[-1])} (every distinct result) LRU hits "
                           f"{lru['hit_rate'].iloc[-1]:.0%} of {len(trace):,} queries; at {binary_bytes(sizes[1])} it "
                           f"hits {lru['hit_rate'].iloc[1]:.0%} against an optimum of {best['hit_rate'].iloc[1]:.0%}. "
                           "The RFC expects 20-70% on dashboards; misses here are first requests and lookups of "
                           "rarely repeated keys. Not part of the recommendation: the cache is off unless the "
                           "scenario enables it.")]


def provisioning(d: SizingData, f: Findings) -> list[Figure]:
    """Pinot's RealtimeProvisioningHelper matrix for the table's segments, the recommended host count marked."""
    sc, data = d.base_scenario, workload_of(d.base_scenario)
    if sc is None or data is None or sc.table.table_type != "REALTIME" or sc.workload.generate is None:
        return []
    segments = data.segments()
    sealed = segments[segments["status"] == "DONE"]
    if sealed.empty or "size_bytes" not in sealed:
        return []
    gen = sc.workload.generate
    seg = sealed.iloc[0]
    retention = float(sc.table.section("segmentsConfig").get("retentionTimeValue", 7)) * 24
    hosts = sorted({*(2, 4, 6, 8, 10, 12, 14, 16), *(int(s) for s in d.combined["servers"])})
    inputs = ProvisioningInputs(
        sample_segment_bytes=float(seg["size_bytes"]), sample_segment_docs=int(seg["total_docs"]),
        ingestion_rate=max(1, int(gen.events / gen.span_s / gen.partitions)), num_partitions=gen.partitions,
        replication=sc.table.replication, retention_hours=min(retention, 72.0), table_retention_hours=retention,
        num_hosts=tuple(hosts))
    matrix = provisioning_matrix(inputs)
    if matrix.empty:
        return []
    # Pinot prints "2.27M/116.06K"; the page spells the unit (MiB) so no cell reads as a bare number
    cells = matrix.assign(memory=[f"{binary_bytes(a)} / {binary_bytes(m)}"
                                  for a, m in zip(matrix["active_bytes"], matrix["mapped_bytes"], strict=True)])
    grid = cells.pivot(index="num_hours", columns="num_hosts", values="memory").fillna("NA")
    rec = int(f.best["servers"]) if f.best is not None else None
    grid.columns = [f"{c} hosts{' (rec.)' if int(c) == rec else ''}" for c in grid.columns]
    grid.insert(0, "numHours", grid.index)
    page = Page("Hosts x hours: RealtimeProvisioningHelper's memory matrix",
                "memory per host, active / mapped (KiB, MiB, GiB: Pinot's tool prints the same digits without the iB)",
                size=A4_LANDSCAPE, margin=0.04)
    page.table(grid.reset_index(drop=True), size=7.5)
    page.paragraph(f"Each cell: memory per host for consuming segments that flush every numHours hours, "
                   f"with {gen.partitions} partitions, replication {sc.table.replication}, "
                   f"{inputs.ingestion_rate:,} events/s per partition and {retention:g} h retention; columns marked "
                   "'rec.' have the recommended host count. The sample segment is the workload's first sealed "
                   "segment; consuming memory is taken as its bytes per document (Pinot measures it by building a "
                   "mutable segment).", size=9)
    if rec is not None and rec in set(matrix["num_hosts"]):
        page.paragraph(provisioning_reading(matrix, rec, inputs.retention_hours).text, size=9)
    return [page.fig]


#: What the model includes and leaves out (``docs/model.md`` has the details).
METHOD_NOTE = (
    "The numbers come from a discrete-event model of one Pinot table's cluster, driven by the workload's "
    "queries. It runs Pinot's own routing (the table's instance selector over the ideal state that Pinot's "
    "replica-group instance and segment assignment build), the broker's time and partition pruners on each "
    "query, and each server's query scheduler, runner and worker threads sharing its cores, with query "
    "deadlines, timeouts and Pinot's error codes, and the broker's reduce. Per-segment work follows a cost "
    "model: documents scanned after the filter times a cost per document, plus fixed costs per segment and "
    "per request. Stop-the-world GC pauses (G1- or ZGC-like collectors whose pauses follow the heap, its "
    "long-lived data and the upsert map), network latency and server crashes stop or delay servers as they would. "
    "Percentiles carry 95% intervals from independent replications; configurations share random numbers, "
    "so their differences are the configuration's. The model leaves out: disk and page-cache misses "
    "(segments are assumed memory-resident), network bandwidth and the size of large results, ingestion "
    "work (consuming segments, segment builds and commits), the multi-stage query engine, other tables "
    "sharing the servers, and controller and ZooKeeper load. Its answer is as good as its cost and GC "
    "parameters: calibrated against the user's broker and GC logs, it also carries the model's interval."
)


def service_cost(service: ServiceSpec) -> str:
    """The service model's costs in one line: the per-document, per-segment and per-request costs, and each term a
    calibration may add (the wake-up, the functions', a group-by's, the filter's) when it is set.

    >>> from workbench.scenario.schema import ServiceSpec
    >>> line = service_cost(ServiceSpec(ns_per_doc=8.0, per_segment_ms=0.2, per_request_ms=0.5,
    ...                                 group_by_ns_per_doc=6.0, ns_per_filter_entry=4.3))
    >>> line.split(", ")[3:]
    ["a group-by's document +6 ns", '4.3 ns per entry its filter reads']
    >>> line.split(", ")[:3]
    ['cost model; 8 ns per document', '0.2 ms per segment', '0.5 ms per request']
    """
    s = service
    return (f"{s.model} model; {s.ns_per_doc:g} ns per document, {s.per_segment_ms:g} ms per segment, "
            f"{s.per_request_ms:g} ms per request"
            + (f", a wake-up of {s.wake_ms:g} ms after a quiet stretch (over {s.wake_tau_ms:g} ms)" if s.wake_ms > 0
               else "")
            + "".join(f", {name} +{ns:g} ns per document" for name, ns in s.function_ns_per_doc.items() if ns > 0)
            + (f", a group-by's document +{s.group_by_ns_per_doc:g} ns" if s.group_by_ns_per_doc > 0 else "")
            + (f", {s.ns_per_filter_entry:g} ns per entry its filter reads" if s.ns_per_filter_entry > 0 else ""))


def method(d: SizingData, f: Findings) -> list[Figure]:
    """The method note: what the model includes, what it leaves out, and how this sweep was run."""
    page = Page("Method", "how the numbers were made")
    page.heading("What the model includes and leaves out")
    page.paragraph(METHOD_NOTE)
    page.heading("This sweep")
    row = f.best if f.best is not None else d.combined.iloc[0]
    sc = d.scenarios[str(row["point"])]
    engine = str(row.get("engine.name", "simpy"))
    swept = ", ".join(sorted({str(c).removeprefix("param.") for c in d.combined.columns
                              if str(c).startswith("param.") and d.combined[c].astype(str).nunique() > 1})) or "none"
    page.facts([
        ("Configurations", f"{len(d.combined)} simulated; swept keys: {swept}"),
        ("Per configuration", f"{sc.simulation.replications} replications of {sc.simulation.duration_s:g} s "
                              f"({sc.simulation.warmup_s:g} s warm-up discarded), seed {int(row.get('seed', 0))}"),
        ("Engine", f"{engine}: {row.get('engine.why', '')}"),
        ("Service cost", service_cost(sc.service)),
        ("GC", f"{sc.cluster.gc.collector}"),
        ("Prices", d.prices.describe() if d.prices is not None else "none"),
    ], label_width=0.22)
    return [page.fig]
