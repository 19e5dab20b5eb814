//===- MpiHarness.cpp - The conformance suite under mpirun ----------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// tprtMpiTests is the conformance suite for the `mpi` backend, run by ctest
// under `mpirun -np 2` and `-np 4`: every process runs every test, and a run
// on a mesh of N devices is a world over the first N processes (the others
// wait for the next run). A mesh larger than the job is skipped. Statuses a
// test records per rank are shared between the processes after each run, and
// the job fails when any process failed. Only process 0 prints the usual
// report; the others print their failures.
//
//===----------------------------------------------------------------------===//

#include "Harness.h"

#include "tprt/tprt_mpi.h"

#include "gtest/gtest.h"

#include <cstdio>

namespace tprt::test {
namespace {

int worldRank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int worldSize() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

class MpiHarness : public Harness {
public:
  std::string name() const override { return "mpi"; }
  bool fits(const tprt_mesh &mesh) const override {
    return tprt_mesh_num_devices(&mesh) <= worldSize();
  }
  bool findsCrossGroupWaits() const override { return false; }

  void run(const tprt_mesh &mesh, int64_t timeoutMs,
           const std::function<void(tprt_communicator *)> &body) override {
    int me = worldRank();
    int64_t devices = tprt_mesh_num_devices(&mesh);
    ASSERT_LE(devices, worldSize()) << "the test should have been skipped";
    MPI_Comm sub = MPI_COMM_NULL;
    MPI_Comm_split(MPI_COMM_WORLD, me < devices ? 0 : MPI_UNDEFINED, me, &sub);
    if (sub == MPI_COMM_NULL)
      return;
    tprt_world_options options = TPRT_WORLD_OPTIONS_INIT;
    options.timeout_ms = timeoutMs;
    tprt_world *world = nullptr;
    tprt_status status = tprt_world_create_mpi(&mesh, sub, &options, &world);
    ASSERT_EQ(status, nullptr) << tprt_status_message(status);
    tprt_communicator *comm = nullptr;
    status = tprt_world_communicator(world, me, &comm);
    ASSERT_EQ(status, nullptr) << tprt_status_message(status);
    body(comm);
    tprt_world_destroy(world);
    MPI_Comm_free(&sub);
  }

  void share(std::vector<tprt_code> &codes,
             std::vector<std::string> &messages) override {
    int me = worldRank(), size = worldSize();
    // Process r owns entry r.
    std::vector<int> allCodes(static_cast<size_t>(size));
    int mine = me < static_cast<int>(codes.size()) ? codes[me] : 0;
    MPI_Allgather(&mine, 1, MPI_INT, allCodes.data(), 1, MPI_INT,
                  MPI_COMM_WORLD);
    std::string text =
        me < static_cast<int>(messages.size()) ? messages[me] : std::string();
    int length = static_cast<int>(text.size());
    std::vector<int> lengths(static_cast<size_t>(size)),
        offsets(static_cast<size_t>(size));
    MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT,
                  MPI_COMM_WORLD);
    int total = 0;
    for (int r = 0; r < size; ++r) {
      offsets[r] = total;
      total += lengths[r];
    }
    std::vector<char> all(static_cast<size_t>(total) + 1);
    MPI_Allgatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(),
                   offsets.data(), MPI_CHAR, MPI_COMM_WORLD);
    for (int r = 0; r < size && r < static_cast<int>(codes.size()); ++r) {
      codes[r] = static_cast<tprt_code>(allCodes[r]);
      messages[r].assign(all.data() + offsets[r], lengths[r]);
    }
  }
};

/// On processes other than 0: only failed assertions, with the process.
class FailurePrinter : public ::testing::EmptyTestEventListener {
public:
  explicit FailurePrinter(int rank) : rank(rank) {}
  void OnTestPartResult(const ::testing::TestPartResult &result) override {
    if (result.failed())
      std::fprintf(stderr, "[process %d] %s:%d: %s\n", rank,
                   result.file_name() ? result.file_name() : "?",
                   result.line_number(), result.summary());
  }

private:
  int rank;
};

} // namespace

std::vector<std::shared_ptr<Harness>> allHarnesses() {
  return {std::make_shared<MpiHarness>()};
}

std::vector<std::shared_ptr<Harness>> hostHarnesses() { return allHarnesses(); }

} // namespace tprt::test

int main(int argc, char **argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  ::testing::InitGoogleTest(&argc, argv);
  int rank = tprt::test::worldRank();
  if (rank != 0) {
    ::testing::TestEventListeners &listeners =
        ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new tprt::test::FailurePrinter(rank));
  }
  int rc = RUN_ALL_TESTS();
  int worst = 0;
  MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  MPI_Finalize();
  return worst;
}
