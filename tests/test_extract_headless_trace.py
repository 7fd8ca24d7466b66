"""A Python trace pasted without its "Traceback (most recent call last):" head (issue
24, the standdev3 split): each frame's source line and the exception line are machine
text, not statements; the user's prose after it is still read. Sentences here are in
no labelled split."""

from __future__ import annotations

from memory_core.evaluation.extraction import stands
from memory_core.extraction import extract
from memory_core.extraction.prepare import machine_spans

TRACE = ('  File "jobs/sync.py", line 77, in run\n'
         '    total = int(row["count"])\n'
         "ValueError: invalid literal for int() with base 10: '12a'\n")


def test_the_source_line_and_the_exception_of_a_headless_trace_are_masked() -> None:
    text = TRACE + "the CSV has junk in a few rows, skip those for this import"
    masked = "".join(text[a:b] for a, b in machine_spans(text))
    assert "int(row" in masked and "ValueError" in masked
    assert "the CSV has junk" not in masked
    items = extract(text)
    assert not any("int(" in i.text or "ValueError" in i.text for i in items), items
    assert not any(stands(i) for i in items), items


def test_a_setting_after_a_headless_trace_still_stands() -> None:
    text = ('  File "api/views.py", line 30, in get\n    return cache[key]\nKeyError: 42\n'
            "The cache TTL is 300 seconds.")
    items = extract(text)
    assert [i.value for i in items if stands(i)] == [300.0], items
