"""Build the upstream body: the client's request plus the injection block.

Only the newest user message changes; every earlier message is re-serialised from
the same parsed values, so the bytes of earlier turns are identical from one
request to the next and the upstream's prompt cache keeps hitting (DESIGN §7).
The client's own message list is never modified: we copy what we change.
"""

from __future__ import annotations

import bisect
import itertools
import json
import math
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from memory_core.compaction.compressor import (
    ACKNOWLEDGEMENT,
    INSTRUCTION_ROLES,
    SCAFFOLD_HEADER,
    SummaryNode,
    Superseded,
    scaffold_text,
)
from proxy.rawjson import CURRENT, RawItems

# Every ASCII digit maps to "0", every other byte to a space: a run of 19 zeros in
# the translated body is a run of 19 digits in the original.
_DIGITS_ONLY = bytes(0x30 if 0x30 <= b <= 0x39 else 0x20 for b in range(256))
_DIGIT_RUN = b"0" * 19


# Digits map to "0", "e"/"E" to "e", "+" to itself, every other byte to a space: "e000"
# or "e+000" in the translated body is an exponent of three digits or more.
_EXPONENTS = bytes(0x30 if 0x30 <= b <= 0x39 else 0x65 if b in (0x45, 0x65)
                   else 0x2B if b == 0x2B else 0x20 for b in range(256))


def holds_infinity(raw: bytes, body: Any, *, kept: str | None = None,
                   conversation: str | None = None) -> bool:
    """True when ``body``, parsed from ``raw``, holds a number too large for a float
    (``1e400``, valid JSON) where a rewrite would write it: the parse made it
    infinity, which JSON cannot write (orjson writes ``null``), so a body rebuilt from
    ``body`` would change the client's value. ``kept``: a field whose client bytes the
    rewrite keeps (never asked); ``conversation``: the field it puts back from the
    parse, asked of a small body only, as :func:`exact_source` asks for integers past
    64 bits. A small body is walked only when its bytes hold a three-digit exponent
    (a ``translate`` and two ``find``: microseconds below 64 KB); a large one has only
    its other fields walked (the history, most of its bytes, is not read again)."""
    small = len(raw) < _SCAN_BYTES_BELOW
    skip = kept or (None if small else conversation)
    if skip is not None and isinstance(body, dict):
        body = {k: v for k, v in body.items() if k != skip}
    if not small and skip is not None:
        return _holds_float(body, math.isinf)
    text = raw.translate(_EXPONENTS)
    if b"e000" not in text and b"e+000" not in text:
        return False
    return _holds_float(body, math.isinf)


def needs_exact_numbers(raw: bytes) -> bool:
    """True when ``raw`` holds 19+ consecutive digits, i.e. possibly an integer
    literal orjson would turn into a float (beyond i64/u64), so rewriting must
    reparse with the stdlib. Digits inside strings count too (a false positive only
    costs the slower parse).

    ``bytes.translate`` + ``find`` (C loops, about 3 ms per MB) replaces the regex
    ``\\d{19,}``, which measured 36 ms per MB here: it retries at every digit.
    """
    return _DIGIT_RUN in raw.translate(_DIGITS_ONLY)


_SCAN_BYTES_BELOW = 64 * 1024
"""Bodies smaller than this are scanned byte by byte (:func:`needs_exact_numbers`,
microseconds); larger ones have their kept fields walked instead (:func:`exact_source`)."""
_PAST_64_BITS = float(2 ** 63)


def exact_source(raw: bytes, body: dict[str, Any], replaced: str) -> dict[str, Any]:
    """The body a rewrite takes its other fields from: ``body`` (parsed by orjson), or
    the stdlib's parse of ``raw`` when a field other than ``replaced`` (the
    conversation the rewrite puts back) may hold an integer orjson read as a float
    (past 64 bits).

    A small body is scanned for a run of 19 digits (:func:`needs_exact_numbers`); a
    large one has only its other fields walked for a float of magnitude 2**63 or
    more, which every such integer becomes: the conversation, most of a long
    history's bytes, is not read again. Raises ``ValueError`` as ``json.loads``.
    """
    if len(raw) < _SCAN_BYTES_BELOW:
        exact = needs_exact_numbers(raw)
    else:
        exact = any(_holds_large_float(v) for k, v in body.items() if k != replaced)
    if exact:
        value = json.loads(raw)
        if isinstance(value, dict):
            return value
    return body


def _holds_large_float(value: Any) -> bool:
    """True when ``value`` (parsed JSON) holds a float of magnitude 2**63 or more."""
    return _holds_float(value, lambda v: abs(v) >= _PAST_64_BITS)


def _holds_float(value: Any, test: Callable[[float], bool]) -> bool:
    """True when ``value`` (parsed JSON) holds a float for which ``test`` is true."""
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, float):
            if test(v):
                return True
        elif isinstance(v, dict):
            stack.extend(v.values())
        elif isinstance(v, list):
            stack.extend(v)
    return False


def loads_exact(raw: bytes) -> Any:
    """Parse JSON keeping integers past 64 bits exact (orjson turns them to floats):
    the stdlib when :func:`needs_exact_numbers`, else orjson. Raises ``ValueError``."""
    if needs_exact_numbers(raw):
        return json.loads(raw)
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        return json.loads(raw)  # lone surrogates, NaN: the stdlib reads them


def newest_user_index(messages: list[Any]) -> int | None:
    """Index of the last message when it is a user message, else ``None``.

    The block goes only on a fresh user turn; a request that ends with a tool
    result or an assistant prefill is forwarded without one.
    """
    if messages and isinstance(messages[-1], dict) and messages[-1].get("role") == "user":
        return len(messages) - 1
    return None


def tool_round_user_index(messages: list[Any]) -> int | None:
    """Index of the user message that opened the turn a tool round continues.

    ``None`` unless the request ends with ``tool`` results and everything after
    the last user message is assistant tool calls and their results: the model is
    still answering that user message, so it keeps that message's block (the
    same bytes, so the turn's requests share their prefix).
    """
    if not messages or not isinstance(messages[-1], dict) or messages[-1].get("role") != "tool":
        return None
    for i in range(len(messages) - 1, -1, -1):
        msg = messages[i]
        if not isinstance(msg, dict):
            return None
        role = msg.get("role")
        if role == "user" and not (isinstance(msg.get("content"), str)
                                   and msg["content"].startswith(SCAFFOLD_HEADER)):
            return i  # (the scaffold of the turn's compacted rounds is not the turn's)
        if role in ("tool", "user") or (role == "assistant" and msg.get("tool_calls")):
            continue
        return None
    return None


def inject_block(messages: list[Any], block: str, index: int | None = None) -> list[Any]:
    """Return a copy of ``messages`` whose message ``index`` (default: the last)
    starts with ``block``.

    String content becomes ``block + "\\n" + content``; a content-part list gets a
    leading text part; ``None`` content becomes the block alone.
    """
    messages = list(messages)
    index = len(messages) - 1 if index is None else index
    msg = dict(messages[index])
    content = msg.get("content")
    if isinstance(content, str):
        msg["content"] = f"{block}\n{content}"
    elif isinstance(content, list):
        msg["content"] = [{"type": "text", "text": block}, *content]
    else:
        msg["content"] = block
    messages[index] = msg
    return messages


def apply_forest(messages: list[Any], message_ids: Sequence[int],
                 roots: Sequence[SummaryNode], *, tools_enabled: bool,
                 short_tools: bool = False, superseded: Sequence[Superseded] = (),
                 budget_tokens: int | None = None) -> list[Any]:
    """Replace the messages covered by ``roots`` with the scaffold and acknowledgement.

    ``message_ids[i]`` is the stored id of ``messages[i]`` (from the capture). The
    scaffold (a ``user`` message) and the acknowledgement (an ``assistant``
    message) stand where the first covered message stood; every uncovered message
    keeps its place and its exact value. A covered ``system`` or ``developer``
    message (a node written before instructions were kept out of summaries) is
    kept too, verbatim and in order: instructions are never summarised away. With
    no roots, ``messages`` is returned. ``superseded``: items corrected since the
    summaries were written (see :func:`memory_core.compaction.compressor.mark_superseded`).
    ``budget_tokens``: the scaffold's share of the context budget
    (:func:`memory_core.compaction.compressor.scaffold_text`, as ``short_tools``).
    """
    if not roots:
        return messages
    runs = _covered_runs(message_ids, roots, len(messages))
    if runs is not None:
        return _apply_runs(messages, runs, scaffold_text(
            roots, tools_enabled=tools_enabled, short_tools=short_tools,
            superseded=superseded, budget_tokens=budget_tokens))
    covered = {i for node in roots for i in node.message_ids}
    out: list[Any] = []
    placed = False
    for msg, mid in zip(messages, message_ids, strict=False):
        if mid in covered:
            if not placed:
                out.append({"role": "user",
                            "content": scaffold_text(roots, tools_enabled=tools_enabled,
                                                     short_tools=short_tools,
                                                     superseded=superseded,
                                                     budget_tokens=budget_tokens)})
                out.append({"role": "assistant", "content": ACKNOWLEDGEMENT})
                placed = True
            if not (isinstance(msg, dict) and msg.get("role") in INSTRUCTION_ROLES):
                continue
        out.append(msg)
    out.extend(messages[len(message_ids):])
    return _without_doubled_ack(out)


def _covered_runs(message_ids: Sequence[int], roots: Sequence[SummaryNode], n: int
                  ) -> list[tuple[int, int]] | None:
    """The positions ``[start, end)`` each root covers in ``message_ids``, in order,
    when every root is one run of them and its ids stand nowhere else; ``None``
    otherwise (the caller then tests every message against the covered set).

    A path's ids ascend (a message is stored after its parent) and a node covers a
    run of the path it was made on, so each root is found by bisection and one
    slice comparison: no per-message work in Python. Ids that do not ascend (a
    spliced reply repeats its id), a root that is not one run, or a run past the
    ``n`` messages take the general path."""
    ids = message_ids if isinstance(message_ids, list) else list(message_ids)
    if ids != sorted(ids):
        return None
    runs: list[tuple[int, int]] = []
    for node in roots:
        covered = node.message_ids if isinstance(node.message_ids, list) \
            else list(node.message_ids)
        if not covered:
            return None
        start = bisect.bisect_left(ids, covered[0])
        end = start + len(covered)
        if end > n or ids[start:end] != covered or (end < len(ids) and ids[end] == ids[end - 1]):
            return None  # not one run, or its last id comes again after it
        runs.append((start, end))
    runs.sort()
    if any(b[0] < a[1] for a, b in itertools.pairwise(runs)):
        return None  # roots that overlap: not a forest
    return runs


def _apply_runs(messages: list[Any], runs: list[tuple[int, int]], scaffold: str
                ) -> list[Any]:
    """:func:`apply_forest` over covered ``runs`` (:func:`_covered_runs`)."""
    kept = runs[0][0]
    out: list[Any] = list(messages[:kept])
    out.append({"role": "user", "content": scaffold})
    out.append({"role": "assistant", "content": ACKNOWLEDGEMENT})
    for start, end in runs:
        out.extend(messages[kept:start])
        out.extend(_instructions(messages[start:end]))
        kept = end
    out.extend(messages[kept:])
    return _without_doubled_ack(out)


def _without_doubled_ack(out: list[Any]) -> list[Any]:
    """``out`` without the acknowledgement when an assistant message follows it (a
    compacted tool loop goes on with the model's own turn): two assistant turns in
    a row are one to Anthropic, whose turn that continues a tool use must open with
    its thinking block, not with our text."""
    for i, msg in enumerate(out[:-1]):
        if isinstance(msg, dict) and msg.get("content") is ACKNOWLEDGEMENT:
            nxt = out[i + 1]
            if isinstance(nxt, dict) and nxt.get("role") == "assistant":
                return [*out[:i], *out[i + 1:]]
            break
    return out


def _instructions(messages: list[Any]) -> list[Any]:
    """The ``system`` and ``developer`` messages of ``messages``, in order (a node
    written before instructions were kept out of summaries may cover one)."""
    try:
        roles = list(map(dict.get, messages, itertools.repeat("role")))
    except TypeError:  # not every message is an object
        return [m for m in messages
                if isinstance(m, dict) and m.get("role") in INSTRUCTION_ROLES]
    if not any(role in roles for role in INSTRUCTION_ROLES):
        return []
    return [m for m, role in zip(messages, roles, strict=True) if role in INSTRUCTION_ROLES]


def apply_splices(messages: list[Any], message_ids: Sequence[int],
                  splices: dict[int, list[Any]]) -> tuple[list[Any], list[int]]:
    """Replace each message whose id has a splice by the messages the model saw.

    Returns new ``(messages, ids)``; the inserted messages carry the id of the reply
    they stand for, so compaction keeps or drops them together with it. A reply
    whose id comes again (parallel calls the client echoed interleaved with their
    results: :func:`memory_core.capture.evidence.regroup_calls`) is spliced once, where it
    first stands; its later turns are left out (the splice holds every call).
    """
    if not splices:
        return messages, list(message_ids)
    out: list[Any] = []
    out_ids: list[int] = []
    done: set[int] = set()
    for msg, mid in zip(messages, message_ids, strict=False):
        replacement = splices.get(mid)
        if replacement and mid in done:
            continue
        if replacement:
            done.add(mid)
            out.extend(replacement)
            out_ids.extend([mid] * len(replacement))
        else:
            out.append(msg)
            out_ids.append(mid)
    return out, out_ids


def dumps_body(body: dict[str, Any], raw_items: RawItems | None = None) -> bytes:
    """Serialise a request body: orjson, or the stdlib with ASCII escapes for values
    orjson refuses (lone surrogates, huge integers).

    With ``raw_items`` (default: the current request's, :data:`proxy.rawjson.CURRENT`),
    the conversation items the body kept unchanged go as the client's own bytes
    (:meth:`proxy.rawjson.RawItems.dumps`)."""
    raw_items = raw_items if raw_items is not None else CURRENT.get()
    if raw_items is not None:
        spliced = raw_items.dumps(body)
        if spliced is not None:
            return spliced
    try:
        return orjson.dumps(body)
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(body, ensure_ascii=True).encode("ascii")
