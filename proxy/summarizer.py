"""The ``llm`` summarizer: summaries written by a model through chat completions.

memory_core never does HTTP; this class lends it a synchronous ``summarize`` that
runs the request on the proxy's event loop and waits for it from the compaction
worker thread. Its answer is validated by the engine (non-empty, under the cap,
citing only covered message ids) and replaced by the extractive summary otherwise.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import aiohttp
import orjson

from memory_core.compaction.compressor import PathMessage, SummaryNode

PROMPT = """You write the summary of part of a conversation between a user and an AI agent.
The summary replaces these messages in the agent's context, so keep what the agent needs:
1. Timeline of events.  2. Key decisions and constraints.  3. Pitfalls and failed attempts.
4. Files and directories touched.  5. Identifiers and exact numbers (with units).
6. Open threads.
Rules: every line starts with "- " and cites its source as [msg N] using the ids given;
never cite other ids; keep exact values; no preamble; at most {cap} tokens."""


class LLMSummarizer:
    """Summaries from ``model`` at ``base_url`` (OpenAI-compatible), timeout in seconds.

    ``api_key``: used as ``Authorization: Bearer``; may be empty for keyless upstreams.
    ``summarize`` raises on HTTP errors, timeouts and answers without text.
    """

    def __init__(self, session: aiohttp.ClientSession, loop: asyncio.AbstractEventLoop, *,
                 base_url: str, model: str, api_key: str, timeout: float) -> None:
        self.session, self.loop = session, loop
        self.url = base_url.rstrip("/") + "/chat/completions"
        self.model, self.api_key, self.timeout = model, api_key, timeout

    def summarize(self, messages: Sequence[PathMessage], level: int,
                  children: Sequence[SummaryNode], cap_tokens: int) -> str:
        """Return the model's summary text (called from a worker thread)."""
        if children:
            source = "\n\n".join(f"Summary of messages {c.first}-{c.last}:\n{c.text}"
                                 for c in children)
        else:
            source = "\n".join(f"[msg {m.id}] {m.role}: {m.text[:4000]}" for m in messages)
        body = {
            "model": self.model,
            "messages": [
                {"role": "system", "content": PROMPT.format(cap=cap_tokens)},
                {"role": "user", "content": source},
            ],
            "temperature": 0,
        }
        fut = asyncio.run_coroutine_threadsafe(self._post(body), self.loop)
        return fut.result(self.timeout + 5)

    async def _post(self, body: dict[str, Any]) -> str:
        headers = {"Content-Type": "application/json"}
        if self.api_key:
            headers["Authorization"] = f"Bearer {self.api_key}"
        async with self.session.post(
            self.url, data=orjson.dumps(body), headers=headers,
            timeout=aiohttp.ClientTimeout(total=self.timeout),
        ) as resp:
            raw = await resp.read()
        if resp.status >= 400:
            raise RuntimeError(f"summarizer upstream answered {resp.status}")
        obj = orjson.loads(raw)
        text = obj["choices"][0]["message"]["content"]
        if not isinstance(text, str):
            raise RuntimeError("summarizer answer has no text")
        return text
