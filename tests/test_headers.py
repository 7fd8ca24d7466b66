"""Header policy toward the upstream: a body aiohttp decoded loses its Content-Encoding."""

from __future__ import annotations

import pytest

from proxy.headers import is_body_decoded, to_upstream


@pytest.mark.parametrize("value,decoded", [("gzip", True), ("GZIP", True), ("deflate", True),
                                           ("br", True), ("zstd", True), ("identity", False),
                                           ("gzip, br", False), ("compress", False),
                                           ("gzïp", False)])
def test_is_body_decoded_mirrors_aiohttp(value: str, decoded: bool) -> None:
    assert is_body_decoded({"Content-Encoding": value}) is decoded
    assert is_body_decoded({}) is False


def test_a_decoded_body_loses_content_encoding_and_its_length() -> None:
    sent = {"Content-Encoding": "gzip", "Content-Length": "31", "Content-Type": "x/y"}
    out = to_upstream(sent, keep_length=True)
    assert "Content-Encoding" not in out and "Content-Length" not in out
    assert out["Content-Type"] == "x/y"
    kept = to_upstream({"Content-Encoding": "compress", "Content-Length": "9"},
                       keep_length=True)
    assert kept["Content-Encoding"] == "compress" and kept["Content-Length"] == "9"
    rewritten = to_upstream({"Content-Encoding": "identity"}, body_decoded=True)
    assert "Content-Encoding" not in rewritten
