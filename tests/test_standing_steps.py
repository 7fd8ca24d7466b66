"""A plan's step figures, a run's new counts, a trip's length and a team chat's speaker
names (issue 24, the standdev split's second round): kept, but none stands, and a rule
said in a pasted chat is keyed by what it says, not by who said it. Sentences here are
in no labelled split; the controls are numbers and rules the user set, which still
stand."""

from __future__ import annotations

import pytest

from memory_core.evaluation.extraction import stands
from memory_core.extraction import extract
from tests.standing_helpers import assert_stands, kept_but_not_standing

NOT_STANDING = [
    # a plan's steps named by their place in time
    "Canary plan: day 1 gets 5% of users, day 2 gets 25%, day 3 gets everyone.",
    "Phase 2 moves 40 tenants and phase 3 moves the remaining 120.",
    "第一周放量 10%，第二周放量 50%。",
    "2週目はトラフィックの 30% を流します。",
    # a run's result counted in the present tense; a count or a rate given "now"
    "After the merge, 7 tests fail instead of 2.",
    "The warning count is 58 now, not 30.",
    "Test coverage is down to 61% now.",
    # how long a trip or an event lasts
    "We're going to Kyoto in May for two weeks.",
    "My sister is planning a road trip through Norway for 9 days.",
    "十月我们去成都旅行 5 天。",
]


@pytest.mark.parametrize("text", NOT_STANDING)
def test_a_step_a_run_count_or_a_trip_length_is_kept_but_does_not_stand(text: str) -> None:
    kept_but_not_standing(text)  # kept: searchable when the turn asks for it


STANDING = [
    "My budget is 5k now, not 3k.",  # "now" on a value the user set
    "The port is 8081 now, not 8080.",
    "Keep the canary at 5% of users.",
    "The retention for audit logs is 90 days.",
    "Every deploy must pass 3 smoke tests.",
]


@pytest.mark.parametrize("text", STANDING)
def test_a_number_the_user_set_still_stands(text: str) -> None:
    assert_stands(text)


TRANSCRIPTS = [
    ("Mo: from now on every release needs two approvals.\nZoe: sure, makes sense.",
     "mo"),
    ("赵磊：以后每个 PR 都要有测试。\n孙丽：赞成。", "赵磊"),
    ("Ines: decision: we move the standup to 9:30.\nOla: 👍", "ines"),
]


@pytest.mark.parametrize(("text", "name"), TRANSCRIPTS)
def test_a_speaker_name_in_a_pasted_chat_is_no_part_of_the_key(text: str, name: str) -> None:
    kept = [i for i in extract(text) if stands(i)]
    assert kept, extract(text)
    assert all(name not in (i.subject or "") and not i.text.lower().startswith(name)
               for i in kept), kept


def test_a_decision_label_with_a_dash_gives_a_decision() -> None:
    kinds = {i.kind for i in extract("Decision — we move the standup to 9:30.")}
    assert "decision" in kinds


def test_a_listing_of_topics_and_a_first_person_line_keep_their_leads() -> None:
    # no reply line: "Budget:" is a topic, not a speaker
    assert any(i.subject == "budget" for i in extract("Budget: 5k\nOwner: Dana"))
    # "Jonas: I'll take …" is Jonas's own commitment, not the user's decision
    items = extract("Jonas: I'll take the release notes.\nMei: cool, thanks.")
    assert not any(i.kind == "decision" and stands(i) for i in items), items


@pytest.mark.parametrize("text", [
    "me: from now on I always review PRs before lunch.",
    "Kim: going forward, every incident gets a postmortem.\nRaj: agreed.\n"
    "me: from now on I always review PRs before lunch.",
    "我：以后每个 PR 都要有测试。\n王磊：好的",
])
def test_the_users_own_line_in_a_pasted_chat_is_the_users_rule(text: str) -> None:
    # "me:" is the user's own label: the line is read as the user's words, and it
    # makes the rest a chat, so no speaker's name keys another line's rule
    kept = [i for i in extract(text) if stands(i)]
    assert any("pr" in (i.subject or "").lower() for i in kept), extract(text)
    assert not any((i.subject or "").startswith(("me", "kim", "我")) for i in kept), kept


@pytest.mark.parametrize("text", [
    "ERROR: the deploy always fails on port 5432\nINFO: ok",
    "Name: api\nVersion: 2\nReplicas: 3\nStatus: done",
    "From: kim@example.com\nTo: raj@example.com\nSubject: Thanks, the quota is 5k",
    "Step: install the agent\nNote: done",
    "版本：2\n状态：好的",
])
def test_a_log_a_header_or_a_config_block_is_no_chat(text: str) -> None:
    from memory_core.extraction.transcript import speaker_spans
    assert speaker_spans(text) == []
    # its field labels stay what they are: "Version: 2" keeps its key
    if text.startswith("Name:"):
        assert {"version", "replicas"} <= {i.subject for i in extract(text)}


@pytest.mark.parametrize("text", [
    "[10:32] dana: from now on every release needs two approvals.\n[10:33] raj: agreed.\n"
    "[10:35] me: ok",
    "10:32 Dana: from now on every release needs two approvals.\n10:33 Raj: 👍",
    "[9:05 PM] dana: from now on every release needs two approvals.\n[9:06 PM] raj: agreed",
])
def test_a_chat_log_with_times_of_day_is_a_chat(text: str) -> None:
    # each line a speaker leads after its time: the rule is keyed by what it says, the
    # reply is no statement of its own and no line runs into the one above
    items = extract(text)
    kept = [i for i in items if stands(i)]
    assert kept and all("dana" not in (i.subject or "").lower() for i in kept), items
    assert all(not i.text.startswith(("[", "10:")) and "agreed" not in i.text
               and "raj" not in (i.subject or "").lower() for i in items), items
