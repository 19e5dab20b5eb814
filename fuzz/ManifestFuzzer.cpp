//===- ManifestFuzzer.cpp - Fuzzes the runtime's manifest parser ----------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Any bytes as the `tprt_manifest` text of a program library: the parser must
// return a status (never throw, never read out of bounds), and what it accepts
// must be whole: shardings that fit their meshes and shapes.
//
//===----------------------------------------------------------------------===//

#include "Program.h"

#include <cstdio>
#include <cstdlib>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  std::string text(reinterpret_cast<const char *>(data), size);
  std::vector<tprt::Function> functions;
  tprt::Target target = tprt::Target::Cpu;
  tprt_status status = tprt::parseManifest(text, functions, target, "fuzz");
  if (status) {
    if (tprt_status_code(status) == TPRT_OK || !tprt_status_message(status) ||
        !*tprt_status_message(status)) {
      std::fprintf(stderr, "tp-fuzz: a manifest error without a message\n");
      std::abort();
    }
    tprt_status_free(status);
    return 0;
  }
  // Accepted: every tensor's sharding must be valid for its mesh and shape.
  for (const tprt::Function &function : functions) {
    for (const auto *list : {&function.args, &function.results})
      for (const tprt_tensor_info &info : *list) {
        tprt_status bad =
            tprt_sharding_check(&function.mesh, &info.sharding, info.shape);
        if (bad) {
          std::fprintf(stderr,
                       "tp-fuzz: the manifest parser accepted a sharding the "
                       "runtime rejects: %s\n",
                       tprt_status_message(bad));
          std::abort();
        }
      }
  }
  return 0;
}
