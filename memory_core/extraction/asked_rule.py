"""Standing rules asked as questions ("Could you always answer in bullet points?").

A request phrased as a question ("Can you …?", 能不能…？, …てもらえますか) asks the agent
to act now and is no memory item. One that says it is meant for every later answer —
"always", "never", "from now on", 以后/今后/每次, これから/今後/毎回 — is a rule the user
sets, as "Please always answer in bullet points from now on." is:
:func:`standing` tells the extraction to file it as a ``constraint`` (the question, verbatim,
is its text), and :func:`prohibits` whether it forbids ("Could you never use emojis?",
以后能不能别用表情？).
"""

from __future__ import annotations

import re
from typing import Final

_EN_STANDING: Final = re.compile(
    r"^(?:(?:please|pls|kindly|hey|ok(?:ay)?|so|and|also|now)[,\s]+)*(?:can|could|would|will)"
    r"\s+you\s+(?:please\s+|just\s+)?(?:always|never)\b", re.I)
""""Could you always/never …" (the adverb right after the request: "Can you check if
the tests always pass?" asks once). A phrase of lasting time ("… from now on?") is read
first, by :func:`memory_core.extraction.modality.lasting_request`, which also tells the
order's own phrase from one in a clause it asks about ("Can you check whether we deploy
every time CI passes?")."""
_ZH_STANDING: Final = re.compile(r"以后|今后|往后|从现在(?:开始|起)|每次|始终|总是|永远|一律")
_ZH_LEAD_REQUEST: Final = re.compile(
    r"^(?:以后|今后|往后|从现在(?:开始|起))[，,]?(?:请)?(?:你|您)?(?:能不能|能否|可不可以|可以|请)")
"""以后能不能都用中文回答？: the time first, then the request."""
_JA_STANDING: Final = re.compile(r"これから|今後|以後|毎回|いつも|常に|ずっと")
_EN_PROHIBIT: Final = re.compile(r"\b(?:never|not|stop|no\s+longer|avoid)\b|n't\b", re.I)
_ZH_PROHIBIT: Final = re.compile(r"别|不要|不再|不用|避免")
_JA_PROHIBIT: Final = re.compile(r"ないで|ないように|やめて|避けて")


def standing(text: str, lang: str, request: bool) -> bool:
    """Whether a question (``text``, its sentence; ``request``: the language's rules
    read it as a request) asks for something that holds for every later answer."""
    if lang == "en":
        return request and _EN_STANDING.search(text) is not None
    if lang == "zh":
        return (request and _ZH_STANDING.search(text) is not None) or bool(
            _ZH_LEAD_REQUEST.match(text))
    return request and _JA_STANDING.search(text) is not None


def prohibits(text: str, lang: str) -> bool:
    """Whether such a request forbids rather than asks for something."""
    pattern = _EN_PROHIBIT if lang == "en" else _ZH_PROHIBIT if lang == "zh" else _JA_PROHIBIT
    return pattern.search(text) is not None
