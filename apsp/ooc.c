/* apsp/ooc.c - out-of-core APSP: blocked Floyd-Warshall with D in host memory, its blocks
 * streamed through the overlap scheduler (krill/overlap.h). A client of overlap/: it
 * describes blocks and never touches streams.
 *
 * D (npad x npad, npad = n rounded up to the block side s) is cut into nb x nb blocks
 * D_IJ of s x s, one region each. Round K (nb rounds) is the blocked FW of the APSP paper
 * with tiles of side s, each tile a block of the scheduler:
 *   pivot   D_KK = closure(D_KK)                         reads and writes D_KK
 *   row     D_KJ = min(D_KJ, D_KK (x) D_KJ), J != K      reads D_KK, D_KJ
 *   column  D_IK = min(D_IK, D_IK (x) D_KK), I != K      reads D_KK, D_IK
 *   rest    D_IJ = min(D_IJ, D_IK (x) D_KJ), I, J != K   reads D_IK, D_KJ, D_IJ
 * (a panel's product with the closed pivot block is the pivot's FW steps on that panel).
 * The kernels are the device's (apsp_ooc_kernels: cpu_ooc.c, gpu_ooc.cu).
 * Dependencies (`after`): the panels after their pivot, a rest block after its two panels;
 * across rounds, a block after the previous round's writer of its region and after that
 * round's readers of it (the pivot region is read by every panel, a panel region by its
 * row's or column's rest blocks), so no region is overwritten before it was read.
 *
 * Work: npad^3 relaxations, as in core. Traffic: a round sends and receives every block
 * about once (panel blocks again when evicted), 2 npad^2 elements, so 2 nb npad^2 in all:
 * s / 2 relaxations per element moved, which is what makes a large side s pay. The side is
 * the largest power-of-two multiple of the kernels' granule whose eight blocks fit the
 * memory, and at most half of n (two blocks a side at least), so there are blocks to
 * overlap. Distances only: the predecessors would double the traffic (not built). On a GPU
 * the kernels' begin page-locks D (cudaHostRegister, once: each round moves all of D, so
 * packing through staging would cost nb host copies of it) and the blocks go directly. */
#include <string.h>

#include "apsp/apsp_impl.h"
#include "krill/overlap.h"

enum { OOC_PIVOT, OOC_ROW, OOC_COLUMN, OOC_REST };

typedef struct ooc_job {
    apsp_run *run;
    const apsp_ooc_kernels *kern;
    void *state;
    int32_t side, nb;
    krill_overlap_region *regions;
    krill_overlap_block *blocks;
    int32_t *lists;              /* per block: in (3), out (1), after (3 + 2 nb) */
} ooc_job;

static int kind_of(int32_t K, int32_t I, int32_t J)
{
    return I == K ? (J == K ? OOC_PIVOT : OOC_ROW) : (J == K ? OOC_COLUMN : OOC_REST);
}

static krill_status ooc_kernel(void *user, int32_t block, void *stream, void *const *in,
                               void *const *out)
{
    ooc_job *j = (ooc_job *)user;
    const int32_t nb = j->nb, K = block / (nb * nb), I = block / nb % nb, J = block % nb;
    krill_status st;
    switch (kind_of(K, I, J)) {
    case OOC_PIVOT: st = j->kern->close(j->run, j->state, stream, out[0], j->side); break;
    case OOC_ROW:    /* in: D_KJ, D_KK */
        st = j->kern->minplus(j->run, j->state, stream, out[0], in[1], in[0], j->side);
        break;
    case OOC_COLUMN: /* in: D_IK, D_KK */
        st = j->kern->minplus(j->run, j->state, stream, out[0], in[0], in[1], j->side);
        break;
    default:         /* in: D_IJ, D_IK, D_KJ */
        st = j->kern->minplus(j->run, j->state, stream, out[0], in[1], in[2], j->side);
        break;
    }
    return st;
}

void apsp_ooc_blocks(int32_t nb, double kernel_seconds, int32_t *lists,
                     krill_overlap_block *blocks)
{
    const int32_t per = APSP_OOC_LIST_INTS(nb);
#define ID(K, I, J) (((K) * nb + (I)) * nb + (J))
    for (int32_t K = 0; K < nb; K++)
        for (int32_t I = 0; I < nb; I++)
            for (int32_t J = 0; J < nb; J++) {
                const int32_t id = ID(K, I, J), k = K - 1;
                int32_t *in = lists + (size_t)id * per, *out = in + 3, *after = in + 4;
                int32_t n_in = 0, n_after = 0;
                const int kind = kind_of(K, I, J);
                in[n_in++] = I * nb + J;
                if (kind == OOC_ROW || kind == OOC_COLUMN) in[n_in++] = K * nb + K;
                if (kind == OOC_REST) in[n_in++] = I * nb + K, in[n_in++] = K * nb + J;
                out[0] = I * nb + J;
                if (kind == OOC_ROW || kind == OOC_COLUMN) after[n_after++] = ID(K, K, K);
                if (kind == OOC_REST) after[n_after++] = ID(K, K, J), after[n_after++] = ID(K, I, K);
                if (K > 0) {     /* the previous round's writer and readers of D_IJ */
                    after[n_after++] = ID(k, I, J);
                    for (int32_t X = 0; X < nb; X++) {
                        if (X == k) continue;
                        if (I == k && J == k) {
                            after[n_after++] = ID(k, k, X);
                            after[n_after++] = ID(k, X, k);
                        } else if (I == k) {
                            after[n_after++] = ID(k, X, J);
                        } else if (J == k) {
                            after[n_after++] = ID(k, I, X);
                        }
                    }
                }
                blocks[id] = (krill_overlap_block){in, out, after, n_in, 1, n_after,
                                                   kernel_seconds};
            }
#undef ID
}

/* The blocks of all rounds (see the opening comment) over the tiles of D. */
static krill_status describe(ooc_job *j, double kernel_seconds, krill_overlap_problem *pb)
{
    krill_status st = KRILL_OK;
    const int32_t nb = j->nb, per = APSP_OOC_LIST_INTS(nb);
    const int64_t nblocks = (int64_t)nb * nb * nb;
    const size_t elem = j->run->elem, ld = (size_t)j->run->npad;
    KRILL_REQUIRE(nblocks < INT32_MAX / per, "apsp: %lld out-of-core blocks are too many",
                  (long long)nblocks);
    KRILL_ALLOC(j->regions, (size_t)nb * nb);
    KRILL_ALLOC(j->blocks, (size_t)nblocks);
    KRILL_ALLOC(j->lists, (size_t)nblocks * per);
    for (int32_t I = 0; I < nb; I++)
        for (int32_t J = 0; J < nb; J++)
            j->regions[I * nb + J] = (krill_overlap_region){
                (char *)j->run->d + ((size_t)I * j->side * ld + (size_t)J * j->side) * elem,
                (size_t)j->side * elem, (size_t)j->side, ld * elem};
    apsp_ooc_blocks(nb, kernel_seconds, j->lists, j->blocks);
    *pb = (krill_overlap_problem){j->regions, j->blocks, nb * nb, (int32_t)nblocks, ooc_kernel, j};
cleanup:
    return st;
}

/* Device bytes blocks of side s take: eight blocks and the kernels' scratch. */
static double side_bytes(const apsp_run *run, const apsp_ooc_kernels *kern, int64_t s)
{
    return 8.0 * (double)s * (double)s * (double)run->elem + kern->scratch_bytes(run, (int32_t)s);
}

/* The block side: see the opening comment. */
static krill_status choose_side(const apsp_run *run, const apsp_ooc_kernels *kern, double memory,
                                int32_t *side)
{
    krill_status st = KRILL_OK;
    int64_t s = kern->granule, half = ((int64_t)run->n + 1) / 2;
    while (side_bytes(run, kern, 2 * s) <= memory && 2 * s <= half) s *= 2;
    if (side_bytes(run, kern, s) > memory)
        st = krill_error(KRILL_ERR_DEVICE_ALLOC, "apsp: out of core, blocks of %lld need %.0f "
                         "bytes of device memory (8 blocks and scratch), more than the %.0f "
                         "allowed", (long long)s, side_bytes(run, kern, s), memory);
    *side = (int32_t)s;
    return st;
}

krill_status apsp_ooc_run(apsp_run *in_core, double memory, void *dist, krill_apsp_info *inf)
{
    krill_status st = KRILL_OK;
    apsp_run run = *in_core;
    ooc_job job;
    krill_overlap_model model;
    krill_overlap_problem pb;
    krill_overlap_plan *plan = NULL;
    krill_overlap_plan_info pinfo;
    krill_overlap_plan_opts po;
    krill_overlap_timeline tl;
    double kernel_seconds = 0, upload = 0;
    int allocated = 0;
    memset(&job, 0, sizeof job);
    memset(&tl, 0, sizeof tl);
    run.d = NULL;
    run.p = NULL;
    run.state = run.device_state = NULL;
    job.run = &run;
    job.kern = &apsp_cpu_ooc_kernels;
#ifdef KRILL_HAVE_CUDA
    if (krill_on_gpu(run.ctx)) job.kern = &apsp_gpu_ooc_kernels;
#endif
    KRILL_TRY(choose_side(&run, job.kern, memory, &job.side));
    run.tile = job.side;
    run.npad = (int32_t)(((int64_t)run.n + job.side - 1) / job.side * job.side);
    job.nb = run.npad / job.side;
    KRILL_TRY(krill_host_mem_check((size_t)run.npad * (size_t)run.npad * run.elem,
                                   "out-of-core APSP's padded D in host memory"));
    allocated = 1;                                 /* D in host memory, from the graph */
    KRILL_TRY(apsp_cpu_device.alloc(&run, 0, 2));
    KRILL_TRY(apsp_cpu_device.stamp(&run, 0));
    KRILL_TRY(apsp_cpu_device.init(&run, &upload));
    KRILL_TRY(apsp_cpu_device.stamp(&run, 1));
    KRILL_TRY(job.kern->begin(&run, job.side, &job.state));
    KRILL_TRY(job.kern->time_minplus(&run, job.state, job.side, &kernel_seconds));
    KRILL_TRY(describe(&job, kernel_seconds, &pb));
    KRILL_TRY(krill_overlap_calibrate(run.ctx, 0, &model));
    krill_overlap_plan_opts_default(&po);
    po.memory = memory - job.kern->scratch_bytes(&run, job.side);
    po.host_page_locked = job.kern->host_page_locked && job.kern->host_page_locked(job.state);
    KRILL_TRY(krill_overlap_plan_create(&model, &pb, &po, &plan));
    KRILL_TRY(krill_overlap_execute(run.ctx, plan, &tl));
    krill_overlap_plan_info_get(plan, &pinfo);
    {
        double t[2] = {0, 0};
        KRILL_TRY(apsp_cpu_device.elapsed(&run, 2, t));
        inf->t_setup = t[0];
    }
    for (int64_t e = 0; e < tl.n_events; e++) {   /* kernel time per kind */
        const krill_overlap_event *ev = &tl.events[e];
        const int32_t b = ev->block, nb = job.nb;
        int kind;
        if (ev->lane != KRILL_OVERLAP_LANE_KERNEL) continue;
        kind = kind_of(b / (nb * nb), b / nb % nb, b % nb);
        *(kind == OOC_PIVOT ? &inf->t_pivot : kind == OOC_REST ? &inf->t_rest : &inf->t_panels) +=
            ev->end - ev->start;
    }
    inf->t_compute = tl.elapsed;
    inf->out_of_core = job.side;
    inf->ooc_bytes_moved = pinfo.send_bytes + pinfo.recv_bytes;
    inf->tile = job.side;
    inf->n_padded = run.npad;
    {
        double t = krill_wtime();
        KRILL_TRY(apsp_cpu_device.fetch(&run, dist, NULL));
        inf->t_download = krill_wtime() - t;
    }
cleanup:
    krill_overlap_timeline_free(&tl);
    krill_overlap_plan_destroy(&plan);
    if (job.kern && job.kern->end) job.kern->end(&run, job.state);
    if (allocated) apsp_cpu_device.release(&run);
    krill_free(job.regions);
    krill_free(job.blocks);
    krill_free(job.lists);
    return st;
}
