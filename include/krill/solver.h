/* krill/solver.h - Krylov solvers.
 *
 * krill_solve runs restarted GMRES(m) or FGMRES(m) (right-preconditioned; FGMRES allows a
 * preconditioner that changes from one application to the next), CG/PCG (A and M symmetric
 * definite, positive or negative), BiCGStab (right-preconditioned), or MINRES (A symmetric,
 * possibly indefinite -- saddle-point systems; M symmetric definite), or pipelined CG (CG's
 * conditions; its reduction hidden behind the SpMV on MPI ranks) on A x = b, with x
 * holding the initial guess on entry and the solution on return. The return status says
 * whether the call worked; whether the method converged is info->reason. */
#ifndef KRILL_SOLVER_H
#define KRILL_SOLVER_H

#include "krill/mat.h"
#include "krill/precond.h"
#include "krill/vec.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef enum krill_solver_type {
    KRILL_SOLVER_GMRES = 0,
    KRILL_SOLVER_CG = 1,
    KRILL_SOLVER_FGMRES = 2,     /* flexible GMRES: keeps M^{-1} v_j (m more vectors) */
    KRILL_SOLVER_BICGSTAB = 3,   /* BiCGStab: two SpMVs per iteration */
    KRILL_SOLVER_MINRES = 4,     /* MINRES: symmetric A, indefinite allowed; M definite */
    KRILL_SOLVER_PIPECG = 5      /* pipelined CG: CG's iterates (in exact arithmetic) with the
                                    one reduction per iteration overlapped with M and the
                                    SpMV; more vector traffic (for many MPI ranks) */
} krill_solver_type;

typedef enum krill_ortho {
    KRILL_ORTHO_CGS2 = 0,    /* classical Gram-Schmidt, applied twice: two GEMV-shaped passes */
    KRILL_ORTHO_MGS = 1,     /* modified Gram-Schmidt: j+1 dot/axpy pairs at step j */
    KRILL_ORTHO_DCGS2 = 2    /* delayed CGS2 (low synchronization): v_j's second pass is
                                merged into step j+1, one fused pass of inner products and
                                one update pass per step, one reduction */
} krill_ortho;

/* The largest krill_solver_opts.sstep: polynomial bases of more vectors are too
 * ill-conditioned for a Gram-matrix (Cholesky-QR) orthogonalization in double precision. */
#define KRILL_SSTEP_MAX 32

typedef enum krill_reason {
    KRILL_REASON_NONE = 0,            /* not run */
    KRILL_CONVERGED_RTOL = 1,         /* ||r|| <= rtol * ||b|| */
    KRILL_CONVERGED_ATOL = 2,         /* ||r|| <= atol */
    KRILL_CONVERGED_ZERO_RHS = 3,     /* b == 0: x = 0 is the answer */
    KRILL_DIVERGED_MAXIT = -1,        /* maxit iterations without converging */
    KRILL_DIVERGED_BREAKDOWN = -2,    /* the Krylov process broke down without a solution
                                         (GMRES: singular R; BiCGStab: r0'A M^-1 p, t's or
                                         r0'r ~ 0 in the first iteration after a (re)start:
                                         later ones restart from the true residual) */
    KRILL_DIVERGED_INDEFINITE = -3,   /* CG, pipelined CG: p'Ap or r'z zero, or its sign
                                         changed between
                                         iterations (A or M not definite); MINRES: r'M^-1 r
                                         <= 0 (M not positive definite) */
    KRILL_DIVERGED_NAN = -4           /* a NaN or Inf appeared in the iteration */
} krill_reason;

/* Called after every iteration with the estimated (recurrence) residual norm. Return
 * nonzero to stop the solve (reason stays DIVERGED_MAXIT). */
typedef int (*krill_monitor_fn)(int iteration, double residual_norm, void *user);

typedef struct krill_solver_opts {
    krill_solver_type solver;
    double rtol;             /* relative to ||b||; default 1e-8 */
    double atol;             /* absolute; default 0 */
    int maxit;               /* total iterations; default 10000. An iteration is one SpMV
                                past the initial one (GMRES, FGMRES, CG), or two (BiCGStab) */
    int restart;             /* GMRES / FGMRES restart length m; default 30 */
    krill_ortho ortho;       /* GMRES / FGMRES; default DCGS2 */
    int sstep;               /* GMRES: s-step (communication-avoiding) GMRES with blocks of
                                S = sstep vectors -- a Newton polynomial basis, block CGS2
                                and Cholesky-QR between blocks (ortho is not used); 0 or 1
                                (default 0): ordinary GMRES. 2 <= S <= KRILL_SSTEP_MAX,
                                restart a multiple of S; not with FGMRES (it needs a fixed
                                preconditioner) or the other solvers */
    krill_monitor_fn monitor;
    void *monitor_data;
} krill_solver_opts;

void krill_solver_opts_default(krill_solver_opts *opts);

typedef struct krill_solve_times {    /* seconds */
    double setup;            /* workspace, initial residual */
    double spmv;
    double precond;
    double ortho;            /* orthogonalization (GMRES, FGMRES) and dot products / norms
                                (CG, BiCGStab) */
    double other;            /* vector updates, host-side least squares, synchronization */
    double total;
    double comm;             /* of the above, the time inside MPI (reductions, agreement,
                                halo exchange including the wait for it); 0 without a
                                communicator */
    double halo;             /* distributed SpMVs: seconds their halo exchanges were in
                                flight (first message posted to last ghost received; the
                                exposed part is in comm) */
    double halo_hidden;      /* of halo, the seconds the rank's diagonal block's product ran
                                meanwhile: halo_hidden / halo is the hidden fraction */
} krill_solve_times;

typedef struct krill_solve_info {
    krill_reason reason;
    int iterations;
    double relres;           /* true ||b - A x|| / ||b||, recomputed at the end */
    double resnorm;          /* true ||b - A x|| */
    double bnorm;
    double *history;         /* estimated residual norm per iteration, [0] = initial
                                (BiCGStab: after each full iteration, or its half step when
                                that one converged; MINRES with M: ||r||_{M^-1} scaled to
                                ||r||_2 at the start and at each true residual) */
    int history_len;
    krill_solve_times times;
} krill_solve_info;

krill_status krill_solve(const krill_mat *a, const krill_pc *pc /* NULL = none */,
                         const krill_vec *b, krill_vec *x, const krill_solver_opts *opts,
                         krill_solve_info *info);

/* Release info->history (NULL-safe). */
void krill_solve_info_free(krill_solve_info *info);

const char *krill_reason_string(krill_reason reason);    /* e.g. "converged (rtol)" */
/* The solver's name as `krill solve --solver` takes it ("gmres", "pipecg", ...). */
const char *krill_solver_name(krill_solver_type solver);

#ifdef __cplusplus
}
#endif
#endif
