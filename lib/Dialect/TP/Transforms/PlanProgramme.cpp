//===- PlanProgramme.cpp - The integer programme --------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Step 3 of the planner (Planner.h): the programme (MipBuilder,
// MixedIntegerProgram.h), bounded by the budget and the incumbent's cutoff,
// solved by the planner's branch and bound and CBC.
//
//===----------------------------------------------------------------------===//

#include "Planner.h"

#include "CoinSolvers.h"
#include "MixedIntegerProgram.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Debug.h"

#define DEBUG_TYPE "tp-auto-plan"

using namespace mlir;
using namespace mlir::tp;
using namespace mlir::tp::planner;

/// Test aid: how many relaxations the planner's own branch and bound may
/// solve before the programme goes to CBC (0: CBC alone, as before it).
static llvm::cl::opt<int> clPlanRelaxations(
    "tp-auto-plan-relaxations", llvm::cl::Hidden, llvm::cl::init(-1),
    llvm::cl::desc("Relaxations auto-plan's branch and bound may solve "
                   "before CBC takes over (-1: by the programme's size; 0: "
                   "CBC only)"));

LogicalResult
Planner::solve(SmallVectorImpl<unsigned> &chosen,
               std::optional<std::pair<unsigned, unsigned>> forbidden,
               bool ignoreBudget, bool quiet) {
  bool budget = budgetBytes > 0 && !ignoreBudget;
  quiet = quiet || forbidden;
  noneBelowCutoff = false;
  // Seconds in microseconds; a tie goes to fewer bytes (one microsecond per
  // gigabyte: far below any modelled difference).
  constexpr double kScale = 1e6, kPerByte = 1e-9;
  // The model is built here and handed to CBC at once: CBC's addRow copies
  // its row store each time (quadratic: most of a GPT layer's search).
  MipBuilder mip;
  int columns = 0;
  double fixedBytes = 0, leastBytes = 0;
  // The objective of a plan that costs `cutoffSeconds`, at most: the
  // programme leaves out the nodes of one strategy, and the bytes'
  // tie-break adds at most each node's largest.
  double cutoff = std::isfinite(cutoffSeconds) && !forbidden
                      ? cutoffSeconds * kScale
                      : std::numeric_limits<double>::infinity();
  for (Node &node : nodes) {
    double least = std::numeric_limits<double>::infinity();
    double most = 0;
    for (const Strategy &s : node.strategies) {
      least = std::min(least, s.bytes);
      most = std::max(most, s.bytes);
    }
    leastBytes += least;
    if (node.strategies.size() == 1) {
      const Strategy &s = node.strategies.front();
      fixedBytes += s.bytes;
      cutoff -= (s.computeSeconds + s.communicationSeconds) * kScale;
      continue;
    }
    cutoff += most * kPerByte;
    node.column = columns;
    for (const Strategy &s : node.strategies) {
      bool allowed =
          !forbidden ||
          forbidden->first != static_cast<unsigned>(&node - &nodes[0]) ||
          forbidden->second != static_cast<unsigned>(&s - &node.strategies[0]);
      mip.addColumn(0, allowed ? 1 : 0,
                    (s.computeSeconds + s.communicationSeconds) * kScale +
                        s.bytes * kPerByte,
                    /*integer=*/true);
      ++columns;
    }
  }
  if (budget && leastBytes > budgetBytes && quiet)
    return failure();
  if (budget && leastBytes > budgetBytes)
    return mlir::emitError(func.getLoc())
           << "auto-plan: no plan fits memory-per-device="
           << static_cast<uint64_t>(options.memoryPerDevice)
           << " bytes: the function's arguments and the activations live at "
              "its peak need at least "
           << static_cast<uint64_t>(leastBytes)
           << " bytes per device (every open argument split as far as the "
              "mesh allows"
           << (fixedBytes > 0 ? ", annotated ones as annotated" : "") << ")";
  for (auto &entry : edges) {
    Edge &edge = entry.second;
    edge.column = columns;
    for (double t : edge.seconds) {
      mip.addColumn(0, 1, t * kScale, /*integer=*/false);
      ++columns;
    }
  }
  // A shared read: per needed sharding, whether any chosen reader needs it
  // (forced when a reader of one strategy does); per (source strategy,
  // needed sharding), its cost, paid when both hold.
  for (auto &entry : shared) {
    SharedRead &read = entry.second;
    SmallVector<bool> forced(read.numTargets, false);
    for (auto &[node, need] : read.readers)
      if (nodes[node].column < 0 && need.front() >= 0)
        forced[need.front()] = true;
    read.targetColumn = columns;
    for (bool f : forced) {
      mip.addColumn(f ? 1 : 0, 1, 0, /*integer=*/false);
      ++columns;
    }
    // A source of one strategy: the cost is on the needed sharding itself;
    // else per (source strategy, needed sharding) where it costs.
    if (!read.from || nodes[*read.from].column < 0) {
      for (unsigned t = 0; t < read.numTargets; ++t)
        mip.objective[read.targetColumn + t] = read.seconds[t] * kScale;
      continue;
    }
    read.pairColumn = columns;
    for (double t : read.seconds) {
      if (t <= 0)
        continue;
      mip.addColumn(0, 1, t * kScale, /*integer=*/false);
      ++columns;
    }
  }
  // Each node takes one strategy.
  SmallVector<int> cols;
  SmallVector<double> coefs;
  for (const Node &node : nodes) {
    if (node.column < 0)
      continue;
    cols.clear();
    for (unsigned i = 0; i < node.strategies.size(); ++i)
      cols.push_back(node.column + i);
    coefs.assign(cols.size(), 1.0);
    mip.addRow(cols.size(), cols.data(), coefs.data(), 'E', 1);
  }
  // An edge's pairs add up to the strategy each end takes: for each
  // strategy of one end, the pairs that hold it (`count` columns from
  // `first`, `stride` apart) sum to its variable.
  auto addMarginal = [&](int first, unsigned count, unsigned stride,
                         int strategy) {
    cols.clear();
    coefs.clear();
    for (unsigned k = 0; k < count; ++k) {
      cols.push_back(first + k * stride);
      coefs.push_back(1);
    }
    cols.push_back(strategy);
    coefs.push_back(-1);
    mip.addRow(cols.size(), cols.data(), coefs.data(), 'E', 0);
  };
  for (auto &entry : edges) {
    const Edge &edge = entry.second;
    unsigned numFrom = nodes[edge.from].strategies.size();
    unsigned numTo = nodes[edge.to].strategies.size();
    for (unsigned i = 0; i < numFrom; ++i)
      addMarginal(edge.column + i * numTo, numTo, 1,
                  nodes[edge.from].column + i);
    for (unsigned j = 0; j < numTo; ++j)
      addMarginal(edge.column + j, numFrom, numTo, nodes[edge.to].column + j);
  }
  for (auto &entry : shared) {
    const SharedRead &read = entry.second;
    // A needed sharding holds when a reader takes a strategy that needs it
    // (its strategies needing it together: they exclude each other).
    for (auto &[node, need] : read.readers) {
      if (nodes[node].column < 0)
        continue;
      for (unsigned t = 0; t < read.numTargets; ++t) {
        cols.assign({read.targetColumn + static_cast<int>(t)});
        coefs.assign({1});
        for (auto [j, target] : llvm::enumerate(need))
          if (target == static_cast<int>(t)) {
            cols.push_back(nodes[node].column + j);
            coefs.push_back(-1);
          }
        if (cols.size() > 1)
          mip.addRow(cols.size(), cols.data(), coefs.data(), 'G', 0);
      }
    }
    // A needed sharding is made from the source's strategy: the pairs that
    // cost, and the strategies that make it for free, cover it; each pair
    // within its strategy (as an edge's marginals).
    if (read.pairColumn < 0)
      continue;
    int fromColumn = nodes[*read.from].column;
    unsigned numFrom = read.seconds.size() / read.numTargets;
    int pair = read.pairColumn;
    SmallVector<int> pairOf(read.seconds.size(), -1);
    for (auto [k, t] : llvm::enumerate(read.seconds))
      if (t > 0)
        pairOf[k] = pair++;
    for (unsigned t = 0; t < read.numTargets; ++t) {
      cols.assign({read.targetColumn + static_cast<int>(t)});
      coefs.assign({-1});
      for (unsigned i = 0; i < numFrom; ++i) {
        int p = pairOf[i * read.numTargets + t];
        cols.push_back(p >= 0 ? p : fromColumn + static_cast<int>(i));
        coefs.push_back(1);
        if (p < 0)
          continue;
        int rowCols[] = {p, fromColumn + static_cast<int>(i)};
        double rowCoefs[] = {1, -1};
        mip.addRow(2, rowCols, rowCoefs, 'L', 0);
      }
      mip.addRow(cols.size(), cols.data(), coefs.data(), 'G', 0);
    }
  }
  // The budget.
  if (budget) {
    cols.clear();
    coefs.clear();
    for (const Node &node : nodes)
      if (node.column >= 0)
        for (auto [i, s] : llvm::enumerate(node.strategies))
          if (s.bytes > 0) {
            cols.push_back(node.column + i);
            coefs.push_back(s.bytes);
          }
    if (!cols.empty())
      mip.addRow(cols.size(), cols.data(), coefs.data(), 'L',
                 budgetBytes - fixedBytes);
  }
  chosen.assign(nodes.size(), 0);
  if (columns == 0)
    return success();
  std::string coinError;
  const CoinSolvers *solvers = CoinSolvers::get(coinError);
  if (!solvers)
    return mlir::emitError(func.getLoc()) << "auto-plan: " << coinError;
  const CoinSolvers &coin = *solvers;
  MipBuilder::Matrix matrix = mip.matrix();
  // A plan whose layers fold into one is a small programme (an MLP layer:
  // 200 columns), which a few relaxations prove: 3 for an MLP layer, 11 for
  // a GPT layer. CBC's setup and root processing (its cut generators and,
  // under a budget, its heuristics) cost several times that. A runner-up,
  // within 1%, is proved by more relaxations as cheaply (a GPT layer's under
  // a budget: up to 150, 40 ms, against CBC's 0.2-0.8 s for the same plans).
  // A large programme (layers that differ) goes to CBC after a few
  // relaxations: each costs about as much as its size.
  unsigned perColumns = forbidden ? 256000 : 64000;
  unsigned maxNodes =
      clPlanRelaxations >= 0
          ? unsigned(clPlanRelaxations)
          : std::clamp<unsigned>(perColumns / columns, 4, forbidden ? 256 : 64);
  std::vector<double> solution;
  // Set (with CBC's own deleter) once CBC is loaded.
  std::unique_ptr<Cbc_Model, void (*)(Cbc_Model *)> model(nullptr, nullptr);
  const double *x = nullptr;
  MipBuilder::Outcome outcome =
      maxNodes ? mip.branchAndBound(coin, matrix, forbidden ? 0.01 : 0,
                                    maxNodes, cutoff, solution)
               : MipBuilder::Outcome::GaveUp;
  // Without a cutoff, finding nothing proves no plan faster than anything:
  // the relaxation found no plan at all, which is CBC's to say.
  if (outcome == MipBuilder::Outcome::NoneBelowCutoff && !std::isfinite(cutoff))
    outcome = MipBuilder::Outcome::GaveUp;
  if (outcome == MipBuilder::Outcome::NoneBelowCutoff) {
    noneBelowCutoff = true;
    return failure();
  }
  if (outcome == MipBuilder::Outcome::Solved) {
    LLVM_DEBUG(llvm::dbgs() << "auto-plan: " << nodes.size() << " nodes, "
                            << columns << " columns: solved by Clp\n");
    x = solution.data();
  } else {
    if (!CoinSolvers::get(coinError, /*cbc=*/true))
      return mlir::emitError(func.getLoc()) << "auto-plan: " << coinError;
    model = std::unique_ptr<Cbc_Model, void (*)(Cbc_Model *)>(
        coin.Cbc_newModel(), coin.Cbc_deleteModel);
    coin.Cbc_setLogLevel(model.get(), 0);
    mip.load(coin, model.get(), matrix);
    coin.Cbc_setAllowableGap(model.get(), 0);
    // Without a budget CBC's primal heuristics and its preprocessing are most
    // of its time while rarely changing the bound: off, the same plans come
    // sooner (3-4x on a 12-layer GPT). The cut generators stay: a large plan
    // whose layers do not fold (64 layers that differ) branches without end
    // without them (over 120 s against 0.4 s). With a budget the heuristics
    // find the knapsack's good plans early and prove them (fewer
    // branch-and-bound nodes).
    if (!budget) {
      coin.Cbc_setParameter(model.get(), "heuristicsOnOff", "off");
      coin.Cbc_setParameter(model.get(), "preprocess", "off");
    }
    // The plan is exact; a runner-up, which only explains it, is within 1%.
    coin.Cbc_setAllowableFractionGap(model.get(), forbidden ? 0.01 : 0);
    if (std::isfinite(cutoff))
      coin.Cbc_setCutoff(model.get(), cutoff);
    coin.Cbc_solve(model.get());
    LLVM_DEBUG(llvm::dbgs()
               << "auto-plan: " << nodes.size() << " nodes, " << edges.size()
               << " edges, " << shared.size() << " shared reads, " << columns
               << " columns, " << coin.Cbc_getNumRows(model.get()) << " rows; "
               << coin.Cbc_getNodeCount(model.get())
               << " branch-and-bound nodes\n");
    if (std::isfinite(cutoff) && coin.Cbc_isProvenInfeasible(model.get())) {
      noneBelowCutoff = true;
      return failure();
    }
    if (!coin.Cbc_isProvenOptimal(model.get()) && quiet)
      return failure();
    if (!coin.Cbc_isProvenOptimal(model.get()))
      return mlir::emitError(func.getLoc())
             << "auto-plan: the solver found no optimal plan (CBC status "
             << coin.Cbc_status(model.get()) << ", secondary "
             << coin.Cbc_secondaryStatus(model.get()) << ")";
    x = coin.Cbc_getColSolution(model.get());
  }
  for (auto [n, node] : llvm::enumerate(nodes)) {
    if (node.column < 0)
      continue;
    unsigned best = 0;
    for (unsigned i = 1; i < node.strategies.size(); ++i)
      if (x[node.column + i] > x[node.column + best])
        best = i;
    chosen[n] = best;
  }
  return success();
}
