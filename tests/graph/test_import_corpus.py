"""Import of real scripts (tests/graph/import_corpus/, each with its source and adaptations in
its header): PyTorch runs each in a subprocess; Wiregrad reads the same text (never running it:
a line appended to it writes a marker file, which the import must not create), runs the
document, and the loss and every parameter's gradient must equal PyTorch's.

Both sides start their layers from the same values. A script in SEEDED makes its layers
right after torch.manual_seed, which the importer reads as their seeds (random_draws.py): its
layers start from PyTorch's own default init on both sides. In the others, Linear, Conv2d and
Embedding start from a fixed pattern of their shape on both sides, so that what is compared is
the reading of the code. The scripts not yet read are listed in NOT_YET with the line the
importer stops at."""

import inspect
import textwrap
from pathlib import Path

import numpy as np
import pytest
from test_import_pytorch import run_imported, run_pytorch

import engine
from backend.graph.importing.importer import ImportFailed, from_python

ROOT = Path(__file__).parents[2]
CORPUS = Path(__file__).parent / "import_corpus"
SCRIPTS = sorted(p.name for p in CORPUS.glob("*.py"))

# script -> (line, words of the problem) where the importer stops today
NOT_YET = {
    # the RNN module (two nn.Linear) called once per letter: a layer node's weights are its own
    "char_rnn_classification.py": (67, "'rnn' is called a second time"),
}


# the same fixed start for a layer's parameters on both sides (lib: torch or the engine)
def _fill(lib, module):
    """A fixed, fan-scaled pattern for a layer's parameters, the same in both libraries."""
    with lib.no_grad():
        for k, (_, p) in enumerate(module.named_parameters(recurse=False)):
            n = p.numel()
            wave = lib.sin(lib.arange(n, dtype=lib.float64) * 0.7 + 0.3 * k + 0.1 * (n % 7))
            fan = p.shape[1] * (p[0][0].numel() if p.dim() > 2 else 1) if p.dim() > 1 else n
            p.copy_((wave * (1.0 / fan) ** 0.5).to(p.dtype).reshape(p.shape))


# scripts compared from PyTorch's own seeded init (no fixed pattern on either side)
SEEDED = {"bigram_lm.py"}
_LAYERS = ("Linear", "Conv2d", "Embedding")
_RUNNER = (
    inspect.getsource(_fill)
    + """
import json, sys, torch
LAYERS = sys.argv[1:]  # the layer classes that start from the fixed pattern
for _name in LAYERS:
    setattr(getattr(torch.nn, _name), "reset_parameters", lambda self, *a: _fill(torch, self))
scope = {"__name__": "__main__"}
exec(compile(sys.stdin.read(), "script", "exec"), scope)
grads, seen = [], set()  # (a tensor held by two names, or a module's and its part's: once)
for v in scope.values():
    if isinstance(v, torch.nn.Module):
        leaves = [p for p in v.parameters() if p.grad is not None]
    elif isinstance(v, torch.Tensor) and v.is_leaf and v.grad is not None:
        leaves = [v]
    else:
        leaves = []
    grads += [p.grad.tolist() for p in leaves if id(p) not in seen]
    seen |= {id(p) for p in leaves}
print(json.dumps({"loss": scope["loss"].item(), "grads": grads}))
"""
)


def _text(name, marker):
    return (CORPUS / name).read_text() + f"\nopen({str(marker)!r}, 'w').write('ran')\n"


def _pytorch(text, fixed=True):
    """PyTorch's numbers for a script, its layers from the fixed pattern where `fixed`."""
    return run_pytorch(_RUNNER, text, args=_LAYERS if fixed else ())


@pytest.fixture
def fixed_layers(monkeypatch):
    for name in _LAYERS:
        monkeypatch.setattr(
            getattr(engine.nn, name),
            "reset_parameters",
            lambda self, *a, **k: _fill(engine, self),
        )


def test_the_corpus_has_thirty_scripts_or_more():
    assert len(SCRIPTS) >= 30


@pytest.mark.parametrize("name", SCRIPTS)
def test_corpus_script_imports_to_pytorchs_numbers(name, tmp_path, request):
    if name not in SEEDED:
        request.getfixturevalue("fixed_layers")
    marker = tmp_path / "ran.txt"
    text = _text(name, marker)
    if name in NOT_YET:
        line, words = NOT_YET[name]
        with pytest.raises(ImportFailed) as failed:
            from_python(text)
        first = failed.value.problems[0]
        assert (first.line, words in first.message) == (line, True), str(failed.value)
        assert not marker.exists()
        return
    doc = from_python(text)
    assert not marker.exists(), "the import ran the script"
    want = _pytorch(text, fixed=name not in SEEDED)
    assert marker.exists()  # (the line runs where the script does)
    assert_same_numbers(doc, want)


def script_text(src):
    """A script written indented inside a test file, as the file it stands for."""
    return textwrap.dedent(src).lstrip()


def pytorch_numbers_of(scripts):
    """PyTorch's numbers for each of {name: indented script} (one runner call each)."""
    return {name: _pytorch(script_text(src)) for name, src in scripts.items()}


def assert_imports_to_pytorchs_numbers(src):
    """An indented script imports to a document with PyTorch's loss and gradients."""
    want = _pytorch(script_text(src))
    assert_same_numbers(from_python(script_text(src)), want)


def assert_same_numbers(doc, want):
    """The imported document's loss and leaf gradients equal PyTorch's (`want`, the runner's
    JSON): every gradient PyTorch has, equal to one of the import's, each used once."""
    res = run_imported(doc)
    got_loss = float(res.values[doc.target].detach().item())
    np.testing.assert_allclose(got_loss, want["loss"], rtol=1e-5, atol=1e-6)
    left = [np.asarray(g.detach().tolist()) for g in res.leaf_grads.values()]
    assert len(left) == len(want["grads"]), "the import has other leaves than PyTorch"
    for k, g in enumerate(want["grads"]):
        g = np.asarray(g)
        match = next(
            (
                i
                for i, x in enumerate(left)
                if x.shape == g.shape and np.allclose(x, g, rtol=1e-4, atol=1e-5)
            ),
            None,
        )
        assert match is not None, f"gradient {k} of shape {g.shape} has no equal in the import"
        left.pop(match)
