"""Settings: defaults < TOML file < environment < overrides; clamps warn; bad types fail."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from proxy.settings import Settings, SettingsError, load_settings


def write(tmp_path: Path, text: str, name: str = "lcm.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_without_any_source() -> None:
    s = load_settings(None, environ={})
    assert s.proxy.port == 8787
    assert s.proxy.host == "127.0.0.1"
    assert s.proxy.upstream == "https://api.openai.com/v1"
    assert s.proxy.max_body_bytes == 32 * 1024 * 1024
    assert s.capture.enabled is True
    assert s.warnings == () and s.config_file is None


def test_precedence_defaults_file_env_overrides(tmp_path: Path) -> None:
    toml = write(tmp_path, """
        [proxy]
        port = 9001
        host = "0.0.0.0"
        upstream = "http://file.example/v1/"
        read_timeout_seconds = 120.5
        [storage]
        data_dir = "/from/file"
        [capture]
        store_raw_json = false
    """)
    only_file = load_settings(toml, environ={})
    assert (only_file.proxy.port, only_file.proxy.host) == (9001, "0.0.0.0")
    assert only_file.proxy.upstream == "http://file.example/v1"  # trailing slash removed
    assert only_file.proxy.read_timeout_seconds == 120.5
    assert only_file.capture.store_raw_json is False
    assert only_file.proxy.connect_timeout_seconds == 10.0  # untouched default
    assert only_file.config_file == str(toml)

    env = {"LCM_PORT": "9002", "LCM_DATA_DIR": "/from/env",
           "LCM_CAPTURE__STORE_RAW_JSON": "yes"}
    with_env = load_settings(toml, environ=env)
    assert with_env.proxy.port == 9002
    assert with_env.proxy.host == "0.0.0.0"  # the file still applies where env is silent
    assert with_env.storage.data_dir == "/from/env"
    assert with_env.capture.store_raw_json is True

    flags = load_settings(toml, environ=env, overrides={
        "proxy": {"port": 9003, "host": None}, "storage": {"data_dir": "/from/flag"}})
    assert flags.proxy.port == 9003
    assert flags.proxy.host == "0.0.0.0"  # a flag left at None does not override
    assert flags.storage.data_dir == "/from/flag"


def test_config_file_from_lcm_config(tmp_path: Path) -> None:
    toml = write(tmp_path, "[proxy]\nport = 7000\n")
    s = load_settings(None, environ={"LCM_CONFIG": str(toml)})
    assert s.proxy.port == 7000 and s.config_file == str(toml)
    assert s.warnings == ()


@pytest.mark.parametrize("order", ["alias-first", "nested-first"])
def test_nested_env_name_wins_over_its_alias_in_any_order(order: str) -> None:
    pairs = [("LCM_PORT", "9100"), ("LCM_PROXY__PORT", "9200")]
    env = dict(pairs if order == "alias-first" else reversed(pairs))
    assert load_settings(None, environ=env).proxy.port == 9200


def test_env_nesting_and_types() -> None:
    s = load_settings(None, environ={
        "LCM_PROXY__CONNECT_TIMEOUT_SECONDS": "2.5",
        "LCM_PROXY__UPSTREAM_API_KEY": "sk-env",
        "LCM_CAPTURE__ENABLED": "off",
        "LCM_LOG__JSON": "0",
        "LCM_UPSTREAM": "http://127.0.0.1:1234/v1",
        "OTHER_VARIABLE": "ignored",
    })
    assert s.proxy.connect_timeout_seconds == 2.5
    assert s.proxy.upstream_api_key == "sk-env"
    assert s.capture.enabled is False and s.log.json is False
    assert s.proxy.upstream == "http://127.0.0.1:1234/v1"
    assert s.warnings == ()


@pytest.mark.parametrize("value,expected", [("-5", 0), ("70000", 65535)])
def test_clamping_warns(value: str, expected: int) -> None:
    s = load_settings(None, environ={"LCM_PORT": value})
    assert s.proxy.port == expected
    (warning,) = s.warnings
    assert "proxy.port" in warning and str(expected) in warning


def test_clamping_from_file_and_overrides(tmp_path: Path) -> None:
    toml = write(tmp_path, "[proxy]\nmax_body_bytes = 10\nconnect_timeout_seconds = 0.0\n")
    s = load_settings(toml, environ={}, overrides={"proxy": {"max_connections": 0}})
    assert s.proxy.max_body_bytes == 1024
    assert s.proxy.connect_timeout_seconds == 0.1
    assert s.proxy.max_connections == 1
    assert len(s.warnings) == 3
    assert {w.split("=")[0] for w in s.warnings} == {
        "proxy.max_body_bytes", "proxy.connect_timeout_seconds", "proxy.max_connections"}


def test_unknown_keys_are_warnings_not_errors(tmp_path: Path) -> None:
    toml = write(tmp_path, """
        [proxy]
        port = 9001
        prot = 9002
        [not_a_section]
        x = 1
        [storage]
        data_dir = "/d"
    """)
    s = load_settings(toml, environ={"LCM_PROXY__NOPE": "1", "LCM_WHATEVER__X": "1",
                                     "LCM_PROT": "1"},
                      overrides={"proxy": {"bogus": 1}})
    assert s.proxy.port == 9001 and s.storage.data_dir == "/d"
    text = "\n".join(s.warnings)
    for name in ("proxy.prot", "not_a_section", "proxy.nope", "whatever", "LCM_PROT",
                 "proxy.bogus"):
        assert name in text, name
    assert len(s.warnings) == 6


def test_a_section_that_is_not_a_table_is_a_warning(tmp_path: Path) -> None:
    s = load_settings(write(tmp_path, 'proxy = "oops"\n'), environ={})
    assert s.proxy == load_settings(None, environ={}).proxy
    assert len(s.warnings) == 1 and "proxy" in s.warnings[0]


@pytest.mark.parametrize("source,section,key,value", [
    ("env", "proxy", "port", "eighty"),
    ("env", "proxy", "port", "80.5"),
    ("env", "capture", "enabled", "maybe"),
    ("env", "proxy", "read_timeout_seconds", "soon"),
    ("env", "proxy", "read_timeout_seconds", "nan"),
    ("toml", "proxy", "port", '"8080"x'),  # not TOML at all
    ("toml", "proxy", "port", "8787.9"),   # would be silently truncated
    ("toml", "proxy", "port", "true"),
    ("toml", "proxy", "host", "5"),
    ("toml", "capture", "enabled", "1"),
    ("override", "proxy", "port", [1]),
    ("override", "proxy", "upstream", "ftp://nope"),
])
def test_bad_types_raise_settings_error(
    tmp_path: Path, source: str, section: str, key: str, value: object
) -> None:
    with pytest.raises(SettingsError):
        if source == "env":
            load_settings(None, environ={f"LCM_{section.upper()}__{key.upper()}": value})
        elif source == "toml":
            load_settings(write(tmp_path, f"[{section}]\n{key} = {value}\n"), environ={})
        else:
            load_settings(None, environ={}, overrides={section: {key: value}})


def test_integral_floats_and_strings_are_accepted(tmp_path: Path) -> None:
    s = load_settings(write(tmp_path, "[proxy]\nport = 9000.0\n"), environ={
        "LCM_PROXY__MAX_CONNECTIONS": " 64 "})
    assert s.proxy.port == 9000 and isinstance(s.proxy.port, int)
    assert s.proxy.max_connections == 64


def test_missing_or_broken_file_raises(tmp_path: Path) -> None:
    with pytest.raises(SettingsError, match="cannot read"):
        load_settings(tmp_path / "absent.toml", environ={})
    with pytest.raises(SettingsError, match="not valid TOML"):
        load_settings(write(tmp_path, "[proxy\nport = 1\n"), environ={})


def test_settings_are_frozen_and_secrets_redacted() -> None:
    s = load_settings(None, environ={"LCM_UPSTREAM_API_KEY": "sk-secret-value",
                                     "LCM_ADMIN_TOKEN": "admin-secret"})
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.proxy.port = 1  # type: ignore[misc]
    public = s.public_dict()
    assert public["proxy"]["upstream_api_key"] == "***"
    assert public["proxy"]["admin_token"] == "***"
    assert "sk-secret-value" not in repr(public)
    assert isinstance(s, Settings)


def test_storage_memory_limits_reach_every_sqlite_connection(tmp_path: Path) -> None:
    """``storage.sqlite_cache_kib`` sets the page cache of the writer and of every
    reader connection (the statement-cache bound travels with it)."""
    from memory_core.engine import Engine

    s = load_settings(None, environ={"LCM_STORAGE__SQLITE_CACHE_KIB": "1024",
                                     "LCM_STORAGE__SQLITE_STATEMENT_CACHE": "4"})
    cfg = s.memory_config()
    assert (cfg.sqlite_cache_kib, cfg.sqlite_statement_cache) == (1024, 4)
    engine = Engine(tmp_path / "d", cfg)
    try:
        def cache_size(c: object) -> int:
            return int(c.execute("PRAGMA cache_size").fetchone()[0])  # type: ignore[attr-defined]

        assert engine.store.read(cache_size) == -1024
        assert engine.store.write_sync(cache_size) == -1024
        assert engine.store._limits == (1024, 4)
    finally:
        engine.close()
