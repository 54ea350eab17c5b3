"""Contractions: einsum (PyTorch's equation rules, '...' and implicit output included) and
tensordot."""

import numpy as np

from ._common import Node, const, requires_grad, track, wrap, wrap_dim, xp
from .linalg import matmul
from .reduce import sum_to


def _name(d):
    return d.legacy_name[: -len("Tensor")]


# -- einsum -------------------------------------------------------------------------------------
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def _einsum_terms(equation, n_operands):
    """The equation's input terms and output term (None when implicit), each a list of letters
    with "..." kept as one item; PyTorch's messages for malformed equations."""
    terms, cur, arrow, i = [], [], False, 0
    while i < len(equation):
        c = equation[i]
        if c in _LETTERS:
            cur.append(c)
        elif c == " ":
            pass
        elif c == "," and not arrow:
            terms.append(cur)
            cur = []
        elif c == "-" and not arrow and equation[i + 1 : i + 2] == ">":
            terms.append(cur)
            cur, arrow = [], True
            i += 1
        elif c == ".":
            which = "the output" if arrow else f"operand {len(terms)}"
            if equation[i : i + 3] != "...":
                raise RuntimeError(
                    f"einsum(): found '.' for {which} that is not part of any ellipsis"
                )
            if "..." in cur:
                raise RuntimeError(
                    f"einsum(): found '.' for {which} for which an ellipsis was already found"
                )
            cur.append("...")
            i += 2
        else:
            raise RuntimeError(
                f"einsum(): invalid subscript given at index {i} in the equation string, "
                "subscripts must be in [a-zA-Z]"
            )
        i += 1
    if arrow:
        output = cur
    else:
        terms.append(cur)
        output = None
    if len(terms) > n_operands:
        raise RuntimeError("einsum(): fewer operands were provided than specified in the equation")
    if len(terms) < n_operands:
        raise RuntimeError("einsum(): more operands were provided than specified in the equation")
    return terms, output


def _einsum_plan(equation, shapes):
    """Letters per operand (ellipses spelt out with spare letters), the output's letters, and
    each letter's size after broadcasting."""
    terms, output = _einsum_terms(equation, len(shapes))
    used = {c for t in terms + [output or []] for c in t if c != "..."}
    spare = [c for c in _LETTERS if c not in used]
    n_ell = 0
    for k, (t, shape) in enumerate(zip(terms, shapes)):
        named = len(t) - ("..." in t)
        if "..." in t:
            if named > len(shape):
                raise RuntimeError(
                    f"einsum(): the number of subscripts in the equation ({named}) is more than "
                    f"the number of dimensions ({len(shape)}) for operand {k}"
                )
            n_ell = max(n_ell, len(shape) - named)
        elif named != len(shape):
            raise RuntimeError(
                f"einsum(): the number of subscripts in the equation ({named}) does not match "
                f"the number of dimensions ({len(shape)}) for operand {k} and no ellipsis was "
                "given"
            )
    ell = spare[:n_ell]
    subs, sizes, ell_sizes = [], {}, {}
    for k, (t, shape) in enumerate(zip(terms, shapes)):
        letters = []
        for c in t:
            letters += ell[n_ell - (len(shape) - len(t) + 1) :] if c == "..." else [c]
        own = {}
        for c, s in zip(letters, shape):
            if c in own and own[c] != s:
                raise RuntimeError(
                    f"einsum(): subscript {c} is repeated for operand {k} but the sizes don't "
                    f"match, {s} != {own[c]}"
                )
            own[c] = s
            seen = sizes.get(c, 1)
            if s != seen and s != 1 and seen != 1:
                if c in ell:
                    raise RuntimeError(
                        f"einsum(): dimension {ell.index(c)} covered by ellipsis in operand {k}"
                        f"has size {s} which does not broadcast with previously seen ellipsis "
                        f"with size {ell_sizes[c]} for the respective dimension"
                    )
                raise RuntimeError(
                    f"einsum(): subscript {c} has size {s} for operand {k} which does not "
                    f"broadcast with previously seen size {seen}"
                )
            sizes[c] = max(seen, s)
            ell_sizes.setdefault(c, s)
        subs.append(letters)
    if output is None:
        counts = {}
        for letters in subs:
            for c in letters:
                counts[c] = counts.get(c, 0) + 1
        out = ell + sorted(c for c, n in counts.items() if n == 1 and c not in ell)
    else:
        out = []
        for c in output:
            if c == "...":
                out += ell
                continue
            if c not in sizes:
                raise RuntimeError(
                    f"einsum(): output subscript {c} does not appear in the equation for any "
                    "input operand"
                )
            if c in out:
                raise RuntimeError(
                    f"einsum(): output subscript {c} appears more than once in the output"
                )
            out.append(c)
    return subs, out, sizes


class _EinsumNode(Node):
    """einsum of the saved operands; each operand's gradient is itself an einsum of the output
    gradient with the other operands (plus identity matrices for a subscript an operand repeats,
    and ones for one only it sums over)."""

    __slots__ = ("subs", "out", "sizes")

    def backward(self, g):
        ops = self.unpack()
        grads = []
        for i, x in enumerate(ops):
            if not self.needs_grad(i):
                grads.append(None)
                continue
            terms = [self.out] + [s for j, s in enumerate(self.subs) if j != i]
            args = [g] + [o for j, o in enumerate(ops) if j != i]
            # subscripts some other term holds at full size (not broadcast from size 1)
            present = set(self.out) | {
                c
                for j, (s, o) in enumerate(zip(self.subs, ops))
                if j != i
                for c, n in zip(s, o._data.shape)
                if n == self.sizes[c]
            }
            spare = iter(c for c in _LETTERS if c not in self.sizes)
            target, seen = [], set()
            for c in self.subs[i]:
                n = self.sizes[c]
                if c in seen:  # a repeated subscript: the gradient lies on the diagonal
                    f = next(spare)
                    terms.append([c, f])
                    args.append(const(xp(g._data).eye(n, dtype=g._data.dtype)))
                    target.append(f)
                    continue
                seen.add(c)
                if c not in present:  # summed here alone (or broadcast elsewhere): spread it
                    terms.append([c])
                    args.append(const(xp(g._data).ones(n, dtype=g._data.dtype)))
                    present.add(c)
                target.append(c)
            eq = ",".join("".join(t) for t in terms) + "->" + "".join(target)
            gi = einsum(eq, *args)
            shape = x._data.shape
            if gi._data.shape != shape:  # an operand's size-1 dims were broadcast
                gi = sum_to(gi, shape)
            grads.append(gi)
        return tuple(grads)


_EINSUM_NODES = {
    n: type(n, (_EinsumNode,), {"__slots__": ()})
    for n in ("ViewBackward0", "MulBackward0", "SumBackward1", "PermuteBackward0")
}


def _einsum_node_name(subs, out):
    """The grad_fn PyTorch's einsum ends in (it builds einsum from permute, sum, mul and bmm):
    a contraction of several operands ends in a view of bmm's result."""
    if len(subs) == 1:
        return "SumBackward1" if len(out) < len(set(subs[0])) else "PermuteBackward0"
    summed = {c for s in subs for c in s} - set(out)
    return "ViewBackward0" if summed else "MulBackward0"


def einsum(equation, *operands):
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    shapes = [o._data.shape for o in operands]
    subs, out, sizes = _einsum_plan(equation, shapes)
    first = operands[0].dtype if operands else None
    for o in operands[1:]:
        if o.dtype != first:
            raise RuntimeError(f"expected scalar type {_name(first)} but found {_name(o.dtype)}")
    # size-1 dims broadcast against a larger size elsewhere are squeezed out: numpy's einsum
    # does not broadcast named subscripts
    arrays, letters = [], []
    for o, s in zip(operands, subs):
        d = o._data
        keep = [k for k, c in enumerate(s) if not (d.shape[k] == 1 and sizes[c] != 1)]
        if len(keep) != len(s):
            d = d.reshape([d.shape[k] for k in keep])
            s = [s[k] for k in keep]
        arrays.append(d)
        letters.append(s)
    m = xp(arrays[0])
    kept = {c for s in letters for c in s}
    for c in out:
        if c not in kept:  # an output subscript only ever broadcast from size 1
            arrays.append(m.ones(sizes[c], dtype=arrays[0].dtype))
            letters.append([c])
    eq = ",".join("".join(s) for s in letters) + "->" + "".join(out)
    # a contraction path (and BLAS) pays off for three operands, or for two large ones
    work = float(np.prod([float(n) for n in sizes.values()]))
    optimize = len(arrays) > 2 or (len(arrays) == 2 and work > 4096)
    data = m.asarray(m.einsum(eq, *arrays, optimize=optimize))
    if len(arrays) == 1 or not data.flags.c_contiguous:  # one operand: einsum returns a view
        data = data.copy()
    res = wrap(data)
    if requires_grad(*operands):
        node = _EINSUM_NODES[_einsum_node_name(subs, out)](operands, operands)
        node.subs, node.out, node.sizes = subs, out, sizes
        track(res, node)
    return res


# -- tensordot ----------------------------------------------------------------------------------
def tensordot(a, b, dims=2, out=None):
    na, nb = a._data.ndim, b._data.ndim
    if hasattr(dims, "_data"):
        dims = dims.tolist()
    if isinstance(dims, (int, np.integer)):
        if dims < 0:
            raise RuntimeError(f"tensordot expects dims >= 0, but got dims={dims}")
        if dims > na or dims > nb:
            raise RuntimeError(f"tensordot expects dims < ndim_a or ndim_b, but got dims={dims}")
        da, db = list(range(na - dims, na)), list(range(dims))
    else:
        da, db = dims
        da = [da] if isinstance(da, int) else list(da)
        db = [db] if isinstance(db, int) else list(db)
        if len(da) != len(db):
            raise RuntimeError("both dimension lists should have same length")
    da = [wrap_dim(d, na) for d in da]
    db = [wrap_dim(d, nb) for d in db]
    sa, sb = a._data.shape, b._data.shape
    for x, y in zip(da, db):
        if sa[x] != sb[y]:
            raise RuntimeError(
                f"contracted dimensions need to match, but first has size {sa[x]} in dim {x} and "
                f"second has size {sb[y]} in dim {y}"
            )
    free_a = [d for d in range(na) if d not in da]
    free_b = [d for d in range(nb) if d not in db]
    k = int(np.prod([sa[d] for d in da], dtype=np.int64))
    # as PyTorch: permute each to (free, contracted), one mm, then a view to the free dims
    a2 = a.permute(*free_a, *da).reshape(-1, k) if free_a else a.permute(*da).reshape(1, k)
    b2 = b.permute(*db, *free_b).reshape(k, -1) if free_b else b.permute(*db).reshape(k, 1)
    return matmul(a2, b2).reshape([sa[d] for d in free_a] + [sb[d] for d in free_b])


__all__ = ["einsum", "tensordot"]
METHODS = {}
INPLACE = {}
FUNCTIONAL = {}
