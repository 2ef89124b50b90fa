/* tests/mpi_testutil.h - what the MPI tests (label mpi) share: start and finish (failures
 * summed over the ranks, one summary on rank 0, the same exit code everywhere), row
 * partitions with special shapes, and a deterministic global vector. */
#ifndef KRILL_MPI_TESTUTIL_H
#define KRILL_MPI_TESTUTIL_H

#include "krill/mpi.h"
#include "testutil.h"

/* MPI_Init and a one-thread CPU context on MPI_COMM_WORLD (exits 1 when either fails). */
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

/* Rank 0's value, on every rank (a broadcast). */
int mtu_bcast_int(int value);

#endif
