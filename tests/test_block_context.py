"""An item is one sentence of a message: the rest of the message counts as its context.

"I went to the harbour market last Sunday. We bought a copper kettle there." gives two
items; "What did Mara buy at the harbour market?" asks the second with the first one's
words. The item index keeps each item's message terms as context postings, weighed
below the item's own words (:data:`memory_core.assembly.block._CONTEXT_SHARE`), and
never through a speaker's name.
"""

from __future__ import annotations

import re
import pytest

from memory_core.engine import Engine
from memory_core.models import Scope
from tests.replay_helpers import say_in_thread

TENANT, ROLE = "t_ctx", "chat"

TALK = [
    ("Mara", "I went to the harbour market last Sunday. We bought a copper kettle there."),
    ("Tom", "The harbour market sells fresh fish every morning."),
    ("Mara", "I work as a nurse at the city hospital."),
    ("Mara", "My sister lives in Lisbon now."),
    ("Tom", "The storm flooded our cellar on Friday. My uncle carried the piano upstairs."),
    ("Tom", "The cellar door is painted green."),
    ("Mara", "I started learning the cello this spring."),
    ("Tom", "Thanks, Mara. I repaired the old fence today."),
]




def _ask(engine: Engine, question: str) -> dict[int, float]:
    """The item matches of ``question``'s block (asked in a thread of its own): id →
    keyword score."""
    scope = Scope(TENANT, ROLE, f"q-{abs(hash(question))}")
    msgs = [{"role": "system", "content": "A chat."}, {"role": "user", "content": question}]
    _, done = engine.capture_request(scope, scope.session or "q", msgs, {})
    result = done.result()
    log = engine.assemble(scope, result, question, "q", log=False).log
    out: dict[int, float] = {}
    for entry in log.get("included", []):
        ref, reason = str(entry.get("ref", "")), str(entry.get("reason", ""))
        m = re.search(r"matches this turn \(score ([0-9.]+)\)", reason)
        if ref.startswith("item:") and m:
            out[int(ref[5:])] = float(m.group(1))
    return out


@pytest.mark.parametrize(("question", "wanted"), [
    ("What did Mara buy at the harbour market?", "We bought a copper kettle there."),
    ("What did Tom save from the storm?",
     "My uncle carried the piano upstairs."),
])
def test_an_item_is_found_through_the_rest_of_its_message(
        engine: Engine, question: str, wanted: str) -> None:
    items = say_in_thread(engine, TENANT, ROLE, TALK)
    assert wanted in items  # one sentence of its message, an item of its own
    assert items[wanted] in _ask(engine, question)


def test_the_sentence_that_says_the_words_ranks_above_its_message_mate(
        engine: Engine) -> None:
    items = say_in_thread(engine, TENANT, ROLE, TALK)
    said = items["I went to the harbour market last Sunday."]
    mate = items["We bought a copper kettle there."]
    got = _ask(engine, "What did Mara see at the harbour market?")
    assert said in got and mate in got
    assert got[said] > got[mate]


def test_a_name_said_to_someone_is_no_context(engine: Engine) -> None:
    items = say_in_thread(engine, TENANT, ROLE, TALK)
    fence = items["I repaired the old fence today."]
    got = _ask(engine, "What did Mara tell us?")
    assert got  # Mara's items match on her name ...
    assert fence not in got  # ... Tom's item does not, for "Thanks, Mara." beside it
