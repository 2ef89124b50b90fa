/* krill/status.h - status codes and the last-error message.
 *
 * Every fallible krill function returns a krill_status (KRILL_OK == 0). On failure it
 * also leaves a one-line message for the calling thread, read with krill_last_error(),
 * that says what was wrong and where (for a file: its name and line). */
#ifndef KRILL_STATUS_H
#define KRILL_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum krill_status {
    KRILL_OK = 0,
    KRILL_ERR_ARG,           /* an argument is invalid (NULL, wrong size, unknown name) */
    KRILL_ERR_ALLOC,         /* host memory allocation failed (or the system refused to
                                start a context's threads: krill_ctx_create) */
    KRILL_ERR_IO,            /* a file could not be opened, read or written */
    KRILL_ERR_PARSE,         /* a file is malformed; the message names file and line */
    KRILL_ERR_UNSUPPORTED,   /* valid input krill does not handle (complex, rectangular solve) */
    KRILL_ERR_NUMERIC,       /* NaN/Inf in data, zero diagonal, singular block */
    KRILL_ERR_NO_DEVICE,     /* a GPU was asked for and none is usable (or no CUDA build) */
    KRILL_ERR_DEVICE,        /* a CUDA, cuBLAS or cuSPARSE call failed */
    KRILL_ERR_DEVICE_ALLOC,  /* GPU out of memory; the message gives bytes needed and free */
    KRILL_ERR_INTERNAL       /* a broken invariant: a bug in krill, please report */
} krill_status;

/* Short fixed name of a status, e.g. "parse error". Never NULL. */
const char *krill_status_string(krill_status status);

/* The message of the last failure on this thread ("" if none). Valid until the next
 * failing krill call on the same thread. */
const char *krill_last_error(void);

/* Forget the last message (tests and long-running callers). */
void krill_clear_error(void);

#ifdef __cplusplus
}
#endif
#endif
