//===- ProgramFile.h - The checksum trailer of a program library -*- C++
//-*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// tp-compile appends a trailer to every program library it links, after the
// last byte the linker wrote (ELF loaders ignore what follows the file's
// sections):
//
//   bytes [0, n)        the shared library as linked
//   bytes [n, n + 8)    "tprt-sum"
//   bytes [n + 8, +8)   n, little-endian
//   bytes [n + 16, +8)  FNV-1a (64 bit) of bytes [0, n), little-endian
//
// tprt_program_load checks it before dlopen: a truncated library (which the
// dynamic loader may map past its end and fault on) or one edited after
// tp-compile (a manifest that no longer describes the code) is refused with a
// message, never run. The sum also identifies a program: ranks of one job
// compare it before their first collective. This header is shared by the
// writer (tools/tp-compile) and the reader (Program.cpp); it has no
// dependencies.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_SRC_PROGRAMFILE_H
#define TPRT_SRC_PROGRAMFILE_H

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace tprt {

constexpr char kTrailerMagic[8] = {'t', 'p', 'r', 't', '-', 's', 'u', 'm'};
constexpr size_t kTrailerSize = 24;
constexpr uint64_t kFnvOffset = 0xcbf29ce484222325ull;
constexpr uint64_t kFnvPrime = 0x100000001b3ull;

/// Extends the FNV-1a sum `hash` over `size` bytes.
inline uint64_t fnv1a(uint64_t hash, const void *data, size_t size) {
  const auto *bytes = static_cast<const unsigned char *>(data);
  for (size_t i = 0; i < size; ++i)
    hash = (hash ^ bytes[i]) * kFnvPrime;
  return hash;
}

inline void storeLE64(unsigned char *out, uint64_t value) {
  for (int i = 0; i < 8; ++i)
    out[i] = static_cast<unsigned char>(value >> (8 * i));
}

inline uint64_t loadLE64(const unsigned char *in) {
  uint64_t value = 0;
  for (int i = 7; i >= 0; --i)
    value = (value << 8) | in[i];
  return value;
}

/// The trailer for a library of `length` bytes whose sum is `hash`.
inline void makeTrailer(uint64_t length, uint64_t hash,
                        unsigned char out[kTrailerSize]) {
  std::memcpy(out, kTrailerMagic, sizeof(kTrailerMagic));
  storeLE64(out + 8, length);
  storeLE64(out + 16, hash);
}

} // namespace tprt

#endif // TPRT_SRC_PROGRAMFILE_H
