"""Tune a fitted G1 model so that, driven like the log's JVM, it reproduces the log's young pauses.

The pause form (:mod:`workbench.jvm.fit`) is fitted pause by pause, but what a capacity planner reads
is the distribution: the median and the tail. The remembered-set work of an upsert map does not grow
smoothly (G1 coarsens a young region's remembered set to whole old regions once too many regions
point into it, and rebuilds it after a concurrent cycle), so the smooth form leaves a wide residual.
This step is the method of simulated moments on two numbers: a common scale of the young-pause form
(``young_base_ms``, ``rs_scan_ms_per_gb`` and ``1 / copy_rate``) and ``pause_sigma`` are adjusted until
the model, run at the log's allocation and update rates with fixed seeds, gives the log's median and
95th percentile of young pauses.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from workbench.jvm.g1 import g1_pauses_at_constant_rate
from workbench.jvm.g1_params import G1Params
from workbench.jvm.live import LiveHeap

__all__ = ["RATE_KNOBS", "Drive", "match_young_moments", "simulate_young"]

_ROUNDS = 16
_DAMPING = 0.6  # share of each round's correction applied (the response to the scale is steep near the goal)
_SEEDS = tuple(range(11, 43))
_Z95 = 1.6448536269514722


@dataclass(frozen=True)
class Drive:
    """How the log's JVM was driven: heap, live heap, rates and how long.

    Attributes
    ----------
    heap_bytes
        ``-Xmx``, bytes.
    live
        Live heap.
    allocation_rate
        Bytes allocated per second.
    update_rate
        Upsert updates of existing keys per second.
    horizon_ms
        Length of each simulated run, ms.
    warm
        The log starts in a JVM already serving (its eden grown), not at the JVM's start.
    """

    heap_bytes: float
    live: LiveHeap
    allocation_rate: float
    update_rate: float
    horizon_ms: float
    warm: bool = False


def simulate_young(params: G1Params, drive: Drive, seeds: tuple[int, ...] = _SEEDS) -> tuple[np.ndarray, float]:
    """Young pause lengths (ms) of the model driven like the log, and young collections per second."""
    durations: list[float] = []
    for seed in seeds:
        pauses, _ = g1_pauses_at_constant_rate(params, drive.heap_bytes, drive.live, drive.allocation_rate,
                                               drive.horizon_ms, np.random.default_rng(seed),
                                               update_rate=drive.update_rate, warm=drive.warm)
        durations.extend(p.duration_ms for p in pauses if p.kind == "young")
    return np.array(durations), len(durations) / (len(seeds) * drive.horizon_ms / 1000.0)


def _scaled(params: G1Params, scale: float, sigma: float) -> G1Params:
    return replace(params, young_base_ms=params.young_base_ms * scale, copy_rate=params.copy_rate / scale,
                   rs_scan_ms_per_gb=params.rs_scan_ms_per_gb * scale, pause_sigma=sigma)


#: What sets eden in a log, so what moves the model's young rate: where G1 aims its pauses, or how fast it grows
#: eden while pauses are far under the goal.
RATE_KNOBS = {"goal_share": (0.5, 0.2, 0.99), "young_growth": (1.0, 0.005, 1.0)}


def _resized(params: G1Params, knob: str, rate_ratio: float) -> G1Params:
    """Let eden grow more (ratio > 1: the model collects too often) or less, through ``knob``."""
    power, low, high = RATE_KNOBS[knob]
    value = getattr(params, knob) * rate_ratio ** (_DAMPING * power)
    changes: dict[str, Any] = {knob: float(np.clip(value, low, high))}
    resized = replace(params, **changes)
    if knob == "goal_share" and value > high:  # the goal alone cannot give eden room enough: let it grow faster
        return _resized(resized, "young_growth", rate_ratio)
    return resized


def match_young_moments(params: G1Params, observed_ms: np.ndarray, observed_rate: float, drive: Drive, *,
                        rate_knob: str | None = "goal_share") -> G1Params:
    """Adjust the pause scale, ``pause_sigma`` and eden sizing to the log's young median, p95 and rate.

    ``observed_rate`` is young collections per second. The pause scale moves the median, the noise the
    ratio p95/median, and ``rate_knob`` (a key of :data:`RATE_KNOBS`) the rate; ``None`` leaves the
    rate alone (a log whose eden sat at its minimum shows neither knob).
    Returns ``params`` unchanged when there are fewer than 5 observed young pauses.
    """
    if len(observed_ms) < 5:
        return params
    target_median, target_p95 = np.quantile(observed_ms, [0.5, 0.95])
    target_spread = np.log(target_p95 / target_median)
    best, best_error = params, np.inf
    for _ in range(_ROUNDS):
        simulated, rate = simulate_young(params, drive)
        if len(simulated) < 5:
            break
        median, p95 = np.quantile(simulated, [0.5, 0.95])
        misses = [abs(np.log(median / target_median)), abs(np.log(p95 / target_p95))]
        error = max(misses + ([abs(np.log(rate / observed_rate))] if rate_knob else []))
        if error < best_error:
            best, best_error = params, error
        spread = max(np.log(p95 / median), 1e-3)
        # the noise adds to the spread the form already has: move sigma by the spread still missing
        sigma = float(np.clip(params.pause_sigma + _DAMPING * (target_spread - spread) / _Z95, 0.02, 1.5))
        params = _scaled(params, float((target_median / median) ** _DAMPING), sigma)
        params = _resized(params, rate_knob, rate / observed_rate) if rate_knob else params
    return best
