"""Numbers a statement tells about the world, not ones the user fixed.

Issue 24, kind 3: a statement is not standing merely because it holds a number. Beside
the readings of :mod:`memory_core.items.readings` (what a run gave, what rose, a
reading of a moment), these describe how things are, and the next message may tell
them otherwise:

- **progress** of a job (:data:`PROGRESS`: "about 60% through", "3 of 12 tables
  migrated", 进度60%, 60%完了): task state, which the next report replaces;
- an **observed rate** (:data:`RATE`: "fails about one time in five", "1 in 20 builds",
  "flakes twice a day", 五次里有一次, 5回に1回): how often something happened, not a
  number the user set;
- an **inventory** (:data:`INVENTORY`: "365 folders, about 1.2 TB in total", "a total
  of 40 invoices", 总共3万条, 合計で40件): the size of what exists, found by search
  when it matters;
- a **plan or a forecast** (:data:`FORECAST`: "the next release is 4.2, planned for
  May", "slated for Q3", 计划在五月, 予定です): what is expected to happen, not a
  quantity the user fixed; a recurring slot ("every Monday") is no forecast;
- the **rules of a game** (:data:`GAME`: "the goal of the game is to reach 100
  points", "first player to 10 wins", 游戏规则, ゲームのルール): the game's numbers;
- a thing's **capability** (:data:`CAPABILITY`: "it doesn't support Python 3",
  它不支持 Python 3, 3.12に対応していない): a fact about a tool, not the user's
  choice; "we don't support Python 2" (the user's own policy) is no such fact;
- the **time of a past event** (:data:`EVENT_TIME`: "Incident closed at 03:52, total
  customer impact 1h38m").

A word of setting (:data:`memory_core.items.readings.SETTING`: a budget, a limit, a
target) still fixes the number, and so does a correction that restates the user's own
number against a mis-said one (:func:`restated`: "it's 14 seats, not 12"). Read by
:func:`memory_core.items.readings.reports_number` and the block
(:func:`memory_core.assembly.block.standing_weight`). Pure, no I/O.
"""

from __future__ import annotations

import re

__all__ = ["CAPABILITY", "EVENT_TIME", "FORECAST", "GAME", "INVENTORY", "PROGRESS", "RATE",
           "RESTATED", "describes", "restated"]

_COUNT_WORD = (r"(?:\d[\d.,]*|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
               r"|fifteen|twenty|thirty|fifty|a\s+hundred|hundred)")

PROGRESS = re.compile(
    r"\b\d[\d.,]*\s*%\s+(?:of\s+the\s+way\s+)?(?:through|done|complete|completed|finished"
    r"|migrated|processed|copied|uploaded|downloaded|indexed|imported|exported|synced|there)\b"
    r"|\b(?:halfway|half\s+way|partway|part\s+way|most\s+of\s+the\s+way)\s+(?:through|done)\b"
    r"|\b\d[\d,]*\s+(?:of|out\s+of)\s+\d[\d,]*\s+(?:[\w-]+\s+){0,2}?(?:done|migrated|processed"
    r"|copied|uploaded|downloaded|indexed|imported|exported|synced|finished|complete|completed"
    r"|reviewed|fixed|merged)\b"
    r"|进度|已(?:经)?完成(?:了)?\s*(?:百分之|\d)|完成了\s*\d[\d.]*\s*%"
    r"|進捗|\d[\d.]*\s*%\s*(?:完了|終わ|済み|進ん)", re.I)
"""How far a job has got (module doc, "progress")."""

RATE = re.compile(
    r"\b" + _COUNT_WORD + r"\s+(?:(?:time|run|build|job|attempt|request|call|try|deploy)s?\s+)?"
    r"(?:in|out\s+of)\s+(?:every\s+)?(?:two|three|four|five|six|seven|eight|nine|ten|twenty"
    r"|fifty|a\s+hundred|hundred|a\s+thousand|thousand|\d[\d,]*)"
    r"(?!\s*(?:%|percent|points?|stars?|(?:min|minute|hour|second|day|week|month|year)s?)\b)"
    r"(?=\s*(?:$|[,.;:!?)]|(?:runs?|builds?|jobs?|attempts?|requests?|calls?|tries|times"
    r"|deploys?|cases?|users?|on|of|or|and|but|so)\b))"
    r"|\b(?:fails?|failing|flakes?|flaking|crash(?:es)?|crashing|breaks?|breaking|errors?"
    r"|times?\s+out|timing\s+out|hangs?|hanging)\s+(?:about\s+|around\s+|roughly\s+|maybe\s+"
    r"|at\s+least\s+)?(?:once|twice|" + _COUNT_WORD + r"\s+times)\s+(?:a|an|per|every)\s+"
    r"(?:day|night|week|hour|run|build|month)\b"
    r"|[一二三四五六七八九十百千\d]+\s*次(?:里|中|里面|当中)?(?:有|会)?\s*[一两二三四五六七八九十\d]+\s*次"
    r"|\d+\s*回に\s*\d+\s*回", re.I)
"""How often something happens, as seen (module doc, "observed rate"); a rating out of
a scale is :data:`memory_core.items.readings.SCALE`."""

INVENTORY = re.compile(
    r"\b(?:in\s+total|(?:in\s+all|altogether|all\s+told)(?=\s*(?:$|[,.;:!?)]))"
    r"|a\s+total\s+of|total(?:l?ing)?\s+(?:of\s+)?(?:[a-z-]+\s+){0,2}?"
    r"(?:about\s+|around\s+|roughly\s+|some\s+|over\s+)?\d)"
    r"|总共|一共|合计|总计|共计|合計|全部で", re.I)
"""A count or a size summed up over what exists (module doc, "inventory")."""

_RECURRING = re.compile(
    r"\b(?:every|each|daily|weekly|monthly|nightly|hourly|yearly|annually"
    r"|(?:mon|tues|wednes|thurs|fri|satur|sun)days)\b|每|毎", re.I)

FORECAST = re.compile(
    r"\b(?:planned|slated|expected|projected|forecast|pencilled|penciled"
    r"|due\s+out|set\s+to\s+(?:land|ship|launch|release|come\s+out))\s+(?:for|in|on|around|by)\b"
    r"|\b(?:the|our|their|its)\s+(?:next|upcoming|coming|following)\s+(?:release|version"
    r"|major|minor|sprint|milestone|launch|drop|iteration)\s+(?:is|will\s+be|'s)\b"
    r"|计划(?:在|于)|预计(?:在|于)?|定于|予定(?:です|だ|で|では)|見込み", re.I)
"""A plan or a forecast, of the user's world or someone else's (module doc)."""

GAME = re.compile(
    r"\b(?:goal|object|objective|aim|point|rules?|winner)\s+of\s+(?:the|this|our|a|that)\s+"
    r"(?:game|match|round|puzzle|quiz|contest|competition|tournament|race|challenge|level)\b"
    r"|\bfirst\s+(?:player|team|one|person|side)\s+to\s+(?:reach|get|score|hit|make)\b"
    r"|\b(?:to|you)\s+win\s+(?:the\s+)?(?:game|match|round)\b"
    r"|游戏(?:的)?(?:规则|目标)|(?:比赛|游戏)(?:的)?(?:赢家|胜者)|ゲームの(?:ルール|目的|目標)", re.I)
"""The rules or the aim of a game (module doc, "rules of a game")."""

CAPABILITY = re.compile(
    r"\b(?:it|this|that|they|these|those|which|the\s+(?:[\w.-]+\s+){0,2}?[\w.-]+)\s+"
    r"(?:still\s+)?(?:doesn't|does\s+not"
    r"|don't|do\s+not|can't|cannot|won't|isn't|is\s+not|aren't|are\s+not)\s+(?:yet\s+)?"
    r"(?:even\s+)?(?:support|work\s+(?:with|on)|run\s+on|compatible\s+with"
    r"|available\s+(?:on|for))\b"
    r"|\b(?:it|this|that|which)\s+(?:only\s+)?(?:supports|is\s+(?:only\s+)?compatible\s+with)\b"
    r"|(?<!我)(?<!我们)(?<!咱们)(?:不|没有|还不)(?:支持|兼容)|(?:に)?対応して(?:いない|ない|いません)|非対応"
    r"|サポートして(?:いない|ない|いません)", re.I)
"""What a tool or a library can work with (module doc, "capability")."""


EVENT_TIME = re.compile(
    r"(?<!\bis\s)(?<!\bare\s)(?<!\bbe\s)(?<!\bget\s)(?<!\bgets\s)"
    r"\b(?!(?:scheduled|planned|fixed|pinned|capped|limited|timed|booked|reserved|slated"
    r"|needed|required|expected|allowed)\b)[a-z]{3,}ed\s+(?:at|around)\s+(?:about\s+)?"
    r"\d{1,2}[:.h]\d\d\b", re.I)
"""When a past event happened, to the minute ("Incident closed at 03:52", "the job
started at 9:05"): a report of the event, not a time the user set; a passive of the
present ("reports are generated at 06:00") or a recurring slot is a schedule."""


def describes(text: str | None) -> bool:
    """Whether a numeric statement describes how things are (module doc): a job's
    progress, an observed rate, an inventory, a plan or a forecast (not a recurring
    slot), a game's rules, a thing's capability, or when a past event happened."""
    t = text or ""
    if (PROGRESS.search(t) is not None or RATE.search(t) is not None
            or INVENTORY.search(t) is not None or GAME.search(t) is not None
            or CAPABILITY.search(t) is not None):
        return True
    # a recurring slot ("generated at 06:00 every day") is a schedule, not an event
    return ((FORECAST.search(t) is not None or EVENT_TIME.search(t) is not None)
            and _RECURRING.search(t) is None)



RESTATED = re.compile(
    r"\b\d[\d.,]*(?:\s*[a-z%]+){0,2}\s*,?\s+not\s+\d[\d.,]*\b"
    r"|\d[\d.,]*\s*\S{0,3}\s*[，,]\s*(?:而)?不是\s*\d|\d[\d.,]*\s*\S{0,3}\s*ではなく", re.I)
"""A number the speaker puts in place of one they mis-said ("it's 14 seats, not 12",
"13 to 15 March, not 12 to 14", 是7个，不是6个)."""

_NEWS = re.compile(r"\bnow\b|现在|目前|今は|現在", re.I)


def restated(text: str | None) -> bool:
    """Whether a correction restates the speaker's own number against a mis-said one
    (:data:`RESTATED`), not a new reading ("The error count is 41 now, not 12": a
    "now" makes it news): its number is the user's, whatever reading word tells why
    ("…, we added two last week")."""
    t = text or ""
    return RESTATED.search(t) is not None and _NEWS.search(t) is None
