"""A LiteLLM proxy as one more target of ``lcm-proxy bench short`` (``--litellm PATH``).

Issue 28 asks for short-request throughput "ahead of LiteLLM measured in the same
run". LiteLLM is not a dependency of this project: the bench is given the
``litellm`` executable of a separate virtual environment
(``pip install 'litellm[proxy]'``) and runs it as a pure pass-through to the bench's
fake upstream: one model entry ``openai/<model>`` whose ``api_base`` is the fake's
``/v1`` with a dummy key, the bench client's key as master key (LiteLLM refuses to
start without one, and a deployment has one; without a database it is checked
against the config alone), no database, no callbacks, no spend logs, no retries,
logging at ERROR, one worker, the model cost map read from the package rather than
the network. Its process is pinned to the same CPUs as lcm-proxy's.

This module owns what is ours in that: the config file's text, the command line,
the environment, waiting for LiteLLM's readiness probe (``GET /health/readiness``,
200 once the router is up) and naming the version that answered.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import time
from pathlib import Path

import aiohttp
import orjson

from proxy.shortbench import BENCH_KEY

READY_PATH = "/health/readiness"
"""LiteLLM's readiness probe: 200 with ``{"status": "healthy", ...}`` once ready
(some versions add ``litellm_version``)."""


def litellm_config(upstream: str, model: str) -> str:
    """The ``config.yaml`` text for a pass-through of ``model`` to ``upstream`` (a base
    URL ending in ``/v1``); :data:`~proxy.shortbench.BENCH_KEY`, the key every bench
    request carries, is the master key and the key sent upstream (the fake upstream
    never checks it). Written as JSON, which is YAML too, so that no YAML
    library is needed here and every value is quoted exactly."""
    config = {
        "model_list": [{"model_name": model, "litellm_params": {
            "model": f"openai/{model}", "api_base": upstream, "api_key": BENCH_KEY}}],
        "litellm_settings": {"num_retries": 0, "callbacks": [], "success_callback": [],
                             "failure_callback": []},
        "general_settings": {"master_key": BENCH_KEY, "disable_spend_logs": True},
    }
    return orjson.dumps(config, option=orjson.OPT_INDENT_2).decode() + "\n"


def litellm_command(executable: str, config: Path, port: int) -> list[str]:
    """The command line that serves ``config`` on 127.0.0.1:``port`` with one worker."""
    return [executable, "--config", str(config), "--host", "127.0.0.1", "--port", str(port),
            "--num_workers", "1"]


def litellm_env(environ: dict[str, str]) -> dict[str, str]:
    """``environ`` without lcm-proxy's settings or a database URL, with logging at
    ERROR and the model cost map taken from the installed package (no fetch)."""
    env = {k: v for k, v in environ.items()
           if not k.startswith("LCM_") and k not in ("DATABASE_URL", "LITELLM_MASTER_KEY")}
    env.update({"LITELLM_LOG": "ERROR", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                "LITELLM_DONT_SHOW_FEEDBACK_BOX": "True"})
    return env


def start_litellm(executable: str, workdir: Path, upstream: str, model: str, port: int,
                  cpus: set[int] | None = None) -> subprocess.Popen[bytes]:
    """Write the config into ``workdir`` and start LiteLLM in its own session (so the
    bench can signal its process group), pinned to ``cpus`` when given. Its stderr
    goes to ``workdir/litellm.log``, which :func:`wait_litellm_ready` quotes on
    failure. Raises ``OSError`` when the executable cannot be started."""
    config = workdir / "litellm_config.yaml"
    config.write_text(litellm_config(upstream, model))
    with (workdir / "litellm.log").open("wb") as log:
        proc = subprocess.Popen(litellm_command(executable, config, port),
                                env=litellm_env(dict(os.environ)), cwd=workdir,
                                stdout=subprocess.DEVNULL, stderr=log,
                                start_new_session=True)
    if cpus:
        os.sched_setaffinity(proc.pid, cpus)
    return proc


async def wait_litellm_ready(session: aiohttp.ClientSession, base: str,
                             proc: subprocess.Popen[bytes], workdir: Path,
                             timeout: float = 180.0) -> str | None:
    """Poll ``base + READY_PATH`` until it answers 200; return the version the answer
    names, if any (else see :func:`installed_version`). Raises ``RuntimeError`` (with the end of
    LiteLLM's log) when the process exits or ``timeout`` seconds pass first."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"litellm exited with {proc.returncode}: {_log_tail(workdir)}")
        try:
            async with session.get(base + READY_PATH) as resp:
                body = await resp.read()
                if resp.status == 200:
                    try:
                        named = orjson.loads(body).get("litellm_version")
                    except (orjson.JSONDecodeError, AttributeError):
                        named = None
                    return str(named) if named else None
        except aiohttp.ClientError:
            pass
        await asyncio.sleep(0.2)
    raise RuntimeError(f"litellm did not become ready in {timeout:.0f} s: {_log_tail(workdir)}")


def installed_version(executable: str) -> str:
    """The ``litellm`` package version seen by the interpreter on ``executable``'s
    ``#!`` line (a console script's venv); "unknown" when that cannot be read."""
    try:
        with open(executable, "rb") as f:
            first = f.readline(400)
        if not first.startswith(b"#!"):
            return "unknown"
        out = subprocess.run(
            [*first[2:].decode().split(), "-c",
             "import importlib.metadata as m; print(m.version('litellm'))"],
            capture_output=True, text=True, timeout=60, check=True)
    except (OSError, UnicodeDecodeError, subprocess.SubprocessError):
        return "unknown"
    return out.stdout.strip() or "unknown"


def _log_tail(workdir: Path, chars: int = 2000) -> str:
    try:
        return (workdir / "litellm.log").read_text(errors="replace")[-chars:]
    except OSError:
        return "(no log)"
