/* tests/mpi_testutil.h - what the MPI tests (label mpi) share: start and finish (failures
 * summed over the ranks, one summary on rank 0, the same exit code everywhere), row
 * partitions with special shapes, and a deterministic global vector. */
#ifndef KRILL_MPI_TESTUTIL_H
#define KRILL_MPI_TESTUTIL_H

#include "krill/mpi.h"
#include "testutil.h"

/* MPI_Init and a one-thread CPU context on MPI_COMM_WORLD (exits 1 when either fails); with
 * KRILL_TEST_MPI_DEVICE=gpu a CUDA context, one GPU per rank (KRILL_DEVICE_ID_LOCAL_RANK),
 * and exit code 77 (skipped) on every rank where a rank sees no GPU. */
krill_ctx *mtu_init(int *argc, char ***argv);
/* The summary (rank 0) of every rank's checks; destroys ctx, MPI_Finalize; the exit code. */
int mtu_finish(const char *name, krill_ctx **ctx);

typedef enum mtu_partition {
    MTU_BALANCED = 0,        /* krill's default: balanced by nonzeros */
    MTU_ALL_ON_FIRST,        /* rank 0 owns every row: the others have none, no halo */
    MTU_ALL_ON_LAST,         /* the last rank owns every row */
    MTU_EMPTY_SECOND,        /* even rows, but rank 1 (rank 0 on 2 ranks: 0) has none */
    MTU_PARTITIONS
} mtu_partition;
const char *mtu_partition_name(mtu_partition p);
/* Offsets (size + 1) for p over n rows; NULL for MTU_BALANCED. `off` has size + 1 room. */
const int64_t *mtu_offsets(mtu_partition p, int64_t n, int size, int64_t *off);

/* x_i = 1 + sin(0.37 i) + (i % 7) / 8 for i < n: no zeros, distinct values. */
void mtu_vector(int64_t n, double *x);

/* This rank's even share of g's rows (rows n rank / size to n (rank + 1) / size), a new CSR
 * with global columns: what krill_dist_mat_create takes. */
krill_csr *mtu_even_rows(const krill_csr *g, int rank, int size);

/* A system A x = b for the solver tests: b = mtu_vector, x = 0. */
typedef struct mtu_system {
    krill_mat *a;
    krill_vec *b, *x;
    int64_t n_local, n_global;
    int dist;             /* made by mtu_system_dist */
} mtu_system;
/* On a context without a communicator: A = g in csr. */
void mtu_system_serial(krill_ctx *serial, const krill_csr *g, mtu_system *s);
/* On the communicator's context: g (given on rank 0) scattered with partition p, csr blocks.
 * Collective. */
void mtu_system_dist(krill_ctx *ctx, const krill_csr *g, mtu_partition p, mtu_system *s);
/* krill_solve with the named preconditioner; x (n_global doubles) on every rank: gathered
 * to rank 0 and broadcast for a distributed system. Collective for a distributed one. */
void mtu_system_solve(mtu_system *s, const char *pc, const krill_solver_opts *o, double *x,
                      krill_solve_info *info);
void mtu_system_free(mtu_system *s);

/* y = 1.5 A x - 0.5 y0 through the distributed matrix a (x = mtu_vector, y0 fixed, both in
 * the user's order: scattered, then y gathered back), checked on rank 0 against the serial
 * reference of g (rank 0's whole matrix; read on rank 0 only, may be NULL elsewhere) within
 * tol (max relative difference); every gathered entry must be written. Collective. */
void mtu_check_spmv(krill_ctx *ctx, const krill_mat *a, const krill_csr *g, const char *what,
                    double tol);

/* Rank 0's value, on every rank (a broadcast). */
int mtu_bcast_int(int value);

#endif
