//===- RuntimeCalls.cpp - Calling the tprt runtime from lowered code ------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "tp/Conversion/Common/RuntimeCalls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "llvm/ADT/StringExtras.h"

#include "tprt/tprt.h"

#include <cstddef>
#include <type_traits>

using namespace mlir;

namespace {

/// The MLIR type of C type `T` as lowered code passes it.
template <typename T> Type typeOfC(MLIRContext *ctx) {
  if constexpr (std::is_pointer_v<T>)
    return LLVM::LLVMPointerType::get(ctx);
  else if constexpr (std::is_same_v<T, int64_t>)
    return IntegerType::get(ctx, 64);
  else
    static_assert(std::is_same_v<T, int32_t>,
                  "tprt_rt_calls.def: a parameter type lowered code cannot "
                  "pass (pointers, int64_t and int32_t only)");
  return IntegerType::get(ctx, 32);
}

template <typename R, typename... Args>
FunctionType typeOfEntry(MLIRContext *ctx, R (*)(Args...)) {
  SmallVector<Type> results;
  if constexpr (!std::is_void_v<R>)
    results.push_back(typeOfC<R>(ctx));
  return FunctionType::get(ctx, {typeOfC<Args>(ctx)...}, results);
}

} // namespace

std::optional<FunctionType> mlir::tp::runtimeFunctionType(MLIRContext *ctx,
                                                          StringRef name) {
#define TPRT_RT_CALL(slot, Name, version, ret, params)                         \
  if (name == "tprt_rt_" #slot)                                                \
    return typeOfEntry(ctx, static_cast<ret(*) params>(nullptr));
#include "tprt/tprt_rt_calls.def"
  return std::nullopt;
}

LLVM::LLVMFunctionType mlir::tp::runtimeLLVMFunctionType(MLIRContext *ctx,
                                                         StringRef name) {
  std::optional<FunctionType> type = runtimeFunctionType(ctx, name);
  assert(type && "not an entry point of tprt_rt_calls.def");
  Type result =
      type->getNumResults() ? type->getResult(0) : LLVM::LLVMVoidType::get(ctx);
  return LLVM::LLVMFunctionType::get(result, type->getInputs());
}

std::optional<int64_t> mlir::tp::runtimeSlotOffset(StringRef name) {
#define TPRT_RT_CALL(slot, Name, version, ret, params)                         \
  if (name == "tprt_rt_" #slot)                                                \
    return static_cast<int64_t>(offsetof(tprt_rt_table, slot));
#include "tprt/tprt_rt_calls.def"
  return std::nullopt;
}

func::FuncOp mlir::tp::declareRuntimeFunction(ModuleOp module, StringRef name) {
  std::optional<FunctionType> type =
      runtimeFunctionType(module.getContext(), name);
  assert(type && "not an entry point of tprt_rt_calls.def");
  return declareRuntimeFunction(module, name, type->getInputs(),
                                type->getResults());
}

func::FuncOp mlir::tp::declareRuntimeFunction(ModuleOp module, StringRef name,
                                              TypeRange inputs,
                                              TypeRange results) {
  if (auto existing = module.lookupSymbol<func::FuncOp>(name))
    return existing;
  OpBuilder b = OpBuilder::atBlockEnd(module.getBody());
  auto decl = func::FuncOp::create(b, module.getLoc(), name,
                                   b.getFunctionType(inputs, results));
  decl.setPrivate();
  return decl;
}

Value mlir::tp::bufferPointer(OpBuilder &b, Location loc, Value buffer) {
  Value index = memref::ExtractAlignedPointerAsIndexOp::create(b, loc, buffer);
  Value asInt = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
  return LLVM::IntToPtrOp::create(
      b, loc, LLVM::LLVMPointerType::get(b.getContext()), asInt);
}

Value mlir::tp::contiguousBuffer(OpBuilder &b, Location loc, Value buffer) {
  auto type = cast<MemRefType>(buffer.getType());
  if (type.getLayout().isIdentity())
    return buffer;
  SmallVector<Value> dynamicSizes;
  for (int64_t d = 0; d < type.getRank(); ++d)
    if (type.isDynamicDim(d))
      dynamicSizes.push_back(memref::DimOp::create(b, loc, buffer, d));
  Value copy = memref::AllocOp::create(
      b, loc, MemRefType::get(type.getShape(), type.getElementType()),
      dynamicSizes);
  memref::CopyOp::create(b, loc, buffer, copy);
  return copy;
}

void mlir::tp::printManifestName(llvm::raw_ostream &os, StringRef name) {
  os << '"';
  for (char c : name) {
    auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\')
      os << '\\' << c;
    else if (u < 0x20 || u >= 0x7f)
      os << "\\x" << llvm::hexdigit(u >> 4, /*LowerCase=*/true)
         << llvm::hexdigit(u & 0xf, /*LowerCase=*/true);
    else
      os << c;
  }
  os << '"';
}

size_t mlir::tp::findManifestFunction(StringRef manifest, StringRef name) {
  std::string funcLine;
  llvm::raw_string_ostream os(funcLine);
  os << "\nfunc ";
  printManifestName(os, name);
  os << " ";
  return manifest.find(funcLine);
}

std::optional<std::string> mlir::tp::insertManifestLines(StringRef manifest,
                                                         StringRef name,
                                                         StringRef lines) {
  size_t at = findManifestFunction(manifest, name);
  if (at == StringRef::npos)
    return std::nullopt;
  size_t end = manifest.find("\nend\n", at + 1);
  if (end == StringRef::npos)
    return std::nullopt;
  return (manifest.take_front(end + 1) + lines + manifest.drop_front(end + 1))
      .str();
}

std::optional<std::string> mlir::tp::parseManifestName(StringRef &text) {
  if (!text.consume_front("\""))
    return std::nullopt;
  std::string name;
  while (!text.empty()) {
    char c = text.front();
    text = text.drop_front();
    if (c == '"')
      return name;
    if (c != '\\') {
      name += c;
      continue;
    }
    if (text.consume_front("\"")) {
      name += '"';
    } else if (text.consume_front("\\")) {
      name += '\\';
    } else {
      unsigned byte = 0;
      if (!text.consume_front("x") || text.size() < 2 ||
          text.take_front(2).getAsInteger(16, byte))
        return std::nullopt;
      name += static_cast<char>(byte);
      text = text.drop_front(2);
    }
  }
  return std::nullopt;
}
