"""Issue 24 item 3 (standing recall): what the user set stands though it has no word of
time (:mod:`memory_core.extraction.scope_markers`). Sentences here are in no labelled
split; each standing case fails before the change, the controls pass before and after.

- A scope marker over the project, the repository or the team says how things are done
  there ("In our codebase …", 在这个项目里…, このプロジェクトでは…).
- A team standard (统一用, に統一しました, "standardised on").
- A decision under a lead that names it ("Decision: …", 我们组定了：…) or a choice
  locked ("Let's pin the Python version at 3.12").
- An order to assume something of all later work ("Assume metric units for all …").
- The user's own allergy, condition or diet, alone or as the reason of a request
  (ナッツアレルギーがあるから、…, "I have celiac disease, so …").
- An order said to hold whatever happens or over all the user's input; a lead asking
  to remember ("Remember: …", 记住：…); a routine under its lead, recurring ("My
  reading routine: one chapter every night").

Controls: questions, past reports, another's team, a day named, one-off orders, rules
someone else passes on (reported speech stays a fact by design).
"""

from __future__ import annotations

import pytest

from memory_core.extraction import extract
from tests.standing_helpers import assert_none_stands, assert_stands


@pytest.mark.parametrize("text", [
    "Commit messages in this project follow the Angular convention.",
    "In our codebase every public function gets a docstring.",
    "Across the team we write design docs in Markdown, not Google Docs.",
    "在这个项目里，所有金额都用分存成整数。",
    "このプロジェクトでは、変数名はスネークケースで書きます。",
    "このrepoではテストはpytestで書きます。",
])
def test_a_statement_scoped_to_the_project_stands(text: str) -> None:
    assert_stands(text)


@pytest.mark.parametrize("text", [
    "接口返回的字段统一为驼峰命名。",
    "ログのタイムゾーンはUTCに統一します。",
    "We've standardised on Terraform for infrastructure.",
])
def test_a_team_standard_stands(text: str) -> None:
    assert_stands(text)


@pytest.mark.parametrize("text, subject, value", [
    ("Let's pin the Python version at 3.12 for the service.", "python version", 3.12),
    ("Let's lock the price at $49 a month for the first year.", "price", 49.0),
    ("Let's lock the venue at the Riverside hall.", "venue", None),
    ("チームで決めた：デモは毎月第一金曜日にやる。", "デモ", None),
])
def test_a_decision_under_a_lead_or_locked_stands(text: str, subject: str,
                                                   value: float | None) -> None:
    assert_stands(text)
    decisions = [i for i in extract(text) if i.kind == "decision"]
    assert [(d.subject, d.value) for d in decisions] == [(subject, value)]


def test_a_team_decision_lead_makes_a_fact_stand() -> None:
    assert_stands("Team decision: the on-call rotation is weekly, handing over on Mondays.")


@pytest.mark.parametrize("text", [
    "Assume Celsius in all weather questions.",
    "I mostly cook for two, assume that for every recipe you suggest.",
    "Assume I'm on macOS unless I tell you otherwise.",
])
def test_an_order_to_assume_for_all_later_work_stands(text: str) -> None:
    assert_stands(text)


@pytest.mark.parametrize("text", [
    "ナッツアレルギーがあるから、お菓子のレシピはナッツなしでお願い。",
    "卵アレルギーがあるので、外食の店を選ぶときは注意してください。",
    "ベジタリアンなので、肉料理は提案しないでください。",
    "小麦アレルギーなので、パン以外でお願いします。",
    "我有乳糖不耐受，推荐饮品时避开牛奶。",
    "I have celiac disease, so keep recipes gluten-free.",
    "I can't eat gluten, so skip bread in meal plans.",
])
def test_an_own_allergy_condition_or_diet_stands_before_a_request(text: str) -> None:
    assert_stands(text)


@pytest.mark.parametrize("text", [
    "No matter what, don't schedule meetings for me before 10am.",
    "无论如何，都别把我的手机号写进文档里。",
    "どんな場合でも、敬語で返信してください。",
    "Check the grammar in every email I paste, please.",
    "我写的每段代码都帮我检查一下类型注解。",
    "Remember: my daughter's school starts at 8:15.",
    "记住：我的车牌是京A12345。",
])
def test_an_order_for_whatever_happens_or_all_input_or_kept_stands(text: str) -> None:
    assert_stands(text)


@pytest.mark.parametrize("text", [
    "My practice plan: scales every morning and one new song each week.",
    "My reading routine: one chapter every night before bed.",
])
def test_a_recurring_routine_under_its_lead_stands(text: str) -> None:
    assert_stands(text)


def test_an_added_order_keeps_its_prohibition() -> None:
    items = extract("No matter what, don't schedule meetings for me before 10am.")
    assert [(i.kind, i.negated) for i in items] == [("constraint", True)]


@pytest.mark.parametrize("text", [
    "A podcast I like says you should always stretch before running. Is that true?",
    "My friend says he never eats after 8pm.",
    "小李说他每次都迟到。",
    "Tom said we must hurry up today.",
    "My plan: beach tomorrow, museum on Sunday.",
    "Remember: send the invoice to Ana.",
    "记住：把这个文件发给小王。",
    "Our tech lead says we must squash-merge every PR.",
    "经理说周会纪要每次都要发到群里。",
    "Check the grammar in this email I wrote.",
    "In this project, should we store money as integers?",
    "このrepoでは何のformatterを使っていますか？",
    "In this project we used MongoDB back in 2021.",
    "このプロジェクトでは昨日デプロイが失敗しました。",
    "My brother's team has a rule that nobody merges on Fridays.",
    "In our team meeting yesterday Sam presented the roadmap.",
    "Let's lock the door at 10 tonight.",
    "Fix the bug on line 40 of parser.py.",
    "Can you assume that for this one answer only?",
    "Assume the worst and you'll never be disappointed.",
    "我老婆对海鲜过敏，所以今晚别订海鲜餐厅。",
    "My dad has diabetes, so no sweets for him at the party.",
    "I can't eat another bite.",
    "我爸有糖尿病，所以少放糖。",
    "田中さんはナッツアレルギーがあるので、差し入れに気をつけて。",
])
def test_questions_reports_and_others_rules_do_not_stand(text: str) -> None:
    assert_none_stands(text)


@pytest.mark.parametrize("text", [
    "In this report we use the metric system.",
    "In our organic garden we use compost.",
    "In this teams channel everyone is nice.",
])
def test_a_word_that_only_begins_with_a_scope_noun_is_no_scope(text: str) -> None:
    assert_none_stands(text)


def test_a_scope_noun_is_keyed_without_cutting_a_word() -> None:
    items = extract("For this application, the logs go to stdout.")
    assert [(i.kind, i.subject) for i in items] == [("constraint", "logs")]


@pytest.mark.parametrize("text", [
    "Please lock the door at 10.",
    "Remind me to lock the front door at 10 pm.",
    "I need to lock the car at night.",
    "I lock my bike at the station every day.",
])
def test_locking_a_thing_is_a_chore_not_a_decision(text: str) -> None:
    assert_none_stands(text)
    assert not [i for i in extract(text) if i.kind == "decision"]


@pytest.mark.parametrize("text", [
    "No matter what I do, my code never compiles.",
    "Every email I send gets ignored.",
])
def test_a_complaint_for_whatever_happens_or_all_input_is_no_order(text: str) -> None:
    # before: a fact marked lasting by "no matter what" / "every email I send"
    assert_none_stands(text)


_PATTERNED = [
    "Commit messages in this project follow the Angular convention.",
    "接口返回的字段统一为驼峰命名。", "We've standardised on Terraform for infrastructure.",
    "Team decision: the on-call rotation is weekly.", "チームで決めた：デモは毎月第一金曜日にやる。",
    "Let's pin the Python version at 3.12 for the service.", "价格就定在99元。",
    "Assume Celsius in all weather questions.", "I can't eat gluten, so skip bread.",
    "小麦アレルギーなので、パン以外でお願いします。", "My reading routine: one chapter every night.",
    "No matter what, don't schedule meetings for me before 10am.", "无论如何，都别写进文档里。",
    "Check the grammar in every email I paste, please.", "我写的每段代码都帮我检查一下类型注解。",
    "Remember: my daughter's school starts at 8:15.", "Don't forget: I work remotely.",
    "记住：我的车牌是京A12345。", "Let's loc\u212a the price at $49.",  # Kelvin sign for k
    "Let's \u017fettle on Postgres for the backend.",  # long s
]


@pytest.mark.parametrize("text", _PATTERNED)
def test_the_word_gate_passes_every_sentence_a_pattern_matches(text: str) -> None:
    from memory_core.extraction import scope_markers as sm
    patterns = (sm.SCOPE, sm.STANDARD, sm.DECISION_LEAD, sm.LOCK, sm.ASSUME, sm.OWN_HEALTH,
                sm.ROUTINE, sm.NO_MATTER, sm.REMEMBER_LEAD, sm.EVERY_OWN)
    assert any(p.search(text) for p in patterns), text
    assert sm._cued(text, sm._MARK_WORDS, sm._MARK_CJK, lead=sm._LEAD_WORDS)
    sentence_patterns = (sm.SCOPE, sm.DECISION_LEAD, sm.LOCK, sm.ROUTINE, sm.OWN_HEALTH,
                         sm.EVERY_OWN, sm.NO_MATTER)
    if any(p.search(text) for p in sentence_patterns):
        assert sm._cued(text, sm._SENTENCE_WORDS, sm._SENTENCE_CJK)
