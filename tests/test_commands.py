"""In-chat /memory commands through the real openai SDK: answered locally (plain and
streamed), never sent upstream, never extracted from, scoped to the caller's tenant
and role."""

from __future__ import annotations

from typing import Any

import openai
import pytest

from tests.conftest import RunningProxy, sql_read
from tests.fake_upstream import FakeUpstream
from tests.test_admin_support import (  # noqa: F401 - sdk_fixture is the `sdk` fixture
    KEY_A,
    KEY_B,
    MARK_A,
    MARK_B,
    Populated,
    client,
    count,
    populate,
    sdk_fixture,
    steady_proxy_fixture,
)

SYS = {"role": "system", "content": "You are a helpful agent."}


async def ask(c: openai.AsyncOpenAI, text: str, *, stream: bool = False,
              history: list[dict[str, Any]] | None = None) -> str:
    messages = [SYS, *(history or []), {"role": "user", "content": text}]
    if not stream:
        r = await c.chat.completions.create(model="gpt-test", messages=messages)  # type: ignore[arg-type]
        assert r.object == "chat.completion" and r.choices[0].finish_reason == "stop"
        assert r.choices[0].message.role == "assistant"
        return r.choices[0].message.content or ""
    parts, finish, usage = [], None, None
    s = await c.chat.completions.create(model="gpt-test", messages=messages, stream=True,  # type: ignore[arg-type]
                                        stream_options={"include_usage": True})
    async for chunk in s:
        assert chunk.object == "chat.completion.chunk"
        if chunk.usage is not None:
            usage = chunk.usage
        for ch in chunk.choices:
            parts.append(ch.delta.content or "")
            finish = ch.finish_reason or finish
    assert finish == "stop" and usage is not None
    return "".join(parts)


@pytest.fixture
async def pop(proxy: RunningProxy) -> Populated:
    return await populate(proxy)


@pytest.mark.parametrize("stream", [False, True])
async def test_commands_are_answered_locally_and_never_reach_the_upstream(
        proxy: RunningProxy, sdk: Any, upstream: FakeUpstream, pop: Populated,
        stream: bool) -> None:
    a = sdk(KEY_A, "coder", "sess-a")
    before = len(upstream.chat_requests)
    help_text = await ask(a, "/memory help", stream=stream)
    assert "/memory search QUERY" in help_text
    status = await ask(a, "/memory status", stream=stream)
    assert pop.tenant_a in status and "role coder" in status
    assert "memory items: 3 (2 active, 1 superseded)" in status
    assert "last injection:" in status and "none yet" not in status
    unknown = await ask(a, "/memory frobnicate", stream=stream)
    assert "unknown command 'frobnicate'" in unknown
    assert len(upstream.chat_requests) == before
    await proxy.settle()
    headers_ok = await a.chat.completions.with_raw_response.create(
        model="m", messages=[SYS, {"role": "user", "content": "/memory"}])
    assert headers_ok.headers["x-lcm-memory"] == "command"
    assert headers_ok.headers["x-lcm-request-id"].startswith("req_")
    assert len(upstream.chat_requests) == before


async def test_status_counts_only_the_callers_tenant_and_role(
        proxy: RunningProxy, sdk: Any, pop: Populated) -> None:
    b = sdk(KEY_B, "coder", "sess-b")
    status_b = await ask(b, "/memory status")
    assert pop.tenant_b in status_b and pop.tenant_a not in status_b
    # B's thread, plus the branch this command opened; its 3 messages plus the command
    assert "threads: 2   messages: 4" in status_b and "memory items: 1 (1 active)" in status_b
    w = sdk(KEY_A, "writer", "sess-w")
    status_w = await ask(w, "/memory status")
    assert "threads: 2   messages: 4" in status_w and "memory items: 1 (1 active)" in status_w


async def test_search_sees_only_the_callers_scope(proxy: RunningProxy, sdk: Any,
                                                  pop: Populated) -> None:
    a = sdk(KEY_A, "coder", "sess-a")
    b = sdk(KEY_B, "coder", "sess-b")
    w = sdk(KEY_A, "writer", "sess-w")
    found_a = await ask(a, "/memory search port")
    assert f"item:{pop.items['a_port']}" in found_a and MARK_B not in found_a
    assert "6380" not in found_a
    found_b = await ask(b, "/memory search port")
    assert f"item:{pop.items['b_port']}" in found_b and MARK_A not in found_b
    assert "5433" not in found_b
    # The writer role holds no port: what its search lists (nearest by meaning, as
    # the model's memory_search) is the writer's own, never the coder's or B's.
    found_w = await ask(w, "/memory search port staging timeout")
    assert not any(v in found_w for v in ("5433", "6380", "30 s", "45 s", MARK_B))
    # (the header echoes the query; unrelated turns under the relevance floor: none)
    assert "port staging" not in "".join(found_w.split("\n", 1)[1:])
    # earlier command messages and replies are not search results
    again = await ask(a, "/memory search port")
    assert "/memory search" not in again.split("\n", 1)[1]
    assert "lcm-proxy memory" not in again.split("\n", 1)[1]
    assert "usage: /memory search QUERY" in await ask(a, "/memory search")


async def test_explain_shows_the_callers_last_injection(proxy: RunningProxy, sdk: Any,
                                                        pop: Populated) -> None:
    w = sdk(KEY_A, "writer", "sess-w")
    text = await ask(w, "/memory explain")
    last = proxy.engine.last_assembly(tenant=pop.tenant_a, role="writer")
    assert last is not None and last["request_id"] in text
    assert f"budget: {last['used_tokens']}/{last['budget_tokens']} tokens" in text
    assert "included" in text
    nobody = sdk("sk-nobody-0123456789", "coder")
    assert "no injection recorded yet" in await ask(nobody, "/memory explain")


async def test_retract_only_touches_the_callers_items(proxy: RunningProxy, sdk: Any,
                                                      pop: Populated) -> None:
    a = sdk(KEY_A, "coder", "sess-a")
    w = sdk(KEY_A, "writer", "sess-w")
    other = pop.items["b_port"]
    assert f"no memory item {other}" in await ask(a, f"/memory retract {other}")
    other_role = pop.items["w_style"]
    assert f"no memory item {other_role}" in await ask(a, f"/memory retract {other_role}")
    for item_id in (other, other_role):
        assert count(proxy, "SELECT COUNT(*) FROM memory_items WHERE id=? AND status='active'",
                     item_id) == 1
    mine = pop.items["a_port"]
    reply = await ask(a, f"/memory retract item:{mine} the port moved")
    assert f"retracted item:{mine} (was active)" in reply
    assert count(proxy, "SELECT COUNT(*) FROM memory_items WHERE id=? AND status='retracted'",
                 mine) == 1
    assert count(proxy, "SELECT COUNT(*) FROM memory_item_revisions WHERE item_id=? AND"
                 " reason='the port moved'", mine) == 1
    assert count(proxy, "SELECT COUNT(*) FROM index_outbox WHERE kind='item' AND ref_id=? AND"
                 " op='delete'", mine) == 1
    assert "usage: /memory retract" in await ask(a, "/memory retract abc")
    assert "usage: /memory retract" in await ask(w, "/memory retract")
    # the item stays inspectable for audit, but in-chat search no longer finds it
    assert f"item:{mine}" not in await ask(a, "/memory search staging database port 5433")


async def test_restore_in_chat_only_touches_the_callers_items(proxy: RunningProxy, sdk: Any,
                                                              pop: Populated) -> None:
    a = sdk(KEY_A, "coder", "sess-a")
    old = pop.items["a_old"]  # superseded by a_new
    other = pop.items["b_port"]
    assert f"no memory item {other}" in await ask(a, f"/memory restore {other}")
    found = (await ask(a, "/memory search API timeout offline")).splitlines()
    assert any(line.startswith(f"item:{old} ") and "[superseded]" in line for line in found), \
        found
    reply = await ask(a, f"/memory restore item:{old} the correction was wrong")
    assert f"restored item:{old} (was superseded); it is current again" in reply
    assert count(proxy, "SELECT COUNT(*) FROM memory_items WHERE id=? AND status='active'"
                 " AND superseded_by IS NULL", old) == 1
    assert count(proxy, "SELECT COUNT(*) FROM memory_item_revisions WHERE item_id=? AND"
                 " reason='the correction was wrong'", old) == 1
    again = await ask(a, f"/memory restore {old}")
    assert "is active: only a superseded or retracted item can be restored" in again
    assert "usage: /memory restore" in await ask(a, "/memory restore abc")
    assert "/memory restore ID" in await ask(a, "/memory help")


@pytest.mark.parametrize("ref", ["99999999999999999999999", "item:99999999999999999999999",
                                 str(1 << 63), "0", "-3", "item:"])
@pytest.mark.parametrize("stream", [False, True])
async def test_retract_of_an_id_no_row_can_have_is_a_usage_reply(
        proxy: RunningProxy, sdk: Any, pop: Populated, ref: str, stream: bool) -> None:
    a = sdk(KEY_A, "coder", "sess-a")
    reply = await ask(a, f"/memory retract {ref} oops", stream=stream)
    assert "usage: /memory retract" in reply
    largest = await ask(a, f"/memory retract {(1 << 63) - 1}", stream=stream)
    assert f"no memory item {(1 << 63) - 1}" in largest


@pytest.mark.parametrize("stream", [False, True])
async def test_commands_and_replies_are_stored_but_never_extracted(
        make_proxy: Any, stream: bool) -> None:
    proxy: RunningProxy = await make_proxy(injection={"capture_wait_seconds": 30})
    assert proxy.engine.config.extract  # the real extractor runs in this proxy
    a = client(proxy, KEY_A, "coder", "sess-x")
    try:
        # Text the extractor takes as a fact, behind the command prefix…
        await ask(a, "/memory search The API timeout is 90 s when offline.", stream=stream)
        # …and the same text as conversation, which it does take (the control).
        await ask(a, "The API timeout is 90 s when offline.")
    finally:
        await a.close()
    await proxy.settle()
    rows = sql_read(proxy.engine, lambda c: [dict(r) for r in c.execute(
        "SELECT id, msg_role, text FROM messages WHERE session='sess-x' ORDER BY id")])
    assert [r["msg_role"] for r in rows[:3]] == ["system", "user", "assistant"]
    assert rows[2]["text"].startswith("lcm-proxy memory")
    ids = [r["id"] for r in rows[1:3]]
    assert count(proxy, "SELECT COUNT(*) FROM memory_items WHERE source_message_id IN (?, ?)",
                 *ids) == 0
    assert count(proxy, "SELECT COUNT(*) FROM extraction_queue WHERE message_id IN (?, ?)",
                 *ids) == 0
    control = [r["id"] for r in rows if r["text"] == "The API timeout is 90 s when offline."]
    assert count(proxy, "SELECT COUNT(*) FROM memory_items WHERE source_message_id=?",
                 *control) + count(proxy, "SELECT COUNT(*) FROM extraction_queue WHERE"
                                   " message_id=?", *control) >= 1
    event = proxy.engine.export(session="sess-x", events=True)["events"]
    assert any(e["kind"] == "response" and e["data"].get("command") for e in event)


@pytest.mark.parametrize("escaped_slash", [False, True])
async def test_earlier_command_exchanges_are_left_out_of_what_the_upstream_reads(
        proxy: RunningProxy, upstream: FakeUpstream, escaped_slash: bool) -> None:
    """A history that holds an earlier ``/memory`` command and the proxy's reply
    reaches the upstream without both (they are not conversation), also from a
    client whose JSON writes ``/`` as ``\\/``; a message that merely mentions memory
    is kept."""
    import aiohttp
    import orjson

    from memory_core.tools.commands import REPLY_HEADER

    a = client(proxy, KEY_A, "coder", "sess-x")
    try:
        reply = await ask(a, "/memory status")
    finally:
        await a.close()
    assert reply.startswith(REPLY_HEADER)
    messages = [SYS, {"role": "user", "content": "/memory status"},
                {"role": "assistant", "content": reply},
                {"role": "user", "content": "Our memory budget is 4 GB per worker."},
                {"role": "assistant", "content": "Noted."},
                {"role": "user", "content": "Which memory budget did we set?"}]
    raw = orjson.dumps({"model": "gpt-test", "messages": messages})
    if escaped_slash:
        raw = raw.replace(b"/", b"\\/")
    assert (b"\\/memory" in raw) is escaped_slash
    before = len(upstream.chat_requests)
    async with aiohttp.ClientSession() as http:
        async with http.post(f"{proxy.base_url}/chat/completions", data=raw, headers={
                "Authorization": f"Bearer {KEY_A}", "Content-Type": "application/json",
                "X-LCM-Role": "coder", "X-LCM-Session": "sess-x"}) as resp:
            assert resp.status == 200
            await resp.read()
    assert len(upstream.chat_requests) == before + 1
    sent = upstream.chat_requests[-1]["json"]["messages"]
    texts = [m["content"] for m in sent if isinstance(m.get("content"), str)]
    assert not any(t.startswith(("/memory", REPLY_HEADER)) for t in texts)
    assert "Our memory budget is 4 GB per worker." in texts
    assert any("Which memory budget did we set?" in t for t in texts)
    assert len(sent) == 4  # system, the two kept turns, the newest (block prepended)


@pytest.mark.parametrize("stream", [False, True])
async def test_command_words_match_in_any_letter_case_and_only_as_a_command(
        proxy: RunningProxy, upstream: FakeUpstream, stream: bool) -> None:
    """``/Memory status`` (a phone capitalises the first letter) and ``/MEMORY HELP``
    are commands, answered locally and never extracted from; ``/Memoryless mode``,
    ``/MEMORY-leak`` and a message that names ``/Memory`` later on are ordinary text
    and go upstream. An earlier ``/Memory`` exchange is left out of what the upstream
    reads, as a lower-case one is."""
    from memory_core.tools.commands import REPLY_HEADER, is_command

    assert is_command("/Memory status") and is_command("  /MEMORY\thelp") and is_command(
        "/mEmOrY")
    assert not any(is_command(t) for t in ("/Memoryless mode", "/MEMORY-leak", "/memory:",
                                           "use /Memory status to check", "memory status"))
    a = client(proxy, KEY_A, "coder", "sess-case")
    try:
        before = len(upstream.chat_requests)
        status = await ask(a, "/Memory status", stream=stream)
        assert status.startswith(REPLY_HEADER) and "memory items:" in status
        assert "/memory search QUERY" in await ask(a, "/MEMORY HELP", stream=stream)
        assert "/memory search QUERY" in await ask(a, "/Memory Help The timeout is 90 s.",
                                                  stream=stream)
        assert len(upstream.chat_requests) == before
        for text in ("/Memoryless mode is what I want.", "/MEMORY-leak in the worker again"):
            assert not (await ask(a, text, stream=stream)).startswith(REPLY_HEADER)
        assert len(upstream.chat_requests) == before + 2
        history = [{"role": "user", "content": "/Memory status"},
                   {"role": "assistant", "content": status}]
        await ask(a, "Which memory budget did we set?", history=history, stream=stream)
    finally:
        await a.close()
    sent = upstream.chat_requests[-1]["json"]["messages"]
    texts = [m["content"] for m in sent if isinstance(m.get("content"), str)]
    assert not any(t.startswith(("/Memory", REPLY_HEADER)) for t in texts), texts
    await proxy.settle()
    assert count(proxy, "SELECT COUNT(*) FROM memory_items WHERE text LIKE '%90 s%'") == 0


@pytest.mark.parametrize("stream", [False, True])
async def test_prefs_in_chat_list_set_and_delete_the_callers_own(
        proxy: RunningProxy, sdk: Any, upstream: FakeUpstream, pop: Populated,
        stream: bool) -> None:
    """``/memory help`` names the preference commands; ``/memory prefs`` lists what the
    caller's block shows (its own, its key's, the operator's ``*``), and ``set`` and
    ``delete`` change only the caller's own, in its tenant and role; the block of the
    next turn carries a preference set in chat."""
    a = sdk(KEY_A, "coder", "sess-prefs")
    help_text = await ask(a, "/memory help", stream=stream)
    assert "/memory prefs set KEY TEXT" in help_text and "/memory prefs delete KEY" in help_text
    proxy.engine.set_agent_memory(tenant="*", role="coder", category="user_preferences",
                                  key="tone", title="Tone", content="Be brief.")
    listed = await ask(a, "/memory prefs", stream=stream)
    assert "code_style" in listed and MARK_A in listed and MARK_B not in listed
    assert "Be brief.  (set by the operator for every tenant)" in listed
    made = await ask(a, "/memory prefs set reply_language: Answer in German.", stream=stream)
    assert "set preference reply_language for role coder" in made
    rows = proxy.engine.list_agent_memories(category="user_preferences", role="coder",
                                            tenant=pop.tenant_a)
    assert {(r["tenant"], r["key"], r["content"]) for r in rows} >= {
        (pop.tenant_a, "reply_language", "Answer in German.")}
    # the next ordinary turn's block shows it
    before = len(upstream.chat_requests)
    await ask(a, "What is the deploy plan?", stream=stream)
    assert len(upstream.chat_requests) == before + 1
    sent = upstream.chat_requests[-1]["json"]["messages"][-1]["content"]
    assert "Reply language: Answer in German." in sent and "Tone: Be brief." in sent
    # another tenant and another role neither see nor can delete it
    b = sdk(KEY_B, "coder", "sess-b2")
    assert "reply_language" not in await ask(b, "/memory prefs", stream=stream)
    assert "no preference reply_language" in await ask(
        b, "/memory prefs delete reply_language", stream=stream)
    w = sdk(KEY_A, "writer", "sess-w2")
    assert "no preference reply_language for role writer" in await ask(
        w, "/memory prefs delete reply_language", stream=stream)
    # the operator's preference is not the caller's to delete
    refused = await ask(a, "/memory prefs delete tone", stream=stream)
    assert "set by the operator for every tenant: not yours to delete" in refused
    assert "deleted your preference reply_language" in await ask(
        a, "/memory prefs delete reply_language", stream=stream)
    assert {r["key"] for r in proxy.engine.list_agent_memories(
        category="user_preferences", role="coder", tenant=pop.tenant_a)} == {
        "code_style", "tone"}
    for bad, said in (("/memory prefs set", "usage: /memory prefs set KEY TEXT"),
                      ("/memory prefs set ### text", "not set: key '###'"),
                      ("/memory prefs set k " + "x" * 501, "not set: content is 501"),
                      ("/memory prefs frob", "usage: /memory prefs [set")):
        assert said in await ask(a, bad, stream=stream)
    proxy.engine.delete_agent_memory(tenant="*", role="coder", category="user_preferences",
                                     key="tone")


async def test_prefs_in_chat_for_an_end_user_show_what_the_key_set(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    """An end user (``X-LCM-User``) sees the preferences set for the API key's tenant
    (they are in its block) as not its own, and sets its own apart from them."""
    key_holder = client(proxy, KEY_A, "coder", "sess-holder")
    user = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY_A, max_retries=0,
                              default_headers={"X-LCM-Role": "coder", "X-LCM-User": "maria"})
    try:
        assert "set preference units" in await ask(key_holder,
                                                   "/memory prefs set units Metric only.")
        listed = await ask(user, "/memory prefs")
        assert "Metric only.  (set for every user of this API key)" in listed
        assert "not yours to delete" in await ask(user, "/memory prefs delete units")
        assert "set preference units" in await ask(user, "/memory prefs set units Imperial.")
        mine = await ask(user, "/memory prefs")
        assert "Imperial.  (yours)" in mine
        # the key's stays listed, marked: the block shows the user's own in its place
        assert ("Metric only.  (set for every user of this API key; not shown: a more"
                " specific one replaces it)") in mine
        assert "Imperial" not in await ask(key_holder, "/memory prefs")
    finally:
        await key_holder.close()
        await user.close()
