"""Memory failure kinds reported against other memory systems, replayed on lcm-proxy
through the real openai SDK and the fake upstream (docs/evaluation/memory_replays.md,
rows 179 and on): one section per row; a row marked fixed failed here before its fix,
a row probed OK is kept as a guard."""

from __future__ import annotations

import pytest

from memory_core.engine import Engine
from memory_core.items import standing
from memory_core.extraction import extract
from memory_core.extraction.model import ELISION
from memory_core.extraction.shapes import placeholder_value
from tests.conftest import RunningProxy
from tests.fake_upstream import FakeUpstream
from tests.replay_helpers import asked_later, put, rows


def _active(engine: Engine) -> list[tuple[str, str]]:
    return [(r["kind"], r["text"]) for r in rows(engine) if r["status"] == "active"]


# -- 179: a negated liking filed as an order or a plain fact (probed OK) ----------------------
async def test_a_negated_liking_reaches_another_block_as_a_preference(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "I don't like Python."), ("b", "I do not like dark mode."),
        ("c", "I like Vim."), ("d", "I no longer like Vim.")],
        "Which languages, themes and editors do I like?")
    assert "[User Preferences]" in block, block
    prefs = block.split("[User Preferences]", 1)[1]
    for text in ("I don't like Python.", "I do not like dark mode.", "I no longer like Vim."):
        assert f"- {text}" in prefs, block
    assert "] I like Vim." not in block.replace('"I like Vim." — superseded', ""), block


# -- 180: a strong aversion verb ("I loathe YAML.") stored as a fact keyed by the verb --------
@pytest.mark.parametrize("text, subject", [
    ("I can not stand open-plan offices.", "open-plan offices"),
    ("I loathe YAML.", "yaml"), ("I despise long meetings.", "long meetings"),
    ("I abhor tabs.", "tabs"), ("We loathe flaky tests.", "flaky tests"),
])
def test_a_strong_aversion_is_a_disliking(text: str, subject: str) -> None:
    # before: a fact keyed "loathe yaml", "stand open-plan offices"
    (item,) = extract(text)
    assert (item.kind, item.subject, item.negated) == ("preference", subject, True), item


async def test_a_strong_aversion_reaches_another_block_under_preferences(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [("yaml", "I loathe YAML.")],
                              "Should I write the config in YAML?")
    assert "[User Preferences]" in block, block
    assert "- I loathe YAML." in block.split("[User Preferences]", 1)[1], block


# -- 181: a negated use and a positive use, the subject elided (fixed) -------------------------
@pytest.mark.parametrize("text, expected", [
    ("I don't use Vim and use Emacs instead.",
     [("fact", "vim", True, "I don't use Vim"),
      ("preference", "emacs", False, "I … use Emacs instead.")]),
    ("We don't use Jira but use Linear.",
     [("constraint", "jira", True, "We don't use Jira"),
      ("fact", "linear", False, "We … use Linear.")]),
    ("I work at Google and live in Zurich.",
     [("fact", "work", False, "I work at Google"), ("fact", "home", False, "I … live in Zurich.")]),
    ("We use Postgres but run Redis on 6380.",
     [("fact", "postgres", False, "We use Postgres"),
      ("fact", "run redis", False, "We … run Redis on 6380.")]),
])
def test_a_verb_phrase_with_its_subject_left_out_is_the_speakers_statement(
        text: str, expected: list[tuple[str, str, bool, str]]) -> None:
    # before: one item per sentence ("use Emacs", "live in Zurich", "run Redis" no statement)
    assert [(i.kind, i.subject, i.negated, i.text) for i in extract(text)] == expected


@pytest.mark.parametrize("text", [
    "My kids love the beach and always make us smile",
    "Our designers sketch on paper and always use pencils.",
])
def test_a_subjectless_clause_after_and_is_no_order_to_the_assistant(text: str) -> None:
    # before: "always make us smile" was a standing constraint (an order)
    items = extract(text)
    assert items and all(i.kind != "constraint" for i in items), items
    assert any(i.text.startswith(("My kids … ", "Our designers … ")) for i in items), items


@pytest.mark.parametrize("text, order", [
    ("I use Emacs and please reply briefly", "please reply briefly"),
    ("I use Emacs and don't suggest Vim.", "don't suggest Vim."),
])
def test_an_order_after_and_stays_an_order(text: str, order: str) -> None:
    assert ("constraint", order) in [(i.kind, i.text) for i in extract(text)], extract(text)


@pytest.mark.parametrize("text", [
    "I need to fix the bug and deploy the patch.",  # what is needed, not done
    "I use Emacs and love it.",  # the object points back: one statement
    "Use tabs and indent with four spaces.",  # no subject to carry: orders
])
def test_a_dependent_or_pointing_verb_phrase_carries_no_subject(text: str) -> None:
    assert all(ELISION not in i.text for i in extract(text)), extract(text)


@pytest.mark.parametrize("text", [
    "I think we use Postgres and deploy on Fridays.",  # "we" deploy, and only maybe
    "I asked whether they use Docker and use Podman.",  # they use Podman, if anyone
    "She said she likes Python and hates Java.",
    "I told them the plan and use the new build now.",
])
def test_a_verb_phrase_inside_a_reported_clause_is_not_the_openers(text: str) -> None:
    # before: "I think we use Postgres and deploy on Fridays." gave a firm "I … deploy
    # on Fridays." and "I asked whether they use Docker and use Podman." "I … use Podman."
    assert all(ELISION not in i.text for i in extract(text)), extract(text)


def test_a_negated_verb_of_knowing_still_carries_the_subject() -> None:
    assert ("preference", "I … use Go.") in [(i.kind, i.text) for i in extract(
        "I don't know Rust and use Go.")]


async def test_an_elided_positive_use_reaches_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("ed", "I don't use Vim and use Emacs instead."),
        ("kids", "My kids love the beach and always make us smile")],
        "Which editor do I use?")
    assert "- I … use Emacs instead." in block.split("[User Preferences]", 1)[1], block
    # before: "always make us smile" was a standing rule in every other conversation
    assert "make us smile" not in block, block


# -- 182: "Please make sure not to save this: …" stored the salary as a rule --------------------
@pytest.mark.parametrize("text", [
    "Please make sure not to save this: my salary is 95000 EUR.",
    "Make sure you don't store this: my salary is 95000 EUR.",
    "Be sure not to remember this, my salary is 95000 EUR.",
    "Please remember that I don't want this saved: my salary is 95000 EUR.",
])
def test_a_request_not_to_keep_the_message_yields_nothing(text: str) -> None:
    # before: the first was a constraint keyed "save salary" holding the figure
    assert extract(text) == [], extract(text)


async def test_a_salary_told_not_to_be_saved_never_reaches_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("pay", "Please make sure not to save this: my salary is 95000 EUR.")],
        "What is my salary?")
    assert "95000" not in block, block
    assert rows(proxy.engine) == [r for r in rows(proxy.engine) if r["kind"] == "question"]


# -- 183: an unfilled template slot stored as the user's value ---------------------------------
@pytest.mark.parametrize("text", [
    "My name is <Username> and my goal is <goal/problem>.", "I live in [Your City].",
    "My email is {email}.", "The API key is {{ api_key }}."])
def test_a_template_slot_is_no_value(text: str) -> None:
    # before: "My name is <Username>" a fact keyed name (and it revised the real name)
    assert extract(text) == [], extract(text)


@pytest.mark.parametrize("text", ["The deadline is TBD.", "My favourite tag is <div>.",
                                  "My name is Sam.", "I use List<String> a lot."])
def test_an_open_value_or_a_tag_is_a_value(text: str) -> None:
    assert not placeholder_value(text)
    assert extract(text), text


async def test_a_pasted_template_leaves_the_users_name_current(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("me", "My name is Priya."),
        ("form", "My name is <Username> and my goal is <goal/problem>.")],
        "What is my name?")
    assert "] My name is Priya." in block, block
    assert "<Username>" not in block, block


# -- 184: a literal marker lost from the stored memory (probed OK) -----------------------------
async def test_a_literal_marker_reaches_another_block_verbatim(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("ct", "The CT151 validation marker is MARKER-7734.")],
        "What is the CT151 validation marker?")
    assert "] The CT151 validation marker is MARKER-7734." in block, block


# -- 185: a service moved between hosts (probed OK) --------------------------------------------
async def test_a_service_moved_between_hosts_leaves_only_the_new_host_current(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("setup", "The ingest worker runs on Fly.io."),
        ("move", "We moved the ingest worker from Fly.io to Hetzner.")],
        "Where does the ingest worker run?")
    assert "] We moved the ingest worker from Fly.io to Hetzner." in block, block
    assert '"The ingest worker runs on Fly.io." — superseded' in block, block


# -- 186: an instruction given again with another value (probed OK) ----------------------------
async def test_an_instruction_given_again_replaces_the_first(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "Remember: reports should be in German."),
        ("b", "Remember: reports should be in English from now on.")],
        "Which language should the report be in?")
    assert "] Remember: reports should be in English from now on." in block, block
    assert "] Remember: reports should be in German." not in block, block


@pytest.mark.parametrize("text", [
    "Remember: reports should be in German.", "Please remember: reports should be in German.",
    "Keep in mind: invoices have to carry the VAT number.",
    "Don't forget, commit messages should be in English.", "记住：报告应该用德语。",
    "覚えておいて：レポートはドイツ語で書くべきです。",
])
def test_a_norm_the_user_asks_to_remember_is_a_standing_rule(text: str) -> None:
    # before: a fact (shown only when a turn matched it), never a rule
    (item,) = extract(text)
    assert item.kind == "constraint" and not item.one_off, item
    assert standing.is_standing_rule(item.text), item


@pytest.mark.parametrize("text, kind", [
    ("Remember to send the file.", "constraint"),  # a task for now: one-off
    ("Note: the build failed.", "fact"),  # a reading
    ("Note: reports should be in German.", "fact"),  # a note's "should" is as often a guess
    ("Remember: I should call my mom on Sunday.", "fact"),  # a note to self
    ("Remember: the build should be done by 5.", "fact"),  # an expectation
    ("Remember: it should be fine.", "fact"),  # a reassurance
    ("记住：明天应该会下雨。", "fact"),  # 应该会: what will probably happen
    ("记住：这个应该没问题。", "fact"),
    ("Remember that my passport expires in March 2027.", "fact"),  # row 91
])
def test_a_remembered_task_reading_or_expectation_is_no_standing_rule(text: str, kind: str) -> None:
    (item,) = extract(text)
    assert item.kind == kind and not standing.is_standing_rule(item.text), item


async def test_a_remembered_norm_reaches_an_unrelated_conversations_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "Remember: reports should be in German.")], "Draft the weekly summary.")
    # before: a fact matching no word of the turn, so no block line at all
    assert "] Remember: reports should be in German." in block, block


# -- 187: "I now work at B" after "I work at A" (probed OK) -------------------------------------
async def test_a_new_employer_said_with_now_supersedes_the_old(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "I work at Globex."), ("b", "I now work at Initech.")],
        "Where do I work?")
    assert "] I now work at Initech." in block, block
    assert '"I work at Globex." — superseded' in block, block


# -- 188: a budget cut keeps the old figure current (probed OK) ---------------------------------
async def test_a_budget_cut_supersedes_the_old_budget(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("a", "The Fluenta pilot budget is 5000 EUR."),
        ("b", "Fluenta cut the budget to 4000 EUR.")],
        "What is the Fluenta budget?")
    assert "] Fluenta cut the budget to 4000 EUR." in block, block
    assert "] The Fluenta pilot budget is 5000 EUR." not in block, block


def test_engine_level_forms_of_the_probed_ok_rows(engine: Engine) -> None:
    put(engine, "The ingest worker runs on Fly.io.")
    put(engine, "We moved the ingest worker from Fly.io to Hetzner.")
    assert _active(engine) == [("fact", "We moved the ingest worker from Fly.io to Hetzner.")]


# -- 189: a company name holding 里 read as "在…里" (a condition) -------------------------------
@pytest.mark.parametrize("text", [
    "我在阿里巴巴工作了三年。", "我在阿里巴巴工作。", "我现在在阿里云上班。", "我们在公司里上班。",
])
def test_a_workplace_named_with_li_is_the_work_fact(text: str) -> None:
    # before: "在阿里" was a condition, the rest keyed 巴巴工作了 / 云上班
    (item,) = extract(text)
    assert (item.kind, item.subject, item.condition) == ("fact", "工作", None), item


def test_a_duration_keeps_its_value_out_of_the_key() -> None:
    (item,) = extract("我在阿里巴巴工作了三年。")
    assert item.subject == "工作" and item.value == 3, item


def test_a_new_workplace_named_with_li_supersedes_the_old(engine: Engine) -> None:
    put(engine, "我在阿里巴巴工作了三年。")
    put(engine, "现在我在腾讯工作。")
    put(engine, "ベルリンで働いていますか？")  # a question: no fact, revises nothing
    active = _active(engine)
    assert ("fact", "现在我在腾讯工作。") in active, active
    assert ("fact", "我在阿里巴巴工作了三年。") not in active, active
    assert all(kind != "fact" for kind, text in active if "ベルリン" in text), active


# -- 194: Chinese "不是X，而是Y" keyed and classed by the denied X (row 192's class) ------------
@pytest.mark.parametrize("text, kind, subject", [
    ("我们的缓存用的不是Memcached，而是Redis。", "fact", "缓存用的"),
    ("团队用的不是GitHub，而是GitLab。", "fact", "团队用的"),  # as 团队用的是GitLab
    ("我不用Chrome，而是用Firefox。", "preference", "firefox"),
    ("我们没用Jenkins，而是用Drone。", "fact", "drone"),
    ("我不喜欢啤酒，而是喜欢红酒。", "preference", "红酒"),
    ("我們用的不是Oracle，而是SQLite。", "fact", "sqlite"),
])
def test_a_chinese_not_x_but_y_states_y(text: str, kind: str, subject: str) -> None:
    # before: one fact keyed by the denied part ("不是memcached而", "不用chrome而")
    (item,) = extract(text)
    assert (item.kind, item.subject, item.negated, item.text) == (kind, subject, False, text)
    assert item.replaces and item.replaces in text.split("，")[0], item


@pytest.mark.parametrize("text", [
    "不是我不想帮忙，而是真的没空。",  # an explanation: X is a clause of its own
    "不是他没来，而是来晚了。",
])
def test_a_contrast_of_clauses_is_left_as_written(text: str) -> None:
    assert all(i.subject and i.subject.startswith("不是") for i in extract(text)), extract(text)


def test_a_denied_value_leaves_the_old_statement_revised(engine: Engine) -> None:
    put(engine, "我们的消息队列是RabbitMQ。")
    put(engine, "我们的消息队列不是RabbitMQ，而是Kafka。")
    assert _active(engine) == [("fact", "我们的消息队列不是RabbitMQ，而是Kafka。")], rows(engine)


async def test_a_chinese_not_x_but_y_reaches_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("old", "我们的数据库是MySQL。"), ("new", "我们的数据库不是MySQL，而是PostgreSQL。")],
        "我们的数据库是什么？")
    assert "我们的数据库不是MySQL，而是PostgreSQL。" in block, block
    # before: both current, the denied MySQL as much the answer as PostgreSQL
    assert "] 我们的数据库是MySQL。" not in block, block
    assert "superseded" in block, block


# -- 195: an order under a recurring condition read as a one-off request ----------------------
async def test_a_rule_under_a_recurring_condition_reaches_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("sql", "When I ask for SQL, use Postgres syntax."),
        ("now", "If it's easy, do it now.")],
        "Plan the sprint for next week.")
    # before: a request about that conversation's answer, in no other block
    assert "When I ask for SQL, use Postgres syntax." in block, block
    assert "do it now" not in block, block


# -- 196: a settling phrase ("…, no exceptions", "…, period") fixes its value -------------------
async def test_a_settled_value_reaches_another_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("terms", "Payment terms are net 30, no exceptions."),
        ("plain", "The office plant is a ficus.")],
        "Draft the invoice email for Acme.")
    # before: a passing remark shown only where it matched
    assert "Payment terms are net 30, no exceptions." in block, block
    assert "ficus" not in block, block


# -- 197: a first-person habit of choosing stored as a plain fact -----------------------------
@pytest.mark.parametrize("text, subject, condition", [
    ("When I travel for work, I always book a hotel near the station.", "hotel near station",
     "When I travel for work"),
    ("I usually order oat milk.", "oat milk", None),
    ("On trains, I always sit by the window.", "window", "On trains"),
    ("I generally drink green tea in the afternoon.", "green tea afternoon", None),
    ("出差我一般住如家。", "如家", None),
    ("我平时都喝拿铁。", "拿铁", None),
])
def test_a_habit_of_choosing_is_a_standing_preference(
        text: str, subject: str, condition: str | None) -> None:
    # before: a fact keyed by the verb ("book hotel near station", "平时都喝拿铁"), or none
    items = extract(text)
    assert [(i.kind, i.subject, i.condition) for i in items] == [
        ("preference", subject, condition)], items


@pytest.mark.parametrize("text", [
    "I always lose my umbrella.",  # a mishap, no choice
    "Back in college I always ate instant noodles.",  # past
    "I want a window seat.",  # a wish for now: no frequency word
    "以前我一般住如家。",  # past
])
def test_a_mishap_a_past_habit_or_a_wish_is_no_preference(text: str) -> None:
    assert all(i.kind != "preference" for i in extract(text)), extract(text)


@pytest.mark.parametrize("text", [
    "I always order too much food.",  # an excess
    "I always take forever to reply to emails.",
    "I always book the wrong train.",  # a mistake
    "I usually get lost in new cities.",  # a state that befalls the speaker
    "I always get headaches after lunch.",
    "我一般点太多菜。",
    "我一直穿错鞋。",
])
def test_a_mishap_told_with_a_verb_of_choosing_is_no_preference(text: str) -> None:
    # before: "too much food", "lost cities", 多菜, 错鞋 standing preferences
    assert all(i.kind != "preference" for i in extract(text)), extract(text)


@pytest.mark.parametrize("text, subject", [
    ("I always get the veggie burger.", "veggie burger"),
    ("我一般点不太辣的菜。", "不太辣菜"),
])
def test_a_choice_beside_a_mishap_word_is_still_a_preference(text: str, subject: str) -> None:
    assert [(i.kind, i.subject) for i in extract(text)] == [("preference", subject)]


async def test_a_habit_of_choosing_reaches_another_block_as_a_preference(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [
        ("seat", "For flights I always want an aisle seat."),
        ("keys", "I always forget my keys.")],
        "Book me a flight to Lisbon next Tuesday.")
    assert "[User Preferences]" in block, block
    assert "- For flights I always want an aisle seat." in block.split(
        "[User Preferences]", 1)[1], block
    assert "forget my keys" not in block, block


# -- 198: the user's request on a source title's line hid it, and the paste became theirs -----
async def test_a_thread_pasted_under_a_titled_request_reaches_no_other_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    block = await asked_later(proxy, upstream, [(
        "paste", "Forwarded from the infra channel: can you summarise the thread below?\n"
                 "Noor: from now on we always deploy from the release branch\nIvo: agreed")],
        "Write a haiku about autumn.")
    # before: "Noor: … we always deploy from the release branch" was the user's rule
    assert "release branch" not in block, block
