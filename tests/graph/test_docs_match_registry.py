"""docs/graph-format.md's table of ops is the registry's: every op in its category's row, no op
the registry lacks, the categories in the palette's order."""

import re
from pathlib import Path

from backend.graph import all_ops

FORMAT_DOC = Path(__file__).parents[2] / "docs" / "graph-format.md"


def _documented():
    text = FORMAT_DOC.read_text(encoding="utf-8")
    table = text[text.index("| category | ops |") :].split("\n\n", 1)[0]
    rows = {}
    for line in table.splitlines()[2:]:
        category, ops = line.strip("|").split("|", 1)
        rows[category.strip()] = re.findall(r"`([A-Za-z0-9_]+)`", ops.split("(see", 1)[0])
    return rows


def _registered():
    rows = {}
    for spec in all_ops():
        rows.setdefault(spec.category, []).append(spec.name)
    return rows


def test_the_op_table_lists_the_registry():
    documented, registered = _documented(), _registered()
    expected = "\n".join(
        f"| {category} | " + " ".join(f"`{name}`" for name in names) + " |"
        for category, names in registered.items()
    )
    assert list(documented) == list(registered), f"the table's rows should be:\n{expected}"
    for category, names in registered.items():
        assert sorted(documented[category]) == sorted(names), (
            f"{category}: the row should list {names}; the table should be:\n{expected}"
        )
