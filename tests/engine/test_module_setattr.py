"""Reassigning a parameter, buffer or submodule keeps its place in the module's order
(named_parameters, state_dict, named_children), as PyTorch's Module.__setattr__ does."""

import torch

import engine as eg


def _build(m):
    seq = m.nn.Sequential(m.nn.Linear(2, 3), m.nn.Tanh(), m.nn.Linear(3, 1))
    seq.register_buffer("steps", m.zeros(1))
    seq.register_buffer("flag", m.ones(1))
    return seq


def _edit(m, seq):
    seq[0].weight = m.nn.Parameter(m.zeros(3, 2))
    name = "weight"  # setattr, the other spelling of the assignment
    setattr(seq[2], name, m.nn.Parameter(m.ones(1, 3)))
    seq.steps = m.ones(1)
    setattr(seq, "0", m.nn.Linear(2, 3))
    return seq


def test_reassigned_parameters_keep_their_place():
    t, e = _edit(torch, _build(torch)), _edit(eg, _build(eg))
    assert [n for n, _ in e.named_parameters()] == [n for n, _ in t.named_parameters()]
    assert list(e.state_dict()) == list(t.state_dict())
    assert [n for n, _ in e.named_children()] == [n for n, _ in t.named_children()]
    assert [n for n, _ in e.named_buffers()] == [n for n, _ in t.named_buffers()]


def test_a_parameter_over_a_plain_attribute_goes_last():
    out = []
    for m in (torch, eg):
        lin = m.nn.Linear(2, 2)
        lin.extra = 3
        lin.extra = m.nn.Parameter(m.zeros(2))
        lin.weight = m.nn.Parameter(m.zeros(2, 2))
        out.append([n for n, _ in lin.named_parameters()])
    assert out[0] == out[1] == ["weight", "bias", "extra"]
