"""Issue 24, standdev2's Chinese and Japanese conditional rules (eleventh pass), and an
order under a condition that recurs (branch rows9).
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


# -- an order under a condition that recurs (an occasion, not the answer at hand) --------------
@pytest.mark.parametrize(("text", "key", "condition"), [
    ("When I ask for SQL, use Postgres syntax.", "postgres syntax", "When I ask for SQL"),
    ("When you write Python, use type hints.", "type hints", "When you write Python"),
    ("When you review a PR, check the tests first.", "check tests first",
     "When you review a PR"),
    ("If I ask for a summary, keep it under 100 words.", "words", "If I ask for a summary"),
    ("If a test fails, paste the full traceback.", "paste full traceback", "If a test fails"),
    ("When I send you a log, summarise the errors.", "summarise errors",
     "When I send you a log"),
    ("我问SQL的时候，用Postgres语法。", "postgres语法", "我问SQL的时候"),
    ("你提交代码的时候，先跑格式化。", "跑格式化", "你提交代码的时候"),
])
def test_an_order_under_a_recurring_condition_stands(text: str, key: str, condition: str
                                                     ) -> None:
    # before: a constraint read as a request about the answer at hand (none stood)
    items = extract(text)
    assert [(i.kind, i.subject, i.condition) for i in items] == [
        ("constraint", key, condition)], items
    assert stands(items[0]), items


@pytest.mark.parametrize("text", [
    "If it's easy, do it now.",
    "When you're done, run the tests.",
    "If you have time, add a docstring.",
    "When you fix this bug, add a test.",
    "你写完这个的时候，跑一下测试。",
])
def test_a_condition_about_the_work_at_hand_is_no_rule(text: str) -> None:
    assert not any(stands(i) for i in extract(text)), extract(text)
