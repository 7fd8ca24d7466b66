"""CLI failures an operator meets first (issue 29): each stops with one line on stderr
and exit status 2, never a traceback and never a side effect.

Read commands never create a store; ``serve`` checks the data dir, the port and the
data-dir lock before opening anything, and says "listening on" only once bound;
``reindex`` beside a running proxy says what to do; ``doctor`` reports what would
make ``serve`` fail. The proxies here are real ``python -m proxy serve`` processes
on loopback (hashing embedder, an upstream nobody answers: nothing is requested).
"""

from __future__ import annotations

import os
import queue
import re
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner, Result

from proxy import __version__
from proxy.cli import main
from tests.conftest import RunningProxy, store_env

ROOT = Path(__file__).resolve().parent.parent


def _env(data_dir: str | Path | None = None) -> dict[str, str]:
    """The subprocess's environment; with ``data_dir``, on the store ``LCM_TEST_STORE``
    chose for it (``tests.conftest.store_env``)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("LCM_")}
    env.update(PYTHONPATH=str(ROOT), LCM_EMBEDDING__PROVIDER="hashing",
               LCM_UPSTREAM="http://127.0.0.1:9/v1", LCM_LOG__JSON="false")
    if data_dir is not None:
        env.update(store_env(data_dir))
    return env


def run_cli(*args: str, timeout: float = 60, store: bool = False
            ) -> subprocess.CompletedProcess[str]:
    """``python -m proxy ARGS``; ``store``: on the chosen store of its ``--data-dir``."""
    data_dir = args[args.index("--data-dir") + 1] if store else None
    return subprocess.run([sys.executable, "-m", "proxy", *args], env=_env(data_dir),
                          cwd=ROOT, capture_output=True, text=True, timeout=timeout)


READ_COMMANDS = [
    ["memory", "status"], ["memory", "inspect", "item:1"], ["memory", "search", "port"],
    ["memory", "explain"], ["memory", "export"], ["memory", "prefs", "list"],
    ["memory", "retract", "1"], ["memory", "prefs", "delete", "--key", "k"],
    ["memory", "purge", "--tenant", "t", "--yes"], ["reindex"],
]


@pytest.mark.parametrize("args", READ_COMMANDS, ids=lambda a: " ".join(a[:2]))
def test_commands_on_a_mistyped_data_dir_create_nothing(tmp_path: Path,
                                                        args: list[str]) -> None:
    # port 0: no lcm-proxy serving on this machine's 8787 is named as the data's place
    runner = CliRunner(env={"LCM_PROXY__PORT": "0"})
    typo = tmp_path / "lcm-dta"
    result = runner.invoke(main, [*args, "--data-dir", str(typo)])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (
        f"Error: no lcm-proxy store in {typo} (the directory does not exist); check"
        " --data-dir, LCM_DATA_DIR or storage.data_dir")
    assert result.stdout == "" and not typo.exists()
    empty = tmp_path / "empty"
    empty.mkdir()
    result = runner.invoke(main, [*args, "--data-dir", str(empty)])
    assert result.exit_code == 2 and f"no lcm-proxy store in {empty};" in result.stderr
    assert list(empty.iterdir()) == []
    afile = tmp_path / "file"
    afile.write_text("x")
    result = runner.invoke(main, [*args, "--data-dir", str(afile)])
    assert result.exit_code == 2
    assert f"data dir {afile} is not a directory" in result.stderr


def test_prefs_set_is_the_one_command_that_creates_a_store(tmp_path: Path) -> None:
    d = tmp_path / "new"
    result = CliRunner().invoke(main, ["memory", "prefs", "set", "--key", "tone", "--title",
                                       "Tone", "--content", "short", "--data-dir", str(d)])
    assert result.exit_code == 0, result.output
    assert f"creating a new store in {d}" in result.stderr
    listed = CliRunner().invoke(main, ["memory", "prefs", "list", "--json", "--data-dir", str(d)])
    assert listed.exit_code == 0 and orjson.loads(listed.stdout)[0]["key"] == "tone"


@pytest.mark.parametrize("args,reason", [
    (["--log-level", "LOUD"], "command line: log.level: expected one of DEBUG, INFO, WARNING,"
                              " ERROR, CRITICAL, got 'LOUD'"),
    (["--port", "99999"], "command line: proxy.port = 99999 is outside the allowed range"
                          " 0..65535"),
])
def test_serve_refuses_invalid_flags(tmp_path: Path, args: list[str], reason: str) -> None:
    d = tmp_path / "d"
    result = CliRunner().invoke(main, ["serve", "--data-dir", str(d), *args])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == f"Error: {reason}"
    assert not d.exists()


def test_serve_refuses_an_unknown_key_in_its_config_file(tmp_path: Path) -> None:
    config = tmp_path / "lcm.toml"
    config.write_text("[proxy]\nprot = 9000\n")
    result = CliRunner().invoke(main, ["serve", "--config", str(config), "--data-dir",
                                       str(tmp_path / "d")])
    assert result.exit_code == 2, result.output
    assert result.stderr.strip() == (f"Error: {config}: unknown key proxy.prot"
                                     " (did you mean port?)")


def test_serve_and_doctor_on_a_data_dir_that_is_a_file(tmp_path: Path) -> None:
    afile = tmp_path / "data"
    afile.write_text("not a directory")
    served = run_cli("serve", "--port", "0", "--data-dir", str(afile))
    assert served.returncode == 2, served.stderr
    assert served.stderr.strip() == (f"Error: data dir {afile} is not a directory (it is a"
                                      " regular file); pass --data-dir a directory, or"
                                      " remove the file")
    doctor = CliRunner().invoke(main, ["doctor", "--json", "--data-dir", str(afile)])
    assert doctor.exit_code == 1, doctor.output
    report = orjson.loads(doctor.stdout)
    assert report["problems"] == [served.stderr.strip().removeprefix("Error: ")]
    assert not any("created on first serve" in w for w in report["warnings"])


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes anywhere")
def test_serve_and_doctor_on_an_unwritable_data_dir(tmp_path: Path) -> None:
    d = tmp_path / "ro"
    d.mkdir(mode=0o555)
    served = run_cli("serve", "--port", "0", "--data-dir", str(d))
    assert served.returncode == 2 and "is not writable" in served.stderr
    assert "Traceback" not in served.stderr
    doctor = CliRunner().invoke(main, ["doctor", "--data-dir", str(d)])
    assert doctor.exit_code == 1 and "is not writable" in doctor.stdout


class Serving:
    """A ``python -m proxy serve`` process; ``port`` is read from its "listening on"."""

    def __init__(self, data_dir: Path) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "proxy", "serve", "--port", "0", "--data-dir",
             str(data_dir)], env=_env(data_dir), cwd=ROOT, stderr=subprocess.PIPE, text=True)
        self.lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()
        deadline = time.monotonic() + 60
        while True:
            line = self.lines.get(timeout=max(0.1, deadline - time.monotonic()))
            found = re.search(r"listening on http://127\.0\.0\.1:(\d+)/v1", line)
            if found:
                self.port = int(found.group(1))
                return

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.lines.put(line)

    def stop(self) -> int:
        self.proc.terminate()
        return self.proc.wait(timeout=60)


@pytest.fixture
def serving(tmp_path: Path) -> Iterator[tuple[Serving, Path]]:
    data_dir = tmp_path / "live"
    server = Serving(data_dir)
    try:
        yield server, data_dir
    finally:
        if server.proc.poll() is None:
            server.stop()


def test_a_second_serve_reindex_and_doctor_beside_a_running_proxy(
        serving: tuple[Serving, Path], tmp_path: Path) -> None:
    server, data_dir = serving
    pid = server.proc.pid
    # the same port, another data dir: one line, nothing announced, nothing opened
    other = tmp_path / "other"
    second = run_cli("serve", "--port", str(server.port), "--data-dir", str(other),
                     store=True)
    assert second.returncode == 2, second.stderr
    assert second.stderr.strip() == (
        f"Error: cannot listen on 127.0.0.1 port {server.port}: address already in use"
        " (another lcm-proxy or program listens there; stop it or pick another --port)")
    assert not (other / "lcm.sqlite3").exists()
    # another port, the same data dir: the lock names the running proxy
    third = run_cli("serve", "--port", "0", "--data-dir", str(data_dir), store=True)
    assert third.returncode == 2, third.stderr
    assert third.stderr.strip() == (f"Error: data dir {data_dir} is in use by a running"
                                     f" lcm-proxy (pid {pid}): stop it first, or pass"
                                     " another --data-dir")
    # reindex says what to do instead of Tantivy's lock message
    reindex = run_cli("reindex", "--data-dir", str(data_dir), store=True)
    assert reindex.returncode == 2, reindex.stderr
    assert reindex.stderr.strip().startswith(
        f"Error: data dir {data_dir} is in use by a running lcm-proxy (pid {pid}): stop that"
        " proxy first, then run `lcm-proxy reindex`")
    assert "LockBusy" not in reindex.stderr
    # doctor beside the running proxy, configured with its port: the proxy is named
    # (pid, URL, health) in a note; neither its lock nor its port is a warning, and
    # the read-only checks still run
    doctor = CliRunner().invoke(main, ["doctor", "--json", "--data-dir", str(data_dir),
                                       "--config", _port_config(tmp_path, server.port)])
    assert doctor.exit_code == 0, doctor.output
    report = orjson.loads(doctor.stdout)
    url = f"http://127.0.0.1:{server.port}"
    assert report["running_proxy"] == {
        "pid": pid, "command": "serve", "url": url, "status": "ok", "version": __version__,
        "data_dir": str(data_dir), "owns_configured_port": True}
    assert report["warnings"] == [] and report["problems"] == []
    assert report["notes"][0].startswith(
        f"a running lcm-proxy (pid {pid}) serves this data dir at {url} (health: ok);"
        " doctor only reads beside it")
    assert report["integrity_check"] == ["ok"] and "index_consistency" in report
    # (its port named too: the default 8787 may be another proxy's, such as the
    # README's step 1 serving while the tests run)
    text = CliRunner().invoke(main, ["doctor", "--data-dir", str(data_dir), "--config",
                                     _port_config(tmp_path, server.port)])
    assert text.exit_code == 0, text.output
    assert f"running proxy:   serve, pid {pid}, {url} (health: ok)" in text.stdout
    assert "warning:" not in text.stdout and "integrity:       ok" in text.stdout
    # the configured port taken by something else is still a warning
    with socket.socket() as other_listener:
        other_listener.bind(("127.0.0.1", 0))
        other_listener.listen()
        taken = other_listener.getsockname()[1]
        busy = CliRunner().invoke(main, ["doctor", "--json", "--data-dir", str(data_dir),
                                         "--config", _port_config(tmp_path, taken)])
    assert busy.exit_code == 0, busy.output
    assert [w.split(":")[0] for w in orjson.loads(busy.stdout)["warnings"]] == [
        "serve with these settings would fail now"]
    assert server.proc.poll() is None  # the running proxy was never disturbed
    assert server.stop() == 0
    # stopped: the lock is gone and reindex runs
    done = run_cli("reindex", "--data-dir", str(data_dir), timeout=120, store=True)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr


def _port_config(tmp_path: Path, port: int) -> str:
    path = tmp_path / "port.toml"
    path.write_text(f"[proxy]\nport = {port}\n")
    return str(path)


def test_reindex_rebuilds_an_index_it_cannot_open(tmp_path: Path) -> None:
    """The fix doctor names for a corrupt index is `reindex`: an index whose files
    cannot be opened is deleted and rebuilt from the store (as serve does), not
    refused."""
    from memory_core.engine import Engine
    from memory_core.models import Scope

    data_dir = tmp_path / "d"
    engine = Engine(data_dir)
    _, done = engine.capture_request(Scope("t"), "r1", [
        {"role": "user", "content": "The staging database port is 5433."}], {})
    done.result(30)
    engine.close()
    first = run_cli("reindex", "--data-dir", str(data_dir), timeout=120, store=True)
    assert first.returncode == 0, first.stderr
    meta = data_dir / "index" / "text" / "meta.json"
    assert meta.exists()
    meta.write_text("{ not json")
    again = run_cli("reindex", "--data-dir", str(data_dir), timeout=120, store=True)
    assert again.returncode == 0, again.stderr
    assert "deleting" in again.stderr and "Traceback" not in again.stderr
    assert again.stdout.split() == first.stdout.split() == ["message=1", "item=1"]


@pytest.mark.parametrize("limit", ["0", "-1"])
def test_search_refuses_a_limit_below_one(tmp_path: Path, limit: str) -> None:
    """`--limit -1` sliced the hits to all but the last; the admin API clamps to 1:
    the CLI refuses it as bad usage (exit 2) before opening anything."""
    result = CliRunner().invoke(main, ["memory", "search", "port", "--limit", limit,
                                       "--data-dir", str(tmp_path / "d")])
    assert result.exit_code == 2 and "--limit" in result.output


@pytest.mark.parametrize("args", [["memory", "inspect", "item:abc"], ["memory", "inspect", "xyz"],
                                  ["memory", "retract", "0"]], ids=lambda a: " ".join(a[1:]))
def test_a_malformed_ref_is_bad_usage(tmp_path: Path, args: list[str]) -> None:
    """A ref that cannot exist is bad usage (exit 2, like docs/cli.md says), before any
    store opens; a well-formed ref that is not there is the command's own failure (1)."""
    d = tmp_path / "d"
    result = CliRunner().invoke(main, [*args, "--data-dir", str(d)])
    assert result.exit_code == 2, result.output
    assert result.stderr.startswith("Error: ") and len(result.stderr.splitlines()) == 1
    assert not d.exists()
    from memory_core.engine import Engine
    Engine(d).close()
    missing = CliRunner().invoke(main, ["memory", "inspect", "item:999", "--data-dir", str(d)])
    assert missing.exit_code == 1 and "no memory item 999" in missing.stderr


async def test_an_empty_search_or_explain_names_the_running_proxys_data_dir(
        proxy: RunningProxy, tmp_path: Path) -> None:
    """A newcomer serves with ``--data-dir ./lcm-demo`` and then runs ``memory search``
    without it: the default data dir holds nothing, and the command says which data dir
    the proxy on the configured port keeps instead. Its own data dir: no note."""
    import asyncio

    from memory_core.engine import Engine

    other = tmp_path / "other"
    Engine(other).close()
    served = proxy.settings.storage.data_dir
    env = {"LCM_PROXY__PORT": str(proxy.port), "LCM_EMBEDDING__PROVIDER": "hashing"}

    def invoke(*args: str) -> Result:
        return CliRunner().invoke(main, list(args), env=env)

    search = await asyncio.to_thread(
        invoke, "memory", "search", "staging port", "--mode", "keyword",
        "--data-dir", str(other))
    assert search.exit_code == 0, search.output
    assert search.stdout == "no matches\n"
    assert search.stderr == (
        f"note: the lcm-proxy at http://127.0.0.1:{proxy.port} keeps its data in"
        f" {served}: add --data-dir {served}\n")
    explain = await asyncio.to_thread(invoke, "memory", "explain", "--data-dir", str(other))
    assert explain.exit_code == 1
    assert f"no injection recorded yet; the lcm-proxy at http://127.0.0.1:{proxy.port}" \
        f" keeps its data in {served}: add --data-dir {served}" in explain.stderr
    own = await asyncio.to_thread(
        invoke, "memory", "search", "staging port", "--mode", "keyword", "--data-dir", served)
    assert own.exit_code == 0 and own.stdout == "no matches\n" and own.stderr == ""
    # the newcomer's case: the default ./lcm-data was never created
    absent = tmp_path / "lcm-data"
    for args in (("memory", "search", "staging port"), ("memory", "explain"),
                 ("memory", "inspect", "item:1"), ("memory", "status")):
        refused = await asyncio.to_thread(invoke, *args, "--data-dir", str(absent))
        assert refused.exit_code == 2, (args, refused.output)
        assert refused.stderr == (
            f"Error: no lcm-proxy store in {absent} (the directory does not exist);"
            f" the lcm-proxy at http://127.0.0.1:{proxy.port} keeps its data in {served}:"
            f" add --data-dir {served}\n"), args
    assert not absent.exists()
