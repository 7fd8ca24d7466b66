"""Task state said without a label: goals, work set to do, work done, work blocked.

DESIGN §5 reads task state from labelled lines (``Goal:``, ``TODO:``, ``Blocked:``,
:data:`memory_core.extraction.lexicon.TASK_LABEL`). In agent sessions people seldom
write labels: they say "Next, wire the URL", "Still need to handle the empty month",
"Done with step 1", "Blocked on IAM", "Let's pause the migration", "The goal is …",
下一步是…, 卡在…上了, 次は…をお願いします, …は完了しました. This module finds such a
clause and names its ``task_state`` label, so the pipeline keeps it as a ``task``
item of the conversation's thread (the writer merges it into ``task_state``; a
``progress`` line that says the work is done closes the open TODO or blocker it
names: :func:`memory_core.items.writer.merge_task_line`).

What is a task and what is not (docs/evaluation/extraction_issue24.md, "Task state
without labels"): a piece of work the user sets for later in the conversation, or a
status of such work. An order the next answer carries out ("Fix the typo on line 12",
"Summarise the log above", 把这段翻译成英文, この関数を説明して) is a request of the
moment: it is answered now, so it opens no TODO that nobody would close. What makes
an order a TODO is a word that places it in the work's sequence or marks it as owed
(next, then, after that, still need to, we need to + a verb of work, let's + a verb
of work, resume; 下一步, 接下来, 还需要, 还得; 次は, あとは, 残り); a value locked
("Let's pin the Python version at 3.12": :data:`.scope_markers.LOCK`) is a decision,
no TODO. A goal needs a goal word scoped to the work at hand ("The goal is …",
"Goal for this sprint: …", 这次的目标是, 今回のゴールは); "The goal of the game is …" is a fact. Done needs a
word of completion (done, finished, merged, shipped, fixed; 完成, 做完, 好了; 完了,
終わりました), not a reading ("tests are green" stays a fact); "I'm done for today"
is no progress. Blocked needs a word of being held (blocked, stuck on, waiting on,
can't … until/yet, on hold, pause; 卡在, 阻塞, 暂停; ブロック, 待ち, 保留); "stuck in
traffic" is none. Questions are never task state.

Pure and linear: each clause is tried against a few anchored patterns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory_core.extraction.cue import alt, en, phrases
from memory_core.extraction.scope_markers import LOCK

GOAL, TODO, PROGRESS, BLOCKED = "goal", "todo", "progress", "blocked"

_WORK_VERBS = phrases(
    "add|wire|write|fix|update|remove|delete|rename|refactor|migrate|move|port|bump|upgrade"
    "|downgrade|rotate|set up|setup|configure|deploy|ship|release|merge|implement|build"
    "|document|test|run|rerun|re-run|backfill|import|export|handle|clean up|drop|switch"
    "|replace|finish|tag|publish|create|install|investigate|look into|find out|figure out"
    "|check|review|prepare|draft|integrate|convert|split|extract|rewrite|cover|do|get"
    "|put|hook up|connect|add in|roll out|roll back|revert|profile|benchmark|measure"
    "|optimize|optimise|speed up|fill in|translate|debug|audit|archive|sign|send|file"
    "|open|close|resolve|split out|pin|unpin|generate|seed|index|reindex|load|verify")
_WORK = r"(?:" + alt("|".join(_WORK_VERBS)) + r")\b"
"""A verb of work on the project: what a TODO sets ("Next, wire the URL")."""

_OPENER = (r"(?:(?:ok(?:ay)?|good|great|cool|nice|alright|right|so|and|also|yes|yep|perfect)"
           r"[,!.]?\s+)*")
"""Acknowledgements before a status ("Good, step 1 is done", "OK so next, …")."""

_SUBJECT_MODAL = (r"(?:(?:we|i|you)(?:'ll|\s+will|\s+need\s+to|\s+have\s+to|\s+should|\s+must"
                  r"|'d\s+like\s+to|\s+can|\s+could)\s+|please\s+|let's\s+|let\s+us\s+"
                  r"|(?:we\s+|i\s+)?still\s+(?:need|have)\s+to\s+)?")

_EN_TODO = (
    # "Next, wire the URL", "After that we still have to bump …", "Then add the tests"
    en(r"^" + _OPENER + r"(?:next(?:\s+up)?|then|after\s+that|afterwards|after\s+this"
       r"|once\s+(?:that|this|it)(?:'s|\s+is)\s+(?:done|merged|in)|later(?:\s+on)?"
       r"|finally|lastly)\s*[,:]?\s+" + _SUBJECT_MODAL + r"(?P<verb>" + _WORK + r")"),
    # "Still need to handle …", "We still have to …", "We need to add rate limiting"
    en(r"^" + _OPENER + r"(?:(?:we|i)\s+)?(?:still\s+|also\s+)?(?:need|have|got)\s+to\s+"
       r"(?:also\s+|still\s+)?(?P<verb>" + _WORK + r")"),
    en(r"^" + _OPENER + r"(?:still|also)\s+(?:need|have|got)\s+to\s+(?P<verb>" + _WORK + r")"),
    # "The next thing I need to write is …", "Next step is to …"
    en(r"^" + _OPENER + r"(?:the\s+)?next\s+(?:thing|step|task|job)s?"
       r"(?:\s+(?:i|we)\s+(?:need|have|want)\s+to\s+\w+)?\s+(?:is|are|will\s+be)\b"),
    # "What's left is …", "The only thing left is …"
    en(r"^" + _OPENER + r"(?:what's|what\s+is|the\s+only\s+thing|all\s+that's)\s+left"
       r"(?:\s+to\s+do)?\s+is\b"),
    # "Let's find out why …" (a verb of choice is a decision: "Let's go with …")
    en(r"^" + _OPENER + r"(?:let's|let\s+us)\s+(?!use\b|go\b|keep\b|stick\b|stay\b|switch\b"
       r"|move\s+to\b|drop\b|pick\b|choose\b|do\b|not\b)(?P<verb>" + _WORK
       + r")"),
    # "Resume the migration at step 3": paused work set going again
    en(r"^" + _OPENER + r"(?:please\s+)?(?:resume|unpause|pick\s+up|continue\s+(?:with\s+)?)"
       r"\s+(?:the|our|my|with|work|on)\b"),
)
_EN_TODO_END = en(r"\b(?:is|are)\s+(?:(?:up\s+)?next"
                  r"|the\s+(?:last|next|final)\s+(?:step|thing|task)s?)\s*[.!]?$")
"""A clause that names the next piece of work: "The api.example.com records are next"."""

_EN_CONTINUE = en(r"^(?:and\s+)?(?:then|after\s+that|and)\s+" + _SUBJECT_MODAL
                  + r"(?P<verb>" + _WORK + r")")
"""A second order joined to a TODO ("…, then run the tests"): a TODO of its own."""

_EN_DONE_WORDS = (r"done|finished|complete|completed|merged|shipped|deployed|landed|in\s+place"
                  r"|fixed|resolved|sorted|updated|removed|deleted|gone"
                  r"|migrated|installed|configured|set\s+up|reverted|written"
                  r"|implemented|wired(?:\s+up)?|ported|upgraded|rolled\s+back|backfilled")
_EN_PROGRESS = (
    # "Done with step 1", "I'm done with the URL part"
    en(r"^" + _OPENER + r"(?:(?:i'm|i\s+am|we're|we\s+are)\s+)?(?:all\s+)?(?:done|finished)"
       r"\s+with\s+(?!(?:it|this|that|you|him|her|them)\b)"),
    # "Finished the backfill", "Rolled back the deploy", "Imported the zone" ("We rolled
    # back to v2.3" names a value: an update of the version, not a piece of work done)
    en(r"^" + _OPENER + r"(?:(?:i|we)\s+)?(?:just\s+|already\s+|finally\s+)?(?:finished|completed"
       r"|merged|shipped|deployed|fixed|resolved|imported|rolled\s+back(?!\s+to\b)"
       r"|landed|wired|backfilled)\s+(?!(?:yet|for|up|it|this|that|a|an|some|one"
       r"|another)\b)(?=\S)"),
    # "step 3 done", "Phase 2 complete"
    en(r"^" + _OPENER + r"(?:step|phase|part|stage|task|milestone)\s+\w{1,6}\s+(?:is\s+)?"
       r"(?:now\s+)?(?:done|finished|complete|completed)\b"),
)
_EN_PROGRESS_END = en(
    r"\b(?:is|are|'s|was|were|has\s+been|have\s+been)\s+(?:now\s+|all\s+|finally\s+|already\s+"
    r"|also\s+)*(?:" + _EN_DONE_WORDS + r")(?:\s+(?:now|too|as\s+well|already|again"
    r"|with\s+the\s+\w+(?:\s+\w+)?))?\s*[.!]?$")
"""A piece of work said to be done at its clause's end: "IAM is fixed", "Fake clock is
merged", "The URL and the button are done"."""
_EN_NOT = en(r"\b(?:not|n't|never|no|yet|before|after|when|whenever|if|once|until|unless"
             r"|always|must|should|since|because|now\s+that)\b"
             r"|\bfor\s+(?:today|the\s+day|now|tonight)\b"
             r"|\bfrom\s+\S+(?:\s+\S+){0,3}\s+to\b")
"""No progress: a denial; a done word in a condition, a reason or a rule ("Always run
the linter before you tell me it is done", "The limit is 50 now that the outage is
resolved"); "done for today" (an away note); a move from one
value to another ("We migrated the site from Heroku to Fly.io": an update,
:mod:`.replacement`)."""
_EN_PERSONAL = en(r"^" + _OPENER + r"(?:i'm|i\s+am|we're|we\s+are|i|we)\s+(?:all\s+)?"
                  r"(?:done|finished)\s*[.!]?$")

_EN_BLOCKED = (
    en(r"^" + _OPENER + r"(?:[\w.\-]+(?:\s+[\w.\-]+){0,5}\s+(?:is|are)\s+|(?:i'm|i\s+am|we're"
       r"|we\s+are|it's|it\s+is|this\s+is|that's|i|we)\s+)?(?:still\s+|currently\s+|now\s+)?"
       r"(?:blocked|stuck)\s+(?:on|by|behind|until|waiting)\b"),
    en(r"^" + _OPENER + r"blocked\b"),
    en(r"\b(?:waiting|waits|wait)\s+on\b|\bwaits\s+for\b"
       r"|\b(?:waiting|wait)\s+for\s+\S+(?:\s+\S+){0,4}\s+to\s+(?:approve|sign|review|give"
       r"|grant|open|merge|fix|finish|send|confirm|reply|respond)\b"),
    en(r"\b(?:can't|cannot|can\s+not|couldn't)\s+\w+(?:\s+\S+){0,10}?\s+(?:until|yet)\b"),
    en(r"^" + _OPENER + r"(?:let's\s+|we'll\s+|we\s+will\s+|we\s+should\s+|please\s+)?(?:pause"
       r"|park|put\s+\S+(?:\s+\S+){0,4}\s+on\s+hold|hold\s+off\s+on)\b"),
    en(r"\b(?:is|are)\s+(?:now\s+)?(?:on\s+hold|paused|parked)\b"),
)

_ZH_GOAL = re.compile(r"^(?:这次|本次|这周|本周|今天|这个(?:任务|项目|迭代|冲刺)|我们|我)?的?"
                      r"(?:主要)?(?:目标|目的)(?:是|就是|：|:)")
_ZH_TODO = re.compile(r"^(?:(?:好的?[，,]?|那|然后)?(?:下一步|接下来|之后|随后|再下来|还需要|还要|还得"
                      r"|还差|剩下的?(?:就是|是)?|还有(?=[\u4e00-\u9fff]{0,4}(?:要|需要|得)))"
                      r"(?:是|就是|要|就|我们|再)*把?)"
                      r"|^(?:我们|我)?(?:还)?得(?=[把换改加写跑补更升迁删修接])|^(?:那就?)?(?:继续|恢复)")
"""Work to do in Chinese: 下一步是…, 接下来…, 还需要…, 还得…, 剩下的就是…, and paused
work set going again (继续…, 恢复…)."""
_ZH_CONTINUE = re.compile(r"^(?:然后|再|之后|接着)")
_ZH_PROGRESS = re.compile(r"已完成|已经完成|完成了|做完了|搞定了|弄好了|写完了|跑完了|改完了"
                          r"|(?:换|改|写|接|修|加|升级|迁移|配|装|部署|合并)好了"
                          r"|已经(?:把|都|全部)?(?:合并|上线|部署|接|换|改|写|修|加|升级|迁移|导出|导入|删|提交"
                          r"|配置|装|跑)")
"""Work done in Chinese: 已完成, 做完了, 换好了, 已经 + a verb of work (not 已经30岁了;
nor 发布, as "版本 3.2 已经发布了" states the product's version, a fact)."""
_ZH_NOT = re.compile(r"还没|還沒|没有|沒有|未|吗|嗎|？|\?"
                     r"|(?:升级|迁移|换|改|切换|搬|调整|降级)(?:到|成|为|至)")
"""No progress in Chinese: not yet, a question, or a move to a value ("数据库已经升级到
MySQL 8.0 了": an update of the fact, :mod:`.replacement`)."""
_ZH_BLOCKED = re.compile(r"卡在|卡住|被.{1,20}(?:卡住|阻塞|挡住|拦住)|阻塞|暂停|搁置|先停|等.{1,20}才能")

_JA_GOAL = re.compile(r"^(?:今回の|今日の|この(?:タスク|作業|スプリント)の|今週の)?(?:ゴール|目標|目的)"
                      r"(?:は|：|:)")
_JA_TODO = re.compile(r"^(?:では|じゃあ)?(?:次は|次に|その後|それから|あとは|後は|残りは|最後に)|再開し"
                      r"|(?:が|は)残っています|が残っている|が残り(?:です|ます)")
_JA_PROGRESS = re.compile(r"(?:完了|終了|完成)(?:しました|です|した|済み)|終わりました|終わった"
                          r"|済みです|済ませました|(?<!ブロック)できました")
_JA_NOT = re.compile(r"まだ|ていません|ません。?$|か[。？?]?$|？|\?")
_JA_BLOCKED = re.compile(r"ブロックされ|ブロック中|止まっています|止まってる|待ちです|待ちの状態"
                         r"|待ちになって|保留|進められません|進められない")

_LEAD_ONLY = en(r"(?:" + _OPENER + r"(?:next(?:\s+up)?|then|after\s+that|afterwards|finally"
                r"|lastly|later|ok(?:ay)?|good|great|cool|alright|so|yes|yep|perfect)"
                r"|goals?\s+(?:for|of)\s+(?:this|the|today|today's)\s+\w+(?:\s+\w+)?"
                r"|下一步|接下来|然后|之后|另外|好的?|那|次は|次に|その後|それから)\s*$")
"""A clause that is only a lead or an acknowledgement ("Next,", "OK,", 然后，)."""
_SPLIT = {"en": re.compile(r"(?<!\s)(?:\s*[,;:]\s+|\s+[\u2013\u2014]\s+)"),
          "zh": re.compile(r"(?<!\s)\s*[，；：,;]\s*"),
          "ja": re.compile(r"(?<!\s)\s*[；：]\s*")}
"""A joint starts at the first blank before it (never inside a run of blanks: linear)."""


@dataclass(frozen=True, slots=True)
class Status:
    """One clause of task state: ``label`` (``goal``/``todo``/``progress``/``blocked``),
    its span ``[start, end)`` in the scanned text and ``[topic_start, topic_end)``, the
    part that names the work (the clause without its cue: "the staging DB" of
    "Blocked on the staging DB", "IAM" of "IAM is fixed")."""

    label: str
    start: int
    end: int
    topic_start: int
    topic_end: int


def clauses(scan: str, start: int, end: int, lang: str) -> list[tuple[int, int]]:
    """The clauses of ``scan[start:end]``, split at commas, semicolons, colons and
    spaced dashes (Chinese: ，；：; Japanese: ；： only, as 、 joins a topic to its
    clause); each span trimmed, empty ones left out."""
    out: list[tuple[int, int]] = []
    at = start
    for m in _SPLIT.get(lang, _SPLIT["en"]).finditer(scan, start, end):
        if m.start() > at:
            out.append((at, m.start()))
        at = m.end()
    if end > at:
        out.append((at, end))
    spans = [(a, b) for a, b in out if scan[a:b].strip()]
    joined: list[tuple[int, int]] = []
    for a, b in spans:  # "Next, wire the URL": a lead alone belongs to what follows
        if joined and _LEAD_ONLY.match(scan, joined[-1][0], joined[-1][1]):
            joined[-1] = (joined[-1][0], b)
        else:
            joined.append((a, b))
    return joined


Found = tuple[str, int, int]
"""A label and where its cue starts and ends in the clause."""


def label_of(clause: str, lang: str, after: str | None = None) -> Found | None:
    """The task-state label one clause states and its cue's span, or ``None`` (module
    doc). ``after``: the label of the clause before it in the same sentence, for a TODO
    continued by "then …" / 然后…."""
    text = clause.rstrip().rstrip(".!;。！；")
    if not text.strip():
        return None
    if lang == "zh":
        return _zh(text, after)
    if lang == "ja":
        return _ja(text, after)
    return _en(text, after)


def _hit(label: str, m: re.Match[str] | None) -> Found | None:
    return (label, m.start(), m.end()) if m is not None else None


def _first(label: str, patterns: tuple[re.Pattern[str], ...], text: str,
           anchored: bool = True) -> Found | None:
    for p in patterns:
        m = p.match(text) if anchored else p.search(text)
        if m is not None:  # a TODO's work starts at its verb ("Next, wire the URL")
            verb = m.start("verb") if "verb" in p.groupindex else -1
            return (label, m.start(), verb if verb >= 0 else m.end())
    return None


_EN_GOAL = en(
    r"^" + _OPENER + r"(?:(?:the|our|my)\s+(?:main\s+|overall\s+|real\s+|only\s+)?(?:goal|aim"
    r"|objective)(?:\s+(?:for|of)\s+(?:this|today's|the|our)\s+(?:session|sprint|week|task"
    r"|ticket|pr|work|change|migration|refactor|conversation|chat|day|month|quarter|branch"
    r"|iteration)|\s+(?:right\s+now|today|here|now|this\s+(?:session|sprint|week|ticket"
    r"|release|iteration|branch)))?\s+(?:is|will\s+be)\s+"
    r"|goals?\s+(?:for|of)\s+(?:this|the|today|today's)\s+[^:]{1,30}:\s*(?=\S)"
    r"|what\s+(?:i'm|i\s+am|we're|we\s+are)\s+trying\s+to\s+(?:do|achieve|get\s+done)"
    r"(?:\s+\w+){0,2}\s+is\b)")
"""A goal of the work at hand: "The goal is to …", "Our goal this week is …", "Goal for
this sprint: …", "What I'm trying to do today is …"; not "The goal of the game is …"
nor "The goal of the project was …" (a fact, told of something else or past)."""


def _en(text: str, after: str | None) -> Found | None:
    found = _first(BLOCKED, _EN_BLOCKED, text, anchored=False)
    if found is not None:
        return found
    if after == TODO and (m := _EN_CONTINUE.match(text)):
        return (TODO, 0, m.start("verb"))
    found = _first(TODO, _EN_TODO, text) or _hit(TODO, _EN_TODO_END.search(text)) \
        or _goal(_hit(GOAL, _EN_GOAL.match(text)), text)
    if found is not None and found[0] == TODO and LOCK.search(text) is not None:
        return None  # "Let's pin the Python version at 3.12": a value locked, a decision
    if found is not None:
        return found
    if _EN_PERSONAL.match(text) or _EN_NOT.search(text):
        return None  # "I'm done.": the speaker, not a piece of work; "not done yet"
    return _first(PROGRESS, _EN_PROGRESS, text) or _hit(PROGRESS,
                                                        _EN_PROGRESS_END.search(text))




_TARGET = re.compile(r"^\W*(?:(?:about|around|under|below|over|above|at\s+least|at\s+most"
                     r"|less\s+than|more\s+than)\s+|约|大约)?[\d.,]+\s*[^\s\d]{0,4}"
                     r"(?:\s+[a-z]+){0,4}\s*(?:です|だ|吧|了)?\W*$", re.I)
"""What follows a goal word when it is only a quantity, or a quantity of what is counted
("my goal is 50", "Our goal for this quarter is 40 signups a day", 目標は58キロです,
我们的目标是 85%): a target the user set, a fact, not the work's goal."""


def _goal(found: Found | None, text: str) -> Found | None:
    """``found`` unless the goal it names is only a quantity (:data:`_TARGET`)."""
    if found is not None and _TARGET.match(text[found[2]:]):
        return None
    return found


def _zh(text: str, after: str | None) -> Found | None:
    found = _goal(_hit(GOAL, _ZH_GOAL.match(text)), text) \
        or _hit(BLOCKED, _ZH_BLOCKED.search(text)) \
        or _hit(TODO, _ZH_TODO.match(text))
    if found is None and after == TODO:
        found = _hit(TODO, _ZH_CONTINUE.match(text))
    if found is None and not _ZH_NOT.search(text):
        found = _hit(PROGRESS, _ZH_PROGRESS.search(text))
    return found


def _ja(text: str, after: str | None) -> Found | None:
    found = _goal(_hit(GOAL, _JA_GOAL.match(text)), text) \
        or _hit(BLOCKED, _JA_BLOCKED.search(text)) \
        or _hit(TODO, _JA_TODO.search(text))
    if found is None and not _JA_NOT.search(text):
        found = _hit(PROGRESS, _JA_PROGRESS.search(text))
    return found


def find(scan: str, start: int, end: int, lang: str) -> list[Status]:
    """The task-state clauses of one sentence ``scan[start:end]``, in order; ``[]`` when
    it has none or is a question. Clauses of one sentence that state the same status
    one after another ("Blocked on the staging DB: I can't load a month until ops …",
    第一步已完成：依赖都升级好了) are one line; two pieces of work to do stay two
    ("下一步是…，然后…")."""
    if "?" in scan[start:end] or "\uff1f" in scan[start:end]:
        return []
    found: list[Status] = []
    before: str | None = None
    for a, b in clauses(scan, start, end, lang):
        while b > a and scan[b - 1] in ".!;。！；":
            b -= 1
        hit = label_of(scan[a:b], lang, before)
        before = hit[0] if hit is not None else None
        if hit is None:
            continue
        label, cue_a, cue_b = hit
        # the work is named after a leading cue ("Blocked on X"), else before the cue
        # ("IAM is fixed"), else by the clause ("we're waiting on X to approve")
        if cue_a == 0 and cue_b < b - a:
            topic = (a + cue_b, b)
        elif cue_a > 0:
            topic = (a, a + cue_a)
        else:
            topic = (a, b)
        if found and found[-1].label == label and label in (PROGRESS, BLOCKED) \
                and not _has_between(scan, found[-1].end, a):
            last = found[-1]
            found[-1] = Status(label, last.start, b, last.topic_start, last.topic_end)
            continue
        if label == TODO and lang == "en":
            found += _each_work(scan, a, b, topic)
            continue
        found.append(Status(label, a, b, *topic))
    return found


_EN_AND_WORK = en(r"\s+(?:and(?:\s+then)?|then|as\s+well\s+as)\s+(?=" + _WORK + r")")
"""Between two pieces of work in one TODO: "add a lint step … and write the runbook"."""


_EN_BACK_REF = en(r"(?:and|as\s+well\s+as)\s+\S+(?:\s+(?:up|out|in|off|on))?\s+"
                 r"(?:it|them|this|that|these|those)\W*$")
"""A plain "and" whose verb only takes the first piece's object back ("fix the bug and
deploy it"): the same piece of work, not a second TODO ("…, then deploy it" is one)."""


def _each_work(scan: str, a: int, b: int, topic: tuple[int, int]) -> list[Status]:
    """One TODO per piece of work the clause ``scan[a:b]`` joins by "and <verb>"
    (:data:`_EN_AND_WORK`), except a piece that only takes the last one's object back
    (:data:`_EN_BACK_REF`)."""
    out: list[Status] = []
    start, t_start = a, topic[0]
    joins = list(_EN_AND_WORK.finditer(scan, topic[0], b))
    for i, m in enumerate(joins):
        until = joins[i + 1].start() if i + 1 < len(joins) else b
        if _EN_BACK_REF.match(scan[m.start():until].strip()):
            continue
        out.append(Status(TODO, start, m.start(), t_start, m.start()))
        start = t_start = m.end()
    out.append(Status(TODO, start, b, t_start, topic[1]))
    return out


def _has_between(scan: str, a: int, b: int) -> bool:
    """Whether words stand between two clauses (only separators do when they touch)."""
    return any(ch.isalnum() for ch in scan[a:b])


_PLAN_STEP = {
    "en": en(r"(?:step|phase|stage)\s+\d{1,2}\s*[:.)]\s*(?P<verb>" + _WORK + r")"),
    "zh": re.compile(r"第\s*[\d一二三四五六七八九十]{1,3}\s*步\s*[:：]\s*(?=[把给将先再加写改删换跑补更升迁修接])"),
    "ja": re.compile(r"(?:ステップ|手順)\s*\d{1,2}\s*[:：]\s*(?=\S)"),
}
"""One step of a plan the user lays out, opened by a verb of work: "Step 2: backfill
it", 第二步：把…, ステップ2：…."""


def plan_steps(scan: str, spans: list[tuple[int, int]], lang: str) -> dict[int, int]:
    """The steps of a plan the user lays out in one message: ``{sentence start: where
    its work starts}`` for each sentence of ``spans`` opened by a step label and a verb
    of work (:data:`_PLAN_STEP`), when there are two or more (one step alone is the step
    carried out now: "Step 3: bump the version and tag it"; a plan sets work to do)."""
    pattern = _PLAN_STEP.get(lang, _PLAN_STEP["en"])
    found: dict[int, int] = {}
    for a, b in spans:
        m = pattern.match(scan, a, b)
        if m is not None and "?" not in scan[a:b]:
            found[a] = m.start("verb") if "verb" in pattern.groupindex else m.end()
    return found if len(found) >= 2 else {}
