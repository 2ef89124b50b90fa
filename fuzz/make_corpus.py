#!/usr/bin/env python3
"""Regenerate the seed corpora of fuzz/corpus/<harness>/ (doc/reliability.md).

Seeds are the string literals of the reader tests' EXPECT/FAIL cases (tests/test_mm_read.c,
tests/test_graph_read.c: well-formed files and the malformed ones, each a few bytes), the
head of a few small files of testdata/, and two gzip members for the raw gzip path. Each
corpus keeps the testdata and gzip seeds and fills up to MAX_SEEDS files with test cases
chosen by hash (a fixed pseudo-random pick); no file is over MAX_BYTES.

    python3 fuzz/make_corpus.py          (from the repository root)
"""
import gzip
import hashlib
import os
import re
import shutil

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAX_SEEDS = 40
MAX_BYTES = 4096
MACROS = {  # the banners tests/test_mm_read.c abbreviates
    "GEN": "%%MatrixMarket matrix coordinate real general\n",
    "SYM": "%%MatrixMarket matrix coordinate real symmetric\n",
    "SKEW": "%%MatrixMarket matrix coordinate real skew-symmetric\n",
    "ARR": "%%MatrixMarket matrix array real general\n",
}
TOKEN = re.compile(r'\s*(?:"((?:[^"\\]|\\.)*)"|([A-Z]+)\b)')


def unescape(s):
    return s.encode("latin-1").decode("unicode_escape").encode("latin-1")


def literal_at(src, pos):
    """The C string expression (adjacent literals and MACROS) at pos, or None."""
    out, found = b"", False
    while True:
        m = TOKEN.match(src, pos)
        if not m or (m.group(2) and m.group(2) not in MACROS):
            break
        out += unescape(m.group(1)) if m.group(1) is not None else MACROS[m.group(2)].encode()
        pos, found = m.end(), True
    return out if found else None


def test_cases(path, first_arg_name):
    """Texts of EXPECT(...)/FAIL(...)/read_text(...) calls; with first_arg_name, calls of
    the graph tests whose first argument is the file name, as (name, text)."""
    src = open(path, encoding="latin-1").read()
    cases = []
    for m in re.finditer(r'\b(?:EXPECT|FAIL|FAIL_WITH|read_text)\(', src):
        pos = m.end()
        name = None
        if first_arg_name:
            n = re.compile(r'\s*"([^"]*)"\s*,').match(src, pos)
            if not n:
                continue
            name, pos = n.group(1), n.end()
        text = literal_at(src, pos)
        if text is not None:
            cases.append((name, text))
    return cases


def head(path, lines):
    with open(path, "rb") as f:
        return b"".join(f.readlines()[:lines])


def write_corpus(harness, cases, always):
    d = os.path.join(ROOT, "fuzz", "corpus", harness)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    named = lambda seeds: {hashlib.sha1(s).hexdigest()[:16]: s for s in seeds if len(s) <= MAX_BYTES}
    kept = sorted(named(always).items())
    kept += sorted(named(cases).items())[:max(0, MAX_SEEDS - len(kept))]
    for h, s in kept:
        open(os.path.join(d, h), "wb").write(s)
    print(f"fuzz/corpus/{harness}: {len(kept)} seeds, {sum(len(s) for _, s in kept)} bytes")


def main():
    mm = [t for _, t in test_cases(os.path.join(ROOT, "tests/test_mm_read.c"), False)]
    graph = test_cases(os.path.join(ROOT, "tests/test_graph_read.c"), True)
    td = os.path.join(ROOT, "testdata")
    mm_files = [head(os.path.join(td, "mtx", f), 40) for f in ("karate.mtx", "LF10.mtx", "GD97_b.mtx")]
    gz = [gzip.compress(mm_files[0], mtime=0), gzip.compress(mm_files[1], mtime=0)[:-5]]
    write_corpus("mm", mm, mm_files + gz)
    write_corpus("mm_gz", mm, mm_files)
    write_corpus("vector", mm, [
        b"%%MatrixMarket matrix array real general\n3 1\n1\n-2.5\n3e-7\n",
        b"%%MatrixMarket matrix coordinate real general\n4 1 3\n1 1 2\n4 1 -1\n1 1 1\n",
        b"%%MatrixMarket matrix coordinate integer general\n3 1 1\n2 1 7\n"])
    by_ext = {".gr": "graph_dimacs", ".graph": "graph_metis", ".mtx": "graph_mtx"}
    cases = {h: [] for h in ("graph_dimacs", "graph_metis", "graph_edgelist", "graph_mtx")}
    for name, text in graph:
        cases[by_ext.get(os.path.splitext(name)[1], "graph_edgelist")].append(text)
    files = {
        "graph_dimacs": [head(os.path.join(td, "graphs", "Random4-n.10.0.gr"), 30),
                         head(os.path.join(td, "graphs", "negative-cycles-example.gr"), 30)],
        "graph_metis": [head(os.path.join(td, "graphs", "lesmis.graph"), 20)],
        "graph_edgelist": [head(os.path.join(td, "graphs", "p2p-Gnutella05.txt"), 30)],
        "graph_mtx": mm_files[:1],
    }
    # the edge-list harness reads its options from the first byte: k % 3 chooses the ids
    # (remap, base 0, base 1), bit 2 an undirected reading
    opts = lambda seeds: [bytes([k % 3 + 4 * (k % 2)]) + t for k, t in enumerate(seeds)]
    cases["graph_edgelist"] = opts(cases["graph_edgelist"])
    files["graph_edgelist"] = opts(files["graph_edgelist"])
    for harness in cases:
        write_corpus(harness, cases[harness], files[harness])


if __name__ == "__main__":
    main()
