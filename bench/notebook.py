"""Benchmark the notebook: tracing a model, opening the widget's kernel side, and a run's
records reaching the widget; prints a markdown table.

Run:  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/notebook.py

The model: a residual stack of `Block`s (LayerNorm, Linear, tanh, a half-weighted skip), 100
of them, then a Linear head and cross-entropy: about 700 nodes once its modules are unpacked.

(a) `wg.trace` of the model on a batch of 8 (torch.fx capture, the run on real values, the
    document with its module definitions).
(b) `wg.show(doc)`'s kernel side: the widget and its session (the run and training managers,
    the API app), after the first import. The page's own drawing is not timed here
    (e2e/test_notebook_widget.py opens it in JupyterLab).
(c) a backward run of the document in the kernel, every record packed for the page as the
    widget sends it (the server's wire: its JSON and its arrays' bytes in two binary
    buffers per packet, backend/server/typed_wire.py), against (d) the same run with
    its records appended to a list (`backend.graph.run` with `emit`): the channel's cost.
    Target (issue #33): c <= 1.5x d.

Each figure is the best of five (the machine may be shared: bests are the steady figure)."""

import sys
import tempfile
import time
from pathlib import Path

import torch
import torch.nn.functional as F

# after torch: torch looks for a `cuda` module, and bench/cuda.py must not be the one it finds
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _residual_stack import Deep  # noqa: E402

import wiregrad as wg  # noqa: E402
from backend.graph import parse, run  # noqa: E402


def best(fn, n=5):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return min(times) * 1e3


def main():
    torch.manual_seed(0)
    model = Deep(100)
    x, y = torch.randn(8, 16), torch.randint(0, 4, (8,))

    def loss(x, y):
        return F.cross_entropy(model(x), y)

    doc = wg.trace(loss, x, y)
    flat = len(wg.run(doc).values)
    data = tempfile.mkdtemp()
    wg.show(doc, data_dir=data)  # the first import, not timed
    a = best(lambda: wg.trace(loss, x, y))
    b = best(lambda: wg.show(doc, data_dir=data))
    w = wg.show(doc, data_dir=data)
    sent = []
    w.send = lambda content, buffers=None: sent.append(sum(len(bb) for bb in buffers or ()))
    c = best(lambda: w.run("backward"))
    parsed = parse(doc)
    d = best(lambda: run(parsed, "backward", None, [].append))
    print(f"model: {flat} nodes unpacked; {sum(sent) / 5 / 1e6:.2f} MB to the page per run\n")
    print("| what | ms (best of 5) |")
    print("|---|---|")
    print(f"| (a) wg.trace | {a:.0f} |")
    print(f"| (b) wg.show, kernel side | {b:.0f} |")
    print(f"| (c) backward run, records to the widget | {c:.0f} |")
    print(f"| (d) the same run, records in a list | {d:.0f} |")
    print(f"| c / d (target <= 1.5) | {c / d:.2f} |")


if __name__ == "__main__":
    main()
