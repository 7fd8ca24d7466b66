"""The failed-sign-in throttle (proxy.throttle): a sliding window per address,
reset by the right token, bounded memory; driven by a hand-set clock."""

from __future__ import annotations

from proxy.throttle import FailureThrottle, ThrottleLimits, address_key


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_ten_failures_in_five_minutes_lock_the_address_until_the_first_ages_out() -> None:
    clock = Clock()
    throttle = FailureThrottle(clock=clock)
    for _ in range(9):
        throttle.failed("10.0.0.1")
        clock.now += 10
    assert throttle.retry_after("10.0.0.1") == 0
    throttle.failed("10.0.0.1")  # the tenth, 90 s after the first
    assert throttle.retry_after("10.0.0.1") == 210
    assert throttle.retry_after("10.0.0.2") == 0  # other addresses are not affected
    clock.now += 209.5
    assert throttle.retry_after("10.0.0.1") == 1
    clock.now += 0.5  # the first failure leaves the window
    assert throttle.retry_after("10.0.0.1") == 0
    throttle.failed("10.0.0.1")  # ten in the window again
    assert throttle.retry_after("10.0.0.1") == 10


def test_the_right_token_clears_the_count() -> None:
    throttle = FailureThrottle(clock=Clock())
    for _ in range(9):
        throttle.failed("a")
    throttle.succeeded("a")
    for _ in range(9):
        throttle.failed("a")
    assert throttle.retry_after("a") == 0
    throttle.failed("a")
    assert throttle.retry_after("a") > 0


def test_memory_is_bounded_and_expired_entries_are_dropped() -> None:
    clock = Clock()
    throttle = FailureThrottle(ThrottleLimits(failures=3, window_seconds=60, max_tracked=100),
                               clock=clock)
    for i in range(5000):
        throttle.failed(f"10.0.{i // 256}.{i % 256}")
        assert len(throttle) <= 100
    assert len(throttle) == 100
    assert "10.0.0.0" not in throttle._failures  # the least recently failed went first
    assert "10.0.19.135" in throttle._failures  # the newest (i = 4999) stays
    for _ in range(3):
        throttle.failed("10.9.9.9")
    assert throttle.retry_after("10.9.9.9") == 60
    clock.now += 61
    assert throttle.retry_after("10.9.9.9") == 0
    assert "10.9.9.9" not in throttle._failures


def test_ipv6_hosts_count_per_64_and_mapped_ipv4_as_ipv4() -> None:
    assert address_key("2001:db8:1:2::1") == address_key("2001:db8:1:2:ffff::9")
    assert address_key("2001:db8:1:2::1") == "2001:db8:1:2::/64"
    assert address_key("2001:db8:1:3::1") != address_key("2001:db8:1:2::1")
    assert address_key("::ffff:10.1.2.3") == address_key("10.1.2.3") == "10.1.2.3"
    assert address_key("fe80::1%eth0") == "fe80::/64"
    assert address_key(None) == "?"
