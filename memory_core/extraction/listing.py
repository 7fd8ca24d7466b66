"""Source code and configuration pasted without a fence: a listing.

A Python function, a JS/TS, Go, Rust, Java or C block, a SQL query, a YAML, TOML, INI
or ``.env`` config, a Dockerfile, a shell script or a diff pasted into a message
reads, to the rules, like terse statements: ``timeout = 30`` is a fact, ``if retries
> 3:`` a bound, and two pastes of one setting a conflict that every later block
asks the user about. :func:`memory_core.extraction.prepare.machine_spans` masks the
lines found here as it masks a traceback, so prose around the paste is still read.

Lines are told by their shape and by the keywords that open lines of code, never by
a list of known snippets, in three grades:

* **code** — a line only code has: it ends in ``{``, ``;``, ``(``, ``[`` or a pipe,
  or is only closing brackets; a call (``range(retries)``) among few words; an
  operator of code (``==``, ``&&``, ``::``, ``:=``, ``+=``); a declaration, an
  import or a block header led by a keyword (``def``, ``class``, ``func``, ``fn``,
  ``const``, ``let``, ``import``, ``from … import``, ``for x in xs:``); an
  upper-case SQL or Dockerfile word before an operand (``GROUP BY u.id``, ``EXPOSE
  8000``); an assignment or a config key whose name is an identifier (``max_workers
  = 8``, ``apiVersion: apps/v1``, ``TIMEOUT=30``) or whose value is code (a string,
  a call, a path);
* **fits code** — a line a note could also be: ``port: 8080``, ``timeout = 30``, a
  ``[section]`` header, ``return None``, ``ORDER BY name``, a command with flags, a
  block opened by ``do``, a lone ``{``, a call or a path among mostly words ("now
  getUser() returns null");
* **neutral** — a blank line, a comment, a docstring or block comment opened by
  code, or an indented line with no shape of its own (a statement inside a block).

Anything else — a sentence, a line of plain words, a line holding CJK text outside
its strings and comments, a ``Key: a few words`` note ("Budget: 500 euros",
"TODO: add the PDF renderer.") — breaks a run. A run is a listing when it holds two
code lines, or one and two that fit, or three that fit with a nesting (an opener
followed by a deeper line) or a ``[section]``, or two that fit beside a comment line
after the first of them (``port = 9000`` / ``# I always use debug mode`` / ``debug =
true``: notes have no comment lines, a pasted file has; a ``#`` line above them alone may
be a markdown heading); it is masked from its first line that counts, or
comment, to its last. One line alone never is: ``Set retries = 3 in the config.`` or a
lone ``timeout = 30`` under a question is read as before. A diff is taken whole from
its header to its last hunk line. Each line is read a bounded number of times with
bounded patterns: linear in the message.
"""

from __future__ import annotations

import re

_MAX_LINE = 400
"""A longer line is prose (or minified code, which states nothing either way)."""

_STRING = re.compile(
    r'"(?:[^"\\\n]|\\.){0,400}"|(?<![A-Za-z0-9])\'(?:[^\'\\\n]|\\.){0,400}\'|`[^`\n]{0,400}`')
"""A string literal; its words are nobody's prose (an apostrophe after a letter opens none)."""
_TRAILING_COMMENT = re.compile(r"\s(?:#|//|--)\s.*$")
_COMMENT = re.compile(r"(?://|/\*|\*/|<!--|#+(?:\s|$)|--\s|;\s|%\s)")
"""A comment line (or a markdown heading): neutral, never the run's own evidence."""
_DIRECTIVE = re.compile(
    r"<\?php\b|#(?:!/|include\s*[<\"]|define\s|ifn?def\s|endif\b|pragma\s|import\s)")
_CJK = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\uac00-\ud7af]")
_PLAIN_WORD = re.compile(r"[A-Za-z][a-z]*(?:'[a-z]{1,3})?[,.;:!?]?|[—–-]")
_SENTENCE_END = re.compile(r".*[A-Za-z]{2}[.!?]['\")]?$|.*\d[.!?]$")

_ENDS_CODE = re.compile(r"[^|].*(?:[{;(\[|]|\\|;\s*(?:do|then))$")
"""A line ending in an opener, ``;``, a pipe or a backslash (a table row starts with ``|``)."""
_SYMBOL = re.compile(r"[()\[\]{}=<>.:\"'$*+/&|!_]")
"""Without one, a line ending in ``;`` is a list of words ("2 cups flour; 1 egg;")."""
_CLOSERS = re.compile(r"[)\]}][)\]};,.]*$|}|\)\s*[{;:]|</?[A-Za-z][\w.-]*[\s/>]")
_CALL = re.compile(r"(?<![\w$.])[A-Za-z_$][\w$]*(?:\.[A-Za-z_$][\w$]*)*!?\((?!s\))")
_CODE_OP = re.compile(r"==|!=|&&|\|\||::|:=|\+=|-=|\*=|/=|\+\+|\?\?|\?\.|\w\.\w+\[|<<|>>")
_FIT_OP = re.compile(
    r"=>|->|<-|<=|>=|(?:^|\s)--?[A-Za-z][\w-]*|\$\{?[A-Za-z_]|(?:^|\s)\.{0,2}/[\w.-]"
    r"|(?<![\w.])[A-Za-z_]\w*\.[A-Za-z_]\w*\b(?!\.)|^[a-z]+_[a-z_]+\b|^@\w")
"""Shapes a note can have too: an arrow, a flag, a variable, a path, ``obj.attr``."""
_SQL_CLAUSE = re.compile(
    r"(?:select|from|where|join|left join|inner join|group by|order by|having|limit"
    r"|insert into|values|update|set|delete from)\s+\S")
"""A lower-case SQL clause: it fits a query, but these are English words too."""
_DECLARATION = re.compile(
    r"(?:export\s+)?(?:default\s+)?(?:async\s+)?"
    r"(?:(?:def|function\*?|func|fn|class|interface|struct|enum|trait|type|namespace)\s+"
    r"[A-Za-z_$][\w$]*\s*[(<{:=\[]|func\s*\(|(?:const|let|var|val|auto|my|local|declare"
    r"|readonly|export)\s+[\w$\[{][^=\n]{0,80}=|(?:public|private|protected|static|final"
    r"|override|internal|pub(?:\([\w:]+\))?)\s+[\w<>\[\], ]{0,120}[({;=]"
    r"|@[A-Za-z_][\w.]*(?:\(.*\))?$|template\s*<|(?:def|class)\s+[\w.:]+[?!]?(?:\s*<\s*[\w:]+)?$"
    r"|(?:namespace|module)\s+[\w.:]+\s*\{?$|(?:(?:public|private|protected|internal"
    r"|abstract|sealed|static|final|data|open)\s+)+(?:class|interface|struct|enum|record"
    r"|object)\s+\w+)")
_IMPORT = re.compile(
    r"(?:import\s+(?:[\w.*]+(?:\s+as\s+\w+)?(?:\s*,\s*[\w.]+(?:\s+as\s+\w+)?)*\s*;?"
    r"|\{[^}\n]*\}\s+from\s.*|\(|\"\"\s*;?|\*\s+as\s.*|\w+\s+from\s.*)"
    r"|from\s+[\w.]+\s+import\s+\S.*|package\s+[\w.]+;|require\s*\(.*|using\s+[\w.]+;"
    r"|use\s+[\w:]+;)$")
_BLOCK_HEADER = re.compile(
    r"(?:(?:async\s+)?(?:for|with)|if|elif|else|while|try|except|finally|match|case|switch"
    r"|catch|do|loop|unless|until)\b[^:]{0,200}:$")
"""A block's header: code when it is bare (``else:``), a loop over one name
(``for x in items:``) or holds a comparison or a name of code; else it fits ("for the
record:")."""
_HEADER_CODE = re.compile(
    r"(?:else|try|finally|do|loop):$|(?:async\s+)?for\s+\(?\w+(?:\s*,\s*\w+)*\)?\s+in\s+\S+:$"
    r"|.*(?:[<>()\[\]._]|\bnot\s|\bis\s+None\b)")
_FIT_KEYWORD = re.compile(
    r"(?:return|raise|throw|yield|package|pass|break|continue|end|fi|done|esac|then|do"
    r"|begin|endif|default)(?:\s+[^\s].*)?$|.*\s(?:do|then)(?:\s*\|[\w, ]{0,40}\|)?$")
_SQL_DOCKER_WORDS = (
    "select from where and or join inner left right full outer cross on group order having"
    " limit offset union insert values update set delete create alter drop with returning"
    " case when then else end begin commit run copy add workdir expose env arg cmd"
    " entrypoint user volume label healthcheck shell onbuild").upper().split()
"""Upper-case SQL and Dockerfile words that open a line of a listing (written in lower
case here: this module reads pasted SQL, it runs none)."""
_SQL_DOCKER = re.compile(r"(?:" + "|".join(_SQL_DOCKER_WORDS) + r")(?:\s+(.*))?$")
_OPERAND = re.compile(r"[.=*(/,;<>\[]|\d|--")
_SECTION = re.compile(r"\[\[?[A-Za-z_][\w.\-\" ]{0,80}\]\]?$")
_KEY_LINE = re.compile(
    r"(?P<item>-\s+)?(?P<key>[A-Za-z_][\w.-]{0,60}|\"[^\"\n]{1,60}\"|'[^'\n]{1,60}')"
    r":(?:\s+(?P<value>.*))?$")
_ASSIGNMENT = re.compile(
    r"(?P<key>[A-Za-z_$@][\w$.\-]{0,80}(?:\[[^\]\n]{0,40}\])?)(?:\s*:\s*[\w\[\], .|<>?]{1,40})?"
    r"(?P<pre>\s*)(?P<op>[-+*/%|&^]?=|:=)(?!=)(?P<post>\s*)(?P<value>.*)$")
_SEQUENCE_ITEM = re.compile(r"-\s+(?:\"\"|[\w.-]*[\d/:.\"][\w./:@\"-]*)$")
_NOTE_KEY = re.compile(r"[A-Z][a-z]+|[A-Z]+")
"""A key a person writes ("Budget:", "Goal:", "TODO:"), not an identifier."""
_IDENTIFIER = re.compile(r".*(?:[_.$\[\-]|[a-z][A-Z]|^[A-Z][A-Z0-9]+$)")
"""A name only code gives: snake_case, dotted, camelCase, UPPER."""
_CODE_VALUE = re.compile(
    r"(?:\"\"|[\[{(]|true$|false$|null$|None$|nil$|new\s|[\w.]*\(|.*;$|.*[/\\]|\w+\.\w+\.)")

_DIFF_HEAD = re.compile(r"diff --git\s|@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@|--- a/|\+\+\+ b/")
_DIFF_LINE = re.compile(r"[ +\-\\]|@@|diff\s|index\s[0-9a-f]")

CODE, FITS, NEUTRAL, BREAK = 2, 1, 0, -1


def _code_of(line: str) -> str:
    """``line`` with its strings emptied and a trailing comment cut."""
    if '"' in line or "'" in line or "`" in line:
        line = _STRING.sub('""', line)
    if "#" in line or "//" in line or "--" in line:
        line = _TRAILING_COMMENT.sub("", line).rstrip() or line
    return line


def _plain(tokens: list[str]) -> int:
    """How many of ``tokens`` are plain words ("the", "Friday,", "don't")."""
    return sum(1 for t in tokens if _PLAIN_WORD.fullmatch(t))


def _is_prose(code: str, tokens: list[str]) -> bool:
    """A sentence or a line of plain words (after strings and comments are gone)."""
    if _CJK.search(code):
        return True
    n = len(tokens)
    if n < 3:
        return False
    if _SENTENCE_END.match(code):
        return True
    plain = _plain(tokens)
    if plain * 4 < n * 3 or n < 4:
        return False
    return (tokens[0][0].isupper() and not tokens[0].isupper()) or n >= 7


def _key_grade(key: str, value: str | None, item: bool) -> int:
    """Grade of a ``key: value`` line: code, fits, or breaks (a person's note)."""
    if key[0] in "\"'":
        return CODE
    if _NOTE_KEY.fullmatch(key):
        return BREAK
    if value:
        if _CJK.search(value) or _SENTENCE_END.match(value):
            return BREAK
        if len(value.split()) > 3 and value[0] not in "\"'[{|>&*":
            return BREAK
    if _IDENTIFIER.match(key) or (value and _CODE_VALUE.match(_code_of(value))):
        return CODE if not item else FITS
    return FITS


def grade(line: str) -> int:
    """How much ``line`` looks like code (module doc): ``CODE``, ``FITS``, ``NEUTRAL``
    (blank, comment) or ``BREAK`` (prose, or no shape at all)."""
    s = line.strip()
    if not s:
        return NEUTRAL
    if len(s) > _MAX_LINE:
        return BREAK
    if _DIRECTIVE.match(s):
        return CODE
    if _COMMENT.match(s):
        return NEUTRAL
    code = _code_of(s)
    tokens = code.split()
    if _is_prose(code, tokens):
        return BREAK
    if len(code) == 1 and code in "{[(":  # a lone opener fits a block (Allman style)
        return FITS
    if ((_ENDS_CODE.match(code) and (code[-1] != ";" or _SYMBOL.search(code, 0, len(code) - 1)))
            or _CLOSERS.match(code) or _DECLARATION.match(code) or _IMPORT.match(code)
            or _CODE_OP.search(code)):
        return CODE
    if _CALL.search(code):  # "now getUser() returns null" is a sentence about code
        plain = _plain(tokens)
        return FITS if plain >= 3 and plain * 2 >= len(tokens) else CODE
    if _BLOCK_HEADER.match(code):
        return CODE if _HEADER_CODE.match(code) else FITS
    m = _SQL_DOCKER.match(code)
    if m:
        return CODE if m.group(1) and _OPERAND.search(m.group(1)) else FITS
    m = _KEY_LINE.match(s)
    if m:
        return _key_grade(m.group("key"), m.group("value"), bool(m.group("item")))
    m = _ASSIGNMENT.match(code)
    if m:
        key, value = m.group("key"), m.group("value")
        if m.group("op") != "=" or not (m.group("pre") and m.group("post")) \
                or _IDENTIFIER.match(key) or (value and _CODE_VALUE.match(value)):
            return CODE
        return FITS
    if _SECTION.match(code) or _FIT_KEYWORD.match(code) or _SEQUENCE_ITEM.match(code) \
            or _SQL_CLAUSE.match(code) or code in ('""', '"",'):
        return FITS
    if _FIT_OP.search(code):  # "never edit ./config/prod.yaml by hand" is a sentence
        plain = _plain(tokens)
        return BREAK if plain >= 3 and plain * 2 >= len(tokens) else FITS
    return BREAK


def _opens(line: str) -> bool:
    """Whether a line opens a nested block (``server:``, ``[server]``, ``def f():``)."""
    s = line.strip()
    return s.endswith((":", "{", "(", "[")) or bool(_SECTION.match(s))


def listing_lines(scan: str, lines: list[tuple[int, int]], taken: list[bool]) -> list[bool]:
    """Which of ``lines`` (spans into ``scan``) belong to a listing (module doc).
    ``taken``: lines already known as other machine text, which end a run."""
    n = len(lines)
    grades = [BREAK if taken[k] else grade(scan[a:b]) for k, (a, b) in enumerate(lines)]
    indent = [len(scan[a:b]) - len(scan[a:b].lstrip()) for a, b in lines]
    _quiet_doc_blocks(scan, lines, taken, grades, indent)
    out = [False] * n
    k = 0
    while k < n:  # a diff: its header, then every hunk line
        a, b = lines[k]
        if not taken[k] and _DIFF_HEAD.match(scan, a, b):
            while k < n and not taken[k]:
                a, b = lines[k]
                if a == b:
                    if k + 1 < n and _DIFF_LINE.match(scan, *lines[k + 1]):
                        out[k] = True
                        k += 1
                        continue
                    break
                if not (_DIFF_LINE.match(scan, a, b) or _DIFF_HEAD.match(scan, a, b)):
                    break
                out[k] = True
                k += 1
            continue
        k += 1
    # a line in a run: any but a break, or an indented line with no shape of its own
    runs = [g != BREAK or _indented_filler(scan, lines, indent, k)
            for k, g in enumerate(grades)]
    k = 0
    while k < n:
        if out[k] or not runs[k]:
            k += 1
            continue
        start = k
        while k < n and not out[k] and runs[k]:
            k += 1
        scored = [j for j in range(start, k) if grades[j] > 0]
        strong = sum(1 for j in scored if grades[j] == CODE)
        fits = len(scored) - strong
        nested = any(_opens(scan[lines[j][0]:lines[j][1]]) and j + 1 < k
                     and indent[j + 1] > indent[j] for j in scored)
        sections = any(_SECTION.match(scan[lines[j][0]:lines[j][1]].strip()) for j in scored)
        comments = [j for j in range(start, k) if grades[j] == NEUTRAL
                    and _COMMENT.match(scan[lines[j][0]:lines[j][1]].strip())]
        if strong >= 2 or (strong == 1 and fits >= 2) or (fits + strong >= 3
                                                          and (nested or sections)) \
                or (fits + strong >= 2 and comments and comments[-1] > scored[0]):
            first, last = scored[0], scored[-1]
            if comments:  # a file's comments at the run's edges are the file's too
                first, last = min(first, comments[0]), max(last, comments[-1])
            for j in range(first, last + 1):
                out[j] = True
    return out


def _doc_close(scan: str, a: int, b: int) -> str | None:
    """The delimiter that would close a docstring or block comment left open by
    the line ``scan[a:b]`` (an odd count of triple quotes, a ``/*`` without ``*/``)."""
    line = scan[a:b]
    for quote in ('"""', "'''"):
        if line.count(quote) % 2:
            return quote
    start = line.find("/*")
    return "*/" if start >= 0 and line.find("*/", start) < 0 else None


def _quiet_doc_blocks(scan: str, lines: list[tuple[int, int]], taken: list[bool],
                      grades: list[int], indent: list[int]) -> None:
    """Grade a docstring or block comment as neutral, from its opening to its
    closing line, when it opens after a line of code or indented (its sentences are
    the code's, not the user's). One left open stays as graded."""
    unclosed: set[str] = set()  # no line past here closes these: linear
    k = 0
    while k < len(lines):
        close = None if taken[k] else _doc_close(scan, *lines[k])
        if close is None or close in unclosed or not (
                indent[k] or grades[k] == CODE or (k and grades[k - 1] == CODE)):
            k += 1
            continue
        end = k + 1
        while end < len(lines) and scan.find(close, *lines[end]) < 0:
            end += 1
        if end == len(lines):
            unclosed.add(close)
            k += 1
            continue
        if not any(taken[k:end + 1]):
            for j in range(k, end + 1):
                if grades[j] != CODE:
                    grades[j] = NEUTRAL
        k = end + 1


def _indented_filler(scan: str, lines: list[tuple[int, int]], indent: list[int],
                     k: int) -> bool:
    """An indented line with no shape of its own but not prose, inside a block: it
    neither counts for nor breaks a run."""
    a, b = lines[k]
    if not indent[k] or k == 0 or b - a > _MAX_LINE:
        return False
    code = _code_of(scan[a:b].strip())
    return not _is_prose(code, code.split())
