"""Standing items, what the block shows on every turn (issue 24, kinds 3 and 9): the
classes found on the sessions split's standing errors, each tested on sentences that
are not in any split, in English, Chinese and Japanese where the class exists there.

Extraction-level checks run ``extract`` and score the items as the block would
(``stands``)."""

from __future__ import annotations

import pytest

from memory_core.evaluation.extraction import stands
from memory_core.extraction import extract

# -- a situation before a Chinese or Japanese rule is its condition, not its subject -------
BEFORE_RULES = [
    ("以后部署前都要先备份数据库。", "部署前", "备份数据库"),
    ("合并代码之前必须跑通集成测试。", "合并代码之前", "集成测试"),
    ("今後、リリース前に必ず負荷テストを実行してください。", "リリース前に", "負荷テスト"),
    ("デプロイする前には、必ずバックアップを取ってください。", "デプロイする前に", "バックアップ"),
]


@pytest.mark.parametrize(("text", "situation", "what"), BEFORE_RULES)
def test_the_situation_before_a_rule_is_its_condition(text: str, situation: str,
                                                      what: str) -> None:
    rules = [i for i in extract(text) if i.kind == "constraint"]
    assert len(rules) == 1, extract(text)
    rule = rules[0]
    assert rule.condition == situation
    assert rule.subject is not None and what in rule.subject and situation not in rule.subject
    assert stands(rule)


def test_an_order_for_a_situation_is_kept_as_a_rule() -> None:
    items = extract("上线前，请先通知运维。")
    assert [(i.kind, i.condition) for i in items] == [("constraint", "上线前")]


@pytest.mark.parametrize("text", [
    "もし時間があったら、このPRをレビューしてください。",
    "この回答では、箇条書きにしてください。",
    "オフラインの場合は、このコマンドを実行してください。",
])
def test_only_a_situation_before_an_action_makes_a_japanese_request_a_rule(text: str) -> None:
    """A condition other than "X前に(は)" (if there is time, in this answer) leaves a
    polite request the one-off ask it was, not a rule kept for later turns."""
    assert not any(i.kind == "constraint" for i in extract(text)), extract(text)


@pytest.mark.parametrize("text", [
    "三年前我搬到了上海。", "目前我们用 Redis。", "以前我们用MySQL。", "3日前にデプロイしました。",
    "2週間前に引っ越しました。", "提前一天通知我。", "每天下午五点前要提交日报。",
    "月底前要交报告。",
])
def test_a_time_ago_or_a_word_ending_in_before_is_no_condition(text: str) -> None:
    assert all(i.condition is None for i in extract(text)), extract(text)


# -- a decision the user passes on, with who made it --------------------------------------
DECISIONS = [
    ("Our CTO decided we'll host everything on Hetzner.", "hetzner"),
    ("Marta decided we're sticking with Jenkins for the nightly builds.", "nightly builds"),
    ("Our CTO decided that we'll host everything on Hetzner.", "hetzner"),
    ("佐藤さんは、CIはGitHub Actionsにすると決めました。", "ci"),
    ("田中さんは、ログの保存先はS3にすると決めました。", "ログ"),
    ("产品经理决定我们用飞书做项目管理。", "项目管理"),
]


@pytest.mark.parametrize(("text", "what"), DECISIONS)
def test_a_decision_made_by_someone_else_for_the_team_stands(text: str, what: str) -> None:
    items = extract(text)
    decisions = [i for i in items if i.kind == "decision"]
    assert len(decisions) == 1, items
    assert decisions[0].subject is not None and what in decisions[0].subject.lower(), items
    assert "we'll" not in decisions[0].subject and "さん" not in decisions[0].subject
    assert stands(decisions[0])


@pytest.mark.parametrize("text", [
    "The court decided our appeal last week.",
    "Nobody has decided anything yet.",
    "Nobody decided we should move the queue to Kafka.",
    "We haven't decided we're dropping the Windows build.",
    "I have not yet decided to rent the bigger office.",
    "They never decided we would share the staging cluster.",
])
def test_decided_about_something_else_is_no_team_decision(text: str) -> None:
    assert not any(i.kind == "decision" for i in extract(text)), extract(text)


def test_a_rules_modal_words_after_its_condition_are_not_its_subject() -> None:
    assert extract("以后部署前都要先备份数据库。")[0].subject == "备份数据库"
    assert extract("以后都要先写测试。")[0].subject == "写测试"
