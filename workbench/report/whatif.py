"""What-ifs of the recommended configuration: more load, a server down, a replica group down, headroom.

The sweep answers "which shape meets the SLO today"; a lead also asks what happens when load grows or
a machine dies. Each what-if is the recommended point's own scenario with one change, simulated with
the point's seed (common random numbers, so the difference is the change and not noise):

* **load x m**: the query rate times ``m``. A Poisson workload gets ``workload.arrival.qps x m``; a
  replayed query log is replayed ``m`` times faster (the same queries, arrival times divided by ``m``,
  repeated when the faster log no longer covers the simulated horizon).
* **one server down**: with replication 1 nothing is simulated: the server's segments have no other
  replica, so queries miss them until it is back. With replicas, one server (the first of replica
  group 0 for a replica-group table) is down for the whole run (``cluster.failures.down``) on the
  same layout: the brokers route around it and the surviving replicas of its segments carry its
  share, as between a failure and the rebalance that follows it.
* **one replica group down**: every server of replica group 0 down; the other groups answer every
  query (replica-group tables only).
* **headroom**: the load multipliers of ``report.headroom`` in increasing order, until the p99
  interval passes the SLO; the load at which it breaks is interpolated between the last multiplier that
  met it and the first that did not.

Runs are written under ``SWEEP/whatif/POINT/NAME/`` (``summary.json``) and reused when the report is
written again; delete the directory to rerun them.
"""

from __future__ import annotations

import json
import math
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from workbench.analysis.compare import flatten
from workbench.io import atomic_file, write_json_atomic
from workbench.io.tables import read_json_file, read_parquet
from workbench.pinot.rebalance import servers_for_table, table_instance_partitions
from workbench.report.data import SizingData, layout_of, workload_of
from workbench.scenario import Scenario

if TYPE_CHECKING:
    from workbench.analysis.scale_out import ScaleOut

__all__ = ["Headroom", "WhatIf", "cheapest_surviving", "grow_recommendation", "headroom", "load_variant", "run_whatif",
           "scale_query_log", "survives_server_loss", "whatif_table", "whatif_variants"]


@dataclass(frozen=True)
class WhatIf:
    """One change to a scenario: its directory name, how the report labels it, and what it changes.

    ``load`` is the query-rate multiplier; ``data`` a replacement workload directory (a faster replay);
    ``ideal_state`` where the segments live instead of a fresh assignment (after a rebalance);
    ``note`` says how the change is modelled, for the report's reading.
    """

    name: str
    label: str
    overrides: Mapping[str, Any] = field(default_factory=dict)
    load: float = 1.0
    data: Path | None = None
    note: str = ""
    ideal_state: Mapping[str, Mapping[str, str]] | None = None


def scale_query_log(queries: pd.DataFrame, factor: float, min_span_s: float) -> pd.DataFrame:
    """A query log replayed ``factor`` times faster, repeated until it spans ``min_span_s`` seconds.

    >>> q = pd.DataFrame({"arrival_s": [0.0, 2.0, 4.0], "sql": ["a", "b", "c"]})
    >>> scale_query_log(q, 2.0, 5.0)["arrival_s"].tolist()
    [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    """
    if factor <= 0:
        raise ValueError(f"factor must be > 0, got {factor}")
    base = queries.sort_values("arrival_s", kind="stable").reset_index(drop=True)
    times = base["arrival_s"].to_numpy(dtype=float) / factor
    period = float(times[-1] - times[0]) + float(np.mean(np.diff(times))) if len(times) > 1 else 1.0
    copies = max(1, math.ceil((min_span_s + 1e-9) / period)) if period > 0 else 1
    parts = [base.assign(arrival_s=times + k * period) for k in range(copies)]
    out = pd.concat(parts, ignore_index=True)
    out = out[out["arrival_s"] <= max(min_span_s, float(times[-1]))].reset_index(drop=True)
    if "query_id" in out:
        out["query_id"] = np.arange(len(out), dtype=np.int64)
    return out


def load_variant(sc: Scenario, factor: float, scratch: Path) -> WhatIf:
    """The scenario at ``factor`` times its query rate (a faster replay writes a workload under ``scratch``)."""
    name, label = f"load-x{factor:g}", f"load x{factor:g}"
    if sc.workload.arrival.process != "replay":
        return WhatIf(name, label, {"workload.arrival.qps": sc.workload.arrival.qps * factor}, factor,
                      note=f"Poisson arrivals at {sc.workload.arrival.qps * factor:g} queries/s")
    source = workload_of(sc)
    if source is None:
        return WhatIf(name, label, {}, factor, note="no workload directory to replay faster")
    out = scratch / "workloads" / name
    if not (out / "queries.parquet").is_file():
        out.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(source / "segments.parquet", out / "segments.parquet")
        logged = read_parquet(source / "queries.parquet", what="queries table")
        log = scale_query_log(logged, factor, sc.simulation.duration_s)
        with atomic_file(out / "queries.parquet") as tmp:
            log.to_parquet(tmp, index=False)
    return WhatIf(name, label, {}, factor, out, note=f"the query log replayed {factor:g} times faster")


def _first_group(sc: Scenario) -> tuple[str, ...]:
    """The servers of replica group 0 as Pinot's instance assignment forms it (the completed segments'
    instance partitions when the table has them, else the table's only kind)."""
    servers = [f"Server_{i}" for i in range(sc.cluster.servers)]
    ips = table_instance_partitions(sc.table, servers_for_table(sc.table, servers))
    ip = ips.get("COMPLETED") or ips.get("OFFLINE") or ips["CONSUMING"]
    return tuple(dict.fromkeys(s for p in range(ip.num_partitions) for s in ip.instances(p, 0)))


def whatif_variants(sc: Scenario, scratch: Path) -> list[WhatIf]:
    """+50% load, one server down and one replica group down for ``sc`` (those that apply to it)."""
    out = [load_variant(sc, 1.5, scratch)]
    _, groups = layout_of(sc)
    if sc.table.replication < 2:
        return out
    group = _first_group(sc) if groups else ("Server_0",)
    out.append(WhatIf("server-down", "one server down", {"cluster.failures.down": [group[0]]},
                      note=f"{group[0]} down, not yet rebalanced: its replicas answer for it"))
    if groups > 1:
        out.append(WhatIf("group-down", "one replica group down", {"cluster.failures.down": list(group)},
                          note=f"replica group 0 ({len(group)} servers) down: the other "
                               f"{'group answers' if groups == 2 else f'{groups - 1} groups answer'} every query"))
    return out


def _matches(path: Path, what: WhatIf, seed: int) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    stored: dict[str, Any] = read_json_file(path, "what-if run")
    same = stored.get("seed") == seed and stored.get("overrides") == json.loads(json.dumps(what.overrides, default=str))
    return stored if same else None


def run_whatif(sc: Scenario, what: WhatIf, out_dir: Path, seed: int) -> dict[str, Any]:
    """Simulate one what-if into ``out_dir/summary.json`` (reused when already there); returns its document."""
    from workbench.analysis.stats import summarise
    from workbench.sim.run import simulate

    path = out_dir / "summary.json"
    if (done := _matches(path, what, seed)) is not None:
        return done
    scenario = sc.with_overrides(what.overrides) if what.overrides else sc
    result = simulate(scenario, seed, data=what.data, ideal_state=what.ideal_state)
    doc = {"name": what.name, "label": what.label, "load": what.load, "note": what.note, "seed": seed,
           "overrides": json.loads(json.dumps(what.overrides, default=str)), "summary": summarise(result)}
    document: dict[str, Any] = json.loads(json.dumps(doc, default=str))
    out_dir.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, document)
    return document


def _row(doc: Mapping[str, Any], slo: float | None) -> dict[str, Any]:
    row = {"name": doc["name"], "label": doc["label"], "load": doc["load"], "note": doc["note"],
           **flatten(doc["summary"])}
    high = row.get("latency_ms.p99.ci_high", row.get("latency_ms.p99.value"))
    if high is None or (isinstance(high, float) and math.isnan(high)):
        high = row.get("latency_ms.p99.value")
    verdict = row.get("slo.met")  # the run's own verdict, which also holds the heap SLO and OOM
    row["meets_slo"] = (True if slo is None else bool(high is not None and high <= slo)) and verdict is not False
    return row


def _point(d: SizingData, best: pd.Series) -> tuple[Scenario, Path, int]:
    point = str(best["point"])
    return d.scenarios[point], d.sweep_dir / "whatif" / point, int(best["seed"]) if "seed" in best else 0


def whatif_table(d: SizingData, best: pd.Series) -> pd.DataFrame:
    """One row per what-if of the recommended point ``best`` (``label``, ``note``, flattened summary,
    ``meets_slo``), after a ``today`` row from the sweep itself."""
    sc, scratch, seed = _point(d, best)
    rows = [{"name": "today", "label": "today", "load": 1.0, "note": "as simulated in the sweep",
             **{k: best[k] for k in best.index if "." in str(k) or str(k) in ("throughput_qps", "partial_rate",
                                                                             "gc_delayed_rate")},
             "meets_slo": bool(best["meets_slo"])}]
    if d.options.whatif:
        rows += [_row(run_whatif(sc, w, scratch / w.name, seed), d.slo_p99_ms) for w in whatif_variants(sc, scratch)]
        if layout_of(sc)[1] == 0 and sc.table.replication < 2:
            rows.append({"name": "server-down", "label": "one server down", "load": 1.0, "meets_slo": False,
                         "note": "no replica: queries miss its segments until it is back",
                         "latency_ms.p99.value": math.nan})
    return pd.DataFrame(rows)


def grow_recommendation(d: SizingData, best: pd.Series, servers: int | None = None) -> ScaleOut:
    """Configuration ``best`` grown to ``servers`` (default: the sweep's next server count up, else two
    more): Pinot's rebalance of its layout and p99 before and after, on the point's seed."""
    from workbench.analysis.scale_out import scale_out

    sc, _, seed = _point(d, best)
    counts = sorted({int(s) for s in d.combined["servers"]})
    target = servers or next((n for n in counts if n > sc.cluster.servers), sc.cluster.servers + 2)
    return scale_out(sc, target, seed=seed)


def survives_server_loss(d: SizingData, row: pd.Series) -> bool | None:
    """Whether configuration ``row`` meets the SLO with one server down (``None`` when that is not
    simulated: a table without replicas loses data with the server, so it does not survive)."""
    sc, scratch, seed = _point(d, row)
    down = [w for w in whatif_variants(sc, scratch) if w.name == "server-down"]
    if not down:
        return None
    return bool(_row(run_whatif(sc, down[0], scratch / down[0].name, seed), d.slo_p99_ms)["meets_slo"])


def cheapest_surviving(d: SizingData, ordered: pd.DataFrame, limit: int = 6) -> tuple[pd.Series | None, int]:
    """The first configuration of ``ordered`` (cheapest first) that meets the SLO with one server down,
    trying at most ``limit``; returns it (or ``None``) and how many were tried."""
    tried = 0
    for _, row in ordered.head(limit).iterrows():
        tried += 1
        if survives_server_loss(d, row):
            return row, tried
    return None, tried


@dataclass(frozen=True)
class Headroom:
    """Where the recommendation's SLO breaks as load grows.

    ``runs`` has one row per multiplier run (``load``, ``throughput_qps``, p99 columns, ``meets_slo``);
    ``holds_to`` is the largest multiplier that met the SLO (1.0 when only today's load did),
    ``breaks_at`` the first that did not (``None`` when every one met it), ``estimate`` the multiplier
    where the p99 interval's upper end crosses the SLO by linear interpolation (``None`` without a
    break), and ``qps`` today's query rate, queries/s.
    """

    runs: pd.DataFrame
    holds_to: float
    breaks_at: float | None
    estimate: float | None
    qps: float


def _finite(value: Any, fallback: Any) -> float:
    """``value`` as a float, or ``fallback`` when it is missing or NaN."""
    try:
        number = float(value)
    except (TypeError, ValueError):
        return float(fallback)
    return float(fallback) if math.isnan(number) else number


def _crossing(low: Mapping[str, Any], high: Mapping[str, Any], slo: float) -> float:
    y0, y1 = float(low["p99_high"]), float(high["p99_high"])
    x0, x1 = float(low["load"]), float(high["load"])
    if y1 <= y0:
        return x1
    return x0 + (x1 - x0) * min(1.0, max(0.0, (slo - y0) / (y1 - y0)))


def headroom(d: SizingData, best: pd.Series, multipliers: Sequence[float] | None = None) -> Headroom | None:
    """Run the recommendation at growing load until its p99 interval passes the SLO (``None`` without
    an SLO or multipliers)."""
    steps = tuple(multipliers if multipliers is not None else d.options.headroom)
    slo = d.slo_p99_ms
    if slo is None or not steps:
        return None
    sc, scratch, seed = _point(d, best)
    p99_high = best.get("latency_ms.p99.ci_high", best["latency_ms.p99.value"])
    rows = [{"load": 1.0, "throughput_qps": float(best["throughput_qps"]), "p99": float(best["latency_ms.p99.value"]),
             "p99_low": _finite(best.get("latency_ms.p99.ci_low"), best["latency_ms.p99.value"]),
             "p99_high": _finite(p99_high, best["latency_ms.p99.value"]), "meets_slo": bool(best["meets_slo"])}]
    for m in steps:
        what = load_variant(sc, m, scratch)
        row = _row(run_whatif(sc, what, scratch / what.name, seed), slo)
        value = row["latency_ms.p99.value"]
        rows.append({"load": m, "throughput_qps": float(row["throughput_qps"]), "p99": float(value),
                     "p99_low": _finite(row.get("latency_ms.p99.ci_low"), value),
                     "p99_high": _finite(row.get("latency_ms.p99.ci_high"), value),
                     "meets_slo": bool(row["meets_slo"])})
        if not row["meets_slo"]:
            break
    runs = pd.DataFrame(rows)
    passed, failed = runs[runs["meets_slo"]], runs[~runs["meets_slo"]]
    holds = float(passed["load"].max()) if len(passed) else 0.0
    breaks = float(failed["load"].min()) if len(failed) else None
    estimate = None
    if breaks is not None and len(passed):
        low = runs[runs["load"] == holds].iloc[0]
        high_row = runs[runs["load"] == breaks].iloc[0]
        estimate = _crossing({str(k): v for k, v in low.items()}, {str(k): v for k, v in high_row.items()}, slo)
    return Headroom(runs, holds, breaks, estimate, float(best["throughput_qps"]))
