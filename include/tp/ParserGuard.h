//===- ParserGuard.h - Inputs that would crash MLIR 22's parser -*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// MLIR 22's custom parsers of linalg.transpose, linalg.broadcast and
// linalg.reduce read their `permutation` / `dimensions` list with
// DenseI64ArrayAttr::parse and store the result unchecked: a malformed list
// (`[?, 0]`, `[1 0]`, `[1, 0,]`, `= 2`, an integer beyond 64 bits) reports an
// error and then crashes on the null attribute (docs/known-issues.md).
// Its recursive-descent parser also overflows the stack on brackets nested
// some thousands deep (`affine_map<(d0) -> ((((...`, `[[[[...`); the custom
// parsers of llvm.insertvalue / llvm.extractvalue crash on a position beyond
// 32 bits, and those of linalg.batch_matmul / batch_reduce_matmul on element
// types their body cannot combine (index; complex beside real).
// tp-mlir cannot patch Debian's libMLIR, so its tools scan their input
// first, with the grammar that parser accepts, and refuse such a list, or
// nesting deeper than 512 levels, with a diagnostic at the bad token.
//
//===----------------------------------------------------------------------===//

#ifndef TP_PARSERGUARD_H
#define TP_PARSERGUARD_H

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/SMLoc.h"

#include <optional>
#include <string>

namespace llvm {
class SourceMgr;
} // namespace llvm

namespace mlir::tp {

/// An input that MLIR 22's parser would crash on: where, and why.
struct ParserHazard {
  llvm::SMLoc loc; // points into the scanned text
  std::string message;
};

/// The first `permutation = ` / `dimensions = ` list of a linalg.transpose,
/// linalg.broadcast or linalg.reduce in custom form in `text` that
/// DenseI64ArrayAttr::parse would reject, or the first bracket nested deeper
/// than 512 levels; std::nullopt when there is none.
std::optional<ParserHazard> findParserHazard(llvm::StringRef text);

/// Scans the main buffer of `sourceMgr`; on a hazard prints it as an error
/// with its location (file:line:col and the line) to llvm::errs() and
/// returns false.
bool checkParserHazards(llvm::SourceMgr &sourceMgr);

} // namespace mlir::tp

#endif // TP_PARSERGUARD_H
