"""Replays of failure kinds drawn from the API references (rows 78 on of
docs/evaluation/wire_replays.md): request fields and stream events of the Chat
Completions, Responses and Messages APIs that a memory path (the block, the memory
tools, hidden tool rounds) could break. Same setting as tests/test_wire_replays.py: a
loopback upstream writing each API's real bytes, the real SDKs as clients."""

from __future__ import annotations

from typing import Any

import anthropic
import openai
import orjson
import pytest

from tests.conftest import TEST_KEY
from tests.replay_helpers import (
    FINAL,
    MEMORY_CALLS,
    SDK_USER,
    USER,
    Gated,
    Scripted,
    block_event,
    chunk,
    ev,
    events,
    gated,  # noqa: F401 - the fixture
    message_start,
    post,
)


def _message_stream(blocks: list[dict[str, Any]], stop: str, *, msg_id: str = "msg_1",
                     delta: dict[str, Any] | None = None) -> bytes:
    """A Messages stream: each block whole in its start (text by one delta)."""
    out = [message_start(msg_id)]
    for i, block in enumerate(blocks):
        if block["type"] == "text":
            out.append(block_event("content_block_start", i, content_block={"type": "text",
                                                                            "text": ""}))
            out.append(block_event("content_block_delta", i, delta={"type": "text_delta",
                                                                    "text": block["text"]}))
        else:
            out.append(block_event("content_block_start", i, content_block=block))
        out.append(block_event("content_block_stop", i))
    out.append(ev("message_delta", {"type": "message_delta", "delta": {
        "stop_reason": stop, "stop_sequence": None, **(delta or {})},
        "usage": {"output_tokens": 9}}))
    out.append(ev("message_stop", {"type": "message_stop"}))
    return b"".join(out)


MEMORY_USE = {"type": "tool_use", "id": "toolu_m", "name": "memory_grep",
              "input": {"query": "build flag"}}


# -- 78: request fields on every round --------------------------------------------------------
# The references' fields that shape the whole answer: a hidden round that dropped one
# would answer under other rules (parallel calls, verbosity, truncation, a container).
FIELDS: dict[str, dict[str, Any]] = {
    "/chat/completions": {
        "parallel_tool_calls": False, "verbosity": "low", "reasoning_effort": "low",
        "prompt_cache_key": "pk-1", "safety_identifier": "u-1", "service_tier": "flex",
        "store": False, "web_search_options": {"search_context_size": "low"}},
    "/responses": {
        "truncation": "auto", "text": {"verbosity": "low"}, "max_tool_calls": 3,
        "reasoning": {"effort": "low", "summary": "auto"}, "store": False,
        "include": ["reasoning.encrypted_content"], "parallel_tool_calls": False,
        "prompt_cache_key": "pk-1", "safety_identifier": "u-1", "service_tier": "flex"},
    "/messages": {
        "tool_choice": {"type": "auto", "disable_parallel_tool_use": True},
        "container": "container_011CQ", "service_tier": "auto",
        "mcp_servers": [{"type": "url", "url": "https://mcp.example/sse", "name": "ex"}],
        "context_management": {"edits": [{"type": "clear_tool_uses_20250919"}]},
        "metadata": {"user_id": "u-1"}, "top_k": 5},
}


@pytest.mark.parametrize("path", sorted(FIELDS))
async def test_the_reference_fields_reach_every_round(gated: Gated, path: str) -> None:
    upstream, proxy = gated
    body, call = MEMORY_CALLS[path]
    upstream.answers.extend([Scripted([call]), Scripted([FINAL[path]])])
    status, _, got = await post(proxy, path, dict(body, **FIELDS[path]))
    assert status == 200 and b"memory_grep" not in got
    assert len(upstream.received) == 2, "the memory call was run"
    for sent in upstream.received:
        assert {k: sent["json"].get(k) for k in FIELDS[path]} == FIELDS[path]


# -- 79: allowed_tools ---------------------------------------------------------------------------
# The references' ``tool_choice: {"type": "allowed_tools", ...}`` (Chat and Responses)
# restricts the model to a subset of ``tools``: memory tools outside it are dead weight
# and tools inside it a change of the client's choice. The request goes as sent.
ALLOWED = {
    "/chat/completions": {"type": "allowed_tools", "allowed_tools": {
        "mode": "auto", "tools": [{"type": "function", "function": {"name": "get_weather"}}]}},
    "/responses": {"type": "allowed_tools", "mode": "required",
                   "tools": [{"type": "function", "name": "get_weather"}]},
}


@pytest.mark.parametrize("path", sorted(ALLOWED))
async def test_an_allowed_tools_choice_goes_as_sent(gated: Gated, path: str) -> None:
    upstream, proxy = gated
    body, _ = MEMORY_CALLS[path]
    tool = ({"type": "function", "function": {"name": "get_weather", "parameters": {
        "type": "object"}}} if path == "/chat/completions" else
        {"type": "function", "name": "get_weather", "parameters": {"type": "object"}})
    upstream.answers.append(Scripted([FINAL[path]]))
    status, _, got = await post(proxy, path, dict(body, tools=[tool],
                                                 tool_choice=ALLOWED[path]))
    assert (status, got) == (200, FINAL[path])
    sent = upstream.received[0]["json"]
    assert sent["tools"] == [tool] and sent["tool_choice"] == ALLOWED[path]


# -- 80: four cache breakpoints, every round -----------------------------------------------------
# Reported: "A maximum of 4 blocks with cache_control may be provided. Found 5" after a
# proxy added its own; and a cache prefix broken by tools reordered or changed between
# turns. With the client's four, every round (the hidden one too) carries exactly those,
# the client's tools first, and the tools the upstream gets are the same turn after turn.
CACHE = {"type": "ephemeral"}


async def test_four_cache_breakpoints_stay_four_on_every_round_and_turn(gated: Gated) -> None:
    upstream, proxy = gated
    tools = [{"name": "get_weather", "input_schema": {"type": "object"}},
             {"name": "get_time", "input_schema": {"type": "object"},
              "cache_control": CACHE}]
    body = {"model": "claude", "max_tokens": 50, "stream": True, "tools": tools,
            "system": [{"type": "text", "text": "Be brief.", "cache_control": CACHE}],
            "messages": [
                {"role": "user", "content": [{"type": "text", "text": "long doc",
                                              "cache_control": CACHE}]},
                {"role": "assistant", "content": "ok"},
                {"role": "user", "content": [{"type": "text", "text": "hello there",
                                              "cache_control": CACHE}]}]}
    upstream.answers.extend([Scripted([MEMORY_CALLS["/messages"][1]]),
                             Scripted([FINAL["/messages"]]), Scripted([FINAL["/messages"]])])
    status, _, got = await post(proxy, "/messages", body)
    assert status == 200 and b"memory_grep" not in got
    later = dict(body, messages=[*body["messages"], {"role": "assistant", "content": "done"},
                                 {"role": "user", "content": "and then?"}])
    status, _, _ = await post(proxy, "/messages", later)
    assert len(upstream.received) == 3
    for sent in upstream.received:
        assert sent["raw"].count(b"\"cache_control\"") == 4
        assert sent["json"]["tools"][:2] == tools
        assert orjson.dumps(tools)[:-1] in sent["raw"], "the client's tools as its bytes"
    assert upstream.received[0]["json"]["tools"] == upstream.received[2]["json"]["tools"]


# -- 81: server tool blocks in a hidden round -------------------------------------------------
# Reported: "web_search tool use ... without a corresponding web_search_tool_result";
# code execution / web fetch / MCP blocks dropped by relays. A round that ran a server tool
# and then called a memory tool must send all of it back, in order, with the call.
SERVER_BLOCKS = {
    "web_fetch": [
        {"type": "server_tool_use", "id": "srvtoolu_f", "name": "web_fetch",
         "input": {"url": "https://example.org/a"}},
        {"type": "web_fetch_tool_result", "tool_use_id": "srvtoolu_f", "content": {
            "type": "web_fetch_result", "url": "https://example.org/a",
            "retrieved_at": "2026-01-01T00:00:00Z", "content": {
                "type": "document", "source": {"type": "text", "media_type": "text/plain",
                                               "data": "alpha"}, "title": "A"}}}],
    "code_execution": [
        {"type": "server_tool_use", "id": "srvtoolu_c", "name": "bash_code_execution",
         "input": {"command": "ls"}},
        {"type": "bash_code_execution_tool_result", "tool_use_id": "srvtoolu_c", "content": {
            "type": "bash_code_execution_result", "stdout": "a.txt\n", "stderr": "",
            "return_code": 0, "content": []}}],
    "mcp": [
        {"type": "mcp_tool_use", "id": "mcptoolu_1", "name": "search", "server_name": "ex",
         "input": {"q": "alpha"}},
        {"type": "mcp_tool_result", "tool_use_id": "mcptoolu_1", "is_error": False,
         "content": [{"type": "text", "text": "alpha"}]}],
}


@pytest.mark.parametrize("kind", sorted(SERVER_BLOCKS))
async def test_server_tool_blocks_of_a_hidden_round_go_back_with_its_call(
        gated: Gated, kind: str) -> None:
    upstream, proxy = gated
    server = SERVER_BLOCKS[kind]
    upstream.answers.extend([Scripted([_message_stream([*server, MEMORY_USE], "tool_use")]),
                             Scripted([FINAL["/messages"]])])
    async with anthropic.AsyncAnthropic(api_key=TEST_KEY, base_url=proxy.base_url[:-3]
                                        ) as client, client.messages.stream(
            model="claude", max_tokens=50, messages=SDK_USER) as stream:
        final = await stream.get_final_message()
    assert "memory_grep" not in final.model_dump_json(warnings=False)
    assert final.content[-1].type == "text"
    assert len(upstream.received) == 2
    back = [m for m in upstream.received[1]["json"]["messages"] if m["role"] == "assistant"]
    assert back[-1]["content"] == [*server, MEMORY_USE]


# -- 82: a hidden code-execution round's container -----------------------------------------
# The reference: a response that ran code execution names its ``container``; the next
# request continues in it only when it passes that id (LangChain's
# ``reuse_last_container``). A hidden round is the proxy's own next request.
SKILLS = [{"type": "anthropic", "skill_id": "pptx", "version": "latest"}]


@pytest.mark.parametrize("sent", [None, {"skills": SKILLS}, "container_old"])
@pytest.mark.parametrize("stream", [True, False])
async def test_the_container_of_a_hidden_round_is_reused_by_the_next(
        gated: Gated, stream: bool, sent: Any) -> None:
    upstream, proxy = gated
    server = SERVER_BLOCKS["code_execution"]
    container = {"id": "container_011CQ", "expires_at": "2026-12-07T00:00:00Z"}
    if stream:
        first = Scripted([_message_stream([*server, MEMORY_USE], "tool_use",
                                          delta={"container": container})])
    else:
        first = Scripted([orjson.dumps({
            "id": "msg_1", "type": "message", "role": "assistant", "model": "claude",
            "content": [*server, MEMORY_USE], "stop_reason": "tool_use",
            "stop_sequence": None, "container": container,
            "usage": {"input_tokens": 5, "output_tokens": 9}})],
            headers={"Content-Type": "application/json"})
    upstream.answers.extend([first, Scripted([FINAL["/messages"]])])
    body: dict[str, Any] = {
        "model": "claude", "max_tokens": 50, "messages": USER, "stream": stream,
        "tools": [{"type": "code_execution_20250825", "name": "code_execution"}]}
    if sent is not None:
        body["container"] = sent
    status, _, got = await post(proxy, "/messages", body)
    assert status == 200 and b"memory_grep" not in got
    assert upstream.received[0]["json"].get("container") == sent, "the first as sent"
    want = (dict(sent, id=container["id"]) if isinstance(sent, dict) else container["id"])
    assert upstream.received[1]["json"]["container"] == want


# -- 83: thinking over two hidden rounds ------------------------------------------------------
# Reported: "Invalid signature in thinking block" / "thinking blocks ... cannot be
# modified". With interleaved thinking, each hidden round's assistant turn must lead with
# its own signed thinking, the earlier one kept as it went.
async def test_each_hidden_rounds_thinking_goes_back_with_its_own_call(gated: Gated) -> None:
    upstream, proxy = gated
    t1 = {"type": "thinking", "thinking": "Look first.", "signature": "EqQBsig1=="}
    t2 = {"type": "redacted_thinking", "data": "EmwKAhgBEgy3va"}
    use2 = dict(MEMORY_USE, id="toolu_n", input={"query": "other"})
    upstream.answers.extend([Scripted([_message_stream([t1, MEMORY_USE], "tool_use")]),
                             Scripted([_message_stream([t2, use2], "tool_use",
                                                       msg_id="msg_2")]),
                             Scripted([FINAL["/messages"]])])
    body = {"model": "claude", "max_tokens": 2000, "messages": USER, "stream": True,
            "thinking": {"type": "enabled", "budget_tokens": 1024}}
    status, _, got = await post(proxy, "/messages", body, {
        "anthropic-beta": "interleaved-thinking-2025-05-14"})
    assert status == 200 and b"memory_grep" not in got and b"EmwKAhgBEgy3va" not in got
    assert len(upstream.received) == 3
    back = [m["content"] for m in upstream.received[2]["json"]["messages"]
            if m["role"] == "assistant"]
    assert back[-2:] == [[t1, MEMORY_USE], [t2, use2]]


# -- 84: documents, search results and their citations ------------------------------------
# The references' ``document`` and ``search_result`` blocks (citations on) in the newest
# user turn, where the memory block goes; ``citations_delta`` of both location kinds
# after a hidden round. Citations index documents by their order: nothing may go before.
DOC = {"type": "document", "source": {"type": "text", "media_type": "text/plain",
                                      "data": "The grass is green."},
       "title": "G", "citations": {"enabled": True}}
SEARCH = {"type": "search_result", "source": "https://example.org/s", "title": "S",
          "content": [{"type": "text", "text": "The sky is blue."}],
          "citations": {"enabled": True}}
CITES = [{"type": "char_location", "cited_text": "The grass is green.", "document_index": 0,
          "document_title": "G", "start_char_index": 0, "end_char_index": 19},
         {"type": "search_result_location", "cited_text": "The sky is blue.",
          "source": "https://example.org/s", "title": "S", "search_result_index": 0,
          "start_block_index": 0, "end_block_index": 1}]


async def test_documents_and_their_citations_survive_the_block_and_a_hidden_round(
        gated: Gated) -> None:
    upstream, proxy = gated
    answer = b"".join([
        message_start("msg_2"),
        block_event("content_block_start", 0, content_block={"type": "text", "text": "",
                                                              "citations": []}),
        *(block_event("content_block_delta", 0, delta={"type": "citations_delta", "citation": c})
          for c in CITES),
        block_event("content_block_delta", 0, delta={"type": "text_delta", "text": "Green."}),
        block_event("content_block_stop", 0),
        ev("message_delta", {"type": "message_delta", "delta": {
            "stop_reason": "end_turn", "stop_sequence": None}, "usage": {"output_tokens": 2}}),
        ev("message_stop", {"type": "message_stop"})])
    upstream.answers.extend([Scripted([MEMORY_CALLS["/messages"][1]]), Scripted([answer])])
    user: Any = [{"role": "user", "content": [DOC, SEARCH,
                                              {"type": "text", "text": "What colour?"}]}]
    async with anthropic.AsyncAnthropic(api_key=TEST_KEY, base_url=proxy.base_url[:-3]
                                        ) as client, client.messages.stream(
            model="claude", max_tokens=50, messages=user) as stream:
        final = await stream.get_final_message()
    text = final.content[0]
    assert text.type == "text" and text.text == "Green."
    assert [c.model_dump(exclude_none=True) for c in text.citations or []] == CITES
    for sent in upstream.received:
        content = sent["json"]["messages"][0]["content"]
        assert content[:3] == user[0]["content"], "the client's blocks first, as sent"


# -- 85: Responses reasoning summaries and annotations after a hidden round ------------------
# The reference's ``response.reasoning_summary_*`` events (``reasoning.summary``) in a
# hidden round, and ``response.output_text.annotation.added`` in the answering one: the
# SDK accumulates by ``output_index``/``content_index``; a hidden round must leave it
# a consistent snapshot.
REASONING = {"type": "reasoning", "id": "rs_1", "summary": [
    {"type": "summary_text", "text": "Check memory."}], "encrypted_content": "gAAAAB"}
ANNOTATION = {"type": "url_citation", "url": "https://example.org/a", "title": "A",
              "start_index": 0, "end_index": 5}


def _resp_stream(rid: str, items: list[dict[str, Any]], *,
                 terminal: str = "response.completed",
                 extra: dict[str, Any] | None = None) -> bytes:
    resp = {"id": rid, "object": "response", "status": "in_progress", "output": [],
            "model": "m", "created_at": 1}
    out, seq = [ev("response.created", {"type": "response.created", "sequence_number": 0,
                                        "response": resp})], 1

    def add(name: str, **kw: Any) -> None:
        nonlocal seq
        out.append(ev(name, {"type": name, "sequence_number": seq, **kw}))
        seq += 1

    for i, item in enumerate(items):
        add("response.output_item.added", output_index=i,
            item=dict(item, **({"summary": []} if item["type"] == "reasoning" else {}),
                      **({"content": []} if item["type"] == "message" else {})))
        if item["type"] == "reasoning":
            part = {"type": "summary_text", "text": ""}
            add("response.reasoning_summary_part.added", item_id=item["id"], output_index=i,
                summary_index=0, part=part)
            add("response.reasoning_summary_text.delta", item_id=item["id"], output_index=i,
                summary_index=0, delta="Check memory.")
            add("response.reasoning_summary_text.done", item_id=item["id"], output_index=i,
                summary_index=0, text="Check memory.")
            add("response.reasoning_summary_part.done", item_id=item["id"], output_index=i,
                summary_index=0, part=item["summary"][0])
        if item["type"] == "message":
            text = item["content"][0]["text"]
            add("response.content_part.added", item_id=item["id"], output_index=i,
                content_index=0, part={"type": "output_text", "text": "", "annotations": []})
            add("response.output_text.delta", item_id=item["id"], output_index=i,
                content_index=0, delta=text, logprobs=[])
            add("response.output_text.annotation.added", item_id=item["id"],
                output_index=i, content_index=0, annotation_index=0, annotation=ANNOTATION)
            add("response.output_text.done", item_id=item["id"], output_index=i,
                content_index=0, text=text, logprobs=[])
            add("response.content_part.done", item_id=item["id"], output_index=i,
                content_index=0, part=item["content"][0])
        add("response.output_item.done", output_index=i, item=item)
    status = "completed" if terminal == "response.completed" else "incomplete"
    add(terminal, response=dict(resp, status=status, output=items, **(extra or {}),
                                usage={"input_tokens": 3, "output_tokens": 4,
                                       "total_tokens": 7}))
    return b"".join(out)


ANSWER_ITEM = {"type": "message", "id": "msg_2", "status": "completed", "role": "assistant",
               "content": [{"type": "output_text", "text": "Alpha", "annotations": [ANNOTATION],
                            "logprobs": []}]}
MEMORY_ITEM = {"type": "function_call", "id": "fc_1", "call_id": "call_m",
               "name": "memory_grep", "arguments": "{\"query\": \"x\"}", "status": "completed"}


@pytest.mark.parametrize("terminal", ["response.completed", "response.incomplete"])
async def test_summaries_annotations_and_incomplete_after_a_hidden_round(
        gated: Gated, terminal: str) -> None:
    upstream, proxy = gated
    extra = ({"incomplete_details": {"reason": "max_output_tokens"}}
             if terminal == "response.incomplete" else {})
    upstream.answers.extend([
        Scripted([_resp_stream("resp_1", [REASONING, MEMORY_ITEM])]),
        Scripted([_resp_stream("resp_2", [ANSWER_ITEM], terminal=terminal, extra=extra)])])
    async with openai.AsyncOpenAI(api_key=TEST_KEY, base_url=proxy.base_url,
                                  max_retries=0) as client:
        async with client.responses.stream(
                model="m", input="hello there", store=False,
                reasoning={"effort": "low", "summary": "auto"},
                include=["reasoning.encrypted_content"]) as stream:
            events = [e async for e in stream]
    done = events[-1].response  # the SDK's final response wants ``completed``
    assert events[-1].type == terminal and done.status == terminal.split(".")[1]
    message = [o for o in done.output if o.type == "message"]
    assert message and message[0].content[0].annotations[0].url == ANNOTATION["url"]
    assert "memory_grep" not in done.model_dump_json()
    if extra:
        assert done.incomplete_details is not None
        assert done.incomplete_details.reason == "max_output_tokens"
    seqs = [e.sequence_number for e in events]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    sent = upstream.received[1]["json"]["input"]
    assert [i.get("type") for i in sent if isinstance(i, dict)][-3:] == [
        "reasoning", "function_call", "function_call_output"]


# -- 86: Chat audio output after a hidden round -------------------------------------------------
# The reference's ``modalities: ["text", "audio"]`` answers carry ``delta.audio``
# (``id``, ``data``, ``transcript``, ``expires_at``) streamed, ``message.audio`` plain;
# the next turn refers to it by ``audio.id``. After a hidden round both must reach the
# client as the answering round wrote them.
AUDIO = {"id": "audio_1", "data": "UklGRg==", "transcript": "done", "expires_at": 9}


@pytest.mark.parametrize("stream", [True, False])
async def test_audio_output_after_a_hidden_round_reaches_the_client(
        gated: Gated, stream: bool) -> None:
    upstream, proxy = gated
    if stream:
        answer = Scripted([b"".join([chunk({"role": "assistant", "content": None}),
                                     chunk({"audio": AUDIO}), chunk({}, "stop"),
                                     b"data: [DONE]\n\n"])])
        first = Scripted([MEMORY_CALLS["/chat/completions"][1]])
    else:
        json = {"Content-Type": "application/json"}
        first = Scripted([orjson.dumps({
            "id": "chatcmpl-m", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "tool_calls", "message": {
                "role": "assistant", "content": None, "tool_calls": [{
                    "id": "call_m", "type": "function", "function": {
                        "name": "memory_grep", "arguments": "{\"query\": \"x\"}"}}]}}]})],
            headers=json)
        answer = Scripted([orjson.dumps({
            "id": "chatcmpl-a", "object": "chat.completion", "created": 1, "model": "m",
            "choices": [{"index": 0, "finish_reason": "stop", "message": {
                "role": "assistant", "content": None, "audio": AUDIO}}]})], headers=json)
    upstream.answers.extend([first, answer])
    body = {"model": "m", "messages": USER, "stream": stream, "modalities": ["text", "audio"],
            "audio": {"voice": "alloy", "format": "wav"}}
    status, _, got = await post(proxy, "/chat/completions", body)
    assert status == 200 and b"memory_grep" not in got and len(upstream.received) == 2
    if stream:
        audio = [c["choices"][0]["delta"].get("audio") for c in events(got) if c["choices"]]
        assert [a for a in audio if a] == [AUDIO]
    else:
        assert orjson.loads(got)["choices"][0]["message"]["audio"] == AUDIO
    for sent in upstream.received:
        assert sent["json"]["modalities"] == ["text", "audio"]
        assert sent["json"]["audio"] == {"voice": "alloy", "format": "wav"}

