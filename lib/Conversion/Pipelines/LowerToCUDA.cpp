//===- LowerToCUDA.cpp - --tp-lower-to-cuda -------------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Common.h"

#include "tp/Conversion/Passes.h"

#include "mlir/Conversion/Passes.h"
#include "mlir/Dialect/GPU/Transforms/Passes.h"
#include "mlir/Dialect/MemRef/Transforms/Passes.h"
#include "mlir/Transforms/Passes.h"
#include "llvm/Support/FileSystem.h"

using namespace mlir;
using namespace mlir::tp;

#ifndef TP_DEFAULT_CUDA_TOOLKIT
#define TP_DEFAULT_CUDA_TOOLKIT ""
#endif

void mlir::tp::buildLowerToCUDAPipeline(OpPassManager &pm,
                                        const LowerToCUDAOptions &options) {
  // The CPU lowering's front; math stays exact (libdevice in the kernels).
  // Not tp-fuse-reductions: each tile would be a kernel launch.
  BufferFrontOptions front;
  front.target = "cuda";
  front.matmulPrecision = options.matmulPrecision;
  front.outline = options.outlineLayers;
  front.maxFunctionOps = options.maxFunctionOps;
  front.fuse = true;
  front.foldIntoNarrowGemms = true;
  addBufferFrontPasses(pm, front);
  // GEMMs: the shared recogniser, the same entry point; the CUDA runtime
  // runs them with cuBLAS on the rank's stream, or cuBLASLt with the bias,
  // residual and GELU loops around them folded in as epilogues.
  // Attention (scores, softmax, weighted sum) as one kernel, before its
  // contractions would become GEMM calls.
  FuseAttentionPassOptions attention;
  attention.costModel = options.costModel;
  attention.matmulPrecision = options.matmulPrecision;
  // mma.sync's m16n8k16 for f16 and bf16 needs sm_80 or later.
  unsigned smVersion = 0;
  bool sm80 = StringRef(options.chip).starts_with("sm_") &&
              !StringRef(options.chip)
                   .drop_front(3)
                   .take_while(llvm::isDigit)
                   .getAsInteger(10, smVersion) &&
              smVersion >= 80;
  attention.tensorCores = sm80;
  pm.addNestedPass<func::FuncOp>(createFuseAttentionPass(attention));
  ConvertGemmToBlasPassOptions gemms;
  gemms.epilogues = true;
  pm.addPass(createConvertGemmToBlasPass(gemms));
  // Device buffers: every copy a kernel, constants uploaded, then every
  // other linalg op a kernel.
  LowerStridedCopiesPassOptions copies;
  copies.everyCopy = true;
  pm.addPass(createLowerStridedCopiesPass(copies));
  pm.addPass(createUploadConstantsPass());
  // The entry points' own buffers (the constants' copies too) in one arena
  // the session allocates once: after the GEMM matcher, which folds ops
  // into a GEMM whose output is a fresh allocation.
  pm.addPass(createPlanArenaPass());
  pm.addNestedPass<func::FuncOp>(createMapLinalgToGPUPass());
  if (options.report) {
    ReportKernelsPassOptions report;
    report.costModel = options.costModel;
    report.matmulPrecision = options.matmulPrecision;
    pm.addPass(createReportKernelsPass(report));
  }
  pm.addPass(createGpuKernelOutliningPass());
  // What the host code reads of an argument comes in host memory.
  pm.addPass(createMarkHostReadsPass());
  // One image per program: one module load per rank.
  pm.addPass(createMergeKernelModulesPass());

  // Kernels: NVVM, then one image for the chip (cubin and PTX in a fatbin).
  OpPassManager &kernels = pm.nest<gpu::GPUModuleOp>();
  kernels.addPass(createLowerAffinePass());
  kernels.addPass(createSCFToControlFlowPass());
  // sm_80 and later convert bf16 in one instruction (cvt.rn.bf16x2.f32).
  addNarrowFloatEmulationPasses(kernels, /*nativeBF16Conversions=*/sm80);
  kernels.addPass(memref::createExpandStridedMetadataPass());
  // The attention kernel's mma.sync: bf16 by hand, f16 upstream.
  kernels.addPass(createLowerBF16MmaPass());
  kernels.addPass(createConvertNVGPUToNVVMPass());
  ConvertGpuOpsToNVVMOpsOptions nvvm;
  nvvm.indexBitwidth = 64;
  kernels.addPass(createConvertGpuOpsToNVVMOps(nvvm));
  kernels.addPass(createCanonicalizerPass());
  kernels.addPass(createCSEPass());
  kernels.addPass(createReconcileUnrealizedCastsPass());
  GpuNVVMAttachTargetOptions target;
  target.chip = options.chip;
  target.features = options.features;
  target.optLevel = options.optLevel;
  pm.addPass(createGpuNVVMAttachTarget(target));
  std::string toolkit = options.toolkit.empty()
                            ? std::string(TP_DEFAULT_CUDA_TOOLKIT)
                            : options.toolkit.getValue();
  // Registers and spills: ptxas -v on each module's PTX.
  if (options.report) {
    ReportRegistersPassOptions registers;
    registers.toolkit = toolkit;
    pm.addPass(createReportRegistersPass(registers));
  }
  GpuModuleToBinaryPassOptions binary;
  binary.toolkitPath = toolkit;
  binary.compilationTarget = options.format;
  pm.addPass(createGpuModuleToBinaryPass(binary));

  // Host code: LLVM, allocations and launches through the runtime.
  pm.addPass(createLowerAffinePass());
  pm.addPass(createSCFToControlFlowPass());
  addNarrowFloatEmulationPasses(pm);
  pm.addPass(memref::createExpandStridedMetadataPass());
  // The offsets it computes of subviews at offsets known at run time only
  // (a KV cache written at a decode step's position).
  pm.addPass(createLowerAffinePass());
  FinalizeMemRefToLLVMConversionPassOptions memref;
  memref.useGenericFunctions = true;
  pm.addPass(createFinalizeMemRefToLLVMConversionPass(memref));
  addHostToLLVMPasses(pm);
  // Kernel operands as whole memref descriptors, as convert-gpu-to-nvvm
  // made the kernels take them (strided views included).
  pm.addPass(createGpuToLLVMConversionPass());
  pm.addPass(createReconcileUnrealizedCastsPass());
  pm.addPass(createConvertLaunchesToRuntimePass());
  pm.addPass(createCallRuntimeThroughTablePass());
  pm.addPass(createEmitEntryPointsPass());
  // A deep model's driver reaches code generation in bounded parts: the
  // host code is the CPU lowering's, its kernels launched through the
  // runtime's table in the same order.
  pm.addPass(createSplitEntryPointsPass());
  // Anything left outside the LLVM dialect would reach the translation.
  pm.addPass(createCheckLoweredToLLVMPass());
}

LogicalResult mlir::tp::buildCudaTarget(OpPassManager &pm,
                                        const TargetLowering &options,
                                        std::string &error) {
  if (options.reference || options.emulateGpuMapping) {
    error = "--reference and --emulate-gpu-mapping are CPU lowerings; they "
            "take no --target cuda";
    return failure();
  }
  if (options.gpuArch && !StringRef(*options.gpuArch).starts_with("sm_")) {
    error = "--gpu-arch '" + *options.gpuArch +
            "' is not a CUDA architecture (sm_80, sm_90, ...)";
    return failure();
  }
  if (options.toolkit && !llvm::sys::fs::is_directory(*options.toolkit)) {
    error = "--cuda-toolkit '" + *options.toolkit +
            "' is not a directory (a CUDA toolkit's root, with bin/ptxas and "
            "bin/fatbinary)";
    return failure();
  }
  LowerToCUDAOptions lowering;
  if (options.gpuArch)
    lowering.chip = *options.gpuArch;
  if (options.toolkit)
    lowering.toolkit = *options.toolkit;
  lowering.outlineLayers = options.outlineLayers;
  if (options.maxFunctionOps)
    lowering.maxFunctionOps = *options.maxFunctionOps;
  lowering.matmulPrecision = options.matmulPrecision;
  lowering.report = options.report;
  if (options.costModel)
    lowering.costModel = *options.costModel;
  buildLowerToCUDAPipeline(pm, lowering);
  return success();
}
