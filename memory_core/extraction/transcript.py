"""A team chat pasted as one message: whose line is whose is no part of what it says.

"Kim: going forward, every incident gets a postmortem within 48 hours.\\nRaj: agreed."
is a transcript: each line leads with its speaker's name and a colon. Read as a topic
lead, the name would become the key of what follows ("kim incident gets postmortem",
刘洋), so it would pair with no later statement of the same rule. A message is a
transcript when it has two lines or more, every line leads with a short name and a
colon (a capitalised word; two to four Han or kana) — but for lines before the first
such line and after the last, the message's frame ("Here's our team chat from this
morning:" above, "Can you summarise it?" below) —, the names are not all one, and
one line is a reply (an acknowledgement: "agreed", "👍", 同意, 了解です): a listing of
topics ("Budget: 5k\\nOwner: Dana") has no reply line. The names are blanked in the
scan (:func:`mask`), so the rest of each line is read as it would be alone; a line in
its speaker's first person ("Jonas: I'll take the ticket") keeps its name, since what it
says is that person's own. A name is written as one (capital then lower case: not a log
level, "ERROR:"), and is no field label of a header, a form or a config ("From:",
"Subject:", "Status:", "Step:", 状态, 件名): such a block is no chat. The user's own label
("me:", 我：, 私：) is a speaker of a chat and is blanked in any message, so the line is
read as the user's own words ("me: from now on I review PRs before lunch").

Whose words a line holds is :func:`other_lines`: where a message shows who says what
(two speakers' leads or more), a line another person leads is their words, which the
user passes on, unless the line right below it acknowledges it (a reply adopts the
line just above it, not every line before): the user's own ("me: ok, agreed, …",
私：了解), else anyone's (a team's agreement: "Raj: agreed.") where the user does not
answer otherwise. A message led by one name alone ("Tom: my team moved the standup") is that
speaker's own, the way a group chat names its sender.
"""

from __future__ import annotations

import itertools
import re

__all__ = ["mask", "other_lines", "speaker_spans"]

STAMP = r"\[?\d{1,2}:\d{2}(?::\d{2})?(?:[ \t]?[AaPp][Mm])?\]?[ \t]+"
"""A chat log's time of day before a speaker ("[10:32] ", "10:32:05 ", "[9:05 PM] ")."""
_PREFIX = re.compile(rf"[ \t]*(?P<stamp>{STAMP})?(?:(?P<self>(?i:me)|我|私|自分)"
                     r"|(?P<name>(?(stamp)[A-Za-z]|[A-Z])[a-z]{1,15}"
                     r"|[\u3040-\u30ff\u4e00-\u9fff]{2,4}))[ \t]*[:：][ \t]*(?=\S)")
"""A line's lead: the user's own label or a name of one word, a colon, text after it on
the same line; after a time of day (:data:`STAMP`, a chat log's) the name may be
written in lower case ("[10:32] dana: …")."""
_LABELS = frozenset((
    # an email's or a message's header
    "from to cc bcc subject date sent re fwd reply attachment attachments"
    # a form's, a ticket's or a config's field
    " name version status state step stage phase note notes title type kind owner"
    " priority severity result outcome summary description env environment host port"
    " mode region image tag tags id category assignee reporter due deadline"
    # a log's level
    " trace debug info notice warn warning error fatal critical"
    " 发件人 收件人 抄送 主题 日期 名称 版本 状态 步骤 备注 结果 标题 类型 负责人"
    " 差出人 宛先 件名 日付 名前 状態 手順 備考 結果 種類 担当").split())
"""Field labels of a header, a form, a config or a log (lower case): never a speaker."""
_REPLY = re.compile(
    r"(?:👍|👌|🙏|✅|\+1\b|(?:ok(?:ay)?|agreed?|sure|yes|yep|yeah|nice|great|cool|ugh|lgtm"
    r"|sounds\s+good|got\s+it|noted|maybe|thanks|same|done|ack|sgtm"
    r"|works\s+for\s+(?:me|us)|fine\s+(?:by|with)\s+(?:me|us))\b"
    r"|同意|赞成|好的?|收到|可以|没问题|了解|承知|賛成|いいですね|わかりました|OKです)", re.I)
"""What a reply line opens with: an acknowledgement of the line before it."""
_FIRST_PERSON = re.compile(r"(?:i|i'm|i'll|i've|i'd|me|my)\b|我(?!们)|私|僕|俺", re.I)
"""A line in the speaker's own first person ("Jonas: I'll take the ticket"): what it
says is the named speaker's, not the user's, so the name stays in its key."""


def _chat(text: str) -> tuple[list[tuple[int, int, re.Match[str]]], bool]:
    """The led lines of ``text`` as ``(line start, line end, lead match)``, and whether
    they make a chat's shape: consecutive (blank lines between them allowed, no line
    that no speaker leads, no field label), with lines before the first and after the
    last that no speaker leads taken as the message's frame ("Here's our team chat
    from this morning:", "Can you summarise it?")."""
    rows: list[tuple[int, int, re.Match[str] | None]] = []
    pos = 0
    for line in text.split("\n"):
        if line.strip():
            m = _PREFIX.match(line)
            if m is not None and m.group("self") is None \
                    and m.group("name").lower() in _LABELS:
                m = None
            rows.append((pos, pos + len(line), m))
        pos += len(line) + 1
    led = [i for i, (_, _, m) in enumerate(rows) if m is not None]
    if not led:
        return [], False
    inner = rows[led[0]:led[-1] + 1]
    return ([(a, b, m) for a, b, m in inner if m is not None],
            all(m is not None for _, _, m in inner))


def speaker_spans(scan: str) -> list[tuple[int, int]]:
    """The ``[start, end)`` spans of each line's speaker lead ("Kim: ") where ``scan``
    is a transcript (module doc), else those of the user's own label ("me: "; often
    ``[]``)."""
    if ":" not in scan and "：" not in scan:
        return []
    leads, chat = _chat(scan)
    spans: list[tuple[int, int]] = []
    own: list[tuple[int, int]] = []
    names: set[str] = set()
    replied = False
    for pos, _, m in leads:
        start = m.start("stamp") if m.group("stamp") else -1
        if m.group("self") is not None:
            own.append((pos + (start if start >= 0 else m.start("self")), pos + m.end()))
            spans.append(own[-1])
            names.add("")
        else:
            if _FIRST_PERSON.match(m.string, m.end()) is None:
                spans.append((pos + (start if start >= 0 else m.start("name")), pos + m.end()))
            elif start >= 0:  # the name stays in the key, the time of day does not
                spans.append((pos + start, pos + m.end("stamp")))
            names.add(m.group("name"))
        replied = replied or _REPLY.match(m.string, m.end()) is not None
    return spans if chat and len(names) >= 2 and replied else own


def mask(scan: str) -> str:
    """``scan`` with each speaker lead of a transcript, and the user's own label, blanked
    (same length)."""
    spans = speaker_spans(scan)
    if not spans:
        return scan
    chars = list(scan)
    for start, end in spans:
        chars[start:end] = " " * (end - start)
    return "".join(chars)


def other_lines(text: str) -> list[tuple[int, int]]:
    """The ``[start, end)`` spans of the lines of ``text`` that another person says and
    nobody adopts (module doc): in a chat (every line from the first led by a speaker to
    the last, two speakers or more, one the user's own label "me:", 我：, 私：, or one
    line a reply; no field label), each line a name leads, up to the next lead or the
    end of the last led line (a question below the chat is the user's), unless the
    lines right below it open with an acknowledgement (:data:`_REPLY`: "agreed", 👍,
    了解) and adopt it (:func:`_adopted`: the user's own, "me: ok, agreed", or
    anyone's, a team's agreement the user passes on, unless the user's next line
    answers otherwise, "me: I'll push back"). ``[]`` for most messages."""
    if ":" not in text and "：" not in text:
        return []
    rows, chat = _chat(text)
    if not chat:
        return []  # a line no speaker leads amid the chat: notes or a form, no chat
    leads = [(pos, m.group("self") is not None, _REPLY.match(m.string, m.end()) is not None)
             for pos, _, m in rows]
    names = {"" if m.group("self") is not None else m.group("name") for _, _, m in rows}
    if len(names) < 2 or not ("" in names or any(ack for _, _, ack in leads)):
        return []  # a chat shows the user's own label or a reply (module doc)
    spans: list[tuple[int, int]] = []
    for i, (start, own, _) in enumerate(leads):
        if own or _adopted(leads, i):
            continue
        spans.append((start, leads[i + 1][0] if i + 1 < len(leads) else rows[-1][1]))
    return spans


def _adopted(leads: list[tuple[int, bool, bool]], i: int) -> bool:
    """Whether the line ``leads[i]`` (``(start, the user's own, a reply)`` each) is
    adopted: the replies right below it (each acknowledges the line above it, the
    first this one) hold the user's own, or hold anyone's and the user's next line
    after them is no answer of another kind ("me: I'll push back"). A reply adopts
    the line just above it, not every line before: in "Alice: …\nBob: …\nme:
    agreed" only Bob's line is the user's."""
    run = list(itertools.takewhile(lambda lead: lead[2], leads[i + 1:]))
    if any(own for _, own, _ in run):
        return True
    after = leads[i + 1 + len(run)] if i + 1 + len(run) < len(leads) else None
    return bool(run) and not (after is not None and after[1])
