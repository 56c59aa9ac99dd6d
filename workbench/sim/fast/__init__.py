"""The compiled engine: the SimPy engine's semantics over the same plan, server by server (numba)."""
