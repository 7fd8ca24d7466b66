"""Cost of the extraction job's "did the assistant write this?" look-up (issue 28).

Each queued user message of 40 characters or more is checked against the tool-call
arguments of the assistant messages of its scope stored in the hour before it
(``ExtractionQueue.calls_before``, :mod:`memory_core.capture.delegated`). Measured on
a SQLite store holding one conversation of N turns, in three shapes:

- ``chat``: no tool calls, one message every half second (N turns within the hour);
- ``re-send``: the same N turns sent at once (one ``created_at`` for all of them);
- ``agent``: as ``chat``, every tenth assistant turn a tool call with its result.

For each: SQLite virtual-machine steps of the look-up of the newest user message
(progress handler, every 10 steps), the mean steps and CPU microseconds
(``time.process_time``) of one look-up over 50 user messages spread over the
conversation, and a digest of what the look-ups of those 50 messages returned
(equal digests: the same rows in the same order), and the CPU milliseconds of
storing the conversation (one capture of all N turns, after a warm-up capture of
10 turns in another session: the index is kept on every insert). Each tree runs in a process of
its own; the stores are written with extraction off (the look-up is called
directly).

    python docs/evaluation/calls_scan.py                           # this tree
    python docs/evaluation/calls_scan.py --base /tmp/callscan-base # and a baseline
    python docs/evaluation/calls_scan.py --sizes 100,500

``--base``: another checkout (``git archive HEAD | tar -x -C DIR``) measured first, as
"before". Prints a Markdown table. Figures: docs/evaluation/README.md, "The
delegated-prompt look-up" (issue 28).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
SHAPES = ("chat", "re-send", "agent")
SAMPLE = 50


def _messages(n: int, shape: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = [{"role": "system", "content": "You are helpful."}]
    for i in range(n):
        out.append({"role": "user", "content": (
            f"The service number {i} listens on port {4000 + i}; its owner is team"
            f" {i % 7}.")})
        if shape == "agent" and i % 10 == 9:
            out.append({"role": "assistant", "content": None, "tool_calls": [
                {"id": f"c{i}", "type": "function", "function": {
                    "name": "Task", "arguments": json.dumps(
                        {"prompt": f"Check the health of service {i} and report back."})}}]})
            out.append({"role": "tool", "tool_call_id": f"c{i}", "content": "healthy"})
        out.append({"role": "assistant", "content": f"Noted, service {i}."})
    return out


def _measure(n: int, shape: str) -> dict[str, Any]:
    """One store of ``n`` turns of ``shape`` in this process, the look-ups timed."""
    from memory_core.capture import delegated
    from memory_core.config import MemoryConfig
    from memory_core.engine import Engine
    from memory_core.models import Scope

    with tempfile.TemporaryDirectory() as tmp:
        engine = Engine(Path(tmp) / "d", MemoryConfig(extract=False))
        try:
            _t, warm = engine.capture_request(Scope("t", "coder", "warm"), "w",
                                              _messages(10, shape), {})
            warm.result(600)  # first-use imports and caches, outside the timing
            engine.flush()
            messages = _messages(n, shape)
            began = time.process_time()
            _ticket, fut = engine.capture_request(Scope("t", "coder", "s"), "r",
                                                  messages, {})
            fut.result(600)
            engine.flush()
            capture = time.process_time() - began
            if shape != "re-send":  # a message every half second, in stored order
                engine.store.write_tx_sync(lambda tx: tx.history._c.execute(
                    "UPDATE messages SET created_at = 1.0e9 + id * 0.5"))
            ids: list[int] = engine.store.read_tx(lambda tx: [r[0] for r in tx.history._c.execute(
                "SELECT id FROM messages WHERE msg_role = 'user' ORDER BY id")])
            sample = ids[::max(1, len(ids) // SAMPLE)][:SAMPLE - 1] + ids[-1:]

            def look(tx: Any, mid: int) -> list[str]:
                got: list[str] = tx.extraction.calls_before(
                    mid, delegated.WINDOW_SECONDS, delegated.RECENT_CALLS)
                return got

            def steps(tx: Any, mid: int) -> int:
                ticks = [0]

                def tick() -> int:
                    ticks[0] += 1
                    return 0

                tx.extraction._c.set_progress_handler(tick, 10)
                try:
                    look(tx, mid)
                finally:
                    tx.extraction._c.set_progress_handler(None, 0)
                return ticks[0] * 10

            newest = engine.store.read_tx(steps, ids[-1])
            mean_steps = sum(engine.store.read_tx(steps, m) for m in sample) / len(sample)
            found = [engine.store.read_tx(look, m) for m in sample]
            start = time.process_time()
            rounds = 3
            for _ in range(rounds):
                for m in sample:
                    engine.store.read_tx(look, m)
            spent = (time.process_time() - start) / (rounds * len(sample))
            digest = hashlib.sha256(json.dumps(found).encode()).hexdigest()[:10]
            return {"newest": newest, "mean": mean_steps, "us": spent * 1e6,
                    "found": sum(map(len, found)), "digest": digest,
                    "capture": capture * 1e3}
        finally:
            engine.close()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--base", type=Path, help="a baseline tree, measured first")
    parser.add_argument("--sizes", default="100,500,1000,2000")
    parser.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(_measure(int(args.one[0]), args.one[1])))
        return
    trees = [("before", args.base)] if args.base else []
    trees.append(("after" if args.base else "this tree", ROOT))
    print("| tree | shape | N | steps, newest turn | steps per look-up | µs per look-up"
          " | rows found | digest | capture (ms) |")
    print("|---|---|---:|---:|---:|---:|---:|---|---:|")
    for shape in SHAPES:
        for name, tree in trees:
            env = dict(os.environ, PYTHONPATH=str(tree))
            for n in (int(s) for s in args.sizes.split(",")):
                got = json.loads(subprocess.run(
                    [sys.executable, str(Path(__file__).resolve()), "--one", str(n), shape],
                    env=env, cwd=tree, check=True, capture_output=True, text=True,
                ).stdout.strip().splitlines()[-1])
                print(f"| {name} | {shape} | {n} | {got['newest']:,} | {got['mean']:,.0f} |"
                      f" {got['us']:,.0f} | {got['found']} | {got['digest']} |"
                      f" {got['capture']:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
