"""Subject keys: the short phrase a statement is about, normalised for matching.

The engine links a correction to the statement it corrects, and flags a conflict, by
comparing subjects for equality or containment. So a key must be short (a head-noun
phrase of at most four words, or a few CJK characters), stable under light
rephrasing, and free of the value: "the API timeout is 30 s", "Actually, the API
timeout is 45 seconds" and "the timeout for the API is 1 min" all key "api timeout".

English: lowercase word tokens; articles, possessives (pronouns and "X's" alike: "the
login form's log level" keys "login form log level"), pronouns, hedges and numbers
dropped; "X of/for/in Y" reordered to "Y X" (the modifier-first order English uses
for compounds); other prepositional tails (on/at/during/with…) cut, since they hold
settings and conditions, not the thing itself.

Chinese (already folded to simplified) and Japanese: whitespace and punctuation
removed, leading possessives/demonstratives/time words stripped, the linking particle
的/の between two content characters removed ("数据库的端口" = "数据库端口").
"""

from __future__ import annotations

import re

from memory_core.extraction.prepare import MASK

_LATIN = "A-Za-z0-9\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f"
_EN_TOKEN = re.compile(rf"[{_LATIN}][{_LATIN}_+#.\-/']*")
"""A word of a Latin script, accented letters included: "Tomás" keys ``tomás``, not
``tom s`` (the subject of "Tom …")."""
_EN_STOP = frozenset(
    "a an the this that these those my our your their his her its i we you they it me us "
    "them he she some any each every all actually really just also now still already very "
    "quite about around roughly approximately currently current please so then there here "
    "only even maybe probably basically literally totally is are was were be been being "
    "do does did will would should could can may might must shall 's 're 'm 've 'd 'll "
    "our own which what who whom whose how why where when one ones new least most always never "
    "often usually sometimes rarely e.g i.e eg ie longer anymore ago again lately recently "
    "can't cannot won't couldn't wouldn't shouldn't mustn't".split()
)
_EN_NUMBERISH = re.compile(r"^(?:\d[\d.,]*[a-z%]{0,4}|\d+(?:st|nd|rd|th))$")
VERSION_TOKEN = re.compile(r"^v\d+(?:\.\d+){0,3}$", re.I)
"""A version written as one word ("v2", "v1.4"): it names a release ("we ship v2"), so a
key keeps it whole, as it keeps "py311"; a bare number ("2.0", "3 nodes") is a value and
is dropped."""
_EN_CUT = frozenset(
    "on at during when while under with via from to by after before if unless until per over "
    "than because since so but and or instead rather into onto across between like as "
    "without except whenever once otherwise through within against".split()
)
_EN_FOLD = frozenset(("of", "for", "in"))
_EN_KEEP_S = frozenset(
    "let's it's that's this's what's who's where's when's how's here's there's he's she's"
    .split())
"""A word whose "'s" is no possessive but "is", "has" or "us" (a pronoun's or a
question word's contraction: "Correction: it's https://…"): kept whole, as before
possessives were dropped."""
_EN_ACTION_STOP = frozenset(
    "use using used have has had get got make made keep kept put do does doing done be "
    "directly ever always never dont don't not no".split()
)


_EN_ACTION_CUT = frozenset(
    "because since so but and or when if unless before after until while than instead rather "
    "except over vs versus otherwise whenever once even even though".split()
)
_EN_PREPOSITIONS = frozenset(
    "to in on at for of with by from into onto via per about under across between during "
    "without through within".split()
)


def en_key(phrase: str, *, action: bool = False) -> str | None:
    """Key an English phrase. ``action`` keys a rule or choice ("never push directly to
    main" -> "push main"): light verbs and prepositions dropped, cut at the first
    conjunction, the first four words kept instead of the last four.
    """
    tokens = [t.lower().rstrip(".-'") for t in _EN_TOKEN.findall(phrase.replace(MASK, " "))]
    tokens = [t for t in tokens if t and not _EN_NUMBERISH.match(t)]
    if tokens[-2:] == ["any", "more"]:
        del tokens[-1]  # "… any more" ends a clause as "anymore" does: no "more" of it
    # "Priya's our lead": before a determiner, "'s" is "is", not a possessive; elsewhere
    # a possessive is dropped, so "the login form's log level" keys as "the log level of
    # the login form" and "the login form log level" do.
    tokens = [t[:-2] if t.endswith("'s") and len(t) > 2 and t not in _EN_KEEP_S else t
              for t in tokens]
    if action:
        kept: list[str] = []
        for tok in tokens:
            if tok in _EN_ACTION_CUT and kept:
                break
            if tok not in _EN_PREPOSITIONS and tok not in _EN_STOP and tok not in _EN_ACTION_STOP:
                kept.append(tok)
        return " ".join(kept[:4]) or None
    head: list[str] = []
    for i, tok in enumerate(tokens):
        if tok in _EN_FOLD and not head:
            continue  # "(make that 45 s) for the API timeout": the phrase after it is the key
        if tok in _EN_FOLD:
            tail: list[str] = []
            for t in tokens[i + 1:]:
                if t in _EN_CUT or t in _EN_FOLD:
                    break
                tail.append(t)
            head = tail + head
            break
        if tok in _EN_CUT:
            break
        head.append(tok)
    words = [t for t in head if t not in _EN_STOP]
    if words and ADDRESSEE in head[:head.index(words[0])]:
        # "Your name is Max.": the assistant's name, never the user's "name"
        return " ".join([ADDRESSEE, *words[-3:]])
    return " ".join(words[-4:]) or None


ADDRESSEE = "your"
"""The first word of a key whose thing is the assistant's ("Your name is Max." keys
``your name``): :func:`memory_core.items.supersession.subjects_match` never matches it
with a key of the user's own thing."""


_ZH_LEAD = re.compile(
    r"^(?:从今以后|从今往后|从此以后|从现在(?:开始|起)|以后|今后|往后|也许|或许|可能|好像|似乎|估计|貌似|恐怕|说不定|我们的|我们|我的|我|咱们的|咱们|你们的|你们|你的|你|他们的|他的|她的|这个|那个|这些|那些"
    r"|这|那|该|本|其实|现在|目前|另外|还有|然后|所以|但是|而且|对了|公司的|今天|明天|后天|昨天"
    r"|上午|下午|晚上|早上|中午|本周|这周|下周|上周|这个月|下个月|每次|先(?!生)|再|都|也|就|还|已经"
    r"|直接|一定|对(?!象|方)|在|把|将|用|使用|给|跟|和|被|让|太(?!太)|很|非常|比较|更|最|大概|大约)+"
)
"""Words before a Chinese subject that are not part of it; never the first character
of a person ("先生", "太太", "对象": 现在先生在上海工作 is about 先生)."""
_ZH_HEDGE_TRAIL = re.compile(r"(?:可能|也许|或许|好像|似乎|应该|大概|估计|恐怕|貌似)+$")
"""A hedge between a subject and its copula ("超时可能是30秒"): not part of the subject."""
_ZH_TIME = re.compile(
    r"(?:周|星期)[一二三四五六日天]|[0-9一二三四五六七八九十两]{1,3}点(?:半|[0-9]{1,2}分)?")
_JA_LEAD = re.compile(
    r"^(?:この|その|あの|どの|私の|僕の|我々の|私たちの|うちの|弊社の|当社の|今の|現在の|実は|ちなみに"
    r"|なお|あと|また|やっぱり|すみません|今日の|明日の|来週の|今週の|先週の|必ず|絶対に|絶対|常に"
    r"|直接|毎回|今後は|今後)+"
)
_JA_TRAIL = re.compile(r"(?:です|でした|である|だ|ます|ました|は|が|を|に|で|と|へ|も|の|から|まで"
                       r"|より|って|とか|や)+$")
_TAIL_REACH = 48
"""Characters at the end of a phrase that a trailing-particle or hedge run may span."""


def _strip_tail(pattern: re.Pattern[str], text: str) -> str:
    """``pattern`` (a ``(…)+$`` run) removed from the end of ``text``, looked for in its
    last :data:`_TAIL_REACH` characters only: searched over the whole text, a long
    run that does not reach the end costs the square of its length."""
    if len(text) <= _TAIL_REACH:
        return pattern.sub("", text)
    return text[:-_TAIL_REACH] + pattern.sub("", text[-_TAIL_REACH:])


_JA_TOPIC = re.compile(r"^(?:に|で)?[はも](?=[^\u3040-\u309f])")
"""The particle left at the start when a fronted condition is cut ("セールの時|は、…")."""
_LINK = re.compile(r"(?<=[^\u3040-\u309f])[的の](?=[^\u3040-\u309f])")
_LETTER = re.compile(r"[^\W\d_]")
_CJK_NOISE = re.compile(r"[\s\ue000\"'“”‘’「」『』()（）\[\]【】<>《》,，、。.!！?？:：;；~〜-]+")


_ASCII_WORD = re.compile(r"[a-z0-9]")


def cjk_key(phrase: str, lang: str, *, keep_last: bool = True) -> str | None:
    """Key a Chinese or Japanese phrase (see module doc); None when nothing is left.

    Keys are capped (10 characters for Chinese, 16 for Japanese, whose katakana
    loanwords run long): the end of a noun phrase is kept (the head comes last in both
    languages), the start of an action (``keep_last=False``); a Latin word at the cut
    is kept whole, not cut into another name ("postgres" into "ostgres").
    """
    text = _CJK_NOISE.sub("", phrase).lower()
    if lang == "zh":
        text = _ZH_TIME.sub("", text)
        text = _strip_tail(_ZH_HEDGE_TRAIL, _ZH_LEAD.sub("", text))
    else:
        text = _JA_TOPIC.sub("", text)
        text = _JA_LEAD.sub("", text)
        text = _strip_tail(_JA_TRAIL, text)
    text = _LINK.sub("", text).lstrip("的の")
    if not text or not _LETTER.search(text):
        return None
    cap = 10 if lang == "zh" else 16
    if len(text) <= cap:
        return text
    if keep_last:  # a Latin word the cap would cut is kept whole ("postgres存订单")
        start = len(text) - cap
        while start > 0 and _ASCII_WORD.match(text[start - 1]) and _ASCII_WORD.match(text[start]):
            start -= 1
        return text[start:]
    end = cap
    while end < len(text) and _ASCII_WORD.match(text[end - 1]) and _ASCII_WORD.match(text[end]):
        end += 1
    return text[:end]


def key(phrase: str, lang: str, *, action: bool = False) -> str | None:
    """Normalised subject key of ``phrase`` in ``lang`` (see ``en_key``/``cjk_key``)."""
    if lang == "en":
        return en_key(phrase, action=action)
    return cjk_key(phrase, lang, keep_last=not action)
