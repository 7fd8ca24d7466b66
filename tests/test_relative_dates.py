"""Relative days ("tomorrow", "next Friday", 下周五, 来週の月曜日) keep the date they
meant: the block notes it next to the item, anchored on the day the user said it, in
the time zone in force when it was said (``X-LCM-Timezone``, else ``capture.timezone``)."""

from __future__ import annotations

import logging
from datetime import UTC, date, datetime, timedelta
from typing import Any

import anthropic
import pytest

from memory_core.extraction.relative_dates import check_zone, note, resolve, said_day
from proxy.log import PlainFormatter
from proxy.settings import SettingsError, load_settings
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


# -- the user's time zone ---------------------------------------------------------------

LA = "America/Los_Angeles"
LATE_SUNDAY_IN_LA = datetime(2026, 12, 7, 2, 0, tzinfo=UTC).timestamp()
"""18:00 on Sunday 6 December in Los Angeles: already Monday 7 December in UTC."""


def test_a_statement_is_read_on_the_day_of_the_zone_it_was_said_in() -> None:
    text = "My flight is tomorrow."
    assert said_day(LATE_SUNDAY_IN_LA, LA) == date(2026, 12, 6)
    assert resolve(text, LATE_SUNDAY_IN_LA, LA) == [("tomorrow", "Mon 2026-12-07")]
    assert note(text, LATE_SUNDAY_IN_LA, LA) == (
        " (said Sun 2026-12-06 America/Los_Angeles: tomorrow = Mon 2026-12-07)")
    # east of UTC the local day starts earlier: 02:00 UTC is 11:00 in Tokyo, same day
    assert note("我明天去上海。", LATE_SUNDAY_IN_LA, "Asia/Tokyo") == (
        " (said Mon 2026-12-07 Asia/Tokyo: 明天 = Tue 2026-12-08)")
    # no zone stored: UTC, the bytes every item stored before zones rendered
    assert note(text, LATE_SUNDAY_IN_LA) == (
        " (said Mon 2026-12-07 UTC: tomorrow = Tue 2026-12-08)")
    assert note(text, LATE_SUNDAY_IN_LA, "") == note(text, LATE_SUNDAY_IN_LA)


def test_a_stored_zone_this_host_cannot_load_is_read_in_utc_and_logged(
        caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.WARNING, logger="memory_core.extraction.relative_dates")
    for _ in range(3):  # the block renders the item on every request: one line
        assert note("We ship tomorrow.", LATE_SUNDAY_IN_LA, "Mars/Olympus_Mons") == (
            " (said Mon 2026-12-07 UTC: tomorrow = Tue 2026-12-08)")
    assert [r.getMessage() for r in caplog.records if "Mars/Olympus_Mons" in r.getMessage()
            ] == ["time zone 'Mars/Olympus_Mons' of a stored statement is unknown on this"
                  " host; its relative days are read in UTC"]


@pytest.mark.parametrize("name", ["-08:00", "UTC-8", "PST8PDT ", "../../etc/passwd",
                                  "/etc/localtime", "America/Nowhere", "a\x00b",
                                  # host files beside the database (Debian): the host's zone
                                  "localtime", "posixrules"])
def test_only_an_iana_zone_name_is_a_zone(name: str) -> None:
    with pytest.raises(ValueError, match="unknown time zone"):
        check_zone(name)
    assert check_zone("UTC") == ""  # stored as no zone: the default's bytes
    assert check_zone(LA) == LA


def test_the_setting_refuses_a_zone_it_does_not_know() -> None:
    assert load_settings(None, environ={"LCM_CAPTURE__TIMEZONE": LA}
                         ).memory_config().timezone == LA
    with pytest.raises(SettingsError, match="LCM_CAPTURE__TIMEZONE.*capture.timezone"):
        load_settings(None, environ={"LCM_CAPTURE__TIMEZONE": "-08:00"})


def _item(proxy: RunningProxy, text: str) -> dict[str, Any]:
    (row,) = [r for r in proxy.engine.list_items()["items"] if r["text"] == text]
    return row


def _zone_kept(proxy: RunningProxy, row: dict[str, Any]) -> Any:
    return proxy.engine.inspect(f"item:{row['id']}")["data"].get("tz")


def _meant(row: dict[str, Any], zone: str) -> str:
    """The note ``row`` must carry when read in ``zone``: its own day there, whatever
    hour of the UTC day the test runs at."""
    day = said_day(row["created_at"], zone)
    nxt = day + timedelta(days=1)
    return f"(said {day:%a} {day} {zone}: tomorrow = {nxt:%a} {nxt})"


async def test_the_header_names_the_zone_said_in_and_the_block_keeps_it(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    said = Agent(proxy, upstream, session="la")
    said.client = said.client.with_options(default_headers={
        "X-LCM-Role": "default", "X-LCM-Session": "la", "X-LCM-Timezone": LA})
    await said.say("My flight to Tokyo is tomorrow.")
    assert "X-LCM-Timezone" not in {k.title() for k in upstream.chat_requests[-1]["headers"]}
    await proxy.settle()
    row = _item(proxy, "My flight to Tokyo is tomorrow.")
    assert _zone_kept(proxy, row) == LA
    # read later from Tokyo: the note is the zone it was said in, not the reader's
    later = Agent(proxy, upstream, session="tokyo")
    later.client = later.client.with_options(default_headers={
        "X-LCM-Role": "default", "X-LCM-Session": "tokyo", "X-LCM-Timezone": "Asia/Tokyo"})
    await later.say("When is my flight to Tokyo?")
    block = block_of(later.upstream_last_user())
    assert "My flight to Tokyo is tomorrow. " + _meant(row, LA) in block, block


async def test_the_header_overrides_the_setting_and_a_bad_one_is_ignored_and_logged(
        make_proxy: Any, upstream: FakeUpstream, caplog: pytest.LogCaptureFixture) -> None:
    proxy = await make_proxy(capture={"timezone": "Asia/Tokyo"})
    plain = Agent(proxy, upstream, session="setting")
    await plain.say("The demo is tomorrow.")
    header = Agent(proxy, upstream, session="header")
    header.client = header.client.with_options(default_headers={
        "X-LCM-Role": "default", "X-LCM-Session": "header", "X-LCM-Timezone": LA})
    await header.say("The audit is tomorrow.")
    bad = Agent(proxy, upstream, session="bad")
    bad.client = bad.client.with_options(default_headers={
        "X-LCM-Role": "default", "X-LCM-Session": "bad", "X-LCM-Timezone": "-08:00"})
    caplog.handler.setFormatter(PlainFormatter())  # formatted as emitted: its request id
    caplog.set_level(logging.WARNING, logger="lcm.scope")
    bad.messages.append({"role": "user", "content": "The review is tomorrow."})
    raw = await bad.client.chat.completions.with_raw_response.create(
        model="m", messages=bad.messages)  # type: ignore[arg-type]
    assert raw.http_response.status_code == 200  # the chat never fails over it
    rid = raw.headers["x-lcm-request-id"]
    (line,) = [ln for ln in caplog.text.splitlines() if "X-LCM-Timezone" in ln]
    assert f"[{rid}]" in line and "'-08:00'" in line and "configured zone is used" in line
    await proxy.settle()
    probe = Agent(proxy, upstream, session="probe")
    await probe.say("What is tomorrow: the demo, the audit or the review?")
    block = block_of(probe.upstream_last_user())
    assert "The demo is tomorrow. " + _meant(_item(proxy, "The demo is tomorrow."),
                                             "Asia/Tokyo") in block, block
    assert "The audit is tomorrow. " + _meant(_item(proxy, "The audit is tomorrow."),
                                              LA) in block, block
    assert "The review is tomorrow. " + _meant(_item(proxy, "The review is tomorrow."),
                                               "Asia/Tokyo") in block, block


async def test_a_queued_extraction_reads_the_zone_stored_with_the_message(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    """A first request that brings a whole history has its messages extracted by
    writer jobs after the capture commits (EXTRACT_INLINE_MESSAGES): the zone comes
    from each stored message, not from the request."""
    from memory_core.capture.jobs import EXTRACT_INLINE_MESSAGES

    agent = Agent(proxy, upstream, session="backfill")
    agent.client = agent.client.with_options(default_headers={
        "X-LCM-Role": "default", "X-LCM-Session": "backfill", "X-LCM-Timezone": LA})
    for n in range(EXTRACT_INLINE_MESSAGES + 1):
        agent.messages += [{"role": "user", "content": f"Note {n}: the build is green."},
                           {"role": "assistant", "content": "Noted."}]
    await agent.say("The launch is tomorrow.")
    await proxy.settle()
    row = _item(proxy, "The launch is tomorrow.")
    assert _zone_kept(proxy, row) == LA
    tz = proxy.engine.store.read_tx(lambda tx: tx.extraction.due(1e12, 10))
    assert tz == []  # nothing left queued


async def test_anthropic_messages_take_the_header_too(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    client = anthropic.AsyncAnthropic(base_url=proxy.root, api_key="sk-ant-test-0123456789",
                                      max_retries=0, default_headers={"X-LCM-Timezone": LA})
    await client.messages.create(model="claude-x", max_tokens=64, messages=[
        {"role": "user", "content": "My dentist appointment is tomorrow."}])
    await proxy.settle()
    row = _item(proxy, "My dentist appointment is tomorrow.")
    assert _zone_kept(proxy, row) == LA
