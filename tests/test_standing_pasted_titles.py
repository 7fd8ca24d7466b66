"""Text pasted under a title line that names its source ("From the acme-sdk docs:",
"Pasted from the team channel:", "Release notes 2.4:"; issue 24, the standdev4 split)
is material, not the user's statement: its "always" and "going forward" do not make a
standing rule. A list under the title ends with its last bullet line, so the user's
own words below it are read. And a rule scoped over whatever the assistant makes for
the user ("in any email you draft for me") says it stands. The sentences are in no
labelled split; the controls are the user's own lists under a heading and orders about
the work at hand."""

from __future__ import annotations

import pytest

from memory_core.evaluation.extraction import stands
from memory_core.extraction import extract
from tests.standing_helpers import assert_none_stands, assert_stands

PASTED = [
    "From the acme-sdk docs:\n- Always pass a timeout.\n- Never reuse a session across"
    " threads.\nis our wrapper ok with that?",
    "Release notes 2.4:\n- Uploads are now always chunked at 8 MB.\n- Going forward, the"
    " v1 auth endpoint is gone.\nwill this break the mobile app?",
    "What's new in Pebble 5:\n* Drafts are always autosaved every 30 seconds.\nneat, right?",
    "Pasted from the team channel:\nRosa: from now on nobody merges without a ticket\n"
    "Ken: fine by me",
    "Copied from the landlord's notice: tenants must always keep the hallway clear.",
    "Changelog for v0.9.1:\n- The cache is never shared between workers anymore.",
    "Newsletter excerpt pasted: members should always book the court 2 days ahead.",
]


@pytest.mark.parametrize("text", PASTED)
def test_text_under_a_source_title_does_not_stand(text: str) -> None:
    assert_none_stands(text)


def test_the_users_question_below_a_pasted_list_is_still_read() -> None:
    items = extract("Release notes 2.4:\n- Uploads are now always chunked at 8 MB.\n"
                    "will this break the mobile app?")
    assert [i.kind for i in items] == ["question"], items
    assert "mobile app" in items[0].text


OWN_LISTS = [
    "Rules for this repo:\n- always use pnpm\n- never push to main",
    "Going forward:\n- always answer in British English",
    "Changelog:\n- Always write entries in the past tense.",
    "Docs:\n- Always document every public function.",
]


@pytest.mark.parametrize("text", OWN_LISTS)
def test_the_users_own_list_under_a_heading_still_stands(text: str) -> None:
    assert_stands(text)


SCOPED_OVER_OUTPUT = [
    "Add a license header to every file you create for me.",
    "Use the passive voice sparingly in any email you draft for me.",
    "Put type hints on all the functions you generate.",
    "Keep a rollback step in every migration you write.",
]


@pytest.mark.parametrize("text", SCOPED_OVER_OUTPUT)
def test_a_rule_over_whatever_the_assistant_makes_stands(text: str) -> None:
    items = extract(text)
    assert any(i.kind == "constraint" and stands(i) for i in items), items


AT_HAND = [
    "Fix the typo in the code you wrote.",
    "Did you add docstrings to every function you wrote?",
    "Add a license header to the file you created.",
    "Rename the variables in this function you generated.",
]


@pytest.mark.parametrize("text", AT_HAND)
def test_an_order_about_the_work_at_hand_does_not_stand(text: str) -> None:
    assert_none_stands(text)


# -- the user's own request on the title's line, the material below (branch rows9) -----------
@pytest.mark.parametrize(("text", "own"), [
    ("Forwarded from the ops channel: could you tell me what Priya means here?\n"
     "Priya: deploys are always frozen on Fridays", None),  # a request: nothing to keep
    ("Copied from the vendor email: please keep your reply under 80 words.\n"
     "Vendor: invoices must always quote the PO number", "please keep your reply under 80 words."),
    ("Excerpt from the handbook: which of these apply to contractors?\n"
     "- Staff must always badge in.\n- Laptops never leave the office.",
     "which of these apply to contractors?"),
])
def test_the_users_request_on_the_title_line_is_theirs_and_the_material_below_is_not(
        text: str, own: str) -> None:
    # before: the request was masked with the title; the lines below were read as the
    # user's (a standing "always"/"must" rule)
    items = extract(text)
    assert [i.text for i in items] == ([own] if own else []), items
    material = text.split("\n", 1)[1]
    assert not any(i.text in material or material in i.text for i in items), items


@pytest.mark.parametrize("text", [
    "From the acme-sdk docs: always pass a timeout.",  # the source's own line
    "Pasted from the wiki: staff must always badge in.\nthanks",
])
def test_a_sources_line_after_its_title_stays_material(text: str) -> None:
    assert_none_stands(text)
    assert not any("badge" in i.text or "timeout" in i.text for i in extract(text))
