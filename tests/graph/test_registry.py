"""The op registry is the one description of an op: every test here is derived from it, so an
op added to `backend/graph/ops/` is run, exported, imported back and compared with PyTorch
without a line written for it here."""

import contextlib
import io

import numpy as np
import pytest
import torch
from _printout import printed

from backend.graph import parse
from backend.graph.document.validate import resolved_params
from backend.graph.export import to_python
from backend.graph.importing.importer import ImportFailed, from_python
from backend.graph.importing.layout_block import node_hints
from backend.graph.registry import (
    CALLS,
    FORMS,
    REGISTRY,
    CallForm,
    OpSpec,
    Port,
    all_ops,
    by_operator,
    register,
)
from backend.graph.running.executor import run_records

# ops whose lines the exporter writes itself (a layer, a dataset's generator): tested in
# test_export_import.py's documents
WRITTEN_BY_EXPORTER = [s.name for s in all_ops() if s.code is None]
# a module's input and output nodes are their input by another name: a flat script writes them
# `y = x`, which reads back as one variable (test_modules.py tests them)
CODED = [s.name for s in all_ops() if s.code is not None and not s.extra.get("alias")]


def sample(spec, requires_grad=True):
    """A document running `spec` once on its example's sources (registry.OpSpec.example)."""
    nodes, edges = [], []
    writes = spec.extra.get("writes")
    for k, port in enumerate(spec.inputs):
        for j in range(2 if port.variadic else 1):
            sid = f"{port.name}{j}"
            default = {"shape": [2, 3], "init": "rand", "seed": 10 * k + j}
            params = dict(spec.example.get(port.name) or default)
            float_leaf = params.get("dtype", "float32").startswith("float")
            params["requires_grad"] = (
                requires_grad and float_leaf and port.name != writes and not port.no_grad
            )
            nodes.append(
                {"id": sid, "op": "tensor", "params": params, "position": {"x": 0, "y": 0}}
            )
            edges.append({"id": f"e_{sid}", "source": sid, "target": "op", "targetPort": port.name})
    params = {"name": "op"} if spec.source else {}  # (a source's line names it: its name)
    nodes.append({"id": "op", "op": spec.name, "params": params, "position": {"x": 100, "y": 0}})
    doc = {"version": 1, "name": f"one {spec.name}", "nodes": nodes, "edges": edges}
    res, _ = run_records(parse(doc), "forward")
    assert res.status == "ok", (spec.name, res.error)
    if res.values["op"].requires_grad:
        doc["target"] = "op"
    return parse(doc)


def _hints(script):
    """The hints of the script's layout block (what its code alone could not say)."""
    return node_hints(script)


def _printed(script):
    """{("value" | "grad", key): array} printed by running our own exported script."""
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        exec(compile(script, "<exported>", "exec"), {"__name__": "__main__"})
    return printed(buf.getvalue())


@pytest.mark.parametrize("name", CODED)
def test_every_op_exports_and_imports_back_from_its_code_alone(name):
    spec = REGISTRY[name]
    doc = sample(spec)
    for flavor in ("engine", "torch"):
        script = to_python(doc, flavor)
        hint = _hints(script).get("op", {})
        if spec.call is not None:
            # no op or params hint: the code as written (the op's `code`) reads back (its
            # `call`) to the same op and params
            assert "op" not in hint and "params" not in hint, (flavor, hint)
        back = from_python(script)
        node = {n.id: n for n in back.nodes}["op"]
        assert node.op == name
        op_params = {n.id: n for n in doc.nodes}["op"].params
        assert resolved_params(spec, node.params) == resolved_params(spec, op_params)
        assert back.target == doc.target


@pytest.mark.parametrize("name", CODED)
def test_every_op_computes_what_pytorch_computes(name):
    """The PyTorch script of the op's sample prints the values and gradients the executor
    computes (gradients through the inputs the registry says pass them)."""
    spec = REGISTRY[name]
    doc = sample(spec)
    mode = "backward" if doc.target else "forward"
    res, _ = run_records(doc, mode, gradient_ones=True)
    assert res.status == "ok", res.error
    printed = _printed(to_python(doc, "torch", trace=True))
    for nid, t in res.values.items():
        np.testing.assert_allclose(
            printed[("value", nid)], np.asarray(t.detach().tolist()), rtol=1e-5, atol=1e-6
        )
    for nid, g in res.leaf_grads.items():
        np.testing.assert_allclose(
            printed[("grad", nid)], np.asarray(g.tolist()), rtol=1e-5, atol=1e-6
        )
    for port in spec.inputs:
        if port.no_grad:
            assert not any(k == ("grad", f"{port.name}0") for k in printed), port.name


@pytest.mark.parametrize("name", CODED)
def test_every_input_edge_carries_what_its_leaf_receives(name):
    """Each sample source feeds the op alone, so the gradient the op sends back along its edge
    is the source's whole .grad. An op that is several engine ops but not marked `composite`
    would show only the last engine op's part on its edges: this catches it."""
    spec = REGISTRY[name]
    doc = sample(spec)
    if not doc.target:
        return  # no gradient flows: nothing on the edges to check (the other tests run it)
    res, _ = run_records(doc, "backward", gradient_ones=True)
    assert res.status == "ok", res.error
    checked = 0
    for e in doc.edges:
        if e.source in res.leaf_grads:  # (a source op is a leaf itself, with no edge in)
            np.testing.assert_allclose(
                np.asarray(res.edge_grads[e.id].tolist()),
                np.asarray(res.leaf_grads[e.source].tolist()),
                rtol=1e-6,
                atol=1e-7,
                err_msg=f"{name}: edge {e.id}",
            )
            checked += 1
    sources = {e.source for e in doc.edges}
    assert checked == len(sources & res.leaf_grads.keys())
    assert spec.source or checked or not spec.inputs, "no edge was checked"


def _call_script(spec, name, form):
    """A script calling op `spec` by `name` in `form`, its required params given."""
    args, kwargs = [], []
    for k, a in enumerate(spec.call.args):
        port = spec.port(a)
        if port is not None:
            args.append("[x, x]" if port.variadic else "x")
        elif a in spec.call.required and any(spec.port(b) for b in spec.call.args[k:]):
            # a required param before a port (F.layer_norm(x, shape, w)): given in its place
            args.append(repr(spec.param(a).default))
    for req in spec.call.required:
        if repr(spec.param(req).default) not in args:
            kwargs.append(f"{req}={spec.param(req).default!r}")
    head = {"function": f"eg.{name}", "functional": f"F.{name}"}.get(form)
    if form == "method":
        call = f"x.{name}({', '.join(args[1:] + kwargs)})"
    else:
        call = f"{head}({', '.join(args + kwargs)})"
    return (
        "import engine as eg\n"
        "import engine.nn.functional as F\n"
        "x = eg.tensor([[0.5, 0.25], [1.0, 2.0]], requires_grad=True)\n"
        f"y = {call}\n"
    )


CALL_CASES = [(n, f) for n in sorted(CALLS) for f in FORMS]


@pytest.mark.parametrize("name, form", CALL_CASES)
def test_every_call_name_and_form_reads_as_the_registry_says(name, form):
    """Each name (op name or alias) in each of the three forms: read into the op where its
    CallForm lists the form, refused as no op of the registry where it does not."""
    spec = CALLS[name]
    script = _call_script(spec, name, form)
    if form in spec.call.forms:
        back = from_python(script)
        assert [n.op for n in back.nodes if n.id == "y"] == [spec.name], script
    else:
        with pytest.raises(ImportFailed, match="is not an op of the registry"):
            from_python(script)


def test_operators_are_read_as_their_ops():
    for symbol in ("+", "-", "*", "/", "**", "@", ">", "<", ">=", "<=", "==", "!="):
        spec = by_operator(symbol)
        back = from_python(f"import engine as eg\nx = eg.tensor([1.0])\ny = x {symbol} x\n")
        assert [n.op for n in back.nodes if n.id == "y"] == [spec.name]


def _op(name, **kw):
    return OpSpec(name, "test", "", (Port("input"),), run=None, code=None, **kw)


def test_the_registry_refuses_a_second_op_of_a_name_a_call_name_or_an_operator():
    with pytest.raises(ValueError, match="registered twice"):
        register(_op("exp"))
    with pytest.raises(ValueError, match="call name 'clip'"):
        register(_op("clip_again", call=CallForm(aliases=("clip",))))
    with pytest.raises(ValueError, match="operator '@'"):
        register(_op("matmul_again", call=CallForm(operator="@")))
    with pytest.raises(ValueError, match="unknown call forms"):
        register(_op("odd_form", call=CallForm(forms=("macro",))))
    assert "clip_again" not in REGISTRY and "matmul_again" not in REGISTRY


def test_describe_says_where_no_gradient_flows_and_which_op_branches():
    ops = {s.name: s.describe() for s in all_ops()}
    no_grad = {
        (name, p["name"]): p["no_grad"]
        for name, d in ops.items()
        for p in d["inputs"]
        if "no_grad" in p
    }
    assert no_grad[("detach", "input")].startswith("detach sends no gradient back")
    assert no_grad[("gt", "input")] == no_grad[("gt", "other")]
    assert ("where", "input") not in no_grad and ("where", "condition") in no_grad
    assert ("cross_entropy", "target") in no_grad and ("mse_loss", "target") not in no_grad
    assert [n for n, d in ops.items() if d.get("branches")] == ["if"]
    assert all("no_grad" not in p for p in ops["add"]["inputs"])


def test_ops_the_exporter_writes_itself_are_the_layer_and_the_data():
    # the layer ops (a LayerForm: nn.Linear, nn.Conv2d ... declared) and the data ops
    layers = sorted(n for n in WRITTEN_BY_EXPORTER if REGISTRY[n].layer is not None)
    assert sorted(set(WRITTEN_BY_EXPORTER) - set(layers)) == ["dataset", "labels"]
    assert layers == sorted(
        ["linear", "conv2d", "batch_norm", "layer_norm", "dropout", "embedding",
         "multi_head_attention", "rnn", "lstm", "gru"]
    )  # fmt: skip


def test_softplus_with_its_params_matches_pytorch_through_export_and_import():
    # the op added as one entry (ops/activations.py); the tests above cover its defaults
    doc = sample(REGISTRY["softplus"])
    doc.nodes[-1].params.update(beta=2.0, threshold=0.5)
    back = from_python(to_python(doc, "engine"))
    assert {n.id: n for n in back.nodes}["op"].params == {"beta": 2.0, "threshold": 0.5}
    res, _ = run_records(back, "backward", gradient_ones=True)
    x = torch.tensor(res.values["input0"].tolist(), requires_grad=True)
    y = torch.nn.functional.softplus(x, beta=2.0, threshold=0.5)
    y.backward(torch.ones_like(y))
    np.testing.assert_allclose(res.values["op"].tolist(), y.tolist(), rtol=1e-5)
    np.testing.assert_allclose(res.leaf_grads["input0"].tolist(), x.grad.tolist(), rtol=1e-5)
