"""The writer's duplicate checks look items up through indexes, with the decisions of a
full scan: the subject-key lookup (``memory._candidates``) against the old ``instr``
scan of every active item, the migration's backfill against the keys the writer
records, and the restatement check's query (``memory._reworded``) served by its index."""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path

import pytest

from memory_core.engine import Engine
from memory_core.extraction import Extracted
from memory_core.items import writer as memory
from memory_core.items.supersession import subject_keys, subjects_match
from memory_core.models import Scope
from memory_core.store.api import Tx
from memory_core.store.migrations import MIGRATIONS, apply_migrations
from memory_core.store.sqlite_memory import SPEAKER_SQL
from tests.conftest import sql_read, sql_write

OLD_SQLITE = pytest.mark.sqlite_only("compares with the pre-index SQLite statements,"
                                     " migrations or query plans, on the SQLite file")

SCOPE = Scope("t", "coder")
OTHER = Scope("t", "reviewer")
KINDS = ("fact", "decision", "constraint", "preference")

WORDS = ["api", "gateway", "timeout", "port", "ports", "staging", "db", "database", "Port",
         "API", "retry", "limit", "node", "count", "v2", "x_y", "eu-west", "c++", "app.py",
         "long-polling", "client", "clients"]
CJK = ["网关", "超时", "端口", "数据库", "重试", "タイムアウト", "ポート", "设置", "api网关",
       "网关超时", "超", "時間"]
ODD = ["++", "--", "-", ".", "a", "é", "café", "naïve mode", "p99 latency", "  spaced  ",
       "x", "1", "42 nodes", "a -- b", "-- mode", "port --", "v . x"]


def _subject(rng: random.Random) -> str:
    r = rng.random()
    if r < 0.55:
        return " ".join(rng.choice(WORDS) for _ in range(rng.randint(1, 3)))
    if r < 0.85:
        sep = rng.choice(["", "", " "])
        return sep.join(rng.choice(CJK) for _ in range(rng.randint(1, 3)))
    return rng.choice(ODD)


def _old_candidates(conn: sqlite3.Connection, scope: Scope, subject: str,
                    speaker: str) -> list[sqlite3.Row]:
    """What ``_store_item`` compared before the subject keys: the query ``_candidates``
    ran then, the same subject moved first, and the rows ``subjects_match`` takes."""
    rows = conn.execute(
        "SELECT * FROM memory_items WHERE tenant=? AND role=? AND status='active'"
        f" AND kind IN ({','.join('?' * len(KINDS))}) AND subject IS NOT NULL"
        " AND (instr(subject, ?) > 0 OR instr(?, subject) > 0)"
        f" AND {SPEAKER_SQL} = ? ORDER BY id DESC LIMIT 200",
        (scope.tenant, scope.role, *KINDS, subject, subject, speaker)).fetchall()
    rows.sort(key=lambda r: r["subject"] != subject)
    return [r for r in rows if subjects_match(subject, r["subject"])]


def _fill(engine: Engine, rng: random.Random, n: int) -> list[str]:
    subjects = []

    def write(c: sqlite3.Connection) -> None:
        for i in range(n):
            subject = _subject(rng)
            subjects.append(subject)
            kind = rng.choice(KINDS + ("question", "proposal"))
            scope = SCOPE if rng.random() < 0.85 else OTHER
            # distinct values: no statement here restates or conflicts with another
            memory.store_extracted(engine.store.tx_on(c), scope, 1, None, [Extracted(
                kind=kind, text=f"item {i} about {subject}", subject=subject, value=float(i),
                value_text=str(i))], speaker=rng.choice(["", "", "ana"]))
        # some items leave the active set
        c.execute("UPDATE memory_items SET status='superseded' WHERE id % 7 = 0")
    sql_write(engine, write)
    return subjects


@OLD_SQLITE
def test_subject_key_lookup_finds_what_the_full_scan_found(tmp_path: Path) -> None:
    rng = random.Random(28)
    engine = Engine(tmp_path / "d")
    try:
        stored = _fill(engine, rng, 1500)
        # more matches than the window holds: a subject said 260 times, with longer
        # and shorter ones around it, and substring hits that are no word match
        engine.store.write_tx_sync(lambda c: [memory.store_extracted(c, SCOPE, 1, None, [
            Extracted(kind="fact", text=f"{s} {i}", subject=s, value=float(10_000 + i))])
            for i in range(400) for s in [rng.choice(
                ["queue depth"] * 6 + ["queue", "queue depths", "depth", "a queue depth",
                 "网关超时"] * 1 + ["网关"] * 2)]])
        probes = stored[::7] + [_subject(rng) for _ in range(300)] + [
            "api", "API", "gateway timeout", "port", "网", "网关", "api网关超时", "ポート",
            "++", "c++ limit", "x", "app.py", "queue depth", "queue", "depths", "node -- port",
            "-- mode x", "--", "naïve",
            "café", "eu", "west", "long", "é"]

        def check(c: sqlite3.Connection) -> int:
            compared = 0
            for subject in probes:
                for scope in (SCOPE, OTHER):
                    for speaker in ("", "ana", "bob"):
                        want = [r["id"] for r in _old_candidates(c, scope, subject, speaker)]
                        got = [r["id"] for r in memory._candidates(
                            engine.store.tx_on(c), scope, KINDS, subject=subject, speaker=speaker)]
                        assert got == want, (subject, scope, speaker)
                        compared += len(want)
            return compared
        assert sql_read(engine, check) > 1000  # the probes do find matches
    finally:
        engine.close()


def test_subject_keys_cover_every_match() -> None:
    """``subjects_match`` ⇒ the probes of the shorter side are keys of the longer, and
    the shorter is among the longer's contained subjects (``_candidates``' lookups)."""
    from memory_core.items.aliases import fold_aliases
    from memory_core.items.supersession import subject_probes
    from memory_core.items.writer import _contained
    rng = random.Random(5)
    subjects = list({_subject(rng) for _ in range(1500)} | set(WORDS) | set(CJK) | set(ODD))
    pairs = 0
    for a in subjects:
        for b in subjects:
            # keys hold the words as written: two names of one thing ("db" /
            # "database") pair through the writer's by-meaning candidates instead
            if fold_aliases(a) != a or fold_aliases(b) != b:
                continue
            if subjects_match(a, b):
                pairs += 1
                keys_b = subject_keys(b)[0]
                if len(a) <= len(b):  # probes []: _candidates reads all
                    assert set(subject_probes(a)) <= keys_b, (a, b)
                if len(a) < len(b):
                    assert a in _contained(b), (a, b)
    assert pairs > len(subjects)


KEYS_SQL = "SELECT tenant, role, part, key, item_id FROM memory_item_subject_keys"
TERMS_SQL = "SELECT tenant, role, term, item_id FROM memory_item_terms"


@OLD_SQLITE
def test_migration_backfills_the_keys_the_writer_records(tmp_path: Path) -> None:
    """A store made before migration 9 gets, on opening, the subject keys and content
    terms its items would have got from the writer."""
    rng = random.Random(9)
    engine = Engine(tmp_path / "new")
    try:
        _fill(engine, rng, 300)
        written = sql_read(engine, lambda c: [sorted(map(tuple, c.execute(q))) for q in (
            KEYS_SQL, TERMS_SQL)])
        items = sql_read(engine, lambda c: c.execute(
            "SELECT * FROM memory_items ORDER BY id").fetchall())
    finally:
        engine.close()
    path = tmp_path / "old.db"
    conn = sqlite3.connect(path, isolation_level=None)
    for number, _name, fn in MIGRATIONS[:8]:
        conn.executescript(f"BEGIN;\n{fn()}\nPRAGMA user_version = {number};\nCOMMIT;")
    cols = items[0].keys()
    conn.executemany(f"INSERT INTO memory_items ({','.join(cols)}) VALUES"
                     f" ({','.join('?' * len(cols))})", [tuple(r) for r in items])
    assert apply_migrations(conn) == len(MIGRATIONS)
    backfilled = [sorted(conn.execute(q)) for q in (KEYS_SQL, TERMS_SQL)]
    conn.close()
    assert backfilled == written and len(written[0]) > 300 and len(written[1]) > 600


@OLD_SQLITE
def test_reworded_query_reads_its_index(tmp_path: Path) -> None:
    """``_reworded``'s newest-first query is served by ``memory_items_restate``: no scan
    of the scope's items through ``json_extract``, no sort."""
    engine = Engine(tmp_path / "d")
    try:
        plan = sql_read(engine, lambda c: [r[3] for r in c.execute(
            "EXPLAIN QUERY PLAN SELECT * FROM memory_items WHERE tenant=? AND role=?"
            " AND status='active' AND kind IN (?,?,?,?)"
            f" AND {SPEAKER_SQL} = ? AND value IS ? AND unit IS ? AND condition IS ?"
            " ORDER BY id DESC LIMIT ?", ("t", "r", *KINDS, "", 1.0, "s", None, 300))])
    finally:
        engine.close()
    assert len(plan) == 1 and "memory_items_restate" in plan[0], plan
    assert "TEMP B-TREE" not in " ".join(plan)


@pytest.mark.parametrize("subject", ["api gateway", "网关超时", "++"])
def test_purge_drops_an_items_subject_keys(tmp_path: Path, subject: str) -> None:
    from memory_core.admin import purge
    engine = Engine(tmp_path / "d")
    keys = ("SELECT (SELECT COUNT(*) FROM memory_item_subject_keys)"
            " + (SELECT COUNT(*) FROM memory_item_terms)")
    try:
        for scope in (SCOPE, Scope("u", "coder")):
            engine.store.write_tx_sync(lambda c, scope=scope: memory.store_extracted(
                c, scope, 1, None, [Extracted(kind="fact", text=f"the {subject} is 5 s",
                                              subject=subject, value=5.0)]))
        before = sql_read(engine, lambda c: c.execute(keys).fetchone()[0])
        counts = engine.store.write_tx_sync(lambda tx: purge.purge(tx, tenant="t"))
        after = sql_read(engine, lambda c: c.execute(keys).fetchone()[0])
        left = sql_read(engine, lambda c: {r[0] for r in c.execute(
            "SELECT tenant FROM memory_item_subject_keys UNION"
            " SELECT tenant FROM memory_item_terms")})
    finally:
        engine.close()
    assert before >= 4 and after == before // 2
    assert counts["memory_item_subject_keys"] + counts["memory_item_terms"] == after
    assert left == {"u"}


def _old_reworded(conn: sqlite3.Connection, scope: Scope, ex: Extracted, kind: str,
                  speaker: str) -> int | None:
    """``_reworded`` before the term index: the 300 newest items of the speaker, value,
    unit and condition, compared one by one."""
    new_terms = memory.content_terms(ex.text)
    if not new_terms:
        return None
    for row in conn.execute(
        "SELECT * FROM memory_items WHERE tenant=? AND role=? AND status='active'"
        f" AND kind IN ({','.join('?' * len(KINDS))})"
        f" AND {SPEAKER_SQL} = ? AND value IS ? AND unit IS ? AND condition IS ?"
        " ORDER BY id DESC LIMIT 300",
        (scope.tenant, scope.role, *KINDS, speaker, ex.value, ex.unit, ex.condition),
    ):
        if memory._same_statement(row, ex, kind, new_terms):
            return int(row["id"])
    return None


@OLD_SQLITE
def test_reworded_finds_what_the_newest_items_scan_found(tmp_path: Path) -> None:
    """Statements of the numbers workload, and the same ones reworded (words shuffled,
    some dropped or added, as another kind), against 1,200 turns' items: the term
    index picks the same item as comparing the 300 newest one by one."""
    from memory_core.extraction import extract
    from proxy.evaluation.numbersgen import numbers_session
    rng = random.Random(28)
    session = numbers_session(3, 1300)
    engine = Engine(tmp_path / "d")
    try:
        def fill(c: Tx) -> None:
            for turn in session.turns[:1200]:
                memory.store_extracted(c, SCOPE, 1, None, extract(turn.text))
                memory.store_extracted(c, SCOPE, 1, None, extract(turn.reply),
                                       speaker=rng.choice(["", "ana"]))
            for text in ["My manager is Dana.", "From now on, always mark every tray with a"
                         " violet sticker.", "我们的默认区域是法兰克福。", "私の上司はダナです。"]:
                memory.store_extracted(c, SCOPE, 1, None, extract(text))
        engine.store.write_tx_sync(fill)
        statements = [ex for turn in session.turns[1200:] for ex in extract(turn.text)]
        stored = sql_read(engine, lambda c: c.execute(
            "SELECT kind, text, value, unit, condition FROM memory_items"
            " WHERE status='active' ORDER BY random() LIMIT 400").fetchall())
        for row in stored:
            words = row["text"].split()
            rng.shuffle(words)
            if rng.random() < 0.3:
                words.pop(rng.randrange(len(words)))
            if rng.random() < 0.3:
                words.append(rng.choice(["reminder:", "again", "cluster", "quietly"]))
            statements.append(Extracted(
                kind=rng.choice([row["kind"], "fact", "preference"]), text=" ".join(words),
                subject=None, value=row["value"], unit=row["unit"], condition=row["condition"]))
        statements += [Extracted(kind="fact", text="Reminder: Dana is my manager.",
                                 subject=None),
                       Extracted(kind="fact", text="Reminder: trays always get a violet"
                                 " sticker.", subject=None)]

        def check(c: sqlite3.Connection) -> int:
            found = 0
            for ex in statements:
                for kind in {ex.kind, "fact"}:
                    for speaker in ("", "ana"):
                        want = _old_reworded(c, SCOPE, ex, kind, speaker)
                        got, _ = memory._reworded(engine.store.tx_on(c), SCOPE, ex, kind,
                                                  speaker)
                        assert (got["id"] if got is not None else None) == want, ex.text
                        found += want is not None
            return found
        assert sql_read(engine, check) > 100  # restatements are found
    finally:
        engine.close()


def test_reworded_shared_is_what_same_statement_needs() -> None:
    """``_reworded_shared(n terms)`` never exceeds what ``_same_statement`` accepts."""
    for n in range(1, 60):
        terms = frozenset(f"t{i}" for i in range(n))
        need = memory._reworded_shared(terms)
        assert need <= n
        # an item sharing need terms, with no other term, is not ruled out by the count
        assert need == n or (need >= 3 and need >= 0.8 * n)
        # one fewer shared term can never be taken
        shared = need - 1
        assert not (shared == n or (shared >= 3 and shared >= 0.8 * n))
