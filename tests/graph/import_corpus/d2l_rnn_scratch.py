"""Source: d2l.ai, "Dive into Deep Learning", chapter Recurrent Neural Networks, RNN from
scratch, the PyTorch tab (https://d2l.ai/chapter_recurrent-neural-networks/rnn-scratch.html),
written from the original (its earlier, function-based edition: get_params, init_rnn_state,
rnn).
Adapted: vocab_size 28 made 6 and num_hiddens 512 made 4 (sizes for a test); no device
argument; torch.manual_seed(0) before the draws; no time machine text and no
RNNModelScratch: a batch of 2 sequences of 3 one-hot steps (F.one_hot of fixed ids, as the
model does) through rnn(), the parameters unpacked into names at the top level (the
corpus test reads a script's leaves by name), and a loss, cross entropy against fixed next ids, added."""

import torch
from torch.nn import functional as F


def get_params(vocab_size, num_hiddens):
    num_inputs = num_outputs = vocab_size

    def normal(shape):
        return torch.randn(size=shape) * 0.01

    # Hidden layer parameters
    W_xh = normal((num_inputs, num_hiddens))
    W_hh = normal((num_hiddens, num_hiddens))
    b_h = torch.zeros(num_hiddens)
    # Output layer parameters
    W_hq = normal((num_hiddens, num_outputs))
    b_q = torch.zeros(num_outputs)
    # Attach gradients
    params = [W_xh, W_hh, b_h, W_hq, b_q]
    for param in params:
        param.requires_grad_(True)
    return params


def init_rnn_state(batch_size, num_hiddens):
    return (torch.zeros((batch_size, num_hiddens)), )


def rnn(inputs, state, params):
    # Here `inputs` shape: (`num_steps`, `batch_size`, `vocab_size`)
    W_xh, W_hh, b_h, W_hq, b_q = params
    H, = state
    outputs = []
    # Shape of `X`: (`batch_size`, `vocab_size`)
    for X in inputs:
        H = torch.tanh(torch.mm(X, W_xh) + torch.mm(H, W_hh) + b_h)
        Y = torch.mm(H, W_hq) + b_q
        outputs.append(Y)
    return torch.cat(outputs, dim=0), (H,)


vocab_size, num_hiddens = 6, 4
torch.manual_seed(0)
params = get_params(vocab_size, num_hiddens)
W_xh, W_hh, b_h, W_hq, b_q = params
X = torch.tensor([[0, 1, 2], [3, 4, 5]])
state = init_rnn_state(X.shape[0], num_hiddens)
Y, new_state = rnn(F.one_hot(X.T, vocab_size).type(torch.float32), state, params)
y = torch.tensor([[1, 2, 3], [4, 5, 0]])
loss = F.cross_entropy(Y, y.T.reshape(-1))
loss.backward()
