"""Look-alike updates (issue 24): a statement dated "now" that adds one more of a kind
("also", 也, も) or names a sibling attribute (the prod cluster's version after the
staging cluster's) revises nothing; the same sentences without the addition, or about
the same attribute, still do. Wording here is not the updates evals'."""

from __future__ import annotations

from pathlib import Path

import pytest

from memory_core.engine import Engine
from memory_core.extraction import extract
from memory_core.extraction.replacement import adds
from memory_core.items import writer
from memory_core.items.supersession import (
    other_instance,
    rival_scopes,
    sibling_in_text,
    spelled_alike,
)
from memory_core.models import Scope
from tests.conftest import sql_read

SCOPE = Scope("t", "coder")


def _said(engine: Engine, *texts: str) -> dict[str, str]:
    """Each text's statements stored in order; ``{text: status}`` of the items."""
    for n, text in enumerate(texts):
        engine.store.write_tx_sync(lambda c, n=n, text=text: writer.store_extracted(
            c, SCOPE, 1, None, extract(text)))
    return dict(sql_read(engine, lambda c: [tuple(r) for r in c.execute(
        "SELECT text, status FROM memory_items ORDER BY id")]))


@pytest.mark.parametrize("old, added, update", [
    ("Our API uses API tokens for the CLI.", "We now also support API keys for the CLI.",
     "We now support API keys for the CLI."),
    ("会話データはPostgreSQLに保存しています。", "会話データは今はRedisにも保存しています。",
     "会話データは今はRedisに保存しています。"),
])
def test_an_addition_revises_nothing_and_the_same_words_without_it_do(
        tmp_path: Path, old: str, added: str, update: str) -> None:
    assert adds(added) and not adds(update)
    _beside_but_replaced(tmp_path, old, added, update)


def _beside_but_replaced(tmp_path: Path, old: str, beside: str, update: str) -> None:
    """After ``old``, ``beside`` leaves both current and ``update`` (in an engine of its
    own) supersedes it."""
    first, second = Engine(tmp_path / "a"), Engine(tmp_path / "b")
    try:
        assert _said(first, old, beside) == {old: "active", beside: "active"}
        assert _said(second, old, update) == {old: "superseded", update: "active"}
    finally:
        first.close()
        second.close()


@pytest.mark.parametrize("text", [
    "We also switched the CLI to API keys.",  # a change, said among others
    "我们也换成 Redis 了。",
    "We no longer use tokens for the CLI as well.",
])
def test_an_addition_that_names_a_change_is_not_one_more(text: str) -> None:
    assert not adds(text)


@pytest.mark.parametrize("text", [
    "From today we run the tests on Windows too.", "现在也用 Redis 存会话了。",
    "另外前端现在用 Vue 写。", "今はMySQLも使っています。", "Slackに加えて今はTeamsを使います。",
    "From today the sync is at 9:30 on Fridays too.",  # a colon in a time ends no clause
])
def test_one_more_of_a_kind_in_each_language(text: str) -> None:
    assert adds(text)


@pytest.mark.parametrize("text", [
    "The CI now runs the tests on Windows.", "我们现在还是用 Redis。", "もう使っていません。",
    "もし移行したら教えて。", "今はもっと速いです。",
])
def test_no_addition_in_still_not_yet_if_or_more(text: str) -> None:
    assert not adds(text)


def test_another_cluster_s_version_is_a_sibling_not_an_update(engine: Engine) -> None:
    """The extraction keys one statement "staging cluster version" (its number read as
    a version) and the other "prod cluster": rival qualifiers of one attribute."""
    status = _said(engine, "Our staging cluster runs Kubernetes 1.27.",
                   "The prod cluster is on Kubernetes 1.29 now.")
    assert set(status.values()) == {"active"}, status


def test_the_same_cluster_s_new_version_still_supersedes(tmp_path: Path) -> None:
    eng = Engine(tmp_path / "e")
    try:
        status = _said(eng, "Our staging cluster runs Kubernetes 1.27.",
                       "The staging cluster is on Kubernetes 1.29 now.")
    finally:
        eng.close()
    assert status == {"Our staging cluster runs Kubernetes 1.27.": "superseded",
                      "The staging cluster is on Kubernetes 1.29 now.": "active"}, status


@pytest.mark.parametrize("old, other, same", [
    # the same relation with another owner and another object: the head ("service")
    # under rival qualifiers named in the texts, whatever the subjects were keyed as
    ("Carol owns the payments service.", "Dev owns the search service now.",
     "Dev owns the payments service now."),
    # another member of a numbered series
    ("node-3 has 32 GB of memory.", "node-4 was upgraded to 64 GB of memory.",
     "node-3 was upgraded to 64 GB of memory."),
    # another environment, named on each side (rival_scopes)
    ("Our prod logs are shipped to Datadog.", "Logs from staging are now shipped to Loki.",
     "Logs from prod are now shipped to Loki."),
])
def test_another_thing_of_the_kind_is_not_updated_but_the_same_one_is(
        tmp_path: Path, old: str, other: str, same: str) -> None:
    _beside_but_replaced(tmp_path, old, other, same)


def test_another_system_in_japanese_is_not_updated(engine: Engine) -> None:
    status = _said(engine, "佐藤さんが購買システムの担当です。",
                   "営業システムは今は田中さんが担当しています。")
    assert set(status.values()) == {"active"}, status


@pytest.mark.parametrize("subject, text, other, sibling", [
    ("bob owns auth service", "Bob owns the auth service now.",
     "Alice owns the billing service.", True),
    ("bob owns billing service", "Bob owns the billing service now.",
     "Alice owns the billing service.", False),  # the same service
    ("bob owns auth service", "Bob owns the auth service now.",
     "Alice owns the service.", False),  # no rival qualifier
    ("人事システム", "人事システムは今は鈴木さんが担当しています。",
     "山田さんが経理システムの担当です。", True),
    ("人事システム", "人事システムは今は鈴木さんが担当しています。",
     "人事システムは山田さんの担当です。", False),
])
def test_a_sibling_named_in_the_other_statement(subject: str, text: str,
                                                other: str, sibling: bool) -> None:
    assert sibling_in_text(subject, text, None, other) is sibling
    assert sibling_in_text(None, other, subject, text) is sibling  # either way round


@pytest.mark.parametrize("a, b, other", [
    ("build-01 has 64 GB.", "build-02 has 128 GB.", True),
    ("node_3 is down.", "node_4 is down.", True),
    ("We use gpt4 for summaries.", "We're on gpt5 for summaries now.", False),  # versions
    ("Python-3.11 runs the jobs.", "Python-3.12 runs the jobs now.", False),
    ("build-01 has 64 GB.", "build-1 now has 128 GB.", False),  # one member, written twice
    ("Postgres 15 runs on db-1.", "We upgraded to Postgres 16 on db-1.", False),
    # the member is the value, the subject is the same: an update, not another thing
    ("The release branch is release-3.", "The release branch is release-4 now.", False),
])
def test_another_member_of_a_series(a: str, b: str, other: bool) -> None:
    (ea,), (eb,) = extract(a), extract(b)
    assert other_instance(ea.subject, a, eb.subject, b) is other


@pytest.mark.parametrize("old, update", [
    # the addition is in a clause about something else: the update still revises
    ("My manager is Sarah.", "My manager is Tom now, he also leads the platform team."),
    ("Our daily standup is at 9:30.",
     "The standup is at 10 now, which also suits the Denver folks."),
    ("The max upload size is 10 MB.", "The max upload size is 25 MB now, for images as well."),
    ("The API timeout is 30 seconds.", "Besides, the API timeout is 60 seconds now."),
    ("我住在北京。", "我现在住在上海，离公司也近。"),
    ("团队有 8 个人。", "团队现在有 10 个人，还招了一个设计师。"),
    ("キャッシュはMemcachedです。", "キャッシュは今はRedisで、セッションの保存にも使っています。"),
])
def test_an_addition_outside_the_statement_s_clause_does_not_block_the_update(
        engine: Engine, old: str, update: str) -> None:
    assert not adds(update)
    assert _said(engine, old, update) == {old: "superseded", update: "active"}


@pytest.mark.parametrize("old, update", [
    # the series member is the value that changed, not another thing of the kind
    ("The release branch is release-3.", "The release branch is release-4 now."),
    ("Our build agent is build-01.", "Our build agent is build-02 now."),
    ("测试服务器是 test-01。", "测试服务器现在是 test-02。"),
    # a qualifier written short is the same qualifier, not a rival
    ("Our prod cluster runs on GKE.", "The production cluster runs on EKS now."),
])
def test_a_series_member_as_the_value_or_a_shortened_qualifier_still_updates(
        engine: Engine, old: str, update: str) -> None:
    assert _said(engine, old, update) == {old: "superseded", update: "active"}


@pytest.mark.parametrize("text", [
    "团队现在还剩 5 个人。",  # 还剩: what is left, not one more
    "今はGoを最も使っています。",  # 最も: most
    "今はVimは一回も使っていません。",  # 一回も: not even once
])
def test_still_most_and_not_once_are_no_additions(text: str) -> None:
    assert not adds(text)


@pytest.mark.parametrize("a, b, rival", [
    ("The prod deploy is on Thursdays.", "Staging deploys daily now.", True),
    ("我们的后端用 Go 写的。", "前端现在改成用 Vue 了。", True),
    ("本番のDBはPostgreSQLです。", "検証環境は今はMySQLに変更しました。", True),
    ("Our production DB is Postgres 14.", "Prod is on Postgres 16 now.", False),  # one scope
    ("We moved the API from staging to prod.", "Prod runs v2.", False),  # both named
    ("Use pytest for the tests.", "The staging box is slow.", False),  # one side only
])
def test_rival_scopes(a: str, b: str, rival: bool) -> None:
    assert rival_scopes(a, b) is rival


def test_the_same_environment_s_new_schedule_still_replaces(engine: Engine) -> None:
    status = _said(engine, "The prod deploy runs every Thursday.",
                   "The production deploy runs every Friday now.")
    assert status == {"The prod deploy runs every Thursday.": "superseded",
                      "The production deploy runs every Friday now.": "active"}, status


@pytest.mark.parametrize("old, update", [
    ("My team lead is Farah.", "Joaquim is my team lead now."),  # the head ends both
    ("The wiki lives at wiki.corp.example.", "The new wiki address is docs.corp.example."),
    ("The staging box has 16 GB.", "The staging box memory is 32 GB now."),
])
def test_a_narrower_subject_of_one_attribute_still_updates(
        engine: Engine, old: str, update: str) -> None:
    assert _said(engine, old, update)[old] == "superseded"


@pytest.mark.parametrize("old, new", [
    ("The fireworks show was amazing and so loud.", "Nope, never been to a fireworks show."),
    ("That soup looks delicious!", "It looks like the soup place is closed now."),
])
def test_a_statement_without_a_value_does_not_replace_an_impression(
        engine: Engine, old: str, new: str) -> None:
    # the second may store nothing ("never been to …" is no order since 07c032a)
    status = _said(engine, old, new)
    assert status[old] == "active" and set(status.values()) == {"active"}, status


def test_an_impression_still_replaces_an_impression(engine: Engine) -> None:
    old, new = "The new build is great.", "Actually the new build is terrible."
    assert _said(engine, old, new) == {old: "superseded", new: "active"}


@pytest.mark.parametrize("old, new", [
    ("My manager is Dana.", "Sorry, my manager is Lee now."),
    ("The launch is in May.", "Bad news, the launch is now in June."),
    ("The backend is in Python.", "The backend is in Go now, which is great."),
    ("We love using Jenkins for CI.", "We no longer use Jenkins."),  # a preference
])
def test_an_aside_on_a_correction_is_no_impression(engine: Engine, old: str, new: str) -> None:
    """The impression rule reads what a correction says of its subject: "Sorry,", "Bad
    news," or ", which is great" judges the news, and a preference ("We love using
    Jenkins") is a choice, so each still replaces the value it revises."""
    assert _said(engine, old, new) == {old: "superseded", new: "active"}


@pytest.mark.parametrize("old, new", [
    ("Our team lead is Farah, she's great.", "Our team lead is Joaquim now."),
    ("The venue is the Grand Hotel, which was lovely last year.", "The venue is the Hilton now."),
    ("负责人是小王，他人很好。", "负责人现在是小李。"),
])
def test_an_aside_on_the_stored_value_is_no_impression(engine: Engine, old: str,
                                                       new: str) -> None:
    """A stored statement that says what its subject is keeps being a value with a
    comment beside it ("she's great" judges Farah, not who leads the team)."""
    assert _said(engine, old, new) == {old: "superseded", new: "active"}


def test_a_stored_impression_with_no_value_stays_one(engine: Engine) -> None:
    old, new = "I won the tournament - so exciting!", "Nope, never won anything like that."
    assert list(_said(engine, old, new).values()) == ["active", "active"]


def test_a_time_before_a_japanese_claim_is_not_its_subject(engine: Engine) -> None:
    """今は / 最近は say when, not what: two claims led by 今は are about two things."""
    first, second = "今はReactを使っています。", "今はFastmailです。"
    assert _said(engine, first, second) == {first: "active", second: "active"}
    assert {i.subject for i in extract("最近は朝型です。")} != {"最近"}
    assert extract("まだ決まっていません。") == []


def test_a_japanese_restatement_with_the_value_first_is_one_item(engine: Engine) -> None:
    """"確認ですが、7月15日が納期です" restates 納期は7月15日です: the discourse lead is
    no subject, and a value before が names the noun after it."""
    old, new = "納期は7月15日です。", "確認ですが、7月15日が納期です。"
    assert list(_said(engine, old, new).values()) == ["merged", "active"]


def test_a_name_with_a_version_before_ga_stays_the_subject(engine: Engine) -> None:
    """"Python 3.12が必要です" says what is needed, not a value of 必要: "Node 20が必要
    です" adds a requirement and rivals nothing."""
    first, second = "Python 3.12が必要です。", "Node 20が必要です。"
    assert {i.subject for t in (first, second) for i in extract(t)} == {"python", "node"}
    assert _said(engine, first, second) == {first: "active", second: "active"}


@pytest.mark.parametrize("old, rival, update", [
    ("The memory limit is 4 GB.", "The memory usage is 3.2 GB now.",
     "The memory limit is 8 GB now."),
    ("The p95 latency is 573 ms.", "The p95 latency target is 450 ms now.",
     "The p95 latency is 450 ms now."),
    ("The p95 latency target is 500 ms.",
     "The p95 latency is 573 ms after yesterday's change.",
     "The p95 latency target is 450 ms now."),
    ("The build time is 12 minutes.", "The build time goal is 8 minutes now.",
     "The build time is 8 minutes now."),
    ("The heap limit is 4 GB.", "The heap's usage is 3 GB now.",
     "The heap limit is 8 GB now."),
    ("The CPU usage is 60%.", "The CPU usage limit is 80% now.", "The CPU usage is 70% now."),
    ("The pod memory-limit is 4 GB.", "The pod memory-usage is 3 GB now.",
     "The pod memory-limit is 8 GB now."),
])
def test_a_rival_attribute_of_one_thing_revises_nothing(
        tmp_path: Path, old: str, rival: str, update: str) -> None:
    """Two attributes of one thing, each given its own value (a usage and its limit, a
    measure and its target) are two items; the same attribute said again revises."""
    _beside_but_replaced(tmp_path, old, rival, update)


@pytest.mark.parametrize("old, update", [
    ("The port is 5432.", "Actually the port number is 5433."),
    ("The API rate limit is 100 rps.", "Rate limiting for the API is now 200 rps."),
    # one word spelled with and without a hyphen is one head
    ("The CI build timeout is 30 minutes.", "The CI build time-out is 45 minutes now."),
    ("The redis max-memory is 2 GB.", "The redis maxmemory is 4 GB now."),
    # a head continued by a noun that is no bound of it names it again
    ("The cache is 2 GB.", "The cache size is 4 GB now."),
    ("The retention is 30 days.", "The retention period is 60 days now."),
    ("The rate limit is 100 rps.", "The rate limit threshold is 200 rps now."),
    ("The max connections is 100.", "The max connections limit is 200 now."),
    ("The target latency is 200 ms.", "The target latency goal is 150 ms now."),
    # two heads neither of which is a bound or a use: one attribute named again
    ("The DB size is 10 GB.", "The DB storage is 12 GB now."),
    ("The session timeout is 30 minutes.", "The session expiry is 60 minutes now."),
])
def test_another_wording_of_one_attribute_still_revises(engine: Engine, old: str,
                                                         update: str) -> None:
    assert _said(engine, old, update) == {old: "superseded", update: "active"}


@pytest.mark.parametrize("old, rival, update", [
    # "min" is a unit word only after a number ("5 min")
    ("The min pool size is 5.", "The max pool size is 50 now.", "The min pool size is 8 now."),
    # a word and the same word with a particle are two nouns
    ("The deploy time is 6 minutes.", "The deploy timeout is 20 minutes now.",
     "The deploy time is 8 minutes now."),
    ("The idle timeout is 15 minutes.", "The idle time is 5 minutes now.",
     "The idle timeout is 30 minutes now."),
])
def test_attributes_one_word_apart_revise_nothing(tmp_path: Path, old: str, rival: str,
                                                  update: str) -> None:
    """Two attributes whose subjects differ in one word are two items; the same
    attribute said again revises."""
    _beside_but_replaced(tmp_path, old, rival, update)


@pytest.mark.parametrize("old, update", [
    ("The req timeout is 5 s.", "The request timeout is 8 s now."),
    ("The avg response time is 200 ms.", "The average response time is 150 ms now."),
    ("The max retries is 3.", "The maximum retries is 5 now."),
    ("The env var limit is 64.", "The environment variable limit is 100 now."),
    ("The sign up limit is 5 per hour.", "The signup limit is 10 per hour now."),
    ("The e-mail quota is 200 per day.", "The email quota is 500 per day now."),
])
def test_an_attribute_spelled_another_way_still_revises(engine: Engine, old: str,
                                                         update: str) -> None:
    """Words cut short and compounds written open, hyphenated or closed name one
    attribute."""
    assert _said(engine, old, update) == {old: "superseded", update: "active"}


@pytest.mark.parametrize("a, b, text_a, text_b", [
    ("tls version", "tools version", "The TLS version is 1.2.", "The tools version is 3."),
    ("build time", "build timeout", "The build time is 4.", "The build timeout is 10."),
    ("admin port", "admin portal", "The admin port is 8443.", "The admin portal is x."),
    ("product team", "productive team", "The product team is 8.", "x"),
    ("png size", "playing size", "The png size is 2.", "The playing size is 3."),
])
def test_words_that_start_alike_are_no_spelling(a: str, b: str, text_a: str,
                                                text_b: str) -> None:
    assert not spelled_alike(a, b, text_a, text_b)


@pytest.mark.parametrize("old, new", [
    # a verb of change gives the new value as a copula does (memory_replays row 96)
    ("The memory limit is 4 GB.", "Memory usage went up to 3.5 GB."),
    ("The CPU limit is 80%.", "CPU went up to 95%."),
    ("The CPU limit is 80%.", "The CPU usage rose to 95%."),
])
def test_a_measure_that_rose_is_no_new_value_of_its_limit(
        engine: Engine, old: str, new: str) -> None:
    assert _said(engine, old, new) == {old: "active", new: "active"}


def test_a_limit_that_went_up_replaces_the_limit(engine: Engine) -> None:
    old, new = ("The API rate limit is 100 requests per second.",
                "The API rate limit went up to 200 requests per second.")
    assert _said(engine, old, new) == {old: "superseded", new: "active"}
