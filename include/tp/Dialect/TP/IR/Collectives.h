//===- Collectives.h - The collectives and what each kind costs -*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// The facts about each kind of collective that hold before there is an op to
// ask (the planner costs reshards it has not inserted yet), and the
// CollectiveOpInterface that every collective op implements. A new kind is a
// case of CollectiveKind (TPAttrs.td) and a case in each switch of
// Collectives.cpp.
//
// Bytes each device sends for a collective over a group of n devices, with
// ring algorithms (S = bytes of the per-device tensor named below):
//   all_reduce      2 (n-1)/n * S   (S: the reduced tensor)
//   all_gather        (n-1)/n * S   (S: the gathered result)
//   reduce_scatter    (n-1)/n * S   (S: the reduced input)
//   all_to_all        (n-1)/n^2 * S (S: the exchanged tensor, n inputs)
//   all_slice         0
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_IR_COLLECTIVES_H
#define TP_DIALECT_TP_IR_COLLECTIVES_H

#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/OpDefinition.h"
#include "tp/Dialect/TP/IR/TPAttrs.h"
#include <optional>
#include <string>

namespace mlir::tp {

/// How many kinds there are (CollectiveKind's values are 0..n-1).
constexpr unsigned kNumCollectiveKinds = getMaxEnumValForCollectiveKind() + 1;

/// Bytes one device sends for `kind` over `groupSize` devices on a tensor of
/// `bytes` (see the file comment for which tensor).
double collectiveBytes(CollectiveKind kind, int64_t groupSize, double bytes);

/// The formula used, as text (`2(n-1)/n*S`), for reports.
StringRef collectiveFormula(CollectiveKind kind);

/// The tensor S of the formula, from the per-device operand and result
/// bytes over a group of `groupSize`.
double collectiveFormulaTensorBytes(CollectiveKind kind, int64_t groupSize,
                                    double inputBytes, double outputBytes);

/// False for a collective that moves no data between devices (all_slice).
bool collectiveMovesData(CollectiveKind kind);

/// True when every member of a group receives the same tensor.
bool collectiveResultIsUniform(CollectiveKind kind);

/// Bytes of one element of `type`: integers and floats by their width (at
/// least one byte), `index` as 64 bits, complex numbers and vectors by their
/// parts; any other type as one pointer (8 bytes).
double elementBytes(Type type);

/// Bytes of a tensor or buffer of `type`, a dynamic size counting as 1.
double shapedTypeBytes(ShapedType type);

} // namespace mlir::tp

#include "tp/Dialect/TP/IR/CollectiveOpInterface.h.inc"

#endif // TP_DIALECT_TP_IR_COLLECTIVES_H
