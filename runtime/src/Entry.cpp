//===- Entry.cpp - What compiled programs call ----------------------------===//
//
// Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
//
//===----------------------------------------------------------------------===//
//
// Compiled code calls these with its rank context. A failing call keeps its
// status in the context and aborts the other ranks; later calls return at
// once, so the program runs to its end and the runtime reports the error.
//
//===----------------------------------------------------------------------===//

#include "CpuGemm.h"
#include "RankContext.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>

using namespace tprt;

namespace {

tprt_axes unpackAxes(int64_t packed) {
  tprt_axes axes{static_cast<int32_t>(packed & 0xf), {}};
  for (int32_t i = 0; i < axes.count && i < TPRT_MAX_MESH_RANK; ++i)
    axes.axes[i] = static_cast<int32_t>((packed >> (4 * (i + 1))) & 0xf);
  return axes;
}

} // namespace

tprt_status tprt::createRankContext(tprt_communicator *comm,
                                    const tprt_rt_table *table, void *device,
                                    tprt_rank_context **ctx) {
  if (!comm)
    return error(TPRT_INVALID_ARGUMENT, "rank context: communicator is null");
  *ctx = new (std::nothrow) tprt_rank_context_s{table, comm, device};
  if (!*ctx)
    return error(TPRT_INTERNAL, "rank context: out of memory");
  return nullptr;
}

extern "C" {

tprt_status tprt_rank_context_create(tprt_communicator *comm,
                                     tprt_rank_context **ctx) {
  return createRankContext(comm, tprt_rt_functions(), nullptr, ctx);
}

tprt_status tprt_rank_context_take_status(tprt_rank_context *ctx) {
  tprt_status status = ctx->error;
  ctx->error = nullptr;
  return status;
}

void tprt_rank_context_gemm_stats(const tprt_rank_context *ctx, int64_t *calls,
                                  double *flops, double *seconds) {
  *calls = ctx->gemmCalls;
  *flops = ctx->gemmFlops;
  *seconds = ctx->gemmSeconds;
}

void tprt_rank_context_destroy(tprt_rank_context *ctx) {
  if (!ctx)
    return;
  tprt_status_free(ctx->error);
  delete ctx;
}

int64_t tprt_pack_axes(const tprt_axes *axes) {
  int64_t packed = axes->count & 0xf;
  for (int32_t i = 0; i < axes->count; ++i)
    packed |= static_cast<int64_t>(axes->axes[i] & 0xf) << (4 * (i + 1));
  return packed;
}

void tprt_rt_all_reduce(tprt_rank_context *ctx, const void *in, void *out,
                        int64_t count, int32_t dtype, int32_t reduction,
                        int64_t axes) {
  tprt_axes list = unpackAxes(axes);
  guarded(ctx, [&] {
    return tprt_all_reduce(ctx->comm, in, out, count,
                           static_cast<tprt_dtype>(dtype),
                           static_cast<tprt_reduction>(reduction), &list);
  });
}

void tprt_rt_all_gather(tprt_rank_context *ctx, const void *in, void *out,
                        const int64_t *shape, int32_t rank, int32_t dim,
                        int32_t dtype, int64_t axes) {
  tprt_axes list = unpackAxes(axes);
  guarded(ctx, [&] {
    return tprt_all_gather(ctx->comm, in, out, shape, rank, dim,
                           static_cast<tprt_dtype>(dtype), &list);
  });
}

void tprt_rt_reduce_scatter(tprt_rank_context *ctx, const void *in, void *out,
                            const int64_t *shape, int32_t rank, int32_t dim,
                            int32_t dtype, int32_t reduction, int64_t axes) {
  tprt_axes list = unpackAxes(axes);
  guarded(ctx, [&] {
    return tprt_reduce_scatter(ctx->comm, in, out, shape, rank, dim,
                               static_cast<tprt_dtype>(dtype),
                               static_cast<tprt_reduction>(reduction), &list);
  });
}

void tprt_rt_all_to_all(tprt_rank_context *ctx, const void *in, void *out,
                        const int64_t *shape, int32_t rank, int32_t split_dim,
                        int32_t concat_dim, int32_t dtype, int64_t axes) {
  tprt_axes list = unpackAxes(axes);
  guarded(ctx, [&] {
    return tprt_all_to_all(ctx->comm, in, out, shape, rank, split_dim,
                           concat_dim, static_cast<tprt_dtype>(dtype), &list);
  });
}

void tprt_rt_all_slice(tprt_rank_context *ctx, const void *in, void *out,
                       const int64_t *shape, int32_t rank, int32_t dim,
                       int32_t dtype, int64_t axes) {
  tprt_axes list = unpackAxes(axes);
  guarded(ctx, [&]() -> tprt_status {
    const tprt_mesh &mesh = ctx->comm->mesh();
    if (tprt_status status = tprt_axes_check(&mesh, &list))
      return status;
    size_t elemSize = tprt_dtype_size(static_cast<tprt_dtype>(dtype));
    if (rank < 1 || rank > TPRT_MAX_TENSOR_RANK || dim < 0 || dim >= rank ||
        elemSize == 0)
      return error(TPRT_INVALID_ARGUMENT, "all_slice: bad rank ", rank,
                   ", dim ", dim, " or dtype ", dtype);
    int64_t size = tprt_group_size(&mesh, &list);
    if (shape[dim] % size != 0)
      return error(TPRT_INVALID_ARGUMENT, "all_slice: dimension ", dim, " of ",
                   formatShape(shape, rank), " is not divisible by ", size);
    int64_t box[TPRT_MAX_TENSOR_RANK], offset[TPRT_MAX_TENSOR_RANK] = {},
                                       zero[TPRT_MAX_TENSOR_RANK] = {};
    std::copy(shape, shape + rank, box);
    box[dim] /= size;
    offset[dim] =
        tprt_group_position(&mesh, &list, ctx->comm->rank()) * box[dim];
    copyBox(in, shape, offset, out, box, zero, box, rank, elemSize);
    return nullptr;
  });
}

int64_t tprt_rt_axis_index(tprt_rank_context *ctx, int64_t axes) {
  tprt_axes list = unpackAxes(axes);
  if (tprt_status status = tprt_axes_check(&ctx->comm->mesh(), &list)) {
    fail(ctx, status);
    return 0;
  }
  return tprt_group_position(&ctx->comm->mesh(), &list, ctx->comm->rank());
}

} // extern "C"

//===----------------------------------------------------------------------===//
// MLIR's own runtime calls
//===----------------------------------------------------------------------===//

namespace {

/// MLIR's ranked memref descriptor, rank-erased: allocated and aligned
/// pointers, offset, then `rank` sizes and `rank` strides.
struct Descriptor {
  char *allocated;
  char *aligned;
  int64_t offset;
  int64_t sizesAndStrides[1];
};

struct UnrankedDescriptor {
  int64_t rank;
  Descriptor *descriptor;
};

} // namespace

extern "C" {

/// memref.copy between buffers of non-contiguous layouts lowers to this call
/// (the ABI of MLIR's C runner utils); compiled programs get it from here so
/// that they need no MLIR library at run time.
TPRT_API void memrefCopy(int64_t elemSize, UnrankedDescriptor *src,
                         UnrankedDescriptor *dst) {
  int64_t rank = src->rank;
  const int64_t *sizes = src->descriptor->sizesAndStrides;
  const int64_t *srcStrides = sizes + rank;
  const int64_t *dstStrides = dst->descriptor->sizesAndStrides + rank;
  const char *srcBase =
      src->descriptor->aligned + src->descriptor->offset * elemSize;
  char *dstBase = dst->descriptor->aligned + dst->descriptor->offset * elemSize;
  for (int64_t d = 0; d < rank; ++d)
    if (sizes[d] == 0)
      return;
  std::vector<int64_t> index(static_cast<size_t>(rank), 0);
  while (true) {
    int64_t s = 0, t = 0;
    for (int64_t d = 0; d < rank; ++d) {
      s += index[d] * srcStrides[d];
      t += index[d] * dstStrides[d];
    }
    copyBytes(dstBase + t * elemSize, srcBase + s * elemSize,
              static_cast<size_t>(elemSize));
    int64_t d = rank - 1;
    while (d >= 0 && ++index[d] == sizes[d])
      index[d--] = 0;
    if (d < 0)
      return;
  }
}

} // extern "C"

//===----------------------------------------------------------------------===//
// GEMM
//===----------------------------------------------------------------------===//

tprt_status tprt::checkGemm(const tprt_gemm_desc *g) {
  if (!g)
    return error(TPRT_INVALID_ARGUMENT, "tprt_rt_gemm: no descriptor");
  if (g->dtype != TPRT_F32 && g->dtype != TPRT_F16 && g->dtype != TPRT_BF16)
    return error(TPRT_INVALID_ARGUMENT, "tprt_rt_gemm: dtype ", g->dtype,
                 " is not f32, f16 or bf16");
  if (g->epilogue < TPRT_EPILOGUE_NONE || g->epilogue > TPRT_EPILOGUE_BIAS_GELU)
    return error(TPRT_INVALID_ARGUMENT, "tprt_rt_gemm: epilogue ", g->epilogue,
                 " is not one of 0 (none), 1 (bias), 2 (GELU), 3 (bias and "
                 "GELU)");
  if (g->trans_a < 0 || g->trans_a > 1 || g->trans_b < 0 || g->trans_b > 1)
    return error(TPRT_INVALID_ARGUMENT, "tprt_rt_gemm: trans_a ", g->trans_a,
                 ", trans_b ", g->trans_b, ": each must be 0 or 1");
  for (int64_t v : {g->m, g->n, g->k, g->batch0, g->batch1})
    if (v < 0)
      return error(TPRT_INVALID_ARGUMENT, "tprt_rt_gemm: negative size ", v);
  // Each stored matrix's rows hold its columns.
  int64_t colsA = g->trans_a ? g->m : g->k, colsB = g->trans_b ? g->k : g->n;
  if (g->lda < std::max<int64_t>(colsA, 1) ||
      g->ldb < std::max<int64_t>(colsB, 1) ||
      g->ldc < std::max<int64_t>(g->n, 1) ||
      g->ldd < std::max<int64_t>(g->n, 1))
    return error(TPRT_INVALID_ARGUMENT, "tprt_rt_gemm: leading dimensions ",
                 g->lda, ", ", g->ldb, ", ", g->ldc, ", ", g->ldd,
                 " below the rows' lengths ", colsA, ", ", colsB, ", ", g->n);
  return nullptr;
}

float tprt::geluTanh(float x) {
  const float sqrt2OverPi = 0.7978845608028654f;
  return 0.5f * x *
         (1.0f + std::tanh(sqrt2OverPi * (x + 0.044715f * x * x * x)));
}

namespace {

/// One entry of a batch: D (m x n, row stride ldd) in f32, computed as
/// tprt_rt_gemm says; `c` is null or D itself when no copy is needed.
void gemmEntry(const tprt_gemm_desc &g, const float *a, int64_t lda,
               const float *b, int64_t ldb, const float *c, int64_t ldc,
               float *d, int64_t ldd, const float *bias) {
  if (c && c != d)
    for (int64_t r = 0; r < g.m; ++r)
      copyBytes(d + r * ldd, c + r * ldc,
                static_cast<size_t>(g.n) * sizeof(float));
  cpuSgemm(g.trans_a, g.trans_b, g.m, g.n, g.k, a, lda, b, ldb, c ? 1.0f : 0.0f,
           d, ldd);
  bool gelu = g.epilogue & TPRT_EPILOGUE_GELU;
  if (!bias && !gelu)
    return;
  for (int64_t r = 0; r < g.m; ++r) {
    float *row = d + r * ldd;
    if (bias)
      for (int64_t q = 0; q < g.n; ++q)
        row[q] += bias[q];
    if (gelu)
      for (int64_t q = 0; q < g.n; ++q)
        row[q] = geluTanh(row[q]);
  }
}

/// A dense f32 buffer of `count` elements, uninitialized (a narrow GEMM
/// widens into it: zeroing it first would be one more pass).
std::unique_ptr<float[]> floats(int64_t count) {
  return std::unique_ptr<float[]>(new float[static_cast<size_t>(count)]);
}

/// The stored `rows` x `cols` matrix of narrow floats at `src` (row stride
/// `ld`), densely in f32.
std::unique_ptr<float[]> widen(bool half, const void *src, int64_t rows,
                               int64_t cols, int64_t ld) {
  std::unique_ptr<float[]> out = floats(rows * cols);
  const uint16_t *p = static_cast<const uint16_t *>(src);
  for (int64_t r = 0; r < rows; ++r) {
    const uint16_t *in = p + r * ld;
    float *row = out.get() + r * cols;
    if (half)
      for (int64_t q = 0; q < cols; ++q)
        row[q] = halfToFloat(in[q]);
    else
      for (int64_t q = 0; q < cols; ++q)
        row[q] = bf16ToFloat(in[q]);
  }
  return out;
}

} // namespace

extern "C" {

void tprt_rt_gemm(tprt_rank_context *ctx, const tprt_gemm_desc *desc,
                  const void *a, const void *b, const void *c, void *d,
                  const void *bias) {
  if (ctx && ctx->error)
    return;
  if (tprt_status status = checkGemm(desc)) {
    if (ctx)
      fail(ctx, status);
    else
      tprt_status_free(status);
    return;
  }
  const tprt_gemm_desc &g = *desc;
  Clock::time_point start = Clock::now();
  if (!(g.epilogue & TPRT_EPILOGUE_BIAS))
    bias = nullptr;
  for (int64_t i = 0; i < g.batch0; ++i)
    for (int64_t j = 0; j < g.batch1; ++j) {
      int64_t offA = i * g.stride_a0 + j * g.stride_a1,
              offB = i * g.stride_b0 + j * g.stride_b1,
              offC = i * g.stride_c0 + j * g.stride_c1,
              offD = i * g.stride_d0 + j * g.stride_d1;
      if (g.dtype == TPRT_F32) {
        const float *pc = c ? static_cast<const float *>(c) + offC : nullptr;
        gemmEntry(g, static_cast<const float *>(a) + offA, g.lda,
                  static_cast<const float *>(b) + offB, g.ldb, pc, g.ldc,
                  static_cast<float *>(d) + offD, g.ldd,
                  static_cast<const float *>(bias));
        continue;
      }
      // f16 / bf16: oneDNN's matmul where it runs them (accumulating in
      // f32, rounding D once), D starting as C where C is apart from it.
      bool half = g.dtype == TPRT_F16;
      const uint16_t *pa = static_cast<const uint16_t *>(a) + offA;
      const uint16_t *pb = static_cast<const uint16_t *>(b) + offB;
      uint16_t *pd = static_cast<uint16_t *>(d) + offD;
      if (c && c != d)
        for (int64_t r = 0; r < g.m; ++r)
          copyBytes(pd + r * g.ldd,
                    static_cast<const uint16_t *>(c) + offC + r * g.ldc,
                    static_cast<size_t>(g.n) * sizeof(uint16_t));
      if (cpuNarrowGemm(half, g.trans_a, g.trans_b, g.m, g.n, g.k, pa, g.lda,
                        pb, g.ldb, c != nullptr, bias,
                        g.epilogue & TPRT_EPILOGUE_GELU, pd, g.ldd))
        continue;
      // Elsewhere widened, computed in f32, D rounded back once.
      std::unique_ptr<float[]> fa = g.trans_a
                                        ? widen(half, pa, g.k, g.m, g.lda)
                                        : widen(half, pa, g.m, g.k, g.lda);
      std::unique_ptr<float[]> fb = g.trans_b
                                        ? widen(half, pb, g.n, g.k, g.ldb)
                                        : widen(half, pb, g.k, g.n, g.ldb);
      std::unique_ptr<float[]> fd =
          c ? widen(half, static_cast<const uint16_t *>(c) + offC, g.m, g.n,
                    c == d ? g.ldd : g.ldc)
            : floats(g.m * g.n);
      std::unique_ptr<float[]> fbias;
      if (bias)
        fbias = widen(half, bias, 1, g.n, g.n);
      gemmEntry(g, fa.get(), g.trans_a ? g.m : g.k, fb.get(),
                g.trans_b ? g.k : g.n, c ? fd.get() : nullptr, g.n, fd.get(),
                g.n, fbias.get());
      for (int64_t r = 0; r < g.m; ++r) {
        const float *in = fd.get() + r * g.n;
        uint16_t *row = pd + r * g.ldd;
        if (half)
          for (int64_t q = 0; q < g.n; ++q)
            row[q] = floatToHalf(in[q]);
        else
          for (int64_t q = 0; q < g.n; ++q)
            row[q] = floatToBf16(in[q]);
      }
    }
  recordGemm(ctx, start, g.batch0 * g.batch1 * g.m * g.n * g.k);
}

void tprt_rt_sgemm(tprt_rank_context *ctx, int32_t trans_a, int32_t trans_b,
                   int32_t accumulate, int64_t m, int64_t n, int64_t k,
                   const float *a, int64_t lda, const float *b, int64_t ldb,
                   float *c, int64_t ldc, int64_t batch0, int64_t batch1,
                   int64_t stride_a0, int64_t stride_a1, int64_t stride_b0,
                   int64_t stride_b1, int64_t stride_c0, int64_t stride_c1) {
  tprt_rt_gemm_narrow(ctx, TPRT_F32, trans_a, trans_b, accumulate, m, n, k, a,
                      lda, b, ldb, c, ldc, batch0, batch1, stride_a0, stride_a1,
                      stride_b0, stride_b1, stride_c0, stride_c1);
}

/// Also the f32 shorthand's body (dtype TPRT_F32): C is D, read when
/// accumulating.
void tprt_rt_gemm_narrow(tprt_rank_context *ctx, int32_t dtype, int32_t trans_a,
                         int32_t trans_b, int32_t accumulate, int64_t m,
                         int64_t n, int64_t k, const void *a, int64_t lda,
                         const void *b, int64_t ldb, void *c, int64_t ldc,
                         int64_t batch0, int64_t batch1, int64_t stride_a0,
                         int64_t stride_a1, int64_t stride_b0,
                         int64_t stride_b1, int64_t stride_c0,
                         int64_t stride_c1) {
  tprt_gemm_desc desc = {dtype,     trans_a,   trans_b,   TPRT_EPILOGUE_NONE,
                         m,         n,         k,         lda,
                         ldb,       ldc,       ldc,       batch0,
                         batch1,    stride_a0, stride_a1, stride_b0,
                         stride_b1, stride_c0, stride_c1, stride_c0,
                         stride_c1};
  tprt_rt_gemm(ctx, &desc, a, b, accumulate ? c : nullptr, c, nullptr);
}

} // extern "C"

//===----------------------------------------------------------------------===//
// Memory and kernels
//===----------------------------------------------------------------------===//

extern "C" {

void *tprt_rt_alloc(tprt_rank_context *ctx, int64_t bytes) {
  if (ctx->error)
    return nullptr;
  // Rounded up to the alignment, as aligned_alloc wants; never 0 bytes.
  size_t size = static_cast<size_t>(std::max<int64_t>(bytes, 1) + 63) & ~63ul;
  void *ptr = bytes < 0 ? nullptr : std::aligned_alloc(64, size);
  if (!ptr)
    fail(ctx, error(TPRT_INTERNAL, "rank ", ctx->comm->rank(),
                    ": tprt_rt_alloc: cannot allocate ", bytes, " bytes"));
  return ptr;
}

void tprt_rt_free(tprt_rank_context *, void *ptr) { std::free(ptr); }

void tprt_rt_upload(tprt_rank_context *ctx, void *dst, const void *host,
                    int64_t bytes) {
  if (ctx->error || bytes <= 0)
    return;
  std::memcpy(dst, host, static_cast<size_t>(bytes));
}

void tprt_rt_index_error(tprt_rank_context *ctx, int64_t index, int64_t last,
                         const char *what) {
  guarded(ctx, [&] {
    return error(TPRT_INVALID_ARGUMENT, "rank ", ctx->comm->rank(), ": ",
                 what ? what : "an offset", " is ", index,
                 ", out of bounds: expected 0 to ", last);
  });
}

int32_t tprt_rt_fill_once(tprt_rank_context *, void *) { return 1; }

void tprt_rt_parallel_for(tprt_rank_context *ctx,
                          void (*body)(void *, int64_t, int64_t), void *args,
                          int64_t lo, int64_t hi) {
  if ((ctx && ctx->error) || hi <= lo)
    return;
  cpuParallelFor(body, args, lo, hi);
}

void tprt_rt_launch(tprt_rank_context *ctx, const void *, int64_t,
                    const char *name, int64_t, int64_t, int64_t, int64_t,
                    int64_t, int64_t, int32_t, void **, int64_t) {
  guarded(ctx, [&] {
    return error(TPRT_INVALID_ARGUMENT, "rank ", ctx->comm->rank(),
                 ": kernel '", name ? name : "",
                 "' is GPU code (tp-compile --target cuda); the '",
                 ctx->comm->backend(), "' backend runs CPU programs");
  });
}

const tprt_rt_table *tprt_rt_functions(void) {
  static const tprt_rt_table table = {
      TPRT_RT_ABI_VERSION,
#define TPRT_RT_CALL(name, Name, version, ret, params) tprt_rt_##name,
#include "tprt/tprt_rt_calls.def"
  };
  return &table;
}

} // extern "C"
