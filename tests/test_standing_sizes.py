"""Sizes, readings of a machine, a stay's nights, a paper's claims, one-off counts of an
answer's parts, and deadlines (issue 24, the standdev2 split): the first five are kept
but none stands; a deadline stands with no number in it. Sentences here are in no
labelled split; the controls are numbers and rules the user set, which still stand."""

from __future__ import annotations

import pytest

from memory_core.evaluation.extraction import stands
from memory_core.extraction import extract
from tests.standing_helpers import assert_none_stands, assert_stands, kept_but_not_standing

NOT_STANDING = [
    # the size of a thing
    "The garden shed is 3 m long and 2.2 m deep.",
    "Each roll of wallpaper covers 5 square metres.",
    "书桌宽 1.2 米，深 60 厘米。",
    "本棚は高さ1.8メートルです。",
    # a reading of a machine or a model
    "The cache node is at 91% memory and climbing; heap usage at 88%.",
    "The notebook gives an F1 of 0.74 on the test split.",
    "The water bill is $30 higher than usual.",
    "Replication caught up after 12 minutes.",
    "缓存节点内存到了 92%。",
    "キャッシュのメモリ使用率が93%です。",
    # a stay's nights; a span counted back
    "I booked a room in Porto for 3 nights.",
    "我们在杭州住 2 晚。",
    "他们的支付回调已经两天了还没修好，一直报 502。",
    # a paper's claim
    "In the Smith 2019 paper they report a 12% gain with half the data.",
    "那篇文章里说转化率提高了 15%。",
]


@pytest.mark.parametrize("text", NOT_STANDING)
def test_a_size_a_reading_a_stay_or_a_claim_does_not_stand(text: str) -> None:
    assert_none_stands(text)


ONE_OFF = [
    "Turn these notes into a slide deck. Keep it to 8 slides.",
    "For the worksheet you're making, give it 12 questions.",
]


@pytest.mark.parametrize("text", ONE_OFF)
def test_a_count_of_the_answer_at_hand_is_a_one_off(text: str) -> None:
    kept_but_not_standing(text)


DEADLINES = [
    "The deadline for the grant report is end of Q3.",
    "The tax return is due by the end of the month.",
    "最后期限是下周五，不能延期。",
    "納期は来月末です。",
]


@pytest.mark.parametrize("text", DEADLINES)
def test_a_deadline_without_a_number_stands(text: str) -> None:
    assert_stands(text)


STANDING = [
    "Keep the bookshelf under 80 cm wide.",  # a size the user sets
    "Alert when CPU stays above 90% for 10 minutes.",
    "Keep every summary to 5 bullet points from now on.",
    "Leave dairy out of every recipe you suggest.",
    "I get seasick on boats, so leave boat tours out of every itinerary.",
]


@pytest.mark.parametrize("text", STANDING)
def test_a_number_or_a_rule_the_user_set_still_stands(text: str) -> None:
    assert_stands(text)


def test_a_deadline_that_passed_does_not_stand() -> None:
    items = extract("The deadline was yesterday and we missed it.")
    assert not any(stands(i) for i in items), items
