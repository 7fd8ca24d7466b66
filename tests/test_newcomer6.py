"""Findings of the sixth newcomer pass (docs/evaluation/newcomer6/README.md), each
through a real proxy, its fake upstream on loopback and the real CLI.

An operator's ``memory edit`` keeps the item's source message but not its words: the
block said ``[fact · msg 16] I'm pescatarian (I eat fish). (corrects msg 16: "I'm
vegetarian." — superseded)``, msg 16 correcting itself with words it never said. It
now tags the line as an operator's edit and quotes the text the edit replaced."""

from __future__ import annotations

import re
from typing import Any

from click.testing import CliRunner

from proxy.cli import main
from tests.fake_upstream import FakeUpstream
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
    from tests.test_injection import Agent
    agent = Agent(proxy, upstream, role="ops")
    await agent.say("Actually, the staging database runs on port 6543 when the VPN is up.")
    await settle(proxy)

    line = line_of(await block_for(proxy, upstream), "6543")
    assert "edited by an operator" not in line and "edited from" not in line
    assert re.search(r'\(corrects msg \d+: "' + re.escape(SAID) + '" — superseded\\)$',
                     line), line
