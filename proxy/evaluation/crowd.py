"""The ``crowd`` profile of the long-session eval: several end users behind one key,
several speakers, near-repetitive numbered steps, numbered lists, unmarked updates
and paraphrased restatements (issue 24).

One API key serves ``users`` end users (the OpenAI ``user`` field). Each user has
two conversations (``X-LCM-Session``) and then a third in which every question of
the answer key is asked; the second conversation also ends with two of them. The
first conversation is a group chat: two named people (the message ``name``) say
where they live, and one of them later moves (an update without "actually"). The
content comes from :mod:`.crowd_topics` (its own vocabulary) and a seed space of its
own (``lcm-crowd:``), never from the old generator's templates.

The answer key says, for every statement: its group (one attribute of one subject
held by one speaker), the words that identify its value, whether it *stands*
(preferences, rules, decisions, corrections, quantities the user fixed) and whether
it is local to its conversation (numbered steps, a checklist, a one-off request, a
goal: marked by the conversation's tray code). Measured on what the upstream
received and on the store (pure functions below, then :func:`run_crowd`):

- today's metrics: coverage, superseded values shown as current, retrieval
  recall@10 and rank-1 (before the questions), memory tokens per user turn, added
  latency (each request also sent straight to the fake upstream);
- **invented conflicts**: stored conflict pairs between statements of different
  groups (target 0); ``conflict_lines`` counts every CONFLICTS line shown;
- **block precision**: the share of block lines (``[Memory]`` and ``[User
  Preferences]`` bullets of the questions' requests) that hold the asked value or a
  standing statement's current value of that user (target ≥ 0.8);
- **duplicates shown**: extra lines, in one block, that hold the same group's value
  (target 0);
- **cross-user leaks** and **cross-thread leaks**: lines of any user turn's block
  that hold another user's value; lines that hold another conversation's tray code
  or cite (``msg N``) a local statement said in another conversation (target 0).
"""

from __future__ import annotations

import asyncio
import random
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import orjson

from memory_core.store.api import Tx
from proxy.evaluation import crowd_topics as T
from proxy.evaluation import metrics

CROWD_PROFILES: dict[str, tuple[int, int]] = {
    "crowd-smoke": (2, 6),
    "crowd": (3, 12),
    "crowd-full": (5, 40),
}
"""``profile: (end users, user turns per conversation)``; each user also gets a
question conversation (eight questions) and two questions at the end of the second."""

TARGETS = {"invented_conflicts": 0, "block_precision": 0.8, "duplicates_shown": 0,
           "cross_user_leaks": 0, "cross_thread_leaks": 0}


@dataclass(frozen=True, slots=True)
class Statement:
    """One thing said: ``group`` (attribute · subject · speaker), ``needles`` (words
    that identify its value), ``standing``, ``local`` (stays in its conversation)."""

    group: str
    text: str
    needles: tuple[str, ...]
    standing: bool = False
    local: bool = False


@dataclass(frozen=True, slots=True)
class CrowdTurn:
    """One user message: ``user`` (the end user), ``thread`` (session), ``name``
    (speaker, or ``None``), ``asks`` (a key id for a question)."""

    user: str
    thread: str
    text: str
    reply: str
    name: str | None = None
    asks: str | None = None
    statements: tuple[Statement, ...] = ()


@dataclass(frozen=True, slots=True)
class CrowdKey:
    """A question and its answer: ``current`` needles, ``superseded`` older ones."""

    id: str
    user: str
    group: str
    question: str
    current: tuple[str, ...]
    superseded: tuple[tuple[str, ...], ...] = ()


@dataclass(frozen=True, slots=True)
class Scenario:
    """A generated crowd run: turns in the order sent, the key, every user's own
    values (``values``: user → needles) and each conversation's code."""

    seed: int
    profile: str
    turns: tuple[CrowdTurn, ...]
    key: tuple[CrowdKey, ...]
    values: dict[str, tuple[str, ...]]
    codes: dict[str, str]
    standing: dict[str, tuple[tuple[str, ...], ...]]


def generate(profile: str, seed: int) -> Scenario:
    """The scenario of ``profile`` (see :data:`CROWD_PROFILES`) for ``seed``;
    deterministic. Raises ``KeyError`` for an unknown profile."""
    n_users, per_thread = CROWD_PROFILES[profile]
    rng = random.Random(f"lcm-crowd:{seed}:{profile}")
    draw: dict[str, list[Any]] = {}

    def take(pool: Sequence[Any], name: str, k: int = 1) -> list[Any]:
        left = draw.setdefault(name, rng.sample(list(pool), len(pool)))
        if len(left) < k:
            raise ValueError(f"the {name} pool is too small for {n_users} users")
        return [left.pop() for _ in range(k)]

    turns: list[CrowdTurn] = []
    key: list[CrowdKey] = []
    values: dict[str, tuple[str, ...]] = {}
    codes: dict[str, str] = {}
    standing: dict[str, tuple[tuple[str, ...], ...]] = {}
    limits = rng.sample(range(120, 480, 10), n_users)
    for u in range(n_users):
        user = f"baker-{u + 1}"
        mill_old, mill_new = take(T.MILLS, "mill", 2)
        day_old, day_new = rng.sample(T.DAYS, 2)
        nick, = take(T.NICKNAMES, "nick")
        colour, = take(T.COLOURS, "colour")
        keeper, = take(T.BOOKKEEPERS, "keeper")
        p1, p2 = take(T.SPEAKERS, "speaker", 2)
        town1, town2, town3 = take(T.TOWNS, "town", 3)
        code_a, code_b = take(T.TRAY_CODES, "code", 2)
        limit = str(limits[u])
        ta, tb, tq = f"{user}-a", f"{user}-b", f"{user}-ask"
        codes[ta], codes[tb] = code_a, code_b
        values[user] = (mill_old, mill_new, nick, colour, keeper, p1, p2, town1, town2,
                        town3, code_a, code_b)
        g = f"{user}:"
        said_a: list[tuple[Statement, str | None]] = [
            (Statement(g + "flour", T.FLOUR_FIRST.format(v=mill_old), (mill_old,)), None),
            (Statement(g + "home:" + p1, T.HOME_SAY.format(v=town1), (town1,)), p1),
            (Statement(g + "home:" + p2, T.HOME_SAY.format(v=town2), (town2,)), p2),
            (Statement(g + "nick", T.NICK_SAY.format(v=nick), (nick,), standing=True), None),
            (Statement(g + "keeper", T.BOOK_SAY.format(v=keeper), (keeper,)), None),
            (Statement(g + "checklist", T.CHECKLIST.format(code=code_a, n=rng.randrange(
                40, 200, 10)), (code_a,), local=True), None),
            (Statement(g + "delivery", T.DELIVERY_FIRST.format(v=day_old), (day_old,)), None),
            (Statement(g + "rule", T.RULE_SAY.format(v=colour), (colour,), standing=True),
             None),
        ]
        said_b: list[tuple[Statement, str | None]] = [
            (Statement(g + "goal", T.GOAL.format(code=code_b), (code_b,), local=True), None),
            (Statement(g + "limit", T.LIMIT_SAY.format(v=limit), (limit,), standing=True),
             None),
            (Statement(g + "flour", rng.choice(T.FLOUR_UPDATES).format(v=mill_new),
                       (mill_new,), standing=True), None),
            (Statement(g + "keeper", rng.choice(T.BOOK_AGAIN).format(v=keeper), (keeper,)),
             None),
            (Statement(g + "delivery", rng.choice(T.DELIVERY_UPDATES).format(v=day_new),
                       (day_new,), standing=True), None),
            (Statement(g + "rule", T.RULE_AGAIN.format(v=colour), (colour,), standing=True),
             None),
            (Statement(g + "one-off", T.ONE_OFF.format(code=code_b), (code_b,), local=True),
             None),
        ]
        # The group chat's move comes late in conversation a.
        moved = (Statement(g + "home:" + p1, rng.choice(T.HOME_MOVED).format(v=town3),
                           (town3,), standing=True), p1)
        batches = [(Statement(g + f"batch:{k}", T.BATCH.format(k=k, code=code_b,
                                                                m=rng.randrange(38, 75)),
                              (code_b, f"Batch {k}"), local=True), None)
                   for k in range(1, 1 + max(2, per_thread // 2))]
        for thread, said in ((ta, said_a + [moved]), (tb, _interleave(rng, said_b, batches))):
            queue = ([([st], name) for st, name in said] if len(said) <= per_thread
                     else _pairs(said, per_thread))
            length = max(per_thread, len(queue))
            slots = set(rng.sample(range(length), len(queue)))
            it = iter(queue)
            for t in range(length):
                if t in slots:
                    sts, name = next(it)
                    turns.append(CrowdTurn(user, thread, "\n".join(st.text for st in sts),
                                           rng.choice(T.REPLIES), name=name,
                                           statements=tuple(sts)))
                else:
                    turns.append(CrowdTurn(user, thread, rng.choice(T.FILLER),
                                           rng.choice(T.REPLIES),
                                           name=rng.choice((None, p1, p2)) if thread == ta
                                           else None))
        items = [
            CrowdKey(f"{user}-flour", user, g + "flour", T.FLOUR_ASK, (mill_new,),
                     ((mill_old,),)),
            CrowdKey(f"{user}-delivery", user, g + "delivery", T.DELIVERY_ASK, (day_new,),
                     ((day_old,),)),
            CrowdKey(f"{user}-nick", user, g + "nick", T.NICK_ASK, (nick,)),
            CrowdKey(f"{user}-rule", user, g + "rule", T.RULE_ASK, (colour,)),
            CrowdKey(f"{user}-limit", user, g + "limit", T.LIMIT_ASK, (limit,)),
            CrowdKey(f"{user}-keeper", user, g + "keeper", T.BOOK_ASK, (keeper,)),
            CrowdKey(f"{user}-home1", user, g + "home:" + p1, T.HOME_ASK.format(who=p1),
                     (town3,), ((town1,),)),
            CrowdKey(f"{user}-home2", user, g + "home:" + p2, T.HOME_ASK.format(who=p2),
                     (town2,)),
        ]
        key += items
        standing[user] = ((nick,), (colour,), (limit,), (mill_new,), (day_new,), (town3,))
        for k in rng.sample(items, 2):  # two questions at the end of conversation b
            turns.append(CrowdTurn(user, tb, k.question, T.QUESTION_REPLY, asks=k.id))
        for k in rng.sample(items, len(items)):
            turns.append(CrowdTurn(user, tq, k.question, T.QUESTION_REPLY, asks=k.id))
    return Scenario(seed, profile, tuple(turns), tuple(key), values, codes, standing)


def _interleave(rng: random.Random, a: list[Any], b: list[Any]) -> list[Any]:
    """``a`` and ``b`` merged, each keeping its order, at random."""
    out, i, j = [], 0, 0
    while i < len(a) or j < len(b):
        if j >= len(b) or (i < len(a) and rng.random() < len(a) / (len(a) + len(b))):
            out.append(a[i])
            i += 1
        else:
            out.append(b[j])
            j += 1
    return out


def _pairs(said: list[Any], n: int) -> list[Any]:
    """``said`` packed into about ``n`` turns of several statements each, one speaker
    a turn (a turn may be added to keep speakers apart)."""
    per = -(-len(said) // n)
    out: list[tuple[list[Statement], str | None]] = []
    for st, name in said:
        if out and out[-1][1] == name and len(out[-1][0]) < per:
            out[-1][0].append(st)
        else:
            out.append(([st], name))
    return out


# -- measures (pure) ---------------------------------------------------------------------------
_BULLET = re.compile(r"^- ")
_SECTION = re.compile(r"^\[[^\]]+\]")


def block_lines(block: str) -> list[str]:
    """The bullet lines of ``[Memory]`` and ``[User Preferences]`` in a block."""
    out, keep = [], False
    for line in block.splitlines():
        if _SECTION.match(line):
            keep = line.startswith(("[Memory]", "[User Preferences]"))
            continue
        if keep and _BULLET.match(line):
            out.append(line)
    return out


def _has(line: str, needles: Sequence[str]) -> bool:
    return metrics.line_has_all(line, needles)


def precision_counts(lines: Sequence[str], asked: Sequence[str],
                     standing: Sequence[Sequence[str]]) -> tuple[int, int]:
    """``(useful, total)`` block lines: useful holds the asked value or a standing
    statement's current value."""
    useful = sum(1 for ln in lines if _has(ln, asked) or any(_has(ln, s) for s in standing))
    return useful, len(lines)


def duplicates(lines: Sequence[str], groups: Sequence[Sequence[str]]) -> int:
    """Extra lines holding one group's value (each group counted once per line set)."""
    extra = 0
    for needles in groups:
        n = sum(1 for ln in lines if _has(ln, needles) and not _CORRECTS.search(ln))
        extra += max(0, n - 1)
    return extra


_CORRECTS = re.compile(r"\(corrects msg \d+: .*superseded\)")


def leaks(lines: Sequence[str], foreign: Sequence[str]) -> list[str]:
    """The lines that hold any of the ``foreign`` words (whole words)."""
    if not foreign:
        return []
    words = re.compile("|".join(rf"(?<!\w){re.escape(w)}(?!\w)" for w in foreign))
    return [ln for ln in lines if words.search(ln)]


# -- the run ---------------------------------------------------------------------------------
@dataclass
class CrowdResult:
    """What :func:`run_crowd` measured (JSON-ready via :func:`dataclasses.asdict`)."""

    profile: str
    seed: int
    users: int
    turns: int
    requests: int = 0
    questions: int = 0
    covered: int = 0
    stale: list[str] = field(default_factory=list)
    recall: int = 0
    rank1: int = 0
    retrieval_questions: int = 0
    memory_tokens: list[int] = field(default_factory=list)
    proxy_ms: list[float] = field(default_factory=list)
    direct_ms: list[float] = field(default_factory=list)
    invented_conflicts: list[str] = field(default_factory=list)
    conflict_lines: int = 0
    useful_lines: int = 0
    block_lines: int = 0
    duplicates_shown: int = 0
    duplicate_examples: list[str] = field(default_factory=list)
    cross_user: list[str] = field(default_factory=list)
    cross_thread: list[str] = field(default_factory=list)
    misses: list[str] = field(default_factory=list)
    wall_s: float = 0.0


async def run_crowd_async(profile: str, seed: int = 1, *, embedding: str | None = None,
                          tables: dict[str, dict[str, Any]] | None = None,
                          tick: Callable[[], None] = lambda: None) -> dict[str, Any]:
    """Generate ``profile``, drive it through one lcm-proxy (real SDK, real proxy, the
    scripted fake upstream), measure; return ``{"figures", "targets", "result",
    "markdown"}``."""
    import openai
    from aiohttp import web

    from proxy.app import create_app
    from proxy.appkeys import ENGINE
    from proxy.evaluation.fake import DIRECT_HEADER, EvalUpstream
    from proxy.evaluation.runner import API_KEY, ROLE, _settings, _settle

    scenario = generate(profile, seed)
    started = time.perf_counter()
    res = CrowdResult(profile, seed, len(scenario.values), len(scenario.turns))
    fake = EvalUpstream()
    await fake.start()
    tmp = tempfile.TemporaryDirectory(prefix="lcm-crowd-")
    settings = _settings("lcm", fake.base_url, Path(tmp.name) / "lcm", embedding, tables)
    app = create_app(settings)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    url = f"http://127.0.0.1:{runner.addresses[0][1]}/v1"
    engine = app[ENGINE]
    counter = metrics.TokenCounter()
    clients: dict[tuple[str, bool], Any] = {}
    histories: dict[str, list[dict[str, Any]]] = {}
    keys = {k.id: k for k in scenario.key}
    groups_of = {u: [k.current for k in scenario.key if k.user == u] for u in scenario.values}
    retrieved: set[str] = set()
    shown: list[tuple[str, list[str]]] = []
    try:
        for n, turn in enumerate(scenario.turns):
            await _settle(app)
            if turn.asks is not None and turn.user not in retrieved:
                retrieved.add(turn.user)
                await asyncio.get_running_loop().run_in_executor(
                    None, _retrieval, engine, ROLE, scenario, turn.user, res)
            for direct in (False, True):
                if (turn.thread, direct) not in clients:
                    headers = {"X-LCM-Session": turn.thread}
                    if direct:
                        headers[DIRECT_HEADER] = "1"
                    clients[(turn.thread, direct)] = openai.AsyncOpenAI(
                        base_url=fake.base_url if direct else url, api_key=API_KEY,
                        max_retries=0, timeout=600, default_headers=headers)
            history = histories.setdefault(turn.thread, [{"role": "system",
                                                          "content": T.SYSTEM}])
            msg: dict[str, Any] = {"role": "user", "content": turn.text}
            if turn.name:
                msg["name"] = turn.name
            history.append(msg)
            fake.script(turn.reply)
            order = (False, True) if n % 2 == 0 else (True, False)
            for direct in order:
                t0 = time.perf_counter()
                await clients[(turn.thread, direct)].chat.completions.create(
                    model="eval-model", messages=history, user=turn.user)
                (res.direct_ms if direct else res.proxy_ms).append(
                    (time.perf_counter() - t0) * 1000.0)
            res.requests += 1
            upstream = orjson.loads(fake.take())["messages"]
            history.append({"role": "assistant", "content": turn.reply})
            block = metrics.block_text(upstream)
            res.memory_tokens.append(counter.text(block))
            lines = block_lines(block)
            res.conflict_lines += sum("CONFLICTS with" in ln for ln in lines)
            others = [v for u, vals in scenario.values.items() if u != turn.user for v in vals]
            res.cross_user += [f"{turn.thread}: {ln}" for ln in leaks(lines, others)]
            foreign_codes = [c for t, c in scenario.codes.items() if t != turn.thread]
            coded = leaks(lines, foreign_codes)
            res.cross_thread += [f"{turn.thread}: {ln}" for ln in coded]
            shown.append((turn.thread, [ln for ln in lines if ln not in coded]))
            if turn.asks is not None:
                k = keys[turn.asks]
                res.questions += 1
                if metrics.covered(upstream, k.current):
                    res.covered += 1
                else:
                    res.misses.append(f"{k.id}: {k.question}")
                res.stale += [f"{k.id}: {s}" for s in metrics.stale_lines(
                    upstream, k.current, k.superseded)]
                useful, total = precision_counts(lines, k.current,
                                                 scenario.standing[turn.user])
                res.useful_lines += useful
                res.block_lines += total
                dup = duplicates(lines, groups_of[turn.user])
                res.duplicates_shown += dup
                for needles in groups_of[turn.user] if dup else ():
                    same = [ln for ln in lines if _has(ln, needles)
                            and not _CORRECTS.search(ln)]
                    if len(same) > 1:
                        res.duplicate_examples.append(f"{k.id}: " + " | ".join(same))
            tick()
        await _settle(app)
        res.invented_conflicts = engine.store.read_tx(_invented, scenario)
        res.cross_thread += engine.store.read_tx(_local_elsewhere, scenario, shown)
    finally:
        for client in clients.values():
            await client.close()
        await runner.cleanup()
        await fake.stop()
        tmp.cleanup()
    res.wall_s = time.perf_counter() - started
    figures = crowd_figures(res)
    return {"figures": figures, "targets": crowd_verdict(figures), "result": asdict(res),
            "markdown": crowd_markdown(figures, res)}


def run_crowd(profile: str, seed: int = 1, **kwargs: Any) -> dict[str, Any]:
    """Blocking form of :func:`run_crowd_async`."""
    return asyncio.run(run_crowd_async(profile, seed, **kwargs))


def _retrieval(engine: Any, role: str, scenario: Scenario, user: str,
               res: CrowdResult) -> None:
    """recall@10 and rank-1 of each of ``user``'s questions, searched in the user's
    scope before any question is stored (as the old profile does)."""
    if engine.search is None:
        return
    import numpy as np

    from proxy.evaluation.runner import _hit_text

    tenant = engine.store.read_tx(lambda tx: tx.operator.session_tenant(f"{user}-a"))
    if tenant is None:
        return
    for k in scenario.key:
        if k.user != user:
            continue
        vector = None
        if engine.search.embedder is not None:
            vector = np.asarray(engine.search.embedder.embed_queries([k.question])[0],
                                dtype=np.float32)
        hits = engine.search.search(tenant, role, k.question, k=10, query_vector=vector)
        texts = engine.store.read_tx(
            lambda tx, hits=hits: [_hit_text(tx, h.kind, h.ref_id) for h in hits])
        found = [metrics.hit_matches(t, s, k.current) for t, s in texts]
        res.retrieval_questions += 1
        res.recall += int(any(found))
        res.rank1 += int(bool(found) and found[0])


def _invented(tx: Tx, scenario: Scenario) -> list[str]:
    """Stored conflict pairs whose two items come from statements of different
    groups (or from no statement of the key: small talk)."""
    said: dict[str, tuple[Statement, ...]] = {}
    for t in scenario.turns:
        said.setdefault(t.text, t.statements)
    out = []
    for r in tx.operator.conflict_pairs():
        ga = _group(said.get(r["a_msg"] or "", ()), r["a_text"])
        gb = _group(said.get(r["b_msg"] or "", ()), r["b_text"])
        if ga is None or gb is None or ga != gb:
            out.append(f"{r['a_text']!r} vs {r['b_text']!r}")
    return out


_SOURCE = re.compile(r"\bmsg (\d+)")


def _local_elsewhere(tx: Tx, scenario: Scenario,
                     shown: Sequence[tuple[str, Sequence[str]]]) -> list[str]:
    """Block lines whose cited source message (the first ``msg N``) is a local
    statement of another conversation, whether or not the line kept its tray code
    (an item taken from a checklist line does not)."""
    said: dict[str, tuple[Statement, ...]] = {}
    for t in scenario.turns:
        said.setdefault(t.text, t.statements)
    out = []
    for thread, lines in shown:
        for ln in lines:
            m = _SOURCE.search(ln)
            if m is None:
                continue
            row = tx.operator.message_session(int(m.group(1)))
            if row is None or row["session"] == thread:
                continue
            statement = _statement(said.get(row["text"], ()), ln)
            if statement is not None and statement.local:
                out.append(f"{thread}: {ln}")
    return out


def _statement(statements: Sequence[Statement], text: str) -> Statement | None:
    """The statement an item was taken from (most words in common)."""
    words = set(re.findall(r"\w+", text.casefold()))
    return max(statements, default=None, key=lambda st: len(
        words & set(re.findall(r"\w+", st.text.casefold()))))


def _group(statements: Sequence[Statement], text: str) -> str | None:
    """The group of the statement an item was taken from."""
    best = _statement(statements, text)
    return best.group if best is not None else None


def crowd_figures(res: CrowdResult) -> dict[str, Any]:
    """The report's numbers (shares in [0, 1]; milliseconds; tokens)."""
    added = [p - d for p, d in zip(res.proxy_ms, res.direct_ms, strict=False)]
    return {
        "users": res.users, "turns": res.turns, "requests": res.requests,
        "questions": res.questions,
        "coverage": metrics.share(res.covered, res.questions),
        "superseded_as_current": len(res.stale),
        "recall": metrics.share(res.recall, res.retrieval_questions),
        "rank1": metrics.share(res.rank1, res.retrieval_questions),
        "memory_tokens_mean": statistics.fmean(res.memory_tokens) if res.memory_tokens
        else None,
        "added_mean_ms": statistics.fmean(added) if added else None,
        "added_p95_ms": (metrics.percentile(res.proxy_ms, 0.95)
                         - metrics.percentile(res.direct_ms, 0.95)) if added else None,
        "invented_conflicts": len(res.invented_conflicts),
        "conflict_lines": res.conflict_lines,
        "block_precision": metrics.share(res.useful_lines, res.block_lines),
        "block_lines": res.block_lines,
        "duplicates_shown": res.duplicates_shown,
        "cross_user_leaks": len(res.cross_user),
        "cross_thread_leaks": len(res.cross_thread),
        "wall_s": res.wall_s,
    }


def crowd_verdict(fig: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Each of :data:`TARGETS` with its value and whether it is met."""
    out = {}
    for name, target in TARGETS.items():
        value = fig[name]
        met = None if value is None else (value >= target if name == "block_precision"
                                          else value <= target)
        out[name] = {"value": value, "target": target, "met": met}
    return out


def crowd_markdown(fig: dict[str, Any], res: CrowdResult) -> str:
    """A short report: targets, then today's metrics, then what went wrong."""
    def pct(v: float | None) -> str:
        return "—" if v is None else f"{100 * v:.1f} %"

    def ms(v: float | None) -> str:
        return "—" if v is None else f"{v:+.1f} ms"

    lines = [f"# Long-session eval, profile {res.profile} (seed {res.seed})", "",
             f"{fig['users']} end users behind one key, {fig['turns']} user turns,"
             f" {fig['questions']} questions; {fig['wall_s']:.0f} s.", "",
             "| measure | value | target | met |", "|---|---|---|---|"]
    for name, row in crowd_verdict(fig).items():
        value = pct(row["value"]) if name == "block_precision" else row["value"]
        target = (f"≥ {pct(row['target'])}" if name == "block_precision"
                  else f"{row['target']}")
        lines.append(f"| {name.replace('_', ' ')} | {value} | {target} |"
                     f" {'yes' if row['met'] else 'no'} |")
    lines += ["", "| today's metrics | value |", "|---|---|",
              f"| coverage | {pct(fig['coverage'])} |",
              f"| superseded shown as current | {fig['superseded_as_current']} |",
              f"| retrieval recall@10 / rank-1 | {pct(fig['recall'])} / {pct(fig['rank1'])} |",
              f"| memory tokens per user turn | {fig['memory_tokens_mean'] or 0:.0f} |",
              f"| added latency mean / p95 | {ms(fig['added_mean_ms'])} /"
              f" {ms(fig['added_p95_ms'])} |",
              f"| CONFLICTS lines shown | {fig['conflict_lines']} |",
              f"| block lines judged | {fig['block_lines']} |"]
    for title, rows in (("Invented conflicts", res.invented_conflicts),
                        ("Cross-user leaks", res.cross_user),
                        ("Cross-thread leaks", res.cross_thread),
                        ("Superseded shown as current", res.stale),
                        ("Duplicates", res.duplicate_examples),
                        ("Coverage misses", res.misses)):
        if rows:
            lines += ["", f"{title} ({len(rows)}, first 5):", ""]
            lines += [f"- {r[:300]}" for r in rows[:5]]
    return "\n".join(lines) + "\n"
