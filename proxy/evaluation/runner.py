"""Drive one session through one system: real SDK → real proxy → scripted fake upstream.

For every request the harness sends the same body twice, through the proxy and
straight to the fake (``X-Eval-Direct``), alternating which goes first, so the
latency the proxy adds is measured against direct calls in the same run. Before
each turn it waits for the proxy's background work (response capture, embedding
and indexing, compaction) — the time a model's answer would give it — so latency
figures are the request path's own. Before the question block, lcm-proxy's search
is asked every question (retrieval, on the
complete conversation); after each question, what the upstream received is
checked against the answer key (coverage, superseded values). At the end the
store is checked.

Numbers: latencies in milliseconds (client wall clock, request sent → answer
parsed by the SDK); tokens are o200k tokens of message text plus 4 per message.
"""

from __future__ import annotations

import asyncio
import gc
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import openai
import orjson
from aiohttp import web
from openai._response import AsyncAPIResponse
from openai.types.chat import ChatCompletion

from memory_core.compaction.compressor import SCAFFOLD_HEADER
from memory_core.errors import MemoryError_
from memory_core.store.api import Tx
from proxy.app import create_app, freeze_startup_heap
from proxy.appkeys import ENGINE, TASKS
from proxy.evaluation import metrics, storecheck
from proxy.evaluation.chatter import TOOLS
from proxy.evaluation.fake import DIRECT_HEADER, EvalUpstream
from proxy.evaluation.generator import KeyItem, Session, Turn
from proxy.evaluation.systems import SUMMARY_BUDGET_TOKENS, Client, baseline_overrides
from proxy.scope import tenant_for_key
from proxy.settings import load_settings

API_KEY = "sk-eval-0123456789abcdef"
ROLE = "default"
RETRIEVAL_K = 10
SETTLE_TIMEOUT_S = 300.0
INDEXER_FAILING_S = 30.0
"""Seconds of failing indexer steps, none succeeding, after which a run stops
(:func:`_wait_indexed`)."""


@dataclass
class RequestRecord:
    """One upstream request: ``turn``, ``opens_turn`` (ends with the user message),
    ``proxy_ms``/``direct_ms``, ``client_tokens``/``upstream_tokens``/``raw_tokens``
    (whole history), ``memory_tokens`` (block or notes), ``prefix`` (cacheable
    share vs the previous request, on :func:`metrics.rendered_prompt` bytes, ``None``
    first; ``prefix_bytes``/``body_bytes`` its parts), ``rewrite`` (history
    rewritten since the previous request), and per-request invariant flags."""

    turn: int
    opens_turn: bool
    proxy_ms: float
    direct_ms: float
    client_tokens: int
    upstream_tokens: int
    raw_tokens: int
    memory_tokens: int
    prefix: float | None
    rewrite: bool
    answered: bool
    not_failed_open: bool
    system_first: bool
    tool_pairs: bool
    within_budget: bool
    client_unchanged: bool
    prefix_bytes: int = 0
    body_bytes: int = 0


@dataclass
class QuestionRecord:
    """One question: coverage, stale lines (superseded values shown as current),
    retrieval (``None`` when the system has no search) and the top hit's text."""

    item: str
    category: str
    lang: str
    covered: bool
    stale: list[str]
    recall: bool | None = None
    rank1: bool | None = None
    top_hit: str | None = None


@dataclass
class SessionResult:
    """Everything measured for one (system, session); JSON-ready via ``asdict``."""

    system: str
    session: str
    n_turns: int
    lang: str
    requests: list[RequestRecord] = field(default_factory=list)
    questions: list[QuestionRecord] = field(default_factory=list)
    storage: list[dict[str, Any]] | None = None
    tasks: list[dict[str, Any]] | None = None
    store_invariants: dict[str, bool | None] = field(default_factory=dict)
    wall_s: float = 0.0


def _settings(system: str, upstream: str, data_dir: Path, embedding: str | None,
              tables: Mapping[str, Mapping[str, Any]] | None = None) -> Any:
    """The settings of one system's proxy: defaults, then ``tables`` (the ``[embedding]``
    and ``[search]`` of ``lcm-proxy eval --config``), then what the eval fixes itself
    (upstream, loopback address, data directory, the baselines' memory off) and the
    ``embedding`` provider override. The environment is never read."""
    overrides: dict[str, dict[str, Any]] = {k: dict(v) for k, v in (tables or {}).items()}
    overrides.update({
        "proxy": {"upstream": upstream, "host": "127.0.0.1", "port": 0},
        "storage": {"data_dir": str(data_dir)},
    })
    if system != "lcm":
        overrides.update(baseline_overrides())
    if embedding:
        overrides.setdefault("embedding", {})["provider"] = embedding
    return load_settings(None, environ={}, overrides=overrides)


async def _settle(app: web.Application) -> None:
    """Wait for the proxy's background tasks, queued writes and the search indexer
    (embedding and commit), as a model's answer time would let them finish."""
    loop = asyncio.get_running_loop()
    for _ in range(10):  # a finished capture may schedule a compaction
        if not len(app[TASKS]):
            break
        await app[TASKS].drain(SETTLE_TIMEOUT_S)
    engine = app[ENGINE]
    await loop.run_in_executor(None, engine.flush, SETTLE_TIMEOUT_S)
    if engine.search is not None:
        await loop.run_in_executor(None, _wait_indexed, engine.search)


class EvalAborted(RuntimeError):
    """The run cannot measure what it says it measures (e.g. the proxy's search
    indexer keeps failing: an embeddings endpoint that went down)."""


def _wait_indexed(search: Any) -> None:
    """Wait for the search indexer, up to :data:`SETTLE_TIMEOUT_S` (then go on, as
    before: a slow local embedder catches up later). Raises :class:`EvalAborted`
    when its steps have failed without a success in between for
    :data:`INDEXER_FAILING_S` seconds: the proxy fails open and retries, so the run
    would go on for hours measuring search without the configured embedder."""
    deadline = time.monotonic() + SETTLE_TIMEOUT_S
    failing_since: float | None = None
    while time.monotonic() < deadline:
        if search.wait_idle(min(1.0, max(0.0, deadline - time.monotonic()))):
            return
        errors = dict(search.indexer.errors)
        if not errors:
            failing_since = None
        elif failing_since is None:
            failing_since = time.monotonic()
        elif time.monotonic() - failing_since >= INDEXER_FAILING_S:
            raise EvalAborted(
                f"the proxy's search indexer has failed for {INDEXER_FAILING_S:.0f} s: "
                + "; ".join(f"{k}: {v}" for k, v in sorted(errors.items())))


def _hit_text(tx: Tx, kind: str, ref: int) -> tuple[str, str | None]:
    r = tx.operator.ref_row(kind if kind in ("item", "message", "summary") else "agent_memory",
                            ref)
    if r is None:
        return "", None
    if kind == "item":
        return r["text"], r["status"]
    if kind in ("message", "summary"):
        return r["text"], None
    return f"{r['title']}: {r['content']}", None


def retrieve(engine: Any, tenant: str, item: KeyItem) -> tuple[bool | None, bool | None, str]:
    """Search lcm-proxy's store for the question; (recall@10, rank-1, top hit text).

    The question is embedded here without the request path's time limit
    (``search.query_timeout_seconds``), so retrieval quality is measured apart from
    latency; the request path's fallbacks to BM25 are counted in ``meta.proxy_log``.
    Raises :class:`EvalAborted` when the embedder fails.
    """
    if engine.search is None:
        return None, None, ""
    vector = None
    if engine.search.embedder is not None:
        try:
            vector = np.asarray(engine.search.embedder.embed_queries([item.question])[0],
                                dtype=np.float32)
        except MemoryError_ as exc:  # e.g. an embeddings endpoint that went down
            raise EvalAborted(f"embedding the question {item.id} failed: {exc}") from exc
    hits = engine.search.search(tenant, ROLE, item.question, k=RETRIEVAL_K,
                                query_vector=vector)
    texts = engine.store.read_tx(lambda tx: [_hit_text(tx, h.kind, h.ref_id)
                                             for h in hits])
    matches = [metrics.hit_matches(t, s, item.current) for t, s in texts]
    top = f"{hits[0].kind}:{hits[0].ref_id} {texts[0][0][:160]}" if hits else ""
    return any(matches), bool(matches) and matches[0], top


class _Exchange:
    """Sends requests of one (system, session) and measures them."""

    def __init__(self, system: str, session: Session, fake: EvalUpstream, proxy_url: str,
                 budget: int) -> None:
        self.system, self.session, self.fake, self.budget = system, session, fake, budget
        headers = {"X-LCM-Session": session.id}
        self.proxy = openai.AsyncOpenAI(base_url=proxy_url, api_key=API_KEY, max_retries=0,
                                        timeout=600, default_headers=headers)
        self.direct = openai.AsyncOpenAI(base_url=fake.base_url, api_key=API_KEY,
                                         max_retries=0, timeout=600,
                                         default_headers={**headers, DIRECT_HEADER: "1"})
        self.counter = metrics.TokenCounter()
        self.count = 0
        self.prev_raw: bytes | None = None
        self.prev_scaffold: str | None = None

    async def close(self) -> None:
        await self.proxy.close()
        await self.direct.close()

    async def _call(self, client: openai.AsyncOpenAI, body: dict[str, Any]
                    ) -> tuple[float, int, str | None, ChatCompletion]:
        t0 = time.perf_counter()
        resp = await client.post("/chat/completions", body=body,
                                 cast_to=AsyncAPIResponse[ChatCompletion])
        parsed = await resp.parse()
        return ((time.perf_counter() - t0) * 1000.0, resp.status_code,
                resp.headers.get("x-lcm-memory"), parsed)

    async def send(self, turn: int, shaped: Any, history: list[dict[str, Any]],
                   answer: str | None, tool_call: dict[str, Any] | None
                   ) -> tuple[RequestRecord, list[Any]]:
        """One request through the proxy and one direct; returns its record and the
        messages the upstream received."""
        body = {"model": "eval-model", "messages": shaped.messages, "tools": TOOLS}
        before = orjson.dumps(shaped.messages)
        self.fake.script(answer, tool_call)
        if self.count % 2 == 0:
            p = await self._call(self.proxy, body)
            d = await self._call(self.direct, body)
        else:
            d = await self._call(self.direct, body)
            p = await self._call(self.proxy, body)
        self.count += 1
        sent = orjson.loads(self.fake.take())
        upstream = sent["messages"]
        raw = metrics.rendered_prompt(sent)  # what a provider's prompt cache compares
        msg = p[3].choices[0].message
        calls = msg.tool_calls or []
        answered = p[1] == 200 and (msg.content == answer if tool_call is None else bool(
            calls) and calls[0].id == tool_call["id"])
        scaffold = next((m.get("content") for m in upstream if isinstance(m, dict) and
                         isinstance(m.get("content"), str) and
                         m["content"].startswith(SCAFFOLD_HEADER)), None)
        if self.system == "lcm":
            rewrite = self.prev_raw is not None and scaffold != self.prev_scaffold
            memory_tokens = self.counter.text(metrics.block_text(upstream))
            within = memory_tokens <= self.budget
        else:
            rewrite = shaped.rewrote
            memory_tokens = shaped.memory_tokens
            within = memory_tokens <= SUMMARY_BUDGET_TOKENS
        first = upstream[0] if upstream else {}
        record = RequestRecord(
            turn=turn, opens_turn=history[-1].get("role") == "user",
            proxy_ms=p[0], direct_ms=d[0],
            client_tokens=self.counter.request(shaped.messages),
            upstream_tokens=self.counter.request(upstream),
            raw_tokens=self.counter.request(history), memory_tokens=memory_tokens,
            prefix=metrics.prefix_share(self.prev_raw, raw), rewrite=rewrite,
            prefix_bytes=metrics.common_prefix(self.prev_raw or b"", raw), body_bytes=len(raw),
            answered=answered, not_failed_open=p[2] != "failed-open",
            system_first=isinstance(first, dict) and first.get("role") == "system"
            and str(first.get("content", "")).startswith(self.session.system),
            tool_pairs=metrics.tool_pairs_ok(upstream), within_budget=within,
            client_unchanged=orjson.dumps(shaped.messages) == before,
        )
        self.prev_raw, self.prev_scaffold = raw, scaffold
        return record, upstream


async def run_session(system: str, session: Session, fake: EvalUpstream, root: Path, *,
                      embedding: str | None = None,
                      tables: Mapping[str, Mapping[str, Any]] | None = None,
                      tick: Callable[[], None] = lambda: None) -> SessionResult:
    """Run ``session`` through ``system`` (no_memory | rolling_summary | lcm).

    Starts a proxy with its own data directory under ``root``; ``embedding``
    overrides the embedding provider (tests use ``hashing``); ``tables``: settings
    tables applied first (:func:`_settings`); ``tick`` is called after every turn.
    Returns the :class:`SessionResult`. Raises what the SDK raises if a request
    fails outright (the proxy fails open, so it should not).
    """
    started = time.perf_counter()
    settings = _settings(system, fake.base_url, root / system / session.id, embedding, tables)
    app = create_app(settings)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    # As `lcm-proxy serve` does once started: the freeze is undone below; the raised
    # GC threshold stays for the process (every system and the client share it).
    freeze_startup_heap()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    engine = app[ENGINE]
    tenant = tenant_for_key(API_KEY, settings.proxy.tenant_salt or engine.tenant_salt)
    result = SessionResult(system, session.id, session.n_turns, session.lang)
    extra = ""
    if system == "lcm":
        for pref in session.cli_prefs:  # what `lcm-proxy memory prefs set --tenant T` does
            engine.set_agent_memory(tenant=tenant, role=ROLE, category="user_preferences",
                                    key=pref.key, title=pref.title, content=pref.content,
                                    on_duplicate="refuse")
    else:
        extra = "User preferences:\n" + "\n".join(f"- {p.title}: {p.content}"
                                                  for p in session.cli_prefs)
    ex = _Exchange(system, session, fake, url, settings.injection.soft_budget_tokens)
    client = Client(system, ex.counter, extra)
    history: list[dict[str, Any]] = [{"role": "system", "content": session.system}]
    first_question = min(k.question_turn for k in session.key)
    retrieval: dict[str, tuple[bool | None, bool | None, str]] = {}
    try:
        for turn in session.turns:
            item = session.key_item(turn.asks) if turn.asks else None
            await _settle(app)
            if turn.index == first_question and system == "lcm":
                # Once the conversation is complete, before any question is stored, so
                # that the questions asked in a row are not each other's candidates.
                for k in session.key:
                    retrieval[k.id] = await asyncio.get_running_loop().run_in_executor(
                        None, retrieve, engine, tenant, k)
            upstream = await _turn(ex, client, history, turn, result)
            if item is not None:
                result.questions.append(metrics_for_question(
                    item, upstream, retrieval.get(item.id, (None, None, ""))))
            tick()
        await _settle(app)
        view = engine.store.read_tx(storecheck.load_view, tenant, ROLE, session.id)
        # Baselines send a system prompt of their own (preferences, notes): their
        # evidence is checked on the conversation after it.
        sent = history if system == "lcm" else history[1:]
        result.store_invariants = storecheck.store_invariants(view, sent,
                                                              whole_history=system == "lcm")
        if system == "lcm":
            result.storage = storecheck.storage_assertions(session.key, view)
            result.tasks = storecheck.task_accuracy(session.tasks, view)
    finally:
        await ex.close()
        await runner.cleanup()
        # Frozen objects are never collected: without this, every session's app,
        # engine and indexes would outlive it in this process.
        gc.unfreeze()
    result.wall_s = time.perf_counter() - started
    return result


async def _turn(ex: _Exchange, client: Client, history: list[dict[str, Any]], turn: Turn,
                result: SessionResult) -> list[Any]:
    """Send one user turn (and, for a tool turn, the tool result); return what the
    upstream received for the turn's last request."""
    history.append({"role": "user", "content": turn.text})
    upstream: list[Any] = []
    if turn.tool is not None:
        call = {"id": turn.tool.call_id, "name": turn.tool.name,
                "arguments": turn.tool.arguments}
        record, upstream = await ex.send(turn.index, client.shape(history), history, None, call)
        result.requests.append(record)
        history.append({"role": "assistant", "content": None, "tool_calls": [
            {"id": call["id"], "type": "function",
             "function": {"name": call["name"], "arguments": call["arguments"]}}]})
        history.append({"role": "tool", "tool_call_id": call["id"],
                        "content": turn.tool.result})
    record, upstream = await ex.send(turn.index, client.shape(history), history, turn.reply,
                                     None)
    result.requests.append(record)
    history.append({"role": "assistant", "content": turn.reply})
    return upstream


def metrics_for_question(item: KeyItem, upstream: list[Any],
                         retrieval: tuple[bool | None, bool | None, str]) -> QuestionRecord:
    """Coverage and superseded-as-current of one question's upstream request."""
    return QuestionRecord(item=item.id, category=item.category, lang=item.lang,
                          covered=metrics.covered(upstream, item.current),
                          stale=metrics.stale_lines(upstream, item.current, item.superseded),
                          recall=retrieval[0], rank1=retrieval[1], top_hit=retrieval[2] or None)

