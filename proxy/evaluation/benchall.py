"""``lcm-proxy bench`` (alone, or ``bench all``): the four benchmarks, one table.

Runs, one after the other in this process: the proxy benchmark
(:func:`proxy.bench.run_proxy_bench`: direct vs through the proxy against a loopback
fake), the search benchmark (:func:`memory_core.evaluation.bench.run_search_bench`:
ingest throughput and query latency), the compaction benchmark
(:func:`proxy.evaluation.compactbench.run_compaction_bench`: the rewrite step and
tokens saved) and the history benchmark
(:func:`proxy.evaluation.historybench.run_history_bench`: the latency added deep
into a long conversation). Each keeps its own full result under its name;
``table`` lists the headline figures of all four, one row per figure, with its unit.
"""

from __future__ import annotations

import os
import platform
import time
from collections.abc import Callable
from typing import Any

from proxy.evaluation.compactbench import DEFAULT_SIZES, run_compaction_bench
from proxy.evaluation.historybench import DEFAULT_MEASURE, DEFAULT_TURNS

PARTS = ("proxy", "search", "compaction", "history")


def run_all(*, proxy_requests: int = 500, concurrency: int = 32,
            search_sizes: tuple[int, ...] = (10_000,), search_queries: int = 200,
            search_vectors: bool = True, compaction_sizes: tuple[int, ...] = DEFAULT_SIZES,
            compaction_repeats: int = 50, history_turns: int = DEFAULT_TURNS,
            history_measure: int = DEFAULT_MEASURE, history_embedding: str | None = "hashing",
            progress: bool = True, progress_factory: Callable[..., Any] | None = None,
            parts: tuple[str, ...] = PARTS) -> dict[str, Any]:
    """Run the benchmarks named in ``parts`` (default: all four); return ``{"proxy",
    "search", "compaction", "history", "seconds", "rows", "table"}`` (a part not run
    is ``{}``). ``rows`` are ``(benchmark, size, figure, value, unit)``. Starts its
    own event loops (call it outside one)."""
    from memory_core.evaluation.bench import run_search_bench
    from proxy.bench import run_proxy_bench

    seconds: dict[str, float] = {}
    proxy: dict[str, Any] = {}
    search: dict[str, Any] = {}
    compaction: dict[str, Any] = {}
    history: dict[str, Any] = {}
    if "proxy" in parts:
        t0 = time.perf_counter()
        proxy = run_proxy_bench(proxy_requests, concurrency, progress=progress)
        seconds["proxy"] = time.perf_counter() - t0
    if "search" in parts:
        t0 = time.perf_counter()
        search = run_search_bench(sizes=search_sizes, n_queries=search_queries,
                                  vectors=search_vectors, progress_factory=progress_factory)
        seconds["search"] = time.perf_counter() - t0
    if "compaction" in parts:
        t0 = time.perf_counter()
        compaction = run_compaction_bench(compaction_sizes, compaction_repeats,
                                          progress_factory=progress_factory)
        seconds["compaction"] = time.perf_counter() - t0
    if "history" in parts:
        from proxy.evaluation.historybench import run_history_bench

        t0 = time.perf_counter()
        history = run_history_bench(history_turns, history_measure,
                                    embedding=history_embedding)
        seconds["history"] = time.perf_counter() - t0
    rows = summary_rows(proxy, search, compaction, history)
    return {"proxy": proxy, "search": search, "compaction": compaction, "history": history,
            "seconds": {k: round(v, 1) for k, v in seconds.items()}, "rows": rows,
            "table": format_rows(rows, seconds)}


def summary_rows(proxy: dict[str, Any], search: dict[str, Any], compaction: dict[str, Any],
                 history: dict[str, Any] | None = None
                 ) -> list[tuple[str, str, str, float | None, str]]:
    """The headline figures of the results as ``(benchmark, size, figure, value,
    unit)`` rows (keys missing from a result give ``None``)."""
    rows: list[tuple[str, str, str, float | None, str]] = []
    rest = _search_rows(search) + _compaction_rows(compaction) + _history_rows(history or {})
    if not proxy:
        return rows + rest
    n = str(proxy.get("meta", {}).get("n_requests", ""))
    direct = proxy.get("modes", {}).get("direct", {})
    rows.append(("proxy", n, "direct non-stream p50", direct.get("nonstream_p50_ms"), "ms"))
    for mode, label in (("proxy_capture_on", "capture on"), ("proxy_capture_off",
                                                             "capture off")):
        added = proxy.get("added", {}).get(mode, {})
        rows += [
            ("proxy", n, f"added non-stream p50 ({label})", added.get("nonstream_p50_ms_added"),
             "ms"),
            ("proxy", n, f"added non-stream p99 ({label})", added.get("nonstream_p99_ms_added"),
             "ms"),
            ("proxy", n, f"added stream first byte p50 ({label})",
             added.get("stream_ttfb_p50_ms_added"), "ms"),
            ("proxy", n, f"throughput vs direct ({label})", added.get("throughput_ratio"),
             "ratio"),
        ]
    return rows + rest


def _search_rows(search: dict[str, Any]) -> list[tuple[str, str, str, float | None, str]]:
    rows: list[tuple[str, str, str, float | None, str]] = []
    for row in search.get("rows", []):
        size = str(row.get("messages"))
        rows += [("search", size, "ingest (SQLite + Tantivy)", row.get("ingest_per_s"),
                  "msgs/s"),
                 ("search", size, "BM25 query p50", row.get("bm25_p50_ms"), "ms"),
                 ("search", size, "BM25 query p95", row.get("bm25_p95_ms"), "ms")]
        if "hybrid_p50_ms" in row:
            rows += [("search", size, "hybrid query p50", row.get("hybrid_p50_ms"), "ms"),
                     ("search", size, "hybrid query p95", row.get("hybrid_p95_ms"), "ms")]
    return rows


def _compaction_rows(compaction: dict[str, Any]
                     ) -> list[tuple[str, str, str, float | None, str]]:
    rows: list[tuple[str, str, str, float | None, str]] = []
    for row in compaction.get("rows", []):
        size = str(row["turns"])
        rows += [("compaction", size, "rewrite step p50", row["rewrite_p50_ms"], "ms"),
                 ("compaction", size, "rewrite step p95", row["rewrite_p95_ms"], "ms"),
                 ("compaction", size, "tokens before", row["tokens_before"], "tokens"),
                 ("compaction", size, "tokens after", row["tokens_after"], "tokens")]
    return rows


def _history_rows(history: dict[str, Any]) -> list[tuple[str, str, str, float | None, str]]:
    if not history:
        return []
    size = str(history.get("turns", ""))
    direct = history.get("direct_ms", {})
    added = history.get("added_ms", {})
    return [("history", size, "direct chat p50", direct.get("p50"), "ms"),
            ("history", size, "added chat p50", added.get("p50"), "ms"),
            ("history", size, "added chat p95", added.get("p95"), "ms")]


def format_rows(rows: list[tuple[str, str, str, float | None, str]],
                seconds: dict[str, float]) -> str:
    """One Markdown table of every row, with a line on the machine and run time (s)."""
    def value(v: float | None, unit: str, figure: str) -> str:
        if v is None:
            return "—"
        if unit == "ratio":
            return f"{v * 100:.0f}%"
        if unit in ("tokens", "msgs/s"):
            return f"{v:,.0f}"
        return f"{v:+.3f}" if figure.startswith("added") else f"{v:.3f}"

    out = ["| benchmark | size | figure | value | unit |", "|:---|---:|:---|---:|:---|"]
    out += [f"| {b} | {s} | {f} | {value(v, u, f)} | {u} |" for b, s, f, v, u in rows]
    out.append("")
    out.append(f"{os.cpu_count()} CPUs, Python {platform.python_version()}, "
               f"{platform.platform()}, {time.strftime('%Y-%m-%d %H:%M', time.gmtime())} UTC;"
               " seconds: " + ", ".join(f"{k} {v:.0f}" for k, v in seconds.items())
               + ". Sizes: proxy = requests per mode, search = messages, compaction = turns,"
               " history = turns into the conversation.")
    return "\n".join(out)
