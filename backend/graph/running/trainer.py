"""Training a graph document: minimise its loss node with SGD or Adam (docs/training.md).

A Trainer compiles the part of the graph the loss (and the model's output) depends on into a
plain list of op calls in topological order: the registry's own `run` functions, called with
no tracing, no hooks and no records, because a training makes thousands of steps. What does not
change between steps is made once, when the Trainer is built:

- sources (`tensor`, `parameter`, `scalar`): a source whose tensor requires grad is a trainable
  leaf, named by its node id;
- `linear` layers: `ops/layers.linear_run` asks its context for the layer (`ctx.module`); the
  executor's context makes a new one every run, the trainer's makes it on the first call and
  keeps it, so its `weight` and `bias` (named `node.weight`, `node.bias`) are trained;
- data nodes (category `data`: `dataset`, `labels`): run once on the whole dataset; each step
  then takes the same rows of every one of them, a minibatch of `batch_size` rows (0: all of
  them, in order), in an order shuffled anew each epoch by a numpy Generator seeded by `seed`;
- nodes that depend on none of these (constants) are computed once too.

A step is `zero_grad`, forward, `loss.backward()`, `optimizer.step()`, and returns the loss of
that step's minibatch (before the update), as PyTorch loops report it.
"""

import threading

import numpy as np

import engine as eg
import engine.nn.functional as F
from engine import nn, optim
from engine.watch import array_of, from_array

from .. import registry
from ..document import modules
from ..document.format import TrainingSettings
from ..document.index import GraphIndex
from ..document.problems import GraphInvalid, Problem
from ..document.validate import check
from ..limits import DEFAULT
from ..op_context import OpContext
from ..ops.layer_kit import attribute
from .errors import message

MAX_POINTS = 500  # data points sent with a decision boundary
MARGIN = 0.1  # the boundary's grid spans the data and this fraction of its range on each side


class TrainingError(RuntimeError):
    """A step failed at `node` (None: in backward or the optimizer)."""

    def __init__(self, node, exc):
        self.node, self.exc = node, exc
        text = str(exc) or type(exc).__name__
        super().__init__(f"{node}: {text}" if node else text)


def settings_for(doc, config=None):
    """The TrainingSettings of a training: the document's `training` with `config` (a dict or
    TrainingSettings) over it. pydantic.ValidationError for bad values; GraphInvalid when no loss
    is named."""
    if isinstance(config, TrainingSettings):
        return config
    base = doc.training.model_dump(exclude_unset=True) if doc.training else {}
    merged = {**base, **(config or {})}
    if "loss" not in merged:
        raise GraphInvalid(
            [Problem("the document has no training settings: name the loss node to train")]
        )
    return TrainingSettings.model_validate(merged)


class Control:
    """Pause, resume and stop for a training in another thread. It also answers `set()` and
    `is_set()` like a threading.Event (set = stop), so that whatever cancels a run (a new run,
    a disconnect) stops a training the same way."""

    def __init__(self):
        self.stopped = False
        self.paused = False
        self._cond = threading.Condition()

    def stop(self):
        with self._cond:
            self.stopped = True
            self._cond.notify_all()

    set = stop

    def is_set(self):
        return self.stopped

    def pause(self):
        with self._cond:
            self.paused = True

    def resume(self):
        with self._cond:
            self.paused = False
            self._cond.notify_all()

    def wait_while_paused(self, timeout=None):
        with self._cond:
            while self.paused and not self.stopped:
                if not self._cond.wait(timeout):
                    return


class _Mode:
    """Whether the trainer is stepping (train()) or not (eval(): its first run, an evaluation,
    the decision boundary): one object that every node's context reads, so the layers whose
    `mode` is `auto` follow it (ops/layer_kit.py)."""

    __slots__ = ("training",)

    def __init__(self):
        self.training = False


class _Context(OpContext):
    """The op context for one node of a training: its layer is made once and kept."""

    __slots__ = ("node_id", "device", "limits", "layer", "layer_key", "named", "mode")

    def __init__(self, node_id, device, limits, named, mode=None):
        self.node_id, self.device, self.limits = node_id, device, limits
        self.layer = self.layer_key = None
        self.named = (
            named  # the trainer's list of (name, parameter, node id, its name in the layer)
        )
        self.mode = mode or _Mode()

    @property
    def training(self):
        return self.mode.training

    def add_parameters(self, named):
        pass  # the layer's parameters were registered when `module` made it

    def module(self, key, factory):
        layer = self.layer
        if layer is None:
            layer = self.layer = factory()
            self.layer_key = key
            for name, p in layer.named_parameters():
                self.named.append((f"{self.node_id}.{name}", p, self.node_id, name))
        elif key != self.layer_key:
            raise RuntimeError(
                f"the layer was made as {_layer_text(self.layer_key)} and its input now asks "
                f"for {_layer_text(key)}"
            )
        return layer


def _layer_text(key):
    """A layer's key in words: `linear`'s is its input features, a LayerForm's (class, (arg,
    value), ...) reads as the call that makes it."""
    if isinstance(key, tuple) and key and isinstance(key[0], str):
        return f"{key[0]}({', '.join(f'{k}={v!r}' for k, v in key[1:])})"
    return f"a layer for {key} input features"


def _host(t):
    a = array_of(t)
    return a if isinstance(a, np.ndarray) else a.get()


class Trainer:
    """A document compiled for training; see the module's doc."""

    def __init__(self, doc, config=None, *, limits=DEFAULT, device="cpu", validated=False):
        self.source = doc  # as the editor has it: trained values go back into its modules
        doc = modules.flat_or_invalid(doc, limits)
        if not validated:
            check(doc, limits)
        self.doc = doc
        self.settings = s = settings_for(doc, config)
        self.steps, self.batch_size = s.steps, s.batch_size
        self.limits, self.device = limits, device
        index = GraphIndex(doc)
        self.loss_id, self.output_id = s.loss, s.output
        problems = []
        if s.loss not in index.nodes:
            problems.append(Problem(f"the loss '{s.loss}' is not a node of the graph"))
        elif s.output is None:
            into = index.incoming[s.loss].get("input") or ()
            self.output_id = into[0].source if into else None
        if s.output is not None and s.output not in index.nodes:
            problems.append(Problem(f"the output '{s.output}' is not a node of the graph"))
        if problems:
            raise GraphInvalid(problems)
        roots = [self.loss_id] + ([self.output_id] if self.output_id else [])
        wanted = index.ancestors(roots)
        order = [nid for nid in index.order if nid in wanted]
        for nid in order:
            if index.specs[nid].branches:
                problems.append(
                    Problem(
                        f"a training cannot go through `{index.specs[nid].name}` (its branch "
                        "depends on values); use `where`",
                        node=nid,
                    )
                )
            elif index.specs[nid].extra.get("writes"):
                problems.append(
                    Problem(
                        "a training cannot go through an in-place op (each step would write "
                        "into the values the next one starts from); use its out-of-place form",
                        node=nid,
                    )
                )
        if problems:
            raise GraphInvalid(problems)

        # -- run every node once on the whole dataset: leaves, layers, data, constants ---------
        self.named = []  # (name, parameter, node id, part) in the order they were made
        slot = {nid: i for i, nid in enumerate(order)}
        self.slots = slot
        base = [None] * len(order)
        ctxs, varying, data = {}, set(), []
        self.mode = _Mode()  # eval() until a step: the run below must not move running stats
        self.ctxs = ctxs
        with eg.no_grad():
            for nid in order:
                spec, params = index.specs[nid], index.params[nid]
                ctx = ctxs[nid] = _Context(nid, device, limits, self.named, self.mode)
                ins = self._inputs(index, nid, base, slot)
                try:
                    out = spec.run(ctx, ins, params)
                    if not isinstance(out, eg.Tensor):
                        raise TypeError(f"{spec.name} gave no tensor")
                    ctx.check_numel(out.numel())
                except Exception as exc:
                    raise GraphInvalid([Problem(message(exc), node=nid)]) from exc
                base[slot[nid]] = out
                sources = [e.source for es in index.incoming[nid].values() for e in es]
                if spec.category == "data":
                    data.append(nid)
                    varying.add(nid)
                elif spec.source:
                    if out.requires_grad:
                        self.named.append((nid, out, nid, None))
                        varying.add(nid)
                elif ctx.layer is not None or any(src in varying for src in sources):
                    varying.add(nid)
        self.base = base
        loss_value = base[slot[self.loss_id]]
        if loss_value.numel() != 1:
            problems.append(
                Problem(
                    f"the loss must be one number; this node gives shape {list(loss_value.shape)}",
                    node=self.loss_id,
                )
            )
        loss_side = index.ancestors([self.loss_id])
        if not any(nid in loss_side for _, _, nid, _ in self.named):
            problems.append(
                Problem(
                    "nothing to train: the loss depends on no tensor with requires_grad, "
                    "parameter or linear layer",
                    node=self.loss_id,
                )
            )
        if not loss_value.dtype.is_floating_point:
            problems.append(Problem("the loss must be a float tensor", node=self.loss_id))
        sizes = {nid: base[slot[nid]].shape[0] if base[slot[nid]].ndim else 0 for nid in data}
        if len(set(sizes.values())) > 1:
            problems.append(
                Problem(
                    "the data nodes have different numbers of rows: "
                    + ", ".join(f"{k}: {v}" for k, v in sizes.items())
                )
            )
        if problems:
            raise GraphInvalid(problems)
        self.n = next(iter(sizes.values()), 0)
        self.data = [(slot[nid], _host(base[slot[nid]]), base[slot[nid]]) for nid in data]
        self.full_batch = not data or self.batch_size == 0 or self.batch_size >= self.n

        params = [p for _, p, _, _ in self.named]
        if s.optimizer == "sgd":
            self.optimizer = optim.SGD(params, lr=s.lr, momentum=s.momentum)
        else:
            self.optimizer = optim.Adam(params, lr=s.lr)

        # -- the compiled steps ----------------------------------------------------------------
        def compile_steps(root, also=frozenset()):
            need = index.ancestors([root])
            out = []
            for nid in order:
                if nid in need and (nid in varying or nid in also) and nid not in data:
                    spec = index.specs[nid]
                    if spec.source:
                        continue
                    layout = self._layout(index, nid, slot)
                    simple = all(s.__class__ is int for s in layout)
                    out.append(
                        (
                            nid,
                            _fast_run(spec.run, ctxs[nid]),
                            ctxs[nid],
                            layout,
                            index.params[nid],
                            slot[nid],
                            simple,
                        )
                    )
            return out

        self.loss_steps = compile_steps(self.loss_id)
        # accuracy(): the output again, and the int64 class labels the loss reads (a data node
        # or a constant tensor: both are whole in `base`)
        self.output_steps = compile_steps(self.output_id) if self.output_id else None
        into = index.incoming[self.loss_id].get("target") or ()
        target = into[0].source if into else None
        labels_ok = target is not None and (target in data or target not in varying)
        self.labels_id = target if labels_ok and base[slot[target]].dtype == eg.int64 else None
        self.loss_slot = slot[self.loss_id]
        self.rng = np.random.default_rng(s.seed)
        self.perm, self.pos = None, 0
        self.last_batch = None  # the rows of the last step's minibatch (None: all, in order)
        self.step_count = 0
        self.loss = None  # the last step's loss

        # -- the decision boundary: the output again, on a grid in place of the features ------
        self.features = self.labels = None
        self.boundary_steps = None
        if self.output_id is not None:
            self._boundary_setup(index, order, data, varying, compile_steps)

    @staticmethod
    def _inputs(index, nid, vals, slot):
        ins = []
        ports = index.incoming[nid]
        for port in index.specs[nid].inputs:
            v = [vals[slot[e.source]] for e in ports.get(port.name, ())]
            ins.append(v if port.variadic else (v[0] if v else None))
        return ins

    @staticmethod
    def _layout(index, nid, slot):
        """Per port: the slot of its edge's source, None when unconnected, a tuple of slots for
        a variadic port."""
        layout = []
        ports = index.incoming[nid]
        for port in index.specs[nid].inputs:
            s = [slot[e.source] for e in ports.get(port.name, ())]
            layout.append(tuple(s) if port.variadic else (s[0] if s else None))
        return tuple(layout)

    def _boundary_setup(self, index, order, data, varying, compile_steps):
        base, slot = self.base, self.slots
        out_side = index.ancestors([self.output_id])

        def is_2d_features(nid):
            t = base[slot[nid]]
            return t.ndim == 2 and t.shape[1] == 2 and t.dtype.is_floating_point

        # the features: a data node the output reads; else (no data ops) a constant source of
        # shape (n, 2) it reads
        features = [nid for nid in data if nid in out_side]
        if not features:
            features = [
                nid
                for nid in order
                if nid in out_side
                and index.specs[nid].source
                and nid not in varying
                and is_2d_features(nid)
            ]
        if len(features) != 1 or not is_2d_features(features[0]):
            return
        fid = features[0]
        n = base[slot[fid]].shape[0]
        # the labels: another data node with n rows, else the loss's target when it has n rows
        labels = [nid for nid in data if nid != fid and base[slot[nid]].shape[:1] == (n,)]
        if not labels:
            into = index.incoming[self.loss_id].get("target") or ()
            if into and base[slot[into[0].source]].shape[:1] == (n,):
                labels = [into[0].source]
        self.features = fid
        self.labels = labels[0] if labels else None
        # every node between the features and the output runs again on the grid
        after = set()
        for nid in order:
            if nid == fid or any(
                e.source in after for es in index.incoming[nid].values() for e in es
            ):
                after.add(nid)
        if any(d in out_side and d != fid for d in data):
            return  # the output reads other data (its labels): no grid can stand in for it
        self.boundary_steps = compile_steps(self.output_id, frozenset(after))

    # -- names -----------------------------------------------------------------------------------
    @property
    def param_names(self):
        return [name for name, *_ in self.named]

    def parameters(self):
        """{name: tensor}: node id for a leaf, `node.weight` / `node.bias` for a layer."""
        return {name: p for name, p, *_ in self.named}

    def grads(self):
        """{name: gradient} of the last step (parameters the loss did not reach are left out)."""
        return {name: p.grad for name, p, *_ in self.named if p.grad is not None}

    # -- steps -----------------------------------------------------------------------------------
    def _next_batch(self):
        if self.full_batch:
            return None
        if self.perm is None or self.pos >= self.n:
            self.perm, self.pos = self.rng.permutation(self.n), 0
        idx = self.perm[self.pos : self.pos + self.batch_size]
        self.pos += self.batch_size
        return idx

    def _forward(self, steps, vals):
        nid = None
        try:
            for nid, run, ctx, layout, params, slot, simple in steps:  # noqa: B007 - for errors
                if simple:
                    ins = [vals[s] for s in layout]
                else:
                    ins = [_arg(vals, s) for s in layout]
                vals[slot] = run(ctx, ins, params)
        except Exception as exc:
            raise TrainingError(nid, exc) from exc
        return vals

    def step(self):
        """One optimisation step; the loss of its minibatch, before the update."""
        vals = self.base[:]
        idx = self.last_batch = self._next_batch()
        if idx is not None:
            for slot, arr, t in self.data:
                if arr is array_of(t):  # on the CPU: the rows straight from the array
                    vals[slot] = from_array(arr[idx])
                else:
                    vals[slot] = t[eg.tensor(idx, device=t.device)]
        opt = self.optimizer
        opt.zero_grad()
        self.mode.training = True  # train(): dropout drops, batch_norm uses the batch's stats
        try:
            with eg.enable_grad():
                loss = self._forward(self.loss_steps, vals)[self.loss_slot]
                try:
                    loss.backward()
                except Exception as exc:
                    raise TrainingError(self.loss_id, exc) from exc
        finally:
            self.mode.training = False
        opt.step()
        self.step_count += 1
        self.loss = value = array_of(loss).item()
        return value

    def run(self, control=None, on_step=None, on_pause=None):
        """Steps until `steps` are done ("ok") or `control` stops it ("stopped"). `on_step(step,
        loss)` after each step; `on_pause()` when a pause begins. TrainingError on failure."""
        step = self.step
        while self.step_count < self.steps:
            if control is not None:
                if control.stopped:
                    return "stopped"
                if control.paused:
                    if on_pause is not None:
                        on_pause()
                    control.wait_while_paused()
                    continue
            loss = step()
            if on_step is not None:
                on_step(self.step_count, loss)
        return "ok"

    def evaluate(self):
        """The loss on the whole dataset with the current parameters (no update)."""
        with eg.no_grad():
            vals = self._forward(self.loss_steps, self.base[:])
        return array_of(vals[self.loss_slot]).item()

    # -- what the page shows -----------------------------------------------------------------------
    def boundary(self, resolution=40):
        """The output on a resolution x resolution grid over the 2-D features (± a margin), as
        {x, y, resolution, values, points}; None when the features are not 2-D. `values` (row i
        is y, column j is x) holds the output where it has one column, else its argmax (the
        class); `points` up to 500 data points [x, y, label] (numpy arrays: orjson writes them
        as nested lists)."""
        if self.boundary_steps is None:
            return None
        slot = self.slots[self.features]
        feats = self.base[slot]
        x = _host(feats)
        lo, hi = x.min(0).astype(np.float64), x.max(0).astype(np.float64)
        pad = np.where(hi > lo, (hi - lo) * MARGIN, 0.5)
        lo, hi = lo - pad, hi + pad
        r = int(resolution)
        gx, gy = np.meshgrid(np.linspace(lo[0], hi[0], r), np.linspace(lo[1], hi[1], r))
        grid = np.stack([gx.ravel(), gy.ravel()], 1).astype(x.dtype)
        vals = self.base[:]
        vals[slot] = eg.tensor(grid, device=feats.device)
        try:
            with eg.no_grad():
                out = _host(self._forward(self.boundary_steps, vals)[self.slots[self.output_id]])
        except TrainingError:
            return None
        if out.size == r * r:
            values = out.reshape(r, r)
        elif out.ndim == 2 and out.shape[0] == r * r:
            values = out.argmax(1).reshape(r, r)
        else:
            return None
        n = x.shape[0]
        pick = np.linspace(0, n - 1, MAX_POINTS).astype(np.int64) if n > MAX_POINTS else None
        pts = x if pick is None else x[pick]
        cols = [pts[:, 0], pts[:, 1]]
        if self.labels is not None:
            lab = _host(self.base[self.slots[self.labels]])
            lab = lab if pick is None else lab[pick]
            cols.append(lab.reshape(lab.shape[0], -1)[:, 0])
        points = np.stack([c.astype(np.float64) for c in cols], 1)
        return {
            "x": [float(lo[0]), float(hi[0])],
            "y": [float(lo[1]), float(hi[1])],
            "resolution": r,
            "values": np.ascontiguousarray(values.astype(np.float32)),
            "points": np.ascontiguousarray(points),
        }

    def written_back(self):
        """The document with the trained values (nested lists): `value` of trained
        tensor/parameter nodes; a layer node's whole state into the params its op's LayerForm
        names (`weight` and `bias_value` of a linear or conv2d, batch_norm's running_mean and
        running_var too), so the next run starts where the training ended."""
        doc = self.source.model_copy(deep=True)
        flat = {n.id: n for n in self.doc.nodes}
        for _, p, nid, part in self.named:
            if part is None:
                modules.write_state(doc, nid, {"value": _host(p.detach()).tolist()})
        for nid, ctx in self.ctxs.items():
            form = registry.get(flat[nid].op).layer if ctx.layer is not None else None
            state = {}
            for param, key in form.state if form is not None else ():
                t = attribute(ctx.layer, key)
                if t is not None:
                    state[param] = _host(t.detach()).tolist()
            if state:
                modules.write_state(doc, nid, state)  # a node inside a module: its instance
        return doc

    def accuracy(self):
        """The fraction of the whole dataset the output classifies right (its argmax is the
        label), with the current parameters in eval(); None when the output is not one row of
        class scores per labelled point."""
        if self.output_id is None or self.labels_id is None:
            return None
        with eg.no_grad():
            vals = self._forward(self.output_steps, self.base[:])
        out = _host(vals[self.slots[self.output_id]])
        labels = _host(self.base[self.slots[self.labels_id]])
        if out.ndim != 2 or labels.shape != out.shape[:1]:
            return None
        return float((out.argmax(1) == labels).mean())


def _arg(vals, s):
    """An input by its layout entry: a slot, None (unconnected), or a tuple (variadic)."""
    if s.__class__ is int:
        return vals[s]
    return None if s is None else [vals[i] for i in s]


def _fast_run(run, ctx):
    """The node's run function; for a node whose layer is an nn.Linear (ops/layers.linear_run, once
    it has made the layer), the layer's own forward without the calls around it."""
    layer = ctx.layer
    if layer is not None and type(layer) is nn.Linear:
        weight, bias = layer.weight, layer.bias

        def linear(ctx, ins, p):
            return F.linear(ins[0], weight, bias)

        return linear
    return run
