"""JVM heap and garbage-collector models of a Pinot server, calibrated from real GC logs.

* :class:`LiveHeap`: live bytes, a static part plus the upsert map (bytes per key from
  :mod:`workbench.pinot.heap`);
* :class:`G1Heap`: G1 as a per-server state the engine drives with allocations
  (:func:`g1_pauses_at_constant_rate` for a constant rate); :class:`G1Params` its parameters;
* :func:`zgc_pauses_at_constant_rate` and :func:`zgc_cycle`: generational ZGC's pauses, allocation
  stalls and CPU share; :class:`ZGCParams` its parameters;
* :func:`fit_g1`: G1 parameters fitted to a log's pauses.

``docs/gc.md`` describes the forms, the probe behind them and the fits.
"""

from workbench.jvm.fit import G1Fit, fit_g1, observed_live_bytes
from workbench.jvm.g1 import G1Heap, g1_pauses_at_constant_rate
from workbench.jvm.g1_params import G1Params, region_bytes
from workbench.jvm.live import LiveHeap
from workbench.jvm.pauses import PAUSE_KINDS, Pause
from workbench.jvm.zgc import ZGCCycle, ZGCParams, zgc_cycle, zgc_pauses_at_constant_rate

__all__ = [
    "PAUSE_KINDS",
    "G1Fit",
    "G1Heap",
    "G1Params",
    "LiveHeap",
    "Pause",
    "ZGCCycle",
    "ZGCParams",
    "fit_g1",
    "g1_pauses_at_constant_rate",
    "observed_live_bytes",
    "region_bytes",
    "zgc_cycle",
    "zgc_pauses_at_constant_rate",
]
