//===- ReportRegisters.cpp - What ptxas says of each kernel ---------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The second half of the kernel report (tp-report-kernels is the first):
// each GPU module, serialized to PTX by its own NVVM target, goes through
// the toolkit's `ptxas -v` for the target's chip, and each kernel's
// registers, spills, stack frame and shared memory are printed on stderr,
// then the module's summary (the most registers a kernel uses, the spill
// bytes of all of them). The module is left as it is.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/GPU/IR/CompilationInterfaces.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace mlir::tp {
#define GEN_PASS_DEF_REPORTREGISTERSPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// What ptxas -v says of one kernel.
struct Usage {
  int64_t registers = -1, stackFrame = 0, spillStores = 0, spillLoads = 0,
          shared = 0;
};

/// The first integer after `key` in `line`, or nothing.
std::optional<int64_t> numberAfter(StringRef line, StringRef key) {
  size_t at = line.find(key);
  if (at == StringRef::npos)
    return std::nullopt;
  StringRef rest = line.drop_front(at + key.size()).ltrim();
  int64_t value = 0;
  StringRef digits = rest.take_while(llvm::isDigit);
  if (digits.empty() || digits.getAsInteger(10, value))
    return std::nullopt;
  return value;
}

/// The number that ends just before `key` in `line` ("0 bytes spill
/// stores"), or nothing.
std::optional<int64_t> numberBefore(StringRef line, StringRef key) {
  size_t at = line.find(key);
  if (at == StringRef::npos)
    return std::nullopt;
  StringRef head = line.take_front(at).rtrim();
  StringRef digits =
      head.take_back(head.size() - head.find_last_not_of("0123456789") - 1);
  int64_t value = 0;
  if (digits.empty() || digits.getAsInteger(10, value))
    return std::nullopt;
  return value;
}

/// Parses ptxas -v's report: "Function properties for K" then "N bytes
/// stack frame, N bytes spill stores, N bytes spill loads", and "Compiling
/// entry function 'K'" then "Used N registers, ... N bytes smem".
std::map<std::string, Usage> parseUsage(StringRef text) {
  std::map<std::string, Usage> usage;
  std::string current;
  SmallVector<StringRef> lines;
  text.split(lines, '\n');
  for (StringRef line : lines) {
    for (StringRef marker :
         {"Compiling entry function '", "Function properties for "}) {
      size_t at = line.find(marker);
      if (at == StringRef::npos)
        continue;
      StringRef name = line.drop_front(at + marker.size());
      current = name.take_until([](char c) { return c == '\'' || c == ' '; })
                    .trim()
                    .str();
    }
    if (current.empty())
      continue;
    Usage &u = usage[current];
    if (std::optional<int64_t> v = numberAfter(line, "Used "))
      u.registers = *v;
    if (std::optional<int64_t> v = numberBefore(line, "bytes stack frame"))
      u.stackFrame = *v;
    if (std::optional<int64_t> v = numberBefore(line, "bytes spill stores"))
      u.spillStores = *v;
    if (std::optional<int64_t> v = numberBefore(line, "bytes spill loads"))
      u.spillLoads = *v;
    if (std::optional<int64_t> v = numberBefore(line, "bytes smem"))
      u.shared = *v;
  }
  return usage;
}

struct ReportRegistersPass
    : public tp::impl::ReportRegistersPassBase<ReportRegistersPass> {
  using Base::Base;

  void runOnOperation() override {
    llvm::raw_ostream &os = llvm::errs();
    std::string ptxas = findPtxas();
    for (auto module : getOperation().getOps<gpu::GPUModuleOp>()) {
      ArrayAttr targets = module.getTargetsAttr();
      auto nvvm = targets && !targets.empty()
                      ? dyn_cast<NVVM::NVVMTargetAttr>(targets[0])
                      : nullptr;
      if (!nvvm) {
        os << "tp-report: registers: GPU module @" << module.getName()
           << " has no NVVM target (gpu-nvvm-attach-target): not compiled\n";
        continue;
      }
      if (ptxas.empty()) {
        os << "tp-report: registers: no ptxas in '" << toolkit
           << "/bin' or on PATH: registers and spills not reported\n";
        return;
      }
      // PTX from the module's own target, as gpu-module-to-binary makes it.
      gpu::TargetOptions options(toolkit, {}, {}, {},
                                 gpu::CompilationTarget::Assembly);
      auto target = cast<gpu::TargetAttrInterface>(nvvm);
      std::optional<SmallVector<char, 0>> ptx =
          target.serializeToObject(module, options);
      if (!ptx) {
        os << "tp-report: registers: GPU module @" << module.getName()
           << " does not serialize to PTX\n";
        continue;
      }
      std::string report;
      if (!runPtxas(ptxas, StringRef(ptx->data(), ptx->size()), nvvm.getChip(),
                    report)) {
        os << "tp-report: registers: ptxas failed on @" << module.getName()
           << ": " << StringRef(report).trim() << "\n";
        continue;
      }
      std::map<std::string, Usage> usage = parseUsage(report);
      int64_t kernels = 0, maxRegisters = 0, spills = 0, spilling = 0;
      std::string widest;
      // The module's kernels are LLVM functions by now: ptxas's entries, in
      // name order.
      for (const auto &[name, u] : usage) {
        if (u.registers < 0)
          continue;
        ++kernels;
        if (u.registers > maxRegisters) {
          maxRegisters = u.registers;
          widest = name;
        }
        spills += u.spillStores + u.spillLoads;
        spilling += (u.spillStores + u.spillLoads) > 0;
        os << "tp-report: ptxas " << nvvm.getChip() << ": " << name << ": "
           << u.registers << " registers, " << u.spillStores
           << " B spill stores, " << u.spillLoads << " B spill loads, "
           << u.stackFrame << " B stack frame, " << u.shared << " B shared\n";
      }
      os << "tp-report: ptxas " << nvvm.getChip() << ": " << kernels
         << (kernels == 1 ? " kernel" : " kernels");
      if (kernels)
        os << ", at most " << maxRegisters << " registers (" << widest << ")";
      if (spills)
        os << ", " << spills << " B of spills in " << spilling
           << (spilling == 1 ? " kernel" : " kernels") << "\n";
      else
        os << ", no spills\n";
    }
  }

  /// ptxas of the toolkit, else on PATH; empty when there is none.
  std::string findPtxas() const {
    if (!toolkit.empty()) {
      SmallString<256> path(toolkit);
      llvm::sys::path::append(path, "bin", "ptxas");
      if (llvm::sys::fs::can_execute(path))
        return std::string(path);
    }
    llvm::ErrorOr<std::string> found = llvm::sys::findProgramByName("ptxas");
    return found ? *found : std::string();
  }

  /// Runs `ptxas -v` on `ptx` for `chip`; its report (stderr) in `report`.
  bool runPtxas(StringRef ptxas, StringRef ptx, StringRef chip,
                std::string &report) const {
    SmallString<128> input, log;
    int fd = -1;
    if (llvm::sys::fs::createTemporaryFile("tp-report", "ptx", fd, input))
      return false;
    {
      llvm::raw_fd_ostream file(fd, /*shouldClose=*/true);
      file << ptx;
    }
    if (llvm::sys::fs::createTemporaryFile("tp-report", "log", log)) {
      llvm::sys::fs::remove(input);
      return false;
    }
    std::string arch = ("-arch=" + chip).str();
    SmallVector<StringRef> args = {ptxas, "-v", arch, input, "-o", "/dev/null"};
    std::optional<StringRef> redirects[] = {std::nullopt, StringRef(log),
                                            StringRef(log)};
    std::string error;
    int status = llvm::sys::ExecuteAndWait(ptxas, args, std::nullopt, redirects,
                                           0, 0, &error);
    if (auto text = llvm::MemoryBuffer::getFile(log))
      report = (*text)->getBuffer().str();
    llvm::sys::fs::remove(input);
    llvm::sys::fs::remove(log);
    if (status != 0 && report.empty())
      report = error;
    return status == 0;
  }
};

} // namespace
