"""What an in-chat ``/memory`` command and the proxy's reply to one look like.

The proxy answers ``/memory …`` itself (``proxy.chatcommands``) and stores both the
command and its reply as evidence. They are bookkeeping, not conversation: every
search an operator or user runs (in chat, CLI, admin API, inspector) leaves them
out, so ``/memory search port`` does not find earlier ``/memory search port``
exchanges. The text shapes live here, below the proxy, so the engine's search can
apply the same test the in-chat command applies.
"""

from __future__ import annotations

import re

PREFIX = "/memory"
REPLY_HEADER = "lcm-proxy memory"
"""Every command reply starts with this, so later searches can leave replies out."""


_RAW_PREFIX = re.compile(rb"/[Mm][Ee][Mm][Oo][Rr][Yy]")


def is_command(text: str) -> bool:
    """True when ``text`` is an in-chat memory command: ``/memory`` in any letter case
    (``/Memory``, ``/MEMORY``: a phone's keyboard capitalises the first letter), alone
    or followed by whitespace. ``/memoryless`` or ``/memory-leak`` is ordinary text,
    and so is ``/memory`` anywhere but at the start of the message."""
    stripped = text.lstrip()
    n = len(PREFIX)
    return stripped[:n].lower() == PREFIX and (len(stripped) == n or stripped[n].isspace())


def may_hold_command(raw: bytes) -> bool:
    """Whether a request body's bytes may hold a ``/memory`` command in any letter case
    (a cheap test before its messages are read; False means none)."""
    return _RAW_PREFIX.search(raw) is not None


def is_command_exchange(text: str) -> bool:
    """True for a stored ``/memory`` command or the proxy's reply to one: message
    text that searches leave out."""
    return is_command(text) or text.startswith(REPLY_HEADER)
