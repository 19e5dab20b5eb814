//===- Session.cpp - Running a program on every device of a mesh ----------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A run on the session's backend (every rank in this process):
//  1. checks the inputs and outputs against the manifest;
//  2. cuts each rank's shard of every input (tprt_scatter_shard) and gives it
//     a zeroed buffer per result;
//  3. starts one thread per rank on a fresh world, each calling the
//     function's entry point with its rank context;
//  4. reports the root cause if a rank failed (the first error that is not
//     another rank's abort), else gathers every result
//     (tprt_gather_shards).
//
//===----------------------------------------------------------------------===//

#include "Program.h"

#include <algorithm>
#include <cblas.h>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <thread>

using namespace tprt;

struct tprt_session_s {
  tprt_mesh mesh;
  int64_t timeoutMs = 0;
  std::string backend = "local";
  std::vector<tprt_comm_stats> stats;
  std::vector<double> seconds;
  std::vector<tprt_rank_profile> profiles;
};

namespace {

bool sameMesh(const tprt_mesh &a, const tprt_mesh &b) {
  if (a.rank != b.rank)
    return false;
  for (int32_t i = 0; i < a.rank; ++i)
    if (a.sizes[i] != b.sizes[i])
      return false;
  return true;
}

tprt_status checkTensor(const char *what, int32_t index,
                        const tprt_tensor_info &expected,
                        const tprt_host_tensor &given) {
  bool same = given.dtype == expected.dtype && given.rank == expected.rank;
  for (int32_t d = 0; same && d < given.rank; ++d)
    same = given.shape[d] == expected.shape[d];
  if (!same)
    return error(TPRT_INVALID_ARGUMENT, what, " #", index, " is ",
                 tprt_dtype_name(given.dtype),
                 formatShape(given.shape, std::max(given.rank, 0)),
                 "; the program expects ", tprt_dtype_name(expected.dtype),
                 formatShape(expected.shape, expected.rank));
  if (!given.data)
    return error(TPRT_INVALID_ARGUMENT, what, " #", index, " has no data");
  return nullptr;
}

size_t bytesOf(const tprt_tensor_info &info, const int64_t *shape) {
  return static_cast<size_t>(product(shape, info.rank)) *
         tprt_dtype_size(info.dtype);
}

} // namespace

extern "C" {

tprt_status tprt_session_create(const tprt_mesh *mesh,
                                const tprt_session_options *options,
                                tprt_session **session) {
  if (tprt_status status = tprt_mesh_check(mesh))
    return status;
  std::unique_ptr<tprt_session_s> created;
  try {
    created = std::make_unique<tprt_session_s>();
    if (options && options->backend && *options->backend)
      created->backend = options->backend;
  } catch (const std::exception &e) {
    return error(TPRT_INTERNAL, "session: ", e.what());
  }
  created->mesh = *mesh;
  if (options)
    created->timeoutMs = options->timeout_ms;
  // An unknown backend fails here, not at the first run.
  tprt_world_options worldOptions{created->backend.c_str(), created->timeoutMs};
  tprt_world *world = nullptr;
  if (tprt_status status = tprt_world_create(mesh, &worldOptions, &world))
    return status;
  tprt_world_destroy(world);
  *session = created.release();
  return nullptr;
}

void tprt_session_destroy(tprt_session *session) { delete session; }

} // extern "C"

namespace {

tprt_status runSession(tprt_session *session, const tprt_program *program,
                       int32_t function, const tprt_host_tensor *inputs,
                       int32_t num_inputs, tprt_host_tensor *outputs,
                       int32_t num_outputs) {
  if (!session || !program)
    return error(TPRT_INVALID_ARGUMENT, "session or program is null");
  if (function < 0 || function >= tprt_program_num_functions(program))
    return error(TPRT_INVALID_ARGUMENT, "no function #", function);
  const Function &f = program->functions[function];
  // 1. Inputs, outputs, mesh.
  if (!sameMesh(f.mesh, session->mesh))
    return error(TPRT_INVALID_ARGUMENT, "function '", f.name,
                 "' runs on a mesh of shape ",
                 formatShape(f.mesh.sizes, f.mesh.rank),
                 "; the session's mesh is ",
                 formatShape(session->mesh.sizes, session->mesh.rank));
  if (num_inputs != f.numArgs)
    return error(TPRT_INVALID_ARGUMENT, "function '", f.name, "' takes ",
                 f.numArgs, " inputs, got ", num_inputs);
  if (num_outputs != f.numResults)
    return error(TPRT_INVALID_ARGUMENT, "function '", f.name, "' returns ",
                 f.numResults, " results, got room for ", num_outputs);
  for (int32_t i = 0; i < num_inputs; ++i)
    if (tprt_status status = checkTensor("input", i, f.args[i], inputs[i]))
      return status;
  for (int32_t i = 0; i < num_outputs; ++i)
    if (tprt_status status = checkTensor("output", i, f.results[i], outputs[i]))
      return status;

  // 2. Each rank's buffers.
  int64_t numRanks = tprt_mesh_num_devices(&f.mesh);
  std::vector<std::vector<std::vector<char>>> buffers(numRanks);
  for (int64_t rank = 0; rank < numRanks; ++rank) {
    for (int32_t i = 0; i < num_inputs; ++i) {
      const tprt_tensor_info &info = f.args[i];
      int64_t local[TPRT_MAX_TENSOR_RANK];
      tprt_shard_shape(&f.mesh, &info.sharding, info.shape, local);
      buffers[rank].emplace_back(bytesOf(info, local));
      if (tprt_status status = tprt_scatter_shard(
              &f.mesh, &info.sharding, info.shape, info.dtype, inputs[i].data,
              rank, buffers[rank].back().data()))
        return status;
    }
    for (int32_t i = 0; i < num_outputs; ++i) {
      const tprt_tensor_info &info = f.results[i];
      int64_t local[TPRT_MAX_TENSOR_RANK];
      tprt_shard_shape(&f.mesh, &info.sharding, info.shape, local);
      buffers[rank].emplace_back(bytesOf(info, local));
    }
  }

  // 3. Every rank on a fresh world. The ranks share the machine's cores:
  // OpenBLAS gets its share per rank instead of every core per rank (unless
  // OPENBLAS_NUM_THREADS says otherwise).
  if (!std::getenv("OPENBLAS_NUM_THREADS")) {
    int cores =
        static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    openblas_set_num_threads(std::max(
        1, cores / static_cast<int>(std::min<int64_t>(numRanks, cores))));
  }
  tprt_world_options options{session->backend.c_str(), session->timeoutMs};
  tprt_world *world = nullptr;
  if (tprt_status status = tprt_world_create(&f.mesh, &options, &world))
    return status;
  if (tprt_world_num_local_ranks(world) != numRanks) {
    tprt_world_destroy(world);
    return error(TPRT_INVALID_ARGUMENT, "backend '", session->backend,
                 "' drives ", tprt_world_num_local_ranks(world), " of ",
                 numRanks, " ranks in this process; sessions run every rank");
  }
  std::vector<tprt_status> statuses(numRanks, nullptr);
  session->stats.assign(numRanks, {});
  session->seconds.assign(numRanks, 0);
  session->profiles.assign(numRanks, {});
  // Everything a rank needs is allocated here: nothing in a rank's thread
  // can throw.
  std::vector<std::vector<void *>> pointers(numRanks);
  for (int64_t rank = 0; rank < numRanks; ++rank)
    for (std::vector<char> &buffer : buffers[rank])
      pointers[rank].push_back(buffer.data());
  std::vector<std::thread> threads;
  threads.reserve(static_cast<size_t>(numRanks));
  for (int64_t rank = 0; rank < numRanks; ++rank) {
    threads.emplace_back([&, rank] {
      tprt_communicator *comm = nullptr;
      tprt_rank_context *ctx = nullptr;
      if ((statuses[rank] = tprt_world_communicator(world, rank, &comm)) ||
          (statuses[rank] = tprt_rank_context_create(comm, &ctx)))
        return;
      Clock::time_point start = Clock::now();
      f.entry(ctx, pointers[rank].data());
      session->seconds[rank] =
          std::chrono::duration<double>(Clock::now() - start).count();
      statuses[rank] = tprt_rank_context_take_status(ctx);
      tprt_communicator_stats(comm, &session->stats[rank]);
      tprt_rank_profile &profile = session->profiles[rank];
      profile.total_seconds = session->seconds[rank];
      profile.comm = session->stats[rank];
      tprt_rank_context_gemm_stats(ctx, &profile.gemm_calls,
                                   &profile.gemm_flops, &profile.gemm_seconds);
      tprt_rank_context_destroy(ctx);
    });
  }
  for (std::thread &t : threads)
    t.join();
  tprt_world_destroy(world);

  // 4. The root cause of a failure, or the results.
  tprt_status failure = nullptr;
  for (tprt_status &status : statuses)
    if (status && (!failure || (tprt_status_code(failure) == TPRT_ABORTED &&
                                tprt_status_code(status) != TPRT_ABORTED)))
      std::swap(failure, status);
  for (tprt_status status : statuses)
    tprt_status_free(status);
  if (failure)
    return failure;
  for (int32_t i = 0; i < num_outputs; ++i) {
    std::vector<const void *> shards;
    for (int64_t rank = 0; rank < numRanks; ++rank)
      shards.push_back(buffers[rank][num_inputs + i].data());
    const tprt_tensor_info &info = f.results[i];
    if (tprt_status status =
            tprt_gather_shards(&f.mesh, &info.sharding, info.shape, info.dtype,
                               shards.data(), outputs[i].data))
      return status;
  }
  return nullptr;
}

} // namespace

extern "C" {

tprt_status tprt_session_run(tprt_session *session, const tprt_program *program,
                             int32_t function, const tprt_host_tensor *inputs,
                             int32_t num_inputs, tprt_host_tensor *outputs,
                             int32_t num_outputs) {
  // No C++ exception crosses the C API (out of memory for the shards, a
  // thread that cannot start): it becomes TPRT_INTERNAL with its message.
  try {
    return runSession(session, program, function, inputs, num_inputs, outputs,
                      num_outputs);
  } catch (const std::exception &e) {
    return error(TPRT_INTERNAL, "run: ", e.what());
  }
}

tprt_status tprt_session_stats(const tprt_session *session, int64_t rank,
                               tprt_comm_stats *stats, double *seconds) {
  if (rank < 0 || rank >= static_cast<int64_t>(session->stats.size()))
    return error(TPRT_INVALID_ARGUMENT, "no statistics for rank ", rank,
                 " (has the session run?)");
  *stats = session->stats[rank];
  if (seconds)
    *seconds = session->seconds[rank];
  return nullptr;
}

tprt_status tprt_session_profile(const tprt_session *session, int64_t rank,
                                 tprt_rank_profile *profile) {
  if (rank < 0 || rank >= static_cast<int64_t>(session->profiles.size()))
    return error(TPRT_INVALID_ARGUMENT, "no profile for rank ", rank,
                 " (has the session run?)");
  *profile = session->profiles[rank];
  return nullptr;
}

} // extern "C"
