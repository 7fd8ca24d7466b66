"""Which stored item a new statement revises: the matching rules behind supersession.

A correction replaces the best-matching active item of its tenant and role
(:func:`correction_target`); a plain statement restates or conflicts with an item
whose subject matches (:func:`subjects_match`) — in both cases only under the same
condition (:func:`conditions_agree`): "the timeout is 30 s when offline" and "the
timeout is 5 s" are two facts, never one correcting the other. Read-only helpers,
called by ``memory_core.items.writer`` inside the writer's transaction.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Iterator
from typing import Any

from memory_core.extraction.apology import without_apology
from memory_core.extraction.lexicon import (
    EN_COUPLE,
    EN_DIETS,
    EN_EVALUATIVE,
    EN_ONSET_PHRASE,
    EN_PARTING,
    HOME,
)
from memory_core.extraction.lexicon_cjk import JA_EVALUATIVE, ZH_EVALUATIVE
from memory_core.extraction.replacement import (
    WORK,
    actor,
    adds,
    ends_home_with,
    ends_work,
    speaker_lives,
    speaker_works,
    states_change,
)
from memory_core.extraction import shapes
from memory_core.extraction.retraction import RULE_NOUNS
from memory_core.extraction.subject import ADDRESSEE
from memory_core.extraction.units import CJK_UNITS, UNITS, unit_class
from memory_core.items.aliases import fold_aliases
from memory_core.items.fields import data_of
from memory_core.items.overlap import covered, one_slot_swapped, overlap, terms, without_opener
from memory_core.items.readings import observes
from memory_core.items.spelling import fold
from memory_core.models import Scope
from memory_core.store.api import ItemReads

_CONDITION_COVER = 0.75
CORRECTION_SCAN = 20000
"""Most active items a correction compares itself with (newest first)."""


_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_WORD_RUN = re.compile(r"\w+")
_LATIN_RUN = re.compile(r"[A-Za-z0-9]+")


_ADDRESSED = ADDRESSEE + " "


def subjects_match(a: str | None, b: str | None) -> bool:
    """True when two normalised subjects name the same thing (equal, or one contains
    the other as whole words / CJK substring, the shorter ≥ 2 characters), British and
    American spellings folded (:func:`~memory_core.items.spelling.fold`: "favourite
    colour" / "favorite color"), and two names of one thing
    (:func:`~memory_core.items.aliases.fold_aliases`: "ci" / "continuous integration",
    "mom" / "mother", 数据库 / "db"); never a key of the assistant's thing
    (:data:`~memory_core.extraction.subject.ADDRESSEE`) with one of the user's."""
    if not a or not b:
        return False
    if a == b:
        return True
    if a.startswith(_ADDRESSED) != b.startswith(_ADDRESSED):
        return False  # the assistant's name is not the user's
    a, b = fold_aliases(fold(a)), fold_aliases(fold(b))
    if a == b:
        return True
    short, long_ = sorted((a, b), key=len)
    if len(short) < 2:
        return False
    if _CJK.search(short):
        return short in long_
    if _CJK.search(long_):  # "db" in "db用的": Han characters bound no Latin word
        return re.search(rf"(?<![a-z0-9]){re.escape(short)}(?![a-z0-9])", long_) is not None
    return re.search(rf"(?<!\w){re.escape(short)}(?!\w)", long_) is not None


def siblings(a: str | None, b: str | None, text_a: str, text_b: str) -> bool:
    """Whether two subjects name sibling attributes: the same head word under rival
    qualifiers, each absent from the other statement's text ("api timeout" / "db
    timeout", "staging db port" / "prod db port", "min pool size" / "max pool size";
    not a qualifier the other's key merely dropped), units said after a number
    (:func:`_unit_said`) and :data:`_ATTRIBUTE_MARKS` left out. Two such statements
    are two values, never one revising the other by the words they share.
    Chinese and Japanese keys, which have no spaces, split at their longest shared
    ending of at least ``_CJK_HEAD`` characters holding a CJK one
    ("测试环境java版本" / "生产环境java版本", "apiタイムアウト" / "dbタイムアウト")."""
    if not a or not b:
        return False
    if _CJK.search(a) or _CJK.search(b):
        return _cjk_siblings(a, b, text_a, text_b)
    low_a, low_b = text_a.lower(), text_b.lower()
    wa = [w for w in a.split() if not _unit_said(w, low_a) and w not in _ATTRIBUTE_MARKS]
    wb = [w for w in b.split() if not _unit_said(w, low_b) and w not in _ATTRIBUTE_MARKS]
    if len(wa) < 2 or len(wb) < 2 or wa[-1] != wb[-1]:
        return False
    only_a, only_b = set(wa[:-1]) - set(wb), set(wb[:-1]) - set(wa)
    return bool(only_a) and bool(only_b) and not any(w in low_b for w in only_a) \
        and not any(w in low_a for w in only_b)


def _unit_said(word: str, low_text: str) -> bool:
    """Whether ``word`` is a unit its statement gives after a number ("20 minutes"):
    a subject's unit words are dropped only then, so the "min" of "the min pool size"
    (a bound) and the "replicas" of "the max replicas" stay words of the attribute."""
    return word in UNITS and re.search(rf"\d\s*{re.escape(word)}\b", low_text) is not None


_ATTRIBUTE_MARKS = frozenset({"port", "version"})
"""Words the extraction appends to a subject when its number is a port or a version
("our staging cluster runs Kubernetes 1.27" → "staging cluster version"), which
another wording of the same attribute may lack ("prod cluster")."""
_CJK_HEAD = 2
_CJK_LINK = re.compile(r"[的之のでは\s]+$")


def _cjk_siblings(a: str, b: str, text_a: str, text_b: str) -> bool:
    """:func:`siblings` for keys in Chinese or Japanese."""
    end = len(os.path.commonprefix([a[::-1], b[::-1]]))
    head = a[len(a) - end:] if end else ""
    if len(head) < _CJK_HEAD or not _CJK.search(head):
        return False
    qa, qb = _CJK_LINK.sub("", a[:len(a) - end]), _CJK_LINK.sub("", b[:len(b) - end])
    return bool(qa) and bool(qb) and qa.lower() not in text_b.lower() \
        and qb.lower() not in text_a.lower()


_LATIN_WORD = re.compile(r"[a-z0-9][\w-]*")
"""A word of a case-folded statement, as :func:`sibling_in_text` reads it."""
_NOT_QUALIFIERS = frozenset("the a an my our your their his her its this that these those "
                            "each every all some any no of for to in on at with by from "
                            "is are was were be".split())
"""Words before a head noun that do not qualify it (determiners, prepositions, "is")."""


def sibling_in_text(subject: str | None, text: str, other_subject: str | None,
                    other_text: str) -> bool:
    """Whether either statement names a sibling of the other's subject: its head under
    a rival qualifier, each qualifier absent from the other statement ("bob owns auth
    service" / "Alice owns the billing service", 人事システム /
    山田さんが経理システムの担当です; not a qualifier written short, "prod cluster" /
    "The production cluster …"). The other statement is about another thing of the
    kind even when its own subject was keyed elsewhere ("alice", 山田さん)."""
    return _sibling_named(subject, text, other_text) \
        or _sibling_named(other_subject, other_text, text)


def _sibling_named(subject: str | None, text: str, other_text: str) -> bool:
    """:func:`sibling_in_text` one way: ``other_text`` names a sibling of ``subject``
    (the subject of ``text``)."""
    if not subject:
        return False
    low, other = text.casefold(), other_text.casefold()
    if _CJK.search(subject):
        for cut in range(1, len(subject) - _CJK_HEAD + 1):
            head, mine = subject[cut:], _CJK_LINK.sub("", subject[:cut])
            if not _CJK.search(head) or not mine or mine.casefold() in other:
                continue
            at = other.find(head.casefold())
            rival = _CJK_LINK.sub("", other[max(0, at - 2):at]) if at > 0 else ""
            if len(rival) == 2 and _CJK.fullmatch(rival[-1]) and rival not in low:
                return True
        return False
    words = [w for w in subject.split() if not _unit_said(w, low) and w not in _ATTRIBUTE_MARKS]
    if len(words) < 2:
        return False
    mine = words[-2]  # the head's own qualifier, compared by stems ("dependency")
    seen = _LATIN_WORD.findall(other)
    if not _qualifier(mine) or mine in seen or terms(mine) & terms(other_text):
        return False
    own, own_words = terms(text), set(_LATIN_WORD.findall(low))
    return any(w == words[-1] and n > 0 and _qualifier(seen[n - 1])
               and seen[n - 1] not in own_words and not terms(seen[n - 1]) & own
               and not _shortens(mine, seen[n - 1])
               for n, w in enumerate(seen))


def _shortens(a: str, b: str) -> bool:
    """Whether one qualifier is the other cut short ("prod" / "production", "dev" /
    "development", "auth" / "authentication"): one qualifier, not a rival."""
    short, long_ = sorted((a, b), key=len)
    return len(short) >= 3 and long_.startswith(short)


def _qualifier(word: str) -> bool:
    """Whether ``word`` may qualify a head noun: a content word (it has a term), not a
    determiner or preposition ("use" in "use jenkins" has none)."""
    return word not in _NOT_QUALIFIERS and bool(terms(word))


_SERIAL = re.compile(r"\b([a-z][a-z]+)[-_](\d+)\b(?![.,]\d)")
"""A member of a numbered series: a name, ``-`` or ``_``, a number not followed by a
version's dot ("build-01", "node_3"; not "python-3.12")."""


def other_instance(subject: str | None, text: str, other_subject: str | None,
                   other_text: str) -> bool:
    """Whether two statements are about different members of one numbered series,
    written as a name, a hyphen or underscore and a number ("build-01" / "build-02",
    "node_3" / "node_4"; not a version such as "python-3.12"): each names a member the
    other does not, of a series that a subject names. A member named only in the
    value is what changed, not another thing: "The release branch is release-4 now"
    revises "The release branch is release-3"."""
    def members(t: str) -> dict[str, set[str]]:
        out: dict[str, set[str]] = {}
        for name, number in _SERIAL.findall(t.casefold()):
            out.setdefault(name, set()).add(number.lstrip("0") or "0")
        return out
    named = members(subject or "").keys() | members(other_subject or "").keys()
    if not named:
        return False
    a, b = members(text), members(other_text)
    return any(a[k] - b[k] and b[k] - a[k] for k in a.keys() & b.keys() & named)


_SCOPES: tuple[dict[str, str], ...] = (
    # deployment environments
    {"prod": "prod", "production": "prod", "生产": "prod", "线上": "prod", "本番": "prod",
     "staging": "staging", "preprod": "staging", "pre-prod": "staging", "预发": "staging",
     "ステージング": "staging", "qa": "qa", "uat": "qa", "测试环境": "qa", "検証環境": "qa",
     "テスト環境": "qa", "开发环境": "dev", "開発環境": "dev", "sandbox": "sandbox"},
    # the two ends of an application
    {"frontend": "front", "front-end": "front", "前端": "front", "フロントエンド": "front",
     "backend": "back", "back-end": "back", "后端": "back", "バックエンド": "back"},
)
"""Rival scopes a statement may be about: deployment environments, and the two ends of
an application (:func:`rival_scopes`)."""
_SCOPE_WORD = re.compile(
    r"(?<![\w-])(?:" + "|".join(sorted((re.escape(w) for g in _SCOPES for w in g if w.isascii()),
                                       key=len, reverse=True)) + r")(?![\w-])"
    r"|" + "|".join(sorted((re.escape(w) for g in _SCOPES for w in g if not w.isascii()),
                           key=len, reverse=True)))


def names_a_member_or_scope(text: str) -> bool:
    """Whether ``text`` names a member of a numbered series or a scope: without one,
    neither :func:`other_instance` nor :func:`rival_scopes` holds for it, whatever
    the other statement (the scan of thousands of candidates skips both)."""
    low = text.casefold()
    return _SERIAL.search(low) is not None or _SCOPE_WORD.search(low) is not None


def rival_scopes(text: str, other_text: str) -> bool:
    """Whether two statements are about rival scopes of one kind, each naming one the
    other does not name at all ("The prod deploy is on Thursdays" / "Staging deploys
    daily now", 前端现在用 Vue / 我们的后端用 Go, 本番のDB / 検証環境): two values, never
    one revising, restating or merging with the other."""
    def found(t: str) -> list[set[str]]:
        words = _SCOPE_WORD.findall(t.casefold())
        return [{g[w] for w in words if w in g} for g in _SCOPES]
    return any(a and b and a.isdisjoint(b) for a, b in zip(found(text), found(other_text),
                                                           strict=True))


_OWNER = re.compile(
    r"^\W*(?:(?:the|a|an)\s+)?(?:(?P<self>my|our|mine)\b(?!\s+[\w-]+['\u2019]s\b)"
    r"|(?:(?:my|our|his|her|their|your)\s+)?"
    r"(?!(?:it|that|this|there|here|what|who|where|when|how|let|he|she|one)['\u2019])"
    r"(?P<named>[\w-]+)['\u2019]s\b"
    r"|(?P<pron>his|her|their|your)\b)", re.I)
"""Who owns a statement's subject, as its opening says: the speaker's ("my rent",
"our retro"), a named one's ("Anna's rent", "my sister's rent": the named word),
or a pronoun's ("her rent"); not a contraction ("It's", "That's", "He's")."""


def owner(text: str) -> tuple[str, str] | None:
    """Whose subject ``text`` opens with (:data:`_OWNER`): ``("self", "")``,
    ``("named", word)`` (lower case) or ``("pron", word)``; ``None`` when no owner is
    said ("The rent is …")."""
    m = _OWNER.match(text)
    if m is None:
        return None
    if m.group("self"):
        return ("self", "")
    if m.group("named"):
        return ("named", m.group("named").casefold())
    return ("pron", m.group("pron").casefold())


def rival_owners(text: str, other_text: str) -> bool:
    """Whether two statements are about the subjects of two owners ("My rent is 900
    EUR." / "Anna's rent went up to 1000 EUR.", "her rent" / "my rent", "Anna's" /
    "Ben's"): two values, never one revising the other. A pronoun and a name may be
    one person, and a statement that says no owner may be anyone's: no rivals."""
    a, b = owner(text), owner(other_text)
    if a is None or b is None or a == b:
        return False
    return "self" in (a[0], b[0]) or (a[0] == b[0] == "named")


def subject_keys(subject: str | None) -> tuple[frozenset[str], str]:
    """Index keys of a stored subject for :func:`subjects_match` lookups: its words
    (``\\w+`` runs, case kept) and its kana/CJK characters, and one anchor key —
    a CJK character for a subject holding one, else its longest word; ``""`` (in the
    keys too) for a subject with neither.

    Whenever ``subjects_match(a, b)`` holds with ``a`` the shorter or equal side,
    every one of :func:`subject_probes` of ``a`` is among ``b``'s keys: a whole-word
    match makes every word of the shorter a word of the longer, a CJK substring
    every character. (The anchor, stored as part 1 of
    ``memory_item_subject_keys``, is not read by the writer's lookup any more.)"""
    if not subject:
        return frozenset(), ""
    words = _WORD_RUN.findall(subject)
    cjk = _CJK.findall(subject)
    keys = frozenset(words) | frozenset(cjk)
    if cjk:  # "db" in "db用的": a Latin run beside Han characters is a word of its own
        keys |= frozenset(_LATIN_RUN.findall(subject))
    if cjk:
        anchor = cjk[0]
    elif words:
        anchor = max(words, key=len)
    else:
        anchor = ""
    return (keys or frozenset({""})), anchor


def subject_probes(subject: str) -> list[str]:
    """Keys every stored subject that contains ``subject`` (:func:`subjects_match`)
    holds: its kana/CJK characters when it has one, else its words; ``[]`` for
    neither ("--", which any subject may hold as a whole word)
    (:func:`subject_keys`)."""
    cjk = _CJK.findall(subject)
    return sorted(set(cjk or _WORD_RUN.findall(subject)))


_DIGITS = re.compile(r"\d+(?:[.,]\d+)*")


def conditions_agree(ex: Any, row: Any) -> bool:
    """Whether a new item and a stored one hold under the same condition.

    Each side's condition terms must appear (≥ 75 %) in the other side's text, so
    "for long-polling clients" as a condition agrees with a statement that names
    long-polling clients in its subject, "when offline" never agrees with an
    unconditional statement nor "オフライン時" with "オンライン時" (3 of 5 bigrams),
    and two items without a condition always agree. Two conditions that name
    different numbers never agree ("在第3步里" / "在第4步里", "above 100 users" / "above
    500 users"): terms leave numbers out.
    """
    if ex.condition and row["condition"] and \
            _DIGITS.findall(ex.condition) != _DIGITS.findall(row["condition"]):
        return False
    new_cond, old_cond = terms(ex.condition), terms(row["condition"])
    return (covered(new_cond, terms(row["text"])) >= _CONDITION_COVER
            and covered(old_cond, terms(ex.text)) >= _CONDITION_COVER)


_OCCASION = re.compile(r"(?:after|following)\s+(?:the|our|my|a|an|that|this|last)\s+"
                       r"(?!\w+\s+(?:is|are)\b)", re.I)
"""A past event a change followed ("after the migration review"): when it was made."""


def condition_is_value(ex: Any, row: Any) -> bool:
    """Whether a correction's condition is the value it changes: both statements say
    the same beyond their subjects and conditions, so the conditions are what differs
    ("Deploys are on Thursdays now." after "We deploy on Fridays at 16:00."; "The gym
    is closed on Mondays now." after "… on Sundays."). Read as conditions, "on
    Thursdays" and "on Fridays" never agreed (:func:`conditions_agree`) and both
    statements stayed current. Only a correction (``ex.correction``: "now", a change
    told) counts; two statements under two conditions otherwise both hold ("On Fridays
    we deploy the web app" / "On Mondays … the mobile app"). In :func:`correction_target`
    such a pair is one attribute even where one side states a time and the other none
    ("… at 16:00") or the subject is inflected ("Deploys" / "deploy")."""
    if not (getattr(ex, "correction", False) and ex.condition and row["condition"]):
        return False
    # "As of Monday the sync is on Thursdays": the onset says when, not what
    new_rest = terms(EN_ONSET_PHRASE.sub(" ", ex.text or "")) - terms(ex.subject) \
        - terms(ex.condition)
    old_rest = terms(row["text"]) - terms(row["subject"]) - terms(row["condition"])
    return new_rest == old_rest and terms(ex.condition) != terms(row["condition"])


def correction_conditions_agree(ex: Any, row: Any) -> bool:
    """:func:`conditions_agree` for a correction: one that states no condition of its
    own ("Actually, the staging port is 5434") keeps the condition of what it
    corrects ("… 5433 when the VPN is up") — the user did not restate it. A condition
    that is the new value itself (定例は火曜の14時に変更: 火曜の14時 was read as a time
    condition) is no condition of the correction, nor is the occasion of a change told
    as done ("we dropped it to 60 rpm after the scraping incident": :data:`_OCCASION`,
    with a change verb, :func:`~memory_core.extraction.replacement.states_change`) when
    what it corrects holds under none."""
    new_value = getattr(ex, "replacement", None) or ""
    if ex.condition and new_value and (ex.condition in new_value or new_value in ex.condition):
        return True
    if condition_is_value(ex, row):
        return True  # "Deploys are on Thursdays now." after "… on Fridays at 16:00."
    if ex.condition and not row["condition"] and _OCCASION.match(ex.condition) \
            and states_change(ex.text or ""):
        return True
    return not terms(ex.condition) or conditions_agree(ex, row)


_NUMBER = re.compile(r"(?<![\w.])\d+(?:[.,]\d+)*(?!\w)(?![.,]\d)")


_SWITCHED = re.compile(r"\b(?:switched|moved|transferred|changed|joined|went)\s+(?:over\s+)?"
                       r"(?:to|into)\b|\bam\s+now\s+(?:on|in)\b|\b(?:i'm|we're)\s+now\s+(?:on|in)\b",
                       re.I)
"""A move of the speaker to another value of one attribute ("I switched to the search
team"): a sibling subject ("payments team") is the value it left."""
_CUE_ONLY = re.compile(r"\bno\s+longer\b|\bany\s?more\b|\bthese\s+days\b|\bnowadays\b"
                       r"|\bgoing\s+forward\b|\bhenceforth\b", re.I)
"""Words of an update cue that say *that* a value changed, not *what* ("We no longer use
Jenkins"): left out of the terms a correction is matched by."""


_CONTRACTED = re.compile(
    r"^(?:(?:i|you|we|they|he|she|it|that|this|there|here|what|who|where|how)"
    r"'(?:s|m|re|ve|ll|d)"
    r"|(?:is|are|was|were|am|do|does|did|have|has|had|can|could|would|should|will|wo|must"
    r"|need|might|ai|sha)n't)$")
"""A pronoun joined to its verb ("it's", "i'm") or an auxiliary joined to "not"
("haven't"): a word a subject key may keep that names nothing."""


def _complemented(a: str, b: str, text_a: str, text_b: str) -> bool:
    """Whether two English subjects where one contains the other do not name one
    attribute: the longer continues the shorter with words after it ("reading" /
    "reading fantasy novel called", "learning" / "learning german": another object of
    the same verb) unless its statement gives those words as the value ("My manager
    is Tom": "manager" / "manager tom"), or the shorter names nothing but a pronoun
    with its verb ("i'm" / "i'm aiming"). English puts a compound's qualifiers before
    its head, so a subject that narrows another ends with it ("standup" / "daily
    standup"), nor when the shorter's statement says its subject moved the speaker to a
    new slot (:data:`_MOVED_HOLDER`: "dentist" / "dentist appointment"). ``text_a`` and
    ``text_b`` are the statements of ``a`` and ``b``."""
    if _CJK.search(a) or _CJK.search(b):
        return False
    wa = [w for w in a.split() if not _CONTRACTED.match(w)]
    wb = [w for w in b.split() if not _CONTRACTED.match(w)]
    if not wa or not wb:
        return True
    (short, short_text), (long_, long_text) = sorted(((wa, text_a), (wb, text_b)),
                                                     key=lambda p: len(p[0]))
    if len(short) == len(long_) or long_[:len(short)] != short:
        return False
    if _MOVED_HOLDER.search(short_text):
        return False  # "The dentist moved me to the 11th": the dentist appointment moved
    return re.search(rf"(?<!\w){re.escape(short[-1])}(?:'s|\s+(?:is|are|was|were)\b)",
                     long_text, re.I) is None


def moved_elsewhere(text: str, other_text: str, other_subject: str | None) -> bool:
    """Whether ``text`` says a thing moved to a place, naming no time or date
    (:data:`_MOVED_THING`: "The standup moved to the small meeting room"), and
    ``other_text`` (keyed ``other_subject``) states only a time or a date of it
    (:data:`_WHEN`: "The standup is at 9:30"): another attribute of the thing, which
    the move does not revise. One that states a place too ("The offsite is booked in
    Porto for June") is revised."""
    if _MOVED_THING.search(text) is None or _WHEN.search(text) is not None \
            or _WHEN.search(other_text) is None:
        return False
    return not terms(_WHEN.sub(" ", other_text)) - terms(other_subject)


_MOVED_HOLDER = re.compile(r"\b(?:moved|rescheduled|pushed|pulled|shifted|bumped)\s+(?:me|us)"
                           r"\s+(?:back\s+|forward\s+)?to\b", re.I)
"""Whoever moved the speaker to a new slot ("The dentist moved me to the 11th", "The
airline rescheduled us to Friday"): the subject is the one who moved it, and what moved
is the speaker's arrangement with them ("my dentist appointment"), named by the subject
and a word after it (:func:`_complemented`)."""
_SLOT = re.compile(r"\d|\b(?:mon|tues|wednes|thurs|fri|satur|sun)day\b|\b(?:today|tomorrow"
                   r"|tonight|noon|midnight|morning|afternoon|evening|next\s+(?:week|month))\b",
                   re.I)
"""A time or a date in a statement: what a :data:`_MOVED_HOLDER` correction revises."""
_WHEN = re.compile(r"\b\d{1,2}[:.]\d{2}\b|\b\d{1,2}\s*(?:am|pm)\b|\b\d{1,2}(?:st|nd|rd|th)\b"
                   r"|\bat\s+\d{1,2}\b|\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b"
                   r"|\b(?:today|tomorrow|tonight|noon|midnight|morning|afternoon|evening)\b"
                   r"|\b(?:next|last)\s+(?:week|month)\b|\b(?:january|february|march|april"
                   r"|june|july|august|september|october|november|december)\b", re.I)
"""A time or a date, stricter than :data:`_SLOT` ("room 2" names a place)."""
_MOVED_THING = re.compile(r"\b(?:moved|moving|relocated|shifted)\s+(?:back\s+|over\s+|up\s+"
                          r"|down\s+)?(?:to|into)\b", re.I)
"""A thing moved ("The standup moved to the small meeting room"): named without a time
or a date (:data:`_WHEN`), it moved in space, so an item stating its time or date
("The standup is at 9:30") is another attribute, not what it revises."""
_BOUND_HEADS = frozenset({
    "target", "targets", "goal", "goals", "objective", "limit", "limits", "cap", "ceiling",
    "floor", "threshold", "thresholds", "budget", "quota", "max", "maximum", "min",
    "minimum", "sla", "slo", "baseline", "estimate", "forecast", "allowance"})
"""Nouns that, after another attribute's words, name a bound or an aim of it, an
attribute of its own ("the p95 latency target" is not the p95 latency); any other
("the cache size", "the port number", "the retention period") names the same one."""
_USE_HEADS = frozenset({"usage", "use", "utilization", "utilisation", "consumption",
                        "spend", "spending", "load"})
"""Nouns naming how much of a thing is used: one attribute beside its bound ("the
memory usage" / "the memory limit")."""
_COPULA_AFTER = (r"(?:'s|\s+(?:is|are|was|were|stays|remains|has\s+been"
                 r"|(?:has\s+|have\s+|had\s+)?(?:(?:went|gone)\s+(?:up|down)|rose|risen|fell"
                 r"|fallen|dropped|increased|decreased|climbed|grew|grown|shrank|shrunk)\s+to"
                 r"|(?:got|was|were|has\s+been)\s+(?:moved|postponed|changed|raised|lowered|cut"
                 r"|bumped|pushed|rescheduled)\s+to))\b")
"""A copula after a subject's head, or a verb of change that gives it its new value
("the memory usage went up to 3.5 GB", "the retro got moved to Thursday": extraction's
``lexicon.EN_UPDATE``)."""


def _attribute_words(subject: str, low_text: str) -> list[str]:
    """A subject's words without those the extraction appends: the unit of the number
    its statement gives ("p95 latency ms"), :data:`_ATTRIBUTE_MARKS`, contractions;
    a possessive 's left out ("memory's" is "memory"), hyphens kept."""
    words = [w for w in subject.split() if w not in _ATTRIBUTE_MARKS
             and not _CONTRACTED.match(w)]
    while len(words) > 1 and words[-1] in UNITS and re.search(
            rf"\d\s*{re.escape(words[-1])}\b", low_text):
        words.pop()
    return re.sub(r"(?<=\w)'s\b", "", " ".join(words)).split()


def _spelling(low_text: str) -> str:
    """Text without hyphens and a possessive 's before a word: one word's spellings
    ("build time-out" / "build timeout", "redis max-memory" / "redis maxmemory",
    "heap's usage" / "heap usage") compare equal; "the latency's 500 ms" keeps its
    copula (:data:`_COPULA_AFTER`)."""
    return re.sub(r"(?<=\w)'s(?=\s+[a-z])", "", low_text.replace("-", ""))


_PARTICLES = frozenset("out up in on off over down back through away".split())
"""Particles that make a phrasal noun of a word ("time" / "timeout", "log" / "login",
"check" / "checkout"): another thing than the word alone."""
_VOWELS = frozenset("aeiou")
_INFLECTED = re.compile(r"(?:ing|ed|ly)$")


def _phrasal(x: str, y: str) -> bool:
    """Whether one word is the other with a particle after it ("timeout", "signup")."""
    short, long_ = sorted((x, y), key=len)
    return len(short) >= 3 and long_.startswith(short) and long_[len(short):] in _PARTICLES


def _cut_short(x: str, y: str, text_x: str, text_y: str) -> bool:
    """Whether one word is the other cut short: its start, cut before a vowel with at
    least four letters left ("conn" / "connection", "config" / "configuration", "max" /
    "maximum"; not "time" / "timeout", "port" / "portal", "product" / "productive"), or
    three or four of its letters, the first, then consonants up to its last one, written
    in lower case ("msg" / "message", "avg" / "average"; not "TLS" / "tools"). Never a
    word ending in -ing, -ed or -ly ("png" / "playing", "not" / "noticing"): no
    attribute's name. A plural "s" on both is left out ("conns" / "connections")."""
    if x.endswith("s") and y.endswith("s"):
        x, y = x[:-1], y[:-1]
    (short, short_text), (long_, _) = sorted(((x, text_x), (y, text_y)),
                                             key=lambda p: len(p[0]))
    if _INFLECTED.search(long_):
        return False
    if len(short) >= 3 and long_.startswith(short):
        rest = long_[len(short):]
        return len(rest) >= 4 and rest[0] in _VOWELS and rest not in _PARTICLES
    consonants = [ch for ch in long_ if ch not in _VOWELS and ch != "y"]
    if len(short) not in (3, 4) or len(long_) < len(short) + 3 or short[0] != long_[0] \
            or not consonants or short[-1] != consonants[-1] or _VOWELS & set(short[1:]) \
            or short in UNITS or re.search(rf"\b{re.escape(short.upper())}\b", short_text):
        return False
    letters = iter(long_)
    return all(ch in letters for ch in short)


def spelled_alike(a: str | None, b: str | None, text_a: str, text_b: str) -> bool:
    """Whether two English subjects name one attribute spelled two ways: a compound
    written open, hyphenated or closed ("sign up limit" / "signup limit", "e-mail
    quota" / "email quota"), or word for word, some words cut short ("max conns" /
    "max connections", "avg latency" / "average latency": :func:`_cut_short`) or in
    their British and American spellings ("colour" / "color": :func:`fold`)."""
    if not a or not b:
        return False
    # read for each row a correction scans: the cheap tests first, any units at the end
    # left out ("request timeout s")
    sa, sb = a.split(), b.split()
    while len(sa) > 1 and sa[-1] in UNITS:
        sa.pop()
    while len(sb) > 1 and sb[-1] in UNITS:
        sb.pop()
    if len(sa) == len(sb):
        if any(x[0] != y[0] for x, y in zip(sa, sb, strict=True)):
            return False
    elif _SQUASH.sub("", "".join(sa)) != _SQUASH.sub("", "".join(sb)):
        return False
    if _CJK.search(a) or _CJK.search(b):
        return False
    wa = [w.replace("-", "") for w in _attribute_words(a, text_a.lower())]
    wb = [w.replace("-", "") for w in _attribute_words(b, text_b.lower())]
    if not wa or not wb:
        return False
    if "".join(wa) == "".join(wb):
        return True
    return len(wa) == len(wb) and all(
        x == y or fold(x) == fold(y) or _cut_short(x, y, text_a, text_b)
        for x, y in zip(wa, wb, strict=True))


def rival_attributes(a: str | None, b: str | None, text_a: str, text_b: str) -> bool:
    """Whether two English subjects that share words name two attributes of one thing,
    each given its own value with a copula (:func:`_predicated`). Heads are the last
    words, units and :data:`_ATTRIBUTE_MARKS` left out, hyphens and a possessive 's
    read as spelling. Rivals when:

    - the heads differ, one is a bound or a use (:data:`_BOUND_HEADS`,
      :data:`_USE_HEADS`) and neither occurs in the other statement ("the memory
      limit" / "the memory usage"; not "the DB size" / "the DB storage"); or
    - one subject continues the other with a bound the shorter's statement lacks,
      and the shorter names none ("the p95 latency" / "the p95 latency target"; not
      "the cache" / "the cache size", "the port" / "the port number", "the max
      connections" / "the max connections limit", nor "My manager is Dana now",
      keyed "manager dana" without a copula on "dana"); or
    - the subjects differ in one word, one of the two the other with a particle after
      it (:func:`_phrasal`: "the build time" / "the build timeout"), copula or not.
    """
    if not a or not b or _CJK.search(a) or _CJK.search(b):
        return False
    low_a, low_b = text_a.lower(), text_b.lower()
    wa, wb = _attribute_words(a, low_a), _attribute_words(b, low_b)
    kinds = {w[-1].rsplit("-", 1)[-1] for w in (wa, wb) if w}  # "memory-limit": a limit
    wa, wb = [w.replace("-", "") for w in wa], [w.replace("-", "") for w in wb]
    low_a, low_b = _spelling(low_a), _spelling(low_b)
    if len(wa) == len(wb) and sum(x != y for x, y in zip(wa, wb, strict=True)) == 1 \
            and any(_phrasal(x, y) for x, y in zip(wa, wb, strict=True)):
        return True  # "the build time" / "the build timeout": a particle makes another noun
    if not wa or not wb or wa[-1] == wb[-1] or not set(wa) & set(wb):
        return False
    (short, short_text), (long_, long_text) = sorted(((wa, low_a), (wb, low_b)),
                                                     key=lambda p: len(p[0]))
    if len(short) < len(long_) and long_[:len(short)] == short:
        extra = long_[len(short):]
        return extra[-1] in _BOUND_HEADS and not set(short) & _BOUND_HEADS \
            and not any(w in short_text for w in extra) \
            and _predicated(short[-1], short_text) and _predicated(extra[-1], long_text)
    if wa[-1] in wb or wb[-1] in wa:
        return False  # one narrows or reorders the other ("api rate limit" / "rate limit api")
    return bool(kinds & (_BOUND_HEADS | _USE_HEADS)) \
        and wa[-1] not in low_b and wb[-1] not in low_a \
        and _predicated(wa[-1], low_a) and _predicated(wb[-1], low_b)


def other_attribute(a: str | None, b: str | None, text_a: str, text_b: str) -> bool:
    """Whether two English statements each give a value with a copula
    (:func:`_predicated`) to subjects of different heads (last words, as
    :func:`rival_attributes` reads them), neither head in the other statement: "My
    favourite language is Rust" / "My favourite editor is now Helix", "My work laptop
    is a ThinkPad" / "My work phone is a Pixel" — two attributes, whatever words they
    share. ``False`` where a subject is a verb phrase keyed on its object ("I drive a
    Honda Civic" / "I drive a Tesla": the head is the value). Chinese and Japanese
    keys (:func:`_cjk_other_attribute`): メインのデータベースはPostgresです /
    メインのキャッシュは今はRedisです."""
    if not a or not b:
        return False
    if _CJK.search(a) or _CJK.search(b):
        return _cjk_other_attribute(a, b, text_a, text_b)
    low_a, low_b = _spelling(text_a.lower()), _spelling(text_b.lower())
    wa = [w.replace("-", "") for w in _attribute_words(a, text_a.lower())]
    wb = [w.replace("-", "") for w in _attribute_words(b, text_b.lower())]
    if not wa or not wb or wa[-1] == wb[-1]:
        return False
    return wa[-1] not in low_b and wb[-1] not in low_a \
        and _predicated(wa[-1], low_a) and _predicated(wb[-1], low_b)


def attribute_beside(new: str | None, old: str | None, new_text: str, old_text: str
                     ) -> bool:
    """Whether an English update names, with a copula (:func:`_predicated`), an
    attribute of a thing that ``old`` told another attribute of: "My preferred editor
    font is now Iosevka." after "I prefer dark mode in every editor.", "My terminal
    shell is now zsh." after "I like a light theme in my terminal.". The update's
    subject shares a word with the old subject (the thing: editor, terminal), its head
    (font, shell) is not in the old statement, the old statement gives its value with
    a verb, not a copula ("The DB size is 10 GB" / "The DB storage is 12 GB now" are
    one attribute reworded), and the old subject has a word of its
    own that the update never says and the old statement does not write as a name
    (dark, mode, light, theme: the other attribute's words; "Jenkins" of "We use
    Jenkins for CI" is an old value, and "Our CI server is now GitHub Actions" may
    replace it)."""
    if not new or not old or _CJK.search(new) or _CJK.search(old):
        return False
    low_new, low_old = _spelling(new_text.lower()), _spelling(old_text.lower())
    wn = [w.replace("-", "") for w in _attribute_words(new, new_text.lower())]
    wo = [w.replace("-", "") for w in _attribute_words(old, old_text.lower())]
    if len(wn) < 2 or not wo or not set(wn[:-1]) & set(wo) \
            or re.search(rf"(?<!\w){re.escape(wn[-1])}", low_old) \
            or not _predicated(wn[-1], low_new) or _predicated(wo[-1], low_old):
        return False  # two values given with a copula: other_attribute's to tell
    return any(w not in wn and re.search(rf"(?<!\w){re.escape(w)}", low_new) is None
               and re.search(rf"(?<![\w-]){re.escape(w)}(?!\w)", old_text) is not None
               for w in wo)


_CJK_TOPIC = r"\s*(?:は|が|是|现在是|現在是|今は|也是)"
"""What follows a Chinese or Japanese subject given its value: a topic or subject
particle (は, が) or a copula (是)."""


def _cjk_other_attribute(a: str, b: str, text_a: str, text_b: str) -> bool:
    """:func:`other_attribute` for keys in Chinese or Japanese: the keys share their
    start (好きな, メイン, 主) and end in heads of :data:`_CJK_HEAD` characters or more
    (言語 / エディタ), each followed in its statement by a particle or copula
    (:data:`_CJK_TOPIC`), neither in the other statement."""
    start = len(os.path.commonprefix([a, b]))
    ha, hb = a[start:], b[start:]
    if not start or len(ha) < _CJK_HEAD or len(hb) < _CJK_HEAD:
        return False
    low_a, low_b = text_a.lower(), text_b.lower()
    ha, hb = ha.lower(), hb.lower()
    return ha not in low_b and hb not in low_a \
        and re.search(re.escape(ha) + _CJK_TOPIC, low_a) is not None \
        and re.search(re.escape(hb) + _CJK_TOPIC, low_b) is not None


def _predicated(head: str, low_text: str) -> bool:
    """Whether a statement gives ``head`` its value with a copula ("the memory usage
    is 3.2 GB"): the subject is then a noun phrase ending with it, not a verb phrase
    keyed on its object ("format dates as mm/dd/yyyy")."""
    return re.search(rf"(?<!\w){re.escape(head)}{_COPULA_AFTER}", low_text) is not None


_CODE_VALUE = re.compile(
    r"(?<![\w.-])(?:[a-z0-9][\w-]*(?:\.[a-z0-9][\w-]+)+"  # stg.acme.io, app.yaml
    r"|(?=[a-z-]*\d)(?=[\d-]*[a-z])[a-z0-9]+(?:-[a-z0-9]+)+)(?![\w-])"  # eu-west-1
    r"|(?<!\w)/[\w.-]+/[\w./-]*", re.I)  # /var/log/app/
"""A host, a dotted name, a name-and-number identifier or a path: a value as much as a
number is."""


def _holds_value(text: str, value_text: str | None) -> bool:
    """Whether a statement states a value: a number the extraction read, or a host,
    dotted name, identifier or path (:data:`_CODE_VALUE`)."""
    return value_text is not None or _CODE_VALUE.search(text) is not None


@functools.cache
def _units_of(dimension: str) -> frozenset[str]:
    """Every unit the extraction writes (:data:`UNITS`, :data:`CJK_UNITS`) of one
    dimension (:func:`unit_class`)."""
    return frozenset(u for u in (*UNITS.values(), *CJK_UNITS.values())
                     if unit_class(u) == dimension)


def correction_target(items: ItemReads, scope: Scope, ex: Any,
                      kinds: tuple[str, ...], *, speaker: str = "",
                      ambiguous: list[Any] | None = None) -> Any:
    """The active item a correction ``ex`` replaces, or None (module docstring).

    ``items``: the store's item reads (one statement); the item is returned as
    ``{id, subject, text, unit, condition, value_text}``.

    Candidates are the active items of ``kinds`` in the tenant and role said by
    ``speaker`` (a message's ``name``; ``""`` for none) — for a correction led by an
    ordinal label ("Run 40: …"), only items of that label — however old
    (the newest ``CORRECTION_SCAN``; corrections are rare, the scan is cheap).
    Each must agree on the condition (:func:`conditions_agree`) and on the unit's
    dimension (both without a unit, or both of one class; only the very same
    subject may pair a unit with none), and an item of another subject on the shape of
    its value (both texts hold a digit, or neither: a font family revises no font
    size); a correction by which someone moved the speaker to a new slot ("The dentist
    moved me to the 11th", :data:`_MOVED_HOLDER`) revises only an item naming a time or
    a date (:data:`_SLOT`). Best first: the same subject; a subject
    that contains the other or is contained in it; else term overlap
    (:func:`memory_core.items.overlap.overlap`) of at least 0.5 with two shared terms
    (one when a side has only one). Ties go to more shared terms, then the newest.
    A replacement that names the old value ("We replaced RabbitMQ with Kafka": the
    extraction's ``replaces``) replaces the item stating that value
    (:func:`_replaced_item`) or nothing, unless it is where the speaker lives
    (subject ``home``: a move replaces the home item whatever place it names). A
    correction that names the old number ("it's 5434, not 5433") replaces the item
    stating it, whatever its wording; one with no subject ("Actually, it's 5434")
    replaces the newest item with a value of the same unit dimension. A correction
    without a condition may replace an item stated under one (it keeps that
    condition: the user did not restate it), but an item under the same condition as
    the correction's wins over it. A statement that only adds one more of a kind
    (:func:`~memory_core.extraction.replacement.adds`) replaces nothing, and one with no
    value of its own replaces an impression only by another (:func:`impression`: "Nope,
    never been to anything like that" is no new value of "The fireworks were amazing").
    The correction is read without its asides ("Sorry, my manager is Lee now" judges the
    news, not the manager); a stored item with any impression in it ("I won the
    tournament - so exciting!") stays one.

    A correction keyed by a pronoun ("It's a MacBook Air now, the Dell died") replaces
    the newest item of the speaker's that holds a name given beside the pronoun's
    clause (:func:`_named_beside`). A thing moved to a place replaces no item stating
    only its time or date (:func:`moved_elsewhere`).

    A correction keyed by a diet (:data:`~memory_core.extraction.lexicon.EN_DIETS`)
    replaces the speaker's newest item keyed by one, whichever diet it named.

    A correction naming only the head of an attribute ("my font size") that two or more
    active items qualify ("editor font size", "terminal font size") replaces none: with
    ``ambiguous`` (a list) given, those candidate rows are appended to it, best first
    (the correction may revise either; the writer links it to them, ``data.may_revise``).
    """
    if getattr(ex, "replacement", None) and not getattr(ex, "replaces", None) \
            and actor(ex.text or "") == "other":
        return None  # "My sister moved back to Ohio": another person's change back
    if adds(ex.text or ""):
        return None  # "We now also support API keys": one more of a kind, dated
    if ex.subject == WORK and not getattr(ex, "replaces", None) \
            and getattr(ex, "lang", "en") == "en" and ends_work(ex.text or ""):
        # "I retired last year", "I got laid off": the newest statement of the
        # speaker's work ends, whatever it named; nothing else about work does
        return next((row for row in items.correction_candidates(
            scope.tenant, scope.role, kinds, speaker, None, None, CORRECTION_SCAN)
            if speaker_works(row["text"] or "") and correction_conditions_agree(ex, row)),
            None)
    if ex.subject in EN_DIETS:
        # "Actually, I'm pescatarian." after "I'm vegetarian.": one diet at a time, the
        # newest of the speaker's, whichever it named
        return next((row for row in items.correction_candidates(
            scope.tenant, scope.role, kinds, speaker, None, None, CORRECTION_SCAN)
            if row["subject"] in EN_DIETS and correction_conditions_agree(ex, row)), None)
    beside = _named_beside(items, scope, ex, kinds, speaker)
    if beside is not None:
        return beside  # "It's a MacBook Air now, the Dell died": the Dell was the laptop
    shaped = shapes.pronoun_value(ex.text or "") if not ex.subject else None
    if shaped is not None:
        held, by_shape = _same_shape(items, scope, ex, kinds, speaker, *shaped)
        if held:
            return by_shape
    if getattr(ex, "replaces", None):
        replaced = _replaced_item(items, scope, ex, kinds, speaker)
        if replaced is not None or ex.subject != HOME:
            return replaced
        # The speaker moved ("I moved from Berlin to Lisbon"): whatever the stored
        # place is called ("I'm based in Kreuzberg"), home changed.
    back = _returned_from(items, scope, ex, kinds, speaker)
    if back is not None:
        return back
    # "We went back to Helm" names no attribute: without an earlier item of that value
    # (above), only a rival value may be what it replaces ("… to Postgres 14" after
    # "We run Postgres 16"), never an item that merely shares the name ("Helm charts …")
    values_only = bool(getattr(ex, "replacement", None)) and not _names_attribute(ex)
    if values_only and ex.value is None:
        return None
    named = {n for n in _NUMBER.findall(ex.text or "") if n != (ex.value_text or "")}
    new_terms = terms(EN_ONSET_PHRASE.sub(" ", _CUE_ONLY.sub(" ", without_apology(ex.text or ""))))
    new_unit = unit_class(ex.unit)
    best: tuple[int, float, float, int] | None = None
    found: dict[str, Any] | None = None
    fallback: dict[str, Any] | None = None
    # "Run 40: … currently 0.93" revises run 40, not run 39
    label = getattr(ex, "label", None) or None
    alike: list[str] | None = None
    if new_unit:  # units of another dimension never pair: leave them to the store
        alike = sorted({*_units_of(new_unit), ex.unit})
    # "Staging: the port is 6000 now" revises staging's port only: not another
    # attribute of staging (its words are the topic's), nor another thing's port
    topic = getattr(ex, "topic", None)
    rows = items.correction_candidates(scope.tenant, scope.role, kinds, speaker, label,
                                       alike, CORRECTION_SCAN,
                                       subject_prefix=f"{topic} " if topic else None)
    # A cheap pre-check before a row's terms are computed: the first characters of two
    # of the correction's stems (of one, when it has one) occur in the row's text.
    probes = {t if len(t) <= 2 else t[:min(4, len(t) - 1)] for t in new_terms}
    need = min(2, len(probes))
    subject = ex.subject or ""
    switch = _SWITCHED.search(ex.text or "") is not None
    moved_holder = _MOVED_HOLDER.search(ex.text or "") is not None
    apart = names_a_member_or_scope(ex.text or "")  # else no row is another one
    valueless = ex.value_text is None and not getattr(ex, "replacement", None)
    judged: list[bool] = []  # whether ``ex`` is an impression: read once, when first asked

    def other_register(row: Any) -> bool:
        # a value-less correction and an impression (or the reverse): asked only of rows
        # past the cheap checks, as a row's clauses cost ~10 µs and the scan is long;
        # the correction's own reading only then too (most corrections state a value)
        if not valueless:
            return False
        if not judged:
            judged.append(impression(ex.text or "", ex.subject, ex.kind))
        return judged[0] != impression(row["text"] or "", row["subject"], row["kind"],
                                       asides=True)
    by_value: dict[str, Any] | None = None
    same = 0  # rows of the very subject, read first when no value is named
    if subject and not named:
        # The very subject under the same condition scores highest (3.0) and no other
        # row can pass it: once one is found among them, the rest need no reading.
        # (A named value picks the newest row stating it, and a correction without a
        # subject the newest fallback: both keep the rows' order.)
        firsts = [r for r in rows if r["subject"] == subject]
        if firsts:
            same = len(firsts)
            rows = firsts + [r for r in rows if r["subject"] != subject]
    for n, row in enumerate(rows):
        if n == same and same and best is not None and best[:2] == (1, 3.0):
            break
        old_unit = unit_class(row["unit"])
        same_unit = new_unit == old_unit
        if new_unit and old_unit and not same_unit:
            continue
        row_subject = row["subject"] or ""
        if subject and row_subject and subject != row_subject \
                and _has_digit(ex.text) != _has_digit(row["text"]) \
                and not condition_is_value(ex, row):
            # another key whose value is of another shape (a number, not a word or a
            # name) is another attribute: "My editor font is Fira Code now" leaves "My
            # editor font size is 12", "Set my size to M" leaves "My font size is 12"
            continue
        if moved_holder and not _SLOT.search(row["text"] or ""):
            continue  # "The dentist moved me to the 11th" moves a slot, not "My dentist is Lee"
        if moved_elsewhere(ex.text or "", row["text"] or "", row["subject"]):
            continue  # "The standup moved to room 4B" leaves "The standup is at 9:30"
        if switch and siblings(subject, row_subject, ex.text or "", row["text"] or "") \
                and correction_conditions_agree(ex, row):
            # "I switched to the search team" after "I'm on the payments team": the
            # rival qualifier is the value that changed
            score0 = (1 if conditions_agree(ex, row) else 0, 1.5, 0.0, row["id"])
            if best is None or score0 > best:
                best, found = score0, row
            continue
        if apart and (other_instance(subject, ex.text or "", row_subject, row["text"] or "")
                      or rival_scopes(ex.text or "", row["text"] or "")):
            continue  # "build-02 was upgraded to 128 GB" after "build-01 has 64 GB"
        if rival_owners(ex.text or "", row["text"] or ""):
            continue  # "Anna's rent went up to 1000 EUR" after "My rent is 900 EUR"
        related = bool(subject and row_subject
                       and (subject in row_subject or row_subject in subject
                            or (fold_aliases(subject) != subject
                                or fold_aliases(row_subject) != row_subject)
                            and subjects_match(subject, row_subject)))
        spelt = not related and spelled_alike(subject, row_subject, ex.text or "",
                                              row["text"] or "")
        related = related or spelt  # "the max conns" / "the max connections"
        if topic and not related:
            continue
        if subject != row_subject and rival_attributes(subject, row_subject, ex.text or "",
                                                       row["text"] or ""):
            continue  # "the memory usage is 3.2 GB now" after "the memory limit is 4 GB"
        if subject != row_subject and attribute_beside(subject, row_subject, ex.text or "",
                                                       row["text"] or ""):
            continue  # "My editor font is now Iosevka" after "I prefer dark mode in editors"
        if by_value is None and named and row["value_text"] in named and (
                related or not getattr(ex, "replacement", None)):
            # the newest item stating the value the correction names ("upgraded Node
            # from 18 to 20": of the attribute it names, not "The team has 18 people")
            by_value = row
        if values_only and row["value_text"] is None:
            continue
        low = row["text"].lower()
        has_value = row["value_text"] is not None and ex.value_text is not None
        if not related and sum(p in low for p in probes) < need:
            if fallback is None and (new_unit or has_value) and same_unit \
                    and correction_conditions_agree(ex, row) and not other_register(row):
                fallback = row
            continue
        if other_register(row):
            continue  # an impression and a statement of fact are no two values of one thing
        if not correction_conditions_agree(ex, row):
            continue
        strict = 1 if conditions_agree(ex, row) else 0  # same condition beats inherited
        if fallback is None and (new_unit or has_value) and same_unit:
            fallback = row
        old_terms = terms(row["text"])
        shared = len(new_terms & old_terms)
        if subject and subject == row_subject:
            score: tuple[int, float, float, int] = (
                strict, 3.0, overlap(new_terms, old_terms), row["id"])
        elif not same_unit:
            continue  # a unit on one side only: only the very same subject may pair them
        elif related and (spelt or subjects_match(subject, row_subject)
                          or condition_is_value(ex, row)) and not (
                _complemented(subject, row_subject, ex.text or "", row["text"] or "")
                and not (_holds_value(ex.text or "", ex.value_text)
                         and _holds_value(row["text"] or "", row["value_text"]))):
            score = (strict, 2.0, overlap(new_terms, old_terms), row["id"])
        else:
            if shared < min(2, len(new_terms), len(old_terms)) \
                    or siblings(subject, row_subject, ex.text or "", row["text"] or "") \
                    or sibling_in_text(subject, ex.text or "", row_subject,
                                       row["text"] or ""):
                continue
            score = (strict, overlap(new_terms, old_terms), shared, row["id"])
            if score[1] < 0.5:
                continue
        if best is None or score > best:
            best, found = score, row
    if by_value is not None:
        return by_value  # "it's 5434, not 5433": the old value is named
    if found is None and not ex.subject and fallback is not None:
        return fallback  # "I meant 45 s", "Actually, it's 5434": the newest such value
    if found is not None and headed_by(found["subject"], subject):
        others = [r for r in rows if headed_by(r["subject"], subject)
                  and r["subject"] != found["subject"] and correction_conditions_agree(ex, r)]
        if others:
            # "Set my font size to 14" after "editor font size" and "terminal font size":
            # the head names either, so it revises neither; the user is asked which
            if ambiguous is not None:
                alike_rows = [r for r in (found, *others)
                              if _has_digit(ex.text) == _has_digit(r["text"])
                              and not rival_owners(ex.text or "", r["text"] or "")]
                if len(alike_rows) >= 2:
                    ambiguous.extend(alike_rows)
            return None
    return found


def _has_digit(text: str | None) -> bool:
    """Whether ``text`` states a number: a digit outside its addresses (an email, a URL,
    a handle or a path is a name whatever digits it spells, :func:`shapes.without_addresses`)."""
    text = text or ""
    # cutting addresses only removes characters: a text without a digit has none left
    return any(map(str.isdigit, text)) and any(
        map(str.isdigit, shapes.without_addresses(text)))


def headed_by(subject: str | None, head: str | None) -> bool:
    """Whether ``subject`` is a qualified form of the attribute ``head``: it ends with
    it as whole words ("editor font size" / "font size"; "编辑器字体大小" / "字体大小"),
    and is longer."""
    if not subject or not head or len(subject) <= len(head):
        return False
    if _CJK.search(head):
        return subject.endswith(head)
    return subject.endswith(" " + head)


_PRONOUN_KEY = re.compile(r"^(?:it|that|this|they|those)(?:['\u2019](?:s|re)|\s+(?:is|are|was"
                          r"|were))?(?:\s|$)")
"""A subject key that is a pronoun and its verb ("it's macbook air"): it names no
attribute, so only the rest of the message can say which item it revises."""
_ASIDE = re.compile(r"[,;:\u2014\u2013]|\s-\s|\b(?:since|because|after|as)\s", re.I)
_NAME = re.compile(r"\b[A-Z][\w-]*[A-Za-z][\w-]*")


def _named_beside(items: ItemReads, scope: Scope, ex: Any, kinds: tuple[str, ...],
                  speaker: str) -> Any:
    """The item a correction keyed by a pronoun ("It's a MacBook Air now, the Dell
    died") revises: the newest of the speaker's own (no other owner said) that holds a
    name the message gives *beside* the pronoun's clause (after a comma, a dash,
    "since", "because"…: what became of the old one), under an agreeing condition;
    None when the key is no pronoun, no name stands beside it, or no item holds one.
    A name in the pronoun's own clause is the new value ("It's Fastmail now"), never
    what it replaces."""
    if not _PRONOUN_KEY.match(ex.subject or ""):
        return None
    text = ex.text or ""
    cut = _ASIDE.search(text)
    if cut is None:
        return None
    names = set(_NAME.findall(text[cut.end():])) - set(_NAME.findall(text[:cut.start()]))
    if not names:
        return None
    said = [re.compile(rf"(?<![\w-]){re.escape(n)}(?![\w-])") for n in sorted(names)]
    for row in items.correction_candidates(scope.tenant, scope.role, kinds, speaker, None,
                                           None, CORRECTION_SCAN):
        row_text = row["text"] or ""
        if owner(row_text) not in (None, ("self", "")):
            continue
        if any(p.search(row_text) for p in said) and correction_conditions_agree(ex, row):
            return row
    return None


def _same_shape(items: ItemReads, scope: Scope, ex: Any, kinds: tuple[str, ...],
                speaker: str, shape: str, value: str) -> tuple[bool, Any]:
    """The item a correction that names no attribute revises by its value's shape
    ("Typo: it's jon@example.com." after "My email is jon@exmaple.com."): the newest
    item of the speaker's own (no other owner said) holding a value of ``shape``, the
    one holding the value named after "not" first. ``(found, item)``: ``found`` is
    false when no item holds that shape (the other rules then look)."""
    named = [v for s, v in shapes.values(ex.text or "") if s == shape
             and not shapes.same(v, value)]
    first: Any = None
    for row in items.correction_candidates(scope.tenant, scope.role, kinds, speaker, None,
                                           None, CORRECTION_SCAN):
        held = [v for s, v in shapes.values(row["text"] or "") if s == shape]
        if not held or owner(row["text"] or "") not in (None, ("self", "")):
            continue
        if not named:
            return True, row
        if any(shapes.same(v, n) for v in held for n in named):
            return True, row
        first = first if first is not None else row
    return first is not None, first


_LATIN_RUN = re.compile(r"[a-z0-9]+")
_SHORT_MENTION = 3
"""Most content terms an item may hold besides the old value (and the attribute) to be
taken as a statement of that value ("We host on Heroku", "Our hosting is Heroku") when
the replacement names no attribute."""


_SHORT_MENTION_CJK = 12
"""…and most CJK characters besides the attribute ("メッセージキューはRabbitMQです")."""
_SQUASH = re.compile(r"[\W_]+")


def _squash(text: str) -> str:
    return _SQUASH.sub("", text.casefold())


def _own_subject(ex: Any) -> str:
    """A new item's subject without its series label ("run 40 kafka" → "kafka")."""
    label = getattr(ex, "label", None) or ""
    subject = ex.subject or ""
    return subject[len(label):].strip() if label and subject.startswith(label) else subject


def _names_attribute(ex: Any) -> bool:
    """Whether a replacement's subject names the attribute that changed ("… for the
    event bus", "bumped Node …") rather than only keying the new value ("fly.io")."""
    subject = _own_subject(ex)
    return bool(subject) and _squash(subject) not in _squash(
        getattr(ex, "replacement", None) or "")


def mentions(text: str, phrase: str) -> bool:
    """Whether ``text`` names ``phrase``: each of its Latin words as a whole word
    (case folded; "RabbitMQ" in "我们用RabbitMQ做队列" too), a CJK phrase as a substring."""
    low = text.casefold()
    want = _LATIN_RUN.findall(phrase.casefold())
    if _CJK.search(phrase) or not want:
        return phrase.casefold() in low
    have = set(_LATIN_RUN.findall(low))
    return all(w in have for w in want)


def _replaced_item(items: ItemReads, scope: Scope, ex: Any, kinds: tuple[str, ...],
                   speaker: str) -> Any:
    """The active item a replacement that names its old value replaces ("We replaced
    RabbitMQ with Kafka", "We migrated from Heroku to Fly.io", 不再用Redis): one of the
    speaker's items that names the old value, does not name the new one ("Kafka is
    faster than RabbitMQ" compares the two, it is not the old state) and agrees on the
    condition. When the replacement names the attribute ("… for the event bus", "Dana
    replaced Tom as team lead"), the item must be about it too (its subject matches,
    or its text holds the attribute's terms): "Tom is my brother" stays. Otherwise
    the item must be a short statement of the value (at most ``_SHORT_MENTION`` other
    content terms; CJK: ``_SHORT_MENTION_CJK`` other characters): "We host on Heroku",
    not a long story that happens to name it — and about the same person: an item
    about a relative ("My brother lives in Boston", :func:`~memory_core.extraction.
    replacement.actor`) is not what the speaker's "I moved from Boston to Denver"
    left, and the other way round. Best first: a matching subject, then
    the attribute in the text, then the fewest other terms, then the newest. ``None``
    when no item qualifies — the replacement then supersedes nothing (it never falls back to a
    subject match alone: "Kafka runs three brokers" is not what "We replaced RabbitMQ
    with Kafka" replaces)."""
    old_value = ex.replaces
    new_value = getattr(ex, "replacement", None) or ""
    label = getattr(ex, "label", None) or None
    subject = _own_subject(ex)
    # the attribute is what the subject says besides the new value ("run make check"
    # instead of "make lint": run)
    subject_terms = terms(subject) - terms(new_value) or terms(subject)
    named_attribute = _names_attribute(ex)
    skip = terms(old_value) | subject_terms
    other = actor(ex.text or "") == "other"
    parting = getattr(ex, "lang", "en") == "en" and EN_PARTING.search(ex.text or "") is not None
    leaving_home = ends_home_with(ex.text or "")
    # "I abandoned my novel": the speaker's own, never "My sister is writing a novel"
    own = not other and re.search(rf"\b(?:my|our)\s+{re.escape(old_value)}\b",
                                  ex.text or "", re.I) is not None
    best: tuple[int, int, int] | None = None
    found: Any = None
    for row in items.correction_candidates(scope.tenant, scope.role, kinds, speaker, label,
                                           None, CORRECTION_SCAN):
        text = row["text"] or ""
        if not mentions(text, old_value) or (new_value and mentions(text, new_value)):
            continue
        if not correction_conditions_agree(ex, row):
            continue
        if parting and not EN_COUPLE.search(text):
            continue  # "Emma and I broke up" ends a couple, not "Emma is my sister"
        if leaving_home and not speaker_lives(text):
            continue  # "I moved out of my parents' place" ends no "My parents live in …"
        if own and actor(text) == "other":
            continue
        if subject and subjects_match(subject, row["subject"]):
            rank = 2
        elif subject_terms and covered(subject_terms, terms(text)) >= _CONDITION_COVER:
            rank = 1
        else:
            rank = 0
        if _CJK.search(text):  # bigrams overcount: the CJK characters besides the attribute
            extra = len(_CJK.findall(text)) - (len(_CJK.findall(subject))
                                               if subject and subject in text else 0)
            short = extra <= _SHORT_MENTION_CJK
        else:
            extra = len(terms(text) - skip)
            short = extra <= _SHORT_MENTION
        if rank == 0 and (named_attribute or not short or (actor(text) == "other") != other):
            continue  # "My brother lives in Boston" is not what "I moved from Boston …" left
        score = (rank, -extra, int(row["id"]))
        if best is None or score > best:
            best, found = score, row
    return found


_LETTER = re.compile(r"[^\W\d_]")


def _returned_from(items: ItemReads, scope: Scope, ex: Any, kinds: tuple[str, ...],
                   speaker: str) -> Any:
    """The active item a change back to an earlier value replaces ("We went back to
    Helm", "We reverted to Postgres 14", 回滚到v2.3 — the extraction's
    ``replacement`` without ``replaces``): the successor of the newest superseded item
    of the speaker that names the value returned to (and agrees on the condition),
    when that successor does not name it itself. ``None`` otherwise, for a value
    without a letter ("bumped Node to 20": a bare number names no earlier item), and
    for a change back not by the speaker: an English one must open with "I"/"we" ("My
    sister moved back to Ohio", "The analytics team went back to Postgres 16" are
    someone else's; :func:`correction_target` then supersedes nothing either). A change
    back that names its attribute ("We reverted the database to Postgres 14") takes only
    a successor whose text holds the attribute's terms."""
    value = getattr(ex, "replacement", None)
    if not value or not _LETTER.search(value):
        return None
    if getattr(ex, "lang", "en") == "en" and actor(ex.text or "") != "self":
        return None  # only the speaker's own change back ("We went back to Helm")
    label = getattr(ex, "label", None) or None
    # "We reverted the database to Postgres 14": the successor must be about the database
    # (one the sentence names: "We rolled back to v2.3" keys "version" without naming it)
    attribute = terms(_own_subject(ex)) if _names_attribute(ex) else frozenset()
    if covered(attribute, terms(ex.text)) < _CONDITION_COVER:
        attribute = frozenset()
    for row in items.replaced_candidates(scope.tenant, scope.role, kinds, speaker, label,
                                         CORRECTION_SCAN):
        if not mentions(row["text"] or "", value) or not conditions_agree(ex, row):
            continue
        if attribute and covered(attribute, terms(row["successor_text"] or "")) \
                < _CONDITION_COVER:
            continue
        if mentions(row["successor_text"] or "", value):
            return None  # the value is current already
        return {"id": row["superseded_by"], "text": row["successor_text"]}
    return None


def settles(side: Any, correction_text: str) -> bool:
    """Whether a correction also settles the other side of a conflict it resolves:
    it names that side's subject (≥ 80 % of the subject's terms in its text). "訂正：
    ログの保存期間は79日" settles "ログの保存期間は177日", not "監査ログの保存期間は103年"."""
    side_terms = terms(side["subject"]) or terms(side["text"])
    return covered(side_terms, terms(correction_text)) >= 0.8


_NUMBERED = re.compile(r"\w*\d[\w.]*")
"""A word holding a digit ("10", "3am", "py3"): a version or time the key leaves out."""
_NOW_AND_THEN = re.compile(r"\b(?:sometimes|at\s+times|occasionally|now\s+and\s+then"
                           r"|from\s+time\s+to\s+time|on\s+occasion|some\s+days)\b")
"""A feeling said to come and go: an occasional mood, not a turned taste."""


def turned_liking(ex: Any, row: Any) -> int:
    """How a new preference turns a stored one of the same subject (the same key,
    spellings folded): ``-1`` a liking turned to a dislike ("I love sushi." → "I hate
    sushi.", "I can't stand sushi.", "I don't like sushi."), ``1`` a dislike turned to
    a liking, ``0`` no turn (same polarity, another kind, another or a narrower
    subject: "I hate cold sushi" turns no "I love sushi"; another number or version,
    or a feeling that comes and goes: "I hate Windows 10" turns no "I like Windows 11",
    "I hate my job sometimes" no "I love my job"). Polarity is the
    preference's ``negated`` flag (a dislike), read from the row's data."""
    if ex.kind != "preference" or row["kind"] != "preference" or not ex.subject \
            or not row["subject"] or fold(ex.subject) != fold(row["subject"]):
        return 0
    new, old = bool(getattr(ex, "negated", False)), bool(data_of(row).get("negated"))
    if new == old:
        return 0
    if not new:
        return 1
    text, old_text = (ex.text or "").lower(), (row["text"] or "").lower()
    if set(_NUMBERED.findall(text)) != set(_NUMBERED.findall(old_text)) \
            or _NOW_AND_THEN.search(text):
        return 0  # "I hate Windows 10" after "I like Windows 11"; "I hate my job sometimes"
    return -1


def more_specific(new_subject: str | None, old_subject: str | None) -> bool:
    """Whether ``new_subject`` narrows ``old_subject`` by adding words ("audit log
    retention" after "log retention"): a statement about a narrower thing, not a
    conflicting value of the same one."""
    return bool(new_subject and old_subject
                and len(fold(new_subject)) > len(fold(old_subject))
                and subjects_match(new_subject, old_subject))


_SHORT_CLAIM = 2
"""Most content terms a value-less statement may hold besides its subject and still be
read as one claim about it ("the deadline is Friday"), so two of them can disagree."""


_DESCRIPTION = re.compile(
    r"^(?!(?:the|a|an|my|our|your|his|her|their|its|this|that|these|those|it|we|i|they"
    r"|he|she|you|there|here)\b)(?-i:[A-Z])[\w.-]*(?:\s+(?-i:[A-Z])[\w.-]*){0,2}"
    r"(?:\s+(?:is|was)\b|['’]s)\s+(?:also\s+|still\s+)?"
    r"(?:my|our|your|his|her|their|a|an|one\s+of)\s"
    r"|^(?![我你他她它这那本])\w{1,8}?(?:也|还)?是(?:我|我们|你|你们|他|她|他们)的"
    r"|^(?![我你他她それこれ])\w{1,10}?は(?:私|僕|俺|うち|わたし)の",
    re.I)
"""A statement that describes a named thing by what it is to someone or by its class
("Tom is my brother", "Tom is our team lead", "Kafka is a message broker",
汤姆是我的哥哥, トムは私の兄です): a person or a thing holds many such descriptions at
once, so two of them never disagree. "My manager is Dana" and "The deadline is Friday"
state the one value of an attribute, and "Our database is a Postgres cluster" starts
with a possessive: those still can."""


_SPEAKER_LEAD = re.compile(r"(?:my|our|i|we)\b|我|咱们|私|僕|俺", re.I)
"""A sentence that opens with the speaker or the speaker's own thing ("My name is …",
"I live …", 我住在…)."""


def _holder(text: str | None) -> str | None:
    """``"other"``, ``"self"`` or None for a statement past its discourse opener: who
    holds what it says (:func:`~memory_core.extraction.replacement.actor`, or a
    sentence that opens with the speaker: :data:`_SPEAKER_LEAD`)."""
    rest = (without_opener(text) or "").strip()
    who = actor(rest)
    if who is None and _SPEAKER_LEAD.match(rest):
        return "self"
    return who


def other_holders(a: str | None, b: str | None) -> bool:
    """Whether one of two statements is about another person or group and the other
    about the speaker (:func:`_holder`): "My brother lives in Oslo." / "I live in
    Oslo.", "My sister's name is Ana." / "My name is Maria." hold one value for two
    holders, so they are neither one statement said twice nor rival values. A
    statement that opens with neither ("Dana is my manager.") is compared as before."""
    return {_holder(a), _holder(b)} == {"other", "self"}


def named_value(value: float | None, value_text: str | None) -> bool:
    """Whether an item's value is a name written with digits (a phone number, an IP
    address, a version "1.2.3": :func:`~memory_core.extraction.quantity.find_quantities`
    reads it whole, with no number)."""
    return value is None and bool(value_text)


def same_name(a: str | None, b: str | None) -> bool:
    """Whether two items' value texts name one value with digits (separators and case
    aside: "555-123-4567" / "555.123.4567"); False when either has none."""
    return named_value(None, a) and named_value(None, b) and shapes.same(a or "", b or "")


def contradicts(ex: Any, row: Any) -> bool:
    """Whether a new statement disagrees with a stored one about the same subject.

    Two values (different ones: the caller checks equality) disagree, unless both are
    readings of what was observed or done (:func:`~memory_core.items.readings.observes`:
    "The build took 42 s" / "The build took 50 s" are two runs, not a question for the
    user). Without
    values, only two choices of the same kind ("we'll use Postgres" / "we'll use MySQL"
    for the same thing) or two short claims of the same kind ("the deadline is Friday"
    / "… Monday") disagree; "the export job logs every request" and "the export job
    feels too clever" say two different things about one subject, two descriptions
    of a named thing ("Tom is my brother" / "Tom is our team lead") hold together,
    two impressions ("That photo is gorgeous" / "… so cute": :func:`evaluates`) are no
    values, two claims after a predicate that holds many values ("The app supports
    English" / "… French": :data:`_MANY_VALUED`) add up unless a number tells them apart
    ("serves lunch until 2pm" / "… 3pm"), and a statement that says nothing but its
    subject disagrees with nothing. In Chinese or Japanese, where a word is two or more
    character bigrams, the same sentence with one stretch replaced
    (:func:`~memory_core.items.overlap.one_slot_swapped`: "我住在苏州。" / "我住在厦门。")
    disagrees however many terms its claim holds.
    """
    if other_holders(ex.text, row["text"]):
        return False  # "My sister's name is Ana." / "My name is Maria.": two holders
    if (ex.value is not None and row["value"] is not None) or (
            named_value(ex.value, ex.value_text) and named_value(row["value"], row["value_text"])):
        # two readings ("The build took 42 s" / "… 50 s") are no rival values; two names
        # of one shape ("555-123-4567" / "555-987-6543", "1.2.3" / "1.2.4") are
        return not (observes(ex.text) and observes(row["text"]))
    if ex.kind != row["kind"]:
        return False
    if ex.kind == "decision":
        if bool(getattr(ex, "negated", False)) != bool(data_of(row).get("negated")):
            return True  # "Let's not go with the monorepo" refuses the choice it restates
        # two choices for one thing, unless one says no more than the other ("I'll keep
        # going!" restates "Let's keep going and reach success together!")
        new_choice, old_choice = terms(ex.text), terms(row["text"])
        return not (new_choice <= old_choice or old_choice <= new_choice
                    or _goes_on_alike(ex.subject, ex.text, row["subject"], row["text"]))
    if _DESCRIPTION.match(ex.text or "") and _DESCRIPTION.match(row["text"] or ""):
        return False  # two descriptions of one named thing (_DESCRIPTION)
    if evaluates(ex.text or "", ex.subject) or evaluates(row["text"] or "", row["subject"]):
        return False  # an impression is no value (这张照片太棒了 / 这张照片真漂亮)
    if _CJK.search(ex.text or "") and one_slot_swapped(ex.text, row["text"]):
        return True  # "会议室在五楼。" / "会议室在三楼。": bigrams make any claim long
    subject = terms(ex.subject) | terms(row["subject"])
    # an apology ("Apologies, I live in Hamburg") is no part of the claim
    new_claim = terms(without_apology(ex.text or "")) - subject
    old_claim = terms(without_apology(row["text"] or "")) - subject
    # a statement that claims nothing beyond its subject ("the billing deploys.")
    # holds no value to disagree with
    if not (0 < len(new_claim) <= _SHORT_CLAIM and 0 < len(old_claim) <= _SHORT_CLAIM):
        return False
    if new_claim == old_claim and _denials(ex.text) != _denials(row["text"]):
        return True  # "My wife is vegan." / "My wife isn't vegan.": the claim denied
    verb = predicate(ex.subject, ex.text)
    # "serves lunch until 2pm" / "… until 3pm": a number tells the two apart, so they
    # are rival values of one thing served, not two things
    many = verb in _MANY_VALUED and _DIGITS.findall(ex.text or "") == _DIGITS.findall(
        row["text"] or "")
    if verb != predicate(row["subject"], row["text"]) or many:
        return False
    # "… and pushing forward" / "… and looking ahead": two claims gone on to; "… and
    # living in Lisbon" / "… and living in Madrid": one claim, two values
    return verb not in _GOES_ON or _goes_on_to_rivals(ex.subject, ex.text, row["subject"],
                                                      row["text"])


_DENIAL = re.compile(r"\b(?:not|never)\b|n't\b", re.I)


def _denials(text: str | None) -> int:
    """The parity of a statement's English negation words (:func:`contradicts`)."""
    return len(_DENIAL.findall(text or "")) % 2


_GOES_ON = frozenset(("and", "or", "but", "so", "then", "plus"))
"""A subject followed by a conjunction ("I'm staying positive and pushing forward") is
a whole claim the speaker goes on from: what follows is another claim, no value, unless
both go on with the same verb (:func:`_continuation`)."""


def _goes_on_to_rivals(subject: str | None, text: str | None, other_subject: str | None,
                       other_text: str | None) -> bool:
    """Whether two statements go on from their subject with the same verb to another
    name or number ("… and living in Lisbon" / "… and living in Madrid", "… and deploy
    it on RDS" / "… on Fly"): two values of one claim. "… and making an impact" / "…
    and making a difference" name nothing: one claim said twice."""
    verb = _continuation(subject, text)
    return verb is not None and verb == _continuation(other_subject, other_text) \
        and _NAMED.findall(text or "")[1:] != _NAMED.findall(other_text or "")[1:]


_NAMED = re.compile(r"\b(?:(?-i:[A-Z])[\w.-]*|\d[\d.,:]*\w*)")
"""A name or a number (the first word of a sentence is capitalized whatever it is)."""


def _continuation(subject: str | None, text: str | None) -> str | None:
    """The verb (a light stem) after the conjunction that follows ``subject`` in
    ``text`` ("I'm working remotely and living in Lisbon" -> "liv"), or None."""
    if not subject or not text or _CJK.search(subject):
        return None
    at = _end_of(subject.split()[-1], text)
    if at is None:
        return None
    word, at = _next_word(text, at)
    if word not in _GOES_ON:
        return None
    word, _ = _next_word(text, at)
    return _VERB_ENDING.sub("", word) or None


def _goes_on_alike(subject: str | None, text: str | None, other_subject: str | None,
                   other_text: str | None) -> bool:
    """Two statements that say the same up to their subject and go on from it with a
    conjunction ("I'll keep pushing and working …" / "I'll keep pushing and make …"):
    one choice said twice, each going on to something else; not where both go on with
    the same verb ("… and deploy it on RDS" / "… and deploy it on Fly": two choices)."""
    if subject != other_subject or not subject or not text or not other_text:
        return False
    if predicate(subject, text) not in _GOES_ON \
            or predicate(other_subject, other_text) not in _GOES_ON:
        return False
    head = subject.split()[-1]
    at, other_at = _end_of(head, text), _end_of(head, other_text)
    return at is not None and other_at is not None \
        and terms(text[:at]) == terms(other_text[:other_at]) \
        and not _goes_on_to_rivals(subject, text, other_subject, other_text)


_MANY_VALUED = frozenset((
    "support", "speak", "offer", "includ", "contain", "integrat", "provid", "accept",
    "allow", "serv", "sell", "stock", "carry", "play", "know", "teach", "studi", "learn",
    "own", "collect", "visit", "attend", "host", "feature", "featur"))
"""Predicates (light stems, :func:`predicate`) that hold many values at once: "The app
supports English" and "The app supports French" add a language, not a rival value."""


_BE = frozenset(("is", "are", "was", "were", "be", "been", "being", "am", "'s", "'re", "'m"))
_VERB_ENDING = re.compile(r"(?<=\w\w)(?:es|s|ed|ing)$")
_AUXILIARY = frozenset((
    "will", "'ll", "do", "does", "did", "still", "also", "now", "currently", "usually",
    "always", "already", "just", "really", "actually", "definitely", "officially", "finally",
    "only", "even", "then", "sometimes", "often"))
"""The future's "will", the "do" of emphasis and adverbs, which may stand between a
subject and its verb ("The release will be on Monday", "The team still uses Linear"):
not the predicate. Other modals are ("The deploy should be automated", "can be" state
no value of "The deploy is manual")."""
_PROGRESSIVE = re.compile(r"\w{2,}(?<!th)ing")  # "using", "making"; not "thing", "nothing"
_ADVERB = re.compile(r"\w{3,}(?<!p)ly")  # "mostly", "currently"; not "apply", "supply"
_LINKING = re.compile(r"(?:become|became|remain|stay|seem|appear)(?:s|ed)?\b"
                      r"|(?:turn(?:s|ed)?\s+out|end(?:s|ed)?\s+up|prove[sd]?\s+to\s+be)\b",
                      re.I)
"""Verbs that link a subject to its value as "be" does ("The flaky test turned out to
be test_login", "The office stays in Berlin"); not the sensory ones ("looks
delicious"), which judge."""


def predicate(subject: str | None, text: str | None) -> str | None:
    """The word that follows an English statement's subject in its text, as a light
    stem with every form of "be" one word ("The office opens in March" -> "open", "The
    deadline was Friday" -> "be"; a subject keyed from "X of Y", "the owner of the
    billing service is …", is followed where Y ends), or None (no such word, a Chinese
    or Japanese statement): two claims after different predicates are about two
    attributes of the subject ("opens in March" / "has a rooftop garden"), not rival
    values. "Will", "do" and adverbs before the verb are passed over ("will be", "still
    uses": :data:`_AUXILIARY`), "be" before an -ing form is that verb ("is using" ->
    "us") and a linking verb reads as "be" ("turned out to be", "stays in":
    :data:`_LINKING`)."""
    if not subject or not text or _CJK.search(subject):
        return None
    words = subject.split()
    at = _end_of(words[-1], text)
    if at is not None and _next_word(text, at)[0] in _FOLDS and len(words) > 1:
        at = _end_of(words[-2], text)
    if at is None:
        return None
    word, at = _next_word(text, at)
    while word in _AUXILIARY or _ADVERB.fullmatch(word):
        word, at = _next_word(text, at)
    if not word:
        return None
    if word in _BE:
        verb, _ = _next_word(text, at)  # "is using Jira" uses; "is making noise" makes
        return _VERB_ENDING.sub("", verb) if _PROGRESSIVE.fullmatch(verb) else "be"
    if _LINKING.match(text, at - len(word)):
        return "be"
    return _VERB_ENDING.sub("", word)


_FOLDS = frozenset(("of", "for", "in"))
_NEXT_WORD = re.compile(r"(?:\s+|(?=['’]))(['’]?\w+)")


def _end_of(word: str, text: str) -> int | None:
    """Where the first whole-word ``word`` (or a longer form of it) ends in ``text``."""
    m = re.search(rf"(?<![\w']){re.escape(word)}\w*", text, re.I)
    return m.end() if m else None


def _next_word(text: str, at: int) -> tuple[str, int]:
    """The word right after ``at`` in ``text``, lowercased (a clitic, "'s", counts as
    one), and where it ends; ``""`` where none follows."""
    m = _NEXT_WORD.match(text, at)
    return (m.group(1).lower().replace("’", "'"), m.end()) if m else ("", at)


def evaluates(text: str, subject: str | None = None, *, asides: bool = False) -> bool:
    """Whether a statement judges or feels rather than states a value ("That photo is
    gorgeous!", "Glad I could help", 太棒了, 素敵ですね): two impressions of one thing
    never disagree (:data:`~memory_core.extraction.lexicon.EN_EVALUATIVE`).

    Given the statement's ``subject``, a judging word that names it judges nothing
    ("The hard deadline is Friday", "The happy path test is test_login", 好きな色は緑です:
    :func:`_naming`), and only the clauses that hold the subject are read, so an aside
    around a value judges nothing either ("Sorry, my manager is Lee now", "The backend
    is in Go now, which is great"); ``asides`` reads every clause ("I won the
    tournament - so exciting!") unless the subject's clause states what it is ("Our team
    lead is Farah, she's great": :data:`_STATES`)."""
    # a leading apology ("Sorry, I live in Hamburg") feels nothing about the statement
    text = _SENTENCE_START.sub(lambda m: m.group().lower(), without_apology(text))
    if subject:
        own = _subject_clause(text, subject)
        if not asides or (own != text and _STATES.search(own) is not None):
            text = own  # "Our team lead is Farah, she's great": a value, then a comment
    return any(_judging(clause, subject) for clause in _CLAUSE.split(text))


_STATES = re.compile(
    r"\b(?:is|are|was|were)\s+(?:now\s+|still\s+|actually\s+)?(?!(?:so|very|really|too"
    r"|quite|such|pretty|super|extremely|absolutely|truly|just|not)\b)[\w\u3040-\u9fff]"
    r"|是|は[^、。，]{1,24}(?:です|だ)", re.I)
"""A clause that states what its subject is ("our team lead is Farah", 负责人是小王):
read alone, with ``asides``, since the comments around it judge the value, not the
subject."""


def impression(text: str, subject: str | None, kind: str | None, *,
               asides: bool = False) -> bool:
    """Whether a statement of ``kind`` is an impression of its subject (:func:`evaluates`,
    ``asides`` as there) rather than a value of it. A preference never is: "We love
    using Jenkins" states a choice that "We no longer use Jenkins" revises."""
    return kind != "preference" and evaluates(text, subject, asides=asides)


_CLAUSE = re.compile(r"[,;:!?()\[\]…—–]+|\.(?:\s|$)|\s-\s|[，。；：！？、（）]")
"""Where a clause ends: an aside ("Sorry,"), a comment (", which is great") or the next
sentence."""


def _subject_clause(text: str, subject: str) -> str:
    """The clauses of ``text`` that hold ``subject`` (a CJK subject key as written,
    :func:`_cjk_written`; an English one by its head word), joined; ``text`` where
    none does."""
    if _CJK.search(subject):
        written = _cjk_written(subject)
        held = [c for c in _CLAUSE.split(text) if written.search(c)]
    else:  # by its head, the last word ("bad news launch": "the launch is now in June")
        words = subject.lower().split()
        head = re.compile(rf"(?<![\w']){re.escape(words[-1])}", re.I) if words else None
        held = [c for c in _CLAUSE.split(text) if head is not None and head.search(c)]
    return "\n".join(held) if held else text


def _cjk_written(subject: str) -> re.Pattern[str]:
    """A CJK subject key as its statement writes it: the key drops the 的 / の that link
    its nouns (他最喜欢颜色 from 他最喜欢的颜色) and spaces."""
    return re.compile("[的の之\\s]?".join(re.escape(c) for c in subject), re.I)


def _judging(clause: str, subject: str | None) -> bool:
    """Whether ``clause`` holds a judging word other than one that names the subject
    (:func:`_naming`)."""
    if subject and _CJK.search(subject):
        spans = [m.span() for m in _cjk_written(subject).finditer(clause)]
        return any(not _naming_cjk(clause, m, spans)
                   for pattern in (ZH_EVALUATIVE, JA_EVALUATIVE)
                   for m in pattern.finditer(clause)) or EN_EVALUATIVE.search(clause) is not None
    own = set(subject.lower().split()) if subject else set()
    return (any(not _naming(clause, m, own) for m in EN_EVALUATIVE.finditer(clause))
            or ZH_EVALUATIVE.search(clause) is not None
            or JA_EVALUATIVE.search(clause) is not None)


_DETERMINED = re.compile(r"\b(?:the|a|an|my|our|your|his|her|their|its|this|that|these|those)"
                         r"\s+(?:[\w-]+\s+){0,2}$", re.I)
_WORDS_AFTER = re.compile(r"[\s-]+([\w-]+)(?:\s+([\w-]+))?")


def _naming(clause: str, m: re.Match[str], own: set[str]) -> bool:
    """Whether the English judging word ``m`` qualifies a noun of the subject (words
    ``own``) after a determiner: "the hard deadline", "the happy path test", "our cool
    new framework" name a thing; "I'm lucky to have …", "Appreciate your kind words"
    judge."""
    word = m.group().split()[0].lower()
    if word not in own or _DETERMINED.search(clause, 0, m.start()) is None:
        return False
    after = _WORDS_AFTER.match(clause, m.end())
    return after is not None and any((w or "").lower() in own for w in after.groups())


def _naming_cjk(clause: str, m: re.Match[str], spans: list[tuple[int, int]]) -> bool:
    """Whether the Chinese or Japanese judging word ``m`` qualifies a noun inside the
    subject as written (``spans``): 他最喜欢的颜色, 好きな色, 楽しいイベント."""
    link = _CJK_ATTRIBUTE.match(clause, m.end())
    return link is not None and any(lo <= m.start() and link.end() < hi for lo, hi in spans)


_CJK_ATTRIBUTE = re.compile(r"[しい]*[的なの]|い(?=[\u30a0-\u30ff\u3400-\u9fff])")
"""What joins an adjective to the noun it qualifies (的, な, の, an adjective's い)."""


_SENTENCE_START = re.compile(r"(?:^|(?<=[.!?]\s)|(?<=[.!?]\s\s))[\s\"'“‘(\[*_-]*[A-Z](?=[a-z])")
"""A sentence's first capital ("Glad I could help"), lowered before the judging words
are read: a capital inside a sentence is a name's ("we live in Nice")."""


_RULE_WORDS = re.compile(r"(?<![a-z])(?:rules?|limits?|caps?|ceiling|requirements?|constraints?"
                         r"|restrictions?|instructions?|preferences?|polic(?:y|ies)"
                         r"|conventions?|guidelines?|settings?|ban|request|thing|part"
                         r"|old|earlier|previous|last|original|above)(?![a-z])"
                         r"|限制|规则|規則|要求|规定|規定|约束|上限|偏好|制限|ルール|指定|条件"
                         r"|縛り|設定|お願い|指示|之前|以前|刚才|说的|さっき|前に|言った"
                         r"|这个|那个|这条|那条|这些|那些|这项|那项", re.I)
"""Words that point back at an instruction (``extraction.retraction.RULE_NOUNS``) and
at having said it ("my old rule", 之前说的, 这个): not what the withdrawn item was about."""
_VALUE_WORD = re.compile(r"(\d)[-‐]([^\W\d_])")
_NUMBER_RUN = re.compile(r"\d+(?:[.,]\d+)?")
_RETRACT_COVER = 0.6
"""Least share of the withdrawn phrase's content that the item must hold."""


_CONTENT_CJK = re.compile(r"[\u30a0-\u30ff\u3400-\u9fff]")
"""Kanji, hanzi and katakana: hiragana are particles and endings, not content."""


_ENDINGS = frozenset(("s", "es", "d", "ed", "ing", "er", "ers"))


def _inflects(short: str, long: str) -> bool:
    """Whether ``long`` is ``short`` with an inflection ("emojis", "formatting"), not
    another word that starts alike ("linear" for "line", "portal" for "port")."""
    if not long.startswith(short):
        return False
    rest = long[len(short):]
    return rest in _ENDINGS or (rest[:1] == short[-1:] and rest[1:] in _ENDINGS)


def _has_term(term: str, have: frozenset[str]) -> bool:
    """Whether ``have`` holds ``term`` or a form of it the light stemmer leaves apart
    ("emoji"/"emojis", "format"/"formatting")."""
    if term in have or term + term[-1:] in have:  # "adding" stems to "ad", "add" stays
        return True
    return len(term) >= 4 and any(
        len(h) >= 4 and (_inflects(term, h) or _inflects(h, term)) for h in have)


def _cjk_chars(text: str) -> set[str]:
    return set(_CONTENT_CJK.findall(text))


_CJK_RUN = re.compile(r"[\u30a0-\u30ff\u3400-\u9fff]{2,}")


def _cjk_pairs(text: str) -> set[str]:
    """Adjacent content characters (表情, 敬語): a word, where the characters alone are
    a bag (加, 表, 情 are all in 加上表格和情况)."""
    return {run[i:i + 2] for run in _CJK_RUN.findall(text) for i in range(len(run) - 1)}


def retraction_target(items: ItemReads, scope: Scope, ex: Any, *,
                      speaker: str = "") -> Any:
    """The active item a withdrawal ``ex`` names (``ex.replaces``: "the 200-word
    limit", "British English", 200字的限制), or None.

    Candidates are the speaker's active constraints, preferences and decisions in the
    tenant and role (facts too when the user names it as something they said:
    ``ex.said``, "what I said about …"). The phrase's
    content — its words (stemmed, :func:`~memory_core.items.overlap.terms`) or its CJK
    characters, less the words that only point back ("limit", "rule", 限制) — must be
    at least ``_RETRACT_COVER`` in the item's text, with one pair of adjacent CJK
    characters if the phrase has any (表情 for 加表情), and a number the phrase names
    must be in it ("the 300-word limit" withdraws no 200-word one). A phrase with no
    content but the pointing words names nothing. Best first: more of the phrase
    covered, then the newest."""
    best = max(_retraction_matches(items, scope, ex, speaker), key=lambda m: m[0],
               default=None)
    return None if best is None else best[1]


def retraction_targets(items: ItemReads, scope: Scope, ex: Any, *,
                       speaker: str = "") -> list[Any]:
    """Every active item a withdrawal of all about something names ("Forget everything
    about tennis", ``ex.every``): the rows :func:`retraction_target` would choose among,
    oldest first (at most ``CORRECTION_SCAN`` of the speaker's newest are read)."""
    return sorted((row for _, row in _retraction_matches(items, scope, ex, speaker)),
                  key=lambda row: int(row["id"]))


def _retraction_matches(items: ItemReads, scope: Scope, ex: Any,
                        speaker: str) -> Iterator[tuple[tuple[float, int], Any]]:
    """(score, row) of each candidate a withdrawal names (:func:`retraction_target`)."""
    phrase = _VALUE_WORD.sub(r"\1 \2", getattr(ex, "replaces", None) or "")
    bare = _RULE_WORDS.sub(" ", phrase)
    numbers = set(_NUMBER_RUN.findall(bare))
    want = frozenset(t for t in terms(bare) if not _CJK.search(t))  # CJK: by character
    chars, pairs = _cjk_chars(bare), _cjk_pairs(bare)
    if not want and not chars:
        return
    kinds: tuple[str, ...] = ("constraint", "preference", "decision") + (
        ("fact",) if getattr(ex, "said", False) else ())
    if chars and not getattr(ex, "said", False) and not RULE_NOUNS.search(phrase):
        kinds = ("constraint",)  # 要約はもう不要です, 不用再加表情了: what a rule asked for
    for row in items.correction_candidates(scope.tenant, scope.role, kinds, speaker, None,
                                           None, CORRECTION_SCAN):
        text = row["text"] or ""
        if numbers and not numbers <= set(_NUMBER_RUN.findall(text)):
            continue
        if pairs and not pairs & _cjk_pairs(text):
            continue  # 不用再加表情了 names no 以后回答都加上表格
        have = terms(_VALUE_WORD.sub(r"\1 \2", text))
        if chars and not want:
            cover = len(chars & _cjk_chars(text)) / len(chars)
            if len(chars) < 2 and not numbers:
                continue  # one character names nothing on its own
        else:
            cover = sum(_has_term(t, have) for t in want) / len(want)
            if chars:
                cover = (cover + len(chars & _cjk_chars(text)) / len(chars)) / 2
        if cover < _RETRACT_COVER:
            continue
        yield (cover, int(row["id"])), row
