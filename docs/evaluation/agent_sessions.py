"""Agent sessions at a 6k window, counted: what the upstream would refuse.

Drives the proxy with the real SDK clients against the test suite's fake upstream
(loopback only) in the shapes of tests/test_agent_sessions.py and prints, per
scenario, the requests the upstream received, those over the context budget, and
those breaking one of the API's rules (a call without its result or the reverse,
a reasoning item apart from its item, a changed thinking block, more than four
``cache_control`` breakpoints, the block inside a tool result).

    PYTHONPATH=. python docs/evaluation/agent_sessions.py
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

import anthropic
import openai

from memory_core.assembly import budget
from tests.conftest import TEST_KEY, start_proxy
from tests.fake_anthropic import AReply, text, thinking, tool_use
from tests.fake_responses import RReply
from tests.fake_upstream import FakeUpstream, Reply
from tests.test_agent_sessions import (
    _SIGNED,
    SIG,
    _anthropic_tokens,
    _marked,
    _paste,
    _responses_tokens,
    _signed_key,
    anthropic_problems,
    chat_problems,
    responses_problems,
)

WINDOW = ["m-small*=6144"]


class Tally:
    def __init__(self, name: str, limit: int) -> None:
        self.name, self.limit = name, limit
        self.requests = self.over = self.broken = self.largest = self.seen = 0

    def add(self, tokens: int, problems: list[str]) -> None:
        self.requests += 1
        self.over += tokens > self.limit
        self.broken += bool(problems)
        self.largest = max(self.largest, tokens)

    def row(self) -> str:
        return (f"{self.name:<34} {self.requests:>8} {self.over:>11} {self.broken:>12}"
                f" {self.largest:>8,} {self.limit:>7,}")


async def claude_code(up: FakeUpstream, proxy: Any, t: Tally, loop: bool) -> None:
    """60 steps (a user message per step) or, ``loop``, one task and 30 rounds."""
    c = anthropic.AsyncAnthropic(base_url=proxy.root, api_key=TEST_KEY, max_retries=0)
    tools = [{"name": "Bash", "description": "Run", "input_schema": {"type": "object"}}]
    h: list[dict[str, Any]] = [{"role": "user", "content": "Fix the tests. Tag v7.3.1."}]
    for i in range(30):
        if i % 7 == 3 and not loop:  # a hidden memory round first
            hidden = thinking(f"Look up {i}.", SIG + f"m{i}")
            _SIGNED[_signed_key(hidden)] = hidden  # the model's own: the checks allow it
            up.anthropic_replies.append(AReply(content=[
                hidden, tool_use(f"m{i}", "memory_grep", {"query": "tag"})]))
        up.anthropic_replies.append(AReply(content=[
            thinking(f"Step {i}.", SIG + str(i)), text("On it."),
            tool_use(f"t{i}a", "Bash", {"command": f"cat {i}"}),
            tool_use(f"t{i}b", "Bash", {"command": f"pytest {i}"})]))
        rounds = [AReply(content=[{"type": "redacted_thinking", "data": f"R{i}"},
                                  text(f"Step {i} done.")])] if not loop else []
        for reply in [None, *rounds]:
            if reply is not None:
                up.anthropic_replies.append(reply)
            msgs = _marked(h)
            m = await c.messages.create(model="m-small-1", max_tokens=512, tools=tools,
                                        thinking={"type": "enabled", "budget_tokens": 256},
                                        messages=msgs)
            for r in up.requests[t.seen:]:
                if r["path"] == "/v1/messages":
                    t.add(_anthropic_tokens(r["json"]), anthropic_problems(r["json"], msgs))
            t.seen = len(up.requests)
            h.append({"role": "assistant", "content": [b.to_dict() for b in m.content]})
            if reply is None:
                h.append({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": f"t{i}a", "content": "ok"},
                    {"type": "tool_result", "tool_use_id": f"t{i}b",
                     "content": _paste(i, 30 if not loop else 8)},
                    *([{"type": "text", "text": "<system-reminder>todo</system-reminder>"}]
                      if not loop else [])]})
        if not loop:
            h.append({"role": "user", "content": f"Next, step {i + 1}."})


async def chat_loop(up: FakeUpstream, proxy: Any, t: Tally) -> None:
    c = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    msgs: list[Any] = [{"role": "user", "content": "Migrate all modules."}]
    for i in range(30):
        up.push(Reply(content=None, tool_calls=[
            {"id": f"c{i}", "name": "shell", "arguments": "{}"}]))
        r = await c.chat.completions.create(model="m-small-1", max_tokens=512, messages=msgs)
        body = up.chat_requests[-1]["json"]
        t.add(budget.messages_tokens(body["messages"]) + budget.tools_tokens(body.get("tools")),
              chat_problems(body))
        msgs += [r.choices[0].message.model_dump(exclude_none=True),
                 {"role": "tool", "tool_call_id": f"c{i}", "content": _paste(i, 12)}]


async def responses_loop(up: FakeUpstream, proxy: Any, t: Tally) -> None:
    c = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    items: list[Any] = [{"role": "user", "content": "Migrate all modules."}]
    for i in range(30):
        up.push_response(RReply(text=None, reasoning=f"E{i}", calls=[
            {"call_id": f"f{i}", "name": "shell", "arguments": "{}"}]))
        r = await c.responses.create(model="m-small-1", max_output_tokens=512, input=items,
                                     store=False, include=["reasoning.encrypted_content"])
        body = up.responses_requests[-1]["json"]
        t.add(_responses_tokens(body), responses_problems(body, items))
        items += [o.model_dump(exclude_none=True) for o in r.output]
        items.append({"type": "function_call_output", "call_id": f"f{i}",
                      "output": _paste(i, 12)})


async def big_result(up: FakeUpstream, proxy: Any, t: Tally) -> None:
    """One tool result of about 7,500 tokens in the newest turn, once per API."""
    big = "\n".join(_paste(k) for k in range(12))
    ac = anthropic.AsyncAnthropic(base_url=proxy.root, api_key=TEST_KEY, max_retries=0)
    h = [{"role": "user", "content": "Build it."},
         {"role": "assistant", "content": [tool_use("tb", "Bash", {"command": "make"})]},
         {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "tb",
                                       "content": big}]}]
    await ac.messages.create(model="m-small-1", max_tokens=512, messages=h)
    body = up.requests[-1]["json"]
    t.add(_anthropic_tokens(body), anthropic_problems(body, h))
    cc = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    msgs = [{"role": "user", "content": "Build it."},
            {"role": "assistant", "content": None, "tool_calls": [
                {"id": "cb", "type": "function", "function": {"name": "sh", "arguments": "{}"}}]},
            {"role": "tool", "tool_call_id": "cb", "content": big}]
    await cc.chat.completions.create(model="m-small-1", max_tokens=512, messages=msgs)
    body = up.chat_requests[-1]["json"]
    t.add(budget.messages_tokens(body["messages"]), chat_problems(body))
    items = [{"role": "user", "content": "Build it."},
             {"type": "function_call", "call_id": "fb", "name": "sh", "arguments": "{}"},
             {"type": "function_call_output", "call_id": "fb", "output": big}]
    await cc.responses.create(model="m-small-1", max_output_tokens=512, input=items)
    body = up.responses_requests[-1]["json"]
    t.add(_responses_tokens(body), responses_problems(body, items))


async def main() -> None:
    print(f"{'scenario (6k window)':<34} {'requests':>8} {'over budget':>11}"
          f" {'broken rule':>12} {'largest':>8} {'budget':>7}")
    scenarios = [("Messages: 30 steps, memory rounds",
                  lambda u, p, t: claude_code(u, p, t, False)),
                 ("Messages: one task, 30 rounds", lambda u, p, t: claude_code(u, p, t, True)),
                 ("Chat: one task, 30 rounds", chat_loop),
                 ("Responses: one task, 30 rounds", responses_loop),
                 ("one 7.5k-token tool result x3 APIs", big_result)]
    for name, run in scenarios:
        up = FakeUpstream()
        await up.start()
        with tempfile.TemporaryDirectory() as tmp:
            proxy = await start_proxy(up.base_url, Path(tmp), context={"model_windows": WINDOW},
                                      tools={"offer": "always"})
            limit = budget.request_budget({"model": "m-small-1", "max_tokens": 512},
                                          proxy.engine.config.context).input_tokens
            t = Tally(name, limit)
            try:
                await run(up, proxy, t)
            finally:
                await proxy.close()
                await up.stop()
            print(t.row(), flush=True)


if __name__ == "__main__":
    asyncio.run(main())
