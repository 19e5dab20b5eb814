//===- ShardingTest.cpp - C++ API of meshes, shardings, collectives -------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

class ShardingTest : public ::testing::Test {
protected:
  ShardingTest() {
    context.loadDialect<TPDialect, func::FuncDialect, tensor::TensorDialect>();
    module = parseSourceString<ModuleOp>(R"mlir(
      tp.mesh @world ["tp" = 4]
      tp.mesh @grid ["dp" = 2, "tp" = 4]
      func.func @f(%x: tensor<16x512xf32>) -> tensor<16x512xf32> {
        return %x : tensor<16x512xf32>
      }
    )mlir",
                                         &context);
  }

  MeshOp mesh(StringRef name) {
    return cast<MeshOp>(SymbolTable::lookupSymbolIn(*module, name));
  }

  ShardingAttr parseSharding(StringRef text) {
    return cast<ShardingAttr>(parseAttribute(text, &context));
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(ShardingTest, MeshAxesAndDevices) {
  ASSERT_TRUE(module);
  MeshOp grid = mesh("grid");
  EXPECT_EQ(grid.getRank(), 2u);
  EXPECT_EQ(grid.getNumDevices(), 8);
  EXPECT_EQ(grid.getAxisIndex("tp"), 1u);
  EXPECT_EQ(grid.getAxisIndex("pp"), std::nullopt);
  EXPECT_EQ(grid.getAxisSize("dp"), 2);
  EXPECT_EQ(grid.getGroupSize(ArrayRef<StringRef>{"dp", "tp"}), 8);
  EXPECT_EQ(grid.getGroupSize(ArrayRef<StringRef>{}), 1);
}

TEST_F(ShardingTest, BuilderMatchesParsedForm) {
  auto world = FlatSymbolRefAttr::get(&context, "world");
  ShardingAttr built = ShardingAttr::get(&context, world, {{}, {"tp"}});
  EXPECT_EQ(built, parseSharding(R"(#tp.sharding<@world, [{}, {"tp"}]>)"));
  ShardingAttr partial =
      ShardingAttr::get(&context, world, {{}, {}}, ArrayRef<StringRef>{"tp"});
  EXPECT_EQ(
      partial,
      parseSharding(R"(#tp.sharding<@world, [{}, {}], partial = ["tp"]>)"));
  EXPECT_NE(built, partial);
}

TEST_F(ShardingTest, Queries) {
  ShardingAttr s =
      parseSharding(R"(#tp.sharding<@grid, [{"dp", "tp"}, {}], partial = []>)");
  EXPECT_EQ(s.getRank(), 2u);
  EXPECT_EQ(s.getDimAxes(0), (SmallVector<StringRef>{"dp", "tp"}));
  EXPECT_TRUE(s.getDimAxes(1).empty());
  EXPECT_FALSE(s.isPartial());
  EXPECT_FALSE(s.isFullyReplicated());
  EXPECT_TRUE(
      parseSharding(R"(#tp.sharding<@grid, [{}, {}]>)").isFullyReplicated());
  ShardingAttr p =
      parseSharding(R"(#tp.sharding<@grid, [{"dp"}, {}], partial = ["tp"]>)");
  EXPECT_TRUE(p.isPartial());
  EXPECT_FALSE(p.isFullyReplicated());
  EXPECT_EQ(p.getUsedAxes(), (SmallVector<StringRef>{"dp", "tp"}));
}

TEST_F(ShardingTest, ShardAndGlobalShapes) {
  ShardingAttr s =
      parseSharding(R"(#tp.sharding<@grid, [{"dp"}, {"tp"}, {}]>)");
  SmallVector<int64_t> global = {16, 512, ShapedType::kDynamic};
  SmallVector<int64_t> shard = getShardShape(global, s, mesh("grid"));
  EXPECT_EQ(shard, (SmallVector<int64_t>{8, 128, ShapedType::kDynamic}));
  EXPECT_EQ(getGlobalShape(shard, s, mesh("grid")), global);

  ShardingAttr both = parseSharding(R"(#tp.sharding<@grid, [{"tp", "dp"}]>)");
  EXPECT_EQ(getShardShape({64}, both, mesh("grid")), (SmallVector<int64_t>{8}));
}

TEST_F(ShardingTest, VerifyShardingForReportsTheBadDimension) {
  std::string message;
  ScopedDiagnosticHandler handler(&context, [&](Diagnostic &diag) {
    message = diag.str();
    return success();
  });
  Operation *func = &module->getBody()->back();
  auto emitError = [&]() { return func->emitError(); };
  ShardingAttr s = parseSharding(R"(#tp.sharding<@world, [{}, {"tp"}]>)");
  auto f32 = Float32Type::get(&context);

  EXPECT_TRUE(succeeded(verifyShardingFor(s, RankedTensorType::get({3, 8}, f32),
                                          func, false, emitError)));
  EXPECT_TRUE(message.empty());

  EXPECT_TRUE(failed(verifyShardingFor(s, RankedTensorType::get({3, 10}, f32),
                                       func, false, emitError)));
  EXPECT_NE(message.find("dimension 1 of size 10 is not divisible by 4"),
            std::string::npos)
      << message;

  // In local form the types are shards already: no divisibility check.
  EXPECT_TRUE(succeeded(verifyShardingFor(
      s, RankedTensorType::get({3, 10}, f32), func, true, emitError)));

  ShardingAttr unknown = parseSharding(R"(#tp.sharding<@nowhere, [{}]>)");
  EXPECT_TRUE(failed(verifyShardingFor(unknown, RankedTensorType::get({3}, f32),
                                       func, false, emitError)));
  EXPECT_NE(message.find("unknown mesh @nowhere"), std::string::npos)
      << message;
}

TEST_F(ShardingTest, CollectiveBuildersInferResultTypes) {
  OpBuilder b(&context);
  b.setInsertionPointToEnd(module->getBody());
  auto f32 = Float32Type::get(&context);
  Value x = tensor::EmptyOp::create(b, b.getUnknownLoc(),
                                    ArrayRef<int64_t>{16, 128}, f32);
  MeshOp world = mesh("world"), grid = mesh("grid");

  auto gather = AllGatherOp::create(b, b.getUnknownLoc(), x, world,
                                    ArrayRef<StringRef>{"tp"}, 1);
  EXPECT_EQ(gather.getResult().getType().getShape(),
            (ArrayRef<int64_t>{16, 512}));

  auto scatter =
      ReduceScatterOp::create(b, b.getUnknownLoc(), ReductionKind::Sum, x, grid,
                              ArrayRef<StringRef>{"dp", "tp"}, 0);
  EXPECT_EQ(scatter.getResult().getType().getShape(),
            (ArrayRef<int64_t>{2, 128}));

  auto a2a = AllToAllOp::create(b, b.getUnknownLoc(), x, world,
                                ArrayRef<StringRef>{"tp"}, 0, 1);
  EXPECT_EQ(a2a.getResult().getType().getShape(), (ArrayRef<int64_t>{4, 512}));

  auto slice = AllSliceOp::create(b, b.getUnknownLoc(), x, grid,
                                  ArrayRef<StringRef>{"dp"}, 1);
  EXPECT_EQ(slice.getResult().getType().getShape(),
            (ArrayRef<int64_t>{16, 64}));
  EXPECT_EQ(slice.getGroupSize(grid), 2);

  // Result types that the operands determine are inferred.
  ShardingAttr split = parseSharding(R"(#tp.sharding<@world, [{}, {"tp"}]>)");
  auto annotate = AnnotateOp::create(b, b.getUnknownLoc(), x, split);
  EXPECT_EQ(annotate.getType(), x.getType());
  auto reshard = ReshardOp::create(b, b.getUnknownLoc(), annotate, split);
  EXPECT_EQ(reshard.getType(), x.getType());
  auto reduce = AllReduceOp::create(b, b.getUnknownLoc(), ReductionKind::Max, x,
                                    "world", ArrayRef<StringRef>{"tp"});
  EXPECT_EQ(reduce.getResult().getType(), x.getType());
  auto index = AxisIndexOp::create(b, b.getUnknownLoc(), "grid",
                                   ArrayRef<StringRef>{"dp", "tp"});
  EXPECT_TRUE(index.getType().isIndex());

  // Everything built verifies (the helper ops sit in the module body).
  EXPECT_TRUE(succeeded(verify(*module)));
}

} // namespace
