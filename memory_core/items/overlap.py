"""Content terms of a statement, and how much two statements share (EN + CJK, no model).

The writer links a correction to the item it corrects, and a progress line to the TODO
it closes, by the words they share — wording differs from one mention to the next
("The API gateway timeout for long-polling clients is 280 s" / "make that 150 s for
long-polling clients at the gateway"), so exact subjects are not enough.

``terms`` keeps content words only:

- English: lowercase word tokens split at hyphens; function words, hedges, correction
  cues ("actually", "correction", "wrong") and light verbs (be, have, make, use…)
  dropped; values dropped (tokens that start with a digit, or hold a digit and a
  hyphen or dot: "30s", "v1.2", "eu-west-1"; names like "p99" or "ec2" stay); a light
  stemmer folds plurals and -ing/-ed ("clients" = "client", "switched" = "switch");
  a set of pronouns ("she/her") is one term.
- Chinese and Japanese: character bigrams of each run of content characters, where
  Japanese hiragana (particles, endings, auxiliaries: を, は, しました) and Chinese
  function characters (的, 了, 是, 已经…; not 在, part of 在线) end a run; a one-character
  run is kept whole.
  So "导出旧集群的配置" and "旧集群的配置已经导出" share 导出/旧集/集群/配置.

``overlap`` is the shared share of the smaller set (1.0 when one side's terms are all in
the other): a short correction is not penalised for the long sentence it corrects.
"""

from __future__ import annotations

import difflib
import re
from functools import lru_cache

from memory_core.extraction import lexicon as lx
from memory_core.extraction import lexicon_cjk as lc
from memory_core.extraction.apology import APOLOGY

_LATIN = "a-z0-9\u00df-\u00f6\u00f8-\u00ff\u0100-\u024f"
_EN_TOKEN = re.compile(rf"[{_LATIN}][{_LATIN}_.'-]*[{_LATIN}]|[{_LATIN}]")
"""A word of a Latin script, its letters with diacritics included ("tomás", "müller"):
an accented letter never splits a name into a shorter one ("Tomás" is no "Tom")."""
_CJK_RUN = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u30a0-\u30ff\uff66-\uff9f]+")
_ZH_FUNCTION = re.compile(r"已经|已經|正在|还是|還是|已|的|了|着|著|过|過|是|把|被|将|將|和"
                          r"|与|與|及|也|都|就|还|還|吗|嗎|呢|吧|啊|个|個|这|這|那|给|給|再|又"
                          r"|很|并|並")
_VALUE = re.compile(r"^\d|\d.*[-.]|[-.].*\d")
_EN_STOP = frozenset("""
    a an the this that these those it its it's they them their there here we our us you your i
    me my he she his her him one ones some any each every all no not nor none and or but so
    yet if then than as of for in on at to from by with without into onto about over under
    via per between across after before during while when whenever once until unless since
    because though although whether what which who whom whose where why how
    is are was were be been being am isn't aren't wasn't weren't do does did done don't
    doesn't didn't have has had having will would shall should can could may might must
    won't wouldn't can't cannot shouldn't 's 're 'm 've 'd 'll
    get gets got make makes made use uses used using set go goes going went let let's
    also just still now then really actually correction correct corrected sorry oops meant
    mean wrong again update updated instead rather please ok okay yes yeah well note
    said say says told tell previous previously before earlier i've i'm i'd i'll we're
    we've we'll we'd you're that's there's it'll very quite about around approximately
    roughly exactly currently current already always never often usually sometimes
""".split())
_EN_SUFFIXES = (("ies", "y"), ("ied", "y"), ("sses", "ss"), ("ing", ""), ("ed", ""), ("s", ""))
_DOUBLED = re.compile(r"([b-df-hj-km-np-rtv-y])\1$")


def _stem(word: str) -> str:
    """A light English stemmer: plural and -ing/-ed endings folded."""
    if word.endswith("'s"):
        word = word[:-2]
    for suffix, repl in _EN_SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            if suffix == "s" and word.endswith(("ss", "us", "is")):
                return word
            word = word[: len(word) - len(suffix)] + repl
            if suffix in ("ing", "ed"):
                word = _DOUBLED.sub(r"\1", word)
            return word
    return word


def _cjk_terms(text: str) -> set[str]:
    out: set[str] = set()
    for run in _CJK_RUN.findall(_ZH_FUNCTION.sub(" ", text)):
        if len(run) == 1:
            out.add(run)
        out.update(run[i:i + 2] for i in range(len(run) - 1))
    return out


@lru_cache(maxsize=8192)
def terms(text: str | None) -> frozenset[str]:
    """Content terms of ``text`` (see module doc); empty for ``None`` or no content."""
    if not text:
        return frozenset()
    low = text.lower()
    # _CJK_RUN starts at U+30A0: a text without such a character has no CJK terms.
    out = set() if low.isascii() or max(low) < "\u30a0" else _cjk_terms(low)
    memo = _TOKEN_TERMS
    for tok in _EN_TOKEN.findall(low):
        stems = memo.get(tok)
        if stems is None:
            if len(memo) >= _TOKEN_TERMS_MAX:
                memo.clear()
            stems = memo[tok] = _token_terms(tok)
        out.update(stems)  # in order: the set is built as the loop over parts built it
    if "/" in low:  # "she/her", "they/them": a value made of function words
        out.update(_PRONOUN_SET.findall(low))
    out.update(named_words(text))
    return frozenset(out)


_NAMED_WORD = re.compile(r"(?<=[a-z0-9,] )[A-Z][a-z]{0,3}(?![\w'.-]*\w)")
"""A short capitalised word mid-sentence, after a lower-case word ("for Go", "in R")."""
_SELF = frozenset(("i", "i'm", "i've", "i'd", "i'll"))


@lru_cache(maxsize=8192)
def named_words(text: str | None) -> frozenset[str]:
    """The names in ``text`` spelled as a function word or one letter (lower case):
    capitalised mid-sentence ("I now use VS Code for Go.", "scripts in R", "written
    in C"), a technology's name, not "go", "r" or "c" the word, which :func:`terms`
    would drop; never the pronoun "I"."""
    if not text or text.isascii() and not any(c.isupper() for c in text[1:]):
        return frozenset()
    return frozenset(w for m in _NAMED_WORD.finditer(text)
                     if ((w := m.group().lower()) in _EN_STOP or len(w) == 1)
                     and w not in _SELF)


_PRONOUN = r"(?:he|him|his|she|her|hers|they|them|theirs|xe|xem|ze|zir|hir|fae|faer|it|its|any)"
_PRONOUN_SET = re.compile(r"(?<![\w/])" + _PRONOUN + r"(?:/" + _PRONOUN + r")+(?![\w/])")
"""A set of pronouns ("she/her", "they/them"), kept whole as one term: its words are
function words, so two statements of pronouns would otherwise share every term and
one would pass for a restatement of the other."""


_TOKEN_TERMS: dict[str, tuple[str, ...]] = {}
_TOKEN_TERMS_MAX = 50_000
"""Distinct word tokens whose terms :func:`terms` keeps (dropped whole past this): a
token's terms cost about 4 µs (the value test's regex, the stemmer), and statements
reuse a small vocabulary."""


def _token_terms(tok: str) -> tuple[str, ...]:
    """The terms one English word token contributes, in order (none for a function
    word or a value)."""
    if tok in _EN_STOP or _VALUE.search(tok):
        return ()
    out = []
    for part in tok.split("-"):
        part = part.strip("'._")
        if len(part) > 1 and part not in _EN_STOP and not part[0].isdigit():
            out.append(_stem(part))
    return tuple(out)


def overlap(a: frozenset[str], b: frozenset[str]) -> float:
    """Shared terms over the size of the smaller set (0.0 when either is empty)."""
    if not a or not b:
        return 0.0
    return len(a & b) / min(len(a), len(b))


def covered(part: frozenset[str], whole: frozenset[str]) -> float:
    """Share of ``part`` found in ``whole`` (1.0 for an empty ``part``)."""
    return len(part & whole) / len(part) if part else 1.0


_OPENERS = (APOLOGY, lx.EN_FILLER.pattern, lc.ZH_FILLER, lc.JA_FILLER, lx.META_LABEL)
"""What a statement may open with that says nothing about its subject: the extraction's
fillers ("Just so you know,", "提醒一下", "念のため、"), meta labels ("Reminder:") and
apologies ("I'm sorry,", 抱歉，: :mod:`~memory_core.extraction.apology`)."""


def without_opener(text: str | None) -> str | None:
    """``text`` without the discourse openers it starts with ("念のため、佐藤さんが私の
    上司です。" → "佐藤さんが私の上司です。"): their words are no part of what it says,
    and a restatement that opens with one ("念", a kanji, is a content term) would
    otherwise hold a term the first statement lacks."""
    if not text:
        return text
    rest = text.lstrip()
    for _ in range(3):
        cut = next((m.end() for p in _OPENERS if (m := p.match(rest)) and m.end() > 0), 0)
        if not cut or not rest[cut:].strip():
            break
        rest = rest[cut:].lstrip()
    return rest


_EDGE = " \t\n.,;:!?。，、；：！？"


def one_slot_swapped(a: str | None, b: str | None) -> bool:
    """Whether two statements, their openers left out (:func:`without_opener`), are the
    same text but for one stretch replaced ("The tea is green" / "The tea is black",
    "会议室在三楼。" / "会议室在五楼。", "言語はドイツ語です" / "…フランス語です"): one
    slot given another value. Content terms miss it in CJK text, where one word swapped
    changes two or more character bigrams."""
    x = (without_opener(a) or "").strip(_EDGE).lower()
    y = (without_opener(b) or "").strip(_EDGE).lower()
    if not x or not y or x == y:
        return False
    edits = [op for op in difflib.SequenceMatcher(None, x, y, autojunk=False).get_opcodes()
             if op[0] != "equal"]
    return len(edits) == 1 and edits[0][0] == "replace"


_RELATION = re.compile(r"\b(?:rather than|instead of|over|than|before|after|to)\b"
                       r"|而不是|而非|胜过|勝過|多于|多於|优先于|比|よりも|より", re.I)
"""Words that relate two things one way round ("tabs over spaces", "Postgres than
MySQL", "reports to Bob", "猫而不是狗", "犬より猫"): what stands on either side of them
is not interchangeable, unlike the two sides of "is" ("Dana is my manager")."""
_CJK_CHAR = re.compile(r"[\u3400-\u9fff\uf900-\ufaff\u30a0-\u30ff\uff66-\uff9f]")


def _units(text: str) -> frozenset[str]:
    """Content terms of ``text`` plus its single CJK characters (one noun swapped in
    Chinese changes bigrams, not characters: 猫 / 狗)."""
    return terms(text) | frozenset(_CJK_CHAR.findall(text.lower()))


def sides_swapped(a: str | None, b: str | None) -> bool:
    """Whether two statements put the same things on opposite sides of the same
    one-way relation word (:data:`_RELATION`, its first occurrence in each): "I prefer
    tabs over spaces." / "I prefer spaces over tabs.", "Alice reports to Bob." / "Bob
    reports to Alice.", "我更喜欢猫而不是狗。" / "我更喜欢狗而不是猫。". Their content terms
    are equal, so a comparison of terms alone takes them for one statement reworded;
    they say opposite things. True when what only ``a``'s right side names stands on
    ``b``'s left side alone, and what only ``b``'s right side names on ``a``'s left."""
    if not a or not b:
        return False
    m = _RELATION.search(a)
    if m is None:
        return False
    word = re.escape(m.group(0))
    n = re.search(rf"\b{word}\b" if m.group(0).isascii() else word, b, re.I)
    if n is None:
        return False
    left_a, right_a = _units(a[:m.start()]), _units(a[m.end():])
    left_b, right_b = _units(b[:n.start()]), _units(b[n.end():])
    only_a, only_b = right_a - right_b, right_b - right_a
    return bool(only_a and only_b and only_a & (left_b - left_a)
                and only_b & (left_a - left_b))
