"""What the upstream receives in place of the client's messages, request by request,
for one conversation grown to a depth: to diff two trees' blocks.

Runs ``lcm-proxy bench history``'s depth bench in this process
(``run_depth_bench_async``: the growth request, the warm turns and the measured
turns, each through the proxy, the hashing embedder) and writes, for every request
the proxy forwarded, one JSON line: the body's SHA-256, its message count, and in
full the messages the proxy writes to (the newest user message, which carries the
block; system messages; the scaffold), ``{"n", "sha256", "count", "messages":
[[index, role, content], ...]}``. Two trees, same arguments, then ``diff`` (or
``cmp``) the two files:

    cd TREE && PYTHONPATH=$PWD python docs/evaluation/block_dump.py numbers 1000 30 OUT

The hash seed is fixed (``PYTHONHASHSEED=0``, the script re-runs itself with it):
with a random one, ties in the block's scores may fall another way between two runs
of one tree. Figures: docs/evaluation/README.md, "The request path at 1,000 turns,
profiled across threads".
"""
from __future__ import annotations

import asyncio
import hashlib
import re
import os
import sys
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, os.getcwd())


_CLOCK = re.compile(rb"(\d{4}-\d\d-\d\d) \d\d:\d\d")
"""A date with its time of day, as the scaffold's ranges and the block write them."""
_SAID = re.compile(rb"( (?:\xc2\xb7|\\u00b7) )\d\d:\d\d:")
"""A quoted message's time of day (``msg 26 · user · 21:18:``)."""


def _record(n: int, raw: bytes) -> bytes:
    """One line: the forwarded body's digest (any change anywhere shows), its message
    count, and in full its newest user message (where the block goes), its system
    messages and the scaffold's (:data:`SCAFFOLD_HEADER`). The wall clock's times of
    day are masked (``HH:MM``): two runs a minute apart write other times."""
    from memory_core.compaction.compressor import SCAFFOLD_HEADER

    raw = _CLOCK.sub(rb"\1 HH:MM", _SAID.sub(rb"\1HH:MM:", raw))
    sent = orjson.loads(raw).get("messages") or []
    users = [i for i, m in enumerate(sent) if isinstance(m, dict) and m.get("role") == "user"]
    keep = []
    for i, m in enumerate(sent):
        if not isinstance(m, dict):
            continue
        content = m.get("content")
        text = content if isinstance(content, str) else orjson.dumps(content).decode()
        if m.get("role") == "system" or (users and i == users[-1]) \
                or text.startswith(SCAFFOLD_HEADER):
            keep.append([i, m.get("role"), content])
    return orjson.dumps({"n": n, "sha256": hashlib.sha256(raw).hexdigest(),
                         "count": len(sent), "messages": keep})


async def run(workload: str, turns: int, measure: int, out: Path) -> int:
    from proxy.evaluation import fake
    from proxy.evaluation import historybench as hb

    lines: list[bytes] = []
    original = fake.EvalUpstream._chat

    async def recording(self: Any, request: Any) -> Any:
        if request.headers.get(fake.DIRECT_HEADER) != "1":
            lines.append(_record(len(lines), await request.read()))
        return await original(self, request)

    fake.EvalUpstream._chat = recording  # type: ignore[method-assign]
    try:
        await hb.run_depth_bench_async([turns], measure, workload=workload)
    finally:
        fake.EvalUpstream._chat = original  # type: ignore[method-assign]
    out.write_bytes(b"\n".join(lines) + b"\n")
    return len(lines)


def main() -> None:
    if os.environ.get("PYTHONHASHSEED") != "0":
        os.execve(sys.executable, [sys.executable, *sys.argv],
                  {**os.environ, "PYTHONHASHSEED": "0"})
    workload, turns, measure, out = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    n = asyncio.run(run(workload, turns, measure, Path(out)))
    print(f"{n} forwarded requests written to {out}")


if __name__ == "__main__":
    main()
