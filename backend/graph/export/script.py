"""Code export: a graph document as a readable, runnable Python script, in engine Python or in
PyTorch, that rebuilds the graph, runs it (forward, then backward from its target) and prints
what a person prints: the loss, the gradients a lesson is about, the accuracy, a training's
curve (export/printout.py). With `trace=True` it prints every value and gradient instead, in a
fixed, parseable format, which the tests compare with the editor's run:

    value <node-id> <json of tolist()>
    grad <node-id> <json>            (a leaf's .grad, or a kept intermediate gradient)
    grad <node-id>.weight <json>     (a linear node's parameters)

A tensor of more than 10,000 elements prints its shape and stats instead of its values,
`{"shape": [...], "min", "max", "mean", "std", "norm"}`, as the editor's tensor view shows
them: a LeNet on the 1,797 digits would otherwise print about 100 MB.

One line per node, in topological order; what the code cannot say for the importer
(`importer.from_python` rebuilds the same document) is in one layout block at the script's end
(export/layout.py), or a `# node <id> (x, y)` comment on the line where that block would not
read back the same. An `if` node becomes an `if`/`else` statement holding the nodes only its
branches need, so only the chosen branch runs.

A document with modules is written with one `nn.Module` class per definition and one object
per instance (export/classes.py); the lines of what is inside an instance use its flat ids
(`value l1/y`, `grad l1/w`, `grad l1/fc.weight`). Where the classes cannot say it exactly, its
flat graph with the ids made plain (`l1_w`, export/flat.py). With training settings the
script ends with the training loop (export/training_loop.py). A flat network whose target is a loss
of its prediction is written as one model class named after the graph, the loss outside it
(export/model.py); other flat graphs keep one line per node, with a comment saying why.

Sources use their op's code (ops/sources.py). Random sources draw the editor's numbers (numpy's
`default_rng(seed)`) in the PyTorch script too; each layer is made right after
`torch.manual_seed(S)` (`eg.manual_seed(S)`), its node's seed (export/layers.py: the engine's
generator is PyTorch's), so both scripts print the same numbers.
"""

import builtins
import inspect
import keyword
import re
import textwrap
from dataclasses import dataclass, field
from pathlib import Path

import engine as eg

from .. import registry
from ..document.index import GraphIndex
from ..document.modules import flatten
from ..document.problems import GraphInvalid
from ..document.validate import check, resolved_params
from ..importing.importer import ImportFailed, _import
from ..op_context import OpContext
from ..ops import datasets
from ..ops.sources import as_floats
from . import layers as export_layers
from . import printout, sidecar
from .classes import ClassWriter, Unwritable
from .flat import flat_for_export
from .layout import out_of_the_way
from .lines import node_comment, retain_lines
from .model import model_writer
from .style import styled
from .training_loop import with_training

FLAVORS = ("engine", "torch")
WEIGHTS = (None, "initial", "trained")
_RESERVED = (
    {"eg", "torch", "F", "nn", "np", "math", "json", "show", "t", "Path", sidecar.NAME}
    | {"load_file", "load_safetensors"}
    | set(dir(builtins))
    | set(keyword.kwlist)
    | set(keyword.softkwlist)
)
_MAYBE = "maybe"  # requires_grad that depends on which branch of an `if` runs


@dataclass(frozen=True)
class Exported:
    """An exported script and the values it loads from the file beside it: `text`, the
    script; `tensors`, {name: numpy array} of its `.safetensors` file (empty where every
    value is in the script); `weights`, that file's bytes (None where there is none)."""

    text: str
    tensors: dict = field(default_factory=dict)

    @property
    def weights(self):
        return sidecar.file_bytes(self.tensors)

    def write(self, path):
        """Write the script to `path` and, where it loads one, its weights file beside it
        (`path` with the suffix `.safetensors`); the paths written."""
        path = Path(path)
        path.write_text(self.text, encoding="utf-8")
        written = [path]
        data = self.weights
        if data is not None:
            written.append(path.with_suffix(".safetensors"))
            written[-1].write_bytes(data)
        return written


def to_python(doc, flavor="engine", training=None, model=True, weights=None, trace=False) -> str:
    """The script alone, every stored value written in it (export_python's `inline`): what
    callers that keep one text get."""
    return export_python(doc, flavor, training, model, weights, trace, inline=True).text


def export_python(
    doc, flavor="engine", training=None, model=True, weights=None, trace=False, inline=False
) -> Exported:
    """The document as a script; flavor "engine" (import engine as eg) or "torch". A document
    with modules writes each definition as an nn.Module class (export/classes.py; as its flat
    graph where the classes cannot say it exactly). A flat graph whose target is a loss of its
    prediction is written as one model class (export/model.py); `model=False` keeps it flat,
    one line per node. With `training` (default: whenever the
    document has training settings) the script ends with its training loop
    (export/training_loop.py); `training=True` raises validate.GraphInvalid where the editor could
    not train it, the default writes a comment instead. `weights` says in the docstring which
    weights the script starts from: "initial" (the page sends the graph as it was before its
    training), "trained" (the values a training wrote into the graph), or None (told from the
    document: stored layer values or not). The script prints what a person prints (the loss,
    the accuracy, the training's curve; export/printout.py); `trace=True` makes it print every
    value and gradient, one parseable line each. Values no seed gives go into a `.safetensors`
    file beside the script where the graph stores more than sidecar.INLINE_LIMIT numbers of
    them (export/sidecar.py); `inline=True` writes them all in the script. Raises
    validate.GraphInvalid for a document that cannot run."""
    if weights not in WEIGHTS:
        raise ValueError(f"weights must be one of {WEIGHTS}, not {weights!r}")
    if flavor == "python":
        flavor = "engine"
    if flavor not in FLAVORS:
        raise ValueError(f"flavor must be 'engine' or 'torch', not {flavor!r}")
    check(doc)
    writer = source = None
    on = not inline and sidecar.stored_numbers(flatten(doc)) > sidecar.INLINE_LIMIT
    names = (_ident, _is_good_name)
    if doc.modules:
        ex = _Exporter(flatten(doc), flavor, weights, trace, on)
        try:
            writer = ClassWriter(doc, ex, names)
            writer.check_target()
            source = _self_checked(writer)
        except Unwritable as why:
            writer = None
            note = f"modules written as their flat graph (as every run runs it): {why}"
    elif not model:
        note = ""
    else:  # a flat graph: one model class where the model can say it (export/model.py)
        writer, why = model_writer(
            doc, lambda d: _Exporter(flatten(d), flavor, weights, trace, on), names
        )
        if writer is not None:
            ex = writer.ex
            source = _self_checked(writer)
        else:
            note = f"written flat, not as a model class: {why}"
    if writer is None:
        flat, _ = flat_for_export(doc)  # with modules: its flat graph, ids made plain
        ex = _Exporter(flat, flavor, weights, trace, on)
        ex.note = note
        source = _self_checked(ex)
    if training is not False and doc.training is not None:
        try:
            classified = getattr(writer, "classified", None)  # (a model: export/model.py)
            accuracy = classified is not None and classified() is not None
            source = _trains(with_training(ex, ex.doc, source, writer), accuracy)
        except GraphInvalid as bad:
            if training:
                raise
            why = "; ".join(p.message for p in bad.problems)
            source += f"\n\n# -- training: not written, the editor cannot train it: {why}\n"
    text = out_of_the_way(styled(tidy_imports(source)), ex.sidecar.tensors)
    used = ex.sidecar.used(text)
    if ex.sidecar.on and not used:  # (no value went to the file after all: none to load)
        return export_python(doc, flavor, training, model, weights, trace, inline=True)
    return Exported(text, used)


def _trains(source, accuracy=False):
    """The script's docstring told of the training loop at its end (and of the accuracy
    printed after it)."""
    text = (
        "Then it trains the model as the editor trains the graph (the same optimizer, steps and "
        'minibatches) and prints its loss: "step <k> loss <value>" lines'
    )
    text += ", and the accuracy after the training." if accuracy else "."
    head, sep, rest = source.partition('\n"""\n')
    lines = textwrap.wrap(text, 96, break_on_hyphens=False)
    return head + "\n" + "\n".join(lines) + sep + rest if sep else source


def stores_weights(doc):
    """Whether the document holds layer values of its own (a training's, or edited): a layer
    node's stored state, or a module instance's."""
    for graph in (doc, *doc.modules):
        for n in graph.nodes:
            if n.op == "module" and n.params.get("state"):
                return True
            spec = registry.get(n.op)
            form = spec.layer if spec is not None else None
            if form is not None and any(n.params.get(p) is not None for p, _ in form.state):
                return True
    return False


def weights_sentence(doc, weights):
    """The docstring's sentence on the weights the script starts from."""
    stored = stores_weights(doc)
    if weights == "initial" or (weights is None and not stored):
        text = (
            "It starts from the initial weights: each layer made as PyTorch makes it, from the "
            "seed Wiregrad gives its node, so the numbers are the editor's."
        )
        if stored:
            text += " The values the graph stores for some layers are loaded."
    elif weights == "trained":
        text = (
            "It starts from the trained weights: the values the graph's training left in it, "
            "loaded into the layers after they are made."
        )
    else:
        text = (
            "It starts from the weights the graph stores (trained or edited by hand), loaded "
            "into the layers after they are made, not from a fresh initialisation."
        )
    return text


# what each import binds, in the order isort writes them: the standard library, then the
# third-party packages, then the engine (a Wiregrad checkout's own package)
_IMPORTS = (
    ("json", "import json"),
    ("math", "import math"),
    ("Path", "from pathlib import Path"),
    (None, ""),
    ("np", "import numpy as np"),
    ("torch", "import torch"),
    ("F", "import torch.nn.functional as F"),
    ("load_file", "from safetensors.torch import load_file"),
    ("nn", "from torch import nn"),
    (None, ""),
    ("eg", "import engine as eg"),
    ("F", "import engine.nn.functional as F"),
    ("nn", "from engine import nn"),
    ("load_safetensors", "from engine.serialization import load_safetensors"),
)


_LOADS = ("Path", "load_file", "load_safetensors")
_IMPORT_LINE = re.compile(r"^(import [\w.]+( as \w+)?|from [\w.]+ import \w+)\s*(#.*)?$")


def tidy_imports(source):
    """The script with one import block, after the docstring: what it uses (`np.`, `F.`, ...),
    sorted as isort (ruff's I rules) sorts it."""
    lines = source.split("\n")
    end = lines.index('"""', 1) if lines[0].startswith('"""') and '"""' in lines[1:] else -1
    at, kept = None, lines[: end + 1]
    for line in lines[end + 1 :]:
        if _IMPORT_LINE.match(line):
            at = len(kept) if at is None else at
            continue
        kept.append(line)
    if at is None:
        return source
    body = "\n".join(kept)
    lib = "eg" if re.search(r"^import engine as eg$", source, re.M) else "torch"
    block = []
    for name, line in _IMPORTS:
        if name is None:
            if block and block[-1] != "":
                block.append("")
            continue
        if ("engine" in line) != (lib == "eg") and name in ("F", "nn"):
            continue
        if name in ("torch", "eg") and lib != name:
            continue
        if name in _LOADS:  # (the weights file's: where the script loads one)
            mine = name == "Path" or (name == "load_safetensors") == (lib == "eg")
            if mine and re.search(rf"^{sidecar.NAME} = ", body, re.M):
                block.append(line)
        elif name in ("torch", "eg") or re.search(rf"(?<![\w.]){name}\.", body):
            block.append(line)
    while block and block[-1] == "":
        block.pop()
    # (the blank lines around the block are the docstring's and the code's own)
    return "\n".join(kept[:at] + block + kept[at:])


def _self_checked(writer):
    """The script of `writer` (an _Exporter or a ClassWriter), read back by the importer:
    whatever the code cannot carry goes into the node comments."""

    hints = writer.initial_hints()
    source = writer.script(hints)
    stored = getattr(writer, "ex", writer).sidecar.tensors
    for _ in range(3):
        try:
            back = _import(source, weights=stored)
        except ImportFailed:
            break
        if not writer.add_hints(hints, back):
            break
        source = writer.script(hints)
    check = getattr(writer, "reads_back", None)  # (a model: export/model.py)
    if check is not None and not check(source):
        source = writer.script(hints)  # with the comments it left out
    return source


def _ident(text):
    """`text` as an ASCII identifier ('' when nothing is left)."""
    s = re.sub(r"[^A-Za-z0-9_]+", "_", str(text or "")).strip("_")
    s = re.sub(r"_+", "_", s)
    if s and s[0].isdigit():
        s = "n" + s
    return s


def _is_good_name(text):
    return (
        isinstance(text, str)
        and text.isascii()
        and text.isidentifier()
        and not keyword.iskeyword(text)
        and text not in _RESERVED
    )


def _text_literal(text):
    """A string literal of `text`: triple-quoted where that is exact, so that a CSV reads as
    its lines."""
    plain = all(c.isprintable() or c in "\n\t" for c in text)
    if plain and text and '"""' not in text and "\\" not in text and not text.endswith('"'):
        return f'"""{text}"""'
    return repr(text)


class _Exporter(GraphIndex):
    def __init__(self, doc, flavor, weights=None, trace=False, stored=False):
        super().__init__(doc)
        self.flavor = flavor
        # the values no seed gives, in the file beside the script (`stored`: they are many)
        self.sidecar = sidecar.Sidecar(stored)
        self.trace = trace  # every value and gradient printed (export/printout.py)
        self.weights = weights_sentence(doc, weights)
        self.builds = "the graph"  # (a model: "the model and its data", export/model.py)
        # what the results section prints, in the docstring's words (set below for a script
        # without the trace option; a model's: export/model.py)
        self.prints = printout.TRACE_SAYS
        self.lib = "eg" if flavor == "engine" else "torch"
        self.note = ""  # a line of comment after the header
        self.meta = self._infer()
        self.var = self._names()
        self.layer = {}
        taken = set(self.var.values())
        for nid in self.order:
            if self.specs[nid].layer is not None:  # linear, conv2d ...: a declared nn layer
                base = self.var[nid] + "_layer"
                name, k = base, 2
                while name in taken:
                    name, k = f"{base}_{k}", k + 1
                taken.add(name)
                self.layer[nid] = name
        # a dataset node is made from two numpy arrays, its features and its labels
        self.arrays = {}
        for nid in self.order:
            if self.specs[nid].name == "dataset":
                pair = []
                for part in ("features", "labels"):
                    base = f"{self.var[nid]}_{part}"
                    name, k = base, 2
                    while name in taken:
                        name, k = f"{base}_{k}", k + 1
                    taken.add(name)
                    pair.append(name)
                self.arrays[nid] = tuple(pair)
        self.rg = self._requires_grad()
        self.target, self.target_from_doc = self._target()
        self.owner = self._owners()
        random_sources = any(
            self.specs[n].source
            and self.params[n].get("value") is None
            and self.params[n].get("init") in ("randn", "rand")
            for n in self.order
        )
        # numpy makes a dataset's arrays and the random sources' numbers (default_rng(seed))
        self.uses_np = bool(self.arrays) or random_sources
        self.uses_nn = any(self.specs[n].layer is not None for n in self.order)
        if not trace:
            self.prints = (
                f"prints `{self.var[self.target]}` and the gradients of its leaves"
                if self.target
                else "prints its outputs"
            )

    @property
    def traces_writes(self):
        """Whether each value is printed where it is made (a later in-place write changes it)."""
        return self.trace and self.inplace

    # -- analysis ---------------------------------------------------------------------------
    def _names(self):
        out, taken = {}, set()
        for nid in self.order:
            node, p = self.nodes[nid], self.params[nid]
            # the name param (made an identifier), a label that is an identifier, or the id
            given = _ident(p.get("name")) if self.specs[nid].source else ""
            if not str(p.get("name") or "").strip()[:1].isalpha():
                given = ""
            label = node.label if _is_good_name(node.label) else ""
            name = given or label or _ident(nid) or node.op
            base, k = name, 2
            while name in taken or not _is_good_name(name):
                name, k = f"{base}_{k}", k + 1
            taken.add(name)
            out[nid] = name
            if self.specs[nid].extra.get("writes") and self._inputs(nid):
                # an in-place op's value is its input's tensor: the same variable, written
                out[nid] = out[self._inputs(nid)[0]]
        return out

    def _inputs(self, nid, differentiable=False):
        """The connected input node ids in port order (variadic ports in edge order); with
        `differentiable`, only those of ports a gradient flows back through."""
        return [
            e.source
            for port in self.specs[nid].inputs
            if not (differentiable and port.no_grad)
            for e in self.incoming[nid][port.name]
        ]

    def _infer(self):
        """Shapes and dtypes of every node, from a dry run on the document's own sources (under
        no_grad; an `if` takes whichever branch is known). Nodes that fail are left out."""
        meta, ctx = {}, OpContext()  # the default limits: the document was validated
        with eg.no_grad():
            for nid in self.order:
                spec = self.specs[nid]
                try:
                    ins = []
                    for port in spec.inputs:
                        vals = [meta[e.source] for e in self.incoming[nid][port.name]]
                        ins.append(vals if port.variadic else (vals[0] if vals else None))
                    out = spec.run(ctx, ins, self.params[nid])
                    meta[nid] = out
                except Exception:
                    continue
        return meta

    def _requires_grad(self):
        rg = {}
        for nid in self.order:
            spec, p = self.specs[nid], self.params[nid]
            if spec.source:
                rg[nid] = spec.name == "parameter" or (
                    spec.name == "tensor" and bool(p.get("requires_grad"))
                )
            elif spec.layer is not None and self._layer_parameters(nid):
                rg[nid] = True  # a layer with parameters of its own (not dropout)
            elif spec.branches:
                a = [rg[e.source] for port in spec.branch_ports for e in self.incoming[nid][port]]
                rg[nid] = True if all(x is True for x in a) else (_MAYBE if any(a) else False)
            else:  # from the inputs a gradient flows back through (Port.no_grad)
                a = [rg[s] for s in self._inputs(nid, differentiable=True)]
                rg[nid] = True if True in a else (_MAYBE if _MAYBE in a else False)
        return rg

    def _target(self):
        if self.doc.target is not None:
            return self.doc.target, True
        from ..running.executor import run

        try:
            res = run(self.doc, "forward", validated=True)
            values = res.values if res.status == "ok" else None
        except Exception:
            values = None
        for nid in reversed(self.order):
            if values is not None:
                t = values.get(nid)
                if t is not None and t.numel() == 1 and t.requires_grad:
                    return nid, False
            elif self.rg[nid] and nid in self.meta and self.meta[nid].numel() == 1:
                return nid, False
        return None, False

    def _owners(self):
        """For each node, the (if-node, branch) whose block holds it: the innermost branch that
        every use of the node goes through. Top-level nodes are owned by None."""
        roots = [nid for nid in self.order if not self.outgoing[nid]]
        if self.target and self.target not in roots:
            roots.append(self.target)
        excl = {}
        for nid in self.order:
            if not self.specs[nid].branches:
                continue
            for branch in self.specs[nid].branch_ports:
                edges = self.incoming[nid][branch]
                if not edges:
                    continue
                cut = edges[0]
                reach = self.ancestors(roots, cut=cut)
                anc = self.ancestors([cut.source])
                excl[(nid, branch)] = anc - reach
        owner = {}
        for nid in self.order:
            best = None
            for key, members in excl.items():
                if nid in members and (best is None or len(members) < len(excl[best])):
                    best = key
            owner[nid] = best
        return owner

    def _block(self, key):
        return [nid for nid in self.order if self.owner[nid] == key]

    # -- code -----------------------------------------------------------------------------------
    def _comment(self, nid, hints):
        return node_comment(nid, self.nodes[nid].position, hints.get(nid))

    def _source_code(self, nid):
        spec, p = self.specs[nid], self.params[nid]
        found = sidecar.stored_source(spec, p)
        code = self.sidecar.ref(self.var[nid], *found) if found else None
        return f"{code}.requires_grad_()" if code else spec.code(self.lib, [], p)

    def _node_lines(self, nid, hints):
        """The lines that make node `nid` (the last one carries the node comment)."""
        spec, p, lib, v = self.specs[nid], self.params[nid], self.lib, self.var[nid]
        args = [self.var[s] for s in self._inputs(nid)]
        comment = "  " + self._comment(nid, hints)
        if spec.name == "dataset":
            return self._dataset_lines(nid, comment)
        if spec.name == "labels":
            return self._labels_lines(nid, comment)
        if spec.source:
            lines = [f"{v} = {self._source_code(nid)}{comment}"]
            return lines + ([f"show('value', {nid!r}, {v})"] if self.traces_writes else [])
        if spec.name == "linear":
            return self._linear_lines(nid, args, comment)
        if spec.layer is not None:
            return self._layer_lines(nid, args, comment)
        if spec.extra.get("writes"):  # a statement: `x.add_(1.0)`, `x[0:2] = v`
            lines = [f"{spec.code(lib, args, p)}{comment}"]
        else:
            lines = [f"{v} = {spec.code(lib, args, p)}{comment}"]
        if self.traces_writes:
            # a later write changes this tensor: its value is printed now, as it is
            lines.append(f"show('value', {nid!r}, {v})")
        return lines

    def _linear_lines(self, nid, args, comment):
        p, lib, v, layer = self.params[nid], self.lib, self.var[nid], self.layer[nid]
        x = self._inputs(nid)[0]
        m = self.meta.get(x)
        if m is not None:
            fan_in = str(m.shape[-1] if m.ndim else 1)
            dtype = str(m.dtype).split(".")[-1]
        else:
            fan_in, dtype = f"{args[0]}.shape[-1]", "float32"
        dt = "" if dtype == "float32" else f", dtype={lib}.{dtype}"
        bias = "" if p.get("bias", True) else ", bias=False"
        seed = p.get("seed") or 0
        lines = export_layers.seed_lines(lib, "Linear", layer, seed, made=False)
        lines.append(f"{layer} = nn.Linear({fan_in}, {int(p.get('out_features', 1))}{bias}{dt})")
        stored = []
        for attr, param in (("weight", "weight"), ("bias", "bias_value")):
            if p.get(param) is None or (attr == "bias" and not p.get("bias", True)):
                continue
            values = as_floats(p[param])
            code = self.sidecar.ref(f"{layer}.{attr}", values, dtype)
            stored.append(f"    {layer}.{attr}.copy_({code or f'{lib}.tensor({values!r}{dt})'})")
        if stored:
            lines.append(f"with {lib}.no_grad():  # trained values stored in the graph")
            lines += stored
        lines.append(f"{v} = {layer}({args[0]}){comment}")
        return lines

    def _layer_input(self, nid):
        """The stand-in of a layer node's input (from the dry run; a zero float32 (1, 1) when
        the dry run could not reach it)."""
        ins = self._inputs(nid)
        x = self.meta.get(ins[0]) if ins else None
        return x if x is not None else eg.zeros(1, 1)

    def _layer_parameters(self, nid):
        """The names of a layer node's parameters ("weight", "out_proj.bias")."""
        spec, p = self.specs[nid], self.params[nid]
        return export_layers.parameter_names(spec, p, self._layer_input(nid))

    def _layer_lines(self, nid, args, comment):
        """A layer op's node other than linear (export/layers.py): declared, then called."""
        spec, p, layer = self.specs[nid], self.params[nid], self.layer[nid]
        x = self._layer_input(nid)
        lines = export_layers.declaration(self.lib, spec, p, x, layer, self.sidecar)
        call = export_layers.call(spec, p, x, layer, args[0])
        return lines + [f"{self.var[nid]} = {call}{comment}"]

    def _dataset_lines(self, nid, comment):
        """The generator (or from_csv) called for the arrays, then the features tensor."""
        p, features = self.params[nid], self.arrays[nid][0]
        if p["kind"] == "csv":
            args = [_text_literal(p["csv"])]
            args += [f"{k}={p[k]!r}" for k in ("features", "target") if p[k]]
            call = f"from_csv({', '.join(args)})"
        elif p["kind"] in datasets.IMAGES:  # scikit-learn's images: no noise
            call = f"{p['kind']}(n={p['n']}, seed={p['seed']})"
        else:
            call = f"{p['kind']}(n={p['n']}, noise={float(p['noise'])!r}, seed={p['seed']})"
        return [
            f"{', '.join(self.arrays[nid])} = {call}",
            f"{self.var[nid]} = {self.lib}.tensor({features}){comment}",
        ]

    def _labels_lines(self, nid, comment):
        """The labels array as the dataset's labels param has them: a float column or class
        indices."""
        lib, dataset = self.lib, self._inputs(nid)[0]
        labels = self.arrays[dataset][1]
        p = self.params[dataset]
        if p["labels"] == "classes" or p["kind"] in datasets.IMAGES:
            return [f"{self.var[nid]} = {lib}.tensor({labels}, dtype={lib}.int64){comment}"]
        return [f"{self.var[nid]} = {lib}.tensor({labels}[:, None]){comment}"]

    def _compute(self, key, hints, indent):
        pad = "    " * indent
        out = []
        for nid in self._block(key):
            spec = self.specs[nid]
            if not spec.branches:
                out += [pad + line for line in self._node_lines(nid, hints)]
                continue
            cond = self.var[self.incoming[nid][spec.condition_port][0].source]
            out.append(f"{pad}if {cond}:  {self._comment(nid, hints)}")
            for k, branch in enumerate(spec.branch_ports):
                if k:
                    out.append(f"{pad}else:")
                out += self._compute((nid, branch), hints, indent + 1)
                src = self.incoming[nid][branch][0].source
                out.append(f"{pad}    {self.var[nid]} = {self.var[src]}")
        return out

    def _mirror(self, key, stmts, indent):
        """Per-node statements laid out in the same if/else blocks as the computation."""
        pad = "    " * indent
        out = []
        for nid in self._block(key):
            spec = self.specs[nid]
            if spec.branches:
                cond = self.var[self.incoming[nid][spec.condition_port][0].source]
                then, other = (self._mirror((nid, b), stmts, indent + 1) for b in spec.branch_ports)
                if then:
                    out += [f"{pad}if {cond}:"] + then
                    if other:
                        out += [f"{pad}else:"] + other
                elif other:
                    out += [f"{pad}if not {cond}:"] + other
            out += [pad + s for s in stmts(nid)]
        return out

    def _retain(self, key, indent):
        pad = "    " * indent
        out = []
        mine = [
            n
            for n in self._block(key)
            if self.rg[n] and not self.specs[n].source and not self.specs[n].branches
        ]
        if mine:
            maybe = any(self.rg[n] is _MAYBE for n in mine)
            out += retain_lines([self.var[n] for n in mine], maybe, pad)
        for nid in self._block(key):
            spec = self.specs[nid]
            if spec.branches:
                cond = self.var[self.incoming[nid][spec.condition_port][0].source]
                then, other = (self._retain((nid, b), indent + 1) for b in spec.branch_ports)
                if then:
                    out += [f"{pad}if {cond}:"] + then
                    if other:
                        out += [f"{pad}else:"] + other
                elif other:
                    out += [f"{pad}if not {cond}:"] + other
        return out

    def _shows(self, nid):
        v = self.var[nid]
        out = [f"show('value', {nid!r}, {v})"]
        spec = self.specs[nid]
        if self.rg[nid] and not spec.branches:
            out.append(f"show('grad', {nid!r}, {v}.grad)")
        if spec.name == "linear":
            layer = self.layer[nid]
            out.append(f"show('grad', {nid + '.weight'!r}, {layer}.weight.grad)")
            if self.params[nid].get("bias", True):
                out.append(f"show('grad', {nid + '.bias'!r}, {layer}.bias.grad)")
        elif spec.layer is not None:
            layer = self.layer[nid]
            for name in self._layer_parameters(nid):
                out.append(f"show('grad', {f'{nid}.{name}'!r}, {layer}.{name}.grad)")
        return out

    def header(self):
        doc = self.doc
        lang = "engine Python" if self.flavor == "engine" else "PyTorch"
        run = "python graph.py   (from a Wiregrad checkout: it imports `engine`)"
        if self.flavor == "torch":
            needs = "torch, numpy and safetensors" if self.sidecar.on else "torch and numpy"
            run = f"python graph.py   (needs {needs})"
        what = "runs it forward"
        if self.target:
            what += f" and backward from `{self.var[self.target]}`"
        text = [doc.name.splitlines()[0] if doc.name.strip() else "untitled"]
        if doc.description.strip():
            text += ["", doc.description.strip()]
        said = f"It builds {self.builds}, {what}, and {self.prints}. {self.weights}"
        if self.sidecar.on:  # (export/sidecar.py)
            said += (
                " It reads those values from the .safetensors file of its own name (graph"
                ".safetensors), which must sit beside it."
            )
        text += [
            "",
            f"Exported from Wiregrad as {lang}. Run it with:",
            f"    {run}",
            *textwrap.wrap(said, 96, break_on_hyphens=False),
        ]
        body = "\n".join(text).replace("\\", "\\\\").replace('"""', '\\"\\"\\"')
        # a NUL cannot be in a Python source at all, and a CR (or U+2028, ...) would end a
        # line where the importer's reading does not: every such character is escaped
        body = "".join(
            c if c == "\n" or c.isprintable() else c.encode("unicode_escape").decode() for c in body
        )
        return f'"""{body}\n"""'

    def preamble(self, uses_nn=False, then_class=False):
        """The header, the imports, the helpers and the datasets' code; `then_class`: a class
        follows (isort's two blank lines after the imports, one before other code)."""
        lib = self.lib
        uses_nn = uses_nn or self.uses_nn
        lines = [self.header(), ""]
        if self.note:
            lines += [f"# {self.note}", ""]
        if self.trace:
            lines += ["import json", ""]
        if self.uses_np:
            lines.append("import numpy as np")
        if lib == "eg":
            lines += ["import engine as eg", "import engine.nn.functional as F"]
            if uses_nn:
                lines.append("from engine import nn")
        else:
            lines += ["import torch", "import torch.nn.functional as F"]
            if uses_nn:
                lines.append("from torch import nn")
        if self.sidecar.on:
            lines += sidecar.import_lines(lib)
        kinds = dict.fromkeys(self.params[n]["kind"] for n in self.arrays)
        lines += ["", ""] if then_class or self.trace or kinds else [""]
        if self.trace:
            lines += printout.SHOW_HELPER.strip("\n").splitlines() + ["", ""]
        if kinds:
            lines.append("# -- datasets: Wiregrad's own code (backend/graph/ops/datasets.py)")
            for kind in kinds:
                fn = datasets.FUNCTIONS[kind]
                lines += inspect.getsource(fn).rstrip("\n").splitlines() + ["", ""]
        if self.sidecar.on:
            lines += sidecar.load_lines(lib) + ["", ""]
        return lines

    def backward_lines(self, var, retain):
        """`# -- backward`: the kept gradients (`retain`: lines), then backward from `var`."""
        lib = self.lib
        lines = ["", "# -- backward"] + retain
        why = "the graph's target" if self.target_from_doc else "the last one-element value"
        meta = self.meta.get(self.target)
        if meta is not None and meta.numel() != 1:
            # a plain backward() fails here ("grad can be implicitly created only for
            # scalar outputs"); the run option gradient_ones does this
            shape = "x".join(map(str, meta.shape))
            lines.append(f"# {var} is {shape}, not one number: backward starts from ones")
            lines.append(f"{var}.backward(gradient={lib}.ones_like({var}))  # from {why}")
        else:
            lines.append(f"{var}.backward()  # from {why}")
        return lines

    def script(self, hints):
        lines = self.preamble()
        lines.append("# -- the graph, one line per node, in topological order")
        lines += self._compute(None, hints, 0)
        if self.target:
            # (with writes a .grad is the latest version's: leaves only; and a script without
            # the trace option prints no intermediate gradient)
            retain = self._retain(None, 0) if self.trace and not self.inplace else []
            lines += self.backward_lines(self.var[self.target], retain)
        if not self.trace:
            return "\n".join(lines + self.printed_results()) + "\n"
        lines += ["", printout.TRACE_HEADING]
        if self.inplace:  # the values were printed as they were made; the leaves' .grad here
            lines += [
                s
                for n in self.order
                if self.target and self.specs[n].source and self.rg[n]
                for s in self._shows(n)[1:]
            ]
        elif self.target:
            lines += self._mirror(None, self._shows, 0)
        else:
            lines += self._mirror(None, lambda n: self._shows(n)[:1], 0)
        return "\n".join(lines) + "\n"

    def printed_results(self):
        """The results a person prints: the target's value, then the gradients of the leaves
        and layers it was computed from (where a branch holds them, in its if/else); with no
        target, the values of the graph's ends."""
        lines = ["", "# -- results"]
        if not self.target:
            return lines + self._mirror(None, self._printed_end, 0)
        lines.append(self._printed_value(self.target))
        return lines + self._mirror(None, self._printed_grads, 0)

    def _printed_value(self, nid):
        return printout.value_line(self.var[nid], self.meta.get(nid))

    def _printed_end(self, nid):
        return [] if self.outgoing[nid] else [self._printed_value(nid)]

    def _printed_grads(self, nid):
        spec, v = self.specs[nid], self.var[nid]
        if spec.source:
            return [printout.grad_line(v, v)] if self.rg[nid] else []
        if spec.layer is None:
            return []
        layer = self.layer[nid]
        return [
            printout.grad_line(f"{layer}.{p}", f"{layer}.{p}") for p in self._layer_parameters(nid)
        ]

    # -- hints --------------------------------------------------------------------------------
    def initial_hints(self):
        hints = {}
        for nid in self.order:
            label = self.nodes[nid].label
            if label is not None:
                hints[nid] = {"label": label}
        return hints

    def add_hints(self, hints, back):
        """Add to `hints` whatever `back` (the script read back) got wrong; True if any."""
        got = {n.id: n for n in back.nodes}
        changed = False
        for nid in self.order:
            node, spec = self.nodes[nid], self.specs[nid]
            b = got.get(nid)
            if b is None:
                continue
            h = hints.setdefault(nid, {})
            if b.op != node.op:
                if h.get("op") != node.op:
                    h["op"] = node.op
                    changed = True
                continue  # its params are compared once the op is right
            b_params = resolved_params(spec, b.params)
            for k, v in self.params[nid].items():
                if k in b_params and b_params[k] == v:
                    continue
                if h.setdefault("params", {}).get(k, object()) != v:
                    h["params"][k] = v
                    changed = True
            if not h:
                del hints[nid]
        return changed
