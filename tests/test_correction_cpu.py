"""What a correction's target lookup reads (issue 28: the capture's CPU deep in a
conversation). A correction that states a value never asks whether it is an
impression (:func:`memory_core.items.supersession.impression`): only a value-less
one is compared with its candidates' register. Real extraction, real store."""

from __future__ import annotations

from typing import Any

import pytest

from memory_core.engine import Engine
from memory_core.extraction import extract
from memory_core.items import supersession, writer
from memory_core.models import Scope
from proxy.evaluation.numbersgen import numbers_session
from tests.conftest import sql_read

SCOPE = Scope("t", "coder")


def _store(engine: Engine, texts: list[str]) -> list[tuple[Any, ...]]:
    for text in texts:
        engine.store.write_tx_sync(lambda c, text=text: writer.store_extracted(
            c, SCOPE, 1, None, extract(text)))
    return sql_read(engine, lambda c: [tuple(r) for r in c.execute(
        "SELECT text, status, superseded_by FROM memory_items ORDER BY id")])


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[tuple[str, bool]]:
    calls: list[tuple[str, bool]] = []
    real = supersession.impression

    def impression(text: str, subject: Any, kind: Any, *, asides: bool = False) -> bool:
        calls.append((text, asides))
        return real(text, subject, kind, asides=asides)

    monkeypatch.setattr(supersession, "impression", impression)
    return calls


def test_a_conversation_of_valued_corrections_reads_no_impression(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 28's workload: each turn corrects values ("the disk quota is 102 GB"),
    about three lookups a message; none reads the correction's register, and the
    corrections still land (items superseded)."""
    calls = _spy(monkeypatch)
    rows = _store(engine, [t.text for t in numbers_session(1, 40).turns])
    assert sum(1 for _, status, _ in rows if status == "superseded") >= 5
    assert calls == []


def test_a_valueless_correction_still_reads_its_register(
        engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    old, new = "The new build is great.", "Actually the new build is terrible."
    calls = _spy(monkeypatch)
    rows = _store(engine, [old, new])
    assert [(t, s) for t, s, _ in rows] == [(old, "superseded"), (new, "active")]
    own = [c for c in calls if not c[1]]
    assert own and all(text == new for text, _ in own)
    assert len(own) == 1  # read once however many candidates are compared
