"""Equivalent re-serialisations of a history continue the same thread.

Clients and frameworks send an earlier turn back in another, equivalent spelling
(a string for text blocks, ``citations: null``, ``content: ""`` for ``null``,
tool-call arguments with other whitespace, Responses items without ids…). Each case
here sends turn 1 through the proxy with the real SDK, then turn 2 with the history
in the other spelling, and checks that the proxy stored no second copy of any
message and opened no new thread (memory_core/capture/tree.py, ``normal_content``).
The other way round (stored before the normal form, resent after) is in
tests/test_tree.py and tests/test_store_capture.py.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import anthropic
import openai
import orjson
import pytest

from memory_core.capture.tree import node_key
from tests.conftest import TEST_KEY, RunningProxy, sql_write, store_sql
from tests.fake_anthropic import AReply, text, thinking
from tests.fake_upstream import FakeUpstream, Reply

SIG = "EqQBCkYIARgCKkC+sig/with+base64==" * 2
MARK = {"type": "ephemeral"}


def _counts(proxy: RunningProxy) -> tuple[int, int]:
    """(threads, stored messages)."""
    threads = store_sql(proxy.engine, "SELECT id FROM threads")
    messages = store_sql(proxy.engine, "SELECT id FROM messages")
    return len(threads), len(messages)


# -- Chat Completions ------------------------------------------------------------------
Form = Callable[[dict[str, Any]], dict[str, Any]]

CHAT_FORMS: dict[str, tuple[Form, Form]] = {
    # (how the user turn is resent, how the assistant reply is resent)
    "user text parts": (
        lambda m: dict(m, content=[{"type": "text", "text": m["content"]}]), dict),
    "assistant text parts": (
        dict, lambda m: dict(m, content=[{"type": "text", "text": m["content"]}])),
    "assistant null fields": (
        dict, lambda m: dict(m, refusal=None, annotations=[], audio=None,
                             function_call=None)),
}


@pytest.mark.parametrize("form", list(CHAT_FORMS))
async def test_chat_history_resent_in_another_form(
        proxy: RunningProxy, aclient: openai.AsyncOpenAI, form: str) -> None:
    user_form, reply_form = CHAT_FORMS[form]
    user = {"role": "user", "content": "The staging host is db-7."}
    r = await aclient.chat.completions.create(model="m", messages=[user])  # type: ignore[list-item]
    await proxy.settle()
    reply = r.choices[0].message.model_dump(exclude_none=True)
    turn2 = [user_form(user), reply_form(reply), {"role": "user", "content": "And prod?"}]
    await aclient.chat.completions.create(model="m", messages=turn2)  # type: ignore[arg-type]
    await proxy.settle()
    assert _counts(proxy) == (1, 4)


@pytest.mark.parametrize("content", ["", None, "absent"])
async def test_chat_tool_call_turn_resent_with_other_empty_content_and_arguments(
        proxy: RunningProxy, upstream: FakeUpstream, aclient: openai.AsyncOpenAI,
        content: Any) -> None:
    upstream.push(Reply(content=None, tool_calls=[
        {"id": "call_1", "name": "lookup", "arguments": '{"host": "db-7", "port": 5432}'}]))
    user = {"role": "user", "content": "Look up db-7."}
    r = await aclient.chat.completions.create(model="m", messages=[user])  # type: ignore[list-item]
    await proxy.settle()
    call = r.choices[0].message.tool_calls[0]  # type: ignore[index]
    echo: dict[str, Any] = {"role": "assistant", "tool_calls": [{
        "id": call.id, "type": "function",
        # re-serialised by the client: other key order and whitespace, same object
        "function": {"name": "lookup", "arguments": '{"port":5432,\n "host":"db-7"}'}}]}
    if content != "absent":
        echo["content"] = content
    turn2 = [user, echo, {"role": "tool", "tool_call_id": call.id, "content": "up"}]
    await aclient.chat.completions.create(model="m", messages=turn2)  # type: ignore[arg-type]
    await proxy.settle()
    assert _counts(proxy) == (1, 4)


# -- Anthropic Messages ----------------------------------------------------------------
def _anthropic(proxy: RunningProxy) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(base_url=proxy.root, api_key=TEST_KEY, max_retries=0)


def _joined(blocks: list[dict[str, Any]]) -> str:
    return "".join(b["text"] for b in blocks if b["type"] == "text")


ANTHROPIC_FORMS: dict[str, tuple[list[dict[str, Any]], Form]] = {
    # (the reply's blocks, how the client sends the reply back)
    "reply as a string": ([text("Noted: db-7.")], lambda m: dict(
        m, content=_joined(m["content"]))),
    "several blocks as a string": ([text("Noted: "), text("db-7.")], lambda m: dict(
        m, content=_joined(m["content"]))),
    "citations null": ([text("Noted: db-7.")], lambda m: dict(
        m, content=[dict(b, citations=None) for b in m["content"]])),
    "breakpoint on the reply": ([text("Noted: db-7.")], lambda m: dict(
        m, content=[dict(b, cache_control=MARK) for b in m["content"]])),
    "thinking dropped": ([thinking("Just note it.", SIG), text("Noted: db-7.")],
                         lambda m: dict(m, content=[b for b in m["content"]
                                                    if b["type"] != "thinking"])),
}


@pytest.mark.parametrize("form", list(ANTHROPIC_FORMS))
async def test_anthropic_history_resent_in_another_form(
        proxy: RunningProxy, upstream: FakeUpstream, form: str) -> None:
    blocks, reply_form = ANTHROPIC_FORMS[form]
    upstream.anthropic_replies.append(AReply(content=blocks))
    c = _anthropic(proxy)
    user: dict[str, Any] = {"role": "user", "content": "The staging host is db-7."}
    r = await c.messages.create(model="claude-x", max_tokens=100, messages=[user])  # type: ignore[list-item]
    await proxy.settle()
    reply = {"role": "assistant", "content": [b.to_dict() for b in r.content]}
    # The user turn comes back as blocks with the client's breakpoint on it.
    user2 = dict(user, content=[dict(text(user["content"]), cache_control=MARK)])
    turn2 = [user2, reply_form(reply), {"role": "user", "content": "And prod?"}]
    await c.messages.create(model="claude-x", max_tokens=100, messages=turn2)  # type: ignore[arg-type]
    await proxy.settle()
    assert _counts(proxy) == (1, 4)


# -- Responses -------------------------------------------------------------------------
def _input_text(s: str) -> dict[str, Any]:
    return {"type": "message", "role": "user", "content": [{"type": "input_text", "text": s}]}


RESPONSES_FORMS: dict[str, tuple[Any, Callable[[str], Any], Callable[[dict[str, Any]], Any]]] = {
    # (turn 1's input, how the user turn is resent, how each output item is resent)
    "string input, input_text parts": (
        "The staging host is db-7.", _input_text, lambda o: o),
    "message item, input_text parts": (
        [{"type": "message", "role": "user", "content": "The staging host is db-7."}],
        _input_text, lambda o: o),
    "output without id and status": (
        "The staging host is db-7.", lambda s: {"role": "user", "content": s},
        lambda o: {k: v for k, v in o.items() if k not in ("id", "status")}),
    "output_text without annotations": (
        "The staging host is db-7.", lambda s: {"role": "user", "content": s},
        lambda o: dict(o, content=[{k: v for k, v in p.items() if k != "annotations"}
                                   for p in o["content"]])),
}


@pytest.mark.parametrize("form", list(RESPONSES_FORMS))
async def test_responses_history_resent_in_another_form(
        proxy: RunningProxy, aclient: openai.AsyncOpenAI, form: str) -> None:
    first, user_form, output_form = RESPONSES_FORMS[form]
    r = await aclient.responses.create(model="m", input=first)
    await proxy.settle()
    history = [user_form("The staging host is db-7."),
               *[output_form(o.model_dump()) for o in r.output],
               {"role": "user", "content": "And prod?"}]
    await aclient.responses.create(model="m", input=history)
    await proxy.settle()
    assert _counts(proxy) == (1, 4)


# -- paths stored before the normal form -----------------------------------------------
def _rekey_as_before(proxy: RunningProxy) -> int:
    """Give every stored message the key the version before the normal form gave it
    (``legacy`` keys: its raw JSON is the message as sent). Returns how many keys
    changed."""
    rows = store_sql(proxy.engine, "SELECT id, parent_id, raw_json FROM messages ORDER BY id")
    keys: dict[int, str] = {}
    updates: list[tuple[str, str | None, int]] = []
    for row in rows:
        parent = keys.get(row["parent_id"]) if row["parent_id"] is not None else None
        keys[row["id"]] = node_key(parent, orjson.loads(row["raw_json"]), legacy=True)
        updates.append((keys[row["id"]], parent, row["id"]))
    before = {r["id"]: r["node_key"] for r in store_sql(
        proxy.engine, "SELECT id, node_key FROM messages")}

    def job(conn: Any) -> None:
        for key, parent, mid in updates:
            conn.execute("UPDATE messages SET node_key = ?, parent_key = ? WHERE id = ?",
                         (key, parent, mid))

    sql_write(proxy.engine, job)
    return sum(1 for key, _, mid in updates if before[mid] != key)


async def test_a_path_stored_before_the_normal_form_is_still_continued(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    """A Claude-Code-shaped conversation (system and user turns as text blocks with
    breakpoints) stored under the old keys: its next turns continue it, and the
    new messages extend the old-keyed path."""
    c = _anthropic(proxy)
    system = [dict(text("You are a coding agent."), cache_control=MARK)]
    history: list[dict[str, Any]] = [
        {"role": "user", "content": [dict(text("The staging host is db-7."),
                                          cache_control=MARK)]}]
    r = await c.messages.create(model="claude-x", max_tokens=100, system=system,  # type: ignore[arg-type]
                                messages=history)  # type: ignore[arg-type]
    await proxy.settle()
    assert _rekey_as_before(proxy) == 3  # every key differs: the system turn is blocks
    for n, ask in enumerate(["And prod?", "And dev?"]):
        history = [*history, {"role": "assistant", "content": [b.to_dict() for b in r.content]},
                   {"role": "user", "content": [dict(text(ask), cache_control=MARK)]}]
        r = await c.messages.create(model="claude-x", max_tokens=100, system=system,  # type: ignore[arg-type]
                                    messages=history)  # type: ignore[arg-type]
        await proxy.settle()
        assert _counts(proxy) == (1, 3 + 2 * (n + 1))
