"""Chinese and Japanese clause rules (see ``rules_en`` for the order and its reasons).

The order is the same as for English: reported speech, preference, the earlier of a
constraint or a decision cue, requests, then facts. What differs is where the words
sit. Chinese puts the subject before a copula (是/为/在/有…), so a fact's key is the
text before it ("我们的预算是5000元" -> "预算"). Japanese marks the topic with は or
the subject with が and puts the verb — and with it most cues (しないでください,
にしましょう, が好き) — at the end, so keys come from the topic or the phrase before
the first case particle. Chinese input is already folded to simplified script.
"""

from __future__ import annotations

import re

from memory_core.extraction import experience
from memory_core.extraction import lexicon_cjk as lc
from memory_core.extraction.clause import Clause, Verdict
from memory_core.extraction.prepare import MASK
from memory_core.extraction.quantity import loose
from memory_core.extraction.subject import cjk_key

_WORDY = re.compile(r"[^\W_]")
"""A letter or digit: quote marks and masked text (``MASK``) are neither."""
_ZH_CHOICE_VERB = re.compile(r"^(?:用|采用|使用|选|选择|改用|就用)")
_ZH_COMMA = re.compile(r"[，,]")
_ZH_CHOOSING_HABIT = re.compile(
    r"^(?!去年|前年|以前|之前|过去|从前|小时候|那时|当时|那会)"
    r"(?:[^，,。！？!?我]{1,6}?)?(?:我们|我)(?:一般|平时|通常|总是|一直|每次都|向来|习惯)(?:都|会|只)?"
    r"(?:住|喝|吃|坐|订|选|买|点|要|穿|开|骑)(?![了过完])"
    r"(?![^，,。！？!?]{0,4}?(?:(?<!不)太|错|过头|多了))")
"""The user's habit of choosing (出差我一般住全季, 我平时喝美式, 坐飞机我总是选靠过道的座位):
a standing preference, keyed by what is chosen; a short topic may lead (出差, 坐飞机). A
frequency word is needed; 了/过 after the verb or a past time leading (去年我一般住如家)
tell the past; an excess or a mistake after it (我一般点太多菜, 我一直穿错鞋) a mishap,
no choice ("不太辣的" is one)."""
_CJK_THIRD_PARTY = re.compile(
    r"^(?:[^，,、。]{0,6}?[，,、]\s*)?(?:他们|她们|它们|对方|法院|法庭|法官|陪审团|裁判|评委|仲裁"
    r"|航空公司|银行|房东|政府|学校|大学|保险公司|税务局|警方|警察|物业|监管"
    r"|彼ら|彼女ら|先方|相手|裁判所|裁判官|審判|陪審|航空会社|銀行|大家さん|政府|学校|大学"
    r"|保険会社|税務署|警察|管理会社)")
"""A decider outside the speaker's team, leading a Chinese or Japanese decision (after
a time word at most): what they decided is their ruling, not the user's decision."""
_ZH_MODAL_AFTER_CONDITION = re.compile(
    r"[\ue000\s，,]*(?:每次|每回)?(?:都|也|一律)?(?:要|得|需要|一定要)(?!求|是|不要)(?:先)?")
"""A duty right after a situation (the condition masked before it): 提交前都要…, 上线前要先…."""
_ZH_DECIDED_NOT = re.compile(r"(?:暂时|先)?(?:不再|不|别|放弃)(?:再)?")
"""What refuses a choice right after 决定: 不用, 不再, 放弃."""
_ZH_NEGATION = re.compile(r"不|别|勿")
_ZH_CLAUSE_END = re.compile(r"[，,。；;]")
_ZH_PROPOSAL_LEAD = re.compile(r"^(?:把|将|用|使用|你|我们|咱们)")
_ZH_COPULA = re.compile(
    r"(?<![但就还也只总要若于可倒真不])是|(?<![因作成认以])为|(?<![现正存所实])在|(?<![所没还只拥具])有"
    r"|叫做|叫|等于|位于|设为|设置为|改到|改成|改为|定在|大概|大约|约为|已经|每|将|(?<![开例周晨早班年大站社机聚约])会(?![议员话计])"
    r"|(?<!可)能|可以|需要|支持"
)
_ZH_ENDED = re.compile(r"(?:不再|不|没有|没)[^，,。；;！!？?]{1,20}?了[。！!]?$")
"""After 已经: a state that ended, said with 了 (不养猫了, 没有车了); not 已经吃饭了,
work done."""
_ZH_META_NOUNS = frozenset(("问题", "事情", "事", "情况", "疑问", "重点", "关键"))
_ZH_TARGET = re.compile(r"(?:做|作为|当作|当|来做|来当)(?P<t>[^，,。；吧了]{1,12})")
_ZH_USE_FOR = re.compile(r"(?:用|使用|采用)[^，,。；]{1,30}?(?:来)?(?:(?:做|作为|当作|跑|管理)"
                         r"(?P<t>[^，,。；吧了的]{1,12})|(?P<t2>沟通|交流|开发|部署|测试|托管|存储"
                         r"|监控|打包|构建|记账|开会)(?=$|[，,。；了的吧]))")
"""A tool and the role it is used for (我们用Jenkins做CI, 用Redis来做缓存, 团队用飞书沟通)."""
_ZH_TOPIC_PLEASE = re.compile(r"^(?:以后|今后|往后|从现在起|从现在开始)?"
                              r"(?P<topic>(?![这那你我您此该]|麻烦|劳驾|还是|另外|对了)"
                              r"[^，,。；请]{2,8}?)(?:都|一律|统一)?请"
                              r"(?:都|一律|统一)?(?:用|使用|保持|写|加上?|带上?|附上?|以|按照?)")
"""A topic, then 请 and an order ("回复请用繁体中文"): a rule about that topic (not 这个请…:
the material at hand)."""
_ZH_USE_FOR_NOT = re.compile(r"^(?:请|你|您|帮|别|不要|能不能|可以)")
"""A request to the assistant ("请用飞书沟通"), not a statement of the team's tool."""
_ZH_CHOICE_TAIL = re.compile(r"[吧了啦呀，,。].*$")
_ZH_QUESTION_WORDS = re.compile(r"什么时候|什么|怎么样|怎么|为什么|哪里|哪儿|哪个|哪|几点|几|多少"
                                r"|是否|是不是|有没有|能不能|可不可以|要不要|吗|呢|嘛|么")
_ZH_FUTURE_RULE = re.compile(
    rf"(?:{lc.ZH_STANDING_LEAD})[，,]?(?P<np>[^，,。]{{0,8}}?)(?:都|一律|统一|只|全部|每次)")
_ZH_MODAL_LEAD = re.compile(r"^(?:要|得|需要|先|都|[\s`])+")
"""What opens a rule's order after its condition (以后提交前都要先跑…): not its subject."""
_ZH_LEAD = re.compile(rf"^(?:{lc.ZH_STANDING_LEAD})[，,]?")
_ZH_NOT_RULE = re.compile(r"^我[们]?(?:也|都|就|还)?(?:不能|不可以)|不一定")
_ZH_VERB_NOUN = re.compile(r"^(?:重试|设置|控制|使用|限制|保留|回复|设定)"
                           r"(?:逻辑|机制|策略|次数|间隔|页面|面板|功能|模块|选项|上限|规则|时间"
                           r"|接口|服务|队列|记录|台)"
                           r"(?=在|会|是|有|的|每|都|总|一直|又|还|太|很|没|不|里|也|已)")
"""A compound noun led by one of ``ZH_IMPERATIVE``'s verbs, then its predicate:
"重试逻辑在输入为空的时候会报错" (the retry logic fails on empty input) states a fact.
Matched on the clause as written: its core has conditions and numbers masked.
Without the predicate right after, the verb is an order: 使用服务端渲染所有页面,
使用队列处理所有任务, 保留记录三十天, 限制次数为5次."""
_ZH_USER_NOUN = re.compile(r"^用(?:户|量|法|途|处|时|电|餐|品|料|语|词|意|心|功)")
"""用 that begins a noun (用户, 用量, 用法…), not the order "use": 以后用户多了再扩容 is a
plan about users, 以后用Postgres an order."""
_ZH_FOR_NOW = re.compile(r"(?:先|暂时|暂且)(?:别|不要|不用|甭)(?:管|理会)")
"""先别管 X (了) "leave X for now": the conversation moving on to something else, not a
prohibition. Only with the "for now" word: 别管弃用警告 and 以后别管… stay rules."""

_JA_ONE_OFF = re.compile(r"(?:いったん|一旦|とりあえず|ひとまず)"
                         r"(?:置いて|置いといて|保留|後回し|脇に)"
                         r"|(?:ない|ある)か(?:を|どうか)?(?:見|確認し|調べ|チェックし)て")
"""What makes a polite request one-off: setting something aside for now
(Xはいったん置いて、Yを見てください) or asking to look whether something is there
(Xにタイミング依存の箇所がないか見てください), unless :data:`_JA_EVERY_TIME` scopes it.
A topic-scoped request is otherwise read as a standing rule (ログは英語で書いてください)."""
_JA_EVERY_TIME = re.compile(r"前に|前は|時は|時に|際は|際に|では|には|たびに|場合は"
                            r"|必ず|常に|毎回|いつも")
"""A checklist, not a one-off look: コミット前には、秘密鍵が含まれていないか確認してください,
PRでは、テストが落ちていないかチェックしてください."""
_JA_BEFORE = re.compile(r"前(?:に|は|には)$")
"""A condition naming a recurring situation, the moment before an action ("コミットする前に",
"リリース前には"): it scopes a polite request as a topic does; :data:`_JA_CLAUSE` in
:mod:`~memory_core.extraction.condition` keeps a time ago (3日前に) out of it."""
_JA_EACH_TIME = re.compile(r"たびに|度に|都度|ごとに|毎回")
"""A situation said to recur ("デプロイのたびに、", "リリースの都度"): it scopes a polite
request as a rule, like :data:`_JA_BEFORE`."""
_JA_TOPIC = re.compile(r"^(?P<t>[^、。,]{1,30}?)(?:には|では|とは|は|が)(?!ず|じめ|ありません)")
_JA_DECIDER = re.compile(r"^[^、。,]{0,12}?(?:さん|さま|様|くん|君|ちゃん|先生|部長|課長|社長|上司"
                         r"|チーム|リーダー)(?:は|が)[、,]?(?=.)")
"""Who made a decision the user passes on ("田中さんは、…と決めました"): not its subject."""
_JA_OBJECT = re.compile(r"^(?P<t>[^、。,]{1,30}?)(?:を|に|で|が|は|と|へ)")
_JA_DECLARATIVE = re.compile(r"(?:(?:です|だ|でした|である|ます|ました|ている|ています|いる|いた|ある"
                             r"|あります|ません|ない|た|完了|予定)し?|ていて|でいて|ており|でおり)$")
"""A statement's end; a state joined to the next by 〜ていて / 〜ており / 〜し ends the
first of two clauses (:data:`memory_core.extraction.pipeline._JA_AND_JOINT`)."""
_JA_REFUTED = re.compile(
    r"[^、。はがを]{0,15}?(?:じゃなくて|じゃなく|ではなくて|ではなく(?!て?も))")
""""5433じゃなくて" names the refuted value; it is not the subject."""
_JA_VERB_TAIL = re.compile(r"(?:こと|の|する|します|して|しよう|した)+$")
_JA_PARTICLES = re.compile(r"(?:には|では|から|まで|より|を|に|で|は|が|と|へ)")
_JA_TIME_LEAD = re.compile(
    r"^(?:(?:確認(?:です|なん)?(?:が|けど)|念のため|ちなみに|実は|ところで|ついでに|あと|それと)[、,]?)?"
    r"(?:(?P<when>今|現在|最近|普段|いつも|今日|昨日|明日|今週|先週|来週|今月|先月|来月|今年|去年"
    r"|来年|当面|今のところ|以前|昔)(?:は|では|も)[、,]?|(?:もう|まだ|すでに|既に)(?=[^、。]))?")
"""A clause's lead that is no topic: a discourse opener (確認ですが、ちなみに) and a time
(今は, 最近は, もう): "今はReactを使っています" and "今はFastmailです" are not two claims
about 今."""
_JA_VALUE_IS = re.compile(
    r"^(?P<v>[^、。はがをにA-Za-z]{0,20}[\d\ue000０-９][^、。はがをにA-Za-z]{0,20})が"
    r"(?P<n>[^、。はがをにでと\d\ue000]{1,12})(?:です|だ|でした|だった)[。!！]?$")
""""7月15日が納期です": a value, then the noun it is (the subject, as in 納期は7月15日です).
A name with a version ("Python 3.12が必要です") is no value: it stays the subject."""
_JA_ROUTINE = re.compile(r"^(?:毎朝|毎日|毎晩|毎週|毎月|平日は|週末は|普段は?|いつも)[、,]?\s*")
"""A routine's lead ("毎朝コーヒーを飲んでいます"): with Japanese dropping 私は, a habit of
the speaker's own, keyed by its object (:data:`_JA_DIRECT_OBJECT`); "もうコーヒーは飲んで
いません" then revises it."""
_JA_DEMONSTRATIVE = re.compile(r"^(?:これ|それ|あれ|ここ|そこ|今日|明日|今)$")
_JA_WEAK_RULE = re.compile(r"でお願いします|にしてください|しないで$")
_JA_PLAIN_ORDER = re.compile(r"(?:て|で)(?:ね|よ|な)?[。!！]?$|こと[。!！]?$")
"""A plain order at the end of a clause ("使ってね", "書くこと")."""
_JA_TE_ORDER = re.compile(r"(?<!につい)(?<!によっ)(?<!とし)(?<!おい)(?<!だっ)(?<!たっ)(?<!るっ)"
                          r"(?<!いっ)(?<!すっ)(?<![てで]い)て(?:ね|よ)?[。!！]?$")
"""A plain request in the te-form ("直して", "見せてね"): outside a rule or a topic's
scope, an order about the work at hand, as a polite request there is. Not the
quoting って ("会議は3時からだって", "来るって", "ないって": hearsay), nor a state joined
to the next ("大阪に住んでいて、…")."""
_JA_DOES = re.compile(r"(?:ます|る)[。!！]?$")
"""A plain statement of what is done ("デプロイします", "付ける"): a rule after a
standing lead, as "From now on, we deploy at 9." is."""
_JA_DIRECT_OBJECT = re.compile(r"(?P<o>[^、。をにでがはへと\ue000]{1,15})を")
"""The direct object (before を) of a rule's verb."""
_ZH_PLACE_VERB = re.compile(
    r"^(?:现在|目前|如今)?我们?(?:现在|目前|如今|一直|也|还)?在(?!(?:准备|忙|找|做|赶|处理|完成|开始|安排|学|考虑|等|想"
    r"|哪))[^，,。？?在]{1,15}?(?P<v>工作|上班|打工|住|生活|定居|居住)(?![宿院])")
"""Where the speaker works or lives, the place before the verb: 我在柏林工作, 我在谷歌上班,
我在上海住 (the same fact as 我住在上海). Not 在 of an action in progress (我在找工作,
我在准备工作: a verb follows it)."""
_ZH_WORK = "工作"
"""The key of where the speaker works, however the verb is put (工作, 上班, 打工)."""
_JA_LIVES = re.compile(r"に住(?:む|み|ん)")
"""Where the speaker lives: an attribute of the speaker (a fact), whatever the lead."""
_JA_WORKS = re.compile(r"^[^、。はがを]{1,20}?[でに](?:[^、。]{1,12}?として)?(?:働いて|勤めて"
                       r"|勤務して)(?:います|いる|おります)[。!！]?$")
"""Where the speaker works, the place before the verb: ベルリンで働いています,
トヨタに勤めています, 病院で看護師として働いています (after 私は or 今は, read off first);
keyed :data:`_ZH_WORK` as 我在柏林工作 is. Not a wish (働きたい), the past (働いていました)
or another person's (父はベルリンで…: a topic of its own)."""
_JA_PURPOSE = re.compile(r"(?P<t>[^、。をはが]{1,15})に使")


def _has_words(text: str) -> bool:
    return _WORDY.search(text) is not None


_ZH_CONDITION_HEAD = re.compile(
    r"^(?:(?:如果|假如|要是|若是|万一|一旦|只要|每当|当)[^，,。；;]{1,30}?|[^，,。；;]{1,30}?"
    r"(?:的话|的时候))(?:[，,]\s*(?:就|那就|那么|则)?|\s*(?:就|那就|那么|则))")
_ZH_SCOPE_HEAD = re.compile(
    r"^(?:在)?(?:这个|本|我们的?|咱们的?|整个)?(?:项目|仓库|代码库|代码仓库|团队|公司|组|部门)"
    r"(?:里面|里|中|内)[，,]?\s*")
"""The scope that opens a Chinese rule (这个仓库里, 我们团队里, 在本项目中): where the rule
holds, read by :data:`memory_core.items.standing.STANDING_RULE`, not what it is about."""
_JA_CONDITION_HEAD = re.compile(
    r"^[^、。,]{1,30}?(?:(?:たら|だら|れば)(?!な)|なら(?=[、,\s])|(?:とき|(?<=[たるいな])時|場合)"
    r"(?=には|は|に|[、,\s]))(?:には|は|に)?[、,\s]*")
_MASKED_CONDITION_HEAD = re.compile(rf"^[^、。，,]{{0,30}}?{MASK}+(?:(?:には|は)[、，,\s]*|[、，,]\s*)")
"""A condition that opens an order (如果线上出故障，就…, …的话, 障害が起きたら, エラーが
出た場合は, …ときは): not what the rule is about; its noun (故障, 障害) is no key."""


def _unconditioned(text: str, lang: str, masked: bool = False) -> str:
    """``text`` without the condition that opens it (:data:`_ZH_CONDITION_HEAD`,
    :data:`_JA_CONDITION_HEAD`; a condition the clause already masked when ``masked``),
    where words remain after it; else ``text``."""
    heads = [_ZH_CONDITION_HEAD if lang == "zh" else _JA_CONDITION_HEAD]
    if masked:
        heads.append(_MASKED_CONDITION_HEAD)
    for head in heads:
        m = head.match(text)
        if m and m.end() and _has_words(text[m.end():]):
            return text[m.end():]
    return text


# --- Chinese ------------------------------------------------------------------------

def _zh_subject_before(core: str) -> str | None:
    # the first copula after some words ("每周的例会定在…": 每 opens the subject)
    m = next((x for x in _ZH_COPULA.finditer(core) if x.start() > 0 or x.group() != "每"), None)
    head = core[: m.start()] if m else core
    subject = cjk_key(head, "zh")
    if m and subject in _ZH_META_NOUNS:  # "问题是什么时候上线" is about 上线
        return cjk_key(core[m.end():], "zh") or subject
    return subject


def _zh_choice(rest: str) -> str | None:
    target = _ZH_TARGET.search(rest)
    if target:
        return cjk_key(target.group("t"), "zh")
    rest = _ZH_CHOICE_TAIL.sub("", rest)
    rest = _ZH_CHOICE_VERB.sub("", rest)
    return cjk_key(rest, "zh", keep_last=False)


def _zh_rule(c: Clause, core: str) -> tuple[int, bool, str | None] | None:
    m = _ZH_FUTURE_RULE.search(core)
    if m:
        scope = cjk_key(m.group("np"), "zh") or cjk_key(
            _ZH_MODAL_LEAD.sub("", core[m.end():]).replace("`", ""), "zh", keep_last=False)
        return m.start(), False, scope
    for m in lc.ZH_CONSTRAINT.finditer(core):  # gated: no cue phrase, no scan
        if _ZH_NOT_RULE.search(core[: m.end()]) or _ZH_FOR_NOW.search(
                core, max(0, m.start() - 2), m.end() + 2):
            continue
        neg = bool(lc.ZH_CONSTRAINT_NEG.search(m.group()))
        head = _ZH_LEAD.sub("", core[: m.start()])  # "以后别…": the lead is no subject
        cond = _ZH_CONDITION_HEAD.match(head)
        if cond and not _has_words(head[cond.end():]):
            head = ""  # "以后如果线上出故障，必须写复盘": the condition is no subject
        where = _ZH_SCOPE_HEAD.match(head)
        if where:
            head = head[where.end():]  # "这个仓库里不要用 any": the scope is no subject
        before = cjk_key(head, "zh") if head else None
        after = cjk_key(core[m.end():], "zh", keep_last=False)
        return m.start(), neg, before or after
    modal = _ZH_MODAL_AFTER_CONDITION.match(core) if c.condition is not None else None
    lead = _ZH_LEAD.match(core)
    cond = _ZH_CONDITION_HEAD.match(core[lead.end():]) if lead and lead.end() else None
    if modal is None and lead and cond is not None:
        # "以后如果有作业迟交，就要扣分": a duty each time the situation recurs from now on
        modal = _ZH_MODAL_AFTER_CONDITION.match(core, lead.end() + cond.end())
    if modal and _has_words(core[modal.end():]):
        # "提交前都要跑测试", "部署之前要先备份": what the situation requires each time
        return 0, False, cjk_key(core[modal.end():], "zh", keep_last=False)
    # "以后回答先给结论": the order after its lead ("以后回复请用…" is a topic's order, below)
    lead = None if _ZH_TOPIC_PLEASE.match(core) else _ZH_LEAD.match(core)
    order = core[lead.end():] if lead else core
    imp = lc.ZH_IMPERATIVE.match(order)
    if imp and (_ZH_VERB_NOUN.match(c.raw.strip()) or (lead and (
            _ZH_VERB_NOUN.match(order) or _ZH_USER_NOUN.match(order)))):
        imp = None  # 重试逻辑…, 设置页面…: a noun that starts with a verb, not an order
    if imp and (lead or _fixes(c) or c.condition or lc.ZH_STANDING.search(core)):
        head = _ZH_COMMA.split(order, maxsplit=1)[0]
        return 0, bool(_ZH_NEGATION.search(core)), cjk_key(head, "zh", keep_last=False)
    return None


_ZH_PRACTICE = re.compile(
    r"(?:我们|我|咱们|大家|团队|我们团队|公司|我们公司)?(?:一般|通常|平时|都)?"
    r"(?:每个?|逢)?(?:周|星期|礼拜)[一二三四五六日天末]|(?:我们|我|咱们|团队)?(?:一般|通常|平时)?"
    r"(?:每(?:天|日|晚|周|星期|个?月|年|个?季度)|工作日|周末)")
"""A recurring time that leads a Chinese clause, with who keeps it: 周五, 我们每周一,
每天, 周末."""
_ZH_PRACTICE_TAIL = re.compile(
    r"(?:一般|通常|都|也|照常|固定)?(?P<neg>不会|不能|不可以|不许|不准|从不|不)?"
    r"(?:可以|能|会|都|要)?")
_ZH_NOT_PRACTICE = re.compile(
    r"[是的前后了过有在]|之前|以前|截止|晚上|早上|上午|下午|中午|[\s，,。]")
"""What after a recurring time makes it no practice: a copula or a time's tail (周五是…,
周五的会, 周五前, 周五下午…)."""


_ZH_ABLE = re.compile(
    r"(?:我们|我|咱们)(?:现在|已经|也|都|还|又|终于|其实|根本|从来)*(?:不能|不会|不可以|没法"
    r"|没办法|无法|能|会|可以)(?:再)?(?P<rest>[^，,。！!？?；;]{1,16}?)了?[。！!]?$")
"""The speaker's ability or will, said or denied (我不能吃辣, 我们不会用Redis, 我现在能喝酒了):
keyed by what is done (吃辣, redis), not by the modal, so the denial and its later
affirmation share a key (the denial's ``negated`` is :mod:`.denial`'s)."""


def _fixes(c: Clause) -> bool:
    """Whether the clause holds a number it fixes (not a loose one: "你好 429",
    "テスト 3", :func:`~memory_core.extraction.quantity.loose`)."""
    return any(not loose(c.scan, q, c.start, c.end, c.lang) for q in c.quantities)


def classify_zh(c: Clause) -> Verdict | None:
    """Classify a Chinese user statement; None when it is not memory."""
    core = c.core
    m = lc.ZH_REPORTED.match(core)
    if m and not lc.ZH_FIRST_PERSON.match(m.group("who")):
        said = _ZH_CLAUSE_END.split(core[m.end():].lstrip("，,:： "), maxsplit=1)[0]
        if not _has_words(said):
            return None
        return Verdict("fact", cjk_key(m.group("who"), "zh"))
    hedged = lc.ZH_FIRST_PERSON_FRAME.match(core)
    if hedged:
        core = core[hedged.end():]
    if lc.ZH_CALL_ME.match(core):
        return Verdict("preference", "称呼")
    lived = experience.read(core, "zh")
    if lived is not None:  # 我去过日本, 我从来没去过日本: an experience, its denial negated
        return Verdict("fact", lived.subject, lived.negated)
    m = lc.ZH_DIET.match(core)
    if m:
        return Verdict("fact", cjk_key(m.group("trait"), "zh"), lasting=True)
    m = lc.ZH_PREFERENCE.search(core)
    if m:
        neg = bool(lc.ZH_PREFERENCE_NEG.search(m.group()))
        rest = _ZH_COMMA.split(core[m.end():], maxsplit=1)[0]
        return Verdict("preference", cjk_key(rest, "zh") or cjk_key(core[: m.start()], "zh"), neg)
    rule = _zh_rule(c, core)
    dec = lc.ZH_DECISION.search(core)
    habit = lc.ZH_HABIT.match(core) or _ZH_CHOOSING_HABIT.match(core)
    if habit and not rule and not c.quantities:
        rest = _ZH_COMMA.split(core[habit.end():], maxsplit=1)[0]
        return Verdict("preference", cjk_key(rest, "zh"))
    if rule and (dec is None or rule[0] <= dec.start()):
        return Verdict("constraint", rule[2], rule[1])
    if dec and _CJK_THIRD_PARTY.search(core, 0, dec.start()):
        dec = None  # "法院决定我们要付罚款", "他们决定…": a ruling, a fact at most
    if dec:
        rest = core[dec.start():] if dec.group().startswith("用") else core[dec.end():]
        against = _ZH_DECIDED_NOT.match(rest)
        if against:  # "决定不用Kafka", "决定不再迁移": a choice about Kafka, negated
            rest = rest[against.end():]
        return Verdict("decision", _zh_choice(rest) or cjk_key(core[: dec.start()], "zh"),
                       against is not None)
    practice = _ZH_PRACTICE.match(core)
    tail = _ZH_PRACTICE_TAIL.match(core, practice.end()) if practice else None
    if tail is not None and not c.quantities and not _ZH_NOT_PRACTICE.match(core, tail.end()):
        # "周五可以发布", "我们每周一开例会": how the team works at a recurring time; "我们
        # 周五不发布" is its ban, a rule like "周五不可以发布"
        what = cjk_key(_ZH_COMMA.split(core[tail.end():], maxsplit=1)[0], "zh", keep_last=False)
        neg = tail.group("neg") is not None
        if what and len(what) >= 2:
            return Verdict("constraint" if neg else "fact", what, neg)
    topic = _ZH_TOPIC_PLEASE.match(core)
    if topic:  # "回复请用繁体中文", "代码请用四个空格缩进": an order about every reply/code
        return Verdict("constraint", cjk_key(topic.group("topic"), "zh"))
    if lc.ZH_REQUEST.match(core):
        return None
    placed = _ZH_PLACE_VERB.match(core)
    if placed:  # 我在柏林工作; 我在上海住 (keyed where the speaker lives: lexicon.EN_HOME)
        return Verdict("fact", _ZH_WORK if placed.group("v") in ("工作", "上班", "打工")
                       else cjk_key(placed.group("v"), "zh"))
    copula = _ZH_COPULA.search(core)
    subject = _zh_subject_before(core)
    if subject is None and copula is not None and copula.group() == "是":
        subject = cjk_key(core[copula.end():], "zh")
    first_person = lc.ZH_FIRST_PERSON.match(core)
    if subject is None and first_person and copula is not None and copula.group() == "已经" \
            and _ZH_ENDED.match(core, copula.end()):
        # 我已经不养猫了, 我已经没有车了: a state of the speaker's that ended, keyed by
        # what ended (the writer retires the statement of it: items.denial)
        subject = cjk_key(core[copula.end():], "zh")
    if hedged and copula is None:
        return None
    if copula is None and not _fixes(c) and not (first_person and len(core) >= 4):
        role = _ZH_USE_FOR.search(core)
        if role is None or _ZH_USE_FOR_NOT.search(core):
            return None
        return Verdict("fact", cjk_key(role.group("t") or role.group("t2"), "zh"))  # 团队用飞书沟通
    if subject is None and not c.quantities:
        return None
    if c.quantities and c.quantities[0].kind == "port" and subject and "端口" not in subject:
        subject += "端口"
    able = _ZH_ABLE.match(core) if first_person else None
    if able and cjk_key(able.group("rest"), "zh"):
        subject = cjk_key(able.group("rest"), "zh")
    role = _ZH_USE_FOR.search(core) if first_person else None
    if role:  # "我们用Jenkins做CI": what the tool is for is the attribute, the tool its value
        subject = cjk_key(role.group("t") or role.group("t2"), "zh") or subject
    return Verdict("fact", subject)


def zh_question_subject(c: Clause) -> str | None:
    """Key of a Chinese question: question words and particles removed."""
    core = _ZH_QUESTION_WORDS.sub("", c.core)
    return _zh_subject_before(core) or cjk_key(core, "zh")


def zh_is_request(c: Clause) -> bool:
    return bool(lc.ZH_REQUEST.match(c.core))


def zh_is_hypothetical(c: Clause) -> bool:
    return c.question and bool(lc.ZH_HYPOTHETICAL.match(c.raw))


def zh_proposal(c: Clause) -> Verdict | None:
    m = lc.ZH_PROPOSAL.search(c.core)
    if m is None:
        return None
    rest = _ZH_PROPOSAL_LEAD.sub("", c.core[m.end():])
    return Verdict("proposal", _zh_subject_before(rest) or _zh_choice(rest))


# --- Japanese -----------------------------------------------------------------------

def _ja_topic(core: str) -> str | None:
    m = _JA_TOPIC.match(core)
    if m is None:
        return None
    topic = m.group("t")
    return cjk_key(topic.split("を", 1)[0] if "を" in topic else topic, "ja")


def _ja_object(core: str) -> str | None:
    m = _JA_OBJECT.match(core)
    return cjk_key(m.group("t") if m else core, "ja")


def _ja_action(phrase: str) -> str | None:
    """Key of a Japanese verb phrase: "金曜日にリリースすること" -> "リリース"."""
    phrase = _JA_VERB_TAIL.sub("", phrase)
    chunks = [p for p in _JA_PARTICLES.split(phrase) if cjk_key(p, "ja")]
    return cjk_key(chunks[-1], "ja") if chunks else None


def classify_ja(c: Clause) -> Verdict | None:
    """Classify a Japanese user statement; None when it is not memory."""
    core = _JA_REFUTED.sub(lambda m: MASK * len(m.group()), c.core)
    m = lc.JA_REPORTED.search(core)
    if m:
        content = core[: m.start()]
        who = _JA_TOPIC.match(content)
        said = content[who.end():] if who else content
        if not _has_words(said):
            return None
        return Verdict("fact", cjk_key(who.group("t"), "ja") if who else None)
    fp = lc.JA_FIRST_PERSON.match(core)
    if fp:
        core = core[fp.end():]
    lived = experience.read(core, "ja")
    if lived is not None:  # 日本に行ったことがある / ない: an experience, its denial negated
        return Verdict("fact", lived.subject, lived.negated)
    timed = _JA_TIME_LEAD.match(core)
    if timed and timed.end() and _has_words(core[timed.end():]):
        core = core[timed.end():]  # "今はFastmailです": 今 is when, not what the claim is about
    else:
        timed = None
    lead = lc.JA_STANDING_LEAD.match(core)
    if lead and lead.end() and _has_words(core[lead.end():]):
        strong = bool(lead["topic"] or lead["adv"]) or not lead["when"].startswith("これから")
        from_now = _ja_standing(core[lead.end():], strong, c.condition is not None)
        if from_now is not None:
            return from_now
    always = _JA_ALWAYS_LEAD.match(core)
    if always and _has_words(core[always.end():]):
        ordered = _ja_standing(core[always.end():], False, c.condition is not None)
        if ordered is not None:
            return ordered
    if _JA_WORKS.match(core) and not c.quantities:
        return Verdict("fact", _ZH_WORK)  # "ベルリンで働いています": where the speaker works
    m = lc.JA_CALL_ME.search(core)
    if m and not lc.JA_CALL_ME_OTHER.search(m.group("name")):
        return Verdict("preference", "呼び方")
    m = lc.JA_DIET.search(core) if fp else None
    if m and not lc.JA_NOT_ALLERGEN.search(m.group("trait")):
        return Verdict("fact", cjk_key(m.group("trait"), "ja"), lasting=True)
    m = lc.JA_PREFERENCE.search(core)
    if m:
        neg = bool(lc.JA_PREFERENCE_NEG.search(m.group()))
        before = core[: m.start()]
        subject = _ja_topic(before) or cjk_key(before, "ja") or _ja_object(core[m.end():])
        return Verdict("preference", subject, neg)
    habit = lc.JA_HABIT.match(core) if fp else None
    if habit and not c.quantities:
        return Verdict("preference", cjk_key(habit.group("o"), "ja"))
    rule = lc.JA_CONSTRAINT.search(core)
    if rule and _JA_WEAK_RULE.fullmatch(rule.group()):
        standing = _JA_TOPIC.match(core) or _fixes(c) or lc.JA_STANDING.search(core)
        rule = rule if standing else None
    dec = lc.JA_DECISION.search(core)
    subject = _ja_topic(core) or _ja_object(core)
    if dec and _CJK_THIRD_PARTY.search(core, 0, dec.start()):
        # "裁判所は、…と決めました", "先方は、…しないことに決めました": a ruling, a fact at most
        if rule and rule.group().endswith("こと") and dec.start() <= rule.end():
            return Verdict("fact", subject)
        dec = None
    if rule and dec and rule.group().endswith("こと") and dec.start() <= rule.end():
        # "Kafkaは使わないことにしました", "…しないことに決めました": a choice not to, not
        # the written-rule "…しないこと。"
        who = _JA_DECIDER.match(core, 0, rule.start())
        chosen = core[who.end():] if who else core
        return Verdict("decision", _ja_topic(chosen) or _ja_object(chosen) or subject, True)
    if rule and (dec is None or rule.start() <= dec.start()):
        neg = bool(lc.JA_CONSTRAINT_NEG.search(rule.group()))
        order_text = _unconditioned(core, "ja", c.condition is not None)
        if order_text is not core:  # "障害が起きたら…を書くこと": keyed by the order
            order_text = _ja_bare_order(order_text)
            obj = _JA_DIRECT_OBJECT.search(order_text)
            subject = (_ja_topic(order_text) or (cjk_key(obj.group("o"), "ja") if obj else None)
                       or _ja_action(_JA_PLEASE_TAIL.sub("", order_text))
                       or _ja_object(order_text) or subject)
        return Verdict("constraint", subject, neg)
    if dec:
        who = _JA_DECIDER.match(core, 0, dec.start())
        chosen = core[who.end():] if who else core  # "部長は、…と決めました": the choice
        return Verdict("decision", _ja_topic(chosen)
                       or _ja_action(chosen[: dec.start() - (len(core) - len(chosen))]))
    topic = _JA_TOPIC.match(core)
    # a topic ("デプロイは…") or a recurring situation ("コミット前には、") scopes the order;
    # another condition does not ("もし時間があったら、", "この回答では、": one-off asks)
    scoped = (topic is not None and not _JA_DEMONSTRATIVE.match(topic.group("t"))) \
        or (c.condition is not None
            and _JA_BEFORE.search(c.scan, c.condition[0], c.condition[1]) is not None) \
        or _JA_EACH_TIME.search(c.scan, c.start, c.end) is not None
    one_off = (_JA_ONE_OFF.search(core)  # the lead ("PRでは、") counts for the scope
               and not _JA_EVERY_TIME.search(c.scan, c.start, c.end))
    if scoped and (lc.JA_POLITE_REQUEST.search(core) or _JA_TE_ORDER.search(core)) \
            and not one_off:
        return Verdict("constraint", subject, bool(lc.JA_CONSTRAINT_NEG.search(core)))
    if lc.JA_REQUEST.search(core) or lc.JA_POLITE_REQUEST.search(core) or "ましょう" in core \
            or _JA_TE_ORDER.search(core):
        return None  # a request about the work at hand ("42行目のバグを直して")
    if not _JA_DECLARATIVE.search(core.rstrip("。!！")) and not _fixes(c):
        return None
    named = _JA_VALUE_IS.match(core)
    subject = cjk_key(named.group("n"), "ja") if named else _ja_topic(core)
    if subject is None and c.quantities:
        subject = _ja_object(core)
    routine = _JA_ROUTINE.match(core) if subject is None else None
    obj = _JA_DIRECT_OBJECT.search(core, routine.end()) if routine else None
    if obj is not None and cjk_key(obj.group("o"), "ja"):
        return Verdict("fact", cjk_key(obj.group("o"), "ja"))  # 毎朝コーヒーを飲んでいます
    if subject is None and not c.quantities:
        if (fp or (timed and timed["when"]) or _JA_LIVES.search(core)) and len(core) >= 4:
            # "福岡に住んでいます" without 私は: where the speaker lives (Japanese drops it)
            return Verdict("fact", _ja_object(core))
        return None
    if c.quantities and c.quantities[0].kind == "port" and subject and "ポート" not in subject:
        subject += "ポート"
    return Verdict("fact", subject)


_JA_ALWAYS_LEAD = re.compile(r"^(?:いつも|常に|ずっと)[、,]?\s*")
"""An adverb by which an order lasts, opening it ("いつもテストを書いてからコミット
してください", "常に敬語を使ってください"): the order is a rule and the adverb no part
of its subject; a plain statement after it is a habit ("いつも7時に起きます"), read as
usual. 必ず and 毎回 already make an order a rule where they stand."""
_JA_ASKED_ORDER = re.compile(r"[てで](?:もらえ|いただけ|くれ)(?:ます|ません)か|お願いできますか")
"""A request asked as a question ("…していただけますか", "…してもらえませんか"): after a
standing lead (今後は) an order, as "…してください" is."""


_JA_ORDER_ADVERB = re.compile(r"^(?:(?:必ず|絶対に?|常に|いつも|毎回|まず|先に|最初に)[、,]?\s*)+")
"""Adverbs that open an order ("必ず先にロールバックして"): how or when it is done, no key."""


_JA_PLEASE_TAIL = re.compile(r"(?:ください|下さい)(?:ね|よ)?[。!！]?$")
"""The "please" that ends an order (ロールバックしてください): no part of the action."""


def _ja_bare_order(order: str) -> str:
    """An order after its condition without a standing lead ("今後は") and the adverbs
    that open it (:data:`_JA_ORDER_ADVERB`), where words remain; else ``order``."""
    lead = lc.JA_STANDING_LEAD.match(order)
    rest = order[lead.end():] if lead and lead.end() else order
    rest = rest[m.end():] if (m := _JA_ORDER_ADVERB.match(rest)) else rest
    return rest if _has_words(rest) else order


def _ja_standing(rest: str, strong: bool, masked: bool = False) -> Verdict | None:
    """A clause after a standing lead (:data:`~lc.JA_STANDING_LEAD`, "これからは常に"):
    a rule when the rest is an order, a request or (``strong`` lead only) a plain
    statement of what is done from now on ("日本語で話してください", "毎朝9時に
    デプロイします"); ``None`` for anything else (a preference, a decision, where one
    lives, a fact: classified as usual)."""
    asked = _JA_ASKED_ORDER.search(rest)  # "今後は…まとめていただけますか": asked politely
    if (lc.JA_PREFERENCE.search(rest) or lc.JA_DECISION.search(rest)
            or (lc.JA_REQUEST.search(rest) and not asked) or _JA_LIVES.search(rest)):
        return None
    rule = lc.JA_CONSTRAINT.search(rest)
    ordered = rule or lc.JA_POLITE_REQUEST.search(rest) or _JA_PLAIN_ORDER.search(rest) \
        or asked
    if not ordered and not (strong and _JA_DOES.search(rest)):
        return None
    rest = _ja_bare_order(_unconditioned(rest, "ja", masked))  # "障害が起きたら、…": not 障害
    obj = _JA_DIRECT_OBJECT.search(rest)  # "…にバックアップを取ります": what is done
    subject = (_ja_topic(rest) or (cjk_key(obj.group("o"), "ja") if obj else None)
               or _ja_object(rest) or _ja_action(rest))
    neg = bool(lc.JA_CONSTRAINT_NEG.search(rule.group() if rule else rest))
    return Verdict("constraint", subject, neg)


def ja_question_subject(c: Clause) -> str | None:
    return _ja_topic(c.core) or _ja_object(c.core)


def ja_is_request(c: Clause) -> bool:
    return bool(lc.JA_REQUEST.search(c.core))


def ja_is_hypothetical(c: Clause) -> bool:
    return c.question and bool(lc.JA_HYPOTHETICAL.search(c.raw))


def ja_proposal(c: Clause) -> Verdict | None:
    m = lc.JA_PROPOSAL.search(c.core)
    if m is None:
        return None
    before = c.core[: m.start()]
    purpose = _JA_PURPOSE.search(before)
    if purpose:
        return Verdict("proposal", cjk_key(purpose.group("t"), "ja"))
    return Verdict("proposal", _ja_topic(before) or _ja_object(before))
