"""Logging: JSON lines on stderr, a request-id context variable, secret redaction.

Every record carries the id of the request being handled (``request_id``), so a
fail-open line can be matched to the client's ``x-lcm-request-id`` header.
Anything that looks like a credential is masked before it is written: bearer
tokens, ``sk-…`` style API keys, AWS access keys and ``Authorization`` values.
"""

from __future__ import annotations

import contextvars
import logging
import re
import sys
import time

import orjson

request_id_var: contextvars.ContextVar[str] = contextvars.ContextVar("request_id", default="-")

_SECRET = re.compile(
    r"(?i)(bearer\s+)[A-Za-z0-9._~+/=-]{8,}"
    r"|\b(sk|rk|pk)-[A-Za-z0-9_-]{12,}"
    r"|\bsk-ant-[A-Za-z0-9_-]{12,}"
    r"|\bAKIA[0-9A-Z]{16}\b"
    r"|(authorization[\"']?\s*[:=]\s*[\"']?)[^\"'\s,}]+"
)


def redact(text: str) -> str:
    """Mask credentials in ``text`` (keeps a ``bearer ``/``authorization:`` prefix)."""

    def sub(m: re.Match[str]) -> str:
        prefix = m.group(1) or m.group(3) or ""
        return prefix + "***"

    return _SECRET.sub(sub, text)


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
