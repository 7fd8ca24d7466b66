"""``lcm-proxy memory search``, and the search pieces other commands share: the
read-only search service beside a running proxy, the search settings, the embedder.
"""

from __future__ import annotations

from typing import Any

import click

from proxy.cli.common import (
    config_option,
    data_dir_option,
    data_dir_settings,
    echo_json,
    elsewhere_hint,
    open_engine,
)


@click.command("search")
@click.argument("query")
@config_option
@data_dir_option
@click.option("--session", default=None, help="Only this X-LCM-Session.")
@click.option("--role", default=None, help="Only this role.")
@click.option("--tenant", default=None, help="Only this tenant id.")
@click.option("--limit", type=click.IntRange(min=1), default=20, show_default=True)
@click.option("--mode", type=click.Choice(["hybrid", "keyword"]), default="hybrid",
              show_default=True, help="hybrid: the model's memory_search (meaning and"
              " keywords, read-only use of the search indexes); keyword: an SQLite scan.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
def memory_search(query: str, config: str | None, data_dir: str | None, session: str | None,
                  role: str | None, tenant: str | None, limit: int, mode: str,
                  as_json: bool) -> None:
    """Find memory items and messages for QUERY: by meaning and keywords, as the
    model's memory_search ranks them, then keyword-only matches (CJK substrings).
    Each hit names its tenant, role and session (``--json``: ``tenant``, ``role``,
    ``session``), as the admin API's search does.

    Safe beside a running proxy. Stored ``/memory`` commands and their replies, and
    hidden memory-tool rounds, are left out, as in chat."""
    engine = open_engine(config, data_dir)
    embedder = None
    try:
        if mode == "hybrid":
            embedder = attach_readonly_search(
                engine, data_dir_settings(config, data_dir))
        hits = engine.search_memory(query, tenant=tenant, role=role, session=session,
                                    limit=limit, include_commands=False, mode=mode)
    finally:
        engine.close()
        if embedder is not None:
            embedder.close()
    if as_json:
        echo_json(hits)
        return
    if hits:
        click.echo(hits_table(hits))
        return
    click.echo("no matches")
    hint = elsewhere_hint(data_dir_settings(config, data_dir))
    if hint:
        click.echo(f"note: {hint}", err=True)


def hits_table(hits: list[dict[str, Any]]) -> str:
    """``memory search`` hits as a table with a header: ref, kind, status, then whose
    the hit is (tenant, with its end user as ``~u_…``; role; session, ``-`` when none),
    then the text (flattened, 100 characters) and an item's number."""
    head = ("ref", "kind", "status", "tenant", "role", "session")
    rows = [(h["ref"], h["kind"], h["status"], h["tenant"], h["role"], h["session"] or "-")
            for h in hits]
    widths = [max(len(str(c)) for c in col) for col in zip(head, *rows, strict=False)]
    lines = []
    for cells, h in zip([head, *rows], [None, *hits], strict=True):
        line = " ".join(f"{str(c):<{w}}" for c, w in zip(cells, widths, strict=True))
        if h is None:
            lines.append(f"{line} text")
            continue
        extra = ""
        if h.get("value") is not None:
            extra = f"  [value {h['value']:g}{' ' + h['unit'] if h.get('unit') else ''}"
            extra += f"; {h['condition']}]" if h.get("condition") else "]"
        lines.append(f"{line} {' '.join(h['text'].split())[:100]}{extra}")
    return "\n".join(lines)


def search_config(settings: Any) -> Any:
    """The ``[search]`` settings as a ``memory_core.search.SearchConfig``."""
    from memory_core.search import SearchConfig

    section = getattr(settings, "search", None)
    return section.search_config() if section is not None else SearchConfig()


def embedder_or_exit(settings: Any) -> Any:
    """The ``[embedding]`` settings' embedder (the caller closes it); one that cannot
    be created exits 1 with its reason."""
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
                                search_config(settings), embedder, readonly=True)
    except (MemoryError_, OSError, ValueError) as exc:
        embedder.close()
        click.echo(f"warning: search indexes unreadable ({exc}); searching by keywords",
                   err=True)
        return None
    engine.attach_search(service, start=False)
    return embedder
