"""Usage summed across the upstream rounds of one answer (proxy/wire/chat.py
``sum_usage``, used by every API's tool loop)."""

from __future__ import annotations

import copy

from proxy.wire.chat import sum_usage


def test_fields_a_later_round_adds_are_kept_and_counts_summed() -> None:
    first = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    second = {"prompt_tokens": 30, "completion_tokens": 7, "total_tokens": 37,
              "prompt_tokens_details": {"cached_tokens": 8},
              "completion_tokens_details": {"reasoning_tokens": 4}}
    given = copy.deepcopy(second)
    total = sum_usage(sum_usage(None, first), second)
    assert total == {"prompt_tokens": 40, "completion_tokens": 12, "total_tokens": 52,
                     "prompt_tokens_details": {"cached_tokens": 8},
                     "completion_tokens_details": {"reasoning_tokens": 4}}
    assert second == given  # the round's own object is not shared or changed
    total["prompt_tokens_details"]["cached_tokens"] = 0
    assert second["prompt_tokens_details"]["cached_tokens"] == 8


def test_anthropic_usage_with_nulls_and_nested_counts() -> None:
    first = {"input_tokens": 100, "output_tokens": 20, "cache_creation": None,
             "cache_read_input_tokens": 0, "service_tier": "standard"}
    second = {"input_tokens": 120, "output_tokens": 30,
              "cache_creation": {"ephemeral_5m_input_tokens": 50},
              "cache_read_input_tokens": 90, "service_tier": "standard"}
    total = sum_usage(sum_usage(None, first), second)
    assert total == {"input_tokens": 220, "output_tokens": 50,
                     "cache_creation": {"ephemeral_5m_input_tokens": 50},
                     "cache_read_input_tokens": 90, "service_tier": "standard"}
    assert sum_usage(total, None) is total
