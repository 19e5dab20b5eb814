//===- ConvertGemmToBlas.cpp - f32 GEMMs -> OpenBLAS through tprt ---------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// 1. Recognize linalg.matmul / linalg.batch_matmul on f32 memrefs by their
//    indexing maps: C(b, m, n) += A(b, m, k) * B(b, k, n), each of A and B
//    possibly stored transposed.
// 2. Make A and B contiguous (copies for strided layouts); skip an op whose
//    output is strided.
// 3. Call tprt_rt_sgemm(ctx, transA, transB, batch, m, n, k, A, lda,
//    strideA, B, ldb, strideB, C, ldc, strideC): row strides are the stored
//    matrices' last dimensions, batch strides their sizes.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

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

/// How a GEMM's operands are stored; nullopt when `op` is not one we take.
struct GemmShape {
  bool batched;
  bool transA, transB;
};

std::optional<GemmShape> match(linalg::LinalgOp op) {
  if (!isa<linalg::MatmulOp, linalg::BatchMatmulOp>(op) ||
      !op.hasPureBufferSemantics() || op->getNumOperands() != 3)
    return std::nullopt;
  for (Value v : op->getOperands()) {
    auto type = dyn_cast<MemRefType>(v.getType());
    if (!type || !type.getElementType().isF32())
      return std::nullopt;
  }
  bool batched = isa<linalg::BatchMatmulOp>(op);
  MLIRContext *ctx = op->getContext();
  // Loops: [b,] m, n, k.
  unsigned base = batched ? 1 : 0;
  auto d = [&](unsigned i) { return getAffineDimExpr(base + i, ctx); };
  unsigned numDims = base + 3;
  auto mapOf = [&](ArrayRef<AffineExpr> exprs) {
    SmallVector<AffineExpr> all;
    if (batched)
      all.push_back(getAffineDimExpr(0, ctx));
    llvm::append_range(all, exprs);
    return AffineMap::get(numDims, 0, all, ctx);
  };
  SmallVector<AffineMap> maps = op.getIndexingMapsArray();
  if (maps[2] != mapOf({d(0), d(1)}))
    return std::nullopt;
  GemmShape shape{batched, false, false};
  if (maps[0] == mapOf({d(2), d(0)}))
    shape.transA = true;
  else if (maps[0] != mapOf({d(0), d(2)}))
    return std::nullopt;
  if (maps[1] == mapOf({d(1), d(2)}))
    shape.transB = true;
  else if (maps[1] != mapOf({d(2), d(1)}))
    return std::nullopt;
  return shape;
}

struct ConvertGemmToBlasPass
    : public tp::impl::ConvertGemmToBlasPassBase<ConvertGemmToBlasPass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *ctx = &getContext();
    OpBuilder b(ctx);
    Type ptr = LLVM::LLVMPointerType::get(ctx);
    Type i64 = b.getI64Type(), i32 = b.getI32Type();
    func::FuncOp decl;
    auto declare = [&] {
      if (decl)
        return decl;
      if ((decl = module.lookupSymbol<func::FuncOp>("tprt_rt_sgemm")))
        return decl;
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToEnd(module.getBody());
      SmallVector<Type> inputs = {ptr, i32, i32, i64, i64, i64, i64, ptr,
                                  i64, i64, ptr, i64, i64, ptr, i64, i64};
      decl = func::FuncOp::create(b, module.getLoc(), "tprt_rt_sgemm",
                                  b.getFunctionType(inputs, {}));
      decl.setPrivate();
      return decl;
    };

    for (auto func : module.getOps<func::FuncOp>()) {
      if (func.isExternal() || func.getNumArguments() == 0 ||
          !isa<LLVM::LLVMPointerType>(func.getArgument(0).getType()))
        continue;
      Value rankContext = func.getArgument(0);
      SmallVector<linalg::LinalgOp> gemms;
      func.walk([&](linalg::LinalgOp op) {
        if (match(op))
          gemms.push_back(op);
      });
      for (linalg::LinalgOp op : gemms) {
        GemmShape shape = *match(op);
        Location loc = op.getLoc();
        b.setInsertionPoint(op);
        Value c = op->getOperand(2);
        if (!cast<MemRefType>(c.getType()).getLayout().isIdentity())
          continue; // strided output: loops
        auto contiguous = [&](Value v) -> Value {
          auto type = cast<MemRefType>(v.getType());
          if (type.getLayout().isIdentity())
            return v;
          SmallVector<Value> dyn;
          for (int64_t i = 0; i < type.getRank(); ++i)
            if (type.isDynamicDim(i))
              dyn.push_back(memref::DimOp::create(b, loc, v, i));
          Value copy = memref::AllocOp::create(
              b, loc, MemRefType::get(type.getShape(), type.getElementType()),
              dyn);
          memref::CopyOp::create(b, loc, v, copy);
          return copy;
        };
        Value a = contiguous(op->getOperand(0));
        Value bm = contiguous(op->getOperand(1));
        auto size = [&](Value v, int64_t dim) -> Value {
          auto type = cast<MemRefType>(v.getType());
          if (!type.isDynamicDim(dim))
            return arith::ConstantIntOp::create(b, loc, type.getDimSize(dim),
                                                64);
          return arith::IndexCastOp::create(
              b, loc, i64, memref::DimOp::create(b, loc, v, dim));
        };
        auto mul = [&](Value x, Value y) -> Value {
          return arith::MulIOp::create(b, loc, x, y);
        };
        auto pointer = [&](Value v) -> Value {
          Value index =
              memref::ExtractAlignedPointerAsIndexOp::create(b, loc, v);
          Value asInt = arith::IndexCastOp::create(b, loc, i64, index);
          return LLVM::IntToPtrOp::create(b, loc, ptr, asInt);
        };
        int64_t o = shape.batched ? 1 : 0;
        // C is [b,] m x n; A is [b,] m x k (or k x m); B is k x n (or n x k).
        Value m = size(c, o), n = size(c, o + 1);
        Value k = size(a, shape.transA ? o : o + 1);
        Value batch = shape.batched
                          ? size(c, 0)
                          : arith::ConstantIntOp::create(b, loc, 1, 64);
        Value lda = size(a, o + 1), ldb = size(bm, o + 1), ldc = n;
        Value strideA = mul(size(a, o), lda), strideB = mul(size(bm, o), ldb),
              strideC = mul(m, n);
        SmallVector<Value> args = {
            rankContext,
            arith::ConstantIntOp::create(b, loc, shape.transA, 32),
            arith::ConstantIntOp::create(b, loc, shape.transB, 32),
            batch,
            m,
            n,
            k,
            pointer(a),
            lda,
            strideA,
            pointer(bm),
            ldb,
            strideB,
            pointer(c),
            ldc,
            strideC};
        func::CallOp::create(b, loc, declare(), args);
        if (a != op->getOperand(0))
          memref::DeallocOp::create(b, loc, a);
        if (bm != op->getOperand(1))
          memref::DeallocOp::create(b, loc, bm);
        op->erase();
      }
    }
  }
};

} // namespace
