"""(to be written)"""

__all__ = []
METHODS = {}
INPLACE = {}
FUNCTIONAL = {}
