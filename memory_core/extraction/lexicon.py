"""Cue-word tables, one block per language, compiled once at import.

Every table is data: a list of phrases a user (or an assistant) writes when making a
statement of that kind. The rules that read them live in ``classify``; here each table
says where its words come from. Chinese tables are written in simplified script only:
sentences are folded from traditional before matching (``prepare.fold_traditional``).
English tables are matched case-insensitively; apostrophes are already folded to "'".

Patterns are alternations of literal phrases with bounded gaps ({0,n}), anchored where
the rule needs a position, so matching is linear in the sentence length. Unanchored
patterns are wrapped in a ``Cue`` that runs them only when a trigger word (English) or
phrase (Chinese, Japanese) occurs: Python's ``re`` tries every branch of an alternation
at every position, a set lookup costs a fraction of a microsecond.
"""

from __future__ import annotations

import re

_TOKEN = re.compile(r"[a-z0-9][a-z0-9'-]*")


def tokens(text: str) -> frozenset[str]:
    """Lowercase ASCII word tokens of ``text`` (apostrophes and hyphens kept)."""
    return frozenset(_TOKEN.findall(text.lower()))


class Cue:
    """An unanchored pattern gated by trigger ``words`` (matched against a token set)
    or ``marks`` (substrings, for scripts without spaces). A trigger list must name a
    word or substring that every match contains; ``tests/test_extract.py`` checks the
    cue examples of every rule."""

    __slots__ = ("pattern", "words", "marks", "mark_chars")

    def __init__(self, pattern: re.Pattern[str], *, words: str = "", marks: str = "") -> None:
        self.pattern = pattern
        self.words = frozenset(words.split())
        self.marks = tuple(m for m in marks.split("|") if m)
        self.mark_chars = frozenset(m[0] for m in self.marks)

    def _marked(self, text: str) -> bool:
        return not self.mark_chars.isdisjoint(text) and any(m in text for m in self.marks)

    def search(self, text: str, toks: frozenset[str] = frozenset()) -> re.Match[str] | None:
        """``pattern.search(text)``, skipped (None) when no trigger is present."""
        if self.words.isdisjoint(toks) and not self._marked(text):
            return None
        return self.pattern.search(text)

    def finditer(self, text: str) -> list[re.Match[str]]:
        """All matches, or none without a trigger (marks only)."""
        return list(self.pattern.finditer(text)) if self._marked(text) else []


_FIRST_WORD = re.compile(r"[a-z][a-z']*")


def first_word(text: str) -> str:
    """The lowercase first word of ``text`` ("" when it starts with anything else)."""
    m = _FIRST_WORD.match(text[:24].lower())
    return m.group() if m else ""


class Lead:
    """A start-anchored English pattern gated by the clause's first word: every match
    begins with one of ``first`` (a space-separated list), checked by a set lookup."""

    __slots__ = ("pattern", "first")

    def __init__(self, pattern: re.Pattern[str], first: str) -> None:
        self.pattern = pattern
        self.first = frozenset(first.split())

    def match(self, text: str, first: str | None = None) -> re.Match[str] | None:
        """``pattern.match(text)`` when the first word can start a match, else None."""
        word = first_word(text) if first is None else first
        return self.pattern.match(text) if word in self.first else None


def cjk_cue(phrases: str, extra: str = "", marks: str = "") -> Cue:
    """A Cue over literal CJK ``phrases`` (plus an ``extra`` regex branch whose trigger
    substrings are listed in ``marks``)."""
    pattern = alt(phrases) + (("|" + extra) if extra else "")
    return Cue(re.compile(pattern), marks=phrases + ("|" + marks if marks else ""))


def _phrases(text: str) -> list[str]:
    return [p.strip() for p in text.split("|") if p.strip()]


def alt(text: str) -> str:
    """A regex alternation of ``|``-separated literal phrases, longest first."""
    return "|".join(re.escape(p).replace(r"\ ", r"\s+")
                    for p in sorted(_phrases(text), key=len, reverse=True))


def en(pattern: str) -> re.Pattern[str]:
    return re.compile(pattern, re.I)


# --- labels (all languages) ----------------------------------------------------------
# Task-state line labels from DESIGN §5 and the issue, in the three languages, plus the
# synonyms agents and people write in status updates ("Next steps:", "Blocker:").
TASK_LABELS: dict[str, str] = {
    **dict.fromkeys(_phrases("goal|goals|objective|objectives|目标|目標|ゴール"), "goal"),
    **dict.fromkeys(_phrases("progress|status|done|进展|進展|进度|進度|已完成|進捗|進捗状況|完了"),
                    "progress"),
    **dict.fromkeys(_phrases("todo|to-do|to do|todos|next step|next steps|待办|待辦|待办事项|下一步"
                             "|やること|残タスク|タスク"), "todo"),
    **dict.fromkeys(_phrases("blocked|blocker|blockers|blocking|阻塞|受阻|卡住|障碍|ブロック"
                             "|ブロッカー|ブロック中"), "blocked"),
    **dict.fromkeys(_phrases("decision|decisions|decided|决定|决策|決定|決定事項"), "decision"),
}
TASK_LABEL = re.compile(
    r"^(?:\*\*|__)?\[?(?P<label>" + alt("|".join(TASK_LABELS)) + r")\]?"
    r"(?:\*\*|__)?\s*[:\]]\s*(?:\*\*|__)?",
    re.I,
)
"""``Goal:``/``TODO：``/``**Blocked:**``/``[TODO]`` at the start of a line."""
TASK_HEADER = re.compile(
    r"^(?:\*\*|__)?(?P<label>" + alt("|".join(TASK_LABELS)) + r")"
    r"(?:\*\*|__)?\s*:?\s*(?:\*\*|__)?$", re.I)
"""A line that is only a label ("## Blocked", "TODO", "待办") heads the list below it."""

# Labels that announce how to read the rest of the line rather than a task field.
META_LABELS: dict[str, str] = {
    **dict.fromkeys(_phrases("note|nb|fyi|remember|reminder|important|ps|context|fact|info"
                             "|注意|备注|提醒|记住|注|メモ|備考|注意点|覚えておいて"), "note"),
    **dict.fromkeys(_phrases("correction|erratum|update|更正|纠正|修正|更新|訂正"), "correction"),
    **dict.fromkeys(_phrases("rule|constraint|requirement|policy|规则|约束|要求|ルール|制約|要件"
                             "|the rule|this rule|our rule|my rule|the rule is|remember this rule"
                             "|remember the rule|house rule"), "constraint"),
    **dict.fromkeys(_phrases("preference|pref|偏好|好み"), "preference"),
    **dict.fromkeys(_phrases("question|open question|q|问题|疑问|質問|疑問"), "question"),
}
META_LABEL = re.compile(r"^(?P<label>" + alt("|".join(META_LABELS)) + r")\s*:\s*[\"“「']?", re.I)
"""``Note:``, ``Correction:``, ``Rule:``, ``Remember this rule: "…"`` — how to read the rest."""


# --- English -------------------------------------------------------------------------
# Corrections (DESIGN §5, the list, and how people retract in chat). Weak cues
# ("no", "wait") count only when punctuation follows: "No emojis" is a rule, "No, it's
# 45" a correction.
EN_CORRECTION = Lead(en(
    r"^(?:(?:" + alt("actually|correction|update|scratch that|i meant|i mean|to correct myself"
                     "|let me correct that|let me correct myself|i was wrong|i got that wrong"
                     "|i got it wrong|my mistake|my bad|i misspoke|make that|sorry i meant"
                     "|strike that|on second thought|i take that back|typo|small correction")
    + r")\b"
    r"|(?:no|nope|nah|wait|oops|hold on)\s*[,.!:;-])[\s,.:;!-]*"
), "actually correction update scratch i to let my make sorry strike on typo small no nope nah "
   "wait oops hold")
EN_CORRECTION_TAIL = Cue(en(r"\binstead\s*[.!]*$"), words="instead")
"""'Let's use MySQL instead.' revises an earlier choice."""
EN_FILLER = Lead(en(
    r"^(?:(?:" + alt("also|and|but|so|ok|okay|oh|btw|by the way|fyi|ps|please note|note that"
                     "|remember that|keep in mind that|keep in mind|just so you know"
                     "|for the record|for context|as i said|as i mentioned|like i said|sorry"
                     "|hmm|um|well|anyway|alright|then|plus|one more thing|honestly|frankly"
                     "|personally"
                     "|tbh|fwiw|imo|in general|generally|basically|heads up") + r")\b[\s,:;-]*"
    r"|(?:cool|great|nice|perfect|sounds\sgood|yes|yeah|yep|sure|fine|right|got\sit|thanks"
    r"|thank\syou)\s*[,!.]\s*|(?:e\.g|i\.e)\.\s*)+"
), "also and but so ok okay oh btw by fyi ps please note remember keep just for as like sorry "
   "hmm um well anyway alright then plus one honestly frankly personally tbh fwiw imo in "
   "generally basically heads cool great nice perfect sounds yes yeah yep sure fine right got "
   "thanks thank e i")
_EN_SMALL_TALK_PHRASES = ("thanks|thank you|thx|ty|ok|okay|k|kk|cool|nice|great|awesome|perfect"
                     "|got it|sure|yes|yeah|yep|yup|no|nope|lol|haha|hmm|hm|hi|hello|hey|hi there"
                     "|good morning|good night|good evening|bye|cheers|sounds good|makes sense"
                     "|no worries|np|great job|well done|looks good|lgtm|go ahead|not sure"
                     "|not sure yet|never mind|nevermind|alright|all right|fine|i see|oh|ah|wow"
                     "|excellent|amazing|that worked|it worked|that works|works now|it works"
                     "|it works now|hope you're doing well|hope you are well|good|agreed|exactly"
                     "|true|indeed|of course|please continue|continue|go on|next|yes please"
                     "|sure thing|much appreciated|appreciate it|you're right|you are right"
                     "|fair enough|done|nice one|thanks again|ok then|sounds great|love it"
                     "|that helps|that's it|that's all|understood|roger|noted|will do"
                     "|don't worry about it|no problem|my pleasure|you're welcome")
_EN_SMALL_TALK_TAILS = "so much|a lot|again|now|perfectly|too|very much|man|mate|buddy|guys"
EN_SMALL_TALK = en(
    r"^(?:(?:" + alt(_EN_SMALL_TALK_PHRASES) + r")(?:\s+(?:" + _EN_SMALL_TALK_TAILS + r"))?"
    r"[\s,.!~:;)(*^_-]*)+$"
)
"""A sentence made only of greetings, thanks and acknowledgements."""
EN_SMALL_TALK_WORDS = frozenset(
    (_EN_SMALL_TALK_PHRASES + "|" + _EN_SMALL_TALK_TAILS).replace("|", " ").split())
"""Every word small talk is made of: a sentence with any other word is not small talk."""
EN_QUESTION_WORD = en(r"^(?:what|when|where|which|who|whom|whose|why|how|is|are|am|was|were"
                      r"|do|does|did|can|could|should|would|will|shall|may|might|have|has)\b")
EN_REQUEST = Lead(en(
    r"^(?:(?:please|pls|kindly|hey|hi|ok|okay|so|and|also|now)[,\s]+)*(?:"
    + alt("can you|could you|would you|will you|can u|could u|would you mind|do you mind"
          "|mind|is it possible to|is it possible for you to|any chance you could"
          "|i need you to|i want you to|i'd like you to|i would like you to|help me|let me know"
          "|tell me|show me|give me|explain|remind me|walk me through|i have a question"
          "|quick question|can we|could we|i was wondering|i wonder|i'd like to|i would like to"
          "|please|let's|let us|lets") + r")\b"
), "please pls kindly hey hi ok okay so and also now can could would will do mind is any i help "
   "let tell show give explain remind walk quick i'd let's lets")
EN_HYPOTHETICAL = Lead(en(r"^(?:(?:and|but|so|ok|also|just)[,\s]+)?(?:what if|if|suppose|supposing"
                          r"|imagine|hypothetically|assuming|say|let's say|in theory)\b"),
                       "and but so ok also just what if suppose supposing imagine hypothetically "
                       "assuming say let's in")
EN_HYPOTHETICAL_MODAL = Cue(en(r"\b(?:would|could|might|wouldn't|couldn't)\b|'d\b"),
                            words="would could might wouldn't couldn't i'd we'd you'd they'd it'd")
EN_REPORTED = en(
    r"^(?P<who>(?:my|our|the|his|her|their|a|an)\s[\w\s-]{1,30}?|[A-Z][\w-]{1,20}(?:\s[A-Z][\w-]{1,20})?"
    r"|he|she|they|someone|somebody|everyone|people|the docs|the log)\s"
    r"(?:" + alt("said|says|told me|told us|tells me|mentioned|mentions|thinks|thought|believes"
                 "|wants|wanted|asked|asks|claims|claimed|wrote|writes|warned|insists|insisted"
                 "|suggested|suggests|recommends|recommended|reckons|keeps saying|printed|shows"
                 "|showed|reads|read|states|stated") + r")\b[\s,:]*(?:that\b\s*)?"
)
"""Someone other than the user speaking: a fact about them, never a rule for the agent."""
EN_REPORTING_VERBS = frozenset(
    "said says told tells mentioned mentions thinks thought believes wants wanted asked asks "
    "claims claimed wrote writes warned insists insisted suggested suggests recommends "
    "recommended reckons keeps printed shows showed reads read states stated".split())
"""Trigger words of ``EN_REPORTED``."""
EN_FIRST_PERSON_FRAME = Lead(en(
    r"^(?:i|we)\s(?:(?:really|honestly|strongly|still|also|do)\s)?"
    r"(?:think|believe|guess|suspect|feel|reckon|assume|know|am pretty sure|'m pretty sure"
    r"|am sure|'m sure|noticed|found|heard|saw|learned|figured)\b(?:\s+that\b)?\s*"
), "i we")
"""'I think the leak is in X' asserts 'the leak is in X' with a hedge."""

EN_PREFERENCE = Lead(en(
    r"^(?:i|we)(?:'d|'m|'re|\swould|\sam|\sare)?\s(?:(?:really|generally|usually|much|definitely"
    r"|strongly|kind\sof|kinda|always|also|still|do|tend\sto|personally|honestly|absolutely"
    r"|just|far|much)\s){0,3}"
    r"(?P<verb>prefer|like(?!\sto\b|\syou\b)|love|enjoy|adore|hate|dislike|detest|rather"
    r"|can't\sstand|cannot\sstand|don't\s(?:really\s)?(?:like|love|enjoy|eat|drink|care\sabout|mind)"
    r"|do\snot\s(?:like|love|enjoy|eat|drink|care\sabout|mind)|never\s(?:eat|drink)|not\sa\s(?:big\s|huge\s)?fan\sof|a\s(?:big\s|huge\s)?fan\sof"
    r"|more\sof|favor|favour|lean\stowards?|tend\sto\sprefer|go\sfor)\b"
    r"|^(?:favou?rite|preferred)\s\w+"
), "i we i'd i'm we'd we're favourite favorite preferred")
"""First-person taste at the start of a clause (used with ``match``)."""
EN_PREFERENCE_ANY = Cue(en(r"\bmy\s(?:favou?rite|preferred|go-to)\b|\b(?:is|are)\smy\s(?:favou?rite"
                           r"|preference)\b|\bworks\sbest\sfor\sme\b|\bi'd\s(?:love|like)\sit\sif\b"),
                        words="favourite favorite preferred go-to preference works i'd")
EN_PREFERENCE_NEG = en(r"\b(?:hate|dislike|detest|can't\sstand|cannot\sstand|not\sa)\b"
                       r"|\b(?:don't|do\snot|never)\s(?:really\s)?(?:like|love|enjoy|eat|drink)\b")
EN_SOFTENER = Cue(en(r"\b(?:if possible|ideally|preferably|if you can|where possible|when possible"
                     r"|if it's possible|if convenient)\b"),
                  words="possible ideally preferably can convenient")
"""An instruction softened like this is a preference, not a rule."""

EN_NEG_IMPERATIVE = Lead(en(
    r"^(?:(?:please|pls|and|but|so|also|just|then|kindly)\s+)*(?:never(?:\sever)?|don't|dont"
    r"|do\snot|avoid|stop|quit|no\slonger|under\sno\scircumstances|whatever\syou\sdo,?\sdon't)\b"
    r"(?!\s+(?:worry|know|think|care|mind|hesitate|bother|remember|understand|see|get\sme"
    r"|forget))"
), "please pls kindly just also and but so then now never don't dont do avoid stop quit no "
   "under whatever")
EN_POS_IMPERATIVE = Lead(en(
    r"^(?:(?:please|pls|and|but|so|also|just|then|kindly)\s+)*(?:always|make\ssure|ensure"
    r"|be\ssure\sto|remember\sto|don't\sforget\sto|do\snot\sforget\sto|never\sforget\sto"
    r"|from\snow\son|going\sforward|in\s(?:the\s)?future|by\sdefault|only\sever|at\sall\stimes)\b"
), "please pls kindly just also and but so then now always make ensure be remember don't do "
   "never from going in by only at")
EN_MODAL_RULE = Cue(en(
    r"\b(?:must(?:n't|\snot|\snever|\salways)?|has\sto|have\sto|shall(?:\snot)?|should\s(?:always"
    r"|never|not)|shouldn't|is\s(?:not\s)?(?:allowed|permitted|required)\sto|are\s(?:not\s)?"
    r"(?:allowed|permitted|required)\sto|may\snot|mustn't|cannot\sexceed|can't\sexceed"
    r"|(?:is|are)\s(?:not\sallowed|forbidden|prohibited|banned|mandatory|required|a\smust)"
    r"|needs\sto\sbe|need\sto\sbe)\b"
), words="must mustn't has have shall should shouldn't allowed permitted required may cannot can't "
         "forbidden prohibited banned mandatory needs need")
"""Modal rules; the caller ignores them when the subject is "I" ("I must leave at 5")."""
EN_NO_NOUN = Lead(en(r"^(?:(?:and|so|also|but|please)\s+)?no\s(?!problem|worries|idea|thanks|way"
                r"|need|rush|pressure|one|doubt|matter|longer|luck|clue|comment|offense|big\sdeal)"
                r"(?=[a-z])"), "and so also but please no")
"""'No emojis in commit messages' — a prohibition with the verb left out."""
EN_TEAM_NORM = Lead(en(r"^(?:we|you)\s(?:(?:always|never|don't|do\snot|only)\s)"), "we you")
EN_NEGATION = Cue(en(r"\b(?:never|don't|dont|do\snot|not|no|avoid|mustn't|shouldn't|can't|cannot"
                     r"|forbidden|prohibited|banned|stop|quit)\b"),
                  words="never don't dont not no avoid mustn't shouldn't can't cannot forbidden "
                        "prohibited banned stop quit")

# Base-form verbs that begin an instruction. STANDING ones read as a lasting rule on
# their own ("Keep answers short"); the others ("Fix the login bug") are one-off
# requests unless a quantity, a condition or a scope word makes them lasting.
EN_STANDING_VERBS = _phrases(
    "keep|stay|answer|reply|respond|use|format|default|stick|follow|limit|cap|retry|treat"
    "|address|call|refer|indent|wrap|cite|sign|mention|include|exclude|skip|ignore|prefer"
    "|write|name|set|store|log|pin|put|list|send|reply|speak|talk|book|reserve|choose|pick"
    "|assume|consider|report|sort|round|cache|give|add|leave|be")
EN_ONE_OFF_VERBS = _phrases(
    "fix|build|create|explain|summarise|summarize|look|find|search|help|show|tell|run|check"
    "|test|deploy|push|commit|merge|remove|delete|drop|rename|move|try|do|make|update"
    "|upgrade|install|change|replace|convert|translate|open|close|read|review|draft|compare"
    "|generate|refactor|debug|investigate|print|go|start|stop|restart|rewrite|implement"
    "|clean|clone|download|upload|send|get|fetch|plan|schedule|bump|rotate|migrate")
EN_IMPERATIVE = Lead(en(
    r"^(?:(?:please|pls|kindly|just|also|and|then|now|so)\s+)*(?P<verb>"
    + alt("|".join(EN_STANDING_VERBS + EN_ONE_OFF_VERBS)) + r")\b(?!\s+(?:is|are|was|were)\b)"
), "please pls kindly just also and then now so " + " ".join(EN_STANDING_VERBS + EN_ONE_OFF_VERBS))
EN_VERY_STANDING = set(_phrases("keep|stay|answer|reply|respond|stick|default|follow|treat"
                                "|address|call|refer|indent|cite|limit|cap|speak|talk|format"))
EN_STANDING_SCOPE = Cue(en(r"\b(?:every|each|all|any|whenever|always|never|from now on"
                           r"|going forward|by default|in future|in the future|for all|per|anything"
                           r"|everything)\b"),
                        words="every each all any whenever always never from going default future "
                              "per anything everything")

EN_DECISION = Lead(en(
    r"^(?:(?:ok|okay|alright|so|then|right|fine|good|great|cool|yes|yeah|ok\sthen)[,\s]+)*"
    r"(?:let's|let\sus|lets)\s(?:not\s)?(?:"
    + alt("go with|use|stick with|stick to|switch to|keep|pick|choose|adopt|move to|migrate to"
          "|schedule|meet|book|take|drop|postpone|target|ship|call it|settle on|plan|name|set"
          "|fly|stay|rent|run with|go for|start with|skip|defer|freeze|cut|release|deploy|launch"
          "|host|put|make it|aim for|do it|standardize on|standardise on|reserve|order|split")
    + r")\b"
    r"|^(?:we|i)(?:'ll|\swill|\sshall|'re\sgoing\sto|\sare\sgoing\sto|'m\sgoing\sto"
    r"|\sam\sgoing\sto|\sshould)\s(?:"
    + alt("go with|use|stick with|switch to|keep|pick|choose|adopt|move to|migrate to|drop"
          "|postpone|target|ship|settle on|go for|skip|defer|host|deploy on|launch|release"
          "|fly|stay at|stay in|book|take|run|standardize on|standardise on|meet|aim for")
    + r")\b"
    r"|^(?:we|i)(?:'ve|\shave)?\s(?:finally\s|just\s)?(?:decided|chose|chosen|picked|settled\son"
    r"|agreed|opted|committed\sto|went\swith|gone\swith|selected)\b"
    r"|^(?:we're|we\sare|i'm|i\sam)\s(?:now\s)?(?:going\swith|switching\sto|moving\sto"
    r"|sticking\swith|dropping|migrating\sto|standardi[sz]ing\son)\b"
    r"|^(?:the\s|our\s|my\s)?(?:plan|decision|verdict|final\sdecision|final\sanswer)\s(?:is|was)\b"
    r"|^(?:we|i)\skeep\b|^go\swith\b"
), "ok okay alright so then right fine good great cool yes yeah let's let lets we i we'll i'll "
   "we're i'm we've i've the our my plan decision verdict final go")
"""Choices stated at the start of a clause (used with ``match``)."""
EN_DECISION_ANY = Cue(en(r"\bdecided\s(?:to|on|that|against)\b"), words="decided")
EN_PROPOSAL = Cue(en(
    r"\b(?:" + alt("i suggest|i'd suggest|i would suggest|i recommend|i'd recommend"
                   "|i would recommend|i propose|i'd propose|i advise|i'd advise|my suggestion"
                   "|my recommendation|my proposal|we could|you could|we might|you might"
                   "|you might want to|you may want to|it might be better|it may be better"
                   "|it would be better|it might be worth|it may be worth|it would be worth"
                   "|it's worth|it is worth|it might make sense|it would make sense|consider"
                   "|how about|what about|why not|one option is|another option is"
                   "|one approach is|another approach is|an alternative is|a better approach"
                   "|a better option|a good option|the best option|we should|you should"
                   "|shall i|should i|would you like me to|do you want me to|want me to"
                   "|i can also|i could|let's|let us|if you want i can|if you'd like i can"
                   "|a cleaner way|a simpler way|the simplest fix|the safest option"
                   "|i'd go with|i would go with|i'd use|i would use|try using|try adding")
    + r")\b"
), words="suggest recommend propose advise suggestion recommendation proposal could might may "
         "better worth sense consider how what why option approach alternative should shall want "
         "also let's let if cleaner simpler simplest safest i'd would try it's")

# --- Chinese (simplified; traditional is folded before matching) ---------------------
ZH_CORRECTION = re.compile(
    r"^(?:" + alt("更正一下|更正|纠正一下|纠正|修正一下|修正|其实|不对|不是的|错了|说错了|我说错了"
                  "|我搞错了|我记错了|我写错了|抱歉我说错了|等等|等一下|改一下|更新一下|应该说"
                  "|准确地说|准确来说|严格来说|我的意思是|我是说") + r")[\s,，:：。!！、]*"
)
ZH_FILLER = re.compile(r"^(?:" + alt("另外|还有|顺便说一下|顺便|对了|记住|请记住|注意|提醒一下"
                                     "|补充一下|补充|然后|所以|那个|嗯|哦|好的|好|总之|此外")
                       + r")[\s,，:：、]*")
ZH_SMALL_TALK = re.compile(
    r"^(?:(?:" + alt("好的|好|嗯|嗯嗯|谢谢|谢谢你|谢谢啦|多谢|感谢|收到|没问题|可以|行|哈哈|哈哈哈"
                     "|好吧|明白|明白了|知道了|懂了|你好|您好|早上好|晚上好|早|辛苦了|不客气"
                     "|对|对的|是的|没事|太好了|完美|厉害|棒|好滴|ok|了解|继续|好的谢谢|谢啦"
                     "|不错|很好|可以的|没关系|再见|拜拜|嗨|哦|噢|原来如此|有道理|赞")
    + r")[\s,，.。!！~～?？、]*)+$", re.I
)
ZH_QUESTION_END = re.compile(r"(?:吗|么|嘛|呢)[\s。.!！~]*$")
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
ZH_PREFERENCE = Cue(re.compile(
    r"^(?:我们|我|咱们)?(?:其实|真的|一直|还是|也|都|个人|本人|平时|通常|非常|特别|很|比较|更|最){0,3}"
    r"(?P<neg>不太|不怎么|不大|不)?(?:" + alt("喜欢|爱|偏好|倾向于|倾向|讨厌|宁愿|宁可|习惯|偏爱"
                                              "|受不了") + r")"
    r"|^(?:我们|我)(?:还是|更|比较|其实)?(?:希望|想要|宁愿|宁可)|偏好|最好是|最好|我的首选|首选"
    r"|^(?:我们|我)(?:从来|一般|平时|基本)?不(?:吃|喝)"
), marks="喜欢|爱|偏好|倾向|讨厌|宁愿|宁可|习惯|受不了|希望|想要|最好|首选|不吃|不喝")
ZH_PREFERENCE_NEG = re.compile(r"不太|不怎么|不大|不喜欢|不爱|讨厌|受不了|不要|不想|不吃|不喝")
ZH_CONSTRAINT = Cue(re.compile(
    r"(?:" + alt("必须|务必|一定要|一定得|千万|永远不要|永远别|总是|始终|一律|每次都|只能|最多|至少"
                 "|不超过|不要超过|不能超过|确保|保证|严禁|禁止|不许|不准|不得|切勿|不可以|不要"
                 "|以后都|以后请|以后要|今后|从现在开始|从现在起|默认|记得|得先|一定要|要保持|要控制|保持在|控制在"
                 "|不低于|不高于|不少于|不多于|不能低于|不得低于|不得超过")
    + r")|(?<![特区分类级告识差个派性])别(?![的人处])|^(?:请|你)?不能|^勿"
), marks="必须|务必|一定|千万|永远|总是|始终|一律|每次都|只能|最多|至少|不超过|不要|不能"
         "|确保|保证|严禁|禁止|不许|不准|不得|切勿|不可以|以后|今后|从现在|默认|记得|得先|保持在|控制在|要保持|要控制"
         "|不低于|不高于|不少于|不多于|别|勿")
ZH_CONSTRAINT_NEG = re.compile(r"不要|不许|不准|不得|禁止|严禁|切勿|不可以|不能|别|勿|永远不")
ZH_DECISION = Cue(re.compile(
    r"(?:" + alt("决定|定了|就用|就这么定|那就|我们选|选定|采用|改用|确定用|敲定|统一用|就选|定为"
                 "|拍板|最终选|最后选|我们就用|选择了|选了|打算|计划用|准备用|准备采用")
    + r")|用[^，,。]{1,20}吧"
), marks="决定|定了|就用|就这么定|那就|选|采用|改用|确定用|敲定|统一用|定为|拍板|我们就用"
         "|打算|计划用|准备用|准备采用|吧")
ZH_PROPOSAL = cjk_cue("我建议|建议|可以考虑|不妨|或许可以|也许可以|要不要|要不|我们可以|你可以"
                      "|推荐|最好|是否可以|可以试试|试试|不如|我可以帮你|我可以")
ZH_IMPERATIVE = re.compile(r"^(?:请|麻烦)?(?:" + alt("把|将|用|使用|保持|控制|限制|设置|设为|重试"
                                                   "|回答|回复|保留|先|都用|统一|每次|设定|写|改")
                           + r")")
ZH_STANDING = re.compile(alt("以后|今后|每次|所有|都|一律|默认|总是|始终|永远"))
ZH_COPULA = re.compile(r"是|为|在|有|叫|等于|位于|设为|约|大概|大约|改到|改成|改为|用|采用|已经"
                       r"|了|要|会|过敏|住|需要|支持|处理")

# --- Japanese ------------------------------------------------------------------------
JA_CORRECTION = re.compile(
    r"^(?:" + alt("訂正です|訂正します|訂正させてください|訂正|修正です|修正します|実は|いや|いいえ"
                  "|違います|違いました|間違えました|間違いでした|正しくは|やっぱり|やはり|失礼しました"
                  "|ごめんなさい|ごめん|すみません間違えました|言い間違えました")
    + r")[\s、,。:!！]*"
)
JA_CORRECTION_MID = re.compile(r"じゃなくて|じゃなく|ではなくて|ではなく(?!て?も)")
JA_FILLER = re.compile(r"^(?:" + alt("ちなみに|なお|あと|また|それと|あの|えっと|ええと|すみません"
                                     "|すいません|念のため|覚えておいてほしいのですが|ところで"
                                     "|ついでに|それから|さて") + r")[\s、,:]*")
JA_SMALL_TALK = re.compile(
    r"^(?:(?:" + alt("ありがとう|ありがとうございます|ありがとうございました|どうも|了解|了解です"
                     "|了解しました|わかりました|分かりました|はい|いいえ|うん|ok|オッケー|おはよう"
                     "|おはようございます|こんにちは|こんばんは|お疲れ様です|お疲れさまです|お疲れ様"
                     "|よろしく|よろしくお願いします|すごい|完璧|なるほど|大丈夫|大丈夫です|いいね"
                     "|いいですね|助かります|助かりました|承知しました|かしこまりました"
                     "|そうですね|たしかに|確かに|さすが|どういたしまして|おやすみなさい|またね")
    + r")[\s、,。.!！~〜?？]*)+$", re.I
)
JA_QUESTION_END = re.compile(r"(?:か|かな|かしら|かね|っけ)[\s。.!！]*$")
JA_REQUEST = cjk_cue("てもらえますか|てもらえませんか|ていただけますか|ていただけませんか"
                     "|てくれますか|てくれませんか|てほしいのですが|お願いできますか"
                     "|でもらえますか|でくれますか|てもらえる|てくれる")
JA_HYPOTHETICAL = re.compile(r"^もし|たら[、,]|れば[、,]")
JA_REPORTED = Cue(re.compile(
    r"(?:と|って)(?:" + alt("言っていました|言っていた|言ってた|言っています|言ってる|言いました"
                          "|言った|言われました|言われた|書いてありました|書いてあった|書いてある|書いてあります"
                          "|書いていました|聞きました|話していました|言っていて|言ってました"
                          "|表示されました|表示された|出ました|出ていました") + r")"
), marks="言って|言いました|言った|言われ|書いて|聞きました|話して|表示され|出ました|出ていました")
JA_FIRST_PERSON = re.compile(r"^(?:私|僕|俺|わたし|我々|私たち|うち|弊社)(?:は|が|も)")
JA_PREFERENCE = cjk_cue(
    "が大好き|が好き|の方が好き|のほうが好き|の方がいい|のほうがいい|の方が良い|のほうが良い"
        "|が好み|を好む|が嫌い|は嫌い|が苦手|は苦手|好きです|好きではない|好きじゃない|大好きです"
        "|がいいです|が良いです|できれば|なるべく|の方を希望|を希望します|が希望|てほしいです"
        "|でほしいです|てもらいたいです"
)
JA_PREFERENCE_NEG = re.compile(r"嫌い|苦手|好きではない|好きじゃない")
JA_CONSTRAINT = cjk_cue(
    "必ず|絶対に|絶対|常に|毎回|今後は|今後|以降は|しないでください|ないでください|ないで下さい"
        "|ないように|てはいけない|てはいけません|ちゃだめ|ちゃダメ|てはダメ|ては駄目|禁止|厳禁"
        "|ないこと|なければならない|なければなりません|ないといけない|必要があります|必要がある"
        "|までにしてください|以内にしてください|以下にしてください|でお願いします|にしてください"
        "|ようにしてください|ようにして|ないでね|しないで"
)
JA_CONSTRAINT_NEG = re.compile(r"ないで|ないように|てはいけな|ちゃだめ|ちゃダメ|てはダメ|ては駄目"
                               r"|禁止|厳禁|ないこと")
JA_DECISION = cjk_cue(
    ("にしましょう|にしよう|にします|で行きましょう|でいきましょう|で行きます|でいきます"
        "|ことにしました|ことにします|ことにしよう|に決めました|に決定|を採用|採用します"
        "|を使いましょう|を使います|使うことにし|に決まりました"),
    r"を使う[。]?$", "を使う",
)
JA_PROPOSAL = cjk_cue(
    "おすすめします|お勧めします|オススメします|提案します|ご提案|はどうでしょうか|はどうでしょう"
        "|はいかがでしょうか|してはどうですか|してはいかがですか|たらどうでしょう|ほうがいいかもしれません"
        "|方がいいかもしれません|方が良いと思います|ほうがいいと思います|べきだと思います|ましょうか"
        "|を検討してください|するといいでしょう|と良いでしょう|といいでしょう|のはどうですか"
        "|てみてはどうでしょう|のがおすすめ|がおすすめ"
)
JA_STANDING = re.compile(alt("必ず|常に|毎回|今後|以降|いつも|すべて|全て|全部|ように"))
JA_POLITE_REQUEST = re.compile(r"(?:てください|で下さい|て下さい|お願いします|お願い)[。!！]?$")
