"""``lcm-proxy migrate``: copy the embedded store into PostgreSQL, then verify it.

The copy and the checks are :mod:`memory_core.store.migrate`'s; this module takes
the data directory's lock (no ``serve`` may change the source meanwhile), shows a
progress bar on stderr and prints the per-table comparison on stdout.
"""

from __future__ import annotations

from typing import Any

import click

from proxy.cli.common import (
    CliError,
    cli_settings,
    config_option,
    data_dir_option,
    echo_json,
    progress_bar,
    refuse_missing_store,
)


@click.command("migrate")
@click.option("--to", "url", required=True, envvar="LCM_STORE__URL", metavar="URL",
              help="The target: postgresql://user:password@host:5432/dbname (default:"
                   " $LCM_STORE__URL, the replicas' store, which keeps the password out"
                   " of the process list).")
@click.option("--force", is_flag=True,
              help="Empty the target's lcm-proxy tables first when they hold data (what"
                   " they held is lost). Without it a non-empty target is refused.")
@click.option("--verify-only", is_flag=True,
              help="Copy nothing: only compare the rows and digests of source and target.")
@click.option("--batch-rows", type=click.IntRange(1, 1_000_000), default=2000,
              show_default=True, help="Rows read from SQLite at a time.")
@click.option("--json", "as_json", is_flag=True, help="Print the comparison as JSON.")
@config_option
@data_dir_option
def migrate(url: str, force: bool, verify_only: bool, batch_rows: int, as_json: bool,
            config: str | None, data_dir: str | None) -> None:
    """Copy the embedded store (SQLite in the data dir) into PostgreSQL, losslessly.

    Every table of the schema is copied in one transaction, ids kept and id sequences
    advanced past them; then each table's row count and SHA-256 digest (rows in id
    order) are compared between the two and printed. Exit 0 when every table is
    equal, 1 on any difference, 2 for a target that already holds data (see
    --force), a data dir without a store or in use by a running proxy. The full-text
    and vector indexes are not copied: each proxy rebuilds its own from the store
    when it starts with an empty index directory (stored vectors are reused).
    """
    from memory_core.errors import StoreError
    from memory_core.store import migrate as mig
    from memory_core.store.factory import URL_SCHEMES
    from memory_core.store.pg import describe
    from proxy.cli.preflight import DataDirBusy, DataDirLock, has_store
    from proxy.settings import data_dir_path

    if not url.startswith(URL_SCHEMES):
        raise click.BadParameter("must be a postgresql:// URL", param_hint="--to")
    # The source is the data dir whatever storage.url says (LCM_STORE__URL names the
    # target here).
    settings = cli_settings(config, {"storage": {"data_dir": data_dir, "url": ""}})
    path = data_dir_path(settings)
    if not has_store(path):
        refuse_missing_store(path)
    target = describe(url)
    try:
        lock = None if verify_only else DataDirLock(path, "migrate")
    except DataDirBusy as exc:
        raise CliError(f"{exc}: stop that proxy first (the store must not change while it"
                       " is copied)") from exc
    try:
        if not verify_only:
            total = sum(mig.source_rows(path).values())
            bar = progress_bar(total=total, desc=f"copy to {target}", unit="row")
            try:
                copied = mig.copy_store(path, url, force=force, batch_rows=batch_rows,
                                        progress=bar.update)
            finally:
                bar.close()
            click.echo(f"copied {sum(copied.values())} rows in {len(copied)} tables from"
                       f" {path} to {target}", err=True)
        total = sum(mig.source_rows(path).values())
        bar = progress_bar(total=total, desc="verify", unit="row")
        try:
            checks = mig.verify(path, url, batch_rows=batch_rows, progress=bar.update)
        finally:
            bar.close()
    except mig.TargetNotEmpty as exc:
        raise CliError(f"{exc} at {target}: nothing was copied. Point --to at an empty"
                       " database, or pass --force to empty these tables first (their"
                       " rows are lost)") from exc
    except StoreError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        if lock is not None:
            lock.release()
    _report(checks, as_json)
    if not all(c.ok for c in checks):
        raise SystemExit(1)


def _report(checks: list[Any], as_json: bool) -> None:
    ok = all(c.ok for c in checks)
    if as_json:
        echo_json({"ok": ok, "tables": [
            {"table": c.table, "source_rows": c.source_rows, "target_rows": c.target_rows,
             "source_sha256": c.source_digest, "target_sha256": c.target_digest,
             "equal": c.ok} for c in checks]})
        return
    width = max(len(c.table) for c in checks)
    click.echo(f"{'table':<{width}}  {'sqlite rows':>11}  {'postgresql rows':>15}"
               f"  {'sha256 (sqlite)':<16}  {'sha256 (postgresql)':<19}  equal")
    for c in checks:
        click.echo(f"{c.table:<{width}}  {c.source_rows:>11}  {c.target_rows:>15}"
                   f"  {c.source_digest[:16]:<16}  {c.target_digest[:16]:<19}"
                   f"  {'yes' if c.ok else 'NO'}")
    bad = [c.table for c in checks if not c.ok]
    click.echo("every table is equal" if ok else
               f"DIFFERENT: {', '.join(bad)} (rows or digests differ)")
    click.echo("not copied (derived, rebuilt by each proxy from the store): the full-text"
               " and vector indexes")
