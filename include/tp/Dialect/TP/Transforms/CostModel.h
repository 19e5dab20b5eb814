//===- CostModel.h - Communication cost of collectives ----------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The bytes each collective sends are in tp/Dialect/TP/IR/Collectives.h.
//
// Communication is weighed against redundant work: an op whose loops are not
// split repeats them on every device. One iteration point of an op counts as
// kBytesPerIterationPoint bytes sent (about 2 flops at ~5 flops per byte
// moved), so a choice that saves a little communication but replicates a
// contraction loses to splitting it (Megatron's row-parallel projection).
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_TRANSFORMS_COSTMODEL_H
#define TP_DIALECT_TP_TRANSFORMS_COSTMODEL_H

#include "mlir/IR/Types.h"
#include "mlir/Support/LLVM.h"
#include "tp/Dialect/TP/IR/Collectives.h"
#include "llvm/ADT/StringRef.h"
#include <array>
#include <optional>
#include <string>

namespace mlir::tp {

constexpr double kBytesPerIterationPoint = 0.4;

/// A machine as the automatic planner (--tp-propagate auto-plan) sees one of
/// its devices: how fast it runs GEMMs and memory-bound ops, and what each
/// collective costs, modelled as latency + bus bytes / bus bandwidth (the
/// bus bytes are collectiveBytes' ring formulas, as nccl-tests reports
/// "busbw"). The constants come from a machine-model file (JSON, format in
/// docs/cost-model.md; `tprt-bench --calibrate` measures one), or are the
/// built-in H200 + NVLink node's (docs/cost-model.md gives their sources).
struct MachineModel {
  struct Collective {
    /// Seconds of a call that moves nothing, plus per device past the first.
    double latency = 0;
    double latencyPerDevice = 0;
    /// Bus bytes per second.
    double busBandwidth = 1;
  };

  std::string name;
  std::string source;
  /// GEMM flop/s of one device, with 32-bit and with 16-bit elements.
  double gemmFlops32 = 1;
  double gemmFlops16 = 1;
  /// Bytes per second one device reads and writes in memory-bound ops.
  double memoryBandwidth = 1;
  /// Indexed by CollectiveKind (all_slice moves nothing: unused).
  std::array<Collective, kNumCollectiveKinds> collectives;

  /// One NVIDIA H200 SXM of an 8-GPU NVLink node.
  static MachineModel h200();
  /// "h200" (the built-in model) or the path of a machine-model file; on
  /// failure, `error` says what is wrong (the file, the key, the bad value).
  static std::optional<MachineModel> load(StringRef nameOrPath,
                                          std::string &error);
  /// The file format (what load reads back).
  std::string toJSON() const;

  double collectiveSeconds(CollectiveKind kind, int64_t groupSize,
                           double bytes) const;
  double gemmSeconds(double flops, Type elementType) const;
  double memorySeconds(double bytes) const { return bytes / memoryBandwidth; }
};

} // namespace mlir::tp

#endif // TP_DIALECT_TP_TRANSFORMS_COSTMODEL_H
