"""krill.apsp against scipy.sparse.csgraph.shortest_path: D, P (paths checked), unreachable
pairs, negative weights, negative cycles, argument validation."""

import os

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse import csgraph

import krill
from conftest import ROOT


def graph_path(name):
    """testdata/graphs of the checkout, or $KRILL_TESTDATA_GRAPHS."""
    path = os.path.join(os.environ.get("KRILL_TESTDATA_GRAPHS", ROOT / "testdata" / "graphs"),
                        name)
    if not os.path.isfile(path):
        pytest.skip(f"{path} is absent (testdata/graphs of the krill checkout)")
    return path


def read_dimacs(path):
    """A DIMACS .gr file as a CSR adjacency, parallel arcs reduced to the smallest weight
    (krill's graph readers' rule, krill/graph.h)."""
    n, arcs = 0, []
    with open(path) as f:
        for line in f:
            if line.startswith("p"):
                n = int(line.split()[2])
            elif line.startswith("a"):
                _, u, v, w = line.split()
                arcs.append((int(u) - 1, int(v) - 1, float(w)))
    u, v, w = (np.array(c) for c in zip(*arcs))
    order = np.lexsort((w, v, u))                # by (u, v), smallest weight first
    u, v, w = u[order], v[order], w[order]
    first = np.ones(len(u), bool)
    first[1:] = (u[1:] != u[:-1]) | (v[1:] != v[:-1])
    return sp.csr_array((w[first], (u[first], v[first])), shape=(n, n))


def random_graph(n, density, seed, negative=False, integer=False):
    """A random directed graph without self loops; with negative=True some weights are
    negative but no cycle is (w(u, v) + h(u) - h(v) for w >= 0: Johnson's reweighting)."""
    rng = np.random.default_rng(seed)
    g = sp.random_array((n, n), density=density, rng=rng, format="coo")
    g.data = rng.uniform(1.0, 10.0, g.nnz)
    if integer:
        g.data = np.round(g.data)
    g = g.tocsr()
    g.setdiag(0)
    g.eliminate_zeros()
    if negative:
        h = rng.uniform(0.0, 20.0, n)
        if integer:
            h = np.round(h)
        coo = g.tocoo()
        coo.data = coo.data + h[coo.row] - h[coo.col]
        g = coo.tocsr()
    return g


def check_paths(G, D, P):
    """P is a shortest-path tree for every source: P[i, i] = -9999, unreachable j have
    -9999, and for every reachable j != i, D[i, P[i, j]] + w(P[i, j], j) = D[i, j]."""
    n = D.shape[0]
    W = np.full((n, n), np.inf)
    coo = sp.coo_array(G)
    np.minimum.at(W, (coo.row, coo.col), coo.data)
    assert P.dtype == np.int32 and P.shape == (n, n)
    assert np.all(np.diag(P) == -9999)
    reach = np.isfinite(D) & ~np.eye(n, dtype=bool)
    assert np.all(P[~reach] == -9999)
    i, j = np.nonzero(reach)
    p = P[i, j]
    assert np.all((p >= 0) & (p < n))
    np.testing.assert_allclose(D[i, p] + W[p, j], D[i, j], rtol=1e-12, atol=1e-9)


@pytest.mark.parametrize("method", ["auto"] + krill.apsp_methods())
@pytest.mark.parametrize("seed", [1, 2])
def test_random_against_scipy(method, seed):
    g = random_graph(90, 0.04, seed)              # sparse enough to leave pairs unreachable
    D, P = krill.apsp(g, method=method)
    Ds, Ps = csgraph.shortest_path(g, directed=True, return_predecessors=True)
    assert D.dtype == np.float64 and D.shape == (90, 90)
    np.testing.assert_allclose(D, Ds, rtol=1e-12)   # inf where SciPy has inf
    assert np.isinf(D).any()                         # the test covers unreachable pairs
    assert np.array_equal(P == -9999, Ps == -9999)
    check_paths(g, D, P)


@pytest.mark.parametrize("weight", ["double", "float", "int32"])
def test_weight_types(weight):
    g = random_graph(70, 0.05, 3, integer=True)
    D, P = krill.apsp(g, weight=weight)
    Ds = csgraph.shortest_path(g)
    assert D.dtype == np.float64
    if weight == "float":
        np.testing.assert_allclose(D, Ds, rtol=1e-6)
    else:
        np.testing.assert_array_equal(D, Ds)      # int32's unreachable becomes inf too
        check_paths(g, D, P)


@pytest.mark.parametrize("method", ["auto", "plain", "fw-a", "fw-rec"])
def test_negative_weights(method):
    g = random_graph(80, 0.06, 4, negative=True)
    assert (g.data < 0).any()
    D, P = krill.apsp(g, method=method)
    Ds = csgraph.shortest_path(g, method="BF")
    np.testing.assert_allclose(D, Ds, rtol=1e-9, atol=1e-9)
    check_paths(g, D, P)


def test_paths_false():
    g = random_graph(40, 0.1, 5)
    D, P = krill.apsp(g, paths=False)
    assert P is None
    np.testing.assert_allclose(D, csgraph.shortest_path(g), rtol=1e-12)


def test_dimacs_testdata():
    g = read_dimacs(graph_path("Random4-n.10.0.gr"))   # 1024 vertices, 4096 arcs
    info = {}
    D, P = krill.apsp(g, weight="int32", info=info)
    Ds = csgraph.shortest_path(g, method="D")
    np.testing.assert_array_equal(D, Ds)
    check_paths(g, D, P)
    assert info["arcs"] == g.nnz and info["method"] in krill.apsp_methods()


def test_explicit_zero_and_dense_input():
    g = sp.csr_array((np.array([0.0, 2.0, 1.0]), (np.array([0, 1, 0]), np.array([1, 2, 2]))),
                     shape=(4, 4))
    D, _ = krill.apsp(g)                          # the stored zero is an arc (SciPy's rule)
    np.testing.assert_array_equal(D, csgraph.shortest_path(g))
    dense = g.toarray()
    dense[0, 1] = np.inf                          # dense: 0 and inf are no arc
    D, P = krill.apsp(dense)
    np.testing.assert_array_equal(D, csgraph.shortest_path(dense))
    assert D[0, 2] == 1.0 and np.isinf(D[0, 1]) and np.isinf(D[3]).sum() == 3


def test_negative_cycle_testdata():
    g = read_dimacs(graph_path("negative-cycles-example.gr"))
    with pytest.raises(krill.NegativeCycleError) as e:
        krill.apsp(g)
    assert isinstance(e.value, krill.NumericError) and isinstance(e.value, ValueError)
    assert isinstance(e.value, csgraph.NegativeCycleError)   # SciPy's except works too
    assert e.value.status == 6 and "cycle" in str(e.value)
    assert 0 <= e.value.vertex < g.shape[0]
    with pytest.raises(csgraph.NegativeCycleError):
        csgraph.shortest_path(g)


def test_negative_cycle_small():
    g = sp.csr_array(np.array([[0, 1.0, 0], [0, 0, -2.0], [0.5, 0, 0]]))
    with pytest.raises(krill.NegativeCycleError, match="cycle"):
        krill.apsp(g, paths=True)
    with pytest.raises(krill.KrillValueError, match="dijkstra|negative"):
        krill.apsp(g, method="dijkstra")         # refuses negative weights


def test_argument_validation():
    g = random_graph(10, 0.3, 6)
    with pytest.raises(ValueError, match="square"):
        krill.apsp(sp.random_array((3, 4), density=0.5))
    with pytest.raises(ValueError, match="method"):
        krill.apsp(g, method="bellman")
    with pytest.raises(ValueError, match="weight"):
        krill.apsp(g, weight="int64")
    with pytest.raises(ValueError, match="NaN or infinite"):
        krill.apsp(sp.csr_array(np.array([[0, np.nan], [1.0, 0]])))
    with pytest.raises(ValueError, match="2-D"):
        krill.apsp(np.ones(3))
    with pytest.raises(ValueError, match="complex"):
        krill.apsp(np.ones((2, 2), dtype=complex))
    with pytest.raises(krill.KrillValueError, match="integer"):
        krill.apsp(sp.csr_array(np.array([[0, 1.5], [1.0, 0]])), weight="int32")
    with pytest.raises(TypeError):
        krill.apsp(g, paths="yes")
    with pytest.raises(krill.KrillValueError, match="device"):
        krill.apsp(g, device="tpu")


def test_empty_and_single_vertex():
    D, P = krill.apsp(sp.csr_array((1, 1)))
    assert D.tolist() == [[0.0]] and P.tolist() == [[-9999]]
