"""Crash safety: SIGKILL a process mid-ingest; on restart every message is searchable."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from memory_core.engine import Engine
from memory_core.search import make_label
from memory_core.search.docs import load_docs
from tests.conftest import sql_read
from tests.test_search_support import open_service

CHILD = textwrap.dedent("""
    import sys, time
    from pathlib import Path
    from memory_core.config import MemoryConfig
    from memory_core.engine import Engine
    from memory_core.models import Scope
    from tests.test_search_support import capture_chat, open_service
    d = Path(sys.argv[1])
    engine = Engine(d, MemoryConfig(store_url=sys.argv[2]))  # "": SQLite in d
    # slow vector saves, so the kill lands between index work and checkpoints
    svc = open_service(d, engine, commit_interval_ms=50, vector_save_interval_seconds=0.3)
    svc.start()
    history = []
    i = 0
    while True:
        history.append(f"message token{i:05d} body")
        capture_chat(engine, Scope("t", "r"), history, request_id=str(i))
        svc.notify()
        i += 1
        if i % 20 == 0:
            print(i, flush=True)
""")


def test_sigkill_mid_ingest_then_catch_up_finds_everything(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parent.parent
    env = dict(os.environ, PYTHONPATH=str(root))
    first = Engine(tmp_path)  # the store under test; the child writes that one
    url = getattr(first.store, "url", "")
    first.close()
    proc = subprocess.Popen([sys.executable, "-c", CHILD, str(tmp_path), url],
                            stdout=subprocess.PIPE, cwd=root, env=env, text=True)
    try:
        assert proc.stdout is not None
        deadline = time.monotonic() + 60
        seen = 0
        while seen < 300 and time.monotonic() < deadline:
            line = proc.stdout.readline()
            if not line:
                break
            seen = int(line)
        assert seen >= 300, "child did not ingest"
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait(30)
    assert proc.returncode == -signal.SIGKILL

    engine = Engine(tmp_path)
    svc = open_service(tmp_path, engine)
    try:
        rows = sql_read(engine, lambda c: c.execute("SELECT id, text FROM messages").fetchall())
        head = svc.indexer.outbox_head()
        # the kill left work behind at least in one index (else the test proves nothing)
        behind = min(svc.status()["checkpoints"].values())
        assert len(rows) >= 300
        svc.start()
        assert svc.wait_idle(60)
        assert svc.text.count() == len(rows)
        assert svc.vectors is not None and svc.vectors.count() == len(rows)
        part = svc.vectors._parts[("t", "r")]
        alive = {int(lb) for lb, ok in zip(part.cols["label"][: part.n],
                                           part.cols["alive"][: part.n], strict=True) if ok}
        assert alive == {make_label("message", mid) for mid, _ in rows}
        emb = svc.embedder
        assert emb is not None
        # what the vector of each message encodes (its turn before, then its text)
        docs, _ = engine.store.read_tx(lambda c: load_docs(
            c, "message", [mid for mid, _ in rows], index_dates=False, max_chars=2000,
            embed_context=svc.config.embed_context_chars))
        encoded = {d.ref_id: d.embed_text for d in docs}
        for mid, text in rows:
            hits = svc.search("t", "r", text.split()[1], mode="bm25", k=1)
            assert hits and hits[0].ref_id == mid, text
            hits = svc.search("t", "r", "", mode="vector", k=50,
                              query_vector=emb.embed([encoded[mid]])[0])
            assert mid in [h.ref_id for h in hits if h.score > 0.999], text
        assert behind <= head
    finally:
        svc.close()
        engine.close()
