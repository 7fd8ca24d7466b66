"""``extract`` and the readings of a stored number (``readings.reports_number``,
``readings.observes``: the writer's and the block's) stay linear on pathological pastes:
a run of one character, a hex dump, a row of figures, a table
(docs/evaluation/regex_worst.py times every regex alone).

Each input is 100 KB, set inside a sentence that mixes English and Chinese and carries
figures, so that every stage (clause joints, quantities, readings) reads it. A
quadratic regex takes tens of seconds here; the bound is generous for a shared CPU.
"""

from __future__ import annotations

import random
import time

import pytest

from memory_core.extraction import extract
from memory_core.items import readings

SIZE = 100_000  # characters
BOUND = 3.0  # CPU seconds for one extract() call

_LEAD = "我住在上海, but I work remotely in Berlin and the API timeout is 30 s "
_TAIL = " 3 weeks later, 2.4 m wide, 5 years ago, 然后我们用了3天."


def _random(alphabet: str, n: int) -> str:
    rng = random.Random(n)
    return "".join(rng.choice(alphabet) for _ in range(n))


def _table(n: int) -> str:
    rows = "".join(f"| {i} | item{i} | {i * 7 % 1000} KB | ok |\n" for i in range(n // 20))
    return ("| id | name | size | note |\n|---|---|---|---|\n" + rows)[:n]


def _repeat(unit: str) -> str:
    return (unit * (SIZE // len(unit) + 1))[:SIZE]


INPUTS = {
    "digits": _repeat("7"),
    "spaces": _repeat(" "),
    "tabs": _repeat("\t"),
    "newlines": _repeat("\n"),
    "letters": _repeat("a"),
    "word": _repeat("internationalization"),
    "punct": _repeat(".,;:!?-_/"),
    "a_sp": _repeat("a "),
    "1_sp": _repeat("1 "),
    "1_comma": _repeat("1,"),
    "1_dot": _repeat("1."),
    "cjk": _repeat("我的数据一二三"),
    "base64": _random("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", SIZE),
    "hex": _random("0123456789abcdef", SIZE),
    "table": _table(SIZE),
    "brackets": "(" * (SIZE // 4) + "[{" * (SIZE // 8) + "}]" * (SIZE // 8) + ")" * (SIZE // 4),
}


@pytest.mark.parametrize("kind", sorted(INPUTS))
def test_extract_is_linear_on_a_pathological_paste(kind: str) -> None:
    text = _LEAD + INPUTS[kind] + _TAIL
    start = time.process_time()
    extract(text)
    spent = time.process_time() - start
    assert spent < BOUND, f"{kind}: {spent:.1f} s of CPU for {len(text)} characters"


@pytest.mark.parametrize("kind", sorted(INPUTS))
def test_readings_are_linear_on_a_pathological_paste(kind: str) -> None:
    text = _LEAD + INPUTS[kind] + _TAIL
    start = time.process_time()
    readings.reports_number(text)
    readings.observes(text)
    spent = time.process_time() - start
    assert spent < BOUND, f"{kind}: {spent:.1f} s of CPU for {len(text)} characters"


def test_the_sentence_around_a_paste_is_still_read() -> None:
    """The lead is read as usual, so a fast run is not one that skipped the text."""
    items = extract(_LEAD + INPUTS["spaces"][:2_000] + ".")
    assert any(i.value == 30.0 and i.unit == "s" for i in items), items
