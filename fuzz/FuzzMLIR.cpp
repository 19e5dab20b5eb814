//===- FuzzMLIR.cpp - Shared pieces of the MLIR fuzz targets --------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "FuzzMLIR.h"

#include "tp/InitAll.h"
#include "tp/ParserGuard.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassInstrumentation.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Target/LLVMIR/Dialect/Builtin/BuiltinToLLVMIRTranslation.h"
#include "mlir/Target/LLVMIR/Dialect/LLVMIR/LLVMToLLVMIRTranslation.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>
#include <memory>
#include <vector>

using namespace mlir;

namespace {

/// Inputs between two fresh contexts.
constexpr int kInputsPerContext = 4096;

/// Error diagnostics emitted since the context was made.
int numErrors = 0;

struct FuzzContext {
  FuzzContext() {
    DialectRegistry registry;
    tp::registerAllDialects(registry);
    registerBuiltinDialectTranslation(registry);
    registerLLVMDialectTranslation(registry);
    context = std::make_unique<MLIRContext>(registry,
                                            MLIRContext::Threading::DISABLED);
    context->loadAllAvailableDialects();
    context->printOpOnDiagnostic(false);
    context->printStackTraceOnDiagnostic(false);
    handler = context->getDiagEngine().registerHandler([](Diagnostic &diag) {
      if (diag.getSeverity() == DiagnosticSeverity::Error)
        ++numErrors;
      return success();
    });
  }
  std::unique_ptr<MLIRContext> context;
  DiagnosticEngine::HandlerID handler;
};

[[noreturn]] void brokenPromise(Pass *pass, const char *what) {
  llvm::errs() << "tp-fuzz: pass '" << pass->getArgument() << "' ("
               << pass->getName() << ") " << what << "\n";
  llvm::errs().flush();
  std::abort();
}

/// The oracle: see FuzzMLIR.h.
class Oracle : public PassInstrumentation {
public:
  void runBeforePass(Pass *pass, Operation *op) override {
    errorsBefore.push_back(numErrors);
  }
  void runAfterPass(Pass *pass, Operation *op) override {
    errorsBefore.pop_back();
    if (failed(verify(op)))
      brokenPromise(pass, "succeeded but left IR that does not verify");
  }
  void runAfterPassFailed(Pass *pass, Operation *op) override {
    int before = errorsBefore.back();
    errorsBefore.pop_back();
    if (numErrors == before)
      brokenPromise(pass, "failed without an error diagnostic");
  }

private:
  std::vector<int> errorsBefore;
};

} // namespace

MLIRContext &tpfuzz::nextContext() {
  static std::unique_ptr<FuzzContext> current;
  static int inputs = 0;
  if (!current || ++inputs % kInputsPerContext == 0)
    current = std::make_unique<FuzzContext>();
  return *current->context;
}

OwningOpRef<ModuleOp> tpfuzz::parse(MLIRContext &context, const uint8_t *data,
                                    size_t size) {
  // A null-terminated copy, as every tool reads a file: MLIR's lexer relies
  // on the terminator (parseSourceString would lex past the input's end).
  llvm::StringRef text(reinterpret_cast<const char *>(data), size);
  // The tools refuse what MLIR 22's parser would crash on; so do the targets.
  if (mlir::tp::findParserHazard(text))
    return nullptr;
  llvm::SourceMgr sourceMgr;
  sourceMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "fuzz-input"), llvm::SMLoc());
  return parseSourceFile<ModuleOp>(sourceMgr, ParserConfig(&context));
}

bool tpfuzz::runChecked(ModuleOp module,
                        llvm::function_ref<void(OpPassManager &)> build) {
  PassManager pm(module->getContext());
  // The oracle verifies after every pass itself, and tells a pass that broke
  // the IR from one that refused the input.
  pm.enableVerifier(false);
  pm.addInstrumentation(std::make_unique<Oracle>());
  build(pm);
  return succeeded(pm.run(module));
}
