"""Benchmark the engine against PyTorch (CPU) and plain numpy; prints a markdown table.

Run:  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/engine.py [--quick]

(a) a chain of 300 small elementwise / broadcast ops on an 8x8 float32 tensor, forward +
    backward, reported as microseconds per op (this is per-op overhead);
(b) one SGD step of an MLP 784-512-10 on a batch of 256 (float32): zero_grad, forward,
    cross-entropy, backward, step; also hand-written in numpy as the floor.
(c) one SGD (momentum 0.9) step of LeNet-5 on a batch of 64 1x28x28 images (float32): two
    conv-relu-maxpool stages, three linear layers, cross-entropy.
(d) one AdamW step of a pre-norm TransformerEncoderLayer (width 128, 4 heads, causal mask,
    GELU MLP of width 512, no dropout) on a batch of 16 sequences of 64 (float32), MSE loss.
(e) random draws from PyTorch's stream: randn and rand of 10^6 float32 after the same seed
    (the engine's values are checked equal to PyTorch's first), and LeNet-5's default init
    (constructing the model: every layer's reset_parameters), equal parameters checked.

The libraries are measured in the same run, interleaved: every repeat times each library
in turn, and the table shows the median over repeats (best in brackets).
"""

from __future__ import annotations

import argparse
import ctypes
import glob
import os
import platform
import statistics
import sys
import time
from pathlib import Path

# This file is called engine.py: drop its own folder from the path so that `import engine`
# finds the package in the repo root, not this script.
_HERE = Path(__file__).resolve().parent
_ROOT = _HERE.parent
sys.path[:] = [p for p in sys.path if Path(p or os.getcwd()).resolve() != _HERE]
sys.path.insert(0, str(_ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

from bench._models import lenet  # noqa: E402

try:
    import engine as eg  # noqa: E402
    import engine.nn as enn  # noqa: E402
    import engine.optim as eoptim  # noqa: E402
    from engine.nn import functional as eF  # noqa: E402

    ENGINE_ERROR = None
except Exception as exc:  # noqa: BLE001 - report and go on with torch and numpy
    eg = enn = eoptim = eF = None
    ENGINE_ERROR = f"{type(exc).__name__}: {exc}"


# --------------------------------------------------------------------------- threads


def numpy_blas_threads() -> tuple[int | None, str]:
    """Thread count of numpy's bundled OpenBLAS (None if it can't be asked)."""
    libdir = Path(np.__file__).resolve().parent.parent / "numpy.libs"
    for lib in sorted(glob.glob(str(libdir / "*openblas*.so*"))):
        try:
            handle = ctypes.CDLL(lib)
        except OSError:
            continue
        for sym in (
            "scipy_openblas_get_num_threads64_",
            "openblas_get_num_threads64_",
            "openblas_get_num_threads",
        ):
            fn = getattr(handle, sym, None)
            if fn is not None:
                fn.restype = ctypes.c_int
                return int(fn()), f"{Path(lib).name}:{sym}"
    return None, "unknown BLAS"


def setup_threads() -> list[str]:
    n, source = numpy_blas_threads()
    if n is None:
        env = os.environ.get("OPENBLAS_NUM_THREADS") or os.environ.get("OMP_NUM_THREADS")
        n = int(env) if env else (os.cpu_count() or 1)
        source += " (thread count from environment / cpu count)"
    torch.set_num_threads(n)
    env_vars = {
        k: os.environ[k]
        for k in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")
        if k in os.environ
    }
    return [
        f"- cpu: {platform.processor() or platform.machine()}, os.cpu_count() = {os.cpu_count()}",
        f"- numpy {np.__version__}, BLAS threads = {n} ({source})",
        f"- torch {torch.__version__}, torch.set_num_threads({n}) -> "
        f"intra-op {torch.get_num_threads()}, inter-op {torch.get_num_interop_threads()}",
        f"- thread env vars: {env_vars or 'none set'}",
        "- load average before the run: " + ", ".join(f"{v:.2f}" for v in os.getloadavg()),
    ]


# --------------------------------------------------------------------------- timing


def timed(fn, inner: int) -> float:
    """Seconds per call of fn, averaged over `inner` back-to-back calls."""
    t0 = time.perf_counter()
    for _ in range(inner):
        fn()
    return (time.perf_counter() - t0) / inner


def interleaved(cases: dict, repeats: int, inner: int) -> dict[str, list[float]]:
    """Time each case once per repeat, rotating the order; return all samples."""
    names = list(cases)
    for fn in cases.values():  # warm up
        fn()
        fn()
    samples = {n: [] for n in names}
    for r in range(repeats):
        order = names[r % len(names) :] + names[: r % len(names)]
        for n in order:
            samples[n].append(timed(cases[n], inner))
    return samples


# --------------------------------------------------------------------------- (a) op chain

N_OPS = 300


def make_chain(lib, data):
    """A forward+backward closure running N_OPS small ops on an 8x8 tensor of `lib`."""
    x0, w0, b0, c0 = data
    b = lib.tensor(b0)  # (8,) broadcast along rows
    c = lib.tensor(c0)  # (8, 1) broadcast along columns

    cycle = [
        lambda h, x, w: h * w,  # mul
        lambda h, x, w: h + b,  # add, broadcast
        lambda h, x, w: h.tanh(),
        lambda h, x, w: h.exp(),  # exp of values in [-1, 1]
        lambda h, x, w: h - c,  # sub, broadcast
        lambda h, x, w: h / 3.0,  # div by a constant
        lambda h, x, w: h.sigmoid(),
        lambda h, x, w: h * h,
        lambda h, x, w: h + x,  # add the input again
        lambda h, x, w: h * 0.5,
    ]
    ops = [cycle[i % len(cycle)] for i in range(N_OPS)]

    def run():
        x = lib.tensor(x0, requires_grad=True)
        w = lib.tensor(w0, requires_grad=True)
        h = x
        for op in ops:
            h = op(h, x, w)
        h.sum().backward()
        return x, w, h

    return run


def bench_chain(quick: bool):
    rng = np.random.default_rng(0)
    data = (
        rng.standard_normal((8, 8)).astype(np.float32),
        rng.uniform(0.5, 1.5, (8, 8)).astype(np.float32),
        rng.standard_normal(8).astype(np.float32) * 0.1,
        rng.standard_normal((8, 1)).astype(np.float32) * 0.1,
    )
    cases = {"torch": make_chain(torch, data)}
    if eg is not None:
        cases["engine"] = make_chain(eg, data)
        # same numbers from both, or the timing means nothing
        xe, we, he = cases["engine"]()
        xt, wt, ht = cases["torch"]()
        for a, b_ in ((he, ht), (xe.grad, xt.grad), (we.grad, wt.grad)):
            np.testing.assert_allclose(
                np.asarray(a.detach().numpy()), b_.detach().numpy(), rtol=1e-3, atol=1e-5
            )
    repeats, inner = (5, 3) if quick else (15, 10)
    samples = interleaved(cases, repeats, inner)
    per_op = {n: [s / N_OPS * 1e6 for s in v] for n, v in samples.items()}
    return per_op, repeats, inner


# --------------------------------------------------------------------------- (b) MLP step

D_IN, D_HID, D_OUT, BATCH, LR = 784, 512, 10, 256, 0.01


def mlp_data():
    rng = np.random.default_rng(1)
    x = rng.standard_normal((BATCH, D_IN)).astype(np.float32)
    y = rng.integers(0, D_OUT, BATCH).astype(np.int64)
    b1, b2 = 1 / np.sqrt(D_IN), 1 / np.sqrt(D_HID)
    params = [
        rng.uniform(-b1, b1, (D_HID, D_IN)).astype(np.float32),
        rng.uniform(-b1, b1, D_HID).astype(np.float32),
        rng.uniform(-b2, b2, (D_OUT, D_HID)).astype(np.float32),
        rng.uniform(-b2, b2, D_OUT).astype(np.float32),
    ]
    return x, y, params


def torch_step_fn(x0, y0, params):
    model = torch.nn.Sequential(
        torch.nn.Linear(D_IN, D_HID), torch.nn.ReLU(), torch.nn.Linear(D_HID, D_OUT)
    )
    with torch.no_grad():
        for p, v in zip(model.parameters(), params):
            p.copy_(torch.from_numpy(v))
    opt = torch.optim.SGD(model.parameters(), lr=LR)
    x, y = torch.from_numpy(x0), torch.from_numpy(y0)

    def step():
        opt.zero_grad()
        loss = torch.nn.functional.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    return step, lambda: [p.detach().numpy().copy() for p in model.parameters()]


def engine_step_fn(x0, y0, params):
    model = enn.Sequential(enn.Linear(D_IN, D_HID), enn.ReLU(), enn.Linear(D_HID, D_OUT))
    model.load_state_dict(
        {k: eg.tensor(v) for k, v in zip(["0.weight", "0.bias", "2.weight", "2.bias"], params)}
    )
    opt = eoptim.SGD(model.parameters(), lr=LR)
    x, y = eg.tensor(x0), eg.tensor(y0)

    def step():
        opt.zero_grad()
        loss = eF.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    return step, lambda: [np.array(p.detach().numpy()) for p in model.parameters()]


def numpy_step_fn(x, y, params):
    P = [p.copy() for p in params]
    rows = np.arange(BATCH)

    def step():
        W1, b1, W2, b2 = P
        h = x @ W1.T + b1
        a = np.maximum(h, 0)
        z = a @ W2.T + b2
        z = z - z.max(axis=1, keepdims=True)
        e = np.exp(z)
        s = e.sum(axis=1, keepdims=True)
        loss = float(np.mean(np.log(s[:, 0]) - z[rows, y]))
        dz = e / s
        dz[rows, y] -= 1.0
        dz /= BATCH
        gW2 = dz.T @ a
        gb2 = dz.sum(axis=0)
        dh = dz @ W2
        dh *= h > 0
        gW1 = dh.T @ x
        gb1 = dh.sum(axis=0)
        for p, g in zip(P, (gW1, gb1, gW2, gb2)):
            p -= LR * g
        return loss

    return step, lambda: [p.copy() for p in P]


def bench_mlp(quick: bool):
    x, y, params = mlp_data()
    makers = {"torch": torch_step_fn, "numpy": numpy_step_fn}
    if eg is not None:
        makers["engine"] = engine_step_fn
    # check: one step from the same start gives the same loss and weights everywhere
    check = {}
    for name, make in makers.items():
        step, get = make(x, y, params)
        loss = step()
        check[name] = (loss, get())
    for name, (loss, ws) in check.items():
        ref_loss, ref_ws = check["torch"]
        assert abs(loss - ref_loss) < 1e-4 * max(1.0, abs(ref_loss)), (name, loss, ref_loss)
        for a, b in zip(ws, ref_ws):
            np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5, err_msg=name)

    cases = {name: make(x, y, params)[0] for name, make in makers.items()}
    repeats, inner = (3, 2) if quick else (9, 5)
    samples = interleaved(cases, repeats, inner)
    return {n: [s * 1e3 for s in v] for n, v in samples.items()}, repeats, inner


# --------------------------------------------------------------------------- (c) LeNet-5 step

LENET_BATCH, LENET_LR = 64, 0.01


def lenet_step_fn(lib, x0, y0, state):
    """An SGD (momentum 0.9) step closure of lib's LeNet from the given weights."""
    nn, F = (torch.nn, torch.nn.functional) if lib is torch else (enn, eF)
    model = lenet(nn)
    model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    optim = torch.optim if lib is torch else eoptim
    opt = optim.SGD(model.parameters(), lr=LENET_LR, momentum=0.9)
    x, y = lib.tensor(x0), lib.tensor(y0)

    def step():
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        return loss.item()

    return step, lambda: [np.array(p.detach().numpy()) for p in model.parameters()]


def bench_lenet(quick: bool):
    rng = np.random.default_rng(2)
    x = rng.standard_normal((LENET_BATCH, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, LENET_BATCH).astype(np.int64)
    torch.manual_seed(0)
    state = {k: v.numpy().copy() for k, v in lenet(torch.nn).state_dict().items()}
    libs = [torch] + ([eg] if eg is not None else [])
    names = {torch: "torch", eg: "engine"}
    check = {}
    for lib in libs:  # one step from the same start gives the same loss and weights
        step, get = lenet_step_fn(lib, x, y, state)
        check[names[lib]] = (step(), get())
    ref_loss, ref_ws = check["torch"]
    for name, (loss, ws) in check.items():
        assert abs(loss - ref_loss) < 1e-4 * max(1.0, abs(ref_loss)), (name, loss, ref_loss)
        for a, b in zip(ws, ref_ws):
            np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5, err_msg=name)
    cases = {names[lib]: lenet_step_fn(lib, x, y, state)[0] for lib in libs}
    repeats, inner = (3, 2) if quick else (9, 5)
    samples = interleaved(cases, repeats, inner)
    return {n: [s * 1e3 for s in v] for n, v in samples.items()}, repeats, inner


# --------------------------------------------------------------------------- (d) transformer step

TF_BATCH, TF_SEQ, TF_WIDTH, TF_HEADS, TF_FF, TF_LR = 16, 64, 128, 4, 512, 1e-3


def transformer_step_fn(lib, x0, y0, state):
    """An AdamW step closure of one pre-norm encoder layer (causal self-attention, GELU MLP,
    no dropout so the libraries agree) with an MSE loss, from the given weights."""
    nn, F = (torch.nn, torch.nn.functional) if lib is torch else (enn, eF)
    model = nn.TransformerEncoderLayer(
        TF_WIDTH, TF_HEADS, TF_FF, dropout=0.0, activation="gelu", batch_first=True,
        norm_first=True,
    )  # fmt: skip
    model.load_state_dict({k: lib.tensor(v) for k, v in state.items()})
    optim = torch.optim if lib is torch else eoptim
    opt = optim.AdamW(model.parameters(), lr=TF_LR)
    x, y = lib.tensor(x0), lib.tensor(y0)
    mask = lib.tensor(np.triu(np.full((TF_SEQ, TF_SEQ), -np.inf, np.float32), 1))

    def step():
        opt.zero_grad()
        loss = F.mse_loss(model(x, src_mask=mask, is_causal=True), y)
        loss.backward()
        opt.step()
        return loss.item()

    return step, lambda: [np.array(p.detach().numpy()) for p in model.parameters()]


def bench_transformer(quick: bool):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((TF_BATCH, TF_SEQ, TF_WIDTH)).astype(np.float32)
    y = rng.standard_normal((TF_BATCH, TF_SEQ, TF_WIDTH)).astype(np.float32)
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(TF_WIDTH, TF_HEADS, TF_FF, batch_first=True)
    state = {k: v.numpy().copy() for k, v in layer.state_dict().items()}
    libs = [torch] + ([eg] if eg is not None else [])
    names = {torch: "torch", eg: "engine"}
    check = {}
    for lib in libs:  # one step from the same start gives the same loss and weights
        step, get = transformer_step_fn(lib, x, y, state)
        check[names[lib]] = (step(), get())
    ref_loss, ref_ws = check["torch"]
    for name, (loss, ws) in check.items():
        assert abs(loss - ref_loss) < 1e-4 * max(1.0, abs(ref_loss)), (name, loss, ref_loss)
        for a, b in zip(ws, ref_ws):
            np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5, err_msg=name)
    cases = {names[lib]: transformer_step_fn(lib, x, y, state)[0] for lib in libs}
    repeats, inner = (3, 2) if quick else (9, 5)
    samples = interleaved(cases, repeats, inner)
    return {n: [s * 1e3 for s in v] for n, v in samples.items()}, repeats, inner


# --------------------------------------------------------------------------- (e) random draws

RANDOM_N = 10**6


def bench_random(quick: bool):
    """{row: {library: samples in ms}} for randn / rand of 10^6 float32 and LeNet-5's init."""
    libs = [torch] + ([eg] if eg is not None else [])
    names = {torch: "torch", eg: "engine"}
    draws = {
        "randn": lambda lib: lib.randn(RANDOM_N),
        "rand": lambda lib: lib.rand(RANDOM_N),
        "init": lambda lib: lenet(lib.nn),
    }
    for row, draw in draws.items():  # the same seed gives the same numbers in both
        got = {}
        for lib in libs:
            lib.manual_seed(0)
            out = draw(lib)
            tensors = [out] if row != "init" else [p for _, p in out.named_parameters()]
            got[names[lib]] = [np.asarray(t.detach().numpy()) for t in tensors]
        for name, arrays in got.items():
            for a, b in zip(arrays, got["torch"]):
                np.testing.assert_array_equal(a, b, err_msg=f"{row} ({name})")
    repeats, inner = (3, 2) if quick else (9, 5)
    out = {}
    for row, draw in draws.items():
        cases = {names[lib]: (lambda lib=lib, draw=draw: draw(lib)) for lib in libs}
        samples = interleaved(cases, repeats, inner)
        out[row] = {n: [s * 1e3 for s in v] for n, v in samples.items()}
    return out, repeats, inner


# --------------------------------------------------------------------------- report


def cell(values):
    if values is None:
        return "n/a"
    return f"{statistics.median(values):.3g} ({min(values):.3g})"


def ratio(a, b):
    if a is None or b is None:
        return "n/a"
    return f"{statistics.median(a) / statistics.median(b):.2f}x ({min(a) / min(b):.2f}x)"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="few repeats, for a smoke run")
    ap.add_argument(
        "--only",
        choices=("chain", "mlp", "lenet", "transformer", "random"),
        help="run just this row",
    )
    args = ap.parse_args(argv)

    print("## engine benchmark\n")
    for line in setup_threads():
        print(line)
    if ENGINE_ERROR:
        print(f"- engine: NOT IMPORTABLE ({ENGINE_ERROR}); its columns show n/a")
    print()

    def run(name, bench):  # a skipped row gives no samples and is not printed
        return bench(args.quick) if args.only in (None, name) else ({}, 0, 0)

    chain, c_rep, c_in = run("chain", bench_chain)
    mlp, m_rep, m_in = run("mlp", bench_mlp)
    lenet_t, l_rep, l_in = run("lenet", bench_lenet)
    tf, t_rep, t_in = run("transformer", bench_transformer)
    rnd, r_rep, r_in = run("random", bench_random)

    print(
        "| benchmark | engine | PyTorch CPU | numpy | engine/torch | engine/numpy |\n"
        "|---|---|---|---|---|---|"
    )
    if chain:
        print(
            f"| (a) {N_OPS}-op elementwise chain, 8x8 f32, fwd+bwd, us/op "
            f"| {cell(chain.get('engine'))} | {cell(chain['torch'])} | - "
            f"| {ratio(chain.get('engine'), chain['torch'])} | - |"
        )
    if mlp:
        print(
            f"| (b) MLP {D_IN}-{D_HID}-{D_OUT} SGD step, batch {BATCH}, f32, ms/step "
            f"| {cell(mlp.get('engine'))} | {cell(mlp['torch'])} | {cell(mlp['numpy'])} "
            f"| {ratio(mlp.get('engine'), mlp['torch'])} "
            f"| {ratio(mlp.get('engine'), mlp['numpy'])} |"
        )
    if lenet_t:
        print(
            f"| (c) LeNet-5 SGD step (momentum 0.9), batch {LENET_BATCH}, 1x28x28 f32, ms/step; "
            f"target engine/torch <= 1.5x (aim 1.0x) | {cell(lenet_t.get('engine'))} "
            f"| {cell(lenet_t['torch'])} | - "
            f"| {ratio(lenet_t.get('engine'), lenet_t['torch'])} | - |"
        )
    if tf:
        print(
            f"| (d) pre-norm encoder layer AdamW step (causal {TF_HEADS}-head attention, GELU MLP "
            f"{TF_FF}), batch {TF_BATCH} x seq {TF_SEQ} x width {TF_WIDTH} f32, ms/step; "
            f"target engine/torch <= 1.5x | {cell(tf.get('engine'))} | {cell(tf['torch'])} | - "
            f"| {ratio(tf.get('engine'), tf['torch'])} | - |"
        )
    titles = {
        "randn": f"(e) randn({RANDOM_N:.0e}) f32 after manual_seed, PyTorch's numbers, ms",
        "rand": f"(e) rand({RANDOM_N:.0e}) f32, PyTorch's numbers, ms",
        "init": "(e) LeNet-5 default init (construction), PyTorch's parameters, ms",
    }
    for row, title in titles.items():
        if rnd:
            r = rnd[row]
            print(
                f"| {title}; target engine/torch <= 2x | {cell(r.get('engine'))} "
                f"| {cell(r['torch'])} | - | {ratio(r.get('engine'), r['torch'])} | - |"
            )
    print(
        "\nmedian over repeats (best in brackets; ratios: of medians (of bests)); "
        f"(a) {c_rep} repeats x {c_in} runs, "
        f"(b) {m_rep} repeats x {m_in} steps, (c) {l_rep} repeats x {l_in} steps, "
        f"(d) {t_rep} repeats x {t_in} steps, (e) {r_rep} repeats x {r_in} draws, "
        "libraries interleaved within each repeat. "
        "Results were checked to agree across libraries before timing."
    )


if __name__ == "__main__":
    main()
