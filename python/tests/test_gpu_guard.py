"""The CuPy detection (krill/_cupy.py) where no GPU is needed: GPU inputs that cannot be
used get a clear error before anything reads their memory, and krill imports without
CuPy. Runs everywhere (the GPU side is test_cupy.py, marked gpu)."""

import subprocess
import sys

import numpy as np
import pytest

import krill
from conftest import poisson2d


class FakeGPUArray:
    """A vector that says it lives on a GPU (__cuda_array_interface__, as CuPy's, Numba's)."""

    def __init__(self, n):
        self.shape = (n,)
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "<f8",
                                         "data": (0xdead0000, False), "version": 3}


class FakeCupyCSR:
    """An object that looks like a cupyx.scipy.sparse CSR matrix by its module."""

    __module__ = "cupyx.scipy.sparse._csr"
    format = "csr"
    ndim = 2

    def __init__(self, n):
        self.shape = (n, n)

    def tocsr(self):
        return self


def _without_cupy_import(fn):
    """Runs fn and checks that it did not import CuPy (where it was not imported before)."""
    before = "cupy" in sys.modules
    fn()
    if not before:
        assert "cupy" not in sys.modules


def test_import_does_not_import_cupy():
    out = subprocess.run([sys.executable, "-c", "import sys, krill; print('cupy' in sys.modules)"],
                         capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_gpu_b_with_cpu_matrix_is_a_clear_error():
    a = poisson2d(4)
    def run():
        with pytest.raises(ValueError, match="GPU array.*on the CPU"):
            krill.solve(a, FakeGPUArray(16))
        with pytest.raises(ValueError, match="GPU array.*on the CPU"):
            krill.Matrix(a).solve(np.ones(16), x0=FakeGPUArray(16))
    _without_cupy_import(run)


def test_gpu_x_for_matvec_is_a_type_error():
    with pytest.raises(TypeError, match="GPU array"):
        krill.Matrix(poisson2d(4)).matvec(FakeGPUArray(16))


def test_cupy_matrix_on_cpu_device_is_refused():
    def run():
        for call in (lambda: krill.solve(FakeCupyCSR(4), np.ones(4), device="cpu"),
                     lambda: krill.Matrix(FakeCupyCSR(4), device="cpu"),
                     lambda: krill.Matrix(FakeCupyCSR(4), format="ell")):
            with pytest.raises(ValueError, match="CuPy"):
                call()
    _without_cupy_import(run)


def test_cupy_matrix_without_cuda_build_is_a_device_error():
    if krill.have_cuda():
        pytest.skip("this krill has CUDA: the error is for builds without it")
    def run():
        with pytest.raises(krill.DeviceError, match="without CUDA"):
            krill.solve(FakeCupyCSR(4), np.ones(4))
        with pytest.raises(krill.DeviceError, match="without CUDA"):
            krill.sparse.linalg.cg(FakeCupyCSR(4), np.ones(4))
    _without_cupy_import(run)


def test_host_only_calls_refuse_a_cupy_matrix():
    with pytest.raises(TypeError, match="CuPy"):
        krill.formats(FakeCupyCSR(4))
