"""Run one small generation on each Spark master given on the command line; print the checksums.

Used by ``test_generate_cluster.py`` in a fresh process, because one Python process holds one
SparkContext at a time and the test session already has a ``local[2]`` one.

Usage: ``python cluster_job.py OUT SPEC_JSON MASTER...``
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(out: str, spec_json: str, masters: list[str]) -> None:
    from workload_fixtures import spec_of, table

    from workbench.workload.generate import generate_events
    from workbench.workload.spark import get_spark, stop_spark

    results = {}
    for i, master in enumerate(masters):
        spark = get_spark(master, app_name="workbench-cluster-test")
        manifest = generate_events(spark, spec_of(**json.loads(spec_json)), Path(out) / f"run{i}",
                                   table_config=table(), seed=9)
        results[master] = {"checksums": manifest["checksums"], "executor": manifest["executor"]}
        stop_spark()
    print(json.dumps(results))


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], sys.argv[3:])
