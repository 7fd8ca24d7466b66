"""``lcm-proxy memory …`` against a populated store: status, inspect, search, explain,
retract, export and prefs, each narrowed by tenant/role/session where it takes them
(another scope's data is refused or absent), with ``--json`` on each. Search leaves
stored ``/memory`` commands and replies out exactly as the in-chat command does."""

from __future__ import annotations

import re

from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner, Result

from memory_core.tools.commands import REPLY_HEADER, is_command_exchange
from proxy.cli import main
from tests.conftest import RunningProxy, sql_read
from tests.test_admin_support import (  # noqa: F401 - steady_proxy_fixture is `proxy`
    KEY_A,
    MARK_A,
    MARK_B,
    Populated,
    chat,
    client,
    populate,
    steady_proxy_fixture,
)


def cli(proxy: RunningProxy, *args: str) -> Result:
    """Run ``lcm-proxy ARGS`` on the proxy's data dir with its embedder (as an operator
    runs the CLI with the proxy's config file)."""
    config = Path(proxy.settings.storage.data_dir).parent / "cli.toml"
    config.write_text(f'[embedding]\nprovider = "{proxy.settings.embedding.provider}"\n')
    return CliRunner().invoke(main, [*args, "--data-dir", proxy.settings.storage.data_dir,
                                     "--config", str(config)])


def as_json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return orjson.loads(result.stdout)


async def ask_in_chat(proxy: RunningProxy, text: str, *, role: str = "coder",
                      session: str = "sess-a") -> str:
    """Send one in-chat command as tenant A and wait until its exchange is stored."""
    c = client(proxy, KEY_A, role, session)
    try:
        reply = await chat(c, [{"role": "user", "content": text}])
    finally:
        await c.close()
    await proxy.settle()
    return reply


async def test_status_counts_one_scope(proxy: RunningProxy) -> None:
    pop: Populated = await populate(proxy)
    everything = as_json(cli(proxy, "memory", "status", "--json"))
    assert "scope" not in everything
    mine = as_json(cli(proxy, "memory", "status", "--json", "--tenant", pop.tenant_b))
    assert mine["scope"]["counts"]["memory_items"] == 1
    assert mine["scope"]["counts"]["messages"] < everything["counts"]["messages"]
    text = cli(proxy, "memory", "status", "--tenant", pop.tenant_a, "--role", "writer").output
    assert f"scope:           tenant={pop.tenant_a} role=writer" in text
    assert "memory_items:  1" in text
    # each indexer's checkpoint and lag as words, not a Python dict
    lags = [ln for ln in text.splitlines() if ln.startswith("index lag:")]
    assert lags and all(re.fullmatch(r"index lag: +index_\w+: checkpoint \d+, lag \d+", ln)
                        for ln in lags), lags


async def test_inspect_shows_supersession_and_refuses_another_scope(
        proxy: RunningProxy) -> None:
    pop = await populate(proxy)
    new = f"item:{pop.items['a_new']}"
    out = cli(proxy, "memory", "inspect", new)
    assert out.exit_code == 0, out.output
    assert f"supersedes: item:{pop.items['a_old']} [superseded]" in out.output
    info = as_json(cli(proxy, "memory", "inspect", new, "--json", "--tenant", pop.tenant_a,
                       "--role", "coder"))
    assert info["ref"] == new and info["tenant"] == pop.tenant_a
    other = cli(proxy, "memory", "inspect", new, "--tenant", pop.tenant_b)
    assert other.exit_code == 1 and MARK_A not in other.output
    assert "not found for this tenant/role" in other.output


async def test_search_and_export_stay_in_the_tenant(proxy: RunningProxy) -> None:
    pop = await populate(proxy)
    hits = as_json(cli(proxy, "memory", "search", "port", "--json", "--tenant", pop.tenant_b))
    assert hits and all(MARK_A not in h["text"] for h in hits)
    assert any(h["ref"] == f"item:{pop.items['b_port']}" for h in hits)
    exported = as_json(cli(proxy, "memory", "export", "--tenant", pop.tenant_a, "--role",
                           "writer"))
    assert [t["session"] for t in exported["threads"]] == ["sess-w"]
    assert MARK_B not in orjson.dumps(exported).decode()


@pytest.mark.parametrize("mode", ["hybrid", "keyword"])
async def test_search_names_the_tenant_role_and_session_of_each_hit(
        proxy: RunningProxy, mode: str) -> None:
    """With several tenants in one store an operator must tell whose a hit is: each hit
    carries the scope the admin API filters by (tenant, with its end user; role;
    session), in ``--json`` and in the table's columns."""
    pop = await populate(proxy)
    hits = as_json(cli(proxy, "memory", "search", "port", "--json", "--mode", mode,
                       "--limit", "100"))
    scopes = {(h["tenant"], h["role"], h["session"]) for h in hits}
    assert {(pop.tenant_a, "coder", "sess-a"), (pop.tenant_b, "coder", "sess-b")} <= scopes
    item_b = next(h for h in hits if h["ref"] == f"item:{pop.items['b_port']}")
    assert (item_b["tenant"], item_b["role"], item_b["session"]) == (
        pop.tenant_b, "coder", "sess-b")
    for h in hits:  # what the tenant filter finds again
        assert MARK_B not in h["text"] or h["tenant"] == pop.tenant_b
    table = cli(proxy, "memory", "search", "port", "--mode", mode, "--limit", "100")
    assert table.exit_code == 0, table.output
    head, *rows = table.stdout.splitlines()
    assert head.split() == ["ref", "kind", "status", "tenant", "role", "session", "text"]
    row_b = next(r for r in rows if r.startswith(f"item:{pop.items['b_port']} "))
    assert row_b.split()[3:6] == [pop.tenant_b, "coder", "sess-b"]


async def test_memory_groups_take_data_dir_and_config_before_the_subcommand(
        proxy: RunningProxy) -> None:
    """``lcm-proxy memory prefs --data-dir D list`` (the option put on the group, as a
    newcomer does) works as ``memory prefs list --data-dir D`` does, for ``memory``
    too; the same option given twice with two values is bad usage, exit 2."""
    pop = await populate(proxy)
    data_dir = proxy.settings.storage.data_dir
    config = Path(data_dir).parent / "cli.toml"
    config.write_text(f'[embedding]\nprovider = "{proxy.settings.embedding.provider}"\n')
    after = cli(proxy, "memory", "prefs", "list", "--tenant", pop.tenant_a)
    for args in (["memory", "prefs", "--data-dir", data_dir, "list"],
                 ["memory", "--data-dir", data_dir, "prefs", "list"],
                 ["memory", "--config", str(config), "prefs", "--data-dir", data_dir, "list"],
                 ["memory", "--data-dir", data_dir, "prefs", "list", "--data-dir", data_dir]):
        before = CliRunner().invoke(main, [*args, "--tenant", pop.tenant_a])
        assert before.exit_code == 0, (args, before.output)
        assert before.stdout == after.stdout and MARK_A in before.stdout
    status = CliRunner().invoke(main, ["memory", "--data-dir", data_dir, "--config",
                                       str(config), "status", "--json"])
    assert status.exit_code == 0, status.output
    assert orjson.loads(status.stdout)["database"] == as_json(
        cli(proxy, "memory", "status", "--json"))["database"]
    found = CliRunner().invoke(main, ["memory", "--data-dir", data_dir, "--config",
                                      str(config), "search", "port", "--json"])
    assert found.exit_code == 0 and orjson.loads(found.stdout), found.output
    twice = CliRunner().invoke(main, ["memory", "--data-dir", data_dir, "prefs", "list",
                                      "--data-dir", data_dir + "-other"])
    assert twice.exit_code == 2
    assert f"--data-dir given twice: '{data_dir}' (after `memory`)" in twice.stderr
    missing = CliRunner().invoke(main, ["memory", "prefs", "--data-dir",
                                        data_dir + "-none", "list"])
    assert missing.exit_code == 2 and "no lcm-proxy store in" in missing.stderr


async def test_memory_prefs_alone_lists_as_the_chat_command_does(proxy: RunningProxy) -> None:
    """``lcm-proxy memory prefs`` with no subcommand lists the preferences (as
    ``/memory prefs`` does in a chat) instead of stopping with "Missing command", with
    the group's ``--data-dir``/``--config`` wherever they were given; on a data dir
    with no store it still creates none (exit 2)."""
    await populate(proxy)
    data_dir = proxy.settings.storage.data_dir
    config = Path(data_dir).parent / "cli.toml"
    listed = cli(proxy, "memory", "prefs", "list")
    assert listed.exit_code == 0 and MARK_A in listed.stdout, listed.output
    for args in (["memory", "prefs", "--data-dir", data_dir, "--config", str(config)],
                 ["memory", "--data-dir", data_dir, "prefs", "--config", str(config)],
                 ["memory", "--config", str(config), "--data-dir", data_dir, "prefs"]):
        alone = CliRunner().invoke(main, args)
        assert alone.exit_code == 0, (args, alone.output)
        assert alone.stdout == listed.stdout
    missing = CliRunner().invoke(main, ["memory", "prefs", "--data-dir", data_dir + "-none"])
    assert missing.exit_code == 2 and "no lcm-proxy store in" in missing.stderr
    assert not Path(data_dir + "-none").exists()


async def test_explain_narrows_to_tenant_and_role(proxy: RunningProxy) -> None:
    pop = await populate(proxy)
    last = as_json(cli(proxy, "memory", "explain", "--json", "--tenant", pop.tenant_b))
    assert last["tenant"] == pop.tenant_b
    text = cli(proxy, "memory", "explain", "--tenant", pop.tenant_a, "--role", "writer")
    assert text.exit_code == 0 and f"tenant={pop.tenant_a} role=writer" in text.output


async def test_retract_in_scope_only(proxy: RunningProxy) -> None:
    pop = await populate(proxy)
    item = str(pop.items["a_port"])
    refused = cli(proxy, "memory", "retract", item, "--tenant", pop.tenant_b)
    assert refused.exit_code == 1 and "no memory item" in refused.output
    done = as_json(cli(proxy, "memory", "retract", item, "--reason", "wrong", "--json",
                       "--tenant", pop.tenant_a, "--role", "coder"))
    assert done["id"] == pop.items["a_port"] and done["old_status"] == "active"
    again = cli(proxy, "memory", "inspect", f"item:{item}", "--json")
    assert as_json(again)["status"] == "retracted"


async def test_restore_in_scope_only_and_only_what_was_superseded_or_retracted(
        proxy: RunningProxy) -> None:
    pop = await populate(proxy)
    old = str(pop.items["a_old"])  # superseded by a_new
    refused = cli(proxy, "memory", "restore", old, "--tenant", pop.tenant_b)
    assert refused.exit_code == 1 and "no memory item" in refused.output
    done = as_json(cli(proxy, "memory", "restore", f"item:{old}", "--reason", "wrong",
                       "--json", "--tenant", pop.tenant_a, "--role", "coder"))
    assert done == {"id": pop.items["a_old"], "old_status": "superseded"}
    assert as_json(cli(proxy, "memory", "inspect", f"item:{old}", "--json"))["status"] == \
        "active"
    again = cli(proxy, "memory", "restore", old)
    assert again.exit_code == 1 and "is active" in again.output
    text = cli(proxy, "memory", "restore", str(pop.items["a_port"]))
    assert text.exit_code == 1  # active
    cli(proxy, "memory", "retract", str(pop.items["a_port"]))
    text = cli(proxy, "memory", "restore", str(pop.items["a_port"]))
    assert text.exit_code == 0 and text.output == \
        f"restored item:{pop.items['a_port']} (was retracted)\n"


async def test_retract_takes_the_ref_search_prints_and_search_then_leaves_it_out(
        proxy: RunningProxy) -> None:
    pop = await populate(proxy)
    ref = f"item:{pop.items['a_port']}"
    found = as_json(cli(proxy, "memory", "search", "staging database port 5433", "--json",
                        "--tenant", pop.tenant_a))
    assert ref in [h["ref"] for h in found]
    done = as_json(cli(proxy, "memory", "retract", ref, "--json"))
    assert done == {"id": pop.items["a_port"], "old_status": "active"}
    found = as_json(cli(proxy, "memory", "search", "staging database port 5433", "--json",
                        "--tenant", pop.tenant_a))
    assert ref not in [h["ref"] for h in found]
    assert as_json(cli(proxy, "memory", "inspect", ref, "--json"))["status"] == "retracted"


BIG = "99999999999999999999999"


@pytest.mark.parametrize("args", [
    ("inspect", f"item:{BIG}"), ("inspect", f"msg:{BIG}"), ("inspect", BIG),
    ("inspect", f"item:{1 << 63}"), ("inspect", "item:0"), ("inspect", "thing:3"),
    ("retract", BIG), ("retract", f"item:{BIG}"), ("retract", "0"), ("retract", "msg:3"),
    ("retract", "abc"), ("restore", BIG), ("restore", "msg:3"),
])
async def test_ids_no_row_can_have_are_a_clear_error(proxy: RunningProxy,
                                                     args: tuple[str, str]) -> None:
    """Bad usage (docs/cli.md): exit 2 with one ``Error:`` line."""
    result = cli(proxy, "memory", *args)
    assert result.exit_code == 2, result.output
    assert isinstance(result.exception, SystemExit)  # a ClickException, not a traceback
    assert result.output.startswith("Error: ") and "Traceback" not in result.output
    assert len(result.output.strip().splitlines()) == 1


async def test_the_largest_id_is_looked_up_and_not_found(proxy: RunningProxy) -> None:
    top = (1 << 63) - 1
    for args in (("inspect", f"item:{top}"), ("retract", str(top))):
        result = cli(proxy, "memory", *args)
        assert result.exit_code == 1 and f"no memory item {top}" in result.output


async def test_search_leaves_out_memory_commands_as_in_chat(proxy: RunningProxy) -> None:
    pop = await populate(proxy)
    reply = await ask_in_chat(proxy, f"/memory search {MARK_A} port")
    assert reply.startswith(REPLY_HEADER)
    stored = proxy.engine.search_memory(f"{MARK_A} port", tenant=pop.tenant_a, limit=100)
    assert sum(is_command_exchange(h["text"]) for h in stored) == 2  # command and reply
    hits = as_json(cli(proxy, "memory", "search", f"{MARK_A} port", "--json", "--tenant",
                       pop.tenant_a, "--limit", "100"))
    assert hits and not any(is_command_exchange(h["text"]) for h in hits)
    # The in-chat answer is the same hybrid search in the same scope: its best hit
    # leads, and all it lists is found (ranks further down may swap: the command
    # exchange stored since then shifts the words' BM25 weights).
    in_chat = [line.split()[0] for line in reply.splitlines()[1:]]
    same = [h["ref"] for h in as_json(cli(proxy, "memory", "search", f"{MARK_A} port",
                                          "--json", "--tenant", pop.tenant_a, "--role",
                                          "coder", "--limit", "100"))]
    assert in_chat[0] == same[0] and set(in_chat) <= set(same)
    text = cli(proxy, "memory", "search", "lcm-proxy memory search", "--tenant",
               pop.tenant_a)
    assert text.exit_code == 0 and REPLY_HEADER not in text.output


async def test_search_narrows_to_a_session(proxy: RunningProxy) -> None:
    pop = await populate(proxy)
    writer = as_json(cli(proxy, "memory", "search", MARK_A, "--json", "--session", "sess-w",
                         "--limit", "100"))
    assert writer and {h["role"] for h in writer} == {"writer"}
    assert f"item:{pop.items['w_style']}" in [h["ref"] for h in writer]
    coder = as_json(cli(proxy, "memory", "search", MARK_A, "--json", "--session", "sess-a",
                        "--tenant", pop.tenant_a, "--role", "coder", "--limit", "100"))
    refs = [h["ref"] for h in coder]
    assert f"item:{pop.items['a_port']}" in refs and f"item:{pop.items['w_style']}" not in refs
    # A session name never widens the tenant filter: B's session through A is empty.
    # stdout: a proxy on the configured port with another data dir adds a note on stderr
    other = cli(proxy, "memory", "search", "port", "--session", "sess-b", "--tenant",
                pop.tenant_a)
    assert other.exit_code == 0 and other.stdout.strip() == "no matches"


async def test_export_prints_json_by_default_and_a_transcript_with_text(
        proxy: RunningProxy) -> None:
    await populate(proxy)
    default = cli(proxy, "memory", "export", "--session", "sess-w")
    explicit = cli(proxy, "memory", "export", "--session", "sess-w", "--json")
    assert default.exit_code == 0 and default.stdout == explicit.stdout
    assert [t["role"] for t in orjson.loads(explicit.stdout)["threads"]] == ["writer"]
    text = cli(proxy, "memory", "export", "--session", "sess-w", "--text", "--events")
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert lines[0].startswith("thread ") and "role=writer session=sess-w" in lines[0]
    assert any(" user " in ln and "writer notes: prose style" in ln for ln in lines)
    assert any(ln.startswith("event ") for ln in lines) and MARK_B not in text.stdout
    none = cli(proxy, "memory", "export", "--session", "nope", "--text")
    assert none.exit_code == 0 and none.stdout.strip() == "no threads"


async def test_inspect_and_retract_refuse_another_session(proxy: RunningProxy) -> None:
    pop = await populate(proxy)
    ref = f"item:{pop.items['a_port']}"
    refused = cli(proxy, "memory", "inspect", ref, "--session", "sess-w")
    assert refused.exit_code == 1 and MARK_A not in refused.output
    assert as_json(cli(proxy, "memory", "inspect", ref, "--json", "--session",
                       "sess-a"))["session"] == "sess-a"
    msg = f"msg:{pop.messages['w']}"
    assert cli(proxy, "memory", "inspect", msg, "--session", "sess-a").exit_code == 1
    assert cli(proxy, "memory", "inspect", msg, "--session", "sess-w").exit_code == 0
    item = str(pop.items["a_port"])
    no = cli(proxy, "memory", "retract", item, "--session", "sess-b")
    assert no.exit_code == 1 and "no memory item" in no.output
    assert as_json(cli(proxy, "memory", "inspect", ref, "--json"))["status"] == "active"
    done = as_json(cli(proxy, "memory", "retract", item, "--json", "--session", "sess-a",
                       "--role", "coder"))
    assert done["id"] == pop.items["a_port"] and done["old_status"] == "active"


async def test_prefs_set_list_delete_with_json(proxy: RunningProxy) -> None:
    pop = await populate(proxy)
    made = as_json(cli(proxy, "memory", "prefs", "set", "--json", "--role", "coder",
                       "--key", "Reply Language", "--title", "Language",
                       "--content", "Answer in English."))
    assert made["created"] is True and made["key"] == "reply_language"
    assert made["tenant"] == "*" and made["role"] == "coder"
    again = as_json(cli(proxy, "memory", "prefs", "set", "--json", "--role", "coder",
                        "--key", "reply_language", "--title", "Language",
                        "--content", "Answer in German."))
    assert again["created"] is False and again["id"] == made["id"]
    seen_a = as_json(cli(proxy, "memory", "prefs", "list", "--json", "--tenant",
                         pop.tenant_a, "--role", "coder"))
    assert {(r["tenant"], r["key"]) for r in seen_a} == {
        (pop.tenant_a, "code_style"), ("*", "reply_language")}
    assert MARK_B not in orjson.dumps(seen_a).decode()
    gone = as_json(cli(proxy, "memory", "prefs", "delete", "--json", "--role", "coder",
                       "--key", "reply_language"))
    assert gone == {"deleted": True, "tenant": "*", "role": "coder", "key": "reply_language"}
    missing = cli(proxy, "memory", "prefs", "delete", "--json", "--role", "coder",
                  "--key", "reply_language")
    assert missing.exit_code == 1 and "no preference" in missing.output
    plain = cli(proxy, "memory", "prefs", "list", "--tenant", pop.tenant_b)
    assert plain.exit_code == 0 and MARK_B in plain.output and MARK_A not in plain.output


def test_every_memory_command_takes_the_scope_and_output_flags() -> None:
    """Issue 7: each ``memory`` command takes ``--data-dir``, ``--session``, ``--role``
    and ``--json`` where they mean something. Preferences belong to a tenant and role,
    not a session, so ``prefs`` commands take no ``--session``."""
    import click

    memory = main.commands["memory"]
    assert isinstance(memory, click.Group)
    commands: dict[str, click.Command] = {}
    for name, cmd in memory.commands.items():
        if isinstance(cmd, click.Group):
            commands.update({f"{name} {sub}": c for sub, c in cmd.commands.items()})
        else:
            commands[name] = cmd
    assert set(commands) == {"status", "inspect", "search", "explain", "retract", "restore",
                             "edit",
                             "export", "purge", "redact", "prefs set", "prefs list", "prefs delete",
                             "tenant"}
    for name, cmd in commands.items():
        flags = {opt for p in cmd.params for opt in p.opts}
        if name == "tenant":  # a tenant id is above roles and sessions
            assert {"--data-dir", "--json", "--tenant", "--user"} <= flags, flags
            continue
        wanted = {"--data-dir", "--role", "--json"} | (
            set() if name.startswith("prefs") else {"--session"})
        assert wanted <= flags, (name, wanted - flags)


async def test_inspect_names_the_speaker_of_an_item(make_proxy: Any) -> None:
    # the block says "by maria"; the operator's inspect said nothing of who said it
    proxy = await make_proxy()  # with rule extraction, unlike this module's `proxy`
    c = client(proxy, KEY_A, "coder", "sess-names")
    try:
        await chat(c, [{"role": "user", "name": "maria", "content": "My hometown is Graz."}])
    finally:
        await c.close()
    await proxy.settle()
    (item,) = sql_read(proxy.engine, lambda c: [r[0] for r in c.execute(
        "SELECT id FROM memory_items WHERE text = 'My hometown is Graz.'")])
    out = cli(proxy, "memory", "inspect", f"item:{item}")
    assert out.exit_code == 0, out.output
    assert "speaker:    maria" in out.output


async def test_inspect_tells_a_resumed_history_from_a_second_telling(
        make_proxy: Any) -> None:
    """After a resume (the whole history re-sent under a new session), an item cites
    the re-sent copy, on the new thread; ``inspect`` said nothing more, so it read as
    told in the resumed conversation. It now shows the one conversation that told it,
    the thread that sent it again (no new telling) and both sources; the same words
    typed anew in a third conversation are a second telling."""
    proxy = await make_proxy()  # with rule extraction, unlike this module's `proxy`
    history: list[dict[str, Any]] = []
    first = client(proxy, KEY_A, "coder", "sess-told")
    try:
        for text in ("I went hiking with Anna on Saturday.", "Let's rename the helper.",
                     "Now split the module in two."):
            history.append({"role": "user", "content": text})
            history.append({"role": "assistant", "content": await chat(first, history)})
    finally:
        await first.close()
    await proxy.settle()
    resumed = client(proxy, KEY_A, "coder", "sess-resumed")
    try:
        await chat(resumed, [*history, {"role": "user", "content": "Where were we?"}])
    finally:
        await resumed.close()
    await proxy.settle()
    (item,) = sql_read(proxy.engine, lambda c: [r[0] for r in c.execute(
        "SELECT id FROM memory_items WHERE text = 'I went hiking with Anna on Saturday.'")])
    shown = as_json(cli(proxy, "memory", "inspect", f"item:{item}", "--json"))
    told, again = shown["data"]["occasion_threads"], shown["data"]["resent_threads"]
    sources = shown["data"]["sources"]
    assert len(told) == 1 and len(again) == 1 and len(sources) == 2
    out = cli(proxy, "memory", "inspect", f"item:{item}")
    assert out.exit_code == 0, out.output
    assert f"told in:    1 conversation: thread {told[0]} (" in out.output
    assert f"sent again: thread {again[0]} (history re-sent" in out.output
    assert f"sources:    msg:{sources[0]}, msg:{sources[1]}" in out.output
    third = client(proxy, KEY_A, "coder", "sess-third")
    try:
        await chat(third, [{"role": "user", "content": "I went hiking with Anna on Saturday."}])
    finally:
        await third.close()
    await proxy.settle()
    out = cli(proxy, "memory", "inspect", f"item:{item}")
    assert "told in:    2 conversations: thread " in out.output, out.output


async def test_tenant_names_an_end_user_behind_a_key_for_search_and_purge(
        proxy: RunningProxy, monkeypatch: pytest.MonkeyPatch) -> None:
    """End users are stored as salted hashes (`t_…~u_…`), so an operator asked to find
    or delete one person's memory had no way from the id the app sends ("ana") to the
    stored tenant. `memory tenant --key-env VAR --user ID` prints it (the key read from
    the environment), and search and purge take it."""
    c = client(proxy, KEY_A)
    try:
        for user, text in (("ana", "I moved to Lisbon last month."),
                           ("ben", "I live in Berlin with my sister.")):
            await c.chat.completions.create(  # type: ignore[call-overload]
                model="m", user=user, messages=[{"role": "user", "content": text}])
    finally:
        await c.close()
    await proxy.settle()
    monkeypatch.setenv("TEST_CLIENT_KEY", KEY_A)
    ana = cli(proxy, "memory", "tenant", "--key-env", "TEST_CLIENT_KEY", "--user", "ana")
    assert ana.exit_code == 0, ana.output
    ana_tenant = ana.stdout.strip()
    assert re.fullmatch(r"t_[0-9a-f]{16}~u_[0-9a-f]{16}", ana_tenant), ana.stdout
    key_tenant = as_json(cli(proxy, "memory", "tenant", "--key-env", "TEST_CLIENT_KEY",
                             "--json"))["tenant"]
    assert ana_tenant.startswith(key_tenant + "~u_")
    by_tenant = as_json(cli(proxy, "memory", "tenant", "--tenant", key_tenant, "--user", "ana",
                            "--json"))
    assert by_tenant == {"tenant": ana_tenant, "key_tenant": key_tenant, "stored": True}
    hits = as_json(cli(proxy, "memory", "search", "Lisbon", "--json"))
    assert {h["tenant"] for h in hits if "Lisbon" in h["text"]} == {ana_tenant}, hits
    nobody = cli(proxy, "memory", "tenant", "--key-env", "TEST_CLIENT_KEY", "--user", "zoe")
    assert nobody.exit_code == 0 and "nothing is stored" in nobody.stderr, nobody.output
    assert cli(proxy, "memory", "tenant", "--user", "ana").exit_code == 2
    monkeypatch.setenv("TEST_CLIENT_KEY", "")
    assert cli(proxy, "memory", "tenant", "--key-env", "TEST_CLIENT_KEY").exit_code == 2
    purged = cli(proxy, "memory", "purge", "--tenant", ana_tenant, "--yes")
    assert purged.exit_code == 0, purged.output
    hits = as_json(cli(proxy, "memory", "search", "Lisbon Berlin", "--json"))
    assert not any("Lisbon" in h["text"] for h in hits), hits
    assert any("Berlin" in h["text"] for h in hits), hits
