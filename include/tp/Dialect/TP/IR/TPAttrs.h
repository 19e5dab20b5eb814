//===- TPAttrs.h - tp dialect attributes ------------------------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_IR_TPATTRS_H
#define TP_DIALECT_TP_IR_TPATTRS_H

#include "mlir/IR/Attributes.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectImplementation.h"

#include "tp/Dialect/TP/IR/TPEnums.h.inc"

#define GET_ATTRDEF_CLASSES
#include "tp/Dialect/TP/IR/TPAttrs.h.inc"

namespace mlir::tp {
/// The names in an array of mesh axis names (StringAttrs).
SmallVector<StringRef> getAxisNames(ArrayAttr axes);
} // namespace mlir::tp

#endif // TP_DIALECT_TP_IR_TPATTRS_H
