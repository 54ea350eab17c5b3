"""Indexing by tensors (importing/tensor_index.py, the `index` op): each script runs in
PyTorch and its import must give the same loss and gradients; the index node says where each
tensor goes among the index's parts."""

import pytest
from test_import_corpus import (  # noqa: F401
    assert_imports_to_pytorchs_numbers,
    fixed_layers,
    script_text,
)

from backend.graph.importing.importer import ImportFailed, from_python

SCRIPTS = {
    "forms": """
        import torch
        x = torch.tensor([[0.5, -1.0, 2.0, 0.1], [1.5, 0.25, -0.5, 3.0], [0.7, 0.2, -2.0, 1.0]],
                         requires_grad=True)
        t = torch.tensor([1, 3, 0])
        n = t.shape[0]
        a = x[range(n), t]
        b = x[:, t]
        c = x[[0, 2, 2]]
        d = x[x > 0.3]
        rows = torch.tensor([2, 0])
        e = x[rows, 1:3]
        f = x[..., t[:2]]
        g = (x * 2)[rows]
        loss = a.sum() + (b ** 2).sum() + c.mean() + d.sum() + e.exp().sum() + f.sum() + g.sum()
        loss.backward()
    """,
    "an embedding table looked up": """
        import torch
        import torch.nn.functional as F
        C = torch.tensor([[0.1, 0.2], [-0.3, 0.4], [0.5, -0.6], [0.7, 0.8]], requires_grad=True)
        X = torch.tensor([[0, 1, 1], [3, 2, 0]])
        emb = C[X]
        h = emb.view(-1, 6)
        loss = F.cross_entropy(h, torch.tensor([5, 0]))
        loss.backward()
    """,
    "negative log likelihood as the nn tutorial writes it": """
        import torch
        z = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.5]], requires_grad=True)
        logp = torch.log_softmax(z, dim=-1)
        target = torch.tensor([2, 0])

        def nll(input, target):
            return -input[range(target.shape[0]), target].mean()

        loss = nll(logp, target)
        loss.backward()
    """,
}


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_script_imports_to_pytorchs_numbers(name, fixed_layers):  # noqa: F811
    assert_imports_to_pytorchs_numbers(SCRIPTS[name])


def test_each_tensor_of_an_index_is_an_edge_at_its_place():
    doc = from_python(script_text(SCRIPTS["forms"]))
    nodes = {n.id: n for n in doc.nodes}
    index = {nid: n.params["index"] for nid, n in nodes.items() if n.op == "index"}
    assert index == {"a": "", "b": ":, #", "c": "", "d": "", "e": "#, 1:3", "f": "..., #", "g": ""}
    into_a = [e.source for e in doc.edges if e.target == "a" and e.targetPort == "indices"]
    assert nodes[into_a[0]].params["value"] == [0, 1, 2]  # range(n), n read from t's shape
    assert into_a[1] == "t"


@pytest.mark.parametrize(
    ("line", "words"),
    [
        ("y = x[1.5]", "an index here takes integers"),
        ("y = x[[0.5, 1]]", "holds integers (or bools) only"),
    ],
)
def test_an_index_not_read_is_a_problem_at_its_line(line, words):
    src = f"import torch\nx = torch.ones(3, requires_grad=True)\n{line}\n"
    with pytest.raises(ImportFailed) as failed:
        from_python(src)
    first = failed.value.problems[0]
    assert (first.line, words in first.message) == (3, True), str(failed.value)
