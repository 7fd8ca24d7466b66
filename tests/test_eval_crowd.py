"""The ``crowd`` long-session profile (issue 24): a seeded scenario of several end users
behind one key, its pure measures, and a tiny run through the real CLI, SDK, proxy
and fake upstream."""

from __future__ import annotations

from pathlib import Path

import orjson
from click.testing import CliRunner

from proxy.cli import main
from proxy.evaluation import crowd_topics, topics_en
from proxy.evaluation.crowd import (
    CROWD_PROFILES,
    block_lines,
    duplicates,
    generate,
    leaks,
    precision_counts,
)


def test_the_scenario_is_seeded_and_has_what_the_profile_promises() -> None:
    a, b = generate("crowd", 1), generate("crowd", 1)
    assert a == b and generate("crowd", 2) != a
    users = {t.user for t in a.turns}
    assert len(users) == CROWD_PROFILES["crowd"][0] == 3
    assert {t.thread for t in a.turns} == {f"{u}-{x}" for u in users for x in ("a", "b", "ask")}
    assert len({t.name for t in a.turns if t.name}) == 2 * len(users)  # two speakers each
    texts = [t.text for t in a.turns]
    assert sum(text.startswith("Batch ") or "\nBatch " in text for text in texts) >= 3 * 5
    assert any("\n1. " in text for text in texts)  # a numbered list
    assert not any("actually" in text.lower() for text in texts)  # updates are unmarked
    # every user's own values are theirs alone (a leak is then unambiguous)
    seen = [v for vals in a.values.values() for v in vals]
    assert len(seen) == len(set(seen))
    # a vocabulary of its own: none of the old profile's topic templates
    old = {tp.say.split("{")[0] for tp in (*topics_en.FACTS, *topics_en.CHAINS)}
    assert old and not any(text.startswith(o) for text in texts for o in old if len(o) > 8)
    assert crowd_topics.SYSTEM not in texts


BLOCK = """[User Preferences]
- I prefer to be addressed as Robin in your replies. (msg 8)
[Memory]
- [constraint · msg 12] always mark every proving tray with a cobalt sticker.
- [fact · msg 31] Reminder: proving trays always get a cobalt sticker.
- [fact · msg 10] bring a cash float of 180 euros
- [fact · msg 40] We switched to the Marlow mill (corrects msg 3: "Ashdown mill" — superseded)
[Task State]
- Goal: finish the tray WN-683 sourdough trial
[Current Request]"""


def test_block_measures_count_useful_duplicate_and_leaked_lines() -> None:
    lines = block_lines(BLOCK)
    assert len(lines) == 5 and not any("Goal" in ln for ln in lines)
    useful, total = precision_counts(lines, ("Marlow",), (("Robin",), ("cobalt",)))
    assert (useful, total) == (4, 5)  # the cash float line is neither asked nor standing
    assert duplicates(lines, [("cobalt",), ("Marlow",), ("Robin",)]) == 1
    assert leaks(lines, ["Ashdown", "Kirkwall"]) == [lines[-1]]
    assert leaks(lines, ["Robi"]) == []  # whole words only


def test_a_tiny_crowd_run_through_the_cli_reports_every_target(tmp_path: Path) -> None:
    out = tmp_path / "crowd.json"
    result = CliRunner().invoke(main, ["eval", "--profile", "crowd-smoke", "--seed", "3",
                                       "--embedding-provider", "hashing", "--output",
                                       str(out)])
    assert result.exit_code == 0, result.output
    report = orjson.loads(out.read_bytes())
    fig = report["figures"]
    assert fig["users"] == 2 and fig["questions"] == 20 and fig["requests"] > 40
    assert set(report["targets"]) == {"invented_conflicts", "block_precision",
                                      "duplicates_shown", "cross_user_leaks",
                                      "cross_thread_leaks"}
    for name in ("coverage", "recall", "rank1", "block_precision"):
        assert 0.0 <= fig[name] <= 1.0, name
    assert fig["block_lines"] > 0 and fig["memory_tokens_mean"] > 0
    # end users behind one key never see each other's memory
    assert fig["cross_user_leaks"] == 0, report["result"]["cross_user"]
    assert "| block precision |" in result.stdout


def test_a_local_statement_cited_in_another_conversation_is_a_leak() -> None:
    import sqlite3

    from memory_core.store.sqlite_ops import SqliteTx
    from proxy.evaluation.crowd import _local_elsewhere

    sc = generate("crowd-smoke", 1)
    checklist = next(t for t in sc.turns if "checklist" in t.text)
    rule = next(t for t in sc.turns if "From now on" in t.text)
    conn = sqlite3.connect(":memory:")
    conn.row_factory = sqlite3.Row
    conn.executescript("CREATE TABLE threads (id INTEGER PRIMARY KEY, session TEXT);"
                       "CREATE TABLE messages (id INTEGER PRIMARY KEY, thread_id INT, text TEXT);")
    conn.execute("INSERT INTO threads VALUES (1, ?)", (checklist.thread,))
    conn.executemany("INSERT INTO messages VALUES (?, 1, ?)",
                     [(10, checklist.text), (12, rule.text)])
    float_line = "- [fact · msg 10] bring a cash float of 80 euros"
    rule_line = "- [constraint · msg 12] " + rule.text.splitlines()[-1]
    elsewhere = f"{checklist.user}-ask"
    # the checklist item is local to its conversation (it lost the tray code); the rule
    # stands everywhere; in its own conversation nothing leaks
    tx = SqliteTx(conn)
    assert _local_elsewhere(tx, sc, [(elsewhere, [float_line, rule_line])]) == [
        f"{elsewhere}: {float_line}"]
    assert _local_elsewhere(tx, sc, [(checklist.thread, [float_line])]) == []
