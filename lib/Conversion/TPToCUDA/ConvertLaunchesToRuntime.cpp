//===- ConvertLaunchesToRuntime.cpp - Host code of the CUDA lowering ------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// After gpu-module-to-binary and gpu-to-llvm, the host code still holds
// gpu.binary (the kernels' image) and gpu.launch_func (with LLVM operands),
// which MLIR would translate into calls to its CUDA runtime wrappers
// (mgpu*), and calls to the generic allocation functions of the memref
// lowering. Here they become the program's own: the image a constant of the
// library, each launch and each allocation a call to the tprt runtime
// (tprt_rt_launch, tprt_rt_alloc, tprt_rt_free) with the rank context.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Common/RuntimeCalls.h"
#include "tp/Conversion/Passes.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"

#include "llvm/ADT/StringSwitch.h"

namespace mlir::tp {
#define GEN_PASS_DEF_CONVERTLAUNCHESTORUNTIMEPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;

namespace {

/// The external declaration of runtime function `name`, made once.
LLVM::LLVMFuncOp declare(ModuleOp module, StringRef name,
                         LLVM::LLVMFunctionType type) {
  if (auto existing = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  return LLVM::LLVMFuncOp::create(b, module.getLoc(), name, type);
}

/// An internal constant global holding `bytes`, made once per name.
LLVM::GlobalOp constantBytes(ModuleOp module, StringRef name, StringRef bytes) {
  if (auto existing = module.lookupSymbol<LLVM::GlobalOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockBegin(module.getBody());
  auto type = LLVM::LLVMArrayType::get(b.getI8Type(), bytes.size());
  return LLVM::GlobalOp::create(b, module.getLoc(), type, /*isConstant=*/true,
                                LLVM::Linkage::Internal, name,
                                b.getStringAttr(bytes), /*alignment=*/16);
}

/// The rank context of the function around `op`: its first argument.
FailureOr<Value> rankContext(Operation *op) {
  auto func = op->getParentOfType<LLVM::LLVMFuncOp>();
  if (!func || func.isExternal() || func.getNumArguments() == 0 ||
      !isa<LLVM::LLVMPointerType>(func.getArgument(0).getType()))
    return op->emitOpError()
           << "is not in a function that takes the rank context (run "
              "tp-convert-collectives-to-runtime before lowering)";
  return func.getArgument(0);
}

struct ConvertLaunchesToRuntimePass
    : public tp::impl::ConvertLaunchesToRuntimePassBase<
          ConvertLaunchesToRuntimePass> {
  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(convertLaunches(module)) || failed(convertAllocations(module)))
      return signalPassFailure();
    for (auto binary : llvm::to_vector(module.getOps<gpu::BinaryOp>()))
      binary.erase();
    module->removeAttr(gpu::GPUDialect::getContainerModuleAttrName());
  }

  LogicalResult convertLaunches(ModuleOp module) {
    MLIRContext *context = module.getContext();
    Type ptr = LLVM::LLVMPointerType::get(context);
    Type i32 = IntegerType::get(context, 32);
    Type i64 = IntegerType::get(context, 64);
    SmallVector<gpu::LaunchFuncOp> launches;
    module.walk([&](gpu::LaunchFuncOp op) { launches.push_back(op); });
    if (launches.empty())
      return success();
    LLVM::LLVMFuncOp launchFn =
        declare(module, "tprt_rt_launch",
                tp::runtimeLLVMFunctionType(context, "tprt_rt_launch"));
    for (gpu::LaunchFuncOp op : launches) {
      FailureOr<Value> ctx = rankContext(op);
      if (failed(ctx))
        return failure();
      if (!op.getAsyncDependencies().empty() || op.getAsyncToken() ||
          op.getAsyncObject() || op.hasClusterSize())
        return op.emitOpError()
               << "is asynchronous or has clusters; the CUDA lowering "
                  "launches in order on the rank's stream only";
      StringRef moduleName = op.getKernelModuleName().getValue();
      auto binary = module.lookupSymbol<gpu::BinaryOp>(moduleName);
      if (!binary || binary.getObjects().size() != 1)
        return op.emitOpError()
               << "launches a kernel of '" << moduleName
               << "', which is not a gpu.binary with one object (run "
                  "gpu-module-to-binary for one target first)";
      auto object = cast<gpu::ObjectAttr>(binary.getObjects()[0]);
      StringRef image = object.getObject().getValue();
      LLVM::GlobalOp imageGlobal =
          constantBytes(module, ("__tp_gpu_image_" + moduleName).str(), image);
      std::string kernelName = op.getKernelName().getValue().str();
      LLVM::GlobalOp nameGlobal = constantBytes(
          module, ("__tp_gpu_kernel_" + moduleName + "_" + kernelName).str(),
          StringRef(kernelName.c_str(), kernelName.size() + 1));

      // Stack slots for the operands and the list of their addresses, made
      // once in the entry block (a launch in a loop reuses them).
      auto func = op->getParentOfType<LLVM::LLVMFuncOp>();
      OpBuilder entry = OpBuilder::atBlockBegin(&func.getBody().front());
      Location loc = op.getLoc();
      ValueRange operands = op.getKernelOperands();
      Value one =
          LLVM::ConstantOp::create(entry, loc, i64, entry.getI64IntegerAttr(1));
      Value count = LLVM::ConstantOp::create(
          entry, loc, i64, entry.getI64IntegerAttr(operands.size()));
      Value params = LLVM::AllocaOp::create(entry, loc, ptr, ptr, count);
      SmallVector<Value> slots;
      for (Value operand : operands)
        slots.push_back(
            LLVM::AllocaOp::create(entry, loc, ptr, operand.getType(), one));

      OpBuilder b(op);
      for (auto [i, operand] : llvm::enumerate(operands)) {
        LLVM::StoreOp::create(b, loc, operand, slots[i]);
        Value address = LLVM::GEPOp::create(
            b, loc, ptr, ptr, params,
            ArrayRef<LLVM::GEPArg>{static_cast<int32_t>(i)});
        LLVM::StoreOp::create(b, loc, slots[i], address);
      }
      auto i64Value = [&](Value v) -> Value {
        if (v.getType() == i64)
          return v;
        return LLVM::ZExtOp::create(b, loc, i64, v);
      };
      gpu::KernelDim3 grid = op.getGridSizeOperandValues();
      gpu::KernelDim3 block = op.getBlockSizeOperandValues();
      Value shared = op.getDynamicSharedMemorySize();
      if (!shared)
        shared = LLVM::ConstantOp::create(b, loc, i32, b.getI32IntegerAttr(0));
      SmallVector<Value> args = {
          *ctx,
          LLVM::AddressOfOp::create(b, loc, imageGlobal),
          LLVM::ConstantOp::create(b, loc, i64,
                                   b.getI64IntegerAttr(image.size())),
          LLVM::AddressOfOp::create(b, loc, nameGlobal),
          i64Value(grid.x),
          i64Value(grid.y),
          i64Value(grid.z),
          i64Value(block.x),
          i64Value(block.y),
          i64Value(block.z),
          shared,
          params,
          LLVM::ConstantOp::create(b, loc, i64,
                                   b.getI64IntegerAttr(operands.size()))};
      LLVM::CallOp::create(b, loc, launchFn, args);
      op.erase();
    }
    return success();
  }

  /// _mlir_memref_to_llvm_{alloc,aligned_alloc,free} -> tprt_rt_{alloc,free}.
  LogicalResult convertAllocations(ModuleOp module) {
    MLIRContext *context = module.getContext();
    SmallVector<LLVM::CallOp> calls;
    module.walk([&](LLVM::CallOp call) {
      if (std::optional<StringRef> callee = call.getCallee())
        if (callee->starts_with("_mlir_memref_to_llvm_"))
          calls.push_back(call);
    });
    for (LLVM::CallOp call : calls) {
      StringRef callee = *call.getCallee();
      FailureOr<Value> ctx = rankContext(call);
      if (failed(ctx))
        return failure();
      OpBuilder b(call);
      Location loc = call.getLoc();
      if (callee == "_mlir_memref_to_llvm_free") {
        LLVM::LLVMFuncOp fn =
            declare(module, "tprt_rt_free",
                    tp::runtimeLLVMFunctionType(context, "tprt_rt_free"));
        LLVM::CallOp::create(b, loc, fn,
                             ValueRange{*ctx, call.getArgOperands()[0]});
      } else if (callee == "_mlir_memref_to_llvm_alloc" ||
                 callee == "_mlir_memref_to_llvm_aligned_alloc") {
        // The runtime's buffers are aligned for any element type.
        Value size = call.getArgOperands().back();
        LLVM::LLVMFuncOp fn =
            declare(module, "tprt_rt_alloc",
                    tp::runtimeLLVMFunctionType(context, "tprt_rt_alloc"));
        Value fresh = LLVM::CallOp::create(b, loc, fn, ValueRange{*ctx, size})
                          .getResult();
        call.getResult().replaceAllUsesWith(fresh);
      } else {
        return call.emitOpError()
               << "calls '" << callee
               << "', which the CUDA lowering cannot place in device memory";
      }
      call.erase();
    }
    for (StringRef name :
         {"_mlir_memref_to_llvm_alloc", "_mlir_memref_to_llvm_aligned_alloc",
          "_mlir_memref_to_llvm_free"})
      if (auto decl = module.lookupSymbol<LLVM::LLVMFuncOp>(name))
        decl.erase();
    return success();
  }
};

} // namespace
