"""Print the README's configuration table (markdown) from the settings and default.toml.

Names, environment variables and defaults come from ``proxy.settings``; the
meaning of each key is the comment above it in ``config/default.toml``. Paste the
output into README.md ("Configuration") after adding or changing a key::

    python docs/config_table.py > /tmp/table.md

tests/test_default_toml.py fails while a key is missing from the README.
"""

from __future__ import annotations

import dataclasses
import re
import sys
import tomllib
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from proxy.settings import ENV_ALIASES, SECTIONS  # noqa: E402


def _comments(path: Path) -> dict[tuple[str, str], str]:
    """Return ``{(section, key): comment text}`` from the comment lines above each key."""
    out: dict[tuple[str, str], str] = {}
    section, pending = "", []
    for line in path.read_text(encoding="utf-8").splitlines():
        stripped = line.strip()
        if m := re.match(r"^\[([a-z_]+)\]$", stripped):
            section, pending = m.group(1), []
        elif stripped.startswith("#"):
            pending.append(stripped.lstrip("#").strip())
        elif m := re.match(r"^([a-z_]+)\s*=", stripped):
            out[(section, m.group(1))] = " ".join(p for p in pending if p)
            pending = []
        else:
            pending = []
    return out


def _literal(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return repr(value)


def table() -> str:
    """Return the markdown table: key, environment variable(s), default, meaning."""
    notes = _comments(ROOT / "config" / "default.toml")
    aliases = {v: k for k, v in ENV_ALIASES.items()}
    with (ROOT / "config" / "default.toml").open("rb") as fh:
        tomllib.load(fh)  # fail loudly on a broken file
    rows = ["| key | environment | default | meaning |", "|---|---|---|---|"]
    for section, cls in SECTIONS.items():
        for f in dataclasses.fields(cls):
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory()
            env = f"`LCM_{section.upper()}__{f.name.upper()}`"
            if (section, f.name) in aliases:
                env += f", `{aliases[(section, f.name)]}`"
            meaning = notes.get((section, f.name), "").replace("|", "\\|")
            rows.append(f"| `{section}.{f.name}` | {env} | `{_literal(default)}` | {meaning} |")
    return "\n".join(rows)


if __name__ == "__main__":
    print(table())
