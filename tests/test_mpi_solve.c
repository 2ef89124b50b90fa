/* test_mpi_solve: every solver on a distributed matrix against the same solve on one
 * process (tests/mpi.cmake: 1, 2, 3, 4 ranks). CG, GMRES (CGS2, DCGS2, MGS), FGMRES,
 * s-step GMRES, BiCGStab and MINRES with no preconditioner and Jacobi, on a balanced partition and on one
 * with a rank of zero rows: the same reason, the iteration count within one (rounding: the
 * ranks add their sums in another order; what was seen is printed), the solution within
 * rounding of the serial one. ILU(0) / IC(0) of each rank's diagonal block converge (on one
 * rank: the serial iteration count exactly; on one GPU rank within one, the GPU's
 * rounding). With KRILL_TEST_MPI_DEVICE=gpu (mpi_testutil.h)
 * the distributed solves run on one GPU per rank against the same serial CPU solves.
 * Refusals: bad device ordinals, GPUs where there are none, mixed devices (the reproducible
 * mode across ranks, on CPU and GPU ranks: test_mpi_repro). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "mpi_testutil.h"

#define RTOL 1e-10
#define XTOL 1e-7    /* max |x - x_serial| / max |x_serial| */

static krill_ctx *ctx, *serial;
static int rank, size, max_it_diff;

typedef struct solve_case {
    const char *spec, *pc;
    krill_solver_type solver;
    krill_ortho ortho;
    int restart;
    int sstep;   /* s-step GMRES's block (0: GMRES) */
} solve_case;

static void options(const solve_case *c, krill_solver_opts *o)
{
    krill_solver_opts_default(o);
    o->solver = c->solver;
    o->ortho = c->ortho;
    o->rtol = RTOL;
    o->maxit = 2000;
    if (c->restart) o->restart = c->restart;
    o->sstep = c->sstep;
}

/* The serial solve of A x = b (b = mtu_vector, x0 = 0) on rank 0. */
static void solve_serial(const solve_case *c, const krill_csr *g, double *x, krill_solve_info *info)
{
    mtu_system sys;
    krill_solver_opts o;
    options(c, &o);
    mtu_system_serial(serial, g, &sys);
    mtu_system_solve(&sys, c->pc, &o, x, info);
    mtu_system_free(&sys);
}

/* The distributed solve; x on every rank. Collective. */
static void solve_dist(const solve_case *c, const krill_csr *g, mtu_partition p, double *x,
                       krill_solve_info *info)
{
    mtu_system sys;
    krill_solver_opts o;
    options(c, &o);
    mtu_system_dist(ctx, g, p, &sys);
    mtu_system_solve(&sys, c->pc, &o, x, info);
    mtu_system_free(&sys);
}

static const char *solver_name(const solve_case *c)
{
    static const char *const orthos[] = {"cgs2", "mgs", "dcgs2"};
    static char buf[64];
    snprintf(buf, sizeof buf, "%s%s%s", krill_solver_name(c->solver),
             c->solver == KRILL_SOLVER_GMRES || c->solver == KRILL_SOLVER_FGMRES ? "/" : "",
             c->solver == KRILL_SOLVER_GMRES || c->solver == KRILL_SOLVER_FGMRES
                 ? orthos[c->ortho] : "");
    if (c->sstep > 1) snprintf(buf, sizeof buf, "gmres/sstep%d", c->sstep);
    return buf;
}

/* Every rank's info must be the same (the reductions are global); rank 0 compares with the
 * serial solve. exact_pc: the preconditioner does not depend on the partition. */
static void compare(const solve_case *c, mtu_partition p, int exact_pc)
{
    krill_csr *g = NULL;
    krill_solve_info si, di;
    double *xs = NULL, *xd = NULL;
    int it[2], lo[2];
    CHECK_OK(krill_gen(c->spec, &g));
    xs = malloc((size_t)g->n_rows * sizeof *xs);
    xd = malloc((size_t)g->n_rows * sizeof *xd);
    memset(&si, 0, sizeof si);
    if (rank == 0) solve_serial(c, g, xs, &si);
    solve_dist(c, g, p, xd, &di);
    it[0] = di.iterations;
    it[1] = -di.iterations;
    MPI_Allreduce(it, lo, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    CHECK(lo[0] == -lo[1]);   /* every rank counted the same iterations */
    /* the time inside MPI: some, within the solve's; none without a communicator */
    CHECK(di.times.comm > 0.0 && di.times.comm <= di.times.total);
    CHECK(rank != 0 || si.times.comm == 0.0);
    /* the halo exchanges: in flight some time on more ranks than one (a balanced partition
     * of these matrices has ghosts on every rank), hidden at most all of it; none alone */
    CHECK(di.times.halo_hidden >= 0.0 && di.times.halo_hidden <= di.times.halo + 1e-12);
    CHECK(di.times.halo <= di.times.total);
    CHECK(size == 1 || p != MTU_BALANCED || di.times.halo > 0.0);
    CHECK(size > 1 || di.times.halo == 0.0);
    CHECK(rank != 0 || (si.times.halo == 0.0 && si.times.halo_hidden == 0.0));
    if (rank == 0) {
        int diff = abs(di.iterations - si.iterations);
        double err = tu_max_rel_diff(xd, xs, g->n_rows);
        printf("  %-15s %-7s %-6s %-22s serial %4d, distributed %4d it, x diff %.1e\n",
               solver_name(c), c->pc, c->spec, mtu_partition_name(p), si.iterations,
               di.iterations, err);
        CHECK(si.reason > 0 && di.reason > 0);
        CHECK(di.relres <= RTOL * 1.01);
        if (exact_pc) {
            CHECK(diff <= 1);
            CHECK(err <= XTOL);
            if (diff > max_it_diff) max_it_diff = diff;
        } else if (size == 1) {   /* the serial count; on a GPU rank within rounding */
            CHECK(diff <= (krill_ctx_device(ctx) == KRILL_DEVICE_CUDA ? 1 : 0));
        }
    }
    krill_solve_info_free(&si);
    krill_solve_info_free(&di);
    free(xs);
    free(xd);
    krill_csr_destroy(&g);
}

static void test_solvers(void)
{
    static const solve_case cases[] = {
        {"poisson3d:8", "none", KRILL_SOLVER_CG, KRILL_ORTHO_CGS2, 0, 0},
        {"elasticity3d:3,2,2", "jacobi", KRILL_SOLVER_CG, KRILL_ORTHO_CGS2, 0, 0},
        {"convdiff3d:7,2", "none", KRILL_SOLVER_GMRES, KRILL_ORTHO_CGS2, 20, 0},
        {"convdiff3d:7,2", "jacobi", KRILL_SOLVER_GMRES, KRILL_ORTHO_CGS2, 20, 0},
        {"convdiff3d:7,2", "none", KRILL_SOLVER_GMRES, KRILL_ORTHO_DCGS2, 20, 0},
        {"convdiff3d:7,2", "jacobi", KRILL_SOLVER_GMRES, KRILL_ORTHO_MGS, 20, 0},
        {"convdiff3d:7,2", "none", KRILL_SOLVER_GMRES, KRILL_ORTHO_DCGS2, 20, 4},
        {"convdiff3d:7,2", "jacobi", KRILL_SOLVER_GMRES, KRILL_ORTHO_DCGS2, 20, 5},
        {"convdiff3d:7,2", "jacobi", KRILL_SOLVER_FGMRES, KRILL_ORTHO_CGS2, 20, 0},
        {"convdiff3d:7,2", "jacobi", KRILL_SOLVER_FGMRES, KRILL_ORTHO_DCGS2, 20, 0},
        {"convdiff3d:7,2", "jacobi", KRILL_SOLVER_BICGSTAB, KRILL_ORTHO_CGS2, 0, 0},
        {"poisson3d:7", "jacobi", KRILL_SOLVER_MINRES, KRILL_ORTHO_CGS2, 0, 0},
        {"poisson3d:8", "none", KRILL_SOLVER_PIPECG, KRILL_ORTHO_CGS2, 0, 0},
        {"elasticity3d:3,2,2", "jacobi", KRILL_SOLVER_PIPECG, KRILL_ORTHO_CGS2, 0, 0},
    };
    if (rank == 0) printf("solves on %d ranks (rtol %g):\n", size, RTOL);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        compare(&cases[k], MTU_BALANCED, 1);
        compare(&cases[k], MTU_EMPTY_SECOND, 1);
    }
    if (rank == 0) printf("largest iteration difference from the serial solve: %d\n", max_it_diff);
}

/* ILU(0) and IC(0) of each rank's diagonal block (block Jacobi across ranks). */
static void test_block_pc(void)
{
    static const solve_case cases[] = {
        {"convdiff3d:7,2", "ilu0", KRILL_SOLVER_GMRES, KRILL_ORTHO_CGS2, 20, 0},
        {"poisson3d:8", "ic0", KRILL_SOLVER_CG, KRILL_ORTHO_CGS2, 0, 0},
        {"elasticity3d:3,2,2", "bjacobi", KRILL_SOLVER_CG, KRILL_ORTHO_CGS2, 0, 0},
        {"poisson3d:8", "ic0", KRILL_SOLVER_PIPECG, KRILL_ORTHO_CGS2, 0, 0},
    };
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++)
        compare(&cases[k], MTU_BALANCED, 0);
}

/* Refused, with the same status on every rank: a device ordinal that is not one; a GPU where
 * there is none; ranks on different kinds of device. */
static void test_refusals(void)
{
    krill_ctx *other = NULL;
    krill_ctx_opts o = KRILL_CTX_OPTS_INIT;
    int gpus = krill_cuda_device_count(), fewest = 0;
    MPI_Allreduce(&gpus, &fewest, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    o.device = KRILL_DEVICE_CUDA;
    o.device_id = -7;
    CHECK_STATUS(krill_mpi_ctx_create(MPI_COMM_WORLD, &o, &other), KRILL_ERR_ARG);
    CHECK(other == NULL);
    o.device_id = KRILL_DEVICE_ID_LOCAL_RANK;
    if (fewest == 0) {
        CHECK_STATUS(krill_mpi_ctx_create(MPI_COMM_WORLD, &o, &other), KRILL_ERR_NO_DEVICE);
        CHECK(other == NULL);
    } else {
        CHECK_OK(krill_mpi_ctx_create(MPI_COMM_WORLD, &o, &other));
        CHECK(other && krill_ctx_device(other) == KRILL_DEVICE_CUDA);
        CHECK(other && strstr(krill_ctx_describe(other), "MPI rank") != NULL);
        if (other)   /* built since: test_mpi_repro on GPU ranks */
            CHECK_OK(krill_ctx_set_repro(other, KRILL_REPRO_OZAKI, 0));
        krill_ctx_destroy(&other);
        if (size > 1) {   /* rank 0 on the CPU, the others on GPUs */
            o.device = rank == 0 ? KRILL_DEVICE_CPU : KRILL_DEVICE_CUDA;
            CHECK_STATUS(krill_mpi_ctx_create(MPI_COMM_WORLD, &o, &other), KRILL_ERR_ARG);
            CHECK(other == NULL);
        }
    }
    CHECK(krill_ctx_size(ctx) == size && krill_ctx_rank(ctx) == rank);
    CHECK(strstr(krill_ctx_describe(ctx), "MPI rank") != NULL);
}

int main(int argc, char **argv)
{
    krill_ctx_opts o = KRILL_CTX_OPTS_INIT;
    ctx = mtu_init(&argc, &argv);
    rank = krill_ctx_rank(ctx);
    size = krill_ctx_size(ctx);
    o.device = KRILL_DEVICE_CPU;
    o.threads = 1;
    CHECK_OK(krill_ctx_create(&o, &serial));
    test_solvers();
    test_block_pc();
    test_refusals();
    krill_ctx_destroy(&serial);
    return mtu_finish("test_mpi_solve", &ctx);
}
