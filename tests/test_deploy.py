"""deploy/ agrees with the code: port, health path, console script, CLI flags.

No container engine runs here; these tests read the files. The YAML structure is
checked only when a YAML parser is importable (PyYAML is not a dependency);
the textual checks always run.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from proxy.app import create_app
from proxy.cli import main as cli_main
from proxy.settings import ProxySettings, load_settings

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
DOCKERFILE = DEPLOY / "Dockerfile"
COMPOSE = DEPLOY / "compose.yaml"
K8S = DEPLOY / "kubernetes" / "agent-with-lcm-proxy.yaml"
PORT = ProxySettings().port
HEALTH = "/lcm/health"


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
    assert HEALTH in paths


def test_dockerfile_matches_the_code() -> None:
    text = DOCKERFILE.read_text(encoding="utf-8")
    stages = re.findall(r"^FROM\s+\S+\s+AS\s+\S+", text, re.M)
    assert len(stages) >= 2, "multi-stage build expected"
    assert "python:3.11-slim" in text
    assert re.search(rf"^EXPOSE\s+{PORT}\b", text, re.M)
    assert re.search(r'^VOLUME\s+\[?"?/data"?\]?', text, re.M)
    user = re.findall(r"^USER\s+(\S+)", text, re.M)
    assert user and user[-1] not in ("root", "0")
    healthcheck = text.split("\nHEALTHCHECK", 1)[1].split("\nENTRYPOINT", 1)[0]
    assert HEALTH in healthcheck and "urllib.request" in healthcheck
    assert "curl" not in healthcheck
    entry = re.search(r"^ENTRYPOINT\s+\[\"([^\"]+)\"\]", text, re.M)
    assert entry and entry.group(1) == _script_name()
    cmd = re.search(r"^CMD\s+(\[.*\])", text, re.M)
    assert cmd
    args = [a.strip().strip('"') for a in cmd.group(1).strip("[]").split(",")]
    assert args[0] == "serve" and "--host" in args and "0.0.0.0" in args
    assert {a for a in args if a.startswith("--")} <= _serve_flags()


def test_compose_text_matches_the_code() -> None:
    text = COMPOSE.read_text(encoding="utf-8")
    assert f"OPENAI_BASE_URL: http://lcm-proxy:{PORT}/v1" in text
    assert "OPENAI_API_KEY: ${OPENAI_API_KEY" in text
    assert f"{PORT}/lcm/health" in text
    assert "dockerfile: deploy/Dockerfile" in text


def test_kubernetes_text_matches_the_code() -> None:
    text = K8S.read_text(encoding="utf-8")
    assert f"value: http://127.0.0.1:{PORT}/v1" in text
    assert text.count(f"path: {HEALTH}") >= 2
    assert f"containerPort: {PORT}" in text
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
    assert agent["environment"]["OPENAI_BASE_URL"] == f"http://lcm-proxy:{PORT}/v1"
    assert "OPENAI_API_KEY" in agent["environment"]
    assert agent["depends_on"]["lcm-proxy"]["condition"] == "service_healthy"


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
    ports = {p["name"]: p["containerPort"] for p in proxy["ports"]}
    assert PORT in ports.values()
    for probe in ("readinessProbe", "livenessProbe"):
        get = proxy[probe]["httpGet"]
        assert get["path"] == HEALTH
        assert ports.get(get["port"], get["port"]) == PORT
    assert proxy["args"][0] == "serve"
    assert {a for a in proxy["args"] if a.startswith("--")} <= _serve_flags()
    for c in (proxy, agent):
        assert c["resources"]["requests"] and c["resources"]["limits"]
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
