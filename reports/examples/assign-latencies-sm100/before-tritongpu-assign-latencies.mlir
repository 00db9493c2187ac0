#blocked = #ttg.blocked<{sizePerThread = [1, 32], threadsPerWarp = [16, 2], warpsPerCTA = [4, 1], order = [0, 1]}>
#blocked1 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [4, 1], order = [1, 0]}>
#blocked2 = #ttg.blocked<{sizePerThread = [1, 1], threadsPerWarp = [1, 32], warpsPerCTA = [2, 2], order = [1, 0]}>
#shared = #ttg.nvmma_shared<{swizzlingByteWidth = 64, transposed = false, elementBitWidth = 16}>
#shared1 = #ttg.nvmma_shared<{swizzlingByteWidth = 128, transposed = false, elementBitWidth = 16}>
#smem = #ttg.shared_memory
#tmem = #ttng.tensor_memory_encoding<blockM = 64, blockN = 64, unpacked = true>
module attributes {"ttg.num-ctas" = 1 : i32, "ttg.num-warps" = 4 : i32, ttg.target = "cuda:100", "ttg.threads-per-warp" = 32 : i32} {
  tt.func public @gemm_prefetch(%arg0: !tt.ptr<f16>, %arg1: !tt.ptr<f16>, %arg2: !tt.ptr<f16>, %arg3: i32, %arg4: i32, %arg5: i32) attributes {noinline = false} {
    %false = arith.constant false
    %true = arith.constant true
    %c1_i64 = arith.constant 1 : i64
    %c64_i32 = arith.constant 64 : i32
    %c0_i32 = arith.constant 0 : i32
    %c32_i32 = arith.constant 32 : i32
    %cst = arith.constant dense<0.000000e+00> : tensor<64x64xf32, #blocked>
    %0 = arith.extsi %arg5 : i32 to i64
    %1 = tt.make_tensor_descriptor %arg0, [%arg3, %arg5], [%0, %c1_i64] : <f16>, <tensor<64x32xf16, #shared>>
    %2 = arith.extsi %arg4 : i32 to i64
    %3 = tt.make_tensor_descriptor %arg1, [%arg5, %arg4], [%2, %c1_i64] : <f16>, <tensor<32x64xf16, #shared1>>
    %4 = tt.make_tensor_descriptor %arg2, [%arg3, %arg4], [%2, %c1_i64] : <f16>, <tensor<64x64xf16, #shared1>>
    %5 = tt.get_program_id x : i32
    %6 = arith.muli %5, %c64_i32 : i32
    %7 = tt.get_program_id y : i32
    %8 = arith.muli %7, %c64_i32 : i32
    %9 = tt.descriptor_load %1[%6, %c0_i32] : !tt.tensordesc<tensor<64x32xf16, #shared>> -> tensor<64x32xf16, #blocked1>
    %10 = tt.descriptor_load %3[%c0_i32, %8] : !tt.tensordesc<tensor<32x64xf16, #shared1>> -> tensor<32x64xf16, #blocked2>
    %result, %token = ttng.tmem_alloc : () -> (!ttg.memdesc<64x64xf32, #tmem, #ttng.tensor_memory, mutable>, !ttg.async.token)
    %11 = ttng.tmem_store %cst, %result[%token], %true : tensor<64x64xf32, #blocked> -> !ttg.memdesc<64x64xf32, #tmem, #ttng.tensor_memory, mutable>
    %12:4 = scf.for %arg6 = %c0_i32 to %arg5 step %c32_i32 iter_args(%arg7 = %9, %arg8 = %10, %arg9 = %false, %arg10 = %11) -> (tensor<64x32xf16, #blocked1>, tensor<32x64xf16, #blocked2>, i1, !ttg.async.token)  : i32 {
      %15 = ttg.local_alloc %arg8 : (tensor<32x64xf16, #blocked2>) -> !ttg.memdesc<32x64xf16, #shared1, #smem>
      %16 = ttg.local_alloc %arg7 : (tensor<64x32xf16, #blocked1>) -> !ttg.memdesc<64x32xf16, #shared, #smem>
      %17 = arith.addi %arg6, %c32_i32 : i32
      %18 = arith.cmpi slt, %17, %arg5 : i32
      %19:2 = scf.if %18 -> (tensor<64x32xf16, #blocked1>, tensor<32x64xf16, #blocked2>) {
        %21 = tt.descriptor_load %1[%6, %17] : !tt.tensordesc<tensor<64x32xf16, #shared>> -> tensor<64x32xf16, #blocked1>
        %22 = tt.descriptor_load %3[%17, %8] : !tt.tensordesc<tensor<32x64xf16, #shared1>> -> tensor<32x64xf16, #blocked2>
        scf.yield %21, %22 : tensor<64x32xf16, #blocked1>, tensor<32x64xf16, #blocked2>
      } else {
        scf.yield %arg7, %arg8 : tensor<64x32xf16, #blocked1>, tensor<32x64xf16, #blocked2>
      }
      %20 = ttng.tc_gen5_mma %16, %15, %result[%arg10], %arg9, %true : !ttg.memdesc<64x32xf16, #shared, #smem>, !ttg.memdesc<32x64xf16, #shared1, #smem>, !ttg.memdesc<64x64xf32, #tmem, #ttng.tensor_memory, mutable>
      scf.yield %19#0, %19#1, %true, %20 : tensor<64x32xf16, #blocked1>, tensor<32x64xf16, #blocked2>, i1, !ttg.async.token
    }
    %result_0, %token_1 = ttng.tmem_load %result[%12#3] : !ttg.memdesc<64x64xf32, #tmem, #ttng.tensor_memory, mutable> -> tensor<64x64xf32, #blocked>
    %13 = arith.truncf %result_0 : tensor<64x64xf32, #blocked> to tensor<64x64xf16, #blocked>
    %14 = ttg.convert_layout %13 : tensor<64x64xf16, #blocked> -> tensor<64x64xf16, #blocked2>
    tt.descriptor_store %4[%6, %8], %14 : !tt.tensordesc<tensor<64x64xf16, #shared1>>, tensor<64x64xf16, #blocked2>
    tt.return
  }
}
