"""Faithful re-implementations of the Pinot parts the model runs.

Each submodule mirrors one Pinot component and is usable on its own from a notebook: partition
functions, segment pruners, instance selectors, replica-group assignment, the query model, result
caches, the upsert metadata manager and the JVM heap model. Behaviour and test vectors come from
``shared/reference/pinot-behaviour.md``.
"""
