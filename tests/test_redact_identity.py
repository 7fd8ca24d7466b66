"""Identity and payment numbers masked in what capture stores
(memory_core/capture/identity.py; replay class 59 in docs/evaluation/memory_replays.md)."""

from __future__ import annotations

import zlib

import orjson
import pytest

from memory_core.capture import forwarded
from memory_core.capture import response_threads as responsemap
from memory_core.capture.evidence import stored_forms
from memory_core.capture.identity import (
    CANDIDATE_BYTES,
    may_contain_identity_number,
    redact_identity_numbers,
)
from memory_core.capture.redact import may_need_redaction, redact_text, redact_value
from memory_core.config import MemoryConfig
from memory_core.models import Scope


@pytest.mark.parametrize("text, out", [
    ("My SSN is 123-45-6789.", "My SSN is [REDACTED:ssn]."),
    ("ssn: 123456789", "ssn: [REDACTED:ssn]"),
    ("Social Security number is 123 45 6789", "Social Security number is [REDACTED:ssn]"),
    ("social security no. 078051120", "social security no. [REDACTED:ssn]"),
    ("(123-45-6789)", "([REDACTED:ssn])"),
    ("Visa 4111 1111 1111 1111 exp 12/27", "Visa [REDACTED:card_number] exp 12/27"),
    ("card=4111-1111-1111-1111;", "card=[REDACTED:card_number];"),
    ("mc 5555555555554444", "mc [REDACTED:card_number]"),
    ("mc 2223 0000 4841 0010", "mc [REDACTED:card_number]"),
    ("amex 3782 822463 10005.", "amex [REDACTED:card_number]."),
    ("discover 6011111111111117", "discover [REDACTED:card_number]"),
    ("jcb 3530111333300000", "jcb [REDACTED:card_number]"),
    ("IBAN DE89 3704 0044 0532 0130 00, thanks", "IBAN [REDACTED:iban], thanks"),
    ("GB82WEST12345698765432", "[REDACTED:iban]"),
    ("to NL91ABNA0417164300 OK", "to [REDACTED:iban] OK"),
    ("FR14 2004 1010 0505 0001 3M02 606", "[REDACTED:iban]"),
    ("两个：123-45-6789 和 4111111111111111。", "两个：[REDACTED:ssn] 和 [REDACTED:card_number]。"),
])
def test_checked_numbers_are_masked(text: str, out: str) -> None:
    assert redact_identity_numbers(text) == out
    assert may_contain_identity_number(text)
    assert redact_text(text, secrets=False, identity=True) == out


@pytest.mark.parametrize("text", [
    # SSN-shaped but not issued, or part of a longer code
    "000-12-3456", "666-12-3456", "912-34-5678", "123-00-4567", "123-45-0000",
    "ORD-123-45-6789", "123-45-6789-01", "A123-45-6789", "SSN 000000000",
    "invoice 123456789",  # nine bare digits without the keyword
    # order codes, phone numbers, dates, versions, ids, hashes, timestamps, amounts
    "Order #4111111111111112 shipped",  # 16 digits failing Luhn
    "order id 1234567890123456", "PO 2024-000123-45",
    "call +1 415-555-2671 or (415) 555 2671", "+44 20 7946 0958", "1-800-555-0199",
    "2024-01-15", "15/01/2024", "2024-01-15T10:30:00.123Z", "20240115123045",
    "v1.2.3", "version 10.4.1234.5678", "python 3.11.4",
    "123e4567-e89b-12d3-a456-426614174000",
    "commit 9fceb02d0ae598e95dc970b74767f19372d61af8", "sha 4111111111111111abcdef",
    "ts 1700000000123", "1700000000123456789", "epoch 1700000000",
    "$1,234,567.89", "EUR 4 111 111 111.00", "12 345 678 901 234",
    "DE89 3704 0044 0532 0130 01",  # mod-97 fails
    "XX89370400440532013000", "DE8937040044053201300",  # no such country, too short
    "ISBN 978-3-16-148410-0",
])
def test_lookalikes_stay(text: str) -> None:
    assert redact_identity_numbers(text) is text


def test_a_text_without_numbers_is_the_same_object_and_pretests_agree() -> None:
    text = "Nothing to see here, only words and 12 apples."
    assert redact_identity_numbers(text) is text
    assert not may_contain_identity_number(text)
    assert not may_need_redaction(text, secrets=False, identity=True)
    raw = orjson.dumps({"content": "card 4111 1111 1111 1111"})
    assert CANDIDATE_BYTES.search(raw) is not None


def test_flags_choose_what_is_masked() -> None:
    text = "key sk-proj-abcdefghijklmnopqrstuvwx and SSN 123-45-6789"
    assert redact_text(text) == "key [REDACTED:openai_key] and SSN 123-45-6789"
    assert redact_text(text, secrets=False, identity=True) == (
        "key sk-proj-abcdefghijklmnopqrstuvwx and SSN [REDACTED:ssn]")
    assert redact_text(text, secrets=True, identity=True) == (
        "key [REDACTED:openai_key] and SSN [REDACTED:ssn]")
    assert redact_text(text, secrets=False, identity=False) is text
    value = {"content": [{"type": "text", "text": "SSN 123-45-6789"}], "n": 4111111111111111}
    out = redact_value(value, secrets=False, identity=True)
    assert out["content"][0]["text"] == "SSN [REDACTED:ssn]"
    assert out["n"] == 4111111111111111  # a JSON number is no text: left as sent
    assert redact_value(value) is value


def test_stored_forms_follow_the_setting() -> None:
    msg = {"role": "user", "content": "My card is 4111 1111 1111 1111."}
    text, raw = stored_forms(msg, MemoryConfig())
    assert text == "My card is [REDACTED:card_number]."
    assert "4111" not in raw and "[REDACTED:card_number]" in raw
    text, raw = stored_forms(msg, MemoryConfig(redact_identity_numbers=False))
    assert text == msg["content"] and "4111 1111 1111 1111" in raw


def test_forwarded_bodies_and_response_rows_follow_the_setting() -> None:
    scope = Scope("t", "r")
    body = {"model": "m", "messages": [{"role": "user", "content": "IBAN GB82WEST12345698765432"}]}
    for identity in (True, False):
        row = forwarded.prepare(scope, "r", body, {}, max_bytes=1 << 20, redact=True,
                                identity=identity)
        assert row.body is not None
        stored = zlib.decompress(row.body)
        assert (b"GB82WEST" in stored) is not identity and row.redacted == int(identity)
    items = [{"type": "message", "role": "user", "content": "SSN 123-45-6789"}]
    assert responsemap.prepare(items, redact=True, store_raw=True, identity=True) is None
    assert responsemap.prepare(items, redact=True, store_raw=True) is not None
