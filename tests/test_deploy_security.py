"""The shipped configurations keep memory away from unauthenticated peers.

Each configuration the project ships (deploy/compose.yaml's proxy service and the
Kubernetes sidecar, each over the image's ``ENV``; the replicas of
deploy/compose.postgres.yaml and deploy/kubernetes/lcm-proxy-postgres.yaml; the image's own ``CMD``;
config/default.toml and config/examples/*.toml as ``--config`` files) is read from
its file, turned into real ``Settings`` by the real ``serve`` command (its
``web.run_app`` replaced by a recorder, the one thing not run: binding the shipped
port), and the app it built is served on the shipped host with port 0 against
the fake upstream. Replaced values: the data dir, the upstream URL, the embedder
(``hashing``, so that no 600 MiB model loads) and the store URL (emptied: the
replicated files' PostgreSQL is not here, and no access decision depends on the
store); everything that decides access (host, tenant, admin token, client keys)
is the shipped value, or for a variable the operator must set (``${X:?…}`` in
compose, a Secret in Kubernetes) the value the file's header says to give.

A configuration passes when either it listens on loopback only — then a peer
outside the network namespace cannot connect at all, which the test shows by
sending ``/memory search``, ``/memory retract`` and an admin request to this
machine's own non-loopback address and getting connection refused, and by the
listening sockets' addresses — or it requires client keys and an admin token, and
an unauthenticated request is refused (401) on ``/v1/`` and ``/lcm/v1/``.
"""

from __future__ import annotations

import ipaddress
import re
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import aiohttp
import openai
import pytest
from aiohttp import web
from click.testing import CliRunner

from memory_core.items import writer
from memory_core.models import Scope
from proxy import cli
from proxy.appkeys import ENGINE, SETTINGS
from proxy.scope import tenant_for_key
from tests.conftest import sql_read
from tests.fake_upstream import FakeUpstream
from tests.test_admin_support import fake_item

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
AGENT_KEY = "sk-agent-0123456789abcdefghij"
FACT = "The vault combination is ZEBRA-7781 for the night shift."
REPLACED_ENV = {"LCM_DATA_DIR", "LCM_UPSTREAM", "LCM_EMBEDDING__PROVIDER", "LCM_STORE__URL"}
SALT = "salt-chosen-by-the-operator"
OPERATOR_SET = {
    # what the replicated files' headers tell the operator to export / put in Secrets
    "POSTGRES_PASSWORD": "pw0123456789", "LCM_TENANT_SALT": SALT,
    "LCM_ADMIN_TOKEN": "admin-0123456789abcdef",
    "LCM_CLIENT_KEY_IDS": tenant_for_key(AGENT_KEY, SALT),
    "admin-token": "admin-0123456789abcdef", "tenant-salt": SALT,
    "client-key-ids": tenant_for_key(AGENT_KEY, SALT),
    "url": "postgresql://lcm:pw@db.invalid:5432/lcm",
}
REPLACED_FLAGS = {"--data-dir", "--upstream"}


@dataclass
class Shipped:
    """One shipped way of starting the proxy: container env, serve args, config file."""

    name: str
    env: dict[str, str]
    args: list[str]
    config: Path | None = None
    notes: list[str] = field(default_factory=list)


# -- reading the shipped files ------------------------------------------------------------------
def _dockerfile() -> tuple[dict[str, str], list[str]]:
    """The image's ``LCM_*`` ``ENV`` values and its ``CMD`` (after ``ENTRYPOINT lcm-proxy``)."""
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    runtime = text.split(" AS runtime", 1)[1]
    joined = re.sub(r"\\\n", " ", runtime)
    env: dict[str, str] = {}
    for line in joined.splitlines():
        if line.startswith("ENV "):
            for key, value in re.findall(r"(\w+)=(\S+)", line[4:]):
                if key.startswith("LCM_"):
                    env[key] = value.strip('"')
    (entry,) = re.findall(r"^ENTRYPOINT\s+(\[.*\])", runtime, re.M)
    assert _json_list(entry) == ["lcm-proxy"]
    (cmd,) = re.findall(r"^CMD\s+(\[.*\])", runtime, re.M)
    return env, _json_list(cmd)


def _json_list(text: str) -> list[str]:
    import json

    value = json.loads(text)
    assert isinstance(value, list) and all(isinstance(v, str) for v in value)
    return value


def _compose_value(value: Any, given: dict[str, str] | None = None) -> str:
    """Compose interpolation as ``docker compose`` does with the variables of
    ``given`` set and every other one unset."""
    text = str(value)

    def sub(m: re.Match[str]) -> str:
        op, default = m.group(2) or "", m.group(3) or ""
        if given and m.group(1) in given:
            return given[m.group(1)]
        if op.endswith("?"):
            raise AssertionError(f"the proxy service requires {m.group(1)}: {default}")
        return default

    return re.sub(r"\$\{(\w+)(:?[-?])?([^}]*)\}", sub, text)


def _shipped() -> list[Shipped]:
    import yaml

    image_env, image_cmd = _dockerfile()
    cases = [Shipped("image CMD", dict(image_env), image_cmd)]

    compose = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
    service = compose["services"]["lcm-proxy"]
    env = dict(image_env)
    env.update({k: _compose_value(v) for k, v in (service.get("environment") or {}).items()})
    cases.append(Shipped("compose", env, list(service.get("command") or image_cmd)))

    docs = [d for d in yaml.safe_load_all(
        (DEPLOY / "kubernetes" / "agent-with-lcm-proxy.yaml").read_text(encoding="utf-8")) if d]
    (deployment,) = [d for d in docs if d["kind"] == "Deployment"]
    spec = deployment["spec"]["template"]["spec"]
    (proxy,) = [c for c in spec.get("initContainers", []) + spec["containers"]
                if c["name"] == "lcm-proxy"]
    for secrets in (False, True):
        env = dict(image_env)
        for item in proxy.get("env", []):
            if "value" in item:
                env[item["name"]] = str(item["value"])
            elif secrets:  # the optional secret exists
                env[item["name"]] = f"secret-{item['name'].lower()}-0123456789"
            else:
                assert item["valueFrom"]["secretKeyRef"].get("optional") is True, item
        cases.append(Shipped(f"kubernetes{' with its secrets' if secrets else ''}", env,
                             list(proxy.get("args") or image_cmd)))

    replicated = yaml.safe_load((DEPLOY / "compose.postgres.yaml").read_text(encoding="utf-8"))
    for name, service in replicated["services"].items():
        if (service.get("command") or [None])[0] == "serve":
            env = dict(image_env)
            env.update({k: _compose_value(v, OPERATOR_SET)
                        for k, v in (service.get("environment") or {}).items()})
            cases.append(Shipped(f"compose.postgres {name}", env, list(service["command"])))
    docs = [d for d in yaml.safe_load_all(
        (DEPLOY / "kubernetes" / "lcm-proxy-postgres.yaml").read_text(encoding="utf-8")) if d]
    (deployment,) = [d for d in docs if d["kind"] == "Deployment"]
    (proxy,) = deployment["spec"]["template"]["spec"]["containers"]
    env = dict(image_env)
    for item in proxy["env"]:
        env[item["name"]] = str(item["value"]) if "value" in item else \
            OPERATOR_SET[item["valueFrom"]["secretKeyRef"]["key"]]
    cases.append(Shipped("kubernetes lcm-proxy-postgres", env, list(proxy["args"])))

    for path in sorted((ROOT / "config").rglob("*.toml")):
        # run as its header says: `lcm-proxy serve --config FILE`, no LCM_* variables
        cases.append(Shipped(str(path.relative_to(ROOT)), {}, ["serve"], config=path))
        if path.name == "sidecar.toml":  # also inside the image (LCM_CONFIG=…)
            cases.append(Shipped(f"image with {path.name}", dict(image_env), image_cmd,
                                 config=path))
    return cases


SHIPPED = _shipped()


# -- running one ---------------------------------------------------------------------------------
def _build(case: Shipped, upstream: FakeUpstream, data_dir: Path,
           monkeypatch: pytest.MonkeyPatch) -> tuple[web.Application, dict[str, Any], str]:
    """Run the real ``serve`` with the case's env and args; return (app, run_app kwargs, stderr)."""
    assert case.args[:1] == ["serve"], case.args
    assert not REPLACED_FLAGS & set(case.args), "the test replaces these through the env"
    started: list[tuple[web.Application, dict[str, Any]]] = []
    monkeypatch.setattr(web, "run_app", lambda app, **kw: started.append((app, kw)))
    env = dict(case.env)
    env.update({"LCM_DATA_DIR": str(data_dir), "LCM_UPSTREAM": upstream.base_url,
                "LCM_EMBEDDING__PROVIDER": "hashing", "LCM_PORT": "0", "LCM_STORE__URL": ""})
    args = list(case.args) + (["--config", str(case.config)] if case.config else [])
    if "--port" in args:  # the port is not what is checked; a busy one must not matter
        args[args.index("--port") + 1] = "0"
    result = CliRunner().invoke(cli.main, args, env=env)
    assert result.exit_code == 0, result.output
    (app, kw), = started
    # serve binds before it starts (a busy port is one clear error): the host the
    # shipped values asked for is the address of the sockets it bound.
    socks = kw.pop("sock")
    kw["host"] = socks[0].getsockname()[0]
    for sock in socks:
        sock.close()
    return app, kw, result.stderr


def _is_loopback(host: str) -> bool:
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def _own_non_loopback_ipv4() -> str | None:
    """This machine's address on its default route (a UDP connect sends nothing)."""
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.connect(("192.0.2.1", 9))
        ip = str(s.getsockname()[0])
    except OSError:
        return None
    finally:
        s.close()
    return None if ipaddress.ip_address(ip).is_loopback else ip


async def _ask(base_url: str, text: str, key: str | None) -> str:
    client = openai.AsyncOpenAI(base_url=base_url, api_key=key or "unused", max_retries=0,
                                timeout=10)
    headers = {} if key else {"Authorization": ""}  # no key at all: the header is blanked
    try:
        r = await client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": text}], extra_headers=headers)
    finally:
        await client.close()
    return r.choices[0].message.content or ""


async def _seed(app: web.Application, root: str) -> int:
    """Store the agent's fact through the proxy and a memory item from it; return its id."""
    assert FACT in await _ask(root + "/v1", FACT, AGENT_KEY)  # the fake upstream echoes
    engine = app[ENGINE]
    engine.store.flush()

    tenant, role, thread, mid = sql_read(engine, lambda c: c.execute(
        "SELECT tenant, role, thread_id, id FROM messages WHERE text LIKE ?",
        (f"%{FACT}%",)).fetchone())
    ids = engine.store.write_tx(lambda tx: writer.store_extracted(
        tx, Scope(tenant, role, ""), thread, mid, [fake_item(
            "vault combination is ZEBRA-7781", subject="vault combination")])).result(30)
    return int(ids[-1])


def _item_status(app: web.Application, item_id: int) -> str:
    return str(sql_read(app[ENGINE], lambda c: c.execute(
        "SELECT status FROM memory_items WHERE id=?", (item_id,)).fetchone()[0]))


async def _refused_unauthenticated(root: str, item_id: int) -> None:
    """An exposed listener: requests without a key or token are refused with 401."""
    for text in ("/memory search ZEBRA", f"/memory retract {item_id}"):
        with pytest.raises(openai.AuthenticationError):
            await _ask(root + "/v1", text, None)
        with pytest.raises(openai.AuthenticationError):
            await _ask(root + "/v1", text, "sk-guessed-0123456789")
    async with aiohttp.ClientSession() as http:
        for path in ("/lcm/v1/status", "/lcm/v1/items", f"/lcm/v1/items/{item_id}"):
            async with http.get(root + path) as r:
                assert r.status == 401, path


async def _unreachable_from_outside(port: int, item_id: int) -> bool:
    """Send the same requests to this machine's non-loopback address: refused at TCP.

    Returns False when the machine has no such address (nothing to try)."""
    ip = _own_non_loopback_ipv4()
    if ip is None:
        return False
    outside = f"http://{ip}:{port}"
    for text in ("/memory search ZEBRA", f"/memory retract {item_id}"):
        with pytest.raises(openai.APIConnectionError):
            await _ask(outside + "/v1", text, None)
    async with aiohttp.ClientSession() as http:
        with pytest.raises(aiohttp.ClientConnectionError):
            async with http.get(outside + "/lcm/v1/items", timeout=aiohttp.ClientTimeout(5)):
                pass
    return True


@pytest.mark.parametrize("case", SHIPPED, ids=[c.name for c in SHIPPED])
async def test_no_shipped_configuration_lets_an_unauthenticated_peer_use_memory(
        case: Shipped, monkeypatch: pytest.MonkeyPatch, upstream: FakeUpstream,
        tmp_path: Path) -> None:
    app, kw, stderr = _build(case, upstream, tmp_path / "data", monkeypatch)
    host = str(kw["host"])
    settings = app[SETTINGS].proxy
    exposed = not _is_loopback(host)
    if exposed:
        assert settings.require_client_keys and settings.admin_token, (
            f"{case.name} listens on {host} without require_client_keys and admin_token:"
            " any peer that reaches it reads and changes memory")
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1" if exposed else host, 0)
        await site.start()
        sockets = site._server.sockets  # type: ignore[union-attr]
        port = sockets[0].getsockname()[1]
        root = f"http://127.0.0.1:{port}" if exposed or ":" not in host else \
            f"http://[{host}]:{port}"
        item_id = await _seed(app, root)
        if exposed:
            await _refused_unauthenticated(root, item_id)
        else:
            assert "without proxy.require_client_keys" not in stderr
            for s in sockets:  # every listening socket accepts loopback peers only
                assert _is_loopback(s.getsockname()[0]), s.getsockname()
            await _unreachable_from_outside(port, item_id)
            # inside the namespace the agent (and only it) uses its memory
            found = await _ask(root + "/v1", "/memory search ZEBRA", AGENT_KEY)
            assert "ZEBRA-7781" in found
            async with aiohttp.ClientSession() as http:
                async with http.get(root + "/lcm/v1/status") as r:
                    # with an admin token configured even a loopback peer needs it
                    assert r.status == (401 if settings.admin_token else 200)
                if settings.admin_token:
                    auth = {"Authorization": f"Bearer {settings.admin_token}"}
                    async with http.get(root + "/lcm/v1/status", headers=auth) as r:
                        assert r.status == 200
                for probe in ("/lcm/livez", "/lcm/readyz"):
                    async with http.get(root + probe) as r:
                        assert r.status == 200, (probe, await r.text())
        assert _item_status(app, item_id) == "active"
    finally:
        await runner.cleanup()


async def test_an_exposed_listener_with_client_keys_and_admin_token_refuses_strangers(
        monkeypatch: pytest.MonkeyPatch, upstream: FakeUpstream, tmp_path: Path) -> None:
    """The documented alternative to loopback (deploy/README.md): 0.0.0.0 with
    ``require_client_keys`` and ``admin_token``. Served on 127.0.0.1 here, which does
    not help a stranger: neither setting trusts loopback peers."""
    salt = "salt-shared-by-the-operator"
    case = Shipped("exposed", {
        "LCM_HOST": "0.0.0.0", "LCM_TENANT": "agent", "LCM_PROXY__TENANT_SALT": salt,
        "LCM_PROXY__REQUIRE_CLIENT_KEYS": tenant_for_key(AGENT_KEY, salt),
        "LCM_ADMIN_TOKEN": "admin-0123456789abcdef"}, ["serve"])
    app, kw, stderr = _build(case, upstream, tmp_path / "data", monkeypatch)
    assert kw["host"] == "0.0.0.0" and "without proxy.require_client_keys" not in stderr
    runner = web.AppRunner(app)
    await runner.setup()
    try:
        site = web.TCPSite(runner, "127.0.0.1", 0)
        await site.start()
        port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        root = f"http://127.0.0.1:{port}"
        item_id = await _seed(app, root)
        await _refused_unauthenticated(root, item_id)
        assert "ZEBRA-7781" in await _ask(root + "/v1", "/memory search ZEBRA", AGENT_KEY)
        assert _item_status(app, item_id) == "active"
    finally:
        await runner.cleanup()


@pytest.mark.parametrize("env,warns", [
    ({"LCM_HOST": "0.0.0.0", "LCM_TENANT": "agent"}, "tenant 'agent'"),
    ({"LCM_HOST": "0.0.0.0"}, "the tenant its key (or no key) maps to"),
    ({"LCM_HOST": "0.0.0.0", "LCM_PROXY__REQUIRE_CLIENT_KEYS": "t_0123456789abcdef"}, None),
    ({"LCM_HOST": "127.0.0.1", "LCM_TENANT": "agent"}, None),
])
def test_serve_warns_when_memory_is_open_to_the_network(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, env: dict[str, str],
        warns: str | None) -> None:
    monkeypatch.setattr(web, "run_app", lambda app, **kw: None)
    env = {**env, "LCM_DATA_DIR": str(tmp_path / "d"), "LCM_EMBEDDING__PROVIDER": "hashing",
           "LCM_UPSTREAM": "http://127.0.0.1:9/v1"}
    result = CliRunner().invoke(cli.main, ["serve", "--port", "0"], env=env)
    assert result.exit_code == 0, result.output
    line = [ln for ln in result.stderr.splitlines() if "require_client_keys" in ln]
    if warns is None:
        assert line == []
    else:
        assert len(line) == 1 and warns in line[0] and "/memory search" in line[0]
