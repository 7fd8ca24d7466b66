"""Subject keys (memory_core/extraction/subject.py)."""

from __future__ import annotations

import pytest

from memory_core.extraction.subject import en_key


@pytest.mark.parametrize("phrase, action, want", [
    ("apples any more", True, "apples"),
    ("apples anymore", True, "apples"),
    ("more tests", True, "more tests"),  # "more" that is no "any more" stays
])
def test_a_closing_any_more_is_no_part_of_the_key(phrase: str, action: bool, want: str) -> None:
    assert en_key(phrase, action=action) == want
