//===- BufferizableOpInterfaceImpl.h - Bufferizing collectives --*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TP_DIALECT_TP_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
#define TP_DIALECT_TP_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H

namespace mlir {
class DialectRegistry;
namespace tp {

/// Attaches BufferizableOpInterface to the data collectives (all_reduce,
/// all_gather, reduce_scatter, all_to_all, all_slice), so that one-shot
/// bufferization turns them into their buffer form: the operand's buffer is
/// read, a new buffer of the result's shape is allocated and written.
void registerBufferizableOpInterfaceExternalModels(DialectRegistry &registry);

} // namespace tp
} // namespace mlir

#endif // TP_DIALECT_TP_TRANSFORMS_BUFFERIZABLEOPINTERFACEIMPL_H
