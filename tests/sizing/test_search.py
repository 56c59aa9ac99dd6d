"""The sizing search on hand-made tables (no simulation): it finds the exhaustive grid's answer in fewer
evaluations, checks monotonicity where it assumes it, and runs failure cases only for shapes that could win."""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence

import pytest

from workbench.sizing.search import SearchResult, Shape, Verdict, exhaustive, search


class Table:
    """A space of lines; ``meets[line][position]`` and ``survives[line][position]`` given by hand.

    Line ``n`` costs ``(n + 1) x servers`` (a bigger instance per line); the p99 bound is ``100 / servers``.
    """

    def __init__(self, meets: Sequence[Sequence[bool]], survives: Sequence[Sequence[bool]] | None = None,
                 servers: Sequence[int] | None = None) -> None:
        counts = list(servers or range(1, len(meets[0]) + 1))
        self.shapes = [Shape(len(meets[0]) * n + p, n, counts[p], float((n + 1) * counts[p]))
                       for n in range(len(meets)) for p in range(len(meets[0]))]
        self.meets = {s.index: meets[s.line][s.index % len(meets[0])] for s in self.shapes}
        surv = survives or [[True] * len(row) for row in meets]
        self.survive: dict[int, bool | None] = {s.index: surv[s.line][s.index % len(meets[0])] for s in self.shapes}
        self.evaluated: list[int] = []
        self.failure_cases: list[int] = []
        self.robust: dict[int, bool] | None = None  # set: the model is calibrated, these shapes pass the draws
        self.drawn: list[int] = []

    def evaluate(self, ids: Sequence[int]) -> Mapping[int, Verdict]:
        self.evaluated += ids
        return {i: Verdict(self.meets[i], 100.0 / self.shapes[i].servers) for i in ids}

    def survives(self, i: int) -> bool | None:
        self.failure_cases.append(i)
        return self.survive[i]

    def draws(self, i: int) -> bool:
        assert self.robust is not None
        self.drawn.append(i)
        return self.robust[i]

    def both(self, width: int = 1) -> tuple[SearchResult, SearchResult, Table]:
        """(search, exhaustive, a fresh table counting the exhaustive's work)."""
        found = search(self.shapes, self.evaluate, self.survives, width=width,
                       robust=self.draws if self.robust is not None else None)
        ref = Table.__new__(Table)
        ref.__dict__.update({**self.__dict__, "evaluated": [], "failure_cases": [], "drawn": []})
        return found, exhaustive(ref.shapes, ref.evaluate, ref.survives,
                                 robust=ref.draws if ref.robust is not None else None), ref


def _threshold(n: int, first: int) -> list[bool]:
    return [p >= first for p in range(n)]


@pytest.mark.parametrize("width", [1, 3])
def test_monotone_lines_give_the_grids_answer_with_fewer_evaluations(width: int) -> None:
    # four lines of 16 server counts; line n meets from position first[n] on. Line 0 (cheapest per server)
    # needs 12 servers (cost 12), line 1 needs 4 (cost 2 x 4 = 8): line 1 wins; line 3 (cost >= 4 x 1 = 4
    # at its cheapest) meets from 2 servers at cost 8, tying line 1 on cost but with a higher p99 bound.
    firsts = [11, 3, 9, 1]
    table = Table([_threshold(16, f) for f in firsts])
    found, ref, grid = table.both(width)
    assert ref.best is not None and table.shapes[ref.best].line == 1 and table.shapes[ref.best].servers == 4
    assert found.best == ref.best
    assert len(set(table.evaluated)) < len(grid.evaluated) / 2
    assert all(found.verdicts[i] == ref.verdicts[i] for i in found.verdicts)
    assert table.failure_cases == [ref.best]  # one failure case: the answer's
    assert not found.notes


def test_failure_cases_walk_up_the_line_until_a_shape_survives() -> None:
    # one line: meets from 3 servers, survives a lost server only from 6 (position 5)
    table = Table([_threshold(10, 2)], [_threshold(10, 5)])
    found, ref, grid = table.both()
    assert table.shapes[found.best or 0].servers == 6 and found.best == ref.best
    assert table.failure_cases == [2, 3, 4, 5]  # the walk, in order; nothing above the answer
    assert len(grid.failure_cases) == 8  # the grid runs every meeting shape's


def test_a_shape_failing_above_the_boundary_sends_the_line_to_the_fallback() -> None:
    # the line meets at 8 servers (position 7) and at 3, fails at 4..7 and at 9: the probes (positions 0, 1,
    # 3, 7, then 5 and 6) never see position 2; the boundary at 8 breaks in its failure case, the walk up
    # meets position 8 failing, the contradiction sends the line to a full scan, which finds 3 servers
    meets = [False, False, True, False, False, False, False, True, False, True]
    table = Table([meets], [[True, True, True, True, True, True, True, False, True, True]])
    found, ref, _ = table.both()
    assert table.shapes[ref.best or 0].servers == 3
    assert found.best == ref.best
    assert found.notes and "not monotone" in found.notes[0]


def test_the_check_below_the_winning_boundary_catches_a_hidden_meeting_shape() -> None:
    # meets at 5 servers (position 4) and from 7 on: the search gallops up (positions 0, 1, 3 fail, 7 meets)
    # and bisects (5 fails, 6 meets): boundary at 7 servers, position 4 never probed. Before 7 servers is
    # declared the answer, the nearest untested shape below its boundary (position 4) is evaluated: it
    # meets, so the line is scanned, and 5 servers is the answer, as in the grid
    meets = [False, False, False, False, True, False, True, True]
    table = Table([meets])
    found, ref, _ = table.both()
    assert table.evaluated[:7] == [0, 1, 3, 7, 5, 6, 4]
    assert found.best == ref.best and table.shapes[found.best or 0].servers == 5
    assert found.notes and "below the boundary" in found.notes[0]


def test_a_line_whose_layout_cannot_survive_is_closed() -> None:
    # line 0 (cheaper) meets from 2 servers but its layout cannot survive (None): no shape of it is walked;
    # line 1 meets from 3 servers and survives
    table = Table([_threshold(8, 1), _threshold(8, 2)])
    table.survive = {i: (None if table.shapes[i].line == 0 else True) for i in table.survive}
    found, ref, _ = table.both()
    assert found.best == ref.best and table.shapes[found.best or 0].line == 1
    assert [i for i in table.failure_cases if table.shapes[i].line == 0] == [1]  # its boundary's only
    assert "cannot survive" in found.notes[0]


def test_parameter_draws_run_only_for_the_shape_that_could_win() -> None:
    # two lines of 8: line 0 (cost n) meets from 3 servers and survives, but stays under the SLO across the
    # calibration's uncertainty only from 5; line 1 (cost 2n) meets from 2 servers, passes every draw, and
    # survives only from 3 (cost 6). In the report's order: line 0 at 3 (cost 3) fails its draws; line 0 at 4
    # (cost 4, p99 bound 25) before line 1 at 2 (cost 4, bound 50) fails its draws; line 1 at 2 breaks in its
    # failure case (no draws: the first gate failed); line 0 at 5 (cost 5) passes both and is the answer,
    # before line 1 at 3 (cost 6) is tried.
    table = Table([_threshold(8, 2), _threshold(8, 1)], [[True] * 8, _threshold(8, 2)])
    table.robust = {s.index: s.line == 1 or s.servers >= 5 for s in table.shapes}
    found, ref, grid = table.both()
    assert found.best == ref.best and table.shapes[found.best or 0].servers == 5
    assert table.shapes[found.best or 0].line == 0
    assert [(table.shapes[i].line, table.shapes[i].servers) for i in table.drawn] == [(0, 3), (0, 4), (0, 5)]
    assert [(table.shapes[i].line, table.shapes[i].servers) for i in table.failure_cases] == [
        (0, 3), (0, 4), (1, 2), (0, 5)]
    assert all(found.robust[i] == ref.robust[i] for i in found.robust)
    assert len(grid.drawn) == 6 + 7  # the grid draws every meeting shape: line 0 from 3, line 1 from 2 servers


def test_nothing_meets_the_slo() -> None:
    table = Table([[False] * 6, [False] * 6])
    found, ref, _ = table.both()
    assert found.best is None and ref.best is None
    assert not table.failure_cases


@pytest.mark.parametrize("firsts", list(itertools.product([0, 2, 5, 7, 8], repeat=2)))
def test_every_pair_of_monotone_lines(firsts: tuple[int, int]) -> None:
    """Every placement of two thresholds (8 = the line never meets), survival from one position above."""
    table = Table([_threshold(8, f) for f in firsts], [_threshold(8, f + 1) for f in firsts])
    found, ref, _ = table.both()
    assert found.best == ref.best


@pytest.mark.parametrize("firsts", list(itertools.product([0, 2, 5, 8], repeat=2)))
def test_every_pair_of_monotone_lines_with_parameter_draws(firsts: tuple[int, int]) -> None:
    """As above, with a calibrated model robust from two positions above the SLO's threshold: the same answer,
    and the same draw verdict on every shape both drew."""
    table = Table([_threshold(8, f) for f in firsts], [_threshold(8, f + 1) for f in firsts])
    table.robust = {s.index: s.index % 8 >= firsts[s.line] + 2 for s in table.shapes}
    found, ref, grid = table.both()
    assert found.best == ref.best
    assert all(found.robust[i] == ref.robust[i] for i in found.robust)
    assert len(table.drawn) <= len(grid.drawn)
