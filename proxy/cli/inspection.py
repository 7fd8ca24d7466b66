"""``lcm-proxy memory``: the group, and the commands that read what was stored:
``status``, ``export``, ``inspect``, ``explain``, ``tenant``.

Each opens the store of the data dir in force and never creates one
(:func:`proxy.cli.common.open_engine`). Safe beside a running proxy; beside one
of an older schema they stop rather than upgrade its store
(:func:`proxy.cli.common.schema_upgrade_guard`).
"""

from __future__ import annotations

from typing import Any

import click
import orjson

from proxy.cli.common import (
    CliError,
    config_option,
    data_dir_option,
    data_dir_settings,
    echo_json,
    elsewhere_hint,
    fmt_ts,
    open_engine,
    store_group_options,
)


@click.group()
@store_group_options
def memory() -> None:
    """Inspect and curate what the proxy stored.

    ``--config`` and ``--data-dir`` go before or after the subcommand:
    ``lcm-proxy memory --data-dir D search QUERY``."""


@click.command("status")
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
    engine = open_engine(config, data_dir)
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
        echo_json(info)
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
        shown = ", ".join(f"{k} {v}" for k, v in value.items()) \
            if isinstance(value, dict) else value
        click.echo(f"index lag:       {name}: {shown}")
    click.echo(f"soft budget:     {info['soft_budget_tokens']} tokens")
    last = info["last_assembly"]
    if last:
        click.echo(f"last injection:  {last['request_id']} {last['trigger']} "
                   f"{last['used_tokens']}/{last['budget_tokens']} tokens "
                   f"(thread {last['thread_id']}, {fmt_ts(last['created_at'])})")
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


@click.command("export")
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
    engine = open_engine(config, data_dir)
    try:
        data = engine.export(session=session, role=role, tenant=tenant, thread_id=thread_id,
                             events=events)
    finally:
        engine.close()
    if as_json:
        echo_json(data)
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
            click.echo(f"  msg:{m['id']:<6} {fmt_ts(m['created_at'])} {m['role']:<9}"
                       f" {' '.join(m['text'].split())[:160]}{flags}")
    for e in data.get("events", []):
        click.echo(f"event {e['id']}  {fmt_ts(e['created_at'])} {e['kind']:<12} "
                   f"thread={e['thread_id'] or '-'} {e['request_id'] or ''}")


def _candidate_statuses(engine: Any, info: dict[str, Any]) -> dict[int, str]:
    """The status of each item a correction may revise (``data.may_revise``), by id in
    order; ``deleted`` for one no longer stored. ``{}`` for any other item."""
    from memory_core.errors import NotFoundError
    data = info.get("data")
    ids = data.get("may_revise") if isinstance(data, dict) else None
    out: dict[int, str] = {}
    for i in ids or ():
        try:
            out[int(i)] = str(engine.inspect(f"item:{int(i)}")["status"])
        except NotFoundError:
            out[int(i)] = "deleted"
    return out


def _tellings(data: dict[str, Any], *, src_id: int | None) -> list[str]:
    """``inspect`` lines for how often an item was told (``docs/scopes.md``, occasions):
    each conversation that told it with its time (``data.occasions``,
    ``data.occasion_threads``; only once a second conversation or a re-send is
    involved), the threads that re-sent it as history (``data.resent_threads``: no
    new telling), and every message that said it when there are several
    (``data.sources``; ``source:`` shows only the newest, ``src_id``)."""
    lines: list[str] = []
    times = [t for t in data.get("occasions") or () if isinstance(t, (int, float))]
    threads = list(data.get("occasion_threads") or ())
    if times:
        each = ", ".join(
            (f"thread {threads[i]} " if i < len(threads) else "") + f"({fmt_ts(t)})"
            for i, t in enumerate(times))
        n = len(times)
        lines.append(f"told in:    {n} conversation{'s' if n != 1 else ''}: {each}")
    resent = [t for t in data.get("resent_threads") or () if isinstance(t, int)]
    if resent:
        lines.append("sent again: " + ", ".join(f"thread {t}" for t in resent)
                     + " (history re-sent, as by a resume or fork: no new telling)")
    sources = [m for m in data.get("sources") or () if isinstance(m, int)]
    if len(sources) > 1 or (sources and sources[0] != src_id):
        lines.append("sources:    " + ", ".join(f"msg:{m}" for m in sources))
    return lines


@click.command("inspect")
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
    from memory_core.tools.refs import parse_ref

    try:
        kind, ident = parse_ref(ref)
    except InvalidIdError as exc:  # a ref that cannot exist is bad usage: exit 2
        raise CliError(str(exc)) from exc
    engine = open_engine(config, data_dir)
    try:
        info = engine.inspect(f"{kind}:{ident}")
        candidates = _candidate_statuses(engine, info)
    except (NotFoundError, ValueError) as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        engine.close()
    if (tenant is not None and info.get("tenant") != tenant) or (
            role is not None and info.get("role") != role) or (
            session is not None and info.get("session") != session):
        raise click.ClickException(f"{ref} not found for this tenant/role/session")
    if as_json:
        echo_json(info)
        return
    if info["ref"].startswith("item:"):
        click.echo(f"{info['ref']}  {info['kind']}  status={info['status']}  "
                   f"evidence={info['evidence']}  lang={info['lang']}")
        click.echo(f"scope:      tenant={info['tenant']} role={info['role']} "
                   f"thread={info['thread_id']}")
        click.echo(f"content:    {info['text']}")
        data = info.get("data")
        speaker = data.get("speaker") if isinstance(data, dict) else None
        if speaker:  # the message's ``name`` (issue 24, kind 5)
            click.echo(f"speaker:    {speaker}")
        click.echo(f"subject:    {info['subject']}")
        if info["value"] is not None:
            click.echo(f"number:     {info['value_text'] or info['value']} {info['unit'] or ''}")
        if info["condition"]:
            click.echo(f"condition:  {info['condition']}")
        if info["conflict_with"]:
            click.echo(f"conflicts:  item:{info['conflict_with']} (unresolved)")
        if candidates:  # a correction naming an attribute's head several items qualify
            live = sum(st == "active" for st in candidates.values())
            note = (f"settled: {info['status']}" if info["status"] != "active"
                    else f"the user meant item:{info['supersedes']}" if info["supersedes"]
                    else "unclear which: ask the user" if live >= 2
                    else "not asked: fewer than two still active")
            click.echo("may revise: " + " or ".join(
                f"item:{i}" + ("" if st == "active" else f" [{st}]")
                for i, st in candidates.items()) + f" ({note})")
        for label, chain in (("supersedes", info["supersedes_chain"]),
                             ("superseded by", info["superseded_by_chain"])):
            for c in chain:
                click.echo(f"{label + ':':<12}item:{c['id']} [{c['status']}] {c['text']}")
        for line in _tellings(data if isinstance(data, dict) else {}, src_id=(
                (info.get("source") or {}).get("id"))):
            click.echo(line)
        src = info.get("source")
        if src:
            click.echo(f"source:     msg:{src['id']} ({src['msg_role']}, "
                       f"{fmt_ts(src['created_at'])})")
            click.echo("  " + src["text"].replace("\n", "\n  "))
        for r in info["revisions"]:
            click.echo(f"revision:   {fmt_ts(r['changed_at'])} {r['field']}: {r['old']} -> "
                       f"{r['new']} ({r['reason']})")
    else:
        click.echo(f"{info['ref']}  {info['msg_role']}  kind={info['kind']}  "
                   f"hidden={bool(info['hidden'])}  tokens={info['tokens']}")
        click.echo(f"scope:      tenant={info['tenant']} role={info['role']} "
                   f"session={info['session'] or '-'} thread={info['thread_id']}")
        click.echo(f"created:    {fmt_ts(info['created_at'])}  parent=msg:{info['parent_id']}")
        for it in info["items"]:
            click.echo(f"item:       item:{it['id']} {it['kind']} [{it['status']}] {it['text']}")
        click.echo("original:")
        click.echo(orjson.dumps(info["message"], option=orjson.OPT_INDENT_2).decode())


@click.command("explain")
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
    engine = open_engine(config, data_dir)
    try:
        last = engine.last_assembly(tenant=tenant, session=session, role=role,
                                    thread_id=thread_id)
    finally:
        engine.close()
    if last is None:
        hint = elsewhere_hint(data_dir_settings(config, data_dir))
        raise click.ClickException("no injection recorded yet" + (f"; {hint}" if hint else ""))
    if as_json:
        echo_json(last)
        return
    data = last["data"]
    click.echo(f"request:      {last['request_id']}  ({fmt_ts(last['created_at'])})")
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


@click.command("tenant")
@config_option
@data_dir_option
@click.option("--key-env", metavar="VAR", default=None,
              help="Environment variable that holds the client's API key (read from it, "
                   "never from the command line).")
@click.option("--tenant", "key_tenant", default=None,
              help="The key's tenant id (t_…, as `memory search` hits and GET /lcm/v1/tenants "
                   "show) instead of the key.")
@click.option("--user", default=None,
              help="The end user's id as the app sends it (X-LCM-User, safety_identifier "
                   "or user).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def memory_tenant(config: str | None, data_dir: str | None, key_env: str | None,
                  key_tenant: str | None, user: str | None, as_json: bool) -> None:
    """Print the stored tenant id of an API key, or of an end user behind it.

    Keys and end-user ids are stored only as salted hashes (`t_…`, `t_…~u_…`), so
    this is how an operator finds one person's memory to search, export or purge:
    `lcm-proxy memory purge --tenant "$(lcm-proxy memory tenant --key-env
    OPENAI_API_KEY --user ana)"`. The salt is `proxy.tenant_salt`, else the data
    dir's own; a fixed `proxy.tenant` stands for every key. Stderr says when nothing
    is stored for the id yet. Exit 2 without `--key-env`, `--tenant` or a fixed
    tenant, or with an unset variable."""
    import os

    from proxy.scope import effective_salt, tenant_for_key, user_tenant

    settings = data_dir_settings(config, data_dir)
    fixed = settings.proxy.tenant
    if key_env is not None and key_tenant is not None:
        raise CliError("give --key-env or --tenant, not both")
    if key_env is not None and not os.environ.get(key_env, "").strip():
        raise CliError(f"environment variable {key_env} is unset or empty")
    if key_env is None and key_tenant is None and not fixed:
        raise CliError("name the API key (--key-env VAR) or its tenant id (--tenant t_…)")
    engine = open_engine(config, data_dir)
    try:
        salt = effective_salt(settings.proxy.tenant_salt, engine.tenant_salt)
        if key_tenant is not None:
            base = key_tenant.strip()
        elif fixed:
            base = fixed
        else:
            base = tenant_for_key(os.environ[str(key_env)].strip(), salt)
        stored = user_tenant(base, (user or "").strip(), salt)
        counts = engine.status_for(stored, None)["counts"]
    finally:
        engine.close()
    has_data = any(counts.values())
    if as_json:
        echo_json({"tenant": stored, "key_tenant": base, "stored": has_data})
        return
    click.echo(stored)
    if not has_data:
        click.echo(f"nothing is stored for {stored} yet", err=True)
