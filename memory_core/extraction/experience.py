"""Experiences: what a person has or has not done, seen or been to in their life ("I've
been to Japan twice.", "I have never been to Japan.", "I haven't tried Rust yet.", "My
son has never flown before.", 我去过日本, 我从来没去过日本, 日本に行ったことがある,
日本に行ったことがない).

:func:`read` reads one clause and returns an :class:`Experience` — the subject key and
whether the clause denies it — or ``None``. An experience is a biography fact (the
questions of chit-chat ask about them: "Has Caroline been to Japan?"), never a standing
line: nothing in it says it holds for every later answer. Its key is the experience:
the verb's meaning and its object, so that rephrasings of one experience share it —
"been to X", "gone to X", "travelled to X" and "visited X" all key ``visited x``, and a
later "I visited Japan in May" has the subject of "I've never been to Japan". Someone
other than the speaker leads the key ("My son has never flown" keys ``son flown``);
how often it happened ("once", "twice", "three times", "before", "yet", "ever",
"so far") and the denial are no part of it: the denial sets ``negated``.

English reads the perfect tense of a closed list of experience verbs (:data:`_EN_VERB`),
and claims the clause only where it is one: a denial, "ever", a count or "before"/"yet"
says so, or a verb of going somewhere names a place ("I've been to Japan"; not "I've
been to the gym", "I've been in meetings all day"). "I have used Vim for years" (how
long, no count) is left to the other rules. The simple past of the speaker's own
(:data:`EN_PAST`: "I went to Japan.", "I tried Rust last week.", "I never tried Rust")
is one where "never", a count, "finally", "for the first time" or a past time
("yesterday", "last week", "in 2019", "two years ago") says so, or a verb of going
names a place; its verb keys as the participle does ("ate" as ``eaten``), so "I tried
Rust last week." turns over "I haven't tried Rust yet.". A light verb's perfect that
only "yet" or "already" marks, on someone's or the definite thing or a meal ("I
haven't done the dishes yet", "I've already taken my meds", "I haven't had lunch
yet"), is the state of a chore of the day (:func:`chore`), no experience of a life.
Chinese reads the speaker's V过 (去过日本, 没去过, 还没吃过寿司); Japanese
V-たことがある / ない.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from memory_core.extraction.subject import cjk_key, en_key


@dataclass(frozen=True, slots=True)
class Experience:
    """``subject``: the experience's key (module doc); ``negated``: the clause denies it
    ("never", "not", "n't"; 没, 未; ない, ありません)."""

    subject: str
    negated: bool


_EN_VISIT: Final = (r"been\s+(?:to|in)|gone\s+(?:to|into)|visited|travell?ed\s+(?:to|in|around)"
                    r"|flown\s+to|driven\s+to|sailed\s+to|went\s+to")
"""Going somewhere: one experience, keyed ``visited`` ("been to Japan" = "visited Japan")."""
_EN_VERB: Final = (
    r"tried|used|seen|met|lived(?:\s+(?:in|at|on|abroad))?|worked(?:\s+(?:with|at|in|on|for|as))?"
    r"|played|eaten|tasted|drunk|read|watched|heard(?:\s+of)?|climbed|driven|flown|ridden"
    r"|run|swum|skied|surfed|hiked|camped|cooked|baked|built|written|studied|learned|learnt"
    r"|taught|owned|attended|performed|sung|danced|painted|done|had|taken|won|competed\s+in"
    r"|ran|swam|fished|gardened|volunteered(?:\s+(?:at|with|for))?|adopted|raised|fostered")
"""Participles of what a life holds ("tried", "met", "lived in", "worked with"); a
preposition that makes the verb ("lived in", "worked with") is part of it."""
_EN_LIGHT: Final = frozenset(("used", "had", "done", "taken"))
"""Verbs that say nothing of their own beside their object ("I've never used Vim" keys
``vim``, as "I use Vim" does)."""
_EN_ADVERB: Final = (r"never|not|ever|already|actually|really|only|just|also|even|personally"
                     r"|recently|once|twice|still|both|all|definitely|honestly|truly|certainly")
EN_EXPERIENCE: Final = re.compile(
    r"^(?P<who>i|we|he|she|they|(?:my|our|his|her|their)\s+[a-z][\w-]*(?:\s+[a-z][\w-]*)?"
    r"|(?!(?:what|who|where|when|how|why|which|it|that|this|there|here|everything|nothing"
    r"|something|everyone|nobody|no\s+one)\b)(?-i:[A-Z][a-z]+)(?:\s+(?-i:[A-Z][a-z]+))?)"
    r"(?:['’]ve|['’]s|\s+have|\s+has)(?P<nt>n['’]t)?"
    rf"(?P<mid>(?:\s+(?:{_EN_ADVERB}))*)\s+"
    rf"(?:(?P<visit>{_EN_VISIT})|(?P<verb>{_EN_VERB}))\b(?P<rest>[^,;:.!?]*)", re.I)
"""Someone, the perfect's auxiliary (its denial), adverbs, an experience verb, the rest."""
_EN_MARK: Final = re.compile(
    r"\b(?:before|yet|once|twice|thrice|ever|so\s+far|in\s+(?:my|his|her|their|our)\s+"
    r"(?:whole\s+|entire\s+)?life|a\s+(?:few|couple\s+of)\s+times)\b|(?<!\S)\S+\s+times\b", re.I)
"""What makes a perfect an experience ("before", "yet", "twice", "three times")."""
_EN_LASTING: Final = re.compile(
    r"\b(?:for\s+(?:\d+|a|an|many|several|some|the\s+(?:past|last)|years|months|ages|decades"
    r"|weeks|a\s+while|a\s+long\s+time)|since)\b", re.I)
"""How long a state has held ("for years", "since 2019"): a state, no experience."""
_EN_CUT: Final = re.compile(
    r"\b(?:before|yet|once|twice|thrice|ever|so\s+far|already|recently|either|at\s+all"
    r"|in\s+(?:my|his|her|their|our|your)\s+(?:whole\s+|entire\s+)?life(?:time)?"
    r"|a\s+(?:few|couple\s+of)\s+times|with|during|when|while|because|since|for"
    r"|and|but|though|although|last|this|next|in\s+(?:19|20)\d\d|as\s+(?:a|an)"
    r"|myself|ourselves|himself|herself|themselves|too|as\s+well)\b|(?<!\S)\S+\s+times\b", re.I)
"""Where the object of the experience ends: a count, a time, a reason, a companion."""
_EN_REFERENCE: Final = re.compile(r"\s*(?:it|that|this|those|these|them|one|so)\b", re.I)
_EN_DENIAL: Final = re.compile(r"\b(?:never|not)\b", re.I)
_EN_PLACE: Final = re.compile(r"\s+(?:the\s+)?(?-i:[A-Z])")
"""A named place after a verb of going ("been to Japan", "visited the Louvre"): that
names an experience without a count; "been to the gym" tells of a day."""


_EN_PAST_VISIT: Final = r"went\s+to|visited|travell?ed\s+to|flew\s+to|drove\s+to|sailed\s+to"
_EN_PAST_VERB: Final = {
    "tried": "tried", "met": "met", "ate": "eaten", "tasted": "tasted",
    "drank": "drunk", "climbed": "climbed", "rode": "ridden", "skied": "skied",
    "surfed": "surfed", "hiked": "hiked", "watched": "watched", "attended": "attended",
    "won": "won", "studied": "studied", "learned": "learned", "learnt": "learnt",
    "saw": "seen",
}
"""Simple past forms of :data:`_EN_VERB` that tell of a life, and the participle each
keys as ("I ate …" as "I've eaten …", "I saw the Northern Lights twice." as "I've seen
the Northern Lights"); "saw" before a clause ("I saw that …", "I saw how …") is left to
the frames that read it (:data:`_EN_CLAUSE`); light verbs ("did", "had", "took", "used") and
those of exercise counted in distances ("ran", "swam") tell of a day."""
EN_PAST: Final = re.compile(
    r"^(?P<who>i|we|(?:my|our)\s+[a-z][\w-]*)"
    r"(?P<mid>(?:\s+(?:never|finally|once|actually|really|also|even|first))*)\s+"
    rf"(?:(?P<visit>{_EN_PAST_VISIT})|(?P<verb>{'|'.join(_EN_PAST_VERB)}))\b"
    r"(?P<rest>[^,;:.!?]*)", re.I)
"""The speaker (or one of theirs), adverbs, a simple past of :data:`_EN_PAST_VERB` or of
going somewhere, the rest."""
_EN_PAST_MARK: Final = re.compile(
    r"\b(?:never|finally|once|twice|thrice|yesterday|ago|for\s+the\s+first\s+time"
    r"|last\s+(?:week|month|year|night|weekend|summer|winter|spring|autumn|fall|time|\w+day)"
    r"|this\s+(?:morning|week|month|year|summer|winter|spring|autumn|fall|weekend)"
    r"|in\s+(?:19|20)\d\d|in\s+(?:january|february|march|april|may|june|july|august"
    r"|september|october|november|december)|on\s+(?:my|our)\s+(?:trip|holiday|vacation"
    r"|honeymoon|travels))\b|(?<!\S)\S+\s+times\b", re.I)
"""What makes a simple past a lived experience: a count, "never", "finally", a past time."""
_EN_PAST_CUT: Final = re.compile(
    r"\b(?:in|on|at|from|near|around|during|over|yesterday|today|ago|earlier|tonight"
    r"|finally)\b", re.I)
"""Where the object of a simple past ends besides :data:`_EN_CUT`: a place or a time
("I met my wife in Paris", "I tried sushi yesterday")."""
_EN_CLAUSE: Final = re.compile(
    r"\s*(?:that|how|what|where|when|why|who|whether|if|which)\b", re.I)
"""A clause after "saw" ("I saw that the build failed", "I saw how it works"): what was
noticed, no experience."""
_EN_ATTEMPT: Final = re.compile(r"\s*(?:to|out\s+for|on)\b", re.I)
""""I tried to fix it", "I tried on the dress": an attempt, no experience."""


def _en_past(core: str) -> Experience | None:
    """The experience an English simple past (:data:`EN_PAST`) states, or ``None``
    (module doc)."""
    m = EN_PAST.match(core.strip())
    if m is None:
        return None
    rest = m.group("rest")
    negated = re.search(r"\bnever\b", m.group("mid"), re.I) is not None
    visit = m.group("visit") is not None
    if _EN_REFERENCE.match(rest) or not visit and _EN_ATTEMPT.match(rest) \
            or _EN_CLAUSE.match(rest):
        return None  # "I tried that yesterday", "I tried to fix it", "I saw how …"
    if visit and not _EN_PLACE.match(rest):
        return None  # "I went to the gym", "I went to bed early": a day's doings
    if not (visit or negated or _EN_PAST_MARK.search(m.group("mid") + " " + rest)):
        return None  # "I watched a film": no mark of a life's experience
    ends = [c.start() for c in (_EN_CUT.search(rest), _EN_PAST_CUT.search(rest)) if c]
    what = en_key(rest[:min(ends)] if ends else rest)
    if what is None:
        return None
    verb = "visited" if visit else _EN_PAST_VERB[m.group("verb").lower()]
    who = en_key(m.group("who"))
    head = who.split()[-2:] if who else []
    words = head + [verb, *what.split()]
    return Experience(" ".join(head + words[len(head):][:4 - len(head)]), negated)


_EN_CHORE_THING: Final = re.compile(
    r"\s+(?:(?:the|my|our|his|her|their|your)\s|(?:breakfast|lunch|dinner|supper)\b)", re.I)
"""The object of a chore of the day: someone's or the definite thing, or a meal."""
_EN_CHORE_MARK: Final = re.compile(r"\b(?:yet|already)\b", re.I)


def chore(core: str) -> Experience | None:
    """How a chore of the day stands, read as :func:`read` reads an experience, when
    ``core`` (one English clause) tells that ("I haven't done the dishes yet.", "I've
    already taken my meds.", "I haven't had lunch yet."), else ``None``: a light verb's
    perfect marked by "yet" or "already" alone, on someone's or the definite thing or a
    meal. "Never", "ever", a count or "before" make it an experience ("I have never done
    the dishes at home"); :func:`read` reads no chore as one."""
    m = EN_EXPERIENCE.match(core.strip())
    if m is None or m.group("visit") or m.group("verb").lower() not in _EN_LIGHT:
        return None
    said = m.group("mid") + " " + m.group("rest")
    if re.search(r"\bnever\b", said, re.I) or not _EN_CHORE_MARK.search(said):
        return None
    if not {w.lower() for w in _EN_MARK.findall(said)} <= {"yet"} \
            or _EN_CHORE_THING.match(m.group("rest")) is None:
        return None
    return _en_perfect(m, marked=True)


def _en(core: str) -> Experience | None:
    m = EN_EXPERIENCE.match(core.strip())
    if m is None:
        return _en_past(core)
    if chore(core) is not None:
        return None  # "I haven't done the dishes yet": how a chore of the day stands
    return _en_perfect(m)


def _en_perfect(m: re.Match[str], *, marked: bool = False) -> Experience | None:
    """The experience a match of :data:`EN_EXPERIENCE` states; ``marked``: its mark is
    known already (a chore's "already")."""
    rest = m.group("rest")
    negated = bool(m.group("nt")) or _EN_DENIAL.search(m.group("mid")) is not None
    marked = marked or negated or _EN_MARK.search(m.group("mid") + " " + rest) is not None
    if not negated and _EN_LASTING.search(rest):
        return None  # "I have used Vim for years": how long a state held, left to the rules
    if not marked and not (m.group("visit") and _EN_PLACE.match(rest)):
        return None  # "I've been in meetings all day", "I've been to the gym": no experience
    if _EN_REFERENCE.match(rest):
        return None  # "I've tried that before": the thing at hand, not the world's
    cut = _EN_CUT.search(rest)
    what = en_key(rest[:cut.start()] if cut else rest) if rest.strip() else None
    if m.group("visit"):
        if what is None:
            return None  # "I've been to …" with nothing named
        verb = "visited"
    else:
        verb = m.group("verb").split()[0].lower()
    words = ([] if verb in _EN_LIGHT and what else [verb]) + (what.split() if what else [])
    who = en_key(m.group("who"))
    head = who.split()[-2:] if who else []
    words = head + words[-(4 - len(head)):]
    return Experience(" ".join(words), negated)


_ZH: Final = re.compile(
    r"^(?P<who>我们|咱们|我)(?P<adv>(?:以前|之前|曾经|从来|从|都|也|还|已经|根本|压根|一直|真的|确实)*)"
    r"(?P<neg>没有|没|未曾|未)?(?:有)?(?:(?:以前|之前|曾经|真的)*)"
    r"(?P<verb>[去到来吃用见看试玩住学坐开爬做读听养喝骑滑])过"
    r"(?P<what>[^，,。！!？?；;]{0,16}?)"
    r"(?:[一两二三四五六七八九十几好多\d]+(?:次|回|趟|遍)|\ue000+)?(?:了|呢|啊|哦|吧)?[。！!]?$")
"""The speaker's V过 (我去过日本两次, 我还没吃过寿司, 我从来没去过日本): the verb, what."""
_ZH_COUNT: Final = re.compile(r"[一两二三四五六七八九十几好多\d]+(?:次|回|趟|遍)|\ue000+")
_ZH_VISIT: Final = frozenset("去到来")
_JA: Final = re.compile(
    r"^(?:(?:私|僕|俺|わたし|うち)(?:は|も))?(?P<what>[^、，,。！!？?]{1,16}?)"
    r"(?P<p>に|へ|を|で)?(?:(?:一度|二度|何度か?|(?:[一二三四五六七八九十何数\d]+回|\ue000+))も?)?"
    r"(?P<verb>行った|来た|訪れた|訪ねた|食べた|見た|使った|会った|住んだ|やった|試した|乗った"
    r"|登った|読んだ|聞いた|飲んだ|働いた)こと(?:が|は|も)"
    r"(?:(?:一度|二度|何度か?|(?:[一二三四五六七八九十何数\d]+回|\ue000+))も?)?"
    r"(?P<pol>あります|ある|ありません|ない|ないです|なかった|ありませんでした)"
    r"(?:よ|ね|んです|です)?[。！!]?$")
"""V-たことがある / ない (日本に行ったことがある, 日本に二回行ったことがあります)."""
_JA_VISIT: Final = frozenset(("行った", "来た", "訪れた", "訪ねた"))


def read(core: str, lang: str) -> Experience | None:
    """The experience ``core`` (one clause, fillers and leads removed) states, or
    ``None`` (module doc)."""
    if len(core) > 300 or core.rstrip().endswith(("?", "？")):
        return None
    if lang == "en":
        return _en(core)
    if lang == "zh":
        m = _ZH.match(core.strip())
        if m is None:
            return None
        what = _ZH_COUNT.sub("", m.group("what"))
        verb = "去" if m.group("verb") in _ZH_VISIT else m.group("verb")
        subject = cjk_key(f"{verb}过{what}", "zh", keep_last=False)
        return Experience(subject, m.group("neg") is not None) if subject else None
    m = _JA.match(core.strip())
    if m is None:
        return None
    verb = "行った" if m.group("verb") in _JA_VISIT else m.group("verb")
    particle = "に" if verb == "行った" else m.group("p") or ""
    subject = cjk_key(f"{m.group('what')}{particle}{verb}", "ja", keep_last=False)
    negated = m.group("pol").startswith(("な", "ありません"))
    return Experience(subject, negated) if subject else None
