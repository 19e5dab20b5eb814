//===- StandaloneMain.cpp - Runs a fuzz target on files, without libFuzzer ===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// When the project is built without TP_ENABLE_FUZZERS, each fuzz target is
// linked with this main instead of libFuzzer's: it runs the target once on
// every file named on the command line (and every file in every folder
// named), so that the corpus and the regression inputs of fuzz/ run in the
// normal test suite with any compiler. A crash is a crash; the exit status is
// 0 once every input has run.
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

namespace fs = std::filesystem;

static bool runFile(const fs::path &path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "error: cannot read '%s'\n", path.c_str());
    return false;
  }
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                             std::istreambuf_iterator<char>());
  // Like libFuzzer: the target sees exactly the bytes, in a buffer of its own.
  std::vector<uint8_t> copy(bytes);
  LLVMFuzzerTestOneInput(copy.empty() ? nullptr : copy.data(), copy.size());
  return true;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    std::fprintf(stderr,
                 "usage: %s FILE|FOLDER...\n"
                 "Runs this fuzz target once on each file (built without "
                 "libFuzzer; see fuzz/README.md).\n",
                 argv[0]);
    return 2;
  }
  int count = 0;
  for (int i = 1; i < argc; ++i) {
    fs::path arg(argv[i]);
    std::error_code ec;
    if (fs::is_directory(arg, ec)) {
      std::vector<fs::path> files;
      for (const auto &entry : fs::recursive_directory_iterator(arg, ec))
        if (entry.is_regular_file())
          files.push_back(entry.path());
      std::sort(files.begin(), files.end());
      for (const fs::path &file : files) {
        if (!runFile(file))
          return 1;
        ++count;
      }
      continue;
    }
    if (!runFile(arg))
      return 1;
    ++count;
  }
  std::printf("ran %d input(s)\n", count);
  return 0;
}
