"""Operator reads of memory_core.store.api on a real engine: the rows a search hit
names (``ref_row``, the eval's hit texts) and one session's rows (the eval's store
checks), each kept to its tenant, role and session."""

from __future__ import annotations

import pytest

from memory_core.admin import overview
from memory_core.engine import Engine
from memory_core.models import Scope
from proxy.evaluation import storecheck
from proxy.evaluation.runner import _hit_text


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


def test_crowd_eval_reads_conflicts_and_sessions(engine: Engine) -> None:
    """The crowd evaluation's reads (proxy/evaluation/crowd.py): a session's tenant,
    a message's text with its thread's session, and every conflicting pair."""
    scope = Scope("t1", "coder", "alice-a")
    _thread, [first] = _capture(engine, scope, "The staging database port is 5432.")
    other = Scope("t1", "coder", "bob-a")
    _capture(engine, other, "The staging database port is 6543.")
    engine.flush()
    reads = engine.store.read_tx(lambda tx: (
        tx.operator.session_tenant("alice-a"), tx.operator.session_tenant("nobody"),
        tx.operator.message_session(first), tx.operator.message_session(10**9),
        tx.operator.conflict_pairs()))
    assert reads[:4] == ("t1", None, {"text": "The staging database port is 5432.",
                                      "session": "alice-a"}, None)
    pairs = reads[4]
    assert pairs, "two ports for one subject should be marked as conflicting"
    assert {(p["a_msg"], p["b_msg"]) for p in pairs} <= {
        ("The staging database port is 6543.", "The staging database port is 5432."),
        ("The staging database port is 5432.", "The staging database port is 6543.")}
    assert all(p["a_text"] and p["b_text"] for p in pairs)
