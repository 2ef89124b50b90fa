/* overlap/exec_cpu.c - the executor's CPU backend: three threads stand in for the GPU's
 * copy engines and its compute queue. Each lane thread runs its queued steps in order,
 * each once the steps it waits for have ended; a copy is a memcpy between a staging slot
 * and the arena (plain host memory here), a kernel is the problem's kernel called with a
 * NULL stream. One mutex and one condition variable guard the queues and the step records;
 * a step that fails (a kernel returning an error) is recorded, later steps are skipped but
 * still marked ended, so nothing waits forever, and every wait reports the failure. */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include "overlap/overlap_impl.h"

typedef struct cpu_lane {
    overlap_exec *x;
    pthread_t thread;
    int started;
    int64_t *queue;              /* steps in issue order */
    int64_t n, next;             /* queued, run */
    void **in, **out;            /* a kernel's arguments (the kernel lane's) */
} cpu_lane;

typedef struct cpu_state {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    cpu_lane lane[KRILL_OVERLAP_LANES];
    char *done;                  /* per step */
    void **host;                 /* per step: its staging slot (copies) */
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

/* Run step s (outside the lock) on lane ln. */
static krill_status run_step(overlap_exec *x, cpu_state *cs, cpu_lane *ln, int64_t s)
{
    krill_status st = KRILL_OK;
    const krill_overlap_plan *p = x->plan;
    const overlap_step *step = &p->steps[s];
    const size_t bytes = step->region >= 0 ? (size_t)overlap_region_bytes(&p->regions[step->region]) : 0;
    if (step->kind == OVERLAP_SEND) {
        memcpy(x->arena + step->offset, cs->host[s], bytes);
    } else if (step->kind == OVERLAP_RECV) {
        memcpy(cs->host[s], x->arena + step->offset, bytes);
    } else {
        overlap_kernel_args(x, s, ln->in, ln->out);
        st = overlap_run_kernel(x, s, NULL, ln->in, ln->out);
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
        int64_t s;
        int skip;
        krill_status st = KRILL_OK;
        while (!cs->stop && (ln->next == ln->n || !waits_done(x, cs, ln->queue[ln->next])))
            pthread_cond_wait(&cs->cond, &cs->lock);
        if (ln->next == ln->n || !waits_done(x, cs, ln->queue[ln->next])) break;  /* stop */
        s = ln->queue[ln->next];
        skip = cs->failure != KRILL_OK;
        pthread_mutex_unlock(&cs->lock);
        cs->start[s] = krill_wtime();
        if (!skip) st = run_step(x, cs, ln, s);
        cs->end[s] = krill_wtime();
        pthread_mutex_lock(&cs->lock);
        if (st != KRILL_OK && cs->failure == KRILL_OK) {
            cs->failure = st;
            snprintf(cs->message, sizeof cs->message, "%s", krill_last_error());
        }
        cs->done[s] = 1;
        ln->next++;
        pthread_cond_broadcast(&cs->cond);
    }
    pthread_mutex_unlock(&cs->lock);
    return NULL;
}

/* The failure as this thread's error (the message was set on a lane thread). */
static krill_status failure(cpu_state *cs)
{
    return cs->failure == KRILL_OK ? KRILL_OK : krill_error(cs->failure, "%s", cs->message);
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
    KRILL_CALLOC(cs->host, (size_t)p->n_steps);
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
        ln->x = x;
        KRILL_ALLOC(ln->queue, (size_t)p->n_steps);
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

static krill_status cpu_issue(overlap_exec *x, int64_t s, void *host, void *const *in,
                              void *const *out)
{
    cpu_state *cs = (cpu_state *)x->state;
    cpu_lane *ln = &cs->lane[x->plan->steps[s].kind];
    (void)in;
    (void)out;
    pthread_mutex_lock(&cs->lock);
    cs->host[s] = host;
    ln->queue[ln->n++] = s;
    pthread_cond_broadcast(&cs->cond);
    pthread_mutex_unlock(&cs->lock);
    return KRILL_OK;
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
        krill_free(cs->host);
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
    "cpu", cpu_open, cpu_issue, cpu_done, cpu_wait, cpu_times, cpu_drain, cpu_close,
};
