"""Writer-side memory rules: supersession chains, conflicts, restatements, task state."""

from __future__ import annotations

import pytest

from memory_core.engine import Engine
from memory_core.extraction import Extracted, extract
from memory_core.items import writer
from memory_core.items.overlap import overlap, terms
from memory_core.models import Scope
from tests.conftest import sql_read

SCOPE = Scope("t", "coder")


def put(engine: Engine, text: str, message_id: int | None = None) -> list[int]:
    return engine.store.write_tx_sync(
        lambda c: writer.store_extracted(c, SCOPE, 1, message_id, extract(text)))


def items(engine: Engine) -> list[dict]:
    return sql_read(engine, lambda c: [dict(r) for r in c.execute(
        "SELECT id, text, status, supersedes, superseded_by, conflict_with, value"
        " FROM memory_items ORDER BY id")])


def status_by_value(engine: Engine) -> dict[float | None, str]:
    return {r["value"]: r["status"] for r in items(engine)}


def test_correction_chain_a_b_c(engine: Engine) -> None:
    put(engine, "The API timeout is 30 s when offline.")
    put(engine, "Actually, the API timeout is 45 s when offline.")
    put(engine, "Correction: the API timeout is 60 s when offline.")
    rows = items(engine)
    assert [(r["value"], r["status"]) for r in rows] == [
        (30.0, "superseded"), (45.0, "superseded"), (60.0, "active")]
    assert rows[0]["superseded_by"] == rows[1]["id"] and rows[1]["supersedes"] == rows[0]["id"]
    assert rows[1]["superseded_by"] == rows[2]["id"] and rows[2]["supersedes"] == rows[1]["id"]


def test_correction_reaches_an_item_older_than_many_others(engine: Engine) -> None:
    put(engine, "The staging database port is 5433.")
    for i in range(600):
        engine.store.write_tx_sync(lambda c, i=i: writer.store_extracted(c, SCOPE, 1, None, [
            Extracted(kind="fact", text=f"service {i} runs", subject=f"service {i}")]))
    put(engine, "Actually, the staging database port is 5434.")
    first = items(engine)[0]
    assert first["value"] == 5433.0 and first["status"] == "superseded"


def test_conflict_keeps_both_visible_until_corrected(engine: Engine) -> None:
    put(engine, "The budget is 5000 USD.")
    put(engine, "The budget is 6000 USD.")
    a, b = items(engine)
    assert a["status"] == b["status"] == "active" and b["conflict_with"] == a["id"]
    put(engine, "Correction: the budget is 6000 USD.")
    rows = items(engine)
    assert [r["status"] for r in rows].count("active") == 1
    assert rows[-1]["status"] == "active" and rows[-1]["value"] == 6000.0


def test_restatement_is_not_a_duplicate(engine: Engine) -> None:
    assert put(engine, "The staging database port is 5433.")
    assert put(engine, "The staging database port is 5433.") == []
    assert len(items(engine)) == 1
    revisions = sql_read(engine, lambda c: c.execute(
        "SELECT field FROM memory_item_revisions").fetchall())
    assert [r[0] for r in revisions] == ["restated"]


def test_task_lines_merge(engine: Engine) -> None:
    put(engine, "Goal: ship the importer\nTODO: write the CSV reader\nBlocked: no test data")
    put(engine, "Goal: ship the importer and the exporter")
    put(engine, "Progress: finished the CSV reader")
    state = {(r["label"], r["status"]) for r in engine.task_state(1)}
    assert ("goal", "superseded") in state and ("goal", "open") in state
    todo = [r for r in engine.task_state(1) if r["label"] == "todo"][0]
    assert todo["status"] == "done"
    assert ("blocked", "open") in state


def test_questions_and_assistant_text_are_not_facts(engine: Engine) -> None:
    put(engine, "Which port does staging use?")
    engine.store.write_tx_sync(lambda c: writer.store_extracted(
        c, SCOPE, 1, None, extract("I suggest we use Redis for the cache.", speaker="assistant")))
    kinds = sql_read(engine, lambda c: [r[0] for r in c.execute(
        "SELECT kind FROM memory_items ORDER BY id")])
    assert kinds == ["question", "proposal"]


# -- supersession by content terms -----------------------------------------------

def test_terms_fold_plurals_drop_values_and_cue_words() -> None:
    assert terms("Correction: make that 150 s for long-polling clients at the gateway.") == {
        "long", "poll", "client", "gateway"}
    assert terms("We will deploy the EU tenants to eu-central-1.") == {"deploy", "eu", "tenant"}
    assert "p99" in terms("The p99 latency is 30s") and "30s" not in terms("The p99 is 30s")
    assert terms("导出旧集群的配置") >= {"导出", "旧集", "集群", "配置"}
    assert terms("設定をエクスポートしました") >= {"設定", "エク", "ート"}
    assert not terms("しました") and not terms(None)
    assert overlap(terms("switched to a slim base image"), terms("switch the base image")) == 1.0
    assert overlap(terms("the budget"), terms("the deadline")) == 0.0


def test_reworded_correction_chain_supersedes_and_spares_the_other_condition(
        engine: Engine) -> None:
    put(engine, "The API gateway timeout for long-polling clients is 280 s.")
    put(engine, "The API gateway timeout for regular REST calls is 30 s.")
    put(engine, "Actually, the gateway timeout for long-polling clients is 35 s.")
    put(engine, "Correction: make that 150 s for long-polling clients at the gateway.")
    rows = items(engine)
    assert status_by_value(engine) == {280.0: "superseded", 30.0: "active",
                                       35.0: "superseded", 150.0: "active"}
    assert rows[0]["superseded_by"] == rows[2]["id"] and rows[2]["superseded_by"] == rows[3]["id"]


def test_reworded_correction_of_a_count_and_of_a_choice(engine: Engine) -> None:
    put(engine, "The staging cluster runs 19 nodes.")
    put(engine, "No, it's 11 nodes in the staging cluster; I checked the console.")
    put(engine, "I was wrong again: the staging cluster has 40 nodes since this morning's resize.")
    put(engine, "We will deploy the EU tenants to eu-central-1.")
    put(engine, "Actually, the EU tenants go to eu-west-1, not the region I said before.")
    rows = {r["text"][:24]: r["status"] for r in items(engine)}
    assert rows["The staging cluster runs"] == "superseded"
    assert rows["No, it's 11 nodes in the"] == "superseded"
    assert rows["I was wrong again: the s"] == "active"
    assert rows["We will deploy the EU te"] == "superseded"
    assert rows["Actually, the EU tenants"] == "active"


def test_correction_never_supersedes_a_different_condition(engine: Engine) -> None:
    put(engine, "The API timeout is 30 s when offline.")
    put(engine, "The API timeout is 5 s.")
    put(engine, "Actually, the API timeout is 8 s.")
    assert status_by_value(engine) == {30.0: "active", 5.0: "superseded", 8.0: "active"}
    put(engine, "While a sale is running, the catalogue cache TTL is 100 seconds.")
    put(engine, "The catalogue cache TTL is 300 seconds.")
    put(engine, "Correction: the catalogue cache TTL is 60 s.")
    # The unconditional statement is the one corrected; the sale-time value stands.
    assert status_by_value(engine)[100.0] == "active"
    assert status_by_value(engine)[300.0] == "superseded"


def test_a_correction_without_a_condition_keeps_the_corrected_items_condition(
        engine: Engine) -> None:
    """The user does not restate "when the VPN is up" to correct the port; nor a
    subject ("Actually, it's 5434"); naming the old value settles which item."""
    put(engine, "The staging DB port is 5433 when the VPN is up.")
    put(engine, "Actually, the staging DB port is 5434.")
    assert status_by_value(engine) == {5433.0: "superseded", 5434.0: "active"}
    put(engine, "The replica count is 3.")
    put(engine, "Let's look at the login form next.")
    put(engine, "Actually, it's 5.")
    assert status_by_value(engine)[3.0] == "superseded"
    put(engine, "The worker pool size is 16.")
    put(engine, "The queue depth limit is 900.")
    put(engine, "Sorry, I was wrong: it's 12, not 16.")
    by_value = status_by_value(engine)
    assert by_value[16.0] == "superseded" and by_value[900.0] == "active"


def test_correction_needs_the_same_unit_dimension_and_shared_terms(engine: Engine) -> None:
    put(engine, "The nightly export job takes 40 minutes.")
    put(engine, "The nightly export job writes 12 GB.")
    put(engine, "The search page shows 25 results.")
    put(engine, "Actually, the nightly export job takes 55 minutes.")
    assert status_by_value(engine) == {40.0: "superseded", 12.0: "active", 25.0: "active",
                                       55.0: "active"}
    put(engine, "Actually, the billing service owner is Dana.")  # nothing shared: no link
    assert [r["status"] for r in items(engine)].count("superseded") == 1


def test_cjk_correction_with_other_wording_supersedes(engine: Engine) -> None:
    put(engine, "API网关对长轮询客户端的超时是280秒。")
    put(engine, "API网关对普通REST调用的超时是30秒。")
    put(engine, "更正：长轮询客户端在网关的超时改成150秒。")
    assert status_by_value(engine) == {280.0: "superseded", 30.0: "active", 150.0: "active"}


def test_plain_statements_under_other_conditions_are_not_conflicts(engine: Engine) -> None:
    put(engine, "The API timeout is 30 s when offline.")
    put(engine, "The API timeout is 5 s.")
    assert [r["conflict_with"] for r in items(engine)] == [None, None]
    put(engine, "The API timeout is 6 s.")
    assert items(engine)[-1]["conflict_with"] == items(engine)[1]["id"]


# -- task state: which TODO a progress line closes --------------------------------------

def task_status(engine: Engine, label: str) -> dict[str, str]:
    return {r["text"]: r["status"] for r in engine.task_state(1) if r["label"] == label}


def test_cjk_progress_closes_the_todo_it_names(engine: Engine) -> None:
    put(engine, "TODO：导出旧集群的配置\nTODO：给迁移写回滚脚本")
    put(engine, "进展：旧集群的配置已经导出，完成。")
    assert task_status(engine, "todo") == {"导出旧集群的配置": "done", "给迁移写回滚脚本": "open"}


def test_japanese_progress_closes_the_todo_it_names(engine: Engine) -> None:
    put(engine, "TODO：旧クラスタの設定をエクスポートする\nTODO：当番表を更新する")
    put(engine, "進捗：旧クラスタの設定のエクスポートは完了。")
    assert task_status(engine, "todo") == {"旧クラスタの設定をエクスポートする": "done",
                                           "当番表を更新する": "open"}


def test_progress_closes_only_the_best_match_and_needs_a_done_word(engine: Engine) -> None:
    put(engine, "TODO: switch to a slim base image\n"
                "Blocked: the security team must approve the new base image")
    put(engine, "Progress: started on the slim base image")
    assert set(task_status(engine, "todo").values()) == {"open"}
    put(engine, "Progress: switched to a slim base image, completed.")
    assert task_status(engine, "todo") == {"switch to a slim base image": "done"}
    assert set(task_status(engine, "blocked").values()) == {"open"}


def test_progress_on_something_else_closes_nothing(engine: Engine) -> None:
    put(engine, "TODO：导出旧集群的配置")
    put(engine, "进展：监控告警的规则已经更新，完成。")
    assert task_status(engine, "todo") == {"导出旧集群的配置": "open"}


def test_online_and_offline_conditions_never_meet(engine: Engine) -> None:
    put(engine, "离线时接口的超时时间是85秒。")
    put(engine, "在线时接口的超时时间是55秒。")
    put(engine, "オフライン時のAPIタイムアウトは110秒です。")
    put(engine, "オンライン時のAPIタイムアウトは95秒です。")
    assert [r["conflict_with"] for r in items(engine)] == [None] * 4
    put(engine, "更正：在线时接口的超时时间是60秒。")
    assert status_by_value(engine) == {85.0: "active", 55.0: "superseded", 110.0: "active",
                                       95.0: "active", 60.0: "active"}


def test_value_less_statements_conflict_only_as_rival_claims(engine: Engine) -> None:
    put(engine, "The release deadline is Friday.")
    put(engine, "The release deadline is Monday.")
    put(engine, "The export job logs the whole request body at info level.")
    put(engine, "The export job feels too clever.")
    rows = items(engine)
    assert rows[1]["conflict_with"] == rows[0]["id"]
    assert rows[3]["conflict_with"] is None


def test_a_narrower_subject_is_not_a_conflict_and_is_not_settled(engine: Engine) -> None:
    put(engine, "The log retention is 177 days.")
    put(engine, "The audit log retention is 7 years.")
    assert items(engine)[1]["conflict_with"] is None
    put(engine, "The log retention is 90 days.")  # a rival value: a conflict
    put(engine, "Correction: the log retention is 30 days.")
    assert status_by_value(engine) == {177.0: "superseded", 7.0: "active", 90.0: "superseded",
                                       30.0: "active"}


def test_a_correction_settles_only_the_conflict_side_it_names(engine: Engine) -> None:
    put(engine, "監査ログの保存期間は55年です。")
    put(engine, "ログの保存期間は155日です。")
    assert items(engine)[1]["conflict_with"] == items(engine)[0]["id"]
    put(engine, "訂正：ログの保存期間は79日です。")
    assert status_by_value(engine) == {55.0: "active", 155.0: "superseded", 79.0: "active"}


@pytest.mark.parametrize(("todo", "progress", "status"), [
    ("TODO：导出旧集群的配置", "进展：已经导出了旧集群的配置。", "done"),
    ("TODO：旧クラスタの設定をエクスポートする", "進捗：旧クラスタの設定をエクスポートしました。",
     "done"),
    ("TODO：导出旧集群的配置", "进展：已经开始导出旧集群的配置了。", "open"),
    ("TODO：导出旧集群的配置", "进展：旧集群的配置还没导出。", "open"),
    ("TODO：旧クラスタの設定をエクスポートする", "進捗：設定のエクスポートを開始しました。",
     "open"),
    ("TODO: export the old cluster config", "Progress: exporting the old cluster config", "open"),
])
def test_cjk_completion_aspect_closes_a_todo(engine: Engine, todo: str, progress: str,
                                             status: str) -> None:
    put(engine, todo)
    put(engine, progress)
    assert list(task_status(engine, "todo").values()) == [status]
