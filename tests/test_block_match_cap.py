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
from tests.replay_helpers import say_in_thread

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
    ids = say_in_thread(engine, TENANT, ROLE, [("Mara", t) for t in [STRONG, *WEAK]])
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


def _question_log(engine: Engine, request_id: str = "q", log: bool = False
                  ) -> dict[str, Any]:
    scope = Scope(TENANT, ROLE, "question")
    msgs = [{"role": "system", "content": "A chat."}, {"role": "user", "content": QUESTION}]
    _, done = engine.capture_request(scope, request_id, msgs, {})
    return engine.assemble(scope, done.result(), QUESTION, request_id, log=log).log


def test_the_matches_past_the_cap_are_omitted_rows_of_the_explain_log(
        engine: Engine) -> None:
    """Every item matches; the cap shows 8 and the explain log names the others as
    omitted, with the cap, their rank and their score, next best first."""
    ids = say_in_thread(engine, TENANT, ROLE, [("Mara", t) for t in [STRONG, *WEAK]])
    matching = {ids[t] for t in [STRONG, *WEAK]}
    log = _question_log(engine)
    shown = [int(e["ref"][5:]) for e in log["included"] if e["ref"].startswith("item:")]
    cut = [e for e in log["omitted"] if e["reason"].startswith("past match_items")]
    assert len(shown) == 8
    assert {int(e["ref"][5:]) for e in cut} == matching - set(shown)
    assert len(cut) == len(matching) - 8 == 5
    assert [e["reason"] for e in cut] == [f"past match_items (8): rank {n}"
                                          for n in range(9, 14)]
    scores = [float(re.fullmatch(r"matches this turn \(score ([\d.]+)\)",
                                 e["would_have_been"])[1]) for e in cut]  # type: ignore[index]
    assert scores == sorted(scores, reverse=True) and scores[0] > 0
    assert all(e["tokens"] == 0 and e["section"] == "items" for e in cut)
    # a cap large enough for all: none cut
    engine.config = dataclasses.replace(engine.config, match_items=500)
    assert not [e for e in _question_log(engine, "q2")["omitted"]
                if e["reason"].startswith("past")]


def test_standing_items_leave_less_room_and_the_log_names_max_items(
        engine: Engine) -> None:
    """With standing items filling part of ``max_items``, fewer matches fit than
    ``match_items``: the cut rows name ``max_items`` and the standing count, and their
    ranks start right after the last match shown."""
    standing = ["I prefer metric units.", "Always answer in British English.",
                "I'm allergic to peanuts.", "Never use emojis in your answers."]
    ids = say_in_thread(engine, TENANT, ROLE,
                        [("Mara", t) for t in [*standing, STRONG, *WEAK]])
    assert all(t in ids for t in standing)
    engine.config = dataclasses.replace(engine.config, max_items=10)
    log = _question_log(engine)
    included = [e for e in log["included"] if e["ref"].startswith("item:")]
    n_standing = sum(1 for e in included if e["reason"].startswith("standing"))
    n_matches = sum(1 for e in included if "matches this turn" in e["reason"])
    assert n_standing == len(standing) and n_matches == 10 - n_standing
    cut = [e for e in log["omitted"] if e["reason"].startswith("past ")]
    assert cut and [e["reason"] for e in cut] == [
        f"past max_items (10, {n_standing} standing): rank {n}"
        for n in range(n_matches + 1, n_matches + 1 + len(cut))]


def test_standing_items_past_their_cap_are_omitted_rows_of_the_explain_log(
        engine: Engine) -> None:
    """Standing items past ``pinned_items`` (or ``max_items``) are not shown: the
    explain log names each, its cap, its rank among the standing items and its weight.
    ``match_items = 0``: none gets into the block as a match of the turn instead."""
    standing = ["I prefer metric units.", "Always answer in British English.",
                "I'm allergic to peanuts.", "Never use emojis in your answers.",
                "I prefer short answers.", "Always cite the source of a number."]
    ids = say_in_thread(engine, TENANT, ROLE, [("Mara", t) for t in standing])
    assert all(t in ids for t in standing)
    for cfg, cap, shown_n in (({"pinned_items": 4, "match_items": 0},
                               "past pinned_items (4)", 4),
                              ({"pinned_items": 20, "max_items": 2, "match_items": 0},
                               "past max_items (2)", 2)):
        engine.config = dataclasses.replace(engine.config, **cfg)
        log = _question_log(engine, f"q{shown_n}")
        shown = {int(e["ref"][5:]) for e in log["included"]
                 if e["ref"].startswith("item:") and e["reason"].startswith("standing")}
        past = [e for e in log["omitted"] if e["reason"].startswith(cap)]
        assert len(shown) == shown_n
        assert {int(e["ref"][5:]) for e in past} == set(ids[t] for t in standing) - shown
        assert [e["reason"] for e in past] == [f"{cap}: standing rank {n}" for n in
                                               range(shown_n + 1, len(standing) + 1)]
        assert all(re.fullmatch(r"standing \w+ \(weight [\d.]+\)", e["would_have_been"])
                   and e["tokens"] == 0 for e in past)


def test_memory_explain_prints_the_cut_matches_and_the_guidelines_once(
        engine: Engine, tmp_path: Any) -> None:
    from click.testing import CliRunner

    from proxy.cli import main

    ids = say_in_thread(engine, TENANT, ROLE, [("Mara", t) for t in [STRONG, *WEAK]])
    _question_log(engine, log=True)
    engine.flush()
    out = CliRunner().invoke(main, ["memory", "explain", "--data-dir", str(tmp_path / "d"),
                                    "--tenant", TENANT])
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    cut = [ln for ln in lines if ln.startswith("omitted:") and "past match_items (8)" in ln]
    assert len(cut) == 5 and "rank 9" in cut[0] and "(matches this turn (score" in cut[0]
    assert {int(ln.split()[1][5:]) for ln in cut} <= set(ids.values())
    guidelines = [ln for ln in lines if ln.startswith("included:") and " guidelines " in ln]
    assert len(guidelines) == 1, out.output


def test_the_guideline_lines_are_one_row_of_the_explain_log(engine: Engine) -> None:
    """The bootstrap block's guideline lines (marker, role, tools) share one ref: one
    included row, their tokens summed."""
    say_in_thread(engine, TENANT, ROLE, [("Mara", t) for t in [STRONG, *WEAK]])
    log = _question_log(engine)
    rows = [e for e in log["included"] if e["ref"] == "guidelines"]
    assert len(rows) == 1 and rows[0]["section"] == "guidelines"
    assert log["sections"][0]["lines"] >= 2  # the marker and the role line at least
    assert log["sections"][0]["tokens"] == rows[0]["tokens"]
    refs = [e["ref"] for e in log["included"]]
    assert len(refs) == len(set(refs))


def test_a_standing_item_past_its_cap_that_matches_the_turn_is_shown_not_omitted(
        engine: Engine) -> None:
    """A standing item past ``pinned_items`` that the turn's words match gets a match's
    place in the block: the explain log names it once, as included, and the omitted
    rows keep the other standing items' ranks."""
    standing = ["Never use emojis in your answers.", "I prefer metric units.",
                "Always answer in British English.", "I'm allergic to peanuts.",
                "Always cite the source of a number."]
    ids = say_in_thread(engine, TENANT, ROLE, [("Mara", t) for t in standing])
    assert all(t in ids for t in standing)
    engine.config = dataclasses.replace(engine.config, pinned_items=2)
    scope = Scope(TENANT, ROLE, "question")
    ask = "Can I put emojis in the answers?"
    msgs = [{"role": "system", "content": "A chat."}, {"role": "user", "content": ask}]
    _, done = engine.capture_request(scope, "e", msgs, {})
    log = engine.assemble(scope, done.result(), ask, "e", log=False).log
    emoji = f"item:{ids[standing[0]]}"
    included = [e for e in log["included"] if e["ref"] == emoji]
    assert len(included) == 1 and "matches this turn" in included[0]["reason"]
    past = [e for e in log["omitted"] if e["reason"].startswith("past pinned_items (2)")]
    shown = {e["ref"] for e in log["included"]}
    every = {f"item:{ids[t]}" for t in standing}
    # each standing item is in the block or an omitted row, never both
    assert {e["ref"] for e in past} == every - shown and emoji not in every - shown
    assert past, "some standing item past the cap matched nothing"
    ranks = [int(e["reason"].rsplit(" ", 1)[1]) for e in past]
    assert ranks == sorted(ranks) and all(3 <= r <= len(standing) for r in ranks)
