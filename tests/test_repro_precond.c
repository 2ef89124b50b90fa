/* The preconditioners in reproducible mode on the CPU (apply_repro of precond/; the contract
 * of doc/reproducible.md): z = M^{-1} r must have the same bits on 1, 2, 3 and 7 threads and
 * in every reproducible mode (row sums are always exact, whatever the slice count), and
 * those bits must be the ones of a reference computed here, row by row with MPFR:
 *   jacobi     z_i = r_i * (1 / a_ii)                  (one rounding: plain mode too)
 *   bjacobi:B  z_g = RN(sum_j Binv[g][j] r_j)          the B products of row g
 *   ilu0/ic0   y_i = RN(r_i - sum_{j<i} l_ij y_j) [/ l_ii],
 *              z_i = RN(y_i - sum_{j>i} u_ij z_j) / u_ii
 * with each RN the correctly rounded exact sum (MPFR at 4400 bits, rounded once) and each
 * division rounded once. The reference's inputs are the preconditioner's own data taken from
 * a plain-mode preconditioner on one thread: the ILU/IC factors through krill_pc_ilu_factors
 * (test_ilu checks them against the textbook KIJ loops bit for bit), the block inverses by
 * applying it to the B vectors that are 1 on one position of every block (each entry of z is
 * then a single product Binv[g][j] * 1 plus zeros: exact in plain arithmetic).
 *
 * Inputs: right-hand sides (rand - 0.5) exp(4 randn) (krill_gen_dot_vectors, phi = 4: about
 * 23 binades of range), poisson3d (ic0, jacobi, bjacobi:4), elasticity3d (bjacobi:3, ic0),
 * convdiff3d (ilu0), sizes at which the CPU solves run level by level on several threads
 * (checked through krill_pc_describe), an arrow matrix whose last row holds 20000 terms (more
 * than a GPU row sum takes: the CPU's general scratch), and real matrices of testdata
 * (bcsstk15, poisson1033, cryg2500). Each preconditioner is also updated with new values
 * (0.75 A + 0.25 diag(A), same pattern) and compared with the reference of those.
 *
 * The test can fail: plain mode must differ from the reference somewhere for bjacobi, ilu0
 * and ic0 (a plain row sum is not always correctly rounded), and equal it for jacobi.
 * Without MPFR the reference comparisons are skipped with a message and the bits of 1 thread
 * stand in as the reference for the other thread counts and for plain mode. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/core_impl.h"
#include "precond/ilu_impl.h"
#include "ozaki_ref.h"
#include "solver_util.h"

#define NVEC 3         /* right-hand sides per case */
#define PHI 4.0        /* their exponent spread: (rand - 0.5) exp(PHI randn) */

/* ---- the reference --------------------------------------------------------------------- */

typedef enum ref_kind { REF_JACOBI, REF_BJACOBI, REF_ILU } ref_kind;

typedef struct reference {
    const krill_csr *a;
    ref_kind kind;
    int b;                   /* bjacobi: block size */
    int unit_lower;          /* ilu: 1 for ilu0 (L's diagonal is 1), 0 for ic0 */
    double *m;               /* jacobi: 1 / a_ii (n); bjacobi: Binv row by row (n * b);
                                ilu: the factors in a's CSR order (nnz) */
    int64_t *diag;           /* ilu: position of a_ii in row i */
    double *ta, *tx;         /* one row's terms (a_k, x_k) */
} reference;

static void *xmalloc(size_t bytes)
{
    void *p = malloc(bytes > 0 ? bytes : 1);
    if (!p) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    return p;
}

static krill_csr *copy_csr(const krill_csr *a)
{
    krill_csr *c = NULL;
    if (krill_csr_copy(a, &c) != KRILL_OK) exit(1);
    return c;
}

/* The correctly rounded sum_k ta[k] tx[k] (MPFR), or 0 without MPFR. */
static int exact_row(int64_t len, const double *ta, const double *tx, double *out)
{
    return oz_ref_dot(len, ta, tx, out);
}

/* A plain-mode preconditioner `name` of a on a 1-thread context (exits on failure). */
static void plain_pc(const krill_csr *a, const char *name, krill_ctx **ctx, krill_mat **mat,
                     krill_pc **pc)
{
    *ctx = tu_cpu_ctx(1);
    if (krill_mat_create(*ctx, a, "csr", mat) != KRILL_OK ||
        krill_pc_create(*mat, name, pc) != KRILL_OK) {
        fprintf(stderr, "%s: %s\n", name, krill_last_error());
        exit(1);
    }
}

/* The inverse blocks, one plain apply per column j of the blocks (see the head). */
static void extract_blocks(const krill_csr *a, const char *name, int b, double *m)
{
    const int64_t n = a->n_rows;
    krill_ctx *ctx;
    krill_mat *mat;
    krill_pc *pc;
    krill_vec *e = NULL, *z = NULL;
    double *eh = xmalloc((size_t)n * sizeof *eh), *zh = xmalloc((size_t)n * sizeof *zh);
    plain_pc(a, name, &ctx, &mat, &pc);
    if (krill_vec_create(ctx, n, &e) != KRILL_OK || krill_vec_create(ctx, n, &z) != KRILL_OK)
        exit(1);
    for (int j = 0; j < b; j++) {
        for (int64_t g = 0; g < n; g++) eh[g] = g % b == j ? 1.0 : 0.0;
        CHECK_OK(krill_vec_upload(e, eh));
        CHECK_OK(krill_pc_apply(pc, e, z));
        CHECK_OK(krill_vec_download(z, zh));
        for (int64_t g = 0; g < n; g++) m[g * b + j] = zh[g];
    }
    krill_vec_destroy(&e);
    krill_vec_destroy(&z);
    krill_pc_destroy(&pc);
    krill_mat_destroy(&mat);
    krill_ctx_destroy(&ctx);
    free(eh);
    free(zh);
}

static void extract_factors(const krill_csr *a, const char *name, reference *ref)
{
    krill_ctx *ctx;
    krill_mat *mat;
    krill_pc *pc;
    krill_ilu_factors f;
    plain_pc(a, name, &ctx, &mat, &pc);
    CHECK_OK(krill_pc_ilu_factors(pc, &f));
    ref->m = xmalloc((size_t)a->nnz * sizeof *ref->m);
    memcpy(ref->m, f.val, (size_t)a->nnz * sizeof *ref->m);
    ref->unit_lower = f.unit_lower;
    krill_pc_destroy(&pc);
    krill_mat_destroy(&mat);
    krill_ctx_destroy(&ctx);
}

static void ref_make(reference *ref, const krill_csr *a, const char *name)
{
    const int32_t n = a->n_rows;
    int64_t longest = 0;
    memset(ref, 0, sizeof *ref);
    ref->a = a;
    ref->diag = xmalloc((size_t)n * sizeof *ref->diag);
    for (int32_t i = 0; i < n; i++) {
        ref->diag[i] = -1;
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            if (a->col[p] == i) ref->diag[i] = p;
        if (a->row_ptr[i + 1] - a->row_ptr[i] > longest)
            longest = a->row_ptr[i + 1] - a->row_ptr[i];
    }
    ref->ta = xmalloc((size_t)(longest + 16) * sizeof *ref->ta);
    ref->tx = xmalloc((size_t)(longest + 16) * sizeof *ref->tx);
    if (strcmp(name, "jacobi") == 0) {
        ref->kind = REF_JACOBI;
        ref->m = xmalloc((size_t)n * sizeof *ref->m);
        for (int32_t i = 0; i < n; i++) ref->m[i] = 1.0 / a->val[ref->diag[i]];
    } else if (strncmp(name, "bjacobi:", 8) == 0) {
        ref->kind = REF_BJACOBI;
        ref->b = atoi(name + 8);
        ref->m = xmalloc((size_t)n * (size_t)ref->b * sizeof *ref->m);
        extract_blocks(a, name, ref->b, ref->m);
    } else {
        ref->kind = REF_ILU;
        extract_factors(a, name, ref);
    }
}

static void ref_free(reference *ref)
{
    free(ref->m);
    free(ref->diag);
    free(ref->ta);
    free(ref->tx);
}

/* x_i = RN(rhs - sum_{p in [lo, hi)} f_p x_{col_p}) [/ d] (d: NULL for none); 0 without MPFR */
static int ref_tri_row(const reference *ref, double rhs, int64_t lo, int64_t hi,
                       const double *x, const double *d, double *xi)
{
    int64_t len = 1;
    ref->ta[0] = 1.0;
    ref->tx[0] = rhs;
    for (int64_t p = lo; p < hi; p++, len++) {
        ref->ta[len] = -ref->m[p];
        ref->tx[len] = x[ref->a->col[p]];
    }
    if (!exact_row(len, ref->ta, ref->tx, xi)) return 0;
    if (d) *xi = *xi / *d;
    return 1;
}

/* z = M^{-1} r by the reference; 0 without MPFR (jacobi needs none). */
static int ref_apply(const reference *ref, const double *r, double *z)
{
    const krill_csr *a = ref->a;
    const int32_t n = a->n_rows;
    const int b = ref->b;
    switch (ref->kind) {
    case REF_JACOBI:
        for (int32_t i = 0; i < n; i++) z[i] = r[i] * ref->m[i];
        return 1;
    case REF_BJACOBI:
        for (int32_t g = 0; g < n; g++)
            if (!exact_row(b, ref->m + (int64_t)g * b, r + (g - g % b), &z[g])) return 0;
        return 1;
    case REF_ILU:
        for (int32_t i = 0; i < n; i++)
            if (!ref_tri_row(ref, r[i], a->row_ptr[i], ref->diag[i], z,
                             ref->unit_lower ? NULL : ref->m + ref->diag[i], &z[i]))
                return 0;
        for (int32_t i = n - 1; i >= 0; i--)
            if (!ref_tri_row(ref, z[i], ref->diag[i] + 1, a->row_ptr[i + 1], z,
                             ref->m + ref->diag[i], &z[i]))
                return 0;
        return 1;
    }
    return 0;
}

/* ---- the checks -------------------------------------------------------------------------- */

/* Positions where x and y differ in their bits. */
static int64_t count_diff(const double *x, const double *y, int64_t n)
{
    int64_t k = 0;
    for (int64_t i = 0; i < n; i++) k += memcmp(x + i, y + i, sizeof *x) != 0;
    return k;
}

/* A case: a matrix, a preconditioner, the right-hand sides, the expected applies of A and of
 * the updated A (u: same pattern, new values). */
typedef struct rp_case {
    const char *label, *pc;
    const krill_csr *a;
    krill_csr *u;
    int64_t n;
    double *r[NVEC];
    double *want[NVEC], *want_u[NVEC];   /* reference (or 1-thread repro without MPFR) */
    int have_ref;
} rp_case;

/* One context configuration of the thread sweep: threads, mode, slices, and whether the
 * preconditioner is built before the mode is set (the mode is read at every apply). */
typedef struct config {
    int threads;
    krill_repro_mode mode;
    int slices;
    int build_plain;
} config;

static const config configs[] = {
    {1, KRILL_REPRO_OZAKI, 0, 1},
    {2, KRILL_REPRO_OZAKI, 0, 0},
    {3, KRILL_REPRO_OZAKI, 2, 0},
    {7, KRILL_REPRO_OZAKI_FAST, 3, 0},
};
#define NCONFIGS (int)(sizeof configs / sizeof configs[0])

/* z = M^{-1} r on ctx's preconditioner pc for host vectors. */
static void apply_host(krill_ctx *ctx, const krill_pc *pc, int64_t n, double *r, double *z)
{
    krill_vec *rv = NULL, *zv = NULL;
    CHECK_OK(krill_vec_wrap(ctx, n, r, &rv));
    CHECK_OK(krill_vec_wrap(ctx, n, z, &zv));
    CHECK_OK(krill_pc_apply(pc, rv, zv));
    krill_vec_destroy(&rv);
    krill_vec_destroy(&zv);
}

static void report_diff(const rp_case *c, const char *what, int threads, int v, int64_t diff)
{
    if (diff)
        fprintf(stderr, "%s %s: %s on %d threads, vector %d: %lld of %lld entries differ\n",
                c->label, c->pc, what, threads, v, (long long)diff, (long long)c->n);
}

/* Apply, and after krill_pc_update_values apply again, with configuration k; compare with
 * the expected bits (without MPFR the 1-thread configuration, the first, sets them). */
static void run_config(rp_case *c, const config *k, int expect_levels)
{
    krill_ctx *ctx = tu_cpu_ctx(k->threads);
    krill_mat *mat = NULL;
    krill_pc *pc = NULL;
    double *z = xmalloc((size_t)c->n * sizeof *z);
    CHECK_OK(krill_mat_create(ctx, c->a, "csr", &mat));
    if (!k->build_plain) CHECK_OK(krill_ctx_set_repro(ctx, k->mode, k->slices));
    CHECK_OK(krill_pc_create(mat, c->pc, &pc));
    if (k->build_plain) CHECK_OK(krill_ctx_set_repro(ctx, k->mode, k->slices));
    if (expect_levels && k->threads > 1 && !strstr(krill_pc_describe(pc), "level by level")) {
        CHECK(!"the solves run level by level on several threads");
        fprintf(stderr, "%s %s: %s\n", c->label, c->pc, krill_pc_describe(pc));
    }
    for (int v = 0; v < NVEC; v++) {
        int64_t diff;
        apply_host(ctx, pc, c->n, c->r[v], z);
        if (!c->have_ref && k->threads == 1) memcpy(c->want[v], z, (size_t)c->n * sizeof *z);
        diff = count_diff(z, c->want[v], c->n);
        report_diff(c, "reproducible apply", k->threads, v, diff);
        CHECK(diff == 0);
    }
    CHECK_OK(krill_mat_update_values(mat, c->u->val));
    CHECK_OK(krill_pc_update_values(pc));
    for (int v = 0; v < NVEC; v++) {
        int64_t diff;
        apply_host(ctx, pc, c->n, c->r[v], z);
        if (!c->have_ref && k->threads == 1) memcpy(c->want_u[v], z, (size_t)c->n * sizeof *z);
        diff = count_diff(z, c->want_u[v], c->n);
        report_diff(c, "reproducible apply after update", k->threads, v, diff);
        CHECK(diff == 0);
    }
    krill_pc_destroy(&pc);
    krill_mat_destroy(&mat);
    krill_ctx_destroy(&ctx);
    free(z);
}

/* Plain mode on 1 thread against the expected bits: equal for jacobi, different somewhere
 * for the others. */
static void check_plain(const rp_case *c, int plain_exact)
{
    krill_ctx *ctx = tu_cpu_ctx(1);
    krill_mat *mat = NULL;
    krill_pc *pc = NULL;
    double *z = xmalloc((size_t)c->n * sizeof *z);
    int64_t diff = 0;
    CHECK_OK(krill_mat_create(ctx, c->a, "csr", &mat));
    CHECK_OK(krill_pc_create(mat, c->pc, &pc));
    for (int v = 0; v < NVEC; v++) {
        apply_host(ctx, pc, c->n, c->r[v], z);
        diff += count_diff(z, c->want[v], c->n);
    }
    printf("  %-14s %-10s plain mode: %lld of %lld entries differ from the %s\n", c->label,
           c->pc, (long long)diff, (long long)(NVEC * c->n),
           c->have_ref ? "correctly rounded reference" : "reproducible apply");
    if (plain_exact)
        CHECK(diff == 0);
    else
        CHECK(diff > 0);
    krill_pc_destroy(&pc);
    krill_mat_destroy(&mat);
    krill_ctx_destroy(&ctx);
    free(z);
}

/* A copy of a with the values 0.75 A + 0.25 diag(A): the same pattern, and still SPD,
 * symmetric or diagonally dominant when A is. */
static krill_csr *new_values(const krill_csr *a)
{
    krill_csr *u = copy_csr(a);
    for (int32_t i = 0; i < a->n_rows; i++)
        for (int64_t p = a->row_ptr[i]; p < a->row_ptr[i + 1]; p++)
            if (a->col[p] != i) u->val[p] = 0.75 * a->val[p];
    return u;
}

/* Run one preconditioner on one matrix: reference, thread sweep, update, plain mode.
 * expect_levels: the matrix is wide enough for the level-scheduled CPU solves. */
static void run_case(const char *label, const krill_csr *a, const char *pc_name,
                     int expect_levels)
{
    rp_case c;
    reference ref, ref_u;
    memset(&c, 0, sizeof c);
    c.label = label;
    c.pc = pc_name;
    c.a = a;
    c.u = new_values(a);
    c.n = a->n_rows;
    c.have_ref = oz_ref_have_mpfr();
    ref_make(&ref, a, pc_name);
    ref_make(&ref_u, c.u, pc_name);
    for (int v = 0; v < NVEC; v++) {
        c.r[v] = xmalloc((size_t)c.n * sizeof(double));
        c.want[v] = xmalloc((size_t)c.n * sizeof(double));
        c.want_u[v] = xmalloc((size_t)c.n * sizeof(double));
        CHECK_OK(krill_gen_dot_vectors(c.n, PHI, 1000 + (uint64_t)v, c.r[v], NULL));
        if (c.have_ref) {
            CHECK(ref_apply(&ref, c.r[v], c.want[v]));
            CHECK(ref_apply(&ref_u, c.r[v], c.want_u[v]));
        }
    }
    for (int k = 0; k < NCONFIGS; k++) run_config(&c, &configs[k], expect_levels);
    check_plain(&c, ref.kind == REF_JACOBI);
    ref_free(&ref);
    ref_free(&ref_u);
    for (int v = 0; v < NVEC; v++) {
        free(c.r[v]);
        free(c.want[v]);
        free(c.want_u[v]);
    }
    krill_csr_destroy(&c.u);
}

/* ---- matrices ---------------------------------------------------------------------------- */

static void test_generated(void)
{
    krill_csr *poisson = su_gen("poisson3d:28"), *small = su_gen("poisson3d:8");
    krill_csr *elast = su_gen("elasticity3d:8,6,6"), *convdiff = su_gen("convdiff3d:28,2");
    krill_csr *arr = tu_arrow(20000);
    printf("generated matrices:\n");
    run_case("poisson3d:28", poisson, "jacobi", 0);
    run_case("poisson3d:28", poisson, "ic0", 1);
    run_case("poisson3d:28", poisson, "ilu0", 1);
    run_case("poisson3d:8", small, "bjacobi:4", 0);
    run_case("elasticity3d", elast, "bjacobi:3", 0);
    run_case("elasticity3d", elast, "ic0", 0);
    run_case("convdiff3d:28", convdiff, "ilu0", 1);
    run_case("arrow:20000", arr, "ilu0", 0);
    run_case("arrow:20000", arr, "ic0", 0);
    krill_csr_destroy(&poisson);
    krill_csr_destroy(&small);
    krill_csr_destroy(&elast);
    krill_csr_destroy(&convdiff);
    krill_csr_destroy(&arr);
}

static void test_testdata(void)
{
    krill_csr *spd, *fem, *nonsym;
    if (!tu_testdata_has("mtx/bcsstk15.mtx") || !tu_testdata_has("mtx/poisson1033.mtx") ||
        !tu_testdata_has("mtx/cryg2500.mtx")) {   /* not in the small local set */
        printf("bcsstk15, poisson1033 or cryg2500 absent (set KRILL_TESTDATA): real-matrix "
               "cases skipped\n");
        return;
    }
    spd = su_testdata("mtx/bcsstk15.mtx");   /* IC(0) breaks down on it: jacobi, bjacobi */
    fem = su_testdata("mtx/poisson1033.mtx");
    nonsym = su_testdata("mtx/cryg2500.mtx");
    printf("testdata matrices:\n");
    run_case("bcsstk15", spd, "jacobi", 0);
    run_case("bcsstk15", spd, "bjacobi:3", 0);
    run_case("poisson1033", fem, "ic0", 0);
    run_case("poisson1033", fem, "ilu0", 0);
    run_case("cryg2500", nonsym, "ilu0", 0);
    krill_csr_destroy(&spd);
    krill_csr_destroy(&fem);
    krill_csr_destroy(&nonsym);
}

int main(void)
{
    if (!oz_ref_have_mpfr())
        printf("MPFR absent: the comparisons with the correctly rounded reference are skipped; "
               "1 thread's bits stand in for it\n");
    test_generated();
    test_testdata();
    return tu_finish("test_repro_precond");
}
