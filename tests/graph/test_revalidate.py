"""Validating a document again after an edit (validate.py, "validating again after an edit"):
a document that differs from a recent one without problems only in some params is checked
only where the edit reaches, and must say exactly what validating it from nothing says."""

import importlib

import numpy as np
import pytest
from _docs import doc, edge, node, tensor

from backend.graph.document.validate import validate
from backend.graph.limits import Limits

# the module (backend.graph's `validate` is the function)
validation = importlib.import_module("backend.graph.document.validate")


def graph(x=None, w_shape=(3, 4), scalar=2.0, dim=None, target="loss", n_tail=30):
    """x (a literal, 2x3 unless given) @ w, then a chain of elementwise ops, a mul by a scalar
    param, and a sum over `dim`: a leaf edit that changes a shape breaks the matmul."""
    x = [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]] if x is None else x
    nodes = [
        tensor("x", value=x, requires_grad=True),
        tensor("w", list(w_shape), init="randn", seed=0, requires_grad=True),
        node("y", "matmul"),
        node("h", "tanh"),
    ]
    edges = [edge("x-y", "x", "y"), edge("w-y", "w", "y", "other"), edge("y-h", "y", "h")]
    prev = "h"
    for i in range(n_tail):
        nid = f"t{i}"
        nodes.append(node(nid, ("sigmoid", "sin", "relu")[i % 3]))
        edges.append(edge(f"{prev}-{nid}", prev, nid))
        prev = nid
    nodes.append(node("half", "mul", scalar=scalar))
    edges.append(edge(f"{prev}-half", prev, "half"))
    nodes.append(node("loss", "sum", dim=dim))
    edges.append(edge("half-loss", "half", "loss"))
    return doc(nodes, edges, target=target)


def from_nothing(d, limits=None):
    """What validating `d` says with nothing remembered."""
    saved = list(validation._VALID)
    validation._VALID.clear()
    try:
        return validate(d) if limits is None else validate(d, limits)
    finally:
        validation._VALID[:] = saved


@pytest.fixture
def dry_runs(monkeypatch):
    """The ids of the nodes each validation dry-runs."""
    seen = []
    real = validation._dry_run_node

    def counting(ctx, n, edges, meta, problems):
        seen.append(n.id)
        return real(ctx, n, edges, meta, problems)

    monkeypatch.setattr(validation, "_dry_run_node", counting)
    validation._VALID.clear()
    return seen


def said(problems):
    return [p.to_dict() for p in problems]


def test_an_edited_leaf_is_checked_with_what_depends_on_it_only(dry_runs):
    assert validate(graph()) == []
    assert len(dry_runs) == 36  # every node, the first time
    dry_runs.clear()
    assert validate(graph(scalar=3.0)) == []
    assert dry_runs == ["half", "loss"]  # the edited node and what it feeds
    dry_runs.clear()
    assert validate(graph(x=[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])) == []
    assert len(dry_runs) == 35  # all but w
    dry_runs.clear()
    assert validate(graph(x=[[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]])) == []  # no edit at all
    assert dry_runs == []


def test_a_shape_an_edit_breaks_is_reported_as_from_nothing(dry_runs):
    assert validate(graph()) == []
    broken = graph(x=[[1.0, 2.0], [3.0, 4.0]])  # 2x2 @ 3x4
    problems = validate(broken)
    assert said(problems) == said(from_nothing(broken))
    assert problems[0].node == "y" and "cannot be multiplied (2x2 and 3x4)" in problems[0].message
    # a document with problems is not remembered: the one before it still is
    dry_runs.clear()
    assert validate(graph(scalar=5.0)) == [] and dry_runs == ["half", "loss"]


def test_a_dim_out_of_range_after_an_edit(dry_runs):
    assert validate(graph(dim=1)) == []
    edited = graph(dim=2)
    assert said(validate(edited)) == said(from_nothing(edited))
    assert "Dimension out of range" in validate(edited)[0].message


@pytest.mark.parametrize(
    "edited",
    [
        lambda: graph(scalar="two"),  # a param of the wrong type: the whole validation
        lambda: graph(target="nowhere"),
        lambda: graph(scalar=None),  # mul with neither `other` nor a scalar
    ],
)
def test_what_the_structural_checks_report_is_reported_in_full(edited):
    validation._VALID.clear()
    assert validate(graph()) == []
    d = edited()
    problems = validate(d)
    assert problems and said(problems) == said(from_nothing(d))


def test_other_limits_validate_from_nothing():
    validation._VALID.clear()
    assert validate(graph()) == []
    tight = Limits(max_elements=5)
    d = graph(scalar=3.0)
    problems = validate(d, tight)
    assert problems and said(problems) == said(from_nothing(d, tight))


def test_an_edit_made_in_place_is_noticed(dry_runs):
    d = graph()
    assert validate(d) == []
    d.nodes[0].params["value"] = [[1.0, 2.0], [3.0, 4.0]]
    assert said(validate(d)) == said(from_nothing(d))
    assert validate(d)[0].node == "y"


def test_many_random_edits_say_what_validating_from_nothing_says(dry_runs):
    """Leaf values of random shapes, scalars, dims and w's shape, one edit after another."""
    rng = np.random.default_rng(0)
    partly = with_problems = 0
    for _ in range(60):
        rows, cols = int(rng.integers(1, 4)), int(rng.choice([3, 3, 3, 2]))
        kwargs = {
            "x": rng.normal(size=(rows, cols)).round(2).tolist(),
            "scalar": float(rng.normal()),
            "dim": [None, 0, 1, 2, -1][int(rng.integers(5))],
            "w_shape": [(3, 4), (3, 4), (2, 4)][int(rng.integers(3))],
        }
        d = graph(**kwargs)
        dry_runs.clear()
        problems = validate(d)
        partly += 0 < len(dry_runs) < 36
        with_problems += bool(problems)
        assert said(problems) == said(from_nothing(d)), kwargs
    assert partly > 10 and with_problems > 10  # both ways, many times
