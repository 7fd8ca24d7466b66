"""``gather_rows_first`` on small ONNX graphs written here field by field: the rewrite
keeps the outputs bit for bit, and leaves alone what it must not touch."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest

from memory_core.search.embed.onnxgraph import _encode_varint, _record, gather_rows_first

ROWS, WIDTH = 50, 8


def _varint_field(number: int, value: int) -> bytes:
    return _encode_varint(number << 3) + _encode_varint(value)


def _tensor(name: str, dtype: int, array: np.ndarray) -> bytes:
    return b"".join([*(_varint_field(1, d) for d in array.shape), _varint_field(2, dtype),
                     _record(8, name.encode()), _record(9, array.tobytes())])


def _node(op: str, inputs: list[str], outputs: list[str], **ints: int) -> bytes:
    attrs = [_record(5, _record(1, k.encode()) + _varint_field(3, v) + _varint_field(20, 2))
             for k, v in ints.items()]
    return b"".join([*(_record(1, s.encode()) for s in inputs),
                     *(_record(2, s.encode()) for s in outputs),
                     _record(3, f"{op}_{outputs[0]}".encode()), _record(4, op.encode()),
                     *attrs])


def _value_info(name: str, elem: int, dims: list[int | str]) -> bytes:
    shape = b"".join(_record(1, _varint_field(1, d) if isinstance(d, int)
                             else _record(2, d.encode())) for d in dims)
    return _record(1, name.encode()) + _record(2, _record(1, _varint_field(1, elem)
                                                          + _record(2, shape)))


def _model(*, scale_rows: int = ROWS, extra_reader: bool = False,
           table_out: bool = False) -> bytes:
    rng = np.random.default_rng(5)
    quant = rng.integers(-127, 128, size=(ROWS, WIDTH)).astype(np.int8)
    scale = rng.uniform(0.001, 0.02, size=(scale_rows, 1)).astype(np.float32)
    nodes = [_node("Cast", ["table_q"], ["table_f"], to=1),
             _node("Mul", ["table_f", "table_scale"], ["table"]),
             _node("Gather", ["table", "ids"], ["rows"], axis=0),
             _node("Relu", ["rows"], ["out"])]
    outputs = [_value_info("out", 1, ["n", WIDTH])]
    if extra_reader:  # a second reader of the whole float table: must stay as it is
        nodes.append(_node("ReduceSum", ["table"], ["total"], keepdims=0))
        outputs.append(_value_info("total", 1, []))
    if table_out:  # the float table is one of the graph's outputs
        outputs.append(_value_info("table", 1, [ROWS, WIDTH]))
    graph = b"".join([*(_record(1, n) for n in nodes),
                      _record(2, b"tiny"),
                      _record(5, _tensor("table_q", 3, quant)),
                      _record(5, _tensor("table_scale", 1, scale)),
                      _record(11, _value_info("ids", 7, ["n"])),
                      *(_record(12, o) for o in outputs),
                      _record(13, _value_info("table", 1, [ROWS, WIDTH]))])
    return (_varint_field(1, 8) + _record(8, _record(1, b"") + _varint_field(2, 13))
            + _record(7, graph))


def _run(model: bytes, ids: np.ndarray) -> list[np.ndarray]:
    options = ort.SessionOptions()
    options.log_severity_level = 3
    session = ort.InferenceSession(model, sess_options=options,
                                   providers=["CPUExecutionProvider"],
                                   disabled_optimizers=["ConstantFolding"])
    return session.run(None, {"ids": ids})


def test_rows_are_gathered_before_they_are_dequantised_with_the_same_outputs() -> None:
    model = _model()
    new, tables = gather_rows_first(model)
    assert tables == ["table_q"] and new != model
    ids = np.array([0, 7, 7, 49, 3], dtype=np.int64)
    (want,), (got,) = _run(model, ids), _run(new, ids)
    assert want.shape == (5, WIDTH) and np.array_equal(want, got)
    assert gather_rows_first(new) == (new, [])  # nothing left to rewrite


@pytest.mark.parametrize("variant", [{"scale_rows": 1}, {"extra_reader": True},
                                     {"table_out": True}])
def test_a_table_read_elsewhere_or_scaled_as_a_whole_is_left_alone(variant: dict) -> None:
    model = _model(**variant)
    assert gather_rows_first(model) == (model, [])
    assert _run(model, np.array([1, 2], dtype=np.int64))[0].shape == (2, WIDTH)


def test_bytes_that_are_not_a_model() -> None:
    assert gather_rows_first(b"") == (b"", [])
    with pytest.raises(ValueError):
        gather_rows_first(b"\x0f\x01")  # wire type 7
