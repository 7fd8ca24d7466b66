"""Worst-case CPU time of every compiled regex in ``memory_core``, and of ``extract()``.

Walks every module of ``memory_core``, collects the ``re.Pattern`` objects bound at
module level (also inside module-level tuples, lists, frozensets and dict values) and as
class attributes, and runs each through ``finditer`` to the end (the most a caller can
ask of it), or through ``match`` where a private pattern's module calls it only by
``match``/``fullmatch`` (anchored: one start, however it is scanned), on pathological inputs
of 5 and 20 KB: runs of digits, spaces, tabs, newlines, letters, a long word, repeated
punctuation, "a " / "1 " / "1," / "1." units, CJK, base64, hex, a Markdown table and
nested brackets. A pattern whose 20 KB time is more than ``RATIO`` times its 5 KB time
(linear is x4), and whose 100 KB time, where run, is more than ``2 * RATIO`` times its
20 KB time (linear is x5), or that takes over 0.2 s at 20 KB, is reported with its
module and name. 100 KB is run only where 20 KB grew faster than linear and the 100 KB
time is predicted under ``CAP`` seconds. ``--extract`` also times the public
``memory_core.extraction.extract`` on each input at 5, 20 and 100 KB.

    PYTHONPATH=$PWD python docs/evaluation/regex_worst.py            # patterns
    PYTHONPATH=$PWD python docs/evaluation/regex_worst.py --extract  # and extract()
    PYTHONPATH=$PWD python docs/evaluation/regex_worst.py --only readings

Output: one line per offender (``module.NAME  input  5KB 20KB 100KB ratio``), then a
count. Times are ``time.process_time`` seconds on one core.
"""

from __future__ import annotations

import argparse
import importlib
import math
import pkgutil
import random
import re
import time
from collections.abc import Callable, Iterator

import memory_core

RATIO = 6.0  # 20 KB / 5 KB; linear is 4, quadratic 16
FLOOR = 0.002  # s at 20 KB under which growth is noise
CAP = 20.0  # s: a 100 KB run predicted longer than this is not made

_B64 = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"


def _random(alphabet: str, n: int) -> str:
    rng = random.Random(n)
    return "".join(rng.choice(alphabet) for _ in range(n))


def _table(n: int) -> str:
    head = "| id | name | size | note |\n|---|---|---|---|\n"
    rows: list[str] = []
    i = 0
    while len(head) + sum(len(row) for row in rows) < n:
        rows.append(f"| {i} | item{i} | {i * 7 % 1000} KB | ok |\n")
        i += 1
    return (head + "".join(rows))[:n]


def _repeat(unit: str) -> Callable[[int], str]:
    return lambda n: (unit * (n // len(unit) + 1))[:n]


INPUTS: dict[str, Callable[[int], str]] = {
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
    "base64": lambda n: _random(_B64, n),
    "hex": lambda n: _random("0123456789abcdef", n),
    "table": _table,
    "brackets": lambda n: "(" * (n // 4) + "[{" * (n // 8) + "}]" * (n // 8) + ")" * (n // 4),
}


def patterns(only: str = "", start: str = "") -> Iterator[tuple[str, re.Pattern[str]]]:
    """("module name", pattern) for each distinct compiled regex in ``memory_core``."""
    seen: set[int] = set()
    mods = [memory_core.__name__] + [
        m.name for m in pkgutil.walk_packages(memory_core.__path__, "memory_core.")]
    for name in sorted(mods):
        if only and only not in name or name < start:
            continue
        try:
            mod = importlib.import_module(name)
        except Exception:  # noqa: BLE001 - an optional backend missing here
            continue
        for key, value in sorted(vars(mod).items()):
            holders = [(key, value)]
            if isinstance(value, type) and value.__module__ == name:
                holders = [(f"{key}.{k}", v) for k, v in vars(value).items()]
            for label, obj in holders:
                found: list[tuple[str, object]] = [(label, obj)]
                if isinstance(obj, (tuple, list, frozenset, set)):
                    found = [(f"{label}[{i}]", o) for i, o in enumerate(obj)]
                elif isinstance(obj, dict):
                    found = [(f"{label}[{k!r}]", o) for k, o in obj.items()]
                for qual, pat in found:
                    if isinstance(pat, re.Pattern) and isinstance(pat.pattern, str) \
                            and id(pat) not in seen:
                        seen.add(id(pat))
                        yield f"{name.removeprefix('memory_core.')} {qual}", pat


def _anchored(module: str, qual: str) -> bool:
    """Whether the source of ``memory_core`` calls the pattern named ``qual`` only by
    ``match``/``fullmatch`` (anchored at one position): then that is the call timed."""
    name = re.escape(qual.split(".")[-1])
    if "[" in qual or not name.startswith("_"):  # in a container, or public: any call
        return False
    path = importlib.import_module("memory_core." + module).__file__ or ""
    with open(path, encoding="utf-8") as f:
        src = f.read()
    calls = set(re.findall(name + r"\.(\w+)\(", src))
    return bool(calls) and calls <= {"match", "fullmatch"}


def _time(fn: Callable[[str], object], text: str) -> float:
    t = time.process_time()
    fn(text)
    return time.process_time() - t


def _grow(fn: Callable[[str], object], make: Callable[[int], str]
          ) -> tuple[float, float, float | None]:
    """Seconds at 5, 20 and (when predicted under ``CAP``) 100 KB."""
    t1 = _time(fn, make(1_000))
    if t1 * 125 > CAP:  # cubic from 1 to 5 KB: not run further
        return t1 * 125, math.inf, None
    t5 = _time(fn, make(5_000))
    if t5 * 16 > CAP:
        return t5, t5 * 16, None
    t20 = _time(fn, make(20_000))
    power = math.log(max(t20, 1e-6) / max(t5, 1e-6), 4)
    if t20 * 5 ** max(power, 1.0) > CAP or t20 < FLOOR or power < 1.3:
        return t5, t20, None  # too long to run, or linear at 20 KB already
    return t5, t20, _time(fn, make(100_000))


def _row(label: str, kind: str, t5: float, t20: float, t100: float | None) -> str:
    big = "   skipped" if t100 is None else f"{t100:9.3f}s"
    ratio = t20 / max(t5, 1e-6)
    return f"{label:<58} {kind:<9} {t5:8.3f}s {t20:8.3f}s {big} x{ratio:5.1f}"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--extract", action="store_true", help="also time extract()")
    ap.add_argument("--only", default="", help="modules whose name holds this")
    ap.add_argument("--start", default="", help="skip modules sorted before this name")
    args = ap.parse_args()
    offenders = total = 0
    for label, pat in patterns(args.only, "memory_core." + args.start if args.start else ""):
        total += 1
        module, qual = label.split(" ")
        label = f"{module}.{qual}"
        if _anchored(module, qual):
            call, scan = "match", lambda s, p=pat: p.match(s)
        else:
            call, scan = "finditer", lambda s, p=pat: sum(1 for _ in p.finditer(s))
        for kind, make in INPUTS.items():
            t5, t20, t100 = _grow(scan, make)
            grows = t20 > FLOOR and t20 > RATIO * max(t5, 1e-6) \
                and (t100 is None or t100 > 2 * RATIO * t20)  # 100 KB confirms it
            if grows or t20 > 0.2:
                offenders += 1
                print(_row(label, kind, t5, t20, t100), call, flush=True)
    print(f"patterns {total}  offenders {offenders}", flush=True)
    if args.extract:
        from memory_core.extraction import extract

        for kind, make in INPUTS.items():
            t5, t20, t100 = _grow(extract, make)
            print(_row("extraction.extract", kind, t5, t20, t100), flush=True)


if __name__ == "__main__":
    main()
