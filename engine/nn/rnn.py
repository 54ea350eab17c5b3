"""Recurrent layers (RNN, LSTM, GRU) and their single-step cells, with PyTorch's parameter names,
shapes, argument checks and initialisation.

Everything is composed of differentiable engine ops (linear, sigmoid, tanh, stack), so the
gradients come from autograd. The input projection of a whole sequence is one `linear` call per
layer and direction; only the hidden-to-hidden product runs step by step.
"""

import math
import numbers
import warnings

from .. import _creation
from ..ops.activations import relu, sigmoid
from ..ops.linalg import linear
from ..ops.normalization import dropout as _dropout
from ..ops.shape import cat, stack
from ..ops.trig import tanh
from . import init
from .module import Module
from .parameter import Parameter

__all__ = ["RNNBase", "RNN", "LSTM", "GRU", "RNNCellBase", "RNNCell", "LSTMCell", "GRUCell"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


# -- one step of each cell kind: (input projection xi, hidden state(s), weights) -> new state ----
def _rnn_step(act):
    def step(xi, h, w_hh, b_hh):
        return act(xi + linear(h, w_hh, b_hh))

    return step


def _lstm_step(xi, hc, w_hh, b_hh, w_hr=None):
    h, c = hc
    gates = xi + linear(h, w_hh, b_hh)
    i, f, g, o = gates.chunk(4, 1)  # PyTorch's gate order: input, forget, cell, output
    c = sigmoid(f) * c + sigmoid(i) * tanh(g)
    h = sigmoid(o) * tanh(c)
    if w_hr is not None:
        h = linear(h, w_hr)
    return h, c


def _gru_step(xi, h, w_hh, b_hh):
    gh = linear(h, w_hh, b_hh)
    ir, iz, in_ = xi.chunk(3, 1)  # PyTorch's gate order: reset, update, new
    hr, hz, hn = gh.chunk(3, 1)
    r = sigmoid(ir + hr)
    z = sigmoid(iz + hz)
    n = tanh(in_ + r * hn)
    return n + z * (h - n)  # (1 - z) * n + z * h


class RNNBase(Module):
    """The stacked, optionally bidirectional recurrence shared by RNN, LSTM and GRU."""

    def __init__(
        self,
        mode,
        input_size,
        hidden_size,
        num_layers=1,
        bias=True,
        batch_first=False,
        dropout=0.0,
        bidirectional=False,
        proj_size=0,
        device=None,
        dtype=None,
    ):
        super().__init__()
        self.mode = mode
        self.input_size, self.hidden_size = input_size, hidden_size
        self.num_layers, self.bias, self.batch_first = num_layers, bias, batch_first
        self.dropout, self.bidirectional, self.proj_size = float(dropout), bidirectional, proj_size
        num_directions = 2 if bidirectional else 1
        if (
            not isinstance(dropout, numbers.Number)
            or isinstance(dropout, bool)
            or not 0 <= dropout <= 1
        ):
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an "
                "element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero "
                "dropout expects num_layers greater than 1, but got "
                f"dropout={dropout} and num_layers={num_layers}",
                stacklevel=2,
            )
        if not isinstance(hidden_size, int):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError(
                "proj_size should be a positive integer or zero to disable projections"
            )
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size
        real_hidden = proj_size if proj_size > 0 else hidden_size
        self._flat_weights_names = []
        self._all_weights = []

        def param(*shape):
            return Parameter(_creation.empty(*shape, dtype=dtype, device=device))

        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input = input_size if layer == 0 else real_hidden * num_directions
                sfx = f"_l{layer}" + ("_reverse" if direction == 1 else "")
                names = [f"weight_ih{sfx}", f"weight_hh{sfx}"]
                values = [param(gate_size, layer_input), param(gate_size, real_hidden)]
                if bias:
                    names += [f"bias_ih{sfx}", f"bias_hh{sfx}"]
                    values += [param(gate_size), param(gate_size)]
                if proj_size > 0:
                    names.append(f"weight_hr{sfx}")
                    values.append(param(proj_size, hidden_size))
                for name, value in zip(names, values):
                    setattr(self, name, value)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self):
        # PyTorch draws every parameter from U(-1/sqrt(hidden), 1/sqrt(hidden)), in order
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    @property
    def _flat_weights(self):
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self):
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def flatten_parameters(self):
        """A no-op: the engine keeps no fused weight buffer (cuDNN's in PyTorch)."""

    # -- checks, in PyTorch's order and words ---------------------------------------------------
    def check_input(self, input, batch_sizes=None):
        w = self._flat_weights[0]
        if input.dtype != w.dtype:
            have, want = f"torch.{input.dtype.name}", f"torch.{w.dtype.name}"
            raise ValueError(
                f"RNN input dtype ({have}) does not match weight dtype ({want}). Convert input: "
                f"input.to({want}), or convert model: model.to({have})"
            )
        if input.dim() != 3:
            raise RuntimeError(f"input must have 3 dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(
                "input.size(-1) must be equal to input_size. "
                f"Expected {self.input_size}, got {input.size(-1)}"
            )

    def get_expected_hidden_size(self, input, batch_sizes=None):
        mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, hidden)

    def check_hidden_size(self, hx, expected, msg="Expected hidden size {}, got {}"):
        if tuple(hx.shape) != tuple(expected):
            raise RuntimeError(msg.format(expected, list(hx.shape)))

    def check_forward_args(self, input, hidden, batch_sizes=None):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx, permutation):
        return hx

    # -- the recurrence -------------------------------------------------------------------------
    def _run(self, input, hidden, step):
        """input (T, B, I) time-major; hidden: per (layer, direction) state, each a tensor or an
        (h, c) pair. Returns the last layer's output (T, B, D*H) and the final states."""
        num_directions = 2 if self.bidirectional else 1
        finals = []
        x = input
        for layer in range(self.num_layers):
            outs = []
            for direction in range(num_directions):
                k = layer * num_directions + direction
                names = self._all_weights[k]
                w = {n.split("_l")[0]: getattr(self, n) for n in names}
                xi = linear(x, w["weight_ih"], w.get("bias_ih"))  # (T, B, G) in one product
                extra = (w["weight_hr"],) if "weight_hr" in w else ()
                state = hidden[k]
                steps = range(x.shape[0])
                if direction == 1:
                    steps = reversed(steps)
                seq = [None] * x.shape[0]
                for t in steps:
                    state = step(xi[t], state, w["weight_hh"], w.get("bias_hh"), *extra)
                    seq[t] = state[0] if isinstance(state, tuple) else state
                outs.append(stack(seq) if seq else xi[:, :, :0])
                finals.append(state)
            x = outs[0] if num_directions == 1 else cat(outs, 2)
            if self.dropout and self.training and layer < self.num_layers - 1:
                x = _dropout(x, self.dropout, True)
        return x, finals

    def _forward(self, input, hx, name):
        """Shared by RNN and GRU: one hidden state tensor."""
        if input.dim() not in (2, 3):
            raise ValueError(
                f"{name}: Expected input to be 2D or 3D, got {input.dim()}D"
                + (" tensor instead" if name == "RNN" else " instead")
            )
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
            if hx is not None:
                if hx.dim() != 2:
                    raise RuntimeError(
                        f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D "
                        "tensor"
                    )
                hx = hx.unsqueeze(1)
        elif hx is not None and hx.dim() != 3:
            raise RuntimeError(
                f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor"
            )
        batch = input.size(0) if self.batch_first else input.size(1)
        if hx is None:
            num_directions = 2 if self.bidirectional else 1
            hx = _creation.zeros(
                self.num_layers * num_directions,
                batch,
                self.hidden_size,
                dtype=input.dtype,
                device=input.device,
            )
        self.check_forward_args(input, hx)
        if self.batch_first:
            input = input.transpose(0, 1)
        if self.mode == "GRU":
            step = _gru_step
        else:
            step = _rnn_step(tanh if self.mode == "RNN_TANH" else relu)
        output, finals = self._run(input, list(hx.unbind(0)), step)
        hidden = stack(finals)
        if self.batch_first:
            output = output.transpose(0, 1)
        if not is_batched:
            output = output.squeeze(batch_dim)
            hidden = hidden.squeeze(1)
        return output, hidden

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size != 0:
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if self.batch_first is not False:
            s += f", batch_first={self.batch_first}"
        if self.dropout != 0:
            s += f", dropout={self.dropout}"
        if self.bidirectional is not False:
            s += f", bidirectional={self.bidirectional}"
        return s


class RNN(RNNBase):
    """Elman RNN: h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu)."""

    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:  # PyTorch's positional order: input, hidden, layers, nonlinearity, ...
            self_nl = args[3]
            args = args[:3] + args[4:]
        else:
            self_nl = kwargs.pop("nonlinearity", "tanh")
        if self_nl == "tanh":
            mode = "RNN_TANH"
        elif self_nl == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{self_nl}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = self_nl

    def forward(self, input, hx=None):
        return self._forward(input, hx, "RNN")


class GRU(RNNBase):
    def __init__(self, *args, **kwargs):
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input, hx=None):
        return self._forward(input, hx, "GRU")


class LSTM(RNNBase):
    def __init__(self, *args, **kwargs):
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input, batch_sizes=None):
        mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        return (self.num_layers * num_directions, mini_batch, self.hidden_size)

    def check_forward_args(self, input, hidden, batch_sizes=None):
        self.check_input(input, batch_sizes)
        self.check_hidden_size(
            hidden[0],
            self.get_expected_hidden_size(input, batch_sizes),
            "Expected hidden[0] size {}, got {}",
        )
        self.check_hidden_size(
            hidden[1],
            self.get_expected_cell_size(input, batch_sizes),
            "Expected hidden[1] size {}, got {}",
        )

    def forward(self, input, hx=None):
        if input.dim() not in (2, 3):
            raise ValueError(f"LSTM: Expected input to be 2D or 3D, got {input.dim()}D instead")
        is_batched = input.dim() == 3
        batch_dim = 0 if self.batch_first else 1
        if not is_batched:
            input = input.unsqueeze(batch_dim)
        batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        if hx is None:
            real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
            n = self.num_layers * num_directions
            kw = dict(dtype=input.dtype, device=input.device)
            hx = (
                _creation.zeros(n, batch, real_hidden, **kw),
                _creation.zeros(n, batch, self.hidden_size, **kw),
            )
        elif is_batched:
            if hx[0].dim() != 3 or hx[1].dim() != 3:
                raise RuntimeError(
                    "For batched 3-D input, hx and cx should also be 3-D but got "
                    f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors"
                )
        else:
            if hx[0].dim() != 2 or hx[1].dim() != 2:
                raise RuntimeError(
                    "For unbatched 2-D input, hx and cx should also be 2-D but got "
                    f"({hx[0].dim()}-D, {hx[1].dim()}-D) tensors"
                )
            hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
        self.check_forward_args(input, hx)
        if self.batch_first:
            input = input.transpose(0, 1)
        states = list(zip(hx[0].unbind(0), hx[1].unbind(0)))
        output, finals = self._run(input, states, _lstm_step)
        h_n = stack([h for h, _ in finals])
        c_n = stack([c for _, c in finals])
        if self.batch_first:
            output = output.transpose(0, 1)
        if not is_batched:
            output = output.squeeze(batch_dim)
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return output, (h_n, c_n)


# -- cells ---------------------------------------------------------------------------------------
class RNNCellBase(Module):
    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        kw = dict(dtype=dtype, device=device)
        self.weight_ih = Parameter(_creation.empty(num_chunks * hidden_size, input_size, **kw))
        self.weight_hh = Parameter(_creation.empty(num_chunks * hidden_size, hidden_size, **kw))
        if bias:
            self.bias_ih = Parameter(_creation.empty(num_chunks * hidden_size, **kw))
            self.bias_hh = Parameter(_creation.empty(num_chunks * hidden_size, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.bias is not True:
            s += f", bias={self.bias}"
        if getattr(self, "nonlinearity", "tanh") != "tanh":
            s += f", nonlinearity={self.nonlinearity}"
        return s

    def _prepare(self, input, hx, name):
        """PyTorch's checks of a cell's input and state; returns (input, states, is_batched)
        with a batch dimension added to unbatched ones."""
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        states = hx if isinstance(hx, tuple) else (hx,)
        if hx is not None:
            for i, s in enumerate(states):
                if s.dim() not in (1, 2):
                    what = f"hx[{i}]" if isinstance(hx, tuple) else "hidden"
                    raise ValueError(
                        f"{name}: Expected {what} to be 1D or 2D, got {s.dim()}D instead"
                    )
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            return input, None, is_batched
        if not is_batched:
            states = tuple(s.unsqueeze(0) for s in states)
        if input.size(1) != self.input_size:
            raise RuntimeError(
                f"input has inconsistent input_size: got {input.size(1)} expected {self.input_size}"
            )
        for i, s in enumerate(states):
            tag = i  # PyTorch numbers the states: hidden0, hidden1
            if s.size(0) != input.size(0):
                raise RuntimeError(
                    f"Input batch size {input.size(0)} doesn't match hidden{tag} batch size "
                    f"{s.size(0)}"
                )
            if s.size(1) != self.hidden_size:
                raise RuntimeError(
                    f"hidden{tag} has inconsistent hidden_size: got {s.size(1)}, expected "
                    f"{self.hidden_size}"
                )
        return input, states, is_batched

    def _zeros(self, input):
        return _creation.zeros(
            input.size(0), self.hidden_size, dtype=input.dtype, device=input.device
        )


class RNNCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):  # fmt: skip
        super().__init__(input_size, hidden_size, bias, 1, device, dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input, hx=None):
        input, states, is_batched = self._prepare(input, hx, "RNNCell")
        h = self._zeros(input) if states is None else states[0]
        if self.nonlinearity == "tanh":
            act = tanh
        elif self.nonlinearity == "relu":
            act = relu
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        xi = linear(input, self.weight_ih, self.bias_ih)
        out = _rnn_step(act)(xi, h, self.weight_hh, self.bias_hh)
        return out if is_batched else out.squeeze(0)


class LSTMCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device, dtype)

    def forward(self, input, hx=None):
        input, states, is_batched = self._prepare(input, hx, "LSTMCell")
        if states is None:
            z = self._zeros(input)
            states = (z, z)
        xi = linear(input, self.weight_ih, self.bias_ih)
        h, c = _lstm_step(xi, states, self.weight_hh, self.bias_hh)
        return (h, c) if is_batched else (h.squeeze(0), c.squeeze(0))


class GRUCell(RNNCellBase):
    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device, dtype)

    def forward(self, input, hx=None):
        input, states, is_batched = self._prepare(input, hx, "GRUCell")
        h = self._zeros(input) if states is None else states[0]
        xi = linear(input, self.weight_ih, self.bias_ih)
        out = _gru_step(xi, h, self.weight_hh, self.bias_hh)
        return out if is_batched else out.squeeze(0)
