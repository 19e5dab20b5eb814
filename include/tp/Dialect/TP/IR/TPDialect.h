//===- TPDialect.h - The tp dialect -----------------------------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_IR_TPDIALECT_H
#define TP_DIALECT_TP_IR_TPDIALECT_H

#include "mlir/IR/Dialect.h"

#include "tp/Dialect/TP/IR/TPDialect.h.inc"

#endif // TP_DIALECT_TP_IR_TPDIALECT_H
