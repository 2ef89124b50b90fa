/* precond/bjacobi.c - point-block Jacobi: M = blockdiag(A_0, A_1, ..., A_{N/B-1}), where A_k
 * is the dense B x B diagonal block of A on rows and columns [kB, kB + B) (entries absent
 * from the pattern are zeros). "bjacobi:B" takes B from 1 to 16 and needs n % B == 0;
 * B = 1 is Jacobi, B = 3 the nodes of 3-D elasticity (3 displacements per node).
 *
 * Detection ("bjacobi" alone): the largest B in BJACOBI_DETECT_MAX..2 (6..2: up to the six
 * dofs of a shell or beam node) for which n % B == 0 and the CSR pattern is uniform in B x B
 * blocks: every block (I, J) is either fully present or fully absent. Checked on the
 * pattern: each row of block row I holds whole aligned groups [JB, JB + B) of columns, and
 * its B rows have identical column lists; one pass over the pattern per candidate, stopping
 * at the first mismatch. When no B > 1 qualifies, B = 1 (Jacobi) and the description says
 * so. update never detects again: the pattern is fixed.
 *
 * Build and update (on the host, for both devices): the diagonal blocks gathered by the
 * format on the device when it can (the GPU csr and cusparse: n B doubles leave the GPU),
 * else through krill_mat_to_csr (a GPU context downloads the matrix), each A_k inverted by LU with
 * partial pivoting, then one solve per column of the identity. A block is refused with
 * KRILL_ERR_NUMERIC naming it (0-based index and rows) when a pivot p has
 * |p| <= B * eps * max|a_ij| (max over A_k; eps = DBL_EPSILON): at that size the pivot is
 * rounding noise of the block's entries, so A_k is singular to working precision; an
 * all-zero block (absent from the pattern, or explicit zeros) fails the same test with
 * max|a_ij| = 0. An inverse with a non-finite entry is refused too. The inverses are
 * stored in context memory, row-major B * B per block, blocks contiguous: the N/B * B^2 =
 * N * B doubles of M^{-1}. After a failed update the preconditioner refuses to apply until
 * an update succeeds.
 *
 * Apply: z_kB+i = sum_j Binv_k[i][j] r_kB+j. Memory traffic: reads Binv (N * B doubles)
 * and r (N), writes z (N): (B + 2) N doubles (B = 3: 5 N, against 3 N for Jacobi). CPU: an
 * OpenMP loop over blocks; GPU: precond/bjacobi.cu, one thread per entry of z. Both add the
 * products in order j = 0, 1, ..., B-1 without fused multiply-adds, so CPU and GPU give the
 * same bits.
 *
 * Reproducible mode (apply_repro): each z_g is the correctly rounded sum of its B products
 * (precond_repro.h, the same function on the CPU and in bjacobi.cu's kernel), so z has the
 * same bits on any thread count and device, and every entry is as accurate as a rounding
 * allows. The inverses need nothing: both devices hold the bits of the one host computation
 * above. Cost: an exact row of B terms is some hundred operations against B multiply-adds,
 * so the apply turns from memory-bound to compute-bound. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "precond/precond_impl.h"
#include "precond/precond_repro.h"

/* Largest explicit B: blocks of 16 x 16 hold 256 doubles, on the stack while inverting. */
#define BJACOBI_MAX_B 16
/* Detection tries B = BJACOBI_DETECT_MAX down to 2. */
#define BJACOBI_DETECT_MAX 6
/* Apply over fewer rows than this runs on one thread: the fork costs more (as core/blas1.c). */
#define BJACOBI_OMP_MIN_ROWS 8192

typedef struct pc_bjacobi {
    int64_t n;               /* rows */
    int64_t blocks;          /* n / b */
    int b;                   /* block size */
    int detected;            /* 1 when b came from the pattern ("bjacobi" alone) */
    int valid;               /* 0 after a failed update: binv holds no inverse */
    double *binv;            /* blocks * b * b doubles, context memory, row-major per block */
    char description[160];   /* for krill_pc_describe */
} pc_bjacobi;

/* Why a block could not be inverted: the column whose pivot failed (-1: the inverse has a
 * non-finite entry), that pivot, and the threshold it had to pass. */
typedef struct block_failure {
    int column;
    double pivot;
    double threshold;
} block_failure;

/* ---- detection ---------------------------------------------------------------------- */

/* 1 when n % b == 0 and every b x b block of a's pattern is fully present or fully absent. */
static int pattern_is_block_uniform(const krill_csr *a, int b)
{
    if (a->n_rows % b != 0 || a->n_cols % b != 0) return 0;
    for (int64_t first = 0; first < a->n_rows; first += b) {
        const int64_t lo = a->row_ptr[first], len = a->row_ptr[first + 1] - lo;
        if (len % b != 0) return 0;
        /* columns sorted and unique: a group starting at a multiple of b whose b-th entry
         * is b-1 further is exactly [JB, JB + b) */
        for (int64_t k = lo; k < lo + len; k += b)
            if (a->col[k] % b != 0 || a->col[k + b - 1] != a->col[k] + b - 1) return 0;
        for (int64_t i = first + 1; i < first + b; i++)
            if (a->row_ptr[i + 1] - a->row_ptr[i] != len ||
                memcmp(a->col + a->row_ptr[i], a->col + lo, (size_t)len * sizeof *a->col) != 0)
                return 0;
    }
    return 1;
}

/* The largest b in BJACOBI_DETECT_MAX..2 with a uniform block pattern, else 1. */
static int detect_block_size(const krill_csr *a)
{
    if (a->n_rows == 0) return 1;
    for (int b = BJACOBI_DETECT_MAX; b >= 2; b--)
        if (pattern_is_block_uniform(a, b)) return b;
    return 1;
}

/* ---- inversion ---------------------------------------------------------------------- */

/* Diagonal block k of a into blk (b x b, row-major), zeros where the pattern has none. */
static void gather_block(const krill_csr *a, int b, int64_t k, double *blk)
{
    const int64_t c0 = k * b;
    memset(blk, 0, (size_t)b * (size_t)b * sizeof *blk);
    for (int i = 0; i < b; i++)
        for (int64_t e = a->row_ptr[c0 + i]; e < a->row_ptr[c0 + i + 1]; e++)
            if (a->col[e] >= c0 && a->col[e] < c0 + b) blk[i * b + (a->col[e] - c0)] = a->val[e];
}

/* inv = blk^{-1} (b x b, row-major) by PA = LU with partial pivoting and one forward and
 * one back substitution per column of the identity. blk is overwritten by the factors.
 * Returns 1, or 0 with *why filled when a pivot fails the threshold or inv is not finite. */
static int invert_block(double *blk, int b, double *inv, block_failure *why)
{
    int perm[BJACOBI_MAX_B];         /* row i of PA is row perm[i] of A */
    double amax = 0.0, threshold;
    for (int e = 0; e < b * b; e++)
        if (fabs(blk[e]) > amax) amax = fabs(blk[e]);
    threshold = b * DBL_EPSILON * amax;
    for (int i = 0; i < b; i++) perm[i] = i;
    for (int c = 0; c < b; c++) {
        int p = c;
        for (int i = c + 1; i < b; i++)
            if (fabs(blk[i * b + c]) > fabs(blk[p * b + c])) p = i;
        if (!(fabs(blk[p * b + c]) > threshold)) {
            why->column = c;
            why->pivot = blk[p * b + c];
            why->threshold = threshold;
            return 0;
        }
        if (p != c) {
            for (int j = 0; j < b; j++) {
                double t = blk[c * b + j];
                blk[c * b + j] = blk[p * b + j];
                blk[p * b + j] = t;
            }
            const int row = perm[c];
            perm[c] = perm[p];
            perm[p] = row;
        }
        for (int i = c + 1; i < b; i++) {
            const double l = blk[i * b + c] / blk[c * b + c];
            blk[i * b + c] = l;
            for (int j = c + 1; j < b; j++) blk[i * b + j] -= l * blk[c * b + j];
        }
    }
    for (int col = 0; col < b; col++) {
        double x[BJACOBI_MAX_B];
        for (int i = 0; i < b; i++) {                 /* L y = P e_col, L unit lower */
            double s = perm[i] == col ? 1.0 : 0.0;
            for (int j = 0; j < i; j++) s -= blk[i * b + j] * x[j];
            x[i] = s;
        }
        for (int i = b - 1; i >= 0; i--) {            /* U x = y */
            double s = x[i];
            for (int j = i + 1; j < b; j++) s -= blk[i * b + j] * x[j];
            x[i] = s / blk[i * b + i];
        }
        for (int i = 0; i < b; i++) {
            if (!isfinite(x[i])) {
                why->column = -1;
                return 0;
            }
            inv[i * b + col] = x[i];
        }
    }
    return 1;
}

/* Diagonal block k into blk: from the blocks the format gathered (gathered != NULL), else
 * from the CSR a. */
static void load_block(const krill_csr *a, const double *gathered, int b, int64_t k,
                       double *blk)
{
    if (gathered)
        memcpy(blk, gathered + k * b * b, (size_t)b * (size_t)b * sizeof *blk);
    else
        gather_block(a, b, k, blk);
}

/* The refusal of block k, with its entries loaded again to say why. */
static krill_status block_error(const krill_csr *a, const double *gathered, int b, int64_t k)
{
    double blk[BJACOBI_MAX_B * BJACOBI_MAX_B], inv[BJACOBI_MAX_B * BJACOBI_MAX_B];
    block_failure why = { -1, 0.0, 0.0 };
    const long long first = (long long)(k * b), last = first + b - 1;
    load_block(a, gathered, b, k, blk);
    invert_block(blk, b, inv, &why);
    if (why.column < 0)
        return krill_error(KRILL_ERR_NUMERIC, "bjacobi: diagonal block %lld (rows %lld..%lld, "
                           "0-based) has an inverse with a non-finite entry", (long long)k,
                           first, last);
    return krill_error(KRILL_ERR_NUMERIC, "bjacobi: diagonal block %lld (rows %lld..%lld, "
                       "0-based) is singular: pivot %g in column %d is at or below "
                       "%d*eps*max|a_ij| = %g", (long long)k, first, last, why.pivot,
                       why.column, b, why.threshold);
}

/* out = the inverses of all diagonal blocks (blocks * b * b doubles, host), from the
 * format's gathered blocks or from the CSR a, in parallel; the first singular block (lowest
 * index) is refused. */
static krill_status invert_all_blocks(const krill_csr *a, const double *gathered, int b,
                                      int64_t blocks, int threads, double *out)
{
    int64_t first_bad = blocks;
#pragma omp parallel for schedule(static) num_threads(threads) reduction(min : first_bad)
    for (int64_t k = 0; k < blocks; k++) {
        double blk[BJACOBI_MAX_B * BJACOBI_MAX_B];
        block_failure why;
        load_block(a, gathered, b, k, blk);
        if (!invert_block(blk, b, out + k * b * b, &why) && k < first_bad) first_bad = k;
    }
    return first_bad < blocks ? block_error(a, gathered, b, first_bad) : KRILL_OK;
}

/* binv from the matrix's current values; at build (detect) also chooses b first. With b
 * known, a format that gathers its diagonal blocks itself (krill_mat_diagonal_blocks_raw:
 * the GPU csr and cusparse) sends only those n b doubles to the host; otherwise, and to
 * detect b from the pattern, the whole matrix comes as a CSR (krill_mat_to_csr). */
static krill_status bjacobi_compute(krill_ctx *ctx, pc_bjacobi *p, const krill_mat *mat,
                                    int detect)
{
    krill_status st = KRILL_OK;
    krill_csr *a = NULL;
    double *host = NULL, *gathered = NULL;
    p->valid = 0;
    if (!detect && p->n > 0) {
        krill_status got;
        KRILL_ALLOC(gathered, (size_t)p->n * (size_t)p->b);
        got = krill_mat_diagonal_blocks_raw(mat, p->b, gathered);
        if (got == KRILL_ERR_UNSUPPORTED) {
            krill_free(gathered);
            gathered = NULL;
        } else {
            KRILL_TRY(got);
        }
    }
    if (!gathered) KRILL_TRY(krill_mat_to_csr(mat, &a));
    if (detect) {
        p->b = detect_block_size(a);
        p->detected = 1;
    }
    p->blocks = p->n / p->b;
    if (p->binv == NULL) KRILL_MEM_ALLOC(ctx, p->binv, (size_t)p->n * (size_t)p->b);
    if (krill_on_gpu(ctx)) {
        KRILL_ALLOC(host, (size_t)p->n * (size_t)p->b);
        KRILL_TRY(invert_all_blocks(a, gathered, p->b, p->blocks, ctx->threads, host));
        KRILL_TRY(krill_mem_upload(ctx, p->binv, host, (size_t)p->n * (size_t)p->b *
                                                           sizeof *host));
        KRILL_TRY(krill_ctx_sync(ctx));   /* `host` is freed below: the upload must be done */
    } else {
        KRILL_TRY(invert_all_blocks(a, gathered, p->b, p->blocks, ctx->threads, p->binv));
    }
    p->valid = 1;
cleanup:
    krill_free(host);
    krill_free(gathered);
    krill_csr_destroy(&a);
    return st;
}

/* ---- the table ---------------------------------------------------------------------- */

/* "bjacobi:B": B, an integer in 1..BJACOBI_MAX_B written in decimal digits only. */
static krill_status parse_block_size(const char *param, int *b)
{
    krill_status st = KRILL_OK;
    int value = 0;
    size_t len = strlen(param);
    KRILL_REQUIRE(len > 0 && strspn(param, "0123456789") == len,
                  "bjacobi:%s: the block size must be an integer from 1 to %d", param,
                  BJACOBI_MAX_B);
    /* once past the largest B the value only has to stay past it (no overflow) */
    for (size_t i = 0; i < len; i++)
        if (value <= BJACOBI_MAX_B) value = 10 * value + (param[i] - '0');
    KRILL_REQUIRE(value >= 1 && value <= BJACOBI_MAX_B,
                  "bjacobi:%s: the block size must be an integer from 1 to %d", param,
                  BJACOBI_MAX_B);
    *b = value;
cleanup:
    return st;
}

static void bjacobi_destroy(krill_ctx *ctx, void *impl)
{
    pc_bjacobi *p = impl;
    if (!p) return;
    krill_mem_free(ctx, p->binv);
    krill_free(p);
}

static krill_status bjacobi_build(krill_ctx *ctx, const krill_mat *mat, const char *param,
                                  void **impl)
{
    krill_status st = KRILL_OK;
    pc_bjacobi *p = NULL;
    KRILL_CALLOC(p, 1);
    p->n = mat->n_rows;
    if (param != NULL) {
        KRILL_TRY(parse_block_size(param, &p->b));
        KRILL_REQUIRE(p->n % p->b == 0, "bjacobi:%s: the matrix has %lld rows, not a multiple "
                      "of the block size %d", param, (long long)p->n, p->b);
    }
    KRILL_TRY(bjacobi_compute(ctx, p, mat, param == NULL));
    if (p->detected && p->b == 1)
        snprintf(p->description, sizeof p->description, "bjacobi: 1x1 blocks (Jacobi: no "
                 "uniform block structure with B in %d..2), %lld blocks", BJACOBI_DETECT_MAX,
                 (long long)p->blocks);
    else
        snprintf(p->description, sizeof p->description, "bjacobi: %dx%d blocks (%s), %lld "
                 "blocks", p->b, p->b, p->detected ? "detected" : "given", (long long)p->blocks);
    *impl = p;
    p = NULL;
cleanup:
    bjacobi_destroy(ctx, p);
    return st;
}

/* z = m r for one b x b block, products added in order j = 0..b-1. Called with a constant
 * b for the common sizes (the switch below), which the compiler unrolls: a loop over a
 * runtime b of 3 costs several times the memory time of the block. */
static inline void block_apply(int b, const double *m, const double *r, double *z)
{
    for (int i = 0; i < b; i++) {
        double s = 0.0;
        for (int j = 0; j < b; j++) s += m[i * b + j] * r[j];
        z[i] = s;
    }
}

/* The refusal to apply after a failed update. */
static krill_status bjacobi_refuse(void)
{
    return krill_error(KRILL_ERR_NUMERIC, "bjacobi: the last update failed (a singular "
                       "diagonal block); update it again before applying");
}

static krill_status bjacobi_apply(krill_ctx *ctx, const void *impl, const double *r, double *z)
{
    const pc_bjacobi *p = impl;
    const int b = p->b;
    const double *binv = p->binv;
    if (!p->valid) return bjacobi_refuse();
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) return krill_bjacobi_cuda_apply(ctx, p->n, b, binv, r, z);
#endif
#pragma omp parallel for schedule(static) \
    num_threads(p->n < BJACOBI_OMP_MIN_ROWS ? 1 : ctx->threads)
    for (int64_t k = 0; k < p->blocks; k++) {
        const double *m = binv + k * b * b, *rk = r + k * b;
        double *zk = z + k * b;
        switch (b) {
        case 2: block_apply(2, m, rk, zk); break;
        case 3: block_apply(3, m, rk, zk); break;
        case 4: block_apply(4, m, rk, zk); break;
        case 6: block_apply(6, m, rk, zk); break;
        default: block_apply(b, m, rk, zk); break;
        }
    }
    return KRILL_OK;
}

/* A block row of B terms always fits a GPU thread's exact row sum. */
_Static_assert(BJACOBI_MAX_B <= KRILL_OZ_ROW_MAX_N, "a bjacobi row must fit KRILL_OZ_ROW_MAX_N");

/* z_g = the correctly rounded sum_j Binv_k[i][j] r_kB+j for g = kB + i, one row per
 * iteration: the same bits on any thread count and on the GPU. */
static krill_status bjacobi_apply_repro(krill_ctx *ctx, const void *impl, const double *r,
                                        double *z)
{
    const pc_bjacobi *p = impl;
    const int b = p->b;
    const double *binv = p->binv;
    if (!p->valid) return bjacobi_refuse();
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(ctx)) return krill_bjacobi_cuda_apply_repro(ctx, p->n, b, binv, r, z);
#endif
#pragma omp parallel for schedule(static) \
    num_threads(p->n < BJACOBI_OMP_MIN_ROWS ? 1 : ctx->threads)
    for (int64_t g = 0; g < p->n; g++) {
        int64_t acc[KRILL_OZ_ROW_MAX_DIAG];
        z[g] = krill_pc_repro_dense_row(b, binv + g * b, r + (g - g % b), acc);
    }
    return KRILL_OK;
}

static krill_status bjacobi_update(krill_ctx *ctx, void *impl, const krill_mat *mat)
{
    return bjacobi_compute(ctx, impl, mat, 0);
}

static const char *bjacobi_describe(const void *impl)
{
    return ((const pc_bjacobi *)impl)->description;
}

const krill_pc_ops krill_pc_bjacobi_ops = {
    .name = "bjacobi",
    .summary = "point-block Jacobi: dense B x B diagonal blocks inverted (bjacobi:B, B in "
               "1..16; bjacobi alone detects B from the pattern)",
    .build = bjacobi_build,
    .apply = bjacobi_apply,
    .apply_repro = bjacobi_apply_repro,
    .update = bjacobi_update,
    .inverse_diagonal = NULL,
    .is_identity = 0,
    .destroy = bjacobi_destroy,
    .describe = bjacobi_describe,
};
