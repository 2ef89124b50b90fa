"""krill.solve: the result object, solver choice, formats, preconditioners, repro, version."""

import importlib.metadata
import re

import numpy as np
import pytest
import scipy.sparse as sp

import krill
from conftest import ROOT, convdiff2d, poisson2d, relres, rhs, saddle


def test_result_fields():
    a = poisson2d(20)
    b = rhs(a)
    seen = []
    r = krill.solve(a, b, callback=lambda it, rn: seen.append((it, rn)))
    assert isinstance(r, krill.SolveResult)
    assert r.converged is True and r.reason == "converged (rtol)" and r.reason_code == 1
    assert r.solver == "cg" and "symmetric" in r.solver_why
    assert r.x.dtype == np.float64 and r.x.shape == b.shape
    assert relres(a, r.x, b) <= 1.01e-8
    assert isinstance(r.history, np.ndarray) and r.history.shape == (r.iterations + 1,)
    assert r.history[0] == pytest.approx(np.linalg.norm(b))       # x0 = 0: ||r0|| = ||b||
    assert r.relres == pytest.approx(relres(a, r.x, b), rel=1e-6)
    assert r.bnorm == pytest.approx(np.linalg.norm(b))
    assert set(r.times) == {"setup", "spmv", "precond", "ortho", "other", "comm", "halo",
                            "halo_hidden", "total"}
    assert r.times["halo"] == 0.0 and r.times["halo_hidden"] == 0.0   # no communicator
    assert r.times["total"] >= r.times["spmv"] >= 0.0
    assert r.format == "csr" and r.format_choice is None
    assert r.precond_name == "none" and r.precond
    assert r.device.startswith("cpu")
    assert [it for it, _ in seen] == list(range(1, r.iterations + 1))
    np.testing.assert_allclose([rn for _, rn in seen], r.history[1:], rtol=1e-12)
    assert "converged" in repr(r)


def test_not_converged_is_a_result_not_an_error():
    a = poisson2d(20)
    r = krill.solve(a, rhs(a), solver="cg", maxiter=5)
    assert not r.converged and r.iterations == 5 and "maxit" in r.reason
    assert r.reason_code == -1


@pytest.mark.parametrize("problem,solver", [(poisson2d, "cg"), (convdiff2d, "gmres"),
                                            (saddle, "minres")])
def test_auto_solver(problem, solver):
    a = problem(12)
    b = rhs(a)
    r = krill.solve(a, b)
    assert r.solver == solver and r.converged
    assert relres(a, r.x, b) <= 1.01e-8


@pytest.mark.parametrize("solver", ["gmres", "fgmres", "cg", "bicgstab", "minres", "pipecg"])
def test_each_solver(solver):
    a = poisson2d(12)
    b = rhs(a)
    r = krill.solve(a, b, solver=solver, rtol=1e-10, restart=40)
    assert r.converged and r.solver == solver
    assert relres(a, r.x, b) <= 1.01e-10


def test_sstep():
    n = 1000
    a = sp.diags([-1.0, 2.5, -1.2], [-1, 0, 1], shape=(n, n), format="csr")
    b = a @ np.ones(n)
    r = krill.solve(a, b, rtol=1e-10, restart=32, sstep=4)
    assert r.solver == "gmres" and r.sstep == 4 and r.converged
    assert np.allclose(r.x, 1.0, atol=1e-7)
    plain = krill.solve(a, b, solver="gmres", rtol=1e-10, restart=32)
    assert plain.sstep is None and abs(r.iterations - plain.iterations) <= 4
    with pytest.raises(krill.KrillError, match="not a multiple of sstep = 4"):
        krill.solve(a, b, solver="gmres", restart=30, sstep=4)
    with pytest.raises(krill.KrillError, match="applies to GMRES only"):
        krill.solve(a, b, solver="cg", sstep=2)
    with pytest.raises(krill.KrillError, match="sstep = 33"):
        krill.solve(a, b, solver="gmres", restart=33, sstep=33)
    with pytest.raises(krill.KrillError, match="sstep = 1099511627776"):
        krill.solve(a, b, solver="gmres", sstep=2**40)
    with pytest.raises(TypeError, match="sstep must be an integer"):
        krill.solve(a, b, sstep=2.0)


@pytest.mark.parametrize("solver", ["gmres", "fgmres"])
def test_orthogonalizations(solver):
    # dcgs2 is the default; all three reach the tolerance in about as many iterations
    a = convdiff2d(20)
    b = rhs(a)
    default = krill.solve(a, b, solver=solver, rtol=1e-10, restart=10)
    assert default.ortho == "dcgs2" and default.converged
    for ortho in ("dcgs2", "cgs2", "mgs"):
        r = krill.solve(a, b, solver=solver, rtol=1e-10, restart=10, ortho=ortho)
        assert r.ortho == ortho and r.converged
        assert relres(a, r.x, b) <= 1.01e-10
        assert abs(r.iterations - default.iterations) <= max(1, default.iterations // 10)
    same = krill.solve(a, b, solver=solver, rtol=1e-10, restart=10, ortho="dcgs2")
    assert same.iterations == default.iterations and np.array_equal(same.x, default.x)
    assert krill.solve(a, b, solver="bicgstab", ortho="mgs").ortho is None
    m = krill.Matrix(a)
    assert m.solve(b, solver=solver, ortho="cgs2").ortho == "cgs2"
    with pytest.raises(ValueError, match="ortho \"householder\" is not one of"):
        krill.solve(a, b, solver=solver, ortho="householder")
    with pytest.raises(ValueError, match="ortho \"\" is not one of"):
        krill.solve(a, b, solver=solver, ortho="")
    with pytest.raises(TypeError, match="ortho must be a string"):
        krill.solve(a, b, solver=solver, ortho=2)


def test_formats_agree():
    a = convdiff2d(15)
    b = rhs(a)
    ref = krill.solve(a, b, solver="gmres", format="csr")
    for fmt in krill.formats_available():
        if fmt == "cusparse":
            continue                                   # GPU only
        r = krill.solve(a, b, solver="gmres", format=fmt)
        assert r.converged and r.format == fmt
        np.testing.assert_allclose(r.x, ref.x, rtol=1e-7, atol=1e-9 * np.abs(ref.x).max())
    auto = krill.solve(a, b, solver="gmres", format="auto")
    assert auto.converged and auto.format_choice and auto.format != "auto"


@pytest.mark.parametrize("precond", ["jacobi", "bjacobi", "ilu0", "ic0", "ilu0:shift"])
def test_preconditioners(precond):
    a = poisson2d(16)
    b = rhs(a)
    r = krill.solve(a, b, solver="cg", precond=precond)
    assert r.converged and relres(a, r.x, b) <= 1.01e-8
    assert r.precond_name == precond and r.precond


def test_repro_identical_bits_across_thread_counts():
    a = convdiff2d(16)
    b = rhs(a)
    r1 = krill.solve(a, b, solver="gmres", repro=True, threads=1)
    r2 = krill.solve(a, b, solver="gmres", repro=True, threads=2)
    assert r1.converged
    np.testing.assert_array_equal(r1.x, r2.x)
    np.testing.assert_array_equal(r1.history, r2.history)
    with pytest.raises(ValueError, match="repro"):
        krill.solve(a, b, repro="bits")


def test_bad_arguments():
    a = poisson2d(6)
    b = rhs(a)
    with pytest.raises(krill.KrillValueError, match="solver \"lsqr\""):
        krill.solve(a, b, solver="lsqr")
    with pytest.raises(krill.KrillValueError, match="unknown format 'nope'"):
        krill.solve(a, b, format="nope")
    with pytest.raises(krill.KrillValueError, match="device"):
        krill.solve(a, b, device="tpu")
    with pytest.raises(TypeError, match="neither"):
        krill.solve(a, b, precond=3)
    with pytest.raises(TypeError, match="LinearOperator"):
        krill.solve(lambda x: x, b)


def test_cuda_without_gpu_is_device_error():
    if krill.cuda_device_count() > 0:
        pytest.skip("a GPU is present")
    with pytest.raises(krill.DeviceError):
        krill.solve(poisson2d(4), np.ones(16), device="cuda")


def test_version_is_the_c_librarys():
    assert re.fullmatch(r"[0-9]+(\.[0-9]+)*", krill.__version__)
    assert importlib.metadata.version("krill") == krill.__version__
    cmake = ROOT / "CMakeLists.txt"
    if cmake.is_file():
        m = re.search(r"project\(krill\s+VERSION\s+([0-9.]+)", cmake.read_text())
        assert m and m.group(1) == krill.__version__
