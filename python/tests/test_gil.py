"""Long solves release the GIL; Ctrl-C (SIGINT) stops a solve cleanly."""

import _thread
import signal
import threading
import time

import numpy as np
import pytest

import krill
from conftest import poisson2d


A = poisson2d(200)                         # 40,000 unknowns
B = np.ones(A.shape[0])


def long_solve(maxiter, **kw):
    # rtol = atol = 0: runs every one of maxiter iterations
    return krill.solve(A, B, solver="cg", rtol=0.0, maxiter=maxiter, threads=1, **kw)


def test_another_thread_progresses_during_a_solve():
    long_solve(10)                          # warm up
    count = [0]
    stop = threading.Event()

    def spin():
        while not stop.is_set():
            count[0] += 1

    t = threading.Thread(target=spin)
    t.start()
    try:
        time.sleep(0.05)
        before = count[0]
        t0 = time.perf_counter()
        r = long_solve(3000)
        elapsed = time.perf_counter() - t0
        during = count[0] - before
    finally:
        stop.set()
        t.join()
    assert r.iterations == 3000
    # With the GIL held for the whole solve, the spinning thread could not count at all.
    assert elapsed > 0.1, f"the solve took only {elapsed:.3f} s: too short to tell"
    assert during > 10000, f"the other thread counted {during} in {elapsed:.2f} s"


@pytest.mark.parametrize("with_callback", [False, True])
def test_interrupt_stops_a_solve(with_callback):
    """Ctrl-C: the monitor sees the pending signal (without a callback: at most 50 ms on)."""
    seen = []
    cb = (lambda it, rn: seen.append(it)) if with_callback else None
    # Python's own SIGINT handler, whatever was inherited: a process started in the
    # background by a non-interactive shell (CI) ignores SIGINT, and interrupt_main then
    # does nothing
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    timer = threading.Timer(0.3, _thread.interrupt_main)
    t0 = time.perf_counter()
    timer.start()
    try:
        with pytest.raises(KeyboardInterrupt):
            long_solve(40000, callback=cb)      # ~10 s if never stopped: fails, not hangs
    finally:
        timer.cancel()
        signal.signal(signal.SIGINT, previous)
    assert time.perf_counter() - t0 < 5.0
    if with_callback:
        assert 0 < len(seen) < 40000            # stopped inside the solve
    r = long_solve(10)                          # krill works on after the interrupt
    assert r.iterations == 10


def test_concurrent_solves_from_threads():
    a = poisson2d(40)
    bs = [np.random.default_rng(s).uniform(-1, 1, a.shape[0]) for s in range(4)]
    serial = [krill.solve(a, b, threads=1).x for b in bs]
    out = [None] * len(bs)

    def work(i):
        out[i] = krill.solve(a, bs[i], threads=1).x

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(bs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for got, want in zip(out, serial):
        np.testing.assert_array_equal(got, want)
