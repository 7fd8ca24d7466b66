"""Task state said without a label (issue 24): "Next, …", "Still need to …", "Done with
step 2", "Blocked on …", "Let's pause …", "The goal is …", 下一步/待办/已完成/卡在,
次は/完了/ブロック. Through the extractor, the writer (a TODO closed when its work is
reported done, a blocker closed when the work resumes) and the proxy with the real SDK
(the block shows a thread's task state in that thread, not in another of the same key).
"""

from __future__ import annotations

import pytest

from memory_core.engine import Engine
from memory_core.evaluation.extraction import stands
from memory_core.extraction import extract
from memory_core.items import writer
from memory_core.models import Scope
from tests.conftest import RunningProxy
from tests.fake_upstream import FakeUpstream
from tests.test_injection import Agent, block_of

SCOPE = Scope("t", "coder")


def tasks(text: str) -> list[tuple[str | None, str]]:
    return [(i.task_label, i.text) for i in extract(text) if i.kind == "task"]


# -- the extractor ------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "label"), [
    ("Next, add the migration for the orders table.", "todo"),
    ("Then write the tests for the empty month.", "todo"),
    ("Still need to update the README.", "todo"),
    ("We still have to bump the runner image to ubuntu-24.04.", "todo"),
    ("The api.example.com records are next.", "todo"),
    ("The next thing I need to write is the budget table.", "todo"),
    ("Let's find out why the checkout test is flaky.", "todo"),
    ("Resume the migration at step 3.", "todo"),
    ("Done with step 2.", "progress"),
    ("Step 3 is done.", "progress"),
    ("Fake clock is merged.", "progress"),
    ("Finished the backfill for January.", "progress"),
    ("Blocked on the staging credentials from ops.", "blocked"),
    ("I'm blocked by IAM.", "blocked"),
    ("We can't open the vendor ticket yet, we're waiting on the account owner.", "blocked"),
    ("Let's pause the migration until the freeze is over.", "blocked"),
    ("The goal is to cut p95 latency below 200 ms.", "goal"),
    ("Goal for this sprint: every DNS record managed by Terraform.", "goal"),
    ("What I'm trying to do today is backfill the events table.", "goal"),
    ("下一步是把日志接到 Loki。", "todo"),
    ("还需要把 CI 的 Python 版本改成 3.11。", "todo"),
    ("已完成第二步。", "progress"),
    ("PyMySQL 已经换好了。", "progress"),
    ("卡在数据库权限上了。", "blocked"),
    ("这次的目标是把订单服务迁移到 Python 3。", "goal"),
    ("次は認証のテストを書きます。", "todo"),
    ("リカバリーコードの生成が残っています。", "todo"),
    ("TOTPのシークレット保存は完了しました。", "progress"),
    ("SMTPの認証情報がないのでブロックされています。", "blocked"),
    ("今回のゴールは、二段階認証を追加することです。", "goal"),
])
def test_a_status_without_a_label_is_task_state(text: str, label: str) -> None:
    found = [i for i in extract(text) if i.kind == "task"]
    assert [i.task_label for i in found] == [label], extract(text)
    assert not any(stands(i) for i in extract(text))


@pytest.mark.parametrize("text", [
    # requests of the moment: the next answer carries them out
    "Fix the typo on line 12.",
    "Summarise the alert timeline above in five bullets.",
    "Show me the diff of the last commit.",
    "Please add a --dry-run flag to the CLI.",
    "帮我把上面这段报错翻译成英文。",
    "このエラーの意味を説明してください。",
    # look-alikes that are no work of the conversation
    "I'm stuck in traffic, back online in 30 min.",
    "I'm done for today, let's pick it up tomorrow.",
    "The goal of the game is to reach 100 points first.",
    "The goal of the project was to make the parser faster.",
    "I read 42 books last year, and my goal this year is 50.",
    "目標は58キロです。",
    "Next Tuesday I'm flying to Oslo.",
    "The next release is 4.2, planned for May.",
    "We need to talk about the on-call rotation at some point.",
    "Sounds good, let's go with the fake clock.",
    "Let's do the Redis Streams approach.",
    "Always run `make lint` before you tell me something is done.",
    "We migrated the marketing site from Heroku to Fly.io.",
    "Finished a lighthouse painting last night.",
    "The migration is not done yet.",
    "Is step 2 done?",
    "第二步还没完成。",
    "数据库已经升级到 MySQL 8.0 了。",  # a move to a value: an update of the fact
])
def test_no_task_state_where_no_work_is_set_or_reported(text: str) -> None:
    assert tasks(text) == [], extract(text)


def test_each_piece_of_work_is_its_own_todo() -> None:
    assert tasks("We still need to add a lint step for the .tf files and write the runbook.") \
        == [("todo", "We still need to add a lint step for the .tf files"),
            ("todo", "write the runbook")]
    assert [label for label, _ in tasks("下一步是把 print 语句全部改掉，然后跑一遍单元测试。")] \
        == ["todo", "todo"]


def test_a_status_keeps_the_other_statements_of_its_sentence() -> None:
    items = extract("Finished the backfill; the index rebuild is next.")
    assert [(i.kind, i.task_label) for i in items] == [("task", "progress"), ("task", "todo")]
    mixed = extract("Blocked on the staging DB. Never commit the sample invoices.")
    assert [i.kind for i in mixed] == ["task", "constraint"]
    assert stands(mixed[1])


def test_the_task_names_its_work_not_its_cue() -> None:
    blocked = next(i for i in extract("Blocked on the staging credentials from ops.")
                   if i.kind == "task")
    assert blocked.subject is not None and "staging credentials" in blocked.subject
    done = next(i for i in extract("IAM is fixed.") if i.kind == "task")
    assert done.subject == "iam"


def test_assistant_reports_stay_proposals_only() -> None:
    assert extract("Step 1 is done. Next, I'll wire the URL.", speaker="assistant") == []


# -- the writer: done closes the TODO, resume closes the blocker ----------------------------
def put(engine: Engine, text: str, thread: int = 1) -> None:
    engine.store.write_tx_sync(
        lambda c: writer.store_extracted(c, SCOPE, thread, None, extract(text)))


def state(engine: Engine, thread: int = 1) -> dict[str, tuple[str, str]]:
    return {r["text"]: (r["label"], r["status"]) for r in engine.task_state(thread)}


def test_a_todo_is_closed_when_its_work_is_reported_done(engine: Engine) -> None:
    put(engine, "Next, add the migration for the orders table.")
    put(engine, "Still need to update the README.")
    put(engine, "The orders migration is done.")
    assert state(engine) == {
        "Next, add the migration for the orders table": ("todo", "done"),
        "Still need to update the README": ("todo", "open"),
        "The orders migration is done": ("progress", "open")}


def test_cjk_todos_close_on_done(engine: Engine) -> None:
    put(engine, "下一步是把日志接到 Loki。")
    put(engine, "日志已经接到 Loki 了。")
    put(engine, "次はQRコードの表示をお願いします。")
    put(engine, "QRコードの表示は終わりました。")
    todos = {t: s for t, (label, s) in state(engine).items() if label == "todo"}
    assert todos == {"下一步是把日志接到 Loki": "done", "次はQRコードの表示をお願いします": "done"}


def test_paused_work_is_blocked_until_it_resumes(engine: Engine) -> None:
    put(engine, "Let's pause the migration until the Black Friday freeze is over.")
    assert list(state(engine).values()) == [("blocked", "open")]
    put(engine, "Freeze is over. Resume the migration at step 3.")
    assert state(engine) == {
        "Let's pause the migration until the Black Friday freeze is over": ("blocked", "done"),
        "Resume the migration at step 3": ("todo", "open")}


def test_task_state_stays_in_its_thread(engine: Engine) -> None:
    put(engine, "Blocked on the staging credentials from ops.", thread=1)
    put(engine, "Next, write the runbook.", thread=2)
    assert [label for label, _ in state(engine, 1).values()] == ["blocked"]
    assert [label for label, _ in state(engine, 2).values()] == ["todo"]


# -- through the proxy, with the real SDK -----------------------------------------------------
async def test_the_block_shows_a_threads_task_state_there_and_not_in_another(
        proxy: RunningProxy, upstream: FakeUpstream) -> None:
    coding = Agent(proxy, upstream, session="ticket-481")
    await coding.say("We're adding a CSV export to the invoices page.")
    await coding.say("Next, add the migration for the orders table.")
    await coding.say("Blocked on the staging credentials from ops.")
    await coding.say("Which file holds the invoice view?")
    block = block_of(coding.upstream_last_user())
    assert "TODO: Next, add the migration for the orders table" in block
    assert "Blocked: Blocked on the staging credentials from ops" in block

    other = Agent(proxy, upstream, session="ticket-502")  # same key and role
    await other.say("Hi, can you help me with a flaky test in the orders migration?")
    await other.say("What should I look at first?")
    elsewhere = block_of(other.upstream_last_user())
    assert "add the migration for the orders table" not in elsewhere
    assert "staging credentials" not in elsewhere

    await coding.say("The orders migration is done.")
    await coding.say("What's left?")
    after = block_of(coding.upstream_last_user())
    assert "TODO: Next, add the migration" not in after
    assert "Progress: The orders migration is done" in after
    assert "Blocked: Blocked on the staging credentials from ops" in after
