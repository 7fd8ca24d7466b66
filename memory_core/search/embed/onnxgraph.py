"""Look-ups that dequantise rows, not tables: a rewrite of a quantised ONNX graph.

A weight-only int8 export keeps each table as int8 plus a float scale and turns it
into float32 in the graph itself: ``Gather(Mul(Cast(Q), S), ids)``. onnxruntime runs
that ``Cast`` and ``Mul`` on the whole table on every run unless constant folding
makes a float32 copy of it at load. For a vocabulary table (all-MiniLM-L6-v2: 30,522
rows of 384) that is most of the CPU of a run of a few short texts, to read a few
dozen rows. :func:`gather_rows_first` rewrites the pattern as
``Mul(Cast(Gather(Q, ids)), Gather(S, ids))``: the same products, element by element
(each is ``float(q) · s`` of its row), so the outputs are bit-identical, for the rows
the run reads.

The model file is a protobuf message; this module edits it on the wire (varints and
length-delimited fields, ONNX's field numbers below) rather than import the ``onnx``
package for one rewrite. Fields it does not know are copied unchanged.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

_MODEL_GRAPH = 7
_GRAPH_NODE, _GRAPH_INITIALIZER, _GRAPH_OUTPUT, _GRAPH_VALUE_INFO = 1, 5, 12, 13
_NODE_INPUT, _NODE_OUTPUT, _NODE_NAME, _NODE_OP, _NODE_ATTRIBUTE = 1, 2, 3, 4, 5
_TENSOR_DIMS, _TENSOR_TYPE, _TENSOR_NAME = 1, 2, 8
_ATTR_NAME, _ATTR_INT = 1, 3
_VALUE_INFO_NAME = 1
_INT8, _FLOAT = 3, 1
"""``TensorProto.DataType`` codes."""
_LEN = 2
"""Wire type of a length-delimited field."""


def _varint(buf: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = buf[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if not byte & 0x80:
            return value, i


def _fields(buf: bytes, start: int = 0, end: int | None = None
            ) -> Iterator[tuple[int, int, int, int, int]]:
    """``(field, wire type, value, payload start, record start)`` of each record of one
    message; ``value`` is a varint's value or a length-delimited payload's end."""
    end = len(buf) if end is None else end
    i = start
    while i < end:
        record = i
        key, i = _varint(buf, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(buf, i)
            yield number, wire, value, i, record
        elif wire == _LEN:
            size, i = _varint(buf, i)
            yield number, wire, i + size, i, record
            i += size
        elif wire in (1, 5):
            size = 8 if wire == 1 else 4
            yield number, wire, i + size, i, record
            i += size
        else:
            raise ValueError(f"unsupported protobuf wire type {wire}")
    if i != end:
        raise ValueError("truncated protobuf message")


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _record(number: int, payload: bytes) -> bytes:
    """One length-delimited field."""
    return _encode_varint(number << 3 | _LEN) + _encode_varint(len(payload)) + payload


@dataclass
class _Node:
    """A ``NodeProto``: its inputs, outputs and op, and every other record raw."""

    inputs: list[str]
    outputs: list[str]
    op: str
    name: str
    rest: list[bytes] = field(default_factory=list)  # every other record, raw
    attrs: dict[str, int] = field(default_factory=dict)  # integer attributes

    def encode(self) -> bytes:
        return b"".join([*(_record(_NODE_INPUT, s.encode()) for s in self.inputs),
                         *(_record(_NODE_OUTPUT, s.encode()) for s in self.outputs),
                         *([_record(_NODE_NAME, self.name.encode())] if self.name else []),
                         *self.rest])


def _node(buf: bytes, start: int, end: int) -> _Node:
    node = _Node([], [], "", "")
    for number, wire, value, at, record in _fields(buf, start, end):
        if wire == _LEN and number in (_NODE_INPUT, _NODE_OUTPUT, _NODE_NAME):
            text = buf[at:value].decode()
            if number == _NODE_NAME:
                node.name = text
            else:
                (node.inputs if number == _NODE_INPUT else node.outputs).append(text)
            continue
        node.rest.append(buf[record:value if wire != 0 else at])
        if wire != _LEN:
            continue
        if number == _NODE_OP:
            node.op = buf[at:value].decode()
        elif number == _NODE_ATTRIBUTE:
            name, number_value = "", None
            for n2, w2, v2, a2, _r2 in _fields(buf, at, value):
                if n2 == _ATTR_NAME and w2 == _LEN:
                    name = buf[a2:v2].decode()
                elif n2 == _ATTR_INT and w2 == 0:
                    number_value = v2 - (1 << 64) if v2 >= 1 << 63 else v2
            if name and number_value is not None:
                node.attrs[name] = number_value
    return node


def _tensor(buf: bytes, start: int, end: int) -> tuple[str, int, list[int]]:
    """``(name, data type, dims)`` of a ``TensorProto``."""
    name, dtype, dims = "", 0, []
    for number, wire, value, at, _record_at in _fields(buf, start, end):
        if number == _TENSOR_NAME and wire == _LEN:
            name = buf[at:value].decode()
        elif number == _TENSOR_TYPE and wire == 0:
            dtype = value
        elif number == _TENSOR_DIMS and wire == 0:
            dims.append(value)
        elif number == _TENSOR_DIMS and wire == _LEN:  # packed
            i = at
            while i < value:
                d, i = _varint(buf, i)
                dims.append(d)
    return name, dtype, dims


def _named(buf: bytes, start: int, end: int) -> str:
    """The ``name`` (field 1) of a ``ValueInfoProto``."""
    for number, wire, value, at, _record_at in _fields(buf, start, end):
        if number == _VALUE_INFO_NAME and wire == _LEN:
            return buf[at:value].decode()
    return ""


def gather_rows_first(model: bytes) -> tuple[bytes, list[str]]:
    """Rewrite every ``Gather(Mul(Cast(Q), S), ids)`` of ``model`` (a serialised ONNX
    ``ModelProto``) as ``Mul(Cast(Gather(Q, ids)), Gather(S, ids))``.

    Applies where ``Q`` is an int8 initializer of shape ``[rows, width]``, ``S`` a
    float initializer of shape ``[rows, 1]`` (one scale per row), the ``Gather`` is on
    axis 0 and nothing else reads the ``Cast`` or ``Mul`` outputs (no other node, not
    the graph's outputs; the pattern is not looked for in subgraphs). Returns the new
    model bytes and the rewritten tables' names (empty, with ``model`` itself, when
    nothing matched). Raises ``ValueError`` for bytes that are not a protobuf message.
    """
    graph = [(at, value) for number, wire, value, at, _r in _fields(model)
             if number == _MODEL_GRAPH and wire == _LEN]
    if len(graph) != 1:
        return model, []
    g_start, g_end = graph[0]
    records: list[tuple[int, int, int, int]] = []  # (field, payload start, end, record)
    nodes: dict[int, _Node] = {}
    tensors: dict[str, tuple[int, list[int]]] = {}
    outputs: set[str] = set()  # the graph's outputs: read from outside
    for number, wire, value, at, record in _fields(model, g_start, g_end):
        end = value if wire != 0 else at
        records.append((number if wire == _LEN else -1, at, end, record))
        if wire != _LEN:
            continue
        if number == _GRAPH_NODE:
            nodes[len(records) - 1] = _node(model, at, value)
        elif number == _GRAPH_INITIALIZER:
            name, dtype, dims = _tensor(model, at, value)
            tensors[name] = (dtype, dims)
        elif number == _GRAPH_OUTPUT:
            outputs.add(_named(model, at, value))
    producer = {out: i for i, n in nodes.items() for out in n.outputs}
    readers: dict[str, int] = {}
    for name in [*outputs, *(name for n in nodes.values() for name in n.inputs)]:
        readers[name] = readers.get(name, 0) + 1
    replace: dict[int, list[_Node]] = {}
    dropped: set[int] = set()
    stale: set[str] = set()  # value_info of tensors that are gone or change shape
    tables: list[str] = []
    for i, gather in nodes.items():
        if gather.op != "Gather" or gather.attrs.get("axis", 0) != 0 or len(gather.inputs) != 2:
            continue
        table, ids = gather.inputs
        m = producer.get(table, -1)
        mul = nodes.get(m)
        if mul is None or mul.op != "Mul" or len(mul.inputs) != 2 or readers.get(table) != 1:
            continue
        floats, scale = mul.inputs
        c = producer.get(floats, -1)
        cast = nodes.get(c)
        if cast is None or cast.op != "Cast" or readers.get(floats) != 1 or len(cast.inputs) != 1:
            continue
        quant = cast.inputs[0]
        q_type, q_dims = tensors.get(quant, (0, []))
        s_type, s_dims = tensors.get(scale, (0, []))
        if (q_type != _INT8 or len(q_dims) != 2 or s_type != _FLOAT
                or s_dims != [q_dims[0], 1] or cast.attrs.get("to") != _FLOAT):
            continue
        rows_q, rows_s = f"{quant}__rows", f"{scale}__rows"
        replace[i] = [
            _Node([quant, ids], [rows_q], "Gather", f"{gather.name}__q", gather.rest),
            _Node([scale, ids], [rows_s], "Gather", f"{gather.name}__scale", gather.rest),
            _Node([rows_q], list(cast.outputs), cast.op, cast.name, cast.rest),
            _Node([floats, rows_s], list(gather.outputs), mul.op, mul.name, mul.rest),
        ]
        dropped.update((m, c))
        stale.update((floats, table))
        tables.append(quant)
    if not tables:
        return model, []
    graph_parts: list[bytes | memoryview] = []
    view = memoryview(model)  # slices of it are not copies
    for index, (number, at, end, record) in enumerate(records):
        if index in dropped:
            continue
        if index in replace:
            graph_parts.extend(_record(_GRAPH_NODE, n.encode()) for n in replace[index])
        elif number == _GRAPH_VALUE_INFO and _named(model, at, end) in stale:
            continue
        else:
            graph_parts.append(view[record:end])
    size = sum(len(p) for p in graph_parts)
    g_record = next(r for number, wire, _v, at, r in _fields(model)
                    if number == _MODEL_GRAPH and wire == _LEN)
    head = _encode_varint(_MODEL_GRAPH << 3 | _LEN) + _encode_varint(size)
    return b"".join([view[:g_record], head, *graph_parts, view[g_end:]]), tables
