"""The injection block, end to end: the real SDK → proxy → fake upstream.

What the upstream received is read from the fake's request log; the client's own
messages are checked to be unchanged.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import openai
import pytest
from click.testing import CliRunner
from openai.types.chat import ChatCompletion

from memory_core.tokens import count_tokens
from proxy.appkeys import METRICS
from proxy.cli import main
from tests.conftest import RunningProxy, start_proxy, store_sql
from tests.fake_upstream import FakeUpstream, Reply


class Agent:
    """An agent that resends its whole history on every call, as SDK users do."""

    def __init__(self, proxy: RunningProxy, upstream: FakeUpstream, *, role: str = "default",
                 session: str | None = None, system: str = "You are a helpful agent.") -> None:
        headers = {"X-LCM-Role": role}
        if session:
            headers["X-LCM-Session"] = session
        self.client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-agent-0123456789abc",
                                         default_headers=headers, max_retries=0)
        self.upstream = upstream
        self.messages: list[dict[str, Any]] = [{"role": "system", "content": system}]

    async def say(self, text: str, *, fast: bool = False) -> str:
        """Send one user turn. ``fast`` uses the SDK's HTTP layer directly
        (``client.post``), skipping its per-message parameter transform, which costs
        ~0.7 ms a message per call and dominates long conversations."""
        self.messages.append({"role": "user", "content": text})
        sent = [dict(m) for m in self.messages]
        if fast:
            r = await self.client.post("/chat/completions", cast_to=ChatCompletion,
                                       body={"model": "m", "messages": self.messages})
        else:
            r = await self.client.chat.completions.create(model="m", messages=self.messages)
        assert self.messages == sent, "the client's messages must not change"
        reply = r.choices[0].message.content or ""
        self.messages.append({"role": "assistant", "content": reply})
        return reply

    def upstream_last_user(self) -> str:
        msgs = self.upstream.chat_requests[-1]["json"]["messages"]
        return msgs[-1]["content"]


def block_of(text: str) -> str:
    head, sep, _ = text.partition("[Current Request]")
    return head if sep else ""


async def test_fact_from_turn_2_is_in_the_block_at_turn_200(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    agent = Agent(proxy, upstream)
    await agent.say("Hi, let's plan the data migration.")
    await agent.say("The staging database runs on port 5433 when the VPN is up.")
    for i in range(197):
        await agent.say(f"Step {i}: review the changelog entry number {i} and summarise it.",
                        fast=True)
    await agent.say("Which port does the staging database use?")
    block = block_of(agent.upstream_last_user())
    assert "5433" in block and "staging database" in block
    assert agent.upstream_last_user().endswith("Which port does the staging database use?")
    await proxy.settle()
    rows = proxy.engine.export()["threads"][0]["messages"]
    assert len(rows) == 1 + 2 * 200  # the system prompt, every user turn and reply, once


async def test_numbers_and_decisions_stand_in_the_block_for_a_paraphrased_question(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """A question that shares no word with the fact still gets it once the fact has
    left the upstream's view: stated numbers, corrections, preferences and explicit
    decisions are standing items. Plain remarks, questions and next-step chatter
    without a match are not."""
    proxy = await _compacting_proxy(upstream, tmp_path)
    try:
        agent = Agent(proxy, upstream)
        upstream.push(*[Reply(content="noted") for _ in range(20)])  # no echoed blocks
        await agent.say("Hello, a new project.")  # the protected head turn
        await agent.say("While a sale is running, the catalogue cache TTL is 100 seconds.")
        await agent.say("We decided to deploy the frontend on Render.")
        await agent.say("The login form looks a bit cluttered.")
        await agent.say("Why is the settings page so slow?")
        await _bury(agent, proxy)
        await agent.say("During a promotion, how quickly do shop listings get refreshed?")
        block = block_of(agent.upstream_last_user())
        assert "100 seconds" in block and "Render" in block
        assert "cluttered" not in block and "settings page so slow" not in block
        await proxy.settle()
        log = proxy.engine.last_assembly()
        assert log is not None
        reasons = {e["reason"] for e in log["data"]["included"] if e["section"] == "items"}
        assert any(r.startswith("standing fact") for r in reasons), reasons
    finally:
        await proxy.runner.cleanup()


async def test_a_fact_in_view_is_not_repeated_but_a_rule_is(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    """While the upstream sees a fact's, a decision's or a proposal's own message
    verbatim, the block does not repeat it (the explain log says why); a standing
    rule, an unresolved conflict, and an in-view statement newer than a related item
    the block shows are restated."""
    agent = Agent(proxy, upstream)
    upstream.push(*[Reply(content="noted") for _ in range(2)],
                  Reply(content="I suggest we cache the product catalogue in Redis."),
                  *[Reply(content="noted") for _ in range(5)])  # no echoed blocks
    await agent.say("While a sale is running, the catalogue cache TTL is 100 seconds.")
    await agent.say("We decided to deploy the frontend on Render.")
    await agent.say("How should we cache the product catalogue?")  # the proposal
    await agent.say("We must always run the linter before committing.")
    await agent.say("The budget is 5000 USD.")
    await agent.say("The budget is 6000 USD.")  # conflicts with the line before
    await agent.say("During a promotion, how often is the product catalogue cache renewed?")
    block = block_of(agent.upstream_last_user())
    assert "100 seconds" not in block and "Render" not in block and "Redis" not in block
    assert "[constraint · msg" in block and "run the linter before committing" in block
    assert "CONFLICTS with msg" in block and "6000 USD" in block
    await proxy.settle()
    log = proxy.engine.last_assembly()
    assert log is not None
    not_repeated = {e["ref"]: e for e in log["data"]["omitted"]
                    if e["reason"].startswith("not repeated: msg ")}
    # The TTL, Render, the Redis proposal (it matches this turn) and the 5000 USD
    # budget (the conflict note quotes it).
    assert len(not_repeated) == 4, log["data"]["omitted"]
    assert {e["would_have_been"].split(" (")[0] for e in not_repeated.values()} == {
        "standing fact", "standing decision", "shares a keyword with this turn"}
    explain = CliRunner().invoke(main, ["memory", "explain", "--data-dir",
                                        proxy.settings.storage.data_dir])
    assert explain.exit_code == 0 and "not repeated: msg" in explain.output
    in_chat = await agent.say("/memory explain")  # one summary line, not one per item
    assert "in view  4 items not repeated" in in_chat and "not repeated: msg" not in in_chat

    # A newer statement in view that updates a rule the block restates is shown too.
    await agent.say("We should never deploy on Fridays.")
    await agent.say("We decided that deploying on Fridays is fine.")
    await agent.say("Can I ship the release today?")
    block = block_of(agent.upstream_last_user())
    assert "never deploy on Fridays" in block and "deploying on Fridays is fine" in block
    await proxy.settle()
    log = proxy.engine.last_assembly()
    assert log is not None
    assert any(e["reason"].startswith("in view, but newer than item")
               for e in log["data"]["included"]), log["data"]["included"]

    # A new conversation of the same persona does not see those messages: it gets the
    # long-term ones; the assistant's proposal stays in its own conversation
    # (docs/scopes.md).
    fresh = Agent(proxy, upstream)
    await fresh.say("During a promotion, how quickly do shop listings get refreshed, and"
                    " how should the product catalogue be cached?")
    block = block_of(fresh.upstream_last_user())
    assert "100 seconds" in block and "Render" in block and "Redis" not in block


async def test_in_view_tokens_bounds_what_counts_as_in_view(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """Only the newest ``injection.in_view_tokens`` of the verbatim history count as in
    view: a fact said further back is repeated (a long uncompacted window), and 0
    repeats everything."""
    for window, repeated in ((60, True), (0, True), (8000, False)):
        proxy = await start_proxy(upstream.base_url, tmp_path / f"d{window}",
                                  injection={"in_view_tokens": window})
        try:
            agent = Agent(proxy, upstream)
            upstream.push(*[Reply(content="noted") for _ in range(6)])
            await agent.say("While a sale is running, the catalogue cache TTL is 100 seconds.")
            for i in range(4):
                await agent.say(f"Step {i}: review the changelog entry number {i} and note"
                                " anything unusual in the release notes draft.")
            await agent.say("During a promotion, how quickly do shop listings refresh?")
            assert ("100 seconds" in block_of(agent.upstream_last_user())) is repeated, window
        finally:
            await proxy.runner.cleanup()


async def test_correction_supersedes_and_old_value_only_as_superseded(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    agent = Agent(proxy, upstream)
    await agent.say("The API timeout is 30 s when offline.")
    await agent.say("Actually, the API timeout is 45 s when offline.")
    await agent.say("Correction: the API timeout is 60 s when offline.")
    # A new conversation of the persona: the statements are no longer in view.
    asker = Agent(proxy, upstream)
    await asker.say("Remind me, what is the API timeout when offline?")
    block = block_of(asker.upstream_last_user())
    current = [ln for ln in block.splitlines() if ln.startswith("- [fact · msg")
               and "timeout" in ln]
    assert len(current) == 1 and "60 s" in current[0].split("(corrects")[0]
    for ln in block.splitlines():
        if "30 s" in ln or "45 s" in ln:
            assert "superseded" in ln  # shown only as superseded, never as current
    await proxy.settle()
    items = proxy.engine.search_memory("API timeout", include_messages=False)
    status = {h["value"]: h["status"] for h in items if h["value"] is not None}
    assert status == {30.0: "superseded", 45.0: "superseded", 60.0: "active"}


async def test_preference_set_by_cli_appears_in_next_request(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    agent = Agent(proxy, upstream, role="coder")
    await agent.say("hello")
    result = CliRunner().invoke(main, [
        "memory", "prefs", "set", "--data-dir", proxy.settings.storage.data_dir,
        "--role", "coder", "--key", "code_style", "--title", "Code style",
        "--content", "Black formatting, 100 columns, type hints everywhere"])
    assert result.exit_code == 0, result.output
    await agent.say("write the parser")
    block = block_of(agent.upstream_last_user())
    assert "[User Preferences]" in block
    assert "Code style: Black formatting, 100 columns, type hints everywhere" in block


async def test_bootstrap_then_regular_then_idle_bootstrap(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    agent = Agent(proxy, upstream)
    await agent.say("Goal: ship the importer by Friday")
    first = block_of(agent.upstream_last_user())
    assert first.startswith("[Background Context: Sync Guidelines]")
    assert "[User Preferences]" in first
    await agent.say("TODO: write the CSV reader")
    second = block_of(agent.upstream_last_user())
    assert "Sync Guidelines" not in second
    assert "Goal: ship the importer by Friday" in second  # task state, regular turn
    await proxy.settle()
    store_sql(proxy.engine, "UPDATE threads SET updated_at = ?", (time.time() - 7200,))
    await agent.say("where were we?")
    third = block_of(agent.upstream_last_user())
    assert third.startswith("[Background Context: Sync Guidelines]")
    assert "TODO: write the CSV reader" in third
    await proxy.settle()  # the explain log is queued after the send, not awaited
    explain = CliRunner().invoke(main, ["memory", "explain", "--data-dir",
                                        proxy.settings.storage.data_dir])
    assert explain.exit_code == 0 and "trigger:      bootstrap" in explain.output


async def test_a_task_line_is_not_repeated_on_the_turn_that_states_it(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    """A Goal/TODO line said in the newest message follows as the current request, so
    that turn's [Task State] leaves it out (as its items are): the block never repeats
    the request word for word. Older open lines stay, and the new one shows from the
    next turn on."""
    agent = Agent(proxy, upstream)
    await agent.say("Goal: ship the importer by Friday")
    first = block_of(agent.upstream_last_user())
    assert "Goal: ship the importer" not in first
    await agent.say("TODO: write the CSV reader")
    second = block_of(agent.upstream_last_user())
    assert "Goal: ship the importer by Friday" in second
    assert "CSV reader" not in second
    await agent.say("and the tests?")
    third = block_of(agent.upstream_last_user())
    assert "Goal: ship the importer by Friday" in third
    assert "TODO: write the CSV reader" in third


async def test_roles_never_see_each_other(proxy: RunningProxy, upstream: FakeUpstream) -> None:
    coder = Agent(proxy, upstream, role="coder")
    writer = Agent(proxy, upstream, role="writer")
    await coder.say("We must always use the internal mirror pypi.corp.example for packages.")
    await coder.say("The build server password rotates every 14 days.")
    CliRunner().invoke(main, ["memory", "prefs", "set", "--data-dir",
                              proxy.settings.storage.data_dir, "--role", "coder", "--key",
                              "lang", "--title", "Language", "--content", "Python 3.11"])
    await writer.say("What mirror and password rotation do we use for packages?")
    block = block_of(writer.upstream_last_user())
    assert "pypi.corp.example" not in block and "14 days" not in block
    assert "Python 3.11" not in block
    # The coder persona's next conversation has it (the first one still sees it).
    later = Agent(proxy, upstream, role="coder")
    await later.say("What mirror do we use for packages?")
    assert "pypi.corp.example" in block_of(later.upstream_last_user())


@pytest.mark.parametrize("budget", [200, 20000])
async def test_block_respects_budget(upstream: FakeUpstream, tmp_path: Path,
                                     budget: int) -> None:
    proxy = await start_proxy(upstream.base_url, tmp_path / "d",
                              injection={"soft_budget_tokens": budget, "max_items": 500,
                                         "pinned_items": 200})
    try:
        agent = Agent(proxy, upstream)
        facts = " ".join(
            f"We must always keep service {i} below {i + 10} ms latency in region eu-{i}."
            for i in range(150)
        )
        await agent.say(facts)
        await agent.say("What latency must each service keep in its region?")
        block = block_of(agent.upstream_last_user())
        tokens = count_tokens(block + "[Current Request]")
        assert tokens <= budget
        if budget == 200:
            assert tokens > 100  # filled, not empty
        else:
            assert block.count("\n- [constraint · msg ") >= 100  # a big budget shows many
        await proxy.settle()
        last = proxy.engine.last_assembly()
        assert last is not None and last["used_tokens"] <= budget
        if budget == 200:
            assert any(e["reason"].startswith("over budget") for e in last["data"]["omitted"]
                       ), "a tiny budget must omit items, and say so"
    finally:
        await proxy.runner.cleanup()


async def test_earlier_turns_are_byte_identical_across_requests(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    agent = Agent(proxy, upstream)
    await agent.say("We decided to use PostgreSQL 16 for the ledger.")
    for i in range(6):
        await agent.say(f"Next step {i}: what about the PostgreSQL ledger indexes?")
    raws = [r["raw"] for r in upstream.chat_requests]
    for prev, cur, prev_req in zip(raws, raws[1:], upstream.chat_requests, strict=False):
        # everything before the previous request's newest user message is unchanged
        prev_msgs = prev_req["json"]["messages"]
        marker = prev.rfind(b'{"role":"user"')
        assert marker > 0 and len(prev_msgs) >= 2
        assert cur[:marker] == prev[:marker]


async def _compacting_proxy(upstream: FakeUpstream, tmp_path: Path) -> RunningProxy:
    """A proxy that compacts after a few turns (tools off): earlier turns soon leave
    the upstream's view and can only come back as evidence."""
    return await start_proxy(upstream.base_url, tmp_path / "d", compaction={
        "min_tokens": 500, "min_turns": 2, "tail_turns": 2}, tools={"enabled": False})


async def _bury(agent: Agent, proxy: RunningProxy, turns: int = 8) -> None:
    """Say ``turns`` long filler turns, settling after each, so compaction runs."""
    for i in range(turns):
        await agent.say(f"filler {i}: " + "routine status words " * 30)
        await proxy.settle()


async def test_evidence_quotes_only_this_threads_compacted_messages(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    proxy = await _compacting_proxy(upstream, tmp_path)
    try:
        other = Agent(proxy, upstream, session="other")
        await other.say("The zeppelin hangar code is ZX-41 for the other team.")
        agent = Agent(proxy, upstream, session="mine")
        upstream.push(*[Reply(content="noted") for _ in range(10)])  # no echoed blocks
        await agent.say("Hello, a new project.")  # the protected head turn
        await agent.say("Remember the zeppelin hangar layout: bay seven holds the blimp.")
        await _bury(agent, proxy)
        await agent.say("What does the zeppelin hangar layout say about bay seven?")
        sent = upstream.chat_requests[-1]["json"]["messages"]
        assert any(isinstance(m.get("content"), str) and
                   m["content"].startswith("[Conversation summary") for m in sent)
        block = block_of(agent.upstream_last_user())
        evidence = block.partition("[Evidence")[2]
        assert "bay seven holds the blimp" in evidence
        # Another thread's raw messages are never quoted (its extracted items, which
        # are role-scoped memories, may appear under [Memory]).
        assert "ZX-41" not in evidence
    finally:
        await proxy.runner.cleanup()


async def test_evidence_quotes_a_matching_message_once_and_never_this_turns_words(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    proxy = await _compacting_proxy(upstream, tmp_path)
    try:
        agent = Agent(proxy, upstream, session="mine")
        upstream.push(*[Reply(content="noted") for _ in range(14)])  # no echoed blocks
        question = "What does the zeppelin hangar layout say about bay seven?"
        await agent.say("Hello, a new project.")  # the protected head turn
        await agent.say("Zeppelin hangar layout: bay seven holds the blimp.")
        await agent.say("The bay doors are painted grey this week.")  # one shared word
        await agent.say(question)  # asked once already, early on
        await agent.say("Zeppelin hangar layout: bay seven holds the blimp.")
        await _bury(agent, proxy)
        await agent.say(question)
        evidence = block_of(agent.upstream_last_user()).partition("[Evidence")[2]
        assert evidence.count("bay seven holds the blimp") == 1
        assert "say about bay seven" not in evidence
        assert "painted grey" not in evidence  # shares 1 of the turn's 6 keywords
    finally:
        await proxy.runner.cleanup()


async def test_a_matching_item_of_a_compacted_message_is_quoted_whole(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """The item extracted from a compacted message is one sentence of it; the block
    quotes the message (the date, the rest of the turn) in the item's place."""
    proxy = await _compacting_proxy(upstream, tmp_path)
    try:
        agent = Agent(proxy, upstream, session="mine")
        upstream.push(*[Reply(content="noted") for _ in range(14)])
        await agent.say("Hello, a new project.")
        said = ("The Falcon firmware ships from the Tromsø plant. The first batch leaves"
                " on 14 March with 480 units for the coastal stations.")
        await agent.say(said)
        await _bury(agent, proxy)
        await agent.say("Where do we ship the Falcon firmware from?")
        block = block_of(agent.upstream_last_user())
        memory, _sep, evidence = block.partition("[Evidence")
        assert said in evidence  # whole, with the date and the count
        # The matching item is not repeated (a standing one, the next sentence, may be).
        assert "ships from the Tromsø plant" not in memory
        assert evidence.count("Falcon firmware ships") == 1
    finally:
        await proxy.runner.cleanup()


async def test_a_long_turn_can_quote_the_short_message_that_explains_it(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """The evidence floor counts against the shorter side: a pasted traceback has many
    keywords, and the short earlier message about the same failure shares only a few
    of them, yet all of its own."""
    proxy = await _compacting_proxy(upstream, tmp_path)
    try:
        agent = Agent(proxy, upstream, session="mine")
        upstream.push(*[Reply(content="noted") for _ in range(14)])
        await agent.say("Hello, a new project.")
        await agent.say("The cleanup job hit a ReadTimeout from delete_objects in cleanup.py.")
        await _bury(agent, proxy)
        frames = "\n".join(
            f'  File "/srv/app/module_{i}.py", line {40 + i}, in handler_{i}\n'
            f"    result = stage_{i}.run(payload, attempt={i})" for i in range(9))
        await agent.say("The staging deploy failed again, why? Traceback (most recent call"
                        f" last):\n{frames}\nbotocore.exceptions.ReadTimeout: delete_objects"
                        " in cleanup.py timed out")
        evidence = block_of(agent.upstream_last_user()).partition("[Evidence")[2]
        assert "ReadTimeout from delete_objects in cleanup.py" in evidence
    finally:
        await proxy.runner.cleanup()


def test_standing_weight_orders_what_long_sessions_lose_first() -> None:
    """Pure ranking rule: numbers, corrections, preferences, explicit rules and
    decisions stand; questions, proposals, plain remarks never do; a one-off
    instruction filed as a constraint never stands."""
    from memory_core.assembly.block import standing_weight

    def row(kind: str, text: str, *, value: float | None = None, supersedes: int | None = None,
            condition: str | None = None, evidence: str = "user") -> dict[str, Any]:
        return {"kind": kind, "text": text, "value": value, "supersedes": supersedes,
                "condition": condition, "evidence": evidence}

    number = row("fact", "The cache TTL is 100 seconds.", value=100.0, condition="during a sale")
    correction = row("fact", "Correction: retries are 7.", value=7.0, supersedes=3)
    rule = row("constraint", "Never log request bodies at info level.")
    chore = row("constraint", "Check that cli/main.py still passes the type checker.")
    decided = row("decision", "We decided to deploy the frontend on Render.")
    next_step = row("decision", "Let's keep going with core/retry.py.")
    zh_rule = row("constraint", "上传文件必须小于80MB。")
    zh_always = row("constraint", "代码注释请一律用英文写。")  # 一律: "without exception"
    assert standing_weight(correction) > standing_weight(number) > standing_weight(chore)
    # A one-off request (no "always"/"from now on"/"in this project", no number) is
    # not a standing rule (issue 24, kind 9).
    assert standing_weight(rule) > standing_weight(chore) == 0.0
    assert standing_weight(row("constraint", "From now on, check the type checker.")) > 0
    # One of a series ("Run 39: …") never stands, whatever number it holds.
    labelled = row("fact", "Run 39: loss 0.41.", value=0.41)
    labelled["data"] = '{"label": "run 39"}'
    assert standing_weight(labelled) == 0.0
    assert standing_weight(decided) > standing_weight(next_step) > 0
    assert standing_weight(zh_rule) == standing_weight(rule) == standing_weight(zh_always)
    for never in (row("question", "Why is it slow?"), row("fact", "The form is cluttered."),
                  row("proposal", "We could cache it.", evidence="assistant"),
                  row("fact", "It takes 5 s.", value=5.0, evidence="assistant")):
        assert standing_weight(never) == 0.0


async def test_tool_rounds_of_a_turn_keep_the_turns_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    """The request that carries a tool result continues the same user turn: its user
    message keeps the block it had, byte for byte, so the model keeps its memory
    through the round and the turn's requests share their prefix."""
    import orjson

    # Stated in an earlier conversation, so this one's block carries it.
    await Agent(proxy, upstream).say("The staging database runs on port 5433 when the VPN"
                                     " is up.")
    agent = Agent(proxy, upstream)
    agent.messages.append({"role": "user", "content": "Check the staging port, please."})
    upstream.push(Reply(content=None, tool_calls=[
        {"id": "call_1", "name": "read_config", "arguments": "{}"}]))
    r = await agent.client.chat.completions.create(model="m", messages=agent.messages,
                                                   tools=[{"type": "function", "function": {
                                                       "name": "read_config",
                                                       "parameters": {"type": "object"}}}])
    call = r.choices[0].message.tool_calls[0]
    first = upstream.chat_requests[-1]["json"]["messages"]
    assert "5433" in block_of(first[-1]["content"])
    agent.messages.append({"role": "assistant", "content": None, "tool_calls": [
        {"id": call.id, "type": "function",
         "function": {"name": call.function.name, "arguments": call.function.arguments}}]})
    agent.messages.append({"role": "tool", "tool_call_id": call.id, "content": "port=5433"})
    r = await agent.client.chat.completions.create(model="m", messages=agent.messages)
    second = upstream.chat_requests[-1]["json"]["messages"]
    assert orjson.dumps(second[: len(first)]) == orjson.dumps(first)  # same bytes, same block
    assert r.choices[0].message.content is not None
    # A new user turn gets a fresh block; the previous user message is plain again.
    agent.messages.append({"role": "assistant", "content": r.choices[0].message.content})
    await agent.say("Thanks. Anything else?")
    third = upstream.chat_requests[-1]["json"]["messages"]
    assert third[len(first) - 1]["content"] == "Check the staging port, please."


async def test_quoted_evidence_marks_a_value_corrected_since_and_questions_are_not_memory(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """An earlier message quoted as evidence says, on the same line, that its value
    was corrected; the user's own earlier questions are never handed back as memory."""
    proxy = await _compacting_proxy(upstream, tmp_path)
    try:
        agent = Agent(proxy, upstream, session="mine")
        upstream.push(*[Reply(content="noted") for _ in range(14)])  # no echoed blocks
        await agent.say("Hello, a new project.")
        await agent.say("The staging cache TTL is 300 seconds.")
        await agent.say("Which region hosts the staging cache?")
        await _bury(agent, proxy)
        await agent.say("Correction: the staging cache TTL is 600 seconds.")
        await _bury(agent, proxy, 4)  # the correction leaves the view too
        await agent.say("Which region hosts the staging cache, and what is its TTL?")
        block = block_of(agent.upstream_last_user())
        evidence = block.partition("[Evidence")[2]
        lines = [ln for ln in evidence.splitlines() if "300 seconds" in ln]
        assert lines and all("superseded" in ln for ln in lines)
        after = block.partition("[Memory]\n")[2].splitlines()
        memory = "\n".join(ln for ln in after[:next(
            (i for i, ln in enumerate(after) if ln.startswith("[")), len(after))])
        assert "[question ·" not in memory and "600 seconds" in memory
    finally:
        await proxy.runner.cleanup()


async def test_standing_items_keep_their_places_against_many_weak_matches(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """Many items sharing a word with the question cannot push a stated number out
    of a small block: standing items are placed first, matches fill the rest."""
    proxy = await start_proxy(upstream.base_url, tmp_path / "d",
                              injection={"max_items": 5}, tools={"enabled": False})
    try:
        earlier = Agent(proxy, upstream)
        await earlier.say("Log retention is 82 days.")
        for name in ("billing", "search", "upload", "export", "login", "audit", "queue",
                     "cache", "render", "mail", "sync", "backup"):
            await earlier.say(f"The {name} service logs its period report on the dashboard.",
                              fast=True)
        # A later conversation of the persona, where none of those messages is in view.
        agent = Agent(proxy, upstream)
        await agent.say("Which dashboard shows the period report, and how long do we keep"
                        " things?")
        block = block_of(agent.upstream_last_user())
        memory = [ln for ln in block.splitlines() if ln.startswith("- [")]
        assert any("82 days" in ln for ln in memory)
        assert len(memory) <= 5
    finally:
        await proxy.runner.cleanup()


async def test_a_role_without_items_gets_its_block_while_the_index_holds_others(
        upstream: FakeUpstream, make_proxy: Any) -> None:
    """A persona with no memory item yet (its first question states nothing) asks
    while the search index already holds another persona's items: the block is
    built (tasks, search) and nothing fails open. The imputed score for items newer
    than the index read the best keyword score of an empty candidate array and
    raised, so such a request went upstream without memory."""
    proxy = await make_proxy()
    await Agent(proxy, upstream, role="ops").say("The staging database runs on port 5433.")
    await proxy.settle()
    assert proxy.engine.search.indexer.indexed_items is not None
    failed = proxy.app[METRICS].fail_open.labels("memory_path")
    before = failed._value.get()
    agent = Agent(proxy, upstream, role="newcomer")
    await agent.say("Hello there, staging database.")  # no memory item in it
    assert failed._value.get() == before
    assert "5433" not in agent.upstream_last_user()  # another persona's memory


async def test_a_fact_the_index_has_not_reached_outranks_older_similar_ones(
        upstream: FakeUpstream, make_proxy: Any) -> None:
    """Issue 27's scaled replica test: a fact stated on one turn (to the other replica,
    or under load) and asked about on the next is not in the search index yet; the
    index's scores of older facts of the same shape ranked all of them above it, and
    the near-duplicate line showed another project's code. Items newer than the index
    rank by the turn's keywords alone until it catches up."""
    proxy = await make_proxy(injection={"in_view_tokens": 0})
    for n in range(6):  # older facts of one shape, each in a session of its own
        await Agent(proxy, upstream, session=f"s{n}").say(
            f"The vault code of project pja{n:02d}k001 is A{n:02d}001Z.")
    await proxy.settle()
    indexer = proxy.engine.search.indexer
    assert indexer.indexed_items is not None
    indexer.close(timeout=30)  # the index stops here, as on a lagging replica
    agent = Agent(proxy, upstream, session="fresh")
    await agent.say("The vault code of project pja09k001 is A09001Z.")
    await agent.say("What is the vault code of project pja09k001?")
    block = block_of(agent.upstream_last_user())
    assert "A09001Z" in block, block


class _CountingLogs(FakeUpstream):
    """A fake upstream that notes, as each chat request arrives, how many explain logs
    (``assembly_logs``) the proxy's database holds."""

    def __init__(self) -> None:
        super().__init__()
        self.engine: Any = None
        self.logs_on_arrival: list[int] = []

    async def chat(self, request: Any) -> Any:
        rows = store_sql(self.engine, "SELECT COUNT(*) AS n FROM assembly_logs")
        self.logs_on_arrival.append(int(rows[0]["n"]))
        return await super().chat(request)


@pytest.mark.parametrize("tools", [True, False], ids=["tool-loop", "plain"])
async def test_the_explain_log_is_written_once_the_request_went_upstream(
        tmp_path: Path, tools: bool) -> None:
    """The block's explain log is queued once the request was sent, not while it is
    planned (issue 28: the writer woke mid-plan and took the interpreter from the
    request): when the upstream reads a request, its own log is not written yet,
    and every request still gets its log."""
    upstream = _CountingLogs()
    await upstream.start()
    proxy = await start_proxy(upstream.base_url, tmp_path / "data",
                              tools={"enabled": tools, "offer": "always"})
    upstream.engine = proxy.engine
    try:
        agent = Agent(proxy, upstream)
        await agent.say("The staging database runs on port 5433.")
        await proxy.settle()
        await agent.say("We deploy the frontend on Render.")
        await proxy.settle()
        assert upstream.logs_on_arrival == [0, 1]
        assert store_sql(proxy.engine, "SELECT COUNT(*) AS n FROM assembly_logs")[0]["n"] == 2
        assert proxy.engine.last_assembly() is not None
    finally:
        await proxy.runner.cleanup()
        await upstream.stop()


@pytest.mark.parametrize("tools", [True, False], ids=["tool-loop", "plain"])
async def test_a_streamed_request_gets_its_explain_log(tmp_path: Path, tools: bool) -> None:
    """A streamed request's block is explained like any other (``lcm-proxy memory
    explain``): the streamed tool loop opens its rounds by another path than the
    plain one, and once left the log unwritten."""
    upstream = FakeUpstream()
    await upstream.start()
    proxy = await start_proxy(upstream.base_url, tmp_path / "data",
                              tools={"enabled": tools, "offer": "always"})
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-test-stream",
                                    max_retries=0)
        for text in ("The staging database runs on port 5433.", "Where does staging run?"):
            stream = await client.chat.completions.create(
                model="m", messages=[{"role": "user", "content": text}], stream=True)
            async for _ in stream:
                pass
            await proxy.settle()
        assert store_sql(proxy.engine, "SELECT COUNT(*) AS n FROM assembly_logs")[0]["n"] == 2
        explain = CliRunner().invoke(main, ["memory", "explain", "--data-dir",
                                            str(tmp_path / "data")])
        assert explain.exit_code == 0, explain.output
    finally:
        await proxy.runner.cleanup()
        await upstream.stop()


@pytest.mark.parametrize("stream", [False, True], ids=["whole", "streamed"])
@pytest.mark.parametrize("tools", [True, False], ids=["tool-loop", "plain"])
@pytest.mark.parametrize("outcome", ["answer", "error", "unreachable", "client-gone"])
async def test_every_path_queues_the_explain_log_after_the_send(
        tmp_path: Path, outcome: str, tools: bool, stream: bool) -> None:
    """Whatever becomes of the request (answered, an upstream error, an upstream that
    hangs up before its status line, a client that leaves while the upstream thinks),
    by the plain forward or the tool loop, streamed or not, its block's explain log is
    queued once, and only after the upstream received the request."""
    upstream = _CountingLogs()
    await upstream.start()
    proxy = await start_proxy(upstream.base_url, tmp_path / "data",
                              tools={"enabled": tools, "offer": "always",
                                     "heartbeat_seconds": 0.1})
    upstream.engine = proxy.engine
    if outcome == "error":
        upstream.push(Reply(status=500))
    elif outcome == "unreachable":
        upstream.hang_ups = 1
    elif outcome == "client-gone":
        upstream.push(Reply(content="an answer nobody reads", answer_delay=1.5))
    try:
        client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-test-paths",
                                    max_retries=0, timeout=0.5)
        messages: Any = [{"role": "user", "content": "The staging database runs on port 5433."}]
        try:
            if stream:
                chunks = await client.chat.completions.create(model="m", messages=messages,
                                                              stream=True)
                async for _ in chunks:
                    pass
            else:
                await client.chat.completions.create(model="m", messages=messages)
        except openai.APITimeoutError:
            assert outcome == "client-gone"
            await asyncio.sleep(0.3)  # the proxy's next look at the client
        except openai.APIStatusError as exc:
            assert exc.status_code == {"error": 500, "unreachable": 502}[outcome]
        else:
            assert outcome == "answer"
        await proxy.settle()
        assert upstream.logs_on_arrival == ([] if outcome == "unreachable" else [0])
        assert store_sql(proxy.engine, "SELECT COUNT(*) AS n FROM assembly_logs")[0]["n"] == 1
    finally:
        await proxy.runner.cleanup()
        await upstream.stop()


def test_prepare_leaves_the_explain_log_to_the_send(tmp_path: Path) -> None:
    """:func:`proxy.flow.plan.prepare` builds the block without queueing its explain
    log; :meth:`~proxy.flow.plan.Prepared.sent` queues it, once."""
    import orjson

    from memory_core.engine import Engine
    from memory_core.models import Scope
    from proxy.flow import plan
    from proxy.metrics import Metrics

    engine = Engine(tmp_path / "data")
    try:
        scope = Scope("t_log", role="coder")
        messages = [{"role": "user", "content": "The staging database runs on port 5433."}]
        body = {"model": "m", "messages": messages}
        _ticket, fut = engine.capture_request(scope, "r1", messages, {})
        prepared = plan.prepare(Metrics(), engine, scope, fut.result(10), orjson.dumps(body),
                                body, "r1", True, True)
        assert prepared.state == "injected"
        engine.flush()
        count = "SELECT COUNT(*) AS n FROM assembly_logs WHERE request_id = 'r1'"
        assert store_sql(engine, count)[0]["n"] == 0
        prepared.sent()
        prepared.sent()
        engine.flush()
        assert store_sql(engine, count)[0]["n"] == 1
    finally:
        engine.close()
