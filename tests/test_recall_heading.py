"""Another memory layer's recall pasted under a plain heading (no tag) is no statement of
the user's (memory_core/extraction/prepare.py: recall_spans; docs row 240)."""

from __future__ import annotations

import pytest

from memory_core.extraction import extract


@pytest.mark.parametrize("text, kept", [
    ("Relevant memories:\n- The user lives in Berlin.\n- The user prefers short answers.\n"
     "\nI prefer dark mode.", ["I prefer dark mode."]),
    ("Memory context:\n- User works at Acme.\n- The user's dog is named Rex.\n"
     "I prefer dark mode.", ["I prefer dark mode."]),
    ("## Retrieved context\n* The user is vegetarian.\nI prefer dark mode.",
     ["I prefer dark mode."]),
    # the tagged form, read the same way already
    ("<memories>\n- The user lives in Berlin.\n</memories>\nI prefer dark mode.",
     ["I prefer dark mode."]),
    # controls: the user's own list stays theirs
    ("My notes:\n- I live in Berlin.\n- I prefer short answers.",
     ["I live in Berlin.", "I prefer short answers."]),
    ("Relevant memories:\n- I live in Berlin.\n- I prefer tabs.",
     ["I live in Berlin.", "I prefer tabs."]),
    ("My notes:\n- The user lives in Berlin.", ["The user lives in Berlin."]),
    # "Context" alone heads a developer's own notes, "user" in them a word of the domain
    ("Context:\n- We keep the user table in Postgres.\n- The user service is written in Go.",
     ["We keep the user table in Postgres.", "The user service is written in Go."]),
])
def test_a_recall_under_a_plain_heading_is_not_the_users(text: str, kept: list[str]) -> None:
    assert [i.text for i in extract(text)] == kept
