"""What makes a number a report rather than one the user fixed.

An observation or a change (:func:`observes`); a reading of a moment, an age, the size
of a change, of a machine or of a thing, what a run gave, how long a trip lasts, a span
counted back from now, someone else's claim (:func:`reports_number`); a calendar year
(:func:`is_year`); a change told as dated history (:func:`dated_history`), unless a
word says the user set it (:data:`SETTING`, :data:`USER_CHANGE`, :data:`PROVISIONED`).
:func:`fixed_quantity` says which of a user's numbers is one they set.

Apart from :mod:`memory_core.items.standing` because these lexicons grow with each new
way of reporting a number, not with the words by which a rule stands. Read by the block
(:func:`memory_core.assembly.block.standing_weight`), by supersession (two readings are
not rival values) and by :mod:`memory_core.items.chitchat`. Pure, no I/O.

A figure is at most 16 characters in every pattern here (``\\d[\\d.,]{0,15}``), so a
pasted row of figures ("1,2,3,…") is read in linear time.
"""

from __future__ import annotations

import re
from typing import Any

from memory_core.items.accounts import relayed
from memory_core.items.description import describes
from memory_core.items.fields import STATED, label, loose


OBSERVATION = re.compile(
    r"\b(?:was|were|took|got|hit|measured|reached|dropped|fell|rose|climbed|spiked|peaked"
    r"|averaged|came in at|ended (?:at|up)|finished in|ran in|clocked|recorded|observed"
    r"|saw|scored|logged|showed|returned|printed|went (?:up|down|from)|jumped|increased"
    r"|came (?:to|in|out)|quoted"
    r"|decreased|grew|doubled|tripled|halved|shrank|improved|regressed|slowed|surged|plunged"
    r"|keeps?\s(?:getting|seeing|hitting|throwing|returning|failing))\b"
    r"|\b\d[\d.,]{0,15}\s*[a-z]*\s+ago\b"
    r"|用了|花了|耗时|测得|测出|跑了|达到了|降到了|升到了|变成了|涨到|涨了|增加到|增加了|减少到"
    r"|减少了|下降到|下降了|上升到|上升了|增长到|增长了|翻了"
    r"|了(?:[一二三四五六七八九十两几半]+|\d+)\s*(?:个)?(?:天|周|星期|月|年|小时|分钟|次|遍|趟)"
    r"|(?<![调改设提])到了\s*\d|比[^，,。；]{1,8}(?:多|少|高|低|快|慢|涨|降)了"
    r"|だった|でした|かかった|かかりました|計測|測定|記録した|になった|になりました"
    r"|に増え|に減っ|に減り|に上が|に下が|に伸び|まで(?:上が|下が|増え|減っ|伸び)", re.I)
"""Words by which a numeric statement reports an observation or a change (module doc):
what a run or a measurement gave, what rose or fell ("积压到了3万条", "900ms
まで上がりました", 比上季度高了12%), what someone quoted, what happened some time ago."""


DONE_COUNT = re.compile(
    r"\b(?!(?:need|seed|speed|feed|embed|indeed|exceed|proceed|succeed|allocated|reserved"
    r"|provisioned|configured|scheduled|assigned|budgeted|limited|capped|fixed|pinned"
    r"|rated|priced|sized|scaled|raised|lowered|reduced|bumped|changed|increased|decreased"
    r"|extended|shortened|upgraded|downgraded|resized|tuned|adjusted|named|called|aged"
    r"|based|located|hosted|listed|numbered|labelled|labeled)\b)"
    r"(?:[a-z]{3,}ed|ran|sent|wrote|built|lost|spent|sold|caught|found|did|gave|fetched"
    r"|bought|paid|made|won|ate|drank|brought|had|took|slept|saw)"
    r"\s+(?:(?:out|off|back|up)\s+)?(?:about\s+|over\s+|nearly\s+|almost\s+|only\s+|just\s+|~\s*)?\d"
    r"|\b\d[\d.,]{0,15}\s+(?:[a-z]+\s+)?(?!(?:need|required|allowed|allocated|reserved|assigned"
    r"|expected|planned|scheduled|budgeted)\b)[a-z]{3,}ed\s*(?:[,.;!)]|$)", re.I)
"""A past verb of work done right before its count ("Synced 4812 files", "processed
1,204 records", "ran 40 tests", "bought 3 chairs", "paid 40 euros", "only had 20 minutes"), or after it at the end of its clause ("3 skipped",
"418 passed, 2 failed"): what a job did, not a number the user set (a verb of setting
— allocated, capped, bumped… — is no such report)."""


USER_CHANGE = re.compile(
    r"\b(?:i|we)(?:'ve|\shave)?\s(?:just\s|also\s|finally\s)?(?:doubled|tripled|halved|grew"
    r"|shrank|shrunk|increased|decreased|moved|set|changed|bumped|raised|lowered|cut|dropped"
    r"|reduced|scaled|resized|upped)\s(?:the|our|my|its|their)\b"
    r"|(?:我们|我|咱们)[^，,。！!？?]{0,8}把[^，,。！!？?]{1,20}?(?:增加|减少|提高|降低|调|改|扩|缩)"
    r"(?:到|为|成)", re.I)
"""A change the user made to a value ("we doubled the replica count to 6", "we moved
the staging cluster to 9 nodes yesterday", 我们把超时增加到了60秒): the number is one
they set, though a change word or a past day reports it."""


_LATER = re.compile(r"\b\d[\d.,]{0,15}\s*[a-z]*\s+later\b"
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


SETTING = re.compile(
    r"\b(?:set (?:it )?(?:to|at)|fixed at|capped at|limited to|is capped|is limited|cap|limit"
    r"|budget|quota|target|deadline|must|should|at most|at least|no more than|up to)\b"
    r"|设为|设置为|设定为|上限|下限|预算|不超过|最多|至少|に設定|上限|予算|以内|以上", re.I)
"""Words by which a number is one the user sets, even in the past tense."""


_KIN = (r"(?:daughter|son|kid|child|children|baby|boy|girl|twins|dog|cat|puppy|kitten|pup"
        r"|mom|mum|mother|dad|father|brother|sister|grandma|grandpa|grandmother|grandfather"
        r"|niece|nephew|wife|husband|partner)")


AGE = re.compile(r"\b\d+[- ](?:day|week|month|year)s?[- ]old\b|\d+\s*(?:岁|歳)"
                 r"|\b(?:i|you|he|she|they|we)(?:'m|'re|'s|\s+am|\s+are|\s+is|\s+was|\s+were)"
                 r"\s+\d+(?=\s*(?:$|[,.;:!?)]|(?:now|and|already|years?|today)\b))"
                 r"|\bturn(?:s|ed|ing)?\s+\d+(?=\s*(?:$|[,.;:!?)]|(?:next|this|on|in|today"
                 r"|tomorrow|soon|and|years?)\b))"
                 r"|\b(?:my|our|his|her|their|(?-i:[A-Z])\w*'s)\s+(?:\w+\s+)?" + _KIN
                 + r"s?(?:\s+(?-i:[A-Z])\w*)?\s+(?:is|are|was|were|'s)\s+(?:now\s+|only\s+"
                 r"|almost\s+|nearly\s+|just\s+)?\d+(?=\s*(?:$|[,.;:!?)]|(?:now|and|already"
                 r"|years?|this|next|today)\b))", re.I)
"""An age: a number that describes, never one the user fixed ("a 10-week-old beagle",
"explain it like I'm 12", "as if I were 10", 5岁, "my daughter turns 7 next week", "My
dog Max is 12 now", "Mel's kids are 5 and 8": a relative's or a pet's age, "She's 2 and
already runs the house"; "my son is 5 minutes away" is no age)."""


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
    r"|around\s+|roughly\s+)?\d[\d.,]{0,15}\s*(?:(?:[kmgtp]i?b|gigs?|gigabytes?|terabytes?)\b"
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
    r"|(?:ever\s+)?since\s+(?:the|my|our|this|that)\s+(?:(?:last|latest|recent|new|newest)\s+)?"
    r"(?:update|upgrade|release|deploy(?:ment)?|patch|install|reboot|restart|migration|outage)"
    r"|shows|showing|peak(?:ed|s)?|on\s+average|this\s+(?:morning|afternoon|evening|week)"
    r"|tonight|overnight|used\s+to\s+(?:be|take|cost|have|run)"
    r"|(?:i|we|you|they)(?:'ve|\s+have)\s+been\s+(?!(?:allowed|told|asked|given|using)\b)\w+ing)\b"
    r"|\btoo\s+(?:big|large|small|slow|long|short|high|low|much|many|few|heavy)\b"
    r"|\b(?:left|remaining|to\s+go)(?=\s*(?:$|[.,;:!?)]))"
    r"|目前|眼下|迄今|截至|今早|今天早上|今晚|上个?月|上周|上星期|去年|昨天|前天|之前是|以前是|此前|峰值|报了|显示"
    r"|太(?:大|小|慢|长|短|高|低|多|少)了"
    r"|先月|先週|去年|昨年|昨日|今朝|前回|その前|これまで|今のところ|現時点|ピーク|平均"
    r"|(?<![今])今(?![後日回度週月年朝夜晩はも])|すぎ(?:る|ます|た)"
    r"|\d+\s*(?:秒|分|時間|日|週間|か月|ヶ月)後に[^。！!？?\n]*(?:ました|した|った)"
    r"|\d+\s*(?:秒|分钟|小时|天)(?:之?后)[^。！!？?\n]*了", re.I)
"""Words by which a number is a reading of a moment or a past period, not a value set:
"right now", "so far", "last month", "up from 0.5 %", "the sprint before it", "the
dashboard shows …", "peaked", "Glucose this morning: 6.1", "this week", "it used to be
20", "48 MB, which is too big" (a reading judged against a
limit), "since the last update" (what a change brought), 目前, 上个月, 峰值, 报了 N 个,
先月, その前, 今 (not 今後 nor 今は, an update),
"… N 分後に失敗しました" (when a run failed), "I've been going to the gym three times a
week" (an activity told as it goes on), what is left ("two days left", "3 seats
remaining", "5 km to go": a count down that the next day changes). A word of setting (:data:`SETTING`: a
budget, a limit, a target) still fixes the number ("last month we set the cap to 50")."""


RUN_RESULT = re.compile(
    r"\b\d[\d,]*\s+(?:[a-z]+\s+)?(?:fail(?:ure)?|pass|error|crash|break|flake)(?:s|es|ing)?\b"
    r"(?!\s+(?:after|before|in\s+a\s+row)\b)"
    r"|\b(?:(?:error|failure|warning|bug|crash|incident|alert|flake|test|user|visitor"
    r"|signup|download|ticket|issue)s?\s+count|(?:test\s+|code\s+)?coverage|(?:pass|failure"
    r"|error|hit|success|crash)\s+rate|number\s+of\s+\w+)\b(?=[^.;!?\n]*\bnow\b)"
    r"|\b(?:is|are|'s|'re)\s+(?:now\s+)?down\s+to\b"
    r"|\b(?:takes?|lasts?|costs?|weighs?)\s+(?:about\s+|around\s+|over\s+|under\s+)?\d"
    r"[^.;!?\n]*\bnow\b"
    r"|(?:覆盖率|错误数|报错数|失败数|通过率|错误率)[^，。；]{0,10}现在|现在[^，。；]{0,6}(?:覆盖率"
    r"|错误数|报错数|失败数|通过率|错误率)", re.I)
"""What a run gave, counted in the present tense ("now 12 tests fail instead of 3"), or
a measured count or rate given "now" ("Coverage is down to 74% now", "The error count
is 41 now, not 12", "still 4 failures", "the export takes 55 minutes now", 覆盖率现在是74%):
a new reading, not a value the user fixed ("My
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
    r"\b\d[\d.,]{0,15}\s*(?:mm|cm|m|km|metres?|meters?|in|inch(?:es)?|ft|feet|foot|yards?)\s+"
    r"(?:wide|high|tall|long|deep|thick|across|in\s+(?:width|height|length|diameter))\b"
    r"|\b(?:covers?|covering|measures?|measuring)\s+(?:about\s+|around\s+)?\d[\d.,]{0,15}\s*"
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
    r"|\b(?:it|that|this|which)(?:'s|\s+is|\s+was)\s+(?:now\s+|still\s+|already\s+)?at\s+"
    r"\d[\d.]*\s*%"
    r"|\bat\s+\d[\d.]*\s*%\s+(?:cpu|memory|mem|ram|disk|heap|load|utili[sz]ation|usage)\b"
    r"|\b(?:gives|gave|yields|yielded|scores|scored)\s+(?:an?|the)\s+[\w-]+(?:\s+[\w-]+)?\s+of\s+\d"
    r"|\b(?:more|less|fewer|higher|lower|bigger|smaller)\s+than\s+(?:usual|normal|before"
    r"|expected|last\s+(?:time|week|month|year))\b"
    r"|\b(?:[a-z]+ed|caught|came|went|got|ran|began|became|took)\s+(?:\w+\s+)?"
    r"after\s+\d[\d.]*\s*(?:s|secs?|seconds?|mins?|minutes?|h|hrs?"
    r"|hours?)\b"
    r"|(?:CPU|内存|磁盘|负载|使用率)[^，。；\n]{0,4}?(?:到了|达到|是|在)\s*\d[\d.]*\s*%"
    r"|(?:CPU|メモリ|ディスク|使用率|負荷)[^、。\n]{0,4}?(?:が|は)\s*\d[\d.]*\s*%", re.I)
"""A reading of a machine or a model: a resource's use ("db primary CPU at 97%", "it's at 91%", CPU
到了95%, CPUが97%です), what a run or a cell gave ("Cell 14 gives an AUC of 0.87"), an
amount against the usual ("about $20 more than usual"), when something came back
("writes recovered after 4 min"): what was seen, not a value the user set."""


MOVEMENT = re.compile(
    r"^\W*(?:(?:so|and|but|now|then|ok|okay)\W+)?(?:[\w-]+\s+){1,3}?(?:(?:is|are|'s|'re)\s+)?"
    r"(?:(?:down|back)\s+(?:to|under|below|over|above|at)|up\s+(?:over|above|at))\s+"
    r"(?:about\s+|around\s+|~\s*)?\d"
    r"|\b(?:up|down)\s+(?:by\s+)?\d[\d.,]{0,15}\s*(?:%|points?|pts|percent|percentage\s+points)"
    r"(?=\s*(?:$|[.,;:!?)]|\s+(?:from|on|over|since|vs)\b))"
    r"|\b\d[\d,]{0,15}\s*/\s*\d[\d,]{0,15}\s+(?:[a-z-]+\s+)?(?:in\s+use|used|busy|active|ready"
    r"|healthy|running|up|done|complete)\b"
    r"|(?:^|[,;:]\s*)\d[\d,]{0,15}\s+(?:waiting|queued|pending|in\s+flight|in\s+progress"
    r"|outstanding|backlogged|stuck|retrying)(?=\s*(?:$|[.,;:!?)]))", re.I)
"""A measure told by where it moved or how full it is, with no verb of setting: a
verbless "<measure> down to N" or "<measure> is back under N" ("Error rate down to 6%",
"5xx back under 1%"; "up to N" is a bound, not a move), a move by so many points or percent ("we're up 5 points"), a
count against its capacity ("200/200 in use", "1/2 pods ready"), a count of what
waits ("340 waiting", "12 queued"): a reading of the moment. An order with the same
words ("Cut it down to 5 bullets") is a constraint, never a fact read here. A figure
is at most 16 characters ("1,000,000,000"), so a pasted row of figures is read in
linear time."""


SCALE = re.compile(r"\b\d+(?:\.\d+)?\s+out\s+of\s+(?:5|10|100)\b", re.I)
"""A rating on a scale ("headache down to a 3 out of 10", "I'd give the hotel 4 out of
5"): how something felt or fared, not a value the user set ("score at least 8 out of
10" sets one: :data:`SETTING`)."""


THIS_TIME = re.compile(r"\b(?:this|just\s+this)\s+(?:time|once)\b|今回|这次|这一次|本次|这回",
                       re.I)
"""Words that scope a statement to the one occasion at hand ("This time two options
are enough", 今回は1案でいいです, 这次给1个就行): its number holds for that occasion."""


_SPAN_COUNT = (r"(?:\d[\d.,]{0,15}|an?|one|two|three|four|five|six|seven|eight|nine|ten|eleven"
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
    tests fail", "Coverage is down to 74% now"), a measure told by its move or its fill
    (:data:`MOVEMENT`: "Error rate down to 6%", "200/200 in use"), a rating on a scale
    (:data:`SCALE`), how long a trip lasts (:data:`OCCASION_LENGTH`), a description of
    how things are (a job's progress, an observed rate, an inventory, a plan, a game's
    rules, a tool's capability: :func:`memory_core.items.description.describes`), a span
    counted back from now (:data:`ELAPSED`: "four months ago"), unless a word says the number is set (a budget, a limit, a target);
    a value the user denies having said (:data:`UNSAID`) is never one set."""
    t = text or ""
    if UNSAID.search(t) is not None:
        return True  # "I never said the budget was $5k": denied, even a budget
    if SETTING.search(t) is not None:
        return False
    if (observes(t) or FEELING.search(t) is not None or CHANGE_SIZE.search(t) is not None
            or RUN_RESULT.search(t) is not None or OCCASION_LENGTH.search(t) is not None
            or DIMENSION.search(t) is not None or USAGE.search(t) is not None
            or SCALE.search(t) is not None or MOVEMENT.search(t) is not None
            or describes(t) or (READING.search(t) is not None and USER_CHANGE.search(t) is None)):
        return True
    if EQUIPMENT.search(t) is not None and PROVISIONED.search(t) is None:
        return True
    return relayed(t) or AGE.search(t) is not None or ELAPSED.search(t) is not None


UNSAID = re.compile(
    r"\b(?:i|we)\s+(?:never|didn['’]t|did\s+not|don['’]t\s+think\s+(?:i|we))\s+(?:ever\s+)?"
    r"(?:said|say|told|tell|wrote|write|claimed|claim|promised|promise|agreed|agree)\b"
    r"|我(?:从来)?(?:没|没有|从没|从未)(?:说过|说|讲过|答应过)"
    r"|(?:とは|って)(?:言って|言い)(?:い)?ません", re.I)
"""Words by which the user denies having said a value ("I never said the budget was $5k",
"I didn't say 3 weeks", 我没说过预算是五千): the number is the one denied, not one set."""


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


_AFTER_YEAR = re.compile(r"\s*(?:(?:to|and|or|-|\u2013)\s*\d[\d.,]{0,15}\s*)?(?P<word>[^\W\d_]+)?")
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


def fixed_quantity(row: Any) -> bool:
    """A number the user set: a user's numeric fact that is neither one of a series
    (:func:`memory_core.items.fields.label`), nor a reported number
    (:func:`reports_number`), nor a year (:func:`is_year`), nor a number its statement
    does not fix (:func:`memory_core.items.fields.loose`), nor one said for this
    occasion only (:data:`THIS_TIME`)."""
    return (row["evidence"] in STATED and row["value"] is not None and not label(row)
            and not loose(row) and not reports_number(row["text"])
            and not is_year(row["value"], row["text"])
            and THIS_TIME.search(row["text"] or "") is None)
