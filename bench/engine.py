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

Each library is timed in a process of its own (numpy's OpenBLAS threads and PyTorch's OpenMP
threads spinning in one process slow each other, which inflated PyTorch's medians up to 8x),
started in turns (engine, PyTorch, numpy, then again in another order) so that a change in the
machine's load reaches every library alike; each process warms up, then times repeats of a few
steps. Before timing, the parent process runs every library once from the same start and checks
that they agree. Rows (c) and (d) run with every core (each library's threads set to the cores
this process may use) and with one thread each. The table shows the best sample (the steady
figure: a shared machine only ever adds time) and the median; the verdict compares the bests
with the target, "met" only when they meet it.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# This file is called engine.py: drop its own folder from the path so that `import engine`
# finds the package in the repo root, not this script.
_HERE = Path(__file__).resolve().parent
_ROOT = _HERE.parent
sys.path[:] = [p for p in sys.path if Path(p or os.getcwd()).resolve() != _HERE]
sys.path.insert(0, str(_ROOT))

import numpy as np  # noqa: E402

from bench._models import lenet  # noqa: E402

# A worker process imports only the library it times (see main): PyTorch's OpenMP threads must
# not share the process with the engine's numpy.
_WORKER_LIB = sys.argv[sys.argv.index("--worker") + 1] if "--worker" in sys.argv[:-1] else None

if _WORKER_LIB in (None, "torch"):
    import torch  # noqa: E402
else:
    torch = None

eg = enn = eoptim = eF = None
ENGINE_ERROR = None
if _WORKER_LIB in (None, "engine"):
    try:
        import engine as eg  # noqa: E402
        import engine.nn as enn  # noqa: E402
        import engine.optim as eoptim  # noqa: E402
        from engine.nn import functional as eF  # noqa: E402
    except Exception as exc:  # noqa: BLE001 - report and go on with torch and numpy
        eg = enn = eoptim = eF = None
        ENGINE_ERROR = f"{type(exc).__name__}: {exc}"


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


def chain_data():
    rng = np.random.default_rng(0)
    return (
        rng.standard_normal((8, 8)).astype(np.float32),
        rng.uniform(0.5, 1.5, (8, 8)).astype(np.float32),
        rng.standard_normal(8).astype(np.float32) * 0.1,
        rng.standard_normal((8, 1)).astype(np.float32) * 0.1,
    )


def check_chain(state):
    data = chain_data()
    # same numbers from both, or the timing means nothing
    xe, we, he = make_chain(eg, data)()
    xt, wt, ht = make_chain(torch, data)()
    for a, b_ in ((he, ht), (xe.grad, xt.grad), (we.grad, wt.grad)):
        np.testing.assert_allclose(
            np.asarray(a.detach().numpy()), b_.detach().numpy(), rtol=1e-3, atol=1e-5
        )


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


MLP_STEPS = {"torch": torch_step_fn, "engine": engine_step_fn, "numpy": numpy_step_fn}


def check_mlp(state):
    x, y, params = mlp_data()
    # one step from the same start gives the same loss and weights everywhere
    check = {}
    for name, make in MLP_STEPS.items():
        step, get = make(x, y, params)
        loss = step()
        check[name] = (loss, get())
    ref_loss, ref_ws = check["torch"]
    for name, (loss, ws) in check.items():
        assert abs(loss - ref_loss) < 1e-4 * max(1.0, abs(ref_loss)), (name, loss, ref_loss)
        for a, b in zip(ws, ref_ws):
            np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5, err_msg=name)


# --------------------------------------------------------------------------- (c) LeNet-5 step

LENET_BATCH, LENET_LR = 64, 0.01


def lenet_data():
    rng = np.random.default_rng(2)
    x = rng.standard_normal((LENET_BATCH, 1, 28, 28)).astype(np.float32)
    y = rng.integers(0, 10, LENET_BATCH).astype(np.int64)
    return x, y


def lenet_state():
    torch.manual_seed(0)
    return {k: v.numpy().copy() for k, v in lenet(torch.nn).state_dict().items()}


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


def check_steps(make, data, state):
    """One step of each library from the same start gives the same loss and weights."""
    check = {}
    for lib in (torch, eg):
        step, get = make(lib, *data, state)
        check[lib.__name__] = (step(), get())
    ref_loss, ref_ws = check["torch"]
    for name, (loss, ws) in check.items():
        assert abs(loss - ref_loss) < 1e-4 * max(1.0, abs(ref_loss)), (name, loss, ref_loss)
        for a, b in zip(ws, ref_ws):
            np.testing.assert_allclose(a, b, rtol=1e-3, atol=1e-5, err_msg=name)


def check_lenet(state):
    check_steps(lenet_step_fn, lenet_data(), state["lenet"])


# --------------------------------------------------------------------------- (d) transformer step

TF_BATCH, TF_SEQ, TF_WIDTH, TF_HEADS, TF_FF, TF_LR = 16, 64, 128, 4, 512, 1e-3


def transformer_data():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((TF_BATCH, TF_SEQ, TF_WIDTH)).astype(np.float32)
    y = rng.standard_normal((TF_BATCH, TF_SEQ, TF_WIDTH)).astype(np.float32)
    return x, y


def transformer_state():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(TF_WIDTH, TF_HEADS, TF_FF, batch_first=True)
    return {k: v.numpy().copy() for k, v in layer.state_dict().items()}


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


def check_transformer(state):
    check_steps(transformer_step_fn, transformer_data(), state["transformer"])


# --------------------------------------------------------------------------- (e) random draws

RANDOM_N = 10**6
DRAWS = {
    "randn": lambda lib: lib.randn(RANDOM_N),
    "rand": lambda lib: lib.rand(RANDOM_N),
    "init": lambda lib: lenet(lib.nn),
}


def check_random(state):
    """The same seed gives the same numbers in both, for randn / rand of 10^6 float32 and
    LeNet-5's init."""
    for row, draw in DRAWS.items():
        got = {}
        for lib in (torch, eg):
            lib.manual_seed(0)
            out = draw(lib)
            tensors = [out] if row != "init" else [p for _, p in out.named_parameters()]
            got[lib.__name__] = [np.asarray(t.detach().numpy()) for t in tensors]
        for name, arrays in got.items():
            for a, b in zip(arrays, got["torch"]):
                np.testing.assert_array_equal(a, b, err_msg=f"{row} ({name})")


# --------------------------------------------------------------------------- rows

LIBS = ("engine", "torch", "numpy")
ROWS = {
    # name: (title, libraries, unit scale, targets {other library: engine/other at most},
    #        (repeats, steps a repeat), check, whether it also runs on one thread)
    "chain": (
        f"(a) {N_OPS}-op elementwise chain, 8x8 f32, fwd+bwd, µs/op",
        ("engine", "torch"), 1e6 / N_OPS, {"torch": 1.0}, (15, 10), check_chain, False,
    ),
    "mlp": (
        f"(b) MLP {D_IN}-{D_HID}-{D_OUT} SGD step, batch {BATCH}, f32, ms/step",
        ("engine", "torch", "numpy"), 1e3, {"torch": 1.25, "numpy": 1.1}, (9, 5), check_mlp,
        False,
    ),
    "lenet": (
        f"(c) LeNet-5 SGD step (momentum 0.9), batch {LENET_BATCH}, 1x28x28 f32, ms/step",
        ("engine", "torch"), 1e3, {"torch": 1.0}, (9, 5), check_lenet, True,
    ),
    "transformer": (
        f"(d) pre-norm encoder layer AdamW step (causal {TF_HEADS}-head attention, GELU MLP "
        f"{TF_FF}), {TF_BATCH} x {TF_SEQ} x {TF_WIDTH} f32, ms/step",
        ("engine", "torch"), 1e3, {"torch": 1.0}, (9, 5), check_transformer, True,
    ),
    "randn": (
        f"(e) randn({RANDOM_N:.0e}) f32 after manual_seed, PyTorch's numbers, ms",
        ("engine", "torch"), 1e3, {"torch": 2.0}, (9, 5), check_random, False,
    ),
    "rand": (
        f"(e) rand({RANDOM_N:.0e}) f32, PyTorch's numbers, ms",
        ("engine", "torch"), 1e3, {"torch": 2.0}, (9, 5), None, False,
    ),
    "init": (
        "(e) LeNet-5 default init (construction), PyTorch's parameters, ms",
        ("engine", "torch"), 1e3, {"torch": 1.0}, (9, 5), None, False,
    ),
}  # fmt: skip
ONE_THREAD_TARGET = 0.9  # engine/torch at one thread each: the engine should lead there
GROUPS = {"random": ("randn", "rand", "init")}


def case(row, lib, state):
    """The callable a worker times: one step (or draw) of `row` in library `lib`."""
    mod = {"torch": torch, "engine": eg}.get(lib)
    if row == "chain":
        return make_chain(mod, chain_data())
    if row == "mlp":
        return MLP_STEPS[lib](*mlp_data())[0]
    if row == "lenet":
        return lenet_step_fn(mod, *lenet_data(), state["lenet"])[0]
    if row == "transformer":
        return transformer_step_fn(mod, *transformer_data(), state["transformer"])[0]
    draw = DRAWS[row]
    return lambda: draw(mod)


def cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# --------------------------------------------------------------------------- worker


def timed(fn, inner: int, clock=time.perf_counter) -> float:
    """Seconds per call of fn, averaged over `inner` back-to-back calls."""
    t0 = clock()
    for _ in range(inner):
        fn()
    return (clock() - t0) / inner


def worker(args) -> None:
    """Time one library on one row in this process; print the samples as JSON."""
    n = args.threads
    if args.worker == "torch":
        torch.set_num_threads(n)
        used = f"torch intra-op {torch.get_num_threads()}"
    elif args.worker == "engine" and hasattr(eg, "set_num_threads"):
        eg.set_num_threads(n)  # numpy's BLAS too
        used = f"engine {eg.get_num_threads()}"
    else:  # numpy, or an engine from before set_num_threads (to compare with old code)
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=n, user_api="blas")
        used = args.worker
    from threadpoolctl import threadpool_info

    blas = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    state = {}
    with np.load(args.state) as z:
        for key in z.files:
            model, name = key.split("|", 1)
            state.setdefault(model, {})[name] = z[key]
    fn = case(args.row, args.worker, state)
    fn()  # warm up: first calls allocate, fill caches, start thread pools
    fn()
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    samples = [timed(fn, args.inner, clock) for _ in range(args.repeats)]
    print(json.dumps({"samples": samples, "threads": f"{used}, BLAS {blas}"}))


def run_worker(lib, row, threads, repeats, inner, state_path, clock) -> dict:
    env = dict(os.environ)
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        env[var] = str(threads)  # each library starts its pools at this size
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", lib, "--row", row]
    cmd += ["--threads", str(threads), "--repeats", str(repeats), "--inner", str(inner)]
    cmd += ["--state", state_path, "--clock", clock]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True)
    if out.returncode:
        raise RuntimeError(f"{lib} worker for {row} failed:\n{out.stderr}")
    return json.loads(out.stdout.splitlines()[-1])


def measure(row, libs, threads, repeats, inner, rounds, state_path, clock):
    """{library: samples} from `rounds` processes a library, started in turns."""
    samples = {lib: [] for lib in libs}
    used = {}
    per = -(-repeats // rounds)
    for r in range(rounds):
        order = libs[r % len(libs) :] + libs[: r % len(libs)]
        for lib in order:
            got = run_worker(lib, row, threads, per, inner, state_path, clock)
            samples[lib] += got["samples"]
            used[lib] = got["threads"]
    return samples, used


# --------------------------------------------------------------------------- report


def cell(values, scale):
    if not values:
        return "n/a"
    return f"{min(values) * scale:.3g} ({statistics.median(values) * scale:.3g})"


def ratio(a, b):
    if not a or not b:
        return None
    return min(a) / min(b), statistics.median(a) / statistics.median(b)


def ratio_cell(r):
    return "-" if r is None else f"{r[0]:.2f}x ({r[1]:.2f}x)"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="few repeats, one process a library")
    ap.add_argument("--only", choices=(*[r for r in ROWS if r not in GROUPS["random"]], "random"))
    ap.add_argument(
        "--threads",
        type=int,
        help="each library's threads (default: every core, and 1 for (c), (d))",
    )
    ap.add_argument(
        "--clock",
        choices=("wall", "cpu"),
        default="wall",
        help="cpu (with --threads 1 only): the process's CPU time, which other work on a "
        "shared machine disturbs far less than the wall clock",
    )
    ap.add_argument("--worker", choices=LIBS, help=argparse.SUPPRESS)
    ap.add_argument("--row", choices=tuple(ROWS), help=argparse.SUPPRESS)
    ap.add_argument("--repeats", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--inner", type=int, help=argparse.SUPPRESS)
    ap.add_argument("--state", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(args)
    if args.clock == "cpu" and args.threads != 1:
        ap.error("--clock cpu adds up the CPU time of every thread: use it with --threads 1")

    rows = list(ROWS) if args.only is None else list(GROUPS.get(args.only, (args.only,)))
    n_cores = cores()
    print("## engine benchmark\n")
    print(f"- cpu: {platform.processor() or platform.machine()}, {n_cores} cores for this process")
    print(
        f"- numpy {np.__version__}, torch {torch.__version__}, python {platform.python_version()}"
    )
    print("- load average before the run: " + ", ".join(f"{v:.2f}" for v in os.getloadavg()))
    print(f"- clock: {'CPU time of each process' if args.clock == 'cpu' else 'wall'}")
    if ENGINE_ERROR:
        print(f"- engine: NOT IMPORTABLE ({ENGINE_ERROR}); its columns show n/a")

    # the weights both libraries start from, for the worker processes
    state = {"lenet": lenet_state(), "transformer": transformer_state()}
    with tempfile.NamedTemporaryFile(suffix=".npz", delete=False) as tmp:
        np.savez(tmp, **{f"{m}|{k}": v for m, d in state.items() for k, v in d.items()})
    lines, used_all = [], {}
    clock_arg = " --clock cpu" if args.clock == "cpu" else ""
    try:
        for row in rows:
            title, libs, scale, targets, (repeats, inner), check, one = ROWS[row]
            if eg is not None and check is not None:
                check(state)  # the libraries agree, or the timing means nothing
            libs = tuple(lib for lib in libs if lib != "engine" or eg is not None)
            if args.quick:
                repeats, inner = 3, 2
            rounds = 1 if args.quick else 3
            counts = [args.threads] if args.threads else [n_cores] + ([1] if one else [])
            for threads in dict.fromkeys(counts):
                samples, used = measure(
                    row, libs, threads, repeats, inner, rounds, tmp.name, args.clock
                )
                used_all.update({f"{lib}, {threads} thread(s)": u for lib, u in used.items()})
                rat = {o: ratio(samples.get("engine"), samples[o]) for o in targets}
                goal = {
                    o: (ONE_THREAD_TARGET if threads == 1 and one else t)
                    for o, t in targets.items()
                }
                verdict = (
                    "n/a"
                    if any(r is None for r in rat.values())
                    else "met"
                    if all(rat[o][0] <= goal[o] for o in goal)
                    else "missed"
                )
                busy = os.getloadavg()[0] > n_cores
                if busy and threads > 1 and args.clock == "wall":
                    # threads that wait for a core at every barrier: no steady figure at all
                    verdict += f" (not steady: load {os.getloadavg()[0]:.1f} on {n_cores} cores)"
                only = "random" if row in GROUPS["random"] else row
                lines.append(
                    f"| {title} | {threads} | {cell(samples.get('engine'), scale)} "
                    f"| {cell(samples.get('torch'), scale)} | {cell(samples.get('numpy'), scale)} "
                    f"| {ratio_cell(rat.get('torch'))} | {ratio_cell(rat.get('numpy'))} "
                    f"| {', '.join(f'≤ {g}x {o}' for o, g in goal.items())}: {verdict} "
                    f"| `bench/engine.py --only {only} --threads {threads}{clock_arg}` |"
                )
                print(
                    f"- {row}, {threads} thread(s): {rounds} process(es) a library x "
                    f"{-(-repeats // rounds)} repeats x {inner} steps",
                    flush=True,
                )
    finally:
        os.unlink(tmp.name)
    for who, used in used_all.items():
        print(f"- threads seen in the {who} worker: {used}")
    print()
    print(
        "| benchmark | threads each | engine | PyTorch CPU | numpy | engine/torch | engine/numpy "
        "| target (on the bests) | command |\n|---|---|---|---|---|---|---|---|---|"
    )
    print("\n".join(lines))
    print(
        "\nbest sample (median in brackets): a sample is the mean of a few back-to-back steps; "
        "ratios of bests (of medians). Each library ran in processes of its own, started in "
        "turns; the libraries' results were checked to agree before timing."
    )


if __name__ == "__main__":
    main()
