"""Sentence segmentation for English, Chinese and Japanese, over the prepared scan.

Newlines always end a sentence (chat messages are written line by line; lists and
``TODO:`` lines depend on it), except a soft-wrapped line that continues in lowercase
(not one led by a label or a speaker: "raj: I think …", "me: agreed, …").
Within a line, 。！？； and their ASCII forms end a sentence, and so does a run-on
boundary (``_RUN_ON``: "…base image Can you…", "…还没批下来 备份脚本…"). An ASCII
``.``/``!``/``?`` ends one only when whitespace, a CJK character or the line end
follows, so "3.5",
"v1.2.3", "config.py" and URLs stay whole; "e.g." and "i.e." never end one; "etc.",
"a.m." end one only before a capital; an initialism ("U.S.", "Ph.D.") and an ellipsis
do not end one before a lowercase word or digit, nor an ellipsis after a word a clause
cannot end on ("I live in... Berlin."). A semicolon followed by a space ends a clause
("We use Postgres; the port is 5433" holds two statements). Material the user presents
from a source (``material``: "Here is the page I found: '…'") is a sentence of its
own, so the user's words around it never quote it. List markers ("- ", "1. ",
"* [ ] ") are stripped and remembered, because a list under a "TODO:" header is a list
of TODOs.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from memory_core.extraction.material import MATERIAL
from memory_core.extraction.prepare import MASK, detect_lang
from memory_core.extraction.transcript import STAMP


@dataclass(frozen=True, slots=True)
class Sentence:
    """``[start, end)`` in the message (trimmed); ``line`` counts source lines from 0."""

    start: int
    end: int
    line: int
    list_item: bool
    number: str | None = None
    """The marker's number of a numbered list item ("2" for "2. bring …"), else None."""


_LIST_MARKER = re.compile(
    r"[ \t]*(?:[-*+•・‣◦]|\d{1,3}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?|[ \t]*#{1,6}[ \t]+")
_NUMBERED = re.compile(r"[ \t]*(\d{1,3})[.)]")
_TERMINATOR = re.compile(r"[.!?;。！？；．]+")
_FULL_STOPS = set("。！？；．")
_CLOSERS = set("\"')]}”’」』）】》")
_NEVER_SPLIT = {"e.g", "i.e", "eg", "ie", "vs", "cf", "approx", "incl", "esp", "viz", "mr", "mrs",
                "ms", "dr", "prof", "st", "jr", "sr", "fig", "al", "dept", "est", "ca", "resp"}
_SPLIT_BEFORE_CAPITAL = {"etc", "a.m", "p.m", "inc", "ltd", "co"}
_OPEN_BEFORE_ELLIPSIS = {
    "is", "are", "was", "were", "am", "be", "in", "at", "to", "on", "of", "for", "from",
    "with", "by", "the", "a", "an", "my", "our", "your", "his", "her", "their", "and",
    "or", "but", "like", "hmm", "hm", "um", "umm", "uh", "uhh", "er", "erm", "well"}
"""Words an ellipsis cannot close a clause on: a pause inside the clause ("My favourite
band is... hmm... Radiohead.") is no sentence end."""
_INITIALISM = re.compile(r"(?:[a-z]{1,2}\.)+[a-z]{1,2}")
"""An initialism, lower-cased, its last dot off ("u.s", "ph.d", "b.sc"); not a file or
a domain name ("node.js", "example.com"), after which a lower-case word starts a new
sentence ("i use node.js. my team uses go.")."""
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uff66-\uff9f]")
_CJK_CLASS = "\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff\uff66-\uff9f"
_RUN_ON = re.compile(
    r"(?<=[a-z0-9)])[ \t]+((?:Can|Could|Would|Should|Will|Is|Are|Do|Does|Did|What|What's"
    r"|Why|How|When|Where|Which|Who|Please|Let's|The|This|That|These|Those|It|It's|We|We're"
    r"|We'll|You|They|There|If|Before|After|Also|Next)\s(?=[a-z]))"
    rf"|(?<=[{_CJK_CLASS}])[ \t]+([{_CJK_CLASS}])"
)
"""A sentence that starts without the previous one having ended: a capitalised function
word between a lowercase word and a lowercase one ("…the new base image Can you
refactor…"; not "I" or its contractions "I'm", "I'll", "I've", "I'd", capitalised
anywhere: "I prefer tabs because I'm used to them" is one sentence; nor a title: "use
The Guardian API"), or a
space between two CJK characters (neither Chinese nor Japanese puts spaces between
words)."""


def _word_before(scan: str, i: int, floor: int) -> str:
    k = i
    while k > floor and (scan[k - 1].isalpha() or scan[k - 1] == ".") and i - k < 12:
        k -= 1
    return scan[k:i].lower()


_EVER_AFTER = re.compile(r"[ \t]+(?:not[ \t]+)?(?:ever|never|always)[ \t]*[.!]+[ \t]*(?=$|\S)",
                         re.I)
"""A sentence that is only "Ever." / "Not ever." / "Never." / "Always." after an order:
it says the order before it lasts ("Don't add emojis to commit messages. Ever."), and
says nothing alone."""


def _ends_sentence(text: str, scan: str, a: int, b: int, line_end: int, floor: int) -> bool:
    """Whether the terminator run ``scan[a:b]`` ends a sentence (see module doc)."""
    if any(text[i] in _FULL_STOPS for i in range(a, b)):
        return True
    j = b
    while j < line_end and scan[j] in _CLOSERS:
        j += 1
    if j < line_end and not (scan[j].isspace() or _CJK.match(scan, j)):
        return False
    if "?" not in scan[a:b] and _EVER_AFTER.match(scan, j, line_end):
        return False  # "Don't … . Ever.": one sentence, the order and how long it holds
    if scan[a:b] == ";":
        return True
    k = j
    while k < line_end and scan[k].isspace():
        k += 1
    follows = scan[k] if k < line_end else ""
    if scan[a:b] == "..." and (follows.islower() or _word_before(scan, a, floor)
                               in _OPEN_BEFORE_ELLIPSIS):
        return False  # "I live in... Berlin.", "I moved to Berlin... and I love it."
    if scan[a] == "." and b - a == 1:
        word = _word_before(scan, a, floor)
        if _INITIALISM.fullmatch(word.strip(".")) and (follows.islower() or follows.isdigit()):
            return False  # "I moved to the U.S. in 2019.", "I have a Ph.D. in chemistry."
        if word in _NEVER_SPLIT or (len(word) == 1 and word.isalpha() and scan[a - 1].isupper()):
            return False
        if word in _SPLIT_BEFORE_CAPITAL:
            k = j
            while k < line_end and scan[k].isspace():
                k += 1
            return k >= line_end or scan[k].isupper()
    return True


def _trim(text: str, scan: str, a: int, b: int) -> tuple[int, int]:
    while a < b and (scan[a].isspace() or scan[a] == MASK and not text[a].strip()):
        a += 1
    while b > a and scan[b - 1].isspace():
        b -= 1
    return a, b


def segment(text: str, scan: str) -> list[Sentence]:
    """Split a message into sentences; spans index both ``text`` and ``scan``.

    Sentences with no letters or digits outside masked text (a fenced block, a lone
    quote, a row of dashes) are dropped here.
    """
    out: list[Sentence] = []
    pos = 0
    line_no = 0
    n = len(scan)
    prev_open: Sentence | None = None  # last sentence of the previous line, if unterminated
    material = sorted({at for m in _MATERIAL_RUN.finditer(scan) for at in m.span()}
                      ) if MATERIAL in scan else []
    while pos <= n:
        nl = scan.find("\n", pos)
        line_end = n if nl < 0 else nl
        marker = _LIST_MARKER.match(scan, pos, line_end)
        is_item = marker is not None and scan[marker.start():marker.end()].strip()[:1] != "#"
        number = (_NUMBERED.match(scan, marker.start(), marker.end())
                  if is_item and marker is not None else None)
        start = marker.end() if marker else pos
        cursor = start
        pieces: list[tuple[int, int]] = []
        cuts = [m.end() for m in _TERMINATOR.finditer(scan, start, line_end)
                if _ends_sentence(text, scan, m.start(), m.end(), line_end, start)]
        cuts += [m.start(m.lastindex or 0) for m in _RUN_ON.finditer(scan, start, line_end)]
        cuts += [at for at in material if start < at < line_end]
        for cut in sorted(cuts):
            if cut > cursor:
                pieces.append((cursor, cut))
                cursor = cut
        if cursor < line_end:
            pieces.append((cursor, line_end))
        first = True
        for a, b in pieces:
            if material and scan[a - 1:a] == MATERIAL:
                while a < b and scan[a] in _AFTER_MATERIAL:
                    a += 1  # "'…', but that target no longer exists" reads from "but"
            a, b = _trim(text, scan, a, b)
            if not _has_content(scan, a, b):
                first = False
                continue
            continues = scan[a].islower() and scan[a].isascii() \
                and _LABEL_LEAD.match(text, pos, line_end) is None
            if first and prev_open is not None and not marker and continues:
                out[-1] = Sentence(prev_open.start, b, prev_open.line, prev_open.list_item,
                                   prev_open.number)
            else:
                out.append(Sentence(a, b, line_no, is_item,
                                    number.group(1) if number else None))
            first = False
        last = out[-1] if out and out[-1].line == line_no else None
        prev_open = last if last is not None and scan[last.end - 1] not in ".!?;。:：" \
            and MATERIAL not in scan[last.end:line_end] else None
        if nl < 0:
            break
        pos = nl + 1
        line_no += 1
    return out


_CONTENT = re.compile(r"[^\W_]")
_LABEL_LEAD = re.compile(rf"[ \t]*(?:{STAMP})?[A-Za-z][\w.-]{{0,31}}[ \t]*:[ \t]+")
"""A line led by a label or a speaker ("raj: ", "me: ", "[10:32] dana: ", masked in the
scan or not): it starts a sentence of its own, never a soft-wrapped continuation of the
line above."""
_MATERIAL_RUN = re.compile(MATERIAL + "+")
_AFTER_MATERIAL = frozenset(" \t,，、;；:：" + "\"'”’」』»)")


def _has_content(scan: str, a: int, b: int) -> bool:
    return b > a and _CONTENT.search(scan, a, b) is not None


_SCRIPT_JOINT = re.compile(r"(?<!\s)(?:\s*[,，;；]\s*|\s+[-–—]\s+)")
"""A clause joint, taken from the first blank before it: a joint never starts inside a
run of blanks, so a long run with no comma after it is read once (linear time)."""
_EN_CONJUNCTION = re.compile(r"(?:but|and|or|so|though|although|yet|while|whereas)\s+", re.I)
_CJK_CONJUNCTION = re.compile(r"但是|可是|不过|而且|并且|所以|但(?!愿)|でも|だけど|けど|しかし|そして")
_LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'’]*")
_MIN_CJK = 3  # characters: a name ("北京") is no clause of its own
_MIN_LATIN = 3  # words, one of them lowercase: "GitHub Actions" is a name, no clause


def _script(scan: str, a: int, b: int) -> str | None:
    """``"en"`` for an English clause holding no CJK character, ``"cjk"`` for a clause
    carried by Chinese or Japanese, None for a name, a fragment or a mixed clause."""
    piece = scan[a:b]
    cjk = len(_CJK.findall(piece))
    if cjk:
        return "cjk" if cjk >= _MIN_CJK and detect_lang(piece) != "en" else None
    words = _LATIN_WORD.findall(piece)
    return "en" if len(words) >= _MIN_LATIN and any(w.islower() for w in words) else None


_PAIRS = {"(": ")", "[": "]", "{": "}", "（": "）", "【": "】", "「": "」", "『": "』",
          "《": "》", "“": "”", "`": "`", '"': '"'}


def _enclosed(scan: str, a: int, b: int) -> list[tuple[int, int]]:
    """The spans of ``scan[a:b]`` inside brackets or quotes (outermost, closed ones):
    a comma in ``f(a, b)`` or in a quoted ``"yes, and I love it"`` is no clause joint."""
    spans: list[tuple[int, int]] = []
    stack: list[tuple[int, str]] = []
    for i in range(a, b):
        ch = scan[i]
        if stack and ch == stack[-1][1]:
            start, _ = stack.pop()
            if not stack:
                spans.append((start, i))
        elif ch in _PAIRS:
            stack.append((i, _PAIRS[ch]))
    return spans


def _tight(scan: str, s: int, e: int, a: int, b: int) -> bool:
    """Whether the joint ``scan[s:e]`` is an ASCII comma or semicolon between two
    characters of one token, neither a space nor Chinese or Japanese (a URL's or a
    list's ``a,b,c``), not a clause joint."""
    if e - s != 1 or scan[s] not in ",;" or s == a or e == b:
        return False
    before, after = scan[s - 1], scan[e]
    return not (before.isspace() or after.isspace() or _CJK.match(before)
                or _CJK.match(after))


def script_clauses(scan: str, a: int, b: int) -> list[tuple[int, int]]:
    """Split the sentence ``scan[a:b]`` where it turns from English to Chinese or
    Japanese at a clause joint ("我住在上海, but I work remotely in Berlin."), so that
    each clause is read by its own language's rules; ``[(a, b)]`` when it does not.

    Joints are a comma, a semicolon or a spaced dash; a joint and the conjunction that
    opens the next clause ("but", 但是, でも) belong to neither clause. A clause that is
    only a name or mixes both scripts ("I'm learning 中文") joins its neighbour, so a
    sentence framed by one language keeps the other's names in it.
    """
    if not _CJK.search(scan, a, b) or not _LATIN_WORD.search(scan, a, b):
        return [(a, b)]
    joints = [(m.start(), m.end()) for m in _SCRIPT_JOINT.finditer(scan, a, b)]
    if not joints:
        return [(a, b)]
    enclosed = _enclosed(scan, a, b)
    joints = [(s, e) for s, e in joints
              if not _tight(scan, s, e, a, b) and not any(o < s < c for o, c in enclosed)]
    if not joints:
        return [(a, b)]
    bounds = [a, *[at for joint in joints for at in joint], b]
    pieces = [(bounds[i], bounds[i + 1]) for i in range(0, len(bounds), 2)]
    labels = [_script(scan, s, e) for s, e in pieces]
    known = [label for label in labels if label is not None]
    if len(set(known)) < 2:
        return [(a, b)]
    # a piece with no script of its own joins the one before it (the first, the next)
    label = known[0]
    groups: list[list[int]] = []  # [start, end] per run of one script
    for (s, e), own in zip(pieces, labels):
        if groups and (own is None or own == label):
            groups[-1][1] = e
        else:
            groups.append([s, e])
        label = own or label
    out: list[tuple[int, int]] = []
    for s, e in groups:
        lead = (_CJK_CONJUNCTION if _CJK.match(scan, s) else _EN_CONJUNCTION).match(scan, s, e)
        s = lead.end() if lead and _has_content(scan, lead.end(), e) else s
        out.append((s, e))
    return out
