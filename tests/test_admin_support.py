"""Shared helpers for the operator-surface tests (admin API, commands, purge, UI, doctor).

:func:`populate` drives a running proxy with the real openai SDK — two API keys (two
tenants), two roles, sessions, a regenerated answer (a branch) — and then adds
what the SDK cannot produce deterministically today: memory items with a
supersession chain (through ``memory.store_extracted``, the writer-side rules),
a user preference and a small summary forest. Every tenant's text carries a
marker (``ALPHA…``/``BRAVO…``) so isolation tests can grep responses for the
other tenant's marker. This module has no tests of its own.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import openai
import pytest

from memory_core.items import writer as memory
from memory_core.models import Scope
from proxy.scope import tenant_for_key
from tests.conftest import RunningProxy, sql_read, sql_write, start_proxy
from tests.fake_upstream import FakeUpstream

STEADY = {"capture_wait_seconds": 30, "extract": False}
"""Injection settings of these tests' proxies: a capture wait long enough that a cold
first request never fails open, and no rule extraction, so the memory items are
exactly the ones :func:`populate` stores (the extractor has its own tests)."""
KEY_A = "sk-tenant-alpha-0123456789"
KEY_B = "sk-tenant-bravo-0123456789"
ADMIN_TOKEN = "adm-token-for-tests-0123456789"
MARK_A = "ALPHAMARK"
MARK_B = "BRAVOMARK"


def client(proxy: RunningProxy, key: str, role: str = "default",
           session: str | None = None) -> openai.AsyncOpenAI:
    headers = {"X-LCM-Role": role}
    if session:
        headers["X-LCM-Session"] = session
    return openai.AsyncOpenAI(base_url=proxy.base_url, api_key=key, default_headers=headers,
                              max_retries=0)


@pytest.fixture(name="proxy")
async def steady_proxy_fixture(upstream: FakeUpstream, tmp_path: Path
                               ) -> AsyncIterator[RunningProxy]:
    """The conftest ``proxy`` with :data:`STEADY` injection settings. Import it to
    override ``proxy`` in a module."""
    running = await start_proxy(upstream.base_url, tmp_path / "data", injection=STEADY)
    yield running
    await running.close()


@pytest.fixture(name="sdk")
async def sdk_fixture(proxy: RunningProxy) -> AsyncIterator[Callable[..., openai.AsyncOpenAI]]:
    """Factory of SDK clients for the ``proxy`` fixture, closed at teardown."""
    made: list[openai.AsyncOpenAI] = []

    def make(key: str, role: str = "default", session: str | None = None
             ) -> openai.AsyncOpenAI:
        made.append(client(proxy, key, role, session))
        return made[-1]

    yield make
    for c in made:
        await c.close()


def fake_item(text: str, *, subject: str | None = None, value: float | None = None,
              unit: str | None = None, condition: str | None = None, kind: str = "fact",
              correction: bool = False) -> SimpleNamespace:
    """An object shaped like an extractor result (what ``store_extracted`` reads)."""
    return SimpleNamespace(kind=kind, subject=subject, text=text, value=value,
                           value_text=None if value is None else f"{value:g}", unit=unit,
                           condition=condition, correction=correction, lang="en",
                           negated=False, task_label=None)


@dataclass
class Populated:
    """Ids and scopes of what :func:`populate` stored."""

    tenant_a: str
    tenant_b: str
    threads: dict[str, int] = field(default_factory=dict)
    items: dict[str, int] = field(default_factory=dict)
    messages: dict[str, int] = field(default_factory=dict)
    summaries: list[int] = field(default_factory=list)


async def chat(c: openai.AsyncOpenAI, messages: list[dict[str, Any]]) -> str:
    r = await c.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
    return r.choices[0].message.content or ""


async def populate(proxy: RunningProxy) -> Populated:
    """Store two tenants' conversations through the SDK, then items, prefs and summaries."""
    engine = proxy.engine
    salt = engine.tenant_salt
    pop = Populated(tenant_for_key(KEY_A, salt), tenant_for_key(KEY_B, salt))
    a = client(proxy, KEY_A, "coder", "sess-a")
    b = client(proxy, KEY_B, "coder", "sess-b")
    w = client(proxy, KEY_A, "writer", "sess-w")
    sys_msg = {"role": "system", "content": "You are a helpful agent."}
    hist_a: list[dict[str, Any]] = [sys_msg, {"role": "user", "content":
                                              f"{MARK_A} The staging database runs on port"
                                              " 5433 when the VPN is up."}]
    hist_a.append({"role": "assistant", "content": await chat(a, hist_a)})
    hist_a.append({"role": "user", "content": f"{MARK_A} Please plan the ledger migration."})
    hist_a.append({"role": "assistant", "content": await chat(a, hist_a)})
    # An edited last question forks a branch at the first answer.
    edited = hist_a[:3] + [{"role": "user", "content":
                            f"{MARK_A} Please plan the billing migration instead."}]
    await chat(a, edited)
    hist_b = [sys_msg, {"role": "user", "content":
                        f"{MARK_B} The production cache uses port 6380 for the bravo team."}]
    hist_b.append({"role": "assistant", "content": await chat(b, hist_b)})
    hist_w = [sys_msg, {"role": "user", "content": f"{MARK_A} writer notes: prose style"
                        " is plain and short."}]
    await chat(w, hist_w)
    for c in (a, b, w):
        await c.close()
    await proxy.settle()

    def ids(c: Any) -> None:
        for label, tenant, role in (("a", pop.tenant_a, "coder"), ("b", pop.tenant_b, "coder"),
                                    ("w", pop.tenant_a, "writer")):
            rows = c.execute("SELECT id FROM threads WHERE tenant=? AND role=? ORDER BY id",
                             (tenant, role)).fetchall()
            pop.threads[label] = rows[0][0]
            if label == "a" and len(rows) > 1:
                pop.threads["a_fork"] = rows[1][0]
            pop.messages[label] = c.execute(
                "SELECT id FROM messages WHERE tenant=? AND role=? AND msg_role='user'"
                " ORDER BY id LIMIT 1", (tenant, role)).fetchone()[0]

    sql_read(engine, ids)
    scope_a = Scope(pop.tenant_a, "coder", "sess-a")
    scope_b = Scope(pop.tenant_b, "coder", "sess-b")
    scope_w = Scope(pop.tenant_a, "writer", "sess-w")

    def add_items(c: Any) -> None:
        def put(scope: Scope, label: str, thread: str, *extracted: Any) -> None:
            new = memory.store_extracted(c, scope, pop.threads[thread], pop.messages[thread],
                                         extracted)
            pop.items[label] = new[-1]

        put(scope_a, "a_old", "a", fake_item(f"{MARK_A} API timeout is 30 s when offline",
                                             subject="api timeout", value=30, unit="s",
                                             condition="when offline"))
        put(scope_a, "a_new", "a", fake_item(f"{MARK_A} API timeout is 45 s when offline",
                                             subject="api timeout", value=45, unit="s",
                                             condition="when offline", correction=True))
        put(scope_a, "a_port", "a", fake_item(f"{MARK_A} staging database port is 5433",
                                              subject="staging database port", value=5433))
        put(scope_b, "b_port", "b", fake_item(f"{MARK_B} production cache port is 6380",
                                              subject="production cache port", value=6380))
        put(scope_w, "w_style", "w", fake_item(f"{MARK_A} prose style is plain",
                                               subject="prose style", kind="preference"))

    engine.store.write_tx_sync(add_items)
    engine.set_agent_memory(tenant=pop.tenant_a, role="coder", category="user_preferences",
                            key="code_style", title="Code style",
                            content=f"{MARK_A} black, 100 columns")
    engine.set_agent_memory(tenant=pop.tenant_b, role="coder", category="user_preferences",
                            key="code_style", title="Code style",
                            content=f"{MARK_B} tabs, 80 columns")
    pop.summaries = add_forest(proxy, pop.tenant_a, "coder", pop.threads["a"])
    await proxy.settle()  # the items, memories and summaries indexed, as searches expect
    return pop


def add_forest(proxy: RunningProxy, tenant: str, role: str, thread_id: int) -> list[int]:
    """Insert a two-level summary forest over the thread's first messages (rows only)."""

    def job(c: Any) -> list[int]:
        mids = [r[0] for r in c.execute("SELECT id FROM messages WHERE thread_id=? ORDER BY id",
                                        (thread_id,))]
        now = time.time()

        def node(level: int, covered: list[int], text: str) -> int:
            cur = c.execute(
                "INSERT INTO summary_nodes (tenant, role, thread_id, level, first_message_id,"
                " last_message_id, message_ids, text, tokens, source_tokens, model, created_at)"
                " VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
                (tenant, role, thread_id, level, covered[0], covered[-1],
                 "[" + ",".join(map(str, covered)) + "]", text, 20, 200, "extractive", now))
            c.execute("INSERT INTO index_outbox (kind, ref_id, op) VALUES ('summary', ?,"
                      " 'upsert')", (cur.lastrowid,))
            return int(cur.lastrowid)

        first = node(0, mids[:2], f"{MARK_A} L0 summary one: system prompt and staging port")
        second = node(0, mids[2:4], f"{MARK_A} L0 summary two: ledger migration <b>plan</b>")
        top = node(1, mids[:4], f"{MARK_A} L1 summary: setup and migration planning")
        c.execute("UPDATE summary_nodes SET parent_id=? WHERE id IN (?, ?)", (top, first, second))
        return [first, second, top]

    return sql_write(proxy.engine, job)


def count(proxy: RunningProxy, sql: str, *args: Any) -> int:
    """Run a ``SELECT COUNT(*)``-style query on a reader connection."""
    return int(sql_read(proxy.engine, lambda c: c.execute(sql, args).fetchone()[0]))
