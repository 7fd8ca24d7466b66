"""How the engine declares a setting: its default, and its range or choices, once.

A setting of the engine is a field of a frozen config dataclass
(:class:`~memory_core.config.MemoryConfig`, :class:`~memory_core.config.CompactionConfig`,
:class:`~memory_core.assembly.budget.ContextConfig`, :class:`~memory_core.search.SearchConfig`,
:class:`~memory_core.search.EmbeddingConfig`). Its default is the field's default;
its range (``low``–``high``, inclusive) or its choices live in the field's metadata::

    soft_budget_tokens: int = field(default=3000, metadata=rng(200, 20000))

``proxy.settings`` takes both from here for its ``[injection]``, ``[compaction]``,
``[context]``, ``[search]``, ``[embedding]`` and ``[storage]`` keys (memory_core cannot
import proxy, so the declaration lives on this side) and refuses a value outside them.
``MemoryConfig.clamped`` (with its compaction) and ``SearchConfig.clamped`` keep a
config built by other callers inside the same ranges (:func:`clamped_fields`);
ContextConfig's and EmbeddingConfig's ranges bound what the loader accepts only.
tests/test_settings_declared.py ties every declaration to config/default.toml, the
environment and docs/configuration.md.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from _typeshed import DataclassInstance

_C = TypeVar("_C", bound="DataclassInstance")


def rng(low: float, high: float) -> dict[str, Any]:
    """Field metadata: the value must lie in ``[low, high]``."""
    return {"range": (low, high)}


def one_of(*choices: str) -> dict[str, Any]:
    """Field metadata: the value must be one of ``choices`` (named in this order in
    the settings loader's error message)."""
    return {"choices": choices}


def clamped_fields(config: _C) -> _C:
    """Return ``config`` (a dataclass) with every field that declares a range limited
    to it, converted back to the field value's type; ``config`` itself when nothing
    changes."""
    changes: dict[str, Any] = {}
    for f in dataclasses.fields(config):
        bounds = f.metadata.get("range")
        if bounds is None:
            continue
        value = getattr(config, f.name)
        fixed = type(value)(max(bounds[0], min(bounds[1], value)))
        if fixed != value:
            changes[f.name] = fixed
    return dataclasses.replace(config, **changes) if changes else config


def default_of(config: type[DataclassInstance], name: str) -> Any:
    """The default that dataclass ``config`` declares for its field ``name`` (a
    ``default_factory`` is called)."""
    f = {f.name: f for f in dataclasses.fields(config)}[name]
    if f.default_factory is not dataclasses.MISSING:
        return f.default_factory()
    return f.default


def choices_of(config: type[DataclassInstance], name: str) -> tuple[str, ...]:
    """The choices that dataclass ``config`` declares for its field ``name``."""
    choices: tuple[str, ...] = {f.name: f for f in dataclasses.fields(config)}[name].metadata[
        "choices"]
    return choices
