"""Seeded synthetic sessions and their answer key, written before any system runs.

:func:`generate_session` turns ``(seed, session id, turns, primary language)`` into a
:class:`Session`: the user turns an agent will send, what the fake upstream answers
(text, or a call of one of the agent's own tools), and the answer key — every value
the user stated, corrected or set, where, and how a later question asks for it.
The key comes from the templates and the random draws only (never from any
system's output), so the same seed gives the same session and key, byte for byte.

Layout of a session of ``n`` turns (``Q`` questions at the end, ``B = n − Q``):

- set before turn 0 (out of band): one user preference (``agent_memories``);
- early (first 20 % of ``B``): three facts with units and conditions, a decision, a
  chat preference, the first values of two correction chains, the goal and three
  TODOs, and a tool call whose result holds a key value;
- 35–50 %: first corrections; 40–60 %: a progress line closing a TODO and a
  blocker; 60–70 %: the goal is replaced; 70–85 %: the correction of a correction;
- distractors twice per topic: once in the first 30 %, once in the last 25 % of ``B``;
- filler everywhere else (three more tool exchanges when ``B`` ≥ 40);
- the last ``Q`` turns: one paraphrased question per key item, shuffled.
"""

from __future__ import annotations

import hashlib
import random
import re
from dataclasses import asdict, dataclass, field

import orjson

from proxy.evaluation import chatter, topics_cjk, topics_en
from proxy.evaluation.topics import CliPref, TaskSet, ToolKey, Topic

LANGS = ("en", "zh", "ja")

POOLS: dict[tuple[str, str], tuple[Topic, ...]] = {
    ("fact", "en"): topics_en.FACTS, ("fact", "zh"): topics_cjk.FACTS,
    ("fact", "ja"): topics_cjk.FACTS_JA,
    ("decision", "en"): topics_en.DECISIONS, ("decision", "zh"): topics_cjk.DECISIONS,
    ("decision", "ja"): topics_cjk.DECISIONS_JA,
    ("chain", "en"): topics_en.CHAINS, ("chain", "zh"): topics_cjk.CHAINS,
    ("chain", "ja"): topics_cjk.CHAINS_JA,
    ("pref_chat", "en"): topics_en.PREFS, ("pref_chat", "zh"): topics_cjk.PREFS,
    ("pref_chat", "ja"): topics_cjk.PREFS_JA,
}
TASK_POOLS: dict[str, tuple[TaskSet, ...]] = {
    "en": topics_en.TASK_SETS, "zh": topics_cjk.TASK_SETS, "ja": topics_cjk.TASK_SETS_JA}
CLI_POOLS: dict[str, tuple[CliPref, ...]] = {
    "en": topics_en.CLI_PREFS, "zh": topics_cjk.CLI_PREFS, "ja": topics_cjk.CLI_PREFS_JA}

PROFILES: dict[str, tuple[tuple[int, str], ...]] = {
    "smoke": ((30, "en"),),
    "quick": ((100, "en"), (200, "zh")),
    "full": ((100, "en"), (100, "ja"), (200, "zh"), (200, "en"), (500, "ja"), (1000, "en"),
             (2000, "zh")),
}
"""Sessions per profile: ``(user turns, primary language)``. ``smoke`` is the
30-turn end-to-end check the tests and CI run; ``quick`` and ``full`` are the
published profiles."""

# The key items of every session: three facts, a decision, two chains (A→B and
# A→B→C), a chat preference, a CLI preference, the task set (two questions) and a
# tool result — eleven questions.
_SLOTS = ("fact", "fact", "fact", "decision", "chain", "chain", "pref_chat")
MIN_TURNS = 24
_LABELLED = re.compile(r"^[^\s:：]{1,12}[:：]")


@dataclass(frozen=True, slots=True)
class ToolStep:
    """The fake model's call of one of the agent's tools, and the tool's output."""

    call_id: str
    name: str
    arguments: str
    result: str


@dataclass(frozen=True, slots=True)
class Turn:
    """One user turn: ``text`` (the user message), ``reply`` (the final assistant text),
    ``tool`` (a call answered before the reply, or ``None``), ``asks`` (the key item
    id when this turn is a question) and ``lang`` (of the reply)."""

    index: int
    lang: str
    text: str
    reply: str
    tool: ToolStep | None = None
    asks: str | None = None


@dataclass(frozen=True, slots=True)
class KeyItem:
    """One answer-key entry.

    ``current``: strings that must all appear on one line for the current value to
    count as present. ``superseded``: the same for each older value, oldest first.
    ``stated``: turn indexes where the value (then its corrections) was said (empty
    for a preference set out of band). ``store``: where the engine should keep it —
    ``item`` (memory_items), ``agent_memory``, ``task`` (task_state) or
    ``tool_message`` (the stored tool result).
    """

    id: str
    category: str
    lang: str
    current: tuple[str, ...]
    superseded: tuple[tuple[str, ...], ...]
    stated: tuple[int, ...]
    question: str
    question_turn: int
    store: str


@dataclass(frozen=True, slots=True)
class TaskExpectation:
    """A task-state line the thread must end with: ``label`` (goal | todo | blocked),
    ``needle`` (a phrase of its text) and ``status`` (open | done | superseded)."""

    label: str
    needle: str
    status: str


@dataclass(frozen=True, slots=True)
class Session:
    """A generated session (see module docstring); ``fingerprint()`` hashes all of it."""

    id: str
    seed: int
    n_turns: int
    lang: str
    system: str
    turns: tuple[Turn, ...]
    key: tuple[KeyItem, ...]
    tasks: tuple[TaskExpectation, ...]
    cli_prefs: tuple[CliPref, ...] = field(default=())

    def fingerprint(self) -> str:
        """sha256 of the session's JSON form (turns, key, tasks, preferences)."""
        return hashlib.sha256(orjson.dumps(asdict(self))).hexdigest()

    def key_item(self, item_id: str) -> KeyItem:
        """The key item ``item_id`` (``KeyError`` when absent)."""
        for k in self.key:
            if k.id == item_id:
                return k
        raise KeyError(item_id)


def _zone(rng: random.Random, lo: float, hi: float, body: int, busy: set[int]) -> int:
    """A random turn in ``[lo·body, hi·body)`` (at least one turn wide), not in ``busy``."""
    a = min(body - 1, int(lo * body))
    b = max(a + 1, min(body, int(hi * body)))
    choices = [t for t in range(a, b) if t not in busy] or [
        t for t in range(body) if t not in busy]
    return rng.choice(choices)


def _languages(rng: random.Random, primary: str, n: int) -> list[str]:
    """Languages of ``n`` items: about half ``primary``, every language at least once."""
    others = [x for x in LANGS if x != primary]
    out = [primary if rng.random() < 0.5 else rng.choice(others) for _ in range(n)]
    for i, lang in enumerate(LANGS):
        if lang not in out:
            out[i] = lang
    rng.shuffle(out)
    return out


def _pick_topic(rng: random.Random, kind: str, lang: str, concepts: set[str],
                used: set[int]) -> Topic:
    """A topic of ``kind`` in ``lang`` (else English) whose concept is not used yet."""
    for pool_lang in (lang, "en"):
        pool = [t for t in POOLS.get((kind, pool_lang), ())
                if id(t) not in used and (not t.concept or t.concept not in concepts)]
        if pool:
            topic = rng.choice(pool)
            used.add(id(topic))
            if topic.concept:
                concepts.add(topic.concept)
            return topic
    raise ValueError(f"no topic left for {kind}/{lang}")


def generate_session(seed: int, sid: str, n_turns: int, lang: str) -> Session:
    """Generate one session (see module docstring). Deterministic for its arguments.

    ``n_turns`` ≥ 24 user turns; ``lang`` ∈ en | zh | ja is the primary language.
    Raises ``ValueError`` otherwise.
    """
    if n_turns < MIN_TURNS or lang not in LANGS:
        raise ValueError(f"need n_turns >= {MIN_TURNS} and lang in {LANGS}")
    rng = random.Random(f"lcm-eval:{seed}:{sid}:{n_turns}:{lang}")
    n_questions = len(_SLOTS) + 4
    body = n_turns - n_questions
    statements: dict[int, list[tuple[str, str]]] = {}
    tool_turns: dict[int, tuple[str, ToolStep]] = {}
    values_used: set[str] = set()
    concepts: set[str] = set()
    topics_used: set[int] = set()
    key: list[tuple[str, str, tuple[str, ...], tuple[tuple[str, ...], ...], tuple[int, ...],
                    str, str]] = []

    def say(turn: int, text: str, text_lang: str) -> int:
        statements.setdefault(turn, []).append((text_lang, text))
        return turn

    def zone(lo: float, hi: float) -> int:
        return _zone(rng, lo, hi, body, set(tool_turns))

    # The tool call whose result holds a key value (early, a turn of its own).
    tk: ToolKey = rng.choice(topics_en.TOOL_KEYS)
    tool_value = tk.draw(rng)
    values_used.add(tool_value)
    t_tool = _zone(rng, 0.02, 0.2, body, {0})
    tool_turns[t_tool] = (tk.request, ToolStep(f"call_{sid}_{t_tool}", tk.tool, tk.arguments,
                                               tk.result.format(v=tool_value)))
    if body >= 40:
        for frac in (0.3, 0.55, 0.8):
            t = _zone(rng, frac, frac + 0.05, body, set(tool_turns) | {0})
            req, name, args, result = rng.choice(chatter.FILLER_TOOLS)
            tool_turns[t] = (req, ToolStep(f"call_{sid}_{t}", name, args, result))

    langs = _languages(rng, lang, len(_SLOTS) + 2)
    chain_lengths = [2, 3]
    rng.shuffle(chain_lengths)
    for i, (kind, item_lang) in enumerate(zip(_SLOTS, langs, strict=False)):
        topic = _pick_topic(rng, kind, item_lang, concepts, topics_used)
        n_values = chain_lengths.pop() if kind == "chain" else 1
        vals = topic.draw(rng, n_values, values_used) if topic.values else [""]
        values_used.update(vals)
        ctx = (topic.context,) if topic.context else ()
        needles = [(topic.needle.format(v=v), *ctx) for v in vals]
        stated = [say(zone(0.0, 0.2), topic.say.format(v=vals[0]), topic.lang)]
        if n_values >= 2:
            stated.append(say(zone(0.35, 0.5), topic.fixes[0].format(v=vals[1]), topic.lang))
        if n_values >= 3:
            stated.append(say(zone(0.7, 0.85), topic.fixes[1].format(v=vals[2]), topic.lang))
        for j, tmpl in enumerate(topic.noise[:2]):
            if topic.values and isinstance(topic.values[0], int):
                d = topic.draw(rng, 1, values_used)[0]
            else:
                spare = [str(x) for x in topic.values if str(x) not in vals] or ["another one"]
                d = rng.choice(spare)
            values_used.add(d)
            say(zone(0.0, 0.3) if j == 0 else zone(0.75, 1.0), tmpl.format(d=d), topic.lang)
        category = "chain" if kind == "chain" else kind
        key.append((f"{sid}-k{i + 1:02d}", category, needles[-1], tuple(needles[:-1]),
                    tuple(stated), rng.choice(topic.asks), topic.lang))

    pref: CliPref = rng.choice(CLI_POOLS[langs[-2]])
    key.append((f"{sid}-k{len(key) + 1:02d}", "pref_cli", (pref.needle,), (), (), pref.ask,
                pref.lang))

    ts: TaskSet = rng.choice(TASK_POOLS[langs[-1]])
    t_goal = say(zone(0.0, 0.2), ts.goal_old, ts.lang)
    for todo in ts.todos:
        say(zone(0.0, 0.2), todo, ts.lang)
    say(zone(0.4, 0.6), ts.progress, ts.lang)
    t_blocked = say(zone(0.4, 0.6), ts.blocked, ts.lang)
    t_goal_new = say(zone(0.6, 0.7), ts.goal_new, ts.lang)
    key.append((f"{sid}-k{len(key) + 1:02d}", "task_goal", (ts.goal_needle,), (),
                (t_goal, t_goal_new), ts.ask_goal, ts.lang))
    key.append((f"{sid}-k{len(key) + 1:02d}", "task_blocked", (ts.blocked_needle,), (),
                (t_blocked,), ts.ask_blocked, ts.lang))
    key.append((f"{sid}-k{len(key) + 1:02d}", "tool_result", (tk.needle.format(v=tool_value),),
                (), (t_tool,), tk.ask, "en"))
    tasks = (TaskExpectation("goal", ts.goal_needle, "open"),
             TaskExpectation("goal", ts.old_goal_needle, "superseded"),
             TaskExpectation("todo", ts.todo_needles[0], "done"),
             TaskExpectation("todo", ts.todo_needles[1], "open"),
             TaskExpectation("todo", ts.todo_needles[2], "open"),
             TaskExpectation("blocked", ts.blocked_needle, "open"))

    order = list(range(len(key)))
    rng.shuffle(order)
    ask_turn = {key[k][0]: body + pos for pos, k in enumerate(order)}
    stores = {"pref_cli": "agent_memory", "task_goal": "task", "task_blocked": "task",
              "tool_result": "tool_message"}
    items = tuple(KeyItem(kid, cat, k_lang, cur, old, stated, question, ask_turn[kid],
                          stores.get(cat, "item"))
                  for kid, cat, cur, old, stated, question, k_lang in key)

    turns: list[Turn] = []
    for t in range(n_turns):
        if t >= body:
            item = next(k for k in items if k.question_turn == t)
            turns.append(Turn(t, item.lang, item.question, chatter.QUESTION_REPLY[item.lang],
                              asks=item.id))
            continue
        if t in tool_turns:
            request, step = tool_turns[t]
            turns.append(Turn(t, "en", request, chatter.TOOL_FOLLOWUP["en"], tool=step))
            continue
        said = statements.get(t, [])
        turn_lang = said[0][0] if said else (lang if rng.random() < 0.6 else rng.choice(LANGS))
        parts = [text for _, text in said]
        if not parts or (len(parts) == 1 and rng.random() < 0.5):
            parts.append(chatter.filler(rng, turn_lang))
        text = parts[0]
        for part in parts[1:]:
            # Labelled task lines (Goal:, TODO:, 目标：…) go on a line of their own.
            text += ("\n" if _LABELLED.match(part) else " ") + part
        turns.append(Turn(t, turn_lang, text, chatter.reply(rng, turn_lang)))
    return Session(sid, seed, n_turns, lang, chatter.SYSTEM_PROMPT, tuple(turns), items, tasks,
                   (pref,))


def generate_profile(profile: str, seed: int) -> list[Session]:
    """The sessions of ``profile`` (``smoke`` | ``quick`` | ``full``) for ``seed``.

    Raises ``KeyError`` for an unknown profile."""
    return [generate_session(seed, f"s{i + 1}-{n}{lang}", n, lang)
            for i, (n, lang) in enumerate(PROFILES[profile])]
