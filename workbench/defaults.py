"""Every default the workbench uses, in one place, with where it comes from.

Scenario dataclasses (:mod:`workbench.scenario`) take their field defaults from here, the CLI and
Makefile take their paths from here, and ``docs/scenario.md`` documents these values. Change a
default here and nowhere else.

Pinot defaults cite ``shared/reference/pinot-behaviour.md`` (``PB``) or ``pinot-execution.md``
(``PE``); model defaults say why they were chosen.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Final

# -- paths (cookiecutter-data-science layout; overridable through the environment) -----------------
PROJECT_DIR: Final = Path(os.environ.get("WORKBENCH_HOME", Path.cwd()))
DATA_DIR: Final = PROJECT_DIR / "data"
RAW_DATA_DIR: Final = DATA_DIR / "raw"
PROCESSED_DATA_DIR: Final = DATA_DIR / "processed"
REPORTS_DIR: Final = PROJECT_DIR / "reports"
FIGURES_DIR: Final = REPORTS_DIR / "figures"

# -- cluster ----------------------------------------------------------------------------------------
SERVERS: Final = 6
BROKERS: Final = 1
SERVER_CORES: Final = 8
#: PE §8: launch scripts and Helm charts give servers a 16 GiB heap (-Xms/-Xmx).
SERVER_HEAP_BYTES: Final = 16 * 1024**3
#: How a server runs a request (``cluster.server.execution``): ``pinot`` (runner and worker pools sharing
#: the cores, PE §1-§2) or the older ``fcfs_threads`` simplification; docs/model.md ("CPU") measures both.
SERVER_EXECUTION: Final = "pinot"
#: Broker work per query that does not depend on the servers (compile, route, serialise the response),
#: ms; also what a result-cache hit costs. PE §7: the repo gives no timings; 1 ms is a round estimate of
#: SQL compilation plus routing-table look-up on a JVM, and ``calibrate`` fits it from a broker log.
BROKER_OVERHEAD_MS: Final = 1.0
#: Broker CPU per query off the query's path, ms (``cluster.broker.off_path_ms``): the reduce slot stays busy that
#: long after the reply. 0: all of the broker's work is on the path. ``calibrate`` moves there the part of the
#: fitted overhead that not every query pays, which each query's measured delay then carries (docs/calibrate.md).
BROKER_OFF_PATH_MS: Final = 0.0
#: ``calibrate`` moves off the query's path as much of the broker's fitted overhead as leaves at most this share of
#: the measured delays below 0 (and so clipped at 0, which would add to the model's median): Pinot 1.5.1's delays,
#: ``timeMs`` less the broker's mean overhead and the servers' work, had a median of about 0 and 40% below it.
DELAY_CLIPPED_SHARE: Final = 0.01
#: Reduce work per responding server, ms (PE §5: the preamble and aggregation merges are linear in the
#: servers; deserialising and merging one DataTable's metadata and stats is tens of microseconds).
BROKER_REDUCE_MS_PER_SERVER: Final = 0.05
#: Reduce work per row returned by the servers, ms (PE §5: group-by and ordered selections upsert every
#: row into the broker's table; a JVM hash-map upsert with aggregation is ~0.2-1 us per row).
BROKER_REDUCE_MS_PER_ROW: Final = 0.0005
#: Broker cores that reduce runs on (PE §8: the Helm chart pins brokers to 2 processors; 4 is a small VM).
BROKER_CORES: Final = 4
#: PE §4.1: ``pinot.broker.timeoutMs`` defaults to 10 000 ms.
BROKER_TIMEOUT_MS: Final = 10_000.0
#: One-way network latency per message, ms: same-zone datacentre round trips are ~0.2-0.5 ms.
NETWORK_LATENCY_MS: Final = 0.25
#: Delay per server request that takes no server core, ms: none unless calibrated (``workbench calibrate``
#: fits it to the broker's ``timeMs`` less the servers' measured work).
NETWORK_REQUEST_DELAY_MS: Final = 0.0
#: What a slow server's factor slows (``cluster.failures.slow[].scope``): ``jvm``, everything its JVM does (the
#: query's work, its GC pauses, each request's own delay), as a CPU limit, a noisy neighbour or a slow host
#: does: on Pinot 1.5.1 a server limited to a quarter of a core had its GC pauses and the broker's
#: ``responseDelayMs`` grow with its queries' work (docs/validation.md, one slow server); ``work``, the query's
#: work alone (a slow disk).
SLOW_SCOPE: Final = "jvm"

# -- service model ----------------------------------------------------------------------------------
SERVICE_MODEL: Final = "cost"
#: Cost model: ns of CPU per document scanned after the filter. Pinot's columnar scans run at roughly
#: 50-200M values/s per core; 10 ns/doc is a mid value and is what ``calibrate`` replaces.
COST_NS_PER_DOC: Final = 10.0
#: Cost model: extra ns per document a group-by's segment scans (``service.group_by_ns_per_doc``). 0: none, so an
#: uncalibrated scenario charges a group-by as any scan; ``calibrate`` fits it from the servers' measured work
#: (against Apache Pinot 1.5.1, ``docs/validation.md``: 11-19 ns, a group-by's rows costing about twice a sum's).
COST_GROUP_BY_NS_PER_DOC: Final = 0.0
#: Cost model: ns per entry a segment's filter reads row by row (``service.ns_per_filter_entry``, Pinot's
#: ``numEntriesScannedInFilter``). 0: none; ``calibrate`` fits it from the servers' measured work (against Apache
#: Pinot 1.5.1: 5-7 ns, a ``COUNT(*)`` whose time range cut into its 4 segments read 199,981 entries in 0.5 ms).
COST_NS_PER_FILTER_ENTRY: Final = 0.0
#: Fixed per-segment cost (plan building, operator set-up), ms (PE §2.3: sub-millisecond per segment).
COST_PER_SEGMENT_MS: Final = 0.1
#: Fixed per-request cost on a server, ms: the runner thread's work before the fan-out (T1 in PE §0:
#: deserialise, acquire and prune segments, build the plan).
COST_PER_REQUEST_MS: Final = 0.5
#: The runner thread's merge of one segment's result block, ms (T4 in PE §0; on the workers for group-by,
#: which upsert into a shared table, PE §2.2). An aggregation block merges in microseconds.
COST_MERGE_MS_PER_SEGMENT: Final = 0.005
#: The wake-up cost (``service.wake_ms``): runner work a request adds when the cluster has been idle, ms;
#: ``wake_ms x (1 - exp(-x) x (1 + x))``, ``x = gap / wake_tau_ms``, with ``gap`` the time since the table's
#: previous query arrived (:func:`workbench.sim.decisions.wake_work`). 0: none, so the closed-form checks (Erlang C,
#: fork-join, M/D/1) hold exactly; ``calibrate`` fits it where a log shows it. Against Apache Pinot 1.5.1 on one core
#: (``docs/validation.md``, "Why Pinot's median falls with load") about 2.8 ms after a long idle stretch.
COST_WAKE_MS: Final = 0.0
#: CPU per server request that the server's JVM spends off the query's path (``service.off_path_ms``), ms: taken on
#: the server's cores after the response is sent, so it delays the requests behind it but not its own. 0: none, so
#: the closed-form checks hold exactly. Against Apache Pinot 1.5.1 on one core (``docs/validation.md``, "CPU off the
#: query's path") the JVM used 5.59 ms of CPU per query where the query's threads measured 2.16 ms and its whole
#: round trip on the server took 3.76: at least 1.8 ms ran outside any query's round trip (Netty's and the query
#: log's threads, GC, JIT). ``calibrate`` sets it from the servers' process CPU where given (``--server-cpu-ms``).
COST_OFF_PATH_MS: Final = 0.0
#: Extra cost per document scanned of an aggregation function whose per-row work is heavier than the plain
#: ones ``ns_per_doc`` prices (``service.function_ns_per_doc``: Pinot's function name -> ns, added once per
#: call of it in the query; :func:`workbench.sim.service.function_ns_per_doc`). None by default, so the
#: closed-form checks and every scenario without it are unchanged bit for bit; ``calibrate`` fits it where a
#: log has enough of a function's queries. Against Apache Pinot 1.5.1 (``docs/validation.md``, "A cost per
#: aggregation function") ``PERCENTILETDIGEST`` took about 80 ns per document more than ``COUNT``.
COST_FUNCTION_NS_PER_DOC: Final[tuple[tuple[str, float], ...]] = ()
#: The aggregation functions ``service.ns_per_doc`` itself prices (a value read and added per row; Pinot's
#: names, canonical: lower case, no underscores): ``calibrate`` fits a per-function cost for the others only.
PLAIN_AGGREGATIONS: Final = frozenset({"count", "sum", "min", "max", "avg", "minmaxrange", "sum0"})
#: ``calibrate`` fits a function's cost only from at least this many logged queries that call it (fewer:
#: held at none, and said).
MIN_FUNCTION_QUERIES: Final = 20
#: The time constant of the wake-up's build-up, ms (``tau`` of :func:`workbench.sim.decisions.wake_work`: half the
#: cost is reached after 1.7 ``tau`` of idle time): fitted by ``calibrate`` with the cost; on that Pinot's 13.7/s log
#: 15.9 ± 3.1 ms, which this default is.
COST_WAKE_TAU_MS: Final = 16.0
#: Spread of a segment's time around the cost model's mean (log-space sigma of a mean-1 lognormal factor).
#: 0 keeps the cost model deterministic; ``calibrate`` fits it from a broker log's residuals.
COST_VARIABILITY: Final = 0.0
SERVICE_MEAN_MS: Final = 10.0

# -- workload ---------------------------------------------------------------------------------------
ARRIVAL_PROCESS: Final = "poisson"
QPS: Final = 100.0
#: ``workload.arrival.speed``: the workload as written (a replayed log at its own pace).
ARRIVAL_SPEED: Final = 1.0
#: Seconds in the day a load profile (``workload.profile.hourly``) divides into equal steps.
DAY_SECONDS: Final = 86_400
#: A day's steps are simulated in decreasing rate until one meets the p99 SLO with this share to spare
#: (its interval's upper end at most ``(1 - DAY_MARGIN) x slo.p99_ms``): every lower rate then meets as
#: well (p99 does not fall as the rate rises, the rest unchanged), and the margin covers the run's noise.
DAY_MARGIN: Final = 0.2
SEGMENTS_PER_SERVER: Final = 4
DOCS_PER_SEGMENT: Final = 1_000_000
#: Bytes per document of a segment whose size is unknown (a synthetic layout, or an import without
#: sizes), for the scale-out what-if's bytes moved only: segment counts and routing do not use it.
#: A mid-range figure for columnar, dictionary-encoded rows of a dozen columns; give real sizes to rely
#: on the bytes.
SEGMENT_BYTES_PER_DOC: Final = 100
#: Pinot's comfortable segment size, bytes: 100 MB to 500 MB untarred, by Pinot's Ingestion FAQ ("What is a
#: good segment size?", docs.pinot.apache.org, basics/getting-started/frequent-questions/ingestion-faq):
#: thousands of tiny segments burden ZooKeeper's metadata and the servers' heap, and a few segments of
#: GBs cut query parallelism (a server works on a segment with one thread). Realtime tables aim inside
#: it too: Pinot's size-based flushing defaults to 200 MB (``StreamConfig.DEFAULT_FLUSH_THRESHOLD_SEGMENT_SIZE_BYTES``).
SEGMENT_SIZE_RANGE: Final = (100_000_000, 500_000_000)
#: ``validate`` and the run summary warn when the median sealed segment is this many times outside
#: :data:`SEGMENT_SIZE_RANGE` (under 10 MB, over 5 GB): far outside, not merely off the ideal.
SEGMENT_SIZE_FAR: Final = 10.0
#: Segments (replicas counted) on one server from which ``validate`` and the run summary warn: the FAQ
#: above names "thousands or more" tiny segments of a table as the overhead to avoid.
SEGMENTS_PER_SERVER_WARN: Final = 1_000

#: Distinct SQL texts a process keeps parsed (frozen ``Query`` values, a few KB each): the points of a
#: sweep replay the same query log, so each worker parses each text once, not once per point.
PARSED_SQL_CACHE: Final = 8192

# -- simulation control -----------------------------------------------------------------------------
DURATION_S: Final = 120.0
#: Warm-up discarded before statistics; 10% of the default horizon.
WARMUP_S: Final = 12.0
REPLICATIONS: Final = 3
#: Which engine runs a scenario: ``auto`` uses the compiled engine wherever it reproduces the SimPy engine
#: exactly (no adaptive selection, no broker result cache) and SimPy otherwise.
ENGINE: Final = "auto"
#: Per-query records a run keeps: ``all`` columns, or ``latency`` only (counts summed into ``windows``).
RECORDS: Final = "all"
SEED: Final = 20_261_122
#: Confidence level of every interval the workbench reports.
CONFIDENCE: Final = 0.95
#: Parameter draws ``workbench size`` runs for a shape that could be the answer, when the scenario is
#: calibrated (``sizing.draws``): the model's interval is the central 95% of the draws' p99, so with 10 it
#: reaches to about the largest draw: a cautious bound for 10 runs (``propagate`` defaults to 20 for a
#: single answer; a sizing pays them per candidate).
SIZING_DRAWS: Final = 10

# -- GC ---------------------------------------------------------------------------------------------
GC_COLLECTOR: Final = "none"
#: ``None``: allocation follows the query work each server receives (``GC_BYTES_PER_DOC`` per document
#: scanned plus ``GC_BYTES_PER_REQUEST`` per request); a number is a constant rate, bytes/s.
GC_ALLOCATION_RATE: Final = None
#: Garbage per document a segment scans, bytes. Pinot reads a column in blocks of 10 000 documents
#: into arrays it mostly reuses; what survives a block is a few bytes a document (values copied into
#: the block's result, boxed group keys). 2 B/doc makes a core scanning 100M docs/s (10 ns/doc)
#: allocate ~200 MB/s, the rate the probe's query garbage had (docs/gc.md); calibrate from a GC log.
GC_BYTES_PER_DOC: Final = 2.0
#: Garbage per server request beside the scan, bytes: the deserialised request, the plan (operators per
#: segment), the result DataTable and its serialisation. Tens of KiB for a plan over a few segments.
GC_BYTES_PER_REQUEST: Final = 64 * 1024
#: Long-lived heap besides upsert maps (segment metadata, dictionaries on heap, caches), bytes.
GC_LIVE_HEAP: Final = 2 * 1024**3
GC_MIXED_COUNT: Final = 8   # G1MixedGCCountTarget
GC_IHOP: Final = 0.45   # InitiatingHeapOccupancyPercent
GC_RESERVE: Final = 0.10   # G1ReservePercent

# -- Pinot's upsertConfig (PB §5.1: UpsertConfig.java; read by workbench.pinot.upsert.config) ------------
#: ``mode``: an ``upsertConfig`` without one is a full upsert.
UPSERT_MODE: Final = "FULL"
#: ``hashFunction``: NONE keys the primary-key map by the key's own objects.
UPSERT_HASH_FUNCTION: Final = "NONE"
#: ``metadataTTL`` and ``deletedKeysTTL``, in the comparison column's units; 0 (or less) is off.
UPSERT_METADATA_TTL: Final = 0.0
UPSERT_DELETED_KEYS_TTL: Final = 0.0
#: ``snapshot`` and ``preload``: DEFAULT defers to the server's ``pinot.server.instance.upsert.default.enable.*``.
UPSERT_ENABLEMENT: Final = "DEFAULT"
#: ``pinot.server.instance.upsert.default.enable.snapshot`` / ``.preload`` (CommonConstants.Server.Upsert).
UPSERT_SERVER_ENABLE_SNAPSHOT: Final = False
UPSERT_SERVER_ENABLE_PRELOAD: Final = False

# -- workload generation ----------------------------------------------------------------------------
GENERATE_EVENTS: Final = 200_000
GENERATE_KEYS: Final = 10_000
GENERATE_PARTITIONS: Final = 4
GENERATE_SPAN_S: Final = 6 * 3600.0
GENERATE_SEGMENT_ROWS: Final = 20_000
#: Schema-driven generation (``workload.generate.from_schema``): distinct values of a dimension (or a
#: numeric column given a ``cardinality``) unless its ``columns`` entry says otherwise. 100 keeps group-bys
#: and filters on a dimension meaningful (each value holds about 1% of the rows) at any table size.
GENERATE_COLUMN_CARDINALITY: Final = 100
#: ... and the most values a multi-value column holds in one row (each row holds 1 to this many).
GENERATE_MAX_VALUES: Final = 3

# -- JVM heap and GC models (workbench.jvm) -------------------------------------------------------------
# G1: medians of the per-run fits to the UpsertHeapProbe logs of tests/fixtures/gc/ (JDK 17, 2 GC workers,
# 12 runs: 2M/8M/20M keys x 4/6 GB heaps x 2 replicates; docs/gc.md has the fits and residuals), unless the
# comment names a JDK 17 G1 default instead.
G1_YOUNG_BASE_MS: Final = 3.0
#: Bytes per second the two GC workers evacuate (Copied Bytes / Object Copy time; 2.2-4.2 GB/s per run).
G1_COPY_RATE: Final = 2.8e9
#: Remembered-set scan of a 1 GiB upsert map, fully scanned (Scan Heap Roots; 67-146 ms per run).
G1_RS_SCAN_MS_PER_GB: Final = 89.0
#: Scan ~ map^0.39: common slope of log(median scan) on log(map size) over the runs, one intercept per series.
G1_RS_MAP_EXPONENT: Final = 0.39
#: Updates between young collections after which 63% of the map is scanned (4k-46k per run).
G1_RS_COARSEN_UPDATES: Final = 27_500.0
G1_PAUSE_SIGMA: Final = 0.40
#: Seconds of allocation alive at a young collection (the probe keeps queries' chunks 0.1 s).
G1_SURVIVOR_S: Final = 0.12
#: Bytes alive at every young collection whatever the allocation (a JVM's own background state). 0 for the probe, whose
#: survivors are its queries' chunks; a query server's are not (Pinot 1.5.1: 1 MB at 65-522 queries/s).
G1_SURVIVOR_BYTES: Final = 0.0
G1_PROMOTION_FRACTION: Final = 0.12
G1_MIXED_LIVE_RATIO: Final = 0.3
#: Full GC = base + live GiB x this: Theil-Sen line through the 16 full GCs of the runs (slope 609-1380 at 95%).
G1_FULL_BASE_MS: Final = 100.0
G1_FULL_MS_PER_GB: Final = 935.0
G1_FULL_SIGMA: Final = 0.4
G1_REMARK_MS: Final = 1.0
G1_CLEANUP_MS: Final = 0.22
G1_CONCURRENT_SIGMA: Final = 0.8
#: Live old bytes per second of concurrent marking and of the remembered-set rebuild (one concurrent worker).
G1_MARK_RATE: Final = 0.8e9
G1_REBUILD_RATE: Final = 1.8e9
G1_NEW_SIZE_MIN: Final = 0.05   # G1NewSizePercent
G1_NEW_SIZE_MAX: Final = 0.60   # G1MaxNewSizePercent
G1_PAUSE_GOAL_MS: Final = 200.0   # MaxGCPauseMillis
#: G1's eden growth per collection while pauses stay far under the goal (6.8% in the one run that shows it).
G1_YOUNG_GROWTH: Final = 0.06
#: Where G1 aims its predicted young pause, share of the goal (0.56-0.97 in the runs where the goal set eden).
G1_GOAL_SHARE: Final = 0.8
G1_HEAP_WASTE: Final = 0.05   # G1HeapWastePercent
#: Generational ZGC (JDK 21 runs of the same probe, tests/fixtures/gc/zgc-*): median pause, its spread.
ZGC_PAUSE_MS: Final = 0.013
ZGC_PAUSE_SIGMA: Final = 0.4
#: ZGC cycle = base + collected / (sweep_rate x threads), collected = trigger_share x the allocatable heap
#: (docs/gc.md: 0.79 s cycles every 8.8 s at 2M keys, 0.17 s every 0.69 s at 20M keys, 4 GB heap, 300 MB/s).
ZGC_CYCLE_BASE_MS: Final = 115.0
ZGC_SWEEP_RATE: Final = 3.5e9
ZGC_TRIGGER_SHARE: Final = 0.65
ZGC_RETAINED_SHARE: Final = 0.15
#: ConcGCThreads as a share of cores: the runs used 1 thread on 2 cores (JDK 21 sizes it dynamically).
ZGC_THREADS_SHARE: Final = 0.5

# -- limits -------------------------------------------------------------------------------------------
#: One REST call to a Pinot controller by ``workbench calibrate --controller``, s: the segment metadata
#: call asks every server, so it is slower than the others (ControllerConf's
#: server.request.timeoutSeconds, 30 s by default, bounds that).
CONTROLLER_TIMEOUT_S: Final = 60.0
# Every number a user gives is finite, and the work it asks for is bounded: these limits are checked
# before any work starts, so a typo (`qps: 1e9`, `duration_s: 1y`) fails in a second instead of hanging
# or exhausting memory. A scenario's `limits:` section raises the work limits (docs/scenario.md,
# "Limits"); a sweep file's `limits: {points: N}` raises the grid size; the reading limits are raised
# with the environment variables named in `workbench.io.reading` (or `workbench import --max-input-size`).
#: Arrival rate, queries/s. The SimPy engine runs ~5k queries/s (DESIGN §8), so 100k qps is already
#: 20 s of CPU per simulated second; the largest Pinot deployments publish ~100k-1M qps across clusters.
LIMIT_QPS: Final = 100_000.0
#: Simulated horizon, s: a week, far past any warm-up plus a diurnal cycle or two.
LIMIT_DURATION_S: Final = 7 * 86_400.0
#: Independent replications: CIs narrow as 1/sqrt(n); past ~1000 the gain is not worth the CPU.
LIMIT_REPLICATIONS: Final = 1_000
#: Servers and brokers: public Pinot clusters run hundreds of servers; 10k is an order above.
LIMIT_SERVERS: Final = 10_000
LIMIT_BROKERS: Final = 1_000
#: Cores of one server or broker: the largest cloud machines have a few hundred vCPUs.
LIMIT_CORES: Final = 4_096
#: Segments of the table (synthetic servers x segments_per_server, or a workload directory's); the
#: layout and routing tables hold a few objects per segment replica.
LIMIT_SEGMENTS: Final = 1_000_000
#: Documents in one segment: Pinot's doc ids are Java ints (2^31 - 1).
LIMIT_DOCS_PER_SEGMENT: Final = 2**31 - 1
#: Expected queries of a run (qps x duration x replications): ~1 hour of SimPy at ~5k queries/s.
LIMIT_SIMULATED_QUERIES: Final = 20_000_000
#: Expected GC pauses, crashes and churn events of a run (all servers, all replications), drawn up front.
LIMIT_SIMULATED_EVENTS: Final = 20_000_000
#: Events a `generate` spec asks for: Spark writes ~1M rows/s here (DESIGN §8), so 1e9 is ~20 minutes.
LIMIT_GENERATE_EVENTS: Final = 1_000_000_000
#: Points of one sweep (grid product or list): each writes a run directory; 10k is a week of 1-minute points.
LIMIT_SWEEP_POINTS: Final = 10_000
#: Bytes of one document the workbench parses whole (scenario, sweep, table config, schema, JSON
#: segment metadata): real ones are kilobytes to a few megabytes.
LIMIT_DOCUMENT_BYTES: Final = 64 * 1024**2
#: Bytes of one imported log after decompression: read into memory whole, with a few bytes per char.
LIMIT_INPUT_BYTES: Final = 2 * 1024**3
#: YAML nodes after alias expansion (a billion-laughs document expands to 10^9) and nesting depth of
#: YAML and JSON documents (Pinot configs nest about 6 levels).
LIMIT_YAML_NODES: Final = 1_000_000
LIMIT_NESTING_DEPTH: Final = 100

# -- sizing report ----------------------------------------------------------------------------------
#: The instance price table the report uses unless the sweep's ``report.prices`` names another
#: (``workbench/data/instance_prices.yaml`` says where its prices come from and when they were listed).
INSTANCE_PRICES_FILE: Final = Path(__file__).resolve().parent / "data" / "instance_prices.yaml"
#: Hours in a month for monthly costs: 365 x 24 / 12, the convention cloud price lists use.
HOURS_PER_MONTH: Final = 730.0
#: Machine memory per byte of JVM heap: a Pinot server keeps its segments memory-mapped (off-heap), so
#: the machine needs about as much memory again outside the heap for them and the OS page cache. A
#: workbench assumption (Pinot publishes no ratio); ``report.memory_per_heap`` changes it.
MEMORY_PER_HEAP: Final = 2.0
#: The rest of a Pinot cluster the report prices besides servers and brokers: role -> (machines, vCPUs,
#: memory in bytes); each runs on the cheapest instance of the price table with that much. Two
#: controllers (one leads, one stands by, as Pinot's production guide runs them) and a three-node
#: ZooKeeper ensemble (the smallest that survives a node's loss). Brokers are ``cluster.brokers`` machines
#: of ``BROKER_MACHINE``. Workbench assumptions, changed here (the report prices them from its price table).
CLUSTER_ROLES: Final = {"controller": (2, 4, 16 * 1024**3), "zookeeper": (3, 2, 8 * 1024**3)}
#: A broker's machine (vCPUs, memory in bytes): it merges results and holds the routing tables.
BROKER_MACHINE: Final = (4, 16 * 1024**3)
#: Block storage price per GiB-month when the price table gives none (AWS EBS gp3, us-east-1, 0.08 USD
#: per GB-month, 2025), in the table's currency.
STORAGE_PER_GIB_MONTH: Final = 0.08
#: Disk per server above the segment bytes it holds: room for segment reloads and rebalance copies (a
#: server holds old and new copies while it moves) and growth before the next resize.
STORAGE_HEADROOM: Final = 0.5
#: Mean server utilisation above which the report warns that queues grow quickly with load (an M/M/c
#: queue's mean wait, rho / (1 - rho), more than doubles between 70% and 85% busy).
UTILISATION_WARNING: Final = 0.7
#: Load multipliers the report runs the recommendation at to find where its SLO breaks (headroom).
HEADROOM_MULTIPLIERS: Final = (1.25, 1.5, 2.0, 3.0)
#: The failure a sizing SLO must hold through unless ``slo.survive`` says otherwise: one server lost, the
#: commonest incident, which a cluster sized without it meets on its busiest day with one machine fewer.
SLO_SURVIVE: Final = "server"
#: Bytes per second one server downloads and loads segments at during a rebalance or a replacement (from
#: the deep store: download, untar, memory-map). A workbench assumption (Pinot publishes no figure):
#: 50 MiB/s is a cloud disk's sustained write rate; the report turns bytes to move into time with it.
SEGMENT_LOAD_BYTES_PER_S: Final = 50 * 1024**2
#: Relative back-test difference (p50 or p99, model against the log) above which the report warns.
BACKTEST_WARNING: Final = 0.10
#: Share of a query log, by time, that ``workbench calibrate`` holds out of the fit and back-tests on alone:
#: a back-test on the queries the fit saw cannot show a model that only memorised them. The last 30% keeps 70%
#: for the fit (its standard errors grow by about a fifth) and leaves a part long enough to back-test on.
CALIBRATION_HOLDOUT: Final = 0.3
#: The fewest queries either part of a held-out log must have; a shorter log is fitted and back-tested whole.
CALIBRATION_HOLDOUT_MIN_QUERIES: Final = 200
#: At most this many logged queries (evenly spaced over the fitted part) are routed by the model's router for
#: the fit to ``timeMs`` (``workbench/calibrate/routed.py``): planning each distinct SQL costs about a third of a
#: millisecond, which on a million-line log of distinct time windows would add minutes; the rest keep the even
#: spread, and the calibration says how many were routed.
CALIBRATION_ROUTED_QUERIES: Final = 20_000
#: The scenario's assumptions the sizing report varies to see whether they drive its answer, each as the
#: plausible range around the scenario's value, as multipliers (lower, upper). Lower is kinder: less
#: long-lived heap, cheaper documents, less allocation. The long-lived heap is rarely measured before a
#: cluster exists (other tables, caches and the upsert map share it), so half to one and a half times
#: the figure; the cost per document is what a calibration fits, within about a quarter either way on
#: the validation's measurements (docs/validation.md); the allocation rate moves with the query mix.
ASSUMPTION_RANGES: Final = {"cluster.gc.live_heap": (0.5, 1.5), "service.ns_per_doc": (0.75, 1.25),
                            "cluster.gc.allocation_rate": (0.5, 2.0)}
