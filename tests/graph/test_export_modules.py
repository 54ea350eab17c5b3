"""Documents with modules exported (as their flat graph, ids made plain) and run in a real PyTorch
and engine process: every value and gradient the script prints is the executor's, each
instance with its own parameters (its seed, its state)."""

import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from _docs import edge, node, tensor
from test_modules import affine_module, twice_module, two_blocks

from backend.graph import parse, run_records
from backend.graph.export import to_python
from backend.graph.export_modules import flat_for_export
from backend.graph.importer import from_python

ROOT = Path(__file__).parents[2]
FLAVORS = ("torch", "engine")


def _nested():
    """Twice (two Affine inside, the second with seed 3) used once, its inner b replaced by
    the instance's state."""
    outer = twice_module()
    return parse(
        {
            "version": 2,
            "modules": [affine_module(), outer],
            "nodes": [
                tensor("in", value=[1.0, 2.0, 3.0], requires_grad=True),
                node("t", "module", module="Twice", state={"g/b": {"value": [0.5, 0.0, -0.5]}}),
                node("s", "mean"),
            ],
            "edges": [edge("e", "in", "t", "x"), edge("e2", "t", "s", source_port="y")],
            "target": "s",
        }
    )


CASES = {
    "two-instances": two_blocks(),
    "two-instances-seed-and-state": two_blocks(seed=7, state={"w": {"value": [1.0, -2.0, 0.5]}}),
    "nested": _nested(),
}


def _run(text):
    return subprocess.run(
        [sys.executable, "-c", text], cwd=ROOT, capture_output=True, text=True, timeout=120
    )


@pytest.fixture(scope="module")
def scripts():
    jobs = {(c, f): to_python(doc, f) for c, doc in CASES.items() for f in FLAVORS}
    with ThreadPoolExecutor(max_workers=2) as pool:
        procs = dict(zip(jobs, pool.map(_run, jobs.values())))
    return {k: (jobs[k], procs[k]) for k in jobs}


def _printed(stdout):
    values, grads = {}, {}
    for line in stdout.splitlines():
        kind, key, data = line.split(" ", 2)
        (values if kind == "value" else grads)[key] = np.array(json.loads(data))
    return values, grads


def _close(got, want, what):
    want = np.asarray(want.detach().tolist())
    assert got.shape == want.shape, what
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-7, err_msg=what)


@pytest.mark.parametrize("flavor", FLAVORS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_module_document_script_prints_the_runs_values_and_gradients(scripts, case, flavor):
    doc = CASES[case]
    text, proc = scripts[(case, flavor)]
    assert proc.returncode == 0, proc.stderr[-3000:]
    values, grads = _printed(proc.stdout)
    _, renamed = flat_for_export(doc)
    res, _ = run_records(doc, "backward")  # the document itself: its run flattens it
    assert res.status == "ok", res.error
    assert {renamed.get(k, k) for k in values} == set(res.values)
    for key, got in values.items():
        _close(got, res.values[renamed.get(key, key)], f"value {key}")
    want = {**res.node_grads, **res.leaf_grads}
    assert {renamed.get(k, k) for k in grads} == set(want)
    for key, got in grads.items():
        _close(got, want[renamed.get(key, key)], f"grad {key}")
    # each instance has its own parameters: l2's seed 7 moves its b, its state sets its w
    if case == "two-instances-seed-and-state":
        assert not np.allclose(values["l1_b"], values["l2_b"])
        assert values["l2_w"].tolist() == [1.0, -2.0, 0.5]


def test_flat_ids_are_plain_and_the_script_imports_back():
    flat, renamed = flat_for_export(CASES["nested"])
    assert renamed == {n.id: path for n in flat.nodes for path in [renamed.get(n.id)] if path}
    assert renamed["t_g_b"] == "t/g/b" and all("/" not in n.id for n in flat.nodes)
    assert all("/" not in e.id for e in flat.edges) and flat.target == "s"
    # the exported script reads back into the flat graph (without modules; the port nodes,
    # `t_x = in` in the script, are read as other names of their input)
    back = from_python(to_python(CASES["nested"], "torch"))
    ports = {n.id for n in flat.nodes if n.op in ("module_input", "module_output")}
    assert {n.id for n in back.nodes} == {n.id for n in flat.nodes} - ports
    res_a, _ = run_records(CASES["nested"], "backward")
    res_b, _ = run_records(back, "backward")
    assert res_b.status == "ok", res_b.error
    _close(np.asarray(res_b.values["s"].tolist()), res_a.values["s"], "s")
