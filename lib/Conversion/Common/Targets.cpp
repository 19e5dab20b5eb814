//===- Targets.cpp - The targets tp-mlir compiles for ---------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Targets.h"

using namespace mlir;
using namespace mlir::tp;

static const TargetInfo kTargets[] = {
#define TPRT_TARGET(name, Name, onDevice, defaultBackend, description)         \
  {#name, description, onDevice != 0, "tp-lower-to-" #name, defaultBackend},
#include "tprt/tprt_targets.def"
};

ArrayRef<TargetInfo> mlir::tp::getTargets() { return kTargets; }

const TargetInfo *mlir::tp::lookupTarget(StringRef name) {
  for (const TargetInfo &target : kTargets)
    if (target.name == name)
      return &target;
  return nullptr;
}

std::string mlir::tp::getTargetNames(StringRef separator) {
  std::string names;
  for (const TargetInfo &target : kTargets) {
    if (!names.empty())
      names += separator;
    names += target.name;
  }
  return names;
}
