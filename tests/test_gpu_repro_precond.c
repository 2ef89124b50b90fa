/* The preconditioners in reproducible mode on the GPU against the CPU (apply_repro of
 * precond/; doc/reproducible.md). For each case, built from the same matrix on a GPU and on
 * a 3-thread CPU context, both in reproducible mode:
 *   - what the preconditioner holds is the same bits on both devices: jacobi's inverse
 *     diagonal, bjacobi's inverse blocks (each read by B plain applies to the vectors that are
 *     1 on one position of every block: an entry of z is then one product Binv[g][j] * 1 plus
 *     zeros, exact), the ILU(0) / IC(0) factors (krill_pc_ilu_factors, downloaded);
 *   - z = M^{-1} r has the same bits on both devices for right-hand sides (rand - 0.5)
 *     exp(4 randn) (test_repro_precond checks the CPU's bits against a correctly rounded
 *     reference, so the GPU's are those too);
 *   - both again after new values (0.75 A + 0.25 diag(A)) through krill_mat_update_values and
 *     krill_pc_update_values;
 *   - plain mode on the GPU differs from those bits somewhere (bjacobi, ilu0, ic0: the test
 *     proves something) and equals them for jacobi (one rounding either way).
 * And the limit of a GPU thread's exact row sum: ilu0 of a matrix with a row of more than
 * KRILL_OZ_ROW_MAX_N terms is refused with KRILL_ERR_UNSUPPORTED naming the limit, at build
 * in reproducible mode, and at the apply when the mode is set after a plain build; plain mode
 * still works. Exits 77 without a GPU. */
#include <stdlib.h>
#include <string.h>

#include "core/core_impl.h"
#include "precond/ilu_impl.h"
#include "solver_util.h"

#define NVEC 3         /* right-hand sides per case */
#define PHI 4.0        /* their exponent spread */

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

/* A matrix and a preconditioner on one context. */
typedef struct side {
    krill_ctx *ctx;
    krill_mat *mat;
    krill_pc *pc;
} side;

static void side_make(side *s, krill_ctx *ctx, const krill_csr *a, const char *name)
{
    s->ctx = ctx;
    s->mat = NULL;
    s->pc = NULL;
    CHECK_OK(krill_mat_create(ctx, a, "csr", &s->mat));
    CHECK_OK(krill_pc_create(s->mat, name, &s->pc));
}

static void side_free(side *s)
{
    krill_pc_destroy(&s->pc);
    krill_mat_destroy(&s->mat);
}

/* z = M^{-1} r for host vectors; returns the status of the apply. */
static krill_status side_apply(const side *s, int64_t n, const double *r, double *z)
{
    krill_vec *rv = NULL, *zv = NULL;
    krill_status st;
    CHECK_OK(krill_vec_create(s->ctx, n, &rv));
    CHECK_OK(krill_vec_create(s->ctx, n, &zv));
    CHECK_OK(krill_vec_upload(rv, r));
    st = krill_pc_apply(s->pc, rv, zv);
    if (st == KRILL_OK) CHECK_OK(krill_vec_download(zv, z));
    krill_vec_destroy(&rv);
    krill_vec_destroy(&zv);
    return st;
}

/* What the preconditioner holds, on the host (*len doubles; see the head). */
static double *pc_data(const side *s, const krill_csr *a, const char *name, int64_t *len)
{
    const int64_t n = a->n_rows;
    double *data = NULL;
    if (strcmp(name, "jacobi") == 0) {
        *len = n;
        data = xmalloc((size_t)n * sizeof *data);
        CHECK_OK(krill_mem_download(s->ctx, data, krill_pc_inverse_diagonal(s->pc),
                                    (size_t)n * sizeof *data));
    } else if (strncmp(name, "bjacobi:", 8) == 0) {
        const int b = atoi(name + 8);
        krill_repro_mode mode;
        int slices;
        double *e = xmalloc((size_t)n * sizeof *e), *z = xmalloc((size_t)n * sizeof *z);
        *len = n * b;
        data = xmalloc((size_t)*len * sizeof *data);
        mode = krill_ctx_repro(s->ctx, &slices);
        CHECK_OK(krill_ctx_set_repro(s->ctx, KRILL_REPRO_OFF, 0));
        for (int j = 0; j < b; j++) {
            for (int64_t g = 0; g < n; g++) e[g] = g % b == j ? 1.0 : 0.0;
            CHECK_OK(side_apply(s, n, e, z));
            for (int64_t g = 0; g < n; g++) data[g * b + j] = z[g];
        }
        CHECK_OK(krill_ctx_set_repro(s->ctx, mode, slices));
        free(e);
        free(z);
    } else {
        krill_ilu_factors f;
        *len = a->nnz;
        data = xmalloc((size_t)a->nnz * sizeof *data);
        CHECK_OK(krill_pc_ilu_factors(s->pc, &f));
        CHECK_OK(krill_mem_download(s->ctx, data, f.val, (size_t)a->nnz * sizeof *data));
    }
    return data;
}

static int64_t count_diff(const double *x, const double *y, int64_t n)
{
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) k += memcmp(x + i, y + i, sizeof *x) != 0;
    return k;
}

/* The preconditioners' data and NVEC applies on both sides: the same bits. `when` names
 * the stage in messages. Returns the GPU's plain-mode entries that differ from the CPU's
 * reproducible ones. */
static int64_t compare_sides(const side *cpu, const side *gpu, const krill_csr *a,
                             const char *label, const char *name, const char *when)
{
    const int64_t n = a->n_rows;
    int64_t len_c, len_g, diff, plain_diff = 0;
    double *dc = pc_data(cpu, a, name, &len_c), *dg = pc_data(gpu, a, name, &len_g);
    double *r = xmalloc((size_t)n * sizeof *r), *zc = xmalloc((size_t)n * sizeof *zc);
    double *zg = xmalloc((size_t)n * sizeof *zg);
    CHECK(len_c == len_g);
    diff = count_diff(dc, dg, len_c);
    if (diff)
        fprintf(stderr, "%s %s %s: %lld of %lld preconditioner values differ CPU vs GPU\n",
                label, name, when, (long long)diff, (long long)len_c);
    CHECK(diff == 0);
    for (int v = 0; v < NVEC; v++) {
        CHECK_OK(krill_gen_dot_vectors(n, PHI, 2000 + (uint64_t)v, r, NULL));
        CHECK_OK(side_apply(cpu, n, r, zc));
        CHECK_OK(side_apply(gpu, n, r, zg));
        diff = count_diff(zc, zg, n);
        if (diff)
            fprintf(stderr, "%s %s %s: vector %d: %lld of %lld entries differ CPU vs GPU\n",
                    label, name, when, v, (long long)diff, (long long)n);
        CHECK(diff == 0);
        CHECK_OK(krill_ctx_set_repro(gpu->ctx, KRILL_REPRO_OFF, 0));
        CHECK_OK(side_apply(gpu, n, r, zg));
        CHECK_OK(krill_ctx_set_repro(gpu->ctx, KRILL_REPRO_OZAKI, 0));
        plain_diff += count_diff(zc, zg, n);
    }
    free(dc);
    free(dg);
    free(r);
    free(zc);
    free(zg);
    return plain_diff;
}

/* 0.75 A + 0.25 diag(A) (the same pattern; SPD, symmetric, dominant when A is) */
static double *new_values(const krill_csr *a)
{
    double *u = xmalloc((size_t)a->nnz * sizeof *u);
    for (int32_t i = 0; i < a->n_rows; i++)
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            u[p] = a->col[p] == i ? a->val[p] : 0.75 * a->val[p];
    return u;
}

static void run_case(krill_ctx *cpu_ctx, krill_ctx *gpu_ctx, const char *label,
                     const krill_csr *a, const char *name)
{
    side cpu, gpu;
    double *u = new_values(a);
    int64_t plain_diff;
    side_make(&cpu, cpu_ctx, a, name);
    side_make(&gpu, gpu_ctx, a, name);
    plain_diff = compare_sides(&cpu, &gpu, a, label, name, "at build");
    CHECK_OK(krill_mat_update_values(cpu.mat, u));
    CHECK_OK(krill_mat_update_values(gpu.mat, u));
    CHECK_OK(krill_pc_update_values(cpu.pc));
    CHECK_OK(krill_pc_update_values(gpu.pc));
    {
        krill_csr updated = *a;   /* the pattern of a with the new values */
        updated.val = u;
        plain_diff += compare_sides(&cpu, &gpu, &updated, label, name, "after update");
    }
    printf("  %-14s %-10s GPU plain mode: %lld of %lld entries differ from the reproducible "
           "bits\n", label, name, (long long)plain_diff, (long long)(2 * NVEC * a->n_rows));
    if (strcmp(name, "jacobi") == 0)
        CHECK(plain_diff == 0);
    else
        CHECK(plain_diff > 0);
    side_free(&cpu);
    side_free(&gpu);
    free(u);
}

/* A row of KRILL_OZ_ROW_MAX_N + 16 terms: refused in reproducible mode, fine in plain. */
static void test_long_row(krill_ctx *gpu_ctx)
{
    const int32_t n = (int32_t)KRILL_OZ_ROW_MAX_N + 16;
    krill_csr *a = tu_arrow(n);
    krill_mat *mat = NULL;
    krill_pc *pc = NULL;
    side s;
    double *r = xmalloc((size_t)n * sizeof *r), *z = xmalloc((size_t)n * sizeof *z);
    CHECK_OK(krill_gen_dot_vectors(n, PHI, 7, r, NULL));
    CHECK_OK(krill_mat_create(gpu_ctx, a, "csr", &mat));
    CHECK_STATUS(krill_pc_create(mat, "ilu0", &pc), KRILL_ERR_UNSUPPORTED);
    CHECK(pc == NULL);
    CHECK(strstr(krill_last_error(), "16384") != NULL);
    CHECK(strstr(krill_last_error(), "16400 terms") != NULL);
    printf("  long row at build: %s\n", krill_last_error());
    CHECK_OK(krill_ctx_set_repro(gpu_ctx, KRILL_REPRO_OFF, 0));
    CHECK_OK(krill_pc_create(mat, "ilu0", &pc));
    s.ctx = gpu_ctx;
    s.mat = mat;
    s.pc = pc;
    CHECK_OK(side_apply(&s, n, r, z));
    CHECK_OK(krill_ctx_set_repro(gpu_ctx, KRILL_REPRO_OZAKI, 0));
    CHECK_STATUS(side_apply(&s, n, r, z), KRILL_ERR_UNSUPPORTED);
    CHECK(strstr(krill_last_error(), "16384") != NULL);
    krill_pc_destroy(&pc);
    krill_mat_destroy(&mat);
    krill_csr_destroy(&a);
    free(r);
    free(z);
}

int main(void)
{
    krill_ctx *gpu_ctx = tu_gpu_ctx_or_skip(), *cpu_ctx = tu_cpu_ctx(3);
    krill_csr *poisson = su_gen("poisson3d:28"), *big = su_gen("poisson3d:64");
    krill_csr *small = su_gen("poisson3d:8"), *elast = su_gen("elasticity3d:8,6,6");
    krill_csr *convdiff = su_gen("convdiff3d:28,2");
    CHECK_OK(krill_ctx_set_repro(cpu_ctx, KRILL_REPRO_OZAKI, 0));
    CHECK_OK(krill_ctx_set_repro(gpu_ctx, KRILL_REPRO_OZAKI, 0));
    printf("generated matrices:\n");
    run_case(cpu_ctx, gpu_ctx, "poisson3d:28", poisson, "jacobi");
    run_case(cpu_ctx, gpu_ctx, "poisson3d:28", poisson, "ic0");
    run_case(cpu_ctx, gpu_ctx, "poisson3d:28", poisson, "ilu0");
    run_case(cpu_ctx, gpu_ctx, "poisson3d:64", big, "ic0");
    run_case(cpu_ctx, gpu_ctx, "poisson3d:8", small, "bjacobi:4");
    run_case(cpu_ctx, gpu_ctx, "elasticity3d", elast, "bjacobi:3");
    run_case(cpu_ctx, gpu_ctx, "elasticity3d", elast, "ic0");
    run_case(cpu_ctx, gpu_ctx, "convdiff3d:28", convdiff, "ilu0");
    if (tu_testdata_has("mtx/bcsstk15.mtx") && tu_testdata_has("mtx/poisson1033.mtx") &&
        tu_testdata_has("mtx/cryg2500.mtx")) {   /* not in the small local set */
        krill_csr *spd = su_testdata("mtx/bcsstk15.mtx");
        krill_csr *fem = su_testdata("mtx/poisson1033.mtx");
        krill_csr *nonsym = su_testdata("mtx/cryg2500.mtx");
        printf("testdata matrices:\n");
        run_case(cpu_ctx, gpu_ctx, "bcsstk15", spd, "jacobi");
        run_case(cpu_ctx, gpu_ctx, "bcsstk15", spd, "bjacobi:3");
        run_case(cpu_ctx, gpu_ctx, "poisson1033", fem, "ic0");
        run_case(cpu_ctx, gpu_ctx, "poisson1033", fem, "ilu0");
        run_case(cpu_ctx, gpu_ctx, "cryg2500", nonsym, "ilu0");
        krill_csr_destroy(&spd);
        krill_csr_destroy(&fem);
        krill_csr_destroy(&nonsym);
    } else {
        printf("bcsstk15, poisson1033 or cryg2500 absent (set KRILL_TESTDATA): real-matrix "
               "cases skipped\n");
    }
    test_long_row(gpu_ctx);
    krill_csr_destroy(&poisson);
    krill_csr_destroy(&big);
    krill_csr_destroy(&small);
    krill_csr_destroy(&elast);
    krill_csr_destroy(&convdiff);
    krill_ctx_destroy(&cpu_ctx);
    krill_ctx_destroy(&gpu_ctx);
    return tu_finish("test_gpu_repro_precond");
}
