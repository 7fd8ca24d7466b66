"""Where a proxy process spends its CPU deep in a conversation, every thread profiled.

Copies ``TREE`` (less ``.git``, ``.venv`` and caches) into a temporary folder with a
``sitecustomize.py`` that starts a thread-CPU cProfile (``time.thread_time``: a
thread's waits are not charged to what it waits in) in every thread of the process
it runs in, then runs ``lcm-proxy bench history --workload numbers --depths DEPTH
--measure N --proxy-process --pin`` against that copy. After the first measured turn
the proxy takes a snapshot of each thread's figures (``SIGUSR1``), after the last it
writes each thread's figures since the snapshot (``SIGUSR2``): the ``N - 1`` last
measured turns, each request and its background work until the proxy was idle
again (completed calls only). Prints per thread its CPU a turn and its functions
by cumulative and own time (ms a turn; calls a turn). cProfile's own cost per call
inflates code of many small calls three to five times: read the shares, and time a
function found here on its own before and after a change. The main thread's figures
include the snapshot itself (``_mark``, ``snapshot_stats``).

    python docs/evaluation/thread_profile.py TREE [DEPTH] [N] [TOP]

Figures: docs/evaluation/README.md, "The request path at 1,000 turns, profiled
across threads".
"""
from __future__ import annotations

import asyncio
import glob
import marshal
import os
import shutil
import signal
import sys
import tempfile
import time
from pathlib import Path

SITECUSTOMIZE = '''
import cProfile, marshal, os, signal, sys, threading, time

_PROFS, _BASE, _OUT = {}, {}, os.environ.get("THREAD_PROFILE_DIR")


def _new():
    p = cProfile.Profile(time.thread_time)
    _PROFS[threading.get_ident()] = (threading.current_thread().name, p)
    p.enable()


def _boot(frame, event, arg):
    sys.setprofile(None)
    _new()


def _snap(p):
    p.snapshot_stats()
    return {k: (v[0], v[1], v[2], v[3], dict(v[4])) for k, v in p.stats.items()}


def _mark(*_):
    for tid, (_n, p) in list(_PROFS.items()):
        _BASE[tid] = _snap(p)


def _dump(*_):
    for tid, (name, p) in list(_PROFS.items()):
        now, base, out = _snap(p), _BASE.get(tid, {}), {}
        for k, (cc, nc, tt, ct, callers) in now.items():
            b = base.get(k, (0, 0, 0.0, 0.0, {}))
            if nc > b[1]:
                out[k] = (cc - b[0], nc - b[1], tt - b[2], ct - b[3], {})
        with open(os.path.join(_OUT, f"{name.replace('/', '_')}-{tid}.prof"), "wb") as f:
            marshal.dump(out, f)


if _OUT:
    threading.setprofile(_boot)
    _new()
    signal.signal(signal.SIGUSR1, _mark)
    signal.signal(signal.SIGUSR2, _dump)
'''


def _proxy_pid() -> int:
    """The ``serve`` process this process started."""
    for p in Path("/proc").iterdir():
        if not p.name.isdigit():
            continue
        try:
            ppid = int((p / "stat").read_text().rsplit(")", 1)[1].split()[1])
            cmd = (p / "cmdline").read_bytes()
        except (OSError, ValueError, IndexError):
            continue
        if ppid == os.getpid() and b"serve" in cmd:
            return int(p.name)
    raise RuntimeError("no proxy process")


def report(out: str, turns: int, top: int) -> None:
    def where(fn: str, line: int, func: str) -> str:
        return f"{func} {'/'.join(fn.rsplit('/', 2)[-2:])}:{line}"

    for f in sorted(glob.glob(f"{out}/*.prof")):
        with open(f, "rb") as fh:
            stats = marshal.load(fh)
        name = Path(f).stem.rsplit("-", 1)[0]
        total = sum(v[2] for v in stats.values()) * 1000 / turns
        print(f"== {name}: {total:.2f} ms a turn")
        if total < 0.5:
            continue
        for title, col in (("cumulative", 3), ("own", 2)):
            print(f"  -- by {title} (cumulative, own ms a turn; calls a turn)")
            for (fn, line, func), v in sorted(stats.items(), key=lambda kv: -kv[1][col])[:top]:
                print(f"   {v[3] * 1000 / turns:8.2f} {v[2] * 1000 / turns:7.2f}"
                      f" {v[1] / turns:8.1f}  {where(fn, line, func)}")


def main() -> None:
    tree = str(Path(sys.argv[1]).resolve())
    depth = int(sys.argv[2]) if len(sys.argv) > 2 else 1000
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    top = int(sys.argv[4]) if len(sys.argv) > 4 else 30
    with tempfile.TemporaryDirectory(prefix="lcm-thread-profile-") as tmp:
        copy, out = Path(tmp) / "tree", Path(tmp) / "out"
        shutil.copytree(tree, copy, ignore=shutil.ignore_patterns(
            ".git", ".venv", "__pycache__", "*.pyc"))
        (copy / "sitecustomize.py").write_text(SITECUSTOMIZE)
        out.mkdir()
        os.environ["THREAD_PROFILE_DIR"] = str(out)
        sys.path.insert(0, str(copy))
        from proxy.evaluation import historybench as hb

        ticks = [0]

        def tick() -> None:
            ticks[0] += 1
            if ticks[0] == 1:
                os.kill(_proxy_pid(), signal.SIGUSR1)
            elif ticks[0] == n:
                os.kill(_proxy_pid(), signal.SIGUSR2)
                time.sleep(3.0)  # the proxy writes its files before the bench stops it

        res = asyncio.run(hb.run_depth_bench_async(
            [depth], n, workload="numbers", process=True, pin=True, proxy_tree=str(copy),
            tick=tick))
        print(res["table"], "\n(profiled: latency and CPU inflated)\n")
        report(str(out), n - 1, top)


if __name__ == "__main__":
    main()
