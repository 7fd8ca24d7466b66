"""Memory items, task state and agent memories: the writer-side rules (DESIGN §4-5).

Every function here takes the writer's :class:`~memory_core.store.api.Tx` and runs
inside the store's write transaction, so each rule is atomic with the evidence it came
from.

Supersession (one item replaces another, both kept, linked both ways):
  an item flagged as a correction replaces the best-matching *active* item of the
  same tenant and role (:func:`memory_core.items.supersession.correction_target`): the
  same subject first, then one containing the other, else the most content terms
  shared (``memory_core.items.overlap``: stemmed words, CJK bigrams); never an item with
  a different condition or a unit of another dimension. A correction with no subject
  and no shared terms replaces the most recent active item with the same unit.
  Chains A→B→C work because only active items are candidates.
Conflict (both sides stay visible until the user resolves it):
  a non-correction statement with a matching subject (the same one first; not a
  narrower one: "audit log retention" after "log retention" is another thing), the
  same condition and no unit of another dimension but a different value (or,
  without values, a rival choice or short claim:
  :func:`memory_core.items.supersession.contradicts`) sets ``conflict_with`` on the new
  item, unless either statement only adds one more of a kind ("We also use Kibana for
  dashboards.", "連絡にはTeamsも使っています。":
  :func:`memory_core.extraction.replacement.adds`): the attribute holds several.
  A correction of either side settles the conflict when it names both.
Restatement: the same kind, subject and value again — or the same statement
  reworded, its content terms the same ("My manager is Dana." / "Reminder: Dana is
  my manager.") — adds a revision row, not a duplicate item; the item keeps every
  source in ``data.sources`` and cites the newest. A statement said again as
  another kind (a rule restated as a fact: "From now on, always sign every release
  tag …" / "Reminder: release tags always get signed …") is one item too, kept as
  the stronger kind (preference > rule or decision > fact); when the stronger one
  comes second, the first gets status ``merged`` and gives it its sources and its
  occasions (each conversation's time, ``data.occasions``).
  Compared by what it claims (its terms beyond the subject: :func:`_same_claim`), a
  statement of a matching subject that claims the same, or one term less, is a
  restatement too ("We deploy on Tuesdays at 14:00 UTC." after "The deploy window is
  Tuesday 14:00 UTC."); one that claims all of the old and more takes its place (the
  old one ``merged`` into it with its sources, "said again with more detail": "My
  manager is Dana Smith." after "My manager is Dana."). Neither is ever a conflict,
  in whichever session it is said. A restatement from another conversation adds
  that conversation's time (``data.occasions``), unless it is a source sent again
  with its history (:func:`_resent`: a client resuming or forking a conversation in
  a new thread; that thread is kept in ``data.resent_threads``).
Guesses (``data.tentative``, :func:`memory_core.items.fields.tentative`):
  a hedged statement ("I think the limit is 50 …") supersedes, conflicts with,
  restates and absorbs nothing firm; it restates only another guess. A firm
  statement of a subject settles the active guesses of that subject it meets among
  its candidates (status ``superseded``, ``superseded_by`` the firm item, which is
  not marked as a correction), whether it confirms the guessed value or not.
"""

from __future__ import annotations

import bisect
import functools
import heapq
import operator
import re
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import Any

import orjson

from memory_core.errors import ItemStateError, NotFoundError
from memory_core.extraction.lexicon import NAME_KEYS
from memory_core.extraction.modality import unhedged
from memory_core.extraction.model import RETRACTION, STATEMENT_KINDS
from memory_core.extraction.prepare import inline_code
from memory_core.extraction.replacement import actor, adds, owner_of, states_change
from memory_core.extraction.units import unit_class
from memory_core.items import fields, standing
from memory_core.items.age import grown_age
from memory_core.items.agent_keys import KeyMatch, near_duplicate, snake_key
from memory_core.items.named_change import ends_another
from memory_core.items.denial import denial_target, experience_target
from memory_core.items.denied_value import names_old_value
from memory_core.items.resent import TurnPaths
from memory_core.items.overlap import (
    named_words,
    one_slot_swapped,
    overlap,
    sides_swapped,
    terms,
    without_opener,
)
from memory_core.items.spelling import variants
from memory_core.items.supersession import (
    attribute_beside,
    conditions_agree,
    contradicts,
    correction_conditions_agree,
    correction_target,
    headed_by,
    impression,
    more_specific,
    moved_elsewhere,
    other_attribute,
    other_holders,
    other_instance,
    predicate,
    retraction_target,
    retraction_targets,
    rival_owners,
    rival_scopes,
    settles,
    same_name,
    sibling_in_text,
    siblings,
    subject_keys,
    subject_probes,
    subjects_match,
    turned_liking,
)
from memory_core.models import Scope
from memory_core.store.api import AGENT_CONTENT_LIMIT, Row, Tx

ITEM_KINDS = ("fact", "decision", "constraint", "preference", "question", "proposal")
TASK_LABELS = ("goal", "progress", "todo", "blocked", "decision")
AGENT_CATEGORIES = ("progress", "user_preferences", "memo")
CONTENT_LIMIT = AGENT_CONTENT_LIMIT
"""``agent_memories.content`` limit in characters (the seed's 500)."""
GLOBAL_TENANT = "*"
"""Tenant of operator-set preferences that apply to every tenant of a data dir."""
USER_SEP = "~"
"""Separates an API key's tenant from an end user's part (``t_…~u_…``, proxy.scope)."""


def account_tenant(tenant: str) -> str:
    """The API key's tenant of a stored tenant id (``t_a~u_b`` → ``t_a``): an end
    user sees the preferences an operator set for the key's tenant."""
    return tenant.split(USER_SEP, 1)[0]


# -- memory items -----------------------------------------------------------------
def store_extracted(
    tx: Tx,
    scope: Scope,
    thread_id: int,
    message_id: int,
    items: Iterable[Any],
    now: float | None = None,
    *,
    speaker: str = "",
    zone: str = "",
    answering: bool = False,
    paths: TurnPaths | None = None,
) -> list[int]:
    """Store extracted items (``memory_core.extract.Extracted``) from one message.

    Applies supersession, conflict and restatement rules (module docstring) and
    merges ``task`` items into ``task_state``. Returns the ids of new memory items.
    ``speaker``: the message's ``name`` (``""``: the role alone, "user"); kept in the
    item's ``data.speaker``. A statement revises, restates or conflicts with items of
    its own speaker only: two people's home towns are two facts, not a conflict.
    ``zone``: the IANA time zone the message was said in (``""``: UTC), kept in the
    item's ``data.tz``: its relative days ("tomorrow") are read in it.
    ``answering``: the message replies to the assistant's question or offer right
    before it; a bare denial in it ("I'm not interested.") declines that and takes
    back no stored fact that names more (:func:`memory_core.items.denial.denial_target`).
    ``paths``: the message paths read for re-sent history (:func:`_resent`), shared
    by the messages of one capture or batch of jobs (``None``: read for this one).
    """
    now = time.time() if now is None else now
    speaker = speaker.strip()[:64]
    new_ids: list[int] = []
    withdrawn: Row | None = None  # named by the last retraction, awaiting its stance
    stance_of = ""  # that retraction's text, which its stance's item quotes first
    retractions = 0
    for ex in items:
        if withdrawn is not None and not (ex.kind in STATEMENT_KINDS
                                          and ex.text.startswith(stance_of)):
            _retract_withdrawn(tx, withdrawn, message_id, now)
            withdrawn = None
        if ex.kind == "task":
            merge_task_line(tx, scope, thread_id, message_id, ex.task_label or "progress",
                            ex.text, now)
            continue
        if ex.kind == RETRACTION:
            retractions += 1
            if retractions > _RETRACTIONS_PER_MESSAGE:
                continue
            if getattr(ex, "every", False):  # "Forget everything about tennis": each item naming it
                for row in retraction_targets(tx.items, scope, ex, speaker=speaker):
                    _retract_withdrawn(tx, row, message_id, now)
            else:
                withdrawn = retraction_target(tx.items, scope, ex, speaker=speaker)
                stance_of = ex.text
            continue
        kind_of = None
        if withdrawn is not None:
            kind_of = tx.item_writes.item(withdrawn["id"])
        item_id = _store_item(tx, scope, thread_id, message_id, ex, now, speaker,
                              kind_of["kind"] if kind_of is not None else None, zone,
                              answering, paths)
        if withdrawn is not None:
            # the stance that replaces what was withdrawn ("…; make it 300 words")
            if item_id is not None and tx.item_writes.item_status(withdrawn["id"]) == "active":
                supersede(tx, int(withdrawn["id"]), item_id, "withdrawn and replaced", now)
            elif item_id is None:
                _retract_withdrawn(tx, withdrawn, message_id, now)
            withdrawn = None
        if item_id is not None:
            new_ids.append(item_id)
    if withdrawn is not None:
        _retract_withdrawn(tx, withdrawn, message_id, now)
    return new_ids


_RETRACTIONS_PER_MESSAGE = 16
"""Most withdrawals of one message that are looked up (each scans the speaker's items);
a message repeating more withdraws nothing more."""


def _retract_withdrawn(tx: Tx, row: Row, message_id: int, now: float) -> None:
    """Retract an item the user withdrew in message ``message_id`` (still active)."""
    if tx.item_writes.item_status(row["id"]) == "active":
        retract_item(tx, int(row["id"]), f"withdrawn by the user in message {message_id}", now)


_CANDIDATES = 200
"""Newest subject matches (``instr`` hits) compared with a new statement."""


class _Window:
    """Whether an item is among the newest ``_CANDIDATES`` active items of the scope,
    ``kinds`` and speaker whose subject contains ``subject`` or is contained in it
    (``instr``). Reads the ids of those matches through ranges of the rowid, down
    from the newest: an item below the range read so far widens it to the item
    and as far again below (at least :data:`_WINDOW_STEP` ids), so a run of asks
    costs a few queries and reads at most about twice the ids down to the oldest
    asked: the cost follows how recent the asked items are. Asks come in any
    order."""

    def __init__(self, tx: Tx, scope: Scope, kinds: tuple[str, ...],
                 subject: str, speaker: str) -> None:
        self._ids_in = tx.item_writes.subject_window_ids
        self._args = (scope.tenant, scope.role, kinds, subject, speaker)
        self._low = 1 << 62  # every match with id > _low is in _found
        self._found: list[int] = []  # those matches, newest first (at most _CANDIDATES)
        self._first: int | None = None  # the first id asked

    def holds(self, item_id: int) -> bool:
        """Whether fewer than ``_CANDIDATES`` matches are newer than ``item_id``."""
        found = self._found
        if self._first is None:
            self._first = item_id
        if item_id < self._low and len(found) < _CANDIDATES:
            below = max(0, item_id - max(_WINDOW_STEP, self._first - item_id))
            found += self._ids_in(*self._args, below, self._low, _CANDIDATES - len(found))
            self._low = below
        # the matches newer than the item (found is in falling order)
        return bisect.bisect_left(found, -item_id, key=operator.neg) < _CANDIDATES


_WINDOW_STEP = 64
"""Fewest ids below an asked item that :class:`_Window` reads with it."""


def _candidates(tx: Tx, scope: Scope, kinds: tuple[str, ...], *,
                subject: str, speaker: str = "") -> Iterator[Row]:
    """:func:`_candidates_spelt` for each spelling a stored subject may hold
    (:func:`~memory_core.items.spelling.variants`: "favourite colour" finds "favorite
    color"; keys are stored as written), each row once. One spelling, the common case,
    reads as before."""
    spellings = variants(subject)
    if len(spellings) == 1:
        yield from _candidates_spelt(tx, scope, kinds, subject=subject, speaker=speaker)
        return
    seen: set[int] = set()
    for spelt in spellings:
        for row in _candidates_spelt(tx, scope, kinds, subject=spelt, speaker=speaker):
            if int(row["id"]) not in seen:
                seen.add(int(row["id"]))
                yield row


def _candidates_spelt(tx: Tx, scope: Scope, kinds: tuple[str, ...], *,
                      subject: str, speaker: str = "") -> Iterator[Row]:
    """Active items of ``kinds`` in the scope said by ``speaker`` whose subject
    matches ``subject`` (:func:`subjects_match`: equal, or one containing the other
    as whole words / CJK substring), among the newest ``_CANDIDATES`` whose subject
    contains it or is contained in it: the same subject first, then the others, each
    newest first. Every active item of the scope can be one, however old — a
    restatement at turn 900 still finds turn 3.

    Lazy, so a caller that stops at the first it takes reads little: the same
    subject through ``memory_items_subject``; the others merged, newest first, from
    the subjects that may contain it (the items holding the rarest of its
    :func:`subject_probes` in ``memory_item_subject_keys``) and the subjects it
    contains (:func:`_contained`, by equality), both filtered by ``instr`` in SQL;
    the window (:class:`_Window`) through the rowid. A subject with no word and no
    CJK character ("--"), which any subject may contain as a whole word, or one
    longer than ``_CONTAINED_MAX``, reads every active item's subject.
    """
    items = tx.item_writes
    window = _Window(tx, scope, kinds, subject, speaker)
    for row in items.same_subject(scope.tenant, scope.role, kinds, subject, speaker):
        if not window.holds(int(row["id"])):
            break
        yield row
    probes = subject_probes(subject)
    inside = _contained(subject)
    if not probes or inside is None:  # "--", or a very long subject: read them all
        streams: list[Iterable[Row]] = [
            items.subject_hits(scope.tenant, scope.role, kinds, subject, speaker)]
    else:
        probe = min(probes, key=lambda k: (
            items.subject_key_count(scope.tenant, scope.role, k, 256), k))
        streams = [
            # subjects that may contain this one
            items.subject_hits_by_key(scope.tenant, scope.role, probe, kinds, subject,
                                      speaker),
            # subjects this one contains
            items.subject_hits_among(scope.tenant, scope.role, sorted(inside), kinds,
                                     subject, speaker)]
    last = None
    for row in heapq.merge(*streams, key=lambda r: -int(r["id"])):
        if row["id"] == last or not subjects_match(subject, row["subject"]):
            continue
        last = row["id"]
        if not window.holds(int(row["id"])):
            return
        yield row


_CONTAINED_MAX = 96
"""Longest subject whose contained subjects :func:`_contained` lists."""


def _contained(subject: str) -> set[str] | None:
    """Every string that :func:`subjects_match` finds inside ``subject`` (shorter, of
    at least two characters): the spans between word boundaries, and for one with a
    kana/CJK character any span. ``None`` for a subject longer than
    ``_CONTAINED_MAX`` characters."""
    n = len(subject)
    if n > _CONTAINED_MAX:
        return None
    word = [bool(_WORD_CHAR.match(c)) for c in subject]
    starts = [i for i in range(n) if i == 0 or not word[i - 1]]
    ends = {j for j in range(1, n + 1) if j == n or not word[j]}
    out = {subject[i:j] for i in starts for j in ends if j - i >= 2}
    if _CJK_CHAR.search(subject):
        out.update(subject[i:j] for i in range(n) for j in range(i + 2, n + 1)
                   if _CJK_CHAR.search(subject, i, j))
        # Latin runs between other characters ("db" in "db用的", subjects_match)
        latin = [bool(_LATIN_CHAR.match(c)) for c in subject]
        edges = [i for i in range(n) if i == 0 or not latin[i - 1]]
        stops = [j for j in range(1, n + 1) if j == n or not latin[j]]
        out.update(subject[i:j] for i in edges for j in stops if j - i >= 2)
    out.discard(subject)
    return out


_WORD_CHAR = re.compile(r"\w")
_CJK_CHAR = re.compile(r"[\u3040-\u30ff\u3400-\u9fff]")
_LATIN_CHAR = re.compile(r"[a-z0-9]")


def _index_subject(tx: Tx, scope: Scope, item_id: int, subject: str | None) -> None:
    """Record a new item's subject keys (:func:`_candidates`)."""
    if not subject:
        return
    keys, anchor = subject_keys(subject)
    tx.item_writes.index_subject_keys(scope.tenant, scope.role, item_id, list(keys), anchor)


def _store_item(tx: Tx, scope: Scope, thread_id: int, message_id: int,
                ex: Any, now: float, speaker: str = "", replaces_kind: str | None = None,
                zone: str = "", answering: bool = False,
                paths: TurnPaths | None = None) -> int | None:
    kind = ex.kind if ex.kind in ITEM_KINDS else "fact"
    if kind == "fact" and replaces_kind in STATEMENT_KINDS:
        kind = replaces_kind  # a stance that takes a withdrawn rule's place is one
    evidence = "assistant" if kind == "proposal" else "user"
    comparable = STATEMENT_KINDS
    items = tx.item_writes
    old: Row | None = None
    same: Row | None = None
    refined: Row | None = None
    hedge = bool(getattr(ex, "tentative", False))
    guesses: list[Row] = []  # hedged items of the subject a firm statement settles
    turned = False  # a liking turned to a dislike (supersession.turned_liking)
    ambiguous: list[Row] = []  # the items a head-only correction may revise
    resolves: Row | None = None  # a pending ambiguity this statement settles
    if kind in comparable and ex.correction and not hedge:
        answered = _ambiguity_answered(tx, scope, ex, comparable, speaker)
        if answered is not None:
            # "I meant the terminal one." after "Actually, my font size is 14." that
            # may revise "editor font size" or "terminal font size": that one it is
            pending, meant = answered
            supersede(tx, int(meant["id"]), int(pending["id"]),
                      "correction: the user said which item it meant", now)
            return None
        old = correction_target(tx.items, scope, ex, comparable, speaker=speaker,
                                ambiguous=ambiguous)
        if old is not None and getattr(ex, "quoted", False) and not fields.quoted(old):
            # a line another person says in a pasted chat, which the user did not
            # adopt ("Alice: staging runs Postgres 15 now"), revises none of the user's own
            old = None
        if getattr(ex, "edit", False) and not ambiguous and (old is None or (
                old["subject"] != ex.subject and not headed_by(old["subject"], ex.subject))):
            # "Change my function to async": an order about work, no value held; "Change
            # my favourite colour scheme to dark" names another attribute than "colour";
            # "Set my font size to 14" revises the one "editor font size" (the head's)
            return None
    elif kind in comparable and ex.subject:
        decided = False  # the newest statement of the subject compared
        after = 0  # candidates read since, for older guesses it may answer
        for row in _candidates(tx, scope, comparable, subject=ex.subject, speaker=speaker):
            if decided:
                after += 1
                if after > _GUESS_SCAN:
                    break
            if not (subjects_match(ex.subject, row["subject"]) and conditions_agree(ex, row)
                    and not _other_dimension(ex.unit, row["unit"])
                    and not more_specific(ex.subject, row["subject"])):
                continue
            if fields.tentative(row) != hedge:
                # a guess neither restates nor rivals a firm statement
                # (standing module doc); a firm one that confirms or rivals it
                # settles it below ("Art is a joy" settles no "Art can be anywhere")
                if not hedge and _settles(ex, kind, row):
                    guesses.append(row)
                continue
            if decided:
                continue
            if (row["value"] == ex.value and row["unit"] == ex.unit
                    and (ex.value is not None or row["text"] == ex.text
                         or same_name(ex.value_text, row["value_text"]))):
                same = row
            elif (claim := _same_claim(ex, kind, row)) == "same":
                same = row  # "We deploy on Tuesdays at 14:00" after "The deploy window is…"
            elif claim == "more":
                refined = row  # "My manager is Dana Smith." after "My manager is Dana."
            elif (turn := turned_liking(ex, row)) != 0:
                # "I hate sushi." after "I love sushi.": one taste, the newest holds;
                # a liking after a dislike may be ironic, so it only rivals it
                old, turned = row, turn < 0
            elif (contradicts(ex, row) or _negates(ex, kind, row)) \
                    and not adds(ex.text or "") and not adds(row["text"] or ""):
                # one more of a kind ("… Teamsも使っています") rivals nothing, nor does a
                # value said after one
                old = row
            decided = True
            if hedge:
                break  # a guess settles nothing
    addressed = kind == "preference" and ex.subject in NAME_KEYS and not hedge
    if addressed and same is None and old is None:
        # how the user asks to be addressed ("Call me Alex", "I go by Alex") after a
        # name said before ("I'm Sam", "My name is Sam"): one name at a time, the
        # newest replaces it
        old = next((r for r in _candidates(tx, scope, comparable, subject=ex.subject,
                                           speaker=speaker)
                    if r["subject"] == ex.subject and conditions_agree(ex, r)
                    and not fields.tentative(r)), None)
    absorb: Row | None = None
    if same is None and kind in comparable:
        if not ex.correction:
            # The same words reordered are a restatement, not a rival value; the same
            # things swapped across a one-way relation ("tabs over spaces") are one.
            same, swapped = _reworded(tx, scope, ex, kind, speaker)
            if same is None and old is None:
                old = swapped
        elif old is not None:
            old = items.item(old["id"])  # the candidate, read whole (same job: it exists)
            if old is not None and _KIND_RANK[old["kind"]] < _KIND_RANK[kind] and _same_statement(
                    old, ex, kind, content_terms(ex.text)):
                # "From now on, always …" after the same rule said as a fact: not a new
                # value (a correction restating its own kind still replaces, and settles
                # a conflict its target was part of)
                same = old
        if same is not None and _KIND_RANK[same["kind"]] < _KIND_RANK[kind] and not (
                standing.conversation_local(same) and same["thread_id"] != thread_id):
            absorb, same = same, None  # a fact said again as a rule: the rule is kept
    if hedge:
        old = absorb = None  # a guess supersedes, conflicts with and absorbs nothing
    if same is not None and fields.tentative(same) != hedge:
        if not hedge:
            guesses.append(same)  # the guess, now said firmly: settled below
        same = None  # a firm statement said again as a guess is kept apart
    if same is not None and _restated(tx, same, thread_id, message_id, now, paths):
        _settle_guesses(tx, guesses, int(same["id"]), now)
        return None
    if absorb is not None and absorb is old:
        old = None
    if old is not None and not hedge and ex.value_text is not None:
        # "My editor font size is 14." after "Actually, my font size is 14." that may
        # revise it or "terminal font size": the value said again of one candidate
        resolves = _ambiguity_of(tx, scope, comparable, old, speaker)
        if resolves is not None and not (
                resolves["unit"] == ex.unit and (resolves["value"] == ex.value if ex.value
                                                 is not None else same_name(
                    resolves["value_text"], ex.value_text))):
            resolves = None
    data = fields.extraction_data(ex)
    if ambiguous:
        data["may_revise"] = sorted(int(r["id"]) for r in ambiguous)
    if speaker:
        data["speaker"] = speaker
    if zone:
        data["tz"] = zone
    item_id = items.insert_item(
        tenant=scope.tenant, role=scope.role, session=scope.session, thread_id=thread_id,
        kind=kind, subject=ex.subject, text=ex.text, value=ex.value, value_text=ex.value_text,
        unit=ex.unit, condition=ex.condition, source_message_id=message_id, evidence=evidence,
        lang=getattr(ex, "lang", None), now=now, data=orjson.dumps(data).decode())
    _index_subject(tx, scope, item_id, ex.subject)
    _index_terms(tx, scope, item_id, ex.text)
    items.queue_index("item", item_id)
    if absorb is not None:
        _absorb(tx, item_id, absorb, now)
    _settle_guesses(tx, guesses, item_id, now)
    if refined is not None and not (standing.conversation_local(refined)
                                    and refined["thread_id"] != thread_id):
        # one statement, the fuller wording kept: a merge, not a correction
        _absorb(tx, item_id, refined, now, "said again with more detail")
    if old is None and kind == "fact" and getattr(ex, "negated", False) and not hedge:
        # "I never had a dog." takes back "I have a dog named Rex." (denial module)
        denied = denial_target(tx.items, scope, ex, speaker=speaker, answering=answering)
        if denied is not None and int(denied["id"]) != item_id:
            supersede(tx, int(denied["id"]), item_id, "denied by the user", now)
    lived = experience_target(tx.items, scope, ex, speaker=speaker) \
        if kind == "fact" and not hedge and resolves is None else None
    if lived is not None and (old is None or int(old["id"]) == int(lived["id"])) \
            and int(lived["id"]) != item_id \
            and (still := items.item(int(lived["id"]))) is not None \
            and still["status"] == "active":  # not the row a denial just took back
        # "I visited Japan in May." turns over "I've never been to Japan." (and 我去过日本
        # 我没去过日本): one experience, keyed alike (experience module), the newest holds
        supersede(tx, int(lived["id"]), item_id, "the user's experience said anew", now)
        old = None
    if ambiguous:
        items.revision(item_id, "may_revise", None, ",".join(map(str, data["may_revise"])),
                       "names an attribute's head that several items qualify: ask which", now)
    if old is not None:
        if resolves is not None:
            supersede(tx, int(old["id"]), item_id,
                      "correction: names which item an earlier correction meant", now)
            _absorb(tx, item_id, resolves, now, "said again naming the item it revises")
        elif ex.correction or addressed:
            supersede(tx, int(old["id"]), item_id, "correction", now)
        elif grown_age(ex, old):  # "My son turned 8." after "My son is 7.": a year on
            supersede(tx, int(old["id"]), item_id, "a later, greater age", now)
        elif turned:
            supersede(tx, int(old["id"]), item_id, "a liking turned to a dislike", now)
        elif names_old_value(ex.text or "", old["text"] or ""):
            # "My name is Sarah, not Chad." after "My name is Chad.": the old value denied
            supersede(tx, int(old["id"]), item_id, "correction: denies the value it replaces",
                      now)
        else:
            items.set_conflict(item_id, old["id"])
            items.revision(item_id, "conflict_with", None, old["id"],
                           "same subject, different value", now)
    return item_id


def _heads(subject: str) -> list[str]:
    """The shorter attributes ``subject`` qualifies (:func:`headed_by`), longest first:
    "editor font size" → "font size", "size"; "编辑器字体大小" → its ends of two
    characters or more."""
    if _CJK_CHAR.search(subject):
        return [subject[i:] for i in range(1, len(subject) - 1)]
    words = subject.split()
    return [" ".join(words[i:]) for i in range(1, len(words))]


def _live_candidates(tx: Tx, row: Row) -> list[Row]:
    """The items correction ``row`` may revise (``data.may_revise``) still active."""
    items = tx.item_writes
    return [r for r in map(items.item, fields.may_revise(row))
            if r is not None and r["status"] == "active"]


def _ambiguity_of(tx: Tx, scope: Scope, kinds: tuple[str, ...], candidate: Row,
                  speaker: str) -> Row | None:
    """The active correction of ``speaker`` still asking which item it revises (two or
    more of its ``data.may_revise`` active, none superseded by it) that lists
    ``candidate``; found through the heads of the candidate's subject (exact subject
    reads), newest first, or ``None``."""
    cid = int(candidate["id"])
    for head in _heads(candidate["subject"] or ""):
        for row in tx.item_writes.same_subject(scope.tenant, scope.role, kinds, head,
                                               speaker):
            if cid in fields.may_revise(row) and row["supersedes"] is None \
                    and len(_live_candidates(tx, row)) >= 2:
                return row
    return None


_ANSWER_SCAN = 8
"""Items whose subject matches a value-less correction that are read for a pending
ambiguity it may answer ("I meant the terminal one")."""


def _ambiguity_answered(tx: Tx, scope: Scope, ex: Any, kinds: tuple[str, ...],
                        speaker: str) -> tuple[Row, Row] | None:
    """``(pending correction, the item meant)`` when ``ex``, a correction with no value
    of its own ("I meant the terminal one."), names the qualifier of exactly one active
    item a pending correction of the same speaker may revise (:func:`_ambiguity_of`);
    else ``None``."""
    if ex.value_text is not None or not ex.subject or getattr(ex, "replacement", None):
        return None
    seen = 0
    for row in _candidates(tx, scope, kinds, subject=ex.subject, speaker=speaker):
        seen += 1
        if seen > _ANSWER_SCAN:
            break
        pending = _ambiguity_of(tx, scope, kinds, row, speaker)
        if pending is None:
            continue
        named = [r for r in _live_candidates(tx, pending)
                 if subjects_match(ex.subject, r["subject"])]
        if len(named) == 1:
            return pending, named[0]
    return None


_GUESS_SCAN = 8
"""Candidates of a subject read past its newest firm statement for older guesses that a
new firm statement answers (the scan is lazy: most subjects have none)."""


def _settles(ex: Any, kind: str, guess: Row) -> bool:
    """Whether a firm statement answers a guess of its subject: it states the guess's
    value, the same claim (:func:`_same_claim`), a claim after the same predicate
    ("The new office opens in April" after "Maybe the new office opens in March":
    :func:`~memory_core.items.supersession.predicate`) or a rival one
    (:func:`~memory_core.items.supersession.contradicts`), the guess read without its
    hedge (``modality.unhedged``: 负责人是小王 answers 我猜负责人可能是小张); a firm
    statement that says something else about the subject ("The new office has a
    rooftop garden") or judges it where the guess stated ("Art is such a joy" after
    "Art can be in the most unlikely places") leaves the guess as it was."""
    if guess["value"] is not None and guess["value"] == ex.value and guess["unit"] == ex.unit:
        return True
    claim = {**dict(guess), "text": unhedged(guess["text"] or ""),
             "subject": unhedged(guess["subject"] or "") or guess["subject"]}
    if impression(ex.text or "", ex.subject, kind) != impression(
            claim["text"], claim["subject"], guess["kind"]):
        return False
    verb = predicate(ex.subject, ex.text)
    if verb is not None and verb == predicate(claim["subject"], claim["text"]):
        return True
    return _same_claim(ex, kind, claim) is not None or contradicts(ex, claim)


def _settle_guesses(tx: Tx, guesses: list[Row], item_id: int, now: float) -> None:
    """A firm statement (item ``item_id``) supersedes the hedged items of its subject
    ("I think the limit is 50 …" then "The limit is 60 …"): the guess leaves the block
    without making the firm item a correction of it."""
    items = tx.item_writes
    done = {item_id}
    for row in guesses:
        if int(row["id"]) in done:
            continue
        done.add(int(row["id"]))
        items.settle(int(row["id"]), item_id, now)
        items.revision(int(row["id"]), "status", "active", "superseded",
                       f"firm statement: item {item_id}", now)
        items.queue_index("item", int(row["id"]))


_RESTATEMENT_WORDS = frozenset({"reminder", "remind", "remember", "note", "fyi", "btw",
                                "recap", "repeat", "mention", "again", "said", "once",
                                "提醒", "醒一", "记住", "再说", "一下", "念の", "のた", "ため",
                                "繰り", "返し"})
"""Words that mark a statement as said before ("Reminder: …", "As I said, …",
"提醒一下", "念のため"), not part of what it says."""
_NEGATION = re.compile(r"\b(?:not|no|never|nobody|nothing|none|neither|nor)\b|n't\b"
                       r"|不|没|沒|别|別|未|ない|ません|なかった", re.I)
"""A statement's negation words: two statements that differ in them say opposite things."""
_REWORDED_SCAN = 300
"""Newest active items of the same kind compared with a new statement."""


@functools.lru_cache(maxsize=8192)
def content_terms(text: str | None) -> frozenset[str]:
    """A statement's content terms (:func:`memory_core.items.overlap.terms`) without the
    words that mark it as a restatement, nor those of the discourse opener it starts
    with (:func:`~memory_core.items.overlap.without_opener`)."""
    return terms(without_opener(text)) - _RESTATEMENT_WORDS




_KIND_RANK = {"fact": 0, "constraint": 1, "decision": 1, "preference": 2}
"""Which of two kinds a statement said both ways is kept as: a rule restated as a fact
("From now on, always mark …" / "Reminder: trays always get …") stays the rule."""


_KIND_WORDS = frozenset({"prefer", "preference", "favorite", "favourite", "forward",
                         "onward", "henceforth", "rule", "default"})
"""Content terms (stems) that make a statement a rule or a preference rather than
say what it is about ("I prefer …", "going forward", "as a rule", "by default"):
left out when two kinds are compared (:func:`same_meaning`)."""

_SPEAKER_SELF = re.compile(r"\b(?:i|i'm|i've|me|my|mine|we|we're|our|ours|us)\b"
                           r"|我|咱|本人|私|僕|俺|わたし", re.I)
"""A speaker talking of themselves: a fact restates a preference only so ("Metric
units are what I use"); "The editor has a dark mode" says what the editor offers,
not what the speaker prefers."""


def _same_statement(row: Row, ex: Any, kind: str, new_terms: frozenset[str]) -> bool:
    """Whether the stored ``row`` says what ``ex`` says, reworded (:func:`_reworded`)."""
    if row["value"] != ex.value or row["unit"] != ex.unit or row["condition"] != ex.condition:
        return False
    if sides_swapped(row["text"], ex.text):
        return False  # "spaces over tabs" is no rewording of "tabs over spaces"
    if other_holders(row["text"], ex.text):
        return False  # "I live in Oslo." restates no "My brother lives in Oslo."
    if not _no_new_names(row["text"], ex.text):
        return False  # "Project Beta uses X." restates no "Project Alpha uses X."
    same_kind = row["kind"] == kind
    old_terms = content_terms(row["text"])
    if _openers_swapped(old_terms, new_terms, row["text"], ex.text):
        return False  # "Omar reviews the PRs." restates no "Dana reviews the PRs."
    shared = len(new_terms & old_terms)
    if not ((same_kind and (old_terms == new_terms
                              or _one_less(new_terms, old_terms, row["text"])))
            or (shared >= 3 and shared >= 0.8 * max(len(new_terms), len(old_terms)))):
        return False
    data = _data(row)
    return ((not same_kind or bool(data.get("negated")) == bool(getattr(ex, "negated", False)))
            and data.get("label") == getattr(ex, "label", None)
            and _polarity_numbers(row["text"]) == _polarity_numbers(ex.text)
            and _inline_code(row["text"]) == _inline_code(ex.text))


@functools.lru_cache(maxsize=4096)
def _inline_code(text: str | None) -> tuple[str, ...]:
    """The inline code of a statement (:func:`memory_core.extraction.prepare.inline_code`),
    whitespace folded (:func:`_same_statement`): "The test command is `pytest -q`" and
    "… `pytest -x`" differ only there, in words too short to be content terms, and are
    two values, not one reworded."""
    return tuple(" ".join(code.split()) for _, _, code in inline_code(text or ""))


_NEGATABLE_KINDS = frozenset(("fact", "constraint", "preference"))


def _negates(ex: Any, kind: str, row: Row) -> bool:
    """Whether a statement is a stored one of another kind with the opposite polarity:
    the same content terms, value, unit and numbers, an odd number of negation words
    more or fewer ("Deploys are allowed on Fridays", a fact, then "Deploys are not
    allowed on Fridays", filed as a prohibition). Two kinds are never rivals to
    :func:`~memory_core.items.supersession.contradicts`, which compares values and
    claims of one kind; a permission and its refusal are rivals whatever each was
    filed as (same-kind pairs stay ``contradicts``'s to judge)."""
    if row["kind"] == kind or kind not in _NEGATABLE_KINDS \
            or row["kind"] not in _NEGATABLE_KINDS:
        return False
    if row["value"] != ex.value or row["unit"] != ex.unit:
        return False
    new_terms = content_terms(ex.text)
    if not new_terms or new_terms != content_terms(row["text"]):
        return False
    (new_parity, new_numbers), (old_parity, old_numbers) = (
        _polarity_numbers(ex.text), _polarity_numbers(row["text"]))
    return new_parity != old_parity and new_numbers == old_numbers


@functools.lru_cache(maxsize=4096)
def _polarity_numbers(text: str | None) -> tuple[int, tuple[str, ...]]:
    """``(parity of the negation words, the numbers)`` of a statement
    (:func:`_same_statement`). Memoised: a new statement is compared with up to
    ``_REWORDED_SCAN`` stored ones, mostly the same texts from one turn to the next,
    and the negation pattern is the costly part of that comparison."""
    return len(_NEGATION.findall(text or "")) % 2, tuple(_numbers(text))


_SLOT = re.compile(
    r"(?:周|週|星期|礼拜|禮拜)[一二三四五六日天]|[月火水木金土日]曜"
    r"|(?:[上下中]午|早上|晚上|凌晨|午前|午後)[零〇一二三四五六七八九十两兩\d]+[点點时時]"
    r"(?:半|[零〇一二三四五六七八九十\d]+分)?"
    r"|(?<![有快慢多少好大小早晚差些再稍])(?<![零〇一二三四五六七八九十两兩\d])"
    r"(?:(?!一[点點时時](?![半分钟鐘整。．.!！,，、开開见見前到过過頃ご]|です|でした|に|から|まで"
    r"|以[前后後]|之[前后]|左右|$))"
    r"[零〇一二三四五六七八九十两兩\d]+[点點时時](?![间間期代]))"
    r"(?:半|[零〇一二三四五六七八九十\d]+分)?"
    r"|\b(?:mon|tues|wednes|thurs|fri|satur|sun)days?\b", re.I)
"""A weekday or a clock time, in words as well as digits ("周二上午十点", "水曜15時",
"Friday"): what :func:`_slots` reads. Without a time of day before it, 一点 / 一時 is a
clock time only before the minutes, 钟/整, a time's particle or the clause's end
("一点半", "一点开会", "一時です", "一時から"); before another word it is "a little"
(有一点累, 一点都不) or "for a while" (一時的に, 一時期), and so is any number of 点 after a
word of degree (慢一点, 快两点). 時間, 時期 and 時代 are no clock time ("2時間": two hours).
A number is read from its first digit only, so a long run of digits is read in linear
time."""


@functools.lru_cache(maxsize=1024)
def _slots(text: str | None) -> frozenset[str]:
    """The weekdays and clock times a statement names (:data:`_SLOT`), casefolded:
    two statements naming other ones say another time, never the same thing
    (:func:`same_meaning`; digits alone are :func:`_polarity_numbers`'s)."""
    return frozenset(m.group().casefold().removesuffix("s") for m in _SLOT.finditer(text or ""))


def _one_less(new: frozenset[str], old: frozenset[str], old_text: str | None) -> bool:
    """Whether ``new`` is ``old`` less one term, keeping at least two ("Reminder: Dana
    is my manager." after "Just so you know, my manager is Dana."): the statement
    said again, shorter. A fragment that shares two words of a longer statement
    ("the billing deploys") says something else, and so does one that drops a member
    of a list in ``old_text`` ("… on Monday mornings" after "… on Monday and Thursday
    mornings" narrows the value)."""
    if not (len(new) >= 2 and new < old and len(old) - len(new) == 1):
        return False
    (dropped,) = old - new
    return _listed_pattern(dropped).search(old_text or "") is None


@functools.lru_cache(maxsize=1024)
def _listed_pattern(term: str) -> re.Pattern[str]:
    """A term written as a member of a list: next to "and", "or", "&", "/", 、, 和 or と (a
    comma alone is no list: "Just so you know, …")."""
    word = re.escape(term) + r"\w*"
    return re.compile(rf"(?:\band\b|\bor\b|&|/|、|和|と)\s*{word}|\b{word}\s*(?:\band\b"
                      rf"|\bor\b|&|/|、|和|と)", re.I)


_DEGREE = re.compile(r"\b(?:severe(?:ly)?|grave(?:ly)?|deathly|deadly|life-threatening"
                     r"|serious(?:ly)?|extreme(?:ly)?|highly|mild(?:ly)?|slight(?:ly)?)\b", re.I)
"""How strong an allergy is ("severe", "gravely", "mildly")."""


def _same_claim(ex: Any, kind: str, row: Row) -> str | None:
    """How a value-less statement relates to a stored one of the same subject, kind,
    speaker, polarity and numbers, compared by what each claims about the subject
    (its content terms without the subject's and without restatement words):
    ``"same"`` when the claims are equal or the new one lacks one term of the old
    (:func:`_one_less`; "We deploy on Tuesdays at 14:00 UTC." after "The deploy
    window is Tuesday 14:00 UTC.", "My manager is Dana." after "My manager is Dana
    Smith."): a restatement; ``"more"``
    when the new claim holds all of the old one and more ("My manager is Dana
    Smith, our CTO." after "My manager is Dana Smith."; an opener such as "Just so
    you know," is no claim: :func:`content_terms`): the old item is merged into it
    (:func:`_absorb`), so one line stays, the fuller one, citing both; ``None``
    otherwise — rival claims, left to :func:`memory_core.items.supersession.contradicts`.
    A restated fact is never a conflict with itself, whatever session says it again.
    Statements whose inline code differs (:func:`_inline_code`) are never the same."""
    if ex.value is not None or row["value"] is not None or kind != row["kind"]:
        return None
    data = _data(row)
    if (bool(data.get("negated")) != bool(getattr(ex, "negated", False))
            or data.get("label") != getattr(ex, "label", None)
            or _polarity_numbers(row["text"]) != _polarity_numbers(ex.text)
            or _inline_code(row["text"]) != _inline_code(ex.text)):
        return None
    if kind == "fact" and ex.subject and ex.subject == row["subject"] \
            and ex.subject.endswith(" allergy"):
        # "I have a severe peanut allergy." after "I'm allergic to peanuts.": one
        # allergy, said as a noun or an adjective; a degree said anew is more of it
        return "more" if _DEGREE.search(ex.text or "") and not _DEGREE.search(
            row["text"] or "") else "same"
    subject = terms(ex.subject) | terms(row["subject"])
    new, old_claim = content_terms(ex.text) - subject, content_terms(row["text"]) - subject
    if (not old_claim or not new or sides_swapped(row["text"], ex.text)
            or other_holders(row["text"], ex.text)):
        return None
    if new == old_claim or _one_less(new, old_claim, row["text"]):
        return "same"
    if old_claim < new and _no_new_names(row["text"], ex.text):
        return "more"
    return None


def _reworded_shared(new_terms: frozenset[str]) -> int:
    """How many of a new statement's ``n`` terms an item that :func:`_same_statement`
    takes holds at least: all of them for equal sets, else at least three and 80 %
    of ``n`` (80 % of the larger set, so at least of ``n``)."""
    n = len(new_terms)
    least = min(s for s in range(n + 1) if s >= 0.8 * n)
    return max(3, least) if n >= 3 else n


def _index_terms(tx: Tx, scope: Scope, item_id: int, text: str) -> None:
    """Record a new item's content terms (:func:`_reworded`)."""
    tx.item_writes.index_terms(scope.tenant, scope.role, item_id, list(content_terms(text)))


def _reworded(tx: Tx, scope: Scope, ex: Any, kind: str, speaker: str
              ) -> tuple[Row | None, Row | None]:
    """An active item of the same speaker, value, unit, condition, ordinal label,
    polarity and numbers whose content terms are the new statement's, reordered ("My
    manager is Dana." / "Reminder: Dana is my manager."): equal sets, or the new one's
    the item's less one term (:func:`_one_less`), or each covering 80 % of the other
    with at least three shared. The item may be of another
    comparable kind (a rule restated as a fact: "From now on, always mark every tray
    with a violet sticker." / "Reminder: trays always get a violet sticker."); then
    at least three terms must be shared, and the polarity is read from the negation
    words alone (the ``negated`` flag means a prohibition for a rule, not for a
    fact). ``None`` when there is none. Compares the newest ``_REWORDED_SCAN``
    such items (``memory_items_restate``), and of those only the ones holding enough
    of its terms (:func:`_reworded_shared`, counted in ``memory_item_terms``).
    Returns ``(item, None)`` for that item; ``(None, rival)`` when the newest such
    item of the same kind puts the same things the other way round across a one-way
    relation word (:func:`~memory_core.items.overlap.sides_swapped`: "I prefer spaces
    over tabs." after "I prefer tabs over spaces."): no restatement but a rival
    value; ``(None, None)`` when there is neither."""
    new_terms = content_terms(ex.text)
    if not new_terms:
        return None, None
    kinds = ("fact", "decision", "constraint", "preference")
    rival: Row | None = None
    for row in tx.item_writes.reworded_candidates(
            scope.tenant, scope.role, kinds, speaker, ex.value, ex.unit, ex.condition,
            _REWORDED_SCAN, sorted(new_terms), _reworded_shared(new_terms)):
        if sides_swapped(row["text"], ex.text):
            if rival is None and row["kind"] == kind:
                rival = row
            continue
        if _same_statement(row, ex, kind, new_terms):
            return row, None
    return None, rival


def _absorb(tx: Tx, keep_id: int, drop: Row, now: float,
            reason: str = "said again as a stronger kind") -> None:
    """Merge the older item ``drop`` into the new item ``keep_id`` that says the same
    as a stronger kind (:data:`_KIND_RANK`), or more fully (``reason`` says which):
    ``keep_id`` takes every source of ``drop`` before its own (``data.sources``,
    oldest first) and ``drop`` gets status ``merged`` with ``superseded_by`` =
    ``keep_id`` (a ``merged`` revision)."""
    items = tx.item_writes
    keep = items.item(keep_id)
    assert keep is not None  # the item just stored
    data = _data(keep)
    srcs = fields.sources(drop) + [m for m in fields.sources(keep)
                                   if m not in fields.sources(drop)]
    data["sources"] = srcs
    _join_occasions(data, keep, items.item(int(drop["id"])) or drop)
    items.set_data(keep_id, orjson.dumps(data).decode())
    items.mark_merged(int(drop["id"]), keep_id, now)
    items.revision(int(drop["id"]), "status", "active", "merged",
                   f"{reason} by item {keep_id}", now)
    items.revision(keep_id, "restated", None, drop["source_message_id"], "restated", now)
    items.queue_index("item", int(drop["id"]), "delete")


_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")


def confirm_proposal(tx: Tx, decision_id: int, proposal_id: int,
                     now: float | None = None) -> None:
    """Merge the assistant's proposal ``proposal_id`` into the user's decision
    ``decision_id`` that confirms it ("yep 👍" after it; :mod:`memory_core.capture.reply`):
    one choice, now the user's, with the proposal's message among its sources; the
    proposal gets status ``merged``. Nothing when the proposal is no longer active."""
    drop = tx.item_writes.item(proposal_id)
    if drop is None or drop["status"] != "active" or proposal_id == decision_id:
        return
    _absorb(tx, decision_id, drop, time.time() if now is None else now,
            "confirmed by the user")


def _numbers(text: str | None) -> list[str]:
    """The numbers a statement names, sorted: "note number 001" and "note number
    002" are two notes, not one said twice."""
    return sorted(_NUMBER.findall(text or ""))


def _data(row: Row) -> dict[str, Any]:
    try:
        value = orjson.loads(row["data"] or "{}")
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _restated(tx: Tx, row: Row, thread_id: int, message_id: int | None, now: float,
              paths: TurnPaths | None = None) -> bool:
    """Merge a restatement into ``row``: a ``restated`` revision, the message added
    to ``data.sources`` (every message that said it, oldest first) and made the
    item's source (the block cites the newest), the item moved to that thread.
    A conversation-local item (:func:`memory_core.items.standing.conversation_local`)
    said again in another thread is not merged (returns ``False``): each thread
    keeps its own."""
    if standing.conversation_local(row) and row["thread_id"] != thread_id:
        return False
    items = tx.item_writes
    item_id = int(row["id"])
    items.revision(item_id, "restated", None, message_id, "restated", now)
    if message_id is None or message_id == row["source_message_id"]:
        items.touch(item_id, now)
        return True
    data = _data(row)
    srcs = data.get("sources")
    if not isinstance(srcs, list):
        srcs = [] if row["source_message_id"] is None else [row["source_message_id"]]
    if message_id not in srcs:
        srcs.append(message_id)
    if row["thread_id"] != thread_id and row["created_at"] is not None:
        # said in another conversation: "I went hiking with Anna." on two days may be
        # two hikes, so each conversation's time is kept (fields.occasions), once per
        # conversation (``data.occasion_threads``, in step): back in the first, no new
        # one; nor in a thread that only re-sent a source with its history (_resent)
        pairs = _occasion_pairs(row)
        resent = [t for t in data.get("resent_threads") or () if isinstance(t, int)]
        if thread_id not in resent and all(t != thread_id for _, t in pairs):
            if _resent(tx, message_id, fields.sources(row), paths):
                # written out even when one: the item moves to this thread below
                resent.append(thread_id)
                data["resent_threads"] = resent
            else:
                pairs.append((now, thread_id))
            data["occasions"] = [t for t, _ in pairs]
            data["occasion_threads"] = [th for _, th in pairs]
    data["sources"] = srcs
    items.restate(item_id, now=now, message_id=message_id, thread_id=thread_id,
                  data=orjson.dumps(data).decode())
    items.queue_index("item", item_id)
    return True


def _occasion_pairs(row: Row) -> list[tuple[float, int | None]]:
    """``(UNIX seconds, thread id)`` of each conversation that told ``row``, oldest
    first: ``data.occasions`` with ``data.occasion_threads`` in step (a list written
    without them: only the newest occasion's thread is known, the item's), else its
    creation alone; ``[]`` for a row without ``created_at``."""
    told = fields.occasions(row)
    if not told:
        at = row["created_at"]
        return [] if at is None else [(float(at), row["thread_id"])]
    threads = _data(row).get("occasion_threads")
    if not isinstance(threads, list) or len(threads) != len(told):
        threads = [None] * (len(told) - 1) + [row["thread_id"]]
    return list(zip(told, threads, strict=True))


def _join_occasions(data: dict[str, Any], keep: Row, drop: Row) -> None:
    """Give ``data`` (the kept item's, to be written) the occasions of both items,
    oldest first, one per conversation (the earliest time of a thread both told),
    and the threads either only re-sent; unchanged when they were told in one
    conversation. ``keep`` and ``drop`` need ``created_at``, ``thread_id`` and
    ``data``."""
    joined: list[tuple[float, int | None]] = []
    seen: set[int] = set()
    for at, thread in sorted([*_occasion_pairs(drop), *_occasion_pairs(keep)],
                             key=operator.itemgetter(0)):
        if thread is not None:
            if thread in seen:
                continue
            seen.add(thread)
        joined.append((at, thread))
    if len(joined) > 1:
        data["occasions"] = [at for at, _ in joined]
        data["occasion_threads"] = [thread for _, thread in joined]
    resent = [t for r in (drop, keep) for t in _data(r).get("resent_threads") or ()
              if isinstance(t, int) and t not in seen]
    if resent:
        data["resent_threads"] = sorted(set(resent))


def _resent(tx: Tx, message_id: int | None, sources: list[int],
            paths: TurnPaths | None = None) -> bool:
    """Whether ``message_id`` is one of ``sources`` sent again with its history
    (:meth:`memory_core.items.resent.TurnPaths.resent`), read through ``paths``: the
    memo of the capture or batch of jobs it belongs to (``None``: one of its own)."""
    return (TurnPaths() if paths is None else paths).resent(tx, message_id, sources)


_NAME = re.compile(r"(?<![.!?:]\s)(?<!^)\b[A-Z][\w-]*")
"""A capitalised word not opening a sentence: a name ("Dana", "Argo", "Helm")."""


def _names(text: str) -> frozenset[str]:
    return frozenset(m.casefold() for m in _NAME.findall(text.strip())) - {"i"}


def _words(text: str) -> frozenset[str]:
    return frozenset(w.casefold() for w in re.findall(r"[\w-]+", text))


def same_meaning(new: Row, old: Row) -> bool:
    """Whether two active items that embed alike may be one statement reworded
    (the vector half of write-time dedupe: :func:`merge_duplicate`). Conservative: the
    same tenant, role, speaker, value, unit, condition, ordinal label, polarity
    (negation words; the ``negated`` flag too within one kind, since for a rule it
    means a prohibition), numbers, weekdays and clock times (:func:`_slots`); kinds
    that are one statement said two ways (:data:`_KIND_RANK`: a fact, decision,
    constraint or preference, "From now on, always …" / "Reminder: … always …"), else
    one kind; at least one content term
    shared; each saying something the other does not in other words (a statement
    that only adds words, "my daughter is allergic to peanuts", is a refinement, not
    a repeat); not one word swapped for another ("tea" / "coffee": a rival value);
    no name on each side that the other lacks ("Helm" / "Argo CD"); and not about
    rival scopes (:func:`~memory_core.items.supersession.rival_scopes`: prod / staging)."""
    for col in ("tenant", "role", "value", "unit", "condition"):
        if new[col] != old[col]:
            return False
    same_kind = new["kind"] == old["kind"]
    if not same_kind and not (new["kind"] in _KIND_RANK and old["kind"] in _KIND_RANK):
        return False
    nd, od = _data(new), _data(old)
    if bool(nd.get("tentative")) != bool(od.get("tentative")):
        return False  # a guess and a firm statement are kept apart (standing module doc)
    if (nd.get("speaker", "") != od.get("speaker", "") or nd.get("label") != od.get("label")
            or (same_kind and bool(nd.get("negated")) != bool(od.get("negated")))):
        return False
    if _polarity_numbers(new["text"]) != _polarity_numbers(old["text"]):
        return False
    if _slots(new["text"]) != _slots(old["text"]):
        return False  # "周会改到周四下午两点。" / "周会定在周二上午十点。": another time
    if rival_scopes(new["text"] or "", old["text"] or ""):
        return False  # "Staging deploys daily" is not "The prod deploy is daily"
    if adds(new["text"] or "") or adds(old["text"] or ""):
        return False  # "我们的App还支持韩文。": one more of a kind, not the same one
    if one_slot_swapped(new["text"], old["text"]):
        return False  # "会议室在五楼。" / "会议室在三楼。": a rival value
    a, b = content_terms(new["text"]), content_terms(old["text"])
    if nd.get("correction") and a - b and b - a:
        return False  # a value told as changed ("これからは英語で…" after "返信は日本語で…")
    if not same_kind:
        # "I prefer metric units." / "Metric units are what I use.": the words that
        # make it a rule or preference are not what it says; what is left must hold
        # at least two shared terms, and be the same, or the stronger kind's plus
        # one word (a verb the rule names: "always write commit messages in
        # English" / "commit messages are in English"), or differ as reworded
        # statements of one kind do. A fact that adds a word to a preference ("I
        # prefer Python for scripts." / "Python is slow for scripts.") says more.
        a, b = a - _KIND_WORDS, b - _KIND_WORDS
        if len(a & b) < 2:
            return False
        kinds = {new["kind"]: new, old["kind"]: old}
        if "preference" in kinds and "fact" in kinds \
                and not _SPEAKER_SELF.search(kinds["fact"]["text"]):
            return False
        rank_a, rank_b = _KIND_RANK[new["kind"]], _KIND_RANK[old["kind"]]
        if a == b:
            return _no_new_names(new["text"], old["text"])
        if a < b or b < a:
            extra_on_stronger = (rank_b > rank_a) if a < b else (rank_a > rank_b)
            return (extra_on_stronger and abs(len(a) - len(b)) == 1
                    and _no_new_names(new["text"], old["text"]))
    only_a, only_b = a - b, b - a
    if not a & b or not only_a or not only_b or (len(only_a) == 1 and len(only_b) == 1):
        return False
    return _no_new_names(new["text"], old["text"])


_OPENING_WORD = re.compile(r"^\W*([A-Z][\w-]*)")


def _openers_swapped(old_terms: frozenset[str], new_terms: frozenset[str],
                     old_text: str | None, new_text: str | None) -> bool:
    """Whether two statements differ only in the capitalised word each opens on
    ("Dana reviews …" / "Omar reviews …"): two holders, no rewording. :data:`_NAME`
    skips an opening word, since any sentence opens capitalised."""
    old_only, new_only = old_terms - new_terms, new_terms - old_terms
    if len(old_only) != 1 or len(new_only) != 1:
        return False
    a, b = _OPENING_WORD.match(old_text or ""), _OPENING_WORD.match(new_text or "")
    return a is not None and b is not None and terms(a.group(1)) == old_only \
        and terms(b.group(1)) == new_only


def _no_new_names(a: str, b: str) -> bool:
    """Not a name on each side that the other lacks ("Helm" / "Argo CD")."""
    return not (_names(a) - _words(b) and _names(b) - _words(a))


def merge_duplicate(tx: Tx, new_id: int, old_id: int,
                    now: float | None = None) -> int | None:
    """Merge item ``new_id`` and the older item ``old_id`` that says the same in other
    words, when both are still active and :func:`same_meaning` agrees (checked again
    here, on the rows as they are now). The older item is kept unless the new one is
    of a stronger kind (:data:`_KIND_RANK`: a fact restated as a rule stays the
    rule). The kept item takes every source of the other (``data.sources``, oldest
    first, as a restatement does) and the other gets status ``merged`` with
    ``superseded_by`` pointing at the kept item (a ``merged`` revision; it leaves the
    indexes). A conversation-local item is merged only within its thread. Returns
    the id of the item merged away, ``None`` when nothing was merged."""
    now = time.time() if now is None else now
    if new_id == old_id:
        return None
    items = tx.item_writes
    rows = {r["id"]: r for r in items.active_pair(new_id, old_id)}
    new, old = rows.get(new_id), rows.get(old_id)
    if new is None or old is None or not same_meaning(new, old):
        return None
    if _threads_apart(new, old):
        return None
    if old["kind"] != new["kind"] and _KIND_RANK[old["kind"]] < _KIND_RANK[new["kind"]]:
        # kinds differ only between statement kinds (same_meaning); a question or
        # proposal merges only with its own kind
        _absorb(tx, new_id, old, now)  # a fact said again as a rule: the rule is kept
        return old_id
    srcs = _data(new).get("sources")
    if not isinstance(srcs, list):
        srcs = [] if new["source_message_id"] is None else [new["source_message_id"]]
    paths = TurnPaths()
    for message_id in srcs:
        if old is None or not _restated(tx, old, new["thread_id"], message_id, now, paths):
            return None
        old = items.item(old_id)
    if old is not None:
        # each conversation that told the merged item, at the time it told it
        data = _data(old)
        _join_occasions(data, old, new)
        items.set_data(old_id, orjson.dumps(data).decode())
    items.mark_merged(new_id, old_id, now)
    items.revision(new_id, "status", "active", "merged",
                   f"same meaning as item {old_id} (vector dedupe)", now)
    items.queue_index("item", new_id, "delete")
    return new_id


def revise_by_meaning(tx: Tx, new_id: int, near: Iterable[tuple[int, float]], *,
                      floor: float, margin: float, now: float | None = None) -> int | None:
    """Supersede the older item that the update ``new_id`` revises when no words paired
    them at write time (the vector half of supersession, run by the indexer once the
    update is embedded): "I moved to Fedora over the weekend." after "I'm on Windows
    11.", 公司换成钉钉了 after 团队用飞书沟通.

    ``new_id`` must be :func:`revisable`. ``near``: ``(item id, similarity)`` pairs
    from the vector index. The pool is the older active statements in ``near`` of the
    same tenant, role and speaker, by the user, from another message. The most alike
    of the pool is superseded when its similarity reaches ``floor``, leads the next
    one's by at least ``margin`` (two alike items: ambiguous, nothing is superseded,
    unless exactly one of those within the margin states a value in units of the
    update's dimension, :func:`_value_alike`: "上限は8万円になりました" between
    "月の予算は5万円までです" and the invoices' addressee; it must reach ``floor`` too)
    and it is a fit (:func:`_revised_by`: firm, the same ordinal label, condition and
    unit dimension, no sibling attribute, not a dated statement about another named
    thing or another attribute (:func:`~memory_core.items.supersession.other_attribute`),
    not the end of a thing it never names
    (:func:`~memory_core.items.named_change.ends_another`), not the same value said
    again, not about another person; a
    conversation-local item only within its thread). Returns the id
    superseded, or ``None``."""
    items = tx.item_writes
    new = items.item(new_id)
    if new is None or not revisable(new):
        return None
    speaker = _data(new).get("speaker", "")
    pool: list[tuple[float, Row]] = []
    for old_id, sim in near:
        old = items.item(old_id) if old_id < new_id else None
        if (old is not None and old["status"] == "active" and old["kind"] in STATEMENT_KINDS
                and old["evidence"] in fields.STATED
                and (old["tenant"], old["role"]) == (new["tenant"], new["role"])
                and _data(old).get("speaker", "") == speaker
                and old["source_message_id"] != new["source_message_id"]):
            pool.append((float(sim), old))
    pool.sort(key=lambda p: (p[0], p[1]["id"]), reverse=True)
    if not pool or pool[0][0] < floor:
        return None
    sim, old = pool[0]
    if len(pool) > 1 and sim - pool[1][0] < margin:
        valued = [p for p in pool if sim - p[0] < margin and p[0] >= floor
                  and _value_alike(new, p[1])]
        if len(valued) != 1:
            return None
        sim, old = valued[0]
    if not _revised_by(new, old):
        return None
    supersede(tx, int(old["id"]), new_id, f"update said in other words (similarity {sim:.3f})",
              time.time() if now is None else now)
    return int(old["id"])


def _value_alike(new: Row, old: Row) -> bool:
    """Whether both items state a value in units of one dimension ("8万円" / "5万円",
    "45 minutes" / "30 minutes"): among items alike within the margin, the one that
    holds the attribute the update gives a new value of."""
    return (new["value"] is not None and old["value"] is not None
            and bool(new["unit"]) and bool(old["unit"])
            and unit_class(new["unit"]) == unit_class(old["unit"]))


def revisable(new: Row) -> bool:
    """Whether item ``new`` (every column) may revise an item by meaning
    (:func:`revise_by_meaning`): an active statement (:data:`STATEMENT_KINDS`) by the
    user, extracted as a correction or update (``data.correction``), firm, that
    superseded and conflicts with nothing, not another person's line passed on
    (``data.quoted``), not about another person
    (:func:`memory_core.extraction.replacement.actor`), not one more of a kind
    (:func:`~memory_core.extraction.replacement.adds`), with words of its own (not
    "No, I didn't.")."""
    nd = _data(new)
    text = new["text"] or ""
    return (new["status"] == "active" and new["kind"] in STATEMENT_KINDS
            and new["evidence"] in fields.STATED and bool(nd.get("correction"))
            and not nd.get("tentative") and new["supersedes"] is None and not nd.get("quoted")
            and new["conflict_with"] is None and actor(text) != "other"
            and not adds(text) and bool(content_terms(text)))


def _revised_by(new: Row, old: Row) -> bool:
    """Whether the update ``new`` may revise ``old``, the most alike item of its pool
    (:func:`revise_by_meaning`)."""
    od = _data(old)
    if od.get("tentative") or od.get("label") != _data(new).get("label") \
            or actor(old["text"] or "") == "other":
        return False
    if _threads_apart(new, old):
        return False
    if new["value"] is not None and (new["value"], new["unit"]) == (old["value"], old["unit"]):
        return False  # the same value said again: a restatement, not an update
    nt, ot = new["text"] or "", old["text"] or ""
    return (not _other_dimension(new["unit"], old["unit"])
            and not siblings(new["subject"], old["subject"], nt, ot)
            and not sibling_in_text(new["subject"], nt, old["subject"], ot)
            and not other_instance(new["subject"], nt, old["subject"], ot)
            and not rival_scopes(nt, ot)
            and not rival_owners(nt, ot)
            and not attribute_beside(new["subject"], old["subject"], nt, ot)
            and not _named_scopes(new, old)
            and not _another_thing(new, old)
            and not (other_attribute(new["subject"], old["subject"], nt, ot)
                     and not states_change(nt))
            and not _rule_beside(new, old)
            and not _other_component(nt, ot)
            and not ends_another(nt, ot)
            and not moved_elsewhere(nt, ot, old["subject"])
            and not (new["value_text"] is None and impression(nt, new["subject"], new["kind"])
                     != impression(ot, old["subject"], old["kind"], asides=True))
            and correction_conditions_agree(_Said(new["condition"], new["text"] or ""), old))


def _threads_apart(a: Row, b: Row) -> bool:
    """Two items of different threads where one is conversation-local
    (:func:`memory_core.items.standing.conversation_local`): they never pair."""
    return (standing.conversation_local(a) or standing.conversation_local(b)) \
        and a["thread_id"] != b["thread_id"]


def _another_thing(new: Row, old: Row) -> bool:
    """Whether the update ``new`` only dates a statement about a thing of its own: both
    items name a subject, neither's terms occur in the other's text, and ``new`` says
    no change (:func:`memory_core.extraction.replacement.states_change`). "The backend
    is on Fly.io now" after "The frontend is deployed on Vercel", 会话现在用 Redis 存了
    after 我们用 Postgres 存订单: two things of one category embed alike, and in a short
    conversation nothing else is near enough for the margin to object."""
    ns, os_ = _subject_terms(new), _subject_terms(old)
    nt, ot = (new["text"] or "").lower(), (old["text"] or "").lower()
    return bool(ns) and bool(os_) and not any(t in ot for t in ns) \
        and not any(t in nt for t in os_) and not states_change(new["text"] or "")


def _named_scopes(new: Row, old: Row) -> bool:
    """Whether two statements give two named things each a value of its own: their
    subjects differ in one word, a name in its statement that the other never says
    (a language, a product), and each statement names one more thing, the other
    statement not ("I write Python in Vim." / "I now write Go in Helix.", "For Python
    I use Neovim." / "For Go I now use Sublime."): the tool is the value and each
    language its scope, so neither revises the other. "I drive a Honda." / "I now
    drive a Tesla." names nothing besides its value: an update."""
    sn, so = set((new["subject"] or "").split()), set((old["subject"] or "").split())
    dn, do = sn - so, so - sn
    if len(dn) != 1 or len(do) != 1:
        return False
    nt, ot = new["text"] or "", old["text"] or ""
    nn, on = _names(nt), _names(ot)
    (wn,), (wo,) = dn, do
    return (wn in nn and wo in on and wn not in _words(ot) and wo not in _words(nt)
            and bool(nn - sn - _words(ot)) and bool(on - so - _words(nt)))


def _subject_terms(row: Row) -> frozenset[str]:
    """The content terms of ``row``'s subject, with the names its text spells as a
    function word or one letter (:func:`~memory_core.items.overlap.named_words`: the
    subject "go" of "I now use VS Code for Go.")."""
    subject = row["subject"] or ""
    return terms(subject) | (named_words(row["text"]) & frozenset(subject.split()))


def _rule_beside(new: Row, old: Row) -> bool:
    """Whether the rule ``new`` only sits beside the rule ``old``: both constraints,
    ``new`` says no change (:func:`memory_core.extraction.replacement.states_change`;
    a lead such as "From now on" dates a rule, it changes none) and neither's whole
    subject is in the other's text. "From now on, log with structlog." after "From now
    on, use UTC in all logs.": rules of one project embed alike, share their lead and
    their topic words, and each still holds. Not beside: subjects that differ in one
    word at one place ("reply english" / "reply german" of "Always reply to me in
    English." … "Actually, reply to me in German from now on."): one rule given
    another value."""
    if new["kind"] != "constraint" or old["kind"] != "constraint" \
            or states_change(new["text"] or ""):
        return False
    ns, os_ = (new["subject"] or "").casefold(), (old["subject"] or "").casefold()
    nt, ot = (new["text"] or "").casefold(), (old["text"] or "").casefold()
    return not ((ns and ns in ot) or (os_ and os_ in nt) or _one_word_apart(ns, os_))


def _one_word_apart(a: str, b: str) -> bool:
    """Whether subjects ``a`` and ``b`` have as many words, two or more, and differ in
    the one at one place (words compared by their content terms)."""
    wa, wb = a.split(), b.split()
    if len(wa) != len(wb) or len(wa) < 2:
        return False
    return sum((terms(x) or {x}) != (terms(y) or {y}) for x, y in zip(wa, wb, strict=True)) == 1


def _other_component(new_text: str, old_text: str) -> bool:
    """Whether one of two statements is a change or order of a named component's
    attribute (:func:`memory_core.extraction.replacement.owner_of`: 登录表单 of
    "登录表单的日志太吵了，把级别降到debug。") and the other never names that component
    ("构建缓存的过期时间是69小时。"): two things, whatever their vectors say."""
    for a, b in ((new_text, old_text), (old_text, new_text)):
        owner = owner_of(a)
        if owner is not None and owner.casefold() not in b.casefold():
            return True
    return False


@dataclass(frozen=True, slots=True)
class _Said:
    """A stored item seen as extracted (``condition``, ``text``; no ``replacement``) by
    the matching rules."""

    condition: str | None
    text: str


def _other_dimension(a: str | None, b: str | None) -> bool:
    """Two units of different dimensions ("40 minutes" vs "12 GB": two attributes)."""
    return bool(a and b and unit_class(a) != unit_class(b))


def supersede(tx: Tx, old_id: int, new_id: int, reason: str,
              now: float | None = None) -> None:
    """Mark ``old_id`` superseded by ``new_id`` (links both ways, revision rows).

    A correction also settles a conflict: the other side of a conflict ``old_id``
    was part of is superseded by ``new_id`` as well when the correction names its
    subject (:func:`memory_core.items.supersession.settles`), so exactly one value stays
    current.
    """
    now = time.time() if now is None else now
    items = tx.item_writes
    row = items.conflict_of(old_id)
    new_text = items.item_text(new_id)
    if new_text is None:
        new_text = ""
    items.mark_superseded(old_id, new_id, now)
    items.revision(old_id, "status", "active", "superseded", f"{reason}: by item {new_id}", now)
    items.queue_index("item", old_id)
    sides = set(items.conflicting_active(old_id, new_id))
    if row is not None and row[0] is not None:
        sides.add(int(row[0]))
    for other in sorted(sides):
        if other == new_id:
            continue
        status = items.item_claim(other)
        if status is not None and status["status"] == "active" and settles(status, new_text):
            items.settle(other, new_id, now)
            items.revision(other, "status", "active", "superseded",
                           f"conflict resolved by item {new_id}", now)
            items.queue_index("item", other)


def retract_item(tx: Tx, item_id: int, reason: str,
                 now: float | None = None) -> dict[str, Any]:
    """Set an item's status to ``retracted`` (kept for audit; gone from retrieval).

    Raises ``NotFoundError`` for an unknown id. Returns ``{id, old_status}``.
    """
    now = time.time() if now is None else now
    items = tx.item_writes
    old_status = items.item_status(item_id)
    if old_status is None:
        raise NotFoundError(f"no memory item {item_id}")
    items.mark_retracted(item_id, now)
    items.revision(item_id, "status", old_status, "retracted", reason or "retracted", now)
    items.queue_index("item", item_id, "delete")
    return {"id": item_id, "old_status": old_status}


ITEM_CHANGES = {"retract": "retracted", "restore": "restored"}
"""An operator's or user's change of an item's status (verb → what the item then is, as
answers say it): :func:`retract_item`, :func:`restore_item`."""
RESTORABLE = ("superseded", "retracted")
"""Statuses an operator may set back to ``active`` (:func:`restore_item`); a ``merged``
item gave its sources to the item it was merged into."""


def restore_item(tx: Tx, item_id: int, reason: str,
                 now: float | None = None) -> dict[str, Any]:
    """Set a superseded or retracted item ``active`` again (an operator undoing a wrong
    supersession or retraction): its ``superseded_by`` is cleared, a revision row keeps
    the change, it is indexed again. The item that superseded it stays as it is (still
    active, and its ``supersedes`` link stays as history), so both are current until
    the user or operator says otherwise.

    Raises ``NotFoundError`` for an unknown id and ``ItemStateError`` for a status
    outside :data:`RESTORABLE`. Returns ``{id, old_status}``."""
    now = time.time() if now is None else now
    items = tx.item_writes
    old_status = items.item_status(item_id)
    if old_status is None:
        raise NotFoundError(f"no memory item {item_id}")
    if old_status not in RESTORABLE:
        raise ItemStateError(f"memory item {item_id} is {old_status}: only a superseded or"
                             " retracted item can be restored")
    items.mark_restored(item_id, now)
    items.revision(item_id, "status", old_status, "active", reason or "restored", now)
    items.queue_index("item", item_id)
    return {"id": item_id, "old_status": old_status}


EDITABLE = ("active",)
"""Statuses an operator may correct (:func:`edit_item`): a superseded or retracted item
is restored first, a merged one lives on in the item it was merged into."""
EDIT_TEXT_LIMIT = 2000
"""Most characters of an operator's corrected item text (:func:`edit_item`)."""


def edit_item(tx: Tx, item_id: int, text: str, reason: str,
              now: float | None = None) -> dict[str, Any]:
    """An operator's correction of an active item's text: a new item (evidence
    ``admin``; an assistant proposal's stays ``assistant``) that supersedes it, so the old wording stays as history and
    :func:`restore_item` of the old one undoes the edit (both are then current, as
    after any restore; retract the one that is wrong).

    The new item keeps the old one's kind, scope, thread, source message (the
    statement it corrects), speaker, sources and occasions; its subject, value,
    unit and condition are read again from ``text`` by the extractor when it finds
    a statement of that kind there (else the old subject stays and the value is
    cleared: the old value belonged to the old words), with the extractor's flags.
    Revisions on both say who changed what (``edited by admin``); both are queued
    for the indexes. Raises ``NotFoundError`` for an unknown id, ``ItemStateError``
    for an item that is not active, ``ValueError`` for an empty or overlong text or
    the same text. Returns ``{id, old_status, new_id}``."""
    from memory_core.extraction import extract

    now = time.time() if now is None else now
    text = " ".join((text or "").split())
    if not text:
        raise ValueError("the corrected text is empty")
    if len(text) > EDIT_TEXT_LIMIT:
        raise ValueError(f"the corrected text is over {EDIT_TEXT_LIMIT} characters")
    items = tx.item_writes
    row = items.item(item_id)
    if row is None:
        raise NotFoundError(f"no memory item {item_id}")
    if row["status"] not in EDITABLE:
        raise ItemStateError(f"memory item {item_id} is {row['status']}: only an active item"
                             " can be edited (restore it first)")
    if text == row["text"]:
        raise ValueError(f"memory item {item_id} already says that")
    data = _data(row)
    for name in ("negated", "task_label", "label", "loose", "tentative", "one_off",
                 "lasting", "correction", "local", "dated", "quoted", "may_revise"):
        data.pop(name, None)
    kind = row["kind"]
    # a person's statement corrected is the operator's (stated); the assistant's
    # proposal reworded is still the assistant's, unconfirmed
    evidence = "admin" if row["evidence"] in fields.STATED else row["evidence"]
    speaker = "assistant" if evidence == "assistant" else data.get("speaker") or "user"
    found = next((ex for ex in extract(text, speaker=speaker) if ex.kind == kind), None)
    subject, value, value_text, unit, condition = row["subject"], None, None, None, None
    lang = row["lang"]
    if found is not None:
        data.update(fields.extraction_data(found))
        data.pop("correction", None)  # the edit supersedes its item itself
        subject, value, value_text = found.subject, found.value, found.value_text
        unit, condition, lang = found.unit, found.condition, found.lang
    data["edited_from"] = item_id
    scope = Scope(row["tenant"], row["role"], row["session"])
    new_id = items.insert_item(
        tenant=scope.tenant, role=scope.role, session=scope.session,
        thread_id=int(row["thread_id"]), kind=kind, subject=subject, text=text, value=value,
        value_text=value_text, unit=unit, condition=condition,
        source_message_id=row["source_message_id"], evidence=evidence, lang=lang, now=now,
        data=orjson.dumps(data).decode())
    _index_subject(tx, scope, new_id, subject)
    _index_terms(tx, scope, new_id, text)
    why = f"edited by admin: {reason}" if reason else "edited by admin"
    items.revision(new_id, "text", row["text"], text, f"{why} (item {item_id})", now)
    items.queue_index("item", new_id)
    supersede(tx, item_id, new_id, why, now)
    return {"id": item_id, "old_status": row["status"], "new_id": new_id}


# -- task state -----------------------------------------------------------------------
_WORD = re.compile(r"[\w\u3040-\u30ff\u3400-\u9fff]+", re.UNICODE)
_DONE = re.compile(r"(?i)\b(?:done|finished|complete|completed|fixed|resolved|shipped|merged)\b"
                   r"|完成|完了|済み|済んだ|解決|搞定|做完|終了|終わった|終わりました")
_PERFECTIVE = re.compile(r"已经|已經|(?<![开開])好了|しました|しておきました|済ませ|終え")
"""Chinese/Japanese completion aspect ("已经导出了…", "エクスポートしました"): done, unless
the line only says the work started or is not done yet (``_NOT_DONE``)."""
_NOT_DONE = re.compile(r"(?i)\b(?:start|started|starting|began|begun)\b|开始|開始|始め|着手"
                       r"|还没|還沒|没有|沒有|未|まだ|ていません")


_RESUME = re.compile(r"(?i)\b(?:resume|resumed|resuming|unpause|unpaused|unblocked)\b"
                     r"|继续|恢复|再開")
"""A TODO that sets paused or blocked work going again ("Resume the migration at step
3", 恢复迁移, 移行を再開して): it closes the blocker it names, as done closes a TODO."""
_RESUMED_WORK = re.compile(r"(?i)\s(?:at|from|with|on|after|before|since|in|once|when)\s"
                           r"|[,，、。]")
"""Where the work a resume names ends ("Resume the migration | at step 3"): what follows
says where or when, and would dilute the overlap with the blocker."""


_NUMBER_WORDS = {w: str(i) for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve".split())}
_CJK_DIGITS = {c: str(i) for i, c in enumerate("〇一二三四五六七八九十")}
_STEP_REF = re.compile(
    r"(?i)\b(?:step|phase|stage|part|milestone)\s*(?:#|no\.?\s*)?"
    r"(?P<n>\d{1,3}|" + "|".join(_NUMBER_WORDS) + r")\b"
    r"|第\s*(?P<zh>\d{1,3}|[一二三四五六七八九十])\s*(?:步|阶段|階段)"
    r"|(?:ステップ|手順|フェーズ)\s*(?P<ja>\d{1,3})"
    r"|^\s*(?P<item>\d{1,3})[.)]\s")
"""A numbered step of a plan that a task line names: "Step 2", "phase three", "step #4",
第二步, ステップ3, or the number opening a plan's list item ("2. Port the models")."""


def step_refs(text: str) -> frozenset[str]:
    """The numbers of the plan steps ``text`` names, in digits: ``{"2"}`` for "Step 2
    is done", 第二步完成了 and "2. Port the models to Pydantic"; empty when it names none.
    A step's number carries no content term (:func:`memory_core.items.overlap.terms`
    keeps no digits), so "Step 1 done" and "Step 3: drop the old id" share only "step"."""
    out = set()
    for m in _STEP_REF.finditer(text):
        raw = (m.group("n") or m.group("zh") or m.group("ja") or m.group("item")).lower()
        n = _NUMBER_WORDS.get(raw) or ("10" if raw == "十" else
                                       "".join(_CJK_DIGITS.get(c, c) for c in raw))
        out.add(n.lstrip("0") or "0")
    return frozenset(out)


def norm_task(text: str) -> str:
    """Lowercase word-run form of a task line, used to merge restatements."""
    return " ".join(_WORD.findall(text.lower()))[:300]


def merge_task_line(tx: Tx, scope: Scope, thread_id: int,
                    message_id: int | None, label: str, text: str,
                    now: float | None = None) -> None:
    """Merge one labelled line into the thread's task state.

    goal: a new goal supersedes the open one. todo: added open (a restatement is
    merged). progress: appended; when it says done/完成/完了 (or, in Chinese and
    Japanese, a completion aspect: 已经…, …しました; not 开始/開始/まだ) it closes
    the open TODO or blocker it names best — one naming the same numbered step of a
    plan (:func:`step_refs`; never one naming only other steps), else the most content terms shared
    (stemmed words, CJK bigrams; :mod:`memory_core.items.overlap`), at least 60 % of the
    smaller side and two terms (one when a side has one). blocked: added open;
    decision: appended. A todo that resumes work (:data:`_RESUME`) closes the open
    blocker it names by the same test. Lines are unique per (thread, label,
    normalised text).
    """
    now = time.time() if now is None else now
    label = label if label in TASK_LABELS else "progress"
    norm = norm_task(text)
    if not norm:
        return
    tasks = tx.tasks
    if label == "goal":
        tasks.supersede_goals(thread_id, norm, now)
    resumed = label == "todo" and _RESUME.search(text) is not None
    if resumed or (label == "progress" and (_DONE.search(text) or (
            _PERFECTIVE.search(text) and not _NOT_DONE.search(text)))):
        done = terms(_RESUME.sub(" ", _RESUMED_WORK.split(text)[0]) if resumed
                     else _DONE.sub(" ", text))
        scored = []
        said_steps = step_refs(text)
        for row in tasks.open_todos(thread_id):
            if resumed and row["label"] != "blocked":
                continue
            row_steps = step_refs(row["text"]) if said_steps else frozenset()
            if row_steps:  # "Step 2 done" closes "2. Port the models", never step 3
                if row_steps & said_steps:
                    scored.append((2.0, len(said_steps), int(row["id"])))
                continue
            entry = terms(row["text"])
            shared = len(entry & done)
            if shared and shared >= min(2, len(entry), len(done)):
                scored.append((overlap(entry, done), shared, int(row["id"])))
        best = max(scored, default=None)
        if best is not None and best[0] >= 0.6:
            for score, shared, row_id in scored:
                if (score, shared) == best[:2]:
                    tasks.close(row_id, now)
    tasks.upsert_line(tenant=scope.tenant, role=scope.role, thread_id=thread_id, label=label,
                      text=text.strip()[:500], norm=norm, message_id=message_id, now=now)


# -- agent memories ---------------------------------------------------------------------
class DuplicateKeyError(ValueError):
    """A new agent-memory key is a near-duplicate of ``match.key``; nothing written."""

    def __init__(self, match: KeyMatch) -> None:
        super().__init__(f"refused: {match.reason}; use key '{match.key}'")
        self.match = match


@dataclass(frozen=True, slots=True)
class AgentMemoryWrite:
    """Outcome of an agent-memory upsert: the key written (maybe routed) and why."""

    id: int
    key: str
    created: bool
    routed_from: str | None = None
    reason: str | None = None


def upsert_agent_memory(
    tx: Tx,
    *,
    tenant: str,
    role: str,
    category: str,
    key: str,
    title: str,
    content: str,
    on_duplicate: str = "route",
    similar: Callable[[str, str], float] | None = None,
    now: float | None = None,
) -> AgentMemoryWrite:
    """Insert or replace one agent memory atomically (the seed's insert-or-replace).

    ``category`` ∈ progress | user_preferences | memo. ``key`` is normalised with
    :func:`snake_key`. A near-duplicate of an existing key (see
    :func:`memory_core.items.agent_keys.near_duplicate`) is routed to it when ``on_duplicate`` is
    ``"route"`` or refused with :class:`DuplicateKeyError` when ``"refuse"``.
    ``content`` longer than 500 characters raises ``ValueError`` (the seed's limit;
    never silently truncated). Callers enforce who may write which category.
    """
    now = time.time() if now is None else now
    if category not in AGENT_CATEGORIES:
        raise ValueError(f"category must be one of {AGENT_CATEGORIES}, got {category!r}")
    if len(content) > CONTENT_LIMIT:
        raise ValueError(f"content is {len(content)} characters; the limit is {CONTENT_LIMIT}")
    norm = snake_key(key)
    title = title.strip() or norm
    memories = tx.agent_memories
    match = near_duplicate(norm, title, memories.keys(tenant, category, role), similar=similar)
    routed_from = None
    if match is not None:
        if on_duplicate == "refuse":
            raise DuplicateKeyError(match)
        routed_from, norm = norm, match.key
    existed = memories.find(tenant, category, norm, role)
    memory_id = memories.upsert(tenant=tenant, role=role, category=category, key=norm,
                                title=title, content=content, now=now)
    return AgentMemoryWrite(memory_id, norm, existed is None, routed_from,
                            match.reason if match else None)


def delete_agent_memory(tx: Tx, *, tenant: str, role: str, category: str,
                        key: str) -> bool:
    """Delete one agent memory; return whether it existed."""
    norm = snake_key(key)
    memory_id = tx.agent_memories.find(tenant, category, norm, role)
    if memory_id is None:
        return False
    tx.agent_memories.delete(memory_id)
    return True
