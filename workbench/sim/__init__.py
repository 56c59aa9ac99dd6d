"""The SimPy cluster model: brokers, servers with worker threads and GC pauses, and their records."""
