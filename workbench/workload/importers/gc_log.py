"""Import a JVM GC log (JDK 9+ ``-Xlog:gc*`` or ``-Xlog:gc``, JDK 8 ``-verbose:gc``) as one row per pause.

A pause line looks like ``[<decorations>] GC(12) Pause Young (Normal) (G1 Evacuation Pause)
512M->128M(1024M) 12.345ms``. The decorations vary with the ``-Xlog`` options (wall time, uptime,
uptime in ms or ns, pid, level, tags, all optional and padded), so each bracket is classified by its
content rather than its position. Collectors differ after ``Pause``: G1 and Parallel/Serial name a
kind and one or two parenthesised details (young-GC type, then cause), Shenandoah and ZGC name a phase
(``Init Mark``, ``Mark Start``; generational ZGC prefixes ``Y:``/``O:``) and usually omit the heap.

Lines that are not pause results (``[gc,start]`` announcements, phases, heap summaries, concurrent
cycles) are valid and counted as ``ignored``. A pause line whose sizes or duration cannot be read, or a
decoration that is not one the JVM writes, is malformed. A JDK 8 line is read by :mod:`.gc_jdk8` (its
basic ``-verbose:gc`` form; ``-XX:+PrintGCDetails`` is malformed).
The uptime decoration is stamped when the pause *ends*; the pause therefore began ``duration_ms``
earlier, which :func:`workbench.workload.importers.calibrate_gc` uses for the gaps between pauses.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from workbench.workload.importers.common import (
    ImportResult,
    Malformed,
    Tally,
    line_count,
    numbered_lines,
    parse_timestamp,
    read_text,
)
from workbench.workload.importers.gc_details import (
    DETAIL_COLUMNS,
    TIME_COLUMNS,
    parse_detail,
    parse_region_size,
    parse_stall,
)
from workbench.workload.importers.gc_jdk8 import JDK8_LINE, parse_jdk8_line

__all__ = ["GC_LOG_COLUMNS", "parse_pause", "read_gc_log"]

#: Columns of the pauses table, one row per stop-the-world pause in log order.
GC_LOG_COLUMNS = (
    "gc_id", "start_s", "uptime_s", "wallclock_s", "kind", "phase", "cause", "heap_before_bytes", "heap_after_bytes",
    "heap_total_bytes", "duration_ms", "source_line", *DETAIL_COLUMNS,
)
#: Pause kinds whose collection logs regions, copied bytes and scanned cards (G1's evacuations).
_SIZED_KINDS = frozenset({"young", "mixed", "full"})
_REGION_COLUMNS = frozenset(c for c in DETAIL_COLUMNS if c.endswith("_bytes") and c != "copied_bytes")
_LEVELS = frozenset({"trace", "debug", "info", "warning", "error", "off"})
_ISO = re.compile(r"(?P<date>\d{4}-\d{2}-\d{2})T(?P<clock>\d{2}:\d{2}:\d{2})(?:[.,](?P<fraction>\d+))?"
                  r"(?P<zone>Z|[+-]\d{2}:?\d{2})?")
_UPTIME = re.compile(r"(\d+(?:[.,]\d+)?)s")
_INTEGER_CLOCK = re.compile(r"(\d+)(ms|ns)")
_TAGS = re.compile(r"[a-z0-9_]+(?:,[a-z0-9_]+)*")
#: Something that tries to be a time decoration but is none of the JVM's forms (``[12.3.4s]``).
_CLOCK_LIKE = re.compile(r"\d[\d.,:+\-T]*(?:s|ms|ns)?")
_IPV4 = re.compile(r"\d{1,3}(?:\.\d{1,3}){3}")
_DECORATION = re.compile(r"\[([^\[\]]*)\]")
_PAUSE = re.compile(r"GC\((?P<id>\d+)\)\s+(?:(?P<gen>[YOyo]):\s+)?Pause\s+(?P<rest>.*)")
_DURATION = re.compile(r"\s(?P<value>\d+(?:[.,]\d+)?)\s?(?P<unit>ms|us|µs|s)$")
_HEAP_TOKEN = re.compile(r"\s(\S*->\S*)$")
_SIZE = r"(\d+(?:[.,]\d+)?)([BKMGT])"
_HEAP = re.compile(rf"{_SIZE}->{_SIZE}\({_SIZE}\)")
_UNIT_BYTES = {"B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
_MS_PER_UNIT = {"ms": 1.0, "us": 1e-3, "µs": 1e-3, "s": 1e3}
#: Parenthesised details that qualify the pause rather than name its cause.
_SUBTYPES = frozenset({"normal", "concurrent start", "prepare mixed", "mixed", "major", "minor"})
#: Pause names that are a kind of another name (G1 on JDK 9/10 named the initial-mark young pause).
_KIND_ALIASES = {"initial mark": "young", "young": "young", "mixed": "mixed"}
_EXPECTED = ("expected '[<uptime>s][info][gc] GC(<id>) Pause <kind> (<cause>) <before>-><after>(<total>) "
             "<duration>ms'")
#: Wall-clock millis start here (2001-09-09); smaller millisecond decorations are uptimes.
_EPOCH_MILLIS_FLOOR = 10**12


@dataclass
class _Clock:
    """What a line's decorations say about time, and its tags when they are shown."""

    uptime_s: float | None = None
    wall_s: float | None = None
    tags: frozenset[str] | None = None


def _split_decorations(line: str) -> tuple[list[str], str]:
    decorations: list[str] = []
    position = 0
    while line.startswith("[", position):
        match = _DECORATION.match(line, position)
        if match is None:
            raise Malformed(f"unterminated '[' decoration; {_EXPECTED}")
        decorations.append(match[1].strip())
        position = match.end()
    return decorations, line[position:].strip()


def _clock_value(text: str, clock: _Clock) -> bool:
    """Fill ``clock`` from a time decoration; False when ``text`` is not one."""
    if (iso := _ISO.fullmatch(text)) is not None:
        clock.wall_s = parse_timestamp(iso["date"], iso["clock"], iso["fraction"], iso["zone"])
    elif (uptime := _UPTIME.fullmatch(text)) is not None:
        clock.uptime_s = float(uptime[1].replace(",", "."))
    elif (integer := _INTEGER_CLOCK.fullmatch(text)) is not None:
        seconds = int(integer[1]) / (1e3 if integer[2] == "ms" else 1e9)
        if integer[2] == "ms" and int(integer[1]) >= _EPOCH_MILLIS_FLOOR:
            clock.wall_s = seconds
        elif clock.uptime_s is None:
            clock.uptime_s = seconds
    else:
        return False
    return True


def _classify(decorations: list[str]) -> _Clock:
    """Read the decorations in any order and combination the JVM can write them."""
    clock = _Clock()
    for text in decorations:
        try:
            if _clock_value(text, clock) or text.lower() in _LEVELS or text.isdigit():
                continue
        except ValueError:
            raise Malformed(f"decoration [{text}] is not a valid date and time") from None
        if _CLOCK_LIKE.fullmatch(text) and not _IPV4.fullmatch(text):
            raise Malformed(f"decoration [{text}] is not a time, uptime, pid or tid the JVM writes")
        if _TAGS.fullmatch(text):
            clock.tags = frozenset(text.split(","))
    return clock


def _groups(text: str) -> tuple[str, list[str]]:
    """Split ``Young (Normal) (System.gc())`` into the name and its balanced parenthesised groups."""
    name, paren, rest = text.partition("(")
    rest = paren + rest
    groups: list[str] = []
    while rest.strip():
        rest = rest.strip()
        depth, end = 0, -1
        for index, char in enumerate(rest):
            depth += {"(": 1, ")": -1}.get(char, 0)
            if depth == 0:
                end = index
                break
        if not rest.startswith("(") or end < 0:
            raise Malformed(f"unexpected {rest[:60]!r} after the pause name; {_EXPECTED}")
        groups.append(rest[1:end])
        rest = rest[end + 1:]
    return name.strip(), groups


def _bytes(number: str, unit: str) -> int:
    return round(float(number.replace(",", ".")) * _UNIT_BYTES[unit])


def _heap(token: str) -> tuple[int, int, int]:
    match = _HEAP.fullmatch(token)
    if match is None:
        raise Malformed(f"heap sizes {token!r} are not of the form <before>-><after>(<total>), e.g. 512M->128M(1024M)")
    values = match.groups()
    return _bytes(values[0], values[1]), _bytes(values[2], values[3]), _bytes(values[4], values[5])


def _kind(name: str, subtype: str | None) -> str:
    lowered = name.lower()
    if lowered == "young" and subtype is not None and subtype.lower() == "mixed":
        return "mixed"
    return _KIND_ALIASES.get(lowered) or re.sub(r"[^a-z0-9]+", "_", lowered).strip("_")


def _tail(rest: str) -> tuple[str, float | None, tuple[int, int, int] | None]:
    """Peel the duration and then the heap sizes off the end of a pause message."""
    duration_ms: float | None = None
    if (match := _DURATION.search(" " + rest)) is not None:
        duration_ms = float(match["value"].replace(",", ".")) * _MS_PER_UNIT[match["unit"]]
        rest = (" " + rest)[: match.start()].strip()
    heap = None
    if (token := _HEAP_TOKEN.search(" " + rest)) is not None:
        heap = _heap(token[1])
        rest = (" " + rest)[: token.start()].strip()
    return rest, duration_ms, heap


def parse_pause(message: str) -> dict[str, Any] | None:
    """The pause fields of one undecorated message, or ``None`` when it is not a completed pause.

    >>> parse_pause("GC(3) Pause Young (Concurrent Start) (G1 Humongous Allocation) 2G->1536M(4G) 7.5ms")
    ... # doctest: +NORMALIZE_WHITESPACE
    {'gc_id': 3, 'kind': 'young', 'phase': 'Young (Concurrent Start)', 'cause': 'G1 Humongous Allocation',
     'heap_before_bytes': 2147483648, 'heap_after_bytes': 1610612736, 'heap_total_bytes': 4294967296,
     'duration_ms': 7.5}
    >>> parse_pause("GC(3) Pause Remark") is None     # the [gc,start] announcement
    True

    Raises
    ------
    Malformed
        When the heap sizes, the duration or the text between them cannot be read.
    """
    match = _PAUSE.fullmatch(message)
    if match is None:
        return None
    body, duration_ms, heap = _tail(match["rest"].strip())
    name, groups = _groups(body)
    if not name or not re.fullmatch(r"[A-Za-z][A-Za-z .-]*", name):
        raise Malformed(f"cannot read the pause name in {match['rest'][:60]!r}; {_EXPECTED}")
    if duration_ms is None:
        if heap is not None:
            raise Malformed(f"no pause duration after the heap sizes (truncated line?); {_EXPECTED}")
        return None
    return {"gc_id": int(match["id"]), **_names(match["gen"], name, groups), **_sizes(heap),
            "duration_ms": duration_ms}


def _names(generation: str | None, name: str, groups: list[str]) -> dict[str, str]:
    """Kind, phase and cause: a first group naming a young-GC type or ZGC cycle qualifies the phase."""
    subtype = groups[0] if groups and groups[0].lower() in _SUBTYPES else None
    causes = groups[1:] if subtype is not None else groups
    prefix = f"{generation}: " if generation else ""
    return {"kind": _kind(name, subtype), "phase": prefix + name + (f" ({subtype})" if subtype else ""),
            "cause": "; ".join(causes)}


def _sizes(heap: tuple[int, int, int] | None) -> dict[str, int | None]:
    keys = ("heap_before_bytes", "heap_after_bytes", "heap_total_bytes")
    return dict(zip(keys, heap if heap is not None else (None, None, None), strict=True))


def _stall_row(message: str) -> dict[str, Any] | None:
    """A ZGC allocation stall as a row of kind ``stall`` (its ``gc_id`` is filled from the cycle it waits on)."""
    stall = parse_stall(message)
    if stall is None:
        return None
    return {"gc_id": -1, "kind": "stall", "phase": "Allocation Stall", "cause": stall[0], **_sizes(None),
            "duration_ms": stall[1]}


def _line_row(line: str) -> dict[str, Any] | None:
    """The pause on one log line, ``None`` for a valid line that is not a completed pause."""
    if JDK8_LINE.search(line):
        return parse_jdk8_line(line)
    decorations, message = _split_decorations(line)
    clock = _classify(decorations)
    row = parse_pause(message) or _stall_row(message)
    if row is None:
        if _PAUSE.fullmatch(message) and clock.tags is not None and "start" not in clock.tags:
            raise Malformed(f"a pause result needs its duration, e.g. '... 12.345ms' (truncated line?); {_EXPECTED}")
        return None
    if clock.uptime_s is None and clock.wall_s is None:
        raise Malformed("the pause has no time or uptime decoration; log with "
                        "-Xlog:gc*:file=gc.log:time,uptime,level,tags")
    return {**row, "uptime_s": clock.uptime_s, "wallclock_s": clock.wall_s}


@dataclass
class _Details:
    """Per-collection figures gathered from the lines around the pauses (:mod:`.gc_details`)."""

    region_bytes: int | None = None
    by_gc: dict[int, dict[str, float]] = field(default_factory=dict)

    def read(self, line: str) -> None:
        """Remember what a non-pause line says about a collection (or the region size)."""
        message = _split_decorations(line)[1]
        if self.region_bytes is None:
            self.region_bytes = parse_region_size(message)
        for gc_id, column, value in parse_detail(message):
            self.by_gc.setdefault(gc_id, {})[column] = value

    def of(self, gc_id: int) -> dict[str, float]:
        """The figures of one collection in bytes (region counts need the region size)."""
        figures = self.by_gc.get(gc_id, {})
        regions = self.region_bytes
        if regions is None:
            return {k: v for k, v in figures.items() if k not in _REGION_COLUMNS}
        return {k: v * regions if k in _REGION_COLUMNS else v for k, v in figures.items()}


def _rows(lines: Iterator[tuple[int, str]], tally: Tally) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    details = _Details()
    for line_no, line in lines:
        try:
            row = _line_row(line) if line.strip() else None
        except Malformed as exc:
            tally.malformed(line_no, str(exc))
            continue
        if row is None:
            tally.count("ignored")
            details.read(line)
        else:
            if row["gc_id"] is None:  # JDK 8 numbers no collections: count the pauses
                row["gc_id"] = len(rows)
            elif row["gc_id"] < 0:  # a stall waits on the collection the log last named
                row["gc_id"] = rows[-1]["gc_id"] if rows else 0
            rows.append({**row, "source_line": line_no})
    return [{**row, **details.of(row["gc_id"])} if row["kind"] in _SIZED_KINDS else row for row in rows]


def _frame(rows: list[dict[str, Any]]) -> pd.DataFrame:
    """Typed table; a pause with wall time only gets its uptime from the file's first wall time."""
    frame = pd.DataFrame(rows).reindex(columns=list(GC_LOG_COLUMNS))
    wall = frame["wallclock_s"].astype("float64")
    frame["uptime_s"] = frame["uptime_s"].astype("float64").fillna(wall - wall.min())
    frame["start_s"] = (frame["uptime_s"] - frame["duration_ms"].astype("float64") / 1000.0).round(6)
    dtypes = {"gc_id": "int64", "start_s": "float64", "uptime_s": "float64", "wallclock_s": "float64", "kind": "string",
              "phase": "string", "cause": "string", "heap_before_bytes": "Int64", "heap_after_bytes": "Int64",
              "heap_total_bytes": "Int64", "duration_ms": "float64", "source_line": "int64",
              **dict.fromkeys(DETAIL_COLUMNS, "Int64"), **dict.fromkeys(TIME_COLUMNS, "Float64")}
    return frame.astype(dtypes)


def read_gc_log(path: str | Path, lenient: bool = False, *, max_bytes: int | None = None) -> ImportResult:
    """Read a unified GC log into one row per stop-the-world pause.

    Parameters
    ----------
    path
        The ``-Xlog:gc*``, ``-Xlog:gc`` or JDK 8 ``-verbose:gc`` output file, optionally gzipped.
    lenient
        Skip malformed lines (counted, with their line numbers) instead of raising.
    max_bytes
        Largest input read (after decompression); ``None`` for the default limit.

    Returns
    -------
    ImportResult
        ``frame`` has :data:`GC_LOG_COLUMNS`, one row per pause and per ZGC allocation stall (kind
        ``stall``, ``cause`` the thread that waited): sizes in bytes (null when the collector does not log
        them), G1's per-collection regions, copied bytes and scanned cards where logged
        (:mod:`.gc_details`), ``uptime_s`` in seconds since JVM start when the pause ended, ``start_s`` when it began
        (the name the simulator's ``gc_pauses`` records use), ``duration_ms`` in ms.

    Raises
    ------
    InputError
        At ``file:line`` for the first malformed line in strict mode, or when no pause is found.
    """
    source = Path(path)
    tally = Tally(source, lenient)
    text = read_text(source, max_bytes=max_bytes)
    rows = _rows(numbered_lines(text), tally)
    tally.require_rows(len(rows), f"holds no GC pause lines; {_EXPECTED} (JDK 9+ -Xlog:gc or -Xlog:gc*), or "
                                  f"'<uptime>: [GC pause (<cause>) (young) <before>-><after>(<total>), <seconds> "
                                  f"secs]' (JDK 8 -verbose:gc -XX:+PrintGCTimeStamps)")
    tally.count("lines", line_count(text))
    frame = _frame(rows)
    return tally.result("gc-log", frame)
