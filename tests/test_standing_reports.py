"""What stands and what is only reported (issue 24): a number that reports a change, a
claim of someone else's, an age or a year is kept but not put in every block; a
"must" in a plan's step binds that step; a reported question is no claim; a decision
may follow "OK, decision made:"; a restriction of the user's diet or health stands.

Extraction-level checks run ``extract`` and score the items as the block would
(``stands``); engine-level checks store messages through a real capture (SQLite) and
read the rows back; proxy-level checks read the block the upstream received."""

from __future__ import annotations

import pytest

from memory_core.assembly.block import standing_weight
from memory_core.engine import Engine
from memory_core.evaluation.extraction import stands
from memory_core.extraction import extract
from memory_core.items import standing
from memory_core.models import Scope
from tests.conftest import RunningProxy, sql_read
from tests.fake_upstream import FakeUpstream
from tests.standing_helpers import assert_none_stands, assert_stands, kept_but_not_standing
from tests.test_injection import Agent, block_of

# -- numbers the user did not fix -------------------------------------------------------------
REPORTED = [
    "p95 latency jumped from 180 ms to 420 ms after yesterday's deploy.",
    # (a value that rose to a new one alone is an update of its subject since
    # memory_replays row 96: it stands only once it replaces a value, as a correction;
    # a reading of one moment is none)
    "The queue depth increased to 5000 messages while the consumer was down.",
    "Our bill doubled to 900 dollars this month.",
    "He's been saying that since 2021 and he's right.",
    "Jonas said the vendor SLA is 99.9% uptime.",
    "Apparently the export job writes 12 GB a night.",
    "She's a 10-week-old beagle named Biscuit.",
    "昨天上线以后，接口 p99 延迟涨到了 650 毫秒。",
    "上周末我们去杭州玩了三天。",
    "听说新机器有64核。",
    "昨日のデプロイ後、メモリ使用量が 2.1 GB から 3.4 GB に増えました。",
    "田中さんによると、新しいサーバーは64コアだそうです。",
    "Everyone says the timeout is 30 seconds.",
    "We got there at 9 and the food came 40 minutes later.",
    "We got to the airport at noon and the flight left two hours later.",
    "I keep getting a 500 error.",
    "タイムアウトは30分らしい。",
    # what a job did: a past verb of work before its count
    "Synced 4812 files to the backup bucket, 3 skipped.",
    "Processed 1,204 records before the worker restarted.",
    "Uploaded 812 MB to the bucket.",
    "I ran 40 tests against the new branch.",
    # the size of a change, named by its noun
    "My raise this year is about 8%.",
    "The speedup is roughly 3x with the new index.",
    "The improvement is 40 ms on p95.",
    "今年的涨薪幅度是8%。",
    "値上げ幅は5%です。",
    # someone else's word, "per <name>"
    "Per Marco: the staging DB allows 50 connections, tops.",
    "As per Dana, the release window is 2 hours.",
    # the size of a machine describes the equipment
    "The build box has 32 GB of RAM.",
    "FYI the CI runner has 8 GB of RAM and 4 cores.",
    "Our GPU server comes with 4 GPUs and 512 GB of RAM.",
    "测试机有16核。",
    "检验机内存是64G。",
    "新しいサーバーは64コアです。",
    "検証機のメモリは64GBです。",
]


@pytest.mark.parametrize("text", REPORTED)
def test_a_reported_number_is_kept_but_does_not_stand(text: str) -> None:
    kept_but_not_standing(text)  # kept: searchable, shown when the turn asks for it


SET = [
    "The API rate limit is 100 requests per minute.",
    "The budget was set to 5000 dollars.",
    "Actually, the limit is 50 requests per second.",
    "Jonas said the budget is capped at 500 euros.",  # a word says it is set
    "The job takes about 40 minutes.",
    "2019 was the year we hit 40 customers, and the quota is 500 seats.",
    "预算上限是5000元。",
    "タイムアウトは30秒です。",
    # the project's own documents and the user's own words are no hearsay
    "The README says the port is 8080.",
    "The contract says 99.9% uptime.",
    "According to the spec, the max length is 64.",
    "As I said, the timeout is 30 seconds.",
    "I said 3 replicas, not 5.",
    "READMEによると、ポートは8080です。",
    "新しいプランは素晴らしい、上限は64件です。",  # 素晴らしい: "wonderful", no らしい
    # a machine's size the user chose, a count of what the team runs, the project's document
    "We gave the build VM 16 GB of RAM.",
    "The VM is provisioned with 8 vCPUs.",
    "我们把内存调到32G。",
    "メモリは32GBに設定しました。",
    "The worker pool has 12 workers.",
    "Per the README, the port is 8080.",
    "The limit increase is capped at 10%.",
    # a number a preposition counts is no year
    "The context window is a maximum of 2048 tokens.",
    "The pool ranges from 1900 to 2000 connections.",
    # a verb of setting is no report of work done
    "We allocated 16 GB to the build VM.",
    "We capped 20 connections per client.",
    "Two approvals and 2 reviewers required.",
    # a schedule, not a past account
    "The token expires 15 minutes later.",
    # "a"/"an" before a word that is no span of time is no "an hour later"
    "I configured the cache TTL to 300 seconds and will add alerts later.",
    # a change the user made sets the value
    "We doubled the replica count to 6.",
    "我们把超时增加到了60秒。",
]


@pytest.mark.parametrize("text", SET)
def test_a_number_the_user_states_or_sets_still_stands(text: str) -> None:
    items = [i for i in extract(text) if i.value is not None]
    assert items and any(stands(i) for i in items), items


def test_a_year_is_a_date_only_where_the_statement_dates_by_it() -> None:
    assert standing.is_year(2019, "We moved to Denver in 2019.")
    assert standing.is_year(2021.0, "since 2021")
    assert standing.is_year(2019, "2019年に入社しました。")
    assert not standing.is_year(2000, "We have 2000 users.")
    assert not standing.is_year(2019.5, "in 2019.5")
    assert not standing.is_year(None, "in 2019")
    assert standing.is_year(2019, "Back in 2019 we had 40 customers.")
    assert standing.is_year(2021, "He's been saying that since 2021 and he's right.")
    assert not standing.is_year(2048, "The context window is a maximum of 2048 tokens.")
    assert not standing.is_year(1900, "The pool ranges from 1900 to 2000 connections.")


def test_after_an_event_is_no_update_and_from_now_on_still_is() -> None:
    (item,) = extract("昨天上线以后，接口 p99 延迟涨到了 650 毫秒。")
    assert not item.correction and not stands(item), item
    assert extract("部署以后改成Argo CD了。")[0].correction  # the 改成 after it still is
    assert extract("我们以后用Kafka。")[0].correction
    assert extract("那以后用Kafka吧。")[0].correction  # "then, from now on"
    assert extract("今天以后都用UTC时间。")[0].correction


# -- how the work stands ---------------------------------------------------------------------
@pytest.mark.parametrize("text", ["Tests are green now.", "The build is fixed now.",
                                  "CI passes again now.", "The login bug is resolved now.",
                                  "测试现在通过了。", "テストは今は通っています。"])
def test_a_status_of_the_work_is_task_state_not_standing(text: str) -> None:
    items = extract(text)
    assert items and not any(stands(i) for i in items), items


@pytest.mark.parametrize("text", ["We deploy with Argo CD now.",
                                  "The staging server is up to 64 GB now.",
                                  "Our API is live at port 8443 now.",
                                  "The rate limit is now 200 requests per minute."])
def test_an_update_of_a_setting_still_stands(text: str) -> None:
    assert_stands(text)


def test_a_status_that_supersedes_the_last_one_still_does_not_stand(engine: Engine) -> None:
    rows = stored(engine, ["The build is broken.", "The build is fixed now."])
    new = rows[-1]
    assert new["status"] == "active" and standing_weight(new) == 0, rows


@pytest.mark.parametrize("text", [
    "Correction: the bucket is private, the ACL is fixed.",
    "Actually, the limit is 50 requests per second, the bug is fixed.",
    "The limit is 50 requests per second now that the outage is resolved.",
    "予算の件は解決しました、上限は5000円です。",
    "以后部署用Argo CD，之前的问题已经修好了。"])
def test_a_value_stated_beside_a_status_still_stands(text: str) -> None:
    assert_stands(text)


@pytest.mark.parametrize("text", ["Tests are green now, so you can merge.",
                                  "The build is fixed now, and CI passes again.",
                                  "Good news: tests are green now."])
def test_a_status_with_a_consequence_is_still_task_state(text: str) -> None:
    items = extract(text)
    assert items and not any(stands(i) for i in items), items


# -- a plan's step ----------------------------------------------------------------------------
def test_a_must_in_a_plan_step_binds_the_step_and_always_still_stands() -> None:
    plan = extract("Here's the plan:\n1. Add the `/v2/items` route\n"
                   "2. It must return 404 for unknown ids, not 500\n3. Update the OpenAPI spec")
    step = next(i for i in plan if "404" in i.text)
    assert step.label and not stands(step), step
    ja = extract("手順：\n1. バックアップを取る\n"
                 "2. マイグレーションを実行する（必ずステージングで先に）\n3. 結果を確認する")
    assert not any(stands(i) for i in ja), ja
    rule = extract("Conventions:\n1. Always use tabs.\n2. Never commit secrets.")
    assert rule and all(stands(i) for i in rule), rule
    assert stands(extract("We must never run terraform apply from a laptop.")[0])


@pytest.mark.parametrize("text", [
    "Rules for this repo:\n1. You must always reply in English.\n2. You must not use emojis."
    "\n3. Tests must pass before merge.",
    "Project conventions:\n1. Must use UTC timestamps.\n2. Must not log PII.",
    "团队规范：\n1. 提交前必须跑测试\n2. 代码审查至少两人",
])
def test_a_numbered_list_of_rules_is_no_series(text: str) -> None:
    items = extract(text)
    assert len(items) >= 2 and all(not i.label and stands(i) for i in items), items


# -- reported questions and decisions ---------------------------------------------------------
@pytest.mark.parametrize("text", ["Kai asked whether we still support Python 3.9.",
                                  "Dana asked me if the export runs at 2 am.",
                                  "My manager asked how many nodes we need."])
def test_a_reported_question_is_no_claim(text: str) -> None:
    assert extract(text) == [], extract(text)


@pytest.mark.parametrize("text", ["I keep getting a 500 error.",
                                  "Okay, I keep forgetting to push.",
                                  "We keep seeing timeouts on the gateway."])
def test_what_keeps_happening_is_no_decision(text: str) -> None:
    assert not any(i.kind == "decision" or stands(i) for i in extract(text)), extract(text)


def test_a_reported_claim_is_still_a_fact_about_its_speaker() -> None:
    (item,) = extract("Kai asked for 3 more nodes.")
    assert item.kind == "fact" and item.subject == "kai", item


@pytest.mark.parametrize("text, subject", [
    ("OK, decision made: we'll go with Postgres 16 for the new service.", None),
    ("Sounds good, let's go with the Redis Streams approach.", "redis streams approach"),
    ("Team decision from today's sync: we're dropping IE11 support.", None),
    ("Final decision: we'll use Kafka.", "kafka"),
])
def test_a_decision_after_a_lead(text: str, subject: str | None) -> None:
    items = extract(text)
    decisions = [i for i in items if i.kind == "decision"]
    assert decisions and stands(decisions[0]), items
    if subject:
        assert decisions[0].subject == subject, decisions


# -- diet and health --------------------------------------------------------------------------
TRAITS = [
    ("Btw I'm vegetarian, so maybe not the steakhouse.", "vegetarian"),
    ("I'm allergic to peanuts, so no satay for me!", "peanut allergy"),
    ("We're vegan.", "vegan"),
    ("I'm lactose intolerant.", "lactose intolerant"),
    ("我对花生过敏。", "花生过敏"),
    ("我是素食者，聚餐别订烤肉店哈。", "素食者"),
    ("我从小对鸡蛋过敏。", "鸡蛋过敏"),
    ("我花粉过敏。", "花粉过敏"),
    ("私はベジタリアンなので、肉料理のお店は避けたいです。", "ベジタリアン"),
]


@pytest.mark.parametrize("text, subject", TRAITS)
def test_a_diet_or_health_restriction_is_a_lasting_fact_that_stands(
        text: str, subject: str) -> None:
    item = extract(text)[0]
    assert (item.kind, item.subject, item.lasting) == ("fact", subject, True), item
    assert stands(item)


@pytest.mark.parametrize("text", ["I'm a vegetarian restaurant owner.",
                                  "Are you vegetarian?", "If I were vegan I'd skip this.",
                                  "My sister is vegan.", "The menu has vegan options.",
                                  "I'm allergic to meetings.", "I'm allergic to YAML.",
                                  "我老婆对海鲜过敏。", "我们是素食餐厅。", "我对开会过敏。",
                                  "我昨天过敏了，今天好多了。", "私は会議アレルギーです。",
                                  "我对花生不过敏。", "我们都不过敏。",
                                  "私はベジタリアンではないです。",
                                  "私はベジタリアンでした。", "私は昔ベジタリアンだった。"])
def test_not_the_users_restriction(text: str) -> None:
    assert not any(i.lasting for i in extract(text)), extract(text)


# -- how to address the user, "don't ever", "no wait" -----------------------------------------
@pytest.mark.parametrize("text, subject", [
    ("Call me Sam, by the way.", "name"), ("Please call me Dr. Lee.", "name"),
    ("I go by Alex.", "name"), ("叫我小王就行。", "称呼"), ("サムと呼んでください。", "呼び方")])
def test_how_to_address_the_user_is_a_standing_preference(text: str, subject: str) -> None:
    (item,) = extract(text)
    assert (item.kind, item.subject) == ("preference", subject) and stands(item), item


@pytest.mark.parametrize("text, subject", [
    ("Call me Samantha from now on.", "name"), ("I go by Alex now.", "name"),
    ("You can call me Sam or Sammy.", "name"), ("私のことはサムと呼んでください。", "呼び方")])
def test_a_name_said_with_now_keeps_its_key(text: str, subject: str) -> None:
    (item,) = extract(text)
    assert (item.kind, item.subject) == ("preference", subject) and stands(item), item


@pytest.mark.parametrize("text", ["Call me when the build is done.", "Call me back tomorrow.",
                                  "call me crazy, but I keep a changelog", "I go by bike.",
                                  "Call me Friday.", "Call me ASAP.", "叫我起床。", "叫我一声。",
                                  "叫我去开会。", "叫我帮你看看吧。",
                                  "この関数はparse_argsと呼んでください。",
                                  "新しいサービスをAtlasと呼んでください。"])
def test_call_me_without_a_name_is_no_name(text: str) -> None:
    assert not any(i.subject in ("name", "称呼", "呼び方") for i in extract(text)), extract(text)


def test_dont_ever_says_the_rule_lasts() -> None:
    (item,) = extract("Don't ever log the raw bearer token.")
    assert item.kind == "constraint" and stands(item), item
    (once,) = extract("Don't log the token in this answer.")
    assert not stands(once), once


def test_no_wait_opens_a_correction() -> None:
    (item,) = extract("no wait, the bucket is `acme-prod-artifacts`, not `acme-artifacts-prod`")
    assert item.correction and item.subject == "bucket", item
    assert not any(i.correction for i in extract("No wait list for the restaurant, sadly."))


@pytest.mark.parametrize("text", ["Hang on, let me check the logs.", "Hang on, I'll be right back.",
                                  "No wait, let me think.", "Hold on, that's a good idea.",
                                  "Oh wait, I see the problem now."])
def test_talk_after_hang_on_is_no_correction(text: str) -> None:
    assert_none_stands(text)
    assert any(stands(i) for i in extract("Hang on, the timeout is 60 seconds."))


# -- stored through a capture -----------------------------------------------------------------
SCOPE = Scope("t", "coder", "s1")


def stored(engine: Engine, texts: list[str]) -> list[dict[str, object]]:
    msgs: list[dict[str, object]] = [{"role": "system", "content": "You help."}]
    for n, text in enumerate(texts):
        msgs.append({"role": "user", "content": text})
        _, fut = engine.capture_request(SCOPE, f"r{n}", [dict(m) for m in msgs], {})
        fut.result()
        msgs.append({"role": "assistant", "content": "Noted."})
    return sql_read(engine, lambda c: [dict(r) for r in c.execute(
        "SELECT * FROM memory_items ORDER BY id")])


def test_two_allergies_are_two_items_and_both_stand(engine: Engine) -> None:
    rows = stored(engine, ["I'm allergic to peanuts.", "I'm allergic to shellfish too."])
    active = [r for r in rows if r["status"] == "active"]
    assert sorted(str(r["subject"]) for r in active) == ["peanut allergy", "shellfish allergy"]
    assert all(r["supersedes"] is None and r["conflict_with"] is None for r in active), active
    assert all(standing_weight(r) > 0 for r in active), active


def test_a_name_from_now_on_replaces_the_last_one(engine: Engine) -> None:
    rows = stored(engine, ["Call me Sam.", "Call me Samantha from now on."])
    assert [r["status"] for r in rows] == ["superseded", "active"], rows
    assert rows[1]["supersedes"] == rows[0]["id"], rows


def test_two_rules_about_two_commands_are_two_items_not_a_conflict(engine: Engine) -> None:
    rows = stored(engine, ["Always run `make lint` before committing.",
                           "Always run `pytest -q` before committing.",
                           "Never run `git push --force` on main.",
                           "Never run `rm -rf /` on main."])
    assert [r["subject"] for r in rows] == ["run make lint", "run pytest q",
                                            "run main git push force", "run main rm rf"]
    assert all(r["status"] == "active" and r["conflict_with"] is None
               and r["supersedes"] is None for r in rows), rows


def test_a_value_given_as_code_stays_a_value_of_one_subject(engine: Engine) -> None:
    # the code is what the subject is ("The build command is `…`"), what the user
    # prefers for it, or what a rule rejects: a rival conflicts, not a second item
    rows = stored(engine, ["The build command is `npm run build`.",
                           "The build command is `pnpm build`.",
                           "I prefer `black -l 100` for formatting.",
                           "I prefer `ruff format` for formatting.",
                           "Actually, run `ruff check .` before committing, not `make lint`."])
    assert [r["subject"] for r in rows] == ["build command", "build command", "formatting",
                                            "formatting", "run ruff check"], rows
    assert rows[1]["conflict_with"] == rows[0]["id"], rows
    assert rows[3]["conflict_with"] == rows[2]["id"], rows


def test_a_command_named_by_its_noun_is_part_of_the_subject() -> None:
    assert extract("Please always use the `make lint` target.")[0].subject == "target make lint"
    # the situation before the rule is its condition (tests/test_standing_precision.py)
    assert extract("以后提交前都要跑 `make lint`。")[0].subject == "跑 makelint"
    assert extract("コミット前に必ず `make lint` を実行してください。")[0].subject == "makelint"
    assert extract("测试命令是 `pytest -q`。")[0].subject == "测试命令"


def test_a_value_that_differs_only_in_its_code_is_kept_not_merged(engine: Engine) -> None:
    rows = stored(engine, ["The test command is `pytest -q`.",
                           "The test command is `pytest -x`.",
                           "Reminder: the test command is `pytest  -x`."])
    assert [r["text"] for r in rows] == ["The test command is `pytest -q`.",
                                         "The test command is `pytest -x`."], rows
    first, second = rows  # two values of one attribute, no correction word: a conflict
    assert second["conflict_with"] == first["id"] and second["status"] == "active", rows


# -- what the upstream sees -------------------------------------------------------------------
async def test_a_diet_stands_in_another_conversation_and_a_change_report_does_not(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    first = Agent(proxy, upstream, session="one")
    await first.say("Btw I'm vegetarian.")
    await first.say("p95 latency jumped from 180 ms to 420 ms after yesterday's deploy.")
    await proxy.settle()
    other = Agent(proxy, upstream, session="two")
    await other.say("Where should the team dinner be on Friday?")
    block = block_of(other.upstream_last_user())
    assert "vegetarian" in block and "420 ms" not in block, block
    await other.say("How did p95 latency change after the deploy?")
    assert "420 ms" in block_of(other.upstream_last_user())  # kept, and found when asked


async def test_a_machines_size_is_found_when_asked_not_put_in_every_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    first = Agent(proxy, upstream, session="one")
    await first.say("fyi the CI runner has 8 GB of RAM and 4 cores")
    await first.say("Always run the linter before committing.")
    await proxy.settle()
    other = Agent(proxy, upstream, session="two")
    await other.say("Draft the release notes for version 2.3.")
    block = block_of(other.upstream_last_user())
    assert "linter" in block and "8 GB" not in block, block
    await other.say("How much RAM does the CI runner have?")
    assert "8 GB" in block_of(other.upstream_last_user())  # kept, and found when asked


# -- needs of access and the user's time zone --------------------------------------------
@pytest.mark.parametrize("text", [
    "I'm colour-blind, so avoid red/green charts.",
    "I'm dyslexic, so keep paragraphs short.",
    "I'm hard of hearing.",
    "我是色盲，图表别用红绿色。",
    "私は色弱なので、赤と緑のグラフは避けてください。",
])
def test_a_need_of_access_stands_with_what_it_asks_for(text: str) -> None:
    trait = extract(text)[0]
    assert trait.kind == "fact" and trait.lasting and stands(trait), extract(text)
    assert trait.text == text  # the order after "so" is quoted with the trait


@pytest.mark.parametrize("text", ["My timezone is CET.", "I'm on Pacific time.", "I'm in UTC+2.",
                                  "I'm in PST.", "I live in the Central time zone."])
def test_the_users_time_zone_is_a_lasting_fact(text: str) -> None:
    assert [(i.subject, stands(i)) for i in extract(text)] == [("timezone", True)]


@pytest.mark.parametrize("text", ["I'm blind to the risks.", "I'm in the office.", "I'm on call.",
                                  "I'm in a hurry.", "I'm in Berlin."])
def test_no_time_zone_and_no_need_of_access(text: str) -> None:
    assert not any(i.subject == "timezone" or i.lasting for i in extract(text)), extract(text)


def test_a_new_time_zone_replaces_the_last_one(engine: Engine) -> None:
    rows = stored(engine, ["My timezone is CET.", "I'm on Pacific time now."])
    assert [(r["subject"], r["status"]) for r in rows] == [("timezone", "superseded"),
                                                           ("timezone", "active")], rows
