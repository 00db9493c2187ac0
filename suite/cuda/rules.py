"""The rules of the TMA descriptor model, one function each, and :func:`check`, which runs
them all: the documented requirements of ``cuTensorMapEncodeTiled`` and the rules a real
driver was seen to enforce (see :mod:`suite.cuda.model` for the descriptor, the sources and
the conventions). Kept as one table on purpose: the order of the checks is the order the
violations are named in.

Stdlib only; importable on Python >= 3.10.
"""

from __future__ import annotations

import math
from typing import Any

from suite.cuda.footprint import (
    box_bytes,
    driver_box_footprint,
    global_extent_bytes,
    inner_global_bits,
    is_dense,
    smem_bytes_for_inner,
)
from suite.cuda.model import (
    BLACKWELL_BIT85_ALLOCATION_BYTES,
    BLACKWELL_BIT85_LAST_AFFECTED_DRIVER,
    BLACKWELL_KNOWN_ISSUE,
    CCCL_TMA_SOURCE_URL,
    CCCL_TMA_URL,
    FLOAT_TYPES,
    GLOBAL_STRIDE_LIMIT,
    MAX_BOX_DIM,
    MAX_ELEMENT_STRIDE,
    MAX_GLOBAL_DIM,
    MAX_RANK,
    MODEL_ONLY,
    PACKED_ALIGN16_TYPES,
    PACKED_SWIZZLES,
    PACKED_TYPES,
    PTX_TILED_MODE,
    SM100,
    DescriptorCheck,
    Interleave,
    OobFill,
    Swizzle,
    TensorMapArgs,
    TensorMapDataType,
    Violation,
    driver_source,
    element_size_bits,
    observed_source,
    shared_memory_limit,
)

# --------------------------------------------------------------------------------------------
# The rules.
# --------------------------------------------------------------------------------------------


class _Collector:
    """Accumulates violations and notes for one ``check`` call."""

    def __init__(self) -> None:
        self.verdict = DescriptorCheck()

    def fail(self, rule: str, message: str, source: str, **values: Any) -> None:
        self.verdict.violations.append(Violation(rule, message, values, source))

    def note(self, rule: str, message: str, source: str, **values: Any) -> None:
        self.verdict.notes.append(Violation(rule, message, values, source))

    def observed(self, rule: str, message: str, detail: str, **values: Any) -> None:
        """A violation of a rule the driver was seen to enforce, undocumented."""
        self.verdict.violations.append(
            Violation(rule, message, values, observed_source(detail), documented=False)
        )

    def observed_note(self, rule: str, message: str, detail: str, **values: Any) -> None:
        self.verdict.notes.append(
            Violation(rule, message, values, observed_source(detail), documented=False)
        )


def _check_lengths(args: TensorMapArgs, out: _Collector) -> bool:
    """The driver reads exactly ``rank`` (``rank - 1`` for strides) entries per array."""
    expected = {
        "global_dim": args.rank,
        "global_strides": max(args.rank - 1, 0),
        "box_dim": args.rank,
        "element_strides": args.rank,
    }
    consistent = True
    for name, want in expected.items():
        got = len(getattr(args, name))
        if got != want:
            consistent = False
            out.fail(
                "array-length",
                f"{name} has {got} entries but rank={args.rank} needs {want}; "
                f"pass exactly {want} (global_strides omits dimension 0)",
                MODEL_ONLY,
                array=name,
                length=got,
                expected=want,
                rank=args.rank,
            )
    return consistent


def _check_rank(args: TensorMapArgs, out: _Collector) -> None:
    """tensorRank: non-zero and <= 5; at least 3 when interleaved."""
    if not 1 <= args.rank <= MAX_RANK:
        out.fail(
            "rank-range",
            f"tensorRank={args.rank} is outside 1..{MAX_RANK}; use a rank from 1 to {MAX_RANK}",
            driver_source("tensorRank"),
            rank=args.rank,
        )
    if args.interleave is not Interleave.NONE and args.rank < 3:
        out.fail(
            "interleave-requires-rank-3",
            f"interleave={args.interleave.cuda_name} needs tensorRank >= 3 but rank={args.rank}; "
            "use rank 3..5 or CU_TENSOR_MAP_INTERLEAVE_NONE",
            driver_source("tensorRank"),
            rank=args.rank,
            interleave=args.interleave.name,
        )


def _check_address(args: TensorMapArgs, out: _Collector) -> None:
    """globalAddress: 16-byte aligned; 32 with INTERLEAVE_32B or a packed ALIGN16B type."""
    need, why = 16, "always"
    if args.interleave is Interleave.B32:
        need, why = 32, "interleave is CU_TENSOR_MAP_INTERLEAVE_32B"
    elif args.dtype in PACKED_ALIGN16_TYPES:
        need, why = 32, f"tensorDataType is {args.dtype.cuda_name}"
    if args.global_address % need:
        out.fail(
            "global-address-alignment",
            f"globalAddress={args.global_address:#x} is not {need}-byte aligned "
            f"(needed because {why}); offset it to a multiple of {need}",
            driver_source("globalAddress"),
            global_address=args.global_address,
            required_alignment=need,
            remainder=args.global_address % need,
            reason=why,
        )


def _check_global_dims(args: TensorMapArgs, out: _Collector) -> None:
    """globalDim: each in 1..2^32; packed types constrain globalDim[0]."""
    for i, dim in enumerate(args.global_dim):
        if not 1 <= dim <= MAX_GLOBAL_DIM:
            out.fail(
                "global-dim-range",
                f"globalDim[{i}]={dim} is outside 1..2^32; each dimension must be non-zero "
                "and at most 2^32 elements",
                driver_source("globalDim"),
                index=i,
                global_dim=dim,
                max=MAX_GLOBAL_DIM,
            )
    if not args.global_dim:
        return
    dim0 = args.global_dim[0]
    multiple = 0
    if args.dtype in PACKED_ALIGN16_TYPES:
        multiple = 128
    elif args.dtype is TensorMapDataType.PACKED_16U4_ALIGN8B:
        multiple = 2
    if multiple and dim0 % multiple:
        out.fail(
            "packed-global-dim-multiple",
            f"globalDim[0]={dim0} is not a multiple of {multiple}, which "
            f"{args.dtype.cuda_name} requires (counted in individual U4/U6 values)",
            driver_source("globalDim"),
            global_dim0=dim0,
            required_multiple=multiple,
            dtype=args.dtype.name,
        )


def _check_global_strides(args: TensorMapArgs, out: _Collector) -> None:
    """globalStrides: multiple of 16 (32 when interleave 32B / packed ALIGN16B), < 2^40."""
    need, why = 16, "always"
    if args.interleave is Interleave.B32:
        need, why = 32, "interleave is CU_TENSOR_MAP_INTERLEAVE_32B"
    elif args.dtype in PACKED_ALIGN16_TYPES:
        need, why = 32, f"tensorDataType is {args.dtype.cuda_name}"
    for i, stride in enumerate(args.global_strides):
        if stride % need:
            lower, upper = stride - stride % need, stride - stride % need + need
            out.fail(
                "global-stride-alignment",
                f"globalStrides[{i}]={stride} bytes (dimension {i + 1}) is not a multiple of "
                f"{need} (needed because {why}); pad the row pitch to e.g. {upper} "
                f"(or {lower})",
                driver_source("globalStrides"),
                index=i,
                global_stride=stride,
                required_multiple=need,
                reason=why,
            )
        if not stride < GLOBAL_STRIDE_LIMIT:
            out.fail(
                "global-stride-range",
                f"globalStrides[{i}]={stride} bytes is not less than 2^40; strides must be "
                "below 2^40 bytes",
                driver_source("globalStrides"),
                index=i,
                global_stride=stride,
                limit=GLOBAL_STRIDE_LIMIT,
            )
    _note_stride_layout(args, out)


def _note_stride_layout(args: TensorMapArgs, out: _Collector) -> None:
    """The reference's layout pseudocode: each stride covers the previous dimension.

    The reference writes ``globalStrides[0] = globalDim[0] * elementSize + padding[0]`` and
    ``globalStrides[i] = globalStrides[i-1] * (globalDim[i] + padding[i])``, i.e. strides
    that do not overlap. It is given as a description (its literal ``assert`` even compares
    bytes with element counts), not as a numbered requirement, and whether the driver
    rejects overlapping strides is unverified, so a mismatch is a note, not a violation.
    """
    if len(args.global_dim) != args.rank or len(args.global_strides) != max(args.rank - 1, 0):
        return
    if args.rank < 2:
        return
    row = math.ceil(args.global_dim[0] * element_size_bits(args.dtype) / 8)
    if args.global_strides[0] < row:
        out.note(
            "global-stride-layout",
            f"globalStrides[0]={args.global_strides[0]} is smaller than globalDim[0] * "
            f"elementSize = {row} bytes, so rows overlap; the reference's layout assumes "
            "globalStrides[0] >= that (driver behaviour unverified)",
            driver_source("globalStrides (layout pseudocode)"),
            index=0,
            global_stride=args.global_strides[0],
            minimum=row,
        )
    for i in range(1, args.rank - 1):
        minimum = args.global_strides[i - 1] * args.global_dim[i]
        if args.global_strides[i] < minimum:
            out.note(
                "global-stride-layout",
                f"globalStrides[{i}]={args.global_strides[i]} is smaller than globalStrides"
                f"[{i - 1}] * globalDim[{i}] = {minimum}, so dimensions overlap; the reference's "
                "layout assumes it covers the previous dimension (driver behaviour unverified)",
                driver_source("globalStrides (layout pseudocode)"),
                index=i,
                global_stride=args.global_strides[i],
                minimum=minimum,
            )


def _check_box(args: TensorMapArgs, out: _Collector) -> None:
    """boxDim: each in 1..256; inner bytes a multiple of 16 when not interleaved."""
    for i, box in enumerate(args.box_dim):
        if not 1 <= box <= MAX_BOX_DIM:
            out.fail(
                "box-dim-range",
                f"boxDim[{i}]={box} is outside 1..{MAX_BOX_DIM}; each box dimension must be "
                f"non-zero and at most {MAX_BOX_DIM} elements (split the tile into several "
                "copies)",
                driver_source("boxDim"),
                index=i,
                box_dim=box,
                max=MAX_BOX_DIM,
            )
    if not args.box_dim:
        return
    box0 = args.box_dim[0]
    if args.interleave is Interleave.NONE:
        bits = inner_global_bits(args)
        if bits % 128:
            size_bits = element_size_bits(args.dtype)
            per16 = 128 // math.gcd(128, size_bits)
            out.fail(
                "inner-box-bytes-multiple-of-16",
                f"boxDim[0] * elementSize = {box0} * {size_bits / 8:g} = {bits / 8:g} bytes is "
                f"not a multiple of 16 bytes (interleave NONE); make boxDim[0] a multiple of "
                f"{per16} for {args.dtype.name}",
                driver_source("boxDim"),
                box_dim0=box0,
                element_bits=size_bits,
                inner_bytes=bits / 8,
                required_box_multiple=per16,
            )
    if args.dtype in PACKED_ALIGN16_TYPES and box0 != 128:
        out.fail(
            "packed-box-dim-inner",
            f"boxDim[0]={box0} but {args.dtype.cuda_name} requires boxDim[0] == 128",
            driver_source("boxDim"),
            box_dim0=box0,
            required=128,
            dtype=args.dtype.name,
        )


def _check_element_strides(args: TensorMapArgs, out: _Collector) -> None:
    """elementStrides: each in 1..8; dimension 0's is ignored when not interleaved."""
    for i, es in enumerate(args.element_strides):
        if not 1 <= es <= MAX_ELEMENT_STRIDE:
            out.fail(
                "element-stride-range",
                f"elementStrides[{i}]={es} is outside 1..{MAX_ELEMENT_STRIDE}; use a traversal "
                f"stride from 1 to {MAX_ELEMENT_STRIDE}",
                driver_source("elementStrides"),
                index=i,
                element_stride=es,
                max=MAX_ELEMENT_STRIDE,
            )
    if (
        args.interleave is Interleave.NONE
        and args.element_strides
        and args.element_strides[0] != 1
        and 1 <= args.element_strides[0] <= MAX_ELEMENT_STRIDE
    ):
        out.note(
            "element-stride-dim0-ignored",
            f"elementStrides[0]={args.element_strides[0]} is ignored with interleave NONE "
            "(the driver reference says TMA has no dimension-0 stride; PTX ISA says it must "
            "be 1): the box loads all boxDim[0] elements",
            f"{driver_source('elementStrides')}; {PTX_TILED_MODE}",
            element_stride0=args.element_strides[0],
        )
    for i, (box, es) in enumerate(zip(args.box_dim, args.element_strides, strict=False)):
        if i == 0 and args.interleave is Interleave.NONE:
            continue
        if es >= 1 and box >= 1 and box % es:
            out.note(
                "box-not-multiple-of-element-stride",
                f"boxDim[{i}]={box} is not a multiple of elementStrides[{i}]={es}: TMA loads "
                f"ceil({box}/{es}) = {math.ceil(box / es)} elements; to load N use boxDim = "
                "N * elementStride",
                driver_source("elementStrides"),
                index=i,
                box_dim=box,
                element_stride=es,
                loaded=math.ceil(box / es),
            )


def _check_swizzle(args: TensorMapArgs, out: _Collector) -> None:
    """Swizzle span, interleave/swizzle pairing, and the packed types' swizzle lists."""
    if args.interleave is Interleave.B32 and args.swizzle is not Swizzle.B32:
        out.fail(
            "interleave-32b-requires-swizzle-32b",
            f"interleave=CU_TENSOR_MAP_INTERLEAVE_32B requires swizzle=CU_TENSOR_MAP_SWIZZLE_32B "
            f"but swizzle={args.swizzle.cuda_name}",
            driver_source("swizzle"),
            interleave=args.interleave.name,
            swizzle=args.swizzle.name,
        )
    if (
        args.interleave is Interleave.NONE
        and args.swizzle is not Swizzle.NONE
        and args.box_dim
        and args.box_dim[0] >= 1
    ):
        span = args.swizzle.span_bytes
        inner = smem_bytes_for_inner(args.dtype, args.box_dim[0])
        if inner > span:
            size_bits = element_size_bits(args.dtype)
            max_box = span * 8 // size_bits if args.dtype not in PACKED_ALIGN16_TYPES else span
            out.fail(
                "swizzle-span",
                f"inner box span boxDim[0] * elementSize = {inner} bytes exceeds the "
                f"{span}-byte span of {args.swizzle.cuda_name}; use boxDim[0] <= {max_box} "
                f"for {args.dtype.name} or a wider swizzle",
                driver_source("interleave (bounding box inner dimension vs swizzle size)"),
                box_dim0=args.box_dim[0],
                inner_bytes=inner,
                swizzle=args.swizzle.name,
                span_bytes=span,
                max_box_dim0=max_box,
            )
    allowed = PACKED_SWIZZLES.get(args.dtype)
    if allowed is not None and args.swizzle not in allowed:
        names = ", ".join(s.cuda_name for s in sorted(allowed))
        out.fail(
            "packed-swizzle-mode",
            f"swizzle={args.swizzle.cuda_name} is not supported for {args.dtype.cuda_name}; "
            f"use one of {names}",
            driver_source("swizzle"),
            swizzle=args.swizzle.name,
            dtype=args.dtype.name,
            allowed=sorted(s.name for s in allowed),
        )
    if (
        args.dtype is TensorMapDataType.PACKED_16U6_ALIGN16B
        and args.swizzle is Swizzle.B128_ATOM_64B
    ):
        out.note(
            "packed-swizzle-direction",
            "CU_TENSOR_MAP_SWIZZLE_128B_ATOM_64B is supported for 16U6_ALIGN16B for stores "
            "only; a load through this descriptor is outside the documented support",
            driver_source("swizzle"),
            swizzle=args.swizzle.name,
            dtype=args.dtype.name,
            direction="store",
        )
    if args.dtype is TensorMapDataType.PACKED_16U4_ALIGN16B:
        out.note(
            "packed-swizzle-direction",
            "16U4_ALIGN16B descriptors are documented for loads only (every listed swizzle "
            "mode is 'Load only'); a store through this descriptor is outside the "
            "documented support",
            driver_source("swizzle"),
            swizzle=args.swizzle.name,
            dtype=args.dtype.name,
            direction="load",
        )


def _check_packed_interleave(args: TensorMapArgs, out: _Collector) -> None:
    """16U6_ALIGN16B requires interleave NONE."""
    if (
        args.dtype is TensorMapDataType.PACKED_16U6_ALIGN16B
        and args.interleave is not Interleave.NONE
    ):
        out.fail(
            "packed-16u6-requires-no-interleave",
            f"tensorDataType=CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B requires "
            f"CU_TENSOR_MAP_INTERLEAVE_NONE but interleave={args.interleave.cuda_name}",
            driver_source("interleave"),
            dtype=args.dtype.name,
            interleave=args.interleave.name,
        )


def _check_oob_fill(args: TensorMapArgs, out: _Collector) -> None:
    """NaN OOB fill only for floating-point, non-packed types."""
    if args.oob_fill is OobFill.NAN_REQUEST_ZERO_FMA and args.dtype not in FLOAT_TYPES:
        out.fail(
            "oob-fill-requires-float",
            f"oobFill=CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA needs a floating-point, "
            f"non-packed tensorDataType but it is {args.dtype.cuda_name}; use "
            "CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE",
            driver_source("oobFill"),
            oob_fill=args.oob_fill.name,
            dtype=args.dtype.name,
        )


#: The rule ids that are observed (``Violation.documented`` false), not documented.
OBSERVED_RULES: frozenset[str] = frozenset(
    {
        "rank1-null-strides",
        "interleaved-inner-box-bytes-multiple-of-16",
        "box-shared-memory-footprint",
        "packed-type-needs-sm100",
        "swizzle-atom-needs-sm100",
    }
)
ATOM_SWIZZLES: frozenset[Swizzle] = frozenset(
    {Swizzle.B128_ATOM_32B, Swizzle.B128_ATOM_32B_FLIP_8B, Swizzle.B128_ATOM_64B}
)


def _check_strides_pointer(args: TensorMapArgs, out: _Collector) -> None:
    """Observed: a rank-1 map with a NULL globalStrides is refused, whatever its size."""
    if args.global_strides_pointer == "null" and args.rank == 1:
        out.observed(
            "rank1-null-strides",
            "globalStrides is NULL for a rank-1 map: the reference says rank 1 reads no "
            "strides, but the driver refuses every such map (CUDA_ERROR_INVALID_VALUE); pass "
            "a one-entry array, e.g. {globalDim[0] * elementSize rounded up to 16}",
            "rank-1 probe: NULL refused for every length, a one-entry array accepted",
            rank=args.rank,
            global_strides_pointer=args.global_strides_pointer,
        )


def _check_interleaved_inner_box(args: TensorMapArgs, out: _Collector) -> None:
    """Observed: the 16-byte inner-box rule holds for the interleaved layouts too."""
    if args.interleave is Interleave.NONE or not args.box_dim or args.box_dim[0] < 1:
        return
    bits = inner_global_bits(args)
    if bits % 128:
        size_bits = element_size_bits(args.dtype)
        per16 = 128 // math.gcd(128, size_bits)
        out.observed(
            "interleaved-inner-box-bytes-multiple-of-16",
            f"boxDim[0] * elementSize = {args.box_dim[0]} * {size_bits / 8:g} = {bits / 8:g} "
            f"bytes is not a multiple of 16 bytes; the reference asks this only for interleave "
            f"NONE, but the driver also refuses it with {args.interleave.cuda_name}; make "
            f"boxDim[0] a multiple of {per16} for {args.dtype.name}",
            "1883 interleaved descriptors refused, none accepted with inner bytes % 16 != 0",
            box_dim0=args.box_dim[0],
            inner_bytes=bits / 8,
            interleave=args.interleave.name,
            required_box_multiple=per16,
        )


def _check_footprint(args: TensorMapArgs, out: _Collector, compute_capability: int | None) -> None:
    """Observed: the box must fit the shared memory per block (opt-in) of the device."""
    footprint = driver_box_footprint(args)
    if footprint is None or not all(1 <= b <= MAX_BOX_DIM for b in args.box_dim):
        return
    limit = shared_memory_limit(compute_capability)
    where = f"sm_{compute_capability}" if compute_capability is not None else "any TMA target"
    if footprint > limit:
        out.observed(
            "box-shared-memory-footprint",
            f"the box takes {footprint} bytes of shared memory (product of floor(boxDim / "
            f"elementStrides) * elementSize), more than the {limit} bytes per block of "
            f"{where}: the driver refuses it (CUDA_ERROR_INVALID_VALUE); shrink the box",
            "442 descriptors refused for this alone; accepted up to 228480, refused from "
            "236640 bytes; CCCL make_tma_descriptor checks the same against "
            "MAX_SHARED_MEMORY_PER_BLOCK_OPTIN",
            footprint_bytes=footprint,
            limit_bytes=limit,
            compute_capability=compute_capability,
        )
        return
    try:
        loaded = box_bytes(args)
    except ValueError:
        return
    if loaded > limit:
        out.observed_note(
            "box-footprint-undercounted",
            f"the driver sizes this box at {footprint} bytes (floor(boxDim / elementStrides)) "
            f"and accepts it, but a copy loads ceil(boxDim / elementStrides) elements: "
            f"{loaded} bytes, more than the {limit} bytes of shared memory of {where}",
            "accepted descriptors whose ceil-sized box exceeds shared memory",
            footprint_bytes=footprint,
            box_bytes=loaded,
            limit_bytes=limit,
        )


def _check_architecture(
    args: TensorMapArgs, out: _Collector, compute_capability: int | None
) -> None:
    """Observed on sm_90 (and CCCL): packed types and 128B_ATOM_* swizzles need sm_100+."""
    packed = args.dtype in PACKED_TYPES
    atom = args.swizzle in ATOM_SWIZZLES
    if compute_capability is None:
        if packed:
            out.observed_note(
                "packed-type-needs-cuda-12.8-sm100",
                f"{args.dtype.cuda_name} exists from CUDA 12.8 and needs compute capability "
                ">= 10.0 (refused on an H200); pass compute_capability to check it",
                "every packed descriptor refused on sm_90; CCCL make_tma_descriptor refuses "
                f"U4x16 on compute capability 9, {CCCL_TMA_SOURCE_URL}",
                dtype=args.dtype.name,
            )
        if atom:
            out.note(
                "swizzle-atom-needs-cuda-12.8-sm100",
                f"{args.swizzle.cuda_name} exists from CUDA 12.8 and, per CCCL's "
                "make_tma_descriptor docs, needs compute capability >= 10 (pass "
                "compute_capability to check it)",
                f"CCCL libcu++ cuda::make_tma_descriptor, tma_swizzle ({CCCL_TMA_URL})",
                swizzle=args.swizzle.name,
            )
        return
    if compute_capability >= SM100:
        return
    if packed:
        out.observed(
            "packed-type-needs-sm100",
            f"tensorDataType={args.dtype.cuda_name} needs compute capability >= 10.0, the "
            f"target is {compute_capability / 10:g}: the driver refuses it; use a byte type "
            "and unpack in the kernel",
            "1010 packed descriptors refused on sm_90, none accepted; CCCL refuses U4x16 on "
            "compute capability 9",
            dtype=args.dtype.name,
            compute_capability=compute_capability,
        )
    if atom:
        out.observed(
            "swizzle-atom-needs-sm100",
            f"swizzle={args.swizzle.cuda_name} needs compute capability >= 10.0, the target "
            f"is {compute_capability / 10:g}: the driver refuses it; use "
            "CU_TENSOR_MAP_SWIZZLE_128B",
            "1167 128B_ATOM_* descriptors refused on sm_90, none accepted; CCCL documents "
            "and checks compute capability >= 10",
            swizzle=args.swizzle.name,
            compute_capability=compute_capability,
        )


def _note_blackwell_known_issue(
    args: TensorMapArgs,
    out: _Collector,
    compute_capability: int | None,
    driver_cuda_version: int | None,
) -> None:
    """NVIDIA's known issue: Blackwell, driver <= CUDA 13.1, small non-dense tensors."""
    if compute_capability is None or compute_capability < SM100:
        return
    if (
        driver_cuda_version is not None
        and driver_cuda_version > BLACKWELL_BIT85_LAST_AFFECTED_DRIVER
    ):
        return
    extent = global_extent_bytes(args)
    if extent is None or extent >= BLACKWELL_BIT85_ALLOCATION_BYTES or is_dense(args):
        return
    driver = "unknown" if driver_cuda_version is None else str(driver_cuda_version)
    out.note(
        "blackwell-tma-bit85-known-issue",
        f"Blackwell (sm_{compute_capability}) with driver {driver} (<= 13010, CUDA 13.1, or "
        f"unknown): a tensor of {extent} bytes (< 128 KiB) that is not dense hits NVIDIA's "
        "known issue (release notes 595.71.05): the encoded descriptor may cause sporadic "
        "illegal memory accesses or MMU faults; clear bit 85 of the descriptor after "
        "encoding, as CUTLASS and Triton do (triton-lang/triton PR 9235)",
        BLACKWELL_KNOWN_ISSUE,
        extent_bytes=extent,
        compute_capability=compute_capability,
        driver_cuda_version=driver_cuda_version,
    )


def check(
    args: TensorMapArgs,
    *,
    compute_capability: int | None = None,
    driver_cuda_version: int | None = None,
) -> DescriptorCheck:
    """Check ``args`` against every requirement of ``cuTensorMapEncodeTiled`` the model knows.

    Never raises for bad values: every problem becomes a ``Violation`` so a reproducer can
    report all of them at once. ``DescriptorCheck.ok`` is false when any rule is broken, i.e. when a
    failure of the real call (``CUDA_ERROR_INVALID_VALUE``) or of the kernel using the
    descriptor is a violated limit rather than a bug: a documented requirement, or a rule the
    driver was observed to enforce (``Violation.documented`` false; see the module docstring).

    ``compute_capability`` (``major * 10 + minor``: 90, 100, 120) is the target; ``None``
    (the default) does not judge the architecture-dependent rules (packed types and
    ``128B_ATOM_*`` swizzles: notes instead) and sizes shared memory at the largest TMA
    target's. ``driver_cuda_version`` is ``cuDriverGetVersion``'s value (13010 for CUDA
    13.1; ``None``: unknown); with a Blackwell ``compute_capability`` it decides the
    ``blackwell-tma-bit85-known-issue`` note (a warning, never a violation).
    """
    if compute_capability is not None and (
        isinstance(compute_capability, bool) or not isinstance(compute_capability, int)
    ):
        raise TypeError(f"compute_capability must be an int or None, got {compute_capability!r}")
    out = _Collector()
    lengths_ok = _check_lengths(args, out)
    _check_rank(args, out)
    _check_address(args, out)
    _check_global_dims(args, out)
    _check_global_strides(args, out)
    _check_box(args, out)
    _check_element_strides(args, out)
    _check_swizzle(args, out)
    _check_packed_interleave(args, out)
    _check_oob_fill(args, out)
    # Observed rules after the documented ones: the first violation named is documented.
    _check_strides_pointer(args, out)
    _check_interleaved_inner_box(args, out)
    if lengths_ok:
        _check_footprint(args, out, compute_capability)
        _note_blackwell_known_issue(args, out, compute_capability, driver_cuda_version)
    _check_architecture(args, out, compute_capability)
    if not lengths_ok:
        # Layout notes compare arrays position by position; skip them when misaligned.
        out.verdict.notes = [n for n in out.verdict.notes if n.rule != "global-stride-layout"]
    return out.verdict


__all__ = [
    "ATOM_SWIZZLES",
    "OBSERVED_RULES",
    "check",
]
