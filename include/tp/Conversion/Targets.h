//===- Targets.h - The targets tp-mlir compiles for -------------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The registry of targets, made from the runtime's one list
// (runtime/include/tprt/tprt_targets.def): each target's name, what it is,
// whether its ranks keep tensors on a device, and the pipeline that lowers
// to it (`--tp-lower-to-<name>`, registered in Registration.cpp with its
// options). tp-compile --target, tp-record-manifest and the runtime read
// the same list; a new target is a line there, a lowering folder beside
// TPToCPU/ and TPToCUDA/, and its pipeline.
//
//===----------------------------------------------------------------------===//

#ifndef TP_CONVERSION_TARGETS_H
#define TP_CONVERSION_TARGETS_H

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <optional>
#include <string>

namespace mlir {
class OpPassManager;
} // namespace mlir

namespace mlir::tp {

struct TargetInfo {
  /// As tp-compile --target, manifests and the runtime spell it.
  StringRef name;
  StringRef description;
  /// True when its ranks keep tensors in a device's memory.
  bool onDevice;
  /// The registered pipeline that lowers local form to it.
  StringRef pipeline;
  /// The communicator backend its sessions use by default.
  StringRef defaultBackend;
};

/// Every target, in tprt_targets.def's order.
ArrayRef<TargetInfo> getTargets();

/// The target spelled `name`, or null.
const TargetInfo *lookupTarget(StringRef name);

/// The targets' names joined by `separator`, for messages and help.
std::string getTargetNames(StringRef separator = ", ");

/// What a driver (tp-compile) asks of a target's lowering. Each target's
/// pipeline reads what it takes and refuses, by name, an option given that
/// it does not take.
struct TargetLowering {
  bool outlineLayers = true;
  /// Unset: the pipeline's default; 0: never cut functions.
  std::optional<unsigned> maxFunctionOps;
  std::string matmulPrecision = "highest";
  /// Report what the lowering makes (a target may report nothing more).
  bool report = false;
  std::optional<std::string> costModel;
  /// Host lowerings: the plain reference, the emulated GPU mapping.
  bool reference = false;
  bool emulateGpuMapping = false;
  /// Device code: the architecture and the toolkit that compiles it.
  std::optional<std::string> gpuArch;
  std::optional<std::string> toolkit;
};

/// Adds `target`'s lowering (lib/Conversion/Pipelines) to `pm`; on an option
/// the target does not take, fails with `error` naming it.
LogicalResult buildTargetPipeline(OpPassManager &pm, const TargetInfo &target,
                                  const TargetLowering &options,
                                  std::string &error);

} // namespace mlir::tp

#endif // TP_CONVERSION_TARGETS_H
