"""Words that lead a statement without being part of it: a laugh, an interjection, a
discourse marker, a time word before a request.

``lexicon.EN_FILLER``, ``ZH_FILLER`` and ``JA_FILLER`` strip the common fillers
("btw", "另外", "ちなみに"). What they leave, read as the first words of the subject
or as what decides the kind, hid the statement: "lol I'm 35." keyed "lol i'm", 哈哈我是
护士 keyed 哈哈我, そういえば私は看護師です keyed そういえば私, and "Today I want you to
always answer in French." was a fact about "today". :func:`lead` finds such a lead at
the start of a sentence body so that the pipeline skips it as it skips a filler (the
item still quotes the whole sentence, but for a greeting or an empty opener:
:func:`opener_end`):

* a laugh or an interjection (lol, haha, hmm, ok so; 哈哈, 话说, 说真的; 笑, えっと,
  そういえば). A laugh alone takes nothing back (``joke``: "lol I'm the king of France"
  stays a claim, only a retracting marker masks it);
* a time word (today, tonight, this morning; 今天, 今晚) that leads a request to the
  assistant ("Today can you …", 今天我想让你…) or a statement of the speaker's own that
  is no dated plan ("This morning I switched to Postgres."): a dated plan keeps its
  time ("Tomorrow I have to …", ``dated``), and so does a time that is the subject
  ("Today is my birthday.");
* "I want you to" / "I'd like you to" before always/never/from now on (我想让你 before
  以后/总是…): a standing rule asked of the assistant, read as the order after it
  (``standing=True``), as "Please always answer in French." is.

Start-anchored, bounded patterns: one ``match`` each per sentence.
"""

from __future__ import annotations

import re
from typing import Final, NamedTuple

_EN_LAUGH: Final = (r"(?:lol+|lmf?ao|rofl|ha(?:ha)+h?|ha\s+ha|he(?:he)+|heh|hah|xd|hm+|uh+"
                    r"|umm+|erm|ah+|ooh|ok(?:ay)?\s+so|anyways)")
_EN_INTERJECTION: Final = re.compile(r"^(?:" + _EN_LAUGH + r")(?![\w'-])[\s,.!:;~-]*", re.I)
"""A laugh or an interjection ahead of the statement ("lol I'm 35.", "haha, I'm a nurse")."""
_EN_COUNT: Final = (r"(?:\d{1,3}|an?|one|two|three|four|five|six|seven|eight|nine|ten|twelve"
                    r"|(?:a\s+)?few|(?:a\s+)?couple(?:\s+of)?|several)")
_EN_TIME: Final = (r"(?:today|tonight|tomorrow|yesterday|earlier\s+today|last\s+night"
                   r"|this\s+(?:morning|afternoon|evening|week)"
                   r"|(?:last|this\s+past)\s+(?:week(?:end)?|month|year|spring|summer|fall|autumn"
                   r"|winter|monday|tuesday|wednesday|thursday|friday|saturday|sunday)"
                   r"|" + _EN_COUNT + r"\s+(?:days?|weeks?|months?|years?)\s+ago)")
EN_TIME: Final = _EN_TIME
"""A time said before the statement: a day word, a last week/weekday/season, or a span
ago ("Two weeks ago I started …"): when it happened, never what it is about."""
_EN_TIME_LEAD: Final = re.compile(
    r"^" + _EN_TIME + r"\s*,?\s+(?=(?:i|we|i'm|i've|we're|we've)\b(?!\s*(?:'s|is|are|was)\b)"
    r"|(?:please|can|could|would|will)\s+you\b|please\b|always\b|never\b)", re.I)
"""A time word before the speaker or before a request; never one that is the subject
("Today is my birthday")."""
_EN_STANDING_ASK: Final = re.compile(
    r"^(?:i|we)\s+(?:really\s+)?(?:want|need|'d\s+like|would\s+like)\s+you\s+to\s+"
    r"(?=(?:always|never|from\s+now\s+on)\b)", re.I)
""""I want you to always …": the order after it is a standing rule."""

_ZH_LAUGH: Final = re.compile(r"^(?:哈{2,}|嘿嘿|呵呵|嘻嘻|笑死|话说回来|话说|说起来|说真的|老实说"
                              r"|嗯{2,}|唉|诶|欸)[\s,，!！~～。、:：]*")
_ZH_TIME: Final = r"(?:今天|今晚|今天早上|今天晚上|明天|刚才)"
_ZH_ASK: Final = r"(?:我|我们)?(?:想让你|希望你|要你|需要你)"
_ZH_STANDING_ASK: Final = re.compile(
    r"^" + _ZH_ASK + r"(?=以后|今后|往后|从现在(?:开始|起)|每次|始终|总是|永远|一律)")
"""我想让你以后都用中文回答: the order after the asking words is a standing rule."""
_ZH_TIME_LEAD: Final = re.compile(r"^" + _ZH_TIME + r"[\s,，、]*(?=" + _ZH_ASK + r")")

_JA_LAUGH: Final = re.compile(r"^(?:(?:そういえば|そう言えば|えーっと|えーと|えっと|うーん|まあ)"
                              r"(?![ぁ-ん])[\s、,。!！]*|(?:笑|[wｗ]{2,}|草)[\s、,。!！]+)")
"""そういえば、えっと, まあ; a laugh (笑, ww, 草) only set off by a space or a mark: 笑顔
and 草刈り are words."""


_EN_OPENER: Final = re.compile(
    r"^(?:(?:hi|hello|hey|hiya|howdy|good\s+(?:morning|afternoon|evening)|morning)"
    r"(?:\s+(?:there|all|everyone|team|folks|guys|y'all|(?-i:[A-Z][\w'-]*)))?"
    r"\s*(?:[,!.;:\u2013\u2014]|-+(?!\w))+\s*"
    r"|ok(?:ay)?[\s,]+so\b[\s,]*|(?:ok(?:ay)?|alright|all\s+right|um+|uh+|hmm+)\b(?!-\w)"
    r"(?:\s*(?:[,!.:;]|-+(?!\w))[\s,!.:;-]*|\s+(?=(?-i:[a-z]|I\b)))"
    r"|(?:so|well)\s*,\s*)+", re.I)
"""Greetings (with whom they hail: "Hey there,", "Hi Anna,") and the openers that say
nothing ("OK so", "Well,") at the start of a sentence, set off by a mark or a dash
("Hey - ", "Hi — ", "Hello—"). A hyphen that joins a word is no mark ("Hi-fi",
"Uh-oh"), nor is "OK" before a capitalised name ("OK Google")."""
ZH_GREETING: Final = (r"(?:嗨|你好|您好|哈喽|哈啰|大家好|早上好|上午好|中午好|下午好|晚上好|早安)"
                      r"[\s,，!！~～、]+")
"""A Chinese greeting set off by a mark (你好像… is no greeting)."""
JA_GREETING: Final = (r"(?:こんにちは|こんにちわ|こんばんは|おはようございます|おはよう|どうも"
                      r"|やあ|もしもし|はじめまして)[\s、,!！~～]+")
"""A Japanese greeting set off by a mark."""
_ZH_OPENER: Final = re.compile(r"^(?:" + ZH_GREETING + r"|(?:嗯|哦|好的|好了|好啦|行了)[\s,，!！~～、]+)+")
_JA_OPENER: Final = re.compile(r"^(?:" + JA_GREETING + r"|(?:えっと|ええと|あの)[\s、,!！]+)+")


def opener_end(text: str, lang: str) -> int:
    """Where the greetings and empty openers at the start of ``text`` (a sentence,
    width-folded) end: ``"Hi, I use metric units."`` → 4, 嗨，… → 2; 0 for none, and
    for a sentence they make up whole. An item's text leaves them out."""
    pattern = {"en": _EN_OPENER, "zh": _ZH_OPENER, "ja": _JA_OPENER}.get(lang)
    m = pattern.match(text) if pattern is not None else None
    return m.end() if m and m.end() < len(text.rstrip()) else 0


class LeadEnd(NamedTuple):
    """Where a lead ends in the text given, and whether it made what follows a
    standing rule asked of the assistant."""

    end: int
    standing: bool


def lead(text: str, lang: str, plan: bool = False) -> LeadEnd | None:
    """The lead at the start of ``text`` (a sentence body, width-folded; the module
    doc lists what counts), else ``None``. ``plan``: the body is a dated plan
    (``dated``), whose time word is kept."""
    if lang == "en":
        m = _EN_INTERJECTION.match(text)
        if m and m.end() < len(text):
            return LeadEnd(m.end(), False)
        m = _EN_STANDING_ASK.match(text)
        if m:
            return LeadEnd(m.end(), True)
        m = _EN_TIME_LEAD.match(text)
        if m and not plan:
            return LeadEnd(m.end(), False)
        return None
    if lang == "zh":
        m = _ZH_LAUGH.match(text) or _ZH_TIME_LEAD.match(text)
        if m and m.end():
            return LeadEnd(m.end(), False)
        m = _ZH_STANDING_ASK.match(text)
        return LeadEnd(m.end(), True) if m else None
    if lang == "ja":
        m = _JA_LAUGH.match(text)
        return LeadEnd(m.end(), False) if m and m.end() < len(text) else None
    return None
