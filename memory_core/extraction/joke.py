"""Claims the user takes back as a joke: "I'm the king of France, jk", 我是法国国王，开玩笑的,
私はフランスの王様です、冗談です.

A joke stored as a fact is shown in later conversations as what the agent knows of the
user (docs/evaluation/memory_replays.md, class 64). Whether a claim is plausible needs
knowledge of the world; what the rules can read is the user's own retraction after the
claim. :func:`joke_spans` finds a retracting marker and the claim it takes back, and
``prepare`` masks both as material (no item; the message stays evidence):

* a marker that retracts what was just said: "jk", "j/k", "just kidding", "just
  joking", "I'm kidding", "kidding", "not really", "lol no", "April fools"; 开玩笑的,
  开个玩笑, 开玩笑啦, 逗你的, 骗你的, 说着玩的; 冗談です, 冗談だよ, なんてね, うそです, 嘘だよ;
* it takes back the sentence it closes ("I'm the king of France, jk"), or, when it
  opens its own sentence ("I'm the king of France. Just kidding!"), the sentence before
  (not a question: "Do I like Java? Not really." answers it). What follows a strong
  marker in its sentence is the user's again ("I'm 30, jk, I'm 35" keeps "I'm 35");
  a weak one ("not really", "kidding", 冗談, 嘘) counts only at the end of its sentence.

A laugh alone ("lol", "haha", 哈哈, 笑, w, 草, 🤣) retracts nothing: "lol I moved to
Berlin last week" is a real fact said with a laugh, and only knowledge of the world
tells "I'm the king of France" from "I'm a nurse". A denied marker is no retraction
("I'm not kidding", "no joke", 不是开玩笑, 冗談じゃない, 冗談抜きで), nor is the user's
reaction to someone else ("you're kidding", 别开玩笑了, うそでしょ).

Bounded patterns, one scan per script; linear in the message.
"""

from __future__ import annotations

import re

_TAIL = r"(?=[\s\W_\u54c8\u5566\u7b11\u8349w]*(?:$|[.!?\u3002\uff01\uff1f\n]))"
"""Only punctuation, spaces, emoji or a laugh (哈, 啦, 笑, 草, w) up to the sentence end."""
_STRONG_EN = (r"(?<![\w'])(?:jk|j/k|just\s+(?:kidding|joking|messing(?:\s+with\s+you)?)"
              r"|(?:i'm|im|i\s+am)\s+(?:only\s+|just\s+)?(?:kidding|joking)"
              r"|lol\s+no|haha\s+no|april\s+fools?)\b")
_WEAK_EN = r"(?<![\w'])(?:not\s+really|kidding|joking|nah)\b" + _TAIL
_MARK_EN = re.compile(r"(?:" + _STRONG_EN + r")|(?P<weak>" + _WEAK_EN + r")", re.I)
_DENIED_EN = re.compile(r"(?:\b(?:not|no|never|you're|youre|you\s+are|you\s+must\s+be|are\s+you)"
                        r"|n't)\s+(?:\w+\s+)?$", re.I)
"""Words before a marker that make it no retraction: "I'm not kidding", "you're kidding"."""
_STRONG_CJK = (r"(?:开玩笑的|开个玩笑|开玩笑啦|开玩笑而已|逗你(?:的|玩的|呢)|骗你的|说着玩的|瞎说的"
               r"|なんてね|なーんてね|冗談(?:です|だよ|でした|ですよ|だって))")
_WEAK_CJK = r"(?:冗談|うそ(?:です|だよ)?|嘘(?:です|だよ)?|ウソ(?:です|だよ)?)" + _TAIL
_MARK_CJK = re.compile(r"(?:" + _STRONG_CJK + r")|(?P<weak>" + _WEAK_CJK + r")")
_DENIED_CJK = re.compile(r"(?:不是|没|没有|别|不要|不)$")
_DENIED_AFTER_CJK = re.compile(r"^(?:じゃな|ではな|抜き|でしょ|だろ|みたい)")
_SENTENCE_END = re.compile(r"[.!?\u3002\uff01\uff1f\n]")
_CONTENT = re.compile(r"[^\W_]")


def _sentence_start(scan: str, at: int) -> int:
    i = at
    while i > 0 and not _SENTENCE_END.match(scan, i - 1):
        i -= 1
    return i


def _sentence_end(scan: str, at: int) -> int:
    m = _SENTENCE_END.search(scan, at)
    return len(scan) if m is None else m.end()


def joke_spans(scan: str) -> list[tuple[int, int]]:
    """Spans of ``scan`` (width-folded text) that a joke marker takes back, the marker
    included (module doc), as ``(start, end)`` offsets in order; empty when the message
    retracts nothing as a joke."""
    spans: list[tuple[int, int]] = []
    marks = list(_MARK_EN.finditer(scan))
    if not scan.isascii():
        marks += _MARK_CJK.finditer(scan)
    for m in sorted(marks, key=lambda m: m.start()):
        before = scan[max(0, m.start() - 30):m.start()]
        if m.re is _MARK_EN and _DENIED_EN.search(before):
            continue
        if m.re is _MARK_CJK and (_DENIED_CJK.search(before)
                                  or _DENIED_AFTER_CJK.match(scan, m.end())):
            continue
        start = _sentence_start(scan, m.start())
        end = _sentence_end(scan, m.end()) if m.group("weak") else m.end()
        if not _CONTENT.search(scan, start, m.start()):
            # the marker opens its sentence: it takes back the sentence before
            j = start
            while j > 0 and (scan[j - 1].isspace() or _SENTENCE_END.match(scan, j - 1)):
                j -= 1  # past the ends of the sentence before ("…", "!!")
            if "?" in scan[j:start] or "\uff1f" in scan[j:start]:
                continue
            if j > 0:
                start = _sentence_start(scan, j)
            elif m.group("weak"):
                continue
            # else it opens the message, taking back the user's previous turn (out of
            # reach here): a strong marker is a lead, masked alone
        if spans and start < spans[-1][1]:
            spans[-1] = (spans[-1][0], max(end, spans[-1][1]))
        else:
            spans.append((start, end))
    return spans
