"""krill.KrillError and its subclasses: one per krill_status, carrying the C message."""

import pytest

import krill
from krill._errors import _make_error

# krill_status (include/krill/status.h) -> the class and the Python base it must have
CASES = [
    (1, krill.KrillValueError, ValueError),      # KRILL_ERR_ARG
    (2, krill.KrillMemoryError, MemoryError),    # KRILL_ERR_ALLOC
    (3, krill.KrillIOError, OSError),            # KRILL_ERR_IO
    (4, krill.ParseError, ValueError),           # KRILL_ERR_PARSE
    (5, krill.UnsupportedError, ValueError),     # KRILL_ERR_UNSUPPORTED
    (6, krill.NumericError, ValueError),         # KRILL_ERR_NUMERIC
    (7, krill.DeviceError, krill.KrillError),    # KRILL_ERR_NO_DEVICE
    (8, krill.DeviceError, krill.KrillError),    # KRILL_ERR_DEVICE
    (9, krill.KrillMemoryError, MemoryError),    # KRILL_ERR_DEVICE_ALLOC
    (10, krill.InternalError, krill.KrillError),  # KRILL_ERR_INTERNAL
]


@pytest.mark.parametrize("status,cls,base", CASES)
def test_status_to_class(status, cls, base):
    name = krill._core.status_string(status)
    e = _make_error(status, name, "the C message")
    assert type(e) is cls and isinstance(e, base) and isinstance(e, krill.KrillError)
    assert str(e) == "the C message"
    assert e.status == status and e.status_name == name


def test_status_names_come_from_the_library():
    assert krill._core.status_string(1) == "invalid argument"
    assert krill._core.status_string(9) != krill._core.status_string(2)


def test_raised_from_c_with_status():
    with pytest.raises(krill.KrillError) as e:
        krill.solve([[1.0, 0.0], [0.0, 1.0]], [1.0, 2.0, 3.0])
    assert e.value.status == 1 and "b has length 3" in str(e.value)
