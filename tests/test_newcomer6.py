"""Findings of the sixth newcomer pass (docs/evaluation/newcomer6/README.md), each
through a real proxy, its fake upstream on loopback and the real CLI.

An operator's ``memory edit`` keeps the item's source message but not its words: the
block said ``[fact · msg 16] I'm pescatarian (I eat fish). (corrects msg 16: "I'm
vegetarian." — superseded)``, msg 16 correcting itself with words it never said. It
now tags the line as an operator's edit and quotes the text the edit replaced.

"We renamed the production cluster to boreas-2." superseded nothing: a rename is now
an update of what it renames, as "changed my username to …" is."""

from __future__ import annotations

import re
from typing import Any

import pytest
from click.testing import CliRunner

from memory_core.engine import Engine
from proxy.cli import main
from tests.fake_upstream import FakeUpstream
from tests.test_injection import Agent, block_of
from tests.test_memory_classes import active, put
from tests.test_memory_edit import FIXED, SAID, block_for, item_row, told
from tests.test_purge_thread import settle, start


def line_of(block: str, text: str) -> str:
    lines = [ln for ln in block.splitlines() if text in ln]
    assert len(lines) == 1, block
    return lines[0]


async def test_an_edited_item_reads_as_the_operators_words_not_its_messages(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    proxy = await start(make_proxy)
    old = await told(proxy, upstream)
    source = item_row(proxy, old)["source_message_id"]
    out = CliRunner().invoke(main, ["memory", "edit", "--data-dir",
                                    proxy.settings.storage.data_dir, f"item:{old}", FIXED,
                                    "--reason", "the user mailed the new port"])
    assert out.exit_code == 0, out.output
    await settle(proxy)

    line = line_of(await block_for(proxy, upstream), FIXED)
    tags = re.match(r"- \[([^\]]*)\]", line)
    assert tags is not None, line
    assert f"msg {source}" in tags.group(1).split(" · ")  # where it came from, still
    assert "edited by an operator" in tags.group(1).split(" · ")
    assert line.endswith(f'(edited from "{SAID}" — superseded)'), line
    assert "corrects msg" not in line  # msg N never said the operator's words


async def test_a_users_own_correction_still_names_the_message_it_corrects(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    proxy = await start(make_proxy)
    await told(proxy, upstream)
    agent = Agent(proxy, upstream, role="ops")
    await agent.say("Actually, the staging database runs on port 6543 when the VPN is up.")
    await settle(proxy)

    line = line_of(await block_for(proxy, upstream), "6543")
    assert "edited by an operator" not in line and "edited from" not in line
    assert re.search(r'\(corrects msg \d+: "' + re.escape(SAID) + '" — superseded\\)$',
                     line), line


# "We renamed the production cluster to boreas-2." left "Our production cluster is
# called atlas-7." current beside it: "renamed … to" was no update cue as "changed my
# username to" is, and its subject read "renamed production cluster".
RENAMES = [
    ("Our production cluster is called atlas-7.",
     "We renamed the production cluster to boreas-2."),
    ("Our repo is named lcm-core.", "We renamed the repo to lcm-engine."),
    ("My blog is called Field Notes.", "I renamed my blog to Notes from the Field."),
    ("The alerts channel is #infra-alerts.", "We renamed the alerts channel to #ops-alerts."),
]


@pytest.mark.parametrize(("old", "new"), RENAMES)
def test_a_rename_supersedes_the_old_name(engine: Engine, old: str, new: str) -> None:
    put(engine, old)
    put(engine, new)
    rows = active(engine)
    assert [r["text"] for r in rows] == [new], rows
    assert rows[0]["supersedes"] is not None


def test_a_rename_of_another_thing_supersedes_nothing(engine: Engine) -> None:
    put(engine, "Our repo is named lcm-core.")
    put(engine, "I renamed the file to notes.txt before sending it.")
    assert len(active(engine)) == 2


async def test_a_new_conversation_gets_the_new_name_only(
        make_proxy: Any, upstream: FakeUpstream) -> None:
    proxy = await start(make_proxy)
    said = Agent(proxy, upstream, role="ops")
    await said.say("Our production cluster is called atlas-7.")
    await said.say("We renamed the production cluster to boreas-2.")
    await settle(proxy)
    asker = Agent(proxy, upstream, role="ops", system="You run the clusters.")
    await asker.say("Which cluster is production?")
    block = block_of(asker.upstream_last_user())
    line = line_of(block, "boreas-2")
    assert re.search(r'\(corrects msg \d+: "Our production cluster is called atlas-7\."'
                     r" — superseded\)$", line), line
    assert line_of(block, "atlas-7") == line  # the old name only as history
