"""A ``/memory`` command sent alone (real openai SDK) is kept as evidence but is
marked as a command in the thread listings (admin API, inspector), so operators
tell it from a conversation; on SQLite and PostgreSQL alike."""

from __future__ import annotations

import aiohttp
import openai

from tests.conftest import RunningProxy
from tests.test_admin_support import (  # noqa: F401 - steady_proxy_fixture is `proxy`
    KEY_A,
    steady_proxy_fixture,
)
from tests.test_commands import ask


async def test_a_command_alone_is_a_marked_thread(proxy: RunningProxy) -> None:
    c = openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY_A, max_retries=0,
                           default_headers={"X-LCM-Role": "coder"})
    try:
        await ask(c, "What is the deploy plan?")
        assert "status of tenant" in await ask(c, "/memory status")
    finally:
        await c.close()
    await proxy.settle()
    threads = proxy.engine.list_threads(role="coder")["threads"]
    by_title = {t["title"]: t for t in threads}
    assert by_title["/memory status"]["command"] is True
    assert by_title["/memory status"]["own_messages"] == 2  # kept: command and reply
    assert by_title["What is the deploy plan?"]["command"] is False
    async with aiohttp.ClientSession() as http:
        async with http.get(proxy.root + "/lcm/v1/threads") as r:
            api = {t["title"]: t["command"] for t in (await r.json())["threads"]}
        async with http.get(proxy.root + "/lcm/ui") as r:
            page = await r.text()
    assert api == {"/memory status": True, "What is the deploy plan?": False}
    assert '<span class="badge command">command</span> /memory status' in page
