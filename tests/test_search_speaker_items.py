"""A question that names a speaker ranks what that speaker said first, when it is
found as the item extracted from the turn (issue 24, rank-1 of the crowd eval):
items carry their speaker into the text index's ``speaker`` field and the speaker
boost. Wording here is not the crowd eval's."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memory_core.engine import Engine
from memory_core.models import Scope
from tests.conftest import sql_read
from tests.test_search_support import hit_text, running_service

A = Scope(tenant="tenantA", role="default")


def _group_chat(engine: Engine, turns: list[tuple[str | None, str]]) -> None:
    """Send ``(name, text)`` user turns as one growing chat through the capture path
    (each with a short reply), so that extraction stores items with their speaker."""
    history: list[dict[str, Any]] = [{"role": "system", "content": "A team chat."}]
    for name, text in turns:
        history.append({"role": "user", "content": text, **({"name": name} if name else {})})
        ticket, fut = engine.capture_request(A, "r", list(history), {})
        fut.result(10)
        engine.capture_response(ticket, [{"role": "assistant", "content": "Noted."}],
                                {}).result(10)
        history.append({"role": "assistant", "content": "Noted."})
    engine.flush(10)


TURNS: list[tuple[str | None, str]] = [
    ("oskar", "I live in Tromso."),
    ("petra", "I live in Graz."),
    (None, "Our espresso machine is a Rancilio."),
    (None, "The office plants need water on Mondays."),
    ("oskar", "My cat is called Pixel."),
]


def test_an_item_said_by_the_named_speaker_ranks_first(tmp_path: Path) -> None:
    with running_service(tmp_path) as (engine, svc):
        _group_chat(engine, TURNS)
        assert svc.wait_idle(20)
        speakers = sql_read(engine, lambda c: dict(c.execute(
            "SELECT text, json_extract(data, '$.speaker') FROM memory_items"
            " WHERE status='active'").fetchall()))
        assert speakers["I live in Graz."] == "petra", speakers
        for name, town in (("Petra", "Graz"), ("Oskar", "Tromso")):
            hits = svc.search("tenantA", "default", f"Which city is {name} based in?")
            top = hits[0]
            assert (top.kind, hit_text(engine, top.kind, top.ref_id)) == (
                "item", f"I live in {town}."), [(h.kind, h.boosts) for h in hits[:3]]
            assert top.boosts.get("speaker") == svc.config.speaker_boost
        # the boost follows the name in the query, not a speaker of the scope at large
        hits = svc.search("tenantA", "default", "What is the espresso machine?")
        assert all("speaker" not in h.boosts for h in hits)


def test_the_text_index_holds_an_items_speaker(tmp_path: Path) -> None:
    with running_service(tmp_path) as (engine, svc):
        _group_chat(engine, TURNS[:2])
        assert svc.wait_idle(20)
        # "live" matches both items; the name matches the speaker field of one
        hits = svc.search("tenantA", "default", "petra live", mode="bm25", kinds=["item"])
        assert [hit_text(engine, h.kind, h.ref_id) for h in hits][:1] == ["I live in Graz."]
