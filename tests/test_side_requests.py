"""An agent's one-shot utility requests beside its conversation (proxy.flow.side).

Claude Code sends, on the conversation's key, a quota probe (``max_tokens: 1``), a
small-model classifier answering a JSON object ("isNewTopic"), and a compaction
request whose one user message quotes the whole transcript; the openai-agents SDK's
classifiers ask for a JSON answer only. They used to get the memory block and the
memory tools like a turn of the conversation, and the quoted transcript's lines (the
assistant's included) became the user's items, duplicating every one and superseding
the decisions they repeated. Replayed here with the real SDKs in a conversation that
already has memory.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import anthropic
import openai
import pytest

from memory_core.extraction import extract
from memory_core.extraction.prepare import quotes_transcript
from tests.conftest import TEST_KEY, RunningProxy, sql_read, start_proxy
from tests.fake_upstream import FakeUpstream

SYSTEM: Any = [{"type": "text", "text": "You are a coding agent. Use the tools. " * 20}]
TOOLS: Any = [{"name": "Bash", "description": "Run a command", "input_schema": {"type": "object"}}]
SAID = ["We are porting the billing service to Rust. The database is PostgreSQL 15.",
        "The connection pool size is 40. Always run the linter before committing.",
        "We decided to use sqlx instead of diesel."]
REPLY = "Noted. I suggest we always use tabs; the timeout is 90 s."
TOPIC = ("Analyze if this message indicates a new conversation topic. If it does, extract"
         " a 2-3 word title that captures the new topic. Format your response as a JSON"
         " object with two fields: 'isNewTopic' (boolean) and 'title' (string, or null if"
         " isNewTopic is false). Only include these fields. ONLY write the JSON object,"
         " no other text.")
SUMMARIZE = ("Your task is to create a detailed summary of the conversation so far, paying"
             " close attention to the user's explicit requests and your previous actions.")


def transcript() -> str:
    return "\n\n".join(f"Human: {u}\n\nAssistant: {REPLY}" for u in SAID)


def items(proxy: RunningProxy) -> list[tuple[str, str, str]]:
    return sorted(sql_read(proxy.engine, lambda c: [tuple(r) for r in c.execute(
        "SELECT text, evidence, status FROM memory_items").fetchall()]))


async def _conversation(proxy: RunningProxy) -> tuple[anthropic.AsyncAnthropic, Any]:
    client = anthropic.AsyncAnthropic(base_url=proxy.root, api_key=TEST_KEY, max_retries=0)
    history: Any = []
    for said in SAID:
        history.append({"role": "user", "content": said})
        answer = await client.messages.create(
            model="claude-x", max_tokens=1000, system=SYSTEM, tools=TOOLS,
            messages=history)
        history.append({"role": "assistant", "content": [  # as Claude Code echoes it
            {"type": "text", "text": answer.content[0].text}]})  # type: ignore[union-attr]
        await proxy.settle()
    return client, history


SIDE: dict[str, tuple[Any, str]] = {
    "quota": ({"model": "claude-haiku", "max_tokens": 1,
               "messages": [{"role": "user", "content": "quota"}]}, "tiny-output"),
    "compact": ({"model": "claude-x", "max_tokens": 4000, "tools": TOOLS,
                 "system": "You are a helpful AI assistant tasked with summarizing"
                           " conversations.",
                 "messages": [{"role": "user", "content": f"{transcript()}\n\n{SUMMARIZE}"}]},
                "quoted-transcript"),
}


@pytest.mark.parametrize("shape", list(SIDE))
async def test_a_side_request_goes_as_sent_and_the_conversation_goes_on(
        upstream: FakeUpstream, tmp_path: Path, shape: str) -> None:
    proxy = await start_proxy(upstream.base_url, tmp_path / "d")
    try:
        client, history = await _conversation(proxy)
        before = items(proxy)
        assert any(t.startswith("The connection pool size is 40") for t, *_ in before)
        body, reason = SIDE[shape]
        raw = await client.messages.with_raw_response.create(**body)
        await proxy.settle()
        sent = upstream.requests[-1]["json"]
        # no block, no memory tools: the upstream gets the client's request
        assert sent["messages"] == body["messages"]
        assert [t["name"] for t in sent.get("tools", [])] == [t["name"] for t in
                                                              body.get("tools", [])]
        assert raw.headers["x-lcm-side-request"] == reason
        assert raw.headers["x-lcm-memory"] == "skipped"
        # nothing of it is the user's: no new item, no item superseded
        assert items(proxy) == before
        # the conversation's next turn still continues its thread, with its memory
        history.append({"role": "user", "content": "Now port the tax module."})
        raw = await client.messages.with_raw_response.create(
            model="claude-x", max_tokens=1000, system=SYSTEM, tools=TOOLS,
            messages=history)
        await proxy.settle()
        assert raw.headers["x-lcm-memory"] == "injected"
        assert "x-lcm-side-request" not in raw.headers
        threads = sql_read(proxy.engine, lambda c: c.execute(
            "SELECT count(DISTINCT thread_id) FROM messages WHERE text IN (?, ?)",
            (SAID[0], "Now port the tax module.")).fetchone()[0])
        assert threads == 1, sql_read(proxy.engine, lambda c: [tuple(r) for r in c.execute(
            "SELECT id, thread_id, msg_role, substr(text, 1, 30) FROM messages")])
        block = str(upstream.requests[-1]["json"]["messages"][-1]["content"][1:])
        assert "Human:" not in block and "Assistant:" not in block
    finally:
        await proxy.close()


async def test_a_json_answer_alone_is_no_side_request(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """A history-less request asking for a JSON answer, declared (``json_schema``) or
    in a JSON-only system prompt, gets memory: an application's one-shot question
    looks the same as a classifier's (proxy/flow/side.py's module doc)."""
    proxy = await start_proxy(upstream.base_url, tmp_path / "d")
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
        await client.chat.completions.create(model="gpt-x", messages=[
            {"role": "user", "content": "The staging database port is 6543."}])
        await proxy.settle()
        fmt: Any = {"type": "json_schema", "json_schema": {
            "name": "answer", "schema": {"type": "object"}}}
        ask: Any = {"role": "user", "content": "Which database port does staging use?"}
        for system in ("Answer the user's question.",
                       "Respond with a JSON object only, no other text."):
            raw = await client.chat.completions.with_raw_response.create(
                model="gpt-x", response_format=fmt, messages=[
                    {"role": "system", "content": system}, ask])
            assert "x-lcm-side-request" not in raw.headers
            assert "6543" in str(upstream.requests[-1]["json"]["messages"][-1])
        # Claude Code's topic classifier shape gets memory too
        anth = anthropic.AsyncAnthropic(base_url=proxy.root, api_key=TEST_KEY, max_retries=0)
        raw_a = await anth.messages.with_raw_response.create(
            model="claude-haiku", max_tokens=512, system=[{"type": "text", "text": TOPIC}],
            messages=[{"role": "user", "content": "Which database port does staging use?"}])
        assert "x-lcm-side-request" not in raw_a.headers
        assert raw_a.headers["x-lcm-memory"] == "injected"
        # a tiny answer budget in Chat Completions' own field is a probe
        raw = await client.chat.completions.with_raw_response.create(
            model="gpt-x", max_completion_tokens=1, messages=[ask])
        assert raw.headers["x-lcm-side-request"] == "tiny-output"
    finally:
        await proxy.close()


def test_quotes_transcript_shapes() -> None:
    assert quotes_transcript(transcript())
    assert quotes_transcript("**User:** a\n**Assistant:** b\n**User:** c")
    assert quotes_transcript("[user]: a\n[assistant]: b\n[user]: c")
    # one labelled line, or one speaker only, is the user's own prose
    assert not quotes_transcript("User: the port is 8080.\nAssistant: noted.")
    assert not quotes_transcript("User: alice\nUser: bob\nThe port is 8080.")
    assert not quotes_transcript("The user asked; the assistant: answered.")
    # its lines are nobody's statement: no item, not the assistant's as the user's
    assert [i.text for i in extract(f"{transcript()}\n\n{SUMMARIZE}")] == []


TASK_PROMPT = ("Find where the billing service retries failed charges. The deploy region"
               " is eu-west-3. Never include arguments in the report; list file paths only.")
AGENT_TOOLS: Any = TOOLS + [{"name": "Task", "description": "Launch a sub-agent",
                             "input_schema": {"type": "object"}}]
REMINDER = "<system-reminder>\nThe date is 2026-12-06.\n</system-reminder>"


def _user_items(proxy: RunningProxy, *words: str) -> list[str]:
    return [t for t, *_ in items(proxy) if any(w in t for w in words)]


async def test_a_sub_agents_task_prompt_is_the_models_words_not_the_users(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """The main model writes a sub-agent's prompt as a ``Task`` tool call's input; the
    sub-agent's request then sends it as its first user message. Its fact and rule
    are the model's: no item of the user's, none in a later conversation's block."""
    from tests.fake_anthropic import AReply, text, tool_use

    proxy = await start_proxy(upstream.base_url, tmp_path / "d")
    try:
        client = anthropic.AsyncAnthropic(base_url=proxy.root, api_key=TEST_KEY,
                                          max_retries=0)
        upstream.anthropic_replies.append(AReply(content=[
            text("I'll delegate the search."),
            tool_use("toolu_1", "Task", {"description": "Find retry code",
                                         "prompt": TASK_PROMPT,
                                         "subagent_type": "general-purpose"})]))
        history: Any = [{"role": "user", "content": SAID[0]}]
        answer = await client.messages.create(
            model="claude-x", max_tokens=1000, system=SYSTEM, tools=AGENT_TOOLS,
            messages=history)
        assert answer.content[1].type == "tool_use"
        await proxy.settle()
        # the sub-agent: its own system prompt and tools, the prompt as its first
        # user turn (after a client's reminder block)
        await client.messages.create(
            model="claude-x", max_tokens=1000, system="You are a search sub-agent.",
            tools=TOOLS, messages=[{"role": "user", "content": [
                {"type": "text", "text": REMINDER}, {"type": "text", "text": TASK_PROMPT}]}])
        await proxy.settle()
        stored = sql_read(proxy.engine, lambda c: c.execute(
            "SELECT count(*) FROM messages WHERE msg_role='user' AND text LIKE ?",
            (f"%{TASK_PROMPT}%",)).fetchone()[0])
        assert stored == 1  # kept as evidence
        assert _user_items(proxy, "eu-west-3", "Never include arguments") == []
        # the user's own opening still gave its items
        assert _user_items(proxy, "PostgreSQL 15")
        # a later conversation's block holds none of the prompt's sentences
        await client.messages.create(
            model="claude-x", max_tokens=1000, system=SYSTEM, tools=AGENT_TOOLS,
            messages=[{"role": "user", "content": "Which region do we deploy to, and"
                                                  " what must the report leave out?"}])
        block = str(upstream.requests[-1]["json"]["messages"][-1]["content"])
        assert "eu-west-3" not in block and "Never include arguments" not in block
        assert "PostgreSQL 15" in block
    finally:
        await proxy.close()


async def test_a_user_repeating_the_assistants_prose_keeps_their_items(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """Only tool-call arguments mark a message as the model's: a user who opens a new
    conversation with a sentence the assistant said in prose said it."""
    from tests.fake_anthropic import AReply, text, tool_use

    proxy = await start_proxy(upstream.base_url, tmp_path / "d")
    try:
        client = anthropic.AsyncAnthropic(base_url=proxy.root, api_key=TEST_KEY,
                                          max_retries=0)
        upstream.anthropic_replies.append(AReply(content=[
            text(TASK_PROMPT),  # in prose
            tool_use("toolu_1", "Bash", {"command": "ls -la services/billing"})]))
        await client.messages.create(
            model="claude-x", max_tokens=1000, system=SYSTEM, tools=AGENT_TOOLS,
            messages=[{"role": "user", "content": SAID[0]}])
        await proxy.settle()
        await client.messages.create(
            model="claude-x", max_tokens=1000, system=SYSTEM, tools=AGENT_TOOLS,
            messages=[{"role": "user", "content": TASK_PROMPT}])
        await proxy.settle()
        assert _user_items(proxy, "eu-west-3")
        assert _user_items(proxy, "Never include arguments")
    finally:
        await proxy.close()


def test_model_wrote_reads_every_call_shape() -> None:
    """Chat ``tool_calls`` (JSON text arguments, an agent-as-tool's ``input``), a
    custom tool's free text, Anthropic ``tool_use``; nearly whole, whitespace aside."""
    import orjson

    from memory_core.capture.delegated import model_wrote

    def chat(args: str) -> str:
        return orjson.dumps({"role": "assistant", "content": None, "tool_calls": [
            {"id": "c1", "type": "function",
             "function": {"name": "research_agent", "arguments": args}}]}).decode()

    as_tool = chat(orjson.dumps({"input": TASK_PROMPT}).decode())
    assert model_wrote(TASK_PROMPT, [as_tool])
    assert model_wrote(TASK_PROMPT.replace(". ", ".\n\n"), [as_tool])  # wrapped lines
    assert model_wrote(TASK_PROMPT, ["not json", chat(TASK_PROMPT)])  # free-text input
    nested = orjson.dumps({"role": "assistant", "content": [{"type": "tool_use", "id": "t",
                           "name": "x", "input": {"a": [{"b": TASK_PROMPT}]}}]}).decode()
    assert model_wrote(TASK_PROMPT, [nested])
    # the user's own words around a quoted argument, a short argument, prose: the user's
    assert not model_wrote(f"{TASK_PROMPT} Also, I moved to Lisbon last year and our"
                           " team now deploys from there every Tuesday morning.", [as_tool])
    assert not model_wrote("ls -la", [chat('{"command": "ls -la"}')])
    assert not model_wrote(TASK_PROMPT, [orjson.dumps(
        {"role": "assistant", "content": TASK_PROMPT}).decode()])
