module {
  tt.func public @pointer_dot(%arg0: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %arg1: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %arg2: !tt.ptr<f16> {tt.divisibility = 16 : i32}, %arg3: i32 {tt.divisibility = 16 : i32}) attributes {noinline = false} {
    %0 = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %1 = tt.make_range {end = 128 : i32, start = 0 : i32} : tensor<128xi32>
    %2 = tt.make_range {end = 64 : i32, start = 0 : i32} : tensor<64xi32>
    %3 = tt.call @triton.language.standard.zeros__Tc128_c128T_cfp32() : () -> tensor<128x128xf32>
    %c0_i32 = arith.constant 0 : i32
    %c64_i32 = arith.constant 64 : i32
    %4 = arith.bitcast %c0_i32 : i32 to i32
    %5 = arith.bitcast %arg3 : i32 to i32
    %6 = arith.bitcast %c64_i32 : i32 to i32
    %7 = ub.poison : i32
    %8 = scf.for %arg4 = %4 to %5 step %6 iter_args(%arg5 = %3) -> (tensor<128x128xf32>)  : i32 {
      %24 = tt.expand_dims %0 {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
      %25 = tt.splat %arg3 : i32 -> tensor<128x1xi32>
      %26 = arith.extsi %24 : tensor<128x1xi32> to tensor<128x1xi64>
      %27 = arith.extsi %25 : tensor<128x1xi32> to tensor<128x1xi64>
      %28 = arith.muli %26, %27 : tensor<128x1xi64>
      %c2147483647_i64_2 = arith.constant 2147483647 : i64
      %c-2147483648_i64_3 = arith.constant -2147483648 : i64
      %cst_4 = arith.constant dense<2147483647> : tensor<128x1xi64>
      %29 = arith.cmpi sle, %28, %cst_4 : tensor<128x1xi64>
      %cst_5 = arith.constant dense<-2147483648> : tensor<128x1xi64>
      %30 = arith.cmpi sge, %28, %cst_5 : tensor<128x1xi64>
      %31 = arith.andi %29, %30 : tensor<128x1xi1>
      %32 = arith.muli %24, %25 : tensor<128x1xi32>
      %33 = tt.splat %arg0 : !tt.ptr<f16> -> tensor<128x1x!tt.ptr<f16>>
      %34 = tt.addptr %33, %32 : tensor<128x1x!tt.ptr<f16>>, tensor<128x1xi32>
      %35 = tt.splat %arg4 : i32 -> tensor<64xi32>
      %36 = arith.extsi %35 : tensor<64xi32> to tensor<64xi64>
      %37 = arith.extsi %2 : tensor<64xi32> to tensor<64xi64>
      %38 = arith.addi %36, %37 : tensor<64xi64>
      %c2147483647_i64_6 = arith.constant 2147483647 : i64
      %c-2147483648_i64_7 = arith.constant -2147483648 : i64
      %cst_8 = arith.constant dense<2147483647> : tensor<64xi64>
      %39 = arith.cmpi sle, %38, %cst_8 : tensor<64xi64>
      %cst_9 = arith.constant dense<-2147483648> : tensor<64xi64>
      %40 = arith.cmpi sge, %38, %cst_9 : tensor<64xi64>
      %41 = arith.andi %39, %40 : tensor<64xi1>
      %42 = arith.addi %35, %2 : tensor<64xi32>
      %43 = tt.expand_dims %42 {axis = 0 : i32} : tensor<64xi32> -> tensor<1x64xi32>
      %44 = tt.broadcast %34 : tensor<128x1x!tt.ptr<f16>> -> tensor<128x64x!tt.ptr<f16>>
      %45 = tt.broadcast %43 : tensor<1x64xi32> -> tensor<128x64xi32>
      %46 = tt.addptr %44, %45 : tensor<128x64x!tt.ptr<f16>>, tensor<128x64xi32>
      %47 = tt.load %46 : tensor<128x64x!tt.ptr<f16>>
      %48 = tt.splat %arg4 : i32 -> tensor<64xi32>
      %49 = arith.extsi %48 : tensor<64xi32> to tensor<64xi64>
      %50 = arith.extsi %2 : tensor<64xi32> to tensor<64xi64>
      %51 = arith.addi %49, %50 : tensor<64xi64>
      %c2147483647_i64_10 = arith.constant 2147483647 : i64
      %c-2147483648_i64_11 = arith.constant -2147483648 : i64
      %cst_12 = arith.constant dense<2147483647> : tensor<64xi64>
      %52 = arith.cmpi sle, %51, %cst_12 : tensor<64xi64>
      %cst_13 = arith.constant dense<-2147483648> : tensor<64xi64>
      %53 = arith.cmpi sge, %51, %cst_13 : tensor<64xi64>
      %54 = arith.andi %52, %53 : tensor<64xi1>
      %55 = arith.addi %48, %2 : tensor<64xi32>
      %56 = tt.expand_dims %55 {axis = 1 : i32} : tensor<64xi32> -> tensor<64x1xi32>
      %c128_i32_14 = arith.constant 128 : i32
      %cst_15 = arith.constant dense<128> : tensor<64x1xi32>
      %57 = arith.extsi %56 : tensor<64x1xi32> to tensor<64x1xi64>
      %58 = arith.extsi %cst_15 : tensor<64x1xi32> to tensor<64x1xi64>
      %59 = arith.muli %57, %58 : tensor<64x1xi64>
      %c2147483647_i64_16 = arith.constant 2147483647 : i64
      %c-2147483648_i64_17 = arith.constant -2147483648 : i64
      %cst_18 = arith.constant dense<2147483647> : tensor<64x1xi64>
      %60 = arith.cmpi sle, %59, %cst_18 : tensor<64x1xi64>
      %cst_19 = arith.constant dense<-2147483648> : tensor<64x1xi64>
      %61 = arith.cmpi sge, %59, %cst_19 : tensor<64x1xi64>
      %62 = arith.andi %60, %61 : tensor<64x1xi1>
      %63 = arith.muli %56, %cst_15 : tensor<64x1xi32>
      %64 = tt.splat %arg1 : !tt.ptr<f16> -> tensor<64x1x!tt.ptr<f16>>
      %65 = tt.addptr %64, %63 : tensor<64x1x!tt.ptr<f16>>, tensor<64x1xi32>
      %66 = tt.expand_dims %1 {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
      %67 = tt.broadcast %65 : tensor<64x1x!tt.ptr<f16>> -> tensor<64x128x!tt.ptr<f16>>
      %68 = tt.broadcast %66 : tensor<1x128xi32> -> tensor<64x128xi32>
      %69 = tt.addptr %67, %68 : tensor<64x128x!tt.ptr<f16>>, tensor<64x128xi32>
      %70 = tt.load %69 : tensor<64x128x!tt.ptr<f16>>
      %cst_20 = arith.constant 0.000000e+00 : f32
      %71 = tt.dot %47, %70, %arg5, inputPrecision = tf32 : tensor<128x64xf16> * tensor<64x128xf16> -> tensor<128x128xf32>
      scf.yield %71 : tensor<128x128xf32>
    } {tt.warp_specialize}
    %9 = tt.expand_dims %0 {axis = 1 : i32} : tensor<128xi32> -> tensor<128x1xi32>
    %c128_i32 = arith.constant 128 : i32
    %cst = arith.constant dense<128> : tensor<128x1xi32>
    %10 = arith.extsi %9 : tensor<128x1xi32> to tensor<128x1xi64>
    %11 = arith.extsi %cst : tensor<128x1xi32> to tensor<128x1xi64>
    %12 = arith.muli %10, %11 : tensor<128x1xi64>
    %c2147483647_i64 = arith.constant 2147483647 : i64
    %c-2147483648_i64 = arith.constant -2147483648 : i64
    %cst_0 = arith.constant dense<2147483647> : tensor<128x1xi64>
    %13 = arith.cmpi sle, %12, %cst_0 : tensor<128x1xi64>
    %cst_1 = arith.constant dense<-2147483648> : tensor<128x1xi64>
    %14 = arith.cmpi sge, %12, %cst_1 : tensor<128x1xi64>
    %15 = arith.andi %13, %14 : tensor<128x1xi1>
    %16 = arith.muli %9, %cst : tensor<128x1xi32>
    %17 = tt.splat %arg2 : !tt.ptr<f16> -> tensor<128x1x!tt.ptr<f16>>
    %18 = tt.addptr %17, %16 : tensor<128x1x!tt.ptr<f16>>, tensor<128x1xi32>
    %19 = tt.expand_dims %1 {axis = 0 : i32} : tensor<128xi32> -> tensor<1x128xi32>
    %20 = tt.broadcast %18 : tensor<128x1x!tt.ptr<f16>> -> tensor<128x128x!tt.ptr<f16>>
    %21 = tt.broadcast %19 : tensor<1x128xi32> -> tensor<128x128xi32>
    %22 = tt.addptr %20, %21 : tensor<128x128x!tt.ptr<f16>>, tensor<128x128xi32>
    %23 = arith.truncf %8 : tensor<128x128xf32> to tensor<128x128xf16>
    tt.store %22, %23 : tensor<128x128x!tt.ptr<f16>>
    tt.return
  }
  tt.func private @triton.language.standard.zeros__Tc128_c128T_cfp32() -> tensor<128x128xf32> attributes {noinline = false} {
    %cst = arith.constant 0.000000e+00 : f32
    %cst_0 = arith.constant dense<0.000000e+00> : tensor<128x128xf32>
    tt.return %cst_0 : tensor<128x128xf32>
  ^bb1:  // no predecessors
    %0 = ub.poison : tensor<128x128xf32>
    tt.return %0 : tensor<128x128xf32>
  }
}

{-#
  external_resources: {
    mlir_reproducer: {
      pipeline: "any(inline{default-pipeline=canonicalize inlining-threshold=4294967295 max-iterations=4 },canonicalize{cse-between-iterations=false    max-iterations=10 max-num-rewrites=-1 region-simplify=normal test-convergence=false top-down=true},triton-combine,triton-reorder-broadcast,cse,symbol-dce,triton-loop-unroll)",
      disable_threading: false,
      verify_each: false
    }
  }
#-}
