//===- RuntimeCalls.h - Calling tprt from lowered code ----------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// What every lowering to tprt_rt_* calls needs: the private declaration of
// an entry point, a bare pointer to a buffer's data, and a contiguous buffer
// to take that pointer from.
//
//===----------------------------------------------------------------------===//

#ifndef TP_CONVERSION_COMMON_RUNTIMECALLS_H
#define TP_CONVERSION_COMMON_RUNTIMECALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/LLVMIR/LLVMTypes.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace mlir::tp {

/// The version of the runtime's call table (TPRT_RT_ABI_VERSION in tprt.h;
/// CallRuntimeThroughTable.cpp checks that they agree). The manifest records
/// it, and a runtime of another version refuses the program.
inline constexpr int64_t kRuntimeAbiVersion = 6;

/// Writes `name` as the manifest writes names: double-quoted, with `"`, `\`
/// and bytes outside printable ASCII escaped (`\"`, `\\`, `\xHH`), so that
/// any symbol or axis name survives (runtime/src/Program.cpp reads it).
void printManifestName(llvm::raw_ostream &os, StringRef name);

/// Where function `name`'s entry starts in `manifest` (the newline before its
/// `func` line), or std::string::npos when it has none.
size_t findManifestFunction(StringRef manifest, StringRef name);

/// `manifest` with `lines` (each ending in a newline) before the `end` of
/// function `name`'s entry; nothing when the function has none.
std::optional<std::string> insertManifestLines(StringRef manifest,
                                               StringRef name, StringRef lines);

/// Reads a name written by printManifestName from the front of `text` and
/// drops it from there; nothing when `text` does not start with one.
std::optional<std::string> parseManifestName(StringRef &text);

/// The private declaration of runtime function `name` in `module`, created
/// at the module's end the first time.
func::FuncOp declareRuntimeFunction(ModuleOp module, StringRef name,
                                    TypeRange inputs, TypeRange results);

/// The same with the entry point's own type: `name` ("tprt_rt_gemm") is one
/// of the runtime's entry points (runtime/include/tprt/tprt_rt_calls.def).
func::FuncOp declareRuntimeFunction(ModuleOp module, StringRef name);

/// The type of runtime entry point `name` as lowered code calls it
/// (pointers as !llvm.ptr, int64_t as i64, int32_t as i32), from
/// tprt_rt_calls.def; nothing when the runtime has no such entry point.
std::optional<FunctionType> runtimeFunctionType(MLIRContext *ctx,
                                                StringRef name);

/// The same as the LLVM dialect writes it (void results as !llvm.void), for
/// declarations made after the lowering to LLVM. `name` must be an entry
/// point.
LLVM::LLVMFunctionType runtimeLLVMFunctionType(MLIRContext *ctx,
                                               StringRef name);

/// The byte offset of entry point `name`'s slot in tprt_rt_table.
std::optional<int64_t> runtimeSlotOffset(StringRef name);

/// A bare `!llvm.ptr` to the data of `buffer`, which has an identity layout.
Value bufferPointer(OpBuilder &b, Location loc, Value buffer);

/// `buffer` itself when its layout is the identity, else a fresh contiguous
/// copy (the caller frees it).
Value contiguousBuffer(OpBuilder &b, Location loc, Value buffer);

} // namespace mlir::tp

#endif // TP_CONVERSION_COMMON_RUNTIMECALLS_H
