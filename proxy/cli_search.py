"""Search-related commands: ``reindex``, ``eval locomo``, ``bench search``."""

from __future__ import annotations

import click


def register(main: click.Group) -> None:
    """Add this module's commands to the ``lcm-proxy`` group."""
