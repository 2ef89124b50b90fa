#!/usr/bin/env python3
"""bench/scale_mpi_gpu.py - distributed solves on GPU ranks: strong and weak scaling and the
hidden fraction of the halo exchange (issue 19).

    scale_mpi_gpu.py --krill BIN --mpiexec CMD [--ranks "1 2"] [--strong SPEC]
                     [--weak "SPEC SPEC ..." | SPEC,SPEC,...] [--methods cg:jacobi,gmres:none]
                     [--maxit 200] [--timeout 300] [--repro] [--nccl-too] [--json FILE]

Every run is `mpiexec -n P krill solve --device gpu --gen SPEC --solver S --precond M
--maxit N --rtol 1e-30 --runs 3 --json` (one GPU per rank: rank r of a node takes GPU r mod
the node's count): N iterations, none converged, so every run does the same work; time per
iteration = the median of the 3 repeated solves (times.median_total) / N. Strong scaling:
one matrix (--strong) on each rank count; efficiency = t(1) / (P t(P)). Weak scaling: the
k-th spec of --weak on the k-th rank count (rows per rank about constant); efficiency =
t(1) / t(P) per row held. The peer is krill on one GPU without MPI (`krill solve --device
gpu`, same options): the cost of the distributed path itself at P = 1. Each row reports the
exchange's time in flight and the part of it hidden behind the diagonal block's product
(times.halo, times.halo_hidden: rank 0's). Those, `comm` and `first solve ms` (times.total)
are the first of the 3 solves' (krill solve reports the first), so they include what a
library pays once (NCCL connects at its first messages; krill makes those at setup). The
JSON keeps each run's whole `times`. Prints a Markdown table.

The column `reductions` is what rank 0's context reported (krill solve's "device"): host
(the round trip through page-locked memory and MPI; the default below four ranks) or NCCL
(reductions and halos on the GPU's streams, core/nccl.cu; the default from four ranks on,
KRILL_NCCL=1 asks for it on any count). With NCCL `comm` counts the
host's time inside the reductions' calls (NCCL blocks there while the GPU catches up) and
the halo columns are timed by device events (the flight includes the wait for the peer).
--nccl-too: every row of more than one rank twice, with KRILL_NCCL=0 (host) and
KRILL_NCCL=1 (NCCL), so that the two are measured in one call on the same machine.

--repro: the strong rows again with `--repro` (exact mode), a second table: the time per
iteration against the plain run's of the same rank count (issue 19's target: at most 1.2x)
and whether the solution's bits (x_hash) equal those of one GPU without MPI.
"""
import argparse
import json
import os
import shlex
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_petsc as cp  # noqa: E402


def solve(a, spec, method, ranks, repro=False, nccl=None):
    """nccl: None (krill's default for the rank count), False (KRILL_NCCL=0), True (=1)"""
    solver, precond = method.split(":")
    cmd = ([] if ranks == 0 else a.mpiexec + ["-n", str(ranks)]) + [
        a.krill, "solve", "--device", a.device, "--gen", spec, "--solver", solver,
        "--precond", precond, "--maxit", str(a.maxit), "--rtol", "1e-30", "--runs", "3",
        "--json"] + (["--repro"] if repro else [])
    pin = "" if nccl is None else f"KRILL_NCCL={int(nccl)}"
    env = dict(os.environ, KRILL_NCCL=pin[-1]) if pin else None
    rc, out, err, _ = cp.run(cmd, a.timeout, env=env)
    res = {"cmd": (pin + " " if pin else "") + " ".join(cmd), "spec": spec,
           "method": method, "ranks": ranks, "rc": rc}
    try:
        doc = json.loads(out[out.index("{"):out.rindex("}") + 1])   # exit 1: not converged
        t = doc["times"]
        its = doc["iterations"]
        res.update(iterations=its, per_iter=t["median_total"] / its, comm=t.get("comm", 0.0),
                   total=t["total"], halo=t.get("halo", 0.0),
                   halo_hidden=t.get("halo_hidden", 0.0), rows=doc.get("n"), times=t,
                   x_hash=doc.get("x_hash"), repro=repro,
                   reductions="NCCL" if ": NCCL" in str(doc.get("device", "")) else "host")
    except (ValueError, KeyError, TypeError, ZeroDivisionError):
        res["error"] = cp.last_line(err) or cp.last_line(out) or f"exit {rc}"
    return res


def row(r, base, kind, p):
    if "error" in r:
        return (f"| {kind} | {r['spec']} | {r['method']} | {p} | - | - | - | - | - | - | - | "
                f"{r['error']} |")
    eff = "-"
    if base and "per_iter" in base and p > 0:
        eff = f"{base['per_iter'] / (r['per_iter'] * (p if kind == 'strong' else 1)):.2f}"
    hidden = f"{100 * r['halo_hidden'] / r['halo']:.0f}%" if r["halo"] > 0 else "-"
    comm = f"{100 * r['comm'] / r['total']:.1f}%" if r["total"] > 0 else "-"
    return (f"| {kind} | {r['spec']} | {r['method']} | {p if p else '1 (no MPI)'} | "
            f"{r['reductions']} | {r['iterations']} | {1e3 * r['per_iter']:.3f} | {eff} | {comm} | "
            f"{1e3 * r['halo']:.1f} | {hidden} | {1e3 * r['total']:.1f} |")


def repro_table(a, ranks, plain):
    """The strong rows with --repro: cost against plain, bits against one GPU without MPI."""
    out = []
    print("\n| matrix | solver:pc | ranks | plain ms/iter | repro ms/iter | repro/plain | "
          "x_hash | same bits as 1 GPU (no MPI) |")
    print("|---|---|---:|---:|---:|---:|---|---|")
    for method in a.methods.split(","):
        ref = None
        for p in [0] + ranks:
            r = solve(a, a.strong, method, p, repro=True)
            out.append(r)
            base = plain.get((method, p, r.get("reductions")), {})   # the same path's
            if "error" in r:
                print(f"| {a.strong} | {method} | {p} | - | - | - | - | {r['error']} |", flush=True)
                continue
            ref = ref or r
            ratio = (f"{r['per_iter'] / base['per_iter']:.2f}" if "per_iter" in base else "-")
            plain_ms = f"{1e3 * base['per_iter']:.3f}" if "per_iter" in base else "-"
            same = "yes" if r["x_hash"] == ref["x_hash"] else "NO"
            print(f"| {a.strong} | {method} | {p if p else '1 (no MPI)'} | {plain_ms} | "
                  f"{1e3 * r['per_iter']:.3f} | {ratio} | {r['x_hash']} | {same} |", flush=True)
            if same == "NO":
                r["error"] = "bits differ from one GPU"
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--krill", required=True)
    ap.add_argument("--mpiexec", required=True, help="e.g. 'mpiexec --oversubscribe'")
    ap.add_argument("--ranks", default="1 2")
    ap.add_argument("--strong", default="poisson3d:160")
    ap.add_argument("--weak", default="poisson3d:128,poisson3d:161,poisson3d:203")
    ap.add_argument("--methods", default="cg:jacobi,gmres:none")
    ap.add_argument("--maxit", type=int, default=200)
    ap.add_argument("--timeout", type=float, default=300)
    ap.add_argument("--device", default="gpu", help="cpu: a dry run of the script")
    ap.add_argument("--repro", action="store_true",
                    help="the strong rows again in reproducible mode (cost, bits)")
    ap.add_argument("--nccl-too", action="store_true",
                    help="rows of more than one rank with KRILL_NCCL=0 and =1 (host, NCCL)")
    ap.add_argument("--json")
    a = ap.parse_args()
    a.mpiexec = shlex.split(a.mpiexec)
    ranks = [int(r) for r in a.ranks.split()]
    # specs hold commas (elasticity3d:160,64,64): a list with spaces is split on them
    weak = a.weak.split() if " " in a.weak.strip() else a.weak.split(",")
    results = []
    print("| scaling | matrix | solver:pc | ranks | reductions | its | ms/iter | efficiency | "
          "comm | halo in flight ms | hidden | first solve ms |")
    print("|---|---|---|---:|---|---:|---:|---:|---:|---:|---:|---:|")

    def both(spec, method, p, kind, base):
        """the run; with --nccl-too on more than one rank, the host and the NCCL runs"""
        for nccl in ([False, True] if a.nccl_too and p > 1 else [None]):
            r = solve(a, spec, method, p, nccl=nccl)
            r["kind"] = kind
            results.append(r)
            base = base or r
            print(row(r, base, kind, p), flush=True)
        return base

    for method in a.methods.split(","):
        peer = solve(a, a.strong, method, 0)
        peer["kind"] = "strong"
        results.append(peer)
        print(row(peer, None, "strong", 0), flush=True)
        base = None
        for p in ranks:
            base = both(a.strong, method, p, "strong", base)
        base = None
        for p, spec in zip(ranks, weak):
            base = both(spec, method, p, "weak", base)
    if a.repro:
        results += repro_table(a, ranks, {(r["method"], r["ranks"], r.get("reductions")): r
                                          for r in results if r.get("kind") == "strong"})
    if a.json:
        with open(a.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0 if all("error" not in r for r in results) else 1


if __name__ == "__main__":
    sys.exit(main())
