"""check_formats.py A.mtx OUT.json [--csv FILE] [--svg FILE] [--expect a,b,c] [--reordered]
                   [--gpu]

Checks the outputs of `krill formats A.mtx --device cpu|gpu --json OUT.json ...` against
what this script derives on its own from A.mtx:
- the matrix quantities (N, N_z, K, and the RBP runs: N_val, N_col, N_non, K_v, K_c);
- each format's stored bytes from the formulas of its storage (csr 8 (N+1) + 12 N_z with
  64-bit offsets, on the GPU (--gpu) 4 (N+1) + 12 N_z like cusparse; ell 12 N K, ellr
  + 4 N; RBP formulas (4)-(6) with 4-byte indices);
- the derived columns (bytes vs csr, GFLOP/s, ratio to cusparse, the fastest row) from the
  JSON's own times;
- that y agreed with the reference within the rounding bound;
- --csv: a header and one line per format, in the JSON's order, with the same bytes;
- --svg: well-formed XML, two panels, one bar per measured format in each, the matrix
  named in the title.
With --reordered the matrix was renumbered (RCM): only permutation-invariant quantities
are compared with A.mtx, and the RBP bytes with the JSON's own run counts.
Timings are never compared with anything but the JSON's other fields."""
import argparse
import csv
import json
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)


def read_mtx(path):
    """Rows of a Matrix Market coordinate file as sorted column lists (symmetric expanded)."""
    with open(path) as f:
        header = f.readline().lower().split()
        symmetry = header[4] if len(header) > 4 else "general"
        line = f.readline()
        while line.startswith("%"):
            line = f.readline()
        n_rows, n_cols, entries = (int(t) for t in line.split()[:3])
        rows = [set() for _ in range(n_rows)]
        for _ in range(entries):
            i, j = (int(t) - 1 for t in f.readline().split()[:2])
            rows[i].add(j)
            if symmetry != "general" and i != j:
                rows[j].add(i)
    return n_rows, n_cols, [sorted(r) for r in rows]


def matrix_quantities(n_rows, n_cols, rows):
    q = {"N": n_rows, "n_cols": n_cols, "Nz": sum(len(r) for r in rows),
         "K": max((len(r) for r in rows), default=0),
         "empty_rows": sum(1 for r in rows if not r),
         "N_val": 0, "N_col": 0, "N_non": 0, "Kv": 0, "Kc": 0}
    for cols in rows:                        # runs: >= 2 consecutive columns
        row_val = row_col = 0
        p = 0
        while p < len(cols):
            q_end = p + 1
            while q_end < len(cols) and cols[q_end] == cols[q_end - 1] + 1:
                q_end += 1
            if q_end - p >= 2:
                row_val += q_end - p
                row_col += 2
            else:
                q["N_non"] += 1
            p = q_end
        q["N_val"] += row_val
        q["N_col"] += row_col
        q["Kv"] = max(q["Kv"], row_val)
        q["Kc"] = max(q["Kc"], row_col)
    q["bandwidth"] = max((abs(i - j) for i, r in enumerate(rows) for j in r), default=0)
    return q


def expected_bytes(name, q, gpu):
    n, nz, k = q["N"], q["Nz"], q["K"]
    base = name.split(":")[0]
    offsets = 4 if gpu and nz <= 2**31 - 1 else 8     # the GPU CSRs keep 32-bit offsets
    formulas = {
        "csr": offsets * (n + 1) + 12 * nz,
        "ell": 12 * n * k,
        "ellr": 12 * n * k + 4 * n,
        "rbp-csr": 12 * (n + 1) + 4 * q["N_col"] + 8 * q["N_val"] + 12 * q["N_non"],
        "rbp-ell": 8 * n * q["Kv"] + 4 * n * q["Kc"] + 12 * q["N_non"] + 4 * (n + 1),
    }
    formulas["rbp-ellr"] = formulas["rbp-ell"] + 4 * n
    if gpu:
        formulas["cusparse"] = formulas["csr"]
    return formulas.get(base)


def close(a, b):
    return abs(a - b) <= 1e-9 * max(abs(a), abs(b))


def check_json(doc, q, reordered, expect, gpu):
    m = doc["matrix"]
    keys = ("N", "n_cols", "Nz", "K", "empty_rows") if reordered else \
        ("N", "n_cols", "Nz", "K", "empty_rows", "N_val", "N_col", "N_non", "Kv", "Kc")
    for key in keys:
        check(m[key] == q[key], f"matrix.{key} = {m[key]}, expected {q[key]}")
    check(doc["bandwidth_before"] == q["bandwidth"],
          f"bandwidth_before = {doc['bandwidth_before']}, expected {q['bandwidth']}")
    check(doc["reorder"] == ("rcm" if reordered else "none"), f"reorder = {doc['reorder']}")
    runs = m if reordered else q             # RBP bytes depend on the numbering
    formats = doc["formats"]
    for name in expect:
        check(name in formats and formats[name]["measured"], f"{name} was not measured")
    csr = formats.get("csr")
    measured = {name: f for name, f in formats.items() if f["measured"]}
    for name, f in formats.items():
        if not f["measured"]:
            check(isinstance(f.get("error"), str) and f["error"], f"{name}: no error message")
            continue
        built = f["chosen"] or name
        want = expected_bytes(built, {**q, **{k: runs[k] for k in
                                              ("N_val", "N_col", "N_non", "Kv", "Kc")}}, gpu)
        if want is not None:
            check(f["bytes"] == want, f"{name}: bytes {f['bytes']}, formula gives {want}")
        if f["chosen"] and f["chosen"] in measured:
            check(f["bytes"] == measured[f["chosen"]]["bytes"],
                  f"{name} chose {f['chosen']} but stores other bytes")
        s = f["stats"]
        for key in ("N", "n_cols", "Nz"):
            check(s[key] == q[key], f"{name}: stats.{key} = {s[key]}, expected {q[key]}")
        if csr and csr["measured"]:
            check(close(f["bytes_vs_csr"], f["bytes"] / csr["bytes"]), f"{name}: bytes_vs_csr")
        check(f["spmv_seconds"] > 0, f"{name}: spmv_seconds {f['spmv_seconds']}")
        check(close(f["gflops"], 2 * q["Nz"] / f["spmv_seconds"] / 1e9), f"{name}: gflops")
        moved = f["bytes"] + 8 * q["n_cols"] + 8 * q["N"]
        check(f["bytes_moved"] == moved, f"{name}: bytes_moved {f['bytes_moved']} != {moved}")
        peer = formats.get("cusparse")
        if gpu and peer and peer["measured"]:
            check(close(f["speedup_vs_cusparse"], peer["spmv_seconds"] / f["spmv_seconds"]),
                  f"{name}: speedup_vs_cusparse")
        check(f["within_rounding"] and f["max_rel_diff"] is not None
              and f["max_rel_diff"] <= doc["rounding_bound"],
              f"{name}: max_rel_diff {f['max_rel_diff']} > {doc['rounding_bound']}")
    plain = {n: f for n, f in measured.items() if not f["chosen"]}
    if plain:
        fastest = min(plain, key=lambda n: plain[n]["spmv_seconds"])
        check(doc["fastest"] == fastest, f"fastest = {doc['fastest']}, expected {fastest}")


def check_csv(path, doc):
    with open(path, newline="") as f:
        rows = list(csv.reader(f))
    header = rows[0]
    for column in ("format", "measured", "bytes", "spmv_seconds", "N", "Nz", "K", "Kv", "Kc",
                   "N_val", "N_col", "N_non", "error"):
        check(column in header, f"CSV: no column {column}")
    names = list(doc["formats"])
    check([r[0] for r in rows[1:]] == names, f"CSV: formats {[r[0] for r in rows[1:]]}, "
          f"JSON {names}")
    for r in rows[1:]:
        check(len(r) == len(header), f"CSV: {r[0]} has {len(r)} fields, header {len(header)}")
        line = dict(zip(header, r))
        f = doc["formats"].get(line["format"], {})
        check(line["measured"] == ("1" if f.get("measured") else "0"), f"CSV: {r[0]} measured")
        if f.get("measured"):
            check(int(line["bytes"]) == f["bytes"], f"CSV: {r[0]} bytes differ from JSON")
            check(int(line["N_non"]) == f["stats"]["N_non"], f"CSV: {r[0]} N_non differs")


def check_svg(path, doc):
    root = ET.parse(path).getroot()          # raises on malformed XML
    check(root.tag == SVG + "svg", f"SVG: root is {root.tag}")
    panels = [g for g in root.iter(SVG + "g") if g.get("class") == "panel"]
    check([g.get("id") for g in panels] == ["memory", "spmv-time"],
          f"SVG: panels {[g.get('id') for g in panels]}")
    n_measured = sum(1 for f in doc["formats"].values() if f["measured"])
    for g in panels:
        bars = [r for r in g.iter(SVG + "rect") if r.get("class") == "bar"]
        check(len(bars) == n_measured, f"SVG {g.get('id')}: {len(bars)} bars, "
              f"{n_measured} measured formats")
        check(all(float(r.get("width")) >= 0 for r in bars), "SVG: negative bar width")
    title = "".join(next(root.iter(SVG + "text")).itertext())
    check(doc["source"] in title, f"SVG: title {title!r} does not name {doc['source']!r}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("mtx")
    parser.add_argument("json")
    parser.add_argument("--csv")
    parser.add_argument("--svg")
    parser.add_argument("--expect", default="")
    parser.add_argument("--reordered", action="store_true")
    parser.add_argument("--gpu", action="store_true", help="run with --device gpu")
    args = parser.parse_args()
    with open(args.json) as f:
        doc = json.load(f)                   # raises on anything but one JSON value
    q = matrix_quantities(*read_mtx(args.mtx))
    check_json(doc, q, args.reordered, [e for e in args.expect.split(",") if e], args.gpu)
    if args.csv:
        check_csv(args.csv, doc)
    if args.svg:
        check_svg(args.svg, doc)
    for failure in failures:
        print("FAIL:", failure)
    print(f"checked {len(doc['formats'])} formats: {', '.join(doc['formats'])}")
    return 1 if failures else 0


sys.exit(main())
