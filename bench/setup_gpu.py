#!/usr/bin/env python3
"""bench/setup_gpu.py - the GPU matrix setup, before and after the pipelined build (issue 16)

    setup_gpu.py --after BUILD/apps/krill [--before OLD/apps/krill] [--gen SPEC] [--runs R]
                 [--formats LIST] [--json OUT]

Times krill_mat_create on the GPU for every format, as `krill formats --json` reports it
(build_seconds: the host work and the host-to-device copies, wall clock), R times per binary
in separate processes (each process builds the formats in the same order; the first staged
upload of a process also allocates the context's page-locked slots, which is counted), and
prints per format the median build time of each binary, after / before, and the rate at which
the matrix reached the device: the CSR's bytes (12 nnz + 8 (N + 1)) / build time. The two
binaries run alternately (before, after, before, ...) on the same generated matrix, so that
drift on the machine hits both. Standard library only.
"""
import argparse
import json
import statistics
import subprocess
import sys

FORMATS = "csr,ell,ellr,rbp-csr,rbp-ell,rbp-ellr,segscan,cusparse"


def run(krill, spec, formats):
    cmd = [krill, "formats", "--gen", spec, "--device", "gpu", "--formats", formats,
           "--warmup", "1", "--reps", "3", "--json", "-"]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    return json.loads(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--after", required=True, help="krill binary with the pipelined setup")
    ap.add_argument("--before", help="krill binary to compare against")
    ap.add_argument("--gen", default="elasticity3d:160,64,64")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--formats", default=FORMATS)
    ap.add_argument("--json")
    a = ap.parse_args()
    bins = {"after": a.after}
    if a.before:
        bins = {"before": a.before, "after": a.after}
    times = {k: {} for k in bins}
    report = None
    for _ in range(a.runs):
        for label, krill in bins.items():
            report = run(krill, a.gen, a.formats)
            for name, f in report["formats"].items():
                if f.get("build_seconds") is not None:
                    times[label].setdefault(name, []).append(f["build_seconds"])
    m = report["matrix"]
    csr_bytes = 12 * m["Nz"] + 8 * (m["N"] + 1)
    print(f"{a.gen}: N {m['N']}, nnz {m['Nz']}, CSR {csr_bytes / 1e6:.0f} MB; "
          f"{report['device']}; median of {a.runs} builds per binary")
    head = "| format | MB stored |"
    head += " before ms | after ms | after / before |" if a.before else " build ms |"
    head += " CSR GB/s (after) |"
    print(head)
    print("|---" * (head.count("|") - 1) + "|")
    rows = {}
    for name in a.formats.split(","):
        if name not in times["after"]:
            continue
        after = statistics.median(times["after"][name])
        mb = report["formats"][name]["bytes"] / 1e6
        row = {"mb_stored": mb, "after_s": after, "after_runs": times["after"][name]}
        line = f"| {name} | {mb:.0f} |"
        if a.before and name in times["before"]:
            before = statistics.median(times["before"][name])
            row.update(before_s=before, before_runs=times["before"][name], ratio=after / before)
            line += f" {before * 1e3:.1f} | {after * 1e3:.1f} | {after / before:.3f} |"
        else:
            line += f" {after * 1e3:.1f} |"
        line += f" {csr_bytes / after / 1e9:.1f} |"
        print(line)
        rows[name] = row
    if a.json:
        with open(a.json, "w") as f:
            json.dump({"gen": a.gen, "device": report["device"], "runs": a.runs,
                       "csr_bytes": csr_bytes, "formats": rows}, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
