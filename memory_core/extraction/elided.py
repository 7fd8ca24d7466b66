"""A coordinated verb phrase whose subject is left out: the first clause's speaker says it.

"I don't use Vim and use Emacs instead", "We don't use Jira but use Linear", "I work at
Google and live in Zurich", "My kids love the beach and always make us smile": after
"and"/"but"/"or" (or a comma: "I live in Porto, work as a nurse and have two cats"), a
verb with no subject of its own continues the statement of the clause before it, and is
stored as an item of its own, so an update of one ("I moved to Lisbon") leaves the other
standing. Read alone, "use Emacs instead" is an order to the assistant and "live in
Zurich" nothing; read with the carried subject ("I … use Emacs instead") it is the same
speaker's statement. An order the user gives after "and" keeps its own lead ("I use Emacs
and please reply briefly": "please" opens no verb phrase here).

Only a clause that opens on its subject carries it ("I", "we", "they", "he", "she", or
"my"/"our"/"his"/"her"/"their" and one word), and only when nothing between the subject
and the joint makes the second verb depend on something else: a modal or an infinitive
("I need to fix the bug and deploy it": "deploy" is what is needed, not done), a
condition or a cause, a verb that takes a clause ("I think we use Postgres and deploy
on Fridays", "I asked whether they use Docker and use Podman": the verb phrase is the
inner clause's). A negative order after the joint ("… and don't …", "… and never
…") is left to the rules: it reads as an order as often as a statement.

Pure: offsets into the prepared scan in, offsets out.
"""

from __future__ import annotations

import re

from memory_core.extraction import lexicon as lx
from memory_core.extraction.cue import alt

_VERBS = alt("|".join(lx.EN_STANDING_VERBS + lx.EN_ONE_OFF_VERBS + lx.EN_TASK_VERBS)
             + "|live|work|love|like|hate|enjoy|adore|own|have|study|teach|visit|play|cook"
             + "|drive|spend|speak|code|program")
"""A verb that would open an order (``lexicon.EN_IMPERATIVE``'s lists, without the
object verbs that are nouns as often) or state what the speaker does or likes."""
_ADVERB = r"(?:(?:always|usually|often|also|then|still|now|just|instead|sometimes|really|mostly" \
          r"|mainly|rather|actually|generally|normally|typically)\s+)?"
_AFTER_VERB = (r"(?=\s+(?:(?-i:[A-Z])|(?:the|a|an|my|our|your|their|his|her|its|it|them|us|me"
               r"|him|this|that|these|those|every|each|some|all|in|at|for|on|with|to|from|by|as"
               r"|instead|too|again|here|there|daily|weekly|everywhere|remotely|mostly"
               r"|\d+|two|three|four|five|six|several|many|no)\b)"
               r"|\s*[.!;,]?\s*$)")
"""What follows the verb: an object, a preposition or an adverb, or the clause's end
("and log files": "log" before a bare noun is a noun)."""
JOINT = re.compile(r"(?:(?:,|(?<!\s))\s+(?:and|but|or)|,)\s+(?=" + _ADVERB + r"(?:" + _VERBS + r")\b"
                   r"(?!\s+(?:it|them|this|that|these|those)\b)" + _AFTER_VERB + r")", re.I)
"""The joint before a verb phrase with no subject ("… and use Emacs instead", "I live in
Porto, work as a nurse and …"); not one whose object points back ("I use Emacs and love
it": one statement, about Emacs)."""
_BODY = re.compile(r"\s*" + _ADVERB + r"(?:" + _VERBS + r")\b(?!['’-])", re.I)
"""A clause (already split off at its joint) that opens on such a verb."""
_OPENER = re.compile(r"\s*(?:(?:(?:i|we|they|he|she)|(?:my|our|his|her|their)\s+[\w'-]+)"
                     r"(?=\s+(?!(?:and|or|is|are|was|were|['’]s)\b)[a-z])"
                     r"|(?:i(?=['’]m)|(?:we|they)(?=['’]re)|(?:he|she)(?=['’]s))"
                     r"(?=['’]\w+\s+[a-z]))", re.I)
"""The subject a clause opens on ("I", "We", "My kids"), before a word of its predicate;
a pronoun joined to its "be" is the pronoun alone ("I'm based in Porto and work as …":
"I … work as …")."""
_DEPENDENT = re.compile(
    r"\bto\s+(?:" + _VERBS + r"|be|get|see|learn|know)\b"
    r"|\b(?:can|could|will|would|should|must|might|may|shall|want|wants|need|needs|going"
    r"|gonna|if|when|whenever|because|since|unless|until|while|after|before|who|which|that"
    r"|whether|think|thinks|thought|believe|believes|guess|suppose|hope|hopes|feel|feels"
    r"|heard|said|says|told|tell|asked|asks|wonder|wondered|doubt|mean|means)\b"
    r"|['’](?:ll|d)\b|\bcan['’]?t\b|\bwon['’]t\b|\b(?:should|would|could)n['’]t\b", re.I)
"""A modal, an infinitive, a condition, a cause or a relative clause before the joint, or
a verb of thinking or saying that takes a clause of its own ("I think we use Postgres
and deploy on Fridays": who deploys is "we", and only maybe)."""
_LEAD = re.compile(r"[\s,]*(?:(?:and|but|or)\s+)?", re.I)


def joints(scan: str, a: int, b: int) -> list[tuple[int, int]]:
    """The joints in the sentence ``scan[a:b]`` before a verb phrase whose subject is
    the sentence's own (see module doc); ``[]`` when the sentence opens on none."""
    if _OPENER.match(scan, a, b) is None:
        return []
    out: list[tuple[int, int]] = []
    for m in JOINT.finditer(scan, a, b):
        if _DEPENDENT.search(scan, a, m.start()):
            break
        out.append((m.start(), m.end()))
    return out


def carried(scan: str, before: tuple[int, int], joint: int, body: int,
            end: int) -> tuple[int, int] | None:
    """The span of the subject that the clause ``scan[body:end]`` takes from the clause
    ``before`` (``(start, end)``, its joint from ``joint`` up to ``body``): when that
    clause opens on a subject, depends on nothing, and "and"/"but"/"or" (or a comma) leads a verb
    phrase with none of its own. None otherwise."""
    if _LEAD.fullmatch(scan, joint, body) is None or _BODY.match(scan, body, end) is None:
        return None
    opener = _OPENER.match(scan, before[0], before[1])
    if opener is None or _DEPENDENT.search(scan, before[0], joint):
        return None
    start = opener.start() + len(opener.group()) - len(opener.group().lstrip())
    return start, opener.end()
