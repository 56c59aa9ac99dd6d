"""Studies: questions answered by running the model, each run through the one run verb.

Analysis (:mod:`workbench.analysis`) is pure functions over tables; the report
(:mod:`workbench.report`) reads files. What runs the model to answer a question lives here, and every
run goes through :func:`workbench.runs.run_scenario` (simulate, summarise, write the run directory):

- :mod:`.sizing`: every run the sizing report of a sweep reads (``workbench studies SWEEP``);
- :mod:`.whatif`: one what-if of a configuration, and a recommendation grown to more servers;
- :mod:`.scale_out`: Pinot's rebalance onto N servers, and p99 before and after (``workbench scale-out``);
- :mod:`.compare`: variants of a scenario side by side;
- :mod:`.uncertainty`: the calibration's parameter uncertainty carried into an answer;
- :mod:`.backtest`: the calibration's back-test against the log;
- :mod:`.pruning` and :mod:`.upsert`: the pruning and upsert-heap studies of the notebooks.

Importing this package imports none of them.
"""
