"""The long-session evaluation harness (proxy.evaluation) and `lcm-proxy bench all`.

The generator is deterministic and its answer key independent of any system; the
metric functions are checked on hand-made inputs, each with a case that must fail;
the 30-turn ``smoke`` profile runs end to end through three real proxies with the
real SDK (hashing embedder, so it stays fast) and produces every output.
"""

from __future__ import annotations

import gc
import json
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from memory_core.assembly.block import terms
from proxy.cli import main
from proxy.evaluation import generate_profile, generate_session
from proxy.evaluation import topics_cjk as cjk
from proxy.evaluation import topics_en as en
from proxy.evaluation.generator import KeyItem, TaskExpectation
from proxy.evaluation.metrics import (
    TokenCounter,
    block_text,
    common_prefix,
    covered,
    has_needle,
    hit_matches,
    prefix_share,
    rendered_prompt,
    stale_lines,
    tool_pairs_ok,
)
from proxy.evaluation.storecheck import (
    StoreView,
    storage_assertions,
    store_invariants,
    task_accuracy,
)
from proxy.evaluation.systems import CLIENT_BUDGET_TOKENS, Client

# -- generator ---------------------------------------------------------------------


def test_generator_is_deterministic_per_seed() -> None:
    a = [s.fingerprint() for s in generate_profile("quick", 7)]
    b = [s.fingerprint() for s in generate_profile("quick", 7)]
    c = [s.fingerprint() for s in generate_profile("quick", 8)]
    assert a == b and a != c
    full = generate_profile("full", 1)
    assert len(full) >= 6 and sum(len(s.key) for s in full) >= 60
    assert sorted({s.n_turns for s in full}) == [100, 200, 500, 1000, 2000]


def test_answer_key_is_written_without_the_system() -> None:
    # The generator cannot consult the engine or the proxy: importing it loads neither.
    code = ("import sys, proxy.evaluation.generator as g; g.generate_profile('full', 3);"
            "bad = [m for m in ('memory_core.engine', 'memory_core.extraction', 'proxy.app',"
            " 'proxy.evaluation.runner') if m in sys.modules]; print(bad); sys.exit(bool(bad))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def _said(session: object, turn: int) -> str:
    t = session.turns[turn]  # type: ignore[attr-defined]
    return t.text + ("\n" + t.tool.result if t.tool else "")


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_key_values_appear_in_the_session_text(seed: int) -> None:
    for session in generate_profile("quick", seed) + [generate_session(seed, "x", 24, "ja")]:
        categories = {k.category for k in session.key}
        assert {"fact", "decision", "chain", "pref_chat", "pref_cli", "task_goal",
                "task_blocked", "tool_result"} <= categories
        assert {k.lang for k in session.key} >= {"en", "zh", "ja"}
        assert any(len(k.superseded) == 2 for k in session.key)  # a correction of a correction
        for k in session.key:
            assert session.turns[k.question_turn].asks == k.id
            assert not covered([{"role": "user", "content": k.question}], k.current)
            if k.store == "agent_memory":
                assert all(has_needle(session.cli_prefs[0].content, n) for n in k.current)
                continue
            last = _said(session, k.stated[-1])
            assert covered([{"role": "user", "content": last}], k.current), (k, last)
            for old, turn in zip(k.superseded, k.stated, strict=False):
                assert covered([{"role": "user", "content": _said(session, turn)}], old)
            assert max(k.stated) < min(q.question_turn for q in session.key)


def test_questions_are_paraphrases() -> None:
    topics = (en.FACTS + en.DECISIONS + en.CHAINS + en.PREFS + cjk.FACTS + cjk.FACTS_JA
              + cjk.DECISIONS + cjk.DECISIONS_JA + cjk.CHAINS + cjk.CHAINS_JA + cjk.PREFS
              + cjk.PREFS_JA)
    for topic in topics:
        said = terms(topic.say.replace("{v}", ""))
        for ask in topic.asks:
            asked = terms(ask)
            assert len(asked & said) <= 0.34 * len(asked), (ask, asked & said)


# -- metrics on hand-made inputs ------------------------------------------------------


def test_needles_respect_number_boundaries_and_lines() -> None:
    assert has_needle("timeout is 45 s now", "45 s")
    assert not has_needle("timeout is 145 s now", "45 s")
    assert not has_needle("timeout is 1.45 s now", "45 s")
    assert has_needle("PORT 5433", "port 5433")
    msgs = [{"role": "user", "content": "the gateway timeout is 45 s\nfor long-polling clients"}]
    assert not covered(msgs, ("45 s", "long-polling"))  # not on one line
    assert covered([{"role": "user", "content": "long-polling: 45 s"}], ("45 s", "long-polling"))
    tool = [{"role": "assistant", "content": None, "tool_calls": [
        {"id": "c", "type": "function", "function": {"name": "f", "arguments": "{\"x\": 9}"}}]}]
    assert covered(tool, ('"x": 9',))


def _block(lines: str, question: str = "q?") -> list[dict[str, str]]:
    return [{"role": "system", "content": "s"},
            {"role": "user", "content": f"{lines}\n[Current Request]\n{question}"}]


def test_stale_lines_flag_only_unmarked_old_values() -> None:
    cur, old = ("60 s",), [("30 s",)]
    ok = _block("- [fact · msg 9] timeout is 60 s (corrects msg 2: \"30 s\" — superseded)")
    assert stale_lines(ok, cur, old) == []
    marked = _block("- [fact · superseded · msg 2] timeout is 30 s\n- timeout is 60 s")
    assert stale_lines(marked, cur, old) == []
    bad = _block("- [fact · msg 2] timeout is 30 s\n- timeout is 60 s")
    assert stale_lines(bad, cur, old) == ["- [fact · msg 2] timeout is 30 s"]
    history_only = [{"role": "user", "content": "timeout is 30 s"},
                    {"role": "user", "content": "what is it?"}]
    assert stale_lines(history_only, cur, old) == ["<stale only> timeout is 30 s"]
    marked_only = [{"role": "user", "content": "- [msg 2] timeout is 30 s (later superseded)"},
                   {"role": "user", "content": "what is it?"}]
    assert stale_lines(marked_only, cur, old) == []  # a coverage miss, not a stale value
    scaffold = [{"role": "user", "content": "[Conversation summary — lcm-proxy]\n"
                 "- [msg 3] user: timeout is 30 s"}, {"role": "user", "content": "60 s"}]
    assert stale_lines(scaffold, cur, old) == ["- [msg 3] user: timeout is 30 s"]


def test_prefix_share_and_common_prefix() -> None:
    assert common_prefix(b"abcdef", b"abcxyz") == 3
    assert common_prefix(b"", b"abc") == 0
    assert common_prefix(b"x" * 100_000 + b"a", b"x" * 100_000 + b"b") == 100_000
    assert prefix_share(None, b"abc") is None
    assert prefix_share(b"abcd", b"abcdefgh") == 0.5
    assert prefix_share(b"zzz", b"abc") == 0.0


def test_rendered_prompt_puts_tool_definitions_before_the_messages() -> None:
    """Two turns of one conversation: in the JSON body the shared tools come after
    the messages; rendered, they are part of the shared prefix."""
    tools = [{"type": "function", "function": {"name": "read_file", "parameters": {}}}]
    one = {"model": "m", "messages": [{"role": "user", "content": "a"}], "tools": tools}
    two = {"model": "m", "tools": tools, "messages": [
        {"role": "user", "content": "a"}, {"role": "assistant", "content": "b"},
        {"role": "user", "content": "c"}]}
    r1, r2 = rendered_prompt(one), rendered_prompt(two)
    assert r2.startswith(r1) and b"read_file" in r1[: r1.index(b'"content"')]
    assert rendered_prompt({"model": "m", "messages": []}) == b"{}"


def test_tool_pairs() -> None:
    call = {"role": "assistant", "content": None,
            "tool_calls": [{"id": "c1", "type": "function",
                            "function": {"name": "f", "arguments": "{}"}}]}
    result = {"role": "tool", "tool_call_id": "c1", "content": "ok"}
    user = {"role": "user", "content": "hi"}
    assert tool_pairs_ok([user, call, result, user])
    assert not tool_pairs_ok([user, call, user])  # call without its result
    assert not tool_pairs_ok([user, result])  # result without its call
    assert not tool_pairs_ok([user, call])


def test_tokens_block_and_hits() -> None:
    counter = TokenCounter()
    msgs = [{"role": "user", "content": "hello world"}]
    assert counter.request(msgs) == counter.text("hello world") + 4
    assert block_text(_block("[Memory]\n- x")) == "[Memory]\n- x\n[Current Request]"
    assert block_text([{"role": "user", "content": "plain"}]) == ""
    assert hit_matches("a\nport 5433 via VPN", "active", ("port 5433", "VPN"))
    assert not hit_matches("port 5433 via VPN", "superseded", ("port 5433", "VPN"))
    assert not hit_matches("port 5433\nVPN", None, ("port 5433", "VPN"))


def _key(**kw: object) -> KeyItem:
    base = dict(id="k", category="chain", lang="en", current=("60 s",),
                superseded=(("30 s",),), stated=(1, 5), question="?", question_turn=9,
                store="item")
    base.update(kw)
    return KeyItem(**base)  # type: ignore[arg-type]


def test_storage_assertions() -> None:
    good = StoreView(items=[
        {"id": 1, "kind": "fact", "text": "timeout 30 s", "status": "superseded",
         "source_message_id": 1},
        {"id": 2, "kind": "fact", "text": "timeout 60 s", "status": "active",
         "source_message_id": 5}])
    assert all(a["ok"] for a in storage_assertions([_key()], good))
    stale = StoreView(items=[dict(r, status="active") for r in good.items])
    failed = {a["check"] for a in storage_assertions([_key()], stale) if not a["ok"]}
    assert failed == {"old value superseded: 30 s", "old value not active: 30 s"}
    pref = _key(store="agent_memory", current=("100 columns",), superseded=())
    assert not storage_assertions([pref], good)[0]["ok"]
    prefs = StoreView(prefs=[{"key": "k", "title": "t", "content": "at most 100 columns"}])
    assert storage_assertions([pref], prefs)[0]["ok"]


def test_task_accuracy() -> None:
    view = StoreView(tasks=[{"label": "todo", "text": "port the export job", "status": "done"},
                            {"label": "goal", "text": "ship it", "status": "open"}])
    out = task_accuracy([TaskExpectation("todo", "export job", "done"),
                         TaskExpectation("goal", "ship", "superseded")], view)
    assert [a["ok"] for a in out] == [True, False]


def test_store_invariants() -> None:
    sent = [{"role": "system", "content": "s"}, {"role": "user", "content": "u"}]
    rows = [{"id": 1, "thread_id": 1, "parent_id": None, "msg_role": "system", "text": "s",
             "node_key": "a", "hidden": 0},
            {"id": 2, "thread_id": 1, "parent_id": 1, "msg_role": "user", "text": "u",
             "node_key": "b", "hidden": 0}]
    assert store_invariants(StoreView(messages=rows), sent, whole_history=True) == {
        "evidence_kept": True, "stored_once": True, "no_duplicate_rows": True}
    twice = rows + [dict(rows[1], id=3, parent_id=2, node_key="b")]
    out = store_invariants(StoreView(messages=twice), sent, whole_history=True)
    assert out == {"evidence_kept": True, "stored_once": False, "no_duplicate_rows": False}
    lost = store_invariants(StoreView(messages=rows[:1]), sent, whole_history=False)
    assert lost["evidence_kept"] is False and lost["stored_once"] is None


def test_baseline_clients_truncate_whole_turns_and_keep_notes() -> None:
    counter = TokenCounter()
    history = [{"role": "system", "content": "sys"}]
    for i in range(400):
        history += [{"role": "user", "content": f"turn {i}: the cache TTL is {i} seconds. " * 5},
                    {"role": "assistant", "content": "ok " * 40}]
    history.append({"role": "user", "content": "newest?"})
    plain = Client("no_memory", counter).shape(history)
    assert plain.messages[0]["content"] == "sys" and plain.messages[-1]["content"] == "newest?"
    assert plain.messages[1]["role"] == "user"  # starts at a whole turn
    assert counter.request(plain.messages) <= CLIENT_BUDGET_TOKENS
    rolling = Client("rolling_summary", counter)
    shaped = rolling.shape(history)
    assert shaped.memory_tokens > 0 and "turn 0: the cache TTL is 0 seconds." not in str(
        plain.messages)
    assert counter.request(shaped.messages) <= CLIENT_BUDGET_TOKENS + 50
    assert Client("lcm", counter).shape(history).messages is history


# -- end to end ------------------------------------------------------------------------


def test_smoke_profile_end_to_end(tmp_path: Path) -> None:
    out_json, out_md, out_png = tmp_path / "r.json", tmp_path / "r.md", tmp_path / "r.png"
    result = CliRunner().invoke(main, [
        "eval", "--profile", "smoke", "--seed", "3", "--embedding-provider", "hashing",
        "--output", str(out_json), "--markdown", str(out_md), "--png", str(out_png)])
    assert result.exit_code == 0, result.output
    report = json.loads(out_json.read_text())
    assert out_png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = out_md.read_text()
    assert "### lcm-proxy against the targets of issue 8" in md and "| lcm-proxy |" in md
    figs = report["figures"]
    assert set(figs) == {"no_memory", "rolling_summary", "lcm"}
    metrics = ("coverage", "stale_questions", "memory_tokens_mean", "net_extra_tokens_mean",
               "upstream_tokens_mean", "raw_tokens_mean", "upstream_vs_raw", "prefix_share",
               "added_mean_ms", "added_p50_ms", "added_p95_ms", "invariants")
    for system, f in figs.items():
        for name in metrics:
            assert f["overall"][name] is not None, (system, name)
        assert f["overall"]["questions"] == 11
    lcm = figs["lcm"]["overall"]
    for name in ("storage", "recall", "rank1", "task_state"):
        assert lcm[name] is not None
    assert lcm["storage_checks"] > 0
    assert all(v is True for v in lcm["invariants"].values()), lcm["invariants"]
    assert figs["no_memory"]["overall"]["storage"] is None  # no store to check
    assert report["meta"]["fingerprints"] == {
        s.id: s.fingerprint() for s in generate_profile("smoke", 3)}
    # Each session froze the heap as `serve` does, and thawed it after: nothing of a
    # finished session's proxy is kept from the collector.
    assert gc.get_freeze_count() == 0


def test_freeze_startup_heap_moves_live_objects_out_of_collection() -> None:
    from proxy.app import GC_GEN0_THRESHOLD, freeze_startup_heap

    threshold = gc.get_threshold()
    try:
        gc.set_threshold(700, *threshold[1:])
        freeze_startup_heap()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold() == (GC_GEN0_THRESHOLD, *threshold[1:])
    finally:
        gc.unfreeze()
        gc.set_threshold(*threshold)


def test_bench_all_gathers_search_and_compaction_in_one_table() -> None:
    from proxy.evaluation.benchall import run_all

    # The proxy part is `bench proxy` (tests/test_bench.py runs it); here the other two
    # run for real and the table is checked.
    out = run_all(search_sizes=(300,), search_queries=10, search_vectors=False,
                  compaction_sizes=(30, 120), compaction_repeats=3, progress=False,
                  parts=("search", "compaction"))
    names = {(b, f) for b, _, f, _, _ in out["rows"]}
    assert ("search", "BM25 query p95") in names
    assert ("compaction", "rewrite step p95") in names and out["proxy"] == {}
    rows = out["compaction"]["rows"]
    assert [r["turns"] for r in rows] == [30, 120]
    assert rows[-1]["tokens_after"] <= rows[-1]["tokens_before"]
    assert out["table"].startswith("| benchmark | size | figure | value | unit |")


def test_bench_summary_reads_the_proxy_result_shape() -> None:
    from proxy.bench import MODES
    from proxy.evaluation.benchall import summary_rows

    proxy = {"meta": {"n_requests": 9},
             "modes": {m: {"nonstream_p50_ms": 1.0} for m in MODES},
             "added": {m: {"nonstream_p50_ms_added": 0.2, "nonstream_p99_ms_added": 0.9,
                           "stream_ttfb_p50_ms_added": 0.1, "throughput_ratio": 0.8}
                       for m in MODES[1:]}}
    rows = summary_rows(proxy, {}, {})
    assert ("proxy", "9", "added non-stream p99 (capture on)", 0.9, "ms") in rows
    assert ("proxy", "9", "throughput vs direct (capture off)", 0.8, "ratio") in rows


def test_bench_without_subcommand_runs_all() -> None:
    from proxy.cli.benchmarks import bench

    assert bench.invoke_without_command and "all" in bench.commands
    help_text = CliRunner().invoke(main, ["bench", "--help"]).output
    assert "Without a subcommand: `bench all`" in help_text


# -- eval --config: another embedder and search settings ---------------------------------


class _EmbeddingsServer:
    """An OpenAI-compatible ``/v1/embeddings`` endpoint on loopback (aiohttp, in a
    thread of its own, since the CLI runs its own event loop), answering with the
    hashing embedder's vectors; it counts the texts it embedded and the keys it saw."""

    def __init__(self, fail_after: int | None = None) -> None:
        import asyncio
        import threading

        from memory_core.search.embed.hashing import HashingEmbedder

        self.fail_after = fail_after  # texts; then every request is answered 503
        self.texts = 0
        self.auth: set[str] = set()
        self._model = HashingEmbedder(48)
        self._loop = asyncio.new_event_loop()
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()
        assert self._ready.wait(10)

    def _serve(self) -> None:
        import asyncio

        from aiohttp import web

        async def embeddings(request: web.Request) -> web.Response:
            body = await request.json()
            texts = body["input"] if isinstance(body["input"], list) else [body["input"]]
            if self.fail_after is not None and self.texts >= self.fail_after:
                return web.json_response({"error": {"message": "overloaded"}}, status=503)
            self.texts += len(texts)
            self.auth.add(request.headers.get("Authorization", ""))
            vectors = self._model.embed(texts)
            return web.json_response({"object": "list", "model": body.get("model"), "data": [
                {"object": "embedding", "index": i, "embedding": v.tolist()}
                for i, v in enumerate(vectors)]})

        async def start() -> None:
            app = web.Application(client_max_size=64 * 1024 * 1024)
            app.router.add_post("/v1/embeddings", embeddings)
            self._runner = web.AppRunner(app)
            await self._runner.setup()
            site = web.TCPSite(self._runner, "127.0.0.1", 0)
            await site.start()
            self.port = self._runner.addresses[0][1]

        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(start())
        self._ready.set()
        self._loop.run_forever()

    def close(self) -> None:
        import asyncio

        asyncio.run_coroutine_threadsafe(self._runner.cleanup(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)


@pytest.mark.slow
def test_eval_config_runs_lcm_proxy_on_the_given_embedder(tmp_path: Path) -> None:
    server = _EmbeddingsServer()
    try:
        config = tmp_path / "eval.toml"
        config.write_text(
            "[embedding]\nprovider = \"http\"\n"
            f"base_url = \"http://127.0.0.1:{server.port}/v1\"\n"
            "model = \"probe-embed\"\napi_key = \"sk-do-not-print-me\"\n\n"
            "[search]\nvector_weight = 0.7\n", encoding="utf-8")
        out_json, out_md = tmp_path / "r.json", tmp_path / "r.md"
        result = CliRunner().invoke(main, [
            "eval", "--profile", "smoke", "--seed", "3", "--config", str(config),
            "--output", str(out_json), "--markdown", str(out_md)])
        assert result.exit_code == 0, result.output
    finally:
        server.close()
    # The probe, the indexed history and the eval's questions all went to the endpoint.
    assert server.texts > 30 and server.auth == {"Bearer sk-do-not-print-me"}
    report = json.loads(out_json.read_text())
    meta = report["meta"]
    assert meta["embedding"].startswith(
        f"http (probe-embed at http://127.0.0.1:{server.port}/v1, 48 dimensions)")
    assert meta["settings"] == {
        "file": str(config), "search": {"vector_weight": 0.7},
        "embedding": {"provider": "http", "base_url": f"http://127.0.0.1:{server.port}/v1",
                      "model": "probe-embed", "api_key": "***"}}
    assert meta["proxy_log"]["counts"] == {}  # no query fell back to BM25
    md = out_md.read_text()
    assert "[search] vector_weight = 0.7" in md and "48 dimensions" in md
    assert "sk-do-not-print-me" not in md + out_json.read_text() + result.output
    lcm = report["figures"]["lcm"]["overall"]
    assert lcm["recall"] is not None and lcm["rank1"] is not None


@pytest.mark.parametrize(("toml", "message"), [
    ("[proxy]\nupstream = \"http://example.invalid\"\n[search]\nvector_weight = 0.5\n",
     "only the [embedding], [search] and [injection]"),
    ("[injection]\nsoft_budget_tokens = 100\n",
     "the eval fixes injection.soft_budget_tokens itself"),
    ("[injection]\nsearch_mode = \"vectors\"\n", "injection.search_mode"),
    ("seed = 4\n", "found seed"),
    ("[embedding]\nprovider = \"upstream\"\n", "set provider = \"http\""),
    ("[search]\nvector_weight = \"heavy\"\n", "search.vector_weight"),
    ("[embedding]\nprovider = \"http\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\n"
     "timeout_seconds = 2\n", "at http://127.0.0.1:{port}/v1 cannot be used"),
    ("[search\n", "not valid TOML"),
    # ``dim`` set: the factory makes no probe call, the eval still does
    ("[embedding]\nprovider = \"http\"\nbase_url = \"http://127.0.0.1:{port}/v1\"\n"
     "dim = 384\ntimeout_seconds = 2\n", "at http://127.0.0.1:{port}/v1 cannot be used"),
    ("[search]\nvector_wieght = 0.5\n", "unknown key search.vector_wieght"),
    ("[search]\nvector_weight = 99\n",
     "search.vector_weight = 99.0 is outside the allowed range 0.0..10.0"),
    ("[[search]]\nvector_weight = 0.5\n", "found search (an array of tables)"),
    ("[embedding]\nprovider = \"http\"\napi_key = [\"sk-SECRET-in-a-list\"]\n",
     "embedding.api_key: expected str, got a value of type list"),
])
def test_eval_config_refuses_what_it_cannot_run(tmp_path: Path, toml: str,
                                                 message: str) -> None:
    import socket

    with socket.socket() as sock:  # a loopback port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = tmp_path / "eval.toml"
    config.write_text(toml.format(port=port), encoding="utf-8")
    out_json = tmp_path / "r.json"
    result = CliRunner().invoke(main, ["eval", "--profile", "smoke", "--config", str(config),
                                       "--embedding-provider", "hashing",
                                       "--output", str(out_json)])
    assert result.exit_code == 2, result.output
    assert message.format(port=port) in result.output and str(config) in result.output
    assert "SECRET" not in result.output
    assert not out_json.exists()  # refused before anything ran


def test_eval_config_reports_what_runs(tmp_path: Path) -> None:
    from proxy.evaluation.harness import read_eval_config
    from proxy.settings import SettingsError

    config = tmp_path / "eval.toml"
    config.write_text("[search]\nvector_weight = 99\n", encoding="utf-8")
    with pytest.raises(SettingsError) as err:  # refused, as the proxy's settings refuse it
        read_eval_config(str(config))
    assert str(err.value) == (f"{config}: search.vector_weight = 99.0 is outside the allowed"
                              " range 0.0..10.0")
    config.write_text("[search]\nvector_weight = 9.5\n", encoding="utf-8")
    loaded, warnings = read_eval_config(str(config))
    assert loaded.tables == {"search": {"vector_weight": 9.5}} and loaded.embedding is None
    assert warnings == []
    config.write_text("[embedding]\nprovider = \"hashing\"\ndim = 32\n"
                      "base_url = \"http://user:pw@127.0.0.1:9/v1\"\n", encoding="utf-8")
    loaded, warnings = read_eval_config(str(config))
    assert warnings == [] and loaded.embedding == f"hashing (local, 32 dimensions), from {config}"
    assert loaded.shown["embedding"]["base_url"] == "http://***@127.0.0.1:9/v1"


def test_eval_config_sets_the_blocks_search_mode(tmp_path: Path) -> None:
    from proxy.evaluation.harness import read_eval_config
    from proxy.evaluation.runner import _settings

    config = tmp_path / "eval.toml"
    config.write_text("[injection]\nsearch_mode = \"hybrid\"\n", encoding="utf-8")
    loaded, warnings = read_eval_config(str(config))
    assert warnings == [] and loaded.tables == {"injection": {"search_mode": "hybrid"}}
    assert loaded.shown == {"file": str(config), "injection": {"search_mode": "hybrid"}}
    lcm = _settings("lcm", "http://127.0.0.1:9/v1", tmp_path / "lcm", "hashing",
                    loaded.tables)
    assert lcm.memory_config().injection_search_mode == "hybrid"
    assert lcm.injection.enabled  # the rest of [injection] keeps its defaults
    base = _settings("plain", "http://127.0.0.1:9/v1", tmp_path / "plain", "hashing",
                     loaded.tables)
    assert not base.injection.enabled  # a baseline stays a pass-through


def test_eval_stops_when_the_embeddings_endpoint_goes_down(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from proxy.evaluation import runner

    monkeypatch.setattr(runner, "INDEXER_FAILING_S", 1.0)
    server = _EmbeddingsServer(fail_after=3)  # the probe passes, indexing fails
    try:
        config = tmp_path / "eval.toml"
        config.write_text(
            "[embedding]\nprovider = \"http\"\n"
            f"base_url = \"http://127.0.0.1:{server.port}/v1\"\ntimeout_seconds = 2\n",
            encoding="utf-8")
        out_json = tmp_path / "r.json"
        started = time.monotonic()
        result = CliRunner().invoke(main, ["eval", "--profile", "smoke", "--config",
                                           str(config), "--output", str(out_json)])
        elapsed = time.monotonic() - started
    finally:
        server.close()
    assert result.exit_code == 1, result.output
    assert "evaluation stopped: the proxy's search indexer has failed for 1 s" in result.output
    assert "503" in result.output and not out_json.exists()
    assert elapsed < 60  # not SETTLE_TIMEOUT_S (300 s) a turn
