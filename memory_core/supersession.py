"""Which stored item a new statement revises: the matching rules behind supersession.

A correction replaces the best-matching active item of its tenant and role
(:func:`correction_target`); a plain statement restates or conflicts with an item
whose subject matches (:func:`subjects_match`) — in both cases only under the same
condition (:func:`conditions_agree`): "the timeout is 30 s when offline" and "the
timeout is 5 s" are two facts, never one correcting the other. Read-only helpers,
called by ``memory_core.memory`` inside the writer's transaction.
"""

from __future__ import annotations

import re
import sqlite3
from typing import Any

from memory_core.extraction.units import unit_class
from memory_core.models import Scope
from memory_core.overlap import covered, overlap, terms

CORRECTION_SCAN = 20000
"""Most active items a correction compares itself with (newest first)."""


def subjects_match(a: str | None, b: str | None) -> bool:
    """True when two normalised subjects name the same thing (equal, or one contains
    the other as whole words / CJK substring, the shorter ≥ 2 characters)."""
    if not a or not b:
        return False
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    if len(short) < 2:
        return False
    if re.search(r"[\u3040-\u30ff\u3400-\u9fff]", short):
        return short in long_
    return re.search(rf"(?<!\w){re.escape(short)}(?!\w)", long_) is not None


def conditions_agree(ex: Any, row: sqlite3.Row) -> bool:
    """Whether a new item and a stored one hold under the same condition.

    Each side's condition terms must mostly (≥ half) appear in the other side's
    text, so "for long-polling clients" as a condition agrees with a statement that
    names long-polling clients in its subject, "when offline" never agrees with an
    unconditional statement, and two items without a condition always agree.
    """
    new_cond, old_cond = terms(ex.condition), terms(row["condition"])
    return (covered(new_cond, terms(row["text"])) >= 0.5
            and covered(old_cond, terms(ex.text)) >= 0.5)


def correction_target(conn: sqlite3.Connection, scope: Scope, ex: Any,
                      kinds: tuple[str, ...]) -> sqlite3.Row | None:
    """The active item a correction ``ex`` replaces, or None (module docstring).

    Candidates are the active items of ``kinds`` in the tenant and role, however old
    (the newest ``CORRECTION_SCAN``; corrections are rare, the scan is cheap).
    Each must agree on the condition (:func:`conditions_agree`) and on the unit's
    dimension (both without a unit, or both of one class; a subject match may
    also pair a unit with none). Among them: a matching subject scores highest,
    else term overlap (:func:`memory_core.overlap.overlap`) of at least 0.5 with
    two shared terms (one when a side has only one); ties go to the newest.
    """
    new_terms = terms(ex.text)
    new_unit = unit_class(ex.unit)
    best: tuple[float, int, int] | None = None
    found: sqlite3.Row | None = None
    fallback: sqlite3.Row | None = None
    rows = conn.execute(
        f"SELECT id, subject, text, unit, condition FROM memory_items WHERE tenant=? AND"
        f" role=? AND status='active' AND kind IN ({','.join('?' * len(kinds))})"
        f" ORDER BY id DESC LIMIT {CORRECTION_SCAN}", (scope.tenant, scope.role, *kinds))
    for row in rows:
        if not conditions_agree(ex, row):
            continue
        old_unit = unit_class(row["unit"])
        same_unit = new_unit == old_unit
        if new_unit and old_unit and not same_unit:
            continue
        if fallback is None and new_unit and same_unit:
            fallback = row
        if ex.subject and subjects_match(ex.subject, row["subject"]):
            score: tuple[float, int, int] = (2.0, 0, int(row["id"]))
        elif same_unit:
            old_terms = terms(row["text"])
            shared = len(new_terms & old_terms)
            if shared < min(2, len(new_terms), len(old_terms)):
                continue
            score = (overlap(new_terms, old_terms), shared, int(row["id"]))
            if score[0] < 0.5:
                continue
        else:
            continue
        if best is None or score > best:
            best, found = score, row
    if found is None and not ex.subject and fallback is not None:
        return fallback  # "I meant 45 s": the newest value of that kind
    return found
