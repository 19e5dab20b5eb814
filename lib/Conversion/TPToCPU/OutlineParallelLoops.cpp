//===- OutlineParallelLoops.cpp - Loops as functions of an iteration range ===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A rank thread runs everything but its GEMMs alone, while the rest of its
// OpenMP team (the cores its GEMMs use) waits. Two kinds of ops at the top
// of a function have independent iterations and move enough memory to pay
// for waking that team:
// - a nest of `tp.parallel` loops (tp-fuse-reductions' row tiles): each
//   iteration writes its own tile of the outputs, and a buffer allocated
//   before the nest and freed after it that only the nest uses is each
//   iteration's scratch;
// - a linalg op with a parallel loop: its iterations along that loop write
//   disjoint parts of its outputs.
// Each becomes a private function of a range [lo, hi) of its iterations
// (the nest's, collapsed into one; the op's along one parallel loop) that
// runs those iterations, with its own scratch, and a call of it on the whole
// range. tp-lower-parallel-calls makes each call tprt_rt_parallel_for, which
// splits the range over the team.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"
#include "tp/Dialect/TP/IR/TPDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/CallInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

namespace mlir::tp {
#define GEN_PASS_DEF_OUTLINEPARALLELLOOPSPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// Scratch of at most this many bytes in all lives on the stack of the
/// thread running a share; more is allocated on the heap once per share.
constexpr int64_t kStackScratchBytes = 64 * 1024;

/// The bytes of a statically shaped memref, or nullopt.
std::optional<int64_t> staticBytes(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape() ||
      !memref.getElementType().isIntOrFloat())
    return std::nullopt;
  return memref.getNumElements() *
         std::max<int64_t>(1, memref.getElementTypeBitWidth() / 8);
}

/// Whether a value of `type` can be an argument of the range's function: the
/// lowering passes memrefs as bare pointers, which needs a static shape and
/// an identity layout.
bool passable(Type type) {
  if (auto memref = dyn_cast<MemRefType>(type))
    return memref.hasStaticShape() && memref.getLayout().isIdentity();
  return type.isIntOrIndexOrFloat();
}

/// The bytes the linalg ops in `op` (or `op` itself) read and write once.
int64_t linalgBytes(Operation *op) {
  int64_t bytes = 0;
  op->walk([&](linalg::LinalgOp linalg) {
    for (Value operand : linalg->getOperands())
      bytes += staticBytes(operand.getType()).value_or(0);
  });
  return bytes;
}

/// What the range's function is made of.
struct Plan {
  /// The values its arguments take, after lo and hi.
  SmallVector<Value> arguments;
  /// Each iteration's own copy of these buffers.
  SmallVector<Value> scratch;
  /// Made again in the function: constants and views, operands first.
  SmallVector<Operation *> cloned;
};

/// Plans how the function gets `value`, defined outside `region` (the op
/// being outlined); false if it cannot.
bool planValue(Value value, Operation *outlined, Plan &plan,
               llvm::SmallPtrSetImpl<Value> &planned) {
  if (!planned.insert(value).second)
    return true;
  Operation *def = value.getDefiningOp();
  if (def && matchPattern(value, m_Constant())) {
    plan.cloned.push_back(def);
    return true;
  }
  // Scratch: allocated before the nest, used in it and freed after it only.
  if (outlined->hasAttr(TPDialect::kParallelAttrName) &&
      isa_and_nonnull<memref::AllocOp, memref::AllocaOp>(def) &&
      passable(value.getType()) &&
      llvm::all_of(value.getUsers(), [&](Operation *user) {
        return isa<memref::DeallocOp>(user) || outlined->isAncestor(user);
      })) {
    plan.scratch.push_back(value);
    return true;
  }
  if (passable(value.getType())) {
    plan.arguments.push_back(value);
    return true;
  }
  // A view of something the function gets: made there again.
  if (isa_and_nonnull<memref::SubViewOp, memref::ExpandShapeOp,
                      memref::CollapseShapeOp, memref::ViewOp, memref::CastOp,
                      memref::ReinterpretCastOp>(def)) {
    for (Value operand : def->getOperands())
      if (!planValue(operand, outlined, plan, planned))
        return false;
    plan.cloned.push_back(def);
    return true;
  }
  return false;
}

/// The plan for the values `op` uses from outside it, or nullopt.
std::optional<Plan> planCaptures(Operation *op) {
  // A call may do anything, a GEMM or a collective: not at once on threads.
  bool calls = op->walk([](Operation *nested) {
                   return isa<CallOpInterface>(nested) ? WalkResult::interrupt()
                                                       : WalkResult::advance();
                 }).wasInterrupted();
  if (calls)
    return std::nullopt;
  llvm::SetVector<Value> used;
  getUsedValuesDefinedAbove(op->getRegions(), used);
  // A nest's own bounds are rebuilt from their constants; an op's operands
  // are its buffers.
  if (!isa<scf::ForOp>(op))
    used.insert(op->getOperands().begin(), op->getOperands().end());
  Plan plan;
  llvm::SmallPtrSet<Value, 16> planned;
  for (Value value : used)
    if (!planValue(value, op, plan, planned))
      return std::nullopt;
  return plan;
}

/// The perfect nest of tp.parallel loops with constant bounds from `outer`
/// in, or empty.
SmallVector<scf::ForOp> parallelNest(scf::ForOp outer) {
  SmallVector<scf::ForOp> nest;
  for (scf::ForOp loop = outer; loop;) {
    if (!loop->hasAttr(TPDialect::kParallelAttrName) ||
        loop.getNumResults() != 0 ||
        !getConstantIntValue(loop.getLowerBound()) ||
        !getConstantIntValue(loop.getUpperBound()) ||
        !getConstantIntValue(loop.getStep()))
      return {};
    nest.push_back(loop);
    Block *body = loop.getBody();
    scf::ForOp inner;
    if (body->getOperations().size() == 2)
      inner = dyn_cast<scf::ForOp>(body->front());
    if (!inner || !inner->hasAttr(TPDialect::kParallelAttrName))
      break;
    loop = inner;
  }
  return nest;
}

int64_t tripCount(scf::ForOp loop) {
  int64_t lb = *getConstantIntValue(loop.getLowerBound());
  int64_t ub = *getConstantIntValue(loop.getUpperBound());
  int64_t step = *getConstantIntValue(loop.getStep());
  return step > 0 && ub > lb ? (ub - lb + step - 1) / step : 0;
}

/// The loop of `op` to split: the parallel loop, not the innermost unless it
/// is the only one, with the most iterations (the outermost of equals), that
/// each operand indexes at most once and every output indexes; nullopt if
/// none has two iterations.
std::optional<unsigned> splitLoop(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.hasIndexSemantics())
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  SmallVector<utils::IteratorType> iterators = op.getIteratorTypesArray();
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  auto eligible = [&](unsigned d) {
    if (iterators[d] != utils::IteratorType::parallel ||
        ShapedType::isDynamic(ranges[d]) || ranges[d] < 2)
      return false;
    // Every output moves along it: the parts write apart.
    AffineExpr dim = getAffineDimExpr(d, op->getContext());
    for (OpOperand &init : op.getDpsInitsMutable())
      if (!op.getMatchingIndexingMap(&init).getResultPosition(dim))
        return false;
    return llvm::all_of(maps, [&](AffineMap map) {
      unsigned uses = 0;
      for (AffineExpr e : map.getResults()) {
        if (!isa<AffineDimExpr, AffineConstantExpr>(e))
          return false;
        if (auto dim = dyn_cast<AffineDimExpr>(e))
          uses += dim.getPosition() == d;
      }
      return uses <= 1;
    });
  };
  std::optional<unsigned> best;
  unsigned n = op.getNumLoops();
  for (unsigned d = 0; d + 1 < n; ++d)
    if (eligible(d) && (!best || ranges[d] > ranges[*best]))
      best = d;
  if (!best && n > 0 && eligible(n - 1))
    best = n - 1;
  return best;
}

struct OutlineParallelLoopsPass
    : public tp::impl::OutlineParallelLoopsPassBase<OutlineParallelLoopsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    SymbolTable symbols(module);
    SmallVector<func::FuncOp> functions;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal() &&
          !func->hasAttr(TPDialect::kParallelBodyAttrName))
        functions.push_back(func);
    for (func::FuncOp func : functions) {
      unsigned made = 0;
      lastMade = func;
      // The candidates first: outlining one erases the allocations and
      // frees of its scratch, which lie between them.
      SmallVector<Operation *> tops;
      for (Operation &op : func.getBody().getOps())
        if (isa<scf::ForOp, linalg::LinalgOp>(op))
          tops.push_back(&op);
      for (Operation *op : tops) {
        if (auto loop = dyn_cast<scf::ForOp>(op))
          outlineNest(func, loop, symbols, made);
        else if (auto linalg = dyn_cast<linalg::LinalgOp>(op))
          outlineOp(func, linalg, symbols, made);
      }
    }
  }

  /// The function after which the next one goes: its parent's functions
  /// follow it in the order they are made.
  Operation *lastMade = nullptr;

  /// The range's function for `op`, with `plan`'s arguments after lo and hi,
  /// inserted after `parent`'s others; its entry holds the plan's scratch and
  /// clones, `mapping` maps the outside values to them, and the builder is left
  /// before the frees of its heap scratch and its return.
  func::FuncOp makeFunction(func::FuncOp parent, Operation *op,
                            const Plan &plan, SymbolTable &symbols,
                            unsigned &made, IRMapping &mapping, OpBuilder &b) {
    MLIRContext *context = op->getContext();
    Location loc = op->getLoc();
    SmallVector<Type> inputs(2, b.getIndexType());
    for (Value value : plan.arguments)
      inputs.push_back(value.getType());
    std::string name;
    do
      name = (parent.getName() + "_parallel_" + Twine(made++)).str();
    while (symbols.lookup(name));
    b.setInsertionPointAfter(lastMade);
    auto func = func::FuncOp::create(b, loc, name,
                                     FunctionType::get(context, inputs, {}));
    lastMade = func;
    func.setPrivate();
    func->setAttr(TPDialect::kParallelBodyAttrName, UnitAttr::get(context));
    symbols.insert(func);
    Block *entry = func.addEntryBlock();
    for (auto [value, arg] :
         llvm::zip(plan.arguments, entry->getArguments().drop_front(2)))
      mapping.map(value, arg);
    b.setInsertionPointToStart(entry);
    SmallVector<Value> heap;
    int64_t scratchBytes = 0;
    for (Value buffer : plan.scratch)
      scratchBytes += staticBytes(buffer.getType()).value_or(0);
    for (Value buffer : plan.scratch) {
      auto type = cast<MemRefType>(buffer.getType());
      IntegerAttr alignment = b.getI64IntegerAttr(64);
      Value copy;
      if (scratchBytes <= kStackScratchBytes) {
        copy = memref::AllocaOp::create(b, loc, type, ValueRange{}, alignment);
      } else {
        copy = memref::AllocOp::create(b, loc, type, ValueRange{}, alignment);
        heap.push_back(copy);
      }
      mapping.map(buffer, copy);
    }
    for (Operation *clone : plan.cloned)
      b.clone(*clone, mapping);
    // Heap scratch is freed before the return; the body goes before that.
    Operation *end = func::ReturnOp::create(b, loc);
    for (Value buffer : llvm::reverse(heap)) {
      b.setInsertionPoint(end);
      end = memref::DeallocOp::create(b, loc, buffer);
    }
    b.setInsertionPoint(end);
    return func;
  }

  /// Calls `func` on [0, count) where `op` was, and erases `op` and the
  /// scratch it no longer needs.
  void replaceWithCall(Operation *op, func::FuncOp func, int64_t count,
                       const Plan &plan) {
    OpBuilder b(op);
    Location loc = op->getLoc();
    SmallVector<Value> operands{arith::ConstantIndexOp::create(b, loc, 0),
                                arith::ConstantIndexOp::create(b, loc, count)};
    operands.append(plan.arguments.begin(), plan.arguments.end());
    func::CallOp::create(b, loc, func, operands);
    op->erase();
    for (Value buffer : plan.scratch) {
      for (Operation *user : llvm::make_early_inc_range(buffer.getUsers()))
        if (isa<memref::DeallocOp>(user))
          user->erase();
      if (buffer.use_empty())
        buffer.getDefiningOp()->erase();
    }
  }

  void outlineNest(func::FuncOp parent, scf::ForOp outer, SymbolTable &symbols,
                   unsigned &made) {
    SmallVector<scf::ForOp> nest = parallelNest(outer);
    if (nest.empty())
      return;
    int64_t count = 1;
    for (scf::ForOp loop : nest)
      count *= tripCount(loop);
    if (count < 2 || count * linalgBytes(nest.back()) < minBytes)
      return;
    std::optional<Plan> plan = planCaptures(outer);
    if (!plan)
      return;
    IRMapping mapping;
    OpBuilder b(outer);
    func::FuncOp func =
        makeFunction(parent, outer, *plan, symbols, made, mapping, b);
    Location loc = outer.getLoc();
    Value lo = func.getArgument(0), hi = func.getArgument(1);
    auto constant = [&](int64_t v) -> Value {
      return arith::ConstantIndexOp::create(b, loc, v);
    };
    auto loop = scf::ForOp::create(b, loc, lo, hi, constant(1));
    b.setInsertionPointToStart(loop.getBody());
    // The linear iteration's index in each loop, the innermost fastest.
    Value rest = loop.getInductionVar();
    for (scf::ForOp original : llvm::reverse(nest)) {
      Value index = rest;
      if (original != nest.front()) {
        Value trips = constant(tripCount(original));
        index = arith::RemUIOp::create(b, loc, rest, trips);
        rest = arith::DivUIOp::create(b, loc, rest, trips);
      }
      int64_t step = *getConstantIntValue(original.getStep());
      int64_t lower = *getConstantIntValue(original.getLowerBound());
      Value iv = index;
      if (step != 1)
        iv = arith::MulIOp::create(b, loc, iv, constant(step));
      if (lower != 0)
        iv = arith::AddIOp::create(b, loc, iv, constant(lower));
      mapping.map(original.getInductionVar(), iv);
    }
    for (Operation &op : nest.back().getBody()->without_terminator())
      b.clone(op, mapping);
    // The inner loops' bounds, which the nest no longer has.
    for (Operation &op :
         llvm::make_early_inc_range(func.getBody().front().getOperations()))
      if (op.use_empty() && matchPattern(&op, m_Constant()))
        op.erase();
    replaceWithCall(outer, func, count, *plan);
  }

  void outlineOp(func::FuncOp parent, linalg::LinalgOp op, SymbolTable &symbols,
                 unsigned &made) {
    std::optional<unsigned> split = splitLoop(op);
    if (!split || linalgBytes(op) < minBytes)
      return;
    int64_t count = op.getStaticLoopRanges()[*split];
    std::optional<Plan> plan = planCaptures(op);
    if (!plan)
      return;
    IRMapping mapping;
    OpBuilder b(op);
    func::FuncOp func =
        makeFunction(parent, op, *plan, symbols, made, mapping, b);
    Location loc = op.getLoc();
    Value lo = func.getArgument(0), hi = func.getArgument(1);
    Value size = arith::SubIOp::create(b, loc, hi, lo);
    // Each shaped operand indexed by the split loop: its part along it.
    SmallVector<std::pair<unsigned, Value>> parts;
    for (OpOperand &operand : op->getOpOperands()) {
      auto type = dyn_cast<MemRefType>(operand.get().getType());
      if (!type)
        continue;
      AffineMap map = op.getMatchingIndexingMap(&operand);
      std::optional<unsigned> at =
          map.getResultPosition(getAffineDimExpr(*split, op->getContext()));
      if (!at)
        continue;
      SmallVector<OpFoldResult> offsets(type.getRank(), b.getIndexAttr(0));
      SmallVector<OpFoldResult> sizes;
      for (int64_t s : type.getShape())
        sizes.push_back(b.getIndexAttr(s));
      SmallVector<OpFoldResult> strides(type.getRank(), b.getIndexAttr(1));
      offsets[*at] = lo;
      sizes[*at] = size;
      Value part = memref::SubViewOp::create(
          b, loc, mapping.lookup(operand.get()), offsets, sizes, strides);
      parts.push_back({operand.getOperandNumber(), part});
    }
    Operation *clone = b.clone(*op, mapping);
    for (auto [number, part] : parts)
      clone->setOperand(number, part);
    replaceWithCall(op, func, count, *plan);
  }
};

} // namespace
