"""The example configurations load cleanly. config/default.toml itself (every key,
its default, the range and choices its comment states) and docs/configuration.md
are tied to the settings' declarations by tests/test_settings_declared.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from proxy.settings import load_settings

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = sorted((ROOT / "config" / "examples").glob("*.toml"))


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_loads_without_warnings(path: Path) -> None:
    settings = load_settings(path, environ={})
    assert settings.warnings == ()


def test_examples_exist() -> None:
    assert {p.name for p in EXAMPLES} >= {"sidecar.toml", "local-dev.toml"}
