"""Unit tests of deterministic extraction: every rule, positive and negative, in en/zh/ja."""

from __future__ import annotations

import dataclasses
import doctest
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memory_core import extraction
from memory_core.extraction import KINDS, TASK_LABELS, Extracted, extract
from memory_core.extraction.model import ELISION
from memory_core.extraction.prepare import MASK, detect_lang, prepare
from memory_core.extraction.quantity import find_quantities, parse_cjk_numeral
from memory_core.extraction.segment import segment


def one(text: str, speaker: str = "user") -> Extracted:
    items = extract(text, speaker=speaker)
    assert len(items) == 1, items
    return items[0]


def kinds(text: str, speaker: str = "user") -> list[str]:
    return [i.kind for i in extract(text, speaker=speaker)]


# --- the interface ------------------------------------------------------------------

def test_package_doctest() -> None:
    assert doctest.testmod(extraction).failed == 0


def test_public_names() -> None:
    assert set(extraction.__all__) == {"KINDS", "LANGS", "TASK_LABELS", "Extracted", "extract"}


def test_extracted_is_frozen_with_the_agreed_fields() -> None:
    names = [f.name for f in dataclasses.fields(Extracted)]
    assert names == ["kind", "text", "subject", "value", "value_text", "unit", "condition",
                     "correction", "task_label", "lang", "negated", "label", "loose",
                     "replaces", "replacement", "tentative", "one_off", "lasting", "said",
                     "local", "topic", "dated", "every", "edit", "quoted"]
    item = one("The staging DB is on port 5433.")
    with pytest.raises(dataclasses.FrozenInstanceError):
        item.kind = "decision"  # type: ignore[misc]


def test_empty_and_other_roles_yield_nothing() -> None:
    assert extract("") == []
    assert extract("   \n\t") == []
    assert extract("The port is 5433.", speaker="tool") == []
    assert extract("The port is 5433.", speaker="system") == []


def test_same_input_same_output() -> None:
    text = "The API timeout is 30 s when offline. 我们的预算是5000元。締め切りは金曜日です。"
    assert extract(text) == extract(text)


# --- facts ----------------------------------------------------------------------------

@pytest.mark.parametrize(("text", "subject", "value", "unit", "lang"), [
    ("The staging DB is on port 5433.", "staging db port", 5433, None, "en"),
    ("Our budget for the Kyoto trip is $1,200.", "kyoto trip budget", 1200, "USD", "en"),
    ("The nightly backup takes about 40 minutes.", "nightly backup", 40, "min", "en"),
    ("我们的预算是5000元。", "预算", 5000, "CNY", "zh"),
    ("數據庫端口是5433。", "数据库端口", 5433, None, "zh"),
    ("データベースのポートは5433です。", "データベースポート", 5433, None, "ja"),
    ("締め切りは金曜日です。", "締め切り", None, None, "ja"),
])
def test_fact(text: str, subject: str, value: float | None, unit: str | None, lang: str) -> None:
    item = one(text)
    got = (item.kind, item.subject, item.value, item.unit, item.lang)
    assert got == ("fact", subject, value, unit, lang)
    assert item.text == text and not item.correction


@pytest.mark.parametrize("text", [
    "It rained all day yesterday.",      # no subject, no number: not a memory
    "I agree.",
    "That's from the old README, ignore it.",
    "我觉得很奇怪。",
    "テストを追加しました。",               # assistant-ish status, no topic or number
])
def test_statements_without_subject_or_number_are_dropped(text: str) -> None:
    assert extract(text) == []


@pytest.mark.parametrize(("text", "subject"), [
    ("Dana's my manager.", "dana"),
    ("Priya's our tech lead now.", "priya tech lead"),
    ("The build server's the bottleneck.", "build server"),
    ("My manager's a morning person.", "manager"),
])
def test_a_name_contracted_with_is_before_a_determiner_is_a_fact(text: str, subject: str) -> None:
    item = one(text)
    spelled_out = one(text.replace("'s ", " is ", 1))
    assert (item.kind, item.subject) == ("fact", subject)
    assert (spelled_out.kind, spelled_out.subject, spelled_out.correction) == (
        item.kind, item.subject, item.correction)


@pytest.mark.parametrize(("text", "subject"), [
    ("I relocated from Berlin to Lisbon.", "home"),
    ("I moved from Berlin to Lisbon with my family.", "home"),
    ("I moved back from New York to Lisbon last year.", "home"),
    ("I moved to Lisbon for work last year.", "home"),  # a purpose, not a tool's
    ("I relocated to Austin for my wife's job.", "home"),
    ("我从柏林搬到了里斯本。", "home"),
    ("I moved from Python to Go for this service.", "service"),  # a tool, for a purpose
    ("I moved to Go for the backend.", "backend"),
    ("I relocated to Lisbon for the summer.", "summer"),  # a stay, no move of home
    # with no word of dwelling, "moved from X to Y" tells of a tool, an employer, a team
    ("I moved from Jira to Linear last month.", "linear"),
    ("I moved from VS Code to Neovim.", "neovim"),
    ("I moved from Google to Stripe in March.", "stripe"),
])
def test_a_move_from_one_place_to_another_is_where_the_speaker_lives(text: str,
                                                                      subject: str) -> None:
    assert one(text).subject == subject


@pytest.mark.parametrize("text", ["Dana's not my manager.", "Dana's still my manager.",
                                  "Dana's also my manager.", "Dana's really a fan of Rust."])
def test_a_contracted_is_before_an_adverb_reads_as_spelled_out(text: str) -> None:
    spelled_out = text.replace("'s ", " is ", 1)
    assert [(i.kind, i.subject) for i in extract(text)] == [
        (i.kind, i.subject) for i in extract(spelled_out)] == [("fact", "dana")]


def test_a_possessive_is_not_a_contracted_is() -> None:
    # keyed as "the car of Dana" is: the possessive's "'s" is dropped, its noun kept
    assert one("Dana's car is red.").subject == "dana car"
    assert extract("Dana's team.") == []


def test_first_person_facts() -> None:
    assert one("I'm allergic to shellfish.").subject == "shellfish allergy"
    assert one("我对花生过敏。").subject == "花生过敏"
    assert one("私は東京に住んでいます。").kind == "fact"


def test_reported_speech_is_a_fact_never_a_constraint() -> None:
    for text in ("My manager said we should never deploy on Fridays.",
                 "项目经理说周末不要发布。",
                 "部長が金曜日にはデプロイしないでと言っていました。"):
        assert kinds(text) == ["fact"], text


# --- numbers, units, conditions ------------------------------------------------------

@pytest.mark.parametrize(("text", "value", "value_text", "unit"), [
    ("Retry 3 times.", 3, "3", "times"),
    ("max 500 MB", 500, "500", "MB"),
    ("Use port 8080.", 8080, "8080", None),
    ("版本 3.2 已经发布了。", 3.2, "3.2", None),
    ("Costs must stay below 5% of revenue.", 5, "5", "%"),
    ("The trip costs $1,200.", 1200, "1,200", "USD"),
    ("The service handles 2.5k req/s.", 2500, "2.5k", "req/s"),
    ("The rate limit is 100 requests per minute.", 100, "100", "req/min"),
    ("重试三次，每次间隔2秒。", 3, "三", "times"),
    ("超时时间是３０秒。", 30, "30", "s"),               # full-width digits folded
    ("予算は一人5万円までです。", 50000, "5万", "JPY"),   # 一人 is the denominator
    ("このAPIのレート制限は1分あたり100リクエストです。", 100, "100", "req/min"),
    ("The context window is 8k tokens.", 8000, "8k", "tokens"),
    ("The server room must stay below 25°C.", 25, "25", "°C"),
    ("We're a team of four people.", 4, "four", "people"),
])
def test_numbers_with_units(text: str, value: float, value_text: str, unit: str | None) -> None:
    item = one(text)
    assert (item.value, item.value_text, item.unit) == (value, value_text, unit)


@pytest.mark.parametrize("text", [
    "The demo is on Thursday at 2pm Berlin time.",
    "The meeting is on March 3rd at 11:30.",
    "Our prod cluster is in eu-west-1 with H100s.",
    "会议改到3月10日下午3点。",
    "The release is planned for 2025.",
])
def test_dates_times_and_identifiers_are_not_values(text: str) -> None:
    assert all(i.value is None for i in extract(text))


@pytest.mark.parametrize(("text", "condition"), [
    ("The API timeout is 30 s when offline.", "when offline"),
    ("Max upload size is 500 MB in production.", "in production"),
    ("If the cache is cold, the timeout is 60 s.", "If the cache is cold"),
    ("Memory limit is 512 MB unless the job is a batch export.",
     "unless the job is a batch export"),
    ("离线时超时是60秒。", "离线时"),
    ("生产环境下内存限制是1GB。", "生产环境下"),
    ("オフラインの場合はタイムアウトが60秒です。", "オフラインの場合"),
    ("最大アップロードサイズは本番環境では500MBです。", "本番環境では"),
])
def test_condition(text: str, condition: str) -> None:
    item = one(text)
    assert item.condition == condition
    assert item.value is not None


def test_one_sentence_two_values_two_items_with_one_subject() -> None:
    items = extract("The cache TTL is 10 minutes in prod, 1 minute in dev.")
    assert [(i.subject, i.value, i.unit, i.condition) for i in items] == [
        ("cache ttl", 10, "min", "in prod"), ("cache ttl", 1, "min", "in dev")]
    zh = extract("API超时是30秒，离线时是60秒。")
    assert [(i.subject, i.value, i.condition) for i in zh] == [
        ("api超时", 30, None), ("api超时", 60, "离线时")]
    ja = extract("APIのタイムアウトは30秒です。オフラインの場合は60秒です。")
    assert [(i.subject, i.value, i.condition) for i in ja] == [
        ("apiタイムアウト", 30, None), ("apiタイムアウト", 60, "オフラインの場合")]


@pytest.mark.parametrize(("text", "subject", "condition"), [
    ("While a sale is running, the catalogue cache TTL is 100 seconds.", "catalogue cache ttl",
     "While a sale is running"),
    ("When the cache is cold, the first request takes 900 ms.", "first request",
     "When the cache is cold"),
    ("For long-polling clients, the gateway timeout is 280 s.", "gateway timeout",
     "For long-polling clients"),
    ("在大促期间，商品缓存的TTL是100秒。", "商品缓存ttl", "在大促期间"),
    ("促销的时候，商品缓存的TTL是100秒。", "商品缓存ttl", "促销的时候"),
    ("高负载下，接口超时是5秒。", "接口超时", "高负载下"),
    ("离线时，API超时是60秒。", "api超时", "离线时"),
    ("セールの時は、キャッシュのTTLは100秒です。", "キャッシュttl", "セールの時"),
    ("オフラインの場合、タイムアウトは60秒です。", "タイムアウト", "オフラインの場合"),
])
def test_fronted_condition_scopes_the_main_clause(text: str, subject: str,
                                                  condition: str) -> None:
    item = one(text)
    assert (item.subject, item.condition) == (subject, condition)
    assert item.value is not None and item.text == text  # the condition stays quoted


@pytest.mark.parametrize(("text", "subject"), [
    ("For example, the timeout is 30 s.", "timeout"),
    ("In short, the cache TTL is 60 s.", "cache ttl"),
    ("Update: the EU tenants will live in eu-central-1 after all.", None),
])
def test_discourse_markers_are_not_conditions(text: str, subject: str | None) -> None:
    item = one(text)
    assert item.condition is None
    if subject:
        assert item.subject == subject


def test_an_amount_after_after_is_the_value_not_a_condition() -> None:
    item = one("The billing queue retries after 500 s.")
    assert (item.subject, item.value, item.unit, item.condition) == (
        "billing queue", 500, "s", None)
    later = one("Messages become visible again after 500 s if nobody acks them.")
    assert (later.value, later.condition) == (500, "if nobody acks them")
    assert one("Deploys run after the nightly backup finishes.").condition == (
        "after the nightly backup finishes")


def test_a_setting_word_that_modifies_a_noun_is_not_a_condition() -> None:
    assert one("No, it's 22 nodes in the staging cluster.").condition is None
    assert one("The timeout is 30 s in the staging environment.").condition == (
        "in the staging environment")
    assert one("In production the pool is capped at 55 connections.").condition == (
        "In production")
    assert one("Memory is 2 GB on the weekend.").condition == "on the weekend"


@pytest.mark.parametrize(("text", "subject"), [
    ("Access tokens expire after 30 minutes unless the user ticks remember-me.",
     "access tokens"),
    ("The reporting scripts are written in Scala.", "reporting scripts"),
    ("Correction: webhook deliveries are retried 15 times.", "webhook deliveries"),
    ("The build fails on ARM runners.", "build"),
    ("The payments service takes 3 s.", "payments service"),
])
def test_a_plural_noun_before_its_verb_is_part_of_the_subject(text: str, subject: str) -> None:
    assert one(text).subject == subject


def test_a_chinese_remark_then_a_request_keeps_only_the_remark() -> None:
    items = extract("这个导出任务的测试在CI上时好时坏，帮我查查billing/export.py里的逻辑。")
    assert [(i.kind, i.subject, i.condition) for i in items] == [
        ("fact", "导出任务测试", None)]  # 时好时坏 is an idiom, not a 时 condition
    assert one("在CI上时，测试要跑10分钟。").condition == "在CI上时"
    assert len(extract("数据库端口是5433，请记住。")) == 1


def test_a_leading_for_does_not_start_the_subject() -> None:
    item = one("Correction: make that 150 s for long-polling clients at the gateway.")
    assert (item.subject, item.value, item.correction) == ("long-polling", 150, True)
    assert one("The timeout for the API is 30 s.").subject == "api timeout"


def test_while_inside_a_sentence_still_joins_two_statements() -> None:
    assert [i.subject for i in extract("The API is fast while the DB is slow.")] == [
        "api", "db"]


def test_quantity_parser_details() -> None:
    assert parse_cjk_numeral("三十") == 30
    assert parse_cjk_numeral("两千五百") == 2500
    assert parse_cjk_numeral("一二") is None
    scan = prepare("retry 3x, not 5; v2.3.1; localhost:5433")
    found = [(q.value, q.value_text, q.unit, q.kind) for q in find_quantities(scan)]
    assert found == [(3, "3", "times", "measure"), (None, "2.3.1", None, "version"),
                     (5433, "5433", None, "port")]


# --- corrections ---------------------------------------------------------------------

@pytest.mark.parametrize("messages", [
    ("The API timeout is 30 s.", "Actually, the API timeout is 45 s.",
     "Correction: the API timeout is 60 seconds."),
    ("API超时是30秒。", "更正：API超时是45秒。", "不对，API超时是60秒。"),
    ("APIのタイムアウトは30秒です。", "訂正：APIのタイムアウトは45秒です。",
     "実は、APIのタイムアウトは60秒です。"),
])
def test_correction_chain_keeps_the_subject(messages: tuple[str, str, str]) -> None:
    first, second, third = (one(m) for m in messages)
    assert [i.value for i in (first, second, third)] == [30, 45, 60]
    assert [i.correction for i in (first, second, third)] == [False, True, True]
    assert first.subject == second.subject == third.subject
    assert {i.unit for i in (first, second, third)} == {"s"}


@pytest.mark.parametrize(("text", "value"), [
    ("No, it's 150.", 150),
    ("I meant 200 requests per minute, sorry.", 200),
    ("Sorry, typo - I meant $900.", 900),
    ("不对，是3500元。", 3500),
    ("5433じゃなくて6543です。", 6543),
    ("いや、やっぱり7人です。", 7),
])
def test_bare_corrections_carry_the_new_value(text: str, value: float) -> None:
    item = one(text)
    assert item.correction and item.value == value and item.subject is None


def test_correction_cue_alone_flags_the_next_sentence() -> None:
    items = extract("訂正です。締め切りは来週の月曜日です。")
    assert [(i.subject, i.correction) for i in items] == [("締め切り", True)]
    assert one("Wait, I got that wrong: the meeting is at 11:00, not 11:30.").correction


@pytest.mark.parametrize("text", [
    "small update about me: I joined the platform team last week",
    "Quick update: we moved the standup to 10am.",
    "A short update about us: we adopted a cat.",
    "Little update on me: I started a new job at Stripe.",
])
def test_an_update_lead_about_the_speaker_flags_the_statement(text: str) -> None:
    """"Update:" led a correction; "small update about me:" (an adjective, "about me")
    did not, so a team change told that way kept the old team current."""
    items = extract(text)
    assert items and all(i.correction for i in items), items


def test_an_update_about_something_else_is_no_lead() -> None:
    assert not any(i.correction for i in extract("Quick update on the build: it passed."))
    assert not any(i.correction for i in extract("A quick note: the build passed."))


@pytest.mark.parametrize("text", [
    "The timeout is actually fine as it is at 30 s.",
    "No emojis in commit messages.",
    "Never store API keys in the repo, use the vault instead.",
])
def test_not_corrections(text: str) -> None:
    assert not any(i.correction for i in extract(text))


@pytest.mark.parametrize("text", ["Per Lena: the port is 8080.", "Per Lena, the port is 8080.",
                                  "Lena says: the port is 8080.",
                                  "According to Lena, the port is 8080."])
def test_who_said_it_before_a_colon_is_not_part_of_the_subject(text: str) -> None:
    assert one(text).subject == "port"


def test_a_scope_lead_is_no_topic() -> None:
    """"For this task:" scopes the statement to the conversation (``local``); it names
    no thing to key it under."""
    item = one("For this task: the bucket is logs-eu.")
    assert item.subject == "bucket" and item.local and item.topic is None


def test_a_change_named_after_a_value_revises_up_to_it() -> None:
    """The clauses up to "after the restart" revise; one after it ("before it was
    60 %") does not, and an order's "after the deploy" stays its condition."""
    items = extract("The cache hit rate is 95% after the restart, before it was 60%.")
    assert [(i.value, i.correction, i.condition) for i in items] == [
        (95.0, True, None), (60.0, False, "before it was 60%")]
    order = one("Run the migrations after the deploy.")
    assert order.kind == "constraint" and order.condition == "after the deploy"
    assert [(i.subject, i.condition) for i in extract(
        "With 3 replicas, the failover time is 20 s.")] == [("failover time", "With 3 replicas")]


@pytest.mark.parametrize(("text", "subjects"), [
    ("Staging: the port is 5432. Prod: the port is 6543.", ["staging port", "prod port"]),
    ("Regarding the billing job, the timeout is 30 s.", ["billing job timeout"]),
    ("Also, about the mail relay, the retry limit is 5.", ["mail relay retry limit"]),
    ("For the API: the timeout is 30 s.", ["api timeout"]),
    ("Status of the cache layer on ap-south: we run 60 nodes, the pool size is 208 and"
     " the heartbeat is 573 ms.", ["cache layer ap-south run nodes",
                                   "cache layer ap-south pool size",
                                   "cache layer ap-south heartbeat"]),
    ("We measured the search index on staging: the batch size is 489.",
     ["search index staging batch size"]),
    # a bare name reads as a topic (it looks like "Staging:"), unless its line is the
    # speaker's own ("Lena: I moved …")
    ("Lena: the port is 8080.", ["lena port"]),
    ("Dana: my manager is Tom.", ["manager"]),
    # no topic: a time, a discourse word, a clause, a scope of rules
    ("Yesterday: the build took 40 minutes.", ["build"]),  # was "yesterday build took"
    ("Also, the port is 8080.", ["port"]),
    ("Heads up: the port is 8080.", ["port"]),
    ("Oops: the port is 8080.", ["port"]),
    ("Staging: the port is 5432, prod: the port is 6543.", ["staging port", "prod port"]),
    ("Option A: the cost is 500 USD. Option B: the cost is 800 USD.",
     ["option a cost", "option b cost"]),
    # greetings, the ones spoken to, labels, amounts and times name no thing
    ("Hey Caroline: the meeting room is B12.", ["meeting room"]),
    ("For reference: the port is 8080.", ["port"]),
    ("Root cause: the pool size is 10.", ["pool size"]),
    ("About 200 ms, the p95 latency is fine.", ["p95 latency"]),
    ("About 3 weeks ago, we moved to 3 nodes.", ["moved"]),
    ("I was wrong again: the port is 8081.", ["port"]),
    ("The reason is simple: the port is 8080.", ["reason port"]),
    ("In this repo, we never push to main.", ["push main"]),
])
def test_a_topic_lead_keys_the_statements_after_it(text: str, subjects: list[str]) -> None:
    """Sibling statements under two topics ("Staging:" / "Prod:") are two subjects, not
    two values of one (issue 24, invented conflicts); each item quotes its topic."""
    items = extract(text)
    assert [i.subject for i in items] == subjects
    sentences = [s + "." for s in text.split(". ")]
    for item in items:  # each quotes its topic, and its clause after an ellipsis
        lead, _, clause = item.text.rpartition(ELISION)
        assert any(clause in s and (not lead or s.startswith(lead)) for s in sentences), \
            item.text
        assert item.topic is None or item.topic.split()[0] in item.text.lower()


# --- decisions -----------------------------------------------------------------------

@pytest.mark.parametrize(("text", "subject"), [
    ("We'll use Postgres for the main database.", "main database"),
    ("Let's go with FastAPI for the backend.", "backend"),
    ("We decided to drop Python 3.9 support.", "drop python support"),
    ("决定用Postgres做主数据库。", "主数据库"),
    ("那就用Vue吧。", "vue"),
    ("Postgresにしましょう。", "postgres"),
    ("ログレベルはINFOにしましょう。", "ログレベル"),
    ("We will deploy the EU tenants to eu-central-1.", "eu tenants"),
    ("Sounds good, let's do the Redis Streams approach.", "redis streams approach"),
    ("Let's take the blue-green option for the rollout.", "rollout"),
    ("We're staying with Jenkins.", "jenkins"),
    ("Scratch that, we're staying on Python 3.11 for now.", "python"),
])
def test_decision(text: str, subject: str) -> None:
    item = one(text)
    assert (item.kind, item.subject) == ("decision", subject)


@pytest.mark.parametrize("text", [
    "Let's look at the failing test first.",
    "Cool, let's do that.",
    "テストを書きましょう。",
    "We will see.",
    "We're staying on the call.",  # staying somewhere: no choice of a named thing
    "I'm staying with my parents this week.",
    "Let's do a quick check of the logs.",
])
def test_not_decisions(text: str) -> None:
    assert "decision" not in kinds(text)


# --- constraints ---------------------------------------------------------------------

@pytest.mark.parametrize(("text", "negated", "subject_part"), [
    ("Never push directly to main.", True, "push"),
    ("Always run the tests before merging.", False, "run tests"),
    ("You must keep the public API backwards compatible.", False, "public api"),
    ("Make sure every migration has a down script.", False, "migration"),
    ("No emojis in commit messages.", True, "emojis"),
    ("Don't use tabs.", True, "tabs"),
    ("Keep each PR under 400 lines.", False, "pr"),
    ("必须先跑测试再合并代码。", False, "测试"),
    ("不要直接推到main分支。", True, "main分支"),
    ("禁止在日志里打印用户密码。", True, "密码"),
    ("務必在上線前備份資料庫。", False, "备份"),
    ("必ずテストを実行してからマージしてください。", False, "テスト"),
    ("mainブランチに直接プッシュしないでください。", True, "mainブランチ"),
    ("パスワードをログに出力することは禁止です。", True, "パスワード"),
])
def test_constraint(text: str, negated: bool, subject_part: str) -> None:
    item = one(text)
    assert item.kind == "constraint" and item.negated is negated
    assert item.subject is not None and subject_part in item.subject


@pytest.mark.parametrize("text", [
    "Don't worry about it.",
    "I never eat breakfast before 10.",
    "The build never finishes on ARM runners.",
    "Please fix the login bug.",
    "我不能参加周五的会。",
    "確認してください。",
])
def test_not_constraints(text: str) -> None:
    assert "constraint" not in kinds(text)


# --- preferences ---------------------------------------------------------------------

@pytest.mark.parametrize(("text", "subject", "negated"), [
    ("I prefer tabs over spaces in Python files.", "tabs", False),
    ("I'd rather have short answers with code than long explanations.", "short answers code",
     False),
    ("I hate long meetings.", "long meetings", True),
    ("Book a window seat if possible.", "book window seat", False),
    ("我更喜欢用中文回答。", "中文回答", False),
    ("我不喜欢太长的回复。", "长回复", True),
    ("我比較喜歡靠窗的座位。", "靠窗座位", False),
    ("私は和食が好きです。", "和食", False),
    ("辛い料理は苦手です。", "辛い料理", True),
    ("窓側の席の方がいいです。", "窓側席", False),
    ("説明は箇条書きでお願いしたいです。", "説明", False),
])
def test_preference(text: str, subject: str, negated: bool) -> None:
    item = one(text)
    assert (item.kind, item.subject, item.negated) == ("preference", subject, negated)


def test_preference_keeps_the_order_that_follows_it() -> None:
    item = one("I like short answers, so skip the pleasantries.")
    assert (item.kind, item.subject) == ("preference", "short answers")
    assert item.text == "I like short answers, so skip the pleasantries."
    items = extract("I prefer concise replies, so please don't repeat the question.")
    assert items[0].text.endswith("don't repeat the question.")
    assert [i.kind for i in items] == ["preference", "constraint"]


def test_preference_does_not_swallow_a_consequence_that_is_a_fact() -> None:
    items = extract("I prefer tabs, so the linter config uses tabs.")
    assert [(i.kind, i.text) for i in items] == [
        ("preference", "I prefer tabs"), ("fact", "the linter config uses tabs.")]
    facts = extract("The API is flaky, so always retry twice.")
    assert [(i.kind, i.text) for i in facts] == [
        ("fact", "The API is flaky"), ("constraint", "always retry twice.")]


def test_not_preferences() -> None:
    assert extract("I'd like to book a flight to Tokyo.") == []
    assert "preference" not in kinds("お願いしたいことがあります。")
    assert kinds("你喜欢什么颜色？") == ["question"]


# --- questions -----------------------------------------------------------------------

@pytest.mark.parametrize(("text", "subject"), [
    ("Is the rate limit per user or per API key?", "rate limit"),
    ("How long does the nightly backup take?", "nightly backup take"),
    ("Do you know if Tantivy supports CJK tokenization?", "tantivy"),
    ("明天下午三点开会吗？", "开会"),
    ("测试环境的数据库密码是什么？", "测试环境数据库密码"),
    ("会議は何時からですか？", "会議"),
    ("ポートは5433ですか。", "ポート"),
])
def test_question(text: str, subject: str) -> None:
    item = one(text)
    assert (item.kind, item.subject) == ("question", subject)


def test_questions_are_not_facts() -> None:
    for text in ("Is the port 5433?", "端口是5433吗", "ポートは5433ですか？"):
        item = one(text)
        assert item.kind == "question" and item.value is None


@pytest.mark.parametrize("text", [
    "Can you run the test suite again?",
    "Could you summarise the last three PRs?",
    "If we used SQLite instead, would the writes still be fast enough?",
    "你能帮我看一下这个报错吗？",
    "如果我们换成MySQL，性能会更好吗？",
    "確認してもらえますか？",
    "もしSQLiteに変えたら、速くなりますか？",
])
def test_requests_and_hypotheticals_are_not_questions(text: str) -> None:
    assert extract(text) == []


# --- small talk ----------------------------------------------------------------------

@pytest.mark.parametrize("text", [
    "Thanks!", "ok", "lol yeah", "Sounds good, go ahead.", "Thanks, that worked perfectly.",
    "Hi there! Hope you're doing well.", "好的", "谢谢！", "哈哈，好吧。", "收到，谢谢！",
    "ありがとう", "了解です。", "おはようございます！",
    # thanks with a courtesy tail or lead: no fact ("Thanks as always!" was one)
    "Thanks as always!", "Thank you for everything.", "Thanks in advance!",
    "Thanks for the help, mate.", "いつもありがとうございます。", "本当にありがとうございます！",
    "いつもお世話になっております。",
])
def test_small_talk(text: str) -> None:
    assert extract(text) == []


# --- text that is not the user's statement -------------------------------------------

@pytest.mark.parametrize("text", [
    'The log said "never retry on 401".',
    "The log said 'never retry'.",
    "日志里写着“不要重试”。",
    "ログには「リトライしないで」と書いてありました。",
    "> Always use UTC in logs",
    "```python\nTIMEOUT = 30  # must never exceed 60\n```",
    "```\nnever do this\n",                      # unclosed fence runs to the end
    "Run `rm -rf build && never stop` in a shell",  # inline command
])
def test_quoted_text_and_code_are_not_statements(text: str) -> None:
    assert "constraint" not in kinds(text)
    assert all(i.kind != "fact" or "never" not in i.text for i in extract(text))


def test_code_blocks_are_skipped_entirely() -> None:
    text = "```\nThe port is 5433.\nAlways use tabs.\n```\nWhat does this do?"
    assert [(i.kind, i.text) for i in extract(text)] == [("question", "What does this do?")]
    assert prepare("a\n```\nb\n```\nc") == "a\n" + MASK * 3 + "\n" + MASK + "\n" + MASK * 3 + "\nc"


def test_quote_introduced_as_the_rule_is_kept() -> None:
    item = one('Remember this rule: "never push to main".')
    assert item.kind == "constraint" and item.negated


def test_apostrophes_are_not_quotes() -> None:
    assert one("Don't use the user's token, it's revoked.").kind == "constraint"


# --- assistant messages --------------------------------------------------------------

@pytest.mark.parametrize(("text", "subject"), [
    ("I suggest we use Redis for the session cache.", "session cache"),
    ("We could also batch the writes to cut latency.", "batch writes"),
    ("It might be worth switching to uv for faster installs.", "switching uv"),
    ("我建议把缓存时间设为10分钟。", "缓存时间"),
    ("Redisをキャッシュに使うことをおすすめします。", "キャッシュ"),
])
def test_assistant_proposals(text: str, subject: str) -> None:
    item = one(text, speaker="assistant")
    assert (item.kind, item.subject) == ("proposal", subject)


@pytest.mark.parametrize("text", [
    "The timeout is currently set to 30 seconds in config.py.",
    "We decided to use Postgres.",
    "Never push to main.",
    "Done! I've updated the tests.",
    "TODO: add the PDF renderer.",
    "已经帮你修复了这个问题。",
    "テストを追加しました。",
])
def test_assistant_statements_are_never_facts_or_decisions(text: str) -> None:
    assert extract(text, speaker="assistant") == []


# --- task-state lines ----------------------------------------------------------------

def test_task_lines_in_three_languages() -> None:
    en = extract("Goal: ship the billing export by Friday.\nProgress: CSV writer done.\n"
                 "TODO: add the PDF renderer.\nBlocked: waiting on the tax API key.")
    zh = extract("目标：本周完成支付模块。\n进展：接口已经写完了。\n"
                 "待办：补充单元测试。\n阻塞：还没有账号。")
    ja = extract("目標：今月中にリリースする。\n進捗：APIの実装は完了。\n"
                 "TODO：E2Eテストを書く。\nブロック：アクセス権がない。")
    for items in (en, zh, ja):
        assert [(i.kind, i.task_label) for i in items] == [
            ("task", "goal"), ("task", "progress"), ("task", "todo"), ("task", "blocked")]
    assert en[2].text == "add the PDF renderer."


def test_markdown_task_variants() -> None:
    items = extract("- TODO: rotate the S3 credentials\n* **Blocked:** review\n## TODO\n"
                    "- write docs\n- fix CI\nSome prose after the list.")
    assert [(i.task_label, i.text) for i in items if i.kind == "task"] == [
        ("todo", "rotate the S3 credentials"), ("blocked", "review"), ("todo", "write docs"),
        ("todo", "fix CI")]


def test_decision_line_is_task_state_and_a_decision() -> None:
    items = extract("Decision: use Postgres for the main DB.")
    assert [(i.kind, i.task_label) for i in items] == [("task", "decision"), ("decision", None)]
    assert items[0].subject == items[1].subject
    assert [i.kind for i in extract("决定：先不做国际化。")] == ["task", "decision"]
    assert [i.kind for i in extract("決定：認証はAuth0を使う。")] == ["task", "decision"]
    assert set(TASK_LABELS) == {"goal", "progress", "todo", "blocked", "decision"}


# --- segmentation and language -------------------------------------------------------

def test_segmentation_keeps_decimals_versions_and_abbreviations() -> None:
    text = "We use v1.2.3 e.g. for tests and 3.5 GB of RAM. The port is 5433! Is it ok? Yes."
    scan = prepare(text)
    assert [text[s.start:s.end] for s in segment(text, scan)] == [
        "We use v1.2.3 e.g. for tests and 3.5 GB of RAM.", "The port is 5433!", "Is it ok?", "Yes."]


def test_segmentation_cjk_semicolons_and_newlines() -> None:
    text = "谢谢！数据库端口是5433。締め切りは金曜日です。\nNever push to main; always open a PR."
    scan = prepare(text)
    assert [text[s.start:s.end] for s in segment(text, scan)] == [
        "谢谢！", "数据库端口是5433。", "締め切りは金曜日です。", "Never push to main;",
        "always open a PR."]


@pytest.mark.parametrize(("text", "first"), [
    ("Blocked: the security team must approve the new base image Can you refactor the job?",
     "the security team must approve the new base image"),
    ("Goal: cut the Docker image size When the cache times out, does it retry?",
     "cut the Docker image size"),
    ("阻塞：新集群的网络策略还没批下来 备份脚本的日志太吵了，把级别降到debug。",
     "新集群的网络策略还没批下来"),
    ("ブロッカー：新クラスタのネットワーク許可がまだ下りていない ログが多すぎるので下げましょう。",
     "新クラスタのネットワーク許可がまだ下りていない"),
])
def test_run_on_sentences_are_split(text: str, first: str) -> None:
    items = extract(text)
    assert items[0].kind == "task" and items[0].text == first
    assert len(segment(text, prepare(text))) == 2


@pytest.mark.parametrize(("text", "facts"), [
    ("We run 41 nodes, the memory cap is 6893 MB and the window is 4 min.",
     [("run nodes", 41.0), ("memory cap", 6893.0), ("window", 4.0)]),
    ("We run version 7.28.10 on 41 nodes, the memory cap is 6893 MB.",
     [("run version", None), ("memory cap", 6893.0)]),
    # a condition's comma ends the condition, not a statement
    ("When the queue holds 500 jobs, the timeout is 30 s.", [("timeout", 30.0)]),
])
def test_a_comma_before_a_new_subject_and_its_copula_splits(
        text: str, facts: list[tuple[str, float | None]]) -> None:
    """"…, the memory cap is 6893 MB" after a statement with a number of another
    measure states its own value: it was read as the first subject's ("run nodes
    memory cap" = 41 nodes), so the memory cap was never its own item."""
    assert [(i.subject, i.value) for i in extract(text)] == facts


@pytest.mark.parametrize("text", [
    "We use The Guardian API for news.",
    "The logs say I should retry later.",
    "使用 Redis 做缓存。",
    "Deploy to the EU region This Week and the US region later.",
])
def test_not_run_on_sentences(text: str) -> None:
    assert len(segment(text, prepare(text))) == 1


def test_language_of_each_item() -> None:
    assert detect_lang("我们用 GitHub Actions 做 CI。") == "zh"
    assert detect_lang("mainブランチに直接プッシュしないでください") == "ja"
    assert detect_lang("The table is named 数据库 in the legacy schema.") == "en"
    items = extract("The port is 5433. 端口是5433。ポートは5433です。")
    assert [i.lang for i in items] == ["en", "zh", "ja"]


def test_traditional_and_simplified_chinese_key_the_same() -> None:
    assert one("機票預算是3000元。").subject == one("机票预算是3000元。").subject == "机票预算"
    assert one("其實資料庫連接埠是6543。").correction


# --- properties and robustness -------------------------------------------------------

_PIECES = (list("aeiou tnrs.,;:!?\"'`>-#\n0123456789$%") + list("元円秒时時は是不吗か。、，「」“”")
           + ["never ", "always ", "must ", "Actually, ", "TODO: ", "Goal: ", "port ", "when ",
              "if ", "```", " s", " MB", "不要", "しないで", "我喜欢", "が好き"])
_ALPHABET = st.sampled_from(_PIECES)


@settings(max_examples=300, deadline=None)
@given(st.lists(_ALPHABET, max_size=80).map("".join), st.sampled_from(["user", "assistant"]))
def test_never_raises_and_quotes_verbatim(text: str, speaker: str) -> None:
    for item in extract(text, speaker=speaker):
        assert item.kind in KINDS
        assert item.text and all(part in text for part in item.text.split(ELISION))
        assert item.condition is None or item.condition in text
        assert item.task_label is None or item.task_label in TASK_LABELS
        assert speaker == "user" or item.kind == "proposal"


@pytest.mark.parametrize("text", [
    "`" * 100_000, '"' * 100_000, "1," * 50_000, "30 s " * 20_000, "the port is 1 and " * 5_500,
    "三" * 100_000, "我们的预算是5000元，" * 8_000, "の場合" * 33_000, "e.g. " * 20_000,
    "```\n" * 25_000, "http://" + "a" * 100_000, "\ue000" * 100_000,
])
def test_adversarial_100kb_inputs_complete(text: str) -> None:
    """Linear-time guard: patterns are bounded and fences are scanned line by line.
    Not a timing assertion; a catastrophic backtrack would hang this test."""
    extract(text)


# --- the conversation moving on is not memory ---------------------------------------

@pytest.mark.parametrize(("text", "expected"), [
    # narration of looking something over, just now
    ("I read through infra/helm/values.yaml again.", []),
    ("I skimmed through the RFC.", []),
    ("I looked at the logs again", []),
    ("I read Dune last month.", ["fact"]),  # no through/over/again: kept
    ("I went through a divorce in 2019.", ["fact"]),
    ("I read 40 pages of the spec again", ["fact"]),  # a number: kept
    ("I went over the budget again this month.", ["fact"]),
    ("I read Harry Potter again with my daughter.", ["fact"]),
    ("I read through the whole Wheel of Time series.", ["fact"]),  # not a short object
    ("I read over the weekend that the API is deprecated.", ["fact"]),
    # moving on, not a choice
    ("Let's keep going with api/routes.py.", []),
    ("OK, let's carry on.", []),
    ("Let's keep the retry count at 5.", ["decision"]),
    ("Let's keep going with Postgres for the queue.", ["decision"]),
    ("Let's keep on using tabs for indentation.", ["decision"]),
    # "leave X for now"
    ("先别管限流器了，看看search/indexer.py里那些没用到的导入。", []),
    ("暂时别管这个测试。", []),
    ("以后别管日志里的弃用警告。", ["constraint"]),  # from now on: a rule
    ("别管弃用警告，它们不重要。", ["constraint"]),
    # one-off polite requests
    ("キャッシュ層はいったん置いて、jobs/cleanup.pyの未使用インポートを見てください。", []),
    ("web/src/cart.tsにタイミング依存の箇所がないか見てください。", []),
    ("ログは英語で書いてください。", ["constraint"]),
    ("コミット前には、秘密鍵が含まれていないか確認してください。", ["constraint"]),  # checklist
    ("PRでは、テストが落ちていないかチェックしてください。", ["constraint"]),
    ("デプロイは一旦ステージングで確認してください。", ["constraint"]),  # 一旦, not set aside
    # a noun led by an order verb states a fact about it
    ("重试逻辑在输入为空的时候会报错，麻烦给个修复方案。", ["fact"]),
    ("重试三次以后就放弃。", ["constraint"]),
    ("使用队列处理所有任务。", ["constraint"]),  # 使用 + noun without a predicate: an order
    ("使用服务端渲染所有页面。", ["constraint"]),
    ("保留记录三十天。", ["constraint"]),
    ("レビューでは型エラーがないか必ず確認してください。", ["constraint"]),
])
def test_the_conversation_moving_on_is_not_memory(text: str, expected: list[str]) -> None:
    assert kinds(text) == expected


@pytest.mark.parametrize(("text", "value", "unit"), [
    ("The discount went from 10% to 15%.", 15.0, "%"),
    ("We moved the API from port 8080 to port 9090.", 9090.0, None),
    ("We cut the budget from $20,000 to $15,000.", 15000.0, "USD"),
    ("折扣从10%改为15%。", 15.0, "%"),
    ("割引率を10%から15%に変更しました。", 15.0, "%"),
    # no change stated: a range keeps its first end
    ("The range is from 10 to 20 ms.", 10.0, "ms"),
    ("The timeout is 30 seconds.", 30.0, "s"),
])
def test_a_stated_change_keeps_its_new_value(text: str, value: float, unit: str | None
                                             ) -> None:
    (item,) = [i for i in extract(text) if i.value is not None]
    assert (item.value, item.unit) == (value, unit)


@pytest.mark.parametrize(("text", "subject"), [
    ("I've got 2 cats.", "cats"),  # was "ve cats": the contraction is "have"
    ("I have 2 cats.", "cats"),
    ("We've got 5 replicas in prod.", "replicas"),
    ("I've been using Vim for years.", "vim"),
])
def test_a_contracted_have_keys_like_have(text: str, subject: str) -> None:
    assert [i.subject for i in extract(text)] == [subject], extract(text)


def test_a_sentences_scope_words_are_read_near_the_clause_only() -> None:
    """The task scope said at a sentence's opening applies to a clause within
    ``_SCOPE_REACH`` characters of it; beyond, a sentence of thousands of clauses with
    no full stop would be read again for each one (quadratic: 100 KB of "the port is 1
    and …" took about a minute)."""
    from memory_core.extraction.modality import _SCOPE_REACH, about_this_task

    opening = "For this task, "
    near = opening + "x and " * 10
    far = opening + "x and " * (_SCOPE_REACH // 6 + 5)
    clause = "the bucket is lcm-dev"
    for filler, scoped in ((near, True), (far, False)):
        scan = filler + clause
        assert about_this_task(scan, len(filler), len(scan), "en", 0) is scoped


@pytest.mark.parametrize(("greeting", "statement", "kind", "subject"), [
    ("Hi, ", "I use metric units.", "preference", "metric units"),
    ("Hey, ", "I prefer tabs.", "preference", "tabs"),
    ("Hello there! ", "I prefer short answers.", "preference", "short answers"),
    ("Good morning, ", "I use metric units.", "preference", "metric units"),
])
def test_a_greeting_before_a_statement_is_no_part_of_it(
        greeting: str, statement: str, kind: str, subject: str) -> None:
    """A greeting that opens a message ("Hi,", "Hey,", "Good morning,") is read as the
    fillers are: the statement after it is what it is alone (it was a plain fact, or
    a fact keyed ``prefer``, never the preference)."""
    assert [(i.kind, i.subject) for i in extract(statement)] == [(kind, subject)]
    assert [(i.kind, i.subject) for i in extract(greeting + statement)] == [(kind, subject)]


# --- issue 28: substring gates before costly patterns ----------------------------------


def test_lacks_is_exact_for_ascii_and_never_claims_absence_otherwise() -> None:
    from memory_core.extraction.cue import lacks

    assert lacks("We moved on.", ("replaced",))
    assert not lacks("We re-replaced Redis with Kafka.", ("replaced",))  # a token gate misses it
    assert not lacks("We REPLACED Redis.", ("replaced",))
    # re.I matches "ſ" (long s) as "s", which str.lower keeps apart: no gate off ASCII
    assert not lacks("We ſwapped Redis for Kafka.", ("swapped",))


_GATE_WORDS = ("we", "I", "I'm", "replaced", "swapped", "superseded", "from", "to", "back",
               "moved", "set", "pushed", "drop", "remove", "take", "out", "of", "the", "off",
               "cancelled", "called", "instead", "Kafka", "Redis", "don't", "remember", "this",
               "record", "let's", "role-play", "imagine", "pretend", "character", "my", "in",
               "story", "OOC", "seriously", "real", "life", "and", "is", "with", "for", "a",
               ",", ".", ":", "2", "Monday", "broke", "up", "Emma", "quit", "left", "job")


def _CAPTURE_GATES() -> list[tuple[Any, tuple[str, ...]]]:  # noqa: N802 - a table
    """The gates of the request capture's rules (issue 28, branch ``capcpu``)."""
    from memory_core.extraction import material, modality

    return [(material._ADOPT_EN, material._ADOPT_EN_NEEDLES),
            (material._SAYER_EN, material._SAY_EN_NEEDLES),
            (material._SENDER_EN, material._SENDER_EN_NEEDLES),
            (material._PRESENT_EN, material._PRESENT_EN_NEEDLES),
            (modality._EN_HEDGE, modality._EN_HEDGE_NEEDLES),
            (modality._EN_THIS_TASK, modality._EN_THIS_TASK_NEEDLES)]


_CAPTURE_GATE_WORDS = (
    "the", "my", "our", "boss", "email", "docs", "it", "says", "reads", "shows", "wrote", "Dana",
    "She", "emailed", "texted", "dm'd", "me", "back", "this", "morning", "here's", "Here", "is",
    "I", "we", "just", "found", "got", "Seeing", "in", "logs", "from", "now", "on", "follow",
    "remember", "that", "maybe", "I'd", "say", "not", "100%", "sure", "IIRC", "seems", "to",
    "as", "far", "know", "for", "during", "current", "task", "chat", "session", ":", ".", "!",
    "port", "5432")


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_CAPTURE_GATE_WORDS), min_size=1, max_size=14))
def test_a_capture_gate_never_skips_a_match(words: list[str]) -> None:
    from memory_core.extraction.cue import lacks

    text = " ".join(words)
    for pattern, needles in _CAPTURE_GATES():
        if pattern.search(text):
            assert not lacks(text, needles), (pattern.pattern[:60], text)


@pytest.mark.parametrize("pattern_at, text", [
    (0, "from now on"), (1, "The email says"), (1, "it wrote"), (2, "my boss emailed me"),
    (2, "Dana dm'd us"), (3, "Here's what I found in the logs"), (3, "Seeing this error"),
    (4, "I'd say"), (4, "IIRC"), (4, "as far as I know"), (5, "for the current chat"),
    (5, "during this session")])
def test_each_capture_gate_pattern_has_a_positive_case(pattern_at: int, text: str) -> None:
    """The property above is vacuous for a pattern that never matches: each does."""
    pattern, needles = _CAPTURE_GATES()[pattern_at]
    from memory_core.extraction.cue import lacks

    assert pattern.search(text) and not lacks(text, needles)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(_GATE_WORDS), min_size=1, max_size=14))
def test_a_gated_pattern_never_matches_without_its_needles(words: list[str]) -> None:
    from memory_core.extraction import frame, opt_out
    from memory_core.extraction import lexicon as lx
    from memory_core.extraction.cue import lacks

    text = " ".join(words)
    gated = [(p, n) for (_, p), n in zip(lx.EN_REPLACE, lx.EN_REPLACE_NEEDLES, strict=True)] + [
        (opt_out.EN_OPT_OUT, opt_out._EN_NEEDLES), (frame._OPEN_EN, frame._OPEN_EN_NEEDLES),
        (frame._EXIT_EN, frame._EXIT_EN_NEEDLES)] + _CAPTURE_GATES()
    for pattern, needles in gated:
        if pattern.search(text):
            assert not lacks(text, needles), (pattern.pattern[:60], text)


@pytest.mark.parametrize("text", [
    "We replaced RabbitMQ with Kafka.", "Kafka replaced RabbitMQ.",
    "We migrated from Heroku to Fly.io.", "We went back to Helm.",
    "We bumped Node to 20.", "We use Memcached instead of Redis.",
    "The offsite is off.", "Emma and I broke up."])
def test_replacements_still_found_behind_their_gates(text: str) -> None:
    from memory_core.extraction import replacement

    assert replacement.find(text, 0, len(text), "en") not in (None, replacement.BLOCKED)


# --- a value changed by a verb of change (memory_replays row 96) -----------------------------
@pytest.mark.parametrize("text, subject", [
    ("My rent went up to 1300 EUR.", "rent"),
    ("My rent rose to 1300 EUR.", "rent"),
    ("The price fell to 3 EUR.", "price"),
    ("The retro got moved to Thursday.", "retro"),
    ("The retro was postponed to Thursday.", "retro"),
    ("我的房租涨到1300欧元了。", "房租"),
    ("回顾会推迟到周四了。", "回顾会"),
    ("家賃は1300ユーロに上がった。", "家賃"),
])
def test_a_verb_of_change_is_an_update_keyed_by_what_changed(text: str, subject: str) -> None:
    item = one(text)
    assert (item.kind, item.subject, item.correction) == ("fact", subject, True), item


@pytest.mark.parametrize("text", [
    "CPU went up to 95% during the test.",
    "Latency rose to 400 ms after yesterday's deploy.",
    "CPU usage went up to 95% when the cron job runs.",
    "压测的时候CPU负载涨到了95%。",
    "昨天上线以后，接口延迟涨到了650毫秒。",
    "テスト中にCPUが95%に上がった。",
    "My rent hasn't gone up to 1300 EUR.",
])
def test_a_passing_reading_or_a_denied_change_is_no_update(text: str) -> None:
    assert not any(i.correction for i in extract(text)), extract(text)


# --- a note the user leaves for later (memory_replays row 91) --------------------------------
@pytest.mark.parametrize("text, subject", [
    ("Note to self: renew the domain before June.", "renew domain"),
    ("Reminder: renew the domain before June.", "renew domain"),
    ("提醒自己：六月前续费域名。", "六月前续费域名"),
    ("自分用メモ：金曜までに請求書を送る。", "金曜までに請求書を送る"),
])
def test_a_note_to_self_is_a_fact_keyed_by_what_it_asks(text: str, subject: str) -> None:
    item = one(text)
    assert (item.kind, item.subject, item.text) == ("fact", subject, text), item


def test_a_reminder_addressed_to_the_agent_stays_its_rule() -> None:
    assert kinds("Reminder: answer in English.") == ["constraint"]
    assert kinds("Reminder: Dana is my manager.") == ["fact"]
    assert kinds("Note: thanks!") == []
    assert kinds("TODO: renew the domain before June.") == ["task"]
