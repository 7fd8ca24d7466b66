"""Long-session evaluation of lcm-proxy against two baselines (issue 8).

Seeded synthetic sessions with an answer key written by the generator
(:mod:`.generator`, templates in :mod:`.topics_en`, :mod:`.topics_cjk`,
:mod:`.chatter`) are driven through real proxies over HTTP with the real openai SDK
against a scripted fake upstream (:mod:`.fake`) by :mod:`.runner`, for three
systems (:mod:`.systems`); the measures are pure functions (:mod:`.metrics`,
:mod:`.storecheck`), aggregated and rendered by :mod:`.report` and :mod:`.render`;
:mod:`.harness` runs a profile. :mod:`.compactbench` and :mod:`.benchall` are the
``lcm-proxy bench`` pieces that live here. This package drives HTTP, so it belongs
to ``proxy``, not ``memory_core``.

Importing the package loads the generator only: the answer key is produced by code
that cannot see the proxy or the engine (``run_eval`` is imported on first use).
"""

from typing import Any

from proxy.evaluation.generator import PROFILES, generate_profile, generate_session

__all__ = ["PROFILES", "generate_profile", "generate_session", "run_eval", "run_eval_async"]


def __getattr__(name: str) -> Any:
    if name in ("run_eval", "run_eval_async"):
        from proxy.evaluation import harness

        return getattr(harness, name)
    raise AttributeError(f"module 'proxy.evaluation' has no attribute {name!r}")
