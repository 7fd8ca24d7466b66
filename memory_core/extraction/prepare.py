"""Length-preserving normalisation and masking of a message before the rules read it.

Every transform here maps one character to one character, so an offset found in the
prepared *scan* string is also an offset into the user's text: items quote the original
verbatim while the rules read a cleaned copy. Three things happen:

* full-width ASCII (``１２３``, ``：``, ``？``) becomes half-width, so one set of patterns
  serves both (Japanese and Chinese input methods produce either);
* text that is not the user's own statement is *masked* (replaced by ``MASK``, which no
  rule pattern matches): fenced code, machine text pasted without a fence (a traceback,
  log lines, CSV rows, a JSON object, a shell session, source code or a config:
  :func:`machine_spans`),
  block-quote lines, URLs, inline code that contains spaces, and quoted spans
  (``"…"``, ``“…”``, ``「…」``, ``'…'``…). ``the log said "never retry"`` then reads
  as ``the log said "▯▯▯▯▯▯▯▯▯▯▯"``, which no constraint rule fires on;
* material the user presents from a source, its lead included ("Here is the page I
  found: '…'", 这是…网页：…, :func:`memory_core.extraction.material.material_spans`), is
  masked with ``MATERIAL`` over any rule frame: it yields no item, and ``segment`` cuts
  the user's own sentences at its edges;
* what a client puts in a user turn on its own is *blanked* to spaces, as if absent
  (:func:`client_spans`): a block whose tag says a client attached it (Claude Code's
  ``<system-reminder>`` with CLAUDE.md, Codex's ``<environment_context>`` and
  AGENTS.md ``<INSTRUCTIONS>`` with the heading above it, ``<local-command-stdout>``:
  :func:`context_spans`), a line that is one bracketed note (``[Request interrupted
  by user]``), another memory layer's recall under a plain heading (:func:`recall_spans`),
  and a whole turn that opens as a client's own note (a recap after it
  compacted its history); of a tag that wraps the user's words (``<user_query>``)
  only the tags;
* traditional Chinese characters fold to simplified for Chinese sentences only
  (``fold_traditional``), so one cue table serves both scripts and a subject restated in
  the other script keys the same. Japanese keeps its kanji (実は must stay 実は).
"""

from __future__ import annotations

import re
from bisect import bisect_left

from memory_core.extraction.frame import frame_spans
from memory_core.extraction.joke import joke_spans
from memory_core.extraction.listing import listing_lines
from memory_core.extraction.material import MATERIAL, asked_about_spans, material_spans

MASK = "\ue000"
"""Private-use character standing in for masked text; not ``\\w``, so no cue matches it."""

_FULLWIDTH = {cp: cp - 0xFEE0 for cp in range(0xFF01, 0xFF5F)}
_FULLWIDTH[0x3000] = 0x20  # ideographic space
_APOSTROPHES = {0x2019: 0x27, 0x2018: 0x27}

# Traditional -> simplified for the characters that occur in cue words, units and the
# everyday vocabulary of the labelled set (software, travel, schedules). Not a full
# converter: a character missing here only weakens subject matching across scripts.
_TRAD = (
    "們這個說對實際決還沒問題會時間開關機場車預價錢員體與為從來當後麼樣點種號碼庫據數處"
    "標準備確認證網絡頁資訊聯繫設計劃進礙辦務須應該選擇歡較討厭傾態環線測試驗錯誤雖離運"
    "營專業結構組織長達週過讓給記錄報導師經濟國語幫戶帳單飯館廳邊樓層電腦話視頻寬傳輸換"
    "轉變舊條總統習慣啟動發佈雲區節鐘鏈壓縮載執現嗎裡裏兒隨將讀寫請謝別許終嚴絕塊萬億兩"
    "幾歲曆團隊紀檔夾鍵盤稱優級戲劇書筆費貴買賣訂購飛張門醫藥療氣溫濕熱涼雙內滿額貨幣匯"
    "稅維護復雜簡圖畫顯隱權註冊參欄項簽溝協議範圍評審獲連斷閉閱覽聽講課學練裝卻並於誰極"
    "歷頭盡儘愛寧願覺見採納糾煩夠衝產質遷緩隻錶鎖鑰華麗鐵艙約擔憂慮觀壞勢慶貼"
    "則餘擴殘補夥鬧災紅綠藍黃歸屬帶廣東亞豐臺灣陣彈擋驟蓋"
)
_SIMP = (
    "们这个说对实际决还没问题会时间开关机场车预价钱员体与为从来当后么样点种号码库据数处"
    "标准备确认证网络页资讯联系设计划进碍办务须应该选择欢较讨厌倾态环线测试验错误虽离运"
    "营专业结构组织长达周过让给记录报导师经济国语帮户帐单饭馆厅边楼层电脑话视频宽传输换"
    "转变旧条总统习惯启动发布云区节钟链压缩载执现吗里里儿随将读写请谢别许终严绝块万亿两"
    "几岁历团队纪档夹键盘称优级戏剧书笔费贵买卖订购飞张门医药疗气温湿热凉双内满额货币汇"
    "税维护复杂简图画显隐权注册参栏项签沟协议范围评审获连断闭阅览听讲课学练装却并于谁极"
    "历头尽尽爱宁愿觉见采纳纠烦够冲产质迁缓只表锁钥华丽铁舱约担忧虑观坏势庆贴"
    "则余扩残补伙闹灾红绿蓝黄归属带广东亚丰台湾阵弹挡骤盖"
)
assert len(_TRAD) == len(_SIMP), "traditional/simplified tables must align"
_TRAD_TO_SIMP = str.maketrans(_TRAD, _SIMP)

# --- masking ------------------------------------------------------------------------
# Each pattern is bounded ({1,400} and friends) and has no nested quantifiers, so the
# scan stays linear on adversarial input (a 100 KB run of quotes or backticks).

_FENCE_LINE = re.compile(r"[ \t]{0,3}(`{3,}|~{3,})")
"""A line opening or closing a fenced code block (CommonMark: at most 3 spaces indent)."""
_BLOCK_QUOTE = re.compile(r"^[ \t]{0,3}>[^\n]*", re.M)
"""Markdown block quote: quoted from elsewhere, never the user's own instruction."""
_URL = re.compile(r"\b(?:https?|ftp)://[^\s<>\"']{1,2000}")
_INLINE_CODE = re.compile(r"`([^`\n]{1,400})`")
"""Inline code. Masked only when it holds a space (a command or snippet); a lone
identifier such as `MAX_RETRIES` stays readable because it is often the subject."""


def inline_code(text: str) -> list[tuple[int, int, str]]:
    """Every inline code span of ``text`` (```like this```, on one line, at most 400
    characters): ``(start, end, code)``, offsets into ``text`` with the backticks
    included, the code as written."""
    if "`" not in text:
        return []
    return [(m.start(), m.end(), m.group(1)) for m in _INLINE_CODE.finditer(text)]


def masked_code(text: str) -> list[tuple[int, int, str]]:
    """The spans of :func:`inline_code` that :func:`prepare` masks: those holding a
    space (a command or a snippet, ``git push --force``)."""
    return [span for span in inline_code(text) if " " in span[2]]


_QUOTES: tuple[tuple[str, re.Pattern[str]], ...] = tuple(
    (opener, re.compile(re.escape(opener) + "([^" + closer + "\n]{1,400})" + re.escape(closer)))
    for opener, closer in (('"', '"'), ("\u201c", "\u201d"), ("\u2018", "\u2019"),
                           ("\u300c", "\u300d"), ("\u300e", "\u300f"), ("\u00ab", "\u00bb"))
)
"""Paired quotes: ASCII (full-width folded), “…”, ‘…’, 「…」, 『…』, «…». One literal-led
pattern per pair, run only when its opener occurs."""
_SINGLE_QUOTED = re.compile(r"'(?=\S)([^'\n]{1,200}?)(?<=\S)'(?![\w'])")
"""'…' — but not an apostrophe: the opener must not follow a letter (checked in code)."""
_RULE_FRAME = re.compile(
    r"(?:\b(?:rule|rules|policy|instruction|remember)\s*(?:is|was)?\s*:?|规则|規則|ルール)\s*$",
    re.I)
"""A quote introduced as the rule itself ('Remember: "never push to main"') is the
user's instruction, so it is left unmasked."""
_RULE_FRAME_REACH = 64
"""Characters before a quote that :data:`_RULE_FRAME` may span (its longest words and
their spacing fit well within)."""


_MAY_MASK = re.compile("[\"'`>~:\\[\u201c\u2018\u2019\u300c\u300e\u00ab]|写[着道]|写的是")
"""Characters without which no masking rule can fire (fast path for plain prose)."""
_MAY_PRESENT = re.compile("[:\"'\u201c\u2018\u300c\u300e\u00ab]|写[着道]|写的是")
"""Characters without which no lead of material (``material``) can end."""


def fold_width(text: str) -> str:
    """Map full-width ASCII and the ideographic space to half-width; same length."""
    return text if text.isascii() else text.translate(_FULLWIDTH)


def fold_traditional(text: str) -> str:
    """Map the traditional Chinese characters we know to simplified; same length."""
    return text.translate(_TRAD_TO_SIMP)


def open_fence(text: str, opened: str | None = None) -> str | None:
    """The fence (```` ``` ````, ``~~~``…) of a code block still open at the end of
    ``text``, or ``None``; ``opened``: the fence open at its start (a long message
    read in chunks: the next chunk starts inside that block). Same rules as the
    masking below (:func:`_walk_fences`); linear."""
    return _walk_fences(text, opened)[1]


def _fenced_blocks(scan: str) -> list[tuple[int, int]]:
    """Spans of fenced code blocks (:func:`_walk_fences`); an unclosed one runs to the
    end of the message."""
    blocks, still_open, start = _walk_fences(scan)
    return blocks if still_open is None else [*blocks, (start, len(scan))]


def _walk_fences(scan: str, opened: str | None = None
                 ) -> tuple[list[tuple[int, int]], str | None, int]:
    """``(closed blocks' spans, the fence still open at the end or None, where that
    block started)``, line by line (linear; a regex with a back-reference to the fence
    backtracks quadratically on a long run of backticks). A block closes at a line
    holding only a fence of the same character at least as long. ``opened``: a fence
    already open at the start of ``scan``."""
    blocks: list[tuple[int, int]] = []
    start = 0
    pos = 0
    while pos <= len(scan):
        nl = scan.find("\n", pos)
        end = len(scan) if nl < 0 else nl
        m = _FENCE_LINE.match(scan, pos, end)
        if opened is None and m:
            opened, start = m.group(1), pos
        elif opened is not None and m and m.group(1)[0] == opened[0] \
                and len(m.group(1)) >= len(opened) and not scan[m.end():end].strip():
            blocks.append((start, end))
            opened = None
        if nl < 0:
            break
        pos = nl + 1
    return blocks, opened, start


# --- machine text pasted without a fence -------------------------------------------------
# Each test is a ``match`` at a line start (bounded), and each line is read once, so the
# walk stays linear in the message.

_TB_HEAD = re.compile(r"[ \t]*Traceback \(most recent call last\):")
_TB_CHAIN = re.compile(r"[ \t]*(?:During handling of the above exception|The above exception was"
                       r" the direct cause)")
_EXCEPTION = re.compile(
    r"[ \t]*(?:Uncaught\s|Unhandled\s|Exception in thread \S+\s)?(?:[A-Za-z_][\w$]*\.){0,8}"
    r"[A-Z][\w$]*(?:Error|Exception|Warning|Exit|Interrupt|Fault|Failure|Panic)\b(?::|\s*$)")
"""An exception line ("ValueError: port must be 8080", "java.lang.IllegalStateException: …")."""
_FRAME = re.compile(
    r"[ \t]+(?:at\s+(?:async\s+)?(?:[\w$.<>\[\]/\\-]+\s?\(|\S+:\d+:\d+)"
    r"|File\s\"[^\"\n]{1,400}\",\sline\s\d+|\.\.\.\s\d+\s(?:more|common))"
    r"|[ \t]*Caused by:\s|[ \t]*Exception in thread\s|[ \t]*goroutine\s\d+\s\[")
"""A stack frame (Java/JS ``at f(…)``, Python ``File "…", line N``, Go) or a trace's
own line."""
_PY_FRAME = re.compile(r"[ \t]+File\s\"[^\"\n]{1,400}\",\sline\s\d+")
"""A Python frame: the source line under it is part of the trace."""
_LOG_TIME = re.compile(
    r"[ \t]*[\[(]?(?:\d{4}[-/.]\d{2}[-/.]\d{2}[T ]\d{2}:\d{2}:\d{2}|\d{2}:\d{2}:\d{2}(?:[.,]\d+)?\s"
    r"|(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)\s{1,2}\d{1,2}\s\d{2}:\d{2}:\d{2}"
    r"|\d{2}/\d{2}/\d{4}[ :]\d{2}:\d{2}:\d{2}|[IWEF]\d{4}\s\d{2}:\d{2}:\d{2})")
"""A log line's timestamp, to the second, at the line's start (glog's ``E1206 12:00:01``
with its level letter)."""
_LOG_LEVEL = re.compile(
    r"[ \t]*[\[<]?(?:TRACE|DEBUG|INFO|NOTICE|WARN|WARNING|ERROR|ERR|CRITICAL|FATAL|SEVERE|PANIC)"
    r"[\]>]?(?::|\s)")
"""An upper-case level opening a line ("ERROR worker …"): a log line when a neighbour is one."""
_LOG_SOURCE = re.compile(
    r"[ \t]*[\[<]?[A-Z]+[\]>]?:?\s+(?:\[[^\]\n]{1,80}\]|<[^>\n]{1,80}>|\(\S{1,80}\)"
    r"|[\w$-]+(?:[./:][\w$-]+)+:?(?=\s)|[\w$-]*\d[\w$-]*:?(?=\s)|[\w$-]+:(?=\s))")
"""The source beside a level ("ERROR [main] …", "WARN app.db: …", "INFO worker-1 …",
"ERROR 1234 …"). A level line without one that ends like a sentence ("ERROR handling
must use Result types.") is prose."""
_LOG_RECORD = re.compile(
    _LOG_LEVEL.pattern + r"[ \t]*(?:" + _LOG_TIME.pattern.removeprefix("[ \\t]*")
    + r"|\[[^\]\n]{1,80}\]|<[^>\n]{1,80}>"
    + r"|(?:[a-z_$][\w$-]*|[\w$-]+(?:[./][\w$-]+)+):(?!//))")
"""A level line that is a log record on its own: the level, then a timestamp or a
logger ("ERROR 2026-12-06 12:00:01 worker: …", "WARN [main] …", "ERROR worker: …",
"ERROR:root:…", "WARN app.db: …"). A capitalised word after the level ("WARNING:
Note: …") is a person's label, and a level before plain words ("ERROR handling must
…") a sentence."""
_DIAGNOSTIC = re.compile(r"[ \t]*(?:[\w.-]{1,200}[/\\])*[\w-]{1,80}\.[A-Za-z]\w{0,7}:\d+(?::\d+)?:?\s")
"""A compiler's, linter's or type checker's line: a source file, its line (and
column), then the message ("worker.py:42: …", "src/app.ts:3:7 - error …")."""
_KV_LOG = re.compile(r"[ \t]*(?:\w+=\S+\s+){0,3}(?:level|lvl|severity)=\w+", re.I)
_PROMPT = re.compile(
    r"[ \t]*(?:[$%❯]|>>>|PS [A-Z]:\\[^>\n]{0,200}>"
    r"|[\w.-]{1,40}@[\w.-]{1,60}(?::[^$#\n]{0,200})?[$#])\s+[a-z./~_][\w./~-]*")
"""A shell or REPL prompt and the command after it ("$ kubectl get pods")."""
_QUALIFIED = re.compile(r"[\w.]+:\s")
"""The last line of a Python traceback: an exception's (qualified) name, then its message."""
_PROSE_END = re.compile(r".*[A-Za-z]{2}[.!?:。！？]\s*$")
_CSV_MAX_FIELD = 40
_JSON_KEY = re.compile(r"\"[^\"\n]{0,80}\"\s*:")


def _csv_shape(line: str) -> tuple[str, int] | None:
    """``(delimiter, count)`` of a line that reads as a CSV/TSV row: a tab, or at least
    two commas or semicolons, short fields (a few words each), no sentence end."""
    stripped = line.strip()
    if not stripped or stripped[-1] in ".!?。！？" or stripped[:2] in ("- ", "* "):
        return None
    for delim, least in (("\t", 1), (",", 2), (";", 2)):
        n = stripped.count(delim)
        if n >= least:
            fields = stripped.split(delim)
            if all(len(f) <= _CSV_MAX_FIELD and len(f.split()) <= 4 for f in fields):
                return delim, n
            return None
    return None


def _space_free(scan: str, rows: list[tuple[int, int]], shape: tuple[str, int] | None) -> bool:
    """Whether most fields of two rows hold no space ("api,8080,reachable"): two
    lines of chat with commas ("My kids are Tom, Anna and Ben") are not a table."""
    if shape is None:
        return False
    fields = [f.strip() for a, b in rows for f in scan[a:b].split(shape[0])]
    return sum(" " not in f for f in fields) * 2 > len(fields)


def _json_ends(scan: str, starts: set[int]) -> dict[int, int]:
    """For each ``{``/``[`` in ``starts`` (a line's first character) that opens a JSON
    value holding an object key: the end (exclusive) of the line that closes it. One
    pass that pairs brackets (linear; reading from each opening to its close would cost
    the square of a run of unclosed ones). A string never spans lines: a line break
    inside one fails every value still open."""
    out: dict[int, int] = {}
    if not starts:
        return out
    found = [(m.start(), m.end()) for m in _JSON_KEY.finditer(scan)]
    keys = [k for k, _ in found]
    key_ends = dict(found)
    line_tail: dict[int, int] = {}  # line end -> last character other than " \t,;"
    stack: list[int] = []
    in_str = esc = False
    n = len(scan)
    for i in range(min(starts), n):
        ch = scan[i]
        if in_str:
            if esc:
                esc = False
            elif ch == "\\":
                esc = True
            elif ch == '"':
                in_str = False
            elif ch == "\n":
                stack.clear()
                in_str = False
        elif ch == '"':
            in_str = True
        elif ch in "{[":
            stack.append(i)
        elif ch in "}]" and stack:
            o = stack.pop()
            if o not in starts:
                continue
            nl = scan.find("\n", i)
            end = n if nl < 0 else nl
            if end not in line_tail:  # each line's filler is read once
                j = end - 1
                while j > i and scan[j] in " \t,;":
                    j -= 1
                line_tail[end] = j
            if line_tail[end] > i:
                continue
            k = bisect_left(keys, o)
            if k < len(keys) and key_ends[keys[k]] <= i:
                out[o] = end
    return out


def machine_spans(scan: str) -> list[tuple[int, int]]:
    """Line spans of machine text pasted without a fence: a Python traceback, a stack
    trace, log lines (a timestamp to the second, an upper-case level before a timestamp
    or a logger, or next to another log line, or ``level=…``), a compiler's or
    linter's ``file.py:42:`` line, two or more CSV/TSV rows of one shape, a JSON
    object, a shell session (the prompt line and its output up to a blank line or a
    line of prose), source code or a config of two lines or more (a function, a SQL
    query, YAML/TOML/INI, a Dockerfile, a diff: :mod:`memory_core.extraction.listing`).
    Masked like a fenced block: nothing in them is the user's statement, while prose
    around the paste still is. Linear in ``scan``."""
    lines: list[tuple[int, int]] = []
    pos = 0
    while pos <= len(scan):
        nl = scan.find("\n", pos)
        end = len(scan) if nl < 0 else nl
        lines.append((pos, end))
        if nl < 0:
            break
        pos = nl + 1
    mark = [False] * len(lines)
    level = [False] * len(lines)
    json_ends: dict[int, int] | None = None
    i = 0
    while i < len(lines):
        a, b = lines[i]
        if not _LINE_HINT.match(scan, a, b):  # most lines of prose: one test
            i += 1
            continue
        if _TB_HEAD.match(scan, a, b):
            mark[i] = True
            i += 1
            while i < len(lines):  # the frames, then the exception line
                a, b = lines[i]
                if a == b or scan[a] in " \t" or _TB_CHAIN.match(scan, a, b) \
                        or _TB_HEAD.match(scan, a, b):
                    mark[i] = a != b
                    i += 1
                    continue
                if _EXCEPTION.match(scan, a, b) or _QUALIFIED.match(scan, a, b):
                    mark[i] = True
                    i += 1
                break
            continue
        opening = a + len(scan[a:b]) - len(scan[a:b].lstrip())
        if opening < b and scan[opening] in "{[":
            if json_ends is None:
                json_ends = _json_ends(scan, {
                    o for o in (x + len(scan[x:y]) - len(scan[x:y].lstrip()) for x, y in lines)
                    if o < len(scan) and scan[o] in "{["})
            close = json_ends.get(opening)
            if close is not None:
                j = i
                while j < len(lines) and lines[j][0] <= close:
                    mark[j] = True
                    j += 1
                i = j
                continue
        if _PROMPT.match(scan, a, b):
            mark[i] = True
            i += 1
            while i < len(lines):  # the command's output
                a, b = lines[i]
                if a == b or not scan[a:b].strip() or _PROMPT.match(scan, a, b):
                    break
                if _PROSE_END.match(scan, a, b) and len(scan[a:b].split()) >= 4:
                    break
                mark[i] = True
                i += 1
            continue
        if _PY_FRAME.match(scan, a, b):
            # a Python trace pasted without its head: each frame's source line, indented
            # under it, then the exception line
            mark[i] = True
            if i and not mark[i - 1] and _EXCEPTION.match(scan, *lines[i - 1]):
                mark[i - 1] = True
            i += 1
            while i < len(lines):
                a, b = lines[i]
                if a < b and scan[a] in " \t" and (_FRAME.match(scan, a, b)
                                                   or not _PROSE_END.match(scan, a, b)):
                    mark[i] = True
                    i += 1
                    continue
                if _EXCEPTION.match(scan, a, b):
                    mark[i] = True
                    i += 1
                break
            continue
        if _FRAME.match(scan, a, b) or _LOG_TIME.match(scan, a, b) or _KV_LOG.match(scan, a, b) \
                or _LOG_RECORD.match(scan, a, b) or _DIAGNOSTIC.match(scan, a, b):
            mark[i] = True
            if _FRAME.match(scan, a, b) and i and not mark[i - 1] \
                    and _EXCEPTION.match(scan, *lines[i - 1]):
                mark[i - 1] = True  # the exception a trace starts with
        elif _EXCEPTION.match(scan, a, b) and i and mark[i - 1] and not level[i - 1]:
            mark[i] = True  # the exception line after a trace's frames
        elif _LOG_LEVEL.match(scan, a, b) and (_LOG_SOURCE.match(scan, a, b)
                                                or not _PROSE_END.match(scan, a, b)):
            level[i] = True
        i += 1
    for i in range(len(lines)):  # a level line is a log line next to another one
        if level[i] and ((i and (mark[i - 1] or level[i - 1]))
                         or (i + 1 < len(lines) and (mark[i + 1] or level[i + 1]))):
            mark[i] = True
    shapes = [_csv_shape(scan[a:b]) if not mark[k] and b - a < 2000 and (
        scan.count(",", a, b) >= 2 or scan.count(";", a, b) >= 2 or scan.find("\t", a, b) >= 0)
        else None for k, (a, b) in enumerate(lines)]
    k = 0
    while k < len(shapes):  # CSV/TSV: a run of rows of one shape
        run = k + 1
        while shapes[k] is not None and run < len(shapes) and shapes[run] == shapes[k]:
            run += 1
        if run - k >= 3 or (run - k == 2 and _space_free(scan, lines[k:run], shapes[k])):
            for r in range(k, run):
                mark[r] = True
        k = run
    if len(lines) > 1:  # source code or config: never one line alone
        for k, is_code in enumerate(listing_lines(scan, lines, mark)):
            mark[k] = mark[k] or is_code
    if _EXCEPTION.match(scan, *lines[0]) and len(lines) == 1:
        mark[0] = True  # a message that is only an exception line
    return [span for span, m in zip(lines, mark, strict=True) if m]


_LINE_HINT = re.compile("|".join(
    f"(?:{p.pattern})" for p in (_TB_HEAD, _FRAME, _LOG_TIME, _PROMPT, _EXCEPTION, _LOG_LEVEL,
                                 _DIAGNOSTIC))
    + f"|(?i:{_KV_LOG.pattern})" + r"|[ \t]*[{\[]")
"""Any line-start test of :func:`machine_spans` at once (a line no test can match is
skipped with one ``match``)."""
_MAY_BE_MACHINE = re.compile(r"[ \t]*(?:[\[{$%<(\d]|Traceback|[\w.]*(?:Error|Exception)"
                             r"|[A-Z]{3,8}[\s:]|[IWEF]\d|[A-Z][a-z]{2}\s|\w+@|PS\s|>>>|\w+=|[\w./\\-]+:\d)")
"""A one-line message can be machine text only if it starts like one."""


# --- what a client adds to a user turn ------------------------------------------------

_TAG_OPEN = re.compile(r"<([A-Za-z][\w.:-]{0,63})(?:[ \t][^<>\n]{0,400})?>")
_TAG_CLOSE = re.compile(r"</([A-Za-z][\w.:-]{0,63})>")
_HEADING = re.compile(r"[ \t]{0,3}#{1,6}[ \t][^\n]*")
_BRACKET_NOTE = re.compile(
    r"^[ \t]*\[[A-Za-z][^\[\]\n]{0,198}(?<![.!?])\][ \t]*\r?$", re.M)
_CAMEL = re.compile(r"(?<=[a-z])(?=[A-Z])")
_NOT_LETTERS = re.compile(r"[^a-z]+")
_CLIENT_WORDS = frozenset({
    "system", "reminder", "environment", "env", "instructions", "instruction", "rules",
    "ide", "attached", "attachment", "attachments", "additional", "file", "files",
    "command", "commands", "bash", "shell", "terminal", "stdout", "stderr", "output",
    "hook", "notification", "skill", "caveat", "aborted", "interrupted", "selection",
    "metadata", "diagnostics", "workspace", "cwd", "tool", "result", "results",
    "memories", "recalled", "retrieved"})
"""Words of a tag name that says a client attached it: its environment, files, a
command and its output, the project's rules, the editor's state, a note of its own
(``<system-reminder>``, ``<environment_context>``, ``<user_instructions>``,
``<local-command-stdout>``, ``<ide_selection>``, ``<attached_files>``), or what another
memory layer recalled for this turn (``<memories>``, ``<relevant_memories>``,
``<retrieved_context>``: "The user lives in Berlin." is its summary, not the user's
words; a ``<memory>`` tag the user types around a statement is their own markup)."""
_SPOKEN_WORDS = frozenset({"query", "question", "request", "message", "prompt", "input",
                           "text", "task", "feedback", "answer"})
"""Words of a tag name that wraps the user's own words, alone or with ``user``
(``<user_query>``, ``<user_message>``, ``<task>``, ``<feedback>``)."""


def _tag_kind(name: str) -> str | None:
    """``"client"``, ``"spoken"`` or ``None`` (any other tag: the user's markup)."""
    words = set(_NOT_LETTERS.split(_CAMEL.sub(" ", name).lower())) - {""}
    if words & _CLIENT_WORDS:
        return "client"
    if words & _SPOKEN_WORDS and ("user" in words or len(words) == 1) or words == {"user"}:
        return "spoken"
    return None


def context_spans(scan: str) -> list[tuple[int, int, bool]]:
    """Tagged blocks a client adds to a user turn: ``(start, end, spoken)`` each, in
    order. A block opens with ``<name …>`` and ends with the first ``</name>`` after it.
    A client's block (:data:`_CLIENT_WORDS`) is one span, from a markdown heading
    line right above it when it opens a line (Codex: ``# AGENTS.md instructions for
    …`` over ``<INSTRUCTIONS>``); nothing inside it is looked at. A tag that wraps the
    user's words (:data:`_SPOKEN_WORDS`) gives its two tags' spans, ``spoken``, and
    what it wraps is read (a client's block inside it included). Other tags are the
    user's markup: no span. Linear in ``scan`` (one pass for the closing tags, a
    bisection per opening tag)."""
    closes: dict[str, list[tuple[int, int]]] = {}
    for m in _TAG_CLOSE.finditer(scan):
        closes.setdefault(m.group(1), []).append((m.start(), m.end()))
    if not closes:
        return []
    out: list[tuple[int, int, bool]] = []
    reach = 0
    for m in _TAG_OPEN.finditer(scan):
        ends = closes.get(m.group(1))
        if m.start() < reach or not ends:
            continue
        kind = _tag_kind(m.group(1))
        i = bisect_left(ends, (m.end(), -1))
        if kind is None or i == len(ends):
            continue
        close_start, close_end = ends[i]
        if kind == "spoken":
            out += [(m.start(), m.end(), True), (close_start, close_end, True)]
            reach = m.end()
            continue
        start = above = m.start()
        while above > 0 and scan[above - 1] in " \t":
            above -= 1
        if above == 0 or scan[above - 1] == "\n":  # the block opens a line
            while above > 0 and scan[above - 1] in " \t\r\n":  # blank lines above it
                above -= 1
            line = scan.rfind("\n", 0, above) + 1
            if above > 0 and line >= reach and _HEADING.fullmatch(scan, line, above):
                start = line
        out.append((start, close_end, False))
        reach = close_end
    out.sort()
    return out


_CLIENT_NOTE = re.compile(
    r"\s*(?:(?:this|the) (?:session|conversation|chat) (?:is being|is|was|has been)"
    r" continued from (?:a|an|the) (?:previous|earlier|prior) (?:conversation|session|chat)"
    r"|another (?:language )?model (?:started|began) to (?:solve|work on) this"
    r"|caveat: the messages below were generated by)\b", re.I)
"""The opening of a turn a client writes itself: a recap after compacting its own
history (Claude Code: "This session is being continued from a previous conversation
that ran out of context. …", Codex: "Another language model started to solve this
problem …", then a model-written summary), a note about the turns that follow."""


_SPEAKER = re.compile(
    r"^[ \t]*(?:[#*_>]+[ \t]*)?(?:\[)?(?:(human|user|me)|(assistant|ai|model|bot))"
    r"(?:\])?(?:[*_]+)?[ \t]*[:：]", re.I | re.M)
"""A transcript's speaker label at the start of a line ("Human:", "**User:**",
"[assistant]:", "### AI:")."""


def quotes_transcript(text: str) -> bool:
    """Whether ``text`` quotes a conversation: lines labelled with both speakers, the
    user's at least twice and the assistant's at least once. A compaction or summary
    request writes the whole history into one user message this way (and appends its
    instructions); the quoted turns were each stored where they were said, and the
    assistant's lines are not the user's words, so nothing in it is the user's
    statement. Cheap: one scan, only when a colon follows a line start."""
    return transcript_start(text) is not None


def transcript_start(text: str) -> int | None:
    """Where the conversation ``text`` quotes (:func:`quotes_transcript`) begins: the
    start of its first labelled line, or ``None`` when it quotes none. What the user
    wrote above it ("I'm allergic to peanuts. Is the bot's advice below right?") is
    the user's own."""
    if ":" not in text and "\uff1a" not in text:
        return None
    users = assistants = 0
    first = None
    for m in _SPEAKER.finditer(text):
        if first is None:
            first = m.start()
        if m.group(1):
            users += 1
        else:
            assistants += 1
        if users >= 2 and assistants >= 1:
            return first
    return None


_RECALL_HEADING = re.compile(
    r"^[ \t]{0,3}(?:#{1,6}[ \t]+)?(?:\*\*|__)?(?P<name>[A-Za-z][A-Za-z '_-]{0,48}?)"
    r"(?:\*\*|__)?[ \t]*[:：]?[ \t]*(?:\*\*|__)?[ \t]*\r?\n", re.M)
_RECALL_WORDS = frozenset({"memories", "memory", "recalled", "retrieved", "recall",
                           "remembered"})
"""Words of a plain heading that names what another memory layer recalled ("Relevant
memories:", "Memory context:", "## Retrieved context"). "Context" alone is no such
word: "## Context" heads a developer's own notes ("- The user table is in Postgres")."""
_BULLET = re.compile(r"[ \t]*(?:[-*•·]|\d{1,2}[.)])[ \t]+(?P<body>[^\n]*)(?:\n|$)")
_ABOUT_USER = re.compile(r"\b(?:the\s+)?user(?:'s|s')?\b", re.I)


def recall_spans(text: str) -> list[tuple[int, int]]:
    """Another memory layer's recall pasted under a plain heading, with no tag: a line
    whose few words name recalled memory (:data:`_RECALL_WORDS`) and the
    bullet lines right under it, when one of them speaks of "the user" in the third
    person ("Relevant memories:\n- The user lives in Berlin."): a layer's recall may
    quote some memories in the words they were said in ("- I live in Berlin"), so a
    list that mixes the two voices is the recall's whole. The heading and its bullets
    are one span, as a ``<memories>`` block is (:data:`_CLIENT_WORDS`). A heading of
    other words ("My notes:"), or bullets all in the user's own voice ("- I live in
    Berlin"), leave the list the user's."""
    out: list[tuple[int, int]] = []
    for m in _RECALL_HEADING.finditer(text):
        words = set(_NOT_LETTERS.split(m.group("name").lower())) - {""}
        if not words & _RECALL_WORDS or len(words) > 6:
            continue
        at, about_user = m.end(), False
        while (b := _BULLET.match(text, at)) is not None:
            at = b.end()
            about_user = about_user or _ABOUT_USER.search(b.group("body")) is not None
        if about_user:
            out.append((m.start(), at))
    return out


def client_spans(text: str) -> list[tuple[int, int]]:
    """What a client adds to a user turn, as ``(start, end)`` spans in order: the whole
    text when it opens as a client's own note (:data:`_CLIENT_NOTE`), from its first
    labelled line on when it quotes a transcript (:func:`transcript_start`: what the
    user wrote above the quote stays), else the tagged blocks (:func:`context_spans`;
    a spoken tag's two tags) and the lines that are one bracketed note ("[Request
    interrupted by user]"; not one that ends a sentence)."""
    if _CLIENT_NOTE.match(text):
        return [(0, len(text))]
    quoted = transcript_start(text)
    if quoted is not None:
        return [(quoted, len(text))]
    spans = [(s, e) for s, e, _spoken in context_spans(text)] if "</" in text else []
    if "[" in text:
        spans = sorted(spans + [m.span() for m in _BRACKET_NOTE.finditer(text)])
    if "\n" in text and _ABOUT_USER.search(text):
        spans = sorted(spans + recall_spans(text))
    return spans


def user_words(text: str) -> str:
    """``text`` without what a client adds to a user turn (:func:`client_spans`): the
    words a search for the turn should read. ``text`` itself when there is none."""
    cuts = client_spans(text)
    if not cuts:
        return text
    parts, at = [], 0
    for start, end in cuts:
        if start >= at:
            parts.append(text[at:start])
            at = end
    parts.append(text[at:])
    return "".join(parts).strip()


_EMPHASIS = re.compile(r"(?<![A-Za-z0-9_*\\])(\*\*|\*|__)(?=[^\s*])([^*\n]*?[^\s*\\])(\1)"
                       r"(?![A-Za-z0-9_*])")
"""Markdown emphasis ("**I prefer** dark mode", "I *always* use tabs", "__Always__ use
tabs"): its delimiters are no words."""
_STRUCK = re.compile(r"(?<!~)~~(?=[^\s~])[^~\n]*?[^\s~]~~(?!~)")
"""Struck-through text ("I prefer ~~tabs~~ spaces"): what the user crossed out."""
_CJK_TEXT = re.compile(r"[\u3040-\u30ff\u3400-\u9fff\uf900-\ufaff]")


def _unemphasise(scan: str, chars: list[str]) -> None:
    """Blank Markdown emphasis delimiters to spaces (a statement reads as its words:
    "**I prefer** dark mode" as "I prefer dark mode"; ``__init__``, a name, keeps
    them) and mask struck-through text whole (the user crossed it out)."""
    for m in _EMPHASIS.finditer(scan):
        if m.group(1) == "__" and " " not in m.group(2) and not m.group(2)[0].isupper():
            continue
        if _CJK_TEXT.search(m.group(2)):
            continue  # a space would split a CJK sentence into clauses: left as it was
        for i in (*range(m.start(1), m.end(1)), *range(m.start(3), m.end(3))):
            chars[i] = " "
    for m in _STRUCK.finditer(scan):
        _blank(chars, m.start(), m.end())


def with_emphasis(text: str, part: str) -> str:
    """``part``, a substring of ``text`` read from the scan where emphasis delimiters
    are blank (:func:`_unemphasise`), widened to the delimiter that opens it when it
    holds the closing one but not the opening one ("I prefer** dark mode." →
    "**I prefer** dark mode."); ``part`` itself otherwise."""
    at = text.find(part)
    for mark in ("**", "__", "*"):
        if at >= len(mark) and text.startswith(mark, at - len(mark)) \
                and part.count(mark) % 2 == 1:
            return text[at - len(mark):at + len(part)]
    return part


_ASIDE = re.compile(r"(?:^|(?<=[.!?:])[ \t]+|(?<=^[ \t]))\((?=[A-Za-z])([^()\n]*[A-Za-z][^()\n]*"
                    r"\s[^()\n]*)\)(?=[ \t]*(?:$|[A-Z(]))", re.M)
"""A sentence said as an aside, wrapped whole in parentheses where a sentence may start
("Can you suggest a recipe? (I'm vegan, by the way.)", "(btw my name is Priya)"): the
brackets are no words, so the statement inside reads as if typed without them."""


def _unbracket(scan: str, chars: list[str]) -> None:
    """Blank the parentheses of each :data:`_ASIDE` to spaces."""
    for m in _ASIDE.finditer(scan):
        chars[m.start(1) - 1] = chars[m.end(1)] = " "


def _blank(chars: list[str], start: int, end: int) -> None:
    for i in range(start, end):
        if chars[i] != "\n":
            chars[i] = MASK


_LINE_RUN = re.compile(r"[^\r\n]+")


def _fill(scan: str, spans: list[tuple[int, int]], ch: str) -> str:
    """``scan`` with each of ``spans`` (in order) filled with ``ch``, line ends kept."""
    parts, at = [], 0
    for start, end in spans:
        if start < at:
            continue
        parts += [scan[at:start], _LINE_RUN.sub(lambda m: ch * len(m.group()), scan[start:end])]
        at = end
    parts.append(scan[at:])
    return "".join(parts)


_EMOJI = "[\U0001F000-\U0001FAFF\u2600-\u27BF\u2B00-\u2BFF\u2300-\u23FF\u3030\u303D\uFE0F\u200D\u20E3]+"
_EMOTICON = (r"(?<!\d)[:;=][-'^]?[)(\]\[DPpOo3/\\|*](?![\w(:/])"
             r"|(?<![A-Za-z0-9])(?:[xX]D|<3|T_T|;_;|-_-|[oO]_[oO])(?!\w)"
             r"|\^[_.o\-\u03c9]?\^+")
_KAOMOJI = (r"[\u30fd\\\u0669]?\((?=[^()\n]*[^\w\s()])(?:[^\w()\n]|[_\u03c9\u0434\u30fc\uff70oO])"
            r"{2,14}\)[\u30ce\uff89/\u06f6]?")
_ADORNMENT = re.compile(
    r"(?<=[\w)\]\uff09\u300d\u300f\"'\u201d%])(?:[ \t]*(?:" + _EMOJI + "|" + _EMOTICON + "|" + _KAOMOJI + r"|[~\u301c]+))+"
    r"(?:(?P<mark>[ \t]*[.,;:!?\u3002\u3001\u2026]+)(?=\s|$|[^\x00-\x7f])|(?=[ \t]*(?:\n|$)))")
"""Emoji, emoticons (":)", "^^"), kaomoji ("(^_^)") and waves ("~") at a clause end:
after a word and before a mark or the end of the line. Mid-clause ("I ❤️ Python") or as
the whole reply ("Li: 👍") they stay."""
_MARK_RUN = re.compile(r"[!?]{2,}(?=\s|$)")


def _mark_once(m: re.Match[str]) -> str:
    return "?" if "?" in m.group() else "!"


def _unadorn(scan: str) -> str:
    """``scan`` with what decorates a clause end (:data:`_ADORNMENT`: "mind 🙏.",
    "上海🙂，", "记住这一点^^") and a repeated "!!"/"??" read as plain prose: the mark
    that ends the clause moves to the last word and spaces fill the rest ("mind.  "),
    so each rule reads a clause end as it reads one written plainly. Length-preserving;
    an item quotes the user's words up to the clause end."""
    def plain(m: re.Match[str]) -> str:
        mark = _MARK_RUN.sub(_mark_once, (m.group("mark") or "").strip())
        return mark + " " * (m.end() - m.start() - len(mark))
    scan = _ADORNMENT.sub(plain, scan)
    return _MARK_RUN.sub(lambda m: _mark_once(m) + " " * (len(m.group()) - 1), scan)


def prepare(text: str) -> str:
    """Return the scan string: width-folded, with non-statements masked (see module doc).

    ``len(prepare(t)) == len(t)`` always holds; the rules rely on it.
    """
    scan = _unadorn(fold_width(text))
    client = client_spans(scan)
    machine = machine_spans(scan) if "\n" in scan or _MAY_BE_MACHINE.match(scan) else []
    # a fiction the user set up, or a claim taken back as a joke: not the user's own
    # statement (frame.py, joke.py), masked as material below
    fiction = frame_spans(scan) + joke_spans(scan)
    if "\n" in scan:  # a pasted block shown only to ask about it ("which of these …?")
        fiction += asked_about_spans(scan)
    if not machine and not client and not fiction and not _MAY_MASK.search(scan) \
            and "*" not in scan and "__" not in scan and "(" not in scan:
        # plain prose: nothing to mask
        return scan.translate(_APOSTROPHES) if "\u2019" in scan else scan
    chars = list(scan)
    for start, end in machine:
        _blank(chars, start, end)
    if "```" in scan or "~~~" in scan:
        for start, end in _fenced_blocks(scan):
            _blank(chars, start, end)
    if ">" in scan:
        for m in _BLOCK_QUOTE.finditer(scan):
            _blank(chars, m.start(), m.end())
    if "*" in scan or "__" in scan or "~~" in scan:
        _unemphasise(scan, chars)
    if "(" in scan:
        _unbracket(scan, chars)
    if "://" in scan:
        for m in _URL.finditer(scan):
            _blank(chars, m.start(), m.start() + len(m.group().rstrip(".,;:!?)]}'\"")))
    if "`" in scan:
        for m in _INLINE_CODE.finditer(scan):
            if " " in m.group(1):
                _blank(chars, m.start(1), m.end(1))
    spans = [m for opener, pattern in _QUOTES if opener in scan for m in pattern.finditer(scan)]
    if "'" in scan:
        spans += [m for m in _SINGLE_QUOTED.finditer(scan)
                  if m.start() == 0 or not (scan[m.start() - 1].isalnum()
                                            or scan[m.start() - 1] in "_'")]
    for m in spans:
        # the frame is a few words right before the quote: look back a bounded
        # window, not the whole line (a long line of quotes would cost its square)
        line_start = scan.rfind("\n", max(0, m.start() - _RULE_FRAME_REACH), m.start()) + 1
        if _RULE_FRAME.search(scan, max(line_start, m.start() - _RULE_FRAME_REACH),
                              m.start()):
            continue
        _blank(chars, m.start(1), m.end(1))
    # Material presented from a source (a page, an email, a README…), its lead included,
    # is masked over any rule frame above: it is not the user's rule (material.py).
    material = material_spans(scan, "".join(chars)) if _MAY_PRESENT.search(scan) else []
    for start, end in material + fiction:
        for i in range(start, end):
            if chars[i] != "\n":
                chars[i] = MATERIAL
    # Typographic apostrophes fold after masking, so "don’t" reads as "don't" while
    # ‘…’ still counted as a quote above.
    # What a client added is blanked last, over any mask above, as if absent: a
    # sentence beside such a block ends where the user's words do ("Fix
    # it.<system-reminder>…" quotes "Fix it.").
    scan = _fill("".join(chars), client, " ") if client else "".join(chars)
    return scan.translate(_APOSTROPHES) if "\u2019" in scan or "\u2018" in scan else scan


# --- language -----------------------------------------------------------------------

_KANA = re.compile(r"[\u3040-\u30ff\uff66-\uff9f]")
_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z]")


_EN_FRAME_START = re.compile(r"\W*(?:i|i'm|i've|my|we|we're|our|the|this|it's|you|your)\b", re.I)
_EN_FUNCTION = re.compile(r"\b(?:i|i'm|i've|my|me|we|our|is|are|am|was|the|a|an|in|at|on|to"
                          r"|of|for|with|and|as|from|by)\b", re.I)


def _english_frame(text: str) -> bool:
    """Whether English words carry a sentence that holds Chinese names or phrases: it
    opens with an English pronoun or article and holds two English function words
    ("I live in 北京.", "I'm learning 中文, and my teacher says 我的发音很好."); a sentence
    that opens in Chinese ("我们用 GitHub Actions 做 CI") never is."""
    head = text.lstrip()
    return bool(_EN_FRAME_START.match(head)) and len(_EN_FUNCTION.findall(head)) >= 2


def detect_lang(text: str, default: str = "en") -> str:
    """Dominant script of ``text``: ``"ja"`` when kana are present in earnest, ``"zh"``
    when Han characters carry the sentence, else ``"en"``; ``default`` when no letters.

    Kana never occur in Chinese, so a tenth of the CJK characters being kana is decisive,
    unless Latin letters outnumber the CJK characters more than fourfold (an English
    sentence quoting a Japanese form: "Give me 10 example sentences using ~てしまう.");
    Han characters win over Latin when they are at least a quarter as many (CJK packs a
    word into one or two characters: "我们用 GitHub Actions 做 CI" is Chinese), unless
    English words frame the sentence (:func:`_english_frame`: "I live in 北京.").
    """
    if text.isascii():
        return "en" if _LATIN.search(text) else default
    kana = len(_KANA.findall(text))
    han = len(_HAN.findall(text))
    latin = len(_LATIN.findall(text))
    if kana and kana * 10 >= kana + han and latin <= 4 * (kana + han):
        return "ja"
    if han >= 2 and han * 4 >= latin and not _english_frame(text):
        return "zh"
    if han and not latin:
        return "zh"
    if latin:
        return "en"
    return default
