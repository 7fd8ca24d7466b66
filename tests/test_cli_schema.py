"""``lcm-proxy`` commands on a store an older lcm-proxy wrote (its schema behind this
code's), as in a rolling upgrade: the new CLI installed, the old proxy still serving.

Opening a store applies the pending migrations. Every ``memory …`` command opened it
so, under the running older proxy too, which then refused the upgraded store when it
restarted ("database schema 13 is newer than this code (12)"). Now such a command is
refused (exit 2, both versions and the holder named) while another process holds the
data dir, and on a shared PostgreSQL store; with nothing holding the data dir it
upgrades the store as before and says so on stderr."""

from __future__ import annotations

import fcntl
import os
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner

from memory_core.store import migrations, pg_migrations
from memory_core.store.sqlite import DB_FILENAME
from proxy.cli import main
from tests.conftest import TEST_STORE

OLDER = migrations.SCHEMA_VERSION - 1

COMMANDS = [  # (the command, its arguments)
    ("memory status", []),
    ("memory search", ["hello"]),
    ("memory inspect", ["item:1"]),
    ("memory explain", []),
    ("memory export", []),
    ("memory retract", ["item:1", "--reason", "r"]),
    ("memory restore", ["item:1", "--reason", "r"]),
    ("memory purge", ["--session", "s", "--yes"]),
    ("memory prefs list", []),
    ("memory prefs set", ["--key", "k", "--title", "t", "--content", "c"]),
    ("memory prefs delete", ["--key", "k"]),
]


def _older_store(data_dir: Path) -> None:
    """A SQLite store as the previous schema left it: the last migration undone."""
    from memory_core.engine import Engine

    Engine(data_dir).close()
    db = sqlite3.connect(data_dir / DB_FILENAME)
    db.execute("DROP INDEX messages_calls")  # what the last migration added
    db.execute(f"PRAGMA user_version = {OLDER}")
    db.commit()
    db.close()


def _schema(data_dir: Path) -> tuple[int, bool]:
    """(user_version, whether the last migration's index exists), read without
    migrating."""
    db = sqlite3.connect(f"{(data_dir / DB_FILENAME).as_uri()}?mode=ro", uri=True)
    try:
        version = db.execute("PRAGMA user_version").fetchone()[0]
        return version, db.execute("SELECT 1 FROM sqlite_master WHERE type = 'index'"
                                   " AND name = 'messages_calls'").fetchone() is not None
    finally:
        db.close()


@pytest.fixture
def held_by_older_proxy(tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Path]:
    """A data dir of the older schema whose lock a running proxy holds: the lock file
    as ``serve`` writes it, as proxies before the URL wrote it (pid alone), or only
    Tantivy's writer lock (proxies before the lock file)."""
    from proxy.cli.preflight import LOCK_FILENAME, DataDirLock

    data = tmp_path / "d"
    _older_store(data)
    if request.param == "tantivy writer lock":
        lock_path = data / "index" / "text" / ".tantivy-writer.lock"
        lock_path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        try:
            yield data
        finally:
            os.close(fd)
        return
    lock = DataDirLock(data, "serve", "http://127.0.0.1:9")
    if request.param == "pid only":
        (data / LOCK_FILENAME).write_text(f"{os.getpid()}\n")
    try:
        yield data
    finally:
        lock.release()


@pytest.mark.sqlite_only("writes an older schema into the SQLite file")
@pytest.mark.parametrize("held_by_older_proxy",
                         ["serve lock", "pid only", "tantivy writer lock"], indirect=True)
@pytest.mark.parametrize(("command", "args"), COMMANDS, ids=[c for c, _ in COMMANDS])
def test_a_command_beside_a_running_older_proxy_leaves_its_schema(
        held_by_older_proxy: Path, command: str, args: list[str]) -> None:
    data = held_by_older_proxy
    result = CliRunner().invoke(main, [*command.split(), *args, "--data-dir", str(data)])
    assert result.exit_code == 2, result.output
    assert (f"Error: store schema {OLDER} in {data} is older than this lcm-proxy's"
            f" ({migrations.SCHEMA_VERSION}), and ") in result.stderr
    assert (f"holds that data dir: `lcm-proxy {command}` would upgrade the store under"
            " it") in result.stderr
    assert "stop it first" in result.stderr
    assert _schema(data) == (OLDER, False)


@pytest.mark.sqlite_only("writes an older schema into the SQLite file")
def test_a_command_with_nothing_holding_the_data_dir_upgrades_and_says_so(
        tmp_path: Path) -> None:
    """Nobody can be using the store: it is upgraded on open as before (a line on
    stderr says so), and the command answers."""
    data = tmp_path / "d"
    _older_store(data)
    result = CliRunner().invoke(main, ["memory", "status", "--data-dir", str(data)])
    assert result.exit_code == 0, result.output
    assert (f"upgrading the store in {data} from schema {OLDER} to"
            f" {migrations.SCHEMA_VERSION}") in result.stderr
    assert _schema(data) == (migrations.SCHEMA_VERSION, True)
    again = CliRunner().invoke(main, ["memory", "status", "--data-dir", str(data)])
    assert again.exit_code == 0 and "upgrading" not in again.stderr


@pytest.mark.skipif(TEST_STORE != "postgresql", reason="a PostgreSQL store: LCM_TEST_STORE")
@pytest.mark.parametrize(("command", "args"), [*COMMANDS, ("reindex", [])],
                         ids=[*(c for c, _ in COMMANDS), "reindex"])
def test_a_command_leaves_a_shared_postgresql_store_of_an_older_schema(
        tmp_path: Path, pg_session_cluster: str, command: str, args: list[str]) -> None:
    """A PostgreSQL store is shared by replicas, none of which holds a lock a command
    can see: a command of a newer lcm-proxy never upgrades its schema (that is the
    first new ``serve``'s, on start); it is refused and the database stays as it is."""
    import psycopg

    from tests import pgcluster

    name = "lcm_cli_older"
    url = pg_session_cluster.rsplit("/", 1)[0] + "/" + name
    older = pg_migrations.SCHEMA_VERSION - 1
    try:
        with pgcluster.migrated(pg_session_cluster, name) as conn:
            conn.execute("DROP INDEX messages_calls")  # the last migration, undone
            conn.execute("DELETE FROM lcm_schema WHERE number = %s",
                         (pg_migrations.SCHEMA_VERSION,))
        config = tmp_path / "lcm.toml"
        config.write_text(f'[storage]\nurl = "{url}"\n[embedding]\nprovider = "hashing"\n')
        result = CliRunner().invoke(main, [*command.split(), *args, "--config", str(config),
                                           "--data-dir", str(tmp_path / "d")])
        assert result.exit_code == 2, result.output
        assert (f"has schema {older}, older than this lcm-proxy's"
                f" ({pg_migrations.SCHEMA_VERSION}): `lcm-proxy {command}`"
                " would upgrade it") in result.stderr
        with psycopg.connect(url) as conn:
            row = conn.execute("SELECT MAX(number) FROM lcm_schema").fetchone()
            assert row is not None and row[0] == older
    finally:
        with psycopg.connect(pg_session_cluster, autocommit=True) as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
