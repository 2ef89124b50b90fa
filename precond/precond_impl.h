/* precond/precond_impl.h - the preconditioner function table, the registry and what the
 * solvers may use of a preconditioner.
 *
 * Same pattern as formats/formats_impl.h: one const table per preconditioner, filled with
 * designated initializers, listed by name in the registry (precond.c). A preconditioner
 * works on raw pointers in its context's memory and reaches the matrix only through
 * krill_mat_*_raw and the BLAS-1 of core/, so one table serves the CPU and the GPU.
 * Adding a preconditioner is one file and one registry line. */
#ifndef KRILL_PRECOND_IMPL_H
#define KRILL_PRECOND_IMPL_H

#include "core/core_impl.h"
#include "formats/formats_impl.h"
#include "krill/precond.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct krill_pc_ops {
    const char *name;                    /* registry name, e.g. "jacobi" */
    const char *summary;                 /* one line for help texts and errors */
    /* Build from a square matrix. `param` is the text after "name:" (NULL if none); a
     * preconditioner that takes no parameter refuses one with KRILL_ERR_ARG. */
    krill_status (*build)(krill_ctx *ctx, const krill_mat *mat, const char *param,
                          void **impl);
    /* z = M^{-1} r; r and z are distinct, n_rows long, in context memory. */
    krill_status (*apply)(krill_ctx *ctx, const void *impl, const double *r, double *z);
    /* The same in reproducible mode (krill_ctx_repro(ctx) != KRILL_REPRO_OFF), called instead
     * of apply then: every row sum correctly rounded (precond_repro.h), every other operation
     * one rounding, so that z has the same bits on any thread count and on the CPU and the
     * GPU. NULL: apply's bits are already independent of both (z_i = r_i * d_i, or a copy). */
    krill_status (*apply_repro)(krill_ctx *ctx, const void *impl, const double *r, double *z);
    /* Recompute from the matrix's current values (same pattern as at build). */
    krill_status (*update)(krill_ctx *ctx, void *impl, const krill_mat *mat);
    /* Optional (NULL = not diagonal): when M^{-1} is a diagonal matrix D, its entries in
     * context memory, so that a solver can fuse z = D r into its own vector updates
     * instead of calling apply (CG does; it saves a pass over memory per iteration). */
    const double *(*inverse_diagonal)(const void *impl);
    int is_identity;                     /* 1 when M = I: solvers skip apply altogether */
    void (*destroy)(krill_ctx *ctx, void *impl);  /* NULL-safe on impl */
    /* Optional (NULL: krill_pc_describe gives the summary): one line saying what was built,
     * e.g. the block size bjacobi detected. Owned by impl. */
    const char *(*describe)(const void *impl);
} krill_pc_ops;

struct krill_pc {
    krill_ctx *ctx;
    const krill_mat *mat;                /* the matrix it was built from (not owned) */
    const krill_pc_ops *ops;
    void *impl;
    int64_t n;                           /* rows of the matrix = length of r and z */
    char name[64];                       /* as asked, e.g. "jacobi" */
};

/* Preconditioner tables, one per file. */
extern const krill_pc_ops krill_pc_none_ops;     /* precond.c */
extern const krill_pc_ops krill_pc_jacobi_ops;   /* jacobi.c */
extern const krill_pc_ops krill_pc_bjacobi_ops;  /* bjacobi.c */
extern const krill_pc_ops krill_pc_ilu0_ops;     /* ilu.c (internals: ilu_impl.h) */
extern const krill_pc_ops krill_pc_ic0_ops;      /* ilu.c */
#ifdef KRILL_HAVE_CUDA
/* bjacobi.cu: z = blockdiag(Binv_k) r on the device, n rows, b x b row-major blocks. */
krill_status krill_bjacobi_cuda_apply(krill_ctx *ctx, int64_t n, int b, const double *binv,
                                      const double *r, double *z);
/* The same with every row correctly rounded (precond_repro.h): apply_repro's GPU half. */
krill_status krill_bjacobi_cuda_apply_repro(krill_ctx *ctx, int64_t n, int b, const double *binv,
                                            const double *r, double *z);
#endif

/* z = M^{-1} r on raw pointers in the preconditioner's context memory (no checks: the
 * solvers validated everything once; pc is not NULL). In reproducible mode: apply_repro
 * where the table has one. */
krill_status krill_pc_apply_raw(const krill_pc *pc, const double *r, double *z);

/* 1 when pc is NULL or M = I. */
int krill_pc_is_identity(const krill_pc *pc);

/* D when M^{-1} = D is diagonal (context memory, n entries), else NULL. */
const double *krill_pc_inverse_diagonal(const krill_pc *pc);

#ifdef __cplusplus
}
#endif
#endif
