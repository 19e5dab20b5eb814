//===- ConvertGemmToBlas.cpp - f32 contractions -> OpenBLAS through tprt --===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// 1. Take every linalg contraction (named matmul / batch_matmul, or a
//    generic whose body multiplies and accumulates, as attention's are after
//    --tp-fold-reshapes) on f32, f16 or bf16 buffers (one type) with static
//    shapes; classify its
//    loops into batch, m, n and k (linalg::inferContractionDims).
// 2. See each operand as (batch of) row-major matrices: the m loops, the n
//    loops and the k loops must each be adjacent, in the same order, in the
//    operands that hold them; one group of each operand must be innermost
//    (unit stride); the other group's stride is the leading dimension. A is
//    M x K (or K x M: transposed), B is K x N (or N x K), C is M x N. At most
//    two batch loops, each with its own stride in every operand.
// 3. Make strided operands contiguous (copies); leave strided outputs to
//    the loops. Call tprt_rt_sgemm(ctx, transA, transB, M, N, K, A, lda, B,
//    ldb, C, ldc, batch0, batch1, strides...): C += op(A) op(B); f16 and
//    bf16 go to tprt_rt_gemm_narrow, which accumulates in f32.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"
#include "tp/Conversion/TPToCPU/RuntimeCalls.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Builders.h"

namespace mlir::tp {
#define GEN_PASS_DEF_CONVERTGEMMTOBLASPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// An operand seen as a matrix (or batch of them): element strides.
struct MatrixView {
  int64_t rowStride = 0; // the leading dimension
  bool transposed = false;
  SmallVector<int64_t, 2> batchStrides;
};

/// A GEMM found in a contraction: sizes and the three operands' views.
struct Gemm {
  int64_t m = 1, n = 1, k = 1;
  SmallVector<int64_t, 2> batchSizes;
  MatrixView a, b, c;
};

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
std::optional<MatrixView> viewOf(AffineMap map, ArrayRef<int64_t> shape,
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
  MatrixView view;
  auto strideAt = [&](int64_t position) {
    return position < 0 ? int64_t(1) : strides[position];
  };
  if (*colEnd == last || cols.empty()) {
    // Columns innermost: plain, leading dimension = the rows' stride.
    int64_t colsExtent = 1;
    for (int64_t p = *colEnd - static_cast<int64_t>(cols.size()) + 1;
         p <= *colEnd && !cols.empty(); ++p)
      colsExtent *= shape[p];
    view.rowStride =
        rows.empty() ? std::max<int64_t>(colsExtent, 1) : strideAt(*rowEnd);
    if (view.rowStride < colsExtent)
      return std::nullopt;
  } else if (*rowEnd == last || rows.empty()) {
    // Rows innermost: stored transposed, leading dimension = the columns'.
    view.transposed = true;
    int64_t rowsExtent = 1;
    for (int64_t p = *rowEnd - static_cast<int64_t>(rows.size()) + 1;
         p <= *rowEnd && !rows.empty(); ++p)
      rowsExtent *= shape[p];
    view.rowStride = strideAt(*colEnd);
    if (view.rowStride < rowsExtent)
      return std::nullopt;
  } else {
    return std::nullopt;
  }
  for (unsigned loop : batch) {
    std::optional<unsigned> position =
        map.getResultPosition(getAffineDimExpr(loop, map.getContext()));
    view.batchStrides.push_back(strides[*position]);
  }
  return view;
}

std::optional<Gemm> match(linalg::LinalgOp op) {
  if (!op.hasPureBufferSemantics() || op.getNumDpsInputs() != 2 ||
      op.getNumDpsInits() != 1 || !linalg::isaContractionOpInterface(op))
    return std::nullopt;
  SmallVector<ArrayRef<int64_t>> shapes;
  Type element;
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || !type.hasStaticShape() ||
        !isa<Float32Type, Float16Type, BFloat16Type>(type.getElementType()) ||
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
  std::optional<MatrixView> a = viewOf(maps[0], shapes[0], m, k, batch);
  std::optional<MatrixView> b = viewOf(maps[1], shapes[1], k, n, batch);
  std::optional<MatrixView> c = viewOf(maps[2], shapes[2], m, n, batch);
  if (!a || !b || !c || c->transposed)
    return std::nullopt;
  gemm.a = *a;
  gemm.b = *b;
  gemm.c = *c;
  return gemm;
}

struct ConvertGemmToBlasPass
    : public tp::impl::ConvertGemmToBlasPassBase<ConvertGemmToBlasPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    Type i64 = b.getI64Type(), i32 = b.getI32Type();
    // tprt_rt_sgemm, or tprt_rt_gemm_narrow (f16/bf16 storage, f32
    // accumulation), which takes the dtype code after the context.
    auto declare = [&](bool narrow) {
      SmallVector<Type> inputs = {ptr, i32, i32, i64, i64, i64, ptr,
                                  i64, ptr, i64, ptr, i64, i64, i64,
                                  i64, i64, i64, i64, i64, i64};
      if (narrow)
        inputs.insert(inputs.begin() + 1, i32);
      return declareRuntimeFunction(
          module, narrow ? "tprt_rt_gemm_narrow" : "tprt_rt_sgemm", inputs, {});
    };

    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || func.getNumArguments() == 0 ||
          !isa<LLVM::LLVMPointerType>(func.getArgument(0).getType()))
        continue;
      Value rankContext = func.getArgument(0);
      SmallVector<std::pair<linalg::LinalgOp, Gemm>> gemms;
      func.walk([&](linalg::LinalgOp op) {
        if (std::optional<Gemm> gemm = match(op))
          gemms.push_back({op, *gemm});
      });
      for (auto &[op, g] : gemms) {
        Value c = op.getDpsInits()[0];
        if (!cast<MemRefType>(c.getType()).getLayout().isIdentity())
          continue; // strided output: loops
        Location loc = op.getLoc();
        b.setInsertionPoint(op);
        Value a = contiguousBuffer(b, loc, op.getDpsInputs()[0]);
        Value bm = contiguousBuffer(b, loc, op.getDpsInputs()[1]);
        auto constant = [&](int64_t v, Type t) -> Value {
          return arith::ConstantIntOp::create(b, loc, v,
                                              cast<IntegerType>(t).getWidth());
        };
        auto batchSize = [&](unsigned i) -> int64_t {
          return i < g.batchSizes.size() ? g.batchSizes[i] : 1;
        };
        auto batchStride = [&](const MatrixView &v, unsigned i) -> int64_t {
          return i < v.batchStrides.size() ? v.batchStrides[i] : 0;
        };
        SmallVector<Value> args = {rankContext,
                                   constant(g.a.transposed, i32),
                                   constant(g.b.transposed, i32),
                                   constant(g.m, i64),
                                   constant(g.n, i64),
                                   constant(g.k, i64),
                                   bufferPointer(b, loc, a),
                                   constant(g.a.rowStride, i64),
                                   bufferPointer(b, loc, bm),
                                   constant(g.b.rowStride, i64),
                                   bufferPointer(b, loc, c),
                                   constant(g.c.rowStride, i64),
                                   constant(batchSize(0), i64),
                                   constant(batchSize(1), i64),
                                   constant(batchStride(g.a, 0), i64),
                                   constant(batchStride(g.a, 1), i64),
                                   constant(batchStride(g.b, 0), i64),
                                   constant(batchStride(g.b, 1), i64),
                                   constant(batchStride(g.c, 0), i64),
                                   constant(batchStride(g.c, 1), i64)};
        Type element = cast<MemRefType>(c.getType()).getElementType();
        bool narrow = !element.isF32();
        if (narrow)
          args.insert(args.begin() + 1,
                      constant(element.isF16() ? 2 : 3, i32)); // tprt_dtype
        func::CallOp::create(b, loc, declare(narrow), args);
        if (a != op.getDpsInputs()[0])
          memref::DeallocOp::create(b, loc, a);
        if (bm != op.getDpsInputs()[1])
          memref::DeallocOp::create(b, loc, bm);
        op->erase();
      }
    }
  }
};

} // namespace
