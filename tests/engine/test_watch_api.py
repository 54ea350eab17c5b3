"""engine.watch, the API for tools that watch autograd at work: what each function answers, on
the engine's own tensors, and that the graph layer's executor uses it rather than the engine's
private names."""

import re
from pathlib import Path

import numpy as np
import pytest

import engine as eg
from engine import watch


def test_array_of_and_from_array_share_memory():
    a = np.arange(6, dtype=np.float32)
    t = watch.from_array(a, requires_grad=True)
    assert watch.array_of(t) is a and t.requires_grad
    assert watch.requires_grad_of(t) is True
    assert watch.requires_grad_of(eg.ones(2)) is False


def test_version_counter_is_shared_by_views_and_counts_writes():
    x = eg.zeros(4)
    assert watch.version(x) == 0
    v = x[1:]
    assert watch.version_counter(v) is watch.version_counter(x) is not None
    v.add_(1.0)
    assert watch.version(x) == watch.version(v) == 1 == x._version
    assert watch.version_counter(eg.zeros(4)) is None  # never viewed or written


def test_stale_saved_names_the_node_whose_saved_tensor_was_written():
    w = eg.ones(3, requires_grad=True)
    h = w * 2.0
    y = h.exp()  # saves its output
    z = (y * h).sum()  # saves y and h
    assert watch.stale_saved(z.grad_fn) is None
    h.mul_(3.0)  # h's version moves: exp's input is not saved, MulBackward0's are
    node, t, want, have = watch.stale_saved(z.grad_fn)
    assert type(node).__name__ == "MulBackward0" and t is not None
    assert (want, have) == (0, 1)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        z.backward()


def test_alias_has_its_own_node_and_passes_the_gradient_through():
    x = eg.ones(2, requires_grad=True)
    a = watch.alias(x)
    assert a.grad_fn is not None and a.grad_fn.next_functions[0][0] is watch.accumulator_of(x)
    seen = []
    with watch.observe_backward(lambda node, gi, go: seen.append(type(node).__name__)):
        (a * 3.0).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3.0, 3.0])
    assert "AliasBackward0" in seen and "AccumulateGrad" not in seen


# the executor and its parts (backend/graph/running/) reach the engine through engine.watch and
# PyTorch's names only
_EXECUTOR = sorted(
    p.stem for p in (Path(__file__).resolve().parents[2] / "backend/graph/running").glob("*.py")
)
_PRIVATE = re.compile(
    r"engine\._|engine\.autograd\.graph|engine\.ops\.|\._(data|requires_grad|version|vc|output_nr"
    r"|saved|versions|seq)\b"
)


@pytest.mark.parametrize("name", _EXECUTOR)
def test_the_executor_uses_no_private_engine_name(name):
    path = Path(__file__).resolve().parents[2] / "backend" / "graph" / "running" / f"{name}.py"
    code = "\n".join(
        line for line in path.read_text().splitlines() if not line.lstrip().startswith("#")
    )
    assert _PRIVATE.findall(code) == []
