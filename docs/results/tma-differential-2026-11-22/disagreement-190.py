#!/usr/bin/env python3
"""Disagreement 190: suite.tma_model vs the real cuTensorMapEncodeTiled.

model-ok/driver-rejects: the model finds no documented rule broken (expects CUDA_SUCCESS);
the driver returned CUDA_ERROR_INVALID_VALUE (driver 13000, NVIDIA H200, cuda-bindings 13.3.1).
Group key: {"rules": "none", "driver": "CUDA_ERROR_INVALID_VALUE", "rank": 1, "dtype": "PACKED_16U4_ALIGN8B", "interleave": "NONE", "swizzle": "NONE"}
6 descriptor(s) in this group; this is the first, index 3 of bench/tma_differential.py --seed 0.

Run on a machine with a GPU, with any Python that has cuda-bindings:
    python disagreement-190.py
Exit status: 0 the driver agrees with the model, 1 it does not,
2 no cuda-bindings, 3 no usable GPU.
"""

import json
import sys

#: The descriptor as suite.tma_model.TensorMapArgs holds it (innermost first).
DESCRIPTOR = {'dtype': 'PACKED_16U4_ALIGN8B',
 'rank': 1,
 'global_address': 139637976727552,
 'global_dim': [2],
 'global_strides': [],
 'box_dim': [256],
 'element_strides': [1],
 'interleave': 'NONE',
 'swizzle': 'NONE',
 'l2_promotion': 'NONE',
 'oob_fill': 'NONE'}
#: The exact values handed to cuTensorMapEncodeTiled (enums as cuda.h ints; None = NULL).
CALL = {'dtype': 13,
 'rank': 1,
 'address': 139637976727552,
 'global_dim': [2],
 'global_strides': [16],
 'box_dim': [256],
 'element_strides': [1],
 'interleave': 0,
 'swizzle': 0,
 'l2_promotion': 0,
 'oob_fill': 0}
MODEL_OK = True
MODEL_RULES = []
MODEL_MESSAGES = []
MODEL_NOTES = []
DRIVER_RESULT_WHEN_FOUND = 'CUDA_ERROR_INVALID_VALUE'


def _result_name(driver, err):
    """The CUresult's name, e.g. CUDA_ERROR_INVALID_VALUE."""
    name = getattr(err, "name", None)
    if name:
        return str(name)
    try:
        return driver.CUresult(int(err)).name
    except ValueError:
        return f"CUresult({int(err)})"


def _init_context(driver):
    """cuInit(0) and make device 0's primary context current; return facts about it."""
    (err,) = driver.cuInit(0)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuInit(0) returned {_result_name(driver, err)}")
    err, device = driver.cuDeviceGet(0)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuDeviceGet(0) returned {_result_name(driver, err)}")
    err, context = driver.cuDevicePrimaryCtxRetain(device)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuDevicePrimaryCtxRetain returned {_result_name(driver, err)}")
    (err,) = driver.cuCtxSetCurrent(context)
    if err != driver.CUresult.CUDA_SUCCESS:
        raise RuntimeError(f"cuCtxSetCurrent returned {_result_name(driver, err)}")
    info = {}
    err, version = driver.cuDriverGetVersion()
    if err == driver.CUresult.CUDA_SUCCESS:
        info["driver_version"] = int(version)
    err, name = driver.cuDeviceGetName(256, device)
    if err == driver.CUresult.CUDA_SUCCESS:
        info["device"] = bytes(name).split(b"\0", 1)[0].decode(errors="replace")
    return info


def _encode_raw(driver, call):
    """cuTensorMapEncodeTiled with the values of ``call`` (see driver_call); the result name."""

    def array(kind, values):
        return None if values is None else [kind(int(v)) for v in values]

    err, _tensor_map = driver.cuTensorMapEncodeTiled(
        driver.CUtensorMapDataType(call["dtype"]),
        call["rank"],
        call["address"],
        array(driver.cuuint64_t, call["global_dim"]),
        array(driver.cuuint64_t, call["global_strides"]),
        array(driver.cuuint32_t, call["box_dim"]),
        array(driver.cuuint32_t, call["element_strides"]),
        driver.CUtensorMapInterleave(call["interleave"]),
        driver.CUtensorMapSwizzle(call["swizzle"]),
        driver.CUtensorMapL2promotion(call["l2_promotion"]),
        driver.CUtensorMapFloatOOBfill(call["oob_fill"]),
    )
    return _result_name(driver, err)


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
