//===- CoinSolvers.h - COIN-OR's CBC and Clp, loaded on first use -*- C++
//-*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Automatic planning solves its integer programmes with COIN-OR's CBC and
// Clp, through their C interfaces. Most compilations never solve one (a
// search whose plan has nothing left to choose, or no search at all), so the
// libraries are loaded when a plan first needs them rather than linked:
// linked, they and what they pull in (CoinUtils, LAPACK, OpenBLAS, the
// Fortran runtime) were loaded and relocated at every start of every tool,
// about a quarter of tp-opt's start-up, and OpenBLAS started its threads.
//
//===----------------------------------------------------------------------===//

#ifndef TP_LIB_DIALECT_TP_TRANSFORMS_COINSOLVERS_H
#define TP_LIB_DIALECT_TP_TRANSFORMS_COINSOLVERS_H

#include <coin/Cbc_C_Interface.h>
#include <coin/Clp_C_Interface.h>

#include <string>

namespace mlir::tp {

/// The functions of Clp's C interface that planning calls (its own branch
/// and bound over Clp's relaxations).
#define TP_CLP_FUNCTIONS(X)                                                    \
  X(Clp_newModel)                                                              \
  X(Clp_deleteModel)                                                           \
  X(Clp_setLogLevel)                                                           \
  X(Clp_loadProblem)                                                           \
  X(Clp_dual)                                                                  \
  X(Clp_isProvenPrimalInfeasible)                                              \
  X(Clp_isProvenOptimal)                                                       \
  X(Clp_objectiveValue)                                                        \
  X(Clp_primalColumnSolution)                                                  \
  X(Clp_statusArray)                                                           \
  X(Clp_chgColumnLower)                                                        \
  X(Clp_chgColumnUpper)                                                        \
  X(Clp_copyinStatus)

/// The functions of CBC's C interface that planning calls (a programme its
/// own branch and bound does not finish).
#define TP_CBC_FUNCTIONS(X)                                                    \
  X(Cbc_newModel)                                                              \
  X(Cbc_deleteModel)                                                           \
  X(Cbc_setLogLevel)                                                           \
  X(Cbc_loadProblem)                                                           \
  X(Cbc_setInteger)                                                            \
  X(Cbc_setAllowableGap)                                                       \
  X(Cbc_setAllowableFractionGap)                                               \
  X(Cbc_setParameter)                                                          \
  X(Cbc_setCutoff)                                                             \
  X(Cbc_isProvenInfeasible)                                                    \
  X(Cbc_solve)                                                                 \
  X(Cbc_getNumRows)                                                            \
  X(Cbc_getNodeCount)                                                          \
  X(Cbc_isProvenOptimal)                                                       \
  X(Cbc_status)                                                                \
  X(Cbc_secondaryStatus)                                                       \
  X(Cbc_getColSolution)

/// Clp and, once asked for, CBC, loaded: each member points at the
/// function of its name.
struct CoinSolvers {
#define TP_COIN_MEMBER(name) decltype(&::name) name = nullptr;
  TP_CLP_FUNCTIONS(TP_COIN_MEMBER)
  TP_CBC_FUNCTIONS(TP_COIN_MEMBER)
#undef TP_COIN_MEMBER

  /// Clp, loaded by the first call, and with `cbc` CBC too (each once,
  /// thread-safe: CBC's library alone costs 2-3 ms to load, and most
  /// programmes never reach it). Null, with `error` saying which library or
  /// function is missing, when they cannot be.
  static const CoinSolvers *get(std::string &error, bool cbc = false);
  /// Starts loading Clp on a thread of its own, for a pass that will likely
  /// solve a programme after some work of its own: loading Clp (with
  /// CoinUtils, LAPACK, OpenBLAS) takes 6-8 ms, which then overlaps that
  /// work. `get` waits for it. Once per process.
  static void loadInBackground();
};

} // namespace mlir::tp

#endif // TP_LIB_DIALECT_TP_TRANSFORMS_COINSOLVERS_H
