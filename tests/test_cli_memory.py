"""``lcm-proxy memory …`` against a populated store: status, inspect, search, explain,
retract and export, each narrowed by tenant/role where it takes them (another scope's
data is refused or absent), with ``--json`` where the command offers it."""

from __future__ import annotations

from typing import Any

import orjson
from click.testing import CliRunner, Result

from proxy.cli import main
from tests.conftest import RunningProxy
from tests.test_admin_support import (  # noqa: F401 - steady_proxy_fixture is `proxy`
    MARK_A,
    MARK_B,
    Populated,
    populate,
    steady_proxy_fixture,
)


def cli(proxy: RunningProxy, *args: str) -> Result:
    return CliRunner().invoke(main, [*args, "--data-dir", proxy.settings.storage.data_dir])


def as_json(result: Result) -> Any:
    assert result.exit_code == 0, result.output
    return orjson.loads(result.stdout)


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
