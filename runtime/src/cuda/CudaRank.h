//===- CudaRank.h - One rank on a GPU --------------------------*- C++ -*-===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A rank of a GPU world: its device's primary context, its own stream and
// cuBLAS handle, and the modules of the program images it launched from.
// Everything a rank does is enqueued on its stream, in program order; the
// host waits only where a result leaves the device (DeviceRanks::
// synchronize) or a collective stages through host memory.
//
//===----------------------------------------------------------------------===//

#ifndef TPRT_SRC_CUDA_CUDARANK_H
#define TPRT_SRC_CUDA_CUDARANK_H

#include "CudaLibraries.h"

#include "../Internal.h"

#include <array>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace tprt::cuda {

#ifdef TPRT_HAS_CUDA_HEADERS

struct CudaRank {
  const Driver *cu = nullptr;
  const Cublas *blas = nullptr;
  int64_t rank = 0;
  int ordinal = 0;
  CUdevice device = 0;
  CUcontext context = nullptr;
  CUstream stream = nullptr;
  cublasHandle_t handle = nullptr;
  /// The checksum of the program the rank runs now (DeviceRanks::
  /// useProgram): with the image's address it names a loaded image, for a
  /// world outlives its programs, and another library may be mapped where
  /// an unloaded one was.
  uint64_t program = 0;
  /// Each program image loaded once (key: its program's checksum, 0 for
  /// libtprt's own, and its address), and its kernels by name.
  std::map<std::pair<uint64_t, const void *>, CUmodule> modules;
  std::map<std::pair<CUmodule, std::string>, CUfunction> functions;

  /// A status naming this rank, the call and the driver's error.
  tprt_status check(CUresult result, const char *call) const;
  tprt_status check(cublasStatus_t status, const char *call) const;
  /// The same for a cuBLASLt call (its own status names).
  tprt_status checkLt(cublasStatus_t status, const char *call) const;
  /// `status` (a library's failure) with this rank and its GPU named first.
  tprt_status named(tprt_status status) const;
  /// Waits until everything enqueued on the stream has run, polling so that
  /// the wait ends when `comm`'s world is aborted (a peer that failed never
  /// enqueues its side of a collective this rank's stream waits on).
  tprt_status wait(const tprt_communicator *comm) const;
  /// Copies `rows` rows of `width` bytes between device buffers with the
  /// given pitches, on the stream.
  tprt_status copy2D(const void *src, size_t srcPitch, void *dst,
                     size_t dstPitch, size_t width, int64_t rows) const;
  /// Kernel `name` of `image` (a cubin, PTX or fatbin) of program `owner`
  /// (its checksum; 0 for libtprt's own images), the image loaded on first
  /// use and kept as long as the world.
  tprt_status kernel(uint64_t owner, const void *image, const char *name,
                     CUfunction *out);

  /// Device timing (tprt_session_options.device_timing): each timed op is a
  /// span, a pair of events recorded around it on the stream; takeTiming
  /// sums them by kind once the stream has run them. Kinds below
  /// TPRT_NUM_COLLECTIVE_KINDS are the collectives'.
  enum SpanKind : int {
    Kernel = TPRT_NUM_COLLECTIVE_KINDS,
    Gemm,
    Copy,
    /// The whole run: from before its first op to after its last.
    Run,
  };
  struct Span {
    int kind = -1; // -1: not timed
    CUevent start = nullptr;
  };
  Span begin(int kind);
  void end(const Span &span);
  void startTiming();
  /// Ends the whole run's span (after the program's last op is enqueued).
  void endRun();
  tprt_status takeTiming(tprt_device_profile *profile);
  Span runSpan;
  bool timing = false;
  struct Timed {
    int kind;
    CUevent start, end;
  };
  std::vector<Timed> spans;
  /// Events for spans, kept between runs.
  std::vector<CUevent> idleEvents;
  /// The first failure to record a span (reported by takeTiming).
  tprt_status timingError = nullptr;

  /// CUDA graphs (GraphMode): one slot per function the rank ran.
  struct GraphSlot {
    /// Runs so far (the first is plain: the warm-up).
    int64_t runs = 0;
    /// Why its capture failed: it runs plainly from then on.
    std::string refused;
    CUgraphExec exec = nullptr;
    /// The entry buffers and the rank's generation it was captured with.
    std::vector<void *> buffers;
    uint64_t generation = 0;
    /// The buffers of its last run's results, whether each is idle (its
    /// array freed: kept for the next run), and their bytes.
    std::vector<void *> outputs;
    std::vector<char> idle;
    std::vector<size_t> outputBytes;
    /// What the captured run counted (collectives, GEMMs), counted again
    /// for each replay: the same ops ran.
    tprt_comm_stats stats{};
    int64_t gemmCalls = 0;
    double gemmFlops = 0;
  };
  std::map<std::pair<uint64_t, int32_t>, GraphSlot> graphs;
  /// Which slot's result buffer each kept output is (its index there).
  std::map<void *, std::pair<std::pair<uint64_t, int32_t>, size_t>> outputs;
  /// Bumped whenever a buffer a graph may read outside the entry's own (a
  /// collective's staging buffer) is freed: graphs of an older generation
  /// are captured again.
  uint64_t generation = 0;
  /// The pointer arrays of batched GEMMs whose two batch levels no single
  /// stride spans (tprt_gemm_pointers writes them on the stream, the GEMM
  /// reads them next: one buffer serves every such GEMM of a run).
  CUdeviceptr gemmPointers = 0;
  size_t gemmPointerBytes = 0;
  /// Pointer arrays written once and kept, by the GEMM's (A, B, C, batch1,
  /// count, byte strides).
  std::map<std::array<int64_t, 11>, CUdeviceptr> pointerArrays;
  /// Whether the rank's stream is capturing a graph.
  bool capturing = false;
  /// cuBLASLt, for GEMMs with an epilogue or a C apart from D: opened, its
  /// handle made and its workspace allocated on the first such GEMM.
  const CublasLt *lt = nullptr;
  cublasLtHandle_t ltHandle = nullptr;
  CUdeviceptr ltWorkspace = 0;
  /// A GEMM's cuBLASLt plan, made once per shape (the descriptor's fields,
  /// the compute type, whether C and the bias are there, the pointers'
  /// alignments): its descriptors and the algorithm the heuristic chose
  /// (split-K among them, where it asks for workspace).
  struct LtPlan {
    cublasLtMatmulDesc_t op = nullptr;
    cublasLtMatrixLayout_t a = nullptr, b = nullptr, c = nullptr, d = nullptr;
    cublasLtMatmulAlgo_t algo{};
    size_t workspace = 0;
  };
  std::map<std::vector<int64_t>, LtPlan> ltPlans;
  /// The buffers a program's constants were uploaded into (fill_once).
  std::set<void *> filled;
  /// Frees the slots' graphs and idle outputs.
  void releaseGraphs();
  /// Graph launches of the timed run (tprt_device_profile.graph_launches).
  int64_t graphLaunches = 0;

private:
  CUevent event();
};

/// The runtime's own kernels (RuntimeKernels.cu), a fatbin for
/// CudaRank::kernel with owner 0.
const void *runtimeKernels();

/// Times `op` as a span of `kind` on `rank`'s stream.
template <typename Op> void timed(CudaRank &rank, int kind, Op op) {
  CudaRank::Span span = rank.begin(kind);
  op();
  rank.end(span);
}

/// Opens rank `rank` on GPU `ordinal`: retains the primary context, makes
/// it current on the calling thread, creates the stream and the cuBLAS
/// handle bound to it.
tprt_status createRank(const Driver *cu, const Cublas *blas, int64_t rank,
                       int ordinal, CudaRank &out);
/// Releases what createRank made (the context is made current first).
void destroyRank(CudaRank &rank);

/// The call table of CUDA programs: buffers, uploads and launches on the
/// rank's stream, GEMMs with cuBLAS, all_slice as a strided device copy;
/// the collectives and axis_index are the communicator's.
const tprt_rt_table *cudaFunctions();

/// What the GPU worlds (`device`, `nccl`) offer the session: their ranks'
/// CudaRank, one per local rank, in `gpus`.
class CudaRanks : public DeviceRanks {
public:
  tprt_status enter(int64_t rank) override;
  tprt_status alloc(int64_t rank, size_t bytes, void **ptr) override;
  void release(int64_t rank, void *ptr) override;
  tprt_status zero(int64_t rank, void *ptr, size_t bytes) override;
  tprt_status copyToDevice(int64_t rank, void *dst, const void *src,
                           size_t bytes) override;
  tprt_status copyToHost(int64_t rank, void *dst, const void *src,
                         size_t bytes) override;
  tprt_status synchronize(int64_t rank) override;
  tprt_status startTiming(int64_t rank) override;
  void endRun(int64_t rank) override { gpu(rank).endRun(); }
  const char *graphRefusal() const override { return nullptr; }
  void *idleOutput(int64_t rank, FunctionKey function, size_t index,
                   size_t bytes) override;
  GraphMode graphMode(FunctionKey function, bool enabled,
                      const std::vector<int64_t> &ranks,
                      const std::vector<std::vector<void *>> &buffers) override;
  tprt_status runEntry(int64_t rank, const EntryCall &call,
                       tprt_rank_context *ctx,
                       const std::function<tprt_status()> &body) override;
  tprt_status takeTiming(int64_t rank, tprt_device_profile *profile) override;
  const tprt_rt_table *table() const override { return cudaFunctions(); }
  void *rankState(int64_t rank) override { return &gpu(rank); }
  void useProgram(int64_t rank, uint64_t checksum) override {
    gpu(rank).program = checksum;
  }

protected:
  /// `gpus` holds ranks firstRank, firstRank + 1, ... (all of them in one
  /// process, or this process's one under MPI).
  CudaRank &gpu(int64_t rank) {
    return gpus[static_cast<size_t>(rank - firstRank)];
  }
  int64_t firstRank = 0;
  /// The communicator whose world's abort ends the rank's waits.
  virtual tprt_communicator *rankCommunicator(int64_t rank) = 0;
  /// The communicator of host memory under the rank's (local or mpi): how
  /// the ranks agree that every capture succeeded.
  virtual tprt_communicator *hostCommunicator(int64_t rank) = 0;
  std::vector<CudaRank> gpus;
};

#endif // TPRT_HAS_CUDA_HEADERS

} // namespace tprt::cuda

#endif // TPRT_SRC_CUDA_CUDARANK_H
