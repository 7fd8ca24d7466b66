"""Operator commands: ``memory purge``, ``doctor`` (admin and maintenance)."""

from __future__ import annotations

import click


def register(main: click.Group, memory: click.Group) -> None:
    """Add this module's commands to the ``lcm-proxy`` and ``lcm-proxy memory`` groups."""
