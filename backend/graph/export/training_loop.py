"""The training loop of an exported script: what a PyTorch user writes after the model to train
it, for a document with `training` settings (docs/training.md).

    params = [w, *layer1.parameters(), *layer2.parameters()]
    opt = torch.optim.Adam(params, lr=0.05)
    rng = np.random.default_rng(0)   # the editor's minibatch order
    for step in range(1, steps + 1):
        <the rows of this step's minibatch>
        <forward: the lines of the nodes that change between steps>
        opt.zero_grad()
        loss.backward()
        opt.step()
        print(...)

The loop is the editor's training step for step (backend/graph/running/trainer.py): the same
parameters (leaves that require grad, then each layer's, in node order), the same optimizer,
and the same minibatches: with `batch_size` 0 (or at least the number of rows) every step
takes all rows in order; else each epoch draws `rng.permutation(n)` from
`np.random.default_rng(seed)` and takes `batch_size` rows of it at a time (the last batch of an
epoch is the rows left over). Each step prints the loss of its minibatch before the update:
`step <k> loss <float>`, every `print_every` steps and at the last one. A model that classifies
(export/model.py) then prints its accuracy on every row in eval(), as the editor measures it.

Which nodes run inside the loop comes from a Trainer built on the same (flat) document: the
nodes its compiled step runs. Their lines are the exporter's own node lines (the call of a
layer, not its declaration), with the data nodes' variables replaced by their minibatch.
"""

import json
import re

from ..document.modules import SEP
from ..running.trainer import Trainer
from . import printout

LOSS_LINE = re.compile(r"^step (\d+) loss (\S+)$")  # what the loop prints (tests read it)


def print_every(steps):
    """Every step for a short training; about a hundred lines for a long one."""
    return 1 if steps <= 200 else max(1, steps // 100)


def parse_losses(stdout):
    """{step: loss} from a script's output (other lines are ignored)."""
    out = {}
    for line in stdout.splitlines():
        m = LOSS_LINE.match(line.strip())
        if m:
            out[int(m.group(1))] = float(m.group(2))
    return out


def _strip_comment(line):
    cut = line.find("  # node ")
    return line[:cut] if cut >= 0 else line


def _call_line(ex, nid):
    """The line that computes node `nid` from its inputs: for a layer its call
    (`h = layer1(x)`), not the lines that declare it and set its weights."""
    v = ex.var[nid]
    lines = [_strip_comment(s) for s in ex._node_lines(nid, {}) if not s.startswith("show(")]
    for line in reversed(lines):
        if line.startswith(f"{v} = "):
            return line
    raise ValueError(f"no line computes node {nid}")  # the exporter writes one for every node


def _layer_name(ex, nid):
    """The variable of the layer a layer node calls: `layer1` in `h = layer1(x)`."""
    known = getattr(ex, "layer", None)
    if isinstance(known, dict) and nid in known:
        return known[nid]
    m = re.match(r"^\w+ = (\w+)\(", _call_line(ex, nid))
    if m is None:
        raise ValueError(f"the layer of node {nid} has no variable")
    return m.group(1)


def _fresh(ex, base):
    taken = set(ex.var.values()) | set(getattr(ex, "layer", {}).values())
    name, k = base, 2
    while name in taken:
        name, k = f"{base}_{k}", k + 1
    return name


def with_training(ex, doc, source, classes=None):
    """`source` (the exporter `ex`'s script of the flat, validated `doc`) with the training loop
    at its end; `source` itself when `doc` has no training settings. `classes`: the
    export_classes.ClassWriter where the script's modules are classes. validate.GraphInvalid
    when the editor could not train it."""
    if doc.training is None:
        return source
    lines = training_lines(ex, doc, classes)  # (export.tidy_imports imports numpy for rng)
    return source + "\n".join(lines) + "\n"


def _owner(nid):
    """The top-level node a flat id is in: the instance `l1` for `l1/w`, else the node."""
    return nid.split(SEP, 1)[0]


def _unsaid(s, full_batch):
    """The settings `s` that the loop's code does not say (their defaults left out): the
    output node; a full batch's batch_size and seed; Adam's momentum."""
    out = {}
    if s.output is not None:
        out["output"] = s.output
    if full_batch:
        out.update({k: getattr(s, k) for k in ("batch_size", "seed") if getattr(s, k)})
    if s.optimizer != "sgd" and s.momentum:
        out["momentum"] = s.momentum
    return out


def training_lines(ex, doc, classes=None):
    """The loop's lines for the exporter `ex` of `doc` (which has training settings)."""
    trainer = Trainer(doc, validated=True)
    s = trainer.settings
    lib = ex.lib
    by_slot = {slot: nid for nid, slot in trainer.slots.items()}
    data = [by_slot[slot] for slot, _, _ in trainer.data]
    step_nodes = [entry[0] for entry in trainer.loss_steps]
    loss = ex.var[trainer.loss_id]

    def layer_name(nid):
        return classes.object_path(nid) if classes and SEP in nid else _layer_name(ex, nid)

    # the parameters, in the trainer's order: a leaf by its variable, a layer's by .parameters()
    # (a module instance's, all of them at once: an optimizer updates each on its own)
    params, seen = [], set()
    for _, _, nid, part in trainer.named:
        if classes and SEP in nid:
            if _owner(nid) not in seen:
                seen.add(_owner(nid))
                params.append(f"*{classes.obj[_owner(nid)]}.parameters()")
        elif part is None:
            params.append(ex.var[nid])
        elif nid not in seen:
            seen.add(nid)
            params.append(f"*{layer_name(nid)}.parameters()")
    modes = [
        layer_name(nid)
        for nid in trainer.ctxs
        if trainer.ctxs[nid].layer is not None
        and ex.params.get(nid, {}).get("mode") in ("auto", "train")
    ]

    lines = ["", "", f"# -- training: {s.optimizer} on `{loss}`, as the editor trains the graph"]
    lines.append(f"steps = {s.steps}")
    lines.append(f"print_every = {print_every(s.steps)}")
    lines.append(f"params = [{', '.join(params)}]")
    opt = "eg.optim" if lib == "eg" else "torch.optim"
    if s.optimizer == "sgd":
        lines.append(f"opt = {opt}.SGD(params, lr={s.lr!r}, momentum={s.momentum!r})")
    else:
        lines.append(f"opt = {opt}.Adam(params, lr={s.lr!r})")
    hint = _unsaid(s, trainer.full_batch)
    if getattr(classes, "training_output", None):  # the graph as a model: the flat graph's
        hint = {"output": classes.training_output, **hint}
    if hint:  # for the importer (importing/training_loop.py): what the code does not say
        comment = f"  # training {json.dumps(hint, separators=(', ', ': '))}"
        if len(lines[-1] + comment) <= 100:
            lines[-1] += comment
        else:  # on the first line, where the importer reads it, the call split as ruff splits it
            head, _, args = lines.pop().partition("(")
            lines += [f"{head}({comment}", f"    {args[:-1]}", ")"]
    # train(): layers whose mode follows the training (dropout, batch_norm) during the steps
    lines += [f"{name}.train()" for name in modes]

    batched = {}
    if not trainer.full_batch:
        first = ex.var[data[0]]
        lines.append(f"batch_size = {trainer.batch_size}")
        lines.append(f"n = {first}.shape[0]")
        lines.append(
            f"rng = np.random.default_rng({s.seed})  # the row order, a new one each epoch"
        )
        lines.append("perm, pos = None, n")
        batched = {nid: _fresh(ex, ex.var[nid] + "_batch") for nid in data}

    body = []
    if batched:
        body += [
            "if pos >= n:  # a new epoch",
            "    perm, pos = rng.permutation(n), 0",
            f"rows = {lib}.tensor(perm[pos : pos + batch_size])",
            "pos += batch_size",
        ]
        body += [f"{name} = {ex.var[nid]}[rows]" for nid, name in batched.items()]
    saved = dict(ex.var)
    try:
        ex.var.update(batched)  # the minibatch stands in for the data inside the loop
        if classes is None:
            body += [_call_line(ex, nid) for nid in step_nodes]
        else:  # in the top level's order: a node, or a module instance called
            owners = {_owner(nid) for nid in step_nodes}
            for nid in classes.top.order:
                if nid in owners and nid in classes.obj:
                    body += [_strip_comment(line) for line in classes.call_lines(nid, {})]
                elif nid in owners:
                    body.append(_call_line(ex, nid))
    finally:
        ex.var.clear()
        ex.var.update(saved)
    body += [
        "opt.zero_grad()",
        f"{loss}.backward()",
        "opt.step()",
        "if step % print_every == 0 or step == steps:",
        f'    print(f"step {{step}} loss {{{loss}.item()}}")',
    ]
    lines.append("for step in range(1, steps + 1):")
    lines += ["    " + line for line in body]
    return lines + _accuracy_lines(ex, classes)


def _accuracy_lines(ex, classes):
    """After the loop, where the graph is a model that classifies: its accuracy on every row,
    in eval() and under no_grad (running/trainer.py's accuracy)."""
    classified = getattr(classes, "classified", None)
    found = classified() if classified is not None else None
    if found is None:
        return []
    (inst,) = classes.obj
    call = [_strip_comment(line) for line in classes.call_lines(inst, {})]
    return [
        "",
        "# -- the accuracy after the training, on every row",
        f"{classes.obj[inst]}.eval()",
        f"with {ex.lib}.no_grad():",
        *("    " + line for line in call),
        printout.accuracy_line(*found),
    ]
