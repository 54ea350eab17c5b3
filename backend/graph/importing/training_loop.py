"""A script's training loop, read into the document's training settings (docs/training.md), not
into nodes: the loop is not unrolled.

    steps = 60                                            numbers the loop uses
    params = [w, *fc1.parameters()]
    opt = torch.optim.SGD(params, lr=0.1, momentum=0.9)   optimizer, lr, momentum
    batch_size = 16                                       (none: every step takes all rows)
    rng = np.random.default_rng(7)                        the minibatch order's seed
    for step in range(1, steps + 1):                      steps: the range's length
        ...
        opt.zero_grad()
        loss.backward()                                   loss: the node `loss` names
        opt.step()

The loop is found as a top-level `for` whose body calls `<opt>.step()`, `<opt>` made by
`<lib>.optim.<Optimizer>(...)` at the top level; its section is that assignment, the lines
between it and the loop, and the assignments just before it of numbers and lists to names
only the section reads (`steps`, `params`).
What code export writes there is read back exactly (a `# training {json}` comment on the
optimizer's line carries what the code does not say: the output node, a full batch's size and
seed). A loop that cannot be read (another optimizer, batches of a loop inside, a loss that is no
node) is left out with a note in the document's description, and the rest still imports. A
loop that computes its loss inside only (the tutorials' loop) is also read as its first step,
which is then the graph (first_step.py).

What follows the loop and only evaluates the trained model is skipped with a note: a run of
`model.eval()` / `model.train()` calls, prints, and blocks under `torch.no_grad()` or
`torch.inference_mode()` (the accuracy an exported model prints after its training). The
document is the graph before its training; the editor shows a training's accuracy itself.
"""

import ast
import json
from collections import Counter

import pydantic

from ..document.format import TrainingSettings
from .syntax import dotted, literal

_HINT = "# training "


class TrainingLoop:
    def __init__(self, imp):
        self.imp = imp  # the statement walker (importer._Importer)

    # -- finding it -----------------------------------------------------------------------------
    def split(self, body):
        """(the statements without the training section, the section or None)."""
        i_for = i_opt = None
        optimizers = {}  # name -> the index of the line that last made it
        for i, s in enumerate(body):  # (one pass: a long script costs no more than its length)
            name = _optimizer_name(s)
            if name is not None:
                optimizers[name] = i
            elif isinstance(s, ast.For):
                stepped = [optimizers[n] for n in _stepped(s) if n in optimizers]
                if stepped:
                    i_for, i_opt = i, max(stepped)
        if i_for is None:
            return body, None
        start, used = i_opt, _loaded(body[i_opt : i_for + 1])
        before = Counter(_loads(body[:start]))  # names read by the lines before the section
        while start > 0:
            s = body[start - 1]
            before.subtract(_loads([s]))
            if not _setup_line(s, used, before):
                break
            start -= 1
        after = i_for + 1
        while after < len(body) and _evaluates(body[after]):
            after += 1
        if after > i_for + 1 and not self.imp.notes.quiet_output:  # (unsaid for an export's own)
            first, last = body[i_for + 1].lineno, body[after - 1].end_lineno
            self.imp.notes.add(
                first,
                f"lines {first}-{last} evaluate the trained model after its training loop: "
                "skipped (the editor's training shows the accuracy)",
            )
        return body[:start] + body[after:], body[start : i_for + 1]

    # -- reading it -----------------------------------------------------------------------------
    def settle(self, doc, section):
        """`doc` with the section's training settings, or with a note saying why not."""
        if section is None:
            return doc
        lines = f"lines {section[0].lineno}-{section[-1].end_lineno}"
        try:
            settings = TrainingSettings(**self._settings(section))
            ids = {n.id for n in doc.nodes}
            for key in ("loss", "output"):
                nid = getattr(settings, key)
                if nid is not None and nid not in ids:
                    raise _Skip(f"its {key} {nid!r} is not a node")
        except _Skip as why:
            note = f"The script's training loop ({lines}) was not read: {why}."
            text = f"{doc.description}\n\n{note}".strip()
            return doc.model_copy(update={"description": text[:10000]})
        except pydantic.ValidationError as exc:
            why = "; ".join(e["msg"] for e in exc.errors())
            note = f"The script's training loop ({lines}) was not read: {why}."
            return doc.model_copy(update={"description": f"{doc.description}\n\n{note}".strip()})
        return doc.model_copy(update={"training": settings})

    def _settings(self, section):
        numbers, out, loop = {}, {}, section[-1]
        for s in section[:-1]:
            if isinstance(s, ast.Assign) and len(s.targets) == 1:
                t = s.targets[0]
                if isinstance(t, ast.Name) and _is_number(s.value):
                    numbers[t.id] = literal(s.value)
                elif isinstance(t, ast.Name) and _optimizer_name(s) is not None:
                    out.update(self._optimizer(s))
            for node in ast.walk(s):
                if isinstance(node, ast.Call) and dotted(node.func) in _RNG:
                    out["seed"] = _number(node.args[0], numbers) if node.args else 0
        out["steps"] = _range_length(loop.iter, numbers)
        out["batch_size"] = int(numbers.get("batch_size", 0))
        if any(isinstance(n, (ast.For, ast.While)) for s in loop.body for n in ast.walk(s)):
            raise _Skip("it has a loop inside (the editor steps through batches itself)")
        out["loss"] = self._loss(loop)
        out.update(self._hint(section))
        return out

    def _optimizer(self, stmt):
        call = stmt.value
        kind = dotted(call.func).rsplit(".", 1)[-1]
        if kind not in ("SGD", "Adam"):
            raise _Skip(f"the optimizer {kind} is not one the editor trains with (SGD, Adam)")
        out = {"optimizer": kind.lower()}
        for k in call.keywords:
            if k.arg == "lr" or (k.arg == "momentum" and kind == "SGD"):
                out[k.arg] = _number(k.value, {})
            else:
                raise _Skip(f"{kind}'s {k.arg} is not a setting of the editor's training")
        if "lr" not in out and len(call.args) > 1:
            out["lr"] = _number(call.args[1], {})
        if "lr" not in out:
            raise _Skip(f"{kind} needs lr=")
        return out

    def _loss(self, loop):
        for node in ast.walk(ast.Module(body=loop.body, type_ignores=[])):
            f = getattr(node, "func", None)
            if isinstance(f, ast.Attribute) and f.attr == "backward":
                if isinstance(f.value, ast.Name) and self.imp.env.get(f.value.id):
                    return self.imp.env[f.value.id]
                raise _Skip("backward is called on no node of the graph")
        raise _Skip("it calls no backward()")

    def _hint(self, section):
        """The `# training {json}` comment of the optimizer's line (code export's)."""
        for s in section:
            text = self.imp.graph.comments.get(s.lineno, "")
            if text.startswith(_HINT):
                try:
                    hint = json.loads(text[len(_HINT) :])
                except (ValueError, RecursionError):
                    raise _Skip("its `# training` comment is not JSON") from None
                if not isinstance(hint, dict):
                    raise _Skip("its `# training` comment is not a JSON object")
                return hint
        return {}


class _Skip(Exception):
    """Why a training loop is not read."""


_RNG = ("np.random.default_rng", "numpy.random.default_rng")


_NO_GRAD = {"no_grad", "inference_mode"}


def _evaluates(stmt):
    """Whether a statement after the loop only evaluates: `m.eval()`, `m.train()`, a print, or a
    block under no_grad / inference_mode."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        name = dotted(stmt.value.func) or ""
        return name == "print" or (name.count(".") == 1 and name.split(".")[1] in ("eval", "train"))
    if isinstance(stmt, ast.With):
        return all(
            isinstance(item.context_expr, ast.Call)
            and (dotted(item.context_expr.func) or "").split(".")[-1] in _NO_GRAD
            for item in stmt.items
        )
    return False


def _optimizer_name(stmt):
    """`opt` of `opt = <lib>.optim.<Name>(...)`; None for any other line."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return None
    t, v = stmt.targets[0], stmt.value
    d = dotted(getattr(v, "func", None)) if isinstance(v, ast.Call) else None
    if isinstance(t, ast.Name) and d and ".optim." in f".{d}" and d.count(".") >= 1:
        return t.id
    return None


def _stepped(loop):
    """The names `<name>.step()` is called on in a loop's body."""
    out = set()
    for node in ast.walk(ast.Module(body=loop.body, type_ignores=[])):
        f = getattr(node, "func", None)
        if isinstance(f, ast.Attribute) and f.attr == "step" and isinstance(f.value, ast.Name):
            out.add(f.value.id)
    return out


def _loads(stmts):
    """Each name read by `stmts`, once per reading."""
    return [
        n.id
        for s in stmts
        for n in ast.walk(s)
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)
    ]


def _loaded(stmts):
    return set(_loads(stmts))


def _setup_line(stmt, used, before):
    """An assignment of a number or a list (`steps = 60`, `params = [...]`) to names the
    section reads and no line before it does (`before`: a Counter of the names read there)."""
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
        return False
    if not (_is_number(stmt.value) or isinstance(stmt.value, (ast.List, ast.Tuple))):
        return False
    t = stmt.targets[0]
    names = [t] if isinstance(t, ast.Name) else getattr(t, "elts", None)
    if not names or not all(isinstance(n, ast.Name) for n in names):
        return False
    ids = {n.id for n in names}
    return ids <= used and not any(before[i] > 0 for i in ids)


def _is_number(node):
    try:
        v = literal(node)
    except Exception:
        return False
    return isinstance(v, (int, float)) and not isinstance(v, bool)


def _number(node, numbers):
    if isinstance(node, ast.Name) and node.id in numbers:
        return numbers[node.id]
    if isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Sub)):
        a, b = _number(node.left, numbers), _number(node.right, numbers)
        return a + b if isinstance(node.op, ast.Add) else a - b
    if _is_number(node):
        return literal(node)
    raise _Skip(f"{ast.unparse(node)} is not a number the script sets")


def _range_length(it, numbers):
    if not (
        isinstance(it, ast.Call)
        and dotted(it.func) == "range"
        and 1 <= len(it.args) <= 3
        and not it.keywords
    ):
        raise _Skip("it does not loop over range(<steps>)")
    bounds = [_number(a, numbers) for a in it.args]
    if not all(isinstance(b, int) for b in bounds) or (len(bounds) == 3 and bounds[2] == 0):
        raise _Skip("its range is not of whole numbers")
    try:
        return len(range(*bounds))
    except OverflowError:  # more steps than an index holds
        raise _Skip("its range is longer than any training") from None
