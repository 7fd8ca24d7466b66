"""A conversation full of numbers, for ``lcm-proxy bench history --workload numbers``.

Issue 28's workload, which the eval's generator does not produce: every user turn
is about 40 words with a few numbers (a value with its unit, a count, a version)
and a "keep in mind" target; every reply is about 20 words. Such a conversation
gives the extractor a few items per turn, so the stored item set, and anything
on the request path that scans it, grows with the conversation.

:func:`numbers_session` returns a :class:`proxy.evaluation.generator.Session`
(no tool calls, no answer key), so the history bench drives it as it drives the
eval's sessions. Seeded: the same ``(seed, n_turns)`` gives the same text.
"""

from __future__ import annotations

import random

from proxy.evaluation.generator import Session, Turn

_PARTS = ("cache layer", "ingest worker", "billing job", "search index", "upload queue",
          "report builder", "auth gateway", "sync daemon", "image resizer", "mail relay",
          "metrics exporter", "scheduler", "payment hook", "audit trail", "feature flag service")
_SITES = ("eu-west", "us-east", "ap-south", "staging", "the lab cluster", "region 4",
          "the backup site", "canary", "the edge nodes", "the batch farm")
_KNOBS = (("batch size", "", (16, 2048)), ("timeout", "s", (2, 600)),
          ("retry limit", "", (1, 12)), ("pool size", "", (4, 256)),
          ("memory cap", "MB", (128, 16384)), ("window", "min", (1, 90)),
          ("queue depth", "", (10, 50000)), ("rate limit", "req/s", (5, 5000)),
          ("disk quota", "GB", (1, 900)), ("heartbeat", "ms", (50, 5000)))
_TARGETS = (("p95 latency under", "ms", (20, 900)), ("error rate below", "%", (1, 9)),
            ("cost under", "USD a day", (5, 4000)), ("recovery within", "minutes", (1, 120)),
            ("throughput above", "req/s", (50, 20000)), ("uptime of at least", "%", (95, 99)))
_OPENERS = ("Quick update on", "Next, about", "Before I forget, for", "We measured", "Regarding",
            "One more thing on", "Status of")
_REPLIES = (
    "Noted: {part} on {site} uses {knob} {value}{unit}, and I will keep the {target} "
    "{tvalue} {tunit} target in mind for the next steps.",
    "Understood, I recorded {knob} {value}{unit} for the {part} and will check it against the "
    "{target} {tvalue} {tunit} goal before the next change.",
    "Got it. The {part} at {site} now has {knob} {value}{unit}; I will flag anything that "
    "threatens the {target} {tvalue} "
    "{tunit} target.",
)


def numbers_session(seed: int, n_turns: int, sid: str | None = None) -> Session:
    """A seeded session of ``n_turns`` user turns (≥ 1), each ~40 words with numbers
    and a "keep in mind" target, each reply ~20 words. ``ValueError`` for fewer."""
    if n_turns < 1:
        raise ValueError(f"need at least one turn, got {n_turns}")
    rng = random.Random(f"numbers-{seed}")
    turns = []
    for i in range(n_turns):
        part, site = rng.choice(_PARTS), rng.choice(_SITES)
        (knob, unit, (lo, hi)), (knob2, unit2, (lo2, hi2)) = rng.sample(_KNOBS, 2)
        target, tunit, (tlo, thi) = rng.choice(_TARGETS)
        value, value2, tvalue = rng.randint(lo, hi), rng.randint(lo2, hi2), rng.randint(tlo, thi)
        version = f"{rng.randint(1, 9)}.{rng.randint(0, 30)}.{rng.randint(0, 99)}"
        nodes = rng.randint(2, 64)
        u, u2 = (f" {unit}" if unit else ""), (f" {unit2}" if unit2 else "")
        text = (f"{rng.choice(_OPENERS)} the {part} on {site}: we run version {version} on "
                f"{nodes} nodes, the {knob} is {value}{u} and the {knob2} is {value2}{u2} after "
                f"yesterday's change. Keep in mind the target: {target} {tvalue} {tunit} for "
                f"the {part} by the end of the week.")
        reply = rng.choice(_REPLIES).format(part=part, site=site, knob=knob, value=value,
                                            unit=u, target=target,
                                            tvalue=tvalue, tunit=tunit)
        turns.append(Turn(index=i, lang="en", text=text, reply=reply))
    return Session(id=sid or f"numbers-{seed}-{n_turns}", seed=seed, n_turns=n_turns,
                   lang="en", system="You are a helpful operations assistant for a platform "
                   "team. Answer briefly.", turns=tuple(turns), key=(), tasks=())
