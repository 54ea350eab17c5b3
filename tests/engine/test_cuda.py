"""The "cuda" device end to end, and the stand-in that lets it run without a GPU.

On a machine with a GPU and cupy these run against the real cupy; elsewhere tests/engine/
conftest.py installs tests/engine/fake_cupy.py as `cupy`, and the first group checks that the
stand-in refuses what the real one refuses (or more), so a pass here means something."""

import copy

import numpy as np
import pytest

import engine as eg
import engine.nn as enn
import engine.nn.functional as eg_F
from engine import _device

needs_cuda = pytest.mark.skipif(not eg.cuda.is_available(), reason="needs a CUDA device (cupy)")


def _stand_in():
    if not eg.cuda.is_available():
        return None
    cp = _device.require_cupy()
    return cp if getattr(cp, "fake", False) else None


needs_stand_in = pytest.mark.skipif(_stand_in() is None, reason="runs on the cupy stand-in only")


# -- the stand-in refuses what cupy refuses ------------------------------------------------------
@needs_stand_in
def test_cuda_stand_in_refuses_implicit_moves():
    cp = _stand_in()
    dev = cp.asarray(np.arange(6.0).reshape(2, 3))
    assert type(dev) is not np.ndarray and cp.get_array_module(dev) is cp
    with pytest.raises(TypeError, match="Implicit conversion to a NumPy array is not allowed"):
        np.asarray(dev)
    # an array that was not moved: in either order, through an operator or a cupy function
    for mixed in (
        lambda: dev + np.ones(3),
        lambda: np.ones(3) + dev,
        lambda: cp.where(dev > 1, dev, np.zeros(3)),
        lambda: cp.concatenate([dev, np.ones((1, 3))]),
    ):
        with pytest.raises(TypeError, match="Unsupported type"):
            mixed()
    # a numpy function on device data, where the engine should have asked xp() for the module
    for direct in (
        lambda: np.exp(dev),
        lambda: np.concatenate([dev, dev]),
        lambda: np.add.at(dev, [0], 1.0),
    ):
        with pytest.raises(TypeError, match=r"use the array module of the data, `xp\(array\)`"):
            direct()
    with pytest.raises(AttributeError):
        dev.ctypes  # noqa: B018 - numpy-only attributes are not there
    with pytest.raises(AttributeError):
        dev.flags.writeable = False


@needs_stand_in
def test_cuda_stand_in_behaves_as_cupy():
    cp = _stand_in()
    host = np.arange(12.0).reshape(3, 4)
    dev = cp.asarray(host)
    back = cp.asnumpy(dev)
    assert type(back) is np.ndarray and np.array_equal(back, host)
    back[0, 0] = 99  # a copy, not the device memory
    assert dev[0, 0].item() == 0 and dev.get()[0, 0] == 0
    # numpy scalars come back as 0-d device arrays, and scalars mix freely
    assert type(dev.sum()) is cp.ndarray and dev.sum().ndim == 0 and float(dev.sum()) == 66
    assert type(dev[0, 1]) is cp.ndarray and (np.float32(2) * dev).dtype == np.float64
    # views keep cupy's base and data pointer
    view = dev.reshape(12)[2:]
    assert view.base is dev and dev.T.base is dev
    assert view.data.ptr == dev.data.ptr + 2 * dev.itemsize
    # host index arrays are allowed (cupy copies them over)
    assert cp.asnumpy(dev[np.array([0, 2])]).tolist() == host[[0, 2]].tolist()
    assert cp.cuda.runtime.getDeviceCount() == 1 and dev.device.id == 0
    with pytest.raises(RuntimeError, match="invalid device ordinal"), cp.cuda.Device(1):
        pass


@needs_stand_in
def test_cuda_stand_in_catches_a_numpy_call_in_an_op():
    x = eg.tensor([0.5, 1.0], device="cuda", requires_grad=True)
    with pytest.raises(TypeError):
        np.exp(x.detach()._data)  # an op written as if numpy were the only array module
    with pytest.raises(TypeError, match="Implicit conversion"):
        np.asarray(x.detach()._data)
    with pytest.raises(RuntimeError, match="same device"):
        x * eg.tensor([1.0, 2.0])  # an un-moved tensor: the engine's own check


# -- the cuda path itself (real GPU or stand-in) ---------------------------------------------------
def _lenet():
    return enn.Sequential(
        enn.Conv2d(1, 6, 5, padding=2),
        enn.ReLU(),
        enn.MaxPool2d(2),
        enn.Conv2d(6, 16, 5),
        enn.ReLU(),
        enn.MaxPool2d(2),
        enn.Flatten(),
        enn.Linear(16 * 5 * 5, 120),
        enn.ReLU(),
        enn.Linear(120, 84),
        enn.ReLU(),
        enn.Linear(84, 10),
    )


@needs_cuda
def test_cuda_lenet_training_steps_match_cpu():
    eg.manual_seed(0)
    models = {"cpu": _lenet()}
    models["cuda"] = copy.deepcopy(models["cpu"]).to("cuda")
    rng = np.random.default_rng(0)
    images = rng.standard_normal((3, 8, 1, 28, 28)).astype(np.float32)
    labels = rng.integers(0, 10, (3, 8))
    results = {}
    for dev, model in models.items():
        opt = eg.optim.SGD(model.parameters(), lr=0.05, momentum=0.9)
        losses = []
        for x, y in zip(images, labels):
            opt.zero_grad()
            out = model(eg.tensor(x, device=dev))
            loss = eg_F.cross_entropy(out, eg.tensor(y, device=dev))
            loss.backward()
            opt.step()
            losses.append(loss.item())
        assert all(p.device.type == dev for p in model.parameters())
        assert all(p.grad.device.type == dev for p in model.parameters())
        results[dev] = losses, [p.detach().cpu().numpy() for p in model.parameters()]
    np.testing.assert_allclose(results["cuda"][0], results["cpu"][0], rtol=1e-4, atol=1e-5)
    for a, b in zip(results["cuda"][1], results["cpu"][1]):
        assert a.dtype == np.float32
        np.testing.assert_allclose(a, b, rtol=1e-4, atol=1e-5)


@needs_cuda
def test_cuda_index_put_and_double_backward_of_an_index():
    # the nodes keep the index as a device array; indexing with it again (the gradient of the
    # values, a create_graph backward) must take it as an index
    res = {}
    for dev in ("cpu", "cuda"):
        x = eg.arange(12.0, device=dev).reshape(3, 4).requires_grad_()
        idx = eg.tensor([2, 0], device=dev)
        v = eg.ones(2, 4, device=dev, requires_grad=True)
        z = eg.zeros(3, 4, device=dev)
        z[idx] = v * 2.0
        (g,) = eg.autograd.grad(
            (x[eg.tensor([2, 0, 2], device=dev)] ** 2).sum(), x, create_graph=True
        )
        (g * g).sum().backward()
        z.sum().backward()
        res[dev] = [t.detach().cpu().numpy() for t in (z, g, x.grad, v.grad)]
    for a, b in zip(res["cuda"], res["cpu"]):
        np.testing.assert_array_equal(a, b)


@needs_cuda
def test_cuda_gradcheck_and_gradgradcheck():
    x = eg.tensor(np.linspace(-1, 1, 6).reshape(2, 3), device="cuda", requires_grad=True)
    w = eg.tensor(np.linspace(0.5, 2, 3), device="cuda", requires_grad=True)
    assert eg.autograd.gradcheck(lambda a, b: eg.tanh(a * b).sum(1), (x, w))
    assert eg.autograd.gradgradcheck(lambda a, b: (a * b).exp(), (x, w))


@needs_cuda
def test_cuda_running_extremes_and_mode_match_cpu():
    # cupy's maximum/minimum have no accumulate: cummax, cummin and mode scan another way there
    rng = np.random.default_rng(3)
    a = rng.integers(-4, 5, (3, 37)).astype(np.float64)  # ties; a length that is no power of 2
    a[1, 5] = np.nan
    res = {}
    for dev in ("cpu", "cuda"):
        x = eg.tensor(a, device=dev, requires_grad=True)
        outs = [x.cummax(1), x.cummin(0), eg.tensor(a[[0, 2]], device=dev).mode(1)]
        (outs[0].values.nan_to_num().sum() + outs[1].values.nan_to_num().sum()).backward()
        res[dev] = [t.detach().cpu().numpy() for o in outs for t in o] + [x.grad.cpu().numpy()]
    for u, v in zip(res["cuda"], res["cpu"]):
        np.testing.assert_array_equal(u, v)


@needs_cuda
@pytest.mark.parametrize("dtype", ["float64", "float32", "float16", "int8", "int64"])
def test_cuda_scatter_reduce_extremes_match_cpu(dtype):
    # not cupyx.scatter_max/min: they compare float64 in float32 and refuse 8/16-bit types
    rng = np.random.default_rng(4)
    base = (rng.standard_normal((3, 5)) * 3).astype(dtype)
    src = (rng.standard_normal((3, 6)) * 3).astype(dtype)
    if dtype == "float64":
        src[0, 1] = np.nan
        src[1] += 1e-12  # apart from base only beyond float32's precision
    idx = rng.integers(0, 5, (3, 6))
    for reduce in ("amax", "amin"):
        for include_self in (True, False):
            res = [
                eg.tensor(base, device=dev)
                .scatter_reduce(
                    1,
                    eg.tensor(idx, device=dev),
                    eg.tensor(src, device=dev),
                    reduce,
                    include_self=include_self,
                )
                .cpu()
                .numpy()
                for dev in ("cpu", "cuda")
            ]
            np.testing.assert_array_equal(res[1], res[0])
