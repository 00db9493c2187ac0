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
byte-size or padded ``globalStrides``), a footprint probe (UINT8 boxes of every representable
size between the largest footprint the 2026-11-22 run saw accepted and the smallest it saw
refused, to pin the shared-memory limit the driver checks boxes against) and three controls
(descriptors whose answer is not in doubt; if the first is refused with the synthetic
addresses, the run moves them onto a real cuMemAlloc).

The model judges each descriptor for the device's compute capability and driver version
(``--compute-capability auto``, the default; ``none`` judges without a target), so its
observed rules (docs/tma-disagreements.md) take part; ``counts_documented`` in the summary
counts the same descriptors against the documented rules alone, the 2026-11-22 model.

    python bench/tma_differential.py --count 10000 --seed 0 --out DIR
    python bench/tma_differential.py --explain DIR

Writes ``DIR/summary.json`` (counts, groups, per-rule confirmation, the probes, the controls,
coverage, timings), ``DIR/disagreements.jsonl`` (every disagreement), ``DIR/records.jsonl``
(every descriptor) and ``DIR/disagreement-<n>.py``. Exit status 0 when it ran (disagreements
are results, not errors), 2 without cuda-bindings, 3 without a usable GPU.

``--explain DIR`` needs no GPU: it reads a run's records (or, for a run that kept only its
disagreements, regenerates the descriptors from the seed and infers the agreeing answers) and
prints, for each hypothesis about why the driver refused what the documented rules allow, how
many refusals it explains and how many accepted descriptors contradict it (``HYPOTHESES``).
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

from suite.cuda import driver as tma_driver  # noqa: E402
from suite.cuda.driver import args_from_dict, args_to_dict, driver_call  # noqa: E402
from suite.tma_model import (  # noqa: E402
    ATOM_SWIZZLES,
    FLOAT_TYPES,
    MAX_GLOBAL_DIM,
    MAX_RANK,
    OBSERVED_RULES,
    PACKED_ALIGN16_TYPES,
    PACKED_TYPES,
    Interleave,
    L2Promotion,
    OobFill,
    Swizzle,
    TensorMapArgs,
    TensorMapDataType,
    Verdict,
    box_bytes,
    check,
    driver_box_footprint,
    element_size_bits,
    shared_memory_limit,
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
    """One descriptor's line in records.jsonl / disagreements.jsonl.

    ``model_ok`` / ``outcome`` are the whole model's (documented and observed rules);
    ``model_documented_ok`` / ``outcome_documented`` the documented rules' alone.
    """
    return {
        "index": index,
        "outcome": outcome(verdict.ok, driver_result),
        "outcome_documented": outcome(verdict.documented_ok, driver_result),
        "driver": driver_result,
        "mutations": list(mutations),
        "model_ok": verdict.ok,
        "model_documented_ok": verdict.documented_ok,
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
    """The counts: tried, each outcome (whole model, and documented rules alone), results."""
    counts = collections.Counter(r["outcome"] for r in records)
    documented = collections.Counter(r.get("outcome_documented", r["outcome"]) for r in records)
    return {
        "tried": len(records),
        "counts": {name: counts.get(name, 0) for name in OUTCOMES},
        "counts_documented": {name: documented.get(name, 0) for name in OUTCOMES},
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
    the model reports array-length for it); ``null``: a NULL globalStrides (the model's
    ``global_strides_pointer="null"``, rule ``rank1-null-strides``).
    """
    cases = []
    for dtype, lengths in RANK1_PROBE_LENGTHS.items():
        size = element_size_bits(dtype) // 8
        for form in RANK1_STRIDE_FORMS:
            for n in lengths:
                strides = (n * size,) if form == "bytes" else ()
                pointer = "null" if form == "null" else "array"
                args = TensorMapArgs(
                    dtype, 1, base, (n,), strides, (256,), (1,), global_strides_pointer=pointer
                )
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
# The footprint probe: which box size in bytes the driver stops accepting.
# --------------------------------------------------------------------------------------------

#: The largest box footprint (floor(box / elementStrides) * elementSize) the 2026-11-22 run saw
#: accepted, and the smallest it saw refused (docs/tma-disagreements.md).
FOOTPRINT_ACCEPTED, FOOTPRINT_REFUSED = 228_480, 236_640


def _factor(n: int, parts: int) -> tuple[int, ...] | None:
    """``n`` as a product of at most ``parts`` factors, each 2..256 (largest first)."""
    if n == 1:
        return ()
    if parts == 0 or n > 256**parts:
        return None
    for f in range(min(256, n), 1, -1):
        if n % f == 0:
            rest = _factor(n // f, parts - 1)
            if rest is not None:
                return (f, *rest)
    return None


def footprint_box(nbytes: int, rank_max: int = MAX_RANK) -> tuple[int, ...] | None:
    """A UINT8 box of exactly ``nbytes`` (innermost first): boxDim[0] a multiple of 16."""
    if nbytes <= 0 or nbytes % 16:
        return None
    for units in range(16, 0, -1):
        inner = 16 * units
        if nbytes % inner == 0:
            rest = _factor(nbytes // inner, rank_max - 1)
            if rest is not None:
                return (inner, *rest)
    return None


def footprint_probe_cases(base: int = BASE_ADDRESS) -> list[dict[str, Any]]:
    """UINT8 boxes of every representable 16-byte step in [accepted, refused]; two quirks.

    Each tensor is the box itself (dense, so every other rule holds). The two "quirk" rows
    check the driver's floor(boxDim / elementStrides): a dimension whose box is below its
    element stride counts 0 (a 64 MiB box accepted), one at it counts 1 (refused).
    """
    u8 = TensorMapDataType.UINT8
    cases = []
    for nbytes in range(FOOTPRINT_ACCEPTED, FOOTPRINT_REFUSED + 16, 16):
        box = footprint_box(nbytes)
        if box is not None:
            args = TensorMapArgs.contiguous(u8, box, box, global_address=base)
            cases.append({"kind": "scan", "bytes": nbytes, "box": list(box), "args": args})
    for label, box_dim, es in (
        ("box-below-element-stride", (256, 256, 1, 256), (1, 1, 8, 1)),
        ("box-at-element-stride", (256, 256, 8, 256), (1, 1, 8, 1)),
    ):
        dims = (256, 256, 8, 256)
        args = TensorMapArgs.contiguous(u8, dims, box_dim, global_address=base, element_strides=es)
        cases.append(
            {
                "kind": label,
                "bytes": driver_box_footprint(args),
                "box": list(box_dim),
                "element_strides": list(es),
                "loaded_bytes": box_bytes(args),
                "args": args,
            }
        )
    return cases


def footprint_conclusions(rows: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """The largest accepted and smallest refused scanned size, and whether that is a cut."""
    scan = [r for r in rows if r["kind"] == "scan"]
    accepted = [r["bytes"] for r in scan if r["driver"] == SUCCESS]
    refused = [r["bytes"] for r in scan if r["driver"] != SUCCESS]
    largest = max(accepted) if accepted else None
    smallest = min(refused) if refused else None
    quirks = {r["kind"]: r["driver"] for r in rows if r["kind"] != "scan"}
    return {
        "scanned": len(scan),
        "largest_accepted_bytes": largest,
        "smallest_refused_bytes": smallest,
        "monotonic": largest is None or smallest is None or largest < smallest,
        "quirks": quirks,
    }


def device_facts() -> dict[str, Any]:
    """Device 0's compute capability, opt-in shared memory per block and driver version.

    Asked in this process through cuda-bindings (the encodes run in a child); empty when
    that fails, so the run still goes ahead with the model judging without a target.
    """
    try:
        from cuda.bindings import driver

        ok = driver.CUresult.CUDA_SUCCESS
        (err,) = driver.cuInit(0)
        if err != ok:
            return {}
        err, device = driver.cuDeviceGet(0)
        if err != ok:
            return {}
        facts: dict[str, Any] = {}
        attribute = driver.CUdevice_attribute
        for key, name in (
            ("cc_major", "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR"),
            ("cc_minor", "CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR"),
            (
                "max_shared_memory_per_block_optin",
                "CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
            ),
        ):
            err, value = driver.cuDeviceGetAttribute(getattr(attribute, name), device)
            if err == ok:
                facts[key] = int(value)
        err, version = driver.cuDriverGetVersion()
        if err == ok:
            facts["driver_version"] = int(version)
        if "cc_major" in facts and "cc_minor" in facts:
            facts["compute_capability"] = facts["cc_major"] * 10 + facts["cc_minor"]
        return facts
    except Exception:  # any failure only means "no target"
        return {}


# --------------------------------------------------------------------------------------------
# Explaining a run's disagreements (no GPU): hypotheses, counted for and against.
# --------------------------------------------------------------------------------------------


def _bits(a: TensorMapArgs) -> int:
    return element_size_bits(a.dtype)


def _row_bytes_of(a: TensorMapArgs) -> int:
    return math.ceil(a.global_dim[0] * _bits(a) / 8) if a.global_dim else 0


def _overlapping(a: TensorMapArgs) -> bool:
    if a.rank < 2:
        return False
    s, d = a.global_strides, a.global_dim
    return s[0] < _row_bytes_of(a) or any(s[i] < s[i - 1] * d[i] for i in range(1, a.rank - 1))


def _span_past_next_stride(a: TensorMapArgs) -> bool:
    if a.rank < 2:
        return False
    s, b = a.global_strides, a.box_dim
    return b[0] * _bits(a) > 8 * s[0] or any(b[i] * s[i - 1] > s[i] for i in range(1, a.rank - 1))


def _footprint(a: TensorMapArgs, how: str) -> int:
    """Candidate ways of sizing the box, in bytes (the driver's is ``floor``)."""
    n = 1
    for i, (b, e) in enumerate(zip(a.box_dim, a.element_strides, strict=True)):
        if how == "product":
            n *= b
        elif how == "ceil":
            n *= -(-b // e)
        elif how == "floor-skip-dim0" and i == 0 and a.interleave is Interleave.NONE:
            n *= b
        else:
            n *= b // e
    return n * _bits(a) // 8


def _documented_box_bytes(a: TensorMapArgs) -> int:
    try:
        return box_bytes(a)
    except ValueError:
        return 0


_LIMIT = shared_memory_limit(None)

#: (id, what, predicate): "the driver refuses a descriptor when ...". Each is judged over the
#: descriptors the documented rules accept: how many refusals it explains, how many accepted
#: descriptors it wrongly predicts refused (contradictions). Only zero contradictions confirm.
HYPOTHESES: tuple[tuple[str, str, Any], ...] = (
    ("box-larger-than-dim", "boxDim[i] > globalDim[i] for some i",
     lambda a: any(b > d for b, d in zip(a.box_dim, a.global_dim, strict=True))),
    ("inner-box-beyond-row", "boxDim[0] > globalDim[0] (inner box bytes beyond the row)",
     lambda a: a.box_dim[0] > a.global_dim[0]),
    ("box-span-past-next-stride",
     "boxDim[0] * elementSize > globalStrides[0], or boxDim[i] * globalStrides[i-1] > "
     "globalStrides[i]", _span_past_next_stride),
    ("overlapping-strides", "globalStrides[0] < row bytes or globalStrides[i] < "
     "globalStrides[i-1] * globalDim[i]", _overlapping),
    ("zero-stride", "a globalStrides entry of 0", lambda a: 0 in a.global_strides),
    ("dim-2^32", "globalDim[i] == 2^32", lambda a: MAX_GLOBAL_DIM in a.global_dim),
    ("stride-near-2^40", "a globalStrides entry >= 2^40 - 32",
     lambda a: any(s >= 2**40 - 32 for s in a.global_strides)),
    ("null-address", "globalAddress == 0", lambda a: a.global_address == 0),
    ("element-stride0-not-1", "elementStrides[0] != 1 with interleave NONE",
     lambda a: a.interleave is Interleave.NONE and a.element_strides[0] != 1),
    ("box-not-multiple-of-element-stride", "boxDim[i] % elementStrides[i] != 0 (i > 0, or "
     "interleaved)", lambda a: any(
         b % e for i, (b, e) in enumerate(zip(a.box_dim, a.element_strides, strict=True))
         if i or a.interleave is not Interleave.NONE)),
    ("nan-oob-fill", "oobFill NAN_REQUEST_ZERO_FMA", lambda a: a.oob_fill is not OobFill.NONE),
    ("l2-promotion", "l2Promotion != NONE", lambda a: a.l2_promotion is not L2Promotion.NONE),
    ("l2-256-small-inner", "l2Promotion 256B with boxDim[0] * elementSize < 256 bytes",
     lambda a: a.l2_promotion is L2Promotion.L2_256B and a.box_dim[0] * _bits(a) < 2048),
    ("interleaved", "interleave != NONE", lambda a: a.interleave is not Interleave.NONE),
    ("rank1-ragged-size", "rank 1, globalDim[0] * elementSize not a multiple of 16",
     lambda a: a.rank == 1 and a.global_dim[0] * _bits(a) % 128 != 0),
    ("packed-type", "a packed type (16U4_ALIGN8B, 16U4_ALIGN16B, 16U6_ALIGN16B)",
     lambda a: a.dtype in PACKED_TYPES),
    ("atom-swizzle", "a 128B_ATOM_* swizzle", lambda a: a.swizzle in ATOM_SWIZZLES),
    ("interleaved-inner-16", "interleaved, boxDim[0] * elementSize not a multiple of 16 bytes",
     lambda a: a.interleave is not Interleave.NONE and a.box_dim[0] * _bits(a) % 128 != 0),
    ("interleaved-inner-32", "interleaved, boxDim[0] * elementSize not a multiple of 32 bytes",
     lambda a: a.interleave is not Interleave.NONE and a.box_dim[0] * _bits(a) % 256 != 0),
    ("footprint-documented", f"box_bytes (ceil, elementStrides[0] ignored) > {_LIMIT}",
     lambda a: _documented_box_bytes(a) > _LIMIT),
    ("footprint-ceil", f"product of ceil(boxDim / elementStrides) * elementSize > {_LIMIT}",
     lambda a: _footprint(a, "ceil") > _LIMIT),
    ("footprint-product", f"product of boxDim * elementSize > {_LIMIT}",
     lambda a: _footprint(a, "product") > _LIMIT),
    ("footprint-floor-skip-dim0", f"floor footprint, elementStrides[0] ignored > {_LIMIT}",
     lambda a: _footprint(a, "floor-skip-dim0") > _LIMIT),
    ("footprint-floor", f"product of floor(boxDim / elementStrides) * elementSize > {_LIMIT}",
     lambda a: _footprint(a, "floor") > _LIMIT),
)  # fmt: skip
#: The confirmed hypotheses of the 2026-11-22 run, and the model rule each became.
CONFIRMED = {
    "packed-type": "packed-type-needs-sm100",
    "atom-swizzle": "swizzle-atom-needs-sm100",
    "interleaved-inner-16": "interleaved-inner-box-bytes-multiple-of-16",
    "footprint-floor": "box-shared-memory-footprint",
}


def _read_jsonl(path: Path) -> list[dict[str, Any]]:
    import gzip

    if path.exists():
        text = path.read_text()
    elif path.with_suffix(path.suffix + ".gz").exists():
        with gzip.open(path.with_suffix(path.suffix + ".gz"), "rt") as fh:
            text = fh.read()
    else:
        raise FileNotFoundError(f"neither {path} nor {path}.gz exists")
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def load_run(folder: Path) -> list[dict[str, Any]]:
    """Every record of a run: its records.jsonl, or rebuilt from its seed and disagreements.

    A run that kept only ``disagreements.jsonl(.gz)`` and ``summary.json`` is rebuilt: the
    generator gives the same descriptors for the same count and seed, the disagreements are
    taken as recorded (their arguments must match), and every other descriptor's driver
    answer is the one the documented model gave (those agreed). The rebuilt counts must equal
    the summary's, or this raises ``ValueError``.
    """
    try:
        return _read_jsonl(folder / "records.jsonl")
    except FileNotFoundError:
        pass
    summary = json.loads((folder / "summary.json").read_text())
    recorded = {r["index"]: r for r in _read_jsonl(folder / "disagreements.jsonl")}
    base = summary.get("environment", {}).get("base_address", BASE_ADDRESS)
    records = []
    for index, item in enumerate(generate(summary["count_requested"], summary["seed"])):
        args = rebase(item.args, base) if base != BASE_ADDRESS else item.args
        if index in recorded:
            record = recorded[index]
            if record["args"] != args_to_dict(args):
                raise ValueError(f"descriptor {index} differs from the run's: not the same list")
            records.append(record)
            continue
        verdict = check(args)
        if args.rank > MAX_RANK:  # cuda-bindings refuses arrays longer than 5
            result = "ERROR:not encoded (rank > 5)"
        else:
            result = SUCCESS if verdict.documented_ok else "CUDA_ERROR_INVALID_VALUE"
        records.append(make_record(index, args, verdict, {}, result, item.mutations))
    counts = collections.Counter(r.get("outcome_documented", r["outcome"]) for r in records)
    want = {k: v for k, v in summary["counts"].items() if v}
    if {k: v for k, v in counts.items() if v} != want:
        raise ValueError(f"rebuilt counts {dict(counts)} differ from the summary's {want}")
    return records


def explain(records: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    """Each hypothesis counted over the run; the refusals split by the confirmed ones.

    Refused: descriptors the documented rules accept and the driver refused. Accepted: every
    descriptor the driver accepted (whatever the model said). A hypothesis explains a refusal
    it predicts and is contradicted by an accepted descriptor it predicts refused.
    """
    parsed = [(r, args_from_dict(r["args"])) for r in records]
    refused = [
        (r, a)
        for r, a in parsed
        if r.get("model_documented_ok", r["model_ok"]) and _answered(r) and r["driver"] != SUCCESS
    ]
    accepted = [(r, a) for r, a in parsed if r["driver"] == SUCCESS]
    table = []
    for hid, what, predicate in HYPOTHESES:
        explains = sum(1 for _, a in refused if _holds(predicate, a))
        against = sum(1 for _, a in accepted if _holds(predicate, a))
        table.append(
            {
                "id": hid,
                "hypothesis": what,
                "explains": explains,
                "contradictions": against,
                "confirmed": explains > 0 and against == 0,
            }
        )
    confirmed = {h[0]: h[2] for h in HYPOTHESES if h[0] in CONFIRMED}
    combos: collections.Counter[str] = collections.Counter()
    examples: dict[str, int] = {}
    for r, a in refused:
        hit = [hid for hid, predicate in confirmed.items() if _holds(predicate, a)]
        key = "+".join(hit) or "unexplained"
        combos[key] += 1
        examples.setdefault(key, r["index"])
    footprints_ok = [f for _, a in accepted if (f := _safe_footprint(a)) is not None]
    footprints_refused = [
        f
        for _, a in refused
        if not any(_holds(confirmed[h], a) for h in confirmed if h != "footprint-floor")
        and (f := _safe_footprint(a)) is not None
    ]
    rejects_ok = collections.Counter(
        ",".join(r["model_rules"]) for r, _ in parsed if r["outcome"] == MODEL_REJECTS_DRIVER_OK
    )
    return {
        "refused": len(refused),
        "accepted": len(accepted),
        "hypotheses": table,
        "confirmed_rules": dict(CONFIRMED),
        "refusals_by_confirmed": dict(combos.most_common()),
        "example_index": examples,
        "footprint_bracket": {
            "largest_accepted": max(footprints_ok, default=None),
            "smallest_refused_otherwise_valid": min(footprints_refused, default=None),
        },
        "model_rejects_driver_ok": dict(rejects_ok.most_common()),
    }


def _holds(predicate: Any, args: TensorMapArgs) -> bool:
    """``predicate(args)``, False where the arrays do not describe a tensor (rank 0, ...)."""
    try:
        return bool(predicate(args))
    except (IndexError, ValueError, ZeroDivisionError):
        return False


def _safe_footprint(args: TensorMapArgs) -> int | None:
    try:
        return _footprint(args, "floor")
    except (ValueError, ZeroDivisionError):
        return None


def _answered(record: Mapping[str, Any]) -> bool:
    return outcome(True, record["driver"]) in (AGREE_OK, MODEL_OK_DRIVER_REJECTS)


def print_explanation(report: Mapping[str, Any], log: Any = print) -> None:
    log(f"refused by the driver, documented rules fine: {report['refused']}; "
        f"accepted by the driver: {report['accepted']}")  # fmt: skip
    log(f"  {'hypothesis':<36} {'explains':>8} {'against':>8}")
    for h in report["hypotheses"]:
        mark = "  confirmed" if h["confirmed"] else ""
        log(f"  {h['id']:<36} {h['explains']:>8} {h['contradictions']:>8}{mark}")
    log("refusals by the confirmed hypotheses:")
    for key, count in report["refusals_by_confirmed"].items():
        log(f"  {count:>6}  {key}  (e.g. index {report['example_index'][key]})")
    log(f"footprint bracket: {report['footprint_bracket']}")
    log(f"model-rejects/driver-ok by rules: {report['model_rejects_driver_ok']}")


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


#: ``--compute-capability``: ask the device (the default), or judge without a target.
AUTO = "auto"


def run(
    count: int,
    seed: int,
    out: Path,
    *,
    log: Any = print,
    compute_capability: int | str | None = AUTO,
) -> dict[str, Any]:
    """Generate, compare, write everything under ``out``; return the summary.

    ``compute_capability``: the target the model judges for (``"auto"``: device 0's, with its
    driver version for the Blackwell note; ``None``: no target).
    """
    out.mkdir(parents=True, exist_ok=True)
    started = time.monotonic()
    items = generate(count, seed)
    t_generated = time.monotonic()
    log(f"generated {len(items)} descriptors in {t_generated - started:.1f} s (seed {seed})")
    facts = device_facts()
    cc = facts.get("compute_capability") if compute_capability == AUTO else compute_capability
    if cc is not None and not isinstance(cc, int):
        raise ValueError(f"compute_capability must be an int, None or {AUTO!r}, got {cc!r}")
    driver_version = facts.get("driver_version")
    model = {
        "compute_capability": cc,
        "driver_cuda_version": driver_version,
        "shared_memory_limit": shared_memory_limit(cc),
        "observed_rules": sorted(OBSERVED_RULES),
        "device": facts,
    }
    log(f"model target: compute capability {cc}, driver {driver_version}; device {facts}")

    def judge(args: TensorMapArgs) -> Verdict:
        return check(args, compute_capability=cc, driver_cuda_version=driver_version)

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
            verdict = judge(args)
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

        footprint_rows = []
        for p in footprint_probe_cases(base):
            args = p.pop("args")
            verdict = judge(args)
            footprint_rows.append(
                {**p, "driver": drv.encode(driver_call(args)), "model_rules": verdict.rules}
            )
        footprint = footprint_conclusions(footprint_rows)
        footprint["device_max_shared_memory_per_block_optin"] = facts.get(
            "max_shared_memory_per_block_optin"
        )
        footprint["model_limit"] = shared_memory_limit(cc)
        log(f"footprint probe: {footprint}")

        records = []
        stopped = ""  # why the remaining descriptors were not sent to the driver
        for index, item in enumerate(items):
            args = rebase(item.args, base) if base != BASE_ADDRESS else item.args
            verdict = judge(args)
            try:
                call = driver_call(args, null_empty_arrays=args.global_strides_pointer == "null")
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
        "model": model,
        "rule_confirmation": rule_confirmation(records),
        "explanation": explain(records),
        "rank1_probe": {"conclusions": conclusions, "rows": probe_rows},
        "footprint_probe": {"conclusions": footprint, "rows": footprint_rows},
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


def _compute_capability(text: str) -> int | str | None:
    if text == AUTO:
        return AUTO
    if text.lower() == "none":
        return None
    value = int(text.removeprefix("sm_"))
    return value


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--count", type=int, default=10_000, help="descriptors to generate")
    parser.add_argument("--seed", type=int, default=0, help="Hypothesis seed")
    parser.add_argument("--out", type=Path, help="folder for the results")
    parser.add_argument(
        "--compute-capability",
        type=_compute_capability,
        default=AUTO,
        help="target the model judges for: auto (device 0), none, or e.g. 90 / sm_100",
    )
    parser.add_argument(
        "--explain",
        type=Path,
        metavar="DIR",
        help="no GPU: count each hypothesis over the run in DIR (records or disagreements)",
    )
    ns = parser.parse_args(argv)
    if ns.explain is not None:
        print_explanation(explain(load_run(ns.explain)))
        return 0
    if ns.out is None:
        parser.error("--out is required (or --explain DIR)")
    try:
        from cuda.bindings import driver  # noqa: F401
    except ImportError as exc:
        print(
            f"tma_differential: cuda-bindings is not importable ({exc}); pip install cuda-bindings"
        )
        return 2
    try:
        summary = run(ns.count, ns.seed, ns.out, compute_capability=ns.compute_capability)
    except tma_driver.DriverUnavailable as exc:
        print(f"tma_differential: no usable driver/GPU: {exc}")
        return 3
    for label, key in (("whole model", "counts"), ("documented rules only", "counts_documented")):
        c = summary[key]
        print(
            f"{label}: tried {summary['tried']}: agree-ok {c[AGREE_OK]}, agree-reject "
            f"{c[AGREE_REJECT]}, model-ok/driver-rejects {c[MODEL_OK_DRIVER_REJECTS]}, "
            f"model-rejects/driver-ok {c[MODEL_REJECTS_DRIVER_OK]}, driver-crashed "
            f"{c[DRIVER_CRASHED]}, not-encoded {c[NOT_ENCODED]}"
        )
    print(f"{len(summary['groups'])} groups; model target {summary['model']['compute_capability']}")
    print_explanation(summary["explanation"])
    for entry in summary["classes"][:15]:
        print(
            f"  {entry['count']:>6}  {entry['kind']:<24} rules={entry['rules']:<40} "
            f"driver={entry['driver']}  groups {entry['groups'][:8]}"
        )
    print(f"elapsed {summary['elapsed_s']}; wrote {ns.out}/summary.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
