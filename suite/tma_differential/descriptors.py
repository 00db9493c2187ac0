"""The differential's valid descriptors: a Hypothesis strategy drawing descriptors the model
accepts, at and near every documented rule's limit, on synthetic addresses (the encode only
records the address).
"""

from __future__ import annotations

import dataclasses
import math
from typing import Any

from hypothesis import strategies as st

from suite.cuda.model import (
    FLOAT_TYPES,
    MAX_GLOBAL_DIM,
    PACKED_ALIGN16_TYPES,
    Interleave,
    L2Promotion,
    OobFill,
    Swizzle,
    TensorMapArgs,
    TensorMapDataType,
    element_size_bits,
)

#: A plausible, canonical (below 2^47), 2^40-aligned user-space address: the encode only
#: records it. Offsets from it give every alignment; 0 (NULL) is drawn too, rarely.
BASE_ADDRESS = 0x7F00_0000_0000

BOX_EDGES = (1, 2, 255, 256, 257)

DIM_EDGES = (1, 2, MAX_GLOBAL_DIM, MAX_GLOBAL_DIM + 1)

STRIDE_LIMIT = 2**40

STRIDE_EDGES = (STRIDE_LIMIT - 32, STRIDE_LIMIT - 16, STRIDE_LIMIT, STRIDE_LIMIT + 16)

F_TYPES = frozenset(FLOAT_TYPES)

#: Swizzles the reference lists for the ALIGN16B packed types (restated from suite.tma_model).
PACKED_SWIZZLES: dict[TensorMapDataType, tuple[Swizzle, ...]] = {
    TensorMapDataType.PACKED_16U6_ALIGN16B: (
        Swizzle.NONE,
        Swizzle.B128,
        Swizzle.B128_ATOM_32B,
        Swizzle.B128_ATOM_64B,
    ),
    TensorMapDataType.PACKED_16U4_ALIGN16B: (Swizzle.NONE, Swizzle.B128, Swizzle.B128_ATOM_32B),
}


@dataclasses.dataclass(frozen=True)
class Generated:
    """One generated descriptor and the mutations applied to its valid base (by name)."""

    args: TensorMapArgs
    mutations: tuple[str, ...] = ()


def _weighted(*pairs: tuple[int, st.SearchStrategy[Any]]) -> st.SearchStrategy[Any]:
    """One of the strategies, picked with the given integer weights."""
    pool = [strategy for weight, strategy in pairs for _ in range(weight)]
    return st.sampled_from(pool).flatmap(lambda strategy: strategy)


def round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def elements_per_16_bytes(dtype: TensorMapDataType) -> int:
    """The fewest elements whose global size is a multiple of 16 bytes (1 for 16-byte types)."""
    bits = element_size_bits(dtype)
    return 128 // math.gcd(128, bits)


def swizzle_width_elements(dtype: TensorMapDataType, swizzle: Swizzle) -> int:
    """boxDim[0] whose inner span is exactly the swizzle width (shared-memory bytes)."""
    span = swizzle.span_bytes
    if dtype in PACKED_ALIGN16_TYPES:
        return span  # 16 values fill 16 bytes in shared memory
    return max(1, span * 8 // element_size_bits(dtype))


def alignment(dtype: TensorMapDataType, interleave: Interleave) -> int:
    """Address and stride alignment the reference asks for."""
    return 32 if interleave is Interleave.B32 or dtype in PACKED_ALIGN16_TYPES else 16


def _row_bytes(dtype: TensorMapDataType, dim0: int) -> int:
    return math.ceil(dim0 * element_size_bits(dtype) / 8)


@st.composite
def valid_descriptors(draw: Any) -> TensorMapArgs:
    """A descriptor that breaks no documented rule, drawn at and near every rule's limit."""
    dtype = draw(st.sampled_from(list(TensorMapDataType)))
    if dtype is TensorMapDataType.PACKED_16U6_ALIGN16B:
        interleave = Interleave.NONE
    elif dtype in PACKED_SWIZZLES:  # 16U4_ALIGN16B: INTERLEAVE_32B needs a swizzle it lacks
        interleave = draw(st.sampled_from([Interleave.NONE] * 3 + [Interleave.B16]))
    else:
        interleave = draw(
            st.sampled_from([Interleave.NONE] * 6 + [Interleave.B16] * 2 + [Interleave.B32] * 2)
        )
    if interleave is Interleave.NONE:
        rank = draw(st.sampled_from([1] * 3 + [2] * 3 + [3] * 2 + [4, 5]))
    else:
        rank = draw(st.sampled_from([3, 3, 4, 5]))
    if interleave is Interleave.B32:
        swizzle = Swizzle.B32
    elif dtype in PACKED_SWIZZLES:
        swizzle = draw(st.sampled_from(PACKED_SWIZZLES[dtype]))
    else:
        swizzle = draw(
            st.sampled_from([Swizzle.NONE] * 3 + [Swizzle.B32, Swizzle.B64] * 2 + list(Swizzle))
        )
    align = alignment(dtype, interleave)
    per16 = elements_per_16_bytes(dtype)

    # boxDim[0]: with interleave NONE, whole 16-byte units, at most 256 elements and at most
    # the swizzle span; at the limits, one unit below, a single unit, or anything between.
    if dtype in PACKED_ALIGN16_TYPES:
        box0 = 128
    elif interleave is not Interleave.NONE:
        box0 = draw(_weighted((2, st.sampled_from((1, 2, 255, 256))), (3, st.integers(1, 256))))
    else:
        max_units = 256 // per16
        if swizzle is not Swizzle.NONE:
            max_units = min(max_units, swizzle.span_bytes // 16)
        units = draw(
            _weighted(
                (3, st.just(max_units)),
                (1, st.just(max(1, max_units - 1))),
                (2, st.just(1)),
                (3, st.integers(1, max_units)),
            )
        )
        box0 = units * per16
    box = [box0] + [
        draw(_weighted((2, st.sampled_from((1, 2, 255, 256))), (3, st.integers(1, 16))))
        for _ in range(rank - 1)
    ]

    # globalDim[0]: packed multiples; else edges, 16-byte multiples, ragged byte sizes (the
    # suspected rank-1 rule: model-valid), sizes around the box, anything.
    if dtype in PACKED_ALIGN16_TYPES:
        dim0 = draw(
            _weighted((4, st.integers(1, 2**16).map(lambda k: 128 * k)), (1, st.just(2**32)))
        )
    elif dtype is TensorMapDataType.PACKED_16U4_ALIGN8B:
        dim0 = draw(_weighted((4, st.integers(1, 2**20).map(lambda k: 2 * k)), (1, st.just(2**32))))
    else:
        aligned = st.integers(1, 2**20).map(lambda k: k * per16)
        options: list[tuple[int, st.SearchStrategy[int]]] = [
            (2, st.sampled_from((1, 2, MAX_GLOBAL_DIM))),
            (3, aligned),
            (2, st.integers(1, 2**20)),
            (1, st.sampled_from((max(1, box0 - 1), box0, box0 + 1))),
        ]
        if per16 > 1:
            ragged = st.tuples(aligned, st.integers(1, per16 - 1)).map(lambda t: t[0] + t[1])
            options.append((4 if rank == 1 else 1, ragged))
        dim0 = draw(_weighted(*options))
    dims = [dim0] + [
        draw(
            _weighted(
                (2, st.sampled_from((1, 2, MAX_GLOBAL_DIM))),
                (4, st.integers(1, 4096)),
                (1, st.sampled_from((max(1, box[i] - 1), box[i], box[i] + 1))),
            )
        )
        for i in range(1, rank)
    ]

    # globalStrides: the dense extent rounded up to the alignment (a packed row), a padded
    # pitch, any multiple, the largest legal value; kept below 2^40 (an overlap is only a note).
    strides = []
    extent = _row_bytes(dtype, dim0)
    for i in range(1, rank):
        dense = round_up(extent, align)
        stride = draw(
            _weighted(
                (5, st.just(dense)),
                (2, st.integers(1, 4).map(lambda k: k * align).map(dense.__add__)),
                (1, st.integers(1, 2**35).map(lambda k: k * align)),
                (1, st.just(STRIDE_LIMIT - align)),
            )
        )
        if stride >= STRIDE_LIMIT:
            stride = STRIDE_LIMIT - align
        strides.append(stride)
        extent = stride * dims[i]

    es = [draw(_weighted((8, st.just(1)), (2, st.integers(1, 8)), (1, st.just(8)))) for _ in box]
    if interleave is Interleave.NONE:
        es[0] = 1
    address = BASE_ADDRESS + draw(
        st.sampled_from((0, 0, align, 2 * align, 64, 128, 256, 3 * align))
    )
    oob = OobFill.NONE
    if dtype in F_TYPES:
        oob = draw(st.sampled_from([OobFill.NONE] * 3 + [OobFill.NAN_REQUEST_ZERO_FMA]))
    return TensorMapArgs(
        dtype=dtype,
        rank=rank,
        global_address=address,
        global_dim=tuple(dims),
        global_strides=tuple(strides),
        box_dim=tuple(box),
        element_strides=tuple(es),
        interleave=interleave,
        swizzle=swizzle,
        l2_promotion=draw(st.sampled_from(list(L2Promotion))),
        oob_fill=oob,
    )


def rebase(args: TensorMapArgs, base: int) -> TensorMapArgs:
    """``args`` with its synthetic address moved to ``base`` (same offset; NULL stays NULL)."""
    if args.global_address == 0:
        return args
    return dataclasses.replace(args, global_address=base + (args.global_address - BASE_ADDRESS))
