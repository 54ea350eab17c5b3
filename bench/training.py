"""Benchmark training, in steps per second: an MLP 2-16-16-1 (tanh, sigmoid, binary
cross-entropy, Adam) on 1,000 points of a 2-D dataset, and the LeNet-on-digits template
(`--model lenet`; bench/_lenet.py: two conv blocks and two linear layers on 1,797 8x8 images):

(a) through the server with live streaming: a Socket.IO client sends `train` and counts the
    steps of the `train_progress` packets until `train_finished` (the server in this process,
    on loopback, as in the tests);
(b) the same loop directly on the engine: backend.graph.running.trainer.Trainer without a server,
    and
    a hand-written engine loop (eg.nn.Linear, eg.optim.Adam);
(c) the same hand-written loop in PyTorch (CPU, one thread: the tensors are small).

Targets: (a)/(b) >= 0.7 (streaming costs little); engine/torch time per step <= 1.3 (MLP).
The LeNet table has no torch column: its (b) is the Trainer and the same loop on engine.nn
modules (same initial weights, same batches), and it adds each one's training accuracy.
Each row is the median of the repeats (the methods interleaved). Benchmarks print, never assert.

Run:  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/training.py
      [--quick] [--model mlp|lenet|all]
"""

import argparse
import logging
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests" / "server"))

import numpy as np  # noqa: E402
import torch  # noqa: E402

import engine as eg  # noqa: E402
from backend.graph import parse  # noqa: E402
from backend.graph.ops.datasets import make  # noqa: E402
from backend.graph.running.trainer import Trainer  # noqa: E402

N, HIDDEN = 1000, 16


def document(steps, batch_size):
    def node(i, op, **params):
        return {"id": i, "op": op, "params": params}

    def edge(s, t, port="input"):
        return {"id": f"{s}-{t}-{port}", "source": s, "target": t, "targetPort": port}

    return {
        "nodes": [
            node("data", "dataset", kind="circle", n=N, noise=0.1, seed=0),
            node("y", "labels"),
            node("l1", "linear", out_features=HIDDEN, seed=1),
            node("h1", "tanh"),
            node("l2", "linear", out_features=HIDDEN, seed=2),
            node("h2", "tanh"),
            node("l3", "linear", out_features=1, seed=3),
            node("p", "sigmoid"),
            node("loss", "binary_cross_entropy"),
        ],
        "edges": [
            edge("data", "y", "dataset"),
            edge("data", "l1"),
            edge("l1", "h1"),
            edge("h1", "l2"),
            edge("l2", "h2"),
            edge("h2", "l3"),
            edge("l3", "p"),
            edge("p", "loss"),
            edge("y", "loss", "target"),
        ],
        "training": {
            "loss": "loss",
            "optimizer": "adam",
            "lr": 0.01,
            "steps": steps,
            "batch_size": batch_size,
        },
    }


# -- (a) through the server -------------------------------------------------------------------
class ServerBench:
    def __init__(self):
        from _server_helpers import connect

        from conftest import start_server

        logging.getLogger("werkzeug").setLevel(logging.ERROR)
        self.server = start_server(Path(tempfile.mkdtemp()))
        self.client = connect(self.server.url, record=False)
        self.cond = threading.Condition()
        self.steps = 0
        self.done = None
        self.packets = {"train_progress": 0, "train_snapshot": 0}
        c = self.client.client
        c.on("train_progress", self._progress)
        c.on("train_snapshot", lambda d: self._count("train_snapshot"))
        c.on("train_finished", self._finished)

    def _count(self, event):
        self.packets[event] += 1

    def _progress(self, data):
        self.steps += len(data["steps"])
        self._count("train_progress")

    def _finished(self, data):
        with self.cond:
            self.done = data
            self.cond.notify_all()

    def run(self, steps, batch_size, make=None):
        """steps/s of a training of `make(steps, batch_size)` (default: the MLP document)."""
        self.steps, self.done = 0, None
        self.packets = dict.fromkeys(self.packets, 0)
        graph = (make or document)(steps, batch_size)
        t0 = time.perf_counter()
        ack = self.client.call("train", {"graph": graph}, timeout=60)
        with self.cond:
            while self.done is None:
                self.cond.wait(120)
        dt = time.perf_counter() - t0
        assert "train_id" in ack and self.done["status"] == "ok", (ack, self.done)
        if self.steps != steps:
            print(f"  (server: {self.steps} steps in progress packets, expected {steps})")
        return self.steps / dt


# -- (b) the engine -------------------------------------------------------------------------------
def trainer_loop(steps, batch_size):
    tr = Trainer(parse(document(steps, batch_size)))
    t0 = time.perf_counter()
    tr.run()
    return steps / (time.perf_counter() - t0)


def initial_weights():
    """The layers' initial weights as the graph's linear nodes make them (seeds 1, 2, 3)."""
    out = []
    for seed, (i, o) in zip((1, 2, 3), ((2, HIDDEN), (HIDDEN, HIDDEN), (HIDDEN, 1))):
        layer = eg.nn.Linear(i, o)
        layer.reset_parameters(eg.Generator().manual_seed(seed))
        out.append((layer.weight.detach().numpy().copy(), layer.bias.detach().numpy().copy()))
    return out


def batches(steps, batch_size, seed=0):
    """The Trainer's minibatch order: a permutation per epoch from default_rng(seed)."""
    if batch_size == 0 or batch_size >= N:
        return [None] * steps
    rng, out, perm, pos = np.random.default_rng(seed), [], None, N
    for _ in range(steps):
        if pos >= N:
            perm, pos = rng.permutation(N), 0
        out.append(perm[pos : pos + batch_size])
        pos += batch_size
    return out


def hand_loop(lib, steps, batch_size):
    """The loop written by hand: the same lines run on the engine (`lib` = engine) and on
    PyTorch (`lib` = torch), since the engine mirrors PyTorch's API."""
    x_all, y_all = make("circle", N, 0.1, 0)
    y_all = y_all[:, None]
    layers = []
    for w, b in initial_weights():
        layer = lib.nn.Linear(w.shape[1], w.shape[0])
        with lib.no_grad():
            layer.weight.copy_(lib.tensor(w))
            layer.bias.copy_(lib.tensor(b))
        layers.append(layer)
    l1, l2, l3 = layers
    opt = lib.optim.Adam([p for layer in layers for p in layer.parameters()], lr=0.01)
    bce = lib.nn.functional.binary_cross_entropy
    order = batches(steps, batch_size)
    xs, ys = lib.tensor(x_all), lib.tensor(y_all)
    t0 = time.perf_counter()
    for idx in order:
        if idx is None:
            x, y = xs, ys
        else:
            x, y = lib.tensor(x_all[idx]), lib.tensor(y_all[idx])
        opt.zero_grad()
        loss = bce(lib.sigmoid(l3(lib.tanh(l2(lib.tanh(l1(x)))))), y)
        loss.backward()
        opt.step()
        loss.item()
    return steps / (time.perf_counter() - t0)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="fewer steps and repeats")
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--model", choices=("mlp", "lenet", "all"), default="all")
    args = ap.parse_args()
    repeats = 1 if args.quick else args.repeats
    configs = [(0, 300 if args.quick else 1500), (32, 1000 if args.quick else 5000)]
    # one intra-op thread: these tensors are small, and PyTorch's thread pool spinning for them
    # costs more than it gives (and on a busy machine, many times more)
    torch.set_num_threads(1)
    server = ServerBench()
    if args.model in ("mlp", "all"):
        mlp_table(server, configs, repeats)
    if args.model in ("lenet", "all"):
        lenet_table(server, 100 if args.quick else 300, repeats)
    print(
        "\ntargets: a/b >= 0.7; engine/torch time per step <= 1.3\n"
        "command: env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE .venv/bin/python bench/training.py"
    )
    server.client.client.disconnect()


def lenet_table(server, steps, repeats, batch_size=64):
    """The LeNet-on-digits template: (a) through the server, (b) the Trainer and the same loop
    on engine.nn modules; the training accuracy each reached (the server's: its trained
    document's, evaluated by a Trainer)."""
    import _lenet

    from backend.graph.running.trainer import Trainer as _Trainer

    def server_run(steps, batch_size):
        rate = server.run(steps, batch_size, _lenet.document)
        done = _Trainer(parse(server.done["graph"]))
        return rate, server.done["loss"], done.accuracy()

    methods = {
        "server": server_run,
        "trainer": _lenet.trainer_loop,
        "engine": _lenet.engine_loop,
    }
    print(f"\n# Training: LeNet on digits (template lenet-digits, Adam, batch {batch_size})\n")
    print(
        "| steps | (a) server, streaming | (b) Trainer | (b) engine.nn loop | a/b Trainer "
        "| a/b engine loop | accuracy a / Trainer / engine loop |"
    )
    print("|---|---|---|---|---|---|---|")
    for fn in methods.values():  # warm up
        fn(50, batch_size)
    got = {k: [] for k in methods}
    last = {}
    for _ in range(repeats):
        for k, fn in methods.items():
            rate, _loss, acc = fn(steps, batch_size)
            got[k].append(rate)
            last[k] = acc
    m = {k: statistics.median(v) for k, v in got.items()}
    print(
        f"| {steps} | {m['server']:,.0f} | {m['trainer']:,.0f} | {m['engine']:,.0f} "
        f"| {m['server'] / m['trainer']:.2f} | {m['server'] / m['engine']:.2f} "
        f"| {last['server']:.3f} / {last['trainer']:.3f} / {last['engine']:.3f} |"
    )


def mlp_table(server, configs, repeats):
    print("# Training: MLP 2-16-16-1 (tanh, sigmoid, BCE, Adam) on 1,000 points (circle)\n")
    print(
        f"python {sys.version.split()[0]}, numpy {np.__version__}, torch {torch.__version__} "
        f"(threads {torch.get_num_threads()}); median of {repeats} repeats, steps/s\n"
    )
    print(
        "| batch | steps | (a) server, streaming | (b) Trainer | (b) engine loop | (c) torch | "
        "a/b Trainer | a/b engine loop | Trainer/torch time per step | "
        "engine loop/torch time per step |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|")
    methods = {
        "server": server.run,
        "trainer": trainer_loop,
        "engine": lambda steps, batch: hand_loop(eg, steps, batch),
        "torch": lambda steps, batch: hand_loop(torch, steps, batch),
    }
    for batch_size, steps in configs:
        for fn in methods.values():  # warm up
            fn(min(steps, 100), batch_size)
        got = {k: [] for k in methods}
        for _ in range(repeats):
            for k, fn in methods.items():
                got[k].append(fn(steps, batch_size))
        m = {k: statistics.median(v) for k, v in got.items()}
        print(
            f"| {batch_size or 'all (1000)'} | {steps} | {m['server']:,.0f} | {m['trainer']:,.0f} "
            f"| {m['engine']:,.0f} | {m['torch']:,.0f} | {m['server'] / m['trainer']:.2f} "
            f"| {m['server'] / m['engine']:.2f} | {m['torch'] / m['trainer']:.2f} "
            f"| {m['torch'] / m['engine']:.2f} |"
        )
        print(
            f"  (last server training: {server.packets['train_progress']} progress and "
            f"{server.packets['train_snapshot']} snapshot packets)",
            file=sys.stderr,
        )


if __name__ == "__main__":
    main()
