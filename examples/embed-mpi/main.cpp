//===- main.cpp - Running a compiled model from your own MPI program ------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// An MPI program that gives a compiled model as many of its processes as the
// model's mesh has devices: it splits MPI_COMM_WORLD into the model's
// processes and the rest, creates a session over the model's communicator
// (tprt_session_create_mpi), fills every input with ones on its rank 0 (the
// runtime sends each process its shards), runs the first function — one rank
// a process — and prints each result's shape and sum on rank 0. The other
// processes wait at the final barrier.
//
//   mpirun -np N embed-mpi model.so      # N >= the model's device count
//
//===----------------------------------------------------------------------===//

#include "tprt/tprt.h"
#include "tprt/tprt_mpi.h"

#include <cstdio>
#include <vector>

namespace {

/// Prints and frees a failed status; true if there was one.
bool failed(tprt_status status, const char *what, int rank) {
  if (!status)
    return false;
  std::fprintf(stderr, "embed-mpi: process %d: %s: %s\n", rank, what,
               tprt_status_message(status));
  tprt_status_free(status);
  return true;
}

int64_t count(const tprt_tensor_info &info) {
  int64_t n = 1;
  for (int32_t d = 0; d < info.rank; ++d)
    n *= info.shape[d];
  return n;
}

tprt_host_tensor tensorFor(const tprt_tensor_info &info,
                           std::vector<float> &data) {
  tprt_host_tensor t{};
  t.dtype = info.dtype;
  t.rank = info.rank;
  for (int32_t d = 0; d < info.rank; ++d)
    t.shape[d] = info.shape[d];
  t.data = data.data();
  return t;
}

/// The model's part, on `comm` (its processes only).
int runModel(const char *path, MPI_Comm comm, int worldSize) {
  int rank = 0;
  MPI_Comm_rank(comm, &rank);
  tprt_program *program = nullptr;
  if (failed(tprt_program_load(path, &program), "load", rank))
    return 2;
  const int32_t function = 0;
  const tprt_mesh *mesh = tprt_program_mesh(program, function);
  tprt_session *session = nullptr;
  if (failed(tprt_session_create_mpi(mesh, comm, nullptr, &session), "session",
             rank))
    return 2;
  // Inputs of ones, read on rank 0 only; results arrive on rank 0 only.
  std::vector<std::vector<float>> inputData, outputData;
  std::vector<tprt_host_tensor> inputs, outputs;
  for (int32_t i = 0; i < tprt_program_num_args(program, function); ++i) {
    const tprt_tensor_info *info = tprt_program_arg(program, function, i);
    if (info->dtype != TPRT_F32) {
      std::fprintf(stderr, "embed-mpi: this example feeds f32 inputs only\n");
      return 2;
    }
    inputData.emplace_back(rank == 0 ? count(*info) : 0, 1.0f);
    inputs.push_back(tensorFor(*info, inputData.back()));
  }
  for (int32_t i = 0; i < tprt_program_num_results(program, function); ++i) {
    const tprt_tensor_info *info = tprt_program_result(program, function, i);
    outputData.emplace_back(rank == 0 ? count(*info) : 0);
    outputs.push_back(tensorFor(*info, outputData.back()));
  }
  if (failed(tprt_session_run(session, program, function, inputs.data(),
                              static_cast<int32_t>(inputs.size()),
                              outputs.data(),
                              static_cast<int32_t>(outputs.size())),
             "run", rank))
    return 2;
  if (rank == 0) {
    std::printf("ran '%s' on %lld device(s), one a process (%lld of %d)\n",
                tprt_program_function_name(program, function),
                static_cast<long long>(tprt_mesh_num_devices(mesh)),
                static_cast<long long>(tprt_mesh_num_devices(mesh)), worldSize);
    for (size_t i = 0; i < outputData.size(); ++i) {
      double sum = 0;
      for (float v : outputData[i])
        sum += v;
      std::printf("result #%zu: %zu elements, sum %g\n", i,
                  outputData[i].size(), sum);
    }
  }
  tprt_session_destroy(session);
  tprt_program_destroy(program);
  return 0;
}

} // namespace

int main(int argc, char **argv) {
  // Sessions call MPI from a rank's thread.
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  int me = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &me);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (argc != 2) {
    if (me == 0)
      std::fprintf(stderr, "usage: mpirun -np N embed-mpi model.so\n");
    MPI_Finalize();
    return 2;
  }
  // How many processes the model needs: its mesh, read by every process.
  int64_t devices = 0;
  {
    tprt_program *program = nullptr;
    if (failed(tprt_program_load(argv[1], &program), "load", me))
      MPI_Abort(MPI_COMM_WORLD, 2);
    devices = tprt_mesh_num_devices(tprt_program_mesh(program, 0));
    tprt_program_destroy(program);
  }
  if (devices > size) {
    if (me == 0)
      std::fprintf(stderr,
                   "embed-mpi: the model needs %lld processes, got %d\n",
                   static_cast<long long>(devices), size);
    MPI_Finalize();
    return 2;
  }
  MPI_Comm model = MPI_COMM_NULL;
  MPI_Comm_split(MPI_COMM_WORLD, me < devices ? 0 : MPI_UNDEFINED, me, &model);
  int code = 0;
  if (model != MPI_COMM_NULL) {
    code = runModel(argv[1], model, size);
    MPI_Comm_free(&model);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  MPI_Finalize();
  return code;
}
