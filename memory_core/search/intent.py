"""What kind of memory a search query asks for (query intent), by deterministic rules.

A question such as "what is blocking us?" asks for the open blocker, "which broker
did we settle on?" for a decision, "what do I want from you?" for a preference,
"which test failed when you ran the suite?" for something the agent
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
  memories of category ``user_preferences``, and the constraints the user said
  stand: "Never put emojis in code comments"), also asked as a standing rule for the
  assistant's own work without "prefer": "when you review / write / mention …" in
  the present tense (the past, "when you ran / looked at", is what it saw), a
  priority order, something the user banned or ruled out, 回复我, 好む.
- ``observation``: what the agent saw when it ran a tool (``tool`` messages).

Cues are English, Chinese and Japanese words and phrases written for this module
(English case-folded between ASCII word edges, so that it also matches inside CJK
text; Chinese and Japanese as substrings). A query may carry several intents or
none; none changes nothing. The rules are deliberately narrow, because a false
intent lifts records the question did not ask for: a cue names the record kind
("blocked", "decide", "prefer"), is a phrase that only means it ("holding us up",
"settle on", "do I want from you"), or names the agent's own action ("when you
ran", "the file you read"). Bare words that also name other things are left out
("aim", "progress", "went with", "test results"; 目的 "purpose" and "destination",
在等 inside 现在等级, 障害 "outage", べき "should"). "Where / which did it
end up (used, put, deployed)" is a decision question (English "end up using",
最终用的是哪个, 最终放在哪个平台); "which X in the end" without such a verb is not
(最终哪个测试失败了 asks what the agent saw, 服务最终监听在哪个端口 for a fact).
"""

from __future__ import annotations

import re

INTENTS = ("goal", "blocked", "todo", "progress", "decision", "preference", "observation")
"""Every intent :func:`query_intents` can return."""

TASK_INTENTS = ("goal", "blocked", "todo", "progress")
"""Intents that name a ``task_state`` label of the same name."""

_EN: dict[str, str] = {
    "goal": (
        r"(?:our|my|the team's) (?:\w+ ){0,2}(?:goals?|objectives?|aims?|mission)|"
        r"(?:goals?|objectives?|aims?|mission) (?:of|for) (?:this|the|our) (?:\w+ )?"
        r"(?:work|project|task|sprint|effort|migration|change|release)|"
        r"end[- ]state|end goal|what (?:are|were) we (?:after|going for)|"
        r"(?:are|were) we (?:\w+ )?(?:aiming|trying|working|heading|headed) "
        r"(?:for|at|to|towards?)"),
    "blocked": (
        r"blocked|blockers?|blocking|blocks (?:us|the|our)|stuck|held up|"
        r"holds? (?:\w+ ){0,3}up|holding (?:\w+ ){0,3}up|hold-?ups?|"
        r"waiting on|waiting for (?:any|some|approval|sign-?off|access|them|him|her)|"
        r"(?:who|what) (?:are|is|were|was) (?:we|it|they) waiting for|"
        r"stopp(?:ing|s) us|stop us|prevent(?:s|ing)? us|(?:standing )?in our way|"
        r"standing in the way|obstacles?|impediments?|"
        r"can(?:no|'|\s+no)t (?:\w+ )?(?:move|go) (?:on|forward|ahead)"),
    "todo": (
        r"to-?dos?|left to (?:do|be done)|still (?:needs?|has|have) to be done|still to do|"
        r"remains? to be done|what remains|pending (?:tasks?|work|items?)|"
        r"what(?:'s| is) pending|next steps?|remaining (?:tasks?|work|items?|steps?)|"
        r"open tasks?|outstanding (?:tasks?|work|items?)|"
        r"what (?:do|should|will) we do next|what(?:'s| is) next"),
    "progress": (
        r"progress (?:on|of|with|so far)|(?:our|the) progress|"
        r"how (?:much progress|far along|far have we|far are we)|done so far|"
        r"finished so far|what have we (?:done|finished|completed)|"
        r"status of (?:the|this|our) (?:\w+ )?(?:work|project|task|migration|effort)|"
        r"where are we (?:on|with)|how is (?:the|our) (?:\w+ ){0,2}going"),
    "decision": (
        r"decid(?:e|ed|ing)|decisions?|settle[ds]? on|settling on|"
        r"(?:did|do|have|had) we (?:\w+ )?(?:choose|chose|pick|picked|select|selected|"
        r"go with|opt for|opted for|agree on|agree to|agreed on|land on|settle|"
        r"end up (?:with|using|choosing|picking))|"
        r"we (?:went|go|are going|will go) with|"
        r"we (?:chose|picked|selected|opted for|agreed on|landed on|ended up)"),
    "preference": (
        r"prefer(?:s|red|ence|ences)?|(?:do|did|would) i (?:want|like|prefer|favou?r)|"
        r"i (?:prefer|favou?r)|i(?:'d| would) like you to|i (?:want|asked) you to|"
        r"want from you|my (?:preferences?|style|taste)|"
        r"(?:in|for) your (?:repl(?:y|ies)|responses?)|"
        # a standing rule for the assistant's own work: "when you review / write /
        # mention …" in the present (the past, "when you ran / looked at", is what
        # it saw), a priority order, something the user banned
        r"(?:when|whenever|each time|every time) you (?:write|reply|respond|answer|"
        r"review|look over|look through|go over|go through|mention|quote|cite|format|"
        r"name|comment|explain|summari[sz]e|propose|suggest|draft)|"
        r"priority order|order of priorit(?:y|ies)|"
        r"(?:have|did) i (?:\w+ )?(?:ban(?:ned)?|forbid(?:den)?|disallow(?:ed)?|"
        r"veto(?:ed)?|ruled? out)|"
        r"i(?:'ve| have) (?:\w+ )?(?:banned|forbidden|disallowed|vetoed|ruled out)"),
    "observation": (
        r"(?:when|after|where|that|as) you (?:ran|run|executed|looked at|looked|read|opened|"
        r"checked|inspected|searched|grepped|fetched|listed|tested|viewed|saw)|"
        r"you (?:ran|executed|looked at|opened|inspected|grepped|fetched)|"
        r"(?:file|files|output|log|logs) you (?:\w+ ){0,2}"
        r"(?:saw|read|opened|looked at|checked|found|got)|"
        r"did (?:the|that|your) (?:command|run|script|tool|grep|search|build) "
        r"(?:print|output|show|return|say|find)"),
}

_CJK: dict[str, str] = {
    "goal": (r"的目标是|的目的是|目标是什么|目的是什么|最终目的|最终目标|我们的目标|"
             r"目標|狙い|ゴールは|目指して|目的は|目的って"),
    "blocked": (r"卡住|卡在|阻塞|受阻|阻碍|阻止我们|挡住|障碍|还在等|在等谁|在等待|等谁|"
                r"足止め|ブロッカー|ブロックされ|止まって|詰まって|妨げ|進めない|進められない|"
                r"何を待って|誰を待って"),
    "todo": (r"待办|还要做|还有什么没做|没做完|下一步|接下来做|接下来要做|未完成|"
             r"やること|やるべきこと|残りのタスク|残タスク|次は何を|次に何を|次にやる|未完了"),
    "progress": r"进展|进度|做到哪|完成了哪些|完成了多少|進捗|進み具合|どこまで進|どこまで終わ",
    "decision": (r"决定|选了|选的|选定|选择了|采用|敲定|最后用的|"
                 r"最终\S{0,4}?(?:用|选|采用|放在|部署在|托管在|定在)\S{0,4}?哪|"
                 r"決め|決定|選んだ|選ん|採用|(?:どれ|どの\S{0,8}?|何)にし(?:た|まし)"),
    "preference": (r"喜欢|偏好|希望你|我要你|我的习惯|我习惯|回复我|回答我|答复我|"
                   r"好み|好き|好む|好んで|してほしい|して欲しい|私への"),
    "observation": (r"你运行|你执行|你跑的|你查看|你看过|你打开|你读过|运行结果|执行结果|"
                    r"実行した|実行して|走らせた|見たファイル|開いたファイル|読んだファイル|実行結果"),
}

_ASCII_WORD = "A-Za-z0-9_"
_PATTERNS: dict[str, re.Pattern[str]] = {
    # ASCII word edges (not \b): CJK letters count as word characters to \b, so
    # "这个PR的blocker是什么" would not match a \b-bounded "blocker".
    name: re.compile(rf"(?i)(?<![{_ASCII_WORD}])(?:{_EN[name]})(?![{_ASCII_WORD}])"
                     rf"|{_CJK[name]}")
    for name in INTENTS
}
_APOSTROPHES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u02bc": "'", "\uff07": "'"})


def query_intents(query: str) -> frozenset[str]:
    """Intents of ``query`` (a search query or question, any length; see module
    docstring), a subset of :data:`INTENTS`; empty when no cue matches. Pure and
    deterministic; never raises."""
    if not query:
        return frozenset()
    text = query.translate(_APOSTROPHES)
    return frozenset(name for name, pattern in _PATTERNS.items() if pattern.search(text))


_QUANTITY_EN: dict[str, str] = {
    "time": (r"how (?:long|soon|quickly|fast|often)|how many (?:seconds|minutes|hours|days|"
             r"weeks|months|years)|for how long|what (?:timeout|delay|interval|period)"),
    "data": (r"how (?:big|large)|(?:biggest|largest|max(?:imum)?) (?:\w+ )?(?:size|file|"
             r"document|upload|attachment|payload|chunk)|"
             r"how much (?:memory|disk|storage|ram|space)"),
    "count": (r"how many (?!seconds|minutes|hours|days|weeks|months|years|percent)\w+"),
    "percent": r"what (?:percentage|percent|share|fill level|proportion)|how full",
}
_QUANTITY_CJK: dict[str, str] = {
    "time": (r"多久|多长时间|多長時間|几秒|幾秒|几分钟|几天|幾天|多少秒|多少天|多少分钟|何秒|何分|"
             r"何日|何時間|何週|何か月|期間|いつまで|どのくらい(?:の)?時間|どれくらい(?:の)?時間"),
    "data": r"多大|多少内存|多少空间|多少容量|大きさ|サイズ|容量|メモリ",
    "count": r"几台|几个|几家|几次|多少台|多少个|多少条|何台|何件|何個|何人|何回|何つ",
    "percent": r"百分之多少|百分比|多少%|何パーセント|何%|何％",
}
_QUANTITY: dict[str, re.Pattern[str]] = {
    name: re.compile(rf"(?i)(?<![{_ASCII_WORD}])(?:{_QUANTITY_EN[name]})(?![{_ASCII_WORD}])"
                     rf"|{_QUANTITY_CJK[name]}")
    for name in _QUANTITY_EN
}


def asked_quantity(query: str) -> str | None:
    """The kind of quantity ``query`` asks for: ``time``, ``data``, ``count`` or
    ``percent`` (the dimension of the stated value that answers it, compare
    :func:`memory_core.extraction.units.unit_class`), or ``None`` when it names none
    or several."""
    if not query:
        return None
    found = [name for name, pattern in _QUANTITY.items() if pattern.search(query)]
    return found[0] if len(found) == 1 else None
