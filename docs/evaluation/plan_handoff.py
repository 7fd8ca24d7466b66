"""The hand-off from a request's capture to its plan at one depth: pool or writer.

Runs ``docs/evaluation/request_path_waits.py`` (numbers workload) in a child process
per run, alternating ``AsyncEngine(plan_on_writer=False)`` (the plan on the
memory-path pool) and ``True`` (on the store's writer when the request is alone and
no other write waits), ``PAIRS`` pairs, and splits the capture's end to the plan's
start into: the capture job's end to its batch's commit, the batch's futures
resolved, and from there to the plan's first line (the hand-off itself). Also the
steps ``request_path_waits.py`` prints and the run's added p50 / p95. ms, per
measured request, p50 / p95; the load average before each run.

    cd TREE && PYTHONPATH=$PWD python docs/evaluation/plan_handoff.py [TURNS] [MEASURE] [PAIRS]

(defaults 1000 30 3). Figures: docs/evaluation/README.md, "The plan on the writer".
"""
from __future__ import annotations

import functools
import json
import os
import runpy
import subprocess
import sys
import threading
import time
from typing import Any

SPLITS = ("commit", "resolve", "hand-off")
STEPS = ("to_capture", "to_plan", "plan wall", "plan cpu", "to_loop", "parse to loop",
         "handler")


def child(mode: str, turns: str, measure: str) -> None:
    """One run in this process; prints one JSON line (``RESULT {...}``) at the end."""
    sys.path.insert(0, os.getcwd())
    from memory_core.capture.jobs import CaptureJobs
    from memory_core.store import batch
    from proxy import contexts
    from proxy.flow import plan
    from proxy.flow.asyncengine import AsyncEngine

    contexts.AsyncEngine = functools.partial(  # type: ignore[misc]
        AsyncEngine, plan_on_writer=mode == "writer")
    marks: dict[str, float] = {}
    rows: list[tuple[float, float, float, str]] = []

    capture = CaptureJobs._capture_request_job

    def captured(*a: Any, **k: Any) -> Any:
        try:
            return capture(*a, **k)
        finally:
            marks.clear()
            marks["end"] = time.perf_counter()

    complete = batch._complete

    def completed(*a: Any, **k: Any) -> Any:
        mine = "end" in marks and "committed" not in marks  # the capture's batch
        if mine:
            marks["committed"] = time.perf_counter()
        try:
            return complete(*a, **k)
        finally:
            if mine:
                marks["resolved"] = time.perf_counter()

    prepare = plan.prepare

    def prepared(*a: Any, **k: Any) -> Any:
        if "resolved" in marks:
            rows.append((marks["committed"] - marks["end"],
                         marks["resolved"] - marks["committed"],
                         time.perf_counter() - marks["resolved"],
                         threading.current_thread().name))
        marks.clear()
        return prepare(*a, **k)

    CaptureJobs._capture_request_job = captured  # type: ignore[method-assign]
    batch._complete = completed
    plan.prepare = prepared
    sys.argv = ["request_path_waits.py", "numbers", turns, measure]
    runpy.run_path("docs/evaluation/request_path_waits.py", run_name="__main__")
    measured = rows[-(int(measure) - 1):]
    out: dict[str, Any] = {"threads": sorted({r[3].rsplit("_", 1)[0] for r in measured})}
    for at, name in enumerate(SPLITS):
        xs = sorted(r[at] * 1e3 for r in measured)
        out[name] = (xs[len(xs) // 2], xs[int(len(xs) * 0.95)])
    print("RESULT " + json.dumps(out), flush=True)


def main() -> None:
    turns, measure, pairs = (sys.argv[1:] + ["1000", "30", "3"][len(sys.argv) - 1:])[:3]
    print(f"| run | mode | load | added p50 / p95 | "
          + " | ".join(SPLITS + STEPS) + " | plan threads |")
    print("|---|---|---:|---|" + "---|" * (len(SPLITS) + len(STEPS)) + "---|")
    for n in range(1, int(pairs) + 1):
        for mode in ("pool", "writer"):
            load = os.getloadavg()[0]
            run = subprocess.run([sys.executable, __file__, "--child", mode, turns, measure],
                                 capture_output=True, text=True, check=True)
            lines = run.stdout.splitlines()
            result = json.loads(next(x for x in lines if x.startswith("RESULT "))[7:])
            steps = {}
            for line in lines:
                name = line[:20].strip()
                if line.startswith("  ") and name in STEPS:
                    p50, p95 = line.split()[-2:]
                    steps[name] = f"{p50} / {p95}"
            added = next(x for x in lines if x.startswith("| 1,000 |") or
                         x.startswith(f"| {int(turns):,} |")).split("|")[6].strip()
            cells = [f"{result[s][0]:.2f} / {result[s][1]:.2f}" for s in SPLITS]
            cells += [steps.get(s, "") for s in STEPS]
            print(f"| {n} | {mode} | {load:.1f} | {added} | " + " | ".join(cells)
                  + f" | {', '.join(result['threads'])} |", flush=True)


if __name__ == "__main__":
    if sys.argv[1:2] == ["--child"]:
        child(*sys.argv[2:5])
    else:
        main()
