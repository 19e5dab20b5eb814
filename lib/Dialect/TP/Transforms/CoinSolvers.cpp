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

#include <mutex>
#include <thread>

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

static CoinSolvers solvers;

/// Loads `name` (from --tp-coin-library-dir when given); an empty string, or
/// why it cannot be loaded.
static std::string loadLibrary(const char *name) {
  std::string path = name;
  if (!clCoinLibraryDir.empty()) {
    llvm::SmallString<128> inDir(clCoinLibraryDir.getValue());
    llvm::sys::path::append(inDir, name);
    path = std::string(inDir);
  }
  std::string why;
  if (llvm::sys::DynamicLibrary::getPermanentLibrary(path.c_str(), &why)
          .isValid())
    return std::string();
  return "cannot load COIN-OR's " + path + " (" + why +
         "); install coinor-libcbc3 (Debian) or an equivalent";
}

#define TP_COIN_LOOKUP(name)                                                   \
  solvers.name = reinterpret_cast<decltype(solvers.name)>(                     \
      llvm::sys::DynamicLibrary::SearchForAddressOfSymbol(#name));             \
  if (!solvers.name)                                                           \
    return "COIN-OR's " TP_CLP_LIBRARY " and " TP_CBC_LIBRARY                  \
           " do not define " #name;

static std::string loadClp() {
  if (std::string error = loadLibrary(TP_CLP_LIBRARY); !error.empty())
    return error;
  TP_CLP_FUNCTIONS(TP_COIN_LOOKUP)
  return std::string();
}

static std::string loadCbc() {
  if (std::string error = loadLibrary(TP_CBC_LIBRARY); !error.empty())
    return error;
  TP_CBC_FUNCTIONS(TP_COIN_LOOKUP)
  return std::string();
}
#undef TP_COIN_LOOKUP

const CoinSolvers *CoinSolvers::get(std::string &error, bool cbc) {
  static const std::string clpError = loadClp();
  error = clpError;
  if (error.empty() && cbc) {
    static const std::string cbcError = loadCbc();
    error = cbcError;
  }
  return error.empty() ? &solvers : nullptr;
}

void CoinSolvers::loadInBackground() {
  static std::once_flag started;
  std::call_once(started, [] {
    std::thread([] {
      std::string error;
      (void)get(error);
    }).detach();
  });
}
