"""In-place nodes (issue 25) against PyTorch: the templates, random sequences of writes built as
documents (errors word for word, values as each node made them, gradients where backward runs),
the order rule, export (run with torch and with the engine in a subprocess) and import."""

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
import torch
from _numbers import close

from backend.graph import ForwardCache, parse, run_records, validate
from backend.graph.document.templates import load_template
from backend.graph.export import to_python
from backend.graph.importing.importer import from_python
from backend.graph.ops.inplace import parse_index

ROOT = Path(__file__).resolve().parents[2]
LEAF = "a leaf Variable that requires grad is being used in an in-place operation."


def doc_of(nodes, edges, target=None):
    d = {
        "format": "wiregrad.graph",
        "version": 1,
        "nodes": [{"id": i, "op": o, "params": p} for i, o, p in nodes],
        "edges": [
            {"id": f"e{k}", "source": s, "target": t, "targetPort": port}
            for k, (s, t, port) in enumerate(edges)
        ],
    }
    if target:
        d["target"] = target
    return parse(d)


def torch_error(fn):
    try:
        fn()
    except RuntimeError as exc:
        return str(exc)
    return None


# -- the templates --------------------------------------------------------------------------------
def test_leaf_template_fails_at_the_add_node_in_pytorchs_words():
    def text_002():
        x = torch.tensor(2.0, requires_grad=True)
        y = x * x  # noqa: F841 - the example's line
        x.add_(1)

    res, records = run_records(load_template("inplace-leaf"), "backward")
    assert torch_error(text_002) == LEAF
    assert res.error["node"] == "a" and res.error["message"] == LEAF
    # x and y ran first, in statement order, at version 0
    assert [(r["node"], r["version"]) for r in records if r["kind"] == "value"] == [
        ("x", 0),
        ("y", 0),
    ]
    # under no_grad the write is allowed: x @ v1 = 3, y (made before) keeps 4
    res, records = run_records(load_template("inplace-leaf"), "forward", no_grad=True)
    assert res.status == "ok"
    values = {r["node"]: (r["summary"]["preview"], r["version"]) for r in records if "version" in r}
    assert values == {"x": (2.0, 0), "y": (4.0, 0), "a": (3.0, 1)}


def test_saved_tensor_overwritten_gives_the_version_error_at_the_saving_node():
    def oracle():
        x = torch.tensor(2.0, requires_grad=True)
        a = x * 2
        b = a * a
        a.add_(1)
        b.backward()

    res, _ = run_records(load_template("inplace-saved-overwritten"), "backward")
    assert res.error["message"] == torch_error(oracle)
    assert res.error["node"] == "b"
    assert res.error["saved_by"] == "b" and res.error["overwritten_by"] == "w"
    assert res.error["saved_op"] == "MulBackward0"
    assert (res.error["expected_version"], res.error["version"]) == (0, 1)


def test_safe_relu_and_the_slice_write_give_pytorchs_gradients():
    x = torch.tensor([-2.0, 0.5, 3.0], requires_grad=True)
    a = x + 1
    a.relu_()
    a.sum().backward()
    res, records = run_records(load_template("inplace-relu-safe"), "backward")
    assert res.status == "ok"
    close(res.leaf_grads["x"], x.grad)
    close(res.values["r"], a)
    close(res.values["a"], x.detach() + 1)  # a as it was before relu_ wrote into it

    x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
    y = x * 2
    y[0:2].mul_(3)
    assert type(y.grad_fn).__name__ == "CopySlices"
    (y * y).sum().backward()
    res, records = run_records(load_template("inplace-slice-write"), "backward")
    assert res.status == "ok"
    close(res.leaf_grads["x"], x.grad)
    (graph,) = [r for r in records if r["kind"] == "autograd"]
    names = {(n["node"], n["name"]) for n in graph["nodes"]}
    assert ("m", "CopySlices") in names and ("y", "MulBackward0") in names
    versions = {r["node"]: r["version"] for r in records if r["kind"] == "value"}
    assert versions["v"] == 0 and versions["m"] == 1


# -- random sequences of writes -------------------------------------------------------------------
class _Both:
    """A document and the same computation in torch, built one statement at a time."""

    def __init__(self, rng):
        self.rng, self.nodes, self.edges, self.k = rng, [], [], 0
        self.values, self.error, self.error_at = {}, None, None

    def node(self, op, params, inputs, fn, nid=None):
        self.k += 1
        nid = nid or f"n{self.k}"
        self.nodes.append((nid, op, params))
        self.edges += [(src, nid, port) for port, src in inputs]
        if self.error is None:
            try:
                out = fn()
                self.values[nid] = out.detach().clone()
            except RuntimeError as exc:
                self.error, self.error_at = str(exc), nid
                out = None
        else:
            out = None
        return nid, out


WRITES = ["add_", "sub_", "mul_", "div_", "relu_", "clamp_", "zero_", "fill_", "setitem", "view"]


def _write(b, cur, t, op, n):
    rng = b.rng
    if op in ("add_", "sub_", "mul_", "div_"):
        s = rng.choice([0.5, 2.0, -1.5])
        return b.node(op, {"scalar": s}, [("input", cur)], lambda: getattr(t, op)(s))[0]
    if op == "relu_":
        return b.node(op, {}, [("input", cur)], lambda: t.relu_())[0]
    if op == "clamp_":
        return b.node(op, {"min": -0.5, "max": 1.0}, [("input", cur)], lambda: t.clamp_(-0.5, 1.0))[
            0
        ]
    if op == "zero_":
        return b.node(op, {}, [("input", cur)], lambda: t.zero_())[0]
    if op == "fill_":
        return b.node(op, {"value": 0.25}, [("input", cur)], lambda: t.fill_(0.25))[0]
    i = rng.randrange(n)
    if op == "setitem":

        def put():
            t[i] = 7.0
            return t

        return b.node("setitem", {"index": str(i), "scalar": 7.0}, [("input", cur)], put)[0]
    # a write through a view: v = t[i:], then v.mul_(3)
    vid, v = b.node("getitem", {"index": f"{i}:"}, [("input", cur)], lambda: t[i:])
    b.node("mul_", {"scalar": 3.0}, [("input", vid)], lambda: v.mul_(3.0))
    return cur  # the base, written through its view


READS = {
    "square": ("mul", lambda t: t * t),
    "exp": ("exp", torch.exp),  # saves its output (a new tensor)
    "plus": ("add", lambda t: t + 1.0),  # saves nothing
    "sigmoid": ("sigmoid", torch.sigmoid),
}


def random_case(seed):
    rng = random.Random(seed)
    b = _Both(rng)
    n = rng.choice([1, 3])
    data = [round(rng.uniform(-2, 2), 2) for _ in range(n)]
    leaf = torch.tensor(data, dtype=torch.float64, requires_grad=True)
    x, _ = b.node(
        "tensor",
        {"value": data, "dtype": "float64", "requires_grad": True, "name": "x"},
        [],
        lambda: leaf,
        nid="x",
    )
    # writing the leaf itself is PyTorch's first error; mostly, write a non-leaf copy
    if rng.random() < 0.15:
        cur, t = x, leaf
    else:
        cur, t = b.node("mul", {"scalar": 1.5}, [("input", x)], lambda: leaf * 1.5)
    readers = []
    for _ in range(rng.randint(2, 6)):
        if rng.random() < 0.5:
            name = rng.choice(sorted(READS))
            op, fn = READS[name]
            ins = [("input", cur), ("other", cur)] if op == "mul" else [("input", cur)]
            params = {"scalar": 1.0} if op == "add" else {}
            r, rt = b.node(op, params, ins, lambda fn=fn, t=t: fn(t))
            readers.append((r, rt))
        else:
            cur = _write(b, cur, t, rng.choice(WRITES), n)
    # the loss: every reader's sum and the written tensor's, added up
    parts = readers + [(cur, t)]
    total, tt = b.node("sum", {}, [("input", parts[0][0])], lambda: parts[0][1].sum())
    for r, rt in parts[1:]:
        s, st = b.node("sum", {}, [("input", r)], lambda rt=rt: rt.sum())
        total, tt = b.node("add", {}, [("input", total), ("other", s)], lambda a=tt, c=st: a + c)
    doc = doc_of(b.nodes, b.edges, target=total)
    backward_error = None
    if b.error is None and tt.requires_grad:
        backward_error = torch_error(tt.backward)
    return doc, b, leaf, backward_error


@pytest.mark.parametrize("seed", range(60))
def test_random_writes_match_pytorch(seed):
    doc, b, leaf, backward_error = random_case(seed)
    assert validate(doc) == []
    res, records = run_records(doc, "backward")
    if b.error is not None:  # the forward failed in torch: the same error at the same node
        assert res.error["message"] == b.error
        assert res.error["node"] == b.error_at
        return
    for nid, want in b.values.items():  # each value as its node made it
        close(res.values[nid], want)
    if backward_error is not None:
        assert res.status == "error", f"torch failed: {backward_error}"
        assert res.error["message"] == backward_error
        # at the node whose saved value was overwritten, naming the write
        assert res.error["saved_by"] in b.values
        assert res.error["overwritten_by"] in b.values
        assert res.error["node"] == res.error["saved_by"]
        return
    assert res.status == "ok", res.error
    close(res.leaf_grads["x"], leaf.grad)
    assert [r["node"] for r in records if r["kind"] == "value"] == [n.id for n in doc.nodes]


def test_random_cases_cover_both_errors_and_clean_runs():
    kinds = set()
    for seed in range(60):
        _, b, _, backward_error = random_case(seed)
        kinds.add("forward" if b.error else "backward" if backward_error else "ok")
    assert kinds == {"forward", "backward", "ok"}


# -- order and validation -------------------------------------------------------------------------
def _order_doc(reader_first):
    readers = [("r", "mul", {"scalar": 10.0})]
    write = [("w", "add_", {"scalar": 1.0})]
    nodes = [("x", "tensor", {"value": 1.0, "name": "x"})]
    nodes += readers + write if reader_first else write + readers
    return doc_of(nodes, [("x", "r", "input"), ("x", "w", "input")])


def test_readers_before_a_write_see_the_old_value_after_it_the_new():
    res, _ = run_records(_order_doc(True), "forward")
    assert res.values["r"].item() == 10.0 and res.values["x"].item() == 1.0
    res, _ = run_records(_order_doc(False), "forward")
    assert res.values["r"].item() == 20.0 and res.values["w"].item() == 2.0


def test_validation_reports_a_write_before_its_input_and_an_if():
    d = doc_of(
        [("w", "add_", {"scalar": 1.0}), ("x", "tensor", {"value": 1.0, "name": "x"})],
        [("x", "w", "input")],
    )
    (p,) = validate(d)
    assert p.node == "w" and "comes after it" in p.message
    d = doc_of(
        [
            ("x", "tensor", {"value": 1.0, "name": "x"}),
            ("w", "add_", {"scalar": 1.0}),
            ("i", "if", {}),
        ],
        [("x", "w", "input"), ("x", "i", "condition"), ("x", "i", "then"), ("x", "i", "else")],
    )
    assert [p.node for p in validate(d)] == ["i"]


@pytest.mark.parametrize("bad", ["a", "0:2:0", "__import__('os')", "", "1;2"])
def test_a_bad_index_is_a_problem_at_the_param(bad):
    d = doc_of(
        [("x", "tensor", {"value": [1.0, 2.0], "name": "x"}), ("g", "getitem", {"index": bad})],
        [("x", "g", "input")],
    )
    (p,) = validate(d)
    assert (p.node, p.param) == ("g", "index")


def test_index_parsing_is_pytorchs_syntax():
    assert parse_index("0") == 0
    assert parse_index("0:2") == slice(0, 2)
    assert parse_index(":, -1") == (slice(None), -1)
    assert parse_index("..., ::2") == (Ellipsis, slice(None, None, 2))
    assert parse_index("0,") == (0,)


def test_a_document_with_writes_runs_uncached():
    cache = ForwardCache()
    doc = load_template("inplace-relu-safe")
    for _ in range(2):
        res, records = run_records(doc, "forward", cache=cache)
        assert res.status == "ok"
        assert not any(r.get("cached") for r in records)
        assert res.values["a"].tolist() == [-1.0, 1.5, 4.0]  # not relu_'s: a before the write
    assert cache.hits == 0


# -- export and import ----------------------------------------------------------------------------
def _script_results(source, flavor):
    out = subprocess.run(
        [sys.executable, "-c", source], capture_output=True, text=True, cwd=ROOT, timeout=120
    )
    values, grads = {}, {}
    for line in out.stdout.splitlines():
        kind, key, data = line.split(" ", 2)
        (values if kind == "value" else grads)[key] = np.asarray(json.loads(data))
    error = None
    if out.returncode:
        last = out.stderr.strip().splitlines()[-1]
        assert last.startswith("RuntimeError: "), out.stderr
        error = last[len("RuntimeError: ") :]
    return values, grads, error


EXPORTED = ["inplace-leaf", "inplace-saved-overwritten", "inplace-relu-safe"]
EXPORTED += ["inplace-slice-write"]


@pytest.mark.parametrize("flavor", ["torch", "engine"])
@pytest.mark.parametrize("case", EXPORTED + ["random-3", "random-7", "random-11"])
def test_export_runs_to_the_same_error_or_the_same_numbers(case, flavor):
    doc = load_template(case) if not case.startswith("random") else random_case(int(case[7:]))[0]
    res, _ = run_records(doc, "backward")
    source = to_python(doc, flavor, trace=True)
    back = from_python(source)
    # read back: the same nodes in the same (statement) order, the writes' params as they were
    assert [(n.id, n.op) for n in back.nodes] == [(n.id, n.op) for n in doc.nodes]
    for n in doc.nodes:
        if n.op != "tensor":
            assert back.node(n.id).params == n.params, n.id
    values, grads, error = _script_results(source, flavor)
    if res.status == "error":
        assert error == res.error["message"]
    else:
        assert error is None
        np.testing.assert_allclose(grads["x"], res.leaf_grads["x"].numpy(), rtol=1e-6)
    for nid, v in values.items():  # each printed as its statement left it
        np.testing.assert_allclose(v, res.values[nid].detach().numpy(), rtol=1e-6)
    if res.status == "ok":
        assert set(values) == set(res.values)


SCRIPT = """
import torch

x = torch.tensor([1.0, -2.0, 3.0], requires_grad=True)
y = x * 2
y.add_(1)
y[0] = 5.
y += 1
v = y[1:]
v.mul_(3.0)
y[0:2].clamp_(min=0.0, max=4.0)
y.relu_()
z = y * y
s = z.sum()
s.backward()
"""


def test_import_reads_writes_in_order_and_runs_as_torch_does():
    doc = from_python(SCRIPT)
    ops = [n.op for n in doc.nodes]
    assert ops == [
        "tensor", "mul", "add_", "setitem", "add_", "getitem", "mul_",
        "getitem", "clamp_", "relu_", "mul", "sum",
    ]  # fmt: skip
    # y names the latest write: each write reads the one before it
    into = {(e.target, e.targetPort): e.source for e in doc.edges}
    names = [n.id for n in doc.nodes]
    assert into[(names[3], "input")] == names[2] and into[(names[4], "input")] == names[3]
    assert doc.node(names[3]).params == {"index": "0", "scalar": 5.0}
    res, _ = run_records(doc, "backward")
    assert res.status == "ok", res.error
    scope = {}
    exec(compile(SCRIPT, "<test>", "exec"), {"torch": torch}, scope)  # the test's own script
    close(res.leaf_grads["x"], scope["x"].grad)
    close(res.values[doc.target], scope["s"])


def test_import_refuses_what_it_cannot_read_as_a_write():
    from backend.graph.importing.importer import ImportFailed

    for line, why in [
        ("x[i] = 1.0", "integers, slices"),
        ("x.add_(1, 2)", "one argument"),
        ("q += 1", "not defined"),
        ("x.relu_(1)", "no arguments"),
    ]:
        with pytest.raises(ImportFailed) as info:
            from_python(f"import torch\nx = torch.tensor([1.0, 2.0])\n{line}\n")
        assert why in str(info.value), (line, str(info.value))
