"""Prometheus metrics, one registry per application (tests run several apps)."""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest

_LATENCY_BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5,
                    5, 10, 30, 60, 120)
_TOKEN_BUCKETS = (50, 100, 200, 400, 800, 1500, 3000, 5000, 10000, 20000)


FAIL_OPEN_STAGES = ("capture", "memory_path", "capture_response", "search_index")
"""Stages that can fail open (the ``stage`` label of ``lcm_fail_open_total``)."""


class Metrics:
    """The proxy's counters and histograms (seconds for every duration)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        self.requests = Counter(
            "lcm_requests", "Requests handled, by route and status", ["route", "status"],
            registry=self.registry,
        )
        self.upstream_latency = Histogram(
            "lcm_upstream_latency_seconds", "Time to the upstream's response headers",
            ["route"], buckets=_LATENCY_BUCKETS, registry=self.registry,
        )
        self.fail_open = Counter(
            "lcm_fail_open", "Memory-path failures that were bypassed", ["stage"],
            registry=self.registry,
        )
        for stage in FAIL_OPEN_STAGES:  # exported at 0 from the start, for alerts
            self.fail_open.labels(stage)
        self.stage_latency = Histogram(
            "lcm_stage_latency_seconds", "Latency the proxy adds, by memory stage",
            ["stage"], buckets=_LATENCY_BUCKETS, registry=self.registry,
        )
        self.compactions = Counter(
            "lcm_compactions", "Summary nodes created, by mode (background or inline)",
            ["mode"], registry=self.registry,
        )
        self.captured_messages = Counter(
            "lcm_captured_messages", "Messages newly stored as evidence",
            registry=self.registry,
        )
        self.client_disconnects = Counter(
            "lcm_client_disconnects", "Clients that left before the response ended",
            registry=self.registry,
        )
        self.memory_outcomes = Counter(
            "lcm_memory_outcomes", "Chat requests by what the proxy did (x-lcm-memory)",
            ["outcome"], registry=self.registry,
        )
        self.injection_tokens = Histogram(
            "lcm_injection_tokens", "Tokens (o200k) of each injected memory block",
            buckets=_TOKEN_BUCKETS, registry=self.registry,
        )
        self.injected_items = Counter(
            "lcm_injected_items", "Memory items placed in injection blocks",
            registry=self.registry,
        )
        self.tool_rounds = Counter(
            "lcm_tool_rounds", "Upstream re-calls after answering memory tool calls",
            registry=self.registry,
        )
        self.context = Counter(
            "lcm_context_events",
            "Context budget outcomes: fitted (compacted inline to fit), over_budget"
            " (protected messages alone too large; forwarded unchanged), recovered /"
            " not_recovered (after an upstream context-length error)",
            ["outcome"], registry=self.registry,
        )
        self.index_lag = Gauge(
            "lcm_index_lag", "Outbox rows a derived index has not applied (set on scrape)",
            ["indexer"], registry=self.registry,
        )
        for mode in ("background", "inline"):  # exported at 0 before the first one
            self.compactions.labels(mode)
        for outcome in ("fitted", "over_budget", "recovered", "not_recovered"):
            self.context.labels(outcome)

    def render(self) -> bytes:
        """Return the Prometheus text exposition of this registry."""
        return generate_latest(self.registry)
