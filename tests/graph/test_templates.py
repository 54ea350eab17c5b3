"""The templates: each one parses, validates, runs backward and shows the numbers of the text it
comes from. Where a text prints no number, PyTorch runs the same computation as the oracle."""

import json
from functools import cache

import pytest
import torch
import torch.nn.functional as TF
from _numbers import close, npy

import engine as eg
from backend.graph import GraphDocument, parse, run_records, validate
from backend.graph.document.templates import FOLDER, list_templates, load_template

IDS = [t["id"] for t in list_templates()]
TEXT_EXAMPLES = [
    "mean-of-3a",
    "five-weight-network",
    "vector-backward",
    "quadratic",
    "doubling-loop",
    "branch-on-sign",
    "classifier-cross-entropy",
    "detach-stops-gradient",
    "no-grad-inference",
    "inplace-leaf",
    "square-of-a-sum",
    "branch-square-or-negate",
    "mlp-mse",
    "detached-encoder",
]


# templates whose target is not one number: they run backward with gradient_ones (see
# test_vector_backward_fails_then_runs_from_ones for the run without it)
FROM_ONES = {"vector-backward"}
# templates whose backward run ends in PyTorch's error, on purpose: (node, message start,
# whether the forward run fails too); tests/graph/test_inplace_nodes.py checks them against torch
EXPECTED_ERRORS = {
    "inplace-leaf": ("a", "a leaf Variable that requires grad is being used", True),
    "inplace-saved-overwritten": ("b", "one of the variables needed for gradient", False),
}


@cache
def run_template(template_id):
    """One backward run per template, shared by the tests (they only read it)."""
    ones = template_id in FROM_ONES
    res, records = run_records(load_template(template_id), "backward", gradient_ones=ones)
    if template_id in EXPECTED_ERRORS:
        node, message, _ = EXPECTED_ERRORS[template_id]
        assert res.status == "error" and res.error["node"] == node
        assert res.error["message"].startswith(message)
    else:
        assert res.status == "ok", res.error
    return res, records


def torch_leaf(res, node_id, requires_grad=True):
    """The engine's value of a source node as a torch tensor (random inits use the engine's
    generator, so the oracle starts from the same numbers)."""
    return torch.tensor(npy(res.values[node_id]), requires_grad=requires_grad)


def torch_linear(doc, node_id, in_features):
    """A torch Linear holding the weights the graph's linear node starts from."""
    p = doc.node(node_id).params
    layer = eg.nn.Linear(in_features, p["out_features"])
    layer.reset_parameters(eg.Generator().manual_seed(p.get("seed", 0)))
    tl = torch.nn.Linear(in_features, p["out_features"])
    with torch.no_grad():
        tl.weight.copy_(torch.tensor(npy(layer.weight)))
        tl.bias.copy_(torch.tensor(npy(layer.bias)))
    return tl


def grad_fn_names(records):
    (graph,) = [r for r in records if r["kind"] == "autograd"]
    return {(n["node"], n["name"]) for n in graph["nodes"]}


# -- every template ------------------------------------------------------------------------------
@pytest.mark.parametrize("template_id", IDS)
def test_template_parses_validates_and_runs(template_id):
    raw = json.loads((FOLDER / f"{template_id}.json").read_text())
    doc = parse(raw)
    assert doc == load_template(template_id)
    assert validate(doc) == []
    res, records = run_template(template_id)
    if template_id in EXPECTED_ERRORS:
        forward, _ = run_records(doc, "forward")
        assert (forward.status == "error") == EXPECTED_ERRORS[template_id][2]
        return
    assert res.target == doc.target
    assert (res.values[doc.target].numel() == 1) == (template_id not in FROM_ONES)
    assert res.leaf_grads, "backward reaches at least one leaf"
    ran = {r["node"] for r in records if r["kind"] == "value"}
    assert ran == set(res.values) == {n.id for n in doc.nodes} - set(res.skipped)
    forward, _ = run_records(doc, "forward")
    assert forward.status == "ok"


@pytest.mark.parametrize("template_id", IDS)
def test_template_is_well_formed(template_id):
    doc = load_template(template_id)
    assert doc.name and len(doc.description) >= 100
    node_ids = [n.id for n in doc.nodes]
    assert len(set(node_ids)) == len(node_ids)
    assert len({e.id for e in doc.edges}) == len(doc.edges)
    assert doc.target in node_ids
    assert 3 <= len(doc.lesson) <= 5
    assert any(step.run == "backward" for step in doc.lesson)
    for step in doc.lesson:
        assert step.text and set(step.select) <= set(node_ids)
    for n in doc.nodes:
        if n.op in ("tensor", "parameter"):
            assert n.params.get("name"), f"{n.id} has no name"
        assert n.position.x % 220 == 0 and n.position.y % 110 == 0
    for e in doc.edges:  # left to right
        assert doc.node(e.source).position.x < doc.node(e.target).position.x


@pytest.mark.parametrize("template_id", IDS)
def test_edge_gradients_out_of_a_node_sum_to_its_gradient(template_id):
    doc = load_template(template_id)
    res, _ = run_template(template_id)
    # a node whose tensor a write changes later: its gradient is its value's when it ran, and
    # the edges read after the write carry the new value's (test_inplace_nodes.py)
    written = {e.source for e in doc.edges if e.target in _writes(doc)}
    written |= {e.source for e in doc.edges if e.target in written}
    for node_id, grad in res.node_grads.items():
        if node_id in written:
            continue
        carried = [
            res.edge_grads[e.id]
            for e in doc.edges
            if e.source == node_id and e.id in res.edge_grads
        ]
        if carried:
            close(sum(npy(g) for g in carried), npy(grad))


def _writes(doc):
    return {n.id for n in doc.nodes if n.op.endswith("_") or n.op == "setitem"}


FAN_OUT = {
    "quadratic": ("x", 3),
    "five-weight-network": ("a", 2),
    "branch-on-sign": ("x", 2),
    "two-paths-add-up": ("h", 2),
    "shared-weight": ("w", 3),
}


@pytest.mark.parametrize("template_id", sorted(FAN_OUT))
def test_fan_out_templates_show_several_edge_gradients(template_id):
    node_id, count = FAN_OUT[template_id]
    doc = load_template(template_id)
    res, _ = run_template(template_id)
    edges = [e.id for e in doc.edges if e.source == node_id and e.id in res.edge_grads]
    assert len(edges) == count


# -- predict steps (docs/graph-format.md, "Lesson steps that ask") ------------------------------
# what each predict step asks, as the text it comes from works it out
PREDICTED = {
    "mean-of-3a": [[0.5, 0.5]],  # the mean sends 1/2 back to each of b's two entries
    "five-weight-network": [[[-1.0] * 3] * 3],  # 10 - d sends -1 back to each entry of d
    "gradient-accumulation": [20.0],  # x.grad kept from the first run, plus the new 10
    "square-of-a-sum": [10.0],  # the square sends 2a = 10 back to a
    "quadratic": [7.0],  # x.grad = 2x + 3 at x = 2, the sum of its three edges
}
PREVIEW_LIMIT = 1024  # the page asks about a tensor it has whole (docs/graph-format.md, Summaries)


def lesson_as_played(doc):
    """Each lesson step with the run shown after it, as the page plays the steps in order: a
    step that runs replaces the run, its accumulate_grad starting from the last run's grads."""
    shown, out = None, []
    for step in doc.lesson:
        if step.run in ("forward", "backward"):
            options = step.options.model_dump() if step.options else {}
            accumulate = options.pop("accumulate_grad", False)
            start = shown.grads if shown is not None and accumulate else None
            shown, _ = run_records(doc, step.run, start_grads=start, **options)
        out.append((step, shown))
    return out


def predicted_number(doc, predict, res):
    """The number a predict step asks about, from the run the page shows at that step."""
    if predict.edge is not None:
        edge = next(e for e in doc.edges if e.id == predict.edge)
        return res.edge_grads[edge.id] if predict.what == "grad" else res.values[edge.source]
    if predict.what == "value":
        return res.values[predict.node]
    return res.leaf_grads.get(predict.node, res.node_grads.get(predict.node))


def test_the_texts_that_ask_the_reader_have_predict_steps():
    asking = {
        template_id
        for template_id in IDS
        if any(step.predict for step in load_template(template_id).lesson)
    }
    assert asking == set(PREDICTED)


@pytest.mark.parametrize("template_id", sorted(PREDICTED))
def test_predict_steps_ask_about_a_number_their_run_shows(template_id):
    doc = load_template(template_id)
    asked = []
    for step, res in lesson_as_played(doc):
        if step.predict is None:
            continue
        p = step.predict
        # the step runs what it asks about (a gradient needs its own backward), and names an
        # edge or node of the graph
        assert step.run == "backward" or (p.what == "value" and step.run == "forward")
        assert p.edge in {e.id for e in doc.edges} or p.node in {n.id for n in doc.nodes}
        assert p.prompt and "?" in p.prompt
        assert res is not None and res.status == "ok", res and res.error
        number = predicted_number(doc, p, res)
        assert number is not None and number.numel() <= PREVIEW_LIMIT
        asked.append(npy(number).tolist())
    assert len(asked) == len(PREDICTED[template_id])
    for got, want in zip(asked, PREDICTED[template_id], strict=True):
        close(got, want)


# -- the texts' numbers ----------------------------------------------------------------------------
def test_mean_of_3a():
    res, records = run_template("mean-of-3a")
    close(res.values["b"], [6.0, 9.0])
    close(res.values["c"], 7.5)
    close(res.leaf_grads["a"], [1.5, 1.5])
    assert {("b", "MulBackward0"), ("c", "MeanBackward0")} <= grad_fn_names(records)
    assert res.values["a"].grad_fn is None


def test_five_weight_network_against_torch():
    res, records = run_template("five-weight-network")
    a, w1, w2, w3, w4 = (torch_leaf(res, n) for n in ("a", "w1", "w2", "w3", "w4"))
    assert a.shape == (3, 3) and not torch.equal(w1, w2)
    b = w1 * a
    c = w2 * a
    d = w3 * b + w4 * c
    L = (10 - d).sum()
    L.backward()
    close(res.values["d"], d)
    close(res.values["L"], L)
    for name, t in (("a", a), ("w1", w1), ("w2", w2), ("w3", w3), ("w4", w4)):
        close(res.leaf_grads[name], t.grad)
    # the products along each path, as the text derives them
    close(res.leaf_grads["w4"], -c)
    close(res.leaf_grads["w3"], -b)
    close(res.edge_grads["a-b-other"], -(w3 * w1))
    close(res.edge_grads["a-c-other"], -(w4 * w2))
    assert ("d", "AddBackward0") in grad_fn_names(records)


def test_vector_backward_fails_then_runs_from_ones():
    """Text 001: backward from the 3x3 L = 10 - d fails in PyTorch's words; started from ones
    (its second way) it gives what PyTorch gives, and what summing L gives (its first way)."""
    doc = load_template("vector-backward")
    failed, records = run_records(doc, "backward")
    assert failed.status == "error"
    assert failed.error == {
        "kind": "error",
        "node": "diff",
        "message": "grad can be implicitly created only for scalar outputs",
        "type": "RuntimeError",
    }
    assert not failed.leaf_grads and records[-1] == failed.error

    res, _ = run_template("vector-backward")
    a, w1, w2, w3, w4 = (torch_leaf(res, n) for n in ("a", "w1", "w2", "w3", "w4"))
    b = w1 * a
    c = w2 * a
    L = 10 - (w3 * b + w4 * c)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        L.backward(retain_graph=True)
    L.backward(gradient=torch.ones_like(L))
    close(res.values["diff"], L)
    close(res.node_grads["diff"], torch.ones(3, 3))
    summed, _ = run_template("five-weight-network")  # the same weights, L summed
    for name, t in (("a", a), ("w1", w1), ("w2", w2), ("w3", w3), ("w4", w4)):
        close(res.leaf_grads[name], t.grad)
        close(res.leaf_grads[name], summed.leaf_grads[name])
    close(res.leaf_grads["w4"], -c)
    close(res.edge_grads["a-b-other"], -(w3 * w1))


def test_quadratic():
    res, _ = run_template("quadratic")
    close(res.values["y"], 11.0)
    close(res.leaf_grads["x"], 7.0)
    close(res.edge_grads["x-a"], 2.0)
    close(res.edge_grads["x-a-other"], 2.0)
    close(res.edge_grads["x-b"], 3.0)


def test_doubling_loop():
    doc = load_template("doubling-loop")
    assert [n.op for n in doc.nodes].count("mul") == 5
    res, _ = run_template("doubling-loop")
    close(res.values["y"], 32.0)
    close(res.leaf_grads["x"], 32.0)
    close(res.node_grads["y1"], 16.0)


def _torch_branch_on_sign(value):
    x = torch.tensor(value, requires_grad=True)
    y = x if x.item() > 0 else x * x
    y.backward()
    return y, x.grad


def test_branch_on_sign_takes_the_else_branch():
    res, _ = run_template("branch-on-sign")
    y, grad = _torch_branch_on_sign(-2.0)
    close(res.values["y"], 4.0)
    close(res.leaf_grads["x"], -4.0)
    close(res.values["y"], y)
    close(res.leaf_grads["x"], grad)
    assert "sq-y-else" in res.edge_grads
    assert "x-y-then" not in res.edge_grads  # the branch not taken carries nothing


def test_branch_on_sign_with_positive_x_skips_the_else_branch():
    doc = load_template("branch-on-sign")
    doc.node("x").params["value"] = 3.0
    res, records = run_records(doc, "backward")
    assert res.status == "ok"
    y, grad = _torch_branch_on_sign(3.0)
    close(res.values["y"], y)
    close(res.leaf_grads["x"], grad)
    assert res.skipped == ["sq"]
    assert "sq-y-else" not in res.edge_grads and "x-y-then" in res.edge_grads


def test_classifier_cross_entropy_against_torch():
    doc = load_template("classifier-cross-entropy")
    res, _ = run_template("classifier-cross-entropy")
    x = torch_leaf(res, "x", requires_grad=False)
    target = torch.tensor(npy(res.values["target"]))
    assert x.shape == (3, 4) and target.dtype == torch.int64
    model = torch_linear(doc, "model", 4)
    logits = model(x)
    close(res.values["model"], logits)
    loss = TF.cross_entropy(logits, target)
    loss.backward()
    close(res.values["loss"], loss)
    assert tuple(res.leaf_grads["model.weight"].shape) == (2, 4)
    assert tuple(res.leaf_grads["model.bias"].shape) == (2,)
    close(res.leaf_grads["model.weight"], model.weight.grad)
    close(res.leaf_grads["model.bias"], model.bias.grad)
    assert set(res.leaf_grads) == {"model.weight", "model.bias"}


def test_detach_stops_the_gradient():
    res, _ = run_template("detach-stops-gradient")
    close(res.values["z"], 4.0)
    close(res.values["L"], 16.0)
    assert not res.values["z"].requires_grad and not res.values["w"].requires_grad
    close(res.leaf_grads["x"], 4.0)  # only the direct path
    assert "y-z" not in res.edge_grads and "w" not in res.node_grads
    for detach in (True, False):
        x = torch.tensor(2.0, requires_grad=True)
        y = x**2
        z = y.detach() if detach else y
        (z * 3 + y).backward()
        if detach:
            close(res.leaf_grads["x"], x.grad)
        else:
            assert x.grad.item() == 16.0  # what the detach takes away


def test_square_of_a_sum():
    res, records = run_template("square-of-a-sum")
    close(res.values["a"], 5.0)
    close(res.values["z"], 25.0)
    close(res.leaf_grads["x"], 10.0)
    close(res.leaf_grads["y"], 10.0)
    close(res.node_grads["a"], 10.0)  # what retain_grad would keep
    assert ("z", "PowBackward0") in grad_fn_names(records)


def test_branch_square_or_negate_skips_the_else_branch():
    res, records = run_template("branch-square-or-negate")
    close(res.values["y"], 4.0)
    close(res.leaf_grads["x"], 4.0)
    assert res.skipped == ["negx"]
    (skip,) = [r for r in records if r["kind"] == "skipped"]
    assert skip["node"] == "negx" and "did not run" in skip["reason"]
    assert all(node != "negx" for node, _ in grad_fn_names(records))


def test_mlp_mse_against_torch():
    doc = load_template("mlp-mse")
    res, _ = run_template("mlp-mse")
    X = torch_leaf(res, "X", requires_grad=False)
    target = torch_leaf(res, "target", requires_grad=False)
    assert X.shape == (16, 10) and target.shape == (16, 1)
    layer1, layer2 = torch_linear(doc, "layer1", 10), torch_linear(doc, "layer2", 32)
    pred = layer2(torch.relu(layer1(X)))
    loss = ((pred - target) ** 2).mean()
    loss.backward()
    close(res.values["layer2"], pred)
    close(res.values["loss"], loss)
    close(res.values["loss"], TF.mse_loss(pred, target))
    shapes = {
        "layer1.weight": (32, 10),
        "layer1.bias": (32,),
        "layer2.weight": (1, 32),
        "layer2.bias": (1,),
    }
    assert {k: tuple(v.shape) for k, v in res.leaf_grads.items()} == shapes
    for layer, name in ((layer1, "layer1"), (layer2, "layer2")):
        close(res.leaf_grads[f"{name}.weight"], layer.weight.grad)
        close(res.leaf_grads[f"{name}.bias"], layer.bias.grad)


def test_detached_encoder_gets_no_gradient():
    doc = load_template("detached-encoder")
    res, _ = run_template("detached-encoder")
    assert set(res.leaf_grads) == {"decoder.weight", "decoder.bias"}
    x = torch_leaf(res, "x", requires_grad=False)
    encoder, decoder = torch_linear(doc, "encoder", 3), torch_linear(doc, "decoder", 5)
    loss = TF.mse_loss(decoder(encoder(x).detach()), torch_leaf(res, "target", False))
    loss.backward()
    assert encoder.weight.grad is None and encoder.bias.grad is None
    close(res.values["loss"], loss)
    close(res.leaf_grads["decoder.weight"], decoder.weight.grad)
    close(res.leaf_grads["decoder.bias"], decoder.bias.grad)


# -- the other templates ---------------------------------------------------------------------------
def test_two_paths_add_up():
    res, _ = run_template("two-paths-add-up")
    close(res.values["L"], 24.0)
    close(res.edge_grads["h-u"], 6.0)
    close(res.edge_grads["h-v"], 5.0)
    close(res.node_grads["h"], 11.0)
    close(res.leaf_grads["x"], 33.0)


def test_shared_weight():
    res, _ = run_template("shared-weight")
    close(res.values["h3"], 1.0)
    for edge in ("w-h1", "w-h2", "w-h3"):
        close(res.edge_grads[edge], 2.0)
    close(res.leaf_grads["w"], 6.0)
    assert set(res.leaf_grads) == {"w"}  # x is data


def test_broadcast_sums_the_gradient_back():
    res, _ = run_template("broadcast-sum-back")
    X = torch.arange(6.0).reshape(2, 3)
    w = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
    L = (X * w).sum()
    L.backward()
    close(res.values["X"], X)
    close(res.values["L"], 34.0)
    close(res.leaf_grads["w"], [3.0, 5.0, 7.0])
    close(res.leaf_grads["w"], w.grad)
    assert tuple(res.node_grads["y"].shape) == (2, 3)


def test_softmax_expected_value_against_torch():
    res, _ = run_template("softmax-expected-value")
    logits = torch.tensor([2.0, 1.0, 0.1], requires_grad=True)
    v = torch.tensor([0.0, 1.0, 2.0])
    p = torch.softmax(logits, dim=-1)
    E = (p * v).sum()
    E.backward()
    close(res.values["p"], p)
    close(res.values["E"], E)
    close(res.leaf_grads["logits"], logits.grad)
    close(res.leaf_grads["logits"], p * (v - E))


# -- the loader ------------------------------------------------------------------------------------
def test_list_templates_puts_the_texts_first():
    listed = list_templates()
    assert [t["id"] for t in listed][: len(TEXT_EXAMPLES)] == TEXT_EXAMPLES
    assert len(listed) == len(list(FOLDER.glob("*.json"))) >= 14
    for entry in listed:
        assert set(entry) == {"id", "name", "description"}
        assert entry["name"] == load_template(entry["id"]).name
    assert listed == list_templates()  # stable


def test_load_template_returns_a_document():
    doc = load_template("square-of-a-sum")
    assert isinstance(doc, GraphDocument)
    doc.nodes.clear()  # a fresh copy each time
    assert load_template("square-of-a-sum").nodes


@pytest.mark.parametrize(
    "bad",
    [
        "../secrets",
        "..",
        "/etc/passwd",
        "templates/quadratic",
        "quadratic.json",
        "Quadratic",
        "quadratic\n",
        "",
        "no-such-template",
        "a" * 65,
        None,
    ],
)
def test_load_template_rejects_unknown_ids(bad):
    with pytest.raises(KeyError):
        load_template(bad)


def test_load_template_never_leaves_its_folder(tmp_path, monkeypatch):
    import backend.graph.document.templates as templates

    inner = tmp_path / "templates"
    inner.mkdir()
    (tmp_path / "secrets.json").write_text(json.dumps({"name": "secret"}))
    monkeypatch.setattr(templates, "FOLDER", inner)
    with pytest.raises(KeyError):
        templates.load_template("../secrets")
    assert templates.list_templates() == []
