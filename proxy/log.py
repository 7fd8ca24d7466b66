"""Logging: JSON lines on stderr, a request-id context variable, secret redaction.

Every record carries the id of the request being handled (``request_id``), so a
fail-open line can be matched to the client's ``x-lcm-request-id`` header.
Anything that looks like a credential is masked before it is written: bearer
tokens, OpenAI/Anthropic/AWS keys, PEM private keys (``memory_core.capture.redact``) and
``Authorization``/``api-key`` values. Our own code never passes a key to a logger
(tests capture every record); masking in the formatters is the second line.
"""

from __future__ import annotations

import contextvars
import logging
import re
import sys
import time

import orjson

from memory_core.capture.redact import redact_secrets

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")

_LOG_SECRET = re.compile(
    r"(?i)(?P<auth>(?:proxy-)?authorization|x-api-key|api[-_]key)"
    r"(?P<sep>[\"']?\s*[:=]\s*[\"']?)(?P<scheme>(?:basic|bearer|token|digest)\s+)?"
    r"[^\"'\s,}]+"
    r"|(?P<bearer>\bbearer\s+)[A-Za-z0-9._~+/=-]{8,}"
    r"|\b(?:sk|rk|pk)-[A-Za-z0-9_-]{12,}"
)
"""What logs mask beyond :mod:`memory_core.capture.redact`: header values (``Authorization:
Basic …``, ``api-key: …``) and shorter tokens than stored text needs to mask."""


def redact(text: str) -> str:
    """Mask credentials in ``text``: every pattern of :func:`memory_core.capture.redact.
    redact_secrets` (keys, tokens, PEM private keys), then header values and short
    tokens as ``***`` (the ``Authorization:`` / ``Bearer `` prefix is kept)."""

    def sub(m: re.Match[str]) -> str:
        if m.group("auth"):
            return m.group("auth") + m.group("sep") + (m.group("scheme") or "") + "***"
        return (m.group("bearer") or "") + "***"

    return _LOG_SECRET.sub(sub, redact_secrets(text))


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ts, level, logger, request_id, msg (+ exc)."""

    def format(self, record: logging.LogRecord) -> str:
        out = {
            "ts": round(record.created, 3),
            "level": record.levelname.lower(),
            "logger": record.name,
            "request_id": getattr(record, "request_id", None) or request_id_var.get(),
            "msg": redact(record.getMessage()),
        }
        if record.exc_info:
            out["exc"] = redact(self.formatException(record.exc_info))
        return orjson.dumps(out).decode()


class PlainFormatter(logging.Formatter):
    """Human-readable lines with the request id, secrets masked."""

    def format(self, record: logging.LogRecord) -> str:
        stamp = time.strftime("%H:%M:%S", time.localtime(record.created))
        rid = getattr(record, "request_id", None) or request_id_var.get()
        line = f"{stamp} {record.levelname:<7} {record.name} [{rid}] {record.getMessage()}"
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return redact(line)


def setup_logging(level: str = "INFO", json: bool = True) -> None:
    """Send the ``lcm`` and ``aiohttp`` loggers to stderr in the chosen format."""
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if json else PlainFormatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper(), logging.INFO))
