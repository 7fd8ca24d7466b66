"""Readings of a moment, a week or a scale, quotes, past values, and orders that only
point back (issue 24, the standdev3 split): each is kept or dropped, but none stands.
Sentences here are in no labelled split; the controls are numbers, rules and traits the
user set, which still stand."""

from __future__ import annotations

import pytest

from tests.standing_helpers import assert_none_stands, assert_stands

NOT_STANDING = [
    # a reading of a moment of the day, or of this week
    "Heart rate this evening: 58 bpm.",
    "Glucose this morning: 6.1 mmol/L.",
    "Called 12 leads this week.",
    "今朝の体重は 62.5 キロ。",
    # what a value used to be; a duration given "now"; a run's failures
    "The bundle used to be 900 KB.",
    "The nightly export takes 55 minutes now; it used to be 20.",
    "Still 4 failures in the auth suite.",
    # a rating on a scale
    "My back pain is a 5 out of 10 today.",
    # a reading of a share, told with a pronoun
    "It's at 87% and still rising.",
    # a quote someone gave; a job's count with a particle
    "The roofer quoted $9,200 for the whole job.",
    "Sent out 14 applications this week.",
    # an irregular past verb of something done, before its count
    "Bought 3 chairs for the patio.",
    "Paid 40 euros for parking.",
    "Made 14 sales calls.",
    # a rise to a figure, a comparison with an earlier period (zh, ja)
    "交接：昨晚 kafka 积压到了 3 万条，重启消费者后恢复了。",
    "三月份销售额 12 万，比二月多了 5%。",
    "本季度利润 8 万，比上季度高了 12%。",
    "引き継ぎ：API のレイテンシが 900ms まで上がりましたが、今は安定しています。",
    # an order that only points back at what was said
    "nope, undo that.",
    "Keep that in mind whenever I ask about recipes.",
    "ok, do that every time I push.",
    # a scope said of what was said before
    "and this applies to every repo going forward.",
    "That's for all the staging boxes from now on.",
]


@pytest.mark.parametrize("text", NOT_STANDING)
def test_a_reading_a_quote_or_a_pointer_does_not_stand(text: str) -> None:
    assert_none_stands(text)


STANDING = [
    "Keep the nightly export under 30 minutes from now on.",
    "Our rate for new clients is $95 an hour.",
    "The retention period is 14 days now, not 7.",
    "The meeting moved to 10:30.",
    "Remember that I'm vegetarian.",
    "The build takes 12 minutes.",
    "我们把超时调到了 60 秒。",
    "We pay 40 euros a month for parking, that's the fixed rate.",
]


@pytest.mark.parametrize("text", STANDING)
def test_a_value_rule_or_trait_the_user_set_still_stands(text: str) -> None:
    assert_stands(text)
