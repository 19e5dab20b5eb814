//===- ConvertGemmToBlas.cpp - Contractions -> OpenBLAS through tprt ------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The CPU's GemmTarget: every GEMM the shared recogniser finds (Gemm.h) on
// f32 becomes tprt_rt_sgemm(ctx, transA, transB, accumulate, M, N, K, A,
// lda, B, ldb, C, ldc, batch0, batch1, strides...): C += op(A) op(B), or
// C = op(A) op(B) where C's zeroing fill was dropped (accumulate 0); f16 and
// bf16 go to
// tprt_rt_gemm_narrow, which takes the dtype after the context and
// accumulates in f32.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Common/Gemm.h"
#include "tp/Conversion/Common/RuntimeCalls.h"
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"

namespace mlir::tp {
#define GEN_PASS_DEF_CONVERTGEMMTOBLASPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

class BlasGemmTarget final : public GemmTarget {
public:
  BlasGemmTarget(ModuleOp module, bool narrowOnly)
      : module(module), narrowOnly(narrowOnly) {}

  bool supportsElementType(Type type) const override {
    if (isa<Float16Type, BFloat16Type>(type))
      return true;
    return !narrowOnly && isa<Float32Type>(type);
  }

  void emitGemm(OpBuilder &b, Location loc, Value rankContext, const Gemm &g,
                Value a, Value bm, Value c, bool accumulate) const override {
    MLIRContext *ctx = b.getContext();
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    Type i64 = b.getI64Type(), i32 = b.getI32Type();
    bool narrow = !g.elementType.isF32();
    // tprt_rt_sgemm, or tprt_rt_gemm_narrow (f16/bf16 storage, f32
    // accumulation), which takes the dtype code after the context.
    SmallVector<Type> inputs = {ptr, i32, i32, i32, i64, i64, i64,
                                ptr, i64, ptr, i64, ptr, i64, i64,
                                i64, i64, i64, i64, i64, i64, i64};
    if (narrow)
      inputs.insert(inputs.begin() + 1, i32);
    func::FuncOp callee = declareRuntimeFunction(
        module, narrow ? "tprt_rt_gemm_narrow" : "tprt_rt_sgemm", inputs, {});
    auto constant = [&](int64_t v, Type t) -> Value {
      return arith::ConstantIntOp::create(b, loc, v,
                                          cast<IntegerType>(t).getWidth());
    };
    auto batchStride = [&](const GemmOperand &v, unsigned i) -> int64_t {
      return i < v.batchStrides.size() ? v.batchStrides[i] : 0;
    };
    SmallVector<Value> args = {rankContext,
                               constant(g.a.transposed, i32),
                               constant(g.b.transposed, i32),
                               constant(accumulate, i32),
                               constant(g.m, i64),
                               constant(g.n, i64),
                               constant(g.k, i64),
                               bufferPointer(b, loc, a),
                               constant(g.a.leadingDim, i64),
                               bufferPointer(b, loc, bm),
                               constant(g.b.leadingDim, i64),
                               bufferPointer(b, loc, c),
                               constant(g.c.leadingDim, i64),
                               constant(g.batchSize(0), i64),
                               constant(g.batchSize(1), i64),
                               constant(batchStride(g.a, 0), i64),
                               constant(batchStride(g.a, 1), i64),
                               constant(batchStride(g.b, 0), i64),
                               constant(batchStride(g.b, 1), i64),
                               constant(batchStride(g.c, 0), i64),
                               constant(batchStride(g.c, 1), i64)};
    if (narrow)
      args.insert(args.begin() + 1,
                  constant(g.elementType.isF16() ? 2 : 3, i32)); // tprt_dtype
    func::CallOp::create(b, loc, callee, args);
  }

private:
  ModuleOp module;
  bool narrowOnly;
};

struct ConvertGemmToBlasPass
    : public tp::impl::ConvertGemmToBlasPassBase<ConvertGemmToBlasPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    BlasGemmTarget target(module, narrowOnly);
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && func.getNumArguments() != 0 &&
          isa<LLVM::LLVMPointerType>(func.getArgument(0).getType()))
        convertGemms(func, target);
  }
};

} // namespace
