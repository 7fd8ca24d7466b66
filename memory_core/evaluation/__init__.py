"""Offline evaluations and benchmarks of the memory engine (LoCoMo retrieval, search bench)."""
