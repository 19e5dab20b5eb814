//===- EmulateGPULaunches.cpp - gpu.launch bodies as CPU loops ------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A test aid (see the pass description in Passes.td): runs the kernels that
// --tp-map-linalg-to-gpu makes as loops over blocks and threads, so that
// their index arithmetic, bounds checks and block reductions execute and are
// verified on the CPU.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/ScopeExit.h"

namespace mlir::tp {
#define GEN_PASS_DEF_EMULATEGPULAUNCHESPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// The arith op that folds two values by `kind`.
Value combine(OpBuilder &b, Location loc, gpu::AllReduceOperation kind,
              Value lhs, Value rhs) {
  bool isFloat = isa<FloatType>(lhs.getType());
  switch (kind) {
  case gpu::AllReduceOperation::ADD:
    return isFloat ? arith::AddFOp::create(b, loc, lhs, rhs).getResult()
                   : arith::AddIOp::create(b, loc, lhs, rhs).getResult();
  case gpu::AllReduceOperation::MUL:
    return isFloat ? arith::MulFOp::create(b, loc, lhs, rhs).getResult()
                   : arith::MulIOp::create(b, loc, lhs, rhs).getResult();
  case gpu::AllReduceOperation::MAXNUMF:
    return arith::MaxNumFOp::create(b, loc, lhs, rhs);
  case gpu::AllReduceOperation::MINNUMF:
    return arith::MinNumFOp::create(b, loc, lhs, rhs);
  case gpu::AllReduceOperation::MAXIMUMF:
    return arith::MaximumFOp::create(b, loc, lhs, rhs);
  case gpu::AllReduceOperation::MINIMUMF:
    return arith::MinimumFOp::create(b, loc, lhs, rhs);
  case gpu::AllReduceOperation::MAXSI:
    return arith::MaxSIOp::create(b, loc, lhs, rhs);
  case gpu::AllReduceOperation::MINSI:
    return arith::MinSIOp::create(b, loc, lhs, rhs);
  case gpu::AllReduceOperation::MAXUI:
    return arith::MaxUIOp::create(b, loc, lhs, rhs);
  case gpu::AllReduceOperation::MINUI:
    return arith::MinUIOp::create(b, loc, lhs, rhs);
  case gpu::AllReduceOperation::AND:
    return arith::AndIOp::create(b, loc, lhs, rhs);
  case gpu::AllReduceOperation::OR:
    return arith::OrIOp::create(b, loc, lhs, rhs);
  case gpu::AllReduceOperation::XOR:
    return arith::XOrIOp::create(b, loc, lhs, rhs);
  }
  llvm_unreachable("all reduction kinds handled");
}

/// Whether `op` ends a phase: every thread of the block must reach it before
/// any goes on.
bool isBoundary(Operation *op) {
  return isa<gpu::AllReduceOp, gpu::BarrierOp, gpu::ShuffleOp,
             nvgpu::MmaSyncOp>(op);
}

/// Whether the emulation takes `mma`: the m16n8k16 shape on f16 or bf16
/// operands accumulating in f32 (the attention kernel's).
bool isEmulatedMma(nvgpu::MmaSyncOp mma) {
  auto a = cast<VectorType>(mma.getMatrixA().getType());
  auto b = cast<VectorType>(mma.getMatrixB().getType());
  auto c = cast<VectorType>(mma.getMatrixC().getType());
  std::array<int64_t, 3> shape = mma.getMmaShapeAsArray();
  Type in = a.getElementType();
  return shape == std::array<int64_t, 3>{16, 8, 16} &&
         (in.isF16() || in.isBF16()) && b.getElementType() == in &&
         c.getElementType().isF32() &&
         a.getShape() == ArrayRef<int64_t>{4, 2} &&
         b.getShape() == ArrayRef<int64_t>{2, 2} &&
         c.getShape() == ArrayRef<int64_t>{2, 2};
}

/// Runs one gpu.launch as loops (see the pass description). A body whose
/// threads meet (barriers, block reductions, shuffles) runs in phases, each
/// a loop over the block's threads; an scf.for holding such a meeting point
/// runs once per block, its body's phases in each iteration.
class Emulator {
public:
  explicit Emulator(gpu::LaunchOp launch)
      : launch(launch), loc(launch.getLoc()), b(launch) {}

  LogicalResult run() {
    if (!launch.getAsyncDependencies().empty() || launch.getAsyncToken() ||
        launch.getDynamicSharedMemorySize() || launch.hasClusterSize() ||
        !launch.getPrivateAttributions().empty())
      return launch.emitError(
          "cannot emulate this gpu.launch on the CPU: async tokens, dynamic "
          "shared memory, clusters and private memory attributions are not "
          "supported");
    Block &body = launch.getBody().front();
    if (failed(findPhasedLoops(body)))
      return failure();

    zero = arith::ConstantIndexOp::create(b, loc, 0);
    one = arith::ConstantIndexOp::create(b, loc, 1);
    grid = launch.getGridSizeOperandValues();
    block = launch.getBlockSizeOperandValues();
    threadCount = arith::MulIOp::create(
        b, loc, block.x, arith::MulIOp::create(b, loc, block.y, block.z));
    mapping.map(launch.getGridSize().x, grid.x);
    mapping.map(launch.getGridSize().y, grid.y);
    mapping.map(launch.getGridSize().z, grid.z);
    mapping.map(launch.getBlockSize().x, block.x);
    mapping.map(launch.getBlockSize().y, block.y);
    mapping.map(launch.getBlockSize().z, block.z);
    // Blocks, z outermost.
    for (auto [id, size] : {std::pair{launch.getBlockIds().z, grid.z},
                            std::pair{launch.getBlockIds().y, grid.y},
                            std::pair{launch.getBlockIds().x, grid.x}}) {
      auto loop = scf::ForOp::create(b, loc, zero, size, one);
      mapping.map(id, loop.getInductionVar());
      b.setInsertionPointToStart(loop.getBody());
    }
    // A block's workgroup memory, and every buffer the emulation keeps per
    // block, are allocated once at the start of the block.
    blockBody = b.getInsertionBlock();
    for (BlockArgument shared : launch.getWorkgroupAttributions()) {
      auto type = cast<MemRefType>(shared.getType());
      if (!type.hasStaticShape())
        return launch.emitError("cannot emulate on the CPU: workgroup memory "
                                "of dynamic shape ")
               << type;
      mapping.map(shared, perBlock(MemRefType::get(
                              type.getShape(), type.getElementType(),
                              type.getLayout(), Attribute())));
    }
    perThreadValues.insert(launch.getThreadIds().x);
    perThreadValues.insert(launch.getThreadIds().y);
    perThreadValues.insert(launch.getThreadIds().z);

    Block::iterator terminator = Block::iterator(body.getTerminator());
    if (phased.empty() &&
        llvm::none_of(body, [](Operation &op) { return isBoundary(&op); })) {
      bool lanes = false;
      body.walk([&](gpu::LaneIdOp) { lanes = true; });
      threads(
          [&] {
            for (Operation &op : llvm::make_range(body.begin(), terminator))
              cloneOp(op);
          },
          /*withLinear=*/lanes);
    } else if (failed(emitSequence(body, body.begin(), terminator))) {
      return failure();
    }
    launch.erase();
    return success();
  }

private:
  /// The loops that hold a meeting point of the block's threads (through
  /// loops only, from the body's top level); an error for one anywhere else.
  LogicalResult findPhasedLoops(Block &body) {
    WalkResult walk = body.walk([&](Operation *op) {
      bool boundary = isBoundary(op);
      if (!boundary) {
        if (op != body.getTerminator() &&
            isa<gpu::GPUDialect>(op->getDialect()) &&
            !isa<gpu::BlockIdOp, gpu::ThreadIdOp, gpu::GridDimOp,
                 gpu::BlockDimOp, gpu::LaneIdOp>(op)) {
          op->emitError("cannot emulate '")
              << op->getName()
              << "' on the CPU (threads run one after another)";
          return WalkResult::interrupt();
        }
        return WalkResult::advance();
      }
      if (auto mma = dyn_cast<nvgpu::MmaSyncOp>(op);
          mma && !isEmulatedMma(mma)) {
        op->emitError("cannot emulate this nvgpu.mma.sync on the CPU: the "
                      "emulation takes the m16n8k16 shape on f16 or bf16 "
                      "operands with an f32 accumulator");
        return WalkResult::interrupt();
      }
      if (auto r = dyn_cast<gpu::AllReduceOp>(op); r && !r.getOp()) {
        op->emitError("cannot emulate on the CPU: a gpu.all_reduce must have "
                      "a reduction kind");
        return WalkResult::interrupt();
      }
      SmallVector<scf::ForOp> loops;
      for (Operation *parent = op->getParentOp(); parent != launch;
           parent = parent->getParentOp()) {
        auto loop = dyn_cast<scf::ForOp>(parent);
        if (!loop) {
          op->emitError("cannot emulate on the CPU: '")
              << op->getName()
              << "' must be at the top level of the launch body or of loops "
                 "there (scf.for), not inside '"
              << parent->getName() << "'";
          return WalkResult::interrupt();
        }
        loops.push_back(loop);
      }
      phased.insert(loops.begin(), loops.end());
      return WalkResult::advance();
    });
    return failure(walk.wasInterrupted());
  }

  /// A buffer of `type` per block, allocated at the block's start.
  Value perBlock(MemRefType type, ValueRange sizes = {}) {
    OpBuilder::InsertionGuard guard(b);
    if (lastAlloca)
      b.setInsertionPointAfter(lastAlloca);
    else
      b.setInsertionPointToStart(blockBody);
    auto buffer = memref::AllocaOp::create(b, loc, type, sizes);
    lastAlloca = buffer;
    return buffer;
  }

  /// A slot per thread for the per-thread `value`, reloaded at the start of
  /// every later loop over the threads.
  Value slotFor(Value value, Operation *diagnose) {
    if (Value slot = slots.lookup(value))
      return slot;
    if (!MemRefType::isValidElementType(value.getType())) {
      diagnose->emitError("cannot emulate on the CPU: a per-thread value of "
                          "type ")
          << value.getType() << " is used after its threads meet";
      return nullptr;
    }
    Value slot = perBlock(
        MemRefType::get({ShapedType::kDynamic}, value.getType()), threadCount);
    slots[value] = slot;
    slotOrder.push_back(value);
    return slot;
  }

  /// Loops over the block's threads at the insertion point (left after
  /// them), mapping the thread ids, and calls `perThread` inside with the
  /// slots reloaded.
  void threads(llvm::function_ref<void()> perThread, bool withLinear = true) {
    OpBuilder::InsertionGuard guard(b);
    for (auto [id, size] : {std::pair{launch.getThreadIds().z, block.z},
                            std::pair{launch.getThreadIds().y, block.y},
                            std::pair{launch.getThreadIds().x, block.x}}) {
      auto loop = scf::ForOp::create(b, loc, zero, size, one);
      mapping.map(id, loop.getInductionVar());
      b.setInsertionPointToStart(loop.getBody());
    }
    if (!withLinear)
      return perThread();
    Value z =
        arith::MulIOp::create(b, loc, mapping.lookup(launch.getThreadIds().z),
                              arith::MulIOp::create(b, loc, block.y, block.x));
    Value y = arith::MulIOp::create(
        b, loc, mapping.lookup(launch.getThreadIds().y), block.x);
    linearThread =
        arith::AddIOp::create(b, loc, arith::AddIOp::create(b, loc, z, y),
                              mapping.lookup(launch.getThreadIds().x));
    for (Value value : slotOrder)
      mapping.map(value,
                  memref::LoadOp::create(b, loc, slots[value], linearThread)
                      .getResult());
    for (auto &[result, shuffle] : shuffles)
      mapShuffle(result, shuffle);
    perThread();
  }

  /// `shuffle`'s results for the thread at linearThread: its partner's
  /// operand (from the operand's slot) and whether the partner is in range,
  /// else its own operand.
  void mapShuffle(Value, gpu::ShuffleOp shuffle) {
    Value slot = slots.lookup(shuffle.getValue());
    Type index = b.getIndexType();
    Value c32 = arith::ConstantIndexOp::create(b, loc, 32);
    Value lane = arith::RemUIOp::create(b, loc, linearThread, c32);
    Value warp = arith::SubIOp::create(b, loc, linearThread, lane);
    Value offset = arith::IndexCastOp::create(
        b, loc, index, mapping.lookupOrDefault(shuffle.getOffset()));
    Value width = arith::IndexCastOp::create(
        b, loc, index, mapping.lookupOrDefault(shuffle.getWidth()));
    Value partner;
    switch (shuffle.getMode()) {
    case gpu::ShuffleMode::XOR:
      partner = arith::XOrIOp::create(b, loc, lane, offset);
      break;
    case gpu::ShuffleMode::UP:
      partner = arith::SubIOp::create(b, loc, lane, offset);
      break;
    case gpu::ShuffleMode::DOWN:
      partner = arith::AddIOp::create(b, loc, lane, offset);
      break;
    case gpu::ShuffleMode::IDX:
      partner = offset;
      break;
    }
    // In range: 0 <= partner < width (as a signed index: UP can go below).
    Value valid = arith::AndIOp::create(
        b, loc,
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sge, partner, zero),
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, partner,
                              width));
    Value source = arith::SelectOp::create(
        b, loc, valid, arith::AddIOp::create(b, loc, warp, partner),
        linearThread);
    // A partner past the block's last thread holds nothing: its own value.
    Value inBlock = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                          source, threadCount);
    source = arith::SelectOp::create(b, loc, inBlock, source, linearThread);
    valid = arith::AndIOp::create(b, loc, valid, inBlock);
    mapping.map(shuffle.getShuffleResult(),
                memref::LoadOp::create(b, loc, slot, source).getResult());
    mapping.map(shuffle.getValid(), valid);
  }

  void cloneOp(Operation &op) {
    if (auto id = dyn_cast<gpu::BlockIdOp>(op)) {
      mapping.map(id.getResult(),
                  mapping.lookup(dim(launch.getBlockIds(), id.getDimension())));
      return;
    }
    if (auto id = dyn_cast<gpu::ThreadIdOp>(op)) {
      mapping.map(id.getResult(), mapping.lookup(dim(launch.getThreadIds(),
                                                     id.getDimension())));
      return;
    }
    if (auto lane = dyn_cast<gpu::LaneIdOp>(op)) {
      mapping.map(
          lane.getResult(),
          arith::RemUIOp::create(b, loc, linearThread,
                                 arith::ConstantIndexOp::create(b, loc, 32)));
      return;
    }
    if (auto d = dyn_cast<gpu::GridDimOp>(op)) {
      mapping.map(d.getResult(), dim(grid, d.getDimension()));
      return;
    }
    if (auto d = dyn_cast<gpu::BlockDimOp>(op)) {
      mapping.map(d.getResult(), dim(block, d.getDimension()));
      return;
    }
    b.clone(op, mapping);
  }

  /// Whether a user of a value defined by `op` of `blk` lies outside
  /// `segment` (a later phase, a phased loop, a terminator), other than an
  /// mma.sync ending it (which gathers its fragments in the phase itself).
  static bool usedOutside(Value value, Block &blk,
                          const llvm::SmallPtrSetImpl<Operation *> &segment,
                          Operation *boundary) {
    return llvm::any_of(value.getUsers(), [&](Operation *user) {
      Operation *top = blk.findAncestorOpInBlock(*user);
      if (top && top == boundary && isa<nvgpu::MmaSyncOp>(boundary))
        return false;
      return !top || !segment.contains(top);
    });
  }

  /// Emits the ops [begin, end) of `blk` (the launch body or a phased
  /// loop's body) in phases.
  LogicalResult emitSequence(Block &blk, Block::iterator begin,
                             Block::iterator end) {
    Block::iterator start = begin;
    for (Operation &op : llvm::make_range(begin, end)) {
      auto loop = dyn_cast<scf::ForOp>(op);
      if (!isBoundary(&op) && !(loop && phased.contains(loop)))
        continue;
      if (failed(emitSegment(blk, start, Block::iterator(op), &op)))
        return failure();
      if (loop && failed(emitPhasedLoop(loop)))
        return failure();
      start = std::next(Block::iterator(op));
    }
    return emitSegment(blk, start, end, nullptr);
  }

  /// One phase: the ops [begin, end) of `blk`, then `boundary` (a
  /// reduction's fold, a shuffle's operand, a barrier; a phased loop is
  /// emitted by the caller).
  LogicalResult emitSegment(Block &blk, Block::iterator begin,
                            Block::iterator end, Operation *boundary) {
    llvm::SmallPtrSet<Operation *, 16> segment;
    for (Operation &op : llvm::make_range(begin, end))
      segment.insert(&op);
    SmallVector<Operation *> uniform, perThread;
    SmallVector<Value> crossing;
    for (Operation &op : llvm::make_range(begin, end)) {
      bool threadDependent =
          isa<gpu::ThreadIdOp, gpu::LaneIdOp>(op) || op.getNumRegions() != 0 ||
          !isMemoryEffectFree(&op) ||
          llvm::any_of(op.getOperands(),
                       [&](Value v) { return perThreadValues.contains(v); });
      if (!threadDependent) {
        uniform.push_back(&op);
        continue;
      }
      perThread.push_back(&op);
      for (Value result : op.getResults()) {
        perThreadValues.insert(result);
        if (!usedOutside(result, blk, segment, boundary))
          continue;
        if (!slotFor(result, &op))
          return failure();
        crossing.push_back(result);
      }
    }
    for (Operation *op : uniform)
      cloneOp(*op);

    auto reduce = dyn_cast_or_null<gpu::AllReduceOp>(boundary);
    auto shuffle = dyn_cast_or_null<gpu::ShuffleOp>(boundary);
    auto mma = dyn_cast_or_null<nvgpu::MmaSyncOp>(boundary);
    Value acc, first;
    if (reduce) {
      Type type = reduce.getType();
      acc = perBlock(MemRefType::get({}, type));
      // The first thread's operand starts the fold: no identity needed.
      first = perBlock(MemRefType::get({}, b.getI1Type()));
      memref::StoreOp::create(
          b, loc, arith::ConstantIntOp::create(b, loc, 1, 1), first);
    }
    // A shuffle's operand, per thread: kept in its slot for the partners.
    Value operand = shuffle ? shuffle.getValue() : Value();
    bool operandUniform = operand && !perThreadValues.contains(operand);
    Value operandSlot;
    if (operand) {
      if (!(operandSlot = slotFor(operand, shuffle)))
        return failure();
    }
    // A shuffle whose operand is already in its slot (a phased loop's
    // result, a value of an earlier phase) needs no loop of its own here,
    // but its results are still remade below.
    bool needsLoop = !perThread.empty() || reduce || operandUniform || mma ||
                     !crossing.empty();
    if (needsLoop)
      threads([&] {
        for (Operation *op : perThread)
          cloneOp(*op);
        for (Value value : crossing)
          memref::StoreOp::create(b, loc, mapping.lookup(value), slots[value],
                                  linearThread);
        if (operandUniform)
          memref::StoreOp::create(b, loc, mapping.lookupOrDefault(operand),
                                  operandSlot, linearThread);
        if (mma)
          scatterFragments(mma);
        if (!reduce)
          return;
        Type type = reduce.getType();
        Value value = mapping.lookupOrDefault(reduce.getValue());
        Value isFirst = memref::LoadOp::create(b, loc, first);
        auto choose = scf::IfOp::create(b, loc, type, isFirst, true);
        {
          OpBuilder::InsertionGuard guard(b);
          b.setInsertionPointToStart(&choose.getThenRegion().front());
          scf::YieldOp::create(b, loc, value);
          b.setInsertionPointToStart(&choose.getElseRegion().front());
          Value old = memref::LoadOp::create(b, loc, acc);
          scf::YieldOp::create(b, loc,
                               combine(b, loc, *reduce.getOp(), old, value));
        }
        memref::StoreOp::create(b, loc, choose.getResult(0), acc);
        memref::StoreOp::create(
            b, loc, arith::ConstantIntOp::create(b, loc, 0, 1), first);
      });
    if (reduce)
      mapping.map(reduce.getResult(), memref::LoadOp::create(b, loc, acc));
    if (mma)
      multiplyFragments(mma);
    if (shuffle) {
      // Its results are per thread, made afresh in each later loop over the
      // threads from the operand's slot.
      perThreadValues.insert(shuffle.getShuffleResult());
      perThreadValues.insert(shuffle.getValid());
      shuffles.emplace_back(shuffle.getShuffleResult(), shuffle);
    }
    return success();
  }

  /// The (row, column) of element `e` of register `r` of a lane's fragment
  /// (its group `g` = lane / 4, and `t` = lane % 4) of mma.sync m16n8k16's
  /// A (16 x 16, row-major), B (16 x 8, k x n) or C (16 x 8), as the PTX ISA
  /// lays them out.
  enum class Fragment { A, B, C };
  static std::pair<int64_t, int64_t> fragmentCoord(Fragment f, int64_t r,
                                                   int64_t e) {
    // Relative to (g, 2t) for A and C, (2t, g) for B.
    switch (f) {
    case Fragment::A:
      return {8 * (r % 2), e + 8 * (r / 2)};
    case Fragment::B:
      return {e + 8 * r, 0};
    case Fragment::C:
      return {8 * r, e};
    }
    llvm_unreachable("three fragments");
  }

  /// The block's per-warp matrices an mma.sync's fragments are gathered in
  /// (f32: A 16 x 16, B 16 x 8, C 16 x 8), made on first use.
  Value warpMatrix(Fragment f) {
    Value &m = matrices[static_cast<int>(f)];
    if (m)
      return m;
    OpBuilder::InsertionGuard guard(b);
    if (lastAlloca)
      b.setInsertionPointAfter(lastAlloca);
    else
      b.setInsertionPointToStart(blockBody);
    Value c31 = arith::ConstantIndexOp::create(b, loc, 31);
    Value warps = arith::DivUIOp::create(
        b, loc, arith::AddIOp::create(b, loc, threadCount, c31),
        arith::ConstantIndexOp::create(b, loc, 32));
    int64_t cols = f == Fragment::A ? 16 : 8;
    auto buffer = memref::AllocaOp::create(
        b, loc,
        MemRefType::get({ShapedType::kDynamic, 16, cols}, b.getF32Type()),
        ValueRange{warps});
    lastAlloca = buffer;
    m = buffer;
    return m;
  }

  /// In a loop over the threads: the thread's fragments of `mma`'s A, B and
  /// C (widened to f32), written into its warp's matrices.
  void scatterFragments(nvgpu::MmaSyncOp mma) {
    Value c4 = arith::ConstantIndexOp::create(b, loc, 4);
    Value c32 = arith::ConstantIndexOp::create(b, loc, 32);
    Value lane = arith::RemUIOp::create(b, loc, linearThread, c32);
    Value warp = arith::DivUIOp::create(b, loc, linearThread, c32);
    Value g = arith::DivUIOp::create(b, loc, lane, c4);
    Value t2 =
        arith::MulIOp::create(b, loc, arith::RemUIOp::create(b, loc, lane, c4),
                              arith::ConstantIndexOp::create(b, loc, 2));
    for (auto [f, value] : {std::pair{Fragment::A, mma.getMatrixA()},
                            std::pair{Fragment::B, mma.getMatrixB()},
                            std::pair{Fragment::C, mma.getMatrixC()}}) {
      Value fragment = mapping.lookupOrDefault(value);
      Value matrix = warpMatrix(f);
      int64_t regs = cast<VectorType>(value.getType()).getDimSize(0);
      for (int64_t r = 0; r < regs; ++r)
        for (int64_t e = 0; e < 2; ++e) {
          auto [dr, dc] = fragmentCoord(f, r, e);
          Value element = vector::ExtractOp::create(b, loc, fragment,
                                                    ArrayRef<int64_t>{r, e});
          if (!element.getType().isF32())
            element = arith::ExtFOp::create(b, loc, b.getF32Type(), element);
          Value row = f == Fragment::B ? t2 : g;
          Value col = f == Fragment::B ? g : t2;
          row = arith::AddIOp::create(
              b, loc, row, arith::ConstantIndexOp::create(b, loc, dr));
          col = arith::AddIOp::create(
              b, loc, col, arith::ConstantIndexOp::create(b, loc, dc));
          memref::StoreOp::create(b, loc, element, matrix,
                                  ValueRange{warp, row, col});
        }
    }
  }

  /// After the loop that gathered `mma`'s fragments: a loop over the threads
  /// computing each one's D fragment, C + A * B over its warp's matrices
  /// (summed in k order, in f32), kept in a slot for the later phases.
  void multiplyFragments(nvgpu::MmaSyncOp mma) {
    Value result = mma.getRes();
    Value slot = perBlock(
        MemRefType::get({ShapedType::kDynamic}, result.getType()), threadCount);
    threads([&] {
      Value c4 = arith::ConstantIndexOp::create(b, loc, 4);
      Value c32 = arith::ConstantIndexOp::create(b, loc, 32);
      Value lane = arith::RemUIOp::create(b, loc, linearThread, c32);
      Value warp = arith::DivUIOp::create(b, loc, linearThread, c32);
      Value g = arith::DivUIOp::create(b, loc, lane, c4);
      Value t2 = arith::MulIOp::create(
          b, loc, arith::RemUIOp::create(b, loc, lane, c4),
          arith::ConstantIndexOp::create(b, loc, 2));
      Value a = warpMatrix(Fragment::A), bm = warpMatrix(Fragment::B),
            c = warpMatrix(Fragment::C);
      Value d = arith::ConstantOp::create(
          b, loc, cast<TypedAttr>(b.getZeroAttr(result.getType())));
      for (int64_t r = 0; r < 2; ++r)
        for (int64_t e = 0; e < 2; ++e) {
          auto [dr, dc] = fragmentCoord(Fragment::C, r, e);
          Value row = arith::AddIOp::create(
              b, loc, g, arith::ConstantIndexOp::create(b, loc, dr));
          Value col = arith::AddIOp::create(
              b, loc, t2, arith::ConstantIndexOp::create(b, loc, dc));
          Value init =
              memref::LoadOp::create(b, loc, c, ValueRange{warp, row, col});
          auto sum = scf::ForOp::create(
              b, loc, zero, arith::ConstantIndexOp::create(b, loc, 16), one,
              ValueRange{init});
          {
            OpBuilder::InsertionGuard guard(b);
            b.setInsertionPointToStart(sum.getBody());
            Value k = sum.getInductionVar();
            Value x =
                memref::LoadOp::create(b, loc, a, ValueRange{warp, row, k});
            Value y =
                memref::LoadOp::create(b, loc, bm, ValueRange{warp, k, col});
            scf::YieldOp::create(b, loc,
                                 ValueRange{arith::AddFOp::create(
                                     b, loc, sum.getRegionIterArgs()[0],
                                     arith::MulFOp::create(b, loc, x, y))});
          }
          d = vector::InsertOp::create(b, loc, sum.getResult(0), d,
                                       ArrayRef<int64_t>{r, e});
        }
      memref::StoreOp::create(b, loc, d, slot, linearThread);
    });
    perThreadValues.insert(result);
    slots[result] = slot;
    slotOrder.push_back(result);
  }

  /// A loop whose body meets: its bounds are the block's (uniform); its
  /// carried values live in a slot per thread, set from the initial values
  /// before it, from the yielded ones at the end of each iteration, and read
  /// as its results after it.
  LogicalResult emitPhasedLoop(scf::ForOp loop) {
    for (Value bound :
         {loop.getLowerBound(), loop.getUpperBound(), loop.getStep()})
      if (perThreadValues.contains(bound))
        return loop.emitError("cannot emulate on the CPU: a loop whose "
                              "threads meet must have the same bounds in "
                              "every thread of the block");
    SmallVector<Value> carried;
    for (auto [arg, result] :
         llvm::zip(loop.getRegionIterArgs(), loop.getResults())) {
      Value slot = slotFor(arg, loop);
      if (!slot)
        return failure();
      perThreadValues.insert(arg);
      perThreadValues.insert(result);
      // The result is the slot's last value.
      slots[result] = slot;
      slotOrder.push_back(result);
      carried.push_back(slot);
    }
    auto storeCarried = [&](ValueRange values) {
      threads([&] {
        SmallVector<Value> now = llvm::map_to_vector(
            values, [&](Value v) { return mapping.lookupOrDefault(v); });
        for (auto [value, slot] : llvm::zip(now, carried))
          memref::StoreOp::create(b, loc, value, slot, linearThread);
      });
    };
    if (!carried.empty())
      storeCarried(loop.getInitArgs());
    auto emulated = scf::ForOp::create(
        b, loc, mapping.lookupOrDefault(loop.getLowerBound()),
        mapping.lookupOrDefault(loop.getUpperBound()),
        mapping.lookupOrDefault(loop.getStep()));
    mapping.map(loop.getInductionVar(), emulated.getInductionVar());
    // The body's shuffles are remade in its own thread loops only: nothing
    // after the loop uses them, and their operands are the body's.
    size_t outerShuffles = shuffles.size();
    llvm::scope_exit dropBodyShuffles([&] { shuffles.resize(outerShuffles); });
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPoint(emulated.getBody()->getTerminator());
      Block &body = *loop.getBody();
      if (failed(emitSequence(body, body.begin(),
                              Block::iterator(body.getTerminator()))))
        return failure();
      if (!carried.empty())
        storeCarried(body.getTerminator()->getOperands());
    }
    return success();
  }

  static Value dim(const gpu::KernelDim3 &dims, gpu::Dimension d) {
    switch (d) {
    case gpu::Dimension::x:
      return dims.x;
    case gpu::Dimension::y:
      return dims.y;
    case gpu::Dimension::z:
      return dims.z;
    }
    llvm_unreachable("three dimensions");
  }

  gpu::LaunchOp launch;
  Location loc;
  OpBuilder b;
  IRMapping mapping;
  gpu::KernelDim3 grid, block;
  Value zero, one, threadCount, linearThread;
  /// The innermost block loop's body, and the last buffer allocated there.
  Block *blockBody = nullptr;
  Operation *lastAlloca = nullptr;
  /// The loops whose bodies hold a meeting point.
  llvm::SmallPtrSet<Operation *, 4> phased;
  llvm::SmallPtrSet<Value, 16> perThreadValues;
  /// Each per-thread value used past its phase, and its slot.
  DenseMap<Value, Value> slots;
  SmallVector<Value> slotOrder;
  /// The per-warp matrices mma.sync's fragments are gathered in (A, B, C).
  Value matrices[3];
  /// The shuffles met so far, their results remade in each thread loop.
  SmallVector<std::pair<Value, gpu::ShuffleOp>> shuffles;
};

struct EmulateGPULaunchesPass
    : public tp::impl::EmulateGPULaunchesPassBase<EmulateGPULaunchesPass> {
  void runOnOperation() override {
    SmallVector<gpu::LaunchOp> launches;
    getOperation()->walk([&](gpu::LaunchOp op) { launches.push_back(op); });
    for (gpu::LaunchOp launch : launches)
      if (failed(Emulator(launch).run()))
        return signalPassFailure();
  }
};

} // namespace
