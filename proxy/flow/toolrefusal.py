"""Upstreams that refuse tools: the memory tools are taken off and not offered again.

Many OpenAI-compatible servers serve models without tool calling: Ollama answers
``400 "… does not support tools"``, llama.cpp without ``--jinja`` ``"tools param
requires --jinja flag"``, vLLM without a tool parser ``"auto" tool choice requires
--enable-auto-tool-choice``, some hosted models ``"Unsupported parameter: 'tools'"``.
The memory tools are the proxy's addition, so such an error must not reach the
client: the first round is sent again without them (:func:`without_memory_tools`),
once, before any byte reached the client, and the model is remembered
(:class:`ToolRefusals`) so that its later requests go without them from the start.
A request whose own tools the upstream refuses gets the upstream's error for the
request as the client sent it (the retry's answer).
"""

from __future__ import annotations

import re
import threading
from typing import Any

import orjson

_REFUSAL = re.compile(
    r"(?:does ?n[o']t|do not|doesn't|cannot|can't) (?:support|use) (?:tools|tool[ _]?(?:use|call"
    r"|calling|s)|function[ _]?call(?:ing|s)?)"
    r"|(?:tools?|tool[ _]?(?:use|call(?:ing|s)?)|function[ _]?call(?:ing|s)?)"
    r" (?:is|are) not (?:supported|available|enabled|allowed)"
    r"|unsupported (?:parameter|field|argument)\W+\W*tools\b"
    r"|tools param requires|tool choice requires|--enable-auto-tool-choice"
    r"|(?:tools|functions) (?:are|is) not (?:supported|allowed) (?:for|with|by)",
    re.IGNORECASE)
"""Error texts that say the model or server takes no tools (not that a tool was
malformed)."""

MAX_MODELS = 4096
"""Most models one process remembers as refusing tools."""


def tools_refused(status: int, body: bytes) -> bool:
    """True when an upstream error (``status`` ≥ 400, its ``body``) says the model or
    server does not take tools at all."""
    if status < 400 or not body:
        return False
    try:
        obj: Any = orjson.loads(body)
    except orjson.JSONDecodeError:
        text = body[:4000].decode("utf-8", "replace")
    else:
        err = obj.get("error") if isinstance(obj, dict) else None
        message = err.get("message") if isinstance(err, dict) else err
        text = message if isinstance(message, str) else body[:4000].decode("utf-8", "replace")
    return _REFUSAL.search(text) is not None


def _tool_name(tool: Any) -> Any:
    if not isinstance(tool, dict):
        return None
    fn = tool.get("function")
    return fn.get("name") if isinstance(fn, dict) else tool.get("name")


def without_memory_tools(body: dict[str, Any], offered: set[str]) -> dict[str, Any]:
    """A copy of ``body`` without the tools named ``offered`` (the memory tools as
    offered); without ``tools`` when none is left (the client sent none)."""
    out = dict(body)
    kept = [t for t in body.get("tools") or [] if _tool_name(t) not in offered]
    if kept:
        out["tools"] = kept
    else:
        out.pop("tools", None)
    return out


class ToolRefusals:
    """Models (by upstream URL and ``model``) whose upstream refused tools in this
    process; thread-safe, bounded (:data:`MAX_MODELS`, oldest forgotten first)."""

    def __init__(self) -> None:
        self._seen: dict[tuple[str, str], None] = {}
        self._lock = threading.Lock()

    def learn(self, upstream: str, model: Any) -> None:
        """Remember that ``model`` at ``upstream`` refuses tools."""
        if not isinstance(model, str):
            return
        with self._lock:
            self._seen.pop((upstream, model), None)
            self._seen[(upstream, model)] = None
            while len(self._seen) > MAX_MODELS:
                del self._seen[next(iter(self._seen))]

    def refuses(self, upstream: str, model: Any) -> bool:
        """True when ``model`` at ``upstream`` refused tools before."""
        return isinstance(model, str) and (upstream, model) in self._seen
