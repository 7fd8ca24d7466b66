"""A statement of the speaker's that names its object only by a pronoun pointing back
("I love it.", "I hate that.", "Now I don't need it anymore.", "I use it every day.").

What "it" stands for was said before — in the sentence before, in the assistant's reply,
or in a picture — and is no part of the statement: kept as a memory of its own the
item says nothing another conversation could use ("I hate it." keyed by nothing, "I
use it every day." keyed ``day``, "I don't need it anymore." keyed ``don't need``).
:func:`points_back` tells such a clause; the pipeline keeps its item to the
conversation it was said in (``local``), where the words before it give it sense.

English only: the speaker ("I", "we"), then auxiliaries, negations and adverbs of time
or degree (:data:`_FUNCTION`), one verb, and a pronoun (:data:`_POINTER`). A noun after
the pronoun ("I love that song") names the thing: no pointer alone.
"""

from __future__ import annotations

import re
from typing import Final

_WORD: Final = re.compile(r"[a-z]+(?:'[a-z]+)?|'[a-z]+", re.I)
_POINTER: Final = frozenset(("it", "that", "this", "them", "those", "these"))
_FUNCTION: Final = frozenset((
    "now", "so", "and", "but", "well", "oh", "honestly", "actually", "really", "just",
    "still", "also", "too", "either", "again", "already", "yet", "always", "usually",
    "sometimes", "often", "never", "not", "no", "longer", "anymore", "any", "more",
    "do", "don't", "does", "did", "didn't", "am", "'m", "are", "'re", "is", "was",
    "were", "have", "'ve", "has", "had", "can", "can't", "cannot", "will", "won't",
    "would", "'d", "'ll", "could", "every", "day", "week", "much", "very", "a",
    "lot", "all", "the", "time", "here", "there", "today", "yesterday", "totally",
    "absolutely", "kind", "of", "kinda", "quite", "pretty", "even", "ever", "both"))
"""Words that name nothing the statement is about: auxiliaries, negations, adverbs of
time, frequency and degree."""


def points_back(core: str) -> bool:
    """Whether ``core`` (an English clause) is the speaker's statement whose object is
    only a pronoun pointing back (module doc)."""
    words = [w.lower() for w in _WORD.findall(core)]
    if len(words) < 3 or words[0] not in ("i", "we") and not (
            words[0] in _FUNCTION and len(words) > 3 and words[1] in ("i", "we")):
        return False
    rest = words[words.index("i") + 1 if "i" in words[:2] else words.index("we") + 1:]
    pointers = [w for w in rest if w in _POINTER]
    content = [w for w in rest if w not in _FUNCTION and w not in _POINTER]
    return bool(pointers) and len(content) == 1 and rest.index(content[0]) < rest.index(
        pointers[0])
