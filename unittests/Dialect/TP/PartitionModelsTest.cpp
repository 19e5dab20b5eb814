//===- PartitionModelsTest.cpp - Every ruled op can be partitioned --------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/Partitioning.h"

#include "tp/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

/// Propagation may split any op that has a sharding rule; partitioning must
/// then know how that op computes on its shard. A rule without a
/// partitioning model would only fail when a user's program splits the op.
TEST(PartitionModelsTest, EveryOpWithARuleHasAPartitionModel) {
  DialectRegistry registry;
  registerAllDialects(registry);
  MLIRContext context(registry);
  context.loadAllAvailableDialects();
  unsigned ruled = 0;
  for (RegisteredOperationName name : context.getRegisteredOperations()) {
    if (!name.hasInterface<ShardingRuleOpInterface>())
      continue;
    ++ruled;
    EXPECT_TRUE(name.hasInterface<PartitionableOpInterface>())
        << name.getStringRef().str()
        << " has a sharding rule but no partitioning model";
  }
  // linalg, arith, math and tensor ops at least.
  EXPECT_GT(ruled, 100u);
  // The constraints become collectives.
  for (StringRef op : {"tp.annotate", "tp.reshard", "tensor.dim"})
    EXPECT_TRUE(RegisteredOperationName::lookup(op, &context)
                    ->hasInterface<PartitionableOpInterface>())
        << op.str();
}

} // namespace
