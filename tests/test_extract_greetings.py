"""A greeting, whom it hails, or an empty opener at the start of a sentence ("Hi,",
"Hey there,", "Hello Priya,", "OK so", 嗨，, こんにちは、) is part of no item: neither
its key nor its text. What follows is read and quoted as if said alone."""

from __future__ import annotations

import pytest

from memory_core.extraction import extract

CASES = [
    # (with the opener, the same said alone)
    ("Hi, I drink my coffee black.", "I drink my coffee black."),
    ("Hey there, my laptop runs Fedora 40.", "my laptop runs Fedora 40."),
    ("Hello Priya, I prefer short answers.", "I prefer short answers."),
    ("Good evening everyone, the standup moved to 9:30.", "the standup moved to 9:30."),
    ("OK so I never eat shellfish.", "I never eat shellfish."),
    ("Okay, so the cache TTL is 15 minutes.", "the cache TTL is 15 minutes."),
    ("嗨，我喜欢喝绿茶。", "我喜欢喝绿茶。"),
    ("你好，我的电脑是16GB内存。", "我的电脑是16GB内存。"),
    ("こんにちは、私は緑茶が好きです。", "私は緑茶が好きです。"),
    ("こんばんは、締め切りは金曜日です。", "締め切りは金曜日です。"),
]


@pytest.mark.parametrize(("greeted", "alone"), CASES)
def test_a_greeting_is_in_no_item(greeted: str, alone: str) -> None:
    plain = [(i.kind, i.subject, i.value, i.text) for i in extract(alone)]
    assert plain, alone  # the sentence alone is memory
    assert [(i.kind, i.subject, i.value, i.text) for i in extract(greeted)] == plain


@pytest.mark.parametrize("text", [
    "Hello World is the first program I wrote.",  # a name, no greeting
    "Well water is safe here.",                    # a well, no opener
    "你好像说过端口是5433。",                          # 你好像: no greeting
    "Oh no, the build broke again.",               # dismay: kept as said
    "Also, I use metric units.",                   # a filler that is no greeting
    "Hi-fi speakers are my hobby.",                # a hyphen joins a word: no mark
    "Hello-world apps are what I teach.",
    "Uh-oh, my laptop runs Fedora 40.",
    "OK Google is my default assistant.",          # a name after "OK"
])
def test_words_that_only_look_like_a_greeting_stay(text: str) -> None:
    items = extract(text)
    assert all(i.text == text for i in items), [(i.text, i.subject) for i in items]


def test_a_greeting_alone_is_no_item() -> None:
    assert extract("Hi there!") == [] and extract("你好！") == []
