"""Cue-word tables for Chinese and Japanese (see ``lexicon`` for sources and conventions).

Chinese tables are written in simplified script only: sentences are folded from
traditional before matching (``prepare.fold_traditional``). Phrases are literal; each
unanchored table is a ``cue.Cue`` gated by its own phrases.
"""

from __future__ import annotations

import re

from memory_core.extraction import leads
from memory_core.extraction.cue import Cue, alt, cjk_cue

# --- Chinese (simplified; traditional is folded before matching) ---------------------
# Corrections (issue 3: 更正, 其实; and 不对，是…), fillers, small talk, requests,
# hypotheticals and reported speech, as for English.
ZH_CORRECTION = re.compile(
    r"^(?:" + alt("更正一下|更正|纠正一下|纠正|修正一下|修正|其实|不对|不是的|错了|说错了|我说错了"
                  "|我搞错了|我记错了|我写错了|抱歉我说错了|我之前说错了|我刚才说错了|我之前记错了"
                  "|我刚才记错了|等等|等一下|改一下|更新一下|应该说"
                  "|准确地说|准确来说|严格来说|我的意思是|我是说") + r")[\s,，:：。!！、]*"
)
ZH_FILLER = re.compile(r"^(?:" + alt("另外|还有|顺便说一下|顺便|对了|记住|请记住|注意|提醒一下"
                                     "|补充一下|补充|然后|所以|那个|嗯|哦|好的|好了|好啦|行了|好|总之|此外"
                                     "|不好意思|打扰一下")
                       + r")[\s,，:：、]*|^" + leads.ZH_GREETING)
ZH_SMALL_TALK = re.compile(
    r"^(?:(?:" + alt("好的|好了|好啦|好|嗯|嗯嗯|谢谢|谢谢你|谢谢啦|多谢|感谢|收到|没问题|可以|行|哈哈|哈哈哈"
                     "|好吧|明白|明白了|知道了|懂了|你好|您好|早上好|晚上好|早|辛苦了|不客气"
                     "|对|对的|是的|没事|太好了|完美|厉害|棒|好滴|ok|了解|继续|好的谢谢|谢啦"
                     "|不错|很好|可以的|没关系|再见|拜拜|嗨|哦|噢|原来如此|有道理|赞")
    + r"|(?:记住|记好|记下|明白|懂|听懂|看懂|清楚|知道|收到|了解|听到|听见|好|行|可以|对)?了?"
    r"(?:吗|么|嘛|没有?)|(?:对|是|好|行)不(?:对|是|好|行))[\s,，.。!！~～?？、]*)+$", re.I
)
"""A sentence made only of greetings, thanks and acknowledgements, or of a check that
asks nothing (记住了吗, 明白了吗, 好吗, 对不对; 了吗 where the filler took 记住)."""
ZH_QUESTION_END = re.compile(r"(?:吗|么|嘛|呢)[\s。.!！~]*$")
ZH_QUESTION_WH = re.compile(r"在哪(?:里|儿)?(?![里儿都也怕])"
                            r"|(?:哪里|哪儿|哪个|哪天|谁|多少|几点|何时|为何|为什么)[\s。.!！~]*$")
"""A Chinese question without 吗 or a question mark: a question word in place, where
the answer goes (我住在哪里, 我在哪里工作); not its indefinite use (在哪里都行)."""
ZH_REQUEST = re.compile(r"^(?:请|麻烦)?(?:你|您)?(?:" + alt("能不能|能否|可不可以|可以帮|能帮|帮我"
                                                            "|帮忙|麻烦你|请你|请帮|给我|告诉我"
                                                            "|解释一下|看一下|看看|查一下")
                        + r")")
ZH_HYPOTHETICAL = re.compile(r"^(?:" + alt("如果|假如|要是|假设|假使|万一|倘若|若是") + r")")
ZH_REPORTED = re.compile(
    r"^(?P<who>[^，,。；\s]{1,10}?)(?:"
    + alt("说过|说|告诉我|告诉我们|表示|提到|认为|觉得|要求|写着|写道|写的是|提醒我|建议|讲")
    + r")[\s,，:：]*"
)
ZH_FIRST_PERSON = re.compile(r"^(?:我们|我|咱们|咱|本人)")
ZH_FIRST_PERSON_FRAME = re.compile(
    r"^(?:我们|我)(?:觉得|认为|感觉|猜|估计|相信|发现|注意到|听说|知道)")
# Preferences (issue 3: 我喜欢/我更喜欢/偏好) and habits (我不吃辣).
ZH_PREFERENCE = Cue(re.compile(
    r"^(?:我们|我|咱们)?(?:其实|真的|一直|还是|也|都|个人|本人|平时|通常|非常|特别|很|比较|更|最){0,3}"
    r"(?P<neg>不太|不怎么|不大|不)?(?:" + alt("喜欢|爱|偏好|倾向于|倾向|讨厌|宁愿|宁可|习惯|偏爱"
                                              "|受不了") + r")"
    r"|^(?:我们|我)(?:还是|更|比较|其实)?(?:希望|想要|宁愿|宁可)|偏好|最好是|最好|我的首选|首选"
    r"|^(?:我们|我)(?:从来|一般|平时|基本)?不(?:吃|喝)"
    r"|^(?:我们|我)(?:一般|平时|基本)?只(?:考虑|接受|投资|投|买)"
), marks="喜欢|爱|偏好|倾向|讨厌|宁愿|宁可|习惯|受不了|希望|想要|最好|首选|不吃|不喝|只考虑|只接受"
         "|只投资|只投|只买")
ZH_CALL_ME = re.compile(r"^(?:你|您)?(?:以后|就|可以|直接)*叫我"
                        r"(?![一起去来写帮做看干过回吃开把给跟查试改上下出进走打拿找接送提醒])"
                        r"(?P<name>[^，,。！!？?\s]{1,10}?)"
                        r"(?:就行|就好|就可以|吧|好了|啦)?(?=$|[，,。！!])")
"""How the user asks to be addressed (叫我小王就行): a preference keyed 称呼; not an
errand (叫我起床 "wake me up", 叫我去开会, 叫我帮你看看)."""
JA_CALL_ME = re.compile(r"(?P<name>[^、。「」\s]{1,12}?)(?:って|と)呼んで(?:ください|ね|ほしい)")
"""The same in Japanese (サムと呼んでください); not when the name follows a topic or an
object (この関数はparse_argsと呼んでください names a thing: :data:`JA_CALL_ME_OTHER`)."""
JA_CALL_ME_OTHER = re.compile(r"[をが]|(?<!のこと)(?<!今後)(?<!これから)(?<!以降)(?<!次から)は")
"""A topic or object before the name of :data:`JA_CALL_ME`: what is named is not the
user (私のことは, 今後は are no such topic)."""
_ZH_KIN = (r"老婆|老公|妻子|丈夫|太太|先生|女儿|儿子|孩子|宝宝|小孩|妈|爸|母亲|父亲|家人|家里"
           r"|朋友|同事|老板|男朋友|女朋友|对象|哥|姐|弟|妹|爷|奶|外公|外婆")
_ZH_NOT_ALLERGEN = r"会议|开会|加班|上班|工作|早起|周一|数学|文档|领导|形式主义|PPT"
ZH_DIET = re.compile(
    r"^(?:我们|我)(?:是|一直|从小|现在|已经|也|都)?(?P<trait>(?:纯)?素食(?:主义)?者?(?![餐店厅馆品菜])|吃素"
    r"|对(?!" + _ZH_NOT_ALLERGEN + r")[^，,。！!？?对不没]{1,10}过敏"
    r"|(?!" + _ZH_KIN + r"|有点|昨天|今天|最近|好像)[^，,。！!？?对不没]{1,6}过敏"
    r"|乳糖不耐受?|色盲|色弱|红绿色盲|阅读障碍)(?!了)")
"""A lasting restriction of the user's diet or health (我是素食者, 我对花生过敏): a
fact that holds for every later answer (``lasting``); not another's (我老婆对海鲜过敏),
not a place (我们是素食餐厅), not an episode (我昨天过敏了), not a figure of speech
(我对开会过敏)."""
JA_DIET = re.compile(
    r"(?P<trait>ベジタリアン|ヴィーガン|ビーガン|菜食主義(?:者)?|[^、。，,]{1,10}アレルギー|乳糖不耐症"
    r"|色覚異常|色弱|ディスレクシア)"
    r"(?:な(?!い)|で(?!は|も|した)|です(?!か)|だ(?!った)|があります|持ち)")
"""The same in Japanese (私はベジタリアンなので, 卵アレルギーがあります), after a
first-person topic."""
JA_NOT_ALLERGEN = re.compile(r"会議|仕事|残業|月曜|数学|英語|勉強|上司|書類|電話|昔|以前|かつて")
"""A JA_DIET trait that is a figure of speech (会議アレルギー: "allergic to meetings")
or that held once (昔ベジタリアンだった)."""
ZH_HABIT = re.compile(r"^(?:我)(?:一般|平时|通常|都|总是|一直|只)?(?:用|使用)(?!了|过|完)")
"""The user's own convention ("我用公制单位"): a preference (issue 24, kind 10)."""
JA_HABIT = re.compile(
    r"^(?P<o>[^。、，,]{1,30}?)を(?:いつも|普段|主に)?使(?:っています|います|ってます)")
"""「(私は)メートル法を使っています」 after a first-person topic: a preference (issue 24,
kind 10)."""
ZH_PREFERENCE_NEG = re.compile(r"不太|不怎么|不大|不喜欢|不爱|讨厌|受不了|不要|不想|不吃|不喝")
# Constraints (issue 3: 必须/不要/务必/禁止), bounds (不超过, 控制在…以内) and standing
# orders (以后都…). 别 counts unless it is part of 特别/区别/别的….
ZH_CONSTRAINT = Cue(re.compile(
    r"(?:" + alt("必须|务必|一定要|一定得|千万|永远不要|永远别|总是|始终|一律|每次都|只能|最多|至少"
                 "|不超过|不要超过|不能超过|确保|保证|严禁|禁止|不许|不准|不得|切勿|不可以|不要"
                 "|以后都|以后请|以后要|今后|从现在开始|从现在起|默认|记得|得先|一定要|要保持"
                 "|要控制|保持在|控制在|不低于|不高于|不少于|不多于|不能低于|不得低于|不得超过")
    + r")|(?<![特区分类级告识差个派性])别(?![的人处])|^(?:请|你)?不能|^勿"
    + r"|(?:以后|今后)(?!再)[^，,。；请]{1,10}?请(?!客|吃|喝|你吃|你喝|假|都|一律|统一|用|使用|保持"
    r"|写|加|带|附|以|按)"
    + r"|^(?:请|你|以后|今后|往后|从现在起|从现在开始)?[，,]?(?:不需要|无需|不必|用不着)"
    r"(?!担心|客气|谢|道歉|着急|急|紧张|在意|害怕|麻烦|抱歉|要|的)"
), marks="必须|务必|一定|千万|永远|总是|始终|一律|每次都|只能|最多|至少|不超过|不要|不能"
         "|确保|保证|严禁|禁止|不许|不准|不得|切勿|不可以|以后|今后|从现在|默认|记得|得先"
         "|保持在|控制在|要保持|要控制|不低于|不高于|不少于|不多于|别|勿|不需要|无需|不必|用不着")
"""Also an order that opens by saying something is not needed ("不需要解释，直接给我命令"),
an order with 请 after 以后/今后 and its occasion ("以后写代码请优先考虑性能"; not 以后再请,
请客, 请假; "以后回复请用…" is a topic's order, read by the rules with its topic),
not reassurance (不用担心, 不必客气) nor a noun it calls unneeded ("不必要的依赖都要删掉",
"不需要的文件一律删除": an order to remove them)."""
ZH_CONSTRAINT_NEG = re.compile(r"不要|不许|不准|不得|禁止|严禁|切勿|不可以|不能|别|勿|永远不"
                               r"|不需要(?!的)|无需|不必(?!要)|用不着")
# Decisions (issue 3: 决定用…; also 就用/那就…吧/打算用).
ZH_DECISION = Cue(re.compile(
    r"(?:" + alt("决定|定了|就用|就这么定|那就|我们选|选定|采用|改用|确定用|敲定|统一用|就选|定为"
                 "|拍板|最终选|最后选|我们就用|选择了|选了|计划用|准备用|准备采用")
    + r")|用[^，,。]{1,20}吧"
    r"|打算(?=[^，,。；]{0,20}?(?:用|采用|改用|换成|换用|迁移到|迁到|切换到|换到|选))"
), marks="决定|定了|就用|就这么定|那就|选|采用|改用|确定用|敲定|统一用|定为|拍板|我们就用"
         "|打算|计划用|准备用|准备采用|吧")
"""A choice the user made (决定, 就用, 采用…); 打算 "intend" only with what it chooses
(打算用 Kafka, 打算从 RabbitMQ 迁移到 Kafka), as 计划用 and 准备用: 打算办个派对 plans
an event, no choice."""
# Assistant proposals (我建议, 可以考虑, 不妨…).
ZH_PROPOSAL = cjk_cue("我建议|建议|可以考虑|不妨|或许可以|也许可以|要不要|要不|我们可以|你可以"
                      "|推荐|最好|是否可以|可以试试|试试|不如|我可以帮你|我可以")
# Orders without a cue word ("重试三次"): standing when a number, condition or scope
# word (ZH_STANDING) comes with them.
ZH_IMPERATIVE = re.compile(r"^(?:请|麻烦)?(?:" + alt("把|将|用|使用|保持|控制|限制|设置|设为|重试"
                                                   "|回答|回复|保留|先|都用|统一|每次|设定|写|改")
                           + r")")
ZH_STANDING = re.compile(alt("以后|今后|每次|所有|都|一律|默认|总是|始终|永远"))
ZH_STANDING_LEAD = ("从今以后|从今往后|从此以后|从此|从现在开始|从现在起|从今天开始|从今天起"
                    "|从明天开始|从明天起|以后|今后|往后")
"""Leads by which what follows holds from now on ("从现在开始所有回复都要带上来源"):
a rule's lead when the rest says it holds for all (都, 一律…), and an unmarked update
(ZH_UPDATE) that starts there, not at its 现在."""

# --- Japanese ------------------------------------------------------------------------
# Corrections (issue 3: 訂正, 実は; and じゃなくて, やっぱり), fillers, small talk, requests,
# hypotheticals and reported speech (…と言っていました), as for English.
JA_CORRECTION = re.compile(
    r"^(?:" + alt("訂正です|訂正します|訂正させてください|訂正|修正です|修正します|実は|いや|いいえ"
                  "|違います|違いました|間違えました|間違いでした|正しくは|やっぱり|やはり|失礼しました"
                  "|ごめんなさい|ごめん|すみません間違えました|言い間違えました")
    + r")[\s、,。:!！]*"
)
_ZH_MOVED = (r"(?:搬到|搬去|跳槽到|跳槽去|调到|转到|改(?:喝|吃|做|学|坐|骑|开|住|读|练|抽|穿|听|玩|走|去))"
             r"(?!一半|很晚|半夜|深夜|现在)(?=[^，。；,;就太的吗]{0,16}了)"
             r"|(?<![不没别未])换(?![行成到个一])(?=[^，。；,;就太的吗了]{1,4}了)")
"""Chinese changes told as done: a move or a switch of what one does (我上周搬到深圳了,
跳槽去了一家创业公司, 我最近改喝燕麦拿铁了, 从下周开始我改做后端了) and a swapped thing
(我换邮箱了, 换手机了); with its 了, not a plan (下个月搬到深圳) nor a line break (换行了)."""
ZH_MOVED = re.compile(_ZH_MOVED)
ZH_WISH = re.compile(r"想|希望|要(?!求)|会(?!议)")
"""A wish or a will before a :data:`ZH_MOVED` change (我不想搬到成都了, 我明年会搬到成都了):
no change told as done; :data:`ZH_REPLACE_BLOCK` covers plans and conditions."""
_ZH_SLOT_AHEAD = (r"(?=(?:每)?(?:周|星期|礼拜|禮拜)[一二三四五六日天]|[上下中]午|早上|晚上"
                  r"|[零一二三四五六七八九十两兩\d]+[点點号號])")
"""A weekday or a clock time next ("周会改到周四下午两点。", "例会调到三点"): a recurring
slot moved, a change told as decided without 了 (:data:`ZH_UPDATE`; one occasion,
"这周的会议改到周四", is :data:`ZH_ONE_SLOT`'s)."""
ZH_ONE_SLOT = re.compile(r"这周|這週|本周|这次|這次|本次|今天|明天|今晚|后天|後天|下周的|下次")
"""What makes a moved slot one occasion's ("这周的会议改到周四", "明天的会改到下午三点"):
no update (:data:`_ZH_SLOT_AHEAD`)."""
ZH_UPDATE = re.compile(ZH_STANDING_LEAD + r"|现在|如今|目前已经|改成|改为|改用|换成|换到|切换到"
                       r"|迁移到|不再|(?:改到|涨到|降到|推迟到|延期到|提前到)(?!一半|很晚|半夜|深夜|现在)"
                       r"(?=[^，。；,;就太的吗]{0,16}了)|(?:改到|调到|挪到)(?![^，。；,;]{0,16}(?:的话|吗|？|\?))"
                       + _ZH_SLOT_AHEAD
                       + "|" + _ZH_MOVED)
"""Unmarked Chinese updates ("部署现在改成Argo CD了", "会议改到周四了": 改到 when done, or
before a weekday or clock time (:data:`_ZH_SLOT_AHEAD`: 周会改到周四下午两点), not a plan of
one occasion "这周的会议改到周四" (:data:`ZH_ONE_SLOT`), nor a move supposed or asked
about ("周会改到周四的话…", "周会改到周四下午吗？"), nor a 了 that closes a request
or a judgement "改到30秒就好了", "改到周四的话就来不及了", nor how far the editing got "代码改到一半了",
"昨天我改到很晚了"); a value that rose, fell or moved to a new one the same way
("房租涨到1300欧元了", "回顾会推迟到周四了", 降到, 延期到, 提前到), unless the clause makes
it a passing reading (:data:`CJK_PASSING`); the match's start cuts the subject."""
CJK_PASSING = re.compile(r"期间|的时候|时候|瞬间|一度|峰值|高峰|测试中|压测"
                         r"|中に|の間|の時|のとき|時に|一時|ピーク|負荷|(?<=\S)(?:以后|之后|后)[，,]|(?<=\S)後(?:に|、|,)")
"""What makes a value that rose or fell a reading ("压测的时候CPU涨到了95%",
"テスト中にCPUが95%に上がった", after an event: "昨天上线以后，延迟涨到了650毫秒",
"デプロイ後に…に上がった", as English :data:`~memory_core.extraction.lexicon.EN_PASSING`):
it replaces nothing."""
CJK_RISE = re.compile(r"涨到|降到|に上が|に下が")
"""The update cues of a value that rose or fell by itself (:data:`CJK_PASSING` applies)."""
_JA_BECAME = (r"(?<=[0-9０-９])(?:[^\s、。，,！!？?ぁ-ゖァ-ヺー]{0,3}|ミリ秒|マイクロ秒|パーセント"
              r"|ドル|ユーロ|バイト)になりました(?!ら)|曜日?になりました(?!ら)"
              r"|(?:異動|転勤|変更|移動|延期|配属|昇進)になりました(?!ら)")
"""になりました after a value (a number and its unit, a weekday: "上限は8万円になりました",
"締め切りは金曜日になりました") or a noun of a change decided ("SREチームに異動になりました",
"来週に延期になりました"), not after a state ("エラーになりました", "お世話になりました",
"勉強になりました") nor as a condition ("5回になりましたら")."""
JA_UPDATE = re.compile(r"今は|現在は|最近は|に変更|に延期|に(?:変わ|替わ|代わ)(?:りました|った)"
                       r"|に(?:変え|替え|換え)(?:ました|た)(?!ら|り)|に(?:上が|下が)(?:った|りました)|"
                       + _JA_BECAME
                       + r"|に切り替え|に移行|に設定|を(?=[^、。をはが]{1,30}?にして(?!から|も|は|い))"
                       r"|今日から|に引っ越し(?:ました|た)|に一本化し(?:ました|た)|に乗り換え(?:ました|た)"
                       r"|(?:先月|先週|今月|今週|昨日|去年|来月|来週|明日)から"
                       r"|今後は|これからは|以降は|次回から|次からは|もう[^。]{0,12}ません")
"""Unmarked Japanese updates ("デプロイは今はArgo CDです", "金曜日に変更しました",
"上限は8万円になりました", "木曜日に延期", a change told as done: "札幌に引っ越しました",
"エディタをVS Codeに変えました", "リーダーは鈴木さんに替わりました", "最近は自転車で通勤しています",
"窓口はフォームに一本化しました", a value that rose or fell: "家賃は1300ユーロに上がった",
unless a passing reading: :data:`CJK_PASSING`), and change orders "XをYに変更して",
"XをYに設定して", "XをYにして" (the cue of the last is its を: X is the attribute)."""
ZH_ADDITIVE = re.compile(r"也(?!许|就|好|罢)|还(?!是|没|不|要|得|在|好|行|剩)"
                         r"|另外|此外|同时|再加上")
"""Chinese words by which a statement adds to what holds ("现在也用 Redis 存会话了",
"另外前端现在用 Vue"): dated by 现在, it revises nothing. Not 也许 (maybe), 也就是说,
还是/还没/还在/还剩 ("still", "not yet", "left") nor 还好/还行."""
JA_ADDITIVE = re.compile(r"(?<=[\u4e00-\u9fff\u30a0-\u30ffA-Za-z0-9])(?<![今何誰度少最回])"
                         r"(?:に|で|と)?も(?=[使併追導利採入保])|に加えて|のほかに|の他に|併用")
"""Japanese forms by which a statement adds ("今はMySQLも使っています", "Redisにも保存",
"Slackに加えてTeamsも使う"): も after a noun (and a case particle) before a verb of
using, adding or keeping; not 今も ("still"), 何も, 誰も."""
ZH_EVALUATIVE = re.compile(r"太棒|很棒|真棒|好棒|不错|厉害|开心|高兴|快乐|喜欢|爱死|讨厌|可爱"
                           r"|漂亮|好看|好吃|好玩|有趣|无聊|感动|感激|感谢|幸运|骄傲|难过|伤心"
                           r"|辛苦|累死|美好|精彩|激动|兴奋|担心|紧张|害怕|糟糕|难受|舒服|佩服")
"""Chinese words that judge or feel rather than state a value (这张照片太棒了,
很高兴能帮上忙)."""
JA_EVALUATIVE = re.compile(r"すごい|凄い|素晴らし|素敵|最高|最悪|楽し|嬉し|うれし|悲し|可愛"
                           r"|かわい|綺麗|きれい|美味し|おいし|面白|つまらな|大変|感動|感謝|幸せ"
                           r"|残念|心配|怖い|好き|嫌い|ワクワク|わくわく|ドキドキ")
"""Japanese words that judge or feel rather than state a value (その写真は素敵ですね,
楽しかった)."""
ZH_CHANGE = re.compile(r"改成|改为|改用|换成|换到|换了|切换|迁移|迁到|不再|搬到|搬家|搬去|升级|降级"
                       r"|升到|降到|调到|调成|替换|取代|回滚|不用了|改到|" + _ZH_MOVED)
JA_CHANGE = re.compile(r"に変更|に変わ|に替わ|に代わ|に変え|に替え|に換え|に切り替え|切り替えました|に移行|移行しました|乗り換え"
                       r"|置き換え|の代わりに|引っ越|一本化|に上げ|に下げ|やめ|もう[^。]{0,12}ません"
                       r"|になりました")
"""The Chinese and Japanese forms of ``lexicon.EN_CHANGE``: a change verb (换成, 搬到,
に移行, 乗り換え), not only 现在 or 今は."""
# Replacements (the Chinese and Japanese forms of ``lexicon.EN_REPLACE``): 把X换成Y,
# 从X迁移到Y, 用Y替换X, Y取代了X, 不再用X, 回滚到Y; XからYに移行, XをYに置き換え, Xの代わりに
# Y, Yに戻し. Groups as in English: ``old``, ``new``, ``what``; the verb's kind decides
# whether 把X/Xを is the old value or the attribute (``replacement``).
_ZH_NP = r"[^，,。；;！!？?把从用]{1,20}?"
_ZH_TAIL = r"[^，,。；;！!？?]{1,30}"
_ZH_TIME = (r"(?:今天|明天|后天|下周|下星期|下个?月|下季度|本周|这周|即日|今日|现在|此|今|明年|下一"
            r"|[0-9一二三四五六七八九十]+[月号日])")
"""What 从 leads that is a time ("从明天起…改为10秒"), not the old value."""
_ZH_SWAP_VERB = ("替换成|替换为|换成|换为|改成|改为|切换成|切换为|迁移到|迁移至|迁到|切换到|换到"
                 "|转到|搬到")
_ZH_SET_VERB = ("升级到|升级成|升级至|降级到|降级至|升到|降到|调到|调成|调整到|调整为|调整成|提高到"
                "|提升到|增加到|减少到|降低到|缩短到|延长到|扩大到|缩小到"
                r"|设(?:置)?[为成](?=[^，。；,;就太的吗]{0,16}了)")
"""Verbs that give an attribute a new value: a change (调到, 提高到), or 设为 told done
by 了 ("把日志保留期设为30天了"; "设为10分钟" alone may be an order or a plan)."""
_ZH_BACK_VERB = "回滚到|回退到|退回到|换回|改回|切回|回到"
ZH_REPLACE: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("move", re.compile(r"(?P<what>[^，,。；;！!？?从]{0,12}?)从(?!" + _ZH_TIME + r")(?P<old>"
                        + _ZH_NP + r")(?:"
                        + _ZH_SWAP_VERB + "|" + _ZH_SET_VERB + "|改到" + r")了?(?P<new>"
                        + _ZH_TAIL + ")")),
    ("swap", re.compile(r"把(?P<old>" + _ZH_NP + r")(?:" + _ZH_SWAP_VERB
                        + r")了?(?P<new>" + _ZH_TAIL + ")")),
    ("set", re.compile(r"(?:把|将)?(?P<what>" + _ZH_NP + r")(?:" + _ZH_SET_VERB
                       + r")了?(?P<new>" + _ZH_TAIL + ")")),
    ("revert", re.compile(r"(?:把|将)?(?P<what>[^，,。；;！!？?把]{0,20}?)(?:" + _ZH_BACK_VERB
                          + r")了?(?P<new>" + _ZH_TAIL + ")")),
    ("swap", re.compile(r"用(?P<new>" + _ZH_NP + r")(?:替换|替代|取代|代替)了?(?P<old>"
                        + _ZH_TAIL + ")")),
    ("swap", re.compile(r"^(?P<new>" + _ZH_NP + r")(?:取代了|替代了|替换了)(?P<old>"
                        + _ZH_TAIL + ")")),
    ("drop", re.compile(r"(?:不再用|不再使用|停用了|弃用了|淘汰了|放弃了)(?P<old>"
                        + _ZH_TAIL + ")")),
)
ZH_REPLACE_MARKS = ("换成|换为|替换|改成|改为|切换|迁移|迁到|换到|转到|搬到|升级|降级|升到|降到"
                    "|调到|调成|调整|提高到|提升到|增加到|减少到|降低到|缩短到|延长到|扩大到|缩小到"
                    "|设为|设成|设置为|设置成"
                    "|回滚|回退|退回|换回|改回|切回|回到|替代|取代|代替|不再|停用|弃用|淘汰|放弃"
                    "|改到")
ZH_REPLACE_BLOCK = re.compile(
    r"打算|计划|准备|想要|想把|想从|要把|要从|将要|会把|会从|可能|如果|要是|假如|假设|考虑"
    r"|是否|还没|没有|没把|未|不会|应该|建议|吧$|能不能|可以")
"""Words that make a Chinese replacement not (yet) done: a plan, a condition, a
negation, a suggestion ("我们打算从Heroku迁移到Fly.io", "还没换成Kafka")."""
_JA_NP = r"[^、。,，！!？?をはが]{1,20}?"
_JA_TAIL = r"[^、。,，！!？?を]{1,30}?"
"""A new value: no を in it, so in "私はフォントサイズを14に変更しました" the topic 私 is
no old value and フォントサイズ no part of the new one (its object is what changed)."""
_JA_SWAP_VERB = ("置き換え|置き換|入れ替え|入れ替|乗り換え|乗り換|リプレース|切り替え|切り替"
                 "|切替|変更|移行")
"""(移動/移し are travel and moving things: "東京から大阪に移動しました" is a trip.)"""
_JA_SET_VERB = "アップグレード|ダウングレード|更新|上げ|下げ|増や|減ら|延長|短縮|設定"
JA_REPLACE: tuple[tuple[str, re.Pattern[str]], ...] = (
    ("move", re.compile(r"(?:(?P<what>[^、。,，！!？?をはが]{1,12}?)(?:を|は))?(?P<old>" + _JA_NP
                        + r")から(?P<new>" + _JA_TAIL + r")(?:に|へ)(?:" + _JA_SWAP_VERB
                        + "|" + _JA_SET_VERB + r")")),
    ("swap", re.compile(r"(?P<old>" + _JA_NP + r")(?:を|は)(?P<new>" + _JA_TAIL + r")に(?:"
                        + _JA_SWAP_VERB + r")")),
    ("set", re.compile(r"(?P<what>" + _JA_NP + r")(?:を|は)(?P<new>" + _JA_TAIL + r")に(?:"
                       + _JA_SET_VERB + r")")),
    ("revert", re.compile(r"(?:(?P<what>" + _JA_NP + r")(?:を|は))?(?P<new>"
                          r"[^、。,，！!？?をはが]{1,30}?)"
                          r"に(?:戻し|戻り|戻っ|ロールバックし|切り戻し)")),
    ("swap", re.compile(r"(?P<old>" + _JA_NP + r")の代わりに(?P<new>" + _JA_TAIL
                        + r")(?:を|に)")),
    ("drop", re.compile(r"(?P<old>" + _JA_NP + r")(?:を使うのをやめ|の利用をやめ|の使用をやめ"
                        r"|を廃止し|の利用を停止し|の使用を停止し)")),
)
JA_REPLACE_MARKS = ("置き換|入れ替|乗り換|リプレース|切り替|切替|変更|移行|アップグレード"
                    "|ダウングレード|更新|上げ|下げ|増や|減ら|延長|短縮|設定|戻し|戻り|戻っ|ロールバック|代わりに|やめ|廃止"
                    "|停止")
JA_REPLACE_DONE = re.compile(r"^(?:し)?(?:ました|た|済み|済|ています|ている|てる|てます|てあります"
                             r"|になりました|になった|になっています)")
"""A Japanese replacement is told done by its verb's ending (…に移行しました, …に変更済み)."""
JA_REPLACE_BLOCK = re.compile(r"予定|つもり|たい|よう|ましょう|検討|かもしれ|もし|たら|れば|なら"
                              r"|ません|ない|まだ|べき")
"""…and not done when a plan, wish, condition or negation follows or leads it."""
_TIME_WORD = (r"今日|明日|昨日|来週|今週|先週|来月|今月|先月|次回|次|今後|これ|それ|以降|今|現在"
              r"|[0-9０-９]+(?:月|日|時)")
CJK_NOT_VALUE = re.compile(r"^(?:" + _TIME_WORD + r"|现在|今天|明天|下周|本周|下个月|以后|之后"
                           r"|这里|那里|这|那)$")
"""Old-value phrases that name a time or a place in the talk ("今日からFly.ioに移行"): no
value."""
JA_CORRECTION_MID = re.compile(r"じゃなくて|じゃなく|ではなくて|ではなく(?!て?も)")
JA_FILLER = re.compile(r"^(?:" + alt("ちなみに|なお|あと|また|それと|あの|えっと|ええと|すみません"
                                     "|すいません|念のため|覚えておいてほしいのですが|ところで"
                                     "|ついでに|それから|さて|すみませんが|すいませんが|お手数ですが"
                                     "|お手数をおかけしますが|恐れ入りますが|申し訳ありませんが"
                                     "|申し訳ないですが|悪いけど|悪いんですが") + r")[\s、,:]*|^"
                       + leads.JA_GREETING)
JA_SMALL_TALK = re.compile(
    r"^(?:(?:" + alt("ありがとう|ありがとうございます|ありがとうございました|いつもありがとう"
                     "|いつもありがとうございます|本当にありがとうございます|本当にありがとう"
                     "|お世話になっております|いつもお世話になっております|どうも|了解|了解です"
                     "|了解しました|わかりました|分かりました|はい|いいえ|うん|ok|オッケー|おはよう"
                     "|おはようございます|こんにちは|こんばんは|お疲れ様です|お疲れさまです|お疲れ様"
                     "|よろしく|よろしくお願いします|すごい|完璧|なるほど|大丈夫|大丈夫です|いいね"
                     "|いいですね|助かります|助かりました|承知しました|かしこまりました"
                     "|そうですね|たしかに|確かに|さすが|どういたしまして|おやすみなさい|またね")
    + r"|(?:分かった|わかった|分かりました|わかりました|覚えた|覚えました|覚えてる|いい|いいです"
    r"|大丈夫です|了解です|ok|オッケー)(?:か|かな|ね|よね)?)[\s、,。.!！~〜?？]*)+$", re.I
)
"""A sentence made only of greetings, thanks and acknowledgements, or of a check that
asks nothing (分かった？, 覚えましたか, いいですか)."""
JA_QUESTION_END = re.compile(r"(?:か|かな|かしら|かね|っけ)[\s。.!！]*$")
JA_REQUEST = cjk_cue("てもらえますか|てもらえませんか|ていただけますか|ていただけませんか"
                     "|てくれますか|てくれませんか|てほしいのですが|お願いできますか"
                     "|でもらえますか|でくれますか|てもらえる|てくれる")
JA_HYPOTHETICAL = re.compile(r"^もし|たら[、,]|れば[、,]")
JA_REPORTED = Cue(re.compile(
    r"(?:と|って)(?:" + alt("言っていました|言っていた|言ってた|言っています|言ってる|言いました"
                          "|言った|言われました|言われた|書いてありました|書いてあった|書いてある"
                          "|書いてあります|書いていました|聞きました|話していました|言っていて|言ってました"
                          "|表示されました|表示された|出ました|出ていました") + r")"
), marks="言って|言いました|言った|言われ|書いて|聞きました|話して|表示され|出ました|出ていました")
JA_FIRST_PERSON = re.compile(r"^(?:私|僕|俺|わたし|我々|私たち|うち|弊社)(?:は|が|も)")
# Preferences (issue 3: が好き/の方がいい), dislikes (苦手, 嫌い) and wishes (てほしいです).
JA_PREFERENCE = cjk_cue(
    "が大好き|が好き|の方が好き|のほうが好き|の方がいい|のほうがいい|の方が良い|のほうが良い"
    "|が好み|を好む|が嫌い|は嫌い|が苦手|は苦手|好きです|好きではない|好きじゃない|大好きです"
    "|がいいです|が良いです|できれば|なるべく|の方を希望|を希望します|が希望|てほしいです"
    "|でほしいです|てもらいたいです|でお願いしたい|てお願いしたい|にしてほしい|にしてもらいたい",
    extra=r"は(?:あまり|ほとんど|一切|全然|基本的に|普段)?(?:飲み|食べ|吸い)ません(?:[。！!]|$)"
    r"|は(?:あまり|ほとんど|一切|全然|基本的に|普段)?(?:飲ま|食べ|吸わ)ない(?:[。！!]|$)",
    marks="飲みません|食べません|吸いません|飲まない|食べない|吸わない",
)
"""A liking or a dislike; also what the speaker does not eat, drink or smoke, said of
its topic (コーヒーは飲みません, 甘いものはあまり食べません: 我不喝咖啡, "I don't drink
coffee"), a standing taste, not a fact of the moment."""
JA_PREFERENCE_NEG = re.compile(r"嫌い|苦手|好きではない|好きじゃない|ません(?:[。！!]|$)"
                               r"|(?:飲ま|食べ|吸わ)ない")
# Constraints (issue 3: 必ず/しないでください/禁止), obligations (必要があります) and bounds
# (までにしてください). The weak ones (でお願いします, にしてください) need a topic, number
# or scope word to count (see ``rules_cjk``).
JA_CONSTRAINT = cjk_cue(
    "必ず|絶対に|絶対|常に|毎回|今後は|今後|以降は|しないでください|ないでください|ないで下さい"
    "|ないように|てはいけない|てはいけません|ちゃだめ|ちゃダメ|てはダメ|ては駄目|禁止|厳禁"
    "|ないこと|なければならない|なければなりません|ないといけない|必要があります|必要がある"
    "|までにしてください|以内にしてください|以下にしてください|でお願いします|にしてください"
    "|ようにしてください|ようにして|ないでね|しないで",
    r"(?:説明|解説|前置き|前書き|要約|まとめ|コメント|注釈|補足|例|謝罪|挨拶|確認|言い訳)"
    r"(?:は|も)(?:不要|要りません|いりません|いらない|結構)(?=です|だ|で|よ|[。、！!]|$)",
    "不要|要りません|いりません|いらない|結構",
)
"""Also an order that says a part of the answer is not needed ("説明は不要です",
"前置きはいりません")."""
JA_CONSTRAINT_NEG = re.compile(r"ないで|ないように|てはいけな|ちゃだめ|ちゃダメ|てはダメ|ては駄目"
                               r"|禁止|厳禁|ないこと|要りません|いりません"
                               r"|(?:不要|いらない)(?=です|だ|[。、！!]|$)|[はも]結構(?=です|だ|[。、！!]|$)")
"""不要 / いらない / 結構 say "not needed" as the predicate ("説明は不要です", "例は結構です"),
not before the noun they describe ("不要なファイルを削除してください": an order to
remove them) nor as "fairly" ("説明は結構詳しくお願いします")."""
# Decisions (issue 3: …にしましょう; also ことにしました, に決めました, を採用).
JA_DECISION = cjk_cue(
    ("にしましょう|にしよう|にします|で行きましょう|でいきましょう|で行きます|でいきます"
     "|ことにしました|ことにします|ことにしよう|に決めました|に決定|を採用|採用します"
     "|を使いましょう|を使います|使うことにし|に決まりました|と決めました|と決まりました"
     "|と決定しました"),
    r"を使う[。]?$", "を使う",
)
# Assistant proposals (おすすめします, はどうでしょうか, ましょうか…).
JA_PROPOSAL = cjk_cue(
    "おすすめします|お勧めします|オススメします|提案します|ご提案|はどうでしょうか|はどうでしょう"
    "|はいかがでしょうか|してはどうですか|してはいかがですか|たらどうでしょう"
    "|ほうがいいかもしれません|方がいいかもしれません|方が良いと思います|ほうがいいと思います"
    "|べきだと思います|ましょうか|を検討してください|するといいでしょう|と良いでしょう"
    "|といいでしょう|のはどうですか|てみてはどうでしょう|のがおすすめ|がおすすめ"
)
JA_STANDING = re.compile(alt("必ず|常に|毎回|今後|以降|いつも|すべて|全て|全部|ように|これから"
                             "|今日から|ずっと"))
JA_STANDING_LEAD = re.compile(
    r"^(?P<when>これから(?:先)?|今後|今日から|明日から|以後|以降|次回から|次から)(?P<topic>は|も)?"
    r"[、,]?\s*(?P<adv>常に|いつも|必ず|ずっと|毎回|全部|すべて|全て)?[、,]?")
"""A lead by which the rest of the clause holds from now on ("これからは常に…",
"今後は…", "今日から…"): with an order, a request or a plain statement of what is
done after it, the clause is a standing rule; the lead is not its subject. A bare
これから ("これから出かけます", about to) leads a plain statement only with は/も or an
adverb of always after it."""
JA_POLITE_REQUEST = re.compile(r"(?:てください|で下さい|て下さい|お願いします|お願い)[。!！]?$")
_CJK_RELATIVE = (r"妈妈|母亲|爸爸|父亲|父母|姐姐|妹妹|哥哥|弟弟|老婆|老公|妻子|丈夫|儿子|女儿|孩子"
                 r"|朋友|同事|老板|经理|家人|室友|邻居|男朋友|女朋友|他们|她们|他|她"
                 r"|母|父|姉|妹|兄|弟|妻|夫|息子|娘|子供|友達|友人|同僚|上司|家族|彼女|彼"
                 r"|お母さん|お父さん|お姉さん|お兄さん")
CJK_OTHER_ACTOR = re.compile(
    r"^(?:(?:昨天|今天|上周|上个月|去年|最近|其实|昨日|今日|先週|先月|去年|最近|実は)[，,、\s]*)*"
    r"(?:我的?|我们的?|私の|僕の|俺の|うちの)?(?:" + _CJK_RELATIVE + r")(?:は|が|も|都|也|已经)?")
"""A Chinese or Japanese sentence whose actor (or whose subject's owner) is another
person or group (我妈妈住在北京, 母は東京に住んでいます, 他们回到了…)."""
