"""Orders about the answer at hand are no facts (issue 24, kind 9): an order whose verb
the extraction did not know ("Return the result as a CSV …"), an order that says a
part of the answer is not needed ("No need for explanations", 不需要解释, 説明は不要です)
was stored as a long-term fact and shown in other conversations."""
from __future__ import annotations

import pytest

from memory_core.evaluation.extraction import stands
from memory_core.extraction import extract
from tests.conftest import RunningProxy
from tests.fake_upstream import FakeUpstream
from tests.test_injection import Agent, block_of

ORDERS = [
    "Return the result as a CSV with columns name and score.",
    "Output the list sorted by score.",
    "Describe the architecture in two paragraphs.",
    "Provide three examples.",
    "Rank these options by cost.",
    "Now describe the architecture in two paragraphs.",  # "now": the next order, no update
    "Now return the result as JSON.",
    "No need for explanations, just give me the command to list open ports.",
    "There's no need to add comments.",
    "不需要解释，直接给我命令。",
    "説明は不要です。コマンドだけください。",
    "前置きはいりません。",
]


@pytest.mark.parametrize("text", ORDERS)
def test_an_order_about_the_answer_is_no_fact_and_does_not_stand(text: str) -> None:
    items = extract(text)
    assert not any(i.kind == "fact" for i in items), items
    assert not any(stands(i) for i in items), items


@pytest.mark.parametrize("text", [
    "No need to be so formal with me.",
    "No need for explanations, just give me the command.",
    "There's no need to add comments.",
    "不需要解释，直接给我命令。",
    "説明は不要です。",
])
def test_saying_a_part_is_not_needed_is_a_negated_order(text: str) -> None:
    (item, *_) = extract(text)
    assert item.kind == "constraint" and item.negated, item


@pytest.mark.parametrize("text", [
    "From now on, no need for a summary at the end.",
    "From now on, don't add a summary at the end.",
    "以后不需要解释。",
    "今後、説明は不要です。",
])
def test_the_same_said_to_last_is_a_standing_negated_rule(text: str) -> None:
    (item,) = extract(text)
    assert item.kind == "constraint" and item.negated and stands(item), item


@pytest.mark.parametrize("text", [
    "No need to worry about it.", "No need to apologize!", "No reason to panic.",
    "No need to be sorry!", "No need to be so hard on yourself.",
    "不用担心。", "不必客气。",
])
def test_reassurance_is_no_item(text: str) -> None:
    assert extract(text) == [], extract(text)


@pytest.mark.parametrize("text, subject", [
    ("Return policy changed to 60 days.", "return policy"),  # nouns that are also verbs
    ("Share price fell to 40.", "share price"),
    ("Export volume is 2 TB a day.", "export volume"),
    ("Compute costs doubled last month.", "compute"),
    ("Produce prices at the market went up again.", "produce"),
    ("Group A owns the frontend and Group B owns the backend.", "group"),  # a label, no "a"
])
def test_a_noun_that_is_also_a_verb_still_opens_a_fact(text: str, subject: str) -> None:
    items = extract(text)
    assert any(i.kind == "fact" and subject in (i.subject or "") for i in items), items


@pytest.mark.parametrize("text", [
    "From now on, no more than 3 retries per job.",
    "Going forward, no fewer than two reviewers on every PR.",
    "No more than 3 retries per job.",
])
def test_a_bound_after_no_is_a_rule_not_a_prohibition(text: str) -> None:
    """"No more than 3 retries" caps the retries; it does not forbid them."""
    (item,) = extract(text)
    assert item.kind == "constraint" and not item.negated, item


@pytest.mark.parametrize("text", [
    "不需要的文件一律删除。",
    "不必要的依赖都要删掉。",
    "これからは不要なファイルを削除してください。",
    "説明は結構詳しくお願いします。",
])
def test_a_noun_called_unneeded_is_no_negated_order(text: str) -> None:
    """不需要的 / 不必要 / 不要な describe what the order acts on, and 結構 before an
    adjective means "fairly": the order is not negated."""
    assert not any(i.negated for i in extract(text)), extract(text)


def test_an_order_with_a_condition_is_a_rule_not_a_fact() -> None:
    (item,) = extract("Return 404 when the user is missing.")
    assert item.kind == "constraint" and item.value == 404, item


@pytest.mark.parametrize("text", [
    "Build times double when the cache is cold.",
    "Restart takes 2 minutes if the cluster is busy.",
    "Fetch requests fail when the token is expired.",
])
def test_a_claim_with_a_condition_is_still_a_fact(text: str) -> None:
    """A condition's copula lets an order through only where the verb has its object
    after it ("Return 404 when …"); here the verb-like word is a noun."""
    assert [i.kind for i in extract(text)] == ["fact"], extract(text)


async def test_an_order_about_one_answer_stays_out_of_other_conversations(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    first = Agent(proxy, upstream, session="one")
    await first.say("Return the result as a CSV with columns name and score.")
    await proxy.settle()
    other = Agent(proxy, upstream, session="two")
    await other.say("Which columns does the result table have?")
    assert "CSV" not in block_of(other.upstream_last_user())
