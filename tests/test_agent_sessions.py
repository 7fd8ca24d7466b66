"""Long agent sessions, sent the way real agents send them, through the proxy at small
context windows (the real SDK clients against the fake upstream): every request the
upstream receives must be one the API accepts and must fit the window.

- Anthropic Messages, as Claude Code sends it: thinking blocks with signatures and
  ``redacted_thinking``, parallel ``tool_use`` blocks, user turns that carry
  ``tool_result`` blocks followed by text (reminders), images, ``cache_control`` on
  system, tools and the newest messages.
- Responses, as Codex and the Agents SDK send it: ``reasoning`` items with
  ``encrypted_content`` before ``function_call`` items, parallel calls, their
  ``function_call_output`` items.
- Chat Completions: assistant ``tool_calls`` (parallel), ``tool`` messages, ``name``.

The rules checked are the upstream APIs' own (what they answer 400 to): a call is
never separated from its result, nor left without one, nor a result without its call;
the last assistant turn of an unfinished tool use goes as the client sent it (its
thinking signed); at most four ``cache_control`` breakpoints; a reasoning item goes
with the item it preceded; the memory block lands in the newest user message, never
before a ``tool_result``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import openai
import orjson
from aiohttp import web

from memory_core.assembly import budget
from memory_core.compaction.compressor import SCAFFOLD_HEADER
from proxy.wire import messages as mw
from tests.conftest import TEST_KEY, start_proxy
from tests.fake_anthropic import AReply, text, thinking, tool_use
from tests.fake_responses import RReply
from tests.fake_upstream import FakeUpstream, Reply

SIG = "EqQBCkYIARgCKkC+sig/with+base64=="
PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQ"
       "AAAABJRU5ErkJggg==")


def _paste(i: int, lines: int = 30) -> str:
    return "\n".join(f"tests/test_mod{i}.py::test_case_{k} PASSED [{k}%] in {i * k % 97} ms"
                     for k in range(lines))


BLOCK_MARKS = ("[Background Context", "[Memory]", "[Evidence", "[User Preferences]",
               "[Current Request]")
"""Section heads of the memory block (memory_core.assembly.block)."""


def _scaffold(message: dict[str, Any]) -> bool:
    """The proxy's summary scaffold (a user message of its own, not the user's)."""
    return str(message.get("content")).startswith(SCAFFOLD_HEADER)


def _has_block(content: Any) -> bool:
    return any(mark in str(content) for mark in BLOCK_MARKS)


# -- Anthropic rules -------------------------------------------------------------------
def anthropic_problems(body: dict[str, Any], client_msgs: list[dict[str, Any]]) -> list[str]:
    """What the Messages API would refuse in ``body`` (sent for ``client_msgs``)."""
    out: list[str] = []
    msgs = _merged(body["messages"])
    if msgs and msgs[0].get("role") != "user":
        out.append("first message is not a user message")
    for i, m in enumerate(msgs):
        content = mw.blocks(m.get("content"))
        if m.get("role") == "assistant":
            uses = [b["id"] for b in content if b.get("type") == "tool_use"]
            if not uses:
                continue
            nxt = mw.blocks(msgs[i + 1].get("content")) if i + 1 < len(msgs) else None
            if nxt is None:
                continue  # a prefill; not what these sessions send
            if msgs[i + 1].get("role") != "user":
                out.append(f"msg {i}: tool_use not followed by a user turn")
                continue
            results = [b.get("tool_use_id") for b in nxt if b.get("type") == "tool_result"]
            missing = set(uses) - set(results)
            if missing:
                out.append(f"msg {i}: tool_use ids without tool_result after: {sorted(missing)}")
        elif m.get("role") == "user":
            results = [k for k, b in enumerate(content) if b.get("type") == "tool_result"]
            if results and results != list(range(len(results))):
                out.append(f"msg {i}: tool_result after other blocks")
            prev = mw.blocks(msgs[i - 1].get("content")) if i else []
            prev_uses = {b.get("id") for b in prev if b.get("type") == "tool_use"} if (
                i and msgs[i - 1].get("role") == "assistant") else set()
            for k in results:
                if content[k].get("tool_use_id") not in prev_uses:
                    out.append(f"msg {i}: unexpected tool_use_id "
                               f"{content[k].get('tool_use_id')}")
            for b in content:
                if b.get("type") == "tool_result" and _has_block(b.get("content")):
                    out.append(f"msg {i}: memory block inside a tool_result")
    # the last assistant turn of an unfinished tool use goes as the client sent it
    def answered(m: dict[str, Any]) -> set[Any]:
        return {b.get("tool_use_id") for b in mw.blocks(m.get("content"))
                if b.get("type") == "tool_result"}

    # (a hidden memory round's request continues the proxy's own turn, not the client's)
    if len(msgs) >= 2 and msgs[-2].get("role") == "assistant" and answered(msgs[-1]) and (
            answered(msgs[-1]) == answered(_merged(client_msgs)[-1])):
        def signed(m: dict[str, Any]) -> list[Any]:
            return [b for b in mw.blocks(m.get("content"))
                    if b.get("type") in ("thinking", "redacted_thinking")]
        # (a client's turn that hid a memory round shows the hidden round's thinking
        # too; the upstream gets that round spliced back before it: a suffix)
        sent_last, client_last = msgs[-2], _merged(client_msgs)[-2]
        own = signed(sent_last)
        lead = mw.blocks(sent_last.get("content"))[:len(own)]
        theirs = signed(client_last)
        if theirs and (not own or own != theirs[-len(own):] or lead != own):
            out.append("last assistant turn's thinking blocks changed")
    # thinking blocks go as the model wrote them (the client's, or a hidden round's)
    known = {**_SIGNED, **{_signed_key(b): b for m in client_msgs for b in mw.blocks(
        m.get("content")) if b.get("type") in ("thinking", "redacted_thinking")}}
    for m in msgs:
        for b in mw.blocks(m.get("content")) if m.get("role") == "assistant" else []:
            if b.get("type") in ("thinking", "redacted_thinking") and known.get(
                    _signed_key(b)) != b:
                out.append(f"a thinking block was altered: {b}")
    # the newest user turn: the last message, or (a hidden round's request) the user
    # message that opened the turn
    allowed = {len(msgs) - 1, mw.opening_user_index(msgs)}
    for k, m in enumerate(msgs):
        if k not in allowed and any(_has_block(b.get("text")) for b in mw.blocks(
                m.get("content")) if b.get("type") == "text"):
            out.append(f"msg {k}: the block is not in the newest user message")
    marks = _cache_marks(body)
    if marks > 4:
        out.append(f"{marks} cache_control breakpoints")
    return out


_SIGNED: dict[Any, dict[str, Any]] = {}
"""Thinking blocks the fake upstream wrote in hidden memory rounds, by signature."""


def _signed_key(block: dict[str, Any]) -> Any:
    return block.get("signature") or block.get("data")


def _merged(msgs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Consecutive messages of one role as the one turn the API makes of them."""
    out: list[dict[str, Any]] = []
    for m in msgs:
        if out and out[-1]["role"] == m.get("role"):
            out[-1] = dict(out[-1], content=[*mw.blocks(out[-1]["content"]),
                                             *mw.blocks(m.get("content"))])
        else:
            out.append(m)
    return out


def _cache_marks(obj: Any) -> int:
    if isinstance(obj, dict):
        return ("cache_control" in obj) + sum(_cache_marks(v) for v in obj.values())
    if isinstance(obj, list):
        return sum(_cache_marks(v) for v in obj)
    return 0


def _anthropic_tokens(body: dict[str, Any]) -> int:
    return budget.messages_tokens(mw.view_messages(body)) + budget.tools_tokens(
        body.get("tools"))


def _strip_marks(msgs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Claude Code moves its message breakpoints to the newest turns on every call."""
    out = []
    for m in msgs:
        c = m.get("content")
        if isinstance(c, list):
            c = [{k: v for k, v in b.items() if k != "cache_control"} for b in c]
        out.append(dict(m, content=c))
    return out


def _marked(msgs: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The history with breakpoints on the last block of the last two user turns."""
    out = _strip_marks(msgs)
    users = [i for i, m in enumerate(out) if m["role"] == "user"][-2:]
    for i in users:
        c = mw.blocks(out[i]["content"])
        c[-1] = dict(c[-1], cache_control={"type": "ephemeral"})
        out[i] = dict(out[i], content=c)
    return out


async def test_claude_code_session_keeps_every_rule_at_a_small_window(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    """60 agent steps at a 6k window: thinking, parallel tool uses, results followed
    by reminders, an image; every forwarded request fits and is valid Messages."""
    proxy = await make_proxy(context={"model_windows": ["claude-small*=6144"]},
                             tools={"offer": "always"})
    c = anthropic.AsyncAnthropic(base_url=proxy.root, api_key=TEST_KEY, max_retries=0)
    limit = budget.request_budget({"model": "claude-small-1", "max_tokens": 512},
                                  proxy.engine.config.context).input_tokens
    system = [{"type": "text", "text": "You are Claude Code, a coding agent."},
              {"type": "text", "text": "Work in /repo. Be brief.",
               "cache_control": {"type": "ephemeral"}}]
    tools = [{"name": "Bash", "description": "Run a shell command",
              "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}},
             {"name": "Read", "description": "Read a file",
              "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
              "cache_control": {"type": "ephemeral"}}]
    history: list[dict[str, Any]] = [{"role": "user", "content": [
        {"type": "text", "text": "<system-reminder>Use the todo list.</system-reminder>"},
        {"type": "text", "text": "Fix the failing tests. The release tag is v7.3.1."}]}]
    problems: list[tuple[int, list[str]]] = []

    async def step(reply: AReply) -> anthropic.types.Message:
        upstream.anthropic_replies.append(reply)
        before = len(upstream.requests)
        msgs = _marked(history)
        kwargs: dict[str, Any] = dict(
            model="claude-small-1", max_tokens=512, system=system, tools=tools,
            thinking={"type": "enabled", "budget_tokens": 256}, messages=msgs)
        if len(history) % 3:  # Claude Code streams; every third request does not
            async with c.messages.stream(**kwargs) as stream:
                msg = await stream.get_final_message()
        else:
            msg = await c.messages.create(**kwargs)
        for r in upstream.requests[before:]:
            if r["path"] != "/v1/messages":
                continue
            found = anthropic_problems(r["json"], msgs)
            if (n := _anthropic_tokens(r["json"])) > limit:
                found.append(f"{n} tokens over the {limit} budget")
            if found:
                problems.append((len(history), found))
        history.append({"role": "assistant", "content": [b.to_dict() for b in msg.content]})
        return msg

    for i in range(30):
        a, b = f"toolu_{i}a", f"toolu_{i}b"
        if i % 7 == 3:  # a hidden memory round first, its thinking signed too
            hidden = thinking(f"Look up step {i - 1}.", SIG + f"m{i}")
            _SIGNED[_signed_key(hidden)] = hidden
            upstream.anthropic_replies.append(AReply(content=[
                hidden, tool_use(f"toolu_m{i}", "memory_grep", {"query": "release tag"})]))
        await step(AReply(content=[
            thinking(f"Step {i}: I should look at module {i} and run its tests.", SIG + str(i)),
            text(f"Checking module {i}."),
            tool_use(a, "Read", {"path": f"src/mod{i}.py"}),
            tool_use(b, "Bash", {"command": f"pytest tests/test_mod{i}.py"})]))
        result_b: Any = _paste(i)
        if i == 5:
            result_b = [{"type": "text", "text": "screenshot:"},
                        {"type": "image", "source": {"type": "base64", "media_type": "image/png",
                                                     "data": PNG}}]
        history.append({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": a, "content": f"def f{i}(): return {i}"},
            {"type": "tool_result", "tool_use_id": b, "content": result_b},
            {"type": "text", "text": "<system-reminder>Todo list unchanged.</system-reminder>"}]})
        await step(AReply(content=[
            {"type": "redacted_thinking", "data": f"EmwKAhgBEgy{i}redacted"},
            text(f"Module {i} passes now.")]))
        history.append({"role": "user", "content": f"Good. Next, step {i + 1}."})
    history[-1] = {"role": "user", "content": "What is the release tag?"}
    await step(AReply(content=[text("v7.3.1")]))
    assert budget.messages_tokens(history) > 3 * limit
    assert not problems, problems
    last = [r for r in upstream.requests if r["path"] == "/v1/messages"][-1]
    assert b"v7.3.1" in last["raw"]


# -- Responses rules -------------------------------------------------------------------
def responses_problems(body: dict[str, Any], client_items: list[Any]) -> list[str]:
    """What the Responses API would refuse in a stateless ``body`` (no
    ``previous_response_id``) sent for the client's ``client_items``."""
    out: list[str] = []
    items = [i for i in body["input"] if isinstance(i, dict)]
    calls = [k for k, i in enumerate(items) if i.get("type") == "function_call"]
    outputs = {i.get("call_id"): k for k, i in enumerate(items)
               if i.get("type") == "function_call_output"}
    for k in calls:
        cid = items[k].get("call_id")
        if cid not in outputs:
            out.append(f"No tool output found for function call {cid}")
        elif outputs[cid] < k:
            out.append(f"output before its call {cid}")
    call_ids = {items[k].get("call_id") for k in calls}
    for cid in outputs:
        if cid not in call_ids:
            out.append(f"No tool call found for function call output with call_id {cid}")
    # a reasoning item goes with the item it preceded, and that item with it
    for k, item in enumerate(client_items[:-1]):
        if not (isinstance(item, dict) and item.get("type") == "reasoning"):
            continue
        after = client_items[k + 1]
        has_r, has_after = item in items, after in items
        if has_r and not has_after:
            out.append(f"reasoning {item.get('id')} without its required following item")
        elif has_after and not has_r and isinstance(after, dict) and after.get("id"):
            out.append(f"{after.get('id')} without its required reasoning item")
        elif has_r and items.index(after) != items.index(item) + 1:
            out.append(f"reasoning {item.get('id')} separated from its following item")
    users = [k for k, i in enumerate(items) if i.get("role") == "user" and not _scaffold(i)]
    for k, item in enumerate(items):
        if item.get("role") and _has_block(item.get("content")) and k != users[-1]:
            out.append(f"item {k}: the block is not in the newest user message")
        if item.get("type") == "function_call_output" and _has_block(item.get("output")):
            out.append("memory block inside a function_call_output")
    return out


def _responses_tokens(body: dict[str, Any]) -> int:
    from proxy.wire.responses import RESPONSES
    return budget.messages_tokens(RESPONSES.messages(body)) + budget.tools_tokens(
        body.get("tools"))


async def test_codex_session_keeps_every_rule_at_a_small_window(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    """A stateless Codex-like session (``store: false``, encrypted reasoning, parallel
    function calls) at a 6k window: every forwarded input fits and is valid."""
    proxy = await make_proxy(context={"model_windows": ["gpt-small*=6144"]},
                             tools={"offer": "always"})
    c = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    limit = budget.request_budget({"model": "gpt-small-1", "max_output_tokens": 512},
                                  proxy.engine.config.context).input_tokens
    tools = [{"type": "function", "name": "shell", "description": "Run a command",
              "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}},
                             "required": ["cmd"]}}]
    items: list[Any] = [{"role": "user", "content": "Fix the build. The ticket is JIRA-5521."}]
    problems: list[tuple[int, list[str]]] = []

    async def step(reply: RReply) -> Any:
        upstream.push_response(reply)
        before = len(upstream.requests)
        r = await c.responses.create(model="gpt-small-1", input=items, tools=tools,
                                     store=False, max_output_tokens=512,
                                     include=["reasoning.encrypted_content"])
        for req in upstream.requests[before:]:
            if req["path"] != "/v1/responses":
                continue
            found = responses_problems(req["json"], items)
            if (n := _responses_tokens(req["json"])) > limit:
                found.append(f"{n} tokens over the {limit} budget")
            if found:
                problems.append((len(items), found))
        items.extend(o.model_dump(exclude_none=True) for o in r.output)
        return r

    for i in range(30):
        await step(RReply(text=None, reasoning=f"ENC-{i}-" + "q" * 200, calls=[
            {"call_id": f"call_{i}a", "name": "shell", "arguments": f'{{"cmd": "cat f{i}"}}'},
            {"call_id": f"call_{i}b", "name": "shell",
             "arguments": f'{{"cmd": "make test{i}"}}'}]))
        items += [{"type": "function_call_output", "call_id": f"call_{i}a",
                   "output": f"contents of f{i}"},
                  {"type": "function_call_output", "call_id": f"call_{i}b",
                   "output": _paste(i)}]
        await step(RReply(text=f"Step {i} builds.", reasoning=f"ENC-{i}-done"))
        items.append({"role": "user", "content": f"Go on with step {i + 1}."})
    items[-1] = {"role": "user", "content": "Which ticket was it?"}
    await step(RReply(text="JIRA-5521"))
    assert not problems, problems
    last = upstream.responses_requests[-1]
    assert len(last["json"]["input"]) < len(items) // 2  # compacted
    assert b"JIRA-5521" in last["raw"]


# -- Chat Completions rules ------------------------------------------------------------
def chat_problems(body: dict[str, Any]) -> list[str]:
    """What Chat Completions would refuse: a ``tool`` message that answers no call of
    the assistant message before its run, a call left without its ``tool`` message."""
    out: list[str] = []
    msgs = body["messages"]
    users = [k for k, m in enumerate(msgs) if m.get("role") == "user" and not _scaffold(m)]
    for k, m in enumerate(msgs):
        if _has_block(m.get("content")) and (not users or k != users[-1]):
            out.append(f"msg {k}: the block is not in the newest user message")
        if m.get("role") == "assistant" and m.get("tool_calls"):
            ids = {t["id"] for t in m["tool_calls"]}
            j = k + 1
            while j < len(msgs) and msgs[j].get("role") == "tool":
                ids.discard(msgs[j].get("tool_call_id"))
                j += 1
            if ids and j < len(msgs) + 1 and k != len(msgs) - 1:
                out.append(f"msg {k}: tool_calls without tool messages: {sorted(ids)}")
        if m.get("role") == "tool":
            j = k - 1
            while j >= 0 and msgs[j].get("role") == "tool":
                j -= 1
            prev = msgs[j] if j >= 0 else {}
            if m.get("tool_call_id") not in {t["id"] for t in prev.get("tool_calls") or []}:
                out.append(f"msg {k}: role 'tool' must be a response to a preceding "
                           "message with 'tool_calls'")
            if _has_block(m.get("content")):
                out.append(f"msg {k}: memory block inside a tool message")
    return out


async def test_chat_tool_session_keeps_every_rule_at_a_small_window(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    """Parallel tool calls with named tool messages at a 6k window."""
    proxy = await make_proxy(context={"model_windows": ["gpt-small*=6144"]},
                             tools={"offer": "always"})
    c = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    limit = budget.request_budget({"model": "gpt-small-1", "max_tokens": 512},
                                  proxy.engine.config.context).input_tokens
    tools = [{"type": "function", "function": {
        "name": "shell", "description": "Run a command",
        "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}}]
    msgs: list[Any] = [{"role": "system", "content": "You are a build agent."},
                       {"role": "user", "name": "ana", "content": "Fix CI. Runner: rk-77."}]
    problems: list[tuple[int, list[str]]] = []

    async def step(reply: Reply) -> Any:
        upstream.push(reply)
        before = len(upstream.requests)
        r = await c.chat.completions.create(model="gpt-small-1", messages=msgs, tools=tools,
                                            max_tokens=512)
        for req in upstream.requests[before:]:
            if req["path"] != "/v1/chat/completions":
                continue
            found = chat_problems(req["json"])
            n = budget.messages_tokens(req["json"]["messages"]) + budget.tools_tokens(
                req["json"].get("tools"))
            if n > limit:
                found.append(f"{n} tokens over the {limit} budget")
            if found:
                problems.append((len(msgs), found))
        msgs.append(r.choices[0].message.model_dump(exclude_none=True))
        return r

    for i in range(30):
        await step(Reply(content=None, tool_calls=[
            {"id": f"call_{i}a", "name": "shell", "arguments": f'{{"cmd": "cat f{i}"}}'},
            {"id": f"call_{i}b", "name": "shell", "arguments": f'{{"cmd": "make t{i}"}}'}]))
        msgs += [{"role": "tool", "tool_call_id": f"call_{i}a", "name": "shell",
                  "content": f"contents of f{i}"},
                 {"role": "tool", "tool_call_id": f"call_{i}b", "name": "shell",
                  "content": _paste(i)}]
        await step(Reply(content=f"Step {i} passes."))
        msgs.append({"role": "user", "name": "ana", "content": f"Go on with step {i + 1}."})
    msgs[-1] = {"role": "user", "name": "ana", "content": "Which runner?"}
    await step(Reply(content="rk-77"))
    assert not problems, problems
    last = upstream.chat_requests[-1]
    assert len(last["json"]["messages"]) < len(msgs) // 2  # compacted
    assert b"rk-77" in last["raw"]


# -- one tool result larger than the window ---------------------------------------------
def _big_output() -> str:
    """A build log of about 7,500 tokens whose last line is the error."""
    lines = [_paste(k) for k in range(12)]
    return "START OF LOG\n" + "\n".join(lines) + "\nFAILED: error E4242 in linker"


async def test_a_tool_result_larger_than_the_window_is_cut_to_fit_in_every_api(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    """An agent reads a log larger than the whole window (6k) and sends it as the
    newest turn's tool result: compaction cannot help (the newest turn is never
    summarised), so the request went upstream whole and was refused ("prompt is too
    long", on every retry). Now the result's middle is left out, its head and tail
    kept, with a note naming the stored message; the pairs stay valid."""
    proxy = await make_proxy(context={"model_windows": ["m-small*=6144"]},
                             tools={"offer": "always"})
    limit = budget.request_budget({"model": "m-small-1", "max_tokens": 512},
                                  proxy.engine.config.context).input_tokens
    big = _big_output()
    assert budget.messages_tokens([{"role": "tool", "content": big}]) > limit
    # Anthropic Messages
    ac = anthropic.AsyncAnthropic(base_url=proxy.root, api_key=TEST_KEY, max_retries=0)
    history: list[dict[str, Any]] = [
        {"role": "user", "content": "Build it. [anthropic]"},
        {"role": "assistant", "content": [text("Building."),
                                          tool_use("toolu_1", "Bash", {"command": "make"})]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                      "content": big}]}]
    raw = await ac.messages.with_raw_response.create(
        model="m-small-1", max_tokens=512, messages=history, tools=[
            {"name": "Bash", "description": "Run", "input_schema": {"type": "object"}}])
    assert raw.headers["x-lcm-clipped-results"] == "1"
    body = upstream.requests[-1]["json"]
    assert _anthropic_tokens(body) <= limit
    assert not anthropic_problems(body, history)
    sent = body["messages"][-1]["content"][0]["content"]
    # Chat Completions
    cc = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    msgs: list[Any] = [
        {"role": "user", "content": "Build it. [chat]"},
        {"role": "assistant", "content": None, "tool_calls": [
            {"id": "call_1", "type": "function",
             "function": {"name": "shell", "arguments": '{"cmd": "make"}'}}]},
        {"role": "tool", "tool_call_id": "call_1", "content": big}]
    rawc = await cc.chat.completions.with_raw_response.create(
        model="m-small-1", max_tokens=512, messages=msgs)
    assert rawc.headers["x-lcm-clipped-results"] == "1"
    cbody = upstream.chat_requests[-1]["json"]
    assert budget.messages_tokens(cbody["messages"]) + budget.tools_tokens(
        cbody.get("tools")) <= limit
    assert not chat_problems(cbody)
    # Responses
    items: list[Any] = [
        {"role": "user", "content": "Build it. [responses]"},
        {"type": "function_call", "call_id": "call_1", "name": "shell",
         "arguments": '{"cmd": "make"}'},
        {"type": "function_call_output", "call_id": "call_1", "output": big}]
    rawr = await cc.responses.with_raw_response.create(
        model="m-small-1", max_output_tokens=512, input=items)
    assert rawr.headers["x-lcm-clipped-results"] == "1"
    rbody = upstream.responses_requests[-1]["json"]
    assert _responses_tokens(rbody) <= limit
    assert not responses_problems(rbody, items)
    for out in (sent, cbody["messages"][-1]["content"], rbody["input"][-1]["output"]):
        assert isinstance(out, str)
        assert out.startswith("START OF LOG") and out.endswith("error E4242 in linker")
        assert "tokens of this tool result left out to fit the context window" in out
        assert "view_message(" in out


# -- one user turn, a long tool loop ------------------------------------------------------
async def test_a_long_tool_loop_in_one_user_turn_is_compacted_in_every_api(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    """An agent given one task works through 30 tool rounds without a new user
    message. The newest user turn was never compacted, so from round 15 on every
    request went upstream whole, over the 6k window ("prompt is too long"). Now the
    loop's older rounds are summarised, its opening message and its last rounds
    (the thinking of the turn it continues included) kept verbatim."""
    proxy = await make_proxy(context={"model_windows": ["m-small*=6144"]},
                             tools={"offer": "always"})
    limit = budget.request_budget({"model": "m-small-1", "max_tokens": 512},
                                  proxy.engine.config.context).input_tokens
    ac = anthropic.AsyncAnthropic(base_url=proxy.root, api_key=TEST_KEY, max_retries=0)
    cc = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    bash = [{"name": "Bash", "description": "Run",
             "input_schema": {"type": "object", "properties": {"command": {"type": "string"}}}}]
    shell = {"name": "shell", "description": "Run",
             "parameters": {"type": "object", "properties": {"cmd": {"type": "string"}}}}
    task = "Migrate all 30 modules, one at a time. The release tag is v9.9."
    h: list[dict[str, Any]] = [{"role": "user", "content": task + " [anthropic]"}]
    msgs: list[Any] = [{"role": "user", "content": task + " [chat]"}]
    items: list[Any] = [{"role": "user", "content": task + " [responses]"}]
    for i in range(30):
        upstream.anthropic_replies.append(AReply(content=[
            thinking(f"Module {i} next.", SIG + str(i)), text("On it."),
            tool_use(f"toolu_{i}", "Bash", {"command": f"migrate {i}"})]))
        raw = await ac.messages.with_raw_response.create(
            model="m-small-1", max_tokens=512, tools=bash, messages=_marked(h),
            thinking={"type": "enabled", "budget_tokens": 256})
        body = upstream.requests[-1]["json"]
        assert raw.headers["x-lcm-memory"] != "over-budget", i
        assert _anthropic_tokens(body) <= limit, i
        assert not anthropic_problems(body, _marked(h)), (i, anthropic_problems(body, h))
        assert mw.blocks(body["messages"][0]["content"])[0]["text"] == h[0]["content"]
        msg = await raw.parse()
        h += [{"role": "assistant", "content": [b.to_dict() for b in msg.content]},
              {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"toolu_{i}",
                                            "content": _paste(i, 12)}]}]

        upstream.push(Reply(content=None, tool_calls=[
            {"id": f"call_{i}", "name": "shell", "arguments": f'{{"cmd": "migrate {i}"}}'}]))
        rawc = await cc.chat.completions.with_raw_response.create(
            model="m-small-1", max_tokens=512, messages=msgs,
            tools=[{"type": "function", "function": shell}])
        cbody = upstream.chat_requests[-1]["json"]
        assert rawc.headers["x-lcm-memory"] != "over-budget", i
        assert budget.messages_tokens(cbody["messages"]) + budget.tools_tokens(
            cbody.get("tools")) <= limit, i
        assert not chat_problems(cbody), (i, chat_problems(cbody))
        assert cbody["messages"][0]["content"].endswith(task + " [chat]")
        msgs += [rawc.parse().choices[0].message.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": f"call_{i}", "content": _paste(i, 12)}]

        upstream.push_response(RReply(text=None, reasoning=f"ENC-{i}", calls=[
            {"call_id": f"fc_{i}", "name": "shell", "arguments": f'{{"cmd": "migrate {i}"}}'}]))
        rawr = await cc.responses.with_raw_response.create(
            model="m-small-1", max_output_tokens=512, input=items, store=False,
            include=["reasoning.encrypted_content"], tools=[{"type": "function", **shell}])
        rbody = upstream.responses_requests[-1]["json"]
        assert rawr.headers["x-lcm-memory"] != "over-budget", i
        assert _responses_tokens(rbody) <= limit, i
        assert not responses_problems(rbody, items), (i, responses_problems(rbody, items))
        items += [o.model_dump(exclude_none=True) for o in rawr.parse().output]
        items.append({"type": "function_call_output", "call_id": f"fc_{i}",
                      "output": _paste(i, 12)})
    assert budget.messages_tokens(h) > 1.5 * limit
    last = upstream.requests[-3]["json"]["messages"]  # the last Messages request
    assert len(last) < len(h) // 2 and b"v9.9" in upstream.requests[-3]["raw"]


async def test_legacy_function_messages_stay_with_their_call(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    """Chat Completions' older function calling (an assistant ``function_call``
    answered by a ``function`` message, still sent by older agent frameworks): a
    compacted range must not end between the two ("messages with role 'function'
    must be a response to a preceding message with 'function_call'")."""
    proxy = await make_proxy(context={"model_windows": ["gpt-small*=6144"]},
                             compaction={"group_tokens": 1000, "min_tokens": 500,
                                         "min_turns": 1, "tail_turns": 1})
    c = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    limit = budget.request_budget({"model": "gpt-small-1", "max_tokens": 512},
                                  proxy.engine.config.context).input_tokens
    msgs: list[Any] = [{"role": "user", "content": "Check the nodes. Cluster id: cx-88."}]
    bad: list[tuple[int, str]] = []
    for i in range(30):
        msgs += [{"role": "assistant", "content": None,
                  "function_call": {"name": "kubectl", "arguments": f'{{"n": {i}}}'}},
                 {"role": "function", "name": "kubectl", "content": _paste(i, 20)}]
        if i % 3 == 2 and i < 15:  # then one long loop of calls (no user turn)
            msgs.append({"role": "user", "content": f"Go on ({i})."})
        upstream.push(Reply(content=f"Node {i} is fine."))
        await c.chat.completions.create(model="gpt-small-1", max_tokens=512, messages=msgs)
        await proxy.settle()  # the background compaction due after each answer
        sent = upstream.chat_requests[-1]["json"]["messages"]
        if (n := budget.messages_tokens(sent)) > limit:
            bad.append((i, f"{n} tokens"))
        for k, m in enumerate(sent):
            if m.get("role") == "function" and not (
                    k and sent[k - 1].get("role") == "assistant"
                    and sent[k - 1].get("function_call")):
                bad.append((i, f"msg {k}: a function message without its call"))
            if m.get("function_call") and not (
                    k + 1 < len(sent) and sent[k + 1].get("role") == "function"):
                bad.append((i, f"msg {k}: a function_call without its result"))
        if i < 15:
            msgs.append({"role": "assistant", "content": f"Node {i} is fine."})
    assert not bad, bad
    assert len(upstream.chat_requests[-1]["json"]["messages"]) < len(msgs) // 2


async def test_a_window_smaller_than_configured_is_learned_in_a_tool_loop(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """The model's real window (4,500 tokens, enforced by the fake upstream with
    Anthropic's "prompt is too long" answer) is smaller than the configured 8k: the
    first refusal is recovered once by compacting for the window it names, and the
    rest of a 40-round tool loop in one user turn fits it; the client never sees
    the error."""
    real = 4500
    refused: list[int] = []

    @web.middleware
    async def real_window(request: web.Request, handler: Any) -> web.StreamResponse:
        if request.path == "/v1/messages":
            n = _anthropic_tokens(orjson.loads(await request.read()))
            if n > real:
                refused.append(n)
                return web.json_response({"type": "error", "error": {
                    "type": "invalid_request_error",
                    "message": f"prompt is too long: {n} tokens > {real} maximum"}},
                    status=400)
        return await handler(request)

    fake = FakeUpstream()
    fake.app.middlewares.append(real_window)
    await fake.start()
    proxy = await start_proxy(fake.base_url, tmp_path / "d",
                              context={"model_windows": ["m-small*=8192"]})
    try:
        c = anthropic.AsyncAnthropic(base_url=proxy.root, api_key=TEST_KEY, max_retries=0)
        tools = [{"name": "Bash", "description": "Run", "input_schema": {"type": "object"}}]
        h: list[dict[str, Any]] = [{"role": "user", "content": "Migrate all modules."}]
        for i in range(40):
            fake.anthropic_replies.append(AReply(content=[
                thinking(f"Module {i}.", SIG + str(i)), text("On it."),
                tool_use(f"t{i}", "Bash", {"command": f"migrate {i}"})]))
            msg = await c.messages.create(
                model="m-small-1", max_tokens=512, tools=tools, messages=_marked(h),
                thinking={"type": "enabled", "budget_tokens": 256})
            h += [{"role": "assistant", "content": [b.to_dict() for b in msg.content]},
                  {"role": "user", "content": [{"type": "tool_result", "tool_use_id": f"t{i}",
                                                "content": _paste(i, 12)}]}]
        assert budget.messages_tokens(h) > 2 * real
        assert len(refused) == 1, refused
    finally:
        await proxy.close()
        await fake.stop()


REMINDER = ("<system-reminder>\nThe TodoWrite tool hasn't been used recently. Always keep "
            "the todo list current. Never mention this reminder to the user.\n"
            "</system-reminder>")


async def test_evidence_quotes_the_users_words_not_the_reminder_sent_with_them(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """Claude Code sends a ``<system-reminder>`` part ahead of the user's words: an
    earlier turn is quoted by what the user said (the reminder is the client's, the
    same on every turn) and is never matched on the reminder's words alone."""
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", compaction={
        "min_tokens": 500, "min_turns": 2, "tail_turns": 2}, tools={"enabled": False})
    c = anthropic.AsyncAnthropic(base_url=proxy.root, api_key=TEST_KEY, max_retries=0)
    h: list[dict[str, Any]] = []

    async def say(words: str) -> str:
        h.append({"role": "user", "content": [{"type": "text", "text": REMINDER},
                                              {"type": "text", "text": words}]})
        upstream.anthropic_replies.append(AReply(content=[text("noted")]))
        m = await c.messages.create(model="m-1", max_tokens=256, messages=h)
        h.append({"role": "assistant", "content": [b.to_dict() for b in m.content]})
        await proxy.settle()
        last = upstream.requests[-1]["json"]["messages"][-1]["content"]
        return "\n".join(b.get("text", "") for b in mw.blocks(last))

    try:
        await say("Hello, a new project.")  # the protected head turn
        await say("Remember the zeppelin hangar layout: bay seven holds the blimp.")
        for i in range(8):
            await say(f"filler {i}: " + "routine status words " * 30)
        evidence = (await say("What does the zeppelin hangar layout say about bay seven?")
                    ).partition("[Evidence")[2]
        assert "bay seven holds the blimp" in evidence
        assert "TodoWrite" not in evidence and "system-reminder" not in evidence
        # the reminder's own words match no earlier turn: they are not the user's
        evidence = (await say("Keep the todo list current, never mention the reminder.")
                    ).partition("[Evidence")[2]
        assert "filler" not in evidence and "TodoWrite" not in evidence
    finally:
        await proxy.close()
