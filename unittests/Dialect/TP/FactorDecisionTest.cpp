//===- FactorDecisionTest.cpp - Choosing how an op's factors split --------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/FactorDecision.h"

#include "tp/Dialect/TP/IR/TPInterfaces.h"
#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

class FactorDecisionTest : public ::testing::Test {
protected:
  FactorDecisionTest() {
    DialectRegistry registry;
    registerShardingRuleModels(registry);
    context.appendDialectRegistry(registry);
    context.loadDialect<TPDialect, func::FuncDialect, tensor::TensorDialect,
                        linalg::LinalgDialect, arith::ArithDialect>();
    // The MLP of Megatron-LM: x [16, 512] x w1 [512, 2048] x w2 [2048, 512].
    module = parseSourceString<ModuleOp>(R"mlir(
      func.func @f(%x: tensor<16x512xf32>, %w1: tensor<512x2048xf32>,
                   %a1: tensor<16x2048xf32>, %w2: tensor<2048x512xf32>,
                   %a2: tensor<16x512xf32>) {
        %h = linalg.matmul ins(%x, %w1 : tensor<16x512xf32>, tensor<512x2048xf32>)
                           outs(%a1 : tensor<16x2048xf32>) -> tensor<16x2048xf32>
        %y = linalg.matmul ins(%h, %w2 : tensor<16x2048xf32>, tensor<2048x512xf32>)
                           outs(%a2 : tensor<16x512xf32>) -> tensor<16x512xf32>
        return
      }
    )mlir",
                                         &context);
    auto f = cast<func::FuncOp>(SymbolTable::lookupSymbolIn(*module, "f"));
    for (Operation &op : f.getBody().front().without_terminator())
      ops.push_back(&op);
  }

  StringRef axis(StringRef name) {
    return StringAttr::get(&context, name).getValue();
  }
  TensorSharding split(unsigned rank, unsigned dim, StringRef a) {
    TensorSharding s = TensorSharding::replicated(rank);
    s.dims[dim].push_back(a);
    return s;
  }
  /// The tensors of `op` under `rule` with the given shardings (null:
  /// unknown), projected, as OpDecisions hands them to a decider.
  SmallVector<FactorTensor> tensorsOf(Operation *op, const ShardingRule &rule,
                                      ArrayRef<const TensorSharding *> given) {
    SmallVector<FactorTensor> tensors;
    SmallVector<const ShardingRule::TensorFactors *> factors;
    for (const auto &tf : rule.getOperands())
      factors.push_back(&tf);
    for (const auto &tf : rule.getResults())
      factors.push_back(&tf);
    SmallVector<Value> values(op->getOperands());
    llvm::append_range(values, op->getResults());
    for (auto [index, v] : llvm::enumerate(values)) {
      FactorTensor t;
      t.index = index;
      t.type = cast<RankedTensorType>(v.getType());
      t.factors = factors[index];
      t.sharding = given[index];
      t.isResult = index >= op->getNumOperands();
      if (t.sharding)
        t.projection = projectSharding(*t.sharding, *t.factors, rule, mesh);
      tensors.push_back(std::move(t));
    }
    return tensors;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  SmallVector<Operation *> ops;
  StringRef tp = axis("tp");
  MeshAxes mesh{{{tp, 4}}};
  CommunicationCostDecider decider;
  // Loops of linalg.matmul: (m, n, k).
  static constexpr int64_t kM = 0, kN = 1, kK = 2;
};

TEST_F(FactorDecisionTest, ColumnSplitWeightSplitsItsOutputLoop) {
  FailureOr<ShardingRule> rule = getShardingRule(ops[0]);
  ASSERT_TRUE(succeeded(rule));
  TensorSharding w1 = split(2, 1, tp);
  SmallVector<FactorTensor> tensors =
      tensorsOf(ops[0], *rule, {nullptr, &w1, nullptr, nullptr});
  FactorDecision d = decider.decide(*rule, tensors, mesh);
  EXPECT_EQ(d.axes[kN], AxisList({tp}));
  EXPECT_TRUE(d.axes[kM].empty());
  EXPECT_TRUE(d.axes[kK].empty());
  // The weight (operand #1) proposed it.
  EXPECT_EQ(d.sources[kN], 1);
  EXPECT_EQ(d.firstSource(), 1);
}

TEST_F(FactorDecisionTest, RowSplitWeightAfterColumnSplitReducesPartially) {
  FailureOr<ShardingRule> rule = getShardingRule(ops[1]);
  ASSERT_TRUE(succeeded(rule));
  // h arrives split over its features, w2 over its rows: both propose the
  // contraction loop; splitting it costs an all-reduce of the small result,
  // not gathering either.
  TensorSharding h = split(2, 1, tp), w2 = split(2, 0, tp);
  SmallVector<FactorTensor> tensors =
      tensorsOf(ops[1], *rule, {&h, &w2, nullptr, nullptr});
  FactorDecision d = decider.decide(*rule, tensors, mesh);
  EXPECT_EQ(d.axes[kK], AxisList({tp}));
  EXPECT_TRUE(d.axes[kM].empty());
  EXPECT_TRUE(d.axes[kN].empty());
}

TEST_F(FactorDecisionTest, AxisGoesToTheFactorThatLosesMostWithoutIt) {
  FailureOr<ShardingRule> rule = getShardingRule(ops[0]);
  ASSERT_TRUE(succeeded(rule));
  // x proposes "tp" for the contraction, w1 for the output columns: one axis
  // splits one factor. Gathering the 4 MiB weight costs more than gathering
  // the 32 KiB activation, so the weight keeps its split.
  TensorSharding x = split(2, 1, tp), w1 = split(2, 1, tp);
  SmallVector<FactorTensor> tensors =
      tensorsOf(ops[0], *rule, {&x, &w1, nullptr, nullptr});
  FactorDecision d = decider.decide(*rule, tensors, mesh);
  EXPECT_EQ(d.axes[kN], AxisList({tp}));
  EXPECT_TRUE(d.axes[kK].empty());
  EXPECT_LT(decider.cost(*rule, tensors, mesh, kN, {tp}),
            decider.cost(*rule, tensors, mesh, kN, {}));
}

TEST_F(FactorDecisionTest, OutcomesAreComposedAndMemoized) {
  FailureOr<ShardingRule> rule = getShardingRule(ops[1]);
  ASSERT_TRUE(succeeded(rule));
  OpDecisions decisions(decider, mesh);
  TensorSharding h = split(2, 1, tp), w2 = split(2, 0, tp);
  Value hValue = ops[1]->getOperand(0), w2Value = ops[1]->getOperand(1);
  auto lookup = [&](Value v, bool) -> const TensorSharding * {
    if (v == hValue)
      return &h;
    if (v == w2Value)
      return &w2;
    return nullptr;
  };
  const OpOutcome &outcome = decisions.decide(ops[1], *rule, lookup);
  ASSERT_EQ(outcome.results.size(), 1u);
  ASSERT_TRUE(outcome.results[0].has_value());
  TensorSharding pending = TensorSharding::replicated(2);
  pending.partial.push_back(tp);
  EXPECT_EQ(*outcome.results[0], pending);
  ASSERT_TRUE(outcome.operands[0].has_value());
  EXPECT_EQ(*outcome.operands[0], h);
  // The same shardings give the same outcome object.
  EXPECT_EQ(&decisions.decide(ops[1], *rule, lookup), &outcome);
  // Nothing known: every factor whole, nothing proposed.
  auto unknown = [](Value, bool) -> const TensorSharding * { return nullptr; };
  const OpOutcome &whole = decisions.decide(ops[1], *rule, unknown);
  EXPECT_NE(&whole, &outcome);
  EXPECT_EQ(whole.originSource, -1);
  for (const AxisList &axes : whole.decision.axes)
    EXPECT_TRUE(axes.empty());
}

} // namespace
