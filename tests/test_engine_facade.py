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
