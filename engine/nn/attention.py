"""Dropout layers, Embedding, MultiheadAttention and the Transformer encoder, with PyTorch's
parameter names, initialisation and state-dict keys (so weights copy over either way)."""

import copy
import math

from .. import _creation
from ..autograd.grad_mode import no_grad
from ..ops.normalization import _check_p
from ..ops.shape import cat
from . import functional as F
from . import init
from .module import Module
from .modules import Linear, ModuleList
from .normalization import LayerNorm
from .parameter import Parameter

__all__ = [
    "Dropout",
    "Dropout1d",
    "Dropout2d",
    "Dropout3d",
    "Embedding",
    "MultiheadAttention",
    "TransformerEncoderLayer",
    "TransformerEncoder",
]


# -- dropout ---------------------------------------------------------------------------------------
class _DropoutNd(Module):
    _fn = staticmethod(F.dropout)

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        _check_p(p)
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return type(self)._fn(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    _fn = staticmethod(F.dropout)


class Dropout1d(_DropoutNd):
    _fn = staticmethod(F.dropout1d)


class Dropout2d(_DropoutNd):
    _fn = staticmethod(F.dropout2d)


class Dropout3d(_DropoutNd):
    _fn = staticmethod(F.dropout3d)


# -- embedding -------------------------------------------------------------------------------------
class Embedding(Module):
    def __init__(
        self,
        num_embeddings,
        embedding_dim,
        padding_idx=None,
        max_norm=None,
        norm_type=2.0,
        scale_grad_by_freq=False,
        sparse=False,
        _weight=None,
        _freeze=False,
        device=None,
        dtype=None,
    ):
        super().__init__()
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        if padding_idx is not None:
            if padding_idx > 0:
                assert padding_idx < num_embeddings, "Padding_idx must be within num_embeddings"
            elif padding_idx < 0:
                assert padding_idx >= -num_embeddings, "Padding_idx must be within num_embeddings"
                padding_idx = num_embeddings + padding_idx
        self.padding_idx = padding_idx
        self.max_norm, self.norm_type = max_norm, norm_type
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        if _weight is None:
            self.weight = Parameter(
                _creation.empty(num_embeddings, embedding_dim, dtype=dtype, device=device),
                requires_grad=not _freeze,
            )
            self.reset_parameters()
        else:
            assert list(_weight.shape) == [num_embeddings, embedding_dim], (
                "Shape of weight does not match num_embeddings and embedding_dim"
            )
            self.weight = Parameter(_weight, requires_grad=not _freeze)

    def reset_parameters(self):
        init.normal_(self.weight)
        if self.padding_idx is not None:
            with no_grad():
                self.weight[self.padding_idx] = 0.0

    def forward(self, input):
        return F.embedding(
            input,
            self.weight,
            self.padding_idx,
            self.max_norm,
            self.norm_type,
            self.scale_grad_by_freq,
            self.sparse,
        )

    def extra_repr(self):
        s = f"{self.num_embeddings}, {self.embedding_dim}"
        if self.padding_idx is not None:
            s += f", padding_idx={self.padding_idx}"
        if self.max_norm is not None:
            s += f", max_norm={self.max_norm}"
        if self.norm_type != 2:
            s += f", norm_type={self.norm_type}"
        if self.scale_grad_by_freq is not False:
            s += f", scale_grad_by_freq={self.scale_grad_by_freq}"
        if self.sparse is not False:
            s += ", sparse=True"
        return s

    @classmethod
    def from_pretrained(
        cls,
        embeddings,
        freeze=True,
        padding_idx=None,
        max_norm=None,
        norm_type=2.0,
        scale_grad_by_freq=False,
        sparse=False,
    ):
        assert embeddings.dim() == 2, "Embeddings parameter is expected to be 2-dimensional"
        rows, cols = embeddings.shape
        return cls(
            num_embeddings=rows,
            embedding_dim=cols,
            _weight=embeddings,
            _freeze=freeze,
            padding_idx=padding_idx,
            max_norm=max_norm,
            norm_type=norm_type,
            scale_grad_by_freq=scale_grad_by_freq,
            sparse=sparse,
        )


# -- multi-head attention --------------------------------------------------------------------------
class NonDynamicallyQuantizableLinear(Linear):
    """A Linear under the name PyTorch gives MultiheadAttention's out_proj (it shows in repr)."""


def _float_mask(mask, name, like):
    """A bool mask (True: not allowed) as an additive float one (-inf there, 0 elsewhere)."""
    if mask is None:
        return None
    d = mask._data
    if d.dtype == bool:
        m = _creation.zeros(d.shape, dtype=like.dtype, device=like.device)
        return m.masked_fill(mask, -math.inf)
    if d.dtype.kind != "f":
        raise AssertionError(f"only bool and floating types of {name} are supported")
    return mask


class MultiheadAttention(Module):
    def __init__(
        self,
        embed_dim,
        num_heads,
        dropout=0.0,
        bias=True,
        add_bias_kv=False,
        add_zero_attn=False,
        kdim=None,
        vdim=None,
        batch_first=False,
        device=None,
        dtype=None,
    ):
        if embed_dim <= 0 or num_heads <= 0:
            raise ValueError(
                f"embed_dim and num_heads must be greater than 0, got embed_dim={embed_dim} "
                f"and num_heads={num_heads} instead"
            )
        super().__init__()
        kw = {"dtype": dtype, "device": device}
        self.embed_dim = embed_dim
        self.kdim = kdim if kdim is not None else embed_dim
        self.vdim = vdim if vdim is not None else embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.num_heads, self.dropout, self.batch_first = num_heads, dropout, batch_first
        self.head_dim = embed_dim // num_heads
        assert self.head_dim * num_heads == self.embed_dim, (
            "embed_dim must be divisible by num_heads"
        )
        if not self._qkv_same_embed_dim:
            self.q_proj_weight = Parameter(_creation.empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(_creation.empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(_creation.empty(embed_dim, self.vdim, **kw))
            self.register_parameter("in_proj_weight", None)
        else:
            self.in_proj_weight = Parameter(_creation.empty(3 * embed_dim, embed_dim, **kw))
            self.register_parameter("q_proj_weight", None)
            self.register_parameter("k_proj_weight", None)
            self.register_parameter("v_proj_weight", None)
        if bias:
            self.in_proj_bias = Parameter(_creation.empty(3 * embed_dim, **kw))
        else:
            self.register_parameter("in_proj_bias", None)
        self.out_proj = NonDynamicallyQuantizableLinear(embed_dim, embed_dim, bias=bias, **kw)
        if add_bias_kv:
            self.bias_k = Parameter(_creation.empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(_creation.empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self.add_zero_attn = add_zero_attn
        self._reset_parameters()

    def _reset_parameters(self):
        if self._qkv_same_embed_dim:
            init.xavier_uniform_(self.in_proj_weight)
        else:
            init.xavier_uniform_(self.q_proj_weight)
            init.xavier_uniform_(self.k_proj_weight)
            init.xavier_uniform_(self.v_proj_weight)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)
        for p in (self.bias_k, self.bias_v):
            if p is not None:  # xavier_normal_: fan_in = fan_out = embed_dim for (1, 1, E)
                init.normal_(p, 0.0, math.sqrt(2.0 / (2 * self.embed_dim)))

    def _project(self, query, key, value):
        e = self.embed_dim
        w, b = self.in_proj_weight, self.in_proj_bias
        if self._qkv_same_embed_dim and query is key and key is value:
            qkv = F.linear(query, w, b)  # self-attention: one product for all three
            # one node whose backward concatenates the three gradients (three slices would each
            # give back a zero array of qkv's size, then added up)
            return tuple(qkv.split(e, -1))
        if self._qkv_same_embed_dim:
            ws = (w[:e], w[e : 2 * e], w[2 * e :])
        else:
            ws = (self.q_proj_weight, self.k_proj_weight, self.v_proj_weight)
        bs = (None,) * 3 if b is None else (b[:e], b[e : 2 * e], b[2 * e :])
        return tuple(F.linear(x, wi, bi) for x, wi, bi in zip((query, key, value), ws, bs))

    def forward(
        self,
        query,
        key,
        value,
        key_padding_mask=None,
        need_weights=True,
        attn_mask=None,
        average_attn_weights=True,
        is_causal=False,
    ):
        batched = query.dim() == 3
        if is_causal and attn_mask is None:
            raise RuntimeError(
                "Need attn_mask if specifying the is_causal hint. You may use the Transformer "
                "module method `generate_square_subsequent_mask` to create this mask."
            )
        # work batch-first: (N, L, E)
        same_kv, same_qk = key is value, query is key
        if not batched:
            query, key, value = query.unsqueeze(0), key.unsqueeze(0), value.unsqueeze(0)
            if key_padding_mask is not None:
                key_padding_mask = key_padding_mask.unsqueeze(0)
        elif not self.batch_first:
            query = query.transpose(0, 1)
            key = query if same_qk else key.transpose(0, 1)
            value = key if same_kv else value.transpose(0, 1)
        n, L, e = query.shape
        s = key.shape[1]
        h, hd = self.num_heads, self.head_dim
        key_padding_mask = _float_mask(key_padding_mask, "key_padding_mask", query)
        attn_mask = _float_mask(attn_mask, "attn_mask", query)
        if attn_mask is not None:
            if attn_mask.dim() == 2:
                if tuple(attn_mask.shape) != (L, s):
                    raise RuntimeError(
                        f"The shape of the 2D attn_mask is torch.Size({list(attn_mask.shape)}), "
                        "but should be "
                        f"{(L, s)}."
                    )
            elif attn_mask.dim() == 3:
                if tuple(attn_mask.shape) != (n * h, L, s):
                    raise RuntimeError(
                        f"The shape of the 3D attn_mask is torch.Size({list(attn_mask.shape)}), "
                        "but should be "
                        f"{(n * h, L, s)}."
                    )
                attn_mask = attn_mask.reshape(n, h, L, s)
            else:
                raise RuntimeError(f"attn_mask's dimension {attn_mask.dim()} is not supported")
        q, k, v = self._project(query, key, value)
        if self.bias_k is not None:
            k = _cat([k, self.bias_k.expand(n, 1, e)], 1)
            v = _cat([v, self.bias_v.expand(n, 1, e)], 1)
            attn_mask = _pad_last(attn_mask)
            key_padding_mask = _pad_last(key_padding_mask)
        q = q.reshape(n, L, h, hd).transpose(1, 2)
        k = k.reshape(n, k.shape[1], h, hd).transpose(1, 2)
        v = v.reshape(n, v.shape[1], h, hd).transpose(1, 2)
        if self.add_zero_attn:
            zeros = _creation.zeros((n, h, 1, hd), dtype=q.dtype, device=q.device)
            k, v = _cat([k, zeros], 2), _cat([v, zeros], 2)
            attn_mask = _pad_last(attn_mask)
            key_padding_mask = _pad_last(key_padding_mask)
        s = k.shape[2]
        mask = attn_mask
        if key_padding_mask is not None:
            kpm = key_padding_mask.reshape(n, 1, 1, s)
            mask = kpm if mask is None else mask + kpm
        p = self.dropout if self.training else 0.0
        weights = None
        if need_weights:
            scores = (q * (1.0 / math.sqrt(hd))) @ k.transpose(-2, -1)
            if mask is not None:
                scores = scores + mask
            attn = F.softmax(scores, dim=-1)
            if p > 0.0:
                attn = F.dropout(attn, p)
            out = attn @ v
            weights = attn.mean(1) if average_attn_weights else attn
            if not batched:
                weights = weights.squeeze(0)
        else:
            causal = is_causal and key_padding_mask is None
            out = F.scaled_dot_product_attention(
                q, k, v, None if causal else mask, p, is_causal=causal
            )
        out = self.out_proj(out.transpose(1, 2).reshape(n, L, e))
        if not batched:
            out = out.squeeze(0)
        elif not self.batch_first:
            out = out.transpose(0, 1)
        return out, weights


def _cat(tensors, dim):
    return cat(tensors, dim)


def _pad_last(mask):
    """A mask with one more key column that masks nothing (for bias_k / the zero attention)."""
    if mask is None:
        return None
    z = _creation.zeros((*mask.shape[:-1], 1), dtype=mask.dtype, device=mask.device)
    return _cat([mask, z], -1)


# -- transformer encoder ---------------------------------------------------------------------------
def _activation(name):
    if name == "relu":
        return F.relu
    if name == "gelu":
        return F.gelu
    raise RuntimeError(f"activation should be relu/gelu, not {name}")


class TransformerEncoderLayer(Module):
    def __init__(
        self,
        d_model,
        nhead,
        dim_feedforward=2048,
        dropout=0.1,
        activation="relu",
        layer_norm_eps=1e-05,
        batch_first=False,
        norm_first=False,
        bias=True,
        device=None,
        dtype=None,
    ):
        super().__init__()
        kw = {"device": device, "dtype": dtype}
        self.self_attn = MultiheadAttention(
            d_model, nhead, dropout=dropout, bias=bias, batch_first=batch_first, **kw
        )
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(activation) if isinstance(activation, str) else activation

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        x = src
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, attn_mask, key_padding_mask, is_causal):
        x = self.self_attn(
            x,
            x,
            x,
            attn_mask=attn_mask,
            key_padding_mask=key_padding_mask,
            need_weights=False,
            is_causal=is_causal,
        )[0]
        return self.dropout1(x)

    def _ff_block(self, x):
        x = self.linear2(self.dropout(self.activation(self.linear1(x))))
        return self.dropout2(x)


def _is_causal_mask(mask, size):
    """Whether `mask` is the square causal mask (float -inf above the diagonal, or bool True
    there), as PyTorch detects it."""
    if mask is None or tuple(mask.shape) != (size, size):
        return False
    import numpy as np

    d = mask.detach().cpu()._data
    upper = np.triu(np.ones((size, size), dtype=bool), 1)
    if d.dtype == bool:
        return bool((d == upper).all())
    return bool((np.isneginf(d) == upper).all() and (d[~upper] == 0).all())


class TransformerEncoder(Module):
    def __init__(
        self,
        encoder_layer,
        num_layers,
        norm=None,
        enable_nested_tensor=True,
        mask_check=True,
    ):
        super().__init__()
        self.layers = ModuleList([copy.deepcopy(encoder_layer) for _ in range(num_layers)])
        self.num_layers, self.norm = num_layers, norm

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        seq_dim = 1 if self.layers[0].self_attn.batch_first and src.dim() == 3 else 0
        if is_causal is None:
            is_causal = _is_causal_mask(mask, src.shape[seq_dim])
        out = src
        for layer in self.layers:
            out = layer(
                out, src_mask=mask, is_causal=is_causal, src_key_padding_mask=src_key_padding_mask
            )
        return self.norm(out) if self.norm is not None else out
