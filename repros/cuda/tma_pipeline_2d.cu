// tma_pipeline_2d.cu: a multi-stage 2D TMA pipeline (cp.async.bulk.tensor.2d + an mbarrier ring).
//
// The reproducer of the seeds' "CUDA 2D TMA pipeline bug" (ch10/tma_2d_pipeline_blackwell.cu),
// which is a user error: the descriptor's box is 128x64 fp32 (32 KB) while each stage's shared
// buffer and the mbarrier's expected transaction bytes assume 128x32 (16 KB), so every copy
// writes 16 KB past its stage; the last stage's copy lands on the barriers. Box 128x32 is right.
//
// One producer thread (warp 0, lane 0) walks this block's tiles: for tile i it takes stage
// s = i % STAGES, waits until the consumers have released the stage (its "empty" barrier),
// arms the stage's "full" barrier with TX_BYTES expected bytes and issues one TMA copy of the
// BOX_ROWS x BOX_COLS tile into the stage. CONSUMER_WARPS warps wait on the full barrier with
// the phase bit of round i / STAGES, read the tile out of shared memory (undoing the swizzle),
// write it to the destination and arrive on the empty barrier (one arrival per warp).
//
// Shared memory layout, from a 1024-byte aligned base (the 128B swizzle pattern repeats every
// 1024 bytes): STAGES buffers of BUFFER_ELEMS floats, each rounded up to 1024 bytes, then
// STAGES full barriers, then STAGES empty barriers. The buffers come first on purpose: it is
// the seeds' layout, so an oversized box overwrites the barriers as it did there.
//
// Compile-time parameters (-D): BOX_ROWS, BOX_COLS (the descriptor box: boxDim = {BOX_COLS,
// BOX_ROWS}, innermost first), BUFFER_ELEMS (per stage), TX_BYTES (expect_tx per stage),
// STAGES, SWIZZLE (0 none, 1 32B, 2 64B, 3 128B), CONSUMER_WARPS, WAIT_TIMEOUT_NS. They are
// deliberately not checked against each other: the suite's static check does that.
// Run-time arguments: --rows R --cols C (the fp32 tensor; C * 4 must be a multiple of 16),
// --blocks N (0: one per SM).
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

#ifndef BOX_ROWS
#define BOX_ROWS 128
#endif
#ifndef BOX_COLS
#define BOX_COLS 32
#endif
#ifndef BUFFER_ELEMS
#define BUFFER_ELEMS (BOX_ROWS * BOX_COLS)
#endif
#ifndef TX_BYTES
#define TX_BYTES (BOX_ROWS * BOX_COLS * 4)
#endif
#ifndef STAGES
#define STAGES 3
#endif
#ifndef SWIZZLE
#define SWIZZLE 0
#endif
#ifndef CONSUMER_WARPS
#define CONSUMER_WARPS 4
#endif

#if SWIZZLE < 0 || SWIZZLE > 3
#error "SWIZZLE must be 0 (none), 1 (32B), 2 (64B) or 3 (128B)"
#endif

namespace {

constexpr unsigned kThreads = 32u * (1u + CONSUMER_WARPS);
constexpr unsigned kAlign = 1024;
constexpr unsigned kBufferBytes = BUFFER_ELEMS * sizeof(float);
constexpr unsigned kStageStride = (kBufferBytes + kAlign - 1u) & ~(kAlign - 1u);
constexpr unsigned kFullOffset = STAGES * kStageStride;
constexpr unsigned kEmptyOffset = kFullOffset + 8u * STAGES;
constexpr unsigned kSharedBytes = kAlign + kEmptyOffset + 8u * STAGES;
constexpr unsigned kBoxElems = BOX_ROWS * BOX_COLS;
// The 16-byte chunk index (address bits 4..) is XORed with the 128-byte row index (bits 7..)
// over SWIZZLE bits: CUTLASS's Swizzle<1,4,3>, <2,4,3>, <3,4,3> for 32B, 64B, 128B.
constexpr unsigned kSwizzleMask = (1u << SWIZZLE) - 1u;

__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* desc, int32_t x,
                                            int32_t y, uint32_t bar) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes"
      " [%0], [%1, {%2, %3}], [%4];" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(desc)), "r"(x), "r"(y), "r"(bar)
      : "memory");
}

__device__ __forceinline__ unsigned swizzled(unsigned offset) {
  return offset ^ (((offset >> 7) & kSwizzleMask) << 4);
}

// ---------------------------------------------------------------- the kernel

__global__ void __launch_bounds__(kThreads)
    pipeline_2d(const __grid_constant__ CUtensorMap desc, float* dst, int rows, int cols,
                volatile unsigned* timeout_flag) {
  extern __shared__ unsigned char smem_raw[];
  const uintptr_t base =
      (reinterpret_cast<uintptr_t>(smem_raw) + kAlign - 1) & ~uintptr_t(kAlign - 1);
  const unsigned char* buffers = reinterpret_cast<const unsigned char*>(base);
  const uint32_t buffers_addr = smem_addr(buffers);
  const uint32_t full = buffers_addr + kFullOffset;    // full[s] = full + 8 * s
  const uint32_t empty = buffers_addr + kEmptyOffset;  // empty[s] = empty + 8 * s

  if (threadIdx.x == 0) {
    for (unsigned s = 0; s < STAGES; ++s) {
      mbar_init(full + 8u * s, 1u);
      mbar_init(empty + 8u * s, CONSUMER_WARPS);
    }
    fence_barrier_init();
  }
  __syncthreads();

  const int tiles_c = (cols + BOX_COLS - 1) / BOX_COLS;
  const int tiles = ((rows + BOX_ROWS - 1) / BOX_ROWS) * tiles_c;
  const unsigned warp = threadIdx.x / 32u;

  if (warp == 0) {
    if (threadIdx.x != 0) return;
    unsigned i = 0;
    for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x, ++i) {
      const unsigned s = i % STAGES;
      const unsigned round = i / STAGES;
      // The first round finds every stage free: waiting on the parity of the phase before
      // phase 0 returns at once.
      mbar_wait(empty + 8u * s, (round & 1u) ^ 1u, timeout_flag);
      mbar_arrive_expect_tx(full + 8u * s, TX_BYTES);
      tma_load_2d(buffers_addr + s * kStageStride, &desc, (tile % tiles_c) * BOX_COLS,
                  (tile / tiles_c) * BOX_ROWS, full + 8u * s);
    }
    return;
  }

  const unsigned lane_id = threadIdx.x - 32u;  // 0 .. 32 * CONSUMER_WARPS - 1
  unsigned i = 0;
  for (int tile = blockIdx.x; tile < tiles; tile += gridDim.x, ++i) {
    const unsigned s = i % STAGES;
    const unsigned round = i / STAGES;
    const int row0 = (tile / tiles_c) * BOX_ROWS;
    const int col0 = (tile % tiles_c) * BOX_COLS;
    mbar_wait(full + 8u * s, round & 1u, timeout_flag);
    const unsigned char* stage = buffers + s * kStageStride;
    for (unsigned e = lane_id; e < kBoxElems; e += 32u * CONSUMER_WARPS) {
      const int r = static_cast<int>(e / BOX_COLS);
      const int c = static_cast<int>(e % BOX_COLS);
      const float v = *reinterpret_cast<const float*>(stage + swizzled(e * 4u));
      if (row0 + r < rows && col0 + c < cols)
        dst[static_cast<long long>(row0 + r) * cols + col0 + c] = v;
    }
    __syncwarp();
    if ((threadIdx.x & 31u) == 0) mbar_arrive(empty + 8u * s);
  }
}

// ---------------------------------------------------------------- host

const char* swizzle_name() {
  static const char* names[] = {"none", "32B", "64B", "128B"};
  return names[SWIZZLE];
}

struct Result {
  const char* encode = "not-run";
  const char* launch = "not-run";
  const char* sync = "not-run";
  bool timeout = false;
  long long mismatches = -1;
  long long first_bad = -1;
  float got = 0.f, want = 0.f;
  int rows = 0, cols = 0, blocks = 0;
  char device[256] = "";
  int cc = 0;
  const char* error_at = "";
  const char* error = "cudaSuccess";
};

void print(const Result& r) {
  std::printf(
      "{\"program\": \"tma_pipeline_2d\", \"box_rows\": %d, \"box_cols\": %d, "
      "\"buffer_elems\": %d, \"buffer_bytes\": %u, \"tx_bytes\": %d, \"box_bytes\": %u, "
      "\"stages\": %d, \"swizzle\": \"%s\", \"shared_bytes\": %u, \"threads\": %u, "
      "\"rows\": %d, \"cols\": %d, \"blocks\": %d, \"device\": \"%s\", \"cc\": %d, "
      "\"encode\": \"%s\", \"launch\": \"%s\", \"sync\": \"%s\", \"timeout\": %s, "
      "\"error_at\": \"%s\", \"error\": \"%s\", \"mismatches\": %lld",
      BOX_ROWS, BOX_COLS, BUFFER_ELEMS, kBufferBytes, TX_BYTES, kBoxElems * 4u, STAGES,
      swizzle_name(), kSharedBytes, kThreads, r.rows, r.cols, r.blocks, r.device, r.cc, r.encode,
      r.launch, r.sync, r.timeout ? "true" : "false", r.error_at, r.error, r.mismatches);
  if (r.first_bad >= 0)
    std::printf(
        ", \"first_mismatch\": {\"row\": %lld, \"col\": %lld, \"got\": \"%a\", \"want\": \"%a\"}",
        r.first_bad / r.cols, r.first_bad % r.cols, r.got, r.want);
  std::printf("}\n");
  std::fflush(stdout);
}

int fail_runtime(Result& r, const char* where, cudaError_t e) {
  r.error_at = where;
  r.error = cudaGetErrorName(e);
  print(r);
  return kRuntime;
}

#define RT(where, call)                                       \
  do {                                                        \
    cudaError_t e_ = (call);                                  \
    if (e_ != cudaSuccess) return fail_runtime(r, where, e_); \
  } while (0)

int run(int argc, char** argv) {
  Result r;
  r.rows = 1024;
  r.cols = 1024;
  int blocks = 0;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--rows") && i + 1 < argc) {
      r.rows = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--cols") && i + 1 < argc) {
      r.cols = std::atoi(argv[++i]);
    } else if (!std::strcmp(argv[i], "--blocks") && i + 1 < argc) {
      blocks = std::atoi(argv[++i]);
    } else {
      std::fprintf(stderr, "usage: %s [--rows R] [--cols C] [--blocks N]\n", argv[0]);
      return kUsage;
    }
  }
  if (r.rows <= 0 || r.cols <= 0 || (r.cols * 4) % 16 != 0 ||
      static_cast<long long>(r.rows) * r.cols > (1ll << 30)) {
    std::fprintf(stderr, "--rows/--cols: positive, cols a multiple of 4, at most 2^30 elements\n");
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

  const size_t count = static_cast<size_t>(r.rows) * r.cols;
  const size_t bytes = count * sizeof(float);
  std::vector<float> host_src(count), host_dst(count);
  fill_random(host_src, 0x2545f491u);
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
  const cuuint64_t global_dim[2] = {static_cast<cuuint64_t>(r.cols),
                                    static_cast<cuuint64_t>(r.rows)};
  const cuuint64_t global_strides[1] = {static_cast<cuuint64_t>(r.cols) * sizeof(float)};
  const cuuint32_t box_dim[2] = {BOX_COLS, BOX_ROWS};
  const cuuint32_t element_strides[2] = {1, 1};
  const CUtensorMapSwizzle swizzles[] = {CU_TENSOR_MAP_SWIZZLE_NONE, CU_TENSOR_MAP_SWIZZLE_32B,
                                         CU_TENSOR_MAP_SWIZZLE_64B, CU_TENSOR_MAP_SWIZZLE_128B};
  const CUresult enc = encode_tiled(
      &desc, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, src, global_dim, global_strides, box_dim,
      element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, swizzles[SWIZZLE],
      CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  r.encode = cu_name(enc);
  if (enc != CUDA_SUCCESS) {
    print(r);
    return kEncode;
  }

  RT("cudaFuncSetAttribute",
     cudaFuncSetAttribute(pipeline_2d, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          kSharedBytes));
  unsigned* device_flag = nullptr;
  RT("cudaHostGetDevicePointer", cudaHostGetDevicePointer(&device_flag, timeout_flag, 0));
  pipeline_2d<<<r.blocks, kThreads, kSharedBytes>>>(desc, dst, r.rows, r.cols, device_flag);
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
  for (size_t i = 0; i < count; ++i) {
    if (std::memcmp(&host_dst[i], &host_src[i], sizeof(float)) != 0) {
      if (r.first_bad < 0) {
        r.first_bad = static_cast<long long>(i);
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
