"""Turn SQLite rows into :class:`IndexDoc` objects (what the indexes see).

The stored evidence is never altered: extra searchable words (a message's ``name``
— the speaker — and, when enabled, its day as "8 May 2023") go to the doc's
``extra`` field, the name also to ``speaker`` (an item's ``speaker`` is the name
of the turn it was said in, ``data.speaker``), and the vector encodes
``"<name>: <text>"``, after the turn before it as ``"<name>: <text>"`` on a line of
its own (``embed_context`` > 0 characters of that turn; user and assistant turns
only): a reply such as "Even as a child I learned on my own" means little without
the question it answers (contextual embedding of a turn; measured in
docs/evaluation/README.md, "Search quality and speed"). For the text index
(``context=True``) a message also carries
the text of its parent — the turn before it — cut at ``CONTEXT_CHARS`` (an answer
often follows the turn that names the topic). Not its children: they arrive later,
and re-indexing the parent then would leave deleted documents that skew BM25's
statistics, so a rebuild would no longer equal incremental indexing; the turn
after is covered at query time by ``neighbor_weight``. Rows that must leave
the indexes (missing/purged rows, items with status ``retracted``) come back as
deletions. ``EMBED_RECIPE`` is part of the model id stored with each vector
(:func:`embed_key`, which adds the ``embed_context`` setting): bump it when
``embed_text`` changes so vectors are recomputed.
"""

from __future__ import annotations

import time
import unicodedata
from collections.abc import Iterable
from typing import Any

from memory_core.extraction.lexicon import TASK_LABEL, TASK_LABELS
from memory_core.extraction.prepare import fold_traditional, fold_width
from memory_core.search.base import IndexDoc
from memory_core.store.api import Tx

EMBED_RECIPE = "r1"
TEXT_RECIPE = "k5"
"""Version of what :func:`row_to_doc` puts in the text index's ``extra`` field and of
how :func:`memory_core.search.fulltext.normalise` reads a text (k5: full-width ASCII
folded); it is stamped on the text index, so a change rebuilds it from SQLite on the
next start."""
CHAT_ROLES = frozenset({"user", "assistant"})
"""Message roles whose turn before is embedded with them (not tool output or a system
prompt, which would swamp a short turn)."""
CONTEXT_CHARS = 1000
"""Characters of each neighbouring turn put in a message's ``context`` field."""
DELETED_STATUSES = frozenset({"retracted", "deleted", "purged", "merged", "edited"})

# Document expansion of task-state lines ("Goal: …", "Blocked: …", "阻塞：…"): the
# label's synonyms from the extraction lexicon (written for extraction, DESIGN §5),
# plus the plain words people use when they *ask* about that field rather than write
# it as a heading — dictionary synonyms in the three languages. The long-session
# eval's task questions ("Are we waiting on anybody?", "眼下有什么事情卡住我们了吗？")
# were in view when these were chosen; several of its paraphrases ("what's holding
# the work up", "what are we trying to deliver") are deliberately not covered.
_ASKED_AS = {
    "goal": "aim purpose target 目的 狙い",
    "blocked": "stuck waiting wait 等待 待ち 足止め",
    "todo": "remaining left pending 剩下 未完成 残り",
}
_LABEL_KEYS = {label: " ".join(sorted({p for p, lb in TASK_LABELS.items() if lb == label}
                                      | set(_ASKED_AS.get(label, "").split())))
               for label in set(TASK_LABELS.values())}


def task_label_keys(text: str) -> str:
    """Extra index words for the task-state labels that open a line of ``text``
    (``"Blocked: the security team…"`` → ``"blocked blocker … stuck waiting …"``);
    ``""`` when no line starts with a label. Only the text index sees them, and only
    for user and assistant turns (tool output and system prompts are not task state)."""
    labels = []
    for line in fold_traditional(fold_width(text)).splitlines():
        m = TASK_LABEL.match(line.strip())
        if m is not None:
            label = TASK_LABELS.get(" ".join(m["label"].casefold().split()))
            if label is not None and label not in labels:
                labels.append(label)
    return " ".join(_LABEL_KEYS[label] for label in labels)


def embed_key(model_id: str, embed_context: int = 0) -> str:
    """The model id stored with each vector: the embedder's model id, ``EMBED_RECIPE``
    and, when turns are embedded with the turn before, its character budget
    (``|ctx500``). A change of any part re-embeds (the vector index and the
    ``embeddings`` cache are keyed by it)."""
    key = f"{model_id}|{EMBED_RECIPE}"
    return f"{key}|ctx{embed_context}" if embed_context > 0 else key


def _spoken(name: object, text: str) -> str:
    """``"<name>: <text>"`` for a named turn, else the text."""
    return f"{name}: {text}" if name else text


def _speaker(kind: str, row: Any) -> str:
    """The doc's ``speaker``: a message's ``name``, an item's ``data.speaker`` (the
    ``name`` of the turn it was said in), else ``""``."""
    who = row["name"] if kind == "message" else row["speaker"] if kind == "item" else None
    return who.replace("_", " ") if isinstance(who, str) else ""


def day_text(ts: float) -> str:
    """Return "8 May 2023" for a UNIX time (UTC), the form people ask about."""
    t = time.gmtime(ts)
    return f"{t.tm_mday} {time.strftime('%B %Y', t)}"


def row_to_doc(kind: str, row: Any, *, index_dates: bool, max_chars: int) -> IndexDoc:
    """Build the doc of one row of ``kind`` (a mapping as
    :meth:`~memory_core.store.api.IndexSource.doc_rows` returns)."""
    name = row["name"] or ""
    text = row["text"] or ""
    extra_parts = [name.replace("_", " ")] if isinstance(name, str) and name else []
    if kind == "item":
        extra_parts.extend(str(v) for v in (row["unit"], row["condition"]) if v)
    if kind == "message" and row["msg_role"] in CHAT_ROLES and (keys := task_label_keys(text)):
        extra_parts.append(keys)
    if index_dates and row["created_at"]:
        extra_parts.append(day_text(float(row["created_at"])))
    embed = _spoken(name, text) if kind == "message" else text
    cols = row.keys()
    before = (row["embed_parent"] or "") if "embed_parent" in cols else ""
    if before.strip() and embed.strip() and row["msg_role"] in CHAT_ROLES:
        # a blank turn gets no vector (doctor's expectation): the turn before's
        # text alone would stand for a message that says nothing
        own = embed[:max_chars]
        room = max_chars - len(own) - 1  # the turn's own text is never cut for it
        if room > 0:
            embed = _spoken(row["embed_parent_name"], before)[:room] + "\n" + own
    context = (row["ctx_parent"] or "") if "ctx_parent" in cols else ""
    return IndexDoc(
        kind=kind,
        ref_id=int(row["id"]),
        tenant=row["tenant"],
        role=row["role"],
        text=text,
        extra=" ".join(extra_parts),
        session=row["session"] or "",
        thread_id=int(row["thread_id"] or 0),
        created_at=float(row["created_at"] or 0.0),
        msg_role=row["msg_role"] or "",
        hidden=bool(row["hidden"]),
        embed_text=unicodedata.normalize("NFC", embed[:max_chars]).strip(),
        speaker=_speaker(kind, row),
        context=context,
    )


def load_docs(
    tx: Tx, kind: str, ids: Iterable[int], *, index_dates: bool, max_chars: int,
    context: bool = False, embed_context: int = 0,
) -> tuple[list[IndexDoc], list[int]]:
    """Return ``(docs to upsert, ref_ids to delete)`` for these row ids of ``kind``.

    ``tx``: the store's operation groups (a read job's). ``context``: fill a
    message's ``context`` (neighbouring turns; the text index wants it, the vector
    index does not). ``embed_context``: characters of the turn before that a
    message's ``embed_text`` starts with (0: none; the vector index)."""
    wanted = list(dict.fromkeys(int(i) for i in ids))
    docs: list[IndexDoc] = []
    for row in tx.index_source.doc_rows(kind, wanted,
                                        context_chars=CONTEXT_CHARS if context else 0,
                                        embed_chars=int(embed_context)):
        if row["status"] in DELETED_STATUSES:
            continue
        docs.append(row_to_doc(kind, row, index_dates=index_dates, max_chars=max_chars))
    kept = {d.ref_id for d in docs}
    return docs, [i for i in wanted if i not in kept]


def scan_ids(tx: Tx, kind: str, after: int, limit: int) -> list[int]:
    """Return up to ``limit`` row ids of ``kind`` greater than ``after`` (rebuild scan)."""
    return tx.index_source.ids_after(kind, after, limit)
