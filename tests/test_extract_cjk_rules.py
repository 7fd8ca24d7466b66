"""Chinese and Japanese standing rules led by "from now on" (以后/今后/从现在起/从现在开始,
これからは/今後は/今日から) are rules that stand, with the lead not taken for their
subject (issue 24, kind 9). Wording here differs from tests/data's rows."""

from __future__ import annotations

import orjson
import pytest

from memory_core.assembly.block import standing_weight
from memory_core.extraction import extract
from memory_core.items import standing


def _row(text: str) -> list[dict[str, object]]:
    return [{"kind": e.kind, "text": e.text, "value": e.value, "evidence": "user",
             "supersedes": None, "condition": e.condition, "subject": e.subject,
             "data": orjson.dumps({"label": e.label} if e.label else {}).decode()}
            for e in extract(text)]


@pytest.mark.parametrize("text, subject", [
    ("从现在开始所有周报都要用表格。", "所有周报"),
    ("从今以后，每次提交前都先跑一遍格式化。", None),
    ("以后别再在日志里打印密码了。", None),
    ("これからはずっと丁寧語で書いてください。", "丁寧語"),
    ("今後は必ずレビューを通してからマージすること。", "レビュー"),
    ("これからは毎週金曜日にバックアップを取ります。", "バックアップ"),
    ("今日からは常にUTCで時刻を書いて。", None),
])
def test_a_rule_from_now_on_is_a_standing_rule(text: str, subject: str | None) -> None:
    rows = _row(text)
    assert [r["kind"] for r in rows] == ["constraint"], rows
    row = rows[0]
    assert standing_weight(row) >= 2.0 and not standing.conversation_local(row), row
    lead_words = ("以后", "从", "今后", "これ", "今後", "今日")
    assert row["subject"] and not str(row["subject"]).startswith(lead_words), row
    if subject is not None:
        assert row["subject"] == subject


@pytest.mark.parametrize("text", [
    "これから昼ごはんを食べます。",   # about to, not from now on
    "これからは大阪に住みます。",     # where the speaker lives: a fact
])
def test_a_lead_alone_does_not_make_a_rule(text: str) -> None:
    assert [e.kind for e in extract(text)] in ([], ["fact"])


@pytest.mark.parametrize("text, subject", [
    ("这个项目里不要用 var。", "var"),
    ("我们团队里不要在周五发布。", "发布"),
    ("在本项目中禁止直接推送到 main。", "推送到main"),
])
def test_a_chinese_rule_is_keyed_past_its_scope(text: str, subject: str) -> None:
    # the scope that opens the rule (这个项目里, 我们团队里, 在本项目中) says where it
    # holds, and makes it stand; the key is what the rule is about (issue 24, standdev3)
    rules = [r for r in _row(text) if r["kind"] == "constraint"]
    assert rules and standing_weight(rules[0]) > 0, rules
    assert rules[0]["subject"] == subject, rules
