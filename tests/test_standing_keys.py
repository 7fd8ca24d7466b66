"""Keys and kinds of standing items (issue 24, the standdev split's third round): a
version written as one word stays one word of its key, a rule is keyed by what it
orders, not by a noun of its condition, a plan is no decision, a deadline with no
number stands, and a Japanese "I don't drink …" is a preference. Sentences here are in
no labelled split."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core.engine import Engine
from memory_core.evaluation.extraction import stands
from memory_core.extraction import clause, extract
from memory_core.items import writer
from memory_core.models import Scope
from tests.test_memory_classes import superseded_by

VERSIONS = [
    ("We ship v3 at the end of the month.", "v3"),
    ("Decision: we freeze v1.8 after Friday.", "v1.8"),
    ("v4 は来月リリースします。", "v4"),
    ("我们月底发布 v3。", "v3"),
]


@pytest.mark.parametrize(("text", "token"), VERSIONS)
def test_a_version_word_stays_one_word_of_the_key(text: str, token: str) -> None:
    items = [i for i in extract(text) if i.kind != "task"]
    assert items, extract(text)
    for item in items:
        assert token in (item.subject or ""), item  # not "ship v version", nor "v"
        assert "version" not in (item.subject or ""), item


@pytest.mark.parametrize(("text", "key"), [
    ("We're on Python 3.12 now.", "python version"),  # a cue word and a value: unchanged
    ("Use Node 20 in this repo.", "node repo version"),
])
def test_a_version_after_its_product_name_is_still_a_value(text: str, key: str) -> None:
    assert [i.subject for i in extract(text)] == [key]


CONDITIONED_RULES = [
    ("今後、サーバーが落ちたら 30 分以内に報告書を書くこと。", "報告書", "サーバー"),
    ("今後、本番でエラーが出た場合は必ず Slack に報告すること。", "slack", "エラー"),
    ("ビルドが壊れれば、必ずロールバック手順を実行すること。", "ロールバック手順", "ビルド"),
    ("以后如果数据库宕机，必须写事故报告。", "写事故报告", "数据库"),
]


@pytest.mark.parametrize(("text", "key", "condition_noun"), CONDITIONED_RULES)
def test_a_rule_is_keyed_by_its_order_not_by_its_condition(
        text: str, key: str, condition_noun: str) -> None:
    rules = [i for i in extract(text) if i.kind == "constraint"]
    assert rules, extract(text)
    assert rules[0].subject == key, rules
    assert condition_noun not in (rules[0].subject or ""), rules


@pytest.mark.parametrize(("text", "key"), [
    ("今後、コードは必ずレビューを通してからマージしなければならない。", "コード"),  # no condition
    ("デプロイは必ず金曜日以外に行うこと。", "デプロイ"),
    ("From now on, if a deploy fails, roll back within 10 minutes.", "roll back"),
])
def test_a_rule_without_an_opening_condition_keeps_its_key(text: str, key: str) -> None:
    assert [i.subject for i in extract(text) if i.kind == "constraint"] == [key]


@pytest.mark.parametrize(("text", "key"), [
    ("紅茶は飲みません。", "紅茶"),
    ("豚肉は食べない。", "豚肉"),
    ("タバコは吸いません。", "タバコ"),
    ("私は辛い食べ物が苦手です。", "辛い食べ物"),  # a dislike: already one, a control
])
def test_what_the_speaker_does_not_eat_or_drink_is_a_standing_preference(
        text: str, key: str) -> None:
    items = extract(text)
    assert [(i.kind, i.subject, i.negated) for i in items] == [("preference", key, True)]
    assert stands(items[0])


@pytest.mark.parametrize("text", ["会議には出ません。", "昨日は何も食べませんでした。"])
def test_another_negated_verb_or_a_past_meal_is_no_preference(text: str) -> None:
    assert not any(i.kind == "preference" for i in extract(text)), extract(text)


@pytest.mark.parametrize("text", ["我们打算周末去爬山。", "我们打算下个月办个婚礼。"])
def test_a_plan_said_with_da_suan_is_no_decision(text: str) -> None:
    items = extract(text)
    assert items and not any(i.kind == "decision" or stands(i) for i in items), items


@pytest.mark.parametrize("text", ["我们打算用 Redis 做缓存。",
                                  "我们打算下个月从 MySQL 迁移到 PostgreSQL。"])
def test_da_suan_with_what_it_chooses_is_a_decision(text: str) -> None:
    assert [i.kind for i in extract(text)] == ["decision"]


VERSION_VALUES = [
    ("We're on v2.3 of the SDK.", "We're on v2.4 of the SDK now."),
    ("Pin the SDK to v1.2.3.", "Pin the SDK to v1.2.4."),
    ("Use API v1 for the billing calls.", "Use API v2 for the billing calls."),
]


@pytest.mark.parametrize(("old", "new"), VERSION_VALUES)
def test_a_version_after_a_preposition_or_a_name_is_the_value_not_the_key(
        old: str, new: str) -> None:
    """"on v2.3", "to v1.2.4", "API v2": the version is what changes, so the two
    statements share a key and the later one revises the earlier."""
    (a,), (b,) = extract(old), extract(new)
    assert a.subject == b.subject, (a, b)
    assert "v2" not in (a.subject or "") and "v1" not in (a.subject or ""), a


def test_a_new_version_after_on_supersedes_the_old(engine: Engine) -> None:
    for text in VERSION_VALUES[0]:
        engine.store.write_tx_sync(lambda c, t=text: writer.store_extracted(
            c, Scope("t", "coder"), 1, None, extract(t)))
    assert superseded_by(engine) == {VERSION_VALUES[0][0]: VERSION_VALUES[0][1]}


_SCAN_PARTS = st.sampled_from(["we", "ship", "On", "API", "to", " ", "  ", "\t", "\n", "'",
                               "-", "_", "*", ":", '"', "发布", "é", "1", ",", "\u3000", "v2"])


@settings(max_examples=400, deadline=None)
@given(st.lists(_SCAN_PARTS, max_size=14), st.data())
def test_the_word_before_a_version_is_found_from_its_own_run(parts: list[str],
                                                             data: st.DataObject) -> None:
    """``names_release`` searches back from the version's own word run, not the whole
    clause (once per version word): the match is the one a search from the clause's
    start finds."""
    scan = "".join(parts)
    start = data.draw(st.integers(0, len(scan)))
    at = data.draw(st.integers(start, len(scan)))
    whole = clause._WORD_BEFORE.search(scan, start, at)
    bounded = clause._WORD_BEFORE.search(scan, clause._last_word_start(scan, start, at), at)
    assert (whole and whole.span()) == (bounded and bounded.span())
