/* apsp/gpu_device.cu - the device layer of APSP on the GPU (apsp_device): D and P in device
 * memory, built from the uploaded graph by two kernels (fill, then one thread per vertex for
 * its arcs), CUDA-event time stamps, the int32 packing flag, and the download of the n x n
 * corner through pinned staging buffers. */
#include "apsp/gpu_kernels.cuh"

/* ---- the device layer ------------------------------------------------------------------------ */

static krill_status gpu_free_bytes(apsp_run *run, double *bytes)
{
    krill_status st = KRILL_OK;
    size_t free_b = 0, total_b = 0;
    (void)run;
    KRILL_TRY(cuda_ok(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo"));
    *bytes = (double)free_b;
cleanup:
    return st;
}

static krill_status gpu_alloc(apsp_run *run, int paths, int stamps)
{
    krill_status st = KRILL_OK;
    gpu_state *s = NULL;
    const size_t cells = (size_t)run->npad * (size_t)run->npad;
    KRILL_CALLOC(s, 1);
    run->device_state = s;
    KRILL_TRY(krill_cuda_alloc(run->ctx, &run->d, cells * run->elem, "APSP distance matrix D"));
    if (paths)
        KRILL_TRY(krill_cuda_alloc(run->ctx, (void **)&run->p, cells * 4,
                                   "APSP predecessor matrix P"));
    KRILL_TRY(krill_cuda_alloc(run->ctx, (void **)&s->big, sizeof(int), "APSP packing flag"));
    KRILL_CALLOC(s->events, stamps);
    for (; s->n_events < stamps; s->n_events++)
        KRILL_TRY(cuda_ok(cudaEventCreate(&s->events[s->n_events]), "cudaEventCreate"));
cleanup:
    return st;
}

template <typename T, bool WP>
static krill_status init_d(apsp_run *run, const int64_t *row_ptr, const int32_t *col,
                           const double *val)
{
    krill_status st = KRILL_OK;
    const int threads = 256;
    const int64_t cells = (int64_t)run->npad * run->npad;
    const int fill_blocks = (int)((cells + threads - 1) / threads < 65536 ? (cells + threads - 1) / threads : 65536);
    k_init_fill<T><<<fill_blocks, threads, 0, stream_of(run)>>>((T *)run->d, run->p, run->npad);
    KRILL_TRY(krill_cuda_check_launch("apsp fill D"));
    k_init_arcs<T><<<(run->n + threads - 1) / threads, threads, 0, stream_of(run)>>>(
        (T *)run->d, run->p, run->npad, run->n, row_ptr, col, val);
    KRILL_TRY(krill_cuda_check_launch("apsp arcs into D"));
cleanup:
    return st;
}

static krill_status gpu_init(apsp_run *run, double *upload)
{
    krill_status st = KRILL_OK;
    const krill_csr *g = run->graph;
    int64_t *row_ptr = NULL;
    int32_t *col = NULL;
    double *val = NULL;
    double t0 = krill_wtime();
    KRILL_TRY(krill_cuda_alloc(run->ctx, (void **)&row_ptr, (size_t)(g->n_rows + 1) * 8, "graph offsets"));
    KRILL_TRY(krill_cuda_alloc(run->ctx, (void **)&col, (size_t)g->nnz * 4 + 4, "graph heads"));
    KRILL_TRY(krill_cuda_alloc(run->ctx, (void **)&val, (size_t)g->nnz * 8 + 8, "graph weights"));
    KRILL_TRY(krill_cuda_memcpy(run->ctx, row_ptr, g->row_ptr, (size_t)(g->n_rows + 1) * 8, 0));
    if (g->nnz > 0) {
        KRILL_TRY(krill_cuda_memcpy(run->ctx, col, g->col, (size_t)g->nnz * 4, 0));
        KRILL_TRY(krill_cuda_memcpy(run->ctx, val, g->val, (size_t)g->nnz * 8, 0));
    }
    KRILL_TRY(krill_cuda_sync(run->ctx));
    *upload = krill_wtime() - t0;
    KRILL_TRY(APSP_DISPATCH(run, init_d, run, row_ptr, col, val));
    {
        int big = 0;              /* a finite weight out of the packing range */
        for (int64_t e = 0; e < g->nnz; e++)
            if (fabs(g->val[e]) >= APSP_PACK_R && g->val[e] < run->clamp_hi) big = 1;
        KRILL_TRY(krill_cuda_memcpy(run->ctx, big_flag(run), &big, sizeof big, 0));
    }
    KRILL_TRY(krill_cuda_sync(run->ctx));    /* the graph's buffers are freed below */
cleanup:
    krill_cuda_free(run->ctx, row_ptr);
    krill_cuda_free(run->ctx, col);
    krill_cuda_free(run->ctx, val);
    return st;
}

static krill_status gpu_stamp(apsp_run *run, int index)
{
    gpu_state *s = (gpu_state *)run->device_state;
    if (index < 0 || index >= s->n_events)
        return krill_error(KRILL_ERR_INTERNAL, "apsp: time stamp %d of %d", index, s->n_events);
    return cuda_ok(cudaEventRecord(s->events[index], stream_of(run)), "cudaEventRecord");
}

static krill_status gpu_elapsed(apsp_run *run, int count, double *out)
{
    krill_status st = KRILL_OK;
    gpu_state *s = (gpu_state *)run->device_state;
    if (count > 0) KRILL_TRY(cuda_ok(cudaEventSynchronize(s->events[count - 1]), "cudaEventSynchronize"));
    for (int i = 0; i + 1 < count; i++) {
        float ms = 0;
        KRILL_TRY(cuda_ok(cudaEventElapsedTime(&ms, s->events[i], s->events[i + 1]),
                          "cudaEventElapsedTime"));
        out[i] = 1e-3 * ms;
    }
cleanup:
    return st;
}

/* The n x n corner of a device matrix (leading dimension npad) into host memory through
 * two pinned staging buffers of APSP_STAGE_BYTES: the copy of chunk c + 1 to one buffer
 * runs while the host moves chunk c out of the other (a pageable cudaMemcpy2D of
 * 1 GiB took 0.73 s on the H100). Without pinned memory, the pageable copy. */
#define APSP_STAGE_BYTES (32u << 20)

static krill_status fetch_matrix(apsp_run *run, void *host, const void *dev, size_t elem)
{
    krill_status st = KRILL_OK;
    const size_t n = (size_t)run->n, npad = (size_t)run->npad, row = n * elem;
    const size_t rows = APSP_STAGE_BYTES / row > 0 ? APSP_STAGE_BYTES / row : 1;
    cudaStream_t stream = stream_of(run);
    void *stage[2] = {NULL, NULL};
    cudaEvent_t ready[2] = {NULL, NULL};
    if (cudaMallocHost(&stage[0], rows * row) != cudaSuccess ||
        cudaMallocHost(&stage[1], rows * row) != cudaSuccess) {
        (void)cudaGetLastError();
        KRILL_TRY(cuda_ok(cudaMemcpy2DAsync(host, row, dev, npad * elem, row, n,
                                            cudaMemcpyDeviceToHost, stream), "download"));
        KRILL_TRY(krill_cuda_sync(run->ctx));
        goto cleanup;
    }
    for (int b = 0; b < 2; b++)
        KRILL_TRY(cuda_ok(cudaEventCreateWithFlags(&ready[b], cudaEventDisableTiming), "event"));
    for (size_t first = 0, c = 0; first < n; first += rows, c++) {
        const size_t count = n - first < rows ? n - first : rows;
        if (c == 0) {          /* the first chunk; each later one is queued a step ahead */
            KRILL_TRY(cuda_ok(cudaMemcpy2DAsync(stage[0], row, (const char *)dev, npad * elem,
                                                row, count, cudaMemcpyDeviceToHost, stream),
                              "download"));
            KRILL_TRY(cuda_ok(cudaEventRecord(ready[0], stream), "event"));
        }
        if (first + rows < n) {
            const size_t next = n - first - rows < rows ? n - first - rows : rows;
            KRILL_TRY(cuda_ok(cudaMemcpy2DAsync(stage[(c + 1) & 1], row,
                                                (const char *)dev + (first + rows) * npad * elem,
                                                npad * elem, row, next, cudaMemcpyDeviceToHost,
                                                stream), "download"));
            KRILL_TRY(cuda_ok(cudaEventRecord(ready[(c + 1) & 1], stream), "event"));
        }
        KRILL_TRY(cuda_ok(cudaEventSynchronize(ready[c & 1]), "download"));
        memcpy((char *)host + first * row, stage[c & 1], count * row);
    }
cleanup:
    (void)cudaStreamSynchronize(stream);     /* no copy may still target a buffer freed here */
    for (int b = 0; b < 2; b++) {
        if (ready[b]) (void)cudaEventDestroy(ready[b]);
        if (stage[b]) (void)cudaFreeHost(stage[b]);
    }
    return st;
}

static krill_status gpu_fetch(apsp_run *run, void *dist, int32_t *pred)
{
    krill_status st = KRILL_OK;
    KRILL_TRY(krill_cuda_sync(run->ctx));
    KRILL_TRY(fetch_matrix(run, dist, run->d, run->elem));
    if (pred && run->p) KRILL_TRY(fetch_matrix(run, pred, run->p, 4));
cleanup:
    return st;
}

static krill_status gpu_sync(apsp_run *run) { return krill_cuda_sync(run->ctx); }

static void gpu_release(apsp_run *run)
{
    gpu_state *s = (gpu_state *)run->device_state;
    if (run->d || run->p) (void)cudaStreamSynchronize(stream_of(run));
    krill_cuda_free(run->ctx, run->d);
    krill_cuda_free(run->ctx, run->p);
    run->d = NULL;
    run->p = NULL;
    if (s) {
        krill_cuda_free(run->ctx, s->big);
        for (int i = 0; i < s->n_events; i++) (void)cudaEventDestroy(s->events[i]);
        krill_free(s->events);
        krill_free(s);
    }
    run->device_state = NULL;
}

extern "C" {
const apsp_device apsp_gpu_device = {"gpu", gpu_free_bytes, gpu_alloc, gpu_init, gpu_stamp,
                                     gpu_elapsed, gpu_fetch, gpu_sync, gpu_release};
}
