"""The op families (engine/ops/__init__.py): every public op module is one, each name is declared
by one family only, and what they declare is what engine, Tensor and nn.functional offer."""

import inspect
import pkgutil

import engine as eg
import engine.ops as ops
from engine.ops import FAMILIES, family_modules

_KINDS = ("__all__", "METHODS", "PROPERTIES", "INPLACE", "INPLACE_OPERATORS", "FUNCTIONAL")


def test_every_public_op_module_is_a_family():
    modules = {m.name for m in pkgutil.iter_modules(ops.__path__) if not m.name.startswith("_")}
    assert modules == set(FAMILIES)
    assert len(FAMILIES) == len(set(FAMILIES))
    for family in family_modules():
        assert isinstance(family.__all__, list), family.__name__


def test_no_name_is_declared_twice():
    owner = {}
    for family in family_modules():
        for kind in _KINDS:
            names = list(getattr(family, kind, ()))
            if kind == "INPLACE":  # an in-place form is a method too: name_
                names = [n + "_" for n in names]
                kind = "METHODS"
            if kind in ("PROPERTIES", "INPLACE_OPERATORS"):
                kind = "METHODS"
            for name in names:
                key = (kind, name)
                where = f"{owner.get(key)} and {family.__name__}"
                assert key not in owner, f"{name} ({kind}) in {where}"
                owner[key] = family.__name__


def _unwrapped(fn):
    return getattr(fn, "__wrapped__", fn)  # engine/_numpy_names.py may wrap a function


def test_the_declarations_are_what_is_bound():
    for family in family_modules():
        for name in family.__all__:
            assert _unwrapped(getattr(eg, name)) is getattr(family, name), name
        for name, fn in getattr(family, "METHODS", {}).items():
            assert _unwrapped(inspect.getattr_static(eg.Tensor, name)) is fn, name
        for name, fn in getattr(family, "PROPERTIES", {}).items():
            assert inspect.getattr_static(eg.Tensor, name).fget is fn, name
        for name in getattr(family, "INPLACE", {}):
            assert callable(inspect.getattr_static(eg.Tensor, name + "_")), name
        for name, of in getattr(family, "INPLACE_OPERATORS", {}).items():
            assert inspect.getattr_static(eg.Tensor, name) is inspect.getattr_static(
                eg.Tensor, of + "_"
            ), name
        for name, fn in getattr(family, "FUNCTIONAL", {}).items():
            assert _unwrapped(getattr(eg.nn.functional, name)) is fn, name
