//===- CostModel.cpp - Communication cost of collectives ------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Dialect/TP/Transforms/CostModel.h"

#include "mlir/IR/BuiltinTypes.h"

#include <cmath>

#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::tp;

//===----------------------------------------------------------------------===//
// MachineModel
//===----------------------------------------------------------------------===//

static constexpr const char *kMachineModelFormat = "tp-mlir machine model 1";

/// The kinds a machine model gives constants for: those that move data.
static SmallVector<CollectiveKind> modelledKinds() {
  SmallVector<CollectiveKind> kinds;
  for (unsigned k = 0; k < kNumCollectiveKinds; ++k)
    if (collectiveMovesData(static_cast<CollectiveKind>(k)))
      kinds.push_back(static_cast<CollectiveKind>(k));
  return kinds;
}

MachineModel MachineModel::h200() {
  MachineModel m;
  m.name = "h200";
  m.source = "built in: one NVIDIA H200 SXM of an 8-GPU NVLink node "
             "(docs/cost-model.md)";
  m.gemmFlops32 = 50e12;
  m.gemmFlops16 = 600e12;
  m.memoryBandwidth = 4.0e12;
  auto set = [&](CollectiveKind kind, double latency, double perDevice,
                 double bandwidth) {
    m.collectives[static_cast<int>(kind)] = {latency, perDevice, bandwidth};
  };
  set(CollectiveKind::AllReduce, 12e-6, 0.5e-6, 360e9);
  set(CollectiveKind::AllGather, 10e-6, 0.5e-6, 340e9);
  set(CollectiveKind::ReduceScatter, 10e-6, 0.5e-6, 340e9);
  set(CollectiveKind::AllToAll, 15e-6, 1e-6, 300e9);
  return m;
}

std::optional<MachineModel> MachineModel::load(StringRef nameOrPath,
                                               std::string &error) {
  if (nameOrPath == "h200")
    return h200();
  auto buffer = llvm::MemoryBuffer::getFile(nameOrPath);
  if (!buffer) {
    error = ("cannot read the machine model '" + nameOrPath +
             "': " + buffer.getError().message() +
             " (expected \"h200\" or a file written by tprt-bench --calibrate)")
                .str();
    return std::nullopt;
  }
  llvm::Expected<llvm::json::Value> parsed =
      llvm::json::parse((*buffer)->getBuffer());
  if (!parsed) {
    error = ("machine model '" + nameOrPath +
             "' is not JSON: " + llvm::toString(parsed.takeError()))
                .str();
    return std::nullopt;
  }
  auto fail = [&](const Twine &what) {
    error = ("machine model '" + nameOrPath + "': " + what).str();
    return std::nullopt;
  };
  const llvm::json::Object *root = parsed->getAsObject();
  if (!root)
    return fail("expected a JSON object at the top");
  std::optional<StringRef> format = root->getString("format");
  if (!format || *format != kMachineModelFormat)
    return fail("\"format\" is " +
                (format ? "\"" + *format + "\"" : Twine("missing")) +
                "; expected \"" + kMachineModelFormat + "\"");
  MachineModel m;
  m.name =
      root->getString("name").value_or(llvm::sys::path::filename(nameOrPath));
  m.source = root->getString("source").value_or(nameOrPath).str();
  // A positive number at `key` of `object` (named `where` in messages).
  auto positive = [&](const llvm::json::Object &object, StringRef key,
                      const Twine &where, double &out) {
    std::optional<double> v = object.getNumber(key);
    if (!v || !(*v > 0) || !std::isfinite(*v)) {
      std::string shown = "missing";
      if (const llvm::json::Value *raw = object.get(key)) {
        shown.clear();
        llvm::raw_string_ostream os(shown);
        os << *raw;
      }
      fail(where + "\"" + key + "\" is " + shown +
           "; expected a positive number");
      return false;
    }
    out = *v;
    return true;
  };
  auto nonNegative = [&](const llvm::json::Object &object, StringRef key,
                         const Twine &where, double &out) {
    std::optional<double> v = object.getNumber(key);
    if (!v || !(*v >= 0) || !std::isfinite(*v)) {
      fail(where + "\"" + key + "\" is " + (v ? "negative" : "missing") +
           "; expected a number >= 0");
      return false;
    }
    out = *v;
    return true;
  };
  const llvm::json::Object *gemm = root->getObject("gemm_flops_per_second");
  if (!gemm)
    return fail("\"gemm_flops_per_second\" is missing (an object with "
                "\"f32\" and \"f16\")");
  if (!positive(*gemm, "f32", "gemm_flops_per_second.", m.gemmFlops32) ||
      !positive(*gemm, "f16", "gemm_flops_per_second.", m.gemmFlops16) ||
      !positive(*root, "memory_bytes_per_second", "", m.memoryBandwidth))
    return std::nullopt;
  const llvm::json::Object *collectives = root->getObject("collectives");
  if (!collectives)
    return fail("\"collectives\" is missing");
  for (CollectiveKind kind : modelledKinds()) {
    StringRef name = stringifyCollectiveKind(kind);
    const llvm::json::Object *c = collectives->getObject(name);
    if (!c)
      return fail("collectives.\"" + name + "\" is missing");
    Collective &out = m.collectives[static_cast<int>(kind)];
    std::string where = ("collectives." + name + ".").str();
    if (!nonNegative(*c, "latency_seconds", where, out.latency) ||
        !nonNegative(*c, "latency_per_device_seconds", where,
                     out.latencyPerDevice) ||
        !positive(*c, "bus_bytes_per_second", where, out.busBandwidth))
      return std::nullopt;
  }
  return m;
}

std::string MachineModel::toJSON() const {
  llvm::json::Object collectivesObject;
  for (CollectiveKind kind : modelledKinds()) {
    const Collective &c = collectives[static_cast<int>(kind)];
    collectivesObject[stringifyCollectiveKind(kind)] =
        llvm::json::Object{{"latency_seconds", c.latency},
                           {"latency_per_device_seconds", c.latencyPerDevice},
                           {"bus_bytes_per_second", c.busBandwidth}};
  }
  llvm::json::Object root{
      {"format", kMachineModelFormat},
      {"name", name},
      {"source", source},
      {"gemm_flops_per_second",
       llvm::json::Object{{"f32", gemmFlops32}, {"f16", gemmFlops16}}},
      {"memory_bytes_per_second", memoryBandwidth},
      {"collectives", std::move(collectivesObject)}};
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(root))) << "\n";
  return text;
}

double MachineModel::collectiveSeconds(CollectiveKind kind, int64_t groupSize,
                                       double bytes) const {
  if (groupSize <= 1 || !collectiveMovesData(kind))
    return 0;
  const Collective &c = collectives[static_cast<int>(kind)];
  return c.latency + c.latencyPerDevice * static_cast<double>(groupSize - 1) +
         collectiveBytes(kind, groupSize, bytes) / c.busBandwidth;
}

double MachineModel::gemmSeconds(double flops, Type elementType) const {
  bool narrow =
      elementType.isIntOrFloat() && elementType.getIntOrFloatBitWidth() <= 16;
  return flops / (narrow ? gemmFlops16 : gemmFlops32);
}
