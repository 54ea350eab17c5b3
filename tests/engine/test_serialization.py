"""Weights files: a model saved by PyTorch's `safetensors.torch.save_file` loads into the same
engine model (same outputs), and the engine's file loads back into torch."""

import numpy as np
import torch
from _torch_compare import eg
from safetensors.torch import load_file, save_file

from engine.serialization import load_safetensors, save_safetensors


def _model(m):
    return m.nn.Sequential(
        m.nn.Linear(4, 8), m.nn.Tanh(), m.nn.LayerNorm(8), m.nn.Linear(8, 3), m.nn.BatchNorm1d(3)
    )


def test_torch_file_loads_into_engine_and_back(tmp_path):
    t_model, e_model = _model(torch).eval(), _model(eg).eval()
    save_file(t_model.state_dict(), tmp_path / "torch.safetensors")
    e_model.load_state_dict(load_safetensors(tmp_path / "torch.safetensors"))
    x = np.random.default_rng(0).standard_normal((5, 4)).astype(np.float32)
    np.testing.assert_allclose(
        e_model(eg.tensor(x)).detach().numpy(), t_model(torch.tensor(x)).detach().numpy(),
        rtol=2e-5, atol=1e-6,
    )  # fmt: skip

    save_safetensors(e_model.state_dict(), tmp_path / "engine.safetensors")
    back = load_file(tmp_path / "engine.safetensors")
    assert sorted(back) == sorted(t_model.state_dict())
    for name, value in t_model.state_dict().items():
        assert back[name].dtype == value.dtype
        assert torch.equal(back[name], value), name


def test_dtypes_and_metadata(tmp_path):
    state = {
        "h": eg.tensor([1.5, -2.0], dtype=eg.float16),
        "i": eg.arange(6).reshape(2, 3),
        "b": eg.tensor([True, False]),
        "t": eg.arange(6.0).reshape(2, 3).t(),  # not contiguous
    }
    save_safetensors(state, tmp_path / "w.safetensors", metadata={"format": "pt"})
    loaded = load_safetensors(tmp_path / "w.safetensors")
    for k, v in state.items():
        assert loaded[k].dtype == v.dtype
        assert loaded[k].tolist() == v.tolist()
    t = load_file(tmp_path / "w.safetensors")
    assert t["t"].tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]]
