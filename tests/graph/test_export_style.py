"""Every exported script is what a colleague's CI accepts: `ruff check` with the project's rules
and `ruff format --check` pass on the script of every template in both flavors, checked as a
file saved at the checkout's root (where an engine script runs: `engine` is the checkout's own
package there). The packing of long literals is checked on its own."""

import subprocess
from pathlib import Path

import pytest

from backend.graph.document.templates import list_templates, load_template
from backend.graph.export import to_python
from backend.graph.export.style import LIMIT, wrapped

ROOT = Path(__file__).parents[2]
RUFF = str(ROOT / ".venv" / "bin" / "ruff")
TEMPLATES = [t["id"] for t in list_templates()]


def _ruff(*args, source):
    where = str(ROOT / "exported_graph.py")  # (stdin: nothing is written there)
    return subprocess.run(
        [RUFF, *args, f"--stdin-filename={where}", "-"],
        input=source,
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=60,
    )


# (the trace option adds the show helper and its lines: checked in one flavor)
@pytest.mark.parametrize("flavor, trace", [("torch", False), ("engine", False), ("torch", True)])
@pytest.mark.parametrize("template", TEMPLATES)
def test_exported_scripts_are_ruff_clean_and_formatted(template, flavor, trace):
    script = to_python(load_template(template), flavor, trace=trace)
    check = _ruff("check", "--output-format=concise", source=script)
    assert check.returncode == 0, check.stdout + check.stderr
    fmt = _ruff("format", "--check", source=script)
    assert fmt.returncode == 0, fmt.stdout + fmt.stderr
    # past the limit: only the docstring's description and what Wiregrad reads back (EXEMPT):
    # a piece of the layout block no line break fits (a long label)
    lines = script.splitlines()
    end = lines.index('"""', 1)
    long = [s for s in lines[end:] if len(s) > LIMIT]
    assert ("# ruff: noqa: E501" in lines) == bool(long or any(len(s) > LIMIT for s in lines))
    block = next((i for i, s in enumerate(lines) if s.startswith("# wiregrad layout")), None)
    for line in long:
        assert block is not None and lines.index(line) > block and line.startswith("# "), line
    # the round-trip metadata is out of the way: no comment of it on a line of code
    assert not any(s.startswith(("# node ", "# ports ", "# training ")) for s in lines)
    assert not any(f"  # {k} " in s for s in lines for k in ("node", "ports", "training"))


def test_long_literals_are_packed_within_the_limit():
    rows = [[i, i + 1, i + 2] for i in range(60)]
    line = f"    x = torch.tensor({rows!r})  # node x (0, 0)"
    out = wrapped(line).split("\n")
    assert out[0] == "    # fmt: off" and out[-1] == "    # fmt: on"
    assert out[1] == "    x = torch.tensor("
    assert all(len(s) <= LIMIT for s in out)
    assert out[-2].endswith("]])  # node x (0, 0)")
    # the rows are kept whole where they fit, and the code is the same code
    assert "[0, 1, 2], [1, 2, 3]" in out[2]
    code = "\n".join(out[1:-1]).replace("  # node x (0, 0)", "")
    assert eval(code.split("=", 1)[1].strip().removeprefix("torch.tensor"), {}) == rows
    # a short line, or a long one ruff fits on a line of its own, is left as it is
    short = "y = f([1, 2, 3])"
    assert wrapped(short) == short


def test_the_docs_show_the_lenet_script_as_exported():
    text = (ROOT / "docs" / "code-export.md").read_text(encoding="utf-8")
    shown = text.rsplit("```python\n", 1)[1].split("```\n", 1)[0]
    assert shown == to_python(load_template("lenet-digits"), "torch"), (
        "docs/code-export.md shows an older lenet-digits script: write the current one there"
    )


def test_a_model_leaves_out_the_comments_the_importer_does_not_need():
    lenet = to_python(load_template("lenet-digits"), "torch")
    assert "ports" not in lenet and "\nlogits = model(data)\n" in lenet
    assert "    def forward(self, data):\n" in lenet and "        return logits\n" in lenet
    # a node named `out`, the id the importer would give the model's output port: the script
    # would not read back the same without them, so they are written
    residual = to_python(load_template("residual-block-digits"), "torch")
    layout = residual[residual.index("# wiregrad layout") :].replace("\n# ", " ")
    assert '"return": {"ports": {' in layout and '"logits": {"id": "model"}' in layout
