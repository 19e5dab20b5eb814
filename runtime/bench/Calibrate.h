//===- Calibrate.h - Measure this machine for the planner's model -*- C++
//-*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_BENCH_CALIBRATE_H
#define TPRT_BENCH_CALIBRATE_H

#include <cstdint>

/// Measures collectives, GEMMs and memory on `ranks` ranks of `backend` and
/// writes the machine-model file `path` (Calibrate.cpp). Returns the exit
/// code: 0, or 2 after printing what failed.
int tprtCalibrate(const char *backend, int64_t ranks, const char *path);

#endif // TPRT_BENCH_CALIBRATE_H
