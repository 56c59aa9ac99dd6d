"""Workloads: the Spark session factory, generators, segment builder, importers and shared schemas."""
