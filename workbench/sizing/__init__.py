"""``workbench size``: the cheapest cluster shape that meets the SLO, found by search over the scenario's
``sizing:`` space rather than by simulating a grid (``docs/sizing.md``).

- :mod:`.space`: the ``sizing:`` section, validated, as shapes in lines, priced by the report's rule;
- :mod:`.search`: the search itself, with no simulation in it (bisection on servers, best first);
- :mod:`.run`: shapes simulated through the sweep runner with sequential replications, the answer picked
  by the report's rule, and the sweep directory plus ``sizing.json`` written.
"""

from workbench.sizing.run import SIZING_FILE, replication_stages, size
from workbench.sizing.space import SizingSpace, parse_space

__all__ = ["SIZING_FILE", "SizingSpace", "parse_space", "replication_stages", "size"]
