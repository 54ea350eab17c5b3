"""Tensor sources the importer works out while reading (importing/calls.py): torch.linspace
(its values from the engine's linspace, within float32 rounding of PyTorch's, which prints
them in a subprocess: the engine's is not always bit-equal yet), torch.zeros_like / ones_like
of a shape known while reading; the forms not read are a problem at their line."""

import numpy as np
import pytest
from test_import_pytorch import run_imported, run_pytorch

from backend.graph.importing.importer import ImportFailed, from_python

SCRIPT = """import math
import torch
a = torch.linspace(-math.pi, math.pi, 37)
b = torch.linspace(0, 1, steps=7, dtype=torch.float64, requires_grad=True)
c = torch.zeros_like(a) + torch.ones_like(b, dtype=torch.float32).sum()
loss = (a.sin() * c).sum() + b.pow(2).sum()
loss.backward()
"""
_RUNNER = """
import json, sys, torch
scope = {}
exec(compile(sys.stdin.read(), "script", "exec"), scope)
out = {k: scope[k].tolist() for k in ("a", "b", "c")}
print(json.dumps(out | {"b.grad": scope["b"].grad.tolist()}))
"""


def test_linspace_and_like_sources_are_pytorchs_values():
    want = run_pytorch(_RUNNER, SCRIPT)
    doc = from_python(SCRIPT)
    res = run_imported(doc)
    for k in ("a", "b", "c"):
        got = np.asarray(res.values[k].tolist())
        assert got.shape == np.asarray(want[k]).shape, k
        np.testing.assert_allclose(got, want[k], rtol=1e-6, atol=1e-7, err_msg=k)
    np.testing.assert_allclose(res.leaf_grads["b"].tolist(), want["b.grad"], rtol=1e-12)


@pytest.mark.parametrize(
    "line, words",
    [
        ("n = torch.ones(1)\nx = torch.linspace(0, 1, n)\n", "constant numbers"),
        ("x = torch.linspace(0, 10, 5, dtype=torch.int64)\n", "float32 and float64"),
        ("x = torch.linspace(0, 1, 10**9)\n", "at most 100,000 steps"),
        ("x = torch.zeros_like(torch.ones(2), device='cpu')\n", "write torch.zeros_like(x)"),
    ],
)
def test_forms_not_read_are_a_problem_at_their_line(line, words):
    with pytest.raises(ImportFailed) as failed:
        from_python("import torch\n" + line)
    last = line.count("\n") + 1
    assert any(p.line == last and words in p.message for p in failed.value.problems), str(
        failed.value
    )
