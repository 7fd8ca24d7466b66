"""English clause rules: which kind a clause is, and what it is about.

Order of the checks, and why:

1. Reported speech ("My manager said…", 'The log said "…"') is a fact about the speaker
   at most — the issue is explicit that it is never a rule for the agent — and nothing
   when all it reports is a quote.
2. A preference ("I prefer…", "I'd rather…", "my favourite…") is decided by its
   first-person cue before any rule word inside it ("I prefer we never…").
3. Constraints and decisions: whichever cue comes first wins ("We'll use Postgres,
   never MySQL" is a decision; "Always use UTC, let's not argue" a rule). A constraint
   is a prohibition or obligation cue (never/don't/always/make sure/must…), a "No X"
   ban, a team norm ("we never…"), or an instruction that lasts: a base-form verb
   with a quantity, a condition, a scope word ("every", "by default") or a verb that
   only makes sense as a standing order ("keep", "answer", "stick to"). A softened
   instruction ("if possible", "ideally") is a preference instead.
4. Requests and one-off instructions ("Can you…", "Fix the login bug") yield nothing:
   they are the conversation, not memory.
5. A fact is a declarative clause with a subject and a verb; it is kept only when it
   has a subject key or a number (so "It works now" is dropped).
6. A verbless note with a number is a setting ("port 8080", "timeout: 30s") or, led by
   max/at most/under…, a bound ("max 500 MB"); one whose number has no unit, cue or
   separator ("hello 429", "ping 42": ``quantity.loose``) is not memory.
"""

from __future__ import annotations

import re

from memory_core.extraction import experience
from memory_core.extraction import lexicon as lx
from memory_core.extraction.clause import Clause, Verdict
from memory_core.extraction.cue import Lead, first_word
from memory_core.extraction.leads import EN_TIME
from memory_core.extraction.prepare import MASK
from memory_core.extraction.quantity import loose
from memory_core.extraction.subject import VERSION_TOKEN, en_key

_ALNUM = re.compile(r"[A-Za-z0-9\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")
_MASKED_CODE = re.compile(f"`{MASK}+`")
"""Inline code the preparation masked (a command such as `helm upgrade --install`):
an object, though its words are hidden from the rules."""
_WH = re.compile(r"(?:what|which|whose)\s", re.I)
_PURPOSE = re.compile(r"\s(?:to|for|so\sthat|in\sorder\sto|because|since)\s", re.I)
"""Where a choice's object ends and its purpose begins ("batch the writes to cut latency")."""
_TO_VERBS = frozenset("switch switching move moving migrate migrating stick sticking go going "
                      "change changing upgrade upgrading downgrade downgrading set setting back up "
                      "due next close bump bumping pin pinning".split())
"""Verbs whose "to" names the choice itself ("switching to uv"), not a purpose."""
_CHOICE_LEAD = re.compile(r"^(?:to|on|that|we|i|with)\s+", re.I)
_NORM_NEGATION = re.compile(r"never|don't|do\snot|\bnot\b|n't", re.I)
_MODAL_NEGATION = re.compile(r"not|n't|never|forbidden|prohibited|banned", re.I)
_THAT = re.compile(r"^\s*that\b\s*", re.I)
_UNDECIDED = re.compile(r"(?:n't|\bnot|\bnever|\bnobody|\bno\sone)\s+(?:\w+\s+)?$", re.I)
"""A negation right before "decided" (with at most one word between: "haven't yet",
"nobody has"): no choice was made, whatever follows."""
_DECISION_NEGATION = re.compile(r"\bnot\b|\bagainst\b", re.I)
_DECIDER = re.compile(
    r"(?P<det>\b(?:the|a|an|this|that|these|those|their|his|her|its|our|my)\s+)?"
    r"(?P<who>[\w'-]+(?:\s+[\w'-]+){0,2}?)"
    r"(?:\s+(?:has|have|had|finally|just|also|then|eventually|ultimately|already))*\s*$", re.I)
"""Who decided: the last words before "decided", with their determiner."""
_DECIDER_REACH = 80
"""Characters before "decided" read for its decider (a bound: linear in the message)."""
_THIRD_PARTY = re.compile(r"(?:they|them|people|somebody|someone|everyone\s+else)$", re.I)
_TEAM_ROLE = re.compile(
    r"(?:^|\s)(?:team|teams|squad|group|lead|leads|manager|managers|management|leadership"
    r"|boss|cto|ceo|cfo|coo|cio|ciso|cpo|vp|director|head|pm|po|owner|owners|architect"
    r"|architects|founder|founders|co-?founders?|company|org|organi[sz]ation|department"
    r"|engineering|product|board|partners?|client|customer|family|wife|husband)$", re.I)
"""A role inside the speaker's team, company or household ("the CTO", "the team lead"):
what it decides binds the speaker's team."""
_JUDGEMENT = re.compile(
    r"(?:that\s+)?(?:we|i|you|it|they|he|she|this|that)\s+(?:was|were|wasn't|weren't|had|hadn't"
    r"|did|didn't|owed|lost|failed|missed|breached|violated|qualified|deserved|counted"
    r"|should\s+have|could\s+have|must\s+have)\b", re.I)
"""A finding about what was ("… decided we were too late", "… that we had breached the
contract"): a judgement, not a choice of what to do."""
_DECIDED_NOT = re.compile(
    r"(?:(?:we|i)\s+(?:won't|will\s+not|wouldn't|would\s+not|shouldn't|should\s+not"
    r"|don't|do\s+not|aren't\s+going\s+to|are\s+not\s+going\s+to)\s+"
    r"|(?:to\s+)?(?:not|never|against)\s+"
    r"(?:(?:using|going\s+with|adopting|switching\s+to|moving\s+to)\s+)?)"
    r"(?:to\s+)?(?:use\s+)?", re.I)
"""What refuses a choice right after its verb: "(decided) not to", "against (using)",
"that we won't": the object after it is what the choice is about."""
_FIRST_PERSON_VERB = re.compile(r"(?P<p>i|we|you)\s(?:(?:usually|often|always|never|also|still|now"
                                r"|just|really|mostly|currently|normally|typically)\s)*"
                                r"(?P<v>[a-z]+)", re.I)
_NON_SPACE = re.compile(r"\S+")
_JUST = re.compile(r"\bjust\b", re.I)
_PREPOSITION_SPLIT = re.compile(r"\s(?:in|at|to|from|on|for|with|by|about)\s")
_QUOTE_MARKS = re.compile(r"[\"'“”‘’]")
_FAVOURITE = re.compile(
    r"(?:my\s(?:(?:current|new)\s)?)?(?:favou?rite|preferred|go-to)\s(?P<n>[\w\s-]{1,30}?)"
    r"\s(?:is|are\b"
    r"|to\b(?![^.;]*\b(?:is|are)\b))", re.I)
"""What is favoured, before "is" or, in an order to change it ("[change] my favourite
colour to blue"), before "to" with no copula after it ("favourite thing to do is …")."""
_PROPOSAL_LEAD = re.compile(r"^(?:that\s)?(?:we|you|i)?\s*(?:use|try|should|could|might|want\sto|to"
                            r"|is\sto|would\sbe\sto|be\sto|also)?\s*", re.I)
_COPULA_WORDS = frozenset(("is", "are", "was", "were"))
_WORD = re.compile(r"[a-z']+", re.I)


def _copula_free(c: Clause, after: str) -> bool:
    """Whether the clause outside its condition has no copula: an order ("Return 404 when
    the user is missing": the condition's "is" does not count), not a claim that
    opens with a verb-like word ("Keep-alive is 30 s"). The condition's copula is passed
    over only where the verb has its object right ``after`` it ("404", "the logs",
    "Redis"): "Build times double when the cache is cold" opens with a noun."""
    if _COPULA_WORDS.isdisjoint(c.tokens):
        return True
    if c.condition is None or not _OBJECT_AFTER.match(after):
        return False
    return _COPULA_WORDS.isdisjoint(w.lower() for w in _WORD.findall(c.core))


_OBJECT_AFTER = re.compile(lx.OBJECT_START + r"|\s+(?-i:[A-Z])", re.I)
_SCOPING_PREPOSITIONS = frozenset(("in", "for", "with"))
_PRONOUNS = frozenset("it this that there they he she these those something everything".split())
_FIRST = frozenset(("i", "we"))
_AFTER_LEAD = re.compile(r",|:\s")
""""Per Lena, …", "Lena: the port is 8080": the lead before a comma or a colon (who
said it, an aside) is not part of the subject."""
_SOFT_ADVERBS = frozenset("so just also still always never even totally quite".split())
_YOU = frozenset(("you", "you've", "you're", "you'll", "you'd", "u"))
_VOCATIVE = re.compile(r"^[A-Z][a-z]+(?=\s+(?:you|you've|you're|you'll|you'd)$)\s*")
"""A name right before "you" ("Jon you've got this"): the one spoken to, no subject."""


def _you_and_adverbs(np: str) -> bool:
    """"you've totally (earned it)", "you really (nailed it)": the one spoken to, then
    adverbs before the verb."""
    words = np.split()
    return len(words) > 1 and words[0] in _YOU and all(
        w.endswith("ly") or w in _SOFT_ADVERBS for w in words[1:])


_TIME_WORDS = re.compile(
    r"^(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|today|tomorrow|tonight"
    r"|yesterday|next|this|last|now|later|(?:jan|feb|mar|apr|may|jun|jul|aug|sep|oct|nov|dec)\w*"
    r"|q[1-4]|\d)", re.I)
_VERB_WORDS = frozenset("""
    is are was were am isn't aren't wasn't weren't will won't would can can't cannot could should
    has have had hasn't haven't does doesn't do don't did didn't got gets remains stays becomes
    equals lives costs takes holds handles supports lands starts ends fails works needs requires
    contains includes sits points depends moved runs uses expires lasts means belongs goes went
    returns fixed broke breaks crashed crashes leaves arrives departs opens closes begins began
    finished finishes happens happened serves stores owns live work use run need have want fly
    leave arrive become becomes became reaches expire fail usually
    always never often sometimes already still""".split())
_PAST_WORDS = frozenset("""
    took taken ran kept spent held gave given made came grew fell rose stood sat brought
    bought sold paid met wrote written drove flew found lost led won sent built lent slept
    chose spoke drew threw shook froze sank struck fought taught caught sought stuck hung
    dug tore""".split())
"""Irregular past forms, a clause's verb unless a determiner leads them ("the written
report"): never part of its subject's key ("The run took 5 minutes" is keyed "run", as
"The build takes 5 minutes" is "build"). Only words that are no nouns ("cost", "set",
"cut", "left" are), nor of knowing and telling ("Nobody knew.", "I thought so." state
no fact of their own)."""
_WORD = re.compile(r"[A-Za-z][A-Za-z']*")
_BARE_VERBS = frozenset("live work use run need want fly leave arrive become expire fail".split())
"""The base forms in :data:`_VERB_WORDS` that are nouns as well ("my work email")."""
_NOUN_DETERMINERS = frozenset("the a an my our your their his its every".split())
"""Determiners that never stand alone as a subject ("this", "that" do: "This is …"),
so a word right after one is a noun."""
_NOUN_ADJECTIVES = frozenset("new old current former previous personal private main primary "
                             "secondary usual regular default own other".split())
"""Adjectives that stand between a determiner and its noun ("my new work email"): up to
two keep a bare verb form after them a noun."""


_PRONOUN_CONTRACTION = re.compile(
    r"^(?:it|that|there|this|what|he|she|i|we|you|they|here|who)('s|'re|'m|'ll|'ve|'d)(?![\w'])",
    re.I)
_NOUN_CONTRACTION = re.compile(
    r"^(?:[^\W\d_][\w-]*\s+){0,3}[^\W\d_][\w-]*(?P<v>'s)\s+"
    r"(?=(?:(?:not|no\s+longer|still|also|now|really|actually|already|definitely|just)\s+)?"
    r"(?:my|our|your|his|her|their|the|a|an)\s)", re.I)
"""A name or noun phrase contracted with "is" before a determiner ("Dana's my manager",
"The build server's our bottleneck", "Dana's not my manager"): a possessive "'s" is
followed by its noun, not by a determiner (nor by an adverb and a determiner)."""
_DETERMINERS = frozenset("the a an my our your their his her its this that these those each "
                         "every all some any no".split())
_COPULAS = frozenset("is are was were am 's 're 'm isn't aren't wasn't weren't".split())
_FIRST_PERSON_SKIP = Lead(re.compile(
    r"^(?:i|we)(?:'m|\sam|'re|\sare)?\s(?:not\ssure|just\s(?:curious|wondering|checking|saying)"
    r"|wondering|curious|going\sto\sask|trying\sto|back|here|ready|confused|sorry|glad|happy"
    r"|excited|afraid\sso|done\s(?:for|with))\b"
    r"|^(?:i|we)\s(?:don't|do\snot|didn't)\s(?:know|understand|get|see|remember|think|care)\b"
    r"|^(?:i|we)(?:'ll|\swill|'d|\swould)\s|^i\s(?:guess|see|mean|hope|wish|wonder)\b"
    r"|^i\shave\sa\squestion", re.I), "i we i'm we're i'll we'll i'd we'd")
_REFERENCE = re.compile(r"^(?:that|this|it|those|these|them|so|too|one)\b", re.I)
_JUST_EVENT = re.compile(
    r"(?:[a-z]{2,}ed|got|bought|began|built|won|found|met|wrote|drew|sold|ran|swam|sang|flew"
    r"|rode|caught|taught|brought|threw|grew)\s+(?:a|an|my|our)\s+[a-z]", re.I)
""""I just started a pottery class", "I just adopted a puppy": a past event with a thing
new to the user's life (an indefinite or own object) is a fact about the user, "just"
or not. Not a light verb's idiom ("I just had a look", "I just made a mistake"), nor a
thing of the conversation ("I just saw your message"), nor no object ("I just checked")."""
_DATED_DEMONSTRATIVE = re.compile(
    r"^(?:that|this|those|these)\s+(?!(?:one|ones|again|too|also|as\s+well|before|already)\b"
    r"|" + EN_TIME + r")[a-z][\w'-]*\b.*\b(?:" + EN_TIME + r"|in\s+(?:19|20)\d{2})\b", re.I)
""""I painted that lake sunrise last year": a thing pointed at, then when it was done: a
dated event of the user's, not a remark about the conversation ("I tried that", "I did
that yesterday": no thing named)."""
_NARRATION = re.compile(
    r"(?:read|reread|skimmed|scanned|browsed|looked)\s(?:through|over)\s(?:\S+\s){0,3}?\S+"
    r"(?:\sagain)?\W*$"
    r"|(?:looked|glanced)\sat\s(?:\S+\s){0,3}?\S+\sagain\W*$", re.I)
"""Looking something over, just now, as the whole clause: "I read through X again",
"I skimmed through the RFC", "I looked at the logs again" narrate what the speaker did
a moment ago (the conversation, not the world), like "I tried that". Short objects
only, and nothing after them, so these stay facts: "I read through the whole Wheel of
Time series", "I read over the weekend that the API is deprecated", "I read Harry
Potter again with my daughter", "I went over the budget again", and any clause with a
number ("I read 40 pages")."""
_CONTINUATION = Lead(re.compile(
    r"^(?:(?:ok|okay|alright|so|right)[,\s]+)*(?:let's|let\sus|lets)\s"
    r"(?:keep\s(?:going|working|moving)|carry\son)"
    r"(?:\s(?:with|on)\s(?:it|this|that|\S*[/.]\S*))?\W*$", re.I),
    "ok okay alright so right let's let lets")
""""Let's keep going with X" (a file, "it"), "let's carry on": moving on in the
conversation, not a choice. With any other object it is a decision: "Let's keep going
with Postgres for the queue", "Let's keep working in Python", "let's keep the retry
count at 5"."""
_LEADING_PREP = re.compile(r"^(?:on|in|at|to|from|for|with|a|an|the|about|around|of)\s+", re.I)
_QUESTION_LEAD = re.compile(
    r"^(?:(?:do|does)\s(?:you|anyone|anybody)\sknow\s|any\sidea\s|i\swonder\s)?(?:(?:if|whether)\s)?"
    r"(?:(?:what|when|where|which|who|whom|whose|why|how)(?:'s|\s(?:long|much|many|often|far"
    r"|big|soon|old))?\s+)?(?:(?:is|are|am|was|were|do|does|did|can|could|should|would|will"
    r"|shall|may|might|have|has)(?:n't)?\s+)?(?:(?:we|i|you|they|it|there)\s+)?", re.I)
_FOR_TARGET = re.compile(r"\bfor\s+(?:the|our|my|your|their|this|that)\s(?P<t>[^,;.]{1,60})", re.I)
"""A role ("for the session cache"), not a benefit ("for faster installs")."""
_USE_VERBS = frozenset(("use", "uses", "used", "run", "runs", "host", "hosts", "deploy", "deploys"))
_USE_FOR = re.compile(r"(?<!\w)for\s+(?:(?:the|our|my|all|all\s+our|its|their)\s+)?"
                      r"(?P<t>[A-Za-z][\w./+#-]*(?:\s+[A-Za-z][\w./+#-]*){0,2})\s*$", re.I)
"""The role a tool is used for, ending the clause ("… for CI", "… for the session cache")."""
_BENEFIT = re.compile(r"^(?:fun|free|speed|safety|simplicity|convenience|now|years|months|ages"
                      r"|a\s|an\s|\w+er\b|more\b|less\b|better\b|faster\b|cheaper\b|that\b"
                      r"|this\b|it\b|them\b|everything\b|anything\b|most\b|some\b|all\b)", re.I)
"""What a tool is used for that is no role: a benefit, a time, a pronoun."""
_PREF_LEAD = re.compile(r"^(?:to\s|have\s|having\s|using\s|use\s|it\swhen\s|when\s|it\sif\s|if\s"
                        r"|it\sthat\s|that\s|you\s|them\s|it\s)+", re.I)


def _first_verb(core: str, toks: frozenset[str]) -> re.Match[str] | None:
    """The first verb after a subject: a known verb, or a word ending in -s/-ed that does
    not follow a determiner ("The build fails", not "The tests") nor precede a known verb
    ("Access tokens expire", "EU tenants will": a plural noun)."""
    if _VERB_WORDS.isdisjoint(toks) and _PAST_WORDS.isdisjoint(toks) \
            and not any(t.endswith(("s", "ed")) for t in toks):
        return None
    previous = ""
    adjectives = -1  # adjectives since a determiner (-1: none before)
    words = list(_WORD.finditer(core))
    for i, w in enumerate(words):
        low = w.group().lower()
        if low in _BARE_VERBS and 0 <= adjectives <= 2:
            # "My work email is …", "my new work email", "the run time": a noun
            previous, adjectives = low, -1
            continue
        adjectives = 0 if low in _NOUN_DETERMINERS else adjectives + 1 \
            if adjectives >= 0 and low in _NOUN_ADJECTIVES else -1
        if low.endswith("'s") and _possessive(words, i):
            previous = low  # "The login form's log level is info": the owner's noun
            continue
        if w.start() > 0 and (low in _VERB_WORDS or (
                low in _PAST_WORDS and previous not in _DETERMINERS) or (
                len(low) >= 4 and low.endswith(("s", "ed")) and previous not in _DETERMINERS
                and previous not in ("", "of", "in", "for", "to", "and", "or")
                and not (i + 1 < len(words) and words[i + 1].group().lower() in _VERB_WORDS
                         and low.endswith("s")))):
            return w
        previous = low
    return None


_POSSESSED_NOUNS = 3
"""How many words a possessive's noun phrase may hold before its verb ("form's log
level is")."""


def _possessive(words: list[re.Match[str]], i: int) -> bool:
    """Whether ``words[i]`` ("form's") is a possessive, not a noun contracted with
    "is": a noun follows it ("log", not "broken", "failing", "not") and a known verb
    comes within :data:`_POSSESSED_NOUNS` words after that noun's first word ("The
    login form's log level is info", "The payment service's logs are too noisy")."""
    after = [w.group().lower() for w in words[i + 1:i + 2 + _POSSESSED_NOUNS]]
    if len(after) < 2 or after[0] in _VERB_WORDS or after[0] in _DETERMINERS \
            or after[0].endswith(("ed", "ing", "en", "ly", "'s")) or after[0] in _NOT_NOUNS:
        return False
    return any(a in _VERB_WORDS for a in after[1:])


_NOT_NOUNS = frozenset("not no never still also now really just always already".split())

_BOUND = re.compile(r"^(?:max(?:imum)?|min(?:imum)?|at\smost|at\sleast|up\sto|no\smore\sthan"
                    r"|no\sless\sthan|not\smore\sthan|under|below|limit(?:ed)?\sto|capped\sat"
                    r"|cap\sat)\b", re.I)
_FRAGMENT_WORDS = 6


def _words(text: str) -> bool:
    return _ALNUM.search(text) is not None


def _ours(before: str, after: str) -> bool:
    """Whether "decided" with ``before`` (its decider, as written) and ``after`` (what
    follows it) is a choice the speaker or their team made: a first-person decider, a
    name ("Marta decided …"), "our/my …" or a role in the team ("the CTO decided …");
    not a third party ("They decided …", "The court decided …", "The airline decided
    …"), and not a finding about what was ("… decided we were too late")."""
    if _JUDGEMENT.match(after.lstrip()):
        return False
    decider = re.split(r"[,;:]", before[-_DECIDER_REACH:])[-1].strip()
    m = _DECIDER.search(decider)
    if not decider or m is None:
        return True
    det, who = (m.group("det") or "").strip().lower(), m.group("who")
    if det in ("our", "my") or re.match(r"(?:we|i|us)\b", who, re.I):
        return True
    if _THIRD_PARTY.match(who.lower()):
        return False
    if det:
        return bool(_TEAM_ROLE.search(who))
    return who[:1].isupper() or bool(_TEAM_ROLE.search(who))  # "Marta", "management"


def _target_or_object(rest: str) -> str | None:
    """Key a choice: its "for X" purpose when X is not a time, else its object."""
    rest = _CHOICE_LEAD.sub("", rest.strip())
    m = _FOR_TARGET.search(rest)
    if m and not _TIME_WORDS.match(m.group("t").strip()):
        target = en_key(m.group("t"))
        if target:
            return target
    obj = rest[: m.start()] if m else rest
    for purpose in _PURPOSE.finditer(obj):
        before = obj[: purpose.start()].split()
        names_choice = purpose.group().strip().lower() == "to" and before \
            and before[-1].lower() in _TO_VERBS
        if not names_choice:
            obj = obj[: purpose.start()]
            break
    return en_key(obj, action=True)


def _is_standing(c: Clause, verb: str, core: str) -> bool:
    """An imperative that is a lasting instruction rather than a one-off request (a
    number counts only when the clause fixes it: "retry 3 times", not "try 5")."""
    if verb.lower() in lx.EN_VERY_STANDING:
        return True
    has_number = any((q.kind != "bare" or q.value is not None)
                     and not loose(c.scan, q, c.start, c.end, c.lang) for q in c.quantities)
    strong = bool(lx.EN_STANDING_SCOPE.search(core, c.tokens)) or c.condition is not None
    if verb.lower() in lx.EN_STANDING_VERBS:
        return has_number or strong or not _SCOPING_PREPOSITIONS.isdisjoint(c.tokens)
    return has_number or strong


_ADVERB_LEAD = re.compile(r"(?:(?:please|pls|and|but|so|also|just|then|kindly)\s+)*"
                          r"(?:always|never(?:\s+ever)?)\s+", re.I)
_NOT_AN_ORDER = re.compile(
    r"(?:(?!(?:need|speed|feed|seed|embed|exceed|proceed|succeed|shed|bleed|breed)\b)"
    r"[a-z]{2,}ed|been|had|was|were|did|got|saw|seen|felt|made|thought|knew|went|gone|came"
    r"|done|heard|met|took|taken|gave|given|found|lost|won|became|began"
    r"|here|there|good|great|happy|glad|ready|fun|nice|calm|up|so|such|a|an|the|my|our|his"
    r"|her|their|its|gets|puts|makes|takes|gives|stands|goes|does|has|keeps|brings|seems"
    r"|looks|feels|sounds|reminds|lets)\b", re.I)
"""What follows "always"/"never" in a clause whose subject was left out, not an order: a
past form ("Never had a chance to visit it", "never been to one", "never tried
climbing"), a predicate ("Always here to help", "always good to hear", "Never a dull
moment") or a verb in the third person ("always puts a smile on my face", "never gets
old"). An order takes the bare verb: "Never push to main", "Always use tabs"."""


def _rule(core: str, c: Clause, first: str) -> tuple[int, bool, str | None, bool] | None:
    """(position, negated, subject, is_imperative) of a constraint cue, else None."""
    for pattern, negated in ((lx.EN_NEG_IMPERATIVE, True), (lx.EN_POS_IMPERATIVE, False),
                             (lx.EN_NO_NOUN, True)):
        m = pattern.match(core, first)
        if m and pattern is not lx.EN_NO_NOUN:
            adverb = _ADVERB_LEAD.match(core)
            if adverb is not None and _NOT_AN_ORDER.match(core, adverb.end()):
                break  # "Never had a chance to visit it": "I've" left out, no order
        if m:
            rest = core[m.end():]
            bound = core[m.start():]
            if not negated:  # "From now on, don't add a summary", "… no emojis"
                tail = bound = rest.lstrip(" ,;:")
                no = lx.EN_NEG_IMPERATIVE.match(tail) or lx.EN_NO_NOUN.match(tail)
                if no:
                    negated, rest = True, tail[no.end():]
            if lx.EN_NO_BOUND.match(bound):
                negated = False  # "(From now on,) no more than 3 retries": a bound
            rest = lx.EN_IMPERATIVE.pattern.sub(lambda mm: mm.group("verb"), rest, count=1)
            return 0, negated, en_key(rest, action=True), True
    m = lx.EN_TEAM_NORM.match(core, first)
    if m:
        neg = bool(_NORM_NEGATION.search(m.group()))
        return 0, neg, en_key(core[m.end():], action=True), False
    m = lx.EN_MODAL_RULE.search(core, c.tokens)
    if m and EPISTEMIC_MUST.match(core, m.start()):
        m = None  # "That must have been tough": a guess about an experience, no rule
    if m:
        np = _AFTER_LEAD.split(core[: m.start()].strip())[-1].strip()
        if not np or (np.lower() not in _FIRST and _words(np)):
            neg = bool(_MODAL_NEGATION.search(m.group()))
            subject = None if np.lower() in _PRONOUNS | {"you"} else en_key(np)
            return m.start(), neg, subject or en_key(core[m.end():], action=True), False
    m = lx.EN_IMPERATIVE.match(core, first)
    if m and _copula_free(c, core[m.end("verb"):]):
        if _is_standing(c, m.group("verb"), core):
            neg = bool(lx.EN_NEGATION.search(core, c.tokens))
            return 0, neg, en_key(core[m.start("verb"):], action=True), True
    if first == "only":  # "Only suggest recipes that take under 30 minutes": a restriction
        rest = core[4:].lstrip()
        m = lx.EN_IMPERATIVE.match(rest, first_word(rest))
        if m and _copula_free(c, rest[m.end("verb"):]):
            return 0, False, en_key(rest[m.start("verb"):], action=True), True
    return None


_FEELING_WORDS = (
    r"awesome|amazing|great|tough|hard|difficult|challenging|scary|frightening|fun|exciting"
    r"|excited|fulfilling|rewarding|satisfying|gratifying|frustrating|meaningful|wonderful"
    r"|incredible|nice|cool|lovely|liberating|special|sur+eal|stressful|exhausting|tiring"
    r"|overwhelming|proud|thrilled|stoked|elated|devastated|amazed|happy|sad|heartbreaking"
    r"|painful|inspiring|heartwarming|beautiful|fantastic|crazy|wild|interesting|fascinating"
    r"|rough|relieved|lonely|humbling|nerve-?wracking|emotional|intense|surprising"
    r"|traumati[sz]ing|magical|unreal|tiresome")
_FEELING_PHRASE = (
    r"(?:(?:so|really|quite|pretty|very|truly|super|incredibly|absolutely)\s+)?"
    r"(?:(?:such\s+|quite\s+)?an?\s+(?:(?:" + _FEELING_WORDS + r")\b|relief|blast|surprise"
    r"|shock|journey|ride|honou?r|privilege|pleasure|treat|lot\b|big\s+deal|dream)"
    r"|(?:" + _FEELING_WORDS + r")\b)")
EPISTEMIC_MUST = re.compile(
    r"\bmust(?:'ve\b|\s+have\s+(?:been\s+(?:" + _FEELING_PHRASE + r"|(?!\w+(?:ed|en)\b))"
    r"|felt\b|had\s+(?:an?\s+|some\s+|so\s+)|taken\s+(?:a\s+lot|so\s+much|ages|forever)"
    r"|loved\b|enjoyed\b|meant\b|looked\b|sounded\b)"
    r"|\s+(?:really\s+)?(?:feel|feels|look|looks|sound|sounds|seem|seems|love|enjoy|miss)\b"
    r"|\s+be\s+" + _FEELING_PHRASE + r"|\s+be\s*(?:[.!?,;]|$)"
    r"|-(?:read|see|try|watch|visit|do|have)\b)", re.I)
""""must" that guesses rather than binds: what something must have been or must feel
like ("That must have been awesome", "Must feel so liberating!", "you must be so
excited"), and "a must-read": an inference about someone's experience, no rule."""


_RECURRING = re.compile(
    r"(?:on\s+(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days|weekends|weekdays|workdays)"
    r"|(?:every|each)\s+(?:other\s+)?(?:\w+\s+)?\w+|at\s+(?:night|weekends)|nightly|daily"
    r"|weekly|monthly|hourly|yearly|twice\s+a\s+\w+|once\s+a\s+\w+"
    r"|in\s+the\s+(?:mornings|evenings|afternoons))\b", re.I)
"""A time that recurs ("on Fridays", "every sprint", "nightly"): a first-person verb
with it and no object states a practice ("We deploy on Fridays"), not a remark about
the conversation ("I agree")."""


def _habitual(c: Clause, obj: str) -> bool:
    """Whether the clause's object is empty and its condition (or what is left of its
    predicate) is a recurring time: "We deploy on Fridays", "We release weekly"."""
    if c.condition is not None and _RECURRING.match(c.scan, c.condition[0], c.condition[1]):
        return not _words(obj)
    return bool(_RECURRING.match(obj.strip())) and len(obj.split()) <= 4


_CHOOSING_HABIT = re.compile(
    r"i\s(?:(?:always|usually|normally|generally|typically|mostly|invariably|tend\sto)\s)"
    r"(?:(?:just|only|still)\s)?(?P<verb>want|take|order|book|get|choose|pick|drink|eat|fly"
    r"|stay\s(?:at|in|with)|sit\s(?:in|at|by|near)|ask\sfor|go\s(?:for|with)|buy|wear|rent"
    r"|ride|sleep\son|reserve|request|shop\sat)\b", re.I)
"""The user's habit of choosing ("For flights I always want an aisle seat", "I always
take my coffee black", "I usually stay at Hiltons"): a standing preference, keyed by
what is chosen. A frequency word is needed ("I want an aisle seat" is a wish for now);
a verb of mishap ("I always forget my keys") or in the past ("Last year I always flew
Delta") is no choice, and stays a fact."""

_MISHAP_EXCESS = re.compile(
    r"\btoo\s+(?:much|many|little|few|late|early|long|far|often|fast|slow)\b|\bforever\b"
    r"|\bwrong\b|\bby\s+(?:mistake|accident)\b", re.I)
_MISHAP_STATE = re.compile(
    r"\s*(?:an?\s+)?(?:lost|sick|ill|tired|bored|stuck|confused|nervous|distracted|angry"
    r"|upset|(?:car|sea|air)sick|hungry|sleepy|sunburn(?:ed|t)|headaches?|migraines?|colds?)\b",
    re.I)
"""What a choosing verb's habit tells as a mishap, not a choice: an excess or a mistake
("I always order too much food", "I always take forever to reply", "I always book the
wrong train"), or a state that befalls the speaker ("I usually get lost", "I always
get headaches after lunch"). The statement stays a fact."""


def _choosing_habit(core: str) -> re.Match[str] | None:
    """The user's habit of choosing (:data:`_CHOOSING_HABIT`), unless it tells a mishap
    (:data:`_MISHAP_EXCESS`, :data:`_MISHAP_STATE`)."""
    m = _CHOOSING_HABIT.match(core)
    if m is None or _MISHAP_STATE.match(core, m.end()) \
            or _MISHAP_EXCESS.search(core, m.end()):
        return None
    return m


_GOING_TO = re.compile(r"(?:going|planning|about|hoping|aiming|scheduled|due|supposed)\s+to\s+"
                       r"(?=[a-z])", re.I)
"""A plan's auxiliary after "I'm" ("I'm going to learn Rust"): the key is what follows."""


def _fact(core: str, c: Clause, first: str) -> Verdict | None:
    np_end, pred_start, verb = -1, -1, ""
    contraction = _PRONOUN_CONTRACTION.match(core) if "'" in first else None
    noun = _NOUN_CONTRACTION.match(core) if not contraction and "'s " in core else None
    if contraction:
        np_end, pred_start, verb = contraction.start(1), contraction.end(), contraction.group(1)
    elif noun:
        np_end, pred_start, verb = noun.start("v"), noun.end("v"), "'s"
    else:
        m = _first_verb(core, c.tokens)
        first_person = _FIRST_PERSON_VERB.match(core) if first in ("i", "we", "you") else None
        if first_person and (m is None or m.start() > first_person.start("v")):
            m = _NON_SPACE.search(core, first_person.start("v"))  # "We see 2.5k req/s"
        if m is None:
            return None
        np_end, pred_start, verb = m.start(), m.end(), m.group()
        if first_person and m.start() == first_person.start("v") and (not _JUST.search(
                core, first_person.end("p"), m.start()) or _JUST_EVENT.match(core, m.start())):
            # "We also use Kibana", "We mostly use Go": the adverbs between the pronoun
            # and its verb are not part of the subject. "I just got back from the
            # dentist" tells of a moment ago, not of what holds: no subject, unless
            # it is an event with a new thing in it (_JUST_EVENT)
            np_end = first_person.end("p")
    np = _AFTER_LEAD.split(core[:np_end].strip())[-1].strip()
    np = _VOCATIVE.sub("", np).lower()  # "Jon you've got this": Jon is spoken to
    pred = core[pred_start:].strip()
    if not np:
        return None
    if np in _YOU or _you_and_adverbs(np):
        # what the speaker tells the one spoken to of them is no memory item, unless it
        # holds a number ("You have 2 free seats left on the plan")
        return Verdict("fact", None) if c.quantities else None
    if np in _PRONOUNS:
        subject = en_key(pred) if np == "there" else None
    elif np in _FIRST:
        light = verb.lower() in _COPULAS or verb.lower() in ("have", "has", "had", "'ve")
        obj = _LEADING_PREP.sub("", pred)
        if not c.quantities and not _habitual(c, obj) and (
                not (_words(obj) or _MASKED_CODE.search(obj))
                or (_REFERENCE.match(obj) and not _DATED_DEMONSTRATIVE.match(obj))
                or _NARRATION.match(core, pred_start - len(verb))):
            # "I agree", "I tried that", "I read through X again": about the
            # conversation, not the world
            return None
        phrase = pred if light else f"{verb} {pred}"
        going = _GOING_TO.match(phrase) if light else None
        phrase = _LEADING_PREP.sub("", phrase[going.end():] if going else phrase)
        # "I'm going to start at Initech": the plan is keyed as a dated one is
        # (dated.plan): what is to be done, its place kept ("start initech")
        subject = en_key(phrase if going else _PREPOSITION_SPLIT.split(phrase, maxsplit=1)[0],
                         action=True)
        role = None
        if verb.lower() in _USE_VERBS:
            # "for CI" may have been read as the clause's condition (a setting): for a
            # tool, it is the role
            where = c.scan[c.condition[0]:c.condition[1]] if c.condition is not None \
                and not _words(c.scan[c.condition[1]:c.end]) else ""
            role = _USE_FOR.search(pred) or _USE_FOR.match(where)
        if role and not (_TIME_WORDS.match(role.group("t")) or _BENEFIT.match(role.group("t"))):
            # "We use Jenkins for CI": what the tool is for is the attribute, the tool
            # its value ("We switched to GitLab CI" then revises it)
            subject = en_key(role.group("t")) or subject
    else:
        subject = en_key(np)
        if subject and _TIME_WORDS.match(subject) and verb.lower() in _COPULAS:
            subject = en_key(pred) or subject
    if subject is None and not c.quantities:
        return None
    return Verdict("fact", subject)


def _with_port(subject: str | None, c: Clause) -> str | None:
    kinds = {q.kind for q in c.quantities[:1]}
    for kind, word in (("port", "port"), ("version", "version")):
        words = subject.split() if subject else []
        if kind in kinds and words and word not in words \
                and not any(VERSION_TOKEN.match(w.split("/")[0]) for w in words):  # "ship v2"
            return f"{subject} {word}"
    return subject


_NO_NEED = Lead(re.compile(
    r"^(?:(?:oh|ok|okay|and|but|so)[,\s]+)*(?:there's\s|there\sis\s)?no\s(?:need|reason)\b",
    re.I), "oh ok okay and but so there's there no")
""""No need to …" left after the orders ("No need to explain" is one:
:data:`lexicon.EN_NEG_IMPERATIVE`): reassurance ("No need to worry", "… to apologize"),
no statement."""
_ASKED = re.compile(r"\b(?:asked|asks)\b", re.I)
_REPORTED_QUESTION = re.compile(
    r"(?:me\s|us\s|around\s)?(?:whether|if|how|what|why|when|where|who|which)\b", re.I)


_MEMORY_FRAME = Lead(re.compile(
    r"^(?:i|we)(?:'ll|\swill|'d|\swould|\scan|\scould)?\s(?:never|not\sever|n't\sever"
    r"|won't\sever)\sforget\b(?:\s+(?:that|how)\b)?\s*"
    r"|^(?:i|we)(?:'ll|\swill)?\s(?:always\s|still\s|clearly\s)?remember\b(?:\s+(?:that|how)\b)?\s*"
    r"|^(?:i|we)\swon't\sever\sforget\b(?:\s+(?:that|how)\b)?\s*", re.I),
    "i we i'll we'll i'd we'd")
""""I'll never forget that I broke prod in 2021", "I remember how we lost the DB":
the speaker asserts what follows as their own memory (no forgetting is asked of the
agent, no plan of the speaker): the statement is what follows."""


_SELF_NAME = re.compile(
    r"^i(?:'m|\sam)\s(?!(?-i:[A-Z][a-z]+(?:ish|ese|ian|ean|ican|an|ic|ist|i|ch|sh|ss|ek|ai|u|im"
    r"|kh|ed|ing|y|al|ful|ous|ive|ent|ant|er|est|ly)\b))(?P<name>(?-i:[A-Z][a-z]{1,20}))"
    r"(?=\s*(?:$|[,.;:!?)]|\s(?:by\sthe\sway|btw)\b))", re.I)
""""I'm Sam.", "I am Sam, by the way": the speaker's name, keyed
:data:`~memory_core.extraction.lexicon.NAME_KEYS` like "My name is Sam" so that "I go
by Alex now" or "Call me Alex" revises it. One capitalised word that ends the clause,
and not one with the ending of a nationality, a faith or an adjective ("I'm German",
"I'm Jewish", "I'm Catholic", "I'm Hindu", "I'm Ready"), which stay keyed by the
word."""


def _allergy_key(what: str) -> str:
    """The key of an allergy to ``what`` (a key): its last word in the singular, so
    "allergic to peanuts" and "a peanut allergy" share ``peanut allergy``."""
    words = what.split()
    if words:
        last = words[-1]
        if last.endswith("ies") and len(last) > 4:
            last = last[:-3] + "y"
        elif last.endswith("oes") and len(last) > 4:
            last = last[:-2]
        elif last.endswith("s") and not last.endswith(("ss", "us", "is")) and len(last) > 3:
            last = last[:-1]
        words[-1] = last
    return " ".join([*words, "allergy"])


def classify(c: Clause) -> Verdict | None:
    """Classify an English user statement (see module doc); None when not memory."""
    core = c.core
    m = lx.EN_REPORTED.match(core) if not lx.EN_REPORTING_VERBS.isdisjoint(c.tokens) else None
    if m and m.group("who").strip().lower() not in _FIRST:
        rest = core[m.end():]
        if not _words(_QUOTE_MARKS.sub("", rest)) and not c.quantities:
            return None  # only a quote; "the export job writes 12 GB" reports an amount
        if _ASKED.search(m.group()) and _REPORTED_QUESTION.match(c.raw[m.end():]):
            return None  # "Kai asked whether we still support 3.9": a question, no claim
        return Verdict("fact", en_key(m.group("who")) or en_key(rest, action=True))
    raw = c.raw
    first = c.first
    m = lx.EN_FIRST_PERSON_FRAME.match(core, first)
    if m and _words(core[m.end():]) and experience.read(core, "en") is None:
        # "I saw that the build failed" frames what follows; "I saw the Northern Lights
        # twice" is an experience of the speaker's, read below
        core, raw = core[m.end():], raw[m.end():]
        first = first_word(core)
    memory = _MEMORY_FRAME.match(core, first)
    if memory and _words(core[memory.end():]):
        core, raw = core[memory.end():], raw[memory.end():]
        first = first_word(core)
        if _fact(core, c, first) is None:  # "I'll never forget the day we shipped v1"
            subject = en_key(core)
            return Verdict("fact", subject) if subject else None
    m = lx.EN_CALL_ME.match(raw, first)
    if m:
        return Verdict("preference", "name")
    if _SELF_NAME.match(raw) and not _FIRST_PERSON_SKIP.match(core, first):
        return Verdict("fact", "name")
    m = lx.EN_TIMEZONE.match(core, first)
    if m and _words(core[m.end():]):
        return Verdict("fact", "timezone", lasting=True)
    m = lx.EN_DIET.match(core, first)
    if m:
        trait = m.group("trait")
        to = re.match(r"(?:allergic|intolerant)\sto\s", trait, re.I)
        subject = _allergy_key(en_key(trait[to.end():]) or "") if to else en_key(trait)
        return Verdict("fact", subject, lasting=True)
    m = lx.EN_ALLERGY_NOUN.match(core, first)
    if m:  # "I have a severe peanut allergy.": "I'm allergic to peanuts."
        return Verdict("fact", _allergy_key(en_key(m.group("what")) or ""), lasting=True)
    m = lx.EN_DIET_NAMED.match(core)
    if m:  # "Actually, pescatarian is more accurate.": the speaker's diet
        return Verdict("fact", (m.group("before") or m.group("after")).lower(), lasting=True)
    lived = experience.read(core, "en") or experience.chore(core)
    if lived is not None:
        # "I've never been to Japan", "My son has never flown before": an experience,
        # keyed by what was done and to what; the denial sets ``negated``
        return Verdict("fact", lived.subject, lived.negated)
    m = lx.EN_PREFERENCE.match(core, first) or lx.EN_PREFERENCE_ANY.search(core, c.tokens)
    if m:
        neg = bool(lx.EN_PREFERENCE_NEG.search(m.group()))
        fav = _FAVOURITE.match(core, m.start())
        rest = fav.group("n") if fav else _PREF_LEAD.sub("", raw[m.end():].strip())
        subject = en_key(rest, action=True) if not fav else en_key(rest)
        if subject is None and m.start() > 0:
            subject = en_key(core[: m.start()])
        return Verdict("preference", subject, neg)
    if _CONTINUATION.match(core, first):
        return None
    if _NO_NEED.match(core, first) and not lx.EN_NEG_IMPERATIVE.match(core, first):
        return None  # "No need to worry about it", "No need to be so formal": no order
    if lx.EN_CERTAINTY.match(c.raw):
        return None  # "I'm 100 percent sure.": how sure, no fact
    if lx.EN_DECISION_JUDGED.match(core):
        return None  # "The decision was hard.": how a choice felt, no choice
    rule = _rule(core, c, first)
    dec = lx.EN_DECISION.match(core, first)
    if dec is None:
        dec = lx.EN_DECISION_ANY.search(core, c.tokens)
        if dec is not None and _UNDECIDED.search(core, 0, dec.start()):
            dec = None  # "we haven't decided to …", "nobody decided we …": no choice made
        elif dec is not None and not _ours(c.raw[:dec.start()], core[dec.end():]):
            dec = None  # "The court decided we owed the fee": a ruling, a fact at most
    if rule and (dec is None or rule[0] <= dec.start()):
        _, neg, subject, is_order = rule
        if is_order and not neg and lx.EN_SOFTENER.search(c.raw, c.tokens):
            return Verdict("preference", subject)
        return Verdict("constraint", _with_port(subject, c), neg)
    if dec:
        neg = bool(_DECISION_NEGATION.search(dec.group()))
        rest = _THAT.sub("", core[dec.end():].lstrip(), count=1)
        against = _DECIDED_NOT.match(rest)
        if against:
            # "decided not to use Kafka", "decided against (using) Kafka", "decided
            # that we won't use Kafka": a choice about Kafka, negated
            neg, rest = True, rest[against.end():]
        inner = lx.EN_DECISION.match(rest)  # "decided (that) we'll host X": the choice is X
        return Verdict("decision", _target_or_object(rest[inner.end():] if inner else rest), neg)
    habit = lx.EN_HABIT.match(core, first) or _choosing_habit(core)
    if habit and not c.quantities:
        return Verdict("preference", en_key(core[habit.end():], action=True))
    imperative = lx.EN_IMPERATIVE.match(core, first)
    if imperative and lx.EN_SOFTENER.search(c.raw, c.tokens):
        return Verdict("preference", en_key(core[imperative.start("verb"):], action=True))
    if lx.EN_REQUEST.match(core, first) or _FIRST_PERSON_SKIP.match(core, first):
        return None
    if imperative and _CONVENTION.match(core, imperative.start("verb")):
        # "Use metric units.": kept as an order that does not say it stands (the block
        # leaves it out, standing.one_off) until the user says so ("…, remember that")
        return Verdict("constraint", en_key(core[imperative.end("verb"):]))
    if imperative and _copula_free(c, core[imperative.end("verb"):]):
        return None
    fact = _fact(core, c, first)
    if fact is not None:
        return Verdict("fact", _with_port(fact.subject, c))
    return _fragment(core, c)


_CONVENTION = re.compile(
    r"use\s+(?![^.!?]*\b(?:a|an|the|this|that|these|those|it|them|one|some|here|there"
    r"|instead|now|again|then|for|in|on|to|with)\b)[\w-]+(?:\s+[\w-]+){0,2}\s*[.!]*$",
    re.I)
"""A bare order to use a kind of thing, its noun without an article ("Use metric units",
"Use British spelling", "Use tabs"): a convention the user may mean to keep, unlike an
order on the material at hand ("Use a dict here", "Use the cache", "Use it")."""


def is_convention(text: str) -> bool:
    """Whether ``text`` (one sentence) is such a bare order to use a kind of thing
    (:data:`_CONVENTION`): "Use American spelling." after a withdrawal says what the user
    wants instead."""
    return _CONVENTION.match(text.strip()) is not None


def _fragment(core: str, c: Clause) -> Verdict | None:
    """A verbless note with a number: "max 500 MB" is a bound (constraint); "port 8080"
    and "timeout: 30s" are settings (facts keyed by the words before the number)."""
    if not c.quantities or len(core.split()) > _FRAGMENT_WORDS:
        return None
    first = c.quantities[0]
    if loose(c.scan, first, c.start, c.end, c.lang) and not _BOUND.match(core):
        return None  # "hello 429", "ping 42": a number bound to nothing sets nothing
    head = c.raw[: max(0, first.start - c.body_start)]
    if first.kind in ("port", "version"):
        head = c.raw[: max(0, first.end - len(first.value_text) - c.body_start)]
    if _BOUND.match(core):
        return Verdict("constraint", en_key(_BOUND.sub("", head)))
    subject = en_key(head.rstrip(" :=-"))
    return Verdict("fact", _with_port(subject, c)) if subject else None


def question_subject(c: Clause) -> str | None:
    """Key of what an English question asks about ("Is the rate limit per user?"): the
    noun phrase after the question word and auxiliary, up to its verb."""
    asked = _QUESTION_LEAD.sub("", c.core.strip())
    verb = _first_verb(asked, c.tokens)
    if verb is None:
        return en_key(asked)
    before, after = en_key(asked[: verb.start()]), en_key(asked[verb.end():])
    if before and after and verb.group().lower() in _COPULAS and _WH.match(c.core):
        return " ".join((after + " " + before).split()[-4:])  # "What time zone is the client in?"
    return before or en_key(asked)


def is_request(c: Clause) -> bool:
    """'Can you…?', 'Could you…?': asks the agent to act, not an open question."""
    return bool(lx.EN_REQUEST.match(c.core, c.first))


def is_hypothetical(c: Clause) -> bool:
    """'If we used X, would…?' — neither a fact nor an open question worth keeping."""
    if not lx.EN_HYPOTHETICAL.match(c.raw):
        return False
    return c.question or bool(lx.EN_HYPOTHETICAL_MODAL.search(c.raw, c.tokens))


def proposal(c: Clause) -> Verdict | None:
    """An assistant suggestion ("I suggest we use Redis for the session cache")."""
    m = lx.EN_PROPOSAL.search(c.core, c.tokens)
    if m is None:
        return None
    rest = _PROPOSAL_LEAD.sub("", c.core[m.end():].strip())
    return Verdict("proposal", _target_or_object(rest))
