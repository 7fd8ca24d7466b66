"""Statements from a cold replay of issue 24 (kinds 1, 2 and 4), none of them the
issue's or the evals' wording: an unmarked update opened by 现在, an addition said with
"also"/も that rivals nothing, a CJK label with a number naming a member of a series,
and a restatement opened by a Japanese discourse filler."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from memory_core.engine import Engine
from memory_core.extraction import extract
from memory_core.items import writer
from memory_core.models import Scope
from tests.conftest import sql_read
from tests.fake_upstream import FakeUpstream
from tests.replay_helpers import put
from tests.test_memory_classes import _as_item, _items_after

SCOPE = Scope("t", "default")


def _said(tmp_path: Path, *texts: str) -> list[tuple[str, str, int | None]]:
    """Each text's statements stored in order, one message each; ``(text, status,
    conflict_with)`` of every item."""
    engine = Engine(tmp_path / "d")
    try:
        for text in texts:
            put(engine, text, SCOPE)
        return sql_read(engine, lambda c: [tuple(r) for r in c.execute(
            "SELECT text, status, conflict_with FROM memory_items ORDER BY id")])
    finally:
        engine.close()


@pytest.mark.parametrize("old, new", [
    ("我们的前端框架是Vue。", "现在我们的前端框架是React。"),
    ("登录页的前台颜色是灰色。", "现在登录页的前台颜色是蓝色。"),
])
def test_a_sentence_opened_by_xianzai_updates_its_subject(
        tmp_path: Path, old: str, new: str) -> None:
    # 在 of 现在 opened a "在…前" condition that ran into 前端/前台, so the update kept
    # a garbled subject ("现端框架") and replaced nothing
    (item,) = extract(new)
    assert item.condition is None and item.correction
    assert _said(tmp_path, old, new) == [(old, "superseded", None), (new, "active", None)]


@pytest.mark.parametrize("text, subject", [
    ("We also use Kibana for dashboards.", "dashboards"),
    ("I also play the cello.", "play cello"),
    ("We mostly use Go for services.", "services"),
    ("We also have a staging cluster in Frankfurt.", "staging cluster"),
])
def test_an_adverb_after_we_or_i_is_not_part_of_the_subject(text: str, subject: str) -> None:
    # "We also use …" stored nothing: "we also" was read as a noun phrase
    assert [(e.kind, e.subject) for e in extract(text)] == [("fact", subject)]


def test_just_with_a_verb_still_tells_of_a_moment_not_a_fact() -> None:
    assert extract("I just got back from the gym, phew.") == []


@pytest.mark.parametrize("first, added", [
    ("We use Grafana for dashboards.", "We also use Kibana for dashboards."),
    ("連絡にはSlackを使っています。", "連絡にはTeamsも使っています。"),
    ("我们用Prometheus做监控。", "我们也用Datadog做监控。"),
])
def test_one_more_of_a_kind_keeps_both_current_without_a_conflict(
        tmp_path: Path, first: str, added: str) -> None:
    assert _said(tmp_path, first, added) == [(first, "active", None), (added, "active", None)]


def test_a_value_said_after_an_addition_is_no_conflict(tmp_path: Path) -> None:
    added, plain = "We also use Kibana for dashboards.", "We use Grafana for dashboards."
    assert _said(tmp_path, added, plain) == [(added, "active", None), (plain, "active", None)]


def test_a_rival_value_without_the_addition_is_still_a_conflict(tmp_path: Path) -> None:
    first, rival = "連絡にはSlackを使っています。", "連絡にはTeamsを使っています。"
    assert _said(tmp_path, first, rival) == [(first, "active", None), (rival, "active", 1)]


@pytest.mark.parametrize("a, b", [
    ("試行5：成功率は80%でした。", "試行6：成功率は85%でした。"),
    ("实验3：准确率是91%。", "实验4：准确率是93%。"),
])
def test_a_cjk_word_with_a_number_and_a_colon_labels_a_sibling(
        tmp_path: Path, a: str, b: str) -> None:
    # two trials' rates were flagged "CONFLICTS … ask the user"
    assert [e.label for e in extract(a)] == [a.split("：")[0]]
    assert _said(tmp_path, a, b) == [(a, "active", None), (b, "active", None)]


def test_no_label_across_a_possessive(tmp_path: Path) -> None:
    assert [e.label for e in extract("我们的端口8080：认证服务。")] == [None]


def test_a_restatement_opened_by_a_japanese_filler_is_one_item(tmp_path: Path) -> None:
    # "念" of 念のため counted as a content term the first statement lacked
    first, again = "私の上司は佐藤さんです。", "念のため、佐藤さんが私の上司です。"
    assert _said(tmp_path, first, again) == [(first, "active", None)]


@pytest.mark.parametrize("old, new", [
    ("Code freeze is on Wednesdays.", "Starting next sprint, code freeze is on Thursdays."),
    ("The retro is during the weekend.", "From tomorrow, the retro is during the week."),
])
def test_a_setting_that_is_the_whole_predicate_is_the_value(
        tmp_path: Path, old: str, new: str) -> None:
    # "on Wednesdays" was read as a condition, so the update stood beside the old day
    # as another scope, both current, neither a correction nor a conflict
    assert [e.condition for e in extract(old)] == [None]
    assert _said(tmp_path, old, new) == [(old, "superseded", None), (new, "active", None)]


def test_a_setting_after_a_value_still_scopes_it(tmp_path: Path) -> None:
    a, b = "The cache TTL is 60 s on weekends.", "The cache TTL is 30 s."
    assert [e.condition for e in extract(a)] == ["on weekends"]
    assert _said(tmp_path, a, b) == [(a, "active", None), (b, "active", None)]


@pytest.mark.parametrize("first, again", [
    ("会议室在三楼。", "会议室在五楼。"),
    ("チームの言語はドイツ語です。", "チームの言語はフランス語です。"),
    ("我们的App支持中文。", "我们的App支持英文。"),
    ("我们的App支持日文。", "我们的App还支持韩文。"),
    ("The app supports English.", "The app also supports French."),
])
def test_another_value_in_one_slot_or_one_more_is_not_the_same_meaning(
        first: str, again: str) -> None:
    # a CJK word swapped changes two or more bigrams, so the "one word swapped" guard
    # missed it and the vector dedupe merged the new value away into the old one
    a, b = _as_item(first), _as_item(again)
    assert not writer.same_meaning(b, a) and not writer.same_meaning(a, b)


@pytest.mark.parametrize("first, again", [
    ("我的经理是王芳。", "王芳是我的直属上司。"),
    ("周会在每周二上午。", "每周二上午开周会。"),
    ("私の上司は佐藤さんです。", "佐藤さんは私の直属の上長です。"),
])
def test_a_reworded_cjk_statement_is_still_the_same_meaning(first: str, again: str) -> None:
    assert writer.same_meaning(_as_item(again), _as_item(first))


async def test_a_new_floor_is_not_merged_into_the_old_one(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    # observed through lcm-proxy serve with the default embedder: "会议室在五楼。" got
    # status merged ("same meaning … (vector dedupe)") and the block showed only 三楼
    _proxy, rows = await _items_after(make_proxy, upstream, "会议室在三楼。", "会议室在五楼。")
    assert [r["status"] for r in rows] == ["active", "active"], rows


@pytest.mark.parametrize("first, rival", [
    ("我住在苏州。", "我住在厦门。"),
    ("私は横浜に住んでいます。", "私は福岡に住んでいます。"),
    ("会议室在三楼。", "会议室在五楼。"),
])
def test_a_cjk_rival_value_of_one_speaker_is_a_conflict_as_in_english(
        tmp_path: Path, first: str, rival: str) -> None:
    # "I live in Lyon." / "I live in Porto." conflict; in Chinese and Japanese the
    # claim's bigrams outnumbered the short-claim bound and both stood as current
    assert _said(tmp_path, first, rival) == [(first, "active", None), (rival, "active", 1)]


@pytest.mark.parametrize("a, b", [
    ("小李住在成都。", "小张住在西安。"),
    ("老王的老家在青岛。", "老刘的老家在桂林。"),
    ("订单服务用的是Go语言。", "支付服务用的是Java语言。"),
    ("鈴木さんは那覇に住んでいます。", "田中さんは札幌に住んでいます。"),
])
def test_two_cjk_subjects_with_two_values_are_no_conflict(tmp_path: Path, a: str, b: str) -> None:
    assert _said(tmp_path, a, b) == [(a, "active", None), (b, "active", None)]


@pytest.mark.parametrize("old, new", [
    ("The deadline is Friday.", "The deadline is actually Monday."),
    ("The staging port is 5433.", "The staging port is actually 5434."),
    ("My hometown is Graz.", "My hometown is actually Linz."),
])
def test_actually_between_the_copula_and_a_name_or_number_corrects(
        tmp_path: Path, old: str, new: str) -> None:
    # only a leading "Actually, …" was a correction: these stood beside the old value
    # (the hometown one under another subject, "hometown" for "home")
    assert _said(tmp_path, old, new) == [(old, "superseded", None), (new, "active", None)]


@pytest.mark.parametrize("text", ["It is actually fine.", "It's fine, actually.",
                                  "The timeout is fine as it is at 30 s, actually."])
def test_actually_about_nothing_named_or_affirming_is_no_correction(text: str) -> None:
    assert not any(e.correction for e in extract(text))


@pytest.mark.parametrize("old, new", [
    ("We cache sessions in Redis.", "We dropped Redis; sessions are cached in Memcached."),
    ("Our CI runs on Travis.", "We ditched Travis; CI runs on Drone."),
])
def test_a_drop_before_a_semicolon_replaces_the_dropped_value(
        tmp_path: Path, old: str, new: str) -> None:
    # "We dropped Redis." replaced it; with a semicolon after it the clause was read
    # as a fact about "dropped redis" and the new value conflicted with the old one
    dropped, value = new.split("; ")
    assert _said(tmp_path, old, new) == [
        (old, "superseded", None), (dropped + ";", "active", None), (value, "active", None)]


def test_a_fronted_step_with_a_digit_scopes_its_clause(tmp_path: Path) -> None:
    # the 3 of 第3步 counted as an amount, so "在第3步里" was no condition but an item
    # of its own, and the two steps' timeouts were flagged as a conflict
    a, b = "在第3步里，我们把超时设为30秒。", "在第4步里，我们把超时设为60秒。"
    assert [e.condition for e in extract(a)] == ["在第3步里"]
    assert _said(tmp_path, a, b) == [(a, "active", None), (b, "active", None)]
