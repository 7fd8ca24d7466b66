"""What an English sentence is about, named before its statements.

"Staging: the port is 5432." and "Prod: the port is 6543." state the port of two
things; "Regarding the billing job, the timeout is 30 s." and "Status of the cache
layer on ap-south: we run 60 nodes, the pool size is 208 and …" name the thing each
statement after the lead is about. Read without the lead, sibling statements share a
subject ("port", "pool size") and rival each other, and an item's text ("the pool size
is 208") no longer says of what. :func:`topic_lead` finds such a lead: a phrase before
a colon, or one opened by a topic preposition ("regarding", "about", "as for", …)
before a comma. Not a topic: who said it ("Per Lena:", "According to Dana,", "Lena
says:"), a time ("Today:", "Yesterday,"), a discourse word ("Also,", "Btw:"), a scope
of rules (``pipeline._SCOPE_LEAD``), a label the rules read (``Note:``, ``Run 3:``).

A bare name before a colon ("Lena: the port is 8080") is read as a topic: without a
list of names it looks like "Staging:", and a topic costs a missed comparison where
a lost one invents a conflict shown on every turn.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory_core.extraction.subject import en_key

__all__ = ["Topic", "topic_lead"]


@dataclass(frozen=True)
class Topic:
    """A topic lead of ``text[start:end]`` (``end``: where the statements begin, after
    the colon or comma); ``key``: its words as a subject prefix ("cache layer ap-south"),
    ``""`` for a lead that says who said it ("Lena says:")."""

    start: int
    end: int
    key: str


_COLON_LEAD = re.compile(r"(?P<lead>[^:.!?;\n\"“”()\[\]]{2,80}?)\s*:\s+(?=\S)")
"""A phrase before a colon and a space (not a time "10:30", not a URL "https://")."""
_COMMA_LEAD = re.compile(
    r"(?:(?P<open>[\w' ]{1,30}),\s*)?"
    r"(?P<lead>(?:regarding|concerning|re|about|as\s+(?:for|to|regards)|on\s+the\s+subject\s+of"
    r"|when\s+it\s+comes\s+to|with\s+(?:regard|respect)\s+to|in\s+terms\s+of)\s+"
    r"[^,:.!?;\n]{2,60}?),\s+(?=\S)", re.I)
"""A comma lead opened by a topic preposition, after an optional opener ("Also, about
the relay, …")."""
_OPENING = re.compile(
    r"^(?:(?:[\w']+\s+){0,3}?(?:update|news|status|numbers|figures|details|notes?|thing|word"
    r"|more)\s+)?(?:regarding|concerning|re|about|on|for|of|as\s+(?:for|to|regards)"
    r"|on\s+the\s+subject\s+of|when\s+it\s+comes\s+to|with\s+(?:regard|respect)\s+to"
    r"|in\s+terms\s+of)\s+", re.I)
"""What opens a topic phrase before the thing it names ("Status of", "Quick update on",
"One more thing on", "for", "regarding"): cut from the key."""
_FIRST_PERSON_VERB = re.compile(r"^we\s+(?:just\s+|also\s+)?[a-z]+ed\s+", re.I)
""""We measured the search index on staging:": the thing is the verb's object."""
_ATTRIBUTION = re.compile(
    r"^(?:per|according\s+to|from|via|as\s+\w+\s+(?:said|says|put\s+it|mentioned|noted))\b"
    r"|\b(?:says|said|wrote|writes|mentioned|noted|told\s+(?:me|us)|asked|replied|added"
    r"|reports?|reported|confirmed|thinks|thought)$", re.I)
"""Who said what follows ("Per Lena", "According to Dana", "Lena says"): no topic."""
_NOT_A_TOPIC = re.compile(
    r"^(?:also|btw|by\s+the\s+way|ok|okay|so|well|yes|yeah|no|nope|sure|right|hmm|oh|ah|and"
    r"|but|then|now|fyi|ps|tl;?dr|edit|summary|recap|result|results|answer|status|update"
    r"|news|heads\s+up|for\s+now|for\s+example|for\s+instance|in\s+short|in\s+general"
    r"|in\s+fact|in\s+other\s+words|on\s+the\s+other\s+hand|for\s+the\s+record|q|a|the\s+\w+"
    r"\s+is|that\s+said|that\s+being\s+said|anyway|honestly|basically|actually|seriously"
    r"|important|warning|caution|tip|hint|example|e\.g|i\.e|note\s+to\s+self|question"
    r"|bottom\s+line|long\s+story\s+short|in\s+a\s+nutshell|in\s+sum|to\s+sum\s+up"
    r"|in\s+summary|in\s+conclusion|again|too|though|still|instead|otherwise|besides"
    r"|plus|meanwhile|first|second|third|finally|lastly|next|first\s+of\s+all|so\s+far"
    r"|to\s+be\s+clear|to\s+clarify|just\s+to\s+confirm|for\s+context|wait|sorry|oops|ugh"
    r"|lol|haha|thanks|thank\s+you|please|hey|hi|hello|great|cool|nice|perfect|good|done)$",
    re.I)
"""Discourse words and labels before a colon or comma: no topic."""
_TIME = re.compile(
    r"\b(?:today|tonight|tomorrow|yesterday|morning|afternoon|evening|night|noon|midnight"
    r"|week|weekend|weekends|month|year|day|days|hours?|minutes?|now|then|later|earlier"
    r"|recently|lately|monday|tuesday|wednesday|thursday|friday|saturday|sunday"
    r"|january|february|march|april|may|june|july|august|september|october|november"
    r"|december|spring|summer|autumn|fall|winter|q[1-4]|\d{4})\b", re.I)
"""A lead that names a time ("Yesterday:", "This week:", "On Monday,"): when, not what."""
_VERB = re.compile(r"\b(?:is|are|was|were|be|been|am|has|have|had|will|would|can|could"
                   r"|should|must|do|does|did|don't|doesn't|isn't|aren't)\b|['’](?:s|re|ll|ve)\b",
                   re.I)
"""A finite verb: a lead that holds one is a clause, not the name of a thing."""
_NOT_A_THING = re.compile(
    r"^(?:hey|hi|hello|dear|thanks|thank\s+you|cheers|yo|ok|okay|so)\b|^@"
    r"|\b(?:i|i'm|my|me|mine|this|these|current|that|those)\b"
    r"|^(?:team|folks|everyone|everybody|all|guys|y'all|people|friends|both|yours|you|you\s+all)$",
    re.I)
"""A greeting or the ones spoken to ("Hey team:", "@dana:", "Folks:"), the speaker's own
("My two cents:", "What I meant:") or a deictic scope ("For this task:", kept local by
the rules that read it whole): no thing named."""
_AGO = re.compile(r"\bago\b|^(?:a|an|half|one|two|three|few|couple)\s+(?:of\s+)?(?:the\s+)?"
                  r"(?:time|day|days|week|weeks|month|months|year|years|hours?|minutes?)\b", re.I)
_LABEL_WORDS = frozenset(
    "context background decision decided update updates status note notes question questions"
    " summary reminder fyi correction result results answer open todo tldr ps edit fact info"
    " important rule idea plan proposal suggestion draft message warning tip reason problem"
    " issue thing point take thoughts verdict conclusion goal recap news reference"
    " clarification agenda pros cons action items cause symptoms symptom psa spoiler alert"
    " story version cents error errors traceback exception subject re talk experience"
    " example output log logs steps lesson lessons learned takeaway takeaways".split())
"""Words of a lead that labels what follows instead of naming its thing."""
_WORD = re.compile(r"[^\W\d_][\w'’-]*|\d[\w.,:/-]*")
_REST_WORDS = 3
"""Fewest words after a lead for it to lead statements (not a key and its value)."""
_SPEAKER_LINE = re.compile(r"[^.!?\n]{0,40}?\b(?:i|i'm|i'll|i'd|i've|my|me)\b", re.I)
"""A first-person-singular line after a one-word lead: that word names its speaker."""
_KEY_WORDS = 5
"""Most words a topic adds to a subject."""
_KEY_STOP = frozenset("a an the our your their his her its of on in at for to".split())
"""Articles, possessives and prepositions: not part of a topic's key."""


def topic_lead(text: str, start: int, end: int) -> Topic | None:
    """The topic lead (or attribution) opening ``text[start:end]`` (one sentence), or
    ``None``. English; the caller has stripped labels and correction cues before
    ``start``."""
    m = _COLON_LEAD.match(text, start, end)
    lead = None
    if m is not None and not text[m.end() - 1:m.end()].isdigit():
        lead = m.group("lead")
    else:
        m = _COMMA_LEAD.match(text, start, end)
        if m is not None:
            lead = m.group("lead")
    if m is None or lead is None or len(_WORD.findall(text, m.end(), end)) < _REST_WORDS:
        return None  # "retries: 3", "Deploy target: eu-west-1": a key and its value
    if " " not in lead.strip() and _SPEAKER_LINE.match(text, m.end(), end):
        return None  # "Jonas: I'll take the ticket.": a pasted chat's line, its own speaker
    if _ATTRIBUTION.search(lead.rsplit(",", 1)[-1].strip()):
        return Topic(start, m.end(), "")  # who said it: read past it, no topic
    key = _topic_key(lead)
    return Topic(start, m.end(), key) if key else None


def _topic_key(lead: str) -> str | None:
    """The key words of a lead's thing, or ``None`` when the lead names no thing."""
    lead = " ".join(lead.split())
    phrase = lead.rsplit(",", 1)[-1].strip()  # "Before I forget, for the upload queue"
    if (not phrase or _ATTRIBUTION.search(phrase) or _NOT_A_TOPIC.match(phrase)
            or _TIME.search(phrase) and len(phrase.split()) <= 3):
        return None
    if _VERB.search(phrase) or _NOT_A_THING.search(phrase):
        return None  # a clause ("The reason is simple:"), a greeting, the speaker, a scope
    phrase = _FIRST_PERSON_VERB.sub("", phrase)
    opened = _OPENING.sub("", phrase, count=1)
    if opened[:1].isdigit() or _AGO.search(opened):
        return None  # "About 200 ms, …", "About 3 weeks ago, …": an amount, a time
    if opened == phrase and _LABEL_WORDS.intersection(phrase.lower().split()):
        return None  # "Quick context:", "Decision made:": what follows is the point
    phrase = opened
    words = [w.lower().strip(".'’") for w in re.findall(r"[\w][\w.'’-]*", phrase)]
    if len([w for w in words if w not in _KEY_STOP]) == 1 and _LABEL_WORDS.intersection(words):
        return None  # "For reference:", "For context:"
    # articles and prepositions go, but not a last letter ("Option A", "Plan B")
    words = [w for n, w in enumerate(words)
             if w and (w not in _KEY_STOP or (w in ("a", "an") and n == len(words) - 1))]
    if not words or len(words) > 8 or not en_key(phrase):
        return None  # a clause, not a name ("If the tests pass on CI and the lint is green")
    return " ".join(words[:_KEY_WORDS])
