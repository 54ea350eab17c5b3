"""Reductions: sum, mean, max / min (all elements, or along dims: amax / amin), var, std."""

import engine as eg

from ..registry import CallForm, OpSpec, Param, Port, Unsupported, register
from .common import call_code, on_input

DIM = Param("dim", "dims", None, nullable=True, doc="dim or dims to reduce; empty for all")
KEEPDIM = Param("keepdim", "bool", False, doc="keep reduced dims with size 1")
REDUCE = ("input", "dim", "keepdim")


def _dims(p):
    d = p.get("dim")
    return tuple(d) if isinstance(d, list) else d


for _name, _doc, _derivative in (
    (
        "sum",
        "sum of elements",
        "1 (ones: the upstream gradient is broadcast back to input's shape)",
    ),
    ("mean", "mean of elements", "1/n (n: the number of elements averaged)"),
):
    register(
        OpSpec(
            _name,
            "reductions",
            _doc,
            (Port("input", derivative=_derivative),),
            run=on_input(getattr(eg, _name), lambda p: (_dims(p), p.get("keepdim", False))),
            code=call_code(_name, ("dim", "keepdim"), {"dim": None, "keepdim": False}),
            params=(DIM, KEEPDIM),
            call=CallForm(args=REDUCE, usual="method"),
        )
    )


def _extremum_run(fn_full, fn_dim):
    def run(ctx, ins, p):
        d = p.get("dim")
        if d is None or d == []:
            return fn_full(ins[0])
        return fn_dim(ins[0], d if isinstance(d, int) else tuple(d), p.get("keepdim", False))

    return run


def _extremum_code(name):
    def code(lib, args, p):
        d = p.get("dim")
        if d is None or d == []:
            return f"{lib}.{name}({args[0]})"
        kd = ", keepdim=True" if p.get("keepdim") else ""
        if isinstance(d, int):
            return f"{lib}.{name}({args[0]}, dim={d}{kd}).values"
        return f"{lib}.a{name}({args[0]}, dim={tuple(d)!r}{kd})"

    return code


def _extremum_read(name, vals, values):
    """max(x, dim) gives (values, indices), so it needs `.values`; amax's one dim is a list."""
    dim = vals.get("dim")
    if name in ("max", "min") and isinstance(dim, int) and not values:
        raise Unsupported(f"{name}(x, dim) gives (values, indices): add .values")
    if name in ("amax", "amin") and isinstance(dim, int):
        vals["dim"] = [dim]
    return vals


for _name, _reduce, _by_dims, _doc, _most in (
    ("max", eg.max, eg.amax, "largest element (along dim, if given)", "largest"),
    ("min", eg.min, eg.amin, "smallest element (along dim, if given)", "smallest"),
):
    register(
        OpSpec(
            _name,
            "reductions",
            _doc,
            (
                Port(
                    "input",
                    derivative=f"1 where input is the {_most} (along dim, if given), else 0; "
                    f"ties share it evenly ({_name}(input, dim) gives it all to the index it "
                    "picks)",
                ),
            ),
            # one dim: the values of max(dim=); several: amax/amin, as PyTorch spells them
            run=_extremum_run(
                _reduce,
                lambda x, d, k, f=_reduce, g=_by_dims: (
                    f(x, d, k).values if isinstance(d, int) else g(x, d, k)
                ),
            ),
            code=_extremum_code(_name),
            params=(DIM, KEEPDIM),
            call=CallForm(
                args=REDUCE,
                aliases=(f"a{_name}",),
                values=True,
                read=_extremum_read,
                usual="method",
            ),
        )
    )


def _unbiased_read(name, vals, values):
    """PyTorch's older `unbiased=` is correction 1 or 0."""
    if "unbiased" in vals:
        if "correction" in vals:
            raise Unsupported("give correction or unbiased, not both")
        vals["correction"] = 1 if vals.pop("unbiased") else 0
    return vals


# n: the number of elements reduced; mean: theirs
for _name, _doc, _derivative in (
    ("var", "variance", "2·(input − mean)/(n − {correction})"),
    ("std", "standard deviation", "(input − mean)/((n − {correction})·std)"),
):
    register(
        OpSpec(
            _name,
            "reductions",
            f"{_doc} (Bessel-corrected by default)",
            (Port("input", derivative=_derivative),),
            run=on_input(
                getattr(eg, _name),
                lambda p: (_dims(p),),
                lambda p: {
                    "keepdim": p.get("keepdim", False),
                    "correction": p.get("correction", 1),
                },
            ),
            code=call_code(
                _name,
                ("dim", "correction", "keepdim"),
                {"dim": None, "correction": 1, "keepdim": False},
            ),
            params=(DIM, Param("correction", "int", 1, min=0), KEEPDIM),
            call=CallForm(
                args=("input", "dim"),
                kwonly=("correction", "keepdim", "unbiased"),
                read=_unbiased_read,
                usual="method",
            ),
        )
    )
