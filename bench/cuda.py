"""Benchmark the engine on a GPU (cupy) against PyTorch CUDA; prints a markdown table.

Run on a machine with an NVIDIA GPU, cupy and PyTorch:

    python3 bench/cuda.py [--device cuda] [--quick]

(`--device cpu` runs the same rows on the CPU, to check the script where there is no GPU.)

Rows: one SGD (momentum 0.9) step of LeNet-5 on 1x28x28 images and one AdamW step of a
pre-norm TransformerEncoderLayer (width 128, 4 heads, causal mask, GELU MLP 512), each at the
CPU bench's size (bench/engine.py: LeNet batch 64, encoder 16x64) and at a size where the GPU
has work to do (LeNet batch 1024, encoder 64x256). Both libraries start from the same weights
and are checked to give the same first loss. Each step ends with `loss.item()`, which waits
for the device, so a step's time is the device's too. Each library is timed in turn over
repeats (interleaved); the table shows the best and the median.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

_HERE = Path(__file__).resolve().parent
sys.path[:] = [p for p in sys.path if Path(p or os.getcwd()).resolve() != _HERE]
sys.path.insert(0, str(_HERE.parent))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import engine as eg  # noqa: E402
import engine.nn as enn  # noqa: E402
import engine.optim as eoptim  # noqa: E402
from bench._models import lenet  # noqa: E402
from engine.nn import functional as eF  # noqa: E402


def encoder(nn, width, heads, ff):
    return nn.TransformerEncoderLayer(
        width, heads, ff, dropout=0.0, activation="gelu", batch_first=True, norm_first=True
    )


def step_fn(lib, device, make, loss_of, optimizer, state, inputs):
    """A training step closure of `lib`'s model on `device`, from the weights `state`."""
    nn, F = (torch.nn, torch.nn.functional) if lib is torch else (enn, eF)
    model = make(nn)
    model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    model = model.to(device)
    opt = optimizer(torch.optim if lib is torch else eoptim, model.parameters())
    tensors = [lib.tensor(a).to(device) for a in inputs]

    def step():
        opt.zero_grad()
        loss = loss_of(F, model, *tensors)
        loss.backward()
        opt.step()
        return loss.item()  # waits for the device

    return step


def lenet_case(batch):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((batch, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, batch).astype(np.int64)
    torch.manual_seed(0)
    state = {k: v.numpy().copy() for k, v in lenet(torch.nn).state_dict().items()}
    return (
        lenet,
        lambda F, m, x, y: F.cross_entropy(m(x), y),
        lambda optim, params: optim.SGD(params, lr=0.05, momentum=0.9),
        state,
        (x, y),
    )


def encoder_case(batch, seq, width=128, heads=4, ff=512):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((batch, seq, width)).astype(np.float32)
    y = rng.standard_normal((batch, seq, width)).astype(np.float32)
    mask = np.triu(np.full((seq, seq), -np.inf, np.float32), 1)
    torch.manual_seed(0)
    state = {
        k: v.numpy().copy() for k, v in encoder(torch.nn, width, heads, ff).state_dict().items()
    }

    def make(nn):
        return encoder(nn, width, heads, ff)

    return (
        make,
        lambda F, m, x, y, mask: F.mse_loss(m(x, src_mask=mask, is_causal=True), y),
        lambda optim, params: optim.AdamW(params, lr=1e-3),
        state,
        (x, y, mask),
    )


def measure(case, device, repeats, inner):
    make, loss_of, optimizer, state, inputs = case
    libs = {"torch": torch, "engine": eg}
    first = {
        n: step_fn(lib, device, make, loss_of, optimizer, state, inputs)()
        for n, lib in libs.items()
    }
    assert abs(first["engine"] - first["torch"]) < 1e-3 * max(1.0, abs(first["torch"])), first
    steps = {
        n: step_fn(lib, device, make, loss_of, optimizer, state, inputs) for n, lib in libs.items()
    }
    for step in steps.values():  # warm-up: kernels compiled, memory pools filled
        for _ in range(3):
            step()
    samples = {n: [] for n in steps}
    for _ in range(repeats):
        for n, step in steps.items():
            t0 = time.perf_counter()
            for _ in range(inner):
                step()
            samples[n].append((time.perf_counter() - t0) / inner * 1e3)
    return first, samples


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args(argv)
    if args.device == "cuda":
        assert eg.cuda.is_available(), "the engine sees no GPU (cupy with a CUDA device)"
        assert torch.cuda.is_available(), "PyTorch sees no GPU"
        print(f"GPU: {torch.cuda.get_device_name(0)}; torch {torch.__version__}", end="")
        import cupy

        print(f"; cupy {cupy.__version__}; numpy {np.__version__}")
    repeats, inner = (3, 3) if args.quick else (7, 10)
    rows = [
        ("LeNet-5 SGD step, batch 64", lenet_case(64)),
        ("LeNet-5 SGD step, batch 1024", lenet_case(1024)),
        ("pre-norm encoder layer AdamW step, 16x64x128", encoder_case(16, 64)),
        ("pre-norm encoder layer AdamW step, 64x256x128", encoder_case(64, 256)),
    ]
    head = ("engine ms best (median)", "torch ms best (median)", "engine/torch (bests)")
    print(f"\n| {args.device} | " + " | ".join(head) + " | first loss engine / torch |")
    print("|---|---|---|---|---|")
    for name, case in rows:
        first, s = measure(case, args.device, repeats, inner)
        e, t = s["engine"], s["torch"]
        print(
            f"| {name} | {min(e):.2f} ({statistics.median(e):.2f}) "
            f"| {min(t):.2f} ({statistics.median(t):.2f}) | {min(e) / min(t):.2f}x "
            f"| {first['engine']:.5f} / {first['torch']:.5f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
