"""Chinese "not X but Y" (不是…而是…): the Y is the statement, the X is denied.

"我们用的不是MySQL，而是PostgreSQL" says the team uses PostgreSQL; read as written it was
one fact keyed by the denied part (``不是mysql而``), so a later question about PostgreSQL
found nothing keyed by it and "我们用MySQL" said earlier stayed unrivalled. The forms:

* 不是X，而是Y / 不是X而是Y / 不是X，是Y — "我们的数据库不是MySQL，而是PostgreSQL";
* a negated verb and its object, then 而是 and the verb again or not — "我不用Vim，而是用
  Emacs", "我们没用Jira，而是用Linear", "我不喜欢咖啡，而是喜欢茶".

:func:`affirm` masks the denied part of the prepared scan so the sentence reads as its
affirmative ("我们用的是PostgreSQL", "我用Emacs"): the item still quotes the
sentence whole, denied part included, and is keyed and classed by the Y. Not a contrast
of explanations — "不是我不想去，而是没时间" (X is a clause with its own subject or a
negation of its own) stays as written, as does an X longer than a phrase. Replacements
that name a change (不用X了，改用Y) are :mod:`.replacement`'s.

Pure: the prepared scan in (full-width commas already half-width), a scan of the same
length out.
"""

from __future__ import annotations

import re

from memory_core.extraction.prepare import MASK

_X = r"(?P<x>[^,.;:!?。；！？、\n]{1,24}?)"
_COPULA = re.compile(r"不是" + _X + r"(?:\s*,\s*而是|而是|\s*,\s*是)(?=[^\s,.;!?。！？])")
_VERB = "用|使用|喜欢|爱|住在|住|在|选|选择|要|喝|吃|坐|开|学|去"
_NEGATED = re.compile(r"(?:不|没有?|沒有?)(?P<v>" + _VERB + r")" + _X
                      + r"(?:\s*,\s*而是|而是)(?P<again>(?P=v))?(?=[^\s,.;!?。！？])")
_Y_END = re.compile(r"\s*[,.;:!?。；！？\n]|$")
_PERSON_BEFORE = re.compile(r"(?:我们|咱们|我們|我)$")
_PERSON = re.compile(r"[我你他她它您咱]|因为")
_NEGATION = re.compile(r"[不没沒]")


def _clause(x: str) -> bool:
    """An X that opens on a person or holds a negation is a clause: "不是我不想去"."""
    return _PERSON.match(x) is not None or _NEGATION.search(x) is not None


def affirm(scan: str) -> tuple[str, list[tuple[int, int, int, int]]]:
    """``scan`` with the denied X of each "不是X，而是Y" masked, length kept, and where
    each X and Y are: ``(x_start, x_end, y_start, y_end)`` in text order.

    For 不是X而是Y the mask runs from 不 to 而 (是Y stays: "我们用的▯▯▯▯▯▯▯▯▯是PostgreSQL").
    For a negated verb the mask runs from the negation to the verb said again, or to Y
    with the first verb kept; a person that opens the clause right before the negation
    (我, 我们…) is written again next to the verb, so the affirmative reads whole
    ("我不用Vim，而是用Emacs" → "▯▯▯▯▯▯▯▯▯我用Emacs", a preference as "我用Emacs" is).
    Returns ``(scan, [])`` where no such form is found; never raises.
    """
    if "是" not in scan or ("不" not in scan and "没" not in scan and "沒" not in scan):
        return scan, []
    chars = list(scan)
    denied: list[tuple[int, int, int, int]] = []
    for m in _COPULA.finditer(scan):
        if not _clause(m.group("x")):
            chars[m.start():m.end() - 1] = MASK * (m.end() - 1 - m.start())
            denied.append(_where(scan, m))
    for m in _NEGATED.finditer(scan):
        if _clause(m.group("x")) or any(x <= m.start() < y for x, _, y, _ in denied):
            continue
        denied.append(_where(scan, m))
        if m.group("again"):
            at = m.start("again")
            chars[m.start():at] = MASK * (at - m.start())
        else:
            at = m.start("x")
            chars[m.start():m.start("v")] = MASK * (m.start("v") - m.start())
            chars[at:m.end()] = MASK * (m.end() - at)
            moved = scan[m.start("v"):at]  # the verb goes next to Y
            chars[m.end() - len(moved):m.end()] = list(moved)
            at = m.end() - len(moved)
        person = _PERSON_BEFORE.search(scan, max(0, m.start() - 2), m.start())
        if person is not None:
            word = person.group()
            chars[person.start():at] = MASK * (at - person.start() - len(word)) + word
    return "".join(chars), sorted(denied)


def _where(scan: str, m: re.Match[str]) -> tuple[int, int, int, int]:
    end = _Y_END.search(scan, m.end())
    return m.start("x"), m.end("x"), m.end(), end.start() if end else len(scan)
