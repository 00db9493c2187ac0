"""The TMA descriptor model, at the path reproducer files import (``suite.tma_model``).

The model lives in :mod:`suite.cuda`: the descriptor and its sources in
:mod:`suite.cuda.model`, what a box takes in memory in :mod:`suite.cuda.footprint`, the
rules and :func:`check` in :mod:`suite.cuda.rules`. Stdlib only.
"""

from __future__ import annotations

from suite.cuda.footprint import (
    box_bytes,
    box_elements,
    driver_box_footprint,
    global_extent_bytes,
    is_dense,
)
from suite.cuda.model import (
    BLACKWELL_BIT85_ALLOCATION_BYTES,
    BLACKWELL_BIT85_LAST_AFFECTED_DRIVER,
    DRIVER_API,
    DRIVER_API_URL,
    FLOAT_TYPES,
    GLOBAL_STRIDE_LIMIT,
    GLOBAL_STRIDES_POINTERS,
    MAX_BOX_DIM,
    MAX_ELEMENT_STRIDE,
    MAX_GLOBAL_DIM,
    MAX_RANK,
    MAX_SHARED_MEMORY_OPTIN,
    MODEL_ONLY,
    OBSERVED_H200,
    PACKED_ALIGN16_TYPES,
    PACKED_TYPES,
    PTX_ISA_URL,
    SM100,
    DescriptorCheck,
    Interleave,
    L2Promotion,
    OobFill,
    Swizzle,
    TensorMapArgs,
    TensorMapDataType,
    Violation,
    element_size_bits,
    shared_memory_limit,
)
from suite.cuda.rules import (
    ATOM_SWIZZLES,
    OBSERVED_RULES,
    check,
)

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
    "MODEL_ONLY",
    "OBSERVED_H200",
    "OBSERVED_RULES",
    "PACKED_ALIGN16_TYPES",
    "PACKED_TYPES",
    "PTX_ISA_URL",
    "SM100",
    "DescriptorCheck",
    "Interleave",
    "L2Promotion",
    "OobFill",
    "Swizzle",
    "TensorMapArgs",
    "TensorMapDataType",
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
