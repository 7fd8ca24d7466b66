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
  (:func:`reports_number`, :func:`is_year`).
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
"""

from __future__ import annotations

import re
from typing import Any

import orjson

STANDING_RULE = re.compile(
    r"\b(?:always|never|from now on|going forward|from today|in future|in the future"
    r"|by default|every time|each time|any ?time|whenever"
    r"|in this (?:project|repo|repository|codebase|team|company)"
    r"|for this (?:project|repo|repository)|as a rule|must|mustn't|at all times"
    r"|anymore|no longer|as a standard|standard practice|(?:don't|do not|not) ever"
    r"|(?:[a-z]*n't|not)\s[^.;!?\n]{1,80}?,\s*ever(?=\s*(?:[.!]|$))"
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
    r"|\b(?:before|after)\s(?:each|every)\s|前都(?:要|得|必须)|之前都(?:要|得|必须)|たびに|都度"
    r"|(?<![\d０-９分秒時日週月年間])ごとに"
    r"|\brules?(?:\s(?:for\s(?:you|this\s\w+)|to\sfollow|from\s(?:me|us)|of\s(?:mine|ours)))?"
    r"(?:\s(?:is|are))?\s?[:：]"
    r"|(?:规则|规矩|原则)(?:如下|是)?[:：]|(?:ルール|決まり|方針)(?:を一つ|を1つ|をひとつ|が一つ"
    r"|です|があります)?[:：]"
    r"|以后|今后|往后|从现在起|从现在开始|从今天起|从今天开始|从此|总是|永远|每次|一律|始终|默认"
    r"|必须|务必|一直|所有(?:的)?(?:对话|会话|聊天|回答|回复)|每(?:个|一个|一次)(?:对话|会话|回答|回复)"
    r"|(?:在)?(?:这个|本|我们的?)(?:项目|仓库|代码库|代码仓库|团队|公司)(?:里|中|内)"
    r"|この(?:リポジトリ|レポ|プロジェクト|コードベース|チーム|会社)(?:では|において(?:は)?|内では)"
    r"|今後|常に|いつも|毎回|必ず|ずっと|これから|今日から|以降は|以後|次回から|次からは|原則|絶対"
    r"|(?:すべて|全て|全部)の(?:会話|回答|返答|チャット)|どの(?:会話|回答|チャット)でも", re.I)
"""Words by which a rule says it stands (see module doc): a word of time ("always",
"from now on", "don't …, ever"), a scope over every answer or conversation ("in every conversation
we have", "in all of your answers", 所有对话, すべての回答) or over the project ("in this
repo", 这个项目里, このリポジトリでは), or a policy said in the
passive ("Deploys are not allowed on Fridays", "Smoking is prohibited"): a permission
or ban of a thing, not an order about the answer at hand; a situation said to recur
("before each commit", 提交前都要, デプロイのたびに); or a lead that names what
follows a rule ("Here is my rule: …", "Rule for you: …", 我的规则：, 私のルール：)."""


OBSERVATION = re.compile(
    r"\b(?:was|were|took|got|hit|measured|reached|dropped|fell|rose|climbed|spiked|peaked"
    r"|averaged|came in at|ended (?:at|up)|finished in|ran in|clocked|recorded|observed"
    r"|saw|scored|logged|showed|returned|printed|went (?:up|down|from)|jumped|increased"
    r"|came (?:to|in|out)"
    r"|decreased|grew|doubled|tripled|halved|shrank|improved|regressed|slowed|surged|plunged"
    r"|keeps?\s(?:getting|seeing|hitting|throwing|returning|failing))\b"
    r"|\b\d[\d.,]*\s*[a-z]*\s+ago\b"
    r"|用了|花了|耗时|测得|测出|跑了|达到了|降到了|升到了|变成了|涨到|涨了|增加到|增加了|减少到"
    r"|减少了|下降到|下降了|上升到|上升了|增长到|增长了|翻了"
    r"|了(?:[一二三四五六七八九十两几半]+|\d+)\s*(?:个)?(?:天|周|星期|月|年|小时|分钟|次|遍|趟)"
    r"|だった|でした|かかった|かかりました|計測|測定|記録した|になった|になりました"
    r"|に増え|に減っ|に減り|に上が|に下が|に伸び", re.I)
"""Words by which a numeric statement reports an observation or a change (module doc):
what a run or a measurement gave, what rose or fell, what happened some time ago."""
DONE_COUNT = re.compile(
    r"\b(?!(?:need|seed|speed|feed|embed|indeed|exceed|proceed|succeed|allocated|reserved"
    r"|provisioned|configured|scheduled|assigned|budgeted|limited|capped|fixed|pinned"
    r"|rated|priced|sized|scaled|raised|lowered|reduced|bumped|changed|increased|decreased"
    r"|extended|shortened|upgraded|downgraded|resized|tuned|adjusted|named|called|aged"
    r"|based|located|hosted|listed|numbered|labelled|labeled)\b)"
    r"(?:[a-z]{3,}ed|ran|sent|wrote|built|lost|spent|sold|caught|found|did|gave|fetched)"
    r"\s+(?:about\s+|over\s+|nearly\s+|almost\s+|only\s+|just\s+|~\s*)?\d"
    r"|\b\d[\d.,]*\s+(?:[a-z]+\s+)?(?!(?:need|required|allowed|allocated|reserved|assigned"
    r"|expected|planned|scheduled|budgeted)\b)[a-z]{3,}ed\s*(?:[,.;!)]|$)", re.I)
"""A past verb of work done right before its count ("Synced 4812 files", "processed
1,204 records", "ran 40 tests"), or after it at the end of its clause ("3 skipped",
"418 passed, 2 failed"): what a job did, not a number the user set (a verb of setting
— allocated, capped, bumped… — is no such report)."""
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
USER_CHANGE = re.compile(
    r"\b(?:i|we)(?:'ve|\shave)?\s(?:just\s|also\s|finally\s)?(?:doubled|tripled|halved|grew"
    r"|shrank|shrunk|increased|decreased|moved|set|changed|bumped|raised|lowered|cut|dropped"
    r"|reduced|scaled|resized|upped)\s(?:the|our|my|its|their)\b"
    r"|(?:我们|我|咱们)[^，,。！!？?]{0,8}把[^，,。！!？?]{1,20}?(?:增加|减少|提高|降低|调|改|扩|缩)"
    r"(?:到|为|成)", re.I)
"""A change the user made to a value ("we doubled the replica count to 6", "we moved
the staging cluster to 9 nodes yesterday", 我们把超时增加到了60秒): the number is one
they set, though a change word or a past day reports it."""
_LATER = re.compile(r"\b\d[\d.,]*\s*[a-z]*\s+later\b"
                    r"|\b(?:an?|one|two|three|four|five|six|seven|eight|nine|ten|a\sfew|a\scouple"
                    r"\sof|few|several)\s+(?:second|minute|hour|day|night|week|month|year|decade"
                    r"|while|moment)s?\s+later\b", re.I)
_PAST = re.compile(r"\b(?!(?:need|speed|feed|seed|embed|indeed|exceed|proceed|succeed)\b)"
                   r"(?:[a-z]{2,}ed|was|were|had|did|went|came|got|bought|sold|left|found|made"
                   r"|took|met|began|became|ran|moved)\b", re.I)
"""A "3 years later" reports what happened only in a past account ("we bought the
house 2 years later", "… two hours later"); "the cleanup runs 30 minutes later" fixes a
schedule. A number word counts only before a span of time: "… will add alerts later"
reports nothing."""
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
_KIN = (r"(?:daughter|son|kid|child|children|baby|boy|girl|twins|dog|cat|puppy|kitten|pup"
        r"|mom|mum|mother|dad|father|brother|sister|grandma|grandpa|grandmother|grandfather"
        r"|niece|nephew|wife|husband|partner)")
AGE = re.compile(r"\b\d+[- ](?:day|week|month|year)s?[- ]old\b|\d+\s*(?:岁|歳)"
                 r"|\b(?:i|you|he|she|they|we)(?:'m|'re|'s|\s+am|\s+are|\s+is|\s+was|\s+were)"
                 r"\s+\d+(?=\s*(?:$|[,.;:!?)]))"
                 r"|\bturn(?:s|ed|ing)?\s+\d+(?=\s*(?:$|[,.;:!?)]|(?:next|this|on|in|today"
                 r"|tomorrow|soon|and|years?)\b))"
                 r"|\b(?:my|our|his|her|their|(?-i:[A-Z])\w*'s)\s+(?:\w+\s+)?" + _KIN
                 + r"s?(?:\s+(?-i:[A-Z])\w*)?\s+(?:is|are|was|were|'s)\s+(?:now\s+|only\s+"
                 r"|almost\s+|nearly\s+|just\s+)?\d+(?=\s*(?:$|[,.;:!?)]|(?:now|and|already"
                 r"|years?|this|next|today)\b))", re.I)
"""An age: a number that describes, never one the user fixed ("a 10-week-old beagle",
"explain it like I'm 12", "as if I were 10", 5岁, "my daughter turns 7 next week", "My
dog Max is 12 now", "Mel's kids are 5 and 8": a relative's or a pet's age; "my son is 5
minutes away" is no age)."""
SETTING = re.compile(
    r"\b(?:set (?:it )?(?:to|at)|fixed at|capped at|limited to|is capped|is limited|cap|limit"
    r"|budget|quota|target|deadline|must|should|at most|at least|no more than|up to)\b"
    r"|设为|设置为|设定为|上限|下限|预算|不超过|最多|至少|に設定|上限|予算|以内|以上", re.I)
"""Words by which a number is one the user sets, even in the past tense."""


FEELING = re.compile(
    r"\b(?:i'm|i\s+am|we're|we\s+are|i\s+feel|we\s+feel|feeling|i\s+was|we\s+were)\s+"
    r"(?:so+|really|super|very|incredibly|totally|beyond)\s+(?:happy|proud|excited|thrilled"
    r"|stoked|relieved|glad|pumped|ecstatic|grateful|sad|upset|bummed|gutted|devastated"
    r"|annoyed|frustrated|exhausted)\b(?!\s+with\b)"
    r"|太(?:开心|高兴|激动|难过|伤心)了|(?:好|真|特别|非常)(?:开心|高兴|激动|难过|伤心)"
    r"|(?:本当に|すごく|とても|めっちゃ)(?:嬉しい|うれしい|悲しい|悔しい)", re.I)
"""An exclamation of feeling ("I'm so happy", "so proud", 太开心了, 本当に嬉しい): the
number beside it is how an event turned out ("2 hours 4 minutes, I'm so happy"), told
with the feeling, not a value the user set ("happy with 3 replicas" is no such
exclamation)."""


CHANGE_SIZE = re.compile(
    r"\b(?:raise|pay\s+rise|increase|decrease|drop|gain|loss|growth|decline|speed-?up"
    r"|slow-?down|improvement|regression|jump|spike|dip|reduction)"
    r"(?:\s+(?:this|last|next)\s+(?:year|quarter|month|week|time))?"
    r"\s+(?:is|was|'s|will\s+be|came\s+to|comes\s+to|works\s+out\s+to)\b"
    r"|(?:涨幅|增幅|降幅|跌幅|涨薪|加薪|提升|降低了?|优惠)(?:幅度)?(?:是|为|有|大概|大约|约)"
    r"|(?:上昇|増加|減少|低下|改善|昇給|値上げ|値下げ)(?:率|幅|額|分)?(?:は|が)", re.I)
"""A number that sizes a change, named by its noun ("The raise is about 12%", "the
speedup was 3x", 涨幅是12%, 昇給は12%です): how much something moved, like "p95
jumped to 420 ms", not a value the user set."""
EQUIPMENT = re.compile(
    r"\b(?:has|have|had|with|comes\s+with|ships\s+with)\s+(?:only\s+|just\s+|about\s+"
    r"|around\s+|roughly\s+)?\d[\d.,]*\s*(?:(?:[kmgtp]i?b|gigs?|gigabytes?|terabytes?)\b"
    r"|(?:v?cpus?|gpus?|(?:cpu\s+)?cores?)\b)"
    r"|(?:内存|显存|硬盘|磁盘)(?:是|有|为|只有)?\s*\d+\s*[GT]B?|\d+\s*[GT]B?\s*(?:的)?(?:内存|显存)"
    r"|有\s*\d+\s*(?:个)?核(?![心查对实])"
    r"|(?:メモリ|RAM|VRAM|ディスク)(?:は|が)\s*\d+\s*[GT]B|\d+\s*[GT]B\s*の?\s*(?:メモリ|RAM|VRAM)"
    r"|\d+\s*コア", re.I)
"""How big a machine is: the memory, disk, cores or GPUs it has ("the build box has
32 GB of RAM and 8 cores", 新机器有64核, 新しいサーバーは64コアです): a description of
the equipment, found by search when it matters, not a quantity the user fixed. A word
of setting or provisioning (:data:`PROVISIONED`) makes it one."""
PROVISIONED = re.compile(
    r"\b(?:allocat\w*|provision\w*|reserv\w*|configur\w*|resiz\w*|upgrad\w*|downgrad\w*"
    r"|assign\w*|give|gave|given|bump\w*|scal\w*)\b"
    r"|分配|配置|调到|调成|改成|改为|升级|扩容|割り当て|設定|増設|変更|アップグレード", re.I)
"""Words by which the size of a machine is one the user chose ("we allocated 16 GB to
the build VM", "the VM is provisioned with 8 vCPUs", 内存调到32G)."""


READING = re.compile(
    r"\b(?:right\s+now|at\s+the\s+moment|currently|so\s+far|to\s+date|as\s+of\s+(?:now"
    r"|today|yesterday|this\s+\w+)|last\s+(?:night|week|month|quarter|year|sprint|run"
    r"|release)|yesterday|up\s+from|down\s+from|(?:the|a)\s+\w+\s+before(?:\s+(?:it|that))?"
    r"|shows|showing|peak(?:ed|s)?|on\s+average"
    r"|(?:i|we|you|they)(?:'ve|\s+have)\s+been\s+(?!(?:allowed|told|asked|given|using)\b)\w+ing)\b"
    r"|\btoo\s+(?:big|large|small|slow|long|short|high|low|much|many|few|heavy)\b"
    r"|目前|眼下|迄今|截至|上个?月|上周|上星期|去年|昨天|前天|之前是|以前是|此前|峰值|报了|显示"
    r"|太(?:大|小|慢|长|短|高|低|多|少)了"
    r"|先月|先週|去年|昨年|昨日|前回|その前|これまで|今のところ|現時点|ピーク|平均"
    r"|(?<![今])今(?![後日回度週月年朝夜晩はも])|すぎ(?:る|ます|た)"
    r"|\d+\s*(?:秒|分|時間|日|週間|か月|ヶ月)後に[^。！!？?\n]*(?:ました|した|った)"
    r"|\d+\s*(?:秒|分钟|小时|天)(?:之?后)[^。！!？?\n]*了", re.I)
"""Words by which a number is a reading of a moment or a past period, not a value set:
"right now", "so far", "last month", "up from 0.5 %", "the sprint before it", "the
dashboard shows …", "peaked", "48 MB, which is too big" (a reading judged against a
limit), 目前, 上个月, 峰值, 报了 N 个, 先月, その前, 今 (not 今後 nor 今は, an update),
"… N 分後に失敗しました" (when a run failed), "I've been going to the gym three times a
week" (an activity told as it goes on). A word of setting (:data:`SETTING`: a
budget, a limit, a target) still fixes the number ("last month we set the cap to 50")."""


RUN_RESULT = re.compile(
    r"\b\d[\d,]*\s+(?:[a-z]+\s+)?(?:fail|pass|error|crash|break|flake)(?:s|es|ing)?\b"
    r"(?!\s+(?:after|before|in\s+a\s+row)\b)"
    r"|\b(?:(?:error|failure|warning|bug|crash|incident|alert|flake|test|user|visitor"
    r"|signup|download|ticket|issue)s?\s+count|(?:test\s+|code\s+)?coverage|(?:pass|failure"
    r"|error|hit|success|crash)\s+rate|number\s+of\s+\w+)\b(?=[^.;!?\n]*\bnow\b)"
    r"|\b(?:is|are|'s|'re)\s+(?:now\s+)?down\s+to\b"
    r"|(?:覆盖率|错误数|报错数|失败数|通过率|错误率)[^，。；]{0,10}现在|现在[^，。；]{0,6}(?:覆盖率"
    r"|错误数|报错数|失败数|通过率|错误率)", re.I)
"""What a run gave, counted in the present tense ("now 12 tests fail instead of 3"), or
a measured count or rate given "now" ("Coverage is down to 74% now", "The error count
is 41 now, not 12", 覆盖率现在是74%): a new reading, not a value the user fixed ("My
budget is 5k now, not 3k" sets one: :data:`SETTING`)."""
OCCASION_LENGTH = re.compile(
    r"\b(?:trip|vacation|holiday|getaway|visit|stay|tour|honeymoon|retreat|cruise|journey"
    r"|camp|festival|conference|offsite|hotel|room|airbnb|hostel|booked|booking"
    r"|(?:going|travel(?:l?ing)?|flying|heading|off)\s+to)\b"
    r"[^.;!?\n]{0,60}?\bfor\s+(?:about\s+|around\s+"
    r"|almost\s+|nearly\s+)?(?:\d+|a|one|two|three|four|five|six|seven|eight|nine|ten"
    r"|a\s+few|a\s+couple\s+of)\s+(?:days?|nights?|weeks?|months?)\b"
    r"|\b\d+[- ](?:day|night|week)\s+(?:trip|vacation|holiday|getaway|visit|stay|tour|cruise"
    r"|retreat)\b"
    r"|(?:旅行|旅游|玩|度假|出差)[^，。；]{0,8}?\d+\s*(?:天|晚|周|个星期)|住\s*\d+\s*(?:晚|夜)"
    r"|\d+\s*(?:天|晚)(?:的)?"
    r"(?:旅行|旅游|行程|假期)|\d+\s*(?:日間|泊)(?:の)?(?:旅行|滞在|出張)?", re.I)
"""How long a trip or an event lasts ("a trip to Lisbon in October for 10 days", "a
5-day conference", "going to Kyoto in May for two weeks", 去成都玩5天, 3泊の旅行): a description of the occasion, not a
quantity the user fixed. A number of nights in a booking ("I booked the hotel for 4
nights", 住4晚) is such a length."""
DIMENSION = re.compile(
    r"\b\d[\d.,]*\s*(?:mm|cm|m|km|metres?|meters?|in|inch(?:es)?|ft|feet|foot|yards?)\s+"
    r"(?:wide|high|tall|long|deep|thick|across|in\s+(?:width|height|length|diameter))\b"
    r"|\b(?:covers?|covering|measures?|measuring)\s+(?:about\s+|around\s+)?\d[\d.,]*\s*"
    r"(?:square|sq\.?|cubic|m2|m²|ft2|mm|cm|m|metres?|meters?|inch(?:es)?|ft|feet)\b"
    r"|(?<![提最增])(?:宽|高|长|深|厚|直径)(?:度)?(?:是|为|有|约|大概)?\s*\d[\d.]*\s*"
    r"(?:米|厘米|毫米|公分|公里|寸|尺)"
    r"|(?:幅|高さ|長さ|奥行き?|厚さ|直径)(?:は|が)?\s*(?:約)?\s*\d[\d.]*\s*(?:メートル|センチ|ミリ"
    r"|キロ|m|cm|mm)", re.I)
"""The size of a thing: how wide, high, long or deep it is, what area it covers ("the
wall is 2.4 m wide", "each box covers 1 square metre", 墙面宽3.6米, 壁は幅2.4メートル):
a description of the thing, found by search when it matters, not a quantity the user
fixed ("keep the shelf under 80 cm" sets one: :data:`SETTING`)."""
USAGE = re.compile(
    r"\b(?:cpu|memory|mem|ram|disk|heap|load|utili[sz]ation|usage)\s+(?:is\s+|was\s+|now\s+)?"
    r"(?:at|hit|hits|hitting|around|near)\s+\d[\d.]*\s*%"
    r"|\bat\s+\d[\d.]*\s*%\s+(?:cpu|memory|mem|ram|disk|heap|load|utili[sz]ation|usage)\b"
    r"|\b(?:gives|gave|yields|yielded|scores|scored)\s+(?:an?|the)\s+[\w-]+(?:\s+[\w-]+)?\s+of\s+\d"
    r"|\b(?:more|less|fewer|higher|lower|bigger|smaller)\s+than\s+(?:usual|normal|before"
    r"|expected|last\s+(?:time|week|month|year))\b"
    r"|\b(?:[a-z]+ed|caught|came|went|got|ran|began|became|took)\s+(?:\w+\s+)?"
    r"after\s+\d[\d.]*\s*(?:s|secs?|seconds?|mins?|minutes?|h|hrs?"
    r"|hours?)\b"
    r"|(?:CPU|内存|磁盘|负载|使用率)[^，。；\n]{0,4}?(?:到了|达到|是|在)\s*\d[\d.]*\s*%"
    r"|(?:CPU|メモリ|ディスク|使用率|負荷)[^、。\n]{0,4}?(?:が|は)\s*\d[\d.]*\s*%", re.I)
"""A reading of a machine or a model: a resource's use ("db primary CPU at 97%", CPU
到了95%, CPUが97%です), what a run or a cell gave ("Cell 14 gives an AUC of 0.87"), an
amount against the usual ("about $20 more than usual"), when something came back
("writes recovered after 4 min"): what was seen, not a value the user set."""


THIS_TIME = re.compile(r"\b(?:this|just\s+this)\s+(?:time|once)\b|今回|这次|这一次|本次|这回",
                       re.I)
"""Words that scope a statement to the one occasion at hand ("This time two options
are enough", 今回は1案でいいです, 这次给1个就行): its number holds for that occasion."""


_SPAN_COUNT = (r"(?:\d[\d.,]*|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven"
               r"|twelve|fifteen|twenty|thirty|a\s+few|a\s+couple\s+of|few|several|many)")
_SPAN_UNIT = r"(?:day|night|week|weekend|month|year|decade)s?"
ELAPSED = re.compile(
    r"\b" + _SPAN_COUNT + r"\s+(?:more\s+)?" + _SPAN_UNIT + r"\s+ago\b"
    r"|(?:^\W*|\bfor\s+(?:about\s+|almost\s+|nearly\s+|over\s+)?)" + _SPAN_COUNT + r"\s+"
    + _SPAN_UNIT + r"\s+now\b"
    r"|\b(?:i|we|you|they|he|she)(?:'ve|'d|\s+have|\s+has|\s+had)\s+(?:\w+\s+){1,4}?for\s+"
    r"(?:about\s+|almost\s+|nearly\s+|over\s+)?" + _SPAN_COUNT + r"\s+" + _SPAN_UNIT + r"\b"
    r"|已经\s*(?:\d+|[一两二三四五六七八九十几半]+)\s*(?:个)?(?:天|周|星期|个?月|年|小时)(?:多)?了",
    re.I)
"""A span of time counted back from now ("four months ago", "Twelve years now", "I've
been friends with Ana for 9 years"): it grows with every day, as an age does, so it
is no number the user set; "Keep the backups for 30 days" sets one. 已经三天了 ("it has
been three days") counts the same way."""


def reports_number(text: str | None) -> bool:
    """Whether a numeric statement's number is not one the user fixed: an observation
    or a change (what a run gave, what rose; the size of a change by its noun,
    :data:`CHANGE_SIZE`: "the raise is about 12%"), someone else's claim
    ("Jonas said the SLA is 99.9 %"), an age ("a 10-week-old beagle"), an outcome told
    with a feeling (:data:`FEELING`: "3 kg down this month, I'm so proud"), the size of
    a machine (:data:`EQUIPMENT`: "the build box has 32 GB of RAM"), a reading of a
    moment or a past period (:data:`READING`: "1,240 users right now", "last month's
    rate was 0.8%"), what a run gave or a count given "now" (:data:`RUN_RESULT`: "now 12
    tests fail", "Coverage is down to 74% now"), how long a trip lasts
    (:data:`OCCASION_LENGTH`), a span counted back from now (:data:`ELAPSED`: "four
    months ago"), unless a word says the number is set (a budget, a limit, a target)."""
    t = text or ""
    if SETTING.search(t) is not None:
        return False
    if (observes(t) or FEELING.search(t) is not None or CHANGE_SIZE.search(t) is not None
            or RUN_RESULT.search(t) is not None or OCCASION_LENGTH.search(t) is not None
            or DIMENSION.search(t) is not None or USAGE.search(t) is not None
            or (READING.search(t) is not None and USER_CHANGE.search(t) is None)):
        return True
    if EQUIPMENT.search(t) is not None and PROVISIONED.search(t) is None:
        return True
    return relayed(t) or AGE.search(t) is not None or ELAPSED.search(t) is not None


THIRD_PERSON = re.compile(
    r"^\W*(?:(?:and|but|so|oh|btw|also|plus|now|anyway)\b\W*)?(?:he|she)(?:'s|'d|'ll|\s)"
    r"|^\W*(?:他|她)(?!们)|^\W*彼女?(?:は|が|も)", re.I)
"""A clause whose subject is another person, by a third-person pronoun ("She's
enforcing it in branch protection now", 他现在负责发布了, 彼女は今はリモートです); not
"they" nor 他们 (the speaker's team as often as not), nor a name (no lexicon of names)."""


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


def third_party(text: str | None) -> bool:
    """Whether a statement tells what another person does or is (:data:`THIRD_PERSON`):
    a change in it is theirs, as a relayed one is (:func:`relayed`), not one the user set."""
    return THIRD_PERSON.search(text or "") is not None


DATED = re.compile(
    r"\b(?:in|back\s+in|during)\s+(?:(?:early|late|mid)[- ]?)?(?:(?:jan(?:uary)?|feb(?:ruary)?"
    r"|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|oct(?:ober)?"
    r"|nov(?:ember)?|dec(?:ember)?)\.?\s+)?(?:19|20)\d\d\b(?!\s*[-\u2013]?\s*\d)", re.I)
"""A calendar year a statement dates what it tells by ("in 2019", "back in March 2015")."""


def dated_history(text: str | None) -> bool:
    """Whether a statement tells a change as history, in the past tense and dated by a
    calendar year (:data:`DATED`: "We moved to Denver in 2019", "In 2019 we moved the CI
    to GitHub Actions"): an account of the user's past, not a value set now; a change
    with no year ("We switched to Kafka last week") is not history."""
    t = text or ""
    return DATED.search(t) is not None and _PAST.search(t) is not None


REACTION = re.compile(
    r"^\W*(?:(?:oh|wow|aw+|yeah|yes|yep|and|also|so|honestly|omg|haha|thanks)\W+)*"
    r"(?:i|we)(?:'d|\s+would)\s+(?:really\s+|so\s+|absolutely\s+)?love\s+to\b"
    r"|^\W*(?:(?:oh|wow|aw+|yeah|yes|yep|and|also|so|honestly|omg|haha)\W+)*(?:i|we)\s+"
    r"(?:(?:really|just|also|absolutely|totally|do)\s+)*(?:love|like|enjoy|adore)\s+"
    r"(?:it|this|that|them|to)(?:\s+(?:so\s+much|a\s+lot))?\s*(?:[,.!;:)]|$)"
    r"|^\W*(?:(?:oh|wow|aw+|yeah|yes|yep|and|also|so|honestly|omg|haha)\W+)*(?:i|we)\s+"
    r"(?:(?:really|just|also|absolutely|totally|do)\s+)*(?:love|like|enjoy|adore)\s+"
    r"(?:how|the\s+way|that\s+(?:you|it|they|he|she|we|i|this|there)\b"
    r"|(?:your|their|his|her|these|those)\s)", re.I)
"""A liking that reacts to what was just shown or said, not a lasting taste: its object
is only "it"/"this"/"that" ("I love it!", "We love it, it brings us closer", "Yeah, I
love to."), a manner or a clause ("I love how you framed it", "I love that you kept
going", "I like the way it came out"), someone else's thing or one pointed at ("I love
your garden", "We enjoy those sunsets"), or a wish for one occasion ("I'd love to see
another painting"). "I like it when answers are short" and "I love Bach" name what is
liked."""


def reaction(text: str | None) -> bool:
    """Whether a preference only reacts to the conversation (:data:`REACTION`)."""
    return REACTION.search(text or "") is not None


def relayed(text: str | None) -> bool:
    """Whether a statement passes on someone else's claim (:data:`HEARSAY`: "Lena says
    the review moved to Thursday", 听说…, …だそうです), not the user's own words nor the
    project's document ("as I said", "the README says": :data:`OWN_SOURCE`)."""
    t = text or ""
    return HEARSAY.search(OWN_SOURCE.sub(" ", t)) is not None


def observes(text: str | None) -> bool:
    """Whether a numeric statement reports what was observed or done (a measurement, a
    change, a job's count, something some time ago: :data:`OBSERVATION`,
    :data:`DONE_COUNT`), not a number the user set (:data:`SETTING`,
    :data:`USER_CHANGE`). Two such reports of one thing are two readings, not rival
    values (:func:`memory_core.items.supersession.contradicts`)."""
    t = text or ""
    if SETTING.search(t) is not None or USER_CHANGE.search(t) is not None:
        return False
    return (OBSERVATION.search(t) is not None or DONE_COUNT.search(t) is not None
            or (_LATER.search(t) is not None and _PAST.search(t) is not None))


def data_of(row: Any) -> dict[str, Any]:
    """The row's ``data`` JSON as a dict (``{}`` when absent or unreadable)."""
    try:
        raw = row["data"]
    except (KeyError, IndexError):
        return {}
    if not raw:
        return {}
    try:
        value = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def is_standing_rule(text: str | None) -> bool:
    """Whether ``text`` states a rule that stands beyond the current answer."""
    return bool(text) and STANDING_RULE.search(text or "") is not None


def speaker(row: Any) -> str:
    """Who said the item: the source message's ``name``, else ``""`` (its role)."""
    value = data_of(row).get("speaker")
    return value if isinstance(value, str) else ""


def may_revise(row: Any) -> list[int]:
    """The items a correction may revise (``data.may_revise``, ids oldest first): it
    named only an attribute's head that two or more items qualify ("my font size" after
    "editor font size" and "terminal font size"), so the user is asked which; ``[]``
    for any other item (:func:`memory_core.items.supersession.correction_target`)."""
    value = data_of(row).get("may_revise")
    if not isinstance(value, list):
        return []
    return [int(v) for v in value if isinstance(v, int)]


def zone(row: Any) -> str:
    """The IANA time zone the item was said in (``data.tz``), else ``""`` (UTC)."""
    value = data_of(row).get("tz")
    return value if isinstance(value, str) else ""


def label(row: Any) -> str:
    """The item's ordinal label ("run 39"), else ``""``."""
    value = data_of(row).get("label")
    return value if isinstance(value, str) else ""


_MODAL_ONLY = re.compile(r"\b(?:must|mustn't)\b|必须|务必|必ず", re.I)
"""Rule words that say how a thing is done, not for how long: in a plan's step ("2. It
must return 404 …", 必ずステージングで先に) they bind that step."""


STEP = re.compile(
    r"\b(?:week|day|night|month|quarter|phase|stage|wave|sprint|round)\s+#?\d+\b(?![.,]\d|\s*%)"
    r"|第\s*[0-9一二三四五六七八九十]+\s*(?:周|天|日|个月|阶段|期|轮|波|週|ヶ月|か月)"
    r"|[0-9一二三四五六七八九十]+\s*(?:週|日|か月|ヶ月)目|(?:フェーズ|ステージ|ウェーブ)\s*[0-9]+",
    re.I)
"""A step of a plan named by its place in time or order ("week 1 gets 20% of traffic,
week 2 gets 50%", "day 3", "phase 2", 第二周, 2週目): its figures are one step's, like
those of "Step 2: …", though no ordinal label leads the sentence."""


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


def loose(row: Any) -> bool:
    """Whether the item's number is one its statement does not fix (``data.loose``:
    "try 5", "hello 429"; :func:`memory_core.extraction.quantity.loose`). Rows stored
    before the extraction marked it read ``False``."""
    return bool(data_of(row).get("loose"))


def tentative(row: Any) -> bool:
    """Whether the user hedged the item (``data.tentative``: "I think …", "maybe";
    module doc). Rows stored before the extraction marked it read ``False``."""
    return bool(data_of(row).get("tentative"))


def dated(row: Any) -> bool:
    """Whether the item is the user's plan or obligation for a day they named
    (``data.dated``: "Tomorrow I have to file the VAT report";
    :mod:`memory_core.extraction.dated`): recalled where it matches, with the date its
    words meant, never a standing line (its day passes). Rows stored before the
    extraction marked it read ``False``."""
    return bool(data_of(row).get("dated"))


def extraction_data(ex: Any) -> dict[str, Any]:
    """The ``data`` JSON fields an extracted item (``Extracted``) carries into its row:
    ``negated``, ``task_label``, ``label``, ``loose``, ``tentative``, ``one_off``,
    ``lasting``, ``local``, ``dated`` and ``correction`` (a correction or update: it may
    revise an item it shares no words with, ``memory_core.items.writer.revise_by_meaning``)
    where set (the speaker is the caller's)."""
    data: dict[str, Any] = {"negated": bool(getattr(ex, "negated", False))}
    for name in ("task_label", "label"):
        if getattr(ex, name, None):
            data[name] = getattr(ex, name)
    if getattr(ex, "loose", False) and getattr(ex, "value", None) is not None:
        data["loose"] = True
    for name in ("tentative", "one_off", "lasting", "correction", "local", "dated"):
        if getattr(ex, name, False):
            data[name] = True
    return data


def one_off(row: Any) -> bool:
    """A constraint that extraction found scoped to the answer or the material at hand
    (``data.one_off``: a request's count of the answer's parts, "… in this answer",
    "line 42"; its "always" holds within that scope), or one that does not say it
    stands and fixes no number (a loose number, :func:`loose`, fixes none, nor does an
    age, :data:`AGE`: "Explain it to me like I'm 12")."""
    return row["kind"] == "constraint" and (
        bool(data_of(row).get("one_off"))
        or ((row["value"] is None or loose(row) or AGE.search(row["text"] or "") is not None)
            and not is_standing_rule(row["text"])))


_AFTER_YEAR = re.compile(r"\s*(?:(?:to|and|or|-|\u2013)\s*\d[\d.,]*\s*)?(?P<word>[^\W\d_]+)?")
_YEAR_FOLLOWERS = frozenset(
    "and or but so then when while after before as because since until till through to on"
    " onwards onward we i you he she they it the a an our my his her their this that there"
    " is was were are has had have will would alone already".split())
"""Words that may follow a year; another word after the number is what it counts
("of 2048 tokens"), so the number is a quantity."""


def is_year(value: Any, text: str | None) -> bool:
    """Whether ``value`` is a calendar year its statement dates something by ("since
    2021", "in 2019", 2019年): a date, not a quantity."""
    if not isinstance(value, (int, float)) or value != int(value) or not 1900 <= value < 2100:
        return False
    year = str(int(value))
    t = text or ""
    if re.search(year + r"\s*年", t):
        return True
    for m in re.finditer(r"\b(?:in|since|from|until|till|by|of|back in|circa)\s+" + year
                         + r"\b", t, re.I):
        after = _AFTER_YEAR.match(t, m.end())
        word = after.group("word") if after else None
        if word is None or word.lower() in _YEAR_FOLLOWERS:
            return True  # "in 2019.", "since 2021 and …", "back in 2019 we …"
    return False  # "a maximum of 2048 tokens", "from 1900 to 2000 connections"


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


def lasting(row: Any) -> bool:
    """A user's fact that holds for every later answer (``data.lasting``: a restriction
    of their diet or health, "I'm allergic to peanuts"; set by the extraction)."""
    return row["evidence"] == "user" and bool(data_of(row).get("lasting"))


def fixed_quantity(row: Any) -> bool:
    """A number the user set: a user's numeric fact that is neither one of a series
    (:func:`label`), nor a reported number (:func:`reports_number`), nor a year
    (:func:`is_year`), nor a number its statement does not fix (:func:`loose`), nor
    one said for this occasion only (:data:`THIS_TIME`)."""
    return (row["evidence"] == "user" and row["value"] is not None and not label(row)
            and not loose(row) and not reports_number(row["text"])
            and not is_year(row["value"], row["text"])
            and THIS_TIME.search(row["text"] or "") is None)


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
    someone else is said to have set it (:func:`relayed`, :func:`third_party`)."""
    t = row["text"] or ""
    return (row["kind"] == "fact" and row["evidence"] == "user"
            and DEADLINE.search(t) is not None and not relayed(t) and not third_party(t))


def sources(row: Any) -> list[int]:
    """Every message that stated the item, oldest first: ``data.sources`` (kept when
    a restatement is merged into it, :func:`memory_core.items.writer.store_extracted`),
    else its ``source_message_id`` alone."""
    value = data_of(row).get("sources")
    if isinstance(value, list) and value:
        return [int(v) for v in value if isinstance(v, int)]
    src = row["source_message_id"]
    return [] if src is None else [int(src)]


def occasions(row: Any) -> list[float]:
    """When each conversation that said the item said it (``data.occasions``, UNIX
    seconds, oldest first), kept once a restatement from another conversation is
    merged into it (:func:`memory_core.items.writer.store_extracted`), one per
    conversation (``data.occasion_threads``: their thread ids, in step); ``[]`` for an
    item said in one conversation. A thread that only re-sent a source with its
    history adds none (``data.resent_threads``)."""
    value = data_of(row).get("occasions")
    if not isinstance(value, list):
        return []
    return [float(v) for v in value if isinstance(v, (int, float))]


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


def conversation_local(row: Any) -> bool:
    """Shown only in its own thread (module doc): assistant proposals, items of a
    series (:func:`series`), one-off requests and statements scoped to the task at
    hand (``data.local``)."""
    return row["evidence"] == "assistant" or series(row) or one_off(row) \
        or bool(data_of(row).get("local"))
