"""Module bookkeeping against torch.nn.Module: buffers (persistent or not) in state_dict,
load_state_dict, buffers()/named_buffers() and .to(); named_modules / children / apply /
train-eval propagation; registration errors; repr; ModuleDict, Flatten, Unflatten."""

import copy

import numpy as np
import pytest
import torch
from _torch_compare import eg, to_np

import engine.nn as enn


def _build(nn, m):
    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(3, 4)
            self.register_buffer("scale", m.ones(4))
            self.register_buffer("cache", m.zeros(2), persistent=False)
            self.register_buffer("count", m.tensor(0))
            self.register_buffer("absent", None)

        def forward(self, x):
            return self.lin(x) * self.scale

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = Block()
            self.b = Block()
            self.shared = self.a  # the same module under two names
            self.seq = nn.Sequential(nn.Linear(4, 2), nn.ReLU())

        def forward(self, x):
            return self.seq(self.b(self.a(x)[..., :3]))

    return Net()


@pytest.fixture
def nets():
    return _build(torch.nn, torch), _build(enn, eg)


def test_state_dict_keys_with_buffers(nets):
    t, e = nets
    assert list(e.state_dict()) == list(t.state_dict())
    assert "a.cache" not in e.state_dict()
    assert e.state_dict()["a.count"].dtype == eg.int64


def test_named_buffers_and_buffers(nets):
    t, e = nets
    assert [n for n, _ in e.named_buffers()] == [n for n, _ in t.named_buffers()]
    assert [n for n, _ in e.named_buffers(prefix="p", recurse=True)] == [
        n for n, _ in t.named_buffers(prefix="p", recurse=True)
    ]
    assert [n for n, _ in e.a.named_buffers(recurse=False)] == [
        n for n, _ in t.a.named_buffers(recurse=False)
    ]
    assert [n for n, _ in e.named_buffers(remove_duplicate=False)] == [
        n for n, _ in t.named_buffers(remove_duplicate=False)
    ]
    assert len(list(e.buffers())) == len(list(t.buffers()))
    assert len(list(e.buffers(recurse=False))) == 0


def test_named_parameters_and_modules(nets):
    t, e = nets
    for kw in ({}, {"prefix": "net"}, {"remove_duplicate": False}):
        assert [n for n, _ in e.named_parameters(**kw)] == [n for n, _ in t.named_parameters(**kw)]
        assert [n for n, _ in e.named_modules(**kw)] == [n for n, _ in t.named_modules(**kw)]
    assert [n for n, _ in e.named_parameters(recurse=False)] == []
    assert [n for n, _ in e.named_children()] == [n for n, _ in t.named_children()]
    assert len(list(e.children())) == len(list(t.children()))
    assert len(list(e.modules())) == len(list(t.modules()))
    memo = {e.a}
    assert [n for n, _ in e.named_modules(memo=memo)] == [n for n, _ in t.named_modules(memo={t.a})]


def test_load_state_dict_buffers_round_trip(nets):
    t, e = nets
    with torch.no_grad():
        for v in t.state_dict().values():
            if v.dtype.is_floating_point:
                v.uniform_(-1, 1)
            else:
                v.fill_(7)
    res = e.load_state_dict({k: eg.tensor(v.numpy()) for k, v in t.state_dict().items()})
    assert repr(res) == "<All keys matched successfully>"
    for k, v in t.state_dict().items():
        np.testing.assert_array_equal(to_np(e.state_dict()[k]), v.numpy(), err_msg=k)
    x = np.random.default_rng(0).standard_normal((2, 3)).astype(np.float32)
    np.testing.assert_allclose(
        to_np(e(eg.tensor(x))), t(torch.tensor(x)).detach().numpy(), rtol=1e-5, atol=1e-6
    )


def test_load_state_dict_missing_buffer_errors_as_torch(nets):
    t, e = nets
    sd_t = dict(t.state_dict())
    del sd_t["a.scale"]
    sd_e = {k: eg.tensor(v.numpy()) for k, v in sd_t.items()}
    with pytest.raises(RuntimeError) as te:
        t.load_state_dict(sd_t)
    with pytest.raises(RuntimeError) as ee:
        e.load_state_dict(sd_e)
    assert str(ee.value).replace("Net", "X") == str(te.value).replace("Net", "X")
    res = e.load_state_dict(sd_e, strict=False)
    assert res.missing_keys == ["a.scale", "shared.scale"] or res.missing_keys == ["a.scale"]


def test_to_dtype_casts_float_buffers_only(nets):
    _, e = nets
    e.double()
    assert e.a.scale.dtype == eg.float64 and e.a.cache.dtype == eg.float64
    assert e.a.count.dtype == eg.int64
    assert e.a.lin.weight.dtype == eg.float64
    e.to(eg.float32)
    assert e.a.scale.dtype == eg.float32 and e.a.count.dtype == eg.int64
    e.to("cpu", dtype=eg.float64)
    assert e.a.scale.dtype == eg.float64
    t = torch.nn.Linear(2, 2)
    with pytest.raises(TypeError) as te:
        t.to(torch.int64)
    with pytest.raises(TypeError) as ee:
        enn.Linear(2, 2).to(eg.int64)
    assert str(ee.value).replace("engine", "torch") == str(te.value)


def test_buffer_assignment_and_deletion(nets):
    t, e = nets
    e.a.scale = eg.full((4,), 2.0)
    assert "a.scale" in e.state_dict() and float(e.state_dict()["a.scale"][0]) == 2.0
    e.a.scale = None
    assert "a.scale" not in e.state_dict()
    with pytest.raises(TypeError) as te:
        t.a.count = 3
    with pytest.raises(TypeError) as ee:
        e.a.count = 3
    assert str(ee.value) == str(te.value)
    del e.a.cache
    assert "cache" not in dict(e.a.named_buffers())
    e.a.register_buffer("cache", eg.zeros(1))  # re-registered as persistent
    assert "a.cache" in e.state_dict()


REG_ERRORS = [
    ("buf_name_type", lambda nn, m, mod: mod.register_buffer(1, m.zeros(1))),
    ("buf_dot", lambda nn, m, mod: mod.register_buffer("a.b", m.zeros(1))),
    ("buf_empty", lambda nn, m, mod: mod.register_buffer("", m.zeros(1))),
    ("buf_exists", lambda nn, m, mod: mod.register_buffer("weight", m.zeros(1))),
    ("buf_type", lambda nn, m, mod: mod.register_buffer("x", 3)),
    (
        "param_exists",
        lambda nn, m, mod: (
            mod.register_buffer("buf", m.zeros(1)),
            mod.register_parameter("buf", nn.Parameter(m.zeros(1))),
        ),
    ),
    ("param_type", lambda nn, m, mod: mod.register_parameter("p", m.zeros(1))),
    ("param_assign", lambda nn, m, mod: setattr(mod, "weight", 3)),
    ("module_dot", lambda nn, m, mod: mod.add_module("a.b", nn.Linear(1, 1))),
    ("module_exists", lambda nn, m, mod: mod.add_module("weight", nn.Linear(1, 1))),
    ("module_type", lambda nn, m, mod: mod.add_module("x", 3)),
    ("train_mode", lambda nn, m, mod: mod.train("yes")),
    ("get_submodule", lambda nn, m, mod: mod.get_submodule("nope")),
    ("get_parameter", lambda nn, m, mod: mod.get_parameter("nope")),
    ("get_buffer", lambda nn, m, mod: mod.get_buffer("weight")),
    (
        "buffer_before_init",
        lambda nn, m, mod: nn.Module.register_buffer(object.__new__(nn.Module), "a", None),
    ),
]


@pytest.mark.parametrize("name, fn", REG_ERRORS, ids=[r[0] for r in REG_ERRORS])
def test_registration_errors_match_torch(name, fn):
    with pytest.raises(Exception) as te:
        fn(torch.nn, torch, torch.nn.Linear(2, 3))
    with pytest.raises(Exception) as ee:
        fn(enn, eg, enn.Linear(2, 3))
    assert type(ee.value) is type(te.value)
    assert str(ee.value) == str(te.value)


def test_get_submodule_parameter_buffer(nets):
    _, e = nets
    assert e.get_submodule("a.lin") is e.a.lin
    assert e.get_submodule("") is e
    assert e.get_parameter("seq.0.weight") is e.seq[0].weight
    assert e.get_buffer("b.scale") is e.b.scale


def test_train_eval_propagate_through_children_overrides():
    calls = []

    class Custom(enn.Module):
        def train(self, mode=True):
            calls.append(mode)
            return super().train(mode)

    net = enn.Sequential(enn.Linear(2, 2), enn.Sequential(Custom(), enn.Dropout()))
    assert net.eval() is net
    assert calls == [False]
    assert all(not m.training for m in net.modules())
    net.train()
    assert calls == [False, True] and all(m.training for m in net.modules())


def test_apply_visits_children_first(nets):
    t, e = nets
    seen_t, seen_e = [], []
    t.apply(lambda m: seen_t.append(type(m).__name__))
    assert e.apply(lambda m: seen_e.append(type(m).__name__)) is e
    assert seen_e == seen_t


def test_repr_matches_torch(nets):
    t, e = nets
    assert repr(e) == repr(t)
    empty_t, empty_e = torch.nn.Module(), enn.Module()
    assert repr(empty_e) == repr(empty_t)

    class Multi(enn.Module):
        def extra_repr(self):
            return "a=1\nb=2"

    class TMulti(torch.nn.Module):
        def extra_repr(self):
            return "a=1\nb=2"

    me, mt = Multi(), TMulti()
    me.lin, mt.lin = enn.Linear(1, 1), torch.nn.Linear(1, 1)
    assert repr(me).replace("Multi", "X") == repr(mt).replace("TMulti", "X")


def test_dir_lists_registered_names(nets):
    _, e = nets
    d = dir(e.a)
    assert "scale" in d and "lin" in d and "forward" in d


def test_deepcopy_keeps_buffers_and_params_independent(nets):
    _, e = nets
    c = copy.deepcopy(e)
    assert list(c.state_dict()) == list(e.state_dict())
    c.a.scale._data[...] = 5
    assert float(e.a.scale[0]) == 1.0
    assert c.a is c.shared


# -- containers ------------------------------------------------------------------------------------
def test_module_dict_as_torch():
    pairs = [("x", (2, 3)), ("y", (3, 1))]
    t = torch.nn.ModuleDict({k: torch.nn.Linear(*s) for k, s in pairs})
    e = enn.ModuleDict({k: enn.Linear(*s) for k, s in pairs})
    assert repr(e) == repr(t)
    assert list(e.keys()) == list(t.keys()) and len(e) == len(t) and "x" in e
    assert list(e.state_dict()) == list(t.state_dict())
    e["z"] = enn.ReLU()
    e.update([("w", enn.Identity())])
    assert list(e) == ["x", "y", "z", "w"]
    assert isinstance(e.pop("z"), enn.ReLU) and "z" not in e
    assert [k for k, _ in e.items()] == ["x", "y", "w"]
    e.clear()
    assert len(e) == 0
    with pytest.raises(TypeError) as te:
        t.update([1])
    with pytest.raises(TypeError) as ee:
        e.update([1])
    assert str(ee.value) == str(te.value)


@pytest.mark.parametrize("args", [(), (0,), (1, 2), (-3, -2)])
def test_flatten_as_torch(args):
    x = np.arange(120.0).reshape(2, 3, 4, 5)
    t, e = torch.nn.Flatten(*args), enn.Flatten(*args)
    assert repr(e) == repr(t)
    xt, xe = torch.tensor(x, requires_grad=True), eg.tensor(x, requires_grad=True)
    yt, ye = t(xt), e(xe)
    np.testing.assert_array_equal(to_np(ye), yt.detach().numpy())
    ye.sum().backward()
    yt.sum().backward()
    np.testing.assert_array_equal(to_np(xe.grad), xt.grad.numpy())


@pytest.mark.parametrize("dim, size", [(1, (2, 6)), (-1, [5, 1]), (0, (2, 1))])
def test_unflatten_as_torch(dim, size):
    x = np.arange(120.0).reshape(2, 12, 5) if dim != -1 else np.arange(10.0).reshape(2, 5)
    t, e = torch.nn.Unflatten(dim, size), enn.Unflatten(dim, size)
    assert repr(e) == repr(t)
    np.testing.assert_array_equal(to_np(e(eg.tensor(x))), t(torch.tensor(x)).numpy())


def test_unflatten_errors_as_torch():
    for args in [(1, 3), (1, (2, 2.0))]:
        with pytest.raises(TypeError) as te:
            torch.nn.Unflatten(*args)
        with pytest.raises(TypeError) as ee:
            enn.Unflatten(*args)
        assert str(ee.value) == str(te.value)
