"""What the ``lcm-proxy`` commands share: settings, the store, options, output.

Answers go to stdout (JSON with ``--json``, else plain text that pastes into a
bug report); ``--output FILE`` writes a file. Diagnostics go to stderr. A
:class:`CliError` is one line on stderr and exit status 2.
"""

from __future__ import annotations

import contextlib
import ipaddress
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import orjson

from proxy.settings import Settings, SettingsError, data_dir_path, load_settings


class CliError(click.ClickException):
    """A one-line reason on stderr (``Error: …``) and exit status 2: bad settings, a
    data dir that is missing or unusable, a port or data dir in use."""

    exit_code = 2


# -- options ----------------------------------------------------------------------------

_GROUP_OPTIONS = "lcm.group_options"
"""``ctx.meta`` key: ``--config``/``--data-dir`` given to a group (``memory``,
``memory prefs``), by parameter name, with the group that took each."""


def _from_group(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """A command's ``--config``/``--data-dir``: its own value, else the one given to an
    enclosing group (``lcm-proxy memory --data-dir D search …``). The same option given
    to both with different values is bad usage (exit 2), never a silent choice."""
    given = ctx.meta.get(_GROUP_OPTIONS, {}).get(param.name)
    if given is None:
        return value
    group_value, group_name = given
    if value is not None and value != group_value:
        opt = param.opts[0]
        raise click.UsageError(
            f"{opt} given twice: {group_value!r} (after `{group_name}`) and {value!r}"
            f" (after `{ctx.info_name}`); give it once", ctx)
    return group_value


config_option = click.option(
    "--config", "config", type=click.Path(dir_okay=False), default=None,
    callback=_from_group,
    help="TOML settings file (default: $LCM_CONFIG, else none).",
)
data_dir_option = click.option(
    "--data-dir", default=None, callback=_from_group,
    help="Data directory (default ./lcm-data; env LCM_DATA_DIR).",
)


def group_options(ctx: click.Context) -> dict[str, tuple[Any, str]]:
    """The ``--config``/``--data-dir`` given to enclosing groups so far, by parameter
    name: ``(value, group name)``; for a group that runs a default subcommand itself
    (``memory prefs`` → ``list``), since ``ctx.invoke`` skips option callbacks."""
    return dict(ctx.meta.get(_GROUP_OPTIONS, {}))


def _pass_down(ctx: click.Context, param: click.Parameter, value: Any) -> Any:
    """Keep a group's ``--config``/``--data-dir`` for its subcommands
    (:func:`_from_group`); the group's own callback never sees it."""
    if value is not None and param.name is not None:
        given = ctx.meta.setdefault(_GROUP_OPTIONS, {})
        earlier = given.get(param.name)
        if earlier is not None and earlier[0] != value:
            raise click.UsageError(
                f"{param.opts[0]} given twice: {earlier[0]!r} (after `{earlier[1]}`) and"
                f" {value!r} (after `{ctx.info_name}`); give it once", ctx)
        given[param.name] = (value, ctx.info_name)
    return value


def store_group_options(fn: Any) -> Any:
    """Give a command group (``memory``, ``memory prefs``) the ``--config`` and
    ``--data-dir`` of its subcommands, so that ``lcm-proxy memory --data-dir D status``
    works as ``lcm-proxy memory status --data-dir D`` does. The values go down to every
    subcommand (:func:`_from_group`); the group function takes no parameters for them."""
    for option in (
        click.option("--config", "config", type=click.Path(dir_okay=False), default=None,
                     callback=_pass_down, expose_value=False,
                     help="TOML settings file, for every subcommand (also accepted after"
                          " the subcommand)."),
        click.option("--data-dir", default=None, callback=_pass_down, expose_value=False,
                     help="Data directory, for every subcommand (also accepted after the"
                          " subcommand)."),
    )[::-1]:
        fn = option(fn)
    return fn
output_option = click.option(
    "--output", "-o", "json_file", type=click.Path(dir_okay=False), default=None,
    help="Also write the figures to this JSON file.")
print_json_option = click.option(
    "--json", "as_json", is_flag=True,
    help="Print the figures as JSON on stdout instead of the table.")
"""``--json`` means one thing in every command: print JSON on stdout. Files are
written with ``--output FILE`` (``--json FILE`` wrote one before issue 29)."""


# -- settings and the store -------------------------------------------------------------

def cli_settings(config: str | None, overrides: dict[str, dict[str, Any]]) -> Settings:
    """The settings in force (file ``config``, environment, then ``overrides`` from
    flags; ``None`` values are ignored). Warnings go to stderr; invalid settings
    raise :class:`CliError`."""
    try:
        settings = load_settings(config, overrides=overrides)
    except SettingsError as exc:
        raise CliError(str(exc)) from exc
    for warning in settings.warnings:
        click.echo(f"warning: {warning}", err=True)
    return settings


def data_dir_settings(config: str | None, data_dir: str | None) -> Settings:
    """:func:`cli_settings` with ``--data-dir`` as the only flag."""
    return cli_settings(config, {"storage": {"data_dir": data_dir}})


def refuse_missing_store(path: Path, hint: str = "") -> None:
    """Raise :class:`CliError` for a data dir ``path`` that holds no store; ``hint``
    (:func:`elsewhere_hint`) names the data dir a running proxy keeps instead."""
    if path.exists() and not path.is_dir():
        raise CliError(f"data dir {path} is not a directory (it is a regular file)")
    raise CliError(
        f"no lcm-proxy store in {path}"
        + ("" if path.exists() else " (the directory does not exist)")
        + (f"; {hint}" if hint else "; check --data-dir, LCM_DATA_DIR or storage.data_dir"))


def open_engine(config: str | None, data_dir: str | None, *,
                create: bool = False) -> Any:
    """Open the store in force (a ``memory_core.engine.Engine``; the caller closes it):
    the PostgreSQL database of ``storage.url``, else the data dir's. Without ``create``
    a directory that holds no store is refused (exit 2) instead of getting a new
    empty one: a mistyped ``--data-dir`` must not look like an empty memory. A store
    that cannot be opened exits 1."""
    from memory_core.engine import Engine
    from memory_core.errors import StoreError
    from proxy.cli.preflight import data_dir_problems, has_store

    settings = data_dir_settings(config, data_dir)
    path = data_dir_path(settings)
    if not settings.storage.url and not has_store(path):  # a URL: the store is there
        if not create or (path.exists() and not path.is_dir()):
            refuse_missing_store(path, "" if create else elsewhere_hint(settings))
        for problem in data_dir_problems(path):
            raise CliError(problem)
        click.echo(f"creating a new store in {path}", err=True)
    try:
        with schema_upgrade_guard(settings, path):
            return Engine(path, settings.memory_config())
    except StoreError as exc:
        raise click.ClickException(str(exc)) from exc


HEALTH_TIMEOUT_SECONDS = 2.0
"""How long a command waits for a running proxy's ``/lcm/health``."""


def proxy_health(url: str) -> dict[str, Any] | None:
    """The JSON of ``GET {url}/lcm/health`` when an lcm-proxy answers it (200 or 503
    with ``version`` and ``schema_version``), else ``None``. Sends no credentials."""
    import urllib.error
    import urllib.request

    try:
        with urllib.request.urlopen(f"{url}/lcm/health",  # noqa: S310 - http(s) URL built here
                                    timeout=HEALTH_TIMEOUT_SECONDS) as resp:
            body = resp.read(65536)
    except urllib.error.HTTPError as exc:  # 503: degraded, still the proxy's answer
        body = exc.read(65536) if exc.code == 503 else b""
    except (OSError, ValueError):
        return None
    try:
        data = orjson.loads(body)
    except orjson.JSONDecodeError:
        return None
    if isinstance(data, dict) and {"version", "schema_version", "status"} <= data.keys():
        return data
    return None


def elsewhere_hint(settings: Settings) -> str:
    """Where to look, for a read command that found nothing in the data dir in force:
    when the lcm-proxy answering on the configured host and port keeps its data in
    another directory (``serve --data-dir`` given to it, not to this command),
    ``"the lcm-proxy at URL keeps its data in DIR: add --data-dir DIR"``; else ``""``
    (nothing answers there, it is this data dir, or the store is ``storage.url``'s).
    Costs one request to that port, of at most :data:`HEALTH_TIMEOUT_SECONDS`."""
    if settings.storage.url or not settings.proxy.port:
        return ""
    url = f"http://{url_host(settings.proxy.host)}:{settings.proxy.port}"
    health = proxy_health(url)
    theirs = health.get("data_dir") if health is not None else None
    if not isinstance(theirs, str) or theirs == str(data_dir_path(settings)):
        return ""
    return f"the lcm-proxy at {url} keeps its data in {theirs}: add --data-dir {theirs}"


def _command_name() -> str:
    """The running command without the program name ("memory search"; "" outside
    click)."""
    names: list[str] = []
    ctx = click.get_current_context(silent=True)
    while ctx is not None and ctx.parent is not None:  # the root is the program
        names.insert(0, ctx.info_name or "")
        ctx = ctx.parent
    return " ".join(names)


@contextlib.contextmanager
def schema_upgrade_guard(settings: Settings, path: Path, *,
                         locked: bool = False) -> Iterator[None]:
    """Wrap the opening of the store in force (it applies the pending migrations) so
    that a store an older lcm-proxy wrote is upgraded only where no older proxy can
    still be using it. Its schema number is read first without migrating
    (:func:`memory_core.store.factory.stored_schema_version`); when it is behind this
    code's:

    - PostgreSQL (``storage.url``): refused with :class:`CliError`. Replicas of any
      version may be serving it and none holds a lock a command can see; a replica
      of the older version refuses the upgraded schema when it restarts. The upgrade
      is ``serve``'s, on start (the rolling update's first new replica).
    - SQLite, the data dir held by another process (:func:`~proxy.cli.preflight.
      lock_owner`: a running proxy of the older version, a reindex, a migrate):
      refused with :class:`CliError` naming it and both versions.
    - SQLite, nothing holding it: upgraded on open as before, with a line on
      stderr, the data dir's lock held meanwhile (a ``serve`` started then refuses
      the busy dir rather than open a half-upgraded store). ``locked``: the caller
      holds that lock already.

    A store at this code's schema, a newer one (opening refuses it), none yet, or
    one whose version cannot be read (opening says why) passes unchanged."""
    from memory_core.errors import StoreError
    from memory_core.store.factory import code_schema_version, stored_schema_version
    from proxy.cli.preflight import DataDirBusy, DataDirLock, lock_holder

    cfg = settings.memory_config()
    try:
        stored = stored_schema_version(path, cfg)
    except StoreError:
        stored = 0
    code = code_schema_version(cfg)
    if not 0 < stored < code:
        yield
        return
    command = _command_name() or "this command"
    if settings.storage.url:
        from memory_core.store.pg import describe

        raise CliError(
            f"the store at {describe(settings.storage.url)} has schema {stored}, older"
            f" than this lcm-proxy's ({code}): `lcm-proxy {command}` would upgrade it"
            " under any replica of the older version still serving it, which then"
            " refuses it on restart. Upgrade the replicas (the first `serve` of this"
            " version upgrades the schema when it starts), or run this command with"
            f" the lcm-proxy of schema {stored}")
    lock = None
    if not locked:
        holder = lock_holder(path)
        try:
            lock = DataDirLock(path, command) if holder is None else None
        except DataDirBusy as exc:
            holder = exc.holder
        if holder is not None:
            raise CliError(
                f"store schema {stored} in {path} is older than this lcm-proxy's ({code}),"
                f" and {holder} holds that data dir: `lcm-proxy {command}` would upgrade"
                " the store under it, and an older proxy then refuses it when it"
                " restarts. Run this command with the lcm-proxy of that proxy's"
                " version, or stop it first (this command then upgrades the store to"
                f" schema {code}, as `serve` of this version does)")
    click.echo(f"upgrading the store in {path} from schema {stored} to {code} (an"
               " older lcm-proxy cannot open it afterwards)", err=True)
    try:
        yield
    finally:
        if lock is not None:
            lock.release()


def is_loopback(host: str) -> bool:
    """Whether the listen address ``host`` reaches this machine only ("" is every
    interface: not loopback; "localhost" is)."""
    if host in ("localhost", ""):
        return host == "localhost"
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def url_host(host: str) -> str:
    """``host`` as a URL's host part that reaches a server listening there from this
    machine: every interface (``""``, ``0.0.0.0``, ``::``) is reached on loopback; an
    IPv6 address gets brackets."""
    if host in ("", "0.0.0.0"):
        return "127.0.0.1"
    if host == "::":
        return "[::1]"
    return f"[{host}]" if ":" in host else host


# -- output -----------------------------------------------------------------------------

def echo_json(value: Any) -> None:
    """Print ``value`` as indented JSON on stdout."""
    click.echo(orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode())


def answer(out: dict[str, Any], json_file: str | None, as_json: bool,
           text_key: str = "table") -> None:
    """Write ``out`` to ``json_file`` (when given), then print it: as JSON with
    ``as_json`` (without its rendered ``text_key``), else that rendering."""
    figures = out if text_key == "table" else {k: v for k, v in out.items() if k != text_key}
    if json_file:
        with open(json_file, "wb") as fh:
            fh.write(orjson.dumps(figures, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS))
    if as_json:
        echo_json(figures)
    else:
        click.echo(out[text_key])


def fmt_ts(ts: float | None) -> str:
    """A Unix time as ``YYYY-MM-DD HH:MM:SSZ`` (UTC), ``-`` when unset."""
    import time as _time

    return _time.strftime("%Y-%m-%d %H:%M:%S", _time.gmtime(ts)) + "Z" if ts else "-"


def progress_bar(**kwargs: Any) -> Any:
    """A tqdm progress bar on stderr (``kwargs`` go to tqdm: total, desc, unit)."""
    from tqdm import tqdm

    return tqdm(file=sys.stderr, dynamic_ncols=True, **kwargs)


# -- parsing ----------------------------------------------------------------------------

def positive_ints(value: str) -> tuple[int, ...]:
    """"5,10,25" as sorted distinct positive integers; click.BadParameter otherwise."""
    try:
        ks = tuple(sorted({int(x) for x in value.split(",") if x.strip()}))
    except ValueError as exc:
        raise click.BadParameter(f"expected comma-separated integers, got {value!r}") from exc
    if not ks or min(ks) < 1:
        raise click.BadParameter("k values must be positive")
    return ks


def index_list(value: str) -> tuple[int, ...]:
    """Parse "5-9" or "0,2,4" (or a mix, "0-2,7") into indexes."""
    out: list[int] = []
    try:
        for part in value.split(","):
            lo, _, hi = part.strip().partition("-")
            out.extend(range(int(lo), int(hi or lo) + 1))
    except ValueError as exc:
        raise click.BadParameter(f"not a list of indexes: {value!r}") from exc
    return tuple(out)
