"""Prometheus metrics, one registry per application (tests run several apps).

The list of series, with their units and labels, is in docs/metrics.md. Figures the
memory engine keeps (memory_core imports no metrics library) are read from
:meth:`memory_core.engine.Engine.stats` at scrape time by :class:`EngineCollector`.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from typing import Any, TypeVar

from prometheus_client import (
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    ProcessCollector,
    generate_latest,
)
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector

log = logging.getLogger("lcm.metrics")

_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
                    5, 10, 30, 60, 120)
_TOKEN_BUCKETS = (50, 100, 200, 400, 800, 1500, 3000, 5000, 10000, 20000)


FAIL_OPEN_STAGES = ("capture", "memory_path", "capture_response", "search_index", "forward_log")
"""Stages that can fail open (the ``stage`` label of ``lcm_fail_open_total``)."""

UPSTREAM_ERROR_CAUSES = ("unreachable", "timeout", "429", "4xx", "5xx")
"""The ``cause`` label of ``lcm_upstream_errors_total``: no connection or one that
broke before the answer's headers; no answer in time; the upstream answered 429;
another 4xx; a 5xx."""

MODEL_LABEL_MAX = 100
"""Characters of a model name kept in the ``model`` label."""
MODEL_LABELS_MAX = 64
"""Distinct ``model`` label values a process exports; later new names count under
``other``. The name comes from the client's request (and the upstream's answer), so
without a bound each new string would add series for good: a client could grow the
proxy's memory and the scrape without end."""


_M = TypeVar("_M", bound="_ChildCache")


class _ChildCache:
    """``labels(*values)`` from a dict of the children already made.

    prometheus_client's ``labels`` converts every value with ``str``, takes the
    metric's lock and looks the tuple up, about seven times a request; a child once
    made is the same object for good (this registry never removes one), so a plain
    dict hit returns it. Positional values only; keyword labels take the library's
    path. A child made twice in a race is the same child (the library's lock).
    """

    _children: dict[tuple[object, ...], Any]

    def labels(self: _M, *values: object, **kwargs: object) -> _M:
        if kwargs:
            return super().labels(*values, **kwargs)  # type: ignore[misc]
        try:
            return self._children[values]
        except AttributeError:
            self._children = {}
        except KeyError:
            pass
        child = super().labels(*values)  # type: ignore[misc]
        self._children[values] = child
        return child


class _Counter(_ChildCache, Counter):
    pass


class _Gauge(_ChildCache, Gauge):
    pass


class _Histogram(_ChildCache, Histogram):
    pass


def upstream_error_cause(status: int | None = None, exc: BaseException | None = None
                         ) -> str | None:
    """The ``lcm_upstream_errors_total`` cause of an answered ``status`` or a transport
    ``exc`` (a ``TimeoutError`` → ``timeout``, any other → ``unreachable``); ``None``
    for a status below 400."""
    if exc is not None:
        return "timeout" if isinstance(exc, TimeoutError) else "unreachable"
    if status is None or status < 400:
        return None
    if status == 429:
        return "429"
    return "4xx" if status < 500 else "5xx"


class Metrics:
    """The proxy's counters and histograms (seconds for every duration)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = _Counter(
            "lcm_requests", "Requests handled, by route and status", ["route", "status"],
            registry=self.registry,
        )
        self.upstream_latency = _Histogram(
            "lcm_upstream_latency_seconds", "Time to the upstream's response headers",
            ["route"], buckets=_LATENCY_BUCKETS, registry=self.registry,
        )
        self.fail_open = _Counter(
            "lcm_fail_open", "Memory-path failures that were bypassed", ["stage"],
            registry=self.registry,
        )
        for stage in FAIL_OPEN_STAGES:  # exported at 0 from the start, for alerts
            self.fail_open.labels(stage)
        self.stage_latency = _Histogram(
            "lcm_stage_latency_seconds", "Latency the proxy adds, by memory stage",
            ["stage"], buckets=_LATENCY_BUCKETS, registry=self.registry,
        )
        self.compactions = _Counter(
            "lcm_compactions", "Summary nodes created, by mode (background or inline)",
            ["mode"], registry=self.registry,
        )
        self.client_disconnects = _Counter(
            "lcm_client_disconnects", "Clients that left before the response ended",
            registry=self.registry,
        )
        self.memory_outcomes = _Counter(
            "lcm_memory_outcomes", "Chat requests by what the proxy did (x-lcm-memory)",
            ["outcome"], registry=self.registry,
        )
        self.injection_tokens = _Histogram(
            "lcm_injection_tokens", "Tokens (o200k) of each injected memory block",
            buckets=_TOKEN_BUCKETS, registry=self.registry,
        )
        self.injected_items = _Counter(
            "lcm_injected_items", "Memory items placed in injection blocks",
            registry=self.registry,
        )
        self.tool_rounds = _Counter(
            "lcm_tool_rounds", "Upstream re-calls after answering memory tool calls",
            registry=self.registry,
        )
        self.context = _Counter(
            "lcm_context_events",
            "Context budget outcomes: fitted (compacted inline to fit), clipped_results"
            " (the client's tool results cut in their middle to fit), over_budget"
            " (protected messages alone too large; forwarded unchanged), recovered /"
            " not_recovered (after an upstream context-length error)",
            ["outcome"], registry=self.registry,
        )
        for mode in ("background", "inline"):  # exported at 0 before the first one
            self.compactions.labels(mode)
        for outcome in ("fitted", "clipped_results", "over_budget", "recovered",
                        "not_recovered"):
            self.context.labels(outcome)
        self.upstream_errors = _Counter(
            "lcm_upstream_errors", "Upstream calls that failed, by cause", ["cause"],
            registry=self.registry,
        )
        for cause in UPSTREAM_ERROR_CAUSES:  # exported at 0 from the start, for alerts
            self.upstream_errors.labels(cause)
        self._models: set[str] = set()
        self.tokens = _Counter(
            "lcm_upstream_tokens", "Tokens the upstream reported in its usage, by model"
            " and kind (prompt or completion)", ["model", "kind"], registry=self.registry,
        )
        self.in_flight = _Gauge(
            "lcm_requests_in_flight", "Requests being handled now, by route",
            ["route"], registry=self.registry,
        )
        self.memory_release = _Histogram(
            "lcm_memory_release_seconds", "Returns of freed C-heap memory to the system"
            " once the proxy is quiet (glibc malloc_trim; proxy.memory_release_idle_seconds),"
            " and how long each took", buckets=(0.001, 0.005, 0.02, 0.1, 0.5),
            registry=self.registry,
        )
        ProcessCollector(registry=self.registry)  # process_* (Linux /proc): RSS, CPU, fds
        self._engine_collector: EngineCollector | None = None

    def watch_engine(self, stats: Callable[[], dict[str, Any]]) -> None:
        """Export the figures ``stats()`` returns (``Engine.stats``) on every scrape.

        Call once the engine is open; a second call replaces the first source.
        """
        if self._engine_collector is not None:
            self.registry.unregister(self._engine_collector)
        self._engine_collector = EngineCollector(stats)
        self.registry.register(self._engine_collector)

    def count_tokens(self, model: Any, usage: Any) -> None:
        """Add an upstream ``usage`` object's tokens to ``lcm_upstream_tokens_total``
        under ``model`` (``unknown`` when not a string; ``other`` once
        :data:`MODEL_LABELS_MAX` names are exported).

        ``prompt``: ``prompt_tokens`` (Chat Completions), else ``input_tokens``
        (Responses API) plus Anthropic's ``cache_creation_input_tokens`` and
        ``cache_read_input_tokens``, which its ``input_tokens`` leaves out.
        ``completion``: ``completion_tokens``, else ``output_tokens``. A value that is
        not a non-negative integer counts as absent.
        """
        if not isinstance(usage, dict):
            return
        name = model[:MODEL_LABEL_MAX] if isinstance(model, str) and model else "unknown"
        if name not in self._models:
            if len(self._models) >= MODEL_LABELS_MAX:
                name = "other"
            else:
                self._models.add(name)

        def n(key: str) -> int | None:
            v = usage.get(key)
            return v if isinstance(v, int) and not isinstance(v, bool) and v >= 0 else None

        prompt = n("prompt_tokens")
        if prompt is None and n("input_tokens") is not None:
            prompt = sum(n(k) or 0 for k in ("input_tokens", "cache_creation_input_tokens",
                                              "cache_read_input_tokens"))
        completion = n("completion_tokens")
        if completion is None:
            completion = n("output_tokens")
        for kind, value in (("prompt", prompt), ("completion", completion)):
            if value is not None:
                self.tokens.labels(name, kind).inc(value)

    def render(self) -> bytes:
        """Return the Prometheus text exposition of this registry.

        Reads the engine's store when one is watched: call it off the event loop.
        """
        return generate_latest(self.registry)


class EngineCollector(Collector):
    """Reads ``Engine.stats()`` at scrape time (see docs/metrics.md for the series).

    When the store cannot be read (closing, broken file) the engine's series are
    left out of that scrape and the error is logged; the scrape itself succeeds.
    """

    def __init__(self, stats: Callable[[], dict[str, Any]]) -> None:
        self._stats = stats

    def describe(self) -> list[Metric]:
        return []  # series are only known at scrape time; keeps registration cheap

    def collect(self) -> Iterator[Metric]:
        try:
            st = self._stats()
        except Exception as exc:  # noqa: BLE001 - a scrape never fails for the store
            log.warning("engine figures unavailable for this scrape: %s", exc)
            return
        yield CounterMetricFamily(
            "lcm_captured_messages", "Messages newly stored as evidence (committed)",
            value=st["messages_stored"])
        yield GaugeMetricFamily(
            "lcm_sqlite_writer_queue_depth", "Write jobs waiting for the SQLite writer",
            value=st["writer_queue_depth"])
        yield _histogram("lcm_sqlite_commit_seconds",
                         "Duration of each SQLite write transaction (BEGIN to COMMIT)",
                         [([], st["commit_latency"])])
        yield _histogram("lcm_embed_seconds",
                         "Duration of each embedder call, by kind (document or query)",
                         [([kind], snap) for kind, snap in sorted(st["embed_latency"].items())],
                         ["kind"])
        rows = GaugeMetricFamily(
            "lcm_index_lag", "Outbox rows a derived index has not applied", labels=["indexer"])
        for name, info in sorted(st["index_lag"].items()):
            rows.add_metric([name], info["lag"])
        yield rows
        ages = GaugeMetricFamily(
            "lcm_index_lag_seconds", "Age of the oldest stored message a derived index has"
            " not applied (0 when caught up)", labels=["indexer"])
        for name, seconds in sorted(st["index_lag_seconds"].items()):
            ages.add_metric([name], seconds)
        yield ages


def _histogram(name: str, doc: str, series: list[tuple[list[str], Any]],
               labels: list[str] | None = None) -> HistogramMetricFamily:
    """A histogram family from ``LatencySnapshot`` objects (one per label set)."""
    family = HistogramMetricFamily(name, doc, labels=labels)
    for values, snap in series:
        buckets = [("+Inf" if b == float("inf") else _le(b), n) for b, n in snap.buckets]
        family.add_metric(values, buckets, snap.total)
    return family


def _le(bound: float) -> str:
    return repr(float(bound))
