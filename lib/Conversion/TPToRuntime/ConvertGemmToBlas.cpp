//===- ConvertGemmToBlas.cpp - Contractions -> OpenBLAS through tprt ------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The GemmTarget of both lowerings: every GEMM the shared recogniser finds
// (Gemm.h) becomes tprt_rt_gemm(ctx, &desc, A, B, C, D, bias) with a
// constant descriptor: D = op(A) op(B) + C, C left out (null) where D's
// zeroing fill was dropped; with `epilogues` (the CUDA lowering), the
// bias, residual and GELU loops around it fold into the call as well. f16
// and bf16 accumulate in f32.
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
  BlasGemmTarget(ModuleOp module, bool narrowOnly, bool epilogues)
      : descriptors(module), narrowOnly(narrowOnly), epilogues(epilogues) {}

  bool supportsElementType(Type type) const override {
    if (isa<Float16Type, BFloat16Type>(type))
      return true;
    return !narrowOnly && isa<Float32Type>(type);
  }

  bool supportsEpilogues() const override { return epilogues; }

  void emitGemm(OpBuilder &b, Location loc, Value rankContext, const Gemm &g,
                Value a, Value bm, const GemmEpilogue &epilogue,
                const GemmOffsets &offsets) const override {
    emitGemmCall(b, loc, descriptors, rankContext, gemmDescriptor(g, epilogue),
                 a, bm, epilogue, offsets);
  }

private:
  mutable GemmDescriptors descriptors;
  bool narrowOnly, epilogues;
};

struct ConvertGemmToBlasPass
    : public tp::impl::ConvertGemmToBlasPassBase<ConvertGemmToBlasPass> {
  using Base::Base;
  void runOnOperation() override {
    ModuleOp module = getOperation();
    BlasGemmTarget target(module, narrowOnly, epilogues);
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() && func.getNumArguments() != 0 &&
          isa<LLVM::LLVMPointerType>(func.getArgument(0).getType()))
        convertGemms(func, target);
  }
};

} // namespace
