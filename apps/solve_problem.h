/* apps/solve_problem.h - what cmd_solve.c (the options, the solve and the report) and
 * solve_problem.c (rank 0's problem setup: A, the solver, b and the reordering) of
 * `krill solve` share: the parsed options and the name tables they index. */
#ifndef KRILL_SOLVE_PROBLEM_H
#define KRILL_SOLVE_PROBLEM_H

#include "cli_impl.h"

/* The default problem: the elasticity cantilever, a 5:1 beam of 80 x 16 x 16 unit-cube
 * elements clamped at x = 0: 69,360 dofs, 5.1 million nonzeros (62 MB in CSR). With
 * b = A*1, unpreconditioned CG converges to rtol 1e-8 in about 500 iterations, which took
 * 2.6 s on a 2-core CPU (2 OpenMP threads): long enough to show the time breakdown, short
 * enough for a first run. (32 x 12 x 12 took 0.3 s, 64 x 20 x 20 2.9 s.) */
#define DEFAULT_PROBLEM "elasticity3d:80,16,16"

/* The choices of --solver, --ortho and --reorder (NULL-terminated, for cli_parse); the
 * krill values they stand for are solve_problem.c's. */
extern const char *const cli_solver_names[];  /* gmres, cg, fgmres, bicgstab, minres, pipecg */
extern const char *const cli_ortho_names[];   /* cgs2, mgs, dcgs2 */
extern const char *const cli_reorder_names[]; /* none, rcm */
enum { REORDER_NONE, REORDER_RCM };           /* indices in cli_reorder_names */

typedef struct solve_args {
    const char *matrix_path;     /* positional A.mtx, or NULL */
    const char *gen_spec;        /* --gen, or NULL */
    const char *format;          /* --format, NULL = csr */
    const char *rhs;             /* --rhs */
    const char *out_path;        /* --out */
    const char *history_path;    /* --history */
    int solver;                  /* index in cli_solver_names, -1 = choose from A */
    int ortho;                   /* index in cli_ortho_names */
    int device;                  /* index in cmd_solve.c's device_names */
    const char *precond;         /* --precond NAME[:PARAM]; NULL = none */
    int reorder;                 /* index in cli_reorder_names */
    int partition;               /* index in cmd_solve.c's partition_names */
    int threads;                 /* 0 = OpenMP's default */
    int runs;                    /* --runs N, 0 = none */
    int repro, repro_slices;     /* --repro[=S] */
    int json, monitor, quiet, help;
    krill_solver_opts opts;      /* rtol, atol, maxit, restart from the options */
} solve_args;

/* Rank 0's part before the solve: A (*csr: read, generated or the default problem; square),
 * the solver, b (*host_b, n doubles) and with --reorder rcm the reordering (*perm,
 * perm[new] = old; A and b then in the RCM numbering). *host_x (n doubles) is allocated for
 * the solution. What it made is the caller's to free, also on failure. Returns an exit code
 * (after printing the message). */
int cli_solve_make_problem(const solve_args *args, cli_solve_report *report, krill_csr **csr,
                           double **host_b, double **host_x, int32_t **perm);
/* Rank 0's part when every rank reads its own rows of a binary A (cli_ranks_read): the
 * header gives the size, the writer's flags the solver; b unless it is A*1. Allocates
 * *host_b and *host_x as cli_solve_make_problem does. */
int cli_solve_make_problem_header(const solve_args *args, cli_solve_report *report,
                                  double **host_b, double **host_x);

#endif
