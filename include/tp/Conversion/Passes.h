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
#include "mlir/Dialect/LLVMIR/NVVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/NVGPU/IR/NVGPUDialect.h"
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

/// The default of the lowerings' max-function-ops. LLVM's time per loop
/// grows with the size of the function holding it (IndVarSimplify: 60% of
/// -O3 on a GPT-2 block's 262 loops in one function), so smaller functions
/// compile faster, down to where calls and parts add up: a GPT-2-small
/// block compiles in 0.86 s in parts of 128 ops, 0.60 s of 64, 0.61 s of 32;
/// 12 layers, shared, 1.36 / 1.03 / 1.51 s (2 threads); run time unchanged.
constexpr unsigned kDefaultMaxFunctionOps = 64;
/// Where the lowerings outline layers and cut functions, a function making
/// more calls than this (a deep model's driver) keeps only straight-line
/// code, which tp-split-entry-points can cut for code generation: the ops
/// around its layers (embedding, head) become parts.
constexpr unsigned kStraightLineCalls = 32;

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
  PassOptions::Option<bool> outlineLayers{
      *this, "outline-layers",
      llvm::cl::desc("Compile repeated layers once: structurally identical "
                     "runs of ops become one function called per layer "
                     "(--tp-outline-repeated-layers)"),
      llvm::cl::init(true)};
  PassOptions::Option<unsigned> maxFunctionOps{
      *this, "max-function-ops",
      llvm::cl::desc("Cut functions longer than this many ops (after "
                     "outline-layers) into parts called once (0: never), so "
                     "that code generation stays linear in the model's size"),
      llvm::cl::init(kDefaultMaxFunctionOps)};
  PassOptions::Option<std::string> matmulPrecision{
      *this, "matmul-precision",
      llvm::cl::desc("How f32 GEMMs may compute: highest (IEEE f32), high "
                     "(TF32 inputs), medium (bf16 inputs); f32 accumulation "
                     "in each (tp-compile --matmul-precision)"),
      llvm::cl::init("highest")};
};

/// --tp-lower-to-cpu: local (or unsharded global) form -> LLVM dialect for
/// the CPU runtime: manifest, one-shot bufferization (results become
/// out-parameters, buffers are freed), collectives -> runtime calls, linalg
/// -> loops, everything -> LLVM with bare-pointer memrefs, entry points.
void buildLowerToCPUPipeline(OpPassManager &pm,
                             const LowerToCPUOptions &options);
void buildLowerToCPUPipeline(OpPassManager &pm);

struct LowerToCUDAOptions : public PassPipelineOptions<LowerToCUDAOptions> {
  PassOptions::Option<std::string> chip{
      *this, "chip",
      llvm::cl::desc("The GPU architecture the kernels are compiled for"),
      llvm::cl::init("sm_90")};
  PassOptions::Option<std::string> features{
      *this, "features",
      llvm::cl::desc("PTX features (e.g. +ptx86); empty: NVVM's default for "
                     "the chip"),
      llvm::cl::init("")};
  PassOptions::Option<unsigned> optLevel{
      *this, "opt-level",
      llvm::cl::desc("Optimisation level of the kernels (0-3)"),
      llvm::cl::init(3)};
  PassOptions::Option<std::string> format{
      *this, "format",
      llvm::cl::desc("What the GPU image holds: fatbin (cubin for the chip "
                     "plus its PTX), bin (cubin only), isa (PTX only)"),
      llvm::cl::init("fatbin")};
  PassOptions::Option<std::string> toolkit{
      *this, "cuda-toolkit",
      llvm::cl::desc("The CUDA toolkit whose ptxas and fatbinary compile the "
                     "kernels; empty: the one found at build time"),
      llvm::cl::init("")};
  PassOptions::Option<bool> outlineLayers{
      *this, "outline-layers",
      llvm::cl::desc("Compile repeated layers once: structurally identical "
                     "runs of ops become one function called per layer "
                     "(--tp-outline-repeated-layers)"),
      llvm::cl::init(true)};
  PassOptions::Option<unsigned> maxFunctionOps{
      *this, "max-function-ops",
      llvm::cl::desc("Cut functions longer than this many ops (after "
                     "outline-layers) into parts called once (0: never), so "
                     "that code generation stays linear in the model's size"),
      llvm::cl::init(kDefaultMaxFunctionOps)};
  PassOptions::Option<std::string> matmulPrecision{
      *this, "matmul-precision",
      llvm::cl::desc("How f32 GEMMs may compute: highest (IEEE f32), high "
                     "(TF32 inputs), medium (bf16 inputs); f32 accumulation "
                     "in each (tp-compile --matmul-precision)"),
      llvm::cl::init("highest")};
  PassOptions::Option<bool> report{
      *this, "report",
      llvm::cl::desc("Print each GPU kernel and GEMM call with its roofline "
                     "time, and what a run launches (tp-report-kernels; "
                     "tp-compile --tp-report)"),
      llvm::cl::init(false)};
  PassOptions::Option<std::string> costModel{
      *this, "cost-model",
      llvm::cl::desc("The machine the report's times are modelled on: h200 "
                     "or a machine-model file"),
      llvm::cl::init("h200")};
};

/// --tp-lower-to-cuda: local (or unsharded global) form -> LLVM dialect for
/// the CUDA runtime: the CPU lowering's front (manifest, fusion,
/// bufferization, collectives and GEMMs as runtime calls), then every other
/// linalg op a GPU kernel (mapping, outlining, NVVM, a fatbin embedded in
/// the library), host code calling the runtime to allocate, upload constants
/// and launch.
void buildLowerToCUDAPipeline(OpPassManager &pm,
                              const LowerToCUDAOptions &options);

void registerTPConversionPipelines();

} // namespace mlir::tp

#endif // TP_CONVERSION_PASSES_H
