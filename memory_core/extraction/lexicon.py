"""Cue-word tables for labels and English, compiled once at import (CJK: ``lexicon_cjk``).

Every table is data: the phrases a user (or an assistant) writes when making a statement
of that kind. The rules that read them live in ``rules_en`` and ``rules_cjk``; the
comment above each table says where its words come from. Sources are three: DESIGN §5
and issue 3 (the cue words they name: always/never/must/don't, actually/correction/I
meant, 更正/其实, 訂正/実は, Goal:/TODO:…), the phrasing of the labelled set in
``tests/data/extraction_labelled.jsonl`` (written by us for this module), and common
chat usage of each language. Chinese tables are written in simplified script only:
sentences are folded from traditional before matching (``prepare.fold_traditional``).
English tables are matched case-insensitively; apostrophes are already folded to "'".

Patterns are alternations of literal phrases with bounded gaps ({0,n}), anchored where
the rule needs a position, so matching is linear in the sentence length. Unanchored
patterns are wrapped in a ``Cue`` and start-anchored ones in a ``Lead`` (see ``cue``),
so a pattern runs only when a trigger word is present.
"""

from __future__ import annotations

import re

from memory_core.extraction.cue import Cue, Lead, alt, en, phrases

# --- labels (all languages) ----------------------------------------------------------
# Task-state line labels from DESIGN §5 and the issue, in the three languages, plus the
# synonyms agents and people write in status updates ("Next steps:", "Blocker:").
TASK_LABELS: dict[str, str] = {
    **dict.fromkeys(phrases("goal|goals|objective|objectives|目标|目標|ゴール"), "goal"),
    **dict.fromkeys(phrases("progress|status|done|进展|進展|进度|進度|已完成|進捗|進捗状況|完了"),
                    "progress"),
    **dict.fromkeys(phrases("todo|to-do|to do|todos|next step|next steps|待办|待辦|待办事项|下一步"
                             "|やること|残タスク|タスク"), "todo"),
    **dict.fromkeys(phrases("blocked|blocker|blockers|blocking|阻塞|受阻|卡住|障碍|ブロック"
                             "|ブロッカー|ブロック中"), "blocked"),
    **dict.fromkeys(phrases("decision|decisions|decided|决定|决策|決定|決定事項"
                             "|decision made|decision taken|final decision|our decision"
                             "|team decision|the decision|最终决定|最終決定"), "decision"),
}
TASK_LABEL = re.compile(
    r"^(?:\*\*|__)?\[?(?P<label>" + alt("|".join(TASK_LABELS)) + r")\]?"
    r"(?:(?:\*\*|__)?\s*[:\]]|\s+[\u2013\u2014](?=\s))\s*(?:\*\*|__)?",
    re.I,
)
"""``Goal:``/``TODO：``/``**Blocked:**``/``[TODO]``/``Decision — …`` at the start of a line."""
TASK_HEADER = re.compile(
    r"^(?:\*\*|__)?(?P<label>" + alt("|".join(TASK_LABELS)) + r")"
    r"(?:\*\*|__)?\s*:?\s*(?:\*\*|__)?$", re.I)
"""A line that is only a label ("## Blocked", "TODO", "待办") heads the list below it."""

# Labels that announce how to read the rest of the line rather than a task field.
META_LABELS: dict[str, str] = {
    **dict.fromkeys(phrases("note|nb|fyi|remember|reminder|important|ps|context|fact|info"
                             "|please remember|don't forget|do not forget|bear in mind"
                             "|note to self|notes to self|memo to self|reminder to self"
                             "|reminder for myself|note for myself|self reminder|self-reminder"
                             "|注意|备注|提醒|记住|注|备忘|自己备忘|提醒自己|给自己的提醒"
                             "|メモ|備考|注意点|覚えておいて|備忘録|自分用メモ|自分へのメモ"),
                    "note"),
    **dict.fromkeys(phrases("correction|erratum|update|更正|纠正|修正|更新|訂正"), "correction"),
    **dict.fromkeys(phrases("rule|constraint|requirement|policy|规则|约束|要求|ルール|制約|要件"
                             "|the rule|this rule|our rule|my rule|the rule is|remember this rule"
                             "|remember the rule|house rule"), "constraint"),
    **dict.fromkeys(phrases("preference|pref|偏好|好み"), "preference"),
    **dict.fromkeys(phrases("question|open question|q|问题|疑问|質問|疑問"), "question"),
}
META_LABEL = re.compile(r"^(?P<label>" + alt("|".join(META_LABELS)) + r")\s*:\s*[\"“「']?", re.I)
"""``Note:``, ``Correction:``, ``Rule:``, ``Remember this rule: "…"`` — how to read the rest."""
RULE_LEAD = re.compile(
    r"^(?:(?:so|ok|okay|also|and|first|next|then|one\s+more\s+thing)\s*,?\s*)?"
    r"(?:(?:here(?:'s|\s+is|\s+are)|this\s+is|these\s+are|i\s+have|i've\s+got|we\s+have)\s+)?"
    r"(?:(?:my|our|the|a|an|one|another|this|one\s+more|just\s+one|a\s+few|some|two|three)"
    r"\s+)?(?:(?:team(?:'s)?|own|new|simple|important|golden|house|hard|strict|standing"
    r"|general|basic|ground|personal|firm|main|key|only|big|small)\s+){0,2}"
    r"(?P<topic>(?!(?:the|a|an|my|our|this|that|these|those|here|is|are)\b)[a-z][\w-]*\s+)?"
    r"(?:rules?|instructions?|guidelines?|policy|policies|requirements?|constraints?)"
    r"(?:\s+(?:for\s+(?:you|this\s+(?:chat|conversation|session|project|repo|thread))"
    r"|for\s+(?:(?:my|our|the|all)\s+)?[\w-]+(?:\s+[\w-]+)?|at\s+(?:my|our|the)\s+[\w-]+"
    r"|in\s+(?:this|my|our)\s+[\w-]+"
    r"|to\s+(?:follow|remember|keep\s+in\s+mind)|from\s+(?:me|us)|of\s+(?:mine|ours)"
    r"|you\s+(?:must|should|need\s+to|have\s+to)\s+follow"
    r"|i\s+(?:have|follow|set|want\s+you\s+to\s+follow)))?"
    r"(?:\s+(?:is|are))?\s*[:：]\s*[\"“「']?"
    r"|^(?:这是|这就是|以下是|下面是|给你|跟你)?(?:定|立|说)?(?:我的|我们的|我们团队的|咱们的"
    r"|[一两几]条|一个|几个|一下)?(?:新|个人|基本)?(?:规则|规矩|要求|原则)(?:如下|是)?[:：]\s*[\"“「]?"
    r"|^(?:これが|以下が|ここに)?(?:私の|僕の|俺の|うちの|我々の|私たちの|チームの)?"
    r"(?:ルール|決まり|方針)(?:を一つ|を1つ|が一つ|がひとつ|をひとつ|です|があります|は以下の通り"
    r"|は次の通り)?(?:です)?[:：]\s*[\"“「]?", re.I)
"""The user introduces a rule of their own before a colon: "Here is my rule:", "One rule
for you:", "Our team rule:", "Escalation policy:", "Rule for me:", "House rule at my
table:", 这是我的规则：, 给你定一条规则：, 私のルール：, ルールを一つ：.
What follows is read as their constraint, without the lead's words; a lead that names
what the rule is about (``topic``: "Escalation policy:", "Our refund policy:") stays for
the topic reader (:mod:`~memory_core.extraction.topic`), which keys the rule under it. A lead that presents
a source's words ("Here is the page I found:", ``material``) is masked before this runs."""


# --- English -------------------------------------------------------------------------
# Corrections (DESIGN §5, the list, and how people retract in chat). Weak cues
# ("no", "wait") count only when punctuation follows: "No emojis" is a rule, "No, it's
# 45" a correction.
_EN_PREP = (r"(?:to|in|on|at|for|of|with|by|from|into|onto|via|per|about|under|across"
            r"|between|during|without|through|within|as|like)(?![\w'-])")
_EN_EDIT = (r"(?:(?:please\s+)?(?:change|set)|please\s+update)"
            r"(?=\s+(?:my|our)(?:\s+(?!" + _EN_PREP + r")[\w'-]+){1,5}\s+to"
            r"(?:\s+(?!" + _EN_PREP + r")[^\s,;!?]*[^\s,;.!?]){1,6}\s*[.!?]*\s*$)")
"""The order's whole shape: my/our, an attribute of up to five words with no preposition
in it, "to", then a plain value of up to six words ending the sentence. A preposition on
either side ("my name in the header", "to bold in the template") or a clause after the
value makes it an order about something else, and no edit."""
EN_CORRECTION = Lead(en(
    r"^(?:(?:" + alt("actually|correction|update|scratch that|i meant|i mean|to correct myself"
                     "|let me correct that|let me correct myself|i was wrong|i got that wrong"
                     "|i got it wrong|my mistake|my bad|i misspoke|make that|sorry i meant"
                     "|strike that|on second thought|i take that back|typo|small correction")
    + r")\b"
    # "small update about me:", "quick correction on us:": the speaker's own news
    r"|(?:(?:an?\s+)?(?:quick|small|little|brief|short)\s+)?(?:update|correction)\s+(?:about|on)"
    r"\s+(?:me|myself|us)\b|(?:quick|little|brief|short)\s+(?:update|correction)\b"
    r"|(?:no\swait|oh\swait|wait\sno|no|nope|nah|wait|oops|hold\son|hang\son)\s*[,.!:;-]"
    r"|" + _EN_EDIT + r")"
    r"[\s,.:;!-]*"
), "actually correction update scratch i to let my make sorry strike on typo small no nope nah "
   "wait oops hold oh hang please change set quick little brief short a an")
EN_EDIT_ORDER = en("^" + _EN_EDIT)
"""An order to change a value the speaker holds: "Change my favourite colour to blue",
"Please update my address to 12 Oak Street", "Set our deploy day to Thursday". Read as a
correction of "my <attribute>"; stored only where it replaces an earlier statement of
that very key (``Extracted.edit``), since "Change my function to async" is an order
about code and "Change my favourite colour scheme to dark" names no "colour"."""
# An ordinal label leading a sentence: "Run 39:", "Step 3 -", "#12:", "3)", "Phase 2",
# "第3步", "步骤2", "ステップ3", "手順2". The number names a sibling in a series. Besides
# the words above, any word that a number and a colon follow names one ("Shard 3:", and
# "batch 39:" as agents and logs write it, lowercase); so do a katakana word before a
# number and a colon ("エポック12：", "バッチ3："), 第 with a number and any counter before
# a colon ("第12批："), and a Japanese ordinal counter ("リトライ41回目", "2番目", "3日目":
# a number, a counter and 目 say "the Nth"; before a colon, spaces around the number,
# "第 3 步：", as typed between Han and digits, change nothing). A Han word before a
# number and a colon is not one: "预算是5000：" states a value.
_CJK_WORD = "\u30a0-\u30ff\u4e00-\u9fff"
_SERIES_WORDS = (r"(?i:step|phase|stage|run|attempt|iteration|epoch|trial|round|experiment"
                 r"|ticket|issue|item|task|part|test|case|job|build|sprint|milestone|version"
                 r"|option|point)")
ORDINAL_LABEL = re.compile(
    r"(?P<word>" + _SERIES_WORDS + r")"
    r"\s*#?(?P<num>\d+[a-z]?)\b(?![.,:]\d)\s*[:.)\]–—-]?\s*"
    r"|(?:[A-Za-z][\w-]{1,15}|[" + _CJK_WORD + r"]{1,6})[ \t]*(?P<word3>" + _SERIES_WORDS
    + r")[ \t]*#?(?P<num4>\d+[a-z]?)[ \t]*[:：][ \t]*"
    r"|(?P<word2>[A-Za-z][A-Za-z-]{1,15})\s*#?(?P<num2>\d+[a-z]?)\s*:\s+"
    r"|[#(]?(?P<num3>\d{1,3})[.)]\s+(?=[^\d\s])"
    r"|(?P<cjk>第[0-9一二三四五六七八九十]+[步条项轮次个回]|步骤\s*[0-9]+|ステップ\s*[0-9]+"
    r"|手順\s*[0-9]+"
    r"|[" + _CJK_WORD + r"]{0,12}?[0-9０-９]+\s*(?:回|番|件|個|日|周|度|本|枚|巡|つ|試行)目"
    r"|第[ \t]*[0-9０-９一二三四五六七八九十百]+[ \t]*[\u4e00-\u9fff](?=\s*[:：])"
    r"|[\u30a0-\u30ff]{1,12}\s*[0-9０-９]+(?=\s*[:：]))\s*[:：、.)）]?\s*"
    r"|(?P<cjk2>(?:(?![的是在])[\u3400-\u9fff\u30a0-\u30ff]){1,6}\s*[0-9]+)\s*[:：]\s*")
"""…and, like "Trial 5: …" in English, any short CJK word with a number before a colon
("試行5：", "实验3：", "ケース2:"): a named member of a series. One word may qualify a
series word before a colon ("Experiment run 23:", "Load-test round 4:", 実験 Run 23：);
without the colon it may be the subject ("Node version 18 is required")."""


def ordinal_label(m: re.Match[str]) -> str:
    """The normalised label of an :data:`ORDINAL_LABEL` match ("Run 39:" → "run 39",
    "3)" → "#3", "第3步" → "第3步")."""
    if m.group("cjk") or m.group("cjk2"):
        return "".join((m.group("cjk") or m.group("cjk2")).split())
    if m.group("num3"):
        return "#" + m.group("num3")
    word = m.group("word") or m.group("word2") or m.group("word3")
    return f"{word.lower()} {m.group('num') or m.group('num2') or m.group('num4')}"


EN_FROM_NOW = (r"(?:from\s+now\s+on|going\s+forward|moving\s+forward|henceforth|hereafter"
               r"|from\s+here\s+(?:on(?:\s+out)?|onwards?)|from\s+this\s+point\s+(?:on|onwards?"
               r"|forward)|from\s+today\s+(?:on|onwards?))")
"""Every way a lead says that what follows holds from now on ("From now on", "From here
on", "From this point forward", "Henceforth"): one list, read alike by the imperative,
the update and the rule patterns below and by
:data:`memory_core.items.standing.STANDING_RULE`, so that no spelling of it is a rule
in one place and nothing in another."""
EN_FROM_NOW_FIRST = "from going moving henceforth hereafter"
"""The first words of :data:`EN_FROM_NOW`'s phrases (a :class:`Lead`'s gate)."""


# Unmarked updates: a statement that says the state changed, without "actually".
_EN_EFFECTIVE_DATE = (
    r"(?:today|tomorrow|this\s+(?:week|month|sprint)"
    r"|next\s+(?:week|month|sprint|release|monday|tuesday|wednesday|thursday|friday)"
    r"|monday|tuesday|wednesday|thursday|friday)\b(?!['\u2019]s)")
_EN_ONSET = (
    r"(?:" + _EN_EFFECTIVE_DATE + r"|(?:(?:next|this)\s+(?:year|quarter)|(?:(?:next|this)\s+)?"
    r"(?:january|february|march|april|(?-i:May)|june|july|august|september|october|november"
    r"|december)(?:\s+\d{1,2}(?:st|nd|rd|th)?)?)\b(?!['\u2019]s))")
"""A date a value takes effect from: :data:`_EN_EFFECTIVE_DATE`, or a month or year
("starting October", "as of March 3", "from next year on"), read only after "as of",
"effective", "starting" or "from … on", since "the photos from October" names a thing
("May" only capitalised: "starting may be hard")."""
_EN_SINCE_DATE = (
    r"(?:last\s+(?:week|month|year|sprint|quarter|monday|tuesday|wednesday|thursday|friday"
    r"|saturday|sunday)|yesterday|(?:monday|tuesday|wednesday|thursday|friday|saturday"
    r"|sunday)|(?:january|february|march|april|(?-i:May)|june|july|august|september"
    r"|october|november|december))\b(?!['\u2019]s)")
"""A past point a present state holds since ("Since last week I cycle to work")."""
EN_UPDATE_LEAD = Lead(en(
    r"^(?:" + EN_FROM_NOW + "|" + alt("from today|as of today|starting today|as of now"
                  "|from this week|starting this week|from tomorrow|starting tomorrow") + r")\b"
    r"[\s,:;-]*|^new\s(?=[\w\s-]{1,40}:)"
    rf"|^(?:as\s+of|effective|starting|from)\s+{_EN_ONSET}"
    r"(?:\s+on(?:wards?)?\b)?(?!\s*(?:-|to|through|thru|till|until|and|or)\b)[\s,:;-]*"
    rf"|^since\s+{_EN_SINCE_DATE}(?!\s*(?:-|to|through|thru|till|until|and|or|is|was|are"
    r"|were|has|had|will|would)\b)[\s,:;-]*"),
    "as starting new effective since " + EN_FROM_NOW_FIRST)
"""'From today the standup is at 10:00.', 'New phone number: …', 'As of Monday the sync is
on Thursdays', 'Since last week I cycle to work': the rest of the sentence replaces the
old state (a date that opens a span, "From Monday to Friday …", is no onset, nor a
reason: "Since Monday is a holiday, …")."""
EN_ONSET_PHRASE = en(
    rf"\b(?:as\s+of|effective|starting|from)\s+{_EN_ONSET}(?:\s+on(?:wards?)?\b)?"
    rf"|\bsince\s+{_EN_SINCE_DATE}")
"""The date phrase of an onset ("as of Monday", "since last week", "from March on"): when
the new value holds from, not what it is (``items.supersession`` reads a statement's
terms without it)."""
EN_RULE_LEAD = en(r"^" + EN_FROM_NOW + r"\b")
"""Update leads that also state a rule: kept in the clause, whose rules read them."""
_EN_CLAUSE_END = r"(?=\s*(?:[,;.!?)]|$))"
"""A date that ends its clause ("Staging lives in us-east-2 from today."): "from" or
"starting" inside one names a thing ("the logs from today", "the sprint starting
Monday"), and after a form of *be* "starting" is a verb ("Dana is starting Monday")."""
_EN_NEW_VALUE = (
    r"(?=\s+(?:[$\u20ac\u00a3\u00a5]?\d|(?:mon|tues|wednes|thurs|fri|satur|sun)day\b"
    r"|tomorrow\b|today\b|tonight\b|noon\b|midday\b|midnight\b|next\s|half\b"
    r"|the\s+\d{1,2}(?:st|nd|rd|th)\b"
    r"|the\s+(?:end|start|beginning|middle)\b|(?:jan|feb|mar|apr|jun|jul|aug|sep|oct|nov|dec)"
    r"[a-z]*\b|q[1-4]\b|eo[dw]\b|(?:one|two|three|four|five|six|seven|eight|nine|ten"
    r"|twelve|fifteen|twenty|thirty|fifty|hundred)\b))")
"""A value someone changed to ("cut to 3000", "pushed to Thursday"): not "raised to
believe", nor git's "pushed to main" (pushed/pulled to also need got/was/were)."""
EN_PASSING = en(
    r"\b(?:during|while|briefly|momentarily|for\s+a\s+(?:few\s+|couple\s+of\s+)?"
    r"(?:second|minute|moment|while|bit)s?|at\s+(?:its\s+|the\s+)?peak|under\s+(?:load|stress)"
    r"|when|whenever|(?:after|since|following)\s+(?:the|a|an|each|every|our|this|that|last"
    r"|(?:yesterday|today|tonight)['\u2019]s|last\s+night['\u2019]s)\s)")
"""What makes a value that rose or fell a reading, not the new value ("CPU went up to
95% during the test", "… for a few seconds", "… under load", "… when the cron job
runs", "p99 latency rose to 650 ms after yesterday's deploy": what an event did, a
report as with :data:`EN_UPDATE_SINCE`), anywhere in the clause: it replaces nothing."""
EN_RISE = en(r"^(?:(?:has|have|had)\s+)?(?:(?:went|gone)\s+(?:up|down)|rose|risen|fell|fallen"
             r"|dropped|increased|decreased|climbed|grew|grown|shrank|shrunk)\s+to\b")
"""An :data:`EN_UPDATE` cue by which a value rose or fell by itself (:data:`EN_PASSING`
applies)."""
EN_UPDATE = Cue(en(
    r"(?<!\bfor )(?<!\bjust )(?<!\bright )\bnow\b(?!\s+that\b)"
    r"|\b(?:switched|switching|moved|migrated|changed|changing|swapped|upgraded|relocated)"
    r"\s+(?:over\s+)?(?:to|from)\b|\bno\s+longer\b|\bnot\s+\w+\s+any\s?more\b"
    r"|\b(?:stopped|quit|gave\s+up|given\s+up)(?=\s+[a-z]{2,}ing\b)"
    r"|\b(?:switched|moved|migrated|changed|swapped|renamed)\s+(?:our|my|the|their|his|her)\s+"
    r"(?P<what>[\w-]+(?:\s+[\w-]+){0,3}?)\s+(?:over\s+)?to\b"
    r"|\b(?:these\s+days|nowadays|currently|at\s+the\s+moment|at\s+present|any\s?more)\b"
    r"|\b(?:settled|agreed|decided)\s+on\b|\bopted\s+for\b"
    r"|\bended\s+up\s+(?:with|using|going\s+with)\b"
    r"|(?:^|(?<=[.!?:]\s))(?:i|we)(?:'m|'re|\s+am|\s+are|\s+can|\s+could|\s+have|'ve)\s"
    r"[^.!?,;]{1,60}?\sagain(?=\s*(?:[.!]|$))"
    rf"|\b(?:as\s+of|effective)\s+{_EN_ONSET}"
    r"|\b(?:as\s+of|effective(?:\s+with)?)\s+(?:release|version|v)\s*\d[\w.]*"
    rf"|(?:^|(?<=[,;:]\s))(?:from|starting)\s+{_EN_ONSET}"
    rf"|\bfrom\s+{_EN_EFFECTIVE_DATE}{_EN_CLAUSE_END}"
    rf"|\bfrom\s+{_EN_ONSET}\s+on(?:wards?)?{_EN_CLAUSE_END}"
    rf"|(?<!\bis\s)(?<!\bare\s)(?<!\bam\s)(?<!\bwas\s)(?<!\bwere\s)(?<!\bbe\s)(?<!\bbeen\s)"
    rf"(?<!['\u2019]s\s)(?<!['\u2019]m\s)(?<!['\u2019]re\s)"
    rf"\bstarting\s+{_EN_ONSET}{_EN_CLAUSE_END}"
    r"|\bgoing\s+forward\b|\bfrom\s+here\s+on(?:\s+out)?\b|\bhenceforth\b"
    r"|\b(?:(?:got|was|were|has\s+been|have\s+been|been|just)\s+)?(?:cut|raised|lowered"
    r"|bumped|extended|shortened|shifted|rescheduled|slipped|slid)"
    rf"\s+(?:back\s+)?to\b{_EN_NEW_VALUE}"
    r"|(?:\b(?:raised|lowered|bumped|extended|shortened|shifted|rescheduled|dropped|reduced"
    r"|increased|upped|moved|changed|pushed|pulled)"
    r"|\b(?:we|i|they|he|she|someone|somebody)\s+(?:(?:just|finally|already)\s+)?(?:cut|set))"
    rf"\s+(?:it|them|that|this|me|us)\s+(?:back\s+|down\s+|up\s+)?to\b{_EN_NEW_VALUE}"
    rf"|\b(?:got|was|were|been)\s+(?:pushed|pulled)\s+(?:back\s+)?to\b{_EN_NEW_VALUE}"
    r"|\b(?:(?:got|gets|was|were|has\s+been|have\s+been|had\s+been|been)\s+)(?:just\s+)?"
    r"(?:moved|postponed|delayed|changed|renamed|brought\s+forward)"
    rf"\s+(?:back\s+|forward\s+)?to\b{_EN_NEW_VALUE}"
    r"|\b(?:(?:got|was|were|has\s+been|have\s+been|had\s+been|been|just)\s+)?postponed"
    rf"\s+to\b{_EN_NEW_VALUE}"
    r"|\b(?:(?:has|have|had)\s+)?(?:(?:went|gone)\s+(?:up|down)|rose|risen|fell|fallen"
    r"|dropped|increased|decreased|climbed|grew|grown|shrank|shrunk)"
    rf"\s+to\b{_EN_NEW_VALUE}"),
    words="now switched switching moved migrated changed changing swapped upgraded relocated renamed "
          "postponed delayed brought went gone rose risen fell fallen decreased climbed grew "
          "grown shrank shrunk "
          "longer anymore again stopped quit gave given any days nowadays currently moment "
          "present from settled agreed decided opted ended "
          "as starting "
          "effective going here henceforth cut raised lowered bumped pushed pulled extended "
          "shortened shifted rescheduled slipped slid dropped reduced increased upped set")
"""'We deploy with Argo CD now', 'we switched to Argo CD', 'we no longer use Jenkins' (but
not 'for now', 'right now', 'now that'); an activity that ended, said as stopped, quit or
gave up before a verb in -ing ('I stopped drinking coffee', 'we quit using Redis': the
same as 'no longer'; 'I quit my job' names no activity and is left alone); 'we moved our
flour order to …', 'we renamed the repo to …' (what moved or was renamed is the ``what``
group); a value chosen ('we settled on 250 requests per minute', agreed on, decided
on, opted for, ended up with): the choice replaces what was said before; and a
statement that marks its value as the present one ('Home is Ronda these
days', nowadays, currently, at the moment, at present, anymore), or as a state come
back ('I can eat gluten again.', 'I'm vegetarian again.': a closing "again" after the
speaker's be, can or have, never an event told again: 'I read the file again'); a date
the value takes effect from, opening or ending the clause ('… from today', 'starting
next week', 'going forward', 'from here on'), or a release ('As of release 3.2, …',
'effective with v2'); a value someone changed to another ('the
budget got cut to 3000', 'the standup was pushed to 10:00', 'we dropped it to 60 rpm':
someone acted on it, in a past form or after its doer, not "cut it to 200 words"; 'the
retro got moved to Thursday', 'was postponed to May': the auxiliary is part of the cue,
so it is no part of the subject; 'the dentist moved me to the 11th': whoever holds the
slot moved the speaker's); a month or a year the value takes effect from ('rent is
1,520 starting October', 'as of March 3', 'from next year on': :data:`_EN_ONSET`); a
value that rose or fell by itself to a new one, or a date that slipped ('the launch
slipped to July'; 'my rent went up to 1300 EUR', 'rose / fell / dropped / increased to'), unless the clause
makes it a passing reading (:data:`EN_PASSING`, checked by the caller: "CPU went up to
95% during the test"): it revises the value of its subject, while ``items.readings.reports_number``
still reads it as a report, never a number the user set. The match's start cuts the
subject phrase."""
# Replacements: a statement that names what changed into what ("We replaced RabbitMQ with
# Kafka", "Kafka replaced RabbitMQ", "We migrated from Heroku to Fly.io", "We bumped Node
# to 20", "We went back to Helm", "We dropped Redis in favour of Memcached", "We use
# Memcached instead of Redis"). Completed forms only: a plan ("we plan to migrate …") is
# not a change yet. Read by ``memory_core.extraction.replacement``, which names each
# group: ``old`` (the value replaced), ``new`` (the value now), ``what`` (the attribute).
_NP = r"(?:(?![,;!?\n]|:(?!\d)).){1,48}?"
EN_REPLACE: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("swap", en(r"\breplaced\s+(?P<old>" + _NP + r")\s+(?:with|by)\s+(?P<new>.{1,60})"
                r"|\b(?:swapped(?:\s+out)?|exchanged|traded)\s+(?P<old2>" + _NP
                + r")\s+for\s+(?P<new2>.{1,60})")),
    ("swap", en(r"^(?P<old>" + _NP + r")\s+(?:was|were|has\s+been|have\s+been|had\s+been|got"
                r"|is\s+now|are\s+now)\s+(?:replaced|superseded|swapped\s+out)\s+(?:with|by|for)"
                r"\s+(?P<new>.{1,60})")),
    ("swap", en(r"^(?P<new>" + _NP + r")\s+(?:(?:has|have|had|now|officially|fully|finally)\s+)*"
                r"(?:replaced|superseded)\s+(?P<old>.{1,60})")),
    ("move", en(r"\b(?:migrated|moved|ported|switched|transitioned|changed|converted|went"
                r"|upgraded|downgraded|bumped|shifted|rewrote)\s+(?:(?P<what>(?!from\b|over\b)"
                + _NP + r")\s+)?(?:over\s+|back\s+)?from\s+(?P<old>" + _NP
                + r")\s+(?:over\s+|back\s+)?(?:to|onto|into)\s+(?P<new>.{1,60})")),
    ("revert", en(r"\b(?:reverted|rolled|went|switched|moved|changed|fell|downgraded|are"
                  r"|'re|is|'s|returned)\s+(?:(?P<what>(?!to\b|back\b)" + _NP
                  + r")\s+)?back\s+to\s+(?P<new>.{1,60})"
                  r"|\b(?:reverted|returned|rolled\s+back)\s+(?:(?P<what2>(?!to\b)" + _NP
                  + r")\s+)?to\s+(?P<new2>.{1,60})")),
    ("set", en(r"\b(?:bumped|upgraded|downgraded|pinned|updated|raised|lowered|increased"
               r"|decreased|reduced|changed|switched|ported|rewrote|migrated|moved|converted"
               r"|cut|slashed|trimmed|extended|shortened|postponed|delayed|rescheduled"
               r"|doubled|halved|tripled|dropped|upped|adjusted|configured|scaled)"
               r"\s+(?P<what>(?!to\b|from\b|back\b|over\b)"
               + _NP + r")\s+(?:up\s+|down\s+|back\s+)?to\s+(?P<new>.{1,60})")),
    # "set" after its doer only ("Set the timeout to 30 s" is an order; "set up", "set
    # off", "set aside" are other verbs), to any short value ("… the log level to debug")
    ("assign", en(r"\b(?:we|i|they|he|she|someone|somebody)(?:'ve|'d)?\s+"
               r"(?:(?:have|had|just|finally|already|now|then|recently)\s+){0,2}set\s+"
               r"(?P<what>(?!to\b|up\b|off\b|out\b|aside\b|apart\b|about\b|in\b|down\b"
               r"|back\b|forth\b)" + _NP + r")\s+to\s+(?P<new>.{1,60})")),
    ("set", en(r"\bpushed\s+(?P<what>(?!to\b|from\b|back\b)" + _NP + r")\s+(?:back\s+)?to\s+"
               r"(?P<new>(?:(?:next|the)\s+)?(?:mon|tue|wed|thu|fri|sat|sun|jan|feb|mar|apr|may|jun"
               r"|jul|aug|sep|oct|nov|dec|q[1-4]\b|\d|tomorrow|week|month|sprint|quarter).{0,58})")),
    ("drop", en(r"^(?:(?:ok(?:ay)?|so|then|and|also)[,\s]+)?(?:let's\s+|please\s+"
                r"|we(?:'ll|\s+will)\s+)?(?:(?:drop|remove)\s+(?P<old>" + _NP + r")\s+(?:from"
                r"|out\s+of)|take\s+(?P<old2>" + _NP + r")\s+out\s+of)"
                r"\s+(?:the|our|my)\s+(?P<what>[\w-]+(?:\s+[\w-]+){0,2})"
                r"[;,]?\s*$")),
    ("drop", en(r"\b(?:dropped(?!\s+(?:off|by|in|out|back)\b)|ditched|abandoned|retired|dumped"
                r"|removed|phased\s+out|got\s+rid\s+of"
                r"|(?:stopped|quit)\s+using|moved\s+away\s+from|moved\s+off(?:\s+of)?|gave\s+up(?:\s+on)?"
                r"|decommissioned|deprecated|replaced)\s+(?P<old>" + _NP + r")(?:\s+(?:for"
                r"|in\s+favou?r\s+of|and\s+(?:moved|switched|went|migrated)\s+to"
                r"|and\s+(?:now\s+)?(?:use|run|went\s+with))\s+(?P<new>.{1,60}))?[;,]?\s*$")),
    ("end", en(r"(?<!\bis\s)(?<!\bare\s)(?<!\bwas\s)(?<!\bwere\s)(?<!\bbe\s)(?<!\bbeen\s)"
               r"(?<!['\u2019]s\s)(?<!['\u2019]re\s)\b(?:(?:left|quit)(?=\s+(?:my\s+|our\s+|the\s+)?(?-i:[A-Z0-9]))"
               r"|(?:left|quit)\s+(?:my|our|the)\s+(?:job|position|role|post)\s+(?:at|with)"
               r"|sold(?:\s+off)?|gave\s+away|moved\s+out\s+of|cancell?ed|called\s+off"
               r"|broke\s+up\s+with|split\s+up\s+with|divorced|closed\s+down|shut\s+down"
               r"|closed)\s+(?P<old>" + _NP + r")(?:\s+(?:and\s+(?:(?:then|now)\s+)?"
               r"(?:joined|moved\s+to|went\s+to|started\s+at|bought|got))\s+(?P<new>.{1,60}))?"
               r"[;,]?\s*$")),
    ("end", en(r"^(?P<old>(?:(?:the|our|my)\s+)?(?-i:[A-Z])?" + _NP + r")\s+"
               r"(?:is|was|has\s+been|got|'s|are|were|have\s+been)\s+(?:now\s+)?"
               r"(?:cancell?ed|called\s+off|off(?=\s*(?:[,;.!]|$)))")),
    ("end", en(r"^(?P<old>(?-i:[A-Z])\w+)\s+and\s+I\s+(?:(?:have|had|just|finally)\s+)?"
               r"(?:broke\s+up|split\s+up|got\s+divorced|divorced|separated)\b"
               r"(?!\s+(?:the|a|an|our|my|his|her|their|it|them|this|that|these|those|into)\b)")),
    # "My cat Luna died": a named being (or thing) of the speaker's that is gone
    ("end", en(r"^(?P<old>(?:my|our)\s+(?:[\w-]+\s+){1,2}?(?-i:[A-Z])[\w'-]*)\s+"
               r"(?:(?:has|had|just|sadly)\s+)*(?:died|passed\s+away|(?:was|got)\s+put\s+down)"
               r"(?=\s*$|[,;]|\s+(?:last|this|in|on|yesterday|earlier|recently|a\s|\d)\b)")),
    # "I retired last year": the speaker's work ends, whatever it was
    ("end", en(r"^(?:i|we)\s+(?:(?:have|had|just|finally|recently|officially|already)\s+)*"
               r"(?P<work>retired|stopped\s+working|(?:got|was|were)\s+(?:laid\s+off|fired))"
               r"(?=\s*$|[,;]|\s+(?:last|this|in|earlier|early|recently|yesterday|back|after"
               r"|at\s+(?:the\s+)?age|a\s|\d)\b)")),
    ("instead", en(r"^(?P<head>.{0,60}?)\s+instead\s+of\s+(?P<old>.{1,48})")),
)
"""Replacement forms, tried in order; the first that holds wins (see above). A member
dropped from a named collection, done or decided ("We removed Redis from the stack",
"Let's drop Redis from the stack", "Drop Redis from the stack."): ``drop`` with the
collection as the attribute (``what``), so the statement of the collection that names
the member is what it revises. ``end``: an
event that ends a state — left or quit a named place ("I left Globex and joined
Initech", "I quit my job at Globex"), sold, gave away, moved out of, cancelled, called
off, broke up with, divorced, closed ("I sold my Tesla", "We cancelled the Lisbon
trip"), or the ended thing as the subject ("The offsite is off", "The standup was
cancelled", "Emma and I broke up", "My cat Luna died"): the thing named is the old
value, so the item that states it ends, like "no longer" ("I left my keys at home"
names no place: no end). "I retired (last year)", "I got laid off" name no value: they
end the speaker's work (group ``work``)."""
EN_REPLACE_NEEDLES: tuple[tuple[str, ...], ...] = (
    ("replaced", "swapped", "exchanged", "traded"),
    ("replaced", "superseded", "swapped"),
    ("replaced", "superseded"),
    ("from",),
    ("back", "reverted", "returned"),
    ("bumped", "upgraded", "downgraded", "pinned", "updated", "raised", "lowered", "increased",
     "decreased", "reduced", "changed", "switched", "ported", "rewrote", "migrated", "moved",
     "converted", "cut", "slashed", "trimmed", "extended", "shortened", "postponed", "delayed",
     "rescheduled", "doubled", "halved", "tripled", "dropped", "upped", "adjusted",
     "configured", "scaled"),
    ("set",),
    ("pushed",),
    ("drop", "remove", "take"),
    ("dropped", "ditched", "abandoned", "retired", "dumped", "removed", "phased", "got",
     "stopped", "quit", "moved", "gave", "decommissioned", "deprecated", "replaced"),
    ("left", "quit", "sold", "gave", "moved", "cancel", "called", "broke", "split", "divorced",
     "closed", "shut"),
    ("cancel", "off"),
    ("broke", "split", "divorced", "separated"),
    ("died", "passed", "put"),
    ("retired", "stopped", "laid", "fired"),
    ("instead",),
)
"""Per :data:`EN_REPLACE` form, in its order: substrings one of which every match of
the form holds (``cue.lacks`` skips a form whose needles a sentence lacks)."""
assert len(EN_REPLACE_NEEDLES) == len(EN_REPLACE)
EN_EVENT_HEADS = frozenset(
    "trip offsite meeting standup party wedding deal plan plans launch dinner lunch call "
    "event concert holiday vacation conference interview appointment reservation booking "
    "engagement sync retreat visit tour match game date show festival workshop demo "
    "ceremony celebration gathering session class course flight".split())
"""Heads of an event that can be called off ("The offsite is off"): only these end by
"… is off" (``EN_REPLACE`` ``end``); "The TV is off" is a state of its own."""
EN_PARTING = re.compile(r"\b(?:broke\s+up|split\s+up|divorced|separated)\b", re.I)
"""An ending that parts a couple ("Emma and I broke up", "I divorced Anna"): it ends
only an item that states the couple (:data:`EN_COUPLE`)."""
EN_COUPLE = re.compile(
    r"\b(?:girlfriend|boyfriend|partner|wife|husband|spouse|fianc[e\u00e9]e?|dating"
    r"|married|engaged|together|relationship|seeing)\b", re.I)
"""Words that state a couple ("My girlfriend is Emma", "I'm dating Emma", "Anna and I
are married"); "Emma is my sister" or "… my colleague" states none, so a parting
leaves it current."""
_EN_LEAD = (r"^(?:(?:actually|so|and|but|well|also|then|now|yesterday|today|recently|last\s+\w+"
            r"|this\s+\w+|in\s+\w+)[\s,]+)*")
EN_SELF_ACTOR = re.compile(_EN_LEAD + r"(?:i|we)\b", re.I)
"""A sentence whose actor is the speaker ("I moved …", "Actually, we went back to …")."""
EN_OTHER_ACTOR = re.compile(
    _EN_LEAD + r"(?:(?:he|she|they|someone|somebody|everyone)\b"
    r"|(?:my|our|his|her|their|the|a|an)\s+(?:[\w'-]+\s+){0,2}?(?:sister|brother|sibling"
    r"|mom|mum|mother|dad|father|parents?|wife|husband|partner|spouse|son|daughter|kids?"
    r"|child|children|friends?|boyfriend|girlfriend|cousin|aunt|uncle|niece|nephew"
    r"|grand(?:ma|mother|pa|father|parents?)|family|roommate|neighbou?r|boss|manager"
    r"|colleagues?|co-?workers?|client|customer)s?\b"
    r"|(?:his|her|their|the|a|an|another)\s+(?:[\w'-]+\s+){1,2}?(?:team|department"
    r"|company|group)s?\b(?!\s+(?:lead|leads|leader|size|name|lunch|meeting|members?)\b))",
    re.I)
"""A sentence whose actor (or whose subject's owner) is another person or group
("My sister moved back to Ohio", "The analytics team went back to Postgres 16", "My
brother lives in Boston"): their change or fact is not the speaker's. "Our team",
"my team" and "the team" are the speaker's own."""
EN_INSTEAD_STATE = re.compile(
    r"\b(?:use|uses|using|run|runs|running|host|hosts|hosting|deploy|deploys|build|builds"
    r"|store|stores|prefer|prefers|went\s+with|go\s+with|chose|picked|switched\s+to"
    r"|moved\s+to|migrated\s+to|rely\s+on|relies\s+on|are\s+on|is\s+on|'re\s+on)\b", re.I)
"""An "X instead of Y" that states a standing choice ("We use Memcached instead of
Redis"), not one event ("I had pizza instead of pasta"): only these replace an item."""
EN_REPLACE_WORDS = frozenset(
    "replaced swapped exchanged traded superseded migrated moved ported switched transitioned "
    "changed converted went upgraded downgraded bumped shifted rewrote reverted rolled fell "
    "returned pinned updated raised lowered increased decreased reduced dropped ditched "
    "abandoned retired dumped phased got stopped quit gave decommissioned deprecated instead "
    "cut slashed trimmed extended shortened postponed delayed rescheduled pushed "
    "ported rewrote converted doubled halved tripled upped adjusted configured scaled set "
    "back left sold away out cancelled canceled called broke split divorced separated "
    "closed shut off drop remove removed take died passed put laid fired".split())
"""A replacement form holds one of these words (a cheap gate before the patterns)."""
EN_CHANGE = en(
    r"\b(?:switch(?:ed|ing)|mov(?:ed|ing)|migrat(?:ed|ing)|chang(?:ed|ing)|swapp(?:ed|ing)"
    r"|upgrad(?:ed|ing)|downgrad(?:ed|ing)|replac(?:ed|ing)|relocat(?:ed|ing)|rolled\s+back"
    r"|went\s+back|dropp(?:ed|ing)|stopp(?:ed|ing)|quit|gave\s+up|instead|no\s+longer"
    r"|any\s?more|(?:cut|raised|lowered|bumped|pushed|pulled|extended|shortened|shifted"
    r"|rescheduled|reduced|increased|upped|set)\s+(?:(?:it|them|that|this)\s+)?"
    r"(?:back\s+|down\s+|up\s+)?to)\b")
"""Words that say a state changed ("we switched to …", "no longer", "… instead of npm",
"the budget got cut to 3000"), not only that a statement holds now ("… now", "these
days", "going forward"): a change presupposes an earlier state
(``replacement.states_change``)."""
EN_ADDITIVE = re.compile(
    r"(?<=\w\s)also\b(?!\s*,)|\bas\s+well\b(?!\s+as)|\bbesides\b|\bin\s+addition\s+to\b"
    r"|\btoo(?=\s*(?:[.,;!?)]|$))", re.I)
"""Words by which a statement adds to what holds ("We now also support API keys", "…
on Windows too", "… as well"): dated by "now", it revises nothing
(``replacement.adds``), unless it names a change or a replacement. Not a sentence's
opening "Also," (a new point, which may well be an update) nor "too" before an
adjective ("too slow")."""
EN_ADDED_PART = re.compile(
    r"\b(?:changed|updated|extended|expanded|edited|modified|tweaked|adjusted|amended"
    r"|reworked)\s+(?:[\w-]+\s+){1,5}?to\s+(?:also\s+)?(?:include|add|cover|contain|list"
    r"|mention|feature|show)\b", re.I)
"""A thing changed so that it holds one more part ("I changed the release notes
template to include a Known Issues section", "we extended the policy to cover
contractors"): what it held before still holds, as with :data:`EN_ADDITIVE`, though a
change verb says it (``replacement.adds``)."""
EN_EVALUATIVE = re.compile(
    r"\b(?:awesome|amazing|great|good|nice|cool|fun|funny|cute|beautiful|gorgeous|lovely"
    r"|wonderful|fantastic|incredible|terrific|brilliant|excellent|perfect|superb|stunning"
    r"|impressive|inspiring|motivating|rewarding|exciting|refreshing|fascinating|interesting"
    r"|calming|relaxing|peaceful|magical|adorable|delicious|tasty|epic|wild|crazy|insane"
    r"|priceless|invaluable|special|bad|terrible|awful|horrible|sad|tough|hard|difficult"
    r"|tricky|rough|boring|scary|stressful|exhausting|taxing|intense|bummer|blast|joy"
    r"|blessing|thrill|glad|happy|happier|proud|lucky|grateful|thankful|blessed|excited"
    r"|stoked|thrilled|determined|impressed|inspired|motivated|worried|nervous|scared"
    r"|tired|bored|relieved|sorry|upset|love[sd]?|loving|enjoy(?:s|ed)?|hate[sd]?"
    r"|appreciated?|means\s+(?:a\s+lot|so\s+much|a\s+ton|the\s+world)|worth\s+it)\b")
"""Words that judge or feel rather than state a value ("That photo is gorgeous!",
"Glad I could help", "Your advice means a lot"): two such statements about one thing
are two impressions, not two values of one attribute
(``items.supersession.contradicts``). Lowercase only: a capital inside a sentence is
a name ("we live in Nice", "the Great Lakes"); the caller lowers a sentence's first
letter."""
EN_A_CHANGE = (
    r"(?:(?:yesterday|today|tonight|last\s+(?:night|week|month))['\u2019]s\s+"
    r"|this\s+(?:morning|week)['\u2019]s\s+|the\s+|our\s+|that\s+|this\s+)"
    r"(?:latest\s+|recent\s+|last\s+)?(?:change|changes|upgrade|migration|update|rollout"
    r"|release|deploy|deployment|redeploy|restart|reconfiguration|fix|patch|switch)"
    + _EN_CLAUSE_END)
"""A change named at the end of a clause ("… after yesterday's change"): with "after",
"since" or "following" before it the clause states the value it left
(:data:`EN_UPDATE_SINCE`), not a condition."""
EN_UPDATE_SINCE = Cue(en(
    r"\bnow\s+that\s+(?:we|i|they|you|it|he|she|the\s+[\w-]+)\s+(?:have\s+|'ve\s+|has\s+|had\s+)?"
    r"(?:finally\s+|just\s+)?(?:upgraded|downgraded|migrated|moved|switched|changed|replaced"
    r"|updated|bumped|reverted|rolled\s+back|ported|swapped|been\s+(?:upgraded|migrated|moved"
    r"|replaced|updated))\b"
    rf"|\b(?P<after>after|since|following)\s+{EN_A_CHANGE}"), words="now after since following")
"""'The database is Postgres 16 now that we upgraded', '… the pool size is 64 after
yesterday's change': the statement is the state after a change, so it revises the old
state; the clause keeps its own subject. The change named at the clause's end only
("The build broke after the upgrade to Node 20" reports an event), after a form of
*be* (the caller's check, ``after`` group: "p95 latency jumped … after yesterday's
deploy" reports a number that moved by itself)."""
EN_REPLACE_BLOCK = en(
    r"\b(?:not|never|will|would|can|could|should|might|may|must|shall|plan|plans|planned|planning"
    r"|going|want|wants|wanted|need|needs|hope|hoping|try|trying|consider|considering"
    r"|considered|contemplated|contemplating|discussed|discussing|debated|debating"
    r"|thinking|think|about|if|unless|whether|once|when|before|until|suppose|assuming|case"
    r"|let's|let|lets|propose|suggest|maybe|perhaps|probably|almost|nearly|tried"
    r"|nobody|no\s+one)\b|n't\b|'ll\b|'d\b")
"""Words before a replacement that make it not (yet) done: a negation ("haven't
migrated", "nobody changed it to 60 rpm"), a modal, advice ("you can use X instead of
Y") or plan ("we will have moved", "we plan to …"), a condition ("if we moved to
Kafka", "when we migrated …": a fronted clause, not the statement)."""
EN_REPLACE_TAIL = en(
    r"(?<!\s)\s+(?:for|as|in|at|on|last|this|next|yesterday|today|since|because|after|before|when"
    r"|and|but|so|to|with|from|during|earlier|recently|back|over|instead|now|already|across"
    r"|everywhere|again|too|entirely|completely)(?![\w-])|(?<!\s)\s*[,;(]|:(?!\d)|(?<!\s)\s+-\s|\.(?:\s|$)"
    r"|(?<![.!])[.!]+$")
"""Where a new value's phrase ends ("Kafka| last month", "Fly.io| for the API"); not
inside a hyphenated word ("my in-laws' house", "the on-call rota"). A tail starts at the
first blank or stop of its run, so a long run is read once (linear time)."""
EN_REPLACE_ROLE = en(r"^\s+(?:(?:for|as)\s+(?:the\s+|our\s+|my\s+|their\s+|a\s+|an\s+)?"
                     r"|(?:on|in|at)\s+(?:the|our|my|their)\s+)"
                     r"(?P<role>[\w\s-]{2,40}?)\s*(?:[,.;!]|$|\s+(?:last|this|since|because"
                     r"|after|and|but|so|in|on|at|now|yesterday|today))")
"""What the new value is for, as or where ("… with Kafka for the event bus", "… as team
lead", "Tom replaced Anna on the night shift"; not a time: ``EN_REPLACE_WHEN``)."""
EN_REPLACE_WHEN = en(r"\b(?:spring|summer|autumn|fall|winter|week|weekend|month|year|morning"
                     r"|afternoon|evening|night|day|quarter|sprint|end|past|meantime|end"
                     r"|beginning|start|middle|holidays?)$")
HOME = "home"
"""The subject of where the speaker lives (:data:`EN_HOME`)."""
_DWELLING = (r"(?:live[sd]?|living|relocat\w*|house|home|flat|apartment|city|cities|country"
             r"|countries|family|abroad|overseas)\b")
"""A word by which "I moved from X to Y" is a move of home, not of a tool, an employer
or a team ("I moved from Jira to Linear", "… from Google to Stripe")."""
_TECH_PURPOSE = (r"(?:backend|frontend|services?|project|app|api|tests?|testing|builds?|ci"
                 r"|deploys?|deployment|scripts?|code|repo|stack|queues?|database|db|infra\w*"
                 r"|tooling|monitoring|logging|servers?|pipelines?)")
"""What a tool is moved to Go for ("I moved to Go for the backend"); a move "for work"
or "for my wife's job" is still one of home, one "for the summer" a stay."""
EN_HOME = re.compile(
    r"\b(?:i|we)(?:['’]m|['’]re|\s+am|\s+are)?\s+(?:now\s+|currently\s+|still\s+|also\s+)?"
    r"(?:live|living|reside|residing|based|settled)\s+(?:in|near|at)\b"
    r"|\bi(?:\s+have|['’]ve)?\s+(?:just\s+|recently\s+)?(?:moved|relocated|moved\s+house"
    r"|moved\s+back)\s+(?:(?:(?<=relocated\s)|(?<=house\s)|(?=back\s)"
    r"|(?=from\s[^.!?]*\b" + _DWELLING + r"))"
    r"(?:back\s+)?from\s+(?-i:[A-Z])[\w .'’-]{0,40}?\s+)?to\s+(?-i:[A-Z])"
    r"(?![^.!?]*\b(?:for\s+(?:(?:the|this|our|my|a|all|its)\s+)?" + _TECH_PURPOSE + r"\b"
    r"|for\s+(?:the|a|a\s+few|two|three|six|some)\s+(?:summer|winter|spring|autumn|weeks?"
    r"|months?|semester|term|holidays?|while|conference|trip)\b"
    r"|in\s+(?:the|our|this|my)\s+(?:code|repo|project|service|stack)))"
    r"|^(?:(?:my|our)\s+)?home(?:\s*town)?\s+is\s+(?:(?:now|actually|still)\s+)?(?-i:[A-Z])"
    r"|我(?:现在|目前|如今)?(?:住在|定居在|搬到了?)|我(?:已经|刚|刚刚|上个月|去年)?从\S{1,20}?搬到"
    r"|^我(?:现在|目前|如今|一直)?在[^，,。？?在]{1,15}?(?:住|生活|定居|居住)(?![宿院])"
    r"(?!了?(?:[0-9一二两三四五六七八九十几]+|好几)个?(?:天|晚|夜))"
    r"|(?:に|で)(?:住んで|暮らして)|に引っ越し",
    re.I)
"""Where the speaker lives, however it is put ("I live in Visby", "I'm based in
Ghent", "I moved to Ronda last month", "I relocated from Lyon to Ronda", "I moved
from Lyon to Ronda with my family", "Home is Ronda these days", 我住在…, 我在…住, 我从…搬到…,
…に住んでいます): one attribute, subject ``home``, so a later value supersedes or
conflicts with the earlier one. First person only ("my sister lives in …" is
another subject); "moved to" only for "I" and a capitalised place ("we moved to
Argo CD" is a tool), and not with a technical purpose ("I moved to Go for the
backend"); "moved from X to Y" only "back", "relocated", "moved house" or with a
word of dwelling (:data:`_DWELLING`): else it is the usual way to tell of a tool's,
an employer's or a team's change, and keeps its own subject (it still replaces a
home item naming X)."""
EN_UPDATE_NEW = Cue(en(
    r"\b(?:the|our|my|your|their|his|her)\s+(?:new|current)\s+"
    r"(?P<what>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,3}?)"
    r"(?=\s+(?:is|are|will\s+be|starts?)\b)"
    r"|\b(?:is|are)\s+(?:the|our|my|your|their|his|her)\s+new\s+"
    r"(?P<role>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,3}?)\s*[.!]*$"
    r"|(?<!\bhired\s)(?<!\badded\s)(?<!\bwelcomed\s)(?<!\bonboarded\s)(?<!\brecruited\s)"
    r"\ban?\s+new\s+(?P<named>[a-z][\w-]*(?:\s+[a-z][\w-]*){0,2}?)"
    r"(?=\s*,\s+(?:an?\s+|the\s+)?(?-i:[A-Z]))"), words="new current")
"""'My new phone number is …', 'Our new office is in Lisbon', 'My current favourite player
is Messi' (``what``), 'Dana is the
new team lead' (``role``), 'I've started seeing a new dentist, Dr. Osei' (``named``: the
name after the comma is the new value): the statement replaces the earlier value of
that attribute (not 'a new car', 'I like the new design', nor one more of a team:
'We hired a new engineer, Sam')."""
EN_UPDATE_FOR = re.compile(r"\bfor\s+(?:the\s+|our\s+|my\s+)?(?P<what>[\w\s-]{2,40}?)\s*[.!]*$",
                           re.I)
"""'We switched to Argo CD for deploys': what changed is named after 'for'."""
# "…instead." at the end of a short choice.
EN_CORRECTION_TAIL = Cue(en(
    r"\binstead\s*[.!]*$"
    r"|^(?!(?:it|this|that|there|these|those|they|he|she)\b)"
    r"[^,;]{0,80}?\b(?:is|are|was|were|am|'s|'re|'m)\s+actually\s+(?=(?-i:[A-Z])|[^\s,;.]*\d)"),
    words="instead actually")
"""'Let's use MySQL instead.' revises an earlier choice; so does "actually" between the
copula of a named subject and a name or a number ("The deadline is actually Monday.",
"The staging port is actually 5434."), as it does at the start. "It's actually fine"
says nothing to revise, and "The timeout is actually fine as it is at 30 s" affirms
the value it names. A trailing ", actually" is left alone: "… is fine as it is at 30 s,
actually" affirms too."""
_OH_NO = (r"oh\s+no(?![\s,;:-]+[^.!?]{0,60}?\b(?:is|are|'s|'re)\s+(?:actually\s+|at\s+|on\s+"
          r"|in\s+)?(?:(?-i:[A-Z])|\d))")
"""Dismay ("Oh no, Jon!", "Oh no, the build broke"), unless a value restated after a
present copula follows ("Oh no, the meeting is at 3, not 2", "Oh no, sorry, the deadline
is Friday"): there "no," is the "No," of a correction, as before the filler knew "oh no"."""
# Discourse openers that carry no content ("btw", "for the record", "heads up", "Cool,"; an
# idiom on "no" that denies nothing: "No doubt, …", "No kidding, …", "No wonder …").
EN_FILLER = Lead(en(
    r"^(?:(?:" + _OH_NO + "|" + alt("also|and|but|so|ok|okay|oh|oh dear|uh oh|oh man|oh boy"
                     "|oh god|oh my god|omg|btw|by the way|fyi|ps|please note|note that"
                     "|remember that|keep in mind that|keep in mind|just so you know"
                     "|for the record|for context|as i said|as i mentioned|like i said|sorry"
                     "|hmm|um|anyway|alright|then|plus|one more thing|honestly|frankly"
                     "|personally|no doubt|no kidding|no joke|no lie|no wonder|no offense"
                     "|no offence|no worries|no problem"
                     "|tbh|fwiw|imo|in general|generally|basically|heads up") + r")\b[\s,:;-]*"
    r"|(?:cool|great|nice|perfect|sounds\sgood|yes|yeah|yep|sure|fine|right|got\sit|thanks"
    r"|thank\syou|agreed|noted|makes\ssense)\s*[,!.]\s*|(?:e\.g|i\.e)\.\s*"
    # a save order before the statement it keeps ("Please remember my anniversary is …",
    # "Can you remember that I have a dog named Xena", "Remind me that my passport …",
    # "Remember this: I'm allergic to shellfish"); a
    # bare "Remember …?" asks whether the assistant recalls ("Remember I told you about
    # my sister?"), and stays a question
    r"|(?:(?:can|could|would|will)\s+you\s+|(?:(?:please|pls)\s+)?(?![^.!?\n]*\?))(?:remember"
    r"|remind\s+me|keep\s+in\s+mind|save\s+(?:this\s+|it\s+)?(?:to|in)\s+(?:your\s+)?memory)"
    r"(?:\s+that|\s+this(?=\s*:))?(?:\s*[,:]\s*|\s+)"
    r"(?=(?:my|our|i|i'm|i've|i'd|we|we're|we've|the|always|never|don't|do\s+not)\b)"
    # "Well, …", "Well I think …", but "Well water is safe here" is about a well
    r"|well(?:\s*[,!.:;-]\s*|\s+(?=(?:i|i'm|i've|i'd|we|we're|we've|you|it|it's|that|this|so"
    r"|then|my|our|actually|anyway|yes|no)\b))"
    r"|(?:hi|hello|hey|hiya|howdy|good\s(?:morning|afternoon|evening))(?:\s(?:there|all"
    r"|everyone|team|folks|guys|(?-i:[A-Z][\w'-]*)))?\s*(?:[,!.\u2013\u2014]|-+(?![\w-]))\s*)+"
), "hi hello hey hiya howdy good "
   "also and but so ok okay oh uh omg btw by fyi ps please note remember keep just for as like "
   "sorry hmm um well anyway alright then plus one honestly frankly personally tbh fwiw imo in "
   "generally basically heads cool great nice perfect sounds yes yeah yep sure fine right got "
   "thanks thank agreed noted makes e i no pls can could would will remind save")
# Greetings, thanks and acknowledgements: what chat users send between real turns.
_EN_SMALL_TALK_PHRASES = ("thanks|thank you|thx|ty|ok|okay|k|kk|cool|nice|great|awesome|perfect"
                     "|got it|sure|yes|yeah|yep|yup|no|nope|lol|haha|hmm|hm|hi|hello|hey|hi there"
                     "|good morning|good night|good evening|bye|cheers|sounds good|makes sense"
                     "|no worries|np|great job|well done|looks good|lgtm|go ahead|not sure"
                     "|not sure yet|never mind|nevermind|alright|all right|fine|i see|oh|ah|wow"
                     "|excellent|amazing|that worked|it worked|that works|works now|it works"
                     "|it works now|hope you're doing well|hope you are well|good|agreed|exactly"
                     "|true|indeed|of course|please continue|continue|go on|next|yes please"
                     "|sure thing|much appreciated|appreciate it|you're right|you are right"
                     "|fair enough|done|nice one|thanks again|ok then|sounds great|love it"
                     "|that helps|that's it|that's all|understood|roger|noted|will do"
                     "|don't worry about it|no problem|my pleasure|you're welcome"
                     # a check that asks nothing: "got it?", "ok?", "make sense?"
                     "|clear|make sense|does that make sense|got that|get it|you know"
                     "|is that clear|is that ok|is that okay|capisce")
_EN_SMALL_TALK_TAILS = ("so much|a lot|again|now|perfectly|too|very much|man|mate|buddy|guys"
                        "|as always|as usual|as ever|for everything|for your help|for the help"
                        "|for that|for this|in advance")
EN_SMALL_TALK = en(
    r"^(?:(?:" + alt(_EN_SMALL_TALK_PHRASES) + r")(?:\s+(?:" + _EN_SMALL_TALK_TAILS + r"))?"
    r"[\s,.!?~:;)(*^_-]*)+$"
)
"""A sentence made only of greetings, thanks and acknowledgements, or of a check that
asks nothing ("got it?", "ok?")."""
EN_SMALL_TALK_WORDS = frozenset(
    (_EN_SMALL_TALK_PHRASES + "|" + _EN_SMALL_TALK_TAILS).replace("|", " ").split())
"""Every word small talk is made of: a sentence with any other word is not small talk."""
# Requests to the agent ("Can you…", "Help me…"): the conversation itself, not memory.
EN_REQUEST = Lead(en(
    r"^(?:(?:please|pls|kindly|hey|hi|ok|okay|so|and|also|now)[,\s]+)*(?:"
    + alt("can you|could you|would you|will you|can u|could u|would you mind|do you mind"
          "|mind|is it possible to|is it possible for you to|any chance you could"
          "|i need you to|i want you to|i'd like you to|i would like you to|help me|let me know"
          "|i need help|i need some help|i need your help|i want help|i'd like help"
          "|i could use help|i could use some help|i could use your help"
          "|tell me|show me|give me|explain|remind me|walk me through|i have a question"
          "|quick question|can we|could we|i was wondering|i wonder|i'd like to|i would like to"
          "|please|let's|let us|lets") + r")\b"
), "please pls kindly hey hi ok okay so and also now can could would will do mind is any i help "
   "let tell show give explain remind walk quick i'd let's lets")
# Hypotheticals (issue 3: "if we used X, would…?" is not a fact or an open question).
EN_HYPOTHETICAL = Lead(en(r"^(?:(?:and|but|so|ok|also|just)[,\s]+)?(?:what if|if|suppose|supposing"
                          r"|imagine|hypothetically|assuming|say|let's say|in theory)\b"),
                       "and but so ok also just what if suppose supposing imagine hypothetically "
                       "assuming say let's in")
EN_HYPOTHETICAL_MODAL = Cue(en(r"\b(?:would|could|might|wouldn't|couldn't)\b|'d\b"),
                            words="would could might wouldn't couldn't i'd we'd you'd they'd it'd")
# Reported speech (issue 3: a fact about others at most, never a rule for the agent).
EN_REPORTED = en(
    r"^(?P<who>(?:my|our|the|his|her|their|a|an|some|one|this|that)\s[\w\s-]{1,30}?"
    r"|[A-Z][\w-]{1,20}(?:\s[A-Z][\w-]{1,20})?"
    r"|he|she|they|someone|somebody|everyone|people|the docs|the log)\s"
    r"(?:" + alt("said|says|say|told me|told us|tells me|mentioned|mentions|thinks|thought|believes"
                 "|wants|wanted|asked|asks|claims|claimed|wrote|writes|warned|insists|insisted"
                 "|suggested|suggests|recommends|recommended|reckons|keeps saying|printed|shows"
                 "|showed|reads|read|states|stated") + r")\b[\s,:]*(?:that\b\s*)?"
)
"""Someone other than the user speaking: a fact about them, never a rule for the agent."""
EN_REPORTING_VERBS = frozenset(
    "said says say told tells mentioned mentions thinks thought believes wants wanted asked asks "
    "claims claimed wrote writes warned insists insisted suggested suggests recommends "
    "recommended reckons keeps printed shows showed reads read states stated".split())
"""Trigger words of ``EN_REPORTED``."""
# Hedges that frame a statement ("I think", "I noticed that").
EN_FIRST_PERSON_FRAME = Lead(en(
    r"^(?:i|we)\s(?:(?:really|honestly|strongly|still|also|do)\s)?"
    r"(?:think|believe|guess|suspect|feel|reckon|assume|know|am pretty sure|'m pretty sure"
    r"|am sure|'m sure|noticed|found|heard|saw|learned|figured)\b(?:\s+that\b)?\s*"
), "i we")
"""'I think the leak is in X' asserts 'the leak is in X' with a hedge."""

# Preferences (issue 3: I prefer / I like / I'd rather), with dislikes as negated ones.
EN_PREFERENCE = Lead(en(
    r"^(?:i|we)(?:'d|'m|'re|\swould|\sam|\sare)?\s"
    r"(?:(?:really|generally|usually|much|definitely"
    r"|strongly|kind\sof|kinda|always|also|still|do|tend\sto|personally|honestly|absolutely"
    r"|just|far|much)\s){0,3}"
    r"(?P<verb>prefer|like(?!\sto\b|\syou\b)|love|enjoy|adore|hate|dislike|detest|loathe"
    r"|despise|abhor|rather|can't\sstand|cannot\sstand|can\snot\sstand"
    r"|don't\s(?:really\s)?(?:like|love|enjoy|eat|drink|care\sabout|mind)"
    r"|do\snot\s(?:like|love|enjoy|eat|drink|care\sabout|mind)|never\s(?:eat|drink)"
    r"|no\slonger\s(?:like|love|enjoy|eat|drink|care\sabout)"
    r"|not\sa\s(?:big\s|huge\s)?fan\sof|a\s(?:big\s|huge\s)?fan\sof"
    r"|more\sof|favor|favour|lean\stowards?|tend\sto\sprefer|go\sfor"
    r"|only\s(?:consider(?:ing)?|invest(?:ing)?\sin|apply(?:ing)?\sto"
    r"|accept(?:ing)?|buy(?:ing)?))\b"
    r"|^(?:favou?rite|preferred)\s\w+"
), "i we i'd i'm we'd we're favourite favorite preferred")
"""First-person taste at the start of a clause (used with ``match``), and a choice the
user narrows for good ("I only invest in index funds", "I'm only considering remote
roles")."""
EN_PREFERENCE_ANY = Cue(en(r"\bmy\s(?:(?:current|new)\s)?(?:favou?rite|preferred|go-to)\b"
                           r"|\b(?:is|are)\smy\s(?:favou?rite"
                           r"|preference)\b|\bworks\sbest\sfor\sme\b|\bi'd\s(?:love|like)\sit\sif\b"),
                        words="favourite favorite preferred go-to preference works i'd")
_NOT_A_NAME = (r"(?!(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|january"
               r"|february|march|april|june|july|august|september|october|november|december"
               r"|asap|eod|eow|tomorrow|tonight|today|later|back|maybe)\b)")
_AFTER_NAME = r"(?=\s*(?:$|[,.;:!?)]|\s(?:by|from|please|instead|now|and|but|or)\b))"
EN_CALL_ME = Lead(en(
    r"^(?:(?:please|just|you\scan|feel\sfree\sto)\s)*(?:call\sme|address\sme\sas)\s"
    + _NOT_A_NAME + r"(?P<name>(?-i:[A-Z])[\w'.-]{0,30}(?:\s(?-i:[A-Z])[\w'-]{0,30})?)"
    + _AFTER_NAME + r"|^i\sgo\sby\s" + _NOT_A_NAME + r"(?P<alias>(?-i:[A-Z])[\w-]{0,30})"
    + _AFTER_NAME
), "please just you feel call address i")
"""How the user asks to be addressed ("Call me Sam, by the way", "I go by Alex"): a
preference keyed :data:`NAME_KEYS` (a later one replaces it). A day or a time is no
name ("Call me Friday", "Call me ASAP")."""
NAME_KEYS = frozenset({"name", "称呼", "呼び方"})
"""The subjects of how the user asks to be addressed, in English, Chinese and Japanese:
kept whole when the statement also says "from now on" or "now"."""
EN_CERTAINTY = re.compile(
    r"^(?:i|we)(?:'m|\sam|'re|\sare)\s(?:(?:like|about|almost|only|not|maybe)\s)?"
    r"\d{1,3}(?:\.\d+)?\s*(?:%|percent|per\s+cent)\s+(?:sure|certain|positive|confident"
    r"|convinced|serious)(?:\s+(?:about\s+(?:it|that|this)|of\s+(?:it|that|this)))?"
    r"\s*(?:[.!]+\s*)?$", re.I)
"""How sure the speaker is, as a share ("I'm 100 percent sure.", "I'm 99% certain"): a
degree of conviction about what was said before it, no fact of the speaker's ("I'm 99%
certain the port is 8080" goes on to say one, and is read as it is)."""
EN_MOMENT = re.compile(
    r"^(?:i|we)(?:'m|\sam|'re|\sare)\s(?:(?:only|just|about|like|maybe|probably|still|now"
    r"|running|already|around|roughly)\s){0,2}"
    r"(?:\d+|a\sfew|a\scouple(?:\sof)?|an?|one|two|three|four|five|ten|fifteen|twenty"
    r"|thirty)\s*(?:min(?:ute)?s?|hours?|hrs?|h|blocks?|stops?|km|kilomet(?:er|re)s?|miles?"
    r"|mi)\s+(?:away|late|early|out|off|from\s+(?:home|here|there|you|the\s+\w+)"
    r"|(?:behind|ahead)(?!\s+(?:of\s+)?(?:you|utc|gmt|(?-i:[A-Z]))))\b", re.I)
"""Where the speaker is or how late they run at this moment ("I'm 22 minutes away",
"I'm running 10 minutes late"): a state of the conversation's moment, kept in its
own conversation (``local``), never a standing fact. A time zone's difference ("I'm 9
hours ahead of you", "… behind UTC") lasts, and is no such moment."""
EN_DIETS = frozenset(("vegetarian", "vegan", "pescatarian", "pescetarian"))
"""The diets :data:`EN_DIET` reads that exclude one another (an allergy, an intolerance
or "gluten-free" goes beside any of them): each keys itself, and a correction keyed by
one revises the speaker's item keyed by another
(:func:`memory_core.items.supersession.correction_target`: "Actually, I'm pescatarian."
after "I'm vegetarian."); kept whole when the statement also says "now", as
:data:`NAME_KEYS` are."""
EN_DIET_NAMED = re.compile(
    r"^(?:(?:more\s+like|rather|or\s+rather|closer\s+to)\s+(?:an?\s+)?"
    r"(?P<before>vegetarian|vegan|pescatarian|pescetarian)"
    r"|(?:an?\s+)?(?P<after>vegetarian|vegan|pescatarian|pescetarian)\s+(?:is|would\s+be"
    r"|'s)\s+(?:(?:more|most)\s+(?:accurate|correct|precise|like\s+it|right)|closer"
    r"|the\s+(?:right|better|correct)\s+word))\s*[.!]*\s*$", re.I)
"""A diet named as the better word for the speaker's own, with no "I'm" ("Pescatarian is
more accurate.", "More like pescatarian."): said only of what the user just said of
themselves, so read as their diet (keyed by it, :data:`EN_DIETS`)."""
EN_DIET = Lead(en(
    r"^(?:i|we)(?:'m|\sam|'re|\sare)\s(?:(?:a|an|now|strictly|fully|also|still|actually|pretty"
    r"|very|severely|quite|mostly|gravely|deathly|highly|extremely|seriously|really|super"
    r"|mildly|slightly|dangerously|incredibly|terribly|so)\s){0,2}"
    r"(?P<trait>vegetarian|vegan|pescatarian|pescetarian|gluten[-\s]free|lactose[-\s]intolerant"
    r"|celiac|coeliac|diabetic|teetotal|kosher|halal"
    r"|colou?r[-\s]?blind|dyslexic|deaf|hard\sof\shearing|visually\simpaired|partially\ssighted"
    r"|blind(?!\s(?:to|spot))"
    r"|(?:allergic|intolerant)\sto\s(?!(?:meetings?|bureaucracy|paperwork|jargon|buzzwords"
    r"|mondays|mornings|small\stalk|drama|politics|e-?mails?|spreadsheets|slides|deadlines"
    r"|work|nonsense|hype|marketing|acronyms|boilerplate|yaml|xml|java|javascript|php|jira"
    r"|excel|math|maths|exercise|change)\b)(?:[\w-]+(?:\s(?:and|or)\s)?){1,3})"
    r"(?=\s*(?:$|[,.;:!?)]|\s(?:and|but|so|now|too|since|because|though)\b))"
), "i we i'm we're")
"""A lasting restriction of the user's own diet or health, or a need of access ("I'm
vegetarian", "I'm allergic to peanuts", "I'm colour-blind", "I'm dyslexic"): a fact
that holds for every later answer (``lasting``); not a figure of speech ("I'm allergic
to meetings")."""
EN_ALLERGY_NOUN = Lead(en(
    r"^(?:i|we)(?:\s(?:also|still|actually))?(?:\s(?:have\sgot|have|got)|'ve\sgot)\s(?:an?\s)?"
    r"(?:(?:severe|mild|slight|serious|bad|deadly|life-threatening|strong|minor|major|real"
    r"|diagnosed|known)\s)?(?P<what>[\w-]+(?:\s[\w-]+)?)\s(?:allerg(?:y|ies)|intolerance)\b"
    r"(?=\s*(?:$|[,.;:!?)]|\s(?:and|but|so|now|too|since|because|though)\b))"),
    "i we i've we've")
"""The user's allergy said as a noun ("I have a severe peanut allergy", "I've got a
shellfish allergy"): the same lasting fact as "I'm allergic to peanuts"
(:data:`EN_DIET`), keyed alike (``peanut allergy``) whatever its degree."""
EN_TIMEZONE = Lead(en(
    r"^(?:my\s(?:time\s?zone|tz)\s(?:is|=)\s|i(?:'m|\sam)\s(?:on|in)\s(?=\S+(?:\s\S+)?\s(?:time"
    r"|time\s?zone)\b|(?:utc|gmt)[+-]?\d{0,2}\b|[a-z]{2,4}t\b|[a-z]{1,2}st\b)|i\slive\sin\s(?:the\s)?"
    r"(?=\S+(?:\s\S+)?\stime\s?zone\b))"), "my i i'm")
"""The user's own time zone ("My timezone is CET", "I'm on Pacific time", "I'm in
UTC+2"): a lasting fact keyed ``timezone``."""
EN_HABIT = Lead(en(
    r"^i\s(?:(?:usually|always|normally|generally|mostly|only|personally|just)\s){0,2}"
    r"(?P<verb>use|stick\s(?:to|with)|go\sby|write\sin|code\sin|measure\sin|think\sin"
    r"|work\sin(?=\s+(?:\w+\s)?(?:units|mode|vim|emacs|utc|[a-z]+\stime)\b))\b"
), "i")
"""The user's own convention ("I use metric units", "I stick to tabs"): a preference
(issue 24, kind 10). "We use …" stays a fact about the team or project."""
EN_PREFERENCE_NEG = en(r"\b(?:hate|dislike|detest|loathe|despise|abhor|can't\sstand"
                       r"|cannot\sstand|can\snot\sstand|not\sa)\b"
                       r"|\b(?:don't|do\snot|never|no\slonger)\s(?:really\s)?"
                       r"(?:like|love|enjoy|eat|drink|care\sabout)\b")
EN_SOFTENER = Cue(en(r"\b(?:if possible|ideally|preferably|if you can|where possible|when possible"
                     r"|if it's possible|if convenient)\b"),
                  words="possible ideally preferably can convenient")
"""An instruction softened like this is a preference, not a rule."""

# Constraints (issue 3: always / never / must / don't / do not / make sure). Prohibitions
# first; "don't worry", "don't forget to" and friends are not prohibitions, nor is a bare
# "don't bother" ("Don't bother, I'll do it"); "don't bother writing tests …" is one.
EN_NEG_IMPERATIVE = Lead(en(
    r"^(?:(?:please|pls|and|but|so|also|just|then|kindly)\s+)*(?:never(?:\sever)?|don't|dont"
    r"|do\snot|avoid|stop|quit|no\slonger|under\sno\scircumstances|whatever\syou\sdo,?\sdon't"
    r"|(?:there's\s|there\sis\s)?no\s(?:need|reason)\s(?:for|to)\b(?!\s+(?:apologi[sz]e|apology"
    r"|apologies|thank|thanks|rush|hurry|panic|stress|feel|be\s+(?:so\s+|too\s+)?(?:sorry"
    r"|afraid|scared|worried|nervous|ashamed|embarrassed|sad|upset|hard\s+on))\b))\b"
    r"(?!\s+(?:worry|know|think|care|mind|hesitate|bother(?!\s+(?:[a-z]{2,}ing|with)\b)|remember"
    r"|understand|see|get\sme|forget))"
), "please pls kindly just also and but so then now never don't dont do avoid stop quit no "
   "under whatever there's there")
EN_POS_IMPERATIVE = Lead(en(
    r"^(?:(?:please|pls|and|but|so|also|just|then|kindly)\s+)*(?:always|make\ssure|ensure"
    r"|be\ssure\sto|remember\sto|don't\sforget\sto|do\snot\sforget\sto|never\sforget\sto"
    r"|" + EN_FROM_NOW + r"|in\s(?:the\s)?future|by\sdefault|only\sever|at\sall\stimes)\b"
), "please pls kindly just also and but so then now always make ensure be remember don't do "
   "never in by only at " + EN_FROM_NOW_FIRST)
EN_MODAL_RULE = Cue(en(
    r"\b(?:must(?:n't|\snot|\snever|\salways)?|has\sto|have\sto|shall(?:\snot)?|should\s(?:always"
    r"|never|not)|shouldn't|is\s(?:not\s)?(?:allowed|permitted|required)\sto|are\s(?:not\s)?"
    r"(?:allowed|permitted|required)\sto|may\snot|mustn't|cannot\sexceed|can't\sexceed"
    r"|(?:is|are)\s(?:not\sallowed|forbidden|prohibited|banned|mandatory|required|a\smust)"
    r"|needs\sto\sbe|need\sto\sbe)\b"
), words="must mustn't has have shall should shouldn't allowed permitted required may cannot can't "
         "forbidden prohibited banned mandatory needs need")
"""Modal rules; the caller ignores them when the subject is "I" ("I must leave at 5")."""
EN_NO_NOUN = Lead(en(r"^(?:(?:and|so|also|but|please)\s+)?no\s(?!problem|worries|idea|thanks|way"
                r"|need|reason|rush|pressure|one|doubt|matter|longer|luck|clue|comment|offense|big\sdeal)"
                r"(?=[a-z])"), "and so also but please no")
"""'No emojis in commit messages' — a prohibition with the verb left out."""
EN_NO_BOUND = re.compile(r"^(?:(?:and|so|also|but|please)\s+)?no\s+(?:more|fewer|less|later"
                         r"|earlier|longer|shorter|bigger|larger|higher|lower|greater|smaller)"
                         r"\s+than\b", re.I)
"""'No more than 3 retries', 'no later than 5 pm': a bound the rule sets, not a
prohibition (:data:`EN_NO_NOUN` matches it as one)."""
_PAST = (r"\s(?:(?:just|recently|finally|first|once|briefly|ever|really|actually)\s)?"
         r"(?!(?:need|speed|feed|seed|embed|exceed|proceed|succeed|shed|wed)\b)"
         r"(?:[a-z]{2,}ed|had|did|went|came|got|bought|sold|paid|spent|made|took|ran|sent"
         r"|found|lost|won|ate|drank|slept|saw|heard|met|left|kept|brought|caught|gave|wrote"
         r"|built|said|told|began|knew|spoke|thought|felt|chose|became|stood|understood"
         r"|forgot|grew|drove|flew|rode|broke|fell|wore|sat|meant|held|led|taught|fought"
         r"|sought|threw|drew|froze|hid|swam|sang|rang|woke|stole|tore|shook|forgave"
         r"|was|were)\b")
"""A past verb, perhaps after an adverb ("just moved", "only ever shipped"): "we only
…" or "we never …" before it tells what happened."""
EN_NARRATED_INSTEAD = re.compile(
    r"(?:^|[,;])\W*(?:(?:and|but|so|then)\s+)?(?:i|we)"
    r"(?:\s+(?:just|then|also|finally|ended\s+up))?"
    r"(?!\s(?:just\s)?(?:switched|moved|changed|chose|picked|decided|opted|settled|migrated"
    r"|replaced|adopted|swapped|selected|used|went\s+with|went\s+for|stuck|standardi[sz]ed"
    r"|ported|converted|was|were|had|did)\b)" + _PAST + r"[^,;]*\binstead\s*[.!]*$", re.I)
"""The speaker telling what they did in place of something, in the simple past, in the
last clause (``search``): "It poured, so I skipped my run and watched a documentary
instead", "we took a taxi instead". One thing that happened, not the revision of a
statement that a closing "instead" makes of a choice or a value ("Let's use MySQL
instead", "I'll take the train instead", "We switched to Vim instead", "We went with
Redis instead")."""
_FAILING = (r"(?:remember|forget|forgets|listen|understand|learn|notice|ignore|miss|mess"
            r"|screw|hallucinate|confuse|mix|lose|get\s(?:it|this|that|anything|things|my|me)"
            r"|pay\sattention|read\s(?:what|my)|do\s(?:this|that|it|what)"
            r"|make\s(?:the\ssame|mistakes))")
"""What the one spoken to does wrong or fails to keep: "you never remember anything",
"you always forget my name", "you always do this" is a complaint, no rule."""
EN_TEAM_NORM = Lead(en(
    r"^(?!you\s(?:(?:always|never|keep)\s)" + _FAILING + r"\b)"
    r"(?:we|you)\s(?:(?:always|don't|do\snot"
    r"|only(?!\s(?:have|has|need|needs|want|wants|know|knows|get|gets)\b)(?!" + _PAST + r")"
    r"|never(?!" + _PAST + r"))\s"
    r"|(?:(?:must|should|shall)\s(?:(?:also|definitely|really|still)\s)?(?:always|never|not)"
    r"|mustn't|shouldn't)\s(?!(?:have|has|had|be|been|being|need|forget)\b))"), "we you")
"""A team norm: "we always …", "you never …", "we must always …", "we shouldn't …".
The modal forms need always/never/not ("we must ship by Friday" is not one) and a
rule after them: "we shouldn't have deployed" is regret, "we must not have enough
disk" a guess, "we should not be seeing 500s" an expectation, "we mustn't forget
that X" a fact about X. "Only" or "never" before a past verb reports what happened
("we only bought 3 chairs", "we never agreed to a discount"), nor before a verb of having, needing or knowing ("we only have two
days left": how much is left), not a norm."""
EN_NEGATION = Cue(en(r"\b(?:never|don't|dont|do\snot|not|no|avoid|mustn't|shouldn't|can't|cannot"
                     r"|forbidden|prohibited|banned|stop|quit)\b"),
                  words="never don't dont not no avoid mustn't shouldn't can't cannot forbidden "
                        "prohibited banned stop quit")

# Base-form verbs that begin an instruction. STANDING ones read as a lasting rule on
# their own ("Keep answers short"); the others ("Fix the login bug") are one-off
# requests unless a quantity, a condition or a scope word makes them lasting.
EN_STANDING_VERBS = phrases(
    "keep|stay|answer|reply|respond|use|format|default|stick|follow|limit|cap|retry|treat"
    "|address|call|refer|indent|wrap|cite|sign|mention|include|exclude|skip|ignore|prefer"
    "|write|name|set|store|log|pin|put|list|speak|talk|book|reserve|choose|pick"
    "|assume|consider|report|sort|round|cache|give|add|leave|be|prefix|suffix|prepend|append"
    "|tag|label|highlight|bold|capitalize|capitalise|spell|end|begin")
EN_ONE_OFF_VERBS = phrases(
    "fix|build|create|explain|summarise|summarize|look|find|search|help|show|tell|run|check"
    "|test|deploy|push|commit|merge|remove|delete|drop|rename|move|try|do|make|update"
    "|upgrade|install|change|replace|convert|translate|open|close|read|review|draft|compare"
    "|generate|refactor|debug|investigate|print|go|start|stop|restart|rewrite|implement"
    "|clean|clone|download|upload|send|get|fetch|plan|schedule|bump|rotate|migrate|suggest"
    "|recommend")
EN_TASK_VERBS = phrases(
    "describe|provide|calculate|analyze|analyse|evaluate|classify|rephrase"
    "|paraphrase|simplify|shorten|elaborate|proofread|visualize|visualise|tabulate|enumerate"
    "|identify|annotate|reformat|restructure|condense|double-check|extract|verify|validate")
"""Verbs of work on an answer that open an order ("Describe the architecture in two
paragraphs", "Provide three examples") and are seldom a noun at a sentence's start."""
EN_OBJECT_VERBS = phrases(
    "return|output|rank|split|group|count|parse|paste|estimate|polish|render|share|insert"
    "|filter|transform|export|save|apply|draw|plot|sketch|trim|expand|edit|outline|break"
    "|compute|produce")
"""Verbs that are nouns as often ("Return policy changed", "Share price fell", "Compute
costs doubled", "Produce prices went up"): an order only before its object ("Return
the result as a CSV", "Output the list sorted by score", "Return 404 when …":
:data:`OBJECT_START`)."""
OBJECT_START = (r"(?=\s+(?:the|(?-i:an?)|it|them|this|that|these|those|me|us|my|our|your|all"
                r"|each|every|both|only|just|one|two|three|four|five|six|seven|eight|nine|ten"
                r"|\d)\b|\s+\ue000)")
"""An object after an order's verb; "a" in lower case only: "Group A owns the frontend"
names a group."""
EN_IMPERATIVE = Lead(en(
    r"^(?:(?:please|pls|kindly|just|also|and|then|now|so)\s+)*(?P<verb>"
    + alt("|".join(EN_STANDING_VERBS + EN_ONE_OFF_VERBS + EN_TASK_VERBS)) + r"|(?:"
    + alt("|".join(EN_OBJECT_VERBS)) + r")" + OBJECT_START
    + r")\b(?!\s+(?:is|are|was|were)\b)"
), "please pls kindly just also and then now so "
   + " ".join(EN_STANDING_VERBS + EN_ONE_OFF_VERBS + EN_TASK_VERBS + EN_OBJECT_VERBS))
EN_VERY_STANDING = set(phrases("keep|stay|answer|reply|respond|stick|default|follow|treat"
                                "|address|call|refer|indent|cite|limit|cap|speak|talk|format"))
EN_STANDING_SCOPE = Cue(en(r"\b(?:every|each|all|any|whenever|always|never|from now on"
                           r"|going forward|by default|in future|in the future|for all|per|anything"
                           r"|everything)\b"),
                        words="every each all any whenever always never from going default future "
                              "per anything everything")

_KEEP_CHOICE = (
    r"keep(?!\s+(?:on\s+)?(?!(?:using|running|hosting|deploying|shipping|targeting|paying"
    r"|renting|storing|serving|(?:going|sticking|staying|working|building)\s+(?:on|with))\b)"
    r"[a-z]+(?:ing|in')(?:\W|$)"
    r"|\s+(?:it\s+up|(?:ya|you|u|everyone|us|them)\s+(?:posted|updated|informed|in\s+the\s+loop)"
    r"|each\s+other)\b)")
""""keep" as a choice kept ("Let's keep Postgres", "we'll keep using Redis", "we'll keep
the limit at 3"), not going on with an effort ("Let's keep going", "I'll keep pushing",
"we'll keep it up", "I'll keep ya posted"): only the first decides anything."""
# Decisions (issue 3: "we'll use Postgres", "let's go with X", "we decided").
_JUDGED = (r"hard|tough|easy|difficult|painful|tricky|simple|obvious|agonizing|agonising"
           r"|stressful|emotional|brutal|close|controversial|unpopular|popular|unanimous"
           r"|rushed|bold|risky|sad|heartbreaking|complicated|clear|weird|strange|wrong|right"
           r"|good|bad|great|terrible|smart|dumb|unfair|fair|surprising|expected|a\srelief"
           r"|a\s(?:tough|hard|difficult|good|bad|big)\sone")
_JUDGED = (r"(?:(?:not|really|so|very|quite|pretty|extremely|incredibly|super|a\sbit|a\slittle"
           r"|kind\sof|kinda|actually|honestly|never|always)\s)*(?:" + _JUDGED
           + r")\b(?!\s*[:\u2014-])"
           r"(?![^,;:.!?\n]*[,;]\s*(?:(?:so|and|then)\s+)?(?:let's|let\s+us|(?:we|i)(?:'ll|\s+will"
           r"|(?:'re|\s+are|'m|\s+am)\s+going\s+with|\s+(?:use|go|pick|picked|chose|choose"
           r"|went|stick|stuck|stay|keep|switch|switched|move|moved|migrate|decided)\b)))")
"""How a decision or plan felt or fared ("The decision was hard.", "Our plan was
risky."): a judgement of it, no choice (:data:`EN_DECISION`), unless a colon brings
the choice after it ("The plan is simple: we migrate on Friday.") or the clause runs
on past a comma to the speaker's choice ("The decision was tough, we'll go with
Postgres.")."""
EN_DECISION_JUDGED = re.compile(
    r"^(?:the|our|my|this|that)\s(?:final\s)?(?:plan|decision|verdict|choice)\s(?:is|was)\s"
    + _JUDGED, re.I)
"""A decision judged and nothing more ("The decision was hard."): no item."""
EN_DECISION = Lead(en(
    r"^(?:(?:ok|okay|alright|so|then|right|fine|good|great|cool|yes|yeah|ok\sthen|sounds\sgood"
    r"|agreed|deal|perfect)[,.!\s]+)*"
    r"(?:(?:the\s|our\s|team\s)?(?:final\s)?decision(?:\smade)?(?:\s(?:from|at|in)\s[\w\s']{1,30}?)?"
    r"\s*[:\u2014-]\s*)?(?:"
    r"(?:let's|let\sus|lets)\s(?:not\s)?(?:"
    + alt("go with|use|stick with|stick to|switch to|pick|choose|adopt|move to|migrate to"
          "|schedule|meet|book|take|drop|postpone|target|ship|call it|settle on|plan|name|set"
          "|fly|stay|rent|run with|go for|start with|skip|defer|freeze|cut|release|deploy|launch"
          "|host|put|make it|aim for|do it|standardize on|standardise on|reserve|order|split")
    + "|" + _KEEP_CHOICE + r")\b"
    r"|(?:let's|let\sus|lets)\s(?:do|try|take)\b(?=\s(?:the\s)?(?:[\w-]+\s){0,3}?(?:approach"
    r"|option|route|variant|design|strategy)\b)"
    r"|(?:we|i)(?:'ll|\swill|\sshall|'re\sgoing\sto|\sare\sgoing\sto|'m\sgoing\sto"
    r"|\sam\sgoing\sto|\sshould|\splan\sto|\sintend\sto|'re\splanning\sto|\sare\splanning\sto"
    r"|'m\splanning\sto|\sam\splanning\sto)\s(?:"
    + alt("go with|use|stick with|switch to|pick|choose|adopt|move to|migrate to|drop"
          "|postpone|target|ship|settle on|go for|skip|defer|host|deploy|launch|release"
          "|fly|stay at|stay in|book|take|run|standardize on|standardise on|meet|aim for")
    + "|" + _KEEP_CHOICE + r")\b"
    r"|(?:we|i)(?:'ve|\shave)?\s(?:finally\s|just\s)?(?:decided|chose|chosen|picked|settled\son"
    r"|agreed|opted|committed\sto|went\swith|gone\swith|selected)\b"
    r"|(?:we're|we\sare|i'm|i\sam)\s(?:now\s)?(?:going\swith|switching\sto|moving\sto"
    r"|sticking\swith|dropping|migrating\sto|standardi[sz]ing\son)\b"
    r"|(?:the\s|our\s|my\s)?(?:plan|decision|verdict|final\sdecision|final\sanswer)\s(?:is|was)\b"
    r"(?!\s" + _JUDGED + r")"
    r"|(?:we|i)\skeep\b(?!\s(?:on\s)?[a-z]+ing\b)|go\swith\b"
    r"|(?:we're|we\sare)\s(?:still\s)?staying\s(?:on|with)\b(?=\s(?-i:[A-Z]|v?\d|the\s[A-Z]))"
    r"|(?:i'm|i\sam)\s(?:still\s)?staying\son\b(?=\s(?-i:[A-Z]|v?\d)))"
), "ok okay alright so then right fine good great cool yes yeah let's let lets we i we'll i'll "
   "we're i'm we've i've the our my plan decision verdict final go sounds agreed deal perfect "
   "team")
"""Choices stated at the start of a clause (used with ``match``). A plan ("we plan to
migrate to Kafka") is a decision about the future, not a change of the current state
(``replacement``): it supersedes nothing."""
EN_DECISION_ANY = Cue(en(r"\bdecided\s(?:to|on|that|against|(?=(?:we|we're|we'll|we've|we'd)\b))"),
                      words="decided")
"""A choice someone made: "decided to/on/that …", and "decided" right before the
clause it binds the speaker's team to ("Dana decided we're going with Redis")."""
# Assistant proposals (DESIGN §5: assistant text is stored only as a proposal).
EN_PROPOSAL = Cue(en(
    r"\b(?:" + alt("i suggest|i'd suggest|i would suggest|i recommend|i'd recommend"
                   "|i would recommend|i propose|i'd propose|i advise|i'd advise|my suggestion"
                   "|my recommendation|my proposal|we could|you could|we might|you might"
                   "|you might want to|you may want to|it might be better|it may be better"
                   "|it would be better|it might be worth|it may be worth|it would be worth"
                   "|it's worth|it is worth|it might make sense|it would make sense|consider"
                   "|how about|what about|why not|one option is|another option is"
                   "|one approach is|another approach is|an alternative is|a better approach"
                   "|a better option|a good option|the best option|we should|you should"
                   "|shall i|should i|would you like me to|do you want me to|want me to"
                   "|i can also|i could|let's|let us|if you want i can|if you'd like i can"
                   "|a cleaner way|a simpler way|the simplest fix|the safest option"
                   "|i'd go with|i would go with|i'd use|i would use|try using|try adding")
    + r")\b"
), words="suggest recommend propose advise suggestion recommendation proposal could might may "
         "better worth sense consider how what why option approach alternative should shall want "
         "also let's let if cleaner simpler simplest safest i'd would try it's")
