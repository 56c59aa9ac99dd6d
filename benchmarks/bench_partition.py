"""Benchmark: vectorised Murmur partitioning against the one-value-at-a-time loop.

Workload: 1M strings ``"user_<n>"`` (6 to 11 bytes), Pinot's ``Murmur`` function (Kafka murmur2,
MASK normalizer), 16 partitions. Two figures, both end to end (string in, partition id out):

* vectorised: ``get_partitions(values)``, i.e. UTF-8 encoding, packing and the numpy hash rounds;
  best of ``REPEATS`` runs on all rows;
* scalar loop: ``[get_partition(v) for v in values]`` in plain Python. It is timed on the first
  ``--scalar-rows`` values (100k by default) and extrapolated linearly to the full row count; the
  per-value cost does not depend on the row count, so the extrapolation is fair.

The goal is a ratio of at least 10x. Both paths are also checked to agree on the timed subset.
Run: ``python benchmarks/bench_partition.py [--rows N] [--scalar-rows N]``.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable

import numpy as np
from _timing import best_of as _best_of

from workbench.pinot.partition import get_partition_function

REPEATS = 3
GOAL = 10.0


def best_of(run: Callable[[], object], repeats: int = REPEATS) -> float:
    """Best wall time of ``repeats`` calls, in seconds (see ``_timing.best_of``)."""
    return _best_of(run, repeats)


def main(argv: list[str] | None = None) -> float:
    """Run the benchmark, print the figures and return the speed-up ratio."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--rows", type=int, default=1_000_000, help="values for the vectorised run")
    parser.add_argument("--scalar-rows", type=int, default=100_000, help="values actually timed in the loop")
    args = parser.parse_args(argv)

    values = [f"user_{n}" for n in range(args.rows)]
    subset = values[: min(args.scalar_rows, args.rows)]
    function = get_partition_function("Murmur", 16)

    vector_s = best_of(lambda: function.get_partitions(values))
    scalar_subset_s = best_of(lambda: [function.get_partition(v) for v in subset], repeats=1)
    scalar_s = scalar_subset_s * len(values) / len(subset)
    agree = np.array_equal(function.get_partitions(subset), [function.get_partition(v) for v in subset])

    ratio = scalar_s / vector_s
    print(f"Murmur (murmur2 + MASK), N=16, {len(values):,} strings like 'user_<n>'")
    rate = len(values) / vector_s
    print(f"  vectorised get_partitions : {rate:>13,.0f} values/s  ({vector_s:.3f} s, best of {REPEATS})")
    print(
        f"  scalar get_partition loop : {len(values) / scalar_s:>13,.0f} values/s  "
        f"({scalar_subset_s:.3f} s for {len(subset):,} values, extrapolated to {scalar_s:.2f} s)"
    )
    print(f"  speed-up                  : {ratio:.1f}x (goal >= {GOAL:.0f}x: {'met' if ratio >= GOAL else 'NOT met'})")
    print(f"  paths agree on the subset : {agree}")
    return ratio


if __name__ == "__main__":
    main()
