"""Maintenance commands: ``reindex``, ``memory purge`` and ``memory redact``.

``reindex`` rebuilds the full-text and vector indexes from SQLite while holding
the data-dir lock (the proxy must be stopped). ``purge`` is the only way raw
evidence is ever deleted (DESIGN §4) and ``redact`` the only way one message's
content is; both show what they would change and ask before doing it unless
``--yes``. Answers go to stdout, progress to stderr.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import click

from proxy.cli.common import (
    CliError,
    config_option,
    data_dir_option,
    data_dir_settings,
    echo_json,
    open_engine,
    progress_bar,
    refuse_missing_store,
    schema_upgrade_guard,
)
from proxy.cli.searching import embedder_or_exit, search_config


@click.command("reindex")
@config_option
@data_dir_option
def reindex(config: str | None, data_dir: str | None) -> None:
    """Rebuild the full-text and vector indexes from SQLite (the proxy must be stopped:
    a running proxy keeps its indexes up to date itself; exit 2 while one serves this
    data dir)."""
    from proxy.cli.preflight import DataDirBusy, DataDirLock, has_store
    from proxy.settings import data_dir_path

    settings = data_dir_settings(config, data_dir)
    path = data_dir_path(settings)
    if not settings.storage.url and not has_store(path):
        refuse_missing_store(path)
    path.mkdir(mode=0o700, parents=True, exist_ok=True)  # the indexes' home, also with a URL
    try:
        lock = DataDirLock(path, "reindex")  # held while rebuilding: a serve started now refuses
    except DataDirBusy as exc:
        raise CliError(
            f"{exc}: stop that proxy first, then run `lcm-proxy reindex` (a running"
            " proxy catches its indexes up from SQLite by itself; reindex rebuilds"
            " them from scratch)") from exc
    try:
        _rebuild(settings, path)
    finally:
        lock.release()

def _rebuild(settings: Any, path: Any) -> None:
    from memory_core.engine import Engine
    from memory_core.errors import MemoryError_
    from memory_core.search import SearchService

    embedder = embedder_or_exit(settings)
    try:
        with schema_upgrade_guard(settings, path, locked=True):  # reindex holds the lock
            engine = Engine(path, settings.memory_config())
    except CliError:
        embedder.close()
        raise
    except MemoryError_ as exc:
        embedder.close()
        raise CliError(str(exc)) from exc
    # The indexes are derived and about to be rebuilt: one that cannot be opened
    # (corrupt files) is deleted, the text index first, then all, as serve does.
    # A held lock (a running proxy) is never repaired: that is refused.
    repairs = [Path(path) / "index" / "text", Path(path) / "index"]
    while True:
        try:
            svc = SearchService(engine.store, path, search_config(settings), embedder)
            break
        except Exception as exc:  # noqa: BLE001 - any unreadable index is rebuilt
            if "LockBusy" in str(exc) or not repairs:
                embedder.close()
                engine.close()
                raise CliError(str(exc)) from exc
            broken = repairs.pop(0)
            click.echo(f"index unreadable ({exc}); deleting {broken} and rebuilding it",
                       err=True)
            shutil.rmtree(broken, ignore_errors=True)
    total = engine.store.read_tx(lambda tx: tx.index.indexable_rows())
    bar = progress_bar(total=total, desc="reindex", unit="doc")
    try:
        counts = svc.rebuild(lambda stage, n: bar.update(n) if stage == "text" else None)
    finally:
        bar.close()
        svc.close()
        embedder.close()
        engine.close()
    click.echo(" ".join(f"{k}={v}" for k, v in counts.items()))


@click.command("purge")
@click.option("--thread", "thread_id", type=click.IntRange(min=1), default=None,
              help="One conversation: this thread id (as search, export and inspect"
                   " show it) and the branches forked from it.")
@click.option("--session", default=None, help="Every thread of this X-LCM-Session.")
@click.option("--role", default=None, help="Everything of this role (persona).")
@click.option("--tenant", default=None, help="Everything of this tenant id.")
@click.option("--scrub-copies", is_flag=True,
              help="Also replace the copies of its text that other threads hold (their"
                   " replies, summaries, items, assembly logs, forwarded bodies).")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--dry-run", is_flag=True, help="Only show what would be removed.")
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
@config_option
@data_dir_option
def memory_purge(thread_id: int | None, session: str | None, role: str | None,
                 tenant: str | None, scrub_copies: bool, yes: bool, dry_run: bool,
                 as_json: bool, config: str | None, data_dir: str | None) -> None:
    """Irreversibly delete a thread, session, role or tenant (filters combine with AND).

    Removes the SQLite rows (messages, threads, events, memory items and their
    revisions, task state, summaries, assembly logs, embeddings; agent memories
    for a role or tenant) and queues index deletes so full-text and vector
    indexes drop them when the proxy's indexer next runs. An item also stated in
    another thread stays, citing only its surviving statements. Copies of its text
    in other threads' rows (a reply that repeated it, a summary line, an assembly
    log, a forwarded body) are listed; ``--scrub-copies`` replaces each copied span
    by "[removed by operator]". Other users' messages stating it are listed, never
    changed.
    """
    from memory_core.admin.purge import check_filters

    try:
        check_filters(tenant, role, session, thread_id)
    except ValueError as exc:
        raise click.UsageError(str(exc)) from exc
    engine = open_engine(config, data_dir)
    filters = {"tenant": tenant, "role": role, "session": session, "thread_id": thread_id}
    try:
        preview = engine.purge(**filters, dry_run=True, scrub_copies=scrub_copies)
        copies, elsewhere = preview.pop("copies", {}), preview.pop("held_elsewhere", [])
        scope = ", ".join(f"{k.removesuffix('_id')}={v}" for k, v in filters.items() if v)
        if not any(v for k, v in preview.items() if k != "outbox_deletes"):
            click.echo(f"nothing stored for {scope}")
            return
        if dry_run:
            if as_json:
                echo_json({"would_remove": preview, "copies": copies,
                           "held_elsewhere": elsewhere})
            else:
                click.echo(f"would remove ({scope}):")
                _print_counts(preview)
                _print_copies(copies, scrub_copies)
                _print_elsewhere(elsewhere, "purged")
            return
        click.echo(f"will remove ({scope}):", err=True)
        _print_counts(preview, err=True)
        if not yes:
            click.confirm("This cannot be undone. Purge?", abort=True, err=True)
        removed = engine.purge(**filters, scrub_copies=scrub_copies)
        copies, elsewhere = removed.pop("copies", {}), removed.pop("held_elsewhere", [])
    finally:
        engine.close()
    if as_json:
        echo_json({"removed": removed, "copies": copies, "held_elsewhere": elsewhere})
        return
    click.echo(f"purged {removed['messages']} messages, {removed['threads']} threads,"
               f" {removed['memory_items']} memory items; {removed['outbox_deletes']}"
               " index deletes queued")
    _print_copies(copies, scrub_copies)
    _print_elsewhere(elsewhere, "purged")


@click.command("redact")
@click.argument("message_id", type=click.IntRange(min=1))
@click.option("--tenant", default=None, help="Only if the message is of this tenant id.")
@click.option("--role", default=None, help="Only if the message is of this role.")
@click.option("--session", default=None, help="Only if the message is of this session.")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.option("--dry-run", is_flag=True, help="Only show what would be changed.")
@click.option("--json", "as_json", is_flag=True, help="Print the counts as JSON.")
@config_option
@data_dir_option
def memory_redact(message_id: int, tenant: str | None, role: str | None,
                  session: str | None, yes: bool, dry_run: bool, as_json: bool,
                  config: str | None, data_dir: str | None) -> None:
    """Irreversibly replace one message's content by "[removed by operator]".

    The conversation goes on: the message keeps its place, so a client that resends
    its history continues the same thread. Memory items stated only there are
    deleted (one stated elsewhere too keeps its text); in replies, summaries, hidden
    tool rounds, assembly logs, forwarded bodies and Responses chain rows the copied
    spans are replaced and the rest stays; index updates are queued. Other messages
    that state the same text (another conversation's paste) are listed, not changed:
    redact them too if they must go. ``--dry-run`` lists what would change.
    MESSAGE_ID is the id search, export and inspect show; ``--tenant``, ``--role``
    and ``--session`` make sure it is the one meant (else: no message).
    """
    bounds = {"tenant": tenant, "role": role, "session": session}
    engine = open_engine(config, data_dir)
    try:
        preview = engine.redact(message_id, **bounds, dry_run=True)
        if preview is None:
            click.echo(f"no message {message_id}")
            raise SystemExit(1)
        rows, elsewhere = preview.pop("rows", {}), preview.pop("held_elsewhere", [])
        if dry_run:
            if as_json:
                echo_json({"message_id": message_id, "would_change": preview,
                           "rows": rows, "held_elsewhere": elsewhere})
            else:
                click.echo(f"would change (message {message_id}):")
                _print_counts(preview)
                _print_rows(rows)
                _print_elsewhere(elsewhere)
            return
        click.echo(f"will change (message {message_id}):", err=True)
        _print_counts(preview, err=True)
        if not yes:
            click.confirm("This cannot be undone. Redact?", abort=True, err=True)
        changed = engine.redact(message_id, **bounds) or {}
        rows, elsewhere = changed.pop("rows", {}), changed.pop("held_elsewhere", [])
    finally:
        engine.close()
    if as_json:
        echo_json({"message_id": message_id, "changed": changed, "rows": rows,
                   "held_elsewhere": elsewhere})
        return
    click.echo(f"redacted message {message_id}: {changed.get('memory_items', 0)} memory"
               f" items deleted, {changed.get('summary_nodes', 0)} summaries,"
               f" {changed.get('other_messages', 0)} replies and tool rounds and"
               f" {changed.get('forwarded_bodies_edited', 0)} forwarded bodies edited")
    _print_elsewhere(elsewhere)


def _print_rows(rows: dict[str, list[Any]]) -> None:
    """The ids of the rows a redaction changes, per table."""
    listed = {name: ids for name, ids in rows.items() if ids}
    if listed:
        click.echo("rows:")
        for name, ids in listed.items():
            click.echo(f"  {name + ':':<24}{', '.join(str(i) for i in ids)}")


def _print_copies(copies: dict[str, list[Any]], scrubbed: bool) -> None:
    """The rows of other threads holding a copy of the purged text, per table."""
    if not copies:
        return
    click.echo("copies in other threads " + ("(scrubbed):" if scrubbed else
                                             "(kept; --scrub-copies replaces them):"))
    for name, ids in copies.items():
        click.echo(f"  {name + ':':<24}{', '.join(str(i) for i in ids)}")


def _print_elsewhere(elsewhere: list[dict[str, Any]], verb: str = "redacted") -> None:
    """Other messages stating the same text: named, not redacted or purged (the
    operator's call: each is a statement of its own)."""
    if not elsewhere:
        return
    click.echo(f"{len(elsewhere)} other message(s) state the same text and are not"
               f" {verb} (redact each too if it must go):")
    for m in elsewhere:
        click.echo(f"  message {m['message_id']} (thread {m['thread_id']}, role"
                   f" {m['role']}, {m['msg_role']})")


def _print_counts(counts: dict[str, Any], *, err: bool = False) -> None:
    for name, n in counts.items():
        if n:
            click.echo(f"  {name + ':':<24}{n}", err=err)
