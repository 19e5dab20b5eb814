//===- CoinSolvers.cpp - COIN-OR's CBC and Clp, loaded on first use -------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "CoinSolvers.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/Path.h"

using namespace mlir;
using namespace mlir::tp;

// The libraries' names (their sonames), found by CMake where tp-mlir was
// built; the dynamic loader resolves them as it would have resolved a link.
#ifndef TP_CBC_LIBRARY
#error "TP_CBC_LIBRARY must name CBC's C-interface library"
#endif
#ifndef TP_CLP_LIBRARY
#error "TP_CLP_LIBRARY must name Clp's library"
#endif

/// Test aid: where to load the libraries from instead of the loader's path.
static llvm::cl::opt<std::string> clCoinLibraryDir(
    "tp-coin-library-dir", llvm::cl::Hidden,
    llvm::cl::desc("Directory to load COIN-OR CBC and Clp from when "
                   "automatic planning first solves a programme (default: "
                   "the dynamic loader's search path)"));

static const CoinSolvers *load(std::string &error) {
  static CoinSolvers solvers;
  // Clp first: CBC's library needs it.
  for (const char *name : {TP_CLP_LIBRARY, TP_CBC_LIBRARY}) {
    std::string path = name;
    if (!clCoinLibraryDir.empty()) {
      llvm::SmallString<128> inDir(clCoinLibraryDir.getValue());
      llvm::sys::path::append(inDir, name);
      path = std::string(inDir);
    }
    std::string why;
    llvm::sys::DynamicLibrary library =
        llvm::sys::DynamicLibrary::getPermanentLibrary(path.c_str(), &why);
    if (!library.isValid()) {
      error = "cannot load COIN-OR's " + path + " (" + why +
              "); install coinor-libcbc3 (Debian) or an equivalent";
      return nullptr;
    }
  }
  // Each function from whichever of the two defines it.
#define TP_COIN_LOOKUP(name)                                                   \
  solvers.name = reinterpret_cast<decltype(solvers.name)>(                     \
      llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(#name));             \
  if (!solvers.name) {                                                         \
    error = "COIN-OR's " TP_CBC_LIBRARY " and " TP_CLP_LIBRARY                 \
            " do not define " #name;                                           \
    return nullptr;                                                            \
  }
  TP_COIN_FUNCTIONS(TP_COIN_LOOKUP)
#undef TP_COIN_LOOKUP
  return &solvers;
}

const CoinSolvers *CoinSolvers::get(std::string &error) {
  static std::string loadError;
  static const CoinSolvers *solvers = load(loadError);
  error = loadError;
  return solvers;
}
