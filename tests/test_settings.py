"""Settings: defaults < TOML file < environment < overrides; unknown keys, bad types and
out-of-range values are refused, naming the source."""

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


@pytest.mark.parametrize("value", ["-5", "70000"])
def test_out_of_range_from_the_environment_is_refused(value: str) -> None:
    with pytest.raises(SettingsError) as err:
        load_settings(None, environ={"LCM_PORT": value})
    assert str(err.value) == (f"environment variable LCM_PORT: proxy.port = {int(value)} is"
                              " outside the allowed range 0..65535")


@pytest.mark.parametrize("source", ["file", "override"])
def test_out_of_range_from_a_file_or_flag_is_refused(tmp_path: Path, source: str) -> None:
    toml = write(tmp_path, "[proxy]\nconnect_timeout_seconds = 0.0\n")
    with pytest.raises(SettingsError) as err:
        if source == "file":
            load_settings(toml, environ={})
        else:
            load_settings(None, environ={}, overrides={"proxy": {"max_connections": 0}})
    text = str(err.value)
    if source == "file":
        assert text == (f"{toml}: proxy.connect_timeout_seconds = 0.0 is outside the allowed"
                        " range 0.1..300.0")
    else:
        assert text == ("command line: proxy.max_connections = 0 is outside the allowed"
                        " range 1..100000")


def test_the_bounds_themselves_are_accepted() -> None:
    s = load_settings(None, environ={"LCM_PORT": "65535", "LCM_PROXY__MAX_CONNECTIONS": "1"})
    assert (s.proxy.port, s.proxy.max_connections) == (65535, 1) and s.warnings == ()


@pytest.mark.parametrize("source,text,named", [
    ("file", "[proxy]\nport = 9001\nprot = 9002\n", "unknown key proxy.prot (did you mean"
                                                     " port?)"),
    ("file", "[not_a_section]\nx = 1\n", "unknown section [not_a_section]"),
    ("file", 'proxy = "oops"\n', "[proxy] must be a table of keys, got str"),
    ("env", "LCM_PROXY__NOPE", "environment variable LCM_PROXY__NOPE: unknown key proxy.nope"),
    ("env", "LCM_WHATEVER__X", "environment variable LCM_WHATEVER__X: unknown section"
                               " [whatever]"),
    ("env", "LCM_PROT", "environment: unknown variable LCM_PROT (did you mean LCM_PORT?)"),
    ("override", "bogus", "command line: unknown key proxy.bogus"),
])
def test_unknown_keys_are_refused_everywhere(tmp_path: Path, source: str, text: str,
                                             named: str) -> None:
    """One rule for every source (issue 29): a typo stops the start, naming where."""
    with pytest.raises(SettingsError) as err:
        if source == "file":
            load_settings(write(tmp_path, text), environ={})
        elif source == "env":
            load_settings(None, environ={text: "1"})
        else:
            load_settings(None, environ={}, overrides={"proxy": {text: 1}})
    assert named in str(err.value)
    if source == "file":
        assert str(err.value).startswith(str(tmp_path / "lcm.toml") + ": ")


@pytest.mark.parametrize("value", ["LOUD", "warn", ""])
def test_log_level_must_be_a_level(value: str) -> None:
    with pytest.raises(SettingsError, match="log.level: expected one of DEBUG, INFO, WARNING,"
                                            " ERROR, CRITICAL"):
        load_settings(None, environ={"LCM_LOG_LEVEL": value})


def test_log_level_is_case_insensitive() -> None:
    assert load_settings(None, environ={"LCM_LOG_LEVEL": "debug"}).log.level == "DEBUG"


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


def test_a_malformed_model_window_names_its_source(tmp_path: Path) -> None:
    # The section's own check (context.model_windows) names the file or variable
    # that set the value, like every other refusal, not another key's source.
    toml = write(tmp_path, '[context]\nforest_share = 0.2\nmodel_windows = ["tiny"]\n')
    with pytest.raises(SettingsError) as err:
        load_settings(toml, environ={})
    assert str(err.value).startswith(f"{toml}: context.model_windows: model window 'tiny'")
    with pytest.raises(SettingsError) as err:
        load_settings(toml, environ={"LCM_CONTEXT__MODEL_WINDOWS": "x=12"})
    assert str(err.value).startswith(
        "environment variable LCM_CONTEXT__MODEL_WINDOWS: context.model_windows:")


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


@pytest.mark.sqlite_only("reads the PRAGMAs of the SQLite file's connections"
                         " (storage.sqlite_* settings)")
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


@pytest.mark.parametrize(("name", "url"), [("LCM_STORE__URL", "postgresql://u:pw@db:5432/lcm"),
                                           ("LCM_STORAGE__URL", "postgres://db/lcm")])
def test_a_store_url_is_read_under_either_name_and_reaches_the_engine(
        name: str, url: str) -> None:
    s = load_settings(None, environ={name: url})
    assert s.storage.url == url and s.memory_config().store_url == url


def test_a_store_url_of_another_scheme_is_refused_without_echoing_it() -> None:
    with pytest.raises(SettingsError, match="must be a postgresql:// URL") as err:
        load_settings(None, environ={"LCM_STORE__URL": "mysql://u:secret@db/lcm"})
    assert "secret" not in str(err.value)


def test_the_store_url_reaches_the_engine_config_and_is_masked() -> None:
    s = load_settings(None, environ={})
    assert s.storage.url == "" and s.memory_config().store_url == ""
    masked = dataclasses.replace(s, storage=dataclasses.replace(s.storage, url="postgresql://x"))
    assert masked.memory_config().store_url == "postgresql://x"
    assert masked.public_dict()["storage"]["url"] == "***"


def test_the_upstream_embedder_elsewhere_gets_no_upstream_key() -> None:
    """``embedding.provider = "upstream"`` borrows ``proxy.upstream_api_key`` only on
    the upstream's server; a ``base_url`` elsewhere gets ``embedding.api_key`` or none."""
    proxy = {"upstream": "https://api.openai.com/v1", "upstream_api_key": "sk-upstream-only"}
    on_upstream = load_settings(None, environ={}, overrides={
        "proxy": proxy, "embedding": {"provider": "upstream"}})
    elsewhere = load_settings(None, environ={}, overrides={
        "proxy": proxy, "embedding": {"provider": "upstream",
                                      "base_url": "http://embedder.internal:8080/v1"}})
    assert on_upstream.embedding.embedding_config(on_upstream.proxy).api_key == (
        "sk-upstream-only")
    assert elsewhere.embedding.embedding_config(elsewhere.proxy).api_key == ""
