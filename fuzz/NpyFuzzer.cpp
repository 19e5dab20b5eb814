//===- NpyFuzzer.cpp - Fuzzes tp-run's .npy reader ------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Any bytes as a .npy file: the reader must reject bad ones with a message and
// never allocate more than the file holds; an array it accepts has exactly the
// bytes its shape and dtype need.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string bytes(reinterpret_cast<const char *>(data), size);
  tprun::Array array;
  std::string error;
  if (!tprun::parseNpy(bytes, "fuzz.npy", array, error)) {
    if (error.empty()) {
      std::fprintf(stderr, "tp-fuzz: a .npy rejected without a message\n");
      std::abort();
    }
    return 0;
  }
  if (array.bytes.size() !=
      static_cast<size_t>(array.numElements()) * tprt_dtype_size(array.dtype)) {
    std::fprintf(stderr, "tp-fuzz: %zu bytes for %lld elements\n",
                 array.bytes.size(),
                 static_cast<long long>(array.numElements()));
    std::abort();
  }
  return 0;
}
