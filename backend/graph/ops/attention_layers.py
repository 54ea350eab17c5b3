"""Sequences: `embedding` (a table of vectors looked up by int64 token ids),
`multi_head_attention` (self-attention: query, key and value are all the input, batch_first)
and `gelu`, the activation of transformer blocks (coded F.gelu(x), like the other
activations)."""

import engine.nn.functional as F
from engine.nn import init

from ..registry import CallForm, LayerForm, OpSpec, Param, Port, register
from .common import call_code
from .layer_kit import SEED, register_layer, state_param

_TOKENS = (
    "the token ids are indices into the table, not a function of anything: no gradient flows "
    "into them (the table's rows they pick get it)"
)


def _embedding_args(x, p):
    return {
        "num_embeddings": int(p.get("num_embeddings", 10)),
        "embedding_dim": int(p.get("embedding_dim", 8)),
    }


def _embedding_init(module, generator):
    init.normal_(module.weight, generator=generator)  # PyTorch's: N(0, 1)


register_layer(
    "embedding",
    "a table of num_embeddings vectors of embedding_dim values: each int64 id of the input "
    "picks its row, so (N, L) ids give (N, L, embedding_dim)",
    LayerForm(
        cls=lambda x, p: "Embedding",
        classes=("Embedding",),
        args=_embedding_args,
        state=(("weight", "weight"),),
        shapes=lambda a: {"weight": (a["num_embeddings"], a["embedding_dim"])},
    ),
    (
        Param("num_embeddings", "int", 10, min=1, max=100_000, doc="how many ids the table has"),
        Param("embedding_dim", "int", 8, min=1, max=4096, doc="the size of each vector"),
        SEED,
        state_param("weight", "table (num_embeddings, embedding_dim)"),
    ),
    init=_embedding_init,
    inputs=(Port("input", doc="int64 token ids", no_grad=_TOKENS),),
    example={"input": {"value": [[1, 2, 3], [0, 9, 4]], "dtype": "int64"}},
)


def _attention_args(x, p):
    return {
        "embed_dim": x.shape[-1] if x.ndim else 1,
        "num_heads": int(p.get("num_heads", 1)),
        "bias": bool(p.get("bias", True)),
        "batch_first": True,
    }


def _attention_shapes(a):
    e = a["embed_dim"]
    shapes = {"in_proj_weight": (3 * e, e), "out_proj_weight": (e, e)}
    if a["bias"]:
        shapes.update(in_proj_bias=(3 * e,), out_proj_bias=(e,))
    return shapes


def _attention_init(module, generator):
    """PyTorch's initialisation, drawn from the node's seed: xavier_uniform_ for the packed
    q, k, v projection, Linear's own for out_proj, zero biases."""
    init.xavier_uniform_(module.in_proj_weight, generator=generator)
    module.out_proj.reset_parameters(generator)
    for b in (module.in_proj_bias, module.out_proj.bias):
        if b is not None:
            init.zeros_(b)


def _self_attention(module, x, p):
    return module(x, x, x, need_weights=False)[0]


register_layer(
    "multi_head_attention",
    "self-attention: each position's output is a mix of every position's value, weighted by "
    "softmax(query . key / sqrt(head_dim)), in num_heads heads (input (N, L, embed_dim))",
    LayerForm(
        cls=lambda x, p: "MultiheadAttention",
        classes=("MultiheadAttention",),
        args=_attention_args,
        state=(
            ("in_proj_weight", "in_proj_weight"),
            ("in_proj_bias", "in_proj_bias"),
            ("out_proj_weight", "out_proj.weight"),
            ("out_proj_bias", "out_proj.bias"),
        ),
        shapes=_attention_shapes,
    ),
    (
        Param("num_heads", "int", 1, min=1, max=256, doc="must divide the input's last dim"),
        Param("bias", "bool", True),
        SEED,
        state_param("in_proj_weight", "q, k, v projections (3 * embed_dim, embed_dim)"),
        state_param("in_proj_bias", "q, k, v biases (3 * embed_dim,)"),
        state_param("out_proj_weight", "output projection (embed_dim, embed_dim)"),
        state_param("out_proj_bias", "output bias (embed_dim,)"),
    ),
    init=_attention_init,
    forward=_self_attention,
    example={"input": {"shape": [2, 3, 4], "init": "rand", "seed": 5}},
    inputs=(
        Port(
            "input",
            derivative="a Jacobian through the attention: each output position depends on every "
            "input position (as query, key and value), through the projections and "
            "softmax(q·kᵀ/√head_dim)",
            derivative_kind="jacobian",
        ),
    ),
)

register(
    OpSpec(
        "gelu",
        "activations",
        "input * Φ(input), Φ the normal distribution's CDF (tanh: its tanh approximation)",
        (
            Port(
                "input",
                derivative="Φ(input) + input·φ(input) (Φ, φ: the normal CDF and density"
                "{approximate|tanh:, in their tanh approximation})",
            ),
        ),
        run=lambda ctx, ins, p: F.gelu(ins[0], approximate=p.get("approximate", "none")),
        code=call_code("gelu", ("approximate",), {"approximate": "none"}, functional=True),
        params=(Param("approximate", "choice", "none", choices=("none", "tanh")),),
        call=CallForm(kwonly=("approximate",), forms=("functional",)),
    )
)
