"""Wrong keys and stray items found by review (issue 24): each class tested on
sentences of its own, with controls that must not change."""

from __future__ import annotations

import pytest

from memory_core.evaluation.extraction import stands
from memory_core.extraction import extract
from memory_core.extraction.prepare import prepare

# -- 1. emoji, emoticons and kaomoji at a clause end change no rule's reading ------------
ADORNED = [
    ("I'm vegetarian, remember that 😊", "I'm vegetarian, remember that"),
    ("My flight lands at Heathrow 🛬, don't forget it :)",
     "My flight lands at Heathrow, don't forget it"),
    ("We release on Thursdays, that's final 💪!", "We release on Thursdays, that's final!"),
    ("我对猫毛过敏，记住这一点^^", "我对猫毛过敏，记住这一点"),
    ("我女儿在读大学，别忘了哦🙏。", "我女儿在读大学，别忘了哦。"),
    ("私は毎朝ジョギングします、覚えておいてね(^_^)", "私は毎朝ジョギングします、覚えておいてね"),
    ("Always answer in Portuguese 🇧🇷🙏.", "Always answer in Portuguese."),
    ("I prefer spaces over tabs ^^", "I prefer spaces over tabs"),
    ("我们的端口是8443！！", "我们的端口是8443！"),
]


def _reading(text: str) -> list[tuple[str, str | None, bool, bool]]:
    return [(i.kind, i.subject, i.lasting, stands(i)) for i in extract(text)]


@pytest.mark.parametrize(("adorned", "plain"), ADORNED)
def test_a_clause_end_adornment_reads_as_the_plain_sentence(adorned: str, plain: str) -> None:
    assert _reading(adorned) == _reading(plain), (extract(adorned), extract(plain))
    assert extract(adorned), adorned


def test_a_kept_clause_after_an_emoji_is_no_stray_item() -> None:
    items = extract("My sister lives in Lyon 🇫🇷, keep that in mind 🙏.")
    assert [(i.kind, i.lasting) for i in items] == [("fact", True)], items
    assert items[0].text == "My sister lives in Lyon"


@pytest.mark.parametrize("text", ["Please don't store this 🙏.", "这个别记😅", "Off the record :)"])
def test_an_opt_out_with_an_emoji_still_opts_out(text: str) -> None:
    assert extract(text) == []


@pytest.mark.parametrize("text", [
    "I ❤️ Python.", "Li: 👍", "The aspect ratio is 16:9", "I use Vim (see below).",
    "We moved 🚀 the launch to May.", "Open app.ts:3:7 next.",
])
def test_symbols_that_are_no_clause_end_stay_as_they_were(text: str) -> None:
    scan = prepare(text)
    assert len(scan) == len(text)
    assert scan == text


# -- 2. a person noun after a time word keeps its first character ------------------------
@pytest.mark.parametrize(("text", "who"), [
    ("现在先生在杭州上班", "先生"),
    ("现在太太在医院工作", "太太"),
    ("现在对象在深圳读研", "对象"),
    ("我先生在银行工作", "先生"),
])
def test_a_person_after_a_time_word_is_the_key(text: str, who: str) -> None:
    items = extract(text)
    assert [i.subject for i in items] == [who], items


def test_now_before_a_person_is_an_update_not_an_order() -> None:
    items = extract("现在先生在杭州上班")
    assert items[0].correction and stands(items[0]), items


@pytest.mark.parametrize("text", ["现在先把这个类拆成两个", "现在先写单元测试"])
def test_now_first_before_an_order_is_still_the_next_step(text: str) -> None:
    assert not any(i.correction for i in extract(text)), extract(text)


# -- 3. a rule's lead words (以后就, 今后就, 往后就) are no key ---------------------------
@pytest.mark.parametrize(("text", "what"), [
    ("要是堵车的话，以后就改成坐地铁", "坐地铁"),
    ("以后就改成每周五发版", "发版"),
    ("往后就改成线上面试", "线上面试"),
])
def test_a_rules_lead_words_are_no_key(text: str, what: str) -> None:
    items = extract(text)
    assert len(items) == 1 and items[0].subject is not None, items
    assert what in items[0].subject, items
    assert not {"以后", "今后", "往后"} & {items[0].subject[:2]}, items


# -- 4. a greeting set off by a spaced dash is an opener ---------------------------------
@pytest.mark.parametrize("text", ["Hey - I drink oat milk.", "Hi — I drink oat milk.",
                                  "Hello – I drink oat milk.", "Hey there - I drink oat milk.",
                                  "Hello—I drink oat milk."])
def test_a_greeting_before_a_dash_is_no_key(text: str) -> None:
    assert _reading(text) == _reading("I drink oat milk."), extract(text)
    assert extract(text)[0].text == "I drink oat milk."


def test_a_hyphen_that_joins_a_word_is_no_dash() -> None:
    assert [i.subject for i in extract("Hi-fi gear is my hobby.")] == ["hi-fi gear"]


# -- 5. a check that asks nothing gives no item ------------------------------------------
@pytest.mark.parametrize("text", ["记住了吗？", "听懂了没有？", "对不对？", "好吗？", "分かった？",
                                  "覚えましたか？", "Got it?", "Make sense?", "Is that clear?"])
def test_a_check_that_asks_nothing_gives_no_item(text: str) -> None:
    assert extract(text) == []


@pytest.mark.parametrize("text", ["记住我的生日了吗？", "Do you know my birthday?",
                                  "私の誕生日を覚えましたか？", "Is that ok with the team?"])
def test_a_question_with_content_is_still_a_question(text: str) -> None:
    assert [i.kind for i in extract(text)] == ["question"], extract(text)
