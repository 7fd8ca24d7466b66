"""Checks the standing tests share (``tests/test_standing_*.py``): a sentence is
extracted as a capture would (:func:`~memory_core.extraction.extract`, as the user) and
its items scored as the block would (:func:`~memory_core.evaluation.extraction.stands`)."""

from __future__ import annotations

from collections.abc import Callable

from memory_core.evaluation.extraction import stands
from memory_core.extraction import Extracted, extract


def numbered(item: Extracted) -> bool:
    """Whether ``item`` holds a number (``value`` set)."""
    return item.value is not None


def kept_but_not_standing(text: str,
                          keep: Callable[[Extracted], bool] = numbered) -> list[Extracted]:
    """The items of ``text`` that ``keep`` selects, after asserting that there is one
    (kept: searchable when a turn asks for it) and that none stands."""
    items = [i for i in extract(text) if keep(i)]
    assert items, extract(text)
    assert not any(stands(i) for i in items), items
    return items


def assert_stands(text: str) -> None:
    """Assert that an item of ``text`` stands."""
    items = extract(text)
    assert any(stands(i) for i in items), items


def assert_none_stands(text: str) -> None:
    """Assert that no item of ``text`` stands (none at all passes)."""
    items = extract(text)
    assert not any(stands(i) for i in items), items
