"""Short replies to the assistant's last turn: an assent to what it proposed ("yep 👍",
"sounds good, let's do that", "ok go ahead", 好的，就这么办, はい、お願いします) and a bare
decline of what it offered or asked ("I'm not interested.").

Read alone, such a reply states nothing: "yep" names no choice, and "I'm not interested"
names no object. Its meaning is the assistant message right before it, so these
predicates are pure and the capture job (:mod:`memory_core.capture.reply`) decides with
that message in hand:

- :func:`is_assent`: the whole message is an assent and nothing else. An assent right
  after an assistant proposal makes the proposal the user's decision.
- :func:`asks_or_offers`: the assistant's message ends with a question or an offer
  ("Would you like …", "Let me know if …"): a reply to it answers it.
- :func:`bare_decline`: a denial whose complement is one word with no object ("I'm not
  interested."; not "I'm not interested in AI anymore."). Right after a question or
  offer it declines that, and states nothing about an item the user stored earlier,
  unless the question names that word (:func:`asked_about`: "Are you married?" then
  "I'm not married." answers about the state, and takes it back).
- :func:`named_candidate`: a bare answer ("The editor one.", "the terminal", 编辑器的)
  to the question which of two or more items a correction revises (``data.may_revise``)
  names the one whose qualifier it holds, and nothing else; the question is about
  that correction when it, or the user's turn it answers, names the correction's key
  (:func:`names_head`): "Should I open it in the editor or the terminal?" is not.
"""

from __future__ import annotations

import re
from typing import Any, Final

from memory_core.extraction import denial

_ASSENT_MAX = 80
"""Longest message read as a bare assent (characters)."""

_EN_ASSENT_WORD = (
    r"(?:yes|yeah|yep|yup|yea|sure|ok(?:ay)?|k|alright|all\s+right|absolutely|definitely"
    r"|agreed|perfect|great|cool|nice|fine|deal|please|thanks|thank\s+you|totally"
    r"|sounds\s+(?:good|great|perfect|fine|right|like\s+a\s+plan)|that\s+works"
    r"|works\s+for\s+me|good\s+idea|great\s+idea|makes\s+sense|that'?s\s+fine"
    r"|let'?s\s+(?:do|go\s+with|try)\s+(?:it|that|this|so)|let'?s\s+go"
    r"|(?:please\s+)?go\s+(?:ahead|for\s+it)|(?:please\s+)?do\s+(?:it|that|so)"
    r"|please\s+do|i\s+agree|i'?m\s+in|do\s+it|ship\s+it|yes\s+please)")
_EN_ASSENT: Final = re.compile(
    rf"(?:{_EN_ASSENT_WORD}\b\W*)+", re.I)
_EN_COMMITTING: Final = re.compile(
    r"\b(?:yes|yeah|yep|yup|yea|sure|agreed|deal|absolutely|definitely|go\s+ahead"
    r"|go\s+for\s+it|do\s+(?:it|that|so)|please\s+do|let'?s|sounds|works|i\s+agree"
    r"|good\s+idea|great\s+idea|i'?m\s+in|ship\s+it|makes\s+sense)\b", re.I)
"""An assent word that takes a proposal up: "ok" or "thanks" alone acknowledge only."""
_CJK_ASSENT: Final = re.compile(
    r"(?:好的?|好啊|行|可以|没问题|就这么办|就这样|同意|嗯|对|是的|好呀|麻烦了|拜托了|来吧"
    r"|はい|ええ|うん|いいですね|いいね|お願いします|お願い|それで|そうしましょう|了解|賛成"
    r"|[\s，,。！!～~、])+")
_CJK_COMMITTING: Final = re.compile(
    r"就这么办|就这样|同意|没问题|可以|麻烦了|拜托了|来吧|お願い|そうしましょう|賛成|それで")
_THUMBS: Final = re.compile("[\U0001F44D\u2705\u2714\U0001F44C\U0001F64F]")
_SYMBOLS: Final = re.compile(r"[^\w\s'’]|_", re.UNICODE)


def is_assent(text: str) -> bool:
    """Whether all of ``text`` (one user message) is an assent that takes up a proposal:
    "yep 👍", "sounds good, let's do that", "ok go ahead", "yes please", "let's do it",
    "👍", 好的，就这么办, はい、お願いします. "ok" or "thanks" alone, and any message that
    says more ("yes, but use Redis"), are not."""
    if len(text) > _ASSENT_MAX:
        return False
    thumbs = _THUMBS.search(text) is not None
    words = _SYMBOLS.sub(" ", text).replace("’", "'").strip()
    if not words:
        return thumbs  # an emoji-only turn takes it up only with a thumbs-up or a tick
    if _EN_ASSENT.fullmatch(words):
        return thumbs or _EN_COMMITTING.search(words) is not None
    cjk = _THUMBS.sub("", text).strip()
    if cjk and _CJK_ASSENT.fullmatch(cjk):
        return thumbs or _CJK_COMMITTING.search(cjk) is not None
    return False


_OFFER: Final = re.compile(
    r"\b(?:would\s+you\s+like|do\s+you\s+want|want\s+me\s+to|shall\s+i|should\s+i"
    r"|let\s+me\s+know\s+if|if\s+you(?:'d|\s+would)?\s+(?:like|want)|i\s+can\s+also"
    r"|happy\s+to|are\s+you\s+interested|interested\s+in)\b"
    r"|要不要|需要我|要我|吗|しましょうか|いかがですか|ますか", re.I)
_LAST_SENTENCE: Final = re.compile(r"[^.!?。！？\n]+[.!?。！？]*\s*$")


def asks_or_offers(text: str) -> bool:
    """Whether an assistant message ``text`` ends with a question (its last character,
    past closing quotes and emoji, is ``?``/``？``) or offers something in its last
    sentence ("Let me know if you'd like more.")."""
    tail = text.rstrip().rstrip("\"')]}」』） \t*_")
    tail = _SYMBOLS.sub(lambda m: m.group(0) if m.group(0) in "?？.!。！" else "", tail[-400:])
    tail = tail.rstrip()
    if tail.endswith(("?", "？")):
        return True
    last = _LAST_SENTENCE.search(tail)
    return last is not None and _OFFER.search(last.group(0)) is not None


def asked_about(text: str, ex: Any) -> bool:
    """Whether an assistant message ``text`` names, in its last sentence, the one word a
    bare decline ``ex`` denies ("Are you married?" then "I'm not married."): the reply
    then answers about that state, and takes it back as any denial does."""
    said = denial.find(ex.text or "", "en")
    if said is None or not said.what.strip():
        return False
    last = _LAST_SENTENCE.search(text.rstrip()[-400:])
    sentence = last.group(0) if last else text[-400:]
    return re.search(rf"\b{re.escape(said.what.strip())}\b", sentence, re.I) is not None


def bare_decline(ex: Any) -> bool:
    """Whether ``ex`` (an extracted item) is a denial that names no object: a negated
    fact whose denied complement is a single word ("I'm not interested."), which as a
    reply to a question or offer declines it. English only: a Chinese or Japanese
    denial's complement has no word boundaries to count."""
    if (getattr(ex, "kind", "") != "fact" or not getattr(ex, "negated", False)
            or (getattr(ex, "lang", "en") or "en") != "en"):
        return False
    said = denial.find(ex.text or "", "en")
    if said is None:
        return False
    return len(said.what.split()) <= 1 and not said.ending


_ANSWER_MAX = 40
"""Longest message read as a bare answer naming one item (characters)."""
_EN_ANSWER_FILLER: Final = frozenset({
    "the", "a", "an", "my", "one", "ones", "i", "meant", "mean", "that", "this", "please",
    "it", "its", "it's", "is", "was", "for", "of", "oh", "sorry", "just", "ok", "okay",
    "yes", "yeah", "setting"})
"""Words of a bare answer that name no item ("Oh, the editor one please.")."""
_CJK_ANSWER_FILLER: Final = re.compile(
    r"我(?:说|說)的是|我指的是|指的是|是|的|那个|那個|这个|這個|吧|啊|呀|嗯|哦"
    r"|の方|のほう|です|でした|だよ|ですね|の|って|かな|[\s、，,。.!！?？「」]")
_WORD: Final = re.compile(r"[\w'’]+")


def is_bare_answer(text: str) -> bool:
    """Whether ``text`` (one user message) is short enough to be a bare answer naming
    one of the items it was asked about: at most :data:`_ANSWER_MAX` characters and
    five words, with a word in it."""
    text = text.strip()
    return 0 < len(text) <= _ANSWER_MAX and len(text.split()) <= 5 and any(
        ch.isalnum() for ch in text)


def names_head(text: str, head: str) -> bool:
    """Whether ``text`` names ``head``, the key a head-only correction holds ("font
    size", 字体大小, フォントサイズ): each of its words as the start of a word of
    ``text`` ("Which font sizes …"), a head in CJK script as a run of ``text``
    (spaces aside). ``False`` for an empty head."""
    head = head.strip().lower()
    if not head:
        return False
    low = text.lower()
    if any("\u3040" <= ch <= "\u9fff" for ch in head):
        return head.replace(" ", "") in re.sub(r"\s+", "", low)
    words = _WORD.findall(low)
    return all(any(w.startswith(h) for w in words) for h in _WORD.findall(head))


def named_candidate(text: str, head: str, subjects: list[str]) -> int | None:
    """The index in ``subjects`` (the keys of the items a head-only correction keyed
    ``head`` may revise: "editor font size", "terminal font size" for "font size")
    of the one a bare answer ``text`` names ("The editor one.", "the terminal",
    "Terminal font size", 编辑器的, エディタの方です), or ``None`` when it names none,
    more than one, or says anything else ("The blue one.", "Neither, the editor and
    the terminal"). An item is named by its qualifier, its key less the head's words."""
    if not is_bare_answer(text) or not subjects:
        return None
    if any("\u3040" <= ch <= "\u9fff" for ch in text):
        rest = _CJK_ANSWER_FILLER.sub("", text)
        quals = [s[:-len(head)] if head and s.endswith(head) else s for s in subjects]
        named = [i for i, q in enumerate(quals) if q and q in rest]
        if len(named) != 1:
            return None
        left = rest.replace(quals[named[0]], "", 1).replace(head, "", 1)
        return named[0] if not left else None
    head_words = set(head.lower().split())
    words = {w.replace("’", "'") for w in _WORD.findall(text.lower())}
    words -= _EN_ANSWER_FILLER | head_words
    if not words:
        return None
    named = [i for i, s in enumerate(subjects) if words <= set(s.lower().split()) - head_words]
    return named[0] if len(named) == 1 else None


_TAKE_BACK_MAX: Final = 80
_EN_TAKE_BACK: Final = re.compile(
    r"(?:(?:oh|oops|sorry|wait|actually|no|nah|hmm|ok|okay|lol|haha|never\s*mind)\W+)*"
    r"(?:scratch\s+that|strike\s+that|i\s+take\s+(?:that|it)\s+back"
    r"|(?:ignore|disregard|forget)\s+(?:that|my\s+(?:last|previous)\s+message"
    r"|what\s+i\s+(?:just\s+)?(?:said|wrote))"
    r"|forget\s+(?:that\s+)?i\s+(?:just\s+)?said\s+(?:that|it)"
    r"|just\s+(?:kidding|joking)|jk|j/k|(?:that|it)\s+was\s+a\s+joke"
    r"|delete\s+that(?:\s+from\s+(?:your\s+)?memory)?)"
    r"(?:\W+(?:please|pls|lol|haha|sorry|though))*\W*", re.I)
"""A whole message that takes back the user's message before it without naming what it
said ("Scratch that.", "Ignore my last message.", "Just kidding.", "I take that back").
"Forget it" and "Never mind" alone are left out: they drop a request as often as a
statement; so is "Not really", the answer to a question the assistant asked in between
("Do you cook often?" "Not really."), which withdraws nothing the user said."""
_CJK_TAKE_BACK: Final = re.compile(
    r"(?:(?:刚才|剛才|上一条|上一條|前面)(?:说的|說的|那句|那条|那條)?|说的|說的|那句|那条|那條)"
    r"(?:不算|作废|作廢)(?:了)?|(?:作废|作廢)(?:了)?"
    r"|当我没说|當我沒說|开玩笑的|開玩笑的|开个玩笑|開個玩笑|忽略(?:我)?(?:刚才|剛才|上一条|上一條)"
    r"(?:的)?(?:消息|话|話|那句)?"
    r"|今の(?:は)?(?:なし|無し|取り消し|取り消して|忘れて)|さっきの(?:は)?(?:冗談|なし|取り消し)"
    r"|冗談(?:です|だよ)?")
"""The same in Chinese and Japanese: 刚才说的不算, 当我没说, 开玩笑的, 今のなし, 冗談です.
A bare 不算 ("it doesn't count") is the answer to a question, so it needs what it
takes back named (刚才, 那句)."""
_CJK_TAKE_BACK_END: Final = re.compile(r"[\s。！!？?～~、,，哈]*")


_EN_SET_ASIDE: Final = re.compile(
    r"(?:(?:oh|oops|sorry|wait|actually|no|nah|hmm|ok|okay|lol|haha|never\s*mind)\W+)*"
    r"(?:ignore|disregard|forget)\s+that(?:\W+(?:please|pls|lol|haha|sorry|though))*\W*", re.I)
"""A take-back that points at "that" only, by a verb of setting something aside
("Ignore that.", "Disregard that.", "Forget that."): right after the assistant's reply,
"that" is the reply (what it said or asked), nothing the user wrote; "Scratch that",
"I take that back", "Just kidding" and "Ignore my last message" can only be the user's
own words."""


def may_mean_reply(text: str) -> bool:
    """Whether ``text``, a take-back (:func:`takes_back_last`), may point at the
    assistant's reply right before it rather than at the user's message before that
    (:data:`_EN_SET_ASIDE`); :func:`memory_core.capture.reply.take_back_last` then
    withdraws nothing across a reply."""
    return _EN_SET_ASIDE.fullmatch(text.strip().replace("\u2019", "'")) is not None


def takes_back_last(text: str) -> bool:
    """Whether all of ``text`` (one user message) takes back the user's message before
    it (:data:`_EN_TAKE_BACK`, :data:`_CJK_TAKE_BACK`): its statements are then
    withdrawn (:func:`memory_core.capture.reply.take_back_last`)."""
    if len(text) > _TAKE_BACK_MAX:
        return False
    words = text.strip().replace("\u2019", "'")
    if _EN_TAKE_BACK.fullmatch(words):
        return True
    m = _CJK_TAKE_BACK.match(words)
    return m is not None and m.end() > 0 and _CJK_TAKE_BACK_END.fullmatch(words, m.end()) \
        is not None
