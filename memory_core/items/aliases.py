"""Two names of one thing, folded where subject keys are compared.

"Our CI runs on Jenkins." keys ``ci``; "Continuous integration now runs on GitHub
Actions." keys ``continuous integration``: one attribute, named two ways, so the update
would pair with nothing. :func:`fold_aliases` maps each name of a small closed table
(an abbreviation and its words, a family word and its familiar form, a Chinese or
Japanese noun and its Latin abbreviation) to one form when two keys are compared; the
keys are stored as the user wrote them. The table holds names that mean the same in
every use; a name with two senses (PR: pull request or public relations) is left out,
and so is a character that is a part of other words (母 of 母语, 父 of 父母).
"""

from __future__ import annotations

import functools
import re
from typing import Final

__all__ = ["fold_aliases"]

_ALIASES: Final = {
    "ci": ("continuous integration",),
    "cd": ("continuous delivery", "continuous deployment"),
    "db": ("database", "databases", "数据库", "資料庫", "データベース", "ＤＢ"),
    "k8s": ("kubernetes",),
    "js": ("javascript",),
    "ts": ("typescript",),
    "repo": ("repository",),
    "mom": ("mother", "mum", "mommy", "mummy", "妈妈", "母亲", "母親", "お母さん"),
    "dad": ("father", "daddy", "爸爸", "父亲", "父親", "お父さん"),
    "grandma": ("grandmother", "granny", "奶奶", "外婆", "祖母"),
    "grandpa": ("grandfather", "爷爷", "外公", "祖父"),
}
"""Each thing's one form, and its other names (lower case)."""

_LATIN_WORD: Final = re.compile(r"[a-z0-9]")
_PATTERN: Final = re.compile("|".join(
    (rf"(?<![\w-]){re.escape(alias)}(?![\w-])" if _LATIN_WORD.match(alias)
     else re.escape(alias))
    for alias in sorted((a for names in _ALIASES.values() for a in names),
                        key=len, reverse=True)))
_FORM: Final = {alias: form for form, names in _ALIASES.items() for alias in names}


_KEY_MAX: Final = 200
"""Characters of a key read at most: a subject key is a few words; a longer string
(a pasted document, an image's data URL) is returned as it is, unread."""


@functools.lru_cache(maxsize=4096)
def fold_aliases(subject: str) -> str:
    """``subject`` (a stored key, lower case) with each other name of a thing in the
    table replaced by its one form ("continuous integration" → "ci", "mother lives" →
    "mom lives", 数据库用的 → "db用的"); the same string when it holds none or is
    longer than :data:`_KEY_MAX`."""
    if len(subject) > _KEY_MAX:
        return subject
    return _PATTERN.sub(lambda m: _FORM[m.group()], subject)
