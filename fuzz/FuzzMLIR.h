//===- FuzzMLIR.h - Shared pieces of the MLIR fuzz targets ------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The fuzz targets that feed text to the compiler share one context (made
// again every few thousand inputs, so that interned attributes do not grow
// without bound), drop every diagnostic, and run passes under an oracle that
// is stricter than "did not crash": a pass that fails must have said why (an
// error diagnostic), and a pass that succeeds must leave IR that verifies.
// Either broken promise aborts, so libFuzzer keeps the input.
//
//===----------------------------------------------------------------------===//

#ifndef TP_FUZZ_FUZZMLIR_H
#define TP_FUZZ_FUZZMLIR_H

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/OwningOpRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstddef>
#include <cstdint>

namespace mlir {
class MLIRContext;
class OpPassManager;
} // namespace mlir

namespace tpfuzz {

/// The context for the next input: every dialect tp-opt registers, plus the
/// LLVM IR translations; single-threaded; diagnostics dropped.
mlir::MLIRContext &nextContext();

/// Parses (and verifies) `data` as a module; null when it does not.
mlir::OwningOpRef<mlir::ModuleOp> parse(mlir::MLIRContext &context,
                                        const uint8_t *data, size_t size);

/// Runs the passes `build` adds on `module` under the oracle (see the file
/// comment). Returns whether the pipeline succeeded.
bool runChecked(mlir::ModuleOp module,
                llvm::function_ref<void(mlir::OpPassManager &)> build);

} // namespace tpfuzz

#endif // TP_FUZZ_FUZZMLIR_H
