"""The items the rules and the writer produce over two conversations equal a saved
reference (issue 28: the request capture's CPU at 1,000 turns). Speed-ups of the
extraction rules and of ``correction_target`` must keep every output: each turn's
``extract()`` result and the stored rows (status, supersession links, data) after
storing the turns in order. Real extraction, real store.

The reference, ``tests/data/capture_items_reference.json``, was written by the code
before those speed-ups; a change meant to alter what is extracted or stored writes it
again (``python -m tests.test_capture_items_reference --write``) and says so.
Conversations: 60 turns of issue 28's ``numbers`` workload, and a 60-turn session
of the eval's generator with Chinese primary (English, Chinese and Japanese turns).
"""

from __future__ import annotations

import dataclasses
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from memory_core.engine import Engine
from memory_core.extraction import extract
from memory_core.items import writer
from memory_core.models import Scope
from proxy.evaluation.generator import generate_session
from proxy.evaluation.numbersgen import numbers_session
from tests.conftest import sql_read

REFERENCE = Path(__file__).parent / "data" / "capture_items_reference.json"
REFRESH = ("outputs differ from the reference; if the change is meant (new rules, not a "
           "speed-up), write it again: python -m tests.test_capture_items_reference --write")
SCOPE = Scope("t", "coder")
COLUMNS = ("id", "kind", "subject", "text", "value", "value_text", "unit", "condition",
           "status", "supersedes", "superseded_by", "conflict_with", "evidence", "lang",
           "data")


def _texts(name: str) -> list[tuple[str, str]]:
    """``(speaker, text)`` of each message, user turns and replies in order."""
    if name == "numbers":
        turns = numbers_session(1, 60).turns
    else:
        turns = generate_session(1, "mix", 60, "zh").turns
    out: list[tuple[str, str]] = []
    for t in turns:
        out.append(("user", t.text))
        if t.reply:
            out.append(("assistant", t.reply))
    return out


def _fields(item: Any) -> dict[str, Any]:
    """An item's fields that differ from their defaults (the fixture stays small)."""
    return {f.name: getattr(item, f.name) for f in dataclasses.fields(item)
            if f.default is dataclasses.MISSING or getattr(item, f.name) != f.default}


def _plain(value: Any) -> Any:
    return json.loads(json.dumps(value, default=repr, ensure_ascii=False))


def produce(engine: Engine, name: str) -> dict[str, Any]:
    """Every message's extraction (user messages stored as they come) and the
    stored rows at the end."""
    extracted = []
    for speaker, text in _texts(name):
        found = extract(text, speaker=speaker)
        extracted.append([_fields(x) for x in found])
        if speaker == "user":
            engine.store.write_tx_sync(lambda c, found=found: writer.store_extracted(
                c, SCOPE, 1, None, found))
    rows = sql_read(engine, lambda c: [list(r) for r in c.execute(
        f"SELECT {', '.join(COLUMNS)} FROM memory_items ORDER BY id")])
    return _plain({"extracted": extracted, "rows": rows})


@pytest.mark.parametrize("name", ["numbers", "mixed"])
def test_items_equal_the_reference(engine: Engine, name: str) -> None:
    want = json.loads(REFERENCE.read_text(encoding="utf-8"))[name]
    got = produce(engine, name)
    assert len(got["extracted"]) == len(want["extracted"])
    for i, (g, w) in enumerate(zip(got["extracted"], want["extracted"], strict=True)):
        assert g == w, f"message {i}: {REFRESH}"
    assert got["rows"] == want["rows"], REFRESH
    statuses = {r[COLUMNS.index("status")] for r in got["rows"]}
    assert "superseded" in statuses  # the corrections were looked up and landed


def _write() -> None:
    out = {}
    for name in ("numbers", "mixed"):
        with tempfile.TemporaryDirectory() as d:
            eng = Engine(Path(d) / "d")
            try:
                out[name] = produce(eng, name)
            finally:
                eng.close()
    REFERENCE.write_text(json.dumps(out, ensure_ascii=False, separators=(",", ":")) + "\n",
                         encoding="utf-8")


if __name__ == "__main__" and sys.argv[1:] == ["--write"]:
    _write()
