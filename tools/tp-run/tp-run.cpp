//===- tp-run.cpp - Runs a compiled program on every device of its mesh ---===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// tp-run {model.mlir | model.so} [--entry NAME]
//        [--inputs a.npy,b.npy | --random-inputs [--seed N]]
//        [--output-dir DIR] [--verify] [--backend cpu|cuda] [--profile]
//        [--timeout-ms N] [--repeat N] [--no-graphs]
//
// 1. A .mlir model is compiled with tp-compile (next to this tool) first.
// 2. The inputs (.npy or random) are checked against the program's manifest
//    before anything runs.
// 3. The function runs on every device of its mesh (one thread each on the
//    CPU backend): inputs scattered by their shardings (contiguous shards
//    read in place), results gathered.
// 4. --verify checks that the inputs are unchanged (programs never write
//    their inputs), and checks the run three ways, per result:
//    - every device's own copy is compared with the other devices that hold
//      the same shard (replicas must agree; a disagreement names both);
//    - inputs that are pending sums were split into random terms (not the
//      value on one device and zeros elsewhere), so a collective that
//      copies instead of summing is caught;
//    - the gathered result is compared, element by element, with an
//      independent reference: the model (or --reference MODEL.mlir) without
//      shardings, compiled with the plain lowering (tp-compile --unsharded
//      --reference: no fusion, libm math, GEMMs as loops) and run on one
//      device. An element passes when |got - want| <= tol * max(|want|,
//      rms(want)): relative to its own magnitude, with the tensor's RMS as
//      the floor (tol 1e-5 for f32, 1e-10 for f64, 1e-2 for f16, 4e-2 for bf16,
//      exact for integers). Where that fails, the reference runs again on
//      inputs moved by one ulp each: a model that far amplifies rounding
//      (weights of scale 1, no normalization) moves its result by D, and
//      8 * D becomes the floor of every element's allowance (printed as
//      "widened to"): rounding noise no implementation in that precision
//      avoids, far below what a wrong collective or a lowering bug makes.
// 5. --output-dir writes result<i>.npy, only once everything succeeded (and
//    verification, if asked for, passed).
// --repeat N (N > 1) runs on one session (its world, threads and kernels
// made once): after the run on global inputs, the arguments are placed on
// the devices once (tprt_array_place), a warm-up run goes first, and N runs
// on the placed arrays are timed, as a user's loop would run; it prints the
// best and median wall time, and checks the warm-up run's results against
// the first; a result written in a donated argument (tp.donate) is that
// argument in the next run, as a training loop carries its state (under
// MPI, N runs on global inputs); on GPU ranks the first timed run is
// captured as a CUDA graph per rank and the others replay it (--no-graphs:
// every op launched by the host, every run);
// --all-entries runs (and verifies) every function of the program.
//
// Exit codes: 0 ran (and passed), 1 verification failed, 2 bad input or a
// runtime error (with a message).
//
//===----------------------------------------------------------------------===//

#include "Npy.h"
#include "tprt/tprt.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <malloc.h>
#include <optional>
#include <random>
#include <spawn.h>
#include <sstream>
#include <string>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char **environ;

using namespace tprun;

namespace {

struct Options {
  std::string model;
  std::string entry;
  std::vector<std::string> inputs;
  bool randomInputs = false;
  uint64_t seed = 0;
  std::string outputDir;
  bool verify = false;
  bool profile = false;
  bool noGraphs = false;
  int64_t timeoutMs = 0;
  std::string comm = "local";
  bool commGiven = false;
  std::string target = "cpu"; // --backend: a target of tprt_targets.def
  bool targetGiven = false;
  bool onDevice = false; // its ranks keep tensors in device memory
  int repeat = 1;
  bool shardsInPlace = false;
  bool allEntries = false;
  std::string tpCompile;
  std::string reference; // --reference: the model --verify compares with
  std::vector<std::string> spmdOptions; // passed to tp-compile
};

const char *kUsage = "usage: tp-run {model.mlir | model.so} [options]\n";

const char *kHelp =
    "Runs a compiled tp-mlir program on every device of its mesh (one thread\n"
    "per device on the CPU), inputs scattered by their shardings, results\n"
    "gathered. A .mlir model is compiled with tp-compile first. Under\n"
    "mpirun -np N each process is one rank (communicator mpi, or nccl-mpi\n"
    "with --backend cuda); rank 0 reads, reports, verifies and writes.\n"
    "\n"
    "  --entry NAME                 the function to run (default: the first)\n"
    "  --all-entries                run (and verify) every function; needs\n"
    "                               --random-inputs\n"
    "  --inputs a.npy,b.npy         the inputs, one .npy per argument\n"
    "  --random-inputs              random inputs instead\n"
    "  --seed N                     their seed (default 0)\n"
    "  --output-dir DIR             write result<i>.npy there when the run\n"
    "                               (and --verify) succeeded\n"
    "  --verify                     check the run: replicas agree, and every\n"
    "                               result matches the unsharded model run\n"
    "                               on one device (plain lowering), element\n"
    "                               by element; pending-sum inputs are split\n"
    "                               into random terms\n"
    "  --reference MODEL            what --verify compares with (default: the\n"
    "                               model itself): a global-form .mlir, or a\n"
    "                               .so of tp-compile --unsharded --reference\n"
    "                               (where no compiler is at hand)\n"
    "  --backend cpu|cuda           where the program runs: CPU threads, or\n"
    "                               GPU ranks (communicator 'device': every\n"
    "                               rank on one GPU, or 'nccl': rank r on\n"
    "                               GPU r); a .mlir model is then compiled\n"
    "                               with --target cuda\n"
    "  --comm NAME                  the communicator backend (default local;\n"
    "                               mpi under an MPI launcher)\n"
    "  --timeout-ms N               how long a rank waits for its group\n"
    "                               (default 60000 or TPRT_TIMEOUT_MS)\n"
    "  --profile                    time by kind of op: GEMMs, collectives,\n"
    "                               the rest; on GPU ranks also device time\n"
    "                               (CUDA events) of kernels, GEMMs,\n"
    "                               collectives and copies\n"
    "  --repeat N                   place the arguments once, warm up, run\n"
    "                               N times on one session, print the best\n"
    "                               and median wall time; on GPU ranks the\n"
    "                               first timed run is captured as a CUDA\n"
    "                               graph and the others replay it\n"
    "  --no-graphs                  never capture CUDA graphs: every run\n"
    "                               launches each op\n"
    "  --shards-in-place            the --repeat runs read each device's\n"
    "                               input shards cut once before the first\n"
    "                               and leave results as shards (as an\n"
    "                               embedding program with placed weights\n"
    "                               does: tprt_session_run_shards); the wall\n"
    "                               time is the run alone. Every process\n"
    "                               reads the inputs. Results, --verify and\n"
    "                               --profile come from one more run on the\n"
    "                               global inputs, which the in-place\n"
    "                               results are checked against where this\n"
    "                               process drives every rank\n"
    "  --sequence-parallel          compile with --tp-spmd's "
    "sequence-parallel\n"
    "  --replicate-open-boundaries  compile with --tp-spmd's\n"
    "                               replicate-open-boundaries\n"
    "  --auto-plan                  compile with --tp-spmd's auto-plan: every\n"
    "                               open sharding chosen by the planner\n"
    "  --memory-per-device BYTES    with --auto-plan or --search: the budget\n"
    "                               (e.g. 80GB)\n"
    "  --search / --search=false    --tp-spmd's search, on unless\n"
    "                               --search=false or --sequence-parallel:\n"
    "                               op splits and pending sums planned\n"
    "  --cost-model NAME|FILE       with --auto-plan or --search: h200\n"
    "                               or a file of tprt-bench --calibrate\n"
    "  --tp-compile PATH            the tp-compile to use (default: the one\n"
    "                               next to tp-run)\n"
    "  --help                       this text\n"
    "\n"
    "Exit codes: 0 ran (and passed), 1 verification failed, 2 bad input or a\n"
    "runtime error (with a message).\n";

/// The temporary directory of this run, removed however tp-run exits.
std::string temporaryDir;

/// Under an MPI launcher (mpirun -np N tp-run ...) this process is one rank:
/// its number, from the launcher's environment; -1 outside MPI. Only rank 0
/// reads inputs, prints, verifies and writes results.
int64_t mpiRank() {
  for (const char *name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"})
    if (const char *value = std::getenv(name))
      return std::atoll(value);
  return -1;
}
bool isRoot() { return mpiRank() <= 0; }

void removeTemporaryDir() {
  if (temporaryDir.empty())
    return;
  std::error_code ignored;
  std::filesystem::remove_all(temporaryDir, ignored);
  temporaryDir.clear();
}

[[noreturn]] void fail(const std::string &message) {
  std::cerr << "tp-run: error: " << message << "\n";
  std::exit(2);
}

[[noreturn]] void failStatus(const std::string &what, tprt_status status) {
  std::string message = what + ": " + tprt_status_message(status) + " (" +
                        tprt_code_name(tprt_status_code(status)) + ")";
  tprt_status_free(status);
  fail(message);
}

Options parse(int argc, char **argv) {
  Options o;
  auto value = [&](int &i, const std::string &flag) -> std::string {
    if (i + 1 >= argc)
      fail(flag + " needs a value\n" + kUsage);
    return argv[++i];
  };
  // A whole decimal integer in [lo, hi], or a usage error naming the flag.
  auto integer = [&](int &i, const std::string &flag, int64_t lo,
                     int64_t hi) -> int64_t {
    std::string text = value(i, flag);
    errno = 0;
    char *end = nullptr;
    long long v = std::strtoll(text.c_str(), &end, 10);
    if (text.empty() || errno != 0 || *end != '\0' || v < lo || v > hi)
      fail(flag + " takes an integer in [" + std::to_string(lo) + ", " +
           std::to_string(hi) + "]; got '" + text + "'");
    return v;
  };
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::cout << kUsage << "\n" << kHelp;
      std::exit(0);
    } else if (a == "--entry") {
      o.entry = value(i, a);
    } else if (a == "--inputs") {
      std::stringstream list(value(i, a));
      std::string item;
      while (std::getline(list, item, ','))
        if (!item.empty())
          o.inputs.push_back(item);
    } else if (a == "--random-inputs") {
      o.randomInputs = true;
    } else if (a == "--seed") {
      o.seed = static_cast<uint64_t>(integer(i, a, 0, INT64_MAX));
    } else if (a == "--output-dir") {
      o.outputDir = value(i, a);
    } else if (a == "--verify") {
      o.verify = true;
    } else if (a == "--profile") {
      o.profile = true;
    } else if (a == "--no-graphs") {
      o.noGraphs = true;
    } else if (a == "--backend") {
      o.target = value(i, a);
      int32_t onDevice = tprt_target_on_device(o.target.c_str());
      if (onDevice < 0) {
        std::string names;
        for (int32_t t = 0; t < tprt_num_targets(); ++t)
          names += (t ? ", " : "") + std::string(tprt_target_name(t));
        fail("unknown backend '" + o.target +
             "'; this build's targets: " + names);
      }
      o.targetGiven = true;
    } else if (a == "--comm") {
      o.comm = value(i, a);
      o.commGiven = true;
      bool known = false;
      for (int32_t b = 0; b < tprt_num_backends(); ++b)
        known |= o.comm == tprt_backend_name(b);
      if (!known) {
        std::string names;
        for (int32_t b = 0; b < tprt_num_backends(); ++b)
          names += (b ? ", " : "") + std::string(tprt_backend_name(b));
        fail("unknown communicator '" + o.comm + "'; this build has: " + names);
      }
    } else if (a == "--timeout-ms") {
      o.timeoutMs = integer(i, a, 1, INT64_MAX / 1000000);
    } else if (a == "--all-entries") {
      o.allEntries = true;
    } else if (a == "--repeat") {
      o.repeat = static_cast<int>(integer(i, a, 1, 1000000));
    } else if (a == "--shards-in-place") {
      o.shardsInPlace = true;
    } else if (a == "--sequence-parallel" ||
               a == "--replicate-open-boundaries" || a == "--auto-plan" ||
               a == "--search" || a == "--search=false" ||
               a == "--search=true") {
      o.spmdOptions.push_back(a);
    } else if (a == "--memory-per-device" || a == "--cost-model") {
      o.spmdOptions.push_back(a + "=" + value(i, a));
    } else if (a == "--tp-compile") {
      o.tpCompile = value(i, a);
    } else if (a == "--reference") {
      o.reference = value(i, a);
    } else if (!a.empty() && a[0] == '-') {
      fail("unknown option '" + a + "'\n" + kUsage);
    } else if (o.model.empty()) {
      o.model = a;
    } else {
      fail("more than one model given ('" + o.model + "', '" + a + "')");
    }
  }
  if (o.model.empty())
    fail(std::string("no model given\n") + kUsage);
  if (!o.reference.empty() && !o.verify)
    fail("--reference names what --verify compares with; add --verify");
  if (o.randomInputs && !o.inputs.empty())
    fail("give either --inputs or --random-inputs, not both");
  if (o.allEntries && (!o.randomInputs || !o.entry.empty()))
    fail("--all-entries runs every function with --random-inputs (and no "
         "--entry)");
  // A communicator without --backend names the target it runs. Without one,
  // the target's default, or under an MPI launcher the target's backend
  // whose ranks are processes (`mpi` for the CPU, `nccl-mpi` for CUDA: one
  // GPU a process, NCCL bootstrapped by MPI).
  if (o.commGiven && !o.targetGiven)
    o.target = tprt_backend_target(o.comm.c_str());
  o.onDevice = tprt_target_on_device(o.target.c_str()) == 1;
  if (!o.commGiven) {
    o.comm = tprt_target_default_backend(o.target.c_str());
    if (mpiRank() >= 0)
      for (int32_t b = 0; b < tprt_num_backends(); ++b)
        if (tprt_backend_processes(tprt_backend_name(b)) == 1 &&
            o.target == tprt_backend_target(tprt_backend_name(b)))
          o.comm = tprt_backend_name(b);
  }
  if (o.target != tprt_backend_target(o.comm.c_str())) {
    std::string names;
    for (int32_t b = 0; b < tprt_num_backends(); ++b)
      if (o.target == tprt_backend_target(tprt_backend_name(b)))
        names +=
            (names.empty() ? "" : ", ") + std::string(tprt_backend_name(b));
    fail("--backend " + o.target + " runs on its own communicators (" + names +
         "); '" + o.comm + "' runs " + tprt_backend_target(o.comm.c_str()) +
         " programs");
  }
  if (o.onDevice) {
    // The GPU first: without a driver this is the whole story.
    tprt_cuda_info info = TPRT_CUDA_INFO_INIT;
    if (tprt_status s = tprt_cuda_query(&info)) {
      std::string message = tprt_status_message(s);
      tprt_status_free(s);
      fail("--backend cuda: " + message);
    }
    const char *gpu = std::getenv("TPRT_CUDA_DEVICE");
    std::string mapping =
        o.comm == "nccl" ? "rank r on GPU r"
                         : "every rank on GPU " + std::string(gpu ? gpu : "0");
    std::fprintf(stderr,
                 "tp-run: %s (%d found; driver %d, cuBLAS %d, NCCL %d), "
                 "communicator '%s'\n",
                 mapping.c_str(), info.device_count, info.driver_version,
                 info.cublas_version, info.nccl_version, o.comm.c_str());
  }
  return o;
}

bool endsWith(const std::string &s, const std::string &suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

/// The directory of this executable.
std::string selfDir() {
  char buf[4096];
  ssize_t n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
  if (n <= 0)
    return ".";
  std::string path(buf, static_cast<size_t>(n));
  return path.substr(0, path.rfind('/'));
}

/// Runs tp-compile on `model`; its diagnostics go to stderr. `reference`:
/// without shardings, with the plain lowering (--verify's reference).
void compile(const Options &o, const std::string &model,
             const std::string &output, bool reference) {
  std::string tool =
      o.tpCompile.empty() ? selfDir() + "/tp-compile" : o.tpCompile;
  std::vector<std::string> args = {tool, model, "-o", output};
  if (reference) {
    args.push_back("--unsharded");
    args.push_back("--reference");
  } else {
    args.insert(args.end(), o.spmdOptions.begin(), o.spmdOptions.end());
    args.push_back("--target");
    args.push_back(o.target);
  }
  std::vector<char *> argv;
  for (std::string &a : args)
    argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid;
  if (posix_spawn(&pid, tool.c_str(), nullptr, nullptr, argv.data(), environ) !=
      0)
    fail("cannot run '" + tool + "' to compile '" + model + "'");
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    fail("'" + model + "' did not compile" +
         (reference ? " without its shardings (the reference of --verify)"
                    : ""));
}

std::string shapeString(tprt_dtype dtype, const int64_t *shape, int32_t rank) {
  std::string s = std::string(tprt_dtype_name(dtype)) + "[";
  for (int32_t d = 0; d < rank; ++d)
    s += (d ? ", " : "") + std::to_string(shape[d]);
  return s + "]";
}

double at(const Array &a, int64_t i) {
  return tprt_element_value(a.dtype, a.bytes.data(), i);
}

/// The relative tolerance of --verify for `dtype` (0: exact), the runtime's
/// own (tprt_tolerance: Python's verify() uses the same).
double toleranceOf(tprt_dtype dtype, const char *precision = "highest") {
  return std::max(0.0, tprt_tolerance(dtype, precision));
}

/// `[i, j, k]` of flat index `flat` in `shape`.
std::string indexString(int64_t flat, const int64_t *shape, int32_t rank) {
  std::vector<int64_t> index(static_cast<size_t>(rank));
  for (int32_t d = rank - 1; d >= 0; --d) {
    index[d] = shape[d] ? flat % shape[d] : 0;
    flat = shape[d] ? flat / shape[d] : 0;
  }
  std::string s = "[";
  for (int32_t d = 0; d < rank; ++d)
    s += (d ? ", " : "") + std::to_string(index[d]);
  return s + "]";
}

/// Element-by-element comparison of `got` with `want` (see step 4), by the
/// runtime's tprt_compare.
struct Comparison : tprt_comparison {
  double sensitivity = 0; // an absolute allowance: the model's own (below)

  bool pass() const { return bad == 0; }
  /// Whether agreeing shows anything: some element is not NaN in both.
  bool proves() const { return elements == 0 || nan_in_both < elements; }

  std::string describe(const int64_t *shape, int32_t rank) const {
    std::ostringstream os;
    os << bad << " of " << elements << " elements off";
    if (nan_in_both > 0)
      os << "; NaN in both at " << nan_in_both << " of " << elements
         << (proves() ? "" : ": nothing to compare");
    if (worst >= 0) {
      os << "; worst at " << indexString(worst, shape, rank) << ": got "
         << worst_got << ", expected " << worst_want;
      if (tolerance > 0)
        os << " (" << std::setprecision(3) << worst_ratio << "x its tolerance)";
    }
    return os.str();
  }
};

Comparison compare(tprt_dtype dtype, const void *got, const void *want,
                   int64_t n, double sensitivity = 0,
                   const char *precision = "highest") {
  Comparison c;
  c.sensitivity = sensitivity;
  tprt_status status =
      tprt_compare(dtype, got, want, n, -1, precision, 0, sensitivity, &c);
  if (status) {
    // The dtype and the manifest's precision were checked when loaded.
    std::fprintf(stderr, "tp-run: %s\n", tprt_status_message(status));
    tprt_status_free(status);
    std::exit(2);
  }
  return c;
}

/// Moves every normal (nonzero, finite) element of `a`, a float type whose
/// bits are `Bits` with exponent field `exponent`, one ulp up or down.
template <typename Bits>
void nudgeElements(Array &a, Bits exponent, std::mt19937_64 &rng) {
  Bits *bits = reinterpret_cast<Bits *>(a.bytes.data());
  for (int64_t i = 0, n = a.numElements(); i < n; ++i) {
    Bits e = bits[i] & exponent;
    if (e != 0 && e != exponent)
      bits[i] = (rng() & 1) ? bits[i] + 1 : bits[i] - 1;
  }
}

/// `inputs` with every nonzero finite float element moved by one unit in the
/// last place of its type, up or down at random (integers kept).
std::vector<Array> nudged(const std::vector<Array> &inputs, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<Array> out = inputs;
  for (Array &a : out) {
    switch (a.dtype) {
    case TPRT_F32:
      nudgeElements<uint32_t>(a, 0x7f800000u, rng);
      break;
    case TPRT_F64:
      nudgeElements<uint64_t>(a, 0x7ff0000000000000ull, rng);
      break;
    case TPRT_F16:
      nudgeElements<uint16_t>(a, 0x7c00u, rng);
      break;
    case TPRT_BF16:
      nudgeElements<uint16_t>(a, 0x7f80u, rng);
      break;
    default:
      break;
    }
  }
  return out;
}

/// The largest |a - b| over the elements finite in both.
double largestDifference(const Array &a, const Array &b) {
  double largest = 0;
  for (int64_t i = 0, n = a.numElements(); i < n; ++i) {
    double x = at(a, i), y = at(b, i);
    if (std::isfinite(x) && std::isfinite(y))
      largest = std::max(largest, std::fabs(x - y));
  }
  return largest;
}

/// How much rounding alone may move a result, in units of the reference's
/// own movement when its inputs move by one ulp: each op of an f32 program
/// rounds its result about that much, and a model that amplifies one
/// amplifies the other.
constexpr double kSensitivityFactor = 8;

Array randomArray(const tprt_tensor_info &info, std::mt19937_64 &rng) {
  Array a;
  a.dtype = info.dtype;
  a.shape.assign(info.shape, info.shape + info.rank);
  a.bytes.resize(static_cast<size_t>(a.numElements()) *
                 tprt_dtype_size(info.dtype));
  std::uniform_real_distribution<float> real(-1.0f, 1.0f);
  std::uniform_int_distribution<int64_t> integer(-8, 7);
  for (int64_t i = 0; i < a.numElements(); ++i) {
    char *p = a.bytes.data();
    switch (info.dtype) {
    case TPRT_F32:
      reinterpret_cast<float *>(p)[i] = real(rng);
      break;
    case TPRT_F64:
      reinterpret_cast<double *>(p)[i] = real(rng);
      break;
    case TPRT_I32:
      reinterpret_cast<int32_t *>(p)[i] = static_cast<int32_t>(integer(rng));
      break;
    case TPRT_I64:
      reinterpret_cast<int64_t *>(p)[i] = integer(rng);
      break;
    case TPRT_BF16:
    case TPRT_F16: {
      // Multiples of 1/64 in [-1, 1): exact in both formats.
      float f = std::floor(real(rng) * 64.0f) / 64.0f;
      uint16_t bits =
          info.dtype == TPRT_BF16 ? tprt_f32_to_bf16(f) : tprt_f32_to_f16(f);
      reinterpret_cast<uint16_t *>(p)[i] = bits;
      break;
    }
    }
  }
  return a;
}

struct RunResult {
  std::vector<Array> outputs;
  tprt_session *session = nullptr;
  int64_t numRanks = 1;
  /// The best wall time of the runs, and the ranks' program time in it.
  double best = 1e300, bestCpu = 0;
  /// --repeat on arrays placed once (every rank in this process): the
  /// placement's time, the timed runs' median, and the last run's results
  /// fetched; empty `arrayOutputs` otherwise.
  bool onArrays = false;
  double placeSeconds = 0, median = 0;
  /// The last run's wall time (the one --profile describes).
  double lastSeconds = 0;
  std::vector<Array> arrayOutputs;
};

/// On GPU ranks, --profile's device times (CUDA events on each rank's
/// stream), summed over ranks; the host-side figures above are enqueue times.
void printDeviceProfile(const tprt_session *session, int64_t numRanks,
                        const tprt_rank_profile &host, double wallSeconds) {
  tprt_device_profile total = TPRT_DEVICE_PROFILE_INIT;
  double run = 0;
  for (int64_t r = 0; r < numRanks; ++r) {
    tprt_device_profile p = TPRT_DEVICE_PROFILE_INIT;
    if (tprt_status st = tprt_session_device_profile(session, r, &p))
      failStatus("device profile", st);
    run = std::max(run, p.run_seconds);
    total.graph_launches += p.graph_launches;
    total.kernel_launches += p.kernel_launches;
    total.kernel_seconds += p.kernel_seconds;
    total.gemm_calls += p.gemm_calls;
    total.gemm_seconds += p.gemm_seconds;
    total.copies += p.copies;
    total.copy_seconds += p.copy_seconds;
    for (int k = 0; k < TPRT_NUM_COLLECTIVE_KINDS; ++k) {
      total.collective_calls[k] += p.collective_calls[k];
      total.collective_seconds[k] += p.collective_seconds[k];
    }
  }
  std::cout << "device time (CUDA events on each rank's stream, all ranks "
               "together):\n";
  if (total.kernel_launches)
    std::printf("  %-15s %6lld launches %21s %10.3f ms\n", "kernels",
                static_cast<long long>(total.kernel_launches), "",
                total.kernel_seconds * 1e3);
  if (total.gemm_calls)
    std::printf("  %-15s %6lld calls %9.3f GFLOP %10.3f ms  %8.1f TFLOP/s\n",
                "gemm", static_cast<long long>(total.gemm_calls),
                host.gemm_flops / 1e9, total.gemm_seconds * 1e3,
                total.gemm_seconds > 0
                    ? host.gemm_flops / total.gemm_seconds / 1e12
                    : 0.0);
  for (int k = 0; k < TPRT_NUM_COLLECTIVE_KINDS; ++k)
    if (total.collective_calls[k])
      std::printf(
          "  %-15s %6lld calls %12lld bytes %10.3f ms\n",
          tprt_collective_kind_name(static_cast<tprt_collective_kind>(k)),
          static_cast<long long>(total.collective_calls[k]),
          static_cast<long long>(host.comm.bytes[k]),
          total.collective_seconds[k] * 1e3);
  if (total.copies)
    std::printf("  %-15s %6lld copies %23s %10.3f ms\n", "device copies",
                static_cast<long long>(total.copies), "",
                total.copy_seconds * 1e3);
  if (total.graph_launches)
    std::printf("  %-15s %6lld launches (the ops ran as one CUDA graph per "
                "rank; --no-graphs times each)\n",
                "cuda graphs", static_cast<long long>(total.graph_launches));
  // The last run as a whole: its device time (first op to last, on the
  // slowest rank) against its wall time; the rest is the host's.
  std::printf("  %-15s %38.3f ms on the device (slowest rank), %.3f ms wall: "
              "host overhead %.3f ms\n",
              "the run", run * 1e3, wallSeconds * 1e3,
              std::max(0.0, wallSeconds - run) * 1e3);
}

/// Runs `function` `repeat` times on one session (its world made once);
/// `partialSeed` (0: none) splits pending-sum inputs into random terms
/// (tprt_session_options).
RunResult run(const Options &o, const std::string &comm,
              const tprt_program *program, int32_t function,
              std::vector<Array> &inputs, uint64_t partialSeed = 0,
              int repeat = 1) {
  RunResult r;
  for (int32_t i = 0; i < tprt_program_num_results(program, function); ++i) {
    const tprt_tensor_info *info = tprt_program_result(program, function, i);
    Array a;
    a.dtype = info->dtype;
    a.shape.assign(info->shape, info->shape + info->rank);
    a.bytes.resize(static_cast<size_t>(a.numElements()) *
                   tprt_dtype_size(info->dtype));
    r.outputs.push_back(std::move(a));
  }
  const tprt_mesh *mesh = tprt_program_mesh(program, function);
  r.numRanks = tprt_mesh_num_devices(mesh);
  tprt_session_options options = TPRT_SESSION_OPTIONS_INIT;
  options.timeout_ms = o.timeoutMs;
  options.backend = comm.c_str();
  options.partial_seed = partialSeed;
  options.device_timing = o.profile && o.onDevice;
  // --verify compares every replica itself, element by element.
  options.skip_replica_check = o.verify;
  options.no_graphs = o.noGraphs;
  if (tprt_status s = tprt_session_create(mesh, &options, &r.session))
    failStatus("cannot create a session", s);
  std::vector<tprt_host_tensor> in, out;
  for (Array &a : inputs)
    in.push_back(a.view());
  for (Array &a : r.outputs)
    out.push_back(a.view());
  using Clock = std::chrono::steady_clock;
  auto since = [](Clock::time_point start) {
    return std::chrono::duration<double>(Clock::now() - start).count();
  };
  auto keepBest = [&](double seconds) {
    if (seconds >= r.best)
      return;
    r.best = seconds;
    r.bestCpu = 0;
    for (int64_t rank = 0; rank < r.numRanks; ++rank) {
      tprt_comm_stats stats;
      double rankSeconds = 0;
      if (!tprt_session_stats(r.session, rank, &stats, &rankSeconds))
        r.bestCpu += rankSeconds;
    }
  };
  // Every rank in this process: the timed runs are a user's loop, on the
  // arguments placed once (arrays), after a warm-up run. Otherwise (one rank
  // a process) each run scatters and gathers.
  r.onArrays =
      repeat > 1 && tprt_session_num_local_ranks(r.session) == r.numRanks;
  int plainRuns = r.onArrays ? 1 : repeat;
  for (int rep = 0; rep < plainRuns; ++rep) {
    auto start = Clock::now();
    if (tprt_status s =
            tprt_session_run(r.session, program, function, in.data(),
                             static_cast<int32_t>(in.size()), out.data(),
                             static_cast<int32_t>(out.size())))
      failStatus("the run failed", s);
    r.lastSeconds = since(start);
    if (!r.onArrays)
      keepBest(r.lastSeconds);
  }
  if (!r.onArrays)
    return r;

  int32_t numResults = static_cast<int32_t>(r.outputs.size());
  std::vector<tprt_array *> args, results(static_cast<size_t>(numResults));
  auto start = Clock::now();
  for (size_t i = 0; i < inputs.size(); ++i) {
    tprt_array *a = nullptr;
    if (tprt_status s = tprt_array_place(
            r.session,
            tprt_program_arg(program, function, static_cast<int32_t>(i)),
            inputs[i].bytes.data(), &a))
      failStatus("cannot place input #" + std::to_string(i), s);
    args.push_back(a);
  }
  r.placeSeconds = since(start);
  // A result written in a donated argument (tp.donate) is that argument in
  // the next run, as a training or decode loop carries its state.
  std::vector<int32_t> donors;
  for (int32_t i = 0; i < numResults; ++i)
    donors.push_back(tprt_program_donor(program, function, i));
  std::vector<double> times;
  for (int rep = -1; rep < repeat; ++rep) { // -1: the warm-up run
    for (int32_t i = 0; i < numResults; ++i) {
      if (donors[i] < 0)
        tprt_array_free(results[i]);
      results[i] = nullptr;
    }
    start = Clock::now();
    if (tprt_status s = tprt_session_run_arrays(
            r.session, program, function, args.data(),
            static_cast<int32_t>(args.size()), results.data(), numResults))
      failStatus("the run on placed arrays failed", s);
    double seconds = since(start);
    r.lastSeconds = seconds;
    if (rep < 0) {
      // The warm-up run had the same inputs as the run on global ones: its
      // results are the ones compared with it.
      for (int32_t i = 0; i < numResults; ++i) {
        Array a;
        a.dtype = r.outputs[i].dtype;
        a.shape = r.outputs[i].shape;
        a.bytes.resize(r.outputs[i].bytes.size());
        if (tprt_status s = tprt_array_fetch(results[i], a.bytes.data()))
          failStatus("cannot fetch result #" + std::to_string(i), s);
        r.arrayOutputs.push_back(std::move(a));
      }
    } else {
      times.push_back(seconds);
      keepBest(seconds);
    }
    for (int32_t i = 0; i < numResults; ++i)
      if (donors[i] >= 0) {
        tprt_array_free(args[donors[i]]); // donated: holds nothing now
        args[donors[i]] = results[i];
      }
  }
  std::sort(times.begin(), times.end());
  r.median = times[times.size() / 2];
  for (int32_t i = 0; i < numResults; ++i)
    if (donors[i] < 0)
      tprt_array_free(results[i]);
  for (tprt_array *a : args)
    tprt_array_free(a);
  return r;
}

/// What --shards-in-place measured: the best wall time of the runs on
/// shards in place and the ranks' program time in it, and (where this
/// process drives every rank) the results gathered from the last run's
/// shards.
struct InPlaceRuns {
  double best = 1e300, bestCpu = 0;
  std::vector<Array> outputs; // empty when not every rank is here
};

/// --shards-in-place: every local rank's shard of each input cut once, then
/// o.repeat runs of tprt_session_run_shards on them.
InPlaceRuns runInPlace(const Options &o, const tprt_program *program,
                       int32_t function, const std::vector<Array> &inputs) {
  const tprt_mesh *mesh = tprt_program_mesh(program, function);
  tprt_session_options options = TPRT_SESSION_OPTIONS_INIT;
  options.timeout_ms = o.timeoutMs;
  options.backend = o.comm.c_str();
  tprt_session *session = nullptr;
  if (tprt_status s = tprt_session_create(mesh, &options, &session))
    failStatus("cannot create a session", s);
  int64_t numLocal = tprt_session_num_local_ranks(session);
  int32_t numArgs = tprt_program_num_args(program, function);
  int32_t numResults = tprt_program_num_results(program, function);
  // A shard: the tensor's dtype and rank, its shard shape, its bytes.
  auto shardOf = [&](const tprt_tensor_info &info) {
    Array a;
    a.dtype = info.dtype;
    int64_t local[TPRT_MAX_TENSOR_RANK];
    tprt_shard_shape(mesh, &info.sharding, info.shape, local);
    a.shape.assign(local, local + info.rank);
    a.bytes.resize(static_cast<size_t>(a.numElements()) *
                   tprt_dtype_size(info.dtype));
    return a;
  };
  std::vector<Array> in, out;
  for (int64_t k = 0; k < numLocal; ++k) {
    int64_t rank = tprt_session_local_rank(session, k);
    for (int32_t i = 0; i < numArgs; ++i) {
      const tprt_tensor_info &info = *tprt_program_arg(program, function, i);
      in.push_back(shardOf(info));
      if (tprt_status s = tprt_scatter_shard(mesh, &info.sharding, info.shape,
                                             info.dtype, inputs[i].bytes.data(),
                                             rank, in.back().bytes.data()))
        failStatus("cannot cut the input shards", s);
    }
    for (int32_t i = 0; i < numResults; ++i)
      out.push_back(shardOf(*tprt_program_result(program, function, i)));
  }
  std::vector<tprt_host_tensor> inViews, outViews;
  for (Array &a : in)
    inViews.push_back(a.view());
  for (Array &a : out)
    outViews.push_back(a.view());
  InPlaceRuns r;
  for (int rep = 0; rep < o.repeat; ++rep) {
    auto start = std::chrono::steady_clock::now();
    if (tprt_status s = tprt_session_run_shards(
            session, program, function, inViews.data(),
            static_cast<int32_t>(inViews.size()), outViews.data(),
            static_cast<int32_t>(outViews.size())))
      failStatus("the run on shards in place failed", s);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count();
    if (seconds >= r.best)
      continue;
    r.best = seconds;
    r.bestCpu = 0;
    for (int64_t rank = 0; rank < tprt_mesh_num_devices(mesh); ++rank) {
      tprt_comm_stats stats;
      double rankSeconds = 0;
      if (!tprt_session_stats(session, rank, &stats, &rankSeconds))
        r.bestCpu += rankSeconds;
    }
  }
  if (numLocal == tprt_mesh_num_devices(mesh)) {
    for (int32_t i = 0; i < numResults; ++i) {
      const tprt_tensor_info &info = *tprt_program_result(program, function, i);
      Array global;
      global.dtype = info.dtype;
      global.shape.assign(info.shape, info.shape + info.rank);
      global.bytes.resize(static_cast<size_t>(global.numElements()) *
                          tprt_dtype_size(info.dtype));
      std::vector<const void *> shards;
      for (int64_t k = 0; k < numLocal; ++k)
        shards.push_back(out[k * numResults + i].bytes.data());
      if (tprt_status s =
              tprt_gather_shards(mesh, &info.sharding, info.shape, info.dtype,
                                 shards.data(), global.bytes.data()))
        failStatus("cannot gather the results in place", s);
      r.outputs.push_back(std::move(global));
    }
  }
  tprt_session_destroy(session);
  return r;
}

/// Step 2: the inputs of `function` (random, from .npy files, or, on a
/// process other than rank 0, shapes only), checked against its arguments.
std::vector<Array> readInputs(const Options &o, tprt_program *program,
                              int32_t function, const std::string &name) {
  int32_t numArgs = tprt_program_num_args(program, function);
  std::vector<Array> inputs;
  if (!isRoot() && !o.shardsInPlace) {
    // Rank 0 reads the inputs and sends each process its shards.
    for (int32_t i = 0; i < numArgs; ++i) {
      const tprt_tensor_info *info = tprt_program_arg(program, function, i);
      Array a;
      a.dtype = info->dtype;
      a.shape.assign(info->shape, info->shape + info->rank);
      inputs.push_back(std::move(a));
    }
  } else if (o.randomInputs) {
    std::mt19937_64 rng(o.seed);
    for (int32_t i = 0; i < numArgs; ++i)
      inputs.push_back(
          randomArray(*tprt_program_arg(program, function, i), rng));
  } else {
    if (static_cast<int32_t>(o.inputs.size()) != numArgs)
      fail("'" + name + "' takes " + std::to_string(numArgs) + " inputs; got " +
           std::to_string(o.inputs.size()) +
           " (use --inputs a.npy,... or --random-inputs)");
    for (const std::string &path : o.inputs) {
      Array a;
      std::string error;
      if (!readNpy(path, a, error))
        fail(error);
      inputs.push_back(std::move(a));
    }
  }
  for (int32_t i = 0; i < numArgs; ++i) {
    const tprt_tensor_info *info = tprt_program_arg(program, function, i);
    const Array &a = inputs[i];
    bool same = a.dtype == info->dtype &&
                static_cast<int32_t>(a.shape.size()) == info->rank;
    for (int32_t d = 0; same && d < info->rank; ++d)
      same = a.shape[d] == info->shape[d];
    if (!same)
      fail("input #" + std::to_string(i) +
           (*info->name ? std::string(" ('") + info->name + "')" : "") +
           " is " +
           shapeString(a.dtype, a.shape.data(),
                       static_cast<int32_t>(a.shape.size())) +
           "; '" + name + "' expects " +
           shapeString(info->dtype, info->shape, info->rank));
  }

  return inputs;
}

/// Step 3's report: where it ran, each result's sum, and the timings.
void printRun(const Options &o, tprt_program *program, int32_t function,
              const std::string &name, const RunResult &result,
              const std::optional<InPlaceRuns> &inPlace) {
  double best = result.best, bestCpu = result.bestCpu;
  const tprt_mesh *mesh = tprt_program_mesh(program, function);
  std::cout << "ran '" << name << "' on " << result.numRanks
            << " device(s) (mesh "
            << shapeString(TPRT_I64, mesh->sizes, mesh->rank).substr(3)
            << ")\n";
  for (size_t i = 0; i < result.outputs.size(); ++i) {
    const Array &a = result.outputs[i];
    double sum = 0;
    for (int64_t k = 0; k < a.numElements(); ++k)
      sum += at(a, k);
    std::cout << "result #" << i << ": "
              << shapeString(a.dtype, a.shape.data(),
                             static_cast<int32_t>(a.shape.size()))
              << " sum " << sum << "\n";
  }
  if (inPlace)
    std::printf("best of %d runs: %.3f ms wall (shards in place: run only); "
                "the ranks' programs took %.3f ms together\n",
                o.repeat, inPlace->best * 1e3, inPlace->bestCpu * 1e3);
  else if (result.onArrays)
    std::printf("best of %d runs: %.3f ms wall (arguments placed once in "
                "%.3f ms, then a warm-up run: run only; median %.3f ms); the "
                "ranks' programs took %.3f ms together\n",
                o.repeat, best * 1e3, result.placeSeconds * 1e3,
                result.median * 1e3, bestCpu * 1e3);
  else if (o.repeat > 1)
    std::printf("best of %d runs: %.3f ms wall (scatter, run, gather); the "
                "ranks' programs took %.3f ms together\n",
                o.repeat, best * 1e3, bestCpu * 1e3);
}

/// The runs with shards in place and on placed arrays against the run on
/// global inputs: the same results (to rounding where --verify split
/// pending-sum inputs into other terms). Returns 1 when one differs.
int compareOtherRuns(const RunResult &result,
                     const std::optional<InPlaceRuns> &inPlace) {
  int exitCode = 0;
  // The runs in place against the run on global inputs: the same results
  // (to rounding where --verify split pending-sum inputs into other terms).
  for (size_t i = 0; inPlace && i < inPlace->outputs.size(); ++i) {
    const Array &got = inPlace->outputs[i], &want = result.outputs[i];
    Comparison c = compare(got.dtype, got.bytes.data(), want.bytes.data(),
                           got.numElements());
    std::printf(
        "shards in place: result #%zu against the run on global "
        "inputs: %s: %s\n",
        i,
        c.describe(got.shape.data(), static_cast<int32_t>(got.shape.size()))
            .c_str(),
        c.pass() ? "PASS" : "FAIL");
    if (!c.pass())
      exitCode = 1;
  }
  // The runs on arrays against the run on global inputs: the same results
  // (to rounding where --verify split pending-sum inputs into other terms).
  for (size_t i = 0; i < result.arrayOutputs.size(); ++i) {
    const Array &got = result.arrayOutputs[i], &want = result.outputs[i];
    Comparison c = compare(got.dtype, got.bytes.data(), want.bytes.data(),
                           got.numElements());
    std::printf(
        "placed arrays: result #%zu against the run on global inputs: %s: "
        "%s\n",
        i,
        c.describe(got.shape.data(), static_cast<int32_t>(got.shape.size()))
            .c_str(),
        c.pass() ? "PASS" : "FAIL");
    if (!c.pass())
      exitCode = 1;
  }
  return exitCode;
}

/// --profile: time by kind of op, summed over ranks.
void printProfile(const Options &o, tprt_program *program,
                  const RunResult &result) {
  // Time by kind of op, summed over ranks: GEMMs (on the CPU target, the
  // library tprt_cpu_gemm_library names), each kind of collective, and the
  // rest of the compiled program (loops).
  tprt_rank_profile total{};
  double busiest = 0;
  for (int64_t r = 0; r < result.numRanks; ++r) {
    tprt_rank_profile p;
    if (tprt_status st = tprt_session_profile(result.session, r, &p))
      failStatus("profile", st);
    busiest = std::max(busiest, p.total_seconds);
    total.total_seconds += p.total_seconds;
    total.gemm_calls += p.gemm_calls;
    total.gemm_flops += p.gemm_flops;
    total.gemm_seconds += p.gemm_seconds;
    for (int k = 0; k < TPRT_NUM_COLLECTIVE_KINDS; ++k) {
      total.comm.calls[k] += p.comm.calls[k];
      total.comm.bytes[k] += p.comm.bytes[k];
      total.comm.seconds[k] += p.comm.seconds[k];
    }
  }
  std::cout << "profile (all ranks together; bytes are each rank's "
               "input to the collective):\n";
  double accounted = total.gemm_seconds;
  if (total.gemm_calls) {
    bool cpu = tprt_target_on_device(tprt_program_target(program)) == 0;
    std::printf("  %-15s %6lld calls %9.3f GFLOP %10.3f ms%s%s\n", "gemm",
                static_cast<long long>(total.gemm_calls),
                total.gemm_flops / 1e9, total.gemm_seconds * 1e3,
                cpu ? "  on " : "", cpu ? tprt_cpu_gemm_library() : "");
  }
  for (int k = 0; k < TPRT_NUM_COLLECTIVE_KINDS; ++k) {
    if (!total.comm.calls[k])
      continue;
    accounted += total.comm.seconds[k];
    std::printf("  %-15s %6lld calls %12lld bytes %10.3f ms\n",
                tprt_collective_kind_name(static_cast<tprt_collective_kind>(k)),
                static_cast<long long>(total.comm.calls[k]),
                static_cast<long long>(total.comm.bytes[k]),
                total.comm.seconds[k] * 1e3);
  }
  std::printf("  %-15s %38.3f ms\n", "other ops",
              std::max(0.0, total.total_seconds - accounted) * 1e3);
  std::printf("  slowest rank %.3f ms\n", busiest * 1e3);
  if (o.onDevice)
    printDeviceProfile(result.session, result.numRanks, total,
                       result.lastSeconds);
}

/// Step 4: the inputs left unchanged, every replica against its shard's
/// first holder, and the gathered results against the unsharded reference
/// run on one device. Returns 1 when anything fails.
int verifyAgainstReference(const Options &o, tprt_program *program,
                           int32_t function, const std::string &name,
                           const std::string &reference,
                           const std::vector<Array> &inputs,
                           std::vector<Array> &pristine,
                           const RunResult &result) {
  int exitCode = 0;
  tprt_program *ref = nullptr;
  if (tprt_status s = tprt_program_load(reference.c_str(), &ref))
    failStatus("cannot load the unsharded reference", s);
  int32_t refFunction = 0;
  if (tprt_status s =
          tprt_program_find_function(ref, name.c_str(), &refFunction))
    failStatus("the unsharded reference", s);
  int64_t refDevices =
      tprt_mesh_num_devices(tprt_program_mesh(ref, refFunction));
  // The reference runs on the `local` backend, so it has that one's target.
  if (refDevices != 1 ||
      std::strcmp(tprt_program_target(ref), tprt_backend_target("local")) != 0)
    fail("the reference '" + reference + "' runs '" + name + "' on " +
         std::to_string(refDevices) + " device(s) of target " +
         tprt_program_target(ref) +
         "; compile it with tp-compile --unsharded --reference");
  // Inputs are read-only (tprt-manifest 4): one the program wrote into
  // would also corrupt the reference's run.
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].bytes == pristine[i].bytes)
      continue;
    const tprt_tensor_info *info =
        tprt_program_arg(program, function, static_cast<int32_t>(i));
    std::printf(
        "verify input #%zu%s: the program wrote into it (a "
        "program must leave its inputs unchanged): FAIL\n",
        i, *info->name ? (std::string(" ('") + info->name + "')").c_str() : "");
    exitCode = 1;
  }
  // The reference is a CPU program, whatever the run's backend; it reads
  // the untouched copy (and leaves it so: it is a manifest-4 program too).
  RunResult expected = run(o, "local", ref, refFunction, pristine);
  std::optional<RunResult> nudgedRun;
  const tprt_mesh *mesh = tprt_program_mesh(program, function);
  for (size_t i = 0; i < result.outputs.size(); ++i) {
    const Array &got = result.outputs[i], &want = expected.outputs[i];
    int32_t rank = static_cast<int32_t>(got.shape.size());
    bool pass = true;
    // Every replica against the first device that holds its shard.
    const tprt_tensor_info *info =
        tprt_program_result(program, function, static_cast<int32_t>(i));
    int64_t local[TPRT_MAX_TENSOR_RANK];
    tprt_shard_shape(mesh, &info->sharding, info->shape, local);
    int64_t localElements = 1;
    for (int32_t d = 0; d < info->rank; ++d)
      localElements *= local[d];
    int disagreements = 0;
    for (int64_t device = 0; device < result.numRanks; ++device) {
      int64_t leader = tprt_replica_leader(mesh, &info->sharding, device);
      if (leader == device)
        continue;
      const void *mine = nullptr, *theirs = nullptr;
      if (tprt_status st = tprt_session_local_result(
              result.session, device, static_cast<int32_t>(i), &mine))
        failStatus("--verify", st);
      if (tprt_status st = tprt_session_local_result(
              result.session, leader, static_cast<int32_t>(i), &theirs))
        failStatus("--verify", st);
      Comparison c = compare(got.dtype, mine, theirs, localElements);
      if (c.pass())
        continue;
      pass = false;
      if (++disagreements <= 3)
        std::printf("verify result #%zu: devices %lld and %lld hold the "
                    "same shard but disagree: %s\n",
                    i, static_cast<long long>(leader),
                    static_cast<long long>(device),
                    c.describe(local, info->rank).c_str());
    }
    if (disagreements > 3)
      std::printf("verify result #%zu: %d more disagreeing replicas\n", i,
                  disagreements - 3);
    // The gathered result against the reference, element by element.
    const char *precision = tprt_program_matmul_precision(program);
    Comparison c = compare(got.dtype, got.bytes.data(), want.bytes.data(),
                           got.numElements(), 0, precision);
    // Off by more than the fixed tolerance: is the model itself that
    // sensitive? The reference runs again on inputs moved by one ulp; what
    // that moves its result by (times kSensitivityFactor) is rounding
    // noise that no implementation in this precision avoids.
    std::string widened;
    if (!c.pass() && toleranceOf(got.dtype) > 0) {
      if (!nudgedRun) {
        std::vector<Array> moved = nudged(pristine, o.seed + 1);
        nudgedRun.emplace(run(o, "local", ref, refFunction, moved));
      }
      double moved = largestDifference(want, nudgedRun->outputs[i]);
      if (moved > 0) {
        c = compare(got.dtype, got.bytes.data(), want.bytes.data(),
                    got.numElements(), kSensitivityFactor * moved, precision);
        std::ostringstream os;
        os << std::setprecision(3) << "; widened to " << c.sensitivity
           << " absolute: the reference moves by " << moved
           << " when its inputs move by one ulp";
        widened = os.str();
      }
    }
    // A reference that is NaN wherever the result is shows nothing.
    pass &= c.pass() && c.proves();
    std::string forPrecision =
        c.tolerance != toleranceOf(got.dtype)
            ? std::string(" for matmul precision '") + precision + "'"
            : std::string();
    std::printf("verify result #%zu: %s (tolerance %.0e relative%s, floor "
                "rms %.3g%s): %s\n",
                i, c.describe(got.shape.data(), rank).c_str(), c.tolerance,
                forPrecision.c_str(), c.floor, widened.c_str(),
                pass ? "PASS" : "FAIL");
    if (!pass)
      exitCode = 1;
  }
  tprt_session_destroy(expected.session);
  if (nudgedRun)
    tprt_session_destroy(nudgedRun->session);
  tprt_program_destroy(ref);
  return exitCode;
}

/// Step 5: the results as .npy files, once everything succeeded.
void writeOutputs(const Options &o, const std::string &name, bool allEntries,
                  const RunResult &result, int exitCode) {
  if (!o.outputDir.empty() && exitCode != 0) {
    std::cerr << "tp-run: not writing results to '" << o.outputDir
              << "': verification failed\n";
  } else if (!o.outputDir.empty()) {
    mkdir(o.outputDir.c_str(), 0755);
    for (size_t i = 0; i < result.outputs.size(); ++i) {
      std::string error;
      std::string path = o.outputDir + "/" + (allEntries ? name + "." : "") +
                         "result" + std::to_string(i) + ".npy";
      if (!writeNpy(path, result.outputs[i], error))
        fail(error);
    }
  }
}

/// Steps 2-5 for one function of the program; returns its exit code.
int runOne(const Options &o, tprt_program *program, int32_t function,
           const std::string &reference, bool allEntries) {
  std::string name = tprt_program_function_name(program, function);
  std::vector<Array> inputs = readInputs(o, program, function, name);

  // 3. The sharded run (--repeat: the best wall time of that many runs).
  // Ranks read contiguous shards in `inputs` itself: --verify keeps a copy,
  // to check that the program left them alone and to feed the reference.
  std::vector<Array> pristine;
  if (o.verify && isRoot())
    pristine = inputs;
  std::optional<InPlaceRuns> inPlace;
  if (o.shardsInPlace)
    inPlace = runInPlace(o, program, function, inputs);
  // Under --verify pending sums come as random terms (never 0: that means
  // "value on the first member").
  RunResult result = run(o, o.comm, program, function, inputs,
                         o.verify ? (o.seed * 0x9e3779b97f4a7c15ull) | 1 : 0,
                         inPlace ? 1 : o.repeat);
  if (!isRoot()) {
    // The other processes' part ends with their run; rank 0 reports.
    tprt_session_destroy(result.session);
    return 0;
  }
  printRun(o, program, function, name, result, inPlace);
  int exitCode = compareOtherRuns(result, inPlace);
  if (o.profile)
    printProfile(o, program, result);
  if (o.verify)
    exitCode |= verifyAgainstReference(o, program, function, name, reference,
                                       inputs, pristine, result);
  writeOutputs(o, name, allEntries, result, exitCode);
  tprt_session_destroy(result.session);
  return exitCode;
}

} // namespace

int main(int argc, char **argv) {
  Options o = parse(argc, argv);
  // Compiled programs allocate their large intermediates on each call: keep
  // freed memory in the heap instead of returning it to the kernel, so that
  // repeated runs do not page-fault it in again.
  mallopt(M_MMAP_THRESHOLD, 1 << 30);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
  // 1. The program.
  std::string temp;
  std::string library = o.model;
  std::string reference;
  std::string referenceModel = o.reference.empty() ? o.model : o.reference;
  // A reference compiled already (tp-compile --unsharded --reference), e.g.
  // on a machine without the compiler.
  bool referenceLibrary =
      o.verify && !o.reference.empty() && endsWith(o.reference, ".so");
  if (o.verify && !referenceLibrary && !endsWith(referenceModel, ".mlir"))
    fail("--verify compiles its reference from a .mlir model in global form "
         "or takes one compiled with tp-compile --unsharded --reference; "
         "got '" +
         referenceModel +
         "' (name one with --reference MODEL.mlir or --reference REF.so)");
  if (endsWith(o.model, ".mlir") || (o.verify && !referenceLibrary)) {
    std::string pattern =
        (std::filesystem::temp_directory_path() / "tp-run-XXXXXX").string();
    if (!mkdtemp(pattern.data()))
      fail("cannot create a temporary directory");
    temp = temporaryDir = pattern;
    std::atexit(removeTemporaryDir);
  }
  if (endsWith(o.model, ".mlir")) {
    library = temp + "/program.so";
    compile(o, o.model, library, /*reference=*/false);
  }
  if (referenceLibrary) {
    reference = referenceModel;
  } else if (o.verify && isRoot()) {
    reference = temp + "/reference.so";
    compile(o, referenceModel, reference, /*reference=*/true);
  }
  auto cleanup = [&] { removeTemporaryDir(); };
  tprt_program *program = nullptr;
  if (tprt_status s = tprt_program_load(library.c_str(), &program)) {
    cleanup();
    failStatus("cannot load '" + o.model + "'", s);
  }
  if (o.allEntries) {
    int worst = 0, failed = 0;
    int32_t n = tprt_program_num_functions(program);
    for (int32_t f = 0; f < n; ++f) {
      int code = runOne(o, program, f, reference, /*allEntries=*/true);
      failed += code != 0;
      worst = std::max(worst, code);
    }
    if (isRoot())
      std::printf("%d function(s): %d passed, %d failed\n", n, n - failed,
                  failed);
    tprt_program_destroy(program);
    cleanup();
    return worst;
  }
  int32_t function = 0;
  if (!o.entry.empty()) {
    if (tprt_status s =
            tprt_program_find_function(program, o.entry.c_str(), &function))
      failStatus("--entry", s);
  } else if (tprt_program_num_functions(program) == 0) {
    fail("the program has no functions");
  }
  int exitCode = runOne(o, program, function, reference, /*allEntries=*/false);
  tprt_program_destroy(program);
  cleanup();
  return exitCode;
}
