"""Failed admin sign-ins, counted per client address, and the wait they impose.

A wrong admin token (the inspector's sign-in form, a wrong ``Authorization:
Bearer`` on ``/lcm/``) counts against the address it came from. After
:attr:`ThrottleLimits.failures` within :attr:`ThrottleLimits.window_seconds` that
address is refused (429, ``Retry-After``) until the oldest of those failures is
older than the window; a correct token resets its count. Without this an
attacker who reaches the port could try tokens as fast as the proxy answers.

Sans-io: no sockets and no clock of its own (``clock`` is injected), so the
window is tested without waiting. Memory is bounded: at most
:attr:`ThrottleLimits.max_tracked` addresses are kept, the least recently failed
dropped first; IPv6 clients are counted per /64 (:func:`address_key`), the block
one host is usually given.
"""

from __future__ import annotations

import ipaddress
import math
import time
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class ThrottleLimits:
    """How many failures an address may make in how long, and how many addresses
    are tracked at once."""

    failures: int = 10
    window_seconds: float = 300.0
    max_tracked: int = 4096


def address_key(peer: str | None) -> str:
    """The key failures from ``peer`` (a socket's peer address) count under: the
    IPv4 address (an IPv4-mapped IPv6 one as IPv4), an IPv6 address's /64
    network, or the text itself when it is no IP address (a Unix socket)."""
    if not peer:
        return "?"
    try:
        ip = ipaddress.ip_address(peer.split("%", 1)[0])
    except ValueError:
        return peer
    if isinstance(ip, ipaddress.IPv6Address):
        if ip.ipv4_mapped is not None:
            return str(ip.ipv4_mapped)
        return str(ipaddress.IPv6Network((ip, 64), strict=False))
    return str(ip)


class FailureThrottle:
    """Failed attempts per key in a sliding window (see the module docstring).

    ``clock``: seconds on a monotonic scale (:func:`time.monotonic` by default).
    """

    def __init__(self, limits: ThrottleLimits = ThrottleLimits(),
                 clock: Callable[[], float] = time.monotonic) -> None:
        self.limits = limits
        self._clock = clock
        self._failures: OrderedDict[str, deque[float]] = OrderedDict()

    def retry_after(self, key: str) -> int:
        """Whole seconds ``key`` must wait before it may try again; 0 when it may now."""
        times = self._live(key)
        if times is None or len(times) < self.limits.failures:
            return 0
        return max(1, math.ceil(times[0] + self.limits.window_seconds - self._clock()))

    def failed(self, key: str) -> None:
        """Count one failure of ``key``."""
        times = self._live(key)
        if times is None:
            times = self._failures[key] = deque(maxlen=max(1, self.limits.failures))
        times.append(self._clock())
        self._failures.move_to_end(key)
        while len(self._failures) > self.limits.max_tracked:
            self._failures.popitem(last=False)

    def succeeded(self, key: str) -> None:
        """Forget ``key``'s failures (it presented the right token)."""
        self._failures.pop(key, None)

    def __len__(self) -> int:
        """Addresses tracked now (bounded by ``max_tracked``)."""
        return len(self._failures)

    def _live(self, key: str) -> deque[float] | None:
        """``key``'s failures still inside the window (``None`` when there are none;
        an empty entry is dropped)."""
        times = self._failures.get(key)
        if times is None:
            return None
        oldest = self._clock() - self.limits.window_seconds
        while times and times[0] <= oldest:
            times.popleft()
        if not times:
            del self._failures[key]
            return None
        return times
