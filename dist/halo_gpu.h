/* dist/halo_gpu.h - the CUDA half of the halo exchange (halo_cuda.cu), declared without
 * mpi.h so that nvcc never sees MPI's headers; halo.c and mat.c call it for a context on a
 * GPU (KRILL_HAVE_CUDA builds).
 *
 * One exchange with x in device memory: pack (x_ready on the context's stream; on a side
 * stream the gather send[k] = x[send_idx[k]] and its copy to page-locked host memory, then
 * the event `packed`), the local work (the diagonal block's product; in reproducible mode
 * the interior rows, dist/repro.c) queued on the context's stream and marked (mark_local), MPI on the host between page-locked buffers, then unpack (the ghosts
 * to the device on the side stream; the context's stream waits for them before the off-rank
 * block's product). Per SpMV: 8 sent bytes gathered and copied down, 8 n_halo bytes copied
 * up; the gather, both copies and the messages overlap the diagonal block's product. */
#ifndef KRILL_DIST_HALO_GPU_H
#define KRILL_DIST_HALO_GPU_H

#include <stdint.h>

#include "core/core_impl.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct krill_halo_gpu krill_halo_gpu;

/* The device copies of the plan (send_idx: n_sent local rows) and the page-locked host
 * buffers the messages use (*send_host: n_sent doubles, *recv_host: n_halo), a side stream
 * and events. Local. */
krill_status krill_halo_gpu_create(krill_ctx *ctx, const int32_t *send_idx, int64_t n_sent,
                                   int64_t n_halo, double **send_host, double **recv_host,
                                   krill_halo_gpu **out);
/* NULL-safe; frees the page-locked buffers made by create too. */
void krill_halo_gpu_free(krill_halo_gpu *g, double *send_host, double *recv_host);
/* Wait (host) until the last exchange's ghosts have left recv_host (its copy up is queued,
 * not waited for): before new messages may arrive there. */
krill_status krill_halo_gpu_ready(krill_halo_gpu *g);
/* Queue the gather of x (device) and its copy into send_host on the side stream, after the
 * work already on the context's stream. */
krill_status krill_halo_gpu_pack(krill_ctx *ctx, krill_halo_gpu *g, const double *x,
                                 double *send_host);
/* Wait (host) until send_host holds the packed entries. */
krill_status krill_halo_gpu_wait_packed(krill_halo_gpu *g);
/* Mark the end of the local work queued so far on the context's stream; local_done then says
 * whether the device has reached the mark (1), not yet (0), or failed (-1). */
krill_status krill_halo_gpu_mark_local(krill_ctx *ctx, krill_halo_gpu *g);
int krill_halo_gpu_local_done(krill_halo_gpu *g);
/* Queue the copy of recv_host's ghosts to the device; the context's stream waits for it (and
 * so for the gather). *ghosts: the device copy (n_halo doubles). */
krill_status krill_halo_gpu_unpack(krill_ctx *ctx, krill_halo_gpu *g, const double *recv_host,
                                   const double **ghosts);

/* The exchange on the device through NCCL (comm: the context's ncclComm_t, core/nccl.cu),
 * with no host wait: on the side stream after the work already queued (x_ready), the gather
 * and one group of ncclSend (n_send messages from the gathered entries at send_off) and
 * ncclRecv (n_recv into the ghosts at recv_off), then the mark ghosts_in; the caller queues
 * its local work on the context's stream, then krill_halo_gpu_land. Per SpMV the gather's
 * traffic and 8 (sent + received) bytes over NVLink or the network; no copy through the
 * host. A rank with no neighbour makes no group (NCCL orders the groups with the
 * context's reductions on the same communicator). Timed by events on the device: the
 * exchange of two calls ago is added to the context's halo time (in flight, hidden behind
 * the local work: the overlap of the two; the flight includes any wait for a peer) and
 * its unhidden part to the communication time; an exchange not yet complete then is not
 * counted. A local failure
 * still makes the group (no rank waits for this one's messages) and is returned after. */
#ifdef KRILL_HAVE_NCCL
krill_status krill_halo_gpu_nccl_start(krill_ctx *ctx, krill_halo_gpu *g, void *comm,
                                       const double *x, int n_send, const int *send_rank,
                                       const int64_t *send_off, int n_recv,
                                       const int *recv_rank, const int64_t *recv_off);
/* NCCL connects two ranks at their first message (hundreds of ms on four H200s): one
 * untimed exchange of zeros with the same peers, waited for, so that the matrix's setup pays
 * that and not the first SpMV. Collective over the halo's neighbours; the ghosts it leaves
 * are overwritten by every exchange. */
krill_status krill_halo_gpu_nccl_connect(krill_halo_gpu *g, void *comm, int n_send,
                                         const int *send_rank, const int64_t *send_off,
                                         int n_recv, const int *recv_rank,
                                         const int64_t *recv_off);
/* Drop the timing of the exchanges made so far (not yet counted; NULL-safe): those of
 * mat.c's choice of the path, which are not a solve's. */
void krill_halo_gpu_nccl_forget(krill_halo_gpu *g);
/* The context's stream waits for the ghosts of krill_halo_gpu_nccl_start; *ghosts: their
 * device copy. Called after every start, whatever failed. */
krill_status krill_halo_gpu_land(krill_ctx *ctx, krill_halo_gpu *g, const double **ghosts);
#endif

#ifdef __cplusplus
}
#endif
#endif
