"""``lcm-proxy migrate``: a real SQLite store, filled through the real proxy and the
openai SDK (tests/test_admin_support.py's ``populate``: two tenants, a branch,
items with a supersession chain, agent memories, a summary forest; vectors from the
indexer; the forwarded-request log), copied into a throwaway PostgreSQL
(tests/pgcluster.py) by the real command, then compared table by table and read
back through ``PgStore``'s operator reads beside ``SqliteStore``'s.

Skips outside CI when no PostgreSQL binaries or psycopg are found, fails under
``CI=true`` (the ``pg_url`` fixture).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from memory_core.store.migrate import row_digest
from memory_core.store.sqlite import DB_FILENAME, SqliteStore
from proxy import cli
from tests import pgcluster
from tests.conftest import start_proxy
from tests.fake_upstream import FakeUpstream
from tests.test_admin_support import STEADY, Populated, populate
from tests.test_store_responsemap import pg_url  # noqa: F401 - the cluster fixture

COVERED = ("threads", "messages", "events", "memory_items", "memory_item_revisions",
           "memory_item_changes", "agent_memories", "summary_nodes", "embeddings",
           "index_outbox", "forwarded_requests", "assembly_logs", "checkpoints")
"""Tables the filled store must hold rows in, so that the copy of each is tested."""

pytestmark = pytest.mark.sqlite_only(
    "lcm-proxy migrate copies a data dir's SQLite file into PostgreSQL: the source is"
    " that file (the target is PostgreSQL on either pass)")


@pytest.fixture(scope="module")
def filled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, Populated]]:
    """A data dir filled through a real proxy (closed again: migrate needs its lock)."""
    import asyncio

    data = tmp_path_factory.mktemp("migrate") / "data"

    async def fill() -> Populated:
        upstream = FakeUpstream()
        await upstream.start()
        try:
            proxy = await start_proxy(upstream.base_url, data, injection=STEADY)
            try:
                return await populate(proxy)
            finally:
                await proxy.close()
        finally:
            await upstream.stop()

    yield data, asyncio.run(fill())


def _migrate(*args: str, env: dict[str, str] | None = None) -> Result:
    return CliRunner().invoke(cli.main, ["migrate", *args], env=env, catch_exceptions=False)


def _sqlite_rows(data: Path, table: str) -> int:
    with sqlite3.connect(data / DB_FILENAME) as conn:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])


def _plain(value: Any) -> Any:
    if isinstance(value, sqlite3.Row) or hasattr(value, "keys"):
        return {k: _plain(value[k]) for k in value.keys()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    if hasattr(value, "_asdict"):
        return _plain(value._asdict())
    return value


def test_migrate_copies_every_table_losslessly_and_refuses_a_second_copy(
        filled: tuple[Path, Populated], pg_url: str) -> None:  # noqa: F811
    data, pop = filled
    for table in COVERED:
        assert _sqlite_rows(data, table) > 0, f"the filled store has no {table} row"
    url = pgcluster.fresh_database(pg_url, "migrate_full")

    result = _migrate("--to", url, "--data-dir", str(data), "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ok"] is True
    by_table = {t["table"]: t for t in report["tables"]}
    with sqlite3.connect(data / DB_FILENAME) as conn:
        every = {r[0] for r in conn.execute(
            "SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'sqlite_%'")}
    assert set(by_table) == every  # every table of the schema, none left out
    for name, t in by_table.items():
        assert t["equal"] and t["source_rows"] == t["target_rows"] == _sqlite_rows(data, name)
        assert t["source_sha256"] == t["target_sha256"]
    # parents before children: the copy order respects the foreign keys
    order = [t["table"] for t in report["tables"]]
    assert order.index("threads") < order.index("messages") < order.index("memory_items")

    # read back through the stores' own operator reads: the same answers
    from memory_core.store.pg import PgStore

    lite, pg = SqliteStore(data), PgStore(url, max_size=2)
    try:
        def reads(tx: Any) -> Any:
            op = tx.operator
            heads = [r["head_message_id"] for r in
                     op.threads_page(tenant=None, role=None, session=None, limit=50,
                                     offset=0)[1]]
            return {
                "status": op.scope_status(None, None),
                "tenants": op.tenants(),
                "threads": op.threads_page(tenant=None, role=None, session=None, limit=50,
                                           offset=0),
                "paths": [op.thread_path(h) for h in heads],
                "items": op.items_page(tenant=None, role=None, status=None, kind=None,
                                       thread_id=None, text=None, limit=100, offset=0),
                "summaries": op.summary_nodes(pop.tenant_a, "coder"),
                "conflicts": op.conflict_pairs(),
            }

        want, got = _plain(lite.read_tx(reads)), _plain(pg.read_tx(reads))
        assert len(want["paths"]) >= 4 and want["items"][0] >= 5
        assert got == want

        # the identity sequences were advanced: a new id follows the copied ones
        high = lite.read_tx(lambda tx: tx.maintenance.message_id_high_water())
        assert pg.read_tx(lambda tx: tx.maintenance.message_id_high_water()) == high
        import psycopg

        with psycopg.connect(url, autocommit=True) as conn:
            new = conn.execute(
                "INSERT INTO events (kind, created_at, data) VALUES ('probe', 1, '{}')"
                " RETURNING id").fetchone()[0]
            conn.execute("DELETE FROM events WHERE id = %s", (new,))
        assert new > _sqlite_rows(data, "events")
    finally:
        lite.close()
        pg.close()

    # a second copy into the now non-empty target is refused, and changes nothing
    again = _migrate("--to", url, "--data-dir", str(data))
    assert again.exit_code == 2
    assert "already holds lcm-proxy data" in again.stderr and "--force" in again.stderr
    assert _migrate("--to", url, "--data-dir", str(data), "--verify-only").exit_code == 0
    # --force empties it first: the same store again, equal
    forced = _migrate("--to", url, "--data-dir", str(data), "--force")
    assert forced.exit_code == 0, forced.output
    assert "every table is equal" in forced.stdout and "NO" not in forced.stdout


def test_verification_fails_on_an_altered_row(filled: tuple[Path, Populated],
                                              pg_url: str) -> None:  # noqa: F811
    import psycopg

    data, pop = filled
    url = pgcluster.fresh_database(pg_url, "migrate_altered")
    assert _migrate("--to", url, "--data-dir", str(data)).exit_code == 0
    with psycopg.connect(url, autocommit=True) as conn:
        # one bit of one vector, then one character of one item's text
        kind, ref, vec = conn.execute("SELECT kind, ref_id, vector FROM embeddings"
                                      " ORDER BY kind, ref_id LIMIT 1").fetchone()
        flipped = bytes([vec[0] ^ 1]) + bytes(vec[1:])
        conn.execute("UPDATE embeddings SET vector = %s WHERE kind = %s AND ref_id = %s",
                     (flipped, kind, ref))
    # the target from LCM_STORE__URL, the replicas' own setting
    result = _migrate("--data-dir", str(data), "--verify-only", "--json",
                      env={"LCM_STORE__URL": url})
    assert result.exit_code == 1, result.output
    bad = {t["table"] for t in json.loads(result.stdout)["tables"] if not t["equal"]}
    assert bad == {"embeddings"}

    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("UPDATE embeddings SET vector = %s WHERE kind = %s AND ref_id = %s",
                     (vec, kind, ref))
        conn.execute("UPDATE memory_items SET text = text || '.' WHERE id = %s",
                     (pop.items["a_port"],))
    result = _migrate("--to", url, "--data-dir", str(data), "--verify-only")
    assert result.exit_code == 1
    (diff,) = [ln for ln in result.stdout.splitlines() if ln.startswith("DIFFERENT: ")]
    # the item, and the change-log row its trigger appended
    assert diff.split(" (")[0] == "DIFFERENT: memory_item_changes, memory_items"
    (line,) = [ln for ln in result.stdout.splitlines() if ln.startswith("memory_items ")]
    assert line.rstrip().endswith("NO")


def test_row_digest_is_exact_and_typed() -> None:
    base = [(1, "a", 0.1, b"\x00\x01", None)]
    n, digest = row_digest(base)
    assert n == 1
    for other in ([(1, "a", 0.1 + 2**-56, b"\x00\x01", None)],  # the last bit of a float
                  [(1, "a", 0.1, b"\x00\x01\x00", None)],
                  [(1, "a", 0.1, b"\x00\x01", "")],            # NULL is not ''
                  [("1", "a", 0.1, b"\x00\x01", None)],        # text is not an integer
                  [(1, "a", 0.1, "\x00\x01", None)],           # nor bytes text
                  [(1, "a", 0.1, b"\x00\x01", None), ()]):
        assert row_digest(other)[1] != digest, other
    # value boundaries are kept: ("ab", "c") is not ("a", "bc")
    assert row_digest([("ab", "c")])[1] != row_digest([("a", "bc")])[1]


def test_migrate_refuses_a_data_dir_without_a_store_and_a_bad_url(tmp_path: Path) -> None:
    result = _migrate("--to", "postgresql://u@127.0.0.1:9/x", "--data-dir",
                      str(tmp_path / "none"))
    assert result.exit_code == 2 and "no lcm-proxy store" in result.stderr
    result = _migrate("--to", "mysql://u@h/x", "--data-dir", str(tmp_path))
    assert result.exit_code == 2 and "postgresql://" in result.stderr


def test_a_row_postgresql_refuses_rolls_the_whole_copy_back(
        tmp_path: Path, pg_url: str) -> None:  # noqa: F811
    """One transaction: tables copied before the failing one are not left behind."""
    import psycopg

    data = tmp_path / "data"
    store = SqliteStore(data)
    store.close()
    with sqlite3.connect(data / DB_FILENAME) as conn:
        conn.execute("INSERT INTO agent_memories (category, key, title, content, updated_at,"
                     " role, tenant) VALUES ('memo', 'k', 't', 'kept?', 1.0, 'r', 't1')")
        # SQLite lets a TEXT PRIMARY KEY hold NULL (a legacy quirk); PostgreSQL refuses
        conn.execute("INSERT INTO meta (key, value) VALUES (NULL, 'odd')")
    url = pgcluster.fresh_database(pg_url, "migrate_rollback")
    result = _migrate("--to", url, "--data-dir", str(data))
    assert result.exit_code == 1
    assert "copying meta" in result.stderr
    with psycopg.connect(url, autocommit=True) as conn:
        assert conn.execute("SELECT COUNT(*) FROM agent_memories").fetchone()[0] == 0
        # the triggers are on again (the ALTER TABLE rolled back with the rest)
        assert conn.execute("SELECT COUNT(*) FROM pg_trigger WHERE NOT tgisinternal"
                            " AND tgenabled = 'D'").fetchone()[0] == 0
