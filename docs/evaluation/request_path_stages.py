"""CPU time of the request path's stages deep in a conversation, per measured request.

Runs ``lcm-proxy bench history`` in-process (``eval``: the eval's generator,
``run_history_bench_async``; ``numbers``: issue 28's workload, ``run_depth_bench_async``
at one depth) and wraps the stages with ``time.thread_time`` (inclusive: a stage's
figure includes the stages it calls; each on the thread that runs it). Only the
measured turns count (from the second one on). Works on older trees too (stages a
tree lacks are reported as missing), so one command compares two checkouts:

    cd TREE && PYTHONPATH=$PWD python docs/evaluation/request_path_stages.py eval 1000 100
    cd TREE && PYTHONPATH=$PWD python docs/evaluation/request_path_stages.py numbers 1000 30
    cd TREE && PYTHONPATH=$PWD python docs/evaluation/request_path_stages.py eval-depth 5000 30

(``eval-depth``: the eval's generator grown to one depth as the depth bench grows it,
``run_depth_bench_async``, instead of the history bench's preload.)

What is on the critical path of a request: the event loop's parse
(``steps.parse_body``), the writer's capture (``CaptureJobs._capture_request_job``: node keys,
insert, the user message's extraction) and the memory-path job (``plan.prepare``:
context budget, scaffold, block). In the background: the answer's capture and
extraction (``_capture_response_job``, ``_extract_pending``), the forwarded-body
record (``forwarded.prepare``) and the compaction check (``Engine.compact``).
Figures: docs/evaluation/README.md, "The request path at 1,000 turns", and "Work
repeated on every request at 1,000 turns" (the block's steps one by one). The script
may run from another tree's folder (``cd TREE && PYTHONPATH=$PWD python
/path/to/this/request_path_stages.py …``): it wraps what that tree has.
"""
import asyncio
import concurrent.futures.thread as cft
import functools
import os
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, os.getcwd())

ON = False
CPU: dict[str, float] = defaultdict(float)
CALLS: dict[str, int] = defaultdict(int)


def wrap(obj: Any, name: str, label: str | None = None) -> None:
    """Time ``obj.name`` (CPU of the calling thread) while ``ON``."""
    if not hasattr(obj, name):
        print(f"(missing in this tree: {getattr(obj, '__name__', obj)}.{name})")
        return
    orig = getattr(obj, name)
    label = label or f"{getattr(obj, '__name__', obj)}.{name}"

    @functools.wraps(orig)
    def timed(*a: Any, **k: Any) -> Any:
        if not ON:
            return orig(*a, **k)
        c0 = time.thread_time()
        try:
            return orig(*a, **k)
        finally:
            CPU[label] += time.thread_time() - c0
            CALLS[label] += 1

    setattr(obj, name, timed)


def instrument() -> None:
    from memory_core.engine import Engine
    try:  # memory_core in folders (since 2d18265)
        from memory_core.assembly import block as asm
        from memory_core.assembly import budget
        from memory_core.capture import evidence, tree
        from memory_core.capture import forwarded as fwd
        from memory_core.capture.jobs import CaptureJobs
        from memory_core.items import writer as mem
    except ImportError:  # an older tree: flat modules, the capture jobs on the engine
        from memory_core import assemble as asm  # type: ignore[no-redef]
        from memory_core import budget, tree
        from memory_core import capture as evidence  # type: ignore[no-redef]
        from memory_core import forwarded as fwd
        from memory_core import memory as mem
        CaptureJobs = Engine  # type: ignore[misc]
    from memory_core.store import sqlite
    from proxy import rewrite

    wrap(cft._WorkItem, "run", "[thread] pool jobs (all pools)")
    wrap(sqlite.SqliteStore, "_run_batch", "[thread] writer batches")
    for n in ("_capture_request_job", "_extract_one", "_capture_response_job",
              "_extract_pending", "capture_response"):
        wrap(CaptureJobs, n, f"CaptureJobs.{n}")
    for n in ("assemble", "forest_for", "superseded_sources", "has_history_beyond", "compact"):
        wrap(Engine, n, f"Engine.{n}")
    wrap(evidence, "capture_request", "evidence.capture_request")
    wrap(tree.ChainKeyCache, "keys", "ChainKeyCache.keys")
    for n in ("_choose_items", "_collapse", "terms"):
        wrap(asm, n, f"assemble.{n}")
    wrap(mem, "store_extracted", "memory.store_extracted")
    wrap(mem, "_reworded", "memory._reworded")
    wrap(mem, "correction_target", "writer.correction_target")
    for n in ("apply_forest", "needs_exact_numbers", "dumps_body"):
        wrap(rewrite, n, f"rewrite.{n}")
    for n in ("request_budget", "media_upper_bound"):
        wrap(budget, n, f"budget.{n}")
    wrap(fwd, "prepare", "forwarded.prepare")
    try:  # the steps that read the whole history (2026-12-04)
        from memory_core.compaction import compressor
        from memory_core.tools import commands
        wrap(compressor, "forest", "compressor.forest")
        wrap(commands, "may_hold_command", "commands.may_hold_command")
    except ImportError:
        pass
    try:  # the block's steps one by one (issue 28, branch lat30)
        from memory_core.assembly import in_view
        from memory_core.capture import message_facts
        from memory_core.compaction import compressor as comp
        from memory_core.items import cache
        from memory_core.store import sqlite_assembly
        wrap(cache.ActiveItems, "view", "ActiveItems.view")
        wrap(in_view, "newest", "in_view.newest")
        wrap(in_view, "related_updates", "in_view.related_updates")
        for n in ("_fit", "_item_line", "_block_tokens", "asked_terms"):
            wrap(asm, n, f"assemble.{n}")
        wrap(sqlite_assembly.SqliteAssemblyReads, "block_basics", "tx.block_basics")
        for n in ("has_splices", "searcher"):
            wrap(Engine, n, f"Engine.{n}")
        wrap(comp, "_scaffold_text", "compressor._scaffold_text")
        wrap(message_facts.MessageFacts, "total", "message_facts.total")
        wrap(rewrite, "apply_splices", "rewrite.apply_splices")
    except ImportError:
        pass
    here = Path(os.getcwd()).resolve()
    try:
        from proxy.flow import plan, steps
        if not Path(plan.__file__).resolve().is_relative_to(here):
            raise ImportError  # an installed tree, not this one
        wrap(steps, "parse_body", "steps.parse_body")
        for n in ("prepare", "view_tokens", "_command_exchanges"):
            wrap(plan, n, f"plan.{n}")
    except ImportError:  # before the exchange redesign (598bc15)
        from proxy import memorypath as mp
        wrap(mp, "_prepare", "plan.prepare")
        wrap(mp, "_command_exchanges", "plan._command_exchanges")


def main() -> None:
    global ON
    mode, turns, measure = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
    instrument()
    from proxy.evaluation import historybench as hb

    ticks = [0]

    def tick() -> None:
        global ON
        ticks[0] += 1
        ON = True  # from the end of the first measured turn on

    if mode == "eval":
        out = asyncio.run(hb.run_history_bench_async(turns, measure, tick=tick))
    else:
        out = asyncio.run(hb.run_depth_bench_async([turns], measure,
                                                   workload=mode.removesuffix("-depth"),
                                                   tick=tick))
    ON = False
    n = max(1, ticks[0] - 1)
    print(out["table"])
    print(f"\nCPU ms per measured request ({n} requests; time.thread_time, inclusive):")
    for k in sorted(CPU):
        print(f"  {k:42s} {CPU[k] * 1000 / n:7.2f}   calls per request {CALLS[k] / n:.1f}")


if __name__ == "__main__":
    main()
