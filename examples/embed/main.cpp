//===- main.cpp - Running a compiled model from your own program ----------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Loads a program library made by tp-compile, creates a session over its
// mesh, fills every input with ones (global tensors: the runtime scatters
// them by their shardings), runs the first function on every device and
// prints each result's shape and sum.
//
//   embed model.so
//
//===----------------------------------------------------------------------===//

#include "tprt/tprt.h"

#include <cstdio>
#include <vector>

namespace {

/// Prints and frees a failed status; true if there was one.
bool failed(tprt_status status, const char *what) {
  if (!status)
    return false;
  std::fprintf(stderr, "embed: %s: %s\n", what, tprt_status_message(status));
  tprt_status_free(status);
  return true;
}

int64_t count(const tprt_tensor_info &info) {
  int64_t n = 1;
  for (int32_t d = 0; d < info.rank; ++d)
    n *= info.shape[d];
  return n;
}

} // namespace

int main(int argc, char **argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: embed model.so\n");
    return 2;
  }
  tprt_program *program = nullptr;
  if (failed(tprt_program_load(argv[1], &program), "load"))
    return 2;
  const int32_t function = 0;
  const tprt_mesh *mesh = tprt_program_mesh(program, function);
  tprt_session *session = nullptr;
  if (failed(tprt_session_create(mesh, nullptr, &session), "session"))
    return 2;

  // f32 inputs of ones; results of the sizes the manifest gives.
  std::vector<std::vector<float>> inputData, outputData;
  std::vector<tprt_host_tensor> inputs, outputs;
  auto tensorFor = [](const tprt_tensor_info &info, std::vector<float> &data) {
    tprt_host_tensor t{};
    t.dtype = info.dtype;
    t.rank = info.rank;
    for (int32_t d = 0; d < info.rank; ++d)
      t.shape[d] = info.shape[d];
    t.data = data.data();
    return t;
  };
  for (int32_t i = 0; i < tprt_program_num_args(program, function); ++i) {
    const tprt_tensor_info *info = tprt_program_arg(program, function, i);
    if (info->dtype != TPRT_F32) {
      std::fprintf(stderr, "embed: this example feeds f32 inputs only\n");
      return 2;
    }
    inputData.emplace_back(count(*info), 1.0f);
  }
  for (int32_t i = 0; i < tprt_program_num_results(program, function); ++i)
    outputData.emplace_back(count(*tprt_program_result(program, function, i)));
  for (size_t i = 0; i < inputData.size(); ++i)
    inputs.push_back(
        tensorFor(*tprt_program_arg(program, function, static_cast<int32_t>(i)),
                  inputData[i]));
  for (size_t i = 0; i < outputData.size(); ++i)
    outputs.push_back(tensorFor(
        *tprt_program_result(program, function, static_cast<int32_t>(i)),
        outputData[i]));

  if (failed(tprt_session_run(session, program, function, inputs.data(),
                              static_cast<int32_t>(inputs.size()),
                              outputs.data(),
                              static_cast<int32_t>(outputs.size())),
             "run"))
    return 2;
  std::printf("ran '%s' on %lld device(s)\n",
              tprt_program_function_name(program, function),
              static_cast<long long>(tprt_mesh_num_devices(mesh)));
  for (size_t i = 0; i < outputData.size(); ++i) {
    double sum = 0;
    for (float v : outputData[i])
      sum += v;
    std::printf("result #%zu: %zu elements, sum %g\n", i, outputData[i].size(),
                sum);
  }
  tprt_session_destroy(session);
  tprt_program_destroy(program);
  return 0;
}
