//===- ReportKernels.cpp - A GPU program's kernels and GEMM calls ---------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The kernel report of --tp-report on the CUDA target (see the pass
// description in Passes.td): after tp-map-linalg-to-gpu, each function's
// kernels (the `tp.cost` that mapping left on each launch) and GEMM calls,
// each with its roofline time on the cost model's machine, then what one run
// of each function launches and is modelled to take, its calls into layer
// functions included.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Common/Gemm.h"
#include "tp/Conversion/Passes.h"
#include "tp/Dialect/TP/IR/TPDialect.h"
#include "tp/Dialect/TP/Transforms/CostModel.h"

#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinTypes.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <map>

namespace mlir::tp {
#define GEN_PASS_DEF_REPORTKERNELSPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// One run of a function: its launches and their modelled time, its own and
/// its callees'.
struct Totals {
  int64_t kernels = 0, gemms = 0;
  double kernelSeconds = 0, gemmSeconds = 0;
};

/// A launch's size: its constant, or that it is known at run time only (a
/// grid over a decode step's position).
std::string sizeText(Value value) {
  std::optional<int64_t> c = getConstantIntValue(value);
  return c ? std::to_string(*c) : std::string("a run-time number of");
}

std::string bytesText(double bytes) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (bytes >= 1e6)
    os << llvm::format("%.2f MB", bytes / 1e6);
  else if (bytes >= 1e3)
    os << llvm::format("%.1f kB", bytes / 1e3);
  else
    os << llvm::format("%.0f B", bytes);
  return s;
}

std::string flopText(double flops) {
  std::string s;
  llvm::raw_string_ostream os(s);
  if (flops >= 1e9)
    os << llvm::format("%.2f Gflop", flops / 1e9);
  else if (flops >= 1e6)
    os << llvm::format("%.2f Mflop", flops / 1e6);
  else
    os << llvm::format("%.0f flop", flops);
  return s;
}

std::string microseconds(double seconds) {
  std::string s;
  llvm::raw_string_ostream os(s);
  os << llvm::format("%.2f us", seconds * 1e6);
  return s;
}

struct ReportKernelsPass
    : public tp::impl::ReportKernelsPassBase<ReportKernelsPass> {
  using Base::Base;

  /// The f32 GEMM rate at the program's matmul precision.
  double f32GemmFlops = 1;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string error;
    std::optional<MachineModel> machine = MachineModel::load(costModel, error);
    if (!machine) {
      module.emitError() << "tp-report-kernels: " << error;
      return signalPassFailure();
    }
    if (matmulPrecision != "highest" && matmulPrecision != "high" &&
        matmulPrecision != "medium") {
      module.emitError() << "tp-report-kernels: matmul precision '"
                         << matmulPrecision
                         << "' is not one of highest, high, medium";
      return signalPassFailure();
    }
    // f32 GEMMs at the program's matmul precision: IEEE f32 on the CUDA
    // cores, TF32 tensor cores (half the 16-bit rate, as on A100, H100 and
    // H200), or bf16 inputs at the 16-bit rate.
    f32GemmFlops = matmulPrecision == "high"     ? machine->gemmFlops16 / 2
                   : matmulPrecision == "medium" ? machine->gemmFlops16
                                                 : machine->gemmFlops32;
    llvm::raw_ostream &os = llvm::errs();
    os << "tp-report: GPU kernels and GEMM calls modelled on " << machine->name
       << " (roofline: the larger of the bytes at "
       << llvm::format("%.2f", machine->memoryBandwidth / 1e12)
       << " TB/s and the flops at " << llvm::format("%.0f", f32GemmFlops / 1e12)
       << " TFLOP/s for f32";
    if (matmulPrecision != "highest")
      os << " (matmul precision '" << matmulPrecision << "')";
    os << ", " << llvm::format("%.0f", machine->gemmFlops16 / 1e12)
       << " for 16-bit GEMMs; launch costs, collectives and copies "
          "excluded)\n";
    std::map<Operation *, Totals> totals;
    for (auto func : module.getOps<func::FuncOp>())
      if (!func.isExternal())
        (void)totalsOf(func, *machine, totals, os);
  }

  /// How many times `op` runs per run of `func`: the product of the trip
  /// counts of the scf.for loops around it (1 for a loop whose bounds are
  /// not constant).
  static int64_t tripsAround(Operation *op, func::FuncOp func) {
    int64_t trips = 1;
    for (auto loop = op->getParentOfType<scf::ForOp>();
         loop && func->isAncestor(loop);
         loop = loop->getParentOfType<scf::ForOp>()) {
      std::optional<int64_t> lower = getConstantIntValue(loop.getLowerBound()),
                             upper = getConstantIntValue(loop.getUpperBound()),
                             step = getConstantIntValue(loop.getStep());
      if (lower && upper && step && *step > 0)
        trips *= std::max<int64_t>(0, (*upper - *lower + *step - 1) / *step);
    }
    return trips;
  }

  /// Reports `func` (once) and returns what one run of it launches, its
  /// callees' runs included.
  Totals totalsOf(func::FuncOp func, const MachineModel &machine,
                  std::map<Operation *, Totals> &done, llvm::raw_ostream &os) {
    if (auto it = done.find(func); it != done.end())
      return it->second;
    done[func] = Totals(); // a call cycle counts its callee once
    Totals own, all;
    std::map<std::string, int64_t> calls;
    std::string prefix = ("tp-report @" + func.getName() + ":").str();
    int64_t kernelIndex = 0, gemmIndex = 0;
    func.walk([&](Operation *op) {
      if (auto launch = dyn_cast<gpu::LaunchOp>(op)) {
        auto cost =
            launch->getAttrOfType<DictionaryAttr>(TPDialect::kCostAttrName);
        double bytes = 0, flops = 0, tensorFlops = 0;
        int64_t ops = 0;
        if (cost) {
          bytes = cost.getAs<IntegerAttr>("bytes").getInt();
          flops = cost.getAs<IntegerAttr>("flops").getInt();
          ops = cost.getAs<IntegerAttr>("ops").getInt();
          // The part of the flops on tensor cores (mma.sync), at the 16-bit
          // GEMM rate.
          if (auto t = cost.getAs<IntegerAttr>("tensor_flops"))
            tensorFlops = t.getInt();
        }
        double seconds = std::max(machine.memorySeconds(bytes),
                                  (flops - tensorFlops) / machine.gemmFlops32 +
                                      tensorFlops / machine.gemmFlops16);
        own.kernels += 1;
        own.kernelSeconds += seconds;
        os << prefix << "   kernel " << kernelIndex++ << ": "
           << sizeText(launch.getGridSizeX()) << " blocks x "
           << sizeText(launch.getBlockSizeX()) << " threads, ";
        if (cost)
          os << ops << (ops == 1 ? " op" : " ops fused") << ", "
             << bytesText(bytes) << ", " << flopText(flops)
             << (tensorFlops
                     ? " (" + flopText(tensorFlops) + " on tensor cores)"
                     : std::string())
             << ": " << microseconds(seconds);
        else
          os << "no cost recorded";
        if (auto loc = dyn_cast<FileLineColLoc>(launch.getLoc()))
          os << " (" << loc.getFilename().getValue() << ":" << loc.getLine()
             << ")";
        os << "\n";
        return WalkResult::skip();
      }
      auto call = dyn_cast<func::CallOp>(op);
      if (!call)
        return WalkResult::advance();
      if (std::optional<GemmCall> gemm = readGemmCall(call)) {
        const tprt_gemm_desc &g = gemm->desc;
        // A call in loops (a batch loop beyond the call's two) runs once per
        // iteration: the report counts its iterations as one call's batch.
        int64_t repeats = tripsAround(call, func);
        int64_t batch = g.batch0 * g.batch1 * repeats;
        bool narrow = g.dtype != TPRT_F32;
        own.gemms += repeats;
        os << prefix << "   gemm " << gemmIndex++ << ": ";
        double element = narrow ? 2 : 4;
        double flops = 2.0 * g.m * g.n * g.k * batch;
        // A and B read, D written, C read where there is one, the bias.
        double bytes = element * (batch * (g.m * g.k + g.k * g.n +
                                           g.m * g.n * (gemm->hasC ? 2 : 1)) +
                                  (gemm->hasBias ? g.n : 0));
        double rate = narrow ? machine.gemmFlops16 : f32GemmFlops;
        double seconds = std::max(flops / rate, machine.memorySeconds(bytes));
        own.gemmSeconds += seconds;
        os << g.m << " x " << g.n << " x " << g.k
           << (narrow ? " 16-bit" : " f32");
        if (batch != 1)
          os << ", batch " << batch;
        if (repeats != 1)
          os << " in " << repeats << " calls";
        if (gemm->hasC && call.getOperand(4) != call.getOperand(5))
          os << ", + residual";
        if (gemm->hasBias)
          os << ", + bias";
        if (g.epilogue & TPRT_EPILOGUE_GELU)
          os << ", GELU";
        os << ", " << flopText(flops) << ", " << bytesText(bytes) << ": "
           << microseconds(seconds) << "\n";
        return WalkResult::advance();
      }
      auto target = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          call, call.getCalleeAttr());
      if (target && !target.isExternal())
        calls[target.getName().str()] += 1;
      return WalkResult::advance();
    });
    all = own;
    std::string called;
    for (auto &[name, count] : calls) {
      auto target = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(
          func, StringAttr::get(func.getContext(), name));
      Totals inner = totalsOf(target, machine, done, os);
      all.kernels += count * inner.kernels;
      all.gemms += count * inner.gemms;
      all.kernelSeconds += count * inner.kernelSeconds;
      all.gemmSeconds += count * inner.gemmSeconds;
      called +=
          (called.empty() ? "" : ", ") + std::to_string(count) + " x @" + name;
    }
    os << prefix << " " << all.kernels
       << (all.kernels == 1 ? " kernel and " : " kernels and ") << all.gemms
       << (all.gemms == 1 ? " GEMM call a run" : " GEMM calls a run");
    if (!called.empty())
      os << " (with " << called << ")";
    os << ": " << microseconds(all.kernelSeconds + all.gemmSeconds)
       << " modelled (kernels " << microseconds(all.kernelSeconds) << ", GEMMs "
       << microseconds(all.gemmSeconds) << ")\n";
    done[func] = all;
    return all;
  }
};

} // namespace
