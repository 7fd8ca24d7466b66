"""``lcm-proxy eval``: the long-session evaluation (``eval --profile …``: three
systems over generated sessions, proxy.evaluation) and ``eval locomo`` (retrieval,
or evidence that reaches a small upstream, on the public LoCoMo benchmark).
Results go to stdout and ``--output FILE``; progress to stderr."""

from __future__ import annotations

import click

from proxy.cli.common import (
    CliError,
    answer,
    config_option,
    data_dir_settings,
    index_list,
    output_option,
    positive_ints,
    print_json_option,
    progress_bar,
)
from proxy.cli.searching import embedder_or_exit, search_config


@click.group("eval", invoke_without_command=True)
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
              help="TOML file with [embedding] and [search] tables (and [injection]"
              " search_mode) for every proxy of the run (e.g. a stronger embedder:"
              " provider = \"http\", base_url, model). The environment is never read.")
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

        with progress_bar(total=None, desc=profile, unit="turn") as bar:
            out = run_crowd(profile, seed, embedding=embedding_provider,
                            tables=config.tables if config else None,
                            tick=lambda: bar.update(1))
        if md_file:
            with open(md_file, "w", encoding="utf-8") as fh:
                fh.write(out["markdown"])
        answer(out, json_file, as_json, text_key="markdown")
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
    answer(out, json_file, as_json, text_key="markdown")


@click.command("locomo")
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

        chosen = index_list(conv_spec) if conv_spec else tuple(range(10))
        if limit_conversations:
            chosen = chosen[:limit_conversations]
        try:
            result = run_locomo_context(data_path, context_window, tuple(chosen),
                                        progress_factory=progress_bar)
        except ValueError as exc:
            raise click.BadParameter(str(exc)) from exc
        answer(result, json_file, as_json)
        return

    settings = data_dir_settings(config, None)
    embedder = embedder_or_exit(settings)
    tmp = None
    if data_dir is None:
        tmp = tempfile.TemporaryDirectory(prefix="lcm-locomo-")
        data_dir = tmp.name
    try:
        out = run_locomo(
            data_path, data_dir, embedder, ks=positive_ints(ks),
            limit_conversations=limit_conversations,
            conversations=index_list(conv_spec) if conv_spec else None,
            config=search_config(settings),
            modes=tuple(m.strip() for m in modes.split(",") if m.strip()),
            progress_factory=progress_bar,
        )
    finally:
        embedder.close()
        if tmp is not None:
            tmp.cleanup()
    answer(out, json_file, as_json)
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
