"""The executor's hot loops in C (backend/graph/_observe.c: the uncached forward loop and the watch
on the backward pass) against their Python versions (forward_paths' loop, executor._Run._observer,
executor._lined_up): on every template, random graphs (shared nodes, broadcasting, leaves with
and without grad, detach, composites), teaching runs (a second, quiet backward pass; .grad kept
from an earlier run), a cancelled run and the nodes the C loop hands back to Python (an op of
two engine nodes, an op that fails or gives no tensor), both give the same records and the same
gradients. The Python versions are what a machine without a C
compiler runs, and what the C was written to match; test_executor.py holds whichever is built
to PyTorch's numbers."""

import dataclasses
import threading

import numpy as np
import pytest
from _docs import doc, edge, long_chain, node, tensor

import engine as eg
from backend.graph import registry, run, run_records
from backend.graph.document.templates import list_templates, load_template
from backend.graph.running import executor, forward_paths
from backend.graph.running.executor import GRAD
from backend.server import fastjson
from engine.autograd.graph import accumulator_of


def test_the_observer_is_built():
    # `pip install -e .` builds it (setup.py); a machine like CI's has a C compiler, and the
    # executor's speed target counts on it
    assert executor._observe is not None


@pytest.fixture
def python_observer(monkeypatch):
    """Runs inside this fixture's `use()` take the Python closure."""

    def use(fn, *args, **kwargs):
        with monkeypatch.context() as m:
            m.setattr(executor, "_observe", None)
            return fn(*args, **kwargs)

    return use


def as_json(records):
    return fastjson.loads(fastjson.dumps(records))


def same_arrays(a, b):
    assert a.keys() == b.keys()
    for k in a:
        np.testing.assert_array_equal(a[k].numpy(), b[k].numpy(), err_msg=str(k))


def assert_same_runs(python_observer, d, **kwargs):
    res_c, rec_c = run_records(d, "backward", **kwargs)
    res_py, rec_py = python_observer(run_records, d, "backward", **kwargs)
    assert res_c.status == res_py.status, (res_c.error, res_py.error)
    assert as_json(rec_c) == as_json(rec_py)
    same_arrays(res_c.edge_grads, res_py.edge_grads)
    same_arrays(res_c.node_grads, res_py.node_grads)
    same_arrays(res_c.leaf_grads, res_py.leaf_grads)
    return res_c, rec_c


def backward_templates():
    ids = []
    for info in list_templates():
        d = load_template(info["id"])
        if run_records(d, "backward")[0].status == "ok":
            ids.append(info["id"])
    return ids


@pytest.mark.parametrize("template_id", backward_templates())
def test_every_template_records_the_same_gradients(python_observer, template_id):
    res, records = assert_same_runs(python_observer, load_template(template_id))
    assert res.edge_grads and any(r["kind"] == "edge_grad" for r in records)


def random_graph(seed, n=60):
    """Shared nodes (several consumers), broadcasting leaves, a leaf without grad, a detach, a
    `linear` (a composite: its edges get alias nodes) and a scalar at the end."""
    rng = np.random.default_rng(seed)
    nodes = [
        tensor("w", [4, 4], init="randn", seed=seed, requires_grad=True),
        tensor("row", [1, 4], init="randn", seed=seed + 1, requires_grad=True),
        tensor("col", [4, 1], init="randn", seed=seed + 2, requires_grad=True),
        tensor("k", [4, 4], init="rand", seed=seed + 3),  # needs no gradient
    ]
    edges, ids = [], ["w", "row", "col", "k"]
    for i in range(n):
        nid, prev = f"n{i}", ids[-1]
        kind = rng.integers(6)
        if kind == 0:
            nodes.append(node(nid, str(rng.choice(["tanh", "sigmoid", "sin", "relu", "exp"]))))
        elif kind == 1 and i % 7 == 3:
            nodes.append(node(nid, "detach"))
        elif kind == 1:
            nodes.append(node(nid, "linear", out_features=4, seed=i))
        else:
            nodes.append(node(nid, str(rng.choice(["add", "sub", "mul", "maximum"]))))
            other = ids[int(rng.integers(len(ids)))]
            edges.append(edge(f"o{i}", other, nid, "other"))
        edges.append(edge(f"e{i}", prev, nid))
        ids.append(nid)
    nodes.append(node("loss", "mean"))
    edges.append(edge("el", ids[-1], "loss"))
    return doc(nodes, edges, target="loss")


@pytest.mark.parametrize("seed", range(6))
def test_random_graphs_record_the_same_gradients(python_observer, seed):
    res, _ = assert_same_runs(python_observer, random_graph(seed))
    assert res.status == "ok"
    # where a node feeds several consumers, its edges' gradients sum to its gradient (an edge
    # into a detach carries none)
    d, shared = random_graph(seed), 0
    for nid, g in res.node_grads.items():
        out = [e.id for e in d.edges if e.source == nid and e.id in res.edge_grads]
        parts = [res.edge_grads[e] for e in out]
        if len(parts) >= 2:
            shared += 1
            np.testing.assert_allclose(
                sum(p.numpy() for p in parts),
                g.numpy(),
                rtol=1e-5,
                atol=1e-7 * float(np.abs(g.numpy()).max()),
            )
    assert shared


def test_teaching_runs_record_the_same(python_observer):
    d = load_template("backward-twice")
    # a second pass with retain_graph: quiet (no edge or node gradient twice), .grad doubled
    assert_same_runs(python_observer, d, backward_twice=True, retain_graph=True)
    # without it: PyTorch's error, after the first pass's records
    res, _ = assert_same_runs(python_observer, d, backward_twice=True)
    assert res.status == "error" and "second time" in res.error["message"]
    # .grad kept from an earlier run (no zero_grad)
    first = run(random_graph(1), "backward")
    assert_same_runs(python_observer, random_graph(1), start_grads=first.grads)


@pytest.mark.parametrize("observer", ["c", "python"])
def test_a_backward_pass_is_cancelled_at_the_observers_checkpoints(
    python_observer, monkeypatch, observer
):
    # the first gradients go out early, whatever the clock did in the forward pass (see
    # test_executor's small_batches)
    monkeypatch.setattr(executor, "FLUSH_FIRST", 64)
    monkeypatch.setattr(executor, "FLUSH_RECORDS", 64)
    d, cancel, got = long_chain(300), threading.Event(), []

    def emit(rec):
        got.append(rec)
        if rec["kind"] == "grads":
            cancel.set()

    go = run if observer == "c" else (lambda *a, **k: python_observer(run, *a, **k))
    res = go(d, "backward", emit=emit, cancel=cancel)
    assert res.status == "cancelled"
    assert 0 < len(res.edge_grads) < len(d.edges)  # it stopped part way, at a checkpoint


# -- the Observer object itself -----------------------------------------------------------------
class Node:
    """Stands for an engine node: the observer only uses it as a dict key."""


def make_observer(watch, every=8, quiet=False, checkpoint=lambda: None):
    pending, node_grads, edge_grads = [], {}, {}
    obs = executor._observe.Observer(
        watch, pending, GRAD, checkpoint, every, node_grads, edge_grads, quiet
    )
    return obs, pending, node_grads, edge_grads


def test_observer_records_a_nodes_own_gradient_then_its_edges():
    n, other = Node(), Node()
    item = ("e1", "a", "m")
    watch = {n: ("m", 0, 1, "e1", item, "a", True, 0, "e0", ("e0", "b", "m"), "b", False)}
    obs, pending, node_grads, edge_grads = make_observer(watch)
    assert obs(other, ("x",), ["y"]) is None and pending == []  # not watched: nothing
    obs(n, ["g0", "g1"], ["gm"])  # the engine's tuple or list, either
    assert pending == [
        (GRAD, "m", "gm", None),
        (GRAD, item, "g1", None),
        (GRAD, "a", "g1", None),  # "a"'s one consumer: its gradient too
        (GRAD, ("e0", "b", "m"), "g0", None),
    ]
    assert node_grads == {"m": "gm", "a": "g1"} and edge_grads == {"e1": "g1", "e0": "g0"}
    pending.clear()
    obs(n, (None, "h1"), [None])  # no gradient along an edge: nothing recorded for it
    assert pending == [(GRAD, item, "h1", None), (GRAD, "a", "h1", None)]


def test_observer_checkpoints_every_few_watched_nodes_and_passes_on_what_they_raise():
    n, calls = Node(), []

    def checkpoint():
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt("stop")  # as Cancelled would

    obs, pending, _, _ = make_observer({n: ("m", 0)}, every=3, checkpoint=checkpoint)
    for _ in range(5):
        obs(n, (), ["g"])
        obs(Node(), (), ["g"])  # unwatched nodes do not count
    assert len(calls) == 1 and len(pending) == 5
    with pytest.raises(KeyboardInterrupt, match="stop"):
        obs(n, (), ["g"])
    assert len(pending) == 5  # the checkpoint came first


def test_a_quiet_observer_checkpoints_and_records_nothing():
    n, calls = Node(), []
    obs, pending, node_grads, _ = make_observer(
        {n: ("m", 0)}, every=1, quiet=True, checkpoint=lambda: calls.append(1)
    )
    obs(n, (), ["g"])
    assert calls == [1] and pending == [] and node_grads == {}


def test_observer_refuses_what_it_was_not_made_for():
    n = Node()
    obs, _, _, _ = make_observer({n: ("m", 0, "an edge of three", "e", "i")})
    with pytest.raises(TypeError, match="watch entry"):
        obs(n, (), ["g"])
    obs, _, _, _ = make_observer({n: (None, 0, 5, "e", "i", "s", False)})
    with pytest.raises(IndexError):
        obs(n, ("only one",), [])
    with pytest.raises(TypeError, match="exactly 3 arguments"):
        obs(n, ())
    with pytest.raises(ValueError, match="every"):
        executor._observe.Observer({}, [], GRAD, None, 0, {}, {}, False)
    with pytest.raises(TypeError):
        executor._observe.Observer([], [], GRAD, None, 1, {}, {}, False)  # watch: a dict


# -- lined_up: which edges an op's engine node sends gradients along ------------------------------
def lined_up_both(nf, inputs, watched, flat=None):
    """_observe.lined_up and executor._lined_up on the same arguments: the same answer."""
    got = executor._observe.lined_up(nf, inputs, watched, flat, accumulator_of)
    want = executor._lined_up(nf, inputs, watched, flat, accumulator_of)
    assert got == want
    return got


def w(pos):
    return (pos, f"e{pos}", (f"e{pos}", "s", "t"), "s", False)


def test_lined_up_in_c_says_what_the_python_says():
    leaf = eg.tensor([1.0, 2.0], requires_grad=True)
    const = eg.tensor([3.0, 4.0])
    made = leaf * 2.0
    both = (w(0), w(1))
    # every input takes part: all the watched edges, the same tuple
    assert lined_up_both((leaf * made).grad_fn.next_functions, [leaf, made], both) is both
    # an input that needs no gradient: its edge is left out
    assert lined_up_both((const * made).grad_fn.next_functions, [const, made], both) == (w(1),)
    # a node that does not take the inputs as they are (here: made from `leaf`, not `made`,
    # as an op that reshapes its input first would be)
    other = (leaf * 3.0).grad_fn
    assert lined_up_both(other.next_functions, [made], (w(0),)) is None
    # a node with fewer inputs than the edge's position
    ins = [leaf, const, const, leaf]
    assert lined_up_both(made.grad_fn.next_functions, ins, (w(0), w(3))) is None
    # variadic ports: edge k's input is flat[k]
    cat = eg.cat([made, const, leaf])
    flat = [made, const, leaf]
    got = lined_up_both(cat.grad_fn.next_functions, [flat], (w(0), w(1), w(2)), flat)
    assert got == (w(0), w(2))


def test_lined_up_refuses_what_it_was_not_made_for():
    made = eg.tensor([1.0], requires_grad=True) * 2.0
    nf = made.grad_fn.next_functions
    with pytest.raises(TypeError):
        executor._observe.lined_up(list(nf), [made], (w(0),), None, accumulator_of)
    with pytest.raises(IndexError):
        executor._observe.lined_up(nf, [made], (w(2),), None, accumulator_of)
    with pytest.raises(TypeError):
        executor._observe.lined_up(nf, [made], (w(0),), None)


# -- the forward loop: the nodes _observe.Forward hands back to Python ----------------------------
def with_tanh_run(monkeypatch, run_fn):
    """`tanh` nodes run `run_fn` (of a run's plans made from now on)."""
    spec = registry.REGISTRY["tanh"]
    monkeypatch.setitem(registry.REGISTRY, "tanh", dataclasses.replace(spec, run=run_fn))


def tanh_then_mul(tag):
    """x -> tanh -> mul (other: x) -> sum, with ids no other test's plan has."""
    x, t, m, s = (f"{tag}-{k}" for k in "xtms")
    nodes = [tensor(x, [3, 3], init="randn", seed=4, requires_grad=True), node(t, "tanh")]
    nodes += [node(m, "mul"), node(s, "sum")]
    edges = [edge(f"{tag}-e0", x, t), edge(f"{tag}-e1", t, m), edge(f"{tag}-e2", x, m, "other")]
    edges.append(edge(f"{tag}-e3", m, s))
    return doc(nodes, edges, target=s)


def test_an_op_of_two_engine_nodes_gets_aliases_in_c_as_in_python(python_observer, monkeypatch):
    # tanh's engine node then takes x*1, not x: its edge is watched through an alias instead
    with_tanh_run(monkeypatch, lambda ctx, ins, p: eg.tanh(ins[0] * 1.0))
    aliased, keep = [], forward_paths._keep_aliased
    monkeypatch.setattr(
        forward_paths, "_keep_aliased", lambda r, row, g: (aliased.append(row[0]), keep(r, row, g))
    )
    res, records = assert_same_runs(python_observer, tanh_then_mul("two-nodes"), validated=True)
    assert aliased == ["two-nodes-t", "two-nodes-t"]  # once in C, once in Python
    assert res.status == "ok" and "two-nodes-e0" in res.edge_grads
    x = res.values["two-nodes-x"].detach().numpy()
    np.testing.assert_allclose(  # d/dx sum(tanh(x) * x) = tanh(x) + x (1 - tanh(x)^2)
        res.leaf_grads["two-nodes-x"].numpy(), np.tanh(x) + x * (1 - np.tanh(x) ** 2), rtol=1e-5
    )


@pytest.mark.parametrize(
    "run_fn, kind, words",
    [
        (lambda ctx, ins, p: (_ for _ in ()).throw(ValueError("tanh broke")), "ValueError",
         "tanh broke"),
        (lambda ctx, ins, p: 3.0, "TypeError", "tanh gave no tensor"),
    ],
)  # fmt: skip
def test_an_op_that_fails_is_the_nodes_error_in_c_as_in_python(
    python_observer, monkeypatch, run_fn, kind, words
):
    with_tanh_run(monkeypatch, run_fn)
    tag = f"fails-{kind}"
    res, records = assert_same_runs(python_observer, tanh_then_mul(tag), validated=True)
    assert res.status == "error"
    assert res.error["node"] == f"{tag}-t" and res.error["type"] == kind
    assert words in res.error["message"]
    assert records[-1] == res.error  # after the records of the nodes before it
