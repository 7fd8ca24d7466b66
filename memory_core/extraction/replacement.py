"""Replacements: a statement that says what was replaced by what, without "actually".

"We replaced RabbitMQ with Kafka", "Kafka replaced RabbitMQ", "We migrated from Heroku
to Fly.io", "We bumped Node to 20", "We went back to Helm", "We dropped Redis in favour
of Memcached", "We use Memcached instead of Redis", 把Jenkins换成了GitLab CI,
从Heroku迁移到了Fly.io, 不再用Redis, HerokuからFly.ioに移行しました,
RabbitMQをKafkaに置き換えました: each revises the earlier state like an unmarked update
(``pipeline._update``), and most name the old value, which is the strongest evidence of
which stored item they replace (the writer's
:func:`memory_core.items.supersession.correction_target` looks for the item that
states it).

:func:`find` reads one sentence and returns a :class:`Replacement` — where its cue is,
the old value (``old``) where it names one, the new value (``new``) and the subject the
item gets — or :data:`BLOCKED` when a replacement form is there but not done: negated
("we haven't migrated from Heroku yet"), planned or wished ("we'll have moved …",
"我们打算从Heroku迁移到Fly.io", "…に移行する予定"), or a condition ("if we moved …",
"when we migrated …"). A plan is a decision or a proposal about the future, not a
change of the current state: it supersedes nothing.

Which phrase is the old *value* and which the *attribute*: an old phrase led by a
determiner or possessive ("our queue", "the battery") names the attribute, so "We
replaced our queue with Kafka" revises the queue, and "We replaced the battery in the
smoke detector" (no new value) is no replacement at all. A version change ("bumped
Node to 20", 把Node升级到20, NodeをYにアップグレード) names the attribute; a revert
("went back to Helm") names only the new value. In Chinese and Japanese the 把X/Xを of
a swap is the old value when it is a name in Latin letters (Jenkins, RabbitMQ), else
the attribute (把消息队列换成Kafka, デプロイツールをArgo CDに変更).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from memory_core.extraction import lexicon as lx
from memory_core.extraction import lexicon_cjk as lc
from memory_core.extraction import retraction
from memory_core.extraction.cue import lacks, tokens
from memory_core.extraction.prepare import detect_lang
from memory_core.extraction.subject import key


@dataclass(frozen=True, slots=True)
class Replacement:
    """One replacement in a sentence (positions are in the sentence's scan).

    ``subject``: the key the item gets (``None``: keep the clause's own);
    ``attribute``: whether it names the attribute that changed ("… for the event
    bus", "bumped Node …", 把消息队列…) rather than only the new value; ``owner``: the
    thing whose attribute it is, where the sentence names one (Chinese and Japanese:
    登录表单 of "登录表单的日志太吵了，把级别降到debug" or 把登录表单的日志级别…; :func:`owner_of`)."""

    at: int
    end: int
    old: str | None
    new: str | None
    subject: str | None
    attribute: bool
    owner: str | None = None


BLOCKED: Final = Replacement(-1, -1, None, None, None, False)
"""A replacement form that is not a done change (module doc)."""

_DETERMINER = re.compile(
    r"^(?:the|a|an|our|my|your|their|his|her|its|this|that|these|those|some|one|another"
    r"|each|every|all|no|any)\s", re.I)
_PRONOUN = re.compile(r"^(?:we|i|you|they|he|she|it|this|that|there|who|which|everyone"
                      r"|everybody|someone|somebody|nobody)$", re.I)
_NAME_TOKEN = re.compile(r"[A-Za-z0-9][\w.+#/-]*")
_LATIN = re.compile(r"[A-Za-z0-9]")
_CJK_TAIL = re.compile(r"(?:了|吧|啦|呢|的|过|了吧|です|でした|ます|ました|を使っています|を使って"
                       r"|を使用|を|は|が|に|へ)+$")
_CJK_ADVERB = re.compile(r"(?:已经|已|都|也|就|还|上周|上个月|昨天|今天|最近|刚刚|刚|先月|先週|昨日"
                         r"|すでに|もう)+$")
"""Adverbs and times between the attribute and the replacement ("官网已经从…"): no part
of the attribute."""
_NUMERIC = re.compile(r"^v?\d[\d.,]*(?:\s*[a-z%]{0,4})?$", re.I)
_VERSIONISH = re.compile(r"^v?\d+(?:\.\d+)+$|^v\d+$", re.I)


def _trim(phrase: str) -> str:
    """A phrase cut where the value ends (:data:`lexicon.EN_REPLACE_TAIL`)."""
    m = lx.EN_REPLACE_TAIL.search(phrase)
    return (phrase[:m.start()] if m else phrase).strip(" \t\"'“”‘’.!")


def _name_like(phrase: str, *, initial: bool = False) -> bool:
    """A name: a word with a capital letter (past the first letter of the phrase when
    it opens the sentence), a digit or a dot inside ("Kafka", "RabbitMQ", "Fly.io",
    "v2.3", "Node 18")."""
    for i, tok in enumerate(_NAME_TOKEN.findall(phrase)):
        if tok == "I" or tok.startswith("I'"):
            continue  # the speaker, not a name
        if any(ch.isdigit() for ch in tok) or "." in tok.strip("."):
            return True
        body = tok[1:] if initial and i == 0 else tok
        if any(ch.isupper() for ch in body) or (not initial and tok[:1].isupper()):
            return True
        if initial and i == 0 and tok[:1].isupper() and not _PRONOUN.match(tok) \
                and not _DETERMINER.match(tok + " "):
            return True
    return False


_ARTICLE = re.compile(r"(?:an?|the)\s+", re.I)
_OWN_NAME = re.compile(r"\b(?:my|our)\s+((?:[A-Z][\w.+-]*)(?:\s+[A-Z0-9][\w.+-]*){0,2})")
"""A name the speaker owns ("my Pixel", "our Jenkins box"): what a later "it" of the
sentence stands for (:func:`_last_own_name`)."""


def _last_own_name(before: str) -> str | None:
    """The last name the speaker owns in ``before`` (:data:`_OWN_NAME`): "I dropped my
    Pixel last week and" → "Pixel"; None when none is named."""
    found = _OWN_NAME.findall(before)
    return found[-1] if found else None


def _value_like(phrase: str) -> bool:
    """A value: a name, or a bare phrase of up to three words ("pnpm", "tabs")."""
    if not phrase or _DETERMINER.match(phrase + " ") or _PRONOUN.match(phrase):
        return False
    return _name_like(phrase) or len(phrase.split()) <= 3


def _attribute(phrase: str | None) -> str | None:
    """The key of an attribute phrase ("our CI" → "ci"); None for a pronoun or nothing."""
    if not phrase or _PRONOUN.match(phrase.strip()):
        return None
    return key(phrase, "en")


def _role(scan: str, at: int, end: int) -> str | None:
    """What the new value is for or as, right after it ("… for the event bus")."""
    m = lx.EN_REPLACE_ROLE.match(scan[at:end] + ".")
    if m is None or lx.EN_REPLACE_WHEN.search(m.group("role").strip()):
        return None  # "… in the spring" says when, not what
    return key(m.group("role"), "en")


def find(scan: str, start: int, end: int, lang: str) -> Replacement | None:
    """The replacement stated in ``scan[start:end]`` (one sentence, its prefixes
    stripped), :data:`BLOCKED`, or None (module doc)."""
    if lang == "en":
        return _find_en(scan, start, end)
    return _find_cjk(scan, start, end, lang)


def _find_en(scan: str, start: int, end: int) -> Replacement | None:
    seg = scan[start:end]
    order = _owned_order_en(seg)
    if order is not None:
        at, stop, new, subject, owner = order
        return Replacement(start + at, start + stop, None, new, subject, True, owner)
    if lx.EN_REPLACE_WORDS.isdisjoint(tokens(seg)):
        return None
    seg = seg.rstrip(" .!")
    low = seg.lower()
    swap_read = False
    for (kind, pattern), needles in zip(lx.EN_REPLACE, lx.EN_REPLACE_NEEDLES, strict=True):
        if swap_read and pattern.pattern.startswith("^(?P<new>"):
            continue  # "Black replaced my single quotes with …": read and rejected already
        if lacks(seg, needles, low):
            continue  # no word every match of the form holds: it cannot match
        m = pattern.search(seg)
        if m is None:
            continue
        if kind == "swap" and not pattern.pattern.startswith("^"):
            swap_read = True
        groups = m.groupdict()
        cue = m.start()
        if kind == "swap" and m.re.pattern.startswith("^(?P<old>"):
            cue = m.end("old")  # "RabbitMQ was replaced by Kafka"
        elif kind == "swap" and m.re.pattern.startswith("^(?P<new>"):
            cue = m.end("new")  # "Kafka replaced RabbitMQ"
        elif kind == "instead":
            cue = m.end("head")
        elif kind == "end" and m.re.pattern.startswith("^(?P<old>"):
            cue = m.end("old")  # "The offsite is off": "If the trip is off, …" blocks
        if lx.EN_REPLACE_BLOCK.search(seg, 0, cue) or (
                kind in ("swap", "instead") and m.re.pattern.startswith("^")
                and lx.EN_REPLACE_BLOCK.match(seg)):
            return BLOCKED
        found = _read_en(kind, m, groups, seg, start)
        if found is not None:
            return Replacement(start + cue, start + m.end(), *found)
    return None


def _read_en(kind: str, m: re.Match[str], g: dict[str, str | None], seg: str,
             start: int) -> tuple[str | None, str | None, str | None, bool] | None:
    """(old, new, subject, attribute) of one matched form, None when its phrases are
    not values (module doc)."""
    new = _trim(g.get("new") or g.get("new2") or "")
    new_end = m.start("new") + len(new) if g.get("new") else (
        m.start("new2") + len(new) if g.get("new2") else m.end())
    if m.re.pattern.startswith("^(?P<new>"):  # "Dana replaced Tom as team lead"
        new_end = m.start("old") + len(_trim(g["old"] or ""))
    role = _role(seg, new_end, len(seg)) if new else None
    what = (g.get("what") or g.get("what2") or "").strip() or None
    if kind == "swap":  # ("swapped shifts with Maria" is an exchange: only "… for")
        old = _trim(g.get("old") or g.get("old2") or "")
        if old.lower() in ("it", "them") and not m.re.pattern.startswith("^"):
            # "I dropped my Pixel and replaced it with an iPhone 15": "it" is the
            # speaker's thing named before it, the new one a name after an article
            antecedent = _last_own_name(seg[:m.start()])
            article = _ARTICLE.match(new)
            if antecedent and article and _name_like(new[article.end():]):
                old, new = antecedent, new[article.end():]  # "… with an iPhone 15"
        initial_new = m.re.pattern.startswith("^(?P<new>")
        if initial_new and (not _name_like(new, initial=True) or _DETERMINER.match(new + " ")
                            or _PRONOUN.match(new)):
            return None  # "We replaced the battery…" is no "X replaced Y"
        if _DETERMINER.match(old + " ") or (m.re.pattern.startswith("^(?P<old>")
                                            and not _name_like(old, initial=True)):
            if not _name_like(new):
                return None  # "… the battery with a new one"
            return None, new, role or key(old, "en"), True
        if not _value_like(old) or not (_value_like(new) or initial_new):
            return None
        if initial_new and not _name_like(old):
            return None
        return old, new, role or key(new, "en"), role is not None
    if kind == "move":
        old = _trim(g["old"] or "")
        if not _name_like(new) and not _value_like(new):
            return None
        if not _LATIN.search(old) or _NUMERIC.match(old):
            subject = _attribute(what)
            return (None, new, subject, True) if subject else None
        if _DETERMINER.match(old + " "):
            subject = _attribute(what) or key(old, "en")
            return (None, new, subject, True) if _name_like(new) and subject else None
        subject = role or _attribute(what)
        return old, new, subject or key(new, "en"), subject is not None
    if kind == "assign":  # "We set the log level to debug"
        subject = _attribute(what)
        return (None, new, subject, True) if subject and _value_like(new) else None
    if kind in ("set", "revert"):
        if not (_name_like(new) or _NUMERIC.match(new)):
            return None  # "went back to the office", "updated the docs to reflect …"
        subject = _attribute(what)
        if subject is None and kind == "set":
            return None
        if subject is None:
            subject = role or key(new, "en") or ("version" if _VERSIONISH.match(new) else None)
            return (None, new, subject, role is not None) if subject else None
        return None, new, subject, True
    if kind == "drop":
        old = _trim(g.get("old") or g.get("old2") or "")
        if what and not role:  # "Drop Redis from the stack": a member of the stack
            role = _attribute(what)
        if new and not _name_like(new):
            role, new = key(new, "en"), ""  # "dropped Redis for caching": a purpose
        after = m.string[m.start("old") if g.get("old") else m.end():]
        if _FOR_A_TIME.search(after) or _RESUMED.search(after):
            return None  # "I abandoned my novel for a week but I'm back": a pause, no end
        given_up = _GIVEN_UP.match(m.group(0)) and actor(seg) == "self"
        own = _OWN_UNDERTAKING.fullmatch(old) if given_up and not new and not what else None
        if own:
            # "I abandoned my novel", "I gave up on my blog": the speaker's own
            # undertaking ends, named by its noun
            return own.group("thing"), None, key(own.group("thing"), "en"), False
        if not _name_like(old) or _DETERMINER.match(old + " ") or _PREPOSITION.match(old):
            return None  # "I retired in June": a time, nothing dropped
        return old, new or None, role or key(new or old, "en"), role is not None
    if kind == "end":
        return _read_end(m, g, new)
    # instead: "We use Memcached instead of Redis"
    old = _trim(g["old"] or "")
    head = g.get("head") or ""
    words = head.split()
    if not words or not _value_like(old) or lx.EN_IMPERATIVE.match(head):
        return None  # "Use tabs instead of spaces": an order, read by the rules
    if not lx.EN_INSTEAD_STATE.search(head):
        return None  # "I had pizza instead of pasta": one event, not a standing choice
    n = 1
    while n < min(3, len(words) - 1) and words[-n - 1][:1].isupper():
        n += 1
    new = " ".join(words[-n:]).strip(",;:")
    if not _value_like(new):
        return None
    return old, new, None, False


_GIVEN_UP = re.compile(r"(?:abandoned|ditched|gave\s+up(?:\s+on)?)\s", re.I)
"""Verbs that end an undertaking and nothing else ("dropped my phone" may be a fall,
"retired my laptop" a thing put away)."""
_OWN_UNDERTAKING = re.compile(r"(?:my|our)\s+(?P<thing>[a-z][a-z-]+(?:\s+[a-z][a-z-]+)?)")
"""The speaker's own undertaking, one or two lower-case words ("my novel", "our garden
project"): a name would be read as one already."""
_RESUMED = re.compile(r"\bbut\b[^.;!?]*\b(?:back|again|resumed)\b", re.I)
"""A contrast that tells of a return ("… but I'm back", "… but picked it up again"): the
thing given up goes on."""
_POSSESSED = re.compile(r"^(?:my|our)\s", re.I)
_CANCELLED = re.compile(r"\b(?:cancell?ed|called\s+off)\b", re.I)
_LEFT = re.compile(r"\s*(?:left|quit)\s", re.I)
_TOGETHER = re.compile(r"\s+and\s+(?:i|we)\b", re.I)
_PREPOSITION = re.compile(r"(?:on|in|at|for|to|from|by|with|until|since|during)(?![\w'-])",
                          re.I)
"""An old phrase that opens on one is no thing ("We closed early on Friday")."""
_UNIT = (r"(?:minutes?|hours?|days?|nights?|weeks?|weekends?|months?|summer|winter|holidays?"
         r"|vacation|while|trip|break)")
_FOR_A_TIME = re.compile(
    r"^\s*early\b|\b(?:for\s+(?:(?:a|an|the|one|two|three|four|five|six|a\s+few|a\s+couple\s+of|\d+)\s+)?"
    r"(?:\w+\s+)?" + _UNIT + r"\b|for\s+(?:now|today|tonight)|over\s+the\s+(?:weekend|holidays?)"
    r"|at\s+(?:\d{1,2}(?::\d\d)?\s*(?:[ap]\.?m\b\.?)?|noon|midnight|lunch)|until\b|till\b"
    r"|temporarily|briefly|and\s+(?:then\s+)?(?:restart|reopen|return|rejoin|came\s+back"
    r"|went\s+back))", re.I)
"""After the ended thing, a time it lasts or a return: a leave or a stop for a while, no
end ("I left Berlin for a week of holidays", "I left Globex at 6 pm", "I quit VS Code and
restarted it")."""
_ONE_OCCASION = re.compile(r"\b(?:today|tonight|tomorrow|this\s+(?:time|week|morning"
                           r"|afternoon|evening|\w+day))\b", re.I)
"""After cancelled or off, one occasion of the thing ("The standup was cancelled today"):
that one is off, the thing goes on."""
_BARE_CLOSED = re.compile(r"\s*closed\s+$", re.I)
_GONE = re.compile(r"\b(?:died|passed\s+away|put\s+down)\b", re.I)
_MOVED_OUT = re.compile(r"\s*moved\s+out\s+of\s", re.I)
_DWELLING_OF = re.compile(r"(?P<who>[\w\s-]{1,30}?)(?:['\u2019]s?)\s+(?:place|house|home|flat"
                          r"|apartment)$", re.I)
"""Whose home the speaker moved out of ("my parents' place", "Tom's flat")."""
_MOVED_OUT_HOME = re.compile(r"\bmoved\s+out\s+of\s+(?:my|our)\s+[\w\s-]{1,30}?['\u2019]s?\s+"
                             r"(?:place|house|home|flat|apartment)\b", re.I)
_SPEAKER_LIVES = re.compile(
    r"^\W*(?:i|we)(?:\s+(?:still|currently|now))?(?:\s+live|\s+am\s+living|'m\s+living"
    r"|\s+are\s+living|'re\s+living|\s+stay|'m\s+staying|\s+am\s+staying)\b", re.I)
_SPEAKER_WORKS = re.compile(
    r"^\W*(?:i|we)(?:\s+(?:still|currently|now))?(?:\s+work|'m\s+working|\s+am\s+working"
    r"|'re\s+working|\s+are\s+working)\s+(?:as|at|for|in)\b"
    r"|^\W*my\s+(?:job|occupation|profession)\s+is\b"
    r"|^\W*(?:i|we)(?:'m|\s+am|'re|\s+are)\s+(?:employed|working)\b", re.I)


def ends_home_with(text: str) -> bool:
    """Whether ``text`` moves the speaker out of someone's home ("I moved out of my
    parents' place"): it ends only where the speaker lives ("I live with my parents"),
    never a statement about them ("My parents live in Ohio": :func:`speaker_lives`)."""
    return _MOVED_OUT_HOME.search(text) is not None


def speaker_lives(text: str) -> bool:
    """Whether ``text`` states where or with whom the speaker lives ("I live with my
    parents", "We're living in Lisbon")."""
    return _SPEAKER_LIVES.match(text) is not None


def speaker_works(text: str) -> bool:
    """Whether ``text`` states the speaker's work ("I work as a teacher", "I work at
    Globex", "My job is …", "I'm employed at …"): what an end of :data:`WORK` ends."""
    return _SPEAKER_WORKS.match(text) is not None


WORK = "work"
"""The subject of an end that names no value but the speaker's work ("I retired",
"I got laid off"): it revises the speaker's statements of their work ("I work as a
teacher")."""

_ENDS_WORK: Final = next(p for k, p in lx.EN_REPLACE if k == "end" and "?P<work>" in p.pattern)


def ends_work(text: str) -> bool:
    """Whether ``text`` is an end of the speaker's work ("I retired last year", "We got
    laid off"): the one statement of subject :data:`WORK` that names no work. "We work
    from home on Mondays now" also has that subject (its verb) and ends nothing."""
    return _ENDS_WORK.search(text.strip().rstrip(".!?…。 ")) is not None


def _read_end(m: re.Match[str], g: dict[str, str | None], new: str
              ) -> tuple[str | None, str | None, str | None, bool] | None:
    """(old, new, subject, False) of an event that ends a state (``lexicon.EN_REPLACE``
    ``end``): the ended thing without its determiner. It must be a name ("Globex", "the
    Lisbon trip"; a place or an employer after left or quit: "I left my keys at home"
    ends nothing), something of the speaker's ("I sold my car"; "I sold the idea to my
    boss" ends nothing) or, after cancelled or called off, an event ("the standup");
    "… is off" only an event (``lexicon.EN_EVENT_HEADS``: "The offsite is off", not
    "The TV is off"). None for a pronoun ("we cancelled it") and for another person's
    event ("My sister left Globex", :func:`actor`)."""
    if g.get("work"):
        return None, None, WORK, True  # "I retired last year": the speaker's work
    said = _trim(g["old"] or "")
    old = _DETERMINER.sub("", said).strip()
    if _GONE.search(m.group(0)) and m.re.pattern.startswith("^(?P<old>"):
        # "My cat Luna died": the speaker's own (not "My sister's cat …"), by its name
        name = old.split()[-1]
        return (name, None, key(name, "en"), False) if _name_like(name) \
            and "'" not in old and "\u2019" not in old else None
    if not old or _PRONOUN.match(old) or _PREPOSITION.match(old) or actor(m.string) == "other":
        return None  # "My sister left Globex": her change, not the speaker's
    dwelling = _DWELLING_OF.match(old) if _MOVED_OUT.match(m.group(0)) else None
    if dwelling:
        # "I moved out of my parents' place": the home the speaker shared with them
        return dwelling.group("who"), None, key(dwelling.group("who"), "en"), False
    passive = m.re.pattern.startswith("^(?P<old>")
    verb = m.group(0)[m.end("old") - m.start():] if passive \
        else m.group(0)[:m.start("old") - m.start()]
    whole = g["old"] or ""
    cut = lx.EN_REPLACE_TAIL.search(whole)
    rest = m.string[m.end():] if passive else (whole[cut.start():] if cut else "")
    if _FOR_A_TIME.search(rest) or (_ONE_OCCASION.search(rest) and (
            passive or _CANCELLED.search(verb))):
        return None  # "I left Berlin for a week", "The standup was cancelled today"
    if _BARE_CLOSED.match(verb) and not _DETERMINER.match(said + " "):
        return None  # "I closed VS Code": a window, not "We closed the Berlin office"
    if passive and _TOGETHER.match(verb):  # "Emma and I broke up": a name
        if not _name_like(old):
            return None
    elif passive and not _CANCELLED.search(verb):  # "… is off"
        if old.split()[-1].lower() not in lx.EN_EVENT_HEADS:
            return None
    elif not _name_like(old) and (_LEFT.match(verb) or not (
            _CANCELLED.search(verb) or _POSSESSED.match(said))):
        return None
    if new and not _value_like(new):
        new = ""
    return old, new or None, key(new or old, "en"), False


_ZH_MARKS = tuple(lc.ZH_REPLACE_MARKS.split("|"))
_JA_MARKS = tuple(lc.JA_REPLACE_MARKS.split("|"))


def _find_cjk(scan: str, start: int, end: int, lang: str) -> Replacement | None:
    seg = scan[start:end]
    if not any(mark in seg for mark in (_ZH_MARKS if lang == "zh" else _JA_MARKS)):
        return None
    table = lc.ZH_REPLACE if lang == "zh" else lc.JA_REPLACE
    for kind, pattern in table:
        m = pattern.search(seg)
        if m is None:
            continue
        if lang == "zh" and lc.ZH_REPLACE_BLOCK.search(seg):
            return BLOCKED
        if lang == "ja":
            after = seg[m.end():m.end() + 12]
            if lc.JA_REPLACE_BLOCK.search(seg[:m.start()]) or lc.JA_REPLACE_BLOCK.search(after):
                return BLOCKED
            if not pattern.pattern.endswith("(?:を|に)") and not lc.JA_REPLACE_DONE.match(after):
                return None  # "…に移行します": not told done; the update cues decide
        found = _read_cjk(kind, m.groupdict(), lang)
        if found is not None:
            old, new, subject, attribute = found
            owner = None
            if attribute:  # the attribute phrase: 把X调到 (what), 把X换成 (old)
                g = m.groupdict()
                owner, subject = _owned(seg[:m.start()], g.get("what") or g.get("old"),
                                        subject, lang)
            return Replacement(start + m.start(), start + m.end(), old, new, subject,
                               attribute, owner)
    return None


_OWNER_PRONOUN = re.compile(r"^(?:我们|我|你们|你|他们|他|她们|她|它|咱们|大家|自己|这个|那个|这|那"
                            r"|私|僕|俺|あなた|彼女|彼|自分|この|その|あの)$")
_ZH_OWNER = re.compile(r"([^，,。；;！!？?的把将从用]{2,16}?)的(?:([^，,。；;！!？?的]{1,6}?)"
                       r"(?:太|很|有点|总是|老是|一直|又|还|都|也|不|没|是|在|会|越来越|特别|非常))?")
_JA_OWNER = re.compile(r"([^、，,。；;！!？?のはがをに]{2,16}?)の(?:([^、，,。；;！!？?のはがをに]{1,8}?)"
                       r"(?:が|は|も))?")
"""X of X的 / Xの, and the part after it up to the clause's predicate (登录表单的日志太吵了:
登录表单, 日志)."""
_CJK_CLAUSE = re.compile(r"[，,；;、]")


def _owner_in(phrase: str, lang: str) -> tuple[str, str] | None:
    """The thing a phrase names as an owner (X of X的Y / XのY), not a pronoun or time,
    and its part Y where a predicate follows it ("" where none)."""
    m = (_ZH_OWNER if lang == "zh" else _JA_OWNER).search(phrase)
    if m is None:
        return None
    owner = _CJK_ADVERB.sub("", m.group(1).strip(" \t　"))
    if len(owner) < 2 or _OWNER_PRONOUN.match(owner) or lc.CJK_NOT_VALUE.match(owner):
        return None
    return owner, (m.group(2) or "").strip(" \t　")


def _owned(before: str, what: str | None, subject: str | None, lang: str
           ) -> tuple[str | None, str | None]:
    """The owner of the attribute a CJK order or change names, and the key it gets.

    An attribute phrase that names its owner (把登录表单的日志级别…) keeps its key; a bare
    one (把级别降到debug) after a clause of the same sentence that names a thing's part
    (登录表单的日志太吵了，…; ログインフォームのログが…、レベルを…) is that thing's: its key
    carries the owner and the part the clause names (登录表单日志级别, as 把登录表单的日志级别…
    has), so orders about two components' 级别 stay two."""
    named = _owner_in(what or "", lang)
    if named is not None:
        return named[0], subject
    clauses = [c for c in _CJK_CLAUSE.split(before) if c.strip()]
    if not clauses or not what or not subject:
        return None, subject
    named = _owner_in(clauses[-1], lang)
    if named is None:
        return None, subject
    owner, part = named
    attribute = _cjk_phrase(what)
    if part in attribute:
        part = ""  # 登录表单的超时太长了，把超时调到30秒: one attribute
    elif attribute in part:
        part, attribute = "", part
    joint = "的" if lang == "zh" else "の"
    return owner, key(f"{owner}{joint}{part}{attribute}", lang) or subject


def owner_of(text: str) -> str | None:
    """The owner :func:`find` reads in a change or order of a named thing's attribute
    (``text`` one sentence: 登录表单 of "登录表单的日志太吵了，把级别降到debug。", "login form"
    of "The login form's logs are too noisy, lower the level to debug."), or None."""
    lang = detect_lang(text)
    if lang == "en":
        order = _owned_order_en(text)
        return order[4] if order is not None else None
    if lang not in ("zh", "ja"):
        return None
    swap = _find_cjk(text, 0, len(text), lang)
    return swap.owner if swap is not None else None


_EN_ORDER = re.compile(
    r"(?:^|(?<=[,;:]\s)|(?<=[,;:]))\s*(?:(?:so|and|then|please|just)\s+)*"
    r"(?:set|change|lower|raise|bump|increase|decrease|reduce|turn\s+(?:down|up)|drop)\s+"
    r"(?P<what>(?:the|its|their)\s+[\w' -]{1,40}?|[\w-]+(?:\s+[\w-]+){0,3}['\u2019]s"
    r"\s+[\w -]{1,30}?)\s+(?:down\s+|up\s+|back\s+)?to\s+"
    r"(?P<new>[^\s,;.!?]+(?:\s+[^\s,;.!?]+){0,2})\s*[.!]*\s*$", re.I)
"""An order to set an attribute to a value that ends the sentence, at a clause's start
("lower the level to debug", "Set the login form's log level to debug"); a value with
a place after it ("… to 30s in this function") is an order about the code at hand."""
_EN_OWNER = re.compile(
    r"^\s*(?:(?:the|our|this|that)\s+)?(?P<owner>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,3}?)"
    r"['\u2019]s\s+(?P<part>[a-z][\w-]*(?:\s+[a-z][\w-]*)?)(?:\s+(?:is|are|was|were|has|have"
    r"|had|keeps?|seems?|looks?|gets?|got|feels?)\b|\s*$)", re.I)
"""A thing's part, "X's Y", before its verb ("The login form's logs are …") or alone
("the login form's log level")."""
_EN_NOT_OWNER = re.compile(r"^(?:today|tonight|yesterday|tomorrow|this\s+week|last\s+week"
                           r"|everyone|everybody|someone|somebody|nobody|it|that|there|here"
                           r"|what|who|he|she)$", re.I)


_EN_OF_OWNER = re.compile(
    r"^\s*(?:the|its|their)\s+(?P<part>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}?)\s+of\s+"
    r"(?:the|our|this|that)\s+(?P<owner>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,3}?)"
    r"(?:\s+(?:is|are|was|were|has|have|had|keeps?|seems?|looks?|gets?|got|feels?)\b|\s*$)",
    re.I)
"""A thing's part written "the Y of the X" ("the log level of the login form"): the owner
has its own determiner, so a name or a mass noun after "of" is no owner ("the speed of
light", "the city of London", "Bank of America"), nor is a measure ("a cup of coffee")."""
_EN_NOT_PART = frozenset(
    "end ends start beginning middle rest half part parts most all some none top bottom "
    "side number amount lot lots kind sort type".split())
"""A "Y" of "the Y of the X" that is a share or a position of X, not its attribute ("the
end of the day", "the rest of the team")."""
_EN_TIME_NOUN = re.compile(r"(?:^|\s)(?:day|week|month|year|quarter|sprint|morning|afternoon"
                           r"|evening|night|weekend|meeting)s?$", re.I)


def _en_owner(phrase: str) -> tuple[str, str] | None:
    """The owner and part a phrase names as "X's Y" or "the Y of the X", not a time, a
    pronoun, or a share of X (``(owner, part)``, both lower case)."""
    m = _EN_OWNER.match(phrase)
    if m is not None and not _EN_NOT_OWNER.match(m.group("owner")):
        return m.group("owner").lower(), m.group("part").lower()
    m = _EN_OF_OWNER.match(phrase)
    if m is None or _EN_TIME_NOUN.search(m.group("owner")) \
            or m.group("part").split()[0].lower() in _EN_NOT_PART:
        return None
    return m.group("owner").lower(), m.group("part").lower()


def _owned_order_en(seg: str) -> tuple[int, int, str, str, str] | None:
    """An English order about a named thing's attribute, as Chinese and Japanese ones
    are read (:func:`_owned`): the thing named in the order ("Set the login form's log
    level to debug", "Set the log level of the login form to debug") or in the clause
    before it ("The login form's logs are too noisy, lower the level to debug").
    ``(start, end, new value, key, owner)``; None for an order that names no thing ("Set
    the timeout to 30s in this function": the code at hand) or no order."""
    m = _EN_ORDER.search(seg) if " to " in seg.lower() else None
    if m is None:
        return None
    new = m.group("new").strip()
    if not _value_like(new):
        return None
    what = m.group("what")
    named = _en_owner(what)
    if named is not None:
        owned = re.split(r"['\u2019]s\s", what, maxsplit=1)
        owner, attribute = named[0], owned[1].strip().lower() if len(owned) > 1 else named[1]
        subject = key(f"{owner} {attribute}", "en")
    else:
        before = [c for c in re.split(r"[,;:]", seg[:m.start()]) if c.strip()]
        named = _en_owner(before[-1]) if before else None
        if named is None:
            return None
        owner, part = named
        attribute = re.sub(r"^(?:the|its|their)\s+", "", what.strip(), flags=re.I).lower()
        if part in attribute or attribute in part:
            phrase = part if attribute in part else attribute
        else:
            # a noun before a noun is singular: "logs" + "level" is the "log level"
            phrase = f"{part[:-1] if part.endswith('s') and not part.endswith('ss') else part}"\
                     f" {attribute}"
        subject = key(f"{owner} {phrase}", "en")
    if not subject:
        return None
    return m.start(), m.end(), new, subject, owner


def _cjk_phrase(phrase: str | None) -> str:
    return _CJK_TAIL.sub("", (phrase or "").strip(" \t　")).strip(" \t　")


def _read_cjk(kind: str, g: dict[str, str | None], lang: str
              ) -> tuple[str | None, str | None, str | None, bool] | None:
    new = _cjk_phrase(g.get("new"))
    old = _cjk_phrase(g.get("old"))
    what = key(_CJK_ADVERB.sub("", _cjk_phrase(g.get("what"))), lang) if g.get("what") else None
    if not new and kind != "drop":
        return None
    if old and lc.CJK_NOT_VALUE.match(old):
        return None  # "今日からFly.ioに移行": a time, not the old value
    if kind == "move":
        if _NUMERIC.match(old):
            return (None, new, what, True) if what else None
        return old, new, what or key(new, lang), what is not None
    if kind == "swap":
        if not old:
            return None
        if not _LATIN.search(old):
            return None, new, key(old, lang), True  # 把消息队列换成Kafka: the attribute
        return old, new, key(new, lang), False
    if kind == "set":
        if not what or not _LATIN.search(new):
            return None
        return None, new, what, True
    if kind == "revert":
        if not _LATIN.search(new) and not what:
            return None
        return None, new, what or key(new, lang), what is not None
    # drop: 不再用Redis, Redisを使うのをやめました
    if not _LATIN.search(old):
        return None
    return old, None, key(old, lang), False


def actor(text: str) -> str | None:
    """Who a sentence is about: ``"other"`` for another person or group as its actor or
    its subject's owner ("My sister moved back to Ohio", "My brother lives in Boston",
    "The analytics team went back to …", 我妈妈住在北京, 母は…), ``"self"`` for the
    speaker ("I …", "we …"), else None (a thing: "Kafka replaced RabbitMQ", "Our
    hosting is Heroku", or a Chinese or Japanese sentence without a subject)."""
    stripped = text.strip()
    if lx.EN_OTHER_ACTOR.match(stripped) or lc.CJK_OTHER_ACTOR.match(stripped):
        return "other"
    if lx.EN_SELF_ACTOR.match(stripped):
        return "self"
    return None


def adds(text: str) -> bool:
    """Whether a sentence adds one more of a kind to what holds ("We now also support
    API keys", "… on Windows too", 现在也用 Redis, 今はMySQLも使っています) without saying
    that something changed (:func:`states_change`): dated by "now", it still revises
    nothing (:func:`memory_core.items.supersession.correction_target`); nor does a thing
    changed so that it holds one more part (:data:`~memory_core.extraction.lexicon.EN_ADDED_PART`:
    "I changed the template to include a Known Issues section").

    Only the statement's own clause counts (:func:`_first_clause`): an addition in a
    clause after it is about something else ("The standup is at 10 now, which also
    suits Denver", 我现在住在上海，离公司也近), and the update still revises."""
    lang = detect_lang(text)
    additive = lx.EN_ADDITIVE if lang == "en" else lc.ZH_ADDITIVE if lang == "zh" \
        else lc.JA_ADDITIVE
    if lang == "en" and lx.EN_ADDED_PART.search(_first_clause(text)):
        return True  # "I changed the template to include a Known Issues section"
    return additive.search(_first_clause(text)) is not None and not states_change(text)


_CLAUSE_BREAK = re.compile(r"[,:](?!\d)|[;\u3001\uff0c\uff1b\uff1a]")
"""Where a clause ends; not the comma or colon inside a number ("12,000", "9:30")."""
_OPENER_WORDS = 3
"""Most words (Latin) or characters (CJK) of a sentence-opening adverbial ("From
today,", "Besides,", 另外，, 今は、) that :func:`_first_clause` reads past."""
_OPENER_WORD = re.compile(r"[A-Za-z0-9]+|[^\W_A-Za-z0-9]")
"""A word of an opener: a run of Latin letters and digits, or one CJK character."""


def _first_clause(text: str) -> str:
    """The clause of ``text`` that holds its statement: the first one that is more than
    a short opening adverbial, up to the next comma, semicolon or colon (、，；：
    too)."""
    clauses = _CLAUSE_BREAK.split(text)
    for clause in clauses[:-1]:
        if len(_OPENER_WORD.findall(clause)) > _OPENER_WORDS:
            return clause
    return clauses[-1]


def states_change(text: str) -> bool:
    """Whether a sentence says a state changed — a change verb ("we switched to …", "no
    longer", "… instead of npm", 换成, 搬到, に移行), a replacement (:func:`find`) or a
    withdrawal turned stance ("Never mind the 10am thing; early slots are okay now") —
    rather than only dating what it states ("The backend is on Fly.io now", 现在, 今は).
    A change presupposes an earlier state that it revises; "now" alone does not, so a
    dated statement about a thing of its own may sit beside the other's
    (:func:`memory_core.items.writer.revise_by_meaning`)."""
    lang = detect_lang(text)
    change = lx.EN_CHANGE if lang == "en" else lc.ZH_CHANGE if lang == "zh" else lc.JA_CHANGE
    if change.search(text):
        return True
    swap = find(text, 0, len(text), lang)
    return (swap is not None and swap is not BLOCKED) \
        or retraction.find(text, 0, len(text), lang) is not None
