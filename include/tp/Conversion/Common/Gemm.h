//===- Gemm.h - The GEMM recogniser every lowering shares -------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// One recogniser finds the linalg contractions on buffers that are (batched,
// transposed) GEMMs, and what their call can do beside the product (an
// epilogue: the addends a loop wrote into the output before it, a bias and
// a residual, and a GELU after it); each target says, through a GemmTarget,
// which element types it multiplies and whether it takes epilogues. Every
// GEMM becomes tprt_rt_gemm with a constant descriptor (tprt_gemm_desc),
// which the runtime runs with OpenBLAS on the CPU, cuBLAS or cuBLASLt on
// CUDA.
//
//===----------------------------------------------------------------------===//

#ifndef TP_CONVERSION_COMMON_GEMM_H
#define TP_CONVERSION_COMMON_GEMM_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Builders.h"

#include "tprt/tprt.h"

#include <optional>

namespace mlir::tp {

/// An operand of a GEMM seen as a (batch of) row-major matrices, in
/// elements: the leading dimension (row stride of the stored matrix),
/// whether it is stored transposed, and one stride per batch loop (0 for a
/// loop the operand does not vary along).
struct GemmOperand {
  int64_t leadingDim = 0;
  bool transposed = false;
  SmallVector<int64_t, 2> batchStrides;
};

/// C += op(A) * op(B) for each point of its batch loops: A is M x K (or
/// K x M, transposed), B is K x N (or N x K), C is M x N (never transposed).
/// A call takes the last two batch loops (tprt_gemm_desc); the leading ones,
/// where there are more (grouped-query attention's batch, key/value head and
/// query head in the group), are loops around the call.
struct Gemm {
  int64_t m = 1, n = 1, k = 1;
  SmallVector<int64_t, 2> batchSizes;
  GemmOperand a, b, c;
  /// The element type of all three operands.
  Type elementType;
  /// How many of C's trailing dimensions are its n loops (its columns).
  unsigned columnDims = 1;

  /// How many leading batch loops are loops around the call.
  unsigned loopBatches() const {
    return batchSizes.size() > 2 ? batchSizes.size() - 2 : 0;
  }
  /// The size of the call's batch loop `i` (0 or 1); 1 where there is none.
  int64_t callBatchSize(unsigned i) const {
    unsigned at = loopBatches() + i;
    return at < batchSizes.size() ? batchSizes[at] : 1;
  }
  /// How many calls the GEMM makes.
  int64_t calls() const {
    int64_t n = 1;
    for (unsigned i = 0; i < loopBatches(); ++i)
      n *= batchSizes[i];
    return n;
  }
};

/// `op` as a GEMM: a linalg contraction (named matmul / batch_matmul, or a
/// generic whose body multiplies and accumulates) on statically shaped
/// memrefs of one float type, whose m, n and k loops are each adjacent and
/// in the same order in the operands that hold them, one group innermost in
/// each operand; where the m or n loops are not (grouped-query attention's
/// query heads of a group), one of them may become a batch loop instead,
/// with stride 0 in the operand that does not hold it. Nothing otherwise.
std::optional<Gemm> matchGemm(linalg::LinalgOp op);

/// What a GEMM's call does beside the product: D = act(op(A) op(B) + C +
/// bias) (tprt_rt_gemm).
struct GemmEpilogue {
  /// The buffer added to the product (beta = 1), or null; it may be `d`.
  Value c;
  /// A vector of n entries added to every row, or null.
  Value bias;
  /// GELU (tanh form) last.
  bool gelu = false;
  /// The buffer written.
  Value d;
  /// Where set (an i1), C and the bias are taken only where it holds (a
  /// partial sum adds them on one member of its group): null elsewhere.
  Value condition;
};

/// Where a call's operands start in their buffers, in elements (index
/// values; null: at the start). C and D share `c`; the bias has none.
struct GemmOffsets {
  Value a, b, c;
};

/// What a GEMM becomes on one target.
class GemmTarget {
public:
  virtual ~GemmTarget();
  /// Whether the target multiplies this element type (others stay loops).
  virtual bool supportsElementType(Type type) const = 0;
  /// Whether the target's GEMMs take what a GemmEpilogue says beyond an
  /// accumulation into D (a C apart from D, a bias, a GELU): then the
  /// recogniser folds the loops around a GEMM that do that into its call.
  virtual bool supportsEpilogues() const = 0;
  /// Emits the GEMM `gemm` with `epilogue`. `a`, `b` and the epilogue's
  /// buffers have identity layouts (the driver makes strided inputs
  /// contiguous); `rankContext` is the function's rank context.
  /// `offsets`, where set, are each operand's offset in elements (a call
  /// in the loops around it over the leading batch loops).
  virtual void emitGemm(OpBuilder &builder, Location loc, Value rankContext,
                        const Gemm &gemm, Value a, Value b,
                        const GemmEpilogue &epilogue,
                        const GemmOffsets &offsets) const = 0;
};

/// Replaces every GEMM of `func` that `target` supports by its call (see
/// GemmTarget), copying strided inputs to contiguous buffers (freed after the
/// call); GEMMs with a strided output stay loops. `func`'s first argument is
/// the rank context. Returns how many were replaced.
int64_t convertGemms(func::FuncOp func, const GemmTarget &target);

/// tprt_gemm_desc of `gemm` with `epilogue` (C, when there is one, laid out
/// as D).
tprt_gemm_desc gemmDescriptor(const Gemm &gemm, const GemmEpilogue &epilogue);

/// The descriptors' globals of a module: a private constant
/// `@__tp_gemm_desc_N` per distinct descriptor.
class GemmDescriptors {
public:
  explicit GemmDescriptors(ModuleOp module);
  LLVM::GlobalOp globalFor(const tprt_gemm_desc &desc, Location loc);
  ModuleOp getModule() const { return module; }

private:
  ModuleOp module;
  llvm::DenseMap<Attribute, LLVM::GlobalOp> globals;
  int64_t count = 0;
};

/// Emits tprt_rt_gemm(ctx, &desc, A, B, C, D, bias): the descriptor one of
/// `descriptors`, a null pointer for a C or bias that is absent.
void emitGemmCall(OpBuilder &b, Location loc, GemmDescriptors &descriptors,
                  Value rankContext, const tprt_gemm_desc &desc, Value a,
                  Value bm, const GemmEpilogue &epilogue,
                  const GemmOffsets &offsets = {});

/// The descriptor of a tprt_rt_gemm call emitGemmCall made, and whether
/// its C and bias are there; nothing for another call.
struct GemmCall {
  tprt_gemm_desc desc;
  bool hasC = false, hasBias = false;
};
std::optional<GemmCall> readGemmCall(func::CallOp call);

} // namespace mlir::tp

#endif // TP_CONVERSION_COMMON_GEMM_H
