"""A norm the user asks the assistant to keep: "Remember: reports should be in German."

A rule stands when it says so ("always", "from now on", "in this project":
``memory_core.items.standing.STANDING_RULE``) or when the user promotes it. A lead
addressed to the assistant that asks it to retain what follows ("Remember:", "Keep in
mind:", "Bear in mind:", "Don't forget:", 记住：, 覚えておいて：) promotes a norm
("… should …", "… has to …", 应该, べき) to a standing rule: said once, it is meant for
every later answer, which is what "remember" asks of the one it addresses.

Not promoted: a lead before no norm ("Remember: my passport expires in March" is a
fact, docs/evaluation/memory_replays.md row 91); "Remember to send the file" (an order
for one task: no lead with a colon, and nothing after it says how things should be);
a norm of the speaker's own ("Remember: I should call my mom on Sunday": a note to
self); an expectation ("Remember: the build should be done by 5"). "Note:" promotes
nothing: it labels information, whose "should" is as often a guess ("Note: the build
should pass now") as a rule; a note that says it stands ("Note: reports must always be
in German") is one by its own words.
"""

from __future__ import annotations

import re

_LEAD = re.compile(
    r"^\W*(?:(?:please|and|also|just)\s+)*(?:remember|keep\s+in\s+mind|bear\s+in\s+mind"
    r"|(?:don['’]t|do\s+not|never)\s+forget)\s*[:：,\u2013\u2014-]\s*"
    r"|^(?:请)?(?:记住|记得|别忘了|不要忘了|不要忘记|牢记)\s*[:：，,]\s*"
    r"|^(?:覚えておいて|忘れないで)(?:ください|ね)?\s*[:：、]\s*", re.I)
"""A lead that asks the assistant to retain what follows, then its colon or comma."""
_NORM = re.compile(
    r"\b(?:should|ought\s+to|must|has\s+to|have\s+to|needs?\s+to|always|never"
    r"|(?:is|are)\s+to\s+be)\b|应该|应当|必须|务必|一律|总是|只能|不(?:要|能|可以|许|准)"
    r"|べき|なければ|必ず|常に|こと[。！!]?$", re.I)
"""How things are to be done: a modal of duty or a word of always/never."""
_OWN = re.compile(r"^(?:i|i['’](?:m|ll|d))\b|^我(?!们)|^(?:私|僕|俺)は", re.I)
"""The speaker alone as the subject: a note to self, not a rule for the assistant."""
_EXPECTED = re.compile(
    r"\bshould\s+(?:be\s+)?(?:done|ready|finished|fixed|back|up|over|here|there|arrive|land"
    r"|pass|finish|work|be\s+(?:fine|ok|okay|alright|all\s+right|good|enough|easy|safe"
    r"|possible|likely))\b|\bshould\s+(?:probably|likely)\b"
    r"|应该(?:会|能|快|就|没(?:问题|事))|应该(?:是|还)?(?:可以|没问题)|はず", re.I)
"""An expectation ("… should be done by 5", "… should pass now", "it should be
fine", 明天应该会下雨, 届くはず), not a duty."""


def promoted(text: str) -> bool:
    """Whether ``text`` (a sentence, as written) is a norm the user asks the assistant
    to remember (see module doc): a standing rule though no word of time says so."""
    lead = _LEAD.match(text)
    if lead is None:
        return False
    rest = text[lead.end():].strip()
    return bool(rest) and _OWN.match(rest) is None and _EXPECTED.search(rest) is None \
        and _NORM.search(rest) is not None


_TAIL = re.compile(
    r"(?:^|[,;，、。；]|\s[\u2013\u2014-])\s*(?:(?:ok(?:ay)?|so|and|also|just|please)\b[\s,]*)*"
    r"(?:(?:keep|bear)\s+(?:that|this|it)\s+in\s+mind|remember\s+(?:that|this|it)"
    r"|(?:always\s+)?stick\s+(?:to|with)\s+(?:that|this|it)"
    r"|(?:don['’]t|do\s+not|never)\s+forget\s+(?:that|this|it)"
    r"|(?:that|this)(?:['’]s|\s+is)\s+(?:the|my|our)\s+(?:rule|policy)(?:\s+(?:i|we)(?:['’]m"
    r"|['’]re|\s+am|\s+are)\s+(?:following|sticking\s+to|going\s+by)(?:\s+now)?)?"
    r"|(?:that|this)(?:['’]s|\s+is)\s+(?:final|non-?negotiable))"
    r"(?:\s*,?\s*(?:whenever|when|every\s+time|each\s+time|from\s+now\s+on|going\s+forward"
    r"|in\s+(?:future|the\s+future))\b[^.!?\n]*"
    r"|\s+for\s+(?:(?:any|all|every|each|future|later|my|our|your|the|these|those|next|other"
    r"|similar)\s+(?:[\w'’-]+\s+){0,2}[\w'’-]+|[\w'’-]+))?(?:\s+(?:please|ok(?:ay)?))?[\s.!~]*$"
    r"|(?:^|[,;，、。；])\s*(?:请)?(?:(?:记住|记好|牢记)(?:这一?点|这个|这件事|它)?"
    r"|(?:别|不要)忘(?:了|记)(?:这一?点|这个|这件事|它)?)(?:了|哦|喔|啊|呀|吧)?[\s。！!~]*$"
    r"|(?:^|[,;，、。；])\s*(?:(?:これ|それ|このこと|そのこと)を?)?"
    r"(?:覚えて(?:おいて|おいてね|おいてください|おいて下さい|ね|ください)"
    r"|覚えといて(?:ね|ください)?|忘れないで(?:ね|ください|下さい)?)[\s。！!ね~]*$", re.I)
"""A clause that asks the assistant to retain what was just said: "…, keep that in mind
(whenever … / for recipes / for any meal plans)", "…, remember that.", "…, don't forget
that.", "Please always stick to that.", …，记住这一点。, …、覚えておいてね。,
or that names it the user's rule or settled: "That's the rule I'm following now.",
"…, and that's final." ("…, no exceptions" qualifies the rule it ends, and stays in it)
At the end of a sentence, after a comma or alone, with nothing after it but a scope: a
time ("whenever …", "from now on") or a use ("for" and one word, or a determiner and up to
three: "Remember that for loops run fast." is a statement about for-loops)."""


def kept_tail(scan: str, start: int, end: int) -> int | None:
    """Where a clause asking the assistant to keep what was said (:data:`_TAIL`) starts
    in ``scan[start:end]`` (an offset into ``scan``; ``start`` when the whole span is
    one), or ``None``. What it points back at is the user's to keep: it stands though
    nothing in its words says so, and the clause itself holds nothing
    (:mod:`memory_core.extraction.pipeline` marks the items it points at ``lasting``)."""
    m = _TAIL.search(scan[start:end])
    return None if m is None else start + m.start()
