"""Every upstream request fits its context budget (issue 23): the budget, its
enforcement through the proxy, instructions that survive compaction, and recovery
from an upstream's context-length error."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import openai
import orjson
import pytest

from memory_core.assembly import budget
from memory_core.assembly.budget import ContextConfig, ContextLimits
from memory_core.compaction.compressor import SummaryNode, scaffold_text
from memory_core.tools.memory_tools import NAMES
from proxy.settings import SettingsError, load_settings
from tests.conftest import sql_read, start_proxy, store_sql
from tests.fake_upstream import FakeUpstream, Reply


# -- the budget ---------------------------------------------------------------------
def test_windows_from_the_shipped_table() -> None:
    cfg = ContextConfig()
    assert budget.window_for("gpt-4o-mini", cfg) == 128_000
    assert budget.window_for("gpt-4.1-nano", cfg) == 1_047_576
    assert budget.window_for("gpt-4-0613", cfg) == 8_192
    assert budget.window_for("openrouter/openai/gpt-4o", cfg) == 128_000
    assert budget.window_for("llama3.1:8b", cfg) == 131_072
    assert budget.window_for("Meta-Llama-3-8B-Instruct", cfg) == 8_192
    assert budget.window_for("Qwen/Qwen2.5-7B-Instruct", cfg) == 32_768
    assert budget.window_for("claude-3-5-sonnet", cfg) == 200_000
    # A pattern's window equal to the default is still the table's (x-lcm-context says so).
    assert budget.request_budget({"model": "gpt-4o-mini"}, cfg).source == "table"
    assert budget.request_budget({"model": "no-such-model"}, cfg).source == "default"
    assert budget.window_for("my-own-model", cfg) == cfg.default_window_tokens
    assert budget.window_for(None, cfg) == cfg.default_window_tokens


def test_budget_subtracts_the_output_reserve() -> None:
    cfg = ContextConfig(model_windows=(("tiny*", 8192),), output_reserve_tokens=4096,
                        margin_tokens=100)
    plain = budget.request_budget({"model": "tiny-1"}, cfg)
    assert (plain.window, plain.reserve, plain.input_tokens) == (8192, 2048, 8192 - 2048 - 100)
    asked = budget.request_budget({"model": "tiny-1", "max_completion_tokens": 500}, cfg)
    assert asked.input_tokens == 8192 - 500 - 100
    assert budget.request_budget({"model": "tiny-1", "max_tokens": 700}, cfg).reserve == 700
    capped = budget.request_budget({"model": "tiny-1"}, cfg, hard_limit=3000)
    assert capped.input_tokens == 3000


def test_model_windows_setting_is_checked() -> None:
    settings = load_settings(None, environ={"LCM_CONTEXT__MODEL_WINDOWS": "local-*=4096"})
    assert settings.memory_config().context.model_windows == (("local-*", 4096),)
    with pytest.raises(SettingsError, match="model_windows"):
        load_settings(None, environ={"LCM_CONTEXT__MODEL_WINDOWS": "gpt-4o"})
    with pytest.raises(SettingsError, match="model_windows"):
        load_settings(None, environ={"LCM_CONTEXT__MODEL_WINDOWS": "x=12"})


def test_counting_covers_tool_calls_and_parts() -> None:
    text = {"role": "user", "content": "hello there " * 50}
    parts = {"role": "user", "content": [{"type": "text", "text": "hello there " * 50},
                                         {"type": "image_url", "image_url": {"url": "u"}}]}
    call = {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "read_file", "arguments": '{"path": "' + "a/" * 200 + '"}'}}]}
    assert budget.message_tokens(parts) == budget.message_tokens(text) + budget.IMAGE_PART_TOKENS
    assert budget.message_tokens(call) > 200


# -- context-length errors ------------------------------------------------------------
@pytest.mark.parametrize(("status", "body", "limit", "counted"), [
    (400, {"error": {"message": "This model's maximum context length is 8192 tokens. However,"
                                " your messages resulted in 9000 tokens. Please reduce the "
                                "length of the messages.", "type": "invalid_request_error",
                     "param": "messages", "code": "context_length_exceeded"}}, 8192, 9000),
    (400, {"object": "error", "message": "This model's maximum context length is 4096 tokens."
                                         " However, you requested 5000 tokens (4000 in the "
                                         "messages, 1000 in the completion).",
           "type": "BadRequestError", "code": 400}, 4096, 5000),
    (400, {"error": {"code": 400, "message": "the request exceeds the available context size,"
                     " try increasing it", "type": "exceed_context_size_error",
                     "n_prompt_tokens": 5000, "n_ctx": 4096}}, 4096, 5000),
    (500, {"error": "input length exceeds maximum context length"}, None, None),
    (400, {"error": {"message": "litellm.ContextWindowExceededError: litellm.BadRequestError:"
                     " prompt is too long: 210000 tokens > 200000 maximum",
                     "type": None, "param": None, "code": "400"}}, 200000, 210000),
    (400, {"error": {"message": "The decoder prompt (length 9000) is longer than the maximum"
                     " model length of 8192.", "type": "BadRequestError"}}, 8192, 9000),
])
def test_context_errors_recognised(status: int, body: dict[str, Any], limit: int | None,
                                   counted: int | None) -> None:
    err = budget.context_error(status, orjson.dumps(body))
    assert err is not None
    assert (err.limit, err.counted) == (limit, counted)


@pytest.mark.parametrize(("status", "body"), [
    (429, b'{"error": {"message": "Rate limit reached for gpt-4o on tokens per min (TPM)",'
          b' "code": "rate_limit_exceeded"}}'),
    (400, b'{"error": {"message": "Request too large for gpt-4o: tokens per min (TPM): '
          b'Limit 30000, Requested 50000.", "code": "rate_limit_exceeded"}}'),
    (400, b'{"error": {"message": "Invalid value for messages[3].role"}}'),
    (200, b'{"error": {"code": "context_length_exceeded"}}'),
])
def test_other_errors_are_not_context_errors(status: int, body: bytes) -> None:
    assert budget.context_error(status, body) is None


def test_learned_window_shrinks_and_scales_to_our_count() -> None:
    limits = ContextLimits()
    plan = budget.Budget(window=128_000, reserve=4096, input_tokens=123_648, source="table")
    err = budget.ContextError(limit=8192, counted=10_000, message="")
    window = limits.learn("m", plan, err, sent_tokens=9_000)
    assert window == int(8192 * 0.9)  # their tokenizer counts 10 % more than ours
    assert limits.get("m") == window
    unknown = budget.ContextError(limit=None, counted=None, message="")
    assert limits.learn("m", budget.Budget(window, 1000, window - 1256, "learned", 256), unknown,
                        sent_tokens=window - 1300) < window


# -- the forest under its budget --------------------------------------------------------
def test_scaffold_fits_its_budget_at_5000_turns() -> None:
    """A forest of 5,000 turns (logarithmic in size: up to 2K-1 roots per level)
    renders within its share of every budget, oldest and highest nodes as headers."""
    from memory_core.compaction.compressor import CompactionConfig, consolidations

    cfg = CompactionConfig(consolidation_k=4)
    nodes: list[SummaryNode] = []
    next_id, msg = 1, 10
    for _turn in range(5000 // 10):  # one Level-0 node per ten turns (20 messages)
        ids = list(range(msg, msg + 20))
        msg += 20
        nodes.append(SummaryNode(next_id, 0, ids, f"- [msg {ids[0]}] Step: ran the tests, 3 failed "
                                 "in tests/test_api.py\n" * 25, 600, 4000,
                                 "extractive"))
        next_id += 1
        for group in consolidations(nodes, [], cfg):
            children = [n for n in nodes if n.id in group.children]
            for child in children:
                child.parent_id = next_id
            nodes.append(SummaryNode(next_id, group.level, list(group.message_ids),
                                     "- merged line\n" * 80, 900, 40000, "extractive"))
            next_id += 1
    roots = sorted([n for n in nodes if n.parent_id is None], key=lambda n: n.first)
    assert len(roots) <= 7 * 6  # (2K-1) per level, log_K levels
    full = scaffold_text(roots, tools_enabled=True)
    for share in (1200, 2400, 9600, 38400):
        text = scaffold_text(roots, tools_enabled=True, budget_tokens=share)
        assert budget.count_tokens(text) <= share or text.count("\n") <= 4
        assert budget.count_tokens(text) <= max(share, 200)
        assert f"messages {roots[0].first}–" in text  # the range is still named
    assert budget.count_tokens(full) > 2400  # the small shares had to collapse nodes
    # Unchanged inputs render identical bytes (the upstream's prompt cache).
    assert scaffold_text(roots, tools_enabled=True, budget_tokens=2400) == scaffold_text(
        roots, tools_enabled=True, budget_tokens=2400)


# -- through the proxy ---------------------------------------------------------------------
def _forwarded_tokens(req: dict[str, Any]) -> int:
    body = req["json"]
    return budget.messages_tokens(body["messages"]) + budget.tools_tokens(body.get("tools"))


def _paste(i: int) -> str:
    return (f"Here is the log of run {i}:\n" + "\n".join(
        f"2024-05-0{i % 9 + 1} 12:{k:02d}:07 INFO worker-{k} processed batch {i * 100 + k}"
        f" in {k * 13 % 97} ms, queue depth {k * 7 % 31}" for k in range(25)))


async def test_over_budget_request_is_compacted_before_forwarding(upstream: FakeUpstream,
                                                                  tmp_path: Path) -> None:
    """An 8k-window model and default compaction thresholds: every request the proxy
    forwards counts at most its budget (today's proxy passed it by turn 10)."""
    proxy = await start_proxy(upstream.base_url, tmp_path / "d",
                              context={"model_windows": ["tiny-*=8192"]})
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-ctx-000000000001",
                                    max_retries=0)
        system = {"role": "system", "content": "You are a careful assistant."}
        messages: list[dict[str, Any]] = [system]
        limit = budget.request_budget({"model": "tiny-8b"},
                                      proxy.engine.config.context).input_tokens
        for i in range(30):
            text = _paste(i) if i % 3 == 0 else f"Step {i}: ran the tests, {i % 4} failed."
            messages.append({"role": "user", "content": text})
            raw = await client.chat.completions.with_raw_response.create(
                model="tiny-8b", messages=messages)
            assert raw.headers["x-lcm-memory"] != "over-budget"
            answer = raw.parse().choices[0].message.content
            messages.append({"role": "assistant", "content": answer})
        sent = [_forwarded_tokens(r) for r in upstream.chat_requests]
        client_size = budget.messages_tokens(messages)
        assert client_size > 2 * limit  # the client's history is far over the budget
        assert max(sent) <= limit, (max(sent), limit)
        for req in upstream.chat_requests:
            assert req["json"]["messages"][0] == system
            assert req["json"]["messages"][-1]["content"].endswith(
                req["json"]["messages"][-1]["content"].split("\n")[-1])
        status = proxy.engine.forest_status()
        assert status["nodes"], "compacted inline"
    finally:
        await proxy.runner.cleanup()


async def test_a_large_head_turn_is_summarised_to_fit_a_small_window(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """A 4k window and a first user turn of two pasted logs: once later turns are
    summarised, the last inline stage summarises the head turn too (a gap before
    the covered range), so every request fits; none goes out unchanged."""
    proxy = await start_proxy(upstream.base_url, tmp_path / "d",
                              context={"model_windows": ["tiny-*=4096"]})
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-ctx-000000000004",
                                    max_retries=0)
        messages: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
        limit = budget.request_budget({"model": "tiny-4k"},
                                      proxy.engine.config.context).input_tokens
        head = _paste(0) + "\n" + _paste(1)
        assert budget.count_tokens(head) > limit // 3
        for i in range(12):
            messages.append({"role": "user", "content": head if i == 0 else _paste(i + 2)})
            raw = await client.chat.completions.with_raw_response.create(
                model="tiny-4k", messages=messages)
            assert raw.headers["x-lcm-memory"] != "over-budget", i
            answer = raw.parse().choices[0].message.content
            messages.append({"role": "assistant", "content": answer})
            await proxy.settle()
        assert max(_forwarded_tokens(r) for r in upstream.chat_requests) <= limit
        last = upstream.chat_requests[-1]["json"]["messages"]
        assert all(m.get("content") != head for m in last)  # summarised, not forwarded
        assert messages[-2]["content"] in last[-1]["content"]  # the newest turn verbatim
    finally:
        await proxy.runner.cleanup()


async def test_the_block_takes_the_room_the_messages_leave(upstream: FakeUpstream,
                                                           tmp_path: Path) -> None:
    """A 4k window, a compacted history and a turn that matches much of it: the
    block grows past its share (15 % of the budget) into the room the messages
    leave, and the request still fits its budget."""
    proxy = await start_proxy(upstream.base_url, tmp_path / "d",
                              context={"model_windows": ["tiny-*=4096"]},
                              compaction={"min_tokens": 500, "min_turns": 2, "tail_turns": 2})
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-ctx-000000000005",
                                    max_retries=0)
        messages: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
        cities = ("Oslo", "Lima", "Quito", "Hanoi", "Dakar", "Perth", "Cusco", "Turku")
        for i in range(24):
            messages.append({"role": "user", "content": (
                f"Falcon release {i}: we decided to ship the Falcon build {100 + i} to "
                f"{cities[i % 8]} on day {i + 3}, with {i * 7 % 40} MB of assets.")})
            r = await client.chat.completions.create(model="tiny-4k", messages=messages)
            messages.append({"role": "assistant", "content": r.choices[0].message.content})
            await proxy.settle()
        messages.append({"role": "user", "content": "Which Falcon builds did we decide to"
                                                    " ship, and where?"})
        raw = await client.chat.completions.with_raw_response.create(
            model="tiny-4k", messages=messages)
        limit = budget.request_budget({"model": "tiny-4k"},
                                      proxy.engine.config.context).input_tokens
        share = int(proxy.engine.config.context.block_share * limit)
        assert raw.headers["x-lcm-memory"] == "injected"
        assert int(raw.headers["x-lcm-injected-tokens"]) > share
        assert _forwarded_tokens(upstream.chat_requests[-1]) <= limit
    finally:
        await proxy.runner.cleanup()


async def test_protected_messages_over_budget_are_forwarded_unchanged(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    proxy = await start_proxy(upstream.base_url, tmp_path / "d",
                              context={"model_windows": ["tiny-*=2048"]})
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-ctx-000000000002",
                                    max_retries=0)
        messages = [{"role": "system", "content": "sys"},
                    {"role": "user", "content": _paste(1) * 3}]
        raw = await client.chat.completions.with_raw_response.create(
            model="tiny-1", messages=messages)
        assert raw.headers["x-lcm-memory"] == "over-budget"
        assert "budget=" in raw.headers["x-lcm-context"]
        sent = upstream.chat_requests[-1]["json"]
        assert sent["messages"] == messages
        # Unchanged means unchanged: no memory tools either (they would add ~300 tokens
        # to a request that is already too large).
        assert "tools" not in sent, [t["function"]["name"] for t in sent["tools"]]
        assert sent == {"model": "tiny-1", "messages": messages}
    finally:
        await proxy.runner.cleanup()


async def test_a_full_budget_skips_the_block_and_says_why(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """Messages that fit but leave less than a block's minimum room: no block,
    ``x-lcm-memory-reason: no-room`` (not "nothing to inject")."""
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", tools={"enabled": False},
                              context={"model_windows": ["tiny-*=2048"]})
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-ctx-000000000007",
                                    max_retries=0)
        probe = await client.chat.completions.with_raw_response.create(
            model="tiny-1", messages=[{"role": "user", "content": "hi"}])
        note = dict(p.split("=", 1) for p in probe.headers["x-lcm-context"].split("; "))
        limit = int(note["budget"])
        filler = "word " * (limit - 40)  # about one token a word: room under 64 left
        messages = [{"role": "user", "content": filler}]
        raw = await client.chat.completions.with_raw_response.create(
            model="tiny-2", messages=messages)
        assert raw.headers["x-lcm-memory"] == "skipped"
        assert raw.headers["x-lcm-memory-reason"] == "no-room"
        assert upstream.chat_requests[-1]["json"]["messages"] == messages
    finally:
        await proxy.runner.cleanup()


async def test_mid_conversation_developer_message_survives_compaction(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", compaction={
        "min_tokens": 500, "min_turns": 2, "tail_turns": 2, "group_tokens": 1000})
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-ctx-000000000003",
                                    max_retries=0)
        rule = {"role": "developer", "content": "From now on answer in French and never "
                                                "touch the migrations folder."}
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        for i in range(24):
            if i == 5:
                messages.append(rule)
            messages.append({"role": "user", "content": f"step {i}: " + "details " * 80})
            r = await client.chat.completions.create(model="m", messages=messages)
            messages.append({"role": "assistant", "content": r.choices[0].message.content})
            await proxy.settle()
        last = upstream.chat_requests[-1]["json"]["messages"]
        assert any(isinstance(m.get("content"), str)
                   and m["content"].startswith("[Conversation summary") for m in last)
        assert rule in last
        # In order: after the scaffold, before the newest messages.
        scaffold_at = next(i for i, m in enumerate(last) if isinstance(m.get("content"), str)
                           and m["content"].startswith("[Conversation summary"))
        assert last.index(rule) > scaffold_at
        nodes = proxy.engine.forest_status()["nodes"]
        ids = {i for n in nodes for i in n["message_ids"]}
        dev_ids = [m["id"] for m in proxy.engine.thread_messages(
            proxy.engine.forest_status()["nodes"][0]["thread_id"]) if m["msg_role"] == "developer"]
        assert dev_ids and not ids.intersection(dev_ids)
    finally:
        await proxy.runner.cleanup()


CONTEXT_ERROR = {"message": "This model's maximum context length is 6000 tokens. However, "
                            "your messages resulted in 7000 tokens. Please reduce the length "
                            "of the messages.", "type": "invalid_request_error",
                 "param": "messages", "code": "context_length_exceeded"}


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("tools", [True, False])
async def test_context_length_error_is_recovered_once(upstream: FakeUpstream, tmp_path: Path,
                                                      stream: bool, tools: bool) -> None:
    proxy = await start_proxy(upstream.base_url, tmp_path / "d",
                              tools={"enabled": tools})
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-ctx-000000000004",
                                    max_retries=0)
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        for i in range(12):
            messages.append({"role": "user", "content": _paste(i)})
            messages.append({"role": "assistant", "content": f"Run {i} looks healthy."})
        messages.append({"role": "user", "content": "Which run was slowest?"})
        upstream.push(Reply(status=400, error=CONTEXT_ERROR), Reply(content="run 7"))
        before = len(upstream.chat_requests)
        if stream:
            raw = await client.chat.completions.with_raw_response.create(
                model="big-model", messages=messages, stream=True)
            text = "".join([c.choices[0].delta.content or "" async for c in raw.parse()
                            if c.choices])
        else:
            raw = await client.chat.completions.with_raw_response.create(
                model="big-model", messages=messages)
            text = raw.parse().choices[0].message.content
        assert text == "run 7"
        assert raw.headers["x-lcm-context-recovery"].startswith("retried")
        sent = upstream.chat_requests[before:]
        assert len(sent) == 2
        assert _forwarded_tokens(sent[1]) < _forwarded_tokens(sent[0])
        assert _forwarded_tokens(sent[1]) <= 6000
        assert proxy.engine.context_limits.get("big-model") is not None
        # The inspector shows the body that was answered (the retry), byte for byte.
        await proxy.settle()
        shown = proxy.engine.forwarded(raw.headers["x-lcm-request-id"])
        assert shown is not None and shown["body"].encode() == sent[1]["raw"]
        # Both plans' blocks went upstream: each has its explain log, the retry's newest
        # (planned at the learned window: a smaller block budget).
        logs = store_sql(proxy.engine, "SELECT data FROM assembly_logs ORDER BY id")
        assert len(logs) == 2
        budgets = [orjson.loads(r["data"])["budget_tokens"] for r in logs]
        assert budgets[1] < budgets[0]
        assert b'lcm_context_events_total{outcome="recovered"} 1.0' in (
            proxy.app[__import__("proxy.appkeys").appkeys.METRICS].render())
        # Not looped: a second refusal reaches the client as the upstream sent it.
        upstream.push(Reply(status=400, error=CONTEXT_ERROR), Reply(status=400,
                                                                    error=CONTEXT_ERROR))
        before = len(upstream.chat_requests)
        messages.append({"role": "assistant", "content": "run 7"})
        messages.append({"role": "user", "content": "And the fastest?"})
        with pytest.raises(openai.BadRequestError) as info:
            await client.chat.completions.create(model="big-model", messages=messages,
                                                 stream=stream)
        assert info.value.code == "context_length_exceeded"
        assert len(upstream.chat_requests) - before <= 2
        # The learned window holds for the next request: planned small from the start.
        upstream.replies.clear()
        messages.append({"role": "user", "content": "Thanks."})
        await client.chat.completions.create(model="big-model", messages=messages)
        assert _forwarded_tokens(upstream.chat_requests[-1]) <= 6000
    finally:
        await proxy.runner.cleanup()


@pytest.mark.parametrize("stream", [False, True])
async def test_hidden_rounds_after_a_context_retry_fit_the_learned_window(
        upstream: FakeUpstream, tmp_path: Path, stream: bool) -> None:
    """After a context-length retry the upstream answers the retry's plan: a memory
    call's result goes back fitted to that plan's budget (the learned window), not
    to the refused plan's, which let the hidden round go over the window the upstream
    had just named (7,204 tokens for a 6,000 window) and be refused in turn."""
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", tools={"offer": "always"})
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-ctx-000000000007",
                                    max_retries=0)
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        for i in range(12):
            messages.append({"role": "user", "content": _paste(i)})
            messages.append({"role": "assistant", "content": f"Run {i} looks healthy."})
        upstream.push(Reply(content="noted"))  # the history stored: memory_grep finds it
        await client.chat.completions.create(
            model="other-model", messages=[*messages, {"role": "user", "content": "ok?"}])
        await proxy.settle()
        messages.append({"role": "user", "content": "Which run was slowest?"})
        grep = {"id": "call_g1", "name": "memory_grep",
                "arguments": '{"query": "worker processed batch", "limit": 50}'}
        upstream.push(Reply(status=400, error=CONTEXT_ERROR),
                      Reply(content=None, tool_calls=[grep]), Reply(content="run 7"))
        before = len(upstream.chat_requests)
        if stream:
            text = "".join([c.choices[0].delta.content or "" async for c in
                            await client.chat.completions.create(
                                model="big-model", messages=messages, stream=True)
                            if c.choices])
        else:
            text = (await client.chat.completions.create(
                model="big-model", messages=messages)).choices[0].message.content or ""
        assert text == "run 7"
        sent = upstream.chat_requests[before:]
        assert len(sent) == 3
        assert sent[2]["json"]["messages"][-1]["role"] == "tool"  # the hidden round
        assert _forwarded_tokens(sent[1]) <= 6000
        assert _forwarded_tokens(sent[2]) <= 6000
    finally:
        await proxy.runner.cleanup()


@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("tools", [True, False])
async def test_a_context_error_that_cannot_be_helped_says_so(
        upstream: FakeUpstream, tmp_path: Path, stream: bool, tools: bool) -> None:
    """Nothing to compact (two short messages): the upstream's error reaches the client
    as sent, once, with ``x-lcm-context-recovery: not-recovered``. (A 4k window: the
    block is already in its small-budget form, so a smaller window cannot shrink it.)"""
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", tools={"enabled": tools},
                              context={"model_windows": ["big-model=4096"]})
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-ctx-000000000006",
                                    max_retries=0)
        upstream.push(Reply(status=400, error=CONTEXT_ERROR))
        before = len(upstream.chat_requests)
        with pytest.raises(openai.BadRequestError) as info:
            await client.chat.completions.create(
                model="big-model", stream=stream,
                messages=[{"role": "system", "content": "sys"},
                          {"role": "user", "content": "hello"}])
        assert info.value.code == "context_length_exceeded"
        assert info.value.response.headers["x-lcm-context-recovery"].startswith(
            "not-recovered")
        assert len(upstream.chat_requests) - before == 1
        assert b'lcm_context_events_total{outcome="not_recovered"} 1.0' in (
            proxy.app[__import__("proxy.appkeys").appkeys.METRICS].render())
    finally:
        await proxy.runner.cleanup()


async def test_other_upstream_errors_pass_unchanged(upstream: FakeUpstream,
                                                    tmp_path: Path) -> None:
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", tools={"enabled": False})
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-ctx-000000000005",
                                    max_retries=0)
        upstream.push(Reply(status=400, error={"message": "bad role", "type": "invalid",
                                               "param": None, "code": "bad_role"}))
        before = len(upstream.chat_requests)
        with pytest.raises(openai.BadRequestError) as info:
            await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": "hi"}])
        assert info.value.code == "bad_role"
        assert len(upstream.chat_requests) - before == 1
    finally:
        await proxy.runner.cleanup()


# -- summaries condense ------------------------------------------------------------------
def test_near_repetitive_steps_fold_into_one_line_under_the_cap() -> None:
    from memory_core.compaction.compressor import _fit_sections, merge_summaries

    lines = [f"- [msg {i}] user: Step {i}: ran the tests, {i % 5} failed." for i in range(1, 121)]
    text = _fit_sections("Messages 1–120 (120 messages)", [("Timeline", lines)], 300)
    assert budget.count_tokens(text) <= 300
    assert "(+119 similar, last [msg 120]: user: Step 120: ran the tests, 0 failed.)" in text
    # Consolidation keeps the fold's count and stays within the parent's cap.
    children = [SummaryNode(k + 1, 0, list(range(k * 120 + 1, k * 120 + 121)),
                            _fit_sections(f"Messages {k * 120 + 1}–{k * 120 + 120}", [
                                ("Pitfalls and failed attempts", [
                                    f"- [msg {i}] tool: Step {i}: 3 tests failed in "
                                    f"tests/test_{i}.py" for i in range(k * 120 + 1,
                                                                        k * 120 + 121)]),
                                ("Timeline", [f"- [msg {i}] user: Step {i}: ran the tests, "
                                              f"{i % 5} failed." for i in
                                              range(k * 120 + 1, k * 120 + 121)])], 700),
                            700, 9000, "extractive") for k in range(4)]
    merged = merge_summaries(children, 1050)
    assert budget.count_tokens(merged) <= 1050
    assert "+479 similar, last [msg 480]" in merged


def test_view_count_from_remembered_counts_equals_a_full_count(tmp_path: Path) -> None:
    """The forwarded view is counted once per stored message and looked up after
    (the client resends its history); the figure equals counting every message,
    with a masked secret, tool calls, a name, content parts, a scaffold in the
    middle and a changed first message."""
    from memory_core.compaction.compressor import ACKNOWLEDGEMENT
    from memory_core.engine import Engine
    from memory_core.models import Scope
    from proxy.flow.plan import view_tokens

    settings = load_settings(None, environ={}, overrides={"embedding": {"provider": "hashing"}})
    engine = Engine(tmp_path / "d", settings.memory_config())
    try:
        call = {"id": "call_1", "type": "function",
                "function": {"name": "read_file", "arguments": '{"path": "a.py"}'}}
        messages: list[dict[str, Any]] = [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "my key is sk-proj-" + "Ab3dE" * 12 + " keep it safe",
             "name": "ana"},
            {"role": "assistant", "content": None, "tool_calls": [call]},
            {"role": "tool", "tool_call_id": "call_1", "content": "print('hello world')\n" * 9},
            {"role": "assistant", "content": "The file prints a greeting nine times."},
            {"role": "user", "content": [{"type": "text", "text": "and this picture?"},
                                         {"type": "image_url", "image_url": {"url": "u"}}]},
            {"role": "assistant", "content": "A cat on a sofa."},
            {"role": "user", "content": _paste(3)},
        ]
        _ticket, fut = engine.capture_request(Scope("t", "default", "s"), "r1", messages, {})
        ids = list(fut.result(30).message_ids)
        assert len(ids) == len(messages)
        views = (messages, messages[:2] + [
            {"role": "user", "content": "[Conversation summary — lcm-proxy]\nshort"},
            {"role": "assistant", "content": ACKNOWLEDGEMENT}] + messages[5:],
            [{"role": "user", "content": "x"}, *messages[1:]])
        for _again in range(2):  # counted, then remembered
            for view in views:
                assert view_tokens(engine, view, messages, ids) == budget.messages_tokens(view)
        # A resent history (new objects, the same stored ids) is looked up, not counted.
        resent = orjson.loads(orjson.dumps(messages))
        resent[-1]["content"] = "not what the stored id stands for"
        assert view_tokens(engine, resent, resent, ids) == budget.messages_tokens(messages)
        with pytest.raises(ValueError, match="length"):
            engine.message_counts.total(messages, ids[:-1])
    finally:
        engine.close()


def _last_assembly(proxy: Any) -> dict[str, Any]:
    """The explain log of the newest block (``memory explain``'s data)."""
    row = sql_read(proxy.engine, lambda c: c.execute(
        "SELECT data FROM assembly_logs ORDER BY id DESC LIMIT 1").fetchone())
    return dict(orjson.loads(row[0]))


def _evidence(content: str) -> list[str]:
    """The quoted lines of a block: ``msg N · role · HH:MM: text`` under day fences
    (filled at a small budget: ``#N Speaker: text`` in one fence, under date lines)."""
    evidence = content.partition("[Evidence")[2].partition("[Current Request]")[0]
    lines = evidence.split("\n")[1:]
    if lines and lines[0] == "<<<":  # filled: one fence, a date line per day
        body = lines[1:lines.index(">>>")]
        assert lines[lines.index(">>>") + 1:] in ([], [""]), lines
        assert re.fullmatch(r"\d{4}-\d\d-\d\d", body[0]), body
        assert all(ln.startswith("#") or re.fullmatch(r"\d{4}-\d\d-\d\d", ln)
                   for ln in body), body
        return [ln for ln in body if ln.startswith("#")]
    assert all(ln.startswith(("<<< ", "msg ")) or ln in (">>>", "") for ln in lines), lines
    assert sum(ln.startswith("<<< ") for ln in lines) == lines.count(">>>")
    return [ln for ln in lines if ln.startswith("msg ")]


async def _trips(proxy: Any, model: str, key: str) -> tuple[Any, list[dict[str, Any]]]:
    """Two people plan trips in one chat (``name`` on each turn), 24 turns, then
    ask about one city; returns the raw answer and the client's messages."""
    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=key, max_retries=0)
    messages: list[dict[str, Any]] = [{"role": "system", "content": "Be brief."}]
    cities = ("Lisbon", "Oslo", "Quito", "Hanoi", "Dakar", "Perth")
    for i in range(24):
        who = ("Halvard", "Ingrid")[i % 2]
        messages.append({"role": "user", "name": who, "content": (
            f"For trip {i} to {cities[i % 6]} the flights cost {200 + 17 * i} euros and"
            f" the hotel {40 + i} a night; packing list item {i}: "
            + ("umbrella", "charger", "boots", "scarf")[i % 4] + ".")})
        r = await client.chat.completions.create(model=model, messages=messages)
        messages.append({"role": "assistant", "content": r.choices[0].message.content})
        await proxy.settle()
    messages.append({"role": "user", "name": "Ingrid",
                     "content": "What did the Lisbon flights cost us?"})
    raw = await client.chat.completions.with_raw_response.create(model=model,
                                                                 messages=messages)
    return raw, messages


async def test_a_small_window_fills_its_block_with_quotes(upstream: FakeUpstream,
                                                         tmp_path: Path) -> None:
    """A 4k window: most of the history is compacted out of view, so the block
    quotes every earlier message search finds for the turn that fits (more than
    ``evidence_snippets``, one shared word enough, best first), one fence per day,
    and the request still fits its budget."""
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", tools={"enabled": False},
                              context={"model_windows": ["tiny-*=4096"]},
                              compaction={"min_tokens": 500, "min_turns": 2, "tail_turns": 2})
    try:
        raw, _messages = await _trips(proxy, "tiny-4k", "sk-ctx-000000000011")
        limit = budget.request_budget({"model": "tiny-4k"},
                                      proxy.engine.config.context).input_tokens
        assert raw.headers["x-lcm-memory"] == "injected"
        assert _forwarded_tokens(upstream.chat_requests[-1]) <= limit
        content = upstream.chat_requests[-1]["json"]["messages"][-1]["content"]
        quoted = _evidence(content)
        searched = [ln for ln in _last_assembly(proxy)["included"]
                    if ln["reason"].startswith("earlier message matching")]
        assert len(searched) > proxy.engine.config.evidence_snippets, searched
        # The Lisbon turns are quoted whole, with who said them: by name, without
        # the role or the clock (the day fence dates them), under a header that
        # says what the short form means.
        # (The echoing upstream's replies repeat the turns: quoted whole, they name
        # Lisbon too.)
        lisbon = [q for q in quoted if re.match(r"#\d+ [^:]+: For trip \d+ to Lisbon", q)]
        assert len(lisbon) >= 3, quoted
        assert all(re.fullmatch(r"#\d+ (Halvard|Ingrid): For trip .*", q) for q in lisbon)
        assert all(re.fullmatch(r"#\d+ [^:]+: .*", q) for q in quoted), quoted
        assert "quoted as #id speaker: text under their dates" in content
        # One fence for all the quotes, not one per day.
        evidence = content.partition("[Evidence")[2]
        assert evidence.count("<<<") == evidence.count(">>>") == 1, evidence
    finally:
        await proxy.runner.cleanup()


async def test_a_large_window_quotes_at_most_evidence_snippets(upstream: FakeUpstream,
                                                               tmp_path: Path) -> None:
    """The same chat for a model with a large window: the block keeps its soft
    budget, and search quotes stay at ``evidence_snippets``, each sharing a third
    of the turn's keywords (the speaker's name counts as one of a message's)."""
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", tools={"enabled": False},
                              injection={"evidence_snippets": 2},
                              compaction={"min_tokens": 500, "min_turns": 2, "tail_turns": 2})
    try:
        raw, _messages = await _trips(proxy, "gpt-4o", "sk-ctx-000000000012")
        assert raw.headers["x-lcm-memory"] == "injected"
        content = upstream.chat_requests[-1]["json"]["messages"][-1]["content"]
        quoted = _evidence(content)
        searched = [ln for ln in _last_assembly(proxy)["included"]
                    if ln["reason"].startswith("earlier message matching")]
        assert 1 <= len(searched) <= 2, searched
        assert quoted and all("Lisbon" in q for q in quoted), quoted
        # Six keywords, one of them in the text ("boots"), one the speaker's name:
        # a third of them only with the name.
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-ctx-000000000012",
                                    max_retries=0)
        await client.chat.completions.create(model="gpt-4o", messages=[*_messages, {
            "role": "user", "content": "Did Halvard ever mention boots during planning?"}])
        content = upstream.chat_requests[-1]["json"]["messages"][-1]["content"]
        quoted = _evidence(content)
        assert quoted and all("boots" in q and " · user Halvard · " in q for q in quoted)
    finally:
        await proxy.runner.cleanup()


async def test_a_small_window_fork_compacts_its_tail_for_the_block(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """At a 4k window (short memory tools) a new fork of a long chat (a bootstrap
    turn) is compacted down to its protected tail turns although it fits: the
    room goes to the block's quotes. A regular turn that fits keeps its tail, and
    a second fork finds nothing more to compact (the summaries cover the shared
    history)."""
    from memory_core.compaction.compressor import SCAFFOLD_HEADER

    proxy = await start_proxy(upstream.base_url, tmp_path / "d", tools={"offer": "always"},
                              context={"model_windows": ["tiny-*=4096"]},
                              compaction={"tail_turns": 2})
    cities = ("Lisbon", "Oslo", "Quito", "Hanoi", "Dakar", "Perth")
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-ctx-000000000019",
                                    max_retries=0)
        limit = budget.request_budget({"model": "tiny-4k"},
                                      proxy.engine.config.context).input_tokens
        messages: list[dict[str, Any]] = []

        async def ask(chat: list[dict[str, Any]]) -> tuple[Any, int]:
            """The answer's headers, and the messages forwarded after the scaffold
            and its acknowledgement (all of them when there is no scaffold)."""
            upstream.push(Reply(content="Noted."))
            raw = await client.chat.completions.with_raw_response.create(
                model="tiny-4k", messages=chat)
            await proxy.settle()
            assert _forwarded_tokens(upstream.chat_requests[-1]) <= limit
            sent = upstream.chat_requests[-1]["json"]["messages"]
            at = next((i for i, m in enumerate(sent) if isinstance(m["content"], str)
                       and m["content"].startswith(SCAFFOLD_HEADER)), -2)
            return raw, len(sent) - at - 2

        tail = 0
        for i in range(56):
            messages.append({"role": "user", "name": ("Halvard", "Ingrid")[i % 2], "content": (
                f"Trip {i} goes to {cities[i % 6]}: the flights cost {200 + 17 * i} euros,"
                f" the hotel {40 + i} euros a night, and we pack the "
                + ("umbrella", "charger", "boots", "scarf")[i % 4] + " and a map of the old"
                " town with the museums marked.")})
            if i == 3:  # a long turn (over snippet_chars) that ends with the answer
                messages[-1]["content"] += " Ferry notes: " + (
                    "we walk from the hotel past the harbour market, the fish stalls and"
                    " the old customs house to the pier; " * 4) + "it leaves at 7:40."
            _raw, tail = await ask(messages)
            messages.append({"role": "assistant", "content": "Noted."})
        # The last regular turn kept more than its protected tail (it fit).
        assert tail > 3, tail
        tails, compacted = [], []
        for city in ("Oslo", "Quito", "Hanoi"):
            # Oslo continues the chat (a regular turn); Quito and Hanoi ask instead
            # of it (new forks: bootstrap turns).
            raw, tail = await ask([*messages, {"role": "user", "name": "Ingrid",
                                               "content": f"What did the {city} hotel cost?"}])
            assert raw.headers["x-lcm-memory"] == "injected"
            block = upstream.chat_requests[-1]["json"]["messages"][-1]["content"]
            assert f"goes to {city}: the flights cost" in block
            tails.append(tail)
            compacted.append(raw.headers.get("x-lcm-context-compacted"))
        # The forks: the protected tail (two user turns: the one before, its reply,
        # and the new question); the second had nothing more to compact.
        assert tails[0] > 3 and tails[1:] == [3, 3], tails
        assert compacted == [None, "inline", None], compacted
        # A long message is quoted whole, not cut at snippet_chars: the block's budget
        # decides what fits.
        long_turn = messages[6]["content"]
        assert len(long_turn) > proxy.engine.config.snippet_chars + 100
        await ask([*messages, {"role": "user", "content": "When does the ferry leave?"}])
        block = upstream.chat_requests[-1]["json"]["messages"][-1]["content"]
        assert f"Ingrid: {long_turn}\n" in block, block
    finally:
        await proxy.runner.cleanup()


async def test_a_small_window_bootstrap_block_has_short_guidelines(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """A conversation's first block (bootstrap) for a 4k window is filled with
    quotes: its guidelines are the short form, naming only the look-up tools, and
    no ``(none set)`` preferences line; a large window keeps the full form (the
    tools offered on every request here: ``tools.offer = "always"``)."""
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", tools={"offer": "always"},
                              context={"model_windows": ["tiny-*=4096"]})
    try:
        blocks = {}
        for model, key in (("tiny-4k", "sk-ctx-000000000013"), ("gpt-4o", "sk-ctx-000000000014")):
            client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=key, max_retries=0)
            raw = await client.chat.completions.with_raw_response.create(
                model=model, messages=[{"role": "user", "content": "Plan the kayak trip."}])
            assert raw.headers["x-lcm-memory"] == "injected"
            blocks[model] = upstream.chat_requests[-1]["json"]["messages"][-1]["content"]
        small, large = blocks["tiny-4k"], blocks["gpt-4o"]
        assert small.startswith("[Background Context: Sync Guidelines]")
        assert "memory_search or view_message" in small and "memory_grep" not in small
        assert "(none set)" not in small and "[User Preferences]" not in small
        assert large.startswith("[Background Context: Sync Guidelines]")
        assert "memory_grep" in large and "(none set)" in large
        guide = small.partition("[Current Request]")[0]
        large_guide = large.partition("[Current Request]")[0]
        assert budget.count_tokens(guide) + 40 < budget.count_tokens(large_guide)
    finally:
        await proxy.runner.cleanup()


def _tool_names(tools: Any) -> list[str]:
    """The names in a ``tools`` array of any of the three APIs."""
    return [t.get("name") or t["function"]["name"] for t in tools or []]


async def test_a_small_window_gets_the_short_tool_set_in_every_api(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """At a 4k window the full memory tools (about 320 tokens) would take over a
    twelfth of the budget: Chat Completions, Messages and Responses requests all
    get only memory_search and view_message, with short schemas, the inspector
    records those, and the requests fit; a large window gets all five."""
    import anthropic

    proxy = await start_proxy(upstream.base_url, tmp_path / "d", tools={"offer": "always"},
                              context={"model_windows": ["tiny-*=4096"]})
    short = ["memory_search", "view_message"]
    try:
        oai = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-ctx-000000000015",
                                 max_retries=0)
        ant = anthropic.AsyncAnthropic(base_url=proxy.root, api_key="sk-ctx-000000000016",
                                       max_retries=0)
        for model, want in (("tiny-4k", short), ("gpt-4o", list(NAMES))):
            raw = await oai.chat.completions.with_raw_response.create(
                model=model, max_tokens=1024,
                messages=[{"role": "user", "content": "Plan the kayak trip."}])
            got = upstream.chat_requests[-1]
            assert _tool_names(got["json"]["tools"]) == want
            await proxy.settle()
            shown = proxy.engine.forwarded(raw.headers["x-lcm-request-id"])
            assert shown is not None and shown["body"].encode() == got["raw"]
            if model == "tiny-4k":
                limit = budget.request_budget({"model": model, "max_tokens": 1024},
                                              proxy.engine.config.context).input_tokens
                assert _forwarded_tokens(got) <= limit
                assert budget.tools_tokens(got["json"]["tools"]) < 130
            await ant.messages.create(model=model, max_tokens=1024, messages=[
                {"role": "user", "content": "Plan the canoe trip."}])
            sent = [r for r in upstream.requests if r["path"] == "/v1/messages"][-1]
            assert _tool_names(sent["json"]["tools"]) == want
            await oai.responses.create(model=model, max_output_tokens=1024,
                                       input="Plan the rafting trip.")
            assert _tool_names(upstream.responses_requests[-1]["json"]["tools"]) == want
    finally:
        await proxy.runner.cleanup()


def test_a_scaffold_of_headers_lists_their_ranges_on_one_line() -> None:
    """Squeezed until every node is a header, the scaffold lists the nodes' ranges on
    one line (about a third of a header per line), and says what saving that is."""
    from memory_core.compaction.compressor import HEADERS_LINE, headers_line_saving

    bounds = [(4, 119), (119, 195), (195, 224), (224, 271), (271, 318), (318, 356)]
    roots = [SummaryNode(id=i, level=1, message_ids=list(range(a, b)), text="- a line\n" * 200,
                         tokens=400, source_tokens=4000, model="extractive")
             for i, (a, b) in enumerate(bounds)]
    text = scaffold_text(roots, tools_enabled=True, budget_tokens=200, short_tools=True)
    assert budget.count_tokens(text) <= 200
    line = text.split("\n")[-1]
    assert line == HEADERS_LINE + "4–118, 119–194, 195–223, 224–270, 271–317, 318–355 =="
    assert "Level" not in text
    assert headers_line_saving(roots) > 80


def test_the_scaffold_names_only_the_tools_offered() -> None:
    roots = [SummaryNode(id=1, level=0, message_ids=list(range(1, 10)),
                         text="- the kayak trip is on Friday", tokens=9, source_tokens=90,
                         model="extractive")]
    assert "memory_grep" in scaffold_text(roots, tools_enabled=True)
    short = scaffold_text(roots, tools_enabled=True, short_tools=True)
    assert "memory_grep" not in short and "memory_search" in short and "view_message" in short


async def test_a_filled_block_finds_the_answer_through_the_turn_before(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """A filled block's search ranks as hybrid search does without vectors: an
    answer that shares no word with the question ("Pottery, mostly…") is found
    through the question it answers, the turn before it, and quoted; plain BM25
    (the block's search at a large window) cannot find it."""
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", tools={"enabled": False},
                              context={"model_windows": ["tiny-*=4096"]},
                              compaction={"min_tokens": 500, "min_turns": 2, "tail_turns": 2})
    answer = "Pottery, mostly; the wheel calms me down."
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-ctx-000000000017",
                                    max_retries=0)
        messages: list[dict[str, Any]] = []
        for i in range(24):
            if i == 2:
                turn = ("How do you unwind after a long shift at the hospital?", answer)
            else:
                turn = (f"Trip {i} to {('Lisbon', 'Oslo', 'Quito')[i % 3]} costs {200 + 17 * i}"
                        f" euros for the flights and {40 + i} a night for the hotel.",
                        f"Noted: trip {i} booked, seat {i}A, window side.")
            messages.append({"role": "user", "content": turn[0]})
            upstream.push(Reply(content=turn[1]))
            await client.chat.completions.create(model="tiny-4k", messages=messages)
            messages.append({"role": "assistant", "content": turn[1]})
            await proxy.settle()
        messages.append({"role": "user", "content": "What helps me unwind after a shift?"})
        raw = await client.chat.completions.with_raw_response.create(model="tiny-4k",
                                                                     messages=messages)
        assert raw.headers["x-lcm-memory"] == "injected"
        sent = upstream.chat_requests[-1]["json"]["messages"]
        assert all(m["content"] != answer for m in sent)  # compacted out of view
        assert any(q.endswith(answer) for q in _evidence(sent[-1]["content"]))
    finally:
        await proxy.runner.cleanup()


def test_memory_tools_of_a_body_without_tools_are_counted_once() -> None:
    """A body without tools of its own gets the same memory tools every time: their
    tokens are counted once per adapter and set, with the same count as counted
    whole; a client's own tools are counted with ours every time."""
    from proxy.flow import plan
    from proxy.wire.chat import ChatWire

    calls: list[dict[str, Any]] = []

    class Counting(ChatWire):
        def add_tools(self, body: dict[str, Any], *, strict: str = "auto", short: bool = False
                      ) -> tuple[dict[str, Any], dict[str, str]]:
            calls.append(body)
            return super().add_tools(body, strict=strict, short=short)

    wire, plain = Counting(), ChatWire()
    for body in ({"model": "a", "messages": []}, {"model": "b", "tools": []}, {"model": "c"}):
        assert plan._memory_tools_tokens(body, wire) == budget.tools_tokens(
            plain.add_tools(body)[0]["tools"])
    assert len(calls) == 1
    assert plan._memory_tools_tokens({"model": "d"}, wire, short=True) == budget.tools_tokens(
        plain.add_tools({}, short=True)[0]["tools"]) < plan._memory_tools_tokens({}, wire)
    assert len(calls) == 2
    client = {"tools": [{"type": "function", "function": {
        "name": "memory_search", "parameters": {"type": "object", "properties": {}}}}]}
    whole = plain.add_tools(client)[0]["tools"]
    assert [t["function"]["name"] for t in whole][-5:] != [t["function"]["name"] for t in
                                                          plain.add_tools({})[0]["tools"]]
    for _ in range(2):
        assert plan._memory_tools_tokens(client, wire) == (
            budget.tools_tokens(whole) - budget.tools_tokens(client["tools"]))
    assert len(calls) == 4


@pytest.mark.parametrize("tools", [True, False])
async def test_a_recovered_retry_gets_its_own_idempotency_key(
        upstream: FakeUpstream, tmp_path: Path, tools: bool) -> None:
    """The context-length retry is a second upstream call with another body: under the
    client's own ``Idempotency-Key`` an upstream that honours it would answer it with
    the refusal it gave the first (or refuse the changed body), so it goes under the
    derived key, as a hidden round of the tool loop does."""
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", tools={"enabled": tools})
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-ctx-000000000005",
                                    max_retries=0)
        messages: list[dict[str, Any]] = [{"role": "system", "content": "sys"}]
        for i in range(12):
            messages.append({"role": "user", "content": _paste(i)})
            messages.append({"role": "assistant", "content": f"Run {i} looks healthy."})
        messages.append({"role": "user", "content": "Which run was slowest?"})
        upstream.push(Reply(status=400, error=CONTEXT_ERROR), Reply(content="run 7"))
        before = len(upstream.chat_requests)
        raw = await client.chat.completions.with_raw_response.create(
            model="big-model", messages=messages, extra_headers={"Idempotency-Key": "k-9"})
        assert raw.parse().choices[0].message.content == "run 7"
        sent = upstream.chat_requests[before:]
        assert [r["headers"].get("Idempotency-Key") for r in sent] == ["k-9", "k-9-lcm1"]
    finally:
        await proxy.runner.cleanup()
