"""Count the supersessions and conflicts a replayed public conversation makes: in
chit-chat almost none is a true update or two rival values of one attribute, so the
counts bound the false ones.

    python -m memory_core.evaluation.supersessions --data locomo10.json \
        --conversations 0-4 [--index] [--list]

Each LoCoMo session (``locomo10.json``, not shipped: see the shared data's README) is
one conversation of its own tenant per LoCoMo conversation: every turn is captured as
the newest user message, its ``name`` the speaker, with an assistant reply between
turns, through a real :class:`memory_core.engine.Engine` (fresh SQLite; with
``--index`` also the search indexes and the default embedder, so that the vector
half of supersession runs, each conversation waiting for them). Printed: turns, items,
supersessions by reason, conflicts (active items flagged as conflicting with another:
each would put a "CONFLICTS … ask the user" line in a block that shows it), and with
``--list`` each superseded statement beside the one that superseded it, and each
conflicting pair. Develop on conversations 0–4; report 5–9 apart.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from collections import Counter
from pathlib import Path
from typing import Any

from memory_core.evaluation.locomo import speaker_name
from memory_core.evaluation.updates import scratch_engine

_INDEX_WAIT_S = 900.0
"""Seconds one conversation may wait for the indexes (``--index``)."""


def sessions(conversation: dict[str, Any]) -> list[list[dict[str, Any]]]:
    """A LoCoMo conversation's sessions in order, each its list of turns."""
    numbers = sorted(int(m.group(1)) for k, v in conversation.items()
                     if (m := re.fullmatch(r"session_(\d+)", k)) and isinstance(v, list))
    return [conversation[f"session_{n}"] for n in numbers]


def replay(engine: Any, conversations: list[tuple[int, dict[str, Any]]]) -> dict[str, Any]:
    """Replay ``(index, conversation)`` pairs (module doc); returns ``{turns, items,
    superseded: [(reason, old text, new text)], conflicts: [(text, other text)]}``."""
    from memory_core.models import Scope

    turns = 0
    for ci, conv in conversations:
        for si, session in enumerate(sessions(conv)):
            scope = Scope(f"locomo-{ci}", "eval", f"c{ci}-s{si}")
            messages: list[dict[str, Any]] = [{"role": "system", "content": "A chat."}]
            for ti, turn in enumerate(session):
                text = turn.get("text") if isinstance(turn, dict) else None
                if not isinstance(text, str) or not text.strip():
                    continue
                messages.append({"role": "user", "content": text,
                                 "name": speaker_name(str(turn.get("speaker", "")))})
                _, done = engine.capture_request(scope, f"{ci}-{si}-{ti}",
                                                 [dict(m) for m in messages], {})
                done.result()
                messages.append({"role": "assistant", "content": "Okay."})
                turns += 1
        if engine.search is not None:
            engine.search.wait_idle(_INDEX_WAIT_S)
    engine.flush()
    superseded: list[tuple[str, str, str]] = []
    conflicts: list[tuple[str, str]] = []
    items = 0
    for ci, _conv in conversations:
        listed = engine.list_items(tenant=f"locomo-{ci}", role="eval", limit=1_000_000)
        items += int(listed["total"])
        text = {int(i["id"]): str(i["text"]) for i in listed["items"]}
        for item in sorted(listed["items"], key=lambda i: int(i["id"])):
            other = item.get("conflict_with")
            if item["status"] == "active" and other is not None:
                conflicts.append((str(item["text"]), text.get(int(other), "")))
            if item["status"] != "superseded":
                continue
            revisions = engine.inspect(f"item:{item['id']}")["revisions"]
            reason = next((str(r["reason"]) for r in reversed(revisions)
                           if r["field"] == "status" and r["new"] == "superseded"), "")
            newer = item["superseded_by"]
            superseded.append((reason, str(item["text"]),
                               text.get(int(newer), "") if newer is not None else ""))
    return {"turns": turns, "items": items, "superseded": superseded,
            "conflicts": conflicts}


def _reason(text: str) -> str:
    """A revision's reason without the item it names ("correction: by item 12",
    "conflict resolved by item 957")."""
    return _ITEM_REF.sub("", text).strip()


_ITEM_REF = re.compile(r"(?<!\s)\s*+(?:\([^()]*\)\s*+)?:?\s*+(?:by\s+)?item \d+.*$")
"""The item a reason names (" (by item 12)") and what follows; possessive blanks that start after a non-blank, so a
long run of blanks or brackets is read in linear time."""


def run(data: str | Path, conversations: list[int], *, index: bool = False
        ) -> dict[str, Any]:
    """Replay the chosen conversations of ``data`` in a temporary data directory
    (with ``index``, search indexes and the default embedder too); see :func:`replay`."""
    entries = json.loads(Path(data).read_text(encoding="utf-8"))
    chosen = [(i, e["conversation"]) for i, e in enumerate(entries) if i in conversations]
    with scratch_engine("lcm-supersessions-", index=index) as engine:
        return replay(engine, chosen)


def span(text: str) -> list[int]:
    """``"0-4"`` or ``"0,2,5"`` (or a mix, ``"0-2,7"``) as a list of indexes; raises
    ``ValueError`` for a part that is no integer."""
    out: list[int] = []
    for part in text.split(","):
        lo, _, hi = part.partition("-")
        out.extend(range(int(lo), int(hi or lo) + 1))
    return out


def main(argv: list[str] | None = None) -> int:
    """CLI: print the counts (module doc)."""
    parser = argparse.ArgumentParser(prog="python -m memory_core.evaluation.supersessions")
    parser.add_argument("--data", required=True, help="locomo10.json")
    parser.add_argument("--conversations", default="0-4", help="indexes, e.g. 0-4 or 5-9")
    parser.add_argument("--index", action="store_true",
                        help="run the search indexes with the default embedder too")
    parser.add_argument("--list", action="store_true", help="print each supersession")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    result = run(args.data, span(args.conversations), index=args.index)
    if args.json:
        print(json.dumps(result, ensure_ascii=False, indent=2))
        return 0
    by_reason = Counter(_reason(r) for r, _, _ in result["superseded"])
    print(f"turns {result['turns']}, items {result['items']},"
          f" supersessions {len(result['superseded'])}")
    for reason, n in by_reason.most_common():
        print(f"  {n:>4}  {reason}")
    print(f"conflicts {len(result['conflicts'])}")
    if args.list:
        for reason, old, new in result["superseded"]:
            print(f"{_reason(reason)} | {old} => {new}")
        for new, old in result["conflicts"]:
            print(f"conflict | {old} <> {new}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
