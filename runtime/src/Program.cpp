//===- Program.cpp - Loading program libraries and their manifests --------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// A program library (tp-compile) exports `tprt_manifest`, a text whose
// format is fixed by tp-record-manifest:
//
//   tprt-manifest 1
//   func <name> <#args> <#results>
//   mesh <name> <rank> <axis>=<size>...        (or `mesh - 0`: one device)
//   arg <i> <dtype> <rank> <sizes...> s=<d0>/<d1>/...|<partial>
//   result <i> ...
//   end
//
// and `tprt_entry_<name>(ctx, buffers)` per function.
//
//===----------------------------------------------------------------------===//

#include "Program.h"

#include <dlfcn.h>

using namespace tprt;

namespace {

bool parseDtype(const std::string &name, tprt_dtype &dtype) {
  for (tprt_dtype d :
       {TPRT_F32, TPRT_F64, TPRT_F16, TPRT_BF16, TPRT_I32, TPRT_I64})
    if (name == tprt_dtype_name(d)) {
      dtype = d;
      return true;
    }
  return false;
}

/// `0,1` -> axes {0, 1}.
bool parseAxes(const std::string &text, tprt_axes &axes) {
  axes = {};
  if (text.empty())
    return true;
  std::istringstream is(text);
  std::string item;
  while (std::getline(is, item, ',')) {
    if (axes.count == TPRT_MAX_MESH_RANK || item.empty())
      return false;
    axes.axes[axes.count++] = std::stoi(item);
  }
  return true;
}

bool parseSharding(const std::string &text, int32_t rank,
                   tprt_sharding &sharding) {
  sharding = {};
  sharding.rank = rank;
  if (text.rfind("s=", 0) != 0)
    return false;
  std::string body = text.substr(2);
  size_t bar = body.find('|');
  if (bar == std::string::npos)
    return false;
  std::string dims = body.substr(0, bar);
  if (!parseAxes(body.substr(bar + 1), sharding.partial))
    return false;
  std::vector<std::string> parts;
  size_t start = 0;
  while (true) {
    size_t slash = dims.find('/', start);
    parts.push_back(dims.substr(start, slash - start));
    if (slash == std::string::npos)
      break;
    start = slash + 1;
  }
  if (rank == 0)
    return dims.empty();
  if (static_cast<int32_t>(parts.size()) != rank)
    return false;
  for (int32_t d = 0; d < rank; ++d)
    if (!parseAxes(parts[d], sharding.dims[d]))
      return false;
  return true;
}

tprt_status parseManifest(const std::string &text,
                          std::vector<Function> &functions,
                          const std::string &path) {
  std::istringstream lines(text);
  std::string line;
  int lineNo = 0;
  auto bad = [&](const std::string &why) {
    return error(TPRT_INVALID_ARGUMENT, path, ": manifest line ", lineNo, ": ",
                 why, ": '", line, "'");
  };
  if (!std::getline(lines, line) || line != "tprt-manifest 1")
    return error(TPRT_INVALID_ARGUMENT, path,
                 ": not a tprt manifest of version 1 (first line '", line,
                 "')");
  lineNo = 1;
  Function *current = nullptr;
  while (std::getline(lines, line)) {
    ++lineNo;
    std::istringstream is(line);
    std::string word;
    is >> word;
    if (word.empty())
      continue;
    if (word == "func") {
      functions.emplace_back();
      current = &functions.back();
      int numArgs = -1, numResults = -1;
      is >> current->name >> numArgs >> numResults;
      if (!is || numArgs < 0 || numResults < 0)
        return bad("expected 'func <name> <#args> <#results>'");
      current->numArgs = numArgs;
      current->numResults = numResults;
      current->mesh = {1, {1}};
      continue;
    }
    if (!current)
      return bad("expected 'func' first");
    if (word == "mesh") {
      std::string name;
      int32_t rank = -1;
      is >> name >> rank;
      if (!is || rank < 0 || rank > TPRT_MAX_MESH_RANK)
        return bad("expected 'mesh <name> <rank> <axis>=<size>...'");
      if (rank == 0)
        continue;
      current->meshName = name;
      current->mesh = {rank, {}};
      for (int32_t a = 0; a < rank; ++a) {
        std::string axis;
        is >> axis;
        size_t eq = axis.find('=');
        if (!is || eq == std::string::npos)
          return bad("expected '<axis>=<size>'");
        current->axisNames.push_back(axis.substr(0, eq));
        current->mesh.sizes[a] = std::stoll(axis.substr(eq + 1));
      }
      continue;
    }
    if (word == "arg" || word == "result") {
      int index = -1;
      std::string dtype, sharding;
      tprt_tensor_info info{};
      is >> index >> dtype >> info.rank;
      if (!is || info.rank < 0 || info.rank > TPRT_MAX_TENSOR_RANK ||
          !parseDtype(dtype, info.dtype))
        return bad("expected '" + word +
                   " <index> <dtype> <rank> <sizes...> s=...'");
      for (int32_t d = 0; d < info.rank; ++d)
        is >> info.shape[d];
      is >> sharding;
      if (!is || !parseSharding(sharding, info.rank, info.sharding))
        return bad("bad sizes or sharding");
      (word == "arg" ? current->args : current->results).push_back(info);
      continue;
    }
    if (word == "end") {
      if (static_cast<int>(current->args.size()) != current->numArgs ||
          static_cast<int>(current->results.size()) != current->numResults)
        return bad("the function's argument or result count does not match "
                   "its lines");
      for (const tprt_tensor_info &info : current->args)
        if (tprt_status status =
                tprt_sharding_check(&current->mesh, &info.sharding, info.shape))
          return status;
      current = nullptr;
      continue;
    }
    return bad("unknown line");
  }
  return nullptr;
}

} // namespace

extern "C" {

tprt_status tprt_program_load(const char *path, tprt_program **program) {
  if (!path)
    return error(TPRT_INVALID_ARGUMENT, "program path is null");
  // A bare file name is a file here, not a library to search for.
  std::string file = path;
  if (file.find('/') == std::string::npos)
    file = "./" + file;
  void *handle = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!handle)
    return error(TPRT_IO_ERROR, "cannot load program '", path,
                 "': ", dlerror());
  auto loaded = std::make_unique<tprt_program_s>();
  loaded->handle = handle;
  auto *manifest = static_cast<const char *>(dlsym(handle, "tprt_manifest"));
  if (!manifest) {
    dlclose(handle);
    return error(TPRT_INVALID_ARGUMENT, "'", path,
                 "' is not a tp-compile program: no 'tprt_manifest' symbol");
  }
  if (tprt_status status = parseManifest(manifest, loaded->functions, path)) {
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
}

void tprt_program_destroy(tprt_program *program) {
  if (!program)
    return;
  dlclose(program->handle);
  delete program;
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

} // extern "C"
