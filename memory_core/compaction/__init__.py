"""Hierarchical compaction: summary nodes over Level-0 groups, and the cache of active nodes."""
