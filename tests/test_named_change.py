"""A change or cessation revises only what it names (issue 24, kind 1: false
supersessions by meaning): "We moved the coffee machine to the lobby" is no update of
"My desk is on the third floor", however alike the two embed
(``memory_core.items.named_change``, a guard of ``writer.revise_by_meaning``).

The reading cases call the module; the guard cases call the writer function on items
a real capture stored, with the similarity given (above any floor); the end-to-end
cases run a real Engine with its search indexes and the default embedder pair, the
conversation captured as an agent resends it. Sentences are new, from no eval split.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory_core.engine import Engine
from memory_core.evaluation.updates import replay
from memory_core.items import writer
from memory_core.items.named_change import ends_another, named
from memory_core.search import SearchConfig
from tests.conftest import sql_read
from tests.replay_helpers import replay_items, status_of

FLOOR, MARGIN = SearchConfig().update_similarity, SearchConfig().update_margin


@pytest.mark.parametrize("text, thing", [
    ("The nightly job no longer sends a Slack message, only an email.", "sends a Slack message"),
    ("I don't drink soda anymore.", "drink soda"),
    ("She stopped running marathons last year.", "running marathons last year"),
    ("We moved the coffee machine to the lobby last week.", "the coffee machine"),
    ("我已经不喝奶茶了，改喝水", "喝奶茶了"),
    ("我们把打印机搬到走廊了。", "打印机"),
    ("ピアノ教室にはもう通っていません。", "ピアノ教室には 通っ"),
    ("サーバーを東京リージョンに移しました。", "サーバー"),
    ("I moved to Porto.", None),  # a change of the speaker's own state names no thing
    ("We ported everything to Svelte.", None),
    ("The API timeout is 30 s.", None),
])
def test_what_a_change_or_cessation_names(text: str, thing: str | None) -> None:
    assert named(text) == thing


@pytest.mark.parametrize("new, old, apart", [
    ("We no longer host the docs on Netlify; they are on Pages.", "Our docs are on Netlify.",
     False),
    ("I don't drink soda anymore.", "I drink a lot of soda.", False),
    ("The nightly job no longer sends a Slack message.", "The nightly backup runs at 1 AM.", True),
    ("We moved the coffee machine to the lobby.", "My desk is on the third floor.", True),
    ("我们把打印机搬到走廊了。", "我们办公室在五楼。", True),
    ("我们把打印机搬到走廊了。", "打印机在会议室。", False),
    ("I moved to Porto.", "I live in Lisbon.", False),  # names no thing: not read
    # one word spelled two ways, or cut to two stems: the old item names it
    ("We moved the standup to 10am.", "Our daily stand-up is at 9:30.", False),
    ("I quit smoking last month.", "I smoke a pack a day.", False),
    # a short stem that starts another word is still another word
    ("We no longer run the nightly job.", "Our runtime is Node 20.", True),
])
def test_a_change_ends_another_thing_only_when_the_old_item_never_names_it(
        new: str, old: str, apart: bool) -> None:
    assert ends_another(new, old) is apart


# -- the guard, on items a real capture stored ------------------------------------------------
def _ids(tmp: Path, messages: list[str]) -> tuple[Engine, dict[str, int]]:
    engine = Engine(tmp / "d")
    replay(engine, {"id": "r", "messages": [{"content": m} for m in messages]}, "t")
    items = sql_read(engine, lambda c: c.execute("SELECT id, text FROM memory_items").fetchall())
    return engine, {r[1]: r[0] for r in items}


@pytest.mark.parametrize("old_text, new_text", [
    ("The nightly backup runs at 1 AM.",
     "The nightly job no longer sends a Slack message, only an email."),
    ("My desk is on the third floor.", "We moved the coffee machine to the lobby last week."),
    ("我们办公室在五楼。", "我们把打印机搬到走廊了。"),
])
def test_a_change_of_another_thing_revises_nothing_by_meaning(
        tmp_path: Path, old_text: str, new_text: str) -> None:
    # (what the change names held by the old item: the words pair them at write time)
    engine, ids = _ids(tmp_path, [old_text, new_text])
    try:
        old, new = ids[old_text], next(i for t, i in ids.items() if new_text.startswith(t[:20]))
        row = engine.store.read_tx(lambda tx: tx.item_writes.item(new))
        assert writer.revisable(row), row["text"]
        gone = engine.store.write_tx_sync(lambda tx: writer.revise_by_meaning(
            tx, new, [(old, 0.95)], floor=FLOOR, margin=MARGIN))
        assert gone is None
    finally:
        engine.close()


# -- end to end: the indexer's vector half ------------------------------------------------------


@pytest.mark.slow
@pytest.mark.parametrize("messages", [
    ["The nightly backup runs at 1 AM.",
     "The nightly job no longer sends a Slack message, only an email."],
    ["My desk is on the third floor.", "We moved the coffee machine to the lobby last week."],
    ["我们办公室在五楼。", "我们把打印机搬到走廊了。"],
])
def test_a_change_of_another_thing_keeps_what_was_said_current(
        tmp_path: Path, embedder: Any, messages: list[str]) -> None:
    items = replay_items(tmp_path, messages, embedder)
    assert status_of(items, messages[0]) == "active", items
