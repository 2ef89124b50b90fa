/* precond/ilu_impl.h - ILU(0) and IC(0) internals, shared by precond/ilu.c (the two tables),
 * precond/ilu_host.c (analysis, CPU factorization and solves) and precond/ilu.cu (GPU), and
 * the accessor the tests and bench/bench_trsv use to reach the factors.
 *
 * Storage, one layout for both preconditioners and both devices: the factors overwrite the
 * values of A's own CSR pattern (row offsets, sorted columns), nothing is added.
 *   ilu0: A ~ L U. The strictly lower part holds L (unit diagonal, not stored), the diagonal
 *         and the strictly upper part hold U (u_ii included).
 *   ic0:  A ~ L L^T (A symmetric). The lower part, diagonal included, holds L; the strictly
 *         upper part holds L^T explicitly (entry (i, j), j > i, is l_ji): both triangular
 *         solves then read rows, L's from the lower part, L^T's from the upper part.
 * So z = M^{-1} r is always a forward solve on the lower part (unit diagonal for ilu0, l_ii
 * for ic0) and a backward solve on the upper part with the stored diagonal:
 *   y_i = (r_i - sum_{j<i} a_ij y_j) [/ a_ii for ic0],  z_i = (y_i - sum_{j>i} a_ij z_j) / a_ii.
 *
 * Dependencies. Row i of the forward solve needs y_j for the columns j < i of its row; the
 * ILU(0)/IC(0) factorization of row i needs the finished rows k < i of the same columns:
 * one dependency graph, whose level sets (level(i) = 1 + max level(j) over those j, 0 when
 * there is none) are computed once at build on the host. The backward solve has the mirror
 * graph (columns j > i, levels from the last row up).
 *
 * Pivots. A pivot is refused (KRILL_ERR_NUMERIC naming the row and the value) when it is not
 * finite or when |u_ii| <= KRILL_ILU_PIVOT_TOL * max_j |a_ij| over row i of A (ilu0), or, for
 * ic0, when d_i = a_ii - sum_{k<i} l_ik^2 <= KRILL_ILU_PIVOT_TOL * max_j |a_ij| (d_i <= 0: not
 * SPD enough for IC(0)). A factor entry that is not finite (growth) is refused the same way.
 * Shift (krill_ilu_shift below, ilu_shift.c): ic0 by default and ilu0:shift factor
 * s A + alpha D instead, alpha searched as PETSc does for its positive-definite shift; without
 * it the messages suggest the option. */
#ifndef KRILL_ILU_IMPL_H
#define KRILL_ILU_IMPL_H

#include "precond/precond_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Relative pivot threshold: u_ii (ilu0) or d_i (ic0) must exceed it times the row's largest
 * |a_ij|. 1e-12 is PETSc's zero-pivot tolerance (-pc_factor_zeropivot) made scale-free: a
 * pivot that small is cancellation noise, and its inverse would amplify r by 1e12 or more. */
#define KRILL_ILU_PIVOT_TOL 1e-12

typedef enum krill_ilu_kind { KRILL_ILU_KIND_ILU0 = 0, KRILL_ILU_KIND_IC0 = 1 } krill_ilu_kind;

/* Level sets of one triangular dependency graph. */
typedef struct krill_ilu_levels {
    int32_t n_levels;
    int32_t *level_ptr;      /* n_levels + 1: level l is rows[level_ptr[l] .. level_ptr[l+1]) */
    int32_t *rows;           /* the n rows sorted by level (ascending row inside a level) */
} krill_ilu_levels;

/* The analysis: A's pattern and everything derived from it only (values excepted), computed
 * once at build and kept by both devices (the update checks new matrices against it). */
typedef struct krill_ilu_host {
    krill_ilu_kind kind;
    int32_t n;
    int64_t nnz;
    int64_t *row_ptr;        /* n + 1 (A's, taken over from the CSR analyzed) */
    int32_t *col;            /* nnz, sorted within each row (likewise) */
    int64_t *diag;           /* n: position of a_ii in row i */
    int64_t *transpose;      /* ic0 on the GPU: nnz, position of (j, i) for the entry (i, j)
                                (krill_ilu_symmetric_map); otherwise NULL: the CPU
                                factorization walks a cursor per row instead */
    double *row_max;         /* n: max_j |a_ij| of the values last factored (krill_ilu_factor_cpu
                                or krill_ilu_set_row_max); the pivot threshold's scale */
    int shift;               /* 1: the preconditioner searches a shift (krill_ilu_shift), so a
                                refused row's message suggests no option; 0: it suggests one */
    int64_t lower_nnz;       /* strictly lower entries */
    int64_t max_tri_row;     /* the most entries of one row of either strict triangle */
    krill_ilu_levels lower;  /* forward solve and factorization: columns j < i */
    krill_ilu_levels upper;  /* backward solve: columns j > i */
} krill_ilu_host;

/* The analysis of a square CSR a (validated): diagonal positions, triangle sizes, level
 * sets. On success h takes over a's row offsets and columns instead of copying them
 * (a->row_ptr and a->col become NULL; a keeps its values); on failure a is unchanged. A row
 * without a stored diagonal entry is KRILL_ERR_NUMERIC naming it, unless kind is ic0 and a
 * is not symmetric: that is KRILL_ERR_ARG, the error symmetry gets wherever it is checked
 * (krill_ilu_factor_cpu, krill_ilu_symmetric_map). `name` ("ilu0", "ic0") starts the
 * messages. */
krill_status krill_ilu_analyze(krill_csr *a, krill_ilu_kind kind, const char *name,
                               krill_ilu_host *h);
void krill_ilu_host_free(krill_ilu_host *h);

/* KRILL_OK when a has h's pattern, else KRILL_ERR_ARG. (The symmetry of ic0's values is
 * checked by the factorization on the CPU, by krill_ilu_symmetric_map for the GPU.) */
krill_status krill_ilu_check_same(const krill_ilu_host *h, const krill_csr *a, const char *name);

/* ic0 for the GPU: KRILL_ERR_ARG unless A (h's pattern, values val) is exactly symmetric,
 * checked in one pass with a cursor per row (krill_csr_is_symmetric's); the same pass
 * writes h->transpose when it is NULL (at build; an update only checks). */
krill_status krill_ilu_symmetric_map(krill_ilu_host *h, const double *val, const char *name);

/* h->row_max from A's values (nnz, in h's CSR order); the GPU's (the CPU factorization
 * computes it row by row as it goes). */
void krill_ilu_set_row_max(krill_ilu_host *h, const double *a_val);

/* The smallest pivot row i accepts (strictly above it): the same bits on both devices. */
static inline double krill_ilu_pivot_min(const krill_ilu_host *h, int32_t i)
{
    return KRILL_ILU_PIVOT_TOL * h->row_max[i];
}

/* In place: val holds A's values on entry and the factors on return (the layout above), by
 * rows in order, IKJ (ILU(0)) / up-looking (IC(0)) with a column-position lookup per row.
 * Each entry receives its updates in ascending k, the order of the textbook KIJ loops, so
 * the result has their bits. Sets h->row_max as it goes. Fails at the first row whose pivot
 * or entries are refused; for ic0 it also checks, in the same pass, that A is exactly
 * symmetric (KRILL_ERR_ARG, which wins over a refused row). */
krill_status krill_ilu_factor_cpu(krill_ilu_host *h, const char *name, double *val);

/* The failure of row `row`, whose factored values (pivot candidate in the diagonal slot: u_ii,
 * or d_i before its square root for ic0) are row_val[0 .. row length): KRILL_ERR_NUMERIC with
 * the message. Shared by the CPU and the GPU so that both say the same thing. Returns
 * KRILL_ERR_INTERNAL when nothing in the row is wrong. */
krill_status krill_ilu_row_failure(const krill_ilu_host *h, const char *name, int32_t row,
                                   const double *row_val);

/* ---- shifted factorizations (ilu_shift.c, whose head has the math) --------------------
 * The values factored are s A + alpha D: s = -1 for ic0 when every a_ii < 0 (krill_ilu_sign:
 * IC(0) of -A, applied with the sign), else 1; D = diag(d_i), d_i = s a_ii (ilu0 where
 * a_ii = 0: the row's largest |a_ij|); alpha = f alpha_top, alpha_top = 1.1 x the least alpha
 * that makes every row strictly diagonally dominant, f bisected in [0, 1] as PETSc does. */
#define KRILL_ILU_SHIFT_TRIES 5      /* shifted factorizations before f = hi (PETSc's 5) */
#define KRILL_ILU_SHIFT_MARGIN 1.1   /* alpha_top over the least dominant alpha (PETSc's) */

typedef struct krill_ilu_shift {
    double *scale;           /* n: d_i */
    int32_t bad_row;         /* ic0: the first row with s a_ii <= 0 (no shift helps), else -1 */
    double top;              /* alpha_top */
    double lo, hi;           /* the bracket of f: lo refused (or 0), hi succeeded (or 1) */
    double frac;             /* f of the factorization to make (0: A's own) */
    int tries;               /* shifted factorizations made before this one */
} krill_ilu_shift;

/* s: -1 when h is ic0 and every a_ii of a_val (h's CSR order) is negative, else 1. */
int krill_ilu_sign(const krill_ilu_host *h, const double *a_val);
/* The search's start from s A's values sa_val: d_i, bad_row, alpha_top; f = 0. */
krill_status krill_ilu_shift_begin(krill_ilu_shift *s, const krill_ilu_host *h,
                                   const double *sa_val);
void krill_ilu_shift_free(krill_ilu_shift *s);
/* alpha of the factorization to make: f alpha_top. */
double krill_ilu_shift_alpha(const krill_ilu_shift *s);
/* out = s A + alpha D (nnz values in h's CSR order; out != sa_val). */
void krill_ilu_shift_values(const krill_ilu_shift *s, const krill_ilu_host *h,
                            const double *sa_val, double *out);
/* After a factorization with the current f, refused (1) or not (0): 1 when another is to be
 * made (f updated), 0 when this success is the result, -1 when the search gives up. */
int krill_ilu_shift_next(krill_ilu_shift *s, int refused);
/* The error when the search gives up (KRILL_ERR_NUMERIC): the row with a_ii <= 0 for ic0,
 * else the largest alpha tried and the last factorization's message (krill_last_error()). */
krill_status krill_ilu_shift_refuse(const krill_ilu_shift *s, const krill_ilu_host *h,
                                    const char *name, const double *sa_val);

/* dinv[i] = 1 / val[diag[i]]: the factors' diagonal as the CPU solves use it. */
void krill_ilu_diag_inverse(const krill_ilu_host *h, const double *val, double *dinv);
/* z = U^{-1} L^{-1} r on the host, serially, in row order, with the factors val and their
 * inverse diagonal dinv (r and z distinct; z holds y between the two solves). */
void krill_ilu_solve_serial(const krill_ilu_host *h, const double *val, const double *dinv,
                            const double *r, double *z);

/* 1 when the CPU solves run level by level on `threads` threads: more than one thread and at
 * least KRILL_ILU_CPU_LEVEL_ROWS rows per level on average in both graphs. */
int krill_ilu_cpu_parallel(const krill_ilu_host *h, int threads);

/* Rows per level, on average, below which the CPU solves run serially: a level ends in a
 * barrier (about 1-2 us on 16 threads), the price of ~200 rows of 7-27 entries; below that
 * the threads wait more than they work. */
#define KRILL_ILU_CPU_LEVEL_ROWS 256

/* The factors rearranged for the level-scheduled CPU solves. Walking the rows of a level in
 * A's order jumps through memory (poisson3d's levels are the planes x + y + z = const:
 * consecutive rows of a level lie a grid line apart), which measured 5-8x slower than the
 * serial solve on one thread. So the forward solve runs in forward-level order, the
 * backward solve in backward-level order, each on its own copy of its triangle whose rows
 * are stored in that order and whose columns are renumbered to positions in it: every level
 * is a contiguous range of rows and of the vector. An apply gathers r into forward order,
 * solves, moves y to backward order, solves, and scatters z back: three permutation passes
 * besides the two streaming solves (measured on poisson3d:128, one thread: the permuted
 * forward solve 13 ms against 26 ms in A's order, each permutation pass 17-21 ms; on
 * elasticity3d, whose levels are runs of neighbouring rows, about 1 ms). Each row keeps its
 * entries in A's order, so the sums, and the bits, are the serial solve's. */
typedef struct krill_ilu_perm {
    int64_t *lower_ptr;      /* n + 1: forward position p's row: [lower_ptr[p], lower_ptr[p+1]) */
    int32_t *lower_col;      /* strictly lower entries, columns as forward positions */
    double *lower_val;
    double *lower_dinv;      /* n: ic0: 1 / l_ii by forward position; ilu0: NULL (unit) */
    int64_t *upper_ptr;      /* n + 1: backward position q's row */
    int32_t *upper_col;      /* strictly upper entries, columns as backward positions */
    double *upper_val;
    double *upper_dinv;      /* n: 1 / u_ii (1 / l_ii for ic0) by backward position */
    int32_t *mid;            /* n: backward position q -> forward position of the same row */
    double *work;            /* n: y, then z, in backward order during an apply */
} krill_ilu_perm;

/* The permuted pattern (the pointers, columns and mid) and room for the values and work,
 * which krill_ilu_perm_values fills. (The GPU keeps its own layout: krill_ilu_groups.) */
krill_status krill_ilu_perm_build(const krill_ilu_host *h, krill_ilu_perm *q);
/* The values of the factors val (A's CSR order) into q. */
void krill_ilu_perm_values(const krill_ilu_host *h, const double *val, krill_ilu_perm *q);
void krill_ilu_perm_free(krill_ilu_perm *q);
/* z = U^{-1} L^{-1} r level by level on `threads` OpenMP threads; the serial solve's bits.
 * Uses q->work: one apply at a time per preconditioner. */
void krill_ilu_solve_levels(const krill_ilu_host *h, const krill_ilu_perm *q, int threads,
                            const double *r, double *z);

/* The tasks of the GPU's plain solves (ilu_groups.c says why): the rows in groups of B
 * consecutive rows, G holding rows [G B, min(G B + B, n)); a task solves its group's rows
 * one after the other (ascending in the forward solve, descending in the backward one), and
 * the levels are those of the groups: level(G) = 1 + max level of the groups holding the
 * columns of G's rows outside G. Each triangle is stored in solve order: groups by level
 * (ascending G inside a level), a group's rows consecutive, and of each row only its entries
 * outside its group (columns renumbered to positions); the entries inside a group are the
 * GPU's small dense blocks (ilu.cu). */
#define KRILL_ILU_GROUP_SIZES 5
extern const int32_t krill_ilu_group_sizes[KRILL_ILU_GROUP_SIZES];   /* 1, 2, 3, 4, 6 */

typedef struct krill_ilu_tri_groups {
    int32_t n_groups, n_levels;
    int32_t *level_ptr;      /* n_levels + 1: level l is groups [level_ptr[l], level_ptr[l+1])
                                of the solve order */
    int32_t *group_start;    /* n_groups + 1: the s-th group holds positions
                                [group_start[s], group_start[s + 1]) */
    int32_t *order;          /* n: position -> row */
    int64_t *ptr;            /* n + 1: position p's entries outside its group */
    int32_t *col;            /* nnz: their columns as positions */
    int64_t nnz;
} krill_ilu_tri_groups;

typedef struct krill_ilu_groups {
    int32_t rows;            /* B */
    krill_ilu_tri_groups lower, upper;
    int32_t *to_backward;    /* n: forward position -> backward position of the same row */
} krill_ilu_groups;

/* The B of krill_ilu_group_sizes (at most n, except 1) whose groups have the fewest levels
 * in both triangles together, each weighted by its measured cost (ilu_groups.c); the
 * smaller B on a tie. */
krill_status krill_ilu_group_rows(const krill_ilu_host *h, int32_t *rows);
/* The level of every group G < ceil(n / rows) (level[G]) of the forward (upper = 0) or the
 * backward graph, with rows one of krill_ilu_group_sizes (1: the rows' own levels, which
 * krill_ilu_analyze computes with it); returns the number of levels. Needs h's row_ptr,
 * col and diag only. */
int32_t krill_ilu_group_levels(const krill_ilu_host *h, int32_t rows, int upper, int32_t *level);
krill_status krill_ilu_groups_build(const krill_ilu_host *h, int32_t rows, krill_ilu_groups *g);
void krill_ilu_groups_free(krill_ilu_groups *g);

/* Reproducible mode (apply_repro). Both solves row by row in level order, each row
 *   x_i = RN(b_i - sum_j a_ij x_j) [/ a_ii]   (krill_pc_repro_tri_row, precond_repro.h)
 * with the sum correctly rounded and the division by the stored diagonal (the backward
 * solve, and ic0's forward solve) rounded once: a row's bits depend on nothing but its
 * factor entries and the x_j it reads, so they are the same on any thread count, on the CPU
 * and on the GPU (which run the same function per row), whatever the level schedule. The
 * factors are the same on both devices in every mode (ilu.cu's factorization performs the
 * CPU's operations in the CPU's order), so the whole apply is. */

/* z = U^{-1} L^{-1} r on the host with the factors val (A's CSR order), level by level on
 * `threads` OpenMP threads (1: serially), in place in z (r and z distinct). */
void krill_ilu_solve_repro(const krill_ilu_host *h, const double *val, int threads,
                           const double *r, double *z);

/* A GPU thread's exact row sum holds at most KRILL_OZ_ROW_MAX_N terms (a row of a triangle
 * plus its right-hand side): KRILL_ERR_UNSUPPORTED naming the row length and the limit when
 * h has a longer row, else KRILL_OK. */
krill_status krill_ilu_gpu_repro_fits(const krill_ilu_host *h, const char *name);

/* The factors of an ilu0 or ic0 preconditioner, for tests and benchmarks. */
typedef struct krill_ilu_factors {
    int64_t n, nnz;
    int unit_lower;          /* 1: ilu0 (L has a unit diagonal); 0: ic0 (L's is stored) */
    int sign;                /* s: the factors are those of s A + alpha D (ilu_shift.c) */
    double alpha;            /* the shift (0: none) */
    const double *val;       /* nnz factor values in A's CSR order, context memory */
    const int32_t *dev_row_ptr; /* GPU: n + 1 row offsets in device memory; CPU: NULL */
    const int32_t *dev_col;     /* GPU: nnz columns in device memory; CPU: NULL */
    const krill_ilu_host *host; /* the analysis (pattern with int64 offsets, levels) */
} krill_ilu_factors;

/* KRILL_ERR_ARG unless pc is an ilu0 or ic0 preconditioner whose last factorization
 * succeeded. */
krill_status krill_pc_ilu_factors(const krill_pc *pc, krill_ilu_factors *f);

#ifdef KRILL_HAVE_CUDA
/* The GPU half (ilu.cu). create uploads the pattern, levels, the triangles in solve order
 * (groups of group_rows rows, one of krill_ilu_group_sizes; 0: krill_ilu_group_rows chooses)
 * and work arrays (n and nnz up to 2^31 - 33, and a device with cooperative launches, else
 * KRILL_ERR_UNSUPPORTED); factor uploads A's values (and the pivot thresholds), factors on
 * the device, reporting a refused row like the CPU, and packs the factors into the triangles;
 * apply queues both solves on the context's stream (one apply at a time per preconditioner:
 * they share the work vectors and the grid barrier). */
krill_status krill_ilu_cuda_create(krill_ctx *ctx, const krill_ilu_host *h, int32_t group_rows,
                                   void **dev);
/* The layout create chose: rows per group, levels of the forward and backward solves. */
void krill_ilu_cuda_layout(const void *dev, int32_t *group_rows, int32_t *forward_levels,
                           int32_t *backward_levels);
krill_status krill_ilu_cuda_factor(krill_ctx *ctx, void *dev, const krill_ilu_host *h,
                                   const char *name, const double *a_val);
krill_status krill_ilu_cuda_apply(krill_ctx *ctx, const void *dev, const double *r, double *z);
/* The reproducible apply on the device (see above; h: the analysis, for the level offsets;
 * the caller checked krill_ilu_gpu_repro_fits): one launch per level of each solve, queued
 * on the context's stream. */
krill_status krill_ilu_cuda_apply_repro(krill_ctx *ctx, const void *dev, const krill_ilu_host *h,
                                        const double *r, double *z);
void krill_ilu_cuda_factors(const void *dev, krill_ilu_factors *f);
void krill_ilu_cuda_destroy(krill_ctx *ctx, void *dev);     /* NULL-safe */
#endif

#ifdef __cplusplus
}
#endif
#endif
