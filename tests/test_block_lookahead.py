"""The block's searches run ahead of the request's capture (issue 28): the block is
the one a live search gives, assembly searches nothing again when the query matches,
and searches live when it does not, when a search ahead failed or never started.
Through the proxy, the searches ahead run while the writer still captures."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from memory_core.assembly import lookahead
from memory_core.engine import Engine
from memory_core.models import CaptureResult, Scope
from tests.conftest import start_proxy
from tests.fake_upstream import FakeUpstream
from tests.test_search_support import Conversation, open_service

SCOPE = Scope("t_ahead", role="coder")
SAID = [
    ("Our staging database listens on port 5433.", "Noted."),
    ("The deploy window is Tuesday 14:00 UTC.", "Got it."),
    ("We use Grafana for dashboards and Loki for logs.", "OK."),
    ("The auth service runs 3 replicas behind nginx.", "Understood."),
]
QUESTION = "Which port does the staging database listen on?"


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    eng = Engine(tmp_path / "data")
    eng.attach_search(open_service(tmp_path / "data", eng))
    chat = Conversation(eng, SCOPE)
    for text, reply in SAID:
        chat.say(text, reply)
    eng.store.flush()
    assert eng.search is not None and eng.search.wait_idle(30)
    yield eng
    eng.close()


def _capture(engine: Engine, text: str) -> CaptureResult:
    """``text`` opening a new conversation of the scope (what was said before is
    out of its view: the block recalls it)."""
    _ticket, fut = engine.capture_request(SCOPE, "r-ask", [{"role": "user", "content": text}],
                                          {})
    return fut.result(10)


class Counting:
    """``engine.searcher`` with its calls counted (the real search runs)."""

    def __init__(self, engine: Engine) -> None:
        self.live, self.calls = engine.searcher, 0
        engine.searcher = self  # type: ignore[method-assign]

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        self.calls += 1
        return self.live(*args, **kwargs)


def _ahead(engine: Engine, text: str) -> Future[lookahead.BlockSearches]:
    with ThreadPoolExecutor(1) as pool:
        fut = pool.submit(engine.search_ahead, SCOPE, text, True)
    fut.result(10)
    return fut


def test_the_block_is_the_live_searchs_and_nothing_is_searched_again(engine: Engine) -> None:
    result = _capture(engine, QUESTION)
    live = engine.assemble(SCOPE, result, QUESTION, "r1")
    assert "5433" in live.block
    ahead = _ahead(engine, QUESTION)
    assert (("item",), engine.config.max_items * 2) in ahead.result().hits
    counting = Counting(engine)
    found = engine.assemble(SCOPE, result, QUESTION, "r2", ahead=ahead)
    assert counting.calls == 0
    assert found.block == live.block
    assert found.items_injected == live.items_injected


def test_another_query_or_a_failed_search_ahead_searches_live(engine: Engine) -> None:
    result = _capture(engine, QUESTION)
    live = engine.assemble(SCOPE, result, QUESTION, "r1")
    counting = Counting(engine)
    other = _ahead(engine, "When is the deploy window?")
    assert engine.assemble(SCOPE, result, QUESTION, "r2", ahead=other).block == live.block
    assert counting.calls >= 1

    failed: Future[lookahead.BlockSearches] = Future()
    failed.set_exception(RuntimeError("index closed"))
    counting.calls = 0
    assert engine.assemble(SCOPE, result, QUESTION, "r3", ahead=failed).block == live.block
    assert counting.calls >= 1


def test_a_search_ahead_not_started_never_runs(engine: Engine) -> None:
    result = _capture(engine, QUESTION)
    live = engine.assemble(SCOPE, result, QUESTION, "r1")
    gate = threading.Event()
    with ThreadPoolExecutor(1) as pool:
        pool.submit(gate.wait, 10)  # the only worker is busy
        queued = pool.submit(engine.search_ahead, SCOPE, QUESTION, True)
        found = engine.assemble(SCOPE, result, QUESTION, "r2", ahead=queued)
        gate.set()
    assert queued.cancelled()
    assert found.block == live.block


async def test_the_proxy_searches_while_the_writer_captures(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    running = await start_proxy(upstream.base_url, tmp_path / "data")
    try:
        import openai

        client = openai.AsyncOpenAI(base_url=f"http://127.0.0.1:{running.port}/v1",
                                    api_key="sk-test", max_retries=0)
        history: list[Any] = []
        for said, _reply in SAID:
            history.append({"role": "user", "content": said})
            out = await client.chat.completions.create(model="gpt-4o-mini", messages=history)
            history.append({"role": "assistant", "content": out.choices[0].message.content})
        await running.settle()
        engine = running.engine
        assert engine.search is not None and engine.search.wait_idle(30)

        # When each of the block's searches ran, against the capture of the same request.
        searched: list[float] = []
        captured: list[float] = []
        live_search, live_capture = engine.searcher, engine.captures._capture_request_job

        def searcher(*args: Any, **kwargs: Any) -> Any:
            searched.append(time.monotonic())
            return live_search(*args, **kwargs)

        def capture_job(*args: Any, **kwargs: Any) -> Any:
            try:
                time.sleep(0.2)  # a slow capture: the searches ahead finish first
                return live_capture(*args, **kwargs)
            finally:
                captured.append(time.monotonic())

        engine.searcher = searcher  # type: ignore[method-assign]
        engine.captures._capture_request_job = capture_job  # type: ignore[method-assign]
        # A new conversation asks: the block recalls the port from the first one.
        await client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": QUESTION}])
        await client.close()
        assert "5433" in upstream.requests[-1]["json"]["messages"][-1]["content"]
        assert captured and searched
        assert max(searched) < captured[-1]  # every search ran before the capture ended
    finally:
        await running.close()


_ITEMS: list[Any] = [
    {"role": "user", "content": "Which port does staging use?"},
    {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "And prod?"}]},
    {"type": "message", "role": "assistant",
     "content": [{"type": "output_text", "text": "5433."}]},
    {"type": "reasoning", "summary": []},
    {"type": "function_call", "call_id": "c1", "name": "f", "arguments": "{}"},
    {"type": "function_call_output", "call_id": "c1", "output": "ok"},
    {"role": "developer", "content": "Be brief."},
    {"type": "item_reference", "id": "x"},
]


@pytest.mark.parametrize("tail", [[], *([i] for i in _ITEMS), _ITEMS[2:4], _ITEMS[3:5]])
@pytest.mark.parametrize("head", [[], _ITEMS[:3]])
def test_the_responses_query_is_its_last_turns_without_converting_the_rest(
        monkeypatch: pytest.MonkeyPatch, head: list[Any], tail: list[Any]) -> None:
    """The query the searches ahead use is the one the plan assembles with, read on
    the event loop from the last input item alone when that is a turn of its own."""
    from proxy import rewrite
    from proxy.flow import plan
    from proxy.wire import responses
    from proxy.wire.responses import RESPONSES

    body: dict[str, Any] = {"model": "m", "instructions": "Be kind.", "input": head + tail}
    turns = RESPONSES.messages(body)
    at = rewrite.newest_user_index(turns)
    expected = plan.message_text(turns[at]) if at is not None else ""
    assert RESPONSES.last_message(body) == (turns[-1] if turns else None)
    converted: list[int] = []
    live = responses.to_turns

    def to_turns(items: list[Any]) -> list[dict[str, Any]]:
        converted.append(len(items))
        return live(items)

    monkeypatch.setattr(responses, "to_turns", to_turns)
    long = dict(body, input=[*_ITEMS[:3]] * 100 + body["input"])
    assert plan.newest_user_text(body, RESPONSES) == expected
    converted.clear()
    plan.newest_user_text(long, RESPONSES)
    assert max(converted, default=0) <= (1 if tail and not responses._is_output_side(tail[-1])
                                         else len(long["input"]))


def test_a_string_input_is_the_query() -> None:
    from proxy.flow import plan
    from proxy.wire.responses import RESPONSES

    assert plan.newest_user_text({"input": "Which port?"}, RESPONSES) == "Which port?"
    assert plan.newest_user_text({"input": [], "instructions": "x"}, RESPONSES) == ""


async def test_a_request_that_gave_up_never_runs_its_searches_ahead(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    """The memory-path pool busy, the capture slower than ``capture_wait_seconds``:
    the request goes as sent, and its searches ahead, still queued, never run."""
    from proxy.appkeys import AENGINE

    running = await start_proxy(upstream.base_url, tmp_path / "data",
                                injection={"capture_wait_seconds": 0.2})
    gate = threading.Event()
    try:
        import openai

        client = openai.AsyncOpenAI(base_url=f"http://127.0.0.1:{running.port}/v1",
                                    api_key="sk-test", max_retries=0)
        engine = running.engine
        await client.chat.completions.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": SAID[0][0]}])
        await running.settle()
        ahead: list[str] = []
        live_ahead, live_capture = engine.search_ahead, engine.captures._capture_request_job

        def search_ahead(scope: Scope, query: str, compacted: bool) -> Any:
            ahead.append(query)
            return live_ahead(scope, query, compacted)

        def capture_job(*args: Any, **kwargs: Any) -> Any:
            time.sleep(0.5)  # past the request's wait
            return live_capture(*args, **kwargs)

        engine.search_ahead = search_ahead  # type: ignore[method-assign]
        engine.captures._capture_request_job = capture_job  # type: ignore[method-assign]
        pool = running.app[AENGINE]._pool
        busy = [pool.submit(gate.wait, 30) for _ in range(pool._max_workers)]
        out = await client.chat.completions.with_raw_response.create(
            model="gpt-4o-mini", messages=[{"role": "user", "content": QUESTION}])
        assert out.headers["x-lcm-memory-reason"] == "capture-timeout"
        gate.set()
        for job in busy:
            job.result(10)
        await client.close()
        await running.settle()
        assert ahead == []
    finally:
        gate.set()
        await running.close()
