//===- Program.cpp - Loading program libraries and their manifests --------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A program library (tp-compile) exports `tprt_manifest`, a text whose
// format is fixed by tp-record-manifest:
//
//   tprt-manifest 4            (the program never writes its inputs)
//   abi <TPRT_RT_ABI_VERSION the program was compiled for>
//   target <cpu | cuda>
//   precision <highest | high | medium>   (optional: how f32 GEMMs may
//                             compute, tp-compile --matmul-precision)
//   func <name> <#args> <#results>
//   mesh <name> <rank> <axis> <size> ...       (or `mesh - 0`: one device)
//   arg <i> <dtype> <rank> <sizes...> s=<d0>/<d1>/...|<partial> [<name>]
//   result <i> ...
//   donate <result> <arg>     (optional: the result is written in the
//                             argument's buffer, the one input it writes)
//   arena <bytes>             (optional: the intermediates' arena, which the
//                             entry point takes as its last buffer)
//   constants <bytes>         (optional: the buffer the constants are
//                             uploaded into once, before the arena)
//   hostread <arg>            (optional: the host code reads the argument,
//                             which a GPU rank then passes in host memory)
//   end
//
// Names are double-quoted strings with backslash escapes (\" \\ \xHH), so
// that any MLIR symbol or axis name survives. `tprt_entry_<name>(ctx,
// buffers)` per function. The whole manifest is validated before anything
// runs: every line, every count, every sharding (arguments and results)
// against its mesh, and the `end` of every function.
//
//===----------------------------------------------------------------------===//

#include "Program.h"
#include "ProgramFile.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <set>
#include <sys/stat.h>

using namespace tprt;

namespace {

/// At most this many functions, arguments or results, and devices per mesh:
/// far beyond any real program, small enough that nothing sized by them can
/// exhaust memory.
constexpr int64_t kMaxCount = 1 << 16;

/// The words of one manifest line: bare words, or double-quoted strings with
/// backslash escapes.
class Words {
public:
  explicit Words(const std::string &line) : line(line) {}

  /// The next word; false at the end of the line or on a malformed string.
  bool next(std::string &word) {
    word.clear();
    while (pos < line.size() && line[pos] == ' ')
      ++pos;
    if (pos >= line.size())
      return false;
    if (line[pos] != '"') {
      size_t end = line.find(' ', pos);
      if (end == std::string::npos)
        end = line.size();
      word = line.substr(pos, end - pos);
      pos = end;
      return true;
    }
    for (++pos; pos < line.size(); ++pos) {
      char c = line[pos];
      if (c == '"') {
        ++pos;
        return pos >= line.size() || line[pos] == ' ' ? true : fail();
      }
      if (c != '\\') {
        word += c;
        continue;
      }
      if (++pos >= line.size())
        return fail();
      c = line[pos];
      if (c == '"' || c == '\\') {
        word += c;
      } else if (c == 'x' && pos + 2 < line.size() &&
                 std::isxdigit(static_cast<unsigned char>(line[pos + 1])) &&
                 std::isxdigit(static_cast<unsigned char>(line[pos + 2]))) {
        word +=
            static_cast<char>(std::stoi(line.substr(pos + 1, 2), nullptr, 16));
        pos += 2;
      } else {
        return fail();
      }
    }
    return fail(); // unterminated
  }

  /// The next word as a quoted name.
  bool name(std::string &word) {
    size_t start = pos;
    while (start < line.size() && line[start] == ' ')
      ++start;
    return start < line.size() && line[start] == '"' && next(word) &&
           !word.empty();
  }

  /// The next word as an integer in [lo, hi].
  bool integer(int64_t &value, int64_t lo, int64_t hi) {
    std::string word;
    if (!next(word) || word.empty())
      return false;
    errno = 0;
    char *end = nullptr;
    long long v = std::strtoll(word.c_str(), &end, 10);
    if (errno != 0 || *end != '\0' || v < lo || v > hi)
      return false;
    value = v;
    return true;
  }

  /// Whether a word follows (consumes nothing).
  bool more() const {
    return line.find_first_not_of(' ', pos) != std::string::npos;
  }

  bool atEnd() {
    std::string rest;
    return !next(rest) && !malformed;
  }

private:
  bool fail() {
    malformed = true;
    pos = line.size();
    return false;
  }

  const std::string &line;
  size_t pos = 0;
  bool malformed = false;
};

bool parseDtype(const std::string &name, tprt_dtype &dtype) {
  for (tprt_dtype d :
       {TPRT_F32, TPRT_F64, TPRT_F16, TPRT_BF16, TPRT_I32, TPRT_I64})
    if (name == tprt_dtype_name(d)) {
      dtype = d;
      return true;
    }
  return false;
}

/// `0,1` -> axes {0, 1}: indices of the mesh's axes.
bool parseAxes(const std::string &text, int32_t meshRank, tprt_axes &axes) {
  axes = {};
  size_t start = 0;
  while (start < text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos)
      comma = text.size();
    std::string item = text.substr(start, comma - start);
    if (axes.count == TPRT_MAX_MESH_RANK || item.size() != 1 || item[0] < '0' ||
        item[0] - '0' >= meshRank)
      return false;
    axes.axes[axes.count++] = item[0] - '0';
    start = comma + 1;
    if (comma + 1 == text.size())
      return false; // a trailing comma
  }
  return true;
}

bool parseSharding(const std::string &text, int32_t rank, int32_t meshRank,
                   tprt_sharding &sharding) {
  sharding = {};
  sharding.rank = rank;
  if (text.rfind("s=", 0) != 0)
    return false;
  std::string body = text.substr(2);
  size_t bar = body.find('|');
  if (bar == std::string::npos ||
      !parseAxes(body.substr(bar + 1), meshRank, sharding.partial))
    return false;
  std::string dims = body.substr(0, bar);
  if (rank == 0)
    return dims.empty();
  int32_t d = 0;
  size_t start = 0;
  while (true) {
    size_t slash = dims.find('/', start);
    if (d == rank || !parseAxes(dims.substr(start, slash == std::string::npos
                                                       ? std::string::npos
                                                       : slash - start),
                                meshRank, sharding.dims[d]))
      return false;
    ++d;
    if (slash == std::string::npos)
      break;
    start = slash + 1;
  }
  return d == rank;
}

/// `count` elements of `elemSize` bytes fit in memory sizes.
bool bytesFit(const int64_t *shape, int32_t rank, size_t elemSize) {
  int64_t bytes = static_cast<int64_t>(elemSize);
  for (int32_t d = 0; d < rank; ++d) {
    if (shape[d] != 0 && bytes > (INT64_MAX / 2) / shape[d])
      return false;
    bytes *= shape[d];
  }
  return true;
}

} // namespace

namespace {
struct TargetEntry {
  const char *name;
  bool onDevice;
  const char *defaultBackend;
};
constexpr TargetEntry kTargets[] = {
#define TPRT_TARGET(name, Name, onDevice, defaultBackend, description)         \
  {#name, onDevice != 0, defaultBackend},
#include "tprt/tprt_targets.def"
};
constexpr int32_t kNumTargets =
    static_cast<int32_t>(sizeof(kTargets) / sizeof(kTargets[0]));

const TargetEntry *findTarget(const char *name) {
  if (!name)
    return nullptr;
  for (const TargetEntry &t : kTargets)
    if (std::strcmp(t.name, name) == 0)
      return &t;
  return nullptr;
}
} // namespace

const char *tprt::targetName(Target target) {
  return kTargets[static_cast<int>(target)].name;
}

std::optional<Target> tprt::targetNamed(const std::string &name) {
  for (int32_t i = 0; i < kNumTargets; ++i)
    if (name == kTargets[i].name)
      return static_cast<Target>(i);
  return std::nullopt;
}

std::string tprt::targetNames(const char *separator) {
  std::string names;
  for (const TargetEntry &t : kTargets)
    names += (names.empty() ? "" : separator) + std::string(t.name);
  return names;
}

extern "C" {

int32_t tprt_num_targets(void) { return kNumTargets; }

const char *tprt_target_name(int32_t index) {
  return index >= 0 && index < kNumTargets ? kTargets[index].name : nullptr;
}

int32_t tprt_target_on_device(const char *target) {
  const TargetEntry *t = findTarget(target);
  return t ? (t->onDevice ? 1 : 0) : -1;
}

const char *tprt_target_default_backend(const char *target) {
  const TargetEntry *t = findTarget(target);
  return t ? t->defaultBackend : nullptr;
}

} // extern "C"

const char *tprt::precisionName(MatmulPrecision precision) {
  switch (precision) {
  case MatmulPrecision::High:
    return "high";
  case MatmulPrecision::Medium:
    return "medium";
  default:
    return "highest";
  }
}

tprt_status tprt::parseManifest(const std::string &text,
                                std::vector<Function> &functions,
                                Target &target, const std::string &path,
                                MatmulPrecision *precision) {
  std::istringstream lines(text);
  std::string line;
  int lineNo = 0;
  auto bad = [&](const std::string &why) {
    return error(TPRT_INVALID_ARGUMENT, path, ": manifest line ", lineNo, ": ",
                 why, ": '", line, "'");
  };
  if (!std::getline(lines, line) || line.rfind("tprt-manifest ", 0) != 0)
    return error(TPRT_INVALID_ARGUMENT, path,
                 ": not a tprt program manifest (first line '", line, "')");
  if (line != "tprt-manifest 4")
    return error(TPRT_INVALID_ARGUMENT, path, ": manifest '", line,
                 "' is not of version 4, the version this runtime reads; "
                 "compile the program again with this tp-compile");
  lineNo = 1;
  bool abiSeen = false, targetSeen = false, meshSeen = false,
       precisionSeen = false;
  Function *current = nullptr;
  std::set<std::string> names;
  while (std::getline(lines, line)) {
    ++lineNo;
    Words words(line);
    std::string word;
    if (!words.next(word))
      continue;
    if (word == "abi") {
      int64_t abi = 0;
      if (abiSeen || current || !words.integer(abi, 0, INT32_MAX) ||
          !words.atEnd())
        return bad("expected one 'abi <version>' before the functions");
      if (abi != TPRT_RT_ABI_VERSION)
        return bad("the program was compiled for runtime ABI version " +
                   std::to_string(abi) + "; this runtime has version " +
                   std::to_string(TPRT_RT_ABI_VERSION));
      abiSeen = true;
      continue;
    }
    if (!abiSeen)
      return bad("expected 'abi <version>' first");
    if (word == "target") {
      std::string name;
      std::optional<Target> named;
      if (targetSeen || current || !words.next(name) || !words.atEnd() ||
          !(named = targetNamed(name)))
        return bad("expected one 'target <" + targetNames(" | ") +
                   ">' after 'abi'");
      target = *named;
      targetSeen = true;
      continue;
    }
    if (!targetSeen)
      return bad("expected 'target <" + targetNames(" | ") + ">' after 'abi'");
    if (word == "precision") {
      std::string name;
      if (precisionSeen || current || !functions.empty() || !words.next(name) ||
          !words.atEnd() ||
          (name != "highest" && name != "high" && name != "medium"))
        return bad("expected one 'precision <highest | high | medium>' "
                   "before the functions");
      if (precision)
        *precision = name == "high"     ? MatmulPrecision::High
                     : name == "medium" ? MatmulPrecision::Medium
                                        : MatmulPrecision::Highest;
      precisionSeen = true;
      continue;
    }
    if (word == "func") {
      if (current)
        return bad("function '" + current->name + "' has no 'end' line");
      if (static_cast<int64_t>(functions.size()) == kMaxCount)
        return bad("more than " + std::to_string(kMaxCount) + " functions");
      Function f;
      int64_t numArgs = -1, numResults = -1;
      if (!words.name(f.name) || !words.integer(numArgs, 0, kMaxCount) ||
          !words.integer(numResults, 0, kMaxCount) || !words.atEnd())
        return bad("expected 'func \"<name>\" <#args> <#results>'");
      if (!names.insert(f.name).second)
        return bad("function '" + f.name + "' appears twice");
      f.numArgs = static_cast<int>(numArgs);
      f.numResults = static_cast<int>(numResults);
      f.mesh = {1, {1}};
      functions.push_back(std::move(f));
      current = &functions.back();
      meshSeen = false;
      continue;
    }
    if (!current)
      return bad("expected 'func' first");
    if (word == "mesh") {
      std::string name;
      int64_t rank = -1;
      if (meshSeen || !current->args.empty() || !current->results.empty())
        return bad("expected one 'mesh' line, before the arguments");
      meshSeen = true;
      if (!words.next(name))
        return bad("expected 'mesh \"<name>\" <rank> \"<axis>\" <size>...'");
      if (name == "-") {
        if (!words.integer(rank, 0, 0) || !words.atEnd())
          return bad("expected 'mesh - 0'");
        continue;
      }
      Words again(line);
      again.next(word);
      if (!again.name(name) || !again.integer(rank, 1, TPRT_MAX_MESH_RANK))
        return bad("expected 'mesh \"<name>\" <rank> \"<axis>\" <size>...' "
                   "with a rank in [1, " +
                   std::to_string(TPRT_MAX_MESH_RANK) + "]");
      current->meshName = name;
      current->mesh = {static_cast<int32_t>(rank), {}};
      int64_t devices = 1;
      for (int32_t a = 0; a < rank; ++a) {
        std::string axis;
        int64_t size = 0;
        if (!again.name(axis) || !again.integer(size, 1, kMaxCount))
          return bad("expected '\"<axis>\" <size>' for axis " +
                     std::to_string(a) + ", with a size in [1, " +
                     std::to_string(kMaxCount) + "]");
        for (const std::string &other : current->axisNames)
          if (other == axis)
            return bad("axis '" + axis + "' appears twice");
        current->axisNames.push_back(axis);
        current->mesh.sizes[a] = size;
        devices *= size;
        if (devices > kMaxCount)
          return bad("more than " + std::to_string(kMaxCount) + " devices");
      }
      if (!again.atEnd())
        return bad("more axes than the mesh's rank");
      continue;
    }
    if (word == "arg" || word == "result") {
      if (!meshSeen)
        return bad("expected the 'mesh' line before the arguments");
      std::vector<tprt_tensor_info> &list =
          word == "arg" ? current->args : current->results;
      int limit = word == "arg" ? current->numArgs : current->numResults;
      int64_t index = -1, rank = -1;
      std::string dtype, sharding;
      tprt_tensor_info info{};
      if (!words.integer(index, 0, kMaxCount) ||
          index != static_cast<int64_t>(list.size()) || index >= limit)
        return bad("expected " + word + " #" + std::to_string(list.size()) +
                   " of " + std::to_string(limit));
      if (!words.next(dtype) || !parseDtype(dtype, info.dtype))
        return bad("expected an element type (f32, f64, f16, bf16, i32, i64)");
      if (!words.integer(rank, 0, TPRT_MAX_TENSOR_RANK))
        return bad("expected a rank in [0, " +
                   std::to_string(TPRT_MAX_TENSOR_RANK) + "]");
      info.rank = static_cast<int32_t>(rank);
      for (int32_t d = 0; d < info.rank; ++d)
        if (!words.integer(info.shape[d], 0, INT64_MAX))
          return bad("expected " + std::to_string(rank) +
                     " sizes, each a non-negative integer");
      if (!bytesFit(info.shape, info.rank, tprt_dtype_size(info.dtype)))
        return bad("the tensor is larger than any memory");
      if (!words.next(sharding) ||
          !parseSharding(sharding, info.rank, current->mesh.rank,
                         info.sharding))
        return bad("expected a sharding 's=<axes>/<axes>/...|<partial axes>' "
                   "of one entry per dimension, axis indices below the "
                   "mesh's rank " +
                   std::to_string(current->mesh.rank));
      std::string name;
      if (words.more() && (!words.name(name) || !words.atEnd()))
        return bad("expected the " + word +
                   "'s quoted name, or nothing, after its sharding");
      (word == "arg" ? current->argNames : current->resultNames)
          .push_back(name);
      if (tprt_status status =
              tprt_sharding_check(&current->mesh, &info.sharding, info.shape)) {
        tprt_status wrapped = bad(tprt_status_message(status));
        tprt_status_free(status);
        return wrapped;
      }
      list.push_back(info);
      continue;
    }
    if (word == "arena" || word == "constants") {
      // arena <bytes>: the entry point's intermediates, laid out in one
      // buffer the runtime passes last; constants <bytes>: the buffer its
      // constants are uploaded into by its first run on a rank, passed
      // before the arena.
      int64_t &bytes =
          word == "arena" ? current->arenaBytes : current->constantsBytes;
      if (!meshSeen || bytes)
        return bad("expected one '" + word + "' line, after the mesh");
      if (!words.integer(bytes, 1, INT64_MAX / 2) || !words.atEnd())
        return bad("expected '" + word +
                   " <bytes>', a positive number of bytes");
      continue;
    }
    if (word == "hostread") {
      // hostread <arg>: the host code reads the argument (after every
      // argument line).
      int64_t arg = -1;
      if (static_cast<int>(current->args.size()) != current->numArgs)
        return bad("expected 'hostread' after every argument");
      if (!words.integer(arg, 0, current->numArgs - 1) || !words.atEnd())
        return bad("expected 'hostread <argument>' of function '" +
                   current->name + "'");
      current->hostReads.resize(static_cast<size_t>(current->numArgs), 0);
      current->hostReads[static_cast<size_t>(arg)] = 1;
      continue;
    }
    if (word == "donate") {
      // donate <result> <arg>: the result is written in the argument's
      // buffer (after every result line).
      int64_t result = -1, arg = -1;
      if (static_cast<int>(current->args.size()) != current->numArgs ||
          static_cast<int>(current->results.size()) != current->numResults)
        return bad("expected 'donate' after every argument and result");
      if (!words.integer(result, 0, current->numResults - 1) ||
          !words.integer(arg, 0, current->numArgs - 1) || !words.atEnd())
        return bad("expected 'donate <result> <argument>' of function '" +
                   current->name + "'");
      current->donatedFrom.resize(static_cast<size_t>(current->numResults), -1);
      const tprt_tensor_info &a = current->args[arg],
                             &r = current->results[result];
      bool same =
          a.dtype == r.dtype && a.rank == r.rank &&
          std::memcmp(a.shape, r.shape, sizeof(a.shape)) == 0 &&
          std::memcmp(&a.sharding, &r.sharding, sizeof(a.sharding)) == 0;
      if (!same)
        return bad("argument #" + std::to_string(arg) +
                   " is donated to result #" + std::to_string(result) +
                   ", which has another type or sharding");
      if (current->donatedFrom[result] >= 0 ||
          std::count(current->donatedFrom.begin(), current->donatedFrom.end(),
                     arg))
        return bad("result #" + std::to_string(result) + " or argument #" +
                   std::to_string(arg) + " is named by two 'donate' lines");
      current->donatedFrom[result] = static_cast<int32_t>(arg);
      continue;
    }
    if (word == "end") {
      if (!words.atEnd())
        return bad("expected nothing after 'end'");
      if (!meshSeen)
        return bad("function '" + current->name + "' has no 'mesh' line");
      if (static_cast<int>(current->args.size()) != current->numArgs ||
          static_cast<int>(current->results.size()) != current->numResults)
        return bad("function '" + current->name + "' declares " +
                   std::to_string(current->numArgs) + " arguments and " +
                   std::to_string(current->numResults) +
                   " results, its lines give " +
                   std::to_string(current->args.size()) + " and " +
                   std::to_string(current->results.size()));
      current = nullptr;
      continue;
    }
    return bad("unknown line");
  }
  if (!abiSeen)
    return error(TPRT_INVALID_ARGUMENT, path,
                 ": the manifest has no 'abi' line");
  if (!targetSeen)
    return error(TPRT_INVALID_ARGUMENT, path,
                 ": the manifest has no 'target' line");
  if (current)
    return error(TPRT_INVALID_ARGUMENT, path,
                 ": the manifest ends inside "
                 "function '",
                 current->name, "' (no 'end' line)");
  for (Function &function : functions) {
    for (size_t i = 0; i < function.args.size(); ++i)
      function.args[i].name = function.argNames[i].c_str();
    for (size_t i = 0; i < function.results.size(); ++i)
      function.results[i].name = function.resultNames[i].c_str();
  }
  return nullptr;
}

/// Checks the checksum trailer of the library at `path` (ProgramFile.h) and
/// returns its sum in `checksum`: a library that is truncated, edited after
/// tp-compile or not written by it is refused before the dynamic loader maps
/// it.
tprt_status checkProgramFile(const std::string &file, const char *path,
                             uint64_t &checksum) {
  FILE *stream = std::fopen(file.c_str(), "rb");
  if (!stream)
    return error(TPRT_IO_ERROR, "cannot open program '", path,
                 "': ", std::strerror(errno));
  struct Closer {
    FILE *stream;
    ~Closer() { std::fclose(stream); }
  } closer{stream};
  struct stat info;
  if (fstat(fileno(stream), &info) != 0 || !S_ISREG(info.st_mode))
    return error(TPRT_IO_ERROR, "program '", path, "' is not a regular file");
  uint64_t size = static_cast<uint64_t>(info.st_size);
  unsigned char trailer[kTrailerSize];
  if (size < kTrailerSize ||
      std::fseek(stream, static_cast<long>(size - kTrailerSize), SEEK_SET) !=
          0 ||
      std::fread(trailer, 1, kTrailerSize, stream) != kTrailerSize ||
      std::memcmp(trailer, kTrailerMagic, sizeof(kTrailerMagic)) != 0)
    return error(TPRT_INVALID_ARGUMENT, "'", path,
                 "' has no tp-compile checksum: it is truncated, was "
                 "rewritten after tp-compile (strip drops the checksum), or "
                 "is not a tp-compile program; compile it again");
  uint64_t length = loadLE64(trailer + 8);
  uint64_t expected = loadLE64(trailer + 16);
  if (length != size - kTrailerSize)
    return error(TPRT_INVALID_ARGUMENT, "'", path, "' is damaged: ", size,
                 " bytes where its checksum covers ", length,
                 " and a 24-byte trailer (truncated or extended after "
                 "tp-compile); compile it again");
  std::rewind(stream);
  uint64_t hash = kFnvOffset;
  std::vector<unsigned char> chunk(1 << 20);
  for (uint64_t left = length; left > 0;) {
    size_t want = static_cast<size_t>(std::min<uint64_t>(left, chunk.size()));
    if (std::fread(chunk.data(), 1, want, stream) != want)
      return error(TPRT_IO_ERROR, "cannot read program '", path, "'");
    hash = fnv1a(hash, chunk.data(), want);
    left -= want;
  }
  if (hash != expected) {
    char text[64];
    std::snprintf(text, sizeof(text), "%016llx, expected %016llx",
                  static_cast<unsigned long long>(hash),
                  static_cast<unsigned long long>(expected));
    return error(TPRT_INVALID_ARGUMENT, "'", path,
                 "' is damaged: its contents were changed after tp-compile "
                 "(checksum ",
                 text, "); compile it again");
  }
  checksum = hash;
  return nullptr;
}

extern "C" {

tprt_status tprt_program_load(const char *path, tprt_program **program) {
  if (!path || !program)
    return error(TPRT_INVALID_ARGUMENT, "program path or output is null");
  *program = nullptr;
  try {
    // A bare file name is a file here, not a library to search for.
    std::string file = path;
    if (file.find('/') == std::string::npos)
      file = "./" + file;
    uint64_t checksum = 0;
    if (tprt_status status = checkProgramFile(file, path, checksum))
      return status;
    void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!handle)
      return error(TPRT_IO_ERROR, "cannot load program '", path,
                   "': ", dlerror());
    auto loaded = std::make_unique<tprt_program_s>();
    loaded->handle = handle;
    loaded->checksum = checksum;
    auto *manifest = static_cast<const char *>(dlsym(handle, "tprt_manifest"));
    if (!manifest) {
      dlclose(handle);
      return error(TPRT_INVALID_ARGUMENT, "'", path,
                   "' is not a tp-compile program: no 'tprt_manifest' symbol");
    }
    if (tprt_status status =
            parseManifest(manifest, loaded->functions, loaded->target, path,
                          &loaded->precision)) {
      dlclose(handle);
      return status;
    }
    for (Function &f : loaded->functions) {
      std::string symbol = "tprt_entry_" + f.name;
      f.entry = reinterpret_cast<EntryFn>(dlsym(handle, symbol.c_str()));
      if (!f.entry) {
        dlclose(handle);
        return error(TPRT_INVALID_ARGUMENT, "'", path, "' has no entry point '",
                     symbol, "' for function '", f.name, "' of its manifest");
      }
    }
    *program = loaded.release();
    return nullptr;
  } catch (const std::exception &e) {
    return error(TPRT_INTERNAL, "loading program '", path, "': ", e.what());
  }
}

void tprt_program_destroy(tprt_program *program) {
  if (!program)
    return;
  // Code of an abandoned rank may still be running: keep it mapped.
  if (program->abandonedRanks.load() == 0)
    dlclose(program->handle);
  delete program;
}

uint64_t tprt_program_checksum(const tprt_program *program) {
  return program->checksum;
}

const char *tprt_program_target(const tprt_program *program) {
  return targetName(program->target);
}

const char *tprt_program_matmul_precision(const tprt_program *program) {
  return precisionName(program->precision);
}

int32_t tprt_program_num_functions(const tprt_program *program) {
  return static_cast<int32_t>(program->functions.size());
}

const char *tprt_program_function_name(const tprt_program *program,
                                       int32_t function) {
  return program->functions[function].name.c_str();
}

tprt_status tprt_program_find_function(const tprt_program *program,
                                       const char *name, int32_t *function) {
  std::string known;
  for (size_t i = 0; i < program->functions.size(); ++i) {
    if (program->functions[i].name == name) {
      *function = static_cast<int32_t>(i);
      return nullptr;
    }
    known += (i ? ", " : "") + program->functions[i].name;
  }
  return error(TPRT_INVALID_ARGUMENT, "the program has no function '", name,
               "'; it has: ", known.empty() ? "none" : known);
}

const tprt_mesh *tprt_program_mesh(const tprt_program *program,
                                   int32_t function) {
  return &program->functions[function].mesh;
}

int32_t tprt_program_num_args(const tprt_program *program, int32_t function) {
  return program->functions[function].numArgs;
}

int32_t tprt_program_num_results(const tprt_program *program,
                                 int32_t function) {
  return program->functions[function].numResults;
}

const tprt_tensor_info *tprt_program_arg(const tprt_program *program,
                                         int32_t function, int32_t arg) {
  return &program->functions[function].args[arg];
}

const tprt_tensor_info *tprt_program_result(const tprt_program *program,
                                            int32_t function, int32_t result) {
  return &program->functions[function].results[result];
}

int32_t tprt_program_donor(const tprt_program *program, int32_t function,
                           int32_t result) {
  if (!program || function < 0 ||
      function >= static_cast<int32_t>(program->functions.size()))
    return -1;
  const tprt::Function &f = program->functions[function];
  if (result < 0 || result >= f.numResults)
    return -1;
  return f.donor(result);
}

} // extern "C"
