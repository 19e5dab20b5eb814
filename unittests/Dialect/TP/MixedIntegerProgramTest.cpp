//===- MixedIntegerProgramTest.cpp - The planner's branch and bound -------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "MixedIntegerProgram.h"

#include "gtest/gtest.h"

using namespace mlir::tp;

namespace {

/// A knapsack whose relaxation is fractional: three items of weight 3 and
/// values 6, 5, 4, capacity 4 (minimising the negated value). The
/// relaxation takes item 0 and a third of item 1 (-7.67); the optimum is
/// item 0 alone (-6).
MipBuilder knapsack() {
  MipBuilder mip;
  for (double value : {6.0, 5.0, 4.0})
    mip.addColumn(0, 1, -value, /*integer=*/true);
  int columns[] = {0, 1, 2};
  double weights[] = {3, 3, 3};
  mip.addRow(3, columns, weights, 'L', 4);
  return mip;
}

const CoinSolvers &coin() {
  std::string error;
  const CoinSolvers *solvers = CoinSolvers::get(error);
  if (!solvers)
    ADD_FAILURE() << error;
  return *solvers;
}

TEST(MixedIntegerProgramTest, MatrixIsColumnMajor) {
  MipBuilder mip = knapsack();
  int columns[] = {2, 0};
  double coefficients[] = {1, 1};
  mip.addRow(2, columns, coefficients, 'G', 1);
  MipBuilder::Matrix m = mip.matrix();
  EXPECT_EQ(m.start, (std::vector<CoinBigIndex>{0, 2, 3, 5}));
  EXPECT_EQ(m.index, (std::vector<int>{0, 1, 0, 0, 1}));
  EXPECT_EQ(m.value, (std::vector<double>{3, 1, 3, 3, 1}));
  EXPECT_EQ(mip.rowUpper[0], 4);
  EXPECT_EQ(mip.rowLower[1], 1);
}

TEST(MixedIntegerProgramTest, BranchesToTheIntegerOptimum) {
  MipBuilder mip = knapsack();
  std::vector<double> x;
  EXPECT_EQ(mip.branchAndBound(coin(), mip.matrix(), 0, 64,
                               std::numeric_limits<double>::infinity(), x),
            MipBuilder::Outcome::Solved);
  ASSERT_EQ(x.size(), 3u);
  EXPECT_NEAR(x[0], 1, 1e-9);
  EXPECT_NEAR(x[1], 0, 1e-9);
  EXPECT_NEAR(x[2], 0, 1e-9);
}

TEST(MixedIntegerProgramTest, ProvesNothingBeatsTheCutoff) {
  MipBuilder mip = knapsack();
  std::vector<double> x;
  // Nothing costs less than -6: proved without a plan.
  EXPECT_EQ(mip.branchAndBound(coin(), mip.matrix(), 0, 64, -6, x),
            MipBuilder::Outcome::NoneBelowCutoff);
  // The root alone proves it when the cutoff is below the relaxation.
  EXPECT_EQ(mip.branchAndBound(coin(), mip.matrix(), 0, 1, -8, x),
            MipBuilder::Outcome::NoneBelowCutoff);
  // -6 is below -5.5: found.
  EXPECT_EQ(mip.branchAndBound(coin(), mip.matrix(), 0, 64, -5.5, x),
            MipBuilder::Outcome::Solved);
  EXPECT_NEAR(x[0], 1, 1e-9);
}

TEST(MixedIntegerProgramTest, GivesUpPastItsRelaxations) {
  MipBuilder mip = knapsack();
  std::vector<double> x;
  // The root is fractional: one relaxation cannot settle it.
  EXPECT_EQ(mip.branchAndBound(coin(), mip.matrix(), 0, 1,
                               std::numeric_limits<double>::infinity(), x),
            MipBuilder::Outcome::GaveUp);
}

} // namespace
