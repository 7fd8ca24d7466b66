"""Readings, ages and habits are kept but do not stand (issue 24, the standdev split's
classes): a number read off at a moment or over a past period, a relative's or a pet's
age, a new reading flagged as a change, an "always" that describes how things have gone
lately. Sentences here are in no labelled split; the controls are numbers and rules
the user set, which still stand."""

from __future__ import annotations

import pytest

from memory_core.evaluation.extraction import stands
from memory_core.extraction import extract
from tests.standing_helpers import assert_none_stands, kept_but_not_standing

READINGS = [
    # a number of the moment or of a past period
    "The queue has 310 messages in it right now.",
    "We've had 7 outages so far this quarter.",
    "Last quarter's churn was 3.1%, up from 2.4%.",
    "The grafana panel shows 880 open connections.",
    "The docker image is 1.2 GB, which is way too big for the edge nodes.",
    "目前线上有 2300 个活跃连接。",
    "上周的构建成功率是 92%。",
    "前回のリリースではバグが 14 件でした。",
    "今キューに 310 件のメッセージがあります。",
    "デプロイは 12 分後にタイムアウトしました。",
    # an age of a relative or a pet
    "My son turns 4 in May.",
    "Our cat Luna is 15 now and mostly sleeps.",
    "Priya's twins are 3 and already talk nonstop.",
    # a habit told as it goes on
    "We've been running about 5 km twice a week since spring.",
]


@pytest.mark.parametrize("text", READINGS)
def test_a_reading_or_an_age_is_kept_but_does_not_stand(text: str) -> None:
    kept_but_not_standing(text)  # kept: searchable when the turn asks for it


CHANGED_READINGS = [
    "After the refactor, coverage fell to 74%.",
    "发布之后内存占用涨到了 3.2 GB。",
]


@pytest.mark.parametrize("text", CHANGED_READINGS)
def test_a_new_reading_flagged_as_a_change_does_not_stand(text: str) -> None:
    kept_but_not_standing(text)


LATELY = ["最近他总是加班到很晚。", "このところ電車がいつも遅れる。",
          "Lately the nightly job always fails on Sundays."]


@pytest.mark.parametrize("text", LATELY)
def test_an_always_that_describes_the_recent_past_is_no_rule(text: str) -> None:
    assert_none_stands(text)


SET = [
    "Our goal for this quarter is 40 signups a day.",
    "The retention window is 30 days.",
    "We moved the worker pool to 12 processes last week.",
    "Correction: the cap is 200 requests per minute, not 100.",
    "目标是每周发布两次，预算上限 5 万元。",
    "今のところ上限は 50 件です。",
    "Always keep the logs for 14 days.",
    "以后每次发布前都要跑一遍冒烟测试。",
]


@pytest.mark.parametrize("text", SET)
def test_a_number_or_rule_the_user_set_still_stands(text: str) -> None:
    items = extract(text)
    assert items and any(stands(i) for i in items), items
