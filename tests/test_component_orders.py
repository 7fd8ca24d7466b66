"""An order about one component's attribute (memory_replays.md rows 137, 161, 167, 168):
"登录表单的日志太吵了，把级别降到debug。" names the component in its first clause and the
attribute alone in the order. Its key carries the component (``replacement._owned``;
English "The login form's logs are too noisy, lower the level to debug.":
``replacement._owned_order_en``), so orders about two components' 级别 stay two, and it
never supersedes by meaning a statement that does not name that component
(``writer._other_component``), nor is superseded by one.

Real captures (``memory_core.evaluation.updates.replay``) into a real Engine; the vector
half is called with the similarity given, and once end to end with the default embedder
pair.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory_core.engine import Engine
from memory_core.evaluation.extraction import stands
from memory_core.evaluation.updates import replay
from memory_core.extraction import extract, replacement
from memory_core.items import writer
from memory_core.search import EmbeddingConfig, SearchConfig, SearchService, create_embedder
from tests.conftest import sql_read

FLOOR, MARGIN = SearchConfig().update_similarity, SearchConfig().update_margin
LOGIN_ZH = "登录表单的日志太吵了，把级别降到debug。"
PAY_ZH = "支付服务的日志太吵了，把级别调到warn。"
LOGIN_JA = "ログインフォームのログがうるさすぎるので、レベルをdebugに下げました。"
LOGIN_EN = "The login form's logs are too noisy, lower the level to debug."


@pytest.mark.parametrize("text, component", [
    (LOGIN_ZH, "登录表单"), (PAY_ZH, "支付服务"), (LOGIN_JA, "ログインフォーム"),
    ("把登录表单的日志级别降到debug。", "登录表单"), (LOGIN_EN, "login"),
])
def test_an_orders_key_carries_the_component_it_is_about(text: str, component: str) -> None:
    [item] = extract(text)
    assert item.subject is not None and component in item.subject, item


@pytest.mark.parametrize("text, subject", [
    ("我的日志太吵了，把级别降到debug。", "级别"),  # the user's own: no component
    ("今天的日志太吵了，把级别降到debug。", "级别"),  # a time, not a component
    ("把超时调到30秒。", "超时"),
    ("把消息队列换成Kafka了", "消息队列"),
])
def test_an_order_without_a_named_component_keeps_its_key(text: str, subject: str) -> None:
    assert [i.subject for i in extract(text)] == [subject]


def _ids(tmp: Path, messages: list[str]) -> tuple[Engine, dict[str, dict[str, Any]]]:
    engine = Engine(tmp / "d")
    replay(engine, {"id": "r", "messages": [{"content": m} for m in messages]}, "t")
    rows = sql_read(engine, lambda c: [dict(r) for r in c.execute(
        "SELECT id, status, text, subject FROM memory_items")])
    return engine, {r["text"]: r for r in rows}


def _assert_never_revised_by_meaning(tmp: Path, other: str, order: str) -> None:
    """Captured after ``other``, ``order`` is revisable, yet revising by meaning at a
    similarity of 0.95 (above the floor) leaves ``other`` active."""
    engine, rows = _ids(tmp, [other, order])
    try:
        old, new = rows[other]["id"], rows[order]["id"]
        assert writer.revisable(engine.store.read_tx(lambda tx: tx.item_writes.item(new)))
        assert engine.store.write_tx_sync(lambda tx: writer.revise_by_meaning(
            tx, new, [(old, 0.95)], floor=FLOOR, margin=MARGIN)) is None
        assert engine.store.read_tx(lambda tx: tx.item_writes.item(old))["status"] == "active"
    finally:
        engine.close()


def test_orders_about_two_components_attribute_stay_two(tmp_path: Path) -> None:
    engine, rows = _ids(tmp_path, [LOGIN_ZH, PAY_ZH])
    engine.close()
    assert rows[LOGIN_ZH]["status"] == rows[PAY_ZH]["status"] == "active", rows
    assert rows[LOGIN_ZH]["subject"] != rows[PAY_ZH]["subject"]


@pytest.mark.parametrize("other", [
    "构建缓存的过期时间是69小时。", "这个上传处理的测试在CI上时好时坏", "缓存层在输入为空的时候会报错",
])
def test_an_order_about_one_component_never_revises_another_by_meaning(
        tmp_path: Path, other: str) -> None:
    _assert_never_revised_by_meaning(tmp_path, other, LOGIN_ZH)


def test_the_same_components_stated_level_is_still_revised(tmp_path: Path) -> None:
    said = "登录表单的日志级别是info。"
    engine, rows = _ids(tmp_path, [said, LOGIN_ZH])
    engine.close()
    assert rows[said]["status"] == "superseded" and rows[LOGIN_ZH]["status"] == "active", rows
    assert not writer._other_component(LOGIN_ZH, "登录表单现在的日志级别是info。")


@pytest.mark.slow
def test_the_chains_first_value_survives_the_order_end_to_end(tmp_path: Path) -> None:
    # the long-session eval's store (quick seed 11): the order, cosine 0.843 to the
    # duration, superseded it through the vector half; the correction then found nothing
    messages = ["构建缓存的过期时间是69小时。", LOGIN_ZH, "更正：构建缓存的过期时间是17小时。"]
    emb = create_embedder(EmbeddingConfig())
    engine = Engine(tmp_path / "d")
    try:
        engine.attach_search(SearchService(engine.store, tmp_path / "d", SearchConfig(), emb))
        replay(engine, {"id": "r", "messages": [{"content": m} for m in messages]}, "t")
        rows = sql_read(engine, lambda c: [dict(r) for r in c.execute(
            "SELECT id, status, text, superseded_by FROM memory_items")])
    finally:
        engine.close()
        emb.close()
    by = {r["text"]: r for r in rows}
    assert by[LOGIN_ZH]["status"] == "active", rows
    assert by[messages[0]]["superseded_by"] == by[messages[2]]["id"], rows


# -- English (rows 161, 167-169): the same order, keyed and read as a change -----------------
PAY_EN = "The payment service's logs are too noisy, set the level to warn."
BUILD_CACHE_EN = "The build cache expires after 69 hours."


@pytest.mark.parametrize("text, subject, new", [
    (LOGIN_EN, "login form log level", "debug"),
    (PAY_EN, "payment service log level", "warn"),
    ("Set the login form's log level to debug.", "login form log level", "debug"),
    ("Lower the login form's log level to debug.", "login form log level", "debug"),
    ("The login form's timeout is too long, set the timeout to 30s.",
     "login form timeout", "30s"),
])
def test_an_english_order_about_a_named_component_changes_its_attribute(
        text: str, subject: str, new: str) -> None:
    # before: keyed by the owner's first word ("login") and no change (nothing replaced),
    # or, with the component inside the order, nothing stored at all
    [item] = extract(text)
    assert (item.subject, item.replacement) == (subject, new), item


@pytest.mark.parametrize("text", [
    "Set the timeout to 30s in this function.",  # the code at hand: a one-off order
    "Set the log level to debug.",  # no component named
    "Today's logs are too noisy, lower the level to debug.",  # a time, not a component
])
def test_an_english_order_that_names_no_component_is_no_change(text: str) -> None:
    assert not any(i.replacement for i in extract(text))
    assert not any(stands(i) for i in extract(text))


def test_an_english_order_revises_the_components_stated_level_only(tmp_path: Path) -> None:
    said = "The login form's log level is info."
    engine, rows = _ids(tmp_path, [said, "The export job's log level is info.", LOGIN_EN, PAY_EN])
    engine.close()
    # before: both statements keyed "login" / "export" and the orders no change: all active
    assert rows[said]["status"] == "superseded", rows
    assert rows["The export job's log level is info."]["status"] == "active", rows
    assert rows[LOGIN_EN]["status"] == rows[PAY_EN]["status"] == "active", rows


def test_an_english_order_never_revises_another_thing_by_meaning(tmp_path: Path) -> None:
    _assert_never_revised_by_meaning(tmp_path, BUILD_CACHE_EN, LOGIN_EN)
    assert not writer._other_component(LOGIN_EN, "The login form's log level is info.")


# -- rows 170-172: "the login form's log level", "the log level of the login form" -----------
LEVEL_KEY = "login form log level"


@pytest.mark.parametrize("text", [
    "The login form's log level is info.",
    "The log level of the login form is info.",
    "The login form log level is info.",
    "Actually, the log level of the login form is debug.",
    "Set the log level of the login form to debug.",
    "Set the login form's log level to debug.",
    "The logs of the login form are too noisy, lower the level to debug.",
])
def test_a_possessive_and_an_of_phrase_give_one_key(text: str) -> None:
    # before: "login form's log level" for the possessive, "login form log level" for the
    # others, and "Set the log level of the login form to debug." stored nothing
    assert [i.subject for i in extract(text)] == [LEVEL_KEY]


@pytest.mark.parametrize("said, then", [
    ("The login form's log level is info.", "Set the log level of the login form to debug."),
    ("The log level of the login form is info.", "Set the login form's log level to debug."),
    ("The log level of the login form is info.", LOGIN_EN),
    ("The login form log level is info.", LOGIN_EN),
    ("The login form's log level is info.", "Actually, the log level of the login form is debug."),
    ("The log level of the login form is info.", "Actually, the login form's log level is debug."),
])
def test_a_statement_is_revised_by_an_order_or_correction_phrased_the_other_way(
        tmp_path: Path, said: str, then: str) -> None:
    # before: the two keys differed, so both stayed current (and the "of" order was dropped)
    engine, rows = _ids(tmp_path, [said, then])
    engine.close()
    assert rows[said]["status"] == "superseded" and rows[then]["status"] == "active", rows


@pytest.mark.parametrize("text", [
    "Set the end of the day to 6pm.",  # a position in a time
    "Set the speed of light to 3.",  # no determiner: a name or mass noun, no owner
    "Set the rest of the team to remote.",  # a share of a group
    "Set the log level of the day to debug.",  # a time
    "Set the log level to debug.",
])
def test_an_of_phrase_that_names_no_thing_has_no_owner(text: str) -> None:
    assert replacement.owner_of(text) is None


def test_an_of_order_never_revises_another_thing_by_meaning(tmp_path: Path) -> None:
    order = "Set the log level of the login form to debug."
    assert replacement.owner_of(order) == "login form"
    _assert_never_revised_by_meaning(tmp_path, BUILD_CACHE_EN, order)
    assert writer._other_component(order, "The payment service's log level is info.")
    assert not writer._other_component(order, "The login form's log level is info.")
    assert not writer._other_component(LOGIN_EN, "The log level of the login form is info.")
