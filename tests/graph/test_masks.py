"""masked_fill's fill value as text (-inf included: JSON has no number for it), and tril/triu,
against PyTorch; a fill value that is no number is a problem at its param."""

import numpy as np
import torch

from backend.graph import parse, run, validate
from backend.graph.export import to_python
from backend.graph.importing.importer import from_python


def _doc(value, op="masked_fill"):
    nodes = [
        {
            "id": "x",
            "op": "tensor",
            "params": {"value": [[1.0, 2.0], [3.0, 4.0]], "requires_grad": True},
        },
        {
            "id": "m",
            "op": "tensor",
            "params": {"value": [[False, True], [False, False]], "dtype": "bool"},
        },
        {"id": "f", "op": op, "params": {"value": value} if op == "masked_fill" else {}},
        {"id": "s", "op": "softmax", "params": {"dim": -1}},
        {"id": "w", "op": "tensor", "params": {"value": [[1.0, -2.0], [0.5, 3.0]]}},
        {"id": "p", "op": "mul", "params": {}},
        {"id": "L", "op": "sum", "params": {}},
    ]
    edges = [
        {"id": "e1", "source": "x", "target": "f", "targetPort": "input"},
        {"id": "e3", "source": "f", "target": "s", "targetPort": "input"},
        {"id": "e4", "source": "s", "target": "p", "targetPort": "input"},
        {"id": "e5", "source": "w", "target": "p", "targetPort": "other"},
        {"id": "e6", "source": "p", "target": "L", "targetPort": "input"},
    ]
    if op == "masked_fill":
        edges.append({"id": "e2", "source": "m", "target": "f", "targetPort": "mask"})
    else:
        nodes.pop(1)
    return parse(
        {"format": "wiregrad.graph", "version": 1, "nodes": nodes, "edges": edges, "target": "L"}
    )


def _torch(fill):
    x = torch.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)
    m = torch.tensor([[False, True], [False, False]])
    w = torch.tensor([[1.0, -2.0], [0.5, 3.0]])
    loss = (torch.softmax(fill(x, m), dim=-1) * w).sum()
    loss.backward()
    return loss.item(), x.grad.numpy()


def test_minus_infinity_fills_as_in_pytorch_and_survives_code():
    doc = _doc("-inf")
    res = run(doc, "backward")
    loss, grad = _torch(lambda x, m: x.masked_fill(m, float("-inf")))
    np.testing.assert_allclose(res.values["L"].item(), loss, rtol=1e-6)
    np.testing.assert_allclose(res.leaf_grads["x"].numpy(), grad, rtol=1e-6)
    code = to_python(doc, flavor="torch")
    assert 'x.masked_fill(m, float("-inf"))' in code
    back = from_python(code)
    (f,) = [n for n in back.nodes if n.op == "masked_fill"]
    assert f.params["value"] == "-inf"


def test_a_fill_value_that_is_no_number_is_a_problem_at_its_param():
    problems = validate(_doc("minus infinity"))
    assert [(p.node, p.param) for p in problems] == [("f", "value")]
    assert "is not a number" in problems[0].message


def test_tril_and_triu_as_in_pytorch():
    for op in ("tril", "triu"):
        res = run(_doc(None, op), "backward")
        loss, grad = _torch(lambda x, m, op=op: getattr(torch, op)(x))
        np.testing.assert_allclose(res.values["L"].item(), loss, rtol=1e-6)
        np.testing.assert_allclose(res.leaf_grads["x"].numpy(), grad, rtol=1e-6)
