/*===- tprt_mpi.h - Worlds over an MPI communicator ----------------*- C -*-===*
 *
 * Part of tp-mlir, under the Apache License v2.0 with LLVM Exceptions.
 *
 *===----------------------------------------------------------------------===*
 *
 * For programs that run under MPI themselves: a world of the `mpi` backend
 * over the caller's communicator, one rank of the mesh per process. (The
 * registry's `mpi` backend, tprt_world_create with backend "mpi", is the same
 * over MPI_COMM_WORLD, initializing MPI when the process has not.) Available
 * when libtprt was built with MPI (tprt_backend_name lists "mpi"; otherwise
 * TPRT_UNAVAILABLE).
 *
 *===----------------------------------------------------------------------===*/

#ifndef TPRT_TPRT_MPI_H
#define TPRT_TPRT_MPI_H

#include "tprt/tprt.h"

/* MPI's C API only: OpenMPI's and MPICH's deprecated C++ bindings would make
 * every C++ includer link libmpi_cxx. */
#ifndef OMPI_SKIP_MPICXX
#define OMPI_SKIP_MPICXX 1
#endif
#ifndef MPICH_SKIP_MPICXX
#define MPICH_SKIP_MPICXX 1
#endif
#include <mpi.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A world of the `mpi` backend over `comm`: this process drives rank
 * MPI_Comm_rank(comm) of `mesh`, whose device count must equal
 * MPI_Comm_size(comm). The world works on duplicates of `comm` (the caller
 * keeps and frees its own) and must be destroyed before MPI_Finalize, by
 * every process together (tprt_world_destroy then receives the abort notices
 * still on their way, waiting at most the world's timeout). MPI
 * must be initialized with MPI_THREAD_SERIALIZED or more: sessions call it
 * from the rank's thread. Every process of `comm` calls this together. */
TPRT_API tprt_status tprt_world_create_mpi(const tprt_mesh *mesh, MPI_Comm comm,
                                           const tprt_world_options *options,
                                           tprt_world **world);

/* A session whose runs are worlds of the `mpi` backend over `comm` (which the
 * session duplicates at creation and frees when destroyed): every process of
 * `comm` creates it, calls tprt_session_run with the same program (rank 0's
 * inputs are the ones used; only rank 0 receives the results, figures and
 * local results of every rank) and destroys it, together. `options->backend`
 * is not read. */
TPRT_API tprt_status tprt_session_create_mpi(
    const tprt_mesh *mesh, MPI_Comm comm, const tprt_session_options *options,
    tprt_session **session);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* TPRT_TPRT_MPI_H */
