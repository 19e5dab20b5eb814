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
    gpu::AllReduceOp reduce;
    WalkResult walk = body.walk([&](Operation *op) {
      if (auto r = dyn_cast<gpu::AllReduceOp>(op)) {
        if (reduce || r->getBlock() != &body || !r.getOp()) {
          op->emitError("cannot emulate on the CPU: only one gpu.all_reduce "
                        "with a reduction kind, at the top level of the "
                        "launch body, is supported");
          return WalkResult::interrupt();
        }
        reduce = r;
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
    auto threads = [&](llvm::function_ref<void()> perThread) {
      OpBuilder::InsertionGuard guard(b);
      for (auto [id, size] : {std::pair{launch.getThreadIds().z, block.z},
                              std::pair{launch.getThreadIds().y, block.y},
                              std::pair{launch.getThreadIds().x, block.x}}) {
        auto loop = scf::ForOp::create(b, loc, zero, size, one);
        mapping.map(id, loop.getInductionVar());
        b.setInsertionPointToStart(loop.getBody());
      }
      perThread();
    };
    auto cloneRange = [&](Block::iterator begin, Block::iterator end) {
      for (Operation &op : llvm::make_range(begin, end)) {
        if (auto id = dyn_cast<gpu::BlockIdOp>(op)) {
          mapping.map(id.getResult(), mapping.lookup(dim(launch.getBlockIds(),
                                                         id.getDimension())));
          continue;
        }
        if (auto id = dyn_cast<gpu::ThreadIdOp>(op)) {
          mapping.map(id.getResult(), mapping.lookup(dim(launch.getThreadIds(),
                                                         id.getDimension())));
          continue;
        }
        if (auto d = dyn_cast<gpu::GridDimOp>(op)) {
          mapping.map(d.getResult(), dim(grid, d.getDimension()));
          continue;
        }
        if (auto d = dyn_cast<gpu::BlockDimOp>(op)) {
          mapping.map(d.getResult(), dim(block, d.getDimension()));
          continue;
        }
        b.clone(op, mapping);
      }
    };

    Block::iterator terminator = Block::iterator(body.getTerminator());
    if (!reduce) {
      threads([&] { cloneRange(body.begin(), terminator); });
      launch.erase();
      return success();
    }

    // The ops before the reduction that are the same for every thread of a
    // block (pure, with no region, using no thread id nor a per-thread
    // value: the block's indices) run once per block; the others, per
    // thread. The ops after the reduction may use the former, not the
    // latter.
    Block::iterator split = Block::iterator(reduce);
    llvm::SmallPtrSet<Operation *, 16> before;
    llvm::SmallPtrSet<Value, 16> perThreadValues;
    perThreadValues.insert(launch.getThreadIds().x);
    perThreadValues.insert(launch.getThreadIds().y);
    perThreadValues.insert(launch.getThreadIds().z);
    SmallVector<Operation *> uniform, perThread;
    for (Operation &op : llvm::make_range(body.begin(), split)) {
      bool threadDependent =
          isa<gpu::ThreadIdOp>(op) || op.getNumRegions() != 0 ||
          !isMemoryEffectFree(&op) ||
          llvm::any_of(op.getOperands(),
                       [&](Value v) { return perThreadValues.contains(v); });
      if (threadDependent) {
        before.insert(&op);
        perThread.push_back(&op);
        for (Value result : op.getResults())
          perThreadValues.insert(result);
      } else {
        uniform.push_back(&op);
      }
    }
    WalkResult crossing = WalkResult::advance();
    for (Operation &top : llvm::make_range(std::next(split), terminator)) {
      crossing = top.walk([&](Operation *op) {
        for (Value operand : op->getOperands())
          if (Operation *def = operand.getDefiningOp();
              def && before.contains(def) && !isa<arith::ConstantOp>(def)) {
            op->emitError("cannot emulate on the CPU: it uses a per-thread "
                          "value computed before the gpu.all_reduce");
            return WalkResult::interrupt();
          }
        return WalkResult::advance();
      });
      if (crossing.wasInterrupted())
        break;
    }
    if (crossing.wasInterrupted())
      return failure();

    Type type = reduce.getType();
    Value acc = memref::AllocaOp::create(b, loc, MemRefType::get({}, type));
    // The first thread's operand starts the fold: no identity element needed.
    Value first =
        memref::AllocaOp::create(b, loc, MemRefType::get({}, b.getI1Type()));
    memref::StoreOp::create(b, loc, arith::ConstantIntOp::create(b, loc, 1, 1),
                            first);
    for (Operation *op : uniform)
      cloneRange(Block::iterator(op), std::next(Block::iterator(op)));
    threads([&] {
      for (Operation *op : perThread)
        cloneRange(Block::iterator(op), std::next(Block::iterator(op)));
      Value value = mapping.lookup(reduce.getValue());
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
    mapping.map(reduce.getResult(), memref::LoadOp::create(b, loc, acc));
    threads([&] { cloneRange(std::next(split), terminator); });
    launch.erase();
    return success();
  }

private:
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
