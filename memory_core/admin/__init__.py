"""Operator work on stored memory: scoped reads, search, export and purge."""
