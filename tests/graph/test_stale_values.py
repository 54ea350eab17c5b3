"""Trained values of an earlier size (backend/graph/document/stale.py): a layer trained, written
back and then resized is a validation problem at the stale param, with the code `stale_values` and
PyTorch's own words for loading a state dict of the wrong size; taking the values out (what
the editor's reset does) makes the graph run again with fresh values of the new size."""

import re

import pytest
import torch

from backend.graph import parse, run, validate
from backend.graph.document.stale import STALE_VALUES, shape_of
from backend.graph.document.templates import load_template
from backend.graph.running.trainer import Trainer


def trained_xor():
    doc = load_template("mlp-xor")
    doc.training = doc.training.model_copy(update={"steps": 5}) if doc.training else None
    tr = Trainer(doc, {"steps": 5, "loss": "loss"})
    assert tr.run() == "ok"
    return tr.written_back().model_dump(mode="json")


def edit(doc, node_id, **params):
    for n in doc["nodes"]:
        if n["id"] == node_id:
            n["params"].update(params)
    return parse(doc)


def torch_message(name, stored, now):
    """PyTorch's load_state_dict words for a param of shape `stored` into one of shape `now`."""
    *modules, param = name.split(".")
    model = torch.nn.Module()
    target = model
    for module in modules:  # nested: block1.layer1.weight
        inner = torch.nn.Module()
        target.add_module(module, inner)
        target = inner
    target.register_parameter(param, torch.nn.Parameter(torch.zeros(now)))
    with pytest.raises(RuntimeError) as err:
        model.load_state_dict({name: torch.zeros(stored)})
    return re.search(r"size mismatch for .*", str(err.value)).group(0)


def test_out_features_changed_after_training_is_a_stale_values_problem():
    doc = trained_xor()
    problems = validate(edit(doc, "layer1", out_features=4))
    stale = [p for p in problems if p.code == STALE_VALUES]
    by = {(p.node, p.param): p.message for p in stale}
    # layer1's own values, and layer2's weight, whose input is narrower now
    assert set(by) == {("layer1", "weight"), ("layer1", "bias_value"), ("layer2", "weight")}
    assert by["layer1", "weight"] == torch_message("layer1.weight", (8, 2), (4, 2))
    assert by["layer1", "bias_value"] == torch_message("layer1.bias", (8,), (4,))
    assert by["layer2", "weight"] == torch_message("layer2.weight", (1, 8), (1, 4))
    assert problems == stale  # nothing else: the graph after them is checked with fresh values
    assert stale[0].to_dict()["code"] == STALE_VALUES


def test_a_size_change_that_would_broadcast_silently_is_caught():
    doc = trained_xor()  # layer2's (1, 8) weight would fill a (3, 8) layer with equal rows
    problems = validate(edit(doc, "layer2", out_features=3))
    assert {(p.node, p.param, p.code) for p in problems} >= {
        ("layer2", "weight", STALE_VALUES),
        ("layer2", "bias_value", STALE_VALUES),
    }


def test_resetting_the_stale_values_runs_with_fresh_ones_of_the_new_size():
    doc = trained_xor()
    for n in doc["nodes"]:
        if n["id"] in ("layer1", "layer2"):
            n["params"].pop("weight"), n["params"].pop("bias_value")
    fresh = edit(doc, "layer1", out_features=4)
    assert validate(fresh) == []
    res = run(fresh, "backward", target="loss")
    assert res.status == "ok"
    assert tuple(res.values["layer1"].shape) == (120, 4)


def test_unchanged_trained_values_and_untrained_layers_are_fine():
    doc = trained_xor()
    assert validate(parse(doc)) == []
    plain = load_template("mlp-xor").model_dump(mode="json")
    assert validate(edit(plain, "layer1", out_features=5)) == []


def test_a_sources_value_wins_over_its_shape_and_is_never_stale():
    """A parameter's shape is used only when it has no value (docs/graph-format.md): values
    typed (or trained) of another size than a shape set before are what the person meant."""
    doc = {
        "nodes": [
            {"id": "w", "op": "parameter", "params": {"shape": [3, 2], "init": "randn"}},
            {"id": "s", "op": "sum", "params": {}},
        ],
        "edges": [
            {"id": "e", "source": "w", "sourcePort": "out", "target": "s", "targetPort": "input"}
        ],
    }
    assert validate(parse(doc)) == []
    doc["nodes"][0]["params"]["value"] = [[0.5, 0.5]] * 4  # four rows against shape [3, 2]
    assert validate(parse(doc)) == []
    res = run(parse(doc), "forward")
    assert res.values["w"].shape == (4, 2)


def test_shape_of_nested_lists():
    assert shape_of(2.0) == ()
    assert shape_of([[1, 2], [3, 4], [5, 6]]) == (3, 2)
    assert shape_of([]) == (0,)
    assert shape_of([[1, 2], [3]]) is None  # ragged: the param check reports it


def test_a_module_instances_trained_state_of_an_old_size_is_stale_at_its_inner_layer():
    """The editor's "Make module" after training: the definition fresh, the trained weights in
    the instance's state; fed three features, that state is stale under its PyTorch name."""
    doc = {
        "version": 2,
        "nodes": [
            {"id": "x", "op": "tensor", "params": {"shape": [4, 3]}, "position": {"x": 0, "y": 0}},
            {
                "id": "block1",
                "op": "module",
                "params": {"module": "Block", "state": {"layer1": {"weight": [[1.0, 2.0]] * 8}}},
                "position": {"x": 200, "y": 0},
            },
        ],
        "edges": [
            {"id": "e", "source": "x", "sourcePort": "out", "target": "block1", "targetPort": "inp"}
        ],
        "modules": [
            {
                "name": "Block",
                "nodes": [
                    {"id": "inp", "op": "module_input", "params": {}, "position": {"x": 0, "y": 0}},
                    {
                        "id": "layer1",
                        "op": "linear",
                        "params": {"out_features": 8},
                        "position": {"x": 200, "y": 0},
                    },
                    {
                        "id": "out",
                        "op": "module_output",
                        "params": {},
                        "position": {"x": 400, "y": 0},
                    },
                ],
                "edges": [
                    {
                        "id": "a",
                        "source": "inp",
                        "sourcePort": "out",
                        "target": "layer1",
                        "targetPort": "input",
                    },
                    {
                        "id": "b",
                        "source": "layer1",
                        "sourcePort": "out",
                        "target": "out",
                        "targetPort": "input",
                    },
                ],
                "inputs": ["inp"],
                "outputs": ["out"],
            }
        ],
    }
    problems = validate(parse(doc))
    assert [(p.node, p.param, p.code) for p in problems] == [
        ("block1/layer1", "weight", STALE_VALUES)
    ]
    assert problems[0].message == torch_message("block1.layer1.weight", (8, 2), (8, 3))
    del doc["nodes"][1]["params"]["state"]  # the editor's reset at the instance
    assert validate(parse(doc)) == []
    assert run(parse(doc), "forward").status == "ok"
