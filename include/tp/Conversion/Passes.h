//===- Passes.h - Lowerings of the tp dialect -------------------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TP_CONVERSION_PASSES_H
#define TP_CONVERSION_PASSES_H

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"
#include "tp/Dialect/TP/IR/TPDialect.h"

namespace mlir::tp {

#define GEN_PASS_DECL
#include "tp/Conversion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "tp/Conversion/Passes.h.inc"

/// The name of the module attribute holding the program manifest.
inline constexpr llvm::StringLiteral kManifestAttrName =
    TPDialect::kManifestAttrName;
/// The prefix of the runtime's entry wrappers.
inline constexpr llvm::StringLiteral kEntryPrefix = "tprt_entry_";

struct LowerToCPUOptions : public PassPipelineOptions<LowerToCPUOptions> {
  PassOptions::Option<bool> reference{
      *this, "reference",
      llvm::cl::desc(
          "The plain lowering that checks the project's own: no elementwise "
          "fusion, no polynomial approximations (libm), no BLAS (f32 GEMMs as "
          "loops; f16/bf16 ones keep their f32-accumulating call); "
          "tp-compile --reference, used by tp-run --verify"),
      llvm::cl::init(false)};
  PassOptions::Option<bool> emulateGpuMapping{
      *this, "emulate-gpu-mapping",
      llvm::cl::desc(
          "Test aid: map every linalg op to GPU kernels as the CUDA lowering "
          "does (--tp-map-linalg-to-gpu) and run the kernels as loops on the "
          "CPU (--tp-emulate-gpu-launches); tp-compile "
          "--emulate-gpu-mapping"),
      llvm::cl::init(false)};
};

/// --tp-lower-to-cpu: local (or unsharded global) form -> LLVM dialect for
/// the CPU runtime: manifest, one-shot bufferization (results become
/// out-parameters, buffers are freed), collectives -> runtime calls, linalg
/// -> loops, everything -> LLVM with bare-pointer memrefs, entry points.
void buildLowerToCPUPipeline(OpPassManager &pm,
                             const LowerToCPUOptions &options);
void buildLowerToCPUPipeline(OpPassManager &pm);

void registerTPConversionPipelines();

} // namespace mlir::tp

#endif // TP_CONVERSION_PASSES_H
