"""The labelled extraction set and its scorer: the set is sound and the score holds.

The floors guard against regressions; they are not a claim about unseen text. The set
was written before the rules, but the rules were then tuned on it (the ``b-``/``c-``
batches were scored blind first: F1 0.82 and 0.87 before tuning), so expect unseen
conversations to score lower than this set does.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from memory_core.evaluation.extraction import load, score, subject_similarity
from memory_core.extraction import extract
from memory_core.extraction import KINDS

SET = Path(__file__).parent / "data" / "extraction_labelled.jsonl"
OVERALL_FLOOR = 0.95
LANG_FLOOR = 0.90
KIND_FLOOR = 0.85


@pytest.fixture(scope="module")
def result() -> dict:
    return score(SET)


def test_labelled_set_is_large_varied_and_valid() -> None:
    rows = load(SET)
    assert len(rows) >= 150
    langs = Counter(r["lang"] for r in rows)
    assert langs["en"] >= 0.4 * len(rows)
    assert langs["zh"] >= 0.2 * len(rows) and langs["ja"] >= 0.2 * len(rows)
    assert sum(r["speaker"] == "assistant" for r in rows) >= 15
    assert sum(not r["expected"] for r in rows) >= 30  # hard negatives
    assert {i["kind"] for r in rows for i in r["expected"]} == set(KINDS)
    assert sum("value" in i for r in rows for i in r["expected"]) >= 50
    assert sum("condition" in i for r in rows for i in r["expected"]) >= 10
    assert sum(bool(i.get("correction")) for r in rows for i in r["expected"]) >= 15


def test_overall_precision_and_recall_hold(result: dict) -> None:
    assert result["messages"] >= 150
    assert result["overall"]["precision"] >= OVERALL_FLOOR, result["overall"]
    assert result["overall"]["recall"] >= OVERALL_FLOOR, result["overall"]


def test_every_language_and_kind_holds(result: dict) -> None:
    for lang, counts in result["by_lang"].items():
        assert counts["precision"] >= LANG_FLOOR and counts["recall"] >= LANG_FLOOR, (lang, counts)
    for kind, counts in result["by_kind"].items():
        assert counts["precision"] >= KIND_FLOOR and counts["recall"] >= KIND_FLOOR, (kind, counts)


def test_field_accuracy(result: dict) -> None:
    fields = result["fields"]
    assert fields["value"]["accuracy"] >= 0.95 and fields["unit"]["accuracy"] >= 0.95
    assert fields["correction"]["accuracy"] >= 0.95
    assert fields["condition"]["accuracy"] >= 0.8


def test_subject_similarity() -> None:
    assert subject_similarity("staging db port", "staging db") == 1.0  # containment
    assert subject_similarity("api timeout", "timeout for api") == 1.0  # word overlap
    assert subject_similarity("数据库端口", "資料庫端口") >= 0.5  # bigrams, folded script
    assert subject_similarity("データベースのポート", "データベースポート") == 1.0  # の ignored
    assert subject_similarity("budget", "deadline") == 0.0


def _write(tmp_path: Path, rows: list[dict]) -> Path:
    path = tmp_path / "set.jsonl"
    path.write_text("\n".join(json.dumps(r, ensure_ascii=False) for r in rows), encoding="utf-8")
    return path


def test_matching_needs_kind_subject_and_labelled_value(tmp_path: Path) -> None:
    path = _write(tmp_path, [
        {"id": "a", "lang": "en", "speaker": "user", "text": "The API timeout is 30 s.",
         "expected": [{"kind": "fact", "subject": "timeout", "value": 30, "unit": "s"}]},
        {"id": "b", "lang": "en", "speaker": "user", "text": "The API timeout is 30 s.",
         "expected": [{"kind": "fact", "subject": "timeout", "value": 45}]},   # wrong value
        {"id": "c", "lang": "en", "speaker": "user", "text": "The API timeout is 30 s.",
         "expected": [{"kind": "constraint"}]},                                 # wrong kind
        {"id": "d", "lang": "en", "speaker": "user", "text": "Thanks!", "expected": []},
    ])
    result = score(path)
    assert (result["overall"]["tp"], result["overall"]["fp"], result["overall"]["fn"]) == (1, 2, 2)
    assert result["fields"]["value"] == {"correct": 1, "total": 2, "accuracy": 0.5}
    assert [e["id"] for e in result["errors"]] == ["b", "c"]
    assert score(path, only="d")["overall"]["tp"] == 0


@pytest.mark.parametrize("row", [
    {"id": "x", "lang": "fr", "speaker": "user", "text": "t", "expected": []},
    {"id": "x", "lang": "en", "speaker": "user", "text": "t", "expected": [{"kind": "opinion"}]},
    {"id": "x", "lang": "en", "speaker": "user", "text": "t",
     "expected": [{"kind": "fact", "colour": 1}]},
    {"id": "x", "lang": "en", "text": "t", "expected": []},
])
def test_load_rejects_malformed_rows(tmp_path: Path, row: dict) -> None:
    with pytest.raises(ValueError, match="set.jsonl:1"):
        load(_write(tmp_path, [row]))


def test_load_rejects_duplicate_ids(tmp_path: Path) -> None:
    row = {"id": "x", "lang": "en", "speaker": "user", "text": "t", "expected": []}
    with pytest.raises(ValueError, match="duplicate"):
        load(_write(tmp_path, [row, row]))


# -- standing items (issue 24) ---------------------------------------------------------
NEVER_TUNED = [Path(__file__).parent / "data" / name
               for name in ("extraction_holdout2.jsonl", "extraction_standing.jsonl")]


def test_standing_is_scored_on_labelled_messages_only(tmp_path: Path) -> None:
    path = _write(tmp_path, [
        {"id": "a", "lang": "en", "speaker": "user", "text": "Always run the linter first.",
         "expected": [{"kind": "constraint", "standing": True}]},
        {"id": "b", "lang": "en", "speaker": "user", "text": "The build took 14 minutes.",
         "expected": [{"kind": "fact", "standing": True}]},   # labelled wrong on purpose
        {"id": "c", "lang": "en", "speaker": "user", "text": "Set the quota to 5 jobs.",
         "expected": [{"kind": "constraint", "standing": False}]},  # wrong on purpose
        {"id": "d", "lang": "en", "speaker": "user", "text": "Set the quota to 5 jobs.",
         "expected": [{"kind": "constraint"}]},                # no standing label: not scored
    ])
    st = score(path)["standing"]
    assert (st["tp"], st["fp"], st["fn"], st["messages"]) == (1, 1, 1, 3)
    # a set without standing labels has no standing score (the main labelled set)
    assert score(_write(tmp_path, [{"id": "e", "lang": "en", "speaker": "user",
                                    "text": "Always lint.", "expected": []}]))["standing"] is None
    assert score(SET)["standing"] is None


def test_standing_pairs_a_statement_filed_under_another_key(tmp_path: Path) -> None:
    """A standing statement whose extracted key differs from the labelled subject
    (the subject is in its text) is one statement, not a miss and a stray; a subject
    pair still comes first, and a text that does not name the subject pairs nothing
    (but for the last resort by message and kind, tested below)."""
    rule = "When you explain math to me, always show every step."
    path = _write(tmp_path, [
        {"id": "a", "lang": "en", "speaker": "user", "text": rule,
         "expected": [{"kind": "constraint", "subject": "math", "standing": True}]},
        {"id": "b", "lang": "en", "speaker": "user", "text": rule,
         "expected": [{"kind": "constraint", "subject": "algebra", "standing": True}]},
    ])
    predicted = extract(rule)
    assert predicted and "math" not in (predicted[0].subject or "").lower()
    st = score(path, message_pairs=False)["standing"]
    assert (st["tp"], st["fp"], st["fn"]) == (1, 1, 1), st
    got = [e["id"] for e in score(path, message_pairs=False)["standing_errors"]]
    assert got == ["b"]
    # a subject pair of another kind is preferred to a same-kind pair by text
    from memory_core.evaluation.extraction import _standing_pairs
    from memory_core.extraction import Extracted
    fact = Extracted(kind="fact", text="I'm allergic to shellfish", subject="shellfish")
    order = Extracted(kind="constraint", text="so no shellfish in my recipes",
                      subject="recipes")
    assert _standing_pairs([{"kind": "constraint", "subject": "shellfish"}],
                           [order, fact]) == [(0, 1)]


def test_standing_pairs_what_is_left_by_message_and_kind(tmp_path: Path) -> None:
    """A label whose free-worded subject names neither the key nor the text of the
    statement extracted from its very message pairs with a prediction of its kind left
    over: one right verdict, not a miss and a stray. The choice among several ignores
    whether a prediction stands; another kind, or a label already paired, pairs
    nothing; ``message_pairs=False`` scores as before."""
    rule = "From now on, pull request titles stay under 50 characters."
    path = _write(tmp_path, [
        {"id": "a", "lang": "en", "speaker": "user", "text": rule,
         "expected": [{"kind": "constraint", "subject": "PR naming", "standing": True}]},
        {"id": "b", "lang": "en", "speaker": "user", "text": rule,
         "expected": [{"kind": "preference", "subject": "PR naming", "standing": True}]},
    ])
    st = score(path)["standing"]
    assert (st["tp"], st["fp"], st["fn"]) == (1, 1, 1), st
    st = score(path, message_pairs=False)["standing"]
    assert (st["tp"], st["fp"], st["fn"]) == (0, 2, 2), st
    from memory_core.evaluation.extraction import _standing_pairs
    from memory_core.extraction import Extracted
    need = Extracted(kind="fact", text="I need to be in bed by 10:30", subject="need")
    order = Extracted(kind="constraint", text="don't suggest late plans", subject="plans")
    assert _standing_pairs([{"kind": "constraint", "subject": "bedtime"}],
                           [need, order]) == [(0, 1)]
    assert _standing_pairs([{"kind": "constraint", "subject": "bedtime"}],
                           [need, order], message_pairs=False) == []
    # the prediction sharing the subject's words wins, though the other one stands
    named = Extracted(kind="fact", text="We adopted a beagle, her name is Biscuit.",
                      subject="adopted beagle")
    aside = Extracted(kind="fact", text="She already runs the house.", subject=None)
    assert _standing_pairs([{"kind": "fact", "subject": "dog's name"}],
                           [aside, named]) == [(0, 1)]
    # one label, one item: a second label of the kind finds nothing left
    assert _standing_pairs([{"kind": "constraint", "subject": "bedtime"},
                            {"kind": "constraint", "subject": "evenings"}],
                           [order]) == [(0, 0)]


def test_standing_labels_are_booleans(tmp_path: Path) -> None:
    row = {"id": "x", "lang": "en", "speaker": "user", "text": "t",
           "expected": [{"kind": "fact", "standing": "yes"}]}
    with pytest.raises(ValueError, match="bad standing"):
        load(_write(tmp_path, [row]))


def test_standing_precision_on_the_splits_never_tuned_on() -> None:
    # Labelled by judgment from issue 24's definition, measured once (commit 3bd2ae9):
    # holdout2 P 1.000 R 0.818, the standing set P 0.944 R 0.944; together 26 of 27.
    tp = fp = fn = 0
    for path in NEVER_TUNED:
        rows = load(path)
        assert all("standing" in i for r in rows for i in r["expected"])
        st = score(path)["standing"]
        tp, fp, fn = tp + st["tp"], fp + st["fp"], fn + st["fn"]
    assert tp + fn >= 25 and tp / (tp + fp) >= 0.95, (tp, fp, fn)
    assert tp / (tp + fn) >= 0.85, (tp, fp, fn)


def test_the_blind_split_keeps_what_the_not_a_fact_rules_gained() -> None:
    """``extraction_holdout3.jsonl`` was written blind to the rules and never read for
    tuning (docs/evaluation/extraction_issue24.md): before the replacement and
    not-a-fact rules it scored F1 0.615, correction field 33/41, standing P 0.417;
    after, 0.741, 42/44, 0.818. The floors keep those gains from slipping back."""
    path = Path(__file__).parent / "data" / "extraction_holdout3.jsonl"
    rows = load(path)
    assert len(rows) >= 70 and all("standing" in i for r in rows for i in r["expected"])
    result = score(path)
    assert result["overall"]["f1"] >= 0.72, result["overall"]
    assert result["fields"]["correction"]["accuracy"] >= 0.9, result["fields"]
    assert result["standing"]["precision"] >= 0.8, result["standing"]


def test_the_second_blind_split_is_labelled_whole_and_judged_whole() -> None:
    """``extraction_holdout4.jsonl`` (87 messages, written blind and run once; figures in
    docs/evaluation/extraction_issue24.md, "Blind split holdout4") is a reading, not a
    target: its scores are not pinned. Every item carries ``standing``, about half the
    messages are controls, and the eval judges every message and every true label."""
    path = Path(__file__).parent / "data" / "extraction_holdout4.jsonl"
    rows = load(path)
    assert len(rows) >= 80 and all("standing" in i for r in rows for i in r["expected"])
    controls = [r for r in rows if not any(i["standing"] for i in r["expected"])]
    assert 0.4 <= len(controls) / len(rows) <= 0.65, len(controls)
    assert {r["lang"] for r in rows} == {"en", "zh", "ja"}
    true_labels = sum(i["standing"] for r in rows for i in r["expected"])
    standing = score(path)["standing"]
    assert standing["messages"] == len(rows), standing
    assert standing["tp"] + standing["fn"] == true_labels, standing


def test_requests_to_the_assistant_keep_their_standing_precision() -> None:
    """``extraction_requests.jsonl`` (105 requests, written blind to the rules, then
    tuned on: a development split) measured standing P 0.661 R 0.709 before the rules
    for orders on the work at hand, this answer's scope, te-form requests, 把这个
    orders, reported rules and scope leads; 0.909 / 0.727 after, 0.955 / 0.764 with
    withdrawals (docs/evaluation/extraction_issue24.md). Its five reported-rule labels
    disagree with this project's design (someone else's rule is a fact) and stay
    misses."""
    path = Path(__file__).parent / "data" / "extraction_requests.jsonl"
    rows = load(path)
    assert len(rows) >= 100 and all("standing" in i for r in rows for i in r["expected"])
    standing = score(path)["standing"]
    assert standing["precision"] >= 0.93 and standing["recall"] >= 0.74, standing


def test_agent_sessions_chit_chat_and_team_chats_keep_their_standing_scores() -> None:
    """``extraction_sessions.jsonl`` (113 messages of coding-agent sessions, chit-chat
    between friends and team chats, en/zh/ja, written blind to the rules, then tuned
    on: a development split). The floors sit under what the rules for reported
    numbers, plan steps, reported questions, decision leads, lasting diets, the
    status of the work, small leads, the size of a change, a machine's size and
    "per <name>" measured (figures: docs/evaluation/extraction_issue24.md); its
    precision floor is issue 24's 0.95. Its relayed-rule labels ("Priya says we must
    freeze deploys") disagree with this project's design and stay misses."""
    path = Path(__file__).parent / "data" / "extraction_sessions.jsonl"
    rows = load(path)
    assert len(rows) >= 110 and all("standing" in i for r in rows for i in r["expected"])
    standing = score(path)["standing"]
    assert standing["precision"] >= 0.95 and standing["recall"] >= 0.84, standing


def test_readings_ages_and_habits_keep_the_standdev_split_precise() -> None:
    """``extraction_standdev.jsonl`` (80 messages: agent sessions, chit-chat, team chats
    and work planning, en/zh/ja, labelled by issue 24's definition before the rules
    were read against it, then tuned on: a development split) measured standing P
    0.576 R 0.895 before the rules for readings, ages, readings flagged as changes and
    habits of late, 0.829 / 0.895 after, 0.919 / 0.895 after a plan's steps, a run's
    counts, a trip's length and a chat's speaker names, 1.000 / 0.974 after version words,
    rule conditions, 打算 and Japanese "I don't drink …" (docs/evaluation/extraction_issue24.md)."""
    path = Path(__file__).parent / "data" / "extraction_standdev.jsonl"
    rows = load(path)
    assert len(rows) >= 80 and all("standing" in i for r in rows for i in r["expected"])
    standing = score(path)["standing"]
    assert standing["precision"] >= 0.99 and standing["recall"] >= 0.99, standing


def test_sizes_readings_and_deadlines_keep_the_standdev2_split_precise() -> None:
    """``extraction_standdev2.jsonl`` (86 messages: support tickets and pasted emails,
    planning docs, fitness logs, budgets, travel, DIY, teaching, research notes, a
    notebook, incident chats, en/zh/ja; labelled by issue 24's definition before the
    extraction was run on it, then tuned on: a second development split) measured
    standing P 0.544 R 0.673 before sizes, machine readings, stays, papers' claims,
    counts of the answer at hand, scopes over every plan and deadlines were read, 0.827
    / 0.782 after (docs/evaluation/extraction_issue24.md, eighth pass), 0.887 / 0.855
    after Chinese and Japanese conditional rules were keyed by their order, 0.922 / 0.855
    after settling sentences and denied values (eleventh pass)."""
    path = Path(__file__).parent / "data" / "extraction_standdev2.jsonl"
    rows = load(path)
    assert len(rows) >= 86 and all("standing" in i for r in rows for i in r["expected"])
    standing = score(path)["standing"]
    assert standing["precision"] >= 0.92 and standing["recall"] >= 0.85, standing


def test_moments_pointers_and_named_rules_keep_the_standdev3_split_precise() -> None:
    """``extraction_standdev3.jsonl`` (96 messages: a coding agent's session with pasted
    traces, language learning, a medication diary, a renovation, a game master's notes,
    a job search, bookkeeping, school logistics, an on-call hand-off, en/zh/ja; labelled
    by issue 24's definition before the extraction was run on it, then tuned on: a third
    development split) measured standing P 0.500 R 0.540 at its first run, 0.780 / 0.640
    after readings of a moment, pointers, named rules, series notes, quoted kana forms,
    headless traces, Chinese scopes and "only" choices (ninth pass), 0.809 / 0.680 after
    kept statements, past "only" reports, orders to stop a practice and 现在 before an
    order (tenth pass; docs/evaluation/extraction_issue24.md)."""
    path = Path(__file__).parent / "data" / "extraction_standdev3.jsonl"
    rows = load(path)
    assert len(rows) >= 96 and all("standing" in i for r in rows for i in r["expected"])
    standing = score(path)["standing"]
    assert standing["precision"] >= 0.80 and standing["recall"] >= 0.67, standing


def test_pasted_titles_and_output_scopes_keep_the_standdev4_split_precise() -> None:
    """``extraction_standdev4.jsonl`` (93 messages: coding agents with pasted output,
    configs, diffs and release notes, planning, health, money, travel, team chats,
    support, study, hobbies, chit-chat, en/zh/ja and mixed; labelled by issue 24's
    definition before the extraction was run on it, then tuned on: a fourth development
    split) measured standing P 0.604 R 0.659 at its first run, 0.652 / 0.682 after text
    under a source's title line and rules over whatever the assistant makes for the
    user were read (twelfth pass; docs/evaluation/extraction_issue24.md)."""
    path = Path(__file__).parent / "data" / "extraction_standdev4.jsonl"
    rows = load(path)
    assert len(rows) >= 93 and all("standing" in i for r in rows for i in r["expected"])
    standing = score(path)["standing"]
    assert standing["precision"] >= 0.65 and standing["recall"] >= 0.68, standing


def test_label_agreement_counts_the_second_labellers_standing(tmp_path: Path) -> None:
    """``docs/evaluation/label_agreement.py``: a split agrees with itself; a flipped
    standing flag is a false positive or a miss; an item the first labeller left out
    is a false positive when the second says it stands."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(
        "label_agreement", Path(__file__).parents[1] / "docs/evaluation/label_agreement.py")
    assert spec and spec.loader
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    first = [{"id": "a", "lang": "en", "speaker": "user", "text": "Never push to main. Hi.",
              "expected": [{"kind": "constraint", "subject": "main", "standing": True}]},
             {"id": "b", "lang": "en", "speaker": "user", "text": "I paid $40 today.",
              "expected": []}]
    same = mod.agreement(first, first)
    assert (same["tp"], same["fp"], same["fn"]) == (1, 0, 0)
    second = [{**first[0], "expected": [{"kind": "fact", "subject": "push",
                                         "text": "Never push to main.", "standing": False}]},
              {**first[1], "expected": [{"kind": "fact", "subject": "payment",
                                         "text": "I paid $40 today.", "standing": True}]}]
    other = mod.agreement(first, second)
    assert (other["paired"], other["tp"], other["fp"], other["fn"]) == (1, 0, 1, 1)
    path = tmp_path / "second.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in second), encoding="utf-8")
    assert mod.read(str(path))[0]["expected"][0]["text"] == "Never push to main."
