//===- MapLinalgToGPU.cpp - Structured ops on buffers to gpu.launch -------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Each linalg op left after the GEMMs became library calls becomes one
// gpu.launch (see the pass description in Passes.td): a flat, coalesced
// mapping of the parallel loops, with the reduction loops either run by the
// thread or, for recognized combiners, spread over a block and folded with
// gpu.all_reduce.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "llvm/ADT/TypeSwitch.h"

#include <limits>

namespace mlir::tp {
#define GEN_PASS_DEF_MAPLINALGTOGPUPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

constexpr int64_t kThreadsPerBlock = 256;
constexpr int64_t kMinBlockReduction = 32;
/// Elements per thread of a vectorized pointwise kernel: 16 bytes of f32
/// (ld.global.v4.f32), 8 of f16/bf16.
constexpr int64_t kVectorWidth = 4;

/// How a vectorized kernel reads an operand: a vector of consecutive
/// elements along the innermost loop, or one element broadcast (the operand
/// does not depend on that loop).
enum class Access { Vector, Broadcast };

/// The combiner of a reduction whose body is `combine(f(inputs), out)`.
struct Combiner {
  gpu::AllReduceOperation kind;
  Operation *op;      // the combining op (the yielded value)
  unsigned fromInput; // its operand that is f(inputs)
};

/// The block-reduction form of `op`, when it has one.
std::optional<Combiner> matchCombiner(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1)
    return std::nullopt;
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  Operation *combine = yield.getValues()[0].getDefiningOp();
  if (!combine || combine->getNumOperands() != 2 || combine->getBlock() != body)
    return std::nullopt;
  BlockArgument out = body->getArgument(body->getNumArguments() - 1);
  // `out` feeds the combiner only, as one of its two operands.
  if (!out.hasOneUse())
    return std::nullopt;
  unsigned fromInput;
  if (combine->getOperand(0) == out)
    fromInput = 1;
  else if (combine->getOperand(1) == out)
    fromInput = 0;
  else
    return std::nullopt;
  Type type = combine->getResult(0).getType();
  std::optional<gpu::AllReduceOperation> kind;
  if (type.isF32()) {
    kind =
        llvm::TypeSwitch<Operation *, std::optional<gpu::AllReduceOperation>>(
            combine)
            .Case([](arith::AddFOp) { return gpu::AllReduceOperation::ADD; })
            .Case([](arith::MulFOp) { return gpu::AllReduceOperation::MUL; })
            .Case([](arith::MaxNumFOp) {
              return gpu::AllReduceOperation::MAXNUMF;
            })
            .Case([](arith::MinNumFOp) {
              return gpu::AllReduceOperation::MINNUMF;
            })
            .Case([](arith::MaximumFOp) {
              return gpu::AllReduceOperation::MAXIMUMF;
            })
            .Case([](arith::MinimumFOp) {
              return gpu::AllReduceOperation::MINIMUMF;
            })
            .Default([](Operation *) { return std::nullopt; });
  } else if (type.isInteger(32) || type.isInteger(64)) {
    if (isa<arith::AddIOp>(combine))
      kind = gpu::AllReduceOperation::ADD;
  }
  if (!kind)
    return std::nullopt;
  return Combiner{*kind, combine, fromInput};
}

/// The identity of `kind` on `type`.
Value neutralElement(OpBuilder &b, Location loc, gpu::AllReduceOperation kind,
                     Type type) {
  if (auto intType = dyn_cast<IntegerType>(type))
    return arith::ConstantOp::create(b, loc, b.getIntegerAttr(intType, 0));
  auto floatType = cast<FloatType>(type);
  double value = 0.0;
  switch (kind) {
  case gpu::AllReduceOperation::MUL:
    value = 1.0;
    break;
  case gpu::AllReduceOperation::MAXNUMF:
  case gpu::AllReduceOperation::MAXIMUMF:
    value = -std::numeric_limits<double>::infinity();
    break;
  case gpu::AllReduceOperation::MINNUMF:
  case gpu::AllReduceOperation::MINIMUMF:
    value = std::numeric_limits<double>::infinity();
    break;
  default:
    break;
  }
  return arith::ConstantOp::create(b, loc, b.getFloatAttr(floatType, value));
}

/// The indices of a row-major space of `sizes` at linear index `linear`,
/// the last size fastest.
SmallVector<Value> delinearize(OpBuilder &b, Location loc, Value linear,
                               ArrayRef<int64_t> sizes) {
  SmallVector<Value> indices(sizes.size());
  Value rest = linear;
  for (int64_t i = static_cast<int64_t>(sizes.size()) - 1; i >= 0; --i) {
    Value size = arith::ConstantIndexOp::create(b, loc, sizes[i]);
    indices[i] = i == 0 ? rest : arith::RemUIOp::create(b, loc, rest, size);
    if (i > 0)
      rest = arith::DivUIOp::create(b, loc, rest, size);
  }
  return indices;
}

int64_t product(ArrayRef<int64_t> sizes) {
  int64_t p = 1;
  for (int64_t s : sizes)
    p *= s;
  return p;
}

class KernelBuilder {
public:
  KernelBuilder(linalg::LinalgOp op) : op(op), loc(op.getLoc()) {}

  /// The op's operand `operand` at loop indices `ivs`: the loaded element
  /// of a buffer, or the scalar itself.
  Value load(OpBuilder &b, OpOperand &operand, ArrayRef<Value> ivs) {
    Value value = operand.get();
    if (!isa<MemRefType>(value.getType()))
      return value;
    return memref::LoadOp::create(b, loc, value, indices(b, operand, ivs));
  }

  SmallVector<Value> indices(OpBuilder &b, OpOperand &operand,
                             ArrayRef<Value> ivs) {
    AffineMap map = op.getMatchingIndexingMap(&operand);
    SmallVector<Value> result;
    for (unsigned i = 0; i < map.getNumResults(); ++i)
      result.push_back(
          affine::AffineApplyOp::create(b, loc, map.getSubMap({i}), ivs));
    return result;
  }

  /// Clones the body at `ivs`, the block arguments bound to the loaded
  /// operands; stops before `stopAt` (when given) and returns the mapping.
  IRMapping cloneBody(OpBuilder &b, ArrayRef<Value> ivs,
                      Operation *stopAt = nullptr, bool loadOutputs = true) {
    IRMapping mapping;
    Block *body = op.getBlock();
    for (OpOperand &operand : op->getOpOperands()) {
      BlockArgument arg = body->getArgument(operand.getOperandNumber());
      if (arg.use_empty())
        continue;
      if (op.isDpsInit(&operand) && !loadOutputs)
        continue;
      mapping.map(arg, load(b, operand, ivs));
    }
    for (Operation &inner : body->without_terminator()) {
      if (&inner == stopAt)
        break;
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        mapping.map(index.getResult(), ivs[index.getDim()]);
        continue;
      }
      b.clone(inner, mapping);
    }
    return mapping;
  }

  /// Stores the yielded values at `ivs`.
  void storeResults(OpBuilder &b, IRMapping &mapping, ArrayRef<Value> ivs) {
    auto yield = cast<linalg::YieldOp>(op.getBlock()->getTerminator());
    for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable()))
      memref::StoreOp::create(b, loc,
                              mapping.lookupOrDefault(yield.getValues()[i]),
                              init.get(), indices(b, init, ivs));
  }

  /// The loop indices from the parallel indices `parallel` (in loop order
  /// of the parallel loops) and the reduction ones.
  SmallVector<Value> merge(ArrayRef<Value> parallel,
                           ArrayRef<Value> reduction) {
    SmallVector<Value> ivs;
    unsigned p = 0, r = 0;
    for (utils::IteratorType type : op.getIteratorTypesArray())
      ivs.push_back(type == utils::IteratorType::parallel ? parallel[p++]
                                                          : reduction[r++]);
    return ivs;
  }

  gpu::LaunchOp launch(OpBuilder &b, int64_t blocks, int64_t threads) {
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto launch = gpu::LaunchOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, blocks), one, one,
        arith::ConstantIndexOp::create(b, loc, threads), one, one);
    b.setInsertionPointToStart(&launch.getBody().front());
    return launch;
  }

  /// One thread per parallel point; the thread runs the reduction loops.
  void buildFlat(OpBuilder &b, ArrayRef<int64_t> parallelSizes,
                 ArrayRef<int64_t> reductionSizes) {
    int64_t points = product(parallelSizes);
    int64_t threads = std::min(points, kThreadsPerBlock);
    int64_t blocks = (points + threads - 1) / threads;
    OpBuilder::InsertionGuard guard(b);
    gpu::LaunchOp kernel = launch(b, blocks, threads);
    Value blockStart =
        arith::MulIOp::create(b, loc, kernel.getBlockIds().x,
                              arith::ConstantIndexOp::create(b, loc, threads));
    Value linear =
        arith::AddIOp::create(b, loc, blockStart, kernel.getThreadIds().x);
    Value inBounds =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, linear,
                              arith::ConstantIndexOp::create(b, loc, points));
    auto guardIf = scf::IfOp::create(b, loc, inBounds, false);
    b.setInsertionPointToStart(&guardIf.getThenRegion().front());
    SmallVector<Value> parallel = delinearize(b, loc, linear, parallelSizes);
    // The reduction loops, outermost first, inside the thread.
    SmallVector<Value> reduction;
    for (int64_t size : reductionSizes) {
      auto loop =
          scf::ForOp::create(b, loc, arith::ConstantIndexOp::create(b, loc, 0),
                             arith::ConstantIndexOp::create(b, loc, size),
                             arith::ConstantIndexOp::create(b, loc, 1));
      reduction.push_back(loop.getInductionVar());
      b.setInsertionPointToStart(loop.getBody());
    }
    SmallVector<Value> ivs = merge(parallel, reduction);
    IRMapping mapping = cloneBody(b, ivs);
    storeResults(b, mapping, ivs);
    b.setInsertionPointToEnd(&kernel.getBody().front());
    gpu::TerminatorOp::create(b, loc);
  }

  /// One block per parallel point; its threads share the reduction loops.
  void buildBlockReduction(OpBuilder &b, const Combiner &combiner,
                           ArrayRef<int64_t> parallelSizes,
                           ArrayRef<int64_t> reductionSizes) {
    int64_t reductionPoints = product(reductionSizes);
    int64_t threads =
        std::min(kThreadsPerBlock, (reductionPoints + 31) / 32 * 32);
    OpBuilder::InsertionGuard guard(b);
    gpu::LaunchOp kernel = launch(b, product(parallelSizes), threads);
    SmallVector<Value> parallel =
        delinearize(b, loc, kernel.getBlockIds().x, parallelSizes);
    Type type = combiner.op->getResult(0).getType();
    Value init = neutralElement(b, loc, combiner.kind, type);
    auto loop = scf::ForOp::create(
        b, loc, kernel.getThreadIds().x,
        arith::ConstantIndexOp::create(b, loc, reductionPoints),
        arith::ConstantIndexOp::create(b, loc, threads), ValueRange{init});
    {
      OpBuilder::InsertionGuard inLoop(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> reduction =
          delinearize(b, loc, loop.getInductionVar(), reductionSizes);
      SmallVector<Value> ivs = merge(parallel, reduction);
      IRMapping mapping = cloneBody(b, ivs, combiner.op, /*loadOutputs=*/false);
      Value term =
          mapping.lookupOrDefault(combiner.op->getOperand(combiner.fromInput));
      IRMapping fold;
      fold.map(combiner.op->getOperand(combiner.fromInput), term);
      fold.map(combiner.op->getOperand(1 - combiner.fromInput),
               loop.getRegionIterArgs()[0]);
      Value next = b.clone(*combiner.op, fold)->getResult(0);
      scf::YieldOp::create(b, loc, next);
    }
    Value total = gpu::AllReduceOp::create(b, loc, loop.getResult(0),
                                           gpu::AllReduceOperationAttr::get(
                                               b.getContext(), combiner.kind),
                                           b.getUnitAttr())
                      .getResult();
    // Thread 0 folds the total into the output element.
    Value first = arith::CmpIOp::create(
        b, loc, arith::CmpIPredicate::eq, kernel.getThreadIds().x,
        arith::ConstantIndexOp::create(b, loc, 0));
    auto store = scf::IfOp::create(b, loc, first, false);
    b.setInsertionPointToStart(&store.getThenRegion().front());
    SmallVector<Value> zeros(reductionSizes.size(),
                             arith::ConstantIndexOp::create(b, loc, 0));
    SmallVector<Value> ivs = merge(parallel, zeros);
    OpOperand &out = op.getDpsInitsMutable()[0];
    Value old = load(b, out, ivs);
    IRMapping fold;
    fold.map(combiner.op->getOperand(combiner.fromInput), total);
    fold.map(combiner.op->getOperand(1 - combiner.fromInput), old);
    Value result = b.clone(*combiner.op, fold)->getResult(0);
    memref::StoreOp::create(b, loc, result, out.get(), indices(b, out, ivs));
    b.setInsertionPointToEnd(&kernel.getBody().front());
    gpu::TerminatorOp::create(b, loc);
  }

  /// The accesses of a pointwise op whose innermost loop can run
  /// kVectorWidth elements a thread with aligned vector loads and stores:
  /// each buffer either reads the innermost loop in its innermost dimension
  /// (unit stride, offset and other strides multiples of the width) or not
  /// at all, of 8- to 32-bit elements; the body elementwise ops only.
  std::optional<SmallVector<Access>> vectorAccesses(ArrayRef<int64_t> ranges) {
    if (ranges.empty() || ranges.back() % kVectorWidth != 0 ||
        op.getNumReductionLoops() != 0)
      return std::nullopt;
    unsigned last = ranges.size() - 1;
    SmallVector<Access> accesses;
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      if (!type) {
        if (op.isDpsInit(&operand))
          return std::nullopt;
        accesses.push_back(Access::Broadcast);
        continue;
      }
      Type element = type.getElementType();
      if (!element.isIntOrFloat() || element.getIntOrFloatBitWidth() > 32 ||
          element.getIntOrFloatBitWidth() % 8 != 0)
        return std::nullopt;
      AffineMap map = op.getMatchingIndexingMap(&operand);
      if (!map.isProjectedPermutation())
        return std::nullopt;
      std::optional<unsigned> position =
          map.getResultPosition(getAffineDimExpr(last, op.getContext()));
      if (!position) {
        if (op.isDpsInit(&operand))
          return std::nullopt;
        accesses.push_back(Access::Broadcast);
        continue;
      }
      if (*position != map.getNumResults() - 1)
        return std::nullopt;
      SmallVector<int64_t> strides;
      int64_t offset;
      if (failed(type.getStridesAndOffset(strides, offset)) ||
          strides.back() != 1 || ShapedType::isDynamic(offset) ||
          offset % kVectorWidth != 0)
        return std::nullopt;
      for (int64_t stride : ArrayRef<int64_t>(strides).drop_back())
        if (ShapedType::isDynamic(stride) || stride % kVectorWidth != 0)
          return std::nullopt;
      accesses.push_back(Access::Vector);
    }
    for (Operation &inner : op.getBlock()->without_terminator())
      if (!isa<linalg::IndexOp, arith::ConstantOp>(inner) &&
          !(OpTrait::hasElementwiseMappableTraits(&inner) &&
            inner.getNumRegions() == 0))
        return std::nullopt;
    return accesses;
  }

  /// One thread per kVectorWidth consecutive points of the innermost loop:
  /// vector loads and stores (16-byte aligned for f32), the body on vectors.
  void buildVectorized(OpBuilder &b, ArrayRef<int64_t> ranges,
                       ArrayRef<Access> accesses) {
    SmallVector<int64_t> groups(ranges);
    groups.back() /= kVectorWidth;
    int64_t points = product(groups);
    int64_t threads = std::min(points, kThreadsPerBlock);
    int64_t blocks = (points + threads - 1) / threads;
    OpBuilder::InsertionGuard guard(b);
    gpu::LaunchOp kernel = launch(b, blocks, threads);
    Value blockStart =
        arith::MulIOp::create(b, loc, kernel.getBlockIds().x,
                              arith::ConstantIndexOp::create(b, loc, threads));
    Value linear =
        arith::AddIOp::create(b, loc, blockStart, kernel.getThreadIds().x);
    Value inBounds =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, linear,
                              arith::ConstantIndexOp::create(b, loc, points));
    auto guardIf = scf::IfOp::create(b, loc, inBounds, false);
    b.setInsertionPointToStart(&guardIf.getThenRegion().front());
    SmallVector<Value> ivs = delinearize(b, loc, linear, groups);
    ivs.back() = arith::MulIOp::create(
        b, loc, ivs.back(),
        arith::ConstantIndexOp::create(b, loc, kVectorWidth));
    auto vectorOf = [&](Type scalar) {
      return VectorType::get({kVectorWidth}, scalar);
    };
    auto broadcast = [&](Value scalar) -> Value {
      return vector::BroadcastOp::create(b, loc, vectorOf(scalar.getType()),
                                         scalar);
    };
    // The loaded operands, as vectors.
    IRMapping mapping;
    Block *body = op.getBlock();
    for (auto [operand, access] : llvm::zip(op->getOpOperands(), accesses)) {
      BlockArgument arg = body->getArgument(operand.getOperandNumber());
      if (arg.use_empty())
        continue;
      Value value = operand.get();
      if (access == Access::Broadcast) {
        mapping.map(arg, broadcast(load(b, operand, ivs)));
        continue;
      }
      auto type = cast<MemRefType>(value.getType());
      auto read =
          vector::LoadOp::create(b, loc, vectorOf(type.getElementType()), value,
                                 indices(b, operand, ivs));
      read.setAlignment(type.getElementTypeBitWidth() / 8 * kVectorWidth);
      mapping.map(arg, read.getResult());
    }
    // linalg.index: the innermost loop's lanes count up.
    for (Operation &inner : body->without_terminator()) {
      if (auto index = dyn_cast<linalg::IndexOp>(inner)) {
        Value base = broadcast(ivs[index.getDim()]);
        if (index.getDim() == ranges.size() - 1) {
          SmallVector<int64_t> lanes;
          for (int64_t i = 0; i < kVectorWidth; ++i)
            lanes.push_back(i);
          Value step = arith::ConstantOp::create(
              b, loc,
              DenseElementsAttr::get(vectorOf(b.getIndexType()),
                                     ArrayRef<int64_t>(lanes)));
          base = arith::AddIOp::create(b, loc, base, step);
        }
        mapping.map(index.getResult(), base);
        continue;
      }
      if (auto constant = dyn_cast<arith::ConstantOp>(inner)) {
        mapping.map(constant.getResult(),
                    arith::ConstantOp::create(
                        b, loc,
                        DenseElementsAttr::get(vectorOf(constant.getType()),
                                               constant.getValue())));
        continue;
      }
      // The same op on vectors; scalars from outside the body broadcast.
      SmallVector<Value> operands;
      for (Value v : inner.getOperands()) {
        Value mapped = mapping.lookupOrNull(v);
        operands.push_back(mapped ? mapped : broadcast(v));
      }
      SmallVector<Type> types;
      for (Type t : inner.getResultTypes())
        types.push_back(vectorOf(t));
      OperationState state(inner.getLoc(), inner.getName(), operands, types,
                           inner.getAttrs());
      Operation *vectorOp = b.create(state);
      mapping.map(inner.getResults(), vectorOp->getResults());
    }
    auto yield = cast<linalg::YieldOp>(body->getTerminator());
    for (auto [i, init] : llvm::enumerate(op.getDpsInitsMutable())) {
      Value yielded = yield.getValues()[i];
      Value value = mapping.lookupOrNull(yielded);
      if (!value)
        value = broadcast(yielded);
      auto type = cast<MemRefType>(init.get().getType());
      auto write = vector::StoreOp::create(b, loc, value, init.get(),
                                           indices(b, init, ivs));
      write.setAlignment(type.getElementTypeBitWidth() / 8 * kVectorWidth);
    }
    b.setInsertionPointToEnd(&kernel.getBody().front());
    gpu::TerminatorOp::create(b, loc);
  }

  LogicalResult build() {
    SmallVector<int64_t> ranges = op.getStaticLoopRanges();
    if (llvm::any_of(ranges, ShapedType::isDynamic)) {
      std::string text;
      for (int64_t r : ranges)
        text +=
            (text.empty() ? "" : ", ") +
            (ShapedType::isDynamic(r) ? std::string("?") : std::to_string(r));
      return op.emitError("cannot map '")
             << op->getName() << "' to GPU kernels: its loop ranges (" << text
             << ") are not static";
    }
    if (!op.hasPureBufferSemantics())
      return op.emitError("cannot map '")
             << op->getName() << "' to GPU kernels: it is not on buffers "
             << "(map after bufferization)";
    SmallVector<int64_t> parallelSizes, reductionSizes;
    for (auto [size, type] : llvm::zip(ranges, op.getIteratorTypesArray()))
      (type == utils::IteratorType::parallel ? parallelSizes : reductionSizes)
          .push_back(size);
    OpBuilder b(op);
    if (product(ranges) == 0) {
      op->erase();
      return success();
    }
    std::optional<Combiner> combiner = matchCombiner(op);
    if (combiner && !reductionSizes.empty() &&
        product(reductionSizes) >= kMinBlockReduction)
      buildBlockReduction(b, *combiner, parallelSizes, reductionSizes);
    else if (std::optional<SmallVector<Access>> accesses =
                 vectorAccesses(ranges))
      buildVectorized(b, ranges, *accesses);
    else
      buildFlat(b, parallelSizes, reductionSizes);
    op->erase();
    return success();
  }

private:
  linalg::LinalgOp op;
  Location loc;
};

struct MapLinalgToGPUPass
    : public tp::impl::MapLinalgToGPUPassBase<MapLinalgToGPUPass> {
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> ops;
    getOperation()->walk([&](linalg::LinalgOp op) {
      // Ops already inside a kernel stay.
      if (!op->getParentOfType<gpu::LaunchOp>())
        ops.push_back(op);
    });
    for (linalg::LinalgOp op : ops)
      if (failed(KernelBuilder(op).build()))
        return signalPassFailure();
  }
};

} // namespace
