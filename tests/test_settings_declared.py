"""Each setting's range and choices are declared once, in proxy/settings.py (field
metadata); what repeats them must agree (issue 25): the comment above the key in
config/default.toml (which docs/configuration.md shows), and the clamp ranges of
memory_core/config.py (memory_core cannot import proxy). Keys, defaults and the
generated page are tied in tests/test_default_toml.py."""

from __future__ import annotations

import dataclasses
import importlib.util
import re
from pathlib import Path
from typing import Any

from memory_core import config as memory_config
from proxy.settings import SECTIONS

ROOT = Path(__file__).resolve().parent.parent
_NUM = r"-?\d[\d_]*(?:\.\d+)?(?:e\d+)?"


def _notes() -> dict[tuple[str, str], str]:
    spec = importlib.util.spec_from_file_location("config_table", ROOT / "docs" / "config_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    notes: dict[tuple[str, str], str] = module._comments(ROOT / "config" / "default.toml")
    return notes


def _fields() -> list[tuple[str, dataclasses.Field[Any]]]:
    return [(section, f) for section, cls in SECTIONS.items() for f in dataclasses.fields(cls)]


def test_every_range_in_default_toml_is_the_settings_range() -> None:
    notes = _notes()
    wrong = []
    for section, f in _fields():
        stated = re.findall(rf"Range ({_NUM})\s*-\s*({_NUM})", notes[(section, f.name)])
        declared = f.metadata.get("range")
        if declared is None:
            if stated:
                wrong.append(f"{section}.{f.name}: states a range, has none")
            continue
        values = tuple(float(x.replace("_", "")) for x in stated[-1]) if stated else None
        if values != tuple(float(x) for x in declared):
            wrong.append(f"{section}.{f.name}: comment says {stated}, settings {declared}")
    assert not wrong, "\n".join(wrong)


def test_every_choice_is_named_in_default_toml() -> None:
    notes = _notes()
    wrong = [f"{section}.{f.name}: {choice}" for section, f in _fields()
             for choice in f.metadata.get("choices", ())
             if not re.search(rf"\b{re.escape(choice)}\b", notes[(section, f.name)])]
    assert not wrong, "choices the comment does not name:\n" + "\n".join(wrong)


def test_memory_core_clamps_to_the_settings_ranges() -> None:
    ranges = {f.name: f.metadata["range"] for _section, f in _fields() if "range" in f.metadata}
    clamps = {**memory_config._RANGES, **memory_config._COMPACTION_RANGES}
    assert clamps, "memory_core/config.py declares its clamp ranges"
    wrong = {name: (clamp, ranges.get(name)) for name, clamp in clamps.items()
             if ranges.get(name) is None
             or tuple(map(float, clamp)) != tuple(map(float, ranges[name]))}
    assert not wrong, f"memory_core clamp vs settings range: {wrong}"
