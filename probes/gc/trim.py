"""Keep the lines of a probe GC log that the workbench reads, and gzip it (fixtures stay small).

Kept: every info-level line (pauses, region counts, concurrent cycles, ZGC cycles and stalls, init),
and the debug lines with copied bytes, scanned cards and the region size. Dropped: per-phase debug
timings, weak-reference processing and metaspace summaries.

Usage: python probes/gc/trim.py IN.log OUT.log.gz
"""

import gzip
import re
import sys

KEEP_DEBUG = re.compile(r"Copied Bytes|Scanned Cards|region size|Scan Heap Roots|Object Copy")


def keep(line: str) -> bool:
    """True for a line the importer or the fits read."""
    return "][info" in line or "][warning" in line or bool(KEEP_DEBUG.search(line))


def main(source: str, target: str) -> None:
    """Write the kept lines of ``source`` to the gzipped ``target``."""
    with open(source, encoding="utf-8") as fin, gzip.open(target, "wt", encoding="utf-8") as fout:
        fout.writelines(line for line in fin if keep(line))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
