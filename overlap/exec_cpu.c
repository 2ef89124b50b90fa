/* overlap/exec_cpu.c - the executor's CPU backend: three threads stand in for the GPU's
 * copy engines and its compute queue. Each lane thread runs its queued steps in order,
 * each once the steps it waits for have ended; a copy's chunk is a memcpy between a staging
 * slot and the arena (plain host memory here), a kernel is the problem's kernel called with
 * a NULL stream. One mutex and one condition variable guard the queues and the step records;
 * a step that fails (a kernel returning an error) is recorded, later steps are skipped but
 * still marked ended, so nothing waits forever, and every wait reports the failure. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "overlap/overlap_impl.h"

/* A kernel, or one chunk of a copy: [at, at + bytes) of the step's device bytes to or from
   staging slot `slot`; `first` and `last` chunk of its step. */
typedef struct cpu_item {
    int64_t s, at, bytes;
    int slot;
    char first, last;
} cpu_item;

typedef struct cpu_lane {
    overlap_exec *x;
    pthread_t thread;
    int started;
    cpu_item *queue;             /* in issue order */
    int64_t n, next;             /* queued, run */
    void **in, **out;            /* a kernel's arguments (the kernel lane's) */
} cpu_lane;

typedef struct cpu_state {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    cpu_lane lane[KRILL_OVERLAP_LANES];
    char *done;                  /* per step */
    int64_t *queued[2], *copied[2];  /* per send (0) and receive (1) slot: chunks queued, run */
    double *start, *end;         /* per step, krill_wtime() */
    double t0;                   /* the earliest start (times), -1 until known */
    int stop;
    krill_status failure;        /* the first failure, KRILL_OK if none */
    char message[384];
} cpu_state;

static int waits_done(const overlap_exec *x, const cpu_state *cs, int64_t s)
{
    const overlap_step *step = &x->plan->steps[s];
    int ok = 1;
    for (int32_t w = 0; w < step->n_wait && ok; w++) ok = cs->done[x->plan->waits[step->wait_first + w]];
    return ok;
}

/* Run item `it` (outside the lock) on lane ln. */
static krill_status run_item(overlap_exec *x, cpu_lane *ln, const cpu_item *it)
{
    krill_status st = KRILL_OK;
    const overlap_step *step = &x->plan->steps[it->s];
    char *dev = x->arena + step->offset + it->at;
    if (step->kind == OVERLAP_SEND) {
        memcpy(dev, x->send_slot[it->slot], (size_t)it->bytes);
    } else if (step->kind == OVERLAP_RECV) {
        memcpy(x->recv_slot[it->slot], dev, (size_t)it->bytes);
    } else {
        overlap_kernel_args(x, it->s, ln->in, ln->out);
        st = overlap_run_kernel(x, it->s, NULL, ln->in, ln->out);
    }
    return st;
}

static void *lane_main(void *arg)
{
    cpu_lane *ln = (cpu_lane *)arg;
    overlap_exec *x = ln->x;
    cpu_state *cs = (cpu_state *)x->state;
    pthread_mutex_lock(&cs->lock);
    for (;;) {
        cpu_item it;
        int skip, kind;
        krill_status st = KRILL_OK;
        while (!cs->stop && (ln->next == ln->n || !waits_done(x, cs, ln->queue[ln->next].s)))
            pthread_cond_wait(&cs->cond, &cs->lock);
        if (ln->next == ln->n || !waits_done(x, cs, ln->queue[ln->next].s)) break;  /* stop */
        it = ln->queue[ln->next];
        kind = x->plan->steps[it.s].kind;
        skip = cs->failure != KRILL_OK;
        pthread_mutex_unlock(&cs->lock);
        if (it.first) cs->start[it.s] = krill_wtime();
        if (!skip) st = run_item(x, ln, &it);
        if (it.last) cs->end[it.s] = krill_wtime();
        pthread_mutex_lock(&cs->lock);
        if (st != KRILL_OK && cs->failure == KRILL_OK) {
            cs->failure = st;
            snprintf(cs->message, sizeof cs->message, "%s", krill_last_error());
        }
        if (kind != OVERLAP_KERNEL) cs->copied[kind == OVERLAP_RECV][it.slot]++;
        if (it.last) cs->done[it.s] = 1;
        ln->next++;
        pthread_cond_broadcast(&cs->cond);
    }
    pthread_mutex_unlock(&cs->lock);
    return NULL;
}

/* The failure as this thread's error (the message was set on a lane thread: both read
   under the lock, which the caller does not hold). */
static krill_status failure(cpu_state *cs)
{
    krill_status f;
    char message[sizeof cs->message];
    pthread_mutex_lock(&cs->lock);
    f = cs->failure;
    memcpy(message, cs->message, sizeof message);
    pthread_mutex_unlock(&cs->lock);
    return f == KRILL_OK ? KRILL_OK : krill_error(f, "%s", message);
}

static krill_status cpu_open(overlap_exec *x)
{
    krill_status st = KRILL_OK;
    const krill_overlap_plan *p = x->plan;
    cpu_state *cs = NULL;
    KRILL_CALLOC(cs, 1);
    x->state = cs;
    pthread_mutex_init(&cs->lock, NULL);
    pthread_cond_init(&cs->cond, NULL);
    KRILL_CALLOC(cs->done, (size_t)p->n_steps);
    KRILL_CALLOC(cs->queued[0], (size_t)x->n_send + 1);
    KRILL_CALLOC(cs->copied[0], (size_t)x->n_send + 1);
    KRILL_CALLOC(cs->queued[1], (size_t)x->n_recv + 1);
    KRILL_CALLOC(cs->copied[1], (size_t)x->n_recv + 1);
    KRILL_CALLOC(cs->start, (size_t)p->n_steps);
    KRILL_CALLOC(cs->end, (size_t)p->n_steps);
    KRILL_TRY(krill_alloc((void **)&x->arena, (size_t)p->arena_bytes, "overlap arena"));
    KRILL_CALLOC(x->send_slot, (size_t)x->n_send);
    KRILL_CALLOC(x->recv_slot, (size_t)x->n_recv);
    for (int k = 0; k < x->n_send; k++)
        KRILL_TRY(krill_alloc(&x->send_slot[k], (size_t)p->slot_bytes, "overlap send slot"));
    for (int k = 0; k < x->n_recv; k++)
        KRILL_TRY(krill_alloc(&x->recv_slot[k], (size_t)p->slot_bytes, "overlap receive slot"));
    cs->t0 = -1;
    for (int l = 0; l < KRILL_OVERLAP_LANES; l++) {
        cpu_lane *ln = &cs->lane[l];
        int64_t items = 0;               /* a kernel is one item, a copy one per chunk */
        for (int64_t s = 0; s < p->n_steps; s++)
            if (p->steps[s].kind == l) items += l == OVERLAP_KERNEL ? 1 : overlap_chunks(p, p->steps[s].region);
        ln->x = x;
        KRILL_ALLOC(ln->queue, (size_t)items + 1);
        KRILL_ALLOC(ln->in, (size_t)x->max_args);
        KRILL_ALLOC(ln->out, (size_t)x->max_args);
        if (pthread_create(&ln->thread, NULL, lane_main, ln) != 0) {
            st = krill_error(KRILL_ERR_ALLOC, "overlap: could not start lane thread %d", l);
            goto cleanup;
        }
        ln->started = 1;
    }
cleanup:
    return st;
}

static void enqueue(cpu_state *cs, int kind, cpu_item it)
{
    cpu_lane *ln = &cs->lane[kind];
    pthread_mutex_lock(&cs->lock);
    ln->queue[ln->n++] = it;
    if (kind != OVERLAP_KERNEL) cs->queued[kind == OVERLAP_RECV][it.slot]++;
    pthread_cond_broadcast(&cs->cond);
    pthread_mutex_unlock(&cs->lock);
}

/* Kernels only: the CPU executor has no direct plans. */
static krill_status cpu_issue(overlap_exec *x, int64_t s, void *const *in, void *const *out)
{
    krill_status st = KRILL_OK;
    const int kind = x->plan->steps[s].kind;
    (void)in;
    (void)out;
    if (kind == OVERLAP_KERNEL)
        enqueue((cpu_state *)x->state, kind, (cpu_item){s, 0, 0, 0, 1, 1});
    else
        st = krill_error(KRILL_ERR_INTERNAL, "overlap: the CPU executor copies in chunks");
    return st;
}

static krill_status cpu_copy(overlap_exec *x, int64_t s, int slot, int64_t at, int64_t bytes,
                             int first, int last)
{
    enqueue((cpu_state *)x->state, x->plan->steps[s].kind,
            (cpu_item){s, at, bytes, slot, (char)first, (char)last});
    return KRILL_OK;
}

static int cpu_slot_done(overlap_exec *x, int kind, int slot)
{
    cpu_state *cs = (cpu_state *)x->state;
    const int d = kind == OVERLAP_RECV;
    int done;
    pthread_mutex_lock(&cs->lock);
    done = cs->copied[d][slot] == cs->queued[d][slot];
    pthread_mutex_unlock(&cs->lock);
    return done;
}

static krill_status cpu_slot_wait(overlap_exec *x, int kind, int slot)
{
    cpu_state *cs = (cpu_state *)x->state;
    const int d = kind == OVERLAP_RECV;
    pthread_mutex_lock(&cs->lock);
    while (cs->copied[d][slot] != cs->queued[d][slot]) pthread_cond_wait(&cs->cond, &cs->lock);
    pthread_mutex_unlock(&cs->lock);
    return failure(cs);
}

static int cpu_done(overlap_exec *x, int64_t s)
{
    cpu_state *cs = (cpu_state *)x->state;
    int done;
    pthread_mutex_lock(&cs->lock);
    done = cs->done[s];
    pthread_mutex_unlock(&cs->lock);
    return done;
}

static krill_status cpu_wait(overlap_exec *x, int64_t s)
{
    cpu_state *cs = (cpu_state *)x->state;
    pthread_mutex_lock(&cs->lock);
    while (!cs->done[s]) pthread_cond_wait(&cs->cond, &cs->lock);
    pthread_mutex_unlock(&cs->lock);
    return failure(cs);
}

static krill_status cpu_drain(overlap_exec *x)
{
    cpu_state *cs = (cpu_state *)x->state;
    pthread_mutex_lock(&cs->lock);
    for (int l = 0; l < KRILL_OVERLAP_LANES; l++)
        while (cs->lane[l].started && cs->lane[l].next < cs->lane[l].n)
            pthread_cond_wait(&cs->cond, &cs->lock);
    pthread_mutex_unlock(&cs->lock);
    return failure(cs);
}

static krill_status cpu_times(overlap_exec *x, int64_t s, double *start, double *end)
{
    cpu_state *cs = (cpu_state *)x->state;
    if (cs->t0 < 0) {                              /* once: the earliest start */
        cs->t0 = cs->start[0];
        for (int64_t i = 1; i < x->plan->n_steps; i++)
            if (cs->start[i] < cs->t0) cs->t0 = cs->start[i];
    }
    *start = cs->start[s] - cs->t0;
    *end = cs->end[s] - cs->t0;
    return KRILL_OK;
}

static void cpu_close(overlap_exec *x)
{
    cpu_state *cs = (cpu_state *)x->state;
    if (cs) {
        pthread_mutex_lock(&cs->lock);
        cs->stop = 1;
        pthread_cond_broadcast(&cs->cond);
        pthread_mutex_unlock(&cs->lock);
        for (int l = 0; l < KRILL_OVERLAP_LANES; l++) {
            if (cs->lane[l].started) pthread_join(cs->lane[l].thread, NULL);
            krill_free(cs->lane[l].queue);
            krill_free(cs->lane[l].in);
            krill_free(cs->lane[l].out);
        }
        pthread_mutex_destroy(&cs->lock);
        pthread_cond_destroy(&cs->cond);
        krill_free(cs->done);
        for (int d = 0; d < 2; d++) {
            krill_free(cs->queued[d]);
            krill_free(cs->copied[d]);
        }
        krill_free(cs->start);
        krill_free(cs->end);
        krill_free(cs);
        x->state = NULL;
    }
    for (int k = 0; x->send_slot && k < x->n_send; k++) krill_free(x->send_slot[k]);
    for (int k = 0; x->recv_slot && k < x->n_recv; k++) krill_free(x->recv_slot[k]);
    krill_free(x->send_slot);
    krill_free(x->recv_slot);
    krill_free(x->arena);
    x->send_slot = x->recv_slot = NULL;
    x->arena = NULL;
}

const overlap_backend overlap_cpu_backend = {
    "cpu", cpu_open, cpu_issue, cpu_copy, cpu_slot_done, cpu_slot_wait, cpu_done, cpu_wait,
    cpu_times, cpu_drain, cpu_close,
};
