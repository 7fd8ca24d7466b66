"""``lcm-proxy doctor``: what an operator pastes into a bug report.

Schema, counts, the store's integrity check (SQLite's ``PRAGMA integrity_check``;
on PostgreSQL the links no foreign key guards), index lag, index consistency with
the store (documents per kind; "SQLite" in its lines means the store on either
backend), the configuration in force (secrets redacted: the running proxy's from
its ``GET /lcm/v1/config`` when one serves this data dir, else this command's, and
labelled so). The text leads with the verdict (``doctor: OK`` or the number of
problems and warnings) and each finding, then the details; of the configuration it
lists the settings off their default, every one with ``--settings`` (``--json``
always holds them all). It exits 1 when the database is damaged, an index
disagrees with the store although it has caught up, or ``serve`` could not use the
data dir (a regular file, not writable).
Doctor is also run beside a running proxy: one that holds the data dir's lock is
named (pid, URL, its ``/lcm/health``) in a note, not a warning, as are its
indexer's lag and the index counts that lag explains; the configured port taken by
that same proxy is no warning either. The read-only checks run all the same. A
port taken by anything else, a lock holder that does not answer its health
endpoint, and a running ``reindex`` or ``migrate`` are warnings. With
``storage.url`` the store checked is that PostgreSQL database. A store an older
lcm-proxy wrote (its schema behind this code's) is not opened: opening applies the
newer migrations, under a running older proxy too, which would then refuse it on
restart; doctor says so in a warning and skips the store checks.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import click
import orjson

from proxy import __version__
from proxy.cli.common import (
    HEALTH_TIMEOUT_SECONDS,
    config_option,
    data_dir_option,
    data_dir_settings,
    echo_json,
    is_loopback,
    open_engine,
    proxy_health,
    url_host,
)


@click.command("doctor")
@config_option
@data_dir_option
@click.option("--settings", "all_settings", is_flag=True,
              help="List every setting in force, not only those off their default.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON (every setting).")
def doctor(config: str | None, data_dir: str | None, all_settings: bool,
           as_json: bool) -> None:
    """Check the data dir, schema, integrity, index lag and index consistency with
    SQLite; print the verdict and findings first, then the details and the settings
    off their default. Exit 1 when a problem needs fixing."""
    from memory_core.store.migrations import SCHEMA_VERSION
    from proxy.cli.preflight import bind_sockets, data_dir_problems, has_store
    from proxy.settings import data_dir_path

    settings = data_dir_settings(config, data_dir)
    path = data_dir_path(settings)
    report: dict[str, Any] = {"version": __version__, "config_file": settings.config_file,
                              "data_dir": str(path), "schema_version_code": SCHEMA_VERSION}
    warnings = list(settings.warnings)
    notes: list[str] = []
    problems: list[str] = data_dir_problems(path)
    p = settings.proxy
    port_busy = ""
    if p.port:
        try:
            for sock in bind_sockets(p.host, p.port):
                sock.close()
        except OSError as exc:
            port_busy = str(exc)
    running = _running_proxy(path, p.host, p.port, port_busy, warnings, notes)
    report["running_proxy"] = running
    has_db = bool(settings.storage.url or has_store(path))  # a URL: that database
    if has_db and not _older_store(report, warnings, settings, path, running):
        _check_store(report, warnings, notes, problems, config, str(path), open_engine,
                     settings, is_running=bool(running and running["command"] == "serve"))
    elif not has_db and not problems:
        warnings.append(f"no database yet in {path} (created on first serve)")
    if not is_loopback(p.host) and not p.admin_token:
        warnings.append(f"proxy.host={p.host} is not loopback and no admin token is set:"
                        " the admin API and inspector answer loopback clients only (set"
                        " proxy.admin_token to reach them from elsewhere)")
    report["config"] = settings.public_dict()
    report["running_config"] = (
        _running_config(running["url"], p.admin_token)
        if running and running["command"] == "serve" and running["status"] else None)
    if report["running_config"] is not None:
        unapplied = _not_in_force(report["config"], report["running_config"]["config"])
        if unapplied:
            notes.append(
                "this command's file or environment sets what the running proxy does not"
                " use (the settings below are the proxy's; restart `serve` with them to"
                " apply): " + "; ".join(f"{name} = {own!r} (running: {theirs!r})"
                                        for name, own, theirs in unapplied))
    report["notes"], report["warnings"], report["problems"] = notes, warnings, problems
    if as_json:
        echo_json(report)
    else:
        _print_doctor(report, all_settings=all_settings)
    if problems:
        raise SystemExit(1)


def _not_in_force(own: dict[str, Any], running: dict[str, Any]) -> list[tuple[str, Any, Any]]:
    """``(section.key, this command's value, the running proxy's)`` for each setting
    this command's file, environment or flags set off its default and the running
    proxy holds otherwise: a value someone meant to try that ``serve`` never read.
    ``storage.data_dir`` and ``proxy.port`` are left out: the proxy was found
    through them (a directory may be spelled two ways; a port given as 0 is one
    picked at start), and a taken port has a warning of its own."""
    defaults = _defaults()
    out: list[tuple[str, Any, Any]] = []
    for section, values in own.items():
        theirs = running.get(section)
        if not isinstance(theirs, dict):
            continue
        for key, value in values.items():
            name = f"{section}.{key}"
            if name in ("storage.data_dir", "proxy.port") or key not in theirs:
                continue
            mine = _as_json(value)
            if mine != defaults.get(name, _MISSING) and mine != _as_json(theirs[key]):
                out.append((name, value, theirs[key]))
    return out


def _running_config(url: str, admin_token: str) -> dict[str, Any] | None:
    """The running proxy's settings: ``GET {url}/lcm/v1/config`` (secrets shown as
    ``***``), with this command's admin token when one is configured (loopback
    needs none when the proxy has none). ``None`` when it does not answer (an
    older proxy, another admin token)."""
    import urllib.error
    import urllib.request

    req = urllib.request.Request(f"{url}/lcm/v1/config",  # noqa: S310 - http(s) URL built here
                                 headers={"Authorization": f"Bearer {admin_token}"}
                                 if admin_token else {})
    try:
        with urllib.request.urlopen(req, timeout=HEALTH_TIMEOUT_SECONDS) as resp:  # noqa: S310
            data = orjson.loads(resp.read(1 << 20))
    except (OSError, ValueError, urllib.error.HTTPError):
        return None
    cfg = data.get("config") if isinstance(data, dict) else None
    return {"url": url, "config_file": data.get("config_file"), "config": cfg} \
        if isinstance(cfg, dict) else None


def _running_proxy(path: Path, host: str, port: int, port_busy: str, warnings: list[str],
                   notes: list[str]) -> dict[str, Any] | None:
    """Recognise a proxy running beside doctor: the data dir's lock (its pid, command
    and URL, :func:`proxy.cli.preflight.lock_owner`) and the ``/lcm/health`` of that
    URL and of the configured ``port`` when it is taken (``port_busy``: why it
    cannot be bound, ``""`` when it can). Says so plainly in a note; warns about
    what needs a look: a lock holder that does not answer, a running ``reindex`` or
    ``migrate``, the port taken by anything but this data dir's proxy. Returns
    ``{pid, command, url, status, version, data_dir, owns_configured_port}``, or
    ``None`` when no proxy runs on this data dir."""
    from urllib.parse import urlsplit

    from proxy.cli.preflight import lock_owner

    owner = lock_owner(path) if path.is_dir() else None
    configured = f"http://{url_host(host)}:{port}" if port_busy else ""
    at_port = proxy_health(configured) if configured else None
    ours_at_port = at_port is not None and (
        at_port.get("data_dir") == str(path)
        or (at_port.get("data_dir") is None and owner is not None and bool(owner.url)
            and urlsplit(owner.url).port == port))
    if port_busy and not ours_at_port:
        other = at_port.get("data_dir") if at_port is not None else None
        warnings.append(
            f"serve with these settings would fail now: port {port} is taken by another"
            f" lcm-proxy, data dir {other} (`lcm-proxy doctor --data-dir {other}` checks"
            " that one); stop it or set another proxy.port" if other else
            f"serve with these settings would fail now: {port_busy}")
    if owner is None and not ours_at_port:
        return None
    url = owner.url if owner is not None and owner.url else ""
    health = proxy_health(url) if url else None
    if health is None and ours_at_port:
        url, health = configured, at_port  # an older proxy wrote no URL in the lock
    command = owner.command if owner is not None and owner.command else "serve"
    who = owner.describe() if owner is not None else "a running lcm-proxy"
    if command != "serve":
        warnings.append(f"data dir {path} is in use by {who}: index and store figures"
                        " change until it ends; run doctor again then")
    elif health is None and url:
        warnings.append(f"data dir {path} is held by {who}, but {url}/lcm/health does not"
                        " answer (still starting, or stuck: see its log)")
    else:
        where = f" at {url} (health: {health['status']})" if health else ""
        notes.append(f"{who} serves this data dir{where}; doctor only reads beside it."
                     " Stop it before `lcm-proxy reindex`; a second `serve` on this data"
                     " dir would refuse to start")
    return {"pid": owner.pid if owner is not None else None, "command": command,
            "url": url, "status": health["status"] if health else None,
            "version": health["version"] if health else None,
            "data_dir": health.get("data_dir") if health else None,
            "owns_configured_port": ours_at_port}


def _older_store(report: dict[str, Any], warnings: list[str], settings: Any, path: Path,
                 running: dict[str, Any] | None) -> bool:
    """True (with a warning, and ``schema_version_db`` in ``report``) when the store
    was written by an older lcm-proxy: its schema is behind this code's. Opening it
    (every store check does) would upgrade it in place, beside a running older proxy
    too, which then refuses the store when it restarts; doctor only reads, so it
    leaves the store as it is and skips those checks. ``False`` when the schema is
    current, newer (opening says so), or no database exists yet."""
    from memory_core.errors import StoreError
    from memory_core.store.factory import code_schema_version, stored_schema_version

    code = code_schema_version(settings.memory_config())
    try:
        stored = stored_schema_version(path, settings.memory_config())
    except StoreError:
        return False  # opening it reports why it cannot be read
    if not 0 < stored < code:
        return False
    report["schema_version_code"], report["schema_version_db"] = code, stored
    who = (" the running proxy's version, or stop it first" if running is not None
           else " an lcm-proxy of the store's version")
    warnings.append(f"store schema {stored} is older than this lcm-proxy's ({code}): doctor"
                    " leaves it as it is and skips the store and index checks (opening the"
                    " store upgrades it, and an older proxy then refuses it). `serve` of"
                    f" this version upgrades it; to check it as it is, run doctor of{who}")
    return True


def _check_store(report: dict[str, Any], warnings: list[str], notes: list[str],
                 problems: list[str], config: str | None, data_dir: str, open_engine: Any,
                 settings: Any, *, is_running: bool) -> None:
    engine = open_engine(config, data_dir)
    try:
        info = engine.status()
        scoped = engine.status_for()
        if getattr(engine.store, "path", None) is None:  # PostgreSQL: its own numbering
            from memory_core.store.pg_migrations import SCHEMA_VERSION as PG_SCHEMA_VERSION

            report["schema_version_code"] = PG_SCHEMA_VERSION
        report.update(database=info["database"], size_bytes=info["size_bytes"],
                      schema_version_db=engine.store.schema_version,
                      counts={**info["counts"], **scoped["counts"]},
                      items_by_status=scoped["items_by_status"],
                      summary_levels=scoped["summary_levels"],
                      tenants=info["tenants"], tenant_roles=info["tenant_roles"])
        integrity = engine.integrity_check()
        report["integrity_check"] = integrity
        if integrity != ["ok"] and getattr(engine.store, "path", None) is not None:
            problems.append(f"PRAGMA integrity_check failed ({len(integrity)} lines): "
                            + "; ".join(integrity[:3]))
        elif integrity != ["ok"]:  # PostgreSQL: the links no foreign key guards
            problems.append(f"integrity check failed ({len(integrity)} lines): "
                            + "; ".join(integrity[:3]))
        lag = engine.index_lag()
        report["index"] = lag
        for name, v in lag["indexers"].items():
            if v["lag"] and is_running:
                notes.append(f"{name} is {v['lag']} outbox rows behind: the running proxy"
                             " is indexing them")
            elif v["lag"]:
                warnings.append(f"{name} is {v['lag']} outbox rows behind (caught up when"
                                " the proxy starts, or by `lcm-proxy reindex`)")
        if settings.search.enabled:
            _check_indexes(report, notes if is_running else warnings, problems, engine,
                           Path(data_dir) / "index",
                           settings.search.search_config().vector_kinds, lag)
        # A row with no attempt yet, not due, is an answer whose extraction simply
        # follows its capture (memory_core.engine.Engine.capture_response): not a
        # backlog. One past due was left by a crash and waits for a capture.
        backlog = engine.store.read_tx(lambda tx: tx.maintenance.extraction_backlog(
            time.time()))
        report["extraction_queue"] = backlog
        if backlog:
            warnings.append(_extraction_backlog(backlog, settings.injection.extract))
    finally:
        engine.close()


def _extraction_backlog(backlog: int, extract: bool) -> str:
    """The warning for ``backlog`` messages in ``extraction_queue`` (failed, or left
    pending by a crash), saying what clears them: with ``injection.extract`` on, the
    serving proxy's retries (:data:`memory_core.capture.jobs.EXTRACT_RETRY_SECONDS`),
    whose failures it logs; off, nothing retries them until it is turned on."""
    waiting = "1 message waits" if backlog == 1 else f"{backlog} messages wait"
    if not extract:
        return (f"{waiting} for an extraction retry, and injection.extract"
                " is off, so nothing retries them: set it to true"
                " (LCM_INJECTION__EXTRACT=true) and serve")
    from memory_core.capture.jobs import EXTRACT_RETRY_SECONDS

    *first, last = (f"{s:g} s" for s in EXTRACT_RETRY_SECONDS)
    return (f"{waiting} for an extraction retry: `lcm-proxy serve` retries"
            " one due message with each request it captures (after "
            f"{', '.join(first)}, then every {last}); the reason of each failure is in its"
            " log, the warning \"extraction of message N failed: …; queued for retry\"")


_INDEXES = (("text", "index_text", "text"), ("vector", "index_vector", "vectors"))
"""(report name, checkpoint, directory under ``<data_dir>/index``) of each derived index."""


def _check_indexes(report: dict[str, Any], warnings: list[str], problems: list[str],
                   engine: Any, root: Path, vector_kinds: tuple[str, ...],
                   lag: dict[str, Any]) -> None:
    """Compare documents per kind in each index with what SQLite says it should hold.

    A difference is a problem (``lcm-proxy reindex`` fixes it) only when it cannot
    be an indexer still at work: that index's lag was 0 and the outbox head did not
    move while counting (every change to an indexed row appends an outbox row).
    Otherwise it goes to ``warnings`` (the caller passes its notes instead while a
    proxy runs: its indexer is at work). A missing index is a warning: the proxy
    builds it from SQLite when it starts.
    """
    from memory_core.search.consistency import (
        expected_counts,
        text_index_counts,
        vector_index_counts,
        vector_index_model,
    )

    expected = engine.store.read_tx(expected_counts, vector_kinds)
    readers = {"text": text_index_counts, "vector": vector_index_counts}
    actual: dict[str, dict[str, int] | None] = {}
    unreadable: set[str] = set()
    for name, _checkpoint, sub in _INDEXES:
        try:
            actual[name] = readers[name](root / sub)
        except (OSError, ValueError, KeyError) as exc:
            actual[name] = None
            unreadable.add(name)
            problems.append(f"{name} index in {root / sub} is unreadable ({exc}): run"
                            " `lcm-proxy reindex` with the proxy stopped")
    after = engine.index_lag()
    steady = after["outbox_head"] == lag["outbox_head"]
    out: dict[str, Any] = {"vector_model": vector_index_model(root / "vectors")}
    for name, checkpoint, sub in _INDEXES:
        have = actual[name]
        want = expected[name]
        out[name] = {k: {"sqlite": n, "index": None if have is None else have.get(k, 0)}
                     for k, n in want.items()}
        if have is None:
            if any(want.values()) and name not in unreadable:
                warnings.append(f"no {name} index in {root / sub} yet (built from SQLite"
                                " when the proxy starts, or by `lcm-proxy reindex`)")
            continue
        extra = {k: n for k, n in have.items() if k not in want and n}
        diffs = [f"{k} {have.get(k, 0)} indexed, {n} in SQLite" for k, n in want.items()
                 if have.get(k, 0) != n] + [f"{k} {n} indexed" for k, n in extra.items()]
        if not diffs:
            continue
        behind = max(lag["indexers"].get(checkpoint, {}).get("lag", 0),
                     after["indexers"].get(checkpoint, {}).get("lag", 0))
        if steady and behind == 0:
            problems.append(f"{name} index disagrees with SQLite ({'; '.join(diffs)}):"
                            " run `lcm-proxy reindex` with the proxy stopped")
        else:
            warnings.append(f"{name} index differs from SQLite ({'; '.join(diffs)}) while"
                            f" the indexer is {behind} outbox rows behind; run doctor again"
                            " once it has caught up")
    report["index_consistency"] = out


_MISSING = object()
"""A setting the defaults lack (a running proxy of another version): always listed."""


def _plural(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


def _verdict(r: dict[str, Any]) -> str:
    """The report's first line: ``doctor: OK``, or the number of problems (exit 1)
    and warnings, such as ``doctor: 1 problem, 2 warnings (exit 1)``. Notes do not
    count: they say what doctor saw, nothing to fix."""
    problems, warnings = len(r["problems"]), len(r["warnings"])
    if not problems and not warnings:
        return "doctor: OK"
    parts = ([_plural(problems, "problem")] if problems else []) + (
        [_plural(warnings, "warning")] if warnings else [])
    return f"doctor: {', '.join(parts)}" + (" (exit 1)" if problems else "")


def _as_json(value: Any) -> bytes:
    """``value`` as JSON: a running proxy's settings arrive so (a tuple as a list)."""
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def _defaults() -> dict[str, bytes]:
    """Every setting's default by ``section.key``, masked as
    :meth:`proxy.settings.Settings.public_dict` masks it (no file, no environment),
    as :func:`_as_json`."""
    from proxy.settings import load_settings

    return {f"{section}.{key}": _as_json(value)
            for section, values in load_settings(None, environ={}).public_dict().items()
            for key, value in values.items()}


def _print_doctor(r: dict[str, Any], *, all_settings: bool) -> None:
    """Print the report for a reader: the verdict, then each problem, warning and
    note (each says what to do), then the details, then the settings: those off
    their default, or every one with ``all_settings`` (``--settings``)."""
    click.echo(_verdict(r))
    for p in r["problems"]:
        click.echo(f"PROBLEM: {p}")
    for w in r["warnings"]:
        click.echo(f"warning: {w}")
    for n in r["notes"]:
        click.echo(f"note: {n}")
    click.echo("")
    click.echo(f"lcm-proxy {r['version']}")
    click.echo(f"config file:     {r['config_file'] or '(none)'}")
    click.echo(f"data dir:        {r['data_dir']}")
    run = r["running_proxy"]
    if run is None:
        click.echo("running proxy:   none")
    else:
        pid = f"pid {run['pid']}" if run["pid"] is not None else "pid unknown"
        where = f", {run['url']}" if run["url"] else ""
        health = (f" (health: {run['status']})" if run["status"]
                  else " (health: no answer)" if run["url"] else "")
        click.echo(f"running proxy:   {run['command']}, {pid}{where}{health}")
    if "database" not in r and "schema_version_db" in r:  # left unopened: older schema
        click.echo(f"schema version:  {r['schema_version_db']} (code {r['schema_version_code']})")
    if "database" in r:
        click.echo(f"database:        {r['database']} ({r['size_bytes']} bytes)")
        click.echo(f"schema version:  {r['schema_version_db']} (code {r['schema_version_code']})")
        lines = r["integrity_check"]
        more = f" (+{len(lines) - 5} more lines)" if len(lines) > 5 else ""
        click.echo(f"integrity:       {'; '.join(lines[:5])}{more}")
        click.echo(f"tenants:         {r['tenants']} (tenant/role pairs {r['tenant_roles']})")
        for name, n in r["counts"].items():
            click.echo(f"  {name + ':':<22}{n}")
        states = ", ".join(f"{k} {v}" for k, v in sorted(r["items_by_status"].items()))
        click.echo(f"items by status: {states or '-'}")
        for lv in r["summary_levels"]:
            click.echo(f"summaries L{lv['level']}:   {lv['nodes']} nodes, {lv['tokens']} tokens"
                       f" (from {lv['source_tokens']})")
        click.echo(f"index outbox:    head {r['index']['outbox_head']}")
        for name, v in r["index"]["indexers"].items():
            click.echo(f"  {name + ':':<22}checkpoint {v['checkpoint']}, lag {v['lag']}")
        consistency = r.get("index_consistency")
        if consistency:
            click.echo("index consistency (indexed/SQLite per kind):")
            for name, _checkpoint, _sub in _INDEXES:
                cells = "  ".join(
                    f"{kind} {'-' if v['index'] is None else v['index']}/{v['sqlite']}"
                    for kind, v in consistency[name].items())
                click.echo(f"  {name + ':':<8}{cells}")
            if consistency["vector_model"]:
                click.echo(f"  vector model: {consistency['vector_model']}")
        click.echo(f"extraction queue: {r['extraction_queue']}")
    run_cfg = r.get("running_config")
    if run_cfg is not None:
        label = (f"config of the running proxy ({run_cfg['url']},"
                 f" file {run_cfg['config_file'] or '(none)'})")
        config = run_cfg["config"]
    else:
        label = ("config of this doctor command (file, environment, defaults)"
                 + (" (the running proxy's may differ: its GET /lcm/v1/config did not"
                    " answer)" if run is not None else ""))
        config = r["config"]
    rows = [(f"{section}.{key}", value) for section, values in config.items()
            for key, value in values.items()]
    if all_settings:
        click.echo(f"{label}:")
    else:
        defaults = _defaults()
        total = len(rows)
        rows = [(name, value) for name, value in rows
                if defaults.get(name, _MISSING) != _as_json(value)]
        click.echo(f"{label}: {len(rows)} of {total} settings off their default"
                   " (`--settings` lists all)" + (":" if rows else ""))
    for name, value in rows:
        click.echo(f"  {name} = {value!r}")

