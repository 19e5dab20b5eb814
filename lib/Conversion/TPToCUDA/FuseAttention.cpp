//===- FuseAttention.cpp - Scores, softmax and weighted sum as one kernel -===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Attention on buffers (see the pass description in Passes.td): the scores
// contraction, the pointwise ops on the scores (scale, masks), the softmax
// over the keys and the weighted sum of the values become one gpu.launch that
// never writes the scores: a block per 16 query rows, four warps of four rows
// each, the keys in tiles of 32 (one per lane) staged with the values in
// workgroup memory, and the softmax computed online (a running maximum and
// sum per row, the accumulated output rescaled as they change).
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Common/Buffers.h"
#include "tp/Conversion/Common/Gemm.h"
#include "tp/Conversion/Passes.h"
#include "tp/Dialect/TP/Transforms/CostModel.h"

#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "llvm/ADT/SetVector.h"

#include <cmath>
#include <limits>

namespace mlir::tp {
#define GEN_PASS_DEF_FUSEATTENTIONPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// The kernel's tiling: query rows per warp, warps per block, keys per tile
/// (one per lane).
constexpr int64_t kRowsPerWarp = 4;
constexpr int64_t kWarps = 4;
constexpr int64_t kRowsPerBlock = kRowsPerWarp * kWarps;
constexpr int64_t kKeysPerTile = 32;
/// The largest head dimensions whose tiles fit the 48 KiB of static
/// workgroup memory (staged as f32).
constexpr int64_t kMaxHeadDim = 128;

/// The tensor-core kernel's tiling: 16 query rows per warp (mma.sync's m),
/// keys per tile, and the padding of each staged row (16 bytes: the eight
/// rows a fragment load reads fall in distinct banks).
constexpr int64_t kMmaRowsPerWarp = 16;
constexpr int64_t kMmaRowsPerBlock = kMmaRowsPerWarp * kWarps;
constexpr int64_t kMmaKeysPerTile = 64;
constexpr int64_t kMmaPad = 8;
/// What one thread stages at a time where the operand's layout allows: 16
/// bytes (eight f16 or bf16).
constexpr int64_t kStageBytes = 16;

/// A contraction `out += a * b` (each operand optionally widened first) with
/// one reduction loop, on statically shaped buffers of floats.
struct Contraction {
  linalg::GenericOp op;
  /// Its reduction loop.
  unsigned reduction;
};

std::optional<Contraction> matchContraction(linalg::GenericOp op) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !op.hasPureBufferSemantics())
    return std::nullopt;
  SmallVector<int64_t> ranges = op.getStaticLoopRanges();
  if (llvm::any_of(ranges, ShapedType::isDynamic))
    return std::nullopt;
  std::optional<unsigned> reduction;
  for (auto [i, type] : llvm::enumerate(op.getIteratorTypesArray())) {
    if (type != utils::IteratorType::reduction)
      continue;
    if (reduction)
      return std::nullopt;
    reduction = i;
  }
  if (!reduction)
    return std::nullopt;
  for (AffineMap map : op.getIndexingMapsArray())
    if (!map.isProjectedPermutation())
      return std::nullopt;
  if (op.getMatchingIndexingMap(op.getDpsInitOperand(0))
          .isFunctionOfDim(*reduction))
    return std::nullopt;
  Block *body = op.getBlock();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  if (!add)
    return std::nullopt;
  BlockArgument a = body->getArgument(0), bArg = body->getArgument(1),
                out = body->getArgument(2);
  Value product = add.getLhs() == out   ? add.getRhs()
                  : add.getRhs() == out ? add.getLhs()
                                        : Value();
  auto mul = product ? product.getDefiningOp<arith::MulFOp>() : nullptr;
  if (!mul)
    return std::nullopt;
  auto source = [](Value v) {
    if (auto ext = v.getDefiningOp<arith::ExtFOp>())
      return ext.getIn();
    return v;
  };
  Value x = source(mul.getLhs()), y = source(mul.getRhs());
  if (!((x == a && y == bArg) || (x == bArg && y == a)))
    return std::nullopt;
  return Contraction{op, *reduction};
}

/// The one loop `map`'s result `index` is.
unsigned loopOf(AffineMap map, unsigned index) {
  return cast<AffineDimExpr>(map.getResult(index)).getPosition();
}

bool isIdentityOn(linalg::GenericOp op, OpOperand *operand) {
  return op.getMatchingIndexingMap(operand).isIdentity();
}

/// Whether every loop of `op` is parallel.
bool allParallel(linalg::GenericOp op) {
  return llvm::all_of(op.getIteratorTypesArray(), [](utils::IteratorType t) {
    return t == utils::IteratorType::parallel;
  });
}

/// A reduction of the scores over their last dimension into a buffer of one
/// element per row, its body `combine(in, out)`; the combining op.
template <typename... Combine>
Operation *matchRowReduction(linalg::GenericOp op, Value scores) {
  if (op.getNumDpsInputs() != 1 || op.getNumDpsInits() != 1 ||
      op.getDpsInputs()[0] != scores ||
      !isIdentityOn(op, op.getDpsInputOperand(0)))
    return nullptr;
  unsigned last = op.getNumLoops() - 1;
  for (auto [i, type] : llvm::enumerate(op.getIteratorTypesArray()))
    if ((type == utils::IteratorType::reduction) != (i == last))
      return nullptr;
  AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
  if (out !=
      AffineMap::getMultiDimIdentityMap(op.getNumLoops(), op.getContext())
          .dropResult(last))
    return nullptr;
  Block *body = op.getBlock();
  Operation *combine = cast<linalg::YieldOp>(body->getTerminator())
                           .getValues()[0]
                           .getDefiningOp();
  if (!combine || !isa<Combine...>(combine) || combine->getBlock() != body)
    return nullptr;
  Value in = body->getArgument(0), acc = body->getArgument(1);
  // The input, or the input widened (a bf16 sum accumulated in f32:
  // tp-widen-reductions).
  auto isIn = [&](Value v) {
    auto ext = v.getDefiningOp<arith::ExtFOp>();
    return v == in || (ext && ext.getIn() == in);
  };
  if (!((isIn(combine->getOperand(0)) && combine->getOperand(1) == acc) ||
        (combine->getOperand(0) == acc && isIn(combine->getOperand(1)))))
    return nullptr;
  return combine;
}

/// `v`, or what `v` rounds (a widened reduction's result read in a narrow
/// type: tp-widen-reductions).
Value unrounded(Value v) {
  if (auto trunc = v.getDefiningOp<arith::TruncFOp>())
    return trunc.getIn();
  return v;
}

/// A pointwise op over the scores' shape reading `scores` (identity) and
/// one row buffer `rows` (the scores' map without its last dimension),
/// writing a buffer of the scores' shape (identity), with a body
/// `yield f(scores, rows)`; the yielded value's op.
Operation *matchRowPointwise(linalg::GenericOp op, Value scores, Value rows) {
  if (op.getNumDpsInputs() != 2 || op.getNumDpsInits() != 1 ||
      !allParallel(op) || op.getDpsInputs()[0] != scores ||
      op.getDpsInputs()[1] != rows ||
      !isIdentityOn(op, op.getDpsInputOperand(0)) ||
      !isIdentityOn(op, op.getDpsInitOperand(0)))
    return nullptr;
  unsigned last = op.getNumLoops() - 1;
  if (op.getMatchingIndexingMap(op.getDpsInputOperand(1)) !=
      AffineMap::getMultiDimIdentityMap(op.getNumLoops(), op.getContext())
          .dropResult(last))
    return nullptr;
  return cast<linalg::YieldOp>(op.getBlock()->getTerminator())
      .getValues()[0]
      .getDefiningOp();
}

/// Whether `fill` writes `value`'s constant into `buffer`, with `accept`
/// judging the constant.
bool fills(linalg::FillOp fill, Value buffer,
           llvm::function_ref<bool(double)> accept) {
  if (!fill || fill.getOutputs()[0] != buffer)
    return false;
  auto constant = fill.getInputs()[0].getDefiningOp<arith::ConstantOp>();
  auto value = constant ? dyn_cast<FloatAttr>(constant.getValue()) : nullptr;
  return value && accept(value.getValueAsDouble());
}

/// A statically shaped, identity-laid-out buffer of a fresh allocation.
bool isFreshBuffer(Value buffer) {
  auto type = dyn_cast<MemRefType>(buffer.getType());
  return type && type.hasStaticShape() && type.getLayout().isIdentity() &&
         isa_and_nonnull<memref::AllocOp>(buffer.getDefiningOp());
}

/// One attention found in a block, in program order.
struct Attention {
  Contraction scores, weighted;
  /// The pointwise ops on the scores before the softmax.
  SmallVector<linalg::GenericOp> transforms;
  /// The ops the kernel replaces (the fills, contractions, pointwise ops
  /// and reductions), in order.
  SmallVector<Operation *> ops;
  /// The buffers only the replaced ops use (the scores, the softmax's
  /// rows), which go with them.
  llvm::SetVector<Value> internal;
  /// Whether the output starts from zero (else the sum adds to it).
  bool outputZeroed = false;
  /// Whether the kernel runs its contractions on tensor cores (mma.sync).
  bool tensorCores = false;
  /// Of the scores (their rank r): the query dimension (in the queries, not
  /// in the keys) and the others before the last (the key dimension).
  unsigned queryDim = 0;
  SmallVector<unsigned> batchDims;
  /// The weighted sum's loop along the values' feature dimension.
  unsigned featureLoop = 0;
  /// Which input of the scores contraction is the queries (the other the
  /// keys), and which of the weighted sum's is the probabilities (the other
  /// the values).
  unsigned queryInput = 0, probInput = 0;
};

class Matcher {
public:
  /// The attention whose scores contraction is `op`, when the ops after it
  /// are one.
  std::optional<Attention> match(linalg::GenericOp op) {
    std::optional<Contraction> qk = matchContraction(op);
    if (!qk)
      return std::nullopt;
    Attention att;
    att.scores = *qk;
    Value scores = op.getDpsInits()[0];
    if (!isFreshBuffer(scores))
      return std::nullopt;
    auto scoresType = cast<MemRefType>(scores.getType());
    int64_t rank = scoresType.getRank();
    if (rank < 2)
      return std::nullopt;
    // The fill that starts the scores at zero, just before.
    auto fill =
        dyn_cast_or_null<linalg::FillOp>(skipBackward(op->getPrevNode()));
    if (!fills(fill, scores, [](double v) { return v == 0.0; }))
      return std::nullopt;
    att.ops.push_back(fill);
    att.ops.push_back(op);
    att.internal.insert(scores);
    if (!rolesOfScores(att))
      return std::nullopt;

    // The pointwise ops on the scores, then the softmax.
    Value current = scores;
    Operation *cursor = op->getNextNode();
    auto next = [&]() -> Operation * {
      cursor = skipForward(cursor);
      Operation *found = cursor;
      if (cursor)
        cursor = cursor->getNextNode();
      return found;
    };
    Operation *at = next();
    while (auto t = dyn_cast_or_null<linalg::GenericOp>(at)) {
      if (!isScoreTransform(t, current))
        break;
      att.transforms.push_back(t);
      att.ops.push_back(t);
      current = t.getDpsInits()[0];
      att.internal.insert(current);
      at = next();
    }
    // max over the keys, from -inf (or a value no score is below).
    // (NaN, which maxnumf ignores, is the identity a decomposed amax uses.)
    auto maxFill = dyn_cast_or_null<linalg::FillOp>(at);
    auto maxOp = dyn_cast_or_null<linalg::GenericOp>(next());
    Operation *max =
        maxOp ? matchRowReduction<arith::MaxNumFOp, arith::MaximumFOp>(maxOp,
                                                                       current)
              : nullptr;
    if (!maxFill || !max)
      return std::nullopt;
    Value maxRows = maxOp.getDpsInits()[0];
    bool ignoresNaN = isa<arith::MaxNumFOp>(max);
    if (!isFreshBuffer(maxRows) || !fills(maxFill, maxRows, [&](double v) {
          return v <= -1e30 || (ignoresNaN && std::isnan(v));
        }))
      return std::nullopt;
    att.ops.append({maxFill, maxOp});
    att.internal.insert(maxRows);
    // exp(scores - max)
    auto expOp = dyn_cast_or_null<linalg::GenericOp>(next());
    Operation *exp =
        expOp ? matchRowPointwise(expOp, current, maxRows) : nullptr;
    auto expm = dyn_cast_or_null<math::ExpOp>(exp);
    auto sub =
        expm ? expm.getOperand().getDefiningOp<arith::SubFOp>() : nullptr;
    Block *expBody = expOp ? expOp.getBlock() : nullptr;
    if (!sub || sub.getLhs() != expBody->getArgument(0) ||
        sub.getRhs() != expBody->getArgument(1))
      return std::nullopt;
    att.ops.push_back(expOp);
    current = expOp.getDpsInits()[0];
    att.internal.insert(current);
    // sum over the keys, from zero.
    auto sumFill = dyn_cast_or_null<linalg::FillOp>(next());
    auto sumOp = dyn_cast_or_null<linalg::GenericOp>(next());
    if (!sumFill || !sumOp || !matchRowReduction<arith::AddFOp>(sumOp, current))
      return std::nullopt;
    Value sumRows = sumOp.getDpsInits()[0];
    if (!isFreshBuffer(sumRows) ||
        !fills(sumFill, sumRows, [](double v) { return v == 0.0; }))
      return std::nullopt;
    att.ops.append({sumFill, sumOp});
    att.internal.insert(sumRows);
    // scores / sum
    auto divOp = dyn_cast_or_null<linalg::GenericOp>(next());
    auto div = dyn_cast_or_null<arith::DivFOp>(
        divOp ? matchRowPointwise(divOp, current, sumRows) : nullptr);
    if (!div || div.getLhs() != divOp.getBlock()->getArgument(0) ||
        unrounded(div.getRhs()) != divOp.getBlock()->getArgument(1))
      return std::nullopt;
    att.ops.push_back(divOp);
    current = divOp.getDpsInits()[0];
    att.internal.insert(current);

    // The weighted sum, from zero or onto the output.
    at = next();
    if (auto outFill = dyn_cast_or_null<linalg::FillOp>(at)) {
      auto pv = dyn_cast_or_null<linalg::GenericOp>(next());
      if (!pv || pv.getNumDpsInits() != 1 ||
          !fills(outFill, pv.getDpsInits()[0],
                 [](double v) { return v == 0.0; }))
        return std::nullopt;
      att.ops.push_back(outFill);
      att.outputZeroed = true;
      at = pv;
    }
    auto pv = dyn_cast_or_null<linalg::GenericOp>(at);
    std::optional<Contraction> weighted =
        pv ? matchContraction(pv) : std::nullopt;
    if (!weighted)
      return std::nullopt;
    if (pv.getDpsInputs()[0] == current)
      att.probInput = 0;
    else if (pv.getDpsInputs()[1] == current)
      att.probInput = 1;
    else
      return std::nullopt;
    if (pv.getDpsInputs()[0] == pv.getDpsInputs()[1])
      return std::nullopt;
    att.weighted = *weighted;
    att.ops.push_back(pv);
    if (!rolesOfWeighted(att) || !onlyUsedHere(att))
      return std::nullopt;
    return att;
  }

private:
  /// Ops the attention's ops may stand apart by: allocations, frees and
  /// pure ops without regions (constants, views).
  static bool isIntervening(Operation *op) {
    if (isa<memref::AllocOp, memref::AllocaOp, memref::DeallocOp>(op))
      return true;
    return op->getNumRegions() == 0 && isMemoryEffectFree(op) &&
           !isa<linalg::LinalgOp>(op);
  }
  static Operation *skipForward(Operation *op) {
    while (op && isIntervening(op))
      op = op->getNextNode();
    return op;
  }
  static Operation *skipBackward(Operation *op) {
    while (op && isIntervening(op))
      op = op->getPrevNode();
    return op;
  }

  /// The scores' dimensions: the last is the keys'; the query dimension is
  /// the last other that the queries read and the keys do not (the keys and
  /// the values must not read it: a block's rows share their tiles); the
  /// others are batch dimensions, the keys and values read by several of
  /// them where they do not read them all (grouped-query attention: the
  /// query heads of a group share their key/value head).
  static bool rolesOfScores(Attention &att) {
    linalg::GenericOp op = att.scores.op;
    AffineMap out = op.getMatchingIndexingMap(op.getDpsInitOperand(0));
    unsigned rank = out.getNumResults();
    unsigned keyLoop = loopOf(out, rank - 1);
    // The queries are the input that does not read the key loop.
    att.queryInput = op.getMatchingIndexingMap(op.getDpsInputOperand(0))
                             .isFunctionOfDim(keyLoop)
                         ? 1
                         : 0;
    AffineMap q =
        op.getMatchingIndexingMap(op.getDpsInputOperand(att.queryInput));
    AffineMap k =
        op.getMatchingIndexingMap(op.getDpsInputOperand(1 - att.queryInput));
    if (q.isFunctionOfDim(keyLoop) || !k.isFunctionOfDim(keyLoop) ||
        !q.isFunctionOfDim(att.scores.reduction) ||
        !k.isFunctionOfDim(att.scores.reduction))
      return false;
    std::optional<unsigned> query;
    for (unsigned d = 0; d + 1 < rank; ++d) {
      unsigned loop = loopOf(out, d);
      if (q.isFunctionOfDim(loop) && !k.isFunctionOfDim(loop))
        query = d;
    }
    if (!query)
      return false;
    att.queryDim = *query;
    for (unsigned d = 0; d + 1 < rank; ++d)
      if (d != *query)
        att.batchDims.push_back(d);
    int64_t headDim = op.getStaticLoopRanges()[att.scores.reduction];
    return headDim <= kMaxHeadDim;
  }

  /// The weighted sum reads the probabilities as the scores are laid out
  /// (its reduction loop their last dimension), and values that do not
  /// depend on the query; each output element is one (row, feature).
  static bool rolesOfWeighted(Attention &att) {
    linalg::GenericOp pv = att.weighted.op;
    AffineMap p =
        pv.getMatchingIndexingMap(pv.getDpsInputOperand(att.probInput));
    AffineMap v =
        pv.getMatchingIndexingMap(pv.getDpsInputOperand(1 - att.probInput));
    AffineMap out = pv.getMatchingIndexingMap(pv.getDpsInitOperand(0));
    unsigned rank = p.getNumResults();
    auto scoresType =
        cast<MemRefType>(att.scores.op.getDpsInits()[0].getType());
    if (rank != scoresType.getRank() ||
        loopOf(p, rank - 1) != att.weighted.reduction ||
        !v.isFunctionOfDim(att.weighted.reduction) ||
        v.isFunctionOfDim(loopOf(p, att.queryDim)))
      return false;
    // The one parallel loop the probabilities do not use: the feature.
    std::optional<unsigned> feature;
    for (unsigned loop = 0; loop < pv.getNumLoops(); ++loop) {
      if (loop == att.weighted.reduction || p.isFunctionOfDim(loop))
        continue;
      if (feature)
        return false;
      feature = loop;
    }
    if (!feature || !v.isFunctionOfDim(*feature) ||
        out.getNumResults() != pv.getNumLoops() - 1)
      return false;
    att.featureLoop = *feature;
    int64_t features = pv.getStaticLoopRanges()[*feature];
    if (features > kMaxHeadDim)
      return false;
    // The keys of the keys and of the values agree.
    return pv.getStaticLoopRanges()[att.weighted.reduction] ==
           scoresType.getShape()[rank - 1];
  }

  /// A pointwise op on the scores before the softmax: it reads `scores`
  /// (identity), writes a buffer of their shape (identity; the scores or a
  /// fresh one), and reads anything else unchanged by the attention; its
  /// body is pure and does not read what it writes.
  static bool isScoreTransform(linalg::GenericOp op, Value scores) {
    if (op.getNumDpsInits() != 1 || !allParallel(op) ||
        !op.hasPureBufferSemantics() ||
        !isIdentityOn(op, op.getDpsInitOperand(0)) ||
        op.getDpsInits()[0].getType() != scores.getType())
      return false;
    Value out = op.getDpsInits()[0];
    if (out != scores && !isFreshBuffer(out))
      return false;
    bool readsScores = false;
    for (OpOperand *in : op.getDpsInputOperands()) {
      if (in->get() == scores) {
        if (readsScores || !isIdentityOn(op, in))
          return false;
        readsScores = true;
        continue;
      }
      if (in->get() == out ||
          !op.getMatchingIndexingMap(in).isProjectedPermutation())
        return false;
    }
    if (!readsScores || !op.getBlock()->getArguments().back().use_empty())
      return false;
    for (Operation &inner : op.getBlock()->without_terminator())
      if (inner.getNumRegions() || !isMemoryEffectFree(&inner))
        return false;
    return true;
  }

  /// The scores and rows are used by the replaced ops and their frees only.
  static bool onlyUsedHere(Attention &att) {
    llvm::SmallPtrSet<Operation *, 16> ops(att.ops.begin(), att.ops.end());
    for (Value buffer : att.internal)
      for (Operation *user : buffer.getUsers())
        if (!ops.contains(user) && !isa<memref::DeallocOp>(user))
          return false;
    // The output is none of them, and shares no memory with what the
    // kernel reads: its blocks write their rows while others still read
    // every key and value.
    Value out = att.weighted.op.getDpsInits()[0];
    if (att.internal.contains(out))
      return false;
    auto func = att.weighted.op->getParentOfType<func::FuncOp>();
    SmallVector<Value> read = {
        att.scores.op.getDpsInputs()[0], att.scores.op.getDpsInputs()[1],
        att.weighted.op.getDpsInputs()[1 - att.probInput]};
    for (linalg::GenericOp t : att.transforms)
      for (Value in : t.getDpsInputs())
        if (!att.internal.contains(in))
          read.push_back(in);
    return func && llvm::none_of(read, [&](Value in) {
             return tp::mayAlias(in, out, func);
           });
  }
};

/// Builds the kernel of one attention (see the file comment).
class KernelBuilder {
public:
  KernelBuilder(Attention &att) : att(att), loc(att.weighted.op.getLoc()) {}

  gpu::LaunchOp build() { return att.tensorCores ? buildMma() : buildScalar(); }

  /// Whether the kernel can run its two contractions on tensor cores
  /// (mma.sync m16n8k16): queries and keys of one 16-bit type, 16-bit
  /// values, a head dimension that is a multiple of 16 and a feature count
  /// that is a multiple of 8.
  static bool fitsTensorCores(Attention &att) {
    linalg::GenericOp qk = att.scores.op, pv = att.weighted.op;
    Type q = elementOf(qk.getDpsInputs()[0]);
    Type k = elementOf(qk.getDpsInputs()[1]);
    Type v = elementOf(pv.getDpsInputs()[1 - att.probInput]);
    auto is16 = [](Type t) { return t.isF16() || t.isBF16(); };
    return q == k && is16(q) && is16(v) &&
           qk.getStaticLoopRanges()[att.scores.reduction] % 16 == 0 &&
           pv.getStaticLoopRanges()[att.featureLoop] % 8 == 0;
  }

  gpu::LaunchOp buildScalar() {
    linalg::GenericOp qk = att.scores.op, pv = att.weighted.op;
    int64_t batches = readShapes();
    chunks = (features + 31) / 32;
    int64_t tiles = (queries + kRowsPerBlock - 1) / kRowsPerBlock;

    OpBuilder b(pv);
    MLIRContext *ctx = b.getContext();
    f32 = b.getF32Type();
    auto shared = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    auto sharedType = [&](ArrayRef<int64_t> dims) {
      return MemRefType::get(dims, f32, MemRefLayoutAttrInterface(), shared);
    };
    Value one = index(b, 1);
    auto launch = gpu::LaunchOp::create(
        b, loc, index(b, batches * tiles), one, one, index(b, kWarps * 32), one,
        one, /*dynamicSharedMemorySize=*/nullptr,
        /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{},
        TypeRange{sharedType({kRowsPerBlock, headDim}),
                  sharedType({kKeysPerTile, headDim + 1}),
                  sharedType({kKeysPerTile, features}),
                  sharedType({kRowsPerBlock, kKeysPerTile})});
    setCost(launch);
    b.setInsertionPointToStart(&launch.getBody().front());
    qs = launch.getWorkgroupAttributions()[0];
    ks = launch.getWorkgroupAttributions()[1];
    vs = launch.getWorkgroupAttributions()[2];
    ps = launch.getWorkgroupAttributions()[3];
    Value tid = launch.getThreadIds().x;
    Value c32 = index(b, 32);
    Value warp = arith::DivUIOp::create(b, loc, tid, c32);
    Value lane = arith::RemUIOp::create(b, loc, tid, c32);

    Value firstRow = blockStart(b, launch, tiles, kRowsPerBlock);

    // The block's queries, staged (zeros past the last query).
    Value threads = index(b, kWarps * 32);
    stage(b, tid, threads, kRowsPerBlock, headDim,
          [&](OpBuilder &b, Value r, Value d) {
            Value row = arith::AddIOp::create(b, loc, firstRow, r);
            Value valid = arith::CmpIOp::create(
                b, loc, arith::CmpIPredicate::ult, row, index(b, queries));
            Value element = guardedLoad(b, valid, [&](OpBuilder &b) {
              return loadOperand(b, qk, att.queryInput,
                                 scoresLoops(b, row, zero(b), d));
            });
            memref::StoreOp::create(b, loc, element, qs, ValueRange{r, d});
          });
    gpu::BarrierOp::create(b, loc);

    // The key tiles, each row's maximum, sum and outputs carried.
    Value negInf = arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
    Value zeroF = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
    SmallVector<Value> init;
    for (int64_t r = 0; r < kRowsPerWarp; ++r)
      init.append({negInf, zeroF});
    for (int64_t i = 0; i < kRowsPerWarp * chunks; ++i)
      init.push_back(zeroF);
    auto loop = scf::ForOp::create(b, loc, zero(b), index(b, keys),
                                   index(b, kKeysPerTile), init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value first = loop.getInductionVar();
      ValueRange carried = loop.getRegionIterArgs();
      // The tile's keys and values, staged (zeros past the last key).
      auto keyAt = [&](OpBuilder &b, Value j) {
        Value key = arith::AddIOp::create(b, loc, first, j);
        Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            key, index(b, keys));
        return std::pair{key, valid};
      };
      // A tile of `cols` elements per key of input `input` of `op`, read at
      // the loop values `loops` gives, into `tileBuffer`.
      auto stageKeys = [&](linalg::GenericOp op, unsigned input, int64_t cols,
                           auto loops, Value tileBuffer) {
        stage(b, tid, threads, kKeysPerTile, cols,
              [&](OpBuilder &b, Value j, Value c) {
                auto [key, valid] = keyAt(b, j);
                Value element = guardedLoad(b, valid, [&](OpBuilder &b) {
                  return loadOperand(b, op, input, loops(b, key, c));
                });
                memref::StoreOp::create(b, loc, element, tileBuffer,
                                        ValueRange{j, c});
              });
      };
      stageKeys(
          qk, 1 - att.queryInput, headDim,
          [&](OpBuilder &b, Value key, Value d) {
            return scoresLoops(b, zero(b), key, d);
          },
          ks);
      stageKeys(
          pv, 1 - att.probInput, features,
          [&](OpBuilder &b, Value key, Value e) {
            return weightedLoops(b, zero(b), key, e);
          },
          vs);
      gpu::BarrierOp::create(b, loc);

      // Each of the warp's rows: its score for the lane's key, the online
      // softmax's update, the key's weight staged for the warp.
      auto [key, keyValid] = keyAt(b, lane);
      SmallVector<Value> next(carried.begin(), carried.end());
      SmallVector<Value> alphas;
      for (int64_t r = 0; r < kRowsPerWarp; ++r) {
        Value localRow = arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, warp, index(b, kRowsPerWarp)),
            index(b, r));
        Value row = arith::AddIOp::create(b, loc, firstRow, localRow);
        Value dot = reduceLoop(
            b, headDim, zeroF, [&](OpBuilder &b, Value d, Value acc) {
              Value q =
                  memref::LoadOp::create(b, loc, qs, ValueRange{localRow, d});
              Value k = memref::LoadOp::create(b, loc, ks, ValueRange{lane, d});
              return arith::AddFOp::create(b, loc, acc,
                                           arith::MulFOp::create(b, loc, q, k));
            });
        Value score = transform(b, dot, row, key);
        score = arith::SelectOp::create(b, loc, keyValid, score, negInf);
        Value oldMax = carried[2 * r], oldSum = carried[2 * r + 1];
        Value tileMax = warpReduce(b, score, gpu::AllReduceOperation::MAXNUMF);
        Value newMax = arith::MaxNumFOp::create(b, loc, oldMax, tileMax);
        // exp's reference: 0 while every score so far is -inf.
        Value isNegInf = arith::CmpFOp::create(
            b, loc, arith::CmpFPredicate::OEQ, newMax, negInf);
        Value base = arith::SelectOp::create(b, loc, isNegInf, zeroF, newMax);
        Value weight = math::ExpOp::create(
            b, loc, arith::SubFOp::create(b, loc, score, base));
        Value alpha = math::ExpOp::create(
            b, loc, arith::SubFOp::create(b, loc, oldMax, base));
        Value tileSum = warpReduce(b, weight, gpu::AllReduceOperation::ADD);
        next[2 * r] = newMax;
        next[2 * r + 1] = arith::AddFOp::create(
            b, loc, arith::MulFOp::create(b, loc, oldSum, alpha), tileSum);
        memref::StoreOp::create(b, loc, weight, ps, ValueRange{localRow, lane});
        alphas.push_back(alpha);
      }
      gpu::BarrierOp::create(b, loc);

      // The lane's features of each row: rescaled, plus the tile's
      // weighted values.
      int64_t accBase = 2 * kRowsPerWarp;
      SmallVector<Value> accs;
      for (int64_t r = 0; r < kRowsPerWarp; ++r)
        for (int64_t c = 0; c < chunks; ++c)
          accs.push_back(arith::MulFOp::create(
              b, loc, carried[accBase + r * chunks + c], alphas[r]));
      SmallVector<Value> localRows, featureIdx;
      for (int64_t r = 0; r < kRowsPerWarp; ++r)
        localRows.push_back(arith::AddIOp::create(
            b, loc, arith::MulIOp::create(b, loc, warp, index(b, kRowsPerWarp)),
            index(b, r)));
      for (int64_t c = 0; c < chunks; ++c)
        featureIdx.push_back(clampedFeature(b, lane, c));
      auto sum = scf::ForOp::create(b, loc, zero(b), index(b, kKeysPerTile),
                                    one, accs);
      {
        OpBuilder::InsertionGuard inner(b);
        b.setInsertionPointToStart(sum.getBody());
        Value j = sum.getInductionVar();
        SmallVector<Value> values, updated;
        for (int64_t c = 0; c < chunks; ++c)
          values.push_back(
              memref::LoadOp::create(b, loc, vs, ValueRange{j, featureIdx[c]}));
        for (int64_t r = 0; r < kRowsPerWarp; ++r) {
          Value w =
              memref::LoadOp::create(b, loc, ps, ValueRange{localRows[r], j});
          for (int64_t c = 0; c < chunks; ++c)
            updated.push_back(arith::AddFOp::create(
                b, loc, sum.getRegionIterArgs()[r * chunks + c],
                arith::MulFOp::create(b, loc, w, values[c])));
        }
        scf::YieldOp::create(b, loc, updated);
      }
      for (int64_t i = 0; i < kRowsPerWarp * chunks; ++i)
        next[accBase + i] = sum.getResult(i);
      // The tiles are read: the next iteration may stage its own.
      gpu::BarrierOp::create(b, loc);
      scf::YieldOp::create(b, loc, next);
    }

    // Each row's outputs: divided by its sum, written where they exist.
    int64_t accBase = 2 * kRowsPerWarp;
    for (int64_t r = 0; r < kRowsPerWarp; ++r) {
      Value localRow = arith::AddIOp::create(
          b, loc, arith::MulIOp::create(b, loc, warp, index(b, kRowsPerWarp)),
          index(b, r));
      Value row = arith::AddIOp::create(b, loc, firstRow, localRow);
      Value rowValid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                             row, index(b, queries));
      Value total = loop.getResult(2 * r + 1);
      for (int64_t c = 0; c < chunks; ++c) {
        Value feature = arith::AddIOp::create(b, loc, lane, index(b, 32 * c));
        Value valid = arith::AndIOp::create(
            b, loc, rowValid,
            arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, feature,
                                  index(b, features)));
        Value value = arith::DivFOp::create(
            b, loc, loop.getResult(accBase + r * chunks + c), total);
        auto store = scf::IfOp::create(b, loc, valid, false);
        OpBuilder::InsertionGuard guard(b);
        b.setInsertionPointToStart(&store.getThenRegion().front());
        SmallVector<Value> loops = weightedLoops(b, row, zero(b), feature);
        Value out = pv.getDpsInits()[0];
        SmallVector<Value> indices = indicesOf(
            b, pv.getMatchingIndexingMap(pv.getDpsInitOperand(0)), loops);
        Type type = cast<MemRefType>(out.getType()).getElementType();
        if (!att.outputZeroed)
          value = arith::AddFOp::create(
              b, loc, widen(b, memref::LoadOp::create(b, loc, out, indices)),
              value);
        memref::StoreOp::create(b, loc, narrow(b, value, type), out, indices);
      }
    }
    gpu::TerminatorOp::create(b, loc);
    return launch;
  }

  /// The tensor-core kernel (see the pass description): a block per 64
  /// queries, each warp 16 rows; per tile of 64 keys, the scores of a warp
  /// are 8 m16n8 accumulators, their online softmax runs on the fragments
  /// (a lane holds two rows, the quad of lanes sharing them meets by
  /// shuffles), and the probabilities, rounded to the values' type, are the
  /// A fragments of the weighted sum's mma.sync as they lie.
  gpu::LaunchOp buildMma() {
    linalg::GenericOp qk = att.scores.op, pv = att.weighted.op;
    int64_t batches = readShapes();
    int64_t tiles = (queries + kMmaRowsPerBlock - 1) / kMmaRowsPerBlock;
    Type qkType = elementOf(qk.getDpsInputs()[0]);
    Type vType = elementOf(pv.getDpsInputs()[1 - att.probInput]);

    OpBuilder b(pv);
    MLIRContext *ctx = b.getContext();
    f32 = b.getF32Type();
    auto shared = gpu::AddressSpaceAttr::get(ctx, gpu::AddressSpace::Workgroup);
    // The keys (first the queries), key-major; the values transposed,
    // feature-major, so that both B fragments load pairs of consecutive
    // elements.
    auto keysShared =
        MemRefType::get({kMmaKeysPerTile, headDim + kMmaPad}, qkType,
                        MemRefLayoutAttrInterface(), shared);
    auto valuesShared =
        MemRefType::get({features, kMmaKeysPerTile + kMmaPad}, vType,
                        MemRefLayoutAttrInterface(), shared);
    Value one = index(b, 1);
    auto launch = gpu::LaunchOp::create(
        b, loc, index(b, batches * tiles), one, one, index(b, kWarps * 32), one,
        one, /*dynamicSharedMemorySize=*/nullptr,
        /*asyncTokenType=*/nullptr, /*asyncDependencies=*/{},
        TypeRange{keysShared, valuesShared});
    setCost(launch);
    b.setInsertionPointToStart(&launch.getBody().front());
    Value ks = launch.getWorkgroupAttributions()[0];
    Value vt = launch.getWorkgroupAttributions()[1];
    Value tid = launch.getThreadIds().x;
    Value c32 = index(b, 32);
    Value warp = arith::DivUIOp::create(b, loc, tid, c32);
    Value lane = arith::RemUIOp::create(b, loc, tid, c32);
    // The lane's group (its rows g and g + 8) and 2t (its first column).
    Value g = arith::DivUIOp::create(b, loc, lane, index(b, 4));
    Value t2 = arith::MulIOp::create(
        b, loc, arith::RemUIOp::create(b, loc, lane, index(b, 4)), index(b, 2));

    Value firstRow = blockStart(b, launch, tiles, kMmaRowsPerBlock);
    Value warpRow =
        arith::MulIOp::create(b, loc, warp, index(b, kMmaRowsPerWarp));
    // The block-local rows of the lane: g and g + 8 of its warp's.
    Value localRows[2];
    Value rows[2];
    for (int64_t r = 0; r < 2; ++r) {
      localRows[r] = arith::AddIOp::create(
          b, loc, warpRow,
          arith::AddIOp::create(b, loc, g, index(b, 8 * r)).getResult());
      rows[r] = arith::AddIOp::create(b, loc, firstRow, localRows[r]);
    }

    // A pair of consecutive elements of a staged tile, as one register.
    auto pairAt = [&](OpBuilder &b, Value tileBuffer, Value row, Value col) {
      auto type = cast<MemRefType>(tileBuffer.getType());
      return vector::LoadOp::create(b, loc,
                                    VectorType::get({2}, type.getElementType()),
                                    tileBuffer, ValueRange{row, col});
    };
    // A fragment of `regs` registers, register r the pair at rowOf(r),
    // colOf(r).
    auto fragment = [&](OpBuilder &b, Value tileBuffer, int64_t regs,
                        llvm::function_ref<Value(int64_t)> rowOf,
                        llvm::function_ref<Value(int64_t)> colOf) {
      Type element = cast<MemRefType>(tileBuffer.getType()).getElementType();
      auto type = VectorType::get({regs, 2}, element);
      Value frag = arith::ConstantOp::create(
          b, loc, cast<TypedAttr>(b.getZeroAttr(type)));
      for (int64_t r = 0; r < regs; ++r)
        frag = vector::InsertOp::create(
            b, loc, pairAt(b, tileBuffer, rowOf(r), colOf(r)), frag,
            ArrayRef<int64_t>{r});
      return frag;
    };
    auto plus = [&](OpBuilder &b, Value v, int64_t c) -> Value {
      return c ? arith::AddIOp::create(b, loc, v, index(b, c)).getResult() : v;
    };

    // The block's queries, staged in the keys' tile (zeros past the last
    // query), then each warp's A fragments: k-tile kt, register r holds row
    // g + 8 (r mod 2), head elements 16 kt + 2t + 8 (r div 2) and the next.
    Value threads = index(b, kWarps * 32);
    auto storeRow = [&](Value tileBuffer) {
      return [&, tileBuffer](OpBuilder &b, Value value, Value r, Value c) {
        if (auto vector = dyn_cast<VectorType>(value.getType())) {
          vector::StoreOp::create(b, loc, value, tileBuffer, ValueRange{r, c})
              .setAlignment(kStageBytes);
          return;
        }
        memref::StoreOp::create(b, loc, value, tileBuffer, ValueRange{r, c});
      };
    };
    stageOperand(
        b, tid, threads, kMmaRowsPerBlock, headDim, qk, att.queryInput,
        att.scores.reduction, qkType,
        [&](OpBuilder &b, Value r, Value d) {
          return scoresLoops(b, arith::AddIOp::create(b, loc, firstRow, r),
                             zero(b), d);
        },
        [&](OpBuilder &b, Value r) -> Value {
          Value row = arith::AddIOp::create(b, loc, firstRow, r);
          return arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult, row,
                                       index(b, queries));
        },
        storeRow(ks));
    gpu::BarrierOp::create(b, loc);
    SmallVector<Value> qFrags;
    for (int64_t kt = 0; kt < headDim / 16; ++kt)
      qFrags.push_back(fragment(
          b, ks, 4, [&](int64_t r) { return localRows[r % 2]; },
          [&](int64_t r) { return plus(b, t2, 16 * kt + 8 * (r / 2)); }));
    // Every warp holds its fragments before the keys overwrite the tile.
    gpu::BarrierOp::create(b, loc);

    Value negInf = arith::ConstantOp::create(
        b, loc, b.getF32FloatAttr(-std::numeric_limits<float>::infinity()));
    Value zeroF = arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0));
    auto accType = VectorType::get({2, 2}, f32);
    Value zeroAcc = arith::ConstantOp::create(
        b, loc, cast<TypedAttr>(b.getZeroAttr(accType)));
    int64_t featureTiles = features / 8;
    // Carried: each of the lane's two rows' maximum and partial sum (its
    // own columns'), then the output accumulators, one per 8 features.
    SmallVector<Value> init = {negInf, negInf, zeroF, zeroF};
    for (int64_t ft = 0; ft < featureTiles; ++ft)
      init.push_back(zeroAcc);
    auto loop = scf::ForOp::create(b, loc, zero(b), index(b, keys),
                                   index(b, kMmaKeysPerTile), init);
    {
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(loop.getBody());
      Value first = loop.getInductionVar();
      ValueRange carried = loop.getRegionIterArgs();
      auto keyAt = [&](OpBuilder &b, Value j) {
        Value key = arith::AddIOp::create(b, loc, first, j);
        Value valid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                            key, index(b, keys));
        return std::pair{key, valid};
      };
      // The tile's keys (key-major) and values (feature-major), zeros past
      // the last key.
      auto keyValid = [&](OpBuilder &b, Value j) { return keyAt(b, j).second; };
      stageOperand(
          b, tid, threads, kMmaKeysPerTile, headDim, qk, 1 - att.queryInput,
          att.scores.reduction, qkType,
          [&](OpBuilder &b, Value j, Value d) {
            return scoresLoops(b, zero(b), keyAt(b, j).first, d);
          },
          keyValid, storeRow(ks));
      // The values transposed: a vector's elements to 8 rows of the tile.
      stageOperand(
          b, tid, threads, kMmaKeysPerTile, features, pv, 1 - att.probInput,
          att.featureLoop, vType,
          [&](OpBuilder &b, Value j, Value e) {
            return weightedLoops(b, zero(b), keyAt(b, j).first, e);
          },
          keyValid,
          [&](OpBuilder &b, Value value, Value j, Value e) {
            auto vector = dyn_cast<VectorType>(value.getType());
            if (!vector) {
              memref::StoreOp::create(b, loc, value, vt, ValueRange{e, j});
              return;
            }
            for (int64_t i = 0; i < vector.getNumElements(); ++i)
              memref::StoreOp::create(b, loc,
                                      vector::ExtractOp::create(
                                          b, loc, value, ArrayRef<int64_t>{i}),
                                      vt, ValueRange{plus(b, e, i), j});
          });
      gpu::BarrierOp::create(b, loc);

      // The scores: n-tile nt covers keys 8 nt .. 8 nt + 7; its B fragments
      // hold key 8 nt + g, head elements 16 kt + 2t + 8r and the next.
      constexpr int64_t keyTiles = kMmaKeysPerTile / 8;
      Value scores[keyTiles][2][2];
      for (int64_t nt = 0; nt < keyTiles; ++nt) {
        Value acc = zeroAcc;
        Value keyRow = plus(b, g, 8 * nt);
        for (int64_t kt = 0; kt < headDim / 16; ++kt) {
          Value kFrag = fragment(
              b, ks, 2, [&](int64_t) { return keyRow; },
              [&](int64_t r) { return plus(b, t2, 16 * kt + 8 * r); });
          acc = nvgpu::MmaSyncOp::create(b, loc, qFrags[kt], kFrag, acc,
                                         b.getI64ArrayAttr({16, 8, 16}))
                    .getResult();
        }
        // Its elements (g + 8r, 2t + e), through the pointwise ops; a key
        // past the end is -inf.
        for (int64_t r = 0; r < 2; ++r)
          for (int64_t e = 0; e < 2; ++e) {
            Value dot =
                vector::ExtractOp::create(b, loc, acc, ArrayRef<int64_t>{r, e});
            auto [key, keyValid] = keyAt(b, plus(b, t2, 8 * nt + e));
            Value score = transform(b, dot, rows[r], key);
            scores[nt][r][e] =
                arith::SelectOp::create(b, loc, keyValid, score, negInf);
          }
      }

      // The online softmax of each of the lane's rows: the tile's maximum
      // over the quad of lanes holding the row, the weights from it, the
      // rescaling of what came before.
      SmallVector<Value> next(carried.begin(), carried.end());
      Value alphas[2];
      Value weights[keyTiles][2][2];
      for (int64_t r = 0; r < 2; ++r) {
        Value tileMax = scores[0][r][0];
        for (int64_t nt = 0; nt < keyTiles; ++nt)
          for (int64_t e = 0; e < 2; ++e)
            if (nt || e)
              tileMax =
                  arith::MaxNumFOp::create(b, loc, tileMax, scores[nt][r][e]);
        tileMax = quadReduce(b, tileMax, gpu::AllReduceOperation::MAXNUMF);
        Value oldMax = carried[r], oldSum = carried[2 + r];
        Value newMax = arith::MaxNumFOp::create(b, loc, oldMax, tileMax);
        Value isNegInf = arith::CmpFOp::create(
            b, loc, arith::CmpFPredicate::OEQ, newMax, negInf);
        Value base = arith::SelectOp::create(b, loc, isNegInf, zeroF, newMax);
        alphas[r] = math::ExpOp::create(
            b, loc, arith::SubFOp::create(b, loc, oldMax, base));
        Value sum = arith::MulFOp::create(b, loc, oldSum, alphas[r]);
        for (int64_t nt = 0; nt < keyTiles; ++nt)
          for (int64_t e = 0; e < 2; ++e) {
            weights[nt][r][e] = math::ExpOp::create(
                b, loc, arith::SubFOp::create(b, loc, scores[nt][r][e], base));
            sum = arith::AddFOp::create(b, loc, sum, weights[nt][r][e]);
          }
        next[r] = newMax;
        next[2 + r] = sum;
      }

      // The weights as A fragments of the weighted sum (k-tile kk: keys
      // 16 kk ..): register r holds row g + 8 (r mod 2), keys
      // 16 kk + 8 (r div 2) + 2t and the next, which the scores' n-tile
      // 2 kk + r div 2 holds in its row r mod 2.
      auto pairType = VectorType::get({2}, f32);
      auto pType = VectorType::get({4, 2}, vType);
      SmallVector<Value> pFrags;
      for (int64_t kk = 0; kk < kMmaKeysPerTile / 16; ++kk) {
        Value frag = arith::ConstantOp::create(
            b, loc, cast<TypedAttr>(b.getZeroAttr(pType)));
        for (int64_t r = 0; r < 4; ++r) {
          int64_t nt = 2 * kk + r / 2, row = r % 2;
          Value pair = vector::FromElementsOp::create(
              b, loc, pairType,
              ValueRange{weights[nt][row][0], weights[nt][row][1]});
          Value narrow = arith::TruncFOp::create(
              b, loc, VectorType::get({2}, vType), pair);
          frag = vector::InsertOp::create(b, loc, narrow, frag,
                                          ArrayRef<int64_t>{r});
        }
        pFrags.push_back(frag);
      }
      // The outputs: rescaled by their row's alpha, plus the weighted
      // values; n-tile ft covers features 8 ft ..; its B fragments hold
      // feature 8 ft + g, keys 16 kk + 2t + 8r and the next.
      Value alphaRows = vector::FromElementsOp::create(
          b, loc, accType,
          ValueRange{alphas[0], alphas[0], alphas[1], alphas[1]});
      for (int64_t ft = 0; ft < featureTiles; ++ft) {
        Value acc = arith::MulFOp::create(b, loc, carried[4 + ft], alphaRows);
        Value featureRow = plus(b, g, 8 * ft);
        for (int64_t kk = 0; kk < kMmaKeysPerTile / 16; ++kk) {
          Value vFrag = fragment(
              b, vt, 2, [&](int64_t) { return featureRow; },
              [&](int64_t r) { return plus(b, t2, 16 * kk + 8 * r); });
          acc = nvgpu::MmaSyncOp::create(b, loc, pFrags[kk], vFrag, acc,
                                         b.getI64ArrayAttr({16, 8, 16}))
                    .getResult();
        }
        next[4 + ft] = acc;
      }
      // The tiles are read: the next iteration may stage its own.
      gpu::BarrierOp::create(b, loc);
      scf::YieldOp::create(b, loc, next);
    }

    // Each row's sum over its quad; the outputs (g + 8r, 8 ft + 2t + e)
    // divided by it, written where the row exists.
    for (int64_t r = 0; r < 2; ++r) {
      Value total =
          quadReduce(b, loop.getResult(2 + r), gpu::AllReduceOperation::ADD);
      Value rowValid = arith::CmpIOp::create(b, loc, arith::CmpIPredicate::ult,
                                             rows[r], index(b, queries));
      auto store = scf::IfOp::create(b, loc, rowValid, false);
      OpBuilder::InsertionGuard guard(b);
      b.setInsertionPointToStart(&store.getThenRegion().front());
      Value out = pv.getDpsInits()[0];
      Type type = cast<MemRefType>(out.getType()).getElementType();
      for (int64_t ft = 0; ft < featureTiles; ++ft)
        for (int64_t e = 0; e < 2; ++e) {
          Value acc = vector::ExtractOp::create(b, loc, loop.getResult(4 + ft),
                                                ArrayRef<int64_t>{r, e});
          Value value = arith::DivFOp::create(b, loc, acc, total);
          Value feature = plus(b, t2, 8 * ft + e);
          SmallVector<Value> loops =
              weightedLoops(b, rows[r], zero(b), feature);
          SmallVector<Value> indices = indicesOf(
              b, pv.getMatchingIndexingMap(pv.getDpsInitOperand(0)), loops);
          if (!att.outputZeroed)
            value = arith::AddFOp::create(
                b, loc, widen(b, memref::LoadOp::create(b, loc, out, indices)),
                value);
          memref::StoreOp::create(b, loc, narrow(b, value, type), out, indices);
        }
    }
    gpu::TerminatorOp::create(b, loc);
    return launch;
  }

private:
  static Type elementOf(Value buffer) {
    return cast<MemRefType>(buffer.getType()).getElementType();
  }

  /// `load` converted to `type` where `valid`, else 0.
  Value guardedNarrowLoad(OpBuilder &b, Value valid, Type type,
                          llvm::function_ref<Value(OpBuilder &)> load) {
    auto choose = scf::IfOp::create(b, loc, type, valid, true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&choose.getThenRegion().front());
    Value v = load(b);
    if (v.getType() != type)
      v = narrow(b, widen(b, v), type);
    scf::YieldOp::create(b, loc, v);
    b.setInsertionPointToStart(&choose.getElseRegion().front());
    scf::YieldOp::create(
        b, loc,
        arith::ConstantOp::create(b, loc, cast<TypedAttr>(b.getZeroAttr(type)))
            .getResult());
    return choose.getResult(0);
  }

  /// Whether input `input` of `op` can be staged `kStageBytes` at a time:
  /// `loop` is its innermost dimension, of unit stride, its offset and other
  /// strides multiples of the vector (so that every vector is aligned), its
  /// elements of `type` already.
  static bool stagesVectors(linalg::GenericOp op, unsigned input, unsigned loop,
                            Type type, int64_t count) {
    OpOperand *operand = op.getDpsInputOperand(input);
    auto memref = cast<MemRefType>(operand->get().getType());
    if (memref.getElementType() != type)
      return false;
    int64_t width = kStageBytes / (type.getIntOrFloatBitWidth() / 8);
    AffineMap map = op.getMatchingIndexingMap(operand);
    std::optional<unsigned> position =
        map.getResultPosition(getAffineDimExpr(loop, op.getContext()));
    SmallVector<int64_t> strides;
    int64_t offset;
    if (count % width != 0 || !position ||
        *position != map.getNumResults() - 1 ||
        failed(memref.getStridesAndOffset(strides, offset)) ||
        strides.back() != 1 || ShapedType::isDynamic(offset) ||
        offset % width != 0)
      return false;
    return llvm::all_of(ArrayRef<int64_t>(strides).drop_back(), [&](int64_t s) {
      return !ShapedType::isDynamic(s) && s % width == 0;
    });
  }

  /// A `rows` x `cols` tile of input `input` of `op` staged by the block's
  /// threads: row r's element c read at `loopsAt(r, c)` where `validAt(r)`,
  /// else 0, converted to `type`, handed to `store(value, r, c)`. Where the
  /// input allows (stagesVectors), each thread reads 16 bytes (aligned
  /// vector loads: ld.global.v4) and `store` gets the vector of the elements
  /// at c, c + 1, ...; else one element at a time.
  void stageOperand(
      OpBuilder &b, Value tid, Value threads, int64_t rows, int64_t cols,
      linalg::GenericOp op, unsigned input, unsigned colLoop, Type type,
      llvm::function_ref<SmallVector<Value>(OpBuilder &, Value, Value)> loopsAt,
      llvm::function_ref<Value(OpBuilder &, Value)> validAt,
      llvm::function_ref<void(OpBuilder &, Value, Value, Value)> store) {
    if (!stagesVectors(op, input, colLoop, type, cols)) {
      stage(b, tid, threads, rows, cols, [&](OpBuilder &b, Value r, Value c) {
        Value element =
            guardedNarrowLoad(b, validAt(b, r), type, [&](OpBuilder &b) {
              return loadOperand(b, op, input, loopsAt(b, r, c));
            });
        store(b, element, r, c);
      });
      return;
    }
    int64_t width = kStageBytes / (type.getIntOrFloatBitWidth() / 8);
    auto vectorType = VectorType::get({width}, type);
    stage(b, tid, threads, rows, cols / width,
          [&](OpBuilder &b, Value r, Value group) {
            Value c = arith::MulIOp::create(b, loc, group, index(b, width));
            auto choose =
                scf::IfOp::create(b, loc, vectorType, validAt(b, r), true);
            {
              OpBuilder::InsertionGuard guard(b);
              b.setInsertionPointToStart(&choose.getThenRegion().front());
              OpOperand *operand = op.getDpsInputOperand(input);
              auto read = vector::LoadOp::create(
                  b, loc, vectorType, operand->get(),
                  indicesOf(b, op.getMatchingIndexingMap(operand),
                            loopsAt(b, r, c)));
              read.setAlignment(kStageBytes);
              scf::YieldOp::create(b, loc, read.getResult());
              b.setInsertionPointToStart(&choose.getElseRegion().front());
              scf::YieldOp::create(
                  b, loc,
                  arith::ConstantOp::create(
                      b, loc, cast<TypedAttr>(b.getZeroAttr(vectorType)))
                      .getResult());
            }
            store(b, choose.getResult(0), r, c);
          });
  }

  /// `value` folded over the quad of lanes holding the same rows of an
  /// mma.sync fragment (lanes 4g .. 4g + 3).
  Value quadReduce(OpBuilder &b, Value value, gpu::AllReduceOperation kind) {
    return butterfly(b, value, kind, {1, 2});
  }

  Value index(OpBuilder &b, int64_t v) {
    return arith::ConstantIndexOp::create(b, loc, v);
  }
  Value zero(OpBuilder &b) { return index(b, 0); }

  Value widen(OpBuilder &b, Value v) {
    return v.getType() == f32
               ? v
               : arith::ExtFOp::create(b, loc, f32, v).getResult();
  }
  Value narrow(OpBuilder &b, Value v, Type type) {
    return type == f32 ? v
                       : arith::TruncFOp::create(b, loc, type, v).getResult();
  }

  /// The lane's `c`-th feature, clamped to the last (its value unused
  /// past it).
  Value clampedFeature(OpBuilder &b, Value lane, int64_t c) {
    Value feature = arith::AddIOp::create(b, loc, lane, index(b, 32 * c));
    return arith::MinUIOp::create(b, loc, feature, index(b, features - 1));
  }

  /// Every element of a `rows` x `cols` tile, spread over the block's
  /// threads in order (consecutive threads, consecutive columns).
  void stage(OpBuilder &b, Value tid, Value threads, int64_t rows, int64_t cols,
             llvm::function_ref<void(OpBuilder &, Value, Value)> element) {
    auto loop = scf::ForOp::create(b, loc, tid, index(b, rows * cols), threads);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    Value i = loop.getInductionVar();
    Value c = index(b, cols);
    element(b, arith::DivUIOp::create(b, loc, i, c),
            arith::RemUIOp::create(b, loc, i, c));
  }

  /// `load` widened to f32 where `valid`, else 0.
  Value guardedLoad(OpBuilder &b, Value valid,
                    llvm::function_ref<Value(OpBuilder &)> load) {
    auto choose = scf::IfOp::create(b, loc, f32, valid, true);
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(&choose.getThenRegion().front());
    scf::YieldOp::create(b, loc, widen(b, load(b)));
    b.setInsertionPointToStart(&choose.getElseRegion().front());
    scf::YieldOp::create(
        b, loc,
        arith::ConstantOp::create(b, loc, b.getF32FloatAttr(0)).getResult());
    return choose.getResult(0);
  }

  /// The scores' coordinates for query `row` and key `key`: the block's
  /// batch indices, then those two.
  SmallVector<Value> scoreCoords(Value row, Value key) {
    SmallVector<Value> c = coords;
    c[att.queryDim] = row;
    c[rank - 1] = key;
    return c;
  }

  /// The scores contraction's loop values at (row, key), head element `d`.
  SmallVector<Value> scoresLoops(OpBuilder &, Value row, Value key, Value d) {
    linalg::GenericOp qk = att.scores.op;
    AffineMap out = qk.getMatchingIndexingMap(qk.getDpsInitOperand(0));
    SmallVector<Value> loops(qk.getNumLoops());
    SmallVector<Value> c = scoreCoords(row, key);
    for (unsigned i = 0; i < rank; ++i)
      loops[loopOf(out, i)] = c[i];
    loops[att.scores.reduction] = d;
    return loops;
  }

  /// The weighted sum's loop values at (row, key), feature `e`.
  SmallVector<Value> weightedLoops(OpBuilder &, Value row, Value key, Value e) {
    linalg::GenericOp pv = att.weighted.op;
    AffineMap p =
        pv.getMatchingIndexingMap(pv.getDpsInputOperand(att.probInput));
    SmallVector<Value> loops(pv.getNumLoops());
    SmallVector<Value> c = scoreCoords(row, key);
    for (unsigned i = 0; i < rank; ++i)
      loops[loopOf(p, i)] = c[i];
    loops[att.featureLoop] = e;
    return loops;
  }

  /// The indices `map` gives at `loops` (a projected permutation).
  static SmallVector<Value> indicesOf(OpBuilder &, AffineMap map,
                                      ArrayRef<Value> loops) {
    SmallVector<Value> indices;
    for (unsigned i = 0; i < map.getNumResults(); ++i)
      indices.push_back(loops[loopOf(map, i)]);
    return indices;
  }

  Value loadOperand(OpBuilder &b, linalg::GenericOp op, unsigned input,
                    ArrayRef<Value> loops) {
    OpOperand *operand = op.getDpsInputOperand(input);
    return memref::LoadOp::create(
        b, loc, operand->get(),
        indicesOf(b, op.getMatchingIndexingMap(operand), loops));
  }

  /// sum over `count` of `body(i, acc)` from `init`, in a loop.
  Value reduceLoop(OpBuilder &b, int64_t count, Value init,
                   llvm::function_ref<Value(OpBuilder &, Value, Value)> body) {
    auto loop = scf::ForOp::create(b, loc, zero(b), index(b, count),
                                   index(b, 1), ValueRange{init});
    OpBuilder::InsertionGuard guard(b);
    b.setInsertionPointToStart(loop.getBody());
    scf::YieldOp::create(
        b, loc, body(b, loop.getInductionVar(), loop.getRegionIterArgs()[0]));
    return loop.getResult(0);
  }

  /// `value` folded over the warp's 32 lanes.
  Value warpReduce(OpBuilder &b, Value value, gpu::AllReduceOperation kind) {
    return butterfly(b, value, kind, {16, 8, 4, 2, 1});
  }

  /// `value` folded (summed, or its maximum) with the lanes at each XOR
  /// offset of `offsets` in turn, by shuffles.
  Value butterfly(OpBuilder &b, Value value, gpu::AllReduceOperation kind,
                  ArrayRef<int64_t> offsets) {
    Value width = arith::ConstantIntOp::create(b, loc, 32, 32);
    for (int64_t offset : offsets) {
      Value partner =
          gpu::ShuffleOp::create(
              b, loc, value, arith::ConstantIntOp::create(b, loc, offset, 32),
              width, gpu::ShuffleMode::XOR)
              .getShuffleResult();
      value =
          kind == gpu::AllReduceOperation::ADD
              ? arith::AddFOp::create(b, loc, value, partner).getResult()
              : arith::MaxNumFOp::create(b, loc, value, partner).getResult();
    }
    return value;
  }

  ArrayRef<int64_t> scoresShape() {
    return cast<MemRefType>(att.scores.op.getDpsInits()[0].getType())
        .getShape();
  }

  /// The scores' dimensions (rank, queries, keys) and the contractions'
  /// (head dimension, features) into the builder; returns the batch size.
  int64_t readShapes() {
    ArrayRef<int64_t> shape = scoresShape();
    rank = shape.size();
    queries = shape[att.queryDim];
    keys = shape[rank - 1];
    headDim = att.scores.op.getStaticLoopRanges()[att.scores.reduction];
    features = att.weighted.op.getStaticLoopRanges()[att.featureLoop];
    int64_t batches = 1;
    for (unsigned d : att.batchDims)
      batches *= shape[d];
    return batches;
  }

  /// The block's batch indices (row-major over the batch dimensions, into
  /// `coords`) and its first query row, for `tiles` blocks of `rows`
  /// queries per batch index.
  Value blockStart(OpBuilder &b, gpu::LaunchOp launch, int64_t tiles,
                   int64_t rows) {
    ArrayRef<int64_t> shape = scoresShape();
    Value block = launch.getBlockIds().x;
    Value tile = arith::RemUIOp::create(b, loc, block, index(b, tiles));
    Value batch = arith::DivUIOp::create(b, loc, block, index(b, tiles));
    coords.assign(rank, Value());
    for (unsigned d : llvm::reverse(att.batchDims)) {
      Value size = index(b, shape[d]);
      coords[d] = arith::RemUIOp::create(b, loc, batch, size);
      batch = arith::DivUIOp::create(b, loc, batch, size);
    }
    return arith::MulIOp::create(b, loc, tile, index(b, rows));
  }

  /// The score at (row, key) after the pointwise ops: the dot product
  /// rounded as the scores are stored, then each op's body on it and its
  /// other operands (read at the clamped row and key, so that no load is
  /// out of bounds; the score of an invalid one is discarded).
  Value transform(OpBuilder &b, Value dot, Value row, Value key) {
    Type scoreType = cast<MemRefType>(att.scores.op.getDpsInits()[0].getType())
                         .getElementType();
    Value score = narrow(b, dot, scoreType);
    if (att.transforms.empty())
      return widen(b, score);
    Value clampedRow =
        arith::MinUIOp::create(b, loc, row, index(b, queries - 1));
    Value clampedKey = arith::MinUIOp::create(b, loc, key, index(b, keys - 1));
    SmallVector<Value> c = scoreCoords(clampedRow, clampedKey);
    Value current = att.scores.op.getDpsInits()[0];
    for (linalg::GenericOp t : att.transforms) {
      IRMapping mapping;
      Block *body = t.getBlock();
      for (OpOperand *in : t.getDpsInputOperands()) {
        BlockArgument arg = body->getArgument(in->getOperandNumber());
        if (in->get() == current) {
          mapping.map(arg, score);
          continue;
        }
        mapping.map(arg, memref::LoadOp::create(
                             b, loc, in->get(),
                             indicesOf(b, t.getMatchingIndexingMap(in), c)));
      }
      for (Operation &op : body->without_terminator()) {
        if (auto idx = dyn_cast<linalg::IndexOp>(op)) {
          mapping.map(idx.getResult(), c[idx.getDim()]);
          continue;
        }
        b.clone(op, mapping);
      }
      score = mapping.lookupOrDefault(
          cast<linalg::YieldOp>(body->getTerminator()).getValues()[0]);
      current = t.getDpsInits()[0];
    }
    return widen(b, score);
  }

  /// What the kernel moves and computes, for tp-report-kernels: the
  /// queries, keys, values, output and the pointwise ops' other operands
  /// (not the scores), the two contractions' multiply-adds and every op of
  /// the pointwise and softmax bodies per score.
  void setCost(gpu::LaunchOp launch) {
    llvm::SetVector<Value> buffers;
    linalg::GenericOp qk = att.scores.op, pv = att.weighted.op;
    for (Value v : {qk.getDpsInputs()[0], qk.getDpsInputs()[1],
                    pv.getDpsInputs()[1 - att.probInput], pv.getDpsInits()[0]})
      buffers.insert(v);
    for (linalg::GenericOp t : att.transforms)
      for (Value in : t.getDpsInputs())
        if (!att.internal.contains(in) && in != qk.getDpsInits()[0])
          buffers.insert(in);
    int64_t bytes = 0;
    for (Value buffer : buffers)
      bytes +=
          tp::staticByteSize(cast<MemRefType>(buffer.getType())).value_or(0);
    auto points = [](linalg::GenericOp op) {
      int64_t n = 1;
      for (int64_t r : op.getStaticLoopRanges())
        n *= r;
      return n;
    };
    int64_t scores = 1;
    for (int64_t s : cast<MemRefType>(qk.getDpsInits()[0].getType()).getShape())
      scores *= s;
    int64_t perScore = 6; // max, exp, sum, rescale, divide (amortized)
    for (linalg::GenericOp t : att.transforms)
      perScore += t.getBlock()->getOperations().size() - 1;
    int64_t contractions = 2 * points(qk) + 2 * points(pv);
    int64_t flops = contractions + perScore * scores;
    Builder b(launch.getContext());
    SmallVector<NamedAttribute> cost = {
        b.getNamedAttr("bytes", b.getI64IntegerAttr(bytes)),
        b.getNamedAttr("flops", b.getI64IntegerAttr(flops)),
        b.getNamedAttr("ops", b.getI64IntegerAttr(
                                  llvm::count_if(att.ops, [](Operation *op) {
                                    return isa<linalg::GenericOp>(op);
                                  })))};
    if (att.tensorCores)
      cost.push_back(
          b.getNamedAttr("tensor_flops", b.getI64IntegerAttr(contractions)));
    launch->setAttr("tp.cost", b.getDictionaryAttr(cost));
  }

  Attention &att;
  Location loc;
  Type f32;
  unsigned rank = 0;
  int64_t queries = 0, keys = 0, headDim = 0, features = 0, chunks = 0;
  Value qs, ks, vs, ps;
  SmallVector<Value> coords;
};

int64_t bytesOf(Value buffer) {
  return tp::staticByteSize(cast<MemRefType>(buffer.getType())).value_or(0);
}

int64_t pointsOf(linalg::GenericOp op) {
  int64_t n = 1;
  for (int64_t r : op.getStaticLoopRanges())
    n *= r;
  return n;
}

/// A kernel launch's cost on the host and in the GPU's front end, as the
/// model takes it (a CUDA graph replays launches at about this rate).
constexpr double kLaunchSeconds = 2e-6;

/// The attention's time as one kernel against the unfused path's, on
/// `machine` at the program's matmul precision: the kernel's multiply-adds
/// on tensor cores (16-bit operands the mma.sync kernel takes) or the CUDA
/// cores, and its softmax on the CUDA cores, against the two GEMMs at
/// their rate (16-bit inputs, TF32 or bf16 at `high`/`medium`, on tensor
/// cores), the scores written, read and written by the softmax and read
/// again, and the launches of the GEMMs' calls and the softmax.
bool fusionPays(Attention &att, const tp::MachineModel &machine,
                StringRef precision) {
  linalg::GenericOp qk = att.scores.op, pv = att.weighted.op;
  // Contractions no GEMM call can take would run as loops: the kernel
  // always beats them.
  std::optional<tp::Gemm> qkGemm = tp::matchGemm(qk),
                          pvGemm = tp::matchGemm(pv);
  if (!qkGemm || !pvGemm)
    return true;
  Value scores = qk.getDpsInits()[0];
  double io = 0;
  for (Value v : {qk.getDpsInputs()[0], qk.getDpsInputs()[1],
                  pv.getDpsInputs()[1 - att.probInput], pv.getDpsInits()[0]})
    io += bytesOf(v);
  double gemmFlops = 2.0 * (pointsOf(qk) + pointsOf(pv));
  double scoreCount = static_cast<double>(pointsOf(qk)) /
                      qk.getStaticLoopRanges()[att.scores.reduction];
  double kernelRate =
      att.tensorCores ? machine.gemmFlops16 : machine.gemmFlops32;
  double fused =
      std::max(machine.memorySeconds(io),
               gemmFlops / kernelRate + 8 * scoreCount / machine.gemmFlops32) +
      kLaunchSeconds;
  Type element =
      cast<MemRefType>(qk.getDpsInputs()[0].getType()).getElementType();
  double gemmRate = element.getIntOrFloatBitWidth() <= 16 ? machine.gemmFlops16
                    : precision == "high"   ? machine.gemmFlops16 / 2
                    : precision == "medium" ? machine.gemmFlops16
                                            : machine.gemmFlops32;
  // The GEMMs' calls (grouped-query attention's make one per batch loop
  // beyond two: its batch's) and the softmax's kernel.
  double launches = qkGemm->calls() + pvGemm->calls() + 1;
  double unfused = gemmFlops / gemmRate +
                   machine.memorySeconds(io + 4.0 * bytesOf(scores)) +
                   launches * kLaunchSeconds;
  return fused < unfused;
}

struct FuseAttentionPass
    : public tp::impl::FuseAttentionPassBase<FuseAttentionPass> {
  using Base::Base;

  void runOnOperation() override {
    std::string error;
    std::optional<tp::MachineModel> machine =
        tp::MachineModel::load(costModel, error);
    if (!machine) {
      getOperation().emitError() << "tp-fuse-attention: " << error;
      return signalPassFailure();
    }
    if (matmulPrecision != "highest" && matmulPrecision != "high" &&
        matmulPrecision != "medium") {
      getOperation().emitError()
          << "tp-fuse-attention: matmul precision '" << matmulPrecision
          << "' is not one of highest, high, medium";
      return signalPassFailure();
    }
    SmallVector<linalg::GenericOp> candidates;
    getOperation()->walk([&](linalg::GenericOp op) {
      if (!op->getParentOfType<gpu::LaunchOp>())
        candidates.push_back(op);
    });
    llvm::SmallPtrSet<Operation *, 32> erased;
    Matcher matcher;
    for (linalg::GenericOp op : candidates) {
      if (erased.contains(op))
        continue;
      std::optional<Attention> att = matcher.match(op);
      if (!att)
        continue;
      att->tensorCores = tensorCores && KernelBuilder::fitsTensorCores(*att);
      if (!fusionPays(*att, *machine, matmulPrecision))
        continue;
      KernelBuilder(*att).build();
      // The replaced ops, then the buffers only they used (and their frees).
      for (Operation *replaced : llvm::reverse(att->ops)) {
        erased.insert(replaced);
        replaced->erase();
      }
      for (Value buffer : att->internal) {
        for (Operation *user : llvm::make_early_inc_range(buffer.getUsers()))
          user->erase();
        buffer.getDefiningOp()->erase();
      }
    }
  }
};

} // namespace
