"""Test servers and ports under pytest-xdist: a port lost to another worker is noticed.

Real sockets on loopback and real ``python -m proxy serve`` processes.
"""

from __future__ import annotations

import socket
from pathlib import Path

import aiohttp
import pytest

from tests.conftest import closed_port
from tests.reliability import support
from tests.reliability.support import ServeProcess


def test_a_closed_port_refuses_connections_and_cannot_be_taken() -> None:
    port = closed_port()
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as other:
        with pytest.raises(OSError):  # EADDRINUSE: no other server can be given it
            other.bind(("127.0.0.1", port))
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as client:
        with pytest.raises(ConnectionRefusedError):
            client.connect(("127.0.0.1", port))


async def test_a_server_that_lost_its_port_is_not_taken_for_another_ones(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The second server is handed the first one's port (the race two workers can
    lose between picking a port and binding it): its process cannot bind, and the
    first server's health must not pass for its own; it starts again on another port."""
    upstream = f"http://127.0.0.1:{closed_port()}/v1"
    first = ServeProcess(upstream, tmp_path / "a", tmp_path / "a.log")
    second = ServeProcess(upstream, tmp_path / "b", tmp_path / "b.log")
    try:
        await first.start()
        ports = iter([first.port])
        real_free_port = support.free_port
        monkeypatch.setattr(support, "free_port", lambda: next(ports, None) or real_free_port())
        await second.start()
        assert second.port != first.port
        async with aiohttp.ClientSession() as http:
            async with http.get(second.root + "/lcm/health") as r:
                body = await r.json()
        assert Path(body["data_dir"]).resolve() == (tmp_path / "b").resolve()
        assert second.proc is not None and second.proc.poll() is None
    finally:
        second.stop()
        first.stop()
