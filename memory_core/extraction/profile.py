"""A profile written as label lines: "Name: Priya", "City: Berlin", "Job: nurse".

Users introduce themselves the way a form or a bio is written: a header such as "About
me:" and lines of a personal attribute, a colon and its value, often as a list. No rule
read such a line as a statement (a label and a colon read as a speaker or a title), so a
whole profile stored nothing. :func:`inserts` gives what the lines leave out, the owner
and the verb ("Name: Priya" read as "My Name is: Priya"); :mod:`.contractions` puts the
words in and the pipeline quotes the user's line as typed.

Only where the lines are a profile: one or more under a header about the user ("About
me:", "My details:"), or two or more that are the whole message. A single "Name: …" line
alone may be a form the user talks about, and lines that come with other words may be a
record a task is about ("Create a user with these fields:\nName: John\nRole: admin") or
another person's, so they are left. The label must name an attribute a person
has (:data:`_LABEL`), so "Note: …", "Error: …" or "Goal: …" are never read so.

Pure: a message in, ``(offset, words)`` insertions out.
"""

from __future__ import annotations

import re

_LABEL = re.compile(
    r"^(?P<lead>[ \t]*(?:[-*\u2022+][ \t]+)?)"
    r"(?P<label>(?:(?:full|first|last|middle|preferred|display|native|home|work|job|day"
    r"|current|date\s+of)\s+)?"
    r"(?:name|nickname|age|city|location|country|hometown|address|job|title|role"
    r"|occupation|profession|position|company|employer|team|department|email|e-mail"
    r"|phone|mobile|pronouns|timezone|time\s+zone|birthday|birth|languages?|diet"
    r"|allergies|nationality|school|university|major|degree|pets?|hobbies|interests))"
    r"(?P<colon>[ \t]*:)[ \t]+(?=[^\s<\[{])", re.I | re.M)
"""A line of a personal attribute, a colon and a value (not a template slot: "Name:
<Username>" is row 183's, left unfilled)."""
_HEADER = re.compile(
    r"^[ \t]*(?:(?:a\s+(?:bit|little)\s+|some\s+(?:info|details)\s+)?about\s+me"
    r"|(?:my\s+)?(?:profile|details|info|bio|background))[ \t]*:[ \t]*$", re.I | re.M)
"""A header line about the user ("About me:", "My details:", "Profile:")."""


_KEY_LINE = re.compile(
    r"^[ \t]*(?:[-*\u2022+][ \t]+)?[\w.-]+(?:[ \t]+[\w.-]+)?[ \t]*:(?:[ \t]|$)", re.M)
"""Any line that opens with a key and a colon ("hosts: web", "apt:", "  replicas: 3")."""


_BULLET = re.compile(r"[-*\u2022+]")
"""A list bullet: any of them marks the same indent."""


def _one_form(text: str, lines: list[re.Match[str]]) -> bool:
    """Whether the label lines are one profile: each label once, all at one indent, and
    at least as many as the message's other key lines (a YAML or config paste has
    "name:" nested at several depths among keys no person has: "hosts:", "apt:",
    "state:")."""
    labels = [m.group("label").lower() for m in lines]
    indents = {_BULLET.sub("-", m.group("lead")) for m in lines}
    if len(set(labels)) < len(labels) or len(indents) > 1:
        return False
    others = len(_KEY_LINE.findall(text)) - len(lines) - len(_HEADER.findall(text))
    return others < len(lines)


def inserts(text: str) -> list[tuple[int, str]]:
    """Where a profile's label lines (module doc) take their owner and verb: ``(offset,
    words)`` pairs, "My " before each label and " is" (" are" for a plural label) before
    its colon; empty when the message holds no profile."""
    if ":" not in text:
        return []
    lines = list(_LABEL.finditer(text))
    if not lines:
        return []
    if _HEADER.search(text, 0, lines[0].start()) is None and (
            len(lines) < 2 or any(line.strip() and not _LABEL.match(line)
                                  for line in text.splitlines())):
        return []
    if not _one_form(text, lines):
        return []
    out: list[tuple[int, str]] = []
    for m in lines:
        label = m.group("label").lower()
        plural = label.endswith("s") and not label.endswith("ss")
        out += [(m.start("label"), "My "), (m.start("colon"), " are" if plural else " is")]
    return out
