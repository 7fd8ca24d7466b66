"""Chit-chat read as a standing item: what two people chatting say that looks like a
rule, a decision, a taste or a set number, and is none.

Read from a ``memory_items`` row, as :mod:`memory_core.items.standing` is; used by
:func:`memory_core.assembly.block.standing_weight` to keep such items out of every
block. Each is still kept and searchable (shown where the turn's words match it).
Pure, no I/O.

- An **empty hortative** is a "let's" with no content of its own ("Let's do it!",
  "Let's go for it and make an impact!", "Let's plan something special"): it agrees
  to what was said before it and decides nothing a later answer could follow;
  "Let's use Postgres for the store" names what is decided (:func:`empty_hortative`).
- A **past choice** is the speaker's own choice told as an event: dated by a past
  day ("Yesterday I chose to …", "Last month I decided to …") or made about a thing
  pointed at ("I picked this color because …", "I decided to include this at the
  start", "I chose them 'cause …"), or a thing picked up ("I picked up a new
  recipe"); "We decided to use Kafka" and "I decided to go vegan" stand
  (:func:`past_choice`).
- An **epistemic "must"** guesses rather than orders ("You must be so proud", "It
  must add so much warmth", "That must have been hard", "must have a lot of
  stories"): the "must" is no rule word (:func:`guessing_must`).
- A **pointed liking** likes what is shown or pointed at, not a lasting taste: "I
  love this bowl", "I love the colours of this city", "I love seeing them sleep like
  this", "I love how it looks" (:func:`pointed_liking`; "I love the ocean" names a
  taste).
- A **counted description** carries its number inside the subject it describes ("The
  3 older cousins adore chess", "My 2 cats sleep all day"), or tells the speaker's
  past doing where the number names a kind of thing ("I ran a 10K for the food
  bank"): no number the speaker set
  (:func:`counted_description`).
- A **present activity** is what the speaker is doing now ("I'm currently knitting a
  scarf", "I'm off to the pool", "Now, I'm planning a picnic"): a "now" or
  "currently" makes it read as a correction of an earlier item, but it holds only
  until the activity ends; a circumstance said the same way ("I'm now living in
  Lisbon", "We're currently using Postgres 16", "I'm working at a bakery") and any
  number stand as before (:func:`present_activity`).
- An **attributive favourite** names a favourite inside a statement about something
  else ("I copied a few of my favourite lines into a notebook", "The shelf is full of my
  favourite comics", "My favourite was when we won"): the liking is no statement of
  its own; "X is my favourite", "My favourite band is …", "my favourite, Dune" state
  it, and one that says it stands ("from now on I'll note my favourite …") stands
  (:func:`attributive_favourite`).
- An **away note** tells that the speaker steps away, comes back or stops for the day
  ("lunch now, back in 40 min", "stuck in traffic, back online in 30 min", "Going
  back to bed", "calling it a day",
  今日はここまでにします, 我先下了): its time or number is the break's, not one set,
  and a "now" in it is no update (:func:`away_note`); a rule said with the same words
  ("From now on I go to bed at 11") says it stands.
"""

from __future__ import annotations

import re
from typing import Any

from memory_core.items import accounts, readings, standing

_LEAD = r"^\W*(?:(?:oh|wow|yeah|yes|yep|ok|okay|sure|great|cool|alright|so|and|then|well)\W+)*"

EMPTY_HORTATIVE = re.compile(
    _LEAD + r"let(?:'|\u2019)?s\s+(?:[a-z]+\s+){0,2}?(?:it|this|that|them|something(?:\s+[a-z]+)?)"
    r"(?:\s+(?:happen|work|count|official|real))?(?=\s*(?:$|[,.;:!?)]|and\b))", re.I)
"""A "let's" whose object is only a pronoun or "something" (module doc); a named
object or a phrase after it ("Let's do it in Rust") is content."""


def empty_hortative(row: Any) -> bool:
    """Whether a decision is a "let's" with no content (:data:`EMPTY_HORTATIVE`)."""
    return row["kind"] == "decision" and EMPTY_HORTATIVE.search(row["text"] or "") is not None


_PAST_DAY = re.compile(
    r"\b(?:yesterday|last\s+(?:night|week|weekend|month|year|time|summer|winter|spring|fall"
    r"|autumn)|earlier\s+today|this\s+(?:morning|afternoon)|the\s+other\s+day"
    r"|(?:a|one|two|three|few|couple\s+of)\s+(?:days?|weeks?|months?|years?)\s+ago)\b", re.I)
_CHOICE = re.compile(r"\bi\s+(?:just\s+|finally\s+|also\s+)?(?:chose|picked|decided|opted"
                     r"|selected)\b(?P<rest>[^.;!?]*)", re.I)
_POINTED_OBJECT = re.compile(r"^\s+(?:to\s+\w+\s+(?:\w+\s+)?)?(?:this|that|these|those|them|it)\b"
                             r"|^\s+up\b", re.I)


def past_choice(row: Any) -> bool:
    """Whether a decision is the speaker's own past choice told as an event (module
    doc): an "I chose/picked/decided" dated by a past day, or whose object is a thing
    pointed at, or "picked up"."""
    if row["kind"] != "decision":
        return False
    text = row["text"] or ""
    m = _CHOICE.search(text)
    if m is None:
        return False
    return _PAST_DAY.search(text) is not None or _POINTED_OBJECT.match(m.group("rest")) is not None


GUESSING_MUST = re.compile(
    r"\bmust\s+(?:(?:be|feel|look|sound|seem)\s+(?:so|such|really|very|quite|pretty|super"
    r"|incredibly|amazing|awesome|great|hard|tough|fun)\b"
    r"|have\s+(?:been|had|felt|meant|taken|a\s+lot\b|lots\b|so\s+many|so\s+much|such)"
    r"|(?!(?:be|have)\b)[a-z]+\s+(?:so\s+much|such\s+a|a\s+lot\s+of)\b)", re.I)
"""A "must" that guesses (module doc): before an intensifier ("must be so proud",
"must add so much cheer") or a past guess ("must have been")."""
QUANTIFIED_MUST = re.compile(
    r"(?:^|[.!?;:,]\s+)(?:every|each|all)\s+(?!(?:of|you|we|they|the\s+best)\b)\w+"
    r"[^.!?;]*?\bmust\b", re.I)
"""A "must" whose subject is quantified over a class ("Every migration must have been
reviewed by two people", "All builds must have a changelog entry"): a requirement,
never a guess about one thing."""


def guessing_must(row: Any) -> bool:
    """Whether a constraint's only rule word is a "must" that guesses
    (:data:`GUESSING_MUST`): with it taken out, nothing says the statement stands."""
    text = row["text"] or ""
    if (row["kind"] != "constraint" or GUESSING_MUST.search(text) is None
            or QUANTIFIED_MUST.search(text) is not None):
        return False
    return not standing.is_standing_rule(GUESSING_MUST.sub(" ", text))


POINTED_LIKING = re.compile(
    r"\b(?:love|like|enjoy|adore)\s+[^.;!?]*?(?:(?:\bthis|(?:\b(?:love|like|enjoy|adore|of|to"
    r"|in|at|from|about|with|all)\s+)that)\s+(?!(?:is|was|i|we|you|it|they|one|kind|sort|type"
    r"|way)\b)[a-z]{3,}|\blike\s+this\b|\b(?:seeing|see)\s+(?:them|him|her"
    r"|it)\b|\b(?:it|they|this)\s+(?:looks?|seems?)\b)", re.I)
"""A liking of what is pointed at (module doc): "this city", "to that world" (not a
relative "that": "stories that move me"), "like this", "seeing them …", "it looks …"
after the liking verb."""


def pointed_liking(row: Any) -> bool:
    """Whether a preference likes what is shown or pointed at (:data:`POINTED_LIKING`)."""
    return row["kind"] == "preference" and POINTED_LIKING.search(row["text"] or "") is not None


SUBJECT_COUNT = re.compile(
    r"^\W*(?:the|my|our|his|her|their|all|both)\s+(?:[a-z]+\s+)?(?:\d+|two|three|four|five"
    r"|six|seven|eight|nine|ten)\s+(?:[a-z-]+\s+){0,2}?"
    r"[a-z]+s,?\s+(?!(?:are|is|were|was|have|has|had|get|gets|need|needs|use|uses|run|runs"
    r"|take|takes|cost|costs)\b)[a-z]+[^\d]*$", re.I)
"""A number inside the subject it describes (in digits or a word up to ten), before a
verb that sets nothing or a comma, and with no number after it ("The 3 older cousins
adore chess", "my two kids, and neither of them will touch mushrooms"); "Our 3 replicas
run in …"
and "The 2 nodes have 16 GB" keep their numbers."""
_TARGET = re.compile(r"\b(?:to|at|=)\s*~?\d", re.I)
_I = re.compile(r"\bi\b", re.I)
_NAMED_KIND = re.compile(r"\b(?:a|an)\s+\d", re.I)
"""A number that names a kind of thing ("a 10K", "a 3-course dinner"): what the
speaker did, not how much of something they set."""


def counted_description(row: Any) -> bool:
    """Whether a numeric fact describes rather than sets (module doc): its number
    inside its subject (:data:`SUBJECT_COUNT`), or the speaker's own past doing
    (:func:`memory_core.items.accounts.past_event`, "I") whose number names a kind of
    thing ("a 10K"), with no target value ("to 50") nor word of setting
    (:data:`memory_core.items.readings.SETTING`, ``PROVISIONED``, ``USER_CHANGE``)."""
    if row["kind"] != "fact" or row["value"] is None:
        return False
    text = row["text"] or ""
    if SUBJECT_COUNT.search(text) is not None:
        return True
    return (accounts.past_event(text) and _I.search(text) is not None
            and _NAMED_KIND.search(text) is not None and _TARGET.search(text) is None
            and readings.SETTING.search(text) is None
            and readings.PROVISIONED.search(text) is None
            and readings.USER_CHANGE.search(text) is None)


PRESENT_ACTIVITY = re.compile(
    r"^\W*(?:(?:oh|wow|yeah|yes|yep|no|nope|ok|okay|so|and|but|well|actually|honestly|now"
    r"|right\s+now|currently|at\s+the\s+moment)\W+)*"
    r"(?:i|we)(?:['\u2019]m|['\u2019]re|\s+am|\s+are)\s+"
    r"(?:(?:currently|now|just|still|also|really|actually|busy|right\s+now)\s+)*"
    r"(?:off\s+to\b|(?!(?:living|using|running|staying|studying|renting|teaching|training"
    r"|dating|expecting|going|moving|keeping|sticking|switching|working\s+(?:at|for|as|in|from"
    r"|with)|based|employed|married|engaged)\b)[a-z]{2,}ing\b)", re.I)
"""The speaker's activity (module doc): "I'm (currently) <doing>", "I'm off to …"; not a
circumstance ("living", "using", "working at", "studying", "going", "moving") nor a
choice said in the progressive ("we're keeping the old tub", "sticking with", "switching")."""
_NOW = re.compile(r"\b(?:currently|now|right\s+now|at\s+the\s+moment|off\s+to)\b", re.I)
"""A word that places the activity in the present: without one, "we're painting the
fence" may tell a plan or a choice."""


def present_activity(row: Any) -> bool:
    """Whether a fact with no number tells what the speaker is doing now
    (:data:`PRESENT_ACTIVITY` with a word of now, :data:`_NOW`), not a lasting trait of
    theirs (:func:`memory_core.items.standing.lasting`)."""
    text = row["text"] or ""
    return (row["kind"] == "fact" and row["value"] is None and not standing.lasting(row)
            and PRESENT_ACTIVITY.search(text) is not None and _NOW.search(text) is not None)


_FAVOURITE = re.compile(r"\b(?:my|our)\s+(?:all[-\s]time\s+|very\s+)?favou?rites?\b", re.I)
_LIKING = re.compile(r"\b(?:love[sd]?|loving|like[sd]?|enjoy(?:s|ed)?|adore[sd]?|prefer(?:s|red)?"
                     r"|fans?|hate[sd]?|dislike[sd]?|fond|keen|go-to|rather|can['\u2019]?t\s+stand"
                     r"|(?:i['\u2019]m|we['\u2019]re|really)\s+into)\b", re.I)
_FAVOURITE_STATED = re.compile(
    r"(?:\b(?:is|are|was|were)|['\u2019](?:s|re))\s+(?:(?:one\s+of|also|definitely|still|always"
    r"|really|probably|easily|by\s+far)\s+)*(?:my|our)\s+(?:all[-\s]time\s+|very\s+)?favou?rite"
    r"|\b(?:my|our)\s+(?:all[-\s]time\s+|very\s+)?favou?rites?(?:\s+[\w'-]+){0,4}?\s+"
    r"(?:(?:is|are|'s|has\s+to\s+be|would\s+be)\b|(?:was|were)\b(?!\s+when\b))"
    r"|\bfavou?rites?\s*[,:\u2013\u2014-]+\s*(?:the\s+)?(?-i:[A-Z\"])", re.I)
"""A favourite stated as such: "X is my favourite", "one of my favourite cities" after a
copula, "My favourite book is …", "my favourite, Dune" (but "My favourite was when …"
tells an event)."""


def attributive_favourite(row: Any) -> bool:
    """Whether a preference's only word of liking is "my favourite" inside a statement
    about something else (module doc): no verb of liking (:data:`_LIKING`), no
    favourite stated as such (:data:`_FAVOURITE_STATED`), no word by which it stands
    (:func:`memory_core.items.standing.is_standing_rule`)."""
    if row["kind"] != "preference":
        return False
    text = row["text"] or ""
    return (_FAVOURITE.search(text) is not None and _LIKING.search(text) is None
            and _FAVOURITE_STATED.search(text) is None and not standing.is_standing_rule(text))


AWAY = re.compile(
    _LEAD + r"(?:[\w'\u2019]+\W+){0,4}?"
    r"(?:(?:(?:be\s+)?back|online|available|around|at\s+(?:my|the)\s+desk)\s+"
    r"(?:(?:online|on\s*line|at\s+(?:my|the)\s+desk|home|here|again)\s+)?in\s+(?:about\s+"
    r"|~\s*)?(?:\d+|an?|one|two|five|ten|fifteen|twenty|thirty|forty|a\s+few)\s*"
    r"(?:min|mins|minutes?|h|hrs?|hours?)\b|brb\b|afk\b"
    r"|(?:stuck|caught)\s+in\s+traffic\b|running\s+(?:a\s+(?:bit|little)\s+)?late\b"
    r"|(?:going|heading|off|gotta\s+go)\s+(?:back\s+)?to\s+(?:bed|sleep|lunch|dinner|the\s+gym)"
    r"(?=\s*(?:$|[,.;:!?)]|now\b))"
    r"|(?:(?:lunch|dinner|coffee)\s+(?:now|break)|(?:signing|logging)\s+off)"
    r"(?=\s*(?:$|[,.;:!?)\u2014-]|now\b|for\s+(?:now|today|tonight|the\s+(?:day|night))\b))"
    r"|calling\s+it\s+a\s+(?:day|night)\b)"
    r"|(?:今日|本日)は(?:もう)?ここまで|今天(?:就)?(?:先)?(?:到这|到此|先这样)|我?先下(?:线)?了"
    r"|(?:先)?去(?:睡|吃饭|睡觉)了"
    r"|(?:\d+|[一两二三四五六七八九十半]+)\s*(?:个)?(?:分钟|小时)(?:之?后|以后)(?:就)?(?:回来|上线|到)"
    r"|(?:\d+|[一二三四五六七八九十]+)\s*(?:分|時間)(?:後|ほど)?で(?:戻ります|戻る|戻れ)", re.I)
"""The speaker stepping away, coming back or stopping for the day (module doc, "away
note"). A break or a sign-off is one only where the note ends on it ("lunch now, back
in 40", "signing off for today"): "Our lunch break is 30 minutes" and "We have lunch
now at noon" give it a value of its own."""


def away_note(row: Any) -> bool:
    """Whether an item tells that the speaker steps away or stops for now (:data:`AWAY`)
    and does not say it stands (:func:`memory_core.items.standing.is_standing_rule`)."""
    text = row["text"] or ""
    return AWAY.search(text) is not None and not standing.is_standing_rule(text)


def chitchat(row: Any) -> bool:
    """Whether an item is chit-chat that does not stand (module doc)."""
    return (empty_hortative(row) or past_choice(row) or guessing_must(row)
            or pointed_liking(row) or counted_description(row) or present_activity(row)
            or attributive_favourite(row) or away_note(row))
