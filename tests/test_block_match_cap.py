"""A block shows a few strong matches, not every item that shares a common word.

One item answers the question with its rare words ("kettle"); a dozen others share
only its common ones ("harbour market") and the speaker's name, enough to clear the
relative floor (a third of the best score). ``match_items`` keeps the best of them.
"""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from memory_core.engine import Engine
from memory_core.models import Scope

TENANT, ROLE = "t_cap", "chat"

STRONG = "I bought a copper kettle at the harbour market."
WEAK = [
    "The harbour market opens at seven on weekdays.",
    "My neighbour sells honey at the harbour market.",
    "Parking near the harbour market is a nightmare.",
    "We watched a juggler outside the harbour market.",
    "The harbour market got a new glass roof last year.",
    "Fresh sardines at the harbour market smell wonderful.",
    "A brass band plays by the harbour market in summer.",
    "Prices at the harbour market went up again.",
    "The harbour market flooded during the spring tide.",
    "The harbour market smells of tar and rope.",
    "Grandpa used to fix boats behind the harbour market.",
    "The bakery inside the harbour market closed for good.",
]
QUESTION = "Where did Mara get the kettle, at the harbour market?"


def _replay(engine: Engine) -> dict[str, int]:
    """Mara says :data:`STRONG` and :data:`WEAK` in one thread; ``{text: item id}``."""
    messages: list[dict[str, Any]] = [{"role": "system", "content": "A chat."}]
    for i, text in enumerate([STRONG, *WEAK]):
        messages.append({"role": "user", "content": text, "name": "Mara"})
        _, done = engine.capture_request(Scope(TENANT, ROLE, "talk"), f"t{i}",
                                         [dict(m) for m in messages], {})
        done.result()
        messages.append({"role": "assistant", "content": "Okay."})
    engine.flush()
    return {str(it["text"]): int(it["id"])
            for it in engine.list_items(tenant=TENANT, role=ROLE, limit=100)["items"]
            if it["status"] == "active"}


def _matches(engine: Engine) -> list[int]:
    """The item ids of :data:`QUESTION`'s block matched by its words, in block order
    (asked in a thread of its own)."""
    scope = Scope(TENANT, ROLE, "question")
    msgs = [{"role": "system", "content": "A chat."}, {"role": "user", "content": QUESTION}]
    _, done = engine.capture_request(scope, "q", msgs, {})
    log = engine.assemble(scope, done.result(), QUESTION, "q", log=False).log
    return [int(str(e["ref"])[5:]) for e in log.get("included", [])
            if str(e.get("ref", "")).startswith("item:")
            and re.search(r"matches this turn", str(e.get("reason", "")))]


def test_the_strong_match_is_shown_and_the_common_word_matches_are_cut(
        engine: Engine) -> None:
    ids = _replay(engine)
    assert STRONG in ids and all(w in ids for w in WEAK)
    shown = _matches(engine)
    weak = [ids[w] for w in WEAK]
    assert shown[0] == ids[STRONG]
    assert len(shown) == engine.config.match_items < 1 + len(WEAK)
    engine.config = dataclasses.replace(engine.config, match_items=1)
    assert _matches(engine) == [ids[STRONG]]
    # every weak match clears the relative floor: only the cap tells them apart
    engine.config = dataclasses.replace(engine.config, match_items=500)
    assert sorted(_matches(engine)) == sorted([ids[STRONG], *weak])
