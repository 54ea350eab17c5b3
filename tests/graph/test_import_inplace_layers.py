"""Activations made with inplace=True (importing/nn_layers.py): read where the line binds the
result to the input's one name (`out = self.relu(out)`), since then the graph's new node holds
what PyTorch wrote in place; anywhere else (another name holds the input, the result goes to
another name) it is a problem at its line. The numbers of the form read are the corpus's
tv_basicblock.py (test_import_corpus.py)."""

import pytest

from backend.graph.importing.importer import ImportFailed, from_python

HEAD = (
    "import torch\nimport torch.nn as nn\nrelu = nn.ReLU(inplace=True)\n"
    "x = torch.tensor([1.0, -2.0], requires_grad=True)\nh = x * 2\n"
)


def test_the_result_bound_to_the_inputs_one_name_is_read():
    doc = from_python(HEAD + "h = relu(h)\nL = h.sum()\nL.backward()\n")
    assert [n.op for n in doc.nodes].count("relu") == 1


@pytest.mark.parametrize(
    "lines",
    [
        "y = relu(h)\n",  # h would hold relu's values too
        "g = h\nh = relu(h)\n",  # g would too
        "s = nn.Sequential(nn.ReLU(inplace=True))\nk = s(h)\n",
    ],
)
def test_the_input_read_elsewhere_is_a_problem(lines):
    with pytest.raises(ImportFailed) as failed:
        from_python(HEAD + lines)
    last = 5 + lines.count("\n")
    assert any(p.line == last and "inplace=True" in p.message for p in failed.value.problems)
