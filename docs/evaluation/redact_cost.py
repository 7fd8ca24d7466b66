"""Cost of masking identity and payment numbers (``capture.redact_identity_numbers``)
on every captured message, against secret redaction alone (what capture ran before).

Run from the repository root: ``python docs/evaluation/redact_cost.py [--passes N]``.

Corpora as in ``extract_ab.py`` (short bench prompts, the labelled extraction texts,
LoCoMo conversations 0-4) plus one that holds a number in every message. For each,
per message, best of ``--passes`` (default 7) in process CPU time:

  secrets    ``redact_secrets(text)`` (the item path before: ``jobs._extract_one``)
  both       ``redact_text(text, secrets=True, identity=True)`` (the item path now)
  stored     ``stored_forms(message, config)`` with identity off / on (the evidence
             path: serialise, pre-test the JSON text, mask)

and a 1000-turn, 380 KiB forwarded body (``forwarded.prepare``, the inspector's log;
first scan, no cache of clean messages) off / on. Prints a table with the ratio on/off.

``--redacted`` (operators' ``memory redact``): what a tenant's redaction costs the
forwarded-body log, per 1000-turn body (bytes, and the dict the proxy hands over):
``prepare`` with no redacted hash (a body the thread-root pre-test lets through, and
every body before any redaction) against one with the tenant's hashes (every body
of the tenant before the pre-test; now only bodies of the redacted conversation's
tree): the body is parsed and each message hashed. Then the redaction's own scan of
one such body (``Scrubber``): the anchor pre-test of a body that holds no copy, and
the scrub of one that holds the text in a message and in a block.

``--overwipe``: how often a redaction takes other statements for copies. Each of the
first 200 distinct messages of each corpus (20+ characters) is redacted in turn, and
every other distinct message of its corpus is tested: by the former rule (any 24
characters of the redacted text, windows every 12, case and spacing aside: wiped
whole) and by ``Scrubber`` (a changed string). The other messages are statements of
their own, so each hit is an over-wipe.
"""
from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "docs" / "evaluation"))

from extract_ab import corpora  # noqa: E402

from memory_core.capture import forwarded  # noqa: E402
from memory_core.capture.evidence import stored_forms  # noqa: E402
from memory_core.capture.redact import redact_secrets, redact_text  # noqa: E402
from memory_core.config import MemoryConfig  # noqa: E402
from memory_core.models import Scope  # noqa: E402


def best_us(fn: Callable[[], object], n: int, passes: int) -> float:
    """Best pass of ``fn`` in process CPU microseconds per item (``n`` items a pass)."""
    best = float("inf")
    for _ in range(passes):
        t = time.process_time()
        fn()
        best = min(best, time.process_time() - t)
    return best / n * 1e6


def redacted(passes: int) -> None:
    """The ``--redacted`` figures (module docstring)."""
    import orjson

    from memory_core.store.scrub import Scrubber

    said = ("Customer record for the ticket: Ilse Marrowfield, phone 555-0142, the"
            " ZEBRAQUILL cluster runs on port 7411 when the VPN is up.")
    scope = Scope("t", "r")
    turns = [{"role": "user" if i % 2 == 0 else "assistant",
              "content": f"turn {i}: the staging database runs on port {5000 + i} and the "
                         "ledger migration plan needs review by the team before Friday. " * 3}
             for i in range(1000)]
    parsed = {"model": "m", "messages": turns}
    body = orjson.dumps(parsed)
    hashes = frozenset({forwarded._digest({"role": "user", "content": said})})

    def prep(given: object, removed: frozenset[str] | None) -> None:
        forwarded.prepare(scope, "r", given, {}, max_bytes=4 << 20, redact=False,
                          removed=removed)

    print(f"forwarded 1000-turn body ({len(body) // 1024} KiB), per body, ms:")
    print(f"{'given as':8} {'no hash':>8} {'hashes':>8} {'added':>8}")
    for name, given in (("bytes", body), ("dict", parsed)):
        a = best_us(lambda g=given: prep(g, None), 1, passes) / 1000
        b = best_us(lambda g=given: prep(g, hashes), 1, passes) / 1000
        print(f"{name:8} {a:8.2f} {b:8.2f} {b - a:8.2f}")
    scrub = Scrubber([said])
    text = body.decode()
    holding = orjson.loads(body)
    holding["messages"][500] = {"role": "user", "content": said}
    holding["messages"][998]["content"] = f"[memory] the user said: {said[30:110]}…"
    c = best_us(lambda: scrub.may_hold(text), 1, passes) / 1000
    d = best_us(lambda: scrub.scrub_value(holding), 1, passes) / 1000
    print(f"redaction scan of one body: pre-test (no copy) {c:.2f} ms,"
          f" scrub (two copies) {d:.2f} ms")


def _former_rule(said: str) -> Callable[[str], bool]:
    """The rule before: a string holding any 24-character window of the text."""
    import re

    def norm(t: str) -> str:
        return re.sub(r"\s+", " ", t).strip().lower()

    text = norm(said)
    pieces = ({text} if len(text) <= 24 else
              {text[i:i + 24] for i in range(0, len(text) - 23, 12)} | {text[-24:]})
    return lambda other: any(p in norm(other) for p in pieces)


def overwipe() -> None:
    """The ``--overwipe`` figures (module docstring)."""
    from memory_core.store.scrub import Scrubber

    print(f"{'corpus':10} {'redacted':>8} {'pairs':>8} {'former':>7} {'now':>5}")
    for name, pairs in corpora(ROOT).items():
        texts = list(dict.fromkeys(t for t, _ in pairs if len(t.strip()) >= 20))
        tried = texts[:200]
        former = now = tested = 0
        for said in tried:
            old, new = _former_rule(said), Scrubber([said])
            for other in texts:
                if other == said:
                    continue
                tested += 1
                former += old(other)
                now += new.scrub(other) != other
        print(f"{name:10} {len(tried):8d} {tested:8d} {former:7d} {now:5d}")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--passes", type=int, default=7)
    ap.add_argument("--redacted", action="store_true",
                    help="only the figures of a tenant's redaction (module docstring)")
    ap.add_argument("--overwipe", action="store_true",
                    help="only the over-wipe counts (module docstring)")
    args = ap.parse_args()
    passes = args.passes
    if args.overwipe:
        overwipe()
        return
    if args.redacted:
        redacted(passes)
        return
    sets = {k: [t for t, _ in v] for k, v in corpora(ROOT).items()}
    sets["numbers"] = [f"Order {i}: pay with card 4111 1111 1111 1111 to IBAN "
                       f"DE89 3704 0044 0532 0130 00 by 2024-01-{i % 28 + 1:02d}."
                       for i in range(500)]
    off, on = MemoryConfig(redact_identity_numbers=False), MemoryConfig()
    print(f"{'corpus':10} {'msgs':>5} {'secrets us':>11} {'both us':>8} {'ratio':>6}"
          f" {'stored off':>11} {'stored on':>10} {'ratio':>6}")
    for name, texts in sets.items():
        msgs = [{"role": "user", "content": t} for t in texts]
        n = len(texts)
        a = best_us(lambda texts=texts: [redact_secrets(t) for t in texts], n, passes)
        b = best_us(lambda texts=texts: [redact_text(t, identity=True) for t in texts],
                    n, passes)
        c = best_us(lambda msgs=msgs: [stored_forms(m, off) for m in msgs], n, passes)
        d = best_us(lambda msgs=msgs: [stored_forms(m, on) for m in msgs], n, passes)
        print(f"{name:10} {n:5d} {a:11.2f} {b:8.2f} {b / a:6.2f} {c:11.2f} {d:10.2f}"
              f" {d / c:6.2f}")
    import orjson

    scope = Scope("t", "r")
    body = orjson.dumps({"model": "m", "messages": [
        {"role": "user" if i % 2 == 0 else "assistant",
         "content": f"turn {i}: the staging database runs on port {5000 + i} and the "
                    "ledger migration plan needs review by the team before Friday. " * 3}
        for i in range(1000)]})

    def prep(identity: bool) -> None:
        forwarded._CLEAN.clear()  # a first scan: every message read
        forwarded.prepare(scope, "r", body, {}, max_bytes=4 << 20, redact=True,
                          identity=identity)

    x = best_us(lambda: prep(False), 1, passes) / 1000
    y = best_us(lambda: prep(True), 1, passes) / 1000
    print(f"forwarded 1000-turn body ({len(body) // 1024} KiB), first scan: "
          f"off {x:.2f} ms, on {y:.2f} ms, ratio {y / x:.2f}")


if __name__ == "__main__":
    main()
