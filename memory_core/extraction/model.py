"""The value type extraction produces, and the closed vocabularies of its fields.

Kept apart from the rules so the engine can import the type without the regex tables.
"""

from __future__ import annotations

from dataclasses import dataclass

KINDS: tuple[str, ...] = (
    "fact", "decision", "constraint", "preference", "question", "proposal", "task",
)
"""The kinds of what extraction finds to keep: the ``memory_items.kind`` vocabulary plus
``task`` (a line merged into task state)."""

STATEMENT_KINDS: tuple[str, ...] = ("fact", "decision", "constraint", "preference")
"""The kinds that state something the user holds: what a correction compares, and what
may take a withdrawn item's place."""

RETRACTION = "retraction"
"""The one other ``Extracted.kind``: the user withdraws an earlier item ("Forget the
200-word limit"). Nothing is stored for it; the item it names is retracted, or replaced
by the stance that follows it."""

TASK_LABELS: tuple[str, ...] = ("goal", "progress", "todo", "blocked", "decision")
"""Every value ``Extracted.task_label`` takes; matches ``task_state.label``."""

LANGS: tuple[str, ...] = ("en", "zh", "ja")


ELISION = " … "
"""What joins a topic lead and a later clause of its sentence in an item's ``text``
(:class:`Extracted`): each side is a substring of the message."""


@dataclass(frozen=True, slots=True)
class Extracted:
    """One memory item found in one clause of a message.

    ``text`` is the clause exactly as written (a substring of the input; a clause after a
    topic lead is quoted with its lead, joined by :data:`ELISION`: "Status of the cache
    layer: … the pool size is 208"). ``subject`` is a
    short normalised key (lowercase, stopwords and values dropped; Chinese folded to
    simplified script) that the engine compares by equality or containment to link a
    correction or a conflict to the statement it revises. ``value``/``value_text``/``unit``
    describe the primary quantity of the clause; ``condition`` is the qualifying phrase as
    written ("when offline", "离线时", "オフラインの場合"). ``correction`` marks an explicit
    revision of an earlier statement (or an unmarked update: "now", "switched to", 改成, 今は);
    ``negated`` marks prohibitions and dislikes. ``label`` is an ordinal label that leads
    the sentence ("run 39", "step 3", "第3步"): the item is one of a series, its subject
    starts with the label, and it is local to its conversation. ``loose`` marks a
    value the clause does not fix: a unitless number bound to no subject ("hello 429",
    "rate limit me 2"; :func:`memory_core.extraction.quantity.loose`) — kept, but not a
    quantity the user set. ``replaces``/``replacement``: the old and the new value a
    replacement names ("We replaced RabbitMQ with Kafka": "RabbitMQ", "Kafka";
    :mod:`memory_core.extraction.replacement`), as written; the engine supersedes the
    item that states the old value. ``tentative`` marks a fact or decision the speaker
    hedged ("I think …", "maybe", 可能, たぶん; :func:`memory_core.extraction.modality.hedged`):
    kept and searchable, never standing, never overriding a firm statement.
    ``one_off`` marks a request about the current answer that holds a number ("Give
    me 5 ideas …"; :func:`memory_core.extraction.modality.answer_request`).
    ``lasting`` marks a fact that holds for every later answer without a number: a
    restriction of the speaker's own diet or health ("I'm vegetarian", 我对花生过敏).
    ``topic``: the key of a topic lead the subject starts with ("Staging: the port is
    5432": ``"staging"``; :mod:`memory_core.extraction.topic`): a correction under it
    revises that topic's own attribute only.
    ``local`` marks a fact or decision the speaker scoped to the task or conversation
    at hand ("For this task the bucket is …", 本次任务中…, 今回のタスクでは…;
    :func:`memory_core.extraction.modality.about_this_task`): kept and searchable, but
    task state of that conversation, not shown in another one.
    ``dated`` marks the user's own plan or obligation for a day they name ("Tomorrow I
    have to file the VAT report", 明天我得去银行; :mod:`memory_core.extraction.dated`):
    a fact recalled in any conversation where it matches, never a standing line.
    ``quoted`` marks another person's words the user passes on: a line another speaker
    leads in a pasted chat that the user does not adopt
    (:func:`memory_core.extraction.transcript.other_lines`); kept and searchable, never
    the user's standing rule.
    ``edit`` marks an order to change a value the speaker holds ("Change my favourite
    colour to blue"; :data:`memory_core.extraction.lexicon.EN_EDIT_ORDER`): a
    correction, stored only where it replaces an earlier statement of the same key.
    A ``retraction`` ("Forget the 200-word limit"; :mod:`memory_core.extraction.retraction`)
    names what it withdraws in ``replaces``, as written; ``said`` marks one that names it
    as something the user said ("what I said about British English"), which may be any
    kind of statement, not only a rule; ``every`` one that withdraws all the user said
    about it ("Forget everything about tennis"), not only the best match.
    """

    kind: str
    text: str
    subject: str | None
    value: float | None = None
    value_text: str | None = None
    unit: str | None = None
    condition: str | None = None
    correction: bool = False
    task_label: str | None = None
    lang: str = "en"
    negated: bool = False
    label: str | None = None
    loose: bool = False
    replaces: str | None = None
    replacement: str | None = None
    tentative: bool = False
    one_off: bool = False
    lasting: bool = False
    said: bool = False
    local: bool = False
    topic: str | None = None
    dated: bool = False
    every: bool = False
    edit: bool = False
    quoted: bool = False
