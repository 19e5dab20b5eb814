//===- LayerFinderTest.cpp - Repeated layers, provenance aside ------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/IR/TPOps.h"
#include "tp/Dialect/TP/Transforms/RepeatedLayers.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "gtest/gtest.h"

using namespace mlir;
using namespace mlir::tp;

namespace {

class LayerFinderTest : public ::testing::Test {
protected:
  LayerFinderTest() {
    context.loadDialect<TPDialect, func::FuncDialect, tensor::TensorDialect,
                        arith::ArithDialect>();
  }

  /// Three layers of two ops each (x * w + x, on a fresh empty tensor's
  /// leaf aside), whose ops and leaves carry `origins` per layer.
  OwningOpRef<ModuleOp> parseLayers(ArrayRef<StringRef> origins) {
    std::string source = "func.func @f(%x: tensor<4xf32>, %w0: tensor<4xf32>, "
                         "%w1: tensor<4xf32>, %w2: tensor<4xf32>) -> "
                         "tensor<4xf32> {\n";
    std::string previous = "%x";
    for (unsigned i = 0; i < 3; ++i) {
      std::string attrs = "{tp.origins = [\"" + origins[i].str() + "\"]}";
      std::string n = std::to_string(i);
      source +=
          "  %e" + n + " = tensor.empty() " + attrs + " : tensor<4xf32>\n";
      source += "  %m" + n + " = arith.mulf " + previous + ", %w" + n + " " +
                attrs + " : tensor<4xf32>\n";
      source += "  %a" + n + " = arith.addf %m" + n + ", %e" + n + " " + attrs +
                " : tensor<4xf32>\n";
      previous = "%a" + n;
    }
    source += "  return " + previous + " : tensor<4xf32>\n}\n";
    return parseSourceString<ModuleOp>(source, &context);
  }

  LayerRepeats search(ModuleOp module, StringAttr ignored) {
    auto f = cast<func::FuncOp>(SymbolTable::lookupSymbolIn(module, "f"));
    LayerFinder finder(&f.getBody().front(), ignored);
    finder.collect();
    return finder.search(/*minPeriod=*/2);
  }

  MLIRContext context;
};

TEST_F(LayerFinderTest, ProvenanceDoesNotSplitLayers) {
  OwningOpRef<ModuleOp> module =
      parseLayers({"from %w0 at 1:1", "from %w1 at 2:1", "from %w2 at 3:1"});
  ASSERT_TRUE(module);
  StringAttr origins = StringAttr::get(&context, TPDialect::kOriginsAttrName);
  // Compared exactly, no two layers are the same.
  EXPECT_EQ(search(*module, StringAttr()).saved(), 0u);
  // With the provenance ignored, the three layers are one layer x3.
  LayerRepeats found = search(*module, origins);
  EXPECT_EQ(found.period, 2u);
  EXPECT_EQ(found.repeats, 3u);
}

TEST_F(LayerFinderTest, OtherAttributesStillCount) {
  // The same origins everywhere: the layers repeat either way.
  OwningOpRef<ModuleOp> module = parseLayers({"a", "a", "a"});
  ASSERT_TRUE(module);
  EXPECT_EQ(search(*module, StringAttr()).repeats, 3u);
  // Ignoring another attribute does not make differing origins equal.
  OwningOpRef<ModuleOp> differing = parseLayers({"a", "b", "a"});
  ASSERT_TRUE(differing);
  LayerRepeats found =
      search(*differing, StringAttr::get(&context, "tp.shardings"));
  EXPECT_EQ(found.saved(), 0u);
}

} // namespace
