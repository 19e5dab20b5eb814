//===- FoldAddendsIntoGemm.cpp - A GEMM's sum starts from its bias --------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// PyTorch's nn.Linear runs addmm(bias, x, W): the GEMM's C starts as the bias
// and the kernel adds x W to it (beta = 1), as XLA's GEMM rewriter does with
// an add after a dot. A linalg program instead zeroes the accumulator, sums
// into it, then adds the bias in the next loop: C is zeroed, written, read
// back and written again. Here, on tensors after the fusion passes, the
// terms the consumer adds to the sum (a bias, a residual) move into a loop
// that initialises the accumulator, and the consumer loses those adds (and
// goes away when nothing else is left of it). tp-convert-gemm-to-blas then
// finds no zeroing fill and accumulates into C.
//
// A partial sum read through its all-reduce starts from the terms on the
// first member of the reduction's group only (zero elsewhere), so the
// all-reduce adds them once; a term moves there only where the variance
// analysis (tp/Dialect/TP/IR/Uniformity.h) shows it equal on every member.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "tp/Dialect/TP/IR/TPAttrs.h"
#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Dialect/TP/IR/Uniformity.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Dominance.h"
#include "mlir/IR/Matchers.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace mlir::tp {
#define GEN_PASS_DEF_FOLDADDENDSINTOGEMMPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// Whether `value` is a linalg.fill of a floating-point zero.
bool isZeroFill(Value value) {
  auto fill = value.getDefiningOp<linalg::FillOp>();
  if (!fill)
    return false;
  FloatAttr constant;
  return matchPattern(fill.getInputs()[0], m_Constant(&constant)) &&
         constant.getValue().isZero();
}

/// Whether `op` sums into its one init: its body yields `addf(init, x)`,
/// the init read nowhere else, over at least one reduction loop; then its
/// result is init + (the sum of the x), whatever the init holds.
bool sumsIntoInit(linalg::LinalgOp op) {
  if (op.getNumDpsInits() != 1 || op->getNumResults() != 1 ||
      op.getNumReductionLoops() == 0 || !op.hasPureTensorSemantics() ||
      op->getNumRegions() != 1)
    return false;
  Block *body = op.getBlock();
  BlockArgument acc = body->getArguments().back();
  auto yield = cast<linalg::YieldOp>(body->getTerminator());
  auto add = yield.getValues()[0].getDefiningOp<arith::AddFOp>();
  if (!add || !acc.hasOneUse() || add->getBlock() != body)
    return false;
  return (add.getLhs() == acc) != (add.getRhs() == acc);
}

/// One addend of the GEMM's result: an input of the consumer, read through
/// the consumer's indexing map (the GEMM result's index space).
struct Addend {
  Value value;
  AffineMap map;
};

struct FoldAddendsIntoGemmPass
    : public tp::impl::FoldAddendsIntoGemmPassBase<FoldAddendsIntoGemmPass> {
  using Base::Base;
  void runOnOperation() override {
    SmallVector<linalg::LinalgOp> sums;
    bool reduced = false;
    getOperation()->walk([&](linalg::LinalgOp op) {
      if (!sumsIntoInit(op) || !isZeroFill(op.getDpsInits()[0]))
        return;
      sums.push_back(op);
      reduced |= llvm::any_of(op->getUsers(), llvm::IsaPred<AllReduceOp>);
    });
    // Which addends are the same on every member of a reduction's group.
    VarianceInfo varianceInfo;
    if (reduced && succeeded(varianceInfo.run(getOperation())))
      variance = &varianceInfo;
    DominanceInfo dominanceInfo(getOperation());
    dominance = &dominanceInfo;
    for (linalg::LinalgOp sum : sums)
      fold(sum);
    variance = nullptr;
    dominance = nullptr;
    if (consumers.empty())
      return;
    RewritePatternSet patterns(&getContext());
    linalg::populateEraseUnusedOperandsAndResultsPatterns(patterns);
    GreedyRewriteConfig config;
    config.setStrictness(GreedyRewriteStrictness::ExistingOps);
    (void)applyOpPatternsGreedily(consumers, std::move(patterns), config);
    consumers.clear();
  }

  /// Moves what the single consumer of `sum`'s result (or of the all-reduce
  /// of it) adds to it into `sum`'s init.
  void fold(linalg::LinalgOp sum) {
    Value result = sum->getResult(0);
    auto type = dyn_cast<RankedTensorType>(result.getType());
    // f16/bf16 GEMMs accumulate on the CPU through a widened copy of C: a
    // nonzero C would cost a conversion where the zero one costs none.
    // cuBLAS reads C in its own type (`narrow`).
    Type element = type ? type.getElementType() : Type();
    if (!type || !type.hasStaticShape() ||
        !(element.isF32() ||
          (narrow && (element.isF16() || element.isBF16()))) ||
        !result.hasOneUse())
      return;
    // A partial sum: its all-reduce is what the consumer reads.
    auto reduce = dyn_cast<AllReduceOp>(*result.getUsers().begin());
    Value read = result;
    if (reduce) {
      if (!variance || reduce.getKind() != ReductionKind::Sum ||
          reduce.hasBufferSemantics() || reduce->getBlock() != sum->getBlock())
        return;
      read = reduce.getResult();
      if (!read.hasOneUse())
        return;
    }
    auto consumer = dyn_cast<linalg::GenericOp>(*read.getUsers().begin());
    if (!consumer || consumer.getNumLoops() != consumer.getNumParallelLoops() ||
        consumer.getNumLoops() != static_cast<unsigned>(type.getRank()))
      return;
    OpOperand *operand = &*read.getUses().begin();
    if (consumer->getBlock() != sum->getBlock() ||
        !consumer.isDpsInput(operand) ||
        !consumer.getMatchingIndexingMap(operand).isIdentity())
      return;
    BlockArgument value = consumer.getMatchingBlockArgument(operand);

    // Each add of an input of the consumer to the sum, in the order the
    // consumer adds them.
    SmallVector<Addend> addends;
    SmallVector<arith::AddFOp> adds;
    Value running = value;
    while (running.hasOneUse()) {
      auto add = dyn_cast<arith::AddFOp>(*running.getUsers().begin());
      if (!add || add->getBlock() != consumer.getBlock())
        break;
      Value other = add.getLhs() == running ? add.getRhs() : add.getLhs();
      auto arg = dyn_cast<BlockArgument>(other);
      if (other == running || !arg || arg.getOwner() != consumer.getBlock() ||
          arg.getArgNumber() >= consumer.getNumDpsInputs())
        break;
      OpOperand *input = consumer.getDpsInputOperand(arg.getArgNumber());
      // Added before the reduction, on one member of its group: the same
      // addend on every member, defined before the reduction.
      if (reduce &&
          (!variance->isUniformOver(input->get(), reduce.getMeshAttr(),
                                    getAxisNames(reduce.getAxes())) ||
           !dominance->properlyDominates(input->get(), reduce)))
        break;
      addends.push_back({input->get(), consumer.getMatchingIndexingMap(input)});
      adds.push_back(add);
      running = add.getResult();
    }
    if (addends.empty())
      return;
    running.replaceAllUsesWith(value);
    for (arith::AddFOp add : llvm::reverse(adds))
      add->erase();

    // The addends are defined before what the consumer reads, perhaps after
    // the sum: the sum (pure, read only there) moves down to it.
    auto fill = sum.getDpsInits()[0].getDefiningOp<linalg::FillOp>();
    sum->moveBefore(reduce ? reduce.getOperation() : consumer.getOperation());
    OpBuilder b(sum);
    Location loc = sum.getLoc();
    Value init;
    if (reduce) {
      init = initialOnFirstMember(b, loc, type, addends, reduce,
                                  fill.getInputs()[0]);
    } else if (addends.size() == 1 && addends[0].map.isIdentity() &&
               addends[0].value.getType() == type) {
      // One addend read whole is the init itself (bufferization writes over
      // it, or over a copy where it is read later).
      init = addends[0].value;
    } else {
      // The addends' sum, in the consumer's order.
      init = initialSum(b, loc,
                        tensor::EmptyOp::create(b, loc, type.getShape(),
                                                type.getElementType()),
                        addends);
    }
    sum.getDpsInitsMutable()[0].assign(init);
    if (fill->use_empty())
      fill->erase();

    // A consumer left copying the sum goes away; one left with other work
    // stops reading the addends.
    auto yield = cast<linalg::YieldOp>(consumer.getBlock()->getTerminator());
    if (consumer->getNumResults() == 1 &&
        consumer.getBody()->getOperations().size() == 1 &&
        yield.getValues()[0] == value &&
        consumer.getIndexingMapsArray().back().isIdentity() &&
        consumer.getResult(0).getType() == type) {
      consumer.getResult(0).replaceAllUsesWith(read);
      llvm::erase(consumers, consumer.getOperation());
      consumer->erase();
      return;
    }
    if (!llvm::is_contained(consumers, consumer.getOperation()))
      consumers.push_back(consumer);
  }

  /// A loop at `b` that writes the sum of `addends` into `empty`.
  static Value initialSum(OpBuilder &b, Location loc, Value empty,
                          ArrayRef<Addend> addends) {
    auto type = cast<RankedTensorType>(empty.getType());
    SmallVector<Value> inputs;
    SmallVector<AffineMap> maps;
    for (const Addend &addend : addends) {
      inputs.push_back(addend.value);
      maps.push_back(addend.map);
    }
    maps.push_back(b.getMultiDimIdentityMap(type.getRank()));
    SmallVector<utils::IteratorType> iterators(type.getRank(),
                                               utils::IteratorType::parallel);
    auto init = linalg::GenericOp::create(
        b, loc, type, inputs, ValueRange{empty}, maps, iterators,
        [&](OpBuilder &nested, Location nestedLoc, ValueRange args) {
          Value total = args[0];
          for (Value next : args.drop_front().drop_back())
            total = arith::AddFOp::create(nested, nestedLoc, total, next);
          linalg::YieldOp::create(nested, nestedLoc, total);
        });
    return init.getResult(0);
  }

  /// The partial sum's init: the addends' sum on the first member of the
  /// reduction's group, zero on the others (the all-reduce then adds the
  /// addends once). Both branches write one tensor, which bufferizes to one
  /// buffer allocated outside them.
  static Value initialOnFirstMember(OpBuilder &b, Location loc,
                                    RankedTensorType type,
                                    ArrayRef<Addend> addends,
                                    AllReduceOp reduce, Value zero) {
    Value empty =
        tensor::EmptyOp::create(b, loc, type.getShape(), type.getElementType());
    Value index = AxisIndexOp::create(b, loc, reduce.getMeshAttr().getValue(),
                                      getAxisNames(reduce.getAxes()));
    Value first =
        arith::CmpIOp::create(b, loc, arith::CmpIPredicate::eq, index,
                              arith::ConstantIndexOp::create(b, loc, 0));
    auto branch = scf::IfOp::create(b, loc, TypeRange{type}, first,
                                    /*withElseRegion=*/true);
    OpBuilder thenBuilder = branch.getThenBodyBuilder();
    scf::YieldOp::create(thenBuilder, loc,
                         initialSum(thenBuilder, loc, empty, addends));
    OpBuilder elseBuilder = branch.getElseBodyBuilder();
    Value zeroed =
        linalg::FillOp::create(elseBuilder, loc, zero, empty).getResult(0);
    scf::YieldOp::create(elseBuilder, loc, zeroed);
    return branch.getResult(0);
  }

  /// While some partial sum is reduced: the addends' variance.
  const VarianceInfo *variance = nullptr;
  /// While folding: whether an addend is defined before the all-reduce.
  DominanceInfo *dominance = nullptr;
  /// Consumers that kept other work: their unread inputs are dropped.
  SmallVector<Operation *> consumers;
};

} // namespace
