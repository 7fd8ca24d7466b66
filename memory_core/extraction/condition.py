"""Qualifying conditions: "when offline", "in production", "unless …", "离线时", "本番環境では".

A number without its condition is a wrong memory: "the timeout is 30 s" and "the timeout
is 30 s when offline" disagree about every online request. The condition is returned as
a span of the clause, so the caller quotes it verbatim and removes it before reading the
subject. Patterns are bounded ({1,80}) and use no nested repetition.
"""

from __future__ import annotations

import re
from bisect import bisect_left

from memory_core.extraction.cue import tokens

_EN_CLAUSE = re.compile(
    r"\b(?:even if|only if|except (?:when|if)|as long as|whenever|when|if|unless|while|during"
    r"|until|once|before|after|(?:every|each|any)(?:\ssingle)?\stime|anytime)\b"
    r"(?!\s(?:possible|you\scan|it's\spossible|convenient|needed|necessary|any|all)\b)"
    r"(?!\s(?:about\s|around\s|roughly\s|approximately\s)?[\d\ue000])"
    r"(?:(?!\s(?:and|but|or|so|then|otherwise)\b)[^,;:.!?()\n]){1,80}",
    re.I,
)
"""Subordinate clause up to the next clause boundary or coordinating conjunction; not
"after all" (a discourse marker) and not a bare amount ("retries after 500 s": the
amount is the value, not a condition). "Every time you …", "each time …", "any time …"
subordinate as "whenever" does ("Every time you suggest a command, include --dry-run"
is the rule "Whenever you suggest a command, …")."""
_EN_JOINED = re.compile(
    r"\s(?:or|and)\s(?!(?:i|we|you|it|they|he|she|then|so|but|otherwise|else)\b)"
    r"[^\s,;:.!?()\n]+(?:\s(?!(?:is|are|was|were|i|we|you|it|they)\b)[^\s,;:.!?()\n]+){0,2}"
    r"(?=\s*,)", re.I)
"""A condition's object coordinated with "or"/"and", up to the comma that ends the
condition ("When you suggest walks or cafés, only pick …"): one to three words with no
new subject or copula, so the condition is the whole of "… walks or cafés", not a
clause cut before "or" that leaves "or cafés, only pick …" as a statement."""
_EN_SETTING = re.compile(
    r"\b(?:in|on|for|at|under|during)\s(?:the\s)?(?:prod(?:uction)?|staging|dev(?:elopment)?"
    r"|test(?:ing)?|qa|ci|local(?:host)?|preview|sandbox|peak(?:\s(?:hours|time|load))?"
    r"|weekends?|weekdays?|(?:mon|tues|wednes|thurs|fri|satur|sun)days|mobile|desktop"
    r"|windows|linux|macos|arm(?:64)?(?:\srunners)?|x86|high load|heavy load|low load"
    r"|cold starts?|night|business hours|off-peak|holidays|the weekend"
    r"|(?-i:[A-Z]\d{2,4}|M[1-4])\w*|gpus?|cpus?|tpus?)\b"
    r"|\b(?:offline|locally|on-prem|off-peak|by default)\b",
    re.I,
)
"""Deployment environments and situations that scope a value ("in production")."""
_EN_FRONTED = re.compile(
    r"(?:for|during|under|with|without|on|in|at)\s"
    r"(?!(?:example|instance|now|reference|what|the\srecord|short|general|fact|particular"
    r"|addition|summary|total|practice|any\scase|case|theory|other\swords|my\s(?:opinion|view)"
    r"|sure|once|real|reality|this|that|these|those|it|them|us|me|you|least|first|last|heart"
    r"|all|times|the\s(?:end|moment|time|past)|any\srate)\b)"
    r"[^,;:.!?()\n]{1,50}?(?=,|\s(?:i|we)(?:'d\s(?:rather|prefer|like)|\s(?:really\s|usually\s"
    r"|generally\s|always\s|much\s)?(?:prefer|like|love|enjoy|hate|dislike|want"
    r"|would\s(?:rather|prefer|like)))\b)", re.I)
"""A fronted prepositional phrase that scopes the clause after its comma ("For
long-polling clients, the timeout is 280 s"), or a first-person liking right after it
with no comma ("For work emails I prefer a formal tone", "In meetings I'd rather …");
discourse markers ("For example,", "In short,") are not conditions."""
_ARTICLE_MODIFIER = re.compile(r"\w+\sthe\s", re.I)
_NOUN_AFTER = re.compile(
    r"\s+(?!(?:and|or|but|so|for|with|to|is|are|was|were|when|if|only|today|now|too|as|at|on"
    r"|in|of|by|until|since|because|while|unless|the|a|an|this|that|it|we|i|you|they|then"
    r"|right|again|anymore|yet|already|also|instead|first|too|env|envs|environments?|mode"
    r"|setups?)\b)[a-z][a-z-]*\b")
_ENV_NOUN = re.compile(r"\s+(?:env|envs|environments?|mode|setups?)\b", re.I)
"""…which a setting word's own noun is not: "in the staging environment" scopes."""
"""A setting word between "the" and a following word is that word's modifier: "in the
staging cluster" is where something is, not a condition ("in the staging env, …" is
rarer than "in staging, …", and still keyed by its subject)."""
_EN_CLAUSE_WORDS = frozenset("even only except as whenever when if unless while during until once "
                             "before after every each any anytime".split())
_EN_SETTING_WORDS = frozenset(
    "prod production staging dev development test testing qa ci local localhost preview sandbox "
    "peak weekend weekends weekday weekdays mondays tuesdays wednesdays thursdays fridays "
    "saturdays sundays mobile desktop windows linux macos arm arm64 x86 load cold night business "
    "off-peak holidays offline locally on-prem default gpu gpus cpu cpus tpu tpus".split())
_HARDWARE = re.compile(r"[A-Z]\d{2,4}|M[1-4]\b")
_COPULA_BEFORE = re.compile(r"\b(?:is|are|was|were|will\sbe)\s+$", re.I)
"""A copula right before a setting phrase that ends the clause: the phrase is what the
subject is ("Code freeze is on Wednesdays", "The retro is during the weekend"), so a
later "… is on Thursdays" replaces it instead of standing beside it as another scope."""
"""Trigger words of the two English patterns (a pattern runs only when one is present)."""

_ZH_WORD_SHI = "小超同及暂準准按定当當实實临臨随隨有届屆平时時"
_ZH_WORD_ZAI = "现現正存实實所潜潛内內外自好"
"""First characters of words that end in 在 (现在 "now", 正在, 存在, 实在, 所在, 潜在, 内在,
外在, 自在, 好在): there 在 is no preposition opening a condition ("现在我们的前端框架是
React" is no "在…前" clause)."""
_ZH_CLAUSE = re.compile(
    r"(?:如果|假如|要是|若是|只要|一旦|除非|当|當|(?<![" + _ZH_WORD_ZAI + r"])在)"
    r"[^，,。；;！？!?\n]{1,20}?"
    r"(?:的时候|的時候|(?<![" + _ZH_WORD_SHI + r"])[时時](?![间間区區候好坏壞常])|的话|的話|情况下"
    r"|情況下|之前|之后|之後|以前|以后|以後|期间|期間|前(?![天年])|后(?![天年])|後(?!天)|中(?!午)"
    r"|下(?!午)|里|裡)"
    r"|除非[^，,。；;！？!?\n]{1,20}"
    r"|(?:周末|週末|工作日|高峰期|高峰时段|夜间|夜間|离线|離線|在线|在線|断网|斷網)(?:时|時|的时候|期间)?"
    r"|[^，,。；;！？!?\s是为為]{1,10}?(?:的时候|的時候|情况下|情況下|环境下|環境下|环境中|環境中|环境里"
    r"|環境裡)"
    r"|[^，,。；;！？!?\s是为為]{1,10}?(?<![" + _ZH_WORD_SHI + r"])[时時](?![间間区區候好坏壞常])"
    r"(?=[，,是为為要会會就则則都也]|$)"
    r"|(?:(?<=[，,。；;！？!?\s])|^)[^，,。；;！？!?\s是为為]{1,8}?(?<![一以上底地天私])(?:下|期间|期間)"
    r"(?=[，,])"
    r"|(?:(?<=[，,。；;！？!?\s])|(?<=以后|今后|往后|以後|今後)|^)(?!以后|今后|往后|以後|今後|从现在|從現在)"
    r"[^，,。；;！？!?\s是为為的]{2,10}?"
    r"(?<![\d一二三四五六七八九十两几半以之目提当當眼面年天月周时時钟鐘日点點号號午晚底])(?:之前|前)"
    r"(?=[，,都要必务一先请請得就也])"
)
_ZH_MARKS = re.compile(r"[时時话話况況前后後间間中下里裡除末日峰夜线線网網境]")
"""Chinese conditions: 如果/在/当… ending in a temporal or situational marker, a bare
situation word (离线, 周末), a clause-initial "X时/X环境下", or a fronted "X下，"/"X期间，"
before a comma ("高负载下，"), or a fronted "X(之)前" before a comma or the order it
scopes ("提交代码前都要…", "上线前，请…"; after a rule's 以后 too, which stays the
rule's; not a time ago, 三年前, a deadline, 五点前, 月底前, nor a word, 目前, 以前,
提前). The 时 marker is skipped inside words (小时, 超时, 同时, 时间, 时常, "时好时坏"…)."""

_ZH_SPEAKER_PLACE = re.compile(
    r"\s*(?:现在|目前|如今)?我们?(?:现在|目前|如今|一直|也|还)?(?=在[^，,。；;！？!?在]{1,15}?(?:工作|上班|打工|住|生活"
    r"|定居|居住)(?![宿院]))")
"""The speaker before 在 and where they work or live (我在阿里巴巴工作, 我们在公司里上班):
the 在 phrase is the place the statement names (``rules_cjk._ZH_PLACE_VERB``), not a
condition, though a name holds 里 (阿里巴巴, 阿里云)."""

_JA_CLAUSE = re.compile(
    r"(?:(?<=[はがをに、,\s」。！？!?])|^)[^、。,，はがを\s]{1,20}?"
    r"(?:の場合|場合|の時|のとき|とき|(?<![何同])時(?![間点])|の際|際|なら(?:ば)?|中は|では(?!な)"
    r"|の(?:たび|度|都度)に?|(?<=[^\W\d_])ごとに)"
    r"|もし[^、。,，]{1,20}?(?:たら|れば|なら)"
    r"|(?:本番|ステージング|検証|開発|ローカル)(?:環境)?(?:では|で(?![きすしもは]))"
    r"|(?:オフライン|オンライン|週末|平日|夜間)(?:時|の時|中)?"
    r"|(?:(?<=[はがを、,\s」。！？!?])|(?<=今後|以降)|^)(?!今後|以降|これから)[^、。,，はがを\s]{1,20}?"
    r"(?<![\d０-９一二三四五六七八九十数以直目日年月週間分秒時頃])(?:前に|前は|前には)"
    r"(?=[^。！？!?\n]*?(?:必ず|ください|下さい|すること|しないこと|べき|禁止|ましょう))"
)
_JA_MARKS = re.compile(r"場合|時|とき|際|なら|中は|では|もし|たら|れば|前に|前は|本番"
                       r"|たび|度に|都度|ごとに"
                       r"|ステージング|検証|開発|ローカル|オフライン|オンライン|週末|平日|夜間")
"""Japanese conditions: a phrase ending in 場合/時/とき/際/なら/では (or a recurring
one: のたびに, の都度, ごとに) right after a particle
or at the clause start (so the topic before は is not swallowed), and a fronted "X前に(は)"
("コミットする前に必ず…": the situation the rule is for, before a rule's or request's word; not
a time ago, 3日前に, nor a deadline, 9時前に)."""


def find_condition(scan: str, start: int, end: int, lang: str,
                   toks: frozenset[str] | None = None) -> tuple[int, int] | None:
    """Span of the first qualifying condition in ``scan[start:end]``, or None.

    Clause conditions (when/if/unless…) are preferred to setting phrases ("in
    production") when both occur; trailing spaces and punctuation are trimmed. ``toks``
    (the span's English word tokens, a superset is fine) saves recomputing them.
    """
    if lang == "en":
        toks = tokens(scan[start:end]) if toks is None else toks
        m = _EN_CLAUSE.search(scan, start, end) if not _EN_CLAUSE_WORDS.isdisjoint(toks) else None
        joined = _EN_JOINED.match(scan, m.end(), end) if m is not None else None
        if m is not None and joined is not None:
            return m.start(), joined.end()  # "when you suggest walks or cafés, …"
        setting = not _EN_SETTING_WORDS.isdisjoint(toks) or _HARDWARE.search(scan, start, end)
        if m is None and setting:
            m = _EN_SETTING.search(scan, start, end)
            if m is not None and _ARTICLE_MODIFIER.match(m.group()) \
                    and _NOUN_AFTER.match(scan, m.end(), end):
                m = None  # "in the staging cluster" names a thing; "in staging" scopes
        if m is None:
            m = _EN_FRONTED.match(scan, start, end)
    elif lang == "zh":
        m = _ZH_CLAUSE.search(scan, start, end) if _ZH_MARKS.search(scan, start, end) else None
        place = _ZH_SPEAKER_PLACE.match(scan, start, end) if m is not None else None
        if place is not None and m is not None and m.start() == place.end():
            m = _ZH_CLAUSE.search(scan, m.end(), end)  # 我在阿里巴巴工作: a place, no "在…里"
    else:
        m = _JA_CLAUSE.search(scan, start, end) if _JA_MARKS.search(scan, start, end) else None
    if m is None:
        return None
    a, b = m.start(), m.end()
    env = _ENV_NOUN.match(scan, b, end) if lang == "en" else None
    b = env.end() if env else b
    if lang == "en" and _COPULA_BEFORE.search(scan, start, a) \
            and not scan[b:end].strip(" \t,.;:!?"):
        return None  # "Code freeze is on Wednesdays": the whole predicate, its value
    while b > a and scan[b - 1] in " \t,，、。.;；:：":
        b -= 1
    return (a, b) if b > a else None


_LEAD = re.compile(r"^(?:[,，;；、\s]|and\s|but\s|so\s)+", re.I)
_CONDITION_TAIL = re.compile(r"[\s,，、:：はにでも]*")
"""What may follow a fronted condition before its main clause ("セールの時は、")."""


def join_fronted(scan: str, spans: list[tuple[int, int]], lang: str,
                 numbers: list[int]) -> list[tuple[int, int]]:
    """Join a clause that is only a condition to the clause after it ("在大促期间，
    商品缓存的TTL是100秒" is one statement scoped by its condition, not two).

    ``spans`` are a sentence's clauses in order (the joints between them left out);
    ``numbers`` the start offsets of its quantities (a clause with a number states
    something and is never only a condition)."""
    if len(spans) < 2:
        return spans
    out: list[tuple[int, int]] = []
    carry: int | None = None
    numbers = sorted(numbers)
    for k, (start, end) in enumerate(spans):
        if carry is not None:
            start, carry = carry, None
        cond = None
        joint_end = spans[k + 1][0] if k + 1 < len(spans) else end
        at = bisect_left(numbers, start)  # a number inside the clause: not a condition
        if k + 1 < len(spans) and not (at < len(numbers) and numbers[at] < end):
            cond = find_condition(scan, start, joint_end, lang)  # sees the comma
        lead = _LEAD.match(scan, start, end)
        first = lead.end() if lead else start
        if cond is not None and cond[0] <= first and (
                (tail := _CONDITION_TAIL.match(scan, cond[1], joint_end)) is not None
                and tail.end() == joint_end):
            carry = start
            continue
        out.append((start, end))
    return out
