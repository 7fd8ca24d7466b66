"""Who may use the proxy: the admin token (constant-time), loopback-only admin without a
token, the ``serve`` warning for exposed binds, and ``proxy.require_client_keys``."""

from __future__ import annotations

import ast
import inspect
import textwrap
from pathlib import Path
from typing import Any

import aiohttp
import openai
import pytest
from aiohttp import web
from click.testing import CliRunner

from proxy import cli, uisession
from proxy.handlers import access
from tests.conftest import sql_read, start_proxy
from tests.fake_upstream import FakeUpstream
from tests.test_admin_support import KEY_A, KEY_B

TOKEN = "admin-token-0123456789abcdef"


# -- admin token ------------------------------------------------------------------------------
@pytest.mark.parametrize("check", [access.check_token, uisession.session_issued])
def test_admin_token_is_compared_with_hmac_compare_digest_only(check: Any) -> None:
    """The token checks (the bearer token's, the inspector cookie's MAC) use
    ``hmac.compare_digest`` and no ``==``/``!=``/``in`` on the secret (a plain
    comparison leaks the matching prefix length through timing); ``require_admin``
    compares through them."""
    tree = ast.parse(textwrap.dedent(inspect.getsource(check)))
    calls = [ast.unparse(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)]
    assert calls.count("hmac.compare_digest") >= 1
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            names = {ast.unparse(x) for x in (node.left, *node.comparators)}
            assert not names & {"token", "presented", "cookie", "mac"}, ast.unparse(node)
    admin = ast.parse(textwrap.dedent(inspect.getsource(access.require_admin)))
    called = {ast.unparse(n.func) for n in ast.walk(admin) if isinstance(n, ast.Call)}
    assert {"check_token", "has_ui_session"} <= called


async def test_admin_routes_need_the_exact_token(upstream: FakeUpstream,
                                                 tmp_path: Path) -> None:
    cases = [(None, 401), ("", 401), (TOKEN[:-1], 401), (TOKEN + "x", 401),
             (TOKEN.upper(), 401), ("x" * len(TOKEN), 401), (f"{TOKEN} ", 200), (TOKEN, 200)]
    proxy = await start_proxy(upstream.base_url, tmp_path / "d", proxy={"admin_token": TOKEN})
    try:
        async with aiohttp.ClientSession() as http:
            for presented, status in cases:
                headers = {} if presented is None else {"Authorization": f"Bearer {presented}"}
                async with http.get(proxy.root + "/lcm/v1/status", headers=headers) as r:
                    assert r.status == status, presented
                    if status == 401:
                        body = await r.json()
                        assert body["error"]["type"] == "authentication_error"
                        assert TOKEN not in await r.text()
            async with http.get(proxy.root + "/lcm/health") as r:
                assert r.status == 200  # health and metrics stay open for probes
            async with http.get(proxy.root + "/lcm/metrics") as r:
                assert r.status == 200
    finally:
        await proxy.close()


# -- serve's warning ---------------------------------------------------------------------------
@pytest.mark.parametrize("host,token,warns", [
    ("0.0.0.0", "", True), ("::", "", True), ("192.168.1.7", "", True), ("", "", True),
    ("0.0.0.0", TOKEN, False), ("127.0.0.1", "", False), ("127.0.0.2", "", False),
    ("::1", "", False), ("localhost", "", False)])
def test_serve_warns_when_exposed_without_an_admin_token(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, host: str, token: str,
        warns: bool) -> None:
    """``serve`` runs up to ``web.run_app``, which is replaced by a recorder here, as
    is the listening socket's bind (the one thing we do not run for real: binding a
    non-loopback address; the recorder binds loopback instead)."""
    import socket

    from proxy.cli import preflight

    started: list[dict[str, Any]] = []
    bound: list[str] = []

    def bind_loopback(h: str, port: int) -> list[socket.socket]:
        bound.append(h)
        sock = socket.socket()
        sock.bind(("127.0.0.1", port))
        return [sock]

    monkeypatch.setattr(web, "run_app", lambda app, **kw: started.append(kw))
    monkeypatch.setattr(preflight, "bind_sockets", bind_loopback)
    args = ["serve", "--host", host, "--port", "0", "--upstream", "http://127.0.0.1:9/v1",
            "--data-dir", str(tmp_path / "d")]
    if token:
        args += ["--admin-token", token]
    result = CliRunner().invoke(cli.main, args, env={"LCM_LOG_LEVEL": "ERROR"})
    assert result.exit_code == 0, result.output
    assert started and bound == [host]
    for sock in started[0]["sock"]:
        sock.close()
    warned = "without an admin token" in result.stderr
    assert warned is warns, result.stderr
    assert token == "" or token not in result.output  # the token is never echoed


@pytest.mark.parametrize("token,warns", [
    ("hunter2", True), ("changeme1234567", True), ("x" * 16, False), (TOKEN, False)])
def test_serve_warns_about_a_short_admin_token(monkeypatch: pytest.MonkeyPatch,
                                               tmp_path: Path, token: str, warns: bool) -> None:
    """The sign-in form and the admin API do not slow down guessing: a short token is
    named at start (its length, never the token)."""
    started: list[dict[str, Any]] = []
    monkeypatch.setattr(web, "run_app", lambda app, **kw: started.append(kw))
    result = CliRunner().invoke(cli.main, [
        "serve", "--port", "0", "--upstream", "http://127.0.0.1:9/v1",
        "--data-dir", str(tmp_path / "d"), "--admin-token", token],
        env={"LCM_LOG_LEVEL": "ERROR"})
    assert result.exit_code == 0, result.output
    for sock in started[0]["sock"]:
        sock.close()
    assert ("the admin token has" in result.stderr) is warns, result.stderr
    assert token not in result.output


# -- proxy.require_client_keys -----------------------------------------------------------------
async def _status_tenant(base_url: str, key: str) -> str:
    """The tenant id the proxy computes for ``key``, as ``/memory status`` reports it."""
    async with openai.AsyncOpenAI(base_url=base_url, api_key=key, max_retries=0) as c:
        r = await c.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "/memory status"}])
    first = (r.choices[0].message.content or "").split("\n", 1)[0]
    return first.split("status of tenant ", 1)[1].split(",", 1)[0]


async def test_require_client_keys_refuses_unlisted_keys_before_anything_is_stored(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    data = tmp_path / "d"
    # The operator learns the tenant id of the allowed key (here from /memory status),
    # then restarts the proxy on the same data dir with that id listed.
    first = await start_proxy(upstream.base_url, data)
    try:
        allowed = await _status_tenant(first.base_url, KEY_A)
    finally:
        await first.close()
    proxy = await start_proxy(upstream.base_url, data, proxy={"require_client_keys": [allowed]})
    try:
        before = sql_read(proxy.engine, lambda c: (
            c.execute("SELECT COUNT(*) FROM messages").fetchone()[0],
            c.execute("SELECT COUNT(*) FROM events").fetchone()[0]))
        upstream.requests.clear()
        messages = [{"role": "user", "content": "BRAVO-SECRET-PLAN must not be stored"}]
        for key in (KEY_B, "sk-unknown-0123456789"):
            async with openai.AsyncOpenAI(base_url=proxy.base_url, api_key=key,
                                          max_retries=0) as c:
                with pytest.raises(openai.AuthenticationError) as info:
                    await c.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
                err = info.value.body
                assert isinstance(err, dict) and err["code"] == "invalid_api_key"
                assert err["type"] == "invalid_request_error"
                assert KEY_B not in str(info.value.response.text)
                with pytest.raises(openai.AuthenticationError):
                    await c.models.list()  # every /v1/ path, not only chat
        # raw requests too: a streamed call, a body that is not JSON, no key at all
        async with aiohttp.ClientSession() as http:
            for body in (b'{"model":"m","stream":true,"messages":[]}', b"not json"):
                for headers in ({"Authorization": f"Bearer {KEY_B}"}, {"api-key": KEY_B}, {}):
                    async with http.post(proxy.base_url + "/chat/completions", data=body,
                                         headers=headers) as r:
                        assert r.status == 401
                        assert (await r.json())["error"]["code"] == "invalid_api_key"
        await proxy.settle()
        after = sql_read(proxy.engine, lambda c: (
            c.execute("SELECT COUNT(*) FROM messages").fetchone()[0],
            c.execute("SELECT COUNT(*) FROM events").fetchone()[0]))
        assert after == before and upstream.requests == []
        # the listed key works as before
        async with openai.AsyncOpenAI(base_url=proxy.base_url, api_key=KEY_A,
                                      max_retries=0) as c:
            r = await c.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
            assert (r.choices[0].message.content or "").endswith(messages[0]["content"])
        async with aiohttp.ClientSession() as http:
            async with http.get(proxy.root + "/lcm/health") as r:
                assert r.status == 200
    finally:
        await proxy.close()


async def test_require_client_keys_from_the_environment_is_comma_separated() -> None:
    from proxy.settings import load_settings

    s = load_settings(None, environ={"LCM_PROXY__REQUIRE_CLIENT_KEYS": " t_a ,t_b,, "})
    assert s.proxy.require_client_keys == ["t_a", "t_b"]
    assert load_settings(None, environ={}).proxy.require_client_keys == []


async def test_configured_tenant_salt_decides_tenant_ids(upstream: FakeUpstream,
                                                         tmp_path: Path) -> None:
    from proxy.scope import tenant_for_key

    proxy = await start_proxy(upstream.base_url, tmp_path / "d",
                              proxy={"tenant_salt": "shared-salt-for-two-proxies"})
    try:
        seen = await _status_tenant(proxy.base_url, KEY_A)
    finally:
        await proxy.close()
    assert seen == tenant_for_key(KEY_A, "shared-salt-for-two-proxies")
