//===- tp-opt.cpp - The tp-mlir optimizer driver --------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// mlir-opt with the tp dialect and tp-mlir's passes: it takes every flag that
// mlir-opt takes. Its input is scanned first for what would crash MLIR 22's
// parser (tp/ParserGuard.h), which gets a diagnostic instead.
//
//===----------------------------------------------------------------------===//

#include "tp/InitAll.h"
#include "tp/ParserGuard.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"

int main(int argc, char **argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::tp::setCrashMessage();
  mlir::DialectRegistry registry;
  mlir::tp::registerAllDialects(registry);
  mlir::tp::registerAllPasses();
  auto [inputFile, outputFile] = mlir::registerAndParseCLIOptions(
      argc, argv, "tp-mlir optimizer driver\n", registry);
  auto config = mlir::MlirOptMainConfig::createFromCLOptions();
  // What is printed was verified already: on parsing, and by the pass
  // manager after every pass that changed it. The printer then need not
  // verify it a third time to choose the generic form (at 1,024 MLP layers
  // that verification is 0.08 s of 1.1 s); --verify-each=false or
  // --mlir-very-unsafe-disable-verifier-on-parsing keep it, and so do the
  // --mlir-print-ir-* options (the IR after a failed pass may be invalid).
  if (config.shouldVerifyPasses() && config.shouldVerifyOnParsing()) {
    auto &options = llvm::cl::getRegisteredOptions();
    bool printsIR = false;
    for (auto &option : options)
      printsIR |= option.first.starts_with("mlir-print-ir-") &&
                  option.second->getNumOccurrences() > 0;
    auto it = options.find("mlir-print-assume-verified");
    if (!printsIR && it != options.end() &&
        it->second->getNumOccurrences() == 0)
      static_cast<llvm::cl::opt<bool> *>(it->second)->setValue(true);
  }
  if (config.shouldShowDialects() || config.shouldListPasses())
    return mlir::asMainReturnCode(
        mlir::MlirOptMain(argc, argv, inputFile, outputFile, registry));

  // MlirOptMain's own steps, with the input scanned for what would crash
  // MLIR 22's parser (ParserGuard.h) before it is parsed.
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(inputFile, &error);
  if (!input) {
    llvm::errs() << error << "\n";
    return 1;
  }
  {
    llvm::SourceMgr scan;
    scan.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBuffer(input->getBuffer(),
                                         input->getBufferIdentifier(),
                                         /*RequiresNullTerminator=*/false),
        llvm::SMLoc());
    if (!mlir::tp::checkParserHazards(scan))
      return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(outputFile, &error);
  if (!output) {
    llvm::errs() << error << "\n";
    return 1;
  }
  if (mlir::failed(
          mlir::MlirOptMain(output->os(), std::move(input), registry, config)))
    return 1;
  output->keep();
  return 0;
}
