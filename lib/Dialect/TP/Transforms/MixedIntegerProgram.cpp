//===- MixedIntegerProgram.cpp - The planner's integer programmes ---------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "MixedIntegerProgram.h"

#include <cmath>
#include <functional>
#include <memory>

using namespace mlir::tp;

MipBuilder::Outcome
MipBuilder::branchAndBound(const CoinSolvers &coin, const Matrix &m,
                           double fractionGap, unsigned maxNodes, double cutoff,
                           std::vector<double> &solution) const {
  std::unique_ptr<Clp_Simplex, void (*)(Clp_Simplex *)> lp(
      coin.Clp_newModel(), coin.Clp_deleteModel);
  coin.Clp_setLogLevel(lp.get(), 0);
  coin.Clp_loadProblem(lp.get(), lower.size(), rowLower.size(), m.start.data(),
                       m.index.data(), m.value.data(), lower.data(),
                       upper.data(), objective.data(), rowLower.data(),
                       rowUpper.data());
  std::vector<double> lb(lower.begin(), lower.end());
  std::vector<double> ub(upper.begin(), upper.end());
  size_t statusSize = lower.size() + rowLower.size();
  double best = 0;
  bool found = false;
  unsigned nodes = 0;
  bool failed = false;
  std::function<void()> visit = [&] {
    if (failed || ++nodes > maxNodes) {
      failed = true;
      return;
    }
    coin.Clp_dual(lp.get(), 0);
    if (coin.Clp_isProvenPrimalInfeasible(lp.get()))
      return;
    if (!coin.Clp_isProvenOptimal(lp.get())) {
      failed = true;
      return;
    }
    double bound = coin.Clp_objectiveValue(lp.get());
    if (bound >= cutoff)
      return;
    if (found && bound >= best - std::max(1e-9 * std::max(1.0, std::abs(best)),
                                          fractionGap * std::abs(best)))
      return;
    const double *x = coin.Clp_primalColumnSolution(lp.get());
    int branch = -1;
    double farthest = kIntegrality;
    for (int c : integers) {
      double away = std::abs(x[c] - std::round(x[c]));
      if (away > farthest) {
        farthest = away;
        branch = c;
      }
    }
    if (branch < 0) {
      found = true;
      best = bound;
      solution.assign(x, x + lower.size());
      return;
    }
    double value = x[branch];
    std::vector<unsigned char> status(coin.Clp_statusArray(lp.get()),
                                      coin.Clp_statusArray(lp.get()) +
                                          statusSize);
    double oldLower = lb[branch], oldUpper = ub[branch];
    // The nearer side first: a good plan early cuts more nodes off.
    bool upFirst = value - std::floor(value) >= 0.5;
    for (bool up : {upFirst, !upFirst}) {
      lb[branch] = up ? std::ceil(value) : oldLower;
      ub[branch] = up ? oldUpper : std::floor(value);
      coin.Clp_chgColumnLower(lp.get(), lb.data());
      coin.Clp_chgColumnUpper(lp.get(), ub.data());
      coin.Clp_copyinStatus(lp.get(), status.data());
      visit();
    }
    lb[branch] = oldLower;
    ub[branch] = oldUpper;
    coin.Clp_chgColumnLower(lp.get(), lb.data());
    coin.Clp_chgColumnUpper(lp.get(), ub.data());
  };
  visit();
  if (failed)
    return Outcome::GaveUp;
  return found ? Outcome::Solved : Outcome::NoneBelowCutoff;
}
