/* apps/solve_ranks.c - the steps of `krill solve` that differ when mpirun started it
 * (cli_impl.h, cli_ranks; doc/mpi.md). */
#include <stdlib.h>

#include "cli_impl.h"
#ifdef KRILL_HAVE_MPI
#include "krill/mpi.h"
#endif

void cli_ranks_start(cli_ranks *m)
{
    m->on = 0;
    m->rank = 0;
    m->size = 1;
#ifdef KRILL_HAVE_MPI
    const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_RANK" };
    for (size_t k = 0; k < sizeof vars / sizeof *vars; k++)
        if (getenv(vars[k])) m->on = 1;
    if (m->on) {
        MPI_Init(NULL, NULL);
        MPI_Comm_rank(MPI_COMM_WORLD, &m->rank);
        MPI_Comm_size(MPI_COMM_WORLD, &m->size);
    }
#endif
}

void cli_ranks_end(const cli_ranks *m)
{
#ifdef KRILL_HAVE_MPI
    if (m->on) MPI_Finalize();
#else
    (void)m;
#endif
}

/* Rank 0's exit code and the problem's size and solver, to every rank. */
int cli_ranks_share(const cli_ranks *m, int rc, cli_solve_report *r)
{
#ifdef KRILL_HAVE_MPI
    if (m->on) {
        int64_t v[5] = { rc, r->n, (int64_t)r->opts.solver, (int64_t)r->opts.ortho,
                         r->per_rank_read };
        MPI_Bcast(v, 5, MPI_INT64_T, 0, MPI_COMM_WORLD);
        rc = (int)v[0];
        r->n = v[1];
        r->opts.solver = (krill_solver_type)v[2];
        r->opts.ortho = (krill_ortho)v[3];
        r->per_rank_read = (int)v[4];
    }
#else
    (void)m;
    (void)r;
#endif
    return rc;
}

krill_status cli_ranks_ctx(const cli_ranks *m, const krill_ctx_opts *o, krill_ctx **ctx)
{
#ifdef KRILL_HAVE_MPI
    if (m->on) return krill_mpi_ctx_create(MPI_COMM_WORLD, o, ctx);
#else
    (void)m;
#endif
    return krill_ctx_create(o, ctx);
}

/* The matrix (distributed: rank 0's csr scattered, or every rank's own rows) and the rows
 * of this rank. */
krill_status cli_ranks_mat(const cli_ranks *m, krill_ctx *ctx, const krill_csr *csr,
                           int own_rows, int metis, const char *format, krill_mat **mat,
                           int64_t *rows)
{
    krill_status st = KRILL_OK;
#ifdef KRILL_HAVE_MPI
    krill_dist_layout l;
    if (m->on) {
        st = own_rows ? krill_dist_mat_create(ctx, csr, format, mat)
             : metis  ? krill_dist_mat_scatter_metis(ctx, csr, format, mat)
                      : krill_dist_mat_scatter(ctx, csr, NULL, format, mat);
        if (st == KRILL_OK) st = krill_dist_mat_layout(*mat, &l);
        *rows = l.n_local;
        return st;
    }
#else
    (void)m;
#endif
    (void)own_rows;
    (void)metis;
    st = krill_mat_create(ctx, csr, format, mat);
    *rows = csr->n_rows;
    return st;
}

int cli_ranks_have_metis(void)
{
#ifdef KRILL_HAVE_MPI
    return krill_dist_have_metis();
#else
    return 0;
#endif
}

/* This rank's rows of a binary A, b = A*1 from them (y_i = 1 * (the sum of row i's values
 * in order from 0), as krill_csr_spmv_ref adds with x = 1), and the bandwidth (MPI_Exscan of
 * the row counts gives the first row; MPI_Reduce MAX to rank 0). */
krill_status cli_ranks_read(const cli_ranks *m, krill_ctx *ctx, const char *path, int make_b,
                            krill_csr **csr, double **b, int32_t *bandwidth)
{
    krill_status st = KRILL_OK;
#ifdef KRILL_HAVE_MPI
    krill_csr *a = NULL;
    int64_t n_local = 0, first = 0;
    int32_t band = 0, local_band = 0;
    int ok = 1, all_ok = 1;
    *b = NULL;
    st = krill_dist_read_rows(ctx, path, NULL, &a);   /* collective; agreed on every rank */
    if (st == KRILL_OK) {
        n_local = a->n_rows;
        MPI_Exscan(&n_local, &first, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
        if (m->rank == 0) first = 0;   /* MPI_Exscan leaves rank 0's undefined */
        for (int32_t i = 0; i < a->n_rows; i++)
            for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++) {
                const int64_t d = first + i - a->col[p];
                if ((d < 0 ? -d : d) > local_band) local_band = (int32_t)(d < 0 ? -d : d);
            }
        MPI_Reduce(&local_band, &band, 1, MPI_INT32_T, MPI_MAX, 0, MPI_COMM_WORLD);
        if (m->rank == 0) *bandwidth = band;
        if (make_b) ok = (*b = malloc((size_t)(n_local > 0 ? n_local : 1) * sizeof **b)) != NULL;
        for (int32_t i = 0; make_b && ok && i < a->n_rows; i++) {
            double s = 0.0;
            for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++) s += a->val[p] * 1.0;
            (*b)[i] = 1.0 * s;
        }
        MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    }
    if (st == KRILL_OK && !all_ok) {
        st = krill_error(KRILL_ERR_ALLOC, "out of memory for b on some rank (%lld doubles here)",
                         (long long)n_local);
        krill_csr_destroy(&a);
        free(*b);
        *b = NULL;
    }
    *csr = a;
#else
    (void)m;
    (void)ctx;
    (void)make_b;
    (void)b;
    (void)bandwidth;
    st = krill_error(KRILL_ERR_UNSUPPORTED, "%s: reading rows per rank needs MPI", path);
    *csr = NULL;
#endif
    return st;
}

/* host (rank 0) -> v, or v -> host (rank 0) */
krill_status cli_ranks_vec(const cli_ranks *m, const krill_mat *mat, double *host,
                           krill_vec *v, int gather)
{
#ifdef KRILL_HAVE_MPI
    if (m->on)
        return gather ? krill_dist_vec_gather(mat, v, host) : krill_dist_vec_scatter(mat, host, v);
#else
    (void)m;
#endif
    (void)mat;
    return gather ? krill_vec_download(v, host) : krill_vec_upload(v, host);
}

/* Every rank's load, on rank 0 (load: size entries there, NULL elsewhere). */
void cli_ranks_load(const cli_ranks *m, const krill_mat *mat, cli_rank_load *load)
{
#ifdef KRILL_HAVE_MPI
    krill_dist_layout l;
    cli_rank_load mine;
    if (!m->on || krill_dist_mat_layout(mat, &l) != KRILL_OK) return;
    mine = (cli_rank_load){ l.n_local, l.nnz_diag, l.nnz_off, l.halo, l.sent, l.recv_ranks,
                            l.send_ranks, l.permuted, l.halo_path,
                            {l.halo_timed_ms[0], l.halo_timed_ms[1]} };
    MPI_Gather(&mine, (int)sizeof mine, MPI_BYTE, load, (int)sizeof mine, MPI_BYTE, 0,
               MPI_COMM_WORLD);
#else
    (void)m;
    (void)mat;
    (void)load;
#endif
}
