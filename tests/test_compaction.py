"""Hierarchical compaction: planning rules, summaries, and 1,000 turns through the proxy."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import openai
import orjson
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st
from openai.types.chat import ChatCompletion

from memory_core.compaction.compressor import (
    CompactionConfig,
    PathMessage,
    SummaryNode,
    forest,
    may_be_due,
    plan,
    protected_bounds,
    segments,
    validate_summary,
)
from memory_core.tokens import count_tokens
from proxy.appkeys import TASKS
from tests.conftest import RunningProxy, start_proxy, store_sql, writer_in_a_batch
from tests.fake_upstream import FakeUpstream, Reply


def pm(i: int, role: str, tokens: int = 100, calls: bool = False) -> PathMessage:
    return PathMessage(i, role, f"message {i}", tokens, calls, 0.0)


def conversation(turns: int, tool_every: int = 0) -> list[PathMessage]:
    path = [pm(1, "system", 50)]
    i = 2
    for t in range(turns):
        path.append(pm(i, "user"))
        i += 1
        if tool_every and t % tool_every == 0:
            path.append(pm(i, "assistant", 30, calls=True))
            path.append(pm(i + 1, "tool", 400))
            i += 2
        path.append(pm(i, "assistant"))
        i += 1
    return path


def test_segments_keep_calls_with_results() -> None:
    path = conversation(5, tool_every=1)
    for seg in segments(path):
        assert seg[0].role != "tool"
        if seg[0].has_tool_calls:
            assert seg[-1].role == "tool"


def test_protected_head_and_tail() -> None:
    cfg = CompactionConfig(head_turns=1, tail_turns=3)
    path = conversation(10)
    start, end = protected_bounds(path, cfg)
    assert path[start].role == "user" and path[start].id == 4  # after system + turn 1
    assert sum(1 for m in path[end:] if m.role == "user") == 3


def test_fewer_user_turns_than_the_tail_are_all_protected() -> None:
    """Two user turns under ``tail_turns = 6``: both are tail, so the inline stages
    (no minimum size) can never summarise the newest user message away."""
    path = [pm(1, "user", 160_000), pm(2, "assistant", 1), pm(3, "user", 3)]
    for head in (0, 1):
        cfg = CompactionConfig(head_turns=head, tail_turns=6, min_tokens=0, min_turns=1)
        start, end = protected_bounds(path, cfg)
        assert path[start:end] == []
        assert plan(path, [], cfg) == []
    cfg = CompactionConfig(head_turns=0, tail_turns=1, min_tokens=0, min_turns=1)
    assert [i for g in plan(path, [], cfg) for i in g.message_ids] == [1, 2]


def test_plan_waits_for_both_thresholds() -> None:
    path = conversation(12)
    assert plan(path, [], CompactionConfig(min_tokens=100_000, min_turns=1)) == []
    assert plan(path, [], CompactionConfig(min_tokens=100, min_turns=50)) == []
    groups = plan(path, [], CompactionConfig(min_tokens=100, min_turns=2, tail_turns=2))
    assert groups and all(g.level == 0 for g in groups)
    covered = [i for g in groups for i in g.message_ids]
    assert covered == sorted(covered) and len(set(covered)) == len(covered)


def test_group_boundaries_never_split_tool_results() -> None:
    path = conversation(60, tool_every=2)
    cfg = CompactionConfig(min_tokens=500, min_turns=2, tail_turns=2, group_tokens=1000)
    by_id = {m.id: m for m in path}
    for g in plan(path, [], cfg):
        first, last = by_id[g.message_ids[0]], by_id[g.message_ids[-1]]
        assert first.role != "tool"
        assert not last.has_tool_calls  # a call is never the last message of a group


def test_consolidation_2k_rule() -> None:
    k = 2
    nodes = [SummaryNode(n, 0, [10 * n + j for j in range(3)], "t", 10, 100, "extractive")
             for n in range(1, 2 * k + 1)]
    groups = plan([], nodes, CompactionConfig(consolidation_k=k))
    assert len(groups) == 1 and groups[0].level == 1
    assert groups[0].children == (1, 2)  # the oldest K
    assert [n.id for n in forest(nodes)] == [1, 2, 3, 4]


def test_plan_fills_the_head_gap_once_the_head_is_unprotected() -> None:
    """Nodes exist after the protected head turn; a plan with ``head_turns=0`` (the
    proxy's last inline stage) summarises the head turn too, in its own node."""
    path = conversation(12)
    after_head = [m.id for m in path[3:13]]  # turns 2-6
    nodes = [SummaryNode(1, 0, after_head, "t", 10, 1000, "extractive")]
    kept = CompactionConfig(min_tokens=0, min_turns=1, tail_turns=2)
    assert all(path[1].id not in g.message_ids for g in plan(path, nodes, kept))
    groups = plan(path, nodes, CompactionConfig(min_tokens=0, min_turns=1, tail_turns=2,
                                                head_turns=0))
    assert groups[0].message_ids == (path[1].id, path[2].id)  # the head turn, alone
    assert groups[1].message_ids[0] == path[13].id  # then the run after the node
    planned = [i for g in groups for i in g.message_ids]
    assert not set(planned) & set(after_head)
    # A gap that is only an instruction stays out of every node.
    path2 = [*path[:3], pm(99, "developer", 40), *path[3:]]
    nodes2 = [SummaryNode(1, 0, [m.id for m in path2[1:3]], "t", 10, 200, "extractive"),
              SummaryNode(2, 0, [m.id for m in path2[4:14]], "t", 10, 1000, "extractive")]
    assert all(99 not in g.message_ids for g in plan(path2, nodes2, CompactionConfig(
        min_tokens=0, min_turns=1, tail_turns=2, head_turns=0)))


def test_consolidation_merges_neighbouring_roots_only() -> None:
    """A head node filled in before a Level-1 node is not merged across it with the
    Level-0 nodes after: every merged node spans neighbouring roots."""
    k = 2
    head = SummaryNode(1, 0, [2, 3], "t", 10, 100, "extractive")
    higher = SummaryNode(2, 1, list(range(4, 20)), "t", 10, 100, "extractive")
    later = [SummaryNode(3 + n, 0, [20 + 3 * n + j for j in range(3)], "t", 10, 100,
                         "extractive") for n in range(2 * k - 1)]
    groups = plan([], [head, higher, *later], CompactionConfig(consolidation_k=k))
    assert len(groups) == 1 and groups[0].level == 1
    assert groups[0].children == (3, 4)  # the oldest K neighbours, not the head node
    assert groups[0].message_ids == tuple(range(20, 26))


def test_validate_summary() -> None:
    ids = [5, 6, 7]
    assert validate_summary("", ids, 100) == "empty"
    assert validate_summary("- did things", ids, 100) == "cites no message ids"
    assert "outside" in validate_summary("- [msg 99] x", ids, 100)
    assert "cap" in validate_summary("- [msg 5] " + "word " * 500, ids, 100)
    assert validate_summary("- [msg 5] chose Postgres", ids, 100) is None


class ToolAgent:
    """An agent that uses its own tool every few turns and resends all history.

    It calls the SDK's own HTTP layer (``client.post`` with ``cast_to=ChatCompletion``)
    rather than ``chat.completions.create``: the latter re-validates every message of
    the history on every call (about 0.7 ms a message), which turns a 1,000-turn
    conversation into an hour of client-side work. Wire format and response
    parsing are the SDK's either way.
    """

    async def create(self) -> ChatCompletion:
        return await self.client.post("/chat/completions", cast_to=ChatCompletion,
                                      body={"model": "m", "messages": self.messages})

    def __init__(self, proxy: RunningProxy, upstream: FakeUpstream) -> None:
        self.client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-compact-0000000001",
                                         max_retries=0)
        self.upstream = upstream
        self.messages: list[dict[str, Any]] = [
            {"role": "system", "content": "You are the build agent for project Orion."},
            {"role": "user", "content": "First instruction: never push to main without tests."},
        ]

    async def turn(self, i: int) -> None:
        if i:
            self.messages.append({"role": "user", "content":
                                  f"Turn {i}: update src/orion/module_{i % 17}.py and report "
                                  f"build {i} status; the cache size is {i % 50} MB."})
        if i % 5 == 0:
            self.upstream.push(Reply(content=None, tool_calls=[
                {"id": f"call_{i}", "name": "run_tests",
                 "arguments": orjson.dumps({"target": f"module_{i % 17}"}).decode()}]))
            r = await self.create()
            msg = r.choices[0].message
            self.messages.append({"role": "assistant", "content": None, "tool_calls": [
                tc.model_dump() for tc in msg.tool_calls]})
            self.messages.append({"role": "tool", "tool_call_id": f"call_{i}",
                                  "content": f"tests for module_{i % 17}: 42 passed, "
                                             f"0 failed (run {i})" + " ok" * 60})
        self.upstream.push(Reply(content=f"Done with turn {i}; build {i} is green. " * 4))
        r = await self.create()
        self.messages.append({"role": "assistant", "content": r.choices[0].message.content})


@pytest.mark.slow
async def test_thousand_turns_stay_under_the_hard_limit(upstream: FakeUpstream,
                                                        tmp_path: Path) -> None:
    hard_limit = 12000
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", compaction={
        "min_tokens": 1500, "min_turns": 4, "tail_turns": 4, "group_tokens": 3000,
        "consolidation_k": 2, "summary_tokens": 300, "hard_limit_tokens": hard_limit})
    try:
        agent = ToolAgent(proxy, upstream)
        for i in range(1000):
            await agent.turn(i)
            if i % 50 == 49:
                await proxy.settle()  # let background compaction catch up, as idle time would
        await proxy.settle()
        system, first = agent.messages[0], agent.messages[1]
        compacted_seen = 0
        for req in upstream.chat_requests:
            msgs = req["json"]["messages"]
            text = orjson.dumps(msgs).decode()
            assert count_tokens(text) < hard_limit * 1.3  # JSON overhead on top of content
            assert msgs[0] == system  # verbatim, every request
            assert msgs[1]["content"].endswith(first["content"])
            calls = {tc["id"] for m in msgs if m.get("tool_calls") for tc in m["tool_calls"]}
            results = {m["tool_call_id"] for m in msgs if m.get("role") == "tool"}
            assert calls == results  # no tool call without its result, and vice versa
            if any(isinstance(m.get("content"), str) and
                   m["content"].startswith("[Conversation summary") for m in msgs):
                compacted_seen += 1
        assert compacted_seen > 500
        status = proxy.engine.forest_status()
        assert max(lv["level"] for lv in status["levels"]) >= 2
        # Lossless: every original message is still stored, with its exact text.
        n = store_sql(proxy.engine, "SELECT COUNT(*) FROM messages")[0][0]
        assert n == len(agent.messages)
    finally:
        await proxy.runner.cleanup()


async def test_llm_summarizer_used_and_junk_falls_back(upstream: FakeUpstream,
                                                       tmp_path: Path) -> None:
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", compaction={
        "summarizer": "llm", "llm_model": "summary-model", "min_tokens": 500, "min_turns": 2,
        "tail_turns": 2, "group_tokens": 100000})
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-sum-000000000001",
                                    max_retries=0)
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        upstream.push_for_model("summary-model", Reply(content=""), Reply(content="junk"),
                                Reply(content="- [msg 99999] out of range"))
        for i in range(8):
            messages.append({"role": "user", "content": f"step {i}: " + "details " * 60})
            r = await client.chat.completions.create(model="m", messages=messages)
            messages.append({"role": "assistant", "content": r.choices[0].message.content})
        await proxy.settle()
        summary_calls = [r for r in upstream.chat_requests
                         if r["json"]["model"] == "summary-model"]
        assert summary_calls, "the llm summarizer must call the upstream"
        nodes = proxy.engine.forest_status()["nodes"]
        assert nodes and all(n["model"] == "extractive" for n in nodes)  # echo = junk
        # now a usable answer: it cites the first message of whatever range it covers
        upstream.model_replies["summary-model"].clear()
        for i in range(8, 16):
            first_id = max(i for n in proxy.engine.forest_status()["nodes"]
                           for i in n["message_ids"]) + 1
            upstream.model_replies["summary-model"].clear()
            upstream.push_for_model("summary-model",
                                    Reply(content=f"- [msg {first_id}] the user listed steps"))
            messages.append({"role": "user", "content": f"step {i}: " + "more " * 60})
            r = await client.chat.completions.create(model="m", messages=messages)
            messages.append({"role": "assistant", "content": r.choices[0].message.content})
            await proxy.settle()
        models = {n["model"] for n in proxy.engine.forest_status()["nodes"]}
        assert "summary-model" in models
    finally:
        await proxy.runner.cleanup()


async def test_summarizer_timeout_never_blocks_chat(upstream: FakeUpstream,
                                                    tmp_path: Path) -> None:
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", compaction={
        "summarizer": "llm", "llm_model": "slow-model", "llm_timeout_seconds": 1,
        "min_tokens": 500, "min_turns": 2, "tail_turns": 2})
    # Every summary request hangs past its timeout (non-stream: the body never comes).
    upstream.push_for_model("slow-model", *[Reply(content="x", answer_delay=5)
                                            for _ in range(20)])
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-sum-000000000002",
                                    max_retries=0)
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        for i in range(8):
            messages.append({"role": "user", "content": f"step {i}: " + "details " * 60})
            r = await client.chat.completions.create(model="m", messages=messages)
            messages.append({"role": "assistant", "content": r.choices[0].message.content})
        messages.append({"role": "user", "content": "one more"})
        r = await asyncio.wait_for(
            client.chat.completions.create(model="m", messages=messages), 10)
        assert r.choices[0].message.content
    finally:
        await proxy.runner.cleanup()


async def test_compaction_off_header_sends_raw_history(upstream: FakeUpstream,
                                                       tmp_path: Path) -> None:
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", compaction={
        "min_tokens": 500, "min_turns": 2, "tail_turns": 2})
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-raw-000000000001",
                                    max_retries=0)
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        for i in range(10):
            messages.append({"role": "user", "content": f"step {i}: " + "words " * 80})
            r = await client.chat.completions.create(model="m", messages=messages)
            messages.append({"role": "assistant", "content": r.choices[0].message.content})
            await proxy.settle()
        messages.append({"role": "user", "content": "final"})
        await client.chat.completions.create(model="m", messages=messages)
        assert len(upstream.chat_requests[-1]["json"]["messages"]) < len(messages)
        await client.chat.completions.create(
            model="m", messages=messages, extra_headers={"X-LCM-Compaction": "off"})
        sent = upstream.chat_requests[-1]["json"]["messages"]
        assert len(sent) == len(messages)
        assert sent[:-1] == messages[:-1]
    finally:
        await proxy.runner.cleanup()


async def test_memory_status_shows_the_forest(upstream: FakeUpstream, tmp_path: Path) -> None:
    from click.testing import CliRunner

    from proxy.cli import main

    proxy = await start_proxy(upstream.base_url, tmp_path / "d", compaction={
        "min_tokens": 500, "min_turns": 2, "tail_turns": 2})
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-status-0000000001",
                                    max_retries=0)
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        for i in range(8):
            messages.append({"role": "user", "content": f"step {i}: " + "words " * 80})
            r = await client.chat.completions.create(model="m", messages=messages)
            messages.append({"role": "assistant", "content": r.choices[0].message.content})
            await proxy.settle()
    finally:
        await proxy.runner.cleanup()
    d = str(tmp_path / "d")
    out = CliRunner().invoke(main, ["memory", "status", "--data-dir", d])
    assert out.exit_code == 0, out.output
    assert "summary level 0:" in out.output and "node 1 L0" in out.output
    out = CliRunner().invoke(main, ["memory", "status", "--data-dir", d, "--json"])
    data = orjson.loads(out.stdout)
    node = data["summary_forest"]["nodes"][0]
    assert node["level"] == 0 and node["message_ids"] and node["source_tokens"] > node["tokens"]


def test_mark_superseded_annotates_lines_that_quote_a_corrected_value() -> None:
    from memory_core.compaction.compressor import Superseded, mark_superseded

    old = Superseded(5, "The gateway timeout is 280 s.", "280", "s")
    text = ("- [msg 5] user: The gateway timeout is 280 s.\n"
            "- [msg 6] The cache TTL is 100 s.\n"
            "- [msg 9] 280 s\n"
            "- [msg 7] build 280 passed; 1280 s in all\n"
            "- [msg 5] fact: already marked (later superseded)")
    out = mark_superseded(text, [old]).split("\n")
    note = ' (later corrected: "The gateway timeout is 280 s." is superseded)'
    assert out[0] == "- [msg 5] user: The gateway timeout is 280 s." + note
    assert out[1] == "- [msg 6] The cache TTL is 100 s."
    assert out[2] == "- [msg 9] 280 s" + note  # the number repeated elsewhere
    assert out[3] == "- [msg 7] build 280 passed; 1280 s in all"  # not "280 s"
    assert out[4].endswith("(later superseded)") and out[4].count("superseded") == 1
    assert mark_superseded(text, []) == text
    assert Superseded(1, "x", "7", None).value_pattern() is None  # too bare to match
    # Memoised per (text, superseded items): a later correction changes the result.
    newer = Superseded(6, "The cache TTL is 100 s.", "100", "s")
    both = mark_superseded(text, [old, newer]).split("\n")
    assert both[1].endswith(' (later corrected: "The cache TTL is 100 s." is superseded)')
    assert mark_superseded(text, [old]).split("\n") == out


def _marked_line_by_line(line: str, superseded: list[Any]) -> bool:
    """Whether a line quotes an old value: cites its message, or every item's pattern
    tried on it."""
    return any(f"[msg {i.source_id}]" in line or ((p := i.value_pattern()) is not None
                                                  and p.search(line)) for i in superseded)


@settings(max_examples=300, deadline=None)
@example("v1.2.0 and 1,208.5", [("1.2", None), ("1,208", None)])
@example("208,1.2.", [("1.2", None)])
@given(st.lists(st.sampled_from(["1", "2", "8", "0", ".", ",", " ", "s", "ms", "v", "x",
                                 "\n", "-", "%", "1.2.", "208,", "[msg 101]", "[msg 103]"]),
                max_size=60).map("".join),
       st.lists(st.tuples(st.sampled_from(["12", "1.2", "208", "1,208", "0.41", "$5", "2.0"]),
                          st.sampled_from([None, "s", "ms", "%"])), max_size=6))
def test_mark_superseded_finds_each_old_number_where_its_pattern_does(
        text: str, olds: list[tuple[str, str | None]]) -> None:
    """The lines marked are those where some old value's pattern matches (the items
    looked up by the line's numbers, not tried one by one on every line)."""
    from memory_core.compaction.compressor import (
        Superseded,
        _marked,
        _superseded_key,
        mark_superseded,
    )

    superseded = [Superseded(100 + n, f"item {n}", v, u) for n, (v, u) in enumerate(olds)]
    marked = mark_superseded(text, superseded)
    for line, out in zip(text.split("\n"), marked.split("\n"), strict=True):
        assert (out != line) == ("superseded" not in line
                                 and _marked_line_by_line(line, superseded)), (line, out)
    # a scaffold's node marks with the items its text may quote: the same text
    assert _marked(text, _superseded_key(superseded)) == marked


def _former_marks(text: str, superseded: list[Any]) -> str:
    """The marks as the whole text was marked before issue 28's per-line memo: each
    line's cited items, then the items whose pattern matches it (looked up by its
    numbers, the others tried everywhere), in the items' order."""
    from memory_core.compaction.compressor import _CITED, _DIGITS, _first_sentence, _numbers_in

    by_source: dict[int, list[Any]] = {}
    for item in superseded:
        by_source.setdefault(item.source_id, []).append(item)
    by_number: dict[str, list[Any]] = {}
    anywhere: list[Any] = []
    for n, item in enumerate(superseded):
        if (pat := item.value_pattern()) is not None:
            if _DIGITS.fullmatch(item.value_text or "") is None:
                anywhere.append((n, item, pat))
            else:
                by_number.setdefault(item.value_text or "", []).append((n, item, pat))
    out = []
    for line in text.split("\n"):
        if "superseded" not in line:
            olds = [i for m in _CITED.finditer(line) for i in by_source.get(int(m.group(1)), ())]
            near = [c for number in _numbers_in(line) for c in by_number.get(number, ())]
            olds += [item for _, item, pat in sorted(near + anywhere, key=lambda c: c[0])
                     if pat.search(line)]
            if olds:
                quoted = "; ".join(dict.fromkeys(f'"{_first_sentence(i.text, 120)}"'
                                                 for i in olds))
                line = f"{line} (later corrected: {quoted} is superseded)"
        out.append(line)
    return "\n".join(out)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.lists(st.sampled_from(
           ["1", "2", "8", "0", ".", ",", " ", "s", "ms", "v", "x", "-", "%", "1.2.", "208,",
            "[msg 101]", "[msg 103]", "[msg 102]", "superseded", "The ", "TTL "]),
           max_size=12).map("".join), max_size=8).map("\n".join),
       st.lists(st.tuples(st.sampled_from([101, 102, 103, 104]),
                          st.sampled_from(["The TTL is 12 s.", "Port 208. Then more.", "x"]),
                          st.sampled_from([None, "12", "1.2", "208", "1,208", "0.41", "$5"]),
                          st.sampled_from([None, "s", "ms", "%"])), max_size=6))
def test_marks_line_by_line_are_the_former_whole_text_marks(
        text: str, olds: list[tuple[int, str, str | None, str | None]]) -> None:
    """Each line marked on its own, memoised on the items it may quote (issue 28), gives
    the text the former whole-text marking gave: the same lines, the same quotes in
    the same order; through a scaffold node (:func:`_marked`) too."""
    from memory_core.compaction.compressor import (
        Superseded,
        _key_index,
        _mark_superseded,
        _marked,
        _node_marks,
        _superseded_key,
        mark_superseded,
    )

    superseded = [Superseded(*o) for o in olds]
    want = _former_marks(text, superseded) if superseded else text
    assert mark_superseded(text, superseded) == want
    key = _superseded_key(superseded)
    assert _marked(text, key) == want
    # The scaffold memo's key (:func:`_node_marks`): the items that do mark the text,
    # which alone mark it the same.
    mine = _node_marks(text, key, _key_index(key))
    assert (_mark_superseded(text, mine) if mine else text) == want
    assert all(_mark_superseded(text, (item,)) != text for item in mine)


def test_a_correction_re_marks_only_the_lines_that_quote_it(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """A node marked again after one more correction reads only the lines whose items
    changed: every other line's numbers and marks come from the memo (issue 28: the
    newest 200 superseded items change with every correction, and each changed node
    was re-read whole)."""
    from memory_core.compaction import compressor
    from memory_core.compaction.compressor import Superseded, _marked, _superseded_key

    lines = [f"- step {n}: the pool of service {n} holds {100 + n} connections [msg {n}]"
             for n in range(1, 61)]
    text = "\n".join(lines)
    first = [Superseded(5, "The pool of service 5 holds 105 connections.", "105", None)]
    _marked(text, _superseded_key(first))
    read: list[str] = []
    numbers_in = compressor._numbers_in

    def counted(line: str) -> set[str]:
        read.append(line)
        return numbers_in(line)

    monkeypatch.setattr(compressor, "_numbers_in", counted)
    both = [*first, Superseded(40, "The pool of service 40 holds 140 connections.", "140",
                               None)]
    marked = _marked(text, _superseded_key(both)).split("\n")
    assert [n for n, line in enumerate(marked, 1) if "superseded" in line] == [5, 40]
    assert read == []  # each line's numbers were read once, by the first marking


def test_path_tokens_sums_the_stored_counts_outside_the_forest(tmp_path: Path) -> None:
    from memory_core.compaction.compressor import SummaryNode, load_path
    from memory_core.engine import Engine
    from memory_core.models import Scope
    from tests.test_search_support import capture_chat

    engine = Engine(tmp_path)
    try:
        # More ids than one SQL statement takes (900 per chunk).
        ids = capture_chat(engine, Scope("t", "default"),
                           [f"turn {i} says something about item {i * 7}" for i in range(1000)])
        path = engine.store.read_tx(load_path, ids)
        assert len(path) == 1000
        assert engine.path_tokens(ids) == sum(m.tokens for m in path)
        node = SummaryNode(1, 0, tuple(ids[:600]), "summary", 55, 9000, "extractive")
        assert engine.path_tokens(ids, [node]) == sum(m.tokens for m in path[600:]) + 55 + 40
    finally:
        engine.close()


async def test_a_correction_after_compaction_marks_the_summarised_old_value(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """A value summarised before it was corrected must not read as current in the
    scaffold; the scaffold changes once (the correction), then is stable again."""
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", compaction={
        "min_tokens": 500, "min_turns": 2, "tail_turns": 2})
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-corr-000000000001",
                                    max_retries=0)
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]

        async def say(text: str) -> list[Any]:
            messages.append({"role": "user", "content": text})
            r = await client.chat.completions.create(model="m", messages=messages)
            messages.append({"role": "assistant", "content": r.choices[0].message.content})
            await proxy.settle()
            return upstream.chat_requests[-1]["json"]["messages"]

        await say("hello")  # the protected head turn, never summarised
        await say("The gateway timeout for long-polling clients is 280 s.")
        for i in range(10):
            await say(f"step {i}: " + "words " * 80)
        sent = await say("step 10: more words")
        scaffold = next(m["content"] for m in sent if isinstance(m.get("content"), str)
                        and m["content"].startswith("[Conversation summary"))
        old = [ln for ln in scaffold.splitlines() if "280 s" in ln]
        assert old and all("superseded" not in ln for ln in old)  # still current
        await say("Correction: the gateway timeout for long-polling clients is 150 s.")
        sent = await say("step 11: and more words")
        scaffold = next(m["content"] for m in sent if isinstance(m.get("content"), str)
                        and m["content"].startswith("[Conversation summary"))
        old = [ln for ln in scaffold.splitlines() if "280 s" in ln]
        assert old and all("superseded" in ln for ln in old)
    finally:
        await proxy.runner.cleanup()


def test_tool_results_outlive_the_timeline_under_a_tight_cap(tmp_path: Path) -> None:
    """A tool result's head is its own summary section: when the cap drops the whole
    timeline, the failing test's name and the config value are still quoted, and a
    ``snake_case = value`` setting is kept with its value among the identifiers."""
    from memory_core.compaction.compressor import extractive_summary
    from memory_core.engine import Engine

    path = [PathMessage(1, "system", "You are a coding assistant.", 8, False, 0.0)]
    i = 2
    for t in range(120):
        path.append(PathMessage(i, "user", f"Step {t}: look at module {t} and tidy it up.",
                                12, False, 0.0))
        path.append(PathMessage(i + 1, "assistant", f"Tidied module {t}; nothing else changed.",
                                10, False, 0.0))
        i += 2
        if t in (30, 90):
            path.append(PathMessage(i, "assistant", "", 20, True, 0.0))
            text = ("........F...\nFAILED tests/test_sync.py::test_reconnect_backoff - Timeout"
                    if t == 30 else "[limits]\nmax_inflight = 224\nmax_body_mb = 32\n")
            path.append(PathMessage(i + 1, "tool", text, 25, False, 0.0))
            i += 2
    engine = Engine(tmp_path / "data")
    try:
        text = engine.store.read_tx(extractive_summary, path, 600)
    finally:
        engine.close()
    assert count_tokens(text) <= 600
    assert "Tool results:" in text
    lines = text.splitlines()
    assert any("test_reconnect_backoff" in ln and ln.startswith("- [msg ") for ln in lines)
    assert any("max_inflight = 224" in ln for ln in lines)
    # the timeline is what the cap dropped (or folded: 120 near-identical steps
    # become a line or two, condense_repeats), not the tool results
    timeline = lines[lines.index("Timeline:") + 1:] if "Timeline:" in lines else []
    assert all(ln.startswith("- (… ") or "similar, last [msg" in ln for ln in timeline[-1:])
    assert "Identifiers and numbers:" in text
    idents = lines[lines.index("Identifiers and numbers:") + 1:]
    assert any(ln.endswith("max_inflight = 224") for ln in idents)


def test_a_setting_is_kept_with_its_value_on_its_own_line() -> None:
    """``key = value`` never reaches across a line break (a YAML list, a value on
    the next line): an identifier line of the summary stays one line."""
    from memory_core.compaction.compressor import _IDENT

    assert _IDENT.findall("max_inflight = 224") == ["max_inflight = 224"]
    assert all("\n" not in m for m in _IDENT.findall("retry_count:\n- a\nmax_body =\n  32"))


def test_plan_on_the_outline_equals_the_plan_on_the_loaded_path(tmp_path: Path) -> None:
    """Engine.compact plans on roles and counts from memory before reading texts."""
    from memory_core.compaction.compressor import load_nodes, load_path, outline_path, plan
    from memory_core.config import CompactionConfig
    from memory_core.engine import Engine
    from memory_core.models import Scope

    engine = Engine(tmp_path)
    scope = Scope("t", "default")
    try:
        history: list[Any] = [{"role": "system", "content": "s"}]
        for i in range(60):
            history.append({"role": "user", "content": f"turn {i}: fix item {i * 7} " * 20})
            if i % 5 == 0:  # a tool round: a segment the plan never splits
                history += [{"role": "assistant", "content": None, "tool_calls": [
                    {"id": f"c{i}", "type": "function",
                     "function": {"name": "ls", "arguments": "{}"}}]},
                    {"role": "tool", "tool_call_id": f"c{i}", "content": "a.py b.py " * 30}]
            history.append({"role": "assistant", "content": f"done with item {i * 7}. " * 15})
        ticket, fut = engine.capture_request(scope, "r", history, {})
        ids = list(fut.result(30).message_ids)
        nodes = engine.store.read_tx(load_nodes, scope.tenant, scope.role, ids)
        path = engine.store.read_tx(load_path, ids)
        facts = engine.store.read_tx(engine._message_facts.outlines, [*ids, 10**9])  # one unknown
        for cfg in (CompactionConfig(), CompactionConfig(min_tokens=500, group_tokens=900,
                                                         consolidation_k=2),
                    CompactionConfig(min_tokens=10**7)):
            expected = plan(path, nodes, cfg)
            assert plan(outline_path([*ids, 10**9], facts), nodes, cfg) == expected
        assert plan(path, nodes, CompactionConfig(min_tokens=500, group_tokens=900))
        created = engine.compact(scope, ticket.result.thread_id, ids)  # type: ignore[union-attr]
        assert created  # due: compacted through the full load
        nodes = engine.store.read_tx(load_nodes, scope.tenant, scope.role, ids)
        cfg = engine.config.compaction
        assert (plan(outline_path(ids, facts), nodes, cfg) == plan(path, nodes, cfg))
    finally:
        engine.close()


def test_summary_node_cache_equals_a_fresh_read(tmp_path: Path) -> None:
    """Engine.forest_for and compaction read nodes through memory_core.compaction.node_cache:
    the cached nodes equal load_nodes after every change — new Level-0 nodes, a
    consolidation setting children's parent_id, another engine on the same data
    directory (another process) purging the session, and a new conversation."""
    from memory_core.compaction.compressor import load_nodes
    from memory_core.config import CompactionConfig, MemoryConfig
    from memory_core.engine import Engine
    from memory_core.models import Scope

    cfg = MemoryConfig(compaction=CompactionConfig(min_tokens=500, group_tokens=900,
                                                   consolidation_k=2))
    engine = Engine(tmp_path, cfg)
    scope = Scope("t", "default", session="s1")
    namespace = engine.store.location

    def same(ids: list[int]) -> list[Any]:
        fresh = engine.store.read_tx(load_nodes, scope.tenant, scope.role, ids)
        cached = engine.store.read_tx(engine._summary_nodes.on_path, namespace, scope.tenant,
                                      scope.role, ids)
        assert cached == fresh
        return cached

    try:
        history: list[Any] = [{"role": "system", "content": "s"}]
        seen: list[list[Any]] = []
        for block in range(4):
            for i in range(block * 15, block * 15 + 15):
                history.append({"role": "user", "content": f"turn {i}: fix item {i * 7} " * 20})
                history.append({"role": "assistant", "content": f"done {i * 7}. " * 15})
            ticket, fut = engine.capture_request(scope, f"r{block}", list(history), {})
            ids = list(fut.result(30).message_ids)
            same(ids)
            assert engine.compact(scope, ticket.result.thread_id, ids)  # type: ignore[union-attr]
            engine.flush()
            seen.append(same(ids))
            same(ids[: len(ids) // 2])  # a shorter path: only the nodes lying on it
            same(ids[::-1])  # not ascending: the set comparison
            same([i for i in ids if i % 7])  # gaps: nodes over a missing id are off the path
        assert any(n.level > 0 for n in seen[-1])  # consolidated: parents were set
        assert any(n.parent_id is not None for n in engine.store.read_tx(
            engine._summary_nodes.active, namespace, scope.tenant, scope.role))
        other = Engine(tmp_path, cfg)  # another process's purge
        try:
            assert other.purge(tenant="t", session="s1")["summary_nodes"] > 0
        finally:
            other.close()
        assert same(ids) == []
        ticket, fut = engine.capture_request(scope, "again", list(history), {})
        new_ids = list(fut.result(30).message_ids)
        assert set(new_ids).isdisjoint(ids)
        assert engine.compact(scope, ticket.result.thread_id, new_ids)  # type: ignore[union-attr]
        engine.flush()
        assert same(new_ids)
    finally:
        engine.close()


def test_the_cheap_fit_bound_counts_bytes_not_characters() -> None:
    """100 emoji are 100 characters but 300 o200k tokens: a scaffold that dense must
    not pass as fitting a 150-token share."""
    from memory_core.compaction.compressor import _fits
    from memory_core.tokens import count_tokens

    dense = "🦄" * 100
    assert count_tokens(dense) > 150
    assert not _fits(dense, 150)
    assert _fits("plain words " * 10, 150)


def test_an_inline_compaction_waits_for_the_running_write_only(tmp_path: Path) -> None:
    """Inline compaction (``force``, a request waits for it) writes its nodes ahead of
    the background writes queued before it (long messages' extraction): it waits for
    the job running now, not for the batch behind it (tests/test_context_budget.py's
    recovery ran past its time limit on PostgreSQL in CI behind such a batch)."""
    import threading

    from memory_core.config import CompactionConfig, MemoryConfig
    from memory_core.engine import Engine
    from memory_core.models import Scope

    engine = Engine(tmp_path, MemoryConfig(compaction=CompactionConfig(
        min_tokens=500, group_tokens=10**6)))  # one node
    scope = Scope("t", "default")
    try:
        history: list[Any] = [{"role": "system", "content": "s"}]
        for i in range(30):
            history.append({"role": "user", "content": f"turn {i}: fix item {i * 7} " * 20})
            history.append({"role": "assistant", "content": f"done with item {i * 7}. " * 15})
        ticket, fut = engine.capture_request(scope, "r", history, {})
        ids = list(fut.result(30).message_ids)
        engine.flush()
        created: list[int] = []
        queued = threading.Event()
        write_tx = engine.store.write_tx

        def signalled(*args: Any, **kwargs: Any) -> Any:  # the real write, then the signal
            fut = write_tx(*args, **kwargs)
            if kwargs.get("urgent"):
                queued.set()
            return fut

        # The nodes committed as each job behind the running one runs.
        with writer_in_a_batch(engine, lambda: len(engine.forest_status()["nodes"])) as seen:
            engine.store.write_tx = signalled  # type: ignore[method-assign]
            worker = threading.Thread(target=lambda: created.extend(engine.compact(
                scope, ticket.result.thread_id, ids, force=True)))  # type: ignore[union-attr]
            worker.start()
            assert queued.wait(30)  # the compaction's node is queued behind the running job
        worker.join(30)
        assert len(created) == 1  # compacted: one node
        assert seen == [1] * 5  # written after the running job, before those behind it
    finally:
        engine.close()


@pytest.mark.parametrize("upstream_key", ["", "sk-held-by-the-proxy-000000000002"])
async def test_a_summarizer_elsewhere_never_gets_a_key_meant_for_the_upstream(
        upstream: FakeUpstream, tmp_path: Path, upstream_key: str) -> None:
    """``compaction.llm_base_url`` naming another server (a local model for summaries)
    without ``compaction.llm_api_key``: the client's key, and the proxy's own
    ``upstream_api_key``, are credentials for the upstream and must not travel there.
    Without a base URL of its own the summarizer is the upstream and borrows them."""
    other = FakeUpstream()
    await other.start()
    client_key = "sk-client-key-of-some-tenant-000000000003"
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", proxy={
        "upstream_api_key": upstream_key}, compaction={
        "summarizer": "llm", "llm_model": "summary-model", "llm_base_url": other.base_url,
        "min_tokens": 500, "min_turns": 2, "tail_turns": 2, "group_tokens": 100000})
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=client_key,
                                    max_retries=0)
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        for i in range(8):
            messages.append({"role": "user", "content": f"step {i}: " + "details " * 60})
            r = await client.chat.completions.create(model="m", messages=messages)
            messages.append({"role": "assistant", "content": r.choices[0].message.content})
        await proxy.settle()
        calls = other.chat_requests
        assert calls and all(r["json"]["model"] == "summary-model" for r in calls)
        for r in calls:
            assert "Authorization" not in r["headers"], r["headers"].get("Authorization")
        assert all(r["json"]["model"] == "m" for r in upstream.chat_requests)
    finally:
        await proxy.runner.cleanup()
        await other.stop()


def test_no_node_spans_the_opening_of_a_tool_loop_it_reaches_into() -> None:
    """With the last inline stage's ``tail_rounds``, the middle reaches into the newest
    turn's rounds: one group joined the older turns and those rounds across the
    turn's opening message, so its summary stood before the task it followed and no
    node covered one run of the path."""
    from memory_core.compaction.compressor import PathMessage, plan
    from memory_core.config import CompactionConfig

    path = [PathMessage(1, "system", "s", 5, False, 0.0)]
    i = 2
    for _ in range(3):  # three older turns
        path += [PathMessage(i, "user", "u", 50, False, 0.0),
                 PathMessage(i + 1, "assistant", "a", 50, False, 0.0)]
        i += 2
    opening = i
    path.append(PathMessage(opening, "user", "the task", 50, False, 0.0))
    i += 1
    for _ in range(6):  # the turn's tool rounds
        path += [PathMessage(i, "assistant", "call", 50, False, 0.0),
                 PathMessage(i + 1, "tool", "result", 300, False, 0.0)]
        i += 2
    cfg = CompactionConfig(head_turns=0, tail_turns=1, tail_rounds=2, min_tokens=100,
                           min_turns=1,
                           group_tokens=100_000)
    groups = [g.message_ids for g in plan(path, [], cfg) if g.level == 0]
    assert groups and all(opening not in g for g in groups)
    assert all(max(g) < opening or min(g) > opening for g in groups), groups
    assert any(min(g) > opening for g in groups)  # the older rounds are compacted


_ROLES = st.sampled_from(["system", "user", "assistant", "tool", "developer"])


@settings(max_examples=300, deadline=None)
@given(roles=st.lists(_ROLES, max_size=40), tokens=st.integers(0, 5000),
       head=st.integers(0, 3), tail=st.integers(0, 8), min_turns=st.integers(0, 8),
       k=st.integers(2, 6), cuts=st.lists(st.integers(0, 39), max_size=30),
       levels=st.lists(st.integers(0, 2), min_size=30, max_size=30))
def test_may_be_due_false_means_plan_finds_nothing(
        roles: list[str], tokens: int, head: int, tail: int, min_turns: int, k: int,
        cuts: list[int], levels: list[int]) -> None:
    """Whatever the roles, tokens and existing nodes (disjoint runs of the path, any
    level), a path :func:`may_be_due` rules out gets no group from :func:`plan`."""
    path = [pm(i + 1, r, tokens) for i, r in enumerate(roles)]
    cfg = CompactionConfig(head_turns=head, tail_turns=tail, min_turns=min_turns,
                           min_tokens=0, consolidation_k=k)
    bounds = sorted({0, len(path), *(c for c in cuts if c < len(path))})
    nodes = [SummaryNode(100 + n, levels[n], [m.id for m in path[a:b]], "t", 1, 1, "x")
             for n, (a, b) in enumerate(zip(bounds, bounds[1:])) if n % 2 and b > a]
    if not may_be_due(len(path), cfg):
        assert plan(path, nodes, cfg) == []


def test_may_be_due_is_tight_for_a_user_only_path() -> None:
    """The bound is the plan's own: ``head + tail + min_turns`` user messages are due,
    one fewer is not; 2×K roots are due for a consolidation, 2×K-1 are not."""
    cfg = CompactionConfig(head_turns=1, tail_turns=6, min_turns=6, min_tokens=500,
                           consolidation_k=8)
    path = [pm(i + 1, "user", 100) for i in range(13)]
    assert may_be_due(13, cfg) and plan(path, [], cfg)
    assert not may_be_due(12, cfg) and not plan(path[:12], [], cfg)
    cfg = CompactionConfig(head_turns=1, tail_turns=6, min_turns=6, consolidation_k=2)
    path = [pm(i + 1, "assistant") for i in range(4)]
    roots = [SummaryNode(10 + i, 0, [i + 1], "t", 1, 1, "x") for i in range(4)]
    assert may_be_due(4, cfg) and plan(path, roots, cfg)
    assert not may_be_due(3, cfg) and not plan(path[:3], roots[:3], cfg)
    assert not may_be_due(100, CompactionConfig(enabled=False))


def _spawned(proxy: RunningProxy, monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the background tasks the proxy spawns from now on."""
    names: list[str] = []
    tasks = proxy.app[TASKS]
    spawn = tasks.spawn

    def recording(coro: Any, name: str) -> asyncio.Task[Any]:
        names.append(name)
        return spawn(coro, name)

    monkeypatch.setattr(tasks, "spawn", recording)
    return names


async def test_a_new_conversation_schedules_no_compaction(
        upstream: FakeUpstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Nothing can be due on a thread of two or three messages: its answer is stored
    (a capture task) but no compaction check is spawned, memory on or off."""
    proxy = await start_proxy(upstream.base_url, tmp_path / "d")
    try:
        names = _spawned(proxy, monkeypatch)
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-new-0000000000001",
                                    max_retries=0)
        for i, memory in enumerate(("on", "off", "on")):
            messages = [{"role": "system", "content": "Be brief."}] if i else []
            messages.append({"role": "user", "content": f"question {i}: " + "words " * 400})
            await client.chat.completions.create(
                model="m", messages=messages,  # type: ignore[arg-type]
                extra_headers={"X-LCM-Memory": memory})
        await proxy.settle()
        assert sum(n.startswith("capture-response-") for n in names) == 3
        assert not [n for n in names if n.startswith("compaction-")]
    finally:
        await proxy.runner.cleanup()


async def test_a_due_thread_is_still_compacted_on_its_first_due_turn(
        upstream: FakeUpstream, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """With thresholds a short thread reaches, the check is spawned once the path may
    be due, and the turn whose stored path :func:`plan` finds due is compacted then."""
    cfg = {"min_tokens": 500, "min_turns": 2, "tail_turns": 2, "head_turns": 1,
           "consolidation_k": 4}
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", compaction=cfg)
    try:
        names = _spawned(proxy, monkeypatch)
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-due-0000000000001",
                                    max_retries=0)
        messages: list[dict[str, Any]] = []
        first_nodes = None
        for turn in range(6):
            messages.append({"role": "user", "content": f"step {turn}: " + "detail " * 200})
            r = await client.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
            messages.append({"role": "assistant", "content": r.choices[0].message.content})
            await proxy.settle()
            checks = [n for n in names if n.startswith("compaction-")]
            # path: the request's messages and the answer
            assert bool(checks) == any(may_be_due(2 * t + 2, CompactionConfig(**cfg))
                                       for t in range(turn + 1))
            if first_nodes is None and proxy.engine.forest_status()["nodes"]:
                first_nodes = turn
        # user turns needed: head 1 + tail 2 + min_turns 2 = 5, i.e. the fifth turn
        assert first_nodes == 4
    finally:
        await proxy.runner.cleanup()
