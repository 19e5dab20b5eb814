//===- ParseFuzzer.cpp - Fuzzes the parser and verifiers ------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Any bytes, parsed as a module with every dialect tp-opt knows and verified:
// the tp dialect's attribute and op parsers and its verifiers (shardings,
// meshes, function sharding) must reject bad text with a diagnostic. A module
// that parses is printed and parsed again: the printer's output must be
// accepted by the parser.
//
//===----------------------------------------------------------------------===//

#include "FuzzMLIR.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  mlir::MLIRContext &context = tpfuzz::nextContext();
  mlir::OwningOpRef<mlir::ModuleOp> module = tpfuzz::parse(context, data, size);
  if (!module)
    return 0;
  std::string printed;
  llvm::raw_string_ostream os(printed);
  module->print(os);
  mlir::OwningOpRef<mlir::ModuleOp> again =
      tpfuzz::parse(context, reinterpret_cast<const uint8_t *>(printed.data()),
                    printed.size());
  if (!again) {
    llvm::errs() << "tp-fuzz: the printed module does not parse again:\n"
                 << printed << "\n";
    std::abort();
  }
  return 0;
}
