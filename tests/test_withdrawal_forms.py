"""Withdrawals that name what a rule asked for, not the rule (issue 24, "Withdrawals not
read"): "Drop the TL;DR from now on", "Paid tools are okay again", "You can use emojis
again", "…, so ignore what I said about X", 算了，不用附英文翻译了, 英文翻译就不用了,
やっぱり絵文字はなしで, 文字数の制限は気にしないで retire the active rule they name
(retracted, the message kept as evidence) and store no rule of their own; look-alikes
("Drop the table.", "Ignore the warning.", "Scratch that, make it 14.", 警告は気にしないで)
withdraw nothing. Extraction through ``extract``; engine-level through a real capture
(SQLite); the replay (docs/evaluation/memory_replays.md row 193) through the proxy with
the real openai SDK."""

from __future__ import annotations

import pytest

from memory_core.engine import Engine
from memory_core.extraction import extract
from tests.conftest import RunningProxy, sql_read
from tests.fake_upstream import FakeUpstream
from tests.replay_helpers import asked_later
from tests.test_standing_reports import stored

NAMED = [  # (message, the phrase naming what is withdrawn)
    ("Drop the TL;DR from now on.", "the TL;DR"),
    ("Drop the TL;DR, I read the whole thing anyway.", "the TL;DR"),
    ("Forget the TL;DR thing.", "the TL;DR thing"),
    ("Skip the closing summary going forward.", "the closing summary"),
    ("Never mind the haiku at the end anymore.", "the haiku at the end"),
    ("Paid tools are okay again, we got a budget approved.", "Paid tools"),
    ("Emojis are fine again.", "Emojis"),
    ("Tables are no longer banned.", "Tables"),
    ("You can use bullet points again.", "bullet points"),
    ("Feel free to suggest cloud services again.", "cloud services"),
    ("the python 2 boxes are gone, so ignore what I said about hints — add them everywhere",
     "hints"),
    ("算了，不用附英文翻译了。", "附英文翻译"),
    ("英文翻译就不用了。", "英文翻译"),
    ("やっぱり絵文字はなしで。", "絵文字"),
    ("文字数の制限は気にしないでください。", "文字数の制限"),
    ("絵文字はもう気にしないで。", "絵文字"),
]


@pytest.mark.parametrize(("text", "phrase"), NAMED)
def test_a_withdrawal_of_the_thing_names_it(text: str, phrase: str) -> None:
    items = extract(text)
    # the withdrawal, whatever else the message states ("the python 2 boxes are gone"
    # is also a status of the work: a task item of its own)
    withdrawals = [i for i in items if i.kind == "retraction"]
    assert len(withdrawals) == 1, items
    assert withdrawals[0].replaces == phrase, items


NOT_WITHDRAWN = [
    "Drop the table.",  # an order about the work at hand
    "Ignore the warning.",
    "Never mind, I found it.",  # names nothing
    "Scratch that.",
    "Scratch that, make it 14.",  # a correction with a new value, read elsewhere
    "Drop the TL;DR for this answer, I know the gist.",  # a one-off
    "Is the table okay again?",  # asked
    "If the build is green, so forget the word limit.",  # under a condition
    "算了，不用修改代码了。",  # the task at hand
    "这次英文翻译就不用了。",  # this time only
    "警告は気にしないで。",  # the warning at hand
]


@pytest.mark.parametrize("text", NOT_WITHDRAWN)
def test_a_look_alike_withdraws_nothing(text: str) -> None:
    assert all(i.kind != "retraction" for i in extract(text)), extract(text)


RETIRED = [  # (the standing rule, the withdrawal)
    ("Always include a TL;DR at the top of your answers.",
     "Drop the TL;DR, I read the whole thing anyway."),
    ("Never suggest paid tools in your recommendations.",
     "Paid tools are okay again, we got a budget approved."),
    ("Never use emojis in replies.", "You can use emojis again."),
    ("Don't use bullet points.", "Bullet points are fine again."),
    ("每次回答都附上英文翻译。", "算了，不用附英文翻译了。"),
    ("每次回答都附上英文翻译。", "英文翻译就不用了。"),
    ("絵文字を使わないでください。", "やっぱり絵文字はなしで。"),
]


@pytest.mark.parametrize(("rule", "withdrawal"), RETIRED)
def test_the_named_rule_is_retracted_and_no_rule_is_stored(
        engine: Engine, rule: str, withdrawal: str) -> None:
    rows = stored(engine, [rule, withdrawal])
    standing = [r for r in rows if r["kind"] in ("constraint", "preference", "decision")]
    assert [(r["text"], r["status"]) for r in standing] == [(rule, "retracted")], rows
    history = sql_read(engine, lambda c: [dict(r) for r in c.execute(
        "SELECT * FROM memory_item_revisions WHERE item_id = ?", (standing[0]["id"],))])
    assert any("withdrawn by the user" in str(h["reason"]) for h in history), history


REVERSED = [  # (the standing rule, an order that withdraws it and says it lasts)
    ("Always include a TL;DR at the top of your answers.", "Drop the TL;DR from now on."),
    ("Never skip the tests before merging.", "Skip the tests from now on."),
    ("Always add a summary table.", "Skip the summary table going forward."),
]


@pytest.mark.parametrize(("rule", "order"), REVERSED)
def test_an_order_that_withdraws_a_rule_replaces_it(
        engine: Engine, rule: str, order: str) -> None:
    rows = stored(engine, [rule, order])
    assert [(r["text"], r["status"]) for r in rows] == [(rule, "superseded"),
                                                        (order, "active")], rows
    assert rows[1]["supersedes"] == rows[0]["id"], rows


@pytest.mark.parametrize("order", [o for _, o in REVERSED])
def test_such_an_order_with_nothing_to_withdraw_is_kept_as_a_rule(
        engine: Engine, order: str) -> None:
    rows = stored(engine, [order])
    assert [(r["text"], r["kind"], r["status"]) for r in rows] == [
        (order, "constraint", "active")], rows


def test_a_withdrawal_after_its_reason_leaves_the_new_stance_current(engine: Engine) -> None:
    rule = "don't add type hints to the scripts in tools/, they run on python 2 boxes"
    message = ("the python 2 boxes are gone, so ignore what I said about hints — "
               "add them everywhere")
    rows = stored(engine, [rule, message])
    assert rows[0]["text"] == rule and rows[0]["status"] != "active", rows
    assert any(r["status"] == "active" and "add them everywhere" in str(r["text"])
               for r in rows), rows


KEPT = [  # (the standing rule, a message that withdraws something else or nothing)
    ("Always include a TL;DR at the top of your answers.", "Drop the table."),
    ("Always include a TL;DR at the top of your answers.", "Drop the summary from now on."),
    ("Never suggest paid tools in your recommendations.", "Emojis are fine again."),
    ("每次回答都附上英文翻译。", "算了，不用修改代码了。"),
    ("絵文字を使わないでください。", "警告は気にしないで。"),
]


@pytest.mark.parametrize(("rule", "other"), KEPT)
def test_a_rule_the_message_does_not_name_stays(engine: Engine, rule: str, other: str) -> None:
    rows = stored(engine, [rule, other])
    assert rows[0]["text"] == rule and rows[0]["status"] == "active", rows


def test_another_speakers_withdrawal_leaves_the_rule(engine: Engine) -> None:
    from tests.test_standing_reports import SCOPE
    msgs: list[dict[str, object]] = [
        {"role": "user", "name": "ana", "content": "Always include a TL;DR at the top."},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "name": "ben", "content": "Drop the TL;DR from now on."}]
    for n in (1, 3):
        _, fut = engine.capture_request(SCOPE, f"q{n}", [dict(m) for m in msgs[:n]], {})
        fut.result()
    rows = sql_read(engine, lambda c: [dict(r) for r in c.execute(
        "SELECT * FROM memory_items ORDER BY id")])
    assert (rows[0]["text"], rows[0]["status"]) == ("Always include a TL;DR at the top.",
                                                    "active"), rows


# -- memory_replays.md row 193: a withdrawn format rule stays in every later block ---------
async def test_a_dropped_tldr_rule_is_replaced_in_the_next_conversations_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "Always add a TL;DR at the top."),
        ("b", "I'm debugging a Kafka consumer lag issue."),
        ("c", "Drop the TL;DR from now on.")],
        "How should I size the consumer group?")
    assert "Kafka consumer lag" in block, block
    current = [line.split("(corrects")[0] for line in block.splitlines()]
    assert not any("Always add a TL;DR" in line for line in current), block  # history only
    assert "Drop the TL;DR from now on." in block, block  # the rule that replaced it
