"""Render an evaluation report (:func:`proxy.evaluation.report.to_json`) as Markdown
and as a PNG chart. matplotlib is imported only by :func:`write_png` (the ``eval``
extra), with the Agg backend, so nothing here needs a display.
"""

from __future__ import annotations

from typing import Any

from proxy.evaluation.report import INVARIANT_LABELS
from proxy.evaluation.systems import LABELS


def _pct(v: float | None) -> str:
    return "—" if v is None else f"{v * 100:.1f}%"


def _num(v: float | None, fmt: str = "{:,.0f}") -> str:
    return "—" if v is None else fmt.format(v)


def _ms(v: float | None) -> str:
    return "—" if v is None else f"{v:+.2f}"


def _table(header: list[str], rows: list[list[str]]) -> list[str]:
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join(":---" if i == 0 else "---:" for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def _rows(figs: dict[str, Any]) -> list[tuple[str, str, dict[str, Any]]]:
    rows = []
    for system, f in figs.items():
        for n, g in f["by_size"].items():
            rows.append((LABELS[system], str(n), g))
        rows.append((LABELS[system], "all", f["overall"]))
    return rows


def markdown(report: dict[str, Any]) -> str:
    """The report as Markdown: context, what the upstream received per system and
    session length, lcm-proxy's store and search, coverage by category, invariants,
    targets."""
    meta, figs = report["meta"], report["figures"]
    lines = [
        f"## lcm-proxy long-session evaluation — profile `{meta['profile']}`, seed "
        f"{meta['seed']}",
        "",
        f"{meta['sessions']} sessions ({', '.join(meta['session_sizes'])} turns), "
        f"{meta['questions']} questions per system; {meta['date_utc']} UTC; "
        f"{meta['cpus']} CPUs, {meta['platform']}, Python {meta['python']}; "
        f"embedding {meta['embedding']}; {meta['wall_s']:.0f} s in all.",
        "",
    ]
    if meta.get("settings"):
        given = meta["settings"]
        tables = "; ".join(f"[{name}] " + ", ".join(f"{k} = {v!r}" for k, v in values.items())
                           for name, values in given.items() if name != "file" and values)
        lines += [f"Settings from `{given['file']}`: {tables or 'none'}.", ""]
    lines += [
        "### What the upstream received (per system and session length)",
        "",
    ]
    header = ["system", "turns", "coverage", "superseded as current", "upstream tok/req",
              "raw history tok/req", "upstream/raw", "memory tok/turn", "net extra tok/req",
              "cacheable prefix (mean / bytes)", "added ms mean", "added ms p50",
              "added ms p95"]
    rows = [[s, n, _pct(g["coverage"]), f"{g['stale_questions']}/{g['questions']}",
             _num(g["upstream_tokens_mean"]), _num(g["raw_tokens_mean"]),
             _pct(g["upstream_vs_raw"]), _num(g["memory_tokens_mean"]),
             _num(g["net_extra_tokens_mean"], "{:+,.0f}"),
             f"{_pct(g['prefix_share'])} / {_pct(g['prefix_share_bytes'])}",
             _ms(g["added_mean_ms"]), _ms(g["added_p50_ms"]), _ms(g["added_p95_ms"])]
            for s, n, g in _rows(figs)]
    lines += _table(header, rows)
    lines += ["", "### lcm-proxy's store and search", ""]
    lcm = figs.get("lcm")
    if lcm:
        rows = [[n, _pct(g["storage"]) + f" of {g['storage_checks']}", _pct(g["recall"]),
                 _pct(g["rank1"]), _pct(g["task_state"]), str(g["rewrite_turns"]),
                 _pct(g["prefix_share_all"])]
                for _, n, g in _rows({"lcm": lcm})]
        lines += _table(["turns", "storage correctness", "recall@10", "rank-1",
                         "task-state accuracy", "requests with new compaction",
                         "cacheable prefix, all requests"], rows)
    lines += ["", "### Coverage by answer-key category (all sessions)", ""]
    cats = sorted({c for f in figs.values() for c in f["overall"]["coverage_by_category"]})
    lines += _table(["system", *cats],
                    [[LABELS[s], *(_pct(f["overall"]["coverage_by_category"].get(c))
                                   for c in cats)] for s, f in figs.items()])
    lines += ["", "### Invariants (all sessions)", ""]
    names = list(INVARIANT_LABELS)
    inv_rows = []
    for name in names:
        cells = []
        for f in figs.values():
            v = f["overall"]["invariants"].get(name)
            cells.append("n/a" if v is None else ("holds" if v else "BROKEN"))
        inv_rows.append([INVARIANT_LABELS[name], *cells])
    lines += _table(["invariant", *(LABELS[s] for s in figs)], inv_rows)
    if report["verdict"]:
        lines += ["", "### lcm-proxy against the targets of issue 8", ""]
        vrows = []
        for name, v in report["verdict"].items():
            show = {"share": _pct, "tokens": _num, "ms": lambda x: _num(x, "{:.2f} ms")}.get(
                v["unit"], lambda x: "—" if x is None else str(x))
            met = "not measured" if v["met"] is None else ("met" if v["met"] else "MISSED")
            vrows.append([name, show(v["value"]), show(v["target"]), met])
        lines += _table(["target", "measured", "target", "verdict"], vrows)
    lines += ["", "Definitions: see the module docstrings of `proxy.evaluation` "
              "(coverage: every answer-key string of the current value on one line of what the "
              "upstream received; memory tok/turn: injection block or notes, on requests that "
              "open a turn; net extra: upstream minus the client's own request; added ms: "
              "proxy minus direct, same statistic, same run)."]
    return "\n".join(lines) + "\n"


def write_png(report: dict[str, Any], path: str) -> None:
    """Chart coverage and upstream tokens per request against session length, one line
    per system (and the raw history for reference). Needs matplotlib (``eval`` extra)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figs = report["figures"]
    fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    raw: dict[int, float] = {}
    for system, f in figs.items():
        sizes = sorted(int(n) for n in f["by_size"])
        by = {int(n): g for n, g in f["by_size"].items()}
        left.plot(sizes, [100 * (by[n]["coverage"] or 0) for n in sizes], marker="o",
                  label=LABELS[system])
        right.plot(sizes, [by[n]["upstream_tokens_mean"] or 0 for n in sizes], marker="o",
                   label=LABELS[system])
        for n in sizes:
            raw[n] = by[n]["raw_tokens_mean"] or 0
    if raw:
        xs = sorted(raw)
        right.plot(xs, [raw[n] for n in xs], linestyle="--", color="grey",
                   label="raw history (no truncation)")
    for ax in (left, right):
        ax.set_xscale("log")
        ax.set_xlabel("session length (user turns)")
        ax.grid(True, alpha=0.3)
        ax.legend(fontsize=8)
    left.set_ylabel("assembly coverage (%)")
    left.set_ylim(0, 105)
    right.set_ylabel("tokens the upstream received per request")
    right.set_yscale("log")
    meta = report["meta"]
    fig.suptitle(f"lcm-proxy eval, profile {meta['profile']}, seed {meta['seed']}")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
