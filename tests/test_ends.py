"""A statement that holds until a day it names ("I'm in Paris until Friday", 我这周在上海,
金曜日までパリにいます) keeps its words and is marked with that day in the block, as over
once it has passed (docs/evaluation/memory_replays.md, class 56)."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from memory_core.extraction.ends import end_day, end_note
from memory_core.extraction.relative_dates import said_day
from tests.conftest import RunningProxy
from tests.fake_upstream import FakeUpstream
from tests.test_injection import Agent, block_of

WEDNESDAY = datetime(2026, 12, 9, 15, 0, tzinfo=UTC).timestamp()
DAY = 86400.0


@pytest.mark.parametrize("text, last", [
    ("I'm in Paris until Friday.", date(2026, 12, 11)),
    ("We're in Lisbon until next Friday.", date(2026, 12, 18)),
    ("I'm in Paris till the end of the month.", date(2026, 12, 31)),
    ("I'm in Paris until next week.", date(2026, 12, 13)),
    ("I'm in Paris until Wednesday.", date(2026, 12, 16)),  # said on a Wednesday: a week on
    ("This week I'm working from home.", date(2026, 12, 13)),
    ("I'm working from home this week.", date(2026, 12, 13)),
    ("I'm off today.", date(2026, 12, 9)),
    ("我这周在上海。", date(2026, 12, 13)),
    ("这周我在上海出差。", date(2026, 12, 13)),
    ("我在上海待到周五。", date(2026, 12, 11)),
    ("今週は在宅勤務です。", date(2026, 12, 13)),
    ("金曜日までパリにいます。", date(2026, 12, 11)),
])
def test_a_statement_with_an_end_resolves_its_last_day(text: str, last: date) -> None:
    assert end_day(text, WEDNESDAY) == last


@pytest.mark.parametrize("text", [
    "I live in Berlin.",
    "Today I switched to Vim.",  # a change that lasts, not a state with an end
    "I moved to Berlin last week.",
    "The standup is on Friday.",
    "Tomorrow I have to file the VAT report.",
    "我住在上海。",
    "私は東京に住んでいます。",
])
def test_a_statement_without_an_end_has_none(text: str) -> None:
    assert end_day(text, WEDNESDAY) is None
    assert end_note(text, WEDNESDAY, "", WEDNESDAY + 30 * DAY) == ""


def test_the_note_says_current_up_to_its_last_day_and_over_after_it() -> None:
    text = "I'm in Paris until Friday."
    friday_night = datetime(2026, 12, 11, 23, 59, tzinfo=UTC).timestamp()
    assert end_note(text, WEDNESDAY, "", WEDNESDAY) == " (holds until Fri 2026-12-11)"
    assert end_note(text, WEDNESDAY, "", friday_night) == " (holds until Fri 2026-12-11)"
    assert end_note(text, WEDNESDAY, "", friday_night + 120) == (
        " (held until Fri 2026-12-11; over, not current)")


def test_the_end_is_read_in_the_zone_it_was_said_in() -> None:
    # Thursday 20:00 in Los Angeles is Friday 04:00 UTC: "until Friday" is the LA Friday
    said = datetime(2026, 12, 11, 4, 0, tzinfo=UTC).timestamp()
    la = "America/Los_Angeles"
    assert end_day("I'm in Paris until Friday.", said, la) == date(2026, 12, 11)
    assert end_day("I'm in Paris until Friday.", said) == date(2026, 12, 18)
    # a zone this host does not know reads as UTC, never raises
    assert end_day("I'm in Paris until Friday.", said, "Mars/Olympus") == date(2026, 12, 18)


@pytest.mark.parametrize("text, question", [
    ("I'm in Paris until Friday.", "Which museums in Paris should I see?"),
    ("我这周在上海。", "上海有什么好吃的？"),
    ("今週は在宅勤務です。", "在宅勤務のコツは？"),
])
async def test_a_statement_with_an_end_is_shown_with_its_last_day(
        proxy: RunningProxy, upstream: FakeUpstream, text: str, question: str) -> None:
    first = Agent(proxy, upstream, session="travel")
    await first.say(text)
    await proxy.settle()
    later = Agent(proxy, upstream, session="later")
    await later.say(question)
    block = block_of(later.upstream_last_user())
    (row,) = [r for r in proxy.engine.list_items()["items"] if r["text"] == text]
    last = end_day(text, row["created_at"])
    assert last is not None and said_day(row["created_at"]) <= last
    assert f"{text} " in block and f"(holds until {last:%a} {last})" in block, block
    assert last - said_day(row["created_at"]) <= timedelta(days=7)


def test_the_block_line_marks_the_statement_over_after_its_last_day() -> None:
    from memory_core.assembly.block import _item_line

    row = {"id": 1, "kind": "fact", "status": "active", "source_message_id": 7,
           "evidence": "user", "text": "I'm in Paris until Friday.",
           "created_at": WEDNESDAY, "data": None}
    during = _item_line(row, None, None, 400, (), WEDNESDAY + DAY)
    after = _item_line(row, None, None, 400, (), WEDNESDAY + 3 * DAY)
    assert during == "- [fact · msg 7] I'm in Paris until Friday. (holds until Fri 2026-12-11)"
    assert after == ("- [fact · msg 7] I'm in Paris until Friday."
                     " (held until Fri 2026-12-11; over, not current)")
    # the same request day renders the same bytes (the cached prefix holds all day)
    assert _item_line(row, None, None, 400, (), WEDNESDAY + DAY + 3600) == during
