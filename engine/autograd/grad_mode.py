"""Grad modes. The flag is per thread, as in PyTorch, so server threads never see each other's."""

import functools
import threading


class _State(threading.local):
    def __init__(self):
        self.enabled = True
        self.inference = False


STATE = _State()


def is_grad_enabled():
    return STATE.enabled


def is_inference_mode_enabled():
    return STATE.inference


class _Mode:
    """A context manager that is also a decorator; subclasses say what grad mode they set."""

    _enabled = True
    _inference = False

    def __new__(cls, *args):
        # `@no_grad` without parentheses decorates directly, as PyTorch 2 allows
        if len(args) == 1 and callable(args[0]) and not isinstance(args[0], bool):
            return cls()(args[0])
        return super().__new__(cls)

    def __enter__(self):
        self._prev = (STATE.enabled, STATE.inference)
        STATE.enabled = self._enabled
        STATE.inference = self._inference or (self._prev[1] and not self._enabled)

    def __exit__(self, *exc):
        STATE.enabled, STATE.inference = self._prev
        return False

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with self.__class__(*self._args()):
                return fn(*args, **kwargs)

        return wrapper

    def _args(self):
        return ()


class no_grad(_Mode):  # noqa: N801 - PyTorch's names
    _enabled = False


class enable_grad(_Mode):  # noqa: N801
    _enabled = True


class set_grad_enabled(_Mode):  # noqa: N801
    """Sets the mode at once (so a plain call works) and restores it on exit from a `with`."""

    def __init__(self, mode):
        self._enabled = bool(mode)
        self._prev = (STATE.enabled, STATE.inference)
        STATE.enabled = self._enabled

    def __enter__(self):
        pass

    def _args(self):
        return (self._enabled,)

    def __call__(self, fn):
        STATE.enabled, STATE.inference = (
            self._prev
        )  # as a decorator it must not change the mode now
        return super().__call__(fn)


class inference_mode(_Mode):  # noqa: N801
    """Like no_grad: nothing inside records history. `inference_mode(False)` is a no-op."""

    def __init__(self, mode=True):
        self._on = bool(mode)
        self._enabled = not self._on
        self._inference = self._on

    def __enter__(self):
        if self._on:
            super().__enter__()
        else:
            self._prev = (STATE.enabled, STATE.inference)

    def _args(self):
        return (self._on,)
