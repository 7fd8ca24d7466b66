"""What a change or a cessation names, and whether it can revise a given stored item.

A change told of a named thing ("We moved the printer to the kitchen", 我们把打印机搬到
厨房了, プリンターをキッチンに移しました) or a cessation ("The nightly job no longer
uploads artifacts to Nexus", "I don't drink coffee anymore", 我不再喝咖啡了,
ヨガ教室にはもう行っていません) revises the state of what it names and nothing else.
Said after a statement of the same category ("Our office is on the 4th floor", "Nightly
builds run at 2 AM UTC", 週に3回ジムに通っています) it embeds close to it, so the vector
half of supersession (:func:`memory_core.items.writer.revise_by_meaning`) would pair
them; the words say otherwise: the item revised must hold a content term
(:func:`memory_core.items.overlap.terms`) of what the change names ("We no longer use
Material UI" revises "Our design system is Material UI"). A change that names no thing
of its own ("I moved to Fedora", "we migrated to Next 15", 搬到成都了) is not read here.
What follows the change ("…, only to S3", "; everything is on Chakra") is its new
value, not what it names.
"""

from __future__ import annotations

import re
from typing import Final

from memory_core.items.overlap import terms

_EN_CLAUSE: Final = r"[^,;:.!?()\u2014\u2013]"
_EN_NAMED: Final = (
    re.compile(rf"\bno\s+longer\s+(?P<what>{_EN_CLAUSE}+)", re.I),
    re.compile(r"\b(?:don'?t|doesn'?t|do\s+not|does\s+not|didn'?t|aren'?t|isn'?t|'m\s+not"
               rf"|am\s+not)\s+(?P<what>{_EN_CLAUSE}+?)\s+any\s?(?:more|longer)\b", re.I),
    re.compile(rf"\b(?:stopped|quit)\s+(?P<what>\w+ing\b{_EN_CLAUSE}*)", re.I),
    re.compile(r"\b(?:moved|changed|switched|migrated|swapped|renamed|relocated|replaced)\s+"
               r"(?P<what>(?:the|our|my|his|her|their|its|this|that)\s+"
               rf"{_EN_CLAUSE}+?)\s+(?:to|from|into|onto|over|with|for|in|out|off)\b", re.I),
)
""""no longer X", "don't X anymore", "stopped X-ing", "moved the X to …": X."""
_ZH_NAMED: Final = (
    re.compile(r"(?:不再|再也不|已经不|已經不|没再|沒再)(?P<what>[^，,。！!？?；;]+)"),
    re.compile(r"把(?P<what>[^，,。！!？?；;把]{1,16}?)(?:搬|移|挪|改|换|調|调|迁|遷)"),
)
"""不再X (no longer X), 把X搬到/改成… (moved/changed X)."""
_JA_NAMED: Final = (
    re.compile(r"(?P<what>[^、，,。！!？?]*もう[^、，,。！!？?]*?)"
               r"(?:ていません|でいません|ていない|でいない|しません|ません|なくなり|ない)"),
    re.compile(r"(?P<what>[^、，,。！!？?]+?)(?:を|は)(?:やめ|止め)(?:ました|た)"),
    re.compile(r"(?P<what>[^、，,。！!？?をは]{1,16})を[^、，,。！!？?]{0,16}?"
               r"(?:移しました|移動しました|変更しました|変えました|替えました)"),
)
"""…もう…ません (no longer), …をやめました (gave up), XをYに移しました (moved X)."""
_JA_MOU: Final = re.compile(r"もう")


def named(text: str) -> str | None:
    """What the change or cessation ``text`` tells of names, as written ("uploads
    artifacts to Nexus" of "The nightly job no longer uploads artifacts to Nexus, only
    to S3."; "the printer" of "We moved the printer to the kitchen"), or ``None`` when
    it tells of none. The first form found counts."""
    for pattern in (*_EN_NAMED, *_ZH_NAMED, *_JA_NAMED):
        m = pattern.search(text)
        if m:
            return _JA_MOU.sub(" ", m.group("what")).strip()
    return None


def ends_another(new_text: str, old_text: str) -> bool:
    """Whether ``new_text`` tells of a change or cessation of a thing (:func:`named`)
    that ``old_text`` never names: no content term of it occurs in ``old_text``, a
    hyphen read as spelling ("stand-up" / "standup") and one stem the start of the
    other read as one word ("smok" of "quit smoking" / "smoke" of "I smoke a pack a
    day"). ``False`` when ``new_text`` names none, or what it names has no content
    terms ("I don't anymore")."""
    what = named(new_text)
    if what is None:
        return False
    thing, said = terms(what.replace("-", "")), terms(old_text.replace("-", ""))
    return bool(thing) and not any(_one_word(t, o) for t in thing for o in said)


_STEM_PREFIX: Final = 4
"""The shortest stem read as the start of a longer one (:func:`_one_word`): "smok" /
"smoke"; "run" / "runtime" stay apart."""


def _one_word(a: str, b: str) -> bool:
    """Whether two content terms are one word: equal, or the shorter, of
    :data:`_STEM_PREFIX` characters or more, starts the longer (stemmers cut "smoking"
    and "smoke" apart)."""
    short, long_ = sorted((a, b), key=len)
    return short == long_ or (len(short) >= _STEM_PREFIX and long_.startswith(short))
