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

from workbench.distributions import Lognormal

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

# -- service model ----------------------------------------------------------------------------------
SERVICE_MODEL: Final = "cost"
#: Cost model: ns of CPU per document scanned after the filter. Pinot's columnar scans run at roughly
#: 50-200M values/s per core; 10 ns/doc is a mid value and is what ``calibrate`` replaces.
COST_NS_PER_DOC: Final = 10.0
#: Fixed per-segment cost (plan building, operator set-up), ms (PE §2.3: sub-millisecond per segment).
COST_PER_SEGMENT_MS: Final = 0.1
#: Fixed per-request cost on a server, ms: the runner thread's work before the fan-out (T1 in PE §0:
#: deserialise, acquire and prune segments, build the plan).
COST_PER_REQUEST_MS: Final = 0.5
#: The runner thread's merge of one segment's result block, ms (T4 in PE §0; on the workers for group-by,
#: which upsert into a shared table, PE §2.2). An aggregation block merges in microseconds.
COST_MERGE_MS_PER_SEGMENT: Final = 0.005
#: Spread of a segment's time around the cost model's mean (log-space sigma of a mean-1 lognormal factor).
#: 0 keeps the cost model deterministic; ``calibrate`` fits it from a broker log's residuals.
COST_VARIABILITY: Final = 0.0
SERVICE_MEAN_MS: Final = 10.0

# -- workload ---------------------------------------------------------------------------------------
ARRIVAL_PROCESS: Final = "poisson"
QPS: Final = 100.0
SEGMENTS_PER_SERVER: Final = 4
DOCS_PER_SEGMENT: Final = 1_000_000

# -- simulation control -----------------------------------------------------------------------------
DURATION_S: Final = 120.0
#: Warm-up discarded before statistics; 10% of the default horizon.
WARMUP_S: Final = 12.0
REPLICATIONS: Final = 3
SEED: Final = 20_261_122
#: Confidence level of every interval the workbench reports.
CONFIDENCE: Final = 0.95

# -- GC ---------------------------------------------------------------------------------------------
GC_COLLECTOR: Final = "none"
#: Bytes allocated per second per server (anchors §7: young interval = eden / allocation rate).
GC_ALLOCATION_RATE: Final = 200 * 1024**2
#: Eden as a share of the heap; G1 keeps it between 5% and 60% (anchors §7).
GC_EDEN_FRACTION: Final = 0.25
#: Share of eden that survives a young collection and is promoted (generational hypothesis: small).
GC_SURVIVAL_FRACTION: Final = 0.02
#: Long-lived heap (caches, segment metadata, upsert PK maps), bytes.
GC_LIVE_HEAP: Final = 2 * 1024**3
#: G1 young pause: lognormal, median in the 20-50 ms range, p99 ~ 150 ms (anchors §7 defaults).
GC_YOUNG_PAUSE_MS: Final = Lognormal(40.0, 0.6)
GC_MIXED_COUNT: Final = 8   # G1MixedGCCountTarget
GC_MIXED_FACTOR: Final = 1.5
GC_IHOP: Final = 0.45   # InitiatingHeapOccupancyPercent
GC_RESERVE: Final = 0.10   # G1ReservePercent
#: Full GC compaction speed: pause = live bytes / rate; ~1 GB/s gives seconds at tens of GB (anchors §7).
GC_FULL_RATE: Final = 1024**3
#: ZGC pause (anchors §7: ~0.05-1.7 ms); three per cycle (mark start, mark end, relocate start).
GC_ZGC_PAUSE_MS: Final = Lognormal(0.5, 0.5)

# -- workload generation ----------------------------------------------------------------------------
GENERATE_EVENTS: Final = 200_000
GENERATE_KEYS: Final = 10_000
GENERATE_PARTITIONS: Final = 4
GENERATE_SPAN_S: Final = 6 * 3600.0
GENERATE_SEGMENT_ROWS: Final = 20_000

# -- limits -------------------------------------------------------------------------------------------
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
