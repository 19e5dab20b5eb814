//===- LowerBF16Mma.cpp - bf16 mma.sync to NVVM ---------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// MLIR's convert-nvgpu-to-nvvm lowers mma.sync on f16 operands but cannot
// type bf16 ones (see the pass description in Passes.td): this pass writes
// those as nvvm.mma.sync, each register of two bf16 passed as the i32 the
// instruction takes.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/NVVMDialect.h"

namespace mlir::tp {
#define GEN_PASS_DEF_LOWERBF16MMAPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// The registers of `fragment` (vector<R x 2 x bf16>), each as an i32.
SmallVector<Value> packedRegisters(OpBuilder &b, Location loc, Value fragment) {
  auto type = cast<VectorType>(fragment.getType());
  SmallVector<Value> registers;
  for (int64_t r = 0; r < type.getDimSize(0); ++r) {
    Value pair =
        vector::ExtractOp::create(b, loc, fragment, ArrayRef<int64_t>{r});
    Value word = vector::BitCastOp::create(
        b, loc, VectorType::get({1}, b.getI32Type()), pair);
    registers.push_back(
        vector::ExtractOp::create(b, loc, word, ArrayRef<int64_t>{0}));
  }
  return registers;
}

struct LowerBF16MmaPass
    : public tp::impl::LowerBF16MmaPassBase<LowerBF16MmaPass> {
  void runOnOperation() override {
    SmallVector<nvgpu::MmaSyncOp> mmas;
    getOperation()->walk([&](nvgpu::MmaSyncOp op) {
      if (cast<VectorType>(op.getMatrixA().getType()).getElementType().isBF16())
        mmas.push_back(op);
    });
    for (nvgpu::MmaSyncOp op : mmas) {
      auto a = cast<VectorType>(op.getMatrixA().getType());
      auto b16 = cast<VectorType>(op.getMatrixB().getType());
      auto c = cast<VectorType>(op.getMatrixC().getType());
      std::array<int64_t, 3> shape = op.getMmaShapeAsArray();
      if (shape != std::array<int64_t, 3>{16, 8, 16} ||
          a.getShape() != ArrayRef<int64_t>{4, 2} ||
          !b16.getElementType().isBF16() ||
          b16.getShape() != ArrayRef<int64_t>{2, 2} ||
          !c.getElementType().isF32() ||
          c.getShape() != ArrayRef<int64_t>{2, 2}) {
        op.emitError("tp-lower-bf16-mma: expected the m16n8k16 shape on "
                     "vector<4x2xbf16> and vector<2x2xbf16> operands with a "
                     "vector<2x2xf32> accumulator");
        return signalPassFailure();
      }
      OpBuilder b(op);
      Location loc = op.getLoc();
      SmallVector<Value> accumulator;
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t e = 0; e < 2; ++e)
          accumulator.push_back(vector::ExtractOp::create(
              b, loc, op.getMatrixC(), ArrayRef<int64_t>{r, e}));
      Type f32 = b.getF32Type();
      auto resultType = LLVM::LLVMStructType::getLiteral(
          b.getContext(), SmallVector<Type>(4, f32));
      auto mma = NVVM::MmaOp::create(
          b, loc, resultType, packedRegisters(b, loc, op.getMatrixA()),
          packedRegisters(b, loc, op.getMatrixB()), accumulator, shape,
          /*b1Op=*/std::nullopt, /*intOverflow=*/std::nullopt,
          std::array<NVVM::MMATypes, 2>{NVVM::MMATypes::bf16,
                                        NVVM::MMATypes::bf16},
          std::array<NVVM::MMALayout, 2>{NVVM::MMALayout::row,
                                         NVVM::MMALayout::col});
      SmallVector<Value> elements;
      for (int64_t i = 0; i < 4; ++i)
        elements.push_back(LLVM::ExtractValueOp::create(b, loc, mma, i));
      op.replaceAllUsesWith(
          vector::FromElementsOp::create(b, loc, c, elements).getResult());
      op.erase();
    }
  }
};

} // namespace
