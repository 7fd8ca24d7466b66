"""Operator reads of memory_core.store.api on a real engine: the rows a search hit
names (``ref_row``, the eval's hit texts) and one session's rows (the eval's store
checks), each kept to its tenant, role and session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from memory_core import overview
from memory_core.engine import Engine
from memory_core.models import Scope
from proxy.evaluation import storecheck
from proxy.evaluation.runner import _hit_text


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    eng = Engine(tmp_path / "d")
    yield eng
    eng.close()


def _capture(engine: Engine, scope: Scope, text: str) -> tuple[int, list[int]]:
    """Capture one user message; return its thread id and message ids."""
    _ticket, fut = engine.capture_request(scope, "req", [{"role": "user", "content": text}],
                                          {})
    result = fut.result(30)
    return result.thread_id, list(result.message_ids)


def test_hit_rows_and_texts_of_each_kind(engine: Engine) -> None:
    scope = Scope("t1", "coder", "s1")
    thread, [mid] = _capture(engine, scope, "We decided to use PostgreSQL 15 for the shared store.")
    engine.flush()
    items = engine.list_items(tenant="t1", role="coder")["items"]
    assert items, "the decision should become a memory item"
    item = items[0]
    engine.set_agent_memory(tenant="*", role="coder", category="user_preferences",
                            key="tabs", title="Indentation", content="tabs, width 4")
    memory_id = engine.list_agent_memories(role="coder")[0]["id"]

    def read(kind: str, ref: int) -> tuple[str, str | None]:
        return engine.store.read_tx(_hit_text, kind, ref)

    assert read("message", mid) == ("We decided to use PostgreSQL 15 for the shared store.",
                                    None)
    assert read("item", item["id"]) == (item["text"], "active")
    assert read("agent_memory", memory_id) == ("Indentation: tabs, width 4", None)
    assert read("summary", 999) == ("", None)
    assert read("message", 999) == ("", None)

    rows = engine.store.read_tx(lambda tx: {k: tx.operator.ref_row(k, r) for k, r in (
        ("message", mid), ("item", item["id"]), ("agent_memory", memory_id))})
    assert rows["message"] == {"tenant": "t1", "role": "coder", "text": read("message", mid)[0],
                               "thread_id": thread, "msg_role": "user"}
    assert rows["item"]["source_message_id"] == mid and rows["item"]["kind"] == item["kind"]
    assert rows["agent_memory"]["tenant"] == "*"
    with pytest.raises(ValueError):
        engine.store.read_tx(lambda tx: tx.operator.ref_row("thread", 1))
    # describe_hits keeps each hit to its tenant and role (shared agent memories too)
    hits = [("message", mid, 1.0), ("item", item["id"], 0.5), ("agent_memory", memory_id, 0.2)]
    mine = engine.store.read_tx(lambda tx: overview.describe_hits(tx, hits, tenant="t1",
                                                                  role="coder"))
    assert [(h["kind"], h["id"], h["message_id"]) for h in mine] == [
        ("message", mid, mid), ("item", item["id"], mid), ("agent_memory", memory_id, None)]
    other = engine.store.read_tx(lambda tx: overview.describe_hits(tx, hits, tenant="t2",
                                                                   role="coder"))
    assert [h["kind"] for h in other] == ["agent_memory"]


def test_session_view_is_one_session(engine: Engine) -> None:
    thread, a = _capture(engine, Scope("t1", "coder", "s1"),
                         "Deploy on Friday; remember the DNS.")
    _capture(engine, Scope("t1", "coder", "s2"), "Another session altogether.")
    _capture(engine, Scope("t2", "coder", "s1"), "Another tenant, same session name.")
    engine.flush()
    view = engine.store.read_tx(storecheck.load_view, "t1", "coder", "s1")
    assert [m["id"] for m in view.messages] == a
    assert [m["text"] for m in view.messages] == ["Deploy on Friday; remember the DNS."]
    assert view.threads == [thread] and view.messages[0]["thread_id"] == thread
    assert {m["node_key"] for m in view.messages} and view.messages[0]["hidden"] == 0
    # items are the tenant and role's (the eval checks values across its sessions)
    assert all(i["source_message_id"] is not None for i in view.items)
    assert storecheck.store_invariants(
        view, [{"role": "user", "content": "Deploy on Friday; remember the DNS."}],
        whole_history=True) == {"evidence_kept": True, "stored_once": True,
                                "no_duplicate_rows": True}
