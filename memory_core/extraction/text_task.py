"""Requests that hand text over for a task on it: "Translate to French: …".

A user who asks for a translation, a proofread or a rewrite pastes text that is not
said to the agent about the user ("Translate to French: I have two children and live in
Rome."); read as the user's words it became facts and rules in every later block
(docs/evaluation/memory_replays.md, row 216). :mod:`.material` treats such a request
before its colon as a lead of material, so the text after it yields no item; the
request itself is the user's, a one-off order. "Fix the bug: the port is 8080." names
no text (a bug), so it is no such request.
"""

from __future__ import annotations

import re

TEXT_EN = (r"(?:this|these|that|it|the\s+following|(?:my|the|this|that)\s+(?:\w+\s+){0,2}?"
           r"(?:text|sentences?|paragraphs?|e-?mails?|messages?|letters?|bio|essay|post"
           r"|reply|answer|wording|draft|note|caption|intro|summary|cover\s+letter|english"
           r"|german|french|spanish|writing|grammar|spelling|typos?|punctuation))")
TASK_EN = re.compile(
    r"(?:^|(?<=[.!?])\s+)\W*(?:(?:please|pls|can\s+you|could\s+you|would\s+you|help\s+me"
    r"|i\s+need\s+you\s+to|kindly)\s+)*"
    r"(?:(?:translate|proof-?read|paraphrase|rephrase|reword|rewrite|polish|summari[sz]e"
    r"|shorten|simplify|tl;?dr)\b[^:\n]{0,60}"
    r"|(?:fix|correct|check|improve|edit|tidy\s+up|clean\s+up|review)\s+" + TEXT_EN
    + r"\b[^:\n]{0,40}"
    r"|make\s+(?:this|it|that|the\s+following)\s+(?:sound\s+)?[^:\n]{0,40})$", re.I)
"""A task the user sets on the text after its colon ("Translate to French:", "Proofread
this:", "Fix the grammar:", "Make this sound more formal:"), at the start of a line or a
sentence; "fix", "check" and the like only with the text they work on named ("this",
"the grammar", "my email")."""
TASK_CJK = re.compile(
    r"(?:请|請|帮我|幫我|麻烦|麻煩)?(?:把(?:这|這|下面|以下)[^：:\n]{0,6})?"
    r"(?:翻译|翻譯|润色|潤色|改写|改寫|校对|校對|总结|總結|概括|纠正语法|改一下语法|修改语法)"
    r"[^：:\n。！？]{0,12}$"
    r"|(?:英訳|和訳|翻訳|添削|校正|要約|リライト)[^：:\n。！？]{0,12}$")
"""The same in Chinese and Japanese: 翻译成英文：…, 帮我润色一下：…, 英訳してください：…"""
TASK_EN_NEEDLES = ("transl", "proof", "phrase", "reword", "rewrite", "polish", "summar",
                   "shorten", "simplif", "tl", "fix", "correct", "check", "improve", "edit",
                   "tidy", "clean", "review", "make")
"""Substrings (lower-case) every match of :data:`TASK_EN` holds (``cue.lacks``)."""
