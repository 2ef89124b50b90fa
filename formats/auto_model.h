/* formats/auto_model.h - what the two halves of `auto` share: auto_model.c (the profile of
 * a CSR and, per format, the model of its SpMV time and of its build time beyond csr's) and
 * auto.c (the rules, the weighing of build against SpMVs, the reason, the API). */
#ifndef KRILL_AUTO_MODEL_H
#define KRILL_AUTO_MODEL_H

#include "formats/formats_impl.h"

/* The model's view of a device. */
typedef struct auto_device {
    int gpu;
    double bandwidth;        /* bytes / s */
    double launch;           /* seconds per kernel or parallel region */
    double step;             /* seconds per entry of one thread's serial chain */
    int line;                /* bytes fetched at once: sector (GPU) or cache line (CPU) */
    double build_scale;      /* the build constants' factor for this thread count (CPU) */
} auto_device;

/* What the chooser reads from the CSR: row statistics, how much of a column-major padded
 * array a loop ending at each row's length touches and, once counted, the runs. */
typedef struct auto_profile {
    krill_format_stats s;    /* n_rows ... empty_rows; n_val ... kc once `runs` */
    double row_sd;           /* standard deviation of the row lengths */
    int64_t longest_short;   /* longest row that GPU csr's row kernel sums (not a long row) */
    double touched_val;      /* bytes of ELL values in lines an ELL-R loop reads */
    double touched_col;      /* bytes of ELL column indices likewise */
    double xy;               /* x read once, y written: 8 (n_cols + n_rows) */
    int runs;                /* 1: the run statistics (n_val, n_col, n_non, kv, kc) were */
    int sampled;             /* 1: `sample` holds run statistics from a sample of rows */
    krill_format_stats sample;   /* n_val, n_col, n_non scaled to the matrix's entries; kv,
                                    kc the sampled rows' largest (auto_profile_run_sample) */
} auto_profile;

/* auto_estimate.skip of a format the registry lacks on the device: not worth a mention */
extern const char AUTO_SKIP_ABSENT[];
/* auto_estimate.skip of a format that needs the run statistics when they were not counted:
 * only `build` (its least possible build) is known */
extern const char AUTO_SKIP_UNCOUNTED[];

/* One format's estimate. */
typedef struct auto_estimate {
    const char *name;
    double stored;           /* bytes the format would store */
    double traffic;          /* bytes one SpMV moves, each part over its efficiency */
    double steps;            /* longest serial chain of entries of one thread */
    int launches;
    double seconds;          /* the model's time of one SpMV */
    double build;            /* the model's seconds of its build beyond csr's (csr: 0; less
                                than csr's: negative) */
    const char *skip;        /* why it is not a candidate: NULL (it is one), AUTO_SKIP_ABSENT,
                                AUTO_SKIP_UNCOUNTED, "padding", "size", "build" or
                                "few runs" */
    double measured;         /* auto:measure: median seconds (0: not timed) */
} auto_estimate;

/* The formats the model knows: csr, ell, ellr, rbp-csr, rbp-ell, rbp-ellr, segscan. */
#define AUTO_N_KNOWN 7

/* The model of ctx's device (CPU: for its thread count). */
void auto_device_model(krill_ctx *ctx, auto_device *d);
/* The row statistics of a and the spread of its row lengths, in one parallel pass over
 * row_ptr on `threads` threads; with `lines`, also the ELL lines an ELL-R loop touches (the
 * same pass). Clears the runs and the sample (p->runs = p->sampled = 0). */
void auto_profile_rows(const krill_csr *a, const auto_device *d, int threads, int lines,
                       auto_profile *p);
/* The run statistics of a (Algorithm 3 of the RBP paper), one parallel pass over its
 * columns; sets p->runs. Integer sums: the same on any thread count. */
void auto_profile_runs(const krill_csr *a, int threads, auto_profile *p);
/* After auto_profile_rows: the run statistics of AUTO_RUN_SAMPLE_ROWS rows, one from each
 * window of rows at a fixed pseudo-random place (the same rows on any thread count, and no
 * stride for a periodic numbering to alias with), into p->sample with p->sampled = 1; left
 * unset (p->sampled = 0) when the matrix has no more rows than the sample, or the sampled
 * rows no entries. */
void auto_profile_run_sample(const krill_csr *a, auto_profile *p);
/* Estimate every known format into est[0 .. AUTO_N_KNOWN - 1] (est[0] is csr, the
 * reference of every ratio) from a profile with lines; returns AUTO_N_KNOWN. Without the
 * runs, the formats that need them get AUTO_SKIP_UNCOUNTED and, as `build`, the least build
 * their runs could give. */
int auto_estimate_all(const auto_profile *p, const auto_device *d, auto_estimate *est);
/* The index of `name` among the known formats, or -1. */
int auto_known_index(const char *name);

#endif
