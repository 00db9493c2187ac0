"""A pure-Python model of the argument checks of ``cuTensorMapEncodeTiled``: the descriptor.

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

This module holds what a descriptor is (the enums, :class:`TensorMapArgs`, the sizes a
box takes) and what a check concludes (:class:`Violation`, :class:`DescriptorCheck`); the rules
themselves and :func:`suite.cuda.rules.check` are in :mod:`suite.cuda.rules`. Reproducer
files import both through ``suite.tma_model``.

Two kinds of rules. *Documented* rules restate NVIDIA's reference
(``Violation.documented`` is true). *Observed* rules are what a real driver was seen to
enforce without the reference saying so (the H200 differential run of 2026-11-22,
``docs/tma-disagreements.md``); their ``documented`` is false and their ``source`` starts
with ``"observed: "``. Both make ``DescriptorCheck.ok`` false;
``DescriptorCheck.documented_ok`` looks at the documented ones only. Rules that depend on
the GPU (the packed types and the ``128B_ATOM_*`` swizzles need compute capability 10.0)
are judged only when ``check`` is given ``compute_capability``.

Conventions follow the driver, not PyTorch: ``global_dim`` and ``box_dim`` are
innermost-first, ``global_strides`` holds the ``rank - 1`` *byte* strides of
dimensions 1..rank-1 (dimension 0 is implicitly contiguous), and every enum's
integer value is the one in ``cuda.h``, so ``int(member)`` is what cuda-bindings'
enum of the same name takes (``driver.CUtensorMapDataType(int(args.dtype))``).

Stdlib only; importable on Python >= 3.10.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import IntEnum
from typing import TypedDict

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


def driver_source(bullet: str) -> str:
    """Cite one parameter bullet of the cuTensorMapEncodeTiled reference."""
    return f"{DRIVER_API}, requirement on {bullet}"


def observed_source(detail: str) -> str:
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
PACKED_SWIZZLES: dict[TensorMapDataType, frozenset[Swizzle]] = {
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
    """One broken rule (or, in ``DescriptorCheck.notes``, one documented caveat that applies).

    ``rule`` is a stable kebab-case id that reports and tests can match on; ``message``
    is one line naming the values that broke it and what would satisfy it; ``values``
    holds those values; ``source`` names the documentation section the rule comes from.
    ``documented`` is false for a rule NVIDIA's reference does not state but a real driver
    was seen to enforce; its ``source`` then starts with ``"observed: "`` and names the run.
    """

    rule: str
    message: str
    values: Mapping[str, object]
    source: str
    documented: bool = True

    def to_dict(self) -> ViolationJson:
        """A JSON-ready dict."""
        return {
            "rule": self.rule,
            "message": self.message,
            "values": dict(self.values),
            "source": self.source,
            "documented": self.documented,
        }


class ViolationJson(TypedDict):
    rule: str
    message: str
    values: dict[str, object]
    source: str
    documented: bool


class DescriptorCheckJson(TypedDict):
    ok: bool
    documented_ok: bool
    violations: list[ViolationJson]
    notes: list[ViolationJson]


@dataclass
class DescriptorCheck:
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

    def to_dict(self) -> DescriptorCheckJson:
        """A JSON-ready dict, ``ok`` included."""
        return {
            "ok": self.ok,
            "documented_ok": self.documented_ok,
            "violations": [v.to_dict() for v in self.violations],
            "notes": [n.to_dict() for n in self.notes],
        }


__all__ = [
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
    "PACKED_ALIGN16_TYPES",
    "PACKED_TYPES",
    "SM100",
    "DescriptorCheck",
    "Interleave",
    "L2Promotion",
    "OobFill",
    "Swizzle",
    "TensorMapArgs",
    "TensorMapDataType",
    "Violation",
    "element_size_bits",
    "shared_memory_limit",
]
