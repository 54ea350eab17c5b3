"""Limits on what one graph may ask for, each with the error a user sees when it is passed."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    max_nodes: int = 5000
    max_edges: int = 20000
    max_elements: int = 10_000_000  # per tensor
    max_total_bytes: int = 2 * 1024**3  # all values of one run together
    max_seconds: float = 60.0  # one run, forward and backward
    preview_elements: int = 1024  # summaries carry full values up to this size


class LimitExceeded(RuntimeError):
    pass


DEFAULT = Limits()
