"""Standing items read from structure, second round on standdev5's errors (issue 24,
branch stand9): a closing "instead" after what the speaker did (one event, no
revision). The sentences are written here, not taken from a labelled set; each group
has controls that must keep their verdict."""

from __future__ import annotations

import pytest

from memory_core.extraction import extract
from tests.standing_helpers import assert_none_stands, assert_stands

NARRATED_INSTEAD = [
    "The train was late, so I took a taxi instead.",
    "I skipped lunch and had a big dinner instead.",
    "The gym was packed, so we walked along the river instead.",
    "It snowed all morning, so I worked from the cafe and read instead.",
]


@pytest.mark.parametrize("text", NARRATED_INSTEAD)
def test_what_the_speaker_did_instead_is_no_revision(text: str) -> None:
    assert not any(i.correction for i in extract(text)), extract(text)
    assert_none_stands(text)


REVISED_INSTEAD = [
    "Let's use MySQL instead.",
    "I'll take the train instead.",
    "We switched to Vim instead.",
    "We went with Redis instead.",
    "We picked Kafka instead.",
    "Postgres was too slow, so we moved to ClickHouse instead.",
    "Vim was clunky, so I use Helix instead.",
    "The deadline is Monday instead.",
]


@pytest.mark.parametrize("text", REVISED_INSTEAD)
def test_a_choice_or_value_given_instead_still_revises(text: str) -> None:
    assert any(i.correction for i in extract(text)), extract(text)
    assert_stands(text)
