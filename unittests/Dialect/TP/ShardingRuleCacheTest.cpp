//===- ShardingRuleCacheTest.cpp - Rules shared by structure --------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

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

/// Ops of the function @f, in order, without the terminator.
SmallVector<Operation *> opsOf(ModuleOp module) {
  SmallVector<Operation *> ops;
  auto f = cast<func::FuncOp>(SymbolTable::lookupSymbolIn(module, "f"));
  for (Operation &op : f.getBody().front().without_terminator())
    ops.push_back(&op);
  return ops;
}

class ShardingRuleCacheTest : public ::testing::Test {
protected:
  ShardingRuleCacheTest() {
    DialectRegistry registry;
    registerShardingRuleModels(registry);
    context.appendDialectRegistry(registry);
    context.loadDialect<TPDialect, func::FuncDialect, tensor::TensorDialect,
                        linalg::LinalgDialect, arith::ArithDialect>();
  }
  MLIRContext context;
};

TEST_F(ShardingRuleCacheTest, SameStructureSharesOneRule) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
    func.func @f(%a: tensor<4x8xf32>, %b: tensor<8x2xf32>, %c: tensor<4x2xf32>,
                 %d: tensor<4x8xf32>, %e: tensor<8x6xf32>, %g: tensor<4x6xf32>) {
      %0 = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x2xf32>)
                         outs(%c : tensor<4x2xf32>) -> tensor<4x2xf32>
      %1 = linalg.matmul ins(%d, %b : tensor<4x8xf32>, tensor<8x2xf32>)
                         outs(%0 : tensor<4x2xf32>) -> tensor<4x2xf32>
      %2 = linalg.matmul ins(%a, %e : tensor<4x8xf32>, tensor<8x6xf32>)
                         outs(%g : tensor<4x6xf32>) -> tensor<4x6xf32>
      return
    }
  )mlir",
                                                             &context);
  ASSERT_TRUE(module);
  SmallVector<Operation *> ops = opsOf(*module);
  ShardingRuleCache cache;
  const ShardingRule *first = cache.get(ops[0]);
  ASSERT_NE(first, nullptr);
  // Other operands, same types: the same rule object.
  EXPECT_EQ(cache.get(ops[1]), first);
  // Other shapes: another rule, with the other sizes.
  const ShardingRule *other = cache.get(ops[2]);
  ASSERT_NE(other, nullptr);
  EXPECT_NE(other, first);
  EXPECT_EQ(other->str(), getShardingRule(ops[2])->str());
  EXPECT_EQ(first->str(), getShardingRule(ops[1])->str());
}

TEST_F(ShardingRuleCacheTest, BodiesTellReductionsApart) {
  // Same maps, iterators and types; one body sums, one takes the maximum (a
  // split max is not a pending sum), one adds an input to itself.
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
    #in = affine_map<(i, j) -> (i, j)>
    #out = affine_map<(i, j) -> (i)>
    func.func @f(%x: tensor<4x8xf32>, %acc: tensor<4xf32>) {
      %0 = linalg.generic {indexing_maps = [#in, #out],
                           iterator_types = ["parallel", "reduction"]}
          ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
      ^bb0(%v: f32, %a: f32):
        %s = arith.addf %v, %a : f32
        linalg.yield %s : f32
      } -> tensor<4xf32>
      %1 = linalg.generic {indexing_maps = [#in, #out],
                           iterator_types = ["parallel", "reduction"]}
          ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
      ^bb0(%v: f32, %a: f32):
        %s = arith.maximumf %v, %a : f32
        linalg.yield %s : f32
      } -> tensor<4xf32>
      %2 = linalg.generic {indexing_maps = [#in, #out],
                           iterator_types = ["parallel", "reduction"]}
          ins(%x : tensor<4x8xf32>) outs(%acc : tensor<4xf32>) {
      ^bb0(%v: f32, %a: f32):
        %s = arith.addf %v, %v : f32
        linalg.yield %s : f32
      } -> tensor<4xf32>
      %3 = linalg.generic {indexing_maps = [#in, #out],
                           iterator_types = ["parallel", "reduction"]}
          ins(%x : tensor<4x8xf32>) outs(%0 : tensor<4xf32>) {
      ^bb0(%w: f32, %b: f32):
        %t = arith.addf %w, %b : f32
        linalg.yield %t : f32
      } -> tensor<4xf32>
      return
    }
  )mlir",
                                                             &context);
  ASSERT_TRUE(module);
  SmallVector<Operation *> ops = opsOf(*module);
  ShardingRuleCache cache;
  const ShardingRule *sum = cache.get(ops[0]);
  const ShardingRule *max = cache.get(ops[1]);
  const ShardingRule *doubled = cache.get(ops[2]);
  ASSERT_TRUE(sum && max && doubled);
  EXPECT_NE(sum, max);
  EXPECT_NE(sum, doubled);
  EXPECT_EQ(sum->getFactorKind(1), FactorKind::Reduction);
  EXPECT_EQ(max->getFactorKind(1), FactorKind::NeedReplication);
  EXPECT_EQ(doubled->getFactorKind(1), FactorKind::NeedReplication);
  // The same body with other names and another init value: shared.
  EXPECT_EQ(cache.get(ops[3]), sum);
}

TEST_F(ShardingRuleCacheTest, OpsWithoutRulesGetNull) {
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(R"mlir(
    func.func @f(%x: tensor<4x8xf32>) {
      %c0 = arith.constant 0 : index
      %0 = tensor.dim %x, %c0 : tensor<4x8xf32>
      return
    }
  )mlir",
                                                             &context);
  ASSERT_TRUE(module);
  SmallVector<Operation *> ops = opsOf(*module);
  ShardingRuleCache cache;
  EXPECT_EQ(cache.get(ops[1]), nullptr);
}

} // namespace
