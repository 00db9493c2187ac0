"""What a TMA box and the tensor behind a descriptor take in memory: the elements and bytes
one copy of the box moves (shared memory, ``mbarrier.expect_tx``), the footprint the driver
checks, the global extent, and whether the strides are dense.

Stdlib only; importable on Python >= 3.10.
"""

from __future__ import annotations

import math

from suite.cuda.model import (
    PACKED_ALIGN16_TYPES,
    Interleave,
    TensorMapArgs,
    TensorMapDataType,
    element_size_bits,
)


def inner_global_bits(args: TensorMapArgs) -> int:
    """Bits ``boxDim[0]`` elements cover in global memory (``boxDim[0] * elementSize``)."""
    return args.box_dim[0] * element_size_bits(args.dtype)


def smem_bytes_for_inner(dtype: TensorMapDataType, count: int) -> int:
    """Bytes ``count`` consecutive dimension-0 elements take in shared memory.

    Ordinary types: ``count * size``. Packed types (PTX ISA 5.5.1.1.1): 16U4_ALIGN8B is
    copied as is (16 values in 8 bytes); 16U4_ALIGN16B and 16U6_ALIGN16B each expand a
    group of 16 values to 16 bytes in shared memory (8 or 4 bytes of padding appended).
    """
    if dtype in PACKED_ALIGN16_TYPES:
        return math.ceil(count / 16) * 16
    return math.ceil(count * element_size_bits(dtype) / 8)


def driver_box_footprint(args: TensorMapArgs) -> int | None:
    """The box's shared-memory bytes as the H200 driver sizes it when it checks the box.

    ``product(floor(boxDim[i] / elementStrides[i]))`` over every dimension, dimension 0
    included even with interleave NONE, times the element size (for the packed types, the
    dimension-0 run is sized as it lands in shared memory). This is what separated the
    accepted from the refused descriptors of the 2026-11-22 run exactly; it is *not*
    :func:`box_bytes` (the reference's count uses ``ceil`` and ignores ``elementStrides[0]``
    with interleave NONE), so a box with ``boxDim[i] < elementStrides[i]`` counts as 0 bytes.

    ``None`` when the arrays do not describe a box (mismatched lengths, a stride below 1).
    """
    box, es = args.box_dim, args.element_strides
    if not box or len(box) != len(es) or any(e < 1 for e in es) or any(b < 0 for b in box):
        return None
    counts = [b // e for b, e in zip(box, es, strict=True)]
    return smem_bytes_for_inner(args.dtype, counts[0]) * math.prod(counts[1:])


def global_extent_bytes(args: TensorMapArgs) -> int | None:
    """Bytes of the allocation the tensor occupies: rows of ``globalStrides`` pitch.

    Rank 1: ``globalDim[0] * elementSize``; otherwise the largest of that row and
    ``globalDim[i] * globalStrides[i-1]`` (for a dense or padded layout, the outermost one:
    dimension count times pitch). ``None`` when the arrays do not match the rank.
    """
    if args.rank < 1 or len(args.global_dim) != args.rank:
        return None
    if len(args.global_strides) != args.rank - 1:
        return None
    extent = math.ceil(args.global_dim[0] * element_size_bits(args.dtype) / 8)
    for dim, stride in zip(args.global_dim[1:], args.global_strides, strict=True):
        extent = max(extent, dim * stride)
    return extent


def is_dense(args: TensorMapArgs) -> bool:
    """Whether the strides are exactly the packed ones (no padding, no overlap).

    ``globalStrides[0] == globalDim[0] * elementSize`` and ``globalStrides[i] ==
    globalStrides[i-1] * globalDim[i]``; rank 1 is always dense.
    """
    expected = math.ceil(args.global_dim[0] * element_size_bits(args.dtype) / 8)
    for i, stride in enumerate(args.global_strides):
        if stride != expected:
            return False
        if i + 1 < len(args.global_strides):
            expected = stride * args.global_dim[i + 1]
    return True


def box_elements(args: TensorMapArgs) -> tuple[int, ...]:
    """Elements one copy of the box moves along each dimension, innermost first.

    The driver reference: with a traversal stride ``elementStrides[i] != 1`` TMA loads
    ``ceil(boxDim[i] / elementStrides[i])`` elements along dimension ``i``; with
    interleave NONE, ``elementStrides[0]`` is ignored, so dimension 0 loads ``boxDim[0]``.
    """
    if len(args.box_dim) != len(args.element_strides):
        raise ValueError(
            f"box_dim has {len(args.box_dim)} entries but element_strides has "
            f"{len(args.element_strides)}"
        )
    counts = []
    for i, (box, es) in enumerate(zip(args.box_dim, args.element_strides, strict=True)):
        if box < 0 or es < 1:
            raise ValueError(f"boxDim[{i}]={box} / elementStrides[{i}]={es} give no box size")
        ignore = i == 0 and args.interleave is Interleave.NONE
        counts.append(box if ignore else math.ceil(box / es))
    return tuple(counts)


def box_bytes(args: TensorMapArgs) -> int:
    """Bytes one copy of the box writes into (or reads from) shared memory.

    This is the number to compare with a shared-memory buffer and the transaction byte
    count an mbarrier must expect (``mbarrier.expect_tx``): a TMA load always delivers
    the whole box, with out-of-bounds elements filled, never a partial one.

    ``product(box_elements) * elementSize``, except that the dimension-0 run of a packed
    type is sized as it lands in shared memory: 16U4_ALIGN8B is copied as is (half a byte
    per value); 16U4_ALIGN16B and 16U6_ALIGN16B pad each group of 16 values to 16 bytes
    (PTX ISA 5.5.1.1.1). Examples (fp32, no element strides): box {32, 128} -> 16384,
    box {64, 128} -> 32768.

    Raises ``ValueError`` if the box is not computable (mismatched arrays, negative sizes).
    Box validity is ``check``'s job: this does not reject a box the driver would.
    """
    counts = box_elements(args)
    if not counts:
        return 0
    inner = smem_bytes_for_inner(args.dtype, counts[0])
    return inner * math.prod(counts[1:])


__all__ = [
    "box_bytes",
    "box_elements",
    "driver_box_footprint",
    "global_extent_bytes",
    "is_dense",
]
