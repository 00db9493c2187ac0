#blocked = #ttg.blocked<{sizePerThread = [1, 32], threadsPerWarp = [16, 2], warpsPerCTA = [4, 1], order = [0, 1]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#tmem = #ttng.tensor_memory_encoding<blockM = 64, blockN = 64, unpacked = true>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:100", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @gemm_prefetch(%arg3: i32, %arg5: i32, %red0: !ttg.memdesc<64x32xf16, #shared, #smem>, %red1: tensor<32x64xf16, #blocked>, %red2: tensor<64x32xf16, #blocked>) attributes {noinline = false} {
    %false = arith.constant false
    %result, %token = ttng.tmem_alloc : () -> (!ttg.memdesc<64x64xf32, #tmem, #ttng.tensor_memory, mutable>, !ttg.async.token)
    %12:4 = scf.for %arg6 = %arg3 to %arg5 step %arg3 iter_args(%arg7 = %red2, %arg8 = %red1, %arg9 = %false, %arg10 = %token) -> (tensor<64x32xf16, #blocked>, tensor<32x64xf16, #blocked>, i1, !ttg.async.token)  : i32 {
      %15 = ttg.local_alloc %arg8 : (tensor<32x64xf16, #blocked>) -> !ttg.memdesc<32x64xf16, #shared, #smem>
      %19:2 = scf.if %arg9 -> (tensor<64x32xf16, #blocked>, tensor<32x64xf16, #blocked>) {
        scf.yield %arg7, %arg8 : tensor<64x32xf16, #blocked>, tensor<32x64xf16, #blocked>
      } else {
        scf.yield %arg7, %arg8 : tensor<64x32xf16, #blocked>, tensor<32x64xf16, #blocked>
      }
      %20 = ttng.tc_gen5_mma %red0, %15, %result[%arg10], %arg9, %false : !ttg.memdesc<64x32xf16, #shared, #smem>, !ttg.memdesc<32x64xf16, #shared, #smem>, !ttg.memdesc<64x64xf32, #tmem, #ttng.tensor_memory, mutable>
      scf.yield %19#0, %19#1, %false, %20 : tensor<64x32xf16, #blocked>, tensor<32x64xf16, #blocked>, i1, !ttg.async.token
    }
    tt.return
  }
}
