//===- Status.cpp - Errors with messages ----------------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//

#include "Internal.h"

extern "C" {

tprt_code tprt_status_code(tprt_status status) {
  return status ? status->code : TPRT_OK;
}

const char *tprt_status_message(tprt_status status) {
  return status ? status->message.c_str() : "";
}

void tprt_status_free(tprt_status status) { delete status; }

tprt_status tprt_status_create(tprt_code code, const char *message) {
  if (code == TPRT_OK)
    return nullptr;
  return new tprt_status_s{code, message ? message : ""};
}

const char *tprt_code_name(tprt_code code) {
  switch (code) {
  case TPRT_OK:
    return "OK";
  case TPRT_INVALID_ARGUMENT:
    return "INVALID_ARGUMENT";
  case TPRT_MISMATCH:
    return "MISMATCH";
  case TPRT_TIMEOUT:
    return "TIMEOUT";
  case TPRT_ABORTED:
    return "ABORTED";
  case TPRT_IO_ERROR:
    return "IO_ERROR";
  case TPRT_INTERNAL:
    return "INTERNAL";
  case TPRT_UNAVAILABLE:
    return "UNAVAILABLE";
  }
  return "UNKNOWN";
}

} // extern "C"
