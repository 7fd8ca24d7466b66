"""MemoryConfig: the engine's settings, frozen and clamped. Never reads the environment.

The proxy's settings loader (``proxy.settings``) builds one of these from the
``[capture]`` and ``[injection]`` tables of the TOML file; every number is clamped
to a safe range by :meth:`MemoryConfig.clamped` so that the engine can trust it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass


def clamp(value: float, low: float, high: float) -> float:
    """Return ``value`` limited to ``[low, high]``."""
    return max(low, min(high, value))


_RANGES: dict[str, tuple[float, float]] = {
    "soft_budget_tokens": (200, 20000),
    "idle_resume_seconds": (0, 30 * 86400),
    "max_items": (0, 500),
    "pinned_items": (0, 200),
    "evidence_snippets": (0, 50),
    "snippet_chars": (40, 4000),
    "capture_wait_seconds": (0.05, 30),
}


@dataclass(frozen=True, slots=True)
class MemoryConfig:
    """Engine settings. Units are in the names: ``*_tokens`` are o200k tokens,
    ``*_seconds`` are seconds, ``*_chars`` are characters.

    ``soft_budget_tokens`` default 3000, clamped to 200–20000 (DESIGN §7).
    ``idle_resume_seconds`` (1800 = 30 min): a thread idle longer gets a bootstrap turn.
    ``max_items``: memory items per block; ``pinned_items``: of those, at most this
    many constraints/decisions/preferences shown without a keyword match.
    ``evidence_snippets``/``snippet_chars``: quoted earlier messages not in the request.
    ``quote_tool_output``: tool results may be quoted as evidence (off by default).
    ``capture_wait_seconds``: how long a request waits for its capture before the
    proxy gives up on injection for it and forwards unmodified (fail open).
    """

    enabled: bool = True
    store_raw_json: bool = True
    extract: bool = True
    inject: bool = True
    soft_budget_tokens: int = 3000
    idle_resume_seconds: float = 1800.0
    max_items: int = 40
    pinned_items: int = 15
    evidence_snippets: int = 4
    snippet_chars: int = 400
    quote_tool_output: bool = False
    capture_wait_seconds: float = 2.0
    tools_enabled: bool = False

    def clamped(self) -> MemoryConfig:
        """Return a copy with every number inside its documented range."""
        changes = {}
        for name, (low, high) in _RANGES.items():
            value = getattr(self, name)
            bounded = type(value)(clamp(value, low, high))
            if bounded != value:
                changes[name] = bounded
        return dataclasses.replace(self, **changes) if changes else self
