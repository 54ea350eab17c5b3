"""Code export and import: both exported scripts run in a real Python process and print what the
executor computes; import reads them back (with ast, never running them) into the same graph."""

import json
import os
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from _printout import values_and_grads

import engine
from backend import cli
from backend.graph import parse
from backend.graph.document.problems import GraphInvalid
from backend.graph.document.validate import resolved_params
from backend.graph.export import to_python
from backend.graph.export.model import as_model, class_name
from backend.graph.importing.importer import ImportFailed, from_python
from backend.graph.importing.model_graph import MARK
from backend.graph.registry import get as get_op
from backend.graph.running.executor import run_records

ROOT = Path(__file__).parents[2]
FLAVORS = ("engine", "torch")


def _n(nid, op, x=0, y=0, label=None, **params):
    out = {"id": nid, "op": op, "params": params, "position": {"x": x, "y": y}}
    if label is not None:
        out["label"] = label
    return out


def _e(src, dst, port="input"):
    return {"id": f"{src}-{dst}-{port}", "source": src, "target": dst, "targetPort": port}


def _own_docs():
    """Documents for what the templates do not cover: every op, nested ifs, linears with stored
    weights, float64, names that are not identifiers, a graph without backward."""
    zoo = parse(
        {
            "name": 'ops "zoo" \\ with """quotes"""',
            "description": "many ops\nin one graph",
            "nodes": [
                _n("a", "tensor", value=[[1, -2, 3], [4, 5, -6]], requires_grad=True, name="a"),
                _n("b", "parameter", shape=[3, 2], init="randn", seed=3, name="weight 1"),
                _n("c", "tensor", shape=[2, 3], init="rand", seed=7, requires_grad=True),
                _n("ar", "tensor", shape=[2, 3], init="arange"),
                _n("z0", "tensor", shape=[], init="randn", seed=2, requires_grad=True),
                _n("on", "tensor", shape=[2, 3], init="ones", dtype="float64"),
                _n("s", "scalar", value=0.5, name="half"),
                _n("mm", "matmul", 200, 0),
                _n("ad", "add", label="a + c"),
                _n("mx", "max", dim=1),
                _n("am", "max", dim=[0, 1], keepdim=True),
                _n("mn", "min"),
                _n("mnd", "min", dim=0),
                _n("cl", "clamp", min=-1.0, max=2.0),
                _n("cl2", "clamp", max=None, min=0.0),
                _n("lr", "leaky_relu", negative_slope=0.2),
                _n("sm", "softmax", dim=0),
                _n("lsm", "log_softmax"),
                _n("ex", "exp"),
                _n("lg", "log"),
                _n("sr", "sqrt"),
                _n("rc", "reciprocal"),
                _n("sg", "sigmoid"),
                _n("th", "tanh"),
                _n("re", "relu"),
                _n("ab", "abs"),
                _n("sn", "sin"),
                _n("cs", "cos"),
                _n("va", "var", dim=1, correction=0),
                _n("sd", "std", keepdim=True, dim=[0, 1]),
                _n("tr", "transpose", dim0=0, dim1=1),
                _n("rs", "reshape", shape=[3, -1]),
                _n("fl", "flatten"),
                _n("us", "unsqueeze", dim=1),
                _n("sq", "squeeze", dim=1),
                _n("pm", "permute", dims=[1, 0]),
                _n("ct", "cat", dim=0),
                _n("st", "stack", dim=1),
                _n("ms", "mul"),
                _n("dv", "div", scalar=4),
                _n("pw", "pow", scalar=2),
                _n("sb", "sub"),
                _n("ng", "neg"),
                _n("mx2", "maximum"),
                _n("mn2", "minimum"),
                _n("gt", "gt"),
                _n("le", "le"),
                _n("eq", "eq"),
                _n("wh", "where"),
                _n("dt", "detach"),
                _n("mse", "mse_loss", reduction="sum"),
                _n("l1", "l1_loss"),
                _n("bce", "binary_cross_entropy", reduction="none"),
                _n("t1", "sum"),
                _n("t2", "mean", dim=0, keepdim=True),
                _n("total", "add", 900, 0),
                _n("sum", "add", label="1 + 1"),
                _n("z2", "mul"),
            ],
            "edges": [
                _e("a", "mm"),
                _e("b", "mm", "other"),
                _e("a", "ad"),
                _e("c", "ad", "other"),
                _e("ad", "mx"),
                _e("ad", "am"),
                _e("ad", "mn"),
                _e("ad", "mnd"),
                _e("ad", "cl"),
                _e("ad", "cl2"),
                _e("ad", "lr"),
                _e("ad", "sm"),
                _e("ad", "lsm"),
                _e("c", "ex"),
                _e("ex", "lg"),
                _e("ex", "sr"),
                _e("ex", "rc"),
                _e("ad", "sg"),
                _e("ad", "th"),
                _e("ad", "re"),
                _e("ad", "ab"),
                _e("ad", "sn"),
                _e("ad", "cs"),
                _e("ad", "va"),
                _e("ad", "tr"),
                _e("ad", "rs"),
                _e("rs", "fl"),
                _e("mx", "us"),
                _e("us", "sq"),
                _e("ad", "pm"),
                _e("ad", "ct", "tensors"),
                _e("ar", "ct", "tensors"),
                _e("c", "ct", "tensors"),
                _e("ct", "sd"),
                _e("c", "st", "tensors"),
                _e("ad", "st", "tensors"),
                _e("ad", "ms"),
                _e("s", "ms", "other"),
                _e("ms", "dv"),
                _e("dv", "pw"),
                _e("pw", "sb"),
                _e("a", "sb", "other"),
                _e("sb", "ng"),
                _e("ng", "mx2"),
                _e("c", "mx2", "other"),
                _e("ng", "mn2"),
                _e("c", "mn2", "other"),
                _e("a", "gt"),
                _e("c", "gt", "other"),
                _e("a", "le"),
                _e("c", "le", "other"),
                _e("a", "eq"),
                _e("a", "eq", "other"),
                _e("gt", "wh", "condition"),
                _e("mx2", "wh"),
                _e("ex", "wh", "other"),
                _e("c", "dt"),
                _e("wh", "mse"),
                _e("dt", "mse", "target"),
                _e("tr", "l1"),
                _e("pm", "l1", "target"),
                _e("sg", "bce"),
                _e("c", "bce", "target"),
                _e("mm", "t1"),
                _e("on", "t2"),
                _e("t1", "total"),
                _e("l1", "total", "other"),
                _e("z0", "z2"),
                _e("z0", "z2", "other"),
                _e("total", "sum"),
                _e("z2", "sum", "other"),
            ],
        }
    )
    nested = {
        "name": "nested branches",
        "nodes": [
            _n("x", "tensor", value=[1.5, -0.5], requires_grad=True, name="x"),
            _n("zero", "scalar", value=0.0, name="0"),
            _n("s", "sum"),
            _n("c1", "gt", label="s > 0"),
            _n("fc", "linear", out_features=3, seed=5),
            _n("fc2", "linear", out_features=2, bias=False, weight=[[1, 0, 1], [0, 1, 0]]),
            _n("f2s", "sum"),
            _n("c2", "lt"),
            _n("e1", "exp"),
            _n("e2", "cos"),
            _n("inner", "if"),
            _n("neg", "neg"),
            _n("fc3", "linear", out_features=2, weight=[[1, 0], [0, 1]], bias_value=[1, 2]),
            _n("outer", "if", label="outer if"),
            _n("loss", "mean", 700, 50.5),
            _n("in64", "tensor", value=[0.25, 0.5], dtype="float64", requires_grad=True),
            _n("w", "tensor", value=[[1, 2], [3, 4]], dtype="float64", name="w"),
            _n("fc64", "linear", out_features=1, seed=1),
            _n("mm64", "matmul"),
            _n("r64", "sum"),
        ],
        "edges": [
            _e("x", "s"),
            _e("s", "c1"),
            _e("zero", "c1", "other"),
            _e("x", "fc"),
            _e("fc", "fc2"),
            _e("fc2", "f2s"),
            _e("f2s", "c2"),
            _e("s", "c2", "other"),
            _e("fc2", "e1"),
            _e("fc2", "e2"),
            _e("c2", "inner", "condition"),
            _e("e1", "inner", "then"),
            _e("e2", "inner", "else"),
            _e("x", "neg"),
            _e("neg", "fc3"),
            _e("c1", "outer", "condition"),
            _e("inner", "outer", "then"),
            _e("fc3", "outer", "else"),
            _e("outer", "loss"),
            _e("in64", "fc64"),
            _e("w", "mm64"),
            _e("in64", "mm64", "other"),
            _e("mm64", "r64"),
        ],
        "target": "loss",
    }
    flipped = json.loads(json.dumps(nested))
    flipped["nodes"][0]["params"]["value"] = [-1.5, 0.5]
    plain = {
        "name": "forward only",
        "nodes": [
            _n("a", "tensor", value=[1, 2], name="class"),
            _n("b", "mul", scalar=2),
            _n("c", "tensor", value=[True, False], dtype="bool", name="c"),
            _n("t", "tensor", value=[0, 2], dtype="int64", name="t"),
        ],
        "edges": [_e("a", "b")],
    }
    return {
        "own-ops-zoo": zoo,
        "own-nested-if": parse(nested),
        "own-nested-if-else": parse(flipped),
        "own-forward-only": parse(plain),
    }


def _cases():
    cases = {}
    try:
        from backend.graph.document.templates import list_templates, load_template

        for t in list_templates():
            # documents with in-place ops print values as each statement leaves them and only
            # the leaves' .grad: tests/graph/test_inplace_nodes.py runs their scripts
            if not t["id"].startswith("inplace-"):
                cases[t["id"]] = load_template(t["id"])
    except ImportError:  # no templates yet
        pass
    cases.update(_own_docs())
    return cases


CASES = _cases()


def _run_script(text):
    proc = subprocess.run(
        [sys.executable, "-c", text],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
    )
    return proc


@pytest.fixture(scope="module")
def scripts():
    """Every case exported in both flavors and run, in parallel: {(case, flavor): (text, proc)}."""
    jobs = {
        (c, f): to_python(doc, f, training=False, trace=True)
        for c, doc in CASES.items()
        for f in FLAVORS
    }
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
        procs = dict(zip(jobs, pool.map(_run_script, jobs.values())))
    return {k: (jobs[k], procs[k]) for k in jobs}


def _stats(a):
    """What a script prints for a tensor past 10,000 elements (export/script.py's show)."""
    a = np.asarray(a, dtype=np.float64)
    std = a.std(ddof=1)
    return {"shape": list(a.shape), "min": a.min(), "max": a.max(), "mean": a.mean()} | {
        "std": std,
        "norm": np.sqrt((a * a).sum()),
    }


def _close(got, want, what):
    want = np.asarray(want.detach().tolist())
    if isinstance(got, dict):  # a big tensor: its shape and stats
        assert want.size > 10_000, f"{what}: stats printed for {want.size} elements"
        stats = _stats(want)
        assert got["shape"] == stats["shape"], f"{what}: shape {got['shape']} != {stats['shape']}"
        for k in ("min", "max", "mean", "std", "norm"):
            np.testing.assert_allclose(got[k], stats[k], rtol=1e-4, atol=1e-7, err_msg=what + k)
        return
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if want.dtype == bool or got.dtype == bool:
        assert (got == want).all(), what
    else:
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6, err_msg=what)


@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_script_prints_what_the_executor_computes(scripts, case, flavor):
    doc = CASES[case]
    text, proc = scripts[(case, flavor)]
    assert proc.returncode == 0, proc.stderr[-3000:]
    values, grads = values_and_grads(proc.stdout)
    mode = "backward" if ".backward(" in text else "forward"
    # a target of more than one element: the script starts backward from ones, as the run
    # option gradient_ones does (and without it, both fail with PyTorch's error)
    ones = ".backward(gradient=" in text
    res, _ = run_records(doc, mode, gradient_ones=ones)
    assert res.status == "ok", res.error
    if MARK in text.splitlines():
        # the graph as one model: what is reachable outside forward (the data, the prediction,
        # the loss, every parameter's gradient), each the executor's number
        assert doc.target in values and set(values) <= set(res.values)
        params = {k for k in res.leaf_grads if "." in k}
        assert params and params <= set(grads) <= set(res.node_grads) | set(res.leaf_grads)
        for key, got in values.items():
            _close(got, res.values[key], f"value {key}")
        for key, got in grads.items():
            _close(got, res.leaf_grads.get(key, res.node_grads.get(key)), f"grad {key}")
        return
    assert set(values) == set(res.values), "values printed for exactly the nodes that ran"
    assert not set(values) & set(res.skipped)
    for nid, t in res.values.items():
        _close(values[nid], t, f"value {nid}")
    ifs = {n.id for n in doc.nodes if n.op == "if"}
    want = {k: g for k, g in res.node_grads.items() if k not in ifs}
    want.update(res.leaf_grads)
    assert set(grads) == set(want)
    for key, g in want.items():
        _close(grads[key], g, f"grad {key}")
    if mode == "backward":
        assert grads, "a backward run prints gradients"
        for key, g in res.leaf_grads.items():  # a leaf's total gradient is its .grad
            _close(grads[key], g, f"leaf grad {key}")


@pytest.fixture(scope="module")
def plain_scripts():
    """Every case exported as PyTorch without the trace option and run: {case: (text, proc)}."""
    jobs = {c: to_python(doc, "torch", training=False) for c, doc in CASES.items()}
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 4) as pool:
        procs = dict(zip(jobs, pool.map(_run_script, jobs.values())))
    return {k: (jobs[k], procs[k]) for k in jobs}


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_default_script_prints_what_a_person_prints(plain_scripts, case):
    # the target's value (`print("loss", loss.item())`), a lesson's leaf gradients, a
    # classifier's accuracy: the executor's numbers, and none of the trace's lines
    doc = CASES[case]
    text, proc = plain_scripts[case]
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "show(" not in text and "import json" not in text
    lines = proc.stdout.splitlines()
    assert lines and not any(s.startswith(("value ", "grad ")) for s in lines)
    if ".backward(" not in text:
        return
    res, _ = run_records(doc, "backward")
    target = res.values[res.target]
    name, printed = lines[0].split(" ", 1)
    assert name.isidentifier(), lines[0]
    if target.numel() == 1:
        np.testing.assert_allclose(float(printed), target.item(), rtol=1e-5, atol=1e-7)
    accuracy = [s for s in lines if s.startswith("accuracy ")]
    if accuracy:  # the loss's prediction and labels (export/printout.py)
        into = {e.targetPort: e.source for e in doc.edges if e.target == res.target}
        spec = get_op(doc.node(res.target).op)
        pred, labels = (res.values[into[p.name]].detach().tolist() for p in spec.inputs[:2])
        want = (np.argmax(pred, axis=1) == np.asarray(labels)).mean()
        np.testing.assert_allclose(float(accuracy[0].split()[1]), want, rtol=1e-6)
    # a lesson graph (no model class) prints the gradient of each of its leaves
    leaves = [n for n in doc.nodes if n.op == "parameter" or n.params.get("requires_grad")]
    if "nn.Module" not in text:
        assert len([s for s in lines if ".grad " in s]) >= len(leaves), proc.stdout


def test_torch_and_engine_scripts_print_the_same_numbers(scripts):
    for case in CASES:
        (_, a), (_, b) = scripts[(case, "engine")], scripts[(case, "torch")]
        va, ga = values_and_grads(a.stdout)
        vb, gb = values_and_grads(b.stdout)
        assert set(va) == set(vb) and set(ga) == set(gb), case
        for k in va:
            if isinstance(va[k], dict):  # stats of a big tensor
                assert va[k]["shape"] == vb[k]["shape"], f"{case} {k}"
                for s in ("min", "max", "mean", "std", "norm"):
                    np.testing.assert_allclose(va[k][s], vb[k][s], rtol=1e-4, atol=1e-7)
                continue
            np.testing.assert_allclose(va[k], vb[k], rtol=1e-4, atol=1e-6, err_msg=f"{case} {k}")


def _same_graph(a, b):
    assert {n.id for n in a.nodes} == {n.id for n in b.nodes}
    bn = {n.id: n for n in b.nodes}
    for n in a.nodes:
        m = bn[n.id]
        assert m.op == n.op, n.id
        spec = get_op(n.op)
        assert resolved_params(spec, m.params) == resolved_params(spec, n.params), n.id
        assert (m.position.x, m.position.y) == (n.position.x, n.position.y), n.id
        assert m.label == n.label, n.id

    def ports(doc):
        out = {}
        for e in doc.edges:
            out.setdefault((e.target, e.targetPort), []).append((e.source, e.sourcePort))
        return out

    assert ports(a) == ports(b)
    assert len(a.edges) == len(b.edges)


@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_round_trip(scripts, case, flavor):
    doc = CASES[case]
    back = from_python(scripts[(case, flavor)][0])
    _same_graph(doc, back)
    assert back.target == doc.target or doc.target is None
    assert back.name == doc.name
    assert back.description == doc.description.strip()
    # the imported document runs to the same numbers
    res_a, _ = run_records(doc, "forward")
    res_b, _ = run_records(back, "forward")
    assert set(res_a.values) == set(res_b.values)
    for nid, t in res_a.values.items():
        _close(np.asarray(res_b.values[nid].detach().tolist()), t, nid)


MODEL_TEMPLATES = sorted(c for c, d in CASES.items() if as_model(d)[0] is not None)


def test_layer_graphs_with_a_loss_become_one_model_class():
    # a network with a loss: the class a colleague writes; a lesson graph stays flat, saying why
    assert {"lenet-digits", "mlp-xor", "transformer-block"} <= set(MODEL_TEMPLATES)
    text = to_python(CASES["lenet-digits"], "torch")
    assert "class LeNetOnHandwrittenDigits(nn.Module):" in text
    assert "    def forward(self, data):" in text and "logits = model(data)" in text
    assert "loss = F.cross_entropy(logits, labels)" in text
    assert "params = [*model.parameters()]" in text
    flat = to_python(CASES["quadratic"], "torch")
    assert "nn.Module" not in flat and "# written flat, not as a model class: " in flat
    assert class_name("2 layers, one loss") == "Model2LayersOneLoss"


def test_each_layer_is_seeded_as_a_person_seeds_it():
    # the seed of the layer's node on the line before it is made: PyTorch's constructor then
    # draws the editor's values (the engine's seeded init is PyTorch's); no helper
    text = to_python(CASES["lenet-digits"], "torch")
    made = text.replace("\n        ", "\n")
    assert "\ntorch.manual_seed(1)\nself.conv1 = nn.Conv2d(1, 8, 3, padding=1)\n" in made
    assert "\ntorch.manual_seed(4)\nself.logits = nn.Linear(32, 10)\n" in made
    assert "init_like_engine" not in text and "reset_parameters" not in text
    made = to_python(CASES["lenet-digits"], "engine").replace("\n        ", "\n")
    assert "\neg.manual_seed(2)\nself.conv2 = nn.Conv2d(8, 16, 3, padding=1)\n" in made


def test_the_layout_block_says_only_what_the_code_and_the_import_do_not():
    text = to_python(CASES["lenet-digits"], "torch")
    lines = text.splitlines()
    at = next(i for i, s in enumerate(lines) if s.startswith("# wiregrad layout"))
    assert all(s.startswith("# ") and len(s) <= 100 for s in lines[at:])
    layout = " ".join(s[2:] for s in lines[at + 1 :])
    body = json.loads(layout)
    forward = body["LeNetOnHandwrittenDigits.forward"]
    # conv1's id is its variable's name and the import places it where the editor has it:
    # only its label is said; relu1 has nothing to say
    assert forward["conv1"] == {"label": "conv1"} and "relu1" not in forward
    assert body[""]["labels"] == [2200, 110]  # (a place the import's layout would not give)
    assert "# node " not in text


def test_scripts_with_the_comments_on_their_lines_still_import(monkeypatch):
    # what older exports wrote (and what the exporter writes where no block reads back the
    # same): each node's `# node` comment on its own line
    import backend.graph.export.script as script

    monkeypatch.setattr(script, "out_of_the_way", lambda source, weights=None: source)
    for case in ("lenet-digits", "own-nested-if", "transformer-block"):
        old = to_python(CASES[case], "torch")
        assert "  # node " in old and "# wiregrad layout" not in old
        _same_graph(CASES[case], from_python(old))


def test_export_reads_well():
    doc = CASES["own-nested-if"]
    text = to_python(doc)
    assert text.startswith('"""nested branches\n')
    assert "Exported from Wiregrad" in text
    assert "import engine as eg" in text and "import numpy" not in text
    # each layer made right after the seed of its node, as a person seeds it
    assert "    eg.manual_seed(5)\n    fc_layer = nn.Linear(2, 3)\n" in text
    assert "fc64_layer = nn.Linear(2, 1, dtype=eg.float64)" in text
    assert "fc2_layer = nn.Linear(3, 2, bias=False)" in text
    assert "\nif c1:\n" in text and "\n    if c2:\n" in text
    # ids, places and labels: in the layout block at the end, not on the lines
    assert "# node " not in text and "\n# wiregrad layout" in text
    layout = text[text.index("# wiregrad layout") :].replace("\n# ", " ")
    assert '"if c1": {"id": "outer", "at": [' in layout
    assert "loss.backward()" in text
    assert "\nzero = eg.tensor(0.0)\n" in text
    torch_text = to_python(doc, "torch")
    # its layers are seeded by torch.manual_seed, no helper and no numpy
    assert "import torch\n" in torch_text and "import numpy" not in torch_text
    assert "    torch.manual_seed(5)\n    fc_layer = nn.Linear(2, 3)\n" in torch_text
    assert "init_like_engine" not in torch_text
    assert "import engine" not in torch_text
    # names: never a module, builtin or keyword
    zoo = to_python(CASES["own-ops-zoo"])
    assert "\nsum = " not in zoo and "\nsum_2 = " in zoo  # never shadow a builtin
    assert "weight_1 = " in zoo
    plain = to_python(CASES["own-forward-only"])
    assert "\nclass_2 = " in plain  # nor use a keyword
    assert ".backward()" not in plain


def test_export_rejects_invalid_documents():
    doc = parse({"nodes": [_n("a", "frobnicate")], "edges": []})
    with pytest.raises(GraphInvalid):
        to_python(doc)
    with pytest.raises(ValueError):
        to_python(CASES["own-forward-only"], "jax")


HANDWRITTEN = """\
import torch
import torch.nn.functional as F

x = torch.tensor([1.0, 2.0], requires_grad=True)
w = torch.tensor([0.5, -1.0], requires_grad=True)
y = (x * w).sum() + 1
z = torch.exp(-y) if y < 0 else y ** 2
h = torch.cat([x, w * 2], dim=0).reshape(2, 2).max(dim=1).values
loss = F.mse_loss(z, torch.tensor(0.5)) + 2 * h.mean()
loss.backward()
print(x.grad, w.grad)
"""


def test_import_handwritten_torch_code_matches_torch():
    import torch

    doc = from_python(HANDWRITTEN)
    ops = {n.id: n.op for n in doc.nodes}
    assert ops["x"] == ops["w"] == "tensor" and ops["z"] == "if" and ops["loss"] == "add"
    assert doc.target == "loss"
    res, _ = run_records(doc, "backward")
    assert res.status == "ok", res.error
    x = torch.tensor([1.0, 2.0], requires_grad=True)
    w = torch.tensor([0.5, -1.0], requires_grad=True)
    y = (x * w).sum() + 1
    z = torch.exp(-y) if y < 0 else y**2
    h = torch.cat([x, w * 2], dim=0).reshape(2, 2).max(dim=1).values
    loss = torch.nn.functional.mse_loss(z, torch.tensor(0.5)) + 2 * h.mean()
    loss.backward()
    _close(np.asarray(res.values["loss"].tolist()), loss, "loss")
    _close(np.asarray(res.leaf_grads["x"].tolist()), x.grad, "x.grad")
    _close(np.asarray(res.leaf_grads["w"].tolist()), w.grad, "w.grad")


def test_import_engine_code_with_layers_and_branches():
    src = """\
import engine as eg
from engine import nn

x = eg.randn(4, 3, generator=eg.Generator().manual_seed(1))
fc = nn.Linear(3, 2)
fc.reset_parameters(eg.Generator().manual_seed(9))
h = fc(x)
c = h.sum() > 0
if c:
    big = eg.relu(h)
    out = big * 3.0
else:
    out = eg.sigmoid(h)
loss = out.mean()
"""
    doc = from_python(src)
    n = {x.id: x for x in doc.nodes}
    assert n["h"].op == "linear" and n["h"].params["seed"] == 9
    assert n["h"].params["out_features"] == 2
    # the draw the script makes (importing/random_draws.py: the engine's torch-exact stream)
    drawn = engine.randn(4, 3, generator=engine.Generator().manual_seed(1))
    assert n["x"].params["value"] == drawn.tolist()
    assert n["out"].op == "if"
    assert n["out_2" if "out_2" in n else "big"].op in ("mul", "relu")
    res, _ = run_records(doc, "backward")
    assert res.status == "ok", res.error
    assert "h.weight" in res.leaf_grads


UNSUPPORTED = """\
import engine as eg
import os
x = eg.tensor(1.0, requires_grad=True)
while x < 3:
    x = x * 2
y = eg.frobnicate(x)
x //= 2
z = y + 1
print(x)
"""


def test_import_lists_each_unsupported_line():
    with pytest.raises(ImportFailed) as info:
        from_python(UNSUPPORTED)
    lines = {p.line: p.message for p in info.value.problems}
    assert set(lines) == {4, 6, 7, 8}, lines  # (line 2, `import os`, is a note: never used)
    assert "loop" in lines[4]
    assert "frobnicate" in lines[6]
    assert "in-place" in lines[7]
    assert "'y'" in lines[8]
    assert "line 6" in str(info.value)


def test_import_reads_backward_from_ones_as_the_target():
    head = "import torch\nx = torch.ones(2, 2, requires_grad=True)\ny = x * 3\n"
    for call in ("y.backward(gradient=torch.ones_like(y))", "y.backward(torch.ones_like(y))"):
        assert from_python(head + call + "\n").target == "y"
    refused = {
        "y.backward(gradient=torch.ones_like(x))": 4,  # another tensor's shape
        "y.backward(gradient=torch.zeros_like(y))": 4,
        "y.backward(retain_graph=True)": 4,
        "y.backward(torch.ones_like(y), retain_graph=True)": 4,
    }
    for call, line in refused.items():
        with pytest.raises(ImportFailed) as info:
            from_python(head + call + "\n")
        (problem,) = info.value.problems
        assert problem.line == line and "gradient=ones_like(x)" in problem.message, call


def test_import_syntax_error_names_its_line():
    with pytest.raises(ImportFailed) as info:
        from_python("import engine as eg\nx = eg.tensor(1.0\n")
    assert info.value.problems[0].line in (2, 3)
    assert "syntax error" in info.value.problems[0].message


@pytest.mark.parametrize(
    "line",
    [
        "__import__('os').system('touch {p}')",
        "x = __import__('os').system('touch {p}')",
        "x = eg.tensor(__import__('os').system('touch {p}'))",
        "if __import__('os').system('touch {p}'):\n    y = x\nelse:\n    y = x",
        "def f(a=__import__('os').system('touch {p}')):\n    pass",
        "@__import__('os').system('touch {p}')\ndef show(kind, key, t):\n    pass",
        "class A:\n    __import__('os').system('touch {p}')",
        "y = (lambda: __import__('os').system('touch {p}'))()",
        "y = x + __import__('os').system('touch {p}')",
        "with open('{p}', 'w'):\n    pass",
        "exec(\"__import__('os').system('touch {p}')\")",
        "import os as eg\ny = eg.system('touch {p}')",
    ],
)
def test_import_never_runs_the_script(tmp_path, line):
    """Each line would touch a file if run. Read, it is a problem at its line, or a line that
    touches no tensor, skipped and named in the import notes, or a function never called;
    the file is never touched."""
    marker = tmp_path / "x"
    src = "import engine as eg\nx = eg.tensor(1.0)\n" + line.format(p=marker) + "\n"
    try:
        doc = from_python(src)
    except ImportFailed as info:
        assert all(p.line >= 3 for p in info.problems), info.problems
    else:
        assert "- line 3: " in doc.description or line.startswith("def "), doc.description
    assert not marker.exists()


# -- the command line ----------------------------------------------------------------------------
def _template_file(tmp_path, case="own-nested-if"):
    path = tmp_path / "graph.json"
    path.write_text(CASES[case].model_dump_json())
    return path


def test_cli_run_prints_values_and_grads(tmp_path, capsys):
    path = _template_file(tmp_path)
    assert cli.main(["run", str(path), "--backward"]) == 0
    out = capsys.readouterr().out
    assert "node" in out.splitlines()[0] and "grad" in out.splitlines()[0]
    assert "backward from loss" in out
    assert "(not run)" in out  # the else branch
    assert "fc.weight" in out and "fc2.weight" in out
    assert cli.main(["run", str(path)]) == 0
    assert "backward from" not in capsys.readouterr().out
    assert cli.main(["run", str(path), "--backward", "r64"]) == 0
    assert "backward from r64" in capsys.readouterr().out


def test_cli_export_and_import(tmp_path, capsys):
    path = _template_file(tmp_path)
    script = tmp_path / "graph.py"
    assert cli.main(["export", str(path), "--to", "torch", "-o", str(script)]) == 0
    assert "import torch" in script.read_text()
    assert cli.main(["export", str(path), "--to", "python"]) == 0
    assert "import engine as eg" in capsys.readouterr().out
    back = tmp_path / "back.json"
    assert cli.main(["import", str(script), "-o", str(back)]) == 0
    _same_graph(CASES["own-nested-if"], parse(back.read_text()))
    assert cli.main(["import", str(script)]) == 0
    assert json.loads(capsys.readouterr().out)["format"] == "wiregrad.graph"
    # --trace: the printout of every value and gradient, the same code otherwise
    assert "show(" not in script.read_text()
    assert cli.main(["export", str(path), "--to", "torch", "--trace", "-o", str(script)]) == 0
    assert 'show("grad", "x", x.grad)' in script.read_text()
    assert cli.main(["import", str(script), "-o", str(back)]) == 0
    _same_graph(CASES["own-nested-if"], parse(back.read_text()))


def test_cli_errors_are_one_line_each(tmp_path, capsys):
    assert cli.main(["run", str(tmp_path / "missing.json")]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "file not found" in err
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    assert cli.main(["export", str(bad), "--to", "torch"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "invalid JSON" in err
    invalid = tmp_path / "invalid.json"
    invalid.write_text(
        json.dumps(
            {
                "nodes": [_n("a", "frobnicate"), _n("b", "exp"), _n("c", "tensor", value=[1.0])],
                "edges": [],
            }
        )
    )
    assert cli.main(["run", str(invalid)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert any(line.strip().startswith("node a:") and "unknown op" in line for line in err)
    assert any(line.strip().startswith("node b:") and "not connected" in line for line in err)
    script = tmp_path / "bad.py"
    script.write_text(UNSUPPORTED)
    assert cli.main(["import", str(script)]) == 1
    err = capsys.readouterr().err
    assert f"{script}:4:" in err and f"{script}:6:" in err
    with pytest.raises(SystemExit) as info:
        cli.main(["export", str(invalid), "--to", "jax"])
    assert info.value.code == 2
    assert cli.main([]) == 2


def test_cli_demo(capsys):
    assert cli.main(["demo"]) == 0
    assert "dy/dx" in capsys.readouterr().out


def test_cli_as_a_real_process(tmp_path):
    path = _template_file(tmp_path, "own-forward-only")
    proc = subprocess.run(
        [sys.executable, "-m", "backend.cli", "export", str(path), "--to", "python"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0, proc.stderr
    assert "import engine as eg" in proc.stdout
    proc = subprocess.run(
        [sys.executable, "-m", "backend.cli", "run", str(tmp_path / "nope.json")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 1 and "file not found" in proc.stderr


def test_a_seed_in_a_class_init_gives_every_instance_pytorchs_layer():
    # what the exported classes write, read in a person's script: torch.manual_seed(S) right
    # before a layer in __init__ is its seed, and every instance makes the same layer
    import torch

    src = """import torch
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        torch.manual_seed(3)
        self.fc = nn.Linear(3, 3)

    def forward(self, x):
        return self.fc(x)


b1 = Block()
b2 = Block()
x = torch.ones(2, 3)
y = b2(b1(x))
"""
    doc = from_python(src)
    res, _ = run_records(doc, "forward")
    layers = []
    for _ in range(2):
        torch.manual_seed(3)
        layers.append(torch.nn.Linear(3, 3))
    with torch.no_grad():
        want = layers[1](layers[0](torch.ones(2, 3)))
    # (the same weights; the engine's matmul may round the last bit otherwise)
    got = np.asarray(res.values["y/out"].tolist())
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-6, atol=1e-7)
