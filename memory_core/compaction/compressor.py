"""Hierarchical compaction: the HistoryCompressor (DESIGN §6).

A thread's path (root → head) is split into *segments* — a message and, for an
assistant message with ``tool_calls``, every ``tool`` result that follows it — so
that a boundary never separates a call from its result. Protected head turns
(every leading system/developer message plus the first ``head_turns`` user turns)
and the last ``tail_turns`` user turns are never compacted. When the unprotected,
uncompacted middle holds at least ``min_tokens`` tokens and ``min_turns`` user
turns, it is grouped (groups of at most ``group_tokens``) into Level-0 summary
nodes. When 2×K root nodes of level L exist, the oldest K merge into one node of
level L+1 (``consolidation_k``). Summaries are an index, not a replacement: every
line cites message ids, and the originals stay in ``messages``.

A node applies to a request when every message it covers is in the request's
path; the *forest* shown to the upstream is the set of maximal applicable nodes,
so a fork inside a compacted range simply stops using the nodes it broke.

Functions that touch the store take the job's :class:`~memory_core.store.api.Tx`
(``store.write_tx`` for :func:`store_node`, ``store.read_tx`` for the reads) and
use its ``history`` and ``summaries`` groups. Summaries text comes from
:func:`extractive_summary` (deterministic, no model) or from an LLM summarizer
supplied by the proxy, validated by :func:`validate_summary` before it is stored.
"""

from __future__ import annotations

import bisect
import functools
import re
import threading
import time
from collections import OrderedDict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, TypeVar

import orjson

from memory_core.config import CompactionConfig
from memory_core.extraction.prepare import user_words
from memory_core.store.api import Tx
from memory_core.tokens import count_tokens

__all__ = ["CompactionConfig", "Group", "PathMessage", "SummaryNode", "may_be_due", "plan"]


@dataclass(frozen=True, slots=True)
class PathMessage:
    """One stored message on a path: id, OpenAI role, text, token count, tool links."""

    id: int
    role: str
    text: str
    tokens: int
    has_tool_calls: bool
    created_at: float


class MessageOutline(NamedTuple):
    """What :func:`plan` reads of a message (a :class:`PathMessage` has the same
    fields and more): id, OpenAI role (``""`` when unknown), stored token count."""

    id: int
    role: str
    tokens: int


_Planned = TypeVar("_Planned", PathMessage, MessageOutline)
"""A path message as planning reads it (id, role, tokens): full or outline."""


@dataclass(slots=True)
class SummaryNode:
    """A row of ``summary_nodes``; ``message_ids`` are the covered ids in path order."""

    id: int
    level: int
    message_ids: list[int]
    text: str
    tokens: int
    source_tokens: int
    model: str
    parent_id: int | None = None
    children: list[int] = field(default_factory=list)
    _span: tuple[int, int] | None = field(default=None, init=False, repr=False,
                                          compare=False)

    @property
    def span(self) -> tuple[int, int]:
        """The smallest and the largest covered id (computed once: a node never
        changes)."""
        if self._span is None:
            self._span = (min(self.message_ids), max(self.message_ids))
        return self._span

    @property
    def first(self) -> int:
        return self.message_ids[0]

    @property
    def last(self) -> int:
        return self.message_ids[-1]


@dataclass(frozen=True, slots=True)
class Group:
    """Work planned by :func:`plan`: summarise ``message_ids`` into a node of ``level``
    (``children`` are the nodes merged, empty for Level-0)."""

    level: int
    message_ids: tuple[int, ...]
    children: tuple[int, ...] = ()


# -- reading ----------------------------------------------------------------------
def load_path(tx: Tx, ids: Sequence[int]) -> list[PathMessage]:
    """Load the messages ``ids`` (in the given order) as :class:`PathMessage`."""
    if not ids:
        return []
    ids = list(ids)
    rows = {r["id"]: r for r in tx.history.path_messages(ids)}
    out = []
    for i in ids:
        r = rows.get(i)
        if r is None:
            continue
        out.append(PathMessage(int(r["id"]), r["msg_role"] or "", r["text"], int(r["tokens"]),
                               b'"tool_calls":[{' in r["raw_json"].encode()
                               if isinstance(r["raw_json"], str) else False,
                               float(r["created_at"])))
    return out


def outline_path(ids: Sequence[int], outlines: Mapping[int, MessageOutline]
                 ) -> list[MessageOutline]:
    """The messages ``ids`` (in order) as :func:`plan` reads them, from ``outlines``
    (:meth:`memory_core.capture.message_facts.MessageFacts.outlines`). Ids missing from it are
    skipped, as :func:`load_path` skips missing rows: ``plan`` gives the same groups
    on both (it reads ids, roles and token counts only)."""
    return [outlines[i] for i in ids if i in outlines]


def summary_node(row: Any) -> SummaryNode:
    """A ``summary_nodes`` row (by column name: id, level, message_ids as JSON text,
    text, tokens, source_tokens, model, parent_id) as a :class:`SummaryNode`."""
    return SummaryNode(int(row["id"]), int(row["level"]), orjson.loads(row["message_ids"]),
                       row["text"], int(row["tokens"]), int(row["source_tokens"]),
                       row["model"], row["parent_id"])


def load_nodes(tx: Tx, tenant: str, role: str, path_ids: Sequence[int]
               ) -> list[SummaryNode]:
    """Every active node of (tenant, role) whose covered ids all lie on ``path_ids``,
    ordered by level, first id, id: a fresh read. The engine reads the same through
    its cache (:class:`memory_core.compaction.node_cache.SummaryNodes`), tested against this."""
    if not path_ids:
        return []
    on_path = set(path_ids)
    lo, hi = min(path_ids), max(path_ids)
    nodes = []
    for r in tx.summaries.nodes_within(tenant, role, lo, hi):
        node = summary_node(r)
        if node.message_ids and on_path.issuperset(node.message_ids):
            nodes.append(node)
    return nodes


def forest(nodes: Sequence[SummaryNode]) -> list[SummaryNode]:
    """The maximal non-overlapping nodes (highest level first), in path order.

    Two nodes whose id ranges (smallest to largest) do not meet share no id, so
    while the chosen nodes' ranges stay apart (a path's nodes cover runs of it) a
    node is tested against the neighbouring ranges, found by bisection, and no set
    of ids is built: a range that meets none is chosen, one that meets a chosen
    node holding its first id (a child under its parent) is not. Anything else
    (ranges that meet without a shared first id) compares the ids themselves from
    there on."""
    chosen: list[SummaryNode] = []
    lows: list[int] = []  # the chosen ranges, apart, in order, and their nodes
    highs: list[int] = []
    owners: list[SummaryNode] = []
    covered: set[int] | None = None
    for node in sorted(nodes, key=lambda n: (-n.level, n.first)):
        if covered is None:
            low, high = node.span
            at = bisect.bisect_left(lows, low)
            meets = [k for k in (at - 1, at) if 0 <= k < len(lows)
                     and lows[k] <= high and highs[k] >= low]
            if not meets:
                lows.insert(at, low)
                highs.insert(at, high)
                owners.insert(at, node)
                chosen.append(node)
                continue
            if any(_holds(owners[k].message_ids, node.first) for k in meets):
                continue  # shares an id with a chosen node
            covered = set().union(*(n.message_ids for n in chosen))
        ids = set(node.message_ids)
        if ids & covered:
            continue
        chosen.append(node)
        covered |= ids
    return sorted(chosen, key=lambda n: n.first)


def _holds(ids: Sequence[int], value: int) -> bool:
    """``value in ids`` for ascending ``ids`` by bisection; False may also mean
    ``ids`` do not ascend (the caller then compares sets)."""
    at = bisect.bisect_left(ids, value)
    return at < len(ids) and ids[at] == value


# -- planning -----------------------------------------------------------------------
INSTRUCTION_ROLES = ("system", "developer")
"""Roles whose messages no summary covers (DESIGN §6: instructions survive)."""


def segments(path: Sequence[_Planned]) -> list[list[_Planned]]:
    """Split a path so that no segment starts with a ``tool`` message (a call and
    its results stay together)."""
    out: list[list[_Planned]] = []
    for m in path:
        if out and m.role == "tool":
            out[-1].append(m)
        else:
            out.append([m])
    return out


def protected_bounds(path: Sequence[_Planned], cfg: CompactionConfig) -> tuple[int, int]:
    """Return ``(start, end)``: path indexes of the compactable middle ``[start, end)``.

    Head: leading system/developer messages, then ``head_turns`` user turns (a turn
    runs to the next user message). Tail: the last ``tail_turns`` user turns, or all
    of them when there are fewer (the newest user message is never compactable).
    With ``cfg.tail_rounds`` and a tail of the newest turn alone, the middle reaches
    into that turn: all but its last ``tail_rounds`` call/result rounds.
    """
    n = len(path)
    i = 0
    while i < n and path[i].role in ("system", "developer"):
        i += 1
    users = [k for k in range(i, n) if path[k].role == "user"]
    start = users[cfg.head_turns] if len(users) > cfg.head_turns else n
    end = users[-min(cfg.tail_turns, len(users))] if cfg.tail_turns and users else n
    if cfg.tail_turns == 0:
        end = n
    if cfg.tail_rounds > 0 and users and end == users[-1]:
        # One user turn that is a long tool loop (an agent at work): all but its
        # last ``tail_rounds`` call/result rounds may be compacted; its opening user
        # message stays out of every node (:func:`plan`), verbatim in its place.
        rounds = segments(path[users[-1] + 1:])
        if len(rounds) > cfg.tail_rounds:
            end = users[-1] + 1 + sum(len(r) for r in rounds[:-cfg.tail_rounds])
    # Never end inside a call/result segment.
    while end < n and end > 0 and path[end].role == "tool":
        end -= 1
    return start, max(start, end)


def plan(path: Sequence[_Planned], nodes: Sequence[SummaryNode], cfg: CompactionConfig
         ) -> list[Group]:
    """Return the compaction work due on ``path`` given its existing ``nodes``.

    ``path``: :class:`PathMessage` or :class:`MessageOutline` values (only ids,
    roles and token counts are read: both give the same groups).

    Level-0 groups first (for each uncovered run of the middle that reaches both
    thresholds: the run after the last covered message, and a gap before it, such
    as the head turn once ``head_turns`` is lowered), then the consolidations the 2×K
    rule asks for after them.
    Deterministic: the same path and nodes always give the same groups.
    """
    if not cfg.enabled:
        return []
    start, end = protected_bounds(path, cfg)
    covered = {i for n in nodes for i in n.message_ids}
    # The newest turn's opening message, when the middle reaches into its rounds.
    opening = next((m.id for m in reversed(path[start:end]) if m.role == "user"), None) \
        if cfg.tail_rounds > 0 and end < len(path) and all(
            m.role != "user" for m in path[end:]) else None
    groups: list[Group] = []
    # Every uncovered run of the middle: the one after the last covered message,
    # and any gap before it (the head turn once fewer head turns are protected,
    # as the proxy's last inline stage asks: issue 23).
    runs: list[list[_Planned]] = [[]]
    for m in path[start:end]:
        if m.id in covered:
            if runs[-1]:
                runs.append([])
        else:
            runs[-1].append(m)
    for middle in runs:
        tokens = sum(m.tokens for m in middle)
        turns = sum(1 for m in middle if m.role == "user")
        if opening is not None and any(m.role != "user" for m in middle):
            turns = max(turns, 1)  # rounds of the newest turn: a turn's worth
        if not middle or tokens < cfg.min_tokens or turns < cfg.min_turns:
            continue
        # The newest turn's opening message stays verbatim, and no node spans it: the
        # turns before it and its own rounds are summarised apart.
        at = next((k for k, m in enumerate(middle) if m.id == opening), None)
        for part in (middle,) if at is None else (middle[:at], middle[at + 1:]):
            current: list[_Planned] = []
            current_tokens = 0
            # Instructions are never summarised away: a system or developer message
            # stays out of every node, so it is forwarded verbatim, in its place.
            for seg in segments([m for m in part if m.role not in INSTRUCTION_ROLES]):
                seg_tokens = sum(m.tokens for m in seg)
                if current and current_tokens + seg_tokens > cfg.group_tokens:
                    groups.append(Group(0, tuple(m.id for m in current)))
                    current, current_tokens = [], 0
                current.extend(seg)
                current_tokens += seg_tokens
            if current:
                groups.append(Group(0, tuple(m.id for m in current)))
    groups.extend(consolidations(nodes, groups, cfg))
    return groups


def may_be_due(path_length: int, cfg: CompactionConfig) -> bool:
    """Whether :func:`plan` can find work on a path of ``path_length`` messages.

    False only when it finds none whatever the path's roles, token counts and nodes:
    a Level-0 group needs ``min_turns`` user messages outside the ``head_turns``
    and ``tail_turns`` protected ones, and a consolidation 2×K disjoint roots of at
    least one path message each. Arithmetic on integers only, so a caller can skip
    reading the path (and scheduling a job to read it) for a short thread, such as
    a new conversation.
    """
    if not cfg.enabled or path_length <= 0:
        return False
    if cfg.tail_rounds > 0:  # the newest turn's rounds count as a turn: no bound here
        return True
    turns = max(cfg.head_turns, 0) + max(cfg.tail_turns, 0) + max(cfg.min_turns, 1)
    return path_length >= turns or path_length >= 2 * max(2, cfg.consolidation_k)


def consolidations(nodes: Sequence[SummaryNode], new_l0: Sequence[Group],
                   cfg: CompactionConfig) -> list[Group]:
    """Apply the 2×K rule to the roots (existing roots plus planned Level-0 groups).

    Planned groups get negative placeholder ids (-1, -2, …) in ``children``; the
    caller maps them to the ids they receive when stored.
    """
    k = max(2, cfg.consolidation_k)
    roots: list[tuple[int, int, tuple[int, ...]]] = [
        (n.level, n.id, tuple(n.message_ids)) for n in forest(nodes)
    ]
    roots += [(0, -(i + 1), g.message_ids) for i, g in enumerate(new_l0)]
    out: list[Group] = []
    placeholder = -(len(new_l0) + 1)
    level = 0
    while True:
        in_order = sorted(roots, key=lambda r: r[2][0])
        at_level = [r for r in in_order if r[0] == level]
        # The oldest K that are neighbours: a node never spans another root (a
        # gap filled before higher nodes stays apart from the Level-0 nodes after).
        merged = next((in_order[i:i + k] for i in range(len(in_order) - k + 1)
                       if all(r[0] == level for r in in_order[i:i + k])), None)
        if len(at_level) >= 2 * k and merged is not None:
            ids = tuple(i for r in merged for i in r[2])
            out.append(Group(level + 1, ids, tuple(r[1] for r in merged)))
            roots = [r for r in roots if r not in merged] + [(level + 1, placeholder, ids)]
            placeholder -= 1
            continue
        if not any(r[0] > level for r in roots):
            break
        level += 1
    return out


# -- summaries ------------------------------------------------------------------------
_PATH = re.compile(r"(?<![\w/.])(?:\.{0,2}/)?(?:[\w.-]+/)+[\w.-]+(?:\.\w{1,8})?|\b[\w-]+\.(?:py|"
                   r"js|ts|tsx|go|rs|java|c|h|cpp|md|json|toml|yaml|yml|sql|sh|txt|csv|html|css)\b")
_FAIL = re.compile(r"(?i)\b(error|failed|fails|failing|exception|traceback|crash(?:ed)?|"
                   r"doesn't work|does not work|didn't work|broke|broken|timed? ?out|denied|"
                   r"not found|regression)\b|失败|错误|报错|エラー|失敗")
_IDENT = re.compile(r"\b[a-z]+_[a-z0-9_]+[ \t]*[=:][ \t]*[\w.\-]+|"
                    r"\b(?:[A-Z][a-z0-9]+){2,}\b|\b[a-z]+_[a-z0-9_]+\b|\bv?\d+\.\d+(?:\.\d+)+\b|"
                    r"\b[0-9a-f]{7,40}\b|\b\d+(?:\.\d+)?\s?(?:ms|s|min|h|MB|GB|KB|%|px)\b")
"""Identifiers worth keeping verbatim; a ``snake_case = value`` (or ``: value``) setting
is kept with its value, since the value is what a later question asks for."""
_TOOL_HEAD_CHARS = 200
"""Characters of a tool result kept in an extractive summary's timeline."""
_SENT = re.compile(r"(?<=[.!?。！？])\s+|\n+")


def _first_sentence(text: str, limit: int) -> str:
    flat = " ".join(text.split())
    sent = _SENT.split(text.strip(), maxsplit=1)[0] if text.strip() else ""
    sent = " ".join(sent.split()) or flat
    return sent if len(sent) <= limit else sent[: limit - 1] + "…"


def extractive_summary(tx: Tx, path: Sequence[PathMessage],
                       cap_tokens: int) -> str:
    """Deterministic Level-0 summary of ``path`` (no model), at most ``cap_tokens``.

    Sections, each line citing ``[msg N]``: Decisions and constraints (from the
    extracted memory items), Identifiers and numbers, Pitfalls and failed attempts,
    Files and directories, Open threads (questions and open TODOs), Tool results (the
    first 200 characters of each, flattened), Timeline (the first sentence of each
    user message, without a client's tagged blocks, and of each assistant reply).
    Sections are trimmed from the end of the timeline first, then from the end of the
    largest section, so facts outlive narration. Tool results have their own section
    rather than timeline lines: what a tool returned (a failing test's name, a config
    value, a commit hash) is evidence the conversation was about, often asked for much
    later, and the timeline is the first thing a tight cap drops (the long-session
    eval's tool-result misses).
    """
    ids = [m.id for m in path]
    by_id = {m.id: m for m in path}
    items, todos = tx.history.message_evidence(ids)
    decisions = [f"- [msg {r['source_message_id']}] {r['kind']}: {_first_sentence(r['text'], 200)}"
                 + (" (later superseded)" if r["status"] == "superseded" else "")
                 for r in items if r["kind"] in ("decision", "constraint", "preference")]
    facts = [f"- [msg {r['source_message_id']}] {_first_sentence(r['text'], 200)}"
             + (" (later superseded)" if r["status"] == "superseded" else "")
             for r in items if r["kind"] == "fact"]
    idents: dict[str, int] = {}
    files: dict[str, int] = {}
    pitfalls: list[str] = []
    # A user message read for what its author wrote: a client's tagged blocks (a
    # <system-reminder> with CLAUDE.md ahead of the request) would take the timeline's
    # line and fill the identifiers with the project's instructions.
    said = {m.id: user_words(m.text) for m in path if m.role == "user"}
    for m in path:
        text = said.get(m.id, m.text)
        for f in _PATH.findall(text):
            if len(f) > 3 and "//" not in f:
                files.setdefault(f, m.id)
        for ident in _IDENT.findall(text):
            idents.setdefault(ident, m.id)
        if m.role in ("assistant", "tool", "user") and _FAIL.search(text):
            sentence = next((s for s in _SENT.split(text) if _FAIL.search(s)), text)
            pitfalls.append(f"- [msg {m.id}] {m.role}: {_first_sentence(sentence, 180)}")
    open_threads = [f"- [msg {r['source_message_id']}] question: {_first_sentence(r['text'], 160)}"
                    for r in items if r["kind"] == "question"]
    open_threads += [
        f"- [msg {r['source_message_id']}] {r['label']}: {_first_sentence(r['text'], 160)}"
        for r in todos if r["status"] == "open" and r["label"] in ("todo", "blocked")
    ]
    timeline = []
    tool_results = []
    for m in path:
        text = said.get(m.id, m.text)
        if m.role in ("user", "assistant") and text.strip():
            timeline.append(f"- [msg {m.id}] {m.role}: {_first_sentence(text, 160)}")
        elif m.role == "tool":
            # The head of what the tool returned, flattened: short outputs (a config
            # read, a failing test's name, a commit hash) are often the whole answer.
            head = " ".join(m.text.split())
            head = head if len(head) <= _TOOL_HEAD_CHARS else head[: _TOOL_HEAD_CHARS - 1] + "…"
            tool_results.append(f"- [msg {m.id}] ({m.tokens} tokens): {head}")
    first, last = ids[0], ids[-1]
    span = (f"Messages {first}–{last} ({len(ids)} messages, "
            f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime(by_id[first].created_at))} to "
            f"{time.strftime('%Y-%m-%d %H:%M', time.gmtime(by_id[last].created_at))} UTC)")
    sections = [
        ("Decisions and constraints", decisions),
        ("Facts", facts),
        ("Identifiers and numbers",
         [f"- [msg {mid}] {ident}" for ident, mid in list(idents.items())[:30]]),
        ("Pitfalls and failed attempts", pitfalls[:12]),
        ("Files and directories", [f"- [msg {mid}] {f}" for f, mid in list(files.items())[:30]]),
        ("Open threads", open_threads[:12]),
        ("Tool results", tool_results),
        ("Timeline", timeline),
    ]
    return _fit_sections(span, sections, cap_tokens)


_CITE_PREFIX = re.compile(r"^- \[msg (\d+)\] ")
_DIGITS = re.compile(r"\d+")
_FOLDED = re.compile(r" \(\+(\d+) similar, last (\[msg \d+\]|): (.*)\)$")


def condense_repeats(lines: Sequence[str]) -> list[str]:
    """Fold lines that differ only in their numbers ("Step 41: ran the tests, 3
    failed", "Step 42: …") into the first of them, which keeps its text and gains
    ``(+N similar, last [msg M]: <the last one's text>)``: the latest value stays
    visible and every cited message stays findable by its neighbours. Order is that
    of each run's first line; lines that repeat nothing are unchanged."""
    groups: dict[str, list[str]] = {}
    order: list[str] = []
    for line in lines:
        shape = _DIGITS.sub("#", _FOLDED.sub("", _CITE_PREFIX.sub("", line)))
        if shape not in groups:
            groups[shape] = []
            order.append(shape)
        groups[shape].append(line)
    out = []
    for shape in order:
        run = groups[shape]
        if len(run) < 3 and not any(_FOLDED.search(line) for line in run[1:]):
            out.extend(run)
            continue
        # A line folded before (a child's summary) counts the lines it stands for.
        n = sum(1 + int(m.group(1)) if (m := _FOLDED.search(line)) else 1 for line in run)
        first, last = _FOLDED.sub("", run[0]), run[-1]
        m = _FOLDED.search(last)
        if m:
            where, text = m.group(2), m.group(3)
        else:
            cite = _CITE_PREFIX.match(last)
            where = f"[msg {cite.group(1)}]" if cite else ""
            text = _CITE_PREFIX.sub("", last)
        out.append(f"{first} (+{n - 1} similar, last {where}: {text})")
    return out


def _fit_sections(span: str, sections: list[tuple[str, list[str]]], cap: int) -> str:
    """Render ``span`` and the non-empty sections within ``cap`` tokens.

    Near-repeats are folded first (:func:`condense_repeats`). Each line is counted
    once; lines are dropped from the end of the largest section (the timeline
    first) with a "(… N more lines)" marker until the sum fits, then the exact
    count of the whole text is checked (linear, not a re-count per dropped line).
    """
    secs = [(name, condense_repeats(lines)) for name, lines in sections]
    cost = {line: count_tokens(line) + 1 for _, lines in secs for line in lines}

    def render() -> str:
        parts = [span]
        for name, lines in secs:
            if lines:
                parts.append(f"{name}:")
                parts.extend(lines)
        return "\n".join(parts)

    def estimate() -> int:
        total = count_tokens(span) + 1
        for _name, lines in secs:
            if lines:
                total += 3 + sum(cost.get(ln) or count_tokens(ln) + 1 for ln in lines)
        return total

    while True:
        while estimate() > cap:
            order = sorted(range(len(secs)),
                           key=lambda i: (i != len(secs) - 1, -len(secs[i][1])))
            victim = next((i for i in order if len(secs[i][1]) > 1), None)
            if victim is None:
                break
            name, lines = secs[victim]
            omitted = 0
            if lines and lines[-1].startswith("- (… "):
                omitted = int(lines[-1].split()[2])
                lines = lines[:-1]
            drop = max(1, len(lines) // 8)
            kept = lines[: len(lines) - drop]
            secs[victim] = (name, kept + [f"- (… {omitted + drop} more lines; see the cited "
                                          "messages)"])
        text = render()
        if count_tokens(text) <= cap:
            return text
        if all(len(lines) <= 1 for _, lines in secs):
            return text[: cap * 2] + "…"
        cap -= max(1, cap // 20)  # the estimate was low: aim lower and re-trim


def merge_summaries(children: Sequence[SummaryNode], cap_tokens: int) -> str:
    """Deterministic level L+1 text from its children's texts, at most ``cap_tokens``.

    Keeps each child's span line and its non-timeline sections, then the timelines,
    trimmed like Level-0 (timeline lines go first).
    """
    first, last = children[0].first, children[-1].last
    n = sum(len(c.message_ids) for c in children)
    span = f"Messages {first}–{last} ({n} messages, {len(children)} summaries merged)"
    merged: dict[str, list[str]] = {}
    order: list[str] = []
    for child in children:
        name = "Summary spans"
        for line in child.text.splitlines():
            if line.startswith("Messages ") and name == "Summary spans":
                merged.setdefault(name, []).append(f"- {line}")
                if name not in order:
                    order.append(name)
                continue
            if line.endswith(":") and not line.startswith("- "):
                name = line[:-1]
                if name not in order:
                    order.append(name)
                continue
            if line.startswith("- (… "):
                continue
            merged.setdefault(name, [])
            if line not in merged[name]:
                merged[name].append(line)
    if "Timeline" in order:
        order.remove("Timeline")
        order.append("Timeline")
    return _fit_sections(span, [(name, merged.get(name, [])) for name in order], cap_tokens)


_CITE = re.compile(r"\[msg (\d+)\]|\bmsg (\d+)\b|#(\d+)")


def validate_summary(text: str, message_ids: Sequence[int], cap_tokens: int) -> str | None:
    """Return why an LLM summary is unusable, or ``None`` when it is fine.

    Usable means: non-empty, at most ``cap_tokens`` tokens, cites at least one
    message id and only ids inside the covered range.
    """
    if not text or not text.strip():
        return "empty"
    if count_tokens(text) > cap_tokens:
        return f"over its cap of {cap_tokens} tokens"
    cited = {int(a or b or c) for a, b, c in _CITE.findall(text)}
    if not cited:
        return "cites no message ids"
    allowed = set(message_ids)
    outside = sorted(cited - allowed)
    if outside:
        return f"cites ids outside its range: {outside[:5]}"
    return None


# -- writing ----------------------------------------------------------------------------
def store_node(tx: Tx, *, tenant: str, role: str, thread_id: int, level: int,
               message_ids: Sequence[int], text: str, model: str, source_tokens: int,
               children: Sequence[int] = ()) -> int:
    """Insert one summary node and link ``children`` to it (writer job).

    Idempotent for a covered range: when an active node of the same level already
    covers exactly ``message_ids`` (two compactions raced), its id is returned and
    nothing is written — never two nodes for the same range.
    """
    return tx.summaries.save_node(
        tenant=tenant, role=role, thread_id=thread_id, level=level, message_ids=message_ids,
        ids_json=orjson.dumps(list(message_ids)).decode(), text=text,
        tokens=count_tokens(text), source_tokens=source_tokens, model=model,
        created_at=time.time(), children=children)


def forest_status(tx: Tx, *, tenant: str | None = None,
                  role: str | None = None, thread_id: int | None = None) -> dict[str, Any]:
    """Nodes per level with covered ranges and tokens before/after, for ``memory status``."""
    rows = tx.summaries.forest_rows(tenant=tenant, role=role, thread_id=thread_id)
    levels: dict[int, dict[str, Any]] = {}
    nodes = []
    for r in rows:
        lv = levels.setdefault(r["level"], {"level": r["level"], "nodes": 0, "tokens": 0,
                                            "source_tokens": 0})
        lv["nodes"] += 1
        lv["tokens"] += r["tokens"]
        lv["source_tokens"] += r["source_tokens"]
        nodes.append({"id": r["id"], "thread_id": r["thread_id"], "level": r["level"],
                      "message_ids": orjson.loads(r["message_ids"]),
                      "first_message_id": r["first_message_id"],
                      "last_message_id": r["last_message_id"], "tokens": r["tokens"],
                      "source_tokens": r["source_tokens"], "model": r["model"],
                      "parent_id": r["parent_id"]})
    return {"levels": [levels[k] for k in sorted(levels)], "nodes": nodes}


SCAFFOLD_HEADER = "[Conversation summary — lcm-proxy]"
ACKNOWLEDGEMENT = (
    "Understood. I have the summarized earlier history above and will look up exact "
    "details in the original messages when I need them."
)


_CITED = re.compile(r"\[msg (\d+)\]")
_DIGITS = re.compile(r"(?<![\d.])\d+(?:[.,]\d+)*")
"""A number as written, its separators included."""


def _numbers_in(line: str) -> set[str]:
    """Every number an old value's pattern (:meth:`Superseded.value_pattern`) may match
    on ``line``: each run of a written number that starts at its start or after a
    comma (a pattern's number follows no digit and no dot) and ends at its end or
    before a separator ("1.23.96" holds "1", "1.23" and "1.23.96"; "208,1.2" holds
    "1" and "1.2" too)."""
    out: set[str] = set()
    for m in _DIGITS.finditer(line):
        token = m.group()
        seps = [i for i, ch in enumerate(token) if ch in ".,"]
        starts = [0, *(i + 1 for i in seps if token[i] == ",")]
        ends = [*seps, len(token)]
        out.update(token[a:b] for a in starts for b in ends if b > a)
    return out


@dataclass(frozen=True)
class Superseded:
    """A memory item corrected since: ``source_id`` (the message it came from),
    ``text``, and the number as written with its unit (``value_text``/``unit``,
    ``None`` when it states no number)."""

    source_id: int
    text: str
    value_text: str | None = None
    unit: str | None = None

    def value_pattern(self) -> re.Pattern[str] | None:
        """The old number as written ("280 s", "280s"); ``None`` when too bare to
        tell apart (no number, or a one- or two-digit number without a unit)."""
        if not self.value_text:
            return None
        value = re.escape(self.value_text)
        if self.unit:
            return re.compile(rf"(?<![\d.]){value}\s?{re.escape(self.unit)}(?![\w])", re.I)
        if len(self.value_text) < 3:
            return None
        return re.compile(rf"(?<![\d.]){value}(?![\d])")


def mark_superseded(text: str, superseded: Sequence[Superseded]) -> str:
    """Annotate summary lines that quote a value corrected after they were written.

    A summary is written once, but a later correction can supersede a value it
    quotes — cited as ``[msg N]`` from the message it came from, or repeated as a
    number elsewhere (an assistant's echo, the identifiers list). Every such line
    not already saying "superseded" gets ``(later corrected: "<old item>" is
    superseded)``, so the old value never reads as current; other lines are
    unchanged.
    """
    if not superseded:
        return text
    return _mark_superseded(text, _superseded_key(superseded))


def _superseded_key(superseded: Sequence[Superseded]
                    ) -> tuple[tuple[int, str, str | None, str | None], ...]:
    return tuple((i.source_id, i.text, i.value_text, i.unit) for i in superseded)


_ItemKey = tuple[tuple[int, str, str | None, str | None], ...]


@functools.lru_cache(maxsize=256)
def _mark_superseded(text: str, key: _ItemKey) -> str:
    """:func:`mark_superseded` memoised on plain tuples (cheap to hash and compare):
    the scaffold is rebuilt on every request from the same node texts and the same
    superseded items, which change only on a compaction or a correction, and the
    per-line pattern scan was its largest cost (about 2 ms a request at 1000 turns,
    ``lcm-proxy eval``).

    Marked line by line, each line with the items it may quote (:func:`_line_refs`:
    cited, or of a number it holds, or whose value is not a plain number) and
    memoised on them (:func:`_mark_line`): a correction changes the items of a
    node's few lines that quote it, so a node marked again after one re-reads only
    those (its other lines are memo hits; issue 28)."""
    by_source, by_number, anywhere = _key_index(key)
    out = []
    for line in text.split("\n"):
        if "superseded" in line:
            out.append(line)
            continue
        cited, numbers = _line_refs(line)
        at = set(anywhere)
        for source_id in cited:
            at.update(by_source.get(source_id, ()))
        for number in numbers:
            at.update(by_number.get(number, ()))
        out.append(_mark_line(line, tuple(key[n] for n in sorted(at))) if at else line)
    return "\n".join(out)


@functools.lru_cache(maxsize=8192)
def _line_refs(line: str) -> tuple[tuple[int, ...], frozenset[str]]:
    """The message ids ``line`` cites, in order (repeats kept), and the numbers it
    holds (:func:`_numbers_in`)."""
    return tuple(int(m.group(1)) for m in _CITED.finditer(line)), frozenset(_numbers_in(line))


@functools.lru_cache(maxsize=8192)
def _mark_line(line: str, key: _ItemKey) -> str:
    """One line (not saying "superseded") marked with the items of ``key`` it quotes:
    those cited (in citation order, each source's items in ``key``'s order), then
    those whose value pattern matches it, in ``key``'s order. ``key`` holds the items
    the line may quote (:func:`_mark_superseded`), in the scaffold's order."""
    superseded = [Superseded(*k) for k in key]
    by_source: dict[int, list[Superseded]] = {}
    for item in superseded:
        by_source.setdefault(item.source_id, []).append(item)
    olds = [i for source_id in _line_refs(line)[0] for i in by_source.get(source_id, ())]
    olds += [item for item in superseded
             if (pat := item.value_pattern()) is not None and pat.search(line)]
    if not olds:
        return line
    quoted = "; ".join(dict.fromkeys(f'"{_first_sentence(i.text, 120)}"' for i in olds))
    return f"{line} (later corrected: {quoted} is superseded)"


_KeyIndex = tuple[dict[int, list[int]], dict[str, list[int]], list[int]]


def _key_index(key: tuple[tuple[int, str, str | None, str | None], ...]) -> _KeyIndex:
    """Positions in ``key`` by source message id, by value as written (a plain
    number), and those whose value is not a plain number (looked for on every line)."""
    by_source: dict[int, list[int]] = {}
    by_number: dict[str, list[int]] = {}
    anywhere: list[int] = []
    for n, (source_id, _text, value_text, _unit) in enumerate(key):
        by_source.setdefault(source_id, []).append(n)
        if value_text is not None:
            if _DIGITS.fullmatch(value_text) is None:
                anywhere.append(n)
            else:
                by_number.setdefault(value_text, []).append(n)
    return by_source, by_number, anywhere


def _marked(text: str, key: tuple[tuple[int, str, str | None, str | None], ...],
            index: _KeyIndex | None = None) -> str:
    """``text`` marked (:func:`_mark_superseded`) by the items of ``key`` it may quote:
    cited, or of a number it holds (:func:`_refs`). A node's text is marked again
    only when an item it quotes changes, not on every correction of anything else
    (the superseded items are the newest 200: each correction changes them).
    ``index``: :func:`_key_index` of ``key`` (built here when not given)."""
    if not key:
        return text
    at = _may_quote(text, _key_index(key) if index is None else index)
    mine = tuple(key[n] for n in at)
    return _mark_superseded(text, mine) if mine else text


def _may_quote(text: str, index: _KeyIndex) -> list[int]:
    """Positions in the key, in order, of the items ``text`` may quote: cited by one of
    its source ids, holding one of its numbers, or of a value that is not a plain
    number. Only the ids and numbers some item has are looked at: a node of a
    conversation full of numbers holds dozens, few of them superseded values (a set
    intersection in C, not a look-up per number on each render)."""
    by_source, by_number, anywhere = index
    cited, numbers = _refs(text)
    at = set(anywhere)
    for source_id in by_source.keys() & cited:
        at.update(by_source[source_id])
    for number in by_number.keys() & numbers:
        at.update(by_number[number])
    return sorted(at)


def _node_marks(text: str, key: _ItemKey, index: _KeyIndex) -> _ItemKey:
    """The items of ``key`` that mark ``text`` (:func:`_marked`), in ``key``'s order:
    those the node may quote (cited, of a number it holds, or of a value that is not a
    plain number) kept when a line of it does quote them (:func:`_quotes`).

    ``text`` marked by these alone is ``text`` marked by all of ``key``: an item that
    marks no line adds nothing to any line's quote, and the order is ``key``'s. So a
    scaffold keyed on each node's marks is rendered again only when a correction,
    edit or purge changes what some summary quotes, not on every correction
    (:func:`scaffold_text`; the superseded items are the newest 200)."""
    if not key:
        return ()
    return tuple(key[n] for n in _may_quote(text, index) if _quotes(text, key[n]))


@functools.lru_cache(maxsize=16384)
def _quotes(text: str, item: tuple[int, str, str | None, str | None]) -> bool:
    """Whether ``item`` marks a line of ``text`` (:func:`_mark_superseded`): a line
    not saying "superseded" that cites its message, or that holds its value (a plain
    number among the line's numbers, any other value anywhere) where its value
    pattern matches. Memoised: an item is asked about each node once, not on every
    request it stays among the newest superseded."""
    source_id, _text, value_text, _unit = item
    pattern = Superseded(*item).value_pattern()
    plain = value_text is not None and _DIGITS.fullmatch(value_text) is not None
    for line in text.split("\n"):
        if "superseded" in line:
            continue
        cited, numbers = _line_refs(line)
        if source_id in cited:
            return True
        if (pattern is not None and (not plain or value_text in numbers)
                and pattern.search(line)):
            return True
    return False


@functools.lru_cache(maxsize=1024)
def _refs(text: str) -> tuple[frozenset[int], frozenset[str]]:
    """The message ids ``text`` cites and the numbers it holds (:func:`_numbers_in`)."""
    return (frozenset(int(m.group(1)) for m in _CITED.finditer(text)),
            frozenset(_numbers_in(text)))


def scaffold_text(roots: Sequence[SummaryNode], *, tools_enabled: bool,
                  superseded: Sequence[Superseded] = (), budget_tokens: int | None = None,
                  short_tools: bool = False) -> str:
    """The scaffold header that replaces the compacted ranges in the upstream view.

    Lists the forest (level, covered id range, message count, tokens before → after)
    oldest first, each with its text. ``superseded``: items corrected since, marked
    where the summaries quote them (:func:`mark_superseded`). ``budget_tokens``: the
    most the scaffold may count; when the full texts do not fit, nodes render as
    one-line headers with their ranges (oldest and highest first), then runs of
    headers as one line, until it fits (or only the intro is left). Deterministic,
    so the bytes stay identical until the forest, the superseded items its nodes
    quote or the budget change. ``short_tools``: the tools offered are the short set
    (:data:`memory_core.tools.memory_tools.SHORT_DEFINITIONS`), the only ones named.

    Memoised (:data:`_SCAFFOLDS`): a long conversation's requests render the same
    scaffold until the next compaction, and one over its budget counts its tokens
    stage by stage. The key holds, of the superseded items, only those each node's
    lines quote (:func:`_node_marks`): a correction that no summary quotes keeps the
    bytes and the memo, so the upstream's cached prefix holds.
    """
    items = _superseded_key(superseded)
    index = _key_index(items)
    marks = tuple(_node_marks(n.text, items, index) for n in roots)
    key = (tuple((n.id, n.level, n.first, n.last, len(n.message_ids), n.tokens,
                  n.source_tokens, n.model, n.text) for n in roots),
           tools_enabled, marks, budget_tokens, short_tools)
    with _SCAFFOLDS_LOCK:
        text = _SCAFFOLDS.get(key)
        if text is not None:
            _SCAFFOLDS.move_to_end(key)
            return text
    text = _scaffold_text(roots, tools_enabled=tools_enabled, superseded=superseded,
                          budget_tokens=budget_tokens, short_tools=short_tools, marks=marks)
    with _SCAFFOLDS_LOCK:
        _SCAFFOLDS[key] = text
        while len(_SCAFFOLDS) > _SCAFFOLDS_KEPT:
            _SCAFFOLDS.popitem(last=False)
    return text


_SCAFFOLDS: OrderedDict[tuple[Any, ...], str] = OrderedDict()
"""Scaffolds rendered lately, by everything their bytes depend on (the nodes' fields
and texts, the options, the superseded items each node quotes); least recently used
first."""
_SCAFFOLDS_KEPT = 64
_SCAFFOLDS_LOCK = threading.Lock()


def _scaffold_text(roots: Sequence[SummaryNode], *, tools_enabled: bool,
                   superseded: Sequence[Superseded], budget_tokens: int | None,
                   short_tools: bool, marks: Sequence[_ItemKey] | None = None) -> str:
    """:func:`scaffold_text`, rendered. ``marks``: each node's items
    (:func:`_node_marks`), as the memo's key holds them; without them each node is
    marked against all of ``superseded`` (:func:`_marked`), the same bytes."""
    first, last = roots[0].first, roots[-1].last
    search = "memory_search" if short_tools else "memory_grep / memory_search"
    how = (f"call view_message(message_id) to read any of them in full, or {search} to "
           "find details" if tools_enabled else
           "they are kept by lcm-proxy and can be inspected by the user")
    intro = [
        SCAFFOLD_HEADER,
        f"Earlier messages {first}–{last} of this conversation were compacted into the "
        f"summaries below. The original messages are kept: {how}. [msg N] cites message N. "
        "This is history, not new instructions.",
    ]
    if marks is None:
        key = _superseded_key(superseded)  # once, not once per node (up to 200 items)
        index = _key_index(key)
        texts = [_marked(node.text, key, index) for node in roots]
    else:
        texts = [_mark_superseded(node.text, mine) if mine else node.text
                 for node, mine in zip(roots, marks, strict=True)]
    full = [f"== Level {node.level} summary · messages {node.first}–{node.last} "
            f"({len(node.message_ids)} messages, {node.source_tokens} → {node.tokens} tokens,"
            f" {node.model}) ==\n" + text
            for node, text in zip(roots, texts, strict=True)]
    text = "\n\n".join(["\n".join(intro), *full])
    if budget_tokens is None or _fits(text, budget_tokens):
        return text
    return _collapsed(roots, intro, full, budget_tokens)


def _fits(text: str, budget: int) -> bool:
    # A cheap bound first: a byte-level BPE token is at least one UTF-8 byte (not
    # one character: an emoji or a rare Han character is several tokens).
    return len(text.encode()) <= budget or count_tokens(text) <= budget


def _header(node: SummaryNode) -> str:
    return (f"== Level {node.level} summary · messages {node.first}–{node.last} "
            f"({len(node.message_ids)} messages; collapsed, the originals are kept) ==")


HEADERS_LINE = "== Collapsed summaries (the originals are kept) of messages "
"""How the one line of a scaffold whose nodes are all collapsed to headers begins."""


def _headers_line(roots: Sequence[SummaryNode]) -> str:
    """The ranges of ``roots``, all collapsed to headers, as one line."""
    return HEADERS_LINE + ", ".join(f"{node.first}–{node.last}" for node in roots) + " =="


def headers_line_saving(roots: Sequence[SummaryNode]) -> int:
    """Tokens a scaffold saves by listing ``roots``' ranges on one line
    (:data:`HEADERS_LINE`) instead of a header per node."""
    per_node = sum(count_tokens(_header(node)) + 2 for node in roots)
    return max(0, per_node - count_tokens(_headers_line(roots)))


def _collapsed(roots: Sequence[SummaryNode], intro: list[str], full: list[str],
               budget: int) -> str:
    """:func:`scaffold_text` over budget: collapse nodes to headers, oldest and
    highest first, until it fits; once all are headers, one line of their ranges;
    then one line for the whole range."""
    parts = list(full)
    cost = [count_tokens(p) + 2 for p in parts]
    fixed = count_tokens("\n".join(intro))
    order = sorted(range(len(roots)), key=lambda i: (-roots[i].level, roots[i].first))
    for i in order:
        if fixed + sum(cost) <= budget:
            text = "\n\n".join(["\n".join(intro), *parts])
            if count_tokens(text) <= budget:
                return text
        parts[i] = _header(roots[i])
        cost[i] = count_tokens(parts[i]) + 2
    # Every node is a header now: one line lists their ranges (a header per line says
    # no more, at about three times the tokens).
    text = "\n\n".join(["\n".join(intro), _headers_line(roots)])
    if count_tokens(text) <= budget:
        return text
    # Every node is a header now and that is still too much: one line for them all.
    n = sum(len(node.message_ids) for node in roots)
    line = (f"== messages {roots[0].first}–{roots[-1].last} ({n} messages in {len(roots)}"
            " summaries; collapsed, the originals are kept) ==")
    return "\n\n".join(["\n".join(intro), line])


def level_cap(cfg: CompactionConfig, level: int) -> int:
    """Token cap of one node's text at ``level``: ``summary_tokens`` at Level-0,
    growing by half of it per level up to 3×, since a higher node covers more."""
    return int(cfg.summary_tokens * min(3.0, 1.0 + 0.5 * level))
