"""The sizing search, with no simulation in it: which shapes to evaluate, and in what order, to find the
shape the exhaustive grid recommends without evaluating the grid.

The space is cut into *lines*: every shape of a line is the same (layout, instance, heap, ...) but for its
server count, and along a line the cost never falls as servers are added. The answer is the shape the
report's rule (:func:`workbench.report.data.recommend`) picks over every shape: the lowest
:data:`Key` (cost, then the p99 interval's upper end, then servers, then position in the space) among
the shapes that meet the SLO and survive their failure case. The search finds it best-first:

- **Bisection on servers.** On a line, meeting the SLO is assumed monotone in the server count (more
  servers never raise p99 past the SLO). The line's first meeting shape (the *boundary*) is found by
  galloping up from its cheapest shape (steps of 1, 2, 4, ... shapes) until one meets, then bisecting
  between the last failing and the first meeting one: about ``2 log2(b)`` evaluations for a boundary at
  position ``b``, instead of ``b``, and never a probe far above the boundary while cheaper shapes are open
  (the answer is usually cheap: a probe in the middle of a long line is wasted). Shapes below a failing
  one are assumed to fail; shapes above the boundary are *not* assumed to meet: each is evaluated before
  it can win.
- **Best first.** Every line offers its cheapest still-possible shape with a lower bound of its key (its
  cost, and ``-inf`` for a bound not yet simulated). The lowest is worked on: a probe or an evaluation,
  or, for a shape known to meet, its gates: its failure case (:data:`Survives`), then, when the model is
  calibrated, its runs on draws of the calibrated parameters (:data:`Robust`). The first shape that passes
  both while it is the lowest of all is the answer, since nothing left can rank before it. Gates therefore
  run only for shapes that could win (a shape that fails one is out, and its line walks up to its next
  shape); a line whose cheapest possible shape costs more than the answer is never simulated further.
- **Monotonicity checked where it is assumed.** Walking up a line from its boundary (when the boundary
  breaks in its failure case), a shape that fails the SLO contradicts the assumption: the line is then
  scanned from its first shape, every shape evaluated in turn (the fallback). Before a shape is declared
  the answer, one more shape below its line's boundary is evaluated (the assumption's nearest untested
  point); a meeting one there sends its line to the fallback too. Lines where the assumption was never
  contradicted may still hide an unevaluated meeting shape below a failing one: that is the search's one
  assumption, and the exhaustive mode (:func:`exhaustive`) is the reference it is tested against.

Evaluations are asked for in batches of up to ``width`` shapes (the lowest frontiers of as many lines), so
a pool of workers or a Spark cluster stays busy; ``width=1`` is the strict best-first order.

>>> shapes = [Shape(i, 0, servers=n, cost=float(n)) for i, n in enumerate(range(1, 9))]
>>> meets = {s.index: Verdict(s.servers >= 5, 100.0 / s.servers) for s in shapes}
>>> r = search(shapes, lambda ids: {i: meets[i] for i in ids}, lambda i: True)
>>> shapes[r.best].servers, len(r.verdicts) < len(shapes)
(5, True)
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

__all__ = ["Evaluate", "Key", "Progress", "Robust", "SearchResult", "Shape", "Survives", "Verdict", "exhaustive",
           "key", "search"]


@dataclass(frozen=True)
class Shape:
    """One shape of the space as the search sees it: its position (``index``), its line, servers and cost."""

    index: int
    line: int
    servers: int
    cost: float


@dataclass(frozen=True)
class Verdict:
    """A simulated shape: whether it meets the SLO (every server up), and its p99 interval's upper end, ms."""

    meets: bool
    bound: float


#: The report's order (:func:`workbench.report.data.rank`): cost, p99 upper end, servers, position.
Key = tuple[float, float, int, int]
#: Simulate these shapes (by index); one verdict each.
Evaluate = Callable[[Sequence[int]], Mapping[int, Verdict]]
#: Run a shape that meets the SLO in its failure case: does it meet the SLO there too? ``None``: it cannot,
#: for a reason its whole line shares (one replica, or no replica group to lose), so no shape of the line can.
Survives = Callable[[int], bool | None]
#: Run a shape that meets the SLO on draws of the calibrated parameters: does it meet the SLO across them too
#: (the report's ``robust``)? ``None`` for the search: the model is not calibrated, every shape passes.
Robust = Callable[[int], bool]


def key(shape: Shape, bound: float) -> Key:
    """``shape``'s place in the report's order, with p99 upper end ``bound``."""
    return (shape.cost, bound, shape.servers, shape.index)


@dataclass
class SearchResult:
    """What a search (or the exhaustive reference) found.

    ``best`` is the answer's index (``None``: no shape meets the SLO and survives); ``verdicts`` every
    evaluated shape's; ``survival`` every failure case run; ``robust`` every shape run on parameter draws;
    ``notes`` each line where monotonicity failed.
    """

    best: int | None
    verdicts: dict[int, Verdict] = field(default_factory=dict)
    survival: dict[int, bool] = field(default_factory=dict)
    robust: dict[int, bool] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class SearchState:
    """Where a search stands, for a progress bar: shapes evaluated, candidates left, the best so far."""

    evaluated: int
    left: int
    best: int | None


Progress = Callable[[SearchState], None]


@dataclass
class _Line:
    """One line's state: bisecting (``lo``, ``hi``) until ``start`` is set, then scanning from ``start``."""

    shapes: list[Shape]
    lo: int = -1
    hi: int = -1
    start: int | None = None
    checked: bool = False
    gap: int = 1

    def __post_init__(self) -> None:
        self.hi = len(self.shapes)


@dataclass(frozen=True)
class _Action:
    """The next thing a line offers: evaluate ``position``, or run its failure case (``survive``)."""

    key: Key
    line: int
    position: int
    survive: bool


class _Search:
    def __init__(self, shapes: Sequence[Shape], evaluate: Evaluate, survives: Survives,
                 robust: Robust | None) -> None:
        by_line: dict[int, list[Shape]] = {}
        for s in shapes:
            by_line.setdefault(s.line, []).append(s)
        self.lines = [_Line(sorted(v, key=lambda s: (s.servers, s.index))) for _, v in sorted(by_line.items())]
        self.evaluate, self.survives, self.robust = evaluate, survives, robust
        self.result = SearchResult(None)

    def _out(self, i: int) -> bool:
        """Whether evaluated shape ``i`` is out: it fails the SLO, or one of its gates."""
        r = self.result
        return not r.verdicts[i].meets or r.survival.get(i) is False or r.robust.get(i) is False

    # -- what each line offers -----------------------------------------------------------------------
    def _settle(self, n: int) -> None:
        """Close a bisection whose range is empty: scanning starts at its boundary."""
        line = self.lines[n]
        if line.start is None and line.hi - line.lo <= 1:
            line.start = line.hi

    def _open(self, n: int) -> list[int]:
        """Positions of line ``n`` that could still be the answer (scan mode)."""
        line, v = self.lines[n], self.result.verdicts
        assert line.start is not None
        return [p for p in range(line.start, len(line.shapes))
                if line.shapes[p].index not in v or not self._out(line.shapes[p].index)]

    def _action(self, n: int) -> _Action | None:
        line = self.lines[n]
        self._settle(n)
        if line.start is None:  # bisecting: the lowest shape not known to fail bounds the line
            top = len(line.shapes)
            probe = min(line.lo + line.gap, top - 1) if line.hi == top else (line.lo + line.hi) // 2
            low = min(s.cost for s in line.shapes[line.lo + 1:])
            return _Action((low, -math.inf, 0, -1), n, probe, False)
        best: _Action | None = None
        for p in self._open(n):
            shape = line.shapes[p]
            verdict = self.result.verdicts.get(shape.index)
            action = (_Action(key(shape, -math.inf), n, p, False) if verdict is None else
                      _Action(key(shape, verdict.bound), n, p, True))
            if best is None or action.key < best.key:
                best = action
        return best

    # -- doing it ------------------------------------------------------------------------------------
    def _record(self, verdicts: Mapping[int, Verdict], asked: Sequence[tuple[int, int]]) -> None:
        self.result.verdicts.update(verdicts)
        for n, p in asked:
            line = self.lines[n]
            meets = verdicts[line.shapes[p].index].meets
            if line.start is None:
                if meets:
                    line.hi = min(line.hi, p)
                else:
                    line.gap = 1 if line.lo < 0 else 2 * line.gap  # steps of 1, 1, 2, 4...: positions 0, 1, 3, 7
                    line.lo = max(line.lo, p)
                self._settle(n)
            elif not meets and p >= line.start and line.start > 0:
                self._fallback(n, f"{line.shapes[p].servers} servers fail the SLO above the boundary at "
                                  f"{line.shapes[line.start].servers}")
            elif meets and p < line.start:
                self._fallback(n, f"{line.shapes[p].servers} servers meet the SLO below the boundary at "
                                  f"{line.shapes[line.start].servers}")

    def _fallback(self, n: int, why: str) -> None:
        line = self.lines[n]
        if line.start != 0:
            self.result.notes.append(f"line {n}: {why}: not monotone, every shape of the line is evaluated")
            line.start = 0

    def _check_below(self, n: int) -> int | None:
        """The nearest untested shape below line ``n``'s boundary (the assumption's closest point)."""
        line = self.lines[n]
        line.checked = True
        for p in range((line.start or 0) - 1, -1, -1):
            if line.shapes[p].index not in self.result.verdicts:
                return p
        return None

    def run(self, width: int, progress: Progress | None) -> SearchResult:
        while True:
            actions = sorted((a for n in range(len(self.lines)) if (a := self._action(n)) is not None),
                             key=lambda a: a.key)
            if progress is not None:
                progress(self.state())
            if not actions:
                return self.result
            first = actions[0]
            if first.survive:
                index = self.lines[first.line].shapes[first.position].index
                if not self._gates(first.line, index):
                    continue
                below = None if self.lines[first.line].checked else self._check_below(first.line)
                if below is None:
                    self.result.best = index
                    return self.result
                self._run_batch([(first.line, below)])
                continue
            batch: list[tuple[int, int]] = []
            for a in actions:  # the lowest frontiers, up to the first failure case due (it may end the search)
                if a.survive or len(batch) == width:
                    break
                batch.append((a.line, a.position))
            self._run_batch(batch)

    def _gates(self, n: int, index: int) -> bool:
        """Shape ``index`` (line ``n``, known to meet the SLO) through its gates, each run once: its failure
        case first (a layout that cannot survive closes the line before any draw is run), then the
        parameter draws. Whether it passes both."""
        r = self.result
        if index not in r.survival:
            verdict = self.survives(index)
            r.survival[index] = bool(verdict)
            if verdict is None:  # the line's layout cannot survive: no shape of it is a candidate
                self.lines[n].start = len(self.lines[n].shapes)
                r.notes.append(f"line {n}: cannot survive its failure case at any size")
        if not r.survival[index]:
            return False
        if self.robust is not None and index not in r.robust:
            r.robust[index] = self.robust(index)
        return r.robust.get(index, True)

    def _run_batch(self, asked: list[tuple[int, int]]) -> None:
        ids = [self.lines[n].shapes[p].index for n, p in asked]
        self._record(self.evaluate(ids), asked)

    def state(self) -> SearchState:
        v = self.result.verdicts
        meeting = [i for i in v if not self._out(i)]
        costs = {s.index: s.cost for line in self.lines for s in line.shapes}
        best = min(meeting, key=lambda i: (costs[i], v[i].bound, i), default=None)
        ceiling = costs[best] if best is not None else math.inf
        left = 0
        for line in self.lines:
            for p, s in enumerate(line.shapes):
                assumed = (line.start is None and p <= line.lo) or (line.start is not None and p < line.start)
                left += s.index not in v and not assumed and s.cost <= ceiling
        return SearchState(len(v), left, best)


def search(shapes: Sequence[Shape], evaluate: Evaluate, survives: Survives, *, robust: Robust | None = None,
           width: int = 1, progress: Progress | None = None) -> SearchResult:
    """The best-first search over ``shapes`` (the module's docstring); ``width`` shapes per batch at most;
    ``robust`` the parameter-draw gate of a calibrated model (``None``: none)."""
    if width < 1:
        raise ValueError(f"width must be at least 1, got {width}")
    return _Search(shapes, evaluate, survives, robust).run(width, progress)


def exhaustive(shapes: Sequence[Shape], evaluate: Evaluate, survives: Survives, *,
               robust: Robust | None = None) -> SearchResult:
    """The reference: every shape evaluated, every shape that meets the SLO run in its failure case and on
    the parameter draws, the lowest key among those that pass both."""
    verdicts = dict(evaluate([s.index for s in shapes]))
    by_index = {s.index: s for s in shapes}
    meeting = sorted((i for i, v in verdicts.items() if v.meets), key=lambda i: key(by_index[i], verdicts[i].bound))
    survival = {i: bool(survives(i)) for i in meeting}
    drawn = {i: robust(i) for i in meeting} if robust is not None else {}
    best = next((i for i in meeting if survival[i] and drawn.get(i, True)), None)
    return SearchResult(best, verdicts, survival, drawn)
