"""Scope of a request: tenant (salted key hash), role (persona) and session.

The client's API key is never stored or logged: the tenant is the first 16 hex
digits of ``sha256(salt ‖ key)``, where the salt is ``proxy.tenant_salt`` or a
random value generated once per data directory. ``proxy.tenant`` pins one tenant
for every request (single-agent sidecars). Requests without a key belong to the
tenant ``anonymous``.

An end user (an app serving many people through one key) is named by the
``X-LCM-User`` header, else the body's ``safety_identifier``, else its ``user``, else
Anthropic's ``metadata.user_id`` (:func:`end_user`).
The stored tenant is then ``<tenant>~u_<16 hex>`` (sha256 of salt, tenant and the
id: the id itself is never stored), so every table, index and search filter that
separates tenants separates end users too (docs/scopes.md).
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Mapping
from typing import Any

import orjson

from memory_core.extraction.relative_dates import check_zone
from memory_core.items.writer import USER_SEP
from memory_core.models import Scope

log = logging.getLogger("lcm.scope")

ROLE_HEADER = "X-LCM-Role"
SESSION_HEADER = "X-LCM-Session"
USER_HEADER = "X-LCM-User"
TIMEZONE_HEADER = "X-LCM-Timezone"
_SAFE = re.compile(r"[^A-Za-z0-9_.:@/-]")


def bearer_key(headers: Mapping[str, str]) -> str:
    """Return the API key from ``Authorization: Bearer …``, else Azure's ``api-key``,
    else Anthropic's ``x-api-key``."""
    auth = headers.get("Authorization", "")
    if auth[:7].lower() == "bearer ":
        return auth[7:].strip()
    return (headers.get("api-key", "") or headers.get("x-api-key", "")).strip()


def tenant_for_key(key: str, salt: str) -> str:
    """Return the tenant id for ``key``: ``t_`` + 16 hex digits of sha256(salt ‖ key)."""
    if not key:
        return "anonymous"
    return "t_" + hashlib.sha256(f"{salt}\x00{key}".encode()).hexdigest()[:16]


def effective_salt(configured: str, stored: str) -> str:
    """The salt of tenant ids: ``proxy.tenant_salt`` when set (several proxies must
    agree on ids), else the data directory's own random salt (``stored``)."""
    return configured or stored


def clean_label(value: str, default: str, limit: int = 128) -> str:
    """Return a header value usable as a role/session label (printable, ≤ ``limit``)."""
    value = _SAFE.sub("_", value.strip())[:limit]
    return value or default


def end_user(headers: Mapping[str, str], body: Mapping[str, Any] | None = None) -> str:
    """The request's end-user id: header ``X-LCM-User``, else the body's
    ``safety_identifier``, else its ``user``, else Anthropic's ``metadata.user_id``
    unless a coding client's own device and session id fills it
    (:func:`client_session_id`) (non-empty strings only, stripped, at most 512
    characters kept); ``""`` when none is given."""
    value = headers.get(USER_HEADER, "").strip()
    if not value and body is not None:
        for field in ("safety_identifier", "user"):
            given = body.get(field)
            if isinstance(given, str) and given.strip():
                value = given.strip()
                break
        metadata = body.get("metadata")
        given = metadata.get("user_id") if not value and isinstance(metadata, Mapping) \
            else None
        if isinstance(given, str) and given.strip() and not client_session_id(given):
            value = given.strip()
    return value[:512]


_CLAUDE_CODE_ID = re.compile(r"user_[0-9a-f]{16,}_account_[0-9a-f-]*_session_[0-9a-f-]+")


def client_session_id(user_id: str) -> bool:
    """Whether an Anthropic ``metadata.user_id`` is Claude Code's own id of the
    installation and session (``user_<hash>_account_<uuid>_session_<uuid>``, or since
    its 2.1.78 a JSON object with ``device_id`` / ``session_id``), not the id of an
    end user the app serves: such a request is the key holder's own (docs/scopes.md)."""
    text = user_id.strip()
    if _CLAUDE_CODE_ID.fullmatch(text):
        return True
    if not text.startswith("{"):
        return False
    try:
        parsed = orjson.loads(text)
    except orjson.JSONDecodeError:
        return False
    return isinstance(parsed, dict) and ("session_id" in parsed or "device_id" in parsed)


def user_tenant(tenant: str, user: str, salt: str) -> str:
    """The stored tenant of ``user`` behind ``tenant``: ``tenant`` itself when
    ``user`` is empty, else ``tenant~u_`` + 16 hex digits of sha256(salt ‖ tenant ‖ user)."""
    if not user:
        return tenant
    # surrogatepass: a header's non-UTF-8 byte (read escaped) or a JSON lone surrogate
    digest = hashlib.sha256(f"{salt}\x00{tenant}\x00{user}".encode(
        "utf-8", "surrogatepass")).hexdigest()[:16]
    return f"{tenant}{USER_SEP}u_{digest}"


def resolve_scope(headers: Mapping[str, str], *, salt: str, fixed_tenant: str = "",
                  body: Mapping[str, Any] | None = None) -> Scope:
    """Build the :class:`Scope` of a request from its headers and (for the end
    user, :func:`end_user`) its body."""
    tenant = fixed_tenant or tenant_for_key(bearer_key(headers), salt)
    tenant = user_tenant(tenant, end_user(headers, body), salt)
    role = clean_label(headers.get(ROLE_HEADER, ""), "default")
    session = clean_label(headers.get(SESSION_HEADER, ""), "")
    return Scope(tenant=tenant, role=role, session=session)


def request_zone(headers: Mapping[str, str]) -> str | None:
    """The IANA time zone the request's messages are said in, from its
    ``X-LCM-Timezone`` header (``America/Los_Angeles``), or ``None`` when the request
    names none (the ``capture.timezone`` setting then holds). A zone the host's zone
    database does not know (an offset such as ``-08:00``, a typo) is ignored with a
    warning carrying the request id: a chat never fails over it."""
    value = headers.get(TIMEZONE_HEADER, "").strip()
    if not value:
        return None
    try:
        check_zone(value)
    except ValueError:
        log.warning("%s %r is not a time zone this host knows (an IANA name such as"
                    " America/Los_Angeles); the configured zone is used", TIMEZONE_HEADER,
                    value[:64])
        return None
    return value
