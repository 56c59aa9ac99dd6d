"""JDK 8's basic GC log (``-verbose:gc`` or ``-XX:+PrintGC``, with time stamps) as pause rows.

Servers still on JDK 8 keep this log: one line per pause, stamped with ``-XX:+PrintGCTimeStamps``
(uptime) and/or ``-XX:+PrintGCDateStamps`` (wall time)::

    2024-01-01T00:00:07.000+0000: 7.000: [GC pause (G1 Evacuation Pause) (young) 112M->24M(256M), 0.0041230 secs]
    7.512: [GC pause (G1 Humongous Allocation) (young) (initial-mark) 102M->89M(256M), 0.0088270 secs]
    7.530: [GC remark, 0.0022040 secs]
    7.540: [GC cleanup 110M->100M(256M), 0.0003000 secs]
    9.000: [GC pause (G1 Evacuation Pause) (mixed) 140M->60M(256M), 0.0200000 secs]
    12.000: [Full GC (Allocation Failure)  245M->200M(256M), 0.5123456 secs]
    3.000: [GC (Allocation Failure)  65536K->1234K(251392K), 0.0051230 secs]     (Parallel, Serial, CMS)

Unlike the unified log, JDK 8 stamps a pause when it *starts*: the row's ``uptime_s`` (when it ended) is
the stamp plus the duration. JDK 8 numbers no collections, so ``gc_id`` counts the pauses. G1's
``initial-mark`` young pause is the one that starts a concurrent cycle (JDK 17's ``Concurrent
Start``), written as the phase ``Young (Initial Mark)``. Concurrent phases (``[GC concurrent-mark-start]``)
are not pauses and are ignored.

``-XX:+PrintGCDetails`` writes a pause over many lines, its first without heap sizes (``[GC pause
(G1 Evacuation Pause) (young), 0.0123 secs]``); that form is refused, as is a pause without any time stamp.
"""

from __future__ import annotations

import re
from typing import Any

from workbench.workload.importers.common import Malformed, parse_timestamp

__all__ = ["JDK8_LINE", "parse_jdk8_line"]

#: A JDK 8 GC record somewhere on the line (what tells a JDK 8 log from a unified one).
JDK8_LINE = re.compile(r"\[(?:GC|Full GC)[ (]|\[GC pause|: \[(?:GC|Full GC)")
_STAMPS = re.compile(r"(?:(?P<date>\d{4}-\d{2}-\d{2})T(?P<clock>\d{2}:\d{2}:\d{2})(?:[.,](?P<fraction>\d+))?"
                     r"(?P<zone>Z|[+-]\d{2}:?\d{2})?:\s*)?(?:(?P<uptime>\d+(?:[.,]\d+)?):\s*)?")
_RECORD = re.compile(r"\[(?P<name>GC pause|GC remark|GC cleanup|Full GC|GC)(?P<body>[^\[\]]*?)"
                     r"(?:,\s*(?P<secs>\d+(?:[.,]\d+)?) secs)?\]")
_SIZE = r"(\d+(?:[.,]\d+)?)([BKMGT])"
_HEAP = re.compile(rf"\s*{_SIZE}->{_SIZE}\({_SIZE}\)\s*$")
_UNIT_BYTES = {"B": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
#: Pause records and what they are: (kind, phase); ``GC pause`` takes its kind from its (young)/(mixed) group.
_NAMED = {"GC remark": ("remark", "Remark"), "GC cleanup": ("cleanup", "Cleanup"), "Full GC": ("full", "Full")}
#: CMS names its two pauses by their cause on a ``[GC (...)`` record; any other cause is a young collection.
_CMS_PAUSES = {"CMS Initial Mark": ("cms_initial_mark", "CMS Initial Mark"), "CMS Final Remark": ("remark", "Remark")}
#: Records that may carry no heap sizes in the basic form (JDK 8u's remark does not print them).
_SIZELESS = frozenset({"GC remark", "GC cleanup"})
_HINT = ("log with -XX:+PrintGC -XX:+PrintGCTimeStamps (and -XX:+PrintGCDateStamps) without PrintGCDetails, "
         "or on JDK 9+ with -Xlog:gc*:file=gc.log:time,uptime,level,tags")


def _bytes(number: str, unit: str) -> int:
    return round(float(number.replace(",", ".")) * _UNIT_BYTES[unit])


def _sizes(body: str) -> tuple[str, dict[str, int | None]]:
    keys = ("heap_before_bytes", "heap_after_bytes", "heap_total_bytes")
    match = _HEAP.search(body)
    if match is None:
        return body, dict.fromkeys(keys)
    values = match.groups()
    sizes = (_bytes(values[0], values[1]), _bytes(values[2], values[3]), _bytes(values[4], values[5]))
    return body[: match.start()], dict(zip(keys, sizes, strict=True))


def _groups(text: str) -> list[str]:
    """The balanced parenthesised groups of ``text``: ``(System.gc()) (young)`` -> ``['System.gc()', 'young']``."""
    groups: list[str] = []
    depth, start = 0, 0
    for index, char in enumerate(text):
        if char == "(":
            depth, start = depth + 1, index + 1 if depth == 0 else start
        elif char == ")" and depth > 0:
            depth -= 1
            if depth == 0:
                groups.append(text[start:index])
    return groups


def _names(name: str, groups: list[str]) -> tuple[str, str, str]:
    """Kind, phase and cause of a record from its name and parenthesised groups."""
    if name in _NAMED:
        return (*_NAMED[name], "; ".join(groups))
    if name == "GC":
        cause = "; ".join(groups)
        return (*_CMS_PAUSES.get(cause, ("young", "Young")), cause)
    kind = "mixed" if "mixed" in groups else "young"
    phase = "Mixed" if kind == "mixed" else "Young (Initial Mark)" if "initial-mark" in groups else "Young"
    return kind, phase, "; ".join(g for g in groups if g not in {"young", "mixed", "initial-mark"})


def parse_jdk8_line(line: str) -> dict[str, Any] | None:
    """The pause on one JDK 8 ``-verbose:gc`` line, ``None`` for a concurrent phase.

    >>> row = parse_jdk8_line("7.512: [GC pause (G1 Humongous Allocation) (young) (initial-mark) "
    ...                       "102M->89M(256M), 0.0088270 secs]")
    >>> row["kind"], row["phase"], row["cause"], row["duration_ms"], row["uptime_s"], row["heap_after_bytes"] >> 20
    ('young', 'Young (Initial Mark)', 'G1 Humongous Allocation', 8.827, 7.520827, 89)
    >>> parse_jdk8_line("7.600: [GC concurrent-mark-start]") is None
    True

    Raises
    ------
    Malformed
        For the ``-XX:+PrintGCDetails`` form, a pause without a time stamp, or a record it cannot read.
    """
    stamps = _STAMPS.match(line.strip())
    assert stamps is not None  # every part of the pattern is optional
    record = _RECORD.match(line.strip(), stamps.end())
    if record is None:
        raise Malformed(f"cannot read this JDK 8 GC log line; expected '<uptime>: [GC pause (<cause>) (young) "
                        f"<before>-><after>(<total>), <seconds> secs]'; {_HINT}")
    name, body = record["name"], record["body"]
    if name == "GC" and body.strip().startswith("concurrent"):
        return None
    rest, sizes = _sizes(body)
    if record["secs"] is None or (sizes["heap_after_bytes"] is None and name not in _SIZELESS):
        raise Malformed(f"this is a JDK 8 GC log line of -XX:+PrintGCDetails (a pause without heap sizes), which is "
                        f"not supported; {_HINT}")
    if stamps["uptime"] is None and stamps["date"] is None:
        raise Malformed(f"this JDK 8 GC log line has no time stamp, so the time between pauses is unknown; {_HINT}")
    duration_ms = float(record["secs"].replace(",", ".")) * 1000.0
    kind, phase, cause = _names(name, _groups(rest))
    try:  # stamped at the start of the pause: the row's times are its end, as in the unified log
        date = stamps["date"]
        wall = None if date is None else parse_timestamp(date, stamps["clock"], stamps["fraction"], stamps["zone"])
    except ValueError:
        raise Malformed(f"time stamp {stamps['date']}T{stamps['clock']} is not a valid date and time") from None
    uptime = None if stamps["uptime"] is None else float(stamps["uptime"].replace(",", "."))
    return {"gc_id": None, "kind": kind, "phase": phase, "cause": cause, **sizes, "duration_ms": duration_ms,
            "uptime_s": _ended(uptime, duration_ms), "wallclock_s": _ended(wall, duration_ms)}


def _ended(stamp_s: float | None, duration_ms: float) -> float | None:
    return None if stamp_s is None else round(stamp_s + duration_ms / 1000.0, 6)
