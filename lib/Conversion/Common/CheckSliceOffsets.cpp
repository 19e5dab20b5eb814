//===- CheckSliceOffsets.cpp - Bounds checks of offsets known at run time -===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A slice whose offset is computed at run time (a KV cache written at a
// decode step's position, a 0-d integer input) would read or write outside
// its buffer for an offset out of bounds: memory no buffer of the program
// owns. Each such offset of a memref.subview is checked where the host code
// computes it: out of [0, dim - size] it calls tprt_rt_index_error (the run
// fails with a message naming the offset, its bounds and the op's location)
// and the slice is taken at offset 0, so that nothing outside the buffer is
// touched before the run ends.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Common/RuntimeCalls.h"
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/SymbolTable.h"

namespace mlir::tp {
#define GEN_PASS_DEF_CHECKSLICEOFFSETSPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// "file:line:col" of `loc`, or "".
std::string where(Location loc) {
  if (auto file = dyn_cast<FileLineColLoc>(loc))
    return (file.getFilename().getValue() + ":" + Twine(file.getLine()) + ":" +
            Twine(file.getColumn()))
        .str();
  if (auto fused = dyn_cast<FusedLoc>(loc))
    for (Location inner : fused.getLocations())
      if (std::string text = where(inner); !text.empty())
        return text;
  if (auto named = dyn_cast<NameLoc>(loc))
    return where(named.getChildLoc());
  return "";
}

struct CheckSliceOffsetsPass
    : public tp::impl::CheckSliceOffsetsPassBase<CheckSliceOffsetsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    auto ptr = LLVM::LLVMPointerType::get(&getContext());
    unsigned made = 0;
    for (auto func : module.getOps<func::FuncOp>()) {
      // Host code with the rank context, which the runtime's calls take.
      if (func.isExternal() || func.getNumArguments() == 0 ||
          func.getArgument(0).getType() != ptr)
        continue;
      Value ctx = func.getArgument(0);
      func.walk([&](memref::SubViewOp view) {
        MemRefType source = view.getSourceType();
        SmallVector<OpFoldResult> offsets = view.getMixedOffsets();
        SmallVector<OpFoldResult> sizes = view.getMixedSizes();
        SmallVector<OpFoldResult> strides = view.getMixedStrides();
        for (unsigned d = 0; d < offsets.size(); ++d) {
          auto offset = dyn_cast<Value>(offsets[d]);
          std::optional<int64_t> size = getConstantIntValue(sizes[d]);
          std::optional<int64_t> stride = getConstantIntValue(strides[d]);
          if (!offset || !size || !stride || source.isDynamicDim(d))
            continue;
          int64_t last = source.getDimSize(d) - 1 - (*size - 1) * *stride;
          if (*size == 0)
            last = source.getDimSize(d);
          OpBuilder b(view);
          Location loc = view.getLoc();
          Type i64 = b.getI64Type();
          Value index = arith::IndexCastOp::create(b, loc, i64, offset);
          Value zero =
              arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
          Value bound =
              arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(last));
          Value above = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge,
                                              index, zero);
          Value below = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sle,
                                              index, bound);
          Value ok = arith::AndIOp::create(b, loc, above, below);
          Value bad = arith::XOrIOp::create(
              b, loc, ok,
              arith::ConstantOp::create(b, loc, b.getBoolAttr(true)));
          auto check = scf::IfOp::create(b, loc, bad, /*withElse=*/false);
          {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(&check.getThenRegion().front());
            std::string name;
            do
              name = "tp_offset_check_" + std::to_string(made++);
            while (symbols.lookup(name));
            std::string text =
                "the offset of a slice along dimension " + std::to_string(d);
            if (std::string at = where(loc); !at.empty())
              text += " (" + at + ")";
            text.push_back('\0');
            Value what = LLVM::createGlobalString(loc, b, name, text,
                                                  LLVM::Linkage::Internal);
            func::FuncOp error = declareRuntimeFunction(
                module, "tprt_rt_index_error", {ptr, i64, i64, ptr}, {});
            func::CallOp::create(b, loc, error,
                                 ValueRange{ctx, index, bound, what});
          }
          // Out of bounds, the slice is taken at 0: the run fails anyway.
          Value origin = arith::ConstantIndexOp::create(b, loc, 0);
          Value safe = arith::SelectOp::create(b, loc, ok, offset, origin);
          offsets[d] = safe;
        }
        SmallVector<int64_t> staticOffsets;
        SmallVector<Value> dynamicOffsets;
        dispatchIndexOpFoldResults(offsets, dynamicOffsets, staticOffsets);
        view.getOffsetsMutable().assign(dynamicOffsets);
      });
    }
  }
};

} // namespace
