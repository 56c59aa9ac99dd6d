"""Several tables on one tenant against queueing theory: the tenant's server sees the superposed stream.

Two tables on one server, each with Poisson arrivals and exponential service, in the documented validation
shape (docs/scenario.md: every query one request, one task, no runner work, no more runnable threads than
cores). The server then queues the superposition of the two Poisson streams (Poisson at the summed rate)
with the mixed service distribution (:func:`~workbench.analysis.theory.exponential_mixture`):

- equal means (10 ms each): the mixture is exponential again, so the server is exactly M/M/c and Erlang C
  gives the mean wait and the probability of waiting, for the tenant and for each table alike (FCFS, and
  Poisson arrivals see time averages);
- different means (4 ms and 16 ms) on one core: the server is exactly M/G/1 with a hyperexponential
  service, so Pollaczek-Khinchine gives the mean wait, again for each table, whose mean latency is that
  wait plus its own mean service.

Each check takes one estimate per replication and requires the theoretical value inside the 99.9% Student-t
interval, and that interval to be narrow, as ``test_queueing_theory`` does. The checks run on the compiled
engine (about a million queries: minutes on the SimPy engine, a second here); the SimPy engine executes the
same merged plan to the same records (:func:`test_both_engines_give_a_tenant_the_same_records`), so the
checks hold for both.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

from workbench.analysis import theory
from workbench.analysis.stats import mean_ci
from workbench.sim.run import simulate

CONF = 0.999


def tenant(cores: int, tables: list[tuple[str, float, float]], duration: float, replications: int, seed: int,
           engine: str = "auto") -> dict[str, Any]:
    """The validation shape with one server and ``tables`` (name, qps, mean ms) on its tenant."""
    return {
        "cluster": {"servers": 1, "server": {"cores": cores}, "network": {"latency_ms": 0},
                    "broker": {"overhead_ms": 0, "reduce_ms_per_server": 0, "reduce_ms_per_row": 0},
                    "gc": {"collector": "none"}},
        "tables": [{"table": {"tableName": name, "tableType": "OFFLINE",
                              "routing": {"instanceSelectorType": "balanced"}, "segmentsConfig": {"replication": 1}},
                    "workload": {"synthetic": {"segments_per_server": 1, "docs_per_segment": 1000},
                                 "arrival": {"process": "poisson", "qps": qps}},
                    "service": {"model": "exponential", "mean_ms": mean}} for name, qps, mean in tables],
        "simulation": {"duration_s": duration, "warmup_s": duration / 10, "replications": replications,
                       "seed": seed, "engine": engine},
    }


def per_replication(queries: pd.DataFrame, fn: Any) -> np.ndarray:
    return np.array([fn(g) for _, g in queries.groupby("replication")])


def test_two_tables_of_equal_means_are_exactly_erlang_c() -> None:
    """Superposed Poisson streams (60 + 100 qps), both 10 ms exponential, on 2 cores: M/M/2 at rho 0.8."""
    c, tables = 2, [("a", 60.0, 10.0), ("b", 100.0, 10.0)]
    lam, mean, _ = theory.exponential_mixture([q / 1000 for _, q, _ in tables], [m for *_, m in tables])
    r = simulate(tenant(c, tables, 600, 10, seed=3, engine="fast"))
    wait = theory.mmc_mean_wait(lam, 1 / mean, c)
    p_wait = theory.erlang_c(c, lam * mean)
    for name, q in [("tenant", r.queries), *r.queries.groupby("table", observed=True)]:
        got, lo, hi = mean_ci(per_replication(q, lambda g: g["queue_wait_ms"].mean()), CONF)
        assert lo <= wait <= hi, (name, got, lo, hi, wait)
        assert (hi - lo) / 2 < 0.08 * wait, name
        got, lo, hi = mean_ci(per_replication(q, lambda g: (g["queue_wait_ms"] > 0).mean()), CONF)
        assert lo <= p_wait <= hi, (name, got, lo, hi, p_wait)
    assert set(r.queries["table"]) == {"a", "b"}


def test_two_tables_of_different_means_are_exactly_pollaczek_khinchine() -> None:
    """40 qps of 4 ms and 30 qps of 16 ms on one core (rho 0.64): M/G/1 with the hyperexponential mixture."""
    tables = [("fast", 40.0, 4.0), ("slow", 30.0, 16.0)]
    lam, mean, second = theory.exponential_mixture([q / 1000 for _, q, _ in tables], [m for *_, m in tables])
    r = simulate(tenant(1, tables, 800, 10, seed=5, engine="fast"))
    wait = theory.mg1_mean_wait(lam, mean, second)
    got, lo, hi = mean_ci(per_replication(r.queries, lambda g: g["queue_wait_ms"].mean()), CONF)
    assert lo <= wait <= hi, (got, lo, hi, wait)
    assert (hi - lo) / 2 < 0.06 * wait
    # PASTA: each table waits the same; its latency adds its own service
    for name, _, own in tables:
        q = r.queries[r.queries["table"] == name]
        got, lo, hi = mean_ci(per_replication(q, lambda g: g["latency_ms"].mean()), CONF)
        assert lo <= wait + own <= hi, (name, got, lo, hi, wait + own)


def test_both_engines_give_a_tenant_the_same_records() -> None:
    """The merged plan is one plan: the reference and the compiled engine execute it to the same records (here
    requests of both tables queueing for the same 2 cores, 0.56 of them busy)."""
    tables = [("a", 40.0, 5.0), ("b", 30.0, 12.0)]
    runs = [simulate(tenant(2, tables, 20, 2, seed=7, engine=e)) for e in ("simpy", "fast")]
    pd.testing.assert_frame_equal(runs[0].queries, runs[1].queries)
    pd.testing.assert_frame_equal(runs[0].servers, runs[1].servers)
