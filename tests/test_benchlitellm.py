"""`lcm-proxy bench short --litellm PATH`: the parts of measuring LiteLLM that are ours
(its config, command line and environment, waiting for it, its row in the table).

LiteLLM itself is not a dependency, so these tests run a stand-in for the `litellm`
executable: a small real aiohttp server script (`STAND_IN` below) that takes
LiteLLM's flags, reads the config the bench wrote and relays chat requests to the
config's `api_base`, checking the master key as LiteLLM does. The real LiteLLM was
run by hand for the figures (docs/evaluation/README.md, "LiteLLM in the same run")."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import aiohttp
import orjson
import pytest
from click.testing import CliRunner

from proxy.benchlitellm import (
    litellm_command,
    litellm_config,
    litellm_env,
    start_litellm,
    wait_litellm_ready,
)
from proxy.cli import main as cli_main
from proxy.shortbench import (
    BENCH_KEY,
    TARGET_REQ_PER_S,
    format_table,
    issue_targets,
    run_short_bench,
)
from tests.conftest import store_env

STAND_IN = '''
import argparse, json, os, sys
import aiohttp
from aiohttp import web

ap = argparse.ArgumentParser()
ap.add_argument("--config"); ap.add_argument("--host"); ap.add_argument("--port", type=int)
ap.add_argument("--num_workers", type=int)
args = ap.parse_args()
config = json.load(open(args.config))  # the bench writes JSON, which is YAML too
deployment = config["model_list"][0]["litellm_params"]
with open(os.environ["STAND_IN_RECORD"], "w") as f:
    json.dump({"argv": sys.argv[1:], "env": {k: v for k, v in os.environ.items()
               if k.startswith(("LITELLM_", "LCM_"))}, "cwd": os.getcwd()}, f)

async def chat(request):
    if request.headers.get("Authorization") != "Bearer " + config["general_settings"]["master_key"]:
        return web.json_response({"error": {"message": "bad key"}}, status=401)
    body = await request.json()
    assert body["model"] == config["model_list"][0]["model_name"]
    body["model"] = deployment["model"].split("/", 1)[1]
    async with request.app["session"].post(
            deployment["api_base"] + "/chat/completions", json=body,
            headers={"Authorization": "Bearer " + deployment["api_key"]}) as up:
        resp = web.StreamResponse(status=up.status,
                                  headers={"Content-Type": up.headers["Content-Type"]})
        await resp.prepare(request)
        async for chunk in up.content.iter_any():
            await resp.write(chunk)
        await resp.write_eof()
        return resp

async def ready(request):
    return web.json_response({"status": "healthy", "litellm_version": "0.0-standin"})

async def session(app):
    app["session"] = aiohttp.ClientSession()
    yield
    await app["session"].close()

app = web.Application()
app.cleanup_ctx.append(session)
app.router.add_get("/health/readiness", ready)
app.router.add_post("/v1/chat/completions", chat)
web.run_app(app, host=args.host, port=args.port, access_log=None, print=None)
'''


def _executable(path: Path, body: str) -> Path:
    path.write_text(f"#!{sys.executable}\n{body}")
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


def test_the_config_is_a_pass_through_of_one_model_to_the_fake() -> None:
    config = orjson.loads(litellm_config("http://127.0.0.1:9/v1", "bench-model"))
    assert config["model_list"] == [{"model_name": "bench-model", "litellm_params": {
        "model": "openai/bench-model", "api_base": "http://127.0.0.1:9/v1",
        "api_key": BENCH_KEY}}]
    settings = config["litellm_settings"]
    assert settings["num_retries"] == 0  # a failed request is counted, never retried
    assert settings["callbacks"] == settings["success_callback"] == [] == \
        settings["failure_callback"]
    general = config["general_settings"]
    assert general["master_key"] == BENCH_KEY  # the key every bench request carries
    assert general["disable_spend_logs"] is True
    assert "database_url" not in general


def test_the_command_line_serves_on_loopback_with_one_worker(tmp_path: Path) -> None:
    cmd = litellm_command("/venv/bin/litellm", tmp_path / "c.yaml", 4123)
    assert cmd[0] == "/venv/bin/litellm"
    flags = dict(zip(cmd[1::2], cmd[2::2], strict=True))
    assert flags == {"--config": str(tmp_path / "c.yaml"), "--host": "127.0.0.1",
                     "--port": "4123", "--num_workers": "1"}
    env = litellm_env({"PATH": "/bin", "LCM_UPSTREAM__URL": "x", "DATABASE_URL": "pg://x",
                       "LITELLM_MASTER_KEY": "sk-other"})
    assert env == {"PATH": "/bin", "LITELLM_LOG": "ERROR",
                   "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                   "LITELLM_DONT_SHOW_FEEDBACK_BOX": "True"}


async def test_a_litellm_that_exits_is_reported_with_its_log(tmp_path: Path) -> None:
    exe = _executable(tmp_path / "litellm",
                      "import sys\nsys.stderr.write('config rejected: boom')\nsys.exit(3)\n")
    proc = start_litellm(str(exe), tmp_path, "http://127.0.0.1:9/v1", "bench-model", 9)
    async with aiohttp.ClientSession() as session:
        with pytest.raises(RuntimeError, match="exited with 3: config rejected: boom"):
            await wait_litellm_ready(session, "http://127.0.0.1:9", proc, tmp_path, 60)


def test_the_cli_option_takes_an_existing_executable() -> None:
    runner = CliRunner()
    out = runner.invoke(cli_main, ["bench", "short", "--help"])
    assert out.exit_code == 0 and "--litellm PATH" in out.output
    bad = runner.invoke(cli_main, ["bench", "short", "--litellm", "/no/such/litellm"])
    assert bad.exit_code == 2 and "does not exist" in bad.output


@pytest.mark.slow
def test_bench_short_measures_litellm_in_the_same_blocks(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    exe = _executable(tmp_path / "litellm", STAND_IN)
    record = tmp_path / "record.json"
    monkeypatch.setenv("STAND_IN_RECORD", str(record))
    monkeypatch.setenv("LCM_NOT_FOR_LITELLM", "1")
    store = store_env(tmp_path / "bench")
    out = run_short_bench(requests=4, concurrency=2, block=2, embedding_provider="hashing",
                          idle_timeout=60, litellm=str(exe),
                          extra_env={"LCM_SEARCH__COMMIT_INTERVAL_MS": "200", **store})
    rows = out["targets"]
    assert list(rows) == ["direct", "relay", "memory_on", "memory_off", "litellm"]
    lite = rows["litellm"]
    assert lite["errors"] == 0  # every answer came back whole, streams to [DONE]
    # its own process's CPU is counted (read from /proc in clock ticks, so four requests
    # of the stand-in may read 0.0: its RSS below shows whose process was measured)
    assert lite["req_per_s"] > 0 and isinstance(lite["cpu_path_ms"], float)
    assert lite["cpu_background_ms"] >= 0 and lite["idle_after_block_s"] >= 0
    assert out["litellm"]["version"] == "0.0-standin"
    assert out["litellm"]["cpus"] == sorted(os.sched_getaffinity(0))  # as the proxy's
    rss = out["litellm"]["rss_mib"]
    assert 10 < rss["warm"] < 2000 and rss["peak"] >= rss["end"]
    # the background-CPU target stays the proxy's own
    assert out["issue_targets"]["background_cpu_ms"] == max(
        rows[m]["cpu_background_ms"] for m in ("memory_on", "memory_off"))
    through = out["issue_targets"]["throughput"]
    for mode in ("memory_on", "memory_off"):
        assert through[mode]["litellm_req_per_s"] == lite["req_per_s"]
        assert through[mode]["ahead_of_litellm"] is (rows[mode]["req_per_s"] > lite["req_per_s"])
        assert through[mode]["target_met"] is (rows[mode]["req_per_s"] >= TARGET_REQ_PER_S)
    table = format_table(out)
    assert "| LiteLLM proxy 0.0-standin |" in table
    assert "Issue 28's throughput at 2 clients" in table and "LiteLLM 0.0-standin on CPUs" in table
    seen = orjson.loads(record.read_bytes())
    flags = dict(zip(seen["argv"][::2], seen["argv"][1::2], strict=True))
    assert flags["--num_workers"] == "1" and flags["--host"] == "127.0.0.1"
    assert seen["env"]["LITELLM_LOG"] == "ERROR"
    assert not any(k.startswith("LCM_") for k in seen["env"])
    assert Path(flags["--config"]).parent == Path(seen["cwd"])


def test_without_litellm_no_throughput_verdict_is_given() -> None:
    """The throughput target names LiteLLM: without its row the bench reports as before."""
    rows = {m: {"req_per_s": 500.0, "cpu_background_ms": 5.0}
            for m in ("direct", "relay", "memory_on", "memory_off")}
    assert set(issue_targets(100.0, rows)) == {"rss_end_mb", "rss_met", "background_cpu_ms",
                                               "background_cpu_met"}
    rows["litellm"] = {"req_per_s": 600.0, "cpu_background_ms": 90.0}
    goals = issue_targets(100.0, rows)
    assert goals["background_cpu_ms"] == 5.0  # LiteLLM's own CPU is not the proxy's
    assert goals["throughput"]["memory_on"] == {"req_per_s": 500.0, "litellm_req_per_s": 600.0,
                                                "target_met": True, "ahead_of_litellm": False}
