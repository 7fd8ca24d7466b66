"""``extract()``: one message in, the memory items it states out. Pure, no I/O.

Per sentence, in order:

1. **Task lines** (user only). ``Goal:``/``Progress:``/``TODO:``/``Blocked:``/``Decision:``
   and their Chinese/Japanese forms become ``kind="task"`` with ``task_label``; a bare
   header line (``TODO:`` alone, ``## TODO``) labels the list items under it. A
   ``Decision:`` line yields *two* items: the task-state entry and a ``decision`` memory
   item with the same text, so the engine stores both without special-casing labels.
2. **Prefixes.** Meta labels (``Note:``, ``Correction:``, ``Rule:``, ``Question:``),
   fillers ("btw", "另外", "ちなみに") and correction cues ("Actually", "No,", "更正",
   "訂正です") are stripped; a correction cue sets ``correction=True``. A sentence that is
   only a cue ("訂正です。") passes the flag to the next sentence of the message.
3. **Small talk** ("thanks!", "好的", "ありがとう") yields nothing.
4. **Assistant** sentences yield only proposals, and only when a suggestion cue is
   present (DESIGN §5: assistant text is never a fact or decision).
5. **Questions** ("?", 吗/呢, か) yield ``question`` items, except requests to the agent
   ("Can you…?") and hypotheticals ("If we used X, would…?"); a question resting on a
   fact of the user's own ("Since I'm vegan, what …?", :mod:`.premise`) yields that fact.
6. **Clauses.** A sentence holding two statements is split ("X, so don't Y"; "200 ms for
   search and 500 ms for ingestion"; "API超时是30秒，离线时是60秒") and each clause is
   classified by its language's rules (``rules_en``, ``rules_cjk``). A clause whose
   subject is only implied ("…and 10 s otherwise", "オフラインの場合は60秒です")
   inherits the subject of the previous item of the message when the units agree. A
   clause that is only a fronted condition ("While a sale is running, …", "在大促期间，…",
   "セールの時は、…") is not a clause of its own: it scopes the next one, whose subject
   is the item's. A preference's consequence ("I like short answers, so skip the
   pleasantries") stays quoted in the preference item. A sentence that turns from
   Chinese or Japanese to English at a comma ("我住在上海, but I work in Berlin.") is
   read as one sentence per language first (:func:`.segment.script_clauses`).
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Protocol

from memory_core.extraction import (
    anaphora,
    asked_rule,
    contractions,
    contrast,
    dated,
    denial,
    elided,
    experience,
    grounds,
    group,
    irony,
    leads,
    opt_out,
    practice,
    premise,
    promotion,
    recurring,
    referent,
    replacement,
    retraction,
    rule_lists,
    rules_cjk,
    rules_en,
    settled,
    shapes,
    status,
    transcript,
)
from memory_core.extraction import lexicon as lx
from memory_core.extraction import scope_markers
from memory_core.extraction import lexicon_cjk as lc
from memory_core.extraction.age import age_key
from memory_core.extraction.apology import apology_end
from memory_core.extraction.clause import Clause, Verdict
from memory_core.extraction.condition import find_condition, join_fronted
from memory_core.extraction.cue import tokens
from memory_core.extraction.lexicon import ORDINAL_LABEL, ordinal_label
from memory_core.extraction.modality import (
    about_this_answer,
    about_this_task,
    answer_request,
    hedged,
    hedged_lead,
    hypothetical,
    lasting_request,
    one_occasion,
)
from memory_core.extraction.model import ELISION, RETRACTION, STATEMENT_KINDS, Extracted
from memory_core.extraction.prepare import (
    MASK,
    detect_lang,
    fold_traditional,
    masked_code,
    prepare,
    with_emphasis,
)
from memory_core.extraction.quantity import Quantity, find_quantities, loose, primary_quantity
from memory_core.extraction.segment import Sentence, script_clauses, segment
from memory_core.extraction.subject import key
from memory_core.extraction.topic import Topic, topic_lead
from memory_core.extraction.units import unit_class
from memory_core.items import accounts


class _Matcher(Protocol):
    """A start-anchored matcher: a compiled pattern or a ``lexicon.Lead``."""

    def match(self, text: str) -> re.Match[str] | None: ...


@dataclass(frozen=True, slots=True)
class _Lang:
    """The cue tables and rules for one language."""

    correction: _Matcher
    filler: _Matcher
    small_talk: re.Pattern[str]
    classify: Callable[[Clause], Verdict | None]
    question_subject: Callable[[Clause], str | None]
    is_request: Callable[[Clause], bool]
    is_hypothetical: Callable[[Clause], bool]
    proposal: Callable[[Clause], Verdict | None]


_LANGS: dict[str, _Lang] = {
    "en": _Lang(lx.EN_CORRECTION, lx.EN_FILLER, lx.EN_SMALL_TALK, rules_en.classify,
                rules_en.question_subject, rules_en.is_request, rules_en.is_hypothetical,
                rules_en.proposal),
    "zh": _Lang(lc.ZH_CORRECTION, lc.ZH_FILLER, lc.ZH_SMALL_TALK, rules_cjk.classify_zh,
                rules_cjk.zh_question_subject, rules_cjk.zh_is_request,
                rules_cjk.zh_is_hypothetical, rules_cjk.zh_proposal),
    "ja": _Lang(lc.JA_CORRECTION, lc.JA_FILLER, lc.JA_SMALL_TALK, rules_cjk.classify_ja,
                rules_cjk.ja_question_subject, rules_cjk.ja_is_request,
                rules_cjk.ja_is_hypothetical, rules_cjk.ja_proposal),
}

_DIGIT = re.compile(r"\d")
_ZH_DATE_LEAD = re.compile(r"从(?:明天|今天|下周|本周|这周|下个?月)(?:起|开始)$")
"""A Chinese update lead that only dates the change (not 以后/从现在起, which rules keep)."""
_STANCE_MAX = 200
"""Longest sentence read as the new stance after a withdrawal ("Make it 300 words.")."""
_SMALL_TALK_MAX = 100  # small-talk patterns are only tried on short sentences (bounded work)
_CONTENT = re.compile(r"[^\W_]")
_QUESTION_TRAILERS = " \t\"')]}」』）!~。.！"
_MAX_PREFIXES = 6
_LABEL_WINDOW = 40  # task/meta labels sit in the first characters of a line
_CJK_SMALL_TALK_MAX = 24
_EN_SPLIT = re.compile(
    r"(?:,|(?<!\s))\s+(?:and|but|so|whereas|while)\s+(?=(?:the|their|our|my|his|her|its|we|i|they|you|it"
    r"|this|that|don't|do\snot|never|always|please|no)\b)|,\s*so\s+", re.I)
_EN_ADVERB_PREDICATE = re.compile(r"(?:always|never)\s+(?!(?:use|be|do)\b)[a-z]", re.I)
"""A verb phrase after the joint that opens on "always"/"never" with no subject of its own."""
_EN_OTHER_SUBJECT = re.compile(
    r"\W*(?:(?:yeah|yes|yep|oh|wow|aw+|well|and|so|but|honestly|totally|plus|also)\W+)*"
    r"(?!(?:i|we|i['’]m|we['’]re|let['’]s|please|don['’]t|do|never|always|just"
    r"|if|when|whenever|before|after|once|while)\b)"
    r"(?:(?:they|he|she|it|these|those|you|(?:the|my|our|his|her|their|your|its)\s+[\w'-]+"
    r"|(?:[a-z]+\s+)?[a-z]+s)\s+(?:[a-z]+\s+){0,2}?)"
    r"(?:are|is|were|was|make|makes|made|bring|brings|keep|keeps|give|gives|represent"
    r"|represents|mean|means|help|helps|feel|feels|look|looks|have|has|love|loves|never|always)"
    r"\b", re.I)
"""A clause that opens on someone or something other than the speaker and states what
they are or do ("My cousins are a blessing …", "Dogs make us calmer …", "You never back
down …"): an "and always …" after it goes on describing that subject."""
_EN_MODAL = re.compile(r"\b(?:should|must|need\s+to|have\s+to|has\s+to|will|can|could|would)\b"
                       r"|['’](?:ll|d)\b", re.I)


def _describes_subject(scan: str, a: int, joint: int, body: int) -> bool:
    """Whether the "and always …"/"and never …" at ``scan[joint:body]`` continues a
    description of the clause's own subject (:data:`_EN_OTHER_SUBJECT`), not a second
    order: "My cousins are a blessing and always check on me" says what they do; "Use
    tabs and always run the linter", "You should use tabs and never …" (a modal) stay
    two orders, a speaker's own clause ("We use Go and never use panics") keeps its
    split, and so does a consequence ("The API is flaky, so always retry twice")."""
    return (_AND_JOINT.fullmatch(scan, joint, body) is not None
            and _EN_ADVERB_PREDICATE.match(scan, body) is not None
            and _EN_OTHER_SUBJECT.match(scan, a, joint) is not None
            and _EN_MODAL.search(scan, a, joint) is None)


_EN_MY_SPLICE = re.compile(r",\s*(?=my\s+(?:[\w/'-]+\s+){0,2}?(?:is|are)\b)", re.I)
"""A comma before another attribute of the speaker and its copula ("I'm Sam, my
pronouns are she/her"): a second statement, which revises its own attribute; not
after a sentence that opens with a condition or a setting (``_EN_SUBORDINATE``)."""
_MY = frozenset(("my",))
_COORDINATORS = frozenset(("and", "but", "or"))
_AND_JOINT = re.compile(r"[\s,]*and\s+", re.I)
_MY_ATTRIBUTE = re.compile(r"my\s+(?:[\w/'-]+\s+){0,2}?(?:is|are)\b", re.I)
"""Another attribute of the speaker and its copula ("my pronouns are …")."""
_EN_CO_SUBJECT = re.compile(
    r"\s*(?P<neither>neither\s+)?"
    r"(?!(?:i|we|you|they|he|she|it|this|that|there|so|but|and|then|also|now)\b)"
    r"(?:(?:my|our)\s+[\w'-]+|(?-i:[A-Z])[\w'-]*)\s+(?(neither)nor|and)\s+(?=(?:i|we)\b)",
    re.I)
"""A sentence that opens on someone and the speaker ("Emma and I …", "My wife and I
…": a name, or one word after my/our; "Neither my wife nor I …"): the "and" joins the
subject, no two clauses (:func:`_clause_spans`; "The build failed and I fixed it" is
two). The rules read the clause from "I", as they would alone (the denial "neither"
puts on the verb is written in by :func:`~memory_core.extraction.contractions.restore`:
"Neither my wife nor I eat meat" read as "I don't eat meat"); the item keeps the
whole subject."""
_EN_RULE_JOINT = re.compile(
    r",\s+(?=(?:please\s)?(?:(?:use|keep|prefer|avoid|make\ssure)\b|always\b(?!\s*(?:[,.;:!?)"
    r"\u2014\u2013-]|$|(?:and|or|without|even|unless|except|no\s+matter)\b))))", re.I)
"""'Never store keys in the repo, use the vault instead' holds two orders ("…, never
tabs" stays with its sentence: it only restates the first order's alternative). A
closing "always" ("Use UTC, always.", "…, always, even in logs", "…, always and without
exception") qualifies the order before it: no joint."""
_EN_SHARED_SUBJECT = re.compile(
    r"(?:,|(?<!\s))\s+and\s+(?=(?:(?:usually|often|always|also|then|typically|normally|generally|sometimes)\s)?"
    r"(?:is|are|was|were|has|have|takes|runs|finishes|lasts|costs|needs|uses|ends|starts|holds"
    r"|handles|returns|expires|fails|times\sout)\b[^,;.]{0,40}?\d)", re.I)
"""'The nightly job runs at 02:00 and usually finishes in 25 minutes': two facts, one subject."""
_EN_NEW_SUBJECT = re.compile(r"(?:the|our|my|its|their|his|her)\s+(?:[\w-]+\s+){0,3}?"
                             r"(?:is|are|was|were)\b", re.I)
"""After a joint between two quantities, a new subject and its copula ("We run 41 nodes,
the memory cap is 6893 MB"): a second statement, whatever the two measure."""
_CHANGE_CONDITION = re.compile(r"\s*(?:after|since|following)\s+" + lx.EN_A_CHANGE, re.I)
"""A condition that names the change a value came after: not a condition of it."""
_EN_BE = re.compile(r"\b(?:is|are|was|were)\b|['\u2019](?:s|re)\b", re.I)
"""A form of *be*: a clause that states a value rather than reports a move."""
_EN_SUBORDINATE = re.compile(r"\s*(?:when|whenever|if|once|after|before|while|unless|until"
                             r"|as\s+soon\s+as|as\s+long\s+as|since|because|although|though"
                             r"|with|without|above|below|under|over|beyond|at|for|during|in|on"
                             r"|up\s+to|between|from|per)\b", re.I)
"""A sentence that opens with a condition, a cause or a setting ("With 3 replicas, …",
"Above 90 % disk usage, …"): its comma ends that, not a statement."""
_NUMERIC_JOINT = re.compile(r"(?:,|(?<!\s))\s+(?:and|but|while|whereas)\s+|[,，;；、]\s*", re.I)
_DENIED_VALUE = re.compile(r"\s*(?:not|rather\s+than|instead\s+of|不是|并非|而非|而不是|非"
                           r"|じゃなくて|じゃなく|ではなく)\s*(?=[\d０-９一二三四五六七八九十])", re.I)
"""What opens a number the statement denies ("7, not 6", "9 月 3 号，不是 9 月 13 号"):
the old value beside the new one, part of one statement, not a second."""
_ZH_NEW_SUBJECT = re.compile(
    r"[，,](?=[^，,。是不也就但而还都所因然]{1,8}(?:是|为|大概|大约|约为|达到|超过))")
"""A comma followed by a new subject and its copula starts a second statement."""
_ZH_REQUEST_JOINT = re.compile(
    r"[，,](?=(?:请|麻烦)?(?:你|您)?(?:帮我|帮忙|请你|请帮|给我|告诉我|看看|看一下|查一下|查查))")
"""…and so does a request after a comma ("测试时好时坏，帮我查查…": a remark, then the ask)."""
_ZH_AND_JOINT = re.compile(r"(?:[，,]\s*)?(?:并且|而且)|[，,]\s*(?:还|同时)(?!是)")
"""A conjunction before a second predicate of the speaker's ("我住在上海，并且在一家银行
工作", "…，还在银行工作"): a statement of its own, read with the sentence's subject."""
_ZH_SPEAKER = re.compile(r"\s*(?:我们|我)(?![们的])")
"""A sentence that opens on the speaker (我, 我们) — the subject a second predicate after
:data:`_ZH_AND_JOINT` takes."""
_ZH_OWN_SUBJECT = re.compile(r"\s*(?:我|你|他|她|它|咱|大家|[^\s，,。]{1,8}(?:是|为)(?!了))")
"""A clause that names its own subject (or is a copula of its own): it carries none."""
_JA_AND_JOINT = re.compile(r"(?:[んい]でいて|ていて|ており|でおり|ているし|でいるし|ますし|ですし"
                           r"|だし)(、|，)")
"""A state joined to another (大阪に住んでいて、銀行で働いています; …住んでいるし、…):
the comma (group 1) parts two statements."""
_LEAD_JOINT = re.compile(r"^(?:[,，;；、\s]|and\s|but\s|so\s|whereas\s|while\s)+", re.I)
_FIRST_JOINT = re.compile(r"^(?:[,，;；、\s]|and\s|but\s|so\s)+", re.I)
"""At the start of a sentence "while"/"whereas" open a condition, not a second clause."""
_HYPOTHETICAL_JOINT = re.compile(r",?\s+(?:but|and|so|whereas|while)\s+|[,;，；、]\s*", re.I)
"""Where a statement ends and a supposition after it begins (:func:`modality.hypothetical`)."""
_AFTER_JOINT = re.compile(r"(?:[,，;；、\s]|and\s|but\s|so\s|whereas\s|while\s)+", re.I)
_PRONOUN = r"(?:i|we|you|they|he|she|it|one)\b"
_SCOPE_LEAD = re.compile(
    r"(?:in|for|within|across)\s+(?:this|our|the|every|all)\s+(?:(?:repo|repository|repos"
    r"|project|projects|codebase|team|company|org|organi[sz]ation|monorepo|workspace)\b"
    r"[,:]?\s*|(?:(?!" + _PRONOUN + r")[\w-]+\s+)?(?!" + _PRONOUN + r")[\w-]+\s*,?\s*"
    r"(?=(?:always|never|don't|do\s+not)\s+[a-z]))",
    re.I)
"""Where a rule holds, before it ("In this repo, we never push to main"; any place or
thing when an order's "always" or "never" follows: "In this pipeline never auto-retry
flaky jobs", "For this client, never use Comic Sans"): the clause is read from after
it, and quotes it (its scope is part of what the user said)."""
_ZH_ORDER_LEAD = re.compile(
    r"(?:请|麻烦(?:你|您)?|帮(?:我|忙)|你|您)?把(?:这(?!个?(?:项目|仓库|代码库|团队|公司|服务|系统))"
    r"|那|上面|下面|第\s*\d+\s*行)")
"""An order that opens on 把 and works on material at hand, with no subject
("把这个变量名改成 user_count"): what it changes is the work, not a state the user
reports; not a lasting scope (把这个项目的超时改成30秒 revises the project's)."""
_ZH_NOW_ORDER = re.compile(
    r"(?:那)?(?:现在|接下来|然后)\s*[，,]?\s*(?=(?:请|麻烦(?:你|您)?|帮(?:我|忙)|你|您)?(?:把|给|再|先(?!生))"
    r"|(?:请|麻烦(?:你|您)?|帮(?:我|忙)))")
"""现在 ("now") before an order ("现在把这个函数拆成两个", "现在帮我写测试"): the next step
of the work at hand, not a state that changed; the order is read from after it. 先生
(husband) is no 先 (first): 现在先生在上海工作 is an update."""
_ZH_DONE = re.compile(r"了|已经|过")
_NOW_STATEMENT = re.compile(
    r"now[,\s]+[\w-]+\s+(?:[\w-]+\s+)?(?:is|are|was|were|has|have|had|will|would|must|should"
    r"|can|could|goes|go|happens|takes|take|stays|sits|lives|needs|lands|gets|works|fails"
    r"|passes|lasts)\b", re.I)
"""'Now' before a noun that is also a verb, then the statement's verb ("Now test
coverage is 85%", "Now review requests go to Dana", "Now deploy happens on
Fridays"): an update, not the next order."""
_ONE_OFF_VERBS = frozenset(lx.EN_ONE_OFF_VERBS + lx.EN_TASK_VERBS + lx.EN_OBJECT_VERBS)
_CONSEQUENCE = re.compile(r"^,?\s*so\s", re.I)
_ORDER_CUE = re.compile(r"(?:please\s|just\s)?(?:don't|do\snot|never|always|avoid)\b", re.I)
"""With ``lexicon.EN_IMPERATIVE``: an order opening a preference's consequence clause."""


_VERB = re.compile(
    r"\b(?:is|are|was|were|be|been|has|have|had|will|would|should|must|can|could|need|needs"
    r"|do|does|did|use|uses|want|wants|prefer|like|get|gets|set|keep|make)\b|'s\b|'re\b"
    r"|是|为|有|要|用|需要|です|ます|した|する", re.I)
"""Words that make a line ending in a colon a statement ("The budget is 200 euros:")
rather than the title of the list below it ("Release checklist for v2.3:")."""
_PRONOUN_ONLY = re.compile(r"^(?:i|we|you|they|he|she|it)(?:'m|'re|'s|'ve|'d)?$")
"""A subject phrase that is only who speaks ("I'm currently working on …"): the
subject is what follows the cue."""


_UPDATE_VERBS = frozenset(("switched", "switching", "moved", "migrated", "changed", "changing",
                           "swapped", "upgraded", "relocated", "cut", "raised", "lowered",
                           "bumped", "pushed", "pulled", "extended", "shortened", "shifted",
                           "rescheduled", "got", "was", "were", "has", "have", "been", "just",
                           "dropped", "reduced", "increased", "upped", "set",
                           "stopped", "quit", "gave", "given", "gets", "had", "postponed",
                           "went", "gone", "rose", "risen", "fell", "fallen", "decreased",
                           "climbed", "grew", "grown", "shrank", "shrunk", "slipped", "slid",
                           "settled", "agreed", "decided", "opted", "ended",
                           "we", "i", "they", "he", "she", "someone", "somebody"))
"""``lexicon.EN_UPDATE`` cues that are verbs, or open on the doer of one ("we set it to
5"): negated, planned or a condition ("When I set it to 5 minutes, the job times
out"), they change nothing."""


_TIME_LEAD = re.compile(
    r"\s*(?:(?:and|so)\s+)?(?:" + lx.EN_FROM_NOW + r"|from\s+today(?:\s+on)?"
    r"|from\s+this\s+(?:week|month|sprint|release)(?:\s+on)?|in\s+(?:the\s+)?future"
    r"|starting\s+(?:today|now|tomorrow|next\s+\w+)|as\s+of\s+(?:today|now|\w+day)"
    r"|henceforth|from\s+here\s+on)\s*[,，]?\s*", re.I)
"""A clause that only says from when the rest holds ("From now on, always …"): it
belongs to the clause after it, never a statement of its own."""


_EN_OPEN_CONDITION = re.compile(
    r"\s*(?:if|unless|once|as\s+soon\s+as|provided(?:\s+that)?|assuming|in\s+case)\b"
    r"(?!\s+(?:i\s+(?:remember|recall)|i'm\s+not\s+mistaken|i\s+am\s+not\s+mistaken"
    r"|you\s+ask\s+me|i'm\s+honest|i\s+may\s+say|memory\s+serves)\b)", re.I)
"""A condition the speaker does not know will hold ("If we get the budget", "once
the funding lands"); not "if I remember right", "if you ask me" (a manner of saying),
nor "when" (a time that will come)."""
_ZH_OPEN_CONDITION = re.compile(r"\s*(?:如果|要是|假如|假使|万一|除非|一旦|只要)")
_JA_OPEN_CONDITION = re.compile(r"(?:たら|なら|ならば|れば|場合は)[、，,]")


def _open_condition(item: Extracted, scan: str, a: int, end: int, lang: str) -> bool:
    """Whether a decision is taken only under an open condition (``item.condition``,
    or a Japanese conditional form before its comma: 予算が通ったら、…): a plan that
    may never happen, marked tentative ("not confirmed" in the block), not a
    decision taken. Its condition stays in its text."""
    if lang == "ja":
        return _JA_OPEN_CONDITION.search(scan, a, end) is not None
    if not item.condition:
        return False
    return (_EN_OPEN_CONDITION if lang == "en" else _ZH_OPEN_CONDITION).match(
        item.condition) is not None


def _join_leads(scan: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Join a clause that is only a :data:`_TIME_LEAD` to the clause after it."""
    out: list[tuple[int, int]] = []
    carry: int | None = None
    for k, (start, end) in enumerate(spans):
        if carry is not None:
            start, carry = carry, None
        if k + 1 < len(spans) and _TIME_LEAD.fullmatch(scan, start, end):
            carry = start
            continue
        out.append((start, end))
    return out


_LIST_MARK = re.compile(r"(?<![^\s])\d{1,3}[.)][ \t]+\Z")
"""The number that opens a numbered list's item ("2. " of "2. Port the models")."""


def _label(table: dict[str, str], m: re.Match[str]) -> str:
    """The canonical name of a matched label ("To  Do" -> "todo")."""
    return table[" ".join(m.group("label").split()).lower()]


def _has_content(text: str) -> bool:
    return _CONTENT.search(text.replace(MASK, "")) is not None


_SAVE_ORDER = re.compile(r"\b(?:remember|remind\s+me|keep\s+in\s+mind|memory)(?:\s+that)?"
                         r"[\s,:]*$", re.I)
"""A save order asked as a question before the statement it keeps ("Can you remember
that my passport expires in June?", stripped as a lead by ``lexicon.EN_FILLER``)."""
_CLAUSE = re.compile(r"^\s*(?:i|we|i'm|we're|i've|we've)\b|\b(?:is|are|was|were)\b|'s\s",
                     re.I)


def _saves(lead: str, rest: str) -> bool:
    """Whether ``lead`` (the words stripped before ``rest``) is a save order
    (:data:`_SAVE_ORDER`) and ``rest`` the statement it keeps, led by "that" or a clause
    (:data:`_CLAUSE`): the statement is the user's, no question ("Can you remember my
    name?" asks)."""
    m = _SAVE_ORDER.search(lead)
    return m is not None and (" that" in m.group().lower() or _CLAUSE.search(rest) is not None)


def _is_question(rest: str, lang: str) -> bool:
    tail = rest.rstrip(_QUESTION_TRAILERS)
    if tail.endswith("?"):
        return True
    if lang == "zh":
        return bool(lc.ZH_QUESTION_END.search(tail[-6:]) or lc.ZH_QUESTION_WH.search(tail))
    if lang == "ja":
        return bool(lc.JA_QUESTION_END.search(tail[-6:]))
    return False


def _maybe_small_talk(rest: str, lang: str, toks: frozenset[str]) -> bool:
    """Cheap pre-check: every English word is small-talk vocabulary; CJK is short."""
    if lang != "en":
        return len(rest) <= _CJK_SMALL_TALK_MAX
    return toks <= lx.EN_SMALL_TALK_WORDS


_EN_SPLIT_WORDS = frozenset(("and", "but", "so", "whereas", "while"))
_EN_RULE_WORDS = frozenset(("use", "keep", "prefer", "avoid", "always", "make"))
_AND = frozenset(("and",))
_BETWEEN = re.compile(r"\b(?:between|from)\s", re.I)


_NOW_LEAD = re.compile(r"(?:now|these\s+days|nowadays)\b[\s,]*", re.I)
"""An update cue that opens a clause after a joint ("…, so now I have three kids")."""
_OWNED_ATTRIBUTE = re.compile(r"\s*(?:my|our|your|their|his|her|its|the)\s", re.I)
"""A phrase that opens on an owner or "the": it names an attribute ("My shell …")."""
_CUE_PRONOUN = re.compile(r"\b(?:it|them|that|this)\b", re.I)
"""A pronoun object inside an update cue ("dropped it to", "set them to")."""
_SPEAKER_CONTRACTION = re.compile(r"\b(?:i|we)['\u2019](?:m|ve|d|ll|re)\b", re.I)
"""The speaker and a contracted auxiliary ("I've", "we're") before an update's cue."""
_NOW_OPENING = re.compile(
    r"(?:now|these\s+days|nowadays|currently|at\s+(?:the\s+moment|present)"
    r"|(?:as\s+of|effective(?:\s+with)?)\s+(?:release|version|v)\s*\d[\w.]*(?=\s*,))\b[\s,]*",
    re.I)
"""An update cue of time that opens a sentence ("Now my shell is zsh", "These days …",
"As of release 3.2, …"): it says when, not what; the clause is keyed as without it."""


def _is_order(clause: str) -> bool:
    """Whether an English clause is an instruction ("skip the pleasantries")."""
    return bool(lx.EN_IMPERATIVE.match(clause) or _ORDER_CUE.match(clause))


def _same_measure(left: Quantity, right: Quantity) -> bool:
    """Two numbers of one kind: same unit dimension, or any number followed by a bare
    one ("port 5432 and Redis on 6380", "64 … and 128 …", "60 req/min …, 600 for paid")."""
    if right.unit:
        return unit_class(left.unit) == unit_class(right.unit)
    return right.kind == "bare" or left.kind == right.kind


def _clause_spans(scan: str, a: int, b: int, lang: str, quantities: list[Quantity],
                  toks: frozenset[str]) -> list[tuple[int, int]]:
    """Split ``scan[a:b]`` into clauses holding one statement each (see module doc);
    the joint between two clauses ("，", ", so", " and ") belongs to neither."""
    joints: list[tuple[int, int]] = []
    if lang == "en":
        for pattern, trigger in ((_EN_SPLIT, _EN_SPLIT_WORDS), (_EN_RULE_JOINT, _EN_RULE_WORDS),
                                 (_EN_SHARED_SUBJECT, _AND)):
            if not trigger.isdisjoint(toks):
                joints += [(m.start(), m.end()) for m in pattern.finditer(scan, a, b)
                           if pattern is not _EN_SPLIT
                           or not _describes_subject(scan, a, m.start(), m.end())]
        if not _MY.isdisjoint(toks) and not _EN_SUBORDINATE.match(scan, a, b):
            joints += [(m.start(), m.end()) for m in _EN_MY_SPLICE.finditer(scan, a, b)]
        if not _COORDINATORS.isdisjoint(toks):
            joints += elided.joints(scan, a, b)  # "I don't use Vim and use Emacs instead"
    if lang == "zh" and _ZH_SPEAKER.match(scan, a, b):
        joints += [(m.start(), m.end()) for m in _ZH_AND_JOINT.finditer(scan, a, b)]
    if lang == "ja":
        joints += [(m.start(1), m.end(1)) for m in _JA_AND_JOINT.finditer(scan, a, b)]
    if lang == "zh" and ("，" in scan[a:b] or "," in scan[a:b]):
        joints += [(m.start(), m.end()) for m in _ZH_NEW_SUBJECT.finditer(scan, a, b)]
        joints += [(m.start(), m.end()) for m in _ZH_REQUEST_JOINT.finditer(scan, a, b)]
    starts = [q.start for q in quantities]  # sorted: find_quantities returns text order
    for m in _NUMERIC_JOINT.finditer(scan, a, b) if len(quantities) > 1 else ():
        i = bisect_left(starts, m.end())  # first quantity right of the joint
        if i == 0 or i == len(quantities) or quantities[i - 1].end > m.start():
            continue
        left, right = quantities[i - 1], quantities[i]
        if _DENIED_VALUE.match(scan, m.end(), right.start + 1):
            continue
        if (_same_measure(left, right) or lang == "en" and _EN_NEW_SUBJECT.match(scan, m.end())
                and not _EN_SUBORDINATE.match(scan, a, m.start())
                ) and not _BETWEEN.search(scan, max(a, left.start - 9), left.start + 1):
            joints.append((m.start(), m.end()))
    spans: list[tuple[int, int]] = []
    start = a
    for j_start, j_end in sorted(set(joints)):
        co = _EN_CO_SUBJECT.match(scan, a, b) if start == a and lang == "en" else None
        if co is not None and co.end() == j_end:
            continue  # "Emma and I broke up": one subject, not two clauses
        if start < j_start and j_end < b:
            spans.append((start, j_start))
            start = j_end
    spans.append((start, b))
    return spans


def _with_subject(scan: str, subject: tuple[int, int], body: int, end: int,
                  quantities: list[Quantity], lang: str = "en") -> Clause:
    """The clause ``scan[body:end]`` read with the subject ``scan[subject[0]:subject[1]]``
    written before it (:mod:`.elided`, :func:`_zh_carried`): the rules see "I use Emacs
    instead", 我在一家银行工作. The scan keeps its length (the subject overwrites what
    precedes ``body``), so offsets hold."""
    said = scan[subject[0]:subject[1]] + (" " if lang == "en" else "")
    at = body - len(said)
    return _build(scan[:at] + said + scan[body:], at, at, end, lang, False, quantities)


def _zh_carried(scan: str, first: int, joint: int, body: int, end: int
                ) -> tuple[int, int] | None:
    """The span of the speaker (我, 我们) that opens the sentence at ``first``, when the
    clause ``scan[body:end]`` follows it after :data:`_ZH_AND_JOINT` (``scan[joint:
    body]``) and names no subject of its own ("我住在上海，并且在一家银行工作": 我…在一家
    银行工作). None otherwise."""
    if _ZH_AND_JOINT.fullmatch(scan, joint, body) is None \
            or _ZH_OWN_SUBJECT.match(scan, body, end):
        return None
    m = _ZH_SPEAKER.match(scan, first, joint)
    if m is None:
        return None
    return m.end() - len(m.group().lstrip()), m.end()


def _build(scan: str, start: int, body: int, end: int, lang: str, question: bool,
           quantities: list[Quantity] | None = None,
           toks: frozenset[str] | None = None) -> Clause:
    if quantities is None:
        quantities = find_quantities(scan, body, end)
    else:
        lo = bisect_left(quantities, body, key=lambda q: q.start)
        hi = bisect_left(quantities, end, lo, key=lambda q: q.start)
        quantities = [q for q in quantities[lo:hi] if q.end <= end]
    if toks is None:
        toks = tokens(scan[body:end]) if lang == "en" else frozenset()
    condition = None if question else find_condition(scan, body, end, lang, toks)
    clause = Clause(scan, start, end, body, lang, question, quantities, condition, tokens=toks)
    return clause.build()


_RULE_LIST = re.compile(
    r"\b(?:(?:ground|house)\s)?(?:rules|conventions|guidelines|policy|policies|standards"
    r"|principles|style\sguide|do'?s\sand\sdon'?ts)\b|规则|规范|约定|守则|原则"
    r"|ルール|規約|決まり|原則|方針", re.I)
"""A list title under which the numbered items are rules, not steps ("Rules for this
repo:", "Conventions:", 团队规范：): its items are not one of a series."""


_ZH_BEFORE_LATER = re.compile(r"(?:我们|我|你们|你|大家|咱们|团队|那|那么|今天|[，,：:\s])$")
"""What may precede 以后 when it means "from now on" (我们以后用 Kafka, 那以后用 Kafka
吧, 今天以后), not "after" an event (上线以后)."""


_INSTEAD_END = re.compile(r"\binstead\s*[.!]*$", re.I)
_ZH_CONDITION_BEFORE = re.compile(
    r"(?:如果|假如|要是|若是|万一|一旦|只要|每当|当)[^，,。；;]{1,30}[，,]\s*"
    r"|[^，,。；;]{1,30}(?:的话|的时候|时)[，,]\s*")
"""A condition and its comma before 以后 ("如果部署失败，以后一律先回滚"): 以后 leads the
rule that holds when it recurs, not an update of what the condition names."""


_CODE_BEFORE = re.compile(r"(\w+)\s*(?:(?:the|a|an)\s+)?$")
_CODE_AFTER = re.compile(r"\s*(\w+)")
_CJK_CODE_VERB_BEFORE = re.compile(r"(?:跑|运行|执行|使用|调用|用|敲|输入|実行して|使って)\s*$")
_CJK_CODE_VERB_AFTER = re.compile(r"\s*を\s*(?:実行|使|走らせ|叩|打)")


def _code_names_subject(text: str, start: int, end: int, words: list[str], lang: str) -> bool:
    """Whether the inline code at ``text[start:end]`` is what the subject's words act on
    or name: the object of its verb ("run `make lint`", 跑 `make lint`, `make lint` を
    実行), or a modifier of its noun ("the `make lint` target"). Not a value the
    statement gives the subject ("The build command is `npm run build`", "I prefer
    `black -l 100` for formatting") nor one it rejects ("…, not `make lint`"): those
    stay values of one subject, so a rival conflicts and a correction replaces."""
    if not words:
        return True  # the code is all the statement names
    if lang in ("zh", "ja"):
        return (_CJK_CODE_VERB_BEFORE.search(text, 0, start) is not None
                or _CJK_CODE_VERB_AFTER.match(text, end) is not None)
    before = _CODE_BEFORE.search(text, 0, start)
    after = _CODE_AFTER.match(text, end)
    own = {key(w, lang) for w in (before.group(1) if before else None,
                                  after.group(1) if after else None) if w}
    return any(w and set(w.split()) & set(words) for w in own)


_CHAT_AFTER_LEAD = re.compile(
    r"(?:let\s+me|lemme|let's\s+see|i'll|i\s+will|i'm\s+going\s+to|i\s+see|i\s+think"
    r"|that's\s+(?:a\s+)?(?:good|great|fair|nice|right|true)|good\s+(?:idea|point|call)"
    r"|never\s*mind|one\s+sec|give\s+me\s+a|brb)\b", re.I)
"""Talk about the conversation after a lead such as "Hang on," or "Wait,": "Hang on,
let me check the logs" corrects nothing, so the bare clause is no corrected fact."""


_DISMISSAL = re.compile(
    r"\b(?:that|it|this|those|them)\s+anyway\b"
    r"|\b(?:does(?:n't|\s+not)|won't|wouldn't|didn't)\s+(?:really\s+)?matter\b"
    r"|无所谓|不重要|反正[^，,。！!？?]*会[^，,。！!？?]*的"
    r"|どうでもいい|関係ない|関係ありません|どうせ", re.I)
"""A clause that makes the point before it moot rather than giving it a new value:
"oh wait, gofmt decides that anyway", "Actually, it doesn't matter", 等等，反正gofmt会
处理的, いや、関係ないです. After a correction lead it replaces nothing."""


def _with_code(subject: str | None, text: str, lang: str) -> str | None:
    """``subject`` with the words of the commands the statement quotes as inline code
    (masked for the rules, so absent from the key) where the code is what the subject
    acts on (:func:`_code_names_subject`): "Always run `make lint` before committing"
    and "Always run `pytest -q` …" are two rules, not two values of ``run``."""
    words = (subject or "").split()
    base = list(words)
    for start, end, code in masked_code(text):
        if _code_names_subject(text, start, end, base, lang):
            words += [w for w in (key(code, lang) or "").split() if w not in words]
    return " ".join(words)[:120] or subject


def _item(text: str, c: Clause, v: Verdict, correction: bool,
          task_label: str | None = None) -> Extracted:
    q: Quantity | None = primary_quantity(c.quantities, c.scan) if v.kind != "question" else None
    cond = text[c.condition[0]:c.condition[1]] if c.condition else None
    said = text[c.start:c.end].strip()
    subject, negated = v.subject, v.negated
    if v.kind == "fact":
        # "I'm 35." / "I turned 36.": one key (age module); "I never had a dog.": a denial
        subject = age_key(said, subject, q.value if q else None, q.unit if q else None,
                          c.lang)
        negated = negated or denial.find(said, c.lang) is not None
    return Extracted(
        kind=v.kind, text=said, subject=subject,
        value=q.value if q else None, value_text=q.value_text if q else None,
        unit=q.unit if q else None, condition=cond, correction=correction,
        task_label=task_label, lang=c.lang, negated=negated,
        loose=q is not None and loose(c.scan, q, c.start, c.end, c.lang),
        lasting=v.lasting,
        edit=correction and c.lang == "en" and lx.EN_EDIT_ORDER.match(said) is not None,
    )


_SEPARATORS = " \t\n,;:\u2013\u2014\uff0c\uff1b\uff1a\u3001"


def _trimmed(scan: str, a: int, b: int) -> tuple[int, int]:
    """``[a, b)`` without the spaces and clause separators at its ends."""
    while a < b and scan[a] in _SEPARATORS:
        a += 1
    while b > a and scan[b - 1] in _SEPARATORS:
        b -= 1
    return a, b


def _task(text: str, scan: str, start: int, end: int, lang: str, label: str,
          topic: tuple[int, int] | None = None) -> list[Extracted]:
    """The ``task`` item of a task line ``scan[start:end]`` (and, for a decision, its
    ``decision`` item). ``topic``: the span that names the work where a cue of
    :mod:`.status` surrounds it ("the staging DB" of "Blocked on the staging DB"),
    keyed instead of the clause."""
    c = _build(scan, start, start, end, lang, question=False)
    rules = _LANGS[lang]
    correction = bool(rules.correction.match(c.core))
    if topic is not None:
        subject = key(scan[topic[0]:topic[1]], lang, action=True) or key(c.core, lang,
                                                                          action=True)
        return [_item(text, c, Verdict("task", subject), correction, label)]
    verdict = rules.classify(c)
    subject = verdict.subject if verdict else key(c.core, lang, action=True)
    items = [_item(text, c, Verdict("task", subject), correction, label)]
    if label == "decision":
        items.append(_item(text, c, Verdict("decision", subject), correction))
    return items


def extract(text: str, *, speaker: str = "user") -> list[Extracted]:
    """Extract memory items from one chat message, deterministically and without I/O.

    ``speaker`` is the message role: ``"user"`` yields facts, decisions, constraints,
    preferences, questions and task lines; ``"assistant"`` yields only ``proposal``
    items; any other role (tool, system) yields nothing. Items come in text order; each
    ``text`` is a verbatim substring of ``text`` (for task lines, the part after the
    label). Fenced code, block quotes, URLs and quoted spans are never read as
    statements; a user message that asks memory not to keep it ("Don't remember
    this", "off the record", 这个别记, これは覚えないで: :mod:`.opt_out`) yields nothing.
    Never raises for any ``str`` input; work is linear in its length.
    """
    if speaker not in ("user", "assistant") or not text or not text.strip():
        return []
    restored, added = contractions.restore(text)
    if added:  # "i dont like coffee": read as "i don't …", quoted as typed
        return _as_typed(_extract(restored, speaker), restored, added)
    return _extract(text, speaker)


def _as_typed(items: list[Extracted], restored: str, added: frozenset[int]
              ) -> list[Extracted]:
    """``items`` read from ``restored`` (:func:`contractions.restore`), their quoted
    strings as the user typed them."""
    out: list[Extracted] = []
    cursor = 0
    for item in items:
        pieces = []
        for piece in item.text.split(ELISION):
            typed, cursor = contractions.original(piece, restored, added, cursor)
            pieces.append(typed)
        if len(pieces) > 1 and not all(p.strip() for p in pieces):
            # "Love Python and hate Java.": the elided subject was one read in
            pieces = [" ".join(p.strip() for p in pieces if p.strip())]
        fields = {name: contractions.original(value, restored, added)[0]
                  for name in ("value_text", "condition", "replaces", "replacement")
                  if isinstance(value := getattr(item, name), str)}
        out.append(replace(item, text=ELISION.join(pieces),
                           value_text=fields.get("value_text", item.value_text),
                           condition=fields.get("condition", item.condition),
                           replaces=fields.get("replaces", item.replaces),
                           replacement=fields.get("replacement", item.replacement)))
    return out


def _extract(text: str, speaker: str) -> list[Extracted]:
    message = _Message(text, speaker)
    if speaker == "user" and opt_out.opted_out(message.scan):
        # "Don't remember this, but …": the user keeps it out of memory. Read on the
        # prepared scan, so a request quoted, pasted or in a block quote is no opt-out.
        return []
    items = message.items()
    others = transcript.other_lines(text) if speaker == "user" else []
    return _mark_quoted(text, items, others) if others else items


def _mark_quoted(text: str, items: list[Extracted], others: list[tuple[int, int]]
                 ) -> list[Extracted]:
    """``items`` with those that start in another speaker's line (``others``,
    :func:`transcript.other_lines`) marked ``quoted``: material the user passes on."""
    out: list[Extracted] = []
    cursor = 0
    for item in items:
        at = text.find(item.text, cursor)
        if at < 0:
            at = text.find(item.text.split(ELISION)[-1], cursor)
        if at >= 0:
            cursor = at
            if any(a <= at < b for a, b in others):
                item = replace(item, quoted=True)
        out.append(item)
    return out


_SERIES_WORD = re.compile(r"([a-z][a-z-]{1,15}) #?\d+[a-z]?")
"""An English ordinal label ("run 17", "trial 4"): its word names the series."""
_LEADING_LABEL = re.compile(r"(?:^|[.!?]\s+|\n)\s*([A-Za-z][A-Za-z-]{1,15})\s*#?\d+[a-z]?\s*:\s")
"""A sentence led by an ordinal label and a colon ("Run 8: batch 32, …"), whether or
not it gave an item."""


def _siblings(text: str, items: list[Extracted]) -> list[Extracted]:
    """``items`` with each that names another member of a series the message labels
    ("Run 17: … val loss 1.92. A bit worse than run 16.") labelled with that member:
    it compares one run with another, one of the series as the labelled lines are."""
    words = {m.group(1) for i in items if i.label
             for m in [_SERIES_WORD.fullmatch(i.label)] if m is not None}
    if ":" in text:
        words |= {m.group(1).lower() for m in _LEADING_LABEL.finditer(text)}
    if not words:
        return items
    named = re.compile(r"\b(" + "|".join(sorted(map(re.escape, words))) + r")\s*#?(\d+[a-z]?)\b",
                       re.I)
    out = []
    for item in items:
        m = None if item.label else named.search(item.text)
        out.append(replace(item, label=f"{m.group(1).lower()} {m.group(2)}") if m else item)
    return out


class _Message:
    """The state one message carries from sentence to sentence (see module doc)."""

    def __init__(self, text: str, speaker: str) -> None:
        self.text = text
        self.speaker = speaker
        # 不是X，而是Y: read as its Y (the X masked), the item names X as replaced
        self.scan, self.denied = contrast.affirm(transcript.mask(prepare(text)))
        # "Budget is 40k, period.": keyed without the phrase, the item it closes lasts
        self.scan, self.settled = settled.settle(self.scan)
        self.folded: str | None = None  # traditional -> simplified, made when first needed
        self.lang = detect_lang(self.scan)
        self.out: list[Extracted] = []
        self.section: tuple[str, int] | None = None  # (task label, header line)
        self.pending_correction = False  # "訂正です。" flags the next sentence
        self.previous: tuple[str, str | None] | None = None  # (subject, unit class)
        self.referent: referent.Person | None = None  # "My sister …" for a "She …" after it
        self.label: str | None = None  # "run 39": the sentence's ordinal label, if any
        self.list_number: str | None = None  # "2" in a numbered list's "2. bring …"
        self.rule_list = False  # the list below a title such as "Rules:" (_RULE_LIST)
        self.update_at: int | None = None  # where an unmarked update cue starts ("now")
        self.update_end: int | None = None
        self.revise_upto: int | None = None  # "… after yesterday's change": clauses before
        self.marked = False  # the sentence has a correction cue of its own
        # where a closing "instead" that alone marks the sentence a correction starts:
        # it revises the clause it ends, not the clauses before it
        self.instead_at: int | None = None
        self.noted = False  # the sentence leads with a note label ("Note to self:", 提醒：)
        self.swap: replacement.Replacement | None = None  # "We replaced X with Y"
        # the last sentence withdrew an item: (where it starts, the phrase naming the item)
        self.withdrawn_at: tuple[int, str] | None = None
        self.sentence_found = 0  # where the last sentence's items start in ``out``

    def items(self) -> list[Extracted]:
        sents = segment(self.text, self.scan)
        plan = status.plan_steps(self.scan, [(s.start, s.end) for s in sents], self.lang) \
            if self.speaker == "user" else {}
        for i, sent in enumerate(sents):
            lang = detect_lang(self.scan[sent.start:sent.end], self.lang)
            if lang == "zh" and self.folded is None:
                self.folded = fold_traditional(self.scan)
            sc = self.folded if lang == "zh" and self.folded is not None else self.scan
            head = sc[sent.start:min(sent.end, sent.start + _LABEL_WINDOW)]
            labelled = ":" in head or "]" in head or " \u2014 " in head or " \u2013 " in head
            if not sent.list_item:
                self.rule_list = (sc[sent.end - 1] in ":：" and i + 1 < len(sents)
                                  and sents[i + 1].list_item
                                  and _RULE_LIST.search(sc, sent.start, sent.end) is not None)
            if self.speaker == "user" and self._task_line(sc, sent, lang, labelled):
                self.withdrawn_at = None  # a task list between is no stance's sentence
                continue
            if sc[sent.end - 1] in ":：" and i + 1 < len(sents) and sents[i + 1].list_item \
                    and sents[i + 1].line > sent.line and not _VERB.search(sc, sent.start,
                                                                            sent.end):
                self.withdrawn_at = None
                continue  # "Release checklist for v2.3:" titles the list below: no statement
            self.list_number = sent.number
            if sent.start in plan:  # "Step 1: add a uuid column. Step 2: backfill it."
                end = sent.end - (sc[sent.end - 1] in ".。")
                self.out += _task(self.text, sc, sent.start, end, lang, "todo",
                                  (plan[sent.start], end))
                continue
            marks = status.find(sc, sent.start, sent.end, lang) \
                if self.speaker == "user" else []
            if marks:  # "Done with step 1. Next, wire the URL.": task state, no label
                self._status(sc, sent, lang, labelled, marks)
                continue
            clauses = script_clauses(self.scan, sent.start, sent.end)
            if len(clauses) == 1:
                self._sentence(sc, sent.start, sent.end, lang, labelled)
                continue
            for a, b in clauses:  # "我住在上海, but I work in Berlin.": each by its rules
                lang = detect_lang(self.scan[a:b], self.lang)
                if lang == "zh" and self.folded is None:
                    self.folded = fold_traditional(self.scan)
                sc = self.folded if lang == "zh" and self.folded is not None else self.scan
                self._sentence(sc, a, b, lang, labelled)
        if self.denied or self.settled:
            # each item located once and the phrases found by bisection: a long paste
            # with thousands of both stays linear in their number, not their product
            spots = [self.text.find(i.text) for i in self.out]
            if self.denied:
                order = sorted(range(len(self.denied)), key=lambda k: self.denied[k][0])
                xs = [self.denied[k][0] for k in order]
                self.out = [self._denying(i, at, order, xs) for i, at in zip(self.out, spots)]
            if self.settled:
                starts = [start for start, _ in self.settled]
                self.out = [self._settling(i, at, starts) for i, at in zip(self.out, spots)]
        if self.speaker == "user":  # "In this project …", "Team decision: …"
            self.out = scope_markers.settle(self.text, self.scan, self.out)
            self.out = self._grounded(self.out)
            self.out = rule_lists.listed_rules(self.text, self.out)  # "Ground rules:\n- …"
            self.out = practice.team_practice(self.out)  # "We deploy X with Helm"
        self.out = _siblings(self.text, self.out)
        if "*" in self.text or "__" in self.text:
            self.out = [replace(i, text=with_emphasis(self.text, i.text)) for i in self.out]
        return self.out

    def _grounded(self, items: list[Extracted]) -> list[Extracted]:
        """``items`` with each order that rests on a lasting reason marked ``lasting``
        ("I live in Lisbon, so give me times in Lisbon time": :mod:`.grounds`); not a
        guess, nor one scoped to the answer at hand (``one_off``)."""
        out: list[Extracted] = []
        cursor = 0
        for item in items:
            at = self.text.find(item.text, cursor)
            if at >= 0:
                cursor = at
                if item.kind == "constraint" and not item.lasting and not item.one_off \
                        and not item.tentative and not item.quoted \
                        and grounds.rests_on_lasting(self.scan, at, at + len(item.text)):
                    item = replace(item, lasting=True)
            out.append(item)
        return out

    def _settling(self, item: Extracted, at: int, starts: list[int]) -> Extracted:
        """``item`` (found at ``at`` in the text, -1 if not) marked ``lasting`` where it
        holds a settling phrase of ``self.settled`` (``starts``: their starts) ("Budget
        is 40k, period.", :mod:`.settled`): the user fixed its value. Not a guess, nor a
        claim passed on from someone else ("Per Lena: …, no exceptions": theirs to set,
        :func:`memory_core.items.accounts.relayed`), nor a clause told in the past
        (:data:`.settled.PAST`: "that movie was the best ever, period")."""
        if at < 0 or item.kind not in STATEMENT_KINDS or item.tentative:
            return item
        stop = at + len(item.text)
        for start, end in self.settled[bisect_left(starts, at):]:
            if start > stop:
                break
            line = self.text.rfind("\n", 0, start) + 1
            if end <= stop and not accounts.relayed(self.text[line:end]) \
                    and settled.PAST.search(self.text, line, start) is None:
                return replace(item, lasting=True)
        return item

    def _denying(self, item: Extracted, at: int, order: list[int], xs: list[int]
                 ) -> Extracted:
        """``item`` (found at ``at`` in the text, -1 if not) naming the X it denies as
        replaced by its Y ("我们用的不是MySQL，而是PostgreSQL": replaces ``MySQL``), so an
        item stating X is revised as by "it's 5434, not 5433"; ``item`` itself where it
        holds no denial or names one already. ``order``: the indexes of ``self.denied``
        by X's start; ``xs``: those starts. The first denial it holds, in
        ``self.denied``'s order, is the one named."""
        if at < 0 or item.replaces is not None:
            return item
        stop = at + len(item.text)
        held = []
        for pos in range(bisect_left(xs, at), len(xs)):
            if xs[pos] > stop:
                break
            if self.denied[order[pos]][3] <= stop:
                held.append(order[pos])
        if not held:
            return item
        x, x_end, y, y_end = self.denied[min(held)]
        return replace(item, correction=True, replaces=self.text[x:x_end].strip(),
                       replacement=self.text[y:y_end].strip())

    def _task_line(self, sc: str, sent: Sentence, lang: str, labelled: bool) -> bool:
        """Handle a task header, a labelled task line or a list item under a header."""
        a, b = sent.start, sent.end
        if self.section and sent.line != self.section[1] and not sent.list_item:
            self.section = None
        header = lx.TASK_HEADER.match(sc[a:b]) if b - a <= _LABEL_WINDOW else None
        if header:
            self.section = (_label(lx.TASK_LABELS, header), sent.line)
            return True
        label = lx.TASK_LABEL.match(sc[a:b]) if labelled else None
        if label:
            name = _label(lx.TASK_LABELS, label)
            if not _has_content(sc[a + label.end():b]):
                self.section = (name, sent.line)
            else:
                self.out += _task(self.text, sc, a + label.end(), b, lang, name)
            return True
        if self.section and sent.list_item:
            if self.section[0] == "todo" and sent.number \
                    and (mark := _LIST_MARK.search(sc, max(0, a - 8), a)):
                a = mark.start()  # "2. Port the models": its number, for "Step 2 done"
            self.out += _task(self.text, sc, a, b, lang, self.section[0])
            return True
        return False

    def _status(self, sc: str, sent: Sentence, lang: str, labelled: bool,
                marks: list[status.Status]) -> None:
        """A sentence with task state said without a label (:mod:`.status`): each
        status clause is a ``task`` item with its label; the words between them are
        read as a sentence of their own ("Rolled back to v3.14.2, 5xx back under 1%":
        a progress line and a reading)."""
        at = sent.start
        for m in marks:
            a, b = _trimmed(sc, at, m.start)
            if _has_content(sc[a:b]):
                self._sentence(sc, a, b, lang, labelled)
            self.out += _task(self.text, sc, m.start, m.end, lang, m.label,
                              (m.topic_start, m.topic_end))
            at = m.end
        a, b = _trimmed(sc, at, sent.end)
        if _has_content(sc[a:b]):
            self._sentence(sc, a, b, lang, labelled)

    def _prefixes(self, sc: str, a: int, b: int, rules: _Lang,
                  labelled: bool, lang: str) -> tuple[int, bool, str | None]:
        """Strip meta labels, correction cues and fillers; (body, correction, forced kind)."""
        body, correction, forced = a, self.pending_correction, None
        self.pending_correction = False
        if self.speaker == "user" and promotion.promoted(sc[a:b]):
            forced = "constraint"  # "Remember: reports should be in German."
        self.noted = False
        for _ in range(_MAX_PREFIXES):  # "Sorry, typo - I meant …": several prefixes
            seg = sc[body:b]
            m = lx.META_LABEL.match(seg) if labelled else None
            if m is None and labelled:
                m = lx.RULE_LEAD.match(seg)  # "Here is my rule:", 私のルール：
                if m and m.end():
                    forced = "constraint"
                    if m.group("topic"):
                        break  # "Refund policy: …": the topic reader keys the rule under it
                    body += m.end()
                    continue
            if m:
                role = _label(lx.META_LABELS, m)
                correction = correction or role == "correction"
                self.noted = self.noted or role == "note"
                forced = role if role in ("constraint", "preference", "question") else forced
            else:
                m = rules.correction.match(seg)
                if m:
                    correction = True
                elif cut := apology_end(seg):
                    # "I'm sorry, …", "Sorry about that - …", 抱歉，…: before the
                    # fillers, which know "sorry" alone; a cue after it still counts
                    body += cut
                    continue
                else:
                    m = rules.filler.match(seg)
                    if not m or not m.end():
                        # a laugh, a discourse marker or a time word before the
                        # statement ("lol I'm 35", 哈哈我是护士, "Today I want you to …")
                        found = leads.lead(seg, lang, lang == "en" and dated.opens_plan(seg))
                        if found is not None:
                            forced = "constraint" if found.standing else forced
                            body += found.end
                            continue
            if not m or not m.end():
                break
            body += m.end()
        return body, correction, forced

    def _sentence(self, sc: str, a: int, b: int, lang: str, labelled: bool) -> None:
        tail = promotion.kept_tail(sc, a, b) if self.speaker == "user" else None
        if tail is not None:
            # "I'm allergic to penicillin, keep that in mind.": the clause asks to keep
            # what it points back at (the sentence before it, or this one's start) and
            # holds nothing of its own; what it points at stands
            said = _has_content(sc[a:tail])
            found = len(self.out) if said else self.sentence_found
            if said:
                self._sentence(sc, a, tail, lang, labelled)
            self._keep(found, lang)
            return
        self.sentence_found = len(self.out)
        follows, self.withdrawn_at = self.withdrawn_at, None
        if self.speaker == "user":
            withdrawn = retraction.find(sc, a, b, lang)
            if withdrawn is not None:
                self._withdraw(sc, a, b, lang, withdrawn)
                return
        if follows is None or b - a > _STANCE_MAX:
            self._read(sc, a, b, lang, labelled)
            return
        # "Scratch the 200-word cap. Make it 300 words.": the new stance replaces what
        # was withdrawn; its item quotes both sentences
        found, previous = len(self.out), self.previous
        self.pending_correction = True
        self._read(sc, a, b, lang, labelled)
        self._stance(found, previous, follows, lang, lambda: self._read(sc, a, b, lang, labelled))

    def _keep(self, found: int, lang: str) -> None:
        """Mark the statements from ``found`` on ``lasting``: the user asked the assistant
        to keep them (:func:`promotion.kept_tail`); a guess stays a guess, and what is
        bound to a day it names ("Call the dentist today, remember that") passes with
        that day (:func:`dated.names_day`)."""
        for i in range(found, len(self.out)):
            item = self.out[i]
            if item.kind in STATEMENT_KINDS and item.kind != "question" and not item.tentative \
                    and not dated.names_day(item.text, lang):
                self.out[i] = replace(item, lasting=True)

    def _withdraw(self, sc: str, a: int, b: int, lang: str, w: retraction.Retraction) -> None:
        """A withdrawal ("Forget the 200-word limit"): a ``retraction`` item naming what
        is withdrawn; a new value or stance after it in the sentence ("…, answer as long
        as you need") or in the next short one is read as a correction that replaces
        it, quoting the withdrawal (:func:`retraction.takes_place`); anything else
        after it is read on its own."""
        stance = w.tail < b and _has_content(sc[w.tail:b])
        text = self.text[a:w.tail if stance else b].strip()
        self.out.append(Extracted(kind=RETRACTION, text=text,
                                  subject=key(sc[w.at:w.end], lang),
                                  replaces=self.text[w.at:w.end], lang=lang, said=w.said,
                                  every=w.every))
        if not stance:
            if w.order:  # "Skip the tests from now on": the order is its own stance
                self._read(sc, a, b, lang, False)
                return
            self.withdrawn_at = (a, sc[w.at:w.end])
            return
        rest = sc[w.tail:b]
        if _is_question(rest, lang):
            self._read(sc, w.tail, b, lang, False)
            return
        found, previous = len(self.out), self.previous
        self.label = self.update_at = self.update_end = self.swap = None
        self.revise_upto = None
        self.marked = True
        self._statements(sc, w.tail, w.tail, b, lang,
                         tokens(rest) if lang == "en" else frozenset(), True, None)
        self._stance(found, previous, (a, sc[w.at:w.end]), lang,
                     lambda: self._read(sc, w.tail, b, lang, False))

    def _stance(self, found: int, previous: tuple[str, str | None] | None,
                withdrawal: tuple[int, str], lang: str, read_alone: Callable[[], None]) -> None:
        """The items from ``found`` on were read as the stance after a withdrawal
        (``withdrawal``: where it starts, the phrase naming what it withdraws). Keep
        them, quoting the withdrawal, if one takes the withdrawn item's place
        (:func:`retraction.takes_place`); else read the words again on their own
        ("Forget the word limit. We deploy with Argo CD."), unless alone they say
        nothing or only a bare order to use a kind of thing ("Use American spelling."
        answers the withdrawal: :func:`rules_en.is_convention`)."""
        stance = self.out[found:]
        if not any(retraction.takes_place(i, withdrawal[1], lang) for i in stance):
            after = self.previous
            del self.out[found:]
            self.previous, self.pending_correction = previous, False
            read_alone()
            alone = self.out[found:]
            if not stance or (alone and not all(
                    i.kind == "constraint" and rules_en.is_convention(i.text) for i in alone)):
                return
            del self.out[found:]
            self.out.extend(stance)
            self.previous = after
        self._quote_from(withdrawal[0], found)

    def _quote_from(self, start: int, found: int) -> None:
        """Make the items from ``found`` on quote the message from ``start``."""
        for i in range(found, len(self.out)):
            item = self.out[i]
            at = self.text.find(item.text, start)
            if at >= 0 and item.kind in STATEMENT_KINDS:
                self.out[i] = replace(item, text=self.text[start:at + len(item.text)].strip())

    def _read(self, sc: str, a: int, b: int, lang: str, labelled: bool) -> None:
        """Read one sentence ``sc[a:b]`` (:meth:`_read_body`); the items it gives
        quote it without its greeting or empty opener ("Hi,", "OK so", 嗨，,
        こんにちは、: :func:`leads.opener_end`), which is nobody's memory."""
        found = len(self.out)
        self._read_body(sc, a, b, lang, labelled)
        cut = leads.opener_end(sc[a:b], lang) if len(self.out) > found else 0
        if cut:
            head = self.text[a:a + cut].strip()
            for i in range(found, len(self.out)):
                item = self.out[i]
                rest = item.text[len(head):].lstrip()
                if item.text.startswith(head) and rest:
                    self.out[i] = replace(item, text=rest)

    def _read_body(self, sc: str, a: int, b: int, lang: str, labelled: bool) -> None:
        rules = _LANGS[lang]
        body, correction, forced = self._prefixes(sc, a, b, rules, labelled, lang)
        self.label = self.update_at = self.update_end = self.swap = None
        self.revise_upto = None
        ordinal = ORDINAL_LABEL.match(sc, body, b)
        if ordinal and _has_content(sc[ordinal.end():b]):
            # "Run 39: loss 0.41", "Step 3: restart", "第3步": a sibling in a series. The
            # ordinal is a name, not a quantity, and it names the subject.
            self.label = ordinal_label(ordinal)
            body = ordinal.end()
        elif self.list_number and not self.rule_list:
            # "2. bring a cash float of 50 euros": one step of a numbered list (a
            # checklist, a plan) is one of a series like "Step 2: …"; an item of a
            # list of rules ("Rules for this repo:") is not.
            self.label = "#" + self.list_number
        self.marked = correction  # "Actually …": the whole sentence revises
        topic = None
        if lang == "en" and self.label is None and not _SCOPE_LEAD.match(sc, body, b) \
                and not lx.EN_UPDATE_LEAD.match(sc[body:b]):
            # "Staging: the port is 5432": the statements are read after the lead and
            # keyed under it (_about)
            topic = topic_lead(sc, body, b)
            if topic is not None:
                body = topic.end
        if self.speaker == "user" and not _is_question(sc[body:b], lang):
            body, correction = self._update(sc, body, b, lang, correction)
        rest = sc[body:b]
        toks = tokens(rest) if lang == "en" else frozenset()
        if topic is not None and (not _has_content(rest) or len(rest) <= _SMALL_TALK_MAX and (
                _maybe_small_talk(rest, lang, toks) and rules.small_talk.match(rest))):
            # "p99 latency budget: 200ms, that's the SLO": what follows the lead says
            # nothing alone; the sentence is read whole, as without one
            body, topic = topic.start, None
            rest = sc[body:b]
            toks = tokens(rest)
        if not _has_content(rest):
            self.pending_correction = correction
            return
        if len(rest) <= _SMALL_TALK_MAX and _maybe_small_talk(rest, lang, toks) \
                and rules.small_talk.match(rest):
            return
        self.instead_at = None
        tail = lx.EN_CORRECTION_TAIL.search(rest, toks) if lang == "en" else None
        if tail is not None and lx.EN_NARRATED_INSTEAD.search(rest):
            tail = None  # "… so I took a taxi instead": what happened, no revision
        if (lang == "ja" and lc.JA_CORRECTION_MID.search(rest)) or (
                tail is not None and not lx.EN_NEGATION.search(rest, toks)):
            if tail is not None and not correction and tail.group().lower().startswith("instead"):
                # "It poured all afternoon, so I skipped my run and watched a documentary
                # instead": the clause before says what happened, it revises nothing
                self.instead_at = body + tail.start()
            correction = True  # "Let's use MySQL instead." (but not "Never X, use Y instead")
        question = forced == "question" or (_is_question(rest, lang) and not (
            lang == "en" and _saves(sc[a:body], rest)))
        if self.speaker == "assistant":
            c = _build(sc, a, body, b, lang, question, toks=toks)
            verdict = rules.proposal(c)
            if verdict:
                self.out.append(_item(self.text, c, verdict, correction))
        elif question and self._premise(sc, body, b, lang, correction):
            return
        elif question:
            c = _build(sc, a, body, b, lang, question, toks=toks)
            subject = rules.question_subject(c) if lang == "en" else None
            ask_at = lasting_request(sc, body, b, lang) \
                if self.speaker == "user" and rules.is_request(c) else None
            if ask_at is not None:
                # "Could you keep answers under 150 words from now on?", 以后能不能都用
                # 中文回答？, 今後は…まとめていただけますか: a rule asked politely, read
                # after its asking words where they lead
                self._statements(sc, a, ask_at, b, lang, tokens(sc[ask_at:b])
                                 if lang == "en" else frozenset(), correction, "constraint")
            elif asked_rule.standing(rest, lang, rules.is_request(c)) and (
                    subject is not None or lang != "en"):
                # "Could you always answer in bullet points from now on?": a rule (a
                # CJK question's key keeps its time words, これ of これからは: none)
                rule = Verdict("constraint", subject, asked_rule.prohibits(rest, lang))
                self.out.append(_item(self.text, c, rule, correction))
            elif not (rules.is_request(c) or rules.is_hypothetical(c)):
                asked = Verdict("question", rules.question_subject(c))
                self.out.append(_item(self.text, c, asked, correction))
        else:
            found = len(self.out)
            self._statements(sc, a, body, b, lang, toks, correction, forced)
            if self.label and len(self.out) == found and ordinal is not None:
                # "Phase 2 ends on 30 June": nothing left to say without the label's
                # word; read the sentence whole (the subject still starts with the label).
                self._statements(sc, a, ordinal.start(), b, lang, tokens(sc[ordinal.start():b])
                                 if lang == "en" else frozenset(), correction, forced,
                                 numbers_from=ordinal.end())
            if topic is not None and all(i.subject is None for i in self.out[found:]):
                # "Staging DB: Postgres 16 on 5433": nothing keyed after the lead alone;
                # read the sentence whole, as without one (what the lead's read found
                # stays if that finds nothing)
                kept = self.out[found:]
                del self.out[found:]
                self._statements(sc, a, topic.start, b, lang, tokens(sc[topic.start:b]),
                                 correction, forced)
                if len(self.out) == found:
                    self.out.extend(kept)
            elif topic is not None and topic.key:
                self._about(sc, a, topic, found)
            if self.noted and len(self.out) == found and self.speaker == "user":
                self._note(sc, a, body, b, lang, toks, correction,
                           "constraint" if forced == "constraint" else "fact")

    def _premise(self, sc: str, body: int, b: int, lang: str, correction: bool) -> bool:
        """A question resting on a fact of the user's own ("Since I'm vegan, what should
        I cook tonight?", :mod:`.premise`): read that clause as a statement in place of
        the question; whether it stated something."""
        span = premise.find(sc, body, b) if lang == "en" and self.speaker == "user" else None
        if span is None:
            return False
        found = len(self.out)
        self._statements(sc, span[0], span[0], span[1], lang, tokens(sc[span[0]:span[1]]),
                         correction, None)
        if any(i.kind in STATEMENT_KINDS for i in self.out[found:]):
            return True
        del self.out[found:]
        return False

    def _note(self, sc: str, a: int, body: int, b: int, lang: str, toks: frozenset[str],
              correction: bool, kind: str = "fact") -> None:
        """A note the user leaves for later that no rule read ("Note to self: renew the
        domain before June.", "Reminder: call the bank on Monday.", 提醒：六月前续费域名,
        メモ：金曜までに請求書を送る): an action the user owes, not an order to the agent
        (that one, "Reminder: answer in English.", is a constraint its rules read). It
        is a ``fact`` keyed by what follows the label, as "I have to renew the domain
        before June." is: kept beyond its conversation and recalled when a turn matches
        it, never standing (nothing in it says it stands), and not a ``TODO:`` line,
        which is the task state of its own thread (docs/evaluation/memory_replays.md,
        row 91). ``kind`` is ``constraint`` for a norm the label promotes
        (:mod:`.promotion`: 记住：报告应该用德语)."""
        subject = key(sc[body:b], lang, action=True)
        if not subject:
            return
        c = _build(sc, a, body, b, lang, False, toks=toks)
        self.out.append(_item(self.text, c, Verdict(kind, subject), correction))

    def _about(self, sc: str, a: int, lead: Topic, found: int) -> None:
        """The statements from ``found`` on, read after a topic lead ("Staging: the
        port is 5432", "Regarding the billing job, …": :mod:`~memory_core.extraction.topic`)
        in the sentence from ``a``: their subjects start with the topic's key, and each
        quotes its lead (the sentence from its start, or the lead, an ellipsis and the
        clause: :data:`~memory_core.extraction.model.ELISION`), so siblings under two
        topics neither rival nor read alike."""
        for i in range(found, len(self.out)):
            item = self.out[i]
            at = self.text.find(item.text, a)
            if item.kind not in STATEMENT_KINDS or not item.subject or at < 0:
                continue
            key, text = lead.key, item.text
            inner = topic_lead(sc, at, at + len(item.text)) if at > lead.end else None
            if inner is not None and inner.key:
                key = inner.key  # "Staging: the port is 5432, prod: the port is 6543"
            elif at > lead.end:  # a later clause: "Status of X: … the pool size is 208"
                text = f"{self.text[a:lead.end].strip()}{ELISION}{item.text}"
            elif at > a:
                text = self.text[a:at + len(item.text)].strip()
            subject = item.subject
            if not subject.startswith(key):
                subject = f"{key} {subject}"
            self.out[i] = replace(item, subject=subject, text=text, topic=key)

    def _update(self, sc: str, body: int, b: int, lang: str, correction: bool
                ) -> tuple[int, bool]:
        """Find an unmarked update ("From today …", "… now", "switched to", 现在, 今は):
        it revises the earlier state of the same subject like "actually" does. A cue
        that opens the sentence is stripped; one inside it marks where the subject
        phrase ends (:meth:`_add`). A replacement ("We replaced RabbitMQ with Kafka",
        :mod:`~memory_core.extraction.replacement`) is one too; one that is not done
        (negated, planned, a condition) is no update at all."""
        now = _ZH_NOW_ORDER.match(sc, body, b) if lang == "zh" else None
        if now is not None and not _ZH_DONE.search(sc, now.end(), b):
            body = now.end()  # "现在把这个函数拆成两个": the next order, read without 现在
        if lang == "zh" and _ZH_ORDER_LEAD.match(sc, body, b) and not _ZH_DONE.search(sc, body, b):
            return body, correction  # "把这个变量名改成 user_count": an order, no update
        swap = replacement.find(sc, body, b, lang)
        if swap is replacement.BLOCKED:
            return body, correction
        if swap is not None:
            self.swap = swap
            self.update_at, self.update_end = swap.at, swap.end
            return body, True
        if lang == "en":
            lead = lx.EN_UPDATE_LEAD.match(sc[body:b])
            if lead and lead.end() and _has_content(sc[body + lead.end():b]):
                if lx.EN_RULE_LEAD.match(lead.group()):
                    return body, True  # "From now on, …": the rule's own words stay
                return body + lead.end(), True
            toks = tokens(sc[body:b])
            since = lx.EN_UPDATE_SINCE.search(sc[body:b], toks)
            if since is not None and since.start() > 0 and since.group("after") is None:
                return body, True  # "… is Postgres 16 now that we upgraded"
            if since is not None and since.start() > 0 and _EN_BE.search(
                    sc, body, body + since.start()):
                # "… is 208 and the heartbeat is 573 ms after yesterday's change": the
                # clauses up to the change revise, not one after it ("…, before it was 60%")
                self.revise_upto = body + since.end()
                return body, correction
            cue = lx.EN_UPDATE.search(sc[body:b], toks) or lx.EN_UPDATE_NEW.search(sc[body:b], toks)
            if cue is not None and cue.groupdict().get("named") \
                    and replacement.actor(sc[body:b]) == "other":
                return body, correction  # "My sister has a new dentist, Dr. Osei": hers
            order = lx.EN_IMPERATIVE.match(sc[body:b].replace(",", " ", 1)) \
                if cue is not None and cue.start() == 0 and cue.group(0).lower() == "now" \
                else None
            if cue is not None and lx.EN_RISE.match(cue.group()) \
                    and lx.EN_PASSING.search(sc, body, b):
                return body, correction  # "CPU went up to 95% during the test": a reading
            if order is not None and order.group("verb").lower() in _ONE_OFF_VERBS \
                    and not _NOW_STATEMENT.match(sc, body, b):
                # "Now translate that paragraph": the next task, no update ("Now keep
                # answers under 100 words" revises the earlier rule)
                return body, correction
        else:
            update = lc.ZH_UPDATE if lang == "zh" else lc.JA_UPDATE
            cue = update.search(sc, body, b)
            while cue is not None and cue.group() in ("以后", "往后") and cue.start() > body \
                    and not _ZH_BEFORE_LATER.search(sc, body, cue.start()):
                cue = update.search(sc, cue.end(), b)  # "上线以后": after an event
            if cue is not None and cue.start() > body and sc[cue.start() - 1] in "不没别未":
                return body, correction  # "决定不迁移到AWS", "我们不换成Kafka": nothing changed
            if cue is not None and lang == "zh" and lc.ZH_MOVED.match(sc, cue.start()) and (
                    lc.ZH_REPLACE_BLOCK.search(sc, body, cue.start())
                    or lc.ZH_WISH.search(sc, body, cue.start())):
                return body, correction  # "我打算明年搬到成都了", "我不想搬到成都了": not done
            if cue is not None and lang == "zh" and cue.group() in ("改到", "调到", "挪到") \
                    and "了" not in sc[cue.end():b] \
                    and lc.ZH_ONE_SLOT.search(sc, body, cue.start()):
                return body, correction  # "这周的会议改到周四": one week's meeting moved
            if cue is not None and lc.CJK_RISE.match(cue.group()) \
                    and lc.CJK_PASSING.search(sc, body, b):
                return body, correction  # "压测的时候CPU涨到了95%": one moment's reading
            if cue is not None:
                if cue.start() == body and _ZH_DATE_LEAD.match(cue.group()) \
                        and _has_content(sc[cue.end():b]):
                    return cue.end(), True  # "从明天起接口超时改为10秒": a date, no subject
                if cue.start() == body or (
                        lang == "zh" and re.fullmatch(lc.ZH_STANDING_LEAD, cue.group())
                        and _ZH_CONDITION_BEFORE.fullmatch(sc, body, cue.start())):
                    # "以后…", "今後は…", "如果部署失败，以后一律…": a rule's lead (after its
                    # condition), kept for its rules; the condition is no subject
                    return body, True
                self.update_at, self.update_end = cue.start(), cue.end()
                return body, True
            return body, correction
        if cue is None or (cue.group(0).split()[0].lower() in _UPDATE_VERBS
                           and lx.EN_REPLACE_BLOCK.search(sc, body, body + cue.start())):
            return body, correction  # "We haven't switched to Kafka", "If we moved to …"
        self.update_at, self.update_end = body + cue.start(), body + cue.end()
        opening = _NOW_OPENING.match(sc, body, b) if cue.start() == 0 else None
        if opening is not None and _has_content(sc[opening.end():b]):
            # "Now my editor font is Fira Code", "These days …": the cue leads the
            # clause; it is read from after it, as without one (_update_subject)
            return opening.end(), True
        return body, True

    def _original(self, phrase: str | None) -> str | None:
        """A phrase read from the scan as the message wrote it (the scan folds
        traditional Chinese; the writer compares with stored text)."""
        if not phrase:
            return None
        at = (self.folded or self.scan).find(phrase)
        return self.text[at:at + len(phrase)] if at >= 0 else phrase

    def _update_subject(self, c: Clause, subject: str | None,
                        kind: str = "fact") -> str | None:
        """The subject of a clause holding an update cue: the phrase before the cue
        ("The API timeout is now 45 s" → "api timeout"), else what follows "for"
        ("We switched to Argo CD for deploys" → "deploys"), else the rule's. A
        preference whose cue ends the clause or stands before its verb ("I don't like
        apples anymore", "I no longer enjoy hiking") keeps the rule's: the phrase before
        the cue holds the liking verb, not what is liked."""
        at = self.update_at
        if at is None or not c.start <= at <= c.end:
            return subject
        lang = c.lang
        if at < c.body_start:
            return subject  # a leading cue read off the clause ("Now my shell is zsh")
        phrase = c.scan[c.body_start:at]
        measured = False
        for q in c.quantities:  # "I'm 80 kg now": the measure is the value, no key word
            if q.unit and c.body_start <= q.start and q.end <= at:
                lo, hi = q.start - c.body_start, q.end - c.body_start
                phrase = phrase[:lo] + " " * (hi - lo) + phrase[hi:]
                measured = True
        if kind == "preference" and subject and lang == "en" and (
                not _has_content(c.scan[self.update_end or at:c.end])
                or _PRONOUN_ONLY.match(key(phrase, lang) or "i")):
            return subject
        if subject and lang == "en" and self.update_end is not None \
                and not _has_content(c.scan[self.update_end:c.end]):
            # a cue that ends the clause ("… is release/2.4 going forward", "Use 4-space
            # indentation from here on"): the phrase before it may hold the value; then
            # the clause's own subject is the key
            own = set(subject.split())
            said_before = (key(phrase, lang) or "").split()
            if kind == "preference" and own <= set(said_before) \
                    and len(said_before) > len(own):
                # "My favourite colour is green now", "I prefer tea now": the phrase
                # holds the value and the liking's words; what is preferred keys it, as
                # without "now" ("Tom is my manager now" keys by what comes first)
                return subject
            extra = [w for w in said_before if w not in own]
            if measured and own <= set(said_before) and extra and all(
                    _PRONOUN_ONLY.match(w) for w in extra):
                # "I'm 185 cm tall now": only who speaks more than the clause's own
                # key ("tall"), the measure masked above
                return subject
            if any(w not in own and _DIGIT.search(w) for w in said_before):
                said = set(c.scan[at:self.update_end].lower().split())
                return " ".join(w for w in subject.split() if w not in said) or subject
            be = _EN_BE.search(phrase) if kind == "fact" else None
            if be is not None and _OWNED_ATTRIBUTE.match(phrase) \
                    and key(phrase[:be.start()], lang) == subject:
                # "My editor font is Fira Code now", "… these days": the words after
                # the attribute's "is" are its value, as without the cue ("Priya is
                # our tech lead now" names no attribute before "is": left as it was)
                return subject
        if lang == "ja":  # "リリース日は金曜日に変更": the topic before は/が is the subject;
            # "フォントサイズを14に変更して": the object before the value's を is
            obj = phrase.rfind("を")
            if obj > 0 and obj > max(phrase.rfind("は"), phrase.rfind("が")):
                phrase = re.split(r"[はが]", phrase[:obj])[-1]
            else:
                phrase = re.split(r"[はが]", phrase, maxsplit=1)[0]
        if lang == "en":  # "We moved our flour order to …", "my new phone number is …":
            # what moved is the subject
            cue = lx.EN_UPDATE.pattern.match(c.scan, at, c.end) \
                or lx.EN_UPDATE_NEW.pattern.match(c.scan, at, c.end)
            found = cue.groupdict() if cue is not None else {}
            what = found.get("what") or found.get("role") or found.get("named")
            if what:
                return key(what, lang) or subject
        if lang == "en":  # "I've been using Neovim these days": the speaker keys nothing
            phrase = _SPEAKER_CONTRACTION.sub(" ", phrase)
        before = key(phrase, lang)
        if before and not (lang == "en" and _PRONOUN_ONLY.match(before)):
            return before
        if lang == "en":
            tail = lx.EN_UPDATE_FOR.search(c.scan, self.update_end or at, c.end)
            if tail:
                return key(tail.group("what"), lang) or subject
            if self.update_end is not None and _CUE_PRONOUN.search(c.scan, at, self.update_end):
                # "we dropped it to 60 rpm per key": "it" stands for the attribute and
                # what follows is the new value; no subject of its own (the writer
                # pairs it by the value's unit)
                return None
            after = c.scan[self.update_end or at:c.end]
            tail = lx.EN_REPLACE_TAIL.search(after)  # "… the search team| this sprint"
            if tail is not None and tail.start() > 0:
                after = after[:tail.start()]
            return key(after, lang) or subject
        return subject

    def _statements(self, sc: str, a: int, body: int, b: int, lang: str,
                    toks: frozenset[str], correction: bool, forced: str | None,
                    numbers_from: int = 0) -> None:
        """Split a statement sentence into clauses and classify each (module doc, 6).
        ``numbers_from``: quantities before it are not read (an ordinal label's)."""
        rules = _LANGS[lang]
        marked = self.marked
        kind_before: str | None = None
        subject_before: str | None = None
        quantities = [q for q in find_quantities(sc, body, b) if q.start >= numbers_from]
        spans = _join_leads(sc, join_fronted(sc, _clause_spans(
            sc, body, b, lang, quantities, toks), lang,
            # an ordinal (第3步, 第2回) names a step, it states no amount
            [q.start for q in quantities if not (q.start and sc[q.start - 1] == "第")]))
        imagined = hypothetical(sc, body, b, lang)
        unsure = hedged_lead(sc, body, b, lang)
        after_imagined = False
        opened: dict[int, int] = {}  # a clause that carries a subject: where its chain opens
        for i, (start, end) in enumerate(spans):
            if imagined is not None and start >= imagined[1] and after_imagined:
                # the first clause after a supposition: its joint ("…, so we cap it
                # at 40") is not part of what it states
                lead = _AFTER_JOINT.match(sc, start, end)
                start = lead.end() if lead else start
            after_imagined = False
            if imagined is not None and start < imagined[1] and end > imagined[0]:
                # "If we had 10 nodes, the job would finish …": nothing stated; what
                # comes before the supposition ("Our API listens on 8080, but if …") is
                # stated too, and so is a clause after it ("…, so we cap it at 40")
                joints = [m.start() for m in _HYPOTHETICAL_JOINT.finditer(sc, start, imagined[0])]
                after = _HYPOTHETICAL_JOINT.search(sc, imagined[1], end) \
                    if end > imagined[1] else None
                if joints and _has_content(sc[start:joints[-1]]):
                    end = joints[-1]
                elif after is not None and _has_content(sc[after.end():end]):
                    start = after.end()
                else:
                    after_imagined = True
                    continue
            lead = (_LEAD_JOINT if i or start > body else _FIRST_JOINT).match(sc, start, end)
            cbody = lead.end() if lead else start
            scope = _SCOPE_LEAD.match(sc, cbody, end) if lang == "en" else None
            if scope is not None and _has_content(sc[scope.end():end]):
                cbody = scope.end()  # "In this repo(,) we never push to main": the rule
            co = _EN_CO_SUBJECT.match(sc, cbody, end) if lang == "en" and not i else None
            if co is not None:
                cbody = co.end()  # "My partner and I are vegetarian": read from "I"
            together = group.read(sc, cbody, end) if lang == "en" and not i \
                and co is None else None
            csc = sc
            if together is not None:
                # "Neither of us drinks coffee": read as "we don't drink coffee"
                csc, cbody = together.scan, together.body
            now_lead = None
            if lang == "en" and i and self.speaker == "user":
                # "…, so now I have three kids": the clause's update lead, read as a
                # sentence's (_update), else the clause says nothing to the rules
                now_lead = lx.EN_UPDATE_LEAD.match(sc[cbody:end]) or _NOW_LEAD.match(sc, cbody, end)
                lead_end = now_lead.end() if now_lead and now_lead.re is _NOW_LEAD \
                    else cbody + now_lead.end() if now_lead else cbody
                if now_lead and lead_end > cbody and _has_content(sc[lead_end:end]) \
                        and not lx.EN_RULE_LEAD.match(now_lead.group()):
                    cbody = lead_end
                else:
                    now_lead = None
            ctoks = toks if len(spans) == 1 and (start, end) == spans[0] else None
            c = _build(csc, a if i == 0 and start <= body else cbody, cbody, end, lang, False,
                       quantities, ctoks if together is None else None)
            if i == 0 and rules.is_hypothetical(c):
                return
            # "I live in Porto, work as a nurse and have two cats": the chain's subject
            first = opened.get(i - 1, spans[i - 1][0]) if i else 0
            said_by = elided.carried(sc, (first, spans[i - 1][1]), spans[i - 1][1], cbody, end) \
                if lang == "en" and i and now_lead is None else \
                _zh_carried(sc, spans[0][0], spans[i - 1][1], cbody, end) \
                if lang == "zh" and i else None
            if said_by is not None:
                opened[i] = first
            referred = None
            if lang == "en" and i == 0 and said_by is None:
                # "My sister is a nurse. She lives in Oslo.": "she" is the sister
                told = referent.resolve(sc, cbody, end, self.referent)
                if told is not None and self.referent is not None:
                    referred = (self.referent.span, told)
                else:  # a correction's person ("Small fix: my daughter is 7") restated
                    self.referent = None if correction else referent.person(sc, cbody, end)
            planned = dated.plan(c) if self.speaker == "user" and forced is None else None
            verdict = Verdict("fact", planned.subject, planned.negated) if planned \
                else rules.classify(c) if said_by is None \
                else rules.classify(_with_subject(sc, said_by, cbody, end, quantities, lang))
            if referred is not None and planned is None:
                verdict = rules.classify(_with_subject(sc, referred[0], referred[1], end,
                                                       quantities, lang))
            if verdict is None and "constraint" in (kind_before, forced) and said_by is None \
                    and lx.EN_IMPERATIVE.match(c.core):
                # "Never store keys in the repo, use the vault instead": one rule, two
                # orders; "My rule: use British spelling": an order the lead makes a rule.
                verdict = Verdict("constraint", key(c.core, lang, action=True))
            if verdict is None and c.quantities and (kind_before or correction):
                # Elliptical: "…and 500 ms for ingestion", "…and Redis on 6380",
                # "I meant 200 requests per minute": the number keeps the clause's kind.
                verdict = Verdict(kind_before or "fact", key(c.core, lang) if i else None)
            if verdict is None and correction and i == 0 and key(c.core, lang) \
                    and not (lang == "en" and _CHAT_AFTER_LEAD.match(c.core)):
                # "Sorry, I meant Eastern time."; an order ending "instead" ("Use Redis
                # instead.") stays an order: a constraint, one-off unless it says it
                # stands (an order that edits a value, "Drop Redis from the stack", is
                # read as the update it makes)
                ordered = lang == "en" and _INSTEAD_END.search(c.core) is not None \
                    and lx.EN_IMPERATIVE.match(c.core) is not None \
                    and lx.EN_EDIT_ORDER.match(c.core) is None
                verdict = Verdict("constraint" if ordered else "fact",
                                  key(c.core, lang, action=ordered))
            if verdict is None or (verdict.kind == "preference" and lang == "en"
                                   and irony.ironic(sc[a:b])):
                continue  # "Oh great, I just love it when the build breaks": no liking
            if verdict.subject is None and subject_before:
                verdict = Verdict(verdict.kind, subject_before, verdict.negated)
            kind_before, subject_before = verdict.kind, verdict.subject
            if forced in ("constraint", "preference") and verdict.kind != forced:
                verdict = Verdict(forced, verdict.subject, verdict.negated)
            revises = correction and (self.instead_at is None or c.end > self.instead_at)
            swap = self.swap if self.swap and c.start <= self.swap.at <= c.end else None
            if swap is not None:
                # "We replaced RabbitMQ with Kafka": the item names what it replaces
                verdict = Verdict(verdict.kind, swap.subject or verdict.subject,
                                  verdict.negated)
                item = replace(_item(self.text, c, verdict, True),
                               replaces=self._original(swap.old),
                               replacement=self._original(swap.new))
            else:
                if self.revise_upto is not None and not marked:
                    revises = revises or c.start < self.revise_upto
                if now_lead is not None and not marked:
                    revises = True
                elif self.update_at is not None and not marked:
                    # an unmarked update revises only the clause that holds its cue, and
                    # one joined to a closing "now" by "and" ("I go by Alex now, and my
                    # pronouns are they/them": the change is of both)
                    revises = c.start <= self.update_at <= c.end
                    if not revises and self.update_end is not None \
                            and self.update_end <= c.start \
                            and sc[self.update_at:self.update_end].lower() == "now" \
                            and _AND_JOINT.fullmatch(sc, self.update_end, c.start) \
                            and _MY_ATTRIBUTE.match(sc, c.start, c.end):
                        revises = True
                    elif revises and verdict.subject not in lx.NAME_KEYS \
                            and verdict.subject not in lx.EN_DIETS:
                        verdict = Verdict(verdict.kind,
                                          self._update_subject(c, verdict.subject,
                                                               verdict.kind),
                                          verdict.negated)
                if revises and _DISMISSAL.search(sc, c.start, end):
                    revises = False  # "oh wait, gofmt decides that anyway": moot, no value
                item = _item(self.text, c, verdict, revises)
                if self.revise_upto is not None and item.condition \
                        and _CHANGE_CONDITION.match(item.condition):
                    item = replace(item, condition=None)  # the change it revises after
            if (verdict.kind == "preference" or verdict.lasting) and i + 1 < len(spans) \
                    and _CONSEQUENCE.match(sc[end:spans[i + 1][0]]) \
                    and _is_order(sc[spans[i + 1][0]:spans[i + 1][1]]):
                # "I like short answers, so skip the pleasantries", "I'm colour-blind,
                # so avoid red/green charts": what the preference or the lasting trait
                # asks for is the order after it; the item quotes both.
                item = replace(item, text=self.text[c.start:spans[i + 1][1]].strip())
            if verdict.kind in ("fact", "decision") and (
                    unsure or hedged(sc, start, end, lang, correcting=item.correction)):
                item = replace(item, tentative=True)  # "I think …", "maybe", 可能, たぶん
            elif verdict.kind == "decision" and _open_condition(item, sc, a, end, lang):
                item = replace(item, tentative=True)  # "If we get the budget, we'll …"
            elif verdict.kind in ("constraint", "fact") and item.value is not None \
                    and answer_request(sc, c.body_start, end, lang):
                # "Give me 5 ideas …", "Brainstorm 10 names …": an order about this answer
                item = replace(item, kind="constraint", one_off=True)
            elif verdict.kind == "constraint" \
                    and about_this_answer(sc, c.body_start, end, lang, body):
                # "Keep it under 100 words", "Use Python 3.11 for this script", "Fix
                # line 42 of parser.py", 这个回答控制在100字以内, 今回は1案でいいです
                item = replace(item, one_off=True)
            elif verdict.kind == "constraint" and item.condition \
                    and one_occasion(item.condition, item.text, lang):
                # "Before the meeting, review this file", 会議の前に、…してください: an order
                # for one occasion, not a rule for every one ("Before each commit, …")
                item = replace(item, one_off=True)
            if planned is not None:
                # "Tomorrow I have to file …": the user's plan for one day, no rule; a
                # number in its time ("in two weeks") dates it, it sets no quantity
                item = replace(item, kind="fact", dated=True, one_off=False)
                if item.value is not None and any(
                        planned.time[0] <= q.start < planned.time[1] for q in c.quantities
                        if q.value_text == item.value_text):
                    item = replace(item, value=None, value_text=None, unit=None, loose=False)
                if c.condition is not None and c.condition[1] > planned.modal[0]:
                    item = replace(item, condition=None)  # 行かなければ: an obligation
            if item.kind in ("fact", "decision") \
                    and about_this_task(sc, c.body_start, end, lang, body):
                item = replace(item, local=True)  # "For this task the bucket is …"
            elif item.kind == "fact" and lang == "en" and (
                    experience.chore(c.core) or lx.EN_MOMENT.match(c.raw)):
                # "I haven't done the dishes yet.", "I'm 22 minutes away.": this moment's
                item = replace(item, local=True)
            elif item.kind in ("fact", "preference") and lang == "en" \
                    and anaphora.points_back(c.core):
                # "I love it.", "I don't need it anymore.": what "it" is was said before
                item = replace(item, local=True)
            if said_by is not None:  # "I … use Emacs instead": who says it, quoted
                item = replace(item, text=f"{self.text[said_by[0]:said_by[1]]}{ELISION}{item.text}")
            elif referred is not None:  # "My sister … She lives in Oslo.": who "she" is
                named = self.text[referred[0][0]:referred[0][1]]
                item = replace(item, text=f"{named[:1].upper()}{named[1:]}{ELISION}{item.text}")
            self._add(item)

    def _add(self, item: Extracted) -> None:
        """Append, giving a subjectless number the subject of the message's last item
        with a unit of the same dimension ("オフラインの場合は60秒です"). A statement whose
        value is an unfilled template slot ("My name is <Username>") is none."""
        if item.kind in STATEMENT_KINDS and shapes.placeholder_value(item.text):
            return
        previous = self.previous
        if item.correction and item.subject and item.lang == "en" \
                and item.kind in STATEMENT_KINDS and shapes.pronoun_value(item.text):
            # "Typo: it's jon@example.com": the pronoun names no attribute; the value's
            # shape finds what it revises (supersession.correction_target)
            item = replace(item, subject=None)
        if item.subject is None and item.unit and previous and previous[1] == unit_class(item.unit):
            item = replace(item, subject=previous[0])
        if item.kind not in ("question", "task") and "`" in item.text:
            item = replace(item, subject=_with_code(item.subject, item.text, item.lang))
        if self.label and not (item.subject or "").startswith(self.label):
            own = item.subject and not set(item.subject.split()) <= set(self.label.split())
            item = replace(item, subject=f"{self.label} {item.subject}" if own
                           else self.label, label=self.label)
        if item.kind == "fact" and not self.label and item.subject != "timezone" \
                and lx.EN_HOME.search(item.text.replace(ELISION, " ")):
            item = replace(item, subject=lx.HOME)  # where the speaker lives (lexicon doc)
        if item.kind == "constraint" and not item.lasting \
                and recurring.recurs(item.condition, item.lang):
            # "When I ask for SQL, use Postgres syntax": the order holds on each
            # occasion ("If I ask for a summary, keep it under 100 words": not only
            # this answer's)
            item = replace(item, lasting=True, one_off=False)
        if item.subject:
            self.previous = (item.subject, unit_class(item.unit))
        self.out.append(item)
