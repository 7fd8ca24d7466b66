"""Whose statement an item is: someone else's claim the user passes on
(:func:`relayed`), another person's doing (:func:`third_party`), or the speaker's
account of something they did once (:func:`past_event`).

Apart from :mod:`memory_core.items.standing` because these words change with how people
attribute and tell, not with what makes a rule stand. Read by the block (a relayed or
another person's change never stands), by :mod:`memory_core.items.readings` (someone
else's number is no setting) and by the writer and the tools (the occasions of a past
event). Pure, no I/O.
"""

from __future__ import annotations

import re


HEARSAY = re.compile(
    r"\b(?:said|says|told (?:me|us)|tells (?:me|us)|according to|apparently|reportedly"
    r"|i heard|heard that|rumou?red"
    r"|(?:they|the\s+authors?|the\s+(?:paper|study|survey|article))\s+(?:report|reports|reported"
    r"|claim|claims|claimed|find|found))\b"
    r"|(?:论文|文章|报告|研究|报道)(?:里|中)?(?:说|提到|称|指出)"
    r"|(?:^|[.;!?]\s)\W*(?:as\s+)?per\s+(?!(?:readme|docs?|spec|specs|policy|contract|sla"
    r"|rfc|ticket|manual|guide|guidelines|runbook|brief)\b)(?-i:[A-Z])[\w'-]*"
    r"(?:\s+(?-i:[A-Z])[\w'-]*)?\s*[:,]"
    r"|听说|据说|によると|とのこと|だそうです|だそうだ|って言って|と聞いた"
    r"|(?<![晴愛男女鹿憎誇汚やと])(?<!自分)(?<!子供)らしい", re.I)
"""Words by which a number is someone else's claim the user passes on ("Per Lena: PRs
need two approvals", らしい, not the adjective ending of 素晴らしい "wonderful")."""


OWN_SOURCE = re.compile(
    r"\b(?:i|we)(?:'ve|\shave|'d|\shad)?\s(?:(?:already|just|also)\s)?(?:said|say)\b"
    r"|\b(?:according\sto\s(?:the\s|our\s|my\s)?)?(?:readme|docs?|documentation|spec|specs"
    r"|specification|contract|config|configuration|manual|policy|sla|agreement|licen[cs]e"
    r"|terms|guide|guidelines|rfc|standard|schema|runbook|ticket|requirements?|brief|linter"
    r"|settings|dockerfile|makefile|changelog)(?:\s(?:file|page|doc))?(?:\s(?:says|said)\b|,)"
    r"|(?:readme|仕様書?|ドキュメント|契約書?|設定ファイル|マニュアル|規約|要件)によると", re.I)
"""Where a "says" or "according to" passes on what the user said before ("as I said")
or what the project's own document fixes ("the README says the port is 8080", "the
contract says 99.9 % uptime"): the number is the user's, not a claim to pass on."""


THIRD_PERSON = re.compile(
    r"^\W*(?:(?:and|but|so|oh|btw|also|plus|now|anyway)\b\W*)?(?:he|she)(?:'s|'d|'ll|\s)"
    r"|^\W*(?:他|她)(?!们)|^\W*彼女?(?:は|が|も)", re.I)
"""A clause whose subject is another person, by a third-person pronoun ("She's
enforcing it in branch protection now", 他现在负责发布了, 彼女は今はリモートです); not
"they" nor 他们 (the speaker's team as often as not), nor a name (no lexicon of names)."""


def relayed(text: str | None) -> bool:
    """Whether a statement passes on someone else's claim (:data:`HEARSAY`: "Lena says
    the review moved to Thursday", 听说…, …だそうです), not the user's own words nor the
    project's document ("as I said", "the README says": :data:`OWN_SOURCE`)."""
    t = text or ""
    return HEARSAY.search(OWN_SOURCE.sub(" ", t)) is not None


def third_party(text: str | None) -> bool:
    """Whether a statement tells what another person does or is (:data:`THIRD_PERSON`):
    a change in it is theirs, as a relayed one is (:func:`relayed`), not one the user set."""
    return THIRD_PERSON.search(text or "") is not None


PAST_EVENT = re.compile(
    r"^\W*(?:(?:\w+\W+){0,3}?)(?:i|we)\s+(?:(?:just|also|finally|again|then)\s+)?"
    r"(?!(?:used|need|seed|feed|indeed)\b)(?:[a-z]{2,}ed|went|did|came|got|bought|sold|left"
    r"|found|made|took|met|began|ran|saw|ate|drove|flew|rode|swam|won|lost|read|wrote"
    r"|spent|visited|tried)\b"
    r"|^\W*(?:我|我们)[^，,。！!？?]{0,20}(?:了|过)|ました[。！!]?\s*$", re.I)
"""A statement that tells what the speaker did once ("I went hiking with Anna.", "We
visited Kyoto.", 我和Anna去爬山了, 京都に行きました), not a state ("I live in Oslo.",
"I'm married.", "I used to run")."""


def past_event(text: str | None) -> bool:
    """Whether ``text`` tells an event of the speaker's past (:data:`PAST_EVENT`): said
    in two conversations, the same words may tell two occasions."""
    return PAST_EVENT.search(text or "") is not None
