"""Live routing in the compiled engine: every query routed when it arrives, from its broker's state.

With adaptive selection (``pinot.broker.adaptive.server.selector.type``) a query's route depends on the
responses that reached its broker before it arrived, so the requests a server will receive are not known
from the plan. This runs the servers and the brokers together, in time order, exactly as the SimPy engine
orders them: before routing a query that arrives at ``t``, every server is advanced over its events
before ``t`` (:func:`~workbench.sim.fast.server_kernel.advance_server`, the same resumable state machine
the plan-driven path runs in one go), every response those events sent is queued at its broker for its
arrival time, and the broker applies, in time order, every response and every closed gather (a deadline,
a failed channel, the last response) due before ``t`` to its stats. Then the query is routed: each
segment's candidates scored (:func:`~workbench.sim.decisions.hybrid_score` and the moving averages of
:mod:`workbench.sim.decisions`, the very functions the SimPy brokers' stats call), the first best
taken, or a random candidate while one of them has no stats yet (``balanced``), or every candidate of the
query ranked once, ties in a random order, and each segment given its best-ranked server (``replicaGroup``,
and ``strictReplicaGroup``; with ``enable.strict.replica.group`` the whole replica group whose worst server
ranks best). Nothing is approximated: a server's events before ``t`` do not depend on requests that reach
it at ``t`` or later, and a response sent before ``t`` reaches the broker no earlier than it was sent.

Random draws come from the same streams in the same order as the SimPy engine's: network delays (and a
request's own delay) are handed out in blocks of :data:`~workbench.sim.streams.Buffered`'s size; the
random picks of servers without stats (the first queries of a run) are drawn from the routing stream by
Python: the kernel stops before a query that needs them, says how many and over how many candidates,
and resumes once they are drawn; a ranking selector's shuffles (one permutation per query, its size fixed
by the query's candidates, which the crash schedule decides in advance) are drawn before the run, or, with
a failure detector (whose exclusions change the candidates), when the kernel asks.

The broker's failure detector (``pinot.broker.failure.detector.type: CONNECTION``) also makes routing live:
a gather closed by a failed channel marks the server unhealthy at its broker, which excludes it from its
routing until a retry (``_RETRY`` events in the broker's queue, Pinot's exponential back-off) finds it up.
Routing without adaptive feedback is then Pinot's selector run in Python once per routing state (the
servers down in a crash epoch, those the broker excludes), plan and request-id residue (:class:`_Templates`),
as the kernel meets them.

Inside :func:`~workbench.sim.fast.engine.coverage`: every selector, adaptive selection and the failure
detector, alone or together, without the segment cache. The records then come from the same gather and
reduce as the plan-driven path (:func:`~workbench.sim.fast.broker_kernel.gather_and_reduce`), each query
being its own routing template.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from workbench.distributions import Deterministic
from workbench.pinot.routing.adaptive import AdaptiveConfig, AdaptiveSelectorType
from workbench.pinot.routing.hashorder import hash_set_order
from workbench.pinot.routing.options import parse_routing_options
from workbench.pinot.routing.selectors import consults_adaptive
from workbench.scenario import Scenario
from workbench.sim.decisions import ema_decay, ema_feed, hybrid_score, slow_scale
from workbench.sim.fast.jit import helper, kernel
from workbench.sim.fast.pauses import HINTS, release
from workbench.sim.fast.plan_kernels import offsets
from workbench.sim.fast.server_kernel import (
    F_NEXT,
    I_TASKS,
    advance_server,
    finish_server,
    heap_pop,
    heap_push,
    server_state,
    set_request,
)
from workbench.sim.fast.server_settings import ServerSettings
from workbench.sim.layout import Layout
from workbench.sim.plan import Plan, delay_row_draws
from workbench.sim.planner import result_rows
from workbench.sim.router import Router, own_routing_options
from workbench.sim.routes import Routes
from workbench.sim.server import ExecutionModel
from workbench.sim.streams import Streams, buffered

__all__ = ["LiveRoutes", "ranks_candidates", "route_live"]

_INF = math.inf
#: The scores (``AdaptiveSelectorType``), as the kernel numbers them.
_SCORE = {AdaptiveSelectorType.NUM_INFLIGHT_REQ: 0, AdaptiveSelectorType.LATENCY: 1, AdaptiveSelectorType.HYBRID: 2}
#: What the kernel returns: all queries routed, or stopped before a query that needs random draws, a broker's
#: routing state looked up, or a route of a selector without adaptive feedback (:class:`_Templates`).
_DONE, _NEED_DRAWS, _NEED_STATE, _NEED_TEMPLATE, _NEED_SHUFFLE = 0, 1, 2, 3, 4
#: Broker events: a response (or failed channel) reaching the broker, a query's deadline, a detector's retry.
_RESPONSE, _DEADLINE, _RETRY = 0, 1, 2


@dataclass(frozen=True)
class _Cases:
    """How each query may be routed: per (routing state, plan) a *case*, the query's segments in the broker's
    listing order that have candidates: each one's position in the plan, its layout index and its candidate
    set (``cset``, CSR into ``cset_server`` and ``cset_online``: the candidates the selector chooses among,
    after ``orderedPreferredPools``), plus the count of unavailable segments."""

    epoch_times: np.ndarray
    case_of: np.ndarray  # [routing state, plan] -> case
    case_offsets: np.ndarray
    entry_position: np.ndarray
    entry_segment: np.ndarray
    entry_cset: np.ndarray
    case_unavailable: np.ndarray
    cset_offsets: np.ndarray
    cset_server: np.ndarray
    cset_online: np.ndarray
    #: Per case, the servers a ranking selector ranks (each candidate once, in order of first appearance) and
    #: the rank of each one's pool in ``orderedPreferredPools`` (CSR by case; only for :data:`_RANK`).
    pool_offsets: np.ndarray
    pool_server: np.ndarray
    pool_rank: np.ndarray
    #: Per case, its replica groups in increasing id (CSR by case), and each group's members (CSR by group):
    #: the entry (index within the case) and the index of its candidate in that group (``group_members``).
    group_offsets: np.ndarray
    member_offsets: np.ndarray
    member_entry: np.ndarray
    member_cand: np.ndarray


class _CaseTable:
    """Every (routing state, plan) case, from Pinot's selector's candidates in that state: the servers down in
    a crash epoch (the SimPy engine's brokers hear of each crash when it happens), and those a broker's failure
    detector excludes (states the kernel meets and asks for). ``rank``: the selector ranks every candidate of
    the query (replica groups), so a candidate set is a segment's whole candidates, preferred pools being
    applied to the ranking; else the selector picks per segment within the first preferred pool."""

    def __init__(self, sc: Scenario, layout: Layout, plan: Plan, rank: bool) -> None:
        self.layout, self.plan, self.rank = layout, plan, rank
        events = sorted(((t, s, up) for s, c in enumerate(plan.crashes) for start, end in c.intervals()
                         for t, up in ((start, False), (end, True))), key=lambda e: (e[0], e[1]))
        self.epoch_times = np.array([e[0] for e in events], dtype=float)
        down: set[int] = set()
        self.epoch_down = [frozenset(down)]
        for _, server, up in events:
            (down.discard if up else down.add)(server)
            self.epoch_down.append(frozenset(down))
        self.router = Router(layout, sc.table, sc.workload.query_options, broker_config=sc.cluster.broker.config)
        self._down: frozenset[int] = frozenset()
        self._excluded: frozenset[int] = frozenset()
        self.server_index = {name: i for i, name in enumerate(layout.servers)}
        self.seg_index = {name: i for i, name in enumerate(layout.segments)}
        self.csets: dict[tuple[tuple[int, bool], ...], int] = {}
        self.cases: list[tuple[list[int], list[int], list[int], int, list[tuple[int, int]],
                               list[list[tuple[int, int]]]]] = []
        self._case_key: dict[tuple[int, int, tuple[int, ...]], int] = {}
        self._states: dict[tuple[frozenset[int], frozenset[int]], int] = {}
        self._rows: list[list[int]] = []
        self._arrays: _Cases | None = None
        #: Each crash epoch's state (no server excluded by a detector).
        self.epoch_state = np.array([self.state(e, ()) for e in range(len(self.epoch_down))], dtype=np.int64)

    def state(self, epoch: int, excluded: Sequence[int]) -> int:
        """The routing state of a broker in ``epoch`` whose detector excludes ``excluded`` (its cases made once)."""
        key = (self.epoch_down[epoch], frozenset(excluded))
        if key not in self._states:
            self._states[key] = len(self._rows)
            self._rows.append(self._cases_of(*key))
            self._arrays = None
        return self._states[key]

    def _cases_of(self, down: frozenset[int], excluded: frozenset[int]) -> list[int]:
        router, layout, plan = self.router, self.layout, self.plan
        for server in sorted(self._down - down):
            router.set_server_health(server, True)
        for server in sorted(down - self._down):
            router.set_server_health(server, False)
        for server in sorted(self._excluded - excluded):
            router.set_server_excluded(server, False)
        for server in sorted(excluded - self._excluded):
            router.set_server_excluded(server, True)
        self._down, self._excluded = down, excluded
        state, rank, server_index, csets = len(self._rows), self.rank, self.server_index, self.csets
        states = router.selector.segment_states
        lists: dict[tuple[Any, ...], int] = {}  # this state's routing lists, by segment list and preferred pools
        listed_as: list[tuple[list[int], list[int], int, list[tuple[int, int]], list[list[tuple[int, int]]]]] = []
        row = []
        for p, query in enumerate(plan.plans):
            preferred = parse_routing_options(router.options_for(own_routing_options(query.query))
                                              ).ordered_preferred_pools
            key = (query.segments, preferred)
            if key not in lists:
                lists[key] = len(listed_as)
                listed = hash_set_order(layout.segments if query.names is None else query.names,
                                        len(layout.segments))
                segments: list[int] = []
                chosen: list[int] = []
                pool: dict[int, int] = {}  # a ranking selector's servers, first appearance first -> pool rank
                groups: dict[int, list[tuple[int, int]]] = {}  # replica group -> (entry, candidate index)
                for name in listed:
                    cand = states.candidates.get(name)
                    if cand is None:
                        continue
                    replica_id = {srv: i for i, srv in enumerate(sorted(layout.ideal_state[name]))}
                    for i, srv in enumerate(cand.servers):
                        groups.setdefault(replica_id[srv], []).append((len(segments), i))
                    for name_, pool_id in zip(cand.servers, cand.pools, strict=True):
                        pool.setdefault(server_index[name_],
                                        preferred.index(pool_id) if pool_id in preferred else len(preferred))
                    keep = list(range(len(cand.servers)))
                    if preferred and not rank:  # PriorityPoolInstanceSelector: the first preferred pool with
                        ranks = [preferred.index(x) if x in preferred else len(preferred) for x in cand.pools]
                        keep = [i for i in keep if ranks[i] == min(ranks)]
                    cset = tuple((server_index[cand.servers[i]], cand.online is None or bool(cand.online[i]))
                                 for i in keep)
                    segments.append(self.seg_index[name])
                    chosen.append(csets.setdefault(cset, len(csets)))
                listed_as.append((segments, chosen, sum(1 for name in listed if name in states.unavailable),
                                  list(pool.items()), [groups[g] for g in sorted(groups)]))
            which = lists[key]
            segments, chosen, unavailable, pools, members = listed_as[which]
            plan_segments = plan.plan_segment[plan.plan_offsets[p]:plan.plan_offsets[p + 1]].tolist()
            position = {seg: i for i, seg in enumerate(plan_segments)}
            positions = tuple(position[seg] for seg in segments)
            ck = (state, which, positions)
            if ck not in self._case_key:
                self._case_key[ck] = len(self.cases)
                self.cases.append((segments, chosen, list(positions), unavailable, pools, members))
            row.append(self._case_key[ck])
        return row

    def arrays(self) -> _Cases:
        """The cases as flat arrays for the kernel (made again after a new state)."""
        if self._arrays is None:
            cases = self.cases
            sizes = np.array([len(c[0]) for c in cases], dtype=np.int64)
            cset_list = sorted(self.csets, key=self.csets.__getitem__)
            self._arrays = _Cases(
                self.epoch_times, np.array(self._rows, dtype=np.int64).reshape(len(self._rows), len(self.plan.plans)),
                offsets(sizes),
                np.array([x for c in cases for x in c[2]], dtype=np.int64),
                np.array([x for c in cases for x in c[0]], dtype=np.int64),
                np.array([x for c in cases for x in c[1]], dtype=np.int64),
                np.array([c[3] for c in cases], dtype=np.int32),
                offsets(np.array([len(c) for c in cset_list], dtype=np.int64)),
                np.array([s for c in cset_list for s, _ in c], dtype=np.int64),
                np.array([on for c in cset_list for _, on in c], dtype=np.bool_),
                offsets(np.array([len(c[4]) for c in cases], dtype=np.int64)),
                np.array([s for c in cases for s, _ in c[4]], dtype=np.int64),
                np.array([r for c in cases for _, r in c[4]], dtype=np.int64),
                offsets(np.array([len(c[5]) for c in cases], dtype=np.int64)),
                offsets(np.array([len(g) for c in cases for g in c[5]], dtype=np.int64)),
                np.array([e for c in cases for g in c[5] for e, _ in g], dtype=np.int64),
                np.array([i for c in cases for g in c[5] for _, i in g], dtype=np.int64))
        return self._arrays


class _Templates:
    """Routes of a selector without adaptive feedback (with a failure detector, the plan holds none): per
    routing state (the servers down in a crash epoch, and those the broker's detector excludes), plan and
    request id residue, Pinot's selector run once, as the kernel meets them (it stops and asks)."""

    def __init__(self, sc: Scenario, layout: Layout, plan: Plan, cases: _Cases) -> None:
        self.layout, self.plan = layout, plan
        self.router = Router(layout, sc.table, sc.workload.query_options, broker_config=sc.cluster.broker.config)
        self.period = self.router.period
        events = sorted(((t, s, up) for s, c in enumerate(plan.crashes) for start, end in c.intervals()
                         for t, up in ((start, False), (end, True))), key=lambda e: (e[0], e[1]))
        down: set[int] = set()
        self.epoch_down = [frozenset(down)]
        for _, server, up in events:
            (down.discard if up else down.add)(server)
            self.epoch_down.append(frozenset(down))
        assert len(self.epoch_down) == len(cases.epoch_times) + 1
        self._states: dict[tuple[frozenset[int], frozenset[int]], int] = {}
        self._keys: list[tuple[frozenset[int], frozenset[int]]] = []
        self._down: frozenset[int] = frozenset()
        self._excluded: frozenset[int] = frozenset()
        self.template_of = np.full((4, max(1, len(plan.plans) * self.period)), -1, np.int64)
        self._offsets: list[int] = [0]
        self._position: list[int] = []
        self._segment: list[int] = []
        self._server: list[int] = []
        self._unavailable: list[int] = []
        self._arrays: tuple[np.ndarray, ...] | None = None

    def state(self, epoch: int, excluded: Sequence[int]) -> int:
        """The routing state of a broker in ``epoch`` whose detector excludes ``excluded``."""
        key = (self.epoch_down[epoch], frozenset(excluded))
        if key not in self._states:
            self._states[key] = len(self._keys)
            self._keys.append(key)
            if len(self._keys) > len(self.template_of):
                grown = np.full((2 * len(self.template_of), self.template_of.shape[1]), -1, np.int64)
                grown[:len(self.template_of)] = self.template_of
                self.template_of = grown
                self._arrays = None
        return self._states[key]

    def route(self, state: int, p: int, residue: int) -> None:
        """Route plan ``p``'s query with request id ``residue`` in routing state ``state`` (a template)."""
        down, excluded = self._keys[state]
        for server in sorted(self._down - down):
            self.router.set_server_health(server, True)
        for server in sorted(down - self._down):
            self.router.set_server_health(server, False)
        for server in sorted(self._excluded - excluded):
            self.router.set_server_excluded(server, False)
        for server in sorted(excluded - self._excluded):
            self.router.set_server_excluded(server, True)
        self._down, self._excluded = down, excluded
        query = self.plan.plans[p]
        plan_segments = self.plan.plan_segment[self.plan.plan_offsets[p]:self.plan.plan_offsets[p + 1]].tolist()
        position = {seg: i for i, seg in enumerate(plan_segments)}
        route, unavailable = self.router.route(residue, query.names, query.key,
                                               self.router.options_for(own_routing_options(query.query)))
        for server, segments in route:
            for seg in segments:
                self._position.append(position[seg])
                self._segment.append(seg)
                self._server.append(server)
        self._offsets.append(len(self._server))
        self._unavailable.append(unavailable)
        self.template_of[state, p * self.period + residue] = len(self._unavailable) - 1
        self._arrays = None

    def arrays(self) -> tuple[np.ndarray, ...]:
        """The templates for the kernel: which template each (state, plan x period + residue) is (-1: not
        yet routed), their entries (CSR: plan position, layout segment, server) and unavailable counts."""
        if self._arrays is None:
            self._arrays = (self.template_of, np.array(self._offsets, np.int64), np.array(self._position, np.int64),
                            np.array(self._segment, np.int64), np.array(self._server, np.int64),
                            np.array(self._unavailable, np.int32))
        return self._arrays


def ranks_candidates(sc: Scenario) -> bool:
    """Whether the table's selector routes adaptively by ranking every candidate of a query (replica groups,
    and strict replica groups without ``enable.strict.replica.group``), rather than picking per segment."""
    kind = sc.table.instance_selector_type
    return kind == "replicaGroup" or (kind == "strictReplicaGroup"
                                      and not sc.cluster.broker.adaptive.enable_strict_replica_group)


@dataclass(frozen=True)
class LiveRoutes:
    """What live routing decided and what the servers answered, per request (in routing order): the routes
    as templates (one per query), the network delays (out, back) and every response."""

    routes: Routes
    query_requests: np.ndarray
    delays: np.ndarray
    resp_at: np.ndarray
    code: np.ndarray
    responded: np.ndarray
    paused: np.ndarray
    wait: np.ndarray
    meters: np.ndarray
    busy: np.ndarray


def route_live(sc: Scenario, layout: Layout, plan: Plan, streams: Streams, horizon_ms: float,
               gc_pauses: tuple[np.ndarray, ...], stops: tuple[np.ndarray, ...],
               crashes: tuple[np.ndarray, ...], slow: tuple[np.ndarray, ...]) -> LiveRoutes:
    """Route every query of ``plan`` live and run the servers with it (see the module docstring).

    ``gc_pauses``: offsets, starts, ends of the servers' GC pauses; ``stops``: offsets, starts, ends, run time
    at each start, paused before it, totals (pauses joined with wedges); ``crashes``: offsets, starts, ends;
    ``slow``: offsets, starts, ends, factors of the slow windows and their ``jvm`` factors (a request's own
    delay)."""
    spec = sc.cluster
    config: AdaptiveConfig = spec.broker.adaptive
    # Pinot's multiStageReplicaGroup selector never consults adaptive selection, so its routes stay templates
    adaptive = spec.broker.adaptive_selection and consults_adaptive(sc.table.instance_selector_type)
    whole_group = adaptive and (sc.table.instance_selector_type == "strictReplicaGroup"
                                and sc.cluster.broker.adaptive.enable_strict_replica_group)
    rank = adaptive and (ranks_candidates(sc) or whole_group)
    table = _CaseTable(sc, layout, plan, rank)  # without adaptive selection: the bounds below (routes come from
    cases = table.arrays()
    templates = _Templates(sc, layout, plan, cases)  # Pinot's selector per routing state, as the kernel asks)
    nq, servers = plan.num_queries, layout.num_servers
    epoch = np.searchsorted(cases.epoch_times, plan.arrival_ms, side="right").astype(np.int64)
    # each query's case with no server excluded (with a failure detector, the kernel asks for its broker's)
    case = cases.case_of[table.epoch_state[epoch], plan.plan_index] if nq else np.empty(0, dtype=np.int64)
    detector = spec.broker.failure_detector
    shuffle_live = rank and detector.enabled  # the shuffle's size then depends on what the detector excludes
    rng = streams.routing
    # a ranking selector shuffles every query's candidates before sorting them by score (ties in random
    # order): one permutation per query, of a size its case fixes, drawn in query order as the SimPy brokers do
    pool_counts = np.diff(cases.pool_offsets)[case] if rank and not shuffle_live else np.zeros(nq, dtype=np.int64)
    perm_offsets = offsets(pool_counts)
    perms = (np.concatenate([rng.permutation(int(n)) for n in pool_counts.tolist()]).astype(np.int64)
             if rank and not shuffle_live and nq else np.empty(0, dtype=np.int64))
    unavailable = np.zeros(nq, dtype=np.int32)  # per query: its case's, plus a whole group's misses
    sizes = np.diff(cases.case_offsets)[case]
    # bounds: requests (each query asks each server at most once), per server its rows and tasks
    in_case = np.zeros((len(cases.case_offsets) - 1, servers), dtype=np.int64)
    for c in range(len(in_case)):
        for e in range(cases.case_offsets[c], cases.case_offsets[c + 1]):
            cs = cases.entry_cset[e]
            in_case[c, cases.cset_server[cases.cset_offsets[cs]:cases.cset_offsets[cs + 1]]] += 1
    of_case = np.bincount(case, minlength=len(in_case)).astype(np.int64)
    rows_max = int((of_case @ (in_case > 0)).max()) if nq else 0
    tasks_max = int((of_case @ (in_case + (in_case > 0))).max()) if nq else 0
    request_max = int(np.minimum(sizes, servers).sum())
    latency = spec.network.latency_ms
    delays_in = buffered(lambda n: latency.sample(streams.network, n), 2 * request_max)
    own, side = spec.network.request_delay_ms, spec.network.request_delays
    if len(side) > 1:  # one row of every kind's per request, its kind's taken (as model.ClusterModel reads them)
        draw, block = delay_row_draws(side, streams.request_delay)
        own_delay = buffered(draw, len(side) * request_max, block=block).reshape(-1, len(side))
    else:
        own_delay = (np.empty((0, 1)) if isinstance(own, Deterministic) and own.value == 0
                     else np.ascontiguousarray(buffered(lambda n: own.sample(streams.request_delay, n),
                                                        request_max)[:, None]))
    # the plan's per-plan row rule (result_rows: one row for an aggregation, else docs up to a cap)
    aggregate = np.empty(len(plan.plans), dtype=np.int64)
    cap = np.empty(len(plan.plans), dtype=np.int64)
    for p, query in enumerate(plan.plans):
        none, many = result_rows(query.query, 0.0), result_rows(query.query, float(2**62))
        aggregate[p], cap[p] = (none if none == many else -1), many
    settings = ServerSettings.of(spec.server.query,
                                 ExecutionModel(spec.server.execution) is ExecutionModel.FCFS_THREADS,
                                 bool((plan.off_path_ms > 0).any()))
    template = server_state(rows_max, tasks_max, settings)
    state = tuple(np.ascontiguousarray(np.repeat(a[None], servers, axis=0)) for a in template)
    width = max(rows_max, tasks_max) + 1
    total_segments = int(plan.query_segments[-1])
    work = (np.empty((servers, rows_max + 1, 8)), np.empty((servers, rows_max + 1, 10), np.int64),
            np.empty((total_segments + request_max + 1, 3), np.int64), np.empty(total_segments + request_max + 1),
            np.empty((servers, 3, width), np.int64), np.empty(total_segments + 1),
            np.empty(total_segments + 1, np.int64))
    outs = (np.full((servers, rows_max + 1), _INF), np.zeros((servers, rows_max + 1), np.int16),
            np.zeros((servers, rows_max + 1), np.bool_), np.zeros((servers, rows_max + 1), np.bool_),
            np.zeros((servers, rows_max + 1)))
    a = config
    stats_config = np.array([a.ewma_alpha, a.autodecay_window_ms, a.warmup_duration_ms, a.avg_initialization_val,
                             float(a.hybrid_score_exponent), float(a.hybrid_score_queue_size_floor),
                             float(_SCORE.get(a.type, -1)), float(rank), float(whole_group), float(not adaptive),
                             float(detector.enabled), float(detector.retry_initial_delay_ms),
                             float(detector.retry_delay_factor), float(detector.max_retries),
                             float(templates.period), float(shuffle_live)])
    brokers = spec.brokers
    broker_stats = (np.zeros((brokers, servers), np.bool_), np.zeros((brokers, servers), np.int64),
                    np.zeros((brokers, 2, 4, servers)), np.zeros(brokers))
    requests = (np.zeros(nq + 1, np.int64), np.empty(request_max, np.int64), np.empty(request_max, np.int64),
                np.empty(request_max, np.int64), np.empty(request_max, np.int64), np.empty(request_max, np.int64),
                np.empty(request_max), np.empty(request_max), np.empty(2 * request_max),
                np.empty(request_max), np.empty(request_max, np.int64), np.empty(request_max))
    # broker events and server deliveries: heaps; per server the rows not yet answered; per query the gather
    queues = (np.empty(nq + request_max + 1), np.empty(nq + request_max + 1, np.int64),
              np.empty(nq + request_max + 1, np.int64), np.empty(nq + request_max + 1, np.int64),
              np.empty((servers, rows_max + 1)), np.empty((servers, rows_max + 1), np.int64),
              np.empty((servers, rows_max + 1), np.int64), np.zeros((servers, HINTS), np.int64))
    gathers = (np.zeros(nq, np.bool_), np.zeros(nq, np.int64), np.zeros(request_max, np.bool_))
    counters = np.zeros(16, np.int64)
    per_server = np.zeros((servers, 3), np.int64)
    most = max(1, servers, int(sizes.max()) if nq else 1)  # draws: random picks, or a shuffle of the servers
    draws, bounds = np.empty(most, np.int64), np.empty(most, np.int64)
    queries = (plan.arrival_ms, plan.broker.astype(np.int64), plan.timeout_ms, plan.group_by, plan.secondary,
               plan.execution_threads.astype(np.int64), plan.plan_index.astype(np.int64), plan.query_segments,
               plan.work,
               plan.plan_offsets, plan.plan_docs, aggregate, cap, case, plan.delay_column.astype(np.int64))
    def routing_of(cases: _Cases) -> tuple[np.ndarray, ...]:
        return (cases.case_offsets, cases.entry_position, cases.entry_segment, cases.entry_cset, cases.cset_offsets,
                cases.cset_server, cases.cset_online, cases.pool_offsets, cases.pool_server, cases.pool_rank,
                perm_offsets, perms, cases.group_offsets, cases.member_offsets, cases.member_entry,
                cases.member_cand, cases.case_unavailable, unavailable, epoch, cases.case_of)

    routing = routing_of(cases)
    # the failure detector's state per broker and server: unhealthy (excluded), delay, retries, generation; per
    # broker its routing state (-1: to be looked up) and the epoch it was looked up for
    detectors = (np.zeros((brokers, servers), np.bool_), np.zeros((brokers, servers)),
                 np.zeros((brokers, servers), np.int64), np.zeros((brokers, servers), np.int64),
                 np.full(brokers, -1, np.int64), np.full(brokers, -1, np.int64))
    while True:
        status = _run(queries, routing, templates.arrays(), stats_config, broker_stats, detectors, delays_in,
                      own_delay, plan.cpu_scale, slow, plan.prepare_ms, plan.merge_ms_per_segment,
                      plan.off_path_ms, stops, gc_pauses, crashes, settings, horizon_ms, state, work, outs, requests,
                      queues, gathers, per_server, counters, draws, bounds)
        if status == _DONE:
            break
        if status == _NEED_DRAWS:
            for k in range(int(counters[8])):  # the random picks of the query the kernel stopped before
                draws[k] = int(rng.integers(int(bounds[k])))
            counters[9] = counters[8]
        elif status == _NEED_STATE:  # a broker's routing state changed (a crash epoch, its detector)
            b = int(counters[10])
            excluded = np.flatnonzero(detectors[0][b]).tolist()
            if adaptive:
                detectors[4][b] = table.state(int(counters[11]), excluded)
                routing = routing_of(table.arrays())
            else:
                detectors[4][b] = templates.state(int(counters[11]), excluded)
            detectors[5][b] = counters[11]
        elif status == _NEED_SHUFFLE:  # a ranking selector's shuffle, of a size the detector's state fixes
            n = int(counters[8])
            draws[:n] = rng.permutation(n)
            counters[15] = 1
        else:  # _NEED_TEMPLATE: Pinot's selector routes a (state, plan, request id residue) once
            templates.route(int(counters[12]), int(counters[13]), int(counters[14]))
    return _collect(plan, unavailable, counters, requests, outs, state, work)


def _collect(plan: Plan, unavailable: np.ndarray, counters: np.ndarray, requests: tuple[np.ndarray, ...],
             outs: tuple[np.ndarray, ...], state: tuple[np.ndarray, ...], work: tuple[np.ndarray, ...]) -> LiveRoutes:
    """The routed requests as one template per query, and every request's response, by request."""
    n = int(counters[0])
    query_requests, server, row, nseg, seg_start, rows = (requests[0], requests[1][:n], requests[2][:n],
                                                          requests[3][:n], requests[4][:n], requests[10][:n])
    docs, delays, positions = requests[7][:n], requests[8][:2 * n], work[6]
    seg_offsets = offsets(nseg)
    # each request's segment positions, in its order: the kernel lays requests' segments out one after the
    # other, in routing order, so the requests' CSR is the layout itself
    assert n == 0 or (seg_start[0] == 0 and np.array_equal(seg_start, seg_offsets[:-1]))
    position = positions[:int(seg_offsets[-1])].astype(np.int32)
    nq = plan.num_queries
    routes = Routes(np.arange(nq, dtype=np.int32), unavailable,
                    plan.plan_index.astype(np.int64), query_requests.copy(), server.astype(np.int32), seg_offsets,
                    position, rows.astype(np.int64), docs)
    at, code, responded, paused, wait = (o[server, row] for o in outs)
    ist, fs = state[13], state[14]
    return LiveRoutes(routes, query_requests.copy(), np.ascontiguousarray(delays), at, code, responded, paused, wait,
                      state[17], fs[:, 2].copy() if ist.shape[0] else np.zeros(0))


# stats arrays: ema[b, which, field, server]; which 0: in-flight EMA, 1: latency EMA;
# field 0: average, 1: last update (NaN: none), 2: next tick, 3: created
_AVG, _LAST, _TICK, _CREATED = 0, 1, 2, 3


@helper
def _ema_average(ema: np.ndarray, b: int, which: int, s: int, cfg: np.ndarray, now: float) -> float:
    """``ExponentialMovingAverage.average(now)``: the due decay applied (and kept)."""
    avg, last, tick = ema_decay(ema[b, which, _AVG, s], ema[b, which, _LAST, s], int(ema[b, which, _TICK, s]),
                                ema[b, which, _CREATED, s], cfg[1], cfg[2], cfg[0], now)
    ema[b, which, _AVG, s], ema[b, which, _LAST, s], ema[b, which, _TICK, s] = avg, last, tick
    return avg


@helper
def _ema_compute(ema: np.ndarray, b: int, which: int, s: int, cfg: np.ndarray, value: float, now: float) -> None:
    """``ExponentialMovingAverage.compute(value, now)``."""
    _ema_average(ema, b, which, s, cfg, now)
    ema[b, which, _LAST, s] = now
    ema[b, which, _AVG, s] = ema_feed(ema[b, which, _AVG, s], ema[b, which, _CREATED, s], cfg[2], cfg[0], value, now)


@helper
def _entry(stats: tuple[np.ndarray, ...], b: int, s: int, cfg: np.ndarray) -> None:
    """``ServerRoutingStatsManager._entry``: a server's stats, created at the manager's clock on first use."""
    has, _, ema, now = stats
    if not has[b, s]:
        has[b, s] = True
        for which in range(2):
            ema[b, which, _AVG, s], ema[b, which, _LAST, s] = cfg[3], math.nan
            ema[b, which, _TICK, s], ema[b, which, _CREATED, s] = 0.0, now[b]


@helper
def _submitted(stats: tuple[np.ndarray, ...], b: int, s: int, cfg: np.ndarray, now: float) -> None:
    """``record_submission``: in flight + 1, the in-flight EMA fed the new count."""
    stats[3][b] = now
    _entry(stats, b, s, cfg)
    stats[1][b, s] += 1
    _ema_compute(stats[2], b, 0, s, cfg, float(stats[1][b, s]), now)


@helper
def _answered(stats: tuple[np.ndarray, ...], b: int, s: int, cfg: np.ndarray, latency: float, now: float) -> None:
    """``record_response``: in flight - 1, the latency EMA fed the latency."""
    stats[3][b] = now
    _entry(stats, b, s, cfg)
    stats[1][b, s] -= 1
    if latency >= 0:
        _ema_compute(stats[2], b, 1, s, cfg, latency, now)


@helper
def _score(stats: tuple[np.ndarray, ...], b: int, s: int, cfg: np.ndarray) -> float:
    """The server's score at the manager's clock (lower is better; it has stats)."""
    kind = int(cfg[6])
    if kind == 0:
        return float(stats[1][b, s])
    now = stats[3][b]
    if kind == 1:
        return _ema_average(stats[2], b, 1, s, cfg, now)
    in_flight_ema = _ema_average(stats[2], b, 0, s, cfg, now)
    return hybrid_score(int(cfg[5]), stats[1][b, s], in_flight_ema, _ema_average(stats[2], b, 1, s, cfg, now),
                        int(cfg[4]))


@helper
def _rank(b: int, c: int, pool_offsets: np.ndarray, pool_server: np.ndarray, pool_rank: np.ndarray,
          perms: np.ndarray, p0: int, stats: tuple[np.ndarray, ...], cfg: np.ndarray,
          ranked: np.ndarray, score: np.ndarray, rank_of: np.ndarray) -> None:
    """``rank_in_pools``: case ``c``'s candidates scored (-1 without stats) in their order, shuffled by the
    query's permutation (``perms[p0:]``), sorted stably by score and then by preferred pool; ``rank_of[server]``
    its place."""
    lo, hi = pool_offsets[c], pool_offsets[c + 1]
    n = hi - lo
    for i in range(n):
        s = pool_server[lo + i]
        score[i] = _score(stats, b, s, cfg) if stats[0][b, s] else -1.0
    for i in range(n):  # shuffled[i] = scored[perm[i]], then a stable insertion sort on (pool rank, score)
        k = perms[p0 + i]
        j = i
        while j > 0 and (pool_rank[lo + ranked[j - 1]] > pool_rank[lo + k]
                         or (pool_rank[lo + ranked[j - 1]] == pool_rank[lo + k] and score[ranked[j - 1]] > score[k])):
            ranked[j] = ranked[j - 1]
            j -= 1
        ranked[j] = k
    for i in range(n):
        rank_of[pool_server[lo + ranked[i]]] = i


@helper
def _whole_group(e0: int, e1: int, g0: int, g1: int, member_offsets: np.ndarray, member_entry: np.ndarray,
                 member_cand: np.ndarray, entry_cset: np.ndarray, cset_offsets: np.ndarray, cset_server: np.ndarray,
                 cset_online: np.ndarray, rank_of: np.ndarray, chosen_server: np.ndarray) -> int:
    """``best_replica_group``: the group covering every segment, then the one whose worst server ranks best
    (lowest id on a tie); its members are routed, the other segments with candidates are unavailable
    (returned: how many)."""
    covered = e1 - e0
    for k in range(covered):
        chosen_server[k] = -1
    best, best_missing, best_worst = -1, True, 0
    for g in range(g0, g1):
        missing = member_offsets[g + 1] - member_offsets[g] < covered
        worst = -1
        for m in range(member_offsets[g], member_offsets[g + 1]):
            cs = entry_cset[e0 + member_entry[m]]
            worst = max(worst, rank_of[cset_server[cset_offsets[cs] + member_cand[m]]])
        if best < 0 or (not missing and best_missing) or (missing == best_missing and worst < best_worst):
            best, best_missing, best_worst = g, missing, worst
    if best < 0:
        return 0
    for m in range(member_offsets[best], member_offsets[best + 1]):
        j = cset_offsets[entry_cset[e0 + member_entry[m]]] + member_cand[m]
        chosen_server[member_entry[m]] = cset_server[j] if cset_online[j] else -1
    return int(covered - (member_offsets[best + 1] - member_offsets[best]))


@helper
def _mark(b: int, s: int, at: float, det: tuple[np.ndarray, ...], cfg: np.ndarray, ev_key: np.ndarray,
          ev_seq: np.ndarray, ev_kind: np.ndarray, ev_ref: np.ndarray, counters: np.ndarray) -> None:
    """``markServerUnhealthy``: broker ``b`` excludes server ``s`` from routing and queues its first retry
    (``retry.initial.delay.ms`` later); a server already unhealthy is left as it is."""
    unhealthy, delay, retries, generation, broker_state = det[0], det[1], det[2], det[3], det[4]
    if unhealthy[b, s]:
        return
    unhealthy[b, s] = True
    delay[b, s], retries[b, s] = cfg[11], 0
    generation[b, s] += 1
    broker_state[b] = -1  # its routing state changed
    servers = unhealthy.shape[1]
    ref = (generation[b, s] * unhealthy.shape[0] + b) * servers + s
    counters[2] = heap_push(ev_key, ev_seq, ev_kind, ev_ref, counters[2], at + cfg[11], counters[3], _RETRY, ref)
    counters[3] += 1


@helper
def _retry(ref: int, at: float, det: tuple[np.ndarray, ...], cfg: np.ndarray, c_off: np.ndarray,
           c_start: np.ndarray, c_end: np.ndarray, ev_key: np.ndarray, ev_seq: np.ndarray, ev_kind: np.ndarray,
           ev_ref: np.ndarray, counters: np.ndarray) -> None:
    """A retry of ``BaseExponentialBackoffRetryFailureDetector``: after ``max.retries`` the server is let back
    without asking; else it is let back if a connection opens (it is not down), or retried after the delay
    times ``retry.delay.factor``. A retry of a server let back meanwhile is skipped."""
    unhealthy, delay, retries, generation, broker_state = det[0], det[1], det[2], det[3], det[4]
    brokers, servers = unhealthy.shape
    s = ref % servers
    b = (ref // servers) % brokers
    if not unhealthy[b, s] or generation[b, s] != ref // (servers * brokers):
        return
    down = False
    for i in range(c_off[s], c_off[s + 1]):
        if c_start[i] <= at < c_end[i]:
            down = True
    if retries[b, s] == int(cfg[13]) or not down:
        unhealthy[b, s] = False
        broker_state[b] = -1
        return
    delay[b, s] = delay[b, s] * cfg[12]
    retries[b, s] += 1
    counters[2] = heap_push(ev_key, ev_seq, ev_kind, ev_ref, counters[2], at + delay[b, s], counters[3], _RETRY, ref)
    counters[3] += 1


@helper
def _close(q: int, at: float, b: int, queries: tuple[Any, ...], requests: tuple[np.ndarray, ...],
           gathers: tuple[np.ndarray, ...], stats: tuple[np.ndarray, ...], cfg: np.ndarray) -> None:
    """``Gather.close``: the broker stops waiting; each server without a response is recorded at the timeout."""
    closed, _, received = gathers
    closed[q] = True
    query_requests, server = requests[0], requests[1]
    for r in range(query_requests[q], query_requests[q + 1] if cfg[9] == 0 else query_requests[q]):
        if not received[r]:
            _answered(stats, b, server[r], cfg, queries[2][q], at)


@kernel
def _run(queries: tuple[Any, ...], routing: tuple[np.ndarray, ...], tpl: tuple[np.ndarray, ...], cfg: np.ndarray,
         stats: tuple[np.ndarray, ...], det: tuple[np.ndarray, ...], delays_in: np.ndarray, own_delay: np.ndarray,
         cpu_scale: np.ndarray, slow: tuple[np.ndarray, ...],
         prepare_ms: np.ndarray, merge_each: np.ndarray, off_path_ms: np.ndarray, stops: tuple[np.ndarray, ...],
         gc_pauses: tuple[np.ndarray, ...],
         crashes: tuple[np.ndarray, ...], settings: ServerSettings, horizon: float, state: tuple[np.ndarray, ...],
         work: tuple[np.ndarray, ...], outs: tuple[np.ndarray, ...], requests: tuple[np.ndarray, ...],
         queues: tuple[np.ndarray, ...], gathers: tuple[np.ndarray, ...], per_server: np.ndarray,
         counters: np.ndarray, draws: np.ndarray, bounds: np.ndarray) -> int:
    """Route and run from query ``counters[1]`` on; returns :data:`_DONE`, or stops before a query and says what
    it needs (then call again): :data:`_NEED_DRAWS` (its random picks' bounds in ``bounds[:counters[8]]``; fill
    ``draws``), :data:`_NEED_STATE` (broker ``counters[10]``'s routing state in epoch ``counters[11]``, given its
    detector's exclusions ``det[0]``), :data:`_NEED_TEMPLATE` (the route of state ``counters[12]``, plan
    ``counters[13]``, residue ``counters[14]``).

    ``counters``: requests routed, next query, broker events queued, event sequence, delays used, own delays
    used, segments laid out, global task count, draws needed, draws ready, then the requests above. ``det``:
    per broker and server the failure detector's state (unhealthy, delay, retries, generation), per broker its
    routing state (-1: look it up) and the epoch it was looked up in.
    """
    arrival, broker, timeout, group_by, plan_index, query_segments, seg_in = (queries[0], queries[1], queries[2],
                                                                            queries[3], queries[6], queries[7],
                                                                            queries[8])
    plan_offsets, plan_docs, aggregate, cap, case, delay_column = queries[9:]
    case_offsets, entry_position, entry_segment, entry_cset, cset_offsets, cset_server, cset_online = routing[:7]
    pool_offsets, pool_server, pool_rank, perm_offsets, perms = routing[7:12]
    group_offsets, member_offsets, member_entry, member_cand, case_unavailable, unavailable, epoch_q = routing[12:19]
    case_of = routing[19]
    template_of, tpl_offsets, tpl_position, tpl_segment, tpl_server, tpl_unavailable = tpl
    broker_state, state_epoch = det[4], det[5]
    slow_offsets, slow_start, slow_end, slow_factor, slow_jvm = slow
    c_off, c_start, c_end = crashes
    seg_work, positions = work[5], work[6]
    out_at, out_code, out_responded = outs[0], outs[1], outs[2]
    query_requests, req_server, req_row, req_nseg, req_seg, req_query, req_prepare, req_docs, delays = requests[:9]
    req_merge, req_rows, req_off_path = requests[9], requests[10], requests[11]
    ev_key, ev_seq, ev_kind, ev_ref, dl_key, dl_req, outstanding = queues[:7]
    closed, got, received = gathers
    has = stats[0]
    nq, servers = len(arrival), len(cpu_scale)
    # per server: deliveries waiting, rows not answered yet (``outstanding``; its rows: ``per_server[:, 0]``)
    pending, open_rows = per_server[:, 1], per_server[:, 2]
    chosen_server = np.empty(len(draws), np.int64)
    decided = np.full(len(cset_offsets), -1, np.int64)
    score_seen = np.full(servers, -1, np.int64)
    score_value = np.zeros(servers)
    order = np.empty(servers, np.int64)
    first_seen = np.full(servers, -1, np.int64)
    rank_of = np.zeros(servers, np.int64)
    ranked = np.empty(servers, np.int64)
    rank_score = np.empty(servers)
    ranking, whole_group, template_mode = cfg[7] != 0, cfg[8] != 0, cfg[9] != 0
    detector, shuffle_live = cfg[10] != 0, cfg[15] != 0
    period, n_brokers = int(cfg[14]), len(broker_state)
    q = counters[1]
    while True:
        t = arrival[q] if q < nq else _INF
        # 1. every server's events before t (deliveries before t first read into its table); a server whose
        # next event is not before t and that has no delivery before t has nothing to do
        for s in range(servers):
            if state[14][s, F_NEXT] >= t and (pending[s] == 0 or dl_key[s, 0] >= t):
                continue
            _advance(s, t, state, queries, requests, queues, work, outs, stops, gc_pauses, crashes, settings, horizon,
                     per_server, counters)
            k = 0
            while k < open_rows[s]:  # responses sent: each reaches its broker after its way back
                r = outstanding[s, k]
                if out_responded[s, req_row[r]]:
                    counters[2] = heap_push(ev_key, ev_seq, ev_kind, ev_ref, counters[2],
                                             out_at[s, req_row[r]] + delays[2 * r + 1], counters[3], _RESPONSE, r)
                    counters[3] += 1
                    open_rows[s] -= 1
                    outstanding[s, k] = outstanding[s, open_rows[s]]
                else:
                    k += 1
        # 2. the brokers' events before t, in time order
        while counters[2] > 0 and ev_key[0] < t:
            at, kind, ref = ev_key[0], ev_kind[0], ev_ref[0]
            counters[2] = heap_pop(ev_key, ev_seq, ev_kind, ev_ref, counters[2])
            if kind == _DEADLINE:
                if not closed[ref]:
                    _close(ref, at, broker[ref], queries, requests, gathers, stats, cfg)
                continue
            if kind == _RETRY:
                _retry(ref, at, det, cfg, c_off, c_start, c_end, ev_key, ev_seq, ev_kind, ev_ref, counters)
                continue
            r = ref
            qq = req_query[r]
            if closed[qq] or at > arrival[qq] + timeout[qq]:
                continue  # the broker stopped waiting: a late response is dropped
            s = req_server[r]
            if out_code[s, req_row[r]] == -1:  # a failed channel closes the gather
                _close(qq, at, broker[qq], queries, requests, gathers, stats, cfg)
                if cfg[10] != 0:  # the broker's failure detector is told of the failed server
                    _mark(broker[qq], s, at, det, cfg, ev_key, ev_seq, ev_kind, ev_ref, counters)
                continue
            received[r] = True
            got[qq] += 1
            if not template_mode:
                latency = at - arrival[qq] if out_code[s, req_row[r]] == 0 else timeout[qq]
                _answered(stats, broker[qq], s, cfg, latency, at)
            if got[qq] == query_requests[qq + 1] - query_requests[qq]:
                closed[qq] = True
        if q >= nq:
            break
        # 3. route query q
        b = broker[q]
        if (template_mode or detector) and (broker_state[b] < 0 or state_epoch[b] != epoch_q[q]):
            counters[10], counters[11], counters[1] = b, epoch_q[q], q
            return _NEED_STATE  # the broker's routing state: its crash epoch and what its detector excludes
        if template_mode:  # a selector without adaptive feedback: its route in the broker's routing state
            residue = (q // n_brokers) % period
            t_id = template_of[broker_state[b], plan_index[q] * period + residue]
            if t_id < 0:
                counters[12], counters[13], counters[14], counters[1] = broker_state[b], plan_index[q], residue, q
                return _NEED_TEMPLATE
            e0, e1 = tpl_offsets[t_id], tpl_offsets[t_id + 1]
            for k in range(e1 - e0):
                chosen_server[k] = tpl_server[e0 + k]
            ent_position, ent_segment = tpl_position, tpl_segment
            unavailable[q] = tpl_unavailable[t_id]
        else:
            # 3. route query q: first, the random picks it needs (a candidate without stats)
            c = case[q] if not detector else case_of[broker_state[b], plan_index[q]]
            e0, e1 = case_offsets[c], case_offsets[c + 1]
            needed = 0
            for e in range(e0 if not ranking else e1, e1):  # a ranking selector draws no random pick
                cs = entry_cset[e]
                for j in range(cset_offsets[cs], cset_offsets[cs + 1]):
                    if not has[b, cset_server[j]]:
                        bounds[needed] = cset_offsets[cs + 1] - cset_offsets[cs]
                        needed += 1
                        break
            if needed > 0 and counters[9] < needed:
                counters[8], counters[1] = needed, q
                return _NEED_DRAWS  # the caller fills ``draws`` and sets counters[9]
            counters[9] = 0
            if ranking and shuffle_live:  # the shuffle is drawn now, its size known only now
                if counters[15] == 0:
                    counters[8], counters[1] = pool_offsets[c + 1] - pool_offsets[c], q
                    return _NEED_SHUFFLE
                counters[15] = 0
                _rank(b, c, pool_offsets, pool_server, pool_rank, draws, 0, stats, cfg, ranked, rank_score, rank_of)
            elif ranking:
                _rank(b, c, pool_offsets, pool_server, pool_rank, perms, perm_offsets[q], stats, cfg, ranked,
                      rank_score, rank_of)
            # select: per listed segment the first best-scored candidate (``AdaptiveServerSelector.select``), or the
            # best-ranked one (``ReplicaGroupInstanceSelector``'s adaptive pick)
            used = 0
            for e in range(e0, e1 if not ranking else e0):
                cs = entry_cset[e]
                i = decided[cs]
                if i < 0:
                    best, best_score, random = 0, _INF, False
                    lo = cset_offsets[cs]
                    for j in range(lo, cset_offsets[cs + 1]):
                        s = cset_server[j]
                        if not has[b, s]:
                            random = True
                            break
                        if score_seen[s] != q:
                            score_seen[s] = q
                            score_value[s] = _score(stats, b, s, cfg)
                        if score_value[s] < best_score:
                            best, best_score = j - lo, score_value[s]
                    if random:
                        i = draws[used]
                        used += 1
                    else:
                        i = best
                        decided[cs] = i
                chosen_server[e - e0] = cset_server[cset_offsets[cs] + i] if cset_online[cset_offsets[cs] + i] else -1
            unavailable[q] = case_unavailable[c]
            if whole_group:  # strictReplicaGroup with enable.strict.replica.group: one whole group (best_replica_group)
                unavailable[q] += _whole_group(e0, e1, group_offsets[c], group_offsets[c + 1], member_offsets,
                                               member_entry, member_cand, entry_cset, cset_offsets, cset_server,
                                               cset_online, rank_of, chosen_server)
            for e in range(e0 if ranking and not whole_group else e1, e1):
                cs = entry_cset[e]
                lo = cset_offsets[cs]
                i = 0
                for j in range(lo, cset_offsets[cs + 1]):
                    if rank_of[cset_server[j]] < rank_of[cset_server[lo + i]]:
                        i = j - lo
                chosen_server[e - e0] = cset_server[lo + i] if cset_online[lo + i] else -1
            for e in range(e0, e1):
                decided[entry_cset[e]] = -1
            ent_position, ent_segment = entry_position, entry_segment
        # requests: servers in the order of their first segment, each with its segments in layout order
        n_servers = 0
        for k in range(e1 - e0):
            s = chosen_server[k]
            if s >= 0 and first_seen[s] < 0:
                first_seen[s] = n_servers
                order[n_servers] = s
                n_servers += 1
        r0 = counters[0]
        query_requests[q] = r0
        base = query_segments[q]
        p = plan_index[q]
        for k in range(n_servers):
            s = order[k]
            first_seen[s] = -1
            r = r0 + k
            start = counters[6]
            for e in range(e0, e1):  # this server's segments, then sorted by layout index (insertion sort)
                if chosen_server[e - e0] == s:
                    at_ = counters[6]
                    counters[6] += 1
                    positions[at_] = e
                    while at_ > start and ent_segment[positions[at_ - 1]] > ent_segment[positions[at_]]:
                        positions[at_ - 1], positions[at_] = positions[at_], positions[at_ - 1]
                        at_ -= 1
            nseg = counters[6] - start
            out_d, back_d = delays_in[counters[4]], delays_in[counters[4] + 1]
            counters[4] += 2
            w0, w1 = slow_offsets[s], slow_offsets[s + 1]
            if len(own_delay) > 0:  # slowed with a whole slow JVM (plan.service_delays)
                back_d += own_delay[counters[5], delay_column[q]] * slow_scale(
                    1.0, arrival[q] + out_d, slow_start[w0:w1], slow_end[w0:w1], slow_jvm[w0:w1])
                counters[5] += 1
            scale = slow_scale(cpu_scale[s], arrival[q] + out_d, slow_start[w0:w1], slow_end[w0:w1], slow_factor[w0:w1])
            extra = merge_each[q] if group_by[q] else 0.0
            docs = 0.0
            for k2 in range(start, start + nseg):
                pos = ent_position[positions[k2]]
                seg_work[k2] = (seg_in[base + pos] + extra) * scale
                docs += plan_docs[plan_offsets[p] + pos]
                positions[k2] = pos
            req_server[r], req_nseg[r], req_seg[r], req_query[r] = s, nseg, start, q
            req_prepare[r] = prepare_ms[q] * scale
            req_merge[r] = (0.0 if group_by[q] else merge_each[q] * nseg) * scale
            req_off_path[r] = off_path_ms[q] * scale
            req_docs[r] = docs
            req_rows[r] = aggregate[p] if aggregate[p] >= 0 else min(int(max(docs, 0.0)), cap[p])
            delays[2 * r], delays[2 * r + 1] = out_d, back_d
            received[r] = False
        counters[0] = r0 + n_servers
        query_requests[q + 1] = r0 + n_servers
        for k in range(n_servers if not template_mode else 0):  # record_submission, in routing order
            _submitted(stats, b, req_server[r0 + k], cfg, arrival[q])
        for k in range(n_servers):
            r = r0 + k
            s = req_server[r]
            pending[s] = _delivery_push(dl_key[s], dl_req[s], pending[s], arrival[q] + delays[2 * r], r)
        if n_servers == 0:
            closed[q] = True
        else:
            counters[2] = heap_push(ev_key, ev_seq, ev_kind, ev_ref, counters[2], arrival[q] + timeout[q], counters[3],
                                     _DEADLINE, q)
            counters[3] += 1
        q += 1
        counters[1] = q
    # the end: every delivery read, every server run to the horizon
    for s in range(servers):
        _advance(s, _INF, state, queries, requests, queues, work, outs, stops, gc_pauses, crashes, settings, horizon,
                 per_server, counters)
    return _DONE


@helper
def _advance(s: int, t: float, state: tuple[np.ndarray, ...], queries: tuple[Any, ...],
             requests: tuple[np.ndarray, ...], queues: tuple[np.ndarray, ...], work: tuple[np.ndarray, ...],
             outs: tuple[np.ndarray, ...], stops: tuple[np.ndarray, ...], gc_pauses: tuple[np.ndarray, ...],
             crashes: tuple[np.ndarray, ...], settings: ServerSettings, horizon: float, per_server: np.ndarray,
             counters: np.ndarray) -> None:
    """Server ``s``'s deliveries before ``t`` read into its request table, and its events before ``t`` run; when
    ``t`` is infinite, every event to the horizon, and the server finished (:func:`finish_server`). The rows read
    are its open rows."""
    arrival, timeout, group_by, secondary, threads = queries[0], queries[2], queries[3], queries[4], queries[5]
    req_row, req_nseg, req_seg, req_query, req_prepare, delays = (requests[2], requests[3], requests[4], requests[5],
                                                                  requests[6], requests[8])
    req_merge, req_off_path = requests[9], requests[11]
    dl_key, dl_req, outstanding, hints = queues[4], queues[5], queues[6], queues[7]
    rf_all, ri_all, ti, t_queued, queue_all, seg_work = work[0], work[1], work[2], work[3], work[4], work[5]
    out_at, out_code, out_responded, out_paused, out_wait = outs
    p_off, p_start, p_end, p_run, p_before, p_total = stops
    g_off, g_start, g_end = gc_pauses
    c_off, c_start, c_end = crashes
    n_rows, pending, open_rows = per_server[:, 0], per_server[:, 1], per_server[:, 2]
    st = (state[0][s], state[1][s], state[2][s], state[3][s], state[4][s], state[5][s], state[6][s],
          state[7][s], state[8][s], state[9][s], state[10][s], state[11][s], state[12][s], state[13][s],
          state[14][s], state[15][s], state[16][s], state[17][s])
    rf, ri = rf_all[s], ri_all[s]
    ps, pe = p_start[p_off[s]:p_off[s + 1]], p_end[p_off[s]:p_off[s + 1]]
    while pending[s] > 0 and dl_key[s, 0] < t:
        r = dl_req[s, 0]
        pending[s] = _delivery_pop(dl_key[s], dl_req[s], pending[s])
        row = n_rows[s]
        n_rows[s] += 1
        qq = req_query[r]
        d = arrival[qq] + delays[2 * r]
        set_request(rf, ri, row, release(ps, pe, d, hints[s]), d, timeout[qq], req_prepare[r], req_merge[r],
                    req_seg[r], req_nseg[r], threads[qq], group_by[qq], secondary[qq], req_off_path[r])
        req_row[r] = row
        outstanding[s, open_rows[s]] = r
        open_rows[s] += 1
    st[13][I_TASKS] = counters[7]
    advance_server(st, rf, ri, seg_work, n_rows[s], settings, ps, pe, p_run[p_off[s]:p_off[s + 1]],
                   p_before[p_off[s]:p_off[s + 1]], p_total[s], g_start[g_off[s]:g_off[s + 1]],
                   g_end[g_off[s]:g_off[s + 1]], c_start[c_off[s]:c_off[s + 1]], c_end[c_off[s]:c_off[s + 1]],
                   horizon, t, ti, t_queued, queue_all[s], out_at[s], out_code[s], out_paused[s], out_wait[s],
                   out_responded[s])
    counters[7] = st[13][I_TASKS]
    if t == _INF:
        finish_server(st, n_rows[s], settings.cores, ps, pe, p_run[p_off[s]:p_off[s + 1]], horizon, out_at[s],
                      out_code[s], out_paused[s], out_wait[s], out_responded[s])


@helper
def _delivery_push(keys: np.ndarray, reqs: np.ndarray, size: int, key: float, r: int) -> int:
    """A server's deliveries by time, ties in request order (request ids grow with routing)."""
    i = size
    keys[i], reqs[i] = key, r
    while i > 0:
        parent = (i - 1) >> 1
        if keys[parent] < keys[i] or (keys[parent] == keys[i] and reqs[parent] < reqs[i]):
            break
        keys[i], keys[parent] = keys[parent], keys[i]
        reqs[i], reqs[parent] = reqs[parent], reqs[i]
        i = parent
    return size + 1


@helper
def _delivery_pop(keys: np.ndarray, reqs: np.ndarray, size: int) -> int:
    """Remove the earliest delivery (read it first); returns the new size."""
    size -= 1
    keys[0], reqs[0] = keys[size], reqs[size]
    i = 0
    while True:
        left, right, smallest = 2 * i + 1, 2 * i + 2, i
        if left < size and (keys[left] < keys[smallest]
                            or (keys[left] == keys[smallest] and reqs[left] < reqs[smallest])):
            smallest = left
        if right < size and (keys[right] < keys[smallest]
                             or (keys[right] == keys[smallest] and reqs[right] < reqs[smallest])):
            smallest = right
        if smallest == i:
            return size
        keys[i], keys[smallest] = keys[smallest], keys[i]
        reqs[i], reqs[smallest] = reqs[smallest], reqs[i]
        i = smallest
