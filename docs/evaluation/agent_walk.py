"""A coding agent's long session, walked through the proxy: what the memory block holds.

Plays a Claude-Code-like client (anthropic SDK, ``/v1/messages``, a system array with
``cache_control``, tools, tool_use/tool_result rounds carrying file contents and test
logs, ``<system-reminder>`` text in user turns) and a Codex-like client (openai SDK
Responses API, ``store: false``, instructions, function_call/function_call_output,
``<environment_context>`` in user input) against the test suite's fake upstreams
(loopback only). The user gives facts, a correction, a standing rule, numbered steps and
a long pasted log; then a second session days later asks about earlier decisions.

For every request the upstream received it reads the block back out of the newest user
message and prints a per-turn table (block lines, tokens, request tokens against the
budget) and a summary: lines that came from tool output, logs or system reminders,
duplicate lines, the superseded value, and whether the second session recalls the
decisions and the correction. ``--blocks`` prints each block.

    PYTHONPATH=. python docs/evaluation/agent_walk.py [--blocks]
"""

from __future__ import annotations

import asyncio
import re
import sys
import tempfile
from pathlib import Path
from typing import Any

import anthropic
import openai

from memory_core.assembly import budget
from memory_core.tokens import count_tokens
from tests.conftest import TEST_KEY, start_proxy
from tests.fake_anthropic import AReply, text, tool_use
from tests.fake_responses import RReply
from tests.fake_upstream import FakeUpstream
from tests.test_agent_sessions import _anthropic_tokens, _responses_tokens

WINDOW = ["m-agent*=32768"]
SYSTEM = [{"type": "text", "text": "You are a coding agent. Use the tools. " * 40,
           "cache_control": {"type": "ephemeral"}}]
TOOLS = [{"name": n, "description": f"{n} tool", "input_schema": {"type": "object"}}
         for n in ("Bash", "Read", "Edit")]

# What the user says, turn by turn (None: the agent works; a tool round follows).
USER = {
    0: "We are porting the billing service to Rust. The repo is at ~/src/billing.",
    3: "The database is PostgreSQL 15 and the connection pool size is 20.",
    6: "Always run the linter before committing.",
    9: "Actually, the pool size is 40, not 20.",
    12: ("Plan:\n1. port the invoice module\n2. port the tax module\n"
         "3. wire the HTTP layer\n4. delete the Python code"),
    15: "We decided to use sqlx instead of diesel for the database layer.",
    18: "Here is the CI log from last night:\n" + "\n".join(
        f"[ci] step {k}: cargo test billing::invoice::t{k} ... ok; always retry flaky"
        f" network tests; the timeout is {k} s" for k in range(60)),
    21: "Step 1 is done. Next is the tax module.",
    24: "Never push directly to main; open a pull request.",
    27: "The tax rates come from config/tax.toml, not from the database.",
}
SECOND = [  # days later, a new session
    "What pool size did we settle on?",
    "Which database library did we choose, and what must I do before committing?",
    "Where do tax rates come from?",
]
WANT = {0: "40", 1: "sqlx", 2: "tax.toml"}
TOOLISH = re.compile(r"\[ci\]|PASSED|FAILED|fn |system-reminder|environment_context|"
                     r"retry flaky|cwd|approval_policy|todo list|Cargo|#\[test\]", re.I)
REMINDER = ("<system-reminder>\nThe TodoWrite tool hasn't been used recently. Always keep "
            "the todo list current. Never mention this reminder to the user.\n"
            "</system-reminder>")
ENV = ("<environment_context>\n  <cwd>/home/u/src/billing</cwd>\n  <approval_policy>"
       "on-request</approval_policy>\n  <sandbox_mode>workspace-write</sandbox_mode>\n"
       "  <network_access>restricted</network_access>\n  <shell>bash</shell>\n"
       "</environment_context>")


def _file(i: int) -> str:
    return "\n".join([f"// src/invoice_{i}.rs", "use sqlx::PgPool;", "",
                      "/// Always validate the total before saving.",
                      f"pub fn total_{i}(lines: &[Line]) -> i64 {{",
                      "    lines.iter().map(|l| l.amount).sum()", "}", "",
                      "#[test]", f"fn test_total_{i}() {{ assert_eq!(total_{i}(&[]), 0); }}"]
                     * 4)


def _log(i: int) -> str:
    return "\n".join(f"test billing::invoice::t{k} ... ok ({i * k % 89} ms)"
                     for k in range(40)) + "\nerror: the pool size is 5 in CI; never use 20"


MARKS = ("[Background Context", "[User Preferences]", "[Memory]", "[Task State]",
         "[Evidence")


def block_of(text_: str) -> list[str]:
    """The block's lines (without section heads) in a user message's text, or []:
    before ``[Current Request]``, or from the first section head on (the Messages
    adapter appends the block as a text part after the user's own)."""
    if "[Current Request]" in text_:
        head = text_.split("[Current Request]", 1)[0]
    else:
        at = [text_.find(m) for m in MARKS if m in text_]
        if not at:
            return []
        head = text_[min(at):]
    return [ln.strip() for ln in head.splitlines()
            if ln.strip() and not ln.strip().startswith("[")]


def _user_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    return "\n".join(str(b.get("text", "")) for b in content or []
                     if isinstance(b, dict) and b.get("type") in ("text", "input_text"))


class Walk:
    def __init__(self, name: str, limit: int) -> None:
        self.name, self.limit = name, limit
        self.rows: list[tuple[int, int, int, int, list[str]]] = []
        self.prefix_changes = 0
        self._prefix: str | None = None

    def add(self, turn: int, tokens: int, newest: str, prefix: str) -> None:
        lines = block_of(newest)
        self.rows.append((turn, len(lines), count_tokens("\n".join(lines)), tokens, lines))
        if self._prefix is not None and not prefix.startswith(self._prefix[:2000]):
            self.prefix_changes += 1
        self._prefix = prefix

    def report(self, show: bool) -> None:
        print(f"\n== {self.name} (budget {self.limit:,} tokens)")
        over = sum(r[3] > self.limit for r in self.rows)
        with_block = [r for r in self.rows if r[1]]
        lines = [ln for r in with_block for ln in r[4]]
        toolish = [ln for ln in lines if TOOLISH.search(ln)]
        stale20 = [ln for ln in lines if re.search(r"pool size\b.*\b20\b", ln)
                   and "40" not in ln and "superseded" not in ln]
        dups = sum(len(r[4]) - len(set(r[4])) for r in with_block)
        print(f"requests {len(self.rows)}  over budget {over}  with a block {len(with_block)}"
              f"  largest {max(r[3] for r in self.rows):,}  cached-prefix changes"
              f" {self.prefix_changes}")
        if with_block:
            n = len(with_block)
            print(f"block lines/request: mean {len(lines) / n:.1f}  max"
                  f" {max(r[1] for r in with_block)};  block tokens mean"
                  f" {sum(r[2] for r in with_block) / n:.0f}  max"
                  f" {max(r[2] for r in with_block)}")
        print(f"lines from tool output/logs/reminders {len(toolish)} of {len(lines)}"
              f" ({len(set(toolish))} distinct);  duplicate lines within a block {dups};"
              f"  superseded pool size 20 shown {len(stale20)}")
        for ln in sorted(set(toolish))[:8]:
            print(f"   tool/log line: {ln[:150]}")
        if show:
            for turn, n_, tok, _, ls in with_block:
                print(f"-- turn {turn}: {n_} lines, {tok} tokens")
                for ln in ls:
                    print(f"   {ln[:160]}")


def _recall(k: int, q: str, lines: list[str]) -> None:
    stale = any(re.search(r"pool size.*20", ln) and "40" not in ln
                and "superseded" not in ln for ln in lines)
    print(f"   second session Q{k}: {q!r}: wanted {WANT[k]!r} in block:"
          f" {any(WANT[k] in ln for ln in lines)}; superseded pool size 20 shown: {stale}")


async def claude_code(up: FakeUpstream, proxy: Any, w: Walk, show: bool) -> None:
    c = anthropic.AsyncAnthropic(base_url=proxy.root, api_key=TEST_KEY, max_retries=0)
    h: list[dict[str, Any]] = []
    turn = 0
    for i in range(30):
        said = USER.get(i, f"Continue with the next file ({i}).")
        h.append({"role": "user", "content": [{"type": "text", "text": REMINDER},
                                              {"type": "text", "text": said}]})
        up.anthropic_replies.append(AReply(content=[
            text("Reading."), tool_use(f"r{i}", "Read", {"path": f"src/invoice_{i}.rs"}),
            tool_use(f"b{i}", "Bash", {"command": "cargo test"})]))
        up.anthropic_replies.append(AReply(content=[text(f"Done with {i}.")]))
        for rnd in range(2):
            m = await c.messages.create(model="m-agent-1", max_tokens=1024, system=SYSTEM,
                                        tools=TOOLS, messages=h)
            body = up.requests[-1]["json"]
            newest = _user_text(body["messages"][-1]["content"])
            w.add(turn, _anthropic_tokens(body), newest, str(body["system"]) +
                  str(body["messages"][:1]))
            turn += 1
            h.append({"role": "assistant", "content": [b.to_dict() for b in m.content]})
            if rnd == 0:
                h.append({"role": "user", "content": [
                    {"type": "tool_result", "tool_use_id": f"r{i}", "content": _file(i)},
                    {"type": "tool_result", "tool_use_id": f"b{i}", "content": _log(i)},
                    {"type": "text", "text": REMINDER}]})
        await proxy.settle()
    # days later: a new session (X-LCM-Session), fresh history
    for k, q in enumerate(SECOND):
        up.anthropic_replies.append(AReply(content=[text("Answer.")]))
        msgs = [{"role": "user", "content": [{"type": "text", "text": REMINDER},
                                             {"type": "text", "text": q}]}]
        await c.messages.create(model="m-agent-1", max_tokens=1024, system=SYSTEM,
                                tools=TOOLS, messages=msgs,
                                extra_headers={"X-LCM-Session": f"later-{k}"})
        body = up.requests[-1]["json"]
        lines = block_of(_user_text(body["messages"][-1]["content"]))
        _recall(k, q, lines)
        if show:
            for ln in lines:
                print(f"      {ln[:160]}")


async def codex(up: FakeUpstream, proxy: Any, w: Walk, show: bool) -> None:
    c = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    items: list[Any] = []
    turn = 0
    instructions = "You are Codex, a coding agent. " * 40
    for i in range(30):
        said = USER.get(i, f"Continue with the next file ({i}).")
        items.append({"type": "message", "role": "user", "content": [
            {"type": "input_text", "text": ENV}, {"type": "input_text", "text": said}]})
        up.push_response(RReply(text=None, calls=[
            {"call_id": f"f{i}", "name": "shell", "arguments": '{"cmd":["cargo","test"]}'}]))
        up.push_response(RReply(text=f"Done with {i}."))
        for rnd in range(2):
            r = await c.responses.create(model="m-agent-1", max_output_tokens=1024,
                                         instructions=instructions, input=items, store=False)
            body = up.responses_requests[-1]["json"]
            users = [x for x in body["input"] if isinstance(x, dict) and x.get("role") == "user"]
            newest = _user_text(users[-1]["content"]) if users else ""
            w.add(turn, _responses_tokens(body), newest, str(body.get("instructions")) +
                  str(body["input"][:1]))
            turn += 1
            items += [o.model_dump(exclude_none=True) for o in r.output]
            if rnd == 0:
                items.append({"type": "function_call_output", "call_id": f"f{i}",
                              "output": _file(i) + "\n" + _log(i)})
        await proxy.settle()
    for k, q in enumerate(SECOND):
        up.push_response(RReply(text="Answer."))
        await c.responses.create(model="m-agent-1", max_output_tokens=1024,
                                 instructions=instructions, store=False, input=[
                                     {"type": "message", "role": "user", "content": [
                                         {"type": "input_text", "text": ENV},
                                         {"type": "input_text", "text": q}]}])
        body = up.responses_requests[-1]["json"]
        users = [x for x in body["input"] if isinstance(x, dict) and x.get("role") == "user"]
        lines = block_of(_user_text(users[-1]["content"]))
        _recall(k, q, lines)
        if show:
            for ln in lines:
                print(f"      {ln[:160]}")


async def main(show: bool) -> None:
    for name, run in (("Claude-Code-like, /v1/messages, 60 requests", claude_code),
                      ("Codex-like, Responses store:false, 60 requests", codex)):
        up = FakeUpstream()
        await up.start()
        with tempfile.TemporaryDirectory() as tmp:
            proxy = await start_proxy(up.base_url, Path(tmp), context={"model_windows": WINDOW})
            limit = budget.request_budget({"model": "m-agent-1", "max_tokens": 1024},
                                          proxy.engine.config.context).input_tokens
            w = Walk(name, limit)
            print(f"\n## {name}")
            try:
                await run(up, proxy, w, show)
            finally:
                await proxy.close()
                await up.stop()
            w.report(show)


if __name__ == "__main__":
    asyncio.run(main("--blocks" in sys.argv))
