// RUN: tp-opt %s --tp-report -o /dev/null 2>&1 | FileCheck %s
// RUN: tp-opt %s --tp-report=format=json -o /dev/null 2>&1 | FileCheck %s --check-prefix=JSON
// RUN: tp-opt %s --tp-report="output=%t.json format=json" -o /dev/null && FileCheck %s --check-prefix=JSON < %t.json
// RUN: not tp-opt %s --tp-report=format=yaml -o /dev/null 2>&1 | FileCheck %s --check-prefix=BAD

// Tests the report of a local-form function with one collective of each
// kind on a 4-device group: bytes per device by the ring formulas
// (S = 32768 B: 2*3/4*S, 3/4*S, 3/4*S, 3/16*S with S the group's tensor, 0),
// totals per kind and overall, and per-device memory; an argument's
// tp.name is reported beside it.

tp.mesh @world ["tp" = 4]

// CHECK-LABEL: tp-report @local on @world ["tp" = 4] (4 devices, local form)
// CHECK: %arg0 : tensor<16x512xf32> #tp.sharding<@world, [{}, {}], partial = ["tp"]> (32768 B per device)
// CHECK: %arg1 (h.0.mlp.c_fc.weight) : tensor<16x128xf32>
// CHECK: %0 : tensor<16x512xf32> (tp.all_reduce result) (32768 B per device)
// CHECK: %2 : tensor<4x512xf32> (tp.reduce_scatter result) (8192 B per device)
// CHECK: collectives:
// CHECK-NEXT: all_reduce sum over ["tp"] (n=4) tensor<16x512xf32>: 49152 B = 2(n-1)/n*S, S = 32768 B
// CHECK-NEXT: all_gather over ["tp"] (n=4) tensor<16x128xf32>: 24576 B = (n-1)/n*S, S = 32768 B
// CHECK-NEXT: reduce_scatter sum over ["tp"] (n=4) tensor<16x512xf32>: 24576 B = (n-1)/n*S, S = 32768 B
// CHECK-NEXT: all_to_all over ["tp"] (n=4) tensor<4x512xf32>: 6144 B = (n-1)/n^2*S, S = 32768 B
// CHECK-NEXT: all_slice over ["tp"] (n=4) tensor<16x512xf32>: 0 B = 0, S = 32768 B
// CHECK: totals:
// CHECK-NEXT: all_gather: 1, 24576 B
// CHECK-NEXT: all_reduce: 1, 49152 B
// CHECK-NEXT: all_slice: 1, 0 B
// CHECK-NEXT: all_to_all: 1, 6144 B
// CHECK-NEXT: reduce_scatter: 1, 24576 B
// CHECK-NEXT: all: 5, 104448 B per device
// CHECK: memory per device:
// CHECK-NEXT: arguments: 40960 B

// JSON: "function": "local"
// JSON: "all": {
// JSON-NEXT: "bytes_per_device": 104448,
// JSON-NEXT: "count": 5

// BAD: tp-report: unknown format 'yaml'; expected 'text' or 'json'
func.func @local(%x: tensor<16x512xf32> {tp.sharding = #tp.sharding<@world, [{}, {}], partial = ["tp"]>},
                 %y: tensor<16x128xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>, tp.name = "h.0.mlp.c_fc.weight"})
    attributes {tp.spmd = @world} {
  %a = tp.all_reduce sum %x over @world ["tp"] : tensor<16x512xf32>
  %b = tp.all_gather %y over @world ["tp"] dim 1 : tensor<16x128xf32> -> tensor<16x512xf32>
  %c = tp.reduce_scatter sum %x over @world ["tp"] dim 0 : tensor<16x512xf32> -> tensor<4x512xf32>
  %d = tp.all_to_all %c over @world ["tp"] split 1 concat 0 : tensor<4x512xf32> -> tensor<16x128xf32>
  %e = tp.all_slice %a over @world ["tp"] dim 0 : tensor<16x512xf32> -> tensor<4x512xf32>
  return
}

// A function in global form before propagation: what nothing annotated is open,
// counted whole on every device.
// CHECK-LABEL: tp-report @global on @world ["tp" = 4] (4 devices, global form)
// CHECK-NEXT: values:
// CHECK-NEXT: %arg0 : tensor<16x512xf32> (open: not annotated or propagated; counted whole) (32768 B per device)
// CHECK-NEXT: %arg1 : tensor<512x128xf32> #tp.sharding<@world, [{}, {"tp"}]> (65536 B per device)
func.func @global(%x: tensor<16x512xf32>,
                  %w: tensor<512x128xf32> {tp.sharding = #tp.sharding<@world, [{}, {"tp"}]>})
    -> tensor<16x128xf32> {
  %e = tensor.empty() : tensor<16x128xf32>
  %y = linalg.matmul ins(%x, %w : tensor<16x512xf32>, tensor<512x128xf32>)
                     outs(%e : tensor<16x128xf32>) -> tensor<16x128xf32>
  return %y : tensor<16x128xf32>
}
