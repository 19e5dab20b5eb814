//===- Npy.cpp - Reading and writing .npy files ---------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include <cstring>
#include <fstream>
#include <regex>
#include <sstream>

using namespace tprun;

int64_t Array::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

tprt_host_tensor Array::view() {
  tprt_host_tensor t{};
  t.dtype = dtype;
  t.rank = static_cast<int32_t>(shape.size());
  for (size_t d = 0; d < shape.size() && d < TPRT_MAX_TENSOR_RANK; ++d)
    t.shape[d] = shape[d];
  t.data = bytes.data();
  return t;
}

namespace {

const char kMagic[] = "\x93NUMPY";

bool dtypeOf(const std::string &descr, tprt_dtype &dtype) {
  static const std::pair<const char *, tprt_dtype> table[] = {
      {"<f4", TPRT_F32},
      {"<f8", TPRT_F64},
      {"<f2", TPRT_F16},
      {"<i4", TPRT_I32},
      {"<i8", TPRT_I64}};
  for (auto &[name, d] : table)
    if (descr == name) {
      dtype = d;
      return true;
    }
  return false;
}

const char *descrOf(tprt_dtype dtype) {
  switch (dtype) {
  case TPRT_F32:
  case TPRT_BF16:
    return "<f4";
  case TPRT_F64:
    return "<f8";
  case TPRT_F16:
    return "<f2";
  case TPRT_I32:
    return "<i4";
  case TPRT_I64:
    return "<i8";
  }
  return "<f4";
}

} // namespace

bool tprun::readNpy(const std::string &path, Array &array, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open '" + path + "'";
    return false;
  }
  char magic[6];
  unsigned char version[2];
  if (!in.read(magic, 6) || std::memcmp(magic, kMagic, 6) != 0 ||
      !in.read(reinterpret_cast<char *>(version), 2)) {
    error = "'" + path + "' is not a .npy file (bad magic)";
    return false;
  }
  uint32_t headerLength = 0;
  if (version[0] == 1) {
    unsigned char len[2];
    if (!in.read(reinterpret_cast<char *>(len), 2)) {
      error = "'" + path + "' is truncated";
      return false;
    }
    headerLength = len[0] | (len[1] << 8);
  } else if (version[0] == 2 || version[0] == 3) {
    unsigned char len[4];
    if (!in.read(reinterpret_cast<char *>(len), 4)) {
      error = "'" + path + "' is truncated";
      return false;
    }
    headerLength = len[0] | (len[1] << 8) | (len[2] << 16) |
                   (static_cast<uint32_t>(len[3]) << 24);
  } else {
    error =
        "'" + path + "' has unknown .npy version " + std::to_string(version[0]);
    return false;
  }
  std::string header(headerLength, '\0');
  if (headerLength > (1u << 20) || !in.read(header.data(), headerLength)) {
    error = "'" + path + "' has a truncated or oversized header";
    return false;
  }
  std::smatch m;
  if (!std::regex_search(header, m, std::regex("'descr':\\s*'([^']*)'"))) {
    error = "'" + path + "': no 'descr' in the header";
    return false;
  }
  std::string descr = m[1];
  if (!dtypeOf(descr, array.dtype)) {
    error = "'" + path + "' has dtype '" + descr +
            "'; expected one of <f4, <f8, <f2, <i4, <i8";
    return false;
  }
  if (std::regex_search(header, m, std::regex("'fortran_order':\\s*True"))) {
    error = "'" + path + "' is in Fortran order; expected C order";
    return false;
  }
  if (!std::regex_search(header, m, std::regex("'shape':\\s*\\(([^)]*)\\)"))) {
    error = "'" + path + "': no 'shape' in the header";
    return false;
  }
  array.shape.clear();
  std::stringstream dims(m[1].str());
  std::string item;
  auto badShape = [&](const std::string &why) {
    error = "'" + path + "' has a bad shape (" + m[1].str() + "): " + why;
    return false;
  };
  while (std::getline(dims, item, ',')) {
    size_t first = item.find_first_not_of(" "),
           last = item.find_last_not_of(" ");
    if (first == std::string::npos)
      continue;
    item = item.substr(first, last - first + 1);
    if (item.find_first_not_of("0123456789") != std::string::npos ||
        item.size() > 18)
      return badShape("'" + item + "' is not a size (a non-negative integer)");
    array.shape.push_back(std::stoll(item));
  }
  if (array.shape.size() > TPRT_MAX_TENSOR_RANK) {
    error = "'" + path + "' has rank " + std::to_string(array.shape.size()) +
            "; at most " + std::to_string(TPRT_MAX_TENSOR_RANK);
    return false;
  }
  // The data must be in the file: no allocation beyond what is there.
  std::streampos dataStart = in.tellg();
  in.seekg(0, std::ios::end);
  auto available = static_cast<uint64_t>(in.tellg() - dataStart);
  in.seekg(dataStart);
  uint64_t bytes = tprt_dtype_size(array.dtype);
  for (int64_t d : array.shape) {
    if (d != 0 && bytes > available / static_cast<uint64_t>(d)) {
      error = "'" + path + "' is truncated: its shape (" + m[1].str() +
              ") needs more than the " + std::to_string(available) +
              " bytes of data it has";
      return false;
    }
    bytes *= static_cast<uint64_t>(d);
  }
  array.bytes.resize(bytes);
  if (!in.read(array.bytes.data(), static_cast<std::streamsize>(bytes))) {
    error = "'" + path + "' is truncated: expected " + std::to_string(bytes) +
            " bytes of data";
    return false;
  }
  return true;
}

bool tprun::writeNpy(const std::string &path, const Array &array,
                     std::string &error) {
  std::vector<char> data = array.bytes;
  if (array.dtype == TPRT_BF16) {
    // Widen to f32: bf16 is the top half of an f32.
    data.assign(static_cast<size_t>(array.numElements()) * 4, 0);
    for (int64_t i = 0; i < array.numElements(); ++i) {
      float f = tprt_bf16_to_f32(
          reinterpret_cast<const uint16_t *>(array.bytes.data())[i]);
      std::memcpy(&data[i * 4], &f, 4);
    }
  }
  std::string shape;
  for (int64_t d : array.shape)
    shape += std::to_string(d) + ", ";
  if (array.shape.size() > 1)
    shape.erase(shape.size() - 2); // (a, b) but (a,)
  else if (array.shape.size() == 1)
    shape.erase(shape.size() - 1);
  std::string header = "{'descr': '" + std::string(descrOf(array.dtype)) +
                       "', 'fortran_order': False, 'shape': (" + shape + "), }";
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header.push_back('\n');
  std::ofstream out(path, std::ios::binary);
  if (!out) {
    error = "cannot write '" + path + "'";
    return false;
  }
  unsigned char len[2] = {static_cast<unsigned char>(header.size() & 0xff),
                          static_cast<unsigned char>(header.size() >> 8)};
  out.write(kMagic, 6);
  out.put(1);
  out.put(0);
  out.write(reinterpret_cast<char *>(len), 2);
  out << header;
  out.write(data.data(), static_cast<std::streamsize>(data.size()));
  if (!out) {
    error = "writing '" + path + "' failed";
    return false;
  }
  return true;
}
