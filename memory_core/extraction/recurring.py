"""A condition that recurs: the order after it is a standing rule, not a one-off.

"When I ask for SQL, use Postgres syntax", "When you write Python, use type hints", "If a
test fails, paste the full traceback": the condition names a kind of occasion the user
and the assistant meet again and again — the user asking, saying or sending something,
the assistant writing, touching or answering something of a kind, anything of a kind
(led by "a", "an", "any") happening — so the order holds on each of them: a rule that
stands, keyed by its order with the condition kept as its condition. An order with no
standing word had been read as a request about the answer at hand
(:func:`memory_core.items.standing.one_off`).

A condition about this one answer is no occasion: "If it's easy, do it now", "When
you're done, run the tests", "If you have time, add a docstring", "When you fix this,
…": it points at the work at hand (it, this, that, now, done, ready, time, a chance).
In Chinese the same occasions end in 的时候/时 (我问SQL的时候, 你写Python的时候); a
condition holding 这, 现在, 完 or 有空 is the work at hand (你写完这个的时候).
"Whenever", "every time" and "each time" already say the rule stands
(:data:`memory_core.items.standing.STANDING_RULE`).

Pure: the condition as written in, a bool out.
"""

from __future__ import annotations

import re

_LEAD = r"(?:when|if|any\s?time|whenever|every\s+time|each\s+time)\s+"
_USER_ACT = (r"(?:i|we)\s+(?:ask|asks|say|request|want|need|type|mention|send|paste|share"
             r"|write|upload|forward|tag|give\s+you|show\s+you|hand\s+you)\b")
_YOUR_ACT = (r"you\s+(?:write|touch|edit|change|modify|add|review|create|generate|answer|reply"
             r"|respond|suggest|explain|give\s+me|make|commit|refactor|name|produce|show\s+me"
             r"|draft|summari[sz]e|translate|quote|cite|recommend|propose|deploy|release|push"
             r"|merge|format|document|rename|remove|delete|introduce|bump|write\s+up)\b")
_GENERIC = r"(?:a|an|any)\s+\w+"
_OCCASION = re.compile(_LEAD + r"(?:" + _USER_ACT + "|" + _YOUR_ACT + "|" + _GENERIC + ")", re.I)
_ZH_OCCASION = re.compile(
    r"(?:每当|每次|如果|要是|当)?(?:(?:我|我们)(?:问|问你|让你|请你|叫你|要|发|贴|说|提到|给你)"
    r"|你(?:写|改|动|提交|回答|回复|生成|给我|加|新增|审|评审|翻译|总结|推荐|起名|命名))"
    r"[^，,。]{1,30}(?:的时候|时)$")
_ZH_AT_HAND = re.compile(r"[这那它]|现在|今天|明天|完|好了|有空|方便")
_AT_HAND = re.compile(
    r"\b(?:it|its|it's|this|that|these|those|now|today|tonight|tomorrow|later|next|yet"
    r"|done|finished|ready|back|time|chance|can|could|easy|possible|here|there)\b", re.I)


def recurs(condition: str | None, lang: str = "en") -> bool:
    """Whether ``condition`` as written ("When I ask for SQL", 我问SQL的时候) names a
    recurring occasion rather than the answer at hand (module doc); English and
    Chinese, ``False`` for any other ``lang``."""
    if not condition:
        return False
    cond = condition.strip()
    if lang == "zh":
        return _ZH_OCCASION.match(cond) is not None and _ZH_AT_HAND.search(cond) is None
    return lang == "en" and _OCCASION.match(cond) is not None and _AT_HAND.search(cond) is None
