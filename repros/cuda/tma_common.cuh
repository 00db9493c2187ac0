// Shared by the TMA bulk-copy reproducers: inline-PTX mbarrier helpers, the bounded barrier
// wait, the programs' exit codes and the driver entry points reached without -lcuda.
#pragma once

#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <cstdint>
#include <vector>

#ifndef WAIT_TIMEOUT_NS
#define WAIT_TIMEOUT_NS 2000000000ull
#endif

namespace {

enum Exit { kOk = 0, kUsage = 2, kWrong = 3, kEncode = 4, kRuntime = 5, kTimeout = 6 };

// ---------------------------------------------------------------- device helpers (inline PTX)

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}

__device__ __forceinline__ void fence_barrier_init() {
  // Make the initialised barrier visible to the async proxy (the TMA unit) as well.
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
}

__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}

__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}

__device__ __forceinline__ bool mbar_try_wait(uint32_t bar, uint32_t parity) {
  uint32_t done;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(done)
      : "r"(bar), "r"(parity)
      : "memory");
  return done != 0;
}

__device__ __forceinline__ uint64_t global_ns() {
  uint64_t t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Wait for the phase of `parity` to complete. A wait that never ends (a barrier expecting
// bytes that never come, or one a copy has overwritten) records the timeout in host-mapped
// memory, where the host can read it after the context is gone, then traps instead of hanging.
__device__ void mbar_wait(uint32_t bar, uint32_t parity, volatile unsigned* timeout_flag) {
  if (mbar_try_wait(bar, parity)) return;
  const uint64_t start = global_ns();
  while (!mbar_try_wait(bar, parity)) {
    if (global_ns() - start > WAIT_TIMEOUT_NS) {
      *timeout_flag = 1u;
      __threadfence_system();
      __trap();
    }
  }
}

// ---------------------------------------------------------------- host: the driver API

PFN_cuTensorMapEncodeTiled_v12000 encode_tiled = nullptr;
PFN_cuGetErrorName_v6000 driver_error_name = nullptr;

const char* cu_name(CUresult r) {
  const char* name = nullptr;
  if (driver_error_name && driver_error_name(r, &name) == CUDA_SUCCESS && name) return name;
  return "CUDA_ERROR_UNKNOWN";
}

// Reach the driver API through the runtime, so no -lcuda is needed at link time.
// `have_encode` says whether cuTensorMapEncodeTiled was found.
inline cudaError_t load_driver_api(bool* have_encode) {
  cudaDriverEntryPointQueryResult found;
  cudaError_t e = cudaGetDriverEntryPointByVersion(
      "cuGetErrorName", reinterpret_cast<void**>(&driver_error_name), 6000, cudaEnableDefault,
      &found);
  if (e != cudaSuccess) return e;
  e = cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled",
                                       reinterpret_cast<void**>(&encode_tiled), 12000,
                                       cudaEnableDefault, &found);
  *have_encode = e == cudaSuccess && found == cudaDriverEntryPointSuccess && encode_tiled;
  return e;
}

// Fresh, never-NaN inputs in [-1, 1) from xorshift32 (deterministic for a seed).
inline void fill_random(std::vector<float>& values, uint32_t state) {
  for (auto& v : values) {
    state ^= state << 13;
    state ^= state >> 17;
    state ^= state << 5;
    v = static_cast<float>(state >> 8) / static_cast<float>(1u << 23) - 1.0f;
  }
}

}  // namespace
