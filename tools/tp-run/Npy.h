//===- Npy.h - Reading and writing .npy files -------------------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TP_TOOLS_TP_RUN_NPY_H
#define TP_TOOLS_TP_RUN_NPY_H

#include "tprt/tprt.h"

#include <string>
#include <vector>

namespace tprun {

/// A host tensor that owns its bytes.
struct Array {
  tprt_dtype dtype = TPRT_F32;
  std::vector<int64_t> shape;
  std::vector<char> bytes;

  int64_t numElements() const;
  tprt_host_tensor view();
};

/// Reads a C-ordered .npy file (versions 1-3) of f32, f64, f16, i32 or i64;
/// on failure returns false with a message naming the file and the problem.
bool readNpy(const std::string &path, Array &array, std::string &error);
/// Parses the bytes of a .npy file; `name` is the file's name for messages.
bool parseNpy(const std::string &data, const std::string &name, Array &array,
              std::string &error);
/// Writes `array` as a version 1.0 .npy file (bf16 has no numpy dtype: it is
/// written as f32).
bool writeNpy(const std::string &path, const Array &array, std::string &error);

} // namespace tprun

#endif // TP_TOOLS_TP_RUN_NPY_H
