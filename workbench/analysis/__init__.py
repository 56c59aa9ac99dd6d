"""Statistics, closed-form queueing results and pure plotting functions."""
