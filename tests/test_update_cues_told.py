"""Updates told as a done change without the usual cue words (issue 24, kind 1): a move
or a switch of what one does (搬到…了, 改坐…了), a swapped thing (换号码了), 一本化しました,
に引っ越しました, "As of version 4.0, …", "I have a new accountant, Mr. Lee". Read as
updates they reach supersession (the words half at write time, the vector half once
embedded); plans, wishes, other people and one more of a team stay plain statements.
Wording here differs from tests/data's rows.

The end-to-end cases run a real Engine with its search indexes and the default
embedder pair, the conversation captured as an agent resends it
(``memory_core.evaluation.updates.replay``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory_core.extraction import extract
from tests.replay_helpers import replay_items, status_of


@pytest.mark.parametrize("text", [
    "我上个月搬到苏州了。",
    "她去年跳槽到一家外企了。",
    "我最近改坐地铁上班了。",
    "我换号码了：139 2222 3333。",
    "去年、札幌に引っ越しました。",
    "連絡手段はSlackに一本化しました。",
    "As of version 4.0, free accounts can create only 3 projects.",
    "I have a new accountant, Mr. Lee, since March.",
])
def test_a_change_told_as_done_is_an_update(text: str) -> None:
    found = extract(text)
    assert found and all(e.correction for e in found), found


@pytest.mark.parametrize("text", [
    "我打算明年搬到苏州了。",       # a plan
    "我不想搬到苏州了。",           # a wish
    "我明年会搬到苏州了。",         # a will
    "我下个月搬到苏州。",           # no 了: not done
    "代码换行了。",                 # a line break, not a swap
    "来月、札幌に引っ越します。",   # not done
    "We hired a new engineer, Sam.",          # one more of a team
    "My sister has a new dentist, Dr. Osei.",  # another person's
    "I bought a new car, a red one.",         # no name after the comma
])
def test_a_plan_a_wish_or_another_persons_news_is_no_update(text: str) -> None:
    assert not any(e.correction for e in extract(text)), extract(text)


def test_a_release_lead_is_read_past_for_the_subject() -> None:
    (item,) = extract("As of version 4.0, free accounts can create only 3 projects.")
    assert item.subject is not None and "free accounts" in item.subject, item


@pytest.mark.slow
@pytest.mark.parametrize("messages, gone", [
    (["我住在南京，在新街口上班。", "我上个月搬到苏州了。"], "住在南京"),
    (["我的手机号是 138 0000 1111。", "我换号码了：139 2222 3333。"], "138 0000 1111"),
    (["私は名古屋に住んでいます。", "去年、札幌に引っ越しました。"], "名古屋"),
    (["社内の連絡はメールで行っています。", "連絡手段はSlackに一本化しました。"], "メール"),
    (["Free accounts can create 10 projects.",
      "As of version 4.0, free accounts can create only 3 projects."], "10 projects"),
    (["My accountant is Ms. Brooks in Leeds.",
      "I have a new accountant, Mr. Lee, since March."], "Ms. Brooks"),
])
def test_the_change_supersedes_what_it_revises(tmp_path: Path, embedder: Any,
                                               messages: list[str], gone: str) -> None:
    items = replay_items(tmp_path, messages, embedder)
    assert status_of(items, gone) == "superseded", items
    assert status_of(items, messages[-1][:6]) == "active", items


@pytest.mark.slow
@pytest.mark.parametrize("messages, kept", [
    ([("alice", "我住在南京。"), ("bob", "我上个月搬到苏州了。")], "南京"),  # two people
    (["我妹妹住在南京。", "我上个月搬到苏州了。"], "南京"),                  # another's home
    (["我住在南京。", "我打算明年搬到苏州了。"], "我住在南京"),              # a plan
    (["后端用的是 Go 语言。", "前端最近改用 Svelte 了。"], "Go 语言"),       # two components
    (["My dentist is Dr. Hallam.", "My sister has a new dentist, Dr. Osei."], "Hallam"),
    (["Our designer is Maya.", "We hired a new engineer, Sam."], "Maya"),     # one more
])
def test_look_alikes_revise_nothing(tmp_path: Path, embedder: Any,
                                    messages: list[Any], kept: str) -> None:
    items = replay_items(tmp_path, messages, embedder)
    assert status_of(items, kept) == "active", items


def test_it_in_the_cue_stands_for_the_attribute() -> None:
    (item,) = extract("We bumped it to 8 GB after the OOM incident last week.")
    assert item.correction and item.subject is None, item


@pytest.mark.parametrize("messages, gone", [
    (["The worker memory limit is 4 GB.", "Checking the logs now.",
      "We bumped it to 8 GB after the OOM incident last week."], "4 GB"),
    (["Uploads are capped at 20 MB per file.",
      "we raised it to 50 MB per file following the customer complaints"], "20 MB"),
])
def test_a_change_after_an_event_revises_what_held_before(tmp_path: Path,
                                                          messages: list[str],
                                                          gone: str) -> None:
    # the event is when the change was made, not a condition its value holds under
    items = replay_items(tmp_path, folder="w", messages=messages)
    assert status_of(items, gone) == "superseded", items


def test_a_value_under_an_event_without_a_change_verb_stands_beside(tmp_path: Path) -> None:
    items = replay_items(tmp_path, folder="w", messages=["Retries wait 2 seconds.",
                                     "Retries wait 10 seconds after the first failure."])
    assert status_of(items, "2 seconds") == "active", items
