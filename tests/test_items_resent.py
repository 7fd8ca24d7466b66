"""A whole history re-sent in a new conversation (memory_core/items/resent.py).

Each statement of a conversation told again in a re-send is checked for being history
sent again (no new occasion). The check reads message paths; these tests pin that a
long re-send is still recognised in every form (a new system prompt, a rewritten
opening, the oldest turns dropped) and that the paths it reads cost linear work in
the re-send's length, not quadratic (issue 28).
"""

from __future__ import annotations

import collections
import json
from typing import Any

import pytest

from memory_core.engine import Engine
from memory_core.models import Scope
from tests.conftest import TEST_STORE, store_sql

_TOLD, _RESENT = Scope("t", "coder", "told"), Scope("t", "coder", "resent")


def _name(i: int) -> str:
    """A word of its own per turn ("bix", "cdix"): each statement its own subject."""
    return "".join("bcdfghjklmnpqrstvwxz"[int(c)] for c in str(i)) + "ix"


def _conversation(engine: Engine, n: int) -> list[dict[str, Any]]:
    """Tell ``n`` statements in session ``told``, one request per turn as a chat
    client sends them; return the history (user and assistant turns)."""
    messages: list[dict[str, Any]] = []
    for i in range(n):
        messages.append({"role": "user",
                         "content": f"The {_name(i)} service listens on port {4000 + i}."})
        _ticket, fut = engine.capture_request(_TOLD, f"told-{i}", list(messages), {})
        fut.result(30)
        messages.append({"role": "assistant", "content": f"Noted, service {i}."})
    engine.flush()
    return messages


def _resend(engine: Engine, messages: list[dict[str, Any]]) -> None:
    _ticket, fut = engine.capture_request(_RESENT, "resent", [
        *messages, {"role": "user", "content": "Let's continue."}], {})
    fut.result(60)
    engine.flush()


def _items(engine: Engine) -> list[tuple[str, dict[str, Any]]]:
    """``(status, data)`` of each item of a told statement, oldest first."""
    return [(r["status"], json.loads(r["data"] or "{}")) for r in store_sql(
        engine, "SELECT status, data, text FROM memory_items ORDER BY id")
        if " service listens on port " in r["text"]]


@pytest.mark.parametrize("form", ["whole", "new system prompt", "opening rewritten",
                                  "oldest dropped"])
def test_a_long_history_resent_in_any_form_is_no_new_telling(engine: Engine,
                                                             form: str) -> None:
    told = _conversation(engine, 12)
    if form == "new system prompt":
        told = [{"role": "system", "content": "Today is Monday."}, *told]
    elif form == "opening rewritten":
        told = [{"role": "user", "content": "Summary: we set up the services."}, *told[1:]]
    elif form == "oldest dropped":
        told = told[6:]  # the first three turns
    _resend(engine, told)
    items = _items(engine)
    expected = 11 if form == "opening rewritten" else 9 if form == "oldest dropped" else 12
    resent = [d for s, d in items if len(d.get("sources", ())) == 2]
    assert len(items) == 12 and all(s == "active" for s, _ in items), items
    assert len(resent) == expected, items
    # each re-sent statement: its thread kept as one that re-sent it, no second occasion
    assert all(len(d.get("occasions", ())) <= 1 and d.get("resent_threads") for d in resent), \
        resent


@pytest.mark.skipif(TEST_STORE != "sqlite", reason="counts SQLite's virtual machine steps")
def test_the_paths_a_resend_reads_cost_linear_work(tmp_path: Any) -> None:
    # before: each restated message walked its own path and each source's from the
    # root, reading every row on them: 4x the work at 2x the length
    def read_messages(n: int) -> int:
        engine = Engine(tmp_path / f"d{n}")
        try:
            told = _conversation(engine, n)
            steps: collections.Counter[str] = collections.Counter()
            now = [""]

            def statement(sql: str) -> None:
                text = " ".join(sql.split()).upper()
                now[0] = "messages" if text.startswith(("SELECT", "WITH")) and \
                    "FROM MESSAGES" in text else "other"

            def tick() -> int:
                steps[now[0]] += 1
                return 0

            def watch(tx: Any) -> None:  # the writer's own connection (SqliteTx)
                tx.history._c.set_trace_callback(statement)
                tx.history._c.set_progress_handler(tick, 10)

            engine.store.write_tx_sync(watch)
            _resend(engine, [{"role": "system", "content": "New day."}, *told])
            assert all(len(d.get("sources", ())) == 2 for _s, d in _items(engine))
            return steps["messages"]
        finally:
            engine.close()

    short, long = read_messages(30), read_messages(60)
    assert long <= 2.2 * short, (short, long)
