//===- PlannerTest.cpp - The planner's strategies and edge costs ----------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The pieces the planner's programme is made of (Planner.h): every sharding
// a tensor may take (its strategies' vocabulary), and what resharding between
// two of them costs on the machine model (its edges).
//
//===----------------------------------------------------------------------===//

#include "Planner.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

#include <set>

using namespace mlir;
using namespace mlir::tp;
using namespace mlir::tp::planner;

namespace {

class PlannerTest : public ::testing::Test {
protected:
  PlannerTest() {
    context.loadDialect<TPDialect, func::FuncDialect>();
    module = parseSourceString<ModuleOp>(R"mlir(
      tp.mesh @line ["tp" = 4]
      tp.mesh @grid ["dp" = 2, "tp" = 4]
      func.func @f(%x: tensor<16x512xf32>) -> tensor<16x512xf32> {
        return %x : tensor<16x512xf32>
      }
    )mlir",
                                         &context);
    machine = MachineModel::h200();
    options.machine = &machine;
  }

  std::unique_ptr<Planner> planner(StringRef meshName) {
    auto mesh = cast<MeshOp>(SymbolTable::lookupSymbolIn(*module, meshName));
    auto func =
        cast<FunctionOpInterface>(SymbolTable::lookupSymbolIn(*module, "f"));
    return std::make_unique<Planner>(func, mesh, constraints, options,
                                     /*incumbent=*/nullptr,
                                     /*sharedRules=*/nullptr,
                                     /*givenStructure=*/nullptr);
  }

  RankedTensorType tensor(ArrayRef<int64_t> shape) {
    return RankedTensorType::get(shape, Float32Type::get(&context));
  }

  static TensorSharding split(unsigned rank, unsigned dim,
                              ArrayRef<StringRef> axes) {
    TensorSharding s;
    s.dims.resize(rank);
    s.dims[dim].assign(axes.begin(), axes.end());
    return s;
  }
  static TensorSharding whole(unsigned rank) {
    TensorSharding s;
    s.dims.resize(rank);
    return s;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
  MachineModel machine;
  AutoPlanOptions options;
  PlanConstraints constraints;
};

/// The shardings as text, to compare sets.
std::set<std::string> texts(ArrayRef<TensorSharding> shardings) {
  std::set<std::string> out;
  for (const TensorSharding &s : shardings) {
    std::string text;
    for (const AxisList &d : s.dims) {
      text += "[";
      for (StringRef a : d)
        text += a.str() + " ";
      text += "]";
    }
    EXPECT_TRUE(out.insert(text).second) << "twice: " << text;
  }
  return out;
}

TEST_F(PlannerTest, StrategiesAreEveryEvenSplit) {
  ASSERT_TRUE(module);
  // One axis: on either dimension, or on none.
  EXPECT_EQ(texts(planner("line")->shardingsOf(tensor({16, 512}))),
            (std::set<std::string>{"[][]", "[tp ][]", "[][tp ]"}));
  // Two axes: each on either dimension or none, both on one in mesh order.
  std::set<std::string> grid =
      texts(planner("grid")->shardingsOf(tensor({16, 512})));
  EXPECT_EQ(grid.size(), 9u);
  EXPECT_TRUE(grid.count("[dp tp ][]"));
  EXPECT_FALSE(grid.count("[tp dp ][]"));
  // A dimension of 2 takes "dp" alone: "tp" (4) and "dp","tp" (8) do not
  // divide it.
  std::set<std::string> small =
      texts(planner("grid")->shardingsOf(tensor({2, 512})));
  EXPECT_EQ(small.size(), 6u);
  EXPECT_TRUE(small.count("[dp ][tp ]"));
  EXPECT_FALSE(small.count("[tp ][]"));
  EXPECT_FALSE(small.count("[dp tp ][]"));
  // Nothing divides 3: the whole tensor, or splits of the other dimension.
  EXPECT_EQ(texts(planner("line")->shardingsOf(tensor({3, 512}))),
            (std::set<std::string>{"[][]", "[][tp ]"}));
}

TEST_F(PlannerTest, EdgesCostTheReshardsSteps) {
  ASSERT_TRUE(module);
  std::unique_ptr<Planner> p = planner("line");
  RankedTensorType type = tensor({16, 512});
  const double bytes = 16 * 512 * 4;
  TensorSharding rows = split(2, 0, {"tp"}), cols = split(2, 1, {"tp"});
  TensorSharding pending = whole(2);
  pending.partial = {"tp"};
  // Nothing to do, or a local slice: free.
  EXPECT_EQ(p->reshardSeconds(type, cols, cols), 0);
  EXPECT_EQ(p->reshardSeconds(type, whole(2), cols), 0);
  // Gathered whole: an all_gather of the whole tensor.
  EXPECT_DOUBLE_EQ(
      p->reshardSeconds(type, cols, whole(2)),
      machine.collectiveSeconds(CollectiveKind::AllGather, 4, bytes));
  // A pending sum reduced: an all_reduce; reduced into a split: one
  // reduce_scatter.
  EXPECT_DOUBLE_EQ(
      p->reshardSeconds(type, pending, whole(2)),
      machine.collectiveSeconds(CollectiveKind::AllReduce, 4, bytes));
  EXPECT_DOUBLE_EQ(
      p->reshardSeconds(type, pending, rows),
      machine.collectiveSeconds(CollectiveKind::ReduceScatter, 4, bytes));
  // Moved from one dimension to the other: one all_to_all over the group's
  // tensor.
  EXPECT_DOUBLE_EQ(
      p->reshardSeconds(type, rows, cols),
      machine.collectiveSeconds(CollectiveKind::AllToAll, 4, bytes));
  // Asked again: the same answer (cached per type and pair).
  EXPECT_DOUBLE_EQ(
      p->reshardSeconds(type, rows, cols),
      machine.collectiveSeconds(CollectiveKind::AllToAll, 4, bytes));
  // Every move costs more on a machine whose all-to-alls are slower.
  machine.collectives[static_cast<int>(CollectiveKind::AllToAll)]
      .busBandwidth /= 10;
  EXPECT_GT(planner("line")->reshardSeconds(type, rows, cols),
            p->reshardSeconds(type, rows, cols));
}

} // namespace
