"""Issue 24, standdev2's Chinese and Japanese conditional rules (eleventh pass).
Sentences here are in no labelled split; each case fails before the change it tests,
except the controls.

- 以后 after a condition and its comma ("如果测试挂了，以后一律先看日志") leads the rule
  that holds each time the condition recurs: a standing constraint keyed by its order,
  not an update keyed by the condition.
- 以后 before a condition whose order carries 就要/要 ("以后如果有人迟到，就要罚款") is a
  duty each time: a constraint keyed by the duty.
- A Japanese order after its condition ("…たら、今後は必ず先に…してください") is keyed by
  what is done, not by the condition's noun, a standing lead or the adverb 先に.
"""

from __future__ import annotations

import pytest

from memory_core.evaluation.extraction import stands
from memory_core.extraction import extract

RULES = [
    ("如果测试挂了，以后一律先看日志再改代码。", "看日志再改代码"),
    ("要是客户投诉，以后都先道歉再解释。", "道歉再解释"),
    ("以后如果有人开会迟到，就要罚款 50 元。", "罚款"),
    ("以后如果线上出故障，就要写复盘。", "写复盘"),
    ("ビルドでエラーが出たら、必ず先にキャッシュを消してください。", "キャッシュ"),
    ("雨が降ったら、必ず先に洗濯物を取り込んでください。", "洗濯物"),
    ("本番で障害が起きたら、今後は必ず先にロールバックしてください。", "ロールバック"),
]


@pytest.mark.parametrize(("text", "key"), RULES)
def test_a_conditional_rule_is_keyed_by_its_order_and_stands(text: str, key: str) -> None:
    items = extract(text)
    assert [(i.kind, i.subject) for i in items] == [("constraint", key)], items
    assert stands(items[0]), items


@pytest.mark.parametrize(("text", "kind", "key"), [
    ("以后一律先看日志再改代码。", "constraint", "看日志再改代码"),  # no condition
    ("上线以后，接口超时改为10秒。", "fact", "接口超时"),  # 以后 after an event: an update
    ("如果线上出故障，就要写复盘。", None, None),  # no lead: a conditional order, no rule
])
def test_controls(text: str, kind: str | None, key: str | None) -> None:
    items = [(i.kind, i.subject) for i in extract(text)]
    if kind is None:
        assert items == [], items
    else:
        assert (kind, key) in items, items
