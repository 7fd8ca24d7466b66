"""Query intents: which kind of memory a question asks for, and how search ranks it.

The phrasings here are written for these tests, not taken from the long-session
eval's question pool, so that they check the cue rules rather than the pool.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from memory_core.engine import Engine
from memory_core.models import Scope
from memory_core.search.intent import INTENTS, query_intents
from tests.test_search_support import Conversation, hit_text, open_service, running_service

A = Scope(tenant="tenantA", role="default")


@pytest.mark.parametrize(("query", "intent"), [
    ("What's our main goal for this sprint?", "goal"),
    ("What are we trying to achieve with the rewrite?", "goal"),
    ("我们这次迁移的目标是什么？", "goal"),
    ("このプロジェクトの目標は何でしたっけ？", "goal"),
    ("What's blocking the release?", "blocked"),
    ("Are we stuck on anything?", "blocked"),
    ("Is something holding the deploy up?", "blocked"),
    ("Who are we waiting for before the launch?", "blocked"),
    ("现在被什么阻塞了？", "blocked"),
    ("何がブロッカーになっていますか？", "blocked"),
    ("What's left to do on the migration?", "todo"),
    ("What are the next steps?", "todo"),
    ("下一步要做什么？", "todo"),
    ("残りのやることは？", "todo"),
    ("How much progress have we made on the importer?", "progress"),
    ("导入器的进展如何？", "progress"),
    ("進捗を教えて", "progress"),
    ("What did we decide about caching?", "decision"),
    ("Which database did we pick for the ledger?", "decision"),
    ("我们最后决定用哪个数据库？", "decision"),
    ("ログ基盤にはどれを採用しましたか？", "decision"),
    ("How do I prefer my commit messages?", "preference"),
    ("What would I like to see in your answers?", "preference"),
    ("我喜欢什么样的回答？", "preference"),
    ("私の好みの書き方は？", "preference"),
    ("What did the log say when you ran the migration?", "observation"),
    ("Which port was in the config file you read earlier?", "observation"),
    ("你运行测试的时候哪个失败了？", "observation"),
    ("実行したテストの結果はどうだった？", "observation"),
])
def test_cue_phrases_name_the_kind_asked_for(query: str, intent: str) -> None:
    assert intent in query_intents(query)
    assert query_intents(query) <= set(INTENTS)


@pytest.mark.parametrize("query", [
    "How long does the app wait for a response before it gives up?",
    "What should the request timeout be?",
    "What's the output format of the exporter?",
    "How many replicas does the staging run use?",
    "Which port does the staging database listen on?",
    "ログの出力レベルは？",
    "请求等多久会超时？",
    "",
])
def test_plain_fact_questions_carry_no_intent(query: str) -> None:
    assert query_intents(query) == frozenset()


def _memory_chat(engine: Engine) -> Conversation:
    conv = Conversation(engine, A)
    conv.say("Goal: migrate the reporting jobs to the new cluster", "Understood.")
    conv.say("The reporting cluster has 12 nodes and runs the nightly exports.", "Noted.")
    conv.say("Blocked: the firewall change for the new cluster is not approved yet",
             "I'll keep that in mind.")
    conv.say("We decided to use Kafka for the reporting events.", "Kafka it is.")
    conv.say("The new cluster exports reports every night at 02:00 UTC.", "Got it.")
    conv.say("I prefer answers that start with the conclusion.", "Will do.")
    return conv


def test_an_open_blocker_answers_a_question_that_shares_no_word_with_it(
        tmp_path: Path) -> None:
    """"Is anything preventing us from shipping?" names no word of the blocker line:
    the open blocker is added as a candidate and ranks first; with intent_boost 0 it
    gets no intent boost and is not added."""
    with running_service(tmp_path) as (engine, svc):
        _memory_chat(engine)
        engine.flush(10)
        assert svc.wait_idle(20)
        query = "Is anything preventing us from shipping?"
        hits = svc.search("tenantA", "default", query, k=10)
        top = hit_text(engine, hits[0].kind, hits[0].ref_id)
        assert top.startswith("Blocked: the firewall change"), top
        assert hits[0].boosts.get("intent") == svc.config.intent_boost
        assert hits[0].bm25_rank is None  # no shared word: the intent brought it in
        # A strong match of another kind still outranks the blocker it brought in.
        strong = svc.search("tenantA", "default",
                            "Are the nightly report exports at 02:00 UTC stuck?", k=10)
        assert "02:00 UTC" in hit_text(engine, strong[0].kind, strong[0].ref_id)
        assert any("intent" in h.boosts for h in strong[1:])
        svc.config = dataclasses.replace(svc.config, intent_boost=0.0)
        off = svc.search("tenantA", "default", query, k=10)
        assert all("intent" not in h.boosts for h in off)
        assert not any(hit_text(engine, h.kind, h.ref_id).startswith("Blocked:")
                       and h.bm25_rank is None and h.vector_rank is None for h in off)


def test_task_lines_added_by_an_intent_respect_the_filters(tmp_path: Path) -> None:
    """The blocker is not added for another thread, another tenant, a time range that
    excludes it, a search of items alone or of messages alone (plain turn ranking)."""
    with running_service(tmp_path) as (engine, svc):
        _memory_chat(engine)
        engine.flush(10)
        assert svc.wait_idle(20)
        query = "Is anything preventing us from shipping?"
        blocker = engine.store.read(lambda c: c.execute(
            "SELECT source_message_id, thread_id FROM task_state WHERE label='blocked'"
            ).fetchone())
        assert blocker is not None

        def found(**kw: Any) -> bool:
            return any(h.kind == "message" and h.ref_id == blocker[0]
                       for h in svc.search(kw.pop("tenant", "tenantA"), "default", query,
                                           k=50, **kw))

        assert found()
        assert found(thread_ids=[blocker[1]])
        assert not found(thread_ids=[blocker[1] + 1000])
        assert not found(tenant="tenantB")
        assert not found(end_time=1.0)
        assert not found(kinds=["item"])
        assert not any("intent" in h.boosts for h in svc.search(
            "tenantA", "default", query, k=50, kinds=["message"]))


def test_a_decision_question_ranks_the_decision_first(tmp_path: Path) -> None:
    """"Which message bus did we settle on?" lifts the decision item above the
    facts about the same cluster; the preference question lifts the preference."""
    with running_service(tmp_path) as (engine, svc):
        _memory_chat(engine)
        engine.flush(10)
        assert svc.wait_idle(20)
        kinds = engine.store.read(lambda c: dict(c.execute(
            "SELECT id, kind FROM memory_items").fetchall()))
        hits = svc.search("tenantA", "default",
                          "Which bus did we settle on for the reporting cluster events?", k=5)
        assert (hits[0].kind, kinds.get(hits[0].ref_id)) == ("item", "decision")
        assert "intent" in hits[0].boosts
        hits = svc.search("tenantA", "default", "How do I want your replies ordered?", k=5)
        assert (hits[0].kind, kinds.get(hits[0].ref_id)) == ("item", "preference")


def test_a_question_about_what_the_agent_saw_widens_the_tool_output_gate(
        tmp_path: Path) -> None:
    """A tool output that only the vectors bring in is memory (and asked for) when the
    question is about what the agent ran; the same words without that cue keep the
    keyword gate."""
    engine = Engine(tmp_path)
    svc = open_service(tmp_path, engine)
    svc.start()
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "Please check the disk."},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "shell", "arguments": '{"cmd": "df -h"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": "/dev/sda1  93% /var/lib"},
        {"role": "assistant", "content": "The disk is nearly full."},
        {"role": "user", "content": "The staging cluster has 12 nodes."},
    ]
    try:
        _, fut = engine.capture_request(A, "r1", history, {})
        output = fut.result(10).message_ids[2]
        engine.flush(10)
        assert svc.wait_idle(20)
        asked = {(h.kind, h.ref_id): h for h in svc.search(
            "tenantA", "default", "How full was it when you ran the check?", k=50)}
        hit = asked[("message", output)]
        assert hit.bm25_rank is None and hit.vector_rank is not None
        assert "memory" in hit.boosts and "intent" in hit.boosts
        plain = {(h.kind, h.ref_id): h for h in svc.search(
            "tenantA", "default", "How full was it for the check?", k=50)}
        assert "memory" not in plain[("message", output)].boosts
    finally:
        svc.close()
        engine.close()
