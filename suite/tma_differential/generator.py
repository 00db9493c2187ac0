"""The differential's generator: a valid descriptor (:mod:`.descriptors`), then 0, 1
or 2 targeted mutations (one step past one documented rule, or an edge the documentation
leaves open), drawn reproducibly from a seed; and what a list of them covers.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import seed as hypothesis_seed
from hypothesis import strategies as st

from suite.cuda.model import (
    MAX_GLOBAL_DIM,
    PACKED_ALIGN16_TYPES,
    PACKED_TYPES,
    Interleave,
    OobFill,
    Swizzle,
    TensorMapArgs,
    TensorMapDataType,
    element_size_bits,
)
from suite.tma_differential.descriptors import (
    BOX_EDGES,
    DIM_EDGES,
    F_TYPES,
    PACKED_SWIZZLES,
    STRIDE_EDGES,
    STRIDE_LIMIT,
    Generated,
    alignment,
    elements_per_16_bytes,
    round_up,
    swizzle_width_elements,
    valid_descriptors,
)


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
    stride = min(round_up(last, 32), STRIDE_LIMIT - 32)
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
    need = alignment(a.dtype, a.interleave)
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
    need = alignment(a.dtype, a.interleave)
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
    need = alignment(a.dtype, a.interleave)
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
    value = STRIDE_LIMIT - alignment(a.dtype, a.interleave)
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


#: A mutation: given Hypothesis's ``draw`` and a descriptor, a changed descriptor, or None
#: where it does not apply to the descriptor at hand.
Mutation = Callable[[Any, TensorMapArgs], TensorMapArgs | None]

#: name -> mutation; the first group breaks a documented rule, the rest do not.
MUTATIONS: dict[str, Mutation] = {
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
            applies = MUTATIONS[name](_no_draw, args) is not None
        except _Drew:
            applies = True  # it wanted to draw
        if applies:
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


def coverage(descriptors: Iterable[TensorMapArgs]) -> dict[str, dict[str, int]]:
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
                inner = swizzle_width_elements(a.dtype, a.swizzle)
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
