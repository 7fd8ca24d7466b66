"""Rules listed under a lead that names them: each bullet is a rule.

"Ground rules for this repo:", "Channel rules:", "Ops rules, pin these:", 团队规范：,
開発ルール： — a line that names what follows as rules, then bullets or numbered lines.
A bullet says no "always" and no "from now on" ("- no force pushes", "- tag @oncall
for anything paging"); the lead says it for all of them. The extraction marks the
items of those lines ``lasting`` (:attr:`memory_core.extraction.model.Extracted.lasting`),
so the block shows them on every turn.

The lead itself states nothing: a fact that only names rules, followed by the colon
that opens them ("Ground rules for this repo, so I don't have to repeat them: …"), is
dropped, as a heading would be.

Not a lead: a line that passes on someone else's words ("CONTRIBUTING.md says:",
"The handbook's rules:", 文档里写着：), a question, or a line with no word naming rules
("Options:", "Steps:"). Steps and options are a series or a choice, never a rule set.
Pure; called once per user message by :mod:`memory_core.extraction.pipeline`.
"""

from __future__ import annotations

import re
from dataclasses import replace

from memory_core.extraction.model import Extracted

__all__ = ["listed_rules"]

_BULLET = re.compile(r"[ \t]*(?:[-*•・+]|\d{1,2}[.)]|[(（]\d{1,2}[)）]|[①-⑩])[ \t]+")
"""The opening of a bullet or numbered line."""
_LEAD = re.compile(
    r"\b(?:rules|conventions|guidelines|norms|policies|house\s+style|ground\s+rules)\b"
    r"|\b(?:pin|remember|keep)\s+these\b"
    r"|规则|规范|规矩|约定|守则|ルール|決まり|約束事|規約", re.I)
"""Words of a lead that names the lines after it as rules."""
_OTHERS = re.compile(
    r"\b(?:says?|said|wrote|writes|reads|according\s+to|from\s+the)\b|['’]s\s+(?:\w+\s+)?"
    r"(?:rules|conventions|guidelines|norms|policies)\b"
    r"|说|写着|写道|里写|によると|には|書いて", re.I)
"""A lead that passes on someone else's rules: theirs to set, not the user's."""
_KINDS = ("fact", "decision", "constraint", "preference")
_TITLE = re.compile(
    r"\W*(?:(?:our|the|my|some|a\s+few|few|[\w-]+)\s+){0,3}"
    r"(?:rules|conventions|guidelines|norms|policies)"
    r"(?:\s+(?:for|of|in)\s+(?:this|our|the|my)\s+[\w-]+)?\W*", re.I)
"""A fact that only names rules ("Ground rules for this repo"): a heading."""
_OPENS = re.compile(r"[^.!?\n]{0,60}?[:：]")
"""The colon after a heading, within its sentence."""


def _lead_of(text: str, line_start: int) -> str | None:
    """The line above the run of bullet lines that holds ``line_start``, or None when
    a blank line or the text's start comes first."""
    end = line_start - 1
    while end > 0:
        start = text.rfind("\n", 0, end) + 1
        line = text[start:end]
        if not line.strip():
            return None
        if _BULLET.match(line) is None:
            return line
        end = start - 1
    return None


def _rule_lead(lead: str) -> bool:
    head = lead.strip()
    return (head.endswith((":", "：")) and "?" not in head and "？" not in head
            and _LEAD.search(head) is not None and _OTHERS.search(head) is None)


def _heading(text: str, item: Extracted) -> bool:
    if item.kind != "fact" or _TITLE.fullmatch(item.text) is None:
        return False
    at = text.find(item.text)
    return at >= 0 and _OPENS.match(text, at + len(item.text)) is not None


def listed_rules(text: str, items: list[Extracted]) -> list[Extracted]:
    """``items`` with each statement on a bullet line under a rule lead (module doc)
    marked ``lasting``, and a fact that is only the heading of rules dropped; a guess,
    a quoted, dated or task-local item, a question or a task line is left as it is.
    ``text``: the message; ``items`` in text order."""
    items = [i for i in items if not _heading(text, i)]
    if "\n" not in text:
        return items
    out: list[Extracted] = []
    cursor = 0
    for item in items:
        at = text.find(item.text, cursor)
        if at >= 0:
            cursor = at
            if item.kind in _KINDS and not (item.lasting or item.tentative or item.quoted
                                            or item.dated or item.local):
                line_start = text.rfind("\n", 0, at) + 1
                bullet = _BULLET.match(text, line_start)
                if bullet is not None and bullet.end() <= at:
                    lead = _lead_of(text, line_start)
                    if lead is not None and _rule_lead(lead):
                        item = replace(item, lasting=True, one_off=False)
        out.append(item)
    return out
