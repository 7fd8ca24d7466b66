"""A team chat pasted as one message: whose line is whose is no part of what it says.

"Kim: going forward, every incident gets a postmortem within 48 hours.\\nRaj: agreed."
is a transcript: each line leads with its speaker's name and a colon. Read as a topic
lead, the name would become the key of what follows ("kim incident gets postmortem",
刘洋), so it would pair with no later statement of the same rule. A message is a
transcript when it has two lines or more, every line leads with a short name and a
colon (a capitalised word; two to four Han or kana), the names are not all one, and
one line is a reply (an acknowledgement: "agreed", "👍", 同意, 了解です): a listing of
topics ("Budget: 5k\\nOwner: Dana") has no reply line. The names are blanked in the
scan (:func:`mask`), so the rest of each line is read as it would be alone; a line in
its speaker's first person ("Jonas: I'll take the ticket") keeps its name, since what it
says is that person's own.
"""

from __future__ import annotations

import re

__all__ = ["mask", "speaker_spans"]

_PREFIX = re.compile(r"[ \t]*(?P<name>(?-i:[A-Z])[a-z]{1,15}|[\u3040-\u30ff\u4e00-\u9fff]{2,4})"
                     r"[ \t]*[:：][ \t]*(?=\S)", re.I)
"""A line's lead: a name of one word and a colon, text after it on the same line."""
_REPLY = re.compile(
    r"(?:👍|👌|🙏|✅|\+1\b|(?:ok(?:ay)?|agreed?|sure|yes|yep|yeah|nice|great|cool|ugh|lgtm"
    r"|sounds\s+good|got\s+it|noted|maybe|thanks|same|done|ack)\b"
    r"|同意|赞成|好的?|收到|可以|没问题|了解|承知|賛成|いいですね|わかりました|OKです)", re.I)
"""What a reply line opens with: an acknowledgement of the line before it."""
_FIRST_PERSON = re.compile(r"(?:i|i'm|i'll|i've|i'd|me|my)\b|我(?!们)|私|僕|俺", re.I)
"""A line in the speaker's own first person ("Jonas: I'll take the ticket"): what it
says is the named speaker's, not the user's, so the name stays in its key."""


def speaker_spans(scan: str) -> list[tuple[int, int]]:
    """The ``[start, end)`` spans of each line's speaker lead ("Kim: ") where ``scan``
    is a transcript (module doc), else ``[]``."""
    if "\n" not in scan or (":" not in scan and "：" not in scan):
        return []
    spans: list[tuple[int, int]] = []
    names: set[str] = set()
    replied = False
    pos = 0
    for line in scan.split("\n"):
        if line.strip():
            m = _PREFIX.match(line)
            if m is None:
                return []
            if _FIRST_PERSON.match(line, m.end()) is None:
                spans.append((pos + m.start("name"), pos + m.end()))
            names.add(m.group("name"))
            replied = replied or _REPLY.match(line, m.end()) is not None
        pos += len(line) + 1
    return spans if len(names) >= 2 and replied else []


def mask(scan: str) -> str:
    """``scan`` with each speaker lead of a transcript blanked (same length)."""
    spans = speaker_spans(scan)
    if not spans:
        return scan
    chars = list(scan)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)
