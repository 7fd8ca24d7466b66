"""Replay a whole LoCoMo conversation through the proxy, as an agent would.

LoCoMo (Maharana et al., ACL 2024, CC BY-NC 4.0) is evaluation data kept outside
the repository, in ``../shared/data/locomo`` (see its README); it is read from there
and never copied. The test is skipped when the file is absent.

Mapping: ``speaker_a``'s turns are user messages and ``speaker_b``'s turns are the
assistant's. When a ``speaker_b`` turn answers something, the agent sends its whole
history and the fake upstream is scripted to reply with exactly that turn's text, so
the stored assistant replies are the real text. A ``speaker_b`` turn that follows
another one is appended by the client itself (as an assistant message it supplies),
and a trailing ``speaker_a`` turn is sent with one last request whose scripted reply
closes the conversation.
"""

from __future__ import annotations

import json
import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import openai
import pytest
from openai.types.chat import ChatCompletion

from tests.conftest import TEST_KEY, RunningProxy
from tests.fake_upstream import FakeUpstream, Reply

LOCOMO = Path(__file__).resolve().parents[2] / "shared/data/locomo/locomo10.json"
CONVERSATION = 0  # Caroline and Melanie: 19 sessions, 419 turns
CLOSING_REPLY = "(end of the conversation)"


def load_turns(index: int) -> tuple[str, str, list[dict[str, Any]]]:
    if not LOCOMO.is_file():
        pytest.skip(f"LoCoMo data not found at {LOCOMO} (evaluation data, kept outside "
                    "the repository; see shared/data/locomo/README.md)")
    conversation = json.loads(LOCOMO.read_text(encoding="utf-8"))[index]["conversation"]
    sessions = sorted(
        (k for k in conversation
         if re.fullmatch(r"session_\d+", k) and isinstance(conversation[k], list)),
        key=lambda k: int(k.split("_")[1]),
    )
    turns = [turn for s in sessions for turn in conversation[s]]
    return conversation["speaker_a"], conversation["speaker_b"], turns


def text_of(turn: dict[str, Any]) -> str:
    text = turn["text"]
    if turn.get("blip_caption"):
        text += f" [shares {turn['blip_caption']}]"
    return text


async def test_replay_locomo_conversation_stores_every_turn_once_in_order(
    make_proxy: Callable[..., Awaitable[RunningProxy]], upstream: FakeUpstream
) -> None:
    speaker_a, speaker_b, turns = load_turns(CONVERSATION)
    assert len(turns) > 300
    # The evidence log only: injection, compaction and memory tools rewrite what the
    # upstream sees, extraction and indexing work on what was stored; each has its
    # own tests.
    running = await make_proxy(injection={"enabled": False, "extract": False},
                               compaction={"enabled": False}, search={"enabled": False},
                               tools={"enabled": False})
    client = openai.AsyncOpenAI(base_url=running.base_url, api_key=TEST_KEY, max_retries=0)
    system = f"{speaker_b} is chatting with {speaker_a}, an old friend."
    history: list[Any] = [{"role": "system", "content": system}]
    expected: list[tuple[str, str, str]] = [("system", system, "request")]
    requests = 0

    async def send(reply: str) -> None:
        nonlocal requests
        upstream.push(Reply(content=reply))
        # The SDK's generic ``post`` (same HTTP stack, retries, error mapping and
        # response parsing as ``chat.completions.create``) skips only the typed
        # parameter transform, which walks the whole history on every call (about
        # 0.4 s per call at 400 messages) and would dominate this test's runtime.
        completion = await client.post(
            "/chat/completions", body={"model": "m", "messages": history},
            cast_to=ChatCompletion)
        message = completion.choices[0].message
        assert message.content == reply
        history.append(message)  # echoed back next turn as the SDK's own object
        requests += 1

    for turn in turns:
        text = text_of(turn)
        if turn["speaker"] == speaker_a:
            history.append({"role": "user", "content": text, "name": speaker_a})
            expected.append(("user", text, "request"))
        elif expected[-1][0] != "assistant":
            await send(text)
            expected.append(("assistant", text, "response"))
        else:  # a second turn in a row: the client supplies it
            history.append({"role": "assistant", "content": text})
            expected.append(("assistant", text, "request"))
    if expected[-1][0] != "assistant":
        await send(CLOSING_REPLY)
        expected.append(("assistant", CLOSING_REPLY, "response"))
    await running.settle()
    await client.close()

    assert requests == len(upstream.chat_requests) > 150
    # Each request carried the whole history so far, in order.
    sizes = [len(r["json"]["messages"]) for r in upstream.chat_requests]
    assert sizes == sorted(sizes) and sizes[-1] == len(expected) - 1
    assert [m.get("content") for m in upstream.chat_requests[-1]["json"]["messages"]][-1] == (
        expected[-2][1])

    data = running.engine.export()
    (thread,) = data["threads"]  # no spurious forks
    stored = [(m["role"], m["text"], m["kind"]) for m in thread["messages"]]
    assert len(stored) == len(expected) == len(turns) + 1 + (expected[-1][1] == CLOSING_REPLY)
    assert stored == expected
    path = running.engine.thread_messages(thread["id"])
    assert [(m["msg_role"], m["text"]) for m in path] == [(r, t) for r, t, _ in expected]
    ids = [m["id"] for m in thread["messages"]]
    assert ids == sorted(ids)
    assert [m["parent_id"] for m in thread["messages"]] == [None, *ids[:-1]]
    counts = running.engine.status()["counts"]
    assert counts["messages"] == len(expected)
    assert counts["threads"] == 1
