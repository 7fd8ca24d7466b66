"""Withdrawals that end an old value without giving a new one (issue 24 kind 1): a
Chinese state ended after 已经 (我已经不养猫了, 我们已经不用Jenkins了), a leave given again with
its reason after it ("Mondays are fine again now that …") and a rule named by 那条
(表格那条不用管了) retire the old item; one-off talk (我已经吃饭了), a dislike that holds
(我不吃辣) and a rule's bare "fine" with no "again" retire nothing. Wording here is not
the updates evals'."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from memory_core.evaluation.updates import judge, replay, scratch_engine
from memory_core.extraction import denial, extract, withdrawal


@pytest.fixture()
def engine() -> Iterator[Any]:
    with scratch_engine("lcm-withdrawals-") as e:
        yield e


def _row(lang: str, *texts: str, gone: str = "", active: str = "") -> dict[str, Any]:
    return {"id": "w", "lang": lang, "kind": "withdrawal",
            "messages": [{"content": t} for t in texts],
            "active": [active] if active else [], "gone": [gone] if gone else []}


@pytest.mark.parametrize("lang, old, withdrawn, gone", [
    ("zh", "我养了一只猫，叫咪咪。", "我已经不养猫了。", "养了一只猫"),
    ("zh", "我每天跑步。", "我已经不跑步了。", "我每天跑步"),
    ("zh", "我们用Jenkins。", "我们已经不用Jenkins了。", "我们用Jenkins"),
    ("en", "Never book flights with a red-eye departure.",
     "Red-eye departures are okay again since I sleep fine on planes now.", "red-eye departure"),
    ("zh", "代码里别用缩写。", "缩写那条不用管了，随便用。", "别用缩写"),
    ("zh", "回复都不要超过三段。", "三段那个要求作废了。", "不要超过三段"),
])
def test_a_withdrawal_retires_the_old_item(engine: Any, lang: str, old: str,
                                           withdrawn: str, gone: str) -> None:
    row = _row(lang, old, withdrawn, gone=gone)
    verdict = judge(row, replay(engine, row, "t"))
    assert verdict["replaced"] == [True], verdict


@pytest.mark.parametrize("lang, old, beside", [
    ("zh", "我养了一只猫，叫咪咪。", "我已经吃饭了。"),
    ("zh", "我喝咖啡。", "我不喝茶。"),
    ("en", "Never book flights with a red-eye departure.",
     "Red-eye departures are okay for this one trip."),
])
def test_a_look_alike_retires_nothing(engine: Any, lang: str, old: str, beside: str) -> None:
    row = _row(lang, old, beside, active=old.rstrip("。."))
    verdict = judge(row, replay(engine, row, "t"))
    assert verdict["kept"] == [True], verdict


def test_a_zh_ending_needs_its_le() -> None:
    assert denial.find("我不吃辣。", "zh") is None
    found = denial.find("我不吃辣了。", "zh")
    assert found is not None and found.ending
    assert not extract("我已经吃饭了。")


def test_the_withdrawal_forms_name_the_thing() -> None:
    m = withdrawal.find("表格那条不用管了，可以用。", "zh")
    assert m is not None and m[0].group(m[1]) == "表格"
    m = withdrawal.find("Tables are fine again now that I read on a laptop.", "en")
    assert m is not None and m[0].group(m[1]) == "Tables"
    assert withdrawal.find("Tables are fine again as a rule of thumb.", "en") is None
