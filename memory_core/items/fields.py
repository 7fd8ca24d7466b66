"""What an item's row records beside its text: the ``data`` JSON that the extraction and
the writer leave on a ``memory_items`` row.

Owns reading those fields (who said the item, its ordinal label, whether its number is
loose, whether it is hedged or dated, every source message and occasion, the items a
correction may revise) and writing the extraction's marks (:func:`extraction_data`).
Apart from the predicates (:mod:`memory_core.items.standing`,
:mod:`memory_core.items.readings`, :mod:`memory_core.items.accounts`) because it changes
with the row's shape, they with the language. Pure, no I/O.
"""

from __future__ import annotations

from typing import Any

import orjson


def data_of(row: Any) -> dict[str, Any]:
    """The row's ``data`` JSON as a dict (``{}`` when absent or unreadable)."""
    try:
        raw = row["data"]
    except (KeyError, IndexError):
        return {}
    if not raw:
        return {}
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


STATED = frozenset({"user", "admin"})
"""``evidence`` of an item a person stated: the user's own words, or an operator's
correction of them (``admin``: :func:`memory_core.items.writer.edit_item`), which
ranks, stands and is revised as the statement it corrects; an ``assistant`` proposal
is not one."""


def speaker(row: Any) -> str:
    """Who said the item: the source message's ``name``, else ``""`` (its role)."""
    value = data_of(row).get("speaker")
    return value if isinstance(value, str) else ""


def edited_from(row: Any) -> int | None:
    """The item an operator's edit replaced (``data.edited_from``, set by
    :func:`memory_core.items.writer.edit_item`), else ``None``: the text is then the
    operator's, not what its source message said."""
    value = data_of(row).get("edited_from")
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def may_revise(row: Any) -> list[int]:
    """The items a correction may revise (``data.may_revise``, ids oldest first): it
    named only an attribute's head that two or more items qualify ("my font size" after
    "editor font size" and "terminal font size"), so the user is asked which; ``[]``
    for any other item (:func:`memory_core.items.supersession.correction_target`).
    Read for each of a block's chosen items on every request: a ``data`` text that does
    not hold the key is not parsed."""
    try:
        raw = row["data"]
    except (KeyError, IndexError):
        return []
    if not raw or (isinstance(raw, str) and "may_revise" not in raw):
        return []
    value = data_of(row).get("may_revise")
    if not isinstance(value, list):
        return []
    return [int(v) for v in value if isinstance(v, int)]


def zone(row: Any) -> str:
    """The IANA time zone the item was said in (``data.tz``), else ``""`` (UTC)."""
    value = data_of(row).get("tz")
    return value if isinstance(value, str) else ""


def label(row: Any) -> str:
    """The item's ordinal label ("run 39"), else ``""``."""
    value = data_of(row).get("label")
    return value if isinstance(value, str) else ""


def loose(row: Any) -> bool:
    """Whether the item's number is one its statement does not fix (``data.loose``:
    "try 5", "hello 429"; :func:`memory_core.extraction.quantity.loose`). Rows stored
    before the extraction marked it read ``False``."""
    return bool(data_of(row).get("loose"))


def tentative(row: Any) -> bool:
    """Whether the user hedged the item (``data.tentative``: "I think …", "maybe";
    module doc). Rows stored before the extraction marked it read ``False``."""
    return bool(data_of(row).get("tentative"))


def dated(row: Any) -> bool:
    """Whether the item is the user's plan or obligation for a day they named
    (``data.dated``: "Tomorrow I have to file the VAT report";
    :mod:`memory_core.extraction.dated`): recalled where it matches, with the date its
    words meant, never a standing line (its day passes). Rows stored before the
    extraction marked it read ``False``."""
    return bool(data_of(row).get("dated"))


def quoted(row: Any) -> bool:
    """Whether the item is another person's words the user passed on (``data.quoted``: a
    line another speaker leads in a pasted chat; ``Extracted.quoted``). Rows stored before
    the extraction marked it read ``False``."""
    return bool(data_of(row).get("quoted"))


def extraction_data(ex: Any) -> dict[str, Any]:
    """The ``data`` JSON fields an extracted item (``Extracted``) carries into its row:
    ``negated``, ``task_label``, ``label``, ``loose``, ``tentative``, ``one_off``,
    ``lasting``, ``local``, ``dated``, ``quoted`` and ``correction`` (a correction or update: it may
    revise an item it shares no words with, ``memory_core.items.writer.revise_by_meaning``)
    where set (the speaker is the caller's)."""
    data: dict[str, Any] = {"negated": bool(getattr(ex, "negated", False))}
    for name in ("task_label", "label"):
        if getattr(ex, name, None):
            data[name] = getattr(ex, name)
    if getattr(ex, "loose", False) and getattr(ex, "value", None) is not None:
        data["loose"] = True
    for name in ("tentative", "one_off", "lasting", "correction", "local", "dated", "quoted"):
        if getattr(ex, name, False):
            data[name] = True
    return data


def sources(row: Any) -> list[int]:
    """Every message that stated the item, oldest first: ``data.sources`` (kept when
    a restatement is merged into it, :func:`memory_core.items.writer.store_extracted`),
    else its ``source_message_id`` alone."""
    value = data_of(row).get("sources")
    if isinstance(value, list) and value:
        return [int(v) for v in value if isinstance(v, int)]
    src = row["source_message_id"]
    return [] if src is None else [int(src)]


def occasions(row: Any) -> list[float]:
    """When each conversation that said the item said it (``data.occasions``, UNIX
    seconds, oldest first), kept once a restatement from another conversation is
    merged into it (:func:`memory_core.items.writer.store_extracted`), one per
    conversation (``data.occasion_threads``: their thread ids, in step); ``[]`` for an
    item said in one conversation. A thread that only re-sent a source with its
    history adds none (``data.resent_threads``)."""
    value = data_of(row).get("occasions")
    if not isinstance(value, list):
        return []
    return [float(v) for v in value if isinstance(v, (int, float))]
