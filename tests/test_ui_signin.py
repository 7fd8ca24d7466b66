"""Signing in to and out of the inspector (proxy.ui.signin, proxy.uisession): the
session cookie carries its signed issue time and expires; signing out clears it and
ends the session; the v1 cookie (valid forever) is refused; wrong tokens are
throttled per address on the sign-in form and on the admin API alike.

Real proxies on loopback, driven by aiohttp clients; cookies of other ages are made
with the same signing function the proxy uses.
"""

from __future__ import annotations

import hmac
import re
import time
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from proxy.settings import SettingsError, load_settings
from proxy.uisession import session_value
from tests.conftest import RunningProxy, start_proxy
from tests.fake_upstream import FakeUpstream
from tests.test_admin_support import ADMIN_TOKEN, MARK_A, STEADY, populate

AUTH = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
LIFETIME = 600


@pytest.fixture
async def guarded(upstream: FakeUpstream, tmp_path: Path) -> AsyncIterator[RunningProxy]:
    running = await start_proxy(upstream.base_url, tmp_path / "data",
                                proxy={"admin_token": ADMIN_TOKEN,
                                       "ui_session_seconds": LIFETIME},
                                injection=STEADY)
    yield running
    await running.close()


def jar() -> aiohttp.ClientSession:
    return aiohttp.ClientSession(cookie_jar=aiohttp.CookieJar(unsafe=True))


async def sign_in(http: aiohttp.ClientSession, proxy: RunningProxy,
                  token: str = ADMIN_TOKEN) -> aiohttp.ClientResponse:
    async with http.post(proxy.root + "/lcm/ui/login", data={"token": token},
                         allow_redirects=False) as r:
        await r.read()
        return r


async def page_with_cookie(proxy: RunningProxy, value: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as http, http.get(
            proxy.root + "/lcm/ui", headers={"Cookie": f"lcm_admin={value}"},
            allow_redirects=False) as r:
        return r.status, await r.text()


def now_ms() -> int:
    return time.time_ns() // 1_000_000


async def test_the_session_cookie_expires_with_max_age(guarded: RunningProxy) -> None:
    await populate(guarded)
    async with jar() as http:
        r = await sign_in(http, guarded)
        assert r.status == 303
        cookie = r.cookies["lcm_admin"]
        assert cookie["max-age"] == str(LIFETIME) and cookie["path"] == "/lcm/"
        assert cookie["httponly"] and cookie["samesite"] == "Strict"
        assert ADMIN_TOKEN not in cookie.value
        async with http.get(guarded.root + "/lcm/ui") as page:
            text = await page.text()
            assert page.status == 200 and MARK_A in text
            assert 'action="/lcm/ui/logout"' in text  # signed in by cookie: sign out
    # A session's age decides: younger than the lifetime passes, older is refused.
    fresh = session_value(ADMIN_TOKEN, now_ms() - (LIFETIME - 30) * 1000)
    status, text = await page_with_cookie(guarded, fresh)
    assert status == 200 and MARK_A in text
    stale = session_value(ADMIN_TOKEN, now_ms() - (LIFETIME + 1) * 1000)
    status, text = await page_with_cookie(guarded, stale)
    assert status == 401 and 'action="/lcm/ui/login"' in text and MARK_A not in text
    assert "expired" in text
    # issued far in the future (a forged or clock-skewed stamp), or by another token
    status, _ = await page_with_cookie(guarded, session_value(ADMIN_TOKEN,
                                                              now_ms() + 3_600_000))
    assert status == 401
    status, _ = await page_with_cookie(guarded, session_value("another-token-0123", now_ms()))
    assert status == 401
    tampered = fresh.rsplit(".", 1)[0] + "." + "0" * 64
    assert (await page_with_cookie(guarded, tampered))[0] == 401
    later = fresh.replace(fresh.split(".")[1], str(now_ms()))  # a new stamp, old MAC
    assert (await page_with_cookie(guarded, later))[0] == 401


async def test_the_old_cookie_format_is_refused(guarded: RunningProxy) -> None:
    await populate(guarded)
    v1 = hmac.new(ADMIN_TOKEN.encode(), b"lcm-ui-session-v1", "sha256").hexdigest()
    status, text = await page_with_cookie(guarded, v1)
    assert status == 401 and 'action="/lcm/ui/login"' in text and MARK_A not in text


def test_the_lifetime_is_a_setting_of_eight_hours_by_default() -> None:
    assert load_settings(None, environ={}).proxy.ui_session_seconds == 8 * 3600
    env = load_settings(None, environ={"LCM_PROXY__UI_SESSION_SECONDS": "3600"})
    assert env.proxy.ui_session_seconds == 3600
    with pytest.raises(SettingsError, match="ui_session_seconds"):
        load_settings(None, environ={"LCM_PROXY__UI_SESSION_SECONDS": "5"})


async def test_sign_out_clears_the_cookie_and_ends_the_session(
        guarded: RunningProxy) -> None:
    await populate(guarded)
    async with jar() as http:
        assert (await sign_in(http, guarded)).status == 303
        stolen = next(c.value for c in http.cookie_jar if c.key == "lcm_admin")
        async with http.get(guarded.root + "/lcm/ui") as r:
            text = await r.text()
        csrf = re.search(r'action="/lcm/ui/logout"><input type="hidden" name="csrf"'
                         r' value="([^"]+)"', text)
        assert csrf is not None
        # without the page's CSRF token, or from another origin: refused, still signed in
        for data, headers in (({}, {}), ({"csrf": "x" * 43}, {}),
                              ({"csrf": csrf.group(1)}, {"Origin": "http://evil.test"})):
            async with http.post(guarded.root + "/lcm/ui/logout", data=data, headers=headers,
                                 allow_redirects=False) as r:
                assert r.status == 403, data
        async with http.get(guarded.root + "/lcm/ui") as r:
            assert r.status == 200
        async with http.post(guarded.root + "/lcm/ui/logout", data={"csrf": csrf.group(1)},
                             allow_redirects=False) as r:
            assert r.status == 303 and r.headers["Location"] == "/lcm/ui"
            cleared = r.cookies["lcm_admin"]
            assert cleared.value == "" and cleared["max-age"] == "0"
            assert cleared["path"] == "/lcm/"
        async with http.get(guarded.root + "/lcm/ui") as r:
            assert r.status == 401 and 'action="/lcm/ui/login"' in await r.text()
    # a copy of the cookie kept from before the sign-out no longer works
    status, text = await page_with_cookie(guarded, stolen)
    assert status == 401 and MARK_A not in text
    # signing in again gives a new, working session
    async with jar() as http:
        assert (await sign_in(http, guarded)).status == 303
        async with http.get(guarded.root + "/lcm/ui") as r:
            assert r.status == 200


async def test_bearer_pages_have_no_sign_out(guarded: RunningProxy) -> None:
    async with aiohttp.ClientSession() as http, http.get(guarded.root + "/lcm/ui",
                                                         headers=AUTH) as r:
        assert r.status == 200 and "/lcm/ui/logout" not in await r.text()


async def test_wrong_tokens_on_the_sign_in_form_are_throttled(
        guarded: RunningProxy) -> None:
    async with jar() as http:
        for _ in range(9):
            assert (await sign_in(http, guarded, "wrong")).status == 401
        assert (await sign_in(http, guarded)).status == 303  # the right one resets
        for _ in range(10):
            r = await sign_in(http, guarded, "wrong")
            assert r.status == 401
        async with http.post(guarded.root + "/lcm/ui/login", data={"token": "wrong"},
                             allow_redirects=False) as r:
            text = await r.text()
            assert r.status == 429 and 0 < int(r.headers["Retry-After"]) <= 300
            assert 'action="/lcm/ui/login"' in text and "try again in" in text
            assert "lcm_admin" not in r.cookies
        # while throttled even the right token is refused, on the form and the API
        r = await sign_in(http, guarded)
        assert r.status == 429 and "lcm_admin" not in r.cookies
        async with http.get(guarded.root + "/lcm/v1/status", headers=AUTH) as r:
            body = await r.json()
            assert r.status == 429 and int(r.headers["Retry-After"]) > 0
            assert body["error"]["type"] == "rate_limit_error"
            assert set(body["error"]) == {"message", "type", "param", "code"}
        async with http.get(guarded.root + "/lcm/ui", headers=AUTH) as r:
            assert r.status == 429 and "Retry-After" in r.headers


async def test_wrong_bearer_tokens_on_the_admin_api_are_throttled(
        guarded: RunningProxy) -> None:
    wrong = {"Authorization": "Bearer wrong-token"}
    async with aiohttp.ClientSession() as http:
        for _ in range(10):
            async with http.get(guarded.root + "/lcm/v1/status", headers=wrong) as r:
                assert r.status == 401
        async with http.get(guarded.root + "/lcm/v1/status", headers=wrong) as r:
            body = await r.json()
            assert r.status == 429 and 0 < int(r.headers["Retry-After"]) <= 300
            assert body["error"]["code"] == "too_many_failed_attempts"
        async with http.get(guarded.root + "/lcm/v1/status", headers=AUTH) as r:
            assert r.status == 429
        # the sign-in form shares the count
        async with http.post(guarded.root + "/lcm/ui/login", data={"token": ADMIN_TOKEN},
                             allow_redirects=False) as r:
            assert r.status == 429
        # a request without a token is not a guess: still the plain 401
        async with http.get(guarded.root + "/lcm/v1/status") as r:
            assert r.status == 401


_LOCKOUT_PAGE = """<!doctype html><html><body><script>
window.done = (async () => {
  for (let i = 0; i < 12; i++) {
    try {
      await fetch(%(url)s, {method: "POST", mode: "no-cors",
                            body: new URLSearchParams({token: "guess-" + i})});
    } catch (err) { }
  }
  return true;
})();
</script></body></html>"""


async def test_a_page_of_another_site_cannot_lock_the_operator_out(
        guarded: RunningProxy) -> None:
    """Chromium opens a page of another origin that posts wrong tokens to the sign-in
    form. Wrong tokens count per client address, and the browser shares its address
    with the operator's own tools on this machine: counted, these guesses would lock
    the operator out of the inspector and the admin API for five minutes, again and
    again while the page stays open. A sign-in with a foreign ``Origin`` is refused
    (403) before the token is looked at."""
    from tests.test_ui import page_of_another_site

    url = '"' + guarded.root + '/lcm/ui/login"'
    async with page_of_another_site(_LOCKOUT_PAGE % {"url": url}) as page:
        assert await page.evaluate("window.done") is True
    async with aiohttp.ClientSession() as http:
        async with http.get(guarded.root + "/lcm/v1/status", headers=AUTH) as r:
            assert r.status == 200, await r.text()
        async with http.post(guarded.root + "/lcm/ui/login", data={"token": "wrong"},
                             headers={"Origin": "http://evil.example"},
                             allow_redirects=False) as r:
            assert r.status == 403 and "lcm_admin" not in r.cookies
    async with jar() as http:  # a same-origin sign-in still works
        async with http.post(guarded.root + "/lcm/ui/login", data={"token": ADMIN_TOKEN},
                             headers={"Origin": guarded.root}, allow_redirects=False) as r:
            assert r.status == 303 and "lcm_admin" in r.cookies


def _set_cookies(r: aiohttp.ClientResponse) -> list[str]:
    return r.headers.getall("Set-Cookie", [])


@pytest.mark.parametrize("headers,secure", [
    ({}, False),
    ({"X-Forwarded-Proto": "https"}, True),
    ({"X-Forwarded-Proto": "HTTPS, http"}, True),
    ({"X-Forwarded-Proto": "http"}, False),
    ({"Forwarded": 'for=192.0.2.7;proto=https;host="lcm.example"'}, True),
    ({"Forwarded": "proto=http, proto=https"}, False),
])
async def test_cookies_are_secure_when_the_request_came_over_https(
        guarded: RunningProxy, headers: dict[str, str], secure: bool) -> None:
    """Behind a TLS front (the proxy itself speaks HTTP) the session and CSRF cookies
    carry Secure when the front says the request came over HTTPS (its first hop)."""
    async with aiohttp.ClientSession() as http:
        async with http.post(guarded.root + "/lcm/ui/login", data={"token": ADMIN_TOKEN},
                             headers=headers, allow_redirects=False) as r:
            assert r.status == 303
            (login,) = _set_cookies(r)
        session = login.split(";")[0]  # a page seen through the cookie sets the CSRF one
        async with http.get(guarded.root + "/lcm/ui",
                            headers={"Cookie": session, **headers}) as r:
            assert r.status == 200
            (csrf,) = [c for c in _set_cookies(r) if c.startswith("lcm_csrf=")]
        token = csrf.split(";")[0].split("=", 1)[1]
        async with http.post(guarded.root + "/lcm/ui/logout", data={"csrf": token},
                             headers={"Cookie": f"{session}; lcm_csrf={token}", **headers},
                             allow_redirects=False) as r:
            assert r.status == 303
            (cleared,) = _set_cookies(r)
    for cookie in (login, csrf, cleared):
        assert ("; Secure" in cookie) is secure, cookie


async def test_secure_cookies_forces_secure(upstream: FakeUpstream, tmp_path: Path) -> None:
    proxy = await start_proxy(upstream.base_url, tmp_path / "data", injection=STEADY,
                              proxy={"admin_token": ADMIN_TOKEN, "secure_cookies": True})
    try:
        async with aiohttp.ClientSession() as http:
            async with http.post(proxy.root + "/lcm/ui/login", data={"token": ADMIN_TOKEN},
                                 allow_redirects=False) as r:
                (login,) = _set_cookies(r)
        assert "; Secure" in login and "HttpOnly" in login
    finally:
        await proxy.close()
