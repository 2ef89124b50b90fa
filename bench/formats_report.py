#!/usr/bin/env python3
"""bench/formats_report.py - the format comparison of issue 3 from bench_spmv / bench_gmres_formats JSON.

    formats_report.py [--spmv FILE ...] [--gmres FILE ...] [--md OUT.md] [--svg OUT.svg]

From bench_spmv --json (one file per device) it writes, per device:
  - the SpMV paper's comparison (its Figures 3 and 7, GFLOP/s per matrix and kernel) as a
    markdown table, and as a grouped bar chart (--svg, one panel per device);
  - per matrix: the fastest krill format, its GB/s of bytes moved, the cuSPARSE time over
    its time (>= 1: krill faster), what `auto` chose and its time over the best;
  - the targets of the issue, each with the ratio measured and met / not met:
    best krill format at least as fast as cuSPARSE on every matrix; >= 1.3x on the
    elasticity matrix; >= 2.2 TB/s on the large FEM matrices (poisson3d:160, elasticity3d);
    segscan on band1x within 1.3x of its time on band1; auto within 10% of the best on at
    least 90% of the matrices.
From bench_gmres_formats --json: the RBP paper's Figure 8 breakdown per matrix and format.
Standard library only.
"""
import argparse
import json
import math
import sys
from xml.sax.saxutils import escape

PEER = "cusparse"
LARGE_FEM = ("poisson3d:160", "elasticity3d")


def load(path):
    with open(path) as f:
        return json.load(f)


def is_auto(fmt):
    return fmt == "auto" or fmt.startswith("auto:")


def by_matrix(doc):
    """{matrix: {format: result}} in first-seen order, successful results only."""
    out = {}
    for r in doc.get("results", []):
        if r.get("ok") and r.get("t_median_s"):
            out.setdefault(r["matrix"], {})[r["format"]] = r
    return out


def device_kind(doc):
    return "gpu" if "CUDA" in doc.get("device", "") or "GPU" in doc.get("device", "") \
        or "NVIDIA" in doc.get("device", "") else "cpu"


def best_krill(rows):
    cands = [(r["t_median_s"], f) for f, r in rows.items() if f != PEER and not is_auto(f)]
    return min(cands) if cands else (None, None)


def spmv_section(doc):
    mats = by_matrix(doc)
    fmts = []
    for rows in mats.values():
        for f in rows:
            if f not in fmts:
                fmts.append(f)
    lines = [f"### SpMV on {doc.get('device', '?')}", "",
             "GFLOP/s (2 nnz / median time), the SpMV paper's Figures 3 and 7 on this "
             "hardware:", "",
             "| matrix | " + " | ".join(fmts) + " |", "|---|" + "---:|" * len(fmts)]
    for m, rows in mats.items():
        cells = [f"{rows[f]['gflop_per_s']:.1f}" if f in rows else "-" for f in fmts]
        lines.append(f"| {m} | " + " | ".join(cells) + " |")
    lines += ["", "| matrix | best krill format | µs | GB/s | cuSPARSE µs / best µs | "
              "auto chose | auto µs / best µs |", "|---|---|---:|---:|---:|---|---:|"]
    summary = {}
    for m, rows in mats.items():
        t_best, f_best = best_krill(rows)
        if f_best is None:
            continue
        peer = rows.get(PEER)
        auto = next((rows[f] for f in rows if is_auto(f)), None)
        s = {"best": f_best, "t_best": t_best, "gbs": rows[f_best]["gb_per_s"],
             "peer_speedup": peer["t_median_s"] / t_best if peer else None,
             "auto": auto["variant"] if auto else None,
             "auto_ratio": auto["t_median_s"] / t_best if auto else None,
             "segscan": rows.get("segscan", {}).get("t_median_s")}
        summary[m] = s
        lines.append(
            f"| {m} | {f_best} | {t_best * 1e6:.1f} | {s['gbs']:.0f} | "
            + (f"{s['peer_speedup']:.2f}" if peer else "-") + " | "
            + (s["auto"] or "-") + " | "
            + (f"{s['auto_ratio']:.2f}" if auto else "-") + " |")
    lines.append("")
    return lines, summary, fmts, mats


def target_lines(summary, kind):
    lines = [f"Targets ({kind}):", ""]

    def verdict(ok):
        return "met" if ok else "NOT met"

    peer = {m: s["peer_speedup"] for m, s in summary.items() if s["peer_speedup"]}
    if peer:
        worst = min(peer.items(), key=lambda kv: kv[1])
        lines.append(f"- best krill format >= cuSPARSE on every matrix: worst "
                     f"{worst[1]:.2f}x on {worst[0]} -> {verdict(worst[1] >= 1.0)}")
        for m, v in peer.items():
            if m.startswith("elasticity3d"):
                lines.append(f"- >= 1.3x cuSPARSE on {m}: {v:.2f}x -> {verdict(v >= 1.3)}")
    for m, s in summary.items():
        if kind == "gpu" and m.startswith(LARGE_FEM):
            lines.append(f"- >= 2.2 TB/s on {m}: {s['gbs'] / 1e3:.2f} TB/s ({s['best']}) -> "
                         f"{verdict(s['gbs'] >= 2200)}")
    b1, b1x = summary.get("band1", {}).get("segscan"), summary.get("band1x", {}).get("segscan")
    if b1 and b1x:
        lines.append(f"- segscan band1x / band1 time <= 1.3: {b1x / b1:.2f} -> "
                     f"{verdict(b1x / b1 <= 1.3)}")
    autos = [s["auto_ratio"] for s in summary.values() if s["auto_ratio"]]
    if autos:
        within = sum(1 for a in autos if a <= 1.10)
        lines.append(f"- auto within 10% of the best on >= 90% of matrices: {within} of "
                     f"{len(autos)} ({100.0 * within / len(autos):.0f}%), worst "
                     f"{max(autos):.2f}x -> {verdict(within >= 0.9 * len(autos))}")
    lines.append("")
    return lines


def gmres_section(doc):
    lines = [f"### GMRES({doc.get('restart')}) with every format on {doc.get('device', '?')} "
             f"(the RBP paper's Figure 8; at most {doc.get('maxit')} iterations)", "",
             "| matrix | format | MB | iterations | build s | transfer s | SpMV s | other s "
             "| total s |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in doc.get("results", []):
        if not r.get("ok"):
            lines.append(f"| {r['matrix']} | {r['format']} | failed: {r.get('message')} "
                         "| | | | | | |")
            continue
        lines.append(f"| {r['matrix']} | {r['format']} | {r['bytes'] / 1e6:.1f} | "
                     f"{r['iterations']} | {r['build_s']:.3f} | {r['transfer_s']:.4f} | "
                     f"{r['spmv_s']:.3f} | {r['other_s']:.3f} | {r['total_s']:.3f} |")
    lines.append("")
    return lines


COLORS = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2",
          "#7f7f7f", "#bcbd22", "#17becf", "#393b79", "#637939", "#8c6d31", "#843c39"]


def nice_ticks(vmax, count=5):
    if vmax <= 0:
        return [0, 1]
    raw = vmax / count
    mag = 10 ** math.floor(math.log10(raw))
    for step in (1, 2, 2.5, 5, 10):
        if step * mag >= raw:
            break
    step *= mag
    n = int(vmax / step) + 1
    return [i * step for i in range(n + 1)]


def short(matrix):
    """A matrix label for a plot: the file name without its folder and .mtx."""
    name = matrix.rsplit("/", 1)[-1]
    return name[:-4] if name.endswith(".mtx") else name


def svg_panels(panels, title):
    """panels: [(subtitle, matrices, formats, {matrix: {format: gflops}})] -> SVG text."""
    width, panel_h, top = 1100, 400, 50
    height = top + len(panels) * (panel_h + 40) + 30
    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           f'font-family="sans-serif" font-size="12">',
           f'<rect width="{width}" height="{height}" fill="white"/>',
           f'<text x="{width / 2}" y="24" text-anchor="middle" font-size="16">'
           f'{escape(title)}</text>']
    for p, (sub, mats, fmts, vals) in enumerate(panels):
        y0 = top + p * (panel_h + 40)
        x0, plot_w, plot_h = 90, width - 280, panel_h - 120
        vmax = max([v for m in vals.values() for v in m.values()] + [1e-9])
        ticks = nice_ticks(vmax)
        scale = plot_h / ticks[-1]
        out.append(f'<text x="{x0}" y="{y0 + 14}" font-size="14">{escape(sub)}</text>')
        base = y0 + 30 + plot_h
        for t in ticks:
            y = base - t * scale
            out.append(f'<line x1="{x0}" y1="{y:.1f}" x2="{x0 + plot_w}" y2="{y:.1f}" '
                       f'stroke="#ddd"/>')
            out.append(f'<text x="{x0 - 6}" y="{y + 4:.1f}" text-anchor="end">{t:g}</text>')
        out.append(f'<text transform="translate(18,{base - plot_h / 2:.0f}) rotate(-90)" '
                   f'text-anchor="middle">GFLOP/s</text>')
        group = plot_w / max(len(mats), 1)
        bar = group * 0.8 / max(len(fmts), 1)
        for i, m in enumerate(mats):
            gx = x0 + i * group + group * 0.1
            for j, f in enumerate(fmts):
                v = vals.get(m, {}).get(f)
                if v is None:
                    continue
                h = v * scale
                out.append(f'<rect x="{gx + j * bar:.1f}" y="{base - h:.1f}" '
                           f'width="{bar * 0.9:.1f}" height="{h:.1f}" '
                           f'fill="{COLORS[j % len(COLORS)]}"><title>{escape(m)} '
                           f'{escape(f)}: {v:.1f} GFLOP/s</title></rect>')
            lx = x0 + (i + 0.5) * group
            out.append(f'<text x="{lx:.1f}" y="{base + 14}" text-anchor="end" '
                       f'transform="rotate(-25 {lx:.1f} {base + 14})">{escape(short(m))}</text>')
        out.append(f'<line x1="{x0}" y1="{base}" x2="{x0 + plot_w}" y2="{base}" '
                   f'stroke="black"/>')
        for j, f in enumerate(fmts):
            ly = y0 + 40 + j * 18
            out.append(f'<rect x="{x0 + plot_w + 20}" y="{ly - 10}" width="12" height="12" '
                       f'fill="{COLORS[j % len(COLORS)]}"/>')
            out.append(f'<text x="{x0 + plot_w + 38}" y="{ly}">{escape(f)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--spmv", nargs="*", default=[])
    ap.add_argument("--gmres", nargs="*", default=[])
    ap.add_argument("--md")
    ap.add_argument("--svg")
    args = ap.parse_args()
    lines, panels = [], []
    for path in args.spmv:
        doc = load(path)
        sec, summary, fmts, mats = spmv_section(doc)
        lines += sec + target_lines(summary, device_kind(doc))
        gflops = {m: {f: r["gflop_per_s"] for f, r in rows.items() if not is_auto(f)}
                  for m, rows in mats.items()}
        panels.append((doc.get("device", "?"), list(mats), [f for f in fmts if not is_auto(f)],
                       gflops))
    for path in args.gmres:
        lines += gmres_section(load(path))
    text = "\n".join(lines) + "\n"
    if args.md:
        with open(args.md, "w") as f:
            f.write(text)
    if args.svg and panels:
        with open(args.svg, "w") as f:
            f.write(svg_panels(panels, "SpMV GFLOP/s per matrix and format (krill bench_spmv)"))
    sys.stdout.write(text)


if __name__ == "__main__":
    main()
