"""Cost of a whole history re-sent in a new conversation (issue 28).

N statement turns are told in session A (one request per turn, as a chat client
sends them), then the whole history is sent again, a new system prompt above it, as
one request in session B: a resume. Each statement is then a restatement from
another conversation, and ``memory_core.items.writer._resent`` decides whether it
is history sent again (no new occasion). Timed: B's capture and extraction (the
request's capture job and the extraction jobs it queues, to ``Engine.flush``), in
CPU seconds of the process (``time.process_time``: every thread; the machine may be
shared), with the check and with it off (``_resent`` answering ``False``) on a copy
of the same store. Each tree runs in a process of its own.

    python docs/evaluation/resend_cost.py                         # this tree
    python docs/evaluation/resend_cost.py --base /tmp/resent-base # and a baseline
    python docs/evaluation/resend_cost.py --sizes 100,200         # other N

``--base``: another checkout (``git archive HEAD | tar -x -C DIR``) measured first,
as "before". Prints a Markdown table: tree, N, seconds with the check, with it off,
their ratio. Figures: docs/evaluation/README.md, "A re-sent history" (issue 28).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _tell(data: Path, n: int) -> list[dict[str, str]]:
    from memory_core.engine import Engine
    from memory_core.models import Scope

    engine = Engine(data)
    told = Scope("t", "coder", "A")
    messages: list[dict[str, str]] = [{"role": "system", "content": "You are helpful."}]
    for i in range(n):
        messages.append({"role": "user", "content": (
            f"The service number {i} listens on port {4000 + i}. Keep in mind the owner"
            f" of service {i} is team {i % 7}.")})
        _ticket, fut = engine.capture_request(told, f"a{i}", list(messages), {})
        fut.result(120)
        messages.append({"role": "assistant", "content": f"Noted, service {i}."})
    engine.flush()
    engine.close()
    return messages


def _resend(data: Path, messages: list[dict[str, str]], check: bool) -> float:
    from memory_core.engine import Engine
    from memory_core.items import writer
    from memory_core.models import Scope

    kept = writer._resent
    if not check:
        writer._resent = lambda *_a, **_k: False  # type: ignore[assignment]
    try:
        engine = Engine(data)
        resent = [{"role": "system", "content": "Today is Monday."}, *messages[1:],
                  {"role": "user", "content": "Let's continue."}]
        start = time.process_time()
        _ticket, fut = engine.capture_request(Scope("t", "coder", "B"), "b", resent, {})
        fut.result(600)
        engine.flush()
        spent = time.process_time() - start
        engine.close()
        return spent
    finally:
        writer._resent = kept


def _measure(n: int) -> dict[str, float]:
    """One N in this process: tell once, re-send on two copies of the store."""
    with tempfile.TemporaryDirectory() as tmp:
        told = Path(tmp) / "told"
        messages = _tell(told, n)
        out = {}
        for check in (True, False):
            copy = Path(tmp) / f"copy-{check}"
            shutil.copytree(told, copy)
            out["on" if check else "off"] = _resend(copy, messages, check)
        return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--base", type=Path, help="a baseline tree, measured first")
    parser.add_argument("--sizes", default="100,200,400,800")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        print(json.dumps(_measure(args.one)))
        return
    trees = [("before", args.base)] if args.base else []
    trees.append(("after" if args.base else "this tree", ROOT))
    print("| tree | N | with the check (s) | check off (s) | ratio |")
    print("|---|---:|---:|---:|---:|")
    for name, tree in trees:
        env = dict(os.environ, PYTHONPATH=str(tree))
        for n in (int(s) for s in args.sizes.split(",")):
            got = json.loads(subprocess.run(
                [sys.executable, str(Path(__file__).resolve()), "--one", str(n)],
                env=env, cwd=tree, check=True, capture_output=True, text=True,
            ).stdout.strip().splitlines()[-1])
            print(f"| {name} | {n} | {got['on']:.2f} | {got['off']:.2f} |"
                  f" {got['on'] / got['off']:.2f} |", flush=True)


if __name__ == "__main__":
    main()
