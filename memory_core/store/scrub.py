"""What a redacted message's copies become: pure text work, no I/O.

:class:`Scrubber` finds the copies of a redacted message's text in other strings and
replaces each copied span by :data:`PLACEHOLDER`, leaving the rest of the string;
:func:`redacted_raw` is the raw message kept in its place; :func:`mask_messages`
puts that in place of the messages a later forwarded body still carries (the
client resends its history as it was). :mod:`memory_core.store.redaction` does the
SQL; ``memory_core.capture.forwarded`` masks the bodies it logs.

What is a copy. Texts are compared as tokens: words (letters and digits, lower-cased;
punctuation and spacing aside) and each CJK character (counted as half a word below:
a character says less than a word). A *run* is a stretch of a string whose tokens
repeat, in order, a stretch of one redacted text (found through its
:data:`SHINGLE`-token shingles; a word cut off at either end of the run, as a
truncated snippet cuts one, belongs to it). A run is a copy when it is

- at least half of that text, and either :data:`SENTENCE_TOKENS` words long or holding
  one of its marked tokens (below), or
- the whole of one of its sentences of :data:`SENTENCE_TOKENS` words or more, or
- at least :data:`SHINGLE` words holding :data:`MARKED` or more of its marked
  tokens: those spelled with a digit, or with a capital letter and more than one
  character (not a sentence's first word; "I" is no name): names, numbers,
  identifiers, what an operator redacts.

A phrase the redacted text shares with other conversations ("let me know if anything
looks wrong") is none of these and stays where it is. A string that *is* one of the
texts (case and spacing aside) is a copy whatever its length; a text of fewer than
:data:`SHINGLE` tokens ("Yes, go.") is a copy only so, as a whole string. The
message's own text and content strings are also replaced wherever they occur
verbatim.

Those two whole-text rules reach only as far as the caller says: a stock message
("Thanks, that works!") is said in many conversations, so outside the redacted
message's own conversation a :class:`Scrubber` built with ``distinctive_only`` applies
them only to a text that :func:`is_distinctive` (:data:`SENTENCE_TOKENS` words, or
:data:`MARKED` marked tokens); the run rules above are distinctive by construction.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

import orjson

__all__ = ["MARKED", "META_KEY", "PLACEHOLDER", "ROOTS_KEY", "SENTENCE_TOKENS", "SHINGLE",
           "WIDE_KEY", "Scrubber", "content_strings", "is_distinctive", "mask_messages",
           "redacted_hashes", "redacted_raw", "redacted_roots"]

PLACEHOLDER = "[removed by operator]"
"""What a redacted message's text (and every copy of it) becomes."""

META_KEY = "redacted_messages"
"""``meta`` row: JSON ``{tenant: [content_hash, …]}`` of the redacted messages."""

ROOTS_KEY = "redacted_roots"
"""``meta`` row: JSON ``{tenant: [root message id, …]}``: the first message of each
conversation tree that holds a redacted message (only its threads' bodies can)."""

WIDE_KEY = "redacted_everywhere"
"""``meta`` row: JSON ``{tenant: [content_hash, …]}``: the redacted messages whose
later bodies are masked in every thread of their tenant, not only in their own
conversation tree: distinctive texts (:func:`is_distinctive`) of a tenant that is one
end user's (``t_…~u_…``, ``proxy.scope``)."""

SHINGLE = 5
"""Tokens of a shingle: a run is found through the shingles it shares."""

SENTENCE_TOKENS = 10
"""A whole sentence of the redacted text this long (tokens) is a copy by itself."""

MARKED = 2
"""Marked tokens (digits, capitals) that make a run of :data:`SHINGLE` tokens a copy."""

_SHORT = 12
"""A needle (the message's own text, verbatim) shorter than this many characters,
normalised, is too common to replace inside other strings."""

_ANCHORS_MAX = 64
"""Above this many anchor tokens :meth:`Scrubber.may_hold` tests by tokens (one pass)."""

_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff"
_TOKEN = re.compile(rf"[{_CJK}]|[^\W_{_CJK}]+")
_CJK_CHAR = re.compile(rf"[{_CJK}]")
_SENTENCE_END = re.compile(r"[.!?;\n。！？；]")
_SPACE = re.compile(r"\s+")


_JSON_ESCAPE = re.compile(r"\\u[dD][89abAB][0-9a-fA-F]{2}\\u[dD][c-fC-F][0-9a-fA-F]{2}"
                          r"|\\u[0-9a-fA-F]{4}")
"""A JSON ``\\u`` escape: a surrogate pair, or one code unit."""

_JSON_CONTROL = re.compile(r"\\[nrtbf\"\\/]")
"""A JSON escape of a control character, a quote, a slash or a backslash."""

_CONTROL = dict(zip('nrtbf"\\/', '\n\r\t\b\f"\\/', strict=True))
"""What each :data:`_JSON_CONTROL` escape spells."""


def _unescape(m: re.Match[str]) -> str:
    """The character(s) a :data:`_JSON_ESCAPE` match spells (a lone surrogate kept)."""
    units = [int(m.group()[i + 2:i + 6], 16) for i in range(0, len(m.group()), 6)]
    if len(units) == 2:
        return chr(0x10000 + ((units[0] - 0xD800) << 10) + (units[1] - 0xDC00))
    return chr(units[0])


def _norm(text: str) -> str:
    return _SPACE.sub(" ", text).strip().lower()


class _Source:
    """One redacted text as tokens: their lower-cased forms, which are marked, their
    weights (a CJK character half a word) and each sentence's token range."""

    __slots__ = ("marked", "sentences", "tokens", "weights")

    def __init__(self, text: str) -> None:
        found = list(_TOKEN.finditer(text))
        self.tokens = [m.group().lower() for m in found]
        self.weights = [0.5 if _CJK_CHAR.fullmatch(t) else 1.0 for t in self.tokens]
        self.marked: list[bool] = []
        self.sentences: list[tuple[int, int]] = []
        start, prev_end = 0, 0
        for i, m in enumerate(found):
            if i and _SENTENCE_END.search(text, prev_end, m.start()):
                self.sentences.append((start, i))
                start = i
            word = m.group()
            capital = len(word) > 1 and (any(c.isupper() for c in word[1:])
                                         or (word[0].isupper() and i != start))
            self.marked.append(any(c.isdigit() for c in word) or capital)
            prev_end = m.end()
        if found:
            self.sentences.append((start, len(found)))

    def is_copy(self, at: int, length: int) -> bool:
        """Whether the run of ``length`` tokens from token ``at`` is a copy (module
        docstring)."""
        end = at + length
        weight = sum(self.weights[at:end])
        if 2 * weight >= sum(self.weights) and (weight >= SENTENCE_TOKENS
                                                or any(self.marked[at:end])):
            return True
        if any(at <= a and b <= end and sum(self.weights[a:b]) >= SENTENCE_TOKENS
               for a, b in self.sentences):
            return True
        return weight >= SHINGLE and sum(self.marked[at:end]) >= MARKED


def is_distinctive(text: str) -> bool:
    """Whether ``text`` is told from a stock message met whole in another conversation:
    :data:`SENTENCE_TOKENS` tokens (a CJK character half one) or :data:`MARKED` marked
    tokens (module docstring). "Thanks, that works!" is not; "Call Ilse at 555-0142" is."""
    src = _Source(text)
    return sum(src.weights) >= SENTENCE_TOKENS or sum(src.marked) >= MARKED


class Scrubber:
    """Finds and replaces the copies of a redacted message's text in other strings.

    ``texts``: the message's text and content strings (also replaced verbatim);
    ``extra``: texts derived from it (the memory items removed with it). Each is
    looked for as runs of its shingles (module docstring); a string equal to one
    (case and spacing aside) is replaced whole. With ``distinctive_only`` the
    whole-string and verbatim rules keep only the texts that :func:`is_distinctive`
    (rows of other conversations, where a stock message is another person's own)."""

    def __init__(self, texts: list[str], extra: tuple[str, ...] | list[str] = (), *,
                 distinctive_only: bool = False) -> None:
        given = [t for t in dict.fromkeys([*texts, *extra]) if t.strip()]
        self._empty = not given
        whole = [t for t in given if is_distinctive(t)] if distinctive_only else given
        self.whole = {_norm(t) for t in whole}
        kept = set(whole)
        self.needles = sorted({t for t in texts if len(_norm(t)) >= _SHORT and t in kept},
                              key=len, reverse=True)
        self._sources = [s for s in (_Source(t) for t in given) if len(s.tokens) >= SHINGLE]
        self._shingles: dict[tuple[str, ...], list[tuple[int, int]]] = {}
        # A copy holds a whole shingle, so each of its tokens as a substring: one per
        # shingle (a marked one, else the longest: the rarest in practice) is an
        # anchor, and a string holding no anchor is skipped.
        anchors: set[str] = set()
        for n, src in enumerate(self._sources):
            for i in range(len(src.tokens) - SHINGLE + 1):
                self._shingles.setdefault(tuple(src.tokens[i:i + SHINGLE]), []).append((n, i))
                rarest = max(zip(src.marked[i:i + SHINGLE], src.tokens[i:i + SHINGLE],
                                 strict=True), key=lambda pair: (pair[0], len(pair[1])))
                anchors.add(rarest[1])
        self._short: dict[int, set[tuple[str, ...]]] = {}
        for t in self.whole:
            # a string that is the text, or holds it verbatim, holds each of its
            # tokens: the longest is the rarest in practice
            words = tuple(m.group() for m in _TOKEN.finditer(t))
            anchors.add(max(words, key=len) if words else t)
            if len(words) < SHINGLE:  # no shingle finds it: its tokens (0: none)
                self._short.setdefault(len(words), set()).add(words)
        self.anchors = sorted(anchors, key=len, reverse=True)
        self._firsts = frozenset(shingle[0] for shingle in self._shingles)

    @property
    def is_empty(self) -> bool:
        """Nothing to look for (an empty text, or one redacted before)."""
        return self._empty

    def may_hold(self, text: str) -> bool:
        """Cheap pre-test: ``False`` guarantees :meth:`scrub` changes nothing in
        ``text`` or in any string of ``text`` as JSON (no anchor token in it, its
        ``\\uXXXX`` escapes read as the characters they spell: a client's JSON may
        write every non-ASCII character so). With many texts (a purged thread's) the
        test is by tokens instead: linear in ``text`` whatever their number."""
        if len(self.anchors) > _ANCHORS_MAX:
            return self._may_hold_tokens(text)
        low = text.lower()
        if any(a in low for a in self.anchors):
            return True
        if "\\u" not in text:
            return False
        low = _JSON_ESCAPE.sub(_unescape, text).lower()
        return any(a in low for a in self.anchors)

    def _may_hold_tokens(self, text: str) -> bool:
        """:meth:`may_hold` by tokens: a shingle of a text, or the tokens of a short
        whole text, in order, among ``text``'s (JSON escapes read first)."""
        if 0 in self._short and _norm(text) in self.whole:
            return True
        if "\\" in text:
            text = _JSON_ESCAPE.sub(_unescape, text)
            text = _JSON_CONTROL.sub(lambda m: _CONTROL[m.group()[1]], text)
        if any(needle in text for needle in self.needles):
            return True  # verbatim, whatever glues to either end of it
        tokens = [m.group().lower() for m in _TOKEN.finditer(text)]
        if any(tuple(tokens[i:i + SHINGLE]) in self._shingles
               for i in range(len(tokens) - SHINGLE + 1)):
            return True
        return any(tuple(tokens[i:i + n]) in wanted for n, wanted in self._short.items()
                   if n for i in range(len(tokens) - n + 1))

    def scrub(self, text: str) -> str:
        """``text`` with each copy of the redacted text replaced by the placeholder
        (the whole of it when it is one)."""
        if not text or not self.may_hold(text):
            return text
        if _norm(text) in self.whole:
            return PLACEHOLDER
        for needle in self.needles:
            if needle in text:
                text = text.replace(needle, PLACEHOLDER)
        spans = self._copies(text)
        if not spans:
            return text
        out, done = [], 0
        for a, b in spans:
            out.append(text[done:a])
            out.append(PLACEHOLDER)
            done = b
        out.append(text[done:])
        return "".join(out)

    def _copies(self, text: str) -> list[tuple[int, int]]:
        """Character spans of the copies in ``text``, in order, not overlapping."""
        found = list(_TOKEN.finditer(text))
        if len(found) < SHINGLE or not self._shingles:
            return []
        tokens = [m.group().lower() for m in found]
        firsts = self._firsts
        if not any(t in firsts for t in tokens):
            return []
        spans: list[tuple[int, int]] = []
        i = 0
        while i <= len(tokens) - SHINGLE:
            starts = (self._shingles.get(tuple(tokens[i:i + SHINGLE]))
                      if tokens[i] in firsts else None)
            if not starts:
                i += 1
                continue
            best: tuple[int, int, int] | None = None  # (length, source, at)
            for n, at in starts:
                src = self._sources[n].tokens
                length = SHINGLE
                while (i + length < len(tokens) and at + length < len(src)
                       and tokens[i + length] == src[at + length]):
                    length += 1
                if self._sources[n].is_copy(at, length) and (best is None
                                                             or length > best[0]):
                    best = (length, n, at)
            if best is None:
                i += 1
                continue
            length, n, at = best
            src = self._sources[n].tokens
            first, last = i, i + length - 1
            if first and at and src[at - 1].endswith(tokens[first - 1]):
                first -= 1  # a word cut at the start of a snippet
            if last + 1 < len(tokens) and at + length < len(src) \
                    and src[at + length].startswith(tokens[last + 1]):
                last += 1  # … or at its end
            spans.append((found[first].start(), found[last].end()))
            i = last + 1
        return spans

    def scrub_lines(self, text: str) -> str:
        """:meth:`scrub` line by line (summaries: one line per point)."""
        if not self.may_hold(text):
            return text
        return "\n".join(self.scrub(line) if line.strip() else line
                         for line in text.split("\n"))

    def scrub_value(self, value: Any) -> Any:
        """A JSON value with each string (dict keys aside) scrubbed: the same shape,
        the same object when nothing changed."""
        if isinstance(value, str):
            return self.scrub(value)
        if isinstance(value, list):
            out_l = [self.scrub_value(x) for x in value]
            return value if all(a is b for a, b in zip(out_l, value, strict=True)) else out_l
        if isinstance(value, dict):
            out_d = {k: self.scrub_value(x) for k, x in value.items()}
            return value if all(out_d[k] is value[k] for k in value) else out_d
        return value


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


def redacted_roots(meta: str | None) -> dict[str, frozenset[int]]:
    """The ``meta`` value :data:`ROOTS_KEY` read: tenant → root message ids."""
    if not meta:
        return {}
    value = orjson.loads(meta)
    return ({t: frozenset(int(r) for r in ids) for t, ids in value.items()}
            if isinstance(value, dict) else {})


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
