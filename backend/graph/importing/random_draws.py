"""Random draws of a script, drawn while reading with the engine's PyTorch-exact streams
(docs/random.md) and written into the document as the values PyTorch gives:

    g = torch.Generator().manual_seed(2147483647)   a generator: an engine Generator, held as
    C = torch.randn((27, 10), generator=g)           a constant; each draw advances it, as in
    W = torch.randn((30, 200), generator=g)          PyTorch, so W is PyTorch's W
    torch.randn(3, generator=torch.Generator().manual_seed(5))   a generator made in place
    torch.manual_seed(0); x = torch.rand(4)          the global stream after a manual_seed

A draw is a `tensor` node with those values (its `value` param), up to MAX_VALUES numbers.
What cannot be PyTorch's numbers keeps the node's own seeded init, with a note at its line:
a draw from the global stream without a manual_seed (a fresh draw in PyTorch too), or after a
layer or module was made (their default init draws from that stream, which the document's
layers do not share), or inside a class (read once for every call), or one too large to write
out. The walker of a class's methods draws nothing exactly (`exact` False), but a layer made
right after torch.manual_seed(S) takes S as its seed there too."""

import ast

import engine

from .problems import Unsupported
from .python_values import PyObject
from .syntax import literal

MAX_VALUES = 100_000
_DTYPES = {"float32": engine.float32, "float64": engine.float64}
# nodes that may draw from the global stream when the document runs (dropout in train mode;
# a module's forward may hold one): a global draw after one cannot be PyTorch's
_DRAWS_WHEN_RUN = ("dropout", "module")


class GeneratorValue(PyObject):
    """`torch.Generator().manual_seed(S)`: an engine Generator whose stream the draws read."""

    def __init__(self, seed):
        self.seed = seed
        self.lost = False  # it drew where the importer cannot follow (a class, a branch)
        self.generator = engine.Generator()
        self.generator.manual_seed(seed)

    def __repr__(self):
        return f"Generator(seed={self.seed})"


def _drawing_layers(reader, dname, offset=0, depth=0):
    """[(effective seed, node)] of the nodes of definition `dname` whose init draws (layers
    with a seed, not dropout), nested modules' seeds added as flattening adds them."""
    from .. import registry  # (the registry imports nothing of the importer)

    out = []
    d = reader.defs.get(dname)
    if d is None or depth > 32:
        return None
    for n in d["nodes"]:
        p = n["params"]
        if n["op"] == "module":
            inner = _drawing_layers(reader, p["module"], offset + int(p.get("seed", 0)), depth + 1)
            if inner is None:
                return None
            out += inner
        elif n["op"] != "dropout":
            spec = registry.get(n["op"])
            if spec is not None and spec.param("seed") is not None:
                out.append((offset + int(p.get("seed") or 0), n))
    return out


def seed_after_manual_seed(reader, inst):
    """The seed of an instance of a class made right after torch.manual_seed(S) (the
    `fresh_seed` classes' instantiation kept): where its definition holds one layer whose
    init draws, that layer then draws what PyTorch's does; None where it is not so."""
    fresh = inst.get("fresh_seed")
    if fresh is None:
        return None
    layers = _drawing_layers(reader, inst["def"])
    if layers is not None and len(layers) == 1 and layers[0][0] <= fresh:
        seed, node = layers[0]
        # (an instance's seed is added to the seeds its nodes have: give the layer its own)
        node["params"].setdefault("seed", 0)
        return fresh - seed
    reader.imp.notes.add(
        inst.get("line", 0),
        f"{inst['cls']}(): its layers' default init is the document's own seeded draw, not "
        "PyTorch's (torch.manual_seed(S) right before gives PyTorch's for a class of one layer)",
    )
    return None


class RandomDraws:
    def __init__(self, imp, exact=True):
        self.imp = imp  # the statement walker (importer._Importer)
        self.exact = exact  # False in a class's walker
        self.default = None  # the global stream after torch.manual_seed(s)
        self.disturbed = False  # a layer or module was made since: the stream is not known
        self.fresh = False  # nothing drawn from the global stream since its manual_seed
        self.seen = set()

    def manual_seed(self, call):
        """`torch.manual_seed(s)`: the global stream from s (where s is a whole number)."""
        try:
            seed = literal(call.args[0]) if len(call.args) == 1 and not call.keywords else None
        except Unsupported:
            seed = None
        if type(seed) is int:
            self.default = GeneratorValue(seed)
            self.disturbed = False
            self.seen = set(self.imp.graph.nodes)  # the nodes made before the seed
            # (a layer made next takes the seed also in a class's __init__: every instance
            # made runs the seed and the layer anew, unlike a draw read once for all)
            self.fresh = True
        else:
            self.default = None

    def layer_made(self, draws=True):
        """A layer or module was made; `draws`: its default init draws from the stream."""
        if draws:
            self.disturbed = True
            self.fresh = False

    def reset_seed(self, call):
        """The seed `layer.reset_parameters(...)` gives its layer: its generator's
        (`eg.Generator().manual_seed(S)`), or without one the global stream's, known right
        after torch.manual_seed(S) (then drawn from)."""
        if call.args or call.keywords:
            return self.imp.sources.seed_of(call.args[0] if call.args else None)
        seed = self.fresh_seed()
        self.layer_made()
        if seed is None:
            raise Unsupported(
                "reset_parameters() draws from PyTorch's global stream here: write "
                "torch.manual_seed(S) right before it (S: the layer's seed)"
            )
        return seed

    def fresh_seed(self):
        """The seed of the global stream where nothing has drawn from it since
        torch.manual_seed: a layer made now draws exactly what a layer node seeded so does."""
        return self.default.seed if self.default is not None and self.fresh else None

    def _run_draws(self):
        """Whether a node made since the seed may draw from the global stream when run."""
        nodes = self.imp.graph.nodes
        return any(nodes[n]["op"] in _DRAWS_WHEN_RUN for n in nodes if n not in self.seen)

    def generator(self, node):
        """The GeneratorValue a `generator=` argument or an assigned value names: a variable
        holding one, or `torch.Generator().manual_seed(<int>)`; None for anything else."""
        if isinstance(node, ast.Name):
            v = self.imp.constants.lookup(node.id)
            return v if isinstance(v, GeneratorValue) else None
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "manual_seed"
            and len(node.args) == 1
            and not node.keywords
            and self.imp.modules.is_call(node.func.value, "lib", "Generator")
        ):
            seed = literal(node.args[0])
            if type(seed) is not int:
                raise Unsupported("manual_seed takes a whole number")
            return GeneratorValue(seed)
        return None

    def draw(self, fn, shape, dtype, gen_node, normal=(0.0, 1.0)):
        """The values of `fn` (randn / rand / normal of (mean, std) `normal`) of `shape`, as
        PyTorch draws them; None where they cannot be (then the node keeps its seeded init,
        and a note says why)."""
        line = self.imp.current_line
        gen = self.generator(gen_node) if gen_node is not None else None
        if gen_node is not None and gen is None:
            raise Unsupported(
                "a generator is a variable set to torch.Generator().manual_seed(<int>), or "
                "that expression itself"
            )
        n = 1
        for s in shape:
            n *= s
        why = None
        if not self.exact:
            why = "inside a class or a branch on a tensor it is not read once per draw"
        elif dtype not in _DTYPES:
            why = f"{dtype} draws are not written out"
        elif n > MAX_VALUES:
            why = f"it has {n:,} numbers, more than the {MAX_VALUES:,} written out"
        elif gen is None and self.default is None:
            why = "the script sets no seed (torch.manual_seed), so PyTorch draws afresh too"
        elif gen is not None and gen.lost:
            why = "its generator drew inside a class or a branch before, where it is not followed"
        elif gen is None and (self.disturbed or self._run_draws()):
            why = (
                "since torch.manual_seed, a layer's init, a module or a dropout drew from the "
                "global stream, or a draw was not followed (pass generator= to draw from a "
                "stream of its own)"
            )
        if why is not None:
            self.imp.notes.add(line, f"{fn}: the values are a fresh draw, not PyTorch's: {why}")
            if gen is not None:
                gen.lost = True  # (PyTorch's stream went on where this one did not)
            else:
                self.disturbed = True
                self.fresh = False  # (PyTorch drew from the stream: no layer after takes it)
            return None
        if gen is None:
            self.fresh = False
        g = (gen or self.default).generator
        with engine.no_grad():
            if fn == "normal":
                mean, std = normal
                t = engine.normal(mean, std, tuple(shape), generator=g, dtype=_DTYPES[dtype])
                return t.tolist()
            draw = engine.randn if fn == "randn" else engine.rand
            return draw(*shape, generator=g, dtype=_DTYPES[dtype]).tolist()
