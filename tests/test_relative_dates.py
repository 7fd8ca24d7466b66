"""Relative days ("tomorrow", "next Friday", 下周五, 来週の月曜日) keep the date they
meant: the block notes it next to the item, anchored on the day the user said it."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from memory_core.extraction.relative_dates import note, resolve, said_day
from tests.conftest import RunningProxy
from tests.fake_upstream import FakeUpstream
from tests.test_injection import Agent, block_of

MONDAY = datetime(2026, 12, 7, 15, 0, tzinfo=UTC).timestamp()


@pytest.mark.parametrize("text, meant", [
    ("My flight to Tokyo is tomorrow.", [("tomorrow", "Tue 2026-12-08")]),
    ("I had surgery yesterday.", [("yesterday", "Sun 2026-12-06")]),
    ("The pool size is 208 after yesterday's change.", [("yesterday", "Sun 2026-12-06")]),
    ("We ship the day after tomorrow.", [("the day after tomorrow", "Wed 2026-12-09")]),
    ("The review was last Friday.", [("last Friday", "Fri 2026-12-04")]),
    ("The demo is this Thursday.", [("this Thursday", "Thu 2026-12-10")]),
    ("The release is next Friday.",
     [("next Friday", "Fri 2026-12-18 (or Fri 2026-12-11)")]),
    ("The offsite is next Monday.", [("next Monday", "Mon 2026-12-14")]),
    ("Invoices are due in 3 days.", [("in 3 days", "Thu 2026-12-10")]),
    ("We moved two weeks ago.", [("two weeks ago", "Mon 2026-11-23")]),
    ("I start the new job next month.", [("next month", "2027-01")]),
    ("我明天去上海。", [("明天", "Tue 2026-12-08")]),
    ("我们下周五发布，三天后开会。", [("下周五", "Fri 2026-12-18"), ("三天后", "Thu 2026-12-10")]),
    ("下个月搬家。", [("下个月", "2027-01")]),
    ("会議は来週の月曜日です。", [("来週の月曜日", "Mon 2026-12-14")]),
    ("一昨日に申請して、明後日に結果が出ます。",
     [("一昨日", "Sat 2026-12-05"), ("明後日", "Wed 2026-12-09")]),
    # a recurring day, a position in a month, no relative day at all
    ("The standup is on Friday.", []),
    ("We meet the last Friday of the month.", []),
    ("The API timeout is 30 s.", []),
])
def test_a_relative_day_resolves_against_the_day_it_was_said(
        text: str, meant: list[tuple[str, str]]) -> None:
    assert resolve(text, MONDAY) == meant


def test_the_note_names_the_day_said_and_nothing_for_plain_text() -> None:
    assert note("My flight is tomorrow.", MONDAY) == (
        " (said Mon 2026-12-07 UTC: tomorrow = Tue 2026-12-08)")
    assert note("My flight is at 9.", MONDAY) == ""
    # the UTC day: 23:30 UTC is still the Monday
    late = datetime(2026, 12, 7, 23, 30, tzinfo=UTC).timestamp()
    assert said_day(late) == date(2026, 12, 7)


async def test_a_later_conversation_sees_the_date_tomorrow_meant(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    first = Agent(proxy, upstream, session="monday")
    await first.say("My flight to Tokyo is tomorrow.")
    await first.say("我们下周五发布。")
    await proxy.settle()
    rows = {r["text"]: r for r in proxy.engine.list_items()["items"]}
    flight = said_day(rows["My flight to Tokyo is tomorrow."]["created_at"])
    release = said_day(rows["我们下周五发布。"]["created_at"])
    later = Agent(proxy, upstream, session="a week later")
    await later.say("When is my flight to Tokyo?")
    block = block_of(later.upstream_last_user())
    day = flight + timedelta(days=1)
    assert f"My flight to Tokyo is tomorrow. (said {flight:%a} {flight} UTC: tomorrow = " \
           f"{day:%a} {day})" in block, block
    await Agent(proxy, upstream, session="another day").say("我们什么时候发布？")
    block = block_of(upstream.chat_requests[-1]["json"]["messages"][-1]["content"])
    friday = release - timedelta(days=release.weekday()) + timedelta(weeks=1, days=4)
    assert f"下周五 = {friday:%a} {friday}" in block, block
