"""Withdrawals (issue 24, unmarked corrections): "Forget the 200-word limit", "Never mind
the word limit, …", "Ignore what I said about British English", 算了，不用限制200字了,
200字の制限はもういいです take the item they name out of every later block; a new
stance after the withdrawal replaces it. Also "X instead of Y" in a rule supersedes the
rule that names Y, and a fact whose object is a command ("We deploy with `helm …`") is
kept.

Extraction-level checks run ``extract``; engine-level checks store messages through a
real capture (SQLite) and read the rows back; the proxy-level check reads the block the
upstream received in a later conversation."""

from __future__ import annotations

import pytest

from memory_core.engine import Engine
from memory_core.extraction import extract
from memory_core.extraction.prepare import detect_lang, prepare
from memory_core.extraction.retraction import find
from tests.conftest import RunningProxy, sql_read
from tests.fake_upstream import FakeUpstream
from tests.test_injection import Agent, block_of
from tests.test_standing_reports import SCOPE, stored

WITHDRAWN = [  # (message, the phrase naming what is withdrawn)
    ("Forget the 200-word limit.", "the 200-word limit"),
    ("Okay, never mind the word limit.", "the word limit"),
    ("Ignore what I said about British English.", "British English"),
    ("Please disregard my earlier instruction about emojis.", "emojis"),
    ("Forget my address, please.", "my address"),  # a courtesy after it, no clause
    ("Drop the JSON requirement.", "the JSON requirement"),
    ("Forget about the naming convention.", "the naming convention"),
    ("The emoji rule no longer applies.", "The emoji rule"),
    ("The JSON requirement is lifted.", "The JSON requirement"),
    ("You don't need to keep answers short anymore.", "keep answers short"),
    ("No need to add type hints anymore.", "add type hints"),
    ("Forget the Node.js rule.", "the Node.js rule"),
    ("Forget the style guide.", "the style guide"),
    ("Scrap the bullet point rule as well.", "the bullet point rule as well"),
    ("Forget the word limit stuff.", "the word limit stuff"),
    ("Drop the rule where you always add a summary.", "the rule where you always add a summary"),
    ("算了，不用限制200字了。", "200字"),
    ("不用再加表情了。", "加表情"),
    ("200字的限制取消了。", "200字的限制"),
    ("取消200字的限制吧。", "200字的限制"),
    ("忘掉之前说的格式要求。", "之前说的格式要求"),
    ("200字の制限はもういいです。", "200字の制限"),
    ("フォーマットの指定はなしでお願いします。", "フォーマットの指定"),
    ("さっき言った敬語のルールは忘れてください。", "敬語のルール"),
    ("You can stop adding emojis.", "adding emojis"),
    ("要約はもう不要です。", "要約"),  # what a rule asked for, then "no more"
    ("不用只限川菜了。", "只限川菜"),
    ("You don't need the ticket ID prefix anymore.", "the ticket ID prefix"),
    ("刚才说不写注释那条作废。", "不写注释"),
    ("さっきの英語の例文の件は忘れてください。", "英語の例文"),
]


@pytest.mark.parametrize(("text", "phrase"), WITHDRAWN)
def test_a_withdrawal_names_what_it_withdraws(text: str, phrase: str) -> None:
    items = extract(text)
    assert [i.kind for i in items] == ["retraction"], items
    assert items[0].replaces == phrase, items


NOT_WITHDRAWN = [
    "Ignore the lint warnings.",  # material at hand, no instruction named
    "Forget it.",
    "Don't forget the word limit.",
    "Never mind, I found it.",
    "If you drop the cap, answers get long.",
    "Ignore the word limit for this answer.",  # an exemption for the work at hand
    "Just this once, forget the style guide rule.",
    "这次不用限制字数了。",
    "今回は制限はなしで。",
    "We mustn't forget that the API timeout is 30 seconds.",
    # a rule word that only qualifies the thing dropped, or a database's constraint:
    # code and material at hand, not an instruction
    "Ignore the style warnings.",
    "Remove the rate limit check from the handler.",
    "Drop the settings table.",
    "Drop the unique constraint on email.",
    "Drop the JSON requirement?",  # asked, not said
    "We can drop the JSON requirement, once the parser is fixed.",  # not yet
    "Forget the word limit if the answer needs a table.",
    "Ignore the 200-word limit, unless I ask for a summary.",
    "算了，不用修改代码了。",  # never mind changing the code: the task at hand
    "把users表的约束去掉吧。",  # drop the users table's constraint: schema work
    # "forget my X" with a clause after it sets X aside for the talk at hand (review rev8)
    "Forget my diet, let's order pizza.",
    "Forget my deadline, the client moved it.",
    "Forget my name, what was the question again?",
]


@pytest.mark.parametrize("text", NOT_WITHDRAWN)
def test_no_withdrawal(text: str) -> None:
    scan = prepare(text)
    assert find(scan, 0, len(scan), detect_lang(scan)) is None
    assert all(i.kind != "retraction" for i in extract(text)), extract(text)


def test_an_assistant_withdraws_nothing() -> None:
    assert extract("Forget the 200-word limit.", speaker="assistant") == []


STANCES = [  # a new value or stance after the withdrawal: a correction quoting both
    ("Actually, scratch the 200-word cap; make it 300 words from now on.", 300.0),
    ("Never mind the word limit, answer as long as you need.", None),
    ("Forget the word limit. Make it 300 words.", 300.0),
    ("Forget what I said about British English — American spelling is fine.", None),
    ("之前说的不超过300字那条取消吧，现在改成500字。", 500.0),
    ("前に言った「300字以内」は取り消します。長くても大丈夫です。", None),
]


@pytest.mark.parametrize(("text", "value"), STANCES)
def test_a_stance_after_a_withdrawal_is_a_correction_that_quotes_it(
        text: str, value: float | None) -> None:
    retraction, *stance = extract(text)
    assert retraction.kind == "retraction", extract(text)
    assert len(stance) == 1 and stance[0].correction, stance
    assert stance[0].text == text.strip() and stance[0].text.startswith(retraction.text)
    assert stance[0].value == value


# -- stored through a capture -----------------------------------------------------------------
RETRACTED = [  # (what was set, how it is withdrawn)
    ("Keep answers under 200 words.", "Forget the 200-word limit."),
    ("Always reply in British English.", "Ignore what I said about British English."),
    ("Never use emojis in replies.", "The emoji rule no longer applies."),
    ("Always add type hints.", "No need to add type hints anymore."),
    ("Always return JSON with key answer.", "Drop the JSON requirement."),
    ("My manager is Dana.", "Forget what I said about Dana."),
    ("回答不要超过200字。", "算了，不用限制200字了。"),
    ("回答は200字以内にしてください。", "200字の制限はもういいです。"),
    ("Only suggest recipes that take under 30 minutes.", "Scratch the 30-minute rule."),
    ("Add an emoji at the end of each message.", "You can stop adding emojis."),
    ("毎回最後に要約をつけてください。", "要約はもう不要です。"),
    ("Also prefix every commit message with the ticket ID.",
     "You don't need the ticket ID prefix anymore."),
]


@pytest.mark.parametrize(("rule", "withdrawal"), RETRACTED)
def test_a_withdrawn_item_is_retracted_and_nothing_is_stored(
        engine: Engine, rule: str, withdrawal: str) -> None:
    rows = stored(engine, [rule, withdrawal])
    assert [(r["text"], r["status"]) for r in rows] == [(rule, "retracted")], rows
    history = sql_read(engine, lambda c: [dict(r) for r in c.execute(
        "SELECT * FROM memory_item_revisions WHERE item_id = ?", (rows[0]["id"],))])
    assert any("withdrawn by the user" in str(h["reason"]) for h in history), history


KEPT = [  # (what was set, what withdraws something else or nothing)
    ("Keep answers under 200 words.", "Forget the 300-word limit."),
    ("Always fix lint warnings before committing.", "Ignore the lint warnings."),
    ("Always fix lint warnings before committing.", "Ignore the lint rule for this file."),
    ("Never use emojis in replies.", "Forget the naming convention."),
    ("My manager is Dana.", "Drop the Dana rule."),  # a fact is withdrawn only as said
    ("コーヒーが好きです。", "コーヒーはもういいです。"),  # a bare "no more" withdraws rules only
    ("Always fix style warnings before committing.", "Ignore the style warnings."),
    ("Always check the rate limit in the handler.",
     "Remove the rate limit check from the handler."),
    ("Always add a unique constraint on email columns.", "Drop the unique constraint on email."),
    ("Always return JSON with key answer.", "Drop the JSON requirement?"),
    ("修改代码后必须运行测试。", "算了，不用修改代码了。"),
    ("Keep the old API endpoints working.", "Forget my old rule."),  # names no rule's content
    ("以后回答都加上表格。", "不用再加表情了。"),  # 加, 表 are in it, 表情 (emoji) is not
    ("Always keep a linear git history.", "Forget the line limit."),  # line is no linear
    ("Always deploy through the portal.", "Forget the port rule."),
    ("这个项目的代码注释一律用英文。", "取消这个限制吧。"),  # 这个 (this) names nothing
    ("users表的email字段必须唯一。", "把users表的约束去掉吧。"),  # a table's constraint
]


@pytest.mark.parametrize(("rule", "other"), KEPT)
def test_an_item_the_withdrawal_does_not_name_stays(engine: Engine, rule: str,
                                                    other: str) -> None:
    rows = stored(engine, [rule, other])
    assert rows[0]["text"] == rule and rows[0]["status"] == "active", rows


def test_of_two_rules_the_one_the_phrase_names_is_withdrawn(engine: Engine) -> None:
    rows = stored(engine, ["Keep lines under 100 characters.",
                           "Always keep a linear git history.", "Forget the line limit."])
    assert [r["status"] for r in rows] == ["retracted", "active"], rows


def test_another_speakers_withdrawal_leaves_the_item(engine: Engine) -> None:
    msgs: list[dict[str, object]] = [
        {"role": "user", "name": "ana", "content": "Keep answers under 200 words."},
        {"role": "assistant", "content": "Noted."},
        {"role": "user", "name": "ben", "content": "Forget the 200-word limit."}]
    for n in (1, 3):
        _, fut = engine.capture_request(SCOPE, f"q{n}", [dict(m) for m in msgs[:n]], {})
        fut.result()
    rows = sql_read(engine, lambda c: [dict(r) for r in c.execute(
        "SELECT * FROM memory_items ORDER BY id")])
    assert [r["status"] for r in rows] == ["active"], rows


REPLACED = [  # (what was set, the withdrawal with a new stance, the kind it keeps)
    ("Keep answers under 200 words.", "Scratch the 200-word cap; make it 300.", "constraint"),
    ("Keep answers under 200 words.",
     "Never mind the word limit, answer as long as you need.", "constraint"),
    ("Always reply in British English.",
     "Forget what I said about British English — American spelling is fine.", "constraint"),
    ("Always return JSON with key answer.", "Drop the JSON requirement. Plain text is fine.",
     "constraint"),
    ("Always reply in British English.",
     "Forget what I said about British English. Use American spelling.", "constraint"),
    ("回答不超过300字。", "之前说的不超过300字那条取消吧，现在改成500字。", "constraint"),
    ("回答は300字以内でお願いします。",
     "前に言った「300字以内」は取り消します。長くても大丈夫です。", "constraint"),
]


@pytest.mark.parametrize(("rule", "withdrawal", "kind"), REPLACED)
def test_a_stance_after_a_withdrawal_supersedes_the_item(
        engine: Engine, rule: str, withdrawal: str, kind: str) -> None:
    rows = stored(engine, [rule, withdrawal])
    assert [(r["status"], r["kind"]) for r in rows] == [("superseded", "constraint"),
                                                        ("active", kind)], rows
    assert rows[1]["supersedes"] == rows[0]["id"] and rows[1]["text"] == withdrawal, rows


UNRELATED = [  # (what was set, a withdrawal then a statement about something else)
    ("Keep answers under 200 words.", "Forget the 200-word limit. We deploy with Argo CD.",
     "We deploy with Argo CD."),
    ("Keep answers under 200 words.", "Forget the word limit, I am vegetarian.",
     "I am vegetarian."),
    ("Keep answers under 200 words.",
     "Forget the 200-word limit. The API timeout is 30 seconds.", "The API timeout is 30 seconds."),
    ("回答不要超过200字。", "算了，不用限制200字了。我是素食者。", "我是素食者。"),
    ("回答は200字以内にしてください。", "200字の制限はもういいです。明日は休みです。",
     "明日は休みです。"),
    ("Keep answers under 200 words.",
     "Forget the 200-word limit. Never use bullet points.", "Never use bullet points."),
    ("Keep answers under 200 words.",
     "Forget the word limit.\nTODO:\n- fix the parser\n\nNever use emojis in replies.",
     "Never use emojis in replies."),
]


@pytest.mark.parametrize(("rule", "message", "fact"), UNRELATED)
def test_a_statement_about_something_else_is_no_stance(
        engine: Engine, rule: str, message: str, fact: str) -> None:
    rows = [r for r in stored(engine, [rule, message]) if r["kind"] != "task"]
    kind = "constraint" if "Never" in fact else "fact"
    assert [(r["text"], r["kind"], r["status"], r["supersedes"]) for r in rows] \
        == [(rule, "constraint", "retracted", None), (fact, kind, "active", None)], rows


def test_a_fact_that_points_back_at_what_was_withdrawn_is_its_stance(engine: Engine) -> None:
    message = "Ignore what I said about the deadline, the client moved it to Friday."
    rows = stored(engine, ["The deadline is March 3.", message])
    assert [(r["status"], r["text"]) for r in rows] == [
        ("superseded", "The deadline is March 3."), ("active", message)], rows


def test_instead_of_in_a_rule_supersedes_the_rule_naming_the_old_command(
        engine: Engine) -> None:
    rows = stored(engine, ["Always run `make lint` before committing.",
                           "From now on, run `make check` instead of `make lint`."])
    assert [r["status"] for r in rows] == ["superseded", "active"], rows
    assert rows[1]["supersedes"] == rows[0]["id"], rows


def test_a_fact_whose_object_is_a_command_is_kept_and_updated(engine: Engine) -> None:
    assert [i.subject for i in extract("We deploy with `helm upgrade --install`.")] == ["deploy"]
    rows = stored(engine, ["We deploy with `helm upgrade --install`.",
                           "We deploy with Argo CD now."])
    assert [r["status"] for r in rows] == ["superseded", "active"], rows


# -- what the upstream sees -------------------------------------------------------------------
async def test_a_withdrawn_rule_leaves_the_block_of_later_conversations(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    first = Agent(proxy, upstream, session="one")
    await first.say("Always reply in British English.")
    await first.say("Keep answers under 200 words.")
    await proxy.settle()
    second = Agent(proxy, upstream, session="two")
    await second.say("Summarise the release notes.")
    block = block_of(second.upstream_last_user())
    assert "British English" in block and "200 words" in block, block
    await second.say("Forget the 200-word limit.")
    await proxy.settle()
    third = Agent(proxy, upstream, session="three")
    await third.say("Summarise the changelog.")
    block = block_of(third.upstream_last_user())
    assert "British English" in block and "200 words" not in block, block


def test_a_question_after_a_withdrawal_replaces_nothing(engine: Engine) -> None:
    items = extract("Forget the word limit. When is the release date?")
    assert [i.kind for i in items] == ["retraction", "question"], items
    assert items[1].text == "When is the release date?"
    rows = stored(engine, ["Keep answers under 200 words.",
                           "Forget the word limit. When is the release date?"])
    assert rows[0]["status"] == "retracted" and rows[0]["superseded_by"] is None, rows


# -- updates that say when they take effect, or that someone changed the value ------------
UPDATED = [  # (the old state, an update without "actually", the subject both keep)
    ("Our staging region is eu-west-1.", "Staging lives in us-east-2 from today.", "staging"),
    ("The release branch is release/2.3.", "The release branch is release/2.4 going forward.",
     "release branch"),
    ("Use 2-space indentation.", "Use 4-space indentation from here on.", "space indentation"),
    ("The budget is 5000 dollars.", "Budget got cut to 3000 dollars.", "budget"),
    ("The standup is at 9:30.", "The standup was pushed to 10:00.", "standup"),
    ("The retry limit is 3.", "The retry limit was raised to 5 starting Monday.", "retry limit"),
    # a tool is keyed by what it is used for, so a switch of tools revises it
    ("We use Jenkins for CI.", "We switched to GitLab CI.", "ci"),
    ("We use Jenkins for CI.", "From today, CI runs on GitLab.", "ci"),
    ("We use Jenkins for CI.", "We no longer use Jenkins.", "jenkins"),
    ("我们用Jenkins做CI。", "CI现在改用GitLab了。", "ci"),
    # "new" names the attribute whose value changed
    ("My phone number is 555-0101.", "My new phone number is 555-0199.", "phone number"),
    ("My phone number is 555-0101.", "New phone number: 555-0199.", "phone number"),
    ("The team lead is Tom.", "Dana is the new team lead.", "team lead"),
    ("Our office is in Berlin.", "Our new office is in Lisbon.", "office"),
    ("The Q3 marketing budget is $40k.", "Finance cut the Q3 marketing budget to $25k.",
     "budget"),
    ("The 2.4 release is planned for March 14.", "We pushed the 2.4 release to March 28.",
     "release"),
    ("接口超时时间设置为 30 秒。", "从明天起接口超时改为 10 秒。", "接口超时"),
    ("私は大阪に住んでいます。", "先月から福岡に住んでいます。", "home"),
    ("I'm on the payments team.", "I switched to the search team this sprint.", "search team"),
    # the new value had been read as the statement's time condition
    ("定例ミーティングは毎週月曜の10時です。", "定例は火曜の14時に変更になりました。", "定例"),
    # a value that became another, a move done
    ("リトライ回数の上限は3回です。", "リトライ回数の上限は5回になりました。", "上限"),
    ("周会在周一上午。", "周会改到周三上午了。", "周会"),
]


@pytest.mark.parametrize(("text", "update"), [
    # someone acted on the value: "… it to <value>" (the attribute is the pronoun's,
    # so only the vector half of supersession can pair it)
    ("We raised it to 5 after the outage.", True),
    ("They cut it to $25k.", True),
    ("We moved it to Thursday.", True),
    # rose by itself to a new value: still the subject's new value (memory_replays row
    # 96; it had been a report left beside the old value as a conflict to ask about),
    # unless the clause makes it a passing reading
    ("Traffic increased to 5k rps.", True),
    ("Traffic increased to 5k rps during the load test.", False),
    ("Please set it to 5.", False),  # a request, not a change made
    ("Cut it to 200 words.", False),
    ("I set it to 5 minutes yesterday.", True),
    ("我们这周的会议改到周四下午2点。", False),  # 改到 without 了: not said done
    ("建议你把重试次数调到5次。", False),  # a suggestion
])
def test_a_change_someone_made_is_an_update(text: str, update: bool) -> None:
    assert [i.correction for i in extract(text)] == [update], extract(text)


@pytest.mark.parametrize("text", [
    # the doer form ("we/I … it to <value>") and the new verbs are checked for what
    # makes a change not done, as "switched to" is: a condition, a negation
    "When I set it to 5 minutes, the job times out.",
    "When we set it to 5 retries the tests fail.",
    "If they reduced it to 20 GB, the cache would thrash.",
    "We haven't dropped it to 60 rpm yet.",
    "Nobody changed it to 60 rpm.",
    # になりました after no value: a state or a courtesy, not a value that changed
    "大変お世話になりました。",
    "とても勉強になりました。",
    "テストを実行したらエラーになりました。",
    "接続がタイムアウトになりました。",
    "APIを呼ぶと500エラーになりました。",
    "もし上限が5回になりましたら教えてください。",  # a condition (…たら)
    # 改到 whose 了 is not "done": how far the editing got, a request, a judgement
    "我代码改到一半了。",
    "昨天我改到很晚了。",
    "请把超时改到30秒就好了。",
    "把重试次数改到5次就可以了。",
    "会议改到周四的话就来不及了。",
    "例会挪到三点的话我得请假。",  # a move to a clock time, supposed
])
def test_a_change_not_made_to_a_value_is_no_update(text: str) -> None:
    assert not any(i.correction for i in extract(text)), extract(text)


@pytest.mark.parametrize("text", [
    "上限は8万円になりました。",
    "タイムアウトは500ミリ秒になりました。",
    "締め切りは金曜日になりました。",
    "会议改到下周一了。",
    "超时改到30秒了。",
])
def test_a_value_that_became_another_is_still_an_update(text: str) -> None:
    assert any(i.correction for i in extract(text)), extract(text)


@pytest.mark.parametrize(("old", "new", "subject"), UPDATED)
def test_an_update_that_says_when_it_takes_effect_supersedes(
        engine: Engine, old: str, new: str, subject: str) -> None:
    rows = stored(engine, [old, new])
    assert [r["status"] for r in rows] == ["superseded", "active"], rows
    assert rows[1]["supersedes"] == rows[0]["id"] and subject in str(rows[1]["subject"]), rows


NO_UPDATE = [
    "Team decision from today's sync: we're dropping IE11 support.",  # a sync, not a date
    "The queue depth increased to 5000 messages while the consumer was down.",  # a reading
    "The budget will be cut to 3000 dollars.",  # a plan
    "If the standup gets pushed to 10:00, I'll miss it.",
    "I like the new design.",  # an opinion of something new, not a changed value
    "I bought a new car.",
    "Check the new logs.",
    "I just pushed to main.",  # git: no value changed
    "We pushed to production yesterday.",
    "He was raised to believe in hard work.",
    "Our designer Dana is starting Monday.",  # she starts: no date a value takes effect
    "The sprint starting Monday is about billing.",  # names the sprint
    "Copy the logs from today into the ticket.",
    "The deadline for the draft from next sprint is March 10.",
]


@pytest.mark.parametrize("text", NO_UPDATE)
def test_no_update(text: str) -> None:
    assert not any(i.correction for i in extract(text)), extract(text)


KEPT_BESIDE = [  # (a standing item, a later statement that changes no value of it)
    ("Never push directly to main.", "I just pushed to main."),
    ("We never push to production on Fridays.", "We pushed to production yesterday."),
    ("Our designer is Tom.", "Our designer Dana is starting Monday."),
    ("The current sprint is about payments.", "The sprint starting Monday is about billing."),
    ("The deadline is March 3.", "The deadline for the draft from next sprint is March 10."),
]


@pytest.mark.parametrize(("old", "new"), KEPT_BESIDE)
def test_a_statement_that_changes_no_value_supersedes_nothing(
        engine: Engine, old: str, new: str) -> None:
    rows = stored(engine, [old, new])
    assert (rows[0]["text"], rows[0]["status"]) == (old, "active"), rows


@pytest.mark.parametrize(("text", "subject"), [
    ("We use Jenkins for CI.", "ci"),
    ("We use Redis for the session cache.", "session cache"),
    ("We use Postgres for fun.", "postgres"),
    ("We use Vim for faster edits.", "vim"),
    ("我们用Redis来做缓存。", "缓存"),
])
def test_a_tool_is_keyed_by_its_role(text: str, subject: str) -> None:
    assert [i.subject for i in extract(text)] == [subject], extract(text)


async def test_the_withdrawal_turn_itself_no_longer_carries_the_rule(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    agent = Agent(proxy, upstream, session="one")
    await agent.say("Keep answers under 200 words.")
    await agent.say("Always reply in British English.")
    await proxy.settle()
    await agent.say("Summarise the release notes.")
    assert "200 words" in block_of(agent.upstream_last_user())
    await agent.say("Forget the 200-word limit.")
    block = block_of(agent.upstream_last_user())
    assert "British English" in block and "200 words" not in block, block


@pytest.mark.parametrize("update", ["The DB timeout is 45 seconds now.",
                                    "The DB timeout is 45 seconds going forward.",
                                    "Actually, the DB timeout is 45 seconds."])
def test_a_sibling_attribute_is_not_what_an_update_revises(engine: Engine, update: str) -> None:
    rows = stored(engine, ["The API timeout is 30 seconds.", update])
    assert [r["status"] for r in rows] == ["active", "active"], rows


@pytest.mark.parametrize(("first", "update"), [
    ("测试环境的 Java 版本是 17。", "生产环境的 Java 版本现在是 21。"),
    ("测试环境的数据库是 MySQL 5.7。", "生产环境的数据库现在是 MySQL 8.0。"),
    ("APIのタイムアウトは30秒です。", "DBのタイムアウトは今は60秒です。"),
])
def test_a_chinese_or_japanese_sibling_attribute_is_not_what_an_update_revises(
        engine: Engine, first: str, update: str) -> None:
    rows = stored(engine, [first, update])
    assert [r["status"] for r in rows] == ["active", "active"], rows


@pytest.mark.parametrize(("first", "update"), [
    ("测试环境的 Java 版本是 17。", "测试环境的 Java 版本现在是 21。"),
    ("APIのタイムアウトは30秒です。", "APIのタイムアウトは今は60秒です。"),
])
def test_the_same_chinese_or_japanese_attribute_is_still_revised(
        engine: Engine, first: str, update: str) -> None:
    rows = stored(engine, [first, update])
    assert [r["status"] for r in rows] == ["superseded", "active"], rows


@pytest.mark.parametrize(("text", "kind", "subject"), [
    ("例会在周二下午三点。", "fact", "例会"),  # 下午 is the afternoon, not 在…下
    ("每周的例会定在周二下午三点。", "fact", "每周例会"),  # 每 opens the subject
    ("周会在周一。", "fact", "周会"),  # 会 of a meeting is no modal
    ("团队用飞书沟通。", "fact", "沟通"),  # a tool keyed by what it is used for
    ("回复请用繁体中文。", "constraint", "回复"),  # a topic, 请 and an order
    ("以后回复请用简体中文。", "constraint", "回复"),
])
def test_chinese_statements_the_rules_stored_nothing_for(text: str, kind: str,
                                                         subject: str) -> None:
    assert [(i.kind, i.subject) for i in extract(text)] == [(kind, subject)], extract(text)


@pytest.mark.parametrize("text", ["这个请用英文写。", "麻烦请用英文。", "请用飞书沟通。",
                                  "是的，好的。"])
def test_chinese_requests_about_the_work_at_hand_stay_out(text: str) -> None:
    assert extract(text) == [], extract(text)


def test_a_chinese_meeting_moved_replaces_its_time(engine: Engine) -> None:
    rows = stored(engine, ["每周的例会定在周二下午三点。", "例会改成每周三上午十点了。"])
    assert [r["status"] for r in rows] == ["superseded", "active"], rows


@pytest.mark.parametrize(("text", "subject"), [
    ("我们用 Postgres 存订单。", "postgres存订单"),  # the cap cut "postgres" to "ostgres"
    ("我们用 Postgresql 存订单。", "postgresql存订单"),
    ("我们用 MySQL 存用户。", "mysql存用户"),
])
def test_a_latin_name_in_a_chinese_key_is_kept_whole(text: str, subject: str) -> None:
    assert [i.subject for i in extract(text)] == [subject], extract(text)


@pytest.mark.parametrize(("text", "update"), [
    ("4月からSREチームに異動になりました。", True),  # a change decided, no value
    ("会議は来週に延期になりました。", True),
    ("大変お世話になりました。", False),
])
def test_a_japanese_change_decided_is_an_update(text: str, update: bool) -> None:
    assert any(i.correction for i in extract(text)) is update, extract(text)
