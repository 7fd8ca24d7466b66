"""A statement that names, after its own value, the value it replaces ("My name is Sarah,
not Chad.", "The meeting is on Thursday, not Tuesday.", "My editor is Neovim, not Vim.").

Said after a stored statement of the same subject whose value it names, the new one
is no rival to weigh (a conflict to ask about) but the user's correction of it: the
old value is denied in so many words. :func:`names_old_value` reads the closing "not
Y" of the new text and finds Y among the stored text's words; the writer then
supersedes the stored item. A "not" inside the statement ("I'm not sure it's Tuesday")
or a denied value the stored text does not hold replaces nothing.
"""

from __future__ import annotations

import re
from typing import Final

_EN_DENIED: Final = re.compile(
    r"(?:,|\s-|\s\u2014)\s*(?:and\s+|but\s+)?not\s+(?:the\s+|a\s+|an\s+|on\s+|in\s+|at\s+)?"
    r"(?P<v>[^,;:.!?\s][^,;:.!?]{0,38}?)\s*[.!]*$", re.I)
"""A closing ", not Y" (also " - not Y", " — not Y", ", and not Y")."""
_ZH_DENIED: Final = re.compile(r"[，,]\s*(?:而)?不是(?P<v>[^，,。！!？?]{1,20})[。！!]*$")
"""A closing "，不是Y" (我叫Sarah，不是Chad)."""


def names_old_value(new_text: str, old_text: str) -> bool:
    """Whether ``new_text`` ends by denying a value ``old_text`` states (module doc)."""
    m = _EN_DENIED.search(new_text) or _ZH_DENIED.search(new_text)
    if m is None:
        return False
    value = m.group("v").strip()
    if value.isascii():
        said = re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", old_text, re.I)
        again = re.search(rf"(?<![\w-]){re.escape(value)}(?![\w-])", new_text[:m.start()], re.I)
    else:
        said = re.search(re.escape(value), old_text)
        again = re.search(re.escape(value), new_text[:m.start()])
    return said is not None and again is None
