"""Limits on what one graph may ask for, each with the error a user sees when it is passed;
and the limits on a message's structure, checked before pydantic reads it."""

from dataclasses import dataclass


@dataclass(frozen=True)
class Limits:
    max_nodes: int = 5000
    max_edges: int = 20000
    # per tensor, counting the parameters an op makes (a linear node's weight) and checked
    # before anything is allocated (cat/stack, broadcasts, matmul results)
    max_elements: int = 10_000_000
    max_total_bytes: int = 2 * 1024**3  # all values of one run together
    max_seconds: float = 60.0  # one run, forward and backward
    max_train_seconds: float = 600.0  # one training (time paused not counted)
    max_import_seconds: float = 5.0  # reading one script into a document
    preview_elements: int = 1024  # summaries carry full values up to this size


class LimitExceeded(RuntimeError):
    pass


DEFAULT = Limits()

# -- message structure ----------------------------------------------------------------------
# pydantic reads a list of objects item by item and builds an error for each bad one: a 4 MiB
# `"nodes": [0, 0, ...]` is two million errors (seconds and more than a gigabyte to refuse).
# So the lists a model reads one by one are counted first, in O(1) each, and a list longer
# than any graph within the limits could need is refused before pydantic sees it. 20,000 is
# the default limit on edges, the longest such list a graph can have.
MAX_LIST_ITEMS = 20_000
MAX_ERROR_CHARS = 1000  # an error text sent back is cut here (it names the first problems)


class StructureError(ValueError):
    """A message whose shape is refused before it is read field by field."""


def check_list(value, where, max_items=MAX_LIST_ITEMS):
    if isinstance(value, list) and len(value) > max_items:
        raise StructureError(f"{where} has {len(value):,} items; at most {max_items:,} are read")


def check_document_lists(data, max_items=MAX_LIST_ITEMS):
    """StructureError when a graph document's lists of objects (nodes, edges, lesson steps and
    their selections) are longer than a document can need; O(number of lesson steps)."""
    if not isinstance(data, dict):
        return
    for key in ("nodes", "edges", "lesson", "modules"):
        check_list(data.get(key), key, max_items)
    modules = data.get("modules")
    if isinstance(modules, list):
        for m in modules:
            if isinstance(m, dict):
                for key in ("nodes", "edges"):
                    check_list(m.get(key), f"a module's {key}", max_items)
    lesson = data.get("lesson")
    if isinstance(lesson, list):
        total = sum(
            len(s["select"])
            for s in lesson
            if isinstance(s, dict) and isinstance(s.get("select"), list)
        )
        if total > max_items:
            raise StructureError(
                f"the lesson selects {total:,} nodes in all; at most {max_items:,} are read"
            )


def check_message_lists(data, max_items=MAX_LIST_ITEMS, depth=2):
    """StructureError when a list within the first `depth` levels of objects of a message is
    longer than `max_items` (a run's `edit.nodes`, a room's `graph.nodes`)."""
    stack = [(data, 0, "")]
    while stack:
        obj, level, where = stack.pop()
        for key, value in obj.items():
            name = f"{where}.{key}" if where else str(key)
            if isinstance(value, list):
                check_list(value, name, max_items)
            elif isinstance(value, dict) and level + 1 < depth:
                stack.append((value, level + 1, name))


def capped(text, max_chars=MAX_ERROR_CHARS):
    """An error text no longer than `max_chars` (a message is answered, not echoed back)."""
    return text if len(text) <= max_chars else text[: max_chars - 1] + "…"
