"""Lines that touch no tensor: read, skipped, and said in a note (never refused).

    print(x.shape); logging.info("...")       output: nothing for the graph to hold
    torch.manual_seed(0)                     a note; the seed of the draws and the layer
                                             after it (random_draws.py)
    assert x.shape == (2, 3)                 a check the script makes when it runs
    p.grad = None                            a gradient cleared: a run's start from none
    open("log.txt", "w").write("...")        any expression statement that reads no tensor,
                                             layer or module instance
    import random; import torch.optim as optim   (modules.py: an import the importer has no
                                             meaning for binds names that read nothing)

A script exported by Wiregrad prints its results at its end; those lines are the exporter's own
and are skipped without a note. The notes are listed by line in the document's description
(docs/graph-format.md, "Import notes"), so the dialog, the API and the CLI all show them."""

import ast

from .syntax import dotted

NOTES_HEADING = "Import notes (lines read and skipped):"
_OUTPUT = ("print", "show", "pprint")
_MAX_NOTES = 200  # a script of a thousand prints says the first ones, then how many more


class Notes:
    """The notes of one import, by line, each said once (an unrolled loop reads a line again);
    the walkers of a script's classes and functions share the script's."""

    def __init__(self):
        self.items = {}  # (line, text) -> None, in the order first said
        self.quiet_output = False  # an exported script: its prints are the exporter's own

    def add(self, line, text):
        if len(self.items) < _MAX_NOTES:
            self.items.setdefault((line, text), None)
        else:
            self.items.setdefault((0, "more lines were skipped than are listed here"), None)

    def text(self):
        """The notes as the description's section (empty where there are none)."""
        if not self.items:
            return ""
        lines = [f"- line {ln}: {t}" if ln else f"- {t}" for ln, t in self.items]
        return "\n".join([NOTES_HEADING, *lines])

    def described(self, description):
        """The description with the notes appended (within the document's 10,000 characters)."""
        notes = self.text()
        if not notes:
            return description
        return f"{description}\n\n{notes}".strip()[:10000]


class SkippedLines:
    def __init__(self, imp):
        self.imp = imp  # the statement walker (importer._Importer)

    def read(self, stmt):
        """Whether `stmt` is a line that touches no tensor (then noted and skipped)."""
        imp, notes = self.imp, self.imp.notes
        line = stmt.lineno
        if isinstance(stmt, ast.Assert):
            notes.add(line, "assert skipped: a check the script makes when it runs")
            return True
        if _clears_grad(stmt):
            notes.add(line, f"`{_code(imp, stmt)}` skipped: a run's gradients start from none")
            return True
        if not isinstance(stmt, ast.Expr):
            return False
        value = stmt.value
        if isinstance(value, ast.Constant):
            return False  # a docstring or a string used as a comment: the walker's own
        call = value if isinstance(value, ast.Call) else None
        name = dotted(call.func) if call is not None else None
        if name in _OUTPUT:
            if not notes.quiet_output:
                notes.add(line, f"{name}(...) skipped: it prints, and makes no node")
            return True
        if call is not None and imp.modules.func_kind(name) == ("lib", "manual_seed"):
            seed = _shown(call.args[0]) if len(call.args) == 1 else "..."
            imp.random.manual_seed(call)
            if not notes.quiet_output:  # (an exported script seeds its layers so: unsaid)
                notes.add(
                    line,
                    f"manual_seed({seed}) read: torch.randn / rand after it draw PyTorch's "
                    "numbers, and a layer made right after it takes it as its seed",
                )
            return True
        if self.reads_tensor(value):
            return False
        notes.add(line, f"`{_code(imp, stmt)}` skipped: it reads no tensor")
        return True

    def reads_tensor(self, node):
        """Whether an expression may read a tensor, a layer or a module instance: any name
        the script bound to one (or whose line failed), or a call of torch / F / nn."""
        imp = self.imp
        held = (imp.env, imp.layers.declared, imp.nn.declared, imp.classes.instances)
        for n in ast.walk(node):
            if isinstance(n, ast.Name):
                if any(n.id in d for d in held) or imp.lists.is_list(n.id):
                    return True
                if n.id in imp.tensor_lists.lists or n.id in imp.optimizers:
                    return True
                if imp.modules.func_kind(n.id)[0] in ("lib", "F", "nn"):
                    return True
                if n.id in imp.functions.defs:
                    return True  # a helper of the script: it may make nodes
        return False


def _clears_grad(stmt):
    """`x.grad = None` (the gradient cleared, as zero_grad(set_to_none=True) does)."""
    return (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Attribute)
        and stmt.targets[0].attr == "grad"
        and isinstance(stmt.value, ast.Constant)
        and stmt.value.value is None
    )


def _shown(node):
    return ast.unparse(node)[:40]


def _code(imp, stmt):
    code = imp.graph.code_at(stmt.lineno)
    return code if len(code) <= 60 else code[:57] + "..."
