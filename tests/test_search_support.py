"""Helpers shared by the search tests (no tests here): capture chats, open a service."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from memory_core.engine import Engine
from memory_core.models import Scope
from memory_core.search import HashingEmbedder, SearchConfig, SearchService, SerialEmbedder
from tests.conftest import sql_read


def capture_chat(engine: Engine, scope: Scope, texts: list[str], *, now: float | None = None,
                 request_id: str = "req") -> list[int]:
    """Store ``texts`` as one alternating user/assistant chat; return the message ids."""
    from memory_core.capture import evidence
    from memory_core.models import CaptureTicket

    messages: list[Any] = [
        {"role": "user" if i % 2 == 0 else "assistant", "content": t} for i, t in enumerate(texts)
    ]
    ticket = CaptureTicket(scope=scope, request_id=request_id)
    result = engine.store.write_tx(evidence.capture_request, ticket, messages, {}, now).result(30)
    return list(result.message_ids)


class Conversation:
    """One growing chat of ``scope`` sent through the engine's capture path, as a
    client resends its history: :meth:`say` stores a user turn and the reply."""

    def __init__(self, engine: Engine, scope: Scope) -> None:
        self.engine, self.scope = engine, scope
        self.history: list[dict[str, str]] = []

    def say(self, text: str, reply: str) -> None:
        """Capture the history plus ``text`` (user), then ``reply`` (assistant);
        waits up to 10 s for each write. Extraction is queued after it."""
        self.history.append({"role": "user", "content": text})
        ticket, fut = self.engine.capture_request(self.scope, "r", list(self.history), {})
        fut.result(10)
        self.engine.capture_response(ticket, [{"role": "assistant", "content": reply}],
                                     {}).result(10)
        self.history.append({"role": "assistant", "content": reply})


def open_service(data_dir: Path, engine: Engine, *, embedder: Any = "hashing",
                 **cfg: Any) -> SearchService:
    emb = SerialEmbedder(HashingEmbedder(64)) if embedder == "hashing" else embedder
    base = dict(commit_interval_ms=0, poll_interval_ms=20, vector_save_interval_seconds=0.0,
                query_timeout_seconds=60.0)
    base.update(cfg)
    return SearchService(engine.store, data_dir, SearchConfig(**base), emb)


@contextlib.contextmanager
def running_service(data_dir: Path, **cfg: Any) -> Iterator[tuple[Engine, SearchService]]:
    """An engine on ``data_dir`` and a started :func:`open_service` over it (``cfg``:
    its SearchConfig overrides); both closed on exit."""
    engine = Engine(data_dir)
    svc = open_service(data_dir, engine, **cfg)
    svc.start()
    try:
        yield engine, svc
    finally:
        svc.close()
        engine.close()


_TEXT = {"message": ("messages", "text"), "item": ("memory_items", "text"),
         "agent_memory": ("agent_memories", "content"), "summary": ("summary_nodes", "text")}


def hit_text(engine: Engine, kind: str, ref_id: int) -> str:
    """The stored text of a search hit (an agent memory's content)."""
    table, col = _TEXT[kind]
    return str(sql_read(engine, lambda c: c.execute(
        f"SELECT {col} FROM {table} WHERE id=?", (ref_id,)).fetchone()[0]))
