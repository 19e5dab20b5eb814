//===- Npy.cpp - Reading and writing .npy files ---------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Npy.h"

#include <cstring>
#include <fstream>
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
  default:
    break;
  }
  return "<f4";
}

/// The value of `key` in a .npy header (a Python dict literal): the text after
/// `'key':` and any spaces, or npos when the key is missing.
size_t findValue(const std::string &header, const char *key) {
  std::string quoted = std::string("'") + key + "'";
  size_t at = header.find(quoted);
  if (at == std::string::npos)
    return at;
  at = header.find_first_not_of(" ", at + quoted.size());
  if (at == std::string::npos || header[at] != ':')
    return std::string::npos;
  at = header.find_first_not_of(" ", at + 1);
  return at == std::string::npos ? header.size() : at;
}

uint32_t littleEndian(const unsigned char *bytes, int n) {
  uint32_t value = 0;
  for (int i = n - 1; i >= 0; --i)
    value = (value << 8) | bytes[i];
  return value;
}

} // namespace

bool tprun::parseNpy(const std::string &data, const std::string &name,
                     Array &array, std::string &error) {
  const std::string file = "'" + name + "'";
  auto fail = [&](const std::string &why) {
    error = file + why;
    return false;
  };
  const auto *bytes = reinterpret_cast<const unsigned char *>(data.data());
  if (data.size() < 8 || std::memcmp(data.data(), kMagic, 6) != 0)
    return fail(" is not a .npy file (bad magic)");
  int version = bytes[6];
  int lengthBytes = version == 1 ? 2 : (version == 2 || version == 3) ? 4 : 0;
  if (!lengthBytes)
    return fail(" has unknown .npy version " + std::to_string(version));
  if (data.size() < 8u + lengthBytes)
    return fail(" is truncated");
  uint64_t headerLength = littleEndian(bytes + 8, lengthBytes);
  size_t headerStart = 8 + lengthBytes;
  if (headerLength > (1u << 20) || data.size() - headerStart < headerLength)
    return fail(" has a truncated or oversized header");
  std::string header = data.substr(headerStart, headerLength);

  size_t at = findValue(header, "descr");
  size_t close =
      at == std::string::npos || at >= header.size() || header[at] != '\''
          ? std::string::npos
          : header.find('\'', at + 1);
  if (close == std::string::npos)
    return fail(": no 'descr' in the header");
  std::string descr = header.substr(at + 1, close - at - 1);
  if (!dtypeOf(descr, array.dtype))
    return fail(" has dtype '" + descr +
                "'; expected one of <f4, <f8, <f2, <i4, <i8");
  at = findValue(header, "fortran_order");
  if (at != std::string::npos && header.compare(at, 4, "True") == 0)
    return fail(" is in Fortran order; expected C order");

  at = findValue(header, "shape");
  close = at == std::string::npos || at >= header.size() || header[at] != '('
              ? std::string::npos
              : header.find(')', at);
  if (close == std::string::npos)
    return fail(": no 'shape' in the header");
  std::string shapeText = header.substr(at + 1, close - at - 1);
  array.shape.clear();
  std::stringstream dims(shapeText);
  std::string item;
  while (std::getline(dims, item, ',')) {
    size_t first = item.find_first_not_of(" "),
           last = item.find_last_not_of(" ");
    if (first == std::string::npos)
      continue;
    item = item.substr(first, last - first + 1);
    if (item.find_first_not_of("0123456789") != std::string::npos ||
        item.size() > 18)
      return fail(" has a bad shape (" + shapeText + "): '" + item +
                  "' is not a size (a non-negative integer)");
    array.shape.push_back(std::stoll(item));
  }
  if (array.shape.size() > TPRT_MAX_TENSOR_RANK)
    return fail(" has rank " + std::to_string(array.shape.size()) +
                "; at most " + std::to_string(TPRT_MAX_TENSOR_RANK));

  // The data must be in the file: no allocation beyond what is there.
  size_t dataStart = headerStart + headerLength;
  uint64_t available = data.size() - dataStart;
  uint64_t size = tprt_dtype_size(array.dtype);
  for (int64_t d : array.shape) {
    if (d != 0 && size > available / static_cast<uint64_t>(d))
      return fail(" is truncated: its shape (" + shapeText +
                  ") needs more than the " + std::to_string(available) +
                  " bytes of data it has");
    size *= static_cast<uint64_t>(d);
  }
  if (size > available)
    return fail(" is truncated: expected " + std::to_string(size) +
                " bytes of data, it has " + std::to_string(available));
  array.bytes.assign(data.begin() + static_cast<std::ptrdiff_t>(dataStart),
                     data.begin() +
                         static_cast<std::ptrdiff_t>(dataStart + size));
  return true;
}

bool tprun::readNpy(const std::string &path, Array &array, std::string &error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    error = "cannot open '" + path + "'";
    return false;
  }
  std::ostringstream contents;
  contents << in.rdbuf();
  if (in.bad()) {
    error = "cannot read '" + path + "'";
    return false;
  }
  return parseNpy(contents.str(), path, array, error);
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
