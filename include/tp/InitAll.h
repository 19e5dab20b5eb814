//===- InitAll.h - Register every dialect and pass tp-mlir uses -*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TP_INITALL_H
#define TP_INITALL_H

namespace mlir {
class DialectRegistry;
} // namespace mlir

namespace mlir::tp {

/// Registers the tp dialect and the upstream dialects (and their interface
/// extensions) that tp-mlir's inputs and lowerings use.
void registerAllDialects(DialectRegistry &registry);

/// Registers tp-mlir's passes and the upstream passes, so that tools accept
/// the flags that mlir-opt users know.
void registerAllPasses();

/// Makes the crash handler's message say what a crash means here: a bug to
/// report with its input, unless it is one of MLIR 22's own, listed in
/// docs/known-issues.md. The tools call it first thing.
void setCrashMessage();

} // namespace mlir::tp

#endif // TP_INITALL_H
