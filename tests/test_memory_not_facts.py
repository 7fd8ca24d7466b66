"""What is not a fact does not become a long-term item (issue 24): hypotheticals,
hedges, one-off requests that hold a number, machine text pasted without a fence.

Extraction-level checks run ``extract`` on whole messages; engine-level checks store
them through the writer (real SQLite) and read the rows back; proxy-level checks read
the block the upstream received."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from memory_core.assembly.block import standing_weight
from memory_core.engine import Engine
from memory_core.evaluation.extraction import stands
from memory_core.extraction import Extracted, extract
from memory_core.extraction.prepare import prepare
from memory_core.items import standing, writer
from memory_core.models import Scope
from tests.conftest import RunningProxy, sql_read
from tests.fake_upstream import FakeUpstream
from tests.test_injection import Agent, block_of

SCOPE = Scope("t", "coder")


def put(engine: Engine, text: str) -> None:
    engine.store.write_tx_sync(lambda c: writer.store_extracted(
        c, SCOPE, 1, None, extract(text)))  # type: ignore[arg-type]  # items, no message


def rows(engine: Engine) -> list[dict[str, Any]]:
    return sql_read(engine, lambda c: [dict(r) for r in c.execute(
        "SELECT id, text, status, supersedes, superseded_by, conflict_with, data"
        " FROM memory_items ORDER BY id")])


def as_row(ex: Extracted) -> dict[str, Any]:
    return {"kind": ex.kind, "text": ex.text, "value": ex.value, "evidence": "user",
            "supersedes": None, "condition": ex.condition, "source_message_id": 1,
            "data": orjson.dumps(standing.extraction_data(ex)).decode()}


# -- hypotheticals ---------------------------------------------------------------------------
HYPOTHETICALS = [
    "If we had 10 nodes, the job would finish in an hour.",
    "The job would finish in an hour if we had 10 nodes.",
    "We could finish the migration in two weeks if we hired another engineer.",
    "Imagine the budget is 500 euros.",
    "Suppose the budget is 500 euros.",
    "Had we used Redis, the p99 would be 20 ms.",
    "If we moved to Postgres, the p99 would drop to 20 ms.",
    "如果我们有10台机器，任务一小时就能跑完。",
    "假如预算是500元的话，我们可以买新服务器。",
    "要是超时设成60秒的话，就不会报错了。",
    "もしノードが10台あったら、ジョブは1時間で終わる。",
    "予算が500ユーロなら、新しいサーバーを買える。",
]


@pytest.mark.parametrize("text", HYPOTHETICALS)
def test_a_hypothetical_states_nothing(text: str) -> None:
    assert extract(text) == [], extract(text)


def test_a_conditional_fact_or_rule_is_not_a_hypothetical() -> None:
    # The consequence decides: a counterfactual modal or an imagined premise is not
    # stated; a present-tense fact or an order under a condition is.
    assert extract("If we had 10 nodes, the job would finish in an hour.") == []
    for text, value in (("If the client is offline, the timeout is 60 s.", 60),
                        ("If the request fails, retry 3 times.", 3),
                        ("如果离线，超时是60秒。", 60),
                        ("オフラインなら、タイムアウトは60秒です。", 60),
                        ("It would be great if replies stayed under 100 words.", None)):
        items = extract(text)
        if value is not None:
            assert [i.value for i in items] == [value], (text, items)
    for text in ("I'd prefer short answers if possible.",  # politeness, not a supposition
                 "We'd like replies in JSON if that works."):
        assert [i.kind for i in extract(text)] == ["preference"], text
    (fact,) = extract("Our API listens on 8080, but if we had more nodes it would be faster.")
    assert fact.value == 8080 and fact.subject == "api"


# -- hedges ---------------------------------------------------------------------------------
HEDGES = [
    ("I think the limit is 50 requests per second.", "limit"),
    ("Maybe the timeout is 30 s.", "timeout"),
    ("The timeout is probably 30 s.", "timeout"),
    ("Not sure but the port might be 8080.", "port"),
    ("I believe the budget is 200 euros.", "budget"),
    ("I guess the staging cluster has 12 nodes.", "staging cluster"),
    ("我觉得限额是每秒50个请求。", "限额"),
    ("超时可能是30秒。", "超时"),
    ("也许端口是8080。", "端口"),
    ("预算大概是200欧元。", "预算"),
    ("タイムアウトはたぶん30秒です。", "タイムアウト"),
    ("上限は50件かもしれない。", "上限"),
    ("ポートは8080だと思う。", "ポート"),
]


@pytest.mark.parametrize("text, subject", HEDGES)
def test_a_hedged_statement_is_kept_tentative_and_never_stands(text: str, subject: str) -> None:
    (item,) = extract(text)
    assert item.kind == "fact" and item.subject == subject and item.value is not None, item
    assert item.tentative and not stands(item), item
    assert standing_weight(as_row(item)) == 0


def test_firm_statements_and_approximations_are_not_hedges() -> None:
    for text in ("The limit is 50 requests per second.", "I'm pretty sure the port is 5432.",
                 "The job takes about 40 minutes.", "服务器在新加坡，延迟大概120毫秒。",
                 "タイムアウトは30秒です。"):
        items = [i for i in extract(text) if i.value is not None]
        assert items and not any(i.tentative for i in items), (text, items)
        assert all(stands(i) for i in items), (text, items)
    # a hedge scopes its own clause: the firm one beside it stands
    firm, guess = extract("The port is 8080, but I think the timeout is 30 s.")
    assert not firm.tentative and guess.tentative and guess.subject == "timeout"


def test_a_firm_statement_supersedes_a_guess_without_a_conflict(engine: Engine) -> None:
    put(engine, "I think the limit is 50 requests per second.")
    put(engine, "The limit is 60 requests per second.")
    guess, firm = rows(engine)
    assert guess["status"] == "superseded" and guess["superseded_by"] == firm["id"]
    assert firm["status"] == "active" and firm["conflict_with"] is None
    assert firm["supersedes"] is None  # settling a guess is not a correction


def test_a_firm_statement_confirming_a_guess_replaces_it(engine: Engine) -> None:
    put(engine, "Maybe the timeout is 30 s.")
    put(engine, "The timeout is 30 s.")
    guess, firm = rows(engine)
    assert (guess["status"], firm["status"]) == ("superseded", "active"), rows(engine)
    assert not standing.tentative(firm)


def test_a_firm_statement_about_something_else_leaves_the_guess(engine: Engine) -> None:
    put(engine, "Maybe the new office opens in March.")
    put(engine, "The new office has a rooftop garden.")
    assert [r["status"] for r in rows(engine)] == ["active", "active"], rows(engine)
    put(engine, "The new office opens in April.")  # this one answers it
    assert [r["status"] for r in rows(engine)] == ["superseded", "active", "active"]


@pytest.mark.parametrize("guess, answer", [
    ("我猜负责人可能是小张。", "负责人是小王。"),
    ("我觉得他最喜欢的颜色可能是蓝色。", "他最喜欢的颜色是绿色。"),
    ("たぶん好きな色は青です。", "好きな色は緑です。"),
    ("I guess the flaky test is test_upload.", "The flaky test turned out to be test_login."),
    ("I think my manager will be Sam.", "My manager is Alex."),
])
def test_a_firm_answer_settles_the_guess_in_each_language(
        engine: Engine, guess: str, answer: str) -> None:
    """The guess is read without its hedge (我猜, 可能, たぶん), a judging word that names
    the subject (最喜欢的, 好きな) judges nothing, and "will be" / "turned out to be"
    are "be": each answer settles its guess."""
    put(engine, guess)
    put(engine, answer)
    assert [r["status"] for r in rows(engine)] == ["superseded", "active"], rows(engine)


def test_a_guess_neither_supersedes_nor_conflicts_with_a_firm_statement(engine: Engine) -> None:
    put(engine, "The limit is 60 requests per second.")
    put(engine, "Actually, I think the limit is 50 requests per second.")
    put(engine, "Maybe the limit is 40 requests per second.")
    firm, *guesses = rows(engine)
    assert firm["status"] == "active" and firm["conflict_with"] is None
    assert all(g["status"] == "active" and g["conflict_with"] is None
               and g["supersedes"] is None and standing.tentative(g) for g in guesses), guesses


async def test_a_guess_does_not_stand_and_is_shown_as_unsure(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    first = Agent(proxy, upstream, session="one")
    await first.say("I think the upload limit is 50 files per batch.")
    await first.say("The API timeout is 30 s.")
    await proxy.settle()
    other = Agent(proxy, upstream, session="two")
    await other.say("What should the retry policy of the sync client look like?")
    block = block_of(other.upstream_last_user())
    assert "30 s" in block and "upload limit" not in block, block  # the firm one stands
    await other.say("What is the upload limit per batch?")
    block = block_of(other.upstream_last_user())
    line = next(x for x in block.splitlines() if "upload limit" in x)
    assert "unsure" in line and "CONFLICTS" not in block, block


# -- one-off requests that hold a number ------------------------------------------------------
ONE_OFF = ["Give me 5 ideas for a team name.", "Summarise this in 3 bullet points.",
           "Write a 200-word intro for the blog post.", "List 10 names for the cat.",
           "Brainstorm 10 names for the new service.", "用3个要点总结一下。",
           "请列出5个团队名称。", "アイデアを5つください。"]


@pytest.mark.parametrize("text", ONE_OFF)
def test_a_request_counting_the_answer_is_a_one_off(text: str) -> None:
    for item in extract(text):
        row = as_row(item)
        assert standing_weight(row) == 0 and standing.conversation_local(row), item


def test_rules_with_numbers_still_stand() -> None:
    (one,) = extract("Give me 5 ideas for a team name.")
    assert one.one_off
    for text in ("Retry 3 times.", "Keep replies under 200 words.",
                 "Always give me 3 options.", "Please keep each PR under 400 lines of diff.",
                 "以后每次回答都用3个要点。", "回答不超过200字。", "並列数は3つにしてください。"):
        (item,) = extract(text)
        assert not item.one_off and stands(item), (text, item)


ON_THE_WORK = [
    # orders on material at hand: the number points into it, it sets no lasting value
    "Fix the off-by-one on line 42 of parser.py.",
    "List the top 10 slowest queries from that dump.",
    "Summarise the log above in 5 bullets.",
    # scoped to this answer, "always" included
    "Always show the diff in this answer.",
    "这个回答控制在100字以内。",
    "この返信は200字以内でお願いします。",
    "この回答では、変更点を常に差分で見せて。",
    # plain requests about the work at hand (Japanese te-form), 把这个… orders
    "42行目のバグを直して。",
    "この関数を3つのテストで確認して",
    "把这个变量名改成 user_count。",
    # the next order of a conversation, not an update; someone else's rule
    "Now translate that paragraph into Spanish.",
    "Some blog I read says you should always rebase instead of merge.",
]


@pytest.mark.parametrize("text", ON_THE_WORK)
def test_an_order_on_the_work_at_hand_is_no_standing_item(text: str) -> None:
    assert [i for i in extract(text) if stands(i)] == []
    assert not any(i.correction for i in extract(text)), extract(text)


@pytest.mark.parametrize("text", [
    "Always show the diff from now on.",
    "Keep retries at 3 so that the job fails fast.",
    "Cap every reply at 200 words.",
    "以后回答都控制在100字以内。",
    "今後は返信を200字以内にしてください。",
    "常にテストを書いてね。",
    "In this repo we never merge without a review.",
    "In this repo, never push to main directly.",
    # a word of STANDING_RULE other than always/never, a bound, the answers in general
    "You must not touch that table.",
    "Don't use that library anymore.",
    "Use Python 3.11 or above.",
    "Keep PRs to 400 lines or below.",
    "Please keep these answers under 200 words.",
    "Show the first 3 lines of those stack traces in all bug reports.",
])
def test_the_same_orders_said_to_last_still_stand(text: str) -> None:
    assert any(stands(i) for i in extract(text)), extract(text)


@pytest.mark.parametrize("text", [
    "このサービスのログは英語で書いてください。",  # a lasting scope, not material at hand
])
def test_a_lasting_scope_named_with_this_is_no_one_off(text: str) -> None:
    assert extract(text) and not any(i.one_off for i in extract(text)), extract(text)


@pytest.mark.parametrize("text", ["会議は3時からだって。", "デプロイは金曜日だって。"])
def test_japanese_hearsay_in_tte_is_no_order(text: str) -> None:
    assert not any(i.kind == "constraint" for i in extract(text)), extract(text)


@pytest.mark.parametrize("text", ["Now keep answers under 100 words.",
                                  "Now use 4 spaces for indentation."])
def test_now_before_a_lasting_order_revises_the_earlier_rule(text: str) -> None:
    (item,) = extract(text)
    assert item.kind == "constraint" and item.correction and stands(item), item


def test_a_subjectless_ba_order_is_no_update_but_a_done_swap_is() -> None:
    assert any(i.correction for i in extract("把这个项目的超时改成30秒。"))  # a lasting scope
    assert not any(i.correction for i in extract("把这个变量名改成 user_count。"))
    assert any(i.correction for i in extract("我们把Jenkins换成了GitLab CI。"))
    assert any(i.correction for i in extract("Now we deploy with Argo CD."))


@pytest.mark.parametrize("text", [
    "Now test coverage is 85%.",  # a noun that is also a verb, then the statement's verb
    "Now build times are under 5 minutes.",
    "Now review requests go to Dana.",
])
def test_now_before_a_noun_that_is_also_a_verb_is_an_update(text: str) -> None:
    assert any(i.correction for i in extract(text)), extract(text)


async def test_a_counted_request_stays_in_its_conversation(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    first = Agent(proxy, upstream, session="one")
    await first.say("Give me 5 ideas for a team name.")
    await proxy.settle()
    other = Agent(proxy, upstream, session="two")
    await other.say("Which ideas do you have for the team offsite?")
    assert "5 ideas" not in block_of(other.upstream_last_user())


# -- machine text pasted without a fence ------------------------------------------------------
TRACEBACK = ('Traceback (most recent call last):\n  File "app.py", line 12, in <module>\n'
             '    main()\n  File "app.py", line 8, in main\n'
             '    raise ValueError("port must be 8080")\nValueError: port must be 8080')
JSON_BLOB = ('{\n  "id": 42,\n  "retries": 5,\n  "description": "'
             + "The upload limit must be 50 files per batch, " * 12 + '"\n}')
"""A JSON object whose long string value the quote masking does not cover."""
PASTES = [
    TRACEBACK,
    "2024-05-01 12:00:01 ERROR worker timeout is 30 s, retrying\n"
    "2024-05-01 12:00:02 INFO retry limit must be 5",
    "ERROR worker pool must stay under 8 workers\nWARN retry limit must be 5",
    "ERROR [worker] pool must stay under 8 workers.\nWARN worker-1 retry limit must be 5.",
    "level=warn the retry limit must be 5\nlevel=error the worker timeout is 30 s",
    "service,port,note\napi,8080,must be reachable\nworker,9090,timeout is 60 s",
    "service\tport\tnote\napi\t8080\tmust be reachable",
    JSON_BLOB,
    "$ kubectl describe pod api-1\nRestart Count: 5\nLimits: cpu 500m memory 512Mi",
    'Exception in thread "main" java.lang.IllegalStateException: max pool size must be 10\n'
    "\tat com.example.Pool.start(Pool.java:42)\n\tat com.example.Main.main(Main.java:7)",
    "TypeError: the port must be a number\n    at Server.listen (server.js:10:5)\n"
    "    at main (index.js:3:1)",
]


@pytest.mark.parametrize("paste", PASTES)
def test_unfenced_machine_text_yields_no_item_but_prose_around_it_does(paste: str) -> None:
    assert extract(paste) == [], extract(paste)
    text = f"Our API listens on 8080. Here's what I got:\n{paste}\nThe budget is 500 euros."
    assert [(i.subject, i.value) for i in extract(text)] == [("api", 8080), ("budget", 500)]
    assert len(prepare(text)) == len(text)


def test_prose_that_looks_a_little_like_a_paste_is_still_read() -> None:
    assert [i.value for i in extract("WARNING: never push to main on Fridays after 16:00.")]
    lines = ["We use Postgres, Redis, and Kafka.",
             "The budget is 500, the deadline Friday, and the team 4.",
             "Plan:", "2024-05-01: deploy freeze starts", "$5 is the max per user."]
    values = [i.value for i in extract("\n".join(lines))]
    assert 500 in values and 4 in values, values
    assert extract(TRACEBACK) == []


def test_a_pasted_traceback_leaves_no_item_in_the_store(engine: Engine) -> None:
    put(engine, "The deploy failed:\n" + TRACEBACK + "\nThe staging port is 5433.")
    texts = [r["text"] for r in rows(engine)]
    assert any("5433" in t for t in texts) and not any("ValueError" in t for t in texts), texts


@pytest.mark.parametrize("text", [
    "Keep it under 100 words.", "Use Python 3.11 for this script.",
    "Use a 2 s timeout this time.", "Limit the answer to 50 words.",
    "Cap the summary at 3 sentences.", "Thanks. Keep it under 100 words.",
])
def test_an_order_scoped_to_this_answer_does_not_stand_whatever_its_bound(text: str) -> None:
    """"it", "this script", "this time": the order is about the answer at hand."""
    items = extract(text)
    assert [i.kind for i in items] == ["constraint"], items
    assert items[0].one_off and not stands(items[0]), items


@pytest.mark.parametrize("text", [
    "Keep replies under 200 words.", "Set it to 30 s.", "Keep it under 100 words from now on.",
    "Use 4 spaces for this file and every file from now on.",
    # "it" is a setting named earlier, and the number counts no part of an answer
    "Limit it to 3 retries.", "Cap it at 40 connections.", "Make it 60 seconds.",
])
def test_an_order_for_later_answers_still_stands(text: str) -> None:
    items = extract(text)
    assert items and all(stands(i) and not i.one_off for i in items), items


def test_a_fact_about_this_time_stays_a_fact() -> None:
    items = extract("The build took 5 minutes this time.")
    assert [i.kind for i in items] == ["fact"] and not items[0].one_off, items


# -- review of the hypothetical, hedge and paste rules (firm statements kept) -----------------
@pytest.mark.parametrize("text, kind, subject", [
    ("Please always answer in German if you can, it would be much easier for me.",
     "preference", None),
    ("If possible, keep answers short, it would help me a lot.", "constraint", None),
    ("If you need me, I live in Berlin and I could meet on Fridays.", "fact", "home"),
    ("The service would crash if the pool size exceeded 50, so we cap it at 40.", "fact", None),
    ("如果有问题，我们的服务器端口是8080，可以直接访问。", "fact", "服务器端口"),
    ("必要なら、私の電話番号は090-1234-5678で、いつでも連絡できます。", "fact", "電話番号"),
    ("Imagine Dragons is my favorite band.", "preference", None),
])
def test_a_polite_condition_or_a_clause_after_a_supposition_is_stated(
        text: str, kind: str, subject: str | None) -> None:
    items = [i for i in extract(text) if i.kind == kind]
    assert items and not any(i.tentative for i in items), (text, extract(text))
    if subject is not None:
        assert subject in [i.subject for i in items], (text, items)
    if "cap it at 40" in text:
        assert [i.value for i in items] == [40], items


@pytest.mark.parametrize("text, subjects", [
    ("About me\nMy kids are Tom, Anna and Ben, all under 10\n"
     "I live in Berlin, Germany, near the park", {"kids", "home"}),
    ("WARNING: never push to main\nERROR handling must use Result types.", {"error handling"}),
])
def test_chat_lines_with_commas_or_a_level_word_are_not_a_paste(
        text: str, subjects: set[str]) -> None:
    assert subjects <= {i.subject for i in extract(text)}, extract(text)


def test_a_hedge_in_a_word_or_a_relative_clause_leaves_the_statement_firm() -> None:
    for text in ("私の会社は素晴らしい会社で、社員は50人です。",
                 "I live in Austin, which is probably the best city."):
        items = extract(text)
        assert items and not any(i.tentative for i in items), (text, items)


def test_unclosed_brackets_and_repeated_cues_cost_linear_time() -> None:
    # Bounded work, checked by a count rather than a clock: the pairing pass reads each
    # character once, and a sentence's "if" cues are read up to a bound.
    from memory_core.extraction import modality
    from memory_core.extraction.prepare import machine_spans
    assert machine_spans("[\n" * 6000) == []
    assert [i.text for i in extract("Config dump follows\n" + "  [\n" * 4000)] \
        == ["Config dump follows"]
    calls = 0
    real = modality._modal

    def counting(*args: Any) -> Any:
        nonlocal calls
        calls += 1
        return real(*args)

    modality._modal = counting  # type: ignore[assignment]
    try:
        text = "if I'd like " * 1700
        modality.hypothetical(text, 0, len(text), "en")
    finally:
        modality._modal = real
    assert calls <= 16, calls
