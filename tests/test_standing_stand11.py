"""Standing items read from structure, on standdev7's classes (issue 24, branch
stand11): each bullet under a lead that names rules ("Ground rules for this repo:",
"Channel rules:", 团队规范：) is a rule; a team's way of working stated as in effect
("We deploy X with Helm", 我们用 GitLab CI 跑流水线) stands; a Chinese or Japanese
order after a lasting reason (…，所以请…, …なので、…ないでください) stands; a
decision under "Let's decide:" stands. The
sentences are written here, not taken from a labelled set; each group has controls
that must keep their verdict."""

from __future__ import annotations

import pytest

from memory_core.evaluation.extraction import stands
from memory_core.extraction import extract
from tests.standing_helpers import assert_none_stands, assert_stands

RULE_LISTS = [
    "House rules for this repo:\n- no force pushes to main\n- keep the changelog in sync",
    "Team conventions:\n1. name branches after the ticket\n2. no merge commits",
    "Our norms, pin these:\n* no meetings on Wednesday\n* tag the on-call for outages",
    "团队规范：\n- 提交前跑一遍单元测试\n- 不要直接改生产库",
]


@pytest.mark.parametrize("text", RULE_LISTS)
def test_each_bullet_under_a_rule_lead_stands(text: str) -> None:
    items = extract(text)
    assert len(items) >= 2 and all(stands(i) for i in items), items


NOT_RULE_LISTS = [
    "The style guide says:\n- no force pushes to main\n- squash every PR",
    "Steps:\n1. restart the worker\n2. clear the queue",
    "Options:\n- move the standup\n- drop the retro",
    "Any rules you'd add?\n- no force pushes to main\n- squash every PR",
]


@pytest.mark.parametrize("text", NOT_RULE_LISTS)
def test_a_list_under_another_lead_does_not_stand(text: str) -> None:
    assert_none_stands(text)


PRACTICES = [
    "We deploy the payments service with Terraform and Nomad.",
    "We host the docs on Netlify.",
    "Our team ships the desktop app through electron-builder.",
    "我们用 Jenkins 跑夜间构建。",
    "うちのチームでは GitHub Actions を使っています。",
]


@pytest.mark.parametrize("text", PRACTICES)
def test_a_team_practice_stated_as_in_effect_stands(text: str) -> None:
    assert_stands(text)


NOT_PRACTICES = [
    "Yesterday we deployed the payments service by hand.",
    "This sprint we deploy from the hotfix branch.",
    "We're thinking about moving the docs to Netlify.",
    "我们上周用 Jenkins 跑了一次夜间构建。",
    "We eat dinner with the kids on weeknights.",
]


@pytest.mark.parametrize("text", NOT_PRACTICES)
def test_a_past_bound_or_household_statement_is_no_practice(text: str) -> None:
    assert_none_stands(text)


HOUSEHOLD_WITH_WORK_VERBS = [
    "We run in the park every morning.",
    "We store the leftovers in the freezer.",
    "We use the car to go to the supermarket.",
    "We usually build sandcastles on the beach.",
    "We train on Saturdays at the club.",
    "我们一直用这个锅做饭。",
    "うちでは毎朝パンを使って朝ごはんを作っています。",
]


@pytest.mark.parametrize("text", HOUSEHOLD_WITH_WORK_VERBS)
def test_a_household_habit_with_a_verb_of_work_is_no_practice(text: str) -> None:
    """A verb the work shares with daily life (run, store, use, 用, 使って) makes no
    practice without a named tool: the instrument is a name, or the doer a team."""
    assert not any(i.lasting for i in extract(text)), extract(text)


CJK_GROUNDED = [
    "我们的服务都跑在 ARM 机器上，所以请不要推荐只支持 x86 的镜像。",
    "開発環境は Windows なので、シェルのコマンドは PowerShell で書いてください。",
    "娘は卵アレルギーがあるので、レシピには卵を使わないでください。",
]


@pytest.mark.parametrize("text", CJK_GROUNDED)
def test_a_cjk_order_after_a_lasting_reason_stands(text: str) -> None:
    assert_stands(text)


CJK_MOMENT = [
    "我今天很忙，所以请简短回答。",
    "今ちょっと急いでいるので、短く答えてください。",
    "疲れたので、今日はここまでにしてください。",
]


@pytest.mark.parametrize("text", CJK_MOMENT)
def test_a_cjk_order_after_a_reason_of_the_moment_does_not_stand(text: str) -> None:
    assert_none_stands(text)


@pytest.mark.parametrize("text", ["彼は忙しいので、代わりにお願いします。",
                                  "彼女は猫アレルギーなので、猫の話はしないでください。"])
def test_a_japanese_reason_told_of_him_or_her_is_not_lasting(text: str) -> None:
    """彼/彼女 name someone outside the household as さん does: the order rests on
    their circumstance (as 他/她 in Chinese)."""
    assert not any(i.lasting for i in extract(text)), extract(text)


def test_a_decision_under_lets_decide_stands() -> None:
    items = extract("Let's decide: Postgres for the event store.")
    assert [i.kind for i in items] == ["decision"] and stands(items[0]), items


@pytest.mark.parametrize("text", ["Let's decide later whether we drop the polyfills.",
                                  "Let's decide: what do we do about the cache?"])
def test_a_decision_put_off_or_asked_does_not_stand(text: str) -> None:
    assert_none_stands(text)


def test_the_heading_of_inline_rules_is_no_statement() -> None:
    text = ("House rules for this repo, so you remember them: no force pushes, and never "
            "merge without a review.")
    items = extract(text)
    assert items and not any(i.text.startswith("House rules") for i in items), items


def test_a_statement_about_rules_is_kept() -> None:
    assert any(i.text.startswith("The rules for this repo")
               for i in extract("The rules for this repo are strict."))


def test_an_order_with_qing_after_yihou_is_a_rule() -> None:
    items = extract("我们的用户都在海外，所以以后写文案请先给英文版本。")
    assert any(i.kind == "constraint" and stands(i) for i in items), items


@pytest.mark.parametrize("text", ["以后再请你帮忙吧。", "以后有空请假去旅游。"])
def test_yihou_with_a_qing_of_treating_or_leave_is_no_rule(text: str) -> None:
    assert not any(i.kind == "constraint" for i in extract(text)), extract(text)
