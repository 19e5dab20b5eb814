//===- CollectiveOpInterfaceTest.cpp - What each collective says ----------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Every collective answers CollectiveOpInterface, and what it answers agrees
// with the cost formulas and with the runtime's call table
// (tprt_rt_calls.def): the runtime conversion builds each call from the
// interface alone, so a collective whose dimensions or reduction disagree with
// its entry point's parameters would be lowered to a wrong call.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Common/RuntimeCalls.h"
#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/ADT/SmallBitVector.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

class CollectiveOpInterfaceTest : public ::testing::Test {
protected:
  CollectiveOpInterfaceTest() {
    // The runtime's types use !llvm.ptr.
    context.loadDialect<TPDialect, func::FuncDialect, LLVM::LLVMDialect>();
    module = parseSourceString<ModuleOp>(R"mlir(
      tp.mesh @grid ["dp" = 2, "tp" = 4]
      func.func @f(%x: tensor<16x512xf32>) {
        %a = tp.all_reduce max %x over @grid ["tp"] : tensor<16x512xf32>
        %b = tp.all_gather %x over @grid ["tp"] dim 1
            : tensor<16x512xf32> -> tensor<16x2048xf32>
        %c = tp.reduce_scatter sum %x over @grid ["dp", "tp"] dim 0
            : tensor<16x512xf32> -> tensor<2x512xf32>
        %d = tp.all_to_all %x over @grid ["tp"] split 1 concat 0
            : tensor<16x512xf32> -> tensor<64x128xf32>
        %e = tp.all_slice %x over @grid ["dp"] dim 1
            : tensor<16x512xf32> -> tensor<16x256xf32>
        return
      }
    )mlir",
                                         &context);
  }

  SmallVector<CollectiveOpInterface> collectives() {
    SmallVector<CollectiveOpInterface> ops;
    module->walk([&](CollectiveOpInterface op) { ops.push_back(op); });
    return ops;
  }

  MeshOp grid() {
    return cast<MeshOp>(SymbolTable::lookupSymbolIn(*module, "grid"));
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(CollectiveOpInterfaceTest, EveryKindIsAnOp) {
  ASSERT_TRUE(module);
  llvm::SmallBitVector seen(kNumCollectiveKinds);
  for (CollectiveOpInterface op : collectives()) {
    auto kind = static_cast<unsigned>(op.getCollectiveKind());
    ASSERT_LT(kind, kNumCollectiveKinds);
    seen.set(kind);
    // The kind names the op.
    EXPECT_EQ(("tp." + stringifyCollectiveKind(op.getCollectiveKind())).str(),
              op->getName().getStringRef().str());
  }
  EXPECT_TRUE(seen.all()) << "a CollectiveKind without an op in this test";
}

TEST_F(CollectiveOpInterfaceTest, GroupReductionAndDims) {
  ASSERT_TRUE(module);
  SmallVector<CollectiveOpInterface> ops = collectives();
  ASSERT_EQ(ops.size(), 5u);
  EXPECT_EQ(ops[0].getReduction(), ReductionKind::Max);
  EXPECT_TRUE(ops[0].getCollectiveDims().empty());
  EXPECT_EQ(ops[1].getReduction(), std::nullopt);
  EXPECT_EQ(ops[1].getCollectiveDims(), SmallVector<int64_t>({1}));
  EXPECT_EQ(ops[2].getReduction(), ReductionKind::Sum);
  EXPECT_EQ(ops[2].getGroupAxes(), SmallVector<StringRef>({"dp", "tp"}));
  EXPECT_EQ(ops[3].getCollectiveDims(), SmallVector<int64_t>({1, 0}));
  EXPECT_EQ(ops[4].getGroupAxes(), SmallVector<StringRef>({"dp"}));
  // Local semantics: who holds the same tensor afterwards.
  EXPECT_TRUE(ops[0].isResultUniformOverGroup());
  EXPECT_TRUE(ops[1].isResultUniformOverGroup());
  EXPECT_FALSE(ops[2].isResultUniformOverGroup());
  EXPECT_FALSE(ops[3].isResultUniformOverGroup());
  EXPECT_FALSE(ops[4].isResultUniformOverGroup());
}

TEST_F(CollectiveOpInterfaceTest, BytesPerDeviceByTheRingFormulas) {
  ASSERT_TRUE(module);
  SmallVector<CollectiveOpInterface> ops = collectives();
  ASSERT_EQ(ops.size(), 5u);
  const double s = 16 * 512 * 4; // the operand, f32
  auto bytes = [&](CollectiveOpInterface op) {
    return op.getBytesPerDevice(grid().getGroupSize(op.getGroupAxes()));
  };
  EXPECT_DOUBLE_EQ(bytes(ops[0]), 2.0 * 3 / 4 * s);
  EXPECT_DOUBLE_EQ(bytes(ops[1]), 3.0 / 4 * (4 * s)); // the gathered result
  EXPECT_DOUBLE_EQ(bytes(ops[2]), 7.0 / 8 * s);
  // The exchanged tensor is the group's: 4 operands.
  EXPECT_DOUBLE_EQ(ops[3].getFormulaTensorBytes(4), 4 * s);
  EXPECT_DOUBLE_EQ(bytes(ops[3]), 3.0 / 16 * (4 * s));
  EXPECT_DOUBLE_EQ(bytes(ops[4]), 0);
  // A group of one moves nothing.
  EXPECT_DOUBLE_EQ(ops[0].getBytesPerDevice(1), 0);
}

TEST_F(CollectiveOpInterfaceTest, RuntimeEntryMatchesTheCallTable) {
  ASSERT_TRUE(module);
  for (CollectiveOpInterface op : collectives()) {
    std::string entry = op.getRuntimeEntry();
    SCOPED_TRACE(entry);
    ASSERT_TRUE(runtimeSlotOffset(entry).has_value())
        << "not in tprt_rt_calls.def";
    std::optional<FunctionType> type = runtimeFunctionType(&context, entry);
    ASSERT_TRUE(type.has_value());
    // What the runtime conversion passes: context, input, output; the
    // element count, or shape, rank and each dimension; the element type;
    // the reduction; the packed axes.
    size_t dims = op.getCollectiveDims().size();
    size_t expected =
        3 + (dims == 0 ? 1 : 2 + dims) + 1 + (op.getReduction() ? 1 : 0) + 1;
    EXPECT_EQ(type->getNumInputs(), expected);
    EXPECT_EQ(type->getNumResults(), 0u);
  }
}

} // namespace
