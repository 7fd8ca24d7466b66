"""What a statement commits to: hypotheticals, hedges and requests about one answer.

Three classes of user sentences look like facts or rules to the clause rules but do
not state one (issue 24):

* A **hypothetical** says what would be under a condition that does not hold ("If we
  had 10 nodes, the job would finish in an hour", "Suppose the budget is 500 euros",
  "Had we used Redis, …", "We could finish in two weeks if we hired another
  engineer", 如果我们有10台机器，任务一小时就能跑完, 假如…的话, もしノードが10台あったら…).
  :func:`hypothetical` finds the span of the sentence it covers; the clauses inside
  yield nothing. A conditional *fact* or *rule* is not hypothetical: "If the client is
  offline, the timeout is 60 s", "If the request fails, retry 3 times",
  离线的话，超时是60秒, もし失敗したら、3回リトライしてください keep their items with
  the condition. What tells them apart is the consequence: a counterfactual modal
  (would, could, might; 就能, 可以, 就不会…了; 買える, だろう) or a frame that sets the
  premise up as imagined (suppose, imagine, what if, let's say; 假如, 假设; もし, 仮に).
* A **hedge** states something the speaker is not sure of ("I think the limit is 50
  requests per second", "Maybe the timeout is 30 s", "probably", "not sure but",
  我觉得, 可能, 也许, 大概是, たぶん, かもしれない, と思う). :func:`hedged` says whether a
  span holds one; the extraction keeps the fact or decision, flagged ``tentative``
  (:class:`memory_core.extraction.model.Extracted`), and the memory never lets it
  stand nor override a firm statement (:mod:`memory_core.items.standing`).
  "大概" before a number is an approximation ("延迟大概120毫秒"), not a hedge.
* A **request about the current answer** that holds a number ("Give me 5 ideas for a
  team name", "Summarise this in 3 bullet points", "Write a 200-word intro"): the
  number counts the answer's parts; it fixes no setting. :func:`answer_request` marks
  such a constraint ``one_off`` (conversation-local, never standing), as a request
  without a number already is.

Pure functions over the prepared scan string (:mod:`memory_core.extraction.prepare`);
every pattern is anchored or bounded, so the work is linear in the sentence.
"""

from __future__ import annotations

import re

from memory_core.extraction.cue import lacks

# --- hypotheticals ---------------------------------------------------------------------

EXCLAIMED = (r"(?:surprise|shock|relief|delight|horror|joy|disappointment|amazement"
             r"|embarrassment|excitement|face|reaction)\b")
""""Imagine my surprise: I got the job": an exclamation, no imagined premise (also read
by :mod:`memory_core.extraction.frame`)."""
_EN_FRAME = re.compile(
    r"(?:(?:and|but|so|ok|okay|now|well|just|hmm)[,\s]+)*"
    r"(?:suppose|supposing|imagine|hypothetically|what\s+if|let's\s+say|lets\s+say|let\s+us\s+say"
    r"|say\s+(?:we|you|i|they|the|our|that)|in\s+a\s+hypothetical)\b"
    r"(?!\s+(?-i:(?!I\b)[A-Z]))(?!\s+(?:my|our|his|her|their)\s+" + EXCLAIMED + r")", re.I)
"""A sentence that sets its premise up as imagined: everything after it is imagined.
Not before a capitalised name ("Imagine Dragons is my favorite band")."""
_EN_INVERSION = re.compile(
    r"(?:had|were)\s+(?:we|i|you|they|he|she|it|the|our|my|their)\b", re.I)
"""'Had we used Redis, …', 'Were the budget larger, …': a counterfactual premise."""
_EN_IF = re.compile(r"\b(?:if|unless)\b", re.I)
_EN_IF_POLITE = re.compile(
    r"(?:if|unless)\s+(?:possible|needed|necessary|required|so|not|applicable|any"
    r"|you\s+(?:can|could|like|want|wish|prefer|need\s+(?:me|us|to|it|anything|more|help))"
    r"|that's\s+(?:ok|okay|fine|possible)|it\s+helps)\b", re.I)
"""Fixed phrases that are a polite condition, not a supposition ("if possible", "if
you can", "if you need me")."""
_EN_MODAL = re.compile(r"\b(?:would|could|might|wouldn't|couldn't)\b|\b\w+'d\b", re.I)
_EN_NOT_MODAL = re.compile(
    r"(?:would|'d)\s+(?:(?:really|much|also)\s+)?(?:like|love|prefer|rather|appreciate"
    r"|be\s+(?:great|nice|good|helpful|ideal|awesome|perfect|lovely|appreciated|better))\b"
    r"|(?:if|when)\s+you(?:\s+could|\s+would|'d)\b|(?:could|would)\s+you\b"
    r"|\b(?:we|i|you|they|he|she|it)'d\s+(?:already|just|never|been|had|gone|done|seen"
    r"|decided|agreed|used|moved|set)\b", re.I)
"""Modals that are politeness or a preference ("I'd like", "it would be great if",
"if you could …") or a past perfect ("we'd decided"), not a counterfactual."""
_EN_WINDOW = 120  # a modal this far from its "if" belongs to the same supposition
_EN_MAX_CUES = 8  # "if" cues read per sentence: the work stays linear in its length
_EN_COMMA = re.compile(r"[,;:]")
_EN_CLAUSE_END = re.compile(
    r"[,;:]|\s(?:so|but|because|whereas|while|and\s+(?:i|we|you|they|he|she|it|our|my))\s",
    re.I)
"""Where the clause joined to an if-clause ends: a clause after it with its own
subject ("…, so we cap it at 40", "… and I could meet on Fridays") is stated."""

_ZH_STRONG = re.compile(r"假如|假设|假使|倘若|要不是|假若|设想|想象一下|试想")
_ZH_IF = re.compile(r"如果|要是|若是|万一|如若")
_ZH_IF_POLITE = re.compile(
    r"(?:如果|要是|万一)(?:有(?:问题|疑问|需要|任何问题)|需要(?:的话)?|可以(?:的话)?|可能(?:的话)?"
    r"|方便(?:的话)?|不行(?:的话)?)")
"""Fixed conditions (如果有问题, 如果需要, 如果可以的话): not a supposition."""
_ZH_MODAL = re.compile(r"能|可以|可能|就好了|早就|本来|会[^，,。；;]{0,20}了|应该会|说不定")
_ZH_CLAUSE = re.compile(r"[，,；;。]")
_ZH_ORDER = re.compile(r"请|必须|务必|一定要|不要|别|禁止|不许|不准|记得|重试|确保")
"""A consequence that orders ("如果失败，请重试3次"): a conditional rule, not imagined."""

_JA_STRONG = re.compile(r"^(?:もしも|もし|仮に)|[、,](?:もしも|もし|仮に)")
_JA_IF = re.compile(r"(?:たら|なら|れば|としたら|とすれば|だったら)[、,]")
_JA_IF_POLITE = re.compile(
    r"(?:必要|可能|大丈夫|問題|何か|気に|お手数|差し支え|ご都合|もし良|良|よ|でき)"
    r"(?:が|で|に)?(?:あれ|あっ|なっ|なけれ|あ)?(?:なら|れば|たら|ければ|かったら|れば)[、,]$")
"""Fixed conditions (必要なら, できれば, よければ, 何かあれば): not a supposition."""
_JA_CONJECTURE = re.compile(
    r"(?:える|られる|できる|だろう|でしょう|のに|かもしれない|かもしれません|はずだ|はずです"
    r"|えます|られます|できます|たのに)[。.!！]?$")
_JA_ORDER = re.compile(r"てください|でください|て下さい|ないで|ように|必ず|しましょう|お願い"
                       r"|こと[。]?$|禁止")


def hypothetical(scan: str, start: int, end: int, lang: str) -> tuple[int, int] | None:
    """The span of ``scan[start:end]`` (one sentence body) that is imagined, not
    stated (module doc), or ``None``. Clauses overlapping it yield no item."""
    if lang == "en":
        return _en_hypothetical(scan, start, end)
    if lang == "zh":
        return _zh_hypothetical(scan, start, end)
    return _ja_hypothetical(scan, start, end)


def _modal(scan: str, lo: int, hi: int) -> re.Match[str] | None:
    """The first counterfactual modal in ``scan[lo:hi]`` that is not inside a
    politeness or past-perfect phrase (:data:`_EN_NOT_MODAL`)."""
    for n, m in enumerate(_EN_MODAL.finditer(scan, lo, hi)):
        if n >= _EN_MAX_CUES:
            return None
        polite = any(p.start() < m.end() and m.start() < p.end() for p in _EN_NOT_MODAL.finditer(
            scan, max(lo, m.start() - 12), min(hi, m.end() + 24)))
        if not polite:
            return m
    return None


def _clause_end(scan: str, at: int, end: int, boundary: re.Pattern[str]) -> int:
    m = boundary.search(scan, at, min(end, at + _EN_WINDOW))
    return m.start() if m else min(end, at + _EN_WINDOW)


def _en_hypothetical(scan: str, start: int, end: int) -> tuple[int, int] | None:
    if _EN_FRAME.match(scan, start, end):
        return start, end
    if _EN_INVERSION.match(scan, start, end):
        m = _modal(scan, start, end)
        return (start, m.end()) if m else None
    for n, cue in enumerate(_EN_IF.finditer(scan, start, end)):
        if n >= _EN_MAX_CUES:
            break
        if _EN_IF_POLITE.match(scan, cue.start(), end):
            continue
        # the if-clause runs to its comma; the clause joined to it (the consequence)
        # is the one after it when it is fronted, else the one it ends
        if_end = _clause_end(scan, cue.end(), end, _EN_COMMA)
        before = scan[max(start, cue.start() - _EN_WINDOW):cue.start()]
        cut = [m.end() for m in _EN_CLAUSE_END.finditer(before)]
        lo = max(start, cue.start() - _EN_WINDOW) + (cut[-1] if cut else 0)
        if cut or lo == start:
            fronted = not scan[lo:cue.start()].strip(" ,;:") or \
                re.fullmatch(r"\s*(?:and|but|so|or|then|even|only|and\s+even)?\s*",
                             scan[lo:cue.start()], re.I) is not None
        else:
            fronted = False
        if fronted:
            hi = if_end
            if if_end < end and scan[if_end] in ",;:":
                hi = _clause_end(scan, if_end + 1, end, _EN_CLAUSE_END)
            seg_lo = cue.start()
        else:
            hi = _clause_end(scan, cue.end(), end, _EN_CLAUSE_END)
            seg_lo = lo
        m = _modal(scan, seg_lo, hi)
        if m is not None:
            return min(cue.start(), m.start()), max(hi, m.end())
    return None


def _zh_hypothetical(scan: str, start: int, end: int) -> tuple[int, int] | None:
    strong = _ZH_STRONG.search(scan, start, end)
    cue = strong
    if cue is None:
        for n, c in enumerate(_ZH_IF.finditer(scan, start, end)):
            if n >= _EN_MAX_CUES:
                break
            if _ZH_IF_POLITE.match(scan, c.start(), end) is None:
                cue = c
                break
    if cue is None:
        return None
    rest = scan[cue.end():end]
    if _ZH_ORDER.search(rest):
        return None
    if strong is not None:
        return cue.start(), end
    # 能/可以 count only in the if-clause and the clause right after it
    first = _ZH_CLAUSE.search(scan, cue.end(), end)
    hi = end
    if first is not None:
        second = _ZH_CLAUSE.search(scan, first.end(), end)
        hi = second.start() if second else end
    m = _ZH_MODAL.search(scan, cue.end(), hi)
    return (cue.start(), m.end()) if m else None


def _ja_hypothetical(scan: str, start: int, end: int) -> tuple[int, int] | None:
    body = scan[start:end].rstrip()
    if _JA_ORDER.search(body):
        return None
    strong = _JA_STRONG.search(body)
    if strong is not None:
        return start + strong.start(), end
    for n, cue in enumerate(_JA_IF.finditer(body)):
        if n >= _EN_MAX_CUES:
            break
        if _JA_IF_POLITE.search(body, max(0, cue.start() - 8), cue.end()):
            continue
        if _JA_CONJECTURE.search(body):
            return start + cue.start(), end
        break
    return None


# --- hedges ------------------------------------------------------------------------------

_EN_HEDGE = re.compile(
    r"\b(?:maybe|perhaps|possibly|probably|presumably|likely|unlikely|supposedly|apparently"
    r"|might|could\s+be|i\s+(?:could|might)\s+be\s+wrong"
    r"|i\s+(?:(?:really|honestly|still|also)\s+)?(?:think|guess|believe"
    r"|suppose|suspect|reckon|assume|imagine|doubt)|i\s+feel\s+like"
    r"|(?:i'm|i\s+am|we're|we\s+are)\s+not\s+(?:(?:100%|entirely|completely|totally|quite"
    r"|really|fully)\s+)?(?:sure|certain)|not\s+(?:(?:100%|entirely|completely|totally|quite"
    r"|really|fully)\s+)?sure|unsure|iirc|afaik|if\s+i\s+(?:remember|recall)"
    r"|if\s+i'm\s+not\s+mistaken|as\s+far\s+as\s+i\s+(?:know|remember|recall)"
    r"|seems?\s+(?:to|like)|appears\s+to|in\s+theory|i'd\s+(?:say|guess|think|imagine)"
    r"|my\s+(?:guess|hunch)|i\s+have\s+a\s+(?:feeling|hunch))\b", re.I)
"""Words by which an English speaker marks a statement as unsure. "I'm pretty sure",
"I know", "approximately" and "about" are not hedges."""
_EN_HEDGE_NEEDLES = ("maybe", "perhaps", "possibly", "probably", "presumably", "likely",
                     "supposedly", "apparently", "might", "could", "think", "guess", "believe",
                     "suppose", "suspect", "reckon", "assume", "imagine", "doubt", "feel", "sure",
                     "certain", "iirc", "afaik", "remember", "recall", "mistaken", "far", "seem",
                     "appear", "theory", "i'd", "hunch")
"""Substrings (lower-case) every :data:`_EN_HEDGE` match holds (``cue.lacks``)."""
_ZH_HEDGE = re.compile(
    r"(?:我们|我)(?:觉得|认为|感觉|猜|估计|相信|印象中)|(?<![尽不])可能|也许|或许|好像|似乎|貌似"
    r"|大概(?![\d一二两三四五六七八九十百千万几])|应该是|说不定|不确定|不太确定|不敢确定|恐怕"
    r"|估计|印象中|看起来")
"""Chinese hedges. 大概 before a number is "about" (an approximation); 尽可能 is "as …
as possible" and 不可能 "impossible": neither is a hedge."""
_ZH_SHOULD_BE = re.compile(r"应该是")
_ZH_GUESS_END = re.compile(r"吧[。.!！]?\s*$")
"""After a correction cue (其实, 不对, 更正) "应该是" is the correction's "should be"
("其实…应该是17小时", like "Actually it should be 45 s"), not a guess, unless the
clause ends in 吧 ("不对，应该是17小时吧")."""
_JA_HEDGE = re.compile(
    r"たぶん|多分|おそらく|恐らく|かもしれ|と思う|と思います|と思いま|と思っ|気がする|気がします"
    r"|はずです|はずだ|(?<!晴)(?<!愛)(?<!憎)(?<!誇)(?<!鹿)(?<!汚)(?<!男)(?<!女)(?<!供)らしい|みたいです|ようです|でしょう(?!か)|だろう|確か(?![にめ])|かな[。]?$")
"""Japanese hedges (たぶん, かもしれない, …と思う, 確か…); not the らしい of an adjective
(素晴らしい, 可愛らしい, 男らしい)."""
_EN_RELATIVE = re.compile(r",\s*(?:which|who|whom|whose|where)\b", re.I)
"""A relative clause: its hedge ("…, which is probably the best city") does not cover
the main clause."""
_EN_LEAD = re.compile(r"(?:(?:and|but|so|ok|okay|well|hmm|honestly|also)[,\s]+)*")
_ZH_LEAD = re.compile(r"(?:我们|我)?(?:觉得|认为|感觉|猜|估计|相信|印象中)|也许|或许|可能|好像|似乎"
                      r"|大概(?![\d一二两三四五六七八九十百千万几])|说不定|恐怕|估计|不确定")
_JA_LEAD = re.compile(r"(?:たぶん|多分|おそらく|恐らく|確か(?![にめ]))")


def hedged(scan: str, start: int, end: int, lang: str, *, correcting: bool = False) -> bool:
    """Whether ``scan[start:end]`` holds a hedge (module doc). ``correcting``: the
    clause revises a value (a correction cue opens it), where Chinese "应该是" states
    the right value rather than a guess."""
    if lang == "en":
        if lacks(scan[start:end], _EN_HEDGE_NEEDLES):
            return False  # no match of _EN_HEDGE can lie in the clause
        rel = _EN_RELATIVE.search(scan, start, end)
        return _EN_HEDGE.search(scan, start, rel.start() if rel else end) is not None
    if lang == "zh":
        return any(not (correcting and _ZH_SHOULD_BE.fullmatch(m.group())
                        and not _ZH_GUESS_END.search(scan, start, end))
                   for m in _ZH_HEDGE.finditer(scan, start, end))
    return _JA_HEDGE.search(scan[start:end].rstrip()) is not None


def unhedged(text: str) -> str:
    """``text`` without its hedges ("I think the owner is Dana" -> "the owner is
    Dana", 我猜负责人可能是小张 -> 负责人是小张): the claim a guess makes, to hold
    beside a firm statement's."""
    for hedge in (_EN_HEDGE, _ZH_HEDGE, _JA_HEDGE):
        text = hedge.sub(" ", text)
    return re.sub(r"\s{2,}", " ", text).strip()


def hedged_lead(scan: str, start: int, end: int, lang: str) -> bool:
    """Whether a hedge opens the sentence ``scan[start:end]`` ("I think X, and Y",
    "Not sure but …", 我觉得…, たぶん…): it then scopes every clause of it; a hedge
    further in scopes only its own clause."""
    if lang == "en":
        lead = _EN_LEAD.match(scan, start, end)
        at = lead.end() if lead else start
        m = _EN_HEDGE.match(scan, at, end)
        return m is not None
    if lang == "zh":
        return _ZH_LEAD.match(scan, start, end) is not None
    return _JA_LEAD.match(scan, start, end) is not None


# --- requests about the current answer --------------------------------------------------

_EN_ANSWER_VERB = re.compile(
    r"(?:(?:please|pls|kindly|just|also|and|then|now|so|ok|okay|can\s+you|could\s+you)[,\s]+)*"
    r"(?:give|write|list|summari[sz]e|sum\s+up|suggest|generate|draft|brainstorm|name|propose"
    r"|create|make|show|tell|translate|rewrite|rephrase|outline|explain|describe|compare"
    r"|recommend|find|pick|choose|provide|produce|come\s+up\s+with|offer|condense|shorten"
    r"|expand|compose|send)\b", re.I)
_EN_COUNT = (r"(?:\d+|one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve"
             r"|fifteen|twenty|thirty|forty|fifty|a\s+dozen|a\s+couple\s+of)")
"""A count in digits or in words ("3 examples", "three examples", "a dozen ideas"): the
number words :mod:`memory_core.extraction.quantity` reads as a bare count."""
_EN_COUNTED = re.compile(
    r"\b" + _EN_COUNT + r"(?:\s+|-)(?:[a-z]+[\s-]+){0,2}?"
    r"(?:ideas?|options?|examples?|bullet(?:\s*points?)?s?|points?|names?|words?|sentences?|paragraphs?|lines?|variants?|versions?|alternatives?"
    r"|suggestions?|tips?|questions?|reasons?|titles?|taglines?|slogans?|drafts?|items?"
    r"|takeaways?|tweets?|jokes?|headlines?|ways?|things?|bullets?|candidates?|choices?"
    r"|summaries|descriptions?|steps?|facts?|pros|cons|words?)\b", re.I)
_EN_DIRECT_COUNT = re.compile(
    r"\s+(?:me|us)\s+(?:another\s+|(?:an?\s+)?(?:extra|more)\s+)?" + _EN_COUNT
    + r"\s+(?:more\s+)?"
    r"[a-z][a-z-]*\b(?![^.;!?\n]*\bper\b)", re.I)
"""A count right after the answer's recipient ("Give me 5 test cases", "Show us 3
configs", "Write me 4 unit tests"): the number counts what the order hands over now,
whatever the noun. Not a count said per unit ("… 20 rows per page" sets a layout)."""
_EN_BOUND = re.compile(
    r"\b(?:at\s+most|at\s+least|no\s+more\s+than|no\s+less\s+than|up\s+to|under|over|below"
    r"|above|max(?:imum)?|min(?:imum)?|fewer\s+than|less\s+than|more\s+than|within|every"
    r"|each|always|never|all|any|whenever|from\s+now\s+on|going\s+forward|by\s+default)\b",
    re.I)
"""A bound or a scope word: the number then limits every answer ("Keep replies under
200 words", "Always list 3 options")."""
_EN_THIS_ANSWER = re.compile(
    r"\b(?:for|in|with)\s+this\s+(?:one|answer|reply|response|message|question|request"
    r"|task|script|file|function|snippet|example|draft|post|email|page|section|paragraph"
    r"|summary|translation|version|run|query|commit|pr|pull\s+request)\b"
    r"|\bthis\s+time\b|\bjust\s+(?:this|here|now)\b"
    r"|\b(?:for|in)\s+the\s+[\w-]+\s+(?:you're|you\s+are)\s+(?:writing|drafting|making"
    r"|preparing|building|doing)\b", re.I)
"""An order scoped to the answer at hand by its words, whatever its number or bound:
"Use Python 3.11 for this script", "… this time", "For the quiz you're writing now, …"."""
_EN_KEEP_IT = re.compile(
    r"(?:(?:please|pls|just|and|ok|okay|now|so)[,\s]+)*(?:keep|make|cut|trim|shorten"
    r"|limit|cap)\s+(?:it|this|that|the\s+(?:answer|reply|response|summary|text|draft"
    r"|above))\b", re.I)
_EN_ANSWER_UNIT = re.compile(
    r"\b\d+\s*(?:words?|sentences?|lines?|bullets?|bullet\s+points?|points?|paragraphs?"
    r"|characters?|chars?|pages?|tokens?|items?|sections?|questions?|options?|ideas?"
    r"|examples?|milestones?|slides?|tips?|suggestions?)\b", re.I)
""""Keep it under 100 words", "Cap the summary at 3 sentences": an order whose object is
the answer and whose number counts the answer's parts ("Limit it to 3 retries", "Make
it 60 seconds" set a value named earlier, and stand)."""
_EN_STANDS = re.compile(
    r"\b(?:always|never|every|each|whenever|from\s+now\s+on|going\s+forward|by\s+default"
    r"|in\s+future|in\s+the\s+future|from\s+today|must|mustn't|anymore|no\s+longer"
    r"|as\s+a\s+rule|at\s+all\s+times|as\s+a\s+standard|standard\s+practice"
    r"|(?:don't|do\s+not|not)\s+ever"
    r"|for\s+this\s+(?:project|repo|repository)|(?:for|in|to|on)\s+(?:all|any|new|future))\b",
    re.I)
"""Words by which an order scoped to this answer still says it stands for later ones
(those of ``items.standing.STANDING_RULE``: "You must not touch that table", "Don't
use that library anymore" stand, as they did before material at hand was read), and
a quantified scope ("Use those settings for all future projects")."""


_ZH_ANSWER_VERB = re.compile(
    r"(?:请|麻烦)?(?:你|您)?(?:帮我|给我|帮忙)?(?:用|写|列出|列|总结|概括|想|起|生成|提供|推荐|翻译"
    r"|改写|举|给出|给|出)")
_ZH_COUNTED = re.compile(r"\d+\s*(?:个|条|句|段|点|行|字|种|版|篇|项|句话)")
_ZH_STANDING = re.compile(r"以后|今后|每次|总是|一律|默认|始终|永远|所有|不超过|最多|至少|以内|以下"
                          r"|之内|不少于")
_JA_COUNTED = re.compile(r"\d+\s*(?:つ|個|行|文字|案|点|件|文|段落|項目|パターン|通り)")
_JA_ASK = re.compile(r"(?:ください|下さい|お願いします|お願い)[。!！]?$")
_JA_OUTPUT = re.compile(r"アイデア|案|例|候補|要点|名前|タイトル|ポイント|理由|選択肢|要約|まとめ"
                        r"|箇条書き|提案|質問|考えて|挙げて|書いて|出して|教えて|列挙")
"""What a request about the answer asks for (ideas, names, a summary…); "並列数は3つに
してください" sets a value instead."""
_JA_STANDING = re.compile(r"毎回|常に|必ず|今後|いつも|これから|以降|以内|以下|以上|まで|未満|ずつ")


_EN_LASTING = re.compile(
    r"\b(?:from\s+now\s+on|going\s+forward|by\s+default|in\s+(?:the\s+)?future|from\s+today"
    r"|every\s+time|each\s+time|any\s*time|whenever|in\s+(?:this|our|the)\s+(?:project|repo|repository"
    r"|codebase|team|company))\b", re.I)
"""Words by which an order lasts beyond the answer at hand, whatever else it says."""
_EN_THIS_REPLY = re.compile(
    r"\b(?:in|for|with)\s+this\s+(?:one|answer|reply|response|message)\b|\bthis\s+time\b",
    re.I)
"""The answer at hand named as the order's scope: "Always show the diff in this answer"
orders this answer throughout, not every later one."""
_EN_PRESENT = re.compile(
    r"(?<!\bso\s)(?<!\bsure\s)(?<!\bsuch\s)\b(?:that|those|these)\s+(?!(?:the|a|an|it|we|you|i"
    r"|they|he|she|is|was|are|were|will|would|should|must|can|could|answers|replies"
    r"|responses)\b)[a-z]"
    r"|(?<!\bor\s)(?<!\band\s)\b(?:above|below)\b(?!\s+\$?\d)|\bline\s+\d+\b"
    r"|\bthe\s+(?:last|first|top|bottom|next|previous)\s+\d+\b", re.I)
"""Material at hand an order works on ("that dump", "the log above", "line 42", "the
last 50 lines of the build output"): its number counts or points into that material,
it sets no lasting value. Not a bound ("Python 3.11 or above", "400 lines or below")
nor the answers in general ("Keep these answers under 200 words": more than the one
at hand)."""
_ZH_LASTING = re.compile(r"以后|今后|往后|从现在起|从现在开始|从今天起|从今天开始|从此|每次|一律"
                         r"|默认|始终|永远|总是|这个(?:项目|仓库|代码库|代码仓库|团队|公司|服务|系统|应用|产品)里?")
_ZH_THIS_REPLY = re.compile(r"这个回答|这次|这一次|本次|这条回复|这段回复|这条消息|这个回复")
_ZH_STANDS = re.compile(r"必须|务必|一直|不要|别|禁止")
_ZH_PRESENT = re.compile(r"第\s*\d+\s*行|这(?:个|段|些|份|张|条)|上面|下面的")
_JA_LASTING = re.compile(r"今後|以後|以降|これから|毎回|次回から|次からは|いつも|今日から"
                         r"|この(?:リポジトリ|プロジェクト|チーム|会社|サービス|アプリ|システム|コードベース|レポ|組織)")
_JA_THIS_REPLY = re.compile(r"この回答|この返信|今回|このメッセージ")
_JA_STANDS = re.compile(r"常に|必ず|絶対|原則")
_JA_PRESENT = re.compile(r"\d+\s*行目|この|その|上の|下の|もう一度")


_SCOPE_REACH = 400
"""Characters before a clause in which its sentence's opening scope words are read: a
bound, so that a sentence of many clauses (a pasted list with no full stop) costs time
linear in its length, not quadratic."""


def _lead(start: int, sentence_start: int | None) -> int:
    """Where the scope of a clause starting at ``start`` is read from."""
    if sentence_start is None:
        return start
    return max(min(sentence_start, start), start - _SCOPE_REACH)


_EN_ASKING = re.compile(
    r"(?:(?:so|and|also|ok|okay|hey)[,\s]+)*(?:can|could|would|will)\s+you\s+"
    r"(?:please\s+|kindly\s+|just\s+)*(?=[a-z])", re.I)
_EN_EMBEDDED = re.compile(r"\b(?:whether|if|what|when|where|why|how|who|which|that)\b",
                          re.I)


def lasting_request(scan: str, start: int, end: int, lang: str) -> int | None:
    """Where the order begins when a request asked as a question ("Could you …?",
    …ていただけますか) holds a word by which it lasts ("from now on", "every time",
    今後, 毎回): a rule asked politely, not a question nor a request about this answer.
    English: after "can/could/would/will you (please)", and only when the lasting word
    is the order's own, not in a clause it asks about ("Can you check whether we
    deploy every time CI passes?"). ``None`` otherwise, and for Chinese, whose asking
    words sit mid-sentence (以后能不能都用中文回答？)."""
    if lang == "en":
        asking = _EN_ASKING.match(scan, start, end)
        lasting = _EN_LASTING.search(scan, start, end)
        if asking is None or lasting is None \
                or _EN_EMBEDDED.search(scan, asking.end(), lasting.start()) is not None:
            return None
        return asking.end()
    if lang == "ja" and _JA_LASTING.search(scan, start, end) is not None:
        return start  # the order is read whole (rules_cjk: "今後は…していただけますか")
    return None  # Chinese asks mid-sentence (以后能不能…？): not read yet


def about_this_answer(scan: str, start: int, end: int, lang: str,
                      sentence_start: int | None = None) -> bool:
    """Whether an order in ``scan[start:end]`` is scoped to the answer at hand ("Keep it
    under 100 words", "Use Python 3.11 for this script", "… this time", 这个回答控制在
    100字以内, 今回は1案でいいです) or works on material at hand ("Fix the off-by-one on
    line 42", "List the top 10 slowest queries from that dump", 把第42行的…修一下,
    この関数を3つのテストで確認して): a one-off, whatever its number or bound. Words by
    which it lasts ("from now on", "every time", 以后, 今後) make it a rule, and so do
    "always", "never", 必须, 常に unless the order names this answer as its scope
    ("Always show the diff in this answer"). The caller applies it to constraints (a
    fact "… this time" reports). ``sentence_start``: where the clause's sentence
    begins; in Chinese and Japanese a scope said before the clause (この回答では、…)
    counts, unless a lasting word comes between."""
    lead = _lead(start, sentence_start)
    if lang == "zh":
        return _scoped(scan, lead, start, end, _ZH_LASTING, _ZH_THIS_REPLY, _ZH_STANDS,
                       _ZH_PRESENT)
    if lang == "ja":
        return _scoped(scan, lead, start, end, _JA_LASTING, _JA_THIS_REPLY, _JA_STANDS,
                       _JA_PRESENT)
    if lang != "en" or _EN_LASTING.search(scan, start, end) is not None:
        return False
    if _EN_THIS_REPLY.search(scan, start, end) is not None:
        return True
    if _EN_STANDS.search(scan, start, end) is not None:
        return False
    return _EN_THIS_ANSWER.search(scan, start, end) is not None \
        or _EN_PRESENT.search(scan, start, end) is not None or (
            _EN_KEEP_IT.match(scan, start, end) is not None
            and _EN_ANSWER_UNIT.search(scan, start, end) is not None)


def _scoped(scan: str, lead: int, start: int, end: int, lasting: re.Pattern[str],
            this_reply: re.Pattern[str], stands: re.Pattern[str],
            present: re.Pattern[str]) -> bool:
    """:func:`about_this_answer` for Chinese and Japanese, from its four word lists
    (``lead``: where the sentence begins, ``start``: the clause)."""
    if lasting.search(scan, start, end) is not None:
        return False
    if this_reply.search(scan, start, end) is not None or (
            lead < start and lasting.search(scan, lead, start) is None
            and this_reply.search(scan, lead, start) is not None):
        return True
    return stands.search(scan, start, end) is None \
        and present.search(scan, start, end) is not None


_EN_THIS_TASK = re.compile(
    r"\b(?:for|in|during|within)\s+(?:this|the\s+current)\s+(?:task|conversation|chat"
    r"|session|thread|exercise|assignment)\b", re.I)
_ZH_THIS_TASK = re.compile(r"(?:这次|这一次|本次|此次)的?(?:任务|对话|会话|聊天|工作)"
                           r"|(?:这个|当前)(?:任务|对话|会话)(?:里|中|期间)")
_JA_THIS_TASK = re.compile(r"今回の(?:タスク|作業|会話|チャット|セッション)"
                           r"|この(?:タスク|会話|チャット|セッション)(?:では|の間|中)")
"""The task or conversation at hand named as a statement's scope: "For this task the
bucket is …", "… for this session", 本次任务中, 这次任务的…, 今回のタスクでは. Not a
thing that is a task ("This task runs every night", 这个任务每天运行): only "for/in
this task", "this time's task" and "in this task" scope."""
_EN_THIS_TASK_NEEDLES = ("task", "conversation", "chat", "session", "thread", "exercise",
                         "assignment")
"""Substrings (lower-case) every :data:`_EN_THIS_TASK` match holds (``cue.lacks``)."""


def about_this_task(scan: str, start: int, end: int, lang: str,
                    sentence_start: int | None = None) -> bool:
    """Whether a statement in ``scan[start:end]`` is scoped to the task or conversation
    at hand (:data:`_EN_THIS_TASK`): a fact or decision of that conversation, as the
    orders :func:`about_this_answer` finds are one-offs. Words by which it lasts
    ("from now on", "every later one", 以后, 今後) make it long-term.
    ``sentence_start``: where the clause's sentence begins (本次任务中，… scopes the
    clause after its comma)."""
    lead = _lead(start, sentence_start)
    if lang not in ("zh", "ja") and lacks(scan[lead:end], _EN_THIS_TASK_NEEDLES):
        return False  # no match of _EN_THIS_TASK: never scoped, lasting words or not
    pattern, lasting = {"zh": (_ZH_THIS_TASK, _ZH_LASTING), "ja": (_JA_THIS_TASK, _JA_LASTING)
                        }.get(lang, (_EN_THIS_TASK, _EN_LASTING))
    if lasting.search(scan, lead, end) is not None or (
            lang == "en" and _EN_LATER_ONES.search(scan, lead, end) is not None):
        return False
    return pattern.search(scan, lead, end) is not None


_EN_LATER_ONES = re.compile(r"\b(?:every|each|all|any)\s+(?:later|future|other|next)\b", re.I)
"""A scope that goes on past the task at hand ("for this task and every later one")."""


def answer_request(scan: str, start: int, end: int, lang: str) -> bool:
    """Whether an order in ``scan[start:end]`` asks for the current answer with a
    count of its parts ("Give me 5 ideas…", "Summarise this in 3 bullet points",
    用3个要点总结一下, アイデアを5つください): a one-off, whatever numbers it holds
    (module doc). A bound or a word by which it stands ("under", "always", 每次,
    以内, 毎回) makes it a rule."""
    if lang == "zh":
        return (_ZH_ANSWER_VERB.match(scan, start, end) is not None
                and _ZH_COUNTED.search(scan, start, end) is not None
                and _ZH_STANDING.search(scan, start, end) is None)
    if lang == "ja":
        body = scan[start:end].rstrip()
        return (_JA_ASK.search(body) is not None and _JA_COUNTED.search(body) is not None
                and _JA_OUTPUT.search(body) is not None and _JA_STANDING.search(body) is None)
    lead = _EN_ANSWER_VERB.match(scan, start, end)
    if lead is None:
        return False
    return (_EN_COUNTED.search(scan, lead.end(), end) is not None
            or _EN_DIRECT_COUNT.match(scan, lead.end(), end) is not None) \
        and _EN_BOUND.search(scan, start, end) is None


# --- one occasion ----------------------------------------------------------------------

_EN_ONE_OCCASION = re.compile(
    r"(?:before|after|during|ahead\s+of|until|till)\s+(?:the|this|that|tomorrow's|today's"
    r"|tonight's|next|our|my|your|his|her|their|(?:mon|tues|wednes|thurs|fri|satur|sun)day's)"
    r"\s+(?!(?:each|every|any)\b)", re.I)
_ZH_ONE_OCCASION = re.compile(
    r"(?:这次|本次|下次|这个|那个|明天|今天|今晚|后天|周[一二三四五六日末]|下周|这周|本周|下午|上午)"
    r"(?:的)?[^，,。]{0,10}?(?:之前|以前|前)")
_JA_ONE_OCCASION = re.compile(
    r"(?:この|その|あの|次の|次回の|今度の|明日の|今日の|今夜の|来週の|今週の|本日の|午後の|午前の)"
    r"|[^、。]の前(?:に|は|には)$")
_EN_RECURS = re.compile(r"\b(?:each|every|any|whenever)\b", re.I)
_ZH_RECURS = re.compile(r"每次|每回|都要|都得|都必须|一律|每个")
_JA_RECURS = re.compile(r"たびに|都度|ごとに|毎回|毎|各")


def one_occasion(condition: str, clause: str, lang: str) -> bool:
    """Whether an order's ``condition`` (as written) names one occasion: "before the
    meeting", "after tomorrow's demo", 这次发布前, 明天开会之前, 会議の前に, 明日の打ち合わせの前に
    — a definite event, not a recurring one ("before each commit", "before committing",
    提交前都要…, コミットする前に). An order for one occasion is a one-off (conversation-local),
    unless ``clause`` (the order's text) says it lasts or recurs ("always", 必须, 必ず,
    每次, 毎回)."""
    if lang == "zh":
        return (_ZH_ONE_OCCASION.match(condition) is not None
                and not (_ZH_LASTING.search(clause) or _ZH_STANDS.search(clause)
                         or _ZH_RECURS.search(clause)))
    if lang == "ja":
        return (_JA_ONE_OCCASION.match(condition) is not None
                or _JA_ONE_OCCASION.search(condition) is not None) \
            and not (_JA_LASTING.search(clause) or _JA_STANDS.search(clause)
                     or _JA_RECURS.search(condition))
    return (_EN_ONE_OCCASION.match(condition) is not None
            and not (_EN_LASTING.search(clause) or _EN_STANDS.search(clause)
                     or _EN_RECURS.search(condition)))
