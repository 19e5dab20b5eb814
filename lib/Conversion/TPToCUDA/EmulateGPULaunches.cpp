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
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

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

class Emulator {
public:
  explicit Emulator(gpu::LaunchOp launch)
      : launch(launch), loc(launch.getLoc()) {}

  LogicalResult run() {
    if (!launch.getAsyncDependencies().empty() || launch.getAsyncToken() ||
        launch.getDynamicSharedMemorySize() || launch.hasClusterSize() ||
        !launch.getWorkgroupAttributions().empty() ||
        !launch.getPrivateAttributions().empty())
      return launch.emitError(
          "cannot emulate this gpu.launch on the CPU: async tokens, dynamic "
          "shared memory, clusters and memory attributions are not "
          "supported");
    Block &body = launch.getBody().front();
    // The block's phases end at its top-level reductions and barriers.
    SmallVector<Operation *> boundaries;
    WalkResult walk = body.walk([&](Operation *op) {
      if (auto r = dyn_cast<gpu::AllReduceOp>(op)) {
        if (r->getBlock() != &body || !r.getOp()) {
          op->emitError("cannot emulate on the CPU: a gpu.all_reduce must "
                        "have a reduction kind and be at the top level of "
                        "the launch body");
          return WalkResult::interrupt();
        }
        boundaries.push_back(op);
        return WalkResult::advance();
      }
      if (isa<gpu::BarrierOp>(op)) {
        if (op->getBlock() != &body) {
          op->emitError("cannot emulate on the CPU: a gpu.barrier must be at "
                        "the top level of the launch body");
          return WalkResult::interrupt();
        }
        boundaries.push_back(op);
        return WalkResult::advance();
      }
      if (op != body.getTerminator() &&
          isa<gpu::GPUDialect>(op->getDialect()) &&
          !isa<gpu::BlockIdOp, gpu::ThreadIdOp, gpu::GridDimOp,
               gpu::BlockDimOp>(op)) {
        op->emitError("cannot emulate '")
            << op->getName() << "' on the CPU (threads run one after another)";
        return WalkResult::interrupt();
      }
      return WalkResult::advance();
    });
    if (walk.wasInterrupted())
      return failure();

    OpBuilder b(launch);
    Value zero = arith::ConstantIndexOp::create(b, loc, 0);
    Value one = arith::ConstantIndexOp::create(b, loc, 1);
    gpu::KernelDim3 grid = launch.getGridSizeOperandValues();
    gpu::KernelDim3 block = launch.getBlockSizeOperandValues();
    IRMapping mapping;
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
    // The thread's index in its block, inside `threads`.
    Value linearThread;
    auto threads = [&](llvm::function_ref<void()> perThread,
                       bool withLinear = true) {
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
      Value z = arith::MulIOp::create(
          b, loc, mapping.lookup(launch.getThreadIds().z),
          arith::MulIOp::create(b, loc, block.y, block.x));
      Value y = arith::MulIOp::create(
          b, loc, mapping.lookup(launch.getThreadIds().y), block.x);
      linearThread =
          arith::AddIOp::create(b, loc, arith::AddIOp::create(b, loc, z, y),
                                mapping.lookup(launch.getThreadIds().x));
      perThread();
    };
    auto cloneOp = [&](Operation &op) {
      if (auto id = dyn_cast<gpu::BlockIdOp>(op)) {
        mapping.map(id.getResult(), mapping.lookup(dim(launch.getBlockIds(),
                                                       id.getDimension())));
        return;
      }
      if (auto id = dyn_cast<gpu::ThreadIdOp>(op)) {
        mapping.map(id.getResult(), mapping.lookup(dim(launch.getThreadIds(),
                                                       id.getDimension())));
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
    };

    Block::iterator terminator = Block::iterator(body.getTerminator());
    if (boundaries.empty()) {
      threads(
          [&] {
            for (Operation &op : llvm::make_range(body.begin(), terminator))
              cloneOp(op);
          },
          /*withLinear=*/false);
      launch.erase();
      return success();
    }

    // Each phase: the ops that are the same for every thread of a block
    // (pure, with no region, using no thread id nor a per-thread value: the
    // block's indices) run once per block, the others per thread. A
    // per-thread value a later phase uses is kept in a slot per thread; a
    // reduction's operand is folded into one accumulator over the threads,
    // and its result is the block's.
    Value threadCount = arith::MulIOp::create(
        b, loc, block.x, arith::MulIOp::create(b, loc, block.y, block.z));
    llvm::SmallPtrSet<Value, 16> perThreadValues;
    perThreadValues.insert(launch.getThreadIds().x);
    perThreadValues.insert(launch.getThreadIds().y);
    perThreadValues.insert(launch.getThreadIds().z);
    DenseMap<Operation *, unsigned> phaseOf;
    {
      unsigned phase = 0;
      for (Operation &op : llvm::make_range(body.begin(), terminator)) {
        phaseOf[&op] = phase;
        if (llvm::is_contained(boundaries, &op))
          ++phase;
      }
    }
    // Slots of the per-thread values used after their phase.
    DenseMap<Value, Value> slots;
    SmallVector<SmallVector<Value>> crossingByPhase(boundaries.size() + 1);
    Block::iterator begin = body.begin();
    for (auto [index, boundary] : llvm::enumerate(boundaries)) {
      Block::iterator end = Block::iterator(boundary);
      SmallVector<Operation *> uniform, perThread;
      for (Operation &op : llvm::make_range(begin, end)) {
        bool threadDependent =
            isa<gpu::ThreadIdOp>(op) || op.getNumRegions() != 0 ||
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
          bool later = llvm::any_of(result.getUsers(), [&](Operation *user) {
            Operation *top = body.findAncestorOpInBlock(*user);
            return top && phaseOf.lookup(top) > index;
          });
          if (!later)
            continue;
          if (!MemRefType::isValidElementType(result.getType()))
            return op.emitError("cannot emulate on the CPU: a per-thread "
                                "value of type ")
                   << result.getType() << " is used after a gpu.all_reduce";
          slots[result] = memref::AllocaOp::create(
              b, loc, MemRefType::get({ShapedType::kDynamic}, result.getType()),
              ValueRange{threadCount});
          crossingByPhase[index].push_back(result);
        }
      }
      for (Operation *op : uniform)
        cloneOp(*op);
      auto reduce = dyn_cast<gpu::AllReduceOp>(boundary);
      Value acc, first;
      if (reduce) {
        Type type = reduce.getType();
        acc = memref::AllocaOp::create(b, loc, MemRefType::get({}, type));
        // The first thread's operand starts the fold: no identity needed.
        first = memref::AllocaOp::create(b, loc,
                                         MemRefType::get({}, b.getI1Type()));
        memref::StoreOp::create(
            b, loc, arith::ConstantIntOp::create(b, loc, 1, 1), first);
      }
      threads([&] {
        reloadSlots(b, crossingByPhase, index, slots, mapping, linearThread);
        for (Operation *op : perThread)
          cloneOp(*op);
        for (Value value : crossingByPhase[index])
          memref::StoreOp::create(b, loc, mapping.lookup(value), slots[value],
                                  linearThread);
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
      begin = std::next(end);
    }
    // The last phase, per thread.
    threads([&] {
      reloadSlots(b, crossingByPhase, boundaries.size(), slots, mapping,
                  linearThread);
      for (Operation &op : llvm::make_range(begin, terminator))
        cloneOp(op);
    });
    launch.erase();
    return success();
  }

private:
  /// Maps the per-thread values of the phases before `phase` to their
  /// slots' elements for the thread at `linear`.
  void reloadSlots(OpBuilder &b, ArrayRef<SmallVector<Value>> crossing,
                   unsigned phase, DenseMap<Value, Value> &slots,
                   IRMapping &mapping, Value linear) {
    for (unsigned earlier = 0; earlier < phase; ++earlier)
      for (Value value : crossing[earlier])
        mapping.map(
            value,
            memref::LoadOp::create(b, loc, slots[value], linear).getResult());
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
