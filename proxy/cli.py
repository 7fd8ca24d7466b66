"""The ``lcm-proxy`` command line (click): ``serve``, ``memory …``, ``bench …``.

Answers go to stdout (JSON with ``--json``, else plain text that pastes into a
bug report); diagnostics go to stderr. Exit status 2 for bad usage or settings.
"""

from __future__ import annotations

import ipaddress
import logging
import sys
from typing import Any

import click
import orjson

from proxy import __version__
from proxy.settings import Settings, SettingsError, data_dir_path, load_settings

log = logging.getLogger("lcm.cli")


def _settings(config: str | None, overrides: dict[str, dict[str, Any]]) -> Settings:
    try:
        settings = load_settings(config, overrides=overrides)
    except SettingsError as exc:
        raise click.UsageError(str(exc)) from exc
    for warning in settings.warnings:
        click.echo(f"warning: {warning}", err=True)
    return settings


def _echo_json(value: Any) -> None:
    click.echo(orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode())


def _is_loopback(host: str) -> bool:
    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="lcm-proxy")
def main() -> None:
    """lcm-proxy: a transparent OpenAI-compatible proxy with lossless memory."""


config_option = click.option(
    "--config", "config", type=click.Path(dir_okay=False), default=None,
    help="TOML settings file (default: $LCM_CONFIG, else none).",
)
data_dir_option = click.option(
    "--data-dir", default=None, help="Data directory (default ./lcm-data; env LCM_DATA_DIR)."
)


@main.command()
@config_option
@click.option("--host", default=None, help="Listen address (default 127.0.0.1).")
@click.option("--port", type=int, default=None, help="Listen port (default 8787).")
@click.option("--upstream", default=None,
              help="Upstream base URL ending in /v1 (default https://api.openai.com/v1).")
@data_dir_option
@click.option("--upstream-api-key", default=None, envvar=None,
              help="Replace the client's Authorization with this key (prefer env "
                   "LCM_UPSTREAM_API_KEY).")
@click.option("--admin-token", default=None, help="Bearer token for /lcm/ admin routes.")
@click.option("--log-level", default=None, help="DEBUG, INFO, WARNING… (default INFO).")
def serve(config: str | None, host: str | None, port: int | None, upstream: str | None,
          data_dir: str | None, upstream_api_key: str | None, admin_token: str | None,
          log_level: str | None) -> None:
    """Run the proxy (the main job). Point your SDK's base_url at http://HOST:PORT/v1."""
    from aiohttp import web

    from proxy.app import create_app
    from proxy.log import setup_logging

    settings = _settings(
        config,
        {
            "proxy": {"host": host, "port": port, "upstream": upstream,
                      "upstream_api_key": upstream_api_key, "admin_token": admin_token},
            "storage": {"data_dir": data_dir},
            "log": {"level": log_level},
        },
    )
    setup_logging(settings.log.level, settings.log.json)
    p = settings.proxy
    if not _is_loopback(p.host) and not p.admin_token:
        click.echo(
            f"warning: listening on {p.host} without an admin token; /lcm/ admin routes "
            "answer loopback clients only", err=True,
        )
    app = create_app(settings)
    click.echo(
        f"lcm-proxy {__version__} listening on http://{p.host}:{p.port}/v1 -> {p.upstream}\n"
        f"  data dir: {data_dir_path(settings)}\n"
        f"  health:   http://{p.host}:{p.port}/lcm/health",
        err=True,
    )
    web.run_app(
        app, host=p.host, port=p.port, print=None,
        shutdown_timeout=p.shutdown_timeout_seconds,
        access_log=logging.getLogger("aiohttp.access") if settings.log.access_log else None,
    )


@main.group()
def memory() -> None:
    """Inspect what the proxy stored."""


def _engine(config: str | None, data_dir: str | None):  # type: ignore[no-untyped-def]
    from memory_core.engine import Engine
    from memory_core.errors import StoreError

    settings = _settings(config, {"storage": {"data_dir": data_dir}})
    path = data_dir_path(settings)
    try:
        return Engine(path, settings.memory_config())
    except StoreError as exc:
        raise click.ClickException(str(exc)) from exc


@memory.command("status")
@config_option
@data_dir_option
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def memory_status(config: str | None, data_dir: str | None, as_json: bool) -> None:
    """Database path, schema version and counts."""
    engine = _engine(config, data_dir)
    try:
        info = engine.status()
    finally:
        engine.close()
    if as_json:
        _echo_json(info)
        return
    click.echo(f"database:        {info['database']}")
    click.echo(f"schema version:  {info['schema_version']}")
    click.echo(f"size:            {info['size_bytes']} bytes")
    for name, count in info["counts"].items():
        click.echo(f"{name + ':':<17}{count}")
    click.echo(f"tenants:         {info['tenants']}  (tenant/role pairs: {info['tenant_roles']})")


@memory.command("export")
@config_option
@data_dir_option
@click.option("--session", default=None, help="Only this X-LCM-Session.")
@click.option("--role", default=None, help="Only this role (persona).")
@click.option("--tenant", default=None, help="Only this tenant id.")
@click.option("--thread", "thread_id", type=int, default=None, help="Only this thread id.")
@click.option("--events", is_flag=True, help="Include the request/response event log.")
def memory_export(config: str | None, data_dir: str | None, session: str | None,
                  role: str | None, tenant: str | None, thread_id: int | None,
                  events: bool) -> None:
    """Print stored threads and messages (and events) as JSON."""
    engine = _engine(config, data_dir)
    try:
        data = engine.export(session=session, role=role, tenant=tenant, thread_id=thread_id,
                             events=events)
    finally:
        engine.close()
    _echo_json(data)


@main.group()
def bench() -> None:
    """Benchmarks that print a table (compare against a baseline in the same run)."""


@bench.command("proxy")
@click.option("--requests", "n", type=int, default=2000, show_default=True,
              help="Requests per measured mode.")
@click.option("--concurrency", type=int, default=32, show_default=True,
              help="Concurrent clients for the throughput rows.")
@click.option("--json", "json_file", type=click.Path(dir_okay=False), default=None,
              help="Also write the figures to this JSON file.")
def bench_proxy(n: int, concurrency: int, json_file: str | None) -> None:
    """Direct vs through-the-proxy latency and throughput against a loopback fake upstream."""
    from proxy.bench import run_proxy_bench

    rows = run_proxy_bench(n_requests=n, concurrency=concurrency)
    if json_file:
        with open(json_file, "wb") as fh:
            fh.write(orjson.dumps(rows, option=orjson.OPT_INDENT_2))
    click.echo(rows["table"])


def _register_extensions() -> None:
    """Attach command groups defined in their own modules (search, eval…)."""
    from proxy import cli_search

    cli_search.register(main)


_register_extensions()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
