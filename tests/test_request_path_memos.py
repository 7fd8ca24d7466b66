"""Memos and shortcuts on the request path keep their results: a block line rendered
once per row, relative days scanned only in the scripts a text can hold, and content
terms built from memoised word tokens (issue 28; docs/evaluation/README.md, "Three
memos on the critical path at 1,000 turns")."""

from __future__ import annotations

import random
import re
from datetime import date
from typing import Any

import pytest

from memory_core.assembly import block as asm
from memory_core.extraction import relative_dates as rd
from memory_core.items import overlap

_PIECES = ("tomorrow", "Yesterday", "the day after tomorrow", "next Friday", "last night",
           "in 3 days", "two weeks ago", "this month", "TODAY", "tonight", "coming monday",
           "明天", "下周五", "3天后", "来週の月曜日", "一昨日", "来月", "今日", "昨晚",
           "ſunday", "\u212aeep", "İn 2 days", "…", "—", "é", "nodes", "version 1.2.3",
           "eu-west-1", "p99", "running", "classes", "don't", "it's", "re-run", "v2.0-",
           "东京タワー", "导出旧集群的配置", "한국어", " ", "\n", ",", ".", "-", "'")


def _texts(seed: int, n: int) -> list[str]:
    rng = random.Random(seed)
    out = ["", "Quick update on the scheduler on the backup site: … the queue depth is 32483",
           "Keep in mind that the target is under 400 ms after yesterday's change."]
    for _ in range(n):
        out.append(" ".join(rng.choice(_PIECES) for _ in range(rng.randint(1, 12))))
    return out


def test_relative_days_found_without_the_cjk_scans_where_none_can_match() -> None:
    def every_script(text: str, anchor: date) -> list[tuple[str, str]]:
        saved = rd._EN_ONLY
        rd._EN_ONLY = rd._ALL_SCRIPTS
        try:
            return rd._resolve(text, anchor)
        finally:
            rd._EN_ONLY = saved

    anchor = date(2026, 12, 9)
    texts = _texts(1, 3000)
    assert any(rd._resolve(t, anchor) for t in texts if t.isascii())
    assert any(rd._resolve(t, anchor) for t in texts if max(t, default="a") >= "\u3000")
    for text in texts:
        assert rd._resolve(text, anchor) == every_script(text, anchor), text


def _old_terms(text: str | None) -> frozenset[str]:
    """:func:`overlap.terms` as written before its token memo."""
    if not text:
        return frozenset()
    low = text.lower()
    out = overlap._cjk_terms(low)
    for tok in overlap._EN_TOKEN.findall(low):
        if tok in overlap._EN_STOP or overlap._VALUE.search(tok):
            continue
        for part in tok.split("-"):
            part = part.strip("'._")
            if len(part) > 1 and part not in overlap._EN_STOP and not part[0].isdigit():
                out.add(overlap._stem(part))
    return frozenset(out)


def test_content_terms_match_the_token_loop_in_order_across_memo_drops(
        monkeypatch: pytest.MonkeyPatch) -> None:
    texts = _texts(2, 3000)
    for size in (50_000, 7):  # 7: the token memo is dropped many times
        monkeypatch.setattr(overlap, "_TOKEN_TERMS_MAX", size)
        overlap._TOKEN_TERMS.clear()
        overlap.terms.cache_clear()
        for text in texts:
            got = overlap.terms(text)
            want = _old_terms(text)
            assert got == want, text
            assert list(got) == list(want), text  # iterated in the same order
    assert overlap.terms(None) == frozenset()


def _row(item_id: int, text: str, **kw: Any) -> dict[str, Any]:
    row: dict[str, Any] = {"id": item_id, "kind": "fact", "status": "active", "text": text,
                           "source_message_id": item_id * 2, "evidence": "user",
                           "created_at": 1_796_000_000.0 + item_id, "data": None}
    row.update(kw)
    return row


def test_item_line_is_rendered_once_per_row_and_what_it_reads(
        monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[str] = []
    real_note = rd.note

    def counted(text: str, said_at: float, zone: str = "") -> str:
        calls.append(text)
        return real_note(text, said_at, zone)

    monkeypatch.setattr(rd, "note", counted)
    row = _row(7, "The flight is tomorrow, gate 12", data='{"speaker": "Ann", "tz": "Asia/Tokyo"}')
    old = _row(3, "The flight is on Friday", status="superseded", superseded_by=7)
    first = asm._item_line(row, old, None, 400)
    assert asm._item_line(row, old, None, 400) == first
    assert asm._item_line(row, dict(old), None, 400) == first  # a fresh read of ``old``
    assert len(calls) == 1  # rendered once

    # Whatever the line reads of the other rows renders it again, as a fresh render.
    other_old = _row(3, "The flight is on Saturday", status="superseded")
    conflict = _row(9, "The flight is next week")
    similar = [_row(11, "flight tomorrow"), _row(12, "the flight: tomorrow")]
    for args in ((other_old, None, 400, ()), (other_old, conflict, 400, ()),
                 (other_old, conflict, 20, ()), (other_old, conflict, 20, similar),
                 (other_old, conflict, 20, similar[:1]), (None, None, 400, ())):
        assert asm._item_line(row, *args) == asm._render_item_line(row, *args)
    assert re.search(r"said \w+ 2026-\d\d-\d\d Asia/Tokyo: tomorrow = ", first)

    # A changed item is a new row object: its own line, not the old one's.
    changed = dict(row, text="The flight is tomorrow, gate 14")
    assert "gate 14" in asm._item_line(changed, old, None, 400)
    assert asm._item_line(row, old, None, 400) == first


def test_item_line_memo_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(asm, "_LINES_MAX", 5)
    rows = [_row(i, f"item number {i}") for i in range(1, 30)]
    lines = [asm._item_line(r, None, None, 400) for r in rows]
    assert len(asm._LINES) <= 5
    assert [asm._item_line(r, None, None, 400) for r in rows] == lines
