"""Denials: the speaker says a fact of their own does not hold ("I don't have a dog,
that was a mistake.", "I never had a dog.", "I'm not actually married.", "I don't
have a dog anymore.", 我其实没结婚, 我从来没养过狗, 私は結婚していません).

:func:`find` reads one fact's text and returns a :class:`Denial` — the verb it negates
(a lemma: "have", "be", "live") and what it denies ("a dog", "married") — or ``None``.
Only the speaker's own statement counts, the negation right after "I" ("I don't / never
/ no longer / am not …", 我没(有)/我不再…, …ていません/…はいません); "Dana doesn't have a
dog" (another person), "Don't I have a dog?" (a question) and "Tomorrow I don't have to
…" (a plan, led by a day) are no denial. Extraction marks a denial's fact ``negated``;
the writer (:func:`memory_core.items.denial.denial_target`) looks for the speaker's
stored fact that :func:`states` says the same of — the same verb with the same head of
what follows it ("I have a dog named Rex."; not "I have a dog's bed", "I have a car
loan" for "I don't have a car") — and supersedes it by the denial.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True, slots=True)
class Denial:
    """``verb``: the lemma the denial negates (:func:`lemma`; for Chinese and Japanese
    ``""``); ``what``: what it denies, as written (its head is compared); ``ending``:
    said as an ending ("anymore", "no longer", 不再) rather than "it never held"."""

    verb: str
    what: str
    ending: bool


_EN_LEAD = (r"(?>(?:(?:actually|no(?!\s*-?\s*one\b)|oh|well|sorry|honestly|wait|um|uh|so|and"
            r"|but|now|to\s+be\s+(?:clear|honest)|for\s+the\s+record|correction)\W+)*)")
_EN_ADVERB = r"(?:(?:actually|really|honestly|even|ever|currently|still|truly)\s+)*"
_EN_SPEAKER = (r"(?:i|we(?:\s+(?:both|all|two))?|(?:both|all|each)\s+of\s+us"
               r"|the\s+(?:two|three|four|five)\s+of\s+us"
               r"|(?:(?:my|our)\s+)?[a-z]+(?:\s+[a-z]+)??\s+and\s+i(?:\s+both)?"
               r"|neither\s+(?:(?:my|our)\s+)?[a-z]+\s+nor\s+(?:i|we))")
"""A subject that holds the speaker: "I", "we", "we both", "both of us", "the two of us",
"my wife and I", "Anna and I", "my team and I both", and "neither my wife nor I" with the
"don't" that :mod:`.contractions` writes in after it."""
_EN_NONE_OF_US = (r"(?:(?:neither|none)\s+of\s+us"
                  r"|(?:nobody|no\s*-?\s*one)\s+(?:in|at|on|from|of)\s+(?:my|our)\s+[a-z]+"
                  r"(?:\s+[a-z]+)??"
                  r"|neither\s+(?:(?:my|our)\s+)?[a-z]+\s+nor\s+(?:i|we)"
                  r"|neither\s+(?:i|we)\s+nor\s+(?:(?:my|our)\s+)?[a-z]+)")
"""A subject that denies of every one of a group the speaker is in: "neither of us",
"none of us", "nobody in my family", "no one on our team", "neither my wife nor I",
"neither we nor our neighbours". The lead (:data:`_EN_LEAD`) leaves the "no" of "no
one" to it."""
EN_DENIAL: Final = re.compile(
    rf"{_EN_LEAD}{_EN_SPEAKER}(?P<aux>'m|\s+am|'re|\s+are|'ve|\s+have|\s+was|\s+were"
    rf"|\s+do|\s+did)?(?:\s+{_EN_ADVERB}|(?=n't))"
    r"(?P<neg>don'?t|do\s+not|didn'?t|did\s+not|never|no\s+longer|not|n't"
    r"|(?P<modal>can'?t|cannot|can\s+not|won'?t|will\s+not))\s+"
    rf"{_EN_ADVERB}(?P<rest>[^,;:.!?\u2014\u2013]+?)\s*(?=[,;:.!\u2014\u2013]|$)", re.I)
"""The speaker's own negation at the clause's start (the speaker alone or in a group,
:data:`_EN_SPEAKER`), then what it negates up to the clause's end (a question mark ends
no denial). A contracted be ("aren't", "wasn't", "weren't") is its aux and its
negation; a negated modal of ability or will ("can't", "cannot", "won't") is read as
"don't" is: "I can't eat gluten." denies eating gluten."""
EN_NONE_DENIAL: Final = re.compile(
    rf"{_EN_LEAD}{_EN_NONE_OF_US}\s+{_EN_ADVERB}"
    rf"(?P<rest>[a-z']+\s+[^,;:.!?\u2014\u2013]+?)\s*(?=[,;:.!\u2014\u2013]|$)", re.I)
"""A group with the speaker in it, each of whom a plain verb is denied of (the negation
is in the subject, :data:`_EN_NONE_OF_US`): "Neither of us drinks coffee.", "Nobody in
my family eats pork.", "None of us is vegetarian"."""
_EN_BE_AUX: Final = frozenset(("'m", "am", "was", "'re", "are", "were"))
_EN_ENDING: Final = re.compile(
    r"(?<!\s)\s+(?:any\s?more|any\s+longer|now|at\s+all|either|yet)$", re.I)
_EN_BE: Final = frozenset(("am", "'m", "is", "are", "was", "were", "be", "been", "being"))
_EN_HAVE: Final = frozenset(("have", "'ve", "has", "had", "having"))
_EN_WORD: Final = re.compile(r"[a-z]+(?:'[a-z]+)?|'[mv]e?\b|'m\b", re.I)


def lemma(word: str) -> str:
    """A verb form's crude lemma: "had" and "'ve" → "have", "am", "'m", "been" → "be",
    "lived"/"lives"/"living" → "liv"."""
    w = word.lower()
    if w in _EN_HAVE:
        return "have"
    if w in _EN_BE:
        return "be"
    for end in ("ing", "ed", "es", "s", "e"):
        if w.endswith(end) and len(w) - len(end) >= 3:
            return w[:-len(end)]
    return w


_ZH_LEAD = r"(?:(?:其实|实际上|说实话|老实说|不对|不是|抱歉|对不起|更正一下)[，,、\s]*)*"
ZH_DENIAL: Final = re.compile(
    _ZH_LEAD + r"(?:我(?:们|們)?(?:俩|倆|两个|兩個|两人|兩人)?|咱们|咱們"
    r"|我和[^\s，,。、]{1,4}?|[^\s，,。、]{1,4}?和我)"
    r"(?:其实|实际上|根本|从来|压根|并|也|都|已经|现在)*"
    r"(?P<neg>不再|没法|没办法|没有|没|並沒有|並没有|不是|不能|不会|不會|不可以|无法|無法|不)"
    r"(?:再)?(?P<rest>[^，,。！!？?；;]{1,20}?)(?P<end>了)?[。！!]?$")
_JA_SPEAKER = (r"(?:私|僕|俺|わたし)(?:たち|達|ら)?(?:は|も)(?:二人とも|みんな|全員)?"
               r"|我々は|うちは|(?:私|僕|俺|わたし)と[^、，,。\s]{1,5}?は"
               r"|[^、，,。\s]{1,5}?と(?:私|僕|俺|わたし)は")
"""A subject that holds the speaker: 私は, 私たちは, 僕らは, 私と妻は, 妻と私は."""
_JA_LEAD = r"(?:(?:実は|本当は|実際は|いや|いえ|すみません|ごめん)[、,\s]*)*"
JA_DENIAL: Final = re.compile(
    _JA_LEAD + r"(?:" + _JA_SPEAKER + r")?(?:実は|本当は|実際は|もう)?"
    r"(?P<rest>[^、，,。！!？?]{1,20}?)"
    r"(?P<neg>ていません|でいません|ていない|でいない|はいません|はいない|はありません)"
    r"(?:でした|です)?[。！!]?$")


JA_ABLE_DENIAL: Final = re.compile(
    _JA_LEAD + r"(?:" + _JA_SPEAKER + r")?(?:実は|本当は|実際は|もう)?"
    r"(?P<rest>[^、，,。！!？?は]{1,20}?)(?P<neg>(?<!く)れない|(?<!く)れません|できない|できません)"
    r"(?:でした|です)?[。！!]?$")
"""A negated potential (食べられない, 飲めません, 運転できない) with no other subject
named before it: as with 食べられる, the speaker says what they cannot do."""


JA_PLAIN_DENIAL: Final = re.compile(
    _JA_LEAD + r"(?:" + _JA_SPEAKER + r")(?:実は|本当は|実際は|もう)?"
    r"(?P<rest>[^、，,。！!？?]{1,20}?)(?P<neg>ない|ません)(?:でした|です)?[。！!]?$")
"""A plain negated verb after the speaker named as subject (私たちは肉を食べない,
私は車を持ちません); without the subject a bare ない is no statement of the speaker's."""


def find(text: str, lang: str) -> Denial | None:
    """The denial ``text`` (one fact's clause) states, or ``None`` (module doc)."""
    if len(text) > 300 or text.rstrip().endswith(("?", "？")):
        return None
    if lang == "en":
        m = EN_DENIAL.match(text.strip())
        if m is None:
            return _none_of_us(text.strip())
        rest, aux, neg = m.group("rest"), (m.group("aux") or "").strip().lower(), \
            m.group("neg").lower()
        rest, ending = _cut_ending(rest)
        ending = ending or neg == "no longer"
        if aux in _EN_BE_AUX or (neg in ("not", "no longer") and not aux):
            if aux not in _EN_BE_AUX:
                return None  # "I not …": no sentence
            return Denial("be", rest, ending) if rest else None
        if m.group("modal") is not None and aux:
            return None  # "I'm can't …": no sentence
        if neg in ("not", "n't") and aux not in ("do", "did"):
            return None  # "I have not …", "I did not": read below only as don't/never
        words = rest.split(None, 1)
        if len(words) < 2 and not (words and lemma(words[0]) == "be"):
            return None  # "I don't know.": a verb with nothing it holds of
        verb = lemma(words[0])
        return Denial(verb, words[1] if len(words) > 1 else "", ending)
    if lang == "zh":
        m = ZH_DENIAL.match(text.strip())
        if m is None:
            return None
        if m.group("neg") == "不" and m.group("end") is None:
            return None  # 我不吃辣: a standing dislike, no denial; 我不吃辣了 ends one
        rest = re.sub(r"[过了]", "", m.group("rest"))
        return Denial("", rest, m.group("neg") in ("不再", "不")) if rest else None
    m = JA_DENIAL.match(text.strip()) or JA_PLAIN_DENIAL.match(text.strip()) \
        or JA_ABLE_DENIAL.match(text.strip())
    if m is None:
        return None
    rest = _JA_PARTICLE.sub("", m.group("rest"))
    return Denial("", rest, False) if rest else None


def _cut_ending(rest: str) -> tuple[str, bool]:
    """``rest`` without a trailing "anymore" / "at all" / "yet" … (:data:`_EN_ENDING`),
    and whether that word says the statement ended ("anymore", "any longer", "now")."""
    cut = _EN_ENDING.search(rest)
    if cut is None:
        return rest, False
    return rest[:cut.start()], cut.group(0).strip().lower() in (
        "anymore", "any more", "any longer", "now")


def _none_of_us(text: str) -> Denial | None:
    """The denial a group subject that excludes everyone in it states
    (:data:`EN_NONE_DENIAL`): the verb after it and what follows the verb."""
    m = EN_NONE_DENIAL.match(text)
    if m is None:
        return None
    rest, ending = _cut_ending(m.group("rest"))
    verb, _, what = rest.partition(" ")
    if negative(verb) or not what.strip():
        return None  # "None of us don't …": a double negation; "Nobody in my team knows."
    return Denial(lemma(verb), what.strip(), ending)


_JA_PARTICLE: Final = re.compile(r"[はをがも]")
_EN_HEAD_STOP: Final = frozenset((
    "named", "called", "who", "whom", "whose", "which", "that", "and", "with", "to", "for",
    "since", "from", "at", "in", "on", "of", "as", "by", "when", "while", "because", "but",
    "now", "too", "also", "here", "there", "again", "anymore", "yet", "today", "this",
    "next", "last", "every"))
_EN_SKIP: Final = frozenset(("a", "an", "the", "my", "our", "some", "any", "one", "two",
                             "in", "at", "on", "to", "with", "for", "from", "of", "as"))


def head(phrase: str) -> tuple[str, ...]:
    """The words that head ``phrase`` (English): past leading articles and
    prepositions, up to a word that starts a qualifier ("a dog named Rex" → ("dog",),
    "in Berlin" → ("berlin",), "a dog's bed" → ("dog", "bed"), "married to Anna" →
    ("married",))."""
    out: list[str] = []
    for raw in _EN_WORD.findall(phrase.lower()):
        word = raw[:-2] if raw.endswith("'s") else raw
        if not out and word in _EN_SKIP:
            continue
        if out and word in _EN_HEAD_STOP:
            break
        out.append(lemma(word) if word not in _EN_SKIP else word)
    return tuple(out)


_EN_FILLER: Final = frozenset(("really", "actually", "even", "ever", "just", "still"))


def _words(phrase: str) -> set[str]:
    """The lemmas of ``phrase``'s words less articles, prepositions and fillers: all of a
    denial's must be in what it takes back ("I'm not working today" takes back no "I'm
    working on the parser")."""
    return {lemma(w[:-2] if w.endswith("'s") else w) for w in _EN_WORD.findall(phrase.lower())
            if w not in _EN_SKIP and w not in _EN_FILLER}


_EN_BEFORE_VERB: Final = frozenset((
    "'m", "am", "'ve", "have", "has", "had", "was", "do", "did", "also", "still", "actually",
    "really", "already", "currently", "now", "just", "finally", "recently", "even", "too",
    "truly", "definitely", "both", "all", "indeed", "been"))
"""What may stand between "I" and the verb a stored fact affirms the denied state with:
auxiliaries and adverbs ("I've actually had a dog", "I'm still married"), never a verb
of its own ("I want to live in Berlin", "I'm planning to have a dog", "I used to have a
dog": a wish, a plan or a past that a denial of the present does not take back)."""
_EN_SPEAKER_VERB: Final = re.compile(r"(?<![\w'])i(?=\s|'[mv])", re.I)
_NEGATION: Final = re.compile(r"\b(?:not|never|no|don'?t|doesn'?t|didn'?t|isn'?t|wasn'?t"
                              r"|haven'?t|hasn'?t|no\s+longer)\b|n't\b|没|不|ません|ない", re.I)
_CJK_FOLLOW: Final = re.compile(
    r"(?:$|[，,。！!、；;\s]|叫|名叫|名字|了|的时候|です|を|が|は|い|て)")
_CJK_MEASURE: Final = re.compile(r"[一两二三四五六七八九十几]?[只条个位头匹]")


_EN_STANCE: Final = frozenset(("of", "about", "with", "at"))
"""Prepositions by which a feeling or attitude adjective names what it is about ("tired
of my job", "afraid of dogs", "worried about the launch", "happy with the team", "angry
at Tom", "good at chess"): the feeling is one thing, the bare state ("I'm not tired")
another, and both may hold. Not "to" ("married to Anna" is the state itself), nor the
prepositions that usually add a reason, a time or a place ("vegan for ethical reasons",
"busy on Friday", "based in Berlin", "tired since Monday"): the state holds whatever
they add, so its bare denial takes it back. "in" also gives some adjectives their
complement ("fluent in French", "interested in AI"); "I'm not fluent" is then read as
taking back "I'm fluent in French" too, since an agent that kept both would hold the
speaker fluent and not fluent at once, while a fluency taken back wrongly is restated
at the next mention."""


_EN_TOKEN: Final = re.compile(r"[a-z0-9]+(?:'[a-z]+)?", re.I)


def _stance_left_out(denial: Denial, rest: str) -> bool:
    """Whether a stored "be" fact's bare adjective ("I'm tired of my job": no article
    or preposition before it) goes on to name what it is about (:data:`_EN_STANCE`)
    while the denial ("I'm not tired.") names the adjective alone: the denial speaks of
    the bare state, not of the stance, and takes nothing back. A number after the
    preposition is a time ("busy at 3pm"), no object of a feeling."""
    if denial.verb != "be":
        return False
    words = [w.lower() for w in _EN_TOKEN.findall(rest)]
    words = [w for w in words if w not in _EN_FILLER]
    if len(words) < 3 or words[0] in _EN_SKIP or words[1] not in _EN_STANCE \
            or words[2][0].isdigit():
        return False
    said = [w.lower() for w in _EN_WORD.findall(denial.what) if w.lower() not in _EN_FILLER]
    return len(said) == 1


def negative(text: str) -> bool:
    """Whether ``text`` holds a negation word (:data:`_NEGATION`)."""
    return _NEGATION.search(text) is not None


def states(denial: Denial, text: str, lang: str, *, answering: bool = False) -> bool:
    """Whether ``text`` (a stored fact of the same speaker) affirms what ``denial``
    denies: in English "I" then, within four words, the denied verb, followed by what
    has the denied phrase's head and its other words ("I have a dog named Rex." for "I
    never had a dog."; "I'm married." for "I'm not actually married."; "I'm not working
    today" takes back no "I'm working on the parser"), with only auxiliaries and
    adverbs between "I" and the verb (:data:`_EN_BEFORE_VERB`: "I don't live in Berlin"
    takes back no "I want to live in Berlin"; "I'm not tired" takes back no "I'm
    tired of my job", :func:`_stance_left_out`); in Chinese or Japanese the
    denied phrase inside a clause of the speaker's, then a clause break or a naming
    (我养了一只狗，叫Rex for 我从来没养过狗; 私は結婚しています for 私は結婚していません).
    A text that is itself negated affirms nothing. ``answering``: the denial replies to
    the assistant's question or offer just before it (:mod:`.reply`); a bare one ("I'm
    not interested.") then declines that, and takes back only a fact that names no
    more than it does ("I'm interested." but not "I'm interested in AI.")."""
    if _NEGATION.search(text):
        return False
    if lang == "en":
        want = head(denial.what)
        for m in _EN_SPEAKER_VERB.finditer(text):
            words = list(re.finditer(r"[\w']+|'[mv]e?", text[m.end():m.end() + 200]))
            at = None
            for i, w in enumerate(words[:4]):
                if lemma(w.group(0)) == denial.verb or (
                        denial.verb == "be" and w.group(0).lower() in ("'m", "am")):
                    at = i
            if at is None or any(w.group(0).lower() not in _EN_BEFORE_VERB
                                 for w in words[:at]):
                continue  # "I want to live in Berlin": a wish, no state the denial takes back
            rest = text[m.end() + words[at].end():]
            if want and head(rest) == want and _words(denial.what) <= _words(rest) \
                    and not _stance_left_out(denial, rest) \
                    and not (answering and _words(rest) - _words(denial.what)):
                return True
        return False
    flat = _CJK_MEASURE.sub("", re.sub(r"[过了]", "", text)) if lang == "zh" \
        else _JA_PARTICLE.sub("", text)
    what = _CJK_MEASURE.sub("", denial.what) if lang == "zh" else denial.what
    if lang == "zh" and not flat.lstrip("其实已经").startswith(("我", "我们")):
        return False
    at = flat.find(what)
    while at >= 0:
        if _CJK_FOLLOW.match(flat, at + len(what)):
            return True
        at = flat.find(what, at + 1)
    return False
