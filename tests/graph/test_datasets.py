"""Datasets: the generators' shapes, seeds, noise and geometry; CSV parsing and its errors; the
dataset and labels ops in a graph, forward and backward against PyTorch; export and import."""

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
import torch.nn.functional as TF
from _printout import printed as printout

import engine as eg
from backend.graph import Limits, parse, run_records, validate
from backend.graph.export import to_python
from backend.graph.importing.importer import from_python
from backend.graph.ops.datasets import CLASSIFICATION, GENERATORS, from_csv, load, make

ROOT = Path(__file__).parents[2]
KINDS = sorted(GENERATORS)


# -- generators ------------------------------------------------------------------------------------
@pytest.mark.parametrize("kind", KINDS)
def test_shapes_dtypes_and_seeds(kind):
    x, y = make(kind, 123, 0.1, 7)
    assert x.shape == (123, 2) and y.shape == (123,)
    assert x.dtype == np.float32 and y.dtype == np.float32
    again = make(kind, 123, 0.1, 7)
    assert np.array_equal(x, again[0]) and np.array_equal(y, again[1])
    other = make(kind, 123, 0.1, 8)
    assert not np.array_equal(x, other[0])
    assert np.abs(make(kind, 500, 0.0, 0)[0]).max() <= 1.5  # about [-1, 1]
    if kind in CLASSIFICATION:
        assert set(np.unique(y)) == {0.0, 1.0}


@pytest.mark.parametrize("kind", KINDS)
def test_noise_moves_the_points(kind):
    clean, y0 = make(kind, 400, 0.0, 3)
    noisy, y1 = make(kind, 400, 0.3, 3)
    if kind == "plane":  # the noise is on the label
        assert np.array_equal(clean, noisy)
        assert 0.2 < np.std(y1 - y0) < 0.4
    else:
        assert np.array_equal(y0, y1)
        assert 0.2 < np.std(noisy - clean) < 0.4


def test_circle_labels_by_radius():
    x, y = make("circle", 1000, 0.0, 0)
    r = np.linalg.norm(x, axis=1)
    assert (r[y == 1] <= 0.5 + 1e-6).all()
    assert ((r[y == 0] >= 0.7 - 1e-6) & (r[y == 0] <= 1 + 1e-6)).all()
    assert (y == 1).sum() == 500


def test_xor_labels_by_quadrant():
    x, y = make("xor", 1000, 0.0, 0)
    assert np.array_equal(y, (x[:, 0] * x[:, 1] > 0).astype(np.float32))
    assert (np.abs(x) >= 0.05 - 1e-6).all()


def test_gaussians_are_two_clouds():
    x, y = make("gaussians", 2000, 0.0, 0)
    np.testing.assert_allclose(x[y == 1].mean(0), [0.5, 0.5], atol=0.03)
    np.testing.assert_allclose(x[y == 0].mean(0), [-0.5, -0.5], atol=0.03)
    np.testing.assert_allclose(x[y == 1].std(0), [0.2, 0.2], atol=0.02)


def test_spiral_points_lie_on_their_arm():
    x, y = make("spiral", 500, 0.0, 0)
    r = np.linalg.norm(x, axis=1)
    angle = 3.5 * np.pi * r + np.pi * (1 - y)
    np.testing.assert_allclose(x, np.stack([r * np.sin(angle), r * np.cos(angle)], 1), atol=1e-5)


def test_moons_lie_on_their_half_circles():
    x, y = make("moons", 500, 0.0, 0)
    upper, lower = x[y == 0], x[y == 1]
    np.testing.assert_allclose(np.linalg.norm(upper - [-0.5, -0.25], axis=1), 1, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(lower - [0.5, 0.25], axis=1), 1, atol=1e-5)
    assert (upper[:, 1] >= -0.25 - 1e-5).all() and (lower[:, 1] <= 0.25 + 1e-5).all()


def test_plane_is_a_plane():
    x, y = make("plane", 300, 0.0, 0)
    np.testing.assert_allclose(y, 0.5 * x[:, 0] - 0.3 * x[:, 1] + 0.2, atol=1e-6)
    x, y = make("plane", 5000, 0.1, 1)
    coef, *_ = np.linalg.lstsq(np.c_[x, np.ones(len(x))], y, rcond=None)
    np.testing.assert_allclose(coef, [0.5, -0.3, 0.2], atol=0.02)


def test_make_refuses_what_it_cannot_make():
    with pytest.raises(ValueError, match="kind must be one of"):
        make("swirl")
    with pytest.raises(ValueError, match="noise must be between 0 and 1"):
        make("circle", 10, 2.0)


# -- CSV -------------------------------------------------------------------------------------------
CSV = "x1, x2 ,label\n1,2,0\n\n3.5,-4,1\n5,25e-2,1\n"


def test_from_csv_reads_columns_by_name():
    x, y = from_csv(CSV)  # every column but the target; the target is the last
    np.testing.assert_array_equal(x, [[1, 2], [3.5, -4], [5, 0.25]])
    np.testing.assert_array_equal(y, [0, 1, 1])
    assert x.dtype == y.dtype == np.float32
    x, y = from_csv(CSV, "x2", "x1")
    np.testing.assert_array_equal(x, [[2], [-4], [0.25]])
    np.testing.assert_array_equal(y, [1, 3.5, 5])
    x, _ = from_csv('"x1","x2",label\n1,2,0\n3,4,1\n', ["x2", "x1"])
    np.testing.assert_array_equal(x, [[2, 1], [4, 3]])


@pytest.mark.parametrize(
    "text, features, target, message, param",
    [
        ("", "", "", "the CSV is empty", "csv"),
        ("\n \n", "", "", "the CSV is empty", "csv"),
        ("a,b,c\n1,2,3\n4,5\n", "", "", "row 3 has 2 values; the header has 3 columns", "csv"),
        ("a,b\n1,2\n3,x\n", "", "", "row 3, column 'b': 'x' is not a number", "csv"),
        ("a,b\n1,2\n3,nan\n", "", "", "row 3, column 'b': 'nan' is not a number", "csv"),
        ("a,b\n1,2\n", "", "", "at least 2 rows of data under its header; it has 1", "csv"),
        ("a,a\n1,2\n3,4\n", "", "", "the header names the column 'a' twice", "csv"),
        ("a,b\n1,2\n3,4\n", "q,r", "", "no columns 'q', 'r'; its columns are a, b", "features"),
        ("a,b\n1,2\n3,4\n", "", "z", "no column 'z'; its columns are a, b", "target"),
        ("a\n1\n2\n", "", "", "needs a feature column besides the target", "features"),
    ],
)
def test_csv_errors_say_what_and_where(text, features, target, message, param):
    with pytest.raises(ValueError, match=message) as info:
        from_csv(text, features, target)
    assert info.value.param == param


def test_csv_size_and_element_limits():
    big = "a,b\n" + "1,2\n" * 300_000
    with pytest.raises(ValueError, match=r"the CSV has 1,200,004 bytes; the limit is 1 MB"):
        from_csv(big)
    with pytest.raises(ValueError, match="the CSV has 20 values; the limit is 10"):
        from_csv("a,b\n" + "1,2\n" * 10, max_elements=10)


def test_classes_need_whole_numbers():
    with pytest.raises(ValueError, match="classes must be whole numbers from 0; .* 0.5"):
        load({"kind": "csv", "csv": "a,b\n1,0\n2,0.5\n", "labels": "classes"})
    with pytest.raises(ValueError, match="plane is a regression set") as info:
        load({"kind": "plane", "labels": "classes"})
    assert info.value.param == "labels"


# -- in a graph ------------------------------------------------------------------------------------
def _doc(loss="mse_loss", classes=False, out=1, **params):
    """dataset -> linear -> (sigmoid) -> loss <- labels <- dataset."""
    params = {"labels": "classes" if classes else "column", **params}
    nodes = [
        {"id": "data", "op": "dataset", "params": params, "position": {"x": 0, "y": 0}},
        {"id": "y", "op": "labels", "position": {"x": 220, "y": 110}},
        {"id": "fc", "op": "linear", "params": {"out_features": out, "seed": 3}},
        {"id": "loss", "op": loss, "position": {"x": 660, "y": 0}},
    ]
    edges = [
        {"id": "d-y", "source": "data", "target": "y", "targetPort": "dataset"},
        {"id": "d-fc", "source": "data", "target": "fc", "targetPort": "input"},
        {"id": "y-loss", "source": "y", "target": "loss", "targetPort": "target"},
    ]
    into_loss = "fc"
    if loss == "binary_cross_entropy":
        nodes.append({"id": "p", "op": "sigmoid"})
        edges.append({"id": "fc-p", "source": "fc", "target": "p", "targetPort": "input"})
        into_loss = "p"
    edges.append({"id": "in", "source": into_loss, "target": "loss", "targetPort": "input"})
    return parse({"name": "learn", "nodes": nodes, "edges": edges, "target": "loss"})


@pytest.mark.parametrize(
    "loss, classes, out, kind",
    [
        ("mse_loss", False, 1, "plane"),
        ("binary_cross_entropy", False, 1, "moons"),
        ("cross_entropy", True, 2, "spiral"),
    ],
)
def test_dataset_and_labels_forward_and_backward_match_torch(loss, classes, out, kind):
    doc = _doc(loss, classes, out, kind=kind, n=50, noise=0.2, seed=5)
    assert validate(doc) == []
    res, records = run_records(doc, "backward")
    assert res.status == "ok", res.error
    features, labels = make(kind, 50, 0.2, 5)
    np.testing.assert_array_equal(res.values["data"].numpy(), features)
    y = res.values["y"]
    if classes:
        assert y.dtype == eg.int64 and tuple(y.shape) == (50,)
    else:
        assert tuple(y.shape) == (50, 1)
    x = torch.tensor(features)
    target = torch.tensor(labels, dtype=torch.int64) if classes else torch.tensor(labels[:, None])
    ref = eg.nn.Linear(2, out)  # the layer the linear node starts from (seed 3)
    ref.reset_parameters(eg.Generator().manual_seed(3))
    layer = torch.nn.Linear(2, out)
    with torch.no_grad():
        layer.weight.copy_(torch.tensor(ref.weight.detach().numpy()))
        layer.bias.copy_(torch.tensor(ref.bias.detach().numpy()))
    h = layer(x)
    if loss == "binary_cross_entropy":
        h = torch.sigmoid(h)
    value = getattr(TF, loss)(h, target)
    value.backward()
    np.testing.assert_allclose(res.values["loss"].item(), value.item(), rtol=1e-5)
    np.testing.assert_allclose(res.leaf_grads["fc.weight"].numpy(), layer.weight.grad, rtol=1e-4)
    np.testing.assert_allclose(res.leaf_grads["fc.bias"].numpy(), layer.bias.grad, rtol=1e-4)
    assert not [r for r in records if r["kind"] == "edge_grad" and r["source"] in ("data", "y")]


def test_csv_dataset_in_a_graph():
    doc = _doc(kind="csv", csv=CSV, features="x1,x2", target="label")
    res, _ = run_records(doc, "backward")
    assert res.status == "ok", res.error
    np.testing.assert_array_equal(res.values["y"].numpy(), [[0], [1], [1]])


@pytest.mark.parametrize(
    "params, param, words",
    [
        ({"kind": "csv", "csv": "a,b\n1,2\n3\n"}, "csv", "row 3 has 1 values; the header has 2"),
        ({"kind": "csv", "csv": "a,b\n1,2\n3,4\n", "target": "c"}, "target", "no column 'c'"),
        ({"kind": "csv", "csv": "a,b\n1,2\n3,4\n", "features": "q"}, "features", "no column 'q'"),
        ({"kind": "csv", "csv": "a,b,c\n" + "1,2,3\n" * 5}, "csv", "has 15 values; the limit is 9"),
        ({"kind": "plane", "labels": "classes"}, "labels", "plane is a regression set"),
        ({"n": 5}, "n", "n must be at least 10"),
        ({"kind": "csv", "csv": "a,b\n" + "1,2\n" * 300_000}, "csv", "at most 1,000,000 char"),
    ],
)
def test_dataset_problems_are_validation_problems_at_the_param(params, param, words):
    problems = validate(_doc(**params), Limits(max_elements=9))
    assert [(p.node, p.param) for p in problems] == [("data", param)], problems
    assert words in problems[0].message


def test_labels_needs_a_dataset():
    doc = parse(
        {
            "nodes": [
                {"id": "t", "op": "tensor", "params": {"value": [1.0, 2.0]}},
                {"id": "y", "op": "labels"},
            ],
            "edges": [{"id": "e", "source": "t", "target": "y", "targetPort": "dataset"}],
        }
    )
    (problem,) = validate(doc)
    assert problem.node == "y" and "labels takes the output of a dataset node" in problem.message


def test_element_limit_at_run_time():
    res, _ = run_records(_doc(n=100), "forward", limits=Limits(max_elements=150), validated=True)
    assert res.status == "error" and res.error["type"] == "LimitExceeded"
    assert res.error["node"] == "data"


# -- export and import -----------------------------------------------------------------------------
EXPORTED = {
    "moons-column": _doc("binary_cross_entropy", kind="moons", n=40, noise=0.15, seed=2),
    "xor-classes": _doc("cross_entropy", True, 2, kind="xor", n=30, seed=1),
    "csv": _doc(kind="csv", csv=CSV, target="label"),
    "csv-awkward": _doc(kind="csv", csv='a,"b \\ c"\r\n1,2\r\n3,4', n=99),
}


@pytest.mark.parametrize("flavor", ["engine", "torch"])
@pytest.mark.parametrize("case", sorted(EXPORTED))
def test_exported_scripts_run_standalone_and_read_back(case, flavor):
    doc = EXPORTED[case]
    code = to_python(doc, flavor, trace=True)
    back = from_python(code)
    _same(doc, back)
    proc = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    printed = printout(proc.stdout)
    res, _ = run_records(doc, "backward")
    # (written as one model class, export/model.py, the script prints what is reached from
    # outside its forward: the data, the prediction, the loss)
    assert doc.target is None or ("value", doc.target) in printed
    for nid, t in res.values.items():
        if ("value", nid) in printed:
            np.testing.assert_allclose(printed[("value", nid)], t.detach().tolist(), rtol=1e-5)
    for key, g in res.leaf_grads.items():
        np.testing.assert_allclose(printed[("grad", key)], g.tolist(), rtol=1e-4, atol=1e-7)


def _same(a, b):
    from backend.graph.document.validate import resolved_params
    from backend.graph.registry import get

    bn = {n.id: n for n in b.nodes}
    for n in a.nodes:
        spec = get(n.op)
        assert bn[n.id].op == n.op
        assert resolved_params(spec, bn[n.id].params) == resolved_params(spec, n.params)
    assert {(e.source, e.target, e.targetPort) for e in a.edges} == {
        (e.source, e.target, e.targetPort) for e in b.edges
    }


def test_exported_code_reads_well():
    code = to_python(EXPORTED["xor-classes"], "torch")
    assert "def xor(n, noise, seed):" in code and "def circle" not in code
    assert "data_features, data_labels = xor(n=30, noise=0.1, seed=1)" in code
    assert "\ndata = torch.tensor(data_features)\n" in code
    assert "\ny = torch.tensor(data_labels, dtype=torch.int64)\n" in code
    code = to_python(EXPORTED["csv"], "engine")
    # (as ruff format writes the call: its text literal on a line of its own)
    assert 'from_csv(\n    """x1, x2 ,label\n1,2,0\n' in code and 'target="label"' in code
    assert "y = eg.tensor(data_labels[:, None])" in code


def test_import_handwritten_dataset_code():
    doc = from_python(
        "import engine as eg\n"
        "import engine.nn.functional as F\n"
        "X, y = circle(300, 0.2, seed=4)\n"
        "points = eg.tensor(X)\n"
        "labels = eg.tensor(y[:, None])\n"
        "w = eg.zeros((2, 1), requires_grad=True)\n"
        "loss = F.mse_loss(points @ w, labels)\n"
        "loss.backward()\n"
    )
    data = doc.node("points")
    assert data.op == "dataset"
    assert data.params == {"kind": "circle", "n": 300, "noise": 0.2, "seed": 4, "labels": "column"}
    assert doc.node("labels").op == "labels"
    res, _ = run_records(doc, "backward")
    assert res.status == "ok", res.error


@pytest.mark.parametrize(
    "lines, words",
    [
        ("X, y = circle(300, 0.2)\n", "circle needs n, noise, seed"),
        ("X = circle(300, 0.2, 1)\n", "'circle' is not a function of the op registry"),
        ("X, y = circle(300, 0.2, 1)\nt = eg.tensor(y)\n", "eg.tensor(y[:, None])"),
        ("X, y = circle(300, 0.2, 1)\nt = eg.tensor(y[:, None])\n", "features tensor before"),
        ("X, y, z = circle(300, 0.2, 1)\n", "gives two arrays"),
        ("def circle(n, noise, seed=print()):\n    pass\n", "plain helper"),
    ],
)
def test_import_explains_dataset_lines_it_cannot_read(lines, words):
    from backend.graph.importing.importer import ImportFailed

    with pytest.raises(ImportFailed) as info:
        from_python("import engine as eg\n" + lines)
    assert words in str(info.value)
