"""The replicated deployments agree with the code: deploy/compose.postgres.yaml (with
deploy/postgres/haproxy.cfg) and deploy/kubernetes/lcm-proxy-postgres.yaml.

No container engine runs here: the files are parsed, and every ``LCM_`` name they
set is checked against the settings (an alias of ``ENV_ALIASES`` or a real
``LCM_<SECTION>__<KEY>``), every port against the one ``serve`` binds, every probe
and health-check path against the routes of a real app, and the shape the
deployment promises: PostgreSQL through ``LCM_STORE__URL``, two or more replicas,
no per-replica volume that evidence would need. tests/test_deploy_security.py
starts the same configurations' access settings for real.
"""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from proxy.app import create_app
from proxy.settings import ENV_ALIASES, SECTIONS, ProxySettings, load_settings

ROOT = Path(__file__).resolve().parent.parent
DEPLOY = ROOT / "deploy"
COMPOSE = DEPLOY / "compose.postgres.yaml"
HAPROXY = DEPLOY / "postgres" / "haproxy.cfg"
K8S = DEPLOY / "kubernetes" / "lcm-proxy-postgres.yaml"
PORT = ProxySettings().port
PROBE_ENV = {"LCM_PROBE_TIMEOUT_SECONDS"}  # read by python -m proxy.probe, not a setting
MIN_MEMORY_MIB = 768


def _yaml() -> Any:
    return pytest.importorskip("yaml")


def _setting_of(name: str) -> tuple[str, str] | None:
    """The (section, key) an ``LCM_`` variable sets, or ``None`` when it sets none."""
    if name in ENV_ALIASES:
        return ENV_ALIASES[name]
    section, sep, key = name.removeprefix("LCM_").partition("__")
    if not sep or section.lower() not in SECTIONS:
        return None
    fields = {f.name for f in dataclasses.fields(SECTIONS[section.lower()])}
    return (section.lower(), key.lower()) if key.lower() in fields else None


def _routes(tmp_path: Path) -> set[str]:
    app = create_app(load_settings(None, environ={},
                                   overrides={"storage": {"data_dir": str(tmp_path)}}))
    return {r.canonical for r in app.router.resources()}


def _compose() -> dict[str, Any]:
    return dict(_yaml().safe_load(COMPOSE.read_text(encoding="utf-8")))


def _replicas(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {n: s for n, s in doc["services"].items()
            if (s.get("command") or [None])[0] == "serve"}


def _k8s() -> list[dict[str, Any]]:
    return [d for d in _yaml().safe_load_all(K8S.read_text(encoding="utf-8")) if d]


def _one(docs: list[dict[str, Any]], kind: str) -> dict[str, Any]:
    (found,) = [d for d in docs if d["kind"] == kind]
    return found


def _mib(quantity: str) -> float:
    m = re.fullmatch(r"(\d+(?:\.\d+)?)(Mi|Gi|m|g)", str(quantity))
    assert m, quantity
    return float(m.group(1)) * (1024 if m.group(2) in ("Gi", "g") else 1)


def test_every_lcm_variable_is_a_setting() -> None:
    names: set[str] = set()
    for service in _replicas(_compose()).values():
        names |= set(service["environment"])
    (container,) = _one(_k8s(), "Deployment")["spec"]["template"]["spec"]["containers"]
    names |= {e["name"] for e in container["env"]}
    unknown = {n for n in names if n.startswith("LCM_") and n not in PROBE_ENV
               and _setting_of(n) is None}
    assert not unknown, f"not settings (proxy/settings.py): {sorted(unknown)}"
    # the store URL, the data dir (derived indexes) and the access settings are set
    assert {"LCM_STORE__URL", "LCM_DATA_DIR", "LCM_ADMIN_TOKEN",
            "LCM_PROXY__REQUIRE_CLIENT_KEYS", "LCM_PROXY__TENANT_SALT"} <= names
    assert _setting_of("LCM_STORE__URL") == ("storage", "url")


def test_compose_runs_two_replicas_on_postgresql_behind_haproxy(tmp_path: Path) -> None:
    doc = _compose()
    replicas = _replicas(doc)
    assert len(replicas) >= 2
    postgres = doc["services"]["postgres"]
    pg_env = postgres["environment"]
    for name, service in replicas.items():
        env = service["environment"]
        assert env["LCM_HOST"] == "0.0.0.0" and env["LCM_PORT"] == str(PORT)
        url = urlsplit(re.sub(r"\$\{[^}]*\}", "secret", env["LCM_STORE__URL"]))
        assert url.scheme == "postgresql" and url.hostname == "postgres"
        assert url.port == 5432 and url.path == "/" + pg_env["POSTGRES_DB"]
        assert url.username == pg_env["POSTGRES_USER"]
        assert "${POSTGRES_PASSWORD" in env["LCM_STORE__URL"]
        # no volume evidence would need: /data is anonymous (derived indexes only)
        data = [v for v in service["volumes"] if str(v).split(":")[-1] == "/data"
                or str(v) == "/data"]
        assert data == ["/data"], service["volumes"]
        assert service["depends_on"]["postgres"]["condition"] == "service_healthy"
        assert service["healthcheck"]["test"] == ["CMD", "python", "-m", "proxy.probe",
                                                  "readyz"]
        assert "ports" not in service, f"{name}: clients go through the load balancer"
        assert service["read_only"] is True and service["cap_drop"] == ["ALL"]
        assert _mib(service["mem_limit"]) >= MIN_MEMORY_MIB
        for secret in ("LCM_ADMIN_TOKEN", "LCM_PROXY__REQUIRE_CLIENT_KEYS",
                       "LCM_PROXY__TENANT_SALT"):
            assert re.fullmatch(r"\$\{\w+:\?[^}]+\}", env[secret]), (name, secret)
    assert "pg_isready" in postgres["healthcheck"]["test"]
    assert any(str(v).endswith(":/var/lib/postgresql/data") for v in postgres["volumes"])

    lb = doc["services"]["haproxy"]
    (published,) = lb["ports"]
    host_port, container_port = str(published).rsplit(":", 2)[-2:]
    assert host_port == container_port == str(PORT)
    assert all(lb["depends_on"][n]["condition"] == "service_healthy" for n in replicas)
    (mount,) = lb["volumes"]
    source, target = str(mount).split(":")[:2]
    assert (DEPLOY / source).resolve() == HAPROXY.resolve()
    assert target == "/usr/local/etc/haproxy/haproxy.cfg"

    cfg = HAPROXY.read_text(encoding="utf-8")
    (bind,) = re.findall(r"^\s*bind\s+\S*:(\d+)\s*$", cfg, re.M)
    assert bind == container_port
    servers = dict(re.findall(r"^\s*server\s+\S+\s+([\w.-]+):(\d+)\s+check\b", cfg, re.M))
    assert set(servers) == set(replicas) and set(servers.values()) == {str(PORT)}
    (check,) = re.findall(r"http-check send meth GET uri (\S+)", cfg)
    assert check == "/lcm/readyz" and check in _routes(tmp_path)
    assert re.search(r"^\s*http-check expect status 200\s*$", cfg, re.M)


def test_kubernetes_deployment_shares_postgresql_and_keeps_no_volume(tmp_path: Path) -> None:
    docs = _k8s()
    assert not [d for d in docs if d["kind"] in ("PersistentVolumeClaim", "StatefulSet")]
    deployment = _one(docs, "Deployment")
    assert deployment["spec"]["replicas"] >= 2
    assert deployment["spec"]["strategy"]["type"] == "RollingUpdate"
    pod = deployment["spec"]["template"]
    labels = pod["metadata"]["labels"]
    assert deployment["spec"]["selector"]["matchLabels"].items() <= labels.items()
    spec = pod["spec"]
    (proxy,) = spec["containers"]
    assert proxy["args"][0] == "serve"
    env = {e["name"]: e for e in proxy["env"]}
    assert env["LCM_HOST"]["value"] == "0.0.0.0" and env["LCM_PORT"]["value"] == str(PORT)
    # the database URL comes from the shipped Secret, the access settings from one the
    # operator creates (not optional: no pod starts open)
    ref = env["LCM_STORE__URL"]["valueFrom"]["secretKeyRef"]
    secret = _one(docs, "Secret")
    assert ref["name"] == secret["metadata"]["name"]
    assert urlsplit(secret["stringData"][ref["key"]]).scheme == "postgresql"
    for name in ("LCM_ADMIN_TOKEN", "LCM_PROXY__TENANT_SALT",
                 "LCM_PROXY__REQUIRE_CLIENT_KEYS"):
        assert env[name]["valueFrom"]["secretKeyRef"].get("optional") is not True, name
    # ports and probes: the port serve binds, routes the app has
    (port,) = proxy["ports"]
    assert port["containerPort"] == PORT
    routes = _routes(tmp_path)
    probes = {}
    for name in ("startupProbe", "readinessProbe", "livenessProbe"):
        get = proxy[name]["httpGet"]
        assert get["port"] in (port["name"], PORT), name
        assert get["path"] in routes, (name, get["path"])
        probes[name] = get["path"]
    assert probes == {"startupProbe": "/lcm/readyz", "readinessProbe": "/lcm/readyz",
                      "livenessProbe": "/lcm/livez"}
    for kind in ("requests", "limits"):
        assert _mib(proxy["resources"][kind]["memory"]) >= MIN_MEMORY_MIB
        assert proxy["resources"][kind]["cpu"]
    # /data and /tmp are emptyDirs: nothing per pod outlives it
    volumes = {v["name"]: v for v in spec["volumes"]}
    mounts = {m["mountPath"]: m["name"] for m in proxy["volumeMounts"]}
    assert "emptyDir" in volumes[mounts["/data"]] and "emptyDir" in volumes[mounts["/tmp"]]
    assert all("emptyDir" in v for v in volumes.values())
    ctx = proxy["securityContext"]
    assert ctx["readOnlyRootFilesystem"] is True and ctx["allowPrivilegeEscalation"] is False
    assert spec["securityContext"]["runAsNonRoot"] is True

    service = _one(docs, "Service")
    assert service["spec"]["selector"].items() <= labels.items()
    (sport,) = service["spec"]["ports"]
    assert sport["port"] == PORT and sport["targetPort"] in (port["name"], PORT)
    pdb = _one(docs, "PodDisruptionBudget")
    assert pdb["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert pdb["spec"]["minAvailable"] < deployment["spec"]["replicas"]
