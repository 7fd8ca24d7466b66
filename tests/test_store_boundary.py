"""The storage boundary (docs/architecture.md, "Storage interface"): outside
``memory_core/store/`` a module reaches the database only through the operation
groups of ``memory_core.store.api``.

``MIGRATED`` lists the modules moved behind the interface; ``LEGACY`` the ones that
still hold SQL. Every other module of ``memory_core`` and ``proxy`` must be clean
too, so new SQL outside the store fails here, and a legacy module that no longer
holds SQL must leave ``LEGACY``: the boundary only grows.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

MIGRATED = (
    "memory_core/admin/overview.py",
    "memory_core/admin/purge.py",
    "memory_core/capture/response_threads.py",
    "memory_core/capture/forwarded.py",
    "memory_core/stats.py",
    "proxy/handlers/admin.py",
    "proxy/handlers/access.py",
    "proxy/cli/doctor.py",
    "proxy/cli/maintenance.py",
    "proxy/cli/searching.py",
    "proxy/evaluation/storecheck.py",
    "proxy/evaluation/runner.py",
    "memory_core/capture/evidence.py",
    "memory_core/capture/message_facts.py",
    "memory_core/compaction/node_cache.py",
    "memory_core/assembly/in_view.py",
    "memory_core/search/consistency.py",
    "memory_core/items/cache.py",
    "proxy/evaluation/crowd.py",
    "memory_core/compaction/compressor.py",
    "memory_core/items/supersession.py",
    "memory_core/search/successors.py",
    "memory_core/search/docs.py",
    "memory_core/search/indexer.py",
    "memory_core/search/service.py",
    "memory_core/tools/memory_tools.py",
    "memory_core/assembly/block.py",
    "memory_core/items/writer.py",
    "memory_core/engine.py",
    "memory_core/capture/jobs.py",
    "memory_core/compaction/scheduler.py",
    "memory_core/admin/search.py",
    "memory_core/admin/inspection.py",
)

LEGACY: frozenset[str] = frozenset()
"""Modules that still hold SQL or import ``sqlite3``: to move behind the interface."""

_SQL = re.compile(
    r"\bSELECT\b|\bINSERT\s+(?:OR\s+\w+\s+)?INTO\b|\bUPDATE\s+\S+\s+SET\b|\bDELETE\s+FROM\b"
    r"|\bREPLACE\s+INTO\b|\bPRAGMA\s+\w+(?:\s*[=(]|\s*$)"
    r"|\bCREATE\s+(?:TEMP\s+|UNIQUE\s+)?(?:TABLE|INDEX|TRIGGER|VIEW)\b"
    r"|\bDROP\s+(?:TABLE|INDEX)\b|\bALTER\s+TABLE\b|\bWITH\s+RECURSIVE\b"
    r"|\bBEGIN\s+(?:IMMEDIATE|EXCLUSIVE)\b|\bSAVEPOINT\b|\bROLLBACK\s+TO\b|\bON\s+CONFLICT\b"
    r"|\bsqlite_(?:master|sequence|schema)\b|\b(?:json_extract|json_each|GROUP_CONCAT)\(")
"""Statement shapes (upper-case keywords, as the project writes SQL) and SQLite names."""
_DB_CALLS = {"execute", "executemany", "executescript"}


def _docstrings(tree: ast.AST) -> set[int]:
    ids = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            body = node.body
            if (body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                    and isinstance(body[0].value.value, str)):
                ids.add(id(body[0].value))
        # an attribute docstring: a string statement right after an assignment
        stmts = getattr(node, "body", None)
        if not isinstance(stmts, list):
            continue
        for prev, stmt in zip(stmts, stmts[1:], strict=False):
            if (isinstance(prev, ast.Assign | ast.AnnAssign) and isinstance(stmt, ast.Expr)
                    and isinstance(stmt.value, ast.Constant)):
                ids.add(id(stmt.value))
    return ids


def violations(source: str) -> list[str]:
    """What ties this source to the database: ``sqlite3`` imports, SQL in string
    literals (docstrings aside), ``.execute*`` calls. One line each, with its line."""
    tree = ast.parse(source)
    docs = _docstrings(tree)
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import) and any(a.name.split(".")[0] == "sqlite3"
                                                for a in node.names):
            out.append((node.lineno, "import sqlite3"))
        elif isinstance(node, ast.ImportFrom) and (node.module or "").split(".")[0] == "sqlite3":
            out.append((node.lineno, "from sqlite3 import"))
        elif (isinstance(node, ast.Constant) and isinstance(node.value, str)
              and id(node) not in docs and (m := _SQL.search(node.value))):
            out.append((node.lineno, f"SQL in a string ({m.group(0)!r})"))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in _DB_CALLS):
            out.append((node.lineno, f".{node.func.attr}() call"))
    return [f"{line}: {what}" for line, what in sorted(out)]


def _modules() -> list[str]:
    files = [*ROOT.joinpath("memory_core").rglob("*.py"), *ROOT.joinpath("proxy").rglob("*.py")]
    return sorted(str(p.relative_to(ROOT)) for p in files
                  if not str(p.relative_to(ROOT)).startswith("memory_core/store/"))


@pytest.mark.parametrize("module", MIGRATED)
def test_migrated_module_reaches_the_database_only_through_the_store(module: str) -> None:
    assert module not in LEGACY
    assert violations(ROOT.joinpath(module).read_text()) == []


def test_no_module_outside_the_store_gains_sql() -> None:
    found = {m: v for m in _modules() if m not in LEGACY
             if (v := violations(ROOT.joinpath(m).read_text()))}
    assert found == {}, "SQL outside memory_core/store/ (use memory_core.store.api)"


def test_legacy_list_only_shrinks() -> None:
    clean = [m for m in sorted(LEGACY) if not ROOT.joinpath(m).exists()
             or not violations(ROOT.joinpath(m).read_text())]
    assert clean == [], "no SQL left: move these from LEGACY to MIGRATED"


def test_detector_sees_sql_imports_and_calls_but_not_docs_or_http() -> None:
    dirty = (
        'import sqlite3\n'
        'from sqlite3 import Row\n'
        'def f(conn, t):\n'
        '    """Runs SELECT x FROM y (a docstring: documentation)."""\n'
        '    conn.execute(f"SELECT COUNT(*) FROM {t}")\n'
        '    q = ("INSERT OR IGNORE INTO a (b)"\n'
        '         " VALUES (?)")\n'
        '    r = "UPDATE items SET x=1"\n'
        '    d = "DELETE FROM items"\n'
        '    p = "PRAGMA secure_delete=ON"\n'
        '    c = "WITH RECURSIVE path(id) AS (...)"\n'
        '    j = "json_extract(data, \'$.a\')"\n'
        '    return conn.executescript(q)\n')
    found = violations(dirty)
    assert [line.split(":")[0] for line in found] == [
        "1", "2", "5", "5", "6", "8", "9", "10", "11", "12", "13"], found
    clean = (
        '"""Module doc: PRAGMA integrity_check and SELECT 1 are documented here."""\n'
        'ROUTES = [("DELETE", "/lcm/v1/items"), ("GET", "/lcm/v1/items")]\n'
        'PROBLEM = "PRAGMA integrity_check failed (3 lines)"\n'
        'LIMIT = 3\n'
        '"""Attribute doc: runs INSERT INTO nothing."""\n'
        'def g(tx):\n'
        '    return tx.operator.scope_status("t", None), "select a row, delete it"\n')
    assert violations(clean) == []


def test_in_lists_come_in_a_few_lengths_with_the_same_members() -> None:
    """Each length of an ``IN (…)`` list is a statement of its own in a connection's
    cache: lists are padded to a few lengths, by repeating their last value."""
    from memory_core.store.sqlite_rows import IN_CHUNK, padded

    lengths = {len(padded(list(range(n)))) for n in range(1, IN_CHUNK + 1)}
    assert lengths == {1, 2, 3, 4, 8, 16, 32, 64, 128, 256, 512, IN_CHUNK}
    for n in (5, 100, 513, IN_CHUNK):
        values = list(range(n))
        assert set(padded(values)) == set(values) and padded(values)[:n] == values
