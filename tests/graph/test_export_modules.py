"""Documents with modules exported as nn.Module classes (one class per definition, one object per
instance) and run in a real PyTorch and engine process: every value and gradient the script
prints is the executor's under its flat id, each instance with its own parameters (its seed,
its state); the script reads back into the same document."""

import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from _docs import edge, node, tensor, two_in_a_row
from _printout import values_and_grads
from test_export_training import _layer_module
from test_modules import affine_module, twice_module, two_blocks

from backend.graph import parse, registry, run_records
from backend.graph.document import module_library
from backend.graph.document.modules import OUTPUT_OP, SEP, flatten
from backend.graph.document.validate import resolved_params
from backend.graph.export import to_python
from backend.graph.importing.importer import from_python
from backend.graph.running.trainer import Trainer

ROOT = Path(__file__).parents[2]
FLAVORS = ("torch", "engine")


def _nested():
    """Twice (two Affine inside, the second with seed 3) used once, its inner b replaced by
    the instance's state."""
    outer = twice_module()
    return parse(
        {
            "version": 2,
            "modules": [affine_module(), outer],
            "nodes": [
                tensor("in", value=[1.0, 2.0, 3.0], requires_grad=True),
                node("t", "module", module="Twice", state={"g/b": {"value": [0.5, 0.0, -0.5]}}),
                node("s", "mean"),
            ],
            "edges": [edge("e", "in", "t", "x"), edge("e2", "t", "s", source_port="y")],
            "target": "s",
        }
    )


def _dense():
    """Dense (linear 3 -> 3, tanh) twice in a row: d2 with its own seed and a trained weight."""
    dense = {
        "name": "Dense",
        "doc": "tanh(fc(x))",
        "nodes": [
            node("x", "module_input"),
            node("fc", "linear", out_features=3, seed=1),
            node("h", "tanh"),
            node("y", "module_output"),
        ],
        "edges": [edge("a", "x", "fc"), edge("b", "fc", "h"), edge("c", "h", "y")],
        "inputs": ["x"],
        "outputs": ["y"],
    }
    weight = [[0.5, -0.25, 0.0], [0.1, 0.2, 0.3], [-1.0, 0.5, 0.25]]
    source = tensor("inp", shape=[4, 3], init="randn", seed=5, requires_grad=True)
    second = {"seed": 2, "state": {"fc": {"weight": weight}}}
    return two_in_a_row(dense, source, ("d1", {}), ("d2", second))


def _convs():
    """ConvRelu (conv2d 1 -> 2 channels, relu) twice side by side on one image batch."""
    block = {
        "name": "ConvRelu",
        "nodes": [
            node("img", "module_input"),
            node("conv", "conv2d", out_channels=2, kernel_size=3, padding=1, seed=4),
            node("act", "relu"),
            node("out", "module_output"),
        ],
        "edges": [edge("a", "img", "conv"), edge("b", "conv", "act"), edge("c", "act", "out")],
        "inputs": ["img"],
        "outputs": ["out"],
    }
    return parse(
        {
            "version": 2,
            "modules": [block],
            "nodes": [
                tensor("x", shape=[2, 1, 5, 5], init="randn", seed=1),
                node("c1", "module", module="ConvRelu"),
                node("c2", "module", module="ConvRelu", seed=9),
                node("both", "add"),
                node("m", "mean"),
            ],
            "edges": [
                edge("e1", "x", "c1", "img"),
                edge("e2", "x", "c2", "img"),
                edge("e3", "c1", "both", source_port="out"),
                edge("e4", "c2", "both", "other", source_port="out"),
                edge("e5", "both", "m"),
            ],
            "target": "m",
        }
    )


def _two_outputs():
    """Split returns two tensors (relu(x * w) and tanh(x * k), k a constant); both are used."""
    split = {
        "name": "Split",
        "nodes": [
            node("x", "module_input"),
            {"id": "w", "op": "parameter", "params": {"shape": [3], "init": "rand", "seed": 2}},
            node("m", "mul"),
            node("r", "relu"),
            tensor("k", value=[2.0, 1.0, 0.5]),
            node("xk", "mul"),
            node("t", "tanh"),
            node("pos", "module_output"),
            node("squashed", "module_output"),
        ],
        "edges": [
            edge("a", "x", "m"),
            edge("b", "w", "m", "other"),
            edge("c", "m", "r"),
            edge("d", "x", "xk"),
            edge("d2", "k", "xk", "other"),
            edge("d3", "xk", "t"),
            edge("e", "r", "pos"),
            edge("f", "t", "squashed"),
        ],
        "inputs": ["x"],
        "outputs": ["pos", "squashed"],
    }
    return parse(
        {
            "version": 2,
            "modules": [split],
            "nodes": [
                tensor("v", value=[-1.0, 0.5, 2.0], requires_grad=True),
                node("sp", "module", module="Split"),
                node("mix", "mul"),
                node("total", "sum"),
            ],
            "edges": [
                edge("e1", "v", "sp", "x"),
                edge("e2", "sp", "mix", source_port="pos"),
                edge("e3", "sp", "mix", "other", source_port="squashed"),
                edge("e4", "mix", "total"),
            ],
            "target": "total",
        }
    )


def _norms():
    """Norm (batch_norm, tanh) twice: n2 in train() by its state (batch statistics), n1 as a
    forward run has it (eval(), its running statistics)."""
    norm = {
        "name": "Norm",
        "nodes": [
            node("x", "module_input"),
            node("bn", "batch_norm"),
            node("t", "tanh"),
            node("y", "module_output"),
        ],
        "edges": [edge("a", "x", "bn"), edge("b", "bn", "t"), edge("c", "t", "y")],
        "inputs": ["x"],
        "outputs": ["y"],
    }
    source = tensor("v", shape=[4, 3], init="randn", seed=2, requires_grad=True)
    train = {"state": {"bn": {"mode": "train"}}}
    return two_in_a_row(norm, source, ("n1", {}), ("n2", train), end="s")


def _trained():
    """Block (linear, tanh) twice and a head, trained 3 steps in the editor: each instance's
    trained weights are in its own state (and the dataset's arrays come with the script)."""
    doc = _layer_module()
    doc = doc.model_copy(update={"training": doc.training.model_copy(update={"steps": 3})})
    trainer = Trainer(doc)
    trainer.run()
    trained = trainer.written_back()
    assert all(n.params.get("state") for n in trained.nodes if n.op == "module")
    return trained


# the module library's entries (module_library.py), each on an input it is made for
LIBRARY = {
    "LinearAct": ({}, [2, 4]),
    "ConvBlock": ({}, [2, 1, 6, 6]),
    "ResidualBlock": ({"in_channels": 2, "out_channels": 4, "stride": 2}, [2, 2, 4, 4]),
    "MultiHeadAttention": ({}, [2, 3, 8]),
    "TransformerEncoderBlock": ({"dim_feedforward": 12}, [2, 3, 16]),
    "MLPHead": ({"hidden_features": [6, 5], "out_features": 3}, [2, 16]),
}


def _library(name):
    """Two instances of a library module side by side (the second with its own seed)."""
    values, shape = LIBRARY[name]
    return parse(
        {
            "version": 2,
            "modules": [module_library.build(name, values)],
            "nodes": [
                tensor("x", shape=shape, init="randn", seed=3),
                node("a", "module", module=name),
                node("b", "module", module=name, seed=11),
                node("both", "add"),
                node("m", "mean"),
            ],
            "edges": [
                edge("e1", "x", "a", "x"),
                edge("e2", "x", "b", "x"),
                edge("e3", "a", "both", source_port="y"),
                edge("e4", "b", "both", "other", source_port="y"),
                edge("e5", "both", "m"),
            ],
            "target": "m",
        }
    )


CASES = {
    "two-instances": two_blocks(),
    "two-instances-seed-and-state": two_blocks(seed=7, state={"w": {"value": [1.0, -2.0, 0.5]}}),
    "nested": _nested(),
    "linear-layers": _dense(),
    "conv2d-layers": _convs(),
    "two-outputs": _two_outputs(),
    "layer-mode-of-its-own": _norms(),
    "trained-instances": _trained(),
    **{f"library-{name}": _library(name) for name in LIBRARY},
}


def _run(text):
    return subprocess.run(
        [sys.executable, "-c", text], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def scripts():
    # (without the training loop: test_export_training.py runs it)
    jobs = {
        (c, f): to_python(doc, f, training=False, trace=True)
        for c, doc in CASES.items()
        for f in FLAVORS
    }
    with ThreadPoolExecutor(max_workers=2) as pool:
        procs = dict(zip(jobs, pool.map(_run, jobs.values())))
    return {k: (jobs[k], procs[k]) for k in jobs}


def _close(got, want, what):
    want = np.asarray(want.detach().tolist())
    assert got.shape == want.shape, what
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7, err_msg=what)


def _expected_keys(doc):
    """What a class script prints: every top-level node's value; per instance its outputs and,
    at any depth inside, each source's value and gradient and each layer's parameters'
    gradients (all under flat ids)."""
    flat = flatten(doc)
    instances = {n.id for n in doc.nodes if n.op == "module"}
    values = {n.id for n in doc.nodes if n.op != "module"}
    inside = []
    for n in flat.nodes:
        head = n.id.split(SEP)[0]
        if head not in instances:
            continue
        spec = registry.get(n.op)
        if n.op == OUTPUT_OP and n.id.count(SEP) == 1:
            values.add(n.id)
        elif spec.source:
            values.add(n.id)
            inside.append(n.id)
        elif spec.layer is not None:
            inside.append(n.id)
    return values, inside


@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_module_classes_print_the_runs_values_and_gradients(scripts, case, flavor):
    doc = CASES[case]
    text, proc = scripts[(case, flavor)]
    assert proc.returncode == 0, proc.stderr[-3000:]
    for m in doc.modules:
        assert f"class {m.name}(nn.Module):" in text
    assert "# -- modules: one nn.Module class per module definition" in text
    values, grads = values_and_grads(proc.stdout)
    res, _ = run_records(doc, "backward")  # the document itself: its run flattens it
    assert res.status == "ok", res.error
    want_values, inside = _expected_keys(doc)
    assert set(values) == want_values
    for key, got in values.items():
        _close(got, res.values[key], f"value {key}")
    want = {**res.node_grads, **res.leaf_grads}
    for key, got in grads.items():
        _close(got, want[key], f"grad {key}")
    # every parameter inside an instance has its gradient printed (a layer's under its name)
    for fid in inside:
        if fid in res.leaf_grads:  # a source
            assert fid in grads, fid
        for name in (k for k in res.leaf_grads if k.startswith(fid + ".")):  # a layer's
            assert name in grads, name
    if case == "two-instances-seed-and-state":  # l2's seed 7 moves its b, its state sets its w
        assert not np.allclose(values["l1/b"], values["l2/b"])
        assert values["l2/w"].tolist() == [1.0, -2.0, 0.5]
    if case == "linear-layers":
        assert "d2/fc.weight" in grads and "d1/fc.bias" in grads


def test_the_classes_read_as_pytorch_code(scripts):
    text, _ = scripts[("linear-layers", "torch")]
    assert 'class Dense(nn.Module):\n    """tanh(fc(x))"""' in text
    assert "        torch.manual_seed(1)\n        self.fc = nn.Linear(3, 3)" in text
    # forward's ports: their ids and positions in the layout block at the script's end (they
    # have no line of their own), keyed by the statement they were on
    assert "    def forward(self, x):\n        fc = self.fc(x)" in text
    assert "        return h\n" in text
    layout = text[text.index("# wiregrad layout") :].replace("\n# ", " ")
    assert '"Dense": {"def forward": {"ports": {"x": {"at": [0, 0]}}}}' in layout
    assert '"return": {"ports": {"y": {"at": [0, 0]}}}' in layout
    # d2 is made by Dense() and then given its own values, as a checkpoint is loaded
    model = text[text.index("# -- the model") : text.index("# -- the graph")]
    assert "d1 = Dense()\nd2 = Dense()\ntorch.manual_seed(3)\nd2.fc.reset_parameters()" in model
    assert "    d2.fc.weight.copy_(torch.tensor([[0.5, -0.25, 0.0]," in model
    text, _ = scripts[("nested", "engine")]
    assert "        self.g = Affine()\n        with eg.no_grad():" in text
    assert "g_y = self.g(f_y)" in text
    text, _ = scripts[("layer-mode-of-its-own", "engine")]
    assert "n1 = Norm()\nn2 = Norm()\nn2.bn.train()\n" in text
    text, _ = scripts[("two-outputs", "torch")]
    assert "        return r, t_2\n" in text and "sp_pos, sp_squashed = sp(v)" in text
    assert "        self.k = torch.tensor([2.0, 1.0, 0.5])\n" in text  # no Parameter


def _definition(doc, name):
    m = next(m for m in doc.modules if m.name == name)
    nodes = {n.id: (n.op, _params(n), n.position, n.label) for n in m.nodes}
    return nodes, _wiring(m), m.inputs, m.outputs


def _wiring(graph):
    return sorted((e.source, e.sourcePort, e.target, e.targetPort) for e in graph.edges)


def _params(n):
    if n.op == "module":
        return (n.params["module"], n.params.get("seed", 0), n.params.get("state") or {})
    return resolved_params(registry.get(n.op), n.params)


def _instances(doc):
    return {n.id: _params(n) for n in doc.nodes if n.op == "module"}


@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_the_class_script_imports_back_to_the_same_document(case, flavor):
    doc = CASES[case]
    back = from_python(to_python(doc, flavor))
    assert sorted(m.name for m in back.modules) == sorted(m.name for m in doc.modules)
    for m in doc.modules:  # the same nodes (ports too), params, positions, labels and edges
        assert _definition(back, m.name) == _definition(doc, m.name), m.name
    assert _instances(back) == _instances(doc)
    assert back.training == doc.training  # (the trained case has settings: the loop reads back)
    top = {n.id: n.op for n in doc.nodes}
    assert {n.id: n.op for n in back.nodes} == top
    assert {n.id: n.position for n in back.nodes} == {n.id: n.position for n in doc.nodes}
    assert _wiring(back) == _wiring(doc)
    # and it runs to the same numbers
    res_a, _ = run_records(doc, "backward")
    res_b, _ = run_records(back, "backward")
    assert res_b.status == "ok", res_b.error
    for nid, op in top.items():
        if op != "module":
            _close(np.asarray(res_b.values[nid].tolist()), res_a.values[nid], nid)
    for key, g in res_a.leaf_grads.items():
        if SEP not in key:
            _close(np.asarray(res_b.leaf_grads[key].tolist()), g, f"grad {key}")


def _gate():
    """An `if` node inside a module."""
    d = affine_module("Gate")
    d["nodes"] += [node("zero", "scalar", value=0.0), node("c", "gt"), node("pick", "if")]
    d["edges"] = [e for e in d["edges"] if e["id"] != "ry"] + [
        edge("xc", "x", "c"),
        edge("zc", "zero", "c", "other"),
        edge("cp", "c", "pick", "condition"),
        edge("rp", "r", "pick", "then"),
        edge("xp", "x", "pick", "else"),
        edge("py", "pick", "y"),
    ]
    doc = parse(
        {
            "version": 2,
            "modules": [d],
            "nodes": [
                tensor("in", value=1.5, requires_grad=True),
                node("g", "module", module="Gate"),
            ],
            "edges": [edge("e", "in", "g", "x")],
        }
    )
    return doc, "g/pick", "the graph has an if node"


def _two_widths():
    """Dense (a linear of 3 outputs) on a 3-wide and on a 4-wide input: one class cannot make
    both Linears (its in_features)."""
    data = _dense().model_dump(mode="json")
    data["nodes"].insert(1, tensor("wide", shape=[4, 4], init="ones"))
    data["edges"][0]["source"] = "wide"
    data["edges"][1] = edge("e2", "inp", "d2", "x")
    data["nodes"][3]["params"].pop("state")
    data["nodes"].append(node("other", "sum"))
    data["edges"].append(edge("e4", "d1", "other", source_port="y"))
    return parse(data), "d1/h", "module Dense makes other layers on its instances' inputs"


def _reshaped_state():
    """An instance whose state gives a parameter another shape than its class makes."""
    return (
        two_blocks(state={"w": {"value": [2.0]}}),
        "l2/r",
        "l2/w has another shape than Affine() makes",
    )


@pytest.mark.parametrize("case", [_gate, _two_widths, _reshaped_state])
def test_what_the_classes_cannot_say_is_written_flat_with_a_note(case):
    """The flat graph, ids made plain, and why; it still prints the run's numbers."""
    doc, key, why = case()
    text = to_python(doc, "torch", trace=True)
    assert f"# modules written as their flat graph (as every run runs it): {why}\n" in text
    assert "(nn.Module)" not in text
    proc = _run(text)
    assert proc.returncode == 0, proc.stderr[-3000:]
    values, _ = values_and_grads(proc.stdout)
    res, _ = run_records(doc, "forward")
    _close(values[key.replace("/", "_")], res.values[key], key)
