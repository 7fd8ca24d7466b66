"""Which upstream errors say "no tools here" (proxy/flow/toolrefusal.py)."""

from __future__ import annotations

from typing import Any

import orjson
import pytest

from proxy.flow.toolrefusal import ToolRefusals, tools_refused, without_memory_tools


@pytest.mark.parametrize(("status", "body", "refused"), [
    (400, {"error": {"message": "registry.ollama.ai/library/gemma3:latest does not support"
                                " tools", "type": "api_error"}}, True),  # Ollama
    (500, {"error": {"code": 500, "message": "tools param requires --jinja flag",
                     "type": "server_error"}}, True),  # llama.cpp server
    (400, {"object": "error", "type": "BadRequestError", "message":
           '"auto" tool choice requires --enable-auto-tool-choice and --tool-call-parser'
           " to be set"}, True),  # vLLM
    (400, {"error": {"message": "Unsupported parameter: 'tools' is not supported with this"
                                " model.", "type": "invalid_request_error"}}, True),
    (400, {"error": {"message": "Invalid schema for function 'get_weather': 'required' is"
                                " required", "type": "invalid_request_error"}}, False),
    (400, {"error": {"message": "This model's maximum context length is 8192 tokens."}},
     False),
    (400, {"type": "error", "error": {"type": "invalid_request_error",
                                      "message": "tools.0.name: String should match"}}, False),
    (429, {"error": {"message": "Rate limit reached"}}, False),
    (200, {"error": {"message": "does not support tools"}}, False),
])
def test_a_refusal_of_tools_is_told_from_other_errors(status: int, body: Any,
                                                      refused: bool) -> None:
    assert tools_refused(status, orjson.dumps(body)) is refused


def test_only_the_memory_tools_are_taken_off() -> None:
    mine = {"type": "function", "function": {"name": "get_weather"}}
    ours = {"type": "function", "function": {"name": "memory_search"}}
    claude = {"name": "memory_grep", "input_schema": {}}
    body = {"model": "m", "tools": [mine, ours, claude]}
    assert without_memory_tools(body, {"memory_search", "memory_grep"}) == {
        "model": "m", "tools": [mine]}
    assert without_memory_tools({"model": "m", "tools": [ours]}, {"memory_search"}) == {
        "model": "m"}
    assert body["tools"] == [mine, ours, claude]  # the input is not changed


def test_refusals_are_per_upstream_and_model_and_bounded(monkeypatch: Any) -> None:
    from proxy.flow import toolrefusal

    monkeypatch.setattr(toolrefusal, "MAX_MODELS", 2)
    seen = ToolRefusals()
    seen.learn("http://a/v1", "gemma3")
    assert seen.refuses("http://a/v1", "gemma3")
    assert not seen.refuses("http://b/v1", "gemma3") and not seen.refuses("http://a/v1", "x")
    seen.learn("http://a/v1", "m2")
    seen.learn("http://a/v1", "m3")
    assert not seen.refuses("http://a/v1", "gemma3")  # the oldest is forgotten
    seen.learn("http://a/v1", None)
    assert not seen.refuses("http://a/v1", None)
