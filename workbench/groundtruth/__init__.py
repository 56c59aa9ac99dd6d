"""A real Apache Pinot, from a pinned release on Maven Central, as the model's ground truth.

Pinot's own jars run the parts the model reproduces (segment creation and its ZK metadata, the broker's
pruners and instance selectors, the servers' query execution and the broker's reduce) on the same table,
rows and queries, and :func:`agreement` compares the two query by query; :func:`pinot_assignment` runs the
controller's instance assignment, segment assignment and rebalance. See ``docs/validation.md``.
"""

from workbench.groundtruth.agreement import (
                                            Agreement,
                                            Disagreement,
                                            agreement,
                                            measured_agreement,
                                            model_segment_metadata,
)
from workbench.groundtruth.build import GroundTruthError, PinotJars, ensure_built
from workbench.groundtruth.controller import (
                                             ControllerAnswer,
                                             ControllerRun,
                                             ControllerTable,
                                             TableAssignment,
                                             pinot_assignment,
                                             tenant_instances,
)
from workbench.groundtruth.harness import PinotAnswer, PinotRun, PinotTable, run_pinot

__all__ = ["Agreement", "ControllerAnswer", "ControllerRun", "ControllerTable", "Disagreement", "GroundTruthError",
           "PinotAnswer", "PinotJars", "PinotRun", "PinotTable", "TableAssignment", "agreement", "ensure_built",
           "measured_agreement", "model_segment_metadata", "pinot_assignment", "run_pinot", "tenant_instances"]
