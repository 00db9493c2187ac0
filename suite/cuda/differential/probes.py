"""The differential's probes: rank-1 lengths and strides, the controls (answers not in doubt),
the box sizes around the shared-memory footprint the driver checks, and the device's facts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from suite.cuda.differential.descriptors import (
    BASE_ADDRESS,
)
from suite.cuda.differential.records import (
    SUCCESS,
)
from suite.cuda.footprint import box_bytes, driver_box_footprint
from suite.cuda.model import (
    MAX_RANK,
    TensorMapArgs,
    TensorMapDataType,
    element_size_bits,
)

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
