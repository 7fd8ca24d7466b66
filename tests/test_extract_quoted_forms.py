"""An English sentence that quotes a Japanese form ("Give me 10 example sentences using
~てしまう."; issue 24, the standdev3 split) is read as English: a request for this
answer, not a Japanese statement that stands. A Japanese sentence with many English
words stays Japanese. Sentences here are in no labelled split."""

from __future__ import annotations

import pytest

from memory_core.extraction import extract
from memory_core.extraction.prepare import detect_lang
from tests.standing_helpers import assert_none_stands, assert_stands

QUOTING = [
    "Give me 10 example sentences using ~てしまう.",
    "Make me 8 flashcards for verbs ending in ～ている.",
    "Write 5 short dialogues that use ～ながら.",
]


@pytest.mark.parametrize("text", QUOTING)
def test_an_english_request_quoting_a_japanese_form_is_english(text: str) -> None:
    assert detect_lang(text) == "en"
    assert any(i.kind == "constraint" for i in extract(text)), extract(text)
    assert_none_stands(text)


def test_a_japanese_rule_with_english_words_stays_japanese() -> None:
    text = "来週から PR の review は必ず CI が green になってから merge してください。"
    assert detect_lang(text) == "ja"
    assert_stands(text)
