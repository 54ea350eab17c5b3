"""repr(tensor) as PyTorch prints it: widths, int-looking floats ("25."), scientific notation,
summaries past 1,000 elements, and the suffixes (dtype, device, grad_fn, requires_grad)."""

import math

import numpy as np

PRECISION, THRESHOLD, EDGEITEMS, LINEWIDTH = 4, 1000, 3, 80
_DEFAULT_DTYPES = ("float32", "int64", "bool")


class _Formatter:
    def __init__(self, values, floating):
        self.floating, self.int_mode, self.sci_mode, self.width = floating, True, False, 1
        if not floating:
            for v in values.tolist():
                self.width = max(self.width, len(str(v)))
            return
        finite = values[np.isfinite(values) & (values != 0)].astype(np.float64)
        if finite.size == 0:
            return
        lo, hi = np.abs(finite).min(), np.abs(finite).max()
        self.int_mode = bool(np.all(finite == np.ceil(finite)))
        if self.int_mode:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8
        else:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        for v in finite.tolist():
            if self.sci_mode:
                self.width = max(self.width, len(f"{v:.{PRECISION}e}"))
            elif self.int_mode:
                self.width = max(self.width, len(f"{v:.0f}") + 1)
            else:
                self.width = max(self.width, len(f"{v:.{PRECISION}f}"))

    def format(self, v):
        if not self.floating:
            s = str(v)
        elif self.sci_mode:
            s = f"{v:{self.width}.{PRECISION}e}"
        elif self.int_mode:
            s = f"{v:.0f}" + ("" if math.isinf(v) or math.isnan(v) else ".")
        else:
            s = f"{v:.{PRECISION}f}"
        return " " * (self.width - len(s)) + s


def _summarized(a):
    """The values the formatter looks at when a summary shows only the edges."""
    if a.ndim == 0:
        return a.reshape(-1)
    if a.shape[0] > 2 * EDGEITEMS:
        a = np.concatenate([a[:EDGEITEMS], a[-EDGEITEMS:]])
    if a.ndim == 1:
        return a
    return np.concatenate([_summarized(x) for x in a])


def _body(a, indent, summarize, fmt):
    if a.ndim == 0:
        return fmt.format(a.item())
    if a.ndim == 1:
        cells = (
            [fmt.format(v) for v in a.tolist()]
            if not (summarize and a.shape[0] > 2 * EDGEITEMS)
            else (
                [fmt.format(v) for v in a[:EDGEITEMS].tolist()]
                + [" ..."]
                + [fmt.format(v) for v in a[-EDGEITEMS:].tolist()]
            )
        )
        per_line = max(1, (LINEWIDTH - indent) // (fmt.width + 2))
        lines = [", ".join(cells[i : i + per_line]) for i in range(0, len(cells), per_line)]
        return "[" + (",\n" + " " * (indent + 1)).join(lines) + "]"
    if summarize and a.shape[0] > 2 * EDGEITEMS:
        rows = (
            [_body(a[i], indent + 1, summarize, fmt) for i in range(EDGEITEMS)]
            + ["..."]
            + [
                _body(a[i], indent + 1, summarize, fmt)
                for i in range(a.shape[0] - EDGEITEMS, a.shape[0])
            ]
        )
    else:
        rows = [_body(a[i], indent + 1, summarize, fmt) for i in range(a.shape[0])]
    return "[" + ("," + "\n" * (a.ndim - 1) + " " * (indent + 1)).join(rows) + "]"


def tensor_repr(t, prefix="tensor("):
    a = t._data if type(t._data) is np.ndarray else t._data.get()
    indent = len(prefix)
    suffixes = []
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    if a.size == 0:
        body = "[]"
        if a.ndim != 1:
            suffixes.append(f"size={tuple(a.shape)}")
        if a.dtype.name != "float32":
            suffixes.append(f"dtype={t.dtype!r}")
    else:
        summarize = a.size > THRESHOLD
        values = _summarized(a) if summarize else a.reshape(-1)
        body = _body(a, indent, summarize, _Formatter(values, a.dtype.kind == "f"))
        if a.dtype.name not in _DEFAULT_DTYPES:
            suffixes.append(f"dtype={t.dtype!r}")
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t._requires_grad:
        suffixes.append("requires_grad=True")
    out = [prefix + body]
    last = len(out[0]) - out[0].rfind("\n") + 1
    for s in suffixes:
        if last + len(s) + 2 > LINEWIDTH:
            out.append(",\n" + " " * indent + s)
            last = indent + len(s)
        else:
            out.append(", " + s)
            last += len(s) + 2
    return "".join(out) + ")"
