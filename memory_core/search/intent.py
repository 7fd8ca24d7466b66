"""What kind of memory a search query asks for (query intent), by deterministic rules.

A question such as "what is blocking us?" asks for the open blocker, "which broker
did we settle on?" for a decision, "how should you format timestamps for me?" for a
preference, "which test failed when you ran the suite?" for something the agent
observed (a tool output). Hybrid search matches words and meanings; it does not know
that a question asks for a *kind* of record, so a blocker phrased without the
blocker's words ("is anything stopping us?") ranks below any fact that shares a
word with it. :func:`query_intents` names those kinds from cue phrases, the way the
extraction rules (``memory_core.extraction``) name what a message states, and
:class:`~memory_core.search.service.SearchService` ranks the records of the kinds
asked for first among memory (``intent_boost``), adding the open task lines of an
asked-for label as candidates when neither index found them.

Intents (``INTENTS``):

- ``goal``, ``blocked``, ``todo``, ``progress``: the task-state label asked for
  (``task_state.label``; open lines only).
- ``decision``: decisions (items of kind ``decision``, task lines ``decision``).
- ``preference``: the user's preferences (items of kind ``preference``, agent
  memories of category ``user_preferences``).
- ``observation``: what the agent saw when it ran a tool (``tool`` messages).

Cues are English, Chinese and Japanese words and phrases written for this module
(English matched on word boundaries, case-folded; Chinese and Japanese as
substrings). A query may carry several intents or none; none changes nothing. The
rules are deliberately narrow: a cue names the record kind ("blocked", "decide",
"prefer"), a phrase that only means it ("holding us up", "settle on", "do I want
from you"), or the agent's own action ("when you ran", "the file you read").
"""

from __future__ import annotations

import re

INTENTS = ("goal", "blocked", "todo", "progress", "decision", "preference", "observation")
"""Every intent :func:`query_intents` can return."""

TASK_INTENTS = ("goal", "blocked", "todo", "progress")
"""Intents that name a ``task_state`` label of the same name."""

_EN: dict[str, str] = {
    "goal": (
        r"goals?|objectives?|aim(?:s|ing)?|end[- ]state|end goal|mission|"
        r"trying to (?:achieve|accomplish|deliver|build|ship|get done|reach)|"
        r"working (?:towards?|for)|what (?:are|were) we (?:after|going for)|"
        r"the point of (?:this|the) (?:work|project|task)"),
    "blocked": (
        r"block(?:ed|er|ers|ing)|stuck|held up|hold(?:ing)? (?:\w+ ){0,3}up|"
        r"hold-?ups?|waiting on|waiting for (?:any|some|approval|sign-?off|access|them|him|her)|"
        r"(?:who|what) (?:are|is|were|was) (?:we|it|they) waiting for|"
        r"stopp(?:ing|s) us|stop us|"
        r"prevent(?:s|ing)? us|in (?:our|the) way|obstacles?|impediments?|"
        r"can(?:no|')t (?:move|go) (?:on|forward|ahead)"),
    "todo": (
        r"to-?dos?|left to do|still (?:need|have) to (?:do|be done)|next steps?|"
        r"remaining (?:tasks?|work|items?|steps?)|open tasks?|"
        r"outstanding (?:tasks?|work|items?)|what(?:'s| is) left"),
    "progress": (
        r"progress|done so far|finished so far|how far (?:along|have we|are we)|"
        r"what have we (?:done|finished|completed)"),
    "decision": (
        r"decid(?:e|ed|ing)|decisions?|settle[ds]? on|settling on|"
        r"(?:did|do|have) we (?:choose|chose|pick|picked|select|selected|go with|"
        r"opt for|agree on|land on)|chose|chosen|went with|go(?:ing)? with|"
        r"opted for|agreed on|landed on"),
    "preference": (
        r"prefer(?:s|red|ence|ences)?|favou?r(?:s|ed|ite)?|"
        r"(?:do|did|would) i (?:want|like|prefer|favou?r|ask)|"
        r"i(?:'d| would) like|i (?:want|like|asked) (?:you|them|it|my|the)|"
        r"(?:want|asked) from you|"
        r"(?:in|for) your (?:repl(?:y|ies)|answers?|responses?|messages?)|"
        r"(?:my|the user's) (?:style|taste)"),
    "observation": (
        r"(?:when|after|where|that) you (?:ran|run|executed|looked at|looked|read|opened|"
        r"checked|inspected|searched|grepped|fetched|listed|tested|viewed|saw)|"
        r"you (?:ran|executed|looked at|opened|inspected|grepped|fetched)|"
        r"(?:file|files|output|log|logs|results?) you (?:\w+ ){0,2}"
        r"(?:saw|read|opened|looked at|checked|found|got)|came back|"
        r"(?:command|tool|test|script) (?:output|results?)"),
}

_CJK: dict[str, str] = {
    "goal": r"目标|目的|想要实现|要达成|最终要|目標|狙い|ゴール|目指|めざし",
    "blocked": (r"卡住|卡在|阻塞|受阻|阻碍|挡住|拦住|障碍|在等|等着|"
                r"足止め|ブロッカー|ブロック|止まって|詰まって|妨げ|障害|進めない|進められない"),
    "todo": r"待办|还要做|还剩|剩下|下一步|未完成|やること|やるべき|残って|残り|次にやる|未完了",
    "progress": r"进展|进度|做到哪|完成了哪些|進捗|進み具合|どこまで|終わった",
    "decision": (r"决定|选了|选的|选定|选择了|采用|敲定|定了|"
                 r"決め|決定|選んだ|選ん|採用|にした"),
    "preference": (r"喜欢|偏好|希望你|我要你|我想要|你应该|应该用|习惯|"
                   r"好み|好き|してほしい|して欲しい|希望|私への|べき"),
    "observation": (r"你运行|你执行|你跑的|你查看|你看过|你打开|你读过|运行结果|执行结果|"
                    r"実行した|実行して|走らせた|見たファイル|開いた|読んだ|実行結果"),
}

_PATTERNS: dict[str, re.Pattern[str]] = {
    name: re.compile(rf"(?i)\b(?:{_EN[name]})\b|{_CJK[name]}") for name in INTENTS
}


def query_intents(query: str) -> frozenset[str]:
    """Intents of ``query`` (a search query or question, any length; see module
    docstring), a subset of :data:`INTENTS`; empty when no cue matches. Pure and
    deterministic; never raises."""
    if not query:
        return frozenset()
    text = query.replace("\u2019", "'")
    return frozenset(name for name, pattern in _PATTERNS.items() if pattern.search(text))
