from __future__ import annotations

import openai

from tests.conftest import RunningProxy
from tests.fake_upstream import FakeUpstream


async def test_non_stream_roundtrip(proxy: RunningProxy, upstream: FakeUpstream) -> None:
    client = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-test-123456789012345")
    r = await client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hello"}]
    )
    assert r.choices[0].message.content.endswith("[Current Request]\nhello")
    s = await client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True,
        stream_options={"include_usage": True},
    )
    text = ""
    usage = None
    async for ch in s:
        if ch.choices:
            text += ch.choices[0].delta.content or ""
        if ch.usage:
            usage = ch.usage
    assert text.startswith("echo: ") and text.endswith("[Current Request]\nhi")
    assert usage is not None and usage.total_tokens == 15
    await proxy.settle()
    data = proxy.engine.export()
    texts = [m["text"] for t in data["threads"] for m in t["messages"]]
    assert texts[0] == "hello" and texts[2] == "hi"  # stored as the client sent them
    assert len(texts) == 4
