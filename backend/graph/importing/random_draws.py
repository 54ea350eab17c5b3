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
out. The walker of a class's methods draws nothing exactly (`exact` False)."""

import ast

import engine

from .problems import Unsupported
from .python_values import PyObject
from .syntax import literal

MAX_VALUES = 100_000
_DTYPES = {"float32": engine.float32, "float64": engine.float64}


class GeneratorValue(PyObject):
    """`torch.Generator().manual_seed(S)`: an engine Generator whose stream the draws read."""

    def __init__(self, seed):
        self.seed = seed
        self.generator = engine.Generator()
        self.generator.manual_seed(seed)

    def __repr__(self):
        return f"Generator(seed={self.seed})"


class RandomDraws:
    def __init__(self, imp, exact=True):
        self.imp = imp  # the statement walker (importer._Importer)
        self.exact = exact  # False in a class's walker
        self.default = None  # the global stream after torch.manual_seed(s)
        self.disturbed = False  # a layer or module was made since: the stream is not known

    def manual_seed(self, call):
        """`torch.manual_seed(s)`: the global stream from s (where s is a whole number)."""
        try:
            seed = literal(call.args[0]) if len(call.args) == 1 and not call.keywords else None
        except Unsupported:
            seed = None
        if type(seed) is int:
            self.default = GeneratorValue(seed)
            self.disturbed = False
        else:
            self.default = None

    def layer_made(self):
        self.disturbed = True

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

    def draw(self, fn, shape, dtype, gen_node):
        """The values of `fn` (randn / rand) of `shape`, as PyTorch draws them; None where
        they cannot be (then the node keeps its seeded init, and a note says why)."""
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
            why = "inside a class it is read once for every call"
        elif dtype not in _DTYPES:
            why = f"{dtype} draws are not written out"
        elif n > MAX_VALUES:
            why = f"it has {n:,} numbers, more than the {MAX_VALUES:,} written out"
        elif gen is None and self.default is None:
            why = "the script sets no seed (torch.manual_seed), so PyTorch draws afresh too"
        elif gen is None and self.disturbed:
            why = (
                "a layer or module was made after torch.manual_seed, and its init drew from "
                "the global stream (pass generator= to draw from a stream of its own)"
            )
        if why is not None:
            self.imp.notes.add(line, f"{fn}: the values are a fresh draw, not PyTorch's: {why}")
            return None
        g = (gen or self.default).generator
        draw = engine.randn if fn == "randn" else engine.rand
        with engine.no_grad():
            return draw(*shape, generator=g, dtype=_DTYPES[dtype]).tolist()
