"""Three gates on what stands, read from a statement's structure, not its topic.

A standing item is the user's own rule or setting, addressed to the work, holding past
the current answer (:mod:`memory_core.items.standing`). Each gate checks one of those
three parts and never looks at what the statement is about:

- **Who speaks** (:func:`others_words`): words the user passes on are material, not
  the user's rule: another speaker's line of a pasted chat that nobody adopts ("Dan:
  going forward I want all tickets in hours\nme: I'll push back"; the extraction marks
  it, :func:`memory_core.extraction.transcript.other_lines`), a rule relayed from
  someone else about someone other than the user ("My doctor says people my age should
  always …"; a relayed value, "Priya says the limit is 50 now", is news), or a habit whose subject is a named person ("Jonas always uses 4
  spaces"). Block quotes and "X wrote:" leads never reach an item at all.
- **When it holds** (:func:`bound_to_now`, :func:`past_report`): a request or a need
  bound to the present moment ("quiz me on 10 words now", "I need this out in ten
  minutes", "just this once, …") holds for this answer, as does an order whose result
  is to be handed back ("Run it 50 times and show me the summary"); a number the speaker reports
  from an event they tell in the past tense ("I paid $40 for the tickets", "Spent
  $1200 on flights", 今日は12時間も寝てしまった) is history, not a value they set.
- **What it asks** (:func:`single_request`): a wish for one thing ("I'd like a
  refund", "Could I get a new charger?") is a request about the case at hand.

A statement that says it stands (:func:`memory_core.items.standing.is_standing_rule`:
"from now on", "always", …) passes the time gates: it says for how long it holds.
Used by :func:`memory_core.assembly.block.standing_weight`. Pure, no I/O.
"""

from __future__ import annotations

import re
from typing import Any

from memory_core.items.accounts import HEARSAY, OWN_SOURCE
from memory_core.items.fields import loose, quoted
from memory_core.items.readings import PROVISIONED, SETTING, USER_CHANGE
from memory_core.items.standing import is_standing_rule, lasting

__all__ = ["bound_to_now", "others_words", "past_report", "result_order", "single_request"]


_SELF_CLAUSE = re.compile(r"\s*(?:that\s+)?(?:i|i'm|i've|i'd|me|my|we|we're|our|us)\b", re.I)
"""A relayed claim whose clause is about the speaker ("My doctor says I must …"): it is
the user's own restriction, told with its source."""

_RELAYED_RULE = re.compile(
    r"\b(?:should|shouldn't|must|mustn't|always|never|ought\s+to|(?:have|has|need|needs)\s+to)\b"
    r"|应该|应当|必须|一定要|べき|必ず|なければ", re.I)
"""A relayed clause that states a rule ("… says you should always rebase"): advice in
someone else's voice. A relayed value ("Priya says the limit is 50 requests per second
now") is news of the user's world, read by :mod:`memory_core.items.readings`."""

_TOLD_SELF = re.compile(r"\b(?:me|us)$", re.I)
"""A relay addressed to the speaker ("My manager told me to always cc her"): what it
binds is the user's own work."""

_NAMED_HABIT = re.compile(
    r"^\W*(?-i:[A-Z][a-z]{1,15})(?:\s+and\s+(?-i:[A-Z][a-z]{1,15}))?\s+"
    r"(?:always|never|usually|only|often|rarely)\s+[a-z]+s\b")
"""A habit said of a named person in the third person ("Priya always reviews on
Fridays", "Jonas always uses 4 spaces"): a fact about them, not the user's rule."""


def others_words(row: Any) -> bool:
    """Whether an item is someone else's words the user passes on (module doc, "Who
    speaks"): another speaker's line of a pasted chat that the user did not adopt
    (:func:`memory_core.items.fields.quoted`), a claim relayed about someone other than
    the user (:data:`memory_core.items.accounts.HEARSAY`) that states a rule
    (:data:`_RELAYED_RULE`; not one told to the user,
    :data:`_TOLD_SELF`, nor the project's own documents,
    :data:`memory_core.items.accounts.OWN_SOURCE`), or a named person's habit
    (:data:`_NAMED_HABIT`)."""
    text = row["text"] or ""
    if quoted(row) or _NAMED_HABIT.search(text) is not None:
        return True
    own = OWN_SOURCE.sub(" ", text)
    hearsay = HEARSAY.search(own)
    return hearsay is not None and _TOLD_SELF.search(hearsay.group(0)) is None \
        and _SELF_CLAUSE.match(own, hearsay.end()) is None \
        and _RELAYED_RULE.search(own, hearsay.end()) is not None


_MOMENT = re.compile(
    r"\b(?:right\s+now|at\s+the\s+moment|(?:just\s+)?this\s+(?:once|time)|today|tonight"
    r"|this\s+(?:morning|afternoon|evening)|asap|immediately|straight\s+away"
    r"|in\s+(?:\d+|an?|one|two|three|five|ten|fifteen|twenty|thirty|a\s+few)\s+"
    r"(?:minutes?|mins?|hours?|hrs?)"
    r"|now(?=\s*(?:[.!?,;)]|please\b|$)))"
    r"|今すぐ|今回だけ|今だけ|今日中に|现在就|马上|立刻|这次|今天之内", re.I)
"""Words that bind what is asked to the moment it is asked in: "right now", "this
time", "today", "in ten minutes", a "now" that ends its clause ("quiz me now")."""

_ONCE = re.compile(
    r"\b(?:(?:just|only)\s+)?this\s+(?:once|time)\b|\bjust\s+once\b"
    r"|\bfor\s+this\s+[\w-]+(?:\s+[\w-]+)?\s+only\b|\b(?:only|just)\s+for\s+this\s+[\w-]+"
    r"|这次|这一次|这回|今回|今度だけ", re.I)
"""Words that limit what is said to one occasion ("this time", "for this deploy only",
这次, 今回): unlike "today", they bind a decision too ("This time let's reply in
English"); a scope that lasts ("for this repo only") says it stands and passes."""

_REQUEST = re.compile(
    r"\b(?!(?:like|love|for|to|with|at|of|about|from|by|than|as|on|in)\b)[a-z]+\s+(?:me|us)\b"
    r"|\b(?:can|could|would|will)\s+you\b|\bplease\b"
    r"|\b(?:i|we)\s+(?:really\s+)?(?:need|want)\s+(?:this|that|it|the|my|our|a|an)\b"
    r"|\b(?:i|we)(?:'d|\s+would)\s+like\b"
    r"|^\W*(?:just\s+)?(?:skip|give|send|show|tell|write|draft|make|list|quiz|check|fix|run"
    r"|find|book|translate|summari[sz]e|explain)\b"
    r"|(?:して|してください|下さい|ください|给我|帮我|请)", re.I)
"""A clause that asks something of the assistant ("quiz me", "can you …", "please"), a
need of the speaker's ("I need this hotfix out …"), or a leading order ("Give …")."""


_OWN_STATE = re.compile(
    r"^\W*(?:my|our)\s+(?:[\w-]+\s+){0,3}?(?:is|are)\s[^,;.!?]*\bnow\s*[,;]", re.I)
"""A value of the speaker's own that "now" dates as new ("My name is Alex now, please
update it"): the request after it is about the new value, which holds on. Not a state
("I'm free now, quiz me": that one is the moment's)."""


_TODAY = re.compile(
    r"(?<!\bfrom\s)(?<!\bsince\s)(?<!\bas\sof\s)(?<!\bstarting\s)(?<!\bbeginning\s)"
    r"(?<!\buntil\s)\b(?:today|tonight|this\s+(?:morning|afternoon|evening))\b"
    r"(?!\s+(?:on|onwards?|forward)\b)"
    r"|(?<![从自])(?:今天|今晚|今日|今夜)(?![起开以之後后以降から]|から)", re.I)
"""A day word that dates what it says to the day at hand ("the deploy window today is
cancelled", 今天的站会取消了); "from today", "as of today", "starting today", 从今天起,
今日から open a change that lasts."""


def bound_to_now(row: Any) -> bool:
    """Whether an item is a request or a need bound to the moment it was said in
    (module doc, "When it holds"): it asks (:data:`_REQUEST`), names the moment
    (:data:`_MOMENT`), and does not say it stands, nor open with the speaker's own
    state, new "now" (:data:`_OWN_STATE`); or, of any kind, it names one occasion
    (:data:`_ONCE`) and does not say it stands; or it is a fact dated to the day at
    hand (:data:`_TODAY`: "the deploy window today is cancelled") that does not say it
    stands."""
    text = row["text"] or ""
    if _ONCE.search(text) is not None and not is_standing_rule(text) and not lasting(row):
        return True  # "bump memory to 1Gi for this deploy only", 这次用英文回复吧
    if (row["kind"] == "fact" and _TODAY.search(text) is not None
            and not is_standing_rule(text) and not lasting(row)):
        return True  # "the 14:00 deploy window today is cancelled": that day's news
    return (row["kind"] != "decision" and _MOMENT.search(text) is not None
            and _REQUEST.search(text) is not None and not is_standing_rule(text)
            and _OWN_STATE.match(text) is None)


_DELIVER = re.compile(
    r"(?:\band\s+(?:then\s+)?|\bthen\s+|,\s*)(?:show|send|give|tell|paste|post|bring)\s+"
    r"(?:me|us)\s+(?:the|a|an|what|how|whether|which|its|their|any)\b"
    r"|\b(?:and|then)\s+report\s+back\b"
    r"|\b(?:and|then)\s+let\s+(?:me|us)\s+know\s+(?:the|what|how|whether|which)\b"
    r"|(?:然后|再)?(?:给我|发我|告诉我)(?:看|发)?(?:一下)?(?:结果|汇总|总结|摘要)"
    r"|(?:結果|まとめ|サマリー)を(?:見せて|教えて|送って)", re.I)
"""An order that goes on to a result to hand back ("… and show me the summary", "…, then
report back", 然后告诉我结果, 結果を見せて): the order is a job of the moment. A
leading "Show me the …" asks for one answer's form (``data.one_off``)."""


def result_order(row: Any) -> bool:
    """Whether a constraint (or an order filed as a fact: "Rerun the spec 30 times, then
    tell me how many fail") orders a job whose result the speaker wants back now
    (:data:`_DELIVER`: "Run the failing test 50 times in a loop and show me the
    summary"): its number sizes that one job, not a rule (module doc, "When it
    holds"); one that says it stands ("Always run it 3 times and show me the log"),
    one the user asked to keep, or one under a condition ("If a deploy fails, show me
    the log") is a rule."""
    text = row["text"] or ""
    return (row["kind"] in ("constraint", "fact") and not row["condition"]
            and _DELIVER.search(text) is not None and not is_standing_rule(text)
            and not lasting(row))


_PAST_VERB = (
    r"(?!(?:need|seed|feed|speed|indeed|exceed|proceed|succeed|embed|used|based|located"
    r"|allowed|required|expected|supposed|planned|scheduled|limited|capped|fixed|allocated"
    r"|reserved|budgeted)\b)(?:[a-z]{2,}ed|paid|spent|bought|sold|got|had|did|made|took"
    r"|went|came|gave|sent|heard|lost|won|ate|drank|ran|drove|flew|slept|left|met|saw|wrote"
    r"|read|brought|caught|found|kept|told|felt|sat|stood|began|broke|chose|threw)")
PAST_REPORT = re.compile(
    r"^\W*(?:(?:so|and|but|also|then|today|yesterday|last\s+\w+|this\s+\w+|anyway|well|ok"
    r"|okay|oh)\W+){0,3}(?:(?:i|we)\s+(?:just\s+|also\s+|finally\s+|already\s+|only\s+)?)?"
    + _PAST_VERB + r"\b"
    r"|(?:した|った|んだ|いた|えた|けた|てた|ちゃった|しまった|だった)[。！!]?\s*$", re.I)
"""A statement the speaker (or no named subject) tells in the past tense ("I paid $40
for the tickets", "Spent $1200 on flights", "heard back from 1", 12時間も寝てしまった)."""


def past_report(row: Any) -> bool:
    """Whether a numeric fact reports an event of the speaker's past (:data:`PAST_REPORT`),
    not a value they set: not a correction (a change the user made supersedes), nor one
    the user asked to keep (:func:`memory_core.items.standing.lasting`: "I paid $40 for
    the tickets, remember that."), nor one said with a word of setting (:data:`memory_core.items.readings.SETTING`: "we capped
    it at 50", :data:`memory_core.items.readings.USER_CHANGE`: "we doubled the replicas
    to 6", :data:`memory_core.items.readings.PROVISIONED`: "we gave the VM 16 GB")."""
    text = row["text"] or ""
    return (row["kind"] == "fact" and row["value"] is not None and row["supersedes"] is None
            and not lasting(row) and PAST_REPORT.search(text) is not None and SETTING.search(text) is None
            and USER_CHANGE.search(text) is None and PROVISIONED.search(text) is None)


SINGLE_REQUEST = re.compile(
    r"^\W*(?:(?:and|so|also|hi|hey|hello|please|now)\W+)*"
    r"(?:(?:i|we)(?:'d|\s+would)\s+(?:really\s+)?like|(?:can|could|may)\s+(?:i|we)\s+"
    r"(?:please\s+)?(?:get|have))"
    r"\s+(?:a|an|one)\s+(?:[\w-]+\s+){0,3}?[\w-]+(?:\s+for\s+(?:order\s+)?#?\w+)?"
    r"(?:,?\s+(?:rather\s+than|instead\s+of|not)\s+(?:a|an|one)\s+(?:[\w-]+\s+){0,2}?[\w-]+)?"
    r"(?:,?\s+please)?\s*[.!?]?\s*$", re.I)
"""A wish for one thing and nothing more ("I'd like a refund.", "Could I get a new
charger?", "I'd like a replacement rather than a refund, please": one thing chosen over
another): what it asks for is one object, with no scope ("I'd like answers in
Spanish" names a kind of thing; "I need a …" may be a lasting need)."""


def single_request(row: Any) -> bool:
    """Whether a preference, a fact or a constraint only asks for one thing
    (:data:`SINGLE_REQUEST`, module doc, "What it asks"), a request about the case at
    hand; a number it sets ("I'd like a 3-bedroom flat") makes it a criterion."""
    text = row["text"] or ""
    return (row["kind"] != "decision" and (row["value"] is None or loose(row))
            and SINGLE_REQUEST.search(text) is not None and not is_standing_rule(text))
