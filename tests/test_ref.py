"""The one parser of ids and refs typed by operators and users (admin, chat, CLI, tools)."""

from __future__ import annotations

import pytest

from memory_core.errors import InvalidIdError
from memory_core.tools.refs import MAX_ID, parse_id, parse_item_id, parse_ref


@pytest.mark.parametrize("value,expected", [("7", 7), (" 12 ", 12), ("007", 7), (3, 3),
                                            (str(MAX_ID), MAX_ID), (MAX_ID, MAX_ID)])
def test_parse_id_accepts_sqlite_rowids(value: object, expected: int) -> None:
    assert parse_id(value) == expected


@pytest.mark.parametrize("value", ["99999999999999999999999", str(MAX_ID + 1), MAX_ID + 1,
                                   "0", 0, "-3", -3, "+3", "1.5", 1.5, "", "abc", "٣", "²",
                                   True, None, [1]])
def test_parse_id_refuses_what_no_row_can_have(value: object) -> None:
    with pytest.raises(InvalidIdError) as info:
        parse_id(value, what="item id")
    assert isinstance(info.value, ValueError) and "item id" in str(info.value)


def test_parse_ref_kinds_and_default() -> None:
    assert parse_ref("item:7") == ("item", 7)
    assert parse_ref("i:7") == ("item", 7)
    assert parse_ref("msg:12") == ("msg", 12)
    assert parse_ref("message:12") == ("msg", 12)
    assert parse_ref("12") == ("msg", 12)
    assert parse_ref("12", default_kind="item") == ("item", 12)
    for bad in ("thing:3", "item:", f"item:{MAX_ID + 1}", "item:x"):
        with pytest.raises(InvalidIdError):
            parse_ref(bad)


def test_parse_item_id_takes_the_ref_search_prints() -> None:
    assert parse_item_id("item:7") == 7 and parse_item_id("7") == 7
    with pytest.raises(InvalidIdError):
        parse_item_id("msg:7")
