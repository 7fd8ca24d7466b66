"""What a redacted message's copies become: pure text work, no I/O.

:class:`Scrubber` finds a redacted message's text in other strings (exact copies,
and pieces of it: a quoted snippet, a summary line, an item's wording);
:func:`redacted_raw` is the raw message kept in its place; :func:`mask_messages`
puts that in place of the messages a later forwarded body still carries (the
client resends its history as it was). :mod:`memory_core.store.redaction` does the
SQL; ``memory_core.capture.forwarded`` masks the bodies it logs.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson

__all__ = ["META_KEY", "PLACEHOLDER", "Scrubber", "content_strings", "mask_messages",
           "redacted_hashes", "redacted_raw"]

PLACEHOLDER = "[removed by operator]"
"""What a redacted message's text (and every copy of it) becomes."""

META_KEY = "redacted_messages"
"""``meta`` row: JSON ``{tenant: [content_hash, …]}`` of the redacted messages."""

_WINDOW = 24
"""Characters of a fragment: a string that holds this many consecutive characters
of the redacted text (case and spacing aside) still holds a piece of it."""

_SHORT = 12
"""A text shorter than this (normalised: "Yes", "ok, do it") is too common to look
for inside other strings: only a string that is that text as a whole is a copy."""

_SPACE = re.compile(r"\s+")


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


class Scrubber:
    """Finds and replaces a redacted message's text in other strings.

    ``needles``: the exact texts to replace inside other strings (the stored text,
    each string of its content and the texts of the items removed with it), longest
    first; ``whole``: the normalised texts shorter than :data:`_SHORT`, a copy only as
    a whole string. ``pieces``: normalised fragments of the needles and ``extra``
    (windows of :data:`_WINDOW` characters every half window, a shorter text whole);
    a string that contains one after the needles are replaced still holds a piece of
    the text."""

    def __init__(self, texts: list[str], extra: tuple[str, ...] | list[str] = ()) -> None:
        given = {t for t in texts if t.strip()}
        self.whole = {_norm(t) for t in given if len(_norm(t)) < _SHORT}
        self.needles = sorted((t for t in given if len(_norm(t)) >= _SHORT), key=len,
                              reverse=True)
        pieces: set[str] = set()
        for text in [*self.needles, *extra]:
            norm = _norm(text)
            if len(norm) < _SHORT:
                continue
            if len(norm) <= _WINDOW:
                pieces.add(norm)
                continue
            step = _WINDOW // 2
            pieces.update(norm[i:i + _WINDOW] for i in range(0, len(norm) - _WINDOW + 1, step))
            pieces.add(norm[-_WINDOW:])
        self.pieces = sorted(pieces)

    def replace(self, text: str) -> str:
        """``text`` with every needle replaced by the placeholder (a short text's copy:
        ``text`` is it, whole)."""
        if self.whole and _norm(text) in self.whole:
            return PLACEHOLDER
        for needle in self.needles:
            if needle in text:
                text = text.replace(needle, PLACEHOLDER)
        return text

    def holds_piece(self, text: str) -> bool:
        """Whether ``text`` still holds a fragment of the redacted text."""
        norm = _norm(text)
        return any(p in norm for p in self.pieces)

    def scrub(self, text: str) -> str:
        """Needles replaced; a text that still holds a piece becomes the placeholder."""
        out = self.replace(text)
        return PLACEHOLDER if out != PLACEHOLDER and self.holds_piece(out) else out

    @property
    def is_empty(self) -> bool:
        """Nothing to look for (an empty text, or one redacted before)."""
        return not (self.needles or self.whole)

    def scrub_lines(self, text: str) -> str:
        """:meth:`scrub` line by line (summaries: one line per point)."""
        return "\n".join(self.scrub(line) if line.strip() else line
                         for line in text.split("\n"))

    def scrub_value(self, value: Any, whole: bool = True) -> tuple[Any, bool]:
        """A JSON value with each string scrubbed (``whole``) or only its needles
        replaced; returns ``(value, residue)``: whether a string still holds a piece
        (never with ``whole``)."""
        residue = False

        def walk(v: Any) -> Any:
            nonlocal residue
            if isinstance(v, str):
                if whole:
                    return self.scrub(v)
                out = self.replace(v)
                residue = residue or self.holds_piece(out)
                return out
            if isinstance(v, list):
                return [walk(x) for x in v]
            if isinstance(v, dict):
                return {k: walk(x) for k, x in v.items()}
            return v

        return walk(value), residue


def redacted_raw(raw_json: str) -> str:
    """The stored raw message without content: role, name, tool-call id, and each
    tool call's id, type and function name (arguments ``{}``)."""
    try:
        raw = orjson.loads(raw_json)
    except orjson.JSONDecodeError:
        raw = {}
    out: dict[str, Any] = {"role": raw.get("role")} if isinstance(raw, dict) else {}
    if isinstance(raw, dict):
        for key in ("name", "tool_call_id", "type"):
            if isinstance(raw.get(key), str):
                out[key] = raw[key]
        calls = raw.get("tool_calls")
        if isinstance(calls, list):
            out["tool_calls"] = [
                {"id": c.get("id"), "type": c.get("type", "function"),
                 "function": {"name": (c.get("function") or {}).get("name"),
                              "arguments": "{}"}}
                for c in calls if isinstance(c, dict)]
    out["content"] = PLACEHOLDER
    return orjson.dumps(out).decode()


def content_strings(value: Any) -> list[str]:
    """The strings of a message's content worth looking for (not its ids, roles,
    types or cache markers)."""
    out: list[str] = []
    if isinstance(value, str):
        out.append(value)
    elif isinstance(value, list):
        for v in value:
            out += content_strings(v)
    elif isinstance(value, dict):
        for k, v in value.items():
            if k not in ("role", "type", "id", "name", "tool_call_id", "cache_control"):
                out += content_strings(v)
    return out


def redacted_hashes(meta: str | None) -> dict[str, frozenset[str]]:
    """The ``meta`` value :data:`META_KEY` read: tenant → content hashes."""
    if not meta:
        return {}
    value = orjson.loads(meta)
    return {t: frozenset(h) for t, h in value.items()} if isinstance(value, dict) else {}


def mask_messages(body: Any, hashes: frozenset[str],
                  digest: Callable[[Any], str]) -> dict[str, Any] | None:
    """A copy of ``body`` in which each message of its ``messages`` or ``input`` list
    whose ``digest`` is in ``hashes`` keeps no content (:func:`redacted_raw`), or
    ``None`` when none is. ``digest``: the capture's content hash of one message
    (SHA-256 of its canonical bytes)."""
    if not isinstance(body, dict) or not hashes:
        return None
    out: dict[str, Any] | None = None
    for field in ("messages", "input"):
        listed = body.get(field)
        if not isinstance(listed, list):
            continue
        for i, message in enumerate(listed):
            if isinstance(message, dict) and digest(message) in hashes:
                if out is None:
                    out = dict(body)
                if out[field] is listed:
                    out[field] = list(listed)
                out[field][i] = orjson.loads(redacted_raw(orjson.dumps(message).decode()))
    return out
