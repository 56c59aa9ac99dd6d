"""Closed-form queueing results the model is validated against (``shared/reference/anchors.md`` §2).

Notation: ``lam`` arrival rate, ``mu`` service rate per server (same time unit), ``c`` servers,
``a = lam / mu`` offered load in Erlangs, ``rho = a / c``.

>>> round(erlang_c(4, 3.5), 4)
0.7379
>>> round(nelson_tantawi_response(2, 0.5, 1.0), 3)   # = Flatto-Hahn's exact value for K = 2
2.875
"""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np
from scipy import stats

__all__ = [
    "erlang_c",
    "exponential_mixture",
    "fanout_delay_probability",
    "flatto_hahn_response",
    "gc_single_server_delay_bounds",
    "harmonic",
    "md1_mean_wait",
    "mg1_mean_wait",
    "mm1_deadline_admitted_throughput",
    "mm1_deadline_rejection",
    "mm1_response_quantile",
    "mmc_mean_response",
    "mmc_mean_wait",
    "mmc_wait_tail",
    "nelson_tantawi_response",
]


def _check_stable(lam: float, mu: float, c: int = 1) -> None:
    if not 0 < lam < c * mu:
        raise ValueError(f"unstable or empty system: lam={lam}, c*mu={c * mu}")


def erlang_c(c: int, a: float) -> float:
    """Probability that an arrival waits in M/M/c with offered load ``a`` Erlangs (``a < c``)."""
    if not 0 < a < c:
        raise ValueError(f"need 0 < a < c, got a={a}, c={c}")
    # Erlang B by its stable recursion, then C = B / (1 - rho (1 - B)).
    b = 1.0
    for k in range(1, c + 1):
        b = a * b / (k + a * b)
    rho = a / c
    return b / (1.0 - rho * (1.0 - b))


def mmc_mean_wait(lam: float, mu: float, c: int) -> float:
    """Mean time in queue of M/M/c: C(c, a) / (c mu - lam)."""
    _check_stable(lam, mu, c)
    return erlang_c(c, lam / mu) / (c * mu - lam)


def mmc_mean_response(lam: float, mu: float, c: int) -> float:
    """Mean response time of M/M/c: mean wait plus 1 / mu."""
    return mmc_mean_wait(lam, mu, c) + 1.0 / mu


def mmc_wait_tail(lam: float, mu: float, c: int, t: float) -> float:
    """P(W_q > t) = C(c, a) exp(-(c mu - lam) t) for t >= 0."""
    _check_stable(lam, mu, c)
    return erlang_c(c, lam / mu) * math.exp(-(c * mu - lam) * t)


def mm1_response_quantile(lam: float, mu: float, p: float) -> float:
    """Quantile ``p`` of the M/M/1 sojourn time, which is Exp(mu - lam)."""
    _check_stable(lam, mu)
    return -math.log(1.0 - p) / (mu - lam)


def mg1_mean_wait(lam: float, mean_s: float, second_moment_s: float) -> float:
    """Pollaczek-Khinchine: E[Wq] = lam E[S^2] / (2 (1 - rho))."""
    rho = lam * mean_s
    if not 0 < rho < 1:
        raise ValueError(f"need 0 < rho < 1, got {rho}")
    return lam * second_moment_s / (2.0 * (1.0 - rho))


def exponential_mixture(rates: Sequence[float], means: Sequence[float]) -> tuple[float, float, float]:
    """Classes of Poisson arrivals (``rates``) with exponential service (``means``) sharing one queue: the
    superposed stream is Poisson at their total rate, and a request's service is class ``k``'s with
    probability ``rates[k] / total`` (a hyperexponential mixture). Returns (total rate, mean service, second
    moment of service): what Erlang C (equal means: the mixture is exponential again, so M/M/c is exact)
    or Pollaczek-Khinchine (one server: M/G/1 is exact for any mixture) take.

    >>> exponential_mixture([1.0, 3.0], [2.0, 2.0])
    (4.0, 2.0, 8.0)
    >>> exponential_mixture([1.0, 1.0], [1.0, 3.0])
    (2.0, 2.0, 10.0)
    """
    total = float(sum(rates))
    shares = [r / total for r in rates]
    mean = sum(p * m for p, m in zip(shares, means, strict=True))
    second = sum(p * 2.0 * m * m for p, m in zip(shares, means, strict=True))
    return total, mean, second


def md1_mean_wait(lam: float, service: float) -> float:
    """M/D/1 mean wait, half the M/M/1 value: rho / (2 mu (1 - rho))."""
    return mg1_mean_wait(lam, service, service**2)


def harmonic(k: int) -> float:
    """H_k = 1 + 1/2 + ... + 1/k."""
    return float(sum(1.0 / i for i in range(1, k + 1)))


def flatto_hahn_response(lam: float, mu: float) -> float:
    """Exact mean response of a 2-way fork-join of M/M/1 queues: (12 - rho) / 8 / (mu - lam)."""
    _check_stable(lam, mu)
    return (12.0 - lam / mu) / 8.0 / (mu - lam)


def nelson_tantawi_response(k: int, lam: float, mu: float) -> float:
    """Nelson-Tantawi approximation of the mean K-way fork-join response (2 <= K <= 32, error < 5%)."""
    _check_stable(lam, mu)
    rho = lam / mu
    ratio = harmonic(k) / harmonic(2)
    return (ratio + (1.0 - ratio) * 4.0 * rho / 11.0) * (1.5 - rho / 8.0) / (mu - lam)


def fanout_delay_probability(p: float, n: int) -> float:
    """P(at least one of n independent servers delays the query) = 1 - (1 - p)^n."""
    return 1.0 - (1.0 - p) ** n


def gc_single_server_delay_bounds(
    pause: float, mean_interval: float, service: float, threshold: float, lam: float
) -> tuple[float, float]:
    """Bounds on P(one server delays a query by more than ``threshold``) under periodic-ish GC.

    Model (the ``fixed`` collector): run periods Exp(``mean_interval``) alternate with pauses of fixed
    length ``pause`` (D); service is deterministic (S) on one core; queries arrive Poisson(``lam``).
    All arguments share one time unit; requires ``threshold`` < D.

    Lower bound, ignoring queueing: a query arriving inside a pause waits the residual pause, which is
    uniform on (0, D), so it is delayed by more than d with probability (D - d) / D given it arrived in a
    pause, and arrivals fall in a pause with probability D / (T + D). A query whose service is running
    when a pause starts is delayed by D > d; pauses start at rate 1 / (T + D), so that happens with
    probability S / (T + D). Total: (D - d + S) / (T + D).

    Upper bound: add the queue that builds during a pause. A query arriving u into the pause finds
    N ~ Poisson(lam u) queries ahead of it that are all released at the pause's end, so its delay is
    (D - u) + N S. Integrating P((D - u) + N S > d) over u in (0, D) replaces D - d in the lower bound.
    The backlog left after the pause delays later arrivals by at most N(D) S; the bound adds the
    probability mass of that window, E[N(D) S] / (T + D), to stay an upper bound.
    """
    d, big_d, s, t = threshold, pause, service, mean_interval
    if not 0 <= d < big_d:
        raise ValueError("threshold must be in [0, pause)")
    cycle = t + big_d
    lower = (big_d - d + s) / cycle
    us = np.linspace(0.0, big_d, 4001)
    probs = np.empty_like(us)
    for i, u in enumerate(us):
        residual = big_d - u
        if residual > d:
            probs[i] = 1.0
        else:  # need N S > d - residual, i.e. N > (d - residual) / S
            n_needed = math.floor((d - residual) / s)
            probs[i] = float(stats.poisson.sf(n_needed, lam * u))
    in_pause = float(np.trapezoid(probs, us))
    backlog = lam * big_d * s
    upper = (in_pause + s + backlog) / cycle
    return lower, upper


def mm1_deadline_rejection(lam: float, mu: float, timeout: float) -> float:
    """Share of arrivals rejected in M/M/1 when a query whose wait reaches ``timeout`` is turned away.

    This is a Pinot server with one runner thread and one segment per query: when a query reaches the
    runner after waiting at least its timeout it is answered with 240 and takes no time; admitted
    queries run to completion. A rejected query adds no work, so the work a new arrival finds ahead of
    it, ``V``, is that of an M/M/1 queue that admits an arrival only while ``V < timeout``; the arrival
    is rejected exactly when ``V >= timeout``, and by PASTA the rejected share is ``P(V >= timeout)``.

    Derivation (level crossing on ``V``, which falls at rate 1 and jumps by an Exp(mu) service at each
    admitted arrival): with ``P0 = P(V = 0)`` the density is ``f(v) = lam P0 e^-(mu-lam) v`` below the
    timeout and ``lam P0 e^(lam T) e^-mu v`` above it. Normalising and integrating the upper part, with
    ``rho = lam / mu`` and ``E = e^-(mu-lam) T``::

        P(reject) = (1 - rho) rho E / (1 - rho^2 E)

    valid for every ``rho`` (overload included; at ``rho = 1`` the limit is ``1 / (2 + lam T)``). This
    is Barrer's (1957) loss probability for M/M/1 with deterministic impatience.

    >>> round(mm1_deadline_rejection(1.0, 2.0, 0.0), 6)   # no patience: rejected whenever busy
    0.333333
    >>> round(mm1_deadline_rejection(2.0, 1.0, 50.0), 4)  # twice capacity: half the arrivals are excess
    0.5
    """
    if lam <= 0 or mu <= 0 or timeout < 0:
        raise ValueError(f"need lam > 0, mu > 0, timeout >= 0; got {lam}, {mu}, {timeout}")
    rho = lam / mu
    if math.isclose(rho, 1.0, rel_tol=1e-12):
        return 1.0 / (2.0 + lam * timeout)
    if rho < 1.0:
        e = math.exp(-(mu - lam) * timeout)
        return (1.0 - rho) * rho * e / (1.0 - rho * rho * e)
    inverse = math.exp((mu - lam) * timeout)  # 1 / E, in (0, 1]: stable however long the overload
    return (1.0 - rho) * rho / (inverse - rho * rho)


def mm1_deadline_admitted_throughput(lam: float, mu: float, timeout: float) -> float:
    """Rate of queries answered (admitted) in :func:`mm1_deadline_rejection`'s queue: lam (1 - P(reject))."""
    return lam * (1.0 - mm1_deadline_rejection(lam, mu, timeout))
