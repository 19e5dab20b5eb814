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
//    M x K (or K x M: transposed), B is K x N (or N x K), C is M x N. At most
//    two batch loops, each with its own stride in every operand.
// 3. convertGemms makes strided inputs contiguous (copies), leaves strided
//    outputs to the loops, and lets the target emit the call. Where C is a
//    fresh buffer whose first use zeroes it (linalg.fill 0, as every
//    `matmul(A, B, fill(0))` bufferizes), the fill goes and the GEMM
//    overwrites C instead of adding to it: one pass over C less.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Common/Gemm.h"
#include "tp/Conversion/Common/RuntimeCalls.h"

#include "mlir/Dialect/Linalg/IR/LinalgInterfaces.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Matchers.h"

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
  // Every result is a loop of one of the groups.
  if (map.getNumResults() != rows.size() + cols.size() + batch.size() ||
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
    if (!position)
      return std::nullopt;
    view.batchStrides.push_back(strides[*position]);
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
  if (failed(dims) || dims->batch.size() > 2)
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
  SmallVector<unsigned> m = orderedBy(dims->m, maps[2]);
  SmallVector<unsigned> n = orderedBy(dims->n, maps[2]);
  SmallVector<unsigned> k = orderedBy(dims->k, maps[0]);
  SmallVector<unsigned> batch(dims->batch.begin(), dims->batch.end());
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
  return gemm;
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
    if (!cast<MemRefType>(c.getType()).getLayout().isIdentity())
      continue; // strided output: loops
    Location loc = op.getLoc();
    OpBuilder b(op);
    linalg::FillOp fill = zeroingFill(c, op);
    Value a = contiguousBuffer(b, loc, op.getDpsInputs()[0]);
    Value bm = contiguousBuffer(b, loc, op.getDpsInputs()[1]);
    target.emitGemm(b, loc, rankContext, gemm, a, bm, c,
                    /*accumulate=*/!fill);
    if (fill)
      fill->erase();
    if (a != op.getDpsInputs()[0])
      memref::DeallocOp::create(b, loc, a);
    if (bm != op.getDpsInputs()[1])
      memref::DeallocOp::create(b, loc, bm);
    op->erase();
    ++converted;
  }
  return converted;
}
