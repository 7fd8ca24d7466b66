"""Wall-clock against CPU on a request's critical path, per measured request.

Runs ``lcm-proxy bench history`` in-process as ``request_path_stages.py`` does and
records, per measured request, when each critical step starts and ends (wall,
``time.perf_counter``) and its thread's CPU (``time.thread_time``): the parse on
the event loop (``steps.parse_body``), the memory path's wait
(``steps.prepare_upstream``, event loop), the capture (writer,
``CaptureJobs._capture_request_job``) and the memory-path job (pool, ``plan.prepare``).
The gaps between them are hand-offs and waits for the interpreter lock:

    cd TREE && PYTHONPATH=$PWD python docs/evaluation/request_path_waits.py eval 1000 60
    SWITCH=0.0005 PYTHONPATH=$PWD python docs/evaluation/request_path_waits.py eval 1000 60

``SWITCH``: ``sys.setswitchinterval`` for the whole run (default: Python's 5 ms).
``to_capture``: from the memory path's start to the capture's start (negative when
the writer started first); ``to_plan``: from the capture's end to the job's start;
``to_loop``: from the job's end to the event loop resuming the request. Past the
memory path (trees since the exchange redesign; the Chat Completions handler):
``to_send`` to the upstream call's start, ``upstream round`` (the fake upstream's
answer), ``to_store`` from its end to the answer's store (``record.store_first``),
``answer stored`` (its capture on the writer, the commit, the hand-off back) and
``handler`` (the body's read to the handler's end). Figures:
docs/evaluation/README.md, "The memory-path job at 1,000 turns" and "The critical
path's structure at 1,000 turns".
"""
import asyncio
import functools
import os
import statistics
import sys
import time
from typing import Any

sys.path.insert(0, os.getcwd())

ON = [False]
EV: list[tuple[str, float, float]] = []  # (step> or step<, wall, thread CPU)


def _mark(label: str) -> None:
    EV.append((label, time.perf_counter(), time.thread_time()))


def wrap(obj: Any, name: str, label: str) -> None:
    """Mark the start and end of ``obj.name`` while ``ON``."""
    orig = getattr(obj, name)

    @functools.wraps(orig)
    def marked(*a: Any, **k: Any) -> Any:
        if not ON[0]:
            return orig(*a, **k)
        _mark(label + ">")
        try:
            return orig(*a, **k)
        finally:
            _mark(label + "<")

    setattr(obj, name, marked)


def awrap(obj: Any, name: str, label: str) -> None:
    """:func:`wrap` for a coroutine function."""
    orig = getattr(obj, name)

    @functools.wraps(orig)
    async def marked(*a: Any, **k: Any) -> Any:
        if not ON[0]:
            return await orig(*a, **k)
        _mark(label + ">")
        try:
            return await orig(*a, **k)
        finally:
            _mark(label + "<")

    setattr(obj, name, marked)


STEPS = ("parse", "to_capture", "capture wall", "capture cpu", "to_plan", "plan wall",
         "plan cpu", "to_loop", "parse to loop", "to_send", "upstream round", "to_store",
         "answer stored", "handler")
LATER = {"to_send": ("mp<", "send>"), "upstream round": ("send>", "send<"),
         "to_store": ("send<", "store>"), "answer stored": ("store>", "store<"),
         "handler": ("open>", "fw<")}
"""Rows past the memory path, each from one mark to another (when the tree has them)."""
NEEDED = ("parse>", "parse<", "mp>", "cap>", "cap<", "plan>", "plan<", "mp<")


def main() -> None:
    if os.environ.get("SWITCH"):
        sys.setswitchinterval(float(os.environ["SWITCH"]))
    try:  # memory_core in folders (since 2d18265)
        from memory_core.capture.jobs import CaptureJobs
    except ImportError:  # an older tree: the capture jobs on the engine
        from memory_core.engine import Engine as CaptureJobs  # type: ignore[assignment]
    from proxy.evaluation import historybench as hb
    from proxy.flow import plan, steps
    wrap(CaptureJobs, "_capture_request_job", "cap")
    wrap(plan, "prepare", "plan")
    awrap(steps, "prepare_upstream", "mp")  # the name steps calls
    wrap(steps, "parse_body", "parse")
    try:  # past the memory path: the Chat Completions handler's steps
        import proxy.handlers.chat as chat
        from proxy.flow import record, toolloop
        awrap(chat, "open_exchange", "open")
        awrap(chat, "forward", "fw")
        awrap(chat, "forward_with_tools", "fw")
        awrap(toolloop.ToolLoop, "_send", "send")
        awrap(record, "store_first", "store")
        from proxy.flow import forward as fwd
        awrap(fwd, "send_recovering", "send")  # a forward without the memory tools
    except (ImportError, AttributeError):
        pass
    mode, turns, measure = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])

    def tick() -> None:
        ON[0] = True

    if mode == "eval":
        out = asyncio.run(hb.run_history_bench_async(turns, measure, tick=tick))
    else:
        out = asyncio.run(hb.run_depth_bench_async([turns], measure, workload=mode, tick=tick))
    ON[0] = False
    requests: list[dict[str, tuple[float, float]]] = []
    opens = any(label == "open>" for label, _, _ in EV)
    first = "open>" if opens else "parse>"  # a request's first mark: its body's read
    for label, wall, cpu in EV:
        if label == first:
            requests.append({})
        if requests and label not in requests[-1]:
            requests[-1][label] = (wall, cpu)
    rows: dict[str, list[float]] = {k: [] for k in STEPS}
    for r in requests:
        if not all(k in r for k in NEEDED):
            continue

        def ms(a: str, b: str, r: dict[str, tuple[float, float]] = r) -> float:
            return (r[b][0] - r[a][0]) * 1e3

        rows["parse"].append(ms("parse>", "parse<"))
        rows["to_capture"].append(ms("mp>", "cap>"))
        rows["capture wall"].append(ms("cap>", "cap<"))
        rows["capture cpu"].append((r["cap<"][1] - r["cap>"][1]) * 1e3)
        rows["to_plan"].append(ms("cap<", "plan>"))
        rows["plan wall"].append(ms("plan>", "plan<"))
        rows["plan cpu"].append((r["plan<"][1] - r["plan>"][1]) * 1e3)
        rows["to_loop"].append(ms("plan<", "mp<"))
        rows["parse to loop"].append(ms("parse>", "mp<"))
        for k, (a, b) in LATER.items():
            if a in r and b in r:
                rows[k].append(ms(a, b))
    print(out["table"])
    print(f"\n{len(rows['parse'])} requests, switch interval {sys.getswitchinterval() * 1e3} ms;"
          " ms mean / p50 / p95")
    for k, v in rows.items():
        if v:
            v = sorted(v)
            print(f"  {k:16s} {statistics.fmean(v):7.2f} {v[len(v) // 2]:7.2f}"
                  f" {v[int(len(v) * 0.95)]:7.2f}")


if __name__ == "__main__":
    main()
