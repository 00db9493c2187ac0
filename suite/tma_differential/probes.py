"""The differential's probes: rank-1 lengths and strides, the controls (answers not in doubt),
the box sizes around the shared-memory footprint the driver checks, and the device's facts.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import NotRequired, TypedDict, cast

from suite.cuda.footprint import box_bytes, driver_box_footprint
from suite.cuda.model import (
    MAX_RANK,
    DescriptorCheck,
    TensorMapArgs,
    TensorMapDataType,
    element_size_bits,
)
from suite.tma_differential.descriptors import (
    BASE_ADDRESS,
)
from suite.tma_differential.records import (
    SUCCESS,
)

RANK1_PROBE_LENGTHS: dict[TensorMapDataType, tuple[int, ...]] = {
    TensorMapDataType.FLOAT32: (4096, 1 << 20, 1_000_004, 1_000_003, 1_000_002, 1_000_001),
    TensorMapDataType.UINT8: (1 << 20, 1_000_000, 1_000_008, 1_000_001),
    TensorMapDataType.FLOAT64: (1_000_002, 1_000_001),
}

RANK1_STRIDE_FORMS = ("padded", "bytes", "null")


class Rank1Probe(TypedDict):
    """One rank-1 probe (:func:`rank1_probe_cases`): its labels, descriptor and NULL choice."""

    dtype: str
    n: int
    bytes: int
    bytes_mod_16: int
    strides: str
    args: TensorMapArgs
    null_empty_arrays: bool


class Rank1Row(TypedDict):
    """A rank-1 probe's labels with the driver's and the model's answers (summary.json)."""

    dtype: str
    n: int
    bytes: int
    bytes_mod_16: int
    strides: str
    global_stride0: int | None
    driver: str
    model_ok: bool
    model_rules: list[str]


class Control(TypedDict):
    """A descriptor whose answer is not in doubt (:func:`controls`)."""

    name: str
    expect: str
    args: TensorMapArgs


class ControlRow(TypedDict):
    """A control and what the driver answered (summary.json)."""

    name: str
    expect: str
    driver: str
    ok: bool


class FootprintProbe(TypedDict):
    """A box around the footprint the driver checks (:func:`footprint_probe_cases`)."""

    kind: str
    bytes: int | None
    box: list[int]
    element_strides: NotRequired[list[int]]
    loaded_bytes: NotRequired[int]
    args: TensorMapArgs


class FootprintRow(TypedDict):
    """A footprint probe's labels with the driver's answer and the model's rules."""

    kind: str
    bytes: int | None
    box: list[int]
    element_strides: NotRequired[list[int]]
    loaded_bytes: NotRequired[int]
    driver: str
    model_rules: list[str]


class FootprintConclusions(TypedDict):
    """What the footprint scan shows (:func:`footprint_conclusions`), then the limits beside it."""

    scanned: int
    largest_accepted_bytes: int | None
    smallest_refused_bytes: int | None
    monotonic: bool
    quirks: dict[str, str]
    device_max_shared_memory_per_block_optin: NotRequired[int | None]
    model_limit: NotRequired[int | None]


class DeviceFacts(TypedDict, total=False):
    """Device 0's facts (:func:`device_facts`), each only when the driver answered."""

    cc_major: int
    cc_minor: int
    max_shared_memory_per_block_optin: int
    driver_version: int
    compute_capability: int


def rank1_probe_cases(base: int = BASE_ADDRESS) -> list[Rank1Probe]:
    """Each probe: label fields, the TensorMapArgs, and how empty arrays are passed.

    ``padded``: the documented call (no strides), passed as a one-entry array holding the byte
    size rounded up to 16; ``bytes``: one stride entry holding the byte size (Triton's form;
    the model reports array-length for it); ``null``: a NULL globalStrides (the model's
    ``global_strides_pointer="null"``, rule ``rank1-null-strides``).
    """
    cases: list[Rank1Probe] = []
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


def rank1_row(
    probe: Rank1Probe, global_stride0: int | None, driver: str, verdict: DescriptorCheck
) -> Rank1Row:
    """The probe's labels (in their order), then what the driver and the model answered."""
    return {
        "dtype": probe["dtype"],
        "n": probe["n"],
        "bytes": probe["bytes"],
        "bytes_mod_16": probe["bytes_mod_16"],
        "strides": probe["strides"],
        "global_stride0": global_stride0,
        "driver": driver,
        "model_ok": verdict.ok,
        "model_rules": verdict.rules,
    }


def rank1_conclusions(rows: Sequence[Rank1Row]) -> dict[str, str]:
    """What the probe says about the two suspects, in words."""

    def verdict(selected: list[Rank1Row]) -> str:
        results = {r["driver"] == SUCCESS for r in selected}
        if not selected:
            return "not tried"
        if results == {True}:
            return "accepted"
        if results == {False}:
            return "rejected"
        return "mixed"

    def pick(form: str, aligned: bool) -> list[Rank1Row]:
        return [r for r in rows if r["strides"] == form and (r["bytes_mod_16"] == 0) == aligned]

    return {
        "null globalStrides, size a multiple of 16": verdict(pick("null", True)),
        "null globalStrides, size not a multiple of 16": verdict(pick("null", False)),
        "padded globalStrides, size a multiple of 16": verdict(pick("padded", True)),
        "padded globalStrides, size not a multiple of 16": verdict(pick("padded", False)),
        "byte-size globalStrides, size a multiple of 16": verdict(pick("bytes", True)),
        "byte-size globalStrides, size not a multiple of 16": verdict(pick("bytes", False)),
    }


def controls(base: int = BASE_ADDRESS) -> list[Control]:
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


def footprint_probe_cases(base: int = BASE_ADDRESS) -> list[FootprintProbe]:
    """UINT8 boxes of every representable 16-byte step in [accepted, refused]; two quirks.

    Each tensor is the box itself (dense, so every other rule holds). The two "quirk" rows
    check the driver's floor(boxDim / elementStrides): a dimension whose box is below its
    element stride counts 0 (a 64 MiB box accepted), one at it counts 1 (refused).
    """
    u8 = TensorMapDataType.UINT8
    cases: list[FootprintProbe] = []
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


def footprint_row(probe: FootprintProbe, driver: str, verdict: DescriptorCheck) -> FootprintRow:
    """The probe's labels (in their order), then the driver's answer and the model's rules."""
    labels = {name: value for name, value in probe.items() if name != "args"}
    return cast(FootprintRow, {**labels, "driver": driver, "model_rules": verdict.rules})


def footprint_conclusions(rows: Sequence[FootprintRow]) -> FootprintConclusions:
    """The largest accepted and smallest refused scanned size, and whether that is a cut."""
    scan = [r for r in rows if r["kind"] == "scan"]
    sized = [(n, r["driver"]) for r in scan if (n := r["bytes"]) is not None]  # every scan row
    accepted = [n for n, driver in sized if driver == SUCCESS]
    refused = [n for n, driver in sized if driver != SUCCESS]
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


def device_facts() -> DeviceFacts:
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

        def attribute(name: str) -> int | None:
            kind = getattr(driver.CUdevice_attribute, f"CU_DEVICE_ATTRIBUTE_{name}")
            err, value = driver.cuDeviceGetAttribute(kind, device)
            return int(value) if err == ok else None

        facts: DeviceFacts = {}
        major = attribute("COMPUTE_CAPABILITY_MAJOR")
        minor = attribute("COMPUTE_CAPABILITY_MINOR")
        optin = attribute("MAX_SHARED_MEMORY_PER_BLOCK_OPTIN")
        if major is not None:
            facts["cc_major"] = major
        if minor is not None:
            facts["cc_minor"] = minor
        if optin is not None:
            facts["max_shared_memory_per_block_optin"] = optin
        err, version = driver.cuDriverGetVersion()
        if err == ok:
            facts["driver_version"] = int(version)
        if major is not None and minor is not None:
            facts["compute_capability"] = major * 10 + minor
        return facts
    except Exception:  # any failure only means "no target"
        return {}
