/* dist/comm.c - krill_comm over MPI: the table core/ calls for a context's reductions and
 * for agreeing on failures (core_impl.h, krill_comm_ops).
 *
 * MPI errors: krill's communicators keep MPI's default handler, MPI_ERRORS_ARE_FATAL (a
 * communication failure ends the job, as in PETSc), so the MPI calls here are not checked;
 * krill's own failures go through agree. */
#include <stdio.h>
#include <string.h>

#include "dist/dist_impl.h"

/* The longest message one rank's failure carries to the others. */
#define AGREE_MSG_BYTES 512

static krill_status comm_new(MPI_Comm mc, int owns, krill_comm **out);

/* impl: the MPI_Comm; in a duplicate (owned) a flag says to free it; the request of the
 * nonblocking allreduce in flight (MPI_REQUEST_NULL when none) */
typedef struct comm_impl {
    MPI_Comm comm;
    int owns;
    MPI_Request pending;
} comm_impl;

static MPI_Comm mpi_of(const krill_comm *c) { return ((const comm_impl *)c->impl)->comm; }

MPI_Comm krill_dist_comm(const krill_ctx *ctx) { return mpi_of(ctx->comm); }

static krill_status comm_dup(const krill_comm *c, krill_comm **copy)
{
    krill_status st = KRILL_OK;
    MPI_Comm mc = MPI_COMM_NULL;
    MPI_Comm_dup(mpi_of(c), &mc);
    st = comm_new(mc, 1, copy);
    if (st != KRILL_OK) MPI_Comm_free(&mc);
    return st;
}

static void comm_free(krill_comm *c)
{
    comm_impl *impl = c->impl;
    if (impl && impl->owns) MPI_Comm_free(&impl->comm);
    krill_free(impl);
    krill_free(c);
}

/* One MPI_Allreduce in place: count doubles, log2(size) latency steps. */
static krill_status comm_allreduce(const krill_comm *c, double *buf, int count,
                                   krill_reduce_op op)
{
    if (count <= 0) return KRILL_OK;
    MPI_Allreduce(MPI_IN_PLACE, buf, count, MPI_DOUBLE, op == KRILL_REDUCE_MAX ? MPI_MAX : MPI_SUM,
                  mpi_of(c));
    return KRILL_OK;
}

static krill_status comm_allreduce_i64(const krill_comm *c, int64_t *buf, int count,
                                       krill_reduce_op op)
{
    if (count <= 0) return KRILL_OK;
    MPI_Allreduce(MPI_IN_PLACE, buf, count, MPI_INT64_T, op == KRILL_REDUCE_MAX ? MPI_MAX : MPI_SUM,
                  mpi_of(c));
    return KRILL_OK;
}

/* MPI_Iallreduce in place; the wait completes it (MPI progresses it inside MPI calls made
 * meanwhile, e.g. the halo exchange's, and inside the wait). One is in flight at a time: a
 * start while one is (a pipelined solve inside a shell preconditioner of another, on the
 * same context) completes that one first, so its later wait returns at once. Every rank runs
 * the same sequence, so every rank completes the same reduction. */
static krill_status comm_iallreduce_start(krill_comm *c, double *buf, int count,
                                          krill_reduce_op op)
{
    comm_impl *impl = c->impl;
    if (impl->pending != MPI_REQUEST_NULL) MPI_Wait(&impl->pending, MPI_STATUS_IGNORE);
    if (count <= 0) return KRILL_OK;
    MPI_Iallreduce(MPI_IN_PLACE, buf, count, MPI_DOUBLE,
                   op == KRILL_REDUCE_MAX ? MPI_MAX : MPI_SUM, impl->comm, &impl->pending);
    return KRILL_OK;
}

static krill_status comm_iallreduce_wait(krill_comm *c)
{
    comm_impl *impl = c->impl;
    if (impl->pending != MPI_REQUEST_NULL) MPI_Wait(&impl->pending, MPI_STATUS_IGNORE);
    return KRILL_OK;
}

/* One MPI_Allgather of bytes from each rank (bytes < 2^31). */
static krill_status comm_allgather(const krill_comm *c, const void *mine, size_t bytes, void *all)
{
    MPI_Allgather(mine, (int)bytes, MPI_BYTE, all, (int)bytes, MPI_BYTE, mpi_of(c));
    return KRILL_OK;
}

/* The lowest failing rank (an MPI_MIN of rank-or-size), then its status and message by one
 * broadcast: 4 bytes per rank when all went well, AGREE_MSG_BYTES more when one failed. */
static krill_status agree_on(MPI_Comm mc, krill_status st)
{
    int rank = 0, size = 1, mine, first;
    struct {
        int status;
        char msg[AGREE_MSG_BYTES];
    } m;
    MPI_Comm_rank(mc, &rank);
    MPI_Comm_size(mc, &size);
    mine = st != KRILL_OK ? rank : size;
    MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, mc);
    if (first == size) return KRILL_OK;
    memset(&m, 0, sizeof m);
    if (rank == first) {
        m.status = (int)st;
        snprintf(m.msg, sizeof m.msg, "%s", krill_last_error());
    }
    MPI_Bcast(&m, (int)sizeof m, MPI_BYTE, first, mc);
    if (rank == first) return st;   /* its own message stays */
    return krill_error((krill_status)m.status, "rank %d of %d: %s", first, size, m.msg);
}

static krill_status comm_agree(const krill_comm *c, krill_status st)
{
    return agree_on(mpi_of(c), st);
}

/* The rank's number on its node: MPI_Comm_split_type(MPI_COMM_TYPE_SHARED), kept only for
 * its rank (collective; once per context). */
static krill_status comm_local_rank(const krill_comm *c, int *local)
{
    MPI_Comm node = MPI_COMM_NULL;
    MPI_Comm_split_type(mpi_of(c), MPI_COMM_TYPE_SHARED, c->rank, MPI_INFO_NULL, &node);
    MPI_Comm_rank(node, local);
    MPI_Comm_free(&node);
    return KRILL_OK;
}

static const krill_comm_ops mpi_comm_ops = {
    .dup = comm_dup,
    .destroy = comm_free,
    .allreduce = comm_allreduce,
    .allreduce_i64 = comm_allreduce_i64,
    .iallreduce_start = comm_iallreduce_start,
    .iallreduce_wait = comm_iallreduce_wait,
    .allgather = comm_allgather,
    .agree = comm_agree,
    .local_rank = comm_local_rank,
};

static krill_status comm_new(MPI_Comm mc, int owns, krill_comm **out)
{
    krill_status st = KRILL_OK;
    krill_comm *c = NULL;
    comm_impl *impl = NULL;
    KRILL_CALLOC(c, 1);
    KRILL_CALLOC(impl, 1);
    impl->comm = mc;
    impl->owns = owns;
    impl->pending = MPI_REQUEST_NULL;
    c->ops = &mpi_comm_ops;
    c->impl = impl;
    impl = NULL;
    MPI_Comm_rank(mc, &c->rank);
    MPI_Comm_size(mc, &c->size);
    *out = c;
    c = NULL;
cleanup:
    krill_free(impl);
    krill_free(c);
    return st;
}

krill_status krill_comm_create(MPI_Comm comm, krill_comm **handle)
{
    krill_status st = KRILL_OK;
    int initialized = 0;
    KRILL_REQUIRE(handle != NULL, "krill_comm_create: handle is NULL");
    *handle = NULL;
    MPI_Initialized(&initialized);
    KRILL_REQUIRE(initialized, "krill_comm_create: MPI is not initialized (call MPI_Init first)");
    KRILL_REQUIRE(comm != MPI_COMM_NULL, "krill_comm_create: comm is MPI_COMM_NULL");
    st = comm_new(comm, 0, handle);
cleanup:
    return st;
}

void krill_comm_destroy(krill_comm **handle)
{
    if (!handle || !*handle) return;
    comm_free(*handle);
    *handle = NULL;
}

krill_status krill_mpi_ctx_create(MPI_Comm comm, const krill_ctx_opts *opts, krill_ctx **ctx)
{
    krill_status st = KRILL_OK;
    krill_comm *handle = NULL;
    krill_ctx_opts o = KRILL_CTX_OPTS_INIT;
    int initialized = 0;
    KRILL_REQUIRE(ctx != NULL, "krill_mpi_ctx_create: ctx is NULL");
    *ctx = NULL;
    if (opts) o = *opts;
    MPI_Initialized(&initialized);
    KRILL_REQUIRE(initialized && comm != MPI_COMM_NULL, "krill_mpi_ctx_create: MPI is not "
                  "initialized or comm is MPI_COMM_NULL");
    /* the ranks agree on the handles before krill_ctx_create agrees through them */
    KRILL_TRY(agree_on(comm, krill_comm_create(comm, &handle)));
    o.comm = handle;
    st = krill_ctx_create(&o, ctx);
cleanup:
    krill_comm_destroy(&handle);
    return st;
}
