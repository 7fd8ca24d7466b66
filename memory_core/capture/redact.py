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
  ``slack_token`` (``xox[abprs]-``), ``google_api_key`` (``AIza…``), ``stripe_key``
  (``sk_live_``, ``rk_live_``, ``sk_test_``…), ``slack_webhook`` (the path of a
  ``hooks.slack.com/services/…`` URL)
- ``huggingface_token`` (``hf_…``), ``groq_key`` (``gsk_…``), ``xai_key`` (``xai-…``),
  ``gitlab_token`` (``glpat-…``), ``npm_token`` (``npm_…``): each prefix followed by a
  run of letters and digits longer than any name (``hf_hub_download``,
  ``xai-grok-2``, ``npm_config_cache`` stay)
- ``url_password``: the password of a URL's credentials (``postgresql://admin:…@db``;
  the scheme and user name are kept)
- ``password``: the value stated for a password, passphrase, secret, token, API key
  or client secret (``password is …``, ``DB_PASSWORD=…``, ``secret: …``, ``密码是…``,
  ``パスワードは…``, an order ``change my password to …``, ``把密码改成…``) when it
  looks like one: six or more characters with a digit or a symbol inside (``the
  token is expired`` stays as it is)

Identity and payment numbers (US SSNs, card numbers, IBANs) are masked the same way
under their own setting (``capture.redact_identity_numbers``, on by default;
:mod:`memory_core.capture.identity`): :func:`redact_text` and :func:`redact_value`
take both flags.

Matching is linear in the text's length (no nested quantifiers), so a 10 MB paste
costs one scan. Redaction is not reversible and never changes anything else: a
text without secrets comes back as the same object.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from memory_core.capture.identity import may_contain_identity_number, redact_identity_numbers

__all__ = ["PLACEHOLDER", "TRIGGER_BYTES", "contains_secret", "may_contain_secret",
           "may_need_redaction", "redact_secrets", "redact_text", "redact_value"]

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
    ("github_token", "ghp_|gho_|ghs_|ghu_|ghr_|github_pat_",
     _NB + r"(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{30,})"),
    ("slack_token", "xox", _NB + r"xox[abprs]-[A-Za-z0-9-]{10,}"),
    ("google_api_key", "AIza", _NB + r"AIza[0-9A-Za-z_-]{35}"),
    ("bearer_token", "bearer", r"(?i)(?P<keep>bearer\s+)[A-Za-z0-9._~+/=-]{12,}"),
    ("jwt", "eyJ", _NB + r"eyJ[A-Za-z0-9_-]{8,}\.eyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}"),
    ("stripe_key", "k_live_|k_test_", _NB + r"(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    ("huggingface_token", "hf_", _NB + r"hf_[A-Za-z0-9]{30,}(?![A-Za-z0-9])"),
    ("groq_key", "gsk_", _NB + r"gsk_[A-Za-z0-9]{40,}(?![A-Za-z0-9])"),
    ("xai_key", "xai-", _NB + r"xai-[A-Za-z0-9]{40,}(?![A-Za-z0-9])"),
    ("gitlab_token", "glpat-", _NB + r"glpat-[A-Za-z0-9_-]{20,}(?:\.[A-Za-z0-9_-]{2,})*"),
    ("npm_token", "npm_", _NB + r"npm_[A-Za-z0-9]{36,}(?![A-Za-z0-9])"),
    ("slack_webhook", "hooks.slack.com",
     r"(?P<keep>hooks\.slack\.com/services/)[A-Za-z0-9_/-]{16,}"),
    ("url_password", "://",
     # anchored just after each "://" (see _scan_urls): user name kept, password masked
     r"(?P<keep>[^\s:/@\[\]]{1,128}:)[^\s@/]{1,256}(?=@)"),
    ("password", "",
     # anchored at each keyword found in the ASCII-lowered text (see _scan_passwords)
     r"(?i)(?P<keep>(?<![A-Za-z])(?:pass(?:word|wd|phrase)|pwd|secret|token|api[ _-]?key|"
     r"client[ _-]?secret|密码|口令|パスワード)(?:[_-][A-Za-z0-9]{1,12}){0,2}"
     r"(?:\s+(?:is|was|are)(?:\s+now)?\s*:?|\s*[:=：]|\s*(?:是|为|は|が)"
     r"|\s+(?P<to>to|into)\s*:?|\s*(?:改成|改为|设为|设置为|换成))\s*[\"'`]?)"
     r"(?P<val>[^\s\"'`]{6,256})"),
]
_ANCHORED = {"url_password", "password"}
"""Patterns run only where their keyword is (a scan of the text with ``str.find``),
never at every position: they start with no literal the regex engine can skip to."""
_COMPILED = [(label, tuple(trigger.lower().split("|")), re.compile(pattern))
             for label, trigger, pattern in _PATTERNS]
"""``(label, triggers, pattern)``: a pattern runs when one of its triggers (``|``
separated in ``_PATTERNS``) is in the ASCII-lowered text."""
_PASSWORD_WORDS = ("pass", "pwd", "secret", "token", "api", "client", "密码", "口令",
                   "パスワード")
"""Where the ``password`` pattern may start (in the ASCII-lowered text)."""
_CASED_TRIGGERS = (
    "PRIVATE KEY", "sk-", "AKIA", "ASIA", "ABIA", "ACCA", "ghp_", "gho_", "ghs_", "ghu_",
    "ghr_", "github_pat_", "xoxa-", "xoxb-", "xoxp-", "xoxr-", "xoxs-", "AIza", "eyJ",
    "k_live_", "k_test_", "hf_", "gsk_", "xai-", "glpat-", "npm_", "hooks.slack.com", "://",
    "密码", "口令", "パスワード",
    "\\u5bc6\\u7801", "\\u53e3\\u4ee4", "\\u30d1\\u30b9\\u30ef\\u30fc\\u30c9")
_FOLDED_TRIGGERS = ("secret", "bearer", "pass", "pwd", "token", "api")
"""What every secret above needs in its text (``_FOLDED_TRIGGERS`` in the
ASCII-lowered text): most texts hold none and cost only these substring tests.
The non-ASCII words are also looked for as the ``\\uXXXX`` escapes of an
ASCII-only JSON text."""
TRIGGER_BYTES = tuple(sorted({t.lower().encode() for t in _CASED_TRIGGERS + _FOLDED_TRIGGERS}))
"""Every trigger, lower-cased, as UTF-8: a byte string that holds none of them (tested
on its lower-cased bytes; JSON escapes none of them) holds no secret
(``memory_core.capture.forwarded``'s pre-test)."""
_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")
"""Lower-case ASCII letters only: the folded text keeps every character's position."""
_AWS_PREFIXES = ("AKIA", "ASIA", "ABIA", "ACCA")


_SYMBOLS = frozenset("!#$%&*+-/=?@^_~.,;:|<>()[]{}")


def _looks_secret(value: str) -> bool:
    """A stated password-like value: not a placeholder already, and a digit or a
    symbol before its last character (trailing punctuation ends a sentence)."""
    if value.startswith("[REDACTED"):
        return False
    return any(c.isdigit() for c in value) or any(c in _SYMBOLS for c in value[:-1])


_CHANGE_VERB = re.compile(
    r"(?i)\b(?:chang(?:e|es|ed|ing)|set(?:s|ting)?|updat(?:e|es|ed|ing)|reset(?:s|ting)?"
    r"|rotat(?:e|es|ed|ing)|switch(?:es|ed|ing)?)\b")
"""Before "password to …": the order that states a new value ("Change my password
to …", "set the API token to …"); without one, "to" names a recipient."""


def _replacer(label: str) -> Any:
    placeholder = PLACEHOLDER.format(label=label)

    def sub(match: re.Match[str]) -> str:
        groups = match.groupdict()
        keep = groups.get("keep") or ""
        value = groups.get("val")
        if value is not None:
            if not _looks_secret(value):
                return match.group(0)
            if groups.get("to") and not _CHANGE_VERB.search(
                    match.string[max(0, match.start() - 48):match.start()]):
                return match.group(0)  # "send the token to server-01": no value stated
            tail = value[-1] if value[-1] in ".,;:!?)" and len(value) > 6 else ""
            return keep + placeholder + tail
        return keep + placeholder

    return sub


_REPLACERS = {label: _replacer(label) for label, _, _ in _PATTERNS}


def may_contain_secret(text: str) -> bool:
    """Cheap pre-test: ``False`` guarantees :func:`redact_secrets` would change nothing.

    The triggers hold no quote or backslash (the non-ASCII ones are also looked for
    as their ``\\uXXXX`` escapes), so the test also holds for the JSON serialisation
    of a value: no trigger in the JSON text, no secret in any of its strings.
    """
    if any(t in text for t in _CASED_TRIGGERS):
        return True
    folded = text.translate(_ASCII_LOWER)
    return any(t in folded for t in _FOLDED_TRIGGERS)


def contains_secret(text: str) -> bool:
    """True when ``text`` holds anything :func:`redact_secrets` would mask."""
    return may_contain_secret(text) and redact_secrets(text) != text


def redact_secrets(text: str) -> str:
    """Return ``text`` with every secret replaced by ``[REDACTED:<label>]``.

    Keeps the surrounding text (and the ``Bearer `` / ``secret_access_key=``
    prefixes) so that the message still reads naturally. Never raises.
    """
    if not text or not may_contain_secret(text):
        return text
    folded = text.translate(_ASCII_LOWER)  # positions kept (ASCII letters only)
    for label, triggers, pattern in _COMPILED:
        if label == "aws_access_key":
            if not any(p in text for p in _AWS_PREFIXES):
                continue
        elif label in _ANCHORED:
            starts = _starts(folded, ("://",) if label == "url_password" else _PASSWORD_WORDS)
            if starts:
                masked = _sub_at(pattern, text, [s + 3 for s in starts]
                                 if label == "url_password" else starts, _REPLACERS[label])
                if masked is not text:
                    text, folded = masked, masked.translate(_ASCII_LOWER)
            continue
        elif not any(t in folded for t in triggers):
            continue
        masked = pattern.sub(_REPLACERS[label], text)
        if masked != text:
            text, folded = masked, masked.translate(_ASCII_LOWER)
    return text


def _starts(folded: str, words: tuple[str, ...]) -> list[int]:
    """Every position of any of ``words`` in ``folded``, ascending."""
    found: set[int] = set()
    for word in words:
        at = folded.find(word)
        while at != -1:
            found.add(at)
            at = folded.find(word, at + 1)
    return sorted(found)


def _sub_at(pattern: re.Pattern[str], text: str, starts: list[int], replace: Any) -> str:
    """``text`` with ``pattern`` replaced where it matches at one of ``starts``
    (ascending; a match is never overlapped by a later one)."""
    out: list[str] = []
    done = 0
    for at in starts:
        if at < done:
            continue
        match = pattern.match(text, at)
        if match is None:
            continue
        new = replace(match)
        if new == match.group(0):  # not a secret after all (a word, not a value)
            continue
        out.append(text[done:match.start()])
        out.append(new)
        done = match.end()
    if not out:
        return text
    out.append(text[done:])
    return "".join(out)


def redact_text(text: str, *, secrets: bool = True, identity: bool = False) -> str:
    """``text`` with secrets (:func:`redact_secrets`, when ``secrets``) and identity and
    payment numbers (:func:`memory_core.capture.identity.redact_identity_numbers`, when
    ``identity``) masked; the same object when nothing matched."""
    if secrets:
        text = redact_secrets(text)
    if identity:
        text = redact_identity_numbers(text)
    return text


def may_need_redaction(text: str, *, secrets: bool = True, identity: bool = False) -> bool:
    """Cheap pre-test for :func:`redact_text` with the same flags: ``False``
    guarantees it changes nothing, in ``text`` or in any string of a JSON text."""
    return ((secrets and may_contain_secret(text))
            or (identity and may_contain_identity_number(text)))


def _text_redactor(secrets: bool, identity: bool) -> Callable[[str], str]:
    if secrets and not identity:
        return redact_secrets
    if identity and not secrets:
        return redact_identity_numbers
    if not secrets:
        return _same
    return lambda text: redact_identity_numbers(redact_secrets(text))


def _same(text: str) -> str:
    return text


def redact_value(value: Any, *, secrets: bool = True, identity: bool = False) -> Any:
    """Return a parsed JSON value with :func:`redact_text` (same flags) applied to
    every string (dict keys included). Containers are copied only where something
    changed; deep nesting is walked with an explicit stack (no recursion limit)."""
    redact = _text_redactor(secrets, identity)
    if isinstance(value, str):
        return redact(value)
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
                nk = redact(k) if isinstance(k, str) else k
                nv = _leaf(v, results, redact)
                changed = changed or nk is not k or nv is not v
                out_d[nk] = nv
            results[id(node)] = out_d if changed else node
        else:
            out_l = [_leaf(v, results, redact) for v in node]
            changed = any(a is not b for a, b in zip(out_l, node, strict=True))
            results[id(node)] = out_l if changed else node
    return results[id(value)]


def _leaf(v: Any, results: dict[int, Any], redact: Callable[[str], str]) -> Any:
    if isinstance(v, str):
        return redact(v)
    if isinstance(v, (dict, list)):
        return results[id(v)]
    return v
