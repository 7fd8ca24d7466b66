"""Operator work on stored memory: scoped reads, search, export, purge and redact."""
