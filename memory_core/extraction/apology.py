"""An apology that leads a statement: "Sorry, I live in Hamburg.", "I'm so sorry, …",
"Oops, …", "My bad, …", "Apologies, …"; 抱歉，…, 对不起，…, 不好意思，…; すみません、…,
申し訳ありません、….

The apology says nothing about the statement's subject. Read as part of it, it hid
the statement (docs/evaluation/memory_replays.md, class 80): "I'm sorry, I live in
Hamburg." gave no item, "sorry" read as an impression (``lexicon.EN_EVALUATIVE``) so the
item rivalled no earlier value, and 抱歉 added terms that kept "抱歉，我住在汉堡。" from
conflicting with "我住在柏林。". :func:`apology_end` finds such a lead so that
extraction skips it (``pipeline``, after a correction cue and before the fillers, which
know a bare "sorry") and the writer compares what follows it (:func:`without_apology`,
``items.overlap.without_opener``). An apology is only a lead when a mark sets it off ("Sorry,",
"抱歉，", "すみません、"): "I'm sorry to hear that" and "Sorry for the late reply" are
no leads. Skipping the apology decides nothing: a correction cue after it ("Sorry, I
was wrong earlier: …", 抱歉，我说错了，…) is read as one, a bare new value as a rival
("Sorry, I live in Hamburg." conflicts with "I live in Berlin." as the same words
without the apology do).

Start-anchored, bounded patterns; several apologies in a row ("Oops, sorry, …") are
skipped together.
"""

from __future__ import annotations

import re
from typing import Final

_EN_SORRY: Final = (
    r"(?:(?:i'?m|i\s+am|im)\s+)?(?:so\s+|very\s+|really\s+|terribly\s+|truly\s+)?sorry"
    r"(?:\s+(?:about\s+that|for\s+(?:the|that|my)\s+(?:confusion|mistake|mix-?up|error|typo)))?")
_EN_APOLOGY: Final = (r"(?:" + _EN_SORRY + r"|(?:my\s+)?apologies|oops(?:ie)?|whoops|my\s+bad"
                      r"|pardon(?:\s+me)?|excuse\s+me)(?![\w'])\s*[,.!:;\u2014\u2013-]+\s*")
_ZH_APOLOGY: Final = (r"(?:真|很|实在|非常)?(?:抱歉|对不起|不好意思)(?:啊|呀|哈)?"
                      r"\s*[,，.。!！:：、~～][\s,，.。!！:：、~～]*")
_JA_APOLOGY: Final = (r"(?:すみません|すいません|ごめんなさい|ごめんね|ごめん"
                      r"|申し訳(?:ありません|ございません|ない)(?:でした)?|失礼しました)\s*[、,。!！][\s、,。!！]*")
APOLOGY: Final = re.compile(r"^(?:" + _EN_APOLOGY + "|" + _ZH_APOLOGY + "|" + _JA_APOLOGY
                            + r")+", re.I)
"""One or more apologies at the start of a text, with the marks that set them off."""


def apology_end(text: str) -> int:
    """Where the apologies leading ``text`` end (0: none, or nothing after them)."""
    m = APOLOGY.match(text)
    return m.end() if m and text[m.end():].strip() else 0


def without_apology(text: str) -> str:
    """``text`` without the apologies that lead it ("Sorry, I live in Hamburg." ->
    "I live in Hamburg."); ``text`` itself when none does."""
    return text[apology_end(text):] if text else text
