//===- MapLinalgToGPU.cpp - Structured ops on buffers to gpu.launch -------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Each linalg op left after the GEMMs became library calls becomes a
// gpu.launch (see the pass description in Passes.td): a flat, coalesced
// mapping of the parallel loops, with the reduction loops either run by the
// thread or, for recognized combiners, spread over a block and folded with
// gpu.all_reduce. Consecutive ops over the same rows with a reduction among
// them (a normalization, a softmax) share one kernel, a block per row.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Common/Buffers.h"
#include "tp/Conversion/Passes.h"

#include "mlir/IR/IRMapping.h"
#include "mlir/Transforms/RegionUtils.h"
#include "llvm/ADT/SetVector.h"
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

  /// The type the block's partials and total are combined in: f32 for f16
  /// and bf16 (the terms widened, the total rounded once, as PyTorch's
  /// reductions accumulate), else the combiner's own.
  Type accumulator() const {
    Type type = op->getResult(0).getType();
    return type.isF16() || type.isBF16() ? Float32Type::get(type.getContext())
                                         : type;
  }

  /// `value` (of the combiner's type) in the accumulator's.
  Value widen(OpBuilder &b, Location loc, Value value) const {
    Type acc = accumulator();
    return value.getType() == acc
               ? value
               : arith::ExtFOp::create(b, loc, acc, value).getResult();
  }

  /// `value` (of the accumulator's type) in the combiner's.
  Value narrow(OpBuilder &b, Location loc, Value value) const {
    Type type = op->getResult(0).getType();
    return value.getType() == type
               ? value
               : arith::TruncFOp::create(b, loc, type, value).getResult();
  }

  /// The combining op on `lhs` and `rhs`, both of one type (the
  /// accumulator's or the combiner's), its result of that type.
  Value combine(OpBuilder &b, Location loc, Value lhs, Value rhs) const {
    OperationState state(loc, op->getName(), ValueRange{lhs, rhs},
                         TypeRange{lhs.getType()}, op->getAttrs());
    return b.create(state)->getResult(0);
  }
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
  if (type.isF32() || type.isF16() || type.isBF16()) {
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

/// What a kernel of `ops` moves and computes, for tp-report-kernels: the
/// bytes of every buffer its ops access, as operands or loaded in their
/// bodies (a rotation's halves, read in place of the concatenation
/// tp-fuse-concatenations took apart), each once (a row kernel reads a row
/// again from cache), and per iteration point of each op the scalar ops of
/// its body. Set on the launch as `tp.cost = {bytes, flops, ops}`.
void setCost(gpu::LaunchOp launch, ArrayRef<linalg::LinalgOp> ops) {
  llvm::SetVector<Value> buffers;
  int64_t flops = 0;
  for (linalg::LinalgOp op : ops) {
    for (Value operand : op->getOperands())
      if (isa<MemRefType>(operand.getType()))
        buffers.insert(operand);
    visitUsedValuesDefinedAbove(op->getRegions(), [&](OpOperand *use) {
      if (isa<MemRefType>(use->get().getType()))
        buffers.insert(use->get());
    });
    int64_t perPoint = 0;
    for (Operation &inner : op.getBlock()->without_terminator())
      if (!isa<arith::ConstantOp, linalg::IndexOp, arith::IndexCastOp>(inner))
        ++perPoint;
    int64_t points = 1;
    for (int64_t range : op.getStaticLoopRanges())
      points *= ShapedType::isDynamic(range) ? 0 : range;
    flops += perPoint * points;
  }
  int64_t bytes = 0;
  for (Value buffer : buffers)
    bytes += tp::staticByteSize(cast<MemRefType>(buffer.getType())).value_or(0);
  Builder b(launch.getContext());
  launch->setAttr(
      "tp.cost", b.getDictionaryAttr(
                     {b.getNamedAttr("bytes", b.getI64IntegerAttr(bytes)),
                      b.getNamedAttr("flops", b.getI64IntegerAttr(flops)),
                      b.getNamedAttr("ops", b.getI64IntegerAttr(ops.size()))}));
}

class KernelBuilder {
public:
  KernelBuilder(linalg::LinalgOp op,
                const DenseMap<Value, Value> *registers = nullptr)
      : op(op), loc(op.getLoc()), registers(registers) {}

  /// The op's operand `operand` at loop indices `ivs`: the loaded element
  /// of a buffer, its row's value held in a register (a row kernel's), or
  /// the scalar itself.
  Value load(OpBuilder &b, OpOperand &operand, ArrayRef<Value> ivs) {
    Value value = operand.get();
    if (!isa<MemRefType>(value.getType()))
      return value;
    if (registers)
      if (Value held = registers->lookup(value))
        return held;
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
    setCost(launch, {op});
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
    Value init = neutralElement(b, loc, combiner.kind, combiner.accumulator());
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
      scf::YieldOp::create(
          b, loc,
          accumulateTerm(b, combiner, ivs, loop.getRegionIterArgs()[0]));
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
    Value result = foldTotal(b, combiner, total, load(b, out, ivs));
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

  /// In a row kernel (one block per row, `tid` its thread): runs this
  /// op's share of the row at `rows` with `threads` threads, r = tid, tid +
  /// threads, ... A reduction combines the block's partials, folds in the
  /// row's old value (`init`, when a register holds it, or the output's
  /// element) and returns the row's new value, which thread 0 stores; a
  /// pointwise op stores each of its points.
  Value buildRowShare(OpBuilder &b, ArrayRef<Value> rows, Value tid,
                      int64_t length, int64_t threads,
                      std::optional<Combiner> combiner, Value init) {
    Value begin = tid;
    Value end = arith::ConstantIndexOp::create(b, loc, length);
    Value step = arith::ConstantIndexOp::create(b, loc, threads);
    auto ivsAt = [&](Value r) {
      SmallVector<Value> ivs(rows);
      ivs.push_back(r);
      return ivs;
    };
    if (!combiner) {
      auto loop = scf::ForOp::create(b, loc, begin, end, step);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> ivs = ivsAt(loop.getInductionVar());
      IRMapping mapping = cloneBody(b, ivs);
      storeResults(b, mapping, ivs);
      return Value();
    }
    // The row's old value is read before the reduction (whose barriers
    // order it before thread 0's store of the new one).
    SmallVector<Value> first = ivsAt(arith::ConstantIndexOp::create(b, loc, 0));
    OpOperand &out = op.getDpsInitsMutable()[0];
    Value old = init ? init : load(b, out, first);
    Value neutral =
        neutralElement(b, loc, combiner->kind, combiner->accumulator());
    auto loop =
        scf::ForOp::create(b, loc, begin, end, step, ValueRange{neutral});
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      SmallVector<Value> ivs = ivsAt(loop.getInductionVar());
      scf::YieldOp::create(
          b, loc,
          accumulateTerm(b, *combiner, ivs, loop.getRegionIterArgs()[0]));
    }
    Value total = gpu::AllReduceOp::create(b, loc, loop.getResult(0),
                                           gpu::AllReduceOperationAttr::get(
                                               b.getContext(), combiner->kind),
                                           b.getUnitAttr())
                      .getResult();
    Value result = foldTotal(b, *combiner, total, old);
    Value isFirst =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, tid,
                              arith::ConstantIndexOp::create(b, loc, 0));
    auto store = scf::IfOp::create(b, loc, isFirst, false);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&store.getThenRegion().front());
    memref::StoreOp::create(b, loc, result, out.get(), indices(b, out, first));
    return result;
  }

private:
  /// The body's term at `ivs` combined into the thread's partial `acc` (in
  /// the accumulator's type).
  Value accumulateTerm(OpBuilder &b, const Combiner &combiner,
                       ArrayRef<Value> ivs, Value acc) {
    IRMapping mapping = cloneBody(b, ivs, combiner.op, /*loadOutputs=*/false);
    Value term =
        mapping.lookupOrDefault(combiner.op->getOperand(combiner.fromInput));
    Value wide = combiner.widen(b, loc, term);
    return combiner.fromInput == 0 ? combiner.combine(b, loc, wide, acc)
                                   : combiner.combine(b, loc, acc, wide);
  }

  /// The block's `total` (in the accumulator's type) folded into the
  /// output's old value `old`, in the combiner's type: combined in the
  /// accumulator's, rounded once.
  Value foldTotal(OpBuilder &b, const Combiner &combiner, Value total,
                  Value old) {
    Value wideOld = combiner.widen(b, loc, old);
    Value result = combiner.fromInput == 0
                       ? combiner.combine(b, loc, total, wideOld)
                       : combiner.combine(b, loc, wideOld, total);
    return combiner.narrow(b, loc, result);
  }

  linalg::LinalgOp op;
  Location loc;
  const DenseMap<Value, Value> *registers;
};

/// The shape of a row kernel's member: parallel loops over the rows, then
/// one loop along the row, a reduction with a block combiner or parallel.
struct RowShape {
  SmallVector<int64_t> rows;
  int64_t length = 0;
  bool operator==(const RowShape &other) const {
    return rows == other.rows && length == other.length;
  }
};

/// `op`'s shape as a member of a row kernel, when it can be one; a
/// reduction's combiner in `combiner`.
std::optional<RowShape> rowShapeOf(linalg::LinalgOp op,
                                   std::optional<Combiner> &combiner) {
  combiner.reset();
  if (isa<linalg::FillOp>(op) || !op.hasPureBufferSemantics())
    return std::nullopt;
  // Its body touches no memory but through its operands: a load of a buffer
  // it captures (a concatenation read in place) is at indices the kernel's
  // conflict check cannot see.
  if (llvm::any_of(op.getBlock()->without_terminator(), [](Operation &inner) {
        return !isMemoryEffectFree(&inner);
      }))
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (ranges.empty() || llvm::any_of(ranges, ShapedType::isDynamic) ||
      product(ranges) == 0)
    return std::nullopt;
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  unsigned last = ranges.size() - 1;
  for (unsigned i = 0; i < last; ++i)
    if (iterators[i] != utils::IteratorType::parallel)
      return std::nullopt;
  RowShape shape{SmallVector<int64_t>(ArrayRef<int64_t>(ranges).drop_back()),
                 ranges.back()};
  if (iterators[last] == utils::IteratorType::reduction) {
    combiner = matchCombiner(op);
    if (!combiner || shape.length < kMinBlockReduction)
      return std::nullopt;
    // One output element per row: every row loop, not the row's.
    AffineMap map = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    if (!map.isProjectedPermutation() || map.getNumResults() != last ||
        map.isFunctionOfDim(last))
      return std::nullopt;
    return shape;
  }
  // A pointwise op writes each output element once.
  for (OpOperand &init : op.getDpsInitsMutable())
    if (!op.getMatchingIndexingMap(&init).isPermutation())
      return std::nullopt;
  return shape;
}

/// A member of a row kernel: a linalg op, its combiner when it reduces, and
/// the fill of its output it folds in (the reduction starts from the fill's
/// value, in a register).
struct Member {
  linalg::LinalgOp op;
  std::optional<Combiner> combiner;
  linalg::FillOp fill;
};

/// Row fusion: consecutive ops over the same rows (at least one a block
/// reduction: a normalization, a softmax) become one kernel with a block
/// per row (see the pass description).
class RowFusion {
public:
  explicit RowFusion(func::FuncOp func) : func(func) {}

  /// Fuses the ops from `start` on into one kernel, when at least one
  /// reduction and one other op (or the fill it folds) are found; `next`
  /// becomes the op after the last one fused.
  bool tryFuse(Operation *start, Operation *&next) {
    SmallVector<Member> members;
    SmallVector<Operation *> deallocs, pending;
    RowShape shape;
    Operation *last = nullptr;
    for (Operation *cursor = start; cursor;) {
      linalg::FillOp fill = dyn_cast<linalg::FillOp>(cursor);
      Operation *candidate = cursor;
      SmallVector<Operation *> between;
      if (fill) {
        // A fill joins with the reduction into its output that follows.
        candidate = skipIntervening(fill->getNextNode(), between);
        if (!candidate)
          break;
      }
      auto op = dyn_cast<linalg::LinalgOp>(candidate);
      if (!op) {
        if (!isIntervening(cursor))
          break;
        if (isa<memref::DeallocOp>(cursor))
          pending.push_back(cursor);
        cursor = cursor->getNextNode();
        continue;
      }
      std::optional<Combiner> combiner;
      std::optional<RowShape> opShape = rowShapeOf(op, combiner);
      if (!opShape || (!members.empty() && !(*opShape == shape)) ||
          conflicts(members, op))
        break;
      if (fill && !(combiner && folds(fill, op, *opShape)))
        break;
      members.push_back({op, combiner, fill});
      shape = *opShape;
      last = candidate;
      deallocs.append(pending);
      deallocs.append(between);
      pending.clear();
      cursor = candidate->getNextNode();
    }
    bool reduces =
        llvm::any_of(members, [](const Member &m) { return m.combiner; });
    if (!reduces || (members.size() < 2 && !members.front().fill))
      return false;
    Operation *launch = build(members, shape, last);
    for (Member &m : members) {
      m.op->erase();
      if (m.fill)
        m.fill->erase();
    }
    // Freed after the kernel: its members ran before those frees did.
    for (Operation *dealloc : llvm::reverse(deallocs))
      dealloc->moveAfter(launch);
    next = launch->getNextNode();
    return true;
  }

private:
  /// Ops a row kernel may move its members across: pure ops (views,
  /// constants), allocations, and frees (moved after the kernel).
  static bool isIntervening(Operation *op) {
    if (isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp>(op))
      return true;
    return op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
           !isa<linalg::LinalgOp>(op);
  }

  /// The first op from `op` on that is not intervening; the frees skipped
  /// in `frees`.
  static Operation *skipIntervening(Operation *op,
                                    SmallVectorImpl<Operation *> &frees) {
    for (; op && isIntervening(op); op = op->getNextNode())
      if (isa<memref::DeallocOp>(op))
        frees.push_back(op);
    return op;
  }

  /// Whether `fill` can start `reduction` from its value: it fills the
  /// reduction's output, which has one element per row.
  static bool folds(linalg::FillOp fill, linalg::LinalgOp reduction,
                    const RowShape &shape) {
    Value out = fill.getOutputs()[0];
    auto type = dyn_cast<MemRefType>(out.getType());
    return type && out == reduction.getDpsInits()[0] &&
           fill.getInputs()[0].getType() == type.getElementType() &&
           type.getNumElements() == product(shape.rows);
  }

  /// Whether `op` would race with a member in one kernel: a buffer one of
  /// them writes is accessed by the other at other indices (two rows'
  /// blocks, or two threads of a row, would meet), or through another
  /// buffer that may share its memory.
  bool conflicts(MutableArrayRef<Member> members, linalg::LinalgOp op) {
    for (Member &member : members)
      for (OpOperand &y : member.op->getOpOperands()) {
        if (!isa<MemRefType>(y.get().getType()))
          continue;
        for (OpOperand &x : op->getOpOperands()) {
          if (!isa<MemRefType>(x.get().getType()))
            continue;
          if (!op.isDpsInit(&x) && !member.op.isDpsInit(&y))
            continue;
          if (x.get() == y.get()) {
            if (op.getMatchingIndexingMap(&x) !=
                member.op.getMatchingIndexingMap(&y))
              return true;
            continue;
          }
          if (tp::mayAlias(x.get(), y.get(), func))
            return true;
        }
      }
    return false;
  }

  /// One block per row, its threads sharing each member's share of it in
  /// order; a reduction's result stays in a register for the members after
  /// it.
  Operation *build(MutableArrayRef<Member> members, const RowShape &shape,
                   Operation *at) {
    Location loc = members.front().op.getLoc();
    OpBuilder b(at);
    int64_t threads = std::min(kThreadsPerBlock, (shape.length + 31) / 32 * 32);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    auto launch = gpu::LaunchOp::create(
        b, loc, arith::ConstantIndexOp::create(b, loc, product(shape.rows)),
        one, one, arith::ConstantIndexOp::create(b, loc, threads), one, one);
    SmallVector<linalg::LinalgOp> ops;
    for (Member &m : members)
      ops.push_back(m.op);
    setCost(launch, ops);
    b.setInsertionPointToStart(&launch.getBody().front());
    SmallVector<Value> rows =
        delinearize(b, loc, launch.getBlockIds().x, shape.rows);
    Value tid = launch.getThreadIds().x;
    DenseMap<Value, Value> registers;
    for (Member &m : members) {
      Value out = m.op.getDpsInits()[0];
      Value init;
      if (m.fill)
        init = m.fill.getInputs()[0];
      else if (m.combiner)
        init = registers.lookup(out);
      Value result = KernelBuilder(m.op, &registers)
                         .buildRowShare(b, rows, tid, shape.length, threads,
                                        m.combiner, init);
      if (m.combiner) {
        registers[out] = result;
        continue;
      }
      for (Value written : m.op.getDpsInits())
        registers.erase(written);
    }
    gpu::TerminatorOp::create(b, loc);
    return launch;
  }

  func::FuncOp func;
};

struct MapLinalgToGPUPass
    : public tp::impl::MapLinalgToGPUPassBase<MapLinalgToGPUPass> {
  void runOnOperation() override {
    // Each block's structured ops, in order: the ops of a normalization or
    // a softmax fuse into one row kernel, every other op is a kernel.
    SmallVector<Block *> blocks;
    getOperation()->walk([&](linalg::LinalgOp op) {
      // Ops already inside a kernel stay.
      if (op->getParentOfType<gpu::LaunchOp>())
        return;
      if (blocks.empty() || blocks.back() != op->getBlock())
        if (!llvm::is_contained(blocks, op->getBlock()))
          blocks.push_back(op->getBlock());
    });
    RowFusion fusion(getOperation());
    for (Block *block : blocks) {
      Operation *op = &block->front();
      while (op) {
        auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
        if (!linalgOp) {
          op = op->getNextNode();
          continue;
        }
        Operation *next = op->getNextNode();
        if (fusion.tryFuse(op, next)) {
          op = next;
          continue;
        }
        if (failed(KernelBuilder(linalgOp).build()))
          return signalPassFailure();
        op = next;
      }
    }
  }
};

} // namespace
