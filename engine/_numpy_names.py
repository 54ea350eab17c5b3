"""numpy's argument names, accepted where PyTorch accepts them: `axis` for `dim`, `keepdims`
for `keepdim`, `x`/`a`/`x1` for `input` and `x2` for `other` (torch.sum(x, axis=0)).

Every public function and Tensor method with such a parameter is wrapped once, at import; a call
without numpy names pays one dict check.
"""

import functools
import inspect

_ALIASES = {"axis": "dim", "keepdims": "keepdim", "x": "input", "a": "input", "x1": "input"}
_ALIASES_OTHER = {"x2": "other"}


def _renames(fn):
    """The numpy names fn accepts, each mapped to fn's own parameter; empty if none apply."""
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return {}
    names = {}
    for alias, own in {**_ALIASES, **_ALIASES_OTHER}.items():
        if own in params and alias not in params:
            names[alias] = own
    if "dim" not in params and "keepdim" not in params:
        return {}  # only ops with a dim take numpy's names (as PyTorch's parser does)
    return names


def accept_numpy_names(fn):
    renames = _renames(fn)
    if not renames or getattr(fn, "_numpy_names", False):
        return fn

    aliases = renames.keys()

    @functools.wraps(fn)
    def call(*args, **kwargs):
        if kwargs and not aliases.isdisjoint(kwargs):
            for alias in kwargs.keys() & aliases:
                own = renames[alias]
                if own in kwargs:
                    raise TypeError(f"{fn.__name__}() got an unexpected keyword argument '{alias}'")
                kwargs[own] = kwargs.pop(alias)
        return fn(*args, **kwargs)

    call._numpy_names = True
    return call


def wrap_namespace(namespace, names):
    """Replace each function among `names` in `namespace` (a dict) by its wrapped form."""
    for name in names:
        fn = namespace.get(name)
        if inspect.isfunction(fn):
            namespace[name] = accept_numpy_names(fn)


def wrap_methods(cls):
    for name, fn in list(vars(cls).items()):
        if inspect.isfunction(fn) and not name.startswith("__"):
            wrapped = accept_numpy_names(fn)
            if wrapped is not fn:
                setattr(cls, name, wrapped)
