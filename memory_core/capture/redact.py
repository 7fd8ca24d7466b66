"""Secret redaction: mask credentials in text before it is stored or logged.

A proxy that records every prompt also records every key a user pastes into one
("here is my AWS key…", a ``.env`` file, a PEM block). Stored evidence outlives
the conversation and is copied into indexes and exports, so secrets are replaced
by a labelled placeholder *before* they are written (``capture.redact_secrets``,
on by default). The proxy's log formatters use the same patterns.

Pure functions, no I/O. Patterns (each replaced by ``[REDACTED:<label>]``):

- ``openai_key``: ``sk-…``, ``sk-proj-…``, ``sk-svcacct-…``, ``sk-admin-…`` (20+ chars)
- ``anthropic_key``: ``sk-ant-…``
- ``aws_access_key``: ``AKIA…``/``ASIA…`` (20 chars); ``aws_secret_key``: the 40-char
  value after ``aws_secret_access_key``/``SecretAccessKey`` and similar names
- ``bearer_token``: the token after ``Bearer `` (the word ``Bearer`` is kept); ``jwt``:
  a JSON Web Token anywhere (``eyJ….eyJ….…``), e.g. in tool-call arguments
- ``private_key``: PEM blocks ``-----BEGIN … PRIVATE KEY----- … -----END …-----``
  (a block cut off before its END line is masked to the end of the text)
- ``github_token`` (``ghp_``, ``gho_``, ``ghs_``, ``ghu_``, ``ghr_``, ``github_pat_``),
  ``slack_token`` (``xox[abprs]-``), ``google_api_key`` (``AIza…``)

Matching is linear in the text's length (no nested quantifiers), so a 10 MB paste
costs one scan. Redaction is not reversible and never changes anything else: a
text without secrets comes back as the same object.
"""

from __future__ import annotations

import re
from typing import Any

__all__ = ["PLACEHOLDER", "contains_secret", "may_contain_secret", "redact_secrets",
           "redact_value"]

PLACEHOLDER = "[REDACTED:{label}]"
"""What a secret becomes; ``{label}`` names the pattern that matched."""

_NB = r"(?<![A-Za-z0-9])"
"""Not preceded by a letter or digit (an underscore may precede: ``KEY_sk-…``). Where a
pattern starts with a plain literal the same test follows the literal as a lookbehind,
which keeps the engine's fast literal scan."""

_PATTERNS: list[tuple[str, str, str]] = [
    # (label, trigger, pattern). A pattern runs only on texts that contain its
    # trigger (a plain substring test, case-folded for the ``(?i)`` ones) and starts
    # with a literal, so the regex engine skips ahead instead of trying every
    # position. Key-shaped patterns must not continue a word (``task-…``, ``desk-…``).
    # Group ``keep`` (optional) is a prefix that stays in the text.
    ("private_key", "PRIVATE KEY",
     r"-----BEGIN[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----"
     r"(?:[\s\S]*?-----END[A-Z0-9 ]{0,40} PRIVATE KEY(?: BLOCK)?-----|[\s\S]*\Z)"),
    ("anthropic_key", "sk-ant-", r"sk-ant-(?<![A-Za-z0-9]sk-ant-)[A-Za-z0-9_-]{16,}"),
    ("openai_key", "sk-", r"sk-(?<![A-Za-z0-9]sk-)(?:proj-|svcacct-|admin-)?[A-Za-z0-9_-]{20,}"),
    ("aws_access_key", "", _NB + r"(?:AKIA|ASIA|ABIA|ACCA)[0-9A-Z]{16}(?![0-9A-Za-z])"),
    ("aws_secret_key", "access",
     r"(?i)(?P<keep>secret_?access_?key[\"']?\s*[:=]\s*[\"']?)"
     r"[A-Za-z0-9/+=]{40}(?![A-Za-z0-9/+=])"),
    ("github_token", "_",
     _NB + r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
    ("slack_token", "xox", _NB + r"xox[abprs]-[A-Za-z0-9-]{10,}"),
    ("google_api_key", "AIza", _NB + r"AIza[0-9A-Za-z_-]{35}"),
    ("bearer_token", "bearer", r"(?i)(?P<keep>bearer\s+)[A-Za-z0-9._~+/=-]{12,}"),
    ("jwt", "eyJ", _NB + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
]
_COMPILED = [(label, trigger.lower(), re.compile(pattern))
             for label, trigger, pattern in _PATTERNS]
_ANY_TRIGGER = re.compile(
    r"PRIVATE KEY|sk-|AKIA|ASIA|ABIA|ACCA|gh[pousr]_|github_pat_|xox[abprs]-|AIza|eyJ"
    r"|(?i:secret_?access_?key|bearer)")
"""One scan that every secret above needs to pass: most texts fail it and cost only
this (the per-pattern work runs on the few that do not)."""
_AWS_PREFIXES = ("AKIA", "ASIA", "ABIA", "ACCA")


def _replacer(label: str) -> Any:
    placeholder = PLACEHOLDER.format(label=label)

    def sub(match: re.Match[str]) -> str:
        keep = match.groupdict().get("keep") or ""
        return keep + placeholder

    return sub


_REPLACERS = {label: _replacer(label) for label, _, _ in _PATTERNS}


def may_contain_secret(text: str) -> bool:
    """Cheap pre-test: ``False`` guarantees :func:`redact_secrets` would change nothing.

    Every trigger is ASCII without quotes or backslashes, so the test also holds for
    the JSON serialisation of a value: no trigger in the JSON text, no secret in any
    of its strings.
    """
    return _ANY_TRIGGER.search(text) is not None


def contains_secret(text: str) -> bool:
    """True when ``text`` holds anything :func:`redact_secrets` would mask."""
    return may_contain_secret(text) and redact_secrets(text) != text


def redact_secrets(text: str) -> str:
    """Return ``text`` with every secret replaced by ``[REDACTED:<label>]``.

    Keeps the surrounding text (and the ``Bearer `` / ``secret_access_key=``
    prefixes) so that the message still reads naturally. Never raises.
    """
    if not text or _ANY_TRIGGER.search(text) is None:
        return text
    folded = text.lower()  # triggers are tested case-folded: a superset, never a miss
    for label, trigger, pattern in _COMPILED:
        if label == "aws_access_key":
            if not any(p in text for p in _AWS_PREFIXES):
                continue
        elif trigger not in folded:
            continue
        text = pattern.sub(_REPLACERS[label], text)
    return text


def redact_value(value: Any) -> Any:
    """Return a parsed JSON value with :func:`redact_secrets` applied to every string
    (dict keys included). Containers are copied only where something changed;
    deep nesting is walked with an explicit stack (no recursion limit)."""
    if isinstance(value, str):
        return redact_secrets(value)
    if not isinstance(value, (dict, list)):
        return value
    # Post-order walk with an explicit stack: each container is visited once on the
    # way down (its children are queued) and once on the way up (rebuilt from its
    # children's results, which are ready by then). ``id`` keys are safe: every
    # node stays alive inside ``value`` for the whole walk.
    results: dict[int, Any] = {}
    stack: list[tuple[bool, Any]] = [(False, value)]
    while stack:
        done, node = stack.pop()
        if not done:
            stack.append((True, node))
            children = node.values() if isinstance(node, dict) else node
            for child in children:
                if isinstance(child, (dict, list)):
                    stack.append((False, child))
            continue
        changed = False
        if isinstance(node, dict):
            out_d: dict[Any, Any] = {}
            for k, v in node.items():
                nk = redact_secrets(k) if isinstance(k, str) else k
                nv = _leaf(v, results)
                changed = changed or nk is not k or nv is not v
                out_d[nk] = nv
            results[id(node)] = out_d if changed else node
        else:
            out_l = [_leaf(v, results) for v in node]
            changed = any(a is not b for a, b in zip(out_l, node, strict=True))
            results[id(node)] = out_l if changed else node
    return results[id(value)]


def _leaf(v: Any, results: dict[int, Any]) -> Any:
    if isinstance(v, str):
        return redact_secrets(v)
    if isinstance(v, (dict, list)):
        return results[id(v)]
    return v
