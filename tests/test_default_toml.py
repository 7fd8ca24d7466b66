"""config/default.toml documents every setting, with the built-in default, and the
examples load cleanly. When a section or key is added to proxy/settings.py, these
tests fail until default.toml (and docs/configuration.md, generated from it) say so."""

from __future__ import annotations

import dataclasses
import importlib.util
import re
import tomllib
from pathlib import Path
from typing import Any

import pytest

from proxy.settings import SECTIONS, default_toml_keys, load_settings

ROOT = Path(__file__).resolve().parent.parent
DEFAULT = ROOT / "config" / "default.toml"
EXAMPLES = sorted((ROOT / "config" / "examples").glob("*.toml"))


def _default_of(f: dataclasses.Field[Any]) -> Any:
    if f.default is not dataclasses.MISSING:
        return f.default
    assert f.default_factory is not dataclasses.MISSING, f.name
    return f.default_factory()


def _load() -> dict[str, Any]:
    with DEFAULT.open("rb") as fh:
        return tomllib.load(fh)


def test_default_toml_parses() -> None:
    data = _load()
    assert all(isinstance(v, dict) for v in data.values())


def test_default_toml_keys_equal_settings_keys() -> None:
    data = _load()
    documented = {section: set(values) for section, values in data.items()}
    expected = default_toml_keys()
    assert set(documented) == set(expected), "sections differ from proxy.settings.SECTIONS"
    for section, keys in expected.items():
        missing, extra = keys - documented[section], documented[section] - keys
        assert not missing and not extra, f"[{section}] missing {missing}, unknown {extra}"


def test_default_toml_values_equal_dataclass_defaults() -> None:
    data = _load()
    for section, cls in SECTIONS.items():
        for f in dataclasses.fields(cls):
            value, default = data[section][f.name], _default_of(f)
            assert type(value) is type(default), f"{section}.{f.name}: {value!r} vs {default!r}"
            assert value == default, f"{section}.{f.name}: {value!r} != default {default!r}"


def test_default_toml_every_key_has_a_comment() -> None:
    lines = DEFAULT.read_text(encoding="utf-8").splitlines()
    for i, line in enumerate(lines):
        if re.match(r"^[a-z_]+\s*=", line):
            assert i > 0 and lines[i - 1].startswith("#"), f"no comment above: {line}"


def test_default_toml_loads_to_the_defaults_without_warnings() -> None:
    settings = load_settings(DEFAULT, environ={})
    assert settings.warnings == ()
    bare = load_settings(None, environ={})
    for section in SECTIONS:
        assert getattr(settings, section) == getattr(bare, section)


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_example_loads_without_warnings(path: Path) -> None:
    settings = load_settings(path, environ={})
    assert settings.warnings == ()


def test_examples_exist() -> None:
    assert {p.name for p in EXAMPLES} >= {"sidecar.toml", "local-dev.toml"}


def test_configuration_page_lists_every_key() -> None:
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    for section, keys in default_toml_keys().items():
        for key in keys:
            assert f"`{section}.{key}`" in page, f"docs/configuration.md lacks {section}.{key}"


def test_configuration_page_is_current() -> None:
    spec = importlib.util.spec_from_file_location("config_table", ROOT / "docs" / "config_table.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    page = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert page == module.page(), (
        "docs/configuration.md is stale: run `python docs/config_table.py --write`")
