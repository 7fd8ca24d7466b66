"""The block's explain log is built when it is read, and the block is counted by line.

Real SQLite and extraction through the engine, over issue 28's numbers workload:
the log's rows (``not_repeated_log`` and the budget's omissions) are not built while
the request is planned, only when the log is queued after the send, and they are the
rows read at once would have been, even after the conversation went on (items
superseded, the item cache's rows replaced). The block's exact count, made a line
at a time from a memo, equals a count of the whole block, and a block assembled
again is not encoded again.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path
from typing import Any

import orjson
import pytest

from memory_core.assembly import block as block_mod
from memory_core.assembly import in_view
from memory_core.config import MemoryConfig
from memory_core.engine import Engine
from memory_core.models import CaptureResult, Scope
from memory_core.tokens import count_tokens
from proxy.evaluation.numbersgen import numbers_session
from tests.conftest import sql_read

A = Scope("t_a", "coder")


def _say(engine: Engine, history: list[Any], text: str) -> None:
    history.append({"role": "user", "content": text})
    ticket, fut = engine.capture_request(A, "r", list(history), {})
    fut.result(10)
    reply = {"role": "assistant", "content": "ok"}
    engine.capture_response(ticket, [reply], {"outcome": "complete"}).result(10)
    history.append(reply)


def _ask(engine: Engine, history: list[Any], text: str) -> CaptureResult:
    history.append({"role": "user", "content": text})
    _ticket, fut = engine.capture_request(A, "q", list(history), {})
    result: CaptureResult = fut.result(10)
    history.append({"role": "assistant", "content": "ok"})
    return result


def _conversation(engine: Engine, turns: int) -> tuple[list[Any], list[str]]:
    history: list[Any] = [{"role": "system", "content": "s"}]
    texts = [t.text for t in numbers_session(3, turns).turns]
    for text in texts[: turns // 2]:
        _say(engine, history, text)
    return history, texts[turns // 2:]


def test_log_rows_are_built_when_the_log_is_queued_not_when_assembled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    plain = in_view.not_repeated_log

    def counted(*a: Any, **k: Any) -> Any:
        calls.append(1)
        return plain(*a, **k)

    monkeypatch.setattr(in_view, "not_repeated_log", counted)
    engine = Engine(tmp_path / "d", MemoryConfig())
    try:
        history, _rest = _conversation(engine, 40)
        question = "What is the pool size of the cache layer now?"
        result = _ask(engine, history, question)
        window = list(result.message_ids)[-12:]  # the client sends its newest turns
        assembly = engine.assemble(A, result, question, "q1", set(window), window,
                                   log=False)
        assert assembly.block and calls == []  # no log rows built before the send
        assert not assembly.log_built
        engine.log_assembly(A, "q1", assembly)  # after the send
        assert assembly.log_built and calls == [1]
        engine.store.write_tx(lambda tx: None).result(10)  # the log's job is done
        rows = sql_read(engine, lambda c: c.execute(
            "SELECT data FROM assembly_logs WHERE request_id='q1'").fetchall())
        assert [orjson.loads(r[0]) for r in rows] == [assembly.log]
        reasons = [r["reason"] for r in assembly.log["omitted"]]
        assert any(r.startswith(in_view.NOT_REPEATED) for r in reasons)
        assert assembly.log["included"] and assembly.log["used_tokens"] == assembly.used_tokens
        assert calls == [1]  # read again: the same dict, not built again
    finally:
        engine.close()


@pytest.mark.parametrize("cfg", [
    MemoryConfig(),  # items in view: "not repeated" rows
    MemoryConfig(in_view_tokens=0, soft_budget_tokens=260),  # over budget, cut lines
])
def test_a_log_read_later_equals_the_log_read_at_once(tmp_path: Path,
                                                       cfg: MemoryConfig) -> None:
    engine = Engine(tmp_path / "d", cfg)
    try:
        history, rest = _conversation(engine, 60)
        pending = []
        for i, question in enumerate(("What is the pool size of the cache layer now?",
                                      "Which timeout did we settle on for the API?",
                                      "Remind me of the numbers we changed.")):
            result = _ask(engine, history, question)
            window = list(result.message_ids)[-12:]
            later = engine.assemble(A, result, question, f"q{i}", set(window), window,
                                    log=False)
            now = engine.assemble(A, result, question, f"q{i}", set(window), window,
                                  log=False)
            assert later.block == now.block and not later.log_built
            pending.append((later, copy.deepcopy(now.log)))
            for text in rest[i * 8:(i + 1) * 8]:  # corrections: items superseded
                _say(engine, history, text)
        kinds: set[str] = set()
        for later, at_once in pending:
            assert later.log == at_once
            kinds.update(r["reason"].split(":")[0].split(" (")[0]
                         for r in at_once["omitted"])
            kinds.update("truncated" for _ in at_once["truncated"])
        if cfg.in_view_tokens:
            assert in_view.NOT_REPEATED in kinds
        else:
            assert {"over budget", "truncated"} <= kinds
    finally:
        engine.close()


def test_block_counted_by_line_equals_the_whole_count() -> None:
    rng = random.Random(28)
    parts = ["a", "Z", "word", " ", "  ", ".", "/", "\r", "\n", "", " /x", "7", "123",
             "4567", "日本", "한", "🙂", "'s", " 'll", "—", "\t", "-", "[", "]", "é",
             "e\u0301", "\x85", "\xa0", "\u3000", "\x1c", ":", '"', "<<<", ">>>"]
    for _ in range(5000):
        lines = ["".join(rng.choice(parts) for _ in range(rng.randint(0, 6)))
                 for _ in range(rng.randint(1, 6))]
        text = "\n".join(lines)
        assert block_mod._block_tokens(text, lines) == count_tokens(text), lines
    lines = ["ok", "a \ud800 lone surrogate", "x"]  # the tokenizer fails: the estimate
    text = "\n".join(lines)
    assert block_mod._block_tokens(text, lines) == count_tokens(text)


def test_real_blocks_are_counted_exactly_and_not_encoded_again(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    encoded: list[str] = []
    for name in ("count_tokens", "exact_tokens"):
        plain = getattr(block_mod, name, None)
        if plain is None:
            continue

        def seen(text: str, plain: Any = plain) -> Any:
            encoded.append(text)
            return plain(text)

        monkeypatch.setattr(block_mod, name, seen)
    engine = Engine(tmp_path / "d", MemoryConfig(in_view_tokens=0))
    try:
        history, rest = _conversation(engine, 60)
        for i, text in enumerate(rest[:12]):
            result = _ask(engine, history, text)
            first = engine.assemble(A, result, text, f"q{i}", log=False)
            assert first.block and first.used_tokens == count_tokens(first.block)
            encoded.clear()
            again = engine.assemble(A, result, text, f"q{i}", log=False)
            assert again.block == first.block and again.used_tokens == first.used_tokens
            assert first.block not in encoded and sum(map(len, encoded)) == 0
    finally:
        engine.close()
