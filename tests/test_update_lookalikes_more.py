"""Updates and look-alikes that the last ones left open (issue 24, kinds 1 and 4): a
value told as changed in Chinese or Japanese is no restatement for write-time dedupe;
another attribute of the same thing ("editor font" after "dark mode in every editor")
is no update; a technology named by a function word or a letter ("Go", "R", "C")
keeps its name in the terms that tell two subjects apart, and two named things each
given a tool of its own ("Python in Vim" / "Go in Helix") are two scopes; an update
naming its subject another way ("continuous integration" / "our CI", mother / mom, DB /
数据库) pairs. Each case has its control:
the same attribute's update, or a restatement, still pairs; and in a pasted chat a reply
("me: agreed") adopts the line just above it, not every line before. Sentences are new, from
no eval split.

The guard cases call the writer's functions on items a real capture stored; the
end-to-end cases run a real Engine with its search indexes and the default embedder
pair, the conversation captured as an agent resends it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory_core.engine import Engine
from memory_core.evaluation.updates import replay
from memory_core.extraction.transcript import other_lines
from memory_core.items import writer
from memory_core.items.aliases import fold_aliases
from memory_core.items.overlap import named_words, terms
from memory_core.items.supersession import attribute_beside
from tests.conftest import sql_read
from tests.replay_helpers import replay_items, status_of


def _ids(tmp: Path, messages: list[str]) -> tuple[Engine, dict[str, int]]:
    """A words-only engine after ``messages``; ``{text: id}`` of every item."""
    engine = Engine(tmp / "d")
    replay(engine, {"id": "r", "messages": [{"content": m} for m in messages]}, "t")
    items = sql_read(engine, lambda c: c.execute("SELECT id, text FROM memory_items").fetchall())
    return engine, {r[1]: r[0] for r in items}


# -- 1. a value told as changed is no restatement ----------------------------------------------
@pytest.mark.parametrize("old_text, new_text", [
    ("返信は日本語でお願いします。", "これからは英語で返信してください。"),
    ("説明は日本語でお願いします。", "これからは英語で説明してください。"),
    ("代码注释请用中文。", "以后代码注释请用英文。"),
])
def test_a_changed_value_with_a_change_marker_is_not_merged_as_said_again(
        tmp_path: Path, old_text: str, new_text: str) -> None:
    engine, ids = _ids(tmp_path, [old_text, new_text])
    try:
        old, new = ids[old_text], ids[new_text]
        rows = engine.store.read_tx(lambda tx: (tx.item_writes.item(new),
                                                tx.item_writes.item(old)))
        assert not writer.same_meaning(*rows)
        assert engine.store.write_tx_sync(writer.merge_duplicate, new, old) is None
    finally:
        engine.close()


def test_a_restatement_with_a_lead_still_merges(tmp_path: Path) -> None:
    # the control: the same value again, dated "from now on", is one rule said twice
    items = replay_items(tmp_path, ["返信は日本語でお願いします。",
                                    "これからも日本語で返信してください。"])
    assert [i["status"] for i in items if i["status"] == "active"] == ["active"], items


@pytest.mark.slow
def test_a_japanese_update_supersedes_the_old_rule_end_to_end(
        tmp_path: Path, embedder: Any) -> None:
    old, new = "返信は日本語でお願いします。", "これからは英語で返信してください。"
    items = replay_items(tmp_path, [old, new], embedder)
    assert (status_of(items, old), status_of(items, new)) == ("superseded", "active"), items


# -- 2. another attribute of the same thing -----------------------------------------------------
@pytest.mark.parametrize("new, old, new_text, old_text, beside", [
    ("preferred editor font", "dark mode editor", "My preferred editor font is now Iosevka.",
     "I prefer dark mode in every editor.", True),
    ("terminal shell", "light theme terminal", "My terminal shell is now zsh.",
     "I like a light theme in my terminal.", True),
    ("browser homepage", "dark background browser", "My browser homepage is now DuckDuckGo.",
     "I keep a dark background in my browser.", True),
    # controls: the old value is a name, or the same attribute
    ("ci server", "jenkins ci", "Our CI server is now GitHub Actions.",
     "We use Jenkins for CI.", False),
    ("editor font", "editor font", "My editor font is now Iosevka.",
     "My editor font is Fira Code.", False),
])
def test_another_attribute_of_one_thing_is_told_apart(
        new: str, old: str, new_text: str, old_text: str, beside: bool) -> None:
    assert attribute_beside(new, old, new_text, old_text) is beside


@pytest.mark.parametrize("messages", [
    ["I prefer dark mode in every editor.", "My preferred editor font is now Iosevka."],
    ["I like a light theme in my terminal.", "My terminal shell is now zsh."],
    ["I keep a dark background in my browser.", "My browser homepage is now DuckDuckGo."],
])
@pytest.mark.slow
def test_another_attribute_leaves_the_first_current(
        tmp_path: Path, embedder: Any, messages: list[str]) -> None:
    items = replay_items(tmp_path, messages, embedder)
    assert status_of(items, messages[0]) == "active", items


@pytest.mark.parametrize("messages", [
    ["My editor font is Fira Code.", "My editor font is now Iosevka."],
    ["We use Jenkins for CI.", "Our CI server is now GitHub Actions."],
])
@pytest.mark.slow
def test_the_same_attribute_is_still_updated(
        tmp_path: Path, embedder: Any, messages: list[str]) -> None:
    items = replay_items(tmp_path, messages, embedder)
    assert status_of(items, messages[0]) == "superseded", items


# -- 3. a technology named by a function word or a letter ---------------------------------------
@pytest.mark.parametrize("text, names", [
    ("I now use VS Code for Go.", {"go"}),
    ("We write the analytics scripts in R.", {"r"}),
    ("The firmware is written in C, I think.", {"c"}),
    ("Let me go home, I said.", set()),  # the verb, the pronoun
    ("Go is what we use.", set()),  # a sentence's first word: no telling
])
def test_a_name_spelled_as_a_function_word_is_kept(text: str, names: set[str]) -> None:
    assert named_words(text) == names
    assert names <= terms(text)


@pytest.mark.parametrize("messages", [
    ["I use Vim for Python.", "I now use VS Code for Go."],
    ["I use RStudio for Python.", "I now use Emacs for R."],
    ["I use CLion for Rust.", "I now use Vim for C."],
    ["I write Python in Vim.", "I now write Go in Helix."],
    ["I test Java with JUnit.", "I now test C with Unity."],
    ["For Python I use Neovim.", "For Go I now use Sublime."],
])
@pytest.mark.slow
def test_a_tool_for_another_language_leaves_the_first_current(
        tmp_path: Path, embedder: Any, messages: list[str]) -> None:
    items = replay_items(tmp_path, messages, embedder)
    assert status_of(items, messages[0]) == "active", items


@pytest.mark.parametrize("messages", [
    ["I use Vim for Go.", "I now use VS Code for Go."],
    ["I use RStudio for R.", "I now use VS Code for R."],
    ["I use Vim for C.", "I now use CLion for C."],
    ["I drive a Honda.", "I now drive a Tesla."],
])
@pytest.mark.slow
def test_a_tool_for_the_same_language_is_an_update(
        tmp_path: Path, embedder: Any, messages: list[str]) -> None:
    items = replay_items(tmp_path, messages, embedder)
    assert status_of(items, messages[0]) == "superseded", items


# -- 5. a pasted chat: a reply adopts the line just above it ------------------------------------
@pytest.mark.parametrize("text, others", [
    ("Alice: we deploy on Mondays now\nBob: staging runs Postgres 15\nme: agreed",
     ["Alice: we deploy on Mondays now\n"]),
    ("Kim: the on-call rota is weekly\nLee: standups are async now\nme: 👍",
     ["Kim: the on-call rota is weekly\n"]),
    ("王伟：周会改到周三\n李娜：预发环境用 Postgres 15\n我：同意",
     ["王伟：周会改到周三\n"]),
    # controls: a reply to a reply, and the user's own answer of another kind
    ("Kim: we ship on Fridays\nRaj: agreed\nme: ok", []),
    ("Kim: we ship on Fridays\nRaj: agreed\nme: I'll push back on that",
     ["Kim: we ship on Fridays\n", "Raj: agreed\n"]),
    # a chain of assents worded otherwise: each agrees with the proposal above it
    ("Priya: code freeze starts on the 20th\nTom: works for me\nme: ok, agreed", []),
    ("Ana: retros move to Fridays\nBo: fine by me\nme: 👍", []),
    ("Ana: retros move to Fridays\nBo: sgtm\nme: yes", []),
    # the control: an answer that is no assent leaves the proposal someone else's
    ("Priya: code freeze starts on the 20th\nTom: that clashes with the launch\nme: ok",
     ["Priya: code freeze starts on the 20th\n"]),
])
def test_a_reply_adopts_the_line_just_above_it(text: str, others: list[str]) -> None:
    assert [text[a:b] for a, b in other_lines(text)] == others



@pytest.mark.parametrize("chat", [
    "Alice: staging runs Postgres 15 now\nBob: the standup moves to 10\nme: agreed",
    "Alice: staging runs Postgres 15 now\nme: I'll check that",
])
def test_a_line_the_user_did_not_adopt_revises_nothing_of_theirs(
        tmp_path: Path, chat: str) -> None:
    old = "Staging runs Postgres 14."
    items = replay_items(tmp_path, [old, chat])
    assert status_of(items, old) == "active", items


def test_a_line_the_user_adopted_still_revises(tmp_path: Path) -> None:
    # the control: the line just above "me: agreed" is the user's update
    old = "Staging runs Postgres 14."
    chat = "Bob: the standup moves to 10\nAlice: staging runs Postgres 15 now\nme: agreed"
    items = replay_items(tmp_path, [old, chat])
    assert status_of(items, old) == "superseded", items


# -- 4. one thing named two ways ----------------------------------------------------------------
@pytest.mark.parametrize("subject, folded", [
    ("continuous integration", "ci"),
    ("denver mother lives", "denver mom lives"),
    ("数据库用的", "db用的"),
    ("motherboard", "motherboard"),  # a word that holds a name is no name
    ("母语", "母语"),
])
def test_two_names_of_one_thing_fold_to_one(subject: str, folded: str) -> None:
    assert fold_aliases(subject) == folded


@pytest.mark.parametrize("messages", [
    ["Our CI runs on Jenkins.", "Continuous integration now runs on GitHub Actions."],
    ["My mom lives in Boston.", "My mother lives in Denver now."],
    ["我们的数据库用的是MySQL。", "我们的DB现在改成PostgreSQL了。"],
])
def test_an_update_naming_its_subject_another_way_supersedes(
        tmp_path: Path, messages: list[str]) -> None:
    items = replay_items(tmp_path, messages)
    assert status_of(items, messages[0]) == "superseded", items


@pytest.mark.parametrize("messages", [
    ["My mom lives in Boston.", "My dad lives in Denver now."],
    ["Our CI runs on Jenkins.", "Our CD now runs on Argo CD."],
])
def test_another_thing_is_no_other_name(tmp_path: Path, messages: list[str]) -> None:
    items = replay_items(tmp_path, messages)
    assert status_of(items, messages[0]) == "active", items
