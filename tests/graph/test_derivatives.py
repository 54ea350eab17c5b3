"""Each differentiable input of each op carries its local derivative as text in the registry
(`Port.derivative`): what the chain-rule panel shows, read from GET /api/ops. The texts are
checked here for presence and form, and each claim that a derivative is an elementwise factor
is checked against the engine's Jacobian: the panel writes edge ÷ upstream per element as the
local derivative only for those, and a Jacobian that is not diagonal would make it wrong."""

import json
from pathlib import Path

import numpy as np
import pytest

import engine as eg
from backend.graph.document.validate import resolved_params
from backend.graph.op_context import OpContext
from backend.graph.registry import (
    DERIVATIVE_KINDS,
    REGISTRY,
    OpSpec,
    Param,
    Port,
    _check_derivative,
    all_ops,
    placeholders,
    register,
)

DIFFERENTIABLE = [(s.name, p.name) for s in all_ops() for p in s.inputs if not p.no_grad]


def test_every_differentiable_input_of_every_op_has_a_derivative():
    missing = [(op, port) for op, port in DIFFERENTIABLE if not REGISTRY[op].port(port).derivative]
    assert missing == []
    # the ops the page's old hand table lacked are among them
    for op in ("mish", "softmax", "log_softmax", "cross_entropy", "max", "cat", "getitem"):
        assert REGISTRY[op].port(REGISTRY[op].inputs[0].name).derivative, op
    assert len(DIFFERENTIABLE) > 100


def test_describe_gives_the_derivative_with_its_kind_and_the_params_it_depends_on():
    for spec in all_ops():
        for d in spec.describe()["inputs"]:
            port = spec.port(d["name"])
            if port.no_grad:
                assert "derivative" not in d, (spec.name, port.name)
                continue
            der = d["derivative"]
            assert der["text"] == port.derivative and der["kind"] in DERIVATIVE_KINDS
            assert all(spec.param(n) is not None for n in der["params"]), (spec.name, der)
    mul = REGISTRY["mul"].describe()
    assert mul["scalar_for"] == "other"
    assert mul["inputs"][0]["derivative"] == {
        "text": "other",
        "kind": "elementwise",
        "params": ["scalar"],
        "scalar": "{scalar} (the scalar)",
    }
    assert REGISTRY["mse_loss"].describe()["inputs"][1]["derivative"] == {
        "text": "−2·(input − target){reduction|mean:/n}",
        "kind": "elementwise",
        "params": ["reduction"],
    }
    matmul = REGISTRY["matmul"].describe()["inputs"]
    assert [p["derivative"]["kind"] for p in matmul] == ["grad", "grad"]
    assert REGISTRY["softmax"].describe()["inputs"][0]["derivative"]["kind"] == "jacobian"
    assert REGISTRY["hardtanh"].port("input").derivative_params() == ["min_val", "max_val"]
    assert "scalar_for" not in REGISTRY["exp"].describe()


def test_placeholders_are_read_and_an_odd_one_is_refused():
    assert placeholders("1 where {min_val} < input < {max_val}") == [
        ("min_val", None),
        ("max_val", None),
    ]
    assert placeholders("{scalar}·input^{scalar-1}") == [("scalar", None), ("scalar", None)]
    assert placeholders("x{reduction|mean:/n|sum:}") == [("reduction", ("mean", "sum"))]
    with pytest.raises(ValueError, match="not a placeholder"):
        placeholders("{2·x}")
    with pytest.raises(ValueError, match="value:text"):
        placeholders("{reduction|mean}")


def _op(name, port, params=(), **kw):
    return OpSpec(name, "test", "", (port,), run=None, code=None, params=params, **kw)


def test_the_registry_refuses_a_derivative_that_names_no_param_or_value_of_its_op():
    alpha = Param("alpha", "float", 1.0)
    with pytest.raises(ValueError, match="'d_beta', input 'input'.*names 'beta', not a param"):
        register(_op("d_beta", Port("input", derivative="{beta}·input"), (alpha,)))
    reduction = Param("reduction", "choice", "mean", choices=("mean", "sum"))
    with pytest.raises(ValueError, match="'reduction' has no value \\['batchmean'\\]"):
        register(
            _op("d_choice", Port("input", derivative="{reduction|batchmean:/N}"), (reduction,))
        )
    with pytest.raises(ValueError, match="derivative kind 'diagonal' is not known"):
        register(_op("d_kind", Port("input", derivative="1", derivative_kind="diagonal")))
    with pytest.raises(ValueError, match="derivative_scalar needs a scalar_for port"):
        register(
            _op("d_scalar", Port("input", derivative="1", derivative_scalar="{alpha}"), (alpha,))
        )
    log_target = Param("log_target", "bool", False)
    bools = _op("d_bool", Port("input", derivative="{log_target|true:a|false:b}"), (log_target,))
    _check_derivative(bools, bools.inputs[0])  # (register()'s check) bools read true / false
    assert not {"d_beta", "d_choice", "d_kind", "d_scalar"} & REGISTRY.keys()


def _leaf(spec, port, k):
    """The op's sample input for `port` (registry.OpSpec.example; else a [2, 3] rand tensor)."""
    params = spec.example.get(port.name) or {"shape": [2, 3], "init": "rand", "seed": 10 * k}
    source = REGISTRY["tensor"]
    return source.run(OpContext(), [], resolved_params(source, params))


def _jacobian(spec, port):
    """The Jacobian of the op's output on its sample inputs with respect to input `port`
    (rows: output elements), or None where the output has another number of elements than the
    input or just one: the panel reads a per-element local derivative off there only as the
    gradient itself (upstream one number) or not at all."""
    ins, x = [], None
    for k, p in enumerate(spec.inputs):
        t = _leaf(spec, p, k)
        if p.name == port:
            x = t.detach().requires_grad_(True)
            t = x * 1.0  # not the leaf itself: an in-place op writes into what it is given
        ins.append(t)
    # the layer ops (dropout) in train(), where their masks make a difference
    out = spec.run(OpContext(), ins, resolved_params(spec, {"mode": "train"} if spec.layer else {}))
    if out.numel() != x.numel() or out.numel() == 1:
        return None
    flat = out.reshape(-1)
    rows = [eg.autograd.grad(flat[i], x, retain_graph=True)[0] for i in range(flat.numel())]
    return np.stack([np.asarray(r.reshape(-1).tolist()) for r in rows])


def test_a_derivative_called_elementwise_is_a_diagonal_jacobian():
    """Where the output has as many elements as the input, out[i] depends on input[i] alone for
    every port whose derivative is called elementwise: the per-element ratio edge ÷ upstream
    the panel shows is then the local derivative."""
    checked, wrong = [], []
    for spec in all_ops():
        for port in spec.inputs:
            if port.no_grad or port.derivative_kind != "elementwise" or spec.branches:
                continue  # (`if` runs one branch: the executor picks it, not run())
            jac = _jacobian(spec, port.name)
            if jac is None:
                continue
            checked.append(f"{spec.name}.{port.name}")
            if np.any(jac - np.diag(np.diag(jac))):
                wrong.append(f"{spec.name}.{port.name}")
    assert wrong == []
    for case in ("relu.input", "mul.other", "where.other", "setitem.input", "dropout.input"):
        assert case in checked
    assert len(checked) > 60


def test_the_ops_called_jacobian_are_not_elementwise():
    """The other way round: softmax, transpose and getitem's Jacobians on their samples are not
    diagonal, so the panel must not (and does not) show per-element local numbers for them."""
    for op in ("softmax", "log_softmax", "transpose"):
        jac = _jacobian(REGISTRY[op], "input")
        assert jac is not None and np.any(jac - np.diag(np.diag(jac))), op
        assert REGISTRY[op].port("input").derivative_kind != "elementwise"


# The page's unit tests of the chain-rule panel (frontend/src/panels/analysis/explain.test.ts)
# run on what GET /api/ops says of each op's derivatives, kept in this file; an op in it that the
# registry describes otherwise fails here. Rewrite it with
# `.venv/bin/python tests/graph/test_derivatives.py`.
FIXTURE = Path(__file__).parents[2] / "frontend/src/testing/opDerivatives.json"


def chain_rule_view(spec):
    """What the chain-rule panel reads of an op's description (OpSpec.describe())."""
    d = spec.describe()
    return {
        "name": d["name"],
        "inputs": [
            {k: p[k] for k in ("name", "derivative", "no_grad") if k in p} for p in d["inputs"]
        ],
        "params": [{"name": p["name"], "default": p["default"]} for p in d["params"]],
        **({"scalar_for": d["scalar_for"]} if "scalar_for" in d else {}),
    }


def test_the_page_tests_run_on_the_registry_s_derivatives():
    kept = json.loads(FIXTURE.read_text(encoding="utf-8"))
    assert len(kept) > 80
    for name, view in kept.items():
        assert name in REGISTRY, f"{name} is no op now: rewrite {FIXTURE.name}"
        assert view == chain_rule_view(REGISTRY[name]), f"{name} differs: rewrite {FIXTURE.name}"


if __name__ == "__main__":
    views = {s.name: chain_rule_view(s) for s in all_ops() if not s.source}
    FIXTURE.write_text(json.dumps(views, ensure_ascii=False, indent=1) + "\n", encoding="utf-8")
