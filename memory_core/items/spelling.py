"""British and American spellings of one word, folded where subject keys are compared.

"My favourite colour is blue" and "My favorite color is green now" key ``colour`` and
``color``: one attribute, two spellings. The keys are stored as the user wrote them
(no migration: an item stored before this fold compares the same way as one stored
after it); :func:`fold` maps each word of a key to one spelling when two keys are
compared, and :func:`variants` lists the spellings a stored key may hold, for the
writer's index lookup (``memory_item_subject_keys`` holds the words as written).

What folds, word by word (lowercase keys; other words are left as they are):

* ``-our`` → ``-or`` for a closed list of stems (colour, flavour, behaviour, favourite,
  neighbour, honour …): a rule on every ``-our`` would fold "four", "hour", "tour";
* ``-re`` → ``-er`` for a closed list of stems (centre, metre, litre, theatre, fibre …),
  "centred" → "centered";
* ``-ise``/``-isation``/``-yse`` → ``-ize``/``-ization``/``-yze`` after a stem of at least
  four letters (organise, prioritise, analyse; not rise, wise, noise, prise);
* a doubled ``l`` before -ed/-ing/-er for a closed list of verbs (travelled, cancelled,
  modelling, labelled; not filled, called);
* a small table of words (grey, programme, catalogue, dialogue, defence, licence,
  aluminium, jewellery, ageing, mould, sceptical, paediatric, pyjamas …).

Words whose two spellings are also two words ("cheque"/"check", "tyre"/"tire",
"draught"/"draft", "storey"/"story") are left apart.
"""

from __future__ import annotations

import functools
import itertools
import re
from typing import Final

_OUR_END: Final = r"(s|ed|ing|ite|ites|able|ably|ful|less|ist|ists|ism|er|ers|hood|ly|y)?$"
_OUR: Final = re.compile(
    r"^((?:colo|flavo|behavio|neighbo|humo|hono|favo|labo|harbo|rumo|vapo|armo|savo|odo"
    r"|endeavo|valo|vigo|parlo|splendo|clamo|tumo|fervo|rigo|glamo|savio))ur" + _OUR_END)
_OR: Final = re.compile(
    r"^(colo|flavo|behavio|neighbo|humo|hono|favo|labo|harbo|rumo|vapo|armo|savo|odo"
    r"|endeavo|valo|vigo|parlo|splendo|clamo|tumo|fervo|rigo|glamo|savio)r" + _OUR_END)
_RE_STEMS: Final = r"(?:(?:kilo|milli|centi)?met|cent|lit|theat|fib|calib|somb|spect|lust|meag|sab)"
_RE: Final = re.compile(r"^(" + _RE_STEMS + r")re(s|d)?$")
_ER: Final = re.compile(r"^(" + _RE_STEMS + r")er(s|ed)?$")
_ISE: Final = re.compile(r"^([a-z]{4,}[^y\W])is(e|es|ed|ing|er|ers|ation|ations|able)$")
_IZE: Final = re.compile(r"^([a-z]{4,}[^y\W])iz(e|es|ed|ing|er|ers|ation|ations|able)$")
_YSE: Final = re.compile(r"^([a-z]{3,})ys(e|es|ed|ing|er|ers)$")
_YZE: Final = re.compile(r"^([a-z]{3,})yz(e|es|ed|ing|er|ers)$")
_LL_STEMS: Final = (r"(?:travel|cancel|model|label|level|fuel|signal|total|dial|channel|tunnel"
                    r"|marvel|jewel|counsel|quarrel|pedal|panel|enrol|fulfil)")
_LL: Final = re.compile(r"^(" + _LL_STEMS + r")l(ed|ing|er|ers)$")
_L: Final = re.compile(r"^(" + _LL_STEMS + r")(ed|ing|er|ers)$")
_WORDS: Final = {
    "grey": "gray", "programme": "program", "catalogue": "catalog", "dialogue": "dialog",
    "analogue": "analog", "prologue": "prolog", "monologue": "monolog", "defence": "defense",
    "licence": "license", "offence": "offense", "pretence": "pretense",
    "aluminium": "aluminum", "jewellery": "jewelry", "ageing": "aging", "mould": "mold",
    "plough": "plow", "pyjamas": "pajamas", "sceptical": "skeptical", "sceptic": "skeptic",
    "enrolment": "enrollment", "fulfilment": "fulfillment", "practise": "practice",
    "manoeuvre": "maneuver", "paediatric": "pediatric", "paediatrician": "pediatrician",
    "encyclopaedia": "encyclopedia", "orthopaedic": "orthopedic", "doughnut": "donut",
    "moustache": "mustache", "judgement": "judgment", "acknowledgement": "acknowledgment",
}
_BRITISH: Final = {v: k for k, v in _WORDS.items()}


@functools.lru_cache(maxsize=4096)
def fold_word(word: str) -> str:
    """One spelling (the American) of a lowercase word; the word itself when it has no
    other (module doc lists what folds)."""
    plural = word[:-1] if word.endswith("s") and word[:-1] in _WORDS else None
    if plural is not None:
        return _WORDS[plural] + "s"
    if word in _WORDS:
        return _WORDS[word]
    m = _OUR.match(word)
    if m:
        return f"{m.group(1)}r{m.group(2) or ''}"
    m = _RE.match(word)
    if m:
        return f"{m.group(1)}er{'ed' if m.group(2) == 'd' else m.group(2) or ''}"
    m = _ISE.match(word)
    if m:
        return f"{m.group(1)}iz{m.group(2)}"
    m = _YSE.match(word)
    if m:
        return f"{m.group(1)}yz{m.group(2)}"
    m = _LL.match(word)
    if m:
        return f"{m.group(1)}{m.group(2)}"
    return word


def _british(word: str) -> str:
    """The other spelling of a folded word (the inverse of :func:`fold_word`)."""
    plural = word[:-1] if word.endswith("s") and word[:-1] in _BRITISH else None
    if plural is not None:
        return _BRITISH[plural] + "s"
    if word in _BRITISH:
        return _BRITISH[word]
    m = _OR.match(word)
    if m:
        return f"{m.group(1)}ur{m.group(2) or ''}"
    m = _ER.match(word)
    if m:
        return f"{m.group(1)}re{'d' if m.group(2) == 'ed' else m.group(2) or ''}"
    m = _IZE.match(word)
    if m:
        return f"{m.group(1)}is{m.group(2)}"
    m = _YZE.match(word)
    if m:
        return f"{m.group(1)}ys{m.group(2)}"
    m = _L.match(word)
    if m:
        return f"{m.group(1)}l{m.group(2)}"
    return word


@functools.lru_cache(maxsize=4096)
def fold(subject: str) -> str:
    """``subject`` (a stored key: lowercase words joined by spaces) with each word in
    one spelling; the same string when no word has two."""
    return " ".join(fold_word(w) for w in subject.split(" "))


_VARIANTS_MAX: Final = 8


def variants(subject: str) -> list[str]:
    """The spellings of ``subject`` a stored key may hold (itself first; at most
    ``_VARIANTS_MAX``): each word as written, folded, or in the other spelling."""
    words = subject.split(" ")
    options = []
    for w in words:
        f = fold_word(w)
        options.append(list(dict.fromkeys((w, f, _british(f)))))
    return [" ".join(p) for p in itertools.islice(itertools.product(*options), _VARIANTS_MAX)]
