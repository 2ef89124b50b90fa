/* core/error.c - status names and the per-thread last-error message. */
#include <stdarg.h>
#include <stdio.h>

#include "core/core_impl.h"

#define KRILL_ERROR_LEN 1024

static _Thread_local char last_error[KRILL_ERROR_LEN];

const char *krill_status_string(krill_status status)
{
    switch (status) {
    case KRILL_OK: return "ok";
    case KRILL_ERR_ARG: return "invalid argument";
    case KRILL_ERR_ALLOC: return "out of host memory";
    case KRILL_ERR_IO: return "i/o error";
    case KRILL_ERR_PARSE: return "parse error";
    case KRILL_ERR_UNSUPPORTED: return "unsupported input";
    case KRILL_ERR_NUMERIC: return "numerical error";
    case KRILL_ERR_NO_DEVICE: return "no usable GPU";
    case KRILL_ERR_DEVICE: return "GPU error";
    case KRILL_ERR_DEVICE_ALLOC: return "out of GPU memory";
    case KRILL_ERR_INTERNAL: return "internal error";
    }
    return "unknown status";
}

const char *krill_last_error(void) { return last_error; }

void krill_clear_error(void) { last_error[0] = '\0'; }

krill_status krill_error(krill_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(last_error, sizeof last_error, fmt, ap);
    va_end(ap);
    return status;
}
