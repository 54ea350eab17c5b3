"""The executor against PyTorch: random DAGs whose every value, node gradient, edge gradient and
leaf gradient must equal torch's; the order of the records; `if`; failures, cancellation and
limits as records; the forward cache; summaries."""

import json
import threading

import numpy as np
import pytest
import torch
import torch.nn.functional as tF
from _docs import doc, edge, long_chain, node, tensor
from _numbers import close as _close
from _numbers import npy

import engine as eg
from backend.graph import ForwardCache, GraphInvalid, Limits, parse, run, run_records, validate
from backend.graph.running import executor, recorder
from backend.graph.running.records import expand_records
from backend.graph.running.summary import summarize
from backend.server import fastjson


def _as_lists(a):
    """A numpy array or scalar as nested lists of Python numbers, float32 values each written
    as its shortest decimal (as str() gives it)."""
    if a.dtype == np.float32:
        return np.vectorize(lambda v: float(str(np.float32(v))), otypes=[object])(a).tolist()
    return a.tolist()


def wire(obj):
    """`obj` as the page gets it, through the server's encoder (summaries keep previews as
    numpy arrays, which orjson writes): the same JSON as with every array nested lists of its
    values, and no NaN, which JSON lacks."""
    text = fastjson.dumps(obj)
    plain = json.dumps(obj, allow_nan=False, default=_as_lists)
    assert json.loads(text) == json.loads(plain)
    return json.loads(text)


GRAD_KINDS = ("edge_grad", "node_grad", "leaf_grad")


def close(a, b, rtol=1e-9, atol=1e-12):
    """float64 graphs against PyTorch: equal to the last bits."""
    _close(a, b, rtol, atol)


# -- random graphs, and the same computation in torch ---------------------------------------------
UNARY = ("exp", "tanh", "sigmoid", "sin", "cos", "neg", "relu", "abs", "log", "sqrt", "reciprocal")
BINARY = ("add", "sub", "mul", "div", "maximum", "minimum")
SHAPES = ((3, 4), (4,), (1, 4), (3, 1), (4, 3), ())


def torch_op(op, ins, p):
    """The op as PyTorch computes it (the oracle)."""
    if op in UNARY:
        return getattr(torch, op)(ins[0])
    if op in ("add", "sub", "mul", "div", "pow"):
        other = ins[1] if len(ins) > 1 else p["scalar"]
        return getattr(torch, op)(ins[0], other)
    if op in ("maximum", "minimum", "matmul"):
        return getattr(torch, op)(ins[0], ins[1])
    if op in ("sum", "mean"):
        d = p.get("dim")
        if d is None:
            return getattr(torch, op)(ins[0])
        return getattr(torch, op)(ins[0], dim=d, keepdim=p.get("keepdim", False))
    if op == "max":
        return torch.max(ins[0], dim=p["dim"], keepdim=p.get("keepdim", False)).values
    if op in ("softmax", "log_softmax"):
        return getattr(torch, op)(ins[0], dim=p["dim"])
    if op == "transpose":
        return ins[0].transpose(0, 1)
    raise AssertionError(op)


def _acceptable(op, ins, out):
    """Reject candidates where the oracle and the engine may differ for reasons of their own:
    non-finite or huge numbers, kinks hit exactly (relu and abs at 0), ties in max."""
    if not torch.isfinite(out).all() or out.abs().max() > 1e4:
        return False
    x = ins[0]
    if op in ("log", "sqrt") and not (x > 0.1).all():
        return False
    if op in ("div",) and len(ins) > 1 and not (ins[1].abs() > 0.2).all():
        return False
    if op == "reciprocal" and not (x.abs() > 0.2).all():
        return False
    if op in ("relu", "abs") and not (x.abs() > 1e-6).all():
        return False
    if op in ("maximum", "minimum"):
        a, b = torch.broadcast_tensors(ins[0], ins[1])
        if not ((a - b).abs() > 1e-6).all():
            return False
    return not (op == "max" and x.numel() != torch.unique(x).numel())


def random_graph(seed, n_ops=12):
    """A document and its node values (torch, float64, no grad) for a random DAG."""
    rng = np.random.default_rng(seed)
    nodes, edges, vals = [], [], {}

    def add_edge(src, dst, port):
        edges.append(edge(f"e{len(edges)}", src, dst, port))

    for i in range(int(rng.integers(2, 5))):
        shape = SHAPES[int(rng.integers(len(SHAPES)))]
        value = rng.uniform(-2, 2, size=shape)
        rg = bool(i < 2 or rng.random() < 0.7)  # the first two always require grad
        nodes.append(
            tensor(f"x{i}", value=value.tolist(), dtype="float64", requires_grad=rg, name=f"x{i}")
        )
        vals[f"x{i}"] = torch.tensor(value, dtype=torch.float64)

    k = 0
    while k < n_ops:
        ids = list(vals)
        op = str(rng.choice(UNARY + BINARY + ("scalar", "reduce", "softmax", "matmul")))
        a = ids[int(rng.integers(len(ids)))]
        b = ids[int(rng.integers(len(ids)))]
        nid, p, ins, ports = f"n{k}", {}, [vals[a]], [(a, "input")]
        if op == "scalar":
            op = str(rng.choice(["add", "sub", "mul", "div", "pow"]))
            p["scalar"] = float(rng.choice([2.0, 3.0, -1.5, 0.5]))
            if op == "pow":
                p["scalar"] = float(rng.choice([2.0, 3.0]))
        elif op in BINARY:
            try:
                torch.broadcast_shapes(vals[a].shape, vals[b].shape)
            except RuntimeError:
                continue
            ins.append(vals[b])
            ports.append((b, "other"))
        elif op == "reduce":
            op = str(rng.choice(["sum", "mean", "max"]))
            nd = vals[a].ndim
            if nd == 0 and op == "max":
                continue
            if nd and (op == "max" or rng.random() < 0.6):
                p["dim"] = int(rng.integers(-nd, nd))
                p["keepdim"] = bool(rng.random() < 0.5)
        elif op == "softmax":
            if vals[a].ndim == 0:
                continue
            op = str(rng.choice(["softmax", "log_softmax"]))
            p["dim"] = int(rng.integers(-vals[a].ndim, vals[a].ndim))
        elif op == "matmul":
            va, vb = vals[a], vals[b]
            if va.ndim != 2 or vb.ndim != 2:
                continue
            if va.shape[1] != vb.shape[0]:
                if va.shape[1] != vb.shape[1]:
                    continue
                t = f"n{k}t"  # transpose b first
                tv = torch_op("transpose", [vb], {})
                nodes.append(node(t, "transpose"))
                add_edge(b, t, "input")
                vals[t] = tv
                vb, b = tv, t
            ins.append(vb)
            ports.append((b, "other"))
        out = torch_op(op, ins, p)
        if not _acceptable(op, ins, out):
            continue
        nodes.append(node(nid, op, **p))
        for src, port in ports:
            add_edge(src, nid, port)
        vals[nid] = out
        k += 1

    # every sink is summed, and the sums added: one scalar target that depends on every node
    sources = {e["source"] for e in edges}
    sinks = [n["id"] for n in nodes if n["id"] not in sources]
    total = None
    for j, s in enumerate(sinks):
        nodes.append(node(f"sum{j}", "sum"))
        add_edge(s, f"sum{j}", "input")
        if total is None:
            total = f"sum{j}"
        else:
            nodes.append(node(f"tot{j}", "add"))
            add_edge(total, f"tot{j}", "input")
            add_edge(f"sum{j}", f"tot{j}", "other")
            total = f"tot{j}"
    return doc(nodes, edges, target=total)


def torch_run(d):
    """Forward and backward of the document in torch: values (with .grad / retained grads)."""
    by_id = {n.id: n for n in d.nodes}
    incoming = {}
    for e in d.edges:
        incoming.setdefault(e.target, []).append(e)
    out = {}
    for n in d.nodes:  # the generator writes nodes in topological order
        if n.op == "tensor":
            t = torch.tensor(n.params["value"], dtype=torch.float64)
            out[n.id] = t.requires_grad_(n.params["requires_grad"])
            continue
        es = incoming[n.id]
        ins = [out[e.source] for port in ("input", "other") for e in es if e.targetPort == port]
        out[n.id] = torch_op(n.op, ins, by_id[n.id].params)
        if out[n.id].requires_grad:
            out[n.id].retain_grad()
    out[d.target].backward()
    return out


@pytest.mark.parametrize("seed", range(40))
def test_random_graph_against_torch(seed):
    d = random_graph(seed)
    assert validate(d) == []
    ref = torch_run(d)
    res, records = run_records(d, "backward")
    assert res.status == "ok", res.error
    assert res.target == d.target

    # every node's value
    assert set(res.values) == set(ref)
    for nid, t in ref.items():
        close(res.values[nid], t)

    # every node's total gradient: d target / d node
    needs_grad = {nid for nid, t in ref.items() if t.requires_grad}
    assert set(res.node_grads) == needs_grad
    for nid in needs_grad:
        close(res.node_grads[nid], ref[nid].grad)

    # every leaf's .grad
    leaves = {n.id for n in d.nodes if n.op == "tensor" and n.params["requires_grad"]}
    assert set(res.leaf_grads) == leaves
    for nid in leaves:
        close(res.leaf_grads[nid], ref[nid].grad)

    # each edge carries what its consumer sent back; a node's edges add up to its gradient
    grad_edges = {e.id for e in d.edges if ref[e.source].requires_grad}
    assert set(res.edge_grads) == grad_edges
    for nid in needs_grad - {d.target}:
        out_edges = [e.id for e in d.edges if e.source == nid]
        total = sum(npy(res.edge_grads[e]) for e in out_edges)
        close(total, res.node_grads[nid])

    check_record_order(d, records)
    check_records_match_result(res, records)


def check_record_order(d, records):
    kinds = [r["kind"] for r in records]
    first_grad = min(i for i, k in enumerate(kinds) if k in GRAD_KINDS)
    assert "value" not in kinds[first_grad:]  # every value before any gradient
    at = {}
    for i, r in enumerate(records):
        if r["kind"] in ("value", "node_grad"):
            at[(r["kind"], r["node"])] = i
        elif r["kind"] == "edge_grad":
            at[("edge_grad", r["edge"])] = i
    sources = {e.id: e.source for e in d.edges}
    for i, r in enumerate(records):
        if r["kind"] == "edge_grad":
            assert r["source"] == sources[r["edge"]]
            # the consumer's gradient is known before what it sends back along its input edges
            assert at[("node_grad", r["target"])] < i
            # ... and a producer's total comes after all its edges' gradients
            assert i < at[("node_grad", r["source"])]
    assert kinds.count("autograd") == 1
    assert kinds[-1] != "error"


def check_records_match_result(res, records):
    for r in records:
        if r["kind"] == "value":
            s = r["summary"]
            v = npy(res.values[r["node"]])
            assert s["shape"] == list(v.shape)
            np.testing.assert_allclose(np.asarray(s["preview"]), v, rtol=1e-12)
        elif r["kind"] == "node_grad":
            np.testing.assert_allclose(r["summary"]["preview"], npy(res.node_grads[r["node"]]))
        elif r["kind"] == "edge_grad":
            np.testing.assert_allclose(r["summary"]["preview"], npy(res.edge_grads[r["edge"]]))
        elif r["kind"] == "leaf_grad":
            np.testing.assert_allclose(r["summary"]["preview"], npy(res.leaf_grads[r["node"]]))
    wire(records)


def test_forward_run_has_values_and_no_gradients():
    d = random_graph(7)
    ref = torch_run(d)
    res, records = run_records(d, "forward")
    assert res.status == "ok"
    assert {r["kind"] for r in records} == {"value", "autograd"}
    assert [r["node"] for r in records if r["kind"] == "value"] == list(res.values)
    for nid, t in ref.items():
        close(res.values[nid], t)
    assert res.node_grads == {} and res.edge_grads == {} and res.leaf_grads == {}


def test_run_without_emit_keeps_its_records():
    d = random_graph(3)
    res = run(d, "backward")
    _, records = run_records(d, "backward")
    assert [r["kind"] for r in res.records] == [r["kind"] for r in records]


# -- a worked example: two paths, multiplied along each and added ---------------------------------
def square_of_sum():
    # y = (x * w + x) ** 2 summed: x reaches the sum by two paths
    nodes = [
        tensor("x", value=[1.0, -2.0, 3.0], requires_grad=True, dtype="float64"),
        tensor("w", value=[0.5, 0.25, -1.0], requires_grad=True, dtype="float64"),
        node("m", "mul"),
        node("a", "add"),
        node("p", "pow", scalar=2.0),
        node("s", "sum"),
    ]
    edges = [
        edge("xm", "x", "m"),
        edge("wm", "w", "m", "other"),
        edge("ma", "m", "a"),
        edge("xa", "x", "a", "other"),
        edge("ap", "a", "p"),
        edge("ps", "p", "s"),
    ]
    return doc(nodes, edges)


def test_two_paths_add_up():
    res, records = run_records(square_of_sum(), "backward")
    x = torch.tensor([1.0, -2.0, 3.0], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([0.5, 0.25, -1.0], dtype=torch.float64, requires_grad=True)
    a = x * w + x
    a.retain_grad()
    (a**2).sum().backward()
    assert res.target == "s"  # the last scalar node when the document names none
    close(res.edge_grads["xa"], a.grad)  # add sends its gradient back unchanged
    close(res.edge_grads["xm"], a.grad * w)  # mul multiplies by the other input
    close(res.edge_grads["xm"] + res.edge_grads["xa"], x.grad)
    close(res.leaf_grads["w"], w.grad)
    kinds = [r["kind"] for r in records]
    assert kinds[:6] == ["value"] * 6
    assert kinds[-1] == "autograd"


def test_autograd_record_names_the_engine_nodes():
    _, records = run_records(square_of_sum(), "backward")
    graph = next(r for r in records if r["kind"] == "autograd")
    names = {(n["name"], n["node"]) for n in graph["nodes"]}
    assert {
        ("SumBackward0", "s"),
        ("PowBackward0", "p"),
        ("AddBackward0", "a"),
        ("MulBackward0", "m"),
        ("AccumulateGrad", "x"),
        ("AccumulateGrad", "w"),
    } == names  # the executor's own per-edge nodes are not shown
    ids = {n["id"]: n for n in graph["nodes"]}
    targets = {(ids[e["source"]]["node"], ids[e["target"]]["node"]) for e in graph["edges"]}
    assert targets == {("s", "p"), ("p", "a"), ("a", "m"), ("a", "x"), ("m", "x"), ("m", "w")}
    mul = next(n for n in graph["nodes"] if n["name"] == "MulBackward0")
    assert [s["shape"] for s in mul["saved"]] == [[3], [3]]


def test_linear_has_its_own_parameters():
    x = [[1.0, 2.0, 3.0], [-1.0, 0.5, 0.0]]
    wv = [[0.1, -0.2, 0.3], [0.4, 0.5, -0.6]]
    bv = [0.01, -0.02]
    nodes = [
        tensor("x", value=x, dtype="float64"),
        node("l", "linear", out_features=2, weight=wv, bias_value=bv),
        node("t", "tanh"),
        node("s", "sum"),
    ]
    edges = [edge("a", "x", "l"), edge("b", "l", "t"), edge("c", "t", "s")]
    res, records = run_records(doc(nodes, edges), "backward")
    lin = torch.nn.Linear(3, 2, dtype=torch.float64)
    with torch.no_grad():
        lin.weight.copy_(torch.tensor(wv, dtype=torch.float64))
        lin.bias.copy_(torch.tensor(bv, dtype=torch.float64))
    torch.tanh(lin(torch.tensor(x, dtype=torch.float64))).sum().backward()
    close(res.leaf_grads["l.weight"], lin.weight.grad)
    close(res.leaf_grads["l.bias"], lin.bias.grad)
    params = {r["param"] for r in records if r["kind"] == "leaf_grad" and r["node"] == "l"}
    assert params == {"weight", "bias"}


def test_linear_default_init_is_seeded():
    nodes = [tensor("x", [2, 4], init="ones"), node("l", "linear", out_features=3, seed=5)]
    d = doc(nodes, [edge("a", "x", "l")])
    v1 = npy(run(d).values["l"])
    assert np.array_equal(v1, npy(run(d).values["l"]))
    nodes[1]["params"]["seed"] = 6
    assert not np.array_equal(v1, npy(run(doc(nodes, [edge("a", "x", "l")])).values["l"]))


# -- if -------------------------------------------------------------------------------------------
def if_graph(cond):
    nodes = [
        tensor("c", value=cond),
        tensor("x", value=[1.0, 2.0], requires_grad=True, dtype="float64"),
        tensor("y", value=[3.0, 4.0], requires_grad=True, dtype="float64"),
        tensor("w", value=[0.5, -1.0], requires_grad=True, dtype="float64"),
        node("tm", "mul"),  # then: x * w
        node("ye", "exp"),  # else: exp(y) * w
        node("em", "mul"),
        node("i", "if"),
        node("s", "sum"),
    ]
    edges = [
        edge("xt", "x", "tm"),
        edge("wt", "w", "tm", "other"),
        edge("yy", "y", "ye"),
        edge("ye-em", "ye", "em"),
        edge("we", "w", "em", "other"),
        edge("ci", "c", "i", "condition"),
        edge("ti", "tm", "i", "then"),
        edge("ei", "em", "i", "else"),
        edge("is", "i", "s"),
    ]
    return doc(nodes, edges)


def test_if_runs_the_then_branch_only():
    res, records = run_records(if_graph(1.0), "backward")
    assert res.status == "ok"
    assert res.skipped == ["y", "ye", "em"]
    skipped = {r["node"]: r["reason"] for r in records if r["kind"] == "skipped"}
    assert skipped == {
        "y": "feeds only nodes that did not run",
        "ye": "feeds only nodes that did not run",
        "em": "the branch of 'i' that did not run",
    }
    assert set(res.values) == {"c", "x", "w", "tm", "i", "s"}
    x = torch.tensor([1.0, 2.0], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
    (x * w).sum().backward()
    close(res.values["s"], (x * w).sum())
    close(res.leaf_grads["x"], x.grad)
    close(res.leaf_grads["w"], w.grad)
    assert "y" not in res.leaf_grads and "we" not in res.edge_grads
    close(res.edge_grads["ti"], torch.ones(2, dtype=torch.float64))
    # skipped records come after the values and before any gradient
    kinds = [r["kind"] for r in records]
    assert max(i for i, k in enumerate(kinds) if k == "skipped") < kinds.index("node_grad")


def test_if_runs_the_else_branch_only():
    res, records = run_records(if_graph(0.0), "backward")
    assert res.status == "ok"
    assert res.skipped == ["x", "tm"]
    y = torch.tensor([3.0, 4.0], dtype=torch.float64, requires_grad=True)
    w = torch.tensor([0.5, -1.0], dtype=torch.float64, requires_grad=True)
    (torch.exp(y) * w).sum().backward()
    close(res.leaf_grads["y"], y.grad)
    close(res.leaf_grads["w"], w.grad)
    assert set(res.leaf_grads) == {"y", "w"}
    assert not any(r.get("node") == "tm" for r in records if r["kind"] == "value")


def test_if_with_a_computed_condition():
    nodes = [
        tensor("a", value=2.0),
        tensor("b", value=3.0),
        node("g", "gt"),
        tensor("x", value=[1.0], requires_grad=True),
        node("n", "neg"),
        node("e", "exp"),
        node("i", "if"),
    ]
    edges = [
        edge("ag", "a", "g"),
        edge("bg", "b", "g", "other"),
        edge("xn", "x", "n"),
        edge("xe", "x", "e"),
        edge("gi", "g", "i", "condition"),
        edge("ni", "n", "i", "then"),
        edge("ei", "e", "i", "else"),
    ]
    res, _ = run_records(doc(nodes, edges), "backward")
    assert res.status == "ok" and res.skipped == ["n"]  # 2 > 3 is false: else
    close(res.leaf_grads["x"], torch.exp(torch.tensor([1.0])), rtol=1e-6)


def test_if_with_a_many_element_condition_is_an_error_record():
    d = if_graph([1.0, 0.0])
    res, records = run_records(d, "forward")
    with pytest.raises(RuntimeError) as info:
        bool(torch.tensor([1.0, 0.0]))
    assert res.status == "error"
    assert records[-1] == res.error
    assert res.error["node"] == "i"
    assert res.error["message"] == str(info.value)


# -- failures are records -------------------------------------------------------------------------
def test_run_time_failure_names_its_node_with_torchs_message():
    # p is ones * 1.5: fine for validation (it runs on zeros), out of [0, 1] when it runs
    nodes = [
        tensor("p", [2], init="ones", requires_grad=True),
        node("m", "mul", scalar=1.5),
        tensor("t", value=[1.0, 0.0]),
        node("b", "binary_cross_entropy"),
        node("after", "exp"),
    ]
    edges = [edge("pm", "p", "m"), edge("mb", "m", "b"), edge("tb", "t", "b", "target")]
    edges.append(edge("ba", "b", "after"))
    d = doc(nodes, edges)
    assert validate(d) == []
    with pytest.raises(RuntimeError) as info:
        tF.binary_cross_entropy(torch.ones(2) * 1.5, torch.tensor([1.0, 0.0]))
    for mode in ("forward", "backward"):
        res, records = run_records(d, mode)
        assert res.status == "error"
        assert res.error == {
            "kind": "error",
            "node": "b",
            "message": str(info.value),
            "type": "RuntimeError",
        }
        assert records[-1] == res.error
        assert [r["node"] for r in records[:-1]] == ["p", "m", "t"]  # what ran before it
        assert not any(r["kind"] in GRAD_KINDS for r in records)


def test_backward_from_a_non_scalar_target():
    nodes = [tensor("x", [2, 2], init="ones", requires_grad=True), node("e", "exp")]
    d = doc(nodes, [edge("a", "x", "e")], target="e")
    with pytest.raises(RuntimeError) as info:
        torch.ones(2, 2, requires_grad=True).exp().backward()
    res, records = run_records(d, "backward")
    assert res.status == "error"
    assert res.error["node"] == "e"
    assert res.error["message"] == str(info.value)
    assert [r["kind"] for r in records] == ["value", "value", "error"]


def test_backward_from_a_target_without_grad():
    nodes = [tensor("x", value=[1.0, 2.0]), node("s", "sum")]
    d = doc(nodes, [edge("a", "x", "s")])
    with pytest.raises(RuntimeError) as info:
        torch.tensor([1.0, 2.0]).sum().backward()
    res, _ = run_records(d, "backward", target="s")
    assert res.error["node"] == "s" and res.error["message"] == str(info.value)
    res, _ = run_records(d, "backward")  # no target, and no scalar that requires grad
    assert res.status == "error" and res.error["node"] is None
    assert res.error["message"].startswith("backward needs a scalar target")


def test_backward_target_on_the_branch_not_taken_is_computed():
    # the target is demanded like a sink: its branch runs although the `if` did not pick it
    nodes = [n.model_dump() for n in if_graph(1.0).nodes] + [node("es", "sum")]
    edges = [e.model_dump() for e in if_graph(1.0).edges] + [edge("em-es", "em", "es")]
    d = parse({"nodes": nodes, "edges": edges})
    res, _ = run_records(d, "backward", target="es")
    assert res.status == "ok" and res.target == "es"
    assert "em" in res.values and "y" in res.leaf_grads


def test_bad_mode():
    with pytest.raises(ValueError, match="mode must be"):
        run(square_of_sum(), "sideways")


# -- cancellation and limits ----------------------------------------------------------------------
@pytest.fixture
def small_batches(monkeypatch):
    """Records go out in batches of 64, so a run of a few hundred nodes sends some while it
    runs (the usual first batch is larger than these runs). The batch stays at 64: it would
    double at each flush, and how many flushes a forward pass makes depends on the clock,
    so a fast machine could start its backward pass with a batch larger than all of it."""
    monkeypatch.setattr(executor, "FLUSH_FIRST", 64)
    monkeypatch.setattr(executor, "FLUSH_RECORDS", 64)


def test_cancel_during_forward(small_batches, monkeypatch):
    # every node checks for cancel (not every CHECK_SECONDS), so the run stops at the node after
    # its first batch of values goes out, however fast this machine runs the chain (on a fast
    # one, 2,000 nodes once finished before the clock called for a check)
    monkeypatch.setattr(executor, "CHECK_SECONDS", 0.0)
    d = long_chain(2000)
    cancel, got = threading.Event(), []

    def emit(rec):
        got.append(rec)
        if rec["kind"] == "values":
            cancel.set()

    res = run(d, "backward", emit=emit, cancel=cancel)
    assert res.status == "cancelled"
    assert res.error is None
    assert len(res.values) < 200  # it stopped soon after its first batch (64 values)
    got = expand_records(got)  # every row a record names came before it
    assert {r["kind"] for r in got} == {"value"}  # no gradient, no autograd record
    assert all(r["node"] in res.values for r in got)


def test_cancel_during_backward(small_batches):
    d = long_chain(300)
    cancel, got = threading.Event(), []

    def emit(rec):
        got.append(rec)
        if rec["kind"] == "grads":  # the first gradients are out
            cancel.set()

    res = run(d, "backward", emit=emit, cancel=cancel)
    assert res.status == "cancelled"
    assert len(res.values) == len(d.nodes)
    assert 0 < len(res.edge_grads) < len(d.edges)  # it stopped part way
    assert not any(r["kind"] in ("leaf_grad", "autograd", "error") for r in got)


def test_a_slow_run_sends_records_on_the_clock_before_a_batch_is_full(monkeypatch):
    # 200 values never fill the first batch (FLUSH_FIRST): only the clock (FLUSH_SECONDS)
    # sends some before the end. How long the nodes take depends on the machine (a fast one
    # ran all 200 inside 10 ms), so here the clock says "due" at every check, and a check
    # comes after every node
    monkeypatch.setattr(recorder, "FLUSH_SECONDS", 0.0)
    monkeypatch.setattr(executor, "CHECK_SECONDS", 0.0)
    d = long_chain(200, shape=(256, 256))
    got = []

    def emit(rec):
        got.append(rec)

    res = run(d, emit=emit)
    assert res.status == "ok" and len(d.nodes) < executor.FLUSH_FIRST
    packs = [rec for rec in got if rec["kind"] == "values"]
    assert len(packs) >= 2  # at least one went out while the run was still computing
    assert sum(len(p["nodes"]) for p in packs) == len(d.nodes)


def test_cancelled_before_it_starts():
    cancel = threading.Event()
    cancel.set()
    res, records = run_records(long_chain(), cancel=cancel)
    assert res.status == "cancelled" and records == []


def test_max_elements_at_run_time():
    # an outer product: both inputs are small, the output is not
    nodes = [tensor("a", [100, 1]), tensor("b", [1, 100]), node("m", "matmul")]
    d = doc(nodes, [edge("x", "a", "m"), edge("y", "b", "m", "other")])
    limits = Limits(max_elements=1000)
    # validation refuses it (test_validate.py); a run that skips validation checks it too
    res, records = run_records(d, limits=limits, validated=True)
    assert res.status == "error"
    assert res.error["type"] == "LimitExceeded"
    assert res.error["message"] == (
        "a tensor of 10,000 elements is over the limit of 1,000 elements per tensor"
    )
    assert records[-1] == res.error


def test_max_elements_error_names_the_node():
    nodes = [tensor("a", [100, 1]), tensor("b", [1, 100]), node("m", "matmul")]
    d = doc(nodes, [edge("x", "a", "m"), edge("y", "b", "m", "other")])
    res, _ = run_records(d, limits=Limits(max_elements=1000), validated=True)
    assert res.error["node"] == "m"


def test_max_seconds():
    res, records = run_records(long_chain(), "backward", limits=Limits(max_seconds=0))
    assert res.status == "error"
    assert res.error == {
        "kind": "error",
        "node": None,
        "message": "the run took longer than 0 s, the limit for one run",
        "type": "LimitExceeded",
    }
    assert records == [res.error]


def test_max_total_bytes():
    d = long_chain(shape=(256,))  # each value 1 KiB (float32)
    res, _ = run_records(d, limits=Limits(max_total_bytes=10 * 1024))
    assert res.status == "error" and res.error["type"] == "LimitExceeded"
    assert res.error["message"].startswith("the run's values take more than")
    assert len(res.values) == 10
    assert run_records(d, limits=Limits(max_total_bytes=64 * 1024))[0].status == "ok"


# -- the forward cache ----------------------------------------------------------------------------
def cache_graph(b_value):
    """a feeds a chain of 12 nodes; b feeds only the last two (add, sum)."""
    nodes = [tensor("a", value=[[0.1, 0.2], [0.3, 0.4]], dtype="float64")]
    edges, prev = [], "a"
    for i in range(12):
        nodes.append(node(f"n{i}", ("tanh", "exp", "sin")[i % 3]))
        edges.append(edge(f"e{i}", prev, f"n{i}"))
        prev = f"n{i}"
    nodes += [tensor("b", value=b_value, dtype="float64"), node("p", "add"), node("s", "sum")]
    edges += [edge("ep", prev, "p"), edge("bp", "b", "p", "other"), edge("ps", "p", "s")]
    return doc(nodes, edges)


def test_cache_recomputes_only_what_depends_on_the_edited_leaf():
    cache = ForwardCache()
    res, records = run_records(cache_graph([1.0, 2.0]), cache=cache)
    assert not any(r.get("cached") for r in records)
    assert (cache.hits, cache.misses) == (0, 16)

    edited = cache_graph([5.0, -1.0])
    res, records = run_records(edited, cache=cache)
    cached = {r["node"] for r in records if r["kind"] == "value" and r.get("cached")}
    fresh = {r["node"] for r in records if r["kind"] == "value" and not r.get("cached")}
    assert cached == {"a"} | {f"n{i}" for i in range(12)}
    assert fresh == {"b", "p", "s"}
    assert (cache.hits, cache.misses) == (13, 19)
    ref = run(edited)
    for nid, t in ref.values.items():
        close(res.values[nid], t)

    # the same document again: everything from the cache
    res, records = run_records(edited, cache=cache)
    assert all(r.get("cached") for r in records if r["kind"] == "value")
    assert (cache.hits, cache.misses) == (29, 19)


def test_cache_sees_param_edits_in_the_middle():
    cache = ForwardCache()
    d = cache_graph([1.0, 2.0])
    run(d, cache=cache)
    nodes = [n.model_dump() for n in d.nodes]
    nodes[7]["op"] = "cos"  # n6
    d2 = parse({"nodes": nodes, "edges": [e.model_dump() for e in d.edges]})
    res, records = run_records(d2, cache=cache)
    fresh = [r["node"] for r in records if r["kind"] == "value" and not r.get("cached")]
    assert fresh == ["n6", "n7", "n8", "n9", "n10", "n11", "p", "s"]
    for nid, t in run(d2).values.items():
        close(res.values[nid], t)


def test_backward_runs_never_use_the_cache():
    cache = ForwardCache()
    d = cache_graph([1.0, 2.0])
    run(d, cache=cache)
    before = (cache.hits, cache.misses)
    nodes = [n.model_dump() for n in d.nodes]
    nodes[0]["params"]["requires_grad"] = True
    d2 = parse({"nodes": nodes, "edges": [e.model_dump() for e in d.edges]})
    for _ in range(2):
        res, records = run_records(d2, "backward", cache=cache)
        assert res.status == "ok"
        assert not any(r.get("cached") for r in records)
        assert (cache.hits, cache.misses) == before
    assert "a" in res.leaf_grads


def with_extra_node(d):
    """`d` with one more node: another structure, so a run through a cache warmed by `d`
    looks each node up (no last run to start from), and every old node is a hit."""
    nodes = [n.model_dump() for n in d.nodes] + [tensor("z", [1])]
    return parse({"nodes": nodes, "edges": [e.model_dump() for e in d.edges]})


def test_a_cached_run_can_be_cancelled_and_keeps_the_byte_limit(small_batches):
    cache = ForwardCache()
    d = long_chain(300, shape=(256,))  # each value 1 KiB
    assert run(d, cache=cache).status == "ok"
    cancel, got = threading.Event(), []

    def emit(rec):
        got.append(rec)
        cancel.set()

    # node by node through the cache
    res = run(with_extra_node(d), emit=emit, cancel=cancel, cache=cache)
    assert res.status == "cancelled"
    assert 0 < len(res.values) < len(d.nodes)  # it stopped part way through the hits
    got = expand_records(got)
    assert got and all(r["kind"] == "value" and r["cached"] for r in got)

    # from the last run: the unchanged values go out at once, and the run stops after them
    cancel.clear()
    got.clear()
    res = run(d, emit=emit, cancel=cancel, cache=cache)
    assert res.status == "cancelled"
    assert not any(r["kind"] == "autograd" for r in got)

    res, _ = run_records(with_extra_node(d), cache=cache, limits=Limits(max_total_bytes=10 * 1024))
    assert res.status == "error" and res.error["type"] == "LimitExceeded"
    assert len(res.values) == 10
    # from the last run, which knows its total at once
    res, records = run_records(d, cache=cache, limits=Limits(max_total_bytes=10 * 1024))
    assert res.status == "error" and res.error["type"] == "LimitExceeded"
    assert records == [res.error]


def test_runs_pause_the_garbage_collector_and_restore_it():
    import gc

    seen = []
    d = long_chain(5)
    assert gc.isenabled()
    res = run(d, emit=lambda rec: seen.append(gc.isenabled()))
    assert res.status == "ok" and seen and not any(seen)
    assert gc.isenabled()
    # after a failing run too
    assert run(long_chain(), "backward", limits=Limits(max_seconds=0)).status == "error"
    assert gc.isenabled()
    # a collector the caller turned off stays off
    gc.disable()
    try:
        run(d)
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_cache_is_bounded():
    cache = ForwardCache(max_entries=5)
    run(cache_graph([1.0, 2.0]), cache=cache)
    assert len(cache._store) == 5


def test_touch_marks_entries_used_and_skips_those_evicted_since():
    cache = ForwardCache(max_entries=3)
    for sig in (1, 2, 3, 4):  # 4 evicts 1
        cache.put(sig, eg.tensor(float(sig)))
    cache.touch([2, 1, 3], misses=1)
    assert list(cache._store) == [4, 2, 3]  # used last, evicted last
    cache.touch([4])
    assert list(cache._store) == [2, 3, 4]
    assert (cache.hits, cache.misses) == (4, 1)


def test_cache_with_if():
    cache = ForwardCache()
    for cond in (1.0, 1.0, 0.0):
        res, _ = run_records(if_graph(cond), cache=cache)
        assert res.status == "ok"
        close(res.values["s"], run(if_graph(cond)).values["s"])
    assert res.skipped == ["x", "tm"]


def test_unknown_explicit_target_is_refused():
    with pytest.raises(GraphInvalid, match="the target 'nope' is not a node of the graph"):
        run_records(square_of_sum(), "backward", target="nope", validated=True)


# -- summaries ------------------------------------------------------------------------------------
def test_summary_stats():
    rng = np.random.default_rng(0)
    v = rng.normal(3.0, 2.0, size=(5, 7))
    nodes = [tensor("v", value=v.tolist(), dtype="float64")]
    _, records = run_records(doc(nodes))
    s = records[0]["summary"]
    assert s["shape"] == [5, 7] and s["dtype"] == "float64" and s["numel"] == 35
    assert s["requires_grad"] is False and s["grad_fn"] is None
    assert s["nan"] == 0 and s["inf"] == 0
    st = s["stats"]
    np.testing.assert_allclose(
        [st["min"], st["max"], st["mean"], st["std"], st["norm"]],
        [v.min(), v.max(), v.mean(), v.std(), np.linalg.norm(v)],
        rtol=1e-10,
    )
    assert wire(s)["preview"] == v.tolist()


def test_summary_std_with_a_large_offset():
    v = np.array([1e8, 1e8 + 1.0, 1e8 + 2.0])
    s = summarize(parse_value(v))
    np.testing.assert_allclose(s["stats"]["std"], v.std(), rtol=1e-6)


def parse_value(v, dtype="float64"):
    return run(doc([tensor("v", value=v.tolist(), dtype=dtype)])).values["v"]


def test_summary_nan_and_inf():
    v = np.array([[1.0, np.nan, np.inf], [-np.inf, -2.0, np.nan]])
    t = parse_value(v)
    s = summarize(t)
    assert (s["nan"], s["inf"]) == (2, 2)
    assert s["stats"]["min"] == -2.0 and s["stats"]["max"] == 1.0
    assert s["stats"]["mean"] == -0.5
    assert s["preview"] == [[1.0, "nan", "inf"], ["-inf", -2.0, "nan"]]
    wire(s)
    s = summarize(parse_value(np.array([np.nan, np.nan])))
    assert s["nan"] == 2 and s["stats"] is None
    s = summarize(parse_value(np.array(np.inf)))
    assert s["preview"] == "inf" and s["inf"] == 1
    wire(s)


def test_nan_gradients_in_records_are_json():
    nodes = [tensor("x", value=[-1.0, 0.0, 4.0], requires_grad=True), node("l", "log")]
    nodes += [node("s", "sum")]
    res, records = run_records(doc(nodes, [edge("a", "x", "l"), edge("b", "l", "s")]), "backward")
    assert res.status == "ok"
    text = fastjson.dumps(records)
    wire(records)
    assert '"nan"' in text and '"-inf"' in text
    lg = next(r for r in records if r["kind"] == "leaf_grad")["summary"]
    assert lg["preview"] == [-1.0, "inf", 0.25]


def test_preview_up_to_1024_elements():
    nodes = [tensor("small", [32, 32], init="arange"), tensor("big", [1025], init="ones")]
    _, records = run_records(doc(nodes))
    s = {r["node"]: r["summary"] for r in wire(records) if r["kind"] == "value"}
    assert s["small"]["preview"] == np.arange(1024, dtype=np.float32).reshape(32, 32).tolist()
    assert "preview" not in s["big"]
    assert s["big"]["stats"]["mean"] == 1.0 and s["big"]["numel"] == 1025
    _, records = run_records(doc(nodes), limits=Limits(preview_elements=10))
    assert all("preview" not in r["summary"] for r in records if r["kind"] == "value")


def test_summaries_of_ints_and_bools():
    nodes = [
        tensor("i", value=[3, 1, 2], dtype="int64"),
        tensor("j", value=[2, 2, 2], dtype="int64"),
    ]
    nodes += [node("g", "gt")]
    _, records = run_records(doc(nodes, [edge("a", "i", "g"), edge("b", "j", "g", "other")]))
    s = {r["node"]: r["summary"] for r in wire(records) if r["kind"] == "value"}
    assert s["i"]["dtype"] == "int64" and s["i"]["preview"] == [3, 1, 2]
    assert s["g"]["dtype"] == "bool" and s["g"]["preview"] == [True, False, False]
    assert s["g"]["stats"]["mean"] == pytest.approx(1 / 3)
    wire(records)


def test_summary_stats_that_overflow_are_still_json():
    for v in ([1e200, 1e200], [1.7e308, 1.7e308], [-1.7e308, 1.7e308]):
        s = summarize(parse_value(np.array(v)))
        wire(s)


# -- plans and views reused across runs -----------------------------------------------------------
def test_a_document_edited_after_a_run_runs_as_edited():
    # the second run of a document of the same structure reuses the first one's plan: its
    # edited params, even a value changed in place inside a list, must still be seen
    nodes = [tensor("x", value=[1.0, 2.0]), node("m", "mul", scalar=2.0), node("s", "sum")]
    d = doc(nodes, [edge("a", "x", "m"), edge("b", "m", "s")])
    assert run(d).values["s"].item() == 6.0
    d.nodes[0].params["value"][0] = 4.0
    assert run(d).values["s"].item() == 12.0
    d.nodes[1].params["scalar"] = 3.0
    assert run(d).values["s"].item() == 18.0
    edited = parse(d.model_dump())
    edited.nodes[1].params["scalar"] = -1.0
    assert run(edited).values["s"].item() == -6.0
    assert run(d).values["s"].item() == 18.0


def autograd_of(records):
    return next(r for r in records if r["kind"] == "autograd")


def test_a_cached_forward_run_sends_the_same_autograd_view_as_a_fresh_one():
    cache = ForwardCache()
    run(cache_graph([1.0, 2.0]), cache=cache)
    # the same shapes (the view is sent again), then another shape of b (made anew), then back
    for b in ([5.0, -1.0], [3.0], [0.5, 0.25], [[1.0, 2.0], [3.0, 4.0]]):
        d = cache_graph(b)
        _, cached = run_records(d, cache=cache)
        _, fresh = run_records(d)
        assert autograd_of(cached) == autograd_of(fresh)
        assert [r["node"] for r in cached if r["kind"] == "value"] == [
            r["node"] for r in fresh if r["kind"] == "value"
        ]
        for c, f in zip(cached, fresh):
            if c["kind"] == "value":
                assert wire(c["summary"]) == wire(f["summary"])


def test_a_backward_run_sends_the_same_autograd_view_as_a_first_run():
    from backend.graph.running import executor

    def backward_graph(b):
        d = cache_graph(b)
        d.nodes[0].params["requires_grad"] = True
        d.nodes[-3].params["requires_grad"] = True
        return d

    # a view sent again (same shapes) or made anew (another shape of b) is the one a run of
    # the document in a fresh process, with no view to reuse, would send
    for b in ([5.0, -1.0], [0.5, 0.25], [3.0], [[1.0, 2.0], [3.0, 4.0]], [3.0]):
        d = backward_graph(b)
        _, again = run_records(d, "backward")
        executor._VIEWS.clear()
        _, first = run_records(d, "backward")
        assert autograd_of(again) == autograd_of(first)
        assert any(n["name"] == "AccumulateGrad" for n in autograd_of(first)["nodes"])
        shapes = {n["node"]: n.get("variable_shape") for n in autograd_of(first)["nodes"]}
        assert shapes["b"] == list(np.shape(b))


def test_previews_are_the_same_json_as_lists():
    rng = np.random.default_rng(1)
    f, d = rng.normal(size=(3, 4)), rng.normal(size=(2, 3))
    nodes = [
        tensor("f", value=f.tolist()),
        tensor("d", value=d.tolist(), dtype="float64"),
        tensor("i", value=[[1, 2], [3, 4]], dtype="int64"),
        tensor("s", value=0.1),
        node("t", "transpose"),
    ]
    _, records = run_records(doc(nodes, [edge("a", "f", "t")]))
    got = {r["node"]: r["summary"]["preview"] for r in wire(records) if r["kind"] == "value"}
    assert got["i"] == [[1, 2], [3, 4]] and got["s"] == 0.1
    assert got["t"] == np.asarray(got["f"]).T.tolist()
    assert got["d"] == d.tolist()  # float64: every bit
    # float32: each value the shortest decimal that reads back as the same float32
    f32 = f.astype(np.float32)
    assert (np.asarray(got["f"], np.float32) == f32).all()
    assert got["f"] == [[float(str(v)) for v in row] for row in f32]
