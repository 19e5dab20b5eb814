//===- LowerStridedCopies.cpp - memref.copy that memcpy cannot do -> loops ===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// MLIR's memref-to-LLVM conversion turns a copy between contiguous buffers
// into a memcpy and every other copy into a call to `memrefCopy`, a symbol of
// MLIR's C runner utils. Programs must not depend on a symbol from outside
// (see tprt_rt_table), so the other copies become linalg.copy, which the loop
// lowering turns into plain loops.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/Utils/MemRefUtils.h"

namespace mlir::tp {
#define GEN_PASS_DEF_LOWERSTRIDEDCOPIESPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// What memref-to-LLVM copies with memcpy.
bool isContiguous(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && (memref.getLayout().isIdentity() ||
                    memref::isStaticShapeAndContiguousRowMajor(memref));
}

struct LowerStridedCopiesPass
    : public tp::impl::LowerStridedCopiesPassBase<LowerStridedCopiesPass> {
  using Base::Base;

  void runOnOperation() override {
    SmallVector<memref::CopyOp> copies;
    getOperation()->walk([&](memref::CopyOp op) {
      if (everyCopy || !isContiguous(op.getSource().getType()) ||
          !isContiguous(op.getTarget().getType()))
        copies.push_back(op);
    });
    for (memref::CopyOp op : copies) {
      if (!isa<MemRefType>(op.getSource().getType()) ||
          !isa<MemRefType>(op.getTarget().getType())) {
        op.emitOpError("copies an unranked memref, which compiled programs "
                       "cannot do without MLIR's runtime library");
        return signalPassFailure();
      }
      OpBuilder b(op);
      linalg::CopyOp::create(b, op.getLoc(), op.getSource(), op.getTarget());
      op.erase();
    }
  }
};

} // namespace
