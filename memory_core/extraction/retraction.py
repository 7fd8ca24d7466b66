"""Retractions: the user withdraws something they set earlier, with no new value.

"Forget the 200-word limit", "Scratch the JSON requirement", "Never mind the word
limit", "Ignore what I said about British English", "You don't need to keep answers
short anymore", "The emoji rule no longer applies", 算了，不用限制200字了, 不用再加表情了,
之前说的格式要求作废, 200字の制限はもういいです, さっき言った敬語のルールは忘れて: each takes
an earlier rule, preference or decision of the speaker out of every later block. The
writer finds the item the withdrawn phrase names
(:func:`memory_core.items.supersession.retraction_target`) and retracts it; the message
stays as evidence and no new item is stored. A statement of the user's own named
whole after "forget (that)" ("Forget that I live in Berlin", 忘掉我住在柏林这件事,
私がベルリンに住んでいることは忘れて) is withdrawn as something they said, whatever its
kind; "Don't forget that I …" and 我忘了… ("I forgot") withdraw nothing. "Forget
everything about tennis" ("all about", "everything you know / I told you about",
delete/erase/wipe; 忘掉关于网球的一切, 把关于X的事都忘了; テニスのことは全部忘れて) withdraws
every statement of the user's that names it (``every``), not one. "Forget my phone
number" and "Delete my address from your memory" withdraw the user's statement of that
attribute (:data:`EN_FORGET_MINE`), and so do "Delete the memory about my address" and
the asked form "Can you delete the memory about my phone number?" (a polite request,
:data:`_EN_POLITE`, is an order; "…, or keep it?" is a choice asked, no withdrawal).

:func:`find` reads one sentence of the prepared scan and returns a :class:`Retraction`
— the span of the phrase that names what is withdrawn — or ``None``. Only forms that
point back at an instruction count: a verb of withdrawal before a rule noun ("the …
limit/rule/requirement/format", 限制/规则/要求, 制限/ルール/指定) or before "what I said
about …" (which may name any earlier statement, a fact included). "Ignore the lint
warnings", "Ignore the style warnings", "Remove the rate limit check", "Drop the unique
constraint on email", "Drop the JSON requirement?", "…, once the parser is fixed" or
"Forget it" withdraw nothing (the rule noun must head the phrase; code, questions and
conditions are no withdrawal), nor do 算了，不用修改代码了 (the task at hand) and
把users表的约束去掉 (a table's); an exemption scoped to the work at hand ("Ignore the
word limit for this answer", "just this once", 这次, 今回は) is a one-off, not a
withdrawal; a negated or conditional form ("Don't forget the limit", "If you
drop the cap …") never matches, because every form is anchored at the clause start.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from memory_core.extraction import withdrawal
from memory_core.extraction.model import STATEMENT_KINDS, Extracted
from memory_core.extraction.quantity import find_quantities
from memory_core.extraction.units import unit_class


@dataclass(frozen=True, slots=True)
class Retraction:
    """One withdrawal: ``[at, end)`` is the phrase naming what is withdrawn (scan
    offsets); ``said``: named as something the user said ("what I said about X",
    之前说的X, さっき言ったX), which may be any kind of statement, not only a rule."""

    at: int
    end: int
    said: bool
    tail: int
    """Where the rest of the sentence begins, after the withdrawal's clause: a new value
    or stance there ("…; make it 300 words") replaces what was withdrawn."""
    every: bool = False
    """All the user said about it ("Forget everything about tennis"), not one item."""
    order: bool = False
    """The withdrawal is itself an order that says it lasts ("Skip the tests from now
    on", "Drop the TL;DR going forward"): the sentence is also read as its stance."""


_EN_RULE_NOUN: Final = (
    r"(?:rules?|limits?|cap|caps|ceiling|requirements?|constraints?|restrictions?"
    r"|instructions?|preferences?|polic(?:y|ies)|conventions?|guidelines?|format(?:ting)?"
    r"|style(?:\s+guides?)?|settings?|ban|request|thing|part)")
RULE_NOUNS: Final = re.compile(
    rf"\b{_EN_RULE_NOUN}\b|限制|规则|規則|要求|规定|規定|约束|上限|格式|偏好|制限|ルール|指定"
    r"|条件|縛り|形式|フォーマット|設定|お願い|指示", re.I)
"""Words that name an instruction as such; they point back but are not what it was
about, so the writer does not match on them."""

_EN_LEAD = r"(?>(?:(?:ok(?:ay)?|oh|also|and|so|hmm|right|alright|wait|sorry|actually)\W+)*)"
"""Fillers before a withdrawal ("Okay, so …"), taken whole (an atomic group): the
phrase after them is never retried from inside them, which kept "ok ok ok …" sentences
quadratic."""
_EN_ASK = (r"(?:(?:please|just)\s+)?(?:(?:you\s+(?:can|may|could)|feel\s+free\s+to|let'?s"
           r"|we\s+can|go\s+ahead\s+and)\s+)?")
_EN_DROP = (r"(?:forget(?:\s+about)?|scratch|drop|ditch|never\s?mind|disregard|ignore|cancel"
            r"|lift|remove|undo|scrap|get\s+rid\s+of|do\s+away\s+with|throw\s+out)")
_EN_SAID = (r"(?:(?:what|everything|anything|the\s+(?:thing|part|bit))\s+(?:i|we)\s+"
            r"(?:said|told\s+you|wrote|mentioned|asked(?:\s+for)?)"
            r"|my\s+(?:earlier|previous|last|old|original)\s+\w+)"
            r"(?:\s+(?:earlier|before|previously|above))?\s+(?:about|on|regarding|re:?)\s+")
_EN_DETERMINER = r"(?:the|that|this|those|these|my|our|your|any)\s+"
_EN_END = r"(?=\s*(?:[,;:!?\u2014\u2013]|\.(?:\s|$)|\s-\s|$))"
"""A withdrawal's clause ends at a comma, a semicolon, a colon or a dash (what follows
is the sentence's tail), or with the sentence."""
_EN_PHRASE = r"[^,;:\u2014\u2013]"
_EN_AFTER_RULE = (r"(?:\s+(?:about|on|for|of|regarding|re:?|around|against|in|from|to|with"
                  r"|that|which|where|and|stuff|i|we|you|earlier|before|above|entirely"
                  r"|completely|altogether"
                  rf"|too|as\s+well|again|then|now|please)\b{_EN_PHRASE}*?)?")
"""What may follow the rule noun: its complement ("the limit on answers", "the rule I
gave you"). The rule noun is the phrase's head; one that only qualifies another noun
("the style warnings", "the rate limit check", "the settings table") names code or
material at hand, not an instruction."""
EN_DROP_SAID: Final = re.compile(
    rf"{_EN_LEAD}{_EN_ASK}{_EN_DROP}\s+{_EN_SAID}(?P<what>{_EN_PHRASE}+?){_EN_END}", re.I)
EN_FORGET_ALL: Final = re.compile(
    rf"{_EN_LEAD}{_EN_ASK}(?:forget|delete|erase|remove|wipe|clear|purge|drop|scrub)\s+"
    r"(?:everything|all|anything)(?:\s+(?:that\s+)?(?:you(?:'ve|\s+have)?\s+"
    r"(?:know|have|remember|stored|saved|learned|learnt|kept|got)|(?:i|we)(?:'ve|\s+have)?\s+"
    r"(?:said|told\s+you|wrote|mentioned|shared)))?"
    r"(?:\s+(?:earlier|before|previously|so\s+far))?\s+(?:about|on|regarding|concerning"
    rf"|related\s+to)\s+(?P<what>{_EN_PHRASE}+?){_EN_END}", re.I)
""""Forget everything about tennis", "Forget all about my ex", "Delete everything you
know about Tom", "… everything I told you about …": every statement of the user's that
names it is withdrawn (``every``), not only the one that names it best."""
EN_FORGET_THAT: Final = re.compile(
    rf"{_EN_LEAD}{_EN_ASK}(?:forget|disregard|don'?t\s+remember|stop\s+remembering)"
    rf"\s+(?:(?:about\s+)?the\s+fact\s+|about\s+(?:the\s+fact\s+)?)?that\s+"
    rf"(?P<what>(?:i|i'm|i've|i'd|my|we|we're|our)\b{_EN_PHRASE}+?){_EN_END}", re.I)
""""Forget that I live in Berlin", "Please forget about the fact that my team uses
Jira": a statement of the user's own, named whole, withdrawn as something they said
(never "Don't forget that I …": a reminder, not anchored at the clause start)."""
_EN_WHOLE = (r"(?=\s*(?:[,;\u2014\u2013-]\s*(?:please|thanks|thank\s+you)\b\W*$"
             r"|[.!?]*\s*$))")
"""The end of a withdrawal that is the whole sentence, a courtesy at most after it
("Forget my address, please."); a clause after a comma ("Forget my diet, let's order
pizza", "Forget my deadline, the client moved it") dismisses the thing for the talk at
hand and withdraws nothing."""
_EN_MEMORY = (r"(?:from|out\s+of)\s+(?:(?:your|the|my)\s+)?(?:memory|memories|notes|records?"
              r"|profile)")
_EN_MEMORY_OF = (r"(?:(?:the|any|your|that|this)\s+)?(?:memory|memories)\s+(?:(?:that\s+)?you\s+"
                 r"(?:have|keep|kept|stored|saved|hold)\s+)?(?:about|of|on|regarding)\s+")
"""The memory named as such before what it holds ("the memory about my phone number")."""
EN_FORGET_MINE: Final = re.compile(
    rf"{_EN_LEAD}{_EN_ASK}(?:forget(?:\s+about)?|stop\s+remembering"
    rf"|(?:delete|remove|erase|wipe|clear|drop|scrub)(?=\s+{_EN_MEMORY_OF}(?:my|our)\b"
    rf"|\s+(?:my|our)\b{_EN_PHRASE}+?\s+{_EN_MEMORY}))\s+(?:{_EN_MEMORY_OF})?"
    rf"(?P<what>(?:my|our)\s+(?!(?:earlier|previous|last|old|original)\b)"
    rf"{_EN_PHRASE}+?)(?:\s+{_EN_MEMORY})?{_EN_WHOLE}", re.I)
""""Forget my phone number", "Please delete my address from your memory": a value of
the user's own named by its attribute, withdrawn as something they said. A verb that
also acts on things ("Delete my branch", "Remove my SSH key") withdraws only with
"from your memory / the notes / my profile", or with the memory named before the
attribute ("Delete the memory about my address"). The withdrawal is the whole sentence
(:data:`_EN_WHOLE`): "Forget my diet, let's order pizza" sets the diet aside for now."""
_EN_POLITE: Final = re.compile(
    rf"{_EN_LEAD}(?:(?:can|could|would|will)\s+you\s+(?:please\s+|just\s+)?"
    r"|(?:please\s+)?(?:i'?d\s+like\s+you\s+to|i\s+want\s+you\s+to)\s+)", re.I)
"""A withdrawal asked for ("Can you delete the memory about my phone number?", "I'd
like you to forget my address"): an order said politely, its question mark no doubt."""
_EN_ASKED_MARK: Final = re.compile(r"[\s?]*\?[\s?]*$")
_EN_OR: Final = re.compile(r"\bor\b", re.I)
"""A choice asked ("Can you forget my address or keep it?"): no withdrawal."""
EN_DROP_RULE: Final = re.compile(
    rf"{_EN_LEAD}{_EN_ASK}{_EN_DROP}\s+(?P<what>{_EN_DETERMINER}{_EN_PHRASE}*?\b{_EN_RULE_NOUN}\b"
    rf"{_EN_AFTER_RULE}){_EN_END}", re.I)
_EN_DB_CONSTRAINT: Final = re.compile(
    r"\b(?:unique|check|foreign\s+key|primary\s+key|not[\s-]+null|fk|pk|db|database|sql)"
    r"\s+constraints?\b", re.I)
"""A database's constraint ("Drop the unique constraint on email"): schema work."""
_EN_ASKED: Final = re.compile(r"\s*(?:\?|,?\s*or\b[^.!]*\?|[,\u2014\u2013-]?\s*(?:once|when"
                              r"|whenever|after|until|till|if|unless|as\s+soon\s+as)\b)", re.I)
"""A withdrawal asked about ("Drop the JSON requirement?", "…, or keep it?") or bound
to a condition ("…, once the parser is fixed", "…, unless I ask for a summary")."""
EN_NO_LONGER: Final = re.compile(
    rf"{_EN_LEAD}(?P<what>{_EN_DETERMINER}{_EN_PHRASE}*?\b{_EN_RULE_NOUN})\s+(?:is|are)\s+"
    r"(?:(?:no\s+longer|not)\s+(?:needed|required|necessary|in\s+effect|in\s+force|a\s+thing"
    r"|relevant)(?:\s+any\s?more)?|off|lifted|cancell?ed|dropped|scrapped|gone|void)"
    rf"(?:\s+now)?{_EN_END}"
    rf"|{_EN_LEAD}(?P<what2>{_EN_PHRASE}+?)\s+(?:no\s+longer\s+applies|no\s+longer\s+apply"
    rf"|doesn'?t\s+apply\s+any\s?more|don'?t\s+apply\s+any\s?more){_EN_END}", re.I)
EN_NO_NEED: Final = re.compile(
    rf"{_EN_LEAD}(?:you\s+(?:don'?t|do\s+not|no\s+longer)\s+(?:need|have)\s+to"
    r"|(?:there'?s\s+)?no\s+(?:more\s+)?need\s+to)\s+"
    rf"(?P<what>{_EN_PHRASE}+?)\s+(?:any\s?more|any\s+longer){_EN_END}", re.I)
EN_STOP: Final = re.compile(
    rf"{_EN_LEAD}(?:you\s+(?:can|may|could)|feel\s+free\s+to|it'?s\s+(?:fine|ok(?:ay)?)\s+to)"
    rf"\s+stop\s+(?P<what>\w+ing\b{_EN_PHRASE}*?)(?:\s+(?:now|any\s?more))?{_EN_END}", re.I)
"""Leave to stop what a rule asked for ("You can stop adding emojis"): a withdrawal
(a bare "Stop adding emojis" is a new rule, and "Stop running the tests" an order)."""
EN_NO_NEED_NOUN: Final = re.compile(
    rf"{_EN_LEAD}(?:you\s+(?:don'?t|do\s+not|no\s+longer)\s+need|(?:there'?s\s+)?no\s+(?:more\s+)?"
    r"need\s+for)\s+(?P<what>(?:the|a|an|any|those|these|that)\s+"
    rf"{_EN_PHRASE}+?)\s+(?:any\s?more|any\s+longer){_EN_END}", re.I)
""""You don't need the ticket ID prefix anymore": a withdrawal of what it names."""
_EN_ONE_OFF: Final = re.compile(
    r"\b(?:for|in|on)\s+(?:this|that|the|these)\s+(?:one|answer|reply|response|file|function"
    r"|case|pr|commit|task|message|question|draft|email|section|run|time|step|script)\b"
    r"|\bthis\s+(?:time|once)\b|\bjust\s+(?:this\s+)?once\b|\bfor\s+now\b|\btoday\b"
    r"|\bhere\b|\bfor\s+a\s+(?:moment|bit|while|sec)\b", re.I)

_CJK_END = r"(?=[，,、；;。！!]|$)"
"""A withdrawal's clause ends at a comma, a semicolon or the sentence's end."""
_ZH_WHAT = r"(?P<what>[^，,。！!？?；;]{2,40}?)"
_ZH_RULE = r"(?:限制|规则|規則|要求|规定|規定|约束|上限|格式|偏好)"
_ZH_RULE_WHAT = r"(?P<what>[^，,。！!？?；;]{0,30}?" + _ZH_RULE + ")"
_ZH_NO_NEED = r"(?:不用|不需要|不必)"
ZH_FORMS: Final = (
    # 算了，不用限制200字了 / 算了，别管字数了 (not 算了，不用修改代码了: the task at hand)
    re.compile(r"(?:算了|罢了)[，,、\s]*(?:就|那就|还是)?(?:不用|不需要|不必|别|不要|甭)"
               r"(?:再(?:管|限制)?|管|限制)" + _ZH_WHAT + r"了?" + _CJK_END),
    # 不用再加表情了 / 以后不需要再写总结了
    re.compile(r"(?:以后|之后|往后)?(?:就|也)?" + _ZH_NO_NEED + "再" + _ZH_WHAT + "了" + _CJK_END),
    # 200字的限制取消了 / 格式要求就不用了
    re.compile(r"(?:把)?" + _ZH_RULE_WHAT + r"(?:就|也)?(?:取消|去掉|撤销|作废|不要|不用|不算|废除)"
               r"(?:掉)?(?:了|吧)?" + _CJK_END),
    # 取消200字的限制 / 忘掉之前说的格式要求
    re.compile(r"(?:请|那就|就)?(?:取消|去掉|撤销|忘掉|忘了|忽略|无视)(?:掉)?" + _ZH_RULE_WHAT
               + r"(?:吧|了)?" + _CJK_END),
)
ZH_SAID: Final = re.compile(
    r"(?:那|那么|嗯|哦|对了)?[，,]?(?:忘掉|忘了|忽略|无视)?(?:我)?(?:之前|刚才|前面|上次|以前)(?:我)?"
    r"(?:说|讲|提|要求)(?:过)?的?" + _ZH_WHAT + r"(?:那条|那个)?(?:就|也)?"
    r"(?:不算了|作废了?|取消(?:了|吧)?|不用了|就算了|算了|忘了吧|不要了)" + _CJK_END)
_ZH_FORGET = r"(?:忘掉|忘记|忘了|别记着|不要记着|别记住)"
_ZH_OWN = r"(?P<what>(?:我|我们)[^，,。！!？?；;忘]{2,40}?)"
_ZH_THAT = r"(?:这件事|这事|这一点|那件事|的事情?)"
ZH_FORGET_THAT: Final = (
    re.compile(r"(?:那|那么|嗯|哦|对了)?[，,]?(?:请|麻烦|你)?" + _ZH_FORGET + _ZH_OWN + _ZH_THAT
               + r"?(?:吧|了)?" + _CJK_END),
    re.compile(r"(?:那|那么|嗯|哦|对了)?[，,]?(?:请|麻烦|你)?(?:把" + _ZH_OWN + _ZH_THAT + "?|"
               + _ZH_OWN.replace("what", "what2") + _ZH_THAT + r")(?:就|也)?" + _ZH_FORGET
               + r"(?:吧|了)?" + _CJK_END),
)
"""忘掉我住在柏林这件事, 把我有两只猫的事忘了吧: a statement of the user's own (it opens
with 我) withdrawn as something they said, the verb of forgetting before or after it
(我忘了我住在柏林 and 我昨天忘了, "I forgot", are neither: a verb after it needs 把 or
这件事)."""
_ZH_ABOUT = r"(?:所有|全部)?(?:关于|有关)(?P<what>[^，,。！!？?；;的]{1,20}?)的"
ZH_FORGET_ALL: Final = (
    re.compile(r"(?:那|那么|嗯|哦|对了)?[，,]?(?:请|麻烦|你)?(?:忘掉|忘记|删掉|删除|清除|清空)(?:掉)?"
               + _ZH_ABOUT + r"(?:一切|所有|全部)?(?:事情?|内容|记忆|信息)?(?:吧|了)?" + _CJK_END),
    re.compile(r"(?:那|那么|嗯|哦|对了)?[，,]?(?:请|麻烦|你)?把" + _ZH_ABOUT
               + r"(?:一切|所有|全部)?(?:事情?|内容|记忆|信息)?(?:都|全)"
               r"(?:忘掉|忘了|忘记|删掉|删了|删除|清除)(?:吧|了)?" + _CJK_END),
)
"""忘掉关于网球的一切, 把关于我前任的事都忘了吧: all the user said about it (``every``)."""
JA_FORGET_ALL: Final = re.compile(
    r"(?:あ|あと|それと|えっと)?[、,]?(?P<what>[^、，,。！!？?]{1,30}?)(?:のこと|について(?:のこと)?"
    r"|に関すること)(?:は|を)?(?:全部|すべて|全て|ぜんぶ|何もかも)(?:忘れて|消して|削除して)"
    r"[^、，,。]{0,12}?" + _CJK_END)
"""テニスのことは全部忘れて: all the user said about it (``every``)."""
_ZH_ONE_OFF: Final = re.compile(r"这次|这一次|这个回答|这回|今天|暂时|先不")
_ZH_DB_CONSTRAINT: Final = re.compile(r"(?:表|字段|列|唯一|外键|主键|非空|索引|数据库)的?约束")
"""A database's constraint (把users表的约束去掉): schema work, no instruction."""

_JA_RULE_WHAT = (r"(?P<what>[^、，,。！!？?]{1,30}?(?:制限|ルール|規則|条件|指定|縛り|形式"
                 r"|フォーマット|設定|お願い|指示|要求))")
JA_FORMS: Final = (
    # 200字の制限はもういいです / フォーマットの指定はなしで
    re.compile(_JA_RULE_WHAT + r"(?:は|の件は|も)(?:もう)?(?:いい|不要|なし|無し|なくて(?:も)?いい"
               r"|必要ない|いらない|取り消し|撤回|解除|廃止)(?:です|でいい|で大丈夫|にします|します"
               r"|で(?:お願いします)?|とします)?" + _CJK_END),
    # 200字の制限を取り消します / 解除してください
    re.compile(_JA_RULE_WHAT + r"を(?:取り消|撤回|解除|廃止|なしに|無しに|忘れ)"
               r"[^、，,。]{0,12}?" + _CJK_END),
)
JA_SAID: Final = re.compile(
    r"(?:あ|あと|それと|えっと)?[、,]?(?:さっき|先ほど|前に|以前|この前)(?:私が)?"
    r"(?:言った|お願いした|伝えた|書いた|頼んだ|の)"
    r"(?P<what>[^、，,。！!？?]{1,30}?)(?:は|の件は)?(?:忘れて|取り消し|撤回|なし|無し|なかったこと"
    r"|もういい|不要)[^、，,。]{0,12}?" + _CJK_END)
JA_FORGET_THAT: Final = re.compile(
    r"(?:あ|あと|それと|えっと)?[、,]?(?P<what>[^、，,。！!？?]{2,40}?)(?:こと|の|件)(?:は|を)"
    r"(?:もう)?(?:忘れて|覚えないで|記憶しないで)[^、，,。]{0,12}?" + _CJK_END)
"""私がベルリンに住んでいることは忘れてください, 猫を飼っている件は忘れて: a statement
named whole, then 忘れて, withdrawn as something the user said."""
JA_BARE: Final = re.compile(
    r"(?P<what>[^、，,。！!？?はも]{2,20}?)は(?:もう)(?:いい|不要|いらない|要らない|なし|無し|結構)"
    r"(?:です|でいい|で大丈夫|で)?" + _CJK_END)
"""What a rule asked for, then "no more" (箇条書きはもういいです, 要約はもう不要です): a
withdrawal of a rule only (the writer looks at constraints alone; もう is required)."""
ZH_ONLY_NO_MORE: Final = re.compile(
    r"(?:那|那就|就)?(?:不用|不需要|不必)(?:再)?(?P<what>只(?:限|推荐|用|要|写|说|看)[^，,。；;！!？?]{1,20}?)了?"
    + _CJK_END)
""""不用只限川菜了": a restriction (只…) the user lifts."""
_JA_ONE_OFF: Final = re.compile(r"今回|この回答|この返信|今日は|今だけ|とりあえず|一旦")


def find(scan: str, start: int, end: int, lang: str) -> Retraction | None:
    """The withdrawal that opens ``scan[start:end]`` (one sentence, its correction cue
    and fillers possibly stripped), or ``None`` (module doc)."""
    lead = len(scan[start:end]) - len(scan[start:end].lstrip())
    text = scan[start + lead:end]
    if not text.strip() or len(text) > 400:
        return None
    text = _TLDR.sub(lambda t: t.group().replace(";", "/"), text)  # one word, same length
    found = _find_en(text) if lang == "en" else _find_cjk(text, lang)
    if found is None and (thing := withdrawal.find(text, lang)) is not None:
        # "Drop the TL;DR from now on", "Paid tools are okay again" (module doc there)
        one_off = _EN_ONE_OFF if lang == "en" else _ZH_ONE_OFF if lang == "zh" else _JA_ONE_OFF
        if not one_off.search(text, 0, thing[0].end()) and not (
                lang == "en" and _EN_ASKED.match(text, thing[0].end())):
            found = thing[0], thing[1], False
    if found is None and lang == "en" and (k := withdrawal.reason_end(text)) is not None:
        # "the python 2 boxes are gone, so ignore what I said about hints": the
        # withdrawal opens after its reason; only the forms that name a rule or a saying
        again = _find_en(text[k:])
        if again is not None and (again[2] or again[0].re is EN_DROP_RULE):
            found = again
            lead += k
            text = text[k:]
    if found is None:
        return None
    m, group, said = found
    every = m.re in _EVERY
    order = m.re is withdrawal.EN_DROP_THING
    at, stop = m.start(group), m.end(group)
    while stop > at and text[stop - 1] in " .!?;,。！？；，":
        stop -= 1
    if stop <= at:
        return None
    tail = m.end()
    while tail < len(text) and (text[tail] in _TAIL_PUNCT or text[tail].isspace()):
        tail += 1
    base = start + lead
    return Retraction(base + at, base + stop, said, base + tail, every, order)


_TLDR: Final = re.compile(r"\btl;\s?dr\b", re.I)
_EVERY: Final = frozenset((EN_FORGET_ALL, *ZH_FORGET_ALL, JA_FORGET_ALL))
"""The forms that withdraw all the user said about something."""
_TAIL_PUNCT = frozenset(",;:-\u2014\u2013，,；;、。.!！")


def _find_en(text: str) -> tuple[re.Match[str], str, bool] | None:
    found: tuple[re.Match[str], str, bool] | None = None
    polite = _EN_POLITE.match(text)
    p = polite.end() if polite else 0
    m = EN_FORGET_ALL.match(text, p) or EN_DROP_SAID.match(text, p) \
        or EN_FORGET_THAT.match(text, p) or EN_FORGET_MINE.match(text, p)
    if m:
        found = m, "what", True
    else:
        for pattern in (EN_DROP_RULE, EN_NO_NEED, EN_NO_NEED_NOUN, EN_STOP, EN_NO_LONGER):
            m = pattern.match(text, p) if pattern in _ORDERS else (
                None if polite else pattern.match(text))
            if m:
                found = m, "what" if m.group("what") is not None else "what2", False
                break
    if found is None or _EN_ONE_OFF.search(text, 0, found[0].end()):
        return None  # "Ignore the word limit for this answer": an exemption, no withdrawal
    m, group = found[0], found[1]
    if polite and _EN_ASKED_MARK.match(text, m.end()) and not _EN_OR.search(m.group(group)):
        pass  # "Can you forget my address?": asked for, not asked about
    elif _EN_ASKED.match(text, m.end()):
        return None
    if _EN_DB_CONSTRAINT.search(m.group(group)):
        return None
    return found


_ORDERS: Final = frozenset((EN_DROP_RULE,))
"""The statement-shaped forms ("The limit no longer applies") are never asked for."""


def _find_cjk(text: str, lang: str) -> tuple[re.Match[str], str, bool] | None:
    said, forms, one_off = (ZH_SAID, ZH_FORMS, _ZH_ONE_OFF) if lang == "zh" \
        else (JA_SAID, JA_FORMS, _JA_ONE_OFF)
    found: tuple[re.Match[str], str, bool] | None = None
    m = said.match(text)
    if m is None:
        m = JA_FORGET_ALL.match(text) if lang == "ja" else (
            ZH_FORGET_ALL[0].match(text) or ZH_FORGET_ALL[1].match(text))
    if m is None and lang == "ja":
        m = JA_FORGET_THAT.match(text)
    elif m is None:
        m = ZH_FORGET_THAT[0].match(text) or ZH_FORGET_THAT[1].match(text)
        if m is not None and m.group("what") is None:
            found = m, "what2", True
    if m and found is None:
        found = m, "what", True
    elif found is None:
        for pattern in (*forms, JA_BARE if lang == "ja" else ZH_ONLY_NO_MORE):
            m = pattern.match(text)
            if m:
                found = m, "what", False
                break
    if found is None or one_off.search(text, 0, found[0].end()) \
            or _ZH_DB_CONSTRAINT.search(found[0].group(found[1])):
        return None
    return found


_PERMISSION: Final = re.compile(
    r"\b(?:fine|ok(?:ay)?|allowed|acceptable|welcome|no\s+problem|whatever|up\s+to\s+you"
    r"|as\s+(?:long|much|many|short)\s+as|(?:doesn'?t|does\s+not|don'?t|do\s+not)\s+matter"
    r"|instead|rather)\b|可以|没关系|没问题|随意|随便|都行|无所谓|不限|改成|改为|换成"
    r"|大丈夫|構いません|かまいません|いいです|自由|問題ありません|代わりに|に変更", re.I)
"""A permission ("Plain text is fine", 長くても大丈夫です) or a replacement ("Use
plain text instead", 改成500字): the words of a stance that takes a withdrawn rule's
place."""
_POINTS_BACK: Final = re.compile(r"\b(?:it|its|that|this|they|them)\b|它|这个|那个|それ|これ|あれ",
                                 re.I)
"""A pronoun in the statement after a withdrawal: it speaks of what was withdrawn ("…,
the client moved it to Friday")."""
_EN_WORD: Final = re.compile(r"[a-z][a-z'-]{3,}")
_POINTING: Final = frozenset(("what", "said", "about", "that", "this", "those", "these",
                              "your", "told", "wrote", "mentioned", "earlier", "previous"))
_CJK_CONTENT: Final = re.compile(r"[\u30a0-\u30ff\u3400-\u9fff]")


def _content(text: str, lang: str) -> set[str]:
    bare = RULE_NOUNS.sub(" ", text)
    if lang != "en":
        return set(_CJK_CONTENT.findall(bare))
    return {w[:4] for w in _EN_WORD.findall(bare.lower()) if w not in _POINTING}


def takes_place(item: Extracted, phrase: str, lang: str) -> bool:
    """Whether ``item``, read after a withdrawal of ``phrase``, is the new stance that
    takes the withdrawn item's place: a statement (a fact, rule, preference or
    decision) that gives a value (in the phrase's unit, if it names one: "Make it 300
    words"), a permission or a replacement ("Plain text is fine", "Use YAML instead",
    長くても大丈夫です) or speaks of what was withdrawn (a word of the phrase, or a
    pronoun). One about something else ("Forget the word limit. We deploy with Argo
    CD.", "… Never use bullet points.") is no stance; it stands alone."""
    if item.kind not in STATEMENT_KINDS:
        return False
    if item.value is not None and (item.unit is None or unit_class(item.unit) in {
            unit_class(q.unit) for q in find_quantities(phrase)}):
        return True  # "…; the limit is 300 now", not "…. The API timeout is 30 s."
    return _PERMISSION.search(item.text) is not None or _POINTS_BACK.search(item.text) \
        is not None or bool(_content(phrase, lang) & _content(item.text, lang))
