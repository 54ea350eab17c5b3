"""GET /api/ops carries what the page's chain-rule panel says about edges without a gradient
(each port's `no_grad`, from the registry) and which op is control flow (`branches`): the page
keeps no list of op names of its own (frontend/src/panels/analysis/noGradient.test.ts uses these
texts).
"""

import requests

CONDITION = (
    "the condition of {op} has no gradient: it only picks which values pass, so nothing "
    "flows back to {source}."
)
COMPARISON = "a comparison ({op}) has no gradient: nothing flows back along this edge."


def test_ops_say_through_which_inputs_no_gradient_flows_and_why(server):
    ops = {o["name"]: o for o in requests.get(server.api("/ops")).json()["ops"]}
    no_grad = {
        (name, p["name"]): p["no_grad"]
        for name, o in ops.items()
        for p in o["inputs"]
        if p.get("no_grad")
    }
    assert no_grad == {
        ("detach", "input"): "detach sends no gradient back to its input: it cuts the graph here.",
        **{
            (c, port): COMPARISON
            for c in ("gt", "lt", "ge", "le", "eq", "ne")
            for port in ("input", "other")
        },
        ("where", "condition"): CONDITION,
        ("if", "condition"): CONDITION,
        **{
            (op, "input"): "{op} reads only the shape and dtype of its input: no gradient flows "
            "back to {source}."
            for op in ("zeros_like", "ones_like")
        },
        ("masked_fill", "mask"): "the mask of {op} has no gradient: it only says where the value "
        "is written, so nothing flows back to {source}.",
        (
            "labels",
            "dataset",
        ): "labels has no gradient: a dataset's labels are data, not a function of it.",
        (
            "cross_entropy",
            "target",
        ): "cross_entropy's target holds class indices (integers): it has no gradient.",
        ("nll_loss", "target"): "nll_loss's target holds class indices (integers): it has no "
        "gradient.",
        ("embedding", "input"): "the token ids are indices into the table, not a function of "
        "anything: no gradient flows into them (the table's rows they pick get it)",
        ("index", "indices"): "indices are positions into input, not a function of anything: "
        "no gradient flows into them (the elements of input they pick get it)",
        ("one_hot", "input"): "one_hot reads class indices (integers): no gradient flows back to "
        "{source}.",
    }
    assert [name for name, o in ops.items() if o.get("branches")] == ["if"]
    assert [p["name"] for p in ops["if"]["inputs"]] == ["condition", "then", "else"]
