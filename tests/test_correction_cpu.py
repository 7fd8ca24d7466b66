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


def _has_digit_before(text: str | None) -> bool:
    """``_has_digit`` as it was: every text with ``@``, ``/`` or ``.`` searched."""
    from memory_core.extraction import shapes

    text = text or ""
    if any(ch in text for ch in "@/."):
        text = shapes._ADDRESS.sub(" ", text)
    return any(ch.isdigit() for ch in text)


def test_has_digit_skips_the_address_search_with_the_same_answers() -> None:
    """A text without ``@``, two ``/`` or ``www.`` holds no address: the search is
    skipped ("19013 req/s.") and every answer stays the one the search gave, on the
    workload's turns and on texts whose digits are all in an address, a handle, a
    path or a URL (the cases the search is for), in any case."""
    from memory_core.extraction import shapes

    texts = [t.text for t in numbers_session(3, 120).turns] + [
        "Mail me at jon1984@example.com.", "ping @dev42 today", "see ~/src/v2/main.py",
        "open ../a1/b2", "go to https://x.io/9", "go to HTTP://X.IO/9", "WWW.a1.com now",
        "www.x7.org", "Www.site9.net.", "3 req/s", "a/b/c 7", "/v1 only", "3.5 ms.",
        "no digits here.", "", "jon@x.com is 12", "version 2.1.63 on 53 nodes",
        "全角 ｗｗｗ.ｘ９.com", "value ٣ (Arabic-Indic)", "superscript ² here",
        "x/y 2/3", "e.g. v1.2", "@ 5", "//9", "w w w.9",
    ]
    calls: list[str] = []
    real = shapes._ADDRESS

    class Spy:
        def sub(self, repl: str, text: str) -> str:
            calls.append(text)
            return real.sub(repl, text)

    for text in texts:
        assert supersession._has_digit(text) == _has_digit_before(text), text
        assert shapes.without_addresses(text) == (
            real.sub(" ", text) if any(ch in text for ch in "@/.") else text), text
    shapes._ADDRESS = Spy()  # type: ignore[assignment]
    try:
        for text in ("3 req/s for 12 nodes.", "version 2.1.63 on 53 nodes."):
            supersession._has_digit(text)
    finally:
        shapes._ADDRESS = real  # type: ignore[misc]
    assert calls == []
    assert supersession._has_digit("ask jon1984@example.com") is False
    assert supersession._has_digit("see ~/src/v2/main.py") is False
    assert supersession._has_digit("Www.site9.net") is False
    assert supersession._has_digit("3 req/s") is True
