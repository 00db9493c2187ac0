"""Differential test: ``suite.tma_model``'s verdicts against the real ``cuTensorMapEncodeTiled``.

Generates descriptors with Hypothesis (the same list for the same ``--count`` and ``--seed``):
a descriptor the model accepts, drawn at and near every documented rule's limit, then 0, 1 or
2 targeted mutations (one step past one rule, or an edge the documentation leaves open:
overlapping strides, a box larger than the tensor, a null address, a ragged rank-1 size...).
It asks the model (``check``) and the driver (through cuda-bindings, in a child process that
may crash without ending the run) about each, and counts:

* agree-ok, agree-reject: the model and the driver say the same;
* model-ok/driver-rejects: no documented rule broken, yet the driver refuses (an undocumented
  rule, or a model bug);
* model-rejects/driver-ok: a documented rule broken, yet the driver accepts (a rule the driver
  does not enforce, or a model bug);
* driver-crashed: the encode killed or hung the process (always a finding).

Every disagreement is a finding. They are grouped by a small key (the rules the model raised or
"none", the driver's result, rank, dtype, interleave, swizzle), and each group gets one
standalone script ``disagreement-<n>.py`` (needs only cuda-bindings and a GPU) that encodes its
first descriptor and prints the model's expectation and the driver's result.

Also run: a rank-1 probe (lengths whose byte size is or is not a multiple of 16, with a null,
byte-size or padded ``globalStrides``: docs/tma-descriptor-model.md, "Suspected disagreement:
rank-1 global size") and three controls (descriptors whose answer is not in doubt; if the
first is refused with the synthetic addresses, the run moves them onto a real cuMemAlloc).

    python bench/tma_differential.py --count 10000 --seed 0 --out DIR

Writes ``DIR/summary.json`` (counts, groups, per-rule confirmation, the rank-1 probe, the
controls, coverage, timings), ``DIR/disagreements.jsonl`` (every disagreement),
``DIR/records.jsonl`` (every descriptor) and ``DIR/disagreement-<n>.py``. Exit status 0 when it
ran (disagreements are results, not errors), 2 without cuda-bindings, 3 without a usable GPU.
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import dataclasses
import inspect
import json
import math
import platform
import pprint
import sys
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from hypothesis import HealthCheck, Phase, given, settings  # noqa: E402
from hypothesis import seed as hypothesis_seed  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from suite import tma_driver  # noqa: E402
from suite.tma_driver import args_to_dict, driver_call  # noqa: E402
from suite.tma_model import (  # noqa: E402
    FLOAT_TYPES,
    MAX_GLOBAL_DIM,
    PACKED_ALIGN16_TYPES,
    PACKED_TYPES,
    Interleave,
    L2Promotion,
    OobFill,
    Swizzle,
    TensorMapArgs,
    TensorMapDataType,
    Verdict,
    check,
    element_size_bits,
)

#: A plausible, canonical (below 2^47), 2^40-aligned user-space address: the encode only
#: records it. Offsets from it give every alignment; 0 (NULL) is drawn too, rarely.
BASE_ADDRESS = 0x7F00_0000_0000
BOX_EDGES = (1, 2, 255, 256, 257)
DIM_EDGES = (1, 2, MAX_GLOBAL_DIM, MAX_GLOBAL_DIM + 1)
STRIDE_LIMIT = 2**40
STRIDE_EDGES = (STRIDE_LIMIT - 32, STRIDE_LIMIT - 16, STRIDE_LIMIT, STRIDE_LIMIT + 16)
SUCCESS = "CUDA_SUCCESS"
#: Driver crashes after which the rest of a run is not sent (each restart costs a cuInit).
MAX_CRASHES = 200

AGREE_OK = "agree-ok"
AGREE_REJECT = "agree-reject"
MODEL_OK_DRIVER_REJECTS = "model-ok/driver-rejects"
MODEL_REJECTS_DRIVER_OK = "model-rejects/driver-ok"
DRIVER_CRASHED = "driver-crashed"
NOT_ENCODED = "not-encoded"
OUTCOMES = (
    AGREE_OK,
    AGREE_REJECT,
    MODEL_OK_DRIVER_REJECTS,
    MODEL_REJECTS_DRIVER_OK,
    DRIVER_CRASHED,
    NOT_ENCODED,
)
DISAGREEMENTS = (MODEL_OK_DRIVER_REJECTS, MODEL_REJECTS_DRIVER_OK, DRIVER_CRASHED)


# --------------------------------------------------------------------------------------------
# The generator: a descriptor the model accepts, then 0, 1 or 2 targeted mutations.
# --------------------------------------------------------------------------------------------

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


def _round_up(value: int, multiple: int) -> int:
    return -(-value // multiple) * multiple


def elements_per_16_bytes(dtype: TensorMapDataType) -> int:
    """The fewest elements whose global size is a multiple of 16 bytes (1 for 16-byte types)."""
    bits = element_size_bits(dtype)
    return 128 // math.gcd(128, bits)


def _swizzle_width_elements(dtype: TensorMapDataType, swizzle: Swizzle) -> int:
    """boxDim[0] whose inner span is exactly the swizzle width (shared-memory bytes)."""
    span = swizzle.span_bytes
    if dtype in PACKED_ALIGN16_TYPES:
        return span  # 16 values fill 16 bytes in shared memory
    return max(1, span * 8 // element_size_bits(dtype))


def _alignment(dtype: TensorMapDataType, interleave: Interleave) -> int:
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
    align = _alignment(dtype, interleave)
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
        dense = _round_up(extent, align)
        stride = draw(
            _weighted(
                (5, st.just(dense)),
                (2, st.integers(1, 4).map(lambda k, d=dense: d + k * align)),
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


# Mutations: each takes (draw, args) and returns new args, or None where it does not apply.
# The first group breaks one documented rule (just past its limit); the second stays within
# the documented rules but probes what the documentation leaves open (notes, edges).


def _index(draw: Any, n: int) -> int:
    return draw(st.integers(0, n - 1))


def _set(values: Sequence[int], i: int, value: int) -> tuple[int, ...]:
    out = list(values)
    out[i] = value
    return tuple(out)


def _m_rank_0(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    return dataclasses.replace(
        a, rank=0, global_dim=(), global_strides=(), box_dim=(), element_strides=()
    )


def _m_rank_6(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    if a.rank != 5:
        return None
    last = a.global_strides[-1] * a.global_dim[-1] if a.global_strides else 16
    stride = min(_round_up(last, 32), STRIDE_LIMIT - 32)
    return dataclasses.replace(
        a,
        rank=6,
        global_dim=(*a.global_dim, 2),
        global_strides=(*a.global_strides, stride),
        box_dim=(*a.box_dim, 1),
        element_strides=(*a.element_strides, 1),
    )


def _m_interleave_low_rank(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    if a.rank > 2 or a.dtype is TensorMapDataType.PACKED_16U6_ALIGN16B:
        return None
    return dataclasses.replace(a, interleave=Interleave.B16)


def _m_address(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    need = _alignment(a.dtype, a.interleave)
    offsets = (1, 2, 4, 8, 16) if need == 32 else (1, 2, 4, 8)
    return dataclasses.replace(a, global_address=a.global_address + draw(st.sampled_from(offsets)))


def _m_dim_zero(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    if not a.rank:
        return None
    return dataclasses.replace(a, global_dim=_set(a.global_dim, _index(draw, a.rank), 0))


def _m_dim_over(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    if not a.rank:
        return None
    i = _index(draw, a.rank)
    if i == 0 and a.dtype in PACKED_TYPES:
        value = MAX_GLOBAL_DIM + 128 if a.dtype in PACKED_ALIGN16_TYPES else MAX_GLOBAL_DIM + 2
    else:
        value = MAX_GLOBAL_DIM + 1
    return dataclasses.replace(a, global_dim=_set(a.global_dim, i, value))


def _m_packed_dim(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    if not a.rank or a.dtype not in PACKED_TYPES:
        return None
    step = draw(st.sampled_from((1, 64, 127))) if a.dtype in PACKED_ALIGN16_TYPES else 1
    return dataclasses.replace(a, global_dim=_set(a.global_dim, 0, a.global_dim[0] + step))


def _m_stride_misaligned(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    if a.rank < 2:
        return None
    i = _index(draw, a.rank - 1)
    need = _alignment(a.dtype, a.interleave)
    deltas = (-8, -1, 1, 8, 16) if need == 32 else (-8, -1, 1, 8)
    value = max(1, a.global_strides[i] + draw(st.sampled_from(deltas)))
    if value % need == 0:
        value += 1
    return dataclasses.replace(a, global_strides=_set(a.global_strides, i, value))


def _m_stride_too_large(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    if a.rank < 2:
        return None
    value = draw(st.sampled_from((STRIDE_LIMIT, STRIDE_LIMIT + 32, 2**48)))
    return dataclasses.replace(
        a, global_strides=_set(a.global_strides, _index(draw, a.rank - 1), value)
    )


def _m_box_zero(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    if not a.rank:
        return None
    return dataclasses.replace(a, box_dim=_set(a.box_dim, _index(draw, a.rank), 0))


def _m_box_over(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    if not a.rank:
        return None
    i = _index(draw, a.rank)
    return dataclasses.replace(a, box_dim=_set(a.box_dim, i, draw(st.sampled_from((257, 512)))))


def _m_inner_bytes(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    if not a.rank or a.interleave is not Interleave.NONE or elements_per_16_bytes(a.dtype) == 1:
        return None
    if a.dtype in PACKED_ALIGN16_TYPES:
        return None
    box0 = a.box_dim[0] - 1 if a.box_dim[0] > 1 else a.box_dim[0] + 1
    return dataclasses.replace(a, box_dim=_set(a.box_dim, 0, box0))


def _m_packed_box(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    if not a.rank or a.dtype not in PACKED_ALIGN16_TYPES:
        return None
    return dataclasses.replace(a, box_dim=_set(a.box_dim, 0, draw(st.sampled_from((64, 256)))))


def _m_element_stride(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    if not a.rank:
        return None
    value = draw(st.sampled_from((0, 9)))
    return dataclasses.replace(
        a, element_strides=_set(a.element_strides, _index(draw, a.rank), value)
    )


def _m_swizzle_narrow(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    if not a.rank or a.interleave is not Interleave.NONE or a.dtype in PACKED_ALIGN16_TYPES:
        return None
    inner = a.box_dim[0] * element_size_bits(a.dtype) // 8
    narrower = [s for s in (Swizzle.B32, Swizzle.B64) if s.span_bytes < inner]
    if narrower:
        return dataclasses.replace(a, swizzle=draw(st.sampled_from(narrower)))
    # Too small for any swizzle to overflow: widen the box one 16-byte unit past 32 bytes.
    box0 = 48 * 8 // element_size_bits(a.dtype)
    return dataclasses.replace(a, box_dim=_set(a.box_dim, 0, box0), swizzle=Swizzle.B32)


def _m_interleave32_swizzle(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    if a.interleave is not Interleave.B32:
        return None
    return dataclasses.replace(
        a, swizzle=draw(st.sampled_from((Swizzle.NONE, Swizzle.B64, Swizzle.B128)))
    )


def _m_packed_u6_interleave(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    if a.dtype is not TensorMapDataType.PACKED_16U6_ALIGN16B or a.rank < 3:
        return None
    return dataclasses.replace(a, interleave=Interleave.B16)


def _m_packed_swizzle(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    if a.dtype not in PACKED_SWIZZLES:
        return None
    unlisted = [s for s in Swizzle if s not in PACKED_SWIZZLES[a.dtype]]
    return dataclasses.replace(a, swizzle=draw(st.sampled_from(unlisted)))


def _m_oob_nonfloat(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    if a.dtype in F_TYPES:
        return None
    return dataclasses.replace(a, oob_fill=OobFill.NAN_REQUEST_ZERO_FMA)


def _m_stride_overlap(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    if a.rank < 2:
        return None
    need = _alignment(a.dtype, a.interleave)
    i = _index(draw, a.rank - 1)
    value = draw(st.sampled_from((0, need, 2 * need)))
    return dataclasses.replace(a, global_strides=_set(a.global_strides, i, value))


def _m_es0(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    if not a.rank or a.interleave is not Interleave.NONE:
        return None
    value = draw(st.sampled_from((2, 8)))
    return dataclasses.replace(a, element_strides=_set(a.element_strides, 0, value))


def _m_box_not_multiple_of_es(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    if a.rank < 2:
        return None
    i = 1 + _index(draw, a.rank - 1)
    box = max(a.box_dim[i], 4)
    return dataclasses.replace(
        a,
        box_dim=_set(a.box_dim, i, box - box % 3 + 1),
        element_strides=_set(a.element_strides, i, 3),
    )


def _m_box_larger_than_dim(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    candidates = [
        i for i in range(a.rank) if a.box_dim[i] >= 2 and not (i == 0 and a.dtype in PACKED_TYPES)
    ]
    if not candidates:
        return None
    i = draw(st.sampled_from(candidates))
    return dataclasses.replace(a, global_dim=_set(a.global_dim, i, a.box_dim[i] - 1))


def _m_null_address(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    return dataclasses.replace(a, global_address=0)


def _m_dim_edge(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    if not a.rank:
        return None
    i = _index(draw, a.rank)
    return dataclasses.replace(a, global_dim=_set(a.global_dim, i, MAX_GLOBAL_DIM))


def _m_stride_edge(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    if a.rank < 2:
        return None
    value = STRIDE_LIMIT - _alignment(a.dtype, a.interleave)
    return dataclasses.replace(
        a, global_strides=_set(a.global_strides, _index(draw, a.rank - 1), value)
    )


def _m_box_edge(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    if a.rank < 2:
        return None
    i = 1 + _index(draw, a.rank - 1)
    return dataclasses.replace(a, box_dim=_set(a.box_dim, i, draw(st.sampled_from((255, 256)))))


def _m_rank1_ragged(draw: Any, a: TensorMapArgs) -> TensorMapArgs | None:
    per16 = elements_per_16_bytes(a.dtype)
    if a.rank != 1 or per16 == 1 or a.dtype in PACKED_TYPES:
        return None
    n = draw(st.integers(1, 2**20)) * per16 + draw(st.integers(1, per16 - 1))
    return dataclasses.replace(a, global_dim=(n,))


#: name -> mutation; the first group breaks a documented rule, the rest do not. A mutation
#: returns None where it does not apply to the descriptor at hand.
MUTATIONS: dict[str, Any] = {
    "rank-0": _m_rank_0,
    "rank-6": _m_rank_6,
    "interleave-low-rank": _m_interleave_low_rank,
    "address-misaligned": _m_address,
    "dim-zero": _m_dim_zero,
    "dim-over-2^32": _m_dim_over,
    "packed-dim-not-multiple": _m_packed_dim,
    "stride-misaligned": _m_stride_misaligned,
    "stride-2^40-or-more": _m_stride_too_large,
    "box-zero": _m_box_zero,
    "box-over-256": _m_box_over,
    "inner-bytes-off-16": _m_inner_bytes,
    "packed-box-not-128": _m_packed_box,
    "element-stride-0-or-9": _m_element_stride,
    "swizzle-too-narrow": _m_swizzle_narrow,
    "interleave32-other-swizzle": _m_interleave32_swizzle,
    "packed-16u6-interleaved": _m_packed_u6_interleave,
    "packed-swizzle-unlisted": _m_packed_swizzle,
    "nan-fill-non-float": _m_oob_nonfloat,
    # within the documented rules: notes and edges
    "stride-overlap": _m_stride_overlap,
    "element-stride0-not-1": _m_es0,
    "box-not-multiple-of-element-stride": _m_box_not_multiple_of_es,
    "box-larger-than-dim": _m_box_larger_than_dim,
    "null-address": _m_null_address,
    "dim-2^32": _m_dim_edge,
    "stride-2^40-minus-align": _m_stride_edge,
    "box-255-or-256": _m_box_edge,
    "rank1-ragged-size": _m_rank1_ragged,
}
MUTATION_NAMES = tuple(MUTATIONS)
#: Relative weights (default 1): rank 0 empties every array, so its space is small and
#: repeats quickly.
MUTATION_WEIGHTS = {"rank-0": 0.15, "rank-6": 0.5}


def applicable(args: TensorMapArgs) -> list[str]:
    """The mutations that apply to ``args``.

    Each mutation decides whether it applies before it draws anything, so calling it with a
    ``draw`` that refuses to draw tells without drawing: None, or the attempt to draw.
    """
    names = []
    for name in MUTATION_NAMES:
        try:
            result = MUTATIONS[name](_no_draw, args)
        except _Drew:
            result = True  # it wanted to draw: it applies
        if result is not None:
            names.append(name)
    return names


class _Drew(Exception):
    pass


def _no_draw(strategy: st.SearchStrategy[Any]) -> Any:
    raise _Drew


@st.composite
def generated(draw: Any) -> Generated:
    """A valid descriptor, then 0 (about a third), 1 (half) or 2 mutations.

    Arrays always hold ``rank`` entries (``rank - 1`` strides): cuda-bindings does not check
    them and the driver reads that many, so a shorter list would read past its end. The model's
    own ``array-length`` rule is therefore never exercised here.
    """
    args = draw(valid_descriptors())
    applied: list[str] = []
    pick = draw(st.randoms(use_true_random=False))  # unbiased over names (sampled_from is not)
    for _ in range(draw(st.sampled_from([0] * 7 + [1] * 10 + [2] * 3))):
        names = applicable(args)
        name = pick.choices(names, [MUTATION_WEIGHTS.get(n, 1.0) for n in names])[0]
        mutated = MUTATIONS[name](draw, args)
        assert mutated is not None, name
        args = mutated
        applied.append(name)
    return Generated(args, tuple(applied))


def descriptors() -> st.SearchStrategy[TensorMapArgs]:
    """The descriptors alone (see :func:`generated`)."""
    return generated().map(lambda g: g.args)


@contextlib.contextmanager
def _no_local_constants() -> Iterator[None]:
    """Keep Hypothesis from mixing in constants read from this project's imported modules.

    Recent Hypothesis versions draw, now and then, a constant found in the source of every
    "local" module in ``sys.modules``, so the same seed gives different descriptors depending
    on what else was imported (pytest, the engine). With none, the list depends only on the
    seed and the count. A Hypothesis without the feature needs nothing.
    """
    try:
        from hypothesis.internal.conjecture import providers
    except ImportError:  # pragma: no cover - another layout: nothing to pin
        yield
        return
    original = getattr(providers, "_get_local_constants", None)
    empty = getattr(providers, "Constants", None)
    if original is None or empty is None:
        yield
        return
    nothing = empty()
    providers._get_local_constants = lambda: nothing
    try:
        yield
    finally:
        providers._get_local_constants = original


def generate(count: int, seed: int) -> list[Generated]:
    """``count`` distinct descriptors, the same list for the same ``count`` and ``seed``.

    Hypothesis is asked for half as many again as needed, because different draws can
    give the same descriptor; the first ``count`` distinct ones are kept (fewer only if
    Hypothesis runs out).
    """
    found: list[Generated] = []

    @hypothesis_seed(seed)
    @settings(
        max_examples=count * 3 // 2 + 10,
        derandomize=True,
        database=None,
        phases=[Phase.generate],
        deadline=None,
        suppress_health_check=list(HealthCheck),
        report_multiple_bugs=False,
    )
    @given(generated())
    def collect(item: Generated) -> None:
        found.append(item)

    with _no_local_constants():
        collect()
    unique: dict[Generated, None] = dict.fromkeys(found)
    return list(unique)[:count]


def coverage(descriptors: Iterable[TensorMapArgs]) -> dict[str, Any]:
    """Which of the edges the generator was asked to hit were hit, and how often."""
    counts: dict[str, collections.Counter[Any]] = collections.defaultdict(collections.Counter)
    for a in descriptors:
        counts["dtype"][a.dtype.name] += 1
        counts["rank"][a.rank] += 1
        counts["interleave/rank"][f"{a.interleave.name}/{a.rank}"] += 1
        counts["swizzle"][a.swizzle.name] += 1
        counts["address mod 32"][a.global_address % 32] += 1
        for b in a.box_dim:
            if b in (0, *BOX_EDGES):
                counts["box edge"][b] += 1
        for d in a.global_dim:
            if d in (0, *DIM_EDGES):
                counts["global dim edge"][d] += 1
        for es in a.element_strides:
            counts["element stride"][es] += 1
        for s in a.global_strides:
            counts["stride mod 16"][s % 16] += 1
            if s in STRIDE_EDGES:
                counts["stride edge"][s] += 1
        if a.rank >= 1 and a.box_dim:
            bits = a.box_dim[0] * element_size_bits(a.dtype)
            counts["inner box bits mod 128"][bits % 128] += 1
            if a.swizzle is not Swizzle.NONE:
                inner = _swizzle_width_elements(a.dtype, a.swizzle)
                where = (
                    "at" if a.box_dim[0] == inner else "below" if a.box_dim[0] < inner else "above"
                )
                counts["swizzle span"][f"{a.swizzle.name}:{where}"] += 1
        if a.rank == 1 and a.global_dim:
            nbytes = a.global_dim[0] * element_size_bits(a.dtype) / 8
            counts["rank-1 size"]["x16" if nbytes % 16 == 0 else "ragged"] += 1
    return {
        name: {str(k): v for k, v in sorted(c.items(), key=lambda kv: str(kv[0]))}
        for name, c in counts.items()
    }


# --------------------------------------------------------------------------------------------
# Bookkeeping (no driver needed).
# --------------------------------------------------------------------------------------------


def outcome(model_ok: bool, driver_result: str) -> str:
    """Which of OUTCOMES a (model verdict, driver result) pair is."""
    if driver_result.startswith("ERROR:"):
        return NOT_ENCODED
    if driver_result.startswith("CRASH") or driver_result == "HANG":
        return DRIVER_CRASHED
    driver_ok = driver_result == SUCCESS
    if model_ok:
        return AGREE_OK if driver_ok else MODEL_OK_DRIVER_REJECTS
    return MODEL_REJECTS_DRIVER_OK if driver_ok else AGREE_REJECT


def group_key(args: TensorMapArgs, verdict: Verdict, driver_result: str) -> dict[str, Any]:
    """The small key disagreements are grouped by."""
    return {
        "rules": ",".join(sorted(verdict.rules)) or "none",
        "driver": driver_result,
        "rank": args.rank,
        "dtype": args.dtype.name,
        "interleave": args.interleave.name,
        "swizzle": args.swizzle.name,
    }


def make_record(
    index: int,
    args: TensorMapArgs,
    verdict: Verdict,
    call: Mapping[str, Any],
    driver_result: str,
    mutations: Sequence[str] = (),
) -> dict[str, Any]:
    """One descriptor's line in records.jsonl / disagreements.jsonl."""
    return {
        "index": index,
        "outcome": outcome(verdict.ok, driver_result),
        "driver": driver_result,
        "mutations": list(mutations),
        "model_ok": verdict.ok,
        "model_rules": verdict.rules,
        "model_notes": sorted({n.rule for n in verdict.notes}),
        "model_messages": [f"{v.rule}: {v.message}" for v in verdict.violations],
        "key": group_key(args, verdict, driver_result),
        "args": args_to_dict(args),
        "call": dict(call),
    }


def _key_tuple(key: Mapping[str, Any]) -> tuple[Any, ...]:
    return tuple(key[k] for k in ("rules", "driver", "rank", "dtype", "interleave", "swizzle"))


def group_disagreements(records: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    """Disagreements grouped by key, largest group first; sets ``record["group"]``.

    Each group: ``id`` (1-based, the number in ``disagreement-<id>.py``), ``kind`` (the
    outcome), ``key``, ``count``, ``first`` (index of its first descriptor), ``notes`` (the
    model's notes over the group, counted), ``mutations`` (the generator's mutations over the
    group, counted; "none" for an unmutated valid descriptor).
    """
    by_key: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for record in records:
        if record["outcome"] in DISAGREEMENTS:
            by_key.setdefault(_key_tuple(record["key"]), []).append(record)
    ordered = sorted(by_key.values(), key=lambda rs: (-len(rs), _key_tuple(rs[0]["key"])))
    groups = []
    for gid, members in enumerate(ordered, start=1):
        notes: collections.Counter[str] = collections.Counter()
        mutations: collections.Counter[str] = collections.Counter()
        for record in members:
            record["group"] = gid
            notes.update(record["model_notes"])
            mutations.update(record.get("mutations") or ["none"])
        groups.append(
            {
                "id": gid,
                "kind": members[0]["outcome"],
                "key": dict(members[0]["key"]),
                "count": len(members),
                "first": members[0]["index"],
                "notes": dict(sorted(notes.items())),
                "mutations": dict(mutations.most_common()),
                "script": f"disagreement-{gid}.py",
            }
        )
    return groups


def classes(groups: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """Groups folded to (kind, rules, driver result): the short list to read first."""
    folded: dict[tuple[str, str, str], dict[str, Any]] = {}
    for g in groups:
        k = (g["kind"], g["key"]["rules"], g["key"]["driver"])
        entry = folded.setdefault(
            k, {"kind": k[0], "rules": k[1], "driver": k[2], "count": 0, "groups": []}
        )
        entry["count"] += g["count"]
        entry["groups"].append(g["id"])
    return sorted(folded.values(), key=lambda e: -e["count"])


def rule_confirmation(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Per rule, over descriptors where it is the model's ONLY violation: the driver's answers.

    ``"none"`` counts descriptors the model accepts. A rule whose sole-violation descriptors
    the driver always rejects is confirmed (for what was tried); one it accepts is not
    enforced by the driver as the documentation states it.
    """
    table: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for r in records:
        if r["outcome"] == NOT_ENCODED:
            continue
        rules = r["model_rules"]
        if len(rules) > 1:
            continue
        name = rules[0] if rules else "none"
        driver_result = r["driver"]
        verdict = (
            "driver-accepts"
            if driver_result == SUCCESS
            else "driver-crashed"
            if outcome(False, driver_result) == DRIVER_CRASHED
            else "driver-rejects"
        )
        table[name][verdict] += 1
    return {rule: dict(sorted(c.items())) for rule, c in sorted(table.items())}


def mutation_table(records: Iterable[Mapping[str, Any]]) -> dict[str, dict[str, int]]:
    """Per single mutation (or "none"): the outcomes, for descriptors with at most one."""
    table: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for r in records:
        mutations = r.get("mutations") or []
        if len(mutations) <= 1:
            table[mutations[0] if mutations else "none"][r["outcome"]] += 1
    return {name: dict(sorted(c.items())) for name, c in sorted(table.items())}


def summarize(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The counts: tried, each outcome, and the driver's results."""
    counts = collections.Counter(r["outcome"] for r in records)
    return {
        "tried": len(records),
        "counts": {name: counts.get(name, 0) for name in OUTCOMES},
        "disagreements": sum(counts.get(name, 0) for name in DISAGREEMENTS),
        "driver_results": dict(collections.Counter(r["driver"] for r in records).most_common()),
    }


# --------------------------------------------------------------------------------------------
# Standalone reproducer scripts.
# --------------------------------------------------------------------------------------------

_SCRIPT_FUNCTIONS = (tma_driver._result_name, tma_driver._init_context, tma_driver._encode_raw)


def _literal(value: Any) -> str:
    return pprint.pformat(value, width=96, sort_dicts=False)


def reproducer_script(
    group: Mapping[str, Any], record: Mapping[str, Any], context: Mapping[str, Any]
) -> str:
    """A script that needs only cuda-bindings: encodes ``record``'s descriptor, prints both sides.

    ``context`` holds the run's facts (seed, driver version, device, bindings version).
    """
    model_says = (
        "finds no documented rule broken (expects CUDA_SUCCESS)"
        if record["model_ok"]
        else "expects a rejection: " + ", ".join(record["model_rules"])
    )
    header = [
        "#!/usr/bin/env python3",
        f'"""Disagreement {group["id"]}: suite.tma_model vs the real cuTensorMapEncodeTiled.',
        "",
        f"{group['kind']}: the model {model_says};",
        f"the driver returned {record['driver']} (driver {context.get('driver_version')},"
        f" {context.get('device')}, cuda-bindings {context.get('bindings_version')}).",
        f"Group key: {json.dumps(group['key'])}",
        f"{group['count']} descriptor(s) in this group; this is the first, index {record['index']}"
        f" of bench/tma_differential.py --seed {context.get('seed')}.",
        "",
        "Run on a machine with a GPU, with any Python that has cuda-bindings:",
        f"    python {group['script']}",
        "Exit status: 0 the driver agrees with the model, 1 it does not,",
        "2 no cuda-bindings, 3 no usable GPU.",
        '"""',
        "",
        "import json",
        "import sys",
        "",
        "#: The descriptor as suite.tma_model.TensorMapArgs holds it (innermost first).",
        f"DESCRIPTOR = {_literal(dict(record['args']))}",
        "#: The exact values handed to cuTensorMapEncodeTiled (enums as cuda.h ints; None = NULL).",
        f"CALL = {_literal(dict(record['call']))}",
        f"MODEL_OK = {record['model_ok']!r}",
        f"MODEL_RULES = {_literal(list(record['model_rules']))}",
        f"MODEL_MESSAGES = {_literal(list(record['model_messages']))}",
        f"MODEL_NOTES = {_literal(list(record['model_notes']))}",
        f"DRIVER_RESULT_WHEN_FOUND = {record['driver']!r}",
        "",
    ]
    functions = [inspect.getsource(fn) for fn in _SCRIPT_FUNCTIONS]
    main = """
def main():
    try:
        from cuda.bindings import driver
    except ImportError as exc:
        print(f"cuda-bindings is not importable ({exc}): pip install cuda-bindings")
        return 2
    try:
        info = _init_context(driver)
    except RuntimeError as exc:
        print(f"no usable GPU: {exc}")
        return 3
    result = _encode_raw(driver, CALL)
    print("descriptor:", json.dumps(DESCRIPTOR))
    print("device:", info)
    if MODEL_OK:
        print("model expects: CUDA_SUCCESS (no documented rule broken)")
    else:
        print("model expects: a rejection, for " + ", ".join(MODEL_RULES))
    for message in MODEL_MESSAGES:
        print("  -", message)
    if MODEL_NOTES:
        print("model notes:", ", ".join(MODEL_NOTES))
    print("driver returns:", result, "(when found:", DRIVER_RESULT_WHEN_FOUND + ")")
    agree = (result == "CUDA_SUCCESS") == MODEL_OK
    print("AGREE" if agree else "DISAGREE")
    return 0 if agree else 1


if __name__ == "__main__":
    sys.exit(main())
"""
    return "\n".join(header) + "\n\n" + "\n\n".join(functions) + "\n" + main


# --------------------------------------------------------------------------------------------
# The rank-1 probe and the controls.
# --------------------------------------------------------------------------------------------

RANK1_PROBE_LENGTHS: dict[TensorMapDataType, tuple[int, ...]] = {
    TensorMapDataType.FLOAT32: (4096, 1 << 20, 1_000_004, 1_000_003, 1_000_002, 1_000_001),
    TensorMapDataType.UINT8: (1 << 20, 1_000_000, 1_000_008, 1_000_001),
    TensorMapDataType.FLOAT64: (1_000_002, 1_000_001),
}
RANK1_STRIDE_FORMS = ("padded", "bytes", "null")


def rank1_probe_cases(base: int = BASE_ADDRESS) -> list[dict[str, Any]]:
    """Each probe: label fields, the TensorMapArgs, and how empty arrays are passed.

    ``padded``: the documented call (no strides), passed as a one-entry array holding the byte
    size rounded up to 16; ``bytes``: one stride entry holding the byte size (Triton's form;
    the model reports array-length for it); ``null``: a NULL globalStrides.
    """
    cases = []
    for dtype, lengths in RANK1_PROBE_LENGTHS.items():
        size = element_size_bits(dtype) // 8
        for form in RANK1_STRIDE_FORMS:
            for n in lengths:
                strides = (n * size,) if form == "bytes" else ()
                args = TensorMapArgs(dtype, 1, base, (n,), strides, (256,), (1,))
                cases.append(
                    {
                        "dtype": dtype.name,
                        "n": n,
                        "bytes": n * size,
                        "bytes_mod_16": n * size % 16,
                        "strides": form,
                        "args": args,
                        "null_empty_arrays": form == "null",
                    }
                )
    return cases


def rank1_conclusions(rows: Sequence[Mapping[str, Any]]) -> dict[str, str]:
    """What the probe says about the two suspects, in words."""

    def verdict(selected: list[Mapping[str, Any]]) -> str:
        results = {r["driver"] == SUCCESS for r in selected}
        if not selected:
            return "not tried"
        if results == {True}:
            return "accepted"
        if results == {False}:
            return "rejected"
        return "mixed"

    def pick(form: str, aligned: bool) -> list[Mapping[str, Any]]:
        return [r for r in rows if r["strides"] == form and (r["bytes_mod_16"] == 0) == aligned]

    return {
        "null globalStrides, size a multiple of 16": verdict(pick("null", True)),
        "null globalStrides, size not a multiple of 16": verdict(pick("null", False)),
        "padded globalStrides, size a multiple of 16": verdict(pick("padded", True)),
        "padded globalStrides, size not a multiple of 16": verdict(pick("padded", False)),
        "byte-size globalStrides, size a multiple of 16": verdict(pick("bytes", True)),
        "byte-size globalStrides, size not a multiple of 16": verdict(pick("bytes", False)),
    }


def controls(base: int = BASE_ADDRESS) -> list[dict[str, Any]]:
    """Descriptors whose answer is not in doubt: if these fail, the run's setup is wrong."""
    f32 = TensorMapDataType.FLOAT32
    return [
        {
            "name": "2d-fp32-1024x1024-box32x32",
            "expect": SUCCESS,
            "args": TensorMapArgs.contiguous(f32, (1024, 1024), (32, 32), global_address=base),
        },
        {
            "name": "3d-fp16-box16x8x8",
            "expect": SUCCESS,
            "args": TensorMapArgs.contiguous(
                TensorMapDataType.FLOAT16, (64, 32, 32), (16, 8, 8), global_address=base
            ),
        },
        {
            "name": "2d-fp32-box32x257",
            "expect": "CUDA_ERROR_INVALID_VALUE",
            "args": TensorMapArgs.contiguous(f32, (1024, 1024), (32, 257), global_address=base),
        },
    ]


# --------------------------------------------------------------------------------------------
# The run.
# --------------------------------------------------------------------------------------------


def rebase(args: TensorMapArgs, base: int) -> TensorMapArgs:
    """``args`` with its synthetic address moved to ``base`` (same offset; NULL stays NULL)."""
    if args.global_address == 0:
        return args
    return dataclasses.replace(args, global_address=base + (args.global_address - BASE_ADDRESS))


def _run_controls(drv: tma_driver.IsolatedDriver, base: int) -> list[dict[str, Any]]:
    rows = []
    for c in controls(base):
        got = drv.encode(driver_call(c["args"]))
        rows.append(
            {"name": c["name"], "expect": c["expect"], "driver": got, "ok": got == c["expect"]}
        )
    return rows


def run(count: int, seed: int, out: Path, *, log: Any = print) -> dict[str, Any]:
    """Generate, compare, write everything under ``out``; return the summary."""
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    items = generate(count, seed)
    t_generated = time.monotonic()
    log(f"generated {len(items)} descriptors in {t_generated - started:.1f} s (seed {seed})")

    with tma_driver.IsolatedDriver() as drv:
        info = dict(drv.info)
        base, address_base = BASE_ADDRESS, "synthetic"
        control_rows = _run_controls(drv, base)
        if not control_rows[0]["ok"]:
            log(
                f"control refused with a synthetic address ({control_rows[0]['driver']}); "
                "retrying with a real allocation"
            )
            base = _round_up(drv.alloc(1 << 24), 1 << 12)
            address_base = "cuMemAlloc"
            control_rows = _run_controls(drv, base)
        log("controls: " + ", ".join(f"{c['name']}={c['driver']}" for c in control_rows))

        probe_rows = []
        for p in rank1_probe_cases(base):
            args = p.pop("args")
            call = driver_call(args, null_empty_arrays=p.pop("null_empty_arrays"))
            verdict = check(args)
            strides = call["global_strides"]
            probe_rows.append(
                {
                    **p,
                    "global_stride0": None if strides is None else strides[0],
                    "driver": drv.encode(call),
                    "model_ok": verdict.ok,
                    "model_rules": verdict.rules,
                }
            )
        conclusions = rank1_conclusions(probe_rows)
        for text, answer in conclusions.items():
            log(f"rank-1 probe: {text}: {answer}")

        records = []
        stopped = ""  # why the remaining descriptors were not sent to the driver
        for index, item in enumerate(items):
            args = rebase(item.args, base) if base != BASE_ADDRESS else item.args
            verdict = check(args)
            try:
                call = driver_call(args)
            except ValueError as exc:
                result, call = f"ERROR:{exc}", {}
            else:
                if not stopped and drv.crashes >= MAX_CRASHES:
                    stopped = f"skipped after {drv.crashes} driver crashes"
                    log(f"stopping: {stopped}")
                if stopped:
                    result = f"ERROR:{stopped}"
                else:
                    try:
                        result = drv.encode(call)
                    except tma_driver.DriverUnavailable as exc:  # the child would not restart
                        stopped = f"driver child lost: {exc}"
                        log(f"stopping: {stopped}")
                        result = f"ERROR:{stopped}"
            records.append(make_record(index, args, verdict, call, result, item.mutations))
        crashes, restarts = drv.crashes, drv.restarts
    encoded = time.monotonic()

    context = {**info, "seed": seed}
    groups = group_disagreements(records)
    by_index = {r["index"]: r for r in records}
    for g in groups:
        script = reproducer_script(g, by_index[g["first"]], context)
        (out / g["script"]).write_text(script)
    with (out / "disagreements.jsonl").open("w") as fh:
        for r in records:
            if r["outcome"] in DISAGREEMENTS:
                fh.write(json.dumps(r) + "\n")
    with (out / "records.jsonl").open("w") as fh:
        for r in records:
            fh.write(json.dumps(r) + "\n")

    summary = {
        "tool": "bench/tma_differential.py",
        "seed": seed,
        "count_requested": count,
        **summarize(records),
        "classes": classes(groups),
        "groups": groups,
        "rule_confirmation": rule_confirmation(records),
        "rank1_probe": {"conclusions": conclusions, "rows": probe_rows},
        "controls": control_rows,
        "coverage": coverage(item.args for item in items),
        "mutations": mutation_table(records),
        "environment": {
            **info,
            "address_base": address_base,
            "base_address": base,
            "python": platform.python_version(),
            "hypothesis": _hypothesis_version(),
            "driver_child_crashes": crashes,
            "driver_child_restarts": restarts,
            "stopped": stopped,
        },
        "elapsed_s": {
            "generate": round(t_generated - started, 2),
            "encode": round(encoded - t_generated, 2),
            "total": round(time.monotonic() - started, 2),
        },
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    return summary


def _hypothesis_version() -> str:
    import hypothesis

    return str(hypothesis.__version__)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10_000, help="descriptors to generate")
    parser.add_argument("--seed", type=int, default=0, help="Hypothesis seed")
    parser.add_argument("--out", type=Path, required=True, help="folder for the results")
    ns = parser.parse_args(argv)
    try:
        from cuda.bindings import driver  # noqa: F401
    except ImportError as exc:
        print(
            f"tma_differential: cuda-bindings is not importable ({exc}); pip install cuda-bindings"
        )
        return 2
    try:
        summary = run(ns.count, ns.seed, ns.out)
    except tma_driver.DriverUnavailable as exc:
        print(f"tma_differential: no usable driver/GPU: {exc}")
        return 3
    c = summary["counts"]
    print(
        f"tried {summary['tried']}: agree-ok {c[AGREE_OK]}, agree-reject {c[AGREE_REJECT]}, "
        f"model-ok/driver-rejects {c[MODEL_OK_DRIVER_REJECTS]}, "
        f"model-rejects/driver-ok {c[MODEL_REJECTS_DRIVER_OK]}, driver-crashed "
        f"{c[DRIVER_CRASHED]}, not-encoded {c[NOT_ENCODED]}; {len(summary['groups'])} groups"
    )
    for entry in summary["classes"][:15]:
        print(
            f"  {entry['count']:>6}  {entry['kind']:<24} rules={entry['rules']:<40} "
            f"driver={entry['driver']}  groups {entry['groups'][:8]}"
        )
    print(f"elapsed {summary['elapsed_s']}; wrote {ns.out}/summary.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
