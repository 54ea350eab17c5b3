"""Every op of the editor, one module per family; importing this package fills the registry
(registry.py), in the palette's order. Adding an op is one `register(OpSpec(...))` in its
family's module: its ports, params, doc, how it runs (`run`), how it is written as code
(`code`), how a call of it is read back (`call`), which inputs pass no gradient
(`Port.no_grad`), and a sample to test it on (`example`).

    sources.py      tensor, parameter, scalar
    arithmetic.py   add sub mul div pow (operators), maximum, minimum, neg, exp ... clamp
    activations.py  relu, sigmoid, tanh, leaky_relu, softplus, softmax, log_softmax
    logic.py        comparisons, where, if (control flow: `branches`)
    reductions.py   sum, mean, max, min, var, std
    shape.py        matmul, transpose ... stack, detach
    layers.py       linear
    conv_layers.py  conv2d, max_pool2d, avg_pool2d
    norm_layers.py  batch_norm, layer_norm, dropout (train() / eval(): a `mode` param)
    attention_layers.py  embedding, multi_head_attention, gelu
    recurrent_layers.py  rnn, lstm, gru
    losses.py       mse_loss, l1_loss, binary_cross_entropy, cross_entropy
    data.py         dataset, labels
    inplace.py      getitem, index (by tensors) and the in-place ops (add_ ... setitem)
    modules.py      module_input, module_output: a module definition's ports (../modules.py)
    common.py       what the families share (code templates, run builders, size checks)
    layer_kit.py    what the layer families share (one run() for a LayerForm, the mode param)
"""

from importlib import import_module

# the palette's order
FAMILIES = (
    "sources",
    "arithmetic",
    "activations",
    "logic",
    "reductions",
    "shape",
    "layers",
    "conv_layers",
    "norm_layers",
    "attention_layers",
    "recurrent_layers",
    "losses",
    "data",
    "inplace",
    "modules",
)
for _family in FAMILIES:
    import_module(f".{_family}", __name__)
