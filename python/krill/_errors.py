"""krill's exceptions: one class per krill_status, each carrying the C library's message.

    KrillError                          any failure of the C library (status, status_name)
      KrillValueError (ValueError)      KRILL_ERR_ARG: an invalid argument
        ParseError                      KRILL_ERR_PARSE: a malformed file
        UnsupportedError                KRILL_ERR_UNSUPPORTED: valid input krill does not handle
        NumericError                    KRILL_ERR_NUMERIC: NaN/Inf in data, zero pivot, ...
      KrillMemoryError (MemoryError)    KRILL_ERR_ALLOC, KRILL_ERR_DEVICE_ALLOC
      KrillIOError (OSError)            KRILL_ERR_IO
      DeviceError                       KRILL_ERR_NO_DEVICE, KRILL_ERR_DEVICE
      InternalError                     KRILL_ERR_INTERNAL (a bug in krill: please report)
"""


class KrillError(Exception):
    """A krill C call failed; str(e) is krill_last_error()'s message.

    Attributes: ``status`` (the krill_status number) and ``status_name`` (its short name,
    krill_status_string())."""

    status = None
    status_name = None


class KrillValueError(KrillError, ValueError):
    """An invalid argument (KRILL_ERR_ARG); also the base of the bad-input errors."""


class ParseError(KrillValueError):
    """A malformed file (KRILL_ERR_PARSE)."""


class UnsupportedError(KrillValueError):
    """Valid input krill does not handle, e.g. a rectangular solve (KRILL_ERR_UNSUPPORTED)."""


class NumericError(KrillValueError):
    """NaN/Inf in the data, a zero diagonal or pivot, a singular block (KRILL_ERR_NUMERIC)."""


class KrillMemoryError(KrillError, MemoryError):
    """Host or GPU memory exhausted (KRILL_ERR_ALLOC, KRILL_ERR_DEVICE_ALLOC)."""


class KrillIOError(KrillError, OSError):
    """A file could not be opened, read or written (KRILL_ERR_IO)."""


class DeviceError(KrillError):
    """No usable GPU (KRILL_ERR_NO_DEVICE) or a failed CUDA call (KRILL_ERR_DEVICE)."""


class InternalError(KrillError):
    """A broken invariant inside krill (KRILL_ERR_INTERNAL): please report it."""


# krill_status values (include/krill/status.h)
_BY_STATUS = {
    1: KrillValueError,    # KRILL_ERR_ARG
    2: KrillMemoryError,   # KRILL_ERR_ALLOC
    3: KrillIOError,       # KRILL_ERR_IO
    4: ParseError,         # KRILL_ERR_PARSE
    5: UnsupportedError,   # KRILL_ERR_UNSUPPORTED
    6: NumericError,       # KRILL_ERR_NUMERIC
    7: DeviceError,        # KRILL_ERR_NO_DEVICE
    8: DeviceError,        # KRILL_ERR_DEVICE
    9: KrillMemoryError,   # KRILL_ERR_DEVICE_ALLOC
    10: InternalError,     # KRILL_ERR_INTERNAL
}


def _make_error(status, status_name, message):
    """The exception for a failed C call (used by krill._core's exception translator)."""
    cls = _BY_STATUS.get(status, KrillError)
    exc = cls(message)   # message only: OSError would read more arguments as errno, ...
    exc.status = status
    exc.status_name = status_name
    return exc
