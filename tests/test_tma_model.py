"""Tests for suite.tma_model: every rule at its boundary, plus the seed-document cases.

Each rule gets a passing case exactly at its limit and a failing case one step past it,
so a wrong inequality (< vs <=) or a wrong constant shows up as a failure.
"""

from __future__ import annotations

import dataclasses

import pytest

from suite.tma_model import (
    GLOBAL_STRIDE_LIMIT,
    MAX_GLOBAL_DIM,
    MAX_SHARED_MEMORY_OPTIN,
    OBSERVED_RULES,
    DescriptorCheck,
    Interleave,
    L2Promotion,
    OobFill,
    Swizzle,
    TensorMapArgs,
    TensorMapDataType,
    box_bytes,
    box_elements,
    check,
    driver_box_footprint,
    element_size_bits,
    global_extent_bytes,
    is_dense,
    shared_memory_limit,
)

DT = TensorMapDataType
F16 = DT.FLOAT16
F32 = DT.FLOAT32
U4_8 = DT.PACKED_16U4_ALIGN8B
U4_16 = DT.PACKED_16U4_ALIGN16B
U6_16 = DT.PACKED_16U6_ALIGN16B


def args2d(
    dtype: TensorMapDataType = F32, box: tuple[int, int] = (32, 128), **kw: object
) -> TensorMapArgs:
    """A legal 2D descriptor over a 1024 x 1024 tensor, with overrides."""
    base = TensorMapArgs.contiguous(dtype, (1024, 1024), box, global_address=0x10000)
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


def args3d(**kw: object) -> TensorMapArgs:
    """A legal 3D fp16 descriptor (interleave-capable rank), with overrides."""
    base = TensorMapArgs.contiguous(F16, (64, 32, 32), (16, 8, 8), global_address=0x10000)
    return dataclasses.replace(base, **kw)  # type: ignore[arg-type]


def rules(args: TensorMapArgs) -> list[str]:
    return check(args).rules


def note_rules(v: DescriptorCheck) -> list[str]:
    return [n.rule for n in v.notes]


def assert_ok(args: TensorMapArgs) -> None:
    v = check(args)
    assert v.ok, [x.message for x in v.violations]


def assert_only(args: TensorMapArgs, rule: str) -> None:
    assert rules(args) == [rule], [x.message for x in check(args).violations]


# ---------------------------------------------------------------- seed-document cases


def test_seed_1d_fp32_box_1024_fails_box_rule() -> None:
    a = TensorMapArgs.contiguous(F32, (4096,), (1024,), global_address=0x10000)
    v = check(a)
    assert not v.ok
    assert v.rules == ["box-dim-range"]
    (violation,) = v.violations
    assert violation.values["box_dim"] == 1024
    assert "1024" in violation.message and "256" in violation.message
    assert "cuTensorMapEncodeTiled" in violation.source


def test_seed_1d_fp32_box_256_passes() -> None:
    assert_ok(TensorMapArgs.contiguous(F32, (4096,), (256,), global_address=0x10000))


def test_seed_2d_fp32_box_32x128_no_swizzle() -> None:
    a = TensorMapArgs.contiguous(F32, (4096, 4096), (32, 128), global_address=0x10000)
    assert a.swizzle is Swizzle.NONE
    assert_ok(a)
    assert box_bytes(a) == 16384


def test_seed_2d_fp32_box_64x128_bytes() -> None:
    a = TensorMapArgs.contiguous(F32, (4096, 4096), (64, 128), global_address=0x10000)
    assert_ok(a)
    assert box_bytes(a) == 32768


# ---------------------------------------------------------------- enums match cuda.h


def test_enum_values_match_cuda_h() -> None:
    assert [int(d) for d in DT] == list(range(16))
    assert (int(DT.UINT8), int(DT.FLOAT32), int(DT.BFLOAT16), int(DT.TFLOAT32_FTZ)) == (0, 7, 9, 12)
    assert (int(U4_8), int(U4_16), int(U6_16)) == (13, 14, 15)
    assert [int(i) for i in Interleave] == [0, 1, 2]
    assert [int(s) for s in Swizzle] == [0, 1, 2, 3, 4, 5, 6]
    assert [int(p) for p in L2Promotion] == [0, 1, 2, 3]
    assert [int(o) for o in OobFill] == [0, 1]


def test_cuda_names() -> None:
    assert F32.cuda_name == "CU_TENSOR_MAP_DATA_TYPE_FLOAT32"
    assert U6_16.cuda_name == "CU_TENSOR_MAP_DATA_TYPE_16U6_ALIGN16B"
    assert Interleave.B16.cuda_name == "CU_TENSOR_MAP_INTERLEAVE_16B"
    assert Swizzle.B128_ATOM_32B_FLIP_8B.cuda_name == "CU_TENSOR_MAP_SWIZZLE_128B_ATOM_32B_FLIP_8B"
    assert L2Promotion.L2_256B.cuda_name == "CU_TENSOR_MAP_L2_PROMOTION_L2_256B"
    assert OobFill.NAN_REQUEST_ZERO_FMA.cuda_name == (
        "CU_TENSOR_MAP_FLOAT_OOB_FILL_NAN_REQUEST_ZERO_FMA"
    )


def test_element_sizes() -> None:
    assert element_size_bits(DT.UINT8) == 8
    assert element_size_bits(F16) == 16 and element_size_bits(DT.BFLOAT16) == 16
    assert element_size_bits(F32) == 32 and element_size_bits(DT.TFLOAT32_FTZ) == 32
    assert element_size_bits(DT.FLOAT64) == 64 and element_size_bits(DT.INT64) == 64
    assert (element_size_bits(U4_8), element_size_bits(U4_16), element_size_bits(U6_16)) == (
        4,
        4,
        6,
    )


def test_args_coerce_ints_and_lists() -> None:
    a = TensorMapArgs(
        dtype=7,  # type: ignore[arg-type]
        rank=2,
        global_address=0,
        global_dim=[64, 64],  # type: ignore[arg-type]
        global_strides=[256],  # type: ignore[arg-type]
        box_dim=[32, 32],  # type: ignore[arg-type]
        element_strides=[1, 1],  # type: ignore[arg-type]
        swizzle=3,  # type: ignore[arg-type]
    )
    assert a.dtype is F32 and a.swizzle is Swizzle.B128
    assert a.global_dim == (64, 64) and isinstance(a.box_dim, tuple)
    assert_ok(a)


def test_args_reject_unknown_enum_and_non_ints() -> None:
    with pytest.raises(ValueError):
        dataclasses.replace(args2d(), swizzle=7)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        dataclasses.replace(args2d(), box_dim=(32.0, 128))  # type: ignore[arg-type]


def test_contiguous_strides() -> None:
    a = TensorMapArgs.contiguous(F16, (100, 7, 3), (8, 1, 1))
    assert a.rank == 3
    assert a.global_strides == (200, 1400)
    assert a.element_strides == (1, 1, 1)


def test_verdict_to_dict() -> None:
    d = check(args2d(box=(32, 257))).to_dict()
    assert d["ok"] is False
    assert d["violations"][0]["rule"] == "box-dim-range"
    assert set(d["violations"][0]) == {"rule", "message", "values", "source", "documented"}
    assert d["violations"][0]["documented"] is True and d["documented_ok"] is False


# ---------------------------------------------------------------- array-length


def test_array_length_mismatch_is_a_violation_not_a_crash() -> None:
    v = check(args2d(global_strides=()))
    assert v.rules == ["array-length"]
    assert v.violations[0].values == {
        "array": "global_strides",
        "length": 0,
        "expected": 1,
        "rank": 2,
    }
    assert check(args2d(box_dim=(32, 128, 1))).has("array-length")
    assert check(args2d(element_strides=(1,))).has("array-length")


# ---------------------------------------------------------------- rank-range


@pytest.mark.parametrize("rank", [1, 2, 3, 4, 5])
def test_rank_in_range_passes(rank: int) -> None:
    dims = (64,) + (4,) * (rank - 1)
    assert_ok(TensorMapArgs.contiguous(F32, dims, (16,) + (2,) * (rank - 1)))


@pytest.mark.parametrize("rank", [0, 6])
def test_rank_out_of_range_fails(rank: int) -> None:
    dims = (64,) + (4,) * (rank - 1) if rank else ()
    box = (16,) + (2,) * (rank - 1) if rank else ()
    assert_only(TensorMapArgs.contiguous(F32, dims, box), "rank-range")


# ---------------------------------------------------------------- interleave-requires-rank-3


def test_interleave_rank_3_passes() -> None:
    assert_ok(args3d(interleave=Interleave.B16))


def test_interleave_rank_2_fails() -> None:
    assert_only(args2d(F16, (16, 8), interleave=Interleave.B16), "interleave-requires-rank-3")


def test_no_interleave_rank_1_passes() -> None:
    assert_ok(TensorMapArgs.contiguous(F16, (64,), (8,)))


# ---------------------------------------------------------------- global-address-alignment


def test_address_16_aligned_passes() -> None:
    assert_ok(args2d(global_address=0x10010))


@pytest.mark.parametrize("address", [0x10008, 0x10001, 0x1000F])
def test_address_not_16_aligned_fails(address: int) -> None:
    v = check(args2d(global_address=address))
    assert v.rules == ["global-address-alignment"]
    assert v.violations[0].values["required_alignment"] == 16


def test_address_interleave_32b_needs_32() -> None:
    base = args3d(interleave=Interleave.B32, swizzle=Swizzle.B32)
    assert_ok(dataclasses.replace(base, global_address=0x10020))
    v = check(dataclasses.replace(base, global_address=0x10010))
    assert v.rules == ["global-address-alignment"]
    assert v.violations[0].values["required_alignment"] == 32


def test_address_interleave_16b_needs_only_16() -> None:
    assert_ok(args3d(interleave=Interleave.B16, global_address=0x10010))


@pytest.mark.parametrize("dtype", [U4_16, U6_16])
def test_address_packed_align16_needs_32(dtype: TensorMapDataType) -> None:
    base = TensorMapArgs.contiguous(dtype, (256, 4), (128, 2), global_address=0x10000)
    assert_ok(base)
    assert_ok(dataclasses.replace(base, global_address=0x10020))
    assert_only(dataclasses.replace(base, global_address=0x10010), "global-address-alignment")


def test_address_packed_align8_needs_only_16() -> None:
    assert_ok(TensorMapArgs.contiguous(U4_8, (256, 4), (32, 2), global_address=0x10010))


# ---------------------------------------------------------------- global-dim-range


def test_global_dim_bounds() -> None:
    assert_ok(args2d(global_dim=(MAX_GLOBAL_DIM, 1), global_strides=(16,)))
    assert_ok(args2d(global_dim=(1, 1), global_strides=(16,)))
    assert_only(
        args2d(global_dim=(MAX_GLOBAL_DIM + 1, 1), global_strides=(16,)), "global-dim-range"
    )
    assert_only(args2d(global_dim=(0, 1), global_strides=(16,)), "global-dim-range")
    v = check(args2d(global_dim=(1024, MAX_GLOBAL_DIM + 1)))
    assert v.rules == ["global-dim-range"] and v.violations[0].values["index"] == 1


# ---------------------------------------------------------------- packed-global-dim-multiple


@pytest.mark.parametrize("dtype", [U4_16, U6_16])
def test_packed_align16_global_dim0_multiple_of_128(dtype: TensorMapDataType) -> None:
    ok = TensorMapArgs.contiguous(dtype, (128, 4), (128, 2), global_address=0x10000)
    assert_ok(ok)
    bad = dataclasses.replace(ok, global_dim=(192, 4), global_strides=(160,))
    assert_only(bad, "packed-global-dim-multiple")


def test_packed_align8_global_dim0_multiple_of_2() -> None:
    ok = TensorMapArgs.contiguous(U4_8, (2, 4), (32, 2), global_address=0x10000)
    ok = dataclasses.replace(ok, global_strides=(16,))
    assert_ok(ok)
    assert_only(dataclasses.replace(ok, global_dim=(3, 4)), "packed-global-dim-multiple")


# ---------------------------------------------------------------- global-stride-alignment


@pytest.mark.parametrize("k", [1, 7, 4096])
def test_stride_multiple_of_16_passes(k: int) -> None:
    assert_ok(args2d(F16, (8, 8), global_dim=(8, 4), global_strides=(16 * k,)))


@pytest.mark.parametrize("delta", [1, 8, 15])
def test_stride_not_multiple_of_16_fails(delta: int) -> None:
    v = check(args2d(F16, (8, 8), global_dim=(8, 4), global_strides=(16 * 64 + delta,)))
    assert v.rules == ["global-stride-alignment"]
    assert v.violations[0].values["required_multiple"] == 16


def test_stride_alignment_checks_every_stride() -> None:
    v = check(args3d(global_strides=(128, 128 * 32 + 8)))
    assert v.rules == ["global-stride-alignment"]
    assert v.violations[0].values["index"] == 1


def test_stride_interleave_32b_needs_32() -> None:
    base = args3d(interleave=Interleave.B32, swizzle=Swizzle.B32)
    assert_ok(dataclasses.replace(base, global_strides=(160, 160 * 32)))
    v = check(dataclasses.replace(base, global_strides=(144, 144 * 32)))
    assert v.rules == ["global-stride-alignment"]
    assert v.violations[0].values["required_multiple"] == 32


@pytest.mark.parametrize("dtype", [U4_16, U6_16])
def test_stride_packed_align16_needs_32(dtype: TensorMapDataType) -> None:
    base = TensorMapArgs.contiguous(dtype, (256, 4), (128, 2), global_address=0x10000)
    assert_ok(dataclasses.replace(base, global_strides=(224,)))
    assert_only(dataclasses.replace(base, global_strides=(208,)), "global-stride-alignment")


# ---------------------------------------------------------------- global-stride-range


def test_stride_below_2_pow_40_passes_and_2_pow_40_fails() -> None:
    assert_ok(args2d(global_strides=(GLOBAL_STRIDE_LIMIT - 16,)))
    assert_only(args2d(global_strides=(GLOBAL_STRIDE_LIMIT,)), "global-stride-range")


# ---------------------------------------------------------------- global-stride-layout (note)


def test_overlapping_strides_are_a_note_not_a_violation() -> None:
    v = check(args2d(global_strides=(16,)))  # 1024 fp32 rows need >= 4096 bytes
    assert v.ok
    assert note_rules(v) == ["global-stride-layout"]
    assert v.notes[0].values["minimum"] == 4096
    v = check(args3d(global_strides=(128, 128 * 31)))  # dim 2 overlaps dim 1
    assert v.ok and note_rules(v) == ["global-stride-layout"]
    assert v.notes[0].values["index"] == 1


def test_exact_and_padded_strides_give_no_layout_note() -> None:
    assert note_rules(check(args2d(global_strides=(4096,)))) == []
    assert note_rules(check(args2d(global_strides=(4096 + 16,)))) == []


# ---------------------------------------------------------------- box-dim-range


@pytest.mark.parametrize("index", [0, 1])
def test_box_256_passes_257_fails_0_fails(index: int) -> None:
    def box(n: int) -> tuple[int, int]:
        return (n, 8) if index == 0 else (32, n)

    assert_ok(args2d(box_dim=box(256)))
    assert_ok(args2d(box_dim=box(1) if index == 1 else (4, 8)))
    v = check(args2d(box_dim=box(257)))
    assert "box-dim-range" in v.rules and v.violations[0].values["index"] == index
    assert "box-dim-range" in check(args2d(box_dim=box(0))).rules


# ---------------------------------------------------------------- inner-box-bytes-multiple-of-16


@pytest.mark.parametrize(
    ("dtype", "good", "bad"),
    [
        (DT.UINT8, 16, 17),
        (F16, 8, 9),
        (DT.BFLOAT16, 24, 28),
        (F32, 4, 5),
        (F32, 4, 6),
        (DT.FLOAT64, 2, 3),
        (U4_8, 32, 33),
        (U4_8, 32, 48),
    ],
)
def test_inner_box_bytes_multiple_of_16(dtype: TensorMapDataType, good: int, bad: int) -> None:
    base = TensorMapArgs.contiguous(dtype, (256, 4), (good, 2), global_address=0x10000)
    assert_ok(base)
    assert_only(dataclasses.replace(base, box_dim=(bad, 2)), "inner-box-bytes-multiple-of-16")


def test_inner_box_rule_does_not_apply_when_interleaved() -> None:
    """The documented rule is for interleave NONE only; the observed one covers the rest."""
    v = check(args3d(interleave=Interleave.B16, box_dim=(9, 8, 8)))
    assert v.documented_ok
    assert v.rules == ["interleaved-inner-box-bytes-multiple-of-16"]


# ---------------------------------------------------------------- packed-box-dim-inner


@pytest.mark.parametrize("dtype", [U4_16, U6_16])
@pytest.mark.parametrize("box0", [64, 127, 129, 256])
def test_packed_align16_box0_must_be_128(dtype: TensorMapDataType, box0: int) -> None:
    base = TensorMapArgs.contiguous(dtype, (256, 4), (128, 2), global_address=0x10000)
    assert_ok(base)
    assert "packed-box-dim-inner" in rules(dataclasses.replace(base, box_dim=(box0, 2)))


def test_packed_align8_box0_not_fixed() -> None:
    assert_ok(TensorMapArgs.contiguous(U4_8, (512, 4), (256, 2), global_address=0x10000))


# ---------------------------------------------------------------- element-stride-range


@pytest.mark.parametrize("index", [0, 1])
def test_element_stride_1_to_8(index: int) -> None:
    def es(n: int) -> tuple[int, int]:
        return (n, 1) if index == 0 else (1, n)

    assert_ok(args2d(element_strides=es(1)))
    assert_ok(args2d(element_strides=es(8)))
    for bad in (0, 9):
        v = check(args2d(element_strides=es(bad)))
        assert v.rules == ["element-stride-range"]
        assert v.violations[0].values == {"index": index, "element_stride": bad, "max": 8}


def test_element_stride_dim0_ignored_note() -> None:
    v = check(args2d(element_strides=(2, 1)))
    assert v.ok and note_rules(v) == ["element-stride-dim0-ignored"]
    v = check(args3d(interleave=Interleave.B16, element_strides=(2, 1, 1)))
    assert v.ok and "element-stride-dim0-ignored" not in note_rules(v)


def test_box_not_multiple_of_element_stride_note() -> None:
    v = check(args2d(box=(32, 127), element_strides=(1, 2)))
    assert v.ok and note_rules(v) == ["box-not-multiple-of-element-stride"]
    assert v.notes[0].values["loaded"] == 64


# ---------------------------------------------------------------- swizzle-span


@pytest.mark.parametrize(
    ("swizzle", "span"),
    [
        (Swizzle.B32, 32),
        (Swizzle.B64, 64),
        (Swizzle.B128, 128),
        (Swizzle.B128_ATOM_32B, 128),
        (Swizzle.B128_ATOM_32B_FLIP_8B, 128),
        (Swizzle.B128_ATOM_64B, 128),
    ],
)
@pytest.mark.parametrize("dtype", [F16, F32])
def test_swizzle_span_boundary(swizzle: Swizzle, span: int, dtype: TensorMapDataType) -> None:
    size = element_size_bits(dtype) // 8
    exact = span // size
    assert swizzle.span_bytes == span
    assert_ok(args2d(dtype, (exact, 64), swizzle=swizzle))
    # one element more: breaks the span (and, off a 16-byte multiple, the inner-box rule too)
    v = check(args2d(dtype, (exact + 1, 64), swizzle=swizzle))
    assert "swizzle-span" in v.rules
    span_violation = next(x for x in v.violations if x.rule == "swizzle-span")
    assert span_violation.values["inner_bytes"] == span + size
    assert span_violation.values["max_box_dim0"] == exact
    # sixteen bytes more: breaks only the span
    assert_only(args2d(dtype, (exact + 16 // size, 64), swizzle=swizzle), "swizzle-span")


def test_swizzle_span_smaller_box_passes() -> None:
    assert_ok(args2d(F16, (16, 64), swizzle=Swizzle.B128))


def test_swizzle_span_not_checked_when_interleaved() -> None:
    assert_ok(args3d(interleave=Interleave.B16, swizzle=Swizzle.B32, box_dim=(64, 8, 8)))


def test_no_swizzle_has_no_span_limit() -> None:
    assert_ok(args2d(F16, (256, 8)))


def test_swizzle_span_packed_align8() -> None:
    base = TensorMapArgs.contiguous(U4_8, (512, 4), (256, 2), global_address=0x10000)
    assert_ok(dataclasses.replace(base, swizzle=Swizzle.B128))  # 256 values = 128 bytes
    assert_only(dataclasses.replace(base, swizzle=Swizzle.B64), "swizzle-span")


# ------------------------------------------------ interleave-32b-requires-swizzle-32b


def test_interleave_32b_with_swizzle_32b_passes() -> None:
    assert_ok(args3d(interleave=Interleave.B32, swizzle=Swizzle.B32))


@pytest.mark.parametrize("swizzle", [s for s in Swizzle if s is not Swizzle.B32])
def test_interleave_32b_other_swizzle_fails(swizzle: Swizzle) -> None:
    assert_only(
        args3d(interleave=Interleave.B32, swizzle=swizzle), "interleave-32b-requires-swizzle-32b"
    )


@pytest.mark.parametrize("swizzle", list(Swizzle))
def test_interleave_16b_any_swizzle_passes(swizzle: Swizzle) -> None:
    assert_ok(args3d(interleave=Interleave.B16, swizzle=swizzle))


# ------------------------------------------------ packed-16u6-requires-no-interleave


def test_16u6_requires_interleave_none() -> None:
    base = TensorMapArgs.contiguous(U6_16, (256, 4, 4), (128, 2, 2), global_address=0x10000)
    assert_ok(base)
    assert_only(
        dataclasses.replace(base, interleave=Interleave.B16), "packed-16u6-requires-no-interleave"
    )


def test_16u4_align16_interleave_not_restricted() -> None:
    base = TensorMapArgs.contiguous(U4_16, (256, 4, 4), (128, 2, 2), global_address=0x10000)
    assert_ok(dataclasses.replace(base, interleave=Interleave.B16))


# ---------------------------------------------------------------- packed-swizzle-mode


@pytest.mark.parametrize(
    ("dtype", "allowed"),
    [
        (U6_16, {Swizzle.NONE, Swizzle.B128, Swizzle.B128_ATOM_32B, Swizzle.B128_ATOM_64B}),
        (U4_16, {Swizzle.NONE, Swizzle.B128, Swizzle.B128_ATOM_32B}),
    ],
)
def test_packed_swizzle_lists(dtype: TensorMapDataType, allowed: set[Swizzle]) -> None:
    base = TensorMapArgs.contiguous(dtype, (256, 4), (128, 2), global_address=0x10000)
    for swizzle in Swizzle:
        v = check(dataclasses.replace(base, swizzle=swizzle))
        if swizzle in allowed:
            assert v.ok, (swizzle, v.rules)
        else:
            assert "packed-swizzle-mode" in v.rules, swizzle


def test_packed_align8_any_swizzle_that_fits() -> None:
    base = TensorMapArgs.contiguous(U4_8, (512, 4), (64, 2), global_address=0x10000)
    for swizzle in Swizzle:
        assert_ok(dataclasses.replace(base, swizzle=swizzle))  # 64 values = 32 bytes


def test_packed_direction_notes() -> None:
    u6 = TensorMapArgs.contiguous(U6_16, (256, 4), (128, 2), swizzle=Swizzle.B128_ATOM_64B)
    v = check(u6)
    assert v.ok and "packed-swizzle-direction" in note_rules(v)
    assert (
        next(n for n in v.notes if n.rule == "packed-swizzle-direction").values["direction"]
        == "store"
    )
    u4 = TensorMapArgs.contiguous(U4_16, (256, 4), (128, 2))
    v = check(u4)
    assert v.ok
    assert note_rules(v) == ["packed-swizzle-direction", "packed-type-needs-cuda-12.8-sm100"]
    assert note_rules(check(u4, compute_capability=100)) == ["packed-swizzle-direction"]


def test_atom_swizzle_note() -> None:
    v = check(args2d(swizzle=Swizzle.B128_ATOM_32B))
    assert v.ok and note_rules(v) == ["swizzle-atom-needs-cuda-12.8-sm100"]


# ---------------------------------------------------------------- oob-fill-requires-float


@pytest.mark.parametrize("dtype", sorted(DT))
def test_nan_oob_fill_only_for_float_types(dtype: TensorMapDataType) -> None:
    if dtype in (U4_16, U6_16):
        base = TensorMapArgs.contiguous(dtype, (256, 4), (128, 2))
    else:
        box0 = 128 // element_size_bits(dtype)
        base = TensorMapArgs.contiguous(dtype, (256, 4), (box0, 2))
    assert_ok(base)
    nan = dataclasses.replace(base, oob_fill=OobFill.NAN_REQUEST_ZERO_FMA)
    is_float = dtype in {
        F16,
        F32,
        DT.FLOAT64,
        DT.BFLOAT16,
        DT.FLOAT32_FTZ,
        DT.TFLOAT32,
        DT.TFLOAT32_FTZ,
    }
    if is_float:
        assert_ok(nan)
    else:
        assert_only(nan, "oob-fill-requires-float")


# ---------------------------------------------------------------- several at once


def test_all_violations_reported_together() -> None:
    a = TensorMapArgs(
        dtype=F16,
        rank=2,
        global_address=0x10008,
        global_dim=(0, 8),
        global_strides=(24,),
        box_dim=(300, 0),
        element_strides=(9, 1),
        interleave=Interleave.NONE,
        swizzle=Swizzle.B32,
        oob_fill=OobFill.NONE,
    )
    assert set(check(a).rules) == {
        "global-address-alignment",
        "global-dim-range",
        "global-stride-alignment",
        "box-dim-range",
        "inner-box-bytes-multiple-of-16",
        "element-stride-range",
        "swizzle-span",
    }


def test_every_violation_has_source_and_one_line_message() -> None:
    a = args3d(
        global_address=3,
        interleave=Interleave.B32,
        swizzle=Swizzle.B64,
        global_strides=(100, 7),
        oob_fill=OobFill.NAN_REQUEST_ZERO_FMA,
        dtype=DT.INT32,
    )
    v = check(a)
    assert len(v.violations) >= 4
    for x in v.violations:
        assert x.source and "\n" not in x.message and x.values


# ---------------------------------------------------------------- box_bytes


def test_box_bytes_simple_types() -> None:
    assert box_bytes(TensorMapArgs.contiguous(F16, (4096, 4096), (64, 64))) == 8192
    assert box_bytes(TensorMapArgs.contiguous(DT.UINT8, (4096,), (256,))) == 256
    assert box_bytes(TensorMapArgs.contiguous(DT.FLOAT64, (64, 64, 64), (2, 4, 8))) == 512
    five_d = TensorMapArgs.contiguous(F32, (64, 8, 8, 8, 8), (4, 2, 2, 2, 2))
    assert box_bytes(five_d) == 4 * 4 * 16


def test_box_bytes_element_strides_use_ceil() -> None:
    a = args2d(box=(32, 128), element_strides=(1, 2))
    assert box_elements(a) == (32, 64)
    assert box_bytes(a) == 32 * 64 * 4
    a = args2d(box=(32, 127), element_strides=(1, 2))
    assert box_elements(a) == (32, 64)


def test_box_bytes_dim0_element_stride_ignored_without_interleave() -> None:
    a = args2d(box=(32, 128), element_strides=(4, 1))
    assert box_elements(a) == (32, 128)
    assert box_bytes(a) == 16384


def test_box_bytes_dim0_element_stride_used_with_interleave() -> None:
    a = args3d(interleave=Interleave.B16, box_dim=(16, 8, 8), element_strides=(2, 1, 1))
    assert box_elements(a) == (8, 8, 8)
    assert box_bytes(a) == 8 * 2 * 64


def test_box_bytes_packed_types() -> None:
    # 16U4_ALIGN8B: copied as is, 16 values in 8 bytes
    assert box_bytes(TensorMapArgs.contiguous(U4_8, (512, 4), (64, 2))) == 32 * 2
    # ALIGN16B types: each group of 16 values lands as 16 bytes in shared memory
    assert box_bytes(TensorMapArgs.contiguous(U4_16, (256, 4), (128, 2))) == 128 * 2
    assert box_bytes(TensorMapArgs.contiguous(U6_16, (256, 4), (128, 3))) == 128 * 3


def test_box_bytes_independent_of_validity() -> None:
    a = TensorMapArgs.contiguous(F32, (4096,), (1024,))
    assert not check(a).ok
    assert box_bytes(a) == 4096


def test_box_bytes_rejects_uncomputable() -> None:
    with pytest.raises(ValueError):
        box_bytes(args2d(element_strides=(1,)))
    with pytest.raises(ValueError):
        box_bytes(args2d(element_strides=(1, 0)))


# ------------------------------------------------------------------ rank-1 size: not a rule


@pytest.mark.parametrize("length", [1 << 20, 1_000_004, 1_000_003, 1_000_001])
def test_rank1_global_size_is_not_a_rule(length: int) -> None:
    """A rank-1 fp32 tensor of any length passes: no rule ties its byte size to 16.

    The H200 differential run (2026-11-22, rank-1 probe) settled the suspicion: with a
    one-entry globalStrides array the driver accepts every length, 4,000,012 bytes included;
    with a NULL one it refuses every length (``rank1-null-strides``, below).
    """
    args = TensorMapArgs(F32, 1, 0x10000, (length,), (), (256,), (1,))
    assert_ok(args)
    # The stride entry some callers pass for rank 1 (Triton: the byte size) is outside the
    # documented call; the model reports it, and checks it like any stride.
    extra = dataclasses.replace(args, global_strides=(length * 4,))
    ragged = ["global-stride-alignment"] if length * 4 % 16 else []
    assert rules(extra) == ["array-length", *ragged]


# ------------------------------------------------------------------ observed driver rules
#
# Rules the H200 driver (580.159.04, CUDA 13.0) enforced in the differential run of 2026-11-22
# without the reference stating them (docs/tma-disagreements.md). Each is a violation with
# documented=False and an "observed: ..." source; each at its boundary.

OBSERVED = "observed: H200 driver 580.159.04, differential run 2026-11-22"
U8 = DT.UINT8


def only_observed(v: DescriptorCheck, rule: str) -> None:
    assert v.rules == [rule], [x.message for x in v.violations]
    (x,) = v.violations
    assert x.documented is False and x.source.startswith(OBSERVED), x.source
    assert v.documented_ok and not v.ok and v.documented_rules == []


def test_observed_rules_registry_matches_the_violations() -> None:
    assert {
        "rank1-null-strides",
        "interleaved-inner-box-bytes-multiple-of-16",
        "box-shared-memory-footprint",
        "packed-type-needs-sm100",
        "swizzle-atom-needs-sm100",
    } == OBSERVED_RULES
    examples = [
        dataclasses.replace(args1d(), global_strides_pointer="null"),
        args3d(interleave=Interleave.B16, box_dim=(9, 8, 8)),
        footprint_args((256, 4, 228)),
        TensorMapArgs.contiguous(U4_8, (512, 4), (64, 2)),
        args2d(swizzle=Swizzle.B128_ATOM_32B),
        args2d(box=(32, 257)),
    ]
    for a in examples:
        for x in check(a, compute_capability=90).violations:
            assert x.documented == (x.rule not in OBSERVED_RULES), x.rule
            assert x.to_dict()["documented"] == x.documented


def test_documented_rules_keep_documented_sources() -> None:
    v = check(args2d(box=(64, 257), swizzle=Swizzle.B128_ATOM_32B), compute_capability=90)
    assert v.rules == ["box-dim-range", "swizzle-span", "swizzle-atom-needs-sm100"]
    assert v.documented_rules == ["box-dim-range", "swizzle-span"]
    assert [x.documented for x in v.violations] == [True, True, False]
    assert all("cuTensorMapEncodeTiled" in x.source for x in v.violations[:2])


def test_check_rejects_a_non_int_compute_capability() -> None:
    with pytest.raises(TypeError):
        check(args2d(), compute_capability="sm_90")  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        check(args2d(), compute_capability=True)


# rank1-null-strides


def args1d(length: int = 1 << 20) -> TensorMapArgs:
    return TensorMapArgs(F32, 1, 0x10000, (length,), (), (256,), (1,))


@pytest.mark.parametrize("length", [4096, 1 << 20, 1_000_003])
def test_rank1_null_strides_is_refused_array_is_not(length: int) -> None:
    array = args1d(length)
    assert array.global_strides_pointer == "array"
    assert_ok(array)
    null = dataclasses.replace(array, global_strides_pointer="null")
    only_observed(check(null), "rank1-null-strides")
    assert "one-entry array" in check(null).violations[0].message


def test_null_strides_above_rank_1_is_array_length_not_the_rank1_rule() -> None:
    null2d = dataclasses.replace(args2d(), global_strides=(), global_strides_pointer="null")
    assert rules(null2d) == ["array-length"]


def test_global_strides_pointer_values() -> None:
    with pytest.raises(ValueError, match="global_strides_pointer"):
        dataclasses.replace(args1d(), global_strides_pointer="nullptr")
    with pytest.raises(ValueError, match="passes no strides"):
        dataclasses.replace(args2d(), global_strides_pointer="null")


# interleaved-inner-box-bytes-multiple-of-16


@pytest.mark.parametrize("interleave", [Interleave.B16, Interleave.B32])
@pytest.mark.parametrize(("box0", "good"), [(8, True), (16, True), (7, False), (9, False)])
def test_interleaved_inner_box_bytes_boundary(
    interleave: Interleave, box0: int, good: bool
) -> None:
    swizzle = Swizzle.B32 if interleave is Interleave.B32 else Swizzle.NONE
    a = args3d(
        interleave=interleave,
        swizzle=swizzle,
        box_dim=(box0, 8, 8),
        global_address=0x10000,
        global_strides=(128, 4096),
    )
    if good:  # 16 bytes is enough even with INTERLEAVE_32B (accepted on the H200)
        assert_ok(a)
    else:
        only_observed(check(a), "interleaved-inner-box-bytes-multiple-of-16")


def test_interleaved_inner_rule_does_not_double_report_interleave_none() -> None:
    assert rules(args3d(box_dim=(9, 8, 8))) == ["inner-box-bytes-multiple-of-16"]


# box-shared-memory-footprint


def footprint_args(box: tuple[int, ...], es: tuple[int, ...] | None = None) -> TensorMapArgs:
    """A UINT8 tensor big enough for any box: the footprint is the box's product in bytes."""
    dims = (4096,) * len(box)
    return TensorMapArgs.contiguous(U8, dims, box, global_address=0x10000, element_strides=es)


@pytest.mark.parametrize("cc", [None, 90, 100])
def test_footprint_boundary_at_227_kib(cc: int | None) -> None:
    at = footprint_args((256, 4, 227))  # 232448 bytes = 227 KiB
    assert driver_box_footprint(at) == 232448 == shared_memory_limit(cc)
    assert check(at, compute_capability=cc).ok
    over = footprint_args((256, 4, 228))  # 233472
    v = check(over, compute_capability=cc)
    only_observed(v, "box-shared-memory-footprint")
    assert v.violations[0].values == {
        "footprint_bytes": 233472,
        "limit_bytes": 232448,
        "compute_capability": cc,
    }


def test_footprint_limit_follows_the_target() -> None:
    assert shared_memory_limit(120) == 101376 == 99 * 1024
    assert shared_memory_limit(87) == MAX_SHARED_MEMORY_OPTIN  # no row: the largest
    at = footprint_args((256, 4, 99))  # 101376
    assert check(at, compute_capability=120).ok
    over = footprint_args((256, 4, 100))  # 102400
    only_observed(check(over, compute_capability=120), "box-shared-memory-footprint")
    assert check(over, compute_capability=90).ok


def test_footprint_counts_floor_of_box_over_element_stride() -> None:
    """The driver's count: floor per dimension, dimension 0 included with interleave NONE."""
    floor_fits = footprint_args((256, 4, 229), es=(1, 3, 1))  # floor(4/3) = 1: 58624
    assert driver_box_footprint(floor_fits) == 256 * 1 * 229
    assert check(floor_fits).ok
    assert box_bytes(floor_fits) == 256 * 2 * 229  # what a copy loads (ceil)
    dim0 = footprint_args((256, 4, 228), es=(2, 1, 1))  # elementStrides[0] halves it
    assert driver_box_footprint(dim0) == 128 * 4 * 228
    assert check(dim0).ok
    v = check(dim0)  # ... but a copy loads all 256 (box_bytes = 233472): a note says so
    assert "box-footprint-undercounted" in note_rules(v)
    (note,) = [n for n in v.notes if n.rule == "box-footprint-undercounted"]
    assert note.documented is False and note.values["box_bytes"] == 233472


def test_footprint_of_zero_when_a_box_is_below_its_element_stride() -> None:
    """boxDim[i] < elementStrides[i] counts 0: the H200 accepted such boxes of 64 MiB."""
    a = footprint_args((256, 256, 1, 256), es=(1, 1, 8, 1))
    assert driver_box_footprint(a) == 0 and box_bytes(a) == 256**3
    v = check(a, compute_capability=90)
    assert v.ok and "box-footprint-undercounted" in note_rules(v)


def test_footprint_closest_descriptors_of_the_run() -> None:
    """The largest accepted (228480 bytes) and smallest refused (236640) model-ok footprints."""
    accepted = TensorMapArgs(
        F16, 3, 139637976727584, (109184, 109, 4294967296), (224272, 1099511627760),
        (32, 14, 255), (1, 1, 1), swizzle=Swizzle.B64, oob_fill=OobFill.NAN_REQUEST_ZERO_FMA,
    )  # fmt: skip
    assert driver_box_footprint(accepted) == 228480
    assert check(accepted, compute_capability=90).ok
    refused = TensorMapArgs(
        DT.INT64, 4, 139637976727552, (482, 4294967296, 255, 1), (9216, 18320, 4671648),
        (116, 2, 255, 2), (4, 1, 1, 1), interleave=Interleave.B16, swizzle=Swizzle.B64,
        l2_promotion=L2Promotion.L2_64B,
    )  # fmt: skip
    assert driver_box_footprint(refused) == 236640
    only_observed(check(refused, compute_capability=90), "box-shared-memory-footprint")


def test_footprint_not_judged_without_a_box() -> None:
    bad = dataclasses.replace(footprint_args((256, 4, 228)), element_strides=(1, 0, 1))
    assert driver_box_footprint(bad) is None
    assert "box-shared-memory-footprint" not in rules(bad)
    assert rules(dataclasses.replace(footprint_args((256, 4, 228)), box_dim=(256, 4, 300))) == [
        "box-dim-range"
    ]


# packed-type-needs-sm100, swizzle-atom-needs-sm100


@pytest.mark.parametrize("dtype", [U4_8, U4_16, U6_16])
@pytest.mark.parametrize(("cc", "refused"), [(89, True), (90, True), (100, False), (120, False)])
def test_packed_types_need_sm100(dtype: TensorMapDataType, cc: int, refused: bool) -> None:
    box0 = 128 if dtype in (U4_16, U6_16) else 64
    a = TensorMapArgs.contiguous(dtype, (512, 4), (box0, 2), global_address=0x10000)
    v = check(a, compute_capability=cc)
    if refused:
        only_observed(v, "packed-type-needs-sm100")
    else:
        assert v.ok and "packed-type-needs-cuda-12.8-sm100" not in note_rules(v)
    unjudged = check(a)
    assert unjudged.ok and "packed-type-needs-cuda-12.8-sm100" in note_rules(unjudged)
    (note,) = [n for n in unjudged.notes if n.rule == "packed-type-needs-cuda-12.8-sm100"]
    assert note.documented is False and note.source.startswith(OBSERVED)


@pytest.mark.parametrize(
    "swizzle", [Swizzle.B128_ATOM_32B, Swizzle.B128_ATOM_32B_FLIP_8B, Swizzle.B128_ATOM_64B]
)
@pytest.mark.parametrize(("cc", "refused"), [(90, True), (99, True), (100, False), (103, False)])
def test_atom_swizzles_need_sm100(swizzle: Swizzle, cc: int, refused: bool) -> None:
    a = args2d(swizzle=swizzle)
    v = check(a, compute_capability=cc)
    if refused:
        only_observed(v, "swizzle-atom-needs-sm100")
    else:
        assert v.ok and note_rules(v) == []
    assert note_rules(check(a)) == ["swizzle-atom-needs-cuda-12.8-sm100"]


@pytest.mark.parametrize("swizzle", [Swizzle.NONE, Swizzle.B32, Swizzle.B64, Swizzle.B128])
def test_classic_swizzles_fine_on_sm90(swizzle: Swizzle) -> None:
    box = (swizzle.span_bytes // 4 or 32, 128)  # fp32 rows exactly the swizzle span
    assert check(args2d(box=box, swizzle=swizzle), compute_capability=90).ok


# interleave-32b-requires-swizzle-32b: kept (documented), though the H200 does not enforce it


@pytest.mark.parametrize("swizzle", [Swizzle.NONE, Swizzle.B128])
def test_interleave_32b_rule_kept_although_the_h200_accepted(swizzle: Swizzle) -> None:
    """Two of the 10 descriptors the H200 accepted; the reference forbids them in so many words."""
    a = TensorMapArgs(
        DT.UINT64, 5, 139637976727616, (32156, 1, 368, 1, 50),
        (1099511627744, 1099511627744, 44672, 44672), (2, 12, 2, 12, 4), (1, 8, 1, 1, 8),
        interleave=Interleave.B32, swizzle=swizzle, l2_promotion=L2Promotion.L2_256B,
    )  # fmt: skip
    v = check(a, compute_capability=90)
    assert v.rules == ["interleave-32b-requires-swizzle-32b"]
    assert v.violations[0].documented is True


# the run's four classes, one exact descriptor each (docs/tma-disagreements.md)


@pytest.mark.parametrize(
    ("args", "rule"),
    [
        (
            TensorMapArgs(U6_16, 1, 139637976727552, (128,), (), (128,), (1,)),  # index 7
            "packed-type-needs-sm100",
        ),
        (
            TensorMapArgs(DT.INT64, 1, 139637976727552, (3,), (), (2,), (1,),
                          swizzle=Swizzle.B128_ATOM_64B),  # index 367
            "swizzle-atom-needs-sm100",
        ),
        (
            TensorMapArgs(DT.INT64, 3, 139637976727680, (1, 1, 1), (16, 16), (1, 1, 1),
                          (1, 1, 1), interleave=Interleave.B16, swizzle=Swizzle.B64),  # 7507
            "interleaved-inner-box-bytes-multiple-of-16",
        ),
        (
            TensorMapArgs(DT.UINT32, 2, 139637976727584, (356, 4294967296), (228896,),
                          (256, 255), (1, 1), l2_promotion=L2Promotion.L2_128B),  # index 6390
            "box-shared-memory-footprint",
        ),
    ],
)  # fmt: skip
def test_run_exemplars_are_caught_on_sm90(args: TensorMapArgs, rule: str) -> None:
    assert check(args).documented_ok  # the old, documented-only model accepted each
    only_observed(check(args, compute_capability=90), rule)


# blackwell-tma-bit85-known-issue (a note, never a violation)

BIT85 = "blackwell-tma-bit85-known-issue"


def padded2d(rows: int, pitch: int = 128) -> TensorMapArgs:
    """fp32 rows of 16 elements (64 bytes) at ``pitch`` bytes: rows * pitch bytes in all."""
    return TensorMapArgs(F32, 2, 0x10000, (16, rows), (pitch,), (16, 8), (1, 1))


def test_global_extent_and_density() -> None:
    assert global_extent_bytes(padded2d(1024)) == 131072
    assert not is_dense(padded2d(1024)) and is_dense(padded2d(1024, pitch=64))
    assert global_extent_bytes(args1d(100)) == 400 and is_dense(args1d(100))
    assert global_extent_bytes(args2d(global_strides=())) is None


@pytest.mark.parametrize(
    ("rows", "cc", "driver", "expected"),
    [
        (1023, 100, 13010, True),  # 130944 bytes < 128 KiB, CUDA 13.1
        (1024, 100, 13010, False),  # exactly 128 KiB: not under it
        (1023, 100, 13020, False),  # CUDA 13.2: fixed
        (1023, 100, None, True),  # driver unknown: warn
        (1023, 90, 13010, False),  # Hopper: not affected
        (1023, None, 13010, False),  # target unknown: not judged
        (1023, 120, 12080, True),  # sm_120 is Blackwell too
    ],
)
def test_blackwell_bit85_note_boundaries(
    rows: int, cc: int | None, driver: int | None, expected: bool
) -> None:
    v = check(padded2d(rows), compute_capability=cc, driver_cuda_version=driver)
    assert v.ok  # a warning, never a violation
    assert (BIT85 in note_rules(v)) == expected
    if expected:
        (note,) = [n for n in v.notes if n.rule == BIT85]
        assert "595.71.05" in note.source and "bit 85" in note.message
        assert "9235" in note.message and note.values["extent_bytes"] == rows * 128


def test_blackwell_bit85_note_needs_a_non_dense_tensor() -> None:
    dense = padded2d(1023, pitch=64)
    assert BIT85 not in note_rules(check(dense, compute_capability=100))
    overlapping = padded2d(1023, pitch=32)  # not "dense non-overlapping" either
    assert BIT85 in note_rules(check(overlapping, compute_capability=100))
    assert BIT85 not in note_rules(check(args1d(1000), compute_capability=100))  # rank 1: dense
