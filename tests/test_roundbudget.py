"""Hidden memory-tool rounds fit the request's context budget (proxy.flow.roundbudget)."""

from __future__ import annotations

from memory_core.assembly import budget
from proxy.flow.roundbudget import CLIP_NOTE, MIN_RESULT_TOKENS, fit_results

MESSAGES = [{"role": "user", "content": "which dashboard was it?"}]
CALL = {"role": "assistant", "content": None, "tool_calls": [
    {"id": "c1", "type": "function", "function": {"name": "memory_grep", "arguments": "{}"}}]}


def result(text: str, cid: str = "c1") -> dict[str, str]:
    return {"role": "tool", "tool_call_id": cid, "content": text}


def size(results: list[dict[str, str]]) -> int:
    return budget.messages_tokens([*MESSAGES, CALL, *results])


def test_results_that_fit_are_unchanged_and_no_budget_means_no_check() -> None:
    small = [result("GRF-7781 " * 10)]
    assert fit_results(10_000, None, MESSAGES, CALL, small) is small
    big = [result("GRF-7781 " * 5000)]
    assert fit_results(None, None, MESSAGES, CALL, big) is big


def test_results_are_clipped_to_the_room_left() -> None:
    big = [result("alpha beta gamma " * 2000, "c1"), result("delta " * 3000, "c2")]
    limit = size([]) + 600
    out = fit_results(limit, None, MESSAGES, CALL, big)
    assert out is not None and size(out) <= limit
    assert all(r["content"].endswith(CLIP_NOTE) for r in out)
    assert out[0]["content"].startswith("alpha beta gamma")


def test_no_room_means_no_round() -> None:
    big = [result("alpha " * 2000)]
    assert fit_results(size([]) + MIN_RESULT_TOKENS // 2, None, MESSAGES, CALL, big) is None
    assert fit_results(10, None, MESSAGES, CALL, big) is None


def test_what_the_upstream_reads_outside_the_messages_counts_too() -> None:
    """An Anthropic ``system`` field is no message of the round: its tokens are the
    wire's ``outside_tokens`` and leave less room for the results."""
    from proxy.wire.messages import MESSAGES as WIRE

    system = "You are a coding agent. " * 100
    outside = WIRE.outside_tokens({"system": system, "messages": []})
    assert outside > 400
    big = [result("alpha beta gamma " * 2000)]
    limit = size([]) + 800
    alone = fit_results(limit, None, MESSAGES, CALL, big)
    with_system = fit_results(limit, None, MESSAGES, CALL, big, outside=outside)
    assert alone is not None and with_system is not None
    assert size(with_system) + outside <= limit < size(alone) + outside


def test_results_are_counted_as_the_wire_sends_them() -> None:
    """Anthropic sends a round's results as one user message of ``tool_result``
    blocks: the clipped round fits when counted that way."""
    from proxy.wire.messages import MESSAGES as WIRE

    blocks = [WIRE.tool_result({"id": f"t{k}"}, "alpha beta gamma " * 900) for k in range(3)]
    limit = size([]) + 700
    out = fit_results(limit, None, MESSAGES, CALL, blocks, turns=WIRE.result_turns)
    assert out is not None
    assert budget.messages_tokens([*MESSAGES, CALL, *WIRE.result_turns(out)]) <= limit
