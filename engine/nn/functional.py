"""engine.nn.functional: the stateless forms of the layers, activations and losses, as the op
families declare them (their FUNCTIONAL, engine/ops/__init__.py)."""

from ..ops import family_modules as _family_modules

_FAMILY_FUNCTIONAL = {}
for _family in _family_modules():
    _FAMILY_FUNCTIONAL.update(getattr(_family, "FUNCTIONAL", {}))
globals().update(_FAMILY_FUNCTIONAL)

__all__ = list(_FAMILY_FUNCTIONAL)
