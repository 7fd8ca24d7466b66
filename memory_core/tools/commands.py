"""What an in-chat ``/memory`` command and the proxy's reply to one look like.

The proxy answers ``/memory …`` itself (``proxy.chatcommands``) and stores both the
command and its reply as evidence. They are bookkeeping, not conversation: every
search an operator or user runs (in chat, CLI, admin API, inspector) leaves them
out, so ``/memory search port`` does not find earlier ``/memory search port``
exchanges. The text shapes live here, below the proxy, so the engine's search can
apply the same test the in-chat command applies.
"""

from __future__ import annotations

PREFIX = "/memory"
REPLY_HEADER = "lcm-proxy memory"
"""Every command reply starts with this, so later searches can leave replies out."""


def is_command(text: str) -> bool:
    """True when ``text`` is an in-chat memory command (``/memory`` alone or followed
    by a space or newline; ``/memoryless`` is ordinary text)."""
    stripped = text.lstrip()
    return stripped == PREFIX or stripped.startswith(PREFIX + " ") or stripped.startswith(
        PREFIX + "\n")


def is_command_exchange(text: str) -> bool:
    """True for a stored ``/memory`` command or the proxy's reply to one: message
    text that searches leave out."""
    return is_command(text) or text.startswith(REPLY_HEADER)
