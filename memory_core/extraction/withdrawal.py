"""Withdrawals that name the thing a rule asked for, not the rule.

:mod:`memory_core.extraction.retraction` reads withdrawals that point back at an
instruction ("Forget the word limit", "Ignore what I said about X", 200字の制限はもう
いいです). Users also withdraw a standing preference by naming only what it asked for
or forbade, and :func:`find` reads those, for :func:`retraction.find` to try after its
own forms:

* a verb of dropping before the thing, with a word that makes it standing — a time
  ("from now on", "going forward", "anymore", "for good") or a reason of the user's
  after a comma ("Drop the TL;DR, I read the whole thing anyway"): "Never mind the
  TL;DR from now on", "Skip the summary going forward". Bare, "Drop the table" and
  "Ignore the warning" are orders about the work at hand and withdraw nothing;
* a leave given again: "Paid tools are okay again", "Emojis are fine again", "You can
  use bullet points again", "Feel free to use emojis again", "Tables are no longer
  banned" — "again" (or "no longer banned") presupposes the earlier ban; a reason may
  follow ("Mondays are fine again now that the kids are back at school");
* 算了，不用附英文翻译了 (算了 then 不用 and a verb of adding to the answer: 附, 加, 带,
  标, 配, 给出), 英文翻译就不用了 (the thing, then 就/也 不用了), 表格那条不用管了 (the
  thing, then 那条 — the rule about it — and 不用(管)了 or 作废了), やっぱり絵文字はなしで
  (やっぱり, the thing, なし/いらない), 文字数の制限はもう気にしないで (気にしないで with
  もう or a rule word: 警告は気にしないで is about the warning at hand).

:data:`AFTER_REASON` finds where a withdrawal opens after a reason clause ("the python
2 boxes are gone, so ignore what I said about hints"); :func:`retraction.find` retries
its own forms there. A correction with a new value ("Scratch that, make it 14") and a
withdrawal that names nothing ("Scratch that", "Never mind, I found it") are none of
these. What is withdrawn is matched to a stored item by the writer
(:func:`memory_core.items.supersession.retraction_target`): a phrase that names no
active rule of the speaker changes nothing.

:func:`find` returns the match and the name of its group holding the phrase, or
``None``.
"""

from __future__ import annotations

import re
from typing import Final

_LEAD = r"(?>(?:(?:ok(?:ay)?|oh|also|and|so|hmm|right|alright|actually|honestly)\W+)*)"
_ASK = (r"(?:(?:please|just)\s+)?(?:(?:you\s+(?:can|may|could)|feel\s+free\s+to|let'?s"
        r"|go\s+ahead\s+and)\s+)?")
_PHRASE = r"(?:tl;\s?dr|[^,;:!?.\u2014\u2013]|\.(?=\w))"
"""A phrase's character; "TL;DR" is one word, not a clause end."""
_THING = rf"(?P<what>(?:the|that|those|your|any)\s+{_PHRASE}{{2,40}}?)"
_STANDING = (r"(?:from\s+now\s+on|going\s+forward|in\s+(?:the\s+)?future|any\s?more"
             r"|any\s+longer|for\s+good|altogether|entirely|completely"
             r"|(?:in|from)\s+(?:your|all|future|the)\s+(?:answers|replies|responses|messages))")
_REASON = r"\s*[,\u2014\u2013-]\s*(?:i|we|i'm|we're|i've|we've|nobody|no\s+one)\b"
"""A reason of the user's own after the thing ("…, I read the whole thing anyway")."""
EN_DROP_THING: Final = re.compile(
    rf"{_LEAD}{_ASK}(?:drop|ditch|skip|scrap|scratch|lose|never\s?mind|forget(?:\s+about)?)"
    rf"\s+{_THING}(?:\s+(?:thing|stuff|part|bit))?"
    rf"(?:\s+{_STANDING}(?=\s*(?:[,;.!\u2014\u2013]|$))|(?={_REASON}))", re.I)
EN_AGAIN: Final = re.compile(
    rf"{_LEAD}(?:(?P<what>{_PHRASE}{{2,40}}?)\s+(?:is|are)\s+(?:(?:fine|ok(?:ay)?|allowed"
    r"|acceptable|welcome|back\s+on\s+the\s+table)\s+again|no\s+longer\s+(?:banned|forbidden"
    r"|off[\s-]limits|prohibited))"
    rf"|(?:you\s+(?:can|may)|feel\s+free\s+to|it'?s\s+(?:fine|ok(?:ay)?)\s+to)\s+"
    rf"(?:use|add|include|suggest|recommend|mention)\s+(?P<what2>{_PHRASE}{{2,40}}?)\s+again)"
    r"(?=\s*(?:[,;.!\u2014\u2013]|$)|\s+(?:now\s+that|since|because)\s)", re.I)
AFTER_REASON: Final = re.compile(
    r"[,;\u2014\u2013]\s*(?:and\s+)?(?:so|which\s+means|hence|therefore)\s+(?=\w)"
    r"|\s+so\s+(?=(?:please\s+|just\s+)?(?:ignore|forget|disregard|drop|scratch|never\s?mind)\b)",
    re.I)
"""Where a withdrawal opens after its reason ("…are gone, so ignore what I said …")."""
_CONDITION: Final = re.compile(r"\s*(?:if|when|whenever|unless|once|until|as\s+soon\s+as)\b",
                               re.I)

_CJK_END = r"(?=[，,、；;。！!]|$)"
ZH_NEVER_MIND: Final = re.compile(
    r"(?:算了|罢了)[，,、\s]*(?:就|那就|还是)?(?:不用|不需要|不必|别|不要)(?:再)?"
    r"(?P<what>(?:附|加|带|标|配|给出)[^，,。！!？?；;]{1,30}?)了?" + _CJK_END)
ZH_NO_NEED: Final = re.compile(
    r"(?:那|那么|嗯|哦)?[，,]?(?P<what>[^，,。！!？?；;就也]{2,20}?)(?:就|也)(?:不用|不需要|不必)"
    r"(?:了|吧)" + _CJK_END)
ZH_THAT_RULE: Final = re.compile(
    r"(?P<what>[^，,。！!？?；;]{1,20}?)(?:那条|那一条|那个要求|那个规定)(?:就|也)?"
    r"(?:不用管|不用理|不用|不需要|不算|作废|取消)(?:了|吧)" + _CJK_END)
JA_AFTER_ALL: Final = re.compile(
    r"やっぱり[、,]?(?P<what>[^、，,。！!？?は]{1,20}?)は(?:もう)?(?:なし|無し|いらない|要らない"
    r"|不要|やめて)(?:です|で(?:お願いします)?|でいい(?:です)?|にして(?:ください)?)?" + _CJK_END)
JA_DONT_MIND: Final = re.compile(
    r"(?P<what>[^、，,。！!？?は]{1,30}?)は(?P<more>もう)?(?:気にしないで|気にしなくて)"
    r"(?:いい|ください|大丈夫)?(?:です)?" + _CJK_END)
_JA_RULE_END: Final = re.compile(r"(?:制限|ルール|規則|指定|縛り|条件|形式|設定|指示)$")
_ZH_ONE_OFF: Final = re.compile(r"这次|这一次|这个回答|这回|今天|暂时|先不")


def find(text: str, lang: str) -> tuple[re.Match[str], str] | None:
    """The withdrawal of a thing a rule asked for that opens ``text`` (one sentence),
    as (match, group naming it), or ``None`` (module doc)."""
    if lang == "en":
        m = EN_DROP_THING.match(text) or EN_AGAIN.match(text)
        if m is None:
            return None
        return m, "what" if m.group("what") is not None else "what2"
    forms = ((ZH_NEVER_MIND, ZH_NO_NEED, ZH_THAT_RULE) if lang == "zh"
             else (JA_AFTER_ALL, JA_DONT_MIND))
    for pattern in forms:
        m = pattern.match(text)
        if m is None or (lang == "zh" and _ZH_ONE_OFF.search(m.group(0))):
            continue
        if pattern is JA_DONT_MIND and m.group("more") is None \
                and not _JA_RULE_END.search(m.group("what")):
            continue  # 警告は気にしないで: the warning at hand
        return m, "what"
    return None


def reason_end(text: str) -> int | None:
    """Where a withdrawal may open after a reason clause ("…, so ignore what I said
    about hints"), or ``None``; a clause that opens with a condition ("If the tests
    pass, so …") gives none."""
    if _CONDITION.match(text):
        return None
    m = AFTER_REASON.search(text)
    return None if m is None else m.end()
