"""triton-lang/triton#6354: a tensor-descriptor load of a (512, 16) int32 block hangs.

    python bench/probes/runtime_ports/descriptor_tall_block_hang.py

One program loads one (BLOCK_M, BLOCK_N) tile of an n x n matrix through
``tl.make_tensor_descriptor`` and stores it with plain pointers. The issue (open, seen on
an H100 with a source build of 2025-03): BLOCK_M=512 with BLOCK_N=16 int32 never ends;
the program spins on the mbarrier wait of the TMA load. BLOCK_M 128 and 256 end. A TMA box
holds at most 256 rows, so a 512-row block needs more than one copy per barrier.
"""

from __future__ import annotations

import _harness
import triton
import triton.language as tl

N = 4096


@triton.jit
def tile_copy(src_ptr, dst_ptr, n, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    row0 = tl.program_id(0) * BLOCK_M
    desc = tl.make_tensor_descriptor(
        src_ptr, shape=[n, n], strides=[n, 1], block_shape=[BLOCK_M, BLOCK_N]
    )
    tile = desc.load([row0, 0])
    rows = row0 + tl.arange(0, BLOCK_M)
    cols = tl.arange(0, BLOCK_N)
    tl.store(dst_ptr + rows[:, None] * BLOCK_N + cols[None, :], tile)


def _config(block_m, block_n=16, dtype="int32", programs=1):
    return {"BLOCK_M": block_m, "BLOCK_N": block_n, "dtype": dtype, "programs": programs}


CONFIGS = [
    _config(512),
    _config(1024),
    _config(512, programs=8),
    _config(512, dtype="fp32"),
    _config(512, block_n=32, dtype="fp16"),
    _config(256),
    _config(128),
]


def label(config):
    return f"{config['dtype']}-m{config['BLOCK_M']}-n{config['BLOCK_N']}-p{config['programs']}"


def launch(config):
    import torch

    triton.set_allocator(
        lambda size, align, stream: torch.empty(size, dtype=torch.int8, device=_harness.DEVICE)
    )
    dtype = {"int32": torch.int32, "fp32": torch.float32, "fp16": torch.float16}[config["dtype"]]
    if dtype.is_floating_point:
        src = (torch.rand(N, N, device=_harness.DEVICE) * 2 - 1).to(dtype)
        poison = float("nan")
    else:
        src = torch.randint(-(2**30), 2**30, (N, N), device=_harness.DEVICE, dtype=dtype)
        poison = torch.iinfo(dtype).min
    rows = config["BLOCK_M"] * config["programs"]
    dst = torch.full((rows, config["BLOCK_N"]), poison, device=_harness.DEVICE, dtype=dtype)
    tile_copy[(config["programs"],)](
        src, dst, N, BLOCK_M=config["BLOCK_M"], BLOCK_N=config["BLOCK_N"]
    )
    _harness.synchronize()
    want = src[:rows, : config["BLOCK_N"]]
    if torch.equal(dst, want):
        return "ok"
    differ = int((dst != want).sum())
    return f"wrong ({differ} of {dst.numel()} differ, exact copy expected)"


if __name__ == "__main__":
    raise SystemExit(_harness.main(CONFIGS, label, launch, workers=len(CONFIGS)))
