//===- SearchRuleTest.cpp - judgeSearch, the annotated path's rules -------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/AutoPlan.h"

#include "gtest/gtest.h"

using namespace mlir::tp;

namespace {

/// A plan of `seconds` and `peak` bytes beside a fixed point of 100 us and
/// 1,000 B.
FunctionPlan planOf(double seconds, double peak) {
  FunctionPlan plan;
  plan.computeSeconds = seconds / 2;
  plan.communicationSeconds = seconds / 2;
  plan.peakBytes = peak;
  plan.incumbent = FunctionPlan::Costed{50e-6, 50e-6, 1000};
  return plan;
}

TEST(SearchRuleTest, AdoptsOnlyPastTheMarginAndWithinTheBytes) {
  EXPECT_EQ(judgeSearch(planOf(60e-6, 1000), 0), SearchRule::Adopted);
  EXPECT_EQ(judgeSearch(planOf(60e-6, 900), 0), SearchRule::Adopted);
  // Faster by exactly the margin, or less: kept.
  double atMargin = 100e-6 * (1 - kSearchAdoptionMargin);
  EXPECT_EQ(judgeSearch(planOf(atMargin, 1000), 0), SearchRule::Margin);
  EXPECT_EQ(judgeSearch(planOf(90e-6, 1000), 0), SearchRule::Margin);
  EXPECT_EQ(judgeSearch(planOf(120e-6, 500), 0), SearchRule::Margin);
}

TEST(SearchRuleTest, TheUsersSplitIsTheBudget) {
  // One byte more than the fixed point's peak: kept, however fast.
  EXPECT_EQ(judgeSearch(planOf(1e-6, 1001), 0), SearchRule::Memory);
  // A memory-per-device that allows it: adopted; one that does not: kept.
  EXPECT_EQ(judgeSearch(planOf(1e-6, 1001), 2000), SearchRule::Adopted);
  EXPECT_EQ(judgeSearch(planOf(1e-6, 2001), 2000), SearchRule::Memory);
  // A budget below the fixed point's own peak takes nothing away from it.
  EXPECT_EQ(judgeSearch(planOf(1e-6, 1000), 10), SearchRule::Adopted);
}

TEST(SearchRuleTest, NamesMemoryWhereItStoppedAFasterPlan) {
  // Planned again within the fixed point's bytes: what it found is not past
  // the margin, but the fastest plan was: memory decided.
  FunctionPlan plan = planOf(95e-6, 1000);
  plan.fastest = FunctionPlan::Costed{10e-6, 10e-6, 5000};
  EXPECT_EQ(judgeSearch(plan, 0), SearchRule::Memory);
  // The fastest plan was not past the margin either: the margin decided.
  plan.fastest = FunctionPlan::Costed{45e-6, 45e-6, 5000};
  EXPECT_EQ(judgeSearch(plan, 0), SearchRule::Margin);
}

TEST(SearchRuleTest, KeepsWhatTheModelCannotExpress) {
  FunctionPlan plan = planOf(1e-6, 10);
  plan.incumbent.reset();
  EXPECT_EQ(judgeSearch(plan, 0), SearchRule::Inexpressible);
}

TEST(SearchRuleTest, RulesRoundTripByName) {
  for (SearchRule rule : {SearchRule::Inexpressible, SearchRule::Memory,
                          SearchRule::Margin, SearchRule::Adopted})
    EXPECT_EQ(symbolizeSearchRule(stringifySearchRule(rule)), rule);
  EXPECT_FALSE(symbolizeSearchRule("faster"));
}

} // namespace
