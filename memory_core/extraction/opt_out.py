"""Messages the user asks memory to leave out ("Don't remember this, but …").

"Don't remember this, but my salary is 95000 EUR.", "Off the record: I'm interviewing
at Globex.", "Don't save this to your memory: …", "Please make sure not to save this:
…", "I don't want this saved: …", 这个别记：…, 以下内容不要记录, これは覚えないで、…, ここだけの話…: the user tells the
memory what it must not keep. The message stays in the evidence log (a conversation's
raw history is never edited) but yields no item, so none of its statements reaches
another conversation's block.

Only a request that points at the message itself counts: a pronoun ("this", "that",
"it", 这个, これ), "what I'm about to say", 以下/下面, or "off the record" as a lead
("Off the record, …") or said of the message ("This is off the record."); "off the
record" as a noun ("Off the record is how we label it") is none. The caller passes the
prepared scan, so a request the user quotes or pastes ("My boss said: 'don't remember
this'") is masked and no opt-out either.
"Don't remember that I live in Berlin" names a statement and is a withdrawal
(:mod:`memory_core.extraction.retraction`); "Don't forget that I …" asks memory to
keep it; "don't log the password", 不要记录日志 are orders about the work.
"""

from __future__ import annotations

import re
from typing import Final

from memory_core.extraction.cue import lacks

_EN_NOT: Final = (r"(?:please\s+)?(?:(?:make|be)\s+sure\s+(?:(?:you|that\s+you)\s+)?)?"
                  r"(?:don'?t|do\s+not|never|no\s+need\s+to|not\s+to"
                  r"|you\s+(?:don'?t|do\s+not)\s+(?:need|have)\s+to)\s+")
_EN_KEEP: Final = (r"(?:remember|save|store|memori[sz]e|record|keep|note(?:\s+down)?"
                   r"|write\s+down|add|put)\s+")
_EN_THIS: Final = (r"(?:this|that|it|any\s+of\s+(?:this|that)|what\s+i'?m\s+(?:about\s+to|going"
                   r"\s+to)\s+(?:say|tell\s+you))(?:\s+(?:one|part|bit|message))?")
EN_OPT_OUT: Final = re.compile(
    rf"\b{_EN_NOT}{_EN_KEEP}{_EN_THIS}(?:\s+(?:down|(?:in|to|into)\s+(?:your\s+)?"
    r"(?:long[- ]term\s+)?(?:memory|memories|notes)))?\s*(?=[,.;:!\u2014\u2013-]|\bbut\b|$)"
    # "I don't want this saved: …", "I don't want you to remember this"
    rf"|\b(?:don'?t|do\s+not)\s+want\s+(?:you\s+to\s+{_EN_KEEP}{_EN_THIS}|{_EN_THIS}\s+"
    r"(?:saved|stored|remembered|kept|recorded|memori[sz]ed|noted(?:\s+down)?"
    r"|written\s+down))(?:\s+(?:down|(?:in|to|into)\s+(?:your\s+)?(?:long[- ]term\s+)?"
    r"(?:memory|memories|notes)))?\s*(?=[,.;:!\u2014\u2013-]|\bbut\b|$)"
    # blanks after a line start or a stop, newlines not: ^ (re.M) starts the last line,
    # so a run of newlines is read once (linear time)
    r"|(?:(?:^|[.!?;:(\n])[^\S\n]*"
    r"|\b(?:this|that|it|all\s+(?:of\s+)?this)\s*(?:is|'s|stays|remains)\s+)"
    r"(?:strictly\s+|completely\s+|totally\s+)?off\s+the\s+record\s*(?=[,.;:!?\u2014\u2013-]|$)",
    re.I | re.M)
ZH_OPT_OUT: Final = re.compile(
    r"(?:这个|这件事|这条|这些|下面的话?|以下(?:内容|的话)?)(?:你)?(?:别|不要|不用|无需|请勿|勿)"
    r"(?:记|记住|记下来?|记录|保存|存)"
    r"|(?:别|不要|不用|无需|请勿)(?:记住|记下|记录|保存)(?:这个|这件事|这条|这些|下面的话|以下内容)"
    r"|私下说|不要记到记忆里|别记到记忆里")
_EN_NEEDLES: Final = ("remember", "save", "store", "memori", "record", "keep", "kept", "note",
                      "write", "writ", "add", "put")
"""Every :data:`EN_OPT_OUT` match holds one of these (an ``_EN_KEEP`` verb, or "record")."""
JA_OPT_OUT: Final = re.compile(
    r"(?:これ|この話|この件|以下|今から言うこと)(?:は|を)?(?:覚えないで|記憶しないで|メモしないで"
    r"|保存しないで|記録しないで|覚えなくていい)|ここだけの話|オフレコ")


def opted_out(text: str) -> bool:
    """Whether the message asks memory not to keep it (module doc). ``text`` is the
    prepared scan (quotes, block quotes, code and pasted material masked)."""
    if not lacks(text, _EN_NEEDLES) and EN_OPT_OUT.search(text):
        return True
    # the Chinese and Japanese forms hold CJK letters: an ASCII text holds none
    return not text.isascii() and bool(ZH_OPT_OUT.search(text) or JA_OPT_OUT.search(text))
