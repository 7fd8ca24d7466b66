"""Statements inside a fiction the user sets up: role-play, a story, a game of pretend.

"Let's role-play: you're a ship's captain and I'm a smuggler named Vex. I live on
Tortuga and I hate the navy." stored "I live on Tortuga" as the user's fact, shown in
later, unrelated conversations (docs/evaluation/memory_replays.md, class 63). What the
user says inside such a frame is a character's line, not the user's fact, rule or
preference: :func:`frame_spans` finds it, and ``prepare`` masks it as material (no item;
the message stays evidence, searchable and summarised, so nothing is lost).

A frame opens with a cue that sets up a fiction:

* a role-play, a story or a game named: "Let's role-play", "role-play with me",
  "Let's pretend", "in this story", "in our campaign", "as my character", "my character
  is", "in character"; 角色扮演, 在这个故事里, 我的角色是; ロールプレイ, なりきり,
  …ごっこ, …という設定で (said after what it frames, so its whole sentence is inside);
* "pretend", "imagine", "suppose" (假设, 假装, 想象; ふりをして) only when the user takes a
  role in the same sentence ("Imagine I'm a billionaire", "Pretend you're my landlord
  and I'm a tenant", 假设你是船长，我是走私犯): "Imagine you're a senior reviewer." gives
  the assistant a persona and leaves the user's own facts after it theirs.

**How long a frame lasts.** From the start of the sentence holding the cue to the end of
the message, unless the user leaves it first with an exit cue ("OK, out of character:",
"OOC:", "back to reality", "in real life", "seriously though", "for real", "joking
aside"; 出戏, 不演了, 说正经的, 言归正传, 现实中; ロールプレイ終わり, 素に戻って, 真面目な話,
現実では): what follows the exit cue is the user's own again ("OK, out of character: I
actually live in Lyon." is a fact, quoted without its cue). An explicit exit ("out of
character", "OOC", 出戏, 素に戻って) opening a sentence is masked as a lead even with no
frame open in the message (the frame was set up in an earlier turn). A frame does not
carry over to the user's later messages: extraction reads one message, and a
role-play's later turns without a cue of their own are left (the module is pure; a
thread's frame would need the thread's earlier turns).

Every pattern is bounded; the scan is linear in the message.
"""

from __future__ import annotations

import re

from memory_core.extraction.cue import lacks
from memory_core.extraction.modality import EXCLAIMED

_I_ROLE_EN = r"(?:\bi(?:'m|\s+am|\s+was|\s+were|'ll\s+be|\s+will\s+be|\s+play|\s+have)\b|\bmy\b)"
_OPEN_EN = re.compile(
    r"\blet'?s\s+(?:do\s+(?:a|some)\s+|play\s+(?:a\s+)?)?(?:role[\s-]?play|rp\b|pretend|play\s+make[\s-]believe)"
    r"|\brole[\s-]?play(?:ing)?\s*(?::|with\s+me|time\b|game\b|scenario\b)"
    r"|\b(?:we(?:'re|\s+are)|i'm|i\s+am)\s+(?:role[\s-]?playing|playing\s+pretend)"
    r"|\b(?:in|for)\s+(?:this|our|the|my)\s+(?:story|tale|fiction|role[\s-]?play|campaign"
    r"|fantasy|make[\s-]believe)\b"
    r"|\bas\s+my\s+character\b|\bmy\s+character(?:'s|\s+is|\s+has|\s+lives)\b"
    r"|\b(?:stay|staying|stay\s+in|be|speak|answer)\s+in\s+character\b"
    r"|\b(?:pretend|imagine|suppose|picture)\b(?!\s+(?-i:(?!I\b|I['\u2019])[A-Z]))"
    r"(?!\s+(?:my|our)\s+" + EXCLAIMED + r")"
    r"(?=[^.!?\n]{0,120}?" + _I_ROLE_EN + r")",
    re.I)
"""English frame cues (module doc); "pretend/imagine" need the user's role in the same
sentence (the lookahead, bounded), and not a name after them ("Imagine Dragons is my
favorite band")."""
_OPEN_ZH = re.compile(
    r"角色扮演|扮演(?:一下|游戏)|在(?:这个|我们的)?故事(?:里|中)|我的角色是|过家家"
    r"|(?:假设|假装|想象(?:一下)?|设想)(?=[^。！？!?\n]{0,60}?我(?:是|扮演|演|当))")
_OPEN_JA = re.compile(
    r"ロール\s?プレ(?:イ)?|なりきり|ごっこ|(?:という|って|の)設定で|物語の中で|この(?:話|物語)では"
    r"|私の役は|(?:ふりをして|フリをして)(?=[^。！？!?\n]{0,60}?(?:私|僕|俺)(?:は|が))")
_OPEN_EN_NEEDLES = ("role", "rp", "pretend", "play", "story", "tale", "fiction", "campaign",
                    "fantasy", "make", "character", "imagine", "suppose", "picture")
"""Every :data:`_OPEN_EN` match holds one of these (a gate before the pattern)."""

_EXIT_EN = re.compile(
    r"\(?\b(?:ooc|out\s+of\s+character|(?:end|stop|pause|drop|break)(?:ping)?\s+(?:the\s+)?"
    r"(?:role[\s-]?play(?:ing)?|game|story|pretending|character)"
    r"|(?:back\s+to\s+reality|in\s+real\s+life|irl|seriously(?:\s+though)?|for\s+real(?:\s+though)?"
    r"|real\s+talk|(?:all\s+)?jok(?:ing|es)\s+aside))\b\)?\s*[:,.!\u2014-]*\s*", re.I)
_EXIT_CJK = re.compile(
    r"(?:出戏|不演了|角色扮演结束|说正经的|言归正传|回到现实|现实中|现实里|认真说"
    r"|ロール\s?プレ(?:イ)?(?:は|を)?(?:終わり|おわり|終了|やめ(?:て|ます|よう))|設定は(?:ここまで|終わり)"
    r"|素に戻(?:って|ると|ります)|真面目な話|現実では|リアルでは)[\s:：,，、。.!！]*")
_EXIT_EN_NEEDLES = ("ooc", "out", "end", "stop", "pause", "drop", "break", "back", "real",
                    "irl", "serious", "jok")
"""Every :data:`_EXIT_EN` match holds one of these (a gate before the pattern)."""
_EXPLICIT_EXIT = re.compile(r"ooc|out\s+of\s+character|出戏|不演了|素に戻|ロール", re.I)
"""Exits that name the fiction left: masked as a lead even with no frame in the message."""
_FILLER = re.compile(r"^[\W_]*(?:(?:ok(?:ay)?|alright|all\s+right|anyway|but|so|and|well"
                     r"|好|好吧|那么|じゃあ|では|さて)[\W_]*)*$", re.I)
"""What may stand before an exit cue in its sentence: fillers and punctuation."""
_SENTENCE_END = re.compile(r"[.!?\u3002\uff01\uff1f\n]")
_REACH = 4000
"""Characters read for cues (a role-play set-up is said near a message's start)."""


def _sentence_start(scan: str, at: int) -> int:
    i = at
    while i > 0 and not _SENTENCE_END.match(scan, i - 1):
        i -= 1
    return i


def _patterns(scan: str) -> tuple[tuple[re.Pattern[str], ...], tuple[re.Pattern[str], ...]]:
    """The open and exit patterns that can match in ``scan``: the English ones only
    when a needle of theirs is there, the Chinese and Japanese ones only in a text
    that is not all ASCII (same matches, less work: issue 28)."""
    low = scan.lower()
    cjk = not scan.isascii()
    opens = tuple(p for p, keep in ((_OPEN_EN, not lacks(scan, _OPEN_EN_NEEDLES, low)),
                                    (_OPEN_ZH, cjk), (_OPEN_JA, cjk)) if keep)
    exits = tuple(p for p, keep in ((_EXIT_EN, not lacks(scan, _EXIT_EN_NEEDLES, low)),
                                    (_EXIT_CJK, cjk)) if keep)
    return opens, exits


def _exit(scan: str, pos: int, exits: tuple[re.Pattern[str], ...]) -> re.Match[str] | None:
    found = [m for m in (p.search(scan, pos) for p in exits) if m is not None]
    return min(found, key=lambda m: m.start()) if found else None


def _open(scan: str, pos: int, stop: int,
          opens: tuple[re.Pattern[str], ...]) -> re.Match[str] | None:
    found = [m for m in (p.search(scan, pos, stop) for p in opens) if m is not None]
    return min(found, key=lambda m: m.start()) if found else None


def frame_spans(scan: str) -> list[tuple[int, int]]:
    """Spans of ``scan`` (width-folded text) said inside a fiction frame, exit cues
    included (module doc), as ``(start, end)`` offsets in order; empty for a message
    that sets up no frame and leaves none."""
    spans: list[tuple[int, int]] = []
    pos, stop = 0, min(len(scan), _REACH)
    opens, exits = _patterns(scan)
    if not opens and not exits:
        return spans
    while pos < stop:
        opened = _open(scan, pos, stop, opens)
        leave = _exit(scan, pos, exits)
        if leave is not None and leave.start() >= stop:
            leave = None
        if leave is not None and (opened is None or leave.start() < opened.start()):
            # an exit with no frame open in this message: only an explicit one,
            # opening its sentence, is a lead (the frame was set up earlier)
            start = _sentence_start(scan, leave.start())
            if _EXPLICIT_EXIT.search(leave.group()) and _FILLER.match(scan[start:leave.start()]):
                spans.append((start, leave.end()))
            pos = max(leave.end(), pos + 1)
            continue
        if opened is None:
            break
        start = _sentence_start(scan, opened.start())
        leave = _exit(scan, opened.end(), exits)
        end = len(scan) if leave is None else leave.end()
        spans.append((start, end))
        pos = end
    return spans
