"""Which operators an XNNPACK delegate block took over, read from its payload (the backend's own flatbuffer).

Pinned to ExecuTorch 1.5's `backends/xnnpack/serialization/schema.fbs` (BSD): the payload starts with a header
(`XH00` at byte 4, then the flatbuffer's offset and size, little-endian), the flatbuffer (`XN01`) is an `XNNGraph`
whose `xnodes` (slot 1) are `XNode`s, each a union `XNodeUnion` (slots 0 and 1) whose type says the operator. Only
the type tags are read. A payload this reader does not know gives no list, never an error: the block still shows.
"""
from __future__ import annotations

import struct
from collections import Counter
from typing import BinaryIO

from pt2_viewer.core.pte.errors import PteError
from pt2_viewer.core.pte.flatbuffer import Buffer

HEADER_MAGIC = b"XH00"
FLATBUFFER_ID = b"XN01"
MAX_GRAPH_BYTES = 64 * 1024 * 1024
# union XNodeUnion, in declaration order (0 is NONE)
NODE_TYPES = (
    "", "Add", "FullyConnected", "Softmax", "Sigmoid", "StaticTranspose", "Clamp", "Conv2d", "Div",
    "StaticResizeBilinear2D", "StaticConstantPad", "AvgPooling2d", "Minimum", "DepthwiseConv2d", "MaxPooling2d",
    "Multiply", "Subtract", "Floor", "Convert", "GlobalAvgPooling2d", "StaticReshape", "ArgMaxPooling2d",
    "SquareRoot", "Ceiling", "Hardswish", "LeakyReLU", "Maximum", "Negate", "Square", "ELU", "Abs", "PReLU",
    "Concatenate2", "Concatenate3", "Concatenate4", "StaticSlice", "ScaledDotProductAttention",
    "BatchMatrixMultiply", "Concatenate5", "ConvTranspose2d", "ReciprocalSquareRoot", "Log", "Gelu", "Tanh", "Exp",
    "Sin", "Copy", "Cos",
)


def xnnpack_ops(f: BinaryIO, offset: int, size: int) -> tuple[str, ...]:
    """The payload's operators with their counts ("Conv2d x12"), in order of first use; () when unreadable."""
    try:
        f.seek(offset)
        head = f.read(32)
        if len(head) < 30 or head[4:8] != HEADER_MAGIC:
            return ()
        fb_offset, fb_size = struct.unpack_from("<II", head, 10)
        if fb_size > min(size, MAX_GRAPH_BYTES) or fb_offset + fb_size > size:
            return ()
        f.seek(offset + fb_offset)
        data = f.read(fb_size)
        if len(data) != fb_size or data[4:8] != FLATBUFFER_ID:
            return ()
        graph = Buffer(data, "the XNNPACK payload").root()
        kinds = graph.each(1, "the XNNPACK nodes", lambda node: int(node.scalar(0, "ubyte")))
    except (PteError, OSError, OverflowError, struct.error, ValueError, IndexError):  # Overflow: a seek past 2^63
        return ()
    counts = Counter(NODE_TYPES[k] if 0 < k < len(NODE_TYPES) else f"type {k}" for k in kinds)
    return tuple(f"{name} x{n}" for name, n in counts.items())
