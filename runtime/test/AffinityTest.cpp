//===- AffinityTest.cpp - Which core each rank thread runs on -------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Affinity.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <vector>

using tprt::rankCores;

TEST(Affinity, RanksThatFitAreLeftToTheKernel) {
  EXPECT_TRUE(rankCores({0, 1, 2, 3}, 4).empty());
  EXPECT_TRUE(rankCores({0, 1, 2, 3}, 1).empty());
  EXPECT_TRUE(rankCores({}, 4).empty());
}

TEST(Affinity, ConsecutiveRanksShareACore) {
  EXPECT_EQ(rankCores({0, 1}, 4), (std::vector<int>{0, 0, 1, 1}));
  EXPECT_EQ(rankCores({0}, 3), (std::vector<int>{0, 0, 0}));
  EXPECT_EQ(rankCores({0, 1, 2, 3}, 8),
            (std::vector<int>{0, 0, 1, 1, 2, 2, 3, 3}));
}

TEST(Affinity, OnlyAllowedCoresAndEveryOneOfThem) {
  // A cpuset of cores 2 and 5: 3 ranks, 2 on the first.
  EXPECT_EQ(rankCores({2, 5}, 3), (std::vector<int>{2, 2, 5}));
  std::vector<int> cores = rankCores({1, 3, 7}, 7);
  ASSERT_EQ(cores.size(), 7u);
  for (int core : {1, 3, 7})
    EXPECT_NE(std::find(cores.begin(), cores.end(), core), cores.end());
  for (int core : cores)
    EXPECT_TRUE(core == 1 || core == 3 || core == 7);
}
