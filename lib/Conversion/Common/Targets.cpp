//===- Targets.cpp - The targets tp-mlir compiles for ---------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Targets.h"

using namespace mlir;
using namespace mlir::tp;

// Made on first use: tools read it while their command-line options are
// constructed, before this file's statics would be.
ArrayRef<TargetInfo> mlir::tp::getTargets() {
  static const TargetInfo targets[] = {
#define TPRT_TARGET(name, Name, onDevice, defaultBackend, description)         \
  {#name, description, onDevice != 0, "tp-lower-to-" #name, defaultBackend},
#include "tprt/tprt_targets.def"
  };
  return targets;
}

const TargetInfo *mlir::tp::lookupTarget(StringRef name) {
  for (const TargetInfo &target : getTargets())
    if (target.name == name)
      return &target;
  return nullptr;
}

std::string mlir::tp::getTargetNames(StringRef separator) {
  std::string names;
  for (const TargetInfo &target : getTargets()) {
    if (!names.empty())
      names += separator;
    names += target.name;
  }
  return names;
}
