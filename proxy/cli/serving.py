"""``lcm-proxy serve``: run the proxy.

Cheap checks come first (settings, the data dir, the port, the data-dir lock;
:mod:`proxy.cli.preflight`), so a second proxy on a busy port or data dir stops
with one line (exit 2) before anything heavy opens.
"""

from __future__ import annotations

import logging

import click

from proxy import __version__
from proxy.cli.common import (
    CliError,
    cli_settings,
    config_option,
    data_dir_option,
    is_loopback,
    url_host,
)
from proxy.settings import data_dir_path
from proxy.upstream import shown_url

ADMIN_TOKEN_MIN_CHARS = 16
"""Shorter admin tokens get a warning at start: the throttle (:mod:`proxy.throttle`)
slows one address's guesses, not those of many addresses."""


TOKEN_FILE_MAX_CHARS = 4096
"""More than this in an admin token file is not a token (and ``/dev/zero`` ends)."""


def read_token_file(path: str) -> str:
    """The admin token in the file at ``path``: its one line, without the line break.

    Raises :class:`CliError` (naming the file, never its content) when the file
    cannot be read as UTF-8 text, is empty, or holds more than one line.
    """
    try:
        with open(path, encoding="utf-8") as fh:  # universal newlines: "\r\n" reads as "\n"
            text = fh.read(TOKEN_FILE_MAX_CHARS + 1)
    except UnicodeDecodeError as exc:
        raise CliError(f"the admin token file {path} is not UTF-8 text") from exc
    except OSError as exc:
        raise CliError(f"cannot read the admin token file {path}: {exc.strerror or exc}"
                       ) from exc
    token = text.removesuffix("\n")
    if not token.strip():
        raise CliError(f"the admin token file {path} is empty")
    if "\n" in token or len(text) > TOKEN_FILE_MAX_CHARS:
        raise CliError(f"the admin token file {path} must hold the token alone, on one line")
    return token


@click.command()
@config_option
@click.option("--host", default=None, help="Listen address (default 127.0.0.1).")
@click.option("--port", type=int, default=None, help="Listen port (default 8787).")
@click.option("--upstream", default=None,
              help="Upstream base URL ending in /v1 (default https://api.openai.com/v1).")
@data_dir_option
@click.option("--upstream-api-key", default=None, envvar=None,
              help="Replace the client's Authorization with this key (prefer env "
                   "LCM_UPSTREAM_API_KEY).")
@click.option("--admin-token", default=None,
              help="Bearer token for /lcm/ admin routes (visible in ps: prefer env "
                   "LCM_ADMIN_TOKEN or --admin-token-file).")
@click.option("--admin-token-file", default=None, metavar="PATH",
              help="Read the admin token from this file (one line).")
@click.option("--log-level", default=None, help="DEBUG, INFO, WARNING… (default INFO).")
def serve(config: str | None, host: str | None, port: int | None, upstream: str | None,
          data_dir: str | None, upstream_api_key: str | None, admin_token: str | None,
          admin_token_file: str | None, log_level: str | None) -> None:
    """Run the proxy (the main job). Point your SDK's base_url at http://HOST:PORT/v1."""
    from aiohttp import web

    from memory_core.errors import MemoryError_
    from proxy.allocator import limit_arenas
    from proxy.app import create_app, freeze_on_startup
    from proxy.cli.preflight import DataDirBusy, DataDirLock, bind_sockets, data_dir_problems
    from proxy.log import setup_logging

    if admin_token is not None and admin_token_file is not None:
        raise CliError("give --admin-token or --admin-token-file, not both")
    if admin_token is not None:
        click.echo(
            "warning: --admin-token shows the token to every local user (ps,"
            " /proc/PID/cmdline); set LCM_ADMIN_TOKEN or use --admin-token-file PATH",
            err=True,
        )
    if admin_token_file is not None:
        admin_token = read_token_file(admin_token_file)
    settings = cli_settings(
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
    if not is_loopback(p.host) and not p.admin_token:
        click.echo(
            f"warning: listening on {p.host} without an admin token; /lcm/ admin routes "
            "answer loopback clients only", err=True,
        )
    if 0 < len(p.admin_token) < ADMIN_TOKEN_MIN_CHARS:
        click.echo(
            f"warning: the admin token has {len(p.admin_token)} characters; anyone who "
            "reaches the port may guess it (the inspector's sign-in form, the admin API). "
            f"Use {ADMIN_TOKEN_MIN_CHARS} or more random characters: openssl rand -hex 24",
            err=True,
        )
    if not is_loopback(p.host) and not p.require_client_keys:
        who = f"tenant {p.tenant!r}" if p.tenant else "the tenant its key (or no key) maps to"
        click.echo(
            f"warning: listening on {p.host} without proxy.require_client_keys; any peer "
            f"that reaches the port can read and change the memory of {who} "
            "(/memory search, /memory retract)", err=True,
        )
    # Cheap checks first, nothing heavy opened yet: the data dir, the port, the lock.
    path = data_dir_path(settings)
    for problem in data_dir_problems(path):
        raise CliError(problem)
    try:
        path.mkdir(mode=0o700, parents=True, exist_ok=True)  # private: every conversation
        socks = bind_sockets(p.host, p.port)
    except OSError as exc:
        raise CliError(str(exc)) from exc
    port = socks[0].getsockname()[1]
    try:  # the lock file names this proxy's URL: doctor asks its /lcm/health
        lock = DataDirLock(path, "serve", f"http://{url_host(p.host)}:{port}")
    except DataDirBusy as exc:
        for sock in socks:
            sock.close()
        raise CliError(f"{exc}: stop it first, or pass another --data-dir") from exc
    # Before the engine starts its threads, so that they share the few arenas.
    limit_arenas(p.malloc_arena_max)
    app = create_app(settings)
    app.on_startup.append(freeze_on_startup)  # after the engine opened (cleanup_ctx)

    async def announce(_app: web.Application) -> None:  # bound, and the store is open
        click.echo(
            f"lcm-proxy {__version__} listening on http://{p.host}:{port}/v1 ->"
            f" {shown_url(p.upstream)}\n"
            f"  data dir: {path}\n"
            f"  health:   http://{p.host}:{port}/lcm/health",
            err=True,
        )

    app.on_startup.append(announce)
    try:
        web.run_app(
            app, sock=socks, print=None,
            shutdown_timeout=p.shutdown_timeout_seconds,
            access_log=logging.getLogger("aiohttp.access") if settings.log.access_log else None,
        )
    except (MemoryError_, OSError) as exc:  # the store or an index cannot be opened
        raise CliError(f"cannot start: {exc}") from exc
    finally:
        lock.release()
