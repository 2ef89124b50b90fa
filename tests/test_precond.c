/* Preconditioners: the registry and names, "none" and "jacobi" applied against plain loops,
 * a zero (or missing) diagonal refused with the row named, update after new matrix values
 * (and after a failed update), argument checks, allocation faults. */
#include "core/core_impl.h"
#include "solver_util.h"

/* 4 x 4 with a_ii = 2, 4, 8, 16 and off-diagonal entries; `zero_row` >= 0 gets no diagonal
 * entry (structurally absent), `explicit_zero` >= 0 an explicit 0. */
static krill_csr *small_matrix(int zero_row, int explicit_zero)
{
    int32_t rows[16], cols[16];
    double vals[16];
    int nnz = 0;
    krill_csr *csr = NULL;
    for (int i = 0; i < 4; i++) {
        if (i != zero_row) {
            rows[nnz] = cols[nnz] = i;
            vals[nnz++] = i == explicit_zero ? 0.0 : (double)(2 << i);
        }
        rows[nnz] = i;
        cols[nnz] = (i + 1) % 4;
        vals[nnz++] = -1.0;
    }
    CHECK_OK(krill_csr_from_triplets(4, 4, nnz, rows, cols, vals, &csr));
    return csr;
}

static void test_apply(krill_ctx *ctx)
{
    krill_csr *csr = small_matrix(-1, -1);
    krill_mat *a = NULL;
    krill_pc *pc = NULL;
    krill_vec *r = NULL, *z = NULL;
    double rh[4] = {1.0, -3.0, 0.5, 7.0}, zh[4];
    CHECK_OK(krill_mat_create(ctx, csr, NULL, &a));
    CHECK_OK(krill_vec_create(ctx, 4, &r));
    CHECK_OK(krill_vec_create(ctx, 4, &z));
    CHECK_OK(krill_vec_upload(r, rh));

    CHECK_OK(krill_pc_create(a, "jacobi", &pc));
    CHECK(strcmp(krill_pc_name(pc), "jacobi") == 0);
    CHECK_OK(krill_pc_apply(pc, r, z));
    CHECK_OK(krill_vec_download(z, zh));
    for (int i = 0; i < 4; i++) CHECK_CLOSE(zh[i], rh[i] / (double)(2 << i), 1e-15);

    /* new values, same pattern: the diagonal doubles after update */
    {
        double *v = malloc((size_t)csr->nnz * sizeof(double));
        for (int64_t k = 0; k < csr->nnz; k++) v[k] = 2.0 * csr->val[k];
        CHECK_OK(krill_mat_update_values(a, v));
        CHECK_OK(krill_pc_update_values(pc));
        CHECK_OK(krill_pc_apply(pc, r, z));
        CHECK_OK(krill_vec_download(z, zh));
        for (int i = 0; i < 4; i++) CHECK_CLOSE(zh[i], rh[i] / (2.0 * (2 << i)), 1e-15);
        /* a zero diagonal in new values: the update fails, apply refuses until fixed */
        for (int64_t k = 0; k < csr->nnz; k++)
            if (csr->col[k] == 2 && k >= csr->row_ptr[2] && k < csr->row_ptr[3]) v[k] = 0.0;
        CHECK_OK(krill_mat_update_values(a, v));
        CHECK_STATUS(krill_pc_update_values(pc), KRILL_ERR_NUMERIC);
        CHECK(strstr(krill_last_error(), "row 2 (0-based)") != NULL);
        CHECK_STATUS(krill_pc_apply(pc, r, z), KRILL_ERR_NUMERIC);
        CHECK_OK(krill_mat_update_values(a, csr->val));
        CHECK_OK(krill_pc_update_values(pc));
        CHECK_OK(krill_pc_apply(pc, r, z));
        CHECK_OK(krill_vec_download(z, zh));
        CHECK_CLOSE(zh[2], rh[2] / 8.0, 1e-15);
        free(v);
    }
    krill_pc_destroy(&pc);
    CHECK(pc == NULL);
    krill_pc_destroy(&pc);   /* NULL-safe */

    CHECK_OK(krill_pc_create(a, "none", &pc));
    CHECK_OK(krill_pc_apply(pc, r, z));
    CHECK_OK(krill_vec_download(z, zh));
    for (int i = 0; i < 4; i++) CHECK(zh[i] == rh[i]);
    krill_pc_destroy(&pc);
    CHECK_OK(krill_pc_create(a, NULL, &pc));   /* NULL name: "none" */
    CHECK(strcmp(krill_pc_name(pc), "none") == 0);
    krill_pc_destroy(&pc);

    krill_vec_destroy(&r);
    krill_vec_destroy(&z);
    krill_mat_destroy(&a);
    krill_csr_destroy(&csr);
}

static void test_errors(krill_ctx *ctx)
{
    krill_csr *csr = small_matrix(-1, -1);
    krill_csr *missing = small_matrix(3, -1), *zero = small_matrix(-1, 1);
    krill_csr *rect_csr = NULL;
    krill_mat *a = NULL, *a_missing = NULL, *a_zero = NULL, *rect = NULL;
    krill_pc *pc = NULL;
    krill_vec *r = NULL, *z = NULL, *short_vec = NULL;
    int32_t rr[2] = {0, 1}, rc[2] = {0, 1};
    double rv[2] = {1, 1};
    const char *const *names = krill_pc_names();
    {   /* the registry, in order, NULL-terminated */
        static const char *const expect[] = { "none", "jacobi", "bjacobi", "ilu0", "ic0" };
        int k = 0;
        for (; names && names[k] && k < 5; k++) CHECK(strcmp(names[k], expect[k]) == 0);
        CHECK(k == 5 && names[k] == NULL);
    }
    CHECK_OK(krill_mat_create(ctx, csr, NULL, &a));
    CHECK_OK(krill_mat_create(ctx, missing, NULL, &a_missing));
    CHECK_OK(krill_mat_create(ctx, zero, NULL, &a_zero));
    CHECK_OK(krill_csr_from_triplets(3, 2, 2, rr, rc, rv, &rect_csr));
    CHECK_OK(krill_mat_create(ctx, rect_csr, NULL, &rect));

    CHECK_STATUS(krill_pc_create(a_missing, "jacobi", &pc), KRILL_ERR_NUMERIC);
    CHECK(strstr(krill_last_error(), "row 3 (0-based)") != NULL);
    CHECK(pc == NULL);
    CHECK_STATUS(krill_pc_create(a_zero, "jacobi", &pc), KRILL_ERR_NUMERIC);
    CHECK(strstr(krill_last_error(), "row 1 (0-based)") != NULL);
    /* a subnormal a_ii is nonzero and finite but 1 / a_ii overflows to Inf: refused too */
    {
        krill_csr *tiny = small_matrix(-1, -1);
        krill_mat *a_tiny = NULL;
        CHECK(tiny->col[tiny->row_ptr[2]] == 2);
        tiny->val[tiny->row_ptr[2]] = 1e-310;
        CHECK_OK(krill_mat_create(ctx, tiny, NULL, &a_tiny));
        CHECK_STATUS(krill_pc_create(a_tiny, "jacobi", &pc), KRILL_ERR_NUMERIC);
        CHECK(strstr(krill_last_error(), "row 2 (0-based)") != NULL);
        CHECK(pc == NULL);
        krill_mat_destroy(&a_tiny);
        krill_csr_destroy(&tiny);
    }
    CHECK_STATUS(krill_pc_create(a, "ilu7", &pc), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "ilu7") && strstr(krill_last_error(), "none, jacobi"));
    CHECK_STATUS(krill_pc_create(a, "jacobi:2", &pc), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "no parameter") != NULL);
    CHECK_STATUS(krill_pc_create(rect, "jacobi", &pc), KRILL_ERR_UNSUPPORTED);
    CHECK(strstr(krill_last_error(), "3 x 2") != NULL);
    CHECK_STATUS(krill_pc_create(NULL, "jacobi", &pc), KRILL_ERR_ARG);
    CHECK_STATUS(krill_pc_create(a, "jacobi", NULL), KRILL_ERR_ARG);

    CHECK_OK(krill_pc_create(a, "jacobi", &pc));
    CHECK_OK(krill_vec_create(ctx, 4, &r));
    CHECK_OK(krill_vec_create(ctx, 4, &z));
    CHECK_OK(krill_vec_create(ctx, 3, &short_vec));
    CHECK_STATUS(krill_pc_apply(pc, r, short_vec), KRILL_ERR_ARG);
    CHECK_STATUS(krill_pc_apply(pc, r, r), KRILL_ERR_ARG);
    CHECK(strstr(krill_last_error(), "distinct") != NULL);
    CHECK_STATUS(krill_pc_apply(NULL, r, z), KRILL_ERR_ARG);
    CHECK_STATUS(krill_pc_update_values(NULL), KRILL_ERR_ARG);

    krill_pc_destroy(&pc);
    krill_vec_destroy(&r);
    krill_vec_destroy(&z);
    krill_vec_destroy(&short_vec);
    krill_mat_destroy(&a);
    krill_mat_destroy(&a_missing);
    krill_mat_destroy(&a_zero);
    krill_mat_destroy(&rect);
    krill_csr_destroy(&csr);
    krill_csr_destroy(&missing);
    krill_csr_destroy(&zero);
    krill_csr_destroy(&rect_csr);
}

/* Jacobi on a larger matrix against z_i = r_i / a_ii computed here, and the solvers with a
 * zero-diagonal matrix: the preconditioner refuses it before any solve. */
static void test_generated(krill_ctx *ctx)
{
    su_system s;
    krill_pc *pc = NULL;
    krill_vec *z = NULL;
    double *zh;
    su_system_make(&s, ctx, su_gen("elasticity3d:4,2,2"), NULL, 41);
    zh = malloc((size_t)s.n * sizeof(double));
    CHECK_OK(krill_pc_create(s.a, "jacobi", &pc));
    CHECK_OK(krill_vec_create(ctx, s.n, &z));
    CHECK_OK(krill_pc_apply(pc, s.b, z));
    CHECK_OK(krill_vec_download(z, zh));
    for (int64_t i = 0; i < s.n; i++) {
        double d = 0.0;
        for (int64_t k = s.csr->row_ptr[i]; k < s.csr->row_ptr[i + 1]; k++)
            if (s.csr->col[k] == i) d = s.csr->val[k];
        CHECK_CLOSE(zh[i], s.b_host[i] / d, 1e-14);
    }
    free(zh);
    krill_vec_destroy(&z);
    krill_pc_destroy(&pc);
    su_system_free(&s);
}

static void test_faults(krill_ctx *ctx)
{
    krill_csr *csr = su_gen("poisson3d:5");
    krill_mat *a = NULL;
    CHECK_OK(krill_mat_create(ctx, csr, NULL, &a));
    su_check_pc_faults(a, "jacobi", 2);
    krill_mat_destroy(&a);
    krill_csr_destroy(&csr);
}

int main(void)
{
    krill_ctx *ctx = tu_cpu_ctx(2);
    test_apply(ctx);
    test_errors(ctx);
    test_generated(ctx);
    test_faults(ctx);
    krill_ctx_destroy(&ctx);
    return tu_finish("test_precond");
}
