"""Fit the cost model's parameters to a broker query log, with their uncertainty.

The model's expected time of a query (``docs/model.md``, ``docs/calibrate.md``) is linear in its costs::

    time = overhead_ms                                        broker work per query
         + (per_request_ms + 2 x network) x [scattered]       runner's T1, request and response travel
         + (per_segment_ms + ns_per_doc x 1e-6 x docs/segment) x g      the slowest server's segments
         + merge_ms_per_segment x (segments on it, or g for a group-by, whose workers merge)
         + reduce_ms_per_server x servers answered + reduce_ms_per_row x rows returned

where ``g`` is the mean makespan of the slowest server in units of one segment's work
(:mod:`~workbench.calibrate.critical_path`, which depends on ``service.variability``). So the costs are a
least-squares fit of the logged ``timeMs`` on those columns, each query weighted by one over its variance
under the model (the spread of its slowest server plus the millisecond clock's), alternated with the
variability fit (:mod:`~workbench.calibrate.variability`) until ``sigma`` settles. Estimates are never
negative (non-negative least squares: a cost cannot be below zero).

A parameter the log cannot tell apart from another (no variation in its column, or a column that is a
combination of the others) is **held** at its default, and says so; unless at their defaults the model would charge
more than the log records, when they are scaled down to what it leaves them (:func:`within_observed`). The standard
errors come from a block bootstrap over contiguous stretches of the log (queries close in time share load, so they
are not independent), computed from per-block moment matrices so a thousand resamples of a million-line log take a
second; ``sigma``'s uncertainty and the costs' are then joined (they are fitted from each other).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
from scipy.optimize import nnls

from workbench import defaults as D
from workbench.calibrate.critical_path import DEFAULT_SAMPLES, factor_moments, mean_factors
from workbench.calibrate.features import KINDS, LogFeatures
from workbench.calibrate.variability import VariabilityFit, fit_variability, not_shown, shown, spread_gap

#: The fit's building blocks are public because ``work.py`` (the fit to the servers' measured work) reuses them.
__all__ = ["AT_BOUND", "CLOCK_VARIANCE", "FIT_KEYS", "FIT_PARAMETERS", "HELD_BELOW", "HELD_EXCESS", "MEASURED_WORK",
           "TIME_MS", "VARIABILITY_KEY", "Against", "FitOptions", "Parameter", "ServiceFit", "at_bound_source",
           "block_bootstrap", "bootstrap_blocks", "design", "fit_quality", "fit_service", "held_note", "identifiable",
           "partners", "predict", "refit_overhead", "segment_mean", "within_observed"]

#: The fitted parameters: scenario key, unit, and what it multiplies; in the order of the design columns.
FIT_PARAMETERS: tuple[tuple[str, str, float], ...] = (
    ("cluster.broker.overhead_ms", "ms per query", D.BROKER_OVERHEAD_MS),
    ("service.per_request_ms", "ms per server request", D.COST_PER_REQUEST_MS),
    ("service.per_segment_ms", "ms per segment", D.COST_PER_SEGMENT_MS),
    ("service.ns_per_doc", "ns per document scanned", D.COST_NS_PER_DOC),
    ("service.merge_ms_per_segment", "ms per segment merged", D.COST_MERGE_MS_PER_SEGMENT),
    ("cluster.broker.reduce_ms_per_server", "ms per server answered", D.BROKER_REDUCE_MS_PER_SERVER),
    ("cluster.broker.reduce_ms_per_row", "ms per row returned", D.BROKER_REDUCE_MS_PER_ROW),
)
FIT_KEYS = tuple(k for k, _, _ in FIT_PARAMETERS)
#: The variability's key; it joins the covariance of the fitted costs as its last row.
VARIABILITY_KEY = "service.variability"
#: Which parameter is held first when columns cannot be told apart (the least important first).
_HOLD_FIRST = ("service.merge_ms_per_segment", "cluster.broker.reduce_ms_per_row",
               "cluster.broker.reduce_ms_per_server", "cluster.broker.overhead_ms", "service.per_segment_ms",
               "service.per_request_ms", "service.ns_per_doc")
#: How the source of a cost fitted at 0 begins (:func:`at_bound_source`).
AT_BOUND = "fitted at its lower bound 0"
#: Variance of ``timeMs`` from the broker's millisecond clock alone: a difference of two readings
#: errs by uniform minus uniform on (-1, 1) ms, whose variance is 1/6 ms^2.
CLOCK_VARIANCE = 1.0 / 6.0
#: Columns whose (unit-scaled) Gram matrix has an eigenvalue below 1 / this are not identifiable: some
#: parameter's variance would be inflated more than this by the others.
_INFLATION_LIMIT = 1e4


@dataclass(frozen=True)
class Parameter:
    """One parameter of the calibrated scenario.

    ``source`` is ``fitted`` (with ``se``, one standard error), starts with ``fitted`` and says how (to the
    broker's share of ``timeMs``; at the lower bound 0, where ``se`` is the unconstrained fit's and bounds
    it above), or says why it was held and at what: the workbench default (``workbench/defaults.py``), zero,
    or an estimate from the log's serverStats. :meth:`statement` is the one text every output shows.
    """

    key: str
    value: float
    unit: str
    source: str
    se: float | None = None

    @property
    def fitted(self) -> bool:
        return self.source.startswith("fitted")

    @property
    def at_bound(self) -> bool:
        """Fitted at the lower bound 0: the log cannot tell it from 0."""
        return self.source.startswith(AT_BOUND)

    def statement(self) -> str:
        """Where the value came from, said once: never a spread beside a bound, nor fitted beside held.

        >>> Parameter("k", 2.0, "ms", "fitted", 0.1).statement()
        'fitted: ± 0.1 (1 s.e.)'
        >>> Parameter("k", 0.0, "ms", at_bound_source(0.5), 0.5).statement()[-41:]
        'and puts it below 1 (two standard errors)'
        """
        if self.at_bound or self.se is None:
            return self.source
        return f"{self.source}: ± {self.se:.3g} (1 s.e.)"

    def to_dict(self) -> dict[str, Any]:
        return {"value": self.value, "se": self.se, "unit": self.unit, "source": self.source}


@dataclass(frozen=True)
class FitOptions:
    """Settings of :func:`fit_service` (defaults suit logs of a few hundred to millions of queries)."""

    #: One-way network delay per message, ms: the log cannot tell it from the per-request cost.
    network_ms: float = D.NETWORK_LATENCY_MS
    #: The broker's per-query work when the log cannot separate it (value, standard error, where from).
    overhead: tuple[float, float | None, str] = (D.BROKER_OVERHEAD_MS, None, "default (workbench/defaults.py)")
    #: Costs already known (key -> value, standard error, source): the broker's, from its share of each query in
    #: ``serverStats`` (:mod:`~workbench.calibrate.broker`); they are not fitted to ``timeMs`` again.
    known: Mapping[str, tuple[float, float | None, str]] = field(default_factory=dict)
    bootstrap: int = 500
    seed: int = 0
    samples: int = DEFAULT_SAMPLES
    max_rounds: int = 6


@dataclass(frozen=True)
class ServiceFit:
    """The fitted cost model, its uncertainty and how well it explains the log.

    ``covariance`` is over the fitted parameters, in the order of ``fitted_keys`` (block bootstrap of the
    costs at the fitted ``sigma``, plus ``service.variability`` as the last key with its uncertainty carried
    through the costs that move with it);
    ``quality`` holds ``r2`` (share of the variance of ``timeMs`` the expected times explain),
    ``rmse_ms``, ``median_abs_error_ms``, ``within_10pct`` (share of queries predicted within 10% or
    1 ms), the means, and the same per query kind; ``entries`` says whether the entries scanned in and
    after the filter explain what the per-document cost does not.
    """

    parameters: tuple[Parameter, ...]
    fitted_keys: tuple[str, ...]
    covariance: np.ndarray
    variability: VariabilityFit
    quality: Mapping[str, Any]
    queries: int
    notes: tuple[str, ...] = field(default=())

    def value(self, key: str) -> float:
        """The value of one parameter (``service.ns_per_doc``, ...)."""
        return next(p.value for p in self.parameters if p.key == key)

    def parameter(self, key: str) -> Parameter:
        return next(p for p in self.parameters if p.key == key)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: every parameter, the covariance, the variability and the fit's quality."""
        v = self.variability
        return {
            "queries": self.queries,
            "parameters": {p.key: p.to_dict() for p in self.parameters},
            "covariance": {"keys": list(self.fitted_keys), "matrix": self.covariance.tolist()},
            "variability": {"value": v.sigma, "se": v.se, "observed_iqr_ms": v.observed_iqr_ms,
                            "clock_only_iqr_ms": v.clock_only_iqr_ms, "note": v.note},
            "quality": dict(self.quality),
            "notes": list(self.notes),
        }


def at_bound_source(se: float | None) -> str:
    """The source of a cost the non-negative fit put at 0: its unconstrained standard error bounds it above."""
    bound = f" and puts it below {2 * se:.3g} (two standard errors)" if se else ""
    return f"{AT_BOUND} (a cost cannot be negative): the log cannot tell it from 0{bound}"


def design(features: LogFeatures, g: np.ndarray, network_ms: float) -> tuple[np.ndarray, np.ndarray]:
    """The design matrix (one column per :data:`FIT_PARAMETERS` entry) and the fixed offset (network), ms.

    ``g`` is each query's mean slowest-server makespan in units of one segment's work.
    """
    f = features
    scattered = (f.servers > 0).astype(float)
    per_segment_docs = np.where(f.segments > 0, f.docs / np.maximum(f.segments, 1), 0.0)
    merge = np.where(f.group_by, g, f.largest.astype(float))
    x = np.column_stack([np.ones(len(f)), scattered, g, g * per_segment_docs * 1e-6, merge,
                         f.responded.astype(float), f.rows.astype(float)])
    return x, 2.0 * network_ms * scattered


def _collinear(x: np.ndarray) -> np.ndarray | None:
    """Weights of the columns in their most nearly dependent combination, or ``None`` when none is.

    Columns are scaled to unit length; a smallest eigenvalue of their Gram matrix below
    ``1 / _INFLATION_LIMIT`` means some combination of them is (nearly) zero: the log cannot tell those
    columns' parameters apart. A column that is all zeros is that combination by itself.
    """
    norms = np.sqrt((x * x).sum(axis=0))
    if np.any(norms == 0):
        zero: np.ndarray = (norms == 0).astype(float)
        return zero
    scaled = x / norms
    values, vectors = np.linalg.eigh(scaled.T @ scaled)
    if values[0] >= 1.0 / _INFLATION_LIMIT:
        return None
    weights: np.ndarray = vectors[:, 0]
    return weights


def identifiable(x: np.ndarray, free: list[str]) -> tuple[list[str], list[str]]:
    """The free parameters the columns can tell apart, and those that had to be held: while some
    combination of columns is nearly zero, the least important parameter in it is held."""
    held = []
    while free:
        weights = _collinear(x[:, [FIT_KEYS.index(k) for k in free]])
        if weights is None:
            break
        involved = [k for k, w in zip(free, weights, strict=True) if abs(w) > 0.1]
        drop = min(involved, key=_HOLD_FIRST.index)
        free.remove(drop)
        held.append(drop)
    return free, held


def partners(x: np.ndarray, free: Sequence[str], key: str) -> list[str]:
    """The free parameters whose columns make up most of held ``key``'s column: the ones that absorb its work."""
    held = x[:, FIT_KEYS.index(key)]
    cols = x[:, [FIT_KEYS.index(k) for k in free]]
    norms = np.sqrt((cols * cols).sum(axis=0))
    size = float(np.sqrt(held @ held))
    if not len(free) or size == 0:
        return []
    ok = norms > 0
    beta = np.linalg.lstsq(cols[:, ok] / norms[ok], held / size, rcond=None)[0]
    named = [k for k, n in zip(free, ok, strict=True) if n]
    return [k for k, b in zip(named, beta.tolist(), strict=True) if abs(b) > 0.1]


def held_note(key: str, value: float, source: str, x: np.ndarray, free: Sequence[str]) -> str:
    """What a held parameter's note says: at what, why, and which fitted parameters carry its work instead
    (their values are then the held one's share plus theirs, less the held value)."""
    carried = partners(x, free, key)
    together = f"(the log determines {' and '.join([key, *carried])} together, not apart)"
    if not carried:
        with_ = ""
    elif source.startswith(HELD_BELOW):   # scaled to what the log leaves it: the others carry none of its work
        with_ = f"; {', '.join(carried)} {'takes' if len(carried) == 1 else 'take'} none of its work {together}"
    else:
        verb = "carries" if len(carried) == 1 else "carry"
        with_ = f"; {', '.join(carried)} {verb} its work beyond {value:.3g} {together}"
    return f"{key}: {source} (held at {value:.3g}){with_}"


#: How far over what the log records the model may total before the held costs are scaled down (a share): a fit's
#: totals are not exact (a heavy constraint row, a weighted fit), only a real excess counts.
HELD_EXCESS = 0.01
#: How a held cost's source begins when it was scaled down (:func:`within_observed`).
HELD_BELOW = "held below its default"
#: A refitted total within this share of the total with nothing held is taken as equal to it; at most this many
#: refits find the held costs' factor (:func:`_refitted_scale`).
_SCALE_TOLERANCE = 1e-3
_SCALE_STEPS = 8


@dataclass(frozen=True)
class Against:
    """What held costs are checked against (:func:`within_observed`), in the words of their source.

    ``goal`` follows "scaled by <factor>" and may name ``{ratio}``: the model's total over the log's after it.
    """

    #: What cannot tell a held cost from the others.
    evidence: str
    #: The whole the held costs are compared with, and the verb of their share of it.
    whole: str
    verb: str
    #: What the scaling makes true.
    goal: str
    #: The parts of the model's total neither fitted nor held, said where there are any.
    others: str = ""


#: The servers' measured work per query (``ThreadCpuTimeNs``: :func:`~workbench.calibrate.work.fit_work`).
MEASURED_WORK = Against("the servers' measured work", "the measured work", "charge",
                        "so the fitted work totals the measured work")
#: The broker log's ``timeMs`` (:func:`fit_service`).
TIME_MS = Against("the log's timeMs", "the log's mean timeMs", "take",
                  "to what the log leaves them (the costs it cannot tell them from would otherwise have to be "
                  "negative): those come to 0, and the model's mean time over the log is {ratio:.0%} of the log's",
                  "with the assumed network delay and any costs taken from serverStats")


def within_observed(values: dict[str, float], sources: dict[str, str], held: Sequence[str], free: Sequence[str],
                    x: np.ndarray, observed_ms: float, against: Against, fixed_ms: float = 0.0,
                    refit: Callable[[dict[str, float]], float] | None = None) -> float | None:
    """Scale the held costs down when, at their defaults, the model charges more than the log records.

    A cost the log cannot tell from the others is held at its default, and the fitted ones take the rest. Where the
    defaults leave less than nothing (Pinot's own airlineStats example: 131 segments per query at the default
    0.1 ms each is 13 ms, the servers measured 5.2 ms) the fitted costs stop at zero, and the model charges more
    than the log shows, several times more when the defaults alone exceed it. The assumption yields to the log
    instead: the held costs are scaled by one factor (never below 0), and each one's source says so, once (held,
    not fitted: it is no estimate). Returns the factor, or ``None`` when the model's total (``x`` times ``values``
    plus ``fixed_ms``, summed) is within :data:`HELD_EXCESS` of ``observed_ms``, or the held costs are not why.

    Without ``refit`` (the fit to the measured work, whose sum constraint leaves the total over the measured one
    only when the held defaults alone exceed it, the fitted costs then at zero) the factor makes the total the
    measured one; the fitted costs stay as they are.

    With ``refit`` (the fit to ``timeMs``, which has no such constraint: its fitted costs were driven to their
    bounds, the per-document one too, to make up for the held ones) the fitted costs are fitted again at each trial
    factor (``refit`` sets them in ``values`` and returns the model's total), and the factor is where the costs
    that carry the held ones' work, fitted again, just reach 0 (:func:`_refitted_scale`): the held costs then take
    all that the log determines of them and their carriers together, and the costs the log can identify come back
    as the log has them (on a noiseless log, exactly). When the total is no lower with nothing held, the held costs
    are not why, and stay. The model's total is then what the fit with nothing held gives: the log's mean up to the
    fit's weighting (each query weighted by its variance). The log's ``timeMs`` also holds the waits for threads
    that the simulation adds under load, so the comparison is exact for a calm log only, and lenient otherwise: the
    costs that carry the held ones' work take the waits as well, and defaults that only the waits pay for are let
    through.
    """
    vector = np.array([values[k] for k in FIT_KEYS])
    total = float((x @ vector).sum()) + fixed_ms
    held_ms = sum(values[k] * float(x[:, FIT_KEYS.index(k)].sum()) for k in held)
    # a fit's total is not exact (a heavy constraint row, a weighted fit): only a real excess counts
    if not held or held_ms <= 0 or total <= observed_ms * (1 + HELD_EXCESS):
        return None
    defaults = {k: values[k] for k in held}
    scale = max(0.0, 1.0 - (total - observed_ms) / held_ms)
    assumed_ms = total - sum(values[k] * float(x[:, FIT_KEYS.index(k)].sum()) for k in free)   # all not fitted
    ratio = 1.0
    # the free costs whose columns make up the held ones': what carries their work in the fit
    carriers = sorted({p for k in held for p in partners(x, free, k)}) if refit is not None else []
    if refit is not None and carriers:
        sums = {p: float(x[:, FIT_KEYS.index(p)].sum()) for p in carriers}

        def carried(v: Mapping[str, float]) -> float:
            return sum(v[p] * sums[p] for p in carriers)

        before = dict(values)
        scale, refitted = _refitted_scale(defaults, values, refit, carried, held_ms, total, scale)
        if scale >= 1.0:
            values.update(before)
            return None
        ratio = refitted / observed_ms
    others = (f", and {assumed_ms / observed_ms:.3g} times {against.others}"
              if against.others and assumed_ms > held_ms * (1 + 1e-6) else "")
    for k, default in defaults.items():
        values[k] = default * scale
        sources[k] = (f"{HELD_BELOW} (workbench/defaults.py {default:.3g}): {against.evidence} cannot tell "
                      f"it from the other costs, and at their defaults the held costs alone {against.verb} "
                      f"{held_ms / observed_ms:.3g} times {against.whole}{others}; scaled by {scale:.3g} "
                      + against.goal.format(ratio=ratio))
    return scale


def _refitted_scale(defaults: Mapping[str, float], values: dict[str, float], refit: Callable[[dict[str, float]], float],
                    carried: Callable[[Mapping[str, float]], float], held_ms: float, total_ms: float,
                    first: float) -> tuple[float, float]:
    """The factor of the held costs at which the costs that carry their work, fitted again, just reach 0; and the
    model's total there (1 when the held costs are not why it totals more). ``values`` ends fitted at the factor.

    With nothing held (factor 0) the fitted costs take all, the carriers' share (``carried``, ms) is ``c0`` and the
    model totals ``floor``. Raising the factor, the carriers give the held costs their work back one for one: the
    total stays at ``floor`` while their share falls (linearly at a settled variability) to 0; beyond that factor
    the total grows, to ``total_ms`` at factor 1. So the factor sought is where the carriers' share reaches 0: secant
    steps on it from the flat side (the first from its slope, the held costs' own share), or on the total from the
    growing side (from factor 1 and ``first``, the factor that would meet the log were the fitted costs kept), and
    bisection where a step leaves the bracket. Unsettled after :data:`_SCALE_STEPS` refits, the smallest factor at
    which the carriers were at 0 is taken.
    """
    def total_at(scale: float) -> float:
        values.update({k: v * scale for k, v in defaults.items()})
        return refit(values)

    floor = total_at(0.0)
    c0 = carried(values)
    if total_ms <= floor * (1 + HELD_EXCESS):   # the held costs are not why the model totals more than the log
        return 1.0, total_ms
    if c0 <= 0.0:                               # the fitted costs carry none of their work even with nothing held
        return 0.0, floor
    near, gone = _SCALE_TOLERANCE * abs(floor), 1e-9 * c0
    flat, growing = [(0.0, c0)], [(1.0, total_ms)]   # (factor, carriers' share) where it is above 0; (factor, total)
    guess = first
    for _ in range(_SCALE_STEPS):
        total = total_at(guess)
        share = carried(values)
        if share > gone:
            flat = sorted([*flat, (guess, share)])
        elif total <= floor + near:
            return guess, total                 # the carriers at 0 and the total still the floor: found
        else:
            growing = sorted([*growing, (guess, total)])
        lo, hi = flat[-1][0], growing[0][0]
        # from the flat side the carriers' share falls to 0 (at first by the held costs' own share per unit factor)
        (a, ca), (b, cb) = flat[-2:] if len(flat) > 1 else ((-1.0, c0 + held_ms), flat[0])
        left = b + cb * (b - a) / (ca - cb) if ca > cb else hi
        # from the growing side the total falls to the floor
        (s1, t1), (s2, t2) = (growing * 2)[:2]
        right = s1 - (t1 - floor) * (s2 - s1) / (t2 - t1) if s2 > s1 and t2 > t1 else lo
        guess = left if lo < left < hi else right if lo < right < hi else (lo + hi) / 2
    return growing[0][0], total_at(growing[0][0])


@dataclass
class _State:
    values: dict[str, float]
    sources: dict[str, str]
    free: list[str]


def _solve(x: np.ndarray, y: np.ndarray, offset: np.ndarray, weights: np.ndarray, state: _State) -> np.ndarray:
    """Weighted least squares for the free parameters, none below zero (a cost is never negative), with
    the held ones at their values. Returns the target the free parameters were fitted to."""
    held = [k for k in FIT_KEYS if k not in state.free]
    target: np.ndarray = y - offset
    for k in held:
        target = target - state.values[k] * x[:, FIT_KEYS.index(k)]
    cols = [FIT_KEYS.index(k) for k in state.free]
    if cols:
        root = np.sqrt(weights)
        beta = np.asarray(nnls(x[:, cols] * root[:, None], target * root)[0])
        state.values.update(zip(state.free, beta.tolist(), strict=True))
    return target


def bootstrap_blocks(n: int) -> list[np.ndarray]:
    """Contiguous stretches of the log (in arrival order) for the block bootstrap."""
    count = int(min(200, max(10, n // 200)))
    return [b for b in np.array_split(np.arange(n), min(count, n)) if len(b)]


def block_bootstrap(x: np.ndarray, target: np.ndarray, weights: np.ndarray, blocks: Sequence[np.ndarray],
               resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Covariance of the weighted least-squares estimates over block resamples.

    Each resample sums per-block moment matrices with multinomial block counts, so a resample costs a
    p x p solve whatever the length of the log. The estimates are not held at zero here: a cost fitted
    at its bound keeps the spread the log leaves it (``0 +/- se``), not the smaller spread of the clipped
    estimator, which would claim the log proves it is zero.
    """
    p = x.shape[1]
    if p == 0 or resamples < 2:
        return np.zeros((p, p))
    xtx = np.stack([(x[b] * weights[b, None]).T @ x[b] for b in blocks])
    xty = np.stack([(x[b] * weights[b, None]).T @ target[b] for b in blocks])
    estimates = []
    for _ in range(resamples):
        counts = np.bincount(rng.integers(0, len(blocks), len(blocks)), minlength=len(blocks)).astype(float)
        try:
            estimates.append(np.linalg.solve(np.tensordot(counts, xtx, 1), np.tensordot(counts, xty, 1)))
        except np.linalg.LinAlgError:
            continue
    return np.atleast_2d(np.cov(np.array(estimates), rowvar=False)) if len(estimates) > 1 else np.zeros((p, p))


def fit_quality(y: np.ndarray, predicted: np.ndarray, kinds: np.ndarray) -> dict[str, Any]:
    def summary(obs: np.ndarray, pred: np.ndarray) -> dict[str, Any]:
        err = pred - obs
        total = float(((obs - obs.mean()) ** 2).sum())
        return {"queries": len(obs), "r2": 1.0 - float((err**2).sum()) / total if total > 0 else float("nan"),
                "rmse_ms": float(np.sqrt((err**2).mean())), "median_abs_error_ms": float(np.median(np.abs(err))),
                "within_10pct": float((np.abs(err) <= np.maximum(1.0, 0.1 * obs)).mean()),
                "observed_mean_ms": float(obs.mean()), "predicted_mean_ms": float(pred.mean())}

    out = summary(y, predicted)
    out["by_kind"] = {k: summary(y[kinds == k], predicted[kinds == k]) for k in KINDS if (kinds == k).any()}
    return out


def _entries_check(r: _Round, f: LogFeatures, cols: list[int]) -> dict[str, Any]:
    """Do the entries scanned in and after the filter explain what the per-document cost leaves?

    The weighted fit is repeated with two more columns (entries per segment on the slowest server, like
    the documents); ``r2_gain`` is the share of the weighted variance they explain in addition.
    """
    seg = np.maximum(f.segments, 1)
    extra = np.column_stack([r.g * f.entries_in_filter / seg * 1e-6, r.g * f.entries_post_filter / seg * 1e-6])
    if not np.any(extra):
        return {"available": False}
    root = np.sqrt(r.weights)
    target = r.target * root
    base = r.x[:, cols] * root[:, None]
    both = np.column_stack([base, extra * root[:, None]])
    rss0 = float(((target - base @ np.linalg.lstsq(base, target, rcond=None)[0]) ** 2).sum())
    beta = np.linalg.lstsq(both, target, rcond=None)[0]
    rss1 = float(((target - both @ beta) ** 2).sum())
    total = float(((target - target.mean()) ** 2).sum()) or 1.0
    return {"available": True, "r2_gain": (rss0 - rss1) / total,
            "ns_per_entry_in_filter": float(beta[-2]), "ns_per_entry_post_filter": float(beta[-1])}


@dataclass(frozen=True)
class _Round:
    g: np.ndarray
    x: np.ndarray
    target: np.ndarray
    weights: np.ndarray


def _round(f: LogFeatures, state: _State, sigma: float, options: FitOptions) -> _Round:
    """One weighted fit at ``sigma``: each query weighted by 1 / its variance under the current costs."""
    g, v = _factors(f, sigma, options)
    weights = 1.0 / (segment_mean(f, state.values) ** 2 * v + CLOCK_VARIANCE)
    x, offset = design(f, g, options.network_ms)
    return _Round(g, x, _solve(x, f.time_ms, offset, weights, state), weights)


def _factors(f: LogFeatures, sigma: float, options: FitOptions) -> tuple[np.ndarray, np.ndarray]:
    """Each query's mean slowest-server makespan in units of one segment's work, and its variance, at ``sigma``."""
    if not f.shapes:
        return np.zeros(len(f)), np.zeros(len(f))
    means, variances = factor_moments(f.shapes, sigma, options.samples, options.seed)
    return means[f.shape_id], variances[f.shape_id]


def segment_mean(f: LogFeatures, values: Mapping[str, float]) -> np.ndarray:
    """Each query's mean work per segment, ms (what the variability multiplies)."""
    per_doc = np.where(f.segments > 0, f.docs / np.maximum(f.segments, 1), 0.0)
    mu = values["service.per_segment_ms"] + values["service.ns_per_doc"] * 1e-6 * per_doc
    mu = mu + np.where(f.group_by, values["service.merge_ms_per_segment"], 0.0)
    out: np.ndarray = np.where(f.segments > 0, mu, 0.0)
    return out


def _start(f: LogFeatures, options: FitOptions) -> tuple[_State, list[str], np.ndarray]:
    """The costs at their start (defaults, and the known ones), the held keys, and the design at ``sigma`` 0."""
    rounds = mean_factors(f.shapes, 0.0)[f.shape_id] if f.shapes else np.zeros(len(f))
    x, _ = design(f, rounds, options.network_ms)
    free, held = identifiable(x, [k for k in FIT_KEYS if k not in options.known])
    values = {k: default for k, _, default in FIT_PARAMETERS}
    sources = dict.fromkeys(FIT_KEYS, "fitted")
    for k, (value, _, source) in options.known.items():
        values[k], sources[k] = value, source
    for k in held:
        if k == "cluster.broker.overhead_ms":
            values[k], _, where = options.overhead
            sources[k] = f"held at {where}: every logged query reached servers, so the broker's own work " \
                         "cannot be told from the servers' per-request work"
        else:
            sources[k] = "held at default (workbench/defaults.py): the log cannot tell it from the other costs"
    return _State(values, sources, free), held, x


def _within_log(f: LogFeatures, state: _State, held: Sequence[str], sigma: float, options: FitOptions,
                blocks: Sequence[np.ndarray]) -> float:
    """Hold the held costs within the log's mean ``timeMs`` (:func:`within_observed`, the fitted costs fitted
    again at each trial scale); returns the variability the costs settled at."""
    settled = [sigma]

    def refit(values: dict[str, float]) -> float:
        trial = _State(values, state.sources, state.free)
        settled[0] = _alternate(f, trial, options, blocks)
        g = _round(f, trial, settled[0], options).g
        return float(predict(f, values, g, options.network_ms).sum())

    x, offset = design(f, _factors(f, sigma, options)[0], options.network_ms)
    scaled = within_observed(state.values, state.sources, held, state.free, x, float(f.time_ms.sum()), TIME_MS,
                             float(offset.sum()), refit)
    return sigma if scaled is None else settled[0]


def fit_service(features: LogFeatures, options: FitOptions | None = None) -> ServiceFit:
    """Fit the cost model to the logged queries (in arrival order); see the module text for the model.

    Raises
    ------
    ValueError
        With no queries to fit.
    """
    opts = options or FitOptions()
    f = features
    if len(f) == 0:
        raise ValueError("no queries to fit")
    state, held, x0 = _start(f, opts)
    blocks = bootstrap_blocks(len(f))
    sigma = _within_log(f, state, held, _alternate(f, state, opts, blocks), opts, blocks)
    notes = [held_note(k, state.values[k], state.sources[k], x0, state.free) for k in held]
    r = _round(f, state, sigma, opts)
    predicted = predict(f, state.values, r.g, opts.network_ms)
    var = fit_variability(f.time_ms - predicted, segment_mean(f, state.values), f.shape_id, f.shapes, blocks=blocks,
                          seed=opts.seed, bootstrap=min(opts.bootstrap, 200))
    keys, cov, gain = _covariance(f, state, r, var, opts, blocks)
    se_of = dict(zip(keys, np.sqrt(np.clip(np.diag(cov), 0, None)).tolist(), strict=True))
    if var.se is not None and not shown(var.sigma, se_of[VARIABILITY_KEY]):
        # the residuals do not show a per-segment spread: refit the costs without one
        note = not_shown(var.sigma, se_of[VARIABILITY_KEY])
        r = _round(f, state, 0.0, opts)
        predicted = predict(f, state.values, r.g, opts.network_ms)
        var = VariabilityFit(0.0, None, var.observed_iqr_ms, var.clock_only_iqr_ms, note)
        keys, cov, gain = _covariance(f, state, r, var, opts, blocks)
        se_of = dict(zip(keys, np.sqrt(np.clip(np.diag(cov), 0, None)).tolist(), strict=True))
    if "cluster.broker.overhead_ms" not in state.free and opts.overhead[1] is not None:
        se_of["cluster.broker.overhead_ms"] = opts.overhead[1]
    se_of.update({k: se for k, (_, se, _) in opts.known.items() if se is not None})
    for k in state.free:
        if state.values[k] == 0.0:
            state.sources[k] = at_bound_source(se_of.get(k))
            notes.append(f"{k}: {state.sources[k]}")
    notes += [f"{k}: {source}" for k, (_, _, source) in opts.known.items() if source.startswith(AT_BOUND)]
    params = tuple(Parameter(k, state.values[k], unit, state.sources[k], se_of.get(k))
                   for k, unit, _ in FIT_PARAMETERS)
    if gain > 0.9:
        notes.append("service.variability: the log barely tells the spread from the mean costs (they trade for "
                     "each other); their standard errors are lower bounds")
    if var.note:
        notes.append(f"service.variability: {var.note}")
    if var.se is not None:
        var = replace(var, se=se_of[VARIABILITY_KEY])
    quality = fit_quality(f.time_ms, predicted, f.kind)
    quality["entries"] = _entries_check(r, f, [FIT_KEYS.index(k) for k in state.free])
    return ServiceFit(params, tuple(keys), cov, var, quality, len(f), tuple(notes))


def _alternate(f: LogFeatures, state: _State, options: FitOptions, blocks: Sequence[np.ndarray]) -> float:
    """Fit the costs at ``sigma``, then ``sigma`` at those costs, until ``sigma`` settles; returns it."""
    sigma = 0.0
    for _ in range(options.max_rounds):
        r = _round(f, state, sigma, options)
        residuals = f.time_ms - predict(f, state.values, r.g, options.network_ms)
        fitted = fit_variability(residuals, segment_mean(f, state.values), f.shape_id, f.shapes, blocks=blocks,
                                 seed=options.seed, bootstrap=0).sigma
        settled = abs(fitted - sigma) < 0.002
        sigma = fitted
        if settled:
            break
    return sigma


def _covariance(f: LogFeatures, state: _State, r: _Round, var: VariabilityFit, options: FitOptions,
                blocks: Sequence[np.ndarray]) -> tuple[list[str], np.ndarray, float]:
    """The fitted keys (``sigma`` last when it has a standard error), their covariance, and the feedback
    gain between the costs and ``sigma``."""
    cols = [FIT_KEYS.index(k) for k in state.free]
    rng = np.random.default_rng([options.seed, 2])
    cov = block_bootstrap(r.x[:, cols], r.target, r.weights, blocks, options.bootstrap, rng)
    if var.se is None:
        return list(state.free), cov, 0.0
    slopes, gradient = _slopes(f, state, var.sigma, options), _sigma_gradient(f, state, r.g, var, options)
    return [*state.free, VARIABILITY_KEY], _joint(cov, slopes, gradient, var.se), float(gradient @ slopes)


def _slopes(f: LogFeatures, state: _State, sigma: float, options: FitOptions) -> np.ndarray:
    """How each fitted cost moves with ``sigma`` (a central difference of two weighted fits)."""
    step = min(0.02, sigma / 2)
    fits = []
    for s in (sigma + step, sigma - step):
        trial = _State(dict(state.values), dict(state.sources), list(state.free))
        _round(f, trial, s, options)
        fits.append(np.array([trial.values[k] for k in state.free]))
    out: np.ndarray = (fits[0] - fits[1]) / (2 * step)
    return out


def _sigma_gradient(f: LogFeatures, state: _State, g: np.ndarray, var: VariabilityFit,
                    options: FitOptions) -> np.ndarray:
    """How the fitted ``sigma`` moves with each fitted cost: -d(spread gap)/d(cost) / d(spread)/d(sigma)."""
    out = []
    for k in state.free:
        step = max(1e-9, 0.01 * abs(state.values[k])) if state.values[k] else 1e-6
        gaps = []
        for sign in (1.0, -1.0):
            values = {**state.values, k: state.values[k] + sign * step}
            residuals = f.time_ms - predict(f, values, g, options.network_ms)
            gaps.append(spread_gap(residuals, segment_mean(f, values), f.shape_id, f.shapes, var.sigma, options.seed))
        out.append(-(gaps[0] - gaps[1]) / (2 * step) / var.slope)
    return np.array(out)


def _joint(cov: np.ndarray, slopes: np.ndarray, gradient: np.ndarray, se: float) -> np.ndarray:
    """The joint covariance of the costs and ``sigma`` (``sigma`` last), from the two linked fits.

    The costs are fitted given ``sigma`` (``beta = B(sigma) + e``, ``e`` with the bootstrap covariance
    ``cov``, ``slopes`` = dB/dsigma) and ``sigma`` given the costs (``sigma = S(beta) + d``, ``d`` with
    variance ``se``^2, ``gradient`` = dS/dbeta). Solving the linearised pair: ``dsigma = k (s'e + d)`` and
    ``dbeta = (I + k b s') e + k b d`` with ``k = 1 / (1 - s'b)``, whose covariance this is.
    """
    b, s = slopes, gradient
    # a feedback gain s'b near 1 means costs and sigma can trade for each other almost freely; the
    # linearisation then breaks down, and the gain is capped (k <= 10) rather than let it diverge
    k = 1.0 / max(0.1, 1.0 - float(s @ b))
    a = np.eye(len(b)) + k * np.outer(b, s)
    v = se * se
    p = len(b)
    out = np.zeros((p + 1, p + 1))
    out[:p, :p] = a @ cov @ a.T + k * k * v * np.outer(b, b)
    cross = k * (a @ cov @ s) + k * k * v * b
    out[:p, p] = out[p, :p] = cross
    out[p, p] = k * k * (float(s @ cov @ s) + v)
    return out


def predict(f: LogFeatures, values: Mapping[str, float], g: np.ndarray, network_ms: float) -> np.ndarray:
    """Expected time of each query under ``values``, ms."""
    x, offset = design(f, g, network_ms)
    out: np.ndarray = x @ np.array([values[k] for k in FIT_KEYS]) + offset
    return out


def refit_overhead(fit: ServiceFit, value: float, se: float | None, where: str) -> ServiceFit:
    """``fit`` with a held broker overhead replaced (the per-request cost absorbs the difference)."""
    params = []
    key = "cluster.broker.overhead_ms"
    shift = value - fit.value(key)
    source = (f"estimated from {where}: every logged query reached servers, so the fit to timeMs could not tell "
              "it from service.per_request_ms, which carries the rest")
    for p in fit.parameters:
        if p.key == key:
            p = replace(p, value=value, se=se, source=source)
        elif p.key == "service.per_request_ms" and p.fitted:
            spread = None if p.se is None else float(np.hypot(p.se, se or 0.0))
            p = replace(p, value=max(0.0, p.value - shift), se=spread)
        params.append(p)
    notes = (*(n for n in fit.notes if not n.startswith(f"{key}:")), f"{key}: {source}")
    return replace(fit, parameters=tuple(params), notes=notes)
