"""Statements that stand by their scope or their form, not by a word of time.

A rule says it stands with "always" or "from now on"
(:data:`memory_core.items.standing.STANDING_RULE`); these classes say it otherwise, and
the extraction marks what they cover ``lasting``
(:attr:`memory_core.extraction.model.Extracted.lasting`), so the block shows it in every
turn:

- a **scope marker** over the project, the repository or the team ("In our codebase every
  public function gets a docstring", "Across the team we use pnpm", 在这个项目里…,
  このrepoでは…): a statement of how things are done there, not of one event;
- a **team standard** ("We standardised on ruff", 统一用pnpm, ログはUTCに統一します);
- a **decision under a lead** that names it ("Team decision: …", "Let's decide: …", 定了：…,
  チームで決めた：…) or a date, price or choice locked ("Let's lock the price at
  $49 a month", "settle on Postgres", 定在3月14日, 3月14日で確定);
- an order to **assume** something of all later work ("assume that for every
  recipe you suggest", "assume I'm on macOS unless I tell you otherwise");
- the user's own **allergy, condition or diet**, alone or given as the reason of a
  request ("I have celiac disease", "I can't eat gluten", 我有乳糖不耐受,
  ナッツアレルギーがあるから…お願い, ベジタリアンなので、…);
- an order said to hold **whatever happens** ("No matter what, …", 无论如何，…,
  どんな場合でも、…) or over **all the user's input** ("every email I paste",
  我写的每段代码);
- a **lead asking to remember** what follows ("Remember: …", 记住：…);
- a **routine** under a lead that names it and recurring by its own words ("My reading
  routine: one chapter every night", 我的健身计划：每周…).

None of them holds in a question, a past report ("In this project we used MongoDB
back in 2021"), a statement about one day ("tomorrow", 明天, 明日) or what someone else's
team does ("My sister's team …"); a rule someone else passes on ("Priya says we must
…") stays their fact, as the design reads reported speech. A decision or a lock that
the rules read as nothing becomes a ``decision`` item of its own; a scoped norm or an
order for whatever happens or over all input, a ``constraint``; a condition or a
routine, a ``fact``. Pure; called once per user message by
:mod:`memory_core.extraction.pipeline`.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from dataclasses import replace

from memory_core.extraction.model import Extracted
from memory_core.extraction.prepare import detect_lang
from memory_core.extraction.quantity import find_quantities, primary_quantity
from memory_core.extraction.segment import segment
from memory_core.extraction.subject import key

_SCOPE_NOUN = (r"(?:project|repo|repository|codebase|code\s?base|monorepo|team|org"
               r"|organi[sz]ation|company|workspace|service|app(?:lication)?)s?\b")
SCOPE = re.compile(
    r"\b(?:in|for|across|throughout)\s+(?:this|our|the\s+(?:whole|entire))\s+" + _SCOPE_NOUN
    + r"(?!['’]s)(?!\s+(?:meeting|call|standup|sync|retro|lunch|dinner|party|offsite|chat"
    r"|channel|lead|manager|members?|before|last|yesterday)\b)"
    r"|\bacross\s+the\s+(?:team|company|org|codebase|repo)\b"
    r"|(?:在)?(?:这个|本|我们的?|咱们的?)(?:项目|仓库|代码库|团队|公司|repo)(?:里|中|内)"
    r"|(?:この|うちの|当)(?:リポジトリ|レポ|repo|プロジェクト|コードベース|チーム|会社)"
    r"(?:では|において(?:は)?|内では|の中では)", re.I)
"""A scope over the project, the repository or the team (module doc); not a meeting of
the team ("in our team meeting") nor another's ("in this team's …"), nor a word the noun
only begins ("in this report", "in our organic garden")."""

STANDARD = re.compile(
    r"\b(?:standardi[sz]e|standardi[sz]ed|standardi[sz]ing)\s+on\b"
    r"|\b(?:team|house|coding|our)\s+(?:standard|convention)\s+(?:is|says)\b"
    r"|统一(?:用|使用|成|为|采用|改用)"
    r"|(?:に|で)統一(?:します|する|しています|してください|しましょう|しました|です)", re.I)
"""A team standard: one tool or form for everyone (module doc)."""

_EN_LEAD = (r"(?:team\s+decision|(?:the\s+)?decision|decided|agreed"
            r"|let(?:'|’)?s\s+decide|let\s+us\s+decide|(?:we|the\s+team)\s+"
            r"(?:have\s+)?(?:decided|agreed|settled)|final(?:\s+call)?)")
DECISION_LEAD = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|so|alright)\W+)?" + _EN_LEAD + r"\s*[:：]\s*(?=\S)"
    r"|^(?:我们|团队|大家|组里|咱们)?(?:定了|决定了|商量好了|说好了|决定|结论)[:：]\s*(?=\S)"
    r"|^(?:チーム|みんな|全員|会議|うち)?(?:で)?(?:決めた|決めました|決定|決まった|決まりました"
    r"|決定事項)[:：]\s*(?=\S)", re.I)
"""A lead that names what follows a decision (module doc)."""

_VALUE_NOUN = (r"(?:date|price|pricing|budget|rate|fee|cost|salary|rent|amount|quote|version"
               r"|release|dependenc(?:y|ies)|deadline|day|time|timeline|schedule|cadence"
               r"|cap|limit|quota|threshold|target|scope|spec|design|api|schema|interface"
               r"|format|layout|name|title|venue|location|vendor|stack|tier|plan|menu"
               r"|agenda|headcount|size|count|number|length|duration|terms|contract)s?")
"""What a lock sets: a value, a date or a choice ("lock the price", "pin the Python
version", "lock the venue"); not a thing one locks or freezes ("lock the door at 10",
"freeze the chicken at -18", "pin the tweet to my profile")."""

LOCK = re.compile(
    r"\b(?:lock|pin|freeze|nail)\s+(?:down\s+|in\s+)?(?P<obj>(?:the|our|my)\s+"
    r"(?:[\w.-]+\s+){0,3}?" + _VALUE_NOUN + r")\s+(?:at|on|to|as)\s+\S"
    r"|\bfix\s+(?P<fobj>(?:the|our|my)\s+(?:[\w-]+\s+)?" + _VALUE_NOUN + r")"
    r"\s+(?:at|on|to|as)\s+\S"
    r"|\b(?:let's|let\s+us|we(?:'ll|\s+will)|we've|we\s+have|i've)\s+(?:finally\s+)?settle[ds]?"
    r"\s+on\s+(?P<sobj>[\w\s.-]{1,40}?)(?=\s*(?:$|[,.;:!]|\s+(?:for|as)\b))"
    r"|(?P<zobj>[^，,。！!？?\s]{1,12}?)(?:就)?(?:定在|定为|锁定在|锁定为|定死在)"
    r"|(?P<jobj>[^、。！!？?\s]{1,12}?)は[^、。]{1,20}?(?:で|に)(?:確定|固定)(?:します|する|しました"
    r"|しましょう|です|で)", re.I)
"""A choice locked: a date, a price or a version set and closed to change (module doc);
only of such a value (:data:`_VALUE_NOUN`: "fix the bug on line 10" is work to do,
"lock the door at 10" a chore)."""

ASSUME = re.compile(
    r"\bassume\s+(?:that\s+|this\s+|it\s+)?[^.;!?\n]{0,40}?\b(?:for|in|with|on)\s+"
    r"(?:any|all|every|each)\b"
    r"|\bassume\s+(?:that\s+)?(?:i|we)(?:'m|\s+am|'re|\s+are|\s+(?:use|run|want|mean|work"
    r"|have|prefer))\b[^.;!?\n]{0,60}?\bunless\s+(?:i|we)\s+(?:say|tell|ask|mention)", re.I)
"""An order to assume something of all later work (module doc)."""

_CONDITION = (r"(?:(?:celiac|coeliac)(?:\s+disease)?|(?:type\s+[12]\s+)?diabetes|gout|ibs"
              r"|high\s+blood\s+pressure|hypertension|kidney\s+disease|an?\s+(?:severe\s+)?"
              r"[\w-]+\s+(?:allergy|intolerance)|(?:lactose|gluten|fructose)\s+intolerance)")
OWN_HEALTH = re.compile(
    r"^\W*i(?:'m|\s+am)\s+(?:(?:very|severely|also)\s+)?allergic\s+to\s+[\w\s-]{1,30}?,\s*so\b"
    r"|^\W*i\s+(?:have|suffer\s+from|live\s+with)\s+" + _CONDITION + r"\b"
    r"|^\W*i\s+(?:can't|cannot|can\s+not)\s+(?:eat|drink|have|tolerate)\s+"
    r"(?!(?:now|yet|anything|another|any\s*more|more|much|that|this|it|today|tonight)\b)"
    r"[\w\s-]{2,30}?(?=\s*(?:$|[,.;:!]|\s(?:so|and|because|since)\b))"
    r"|^(?:我)(?:有|患有|得了)?(?:对)?[^，,。！!？?]{1,10}过敏(?:，|,)?(?:所以|因此)"
    r"|^我(?:有|患有|得了)(?P<zh>乳糖不耐受?|糖尿病|痛风|高血压|乳糜泻|[^，,。！!？?]{1,8}过敏)"
    r"|^(?:私は)?(?P<ja>[^、。，,は]{1,10}アレルギー|ベジタリアン|ヴィーガン|ビーガン|菜食主義者?"
    r"|乳糖不耐症|糖尿病)(?:がある|があります|持ちな|持ちだ|な|だ|です)(?:ので|から)", re.I)
"""The user's own allergy, condition or diet, alone ("I have celiac disease", "I can't
eat gluten", 我有乳糖不耐受) or given as the reason of a request (小麦アレルギーなので、
…, ベジタリアンなので、…); not one time ("I can't eat now") nor another's ("My dad has
diabetes")."""

ROUTINE = re.compile(
    r"^\W*(?:my|our)\s+(?P<en>(?:[\w-]+\s+)?(?:plan|routine|schedule|regimen))\s*[:：]"
    r"(?=[^\n]*\b(?:every|each|daily|weekly|nightly|twice\s+a|once\s+a)\b)"
    r"|^(?:我的|我们的)(?P<zh>[^：:，,。]{0,6}(?:计划|安排|作息))[:：](?=[^\n]*(?:每天|每周|每晚|每个))"
    r"|^(?:私の)?(?P<ja>[^：:、。]{0,6}(?:計画|プラン|スケジュール|ルーティン))[:：]"
    r"(?=[^\n]*(?:毎日|毎週|毎晩|毎朝|平日))", re.I)
"""A routine the user sets under a lead that names it, recurring by its own words ("My
reading routine: one chapter every night", 我的健身计划：每周三次, 私の勉強計画：毎朝…):
it holds every week, not one day."""

NO_MATTER = re.compile(
    r"\bno\s+matter\s+what\b|\bunder\s+(?:no|any)\s+circumstances\b|\bwhatever\s+happens\b"
    r"|不管(?:什么|怎样|怎么样|如何|任何)|无论(?:如何|什么|怎样|任何)|どんな(?:場合|時|とき|状況)でも"
    r"|何があっても", re.I)
"""An order said to hold whatever happens (不管什么情况，都不要…, "no matter what")."""

REMEMBER_LEAD = re.compile(
    r"^\W*(?:remember|keep\s+in\s+mind|don't\s+forget|for\s+the\s+record|记住|记得|请记住"
    r"|覚えておいて(?:ください)?)\s*[:：,，]\s*"
    r"(?=(?:my|our|i|we)\b[^.!?\n]*?\b(?:is|are|am|'s|'re|'m|has|have|use|prefer|live|work)\b"
    r"|我(?:的|们)?[^。！？!?]{0,20}?(?:是|叫|住|有|用)|(?:私|僕|うち)(?:の|は))", re.I)
"""A lead asking the assistant to keep a statement of the user's own that follows
("Remember: my name is …", 记住：我的…是…), as "…, remember that" after it does
(:func:`memory_core.extraction.promotion.kept_tail`); not an errand ("Remember: send
the invoice", a task)."""

EVERY_OWN = re.compile(
    r"\b(?:every|each|any|all)\s+(?:of\s+)?(?:the\s+)?(?:[\w-]+\s+){0,2}?(?:that\s+)?i\s+"
    r"(?:make|write|send|post|ask|say|paste|share|submit|give\s+you)\b"
    r"|我(?:发|写|问|说|贴)的每(?:个|一个|条|一条|段|句|篇)", re.I)
"""An order over all the user's later input ("check the grammar in every email I paste", 我写的每段
代码): it holds for every message, not the one at hand."""

NOT_STANDING = re.compile(
    r"\b(?:was|were|had|did|used\s+to|yesterday|ago|last\s+(?:week|month|year|time|sprint)"
    r"|back\s+in|in\s+hindsight|tomorrow|tonight|today|this\s+(?:morning|afternoon|evening"
    r"|once)|just\s+this|for\s+now|right\s+now)\b"
    r"|\b(?:we|i|they|he|she)\s+(?!need)\w+ed\b"
    r"|\b[A-Z][a-z]+(?:'s|’s)\s+(?:team|project|repo|company)\b"
    r"|\b(?:my|his|her|their)\s+(?:sister|brother|friend|wife|husband|partner|boss|manager"
    r"|colleague|mom|mum|dad|father|mother)(?:'s|’s)\s"
    r"|明天|今天|今晚|昨天|上周|去年|以前|曾经|这次|这一次|暂时"
    r"|明日|今日|今夜|昨日|先週|去年|以前|昔|今回|とりあえず"
    r"|[?？]\s*$")
"""Words by which a statement tells of one day, of the past, of another's team, or
asks: it does not stand (module doc)."""


def _plural(*nouns: str) -> frozenset[str]:
    return frozenset(nouns) | {n + "s" for n in nouns}


_SENTENCE_WORDS = _plural(
    "project", "repo", "repository", "codebase", "monorepo", "team", "org", "organisation",
    "organization", "company", "workspace", "service", "app", "application") | {
    "code", "decision", "decide", "decided", "agreed", "settled", "final", "lock", "pin", "freeze",
    "nail", "fix", "settle", "settles", "plan", "routine", "schedule", "regimen", "allergic",
    "celiac", "coeliac", "diabetes", "gout", "ibs", "high", "hypertension", "kidney",
    "allergy", "intolerance", "can", "cannot", "matter", "circumstances", "whatever"}
_MARK_WORDS = _SENTENCE_WORDS | {
    "standardise", "standardize", "standardised", "standardized", "standardising",
    "standardizing", "standard", "convention", "assume"}
_LEAD_WORDS = frozenset({"remember", "keep", "don", "for"})
"""The first word of :data:`REMEMBER_LEAD`, which only opens an item ("don" of "don't")."""
_EVERY = frozenset({"every", "each", "any", "all"})
_OWN_INPUT = frozenset({"make", "write", "send", "post", "ask", "say", "paste", "share",
                        "submit", "give"})
_SENTENCE_CJK = (
    "项目", "仓库", "代码库", "团队", "公司", "リポジトリ", "レポ", "プロジェクト", "コードベース",
    "チーム", "会社", "定了", "决定", "商量好了", "说好了", "结论", "決め", "決定", "決ま", "定在",
    "定为", "锁定", "定死", "確定", "固定", "计划", "安排", "作息", "計画", "プラン", "スケジュール",
    "ルーティン", "过敏", "乳糖不耐", "糖尿病", "痛风", "高血压", "乳糜泻", "アレルギー",
    "ベジタリアン", "ヴィーガン", "ビーガン", "菜食", "的每", "不管", "无论", "どんな", "何があっても")
_MARK_CJK = _SENTENCE_CJK + ("统一", "統一", "记住", "记得", "覚えておいて")
_ASCII_TWINS = str.maketrans({"\u0130": "i", "\u0131": "i", "\u017f": "s", "\u212a": "k"})
"""The letters outside ASCII that a case-blind pattern matches as an ASCII one."""
_LATIN_WORD = re.compile(r"[a-z]+")
_KANA_OR_HAN = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff]")


def _cued(text: str, words: frozenset[str], cjk: tuple[str, ...], *,
          lead: frozenset[str] = frozenset()) -> bool:
    """Whether ``text`` holds a word (``words``, ``cjk``) that a pattern of this module
    needs to match: the patterns are case-blind regexes, so a message with none of them
    is skipped by one tokenisation instead of a dozen scans. A word in ``words`` is
    found as a whole Latin word (the patterns bound each by a space or a word end); one
    in ``lead`` only as the first word."""
    ascii_only = text.isascii()
    found = _LATIN_WORD.findall((text if ascii_only else text.translate(_ASCII_TWINS)).lower())
    if not words.isdisjoint(found) or (found and found[0] in lead) \
            or (not _EVERY.isdisjoint(found) and not _OWN_INPUT.isdisjoint(found)):
        return True
    return not ascii_only and _KANA_OR_HAN.search(text) is not None \
        and any(c in text for c in cjk)


def _holds(text: str) -> bool:
    return NOT_STANDING.search(text) is None


_ASKS = re.compile(r"\bplease\b|\b(?:can|could|would|will)\s+you\b|帮我|请|给我|ください"
                   r"|下さい", re.I)
"""A request in words the rules read as a fact (我写的每段代码都帮我检查一下…)."""


def marks(text: str, kind: str = "constraint") -> bool:
    """Whether ``text`` (the words of an item of ``kind``) stands by a class of the
    module doc: a scope marker, a team standard, a decision lead or a locked choice, an
    order to assume, the user's own allergy before a request, a lead asking to
    remember; an order said to hold whatever happens or over all the user's input (a
    ``fact`` only where it asks, :data:`_ASKS`: "No matter what I do, my code never
    compiles", "Every email I send gets ignored" are complaints)."""
    if not _cued(text, _MARK_WORDS, _MARK_CJK, lead=_LEAD_WORDS) or not _holds(text):
        return False
    is_order = kind != "fact" or _ASKS.search(text) is not None
    patterns = (SCOPE, STANDARD, DECISION_LEAD, LOCK, ASSUME, OWN_HEALTH, ROUTINE,
                REMEMBER_LEAD) + ((NO_MATTER, EVERY_OWN) if is_order else ())
    return any(p.search(text) is not None for p in patterns)


_NORM = re.compile(
    r"\b(?:follows?|uses?|goes|go|lives?|runs?|is|are|must|should|needs?|gets?|stays?)\b"
    r"|用|是|要|都|必须|は|で|を", re.I)
"""A verb of how things are done: a sentence with a scope marker and one of these
states a norm of the project, though the rules found no item in it."""

_PROHIBITION = re.compile(r"\b(?:don't|do\s+not|never|no)\b|别|不要|不准|不许|禁止|ないで", re.I)
"""What makes an added constraint a prohibition (``Extracted.negated``)."""

_JA_TOPIC = re.compile(r"^[^、。はが]{1,16}?(?=は)")
_ZH_TOPIC = re.compile(r"^[^，,。]{1,12}?(?=(?:一律|统一|都|是|在|用|改)(?!$))")


def _topic_key(body: str, lang: str) -> str | None:
    """The key of what a decision or a norm is about: its topic in Japanese and
    Chinese (リリースは…, 发版都…), else the key of its words."""
    topic = {"ja": _JA_TOPIC, "zh": _ZH_TOPIC}.get(lang)
    m = topic.match(body.strip()) if topic is not None else None
    return key(m.group(0) if m else body, lang)


def _decision_subject(m: re.Match[str], text: str, lang: str) -> str | None:
    for name in ("obj", "fobj", "sobj", "zobj", "jobj"):
        if m.groupdict().get(name):
            return key(m.group(name), lang)
    return _topic_key(text, lang)


def settle(text: str, scan: str, items: list[Extracted]) -> list[Extracted]:
    """Mark ``lasting`` the user's items that stand by a class of the module doc, and
    add a ``decision`` for a sentence that makes one (a decision lead, a locked choice),
    or a ``constraint`` for a scoped norm or an order over all input or whatever
    happens, where the rules found no item in the sentence.

    ``text``: the message; ``scan``: its prepared form (code, quotes and URLs masked:
    :func:`memory_core.extraction.prepare.prepare`); ``items``: what the rules extracted,
    in text order. Returns the items, in text order. Questions and tentative, one-day,
    labelled and task-local items are left as they are.
    """
    out = []
    for item in items:
        if item.kind in ("fact", "decision", "constraint", "preference") \
                and not (item.lasting or item.tentative or item.local or item.dated
                         or item.label) and marks(item.text, item.kind):
            item = replace(item, lasting=True, one_off=False)
        out.append(item)
    if not _cued(scan, _SENTENCE_WORDS, _SENTENCE_CJK):
        return out  # no sentence (a span of ``scan``) can add an item
    placed: list[tuple[int, Extracted]] = []
    cursor = 0
    for item in out:
        at = text.find(item.text.split(" … ")[0], cursor)
        at = cursor if at < 0 else at
        placed.append((at, item))
        cursor = at
    starts = [at for at, _ in placed]  # nondecreasing; an added item precedes later sentences
    lang_of = detect_lang(scan)
    for sent in segment(text, scan):
        a, b = sent.start, sent.end
        lang = detect_lang(scan[a:b], lang_of)
        sentence = scan[a:b].strip()
        first = bisect_left(starts, a)
        if not sentence or not _holds(sentence) or (first < len(starts) and starts[first] < b):
            continue
        lead = DECISION_LEAD.search(sentence)
        lock = LOCK.search(sentence)
        scope = SCOPE.search(sentence)
        if lock is not None:
            kind, subject = "decision", _decision_subject(lock, sentence, lang)
        elif lead is not None:
            kind, subject = "decision", _topic_key(sentence[lead.end():], lang)
        elif (routine := ROUTINE.search(sentence)) is not None:
            kind = "fact"  # "My reading routine: one chapter every night"
            subject = key(routine.group("en") or routine.group("zh") or routine.group("ja"),
                          lang)
        elif (health := OWN_HEALTH.search(sentence)) is not None:
            # "小麦アレルギーなので、パン以外でお願いします", 我有乳糖不耐受，…
            kind = "fact"
            subject = key(health.group("ja") or health.group("zh") or health.group(0), lang)
        elif EVERY_OWN.search(sentence) is not None or NO_MATTER.search(sentence) is not None:
            # "every email I paste", "No matter what, don't …"
            kind = "constraint"
            subject = key(NO_MATTER.sub(" ", sentence).strip(" ,，、"), lang, action=True)
        elif scope is not None and _NORM.search(sentence) is not None:
            # "Commit messages in this project follow the Angular convention"
            kind = "constraint"
            rest = (sentence[:scope.start()] + sentence[scope.end():]).strip(" ,，、")
            verb = _NORM.search(rest) if lang == "en" else None
            subject = _topic_key(rest[:verb.start()] if verb and verb.start() else rest, lang)
        else:
            continue
        if subject:
            q = primary_quantity(find_quantities(scan, a, b), scan)
            placed.append((a, Extracted(
                kind=kind, text=text[a:b].strip(), subject=subject, lang=lang, lasting=True,
                negated=kind == "constraint" and _PROHIBITION.search(sentence) is not None,
                value=q.value if q else None, value_text=q.value_text if q else None,
                unit=q.unit if q else None)))
    placed.sort(key=lambda p: p[0])
    return [item for _, item in placed]
