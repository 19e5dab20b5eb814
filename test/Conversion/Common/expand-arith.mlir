// RUN: tp-opt %s --tp-expand-arith | FileCheck %s

// Tests that ceil/floor division and bf16 conversions are expanded, and that
// float minimum/maximum are kept for LLVM's intrinsics.

// CHECK-LABEL: func.func @expand
// CHECK-NOT: arith.ceildivsi
// CHECK-NOT: arith.floordivsi
// CHECK-NOT: arith.extf
// CHECK: arith.maxnumf %{{.*}}, %{{.*}} : f32
// CHECK: arith.maximumf %{{.*}}, %{{.*}} : f32
// CHECK: arith.minnumf %{{.*}}, %{{.*}} : f32
// CHECK: arith.minimumf %{{.*}}, %{{.*}} : f32
func.func @expand(%a: i64, %b: i64, %h: bf16, %x: f32, %y: f32)
    -> (i64, i64, f32, f32, f32, f32, f32) {
  %q = arith.ceildivsi %a, %b : i64
  %r = arith.floordivsi %a, %b : i64
  %e = arith.extf %h : bf16 to f32
  %m0 = arith.maxnumf %x, %y : f32
  %m1 = arith.maximumf %x, %y : f32
  %m2 = arith.minnumf %x, %y : f32
  %m3 = arith.minimumf %x, %y : f32
  return %q, %r, %e, %m0, %m1, %m2, %m3 : i64, i64, f32, f32, f32, f32, f32
}
