#!/usr/bin/env python3
"""bench/apsp_peers.py - the APSP peers on krill's graphs, and the report of the APSP
benchmarks (doc/apsp.md, "Benchmarks").

  apsp_peers.py run --graphs DIR --dist DIR [--sizes LIST] [--peers scipy-fw,scipy-d,nx-fw]
                    [--runs R] [--max-seconds S] [--nx-max N] [--json FILE]
  apsp_peers.py report --device cpu|gpu --minplus FILE --apsp FILE [--apsp1 FILE]
                    [--apsp-large FILE] [--peers FILE] [--command TEXT] [--out FILE]

run: for each n, the graph bench_apsp --write-graph wrote (DIR/random_N.bin, bench_common's
binary dump: "KRILLCSR", int64 n_rows, n_cols, nnz, int64 row_ptr[n+1], int32 col[nnz],
float64 val[nnz]) as a scipy.sparse CSR matrix whose stored zeros stay arcs of weight 0
(csgraph treats a stored entry of a sparse matrix as an edge), and time on it
  scipy-fw  scipy.sparse.csgraph.shortest_path(G, method='FW')   (Floyd-Warshall, one thread)
  scipy-d   scipy.sparse.csgraph.shortest_path(G, method='D')    (Dijkstra from every source)
  nx-fw     networkx.floyd_warshall_numpy(G, nodelist=range(n))  (the DiGraph is built
            before the clock starts; only for n <= --nx-max, default 1024: it is slow)
each with time.perf_counter around the one call: a warm-up call first when the first call
took under WARMUP_BELOW seconds (small n), then --runs calls (default 3), fewer when one
call takes over a third of --max-seconds; the figure is the median. A peer's next n is
skipped when its predicted time, the last median times (n / n_prev)^3 (scipy-d: ^2),
passes --max-seconds (default 60). Every peer's distance matrix is checked against krill's
(DIR/random_N.int32.npy from bench_apsp --write-dist; KRILL_APSP_INT32_INF = unreachable):
the weights are integers, so the distances must be equal, entry for entry.

report: the markdown of run_apsp.sh (Tables 1, 3, 4 of the paper on this machine, the
peers, the issue's targets met or not) from the JSON files of bench_minplus, bench_apsp
(all threads; --apsp1 one thread, for the per-core comparison; --apsp-large the GPU's
n = 32768 run) and `run`.
"""
import argparse
import json
import math
import os
import platform
import statistics
import sys
import time

KRILL_INT32_INF = 1073741823
WARMUP_BELOW = 1.0
FW_METHODS = ("fw-a", "fw-b", "fw-rec")
PEERS = ("scipy-fw", "scipy-d", "nx-fw")


# ---- run ------------------------------------------------------------------------------

def read_graph(path):
    """The binary dump as a scipy.sparse.csr_matrix (explicit zeros kept)."""
    import numpy as np
    import scipy.sparse as sp
    with open(path, "rb") as f:
        magic = f.read(8)
        if magic != b"KRILLCSR":
            raise ValueError(f"{path}: not a KRILLCSR dump")
        n_rows, n_cols, nnz = (int(v) for v in np.fromfile(f, dtype="<i8", count=3))
        row_ptr = np.fromfile(f, dtype="<i8", count=n_rows + 1)
        col = np.fromfile(f, dtype="<i4", count=nnz)
        val = np.fromfile(f, dtype="<f8", count=nnz)
    if len(val) != nnz or row_ptr[-1] != nnz:
        raise ValueError(f"{path}: truncated dump")
    return sp.csr_matrix((val, col, row_ptr), shape=(n_rows, n_cols))


def krill_dist(path):
    """krill's int32 D as float64 with inf for unreachable, or None when absent."""
    import numpy as np
    if not os.path.exists(path):
        return None
    d = np.load(path)
    out = d.astype(np.float64)
    out[d >= KRILL_INT32_INF] = np.inf
    return out


def compare(d, ref):
    """(ok, max |difference|) of two distance matrices; unreachable must match."""
    import numpy as np
    if ref is None:
        return None, float("nan")
    if d.shape != ref.shape:
        return False, float("inf")
    inf_d, inf_r = np.isinf(d), np.isinf(ref)
    if not np.array_equal(inf_d, inf_r):
        return False, float("inf")
    finite = ~inf_r
    diff = float(np.max(np.abs(d[finite] - ref[finite]))) if finite.any() else 0.0
    return diff == 0.0, diff


def peer_call(peer, g, nxg):
    """One call of the peer; returns its distance matrix."""
    import numpy as np
    from scipy.sparse.csgraph import shortest_path
    if peer == "scipy-fw":
        return shortest_path(g, method="FW", directed=True)
    if peer == "scipy-d":
        return shortest_path(g, method="D", directed=True)
    import networkx as nx
    return np.asarray(nx.floyd_warshall_numpy(nxg, nodelist=range(g.shape[0]), weight="weight"))


def to_networkx(g):
    import networkx as nx
    coo = g.tocoo()
    nxg = nx.DiGraph()
    nxg.add_nodes_from(range(g.shape[0]))
    nxg.add_weighted_edges_from(zip(coo.row.tolist(), coo.col.tolist(), coo.data.tolist()))
    return nxg


def time_peer(peer, g, nxg, runs, max_seconds):
    """Warm-up (small n) and timed calls: (times, last result)."""
    t0 = time.perf_counter()
    d = peer_call(peer, g, nxg)
    first = time.perf_counter() - t0
    times = [] if first < WARMUP_BELOW else [first]
    while len(times) < runs and (not times or times[-1] <= max_seconds / 3):
        t0 = time.perf_counter()
        d = peer_call(peer, g, nxg)
        times.append(time.perf_counter() - t0)
    return times, d


def cmd_run(args):
    import numpy as np
    import scipy
    sizes = [int(s) for s in args.sizes.split(",")] if args.sizes else sorted(
        int(f[len("random_"):-len(".bin")]) for f in os.listdir(args.graphs)
        if f.startswith("random_") and f.endswith(".bin"))
    peers = args.peers.split(",")
    for p in peers:
        if p not in PEERS:
            sys.exit(f"apsp_peers.py: unknown peer {p} (known: {', '.join(PEERS)})")
    versions = {"python": platform.python_version(), "numpy": np.__version__,
                "scipy": scipy.__version__}
    if "nx-fw" in peers:
        import networkx as nx
        versions["networkx"] = nx.__version__
    results, last, failures = [], {}, 0
    print(f"# apsp_peers.py run: {', '.join(f'{k} {v}' for k, v in versions.items())}")
    print(f"{'n':>6} {'peer':<9} {'runs':>4} {'median_ms':>12} {'min_ms':>12} check")
    for n in sizes:
        path = os.path.join(args.graphs, f"random_{n}.bin")
        g = read_graph(path)
        ref = krill_dist(os.path.join(args.dist, f"random_{n}.int32.npy")) if args.dist else None
        nxg = None
        for peer in peers:
            rec = {"n": n, "arcs": int(g.nnz), "peer": peer}
            why = None
            if peer == "nx-fw" and n > args.nx_max:
                why = f"n > --nx-max {args.nx_max}"
            elif peer in last:
                n0, t0 = last[peer]
                predicted = t0 * (n / n0) ** (2 if peer == "scipy-d" else 3)
                if predicted > args.max_seconds:
                    why = (f"predicted {predicted:.3g} s ({t0:.3g} s at n = {n0}) > "
                           f"--max-seconds {args.max_seconds:g}")
            if why:
                rec.update(status="skipped", message=why)
                print(f"{n:6d} {peer:<9} skipped: {why}")
                results.append(rec)
                continue
            if peer == "nx-fw" and nxg is None:
                nxg = to_networkx(g)
            times, d = time_peer(peer, g, nxg, args.runs, args.max_seconds)
            ok, diff = compare(d, ref)
            med = statistics.median(times)
            last[peer] = (n, med)
            check = "no krill D" if ok is None else ("ok" if ok else f"MISMATCH (max diff {diff})")
            if ok is False:
                failures += 1
            rec.update(status="ok" if ok is not False else "wrong", runs=len(times),
                       t_median_s=med, t_min_s=min(times), t_all_s=times,
                       max_diff=None if math.isnan(diff) else diff, check=check)
            print(f"{n:6d} {peer:<9} {len(times):4d} {med * 1e3:12.3f} {min(times) * 1e3:12.3f} "
                  f"{check}", flush=True)
            results.append(rec)
            del d
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"versions": versions, "runs": args.runs, "max_seconds": args.max_seconds,
                       "results": results}, f, indent=1)
    return 1 if failures else 0


# ---- report ---------------------------------------------------------------------------

def load(path):
    """A JSON file, or None when it is missing or unreadable (a step that failed)."""
    if not path or not os.path.isfile(path):
        return None
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        print(f"apsp_peers.py: {path}: {e}", file=sys.stderr)
        return None


def ok_points(apsp):
    return [r for r in (apsp or {}).get("results", []) if r.get("status") == "ok"]


def fmt_ms(s):
    """Seconds as milliseconds: 3 decimals below a second, none above."""
    if s is None or (isinstance(s, float) and math.isnan(s)):
        return ""
    return f"{s * 1e3:.3f}" if s < 1 else f"{s * 1e3:.0f}"


def best(points, n, weight, methods=FW_METHODS):
    """The fastest point among `methods` at (n, weight), or None."""
    cand = [p for p in points if p["n"] == n and p["weight"] == weight and p["method"] in methods
            and p.get("t_compute_s") is not None]
    return min(cand, key=lambda p: p["t_compute_s"]) if cand else None


def method_grid(pts, out, cell):
    """A table of n by (method, weight); cell(point or None) gives each entry."""
    methods = list(dict.fromkeys(p["method"] for p in pts))
    weights = list(dict.fromkeys(p["weight"] for p in pts))
    sizes = sorted(set(p["n"] for p in pts))
    cols = [(w, m) for w in weights for m in methods]
    out.append("| n | " + " | ".join(f"{m} {w}" for w, m in cols) + " |")
    out.append("|---:|" + "---:|" * len(cols))
    for n in sizes:
        cells = [cell(next((p for p in pts if p["n"] == n and p["weight"] == w
                            and p["method"] == m), None)) for w, m in cols]
        out.append(f"| {n} | " + " | ".join(cells) + " |")


def table1(apsp, out):
    def cell(p):
        if p is None:
            return ""
        return fmt_ms(p["t_compute_s"]) if p["status"] == "ok" else p["status"]
    method_grid(apsp["results"], out, cell)


def table3(apsp, out):
    def cell(p):
        ok = p is not None and p["status"] == "ok" and p.get("efficiency") is not None
        return f"{p['efficiency'] * 100:.1f}" if ok else ""
    method_grid([p for p in apsp["results"] if p["method"] != "dijkstra"], out, cell)


def table4(apsp, out):
    pts = [p for p in ok_points(apsp) if p.get("t_pivot_s")]
    sizes = sorted(set(p["n"] for p in pts))[-2:]
    out.append("| n | weight | method | tile | pivot ms | panels ms | rest ms | rest share | "
               "compute ms | setup ms | upload ms | download ms |")
    out.append("|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in sizes:
        for p in (p for p in pts if p["n"] == n):
            share = p["t_rest_s"] / p["t_compute_s"] if p["t_compute_s"] else float("nan")
            out.append(f"| {n} | {p['weight']} | {p['method']} | {p['tile']} | "
                       f"{fmt_ms(p['t_pivot_s'])} | {fmt_ms(p['t_panels_s'])} | "
                       f"{fmt_ms(p['t_rest_s'])} | {share * 100:.1f}% | "
                       f"{fmt_ms(p['t_compute_s'])} | {fmt_ms(p['t_setup_s'])} | "
                       f"{fmt_ms(p['t_upload_s'])} | {fmt_ms(p['t_download_s'])} |")


def paths_table(apsp, out):
    pts = [p for p in ok_points(apsp) if p.get("t_paths_compute_s")]
    out.append("| n | method | distances ms | with paths ms | ratio |")
    out.append("|---:|---|---:|---:|---:|")
    for p in pts:
        out.append(f"| {p['n']} | {p['method']} | {fmt_ms(p['t_compute_s'])} | "
                   f"{fmt_ms(p['t_paths_compute_s'])} | {p['paths_ratio']:.2f} |")


def target(out, name, limit, value, met, where):
    """One row of the targets table: value None = not measured here."""
    status = "not measured" if value is None else ("**met**" if met else "**NOT met**")
    out.append(f"| {name} | {limit} | {value if value is not None else '-'} | {status} | {where} |")


def cmd_report(args):
    minplus, apsp = load(args.minplus), load(args.apsp)
    apsp1, large, peers = load(args.apsp1), load(args.apsp_large), load(args.peers)
    gpu = args.device == "gpu"
    out = ["# APSP benchmarks: the blocked Floyd-Warshall paper's tables on this machine", ""]
    if apsp:
        out.append(f"Device: {apsp['describe']}; {apsp['runs']} timed solves after "
                   f"{apsp['warmup']} warm-up, medians. Graphs random:N (N vertices, 4N arcs, "
                   f"integer weights in [0, N)). Method: doc/apsp.md, \"Benchmarks\".")
    if args.command:
        out.append("")
        out.append(f"Command: `{args.command}`")
    out.append("")
    out.append("## The min-plus peak (bench_minplus)")
    out.append("")
    if minplus:
        out.append(f"{minplus['describe']}; relaxations min(a + b, c) per second of register "
                   "chains (krill_apsp_peak).")
        out.append("")
        per = "per SM per clock" if gpu else "per thread, G/s"
        out.append(f"| weight | Grelax/s | {per} |")
        out.append("|---|---:|---:|")
        for r in minplus["results"]:
            v = r["relax_per_sm_per_clock"] if gpu else r["relax_per_thread_per_s"]
            rate = r["relax_per_s"]
            if rate is None:
                out.append(f"| {r['weight']} | FAILED: {r['message']} | |")
                continue
            per_cell = "" if v is None else (f"{v:.2f}" if gpu else f"{v * 1e-9:.1f}")
            out.append(f"| {r['weight']} | {rate * 1e-9:.1f} | {per_cell} |")
    else:
        out.append("No result (see logs/minplus.log).")
    out.append("")
    for title, data in (("", apsp), (" (n = 32768)", large)):
        if not data:
            continue
        out.append(f"## Table 1{title}: compute time, ms (median t_compute)")
        out.append("")
        table1(data, out)
        out.append("")
    if apsp:
        out.append("## Table 3: efficiency, % of the measured peak of the same weight type")
        out.append("")
        out.append("Relaxations / t_compute / peak, relaxations = n^3 (the Floyd-Warshall count, "
                   "whatever the padding).")
        out.append("")
        table3(apsp, out)
        if large:
            out.append("")
            table3(large, out)
        out.append("")
        out.append("## Table 4: the blocked methods' time by kind of tile (the two largest n)")
        out.append("")
        table4(apsp, out)
        out.append("")
        out.append("## Paths (int32, the largest n each method ran): t_compute with P")
        out.append("")
        paths_table(apsp, out)
        if large:
            paths_table(large, out)
        out.append("")
    pts = ok_points(apsp)
    if gpu and pts:
        out.append("## Against the pre-blocking baseline (krill's plain method: one kernel per k)")
        out.append("")
        out.append("| n | weight | plain ms | best blocked | ms | speedup |")
        out.append("|---:|---|---:|---|---:|---:|")
        for n in sorted(set(p["n"] for p in pts)):
            for w in dict.fromkeys(p["weight"] for p in pts):
                pl = next((p for p in pts if p["n"] == n and p["weight"] == w and
                           p["method"] == "plain"), None)
                b = best(pts, n, w)
                if pl and b:
                    out.append(f"| {n} | {w} | {fmt_ms(pl['t_compute_s'])} | {b['method']} | "
                               f"{fmt_ms(b['t_compute_s'])} | "
                               f"{pl['t_compute_s'] / b['t_compute_s']:.1f}x |")
        out.append("")
    pts1 = ok_points(apsp1)
    if apsp1:
        out.append("## One thread: compute time, ms, and efficiency, % of the one-thread peak")
        out.append("")
        table1(apsp1, out)
        out.append("")
        table3(apsp1, out)
        out.append("")
    if peers:
        out.append("## Peers: SciPy and NetworkX on the same graphs (one thread each)")
        out.append("")
        out.append("Wall time of one call (time.perf_counter), median. `krill 1t`: the fastest "
                   "blocked method on one thread (int32, t_compute, PER_CORE_SIZES only); the "
                   "ratios are the peer's time over krill 1t's. `check`: the peer's distances "
                   "against krill's, entry for entry.")
        out.append("")
        out.append("| n | scipy FW ms | scipy D ms | networkx FW ms | krill 1t method | "
                   "krill 1t ms | scipy FW / krill 1t | scipy D / krill 1t | krill 1t double ms "
                   "| scipy FW / krill 1t double | check |")
        out.append("|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---|")
        for n in sorted(set(r["n"] for r in peers["results"])):
            row = {r["peer"]: r for r in peers["results"] if r["n"] == n}
            k1 = best(pts1, n, "int32")
            k1d = best(pts1, n, "double")
            sfw = row.get("scipy-fw")
            dbl = f"{fmt_ms(k1d['t_compute_s'])} ({k1d['method']})" if k1d else ""
            dbl_ratio = f"{sfw['t_median_s'] / k1d['t_compute_s']:.1f}" if k1d and sfw and \
                sfw.get("t_median_s") else ""

            def cell(name):
                r = row.get(name)
                return fmt_ms(r["t_median_s"]) if r and r.get("status") in ("ok", "wrong") \
                    else (r["status"] if r else "")

            def ratio(name):
                r = row.get(name)
                return f"{r['t_median_s'] / k1['t_compute_s']:.1f}" if r and k1 and \
                    r.get("t_median_s") else ""
            checks = ", ".join(f"{k}: {r.get('check', r['status'])}" for k, r in row.items())
            out.append(f"| {n} | {cell('scipy-fw')} | {cell('scipy-d')} | {cell('nx-fw')} | "
                       f"{k1['method'] if k1 else ''} | {fmt_ms(k1['t_compute_s']) if k1 else ''}"
                       f" | {ratio('scipy-fw')} | {ratio('scipy-d')} | {dbl} | {dbl_ratio} | "
                       f"{checks} |")
        out.append("")
        out.append(f"Versions: {', '.join(f'{k} {v}' for k, v in peers['versions'].items())}.")
        out.append("")

    # ---- the targets
    out.append("## The issue's targets")
    out.append("")
    out.append("| target | limit | measured | status | where |")
    out.append("|---|---|---|---|---|")
    gpu_name = apsp["describe"] if apsp else "?"
    if gpu:
        where_gpu = f"GPU ({gpu_name})" + ("" if "H100" in gpu_name else
                                            "; the targets are for an H100")
    else:
        where_gpu = "GPU target: bench/run_apsp.sh with DEVICE=gpu"
    peak = (apsp or {}).get("peak_relax_per_s", {})
    b16 = best(pts, 16384, "int32") if gpu else None
    target(out, "int32, distances, n = 16384", "<= 0.40 s",
           f"{b16['t_compute_s']:.3f} s ({b16['method']})" if b16 else None,
           b16 is not None and b16["t_compute_s"] <= 0.40, where_gpu)
    target(out, "int32, n = 16384, share of the measured peak", ">= 75%",
           f"{b16['efficiency'] * 100:.1f}% of {peak.get('int32', 0) * 1e-9:.0f} Grelax/s"
           if b16 else None, b16 is not None and b16["efficiency"] >= 0.75, where_gpu)
    pth = b16.get("t_paths_compute_s") if b16 else None
    target(out, "with paths, n = 16384 (same method)", "<= 1.6x distances only",
           f"{b16['paths_ratio']:.2f}x" if pth else None, bool(pth) and b16["paths_ratio"] <= 1.6,
           where_gpu)
    b32 = best(ok_points(large), 32768, "int32") if gpu else None
    target(out, "int32, n = 32768", "<= 3.2 s",
           f"{b32['t_compute_s']:.3f} s ({b32['method']})" if b32 else None,
           b32 is not None and b32["t_compute_s"] <= 3.2, where_gpu)
    nmax = max((p["n"] for p in pts if p["weight"] == "float" and p["method"] in FW_METHODS),
               default=None)
    bi, bf = (best(pts, nmax, "int32"), best(pts, nmax, "float")) if nmax else (None, None)
    target(out, f"float vs int32 (best blocked, n = {nmax})", "within 1.3x",
           f"{bf['t_compute_s'] / bi['t_compute_s']:.2f}x" if bi and bf else None,
           bool(bi and bf) and bf["t_compute_s"] / bi["t_compute_s"] <= 1.3,
           where_gpu if gpu else "CPU (the target is stated for the GPU; shown here as well)")
    sfw = next((r for r in (peers or {}).get("results", []) if r["n"] == 2048 and
                r["peer"] == "scipy-fw" and r.get("t_median_s")), None)
    k1 = best(pts1, 2048, "int32")
    target(out, "CPU blocked FW vs SciPy FW per core, n = 2048", ">= 8x",
           f"{sfw['t_median_s'] / k1['t_compute_s']:.1f}x ({k1['method']} int32, 1 thread)"
           if sfw and k1 else None,
           bool(sfw and k1) and sfw["t_median_s"] / k1["t_compute_s"] >= 8.0,
           "CPU, one thread each" if not gpu else "CPU target: run DEVICE=cpu")
    out.append("")
    out.append("`not measured`: the target belongs to the other device, or its step failed "
               "(see logs/).")
    text = "\n".join(out) + "\n"
    if args.out:
        with open(args.out, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run", help="time the peers on bench_apsp's graphs")
    r.add_argument("--graphs", required=True, help="bench_apsp --write-graph DIR")
    r.add_argument("--dist", help="bench_apsp --write-dist DIR (krill's D, for the check)")
    r.add_argument("--sizes", help="comma-separated n (default: every graph in --graphs)")
    r.add_argument("--peers", default="scipy-fw,scipy-d,nx-fw")
    r.add_argument("--runs", type=int, default=3)
    r.add_argument("--max-seconds", type=float, default=60.0)
    r.add_argument("--nx-max", type=int, default=1024)
    r.add_argument("--json")
    p = sub.add_parser("report", help="the markdown report of run_apsp.sh")
    p.add_argument("--device", choices=("cpu", "gpu"), required=True)
    p.add_argument("--minplus")
    p.add_argument("--apsp")
    p.add_argument("--apsp1")
    p.add_argument("--apsp-large")
    p.add_argument("--peers")
    p.add_argument("--command")
    p.add_argument("--out")
    args = ap.parse_args()
    return cmd_run(args) if args.cmd == "run" else cmd_report(args)


if __name__ == "__main__":
    sys.exit(main())
