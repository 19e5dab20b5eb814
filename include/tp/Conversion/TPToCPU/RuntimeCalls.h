//===- RuntimeCalls.h - Calling the tprt runtime from lowered code *- C++
//-*-===//
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

#ifndef TP_CONVERSION_TPTOCPU_RUNTIMECALLS_H
#define TP_CONVERSION_TPTOCPU_RUNTIMECALLS_H

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"

namespace mlir::tp {

/// The private declaration of runtime function `name` in `module`, created
/// at the module's end the first time.
func::FuncOp declareRuntimeFunction(ModuleOp module, StringRef name,
                                    TypeRange inputs, TypeRange results);

/// A bare `!llvm.ptr` to the data of `buffer`, which has an identity layout.
Value bufferPointer(OpBuilder &b, Location loc, Value buffer);

/// `buffer` itself when its layout is the identity, else a fresh contiguous
/// copy (the caller frees it).
Value contiguousBuffer(OpBuilder &b, Location loc, Value buffer);

} // namespace mlir::tp

#endif // TP_CONVERSION_TPTOCPU_RUNTIMECALLS_H
