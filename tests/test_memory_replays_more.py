"""Memory failure kinds from how people talk in long chats, replayed on lcm-proxy
(docs/evaluation/memory_replays.md, rows 117 and on): each test is one class that
failed here."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from memory_core.engine import Engine
from memory_core.extraction import extract, reply
from memory_core.items import writer
from memory_core.items.supersession import other_holders
from memory_core.models import Scope
from tests.conftest import RunningProxy, sql_read
from tests.fake_upstream import FakeUpstream, Reply
from tests.replay_helpers import SCOPE, asked_later, put, rows
from tests.test_injection import Agent, block_of


# -- 117: one value held by another person and by the user ------------------------------------
@pytest.mark.parametrize("first, then", [
    ("My brother lives in Oslo.", "I live in Oslo."),
    ("I live in Oslo.", "My brother lives in Oslo."),
    ("My sister's name is Ana.", "My name is Maria."),
    ("My wife works at Globex.", "I work at Globex."),
])
def test_another_persons_statement_is_neither_restated_nor_rivalled_by_the_users(
        engine: Engine, first: str, then: str) -> None:
    # before: "I live in Oslo." was merged into the brother's item (one term less), and
    # "My name is Maria." was a conflict with the sister's name, "ask the user"
    put(engine, first)
    put(engine, then)
    got = rows(engine)
    assert [r["text"] for r in got] == [first, then], got
    assert all(r["status"] == "active" and r["conflict_with"] is None
               and r["supersedes"] is None for r in got), got


@pytest.mark.parametrize("first, then", [
    # one holder said twice, past an opener: still one statement
    ("My brother lives in Oslo.", "Reminder: my brother lives in Oslo."),
    ("I live in Oslo.", "Just so you know, I live in Oslo."),
])
def test_the_same_holder_restated_is_still_one_item(engine: Engine, first: str,
                                                    then: str) -> None:
    put(engine, first)
    put(engine, then)
    assert len([r for r in rows(engine) if r["status"] == "active"]) == 1, rows(engine)


def test_other_holders_reads_the_actor_of_each() -> None:
    assert other_holders("My brother lives in Oslo.", "I live in Oslo.")
    assert other_holders("我妈妈住在北京。", "我住在北京。")
    assert not other_holders("My brother lives in Oslo.", "My brother lives in Bergen.")
    assert not other_holders("I live in Oslo.", "We live in Oslo.")
    assert not other_holders("The deadline is Friday.", "I live in Oslo.")


async def test_the_users_home_said_after_a_brothers_is_in_another_conversations_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    first = Agent(proxy, upstream, session="family")
    await first.say("My brother lives in Oslo.")
    await first.say("My sister's name is Ana.")
    await proxy.settle()
    second = Agent(proxy, upstream, session="me")
    await second.say("I live in Oslo.")
    await second.say("My name is Maria.")
    await proxy.settle()
    later = Agent(proxy, upstream, session="later")
    await later.say("Where do I live and what's my name?")
    block = block_of(later.upstream_last_user()) or ""
    assert "] I live in Oslo." in block, block
    assert "] My name is Maria." in block, block
    assert "CONFLICTS" not in block, block


# -- 118: a time said before the statement ("Two weeks ago I …") keys it ------------------------
@pytest.mark.parametrize("text, key", [
    ("Two weeks ago I started learning the guitar.", "started learning guitar"),
    ("Three days ago I adopted a puppy.", "adopted puppy"),
    ("Last Tuesday I finished the migration.", "finished migration"),
    ("A couple of months ago I got a dog.", "dog"),
    ("This past weekend we went camping.", "went camping"),
    ("I adopted a puppy three days ago.", "adopted puppy"),
])
def test_a_relative_time_is_no_part_of_the_subject(text: str, key: str) -> None:
    # before: "ago", "last tuesday", "adopted puppy ago"
    (item,) = extract(text)
    assert (item.kind, item.subject, item.text) == ("fact", key, text)


def test_a_time_that_is_the_subject_stays_the_subject() -> None:
    (item,) = extract("Last year was tough.")
    assert item.subject == "tough" and item.text == "Last year was tough."


def test_two_events_said_with_a_time_ago_are_no_rivals(engine: Engine) -> None:
    # before: both keyed "ago", "Three days ago I adopted a puppy." was a conflict
    put(engine, "Two weeks ago I started learning the guitar.")
    put(engine, "Three days ago I adopted a puppy.")
    assert all(r["conflict_with"] is None and r["status"] == "active"
               for r in rows(engine)), rows(engine)


async def test_events_ago_reach_another_conversations_block_without_a_conflict(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    first = Agent(proxy, upstream, session="news")
    await first.say("Two weeks ago I started learning the guitar.")
    await proxy.settle()
    second = Agent(proxy, upstream, session="more news")
    await second.say("Three days ago I adopted a puppy.")
    await proxy.settle()
    later = Agent(proxy, upstream, session="catch up")
    await later.say("When did I adopt the puppy, and when did I start the guitar?")
    block = block_of(later.upstream_last_user()) or ""
    assert "] Three days ago I adopted a puppy." in block, block
    assert "CONFLICTS" not in block, block


def test_a_statement_that_opens_with_neither_holder_is_compared_as_before() -> None:
    # "Dana is my manager." names no holder first: a rewording of "My manager is Dana."
    assert not other_holders("My manager is Dana.", "Reminder: Dana is my manager.")
    assert not other_holders("我的经理是Dana。", "提醒一下，Dana是我的经理。")


# -- 126: a log line pasted without a fence -------------------------------------------------
_LOG = "ERROR 2026-12-06 12:00:01 worker: I always retry 3 times before failing"


@pytest.mark.parametrize("text", [
    _LOG,
    "Got this in the logs:\n" + _LOG,
    "Got this in the logs: " + _LOG,
    "ERROR worker: I always retry 3 times before failing",
    "WARN [main] I always retry 3 times before failing",
    "ERROR:root:I always retry 3 times before failing",
    "WARN app.db: we never use the cache here",
    "E1206 12:00:01.123456 1234 worker.go:42] I always retry 3 times before failing",
    "worker.py:42: I always retry 3 times before failing",
    "src/app.ts:3:7 - error I always retry 3 times before failing",
    "Dec  6 12:00:01 host worker[123]: I always retry 3 times before failing",
])
def test_a_log_record_pasted_without_a_fence_is_no_statement(text: str) -> None:
    # before: each was a fact (or a rule) of the user's, shown in other conversations
    assert extract(text) == [], extract(text)


@pytest.mark.parametrize("text, kept", [
    ("Got this in the logs:\n" + _LOG + "\nI use Postgres 16 for this project.",
     "I use Postgres 16 for this project."),
    ("I use Postgres 16 for this project.\n" + _LOG, "I use Postgres 16 for this project."),
    # a level word before plain words, or a label after it, is a person's sentence
    ("ERROR handling must use Result types.", "ERROR handling must use Result types."),
    ("INFO: Dark mode is easier on my eyes.", "INFO: Dark mode is easier on my eyes."),
])
def test_the_users_own_sentences_beside_a_log_line_are_still_read(text: str, kept: str) -> None:
    assert [i.text for i in extract(text)] == [kept]


async def test_a_pasted_log_line_reaches_no_other_conversations_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [("debugging", "Got this in the logs:\n" + _LOG)],
                              "How many times do I retry before failing?")
    assert "retry 3 times" not in block, block


# -- 130: a first-person past event in chit-chat -----------------------------------------------
@pytest.mark.parametrize("text, key", [
    ("I painted that lake sunrise last year.", "painted lake sunrise"),
    ("Yeah, I painted that lake sunrise last year!", "painted lake sunrise"),
    ("I took this pic two years ago.", "took pic"),
    ("Hey Caroline! I just started a pottery class.", "started pottery class"),
    ("I just adopted a puppy.", "adopted puppy"),
    ("I just joined a hiking club.", "joined hiking club"),
])
def test_a_past_event_with_a_thing_in_it_is_a_fact_about_the_user(text: str, key: str) -> None:
    # before: nothing ("that …" read as pointing at the conversation, "just" as a moment ago)
    (item,) = extract(text)
    assert item.kind == "fact" and item.subject is not None, item
    assert item.subject.startswith(key) and text.endswith(item.text), item


@pytest.mark.parametrize("text", [
    "I just saw your message.", "I just wanted to say thanks!", "I did that yesterday.",
    "I just checked.", "I just did it.", "I tried that.", "I just had a look.",
    "I just made a mistake.", "I just got back from the store.", "I did that one yesterday.",
])
def test_a_throwaway_remark_in_chit_chat_stays_no_item(text: str) -> None:
    assert extract(text) == []


async def test_a_chit_chat_event_reaches_another_conversations_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    first = Agent(proxy, upstream, session="chat")
    await first.say("Hey Caroline! I just started a pottery class.")
    await first.say("Yeah, I painted that lake sunrise last year!")
    await proxy.settle()
    later = Agent(proxy, upstream, session="later")
    await later.say("What pottery class did I start, and when was the lake sunrise?")
    block = block_of(later.upstream_last_user()) or ""
    assert "I just started a pottery class." in block, block
    assert "I painted that lake sunrise last year!" in block, block  # verbatim


# -- 125: a short assent to the assistant's proposal; its reverse, a bare decline ------------
def _conversation(engine: Engine, *turns: tuple[str, str]) -> None:
    """Capture ``turns`` ((role, text), …) as one request of a new conversation, then
    wait for its extraction."""
    messages = [{"role": role, "content": text} for role, text in turns]
    _ticket, fut = engine.capture_request(SCOPE, "r-reply", messages, {})
    fut.result(10)
    engine.flush()


def _active(engine: Engine) -> list[tuple[str, str]]:
    return [(r["kind"], r["text"]) for r in rows(engine) if r["status"] == "active"]


@pytest.mark.parametrize("text, assent", [
    ("yep 👍", True), ("sounds good, let's do that", True), ("ok go ahead", True),
    ("yes please", True), ("let's do it", True), ("👍", True), ("Sure!", True),
    ("好的，就这么办", True), ("はい、お願いします", True),
    ("ok", False), ("thanks!", False), ("好的", False), ("🎉", False),
    ("Yes, but let's use Memcached.", False), ("Let's use Redis.", False),
])
def test_is_assent_reads_the_whole_message(text: str, assent: bool) -> None:
    assert reply.is_assent(text) is assent


@pytest.mark.parametrize("text, asks", [
    ("Would you like me to send you more articles about AI?", True),
    ("I can send a digest. Let me know if you'd like that.", True),
    ("Want me to set it up? 😊", True),
    ("Here is the summary.", False), ("Done! 🎉", False),
])
def test_asks_or_offers_reads_the_last_sentence(text: str, asks: bool) -> None:
    assert reply.asks_or_offers(text) is asks


@pytest.mark.parametrize("assent", [
    "yep 👍", "sounds good, let's do that", "ok go ahead", "yes please", "let's do it",
])
def test_an_assent_makes_the_assistants_proposal_the_users_decision(
        engine: Engine, assent: str) -> None:
    # before: the assent stored nothing (or "let's do it" as a decision naming nothing),
    # and the proposal stayed "not confirmed"
    _conversation(engine, ("user", "Which store should hold the session cache?"),
                  ("assistant", "I suggest we use Redis for the session cache."),
                  ("user", assent))
    got = rows(engine)
    decision = [r for r in got if r["kind"] == "decision" and r["status"] == "active"]
    assert [r["text"] for r in decision] == [
        "I suggest we use Redis for the session cache."], got
    assert not [r for r in got if r["kind"] == "proposal" and r["status"] == "active"], got


@pytest.mark.parametrize("before, reply", [
    # no proposal before it: an assent confirms nothing
    ("Here is the summary of the release notes.", "yep 👍"),
    # an acknowledgement is no assent
    ("I suggest we use Redis for the session cache.", "ok"),
    ("I suggest we use Redis for the session cache.", "thanks!"),
    # a reply that says more is read as itself
    ("I suggest we use Redis for the session cache.", "Yes, but let's use Memcached."),
])
def test_no_assent_or_no_proposal_confirms_nothing(engine: Engine, before: str,
                                                   reply: str) -> None:
    _conversation(engine, ("user", "What next?"), ("assistant", before), ("user", reply))
    assert not any(kind == "decision" and "Redis" in text
                   for kind, text in _active(engine)), rows(engine)


@pytest.mark.parametrize("offer", [
    "Would you like me to send you more articles about AI?",
    "I can send you a weekly digest. Let me know if you'd like that.",
])
def test_a_bare_decline_of_an_offer_keeps_the_users_stored_state(engine: Engine,
                                                                  offer: str) -> None:
    # before: "I'm not interested." superseded "I'm interested in AI." (a bare denial)
    put(engine, "I'm interested in AI.")
    _conversation(engine, ("user", "Thanks for the article."), ("assistant", offer),
                  ("user", "I'm not interested."))
    assert ("fact", "I'm interested in AI.") in _active(engine), rows(engine)


@pytest.mark.parametrize("before, stored, denial", [
    # not after a question or offer: the bare denial takes the state back, as before
    ("Here is the article you asked for.", "I'm interested in AI.", "I'm not interested."),
    # a denial that names its object takes it back after an offer too
    ("Would you like more articles about AI?", "I'm interested in AI.",
     "I'm not interested in AI anymore."),
    # a bare denial that names all the stored state does
    ("Are you still married?", "I'm married.", "I'm not married."),
    # a question naming the declined word is answered about that state: it names
    # more than the denial ("to Anna") and is still taken back
    ("Are you married?", "I'm married to Anna.", "I'm not married."),
])
def test_other_denials_still_take_the_state_back(engine: Engine, before: str, stored: str,
                                                 denial: str) -> None:
    put(engine, stored)
    _conversation(engine, ("user", "Hello."), ("assistant", before), ("user", denial))
    assert ("fact", stored) not in _active(engine), rows(engine)


async def test_an_assent_reaches_another_conversations_block_as_a_decision(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    first = Agent(proxy, upstream, session="plan")
    upstream.push(Reply(content="I suggest we use Redis for the session cache."))
    await first.say("Which store should hold the session cache?")
    await first.say("yep 👍")
    await proxy.settle()
    later = Agent(proxy, upstream, session="later")
    await later.say("What did we pick for the session cache?")
    block = block_of(later.upstream_last_user()) or ""
    assert "[decision" in block and "Redis for the session cache" in block, block
    assert "not confirmed" not in block and "corrects msg" not in block, block


async def test_a_declined_offer_leaves_the_users_interest_in_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    first = Agent(proxy, upstream, session="news")
    await first.say("I'm interested in AI.")
    upstream.push(Reply(content="Would you like me to send you more articles about AI?"))
    await first.say("Send me one article.")
    await first.say("I'm not interested.")
    await proxy.settle()
    later = Agent(proxy, upstream, session="later")
    await later.say("Am I interested in AI?")
    block = block_of(later.upstream_last_user()) or ""
    assert "] I'm interested in AI." in block and "— superseded" not in block, block


# -- 127: a sentence whose clauses are in two languages ----------------------------------------
@pytest.mark.parametrize("text, want", [
    ("我住在上海, but I work remotely for a company in Berlin.",
     [("home", "我住在上海"), ("work remotely", "I work remotely for a company in Berlin.")]),
    ("我住在上海，I work remotely for a company in Berlin.",
     [("home", "我住在上海"), ("work remotely", "I work remotely for a company in Berlin.")]),
    ("東京に住んでいます, but I work remotely for a company in Berlin.",
     [("home", "東京に住んでいます"), ("work remotely", "I work remotely for a company in Berlin.")]),
    ("I live in Tokyo, 仕事はベルリンの会社です。",
     [("home", "I live in Tokyo"), ("仕事", "仕事はベルリンの会社です。")]),
])
def test_each_clause_of_a_mixed_language_sentence_is_read_by_its_own_rules(
        text: str, want: list[tuple[str, str]]) -> None:
    # before: the Chinese or Japanese clause gave nothing (read by the English rules),
    # or the English one nothing (read by the Japanese rules)
    assert [(i.subject, i.text) for i in extract(text)] == want


@pytest.mark.parametrize("text", [
    # one language carries the sentence, holding the other's names: read whole, as before
    "I'm learning 中文, and my teacher says 我的发音很好.",
    "My favourite dish is 饺子, and I cook it every week.",
    "我们用 GitHub Actions 做 CI",
    "我住在上海，但是我在柏林的一家公司远程工作。",
    "I live in Berlin, but I work remotely for a company in Munich.",
])
def test_a_single_language_sentence_is_not_split_by_script(text: str) -> None:
    from memory_core.extraction.prepare import prepare
    from memory_core.extraction.segment import script_clauses
    scan = prepare(text)
    assert script_clauses(scan, 0, len(scan)) == [(0, len(scan))]


@pytest.mark.parametrize("text", [
    # a comma inside brackets, quotes or one token joins no clauses
    "我喜欢这段代码 f(a, b, c) and it works well",
    '我的口头禅是"yes, and I love it"',
    "我常用的参数是 --include=src,tests,docs and it covers the whole repo",
])
def test_a_comma_inside_code_quotes_or_a_token_is_no_script_joint(text: str) -> None:
    # before: "我喜欢这段代码 f(a, b" was a preference of its own, cut inside the call
    from memory_core.extraction.prepare import prepare
    from memory_core.extraction.segment import script_clauses
    scan = prepare(text)
    assert script_clauses(scan, 0, len(scan)) == [(0, len(scan))]
    assert all(i.text == text for i in extract(text)), extract(text)


async def test_both_clauses_of_a_mixed_language_sentence_reach_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("intro", "我住在上海, but I work remotely for a company in Berlin."),
    ], "我住在哪里？ Where is the company I work for?")
    assert "] 我住在上海" in block, block
    assert "] I work remotely for a company in Berlin." in block, block


# -- font size: an order naming the head of a stored attribute ---------------------------------
@pytest.mark.parametrize("order", ["Set my font size to 14.", "Actually, my font size is 14."])
def test_an_order_naming_an_attributes_head_revises_the_one_item_it_heads(
        engine: Engine, order: str) -> None:
    # before: "Set my font size to 14." stored nothing and left 12 current
    put(engine, "My editor font size is 12.")
    put(engine, order)
    assert _active(engine) == [("fact", order)], rows(engine)


@pytest.mark.parametrize("order", ["Set my font size to 14.", "Actually, my font size is 14."])
def test_an_order_naming_a_head_two_items_share_revises_neither(engine: Engine,
                                                                order: str) -> None:
    # before: the correction revised the newest, "terminal font size"
    put(engine, "My editor font size is 12.")
    put(engine, "My terminal font size is 16.")
    put(engine, order)
    active = _active(engine)
    assert ("fact", "My editor font size is 12.") in active, rows(engine)
    assert ("fact", "My terminal font size is 16.") in active, rows(engine)
    assert not any(r["supersedes"] for r in rows(engine)), rows(engine)


# -- 156: a correction that could revise two items -------------------------------------------
def _may_revise(engine: Engine) -> dict[str, list[int]]:
    return {text: data["may_revise"] for text, _, data in _items_data(engine)
            if "may_revise" in data}


@pytest.mark.parametrize("order", ["Set my font size to 14.", "Actually, my font size is 14."])
def test_a_head_two_items_share_links_the_correction_to_both(engine: Engine,
                                                             order: str) -> None:
    # before: "Actually, …" was a third current value linked to nothing, and "Set my
    # font size to 14." was not stored at all
    put(engine, "My editor font size is 12.")
    put(engine, "My terminal font size is 16.")
    put(engine, order)
    assert ("fact", order) in _active(engine), rows(engine)
    assert _may_revise(engine) == {order: [1, 2]}, _items_data(engine)
    assert all(r["conflict_with"] is None for r in rows(engine)), rows(engine)


def test_a_cjk_head_two_items_share_links_the_correction_to_both(engine: Engine) -> None:
    put(engine, "编辑器字体大小是12。")
    put(engine, "终端字体大小是16。")
    put(engine, "更正：字体大小是14。")
    assert _may_revise(engine) == {"更正：字体大小是14。": [1, 2]}, _items_data(engine)


def test_a_head_one_item_qualifies_still_revises_it_unlinked(engine: Engine) -> None:
    put(engine, "My editor font size is 12.")
    put(engine, "My shoe size is 42.")  # another head ("shoe size"), no candidate
    put(engine, "Actually, my font size is 14.")
    assert _may_revise(engine) == {}, _items_data(engine)
    assert rows(engine)[2]["supersedes"] == 1, rows(engine)


def test_another_speakers_items_are_no_candidates(engine: Engine) -> None:
    def say(text: str, speaker: str) -> None:
        engine.store.write_tx_sync(lambda c: writer.store_extracted(
            c, SCOPE, 1, None, extract(text), speaker=speaker))
    say("My editor font size is 12.", "ana")
    say("My terminal font size is 16.", "bo")
    say("Actually, my font size is 14.", "ana")
    assert _may_revise(engine) == {}, _items_data(engine)
    assert rows(engine)[2]["supersedes"] == 1, rows(engine)


@pytest.mark.parametrize("answer, meant", [
    ("I meant the terminal one.", 2),
    ("I meant the editor font size.", 1),
])
def test_naming_which_one_lets_the_correction_revise_it(engine: Engine, answer: str,
                                                        meant: int) -> None:
    # before: "I meant the terminal one." became an item of its own replacing the
    # terminal's 16, and the 14 stayed a third value
    put(engine, "My editor font size is 12.")
    put(engine, "My terminal font size is 16.")
    put(engine, "Actually, my font size is 14.")
    put(engine, answer)
    got = rows(engine)
    assert [r["text"] for r in got] == ["My editor font size is 12.",
                                        "My terminal font size is 16.",
                                        "Actually, my font size is 14."], got
    assert got[2]["status"] == "active" and got[2]["supersedes"] == meant, got
    assert [r["status"] for r in got[:2] if r["id"] != meant] == ["active"], got


@pytest.mark.parametrize("specific", ["My editor font size is 14.",
                                      "Actually, my editor font size is 14."])
def test_the_value_restated_of_one_candidate_settles_which(engine: Engine,
                                                            specific: str) -> None:
    # before: "My editor font size is 14." was a conflict with the editor's 12, and the
    # head-only 14 stayed current beside them
    put(engine, "My editor font size is 12.")
    put(engine, "My terminal font size is 16.")
    put(engine, "Actually, my font size is 14.")
    put(engine, specific)
    got = {r["text"]: r for r in rows(engine)}
    assert _active(engine) == [("fact", "My terminal font size is 16."),
                               ("fact", specific)], got
    assert got["Actually, my font size is 14."]["status"] == "merged", got
    assert got[specific]["supersedes"] == 1 and got[specific]["conflict_with"] is None, got


def test_another_value_of_one_candidate_leaves_the_question_open(engine: Engine) -> None:
    put(engine, "My editor font size is 12.")
    put(engine, "My terminal font size is 16.")
    put(engine, "Actually, my font size is 14.")
    put(engine, "My editor font size is 13.")  # a rival of the 12, not the 14's answer
    got = {r["text"]: r for r in rows(engine)}
    assert got["Actually, my font size is 14."]["status"] == "active", got
    assert got["My editor font size is 13."]["conflict_with"] == 1, got


# -- 159: a bare answer to "which one?" ("The editor one.") --------------------------------------
_WHICH = "Which font size did you mean: the editor's (12) or the terminal's (16)?"


def _font_sizes_asked(engine: Engine, answer: str, asked: str = _WHICH) -> list[dict[str, Any]]:
    put(engine, "My editor font size is 12.")
    put(engine, "My terminal font size is 16.")
    put(engine, "Actually, my font size is 14.")
    _conversation(engine, ("user", "What font size do I use?"), ("assistant", asked),
                  ("user", answer))
    return [r for r in rows(engine) if r["kind"] == "fact"]


@pytest.mark.parametrize("answer, meant", [
    ("The editor one.", 1), ("the terminal", 2), ("Terminal.", 2),
    ("Oh, the editor font size.", 1), ("editor please", 1),
])
def test_a_bare_answer_naming_one_candidate_lets_the_correction_revise_it(
        engine: Engine, answer: str, meant: int) -> None:
    # before: the answer yielded no item, so the 14 stayed current beside both sizes
    got = _font_sizes_asked(engine, answer)
    assert [r["text"] for r in got] == ["My editor font size is 12.",
                                        "My terminal font size is 16.",
                                        "Actually, my font size is 14."], got
    assert got[2]["status"] == "active" and got[2]["supersedes"] == meant, got
    assert [r["status"] for r in got[:2]] == [
        "superseded" if i == meant else "active" for i in (1, 2)], got


@pytest.mark.parametrize("answer, asked", [
    ("The blue one.", _WHICH),  # names neither
    ("Editor and terminal.", _WHICH),  # names both
    ("Neither.", _WHICH),
    ("The editor one.", "I have noted your font size."),  # no question before it
])
def test_a_bare_answer_naming_no_single_candidate_changes_nothing(
        engine: Engine, answer: str, asked: str) -> None:
    got = _font_sizes_asked(engine, answer, asked)
    assert [r["status"] for r in got] == ["active"] * 3, got
    assert got[2]["supersedes"] is None, got
    assert _may_revise(engine) == {"Actually, my font size is 14.": [1, 2]}, _items_data(engine)


@pytest.mark.parametrize("turns", [
    (("user", "I want to start on the project."),
     ("assistant", "Should I open it in the editor or the terminal?"), ("user", "The terminal.")),
    (("user", "Where should I paste the script?"),
     ("assistant", "Do you want to run it from the editor or the terminal?"),
     ("user", "the editor")),
    (("user", "我想开始写项目了。"), ("assistant", "要在编辑器里打开还是在终端里？"),
     ("user", "终端的。")),
])
def test_a_bare_answer_to_a_question_about_something_else_revises_nothing(
        engine: Engine, turns: tuple[tuple[str, str], ...]) -> None:
    # before: any question the answer named a candidate of ("editor or terminal?") let
    # the pending correction supersede it, font size or not
    if turns[0][1].isascii():
        facts = ("My editor font size is 12.", "My terminal font size is 16.",
                 "Actually, my font size is 14.")
    else:
        facts = ("我的编辑器字体大小是12。", "我的终端字体大小是16。", "更正：字体大小是14。")
    for text in facts:
        put(engine, text)
    _conversation(engine, *turns)
    got = {r["text"]: r for r in rows(engine)}
    assert [got[t]["status"] for t in facts] == ["active"] * 3, got
    assert got[facts[2]]["supersedes"] is None, got
    assert _may_revise(engine) == {facts[2]: [1, 2]}, _items_data(engine)


@pytest.mark.parametrize("text, head, want", [
    ("Which font sizes did you mean?", "font size", True),
    ("Editor or terminal?", "font size", False),
    ("What size is the font?", "font size", True),
    ("你是指编辑器的还是终端的字体大小？", "字体大小", True),
    ("要在编辑器里打开还是在终端里？", "字体大小", False),
    ("", "font size", False), ("Which one?", "", False),
])
def test_names_head_reads_each_word_of_the_key(text: str, head: str, want: bool) -> None:
    assert reply.names_head(text, head) is want


def test_a_bare_answer_in_chinese_names_its_candidate(engine: Engine) -> None:
    put(engine, "我的编辑器字体大小是12。")
    put(engine, "我的终端字体大小是16。")
    put(engine, "更正：字体大小是14。")
    assert _may_revise(engine) == {"更正：字体大小是14。": [1, 2]}, _items_data(engine)
    _conversation(engine, ("user", "我的字体大小是多少？"),
                  ("assistant", "你是指编辑器的还是终端的字体大小？"), ("user", "终端的。"))
    got = rows(engine)[:3]  # then the question asked
    assert got[2]["supersedes"] == 2 and [r["status"] for r in got] == [
        "active", "superseded", "active"], got


@pytest.mark.parametrize("answer, head, subjects, want", [
    ("The editor one.", "font size", ["editor font size", "terminal font size"], 0),
    ("the terminal", "font size", ["editor font size", "terminal font size"], 1),
    ("The blue one.", "font size", ["editor font size", "terminal font size"], None),
    ("font size", "font size", ["editor font size", "terminal font size"], None),
    ("I meant the editor one, not the terminal", "font size",
     ["editor font size", "terminal font size"], None),
    ("编辑器那个", "字体大小", ["编辑器字体大小", "终端字体大小"], 0),
    ("蓝色的", "字体大小", ["编辑器字体大小", "终端字体大小"], None),
])
def test_named_candidate_reads_the_qualifier_and_nothing_else(
        answer: str, head: str, subjects: list[str], want: int | None) -> None:
    assert reply.named_candidate(answer, head, subjects) == want


async def test_a_bare_answer_settles_which_in_another_conversations_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    setup = Agent(proxy, upstream, session="setup")
    await setup.say("My editor font size is 12.")
    await setup.say("My terminal font size is 16.")
    await setup.say("Actually, my font size is 14.")
    await proxy.settle()
    later = Agent(proxy, upstream, session="later")
    upstream.push(Reply(content="Which one did you change: the editor or the terminal?"))
    await later.say("What font size do I use?")
    assert "MAY REVISE" in (block_of(later.upstream_last_user()) or "")
    await later.say("The editor one.")
    await proxy.settle()
    after = Agent(proxy, upstream, session="after")
    await after.say("What font size do I use?")
    block = block_of(after.upstream_last_user()) or ""
    assert "MAY REVISE" not in block, block
    assert "] My terminal font size is 16." in block, block
    assert '"My editor font size is 12." — superseded' in block, block


def test_memory_inspect_names_what_a_correction_may_revise(tmp_path: Any) -> None:
    from click.testing import CliRunner

    from proxy.cli import main
    eng = Engine(tmp_path / "d")
    for text in ("My editor font size is 12.", "My terminal font size is 16.",
                 "Actually, my font size is 14."):
        put(eng, text)
    eng.close()
    out = CliRunner().invoke(main, ["memory", "inspect", "item:3", "--data-dir",
                                    str(tmp_path / "d")])
    assert out.exit_code == 0, out.output
    assert "may revise: item:1 or item:2 (unclear which: ask the user)" in out.output, out.output


async def test_a_correction_of_a_shared_head_asks_which_until_the_user_says(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    setup = Agent(proxy, upstream, session="setup")
    await setup.say("My editor font size is 12.")
    await setup.say("My terminal font size is 16.")
    await proxy.settle()
    tweak = Agent(proxy, upstream, session="tweak")
    await tweak.say("Actually, my font size is 14.")
    await proxy.settle()
    later = Agent(proxy, upstream, session="later")
    await later.say("What font size do I use?")
    block = block_of(later.upstream_last_user()) or ""
    # before: three current font sizes, no note
    assert block.count("MAY REVISE") == 1, block
    line = next(ln for ln in block.splitlines() if "MAY REVISE" in ln)
    assert "] Actually, my font size is 14." in line and "ask the user" in line, block
    assert '"My editor font size is 12."' in line and '"My terminal font size is 16."' in line
    await later.say("I meant the terminal one.")
    await proxy.settle()
    after = Agent(proxy, upstream, session="after")
    await after.say("What font size do I use?")
    block = block_of(after.upstream_last_user()) or ""
    assert "MAY REVISE" not in block, block
    assert "] My editor font size is 12." in block, block
    assert '] Actually, my font size is 14. (corrects msg' in block, block
    assert '"My terminal font size is 16." — superseded' in block, block


@pytest.mark.parametrize("order", ["Set my size to M.", "Actually, my size is M."])
def test_a_head_whose_value_has_another_shape_revises_nothing(engine: Engine,
                                                              order: str) -> None:
    # before: "size" heads "font size", so the clothing size M superseded the font's 12
    put(engine, "My font size is 12.")
    put(engine, order)
    # (an order with no item of its own attribute stores nothing, as before the head rule)
    assert ("fact", "My font size is 12.") in _active(engine), rows(engine)
    assert not any(r["supersedes"] for r in rows(engine)), rows(engine)


def test_a_cjk_correction_naming_a_head_revises_the_one_item_it_heads(engine: Engine) -> None:
    put(engine, "编辑器字体大小是12。")
    put(engine, "更正：字体大小是14。")
    assert _active(engine) == [("fact", "更正：字体大小是14。")], rows(engine)


def test_an_order_naming_a_longer_attribute_revises_nothing(engine: Engine) -> None:
    put(engine, "My favourite colour is blue.")
    put(engine, "Change my favourite colour scheme to dark.")
    assert _active(engine) == [("preference", "My favourite colour is blue.")], rows(engine)


async def test_a_font_size_order_reaches_another_block_as_the_current_value(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("setup", "My editor font size is 12."),
        ("tweak", "Set my font size to 14."),
    ], "What font size do I use in my editor?")
    assert "] Set my font size to 14." in block, block
    assert "— superseded" in block and "] My editor font size is 12." not in block, block


# -- 121: the same past event told in two conversations --------------------------------------
def _items_data(engine: Engine) -> list[tuple[str, str, Any]]:
    return sql_read(engine, lambda c: [
        (r["text"], r["status"], json.loads(r["data"] or "{}")) for r in c.execute(
            "SELECT text, status, data FROM memory_items ORDER BY id")])


@pytest.mark.parametrize("text", ["I went hiking with Anna.", "I live in Oslo."])
def test_a_statement_told_in_two_conversations_keeps_each_conversations_time(
        engine: Engine, text: str) -> None:
    # before: one item, both sources, one time (its first)
    _conversation(engine, ("user", "Morning!"), ("assistant", "Hi."), ("user", text))
    _conversation(engine, ("user", "Evening!"), ("assistant", "Hi."), ("user", text))
    ((got, status, data),) = _items_data(engine)  # one item: a restatement, states too
    assert (got, status, len(data["sources"])) == (text, "active", 2), data
    assert len(data["occasions"]) == 2 and data["occasions"] == sorted(data["occasions"])


def test_a_restatement_in_the_same_conversation_is_no_new_occasion(engine: Engine) -> None:
    messages = [{"role": "user", "content": "I went hiking with Anna."},
                {"role": "assistant", "content": "Nice!"},
                {"role": "user", "content": "I went hiking with Anna."}]
    _ticket, fut = engine.capture_request(SCOPE, "r-1", messages, {})
    fut.result(10)
    engine.flush()
    ((_text, _status, data),) = _items_data(engine)
    assert "occasions" not in data, data


def test_a_conversation_said_again_after_another_is_no_new_occasion(engine: Engine) -> None:
    # before: told in A, in B, then again in A: "said in 3 conversations" (A counted twice)
    text = "I went hiking with Anna."
    first = [("user", "Morning!"), ("assistant", "Hi."), ("user", text)]
    _conversation(engine, *first)
    _conversation(engine, ("user", "Evening!"), ("assistant", "Hi."), ("user", text))
    _conversation(engine, *first, ("assistant", "Nice!"), ("user", "What should I pack?"),
                  ("assistant", "Water."), ("user", text))
    ((_text, _status, data),) = [d for d in _items_data(engine) if d[0] == text]
    assert len(data["sources"]) == 3 and len(data["occasions"]) == 2, data


def test_the_line_of_an_event_told_on_two_days_shows_both_days() -> None:
    from memory_core.assembly.block import _occasions_note
    saturday = datetime(2026, 12, 5, 12, tzinfo=UTC).timestamp()
    event = {"text": "I went hiking with Anna.",
             "data": json.dumps({"occasions": [saturday, saturday + 3 * 86400]})}
    assert _occasions_note(event) == \
        " (said in 2 conversations: Sat 2026-12-05, Tue 2026-12-08)"
    state = dict(event, text="I live in Oslo.")
    assert _occasions_note(state) == ""  # a state said twice is one state


async def test_an_event_told_in_two_conversations_shows_both_in_the_block_and_tools(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    from tests.test_memory_tools import call, tool_results
    proxy = await make_proxy(tools={"offer": "always"})
    for session in ("saturday", "sunday"):
        agent = Agent(proxy, upstream, session=session)
        await agent.say("I went hiking with Anna.")
        await proxy.settle()
    later = Agent(proxy, upstream, session="later")
    upstream.push(Reply(content=None, tool_calls=[
        call("memory_search", {"query": "hiking with Anna", "limit": 3})]), Reply(content="ok"))
    await later.say("How many times did I go hiking with Anna?")
    asked = upstream.chat_requests[-2]["json"]["messages"]  # before the tool's result
    block = block_of(next(m["content"] for m in reversed(asked) if m["role"] == "user"))
    assert "I went hiking with Anna. (said in 2 conversations: " in block, block
    (hit,) = [r for r in tool_results(upstream.chat_requests[-1])["call_1"]["results"]
              if r["type"] == "memory:fact"]
    assert len(hit["said_in_conversations"]) == 2, hit
# -- 135: a correction that says what the value "should be" (应该是) ---------------------------
_CHAINS = [
    # before: "应该是" read as a guess ("probably"), so the newest correction was kept
    # tentative beside the older one, both active
    ("构建缓存的过期时间是24小时。", "更正：构建缓存的过期时间是56小时。",
     "其实构建缓存的过期时间应该是17小时。"),
    ("构建缓存的过期时间是24小时。", "更正：构建缓存的过期时间是56小时。", "不对，应该是17小时。"),
    ("构建缓存的过期时间是24小时。", "其实构建缓存的过期时间应该是17小时。"),
    # the same chain in English and Japanese kept its newest value already
    ("The API gateway timeout is 20s.", "Correction: the timeout is 30s.",
     "Actually it should be 45s."),
    ("ログの保存期間は30日です。", "訂正：ログの保存期間は45日です。",
     "実は、ログの保存期間は60日が正しいです。"),
]


@pytest.mark.parametrize("chain", _CHAINS)
def test_each_correction_supersedes_the_value_before_it(engine: Engine,
                                                        chain: tuple[str, ...]) -> None:
    for text in chain:
        put(engine, text)
    got = rows(engine)
    assert [r["status"] for r in got] == ["superseded"] * (len(chain) - 1) + ["active"], got
    assert [r["supersedes"] for r in got[1:]] == [r["id"] for r in got[:-1]], got
    (newest,) = extract(chain[-1])
    assert newest.correction and not newest.tentative, newest


@pytest.mark.parametrize("text", [
    "不对，应该是17小时吧。",  # 吧: a guess after all
    "其实我觉得应该是17小时。",  # another hedge beside it
    "构建缓存的过期时间应该是17小时。",  # no correction cue: "should be" as a guess
    "其实构建缓存的过期时间可能是17小时。",
])
def test_a_guess_said_as_a_correction_stays_tentative(text: str) -> None:
    (item,) = extract(text)
    assert item.tentative, item


async def test_only_the_newest_correction_of_a_chain_is_current_in_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    first = Agent(proxy, upstream, session="build")
    for text in _CHAINS[0]:
        await first.say(text)
    await proxy.settle()
    later = Agent(proxy, upstream, session="later")
    await later.say("构建缓存现在多久过期？")
    block = block_of(later.upstream_last_user()) or ""
    assert "] 其实构建缓存的过期时间应该是17小时。" in block, block
    assert "not confirmed" not in block and "CONFLICTS" not in block, block
    for line in block.splitlines():
        assert "56小时" not in line or "superseded" in line, block


# -- 136: a rule the user set, asked for as a preference ("have I ruled out …?") ----------------
async def test_a_rule_the_user_set_answers_a_preference_question_first(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    # before: "Never …" is stored as a constraint, which a preference question did not
    # ask for, so a preference read in passing (lifted as asked for) ranked above it
    from tests.test_memory_tools import call, tool_results
    proxy = await make_proxy(tools={"offer": "always"})
    first = Agent(proxy, upstream, session="setup")
    for text in ("Never use tabs in the YAML files, please.",
                 "I'd like the rollout to stay quiet if possible.",
                 "The staging cluster has 12 nodes.", "The deploy script lives in ops/deploy.sh."):
        await first.say(text)
    await proxy.settle()
    later = Agent(proxy, upstream, session="later")
    upstream.push(Reply(content=None, tool_calls=[call(
        "memory_search", {"query": "Have I ruled out anything in the YAML files you write?",
                          "limit": 3})]), Reply(content="ok"))
    await later.say("Anything I banned for YAML?")
    results = tool_results(upstream.chat_requests[-1])["call_1"]["results"]
    assert results and results[0]["text"] == "Never use tabs in the YAML files, please.", \
        results


# -- 138: a change order whose value is an email, URL, phone number, handle or path ----------
_ADDRESS_ORDERS = [
    # before: "My work …" read "work" as the verb and stored nothing
    ("My work email is a@b.com.", "Change my email to c@d.com."),
    ("My work website is https://a.org.", "Change my website to https://b.org/me."),
    ("My work phone is 555-123-4567.", "Change my phone to 555-987-6543."),
    # before: a digit inside an address made it "a number", another shape than the order's
    ("My work email is jon1984@x.com.", "Change my email to jon@x.com."),
    ("My personal website is https://a.org.", "Change my website to https://b2.org/me."),
    ("My GitHub handle is @old.", "Change my handle to @new2."),
    ("My build directory is /home/a/src.", "Set my directory to /home/c2/src."),
    ("我的工作邮箱是 a1@b.com", "把我的邮箱改成 c@d.com"),
    ("仕事用のメールアドレスは a1@b.com です", "メールアドレスを c@d.com に変更して"),
]


@pytest.mark.parametrize("first, order", _ADDRESS_ORDERS)
def test_an_order_with_an_address_value_revises_the_attribute(engine: Engine, first: str,
                                                              order: str) -> None:
    put(engine, first)
    put(engine, order)
    assert _active(engine) == [("fact", order)], rows(engine)
    assert rows(engine)[1]["supersedes"] == rows(engine)[0]["id"], rows(engine)


@pytest.mark.parametrize("text, subject", [
    ("My work email is a@b.com.", "work email"), ("My work laptop is a Dell.", "work laptop"),
    ("My kids work at Google.", "kids"), ("My parents live in Lyon.", "parents")])
def test_a_verb_word_right_after_my_is_a_noun(text: str, subject: str) -> None:
    (item,) = extract(text)
    assert item.kind == "fact" and item.subject == subject, item


# -- issue 24: adjectives before a verb-word noun; a Japanese order's を…に ------------------
@pytest.mark.parametrize("text, subject", [
    ("My current work email is x@y.com.", "work email"),
    ("My old work email was a@b.com.", "old work email"),
    ("My main work laptop is a Dell.", "main work laptop"),
    ("My personal work phone is 555-123-4567.", "personal work phone"),
    ("The main run time is 5 minutes.", "main run time"),
    ("My old kids work at Google.", "old kids"), ("My parents live in Oslo.", "parents")])
def test_adjectives_between_my_and_a_verb_word_keep_it_a_noun(text: str, subject: str) -> None:
    # before: "My current work email is …" read "work" as the verb and stored nothing;
    # "My main work laptop is a Dell." was keyed "main"
    (item,) = extract(text)
    assert item.kind == "fact" and item.subject == subject, item


@pytest.mark.parametrize("order, key", [
    ("フォントサイズを14に変更して", "フォントサイズ"),
    ("フォントサイズを14に設定して", "フォントサイズ"),
    ("フォントサイズを14にして", "フォントサイズ"),
    ("メールアドレスをc@d.comに変更して", "メールアドレス")])
def test_a_japanese_order_is_keyed_by_its_attribute_not_its_value(order: str,
                                                                  key: str) -> None:
    # before: keyed "フォントサイズを14", "メールアドレスをc@dcom"; "…にして" and "…に設定して"
    # were no item at all
    (item,) = extract(order)
    assert item.kind == "fact" and item.correction and item.subject == key, item


@pytest.mark.parametrize("first, order", [
    ("フォントサイズは12です", "フォントサイズを14に変更して"),
    ("フォントサイズは12です", "フォントサイズを14に設定して"),
    ("フォントサイズは12です", "フォントサイズを14にして"),
    ("メールアドレスはa@b.comです", "メールアドレスをc@d.comに変更して")])
def test_a_japanese_order_revises_the_attribute_it_names(engine: Engine, first: str,
                                                         order: str) -> None:
    put(engine, first)
    put(engine, order)
    assert _active(engine) == [("fact", order)], rows(engine)
    assert rows(engine)[1]["supersedes"] == rows(engine)[0]["id"], rows(engine)


@pytest.mark.parametrize("text", ["静かにして", "部屋を片付けてから寝ます"])
def test_a_plain_japanese_request_is_no_change_order(text: str) -> None:
    assert not any(item.correction for item in extract(text)), extract(text)


def test_a_number_stays_another_shape_than_an_address(engine: Engine) -> None:
    put(engine, "My font size is 12.")
    put(engine, "Set my size to M2@x.com.")  # no number once the address is cut out
    assert ("fact", "My font size is 12.") in _active(engine), rows(engine)
    assert not any(r["supersedes"] for r in rows(engine)), rows(engine)


def test_an_address_stays_unmasked_a_password_masked() -> None:
    # redaction runs before extraction: an email is no secret, a password stays one
    from memory_core.capture.redact import redact_text
    text = "My work email is jon1984@x.com."
    assert redact_text(text, secrets=True, identity=True) == text
    assert "hunter2!x" not in redact_text("My work password is hunter2!x", secrets=True,
                                          identity=True)


async def test_an_email_order_reaches_another_block_as_the_current_value(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("setup", "My work email is jon1984@x.com."),
        ("tweak", "Change my email to jon@x.com."),
    ], "What is my work email?")
    assert "] Change my email to jon@x.com." in block, block
    assert "] My work email is jon1984@x.com." not in block, block


# -- 137: an order keyed by its attribute alone, about one component of several ---------------
async def test_two_components_orders_both_reach_another_block_as_current(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    # before: both orders were keyed 级别, so the payment order superseded the login one
    block = await asked_later(proxy, upstream, [
        ("login", "登录表单的日志太吵了，把级别降到debug。"),
        ("payments", "支付服务的日志太吵了，把级别调到warn。"),
    ], "登录表单的日志级别现在是什么？")
    lines = [ln for ln in block.splitlines() if "级别" in ln and ln.startswith("- [")]
    assert any(ln.endswith("] 登录表单的日志太吵了，把级别降到debug。") for ln in lines), block
    assert not any("supersed" in ln for ln in lines), block


# -- 150–156: occasions kept through merges; history re-sent is no new telling ---------------
def _said(engine: Engine, scope: Scope, *turns: tuple[str, str], request: str = "r") -> None:
    """Capture ``turns`` as one request under ``scope`` (its own session: a new
    conversation for the prefix fingerprint), then wait for its extraction."""
    messages = [{"role": role, "content": text} for role, text in turns]
    _ticket, fut = engine.capture_request(scope, request, messages, {})
    fut.result(10)
    engine.flush()


def _item(engine: Engine, text: str) -> tuple[str, dict[str, Any]]:
    ((status, data),) = [(s, d) for t, s, d in _items_data(engine) if t == text]
    return status, data


_HIKE = "I went hiking with Anna."
_SAT, _SUN, _MON = (Scope("t", "coder", s) for s in ("sat", "sun", "mon"))


@pytest.mark.parametrize("told, stronger", [
    # a fact told in two conversations, restated as a rule in a third (absorbed)
    ("Release tags always get signed with the team key.",
     "From now on, always sign every release tag with the team key."),
    # said again with more detail in a third (the fuller wording absorbs it)
    ("My manager is Dana.", "My manager is Dana Smith."),
])
def test_an_item_absorbed_by_a_stronger_or_fuller_one_gives_it_its_occasions(
        engine: Engine, told: str, stronger: str) -> None:
    # before: the kept item had every source but no occasions (one conversation's time)
    _said(engine, _SAT, ("user", "Morning!"), ("assistant", "Hi."), ("user", told))
    _said(engine, _SUN, ("user", "Evening!"), ("assistant", "Hi."), ("user", told))
    _said(engine, _MON, ("user", "Hey."), ("assistant", "Hi."), ("user", stronger))
    status, dropped = _item(engine, told)
    kept_status, kept = _item(engine, stronger)
    assert (status, kept_status) == ("merged", "active")
    assert len(kept["sources"]) == 3 and kept["sources"][:2] == dropped["sources"], kept
    assert kept["occasions"][:2] == dropped["occasions"], kept
    assert len(kept["occasions"]) == 3 == len(set(kept["occasion_threads"])), kept
    assert kept["occasions"] == sorted(kept["occasions"]), kept


def test_an_item_absorbed_in_the_conversation_that_told_it_adds_no_occasion(
        engine: Engine) -> None:
    told = "Release tags always get signed with the team key."
    first = [("user", "Morning!"), ("assistant", "Hi."), ("user", told), ("assistant", "Ok.")]
    _said(engine, _SAT, *first[:3])
    _said(engine, _SAT, *first, ("user", "From now on, always sign every release tag"
                                         " with the team key."))
    (kept,) = [d for _t, s, d in _items_data(engine) if s == "active"]
    assert len(kept["sources"]) == 2 and "occasions" not in kept, kept


_TOLD = [("user", "Morning!"), ("assistant", "Hi."), ("user", _HIKE), ("assistant", "Nice!"),
         ("user", "What should I pack?"), ("assistant", "Water.")]


@pytest.mark.parametrize("replay", [
    # an agent that resumes the conversation in a new session, all of it resent
    [*_TOLD, ("user", "Thanks!")],
    # the same with today's system prompt above it
    [("system", "Today is Monday."), *_TOLD, ("user", "Thanks!")],
    # a window: the oldest turns dropped
    [*_TOLD[1:], ("user", "Thanks!")],
    # a fork of the conversation in a new session, after the event
    [*_TOLD[:4], ("user", "Where should we go next?")],
])
def test_history_resent_in_a_new_session_is_no_new_occasion(
        engine: Engine, replay: list[tuple[str, str]]) -> None:
    # before: "said in 2 conversations", the second stamped at the re-send
    _said(engine, _SAT, *_TOLD[:3])
    _said(engine, _SUN, *replay, request="r-2")
    status, data = _item(engine, _HIKE)
    assert status == "active" and len(data["sources"]) == 2, data  # every source kept
    assert len(data.get("occasions", [])) <= 1, data


def test_history_resent_with_a_new_system_prompt_in_one_session_is_no_new_occasion(
        engine: Engine) -> None:
    # before: the new system prompt made every message new (another path), each
    # statement a restatement "said in 2 conversations"
    _said(engine, SCOPE, ("system", "Today is Monday."), *_TOLD[:3])
    _said(engine, SCOPE, ("system", "Today is Tuesday."), *_TOLD, ("user", "Thanks!"),
          request="r-2")
    _status, data = _item(engine, _HIKE)
    assert len(data["sources"]) == 2 and len(data.get("occasions", [])) <= 1, data


@pytest.mark.parametrize("second, occasions", [
    # the opener resent as history (its answer and more after it): the same message
    ([("user", _HIKE), ("assistant", "Nice!"), ("user", "Anything else?")], 1),
    # the same words as the newest turn of a new conversation: told again
    ([("user", _HIKE)], 2),
    # the same words after other turns: told again
    ([("user", "Evening!"), ("assistant", "Hi."), ("user", _HIKE)], 2),
])
def test_the_same_words_are_a_new_telling_unless_resent_with_their_history(
        engine: Engine, second: list[tuple[str, str]], occasions: int) -> None:
    _said(engine, _SAT, ("user", _HIKE))
    _said(engine, _SUN, *second, request="r-2")
    _status, data = _item(engine, _HIKE)
    assert len(data["sources"]) == 2 and len(data.get("occasions", [1])) == occasions, data


def test_a_resent_conversation_told_again_later_counts_once(engine: Engine) -> None:
    # the thread that resent it is that conversation, continued: told there again, and
    # back in the first, no new occasion; a third conversation is one
    _said(engine, _SAT, *_TOLD[:3])
    resumed = [*_TOLD, ("user", "Thanks!")]
    _said(engine, _SUN, *resumed, request="r-2")
    _said(engine, _SUN, *resumed, ("assistant", "Welcome."), ("user", _HIKE), request="r-3")
    _said(engine, _SAT, *_TOLD, ("user", _HIKE), request="r-4")
    assert len(_item(engine, _HIKE)[1].get("occasions", [])) <= 1
    _said(engine, _MON, ("user", "Evening!"), ("assistant", "Hi."), ("user", _HIKE),
          request="r-5")
    assert len(_item(engine, _HIKE)[1]["occasions"]) == 2


async def test_a_resumed_conversation_is_no_second_telling_in_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    first = Agent(proxy, upstream, session="saturday")
    await first.say("Morning!")
    await first.say(_HIKE)
    await proxy.settle()
    # an agent that resumes it in a new session, today's system prompt first
    resumed = Agent(proxy, upstream, session="resumed", system="Today is Sunday.")
    resumed.messages += first.messages[1:]
    await resumed.say("What should I pack next time?")
    await proxy.settle()
    later = Agent(proxy, upstream, session="later")
    await later.say("How many times did I go hiking with Anna?")
    block = block_of(later.upstream_last_user()) or ""
    assert f"] {_HIKE}" in block and "(said in" not in block, block
    # a genuinely new telling in another conversation still counts
    sunday = Agent(proxy, upstream, session="sunday")
    await sunday.say(_HIKE)
    await proxy.settle()
    again = Agent(proxy, upstream, session="again")
    await again.say("How many times did I go hiking with Anna?")
    block = block_of(again.upstream_last_user()) or ""
    assert f"] {_HIKE} (said in 2 conversations: " in block, block


# -- 139–148 (issue 24): identifiers with digits, past verbs in keys, 在…工作, questions ------
@pytest.mark.parametrize("text, value_text", [
    ("My phone number is 555-123-4567.", "555-123-4567"),
    ("My order number is 2024-117-88.", "2024-117-88"),
    ("The ISBN is 978-3-16-148410-0.", "978-3-16-148410-0"),
    ("The version is 1.2.3.", "1.2.3"),
    ("My server IP is 192.168.1.20.", "192.168.1.20"),
    ("Call me at +1 (555) 123-4567.", "+1 (555) 123-4567"),
    ("My phone number is +49 30 1234567.", "+49 30 1234567"),  # before: 30.0
    ("The office line is +44 20 7946 0958.", "+44 20 7946 0958"),
])
def test_a_dashed_or_dotted_identifier_is_one_string_value(text: str, value_text: str) -> None:
    # before: 555.0 ("555-123"), 978.0; the order number, version and IP held no value
    (item,) = extract(text)
    assert (item.value, item.value_text, item.unit) == (None, value_text, None), item


@pytest.mark.parametrize("text, value, unit", [
    ("The commute is 5-10 minutes.", 5.0, "min"), ("The disk is 3.5 GB.", 3.5, "GB"),
    ("The temperature is −4 °C.", -4.0, "°C"), ("The temperature is -4 °C.", -4.0, "°C"),
    ("The range is 1.5-2.5 GB.", 1.5, "GB")])
def test_a_real_quantity_stays_a_number(text: str, value: float, unit: str) -> None:
    # before: "−4 °C" was 4.0, "-4 °C" no number at all
    (item,) = extract(text)
    assert (item.value, item.unit) == (value, unit), item


@pytest.mark.parametrize("first, then, link", [
    ("My phone number is 555-123-4567.", "My phone number is 555-987-6543.", "conflict"),
    ("My server IP is 192.168.1.20.", "My server IP is 10.0.0.7.", "conflict"),
    ("The release is v2.3.1.", "The release is v2.4.0.", "conflict"),
    ("My phone number is 555-123-4567.", "Change my phone number to 555-987-6543.",
     "supersedes"),
    ("My phone number is 555-123-4567.", "My new phone number is 555-987-6543.",
     "supersedes"),
])
def test_a_new_identifier_of_the_same_key_is_a_rival_value(engine: Engine, first: str,
                                                           then: str, link: str) -> None:
    # before: "… 555-987-6543." was dropped as a restatement of 555.0; a new IP or
    # version was neither a restatement nor a rival
    put(engine, first)
    put(engine, then)
    old, new = rows(engine)
    assert new["text"] == then, rows(engine)
    if link == "conflict":
        assert new["conflict_with"] == old["id"] and old["status"] == "active", rows(engine)
    else:
        assert new["supersedes"] == old["id"] and old["status"] == "superseded", rows(engine)


def test_one_identifier_written_two_ways_is_a_restatement(engine: Engine) -> None:
    put(engine, "My phone number is 555-123-4567.")
    put(engine, "My phone number is 555.123.4567.")
    assert [r["text"] for r in rows(engine)] == ["My phone number is 555-123-4567."]


@pytest.mark.parametrize("text, subject", [
    ("The run took 5 minutes.", "run"), ("The build took 7 minutes.", "build"),
    ("The build takes 5 minutes.", "build"), ("The job ran for 2 hours.", "job"),
    ("The migration took 3 hours.", "migration"), ("The team made 3 releases.", "team"),
    ("The written report is due Friday.", "written report"),
    ("The found items are 3.", "found items")])
def test_a_past_verb_is_no_part_of_the_key(text: str, subject: str) -> None:
    # before: "run took", "job ran", "migration took", "team made"
    (item,) = extract(text)
    assert item.kind == "fact" and item.subject == subject, item


@pytest.mark.parametrize("text, subject", [
    ("私はフォントサイズを14に変更しました。", "フォントサイズ"),
    ("僕はメールアドレスをc@d.comに変更しました。", "メールアドレス"),
    ("私たちはRabbitMQをKafkaに置き換えました。", "kafka")])
def test_a_japanese_topic_before_the_changed_object_is_no_key(text: str, subject: str) -> None:
    # before: keyed 私, 僕, 私たち (the replacement read the topic as the old value)
    (item,) = extract(text)
    assert item.correction and item.subject == subject, item


def test_a_japanese_change_told_done_with_a_topic_revises_the_attribute(
        engine: Engine) -> None:
    put(engine, "フォントサイズは12です。")
    put(engine, "私はフォントサイズを14に変更しました。")
    assert _active(engine) == [("fact", "私はフォントサイズを14に変更しました。")], rows(engine)


@pytest.mark.parametrize("text, subject", [
    ("我在柏林工作。", "工作"), ("我在谷歌上班。", "工作"), ("我们在柏林工作。", "工作"),
    ("我在上海住。", "home"), ("我在上海生活。", "home"), ("我住在柏林。", "home")])
def test_a_chinese_place_before_the_verb_is_the_same_fact(text: str, subject: str) -> None:
    # before: 我在柏林工作 / 我在谷歌上班 / 我在上海住 stored nothing
    (item,) = extract(text)
    assert item.kind == "fact" and item.subject == subject, item


@pytest.mark.parametrize("text", ["我在找工作。", "我在准备工作。", "我在工作。"])
def test_zai_of_an_action_in_progress_is_no_place(text: str) -> None:
    assert extract(text) == [], extract(text)


# -- 148: a Japanese place of work before the verb ----------------------------------------------
@pytest.mark.parametrize("text", [
    "ミュンヘンで働いています。", "私はソニーに勤めています。", "今は横浜で勤務しています。",
    "大阪の病院で看護師として働いています。", "僕はリスボンで働いている。"])
def test_a_japanese_place_of_work_before_the_verb_is_where_the_speaker_works(
        text: str) -> None:
    # before: stored nothing ("私は…" gave a fact keyed by the place: ソニー)
    (item,) = extract(text)
    assert (item.kind, item.subject, item.text) == ("fact", "工作", text), item


@pytest.mark.parametrize("text, want", [
    ("父はミュンヘンで働いています。", [("fact", "父")]),  # another person's
    ("ミュンヘンで働きたいです。", []),  # a wish
    ("ミュンヘンで働いていました。", []),  # the past
    ("ミュンヘンで働いていますか？", [("question", "ミュンヘン")]),
])
def test_a_japanese_wish_past_or_others_work_place_is_not_the_speakers(
        text: str, want: list[tuple[str, str]]) -> None:
    assert [(i.kind, i.subject) for i in extract(text)] == want, extract(text)


def test_a_japanese_place_of_work_revises_the_earlier_one(engine: Engine) -> None:
    put(engine, "ミュンヘンで働いています。")
    put(engine, "今はウィーンで働いています。")
    old, new = rows(engine)
    assert old["status"] == "superseded" and new["supersedes"] == old["id"], rows(engine)


async def test_a_japanese_place_of_work_reaches_another_conversations_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    first = Agent(proxy, upstream, session="intro")
    await first.say("ミュンヘンで働いています。")
    await proxy.settle()
    later = Agent(proxy, upstream, session="later")
    await later.say("私はどこで働いていますか？")
    block = block_of(later.upstream_last_user()) or ""
    assert "] ミュンヘンで働いています。" in block, block


@pytest.mark.parametrize("first, then", [("我在柏林住。", "我在上海住。"),
                                         ("我住在柏林。", "我现在在上海住。"),
                                         ("我在柏林工作。", "我在上海工作。")])
def test_a_chinese_place_before_the_verb_rivals_the_earlier_place(
        engine: Engine, first: str, then: str) -> None:
    put(engine, first)
    put(engine, then)
    old, new = rows(engine)
    assert new["conflict_with"] == old["id"] or new["supersedes"] == old["id"], rows(engine)


@pytest.mark.parametrize("text, kept", [
    ("Where do I live, 我住在上海吗?", []),
    ("我住在哪里, I live in Berlin.", ["I live in Berlin."]),
    ("I live in Berlin, 我住在上海吗?", ["I live in Berlin"]),
    ("Do I live in Berlin, 我在柏林工作。", ["我在柏林工作。"]),
    ("我在哪里工作", []), ("我住在哪里。", [])])
def test_no_statement_comes_from_a_question_in_either_language(text: str,
                                                               kept: list[str]) -> None:
    # before: 我住在哪里 (no 吗, no question mark) was stored as where the user lives;
    # "Do I live in Berlin, 我在柏林工作。" kept nothing
    got = extract(text)
    assert [i.text for i in got if i.kind != "question"] == kept, got
    assert all(i.kind == "question" for i in got if i.text not in kept), got


async def test_a_new_phone_number_and_a_place_reach_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    first = Agent(proxy, upstream, session="contact")
    await first.say("My phone number is 555-123-4567.")
    await first.say("我在柏林工作。")
    await proxy.settle()
    block = await asked_later(proxy, upstream, [
        ("update", "Change my phone number to 555-987-6543."),
    ], "What is my phone number, and 我在哪里工作?")
    assert "] Change my phone number to 555-987-6543." in block, block
    assert "] My phone number is 555-123-4567." not in block, block  # history only
    assert "] 我在柏林工作。" in block, block


def test_or_before_a_clause_in_the_other_script_is_no_part_of_it() -> None:
    # before: the question was keyed "or我住"
    (zh,) = extract("Do I live in Berlin, or 我住在上海?")
    assert zh.kind == "question" and zh.text == "我住在上海?" and zh.subject == "住", zh


# -- 161, 166-168: an English order about a named component; possessive subjects -------------
@pytest.mark.parametrize("text, subject", [
    # before: the possessive "form's" was read as the verb, so every attribute of the
    # login form was keyed "login" alike
    # login form (its "'s" dropped since row 170, as "the log level of the login form")
    ("The login form's log level is info.", "login form log level"),
    ("The login form's timeout is 30 seconds.", "login form timeout"),
    ("Last month's error rate was 0.8%.", "last month error rate"),
    ("The build server's our bottleneck.", "build server"),  # "'s" is "is" there
    ("Dana's manager is Bob.", "dana manager"),
])
def test_a_possessive_before_the_verb_is_part_of_the_key(text: str, subject: str) -> None:
    assert [i.subject for i in extract(text)] == [subject]


async def test_an_english_component_order_reaches_another_block_as_the_current_level(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    # before: the order was keyed "login" and no change, so the stated level stayed
    # current beside it
    said = "The login form's log level is info."
    order = "The login form's logs are too noisy, lower the level to debug."
    block = await asked_later(proxy, upstream, [("setup", said), ("tweak", order)],
                              "What is the login form's log level now?")
    assert f"] {order}" in block, block
    assert f"] {said}" not in block, block


def test_memory_inspect_marks_a_candidate_that_is_gone(tmp_path: Any) -> None:
    # the block drops its MAY REVISE note once a candidate is forgotten; inspect must
    # not still name the forgotten item as one to ask the user about
    from click.testing import CliRunner

    from proxy.cli import main
    eng = Engine(tmp_path / "d")
    for text in ("My editor font size is 12.", "My terminal font size is 16.",
                 "Actually, my font size is 14."):
        put(eng, text)
    eng.retract(1, "forgotten")
    eng.close()
    out = CliRunner().invoke(main, ["memory", "inspect", "item:3", "--data-dir",
                                    str(tmp_path / "d")])
    assert out.exit_code == 0, out.output
    line = next(ln for ln in out.output.splitlines() if ln.startswith("may revise:"))
    assert "item:1 [retracted]" in line and "ask the user" not in line, line


# -- 170-172: "the login form's log level" and "the log level of the login form" -------------
@pytest.mark.parametrize("said, order", [
    ("The login form's log level is info.", "Set the log level of the login form to debug."),
    ("The log level of the login form is info.", "Set the login form's log level to debug."),
])
async def test_an_order_phrased_the_other_way_reaches_another_block_as_the_current_level(
        proxy: RunningProxy, upstream: FakeUpstream, said: str, order: str) -> None:
    # before: "Set the log level of the login form to debug." stored nothing (no owner read
    # in an "of" phrase), so the stated level stayed the only one shown
    block = await asked_later(proxy, upstream, [("setup", said), ("tweak", order)],
                              "What is the log level of the login form now?")
    assert f"] {order}" in block, block
    assert f"] {said}" not in block, block


# -- history re-sent with its opening turns edited or replaced; a reminder told again --------
_SUMMARY = "Summary of the conversation so far: the user said good morning."


@pytest.mark.parametrize("replay", [
    # the first message rewritten by the client (a reminder or date put in front)
    [("user", "<system-reminder>Today is 2026-12-07.</system-reminder>\nMorning!"),
     *_TOLD[1:], ("user", "Thanks!")],
    # the older turns replaced by a summary sent as a user message
    [("user", _SUMMARY), *_TOLD[1:], ("user", "Thanks!")],
    # ... up to the statement itself: the answer after it is the one it had
    [("user", _SUMMARY), ("assistant", "Ok."), *_TOLD[2:], ("user", "Thanks!")],
])
def test_history_resent_with_its_opening_edited_is_no_new_occasion(
        engine: Engine, replay: list[tuple[str, str]]) -> None:
    # before: "said in 2 conversations", the resent one stamped at the re-send
    _said(engine, _SAT, *_TOLD)
    _said(engine, _SUN, *replay, request="r-2")
    status, data = _item(engine, _HIKE)
    assert status == "active" and len(data["sources"]) == 2, data
    assert len(data.get("occasions", [])) <= 1, data


_FLIGHT = "Reminder: my flight is on Friday."


@pytest.mark.parametrize("text, second", [
    # repeated on purpose as the newest turn of a new conversation
    (_FLIGHT, [("user", _FLIGHT)]),
    (_FLIGHT, [("user", "Hey."), ("assistant", "Hi."), ("user", _FLIGHT)]),
    # after an opening that differs from the first telling's, as the newest turn
    (_HIKE, [("user", "Good morning!"), ("assistant", "Hi."), ("user", _HIKE)]),
])
def test_the_same_words_as_a_new_conversations_newest_turn_are_a_new_telling(
        engine: Engine, text: str, second: list[tuple[str, str]]) -> None:
    _said(engine, _SAT, ("user", "Morning!"), ("assistant", "Hi."), ("user", text),
          ("assistant", "Noted."), ("user", "Thanks!"))
    _said(engine, _SUN, *second, request="r-2")
    _status, data = _item(engine, text)
    assert len(data["sources"]) == 2 and len(data.get("occasions", [])) == 2, data


# -- 173-175: an update of a shorter or longer key whose value is of another shape --------
@pytest.mark.parametrize("first, then", [
    # before: each superseded the first; a font family is no font size, nor the reverse
    ("My editor font size is 12.", "My editor font is Fira Code now."),
    ("My editor font size is 12.", "Now my editor font is Fira Code."),
    ("My editor font size is 12.", "I switched my editor font to Fira Code."),
    ("The editor font is Menlo.", "The editor font size is 14 now."),
    ("字体大小是12。", "字体现在是Fira Code。"),
])
def test_an_update_of_another_shape_leaves_a_key_it_is_part_of(
        engine: Engine, first: str, then: str) -> None:
    put(engine, first)
    put(engine, then)
    got = rows(engine)
    assert [(r["text"], r["status"], r["supersedes"]) for r in got] == [
        (first, "active", None), (then, "active", None)], got


@pytest.mark.parametrize("first, then", [
    # the same attribute, a value of the same shape: still an update
    ("My editor font size is 12.", "My editor font size is 14 now."),
    ("字体大小是12。", "字体大小现在是14。"),
    ("My editor font size is 12 pt.", "My editor font is 14 pt now."),
    ("The build timeout for CI is 20 minutes.", "The build timeout is 30 minutes now."),
])
def test_an_update_of_the_same_shape_still_revises_a_longer_key(
        engine: Engine, first: str, then: str) -> None:
    put(engine, first)
    put(engine, then)
    got = rows(engine)
    assert [(r["text"], r["status"], r["supersedes"]) for r in got] == [
        (first, "superseded", None), (then, "active", 1)], got


async def test_a_font_family_said_after_a_size_reaches_another_block_beside_it(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    # before: the family superseded the size, so the size was gone from the block
    size, family = "My editor font size is 12.", "My editor font is Fira Code now."
    block = await asked_later(proxy, upstream, [("setup", size), ("switch", family)],
                              "What are my editor font and font size?")
    assert f"] {family}" in block, block
    assert f"] {size}" in block, block
    status = sql_read(proxy.engine, lambda c: [tuple(r) for r in c.execute(
        "SELECT text, status FROM memory_items WHERE kind = 'fact' ORDER BY id")])
    assert status == [(size, "active"), (family, "active")], status


# -- 176–178: an update cue of time keeps the value out of the key ----------------------------
@pytest.mark.parametrize("plain, update", [
    # before: each update was keyed with its value ("editor font fira code", "shell zsh")
    ("My editor font is Fira Code.", "My editor font is Fira Code now."),
    ("My editor font is Fira Code.", "Now my editor font is Fira Code."),
    ("My editor font is Fira Code.", "These days my editor font is Fira Code."),
    ("My editor font is Fira Code.", "My editor font is Fira Code these days."),
    ("My editor font is Fira Code.", "Currently my editor font is Fira Code."),
    ("My editor font is Fira Code.", "My editor font is Fira Code at the moment."),
    ("My editor font is Fira Code.", "My editor font is Fira Code from today."),
    ("My shell is zsh.", "My shell is zsh now."),
    ("My manager is Dana.", "My manager is Dana now."),
    ("Our CI provider is GitHub Actions.", "Our CI provider is GitHub Actions now."),
    ("The API timeout is 45 s.", "Now the API timeout is 45 s."),  # was "api timeout s"
    # kept: numbers, and the Chinese and Japanese forms, were keyed right already
    ("My font size is 14.", "My font size is 14 now."),
    ("我的编辑器字体是Fira Code。", "我的编辑器字体现在是Fira Code。"),
    ("エディタのフォントはFira Codeです。", "エディタのフォントは今はFira Codeです。"),
])
def test_an_update_cue_of_time_keys_the_attribute_not_its_value(plain: str,
                                                                update: str) -> None:
    [before] = extract(plain)
    [after] = extract(update)
    assert (after.kind, after.subject, after.value_text, after.correction) == (
        before.kind, before.subject, before.value_text, True), (before, after)


@pytest.mark.parametrize("first, then", [
    # the same attribute: revised by key, whichever side the cue stands
    ("My editor font is Menlo.", "My editor font is Fira Code now."),
    ("My editor font is Menlo.", "These days my editor font is Fira Code."),
    ("Our CI provider is Jenkins.", "Our CI provider is GitHub Actions now."),
    # before: keyed "font fira code", it shared one word with "editor font" and revised
    # nothing; now its head names the one font there is
    ("My editor font is Menlo.", "My font is Fira Code now."),
])
def test_an_update_with_a_cue_of_time_revises_the_attribute_by_key(
        engine: Engine, first: str, then: str) -> None:
    put(engine, first)
    put(engine, then)
    got = sql_read(engine, lambda c: [tuple(r) for r in c.execute(
        "SELECT text, subject, status, supersedes FROM memory_items ORDER BY id")])
    [(_, old_key, _, _), (_, new_key, _, _)] = got
    assert [(t, s, sup) for t, _, s, sup in got] == [
        (first, "superseded", None), (then, "active", 1)], got
    assert new_key == old_key or old_key.endswith(" " + new_key), got


def test_a_head_named_update_revises_neither_of_two_attributes_it_heads(
        engine: Engine) -> None:
    for text in ("My editor font is Menlo.", "My terminal font is Monaco.",
                 "My font is Fira Code now."):
        put(engine, text)
    assert [r["status"] for r in rows(engine)] == ["active"] * 3, rows(engine)


async def test_a_font_said_now_reaches_another_block_as_the_current_one(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    # before: "My font is Fira Code now." was keyed "font fira code", so Menlo stayed
    # current beside it and both reached the block
    old, new = "My editor font is Menlo.", "My font is Fira Code now."
    block = await asked_later(proxy, upstream, [("setup", old), ("switch", new)],
                              "Which font does my editor use?")
    assert f"] {new}" in block, block
    assert f"] {old}" not in block, block
    status = sql_read(proxy.engine, lambda c: [tuple(r) for r in c.execute(
        "SELECT text, status FROM memory_items WHERE kind = 'fact' ORDER BY id")])
    assert status == [(old, "superseded"), (new, "active")], status
