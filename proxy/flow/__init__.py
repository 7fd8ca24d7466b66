"""The request flow: one :class:`~proxy.flow.exchange.Exchange` per request, and the
steps that act on it (recording its evidence, recovering from a context error)."""
