"""Secrets never reach the logs or the data directory.

Logs: every record our code emits while serving requests that carry a secret API key
and secret-laden messages — plain and streamed chats, upstream errors, an unreachable
upstream, an unparsed body, a fail-open memory path, ``/memory`` commands, admin calls
with a wrong token, pass-through paths — is checked raw (``caplog``: our code never
hands a key to a logger) and formatted (the JSON formatter masks what slips through).

Storage: with ``capture.redact_secrets`` on (the default), the bytes of each secret
appear in no file under the data dir — the SQLite database, its ``-wal``/``-shm`` files
and the Tantivy/vector index files — while the upstream still receives them unchanged.
"""

from __future__ import annotations

import asyncio
import io
import logging
import uuid
import zlib
from pathlib import Path
from typing import Any

import aiohttp
import openai
import pytest

from memory_core.capture import evidence as capture
from memory_core.capture.redact import redact_secrets, redact_value
from memory_core.config import MemoryConfig
from memory_core.engine import Engine
from memory_core.models import CaptureTicket, Scope
from proxy.log import JsonFormatter, PlainFormatter, redact
from tests.conftest import RunningProxy, closed_port, sql_read, start_proxy, writer_stalled
from tests.fake_upstream import FakeUpstream, Reply

API_KEY = "sk-proj-" + "Qx7" * 12 + "Zz"
"""The client's key (a realistic project key): the tenant is a hash of it."""
ADMIN = "adm-" + uuid.uuid4().hex
PEM_BODY = "MIIEowIBAAKCAQEAw1b2c3d4e5f6g7h8i9j0k1l2m3n4o5p6q7r8s9t0u1v2w3x4y5z6"
SECRETS = {
    "openai": "sk-" + "a1B2c3D4e5F6g7H8i9J0" * 2,
    "openai_project": "sk-proj-" + "Kq9Zt7Wv5Xr3Ys1Un8Mp6" * 2,
    "anthropic": "sk-ant-api03-" + "Hh4Jj5Kk6Ll7Mm8Nn9Pp0" * 2,
    "aws_access": "AKIA" + "Q3R7T2V9W4X8Y6Z5",
    "aws_secret": "wJalrXUtnFEMIK7MDENGbPxRfiCY" + "Q8W7E6R5T4Y3",
    "bearer": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJyZWxpYWJpbGl0eSJ9.c2lnbmF0dXJlLXNlY3JldA",
    "pem": PEM_BODY,
}
SECRET_TEXT = (
    f"Here are my credentials: OPENAI_API_KEY={SECRETS['openai']} and project key"
    f" {SECRETS['openai_project']}; anthropic {SECRETS['anthropic']}.\n"
    f"aws_access_key_id = {SECRETS['aws_access']}\n"
    f"aws_secret_access_key = {SECRETS['aws_secret']}\n"
    f"curl -H 'Authorization: Bearer {SECRETS['bearer']}' https://example.invalid\n"
    f"-----BEGIN RSA PRIVATE KEY-----\n{PEM_BODY}\n-----END RSA PRIVATE KEY-----\n"
    "Always keep the deploy notes in docs/deploy.md."
)
ALL_SECRETS = [API_KEY, ADMIN, *SECRETS.values()]


def needles(secret: str) -> list[bytes]:
    """Byte patterns that would betray ``secret`` in a file: the secret itself (UTF-8
    and as JSON/ASCII escapes are identical for these characters) and its longest
    run of letters and digits lowercased — what a word tokenizer would index."""
    run = max("".join(c if c.isalnum() else " " for c in secret).split(), key=len)
    return [secret.encode(), run.lower().encode()[:40]]


def files_containing(root: Path, secrets: list[str]) -> list[tuple[str, str]]:
    found = []
    for path in sorted(p for p in root.rglob("*") if p.is_file()):
        data = path.read_bytes()
        for secret in secrets:
            for needle in needles(secret):
                if needle in data:
                    found.append((str(path.relative_to(root)), needle.decode()))
    return found


# -- redaction itself ---------------------------------------------------------------------------
@pytest.mark.parametrize("name", sorted(SECRETS))
def test_each_secret_kind_is_redacted(name: str) -> None:
    out = redact_secrets(SECRET_TEXT)
    assert SECRETS[name] not in out
    assert "[REDACTED:" in out and "Always keep the deploy notes in docs/deploy.md." in out
    assert redact(SECRET_TEXT).count("***") + redact(SECRET_TEXT).count("[REDACTED:") >= 7


@pytest.mark.parametrize(("text", "secret", "label"), [
    ("The database password is hunter2-Sup3rS3cret!", "hunter2-Sup3rS3cret", "password"),
    ("my password was Tr0ub4dor&3.", "Tr0ub4dor&3", "password"),
    ("DB_PASSWORD=s3cr3t-value\nGITHUB_TOKEN_PROD='abc123def456'", "s3cr3t-value",
     "password"),
    ("The JWT signing secret is 8f3a9c2d7e1b4a60", "8f3a9c2d7e1b4a60", "password"),
    ("client_secret: 9Yq!r7Lm2@pX", "9Yq!r7Lm2@pX", "password"),
    ("数据库密码是Hx92!kq3z", "Hx92!kq3z", "password"),
    ("パスワードは abc123xyz です", "abc123xyz", "password"),
    # an order that states the new value
    ("Change my password to hunter2!x.", "hunter2!x", "password"),
    ("Please set the API key to 9f8e7d6c5b4a.", "9f8e7d6c5b4a", "password"),
    ("I updated the deploy token to tk-4412-abcd", "tk-4412-abcd", "password"),
    ("把密码改成Hx92!kq3z", "Hx92!kq3z", "password"),
    ("dsn = postgresql://admin:Pa55w0rdXyz@db.internal:5432/app", "Pa55w0rdXyz",
     "url_password"),
    ("Stripe key rk_live_51HabcdefghijklmnopQR", "rk_live_51HabcdefghijklmnopQR",
     "stripe_key"),
    ("Alerts go to https://hooks.slack.com/services/T0001/B0002/XXXXyyyyZZZZ1234",
     "T0001/B0002/XXXXyyyyZZZZ1234", "slack_webhook"),
])
def test_stated_passwords_and_url_credentials_are_redacted(text: str, secret: str,
                                                             label: str) -> None:
    """A value stated for a password, secret, token or key (any language the rules
    read), URL credentials, Stripe keys and Slack webhooks: the value is masked, the
    words around it kept (``password is [REDACTED:password]``)."""
    out = redact_secrets(text)
    assert secret not in out and f"[REDACTED:{label}]" in out, out
    assert redact_value({"content": text})["content"] == out


@pytest.mark.parametrize("text", [
    "The disk-usage-report-for-the-cluster is ready", "task-0123456789abcdefghijklmn",
    "Use the bearer of bad news", "AKIA is not a key", "skip-to-content-abcdefghijklmnop",
    "Keys: a, b, c", "the rest of the -----BEGIN CERTIFICATE----- is public",
    "The password is required for login.", "the token is expired",
    "The tokenizer is bert_base_uncased.", "The primary key is user_id.",
    "We hit the token limit of 8192 tokens.", "See https://example.com/a:b for details.",
    "Reset the password: see docs/security.md",
    # "to" names where a token goes, not its value
    "Send the token to server-01 first.", "Pass the API key to worker_42 via env.",
    "I changed my password to something stronger."])
def test_ordinary_text_is_left_alone(text: str) -> None:
    assert redact_secrets(text) is text


def test_redact_value_walks_json_and_keeps_untouched_parts() -> None:
    deep: Any = SECRETS["openai"]
    for _ in range(5000):  # deeper than Python's recursion limit
        deep = [deep]
    value = {"a": [1, 2.5, None, True, {"k": SECRETS["aws_access"]}], "plain": {"x": "y"},
             "deep": deep}
    out = redact_value(value)
    assert SECRETS["aws_access"] not in str(out["a"]) and out["plain"] is value["plain"]
    for _ in range(5000):
        out["deep"] = out["deep"][0]
    assert out["deep"] == "[REDACTED:openai_key]"


# -- logs ------------------------------------------------------------------------------------
CLIENT_LOGGERS = ("openai", "httpx", "httpcore", "httpx2", "hpack", "hypothesis")


async def _drive_every_path(proxy: RunningProxy, broken: RunningProxy,
                            upstream: FakeUpstream) -> None:
    messages = [{"role": "system", "content": f"key {SECRETS['openai']}"},
                {"role": "user", "content": SECRET_TEXT}]
    async with openai.AsyncOpenAI(base_url=proxy.base_url, api_key=API_KEY, max_retries=0,
                                  default_headers={"X-LCM-Session": "s1"}) as c:
        await c.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
        stream = await c.chat.completions.create(model="m", messages=messages, stream=True)  # type: ignore[arg-type]
        async for _ in stream:
            pass
        upstream.push(Reply(status=500, error={"message": f"bad key {API_KEY}",
                                               "type": "server_error"}))
        with pytest.raises(openai.InternalServerError):
            await c.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
        upstream.push(Reply(content="partial " + SECRETS["bearer"], piece=3, drop_after=200))
        with pytest.raises(Exception):  # noqa: B017 - the SDK's transport error
            s2 = await c.chat.completions.create(model="m", messages=messages, stream=True)  # type: ignore[arg-type]
            async for _ in s2:
                pass
        await c.chat.completions.create(model="m", messages=[  # type: ignore[arg-type]
            {"role": "user", "content": f"/memory search {SECRETS['anthropic']}"}])
        await c.models.list()
        await c.embeddings.create(model="e", input=SECRET_TEXT)
    async with openai.AsyncOpenAI(base_url=broken.base_url, api_key=API_KEY,
                                  max_retries=0) as c:
        with pytest.raises(openai.APIStatusError):
            await c.chat.completions.create(model="m", messages=messages)  # type: ignore[arg-type]
    async with aiohttp.ClientSession() as http:
        headers = {"Authorization": f"Bearer {API_KEY}"}
        async with http.post(proxy.base_url + "/chat/completions", headers=headers,
                             data=b'{"messages": "' + SECRET_TEXT.encode()[:60] + b"\xff") as r:
            assert r.status == 400
        async with http.get(proxy.root + "/lcm/v1/status",
                            headers={"Authorization": f"Bearer {ADMIN}x"}) as r:
            assert r.status == 401
        # a fail-open memory path: the store's writer is stalled past the capture wait
        with writer_stalled(proxy.engine):
            async with http.post(proxy.base_url + "/chat/completions", headers=headers,
                                 json={"model": "m", "messages": messages}) as r:
                assert r.status == 200 and r.headers["x-lcm-memory"] == "failed-open"
    await proxy.settle()


async def test_no_secret_reaches_a_log_record(upstream: FakeUpstream, tmp_path: Path,
                                              caplog: pytest.LogCaptureFixture) -> None:
    json_out, plain_out = io.StringIO(), io.StringIO()
    handlers = []
    for stream, fmt in ((json_out, JsonFormatter()), (plain_out, PlainFormatter())):
        h = logging.StreamHandler(stream)
        h.setFormatter(fmt)
        h.setLevel(logging.DEBUG)
        handlers.append(h)
        logging.getLogger().addHandler(h)
    caplog.set_level(logging.DEBUG)
    proxy = await start_proxy(upstream.base_url, tmp_path / "d",
                              proxy={"admin_token": ADMIN},
                              injection={"capture_wait_seconds": 0.2})
    broken = await start_proxy(f"http://127.0.0.1:{closed_port()}/v1", tmp_path / "b")
    try:
        await _drive_every_path(proxy, broken, upstream)
    finally:
        await broken.close()
        await proxy.close()
        for h in handlers:
            logging.getLogger().removeHandler(h)
    ours = [r for r in caplog.records if not r.name.startswith(CLIENT_LOGGERS)]
    assert any(r.name.startswith("lcm.") for r in ours)  # the paths above did log
    assert any(r.levelno >= logging.ERROR and r.exc_info for r in ours)  # fail open logged
    for record in ours:
        raw = record.getMessage() + (logging.Formatter().formatException(record.exc_info)
                                     if record.exc_info else "")
        for secret in ALL_SECRETS:
            assert secret not in raw, (record.name, raw[:300])
    for text in (json_out.getvalue(), plain_out.getvalue()):
        assert text
        for secret in ALL_SECRETS:
            assert secret not in text


def test_formatters_mask_whatever_a_record_carries() -> None:
    record = logging.LogRecord("lcm.x", logging.ERROR, __file__, 1, "got %s %s", (
        f"Authorization: Bearer {API_KEY}", SECRET_TEXT), None)
    try:
        raise ValueError(f"api-key: {SECRETS['openai']} -----BEGIN EC PRIVATE KEY-----\n"
                         f"{SECRETS['pem']}\n-----END EC PRIVATE KEY-----")
    except ValueError:
        import sys

        record.exc_info = sys.exc_info()
    for fmt in (JsonFormatter(), PlainFormatter()):
        out = fmt.format(record)
        for secret in (API_KEY, *SECRETS.values()):
            assert secret not in out, (type(fmt).__name__, secret)


# -- the data directory -----------------------------------------------------------------------
def _non_assistant(proxy: RunningProxy) -> int:
    return int(sql_read(proxy.engine, lambda c: c.execute(
        "SELECT COUNT(*) FROM messages WHERE msg_role != 'assistant'").fetchone()[0]))


async def _store_secrets(proxy: RunningProxy, upstream: FakeUpstream) -> None:
    tool_call = {"id": "call_1", "type": "function", "function": {
        "name": "deploy", "arguments": f'{{"token": "{SECRETS["bearer"]}"}}'}}
    history: list[dict[str, Any]] = [
        {"role": "system", "content": "You deploy things."},
        {"role": "user", "content": [{"type": "text", "text": SECRET_TEXT}]},
        {"role": "assistant", "content": None, "tool_calls": [tool_call]},
        {"role": "tool", "tool_call_id": "call_1",
         "content": f"deployed; AWS_SECRET_ACCESS_KEY={SECRETS['aws_secret']}"},
        {"role": "user", "content": f"Thanks. Also {SECRETS['anthropic']} please."},
    ]
    async with openai.AsyncOpenAI(base_url=proxy.base_url, api_key=API_KEY,
                                  max_retries=0) as c:
        r = await c.chat.completions.create(model="m", messages=history)  # type: ignore[arg-type]
        history.append({"role": "assistant", "content": r.choices[0].message.content})
        history.append({"role": "user", "content": "and the PEM? " + SECRET_TEXT})
        stream = await c.chat.completions.create(model="m", messages=history, stream=True)  # type: ignore[arg-type]
        async for _ in stream:
            pass
        # the replay stores nothing new: node keys come from the original messages
        await proxy.settle()
        before = _non_assistant(proxy)
        await c.chat.completions.create(model="m", messages=history[:5])  # type: ignore[arg-type]
    async with aiohttp.ClientSession() as http:  # unparsed bodies are kept in events
        async with http.post(proxy.base_url + "/chat/completions", data=SECRET_TEXT.encode(),
                             headers={"Authorization": f"Bearer {API_KEY}"}) as resp:
            assert resp.status == 400
    await proxy.settle()
    assert _non_assistant(proxy) == before
    # the upstream saw every secret unchanged: redaction only changes what is stored
    seen = b"".join(r["raw"] for r in upstream.chat_requests)
    for secret in SECRETS.values():
        assert secret.encode() in seen


async def _check_data_dir(proxy: RunningProxy, data: Path) -> None:
    exported = str(proxy.engine.export(events=True))
    assert "[REDACTED:openai_key]" in exported and "[REDACTED:private_key]" in exported
    await proxy.close()
    leaks = files_containing(data, ALL_SECRETS)
    assert leaks == [], leaks
    assert (data / "lcm.sqlite3").exists() and list((data / "index").rglob("*.term"))


@pytest.mark.sqlite_only("scans the bytes of the data dir's SQLite files (and WAL) for the"
                         " secrets")
async def test_no_secret_is_written_to_the_data_dir(upstream: FakeUpstream,
                                                    tmp_path: Path) -> None:
    """Messages, raw JSON, events, WAL and both indexes; extraction is off here (see
    the next test for why)."""
    data = tmp_path / "d"
    proxy = await start_proxy(upstream.base_url, data, injection={"extract": False})
    try:
        await _store_secrets(proxy, upstream)
        await _check_data_dir(proxy, data)
    finally:
        await proxy.close()


@pytest.mark.sqlite_only("scans the bytes of the data dir's SQLite files (and WAL) for the"
                         " secrets")
async def test_no_secret_is_written_to_the_data_dir_with_extraction(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    data = tmp_path / "d"
    proxy = await start_proxy(upstream.base_url, data)
    try:
        await _store_secrets(proxy, upstream)
        await _check_data_dir(proxy, data)
    finally:
        await proxy.close()


# -- the settings: capture.redact_secrets and capture.store_raw_json ---------------------------
def _capture(engine: Engine, messages: list[Any], config: MemoryConfig) -> dict[str, Any]:
    ticket = CaptureTicket(Scope("t", "r"), "req")
    engine.store.write_tx(lambda c: capture.capture_request(
        c, ticket, messages, {"body": SECRET_TEXT}, config=config)).result(30)
    engine.store.write_tx(lambda c: capture.record_event(
        c, ticket, "probe", {"partial": SECRET_TEXT}, config=config)).result(30)
    return engine.export(events=True)


@pytest.mark.parametrize("redact_on,raw_on", [(True, True), (True, False), (False, True),
                                              (False, False)])
def test_capture_honours_redact_secrets_and_store_raw_json(tmp_path: Path, redact_on: bool,
                                                           raw_on: bool) -> None:
    messages = [{"role": "user", "content": [
        {"type": "text", "text": SECRET_TEXT},
        {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}],
        "x_vendor": "extra"}]
    engine = Engine(tmp_path / "d", MemoryConfig(extract=False))
    try:
        out = _capture(engine, messages, MemoryConfig(redact_secrets=redact_on,
                                                      store_raw_json=raw_on))
        (msg,) = out["threads"][0]["messages"]
        stored = str(msg["text"]) + str(msg["message"]) + str(out["events"])
        for secret in SECRETS.values():
            assert (secret in stored) is (not redact_on), secret
        assert ("iVBORw0KGgo" in str(msg["message"])) is raw_on
        assert ("x_vendor" in str(msg["message"])) is raw_on
        if not raw_on:
            assert msg["message"] == {"role": "user", "content": msg["text"]}
        # the node key is the original's: a replay of the same list stores nothing
        ticket = CaptureTicket(Scope("t", "r"), "again")
        result = engine.store.write_tx(lambda c: capture.capture_request(
            c, ticket, messages, {}, config=MemoryConfig(redact_secrets=redact_on,
                                                         store_raw_json=raw_on))).result(30)
        assert result.new_ids == ()
    finally:
        engine.close()


async def test_proxy_settings_reach_capture(upstream: FakeUpstream, tmp_path: Path) -> None:
    proxy = await start_proxy(upstream.base_url, tmp_path / "d",
                              capture={"redact_secrets": False, "store_raw_json": False},
                              injection={"extract": False})
    try:
        async with openai.AsyncOpenAI(base_url=proxy.base_url, api_key=API_KEY,
                                      max_retries=0) as c:
            await c.chat.completions.create(model="m", messages=[  # type: ignore[arg-type]
                {"role": "user", "content": SECRET_TEXT, "name": "u", "x_vendor": 1}])
        await proxy.settle()
        (msg, _answer) = proxy.engine.export()["threads"][0]["messages"]
        assert SECRETS["openai"] in msg["text"] and "x_vendor" not in msg["message"]
    finally:
        await proxy.close()


async def test_settings_default_to_redacting(tmp_path: Path) -> None:
    from proxy.settings import load_settings

    cfg = load_settings(None, environ={}).memory_config()
    assert cfg.redact_secrets is True and cfg.store_raw_json is True
    off = load_settings(None, environ={"LCM_CAPTURE__REDACT_SECRETS": "false"}).memory_config()
    assert off.redact_secrets is False
    await asyncio.sleep(0)


def test_hidden_tool_rounds_and_splices_are_redacted(tmp_path: Path) -> None:
    """Memory-tool rounds the client never saw (hidden messages, and the model's view
    spliced into later requests) are evidence too."""
    engine = Engine(tmp_path / "d", MemoryConfig(extract=False))
    try:
        ticket = CaptureTicket(Scope("t", "r"), "req")
        engine.store.write_tx(lambda c: capture.capture_request(
            c, ticket, [{"role": "user", "content": "deploy"}], {})).result(30)
        call = {"role": "assistant", "content": None, "tool_calls": [{
            "id": "c1", "type": "function", "function": {
                "name": "memory_grep", "arguments": f'{{"query": "{SECRETS["openai"]}"}}'}}]}
        result = {"role": "tool", "tool_call_id": "c1", "content": SECRET_TEXT}
        answer = {"role": "assistant", "content": "done"}
        engine.store.write_tx(lambda c: capture.capture_response(
            c, ticket, [answer], {}, None, [call, result], [call, result, answer])).result(30)
        stored = sql_read(engine, lambda c: "".join(
            f"{text},{raw}" for text, raw in c.execute("SELECT text, raw_json FROM messages"))
            + str(c.execute("SELECT messages FROM splices").fetchone()[0]))
    finally:
        engine.close()
    assert "[REDACTED:openai_key]" in stored
    for secret in SECRETS.values():
        assert secret not in stored, secret


@pytest.mark.sqlite_only("the data dir holds the SQLite store")
async def test_a_new_data_dir_is_private_to_its_user(upstream: FakeUpstream,
                                                     tmp_path: Path) -> None:
    """Every conversation is in the data dir, secrets masked or not: under the usual
    umask (022) other users of the machine could read the SQLite file. A data dir the
    proxy creates is 0700; an existing one keeps its mode (a mounted volume's may be
    shared on purpose)."""
    import os
    import stat

    old = os.umask(0o022)
    try:
        data = tmp_path / "new" / "data"
        proxy = await start_proxy(upstream.base_url, data)
        try:
            async with openai.AsyncOpenAI(base_url=proxy.base_url, api_key=API_KEY,
                                          max_retries=0) as c:
                await c.chat.completions.create(model="m", messages=[
                    {"role": "user", "content": "the launch code is 0000"}])
            await proxy.settle()
        finally:
            await proxy.close()
        assert stat.S_IMODE(data.stat().st_mode) == 0o700
        shared = tmp_path / "shared"
        shared.mkdir(mode=0o750)
        proxy = await start_proxy(upstream.base_url, shared)
        await proxy.close()
        assert stat.S_IMODE(shared.stat().st_mode) == 0o750
    finally:
        os.umask(old)


TOKENS = {
    "huggingface_token": "hf_" + "QwErTyUiOpAsDfGhJkLzXcVbNm12345678",
    "groq_key": "gsk_" + "Ab12Cd34Ef56Gh78Ij90Kl12Mn34Op56Qr78St90Uv12Wx34Yz56",
    "xai_key": "xai-" + "Zq8Wx7Ec6Rv5Tb4Yn3Um2Il1Ok0Pj9Hg8Fd7Sa6Lk5"
               + "Jh4Gf3Ds2Aq1Zx0Cv9Bn8Mm7Qw6Er5Ty4Ui",
    "gitlab_token": "glpat-" + "xY9_zW8-vU7tS6rQ5pO4",
    "npm_token": "npm_" + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8",
    "github_token": "github_pat_" + "11ABCDEFG0" + "abcdefghijABCDEFGHIJ0123456789_xyz",
    "slack_token": "xoxb-" + "1234567890-0987654321-AbCdEfGhIjKl",
    "stripe_key": "sk_live_" + "51HxYzAbCdEfGhIjKl",
    "google_api_key": "AIza" + "SyA1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q",
    "aws_access_key": "AKIA" + "Q3R7T2V9W4X8Y6Z5",
    "jwt": "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0."
           + "dozjgNryP4J3jVmNHl0w5N_XgL0n3I9PlFUP0THsR8U",
}


@pytest.mark.parametrize("label", sorted(TOKENS))
def test_tokens_agents_commonly_paste_are_masked(label: str) -> None:
    """Hugging Face, Groq, xAI, GitLab and npm tokens were stored as pasted; the other
    formats here were already masked (kept as a list of what is covered)."""
    text = f"export TOKEN={TOKENS[label]}\nthen run: curl -H 'x: {TOKENS[label]}' ..."
    out = redact_secrets(text)
    assert TOKENS[label] not in out and f"[REDACTED:{label}]" in out, out


@pytest.mark.parametrize("text", [
    "from huggingface_hub import hf_hub_download; hf_transfer is on",
    "set HF_HOME and hf_cache_dir_for_the_models_of_this_project_v2",
    "model = 'xai-grok-2-latest' or xai-org/grok-1",
    "npm_config_cache=/tmp/npm and npm_package_version=1.2.3",
    "glpat- tokens look like glpat-<20 characters>", "gsk_ is Groq's prefix",
    "The half_precision flag (bf16) halves memory",
])
def test_names_with_token_prefixes_stay(text: str) -> None:
    assert redact_secrets(text) is text


@pytest.mark.parametrize("text", [
    "The database password is hunter2-Sup3rS3cret!",
    "key rk_live_51HabcdefghijklmnopQR",
    "dsn = postgresql://admin:Pa55w0rdXyz@db.internal:5432/app",
    "token " + TOKENS["huggingface_token"],
])
def test_the_forwarded_body_log_masks_what_capture_masks(text: str) -> None:
    """The forwarded-requests log tested small bodies for a list of triggers of its
    own, shorter than the redaction's: these bodies were stored unmasked."""
    from memory_core.capture.forwarded import prepare

    body = {"model": "m", "messages": [{"role": "user", "content": text}]}
    row = prepare(Scope("t_1", "default"), "req_1", body, {}, max_bytes=1 << 20,
                  redact=True)
    assert row.body is not None and row.redacted
    stored = zlib.decompress(row.body).decode()
    assert redact_secrets(text) in stored and "[REDACTED:" in stored
