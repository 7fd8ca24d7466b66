"""An age that grows: "My son is 7." then "My son turned 8." is the son a year older,
not a value for the user to choose between (docs/evaluation/memory_replays.md, class 86).

:func:`grown_age` tells the writer that a later statement of the same subject's age
gives a greater one, which supersedes the older age as a correction does. An age is
read as :func:`memory_core.extraction.age.stated_age` reads it, keyed by
:func:`memory_core.extraction.age.age_key` ("I'm 35." and "I turned 36." share
``age``). A smaller later age is left to the writer's conflict ("ask the user"):
people do not grow younger, so one of the two is wrong; a correction ("Actually my son
is 6") still replaces.
"""

from __future__ import annotations

from typing import Any

from memory_core.extraction.age import stated_age


def grown_age(ex: Any, row: Any) -> bool:
    """Whether ``ex`` (a new statement) gives its subject a greater age than ``row`` (a
    stored one of the same subject, checked by the caller): ``row`` is outgrown. An
    age is read as :func:`memory_core.extraction.age.stated_age` reads it."""
    new = stated_age(ex.text, ex.subject, ex.value, ex.unit)
    old = stated_age(row["text"], row["subject"], row["value"], row["unit"])
    return new is not None and old is not None and new > old
