"""The memory commands that change what the model is shown: ``memory retract``,
``memory restore``, ``memory edit`` and ``memory prefs set|list|delete`` (user preferences, written
only by the user)."""

from __future__ import annotations

from collections.abc import Callable

import click

from proxy.cli.common import (
    CliError,
    config_option,
    data_dir_option,
    echo_json,
    group_options,
    open_engine,
    store_group_options,
)


def _item_change(command: str) -> Callable[[Callable[..., None]], click.Command]:
    """The arguments and options ``memory retract`` and ``memory restore`` share."""
    def wrap(fn: Callable[..., None]) -> click.Command:
        for option in reversed((
                click.argument("item_ref", metavar="ITEM_ID"),
                click.option("--reason", default="", help="Why (kept in the audit trail)."),
                click.option("--tenant", default=None,
                             help="Only if the item belongs to this tenant id."),
                click.option("--role", default=None, help="Only if the item belongs to this role."),
                click.option("--session", default=None,
                             help="Only if the item was stated in this X-LCM-Session."),
                click.option("--json", "as_json", is_flag=True, help="Print JSON."),
                config_option, data_dir_option)):
            fn = option(fn)
        return click.command(command)(fn)
    return wrap


def _change_item(verb: str, item_ref: str, reason: str, scope: dict[str, str | None],
                 as_json: bool, config: str | None, data_dir: str | None) -> None:
    """Run ``Engine.change_in_scope(verb, …)`` on ITEM_ID and print ``{id, old_status}``: exit 2
    for a ref no item can have, 1 for an unknown item, one outside the scope or one
    whose status does not allow it."""
    from memory_core.errors import InvalidIdError, ItemStateError, NotFoundError
    from memory_core.items.writer import ITEM_CHANGES
    from memory_core.tools.refs import parse_item_id

    try:
        item_id = parse_item_id(item_ref)
    except InvalidIdError as exc:  # a ref that cannot exist is bad usage: exit 2
        raise CliError(str(exc)) from exc
    engine = open_engine(config, data_dir)
    try:
        out = engine.change_in_scope(verb, item_id, reason, **scope)
    except (NotFoundError, ItemStateError) as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        engine.close()
    if as_json:
        echo_json(out)
        return
    click.echo(f"{ITEM_CHANGES[verb]} item:{out['id']} (was {out['old_status']})")


@_item_change("retract")
def memory_retract(item_ref: str, reason: str, tenant: str | None, role: str | None,
                   session: str | None, as_json: bool, config: str | None,
                   data_dir: str | None) -> None:
    """Retract memory item ITEM_ID (7 or item:7, as search and inspect print it): kept
    for audit, gone from retrieval and the indexes."""
    _change_item("retract", item_ref, reason,
                 {"tenant": tenant, "role": role, "session": session}, as_json, config,
                 data_dir)


@_item_change("restore")
def memory_restore(item_ref: str, reason: str, tenant: str | None, role: str | None,
                   session: str | None, as_json: bool, config: str | None,
                   data_dir: str | None) -> None:
    """Set superseded or retracted memory item ITEM_ID active again (undo a wrong
    supersession or retraction; the history keeps both changes). The item that
    superseded it stays active too."""
    _change_item("restore", item_ref, reason or "restored by operator",
                 {"tenant": tenant, "role": role, "session": session}, as_json, config,
                 data_dir)


@click.command("edit")
@click.argument("item_ref", metavar="ITEM_ID")
@click.argument("text")
@click.option("--reason", default="", help="Why (kept in the audit trail).")
@click.option("--tenant", default=None, help="Only if the item belongs to this tenant id.")
@click.option("--role", default=None, help="Only if the item belongs to this role.")
@click.option("--session", default=None,
              help="Only if the item was stated in this X-LCM-Session.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@config_option
@data_dir_option
def memory_edit(item_ref: str, text: str, reason: str, tenant: str | None, role: str | None,
                session: str | None, as_json: bool, config: str | None,
                data_dir: str | None) -> None:
    """Correct active memory item ITEM_ID (7 or item:7) to say TEXT: a new item
    (evidence admin) supersedes it, its subject and value read again from TEXT.
    `memory restore ITEM_ID` undoes it (the history keeps both)."""
    from memory_core.errors import InvalidIdError, ItemStateError, NotFoundError
    from memory_core.tools.refs import parse_item_id

    try:
        item_id = parse_item_id(item_ref)
    except InvalidIdError as exc:
        raise CliError(str(exc)) from exc
    engine = open_engine(config, data_dir)
    try:
        out = engine.edit_in_scope(item_id, text, reason, tenant=tenant, role=role,
                                   session=session)
    except ValueError as exc:
        raise CliError(str(exc)) from exc
    except (NotFoundError, ItemStateError) as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        engine.close()
    if as_json:
        echo_json(out)
        return
    click.echo(f"edited item:{out['id']}: now item:{out['new_id']} (item:{out['id']} is"
               " superseded; memory restore undoes it)")


@click.group("prefs", invoke_without_command=True)
@store_group_options
@click.pass_context
def memory_prefs(ctx: click.Context) -> None:
    """User preferences (written only by the user: here, the admin API, /memory prefs).

    Preferences belong to a tenant and role, not to a session: they apply to every
    conversation of that role, so these commands take no ``--session``.
    ``--config`` and ``--data-dir`` go before or after the subcommand. Without a
    subcommand: ``list``, as ``/memory prefs`` does in a chat."""
    if ctx.invoked_subcommand is None:
        given = {name: value for name, (value, _) in group_options(ctx).items()}
        ctx.invoke(prefs_list, config=given.get("config"), data_dir=given.get("data_dir"))


tenant_option = click.option(
    "--tenant", default="*", show_default=True,
    help="Tenant id the preference belongs to; '*' applies to every tenant of this data dir.",
)


@click.command("set")
@click.option("--role", default="default", show_default=True)
@click.option("--key", required=True, help="snake_case key (normalised).")
@click.option("--title", required=True)
@click.option("--content", required=True, help="At most 500 characters.")
@click.option("--replace-similar", is_flag=True,
              help="Write into a near-duplicate existing key instead of refusing.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@tenant_option
@config_option
@data_dir_option
def prefs_set(role: str, key: str, title: str, content: str, replace_similar: bool,
              as_json: bool, tenant: str, config: str | None, data_dir: str | None) -> None:
    """Create or replace a preference shown in every injection block of ROLE."""
    from memory_core.items.writer import DuplicateKeyError

    engine = open_engine(config, data_dir, create=True)
    try:
        out = engine.set_agent_memory(
            tenant=tenant, role=role, category="user_preferences", key=key, title=title,
            content=content, on_duplicate="route" if replace_similar else "refuse",
        )
    except DuplicateKeyError as exc:
        raise click.ClickException(
            f"{exc} (or pass --replace-similar to update '{exc.match.key}')") from exc
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        engine.close()
    if as_json:
        echo_json({"id": out.id, "key": out.key, "created": out.created, "tenant": tenant,
                    "role": role, "routed_from": out.routed_from, "reason": out.reason})
        return
    verb = "created" if out.created else "updated"
    note = f" (routed from '{out.routed_from}': {out.reason})" if out.routed_from else ""
    click.echo(f"{verb} user_preferences/{out.key} for role {role}{note}")


@click.command("list")
@click.option("--role", default=None, help="Only this role.")
@click.option("--tenant", default=None,
              help="Only what this tenant id sees: its own and those set for '*'.")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@config_option
@data_dir_option
def prefs_list(role: str | None, tenant: str | None, as_json: bool, config: str | None,
               data_dir: str | None) -> None:
    """List user preferences: the set ones (key, title, content), then those learned
    from what users said (``item:ID``, text, source message): both are shown in the
    memory block. ``memory retract item:ID`` (or ``prefs delete --key item:ID``)
    removes a learned one. ``--json``: one row per preference, ``source`` ``set``
    (an agent memory row) or ``learned`` (a memory item row)."""
    engine = open_engine(config, data_dir)
    try:
        rows = engine.list_agent_memories(category="user_preferences", role=role,
                                          tenant=tenant)
        learned = engine.learned_preferences(tenant=tenant, role=role)
    finally:
        engine.close()
    if as_json:
        echo_json([{**r, "source": "set"} for r in rows]
                  + [{**r, "source": "learned"} for r in learned])
        return
    if not rows and not learned:
        click.echo("no preferences set or learned")
    for r in rows:
        click.echo(f"{r['role']:<12} {r['key']:<28} {r['title']}: {r['content']}"
                   f"{'' if r['tenant'] == '*' else '  [tenant ' + r['tenant'] + ']'}")
    for r in learned:
        src = r["source_message_id"]
        click.echo(f"{r['role']:<12} {'item:' + str(r['id']):<28} {r['text']}"
                   f"  [learned from msg {src if src is not None else '-'},"
                   f" tenant {r['tenant']}]")


@click.command("delete")
@click.option("--role", default="default", show_default=True)
@click.option("--key", required=True)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@tenant_option
@config_option
@data_dir_option
def prefs_delete(role: str, key: str, as_json: bool, tenant: str, config: str | None,
                 data_dir: str | None) -> None:
    """Delete one preference: a set one by its key, or retract a learned one by its
    ``item:ID`` (kept for audit; as ``memory retract``)."""
    if key.lower().startswith("item:"):
        _delete_learned(role, key, tenant, as_json, config, data_dir)
        return
    engine = open_engine(config, data_dir)
    try:
        ok = engine.delete_agent_memory(tenant=tenant, role=role, category="user_preferences",
                                        key=key)
    except ValueError as exc:
        raise click.ClickException(str(exc)) from exc
    finally:
        engine.close()
    if not ok:
        raise click.ClickException(f"no preference '{key}' for role {role}")
    if as_json:
        echo_json({"deleted": True, "tenant": tenant, "role": role, "key": key})
        return
    click.echo(f"deleted user_preferences/{key} for role {role}")


def _delete_learned(role: str, ref: str, tenant: str, as_json: bool, config: str | None,
                    data_dir: str | None) -> None:
    from memory_core.errors import InvalidIdError
    from memory_core.tools.refs import parse_item_id

    try:
        ident = parse_item_id(ref)
    except InvalidIdError as exc:
        raise click.ClickException(str(exc)) from exc
    engine = open_engine(config, data_dir)
    try:
        ids = {r["id"] for r in engine.learned_preferences(
            tenant=None if tenant == "*" else tenant, role=role)}
    finally:
        engine.close()
    if ident not in ids:
        raise click.ClickException(f"item:{ident} is no learned preference of role {role}"
                                   " (`memory prefs list` lists them)")
    _change_item("retract", f"item:{ident}", "preference deleted by operator",
                 {"tenant": None if tenant == "*" else tenant, "role": role, "session": None},
                 as_json, config, data_dir)
