"""Agent memories: the seed's table, snake_case keys, near-duplicates, role scope."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import psycopg
import pytest
from click.testing import CliRunner

from memory_core.engine import Engine
from memory_core.items.agent_keys import near_duplicate, snake_key
from memory_core.items.writer import DuplicateKeyError
from proxy.cli import main
from tests.conftest import sql_read, sql_write


@pytest.mark.parametrize(
    ("raw", "key"),
    [
        ("Standard Japanese", "standard_japanese"),
        ("standardJapanese", "standard_japanese"),
        ("  user--prefs!! ", "user_prefs"),
        ("标日 学习", "标日_学习"),
        ("ＦＵＬＬ width", "full_width"),
    ],
)
def test_snake_key(raw: str, key: str) -> None:
    assert snake_key(raw) == key


def test_snake_key_rejects_empty() -> None:
    with pytest.raises(ValueError):
        snake_key(" -- ")


def test_near_duplicate_lexical() -> None:
    existing = [("standard_japanese", "Standard Japanese study")]
    assert near_duplicate("standard_japan", "x", existing).key == "standard_japanese"
    assert near_duplicate("standard_japanese", "x", existing) is None  # same key: update
    assert near_duplicate("standrad_japanese", "x", existing).key == "standard_japanese"
    assert near_duplicate("coding_style", "Coding style", existing) is None
    # equal titles under different keys are the same memory
    assert near_duplicate("jp_course", "standard japanese  STUDY", existing).key == (
        "standard_japanese")


def test_cross_script_duplicate_refused_with_suggestion(engine: Engine) -> None:
    engine.set_agent_memory(tenant="t", role="coder", category="user_preferences",
                            key="standard_japanese", title="Standard Japanese study",
                            content="textbook chapters 1-10")
    with pytest.raises(DuplicateKeyError) as info:
        engine.set_agent_memory(tenant="t", role="coder", category="user_preferences",
                                key="标日学习", title="标日学习", content="x",
                                on_duplicate="refuse")
    assert info.value.match.key == "standard_japanese"
    routed = engine.set_agent_memory(tenant="t", role="coder", category="user_preferences",
                                     key="标日学习", title="标日学习", content="第5课",
                                     on_duplicate="route")
    assert routed.key == "standard_japanese" and routed.routed_from == "标日学习"
    # an unrelated CJK key is not a duplicate
    other = engine.set_agent_memory(tenant="t", role="coder", category="user_preferences",
                                    key="饮食偏好", title="饮食偏好", content="素食")
    assert other.created and other.key == "饮食偏好"
    keys = {m["key"] for m in engine.list_agent_memories(role="coder")}
    assert keys == {"standard_japanese", "饮食偏好"}


def test_seed_schema_and_limits(engine: Engine) -> None:
    with pytest.raises(ValueError):
        engine.set_agent_memory(tenant="t", role="r", category="user_preferences", key="k",
                                title="t", content="x" * 501)
    with pytest.raises(ValueError):
        engine.set_agent_memory(tenant="t", role="r", category="secrets", key="k", title="t",
                                content="x")
    engine.set_agent_memory(tenant="t", role="r", category="progress", key="Step One",
                            title="t", content="a")
    engine.set_agent_memory(tenant="t", role="r", category="progress", key="step_one",
                            title="t2", content="b")
    rows = engine.list_agent_memories(category="progress")
    assert [(r["key"], r["content"]) for r in rows] == [("step_one", "b")]
    cols = sql_read(engine, lambda c: c.execute(
        "SELECT * FROM agent_memories").fetchone().keys())
    for col in ("category", "key", "title", "content", "updated_at", "role", "embedding"):
        assert col in cols
    for category, content in (("other", "c"), ("memo", "x" * 501)):
        # the CHECKs hold even for raw SQL
        with pytest.raises((sqlite3.IntegrityError, psycopg.IntegrityError), match="(?i)check"):
            sql_write(engine, lambda c, cat=category, text=content: c.execute(
                "INSERT INTO agent_memories (category, key, title, content, updated_at,"
                " role) VALUES (?, 'k', 't', ?, 0, 'r')", (cat, text)))


def test_roles_are_separate(engine: Engine) -> None:
    engine.set_agent_memory(tenant="*", role="coder", category="user_preferences",
                            key="style", title="Style", content="black, 100 cols")
    engine.set_agent_memory(tenant="*", role="writer", category="user_preferences",
                            key="style", title="Style", content="AP style")
    coder = engine.list_agent_memories(role="coder")
    writer = engine.list_agent_memories(role="writer")
    assert [m["content"] for m in coder] == ["black, 100 cols"]
    assert [m["content"] for m in writer] == ["AP style"]


def test_prefs_cli_round_trip(tmp_path: Path) -> None:
    runner = CliRunner()
    d = str(tmp_path / "d")
    r = runner.invoke(main, ["memory", "prefs", "set", "--data-dir", d, "--role", "coder",
                             "--key", "Indent Style", "--title", "Indentation",
                             "--content", "4 spaces, never tabs"])
    assert r.exit_code == 0, r.output
    assert "created user_preferences/indent_style" in r.output
    r = runner.invoke(main, ["memory", "prefs", "set", "--data-dir", d, "--role", "coder",
                             "--key", "indent_styl", "--title", "x", "--content", "y"])
    assert r.exit_code != 0 and "indent_style" in r.output
    r = runner.invoke(main, ["memory", "prefs", "list", "--data-dir", d, "--json"])
    assert r.exit_code == 0 and '"4 spaces, never tabs"' in r.output
    r = runner.invoke(main, ["memory", "prefs", "delete", "--data-dir", d, "--role", "coder",
                             "--key", "indent_style"])
    assert r.exit_code == 0
    r = runner.invoke(main, ["memory", "prefs", "list", "--data-dir", d])
    assert "no preferences set" in r.output
