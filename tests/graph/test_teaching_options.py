"""The teaching options of a backward run, against PyTorch doing the same: accumulate_grad (the
leaves' .grad carried over from the previous run, as without zero_grad), backward_twice with
or without retain_graph, gradient_ones (backward from a target that is not one number) and
no_grad (a forward pass that records no graph); and the templates whose lessons use them."""

import numpy as np
import pytest
import torch
from _docs import doc, edge, node, tensor
from _numbers import close
from test_observer_kernel import as_json

import engine as eg
from backend.graph import ForwardCache, parse, run_records
from backend.graph.document.templates import load_template

BACKWARD_TWICE = (
    "Trying to backward through the graph a second time (or directly access saved tensors after "
    "they have already been freed). Saved intermediate values of the graph are freed when you "
    "call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward "
    "through the graph a second time or if you need to access saved tensors after calling "
    "backward."
)


def _layer_graph(seed=0, out=2):
    """x (3, 2) -> linear -> tanh -> sum: leaves x, fc.weight, fc.bias."""
    return parse(
        {
            "nodes": [
                {
                    "id": "x",
                    "op": "tensor",
                    "params": {"shape": [3, 2], "init": "randn", "seed": 1, "requires_grad": True},
                },
                {"id": "fc", "op": "linear", "params": {"out_features": out, "seed": seed}},
                {"id": "t", "op": "tanh"},
                {"id": "s", "op": "sum"},
            ],
            "edges": [
                {"id": "a", "source": "x", "target": "fc", "targetPort": "input"},
                {"id": "b", "source": "fc", "target": "t", "targetPort": "input"},
                {"id": "c", "source": "t", "target": "s", "targetPort": "input"},
            ],
            "target": "s",
        }
    )


def _torch_grads(res, runs, retain_graph=False, twice=False):
    """PyTorch on the run's starting values: `runs` forward+backward passes without
    zero_grad (each backward called twice when `twice`); the leaves' .grad."""
    weight, bias = _weights()
    x = torch.tensor(res.values["x"].detach().numpy(), requires_grad=True)
    w = torch.tensor(weight, requires_grad=True)
    b = torch.tensor(bias, requires_grad=True)
    for _ in range(runs):
        s = torch.tanh(x @ w.T + b).sum()
        s.backward(retain_graph=retain_graph)
        if twice:
            s.backward()
    return {"x": x.grad, "fc.weight": w.grad, "fc.bias": b.grad}


def _weights():
    """The linear node's starting weight and bias (seed 0)."""
    layer = eg.nn.Linear(2, 2)
    layer.reset_parameters(eg.Generator().manual_seed(0))
    return layer.weight.detach().numpy(), layer.bias.detach().numpy()


def _close(got, want):
    for key, g in want.items():
        close(got[key], g, what=key)


def test_accumulate_grad_adds_to_the_previous_runs_grad():
    doc = _layer_graph()
    first, _ = run_records(doc, "backward")
    second, records = run_records(doc, "backward", start_grads=first.grads)
    third, _ = run_records(doc, "backward", start_grads=second.grads)
    _close(first.leaf_grads, _torch_grads(first, 1))
    _close(second.leaf_grads, _torch_grads(first, 2))
    _close(third.leaf_grads, _torch_grads(first, 3))
    # the earlier runs keep what they had: each run adds into a copy
    _close(first.leaf_grads, _torch_grads(first, 1))
    # this pass's gradients are the same as the first's; only .grad accumulates
    np.testing.assert_allclose(second.node_grads["x"].numpy(), first.leaf_grads["x"].numpy())
    leaf = [r for r in records if r["kind"] == "leaf_grad" and r["node"] == "x"]
    norm = np.linalg.norm(second.leaf_grads["x"].numpy())
    np.testing.assert_allclose(leaf[0]["summary"]["stats"]["norm"], norm, rtol=1e-6)


def test_accumulate_grad_starts_fresh_for_another_graph():
    first, _ = run_records(_layer_graph(out=2), "backward")
    other, _ = run_records(_layer_graph(out=3), "backward", start_grads=first.grads)  # shapes
    fresh, _ = run_records(_layer_graph(out=3), "backward")
    for key in fresh.leaf_grads:
        np.testing.assert_array_equal(other.leaf_grads[key].numpy(), fresh.leaf_grads[key].numpy())
    # another document with the same nodes, edges and leaves is the same graph
    a, _ = run_records(load_template("square-of-a-sum"), "backward")
    b, _ = run_records(load_template("gradient-accumulation"), "backward", start_grads=a.grads)
    assert b.leaf_grads["x"].item() == 20.0
    c, _ = run_records(load_template("backward-twice"), "backward", start_grads=b.grads)
    assert c.leaf_grads["x"].item() == 36.0


def test_forward_runs_ignore_the_options():
    doc = load_template("square-of-a-sum")
    first, _ = run_records(doc, "backward")
    res, records = run_records(
        doc, "forward", start_grads=first.grads, backward_twice=True, retain_graph=True
    )
    assert res.status == "ok" and res.grads is None
    assert {r["kind"] for r in records} == {"value", "autograd"}


def test_backward_twice_without_retain_graph_fails_as_pytorch_does():
    doc = load_template("square-of-a-sum")
    res, records = run_records(doc, "backward", backward_twice=True)
    x = torch.tensor(2.0, requires_grad=True)
    z = (x + torch.tensor(3.0, requires_grad=True)) ** 2
    z.backward()
    with pytest.raises(RuntimeError) as info:
        z.backward()
    assert str(info.value) == BACKWARD_TWICE
    assert res.status == "error"
    assert res.error == {
        "kind": "error",
        "node": "z",
        "message": BACKWARD_TWICE,
        "type": "RuntimeError",
    }
    assert records[-1] == res.error
    # the first backward's gradients came before the error, and stay the leaves' .grad
    leaf = [r["summary"]["preview"] for r in records if r["kind"] == "leaf_grad"]
    assert leaf == [10.0, 10.0]
    assert res.leaf_grads["x"].item() == x.grad.item() == 10.0
    assert res.grads is not None  # a later accumulate_grad run starts from them


def test_backward_twice_with_retain_graph_doubles_the_grads():
    doc = _layer_graph()
    res, records = run_records(doc, "backward", backward_twice=True, retain_graph=True)
    assert res.status == "ok", res.error
    first, _ = run_records(doc, "backward")
    _close(res.leaf_grads, _torch_grads(first, 1, retain_graph=True, twice=True))
    kinds = [r["kind"] for r in records]
    # node and edge gradients once (the second pass's are the same), leaf grads after each pass
    assert kinds.count("node_grad") == len(first.node_grads)
    assert kinds.count("leaf_grad") == 2 * len(first.leaf_grads)
    leaf = [r for r in records if r["kind"] == "leaf_grad" and r["node"] == "x"]
    norms = [r["summary"]["stats"]["norm"] for r in leaf]
    np.testing.assert_allclose(norms[1], 2 * norms[0], rtol=1e-6)
    assert kinds[-1] == "autograd"


def test_backward_twice_on_a_graph_that_saves_nothing_needs_no_retain_graph():
    doc = parse(
        {
            "nodes": [
                {"id": "x", "op": "tensor", "params": {"value": 2.0, "requires_grad": True}},
                {"id": "y", "op": "add", "params": {"scalar": 1.0}},
            ],
            "edges": [{"id": "e", "source": "x", "target": "y", "targetPort": "input"}],
        }
    )
    res, _ = run_records(doc, "backward", backward_twice=True)
    x = torch.tensor(2.0, requires_grad=True)
    y = x + 1.0
    y.backward()
    y.backward()  # AddBackward0 saved nothing: PyTorch lets it run again
    assert res.status == "ok" and res.leaf_grads["x"].item() == x.grad.item() == 2.0


# -- gradient_ones ----------------------------------------------------------------------------
def _vector_graph():
    """x (2, 3) and w (3, 4): y = tanh(x @ w) * x.sum(), a 2x4 target."""
    leaf = {"init": "randn", "requires_grad": True}
    nodes = [tensor("x", (2, 3), seed=5, **leaf), tensor("w", (3, 4), seed=6, **leaf)]
    nodes += [node("m", "matmul"), node("t", "tanh"), node("s", "sum"), node("y", "mul")]
    edges = [edge("x-m", "x", "m"), edge("w-m", "w", "m", "other"), edge("m-t", "m", "t")]
    edges += [edge("x-s", "x", "s"), edge("t-y", "t", "y"), edge("s-y", "s", "y", "other")]
    return doc(nodes, edges, target="y")


def test_gradient_ones_runs_backward_from_a_tensor_as_pytorch_does():
    doc = _vector_graph()
    failed, _ = run_records(doc, "backward")
    assert failed.status == "error" and failed.error["node"] == "y"
    assert failed.error["message"] == "grad can be implicitly created only for scalar outputs"

    res, records = run_records(doc, "backward", gradient_ones=True)
    assert res.status == "ok" and res.target == "y"
    x = torch.tensor(res.values["x"].detach().numpy(), requires_grad=True)
    w = torch.tensor(res.values["w"].detach().numpy(), requires_grad=True)
    t = torch.tanh(x @ w)
    t.retain_grad()
    y = t * x.sum()
    y.backward(gradient=torch.ones_like(y))
    for key, want in (("x", x.grad), ("w", w.grad)):
        np.testing.assert_allclose(res.leaf_grads[key].numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(res.node_grads["t"].numpy(), t.grad.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_array_equal(res.node_grads["y"].numpy(), np.ones((2, 4), np.float32))
    # x's two edges carry their own paths' gradients, which add up to x.grad
    both = res.edge_grads["x-m"] + res.edge_grads["x-s"]
    np.testing.assert_allclose(both.numpy(), x.grad.numpy(), rtol=1e-5, atol=1e-6)
    assert [r["kind"] for r in records][-1] == "autograd"


def test_gradient_ones_changes_nothing_for_a_one_element_target():
    doc = _layer_graph()
    plain, plain_records = run_records(doc, "backward")
    ones, ones_records = run_records(doc, "backward", gradient_ones=True)
    assert as_json(plain_records) == as_json(ones_records)
    _close(ones.leaf_grads, plain.leaf_grads)


def test_gradient_ones_with_the_other_options():
    """Backward twice from ones with retain_graph doubles .grad as from one number; the same
    target run again with accumulate_grad adds to it."""
    doc = _vector_graph()
    once, _ = run_records(doc, "backward", gradient_ones=True)
    twice, _ = run_records(
        doc, "backward", gradient_ones=True, backward_twice=True, retain_graph=True
    )
    again, _ = run_records(doc, "backward", gradient_ones=True, start_grads=once.grads)
    for key in ("x", "w"):
        np.testing.assert_allclose(twice.leaf_grads[key].numpy(), 2 * once.leaf_grads[key].numpy())
        np.testing.assert_allclose(again.leaf_grads[key].numpy(), 2 * once.leaf_grads[key].numpy())


# -- the templates' lessons ----------------------------------------------------------------------
def _lesson_runs(template_id):
    """Each lesson step that runs, in order, with its options and the previous run's grads."""
    doc = load_template(template_id)
    last, out = None, []
    for step in doc.lesson:
        if step.run is None:
            continue
        options = step.options.model_dump() if step.options else {}
        start = last.grads if last is not None and options.get("accumulate_grad") else None
        res, _ = run_records(
            doc,
            step.run,
            start_grads=start,
            backward_twice=options.get("backward_twice", False),
            retain_graph=options.get("retain_graph", False),
            gradient_ones=options.get("gradient_ones", False),
            no_grad=options.get("no_grad", False),
        )
        if res.grads is not None:
            last = res
        out.append(res)
    return out


def test_gradient_accumulation_lesson():
    runs = _lesson_runs("gradient-accumulation")
    assert [r.leaf_grads["x"].item() for r in runs] == [10.0, 20.0, 30.0, 10.0]
    assert [r.leaf_grads["y"].item() for r in runs] == [10.0, 20.0, 30.0, 10.0]


def test_backward_twice_lesson():
    first, failed, doubled = _lesson_runs("backward-twice")
    x = torch.tensor(2.0, requires_grad=True)
    w = torch.tensor(3.0, requires_grad=True)
    z = (x * w) ** 2
    z.backward(retain_graph=True)
    assert (first.leaf_grads["x"].item(), first.leaf_grads["w"].item()) == (36.0, 24.0)
    assert (x.grad.item(), w.grad.item()) == (36.0, 24.0)
    assert failed.status == "error" and failed.error["message"] == BACKWARD_TWICE
    assert failed.error["node"] == "z"
    z.backward()
    assert doubled.status == "ok"
    assert doubled.leaf_grads["x"].item() == x.grad.item() == 72.0
    assert doubled.leaf_grads["w"].item() == w.grad.item() == 48.0


def test_vector_backward_lesson():
    forward, failed, from_ones = _lesson_runs("vector-backward")
    assert forward.status == "ok" and tuple(forward.values["diff"].shape) == (3, 3)
    assert failed.status == "error" and failed.error["node"] == "diff"
    assert failed.error["message"] == "grad can be implicitly created only for scalar outputs"
    summed, _ = run_records(load_template("five-weight-network"), "backward")
    assert from_ones.status == "ok"
    for key, g in summed.leaf_grads.items():  # text 001's two ways agree
        np.testing.assert_allclose(from_ones.leaf_grads[key].numpy(), g.numpy(), rtol=1e-6)


# -- no_grad ----------------------------------------------------------------------------------
def _torch_no_grad_message():
    x = torch.tensor(2.0)
    with pytest.raises(RuntimeError) as info:
        (x * x).backward()
    return str(info.value)


def test_no_grad_runs_forward_without_a_graph_as_pytorch_does():
    doc = _vector_graph()
    res, records = run_records(doc, "forward", no_grad=True)
    plain, _ = run_records(doc, "forward")
    x = torch.tensor(plain.values["x"].detach().numpy(), requires_grad=True)
    w = torch.tensor(plain.values["w"].detach().numpy(), requires_grad=True)
    with torch.no_grad():
        y = torch.tanh(x @ w) * x.sum()
    np.testing.assert_allclose(res.values["y"].numpy(), y.numpy(), rtol=1e-6)
    for nid in ("m", "t", "s", "y"):
        assert not res.values[nid].requires_grad and res.values[nid].grad_fn is None, nid
        assert plain.values[nid].grad_fn is not None, nid
    assert res.values["x"].requires_grad and res.values["x"].is_leaf  # made, not computed
    (graph,) = [r for r in records if r["kind"] == "autograd"]
    assert {n["name"] for n in graph["nodes"]} == {"AccumulateGrad"} and not graph["edges"]

    failed, records = run_records(doc, "backward", no_grad=True, gradient_ones=True)
    assert failed.status == "error" and failed.error["node"] == "y"
    assert failed.error["message"] == _torch_no_grad_message()
    assert not failed.leaf_grads and records[-1] == failed.error


def test_no_grad_runs_leave_the_forward_cache_alone():
    cache = ForwardCache()
    doc = _vector_graph()
    assert run_records(doc, "forward", cache=cache)[0].values["y"].grad_fn is not None
    hits = cache.hits
    res, _ = run_records(doc, "forward", cache=cache, no_grad=True)
    assert res.values["y"].grad_fn is None and cache.hits == hits  # not taken from the cache
    res, records = run_records(doc, "forward", cache=cache)
    assert res.values["y"].grad_fn is not None  # nor put into it
    assert any(r.get("cached") for r in records if r["kind"] == "value")


def test_no_grad_lesson():
    trained, inference, failed = _lesson_runs("no-grad-inference")
    assert trained.values["y"].item() == inference.values["y"].item() == 11.0
    assert trained.leaf_grads["x"].item() == 7.0
    assert trained.values["y"].grad_fn is not None and inference.values["y"].grad_fn is None
    assert failed.status == "error" and failed.error["node"] == "y"
    assert failed.error["message"] == _torch_no_grad_message()
