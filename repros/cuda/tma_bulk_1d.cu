// tma_bulk_1d.cu: a 1D TMA copy, global -> shared (cp.async.bulk.tensor.1d + mbarrier) -> global.
//
// The reproducer of the seeds' "CUDA 1D TMA descriptor bug" (ch7/async_prefetch_tma.cu), which
// is a user error: a box of 1024 fp32 elements breaks cuTensorMapEncodeTiled's documented limit
// of 256 elements per box dimension, so the driver returns CUDA_ERROR_INVALID_VALUE.
//
// Each block walks tiles of BOX elements: thread 0 arms the mbarrier with TX_BYTES expected
// transaction bytes and issues one TMA copy of the tile into the shared buffer; every thread
// waits on the barrier's phase, copies the tile to the destination, and the block syncs before
// the buffer is reused. Shared memory layout: [buffer: BUFFER_ELEMS floats][mbarrier].
//
// Compile-time parameters (-D): BOX (descriptor box, elements), BUFFER_ELEMS (shared buffer,
// elements), TX_BYTES (mbarrier expect_tx), THREADS, WAIT_TIMEOUT_NS. They are deliberately
// not checked against each other: the suite's static check does that, and with it off this
// program shows what the hardware does.
// Run-time arguments: --n ELEMENTS (tensor length), --blocks N (0: one per SM),
// --strides MODE: what is passed as globalStrides for this rank-1 map. The reference says the
// array holds rank - 1 = 0 entries, so any pointer should do, but what the driver does with it
// is the question this option probes:
//   padded (default): a one-entry array {n * 4 rounded up to 16} (non-null; a value any stride
//                     check accepts, so it cannot be the reason for a rejection),
//   bytes:            a one-entry array {n * 4}, what Triton's fill_1d_tma_descriptor passes,
//   null:             nullptr (what this program passed before; on an H200 with driver 580.159.04
//                     every 1D encode then failed with CUDA_ERROR_INVALID_VALUE).
//
// Prints one JSON line and exits 0 (exact copy), 3 (wrong data), 4 (encode error),
// 5 (CUDA runtime error), 6 (an mbarrier wait timed out: the kernel trapped), 2 (bad usage).
// The driver API is reached through cudaGetDriverEntryPointByVersion: no -lcuda needed.

#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "tma_common.cuh"

#ifndef BOX
#define BOX 256
#endif
#ifndef BUFFER_ELEMS
#define BUFFER_ELEMS BOX
#endif
#ifndef TX_BYTES
#define TX_BYTES (BOX * 4)
#endif
#ifndef THREADS
#define THREADS 128
#endif

namespace {

constexpr unsigned kAlign = 128;  // cp.async.bulk.tensor needs a 128-byte aligned destination
constexpr unsigned kBufferBytes = BUFFER_ELEMS * sizeof(float);
constexpr unsigned kBarrierOffset = (kBufferBytes + 7u) & ~7u;
constexpr unsigned kSharedBytes = kAlign + kBarrierOffset + 8u;

__device__ __forceinline__ void tma_load_1d(uint32_t dst, const CUtensorMap* desc, int32_t x,
                                            uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.1d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2}], [%3];" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(desc)), "r"(x), "r"(bar)
      : "memory");
}

// ---------------------------------------------------------------- the kernel

__global__ void __launch_bounds__(THREADS)
    copy_1d(const __grid_constant__ CUtensorMap desc, float* dst, long long n,
            volatile unsigned* timeout_flag) {
  extern __shared__ unsigned char smem_raw[];
  const uintptr_t base = (reinterpret_cast<uintptr_t>(smem_raw) + kAlign - 1) & ~uintptr_t(kAlign - 1);
  const float* buffer = reinterpret_cast<const float*>(base);
  const uint32_t buffer_addr = smem_addr(buffer);
  const uint32_t bar = buffer_addr + kBarrierOffset;

  if (threadIdx.x == 0) {
    mbar_init(bar, 1);
    fence_barrier_init();
  }
  __syncthreads();

  const long long tiles = (n + BOX - 1) / BOX;
  uint32_t phase = 0;
  for (long long tile = blockIdx.x; tile < tiles; tile += gridDim.x) {
    if (threadIdx.x == 0) {
      mbar_arrive_expect_tx(bar, TX_BYTES);
      tma_load_1d(buffer_addr, &desc, static_cast<int32_t>(tile * BOX), bar);
    }
    mbar_wait(bar, phase, timeout_flag);
    phase ^= 1u;
    for (int i = threadIdx.x; i < BOX; i += blockDim.x) {
      const long long index = tile * BOX + i;
      if (index < n) dst[index] = buffer[i];
    }
    __syncthreads();  // every read of the buffer is done before the next copy overwrites it
  }
}

// ---------------------------------------------------------------- host

struct Result {
  const char* encode = "not-run";
  const char* launch = "not-run";
  const char* sync = "not-run";
  bool timeout = false;
  long long mismatches = -1;
  long long first_bad = -1;
  float got = 0.f, want = 0.f;
  long long n = 0;
  const char* strides = "padded";
  unsigned long long global_stride0 = 0;
  int blocks = 0;
  char device[256] = "";
  int cc = 0;
  const char* error_at = "";
  const char* error = "cudaSuccess";
};

void print(const Result& r) {
  std::printf(
      "{\"program\": \"tma_bulk_1d\", \"box\": %d, \"buffer_elems\": %d, \"buffer_bytes\": %u, "
      "\"tx_bytes\": %d, \"box_bytes\": %d, \"shared_bytes\": %u, \"threads\": %d, "
      "\"n\": %lld, \"global_bytes\": %lld, \"strides\": \"%s\", \"global_stride0\": %llu, "
      "\"blocks\": %d, \"device\": \"%s\", \"cc\": %d, "
      "\"encode\": \"%s\", \"launch\": \"%s\", \"sync\": \"%s\", \"timeout\": %s, "
      "\"error_at\": \"%s\", \"error\": \"%s\", \"mismatches\": %lld",
      BOX, BUFFER_ELEMS, kBufferBytes, TX_BYTES, BOX * 4, kSharedBytes, THREADS, r.n,
      r.n * static_cast<long long>(sizeof(float)), r.strides, r.global_stride0, r.blocks,
      r.device, r.cc, r.encode, r.launch, r.sync, r.timeout ? "true" : "false", r.error_at,
      r.error, r.mismatches);
  if (r.first_bad >= 0)
    std::printf(", \"first_mismatch\": {\"index\": %lld, \"got\": \"%a\", \"want\": \"%a\"}",
                r.first_bad, r.got, r.want);
  std::printf("}\n");
  std::fflush(stdout);
}

int fail_runtime(Result& r, const char* where, cudaError_t e) {
  r.error_at = where;
  r.error = cudaGetErrorName(e);
  print(r);
  return kRuntime;
}

#define RT(where, call)                                  \
  do {                                                   \
    cudaError_t e_ = (call);                             \
    if (e_ != cudaSuccess) return fail_runtime(r, where, e_); \
  } while (0)

int run(int argc, char** argv) {
  Result r;
  r.n = 1 << 20;
  int blocks = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--n") && i + 1 < argc) {
      r.n = std::atoll(argv[++i]);
    } else if (!std::strcmp(argv[i], "--blocks") && i + 1 < argc) {
      blocks = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--strides") && i + 1 < argc) {
      r.strides = argv[++i];
    } else {
      std::fprintf(stderr, "usage: %s [--n ELEMENTS] [--blocks N] [--strides padded|bytes|null]\n",
                   argv[0]);
      return kUsage;
    }
  }
  if (std::strcmp(r.strides, "padded") && std::strcmp(r.strides, "bytes") &&
      std::strcmp(r.strides, "null")) {
    std::fprintf(stderr, "--strides must be padded, bytes or null\n");
    return kUsage;
  }
  if (r.n <= 0 || r.n > (1ll << 31)) {
    std::fprintf(stderr, "--n must be in 1..2^31\n");
    return kUsage;
  }

  int device = 0;
  RT("cudaGetDevice", cudaGetDevice(&device));
  cudaDeviceProp prop;
  RT("cudaGetDeviceProperties", cudaGetDeviceProperties(&prop, device));
  std::snprintf(r.device, sizeof r.device, "%s", prop.name);
  r.cc = prop.major * 10 + prop.minor;
  r.blocks = blocks > 0 ? blocks : prop.multiProcessorCount;

  bool have_encode = false;
  RT("cudaGetDriverEntryPointByVersion", load_driver_api(&have_encode));
  if (!have_encode) {
    r.error_at = "cuTensorMapEncodeTiled entry point";
    r.error = "symbol not found";
    print(r);
    return kRuntime;
  }

  const size_t bytes = static_cast<size_t>(r.n) * sizeof(float);
  std::vector<float> host_src(r.n), host_dst(r.n);
  fill_random(host_src, 0x9e3779b9u);
  float *src = nullptr, *dst = nullptr;
  unsigned* timeout_flag = nullptr;
  RT("cudaMalloc", cudaMalloc(&src, bytes));
  RT("cudaMalloc", cudaMalloc(&dst, bytes));
  RT("cudaHostAlloc", cudaHostAlloc(&timeout_flag, sizeof(unsigned), cudaHostAllocMapped));
  *timeout_flag = 0;
  RT("cudaMemcpy", cudaMemcpy(src, host_src.data(), bytes, cudaMemcpyHostToDevice));
  RT("cudaMemset", cudaMemset(dst, 0xFF, bytes));  // all-ones words are NaN: poison

  CUtensorMap desc;
  std::memset(&desc, 0, sizeof desc);
  const cuuint64_t global_dim[1] = {static_cast<cuuint64_t>(r.n)};
  // Rank 1: the reference reads rank - 1 = 0 strides; see --strides in the header comment.
  const cuuint64_t size_bytes = static_cast<cuuint64_t>(r.n) * sizeof(float);
  cuuint64_t global_strides[1] = {std::strcmp(r.strides, "bytes") ? (size_bytes + 15) / 16 * 16
                                                                   : size_bytes};
  const cuuint64_t* strides_arg = std::strcmp(r.strides, "null") ? global_strides : nullptr;
  r.global_stride0 = strides_arg ? global_strides[0] : 0;
  const cuuint32_t box_dim[1] = {BOX};
  const cuuint32_t element_strides[1] = {1};
  const CUresult enc = encode_tiled(
      &desc, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 1, src, global_dim, strides_arg, box_dim,
      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
      CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  r.encode = cu_name(enc);
  if (enc != CUDA_SUCCESS) {
    print(r);
    return kEncode;
  }

  RT("cudaFuncSetAttribute",
     cudaFuncSetAttribute(copy_1d, cudaFuncAttributeMaxDynamicSharedMemorySize, kSharedBytes));
  unsigned* device_flag = nullptr;
  RT("cudaHostGetDevicePointer", cudaHostGetDevicePointer(&device_flag, timeout_flag, 0));
  copy_1d<<<r.blocks, THREADS, kSharedBytes>>>(desc, dst, r.n, device_flag);
  const cudaError_t launched = cudaGetLastError();
  r.launch = cudaGetErrorName(launched);
  const cudaError_t synced = cudaDeviceSynchronize();
  r.sync = cudaGetErrorName(synced);
  r.timeout = *reinterpret_cast<volatile unsigned*>(timeout_flag) != 0;
  if (launched != cudaSuccess || synced != cudaSuccess) {
    r.error_at = launched != cudaSuccess ? "launch" : "cudaDeviceSynchronize";
    r.error = cudaGetErrorName(launched != cudaSuccess ? launched : synced);
    print(r);
    return r.timeout ? kTimeout : kRuntime;
  }

  RT("cudaMemcpy", cudaMemcpy(host_dst.data(), dst, bytes, cudaMemcpyDeviceToHost));
  r.mismatches = 0;
  for (long long i = 0; i < r.n; ++i) {
    if (std::memcmp(&host_dst[i], &host_src[i], sizeof(float)) != 0) {
      if (r.first_bad < 0) {
        r.first_bad = i;
        r.got = host_dst[i];
        r.want = host_src[i];
      }
      ++r.mismatches;
    }
  }
  cudaFree(src);
  cudaFree(dst);
  cudaFreeHost(timeout_flag);
  print(r);
  return r.mismatches ? kWrong : kOk;
}

}  // namespace

int main(int argc, char** argv) { return run(argc, argv); }
