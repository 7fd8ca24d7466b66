"""What an item is: standing or one-off, long-term or local to its conversation, whose.

Read from a ``memory_items`` row (a mapping with ``kind``, ``text``, ``evidence``,
``data``…). Used by the block (:mod:`memory_core.assembly.block`) to choose items; pure, no I/O.

- A **standing rule** says it stands: "always", "never", "from now on", "in this
  project", "by default", "in every conversation", "in all of your answers",
  以后/总是/一律/所有对话, 今後/常に/毎回/すべての会話… A request about the current
  answer ("Reply in JSON with key answer.") is a one-off: it is kept and searchable,
  but is not put in every block, nor in another conversation's. A number in such a
  request counts the parts of the answer ("Give me 5 ideas …", "Summarise this in 3
  bullet points": ``data.one_off``), so it does not make the request a rule; nor does
  a bound in an order scoped to the answer at hand ("Keep it under 100 words", "Use
  Python 3.11 for this script", "… this time").
- A **labelled** item leads with an ordinal label ("Run 39: …", "step 3", "第3步") or is
  a step of a numbered list ("2. bring a cash float of 50 euros" under "Checklist:"):
  one of a series in one conversation (``data.label``, set by the extraction) — task
  state, not something that stands. A labelled preference or a labelled rule that says
  it stands ("1. Always use tabs.") is not one of a series (:func:`series`).
- A **fixed quantity** is a number the user set (a budget, a port, a timeout), not
  any number in a message: a unitless number the clause binds to nothing ("hello
  429", "rate limit me 2"; ``data.loose``, set by the extraction) fixes nothing. An
  **observation** reports what a run or a measurement gave ("latency was 180 ms",
  "the build took 40 s", "用了40秒", "3分かかった"): it is kept and searchable, but
  a statement is not standing merely because it holds a number. Nor is a number
  that reports a change ("p95 jumped to 420 ms"; a change the user made, "we doubled
  the replica count to 6", still sets it), someone else's claim ("Jonas said …";
  the user's own words and the project's documents, "the README says the port is
  8080", are no hearsay), the size of a change ("the raise is about 12%"), how big a
  machine is ("the build box has 32 GB of RAM"), an age or a year a statement dates by
  (:func:`memory_core.items.readings.reports_number`,
  :func:`memory_core.items.readings.is_year`).
- A **lasting** fact holds for every later answer without a number: a restriction of
  the user's own diet or health ("I'm vegetarian", 我对花生过敏; ``data.lasting``,
  set by the extraction; :func:`lasting`).
- A **status report** says how the work stands ("Tests are green now", "The build is
  fixed now", 修好了, 直りました; :func:`status_report`): task state, which the next
  status replaces; it never stands, even as a correction.
- A **tentative** item is a fact or decision the user hedged ("I think the limit is
  50 requests per second", "maybe", 可能, たぶん; ``data.tentative``, set by the
  extraction: :mod:`memory_core.extraction.modality`). It is kept, searchable and
  shown when it matches the turn, tagged as not confirmed, because the message is
  evidence anyway and "what did I think the limit was?" deserves an answer. It never
  stands, never supersedes nor conflicts with another item (a guess does not
  override what the user stated), and a later firm statement of the same subject
  supersedes it, whether it confirms the guess or replaces it
  (:func:`memory_core.items.writer.store_extracted`). Not storing it would lose the
  guess; storing it as a fact would let a guess stand in every block and raise a
  ``CONFLICTS … ask the user`` line against the firm value: the agent's view would
  then hold two current values where the user gave one.
- What is **not a statement** is not an item: a hypothetical ("If we had 10 nodes,
  the job would finish in an hour", 假如…, もし…たら) and machine text pasted
  without a fence (a traceback, log lines, CSV rows, a JSON blob, a shell session,
  source code or a config — ``timeout = 30`` in a pasted function is no fact, and two
  pastes of it are no conflict: :func:`memory_core.extraction.prepare.machine_spans`)
  yield nothing; the message stays searchable evidence.
- **Conversation-local** items (assistant proposals, items of a series, one-off
  requests, facts and decisions the user scoped to the task at hand: "For this task
  the bucket is …", 本次任务中…, 今回のタスクでは…) are shown only in the thread they
  were said in and its forks (docs/scopes.md); long-term items in every thread of the
  tenant, end user and role.

This module answers "does the item stand?" and owns the words by which a rule stands;
what makes a number a report is :mod:`memory_core.items.readings`, whose statement it
is :mod:`memory_core.items.accounts`, and the row's ``data`` fields are
:mod:`memory_core.items.fields`.
"""

from __future__ import annotations

import re
from typing import Any

from memory_core.extraction.lexicon import EN_FROM_NOW
from memory_core.extraction.promotion import promoted
from memory_core.items.accounts import relayed, third_party
from memory_core.items.fields import STATED, data_of, label, loose
from memory_core.items.readings import AGE

# the old paths of moved names that tests still import from here
from memory_core.items.fields import extraction_data as extraction_data
from memory_core.items.fields import speaker as speaker
from memory_core.items.fields import tentative as tentative
from memory_core.items.readings import is_year as is_year


STANDING_RULE = re.compile(
    r"\b(?:always|never|" + EN_FROM_NOW + r"|from today|in future|in the future"
    r"|by default|every time|each time|any ?time|whenever"
    r"|in this (?:project|repo|repository|codebase|team|company)"
    r"|for this (?:project|repo|repository)|as a rule|must|mustn't|at all times"
    r"|anymore|no longer|as a standard|standard practice|(?:don't|do not|not) ever"
    r"|^\W*(?:so\s+|and\s+|but\s+)?(?:we|our\s+team|the\s+team)\s+only\s+(?:ever\s+)?"
    r"(?!(?:have|has|need|needs|want|wants|know|knows|got|get|had|did|was|were|went|made"
    r"|took|saw|paid|spent|bought|sold|[a-z]+ed)\b)[a-z]+\b"
    r"|(?:[a-z]*n't|not)\s[^.;!?\n]{1,80}?[,.!]\s*ever(?=\s*(?:[.!]|$))"
    r"|(?:is|are|isn't|aren't)\s(?:not\s)?(?:allowed|permitted|forbidden|prohibited|banned)"
    r"|in general|generally|(?:general|standing|permanent|lasting) (?:preference|rule)"
    r"|(?:every|each|all|any)\s(?:of\s)?(?:(?:our|your|my|the|future|later|new)\s){0,2}"
    r"(?:conversations?|chats?|sessions?|threads?)"
    r"|(?:in|for)\s(?:every|each|all|any)\s(?:of\s)?(?:(?:our|your|my|the|future|later|new)\s)"
    r"{0,2}(?:answers?|replies|responses?))\b"
    r"|\b(?:in|for|from|out\s+of)\s(?:every|each|all|any)\s(?:(?:[\w-]+)\s){0,2}?(?:plans?"
    r"|drafts?|recipes?|emails?|messages?|reports?|summaries|documents?|docs|specs?"
    r"|itinerar(?:y|ies)|schedules?)(?:\s(?:you\s(?:write|make|draft|give|send|suggest|plan)"
    r"(?:\sfor\sme|\sme)?|for\sme))?(?=\s*(?:$|[,.;:!?)]))"
    r"|\b(?:in|for|to|from|on|with|into|out\s+of)\s(?:every|each|all|any)\s(?:(?:of\s)?the\s)?"
    r"(?:[\w-]+\s){1,3}?(?:that\s)?you\s(?:ever\s)?(?:write|make|draft|give|send|suggest|plan"
    r"|create|generate|produce|build|open|add|recommend|propose|prepare)(?:\sfor\sme|\sme)?\b"
    r"|\b(?:stop|quit)\s+(?:using|adding|putting|including|suggesting|recommending|calling"
    r"|saying|writing|giving|sending|apologi[sz]ing|asking|mentioning|offering|translating"
    r"|bringing\s+up)\b(?![^.;!?\n]*\b(?:for\s+now|this\s+time|right\s+now|for\s+this"
    r"|in\s+this\s+(?:answer|reply|file|function|script|one|pr|draft))\b)"
    r"|\b(?:don't|do\s+not)\s+(?:ever\s+)?(?:suggest|recommend|offer|propose|pitch)\s"
    r"[^.;!?\n]{1,60}?\b(?:to|for)\s+me\b"
    r"|\b(?:before|after)\s(?:each|every)\s|前都(?:要|得|必须)|之前都(?:要|得|必须)|たびに|都度"
    r"|(?<![\d０-９分秒時日週月年間])ごとに"
    r"|\b(?:rules?|polic(?:y|ies))(?:\s(?:for\s(?:(?:my|our|the|all|this)\s)?[\w-]+(?:\s[\w-]+)?"
    r"|at\s(?:my|our|the)\s[\w-]+|in\s(?:this|my|our)\s[\w-]+|to\sfollow|from\s(?:me|us)"
    r"|of\s(?:mine|ours)))?(?:\s(?:is|are))?\s?[:：]"
    r"|(?:规则|规矩|原则)(?:如下|是)?[:：]|(?:ルール|決まり|方針)(?:を一つ|を1つ|をひとつ|が一つ"
    r"|です|があります)?[:：]"
    r"|以后|今后|往后|从现在起|从现在开始|从今天起|从今天开始|从此|总是|永远|每次|一律|始终|默认"
    r"|必须|务必|一直|所有(?:的)?(?:对话|会话|聊天|回答|回复)|每(?:个|一个|一次)(?:对话|会话|回答|回复)"
    r"|(?:在)?(?:这个|本|我们的?)(?:项目|仓库|代码库|代码仓库|团队|公司)(?:里|中|内)"
    r"|この(?:リポジトリ|レポ|プロジェクト|コードベース|チーム|会社)(?:では|において(?:は)?|内では)"
    r"|今後|常に|いつも|毎回|必ず|ずっと|これから|今日から|以降は|以後|次回から|次からは|原則|絶対"
    r"|(?:すべて|全て|全部)の(?:会話|回答|返答|チャット)|どの(?:会話|回答|チャット)でも"
    r"|\b(?:and|or|plus)\s+(?:any|all|every)\s+(?:future|later|new)\s+(?:ones?\b|[\w-]+s\b)"
    r"|\bthroughout\s+(?:the|this|our)\s+(?:whole\s+|entire\s+)?(?:migration|project|refactor"
    r"|rewrite|port|codebase|repo|release|sprint|engagement)\b", re.I)
"""Words by which a rule says it stands (see module doc): a word of time ("always",
"from now on", "don't …, ever", "Don't … . Ever."), a team's norm said with "only"
and a present verb
("We only ship on Tuesdays"; not "We only have two days", "We only bought 3"), a scope over every answer or conversation ("in every conversation
we have", "in all of your answers", 所有对话, すべての回答), over whatever the assistant
makes for the user ("in any code you write for me", "for every PR you open"; the verb
in the present: "in the code you wrote" is the work at hand) or over the project ("in this
repo", 这个项目里, このリポジトリでは), or a policy said in the
passive ("Deploys are not allowed on Fridays", "Smoking is prohibited"): a permission
or ban of a thing, not an order about the answer at hand; a situation said to recur
("before each commit", 提交前都要, デプロイのたびに); an order to
stop a practice ("Stop using emojis …", "Stop adding docstrings …"; not "Stop the server",
nor one scoped "for now" or to the answer at hand) or to keep a kind of advice from the
user ("Don't recommend keto diets to me"); or a lead that names what
follows a rule or a policy ("Here is my rule: …", "Rule for you: …", "House rule at
my table: …", "Retention policy: …", 我的规则：, 私のルール：); or a scope that reaches
past the case at hand ("for this ticket and any future ones", "throughout the
migration": the work that spans many conversations; "and any other bugs you find"
widens the task at hand, no more)."""


def is_standing_rule(text: str | None) -> bool:
    """Whether ``text`` states a rule that stands beyond the current answer."""
    return bool(text) and (STANDING_RULE.search(text or "") is not None
                           or promoted(text or ""))  # "Remember: reports should be …"


STATUS = re.compile(
    r"\b(?:is|are|was|were|'s|'re|be|been)\s+(?:now\s+|all\s+|finally\s+|still\s+|back\s+"
    r"|already\s+|fully\s+){0,2}(?:green|red|passing|failing|fixed|broken|working|done|finished"
    r"|complete|completed|resolved|down|up|online|offline|merged|stable|flaky|unblocked"
    r"|blocked|sorted|live)(?=\s*(?:$|[,.;:!?)]|(?:now|again|too|and|but|so|finally|yet)\b))"
    r"|\b(?:passes|fails|works|builds|compiles|runs)\s+(?:again\s+|fine\s+|now\s+){0,2}"
    r"(?:now|again)\b"
    r"|通过了|修好了|跑通了|挂了|恢复了|搞定了|解决了"
    r"|通っています|通りました|直りました|直った|落ちています|復旧しました|解決しました", re.I)
"""Words by which a statement reports how the work stands now ("Tests are green
now", "CI passes again", 修好了, 直りました): task state of its conversation."""


_STATUS_PARTS = re.compile(
    r"[,;:，、；：。]|\b(?:now that|since|because|and|but|so|once|after|while)\b", re.I)
_CLAIM = re.compile(
    r"\d|\b(?:is|are|was|were|'s|'re|use|uses|must|should|always|never|prefer|need"
    r"|needs|set|switched|moved|now)\b|以后|今后|从现在|是|用|改成|改为|设为|は|です", re.I)
"""A part of a statement that claims something of its own beside a status (a
number, a copula, an order): :func:`status_report` is then no report."""


def status_report(row: Any) -> bool:
    """A fact that reports how the work stands (:data:`STATUS`: "The build is fixed
    now"): task state, which the next status replaces, never a standing item, even
    when it supersedes the last one."""
    text = row["text"] or ""
    if row["kind"] != "fact" or STATUS.search(text) is None:
        return False
    # only when the status is all the statement claims: "Correction: the bucket is
    # private, the ACL is fixed", 预算问题解决了，上限是5000元 state a value besides
    return not any(STATUS.search(part) is None and _CLAIM.search(part) is not None
                   for part in _STATUS_PARTS.split(text))


_MODAL_ONLY = re.compile(r"\b(?:must|mustn't)\b|必须|务必|必ず", re.I)
"""Rule words that say how a thing is done, not for how long: in a plan's step ("2. It
must return 404 …", 必ずステージングで先に) they bind that step."""


STEP = re.compile(
    r"\b(?:week|day|night|month|quarter|phase|stage|wave|sprint|round)\s+#?\d+\b(?![.,]\d|\s*%)"
    r"|第\s*[0-9一二三四五六七八九十]+\s*(?:周|天|日|个月|阶段|期|轮|波|週|ヶ月|か月)"
    r"|[0-9一二三四五六七八九十]+\s*(?:週|日|か月|ヶ月)目|(?:フェーズ|ステージ|ウェーブ)\s*[0-9]+"
    r"|^\W*[a-z][\w-]{1,15}\s+#?\d+\s+(?:recap|notes?|summary|update|log|report|debrief"
    r"|review|retro|wrap-?up)\s*[:：\u2013\u2014-]",
    re.I)
"""A step of a plan named by its place in time or order ("week 1 gets 20% of traffic,
week 2 gets 50%", "day 3", "phase 2", 第二周, 2週目), or the notes of one of a series
("Session 12 recap: …", "Sprint 9 retro: …"): its figures are one step's, like those of
"Step 2: …", though no ordinal label leads the sentence."""


def series(row: Any) -> bool:
    """One of a series said in one conversation (module doc): a labelled item or a
    plan's step (:data:`STEP`), unless it is a preference or a rule that says it lasts
    ("1. Always use tabs."; a "must" alone binds the step it is in)."""
    text = row["text"] or ""
    if not label(row) and STEP.search(text) is None:
        return False
    return not (row["kind"] == "preference" or (
        row["kind"] == "constraint"
        and STANDING_RULE.search(_MODAL_ONLY.sub(" ", text)) is not None))


def one_off(row: Any) -> bool:
    """A constraint that extraction found scoped to the answer or the material at hand
    (``data.one_off``: a request's count of the answer's parts, "… in this answer",
    "line 42"; its "always" holds within that scope), or one that does not say it
    stands and fixes no number (a loose number, :func:`memory_core.items.fields.loose`,
    fixes none, nor does an age, :data:`memory_core.items.readings.AGE`: "Explain it to
    me like I'm 12"). An order the user asked the assistant to keep ("Use metric units,
    remember that": :func:`lasting`) is no one-off."""
    return row["kind"] == "constraint" and (
        bool(data_of(row).get("one_off"))
        or ((row["value"] is None or loose(row) or AGE.search(row["text"] or "") is not None)
            and not is_standing_rule(row["text"]) and not lasting(row)))


def lasting(row: Any) -> bool:
    """A user's statement that holds for every later answer (``data.lasting``, set by
    the extraction: a restriction of their diet or health, "I'm allergic to peanuts";
    or anything the user asked the assistant to keep, "…, keep that in mind",
    :func:`memory_core.extraction.promotion.kept_tail`)."""
    return row["evidence"] in STATED and bool(data_of(row).get("lasting"))


DEADLINE = re.compile(
    r"\b(?:deadline|due\s+date|cut-?off\s+date)\b[^.;!?\n]{0,40}?\s(?:is|are)\s(?!not\b)"
    r"|\b(?:deadline|due\s+date)'s\s|\b(?:is|are)\s+due\s+(?:by|on|before)\b"
    r"|(?:截止日期|截止时间|最后期限|交付日期|期限)(?:是|为|定在|定为)"
    r"|(?:締め切り|締切|〆切|期限|納期)(?:日)?(?:は|が)", re.I)
"""Words by which a statement sets when something is due ("The deadline for the
migration is end of Q2", "the report is due by Friday", 截止日期是月底,
締め切りは来週の金曜日です), in the present: "the deadline was yesterday" tells history."""


def deadline(row: Any) -> bool:
    """Whether a user's fact sets a deadline (:data:`DEADLINE`): a date stands with no
    number in it (it holds until it passes, as a budget holds until changed), unless
    someone else is said to have set it (:func:`memory_core.items.accounts.relayed`,
    :func:`memory_core.items.accounts.third_party`)."""
    t = row["text"] or ""
    return (row["kind"] == "fact" and row["evidence"] in STATED
            and DEADLINE.search(t) is not None and not relayed(t) and not third_party(t))


LATELY = re.compile(r"\b(?:lately|recently|these\s+days|nowadays)\b|最近|近来|这阵子|这几天"
                    r"|このところ|ここ最近|近頃", re.I)
"""Words by which an "always" or "never" describes how things have gone of late ("the
cat always sleeps all day lately", 最近总是睡一整天, 最近はいつも遅れる), not an order."""


ENCOURAGEMENT = re.compile(
    r"\b(?:never|(?:don't|do\s+not)(?:\s+ever)?)\s+(?:give\s+up|quit|lose\s+(?:hope|faith|heart)"
    r"|stop\s+(?:believing|dreaming|trying))(?=\s*(?:$|[,.;:!?)]|on\b|in\b))"
    r"|\byou\s+never\s+know\b", re.I)
"""Words of encouragement or a saying, not a rule for the work: "Never give up on your
dreams!", "Don't ever quit, you're so close", "You never know what tomorrow brings";
"Never quit the installer before it finishes" orders how a thing is done."""


def encouragement(row: Any) -> bool:
    """Whether a constraint only encourages or states a saying (:data:`ENCOURAGEMENT`)."""
    return row["kind"] == "constraint" and ENCOURAGEMENT.search(row["text"] or "") is not None


def habit(row: Any) -> bool:
    """Whether a constraint only describes a habit of late (:data:`LATELY`): a rule says
    what is to hold, never what has been happening recently."""
    return row["kind"] == "constraint" and LATELY.search(row["text"] or "") is not None


POINTER = re.compile(
    r"^\W*(?:(?:ok(?:ay)?|nope|no|yes|yeah|yep|hm+|sure|right|fine|alright|actually|wait"
    r"|and|so|also|just|please)\b[\s,.!~-]*)*"
    r"(?:(?:revert|undo|redo|drop|keep|remember|note|do|scrap|remove|delete|ignore|forget"
    r"|save|skip)\s+(?:that|this|it)(?:\s+(?:in\s+mind|for\s+later|too|as\s+well|again))?"
    r"|(?:i|we)(?:'ll|\s+will|\s+can)\s+(?:\w+\s+){0,1}?[a-z]+(?:\s+(?:at|with|on|into|to))?"
    r"\s+(?:that|this|it|them)(?:\s+(?:myself|ourselves|later|then|now|first))?"
    r"|not\s+[\w.#:/-]+(?:\s+[\w.#:/-]+){0,2}"
    r"|(?:this|that|it)(?:'s|\s+is|\s+applies|\s+goes|\s+holds)\s+(?:for|to)\s+(?:all|every"
    r"|each|any)\s+(?:(?:of\s+)?(?:the|our|my)\s+)?[\w-]+(?:\s+[\w-]+)?)"
    r"(?:\s*[,;]?\s*(?:whenever|when|if|every\s+time|each\s+time|from\s+now\s+on"
    r"|going\s+forward)\b[^.!?\n]*)?[\s.!]*$", re.I)
"""An order whose only object points back at what was said ("nope, revert that.",
"keep that in mind whenever we talk about meds", "ok, do that every time I push"), a
promise of the speaker's whose only object does ("I'll run it.", "we'll look into
that"), a scope said of it ("this is for all environments from now on"), or a denied
value left alone by the split of its correction ("not run 30."): the words it points
at are the item, if any; on its own it holds nothing to show."""


def pointer(row: Any) -> bool:
    """Whether an item's words only point back at what was said (:data:`POINTER`)."""
    return POINTER.match(row["text"] or "") is not None


REACTION = re.compile(
    r"^\W*(?:(?:oh|wow|aw+|yeah|yes|yep|and|also|so|honestly|omg|haha|thanks)\W+)*"
    r"(?:i|we)(?:'d|\s+would)\s+(?:really\s+|so\s+|absolutely\s+)?love\s+to\b"
    r"|^\W*(?:(?:oh|wow|aw+|yeah|yes|yep|and|also|so|honestly|omg|haha)\W+)*(?:i|we)\s+"
    r"(?:(?:really|just|also|absolutely|totally|do)\s+)*(?:love|like|enjoy|adore|hate|dislike"
    r"|loathe|detest|can't\s+stand)\s+"
    r"(?:it|this|that|them|to)(?:\s+(?:so\s+much|a\s+lot))?\s*(?:[,.!;:)]|$)"
    r"|^\W*(?:(?:oh|wow|aw+|yeah|yes|yep|and|also|so|honestly|omg|haha)\W+)*(?:i|we)\s+"
    r"(?:(?:really|just|also|absolutely|totally|do)\s+)*(?:love|like|enjoy|adore)\s+"
    r"(?:how|the\s+way|that\s+(?:you|it|they|he|she|we|i|this|there)\b"
    r"|(?:your|their|his|her|these|those)\s)", re.I)
"""A liking that reacts to what was just shown or said, not a lasting taste: its object
is only "it"/"this"/"that", liked or disliked ("I love it!", "We love it, it brings us
closer", "Yeah, I love to.", "I hate this."), a manner or a clause ("I love how you
framed it", "I love that you kept going", "I like the way it came out"), someone else's
thing or one pointed at ("I love your garden", "We enjoy those sunsets"), or a wish for
one occasion ("I'd love to see another painting"). "I like it when answers are short" and "I love Bach" name what is
liked."""


def reaction(text: str | None) -> bool:
    """Whether a preference only reacts to the conversation (:data:`REACTION`)."""
    return REACTION.search(text or "") is not None


def conversation_local(row: Any) -> bool:
    """Shown only in its own thread (module doc): assistant proposals, items of a
    series (:func:`series`), one-off requests and statements scoped to the task at
    hand (``data.local``)."""
    return row["evidence"] == "assistant" or series(row) or one_off(row) \
        or bool(data_of(row).get("local"))
