//===- tp-opt.cpp - The tp-mlir optimizer driver --------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// mlir-opt with the tp dialect and tp-mlir's passes: it takes every flag that
// mlir-opt takes.
//
//===----------------------------------------------------------------------===//

#include "tp/InitAll.h"

#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"

int main(int argc, char **argv) {
  mlir::tp::setCrashMessage();
  mlir::DialectRegistry registry;
  mlir::tp::registerAllDialects(registry);
  mlir::tp::registerAllPasses();
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "tp-mlir optimizer driver\n", registry));
}
