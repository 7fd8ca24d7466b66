"""The extraction job's "did the assistant write this?" look-up
(``ExtractionQueue.calls_before``, memory_core/capture/delegated.py) on both stores.

Each queued user message is checked against the assistant's tool calls of the hour
before it. The look-up used to read the raw JSON of every assistant message of that
hour to find the few with a tool call: in a conversation without tool calls (a chat,
a re-sent history) its work grew with the conversation, quadratic over a session
(issue 28). It now reads through ``messages_calls`` (SQLite m014, PostgreSQL m009), an
index of the assistant messages with a tool call alone. These tests pin the rows it
returns (both stores, and after ``lcm-proxy migrate``), that its work does not grow
with the chat around them, and that an older store's calls are found once migrated.
"""

from __future__ import annotations

import collections
import sqlite3
from pathlib import Path
from typing import Any

import orjson
import pytest

from memory_core.capture import delegated
from memory_core.models import Scope
from memory_core.store.api import Store
from memory_core.store.sqlite import DB_FILENAME, SqliteStore
from tests import pgcluster
from tests.test_store_contract import S1, Raw, _capture, _user, _w, backend  # noqa: F401
from tests.test_store_responsemap import pg_url  # noqa: F401 - the cluster fixture

OTHER_ROLE = Scope("t1", "writer", "s1")


def _chat_call(prompt: str) -> dict[str, Any]:
    return {"role": "assistant", "content": None, "tool_calls": [
        {"id": "c1", "type": "function",
         "function": {"name": "Task", "arguments": orjson.dumps({"prompt": prompt}).decode()}}]}


def _tool_use(prompt: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [
        {"type": "tool_use", "id": "t1", "name": "Agent", "input": {"prompt": prompt}}]}


def _function_call(prompt: str) -> dict[str, Any]:
    return {"role": "assistant", "content": None,
            "function_call": {"name": "Task", "arguments": prompt}}


def _turns(store: Store, scope: Scope, start: float, replies: list[dict[str, Any]],
           tag: str) -> list[int]:
    """One request per reply (a user turn, then the reply), ``start`` + 10 s each; the
    stored ids of the replies."""
    hist: list[Any] = []
    ids = []
    for i, reply in enumerate(replies):
        hist.append(_user(f"{tag} turn {i}"))
        _capture(store, scope, f"{tag}{i}", list(hist), start + 10 * i)
        hist.append(reply)
        got = _capture(store, scope, f"{tag}{i}r", list(hist), start + 10 * i + 1)
        ids.append(got.message_ids[-1])
    return ids


def _looked(store: Store, message_id: int, window: float = delegated.WINDOW_SECONDS,
            limit: int = delegated.RECENT_CALLS) -> list[str]:
    return store.read_tx(lambda tx: tx.extraction.calls_before(message_id, window, limit))


def _raw_of(store: Store, ids: list[int]) -> list[str]:
    rows = {r["id"]: r["raw_json"] for r in store.read_tx(
        lambda tx: tx.history.path_messages(ids))}
    return [rows[i] for i in ids]


def test_the_newest_calls_of_the_scope_in_the_window_newest_first(
        backend: tuple[Store, Raw]) -> None:  # noqa: F811 - the fixture
    store, raw = backend
    # before the window, then three call shapes among prose (one that quotes a
    # shape's name: its quotes are escaped in the raw JSON, no match)
    old, = _turns(store, S1, 0.0, [_chat_call("an old delegated task, long enough")], "o")
    ids = _turns(store, S1, 5000.0, [
        _chat_call("Check the health of the billing service and report."),
        {"role": "assistant", "content": "Plain prose."},
        _tool_use("Find every caller of the parser and list them."),
        {"role": "assistant", "content": 'I will not use "tool_calls" here.'},
        _function_call("Summarise the open issues of the tracker for me."),
        _chat_call("A call that is hidden later, long enough to count."),
    ], "a")
    raw("UPDATE messages SET hidden = 1 WHERE id = ?", (ids[5],))
    _turns(store, OTHER_ROLE, 5000.0, [_chat_call("another role's call, not this scope")], "w")
    after = _capture(store, S1, "late", [_user("what now?")], 5100.0).message_ids[-1]
    _turns(store, S1, 5200.0, [_chat_call("a call stored after the question")], "z")

    wanted = _raw_of(store, [ids[4], ids[2], ids[0]])
    assert len(set(wanted)) == 3
    assert _looked(store, after) == wanted
    assert _looked(store, after, limit=2) == wanted[:2]
    assert _looked(store, after, window=90.0) == wanted[:2]  # ids[0] was stored at 5001
    assert _looked(store, after, window=1e9)[-1] == _raw_of(store, [old])[0]
    assert delegated.model_wrote("Find every caller of the parser and list them.",
                                 _looked(store, after))
    first_user = store.read_tx(lambda tx: tx.capture.path_ids(ids[0]))[-2]
    assert _looked(store, first_user) == []  # nothing before the first call's turn


def _chat_steps(tmp_path: Path, n: int, resend: bool) -> tuple[int, list[str]]:
    """VM steps of the look-up of the newest user message of a conversation of ``n``
    turns without tool calls but for the first (stored as one re-sent request when
    ``resend``, else a message every half second), and what it returned."""
    store = SqliteStore(tmp_path / f"d{n}{resend}")
    try:
        hist: list[Any] = [_user("Delegate the check, please."),
                           _chat_call("Check the health of the billing service and report."),
                           {"role": "tool", "tool_call_id": "c1", "content": "healthy"}]
        for i in range(n):
            hist += [_user(f"The service number {i} listens on port {4000 + i}."),
                     {"role": "assistant", "content": f"Noted, service {i}."}]
        hist.append(_user("Check the health of the billing service and report."))
        newest = _capture(store, S1, "r", hist, 1000.0).message_ids[-1]
        if not resend:
            _w(store, lambda tx: tx.history._c.execute(
                "UPDATE messages SET created_at = 1000.0 + id * 0.5"))
        steps = collections.Counter[str]()

        def look(tx: Any) -> list[str]:
            def tick() -> int:
                steps["vm"] += 1
                return 0

            tx.extraction._c.set_progress_handler(tick, 10)
            try:
                got: list[str] = tx.extraction.calls_before(
                    newest, delegated.WINDOW_SECONDS, delegated.RECENT_CALLS)
                return got
            finally:
                tx.extraction._c.set_progress_handler(None, 0)

        found = store.read_tx(look)
        return steps["vm"], found
    finally:
        store.close()


@pytest.mark.sqlite_only("counts SQLite's virtual machine steps")
@pytest.mark.parametrize("resend", [False, True], ids=["chat", "re-send"])
def test_the_look_up_does_not_read_the_chat_around_the_calls(tmp_path: Path,
                                                            resend: bool) -> None:
    # before: every assistant message of the hour was read, 2x the work at 2x the turns
    short, found_short = _chat_steps(tmp_path, 100, resend)
    long, found_long = _chat_steps(tmp_path, 200, resend)
    assert len(found_short) == 1 and found_long == found_short
    assert delegated.model_wrote("Check the health of the billing service and report.",
                                 found_long)
    assert long <= 1.2 * short, (short, long)


def _old_sqlite_store(data: Path) -> SqliteStore:
    """A store as schema 13 left it (no ``messages_calls``), holding a conversation
    with a delegated call; reopened at this code's schema."""
    store = SqliteStore(data)
    _turns(store, S1, 100.0, [{"role": "assistant", "content": "Plain prose."},
                              _chat_call("Check the health of the billing service."),
                              _tool_use("Find every caller of the parser, please.")], "a")
    store.close()
    db = sqlite3.connect(data / DB_FILENAME)
    db.execute("DROP INDEX messages_calls")  # what m014 added
    db.execute("PRAGMA user_version = 13")
    db.commit()
    db.close()
    return SqliteStore(data)


@pytest.mark.sqlite_only("writes an older schema into the SQLite file")
def test_an_older_sqlite_stores_calls_are_found_through_the_new_index(tmp_path: Path) -> None:
    store = _old_sqlite_store(tmp_path / "d")
    try:
        asked = _capture(store, S1, "q", [_user("next")], 200.0).message_ids[-1]
        got = _looked(store, asked)
        indexes = store.read_tx(lambda tx: [r[0] for r in tx.extraction._c.execute(
            "SELECT name FROM sqlite_master WHERE type = 'index'")])
    finally:
        store.close()
    assert [orjson.loads(r)["tool_calls" if "tool_calls" in r else "content"] for r in got] \
        == [_tool_use("Find every caller of the parser, please.")["content"],
            _chat_call("Check the health of the billing service.")["tool_calls"]]
    assert "messages_calls" in indexes, indexes


def test_an_older_postgresql_stores_calls_are_found_through_the_new_index(
        tmp_path: Path, pg_url: str) -> None:  # noqa: F811 - the fixture
    import psycopg

    from memory_core.store import pg_migrations
    from memory_core.store.pg import PgStore

    url = pgcluster.fresh_database(pg_url, "calls_older")
    store = PgStore(url, max_size=2)
    try:
        _turns(store, S1, 100.0, [{"role": "assistant", "content": "Plain prose."},
                                  _chat_call("Check the health of the billing service."),
                                  _tool_use("Find every caller of the parser, please.")], "a")
    finally:
        store.close()
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP INDEX messages_calls")  # what m009 added
        conn.execute("DELETE FROM lcm_schema WHERE number = %s", (pg_migrations.SCHEMA_VERSION,))
    store = PgStore(url, max_size=2)
    try:
        asked = _capture(store, S1, "q", [_user("next")], 200.0).message_ids[-1]
        got = _looked(store, asked)
    finally:
        store.close()
    assert [orjson.loads(r).get("tool_calls") is not None for r in got] == [False, True]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("INSERT INTO messages (tenant, role, session, thread_id, node_key,"
                     " depth, msg_role, kind, text, raw_json, content_hash, tokens,"
                     " created_at) SELECT 't1', 'coder', 's9', thread_id, 'k' || g, 0,"
                     " 'assistant', 'response', 'x', '{\"content\": \"x\"}', 'h', 1, 150"
                     " FROM messages, generate_series(1, 3000) g WHERE id = 1")
        conn.execute("ANALYZE messages")
        plan = " ".join(r[0] for r in conn.execute(
            "EXPLAIN SELECT a.raw_json FROM messages u JOIN messages a ON a.tenant = u.tenant"
            " AND a.role = u.role AND a.created_at BETWEEN u.created_at - 3600 AND"
            " u.created_at WHERE u.id = %s AND a.id < u.id AND a.msg_role = 'assistant'"
            " AND a.hidden = 0 AND (strpos(a.raw_json, '\"tool_use\"') > 0"
            " OR strpos(a.raw_json, '\"tool_calls\"') > 0"
            " OR strpos(a.raw_json, '\"function_call\"') > 0)"
            " ORDER BY a.created_at DESC, a.id DESC LIMIT 32", (asked,)))
    assert "messages_calls" in plan, plan


def test_lcm_proxy_migrate_carries_the_calls_to_postgresql(
        tmp_path: Path, pg_url: str) -> None:  # noqa: F811 - the fixture
    from memory_core.store.migrate import copy_store
    from memory_core.store.pg import PgStore

    lite = SqliteStore(tmp_path / "d")
    try:
        _turns(lite, S1, 100.0, [{"role": "assistant", "content": "Plain prose."},
                                 _chat_call("Check the health of the billing service."),
                                 _function_call("Summarise the open issues, please.")], "a")
        asked = _capture(lite, S1, "q", [_user("next")], 200.0).message_ids[-1]
        before = _looked(lite, asked)
    finally:
        lite.close()
    url = pgcluster.fresh_database(pg_url, "calls_copied")
    copy_store(tmp_path / "d", url)
    pg = PgStore(url, max_size=2)
    try:
        assert len(before) == 2 and _looked(pg, asked) == before
    finally:
        pg.close()
