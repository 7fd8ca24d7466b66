"""The engine as a façade: the parts it hands work to (capture jobs, compactor,
operator reads) see what the engine sees. Real store (either backend)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from memory_core.engine import Engine
from memory_core.models import Scope


def test_a_replaced_config_reaches_the_capture_jobs_and_the_compactor(tmp_path: Path) -> None:
    engine = Engine(tmp_path / "d")
    try:
        engine.config = dataclasses.replace(engine.config, extract=False)
        assert engine.captures.config is engine.config
        assert engine.compactor.config is engine.config
        ticket, fut = engine.capture_request(
            Scope("t"), "r1", [{"role": "user", "content": "The staging port is 5432."}], {})
        fut.result(10)
        engine.flush()
        assert engine.list_items()["items"] == []  # extraction off: nothing extracted
    finally:
        engine.close()


def test_a_malformed_ref_is_refused_before_any_read(tmp_path: Path) -> None:
    """``inspect`` parses the ref first: a bad one is a ValueError even when the
    store cannot be read (closed here), an unknown kind too."""
    engine = Engine(tmp_path / "d")
    engine.close()
    for ref in ("item:x", "zz:1", "msg:"):
        with pytest.raises(ValueError):
            engine.inspect(ref)
    with pytest.raises(Exception) as closed:  # a well-formed ref reaches the store
        engine.inspect("item:1")
    assert not isinstance(closed.value, ValueError)


def test_remembered_blocks_stay_within_their_count_and_byte_bounds(tmp_path: Path) -> None:
    """The blocks kept for a turn's tool rounds (``remember_block``/``block_for``)
    drop the oldest past :data:`BLOCKS_KEPT_BYTES` as well as past
    :data:`BLOCKS_KEPT`; the newest stay readable, a re-remembered turn counts once."""
    from memory_core.engine import BLOCKS_KEPT, BLOCKS_KEPT_BYTES

    engine = Engine(tmp_path / "d")
    try:
        scope = Scope("t")
        big = "- [fact · msg 1] " + "x" * 12_000  # a full 3,000-token block
        for turn in range(BLOCKS_KEPT):
            engine.remember_block(scope, turn, f"{turn} {big}")
        count, size = engine.remembered_blocks()
        assert size <= BLOCKS_KEPT_BYTES
        assert count < BLOCKS_KEPT // 2  # the bytes bound is the one that held
        newest = BLOCKS_KEPT - 1
        assert engine.block_for(scope, newest) == f"{newest} {big}"
        assert engine.block_for(scope, newest - count + 1) is not None
        assert engine.block_for(scope, newest - count) is None
        assert engine.block_for(scope, 0) is None
        engine.remember_block(scope, newest, "again")  # replaces, counted once
        assert engine.remembered_blocks()[0] == count
        for turn in range(2 * BLOCKS_KEPT):  # small blocks: the count bound holds
            engine.remember_block(scope, 10_000 + turn, f"- [fact · msg {turn}] short")
        assert engine.remembered_blocks()[0] == BLOCKS_KEPT
        assert engine.block_for(scope, 10_000 + 2 * BLOCKS_KEPT - 1) is not None
        huge = "y" * (2 * BLOCKS_KEPT_BYTES)  # larger than the bound: kept alone
        engine.remember_block(scope, 99_999, huge)
        assert engine.remembered_blocks()[0] == 1
        assert engine.block_for(scope, 99_999) == huge
    finally:
        engine.close()
