/*===- tprt.h - The tp-mlir SPMD runtime, C API ------------------*- C -*-===*\
|*                                                                            *|
|* Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.       *|
|*                                                                            *|
\*===----------------------------------------------------------------------===*/
/*
 * tprt runs compiled tp-mlir programs SPMD: one copy per device of a mesh.
 * This header is the whole public surface; it needs no MLIR.
 *
 * Conventions:
 *  - Every fallible call returns a `tprt_status`: NULL means success; anything
 *    else is an error that the caller owns and releases with
 *    tprt_status_free(). Outputs come last in argument lists.
 *  - Meshes are row-major: device d has coordinates (c0, c1, ...) with
 *    d = (c0 * size1 + c1) * size2 + ... . A group of mesh axes (`tprt_axes`,
 *    an ordered list of axis indices) is the set of devices that share a
 *    device's coordinates on every other axis; a member's position in the
 *    group is its coordinates on the listed axes, linearized in the listed
 *    order (the first axis is the most significant).
 *  - Tensors are dense and row-major; shapes are int64_t arrays.
 *
 * Thread safety: a communicator belongs to one rank and is used by one thread
 * at a time; different ranks' communicators are used concurrently (that is
 * the point). Worlds, statuses and the pure functions below are safe to use
 * from any thread.
 */

#ifndef TPRT_TPRT_H
#define TPRT_TPRT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define TPRT_API __declspec(dllexport)
#else
#define TPRT_API __attribute__((visibility("default")))
#endif

/*===----------------------------------------------------------------------===*
 * Status
 *===----------------------------------------------------------------------===*/

typedef enum tprt_code {
  TPRT_OK = 0,
  /* A bad argument: shape, dtype, count, axis, a missing file. */
  TPRT_INVALID_ARGUMENT = 1,
  /* Ranks of one group called different collectives or sizes. */
  TPRT_MISMATCH = 2,
  /* A rank waited longer than the world's timeout for its group. */
  TPRT_TIMEOUT = 3,
  /* Another rank failed; this one stopped instead of waiting for it. */
  TPRT_ABORTED = 4,
  /* Reading or writing a file failed. */
  TPRT_IO_ERROR = 5,
  /* Out of memory, or a broken invariant of the runtime itself. */
  TPRT_INTERNAL = 6,
  /* What the call needs is not on this machine: no CUDA driver, no GPU, a
   * library (cuBLAS, NCCL) missing or too old. */
  TPRT_UNAVAILABLE = 7,
} tprt_code;

/* An error with a message; NULL means success. Owned by whoever received it. */
typedef struct tprt_status_s *tprt_status;

/* TPRT_OK for NULL. */
TPRT_API tprt_code tprt_status_code(tprt_status status);
/* "" for NULL. Valid until the status is freed. */
TPRT_API const char *tprt_status_message(tprt_status status);
/* Accepts NULL. */
TPRT_API void tprt_status_free(tprt_status status);
/* A new status (NULL for TPRT_OK); `message` is copied. */
TPRT_API tprt_status tprt_status_create(tprt_code code, const char *message);
/* The name of a code, e.g. "MISMATCH". */
TPRT_API const char *tprt_code_name(tprt_code code);

/*===----------------------------------------------------------------------===*
 * Element types and reductions
 *===----------------------------------------------------------------------===*/

typedef enum tprt_dtype {
  TPRT_F32 = 0,
  TPRT_F64 = 1,
  /* IEEE half and bfloat16: stored in 16 bits, reduced in f32. */
  TPRT_F16 = 2,
  TPRT_BF16 = 3,
  TPRT_I32 = 4,
  TPRT_I64 = 5,
  /* Not a dtype: makes every int a valid value of the type, so that a caller's
   * bad value is rejected with TPRT_INVALID_ARGUMENT instead of being
   * undefined behaviour in C++ (the same device as Vulkan's *_MAX_ENUM). */
  TPRT_DTYPE_RANGE_MIN_ = -2147483647 - 1,
  TPRT_DTYPE_RANGE_MAX_ = 2147483647,
} tprt_dtype;

/* Bytes per element; 0 for an unknown dtype. */
TPRT_API size_t tprt_dtype_size(tprt_dtype dtype);
/* "f32", "bf16", ...; "?" for an unknown dtype. */
TPRT_API const char *tprt_dtype_name(tprt_dtype dtype);

/* IEEE half and bfloat16 to and from f32 (round to nearest even). */
TPRT_API float tprt_f16_to_f32(uint16_t value);
TPRT_API uint16_t tprt_f32_to_f16(float value);
TPRT_API float tprt_bf16_to_f32(uint16_t value);
TPRT_API uint16_t tprt_f32_to_bf16(float value);

/*===----------------------------------------------------------------------===*
 * Comparing results (the one tolerance check of tp-run --verify and Python)
 *===----------------------------------------------------------------------===*/

/* Element `i` of a buffer of `dtype` as a double (f16 and bf16 widened, i64
 * rounded to the nearest double); 0 for an unknown dtype. */
TPRT_API double tprt_element_value(tprt_dtype dtype, const void *data,
                                   int64_t i);

/* The relative tolerance of a result of `dtype` against an independent
 * reference: about ten units in the last place of its rounding (1e-5 for
 * f32, 1e-10 for f64, 1e-2 for f16, 4e-2 for bf16; 0, exact, for integers).
 * An f32 result of a program whose GEMMs may round their inputs
 * (`precision`, the manifest's matmul precision: "high" rounds to TF32,
 * "medium" to bf16) gets that rounding's: 5e-3 and 4e-2. `precision` NULL
 * or "highest": IEEE f32. Negative for an unknown dtype or precision. */
TPRT_API double tprt_tolerance(tprt_dtype dtype, const char *precision);

/* What tprt_compare found. */
typedef struct tprt_comparison {
  int64_t elements;   /* compared */
  int64_t bad;        /* over their allowance */
  int64_t worst;      /* flat index of the largest error ratio; -1: none */
  double worst_ratio; /* its |got - want| / its allowance */
  double worst_got, worst_want;
  double tolerance;    /* the relative tolerance used */
  double floor;        /* the magnitude floor used: max(rms(want), floor) */
  int64_t nan_in_both; /* elements NaN in both (they agree, show nothing) */
} tprt_comparison;

/* Compares `n` elements of `got` with `want`, both of `dtype`. An element
 * passes when |got - want| <= max(tolerance * max(|want|, floor),
 * allowance): relative to its own magnitude, with `floor` no less than the
 * RMS of `want`'s finite elements (a caller may raise it: a training step's
 * gradients share the largest gradient's RMS), and `allowance` an absolute
 * one (0: none). Integers compare exactly; NaN agrees only with NaN and an
 * infinity only with itself. `tolerance` < 0: tprt_tolerance(dtype,
 * precision). TPRT_INVALID_ARGUMENT for an unknown dtype or precision, a
 * null buffer with n > 0, or a null `out`. */
TPRT_API tprt_status tprt_compare(tprt_dtype dtype, const void *got,
                                  const void *want, int64_t n, double tolerance,
                                  const char *precision, double floor,
                                  double allowance, tprt_comparison *out);

typedef enum tprt_reduction {
  TPRT_SUM = 0,
  TPRT_MAX = 1,
  TPRT_MIN = 2,
  TPRT_PROD = 3,
  /* Not a reduction: every int is a value of the type (see tprt_dtype). */
  TPRT_REDUCTION_RANGE_MIN_ = -2147483647 - 1,
  TPRT_REDUCTION_RANGE_MAX_ = 2147483647,
} tprt_reduction;

/*===----------------------------------------------------------------------===*
 * Meshes, axes and shardings
 *===----------------------------------------------------------------------===*/

#define TPRT_MAX_MESH_RANK 4
#define TPRT_MAX_TENSOR_RANK 8

typedef struct tprt_mesh {
  int32_t rank;
  int64_t sizes[TPRT_MAX_MESH_RANK];
} tprt_mesh;

/* An ordered list of distinct mesh axis indices. */
typedef struct tprt_axes {
  int32_t count;
  int32_t axes[TPRT_MAX_MESH_RANK];
} tprt_axes;

/* How a tensor is laid out over a mesh: per dimension the axes that split it
 * (major to minor), and the axes over which the tensor is a pending sum. */
typedef struct tprt_sharding {
  int32_t rank;
  tprt_axes dims[TPRT_MAX_TENSOR_RANK];
  tprt_axes partial;
} tprt_sharding;

/* Number of devices of `mesh`. */
TPRT_API int64_t tprt_mesh_num_devices(const tprt_mesh *mesh);
/* Checks a mesh (rank 1..TPRT_MAX_MESH_RANK, sizes >= 1). */
TPRT_API tprt_status tprt_mesh_check(const tprt_mesh *mesh);
/* Checks `axes` against `mesh`: indices in range, none repeated. */
TPRT_API tprt_status tprt_axes_check(const tprt_mesh *mesh,
                                     const tprt_axes *axes);
/* Number of devices in a group over `axes`. */
TPRT_API int64_t tprt_group_size(const tprt_mesh *mesh, const tprt_axes *axes);
/* Position of `device` in its group over `axes`. */
TPRT_API int64_t tprt_group_position(const tprt_mesh *mesh,
                                     const tprt_axes *axes, int64_t device);

/* The first device that holds the same shard as `device` of a tensor sharded
 * as `sharding` (checked): devices with the same coordinates along every axis
 * that splits the tensor or that it is a pending sum over hold the same
 * values (replicas). */
TPRT_API int64_t tprt_replica_leader(const tprt_mesh *mesh,
                                     const tprt_sharding *sharding,
                                     int64_t device);
/* Checks `sharding` for a tensor of `global_shape` on `mesh`: the ranks agree,
 * axes valid, no axis used twice, each split dimension divisible. */
TPRT_API tprt_status tprt_sharding_check(const tprt_mesh *mesh,
                                         const tprt_sharding *sharding,
                                         const int64_t *global_shape);
/* The shape each device holds: every split dimension divided by its group. */
TPRT_API void tprt_shard_shape(const tprt_mesh *mesh,
                               const tprt_sharding *sharding,
                               const int64_t *global_shape,
                               int64_t *local_shape);
/* Copies `device`'s shard of a global tensor into `local` (shard shape). A
 * pending sum is split as one term per device: the member at position 0 of
 * the partial group holds the value, the others hold zeros. */
TPRT_API tprt_status tprt_scatter_shard(const tprt_mesh *mesh,
                                        const tprt_sharding *sharding,
                                        const int64_t *global_shape,
                                        tprt_dtype dtype, const void *global,
                                        int64_t device, void *local);
/* Nonzero when `device`'s shard of a tensor of `global_shape` sharded as
 * `sharding` (checked) is one contiguous run of the row-major global tensor
 * holding its values (not a zero term of a pending sum): every dimension
 * before the first split one has one element, every one after it is whole.
 * Then `*element_offset` is where the run starts, and the shard can be read
 * in place (tprt_session_run does so for the inputs). */
TPRT_API int32_t tprt_shard_contiguous(const tprt_mesh *mesh,
                                       const tprt_sharding *sharding,
                                       const int64_t *global_shape,
                                       int64_t device, int64_t *element_offset);
/* TPRT_OK when every device's shard (`shards[d]`, `bytes` each) of a tensor
 * sharded as `sharding` equals, byte for byte, that of its replica leader
 * (tprt_replica_leader); else TPRT_MISMATCH naming the first such device,
 * its leader and the first element (of `dtype`) where they differ, after
 * `what` ("result #0"). */
TPRT_API tprt_status tprt_check_replicas(const tprt_mesh *mesh,
                                         const tprt_sharding *sharding,
                                         tprt_dtype dtype,
                                         const void *const *shards,
                                         size_t bytes, const char *what);
/* Rebuilds a global tensor from every device's shard (`shards[d]` for device
 * d, each of shard shape): blocks are placed by the split axes, replicas are
 * read once, pending sums are added up. */
TPRT_API tprt_status tprt_gather_shards(const tprt_mesh *mesh,
                                        const tprt_sharding *sharding,
                                        const int64_t *global_shape,
                                        tprt_dtype dtype,
                                        const void *const *shards,
                                        void *global);

/*===----------------------------------------------------------------------===*
 * Communicators
 *===----------------------------------------------------------------------===*/

/* One rank's endpoint. Every collective is called by every member of the
 * group with the same kind, dtype, shape and parameters; a mismatch makes
 * every member return TPRT_MISMATCH, and a member that never comes makes the
 * others return TPRT_TIMEOUT, then the world is aborted: later calls on any
 * rank return TPRT_ABORTED at once. Buffers are the rank's local tensors;
 * `in` may equal `out` for all_reduce only; any other overlap of a
 * member's input and output buffers is TPRT_INVALID_ARGUMENT. */
typedef struct tprt_communicator_s tprt_communicator;

TPRT_API int64_t tprt_communicator_rank(const tprt_communicator *comm);
TPRT_API const tprt_mesh *tprt_communicator_mesh(const tprt_communicator *comm);
/* The backend's name, as tprt_world_backend. */
TPRT_API const char *tprt_communicator_backend(const tprt_communicator *comm);

/* out = reduction over the group of in; `count` elements. */
TPRT_API tprt_status tprt_all_reduce(tprt_communicator *comm, const void *in,
                                     void *out, int64_t count, tprt_dtype dtype,
                                     tprt_reduction reduction,
                                     const tprt_axes *axes);
/* out = the members' `in` concatenated along `dim` in group order; out has
 * in_shape[dim] * group size there. */
TPRT_API tprt_status tprt_all_gather(tprt_communicator *comm, const void *in,
                                     void *out, const int64_t *in_shape,
                                     int32_t rank, int32_t dim,
                                     tprt_dtype dtype, const tprt_axes *axes);
/* out = this member's block along `dim` of the reduction of every `in`;
 * in_shape[dim] must divide by the group size. */
TPRT_API tprt_status tprt_reduce_scatter(tprt_communicator *comm,
                                         const void *in, void *out,
                                         const int64_t *in_shape, int32_t rank,
                                         int32_t dim, tprt_dtype dtype,
                                         tprt_reduction reduction,
                                         const tprt_axes *axes);
/* Each member splits `in` along `split_dim` into group-size blocks and sends
 * block j to member j; out is the received blocks concatenated along
 * `concat_dim` in group order. */
TPRT_API tprt_status tprt_all_to_all(tprt_communicator *comm, const void *in,
                                     void *out, const int64_t *in_shape,
                                     int32_t rank, int32_t split_dim,
                                     int32_t concat_dim, tprt_dtype dtype,
                                     const tprt_axes *axes);
/* Returns when every member of the group has called it. */
TPRT_API tprt_status tprt_barrier(tprt_communicator *comm,
                                  const tprt_axes *axes);
/* This rank failed with `status` (not consumed): every other rank's pending
 * and later collectives return TPRT_ABORTED with its message. */
TPRT_API void tprt_communicator_abort(tprt_communicator *comm,
                                      tprt_status status);

/* Collective kinds, for statistics. */
typedef enum tprt_collective_kind {
  TPRT_ALL_REDUCE = 0,
  TPRT_ALL_GATHER = 1,
  TPRT_REDUCE_SCATTER = 2,
  TPRT_ALL_TO_ALL = 3,
  TPRT_BARRIER = 4,
  TPRT_NUM_COLLECTIVE_KINDS = 5,
} tprt_collective_kind;

/* What one rank's communicator did: per kind the calls, the bytes of its
 * input tensors and the seconds spent inside the calls (waiting included). */
typedef struct tprt_comm_stats {
  int64_t calls[TPRT_NUM_COLLECTIVE_KINDS];
  int64_t bytes[TPRT_NUM_COLLECTIVE_KINDS];
  double seconds[TPRT_NUM_COLLECTIVE_KINDS];
} tprt_comm_stats;

TPRT_API void tprt_communicator_stats(const tprt_communicator *comm,
                                      tprt_comm_stats *stats);
TPRT_API void tprt_communicator_reset_stats(tprt_communicator *comm);
/* "all_reduce", ... */
TPRT_API const char *tprt_collective_kind_name(tprt_collective_kind kind);

/*===----------------------------------------------------------------------===*
 * Worlds: the ranks of a mesh, connected by a communicator backend
 *===----------------------------------------------------------------------===*/

/* The ranks of one mesh that live in this process and their communicators,
 * made by a backend chosen by name. This build's backends:
 *   local  every rank a thread of this process, exchanging through shared
 *          memory (the default; needs nothing).
 * tprt_num_backends() and tprt_backend_name() list them. */
typedef struct tprt_world_s tprt_world;

/* Option structs start with `struct_size`, which the caller sets to the
 * sizeof the struct it was compiled with (the _INIT macros do): a runtime
 * reads only the fields that size covers and takes the defaults for the
 * rest, so fields appended by later versions keep older callers working.
 * A struct_size too small for the first field is TPRT_INVALID_ARGUMENT. */
typedef struct tprt_world_options {
  uint32_t struct_size;
  /* The backend's name; NULL or "" means "local". */
  const char *backend;
  /* How long a rank waits for the rest of its group before the run fails;
   * <= 0 means the default (60000 ms, or TPRT_TIMEOUT_MS from the
   * environment). */
  int64_t timeout_ms;
} tprt_world_options;

/* Defaults: the "local" backend, the default timeout. */
#define TPRT_WORLD_OPTIONS_INIT                                                \
  { (uint32_t)sizeof(tprt_world_options), NULL, 0 }

TPRT_API int32_t tprt_num_backends(void);
/* The name of backend `index` (0 is "local"); NULL when out of range. */
TPRT_API const char *tprt_backend_name(int32_t index);
/* The target whose programs `backend` runs ("cpu" for "local" and "mpi"),
 * NULL for an unknown backend; NULL or "" means "local". */
TPRT_API const char *tprt_backend_target(const char *backend);
/* 1 when each rank of `backend` is a process of an MPI job, 0 when the
 * ranks are threads of this process, -1 for an unknown backend. */
TPRT_API int32_t tprt_backend_processes(const char *backend);

/* Targets: what programs are compiled for (tp-compile --target; the
 * manifest's `target`), listed once in tprt_targets.def. */
TPRT_API int32_t tprt_num_targets(void);
/* The name of target `index` (0 is "cpu"); NULL when out of range. */
TPRT_API const char *tprt_target_name(int32_t index);
/* 1 when the target's ranks keep tensors in a device's memory, 0 when in
 * host memory, -1 for an unknown target. */
TPRT_API int32_t tprt_target_on_device(const char *target);
/* The communicator backend the target's sessions use by default; NULL for
 * an unknown target. */
TPRT_API const char *tprt_target_default_backend(const char *target);

/* `options` may be NULL. An unknown backend is TPRT_INVALID_ARGUMENT naming
 * the backends there are. */
TPRT_API tprt_status tprt_world_create(const tprt_mesh *mesh,
                                       const tprt_world_options *options,
                                       tprt_world **world);
/* The backend's name, e.g. "local". */
TPRT_API const char *tprt_world_backend(const tprt_world *world);
TPRT_API const tprt_mesh *tprt_world_mesh(const tprt_world *world);
/* How many of the mesh's ranks this process drives (all of them for
 * "local"), and which: the `index`-th, ascending (-1 when out of range). */
TPRT_API int64_t tprt_world_num_local_ranks(const tprt_world *world);
TPRT_API int64_t tprt_world_local_rank(const tprt_world *world, int64_t index);
/* Rank `rank`'s communicator, owned by the world; `rank` must be one of this
 * process's ranks. */
TPRT_API tprt_status tprt_world_communicator(tprt_world *world, int64_t rank,
                                             tprt_communicator **comm);
/* Every rank must have returned from its calls. Accepts NULL. */
TPRT_API void tprt_world_destroy(tprt_world *world);

/*===----------------------------------------------------------------------===*
 * What compiled programs call
 *===----------------------------------------------------------------------===*/

/* One rank's context in a run: its communicator, the run's first error and
 * the runtime's entry points. Compiled code receives it as its first
 * argument and reaches the runtime only through it: the context begins with
 * a pointer to a tprt_rt_table (see below), from which compiled code loads
 * the tprt_rt_* function it calls and passes it the context. A program
 * library therefore references no runtime symbol: it loads next to any
 * number of runtimes, with RTLD_LOCAL, from ctypes or beside MLIR's own
 * runtime libraries. */
typedef struct tprt_rank_context_s tprt_rank_context;

/* `comm` is borrowed and must outlive the context. */
TPRT_API tprt_status tprt_rank_context_create(tprt_communicator *comm,
                                              tprt_rank_context **ctx);
/* The first error of this rank's run (NULL if none); ownership passes to the
 * caller and the context forgets it. */
TPRT_API tprt_status tprt_rank_context_take_status(tprt_rank_context *ctx);
/* Accepts NULL. */
TPRT_API void tprt_rank_context_destroy(tprt_rank_context *ctx);

/* The entry points that tp-mlir's CPU lowering calls. Buffers are dense and
 * row-major; `shape` points to `rank` sizes; `axes` packs a group's mesh
 * axes: bits 0-3 hold the count, bits 4(i+1)..4(i+1)+3 axis i. Enums are
 * tprt_dtype and tprt_reduction values. They return nothing: the first
 * failure is kept in the context, which aborts the other ranks, and makes
 * every later call on this rank return at once; the runtime reports it when
 * the program returns. */
TPRT_API void tprt_rt_all_reduce(tprt_rank_context *ctx, const void *in,
                                 void *out, int64_t count, int32_t dtype,
                                 int32_t reduction, int64_t axes);
TPRT_API void tprt_rt_all_gather(tprt_rank_context *ctx, const void *in,
                                 void *out, const int64_t *shape, int32_t rank,
                                 int32_t dim, int32_t dtype, int64_t axes);
TPRT_API void tprt_rt_reduce_scatter(tprt_rank_context *ctx, const void *in,
                                     void *out, const int64_t *shape,
                                     int32_t rank, int32_t dim, int32_t dtype,
                                     int32_t reduction, int64_t axes);
TPRT_API void tprt_rt_all_to_all(tprt_rank_context *ctx, const void *in,
                                 void *out, const int64_t *shape, int32_t rank,
                                 int32_t split_dim, int32_t concat_dim,
                                 int32_t dtype, int64_t axes);
/* This rank's block along `dim` of a value replicated over the group; no
 * communication. */
TPRT_API void tprt_rt_all_slice(tprt_rank_context *ctx, const void *in,
                                void *out, const int64_t *shape, int32_t rank,
                                int32_t dim, int32_t dtype, int64_t axes);
/* The GEMMs compiled programs run, described by a constant of the program
 * (one per call site: its content is the shape the CUDA backend caches its
 * cuBLASLt plan under). Every field is an int64_t, so that a compiler
 * writes it as an array. Row-major matrices of `dtype` (TPRT_F32, TPRT_F16
 * or TPRT_BF16; the narrow ones accumulate in f32): op(A) is m x k (A
 * stored k x m when trans_a is 1), op(B) k x n, C and D m x n; lda ... ldd
 * are the stored matrices' row strides. A batch of up to two levels
 * (batch0 x batch1; 1 for none): entry (i, j) of X starts at
 * x + i * stride_x0 + j * stride_x1. */
typedef enum tprt_gemm_epilogue {
  TPRT_EPILOGUE_NONE = 0,
  /* + bias[col]: a vector of n entries of `dtype`, the same for every row
   * and every entry of the batch. */
  TPRT_EPILOGUE_BIAS = 1,
  /* GELU in its tanh form, 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),
   * applied last. */
  TPRT_EPILOGUE_GELU = 2,
  TPRT_EPILOGUE_BIAS_GELU = 3,
  TPRT_EPILOGUE_RANGE_MIN_ = -2147483647 - 1,
  TPRT_EPILOGUE_RANGE_MAX_ = 2147483647,
} tprt_gemm_epilogue;

typedef struct tprt_gemm_desc {
  int64_t dtype;
  int64_t trans_a, trans_b;
  int64_t epilogue; /* tprt_gemm_epilogue */
  int64_t m, n, k;
  int64_t lda, ldb, ldc, ldd;
  int64_t batch0, batch1;
  int64_t stride_a0, stride_a1, stride_b0, stride_b1;
  int64_t stride_c0, stride_c1, stride_d0, stride_d1;
} tprt_gemm_desc;

/* D = act(op(A) op(B) + C + bias), act and the bias as `desc->epilogue`
 * says: C is left out when `c` is NULL (D's old contents unread), the bias
 * when `bias` is NULL (a partial sum adds its addends on one member of its
 * reduction only). `c` may be `d` (D += op(A) op(B)), else it must not
 * overlap D. On the CPU, OpenBLAS's sgemm (narrow matrices widened to f32,
 * D rounded back once); on CUDA, cuBLAS, or cuBLASLt with its epilogue
 * where there is one, or C is not D. */
TPRT_API void tprt_rt_gemm(tprt_rank_context *ctx, const tprt_gemm_desc *desc,
                           const void *a, const void *b, const void *c, void *d,
                           const void *bias);
/* Shorthands of tprt_rt_gemm without an epilogue: C += op(A) op(B) (or, when
 * `accumulate` is 0, C = op(A) op(B)) on f32, and on f16 (dtype TPRT_F16)
 * or bf16 (TPRT_BF16) storage. */
TPRT_API void tprt_rt_sgemm(tprt_rank_context *ctx, int32_t trans_a,
                            int32_t trans_b, int32_t accumulate, int64_t m,
                            int64_t n, int64_t k, const float *a, int64_t lda,
                            const float *b, int64_t ldb, float *c, int64_t ldc,
                            int64_t batch0, int64_t batch1, int64_t stride_a0,
                            int64_t stride_a1, int64_t stride_b0,
                            int64_t stride_b1, int64_t stride_c0,
                            int64_t stride_c1);
TPRT_API void tprt_rt_gemm_narrow(
    tprt_rank_context *ctx, int32_t dtype, int32_t trans_a, int32_t trans_b,
    int32_t accumulate, int64_t m, int64_t n, int64_t k, const void *a,
    int64_t lda, const void *b, int64_t ldb, void *c, int64_t ldc,
    int64_t batch0, int64_t batch1, int64_t stride_a0, int64_t stride_a1,
    int64_t stride_b0, int64_t stride_b1, int64_t stride_c0, int64_t stride_c1);
/* This rank's position in its group over `axes`. */
TPRT_API int64_t tprt_rt_axis_index(tprt_rank_context *ctx, int64_t axes);
/* Memory for the program's own buffers, where the rank's backend keeps
 * tensors: host memory on the CPU, device memory (stream-ordered) on CUDA.
 * Aligned to 64 bytes at least; NULL after a failure, which the context
 * keeps. `ptr` may be NULL. */
TPRT_API void *tprt_rt_alloc(tprt_rank_context *ctx, int64_t bytes);
TPRT_API void tprt_rt_free(tprt_rank_context *ctx, void *ptr);
/* Copies `bytes` of host memory (a constant of the program) into a buffer
 * of tprt_rt_alloc; asynchronous on CUDA (`host` must stay valid, as a
 * program's constants do). */
TPRT_API void tprt_rt_upload(tprt_rank_context *ctx, void *dst,
                             const void *host, int64_t bytes);
/* Launches kernel `name` of the program's GPU image `image` (a CUDA fatbin
 * or cubin of `image_size` bytes, loaded once per device and kept) on the
 * rank's stream, over grid x block threads with `shared_bytes` of dynamic
 * shared memory; `params` holds a pointer to each of its `num_params`
 * arguments (cuLaunchKernel's kernelParams). Programs of tp-compile
 * --target cuda call it; a CPU backend fails it. */
/* A bounds check of the program failed: `index` (a slice's offset computed
 * at run time, as a KV cache's position) is not in [0, `last`]. `what`
 * says where (the op and its location in the model). Fails the rank with
 * TPRT_INVALID_ARGUMENT; the program went on with offset 0, so that no
 * memory outside its buffers was touched. */
TPRT_API void tprt_rt_index_error(tprt_rank_context *ctx, int64_t index,
                                  int64_t last, const char *what);
/* 1 the first time the rank asks about `buffer` (a buffer the session keeps
 * across runs: a program's constants, uploaded then), 0 after; always 1 on
 * a CPU backend, whose programs read their constants where they are. */
TPRT_API int32_t tprt_rt_fill_once(tprt_rank_context *ctx, void *buffer);
TPRT_API void tprt_rt_launch(tprt_rank_context *ctx, const void *image,
                             int64_t image_size, const char *name,
                             int64_t grid_x, int64_t grid_y, int64_t grid_z,
                             int64_t block_x, int64_t block_y, int64_t block_z,
                             int32_t shared_bytes, void **params,
                             int64_t num_params);
/* Runs `body(args, lo', hi')` over subranges that together cover [lo, hi)
 * once each, on the rank's OpenMP team (the threads its oneDNN GEMMs run
 * on: the cores divided among the ranks of the process), and returns when
 * all are done. The iterations must be independent. With one thread, a
 * range of one iteration, OpenBLAS as the GEMM library
 * (tprt_cpu_gemm_library), or a runtime built without oneDNN, it is
 * body(args, lo, hi) on the calling thread. After a failure on the rank it
 * does nothing. */
TPRT_API void tprt_rt_parallel_for(tprt_rank_context *ctx,
                                   void (*body)(void *, int64_t, int64_t),
                                   void *args, int64_t lo, int64_t hi);
/* Packs an axis list the way the entry points above read it. */
TPRT_API int64_t tprt_pack_axes(const tprt_axes *axes);

/* The entry points above as compiled code reaches them: every rank context
 * starts with a pointer to this table. The compiler reads the slots by
 * their offsets in this struct; a program records the ABI version it was
 * compiled for in its manifest and loads only into a runtime of that
 * version. New entry points are appended (and bump the version). */
#define TPRT_RT_ABI_VERSION 6

typedef struct tprt_rt_table {
  int64_t abi_version; /* TPRT_RT_ABI_VERSION */
  /* One slot per entry point, in the order of tprt_rt_calls.def (its
   * `version` column says which ABI version added each). */
#define TPRT_RT_CALL(name, Name, version, ret, params) ret(*name) params;
#include "tprt_rt_calls.def"
} tprt_rt_table;

/* This runtime's table (the one its rank contexts point to). */
TPRT_API const tprt_rt_table *tprt_rt_functions(void);

/*===----------------------------------------------------------------------===*
 * CUDA
 *===----------------------------------------------------------------------===*/

/* libtprt links no CUDA library: the driver (libcuda.so.1), cuBLAS
 * (libcublas.so.13) and NCCL (libnccl.so.2) are opened at run time, the first
 * time they are needed, so this library loads and runs CPU programs where
 * they are absent. */
typedef struct tprt_cuda_info {
  /* sizeof(tprt_cuda_info); see tprt_world_options. */
  uint32_t struct_size;
  /* cuDriverGetVersion (e.g. 13000); 0 without a driver. */
  int32_t driver_version;
  /* GPUs the driver sees. */
  int32_t device_count;
  /* cuBLAS as major*10000 + minor*100 + patch; 0 when not found. */
  int32_t cublas_version;
  /* ncclGetVersion (e.g. 22809); 0 when not found. */
  int32_t nccl_version;
} tprt_cuda_info;

#define TPRT_CUDA_INFO_INIT                                                    \
  { (uint32_t)sizeof(tprt_cuda_info), 0, 0, 0, 0 }

/* Fills `info` with what this process finds of CUDA (every library it can
 * open, whether or not the others are there) and returns OK when programs
 * can run on CUDA here: a driver that starts and sees a GPU, cuBLAS and
 * NCCL. Otherwise TPRT_UNAVAILABLE naming the first thing missing, the
 * driver first ("no CUDA driver found: ..."). Thread-safe; the libraries
 * stay loaded. */
TPRT_API tprt_status tprt_cuda_query(tprt_cuda_info *info);

/*===----------------------------------------------------------------------===*
 * The CPU target's GEMM library
 *===----------------------------------------------------------------------===*/

/* The library the CPU target's GEMMs (tprt_rt_gemm) run on in this process:
 * "oneDNN" (kernels generated for the machine's vector width) where the
 * runtime was built with it, "OpenBLAS" otherwise; the environment variable
 * TPRT_CPU_GEMM=onednn|openblas chooses (read once). OpenBLAS also takes any
 * call oneDNN refuses. */
TPRT_API const char *tprt_cpu_gemm_library(void);

/* Gives each of `local_ranks` ranks sharing this host's cores (times
 * OMPI_COMM_WORLD_LOCAL_SIZE processes under mpirun) its share of them for
 * its GEMMs, as a session does before each run, and returns that share; 0
 * (nothing changed) where the library's own variable decides:
 * OPENBLAS_NUM_THREADS for OpenBLAS, OMP_NUM_THREADS for oneDNN. */
TPRT_API int32_t tprt_cpu_gemm_share_cores(int64_t local_ranks);

/*===----------------------------------------------------------------------===*
 * Programs and sessions
 *===----------------------------------------------------------------------===*/

/* A program library made by tp-compile: its manifest and entry points. It
 * calls the runtime only through the rank context (tprt_rt_table), so it is
 * opened with RTLD_LOCAL and needs nothing of the global symbol scope.
 * Programs are immutable once loaded: safe to share between threads. */
typedef struct tprt_program_s tprt_program;

/* What the manifest says of one argument or result. */
typedef struct tprt_tensor_info {
  tprt_dtype dtype;
  int32_t rank;
  int64_t shape[TPRT_MAX_TENSOR_RANK]; /* global shape */
  tprt_sharding sharding;
  /* The tensor's name where it came from (`tp.name`: a parameter's fully
   * qualified name in the imported module), or "" if it has none; owned by
   * the program. */
  const char *name;
} tprt_tensor_info;

/* Loads a library as tp-compile wrote it: its checksum trailer is checked
 * first, so a truncated or edited library (or one that was stripped) is an
 * error before it is mapped; then its manifest is validated whole. */
TPRT_API tprt_status tprt_program_load(const char *path,
                                       tprt_program **program);
/* The library's checksum (FNV-1a, 64 bit, of the library as linked): equal
 * for equal programs, so ranks of one job can check that they loaded the
 * same one. */
TPRT_API uint64_t tprt_program_checksum(const tprt_program *program);
/* Accepts NULL. */
TPRT_API void tprt_program_destroy(tprt_program *program);
/* The backend the program was compiled for: "cpu" or "cuda" (tp-compile
 * --target); a session runs only programs of its own target. */
TPRT_API const char *tprt_program_target(const tprt_program *program);
/* How its f32 GEMMs may compute (tp-compile --matmul-precision): "highest"
 * (IEEE f32), "high" (TF32 inputs), "medium" (bf16 inputs), each with f32
 * accumulation. CUDA ranks choose cuBLAS's compute type by it; CPU ranks
 * compute IEEE f32 at every setting. */
TPRT_API const char *tprt_program_matmul_precision(const tprt_program *program);
TPRT_API int32_t tprt_program_num_functions(const tprt_program *program);
TPRT_API const char *tprt_program_function_name(const tprt_program *program,
                                                int32_t function);
/* The index of function `name`; an error names the functions there are. */
TPRT_API tprt_status tprt_program_find_function(const tprt_program *program,
                                                const char *name,
                                                int32_t *function);
/* The mesh the function runs on (1 device for an unsharded function). */
TPRT_API const tprt_mesh *tprt_program_mesh(const tprt_program *program,
                                            int32_t function);
TPRT_API int32_t tprt_program_num_args(const tprt_program *program,
                                       int32_t function);
TPRT_API int32_t tprt_program_num_results(const tprt_program *program,
                                          int32_t function);
TPRT_API const tprt_tensor_info *
tprt_program_arg(const tprt_program *program, int32_t function, int32_t arg);
TPRT_API const tprt_tensor_info *
tprt_program_result(const tprt_program *program, int32_t function,
                    int32_t result);

/* The argument donated to result `result` (`tp.donate` in the IR: the
 * program writes that result in the argument's buffer, in place), or -1.
 * tprt_session_run and tprt_session_run_shards give a donated argument a
 * copy of its own (the caller's tensors stay unchanged); on arrays
 * (tprt_session_run_arrays) the donated array's memory becomes the result's
 * and the donated handle holds nothing after the run (a later use is an
 * error naming the run that took it), as JAX's donated buffers. */
TPRT_API int32_t tprt_program_donor(const tprt_program *program,
                                    int32_t function, int32_t result);

/* A dense row-major tensor in host memory; `data` is the caller's. */
typedef struct tprt_host_tensor {
  tprt_dtype dtype;
  int32_t rank;
  int64_t shape[TPRT_MAX_TENSOR_RANK];
  void *data;
} tprt_host_tensor;

/* The devices of one mesh and a communicator backend (see tprt_world), made
 * once and kept: tprt_session_create makes the session's world (the
 * backend's communicators; on a GPU world each rank's context, stream and
 * cuBLAS handle; NCCL communicators when a group first needs one) and, where
 * every rank lives in this process, one thread per rank, and they all live
 * until tprt_session_destroy. Runs reuse them, as well as every program's
 * GPU kernels, loaded on a rank's first launch. A session runs one program at
 * a time: concurrent runs of one session take turns. A run that fails inside
 * the ranks (a rank's error aborts the world's communicators) or abandons a
 * rank leaves the world unable to run: every later run returns TPRT_ABORTED
 * naming the first cause, and the caller makes a new session. A run refused
 * before any rank ran (bad inputs) leaves the session as it was. */
typedef struct tprt_session_s tprt_session;

typedef struct tprt_session_options {
  /* sizeof(tprt_session_options); see tprt_world_options. */
  uint32_t struct_size;
  /* See tprt_world_options. */
  int64_t timeout_ms;
  /* The communicator backend; NULL or "" means "local". */
  const char *backend;
  /* How an input with pending-sum (partial) axes is split between the members
   * of its partial group: 0 gives the value to the first member and zeros to
   * the others (tprt_scatter_shard); any other value is the seed of random
   * terms, one per member, that add up to the value (as tp-run --verify
   * does, so that a collective that copies instead of summing is caught). */
  uint64_t partial_seed;
  /* Nonzero: on a GPU world, time every kernel launch, GEMM, collective and
   * device copy of a run with CUDA events on the rank's stream
   * (tprt_session_device_profile). Each timed op costs two event records. */
  int32_t device_timing;
  /* Nonzero: gather a replicated result from its first replica without
   * comparing the others with it (tp-run --verify compares them element by
   * element itself). By default tprt_session_run fails with TPRT_MISMATCH,
   * naming two devices and the first element where they differ, when a
   * device's copy of a replicated shard is not its first replica's, byte for
   * byte: a program that broke its sharding is not gathered silently. */
  int32_t skip_replica_check;
  /* Nonzero: never capture CUDA graphs. By default a GPU session runs a
   * function's first run on arrays (tprt_session_run_arrays) op by op (its
   * warm-up: kernels loaded, communicators made), captures its second run
   * on each rank's stream into a CUDA graph, and from then on replays the
   * graph whenever the run's buffers are those it was captured with: the
   * same input arrays' memory, and results in the buffers of the last run's
   * results once their arrays are freed (a run whose buffers moved captures
   * again and updates the graph in place, cuGraphExecUpdate). A function
   * whose capture fails on any rank (a library call that refuses capture, a
   * copy from host memory) runs op by op from then on, and the session says
   * so once on stderr. Runs on host tensors (tprt_session_run, _shards)
   * never capture: their buffers are new every run. */
  int32_t no_graphs;
} tprt_session_options;

/* Defaults: the default timeout, the "local" backend, pending sums on the
 * first member, no device timing, replicas checked, CUDA graphs. */
#define TPRT_SESSION_OPTIONS_INIT                                              \
  { (uint32_t)sizeof(tprt_session_options), 0, NULL, 0, 0, 0, 0 }

/* `options` may be NULL. A rank thread the system refuses (a limit on a
 * process's or user's threads) is TPRT_UNAVAILABLE naming the rank; nothing
 * is left behind. */
TPRT_API tprt_status tprt_session_create(const tprt_mesh *mesh,
                                         const tprt_session_options *options,
                                         tprt_session **session);
/* Joins the rank threads and frees the world (a rank abandoned in an endless
 * loop keeps its thread and world). Accepts NULL. */
TPRT_API void tprt_session_destroy(tprt_session *session);
/* NULL while `session` can run; once a run failed inside its ranks (its world
 * aborted: a rank's error, a timeout), TPRT_ABORTED naming that failure, as
 * every later run returns. A run refused before it ran (bad inputs) leaves
 * the session able to run. */
TPRT_API tprt_status tprt_session_check(tprt_session *session);
/* Runs `function` of `program` on every device: checks the inputs against
 * the manifest (count, dtype, shape), scatters them by their shardings (a
 * device whose shard is a contiguous run of an input reads it there: programs
 * never write their inputs, which stay unchanged), runs
 * every rank, and gathers each result into `outputs[i].data`, which the
 * caller allocates with the result's global shape (dtype and shape are
 * checked). A failing rank fails the run with its first error; nothing is
 * written to `outputs` then. A rank that is still computing `timeout_ms`
 * after another rank finished (an endless loop: it is in no collective) fails
 * the run with TPRT_TIMEOUT naming it; its thread is abandoned, still
 * running, with its buffers and world (and the program stays loaded). */
TPRT_API tprt_status tprt_session_run(
    tprt_session *session, const tprt_program *program, int32_t function,
    const tprt_host_tensor *inputs, int32_t num_inputs,
    tprt_host_tensor *outputs, int32_t num_outputs);
/* An array: a tensor whose shards live on a session's devices between runs
 * (device memory on a GPU world, the rank's host memory on the CPU), laid out
 * by its sharding over the session's mesh, as jax.Array or a DTensor.
 * Placed once from a global tensor or from shards, passed to runs and
 * returned by them (tprt_session_run_arrays: nothing moves between host and
 * device), fetched on demand. The handle is the caller's, freed with
 * tprt_array_free; destroying its session frees its memory, and the handle
 * then says so. A handle that was freed (recently: the last 1024 frees are
 * remembered) or never made is an error wherever it is passed, not a read of
 * freed memory. Calls on one session's arrays take turns with its runs.
 * On a world spread over processes (`mpi`, `nccl-mpi`) each process holds its
 * own rank's shard: tprt_array_place and tprt_array_fetch are then called by
 * every process (each with the global tensor to place; each gets the global
 * tensor fetched). */
typedef struct tprt_array_s tprt_array;

/* Places a global host tensor of `info`'s dtype, global shape and sharding
 * (checked against the session's mesh; `info->name` is ignored, so a
 * program's tprt_program_arg serves) on the session's devices: each local
 * rank copies its shard (tprt_scatter_shard; a pending sum is the value on
 * the first member of its group and zeros on the others). `global` may be
 * reused once this returns. Out of memory on a rank is an error naming it;
 * nothing is left placed. */
TPRT_API tprt_status tprt_array_place(tprt_session *session,
                                      const tprt_tensor_info *info,
                                      const void *global, tprt_array **array);
/* The same from shards the caller holds in host memory: `shards[k]` is the
 * k-th local rank's (tprt_session_local_rank), of the shard shape
 * tprt_shard_shape gives; num_shards is the local rank count. */
TPRT_API tprt_status tprt_array_place_shards(tprt_session *session,
                                             const tprt_tensor_info *info,
                                             const void *const *shards,
                                             int64_t num_shards,
                                             tprt_array **array);
/* Writes a global host tensor (the array's dtype and global shape) into an
 * array already placed, in its own memory, shard by shard as
 * tprt_array_place does: a loop that feeds new values of an input each step
 * keeps the array, and its device addresses (which a CUDA graph replays
 * with), instead of placing a new one. A donated or freed array is refused. */
TPRT_API tprt_status tprt_array_write(tprt_array *array, const void *global);
/* Gathers the array into `global` (host, its global shape; tprt_gather_shards:
 * blocks by their split axes, pending sums added). Replicas are compared
 * first, by checksum: a device whose copy of a replicated shard differs from
 * the first replica's is TPRT_MISMATCH naming both devices. */
TPRT_API tprt_status tprt_array_fetch(const tprt_array *array, void *global);
/* Copies local rank `rank`'s shard into `shard` (host, the shard shape). */
TPRT_API tprt_status tprt_array_fetch_shard(const tprt_array *array,
                                            int64_t rank, void *shard);
/* Its dtype, global shape and sharding (`name` is ""); NULL for a handle
 * that is not an array. Valid until it is freed. */
TPRT_API const tprt_tensor_info *tprt_array_info(const tprt_array *array);
/* The number messages call it by ("array #7"); 0 for a handle that is not
 * an array. */
TPRT_API uint64_t tprt_array_id(const tprt_array *array);
/* Frees the array's memory and its handle. Accepts NULL, and ignores a
 * handle that is not an array. */
TPRT_API void tprt_array_free(tprt_array *array);

/* Runs `function` on arrays of this session: `inputs[i]` must be a live
 * array of the session with argument i's dtype, global shape and sharding
 * (checked: an error names the input, the array and what differs). Inputs
 * are read where they are and never written, so they serve run after run;
 * each result is a new array in `outputs[i]`, which the caller frees.
 * Nothing moves between host and device. Failures and timeouts are as for
 * tprt_session_run; no result array is made then. */
TPRT_API tprt_status tprt_session_run_arrays(
    tprt_session *session, const tprt_program *program, int32_t function,
    tprt_array *const *inputs, int32_t num_inputs, tprt_array **outputs,
    int32_t num_outputs);

/* The mesh's ranks this process drives, ascending: every rank on a world in
 * one process ("local", a GPU world), its own rank under "mpi". */
TPRT_API int64_t tprt_session_num_local_ranks(const tprt_session *session);
/* The `index`-th local rank; -1 when out of range. */
TPRT_API int64_t tprt_session_local_rank(const tprt_session *session,
                                         int64_t index);
/* For embedding: runs `function` on shards the caller already holds, with no
 * scatter and no gather. `inputs[k * A + i]` (A: the function's argument
 * count) is the k-th local rank's shard of input i, and `outputs[k * R + i]`
 * (R: its result count) is where that rank writes its shard of result i:
 * num_inputs = local ranks x A, num_outputs = local ranks x R. Each has the
 * tensor's dtype and the shard shape tprt_shard_shape gives for its sharding
 * (checked); a pending-sum input's shard is the rank's term of the sum.
 * Inputs are read in place and never written, so shards cut once
 * (tprt_scatter_shard) serve every run: weights stay placed, as with
 * jax.device_put or DTensor parameters. Results are zeroed, then written.
 * The shards are host memory: on a GPU world each rank copies its inputs to
 * its device and its results back, every run. On a world spread over
 * processes every process calls this with the same program and function and
 * its own rank's shards; every process returns the root cause of a failure
 * on any rank, and has every rank's statistics and profile. Failures and
 * timeouts are as for tprt_session_run; tprt_session_local_result has
 * nothing after such a run (the results are the caller's). */
TPRT_API tprt_status tprt_session_run_shards(
    tprt_session *session, const tprt_program *program, int32_t function,
    const tprt_host_tensor *inputs, int32_t num_inputs,
    tprt_host_tensor *outputs, int32_t num_outputs);
/* After a successful tprt_session_run: device `rank`'s own copy of result
 * `index` (its shard, of the shape tprt_shard_shape gives for the result's
 * sharding), valid until the next tprt_session_run or
 * tprt_session_run_shards (which keeps none) or tprt_session_destroy; runs
 * on arrays leave it (their results' shards are the arrays':
 * tprt_array_fetch_shard). The gathered result reads
 * one copy of each replicated shard; this is how a caller checks the others
 * (tp-run --verify compares every replica). */
TPRT_API tprt_status tprt_session_local_result(const tprt_session *session,
                                               int64_t rank, int32_t index,
                                               const void **data);
/* Rank `rank`'s collective statistics of the last run, and the seconds each
 * rank spent in the program. */
TPRT_API tprt_status tprt_session_stats(const tprt_session *session,
                                        int64_t rank, tprt_comm_stats *stats,
                                        double *seconds);

/* Where one rank's time went, by kind of op: GEMMs (the tprt_rt_sgemm and
 * tprt_rt_gemm_narrow calls), each kind of collective (in `comm`), and the
 * rest of the program (compiled loops: elementwise ops, reductions). */
typedef struct tprt_rank_profile {
  double total_seconds;
  int64_t gemm_calls;
  double gemm_flops;
  double gemm_seconds;
  tprt_comm_stats comm;
} tprt_rank_profile;

TPRT_API tprt_status tprt_session_profile(const tprt_session *session,
                                          int64_t rank,
                                          tprt_rank_profile *profile);
/* Where one GPU rank's device time went in the last run, by kind of op, from
 * CUDA events on its stream (tprt_session_options.device_timing): the
 * program's kernels, GEMMs (cuBLAS), each kind of collective (from the
 * moment it was enqueued behind the rank's earlier work: waiting for the
 * peers included), and device copies (all_slice, uploads of constants). */
typedef struct tprt_device_profile {
  /* sizeof(tprt_device_profile), set by TPRT_DEVICE_PROFILE_INIT. */
  uint32_t struct_size;
  int64_t kernel_launches;
  double kernel_seconds;
  int64_t gemm_calls;
  double gemm_seconds;
  int64_t collective_calls[TPRT_NUM_COLLECTIVE_KINDS];
  double collective_seconds[TPRT_NUM_COLLECTIVE_KINDS];
  int64_t copies;
  double copy_seconds;
  /* The whole run on the device: from before its first op to after its last
   * (the rank's stream busy, or waiting for its peers), the figure to set
   * against PyTorch's CUDA-event time of the same step; the host's overhead
   * per run is the run's wall time less this. */
  double run_seconds;
  /* 1 when the run replayed its CUDA graph (tprt_session_options.no_graphs):
   * its ops ran as one launch, so only run_seconds is timed and the figures
   * by kind of op are zero. */
  int64_t graph_launches;
} tprt_device_profile;

#define TPRT_DEVICE_PROFILE_INIT                                               \
  { (uint32_t)sizeof(tprt_device_profile), 0, 0, 0, 0, {0}, {0}, 0, 0, 0, 0 }

/* TPRT_INVALID_ARGUMENT unless the session's last run was on a GPU world with
 * device_timing. */
TPRT_API tprt_status tprt_session_device_profile(const tprt_session *session,
                                                 int64_t rank,
                                                 tprt_device_profile *profile);

/* What the rank context recorded of GEMMs so far. */
TPRT_API void tprt_rank_context_gemm_stats(const tprt_rank_context *ctx,
                                           int64_t *calls, double *flops,
                                           double *seconds);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TPRT_TPRT_H */
