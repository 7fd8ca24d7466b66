"""The context budget of one upstream request, and the upstream's "too long" errors.

Sans-io: numbers and bytes in, numbers out. The proxy (``proxy.flow.plan``) plans
every forwarded request against :func:`request_budget`: the model's context window
(from :class:`ContextConfig`'s pattern table, or a smaller one learned from an
upstream's context-length error, :class:`ContextLimits`) minus the output reserve.
Everything forwarded counts (:func:`messages_tokens`, :func:`tools_tokens`), in
o200k tokens (:mod:`memory_core.tokens`) plus the chat format's per-message overhead.
"""

from __future__ import annotations

import fnmatch
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any, cast

import orjson

from memory_core.setting import rng
from memory_core.tokens import count_tokens

MESSAGE_OVERHEAD = 4
"""Tokens the chat format adds per message (role and separators; OpenAI's count)."""
REQUEST_OVERHEAD = 3
"""Tokens the reply's priming adds once per request."""
IMAGE_PART_TOKENS = 765
"""Tokens counted for one non-text content part (an image at high detail, 2×2 tiles)."""
MIN_WINDOW = 1024
"""No budget is planned, or learned, below this window."""

DEFAULT_MODEL_WINDOWS: tuple[tuple[str, int], ...] = (
    ("gpt-4.1*", 1_047_576),
    ("gpt-5*", 400_000),
    ("gpt-4o*", 128_000),
    ("chatgpt-4o*", 128_000),
    ("gpt-4.5*", 128_000),
    ("gpt-4-turbo*", 128_000),
    ("gpt-4-32k*", 32_768),
    ("gpt-4*", 8_192),
    ("gpt-3.5-turbo-instruct*", 4_096),
    ("gpt-3.5-turbo*", 16_385),
    ("o1-mini*", 128_000),
    ("o1*", 200_000),
    ("o3*", 200_000),
    ("o4-mini*", 200_000),
    ("claude*", 200_000),
    ("*llama-3.1*", 131_072),
    ("*llama3.1*", 131_072),
    ("*llama-3.2*", 131_072),
    ("*llama3.2*", 131_072),
    ("*llama-3.3*", 131_072),
    ("*llama3.3*", 131_072),
    ("*llama-3*", 8_192),
    ("*llama3*", 8_192),
    ("*llama*", 4_096),
    ("*qwen3*", 32_768),
    ("*qwen2.5*", 32_768),
    ("*qwen*", 32_768),
    ("*mixtral*", 32_768),
    ("*mistral*", 32_768),
    ("*deepseek*", 65_536),
    ("*gemma*", 8_192),
    ("*phi*", 4_096),
)
"""Shipped model-name patterns → context window (tokens), first match wins; see
``[context] model_windows`` in config/default.toml. Local servers (vLLM's
``--max-model-len``, llama.cpp's ``-c``, Ollama's ``num_ctx``) may run a model with
a smaller window than it supports: set it here, or the first context-length error
teaches the proxy (:class:`ContextLimits`)."""


@dataclass(frozen=True, slots=True)
class ContextConfig:
    """Context budget settings (``[context]``); tokens are o200k tokens.

    ``default_window_tokens``: the window of a model no pattern matches.
    ``model_windows``: ``(fnmatch pattern, window)`` pairs, case-insensitive, matched
    against the model name and against its last ``/`` part (``openai/gpt-4o``).
    ``output_reserve_tokens``: left for the answer when the request names no
    ``max_completion_tokens``/``max_tokens``. ``forest_share``/``block_share``: the
    fractions of the input budget the summary scaffold and the memory block may use.
    ``margin_tokens``: kept free for what the count cannot see (a server's chat
    template, another tokenizer).
    The ranges (field metadata, :mod:`memory_core.setting`) are what the settings
    loader accepts; nothing here clamps them.
    """

    default_window_tokens: int = field(default=128_000, metadata=rng(MIN_WINDOW, 100_000_000))
    model_windows: tuple[tuple[str, int], ...] = DEFAULT_MODEL_WINDOWS
    output_reserve_tokens: int = field(default=4096, metadata=rng(0, 10_000_000))
    forest_share: float = field(default=0.3, metadata=rng(0.05, 0.9))
    block_share: float = field(default=0.15, metadata=rng(0, 0.5))
    margin_tokens: int = field(default=256, metadata=rng(0, 100_000))


def parse_model_windows(entries: Sequence[str]) -> tuple[tuple[str, int], ...]:
    """``["gpt-4o*=128000", …]`` → ``(("gpt-4o*", 128000), …)``.

    Raises ``ValueError`` naming the entry when one is not ``pattern=tokens`` with a
    window of at least :data:`MIN_WINDOW`.
    """
    out = []
    for entry in entries:
        pattern, sep, number = entry.rpartition("=")
        pattern = pattern.strip()
        try:
            window = int(number.strip().replace("_", ""))
        except ValueError:
            window = 0
        if not sep or not pattern or window < MIN_WINDOW:
            raise ValueError(f"model window {entry!r}: expected 'pattern=tokens' with tokens"
                             f" >= {MIN_WINDOW}")
        out.append((pattern.lower(), window))
    return tuple(out)


def window_for(model: Any, cfg: ContextConfig) -> int:
    """The context window of ``model`` (a name; anything else → the default)."""
    return _matched_window(model, cfg)[0]


def _matched_window(model: Any, cfg: ContextConfig) -> tuple[int, bool]:
    """``model``'s window and whether a ``model_windows`` pattern gave it."""
    if not isinstance(model, str) or not model:
        return cfg.default_window_tokens, False
    return _window_for(model.lower(), cfg.model_windows, cfg.default_window_tokens)


@lru_cache(maxsize=512)
def _window_for(model: str, table: tuple[tuple[str, int], ...],
                default: int) -> tuple[int, bool]:
    short = model.rsplit("/", 1)[-1]
    for pattern, window in table:
        if fnmatch.fnmatchcase(model, pattern) or fnmatch.fnmatchcase(short, pattern):
            return window, True
    return default, False


def output_reserve(body: Mapping[str, Any], cfg: ContextConfig, window: int) -> int:
    """Tokens kept for the answer: the request's ``max_completion_tokens`` (or
    ``max_tokens``, or the Responses API's ``max_output_tokens``) when a positive
    integer, else ``cfg.output_reserve_tokens`` but at most a quarter of ``window``
    (a small local model keeps room for its input)."""
    for key in ("max_completion_tokens", "max_tokens", "max_output_tokens"):
        value = body.get(key)
        if isinstance(value, int) and not isinstance(value, bool) and value > 0:
            return value
    return min(cfg.output_reserve_tokens, window // 4)


@dataclass(frozen=True, slots=True)
class Budget:
    """One request's plan: ``window`` (and where it came from: ``table``, ``default``
    or ``learned``), the output ``reserve``, and ``input_tokens``, the most the
    forwarded request may count (never below 0); ``margin``: the tokens kept free
    beside them (``ContextConfig.margin_tokens``)."""

    window: int
    reserve: int
    input_tokens: int
    source: str
    margin: int = 0


def request_budget(body: Mapping[str, Any], cfg: ContextConfig, *, hard_limit: int | None = None,
                   limits: ContextLimits | None = None, model: str | None = None) -> Budget:
    """The budget of a request ``body`` (model, max tokens) under ``cfg``.

    ``hard_limit`` (``[compaction] hard_limit_tokens``) caps the input budget too;
    ``limits``: windows learned from context-length errors, which win when smaller.
    ``model``: the model to plan for when not the body's ``model`` (an Azure
    deployment's name, the body naming none).
    """
    if model is None:
        model = body.get("model")
    window, matched = _matched_window(model, cfg)
    source = "table" if matched else "default"
    learned = limits.get(model) if limits is not None else None
    if learned is not None and learned < window:
        window, source = learned, "learned"
    reserve = output_reserve(body, cfg, window)
    tokens = window - reserve - cfg.margin_tokens
    if hard_limit is not None:
        tokens = min(tokens, hard_limit)
    return Budget(window, reserve, max(0, tokens), source, cfg.margin_tokens)


# -- counting ---------------------------------------------------------------------
@lru_cache(maxsize=16384)
def _count(text: str) -> int:
    return count_tokens(text)


def _text_tokens(text: str) -> int:
    # Earlier turns come back on every request: their counts are remembered.
    return _count(text) if len(text) > 32 else count_tokens(text)


_JSON_PARTS = frozenset({"tool_use", "tool_result", "thinking", "redacted_thinking"})
"""Anthropic Messages blocks counted by their JSON (tool input and output can be
long; an image-sized constant would undercount them)."""

MAX_IMAGE_TOKENS = 1600
"""Tokens counted for one image of the Responses API (``input_image``) or Anthropic
Messages (``image``): about the most one image costs there (Anthropic scales an
image down past about 1,600 tokens; OpenAI's high-detail tiles of a 768×2048 image
count 1,445). Chat Completions ``image_url`` parts keep :data:`IMAGE_PART_TOKENS`."""
FILE_REF_TOKENS = 8192
"""Tokens counted for a file or document the request only refers to (``file_id``,
``file_url``, a URL source): its size is not in the request. An estimate, not a
bound (about six PDF pages, each read as text and as an image); a larger file's
context-length error teaches the proxy the rest (:class:`ContextLimits`)."""
INLINE_CHARS_PER_TOKEN = 4
"""An inline file's base64 ``data`` counts one token per this many characters (three
bytes: more than a text file's bytes give, a page image's share included), at least
:data:`MAX_IMAGE_TOKENS`."""
ENCRYPTED_CHARS_PER_TOKEN = 2
"""``encrypted_content`` (Responses reasoning and compaction items) counts one token
per this many characters: the model reads the decrypted text, whose size the
ciphertext hides; base64 of text compressed up to about 2.7 times at four bytes a
token still counts no more tokens than this gives."""

_IMAGE_TYPES = frozenset({"input_image", "image"})
_FILE_TYPES = frozenset({"input_file", "document", "file"})
_OTHER_MEDIA = frozenset({"image_url", "input_audio", "audio"})
"""Chat Completions media parts: :data:`IMAGE_PART_TOKENS` each (as before)."""
_SHOWN_ITEMS = frozenset({"message", "function_call", "custom_tool_call"})
"""Responses output items a turn's ``content``/``tool_calls`` already stand for."""
ITEMS_KEY = "items"
"""The key of a chat-shaped turn that holds its original wire items (the Responses
adapter's turns, :mod:`proxy.wire.responses`); those items the turn's content and
calls do not show (reasoning, hosted tools' calls) are counted from it."""


def _json_tokens(value: Any) -> int:
    try:
        return _text_tokens(orjson.dumps(value).decode())
    except TypeError:
        return count_tokens(str(value))


def _inline_data(part: dict[str, Any]) -> str | None:
    """The inline base64 (or text) data of a file part, if any."""
    for holder in (part, part.get("file"), part.get("source")):
        if isinstance(holder, dict):
            for key in ("file_data", "data"):
                if isinstance(holder.get(key), str):
                    return str(holder[key])
    return None


def _file_tokens(part: dict[str, Any]) -> int:
    source = part.get("source")
    if isinstance(source, dict) and source.get("type") == "text" and isinstance(
            source.get("data"), str):  # an Anthropic plain-text document
        return _text_tokens(source["data"])
    if isinstance(source, dict) and source.get("type") == "content":
        return _json_tokens(source.get("content"))
    data = _inline_data(part)
    if data is None:
        return FILE_REF_TOKENS
    return max(MAX_IMAGE_TOKENS, len(data) // INLINE_CHARS_PER_TOKEN)


def part_tokens(part: Any) -> int:
    """Tokens of one content part, block or wire item (see the constants above): its
    text; the JSON of tool blocks and of unknown types; an estimate for images,
    files and ``encrypted_content``; :data:`IMAGE_PART_TOKENS` for chat media."""
    if isinstance(part, str):
        return _text_tokens(part)
    if not isinstance(part, dict):
        return _json_tokens(part)
    kind = part.get("type")
    if isinstance(part.get("text"), str) and kind not in _FILE_TYPES:
        return _text_tokens(part["text"])
    if kind in _JSON_PARTS:
        return _json_tokens(part)
    if kind in _IMAGE_TYPES:
        return MAX_IMAGE_TOKENS
    if kind in _FILE_TYPES:
        return _file_tokens(part)
    encrypted = part.get("encrypted_content")
    if isinstance(encrypted, str):
        rest = {k: v for k, v in part.items() if k != "encrypted_content"}
        return len(encrypted) // ENCRYPTED_CHARS_PER_TOKEN + _json_tokens(rest)
    if kind in _OTHER_MEDIA or not isinstance(kind, str):
        return IMAGE_PART_TOKENS
    return _json_tokens(part)


def _base_tokens(msg: Any) -> int:
    """:func:`message_tokens` less :func:`item_tokens`: what a message's node key
    fixes (the part :class:`MessageCounts` remembers)."""
    if not isinstance(msg, dict):
        return MESSAGE_OVERHEAD + _text_tokens(orjson.dumps(msg).decode())
    total = MESSAGE_OVERHEAD
    content = msg.get("content")
    if isinstance(content, str):
        total += _text_tokens(content)
    elif isinstance(content, list):
        for part in content:
            total += part_tokens(part)
    elif content is not None:
        total += _text_tokens(orjson.dumps(content).decode())
    for key in ("name", "tool_call_id"):
        if isinstance(msg.get(key), str):
            total += _text_tokens(msg[key])
    calls = msg.get("tool_calls")
    if isinstance(calls, list):
        for call in calls:
            fn = call.get("function") if isinstance(call, dict) else None
            if isinstance(fn, dict):
                total += 3 + _text_tokens(str(fn.get("name") or "")) + _text_tokens(
                    fn["arguments"] if isinstance(fn.get("arguments"), str)
                    else orjson.dumps(fn.get("arguments")).decode())
            else:
                total += _text_tokens(orjson.dumps(call).decode())
    return total


def item_tokens(msg: Any) -> int:
    """Tokens of a Responses assistant turn's items that its content and calls do not
    show (:data:`ITEMS_KEY`): reasoning (``encrypted_content`` and summary), hosted
    tools' calls and results. 0 for any other message. Not part of a message's node
    key (an echo with or without its reasoning maps to the same node), so never
    remembered by id."""
    if not isinstance(msg, dict) or msg.get("role") != "assistant" or msg.get("opaque"):
        return 0
    items = msg.get(ITEMS_KEY)
    if not isinstance(items, list):
        return 0
    total = 0
    for item in items:
        if isinstance(item, dict) and item.get("type", "message") not in _SHOWN_ITEMS:
            total += part_tokens(item)
    return total


def message_tokens(msg: Any) -> int:
    """Tokens of one message as forwarded: its text (string content or text parts,
    other parts by :func:`part_tokens`), name, tool calls (names and arguments),
    tool call id and the items only its wire form shows (:func:`item_tokens`),
    plus :data:`MESSAGE_OVERHEAD`."""
    return _base_tokens(msg) + item_tokens(msg)


def media_upper_bound(raw: bytes) -> int:
    """Tokens a request's images and referred files may count beyond their JSON
    bytes: :data:`MAX_IMAGE_TOKENS` per quoted image type or key in ``raw``,
    :data:`FILE_REF_TOKENS` per quoted file type (an upper bound together with
    ``len(raw)``: a token is at least one byte of the JSON it came from, and the
    estimates for inline data and ``encrypted_content`` count fewer tokens than
    their bytes)."""
    images = (raw.count(b'"image_url"') + raw.count(b'"input_image"')
              + raw.count(b'"image"'))
    files = raw.count(b'"input_file"') + raw.count(b'"document"') + raw.count(b'"file"')
    return images * MAX_IMAGE_TOKENS + files * FILE_REF_TOKENS


def messages_tokens(messages: Sequence[Any]) -> int:
    """Tokens of a message list as forwarded (:func:`message_tokens` each, plus
    :data:`REQUEST_OVERHEAD`)."""
    return REQUEST_OVERHEAD + sum(message_tokens(m) for m in messages)


class MessageCounts:
    """:func:`message_tokens` of stored messages, by stored id, remembered (all
    but :func:`item_tokens`, which is counted each time).

    A stored id stands for one canonical message (its node key hashes role,
    content, name, tool calls and tool call id: every field
    :func:`message_tokens` reads), so its count never changes, and a resent
    history costs one lookup per message instead of a count. (The ``tokens``
    capture stores are of the searchable text, masked secrets and all, without
    the chat format: not what is forwarded.) Past ``max_ids`` the mapping is
    replaced whole. Thread-safe: entries are only added, each value computed
    from the message alone.
    """

    def __init__(self, max_ids: int = 100_000) -> None:
        self._max = max_ids
        self._counts: dict[int, int] = {}

    def total(self, messages: Sequence[Any], ids: Sequence[int]) -> int:
        """The sum of :func:`message_tokens` over ``messages``, whose stored ids
        are ``ids`` (aligned; raises ``ValueError`` otherwise)."""
        if len(messages) != len(ids):
            raise ValueError("messages and ids differ in length")
        counts = self._counts
        extra = sum(map(item_tokens, messages))
        values = list(map(counts.get, ids))
        try:
            return extra + sum(cast("list[int]", values))  # every count known
        except TypeError:
            pass
        fresh = {}
        for k, value in enumerate(values):
            if value is None:
                values[k] = fresh[ids[k]] = _base_tokens(messages[k])
        if len(counts) + len(fresh) > self._max:
            self._counts = counts = {}
        counts.update(fresh)
        return extra + sum(cast("list[int]", values))


def tools_tokens(tools: Any) -> int:
    """Tokens of a ``tools`` array (its JSON; 0 for none)."""
    if not tools:
        return 0
    try:
        return _count(orjson.dumps(tools).decode())
    except TypeError:
        return count_tokens(str(tools))


# -- context-length errors ----------------------------------------------------------
_CONTEXT_ERROR = re.compile(
    r"(?i)context_length_exceeded|context[_ ]window[_ ]exceeded|ContextWindowExceeded|"
    r"exceed_context_size|maximum context length|max(?:imum)? model length|"
    r"context (?:size|length|window) (?:has been |was )?exceeded|exceeds? (?:the )?"
    r"(?:available |maximum |max )?context (?:size|length|window)|"
    r"(?:input|prompt) (?:is )?too long|prompt is longer than|"
    r"larger than the max context size|too many (?:input )?tokens|"
    r"reduce the length of the (?:messages|prompt)|maximum prompt length|"
    r"longer than the maximum model length|n_ctx")
_NOT_CONTEXT = re.compile(r"(?i)per min|tokens per (?:minute|day)|\bTPM\b|rate.?limit|quota")
_STATED = (
    re.compile(r"(?i)maximum context length is (\d+)"),
    re.compile(r"(?i)maximum model length (?:is |of )?(\d+)"),
    re.compile(r"(?i)max_model_len[\"'=: ]+(\d+)"),
    re.compile(r"(?i)\"n_ctx\"\s*:\s*(\d+)"),
    re.compile(r"(?i)n_ctx[=: ]+(\d+)"),
    re.compile(r"(?i)(?<!\d)\d+ tokens? > (\d+) maximum"),  # (?<!\d): linear in digits
    re.compile(r"(?i)context (?:window|size|length) (?:of|is) (\d+)"),
    re.compile(r"(?i)limit (?:is |of )?(\d+) tokens"),
)
_THEIRS = (
    re.compile(r"(?i)(?:resulted in|requested) (\d+) tokens"),
    re.compile(r"(?i)\((\d+) in the messages"),
    re.compile(r"(?i)prompt \(length (\d+)\)"),
    re.compile(r"(?i)\"n_prompt_tokens\"\s*:\s*(\d+)"),
    re.compile(r"(?i)prompt is too long: (\d+) tokens"),
    re.compile(r"(?i)(?<!\d)(\d+) tokens? > \d+ maximum"),
)


@dataclass(frozen=True, slots=True)
class ContextError:
    """An upstream's answer that the request did not fit: the window it states
    (``limit``) and the tokens it counted in the prompt (``counted``), when given."""

    limit: int | None
    counted: int | None
    message: str


def context_error(status: int, body: bytes) -> ContextError | None:
    """Recognise a context-length error (OpenAI/Azure ``context_length_exceeded``,
    vLLM's "maximum context length"/"maximum model length", llama.cpp's
    ``exceed_context_size_error``/``n_ctx``, Ollama, LiteLLM's
    ``ContextWindowExceededError``, Anthropic-style "prompt is too long") in an error
    answer: ``status`` 400, 413, 422 or 500 and a body naming it. Rate-limit and
    quota answers ("tokens per min") are not context errors. ``None`` otherwise."""
    if status not in (400, 413, 422, 500) or not body:
        return None
    text = body[:16384].decode("utf-8", "replace")
    if not _CONTEXT_ERROR.search(text) or _NOT_CONTEXT.search(text):
        return None
    message = text
    try:
        obj = orjson.loads(body)
        err = obj.get("error") if isinstance(obj, dict) else None
        if isinstance(err, dict) and isinstance(err.get("message"), str):
            message = err["message"]
        elif isinstance(err, str):
            message = err
    except orjson.JSONDecodeError:
        pass

    def first(patterns: tuple[re.Pattern[str], ...]) -> int | None:
        for pat in patterns:
            m = pat.search(text)
            if m:
                return int(m.group(1))
        return None

    return ContextError(first(_STATED), first(_THEIRS), message[:500])


class ContextLimits:
    """Context windows learned from upstream errors, per model name (in memory,
    thread-safe; this process only)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._windows: dict[str, int] = {}

    def get(self, model: Any) -> int | None:
        """The learned window of ``model``, or ``None``."""
        if not isinstance(model, str):
            return None
        with self._lock:
            return self._windows.get(model)

    def learn(self, model: Any, budget: Budget, error: ContextError, sent_tokens: int) -> int:
        """Record a smaller window for ``model`` after ``error`` answered a request of
        ``sent_tokens`` (our count) planned with ``budget``; return it.

        The new window is the stated limit, scaled by our count over the server's
        when both are known (another tokenizer), and always at most 90 % of the
        window that failed; 75 % of it when the error states nothing.
        """
        failed = min(budget.window, budget.input_tokens + budget.reserve + budget.margin)
        failed = max(failed, sent_tokens + budget.reserve)
        if error.limit is not None:
            window = error.limit
            if error.counted and sent_tokens:
                window = int(window * min(1.0, sent_tokens / error.counted))
            window = min(window, int(failed * 0.9))
        else:
            window = int(failed * 0.75)
        window = max(MIN_WINDOW, window)
        if isinstance(model, str):
            with self._lock:
                old = self._windows.get(model)
                self._windows[model] = window if old is None else min(old, window)
        return window
