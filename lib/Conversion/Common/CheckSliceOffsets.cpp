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

#include "mlir/Analysis/DataFlow/ConstantPropagationAnalysis.h"
#include "mlir/Analysis/DataFlow/DeadCodeAnalysis.h"
#include "mlir/Analysis/DataFlow/IntegerRangeAnalysis.h"
#include "mlir/Analysis/DataFlowFramework.h"
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

/// The largest in-bounds offset of `view` along dimension `d`, when its
/// source's dimension and the view's size and stride there are static.
std::optional<int64_t> lastOffset(memref::SubViewOp view, unsigned d) {
  MemRefType source = view.getSourceType();
  std::optional<int64_t> size = getConstantIntValue(view.getMixedSizes()[d]);
  std::optional<int64_t> stride =
      getConstantIntValue(view.getMixedStrides()[d]);
  if (!size || !stride || source.isDynamicDim(d))
    return std::nullopt;
  if (*size == 0)
    return source.getDimSize(d);
  return source.getDimSize(d) - 1 - (*size - 1) * *stride;
}

/// Whether the solver's integer ranges put `offset` within [0, last]. An
/// induction variable of a loop with constant bounds takes its last value
/// exactly: the analysis's range ends at the upper bound less one whatever
/// the step (a tile's rows 0, 2, ..., 126 would reach 127).
bool provenWithin(DataFlowSolver &solver, Value offset, int64_t last) {
  if (auto loop = scf::getForInductionVarOwner(offset)) {
    std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound());
    std::optional<int64_t> upper = getConstantIntValue(loop.getUpperBound());
    std::optional<int64_t> step = getConstantIntValue(loop.getStep());
    if (lower && upper && step && *step > 0 && !loop.getUnsignedCmp()) {
      if (*upper <= *lower)
        return true; // The body never runs.
      int64_t final = *lower + (*upper - 1 - *lower) / *step * *step;
      return *lower >= 0 && final <= last;
    }
  }
  auto *lattice =
      solver.lookupState<dataflow::IntegerValueRangeLattice>(offset);
  if (!lattice || lattice->getValue().isUninitialized())
    return false;
  const ConstantIntRanges &range = lattice->getValue().getValue();
  return range.smin().getSExtValue() >= 0 &&
         range.smax().getSExtValue() <= last;
}

struct CheckSliceOffsetsPass
    : public tp::impl::CheckSliceOffsetsPassBase<CheckSliceOffsetsPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    auto ptr = LLVM::LLVMPointerType::get(&getContext());
    unsigned made = 0;
    // The ranges of the offsets as they are, before any check is made.
    DataFlowSolver solver;
    solver.load<dataflow::DeadCodeAnalysis>();
    solver.load<dataflow::SparseConstantPropagation>();
    solver.load<dataflow::IntegerRangeAnalysis>();
    if (failed(solver.initializeAndRun(module)))
      return signalPassFailure();
    llvm::DenseSet<std::pair<Operation *, unsigned>> proven;
    module.walk([&](memref::SubViewOp view) {
      for (auto [d, offset] : llvm::enumerate(view.getMixedOffsets()))
        if (auto value = dyn_cast<Value>(offset))
          if (std::optional<int64_t> last = lastOffset(view, d);
              last && provenWithin(solver, value, *last))
            proven.insert({view, static_cast<unsigned>(d)});
    });
    for (auto func : module.getOps<func::FuncOp>()) {
      // Host code with the rank context, which the runtime's calls take.
      if (func.isExternal() || func.getNumArguments() == 0 ||
          func.getArgument(0).getType() != ptr)
        continue;
      Value ctx = func.getArgument(0);
      func.walk([&](memref::SubViewOp view) {
        SmallVector<OpFoldResult> offsets = view.getMixedOffsets();
        for (unsigned d = 0; d < offsets.size(); ++d) {
          auto offset = dyn_cast<Value>(offsets[d]);
          std::optional<int64_t> last = lastOffset(view, d);
          if (!offset || !last || proven.contains({view, d}))
            continue;
          OpBuilder b(view);
          Location loc = view.getLoc();
          Type i64 = b.getI64Type();
          Value index = arith::IndexCastOp::create(b, loc, i64, offset);
          Value zero =
              arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(0));
          Value bound =
              arith::ConstantOp::create(b, loc, b.getI64IntegerAttr(*last));
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
            func::FuncOp error =
                declareRuntimeFunction(module, "tprt_rt_index_error");
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
