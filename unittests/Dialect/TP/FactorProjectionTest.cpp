//===- FactorProjectionTest.cpp - Shardings seen as factor shardings ------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/FactorProjection.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

class FactorProjectionTest : public ::testing::Test {
protected:
  /// Axis names from the context, as propagation sees them (uniqued).
  StringRef axis(StringRef name) {
    return StringAttr::get(&context, name).getValue();
  }
  TensorSharding sharding(std::initializer_list<AxisList> dims,
                          AxisList partial = {}) {
    TensorSharding s;
    s.dims.assign(dims.begin(), dims.end());
    s.partial = partial;
    return s;
  }

  MLIRContext context;
  StringRef x = axis("x"), y = axis("y"), tp = axis("tp");
  /// A 2 x 4 mesh ("x" = 2, "y" = 4) that also has "tp" = 4.
  MeshAxes mesh{{{x, 2}, {y, 4}, {tp, 4}}};
};

/// matmul (i, k), (k, j) -> (i, j) over 16 x 512 x 2048.
struct Matmul {
  ShardingRule rule;
  int64_t i, j, k;
  Matmul() {
    i = rule.addFactor(16, FactorKind::Parallel);
    j = rule.addFactor(2048, FactorKind::Parallel);
    k = rule.addFactor(512, FactorKind::Reduction);
    rule.getOperands().push_back({{i}, {k}});
    rule.getOperands().push_back({{k}, {j}});
    rule.getResults().push_back({{i}, {j}});
  }
};

TEST_F(FactorProjectionTest, ColumnSplitWeightSplitsTheOutputFactor) {
  Matmul mm;
  FactorProjection p = projectSharding(sharding({{}, {tp}}),
                                       mm.rule.getOperands()[1], mm.rule, mesh);
  EXPECT_TRUE(p.complete);
  ASSERT_EQ(p.factors.size(), 3u);
  EXPECT_TRUE(p.factors[mm.i].empty());
  EXPECT_EQ(p.factors[mm.j], AxisList({tp}));
  EXPECT_TRUE(p.factors[mm.k].empty());
}

TEST_F(FactorProjectionTest, SplitReductionMakesResultsPending) {
  Matmul mm;
  SmallVector<AxisList> decision(3);
  decision[mm.k] = {tp};
  FailureOr<TensorSharding> result = composeSharding(
      mm.rule.getResults()[0], mm.rule, decision, /*isResult=*/true, mesh);
  ASSERT_TRUE(succeeded(result));
  EXPECT_EQ(*result, sharding({{}, {}}, {tp}));
  // Operands split the contraction instead.
  FailureOr<TensorSharding> lhs = composeSharding(
      mm.rule.getOperands()[0], mm.rule, decision, /*isResult=*/false, mesh);
  ASSERT_TRUE(succeeded(lhs));
  EXPECT_EQ(*lhs, sharding({{}, {tp}}));
}

/// A collapsed dimension [a * b] with a = 2, b = 8.
struct Collapsed {
  ShardingRule rule;
  int64_t a, b;
  Collapsed() {
    a = rule.addFactor(2, FactorKind::Parallel);
    b = rule.addFactor(8, FactorKind::Parallel);
    rule.getOperands().push_back({{a, b}});
    rule.getResults().push_back({{a}, {b}});
  }
};

TEST_F(FactorProjectionTest, MergedDimensionSplitsMajorFactorFirst) {
  Collapsed c;
  // "x" (2) splits a down to single elements; "y" (4) then splits b.
  FactorProjection p = projectSharding(sharding({{x, y}}),
                                       c.rule.getOperands()[0], c.rule, mesh);
  EXPECT_TRUE(p.complete);
  EXPECT_EQ(p.factors[c.a], AxisList({x}));
  EXPECT_EQ(p.factors[c.b], AxisList({y}));
}

TEST_F(FactorProjectionTest, StridedSplitIsLeftOut) {
  Collapsed c;
  // "y" (4) does not divide a (2): the block would span both factors.
  FactorProjection p =
      projectSharding(sharding({{y}}), c.rule.getOperands()[0], c.rule, mesh);
  EXPECT_FALSE(p.complete);
  EXPECT_TRUE(p.factors[c.a].empty());
  EXPECT_TRUE(p.factors[c.b].empty());
}

TEST_F(FactorProjectionTest, MinorFactorAloneCannotBeComposed) {
  Collapsed c;
  SmallVector<AxisList> decision(2);
  decision[c.b] = {y};
  // The result's own dimension [b] can hold it; the merged operand cannot.
  EXPECT_TRUE(succeeded(
      composeSharding(c.rule.getResults()[0], c.rule, decision, true, mesh)));
  EXPECT_TRUE(failed(
      composeSharding(c.rule.getOperands()[0], c.rule, decision, false, mesh)));
  const ShardingRule::TensorFactors *tensors[] = {&c.rule.getOperands()[0],
                                                  &c.rule.getResults()[0]};
  EXPECT_TRUE(trimToBlockSplits(tensors, c.rule, decision, mesh));
  EXPECT_TRUE(decision[c.b].empty());
  // Once a is split whole, b may be split too.
  decision[c.a] = {x};
  decision[c.b] = {y};
  EXPECT_FALSE(trimToBlockSplits(tensors, c.rule, decision, mesh));
  FailureOr<TensorSharding> merged =
      composeSharding(c.rule.getOperands()[0], c.rule, decision, false, mesh);
  ASSERT_TRUE(succeeded(merged));
  EXPECT_EQ(*merged, sharding({{x, y}}));
}

TEST_F(FactorProjectionTest, DynamicFactorKeepsItsAxes) {
  ShardingRule rule;
  int64_t d = rule.addFactor(ShapedType::kDynamic, FactorKind::Parallel);
  int64_t e = rule.addFactor(3, FactorKind::Parallel);
  rule.getOperands().push_back({{d, e}});
  FactorProjection p =
      projectSharding(sharding({{x, y}}), rule.getOperands()[0], rule, mesh);
  EXPECT_TRUE(p.complete);
  EXPECT_EQ(p.factors[d], AxisList({x, y}));
  EXPECT_TRUE(p.factors[e].empty());
}

TEST_F(FactorProjectionTest, ExtendsOnlyAddsAxes) {
  EXPECT_TRUE(extendsSharding(sharding({{}, {}}), sharding({{}, {tp}})));
  EXPECT_TRUE(extendsSharding(sharding({{x}, {}}), sharding({{x, y}, {}})));
  EXPECT_FALSE(extendsSharding(sharding({{x}, {}}), sharding({{y}, {}})));
  EXPECT_FALSE(extendsSharding(sharding({{x}}), sharding({{x}})));
  EXPECT_FALSE(extendsSharding(sharding({{}}, {tp}), sharding({{}}, {x})));
  EXPECT_FALSE(extendsSharding(sharding({{}}), sharding({{}, {}})));
}

TEST_F(FactorProjectionTest, LocalBytesDivideBySplits) {
  auto type = RankedTensorType::get({16, 512}, Float32Type::get(&context));
  EXPECT_DOUBLE_EQ(localBytes(type, sharding({{}, {}}), mesh), 16 * 512 * 4);
  EXPECT_DOUBLE_EQ(localBytes(type, sharding({{x}, {tp}}), mesh),
                   16 * 512 * 4 / 8);
}

TEST_F(FactorProjectionTest, KeysTellShardingsApart) {
  auto key = [](const TensorSharding &s) {
    SmallVector<const void *> k;
    s.appendKey(k);
    return k;
  };
  // The same axes in one dimension or two, split or pending.
  EXPECT_NE(key(sharding({{x, y}, {}})), key(sharding({{x}, {y}})));
  EXPECT_NE(key(sharding({{x}, {}})), key(sharding({{}, {}}, {x})));
  EXPECT_EQ(key(sharding({{x}, {y}})), key(sharding({{axis("x")}, {y}})));
}

} // namespace
