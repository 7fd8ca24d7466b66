"""Recording an exchange's evidence (proxy.flow.record): the answer's write order."""

from __future__ import annotations

from pathlib import Path

import orjson
from aiohttp.test_utils import make_mocked_request

from memory_core.models import Scope
from proxy.appkeys import AENGINE
from proxy.flow import record
from proxy.flow.exchange import Exchange
from proxy.relay import RelayResult
from tests.conftest import start_proxy, store_sql
from tests.fake_upstream import FakeUpstream

SCOPE = Scope(tenant="t", role="r")


async def test_a_capture_queues_the_answer_as_it_is_made(upstream: FakeUpstream,
                                                         tmp_path: Path) -> None:
    """``store_first`` takes no turn of the loop for the answer's write to queue: the
    write is on the store's writer once the capture is made, ahead of anything queued
    after it (the next turn's capture), before the capture's wait even starts."""
    proxy = await start_proxy(upstream.base_url, tmp_path / "d")
    try:
        aengine = proxy.app[AENGINE]
        messages = [{"role": "user", "content": "hello"}]
        ticket, captured = aengine.capture_request(SCOPE, "rq-1", messages, {})
        request = make_mocked_request("POST", "/v1/chat/completions", app=proxy.app)
        ex = Exchange(request=request, rid="rq-1", raw=b"{}",
                      body={"model": "m", "messages": messages}, ticket=ticket)
        body = orjson.dumps({"id": "c1", "model": "m", "choices": [
            {"index": 0, "message": {"role": "assistant", "content": "hi"},
             "finish_reason": "stop"}]})
        job = record.capture_relayed(ex, 200, False, RelayResult(len(body), [body]))
        aengine.queue_event(SCOPE, "rq-2", "marker", {})  # queued after, no await between
        await job
        await proxy.settle()
        kinds = [r[0] for r in store_sql(
            proxy.engine, "SELECT kind FROM events WHERE kind IN ('response', 'marker')"
            " ORDER BY id")]
        assert kinds == ["response", "marker"]
        texts = [m["text"] for m in proxy.engine.thread_messages(captured.result().thread_id)]
        assert texts == ["hello", "hi"]
    finally:
        await proxy.runner.cleanup()
