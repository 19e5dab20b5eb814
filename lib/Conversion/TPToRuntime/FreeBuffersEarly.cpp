//===- FreeBuffersEarly.cpp - A buffer freed after its last use -----------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// MLIR's ownership-based deallocation frees the buffers a block allocates at
// the end of the block. In straight-line code that is the end of the
// function: a driver calling N layers holds every layer's output until the
// last layer returns (memory linear in the depth), and a layer holds each of
// its intermediates (scores, the MLP's hidden activations) until it returns.
// This pass moves each `memref.dealloc` of a buffer allocated in the same
// block up to just after the last op in the block that uses the buffer or a
// view of it, so that the allocator can hand the memory, still in cache, to
// the next buffer.
//
// A buffer moves only when every use of it and of its views is known not to
// keep it: an op whose memory effects are on its operands (a linalg op, a
// copy, a load or store, a collective's buffer form), a call (a callee
// cannot keep a memref past its return), a view (whose own uses are
// followed), or the dealloc itself. Anything else (a terminator: a return, a
// yield out of a region, a branch; a pointer taken as an integer) leaves the
// dealloc where it is.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

namespace mlir::tp {
#define GEN_PASS_DEF_FREEBUFFERSEARLYPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// The views of `value` that an op makes, or nothing when `user` makes none.
SmallVector<Value> viewsMade(Operation *user, Value value) {
  SmallVector<Value> views;
  if (auto view = dyn_cast<ViewLikeOpInterface>(user)) {
    if (view.getViewSource() == value)
      for (Value result : user->getResults())
        if (isa<BaseMemRefType>(result.getType()))
          views.push_back(result);
  } else if (auto metadata = dyn_cast<memref::ExtractStridedMetadataOp>(user)) {
    views.push_back(metadata.getBaseBuffer());
  }
  return views;
}

/// Whether `user` reads or writes the buffers it is given and keeps none:
/// no memref comes out of it (an alias), nor a pointer as an integer.
bool keepsNothing(Operation *user) {
  // A terminator hands the buffer on: to a region's results (scf.yield), a
  // successor block or the caller.
  if (user->hasTrait<OpTrait::IsTerminator>() ||
      isa<memref::ExtractAlignedPointerAsIndexOp>(user) ||
      llvm::any_of(user->getResultTypes(), llvm::IsaPred<BaseMemRefType>))
    return false;
  if (isa<CallOpInterface>(user))
    return true;
  auto effects = dyn_cast<MemoryEffectOpInterface>(user);
  if (!effects)
    return false;
  SmallVector<MemoryEffects::EffectInstance> found;
  effects.getEffects(found);
  return llvm::all_of(found, [](const MemoryEffects::EffectInstance &e) {
    return isa<MemoryEffects::Read, MemoryEffects::Write>(e.getEffect());
  });
}

/// The last op of `block` that uses `alloc`'s buffer (through its views too),
/// or nothing when some use might keep the buffer.
Operation *lastUse(memref::AllocOp alloc, memref::DeallocOp dealloc,
                   Block *block,
                   const DenseMap<Operation *, unsigned> &position) {
  Operation *last = alloc;
  SmallVector<Value> worklist = {alloc.getResult()};
  while (!worklist.empty()) {
    Value value = worklist.pop_back_val();
    for (Operation *user : value.getUsers()) {
      if (user == dealloc.getOperation())
        continue;
      Operation *top = block->findAncestorOpInBlock(*user);
      if (!top)
        return nullptr;
      SmallVector<Value> views = viewsMade(user, value);
      if (views.empty() && !keepsNothing(user))
        return nullptr;
      worklist.append(views);
      if (position.lookup(top) > position.lookup(last))
        last = top;
    }
  }
  return last;
}

struct FreeBuffersEarlyPass
    : public tp::impl::FreeBuffersEarlyPassBase<FreeBuffersEarlyPass> {
  void runOnOperation() override {
    getOperation()->walk([&](Block *block) {
      SmallVector<memref::DeallocOp> deallocs;
      for (Operation &op : *block)
        if (auto dealloc = dyn_cast<memref::DeallocOp>(op))
          if (auto alloc = dealloc.getMemref().getDefiningOp<memref::AllocOp>();
              alloc && alloc->getBlock() == block)
            deallocs.push_back(dealloc);
      if (deallocs.empty())
        return;
      // Positions before anything moves: a dealloc only moves up to just
      // after another op, which keeps the order of the others.
      DenseMap<Operation *, unsigned> position;
      for (auto [i, op] : llvm::enumerate(*block))
        position[&op] = i;
      for (memref::DeallocOp dealloc : deallocs) {
        auto alloc = dealloc.getMemref().getDefiningOp<memref::AllocOp>();
        Operation *last = lastUse(alloc, dealloc, block, position);
        if (last && position.lookup(last) < position.lookup(dealloc))
          dealloc->moveAfter(last);
      }
    });
  }
};

} // namespace
