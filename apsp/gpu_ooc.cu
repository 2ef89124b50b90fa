/* apsp/gpu_ooc.cu - the GPU kernels of out-of-core APSP (apsp_ooc_kernels, apsp/ooc.c) on
 * packed side x side blocks in device memory.
 *
 * A run over one block (`sub`, npad = side) whose device state sends every launch to the
 * lane's stream: the closure is fw-rec on it; a product is one k_minplus launch (inner
 * dimension side), into the scratch block and copied back when c is also an operand. */
#include "apsp/gpu_minplus.cuh"

typedef struct ooc_state {
    apsp_run sub;
    gpu_state gs;
    void *scratch;               /* scratch_cells(side) elements */
    void *registered;            /* D, page-locked by begin (NULL: registration failed) */
} ooc_state;

/* The side of the timed product: half the block's (a multiple of the tile), or the block's
 * own below two tiles. */
static int64_t probe_side(int64_t side)
{
    return side / 2 >= APSP_GPU_TILE ? side / 2 / APSP_GPU_TILE * APSP_GPU_TILE : side;
}

/* The scratch block: a product's output when it is also an operand (side^2), and the three
 * operands of the timed product (3 probe^2). */
static size_t scratch_cells(int64_t side)
{
    const int64_t q = probe_side(side);
    return (size_t)(side * side > 3 * q * q ? side * side : 3 * q * q);
}

static void ooc_end(apsp_run *run, void *state)
{
    ooc_state *s = (ooc_state *)state;
    if (s) {
        apsp_gpu_fw_rec.end(&s->sub);
        if (s->registered) (void)cudaHostUnregister(s->registered);
        krill_cuda_free(run->ctx, s->scratch);
        krill_cuda_free(run->ctx, s->gs.big);
        krill_free(s);
    }
}

static krill_status ooc_begin(apsp_run *run, int32_t side, void **state)
{
    krill_status st = KRILL_OK;
    ooc_state *s = NULL;
    KRILL_CALLOC(s, 1);
    s->sub = *run;
    s->sub.d = NULL;
    s->sub.p = NULL;
    s->sub.state = NULL;
    s->sub.n = s->sub.npad = side;
    s->sub.tile = APSP_GPU_TILE;
    s->sub.device_state = &s->gs;
    KRILL_TRY(krill_cuda_alloc(run->ctx, (void **)&s->gs.big, sizeof(int), "APSP packing flag"));
    KRILL_TRY(cuda_ok(cudaMemset(s->gs.big, 0, sizeof(int)), "cudaMemset"));
    KRILL_TRY(krill_cuda_alloc(run->ctx, &s->scratch, scratch_cells(side) * run->elem,
                               "out-of-core APSP scratch block"));
    KRILL_TRY(apsp_gpu_fw_rec.begin(&s->sub));
    /* D page-locked for direct copies; where the system refuses, the scheduler stages */
    if (cudaHostRegister(run->d, (size_t)run->npad * (size_t)run->npad * run->elem,
                         cudaHostRegisterDefault) == cudaSuccess)
        s->registered = run->d;
    else
        (void)cudaGetLastError();
    *state = s;
    s = NULL;
cleanup:
    ooc_end(run, s);
    return st;
}

/* device bytes ooc_begin takes beside the scheduler's blocks: the scratch block, fw-rec's
   quadrant (gpu_rec_begin: none below two tiles) and the flag */
static double ooc_scratch_bytes(const apsp_run *run, int32_t side)
{
    const int64_t h = side / APSP_GPU_TILE / 2 * APSP_GPU_TILE;
    const double quadrant = h > 0 ? (double)(side - h) * (double)(side - h) : 0;
    return ((double)scratch_cells(side) + quadrant) * (double)run->elem + 4096;
}

static krill_status ooc_close(apsp_run *run, void *state, void *stream, void *d, int32_t side)
{
    ooc_state *s = (ooc_state *)state;
    (void)run;
    (void)side;
    s->sub.d = d;
    s->gs.side = (cudaStream_t)stream;
    return apsp_gpu_fw_rec.whole(&s->sub);
}

static krill_status ooc_product(apsp_run *sub, void *c, const void *a, const void *b,
                                void *scratch, int64_t side)
{
    krill_status st = KRILL_OK;
    const int alias = a == c || b == c;
    mp_args g;
    memset(&g, 0, sizeof g);
    g.a = a;
    g.b = b;
    g.cin = c;
    g.cout = alias ? scratch : c;
    g.lda = g.ldb = g.ldc = g.ldo = side;
    g.kdim = (int32_t)side;
    g.skip_r = g.skip_c = g.skip_r2 = g.skip_c2 = APSP_NO_SKIP;
    g.hi = sub->clamp_hi;
    g.big = big_flag(sub);
    KRILL_TRY(apsp_gpu_product(sub, g, side, side));
    if (alias)
        KRILL_TRY(cuda_ok(cudaMemcpyAsync(c, scratch, (size_t)(side * side) * sub->elem,
                                          cudaMemcpyDeviceToDevice, stream_of(sub)),
                          "out-of-core product copy back"));
cleanup:
    return st;
}

static krill_status ooc_minplus(apsp_run *run, void *state, void *stream, void *c, const void *a,
                                const void *b, int32_t side)
{
    ooc_state *s = (ooc_state *)state;
    (void)run;
    s->gs.side = (cudaStream_t)stream;
    return ooc_product(&s->sub, c, a, b, s->scratch, side);
}

/* One product of side q = probe_side(side) on the scratch block's three operands, on the
 * context's stream, CUDA events, best of 3 after a warm-up, scaled by (side / q)^3. */
static krill_status ooc_time(apsp_run *run, void *state, int32_t side, double *seconds)
{
    krill_status st = KRILL_OK;
    ooc_state *s = (ooc_state *)state;
    const int64_t q = probe_side(side);
    char *base = (char *)s->scratch;
    const size_t block = (size_t)(q * q) * run->elem;
    cudaEvent_t e[2] = {NULL, NULL};
    float ms = 0;
    double best = 1e30, scale = (double)side / (double)q;
    s->gs.side = (cudaStream_t)run->ctx->cuda->stream;
    KRILL_TRY(cuda_ok(cudaMemsetAsync(base, 0, 3 * block, s->gs.side), "cudaMemsetAsync"));
    for (int k = 0; k < 2; k++) KRILL_TRY(cuda_ok(cudaEventCreate(&e[k]), "cudaEventCreate"));
    for (int rep = 0; rep < 4; rep++) {
        KRILL_TRY(cuda_ok(cudaEventRecord(e[0], s->gs.side), "cudaEventRecord"));
        KRILL_TRY(ooc_product(&s->sub, base + 2 * block, base, base + block, NULL, q));
        KRILL_TRY(cuda_ok(cudaEventRecord(e[1], s->gs.side), "cudaEventRecord"));
        KRILL_TRY(cuda_ok(cudaEventSynchronize(e[1]), "cudaEventSynchronize"));
        KRILL_TRY(cuda_ok(cudaEventElapsedTime(&ms, e[0], e[1]), "cudaEventElapsedTime"));
        if (rep > 0 && 1e-3 * ms < best) best = 1e-3 * ms;
    }
    *seconds = best * scale * scale * scale;
cleanup:
    for (int k = 0; k < 2; k++)
        if (e[k]) (void)cudaEventDestroy(e[k]);
    return st;
}

static int ooc_page_locked(const void *state)
{
    return ((const ooc_state *)state)->registered != NULL;
}

extern "C" const apsp_ooc_kernels apsp_gpu_ooc_kernels = {
    APSP_GPU_TILE, ooc_begin, ooc_close, ooc_minplus, ooc_time, ooc_scratch_bytes, ooc_end,
    ooc_page_locked,
};
