"""Shared helpers for the engine-vs-torch semantics tests.

Every scenario is written once as a function of a library module (``lib``), then run
with ``torch`` and with ``engine``; results are converted to plain numpy/python values
and compared.  Setting ``ENGINE_TESTS_AGAINST_TORCH=1`` points the engine side at torch
itself, which is how the tests' own logic is validated.
"""

from __future__ import annotations

import importlib
import os
import warnings

import numpy as np
import torch

AGAINST_TORCH = bool(os.environ.get("ENGINE_TESTS_AGAINST_TORCH"))
eg = torch if AGAINST_TORCH else importlib.import_module("engine")
LIBS = (torch, eg)
ENGINE_NAME = eg.__name__


def is_tensor(obj) -> bool:
    return hasattr(obj, "detach") and hasattr(obj, "numpy") and hasattr(obj, "shape")


def to_py(obj):
    """Convert tensors (possibly nested in tuples/lists/dicts) to numpy arrays."""
    if obj is None:
        return None
    if is_tensor(obj):
        return np.asarray(obj.detach().cpu().numpy())
    if isinstance(obj, (tuple, list)):
        return [to_py(o) for o in obj]
    if isinstance(obj, dict):
        return {k: to_py(v) for k, v in obj.items()}
    return obj


def assert_tree_close(expected, actual, rtol=1e-5, atol=1e-6, path="result"):
    """Compare two converted (``to_py``) trees; ``expected`` comes from torch."""
    if expected is None:
        assert actual is None, f"{path}: torch gives None, engine gives {actual!r}"
        return
    if isinstance(expected, np.ndarray):
        assert actual is not None, f"{path}: torch gives an array, engine gives None"
        actual = np.asarray(actual)
        assert actual.shape == expected.shape, (
            f"{path}: shape {actual.shape} != torch {expected.shape}"
        )
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=path)
        return
    if isinstance(expected, list):
        assert isinstance(actual, list), f"{path}: torch gives a sequence, engine {actual!r}"
        assert len(actual) == len(expected), (
            f"{path}: length {len(actual)} != torch {len(expected)}"
        )
        for i, (e, a) in enumerate(zip(expected, actual)):
            assert_tree_close(e, a, rtol, atol, f"{path}[{i}]")
        return
    if isinstance(expected, dict):
        assert isinstance(actual, dict) and actual.keys() == expected.keys(), path
        for k in expected:
            assert_tree_close(expected[k], actual[k], rtol, atol, f"{path}[{k!r}]")
        return
    if isinstance(expected, float) and not isinstance(expected, bool):
        assert isinstance(actual, (int, float)), f"{path}: engine {actual!r} is not a number"
        if np.isnan(expected):
            assert np.isnan(actual), f"{path}: engine {actual!r} != torch nan"
        else:
            assert np.isclose(actual, expected, rtol=rtol, atol=atol), (
                f"{path}: engine {actual!r} != torch {expected!r}"
            )
        return
    assert actual == expected, f"{path}: engine {actual!r} != torch {expected!r}"


def run_both(scenario):
    """Run ``scenario(lib)`` for torch and the engine; return converted results."""
    return to_py(scenario(torch)), to_py(scenario(eg))


def check_same(scenario, rtol=1e-5, atol=1e-6):
    expected, actual = run_both(scenario)
    assert_tree_close(expected, actual, rtol=rtol, atol=atol)
    return expected, actual


def capture_error(fn, lib):
    try:
        fn(lib)
    except Exception as exc:  # noqa: BLE001 - we want every kind
        return exc
    return None


def main_sentence(msg: str) -> str:
    """The first sentence of an error message (up to '. ', ' (' or ': ')."""
    cut = len(msg)
    for sep in (". ", " (", ": "):
        i = msg.find(sep)
        if i != -1:
            cut = min(cut, i)
    return msg[:cut].rstrip(".").strip()


def assert_same_error(fn, *phrases):
    """``fn(lib)`` must raise in torch and in the engine, with the same exception type.

    With ``phrases``, each phrase must appear in both messages; otherwise the engine's
    message must contain the first sentence of torch's.
    """
    texc = capture_error(fn, torch)
    assert texc is not None, "test bug: torch did not raise"
    eexc = capture_error(fn, eg)
    assert eexc is not None, f"engine did not raise; torch raised {type(texc).__name__}: {texc}"
    assert isinstance(eexc, type(texc)), (
        f"engine raised {type(eexc).__name__}: {eexc}; torch raised {type(texc).__name__}"
    )
    tmsg, emsg = str(texc), str(eexc)
    if phrases:
        for p in phrases:
            assert p in tmsg, f"test bug: {p!r} not in torch message {tmsg!r}"
            assert p in emsg, f"engine message {emsg!r} lacks {p!r} (torch: {tmsg!r})"
    else:
        sentence = main_sentence(tmsg)
        assert sentence in emsg, f"engine message {emsg!r} lacks torch's {sentence!r}"
    return texc, eexc


def record_warnings(fn, lib):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = fn(lib)
    return result, [(w.category, str(w.message)) for w in caught]


def dtype_name(dt) -> str:
    return str(dt).rsplit(".", 1)[-1]


def torch_repr_as_engine(text: str) -> str:
    return text.replace("torch.", f"{ENGINE_NAME}.")


def node_name(node):
    """Node name, with torch's C++ namespace prefix ("torch::autograd::") dropped."""
    return None if node is None else node.name().rsplit("::", 1)[-1]


def graph_structure(node, depth=6):
    """Nested (name, index, children) description of a grad_fn graph."""
    if node is None or depth == 0:
        return None
    children = []
    for nxt, idx in node.next_functions:
        children.append([node_name(nxt), idx, graph_structure(nxt, depth - 1)])
    return [node_name(node), children]
