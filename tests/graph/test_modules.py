"""Modules (composite nodes): a definition used as a node, unpacked into a flat graph whose every
edge, inside the module and into its ports, carries PyTorch's value and gradient; instances
with their own parameters; problems named where they are."""

import numpy as np
import pydantic
import pytest
import torch
from _docs import affine_module, edge, node, tensor

from backend.graph import parse, run_records, validate
from backend.graph.document.modules import ModuleProblems, flatten, write_state


def arr(t):
    return t.detach().numpy()


def two_blocks(**second):
    """in -> Affine (l1) -> Affine (l2) -> sum: two instances of one definition."""
    return parse(
        {
            "version": 2,
            "modules": [affine_module()],
            "nodes": [
                tensor("in", value=[0.5, -1.0, 2.0], requires_grad=True),
                node("l1", "module", module="Affine"),
                node("l2", "module", module="Affine", **second),
                node("s", "sum"),
            ],
            "edges": [
                edge("e_in", "in", "l1", "x"),
                edge("e_mid", "l1", "l2", "x", source_port="y"),
                edge("e_out", "l2", "s", source_port="y"),
            ],
            "target": "s",
        }
    )


def test_instances_unpack_under_their_own_ids():
    flat = flatten(two_blocks(seed=7))
    ids = [n.id for n in flat.nodes]
    assert "l1/w" in ids and "l2/r" in ids and "l1" not in ids
    edges = {e.id: (e.source, e.sourcePort, e.target, e.targetPort) for e in flat.edges}
    assert edges["e_in"] == ("in", "out", "l1/x", "input")
    assert edges["e_mid"] == ("l1/y", "out", "l2/x", "input")
    assert edges["e_out"] == ("l2/y", "out", "s", "input")
    assert edges["l2/wm"] == ("l2/w", "out", "l2/m", "other")
    seeds = {n.id: n.params.get("seed") for n in flat.nodes if n.op == "parameter"}
    assert seeds == {"l1/w": 1, "l1/b": 2, "l2/w": 8, "l2/b": 9}  # l2's seed 7 added
    assert validate(flat) == []


def test_every_edge_inside_and_into_a_module_has_pytorchs_gradient():
    res, _ = run_records(flatten(two_blocks(seed=7)), "backward", "s")
    assert res.status == "ok", res.error
    v = {k: torch.tensor(arr(res.values[k]), dtype=torch.float64) for k in res.values}
    x = v["in"].clone().requires_grad_()
    w1, b1, w2, b2 = (v[k].clone().requires_grad_() for k in ("l1/w", "l1/b", "l2/w", "l2/b"))
    assert not torch.equal(w1, w2)  # each instance has its own parameters
    m1 = x * w1
    m1.retain_grad()
    h = torch.relu(m1 + b1)
    h.retain_grad()
    m2 = h * w2
    m2.retain_grad()
    out = torch.relu(m2 + b2).sum()
    out.backward()
    grads = res.edge_grads
    close = np.testing.assert_allclose
    close(arr(grads["e_in"]), x.grad, rtol=1e-6)
    close(arr(grads["l1/xm"]), x.grad, rtol=1e-6)  # the input node passes the gradient on
    close(arr(grads["e_mid"]), h.grad, rtol=1e-6)
    close(arr(grads["l2/ma"]), m2.grad, rtol=1e-6)
    close(arr(grads["l1/ma"]), m1.grad, rtol=1e-6)
    close(arr(res.leaf_grads["l1/w"]), w1.grad, rtol=1e-6)
    close(arr(res.leaf_grads["l2/b"]), b2.grad, rtol=1e-6)


def test_state_replaces_one_instances_params_and_write_state_puts_it_there():
    d = two_blocks()
    write_state(d, "l2/w", {"value": [1.0, 2.0, 3.0]})
    assert d.node("l2").params["state"] == {"w": {"value": [1.0, 2.0, 3.0]}}
    res, _ = run_records(flatten(d), "forward")
    np.testing.assert_array_equal(arr(res.values["l2/w"]), [1.0, 2.0, 3.0])
    assert not np.array_equal(arr(res.values["l1/w"]), [1.0, 2.0, 3.0])
    write_state(d, "in", {"value": [0.0, 0.0, 0.0]})  # a top-level node: its own params
    assert d.node("in").params["value"] == [0.0, 0.0, 0.0]


def twice_module():
    """Twice: x -> Affine (f) -> Affine (g, seed 3) -> y, a module made of modules."""
    return {
        "name": "Twice",
        "nodes": [
            node("x", "module_input"),
            node("f", "module", module="Affine"),
            node("g", "module", module="Affine", seed=3),
            node("y", "module_output"),
        ],
        "edges": [
            edge("xf", "x", "f", "x"),
            edge("fg", "f", "g", "x", source_port="y"),
            edge("gy", "g", "y", source_port="y"),
        ],
        "inputs": ["x"],
        "outputs": ["y"],
    }


def test_modules_nest_and_paths_grow():
    outer = twice_module()
    d = parse(
        {
            "version": 2,
            "modules": [affine_module(), outer],
            "nodes": [
                tensor("in", value=[1.0, 2.0, 3.0]),
                node("t", "module", module="Twice", state={"g/b": {"value": [0.0, 0.0, 0.0]}}),
            ],
            "edges": [edge("e", "in", "t", "x")],
        }
    )
    flat = flatten(d)
    ids = {n.id for n in flat.nodes}
    assert {"t/f/w", "t/g/r", "t/x", "t/y"} <= ids
    assert flat.node("t/g/b").params["value"] == [0.0, 0.0, 0.0]
    assert flat.node("t/g/w").params["seed"] == 4
    assert validate(flat) == []


def _problems(d):
    with pytest.raises(ModuleProblems) as info:
        flatten(d)
    return [p.to_dict() for p in info.value.problems]


def test_unknown_module_unknown_port_and_recursion_are_named_where_they_are():
    d = two_blocks()
    d.nodes[1] = d.nodes[1].model_copy(update={"params": {"module": "Affin"}})
    assert _problems(d) == [
        {"message": "unknown module 'Affin' (defined: Affine)", "node": "l1", "param": "module"}
    ]
    d = two_blocks()
    d.edges[0] = d.edges[0].model_copy(update={"targetPort": "z"})
    assert _problems(d) == [{"message": "module Affine has no input 'z'", "edge": "e_in"}]
    looped = affine_module("Loop")
    looped["nodes"].append(node("self", "module", module="Loop"))
    d = parse({"version": 2, "modules": [looped], "nodes": [node("a", "module", module="Loop")]})
    assert _problems(d) == [
        {"message": "module Loop contains itself (through Loop → Loop)", "node": "a/self"}
    ]


def test_a_definition_whose_ports_are_not_its_port_nodes_is_refused():
    bad = affine_module()
    bad["inputs"] = ["w"]
    d = parse({"version": 2, "modules": [bad], "nodes": []})
    assert _problems(d) == [
        {"message": "module Affine: its input 'w' is not a module_input node inside it"}
    ]


def test_unpacking_past_the_node_limit_is_refused_not_built():
    defs = [affine_module("M0")]
    for i in range(1, 8):  # each level holds ten of the one below: 10**7 nodes if built
        defs.append(
            {
                "name": f"M{i}",
                "nodes": [node(f"n{k}", "module", module=f"M{i - 1}") for k in range(10)],
            }
        )
    d = parse({"version": 2, "modules": defs, "nodes": [node("top", "module", module="M7")]})
    problems = _problems_limited(d, 5000)
    assert problems and "more than 5,000 nodes" in problems[0]["message"]


def _problems_limited(d, n):
    with pytest.raises(ModuleProblems) as info:
        flatten(d, max_nodes=n)
    return [p.to_dict() for p in info.value.problems]


def test_old_documents_load_and_modules_need_version_2():
    assert parse({"nodes": []}).version == 1
    with pytest.raises(pydantic.ValidationError, match="modules need a document of version 2"):
        parse({"modules": [affine_module()], "nodes": []})
    d = parse({"nodes": [tensor("a", value=1.0)]})
    assert flatten(d) is d  # nothing to unpack: the same document, no copy


def test_validation_checks_the_flat_form_and_names_the_node_inside_the_module():
    assert validate(two_blocks()) == []
    d = two_blocks()
    bad = affine_module()
    bad["nodes"][1]["params"]["shape"] = [4]  # w of shape (4,) times x of shape (3,)
    d = parse({**d.model_dump(), "modules": [bad]})
    problems = [p.to_dict() for p in validate(d)]
    assert problems and {p.get("node") for p in problems} <= {"l1/m", "l2/m", "l1/a", "l2/a"}
    assert "must match the size of tensor b" in problems[0]["message"]  # PyTorch's words
    d = two_blocks()
    d.nodes[1] = d.nodes[1].model_copy(update={"params": {"module": "Nope"}})
    assert [p.node for p in validate(d)] == ["l1"]


def test_training_writes_each_instances_trained_values_into_its_own_state():
    from backend.graph.running.trainer import Trainer

    d = two_blocks(seed=7)
    d = parse(
        {
            **d.model_dump(),
            "nodes": [
                *[n.model_dump() for n in d.nodes],
                {"id": "loss", "op": "pow", "params": {"scalar": 2.0}},
            ],
            "edges": [*[e.model_dump() for e in d.edges], edge("e_loss", "s", "loss")],
            "training": {"loss": "loss", "optimizer": "sgd", "lr": 0.05, "steps": 20},
        }
    )
    tr = Trainer(d)
    first = tr.evaluate()
    assert tr.run() == "ok"
    assert tr.evaluate() < first
    back = tr.written_back()
    assert [n.id for n in back.nodes] == [n.id for n in d.nodes]  # still the two instances
    trained = tr.parameters()
    for inst in ("l1", "l2"):
        state = back.node(inst).params["state"]
        assert set(state) == {"w", "b"}
        np.testing.assert_allclose(state["w"]["value"], arr(trained[f"{inst}/w"]), rtol=1e-6)
    assert "state" not in d.node("l1").params  # the original is left as it was
    res, _ = run_records(back, "forward")  # the next run starts where the training ended
    assert res.values["loss"].item() == pytest.approx(tr.evaluate(), rel=1e-6)
