"""Memory items: the writer-side rules (deduplication, supersession, what is standing),
and the in-memory caches assembly reads them from."""
