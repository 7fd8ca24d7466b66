"""Score how stored memory follows a conversation's updates, withdrawals and restatements.

    python -m memory_core.evaluation.updates tests/data/updates_dev.jsonl [--errors]

Each line is ``{"id", "lang", "kind", "messages": [{"content", "name"?}…], "active":
[substring…], "gone": [substring…]}``: a short conversation's user messages, in order,
and, once all are read, substrings of statements that must still be current
(``active``) and of statements that must no longer be (``gone``: an old value after an
update, a rule the user withdrew). ``kind`` is one of ``update``, ``withdrawal``,
``restatement``, ``control`` (look-alike statements that replace nothing) or
``other_speaker`` (several people in one chat; ``name`` says who speaks).

Each row is replayed through a real :class:`memory_core.engine.Engine` (a fresh SQLite
data directory, no search indexes: what is stored is what is judged; each row its own
tenant): every message is captured
as the newest user message of one growing conversation, with an assistant reply
between them, as an agent sends it. Then, over the row's memory items:

- an ``active`` substring is *kept* when an active item's text holds it
  (case-insensitive);
- a ``gone`` substring is *replaced* when an item holding it was stored and none that
  holds it is active (superseded or retracted); one never stored is counted apart
  (*not stored*), since nothing replaced it;
- a row is *right* when all of its substrings are kept or replaced.

Reported per kind and language: kept (share of ``active``), replaced (share of
``gone``), not stored, and rows right.

With ``--index`` the engine also runs its search indexes with the default embedder
(as the proxy does) and each message waits until they are idle: what the writer's
words did not pair and the indexer's vector half of supersession did
(``search.update_similarity``) is judged too, as the next turn would see it.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import tempfile
from collections import defaultdict
from collections.abc import Iterator
from pathlib import Path
from typing import Any

_INDEX_WAIT_S = 120.0
"""Seconds one message may wait for the indexes (``--index``)."""
KINDS = ("update", "withdrawal", "restatement", "control", "other_speaker")
_LANGS = ("en", "zh", "ja")


def load(path: str | Path) -> list[dict[str, Any]]:
    """Read and validate a set; raises ValueError naming the bad line."""
    rows: list[dict[str, Any]] = []
    seen: set[str] = set()
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            if not line.strip():
                continue
            row = json.loads(line)
            problem = _problem(row, seen)
            if problem:
                raise ValueError(f"{path}:{n}: {problem}")
            seen.add(row["id"])
            rows.append(row)
    return rows


def _problem(row: Any, seen: set[str]) -> str | None:
    if not isinstance(row, dict) or not isinstance(row.get("id"), str) or row["id"] in seen:
        return "missing or repeated id"
    if row.get("lang") not in _LANGS or row.get("kind") not in KINDS:
        return f"bad lang or kind in {row['id']}"
    messages = row.get("messages")
    if not isinstance(messages, list) or not messages or not all(
            isinstance(m, dict) and isinstance(m.get("content"), str) for m in messages):
        return f"bad messages in {row['id']}"
    for field in ("active", "gone"):
        if not isinstance(row.get(field), list) or not all(
                isinstance(s, str) and any(s in m["content"] for m in messages)
                for s in row[field]):
            return f"{field} of {row['id']} must be substrings of its messages"
    return None


def replay(engine: Any, row: dict[str, Any], tenant: str) -> list[dict[str, Any]]:
    """Capture ``row``'s messages as one conversation; its items (``status``, ``text``).
    With the engine's search attached, each message waits for the indexes."""
    from memory_core.models import Scope

    scope = Scope(tenant, "eval", row["id"])
    messages: list[dict[str, Any]] = [{"role": "system", "content": "You are a helpful assistant."}]
    for n, m in enumerate(row["messages"]):
        message: dict[str, Any] = {"role": "user", "content": m["content"]}
        if m.get("name"):
            message["name"] = m["name"]
        messages.append(message)
        _, done = engine.capture_request(scope, f"{row['id']}-{n}",
                                         [dict(x) for x in messages], {})
        done.result()
        if engine.search is not None:
            engine.search.wait_idle(_INDEX_WAIT_S)
        messages.append({"role": "assistant", "content": "Noted."})
    return list(engine.list_items(tenant=tenant, role="eval", limit=1000)["items"])


def judge(row: dict[str, Any], items: list[dict[str, Any]]) -> dict[str, Any]:
    """``{kept: [bool], replaced: [bool | None], right}`` for one row's items (module
    doc; ``None``: a ``gone`` statement that was never stored)."""
    active = [str(i["text"]).lower() for i in items if i["status"] == "active"]
    every = [str(i["text"]).lower() for i in items]
    kept = [any(s.lower() in t for t in active) for s in row["active"]]
    replaced: list[bool | None] = []
    for s in row["gone"]:
        low = s.lower()
        if not any(low in t for t in every):
            replaced.append(None)
        else:
            replaced.append(not any(low in t for t in active))
    return {"kept": kept, "replaced": replaced,
            "right": all(kept) and all(r is True for r in replaced)}


@contextlib.contextmanager
def scratch_engine(prefix: str, *, index: bool = False) -> Iterator[Any]:
    """A :class:`memory_core.engine.Engine` on a temporary data directory (``prefix``
    names it), with ``index`` the search indexes and the default embedder attached
    too; closed, and the directory removed, on exit."""
    from memory_core.engine import Engine

    with tempfile.TemporaryDirectory(prefix=prefix) as tmp:
        engine = Engine(Path(tmp) / "data")
        embedder = None
        try:
            if index:
                from memory_core.search import (
                    EmbeddingConfig,
                    SearchConfig,
                    SearchService,
                    create_embedder,
                )

                embedder = create_embedder(EmbeddingConfig())
                engine.attach_search(SearchService(engine.store, Path(tmp) / "data",
                                                   SearchConfig(), embedder))
            yield engine
        finally:
            engine.close()
            if embedder is not None:
                embedder.close()


def score(path: str | Path, *, only: str | None = None, index: bool = False
          ) -> dict[str, Any]:
    """Replay every row of the set at ``path`` (ids starting with ``only``, if given;
    with ``index``, search indexes and the default embedder too: module doc).

    Returns ``{"rows", "overall", "by_kind", "by_lang", "errors"}``; each group is
    ``{rows, right, kept, active, replaced, gone, not_stored}`` with the shares
    ``kept_share``, ``replaced_share`` and ``right_share``."""
    rows = [r for r in load(path) if only is None or r["id"].startswith(only)]
    groups: dict[str, dict[str, int]] = defaultdict(lambda: defaultdict(int))
    errors: list[dict[str, Any]] = []
    with scratch_engine("lcm-updates-", index=index) as engine:
        for n, row in enumerate(rows):
            items = replay(engine, row, f"t{n}")
            verdict = judge(row, items)
            for name in ("overall", f"kind:{row['kind']}", f"lang:{row['lang']}"):
                g = groups[name]
                g["rows"] += 1
                g["right"] += int(verdict["right"])
                g["active"] += len(verdict["kept"])
                g["kept"] += sum(verdict["kept"])
                g["gone"] += len(verdict["replaced"])
                g["replaced"] += sum(r is True for r in verdict["replaced"])
                g["not_stored"] += sum(r is None for r in verdict["replaced"])
            if not verdict["right"]:
                kept = dict(zip(row["active"], verdict["kept"], strict=True))
                gone = list(zip(row["gone"], verdict["replaced"], strict=True))
                errors.append({
                    "id": row["id"], "kind": row["kind"],
                    "not_kept": [s for s, k in kept.items() if not k],
                    "not_replaced": [s for s, r in gone if r is False],
                    "not_stored": [s for s, r in gone if r is None],
                    "items": [(i["status"], i["kind"], i["text"]) for i in items]})

    def shares(g: dict[str, int]) -> dict[str, Any]:
        out: dict[str, Any] = dict(g)
        out["kept_share"] = g["kept"] / g["active"] if g["active"] else 1.0
        out["replaced_share"] = g["replaced"] / g["gone"] if g["gone"] else 1.0
        out["right_share"] = g["right"] / g["rows"] if g["rows"] else 1.0
        return out

    return {
        "rows": len(rows),
        "overall": shares(groups["overall"]),
        "by_kind": {k: shares(groups[f"kind:{k}"]) for k in KINDS if f"kind:{k}" in groups},
        "by_lang": {k: shares(groups[f"lang:{k}"]) for k in _LANGS if f"lang:{k}" in groups},
        "errors": errors,
    }


def _table(title: str, groups: dict[str, dict[str, Any]]) -> str:
    lines = [f"{title:<14} {'rows':>5} {'right':>7} {'kept':>11} {'replaced':>11}"
             f" {'not stored':>10}"]
    for name, g in groups.items():
        lines.append(f"{name:<14} {g['rows']:>5} {g['right_share']:>7.3f}"
                     f" {g['kept_share']:>5.3f} {g['kept']:>2}/{g['active']:<3}"
                     f" {g['replaced_share']:>5.3f} {g['replaced']:>2}/{g['gone']:<3}"
                     f" {g['not_stored']:>10}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """CLI: print the tables (and with ``--errors`` every row that is not right)."""
    parser = argparse.ArgumentParser(prog="python -m memory_core.evaluation.updates")
    parser.add_argument("path", nargs="?", default="tests/data/updates_dev.jsonl")
    parser.add_argument("--errors", action="store_true", help="list every row not right")
    parser.add_argument("--json", action="store_true", help="print the full result as JSON")
    parser.add_argument("--only", metavar="PREFIX", help="score only ids starting with PREFIX")
    parser.add_argument("--index", action="store_true",
                        help="run the search indexes with the default embedder too")
    args = parser.parse_args(argv)
    result = score(args.path, only=args.only, index=args.index)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return 0
    print(f"rows: {result['rows']}")
    print(_table("overall", {"all": result["overall"]}))
    print(_table("kind", result["by_kind"]))
    print(_table("lang", result["by_lang"]))
    if args.errors:
        for e in result["errors"]:
            print(json.dumps(e, ensure_ascii=False))
    return 0


if __name__ == "__main__":
    sys.exit(main())
