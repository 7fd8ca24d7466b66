"""Query intents: which kind of memory a question asks for, and how search ranks it.

The phrasings here are written for these tests, not taken from the long-session
eval's question pool, so that they check the cue rules rather than the pool.
"""

from __future__ import annotations

import dataclasses
import time
from pathlib import Path
from typing import Any

import pytest

from memory_core.engine import Engine
from memory_core.models import Scope
from memory_core.search.intent import INTENTS, asked_quantity, query_intents
from tests.conftest import sql_read
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
    ("What holds up the release?", "blocked"),
    ("这个PR的blocker是什么？", "blocked"),
    ("Why can\u02bct we move on?", "blocked"),
    ("何を待っていますか？", "blocked"),
    ("What still needs to be done?", "todo"),
    ("What\u2018s pending?", "todo"),
    ("我们的next steps是什么？", "todo"),
    ("Where are we on the importer?", "progress"),
    ("Which DB did we end up using?", "decision"),
    ("どのDBにしましたか？", "decision"),
    ("消息队列最终用的是哪一个？", "decision"),
    ("官网最终部署在哪家云上？", "decision"),
    ("結局どのCIサービスにした？", "decision"),
    ("What did the command print?", "observation"),
    # a standing rule for the assistant's own work, said without "prefer"
    ("Whenever you write docs for me, what matters most?", "preference"),
    ("When you review my code, what do you check?", "preference"),
    ("What's the priority order for bug triage?", "preference"),
    ("Have I ruled out any libraries?", "preference"),
    ("Is there a word I've banned from the UI copy?", "preference"),
    ("你回答我的时候要注意什么？", "preference"),
    ("私が好むエディタは？", "preference"),
])
def test_cue_phrases_name_the_kind_asked_for(query: str, intent: str) -> None:
    assert intent in query_intents(query)
    assert query_intents(query) <= set(INTENTS)


@pytest.mark.parametrize("query", [
    "Who is Alice working for?",
    "What's the aim of the retry loop?",
    "What changed in the way we deploy?",
    "What's left in the budget?",
    "Which progress bar library do we use?",
    "Who went with her to the concert?",
    "What's the favourite color of Alice?",
    "I want the port number of the staging DB",
    "What was the port in your answer?",
    "What were Alice's blood test results?",
    "When Melanie came back from Paris, what did she bring?",
    "目标服务器的IP是多少？",
    "出差的目的地是哪里？",
    "现在等级是多少？",
    "磁盘还剩多少空间？",
    "确定了端口号吗？",
    "服务器应该用哪个端口？",
    "她希望去哪里？",
    "旅行の目的地は？",
    "先週の障害の原因は？",
    "ブロックサイズは？",
    "残りの容量は？",
    "会議は何時に終わった？",
    "気にしたことは？",
    "どのポートを使うべき？",
    "彼女が読んだ本は？",
    "How long does the app wait for a response before it gives up?",
    "What should the request timeout be?",
    "What's the output format of the exporter?",
    "How many replicas does the staging run use?",
    "Which port does the staging database listen on?",
    "ログの出力レベルは？",
    "请求等多久会超时？",
    "最终的发布日期是哪天？",
    "项目最终哪个月上线？",
    "服务最终监听在哪个端口？",
    "最终哪家公司中标了？",
    "最终哪个测试失败了？",
    "結局どれくらい時間がかかった？",
    "結局どの日にリリースした？",
    "結局何が原因だった？",
    "",
])
def test_plain_fact_questions_carry_no_intent(query: str) -> None:
    assert query_intents(query) == frozenset()


@pytest.mark.parametrize("query", [
    "What did the log say when you looked at it?",
    "When you ran the tests, which one failed?",
    "Which check failed when you executed the suite for me?",
    "Which IPs are banned on the firewall?",
    "What's the priority of the login bug?",
    "When we review the budget, who signs off?",
    "我回复了哪封邮件？",
])
def test_preference_cues_leave_past_actions_and_plain_facts(query: str) -> None:
    """The assistant's past actions are what it saw, not a rule for its work; a ban
    or priority that is not the user's own is a fact."""
    assert "preference" not in query_intents(query)


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
    """Without vectors, the blocker shares no word with the question, so only the
    intent can bring it in: it is added for its own tenant, role, thread, session and
    time range, and not for another one, though every scope holds a turn that
    matches the question's words (so the search does not end early). A search of
    one kind never uses intents."""
    with running_service(tmp_path, embedder=None) as (engine, svc):
        _memory_chat(engine)
        Conversation(engine, A).say("The shipping window for the first cluster is Friday.",
                                    "Noted.")
        engine.flush(10)
        blocker = sql_read(engine, lambda c: c.execute(
            "SELECT t.source_message_id, m.thread_id FROM task_state t JOIN messages m"
            " ON m.id = t.source_message_id WHERE t.label='blocked'").fetchone())
        assert blocker is not None
        later = time.time() + 0.001
        time.sleep(0.01)
        other = Conversation(engine, A)
        other.say("Another shipping checklist for the mobile app lives in the wiki.", "OK.")
        for scope in (Scope("tenantB", "default"), Scope("tenantA", "coder"),
                      Scope("tenantA", "default", "s1")):
            Conversation(engine, scope).say("The shipping window is Friday.", "OK.")
        engine.flush(10)
        assert svc.wait_idle(20)
        other_thread = sql_read(engine, lambda c: c.execute(
            "SELECT thread_id FROM messages WHERE text LIKE 'Another shipping%'").fetchone()[0])
        query = "Is anything preventing us from shipping?"

        def blocker_hit(tenant: str = "tenantA", role: str = "default", **kw: Any) -> Any:
            hits = svc.search(tenant, role, query, k=50, **kw)
            assert hits, kw  # a turn matched the words: the intent path ran
            return next((h for h in hits if (h.kind, h.ref_id) == ("message", blocker[0])),
                        None)

        hit = blocker_hit()
        assert hit is not None and hit.bm25_rank is None and hit.vector_rank is None
        assert {"memory", "intent"} <= hit.boosts.keys()
        assert blocker_hit(thread_ids=[blocker[1]]) is not None
        assert blocker_hit(thread_ids=[other_thread]) is None
        assert blocker_hit(tenant="tenantB") is None
        assert blocker_hit(role="coder") is None
        assert blocker_hit(session="s1") is None
        assert blocker_hit(start_time=later) is None
        assert blocker_hit(include_hidden=False) is not None
        assert blocker_hit(kinds=["message", "item"]) is not None
        assert blocker_hit(kinds=["message"]) is None
        assert not any("intent" in h.boosts for h in svc.search(
            "tenantA", "default", "Which bus did we decide on for shipping?", k=50,
            kinds=["item"]))


def test_a_task_line_is_not_folded_into_a_statement_of_the_same_turn(
        tmp_path: Path) -> None:
    """A turn that states a blocker and a fact: the blocker question finds the turn
    (with the intent boost); the fact's item gains no intent boost and does not take
    the turn's place. A turn with two task lines answers a question about either."""
    with running_service(tmp_path) as (engine, svc):
        conv = Conversation(engine, A)
        conv.say("Blocked: the firewall change for the new cluster is not approved yet."
                 " The staging database listens on port 5433.", "Noted.")
        conv.say("Blocked: waiting for the vendor contract\nGoal: move the reports to"
                 " the new cluster", "OK.")
        engine.flush(10)
        assert svc.wait_idle(20)
        texts = {}
        hits = svc.search("tenantA", "default", "What is blocking us?", k=20)
        for h in hits:
            texts[(h.kind, h.ref_id)] = hit_text(engine, h.kind, h.ref_id)
        firewall = [h for h in hits if texts[(h.kind, h.ref_id)].startswith("Blocked: the fire")]
        assert firewall and firewall[0].kind == "message" and "intent" in firewall[0].boosts
        port = [h for h in hits if h.kind == "item" and "5433" in texts[(h.kind, h.ref_id)]]
        assert all("intent" not in h.boosts for h in port)
        both = [h for h in hits if "vendor contract" in texts[(h.kind, h.ref_id)]]
        assert both and "intent" in both[0].boosts
        goal = svc.search("tenantA", "default", "What is our goal?", k=20)
        assert any(h.kind == "message" and "intent" in h.boosts
                   and "vendor contract" in hit_text(engine, h.kind, h.ref_id) for h in goal)


def test_a_decision_question_ranks_the_decision_first(tmp_path: Path) -> None:
    """"Which message bus did we settle on?" lifts the decision item above the
    facts about the same cluster; the preference question lifts the preference."""
    with running_service(tmp_path) as (engine, svc):
        _memory_chat(engine)
        engine.flush(10)
        assert svc.wait_idle(20)
        kinds = sql_read(engine, lambda c: dict(c.execute(
            "SELECT id, kind FROM memory_items").fetchall()))
        hits = svc.search("tenantA", "default",
                          "Which bus did we settle on for the reporting cluster events?", k=5)
        assert (hits[0].kind, kinds.get(hits[0].ref_id)) == ("item", "decision")
        assert "intent" in hits[0].boosts
        hits = svc.search("tenantA", "default", "How do I want your replies ordered?", k=5)
        assert (hits[0].kind, kinds.get(hits[0].ref_id)) == ("item", "preference")
        assert "intent" in hits[0].boosts


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
        # without the cue it is no memory; a vector-only hit this far from the query
        # (hashing) is under the relevance floor and is no hit at all
        assert ("message", output) not in plain
        svc.vector_floor = None
        plain = {(h.kind, h.ref_id): h for h in svc.search(
            "tenantA", "default", "How full was it for the check?", k=50)}
        assert "memory" not in plain[("message", output)].boosts
    finally:
        svc.close()
        engine.close()


def test_a_task_line_turn_ranks_as_memory_only_when_it_matches_or_is_asked_for(
        tmp_path: Path) -> None:
    """A turn that holds a TODO also holds other words. Matched only weakly (below
    ``task_line_prior_rank`` in both lists) it is a plain turn, without the memory
    prior; matched well, or asked for by a TODO question, it is memory. Either
    way it takes no context from the turns around it, which plain turns do."""
    with running_service(tmp_path, embedder=None, task_line_prior_rank=1) as (engine, svc):
        conv = Conversation(engine, A)
        conv.say("The nightly export writes CSV files to the reports bucket.", "Noted.")
        conv.say("TODO: rotate the staging keys. The export job also writes a log file.",
                 "I'll remember the export log.")
        engine.flush(10)
        assert svc.wait_idle(20)
        todo = sql_read(engine, lambda c: c.execute(
            "SELECT source_message_id FROM task_state WHERE label='todo'").fetchone()[0])

        def turn(query: str) -> Any:
            hits = svc.search("tenantA", "default", query, k=20)
            return next(h for h in hits if h.kind == "message" and h.ref_id == todo)

        weak = turn("Where does the nightly export put its CSV files?")
        assert weak.bm25_rank is not None and weak.bm25_rank > 1
        assert "memory" not in weak.boosts and "neighbours" not in weak.boosts
        plain = svc.search("tenantA", "default", "Where does the nightly export put its"
                           " CSV files?", k=20, kinds=["message"])
        assert any("neighbours" in h.boosts for h in plain)  # the plain turns around it
        strong = turn("When do we rotate the staging keys?")
        assert strong.bm25_rank == 1 and strong.boosts.get("memory")
        asked = turn("What's left to do on the export?")
        assert asked.boosts.get("memory") and asked.boosts.get("intent")
        svc.config = dataclasses.replace(svc.config, task_line_prior_rank=20)
        assert turn("Where does the nightly export put its CSV files?").boosts.get("memory")


@pytest.mark.parametrize(("query", "kind"), [
    ("How long does the nightly export keep its files?", "time"),
    ("How soon does a reset link expire?", "time"),
    ("导出任务要跑多久？", "time"),
    ("再試行は何秒ごと？", "time"),
    ("How big can an avatar be?", "data"),
    ("How much memory does the worker get?", "data"),
    ("单个附件最多多大？", "data"),
    ("How many replicas serve the search API?", "count"),
    ("测试集群有几台服务器？", "count"),
    ("検証環境は何台ある？", "count"),
    ("At what percentage does the disk alert fire?", "percent"),
    ("Which port does the cache listen on?", None),
    ("How many days and how many MB?", None),  # two kinds: none is asked for
    ("", None),
])
def test_asked_quantity_names_the_kind_of_value_that_answers(query: str,
                                                             kind: str | None) -> None:
    assert asked_quantity(query) == kind


def test_the_value_of_the_kind_asked_for_ranks_first(tmp_path: Path) -> None:
    """Two statements about one environment, neither sharing a word with the
    question: "how many machines" is answered by the node count, not by the port;
    with quantity_boost 0 nothing is lifted for it."""
    with running_service(tmp_path) as (engine, svc):
        conv = Conversation(engine, A)
        conv.say("The preview cluster cache listens on port 6390.", "Noted.")
        conv.say("The preview cluster has 7 nodes.", "Noted.")
        engine.flush(10)
        assert svc.wait_idle(20)
        query = "How many machines make up the pre-release environment?"
        hits = svc.search("tenantA", "default", query, k=10)
        top = hit_text(engine, hits[0].kind, hits[0].ref_id)
        assert "7 nodes" in top, top
        assert hits[0].boosts.get("quantity") == svc.config.quantity_boost
        assert not any("quantity" in h.boosts for h in hits[1:]
                       if "port" in hit_text(engine, h.kind, h.ref_id))
        svc.config = dataclasses.replace(svc.config, quantity_boost=0.0)
        assert all("quantity" not in h.boosts
                   for h in svc.search("tenantA", "default", query, k=10))


def test_a_kept_preference_ranks_above_one_read_in_passing(tmp_path: Path) -> None:
    """A question asking for a preference: the agent memory someone kept with
    ``memory prefs set`` gains standing_preference_boost over the preference the
    rules read from a turn; the item gains none. (Which ranks first here depends on
    the min-max scaling of a two-statement store; the eval measures the ranking.)"""
    with running_service(tmp_path) as (engine, svc):
        conv = Conversation(engine, A)
        conv.say("I'd like the diff to stay small if possible.", "Sure.")
        engine.set_agent_memory(tenant="tenantA", role="default",
                                category="user_preferences", key="review_order",
                                title="Review order",
                                content="In reviews, flag missing tests before style nits",
                                on_duplicate="refuse")
        engine.flush(10)
        assert svc.wait_idle(20)
        query = "Whenever you look over a merge request for me, what comes first?"
        hits = svc.search("tenantA", "default", query, k=10)
        kinds = {(h.kind, bool(h.boosts.get("standing"))) for h in hits
                 if "intent" in h.boosts}
        assert ("agent_memory", True) in kinds and ("item", False) in kinds, kinds
        def gap(found: list[Any]) -> float:  # the kept preference's lead over the item
            score = {h.kind: h.score for h in found if "intent" in h.boosts}
            return score["agent_memory"] - score["item"]

        boost = svc.config.standing_preference_boost
        assert boost > 0
        svc.config = dataclasses.replace(svc.config, standing_preference_boost=0.0)
        off = svc.search("tenantA", "default", query, k=10)
        assert all("standing" not in h.boosts for h in off)
        assert gap(hits) == pytest.approx(gap(off) + boost)


def test_a_preference_question_asks_for_the_users_standing_rules(tmp_path: Path) -> None:
    """"Is there anything I've forbidden …?" asks for a rule the user set, which the
    rules store as a constraint ("Never …"), not as a preference: it gains the intent
    boost as a preference does; a one-off request gains none. (Before, only preference
    items and kept preferences did. Which ranks first here depends on the min-max
    scaling of a small store; the eval measures the ranking.)"""
    with running_service(tmp_path) as (engine, svc):
        conv = Conversation(engine, A)
        conv.say("Never use tabs in the YAML files, please.", "Noted.")
        conv.say("I'd like the rollout to stay quiet if possible.", "Sure.")
        conv.say("Keep the YAML keys sorted in this answer.", "Sure.")
        conv.say("代码注释请一律用英文写。", "好的。")
        engine.flush(10)
        assert svc.wait_idle(20)
        query = "Have I ruled out anything for the config files you write?"
        assert "preference" in query_intents(query)
        hits = svc.search("tenantA", "default", query, k=10)
        lifted = {hit_text(engine, h.kind, h.ref_id) for h in hits if "intent" in h.boosts}
        assert "Never use tabs in the YAML files, please." in lifted, hits
        assert not any("in this answer" in t for t in lifted), lifted
        rule = next(h for h in hits if hit_text(engine, h.kind, h.ref_id).startswith("Never"))
        assert rule.boosts["intent"] == svc.config.intent_boost
        zh = svc.search("tenantA", "default", "我禁止过你在代码注释里用什么语言吗？我喜欢哪种写法？",
                        k=10)
        assert any("一律" in hit_text(engine, h.kind, h.ref_id) and "intent" in h.boosts
                   for h in zh), zh
