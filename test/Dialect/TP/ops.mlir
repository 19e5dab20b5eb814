// RUN: tp-opt %s --split-input-file | tp-opt --split-input-file | FileCheck %s
// RUN: tp-opt %s --split-input-file --mlir-print-op-generic | tp-opt --split-input-file | FileCheck %s

// Tests that meshes of one, two and three axes round-trip.

// CHECK: tp.mesh @world ["tp" = 4]
// CHECK: tp.mesh @grid ["dp" = 2, "tp" = 4]
// CHECK: tp.mesh @cube ["x" = 2, "y" = 2, "z" = 2]
// CHECK: tp.mesh @single ["tp" = 1]
tp.mesh @world ["tp" = 4]
tp.mesh @grid ["dp" = 2, "tp" = 4]
tp.mesh @cube ["x" = 2, "y" = 2, "z" = 2]
tp.mesh @single ["tp" = 1]

// -----

// Tests that tp.annotate and tp.reshard round-trip, with split, replicated,
// multi-axis and partial shardings, on static and dynamic shapes.

tp.mesh @grid ["dp" = 2, "tp" = 4]

// CHECK-LABEL: func.func @sharding_ops
// CHECK-SAME: (%[[X:.*]]: tensor<16x512xf32>, %[[D:.*]]: tensor<?x512xbf16>)
func.func @sharding_ops(%x: tensor<16x512xf32>, %d: tensor<?x512xbf16>)
    -> (tensor<16x512xf32>, tensor<?x512xbf16>) {
  // CHECK: %[[A:.*]] = tp.annotate %[[X]] <@grid, [{}, {"tp"}]> : tensor<16x512xf32>
  %a = tp.annotate %x <@grid, [{}, {"tp"}]> : tensor<16x512xf32>
  // CHECK: %[[B:.*]] = tp.reshard %[[A]] <@grid, [{"dp", "tp"}, {}]> : tensor<16x512xf32>
  %b = tp.reshard %a <@grid, [{"dp", "tp"}, {}]> : tensor<16x512xf32>
  // CHECK: %[[C:.*]] = tp.annotate %[[B]] <@grid, [{"dp"}, {}], partial = ["tp"]> : tensor<16x512xf32>
  %c = tp.annotate %b <@grid, [{"dp"}, {}], partial = ["tp"]> : tensor<16x512xf32>
  // CHECK: %[[E:.*]] = tp.reshard %[[D]] <@grid, [{}, {"tp", "dp"}]> : tensor<?x512xbf16>
  %e = tp.reshard %d <@grid, [{}, {"tp", "dp"}]> : tensor<?x512xbf16>
  // CHECK: return %[[C]], %[[E]]
  return %c, %e : tensor<16x512xf32>, tensor<?x512xbf16>
}

// -----

// Tests that every collective round-trips with each reduction kind and with
// single- and multi-axis groups.

tp.mesh @grid ["dp" = 2, "tp" = 4]

// CHECK-LABEL: func.func @collectives
// CHECK-SAME: attributes {tp.spmd = @grid}
func.func @collectives(%x: tensor<16x128xf32>, %h: tensor<8x64xf16>) attributes {tp.spmd = @grid} {
  // CHECK: tp.all_reduce sum %{{.*}} over @grid ["tp"] : tensor<16x128xf32>
  %0 = tp.all_reduce sum %x over @grid ["tp"] : tensor<16x128xf32>
  // CHECK: tp.all_reduce max %{{.*}} over @grid ["dp", "tp"] : tensor<16x128xf32>
  %1 = tp.all_reduce max %x over @grid ["dp", "tp"] : tensor<16x128xf32>
  // CHECK: tp.all_reduce min %{{.*}} over @grid ["dp"] : tensor<8x64xf16>
  %2 = tp.all_reduce min %h over @grid ["dp"] : tensor<8x64xf16>
  // CHECK: tp.all_gather %{{.*}} over @grid ["tp"] dim 1 : tensor<16x128xf32> -> tensor<16x512xf32>
  %3 = tp.all_gather %x over @grid ["tp"] dim 1 : tensor<16x128xf32> -> tensor<16x512xf32>
  // CHECK: tp.all_gather %{{.*}} over @grid ["dp", "tp"] dim 0 : tensor<16x128xf32> -> tensor<128x128xf32>
  %4 = tp.all_gather %x over @grid ["dp", "tp"] dim 0 : tensor<16x128xf32> -> tensor<128x128xf32>
  // CHECK: tp.reduce_scatter sum %{{.*}} over @grid ["tp"] dim 0 : tensor<16x128xf32> -> tensor<4x128xf32>
  %5 = tp.reduce_scatter sum %x over @grid ["tp"] dim 0 : tensor<16x128xf32> -> tensor<4x128xf32>
  // CHECK: tp.reduce_scatter max %{{.*}} over @grid ["tp", "dp"] dim 1 : tensor<16x128xf32> -> tensor<16x16xf32>
  %6 = tp.reduce_scatter max %x over @grid ["tp", "dp"] dim 1 : tensor<16x128xf32> -> tensor<16x16xf32>
  // CHECK: tp.all_to_all %{{.*}} over @grid ["tp"] split 1 concat 0 : tensor<16x128xf32> -> tensor<64x32xf32>
  %7 = tp.all_to_all %x over @grid ["tp"] split 1 concat 0 : tensor<16x128xf32> -> tensor<64x32xf32>
  // CHECK: tp.all_slice %{{.*}} over @grid ["dp"] dim 1 : tensor<16x128xf32> -> tensor<16x64xf32>
  %8 = tp.all_slice %x over @grid ["dp"] dim 1 : tensor<16x128xf32> -> tensor<16x64xf32>
  // CHECK: tp.axis_index @grid ["tp"] : index
  %9 = tp.axis_index @grid ["tp"] : index
  // CHECK: tp.axis_index @grid ["dp", "tp"] : index
  %10 = tp.axis_index @grid ["dp", "tp"] : index
  return
}

// -----

// Tests that collectives accept dynamic dimensions, both outside and inside
// the collective's dimension.

tp.mesh @world ["tp" = 4]

// CHECK-LABEL: func.func @dynamic
func.func @dynamic(%x: tensor<?x128xf32>) attributes {tp.spmd = @world} {
  // CHECK: tp.all_gather %{{.*}} over @world ["tp"] dim 1 : tensor<?x128xf32> -> tensor<?x512xf32>
  %0 = tp.all_gather %x over @world ["tp"] dim 1 : tensor<?x128xf32> -> tensor<?x512xf32>
  // CHECK: tp.all_gather %{{.*}} over @world ["tp"] dim 0 : tensor<?x128xf32> -> tensor<?x128xf32>
  %1 = tp.all_gather %x over @world ["tp"] dim 0 : tensor<?x128xf32> -> tensor<?x128xf32>
  // CHECK: tp.all_slice %{{.*}} over @world ["tp"] dim 0 : tensor<?x128xf32> -> tensor<?x128xf32>
  %2 = tp.all_slice %x over @world ["tp"] dim 0 : tensor<?x128xf32> -> tensor<?x128xf32>
  return
}

// -----

// Tests the buffer form of every data collective (what one-shot bufferization
// makes): a memref operand, an `into` buffer, no result; all_reduce may change
// the layout.

tp.mesh @world ["tp" = 4]

// CHECK-LABEL: func.func @buffers
func.func @buffers(%x: memref<16x128xf32>, %s: memref<16x128xf32, strided<[256, 1], offset: 128>>,
                   %g: memref<16x512xf32>, %r: memref<4x128xf32>, %a: memref<64x32xf32>,
                   %o: memref<16x128xf32>) attributes {tp.spmd = @world} {
  // CHECK: tp.all_reduce sum %{{.*}} over @world ["tp"] into %{{.*}} : memref<16x128xf32>{{$}}
  tp.all_reduce sum %x over @world ["tp"] into %o : memref<16x128xf32>
  // CHECK: tp.all_reduce max %{{.*}} over @world ["tp"] into %{{.*}} : memref<16x128xf32, strided<[256, 1], offset: 128>> -> memref<16x128xf32>
  tp.all_reduce max %s over @world ["tp"] into %o : memref<16x128xf32, strided<[256, 1], offset: 128>> -> memref<16x128xf32>
  // CHECK: tp.all_gather %{{.*}} over @world ["tp"] dim 1 into %{{.*}} : memref<16x128xf32> -> memref<16x512xf32>
  tp.all_gather %x over @world ["tp"] dim 1 into %g : memref<16x128xf32> -> memref<16x512xf32>
  // CHECK: tp.reduce_scatter sum %{{.*}} over @world ["tp"] dim 0 into %{{.*}} : memref<16x128xf32> -> memref<4x128xf32>
  tp.reduce_scatter sum %x over @world ["tp"] dim 0 into %r : memref<16x128xf32> -> memref<4x128xf32>
  // CHECK: tp.all_to_all %{{.*}} over @world ["tp"] split 0 concat 1 into %{{.*}} : memref<16x128xf32> -> memref<4x512xf32>
  %b = memref.alloc() : memref<4x512xf32>
  tp.all_to_all %x over @world ["tp"] split 0 concat 1 into %b : memref<16x128xf32> -> memref<4x512xf32>
  // CHECK: tp.all_slice %{{.*}} over @world ["tp"] dim 0 into %{{.*}} : memref<16x128xf32> -> memref<4x128xf32>
  tp.all_slice %x over @world ["tp"] dim 0 into %r : memref<16x128xf32> -> memref<4x128xf32>
  return
}
