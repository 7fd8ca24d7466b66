"""Issue 24 kinds 3 and 9: numbers that stand though nobody fixed them (twelfth pass).
Sentences here are in no labelled split; each case fails before the change it tests,
except the controls.

- A statement that describes how things are holds a number the user did not set
  (:mod:`memory_core.items.description`): a job's progress, an observed rate, an
  inventory, a plan or a forecast, a game's rules, a tool's capability, when a past
  event happened. It is kept and searchable, but does not stand.
- An away note with a place or a state before its "in N min" ("back online in 20
  min", "stuck in traffic") is the break's time, not one set.
- An order that goes on to a result to hand back ("… and show me the log") is a job of
  the moment (kind 9): its number sizes that job; "always" makes it a rule.
- A correction that restates the user's number against a mis-said one ("it's 9
  licences, not 7") stands, though a reading word tells why it changed.
- Controls: quantities the user fixed ("Keep the batch size at 500", "my budget is
  2,000 EUR a month", 我每天跑 5 公里) still stand.
"""

from __future__ import annotations

import pytest

from tests.standing_helpers import assert_none_stands, assert_stands, kept_but_not_standing


@pytest.mark.parametrize("text", [
    "The reindex is about 40% through.",
    "The import has 12 million rows to go and is roughly 75% done.",
    "The rollout is 5 of 9 regions done.",
    "The upload is halfway through, 600 GB of the archive.",
    "迁移进度 70%，还剩两张表。",
])
def test_progress_of_a_job_does_not_stand(text: str) -> None:
    assert_none_stands(text)


@pytest.mark.parametrize("text", [
    "Our canary deploy breaks 1 in 10 times on the first try.",
    "Our sync job errors about 3 times a day.",
    "这个测试十次里有两次超时。",
    "このテストは5回に1回落ちます。",
])
def test_an_observed_rate_does_not_stand(text: str) -> None:
    assert_none_stands(text)


@pytest.mark.parametrize("text", [
    "The archive holds 12,000 scans, about 800 GB in total.",
    "The bucket holds a total of 2.3 million objects.",
    "The photo library is 61,000 pictures altogether.",
    "日志总共有 3 万个文件。",
])
def test_an_inventory_does_not_stand(text: str) -> None:
    assert_none_stands(text)


@pytest.mark.parametrize("text", [
    "The next version is 7.1, expected in September.",
    "Our upcoming release will be 3.0.",
    "The new office is slated for 2 floors of the east wing.",
    "新版本 2.5 计划在六月发布。",
])
def test_a_plan_or_a_forecast_does_not_stand(text: str) -> None:
    assert_none_stands(text)


@pytest.mark.parametrize("text", [
    "The object of the game is to collect 7 cards of one suit.",
    "First player to score 21 wins.",
    "这个游戏的规则是先到 50 分的人赢。",
])
def test_a_game_rule_does_not_stand(text: str) -> None:
    assert_none_stands(text)


@pytest.mark.parametrize("text", [
    "We looked at the driver but it doesn't support Postgres 16.",
    "The old SDK is not compatible with Node 20.",
    "那个库不支持 Java 21。",
    "この拡張はPython 3.13に対応していない。",
])
def test_a_tool_capability_does_not_stand(text: str) -> None:
    assert_none_stands(text)


def test_the_time_of_a_past_event_does_not_stand() -> None:
    assert_none_stands("Outage resolved at 14:07, total downtime 52 minutes.")


@pytest.mark.parametrize("text", [
    "On the train, back online in 20 min.",
    "Running late, online in 15 minutes.",
    "网络断了，10分钟后回来。",
    "電車なので、30分で戻ります。",
])
def test_an_away_note_does_not_stand(text: str) -> None:
    assert_none_stands(text)


@pytest.mark.parametrize("text", [
    "Run the load test with 200 users and show me the p95.",
    "Rerun the flaky spec 30 times, then tell me how many fail.",
    "Benchmark the parser on 500 files and report back.",
])
def test_an_order_with_a_result_to_hand_back_does_not_stand(text: str) -> None:
    kept_but_not_standing(text)


@pytest.mark.parametrize("text", [
    "Always run the flaky spec 3 times and show me the log.",  # says it stands
    "Keep the batch size at 500.",
    "My budget is 2,000 EUR a month.",
    "我每天跑 5 公里。",
    "Retry failed uploads 3 times.",
    "We support Python 3.9 and up.",  # the user's own policy, not a tool's capability
    "Our sprint is 2 weeks long.",
    "The timeout is 45 seconds in all environments.",  # "in all" scopes, sums nothing
])
def test_quantities_the_user_fixed_still_stand(text: str) -> None:
    assert_stands(text)


@pytest.mark.parametrize("text", [
    "Oh wait, it's 9 licences, not 7, we bought two more last month.",
    "Correction: the team is 6 people, not 5, two joined last week.",
])
def test_a_restated_number_stands_as_a_correction(text: str) -> None:
    assert_stands(text)


def test_a_new_reading_against_an_old_one_still_does_not_stand() -> None:
    assert_none_stands("The error count is 41 now, not 12.")
