"""MemoryConfig: the engine's settings, frozen and clamped. Never reads the environment.

The proxy's settings loader (``proxy.settings``) builds one of these from the
``[capture]``, ``[injection]``, … tables of the TOML file; every number is clamped
to a safe range here so that the engine can trust it.
"""

from __future__ import annotations

from dataclasses import dataclass


def clamp(value: float, low: float, high: float) -> float:
    """Return ``value`` limited to ``[low, high]``."""
    return max(low, min(high, value))


@dataclass(frozen=True, slots=True)
class MemoryConfig:
    """Engine settings. Units are in the names: ``*_tokens`` are o200k tokens,
    ``*_seconds`` are seconds."""

    enabled: bool = True
    store_raw_json: bool = True

    def clamped(self) -> MemoryConfig:
        """Return a copy with every number inside its documented range."""
        return self
