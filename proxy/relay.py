"""Relay an upstream body to the client as it arrives, optionally keeping a copy.

The client must see each chunk the moment it arrives (streaming is the product);
memory needs the whole body afterwards. So the relay only appends the raw chunks
to a list — decoding happens after the last byte was written, off the hot path.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass, field

import aiohttp
from aiohttp import web

log = logging.getLogger("lcm.relay")


@dataclass
class RelayResult:
    """What happened while relaying: bytes relayed (``nbytes``), the chunks kept
    (when ``keep`` was set), whether the client left early (``client_gone``) and
    whether the upstream body ended abnormally (``upstream_error``)."""

    nbytes: int = 0
    chunks: list[bytes] = field(default_factory=list)
    client_gone: bool = False
    upstream_error: str | None = None

    def body(self) -> bytes:
        """Return the kept chunks joined."""
        return b"".join(self.chunks)


async def relay_body(
    upstream: aiohttp.ClientResponse,
    response: web.StreamResponse,
    *,
    keep: bool,
) -> RelayResult:
    """Copy ``upstream``'s body to the prepared ``response`` chunk by chunk.

    Never raises for client disconnects or upstream read errors: the client's
    response is ended (``write_eof``) when possible and the upstream connection is
    closed when the client left, which aborts generation upstream.
    """
    result = RelayResult()
    try:
        async for chunk in upstream.content.iter_any():
            if keep:
                result.chunks.append(chunk)
            result.nbytes += len(chunk)
            try:
                await response.write(chunk)
            except (ConnectionResetError, aiohttp.ClientConnectionResetError, RuntimeError):
                result.client_gone = True
                break
    except (aiohttp.ClientError, asyncio.TimeoutError) as exc:
        result.upstream_error = f"{exc.__class__.__name__}: {exc}"
        log.warning("upstream body ended abnormally: %s", result.upstream_error)
    if result.client_gone:
        upstream.close()
        return result
    try:
        await response.write_eof()
    except (ConnectionResetError, aiohttp.ClientConnectionResetError, RuntimeError):
        result.client_gone = True
    return result
