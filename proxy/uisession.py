"""The inspector's session cookie: when it was issued, signed with the admin token.

Value: ``v2.<issued>.<mac>``, ``issued`` in integer UNIX milliseconds and ``mac``
the hex HMAC-SHA256, keyed by the admin token, of :data:`SESSION_LABEL` and
``issued``. Never the token itself. A session is valid while it is younger than
``proxy.ui_session_seconds``, issued after the last sign-out
(:class:`SessionRevocation`), and signed with the token in force (a new token
ends every session). A cookie of any other shape, such as the v1 cookie (a bare
HMAC, valid forever), is not a session: its holder signs in again.

Pure functions over text and numbers; :mod:`proxy.handlers.access` applies them
to requests.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass

SESSION_VERSION = "v2"
SESSION_LABEL = b"lcm-ui-session-v2\n"
"""What the MAC covers before the issue time: the version, so that no other HMAC
made with the token can pass for a session."""

FUTURE_SKEW_MS = 60_000
"""A session issued further than this in the future (the clock went back) is refused."""


def _mac(token: str, issued_ms: int) -> str:
    return hmac.new(token.encode(), SESSION_LABEL + str(issued_ms).encode(),
                    "sha256").hexdigest()


def session_value(token: str, issued_ms: int) -> str:
    """The cookie value of a session issued at ``issued_ms`` (UNIX milliseconds)."""
    return f"{SESSION_VERSION}.{issued_ms}.{_mac(token, issued_ms)}"


def session_issued(value: str, token: str) -> int | None:
    """When the session ``value`` was issued, if ``token`` signed it; else ``None``
    (another version, malformed, or a wrong MAC, compared in constant time)."""
    version, _, rest = value.partition(".")
    issued, _, mac = rest.partition(".")
    if version != SESSION_VERSION or not issued.isdigit() or len(issued) > 15:
        return None
    if not hmac.compare_digest(mac.encode(), _mac(token, int(issued)).encode()):
        return None
    return int(issued)


@dataclass
class SessionRevocation:
    """Sessions issued at or before ``not_before_ms`` are over: signing out ends
    every session of the process, since all of them carry the same one token.
    Kept in memory (a restart forgets it; sessions still expire)."""

    not_before_ms: int = 0


def session_is_live(issued_ms: int, now_ms: int, lifetime_seconds: int,
                    revocation: SessionRevocation) -> bool:
    """True when a session issued at ``issued_ms`` is valid at ``now_ms``."""
    return (revocation.not_before_ms < issued_ms <= now_ms + FUTURE_SKEW_MS
            and now_ms - issued_ms < lifetime_seconds * 1000)
