"""krill.formats: the storage formats compared on one matrix, as `krill formats --json`."""

import numpy as np

from . import _core
from ._errors import KrillError
from ._solve import _as_csr

# `krill formats`'s defaults (apps/cmd_formats.c): warm-up SpMVs, then timed ones (median)
DEFAULT_WARMUP = 5
DEFAULT_REPS = 25


def _available(device, threads):
    """The CLI's default list: the registry's formats that build on the device (tried on a
    1x1 identity, as apps/cmd_formats.c's probe_format), then "auto"."""
    one = (np.array([0, 1], np.int64), np.array([0], np.int32), np.array([1.0]))
    names = []
    for name in list(_core.format_names()) + ["auto"]:
        if name in names:
            continue
        try:
            _core.Matrix(*one, 1, 1, name, device, threads, None)
        except KrillError:   # a format the device lacks (cusparse on the CPU): left out
            continue
        names.append(name)
    return names


def formats(A, device="cpu", *, formats=None, warmup=DEFAULT_WARMUP, reps=DEFAULT_REPS,
            threads=0):
    """Build A in every storage format and measure each: the CLI's `krill formats --json`
    report, one dict per format.

    A : a scipy.sparse matrix or array (any format; converted to CSR once) or a dense array.
    device : "cpu" ("cuda" as `krill formats --device cuda`, untested in this phase).
    formats : None (every format the device implements, then "auto") or a list of names.
    warmup, reps : untimed SpMVs, then timed ones; the median is reported.

    Each dict has "format" (the name as asked) and the fields of a format's object in the
    CLI's JSON ("formats": {name: {...}}): "measured" (False: "error" says why), "chosen" and
    "choice" (for "auto": the format it chose and why; else None), "variant", "bytes" (matrix
    data stored), "build_seconds", "bytes_vs_csr", "spmv_seconds" (median of y = A x),
    "bytes_moved" (bytes + 8 n_cols + 8 n_rows), "gbytes_per_second", "gflops" (2 nnz /
    spmv_seconds), "max_rel_diff" (max_i |y_i - yref_i| / (|A| |x|)_i against SciPy's
    product), "within_rounding" (<= 2 gamma_K, K the longest row), "fastest" (auto's row
    aside) and "stats" (N, n_cols, Nz, K, Kv, Kc, N_val, N_col, N_non, mean_row_nnz,
    empty_rows). A format that fails to build is a row with "measured": False and the C
    library's message, as in the CLI; an SpMV that fails raises.
    """
    if int(reps) < 1 or int(warmup) < 0:
        raise ValueError(f"krill.formats: warmup = {warmup}, reps = {reps}; warmup must be "
                         ">= 0 and reps >= 1")
    if not isinstance(device, str):
        raise TypeError(f"krill: device must be a string, got {type(device).__name__}")
    indptr, indices, data, n_rows, n_cols = _as_csr(A)
    if formats is None:
        names = _available(device, int(threads))
    else:
        names = [formats] if isinstance(formats, str) else list(formats)
        if len(set(names)) != len(names) or not all(isinstance(n, str) for n in names):
            raise ValueError(f"krill.formats: formats={formats!r}: give distinct names")

    # the reference: y = A x in SciPy, and (|A| |x|)_i, the scale of its rounding error
    import scipy.sparse as sp
    csr = sp.csr_array((data, indices, indptr), shape=(n_rows, n_cols))
    x = np.random.default_rng(0x853C49E6).uniform(-1.0, 1.0, n_cols)
    y_ref = csr @ x
    abs_ax = abs(csr) @ np.abs(x)
    k = int(np.max(np.diff(indptr))) if n_rows else 0
    ku = k * 2.0 ** -53
    bound = 2.0 * ku / (1.0 - ku)

    rows = []
    for name in names:
        row = {"format": name}
        try:
            m = _core.Matrix(indptr, indices, data, n_rows, n_cols, name, device,
                             int(threads), None)
        except KrillError as e:
            row.update(measured=False, error=str(e))
            rows.append(row)
            continue
        stats = dict(m.stats())
        y = np.empty(n_rows)
        m.spmv(x, y)
        seconds = m.time_spmv(int(warmup), int(reps))
        diff = np.abs(y - y_ref)
        with np.errstate(divide="ignore", invalid="ignore"):
            rel = np.where(abs_ax > 0, diff / abs_ax, np.where(diff == 0, 0.0, np.inf))
        max_rel = float(np.max(rel)) if rel.size else 0.0
        nbytes = stats.pop("bytes")
        moved = nbytes + 8.0 * n_cols + 8.0 * n_rows
        chosen = m.format_choice is not None
        row.update(measured=True, chosen=m.format if chosen else None,
                   choice=m.format_choice, variant=stats.pop("variant"), bytes=nbytes,
                   build_seconds=m.build_seconds, bytes_vs_csr=float("nan"),
                   spmv_seconds=seconds, bytes_moved=moved,
                   gbytes_per_second=moved / seconds / 1e9 if seconds > 0 else float("nan"),
                   gflops=2.0 * stats["Nz"] / seconds / 1e9 if seconds > 0 else float("nan"),
                   max_rel_diff=max_rel, within_rounding=bool(max_rel <= bound),
                   fastest=False, stats=stats)
        del m
        rows.append(row)

    # the ratios' reference: csr (exactly, else the first csr variant); the fastest row
    csr_rows = [r for r in rows if r["format"] == "csr"] or \
        [r for r in rows if r["format"].split(":")[0] == "csr"]
    csr_row = csr_rows[0] if csr_rows and csr_rows[0]["measured"] else None
    fastest = None
    for r in rows:
        if not r["measured"]:
            continue
        if csr_row and csr_row["bytes"] > 0:
            r["bytes_vs_csr"] = r["bytes"] / csr_row["bytes"]
        if r["chosen"] is None and (fastest is None or
                                    r["spmv_seconds"] < fastest["spmv_seconds"]):
            fastest = r
    if fastest is not None:
        fastest["fastest"] = True
    return rows
