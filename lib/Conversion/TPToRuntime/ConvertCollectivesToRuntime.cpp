//===- ConvertCollectivesToRuntime.cpp - Collectives -> tprt calls
//---------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// 1. Every function with a body takes the rank context as a new leading
//    `!llvm.ptr` argument; calls to such functions pass theirs on.
// 2. Each buffer-form collective becomes a call to its tprt_rt_* entry point:
//    contiguous buffers as bare pointers (a strided operand is copied into a
//    fresh buffer first, a strided destination written through one), the
//    shape in a stack array, codes for element type and reduction, the mesh
//    axes packed into an i64 (tprt_pack_axes). tp.axis_index becomes
//    tprt_rt_axis_index. tp.* attributes (recorded in the manifest) go.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Common/RuntimeCalls.h"
#include "tp/Conversion/Passes.h"

#include "tp/Dialect/TP/IR/TPOps.h"

#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/FunctionInterfaces.h"

namespace mlir::tp {
#define GEN_PASS_DEF_CONVERTCOLLECTIVESTORUNTIMEPASS
#include "tp/Conversion/Passes.h.inc"
} // namespace mlir::tp

using namespace mlir;
using namespace mlir::tp;

namespace {

/// tprt_dtype codes.
std::optional<int32_t> dtypeCode(Type type) {
  if (type.isF32())
    return 0;
  if (type.isF64())
    return 1;
  if (type.isF16())
    return 2;
  if (type.isBF16())
    return 3;
  if (type.isInteger(32))
    return 4;
  if (type.isInteger(64))
    return 5;
  return std::nullopt;
}

/// tprt_reduction codes.
int32_t reductionCode(ReductionKind kind) {
  switch (kind) {
  case ReductionKind::Sum:
    return 0;
  case ReductionKind::Max:
    return 1;
  case ReductionKind::Min:
    return 2;
  }
  return 0;
}

class Lowering {
public:
  Lowering(ModuleOp module) : module(module), b(module.getContext()) {}

  LogicalResult run();

private:
  Value i64(Location loc, int64_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 64);
  }
  Value i32(Location loc, int64_t v) {
    return arith::ConstantIntOp::create(b, loc, v, 32);
  }
  /// A pointer to `type`'s sizes in a stack array.
  Value shapeOf(Location loc, Value buffer);
  FailureOr<int64_t> packedAxes(Operation *op, FlatSymbolRefAttr meshRef,
                                ArrayAttr axes);
  LogicalResult lower(Operation *op, Value ctx);

  ModuleOp module;
  OpBuilder b;
  SymbolTableCollection symbols;
};

Value Lowering::shapeOf(Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  auto arrayType = MemRefType::get({type.getRank()}, b.getI64Type());
  Value array = memref::AllocaOp::create(b, loc, arrayType);
  for (int64_t d = 0; d < type.getRank(); ++d) {
    Value size = type.isDynamicDim(d)
                     ? arith::IndexCastOp::create(
                           b, loc, b.getI64Type(),
                           memref::DimOp::create(b, loc, buffer, d))
                           .getResult()
                     : i64(loc, type.getDimSize(d));
    Value index = arith::ConstantIndexOp::create(b, loc, d);
    memref::StoreOp::create(b, loc, size, array, index);
  }
  return bufferPointer(b, loc, array);
}

FailureOr<int64_t>
Lowering::packedAxes(Operation *op, FlatSymbolRefAttr meshRef, ArrayAttr axes) {
  auto mesh = symbols.lookupNearestSymbolFrom<MeshOp>(op, meshRef);
  if (!mesh)
    return op->emitOpError() << "names unknown mesh " << meshRef;
  if (mesh.getRank() > 4 || axes.size() > 4)
    return op->emitOpError()
           << "the CPU runtime handles meshes of up to 4 axes, got "
           << mesh.getRank();
  int64_t packed = axes.size();
  for (auto [i, axis] : llvm::enumerate(getAxisNames(axes)))
    packed |= static_cast<int64_t>(*mesh.getAxisIndex(axis)) << (4 * (i + 1));
  return packed;
}

LogicalResult Lowering::lower(Operation *op, Value ctx) {
  Location loc = op->getLoc();
  Type i64Type = b.getI64Type();
  b.setInsertionPoint(op);

  if (auto index = dyn_cast<AxisIndexOp>(op)) {
    FailureOr<int64_t> axes =
        packedAxes(op, index.getMeshAttr(), index.getAxes());
    if (failed(axes))
      return failure();
    func::FuncOp decl = declareRuntimeFunction(module, "tprt_rt_axis_index");
    Value position =
        func::CallOp::create(b, loc, decl, ValueRange{ctx, i64(loc, *axes)})
            .getResult(0);
    Value asIndex =
        arith::IndexCastOp::create(b, loc, b.getIndexType(), position);
    index.getResult().replaceAllUsesWith(asIndex);
    op->erase();
    return success();
  }

  // The data collectives, in buffer form: one call, whose arguments after
  // the buffers are the element count (a collective over the whole tensor)
  // or the shape, rank and the dimensions it moves; the element type; the
  // reduction, if any; the packed axes.
  auto collective = dyn_cast<CollectiveOpInterface>(op);
  if (!collective)
    return op->emitOpError() << "has no runtime lowering";
  Value input = collective.getInput();
  Value output = collective.getOutput();
  if (!output || !isa<MemRefType>(input.getType()))
    return op->emitOpError()
           << "is still on tensors; run one-shot bufferization first";
  auto inType = cast<MemRefType>(input.getType());
  std::optional<int32_t> dtype = dtypeCode(inType.getElementType());
  if (!dtype)
    return op->emitOpError()
           << "has element type " << inType.getElementType()
           << "; the CPU runtime takes f32, f64, f16, bf16, i32 or i64";
  FailureOr<int64_t> axes =
      packedAxes(op, collective.getMeshAttr(), collective.getAxes());
  if (failed(axes))
    return failure();

  Value in = contiguousBuffer(b, loc, input);
  Value out = contiguousBuffer(b, loc, output);
  // A strided destination: written through a contiguous buffer.
  bool copyBack = out != output;
  SmallVector<Value> args = {ctx, bufferPointer(b, loc, in),
                             bufferPointer(b, loc, out)};
  SmallVector<int64_t> dims = collective.getCollectiveDims();
  if (dims.empty()) {
    // The element count: a constant, times each dynamic size.
    int64_t staticCount = 1;
    for (int64_t d = 0; d < inType.getRank(); ++d)
      if (!inType.isDynamicDim(d))
        staticCount *= inType.getDimSize(d);
    Value count = i64(loc, staticCount);
    for (int64_t d = 0; d < inType.getRank(); ++d)
      if (inType.isDynamicDim(d))
        count = arith::MulIOp::create(
            b, loc, count,
            arith::IndexCastOp::create(b, loc, i64Type,
                                       memref::DimOp::create(b, loc, in, d)));
    args.push_back(count);
  } else {
    args.push_back(shapeOf(loc, in));
    args.push_back(i32(loc, inType.getRank()));
    for (int64_t dim : dims)
      args.push_back(i32(loc, dim));
  }
  args.push_back(i32(loc, *dtype));
  if (std::optional<ReductionKind> reduction = collective.getReduction())
    args.push_back(i32(loc, reductionCode(*reduction)));
  std::string name = collective.getRuntimeEntry();
  args.push_back(i64(loc, *axes));
  func::FuncOp decl = declareRuntimeFunction(module, name);
  func::CallOp::create(b, loc, decl, args);
  if (copyBack)
    memref::CopyOp::create(b, loc, out, output);
  if (in != input)
    memref::DeallocOp::create(b, loc, in);
  if (copyBack)
    memref::DeallocOp::create(b, loc, out);
  op->erase();
  return success();
}

LogicalResult Lowering::run() {
  MLIRContext *context = module.getContext();
  Type ptr = LLVM::LLVMPointerType::get(context);
  // 1. The context argument.
  SmallVector<func::FuncOp> functions;
  for (auto func : module.getOps<func::FuncOp>())
    if (!func.isExternal())
      functions.push_back(func);
  DenseSet<StringRef> withContext;
  for (func::FuncOp func : functions) {
    if (failed(func.insertArgument(0, ptr, DictionaryAttr(), func.getLoc())))
      return failure();
    withContext.insert(func.getName());
  }
  module.walk([&](func::CallOp call) {
    if (withContext.contains(call.getCallee()))
      call->insertOperands(
          0, call->getParentOfType<func::FuncOp>().getArgument(0));
  });
  // Shardings were recorded in the manifest; past this point they would
  // describe pointers. The loops' tp.parallel stays: it describes the loop.
  for (func::FuncOp func : functions)
    removeDiscardableAttrs(func, [](StringRef name) {
      return name.starts_with("tp.") && name != TPDialect::kParallelAttrName;
    });
  // 2. The collectives.
  for (func::FuncOp func : functions) {
    Value ctx = func.getArgument(0);
    SmallVector<Operation *> collectives;
    func.walk([&](Operation *op) {
      if (isa<CollectiveOpInterface, AxisIndexOp>(op))
        collectives.push_back(op);
    });
    for (Operation *op : collectives)
      if (failed(lower(op, ctx)))
        return failure();
  }
  return success();
}

struct ConvertCollectivesToRuntimePass
    : public tp::impl::ConvertCollectivesToRuntimePassBase<
          ConvertCollectivesToRuntimePass> {
  void runOnOperation() override {
    if (failed(Lowering(getOperation()).run()))
      signalPassFailure();
  }
};

} // namespace
