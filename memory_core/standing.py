"""What an item is: standing or one-off, long-term or local to its conversation, whose.

Read from a ``memory_items`` row (a mapping with ``kind``, ``text``, ``evidence``,
``data``…). Used by the block (:mod:`memory_core.assemble`) to choose items; pure, no I/O.

- A **standing rule** says it stands: "always", "never", "from now on", "in this
  project", "by default", 以后/总是/一律, 今後/常に/毎回… A request about the current
  answer ("Reply in JSON with key answer.") is a one-off: it is kept and searchable,
  but is not put in every block, nor in another conversation's.
- A **labelled** item leads with an ordinal label ("Run 39: …", "step 3", "第3步"): one
  of a series in one conversation (``data.label``, set by the extraction).
- **Conversation-local** items (assistant proposals, labelled items, one-off
  requests) are shown only in the thread they were said in and its forks
  (docs/scopes.md); long-term items in every thread of the tenant, end user and role.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

STANDING_RULE = re.compile(
    r"\b(?:always|never|from now on|going forward|from today|in future|in the future"
    r"|by default|every time|each time|whenever|in this (?:project|repo|repository|codebase"
    r"|team|company)|for this (?:project|repo|repository)|as a rule|must|mustn't|at all times"
    r"|anymore|no longer|as a standard|standard practice)\b"
    r"|以后|今后|往后|从现在起|从今天起|总是|永远|每次|一律|始终|默认|必须|务必|一直"
    r"|今後|常に|いつも|毎回|必ず|これから|今日から|原則|絶対", re.I)
"""Words by which a rule says it stands (see module doc)."""


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


def is_standing_rule(text: str | None) -> bool:
    """Whether ``text`` states a rule that stands beyond the current answer."""
    return bool(text) and STANDING_RULE.search(text or "") is not None


def speaker(row: Any) -> str:
    """Who said the item: the source message's ``name``, else ``""`` (its role)."""
    value = data_of(row).get("speaker")
    return value if isinstance(value, str) else ""


def label(row: Any) -> str:
    """The item's ordinal label ("run 39"), else ``""``."""
    value = data_of(row).get("label")
    return value if isinstance(value, str) else ""


def one_off(row: Any) -> bool:
    """A constraint that does not say it stands and fixes no number."""
    return (row["kind"] == "constraint" and row["value"] is None
            and not is_standing_rule(row["text"]))


def conversation_local(row: Any) -> bool:
    """Shown only in its own thread (module doc): assistant proposals, labelled
    items and one-off requests."""
    return row["evidence"] == "assistant" or bool(label(row)) or one_off(row)
