//===- Gemm.cpp - The GEMM recogniser every lowering shares ---------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// 1. Take a linalg contraction (named matmul / batch_matmul, or a generic
//    whose body multiplies and accumulates, as attention's are after
//    --tp-fold-reshapes) on float buffers of one type with static shapes;
//    classify its loops into batch, m, n and k
//    (linalg::inferContractionDims).
// 2. See each operand as (batch of) row-major matrices: the m loops, the n
//    loops and the k loops must each be adjacent, in the same order, in the
//    operands that hold them; one group of each operand must be innermost
//    (unit stride); the other group's stride is the leading dimension. A is
//    M x K (or K x M: transposed), B is K x N (or N x K), C is M x N. Each
//    batch loop has its own stride in every operand. Where the m or n loops
//    are not adjacent in order (grouped-query attention: the query heads of
//    a group sit between the batch's and the sequence's loops in the
//    queries), one of them becomes a batch loop, of stride 0 in the operand
//    that does not hold it (the keys are shared by the group).
// 3. convertGemms makes strided inputs contiguous (copies), leaves strided
//    outputs to the loops, and lets the target emit the call. Where C is a
//    fresh buffer whose first use zeroes it (linalg.fill 0, as every
//    `matmul(A, B, fill(0))` bufferizes), the fill goes and the GEMM
//    overwrites C instead of adding to it: one pass over C less. A call
//    takes two batch loops; more become scf.for loops around it, each call
//    at its operands' offsets.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Common/Gemm.h"
#include "tp/Conversion/Common/RuntimeCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Matchers.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include <cmath>
#include <cstring>

using namespace mlir;
using namespace mlir::tp;

GemmTarget::~GemmTarget() = default;

namespace {

/// Row-major strides of a static shape.
SmallVector<int64_t> stridesOf(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> strides(shape.size(), 1);
  for (int64_t d = static_cast<int64_t>(shape.size()) - 2; d >= 0; --d)
    strides[d] = strides[d + 1] * shape[d + 1];
  return strides;
}

/// Where `group`'s loops sit in `map`'s results: adjacent and in order, or
/// nothing. Returns the position of the group's last loop (-1 for an empty
/// group).
std::optional<int64_t> groupEnd(AffineMap map, ArrayRef<unsigned> group) {
  if (group.empty())
    return -1;
  int64_t previous = -2;
  for (unsigned loop : group) {
    std::optional<unsigned> position =
        map.getResultPosition(getAffineDimExpr(loop, map.getContext()));
    if (!position ||
        (previous != -2 && static_cast<int64_t>(*position) != previous + 1))
      return std::nullopt;
    previous = *position;
  }
  return previous;
}

/// `operand` as a matrix whose rows are `rows` loops and columns `cols` loops
/// (either may be innermost: then it is transposed), with `batch` loops.
std::optional<GemmOperand> viewOf(AffineMap map, ArrayRef<int64_t> shape,
                                  ArrayRef<unsigned> rows,
                                  ArrayRef<unsigned> cols,
                                  ArrayRef<unsigned> batch) {
  // Every result is a loop of one of the groups (a batch loop may be
  // missing: the operand is the same along it).
  unsigned present = llvm::count_if(batch, [&](unsigned loop) {
    return map.getResultPosition(getAffineDimExpr(loop, map.getContext()))
        .has_value();
  });
  if (map.getNumResults() != rows.size() + cols.size() + present ||
      !map.isProjectedPermutation())
    return std::nullopt;
  std::optional<int64_t> rowEnd = groupEnd(map, rows),
                         colEnd = groupEnd(map, cols);
  if (!rowEnd || !colEnd)
    return std::nullopt;
  SmallVector<int64_t> strides = stridesOf(shape);
  int64_t last = static_cast<int64_t>(shape.size()) - 1;
  GemmOperand view;
  auto strideAt = [&](int64_t position) {
    return position < 0 ? int64_t(1) : strides[position];
  };
  if (*colEnd == last || cols.empty()) {
    // Columns innermost: plain, leading dimension = the rows' stride.
    int64_t colsExtent = 1;
    for (int64_t p = *colEnd - static_cast<int64_t>(cols.size()) + 1;
         p <= *colEnd && !cols.empty(); ++p)
      colsExtent *= shape[p];
    view.leadingDim =
        rows.empty() ? std::max<int64_t>(colsExtent, 1) : strideAt(*rowEnd);
    if (view.leadingDim < colsExtent)
      return std::nullopt;
  } else if (*rowEnd == last || rows.empty()) {
    // Rows innermost: stored transposed, leading dimension = the columns'.
    view.transposed = true;
    int64_t rowsExtent = 1;
    for (int64_t p = *rowEnd - static_cast<int64_t>(rows.size()) + 1;
         p <= *rowEnd && !rows.empty(); ++p)
      rowsExtent *= shape[p];
    view.leadingDim = strideAt(*colEnd);
    if (view.leadingDim < rowsExtent)
      return std::nullopt;
  } else {
    return std::nullopt;
  }
  for (unsigned loop : batch) {
    std::optional<unsigned> position =
        map.getResultPosition(getAffineDimExpr(loop, map.getContext()));
    view.batchStrides.push_back(position ? strides[*position] : 0);
  }
  return view;
}

} // namespace

std::optional<Gemm> mlir::tp::matchGemm(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  SmallVector<ArrayRef<int64_t>> shapes;
  Type element;
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || !type.hasStaticShape() ||
        !isa<FloatType>(type.getElementType()) ||
        (element && type.getElementType() != element))
      return std::nullopt;
    element = type.getElementType();
    shapes.push_back(type.getShape());
  }
  FailureOr<linalg::ContractionDimensions> dims =
      linalg::inferContractionDims(op);
  if (failed(dims))
    return std::nullopt;
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  SmallVector<int64_t> loops = op.getStaticLoopRanges();
  // Groups ordered as C holds m and n, and as A holds k.
  auto orderedBy = [&](ArrayRef<unsigned> group, AffineMap map) {
    SmallVector<unsigned> ordered(group.begin(), group.end());
    llvm::sort(ordered, [&](unsigned x, unsigned y) {
      return *map.getResultPosition(getAffineDimExpr(x, map.getContext())) <
             *map.getResultPosition(getAffineDimExpr(y, map.getContext()));
    });
    return ordered;
  };
  auto match = [&](ArrayRef<unsigned> mLoops, ArrayRef<unsigned> nLoops,
                   ArrayRef<unsigned> batch) -> std::optional<Gemm> {
    SmallVector<unsigned> m = orderedBy(mLoops, maps[2]);
    SmallVector<unsigned> n = orderedBy(nLoops, maps[2]);
    SmallVector<unsigned> k = orderedBy(dims->k, maps[0]);
    Gemm gemm;
    for (unsigned l : m)
      gemm.m *= loops[l];
    for (unsigned l : n)
      gemm.n *= loops[l];
    for (unsigned l : k)
      gemm.k *= loops[l];
    for (unsigned l : batch)
      gemm.batchSizes.push_back(loops[l]);
    std::optional<GemmOperand> a = viewOf(maps[0], shapes[0], m, k, batch);
    std::optional<GemmOperand> b = viewOf(maps[1], shapes[1], k, n, batch);
    std::optional<GemmOperand> c = viewOf(maps[2], shapes[2], m, n, batch);
    if (!a || !b || !c || c->transposed)
      return std::nullopt;
    gemm.a = *a;
    gemm.b = *b;
    gemm.c = *c;
    gemm.elementType = element;
    gemm.columnDims = n.size();
    return gemm;
  };
  SmallVector<unsigned> batch(dims->batch.begin(), dims->batch.end());
  if (std::optional<Gemm> gemm = match(dims->m, dims->n, batch))
    return gemm;
  // One m or n loop as a batch loop instead: the largest matrices that
  // remain.
  std::optional<Gemm> best;
  auto tryMoving = [&](ArrayRef<unsigned> group, bool isM) {
    if (group.size() < 2)
      return;
    for (unsigned loop : group) {
      SmallVector<unsigned> rest;
      for (unsigned l : group)
        if (l != loop)
          rest.push_back(l);
      SmallVector<unsigned> moved(batch);
      moved.push_back(loop);
      std::optional<Gemm> gemm =
          isM ? match(rest, dims->n, moved) : match(dims->m, rest, moved);
      if (gemm && (!best || gemm->m * gemm->n > best->m * best->n))
        best = gemm;
    }
  };
  tryMoving(dims->m, /*isM=*/true);
  tryMoving(dims->n, /*isM=*/false);
  return best;
}

namespace {

/// The fill that zeroes `c` just before `gemm` reads it: `c` is a fresh
/// buffer of this function whose first use is that fill, in `gemm`'s block,
/// and no other use of `c` comes before `gemm` (uses after it may be nested
/// in later ops). Null if there is none.
linalg::FillOp zeroingFill(Value c, Operation *gemm) {
  if (!c.getDefiningOp<memref::AllocOp>() &&
      !c.getDefiningOp<memref::AllocaOp>())
    return nullptr;
  linalg::FillOp fill;
  for (Operation *user : c.getUsers()) {
    if (user == gemm)
      continue;
    // A use nested in a later op (a loop over the result's rows) comes after.
    Operation *here = gemm->getBlock()->findAncestorOpInBlock(*user);
    if (!here)
      return nullptr;
    if (!here->isBeforeInBlock(gemm))
      continue;
    auto candidate = here == user ? dyn_cast<linalg::FillOp>(user) : nullptr;
    if (fill || !candidate || candidate.getOutputs()[0] != c)
      return nullptr;
    fill = candidate;
  }
  if (!fill)
    return nullptr;
  Attribute value;
  if (!matchPattern(fill.getInputs()[0], m_Constant(&value)))
    return nullptr;
  auto zero = dyn_cast<FloatAttr>(value);
  if (!zero || !zero.getValue().isZero())
    return nullptr;
  return fill;
}

/// The buffer `value` views (through subviews, reshapes and casts).
Value rootBuffer(Value value) {
  while (Operation *def = value.getDefiningOp()) {
    auto view = dyn_cast<ViewLikeOpInterface>(def);
    if (!view)
      break;
    value = view.getViewSource();
  }
  return value;
}

bool hasIdentityLayout(Value buffer) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  return type && type.getLayout().isIdentity();
}

/// The loop that writes the addends of a GEMM's sum into C before the GEMM
/// adds into it (tp-fold-addends-into-gemm's, after bufferization): a
/// parallel linalg.generic over C's index space writing all of C, whose body
/// yields one input or the sum of two; an input read as C is (same shape)
/// is the residual, one read by C's column dimensions only the bias. Only
/// ops without memory effects lie between it and the GEMM. A partial sum
/// writes its addends on one member of its group (`scf.if %first { the
/// loop } else { zero fill }`): then the call takes them where `condition`
/// holds.
struct Prologue {
  Operation *op;
  Value residual, bias, condition;
};

std::optional<Prologue> addendsLoop(linalg::GenericOp generic, Value c,
                                    const Gemm &gemm) {
  if (!generic || !generic.hasPureBufferSemantics() ||
      generic.getNumDpsInits() != 1 || generic.getDpsInits()[0] != c ||
      generic.getNumReductionLoops() != 0 || generic.getNumDpsInputs() == 0 ||
      generic.getNumDpsInputs() > 2)
    return std::nullopt;
  auto cType = cast<MemRefType>(c.getType());
  AffineMap out = generic.getIndexingMapsArray().back();
  if (!out.isIdentity() || out.getNumDims() != cType.getRank())
    return std::nullopt;
  // The body: yield(x) or yield(x + y), x and y the inputs' arguments.
  Block *body = generic.getBlock();
  Value yielded = body->getTerminator()->getOperand(0);
  SmallVector<Value> terms;
  if (isa<BlockArgument>(yielded)) {
    terms.push_back(yielded);
  } else if (auto add = yielded.getDefiningOp<arith::AddFOp>();
             add && add->getBlock() == body && &body->front() == add &&
             add->getNextNode() == body->getTerminator()) {
    terms = {add.getLhs(), add.getRhs()};
  } else {
    return std::nullopt;
  }
  if (static_cast<int64_t>(terms.size()) != generic.getNumDpsInputs() ||
      (terms.size() == 2 && terms[0] == terms[1]))
    return std::nullopt;
  Prologue prologue{generic, nullptr, nullptr, nullptr};
  unsigned rank = cType.getRank();
  for (Value term : terms) {
    auto arg = dyn_cast<BlockArgument>(term);
    if (!arg || arg.getOwner() != body ||
        arg.getArgNumber() >= generic.getNumDpsInputs())
      return std::nullopt;
    OpOperand *operand = generic.getDpsInputOperand(arg.getArgNumber());
    Value input = operand->get();
    auto type = dyn_cast<MemRefType>(input.getType());
    if (!type || !hasIdentityLayout(input) ||
        type.getElementType() != cType.getElementType())
      return std::nullopt;
    AffineMap map = generic.getMatchingIndexingMap(operand);
    if (map.isIdentity() && type.getShape() == cType.getShape()) {
      // A residual that overlaps C without being C would be read while the
      // GEMM writes C.
      if (prologue.residual ||
          (input != c && rootBuffer(input) == rootBuffer(c)))
        return std::nullopt;
      prologue.residual = input;
      continue;
    }
    // The bias: read by C's column dimensions, in order.
    unsigned columns = gemm.columnDims;
    if (prologue.bias || columns == 0 || map.getNumResults() != columns ||
        type.getRank() != columns)
      return std::nullopt;
    for (unsigned i = 0; i < columns; ++i)
      if (map.getResult(i) !=
              getAffineDimExpr(rank - columns + i, map.getContext()) ||
          type.getDimSize(i) != cType.getDimSize(rank - columns + i))
        return std::nullopt;
    prologue.bias = input;
  }
  return prologue;
}

std::optional<Prologue> addendsPrologue(Value c, Operation *gemmOp,
                                        const Gemm &gemm) {
  Operation *before = gemmOp->getPrevNode();
  while (before && isMemoryEffectFree(before))
    before = before->getPrevNode();
  if (auto generic = dyn_cast_or_null<linalg::GenericOp>(before))
    return addendsLoop(generic, c, gemm);
  // The partial sum's form: the loop on one member, zeros on the others.
  auto branch = dyn_cast_or_null<scf::IfOp>(before);
  if (!branch || branch->getNumResults() != 0 || branch.getElseRegion().empty())
    return std::nullopt;
  Block *then = branch.thenBlock(), *otherwise = branch.elseBlock();
  if (then->getOperations().size() != 2 ||
      otherwise->getOperations().size() != 2)
    return std::nullopt;
  auto fill = dyn_cast<linalg::FillOp>(otherwise->front());
  FloatAttr zero;
  if (!fill || fill.getOutputs()[0] != c ||
      !matchPattern(fill.getInputs()[0], m_Constant(&zero)) ||
      !zero.getValue().isZero())
    return std::nullopt;
  std::optional<Prologue> prologue =
      addendsLoop(dyn_cast<linalg::GenericOp>(then->front()), c, gemm);
  // The residual must be defined outside the branch (it is read at the
  // call); a residual that is C itself would read the other members' C.
  if (!prologue || (prologue->residual && prologue->residual == c))
    return std::nullopt;
  for (Value v : {prologue->residual, prologue->bias})
    if (v && !v.getParentRegion()->isProperAncestor(&branch.getThenRegion()) &&
        v.getParentRegion() != branch->getParentRegion())
      return std::nullopt;
  prologue->op = branch;
  prologue->condition = branch.getCondition();
  return prologue;
}

/// GELU in its tanh form.
double geluTanh(double x) {
  return 0.5 * x *
         (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

/// The value `body` (a linalg body of one input) yields for input `x`,
/// computed in double; nothing where it uses an op this evaluator does not
/// know.
std::optional<double> evaluateBody(Block *body, double x) {
  llvm::DenseMap<Value, double> values;
  values[body->getArgument(0)] = x;
  auto valueOf = [&](Value v) -> std::optional<double> {
    auto it = values.find(v);
    if (it != values.end())
      return it->second;
    FloatAttr constant;
    if (matchPattern(v, m_Constant(&constant)))
      return constant.getValueAsDouble();
    return std::nullopt;
  };
  for (Operation &op : body->without_terminator()) {
    if (isa<arith::ConstantOp>(op))
      continue;
    SmallVector<double, 2> in;
    for (Value operand : op.getOperands()) {
      std::optional<double> v = valueOf(operand);
      if (!v)
        return std::nullopt;
      in.push_back(*v);
    }
    std::optional<double> result;
    StringRef name = op.getName().getStringRef();
    if (in.size() == 2) {
      if (name == "arith.addf")
        result = in[0] + in[1];
      else if (name == "arith.subf")
        result = in[0] - in[1];
      else if (name == "arith.mulf")
        result = in[0] * in[1];
      else if (name == "arith.divf")
        result = in[0] / in[1];
      else if (name == "math.powf")
        result = std::pow(in[0], in[1]);
    } else if (in.size() == 1) {
      if (name == "arith.negf")
        result = -in[0];
      else if (name == "arith.extf" || name == "arith.truncf")
        result = in[0]; // a narrow body's widenings and roundings
      else if (name == "math.tanh")
        result = std::tanh(in[0]);
      else if (name == "math.sqrt")
        result = std::sqrt(in[0]);
      else if (name == "math.exp")
        result = std::exp(in[0]);
      else if (name == "math.erf")
        result = std::erf(in[0]);
    }
    if (!result || op.getNumResults() != 1)
      return std::nullopt;
    values[op.getResult(0)] = *result;
  }
  return valueOf(body->getTerminator()->getOperand(0));
}

/// Whether `generic`'s body, a function of its one input, is GELU in its
/// tanh form: checked by evaluating it on points across GELU's curve
/// (GELU's erf form differs from it by up to 5e-4 there; the check allows
/// 1e-6 in f32, and twice the type's rounding in f16 and bf16, whose
/// constants are rounded: 0.7978846 is 0.796875 in bf16).
bool isGeluTanh(linalg::GenericOp generic) {
  Block *body = generic.getBlock();
  if (body->getNumArguments() != 2 || !body->getArgument(1).use_empty())
    return false;
  Type element = body->getArgument(0).getType();
  double tolerance = element.isBF16()  ? 2 * 0x1p-8
                     : element.isF16() ? 2 * 0x1p-11
                                       : 1e-6;
  for (double x : {-6.0, -3.0, -2.0, -1.5, -1.0, -0.7, -0.3, 0.0, 0.2, 0.6, 1.0,
                   1.3, 2.0, 2.5, 4.0, 7.0}) {
    std::optional<double> y = evaluateBody(body, x);
    double expected = geluTanh(x);
    if (!y ||
        !(std::abs(*y - expected) <= tolerance * (1.0 + std::abs(expected))))
      return false;
  }
  return true;
}

/// The GELU that reads the GEMM's output `c` and writes `out`: the first op
/// with memory effects after the GEMM, an elementwise linalg.generic from
/// `c` to a buffer of its shape, and `c` a fresh buffer nothing else reads
/// but `prologue` (so the GEMM may write `out` instead).
linalg::GenericOp geluConsumer(Value c, Operation *gemmOp,
                               Operation *prologue) {
  if (!c.getDefiningOp<memref::AllocOp>() &&
      !c.getDefiningOp<memref::AllocaOp>())
    return nullptr;
  Operation *after = gemmOp->getNextNode();
  while (after && isMemoryEffectFree(after))
    after = after->getNextNode();
  auto generic = dyn_cast_or_null<linalg::GenericOp>(after);
  if (!generic || !generic.hasPureBufferSemantics() ||
      generic.getNumDpsInputs() != 1 || generic.getNumDpsInits() != 1 ||
      generic.getDpsInputs()[0] != c || generic.getNumReductionLoops() != 0)
    return nullptr;
  Value out = generic.getDpsInits()[0];
  if (out.getType() != c.getType() || !hasIdentityLayout(out) ||
      rootBuffer(out) == rootBuffer(c))
    return nullptr;
  for (AffineMap map : generic.getIndexingMapsArray())
    if (!map.isIdentity())
      return nullptr;
  // Nothing but the GEMM, the GELU, its prologue and deallocations use c.
  for (Operation *user : c.getUsers())
    if (user != gemmOp && user != generic.getOperation() && user != prologue &&
        !isa<memref::DeallocOp>(user))
      return nullptr;
  return isGeluTanh(generic) ? generic : nullptr;
}

} // namespace

int64_t mlir::tp::convertGemms(func::FuncOp func, const GemmTarget &target) {
  if (func.isExternal() || func.getNumArguments() == 0)
    return 0;
  Value rankContext = func.getArgument(0);
  SmallVector<std::pair<linalg::LinalgOp, Gemm>> gemms;
  func.walk([&](linalg::LinalgOp op) {
    if (std::optional<Gemm> gemm = matchGemm(op))
      if (target.supportsElementType(gemm->elementType))
        gemms.push_back({op, *gemm});
  });
  int64_t converted = 0;
  for (auto &[op, gemm] : gemms) {
    Value c = op.getDpsInits()[0];
    if (!hasIdentityLayout(c))
      continue; // strided output: loops
    Location loc = op.getLoc();
    OpBuilder b(op);
    GemmEpilogue epilogue{c, nullptr, false, c};
    // C zeroed just before: the GEMM overwrites it.
    linalg::FillOp fill = zeroingFill(c, op);
    if (fill)
      epilogue.c = nullptr;
    // The addends written into C before it, and a GELU after it, in the
    // call.
    std::optional<Prologue> prologue;
    linalg::GenericOp gelu;
    // A GEMM in loops (more than two batch loops) takes no epilogue: an
    // attention's contractions have none.
    if (target.supportsEpilogues() && gemm.loopBatches() == 0) {
      if (!fill)
        prologue = addendsPrologue(c, op, gemm);
      if (prologue) {
        epilogue.c = prologue->residual;
        epilogue.bias = prologue->bias;
        epilogue.condition = prologue->condition;
      }
      // The GELU: only where C's old contents are not read, and not on a
      // partial sum.
      if ((!epilogue.c || epilogue.c != c) && !epilogue.condition)
        if ((gelu = geluConsumer(
                 c, op, prologue ? prologue->op : fill.getOperation()))) {
          epilogue.gelu = true;
          epilogue.d = gelu.getDpsInits()[0];
        }
    }
    Value a = contiguousBuffer(b, loc, op.getDpsInputs()[0]);
    Value bm = contiguousBuffer(b, loc, op.getDpsInputs()[1]);
    {
      // The leading batch loops, and each call's offsets in them.
      OpBuilder::InsertionGuard guard(b);
      GemmOffsets offsets;
      for (unsigned i = 0; i < gemm.loopBatches(); ++i) {
        Value zero = arith::ConstantIndexOp::create(b, loc, 0);
        Value one = arith::ConstantIndexOp::create(b, loc, 1);
        Value size = arith::ConstantIndexOp::create(b, loc, gemm.batchSizes[i]);
        auto loop = scf::ForOp::create(b, loc, zero, size, one);
        b.setInsertionPointToStart(loop.getBody());
        Value iv = loop.getInductionVar();
        auto advance = [&](Value &offset, const GemmOperand &v) {
          if (v.batchStrides[i] == 0)
            return;
          Value stride =
              arith::ConstantIndexOp::create(b, loc, v.batchStrides[i]);
          Value step = arith::MulIOp::create(b, loc, iv, stride);
          offset = offset
                       ? arith::AddIOp::create(b, loc, offset, step).getResult()
                       : step;
        };
        advance(offsets.a, gemm.a);
        advance(offsets.b, gemm.b);
        advance(offsets.c, gemm.c);
      }
      target.emitGemm(b, loc, rankContext, gemm, a, bm, epilogue, offsets);
    }
    if (fill)
      fill->erase();
    if (prologue)
      prologue->op->erase();
    if (gelu)
      gelu->erase();
    if (a != op.getDpsInputs()[0])
      memref::DeallocOp::create(b, loc, a);
    if (bm != op.getDpsInputs()[1])
      memref::DeallocOp::create(b, loc, bm);
    op->erase();
    // A buffer the GELU replaced, now only freed, goes.
    if (gelu && llvm::all_of(c.getUsers(), [](Operation *user) {
          return isa<memref::DeallocOp>(user);
        })) {
      for (Operation *user : llvm::make_early_inc_range(c.getUsers()))
        user->erase();
      c.getDefiningOp()->erase();
    }
    ++converted;
  }
  return converted;
}

tprt_gemm_desc mlir::tp::gemmDescriptor(const Gemm &g,
                                        const GemmEpilogue &epilogue) {
  // The call's batch loops: the last two.
  auto stride = [&](const GemmOperand &v, unsigned i) -> int64_t {
    unsigned at = g.loopBatches() + i;
    return at < v.batchStrides.size() ? v.batchStrides[at] : 0;
  };
  int64_t dtype = g.elementType.isF16()    ? TPRT_F16
                  : g.elementType.isBF16() ? TPRT_BF16
                                           : TPRT_F32;
  int64_t kind = (epilogue.bias ? TPRT_EPILOGUE_BIAS : 0) |
                 (epilogue.gelu ? TPRT_EPILOGUE_GELU : 0);
  return tprt_gemm_desc{dtype,
                        g.a.transposed,
                        g.b.transposed,
                        kind,
                        g.m,
                        g.n,
                        g.k,
                        g.a.leadingDim,
                        g.b.leadingDim,
                        g.c.leadingDim,
                        g.c.leadingDim,
                        g.callBatchSize(0),
                        g.callBatchSize(1),
                        stride(g.a, 0),
                        stride(g.a, 1),
                        stride(g.b, 0),
                        stride(g.b, 1),
                        stride(g.c, 0),
                        stride(g.c, 1),
                        stride(g.c, 0),
                        stride(g.c, 1)};
}

namespace {

constexpr unsigned kDescFields = sizeof(tprt_gemm_desc) / sizeof(int64_t);
static_assert(sizeof(tprt_gemm_desc) == kDescFields * sizeof(int64_t),
              "tprt_gemm_desc is an array of int64_t");
constexpr StringLiteral kDescPrefix = "__tp_gemm_desc_";

} // namespace

GemmDescriptors::GemmDescriptors(ModuleOp module) : module(module) {
  for (auto global : module.getOps<LLVM::GlobalOp>())
    if (global.getSymName().starts_with(kDescPrefix)) {
      if (Attribute value = global.getValueAttr())
        globals.try_emplace(value, global);
      ++count;
    }
}

LLVM::GlobalOp GemmDescriptors::globalFor(const tprt_gemm_desc &desc,
                                          Location loc) {
  MLIRContext *ctx = module.getContext();
  Builder b(ctx);
  int64_t fields[kDescFields];
  std::memcpy(fields, &desc, sizeof(desc));
  auto value = DenseElementsAttr::get(
      RankedTensorType::get({kDescFields}, b.getI64Type()),
      ArrayRef<int64_t>(fields, kDescFields));
  LLVM::GlobalOp &global = globals[value];
  if (global)
    return global;
  // A fresh name: `count` counts the descriptors' globals so far.
  std::string name = (kDescPrefix + Twine(count++)).str();
  while (SymbolTable::lookupSymbolIn(module, name))
    name = (kDescPrefix + Twine(count++)).str();
  OpBuilder builder = OpBuilder::atBlockBegin(module.getBody());
  auto type = LLVM::LLVMArrayType::get(b.getI64Type(), kDescFields);
  global = LLVM::GlobalOp::create(builder, loc, type, /*isConstant=*/true,
                                  LLVM::Linkage::Private, name, value,
                                  /*alignment=*/8);
  return global;
}

void mlir::tp::emitGemmCall(OpBuilder &b, Location loc,
                            GemmDescriptors &descriptors, Value rankContext,
                            const tprt_gemm_desc &desc, Value a, Value bm,
                            const GemmEpilogue &epilogue,
                            const GemmOffsets &offsets) {
  Type ptr = LLVM::LLVMPointerType::get(b.getContext());
  LLVM::GlobalOp global = descriptors.globalFor(desc, loc);
  func::FuncOp callee =
      declareRuntimeFunction(descriptors.getModule(), "tprt_rt_gemm");
  Value null = LLVM::ZeroOp::create(b, loc, ptr);
  auto pointer = [&](Value buffer, Value offset) -> Value {
    if (!buffer)
      return null;
    Value p = bufferPointer(b, loc, buffer);
    if (!offset)
      return p;
    Value elements = arith::IndexCastOp::create(b, loc, b.getI64Type(), offset);
    return LLVM::GEPOp::create(
        b, loc, ptr, cast<MemRefType>(buffer.getType()).getElementType(), p,
        ValueRange{elements});
  };
  // Arguments in their order; C that is D shares D's pointer.
  Value address = LLVM::AddressOfOp::create(b, loc, global);
  Value pa = pointer(a, offsets.a), pb = pointer(bm, offsets.b);
  Value d = pointer(epilogue.d, offsets.c);
  // Addends taken on one member only: null on the others.
  auto addend = [&](Value buffer, Value offset) {
    Value p = buffer == epilogue.d ? d : pointer(buffer, offset);
    if (!buffer || !epilogue.condition)
      return p;
    return arith::SelectOp::create(b, loc, epilogue.condition, p, null)
        .getResult();
  };
  Value c = addend(epilogue.c, offsets.c),
        bias = addend(epilogue.bias, nullptr);
  func::CallOp::create(b, loc, callee,
                       ValueRange{rankContext, address, pa, pb, c, d, bias});
}

std::optional<GemmCall> mlir::tp::readGemmCall(func::CallOp call) {
  if (call.getCallee() != "tprt_rt_gemm" || call.getNumOperands() != 7)
    return std::nullopt;
  auto address = call.getOperand(1).getDefiningOp<LLVM::AddressOfOp>();
  if (!address)
    return std::nullopt;
  auto global = SymbolTable::lookupNearestSymbolFrom<LLVM::GlobalOp>(
      call, address.getGlobalNameAttr());
  auto value =
      global ? dyn_cast_or_null<DenseIntElementsAttr>(global.getValueAttr())
             : nullptr;
  if (!value || value.getNumElements() != kDescFields)
    return std::nullopt;
  int64_t fields[kDescFields];
  unsigned i = 0;
  for (const APInt &field : value.getValues<APInt>())
    fields[i++] = field.getSExtValue();
  GemmCall out;
  std::memcpy(&out.desc, fields, sizeof(out.desc));
  auto present = [](Value v) { return !v.getDefiningOp<LLVM::ZeroOp>(); };
  out.hasC = present(call.getOperand(4));
  out.hasBias = present(call.getOperand(6));
  return out;
}
