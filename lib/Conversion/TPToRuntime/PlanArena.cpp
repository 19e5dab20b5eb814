//===- PlanArena.cpp - A program's intermediates laid out in one arena ----===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// After bufferization and tp-free-buffers-early, an entry point allocates
// each intermediate buffer where it is made and frees it after its last
// use. This pass lays out the entry's own buffers (statically shaped, made
// and freed in its body) as offsets in one arena: each is live from its
// allocation to its free, and two buffers share bytes only when their lives
// do not overlap. The arena becomes the entry's last argument, each buffer a
// view of it, and the manifest's `arena <bytes>` line tells the runtime,
// which allocates it once per session and rank: a run allocates none of
// these buffers.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Common/Buffers.h"
#include "tp/Conversion/Common/RuntimeCalls.h"
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"

#include <map>

namespace mlir::tp {
#define GEN_PASS_DEF_PLANARENAPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

constexpr int64_t kAlignment = 64;

/// A buffer the arena can hold: its allocation, its free, its bytes and the
/// positions in the body between which it is live.
struct Planned {
  memref::AllocOp alloc;
  memref::DeallocOp dealloc;
  int64_t bytes = 0;
  size_t begin = 0, end = 0;
  int64_t offset = 0;
};

/// Bytes of a statically shaped, identity-laid-out memref of whole-byte
/// elements in the default memory space; nothing otherwise.
std::optional<int64_t> bytesOf(MemRefType type) {
  if (!type.getLayout().isIdentity() || type.getMemorySpace() ||
      !type.getElementType().isIntOrFloat() ||
      type.getElementType().getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  return staticByteSize(type);
}

/// The body's buffers the arena can hold, with their lives.
SmallVector<Planned> collect(func::FuncOp func) {
  Block &body = func.getBody().front();
  DenseMap<Operation *, size_t> position;
  size_t index = 0;
  for (Operation &op : body)
    position[&op] = index++;
  SmallVector<Planned> planned;
  for (auto alloc : body.getOps<memref::AllocOp>()) {
    std::optional<int64_t> bytes = bytesOf(alloc.getType());
    if (!bytes || !alloc.getDynamicSizes().empty() ||
        !alloc.getSymbolOperands().empty())
      continue;
    // Freed once, in the body, and used nowhere else than by views and ops
    // of the body (a buffer that escapes through a return stays its own).
    memref::DeallocOp dealloc;
    bool ok = true;
    for (Operation *user : alloc->getUsers()) {
      if (auto d = dyn_cast<memref::DeallocOp>(user)) {
        if (dealloc || d->getBlock() != &body) {
          ok = false;
          break;
        }
        dealloc = d;
      } else if (isa<func::ReturnOp>(user)) {
        ok = false;
        break;
      }
    }
    if (!ok || !dealloc)
      continue;
    planned.push_back({alloc, dealloc,
                       static_cast<int64_t>(llvm::alignTo(*bytes, kAlignment)),
                       position[alloc], position[dealloc], 0});
  }
  return planned;
}

/// Offsets by first fit, largest first: a buffer takes the lowest offset
/// where no buffer alive at the same time lies. Returns the arena's bytes.
int64_t layOut(SmallVector<Planned> &planned) {
  SmallVector<Planned *> order;
  for (Planned &p : planned)
    order.push_back(&p);
  llvm::stable_sort(order, [](const Planned *a, const Planned *b) {
    return a->bytes > b->bytes;
  });
  SmallVector<Planned *> placed;
  int64_t total = 0;
  for (Planned *p : order) {
    // The spans of the placed buffers alive with this one, by offset.
    std::multimap<int64_t, int64_t> taken;
    for (Planned *q : placed)
      if (q->begin < p->end && p->begin < q->end)
        taken.insert({q->offset, q->offset + q->bytes});
    int64_t offset = 0;
    for (auto [start, stop] : taken) {
      if (offset + p->bytes <= start)
        break;
      offset = std::max(offset, stop);
    }
    p->offset = offset;
    total = std::max(total, offset + p->bytes);
    placed.push_back(p);
  }
  return total;
}

struct PlanArenaPass : public tp::impl::PlanArenaPassBase<PlanArenaPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto manifest = module->getAttrOfType<StringAttr>(kManifestAttrName);
    if (!manifest)
      return;
    std::string text = manifest.getValue().str();
    for (auto func : module.getOps<func::FuncOp>()) {
      // The manifest's functions are the entry points.
      if (func.isExternal() || func.isPrivate() ||
          !func.getBody().hasOneBlock())
        continue;
      SmallVector<Planned> planned = collect(func);
      if (planned.empty())
        continue;
      int64_t total = layOut(planned);
      std::optional<std::string> updated = insertManifestLines(
          text, func.getSymName(), "arena " + std::to_string(total) + "\n");
      if (!updated) {
        func.emitOpError("tp-plan-arena: no manifest entry for this function");
        return signalPassFailure();
      }
      text = std::move(*updated);
      // The arena: the last argument.
      auto arenaType =
          MemRefType::get({total}, IntegerType::get(&getContext(), 8));
      unsigned index = func.getNumArguments();
      if (failed(func.insertArgument(index, arenaType, {}, func.getLoc())))
        return signalPassFailure();
      Value arena = func.getArgument(index);
      for (Planned &p : planned) {
        OpBuilder b(p.alloc);
        Value offset =
            arith::ConstantIndexOp::create(b, p.alloc.getLoc(), p.offset);
        Value view =
            memref::ViewOp::create(b, p.alloc.getLoc(), p.alloc.getType(),
                                   arena, offset, ValueRange{});
        p.alloc.replaceAllUsesWith(view);
        p.dealloc.erase();
        p.alloc.erase();
      }
    }
    module->setAttr(kManifestAttrName, StringAttr::get(&getContext(), text));
  }
};

} // namespace
