//===- Program.h - A loaded program library ---------------------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_SRC_PROGRAM_H
#define TPRT_SRC_PROGRAM_H

#include "Internal.h"

#include <atomic>
#include <memory>
#include <optional>

namespace tprt {

/// tprt_entry_<f>(ctx, buffers): buffers holds each argument's, then each
/// result's, local buffer.
using EntryFn = void (*)(tprt_rank_context *, void **);

struct Function {
  std::string name;
  int numArgs = 0, numResults = 0;
  std::string meshName;
  std::vector<std::string> axisNames;
  tprt_mesh mesh{1, {1}};
  std::vector<tprt_tensor_info> args, results;
  /// Each argument's and result's name ("" if it has none); the infos'
  /// `name` points into these once the whole manifest is read.
  std::vector<std::string> argNames, resultNames;
  /// The argument each result is written in (`donate` lines: the program
  /// writes it in that argument's buffer, and the entry point takes no
  /// buffer for it), or -1; empty when none is.
  std::vector<int32_t> donatedFrom;
  /// Bytes of the arena its intermediates are laid out in (`arena` line,
  /// tp-plan-arena): the entry point's last buffer, which the session
  /// allocates once per rank; 0 for none.
  int64_t arenaBytes = 0;
  /// Bytes of the buffer its constants are uploaded into once (`constants`
  /// line, tp-upload-constants on CUDA): the entry point's buffer before the
  /// arena, which the session allocates once per rank; 0 for none.
  int64_t constantsBytes = 0;
  /// The arguments the host code reads (`hostread` lines, tp-mark-host-reads:
  /// on a GPU they are passed in host memory), one flag per argument; empty
  /// when none is.
  std::vector<char> hostReads;
  bool readOnHost(int32_t arg) const {
    return !hostReads.empty() && hostReads[static_cast<size_t>(arg)];
  }
  /// The argument donated to result `i`, or -1.
  int32_t donor(int32_t i) const {
    return donatedFrom.empty() ? -1 : donatedFrom[static_cast<size_t>(i)];
  }
  /// The argument `arg` is donated to a result.
  bool donated(int32_t arg) const {
    return std::find(donatedFrom.begin(), donatedFrom.end(), arg) !=
           donatedFrom.end();
  }
  EntryFn entry = nullptr;
};

/// The target a program was compiled for (the manifest's `target`), one of
/// tprt_targets.def.
enum class Target {
#define TPRT_TARGET(name, Name, onDevice, defaultBackend, description) Name,
#include "tprt/tprt_targets.def"
};

const char *targetName(Target target);
/// The target spelled `name`, or nothing.
std::optional<Target> targetNamed(const std::string &name);
/// The targets' names, "cpu, cuda", for messages.
std::string targetNames(const char *separator = ", ");

/// How f32 GEMMs may compute (the manifest's `precision`, tp-compile
/// --matmul-precision): IEEE f32; TF32 inputs (PyTorch's allow_tf32, JAX's
/// default on GPUs); bf16 inputs; f32 accumulation in every case. A CPU
/// rank computes IEEE f32 at every setting, as PyTorch and JAX do on CPUs.
enum class MatmulPrecision : int32_t { Highest = 0, High = 1, Medium = 2 };

const char *precisionName(MatmulPrecision precision);

/// Parses and validates a whole manifest (format in Program.cpp) into
/// `functions` and `target`; errors name `path` and the line. Never throws
/// for bad text.
tprt_status parseManifest(const std::string &text,
                          std::vector<Function> &functions, Target &target,
                          const std::string &path,
                          MatmulPrecision *precision = nullptr);

} // namespace tprt

struct tprt_program_s {
  void *handle = nullptr;
  /// The library's checksum (ProgramFile.h).
  uint64_t checksum = 0;
  std::vector<tprt::Function> functions;
  tprt::Target target = tprt::Target::Cpu;
  tprt::MatmulPrecision precision = tprt::MatmulPrecision::Highest;
  /// Ranks of a run that were abandoned while still running the program's
  /// code (see tprt_session_run): the library then stays loaded.
  std::atomic<int> abandonedRanks{0};
};

#endif // TPRT_SRC_PROGRAM_H
