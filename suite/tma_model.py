"""A pure-Python model of the argument checks of ``cuTensorMapEncodeTiled``.

Why this exists: a TMA reproducer that crashes, hangs or returns wrong data is
only a *bug* if the descriptor it built was legal. NVIDIA documents what the
driver accepts in the reference for ``cuTensorMapEncodeTiled`` (CUDA Driver
API, section "Tensor Map Object Management"); this module restates each of
those documented requirements as a named rule so that the suite can say, with
no GPU and no driver, "this descriptor breaks rule X of the documentation"
(a violated documented limit) rather than "this is a driver/compiler bug".

What it is not: it is not the driver. The driver may reject things the
documentation does not mention and may accept some things the documentation
forbids; every rule here is only as good as its cited source. See
``docs/tma-descriptor-model.md`` for the source of each rule and what is still
unverified against real hardware.

Two kinds of rules. *Documented* rules restate NVIDIA's reference
(``Violation.documented`` is true). *Observed* rules are what a real driver was seen to
enforce without the reference saying so (the H200 differential run of 2026-11-22,
``docs/tma-disagreements.md``); their ``documented`` is false and their ``source`` starts
with ``"observed: "``. Both make ``Verdict.ok`` false; ``Verdict.documented_ok`` looks at
the documented ones only. Rules that depend on the GPU (the packed types and the
``128B_ATOM_*`` swizzles need compute capability 10.0) are judged only when ``check`` is
given ``compute_capability``.

Conventions follow the driver, not PyTorch: ``global_dim`` and ``box_dim`` are
innermost-first, ``global_strides`` holds the ``rank - 1`` *byte* strides of
dimensions 1..rank-1 (dimension 0 is implicitly contiguous), and every enum's
integer value is the one in ``cuda.h``, so ``int(member)`` is what cuda-bindings'
enum of the same name takes (``driver.CUtensorMapDataType(int(args.dtype))``).

Stdlib only; importable on Python >= 3.10.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import IntEnum
from typing import Any

# --------------------------------------------------------------------------------------------
# Sources. Every rule cites one of these plus the parameter bullet it comes from.
# --------------------------------------------------------------------------------------------

DRIVER_API_URL = "https://docs.nvidia.com/cuda/cuda-driver-api/group__CUDA__TENSOR__MEMORY.html"
DRIVER_API = (
    f"CUDA Driver API, 6.30 Tensor Map Object Management, cuTensorMapEncodeTiled ({DRIVER_API_URL})"
)
PTX_ISA_URL = "https://docs.nvidia.com/cuda/parallel-thread-execution/index.html"
PTX_TILED_MODE = f"PTX ISA, 5.5.3 Tiled Mode, 5.5.3.2 Traversal-Stride ({PTX_ISA_URL})"
PTX_SUB_BYTE = (
    "PTX ISA, 5.5.1.1.1 Padding and alignment of the sub-byte types "
    f"({PTX_ISA_URL}#tensor-dimension-size-format-sub-bytes-padding-align)"
)
CCCL_TMA_URL = "https://nvidia.github.io/cccl/libcudacxx/extended_api/tma/make_tma_descriptor.html"
MODEL_ONLY = "tma_model consistency check (Python arrays must match rank; not a driver rule)"
#: Every observed rule's source starts with this: the run that showed the driver enforcing it.
OBSERVED_H200 = "observed: H200 driver 580.159.04, differential run 2026-11-22"
CCCL_TMA_SOURCE_URL = (
    "https://github.com/NVIDIA/cccl/blob/main/libcudacxx/include/cuda/__tma/make_tma_descriptor.h"
)
BLACKWELL_KNOWN_ISSUE_URL = (
    "https://docs.nvidia.com/datacenter/tesla/tesla-release-notes-595-71-05/index.html#known-issues"
)
BLACKWELL_KNOWN_ISSUE = (
    "NVIDIA data center driver release notes 595.71.05, Known Issues: cuTensorMapEncodeTiled on "
    "Blackwell, backing allocation under 128 KB and not a dense non-overlapping tensor "
    f"({BLACKWELL_KNOWN_ISSUE_URL}); workaround: clear bit 85 of the descriptor, as CUTLASS "
    "(commit b7ecaa6) and Triton (triton-lang/triton PR 9235) do"
)


def _driver(bullet: str) -> str:
    """Cite one parameter bullet of the cuTensorMapEncodeTiled reference."""
    return f"{DRIVER_API}, requirement on {bullet}"


def _observed(detail: str) -> str:
    """Cite the differential run that showed the driver enforcing an undocumented rule."""
    return f"{OBSERVED_H200} ({detail}; docs/tma-disagreements.md)"


# --------------------------------------------------------------------------------------------
# Enums. Values are the cuda.h values (each enum counts up from 0 in declaration order).
# --------------------------------------------------------------------------------------------


_CUDA_SUFFIX_OVERRIDES: dict[str, str] = {
    "PACKED_16U4_ALIGN8B": "16U4_ALIGN8B",
    "PACKED_16U4_ALIGN16B": "16U4_ALIGN16B",
    "PACKED_16U6_ALIGN16B": "16U6_ALIGN16B",
    "B16": "16B",
    "B32": "32B",
    "B64": "64B",
    "B128": "128B",
    "B128_ATOM_32B": "128B_ATOM_32B",
    "B128_ATOM_32B_FLIP_8B": "128B_ATOM_32B_FLIP_8B",
    "B128_ATOM_64B": "128B_ATOM_64B",
}


class TensorMapDataType(IntEnum):
    """``CUtensorMapDataType``. The three packed sub-byte types were added in CUDA 12.8."""

    UINT8 = 0
    UINT16 = 1
    UINT32 = 2
    INT32 = 3
    UINT64 = 4
    INT64 = 5
    FLOAT16 = 6
    FLOAT32 = 7
    FLOAT64 = 8
    BFLOAT16 = 9
    FLOAT32_FTZ = 10
    TFLOAT32 = 11
    TFLOAT32_FTZ = 12
    PACKED_16U4_ALIGN8B = 13
    PACKED_16U4_ALIGN16B = 14
    PACKED_16U6_ALIGN16B = 15

    @property
    def cuda_name(self) -> str:
        """The ``cuda.h`` enumerator name, e.g. ``CU_TENSOR_MAP_DATA_TYPE_FLOAT32``."""
        return "CU_TENSOR_MAP_DATA_TYPE_" + _CUDA_SUFFIX_OVERRIDES.get(self.name, self.name)


class Interleave(IntEnum):
    """``CUtensorMapInterleave``: NC/8HWC8 (16B) and NC/16HWC16 (32B) channel slices."""

    NONE = 0
    B16 = 1
    B32 = 2

    @property
    def cuda_name(self) -> str:
        """The ``cuda.h`` enumerator name, e.g. ``CU_TENSOR_MAP_INTERLEAVE_32B``."""
        return "CU_TENSOR_MAP_INTERLEAVE_" + _CUDA_SUFFIX_OVERRIDES.get(self.name, self.name)


class Swizzle(IntEnum):
    """``CUtensorMapSwizzle``. The ``128B_ATOM_*`` variants were added in CUDA 12.8."""

    NONE = 0
    B32 = 1
    B64 = 2
    B128 = 3
    B128_ATOM_32B = 4
    B128_ATOM_32B_FLIP_8B = 5
    B128_ATOM_64B = 6

    @property
    def cuda_name(self) -> str:
        """The ``cuda.h`` enumerator name, e.g. ``CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B``."""
        return "CU_TENSOR_MAP_SWIZZLE_" + _CUDA_SUFFIX_OVERRIDES.get(self.name, self.name)

    @property
    def span_bytes(self) -> int:
        """The swizzle span: the most bytes the box's inner dimension may cover (0 = none).

        All four ``128B*`` modes swizzle within a 128-byte span; they differ only in
        the size of the chunk kept intact (16, 32 or 64 bytes).
        """
        return _SWIZZLE_SPAN[self]


_SWIZZLE_SPAN: dict[Swizzle, int] = {
    Swizzle.NONE: 0,
    Swizzle.B32: 32,
    Swizzle.B64: 64,
    Swizzle.B128: 128,
    Swizzle.B128_ATOM_32B: 128,
    Swizzle.B128_ATOM_32B_FLIP_8B: 128,
    Swizzle.B128_ATOM_64B: 128,
}


class L2Promotion(IntEnum):
    """``CUtensorMapL2promotion``: L2 fill granularity. No documented constraints."""

    NONE = 0
    L2_64B = 1
    L2_128B = 2
    L2_256B = 3

    @property
    def cuda_name(self) -> str:
        """The ``cuda.h`` enumerator name, e.g. ``CU_TENSOR_MAP_L2_PROMOTION_L2_128B``."""
        return "CU_TENSOR_MAP_L2_PROMOTION_" + self.name


class OobFill(IntEnum):
    """``CUtensorMapFloatOOBfill``: zero fill, or the special OOB-NaN (floating types only)."""

    NONE = 0
    NAN_REQUEST_ZERO_FMA = 1

    @property
    def cuda_name(self) -> str:
        """The ``cuda.h`` enumerator name, e.g. ``CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE``."""
        return "CU_TENSOR_MAP_FLOAT_OOB_FILL_" + self.name


# --------------------------------------------------------------------------------------------
# Element sizes.
# --------------------------------------------------------------------------------------------

_ELEMENT_BITS: dict[TensorMapDataType, int] = {
    TensorMapDataType.UINT8: 8,
    TensorMapDataType.UINT16: 16,
    TensorMapDataType.UINT32: 32,
    TensorMapDataType.INT32: 32,
    TensorMapDataType.UINT64: 64,
    TensorMapDataType.INT64: 64,
    TensorMapDataType.FLOAT16: 16,
    TensorMapDataType.FLOAT32: 32,
    TensorMapDataType.FLOAT64: 64,
    TensorMapDataType.BFLOAT16: 16,
    TensorMapDataType.FLOAT32_FTZ: 32,
    TensorMapDataType.TFLOAT32: 32,
    TensorMapDataType.TFLOAT32_FTZ: 32,
    TensorMapDataType.PACKED_16U4_ALIGN8B: 4,
    TensorMapDataType.PACKED_16U4_ALIGN16B: 4,
    TensorMapDataType.PACKED_16U6_ALIGN16B: 6,
}

#: Types for which CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA is documented as allowed.
FLOAT_TYPES: frozenset[TensorMapDataType] = frozenset(
    {
        TensorMapDataType.FLOAT16,
        TensorMapDataType.FLOAT32,
        TensorMapDataType.FLOAT64,
        TensorMapDataType.BFLOAT16,
        TensorMapDataType.FLOAT32_FTZ,
        TensorMapDataType.TFLOAT32,
        TensorMapDataType.TFLOAT32_FTZ,
    }
)
#: The packed sub-byte types (16 values of 4 or 6 bits per group).
PACKED_TYPES: frozenset[TensorMapDataType] = frozenset(
    {
        TensorMapDataType.PACKED_16U4_ALIGN8B,
        TensorMapDataType.PACKED_16U4_ALIGN16B,
        TensorMapDataType.PACKED_16U6_ALIGN16B,
    }
)
#: Packed types whose 16-value groups are padded to 16 bytes in shared memory.
PACKED_ALIGN16_TYPES: frozenset[TensorMapDataType] = frozenset(
    {TensorMapDataType.PACKED_16U4_ALIGN16B, TensorMapDataType.PACKED_16U6_ALIGN16B}
)

#: Swizzle modes the driver reference lists as supported for each ALIGN16B packed type.
_PACKED_SWIZZLES: dict[TensorMapDataType, frozenset[Swizzle]] = {
    TensorMapDataType.PACKED_16U6_ALIGN16B: frozenset(
        {Swizzle.NONE, Swizzle.B128, Swizzle.B128_ATOM_32B, Swizzle.B128_ATOM_64B}
    ),
    TensorMapDataType.PACKED_16U4_ALIGN16B: frozenset(
        {Swizzle.NONE, Swizzle.B128, Swizzle.B128_ATOM_32B}
    ),
}

MAX_RANK = 5
MAX_GLOBAL_DIM = 2**32  # inclusive
GLOBAL_STRIDE_LIMIT = 2**40  # exclusive
MAX_BOX_DIM = 256  # inclusive
MAX_ELEMENT_STRIDE = 8  # inclusive
#: How ``globalStrides`` reaches the driver: a pointer to an array, or NULL (rank 1 only).
GLOBAL_STRIDES_POINTERS = ("array", "null")
#: The largest shared memory per block (opt-in) of any TMA-capable target: 227 KiB on
#: sm_90, sm_100, sm_103 and sm_110 (``suite.toolchain.limits``). A box whose footprint is larger is
#: refused by the H200's driver (``box-shared-memory-footprint``).
MAX_SHARED_MEMORY_OPTIN = 227 * 1024
#: First compute capability with the packed sub-byte types and the 128B_ATOM_* swizzles.
SM100 = 100
#: The Blackwell descriptor known issue: allocations under this many bytes ...
BLACKWELL_BIT85_ALLOCATION_BYTES = 128 * 1024
#: ... with a driver at or below this ``cuDriverGetVersion`` value (CUDA 13.1).
BLACKWELL_BIT85_LAST_AFFECTED_DRIVER = 13010


def shared_memory_limit(compute_capability: int | None) -> int:
    """Shared memory per block (opt-in) of the target, in bytes.

    ``None`` or a compute capability without a row in ``suite.toolchain.limits`` gives the largest
    value of any TMA-capable target (:data:`MAX_SHARED_MEMORY_OPTIN`): a box over it fits
    no GPU's shared memory.
    """
    if compute_capability is None:
        return MAX_SHARED_MEMORY_OPTIN
    from suite.toolchain.limits import TARGETS

    for target in TARGETS.values():
        if target.arch == compute_capability:
            return target.shared_bytes
    return MAX_SHARED_MEMORY_OPTIN


def element_size_bits(dtype: TensorMapDataType) -> int:
    """Bits one element occupies in *global* memory (4 or 6 for the packed types).

    The packed types are stored contiguously in global memory (PTX ISA 5.5.1.1.1),
    which is why ``globalDim`` counts individual 4/6-bit values for them.
    """
    return _ELEMENT_BITS[TensorMapDataType(dtype)]


def _inner_global_bits(args: TensorMapArgs) -> int:
    """Bits ``boxDim[0]`` elements cover in global memory (``boxDim[0] * elementSize``)."""
    return args.box_dim[0] * element_size_bits(args.dtype)


def _smem_bytes_for_inner(dtype: TensorMapDataType, count: int) -> int:
    """Bytes ``count`` consecutive dimension-0 elements take in shared memory.

    Ordinary types: ``count * size``. Packed types (PTX ISA 5.5.1.1.1): 16U4_ALIGN8B is
    copied as is (16 values in 8 bytes); 16U4_ALIGN16B and 16U6_ALIGN16B each expand a
    group of 16 values to 16 bytes in shared memory (8 or 4 bytes of padding appended).
    """
    if dtype in PACKED_ALIGN16_TYPES:
        return math.ceil(count / 16) * 16
    return math.ceil(count * element_size_bits(dtype) / 8)


# --------------------------------------------------------------------------------------------
# Arguments, violations, verdict.
# --------------------------------------------------------------------------------------------


def _int_tuple(name: str, value: Iterable[int]) -> tuple[int, ...]:
    try:
        items = tuple(value)
    except TypeError as exc:
        raise TypeError(f"{name} must be a sequence of ints, got {value!r}") from exc
    for item in items:
        if isinstance(item, bool) or not isinstance(item, int):
            raise TypeError(f"{name} must hold ints, got {item!r} in {items!r}")
    return items


@dataclass(frozen=True)
class TensorMapArgs:
    """The full argument set of ``cuTensorMapEncodeTiled`` (minus the output pointer).

    Arrays are innermost-first, exactly as the driver reads them: ``global_dim[0]`` is
    the contiguous dimension; ``global_strides[i]`` is the byte stride of dimension
    ``i + 1`` (there are ``rank - 1`` of them). Lists are accepted and stored as tuples;
    plain ints are accepted for the enum fields and converted (an unknown value raises
    ``ValueError``, as it names no ``cuda.h`` enumerator).

    ``global_address`` is an int so alignment can be checked without a GPU; the model
    does not look at whether the address is null or mapped.

    ``global_strides_pointer`` says how the strides reach the driver: ``"array"`` (a
    pointer to ``global_strides``; for rank 1, a pointer to an array the driver reads none
    of, e.g. a one-entry array as Triton and CCCL pass) or ``"null"`` (a NULL pointer;
    ``global_strides`` must then be empty). The reference says rank 1 reads no strides, yet
    the H200 driver refuses every rank-1 map with NULL (``rank1-null-strides``).
    """

    dtype: TensorMapDataType
    rank: int
    global_address: int
    global_dim: tuple[int, ...]
    global_strides: tuple[int, ...]
    box_dim: tuple[int, ...]
    element_strides: tuple[int, ...]
    interleave: Interleave = Interleave.NONE
    swizzle: Swizzle = Swizzle.NONE
    l2_promotion: L2Promotion = L2Promotion.NONE
    oob_fill: OobFill = OobFill.NONE
    global_strides_pointer: str = "array"

    def __post_init__(self) -> None:
        set_ = object.__setattr__
        set_(self, "dtype", TensorMapDataType(self.dtype))
        set_(self, "interleave", Interleave(self.interleave))
        set_(self, "swizzle", Swizzle(self.swizzle))
        set_(self, "l2_promotion", L2Promotion(self.l2_promotion))
        set_(self, "oob_fill", OobFill(self.oob_fill))
        for name in ("global_dim", "global_strides", "box_dim", "element_strides"):
            set_(self, name, _int_tuple(name, getattr(self, name)))
        for name in ("rank", "global_address"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int):
                raise TypeError(f"{name} must be an int, got {value!r}")
        if self.global_strides_pointer not in GLOBAL_STRIDES_POINTERS:
            raise ValueError(
                f"global_strides_pointer must be one of {GLOBAL_STRIDES_POINTERS}, got "
                f"{self.global_strides_pointer!r}"
            )
        if self.global_strides_pointer == "null" and self.global_strides:
            raise ValueError(
                f"global_strides_pointer='null' passes no strides, but global_strides is "
                f"{self.global_strides!r}"
            )

    @classmethod
    def contiguous(
        cls,
        dtype: TensorMapDataType,
        global_dim: Iterable[int],
        box_dim: Iterable[int],
        *,
        global_address: int = 0,
        element_strides: Iterable[int] | None = None,
        interleave: Interleave = Interleave.NONE,
        swizzle: Swizzle = Swizzle.NONE,
        l2_promotion: L2Promotion = L2Promotion.NONE,
        oob_fill: OobFill = OobFill.NONE,
    ) -> TensorMapArgs:
        """Arguments for a densely packed tensor (no padding), innermost dimension first.

        ``global_strides`` are derived as the driver reference's layout pseudocode does
        with zero padding: ``stride[0] = dim[0] * elementSize``, ``stride[i] =
        stride[i-1] * dim[i]``. ``element_strides`` default to all ones. The default
        ``global_address`` of 0 only stands for "suitably aligned".
        """
        dims = _int_tuple("global_dim", global_dim)
        box = _int_tuple("box_dim", box_dim)
        strides: list[int] = []
        if dims:
            running = math.ceil(dims[0] * element_size_bits(dtype) / 8)
            for dim in dims[1:]:
                strides.append(running)
                running *= dim
        es = (1,) * len(dims) if element_strides is None else tuple(element_strides)
        return cls(
            dtype=dtype,
            rank=len(dims),
            global_address=global_address,
            global_dim=dims,
            global_strides=tuple(strides),
            box_dim=box,
            element_strides=es,
            interleave=interleave,
            swizzle=swizzle,
            l2_promotion=l2_promotion,
            oob_fill=oob_fill,
        )


@dataclass(frozen=True)
class Violation:
    """One broken rule (or, in ``Verdict.notes``, one documented caveat that applies).

    ``rule`` is a stable kebab-case id that reports and tests can match on; ``message``
    is one line naming the values that broke it and what would satisfy it; ``values``
    holds those values; ``source`` names the documentation section the rule comes from.
    ``documented`` is false for a rule NVIDIA's reference does not state but a real driver
    was seen to enforce; its ``source`` then starts with ``"observed: "`` and names the run.
    """

    rule: str
    message: str
    values: dict[str, Any]
    source: str
    documented: bool = True

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict."""
        return {
            "rule": self.rule,
            "message": self.message,
            "values": dict(self.values),
            "source": self.source,
            "documented": self.documented,
        }


@dataclass
class Verdict:
    """What ``check`` concluded.

    ``ok`` is true exactly when there are no ``violations``: the arguments satisfy every
    documented requirement the model knows. ``notes`` carries documented caveats that do
    not by themselves make the driver reject the call (an ignored element stride, a
    store-only swizzle mode, a layout the reference describes but does not spell out as
    a requirement); they never change ``ok``.
    """

    violations: list[Violation] = field(default_factory=list)
    notes: list[Violation] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """True when no rule is violated, documented or observed."""
        return not self.violations

    @property
    def documented_ok(self) -> bool:
        """True when no documented requirement is violated (observed rules ignored)."""
        return not any(v.documented for v in self.violations)

    @property
    def documented_rules(self) -> list[str]:
        """The ids of the violated documented rules, in check order, without duplicates."""
        return list(dict.fromkeys(v.rule for v in self.violations if v.documented))

    @property
    def rules(self) -> list[str]:
        """The ids of the violated rules, in check order, without duplicates."""
        return list(dict.fromkeys(v.rule for v in self.violations))

    def has(self, rule: str) -> bool:
        """Whether ``rule`` is among the violations."""
        return any(v.rule == rule for v in self.violations)

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict, ``ok`` included."""
        return {
            "ok": self.ok,
            "documented_ok": self.documented_ok,
            "violations": [v.to_dict() for v in self.violations],
            "notes": [n.to_dict() for n in self.notes],
        }


# --------------------------------------------------------------------------------------------
# The rules.
# --------------------------------------------------------------------------------------------


class _Collector:
    """Accumulates violations and notes for one ``check`` call."""

    def __init__(self) -> None:
        self.verdict = Verdict()

    def fail(self, rule: str, message: str, source: str, **values: Any) -> None:
        self.verdict.violations.append(Violation(rule, message, values, source))

    def note(self, rule: str, message: str, source: str, **values: Any) -> None:
        self.verdict.notes.append(Violation(rule, message, values, source))

    def observed(self, rule: str, message: str, detail: str, **values: Any) -> None:
        """A violation of a rule the driver was seen to enforce, undocumented."""
        self.verdict.violations.append(
            Violation(rule, message, values, _observed(detail), documented=False)
        )

    def observed_note(self, rule: str, message: str, detail: str, **values: Any) -> None:
        self.verdict.notes.append(
            Violation(rule, message, values, _observed(detail), documented=False)
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
            _driver("tensorRank"),
            rank=args.rank,
        )
    if args.interleave is not Interleave.NONE and args.rank < 3:
        out.fail(
            "interleave-requires-rank-3",
            f"interleave={args.interleave.cuda_name} needs tensorRank >= 3 but rank={args.rank}; "
            "use rank 3..5 or CU_TENSOR_MAP_INTERLEAVE_NONE",
            _driver("tensorRank"),
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
            _driver("globalAddress"),
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
                _driver("globalDim"),
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
            _driver("globalDim"),
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
                _driver("globalStrides"),
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
                _driver("globalStrides"),
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
            _driver("globalStrides (layout pseudocode)"),
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
                _driver("globalStrides (layout pseudocode)"),
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
                _driver("boxDim"),
                index=i,
                box_dim=box,
                max=MAX_BOX_DIM,
            )
    if not args.box_dim:
        return
    box0 = args.box_dim[0]
    if args.interleave is Interleave.NONE:
        bits = _inner_global_bits(args)
        if bits % 128:
            size_bits = element_size_bits(args.dtype)
            per16 = 128 // math.gcd(128, size_bits)
            out.fail(
                "inner-box-bytes-multiple-of-16",
                f"boxDim[0] * elementSize = {box0} * {size_bits / 8:g} = {bits / 8:g} bytes is "
                f"not a multiple of 16 bytes (interleave NONE); make boxDim[0] a multiple of "
                f"{per16} for {args.dtype.name}",
                _driver("boxDim"),
                box_dim0=box0,
                element_bits=size_bits,
                inner_bytes=bits / 8,
                required_box_multiple=per16,
            )
    if args.dtype in PACKED_ALIGN16_TYPES and box0 != 128:
        out.fail(
            "packed-box-dim-inner",
            f"boxDim[0]={box0} but {args.dtype.cuda_name} requires boxDim[0] == 128",
            _driver("boxDim"),
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
                _driver("elementStrides"),
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
            f"{_driver('elementStrides')}; {PTX_TILED_MODE}",
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
                _driver("elementStrides"),
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
            _driver("swizzle"),
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
        inner = _smem_bytes_for_inner(args.dtype, args.box_dim[0])
        if inner > span:
            size_bits = element_size_bits(args.dtype)
            max_box = span * 8 // size_bits if args.dtype not in PACKED_ALIGN16_TYPES else span
            out.fail(
                "swizzle-span",
                f"inner box span boxDim[0] * elementSize = {inner} bytes exceeds the "
                f"{span}-byte span of {args.swizzle.cuda_name}; use boxDim[0] <= {max_box} "
                f"for {args.dtype.name} or a wider swizzle",
                _driver("interleave (bounding box inner dimension vs swizzle size)"),
                box_dim0=args.box_dim[0],
                inner_bytes=inner,
                swizzle=args.swizzle.name,
                span_bytes=span,
                max_box_dim0=max_box,
            )
    allowed = _PACKED_SWIZZLES.get(args.dtype)
    if allowed is not None and args.swizzle not in allowed:
        names = ", ".join(s.cuda_name for s in sorted(allowed))
        out.fail(
            "packed-swizzle-mode",
            f"swizzle={args.swizzle.cuda_name} is not supported for {args.dtype.cuda_name}; "
            f"use one of {names}",
            _driver("swizzle"),
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
            _driver("swizzle"),
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
            _driver("swizzle"),
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
            _driver("interleave"),
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
            _driver("oobFill"),
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
    bits = _inner_global_bits(args)
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
    return _smem_bytes_for_inner(args.dtype, counts[0]) * math.prod(counts[1:])


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
) -> Verdict:
    """Check ``args`` against every requirement of ``cuTensorMapEncodeTiled`` the model knows.

    Never raises for bad values: every problem becomes a ``Violation`` so a reproducer can
    report all of them at once. ``Verdict.ok`` is false when any rule is broken, i.e. when a
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
    inner = _smem_bytes_for_inner(args.dtype, counts[0])
    return inner * math.prod(counts[1:])


__all__ = [
    "ATOM_SWIZZLES",
    "BLACKWELL_BIT85_ALLOCATION_BYTES",
    "BLACKWELL_BIT85_LAST_AFFECTED_DRIVER",
    "DRIVER_API",
    "DRIVER_API_URL",
    "FLOAT_TYPES",
    "GLOBAL_STRIDES_POINTERS",
    "GLOBAL_STRIDE_LIMIT",
    "MAX_BOX_DIM",
    "MAX_ELEMENT_STRIDE",
    "MAX_GLOBAL_DIM",
    "MAX_RANK",
    "MAX_SHARED_MEMORY_OPTIN",
    "OBSERVED_H200",
    "OBSERVED_RULES",
    "PACKED_ALIGN16_TYPES",
    "PACKED_TYPES",
    "SM100",
    "Interleave",
    "L2Promotion",
    "OobFill",
    "Swizzle",
    "TensorMapArgs",
    "TensorMapDataType",
    "Verdict",
    "Violation",
    "box_bytes",
    "box_elements",
    "check",
    "driver_box_footprint",
    "element_size_bits",
    "global_extent_bytes",
    "is_dense",
    "shared_memory_limit",
]
