"""The engine's intra-op thread pool (engine/_threads.py): PyTorch's names and messages for the
thread count, the environment variables it starts from, and kernels that give the same numbers
split over threads as on one (and as PyTorch), on the host only."""

import os
import subprocess
import sys
import threading

import numpy as np
import pytest
import torch
from threadpoolctl import threadpool_info

import engine as eg
import engine.nn.functional as eg_F
from engine import _threads

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


@pytest.fixture
def restore_threads():
    before = eg.get_num_threads()
    blas = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    yield
    eg.set_num_threads(before)
    if blas:  # set_num_threads set numpy's BLAS too: put back what it had
        from threadpoolctl import threadpool_limits

        threadpool_limits(limits=blas[0], user_api="blas")


@pytest.fixture
def forced_split(monkeypatch):
    """Three threads and no size threshold: every kernel that can split, splits."""
    monkeypatch.setattr(_threads, "_threads", 3)
    monkeypatch.setattr(_threads, "MIN_WORK", 0)


def test_set_and_get_num_threads(restore_threads):
    eg.set_num_threads(3)
    assert eg.get_num_threads() == 3
    blas = [i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas"]
    assert blas and all(n == 3 for n in blas)  # numpy's BLAS follows, as torch's does
    eg.set_num_threads(np.int64(1))
    assert eg.get_num_threads() == 1


@pytest.mark.parametrize("bad", [0, -2, 1.5, True, "2"])
def test_set_num_threads_errors_match_torch(bad, restore_threads):
    with pytest.raises((RuntimeError, TypeError)) as want:
        torch.set_num_threads(bad)
    with pytest.raises(type(want.value)) as got:
        eg.set_num_threads(bad)
    if isinstance(bad, str):  # torch's argument parser words this one its own way
        return
    assert str(got.value) == str(want.value)


@pytest.mark.parametrize(
    "env, want",
    [
        ({"OMP_NUM_THREADS": "3"}, 3),
        ({"MKL_NUM_THREADS": "5"}, 5),
        ({"OMP_NUM_THREADS": "x"}, None),
    ],
)
def test_thread_count_from_environment(env, want):
    clean = {k: v for k, v in os.environ.items() if k not in ("OMP_NUM_THREADS", "MKL_NUM_THREADS")}
    out = subprocess.run(
        [sys.executable, "-c", "import engine, os; print(engine.get_num_threads())"],
        env={**clean, **env},
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    n = int(out.stdout)
    if want is None:  # not a count: the cores this process may use, at most 8
        want = max(1, min(len(os.sched_getaffinity(0)), 8))
    assert n == want


def test_run_keeps_share_order_and_raises_share_errors(forced_split):
    assert _threads.run(lambda i: i * i, 12, work=1) == [i * i for i in range(12)]

    def bad(i):
        if i == 5:
            raise ValueError("share 5")
        return i

    with pytest.raises(ValueError, match="share 5"):
        _threads.run(bad, 8, work=1)


def test_ranges_cover_the_items_once(forced_split):
    for n, grain in ((1, 1), (7, 1), (10_000, 1024), (3000, 1024)):
        parts = _threads.ranges(n, work=1, grain=grain)
        assert parts[0][0] == 0 and parts[-1][1] == n
        assert all(a[1] == b[0] for a, b in zip(parts, parts[1:]))
        assert all(s % grain == 0 for s, _ in parts)


def test_small_work_stays_on_the_caller(monkeypatch):
    monkeypatch.setattr(_threads, "_threads", 4)
    assert _threads.ranges(100, work=100) == [(0, 100)]
    names = _threads.run(lambda i: threading.current_thread().name, 4, work=10)
    assert set(names) == {threading.current_thread().name}


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64])
def test_relu_split_matches_torch(dtype, forced_split):
    rng = np.random.default_rng(0)
    a = (rng.standard_normal((7, 5, 33, 31)) * 10).astype(dtype)
    got = eg_F.relu(eg.tensor(a))
    np.testing.assert_array_equal(got.numpy(), torch.relu(torch.tensor(a)).numpy())


def test_relu_gradient_split_matches_torch(forced_split):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((6, 4, 29, 30)).astype(np.float32)
    g = rng.standard_normal(a.shape).astype(np.float32)
    x, xt = eg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    eg_F.relu(x).backward(eg.tensor(g))
    torch.relu(xt).backward(torch.tensor(g))
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())
    # an upstream gradient that is not contiguous takes the one-thread path, same numbers
    x.grad = None
    gt = np.ascontiguousarray(g.transpose(0, 1, 3, 2)).transpose(0, 1, 3, 2)
    eg_F.relu(x).backward(eg.tensor(gt))
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())


def test_device_arrays_are_never_split():
    class NotNumpy(np.ndarray):  # stands for any array type that is not numpy's own
        pass

    a = np.ones((4, 4)).view(NotNumpy)
    assert not _threads.can_split(a)
    assert not _threads.is_host(a)
    assert _threads.is_host(np.ones(3), np.ones(2))


@pytest.mark.skipif(not eg.cuda.is_available(), reason="needs cupy or its stand-in")
def test_cuda_kernels_with_threads_forced(forced_split):
    """Device arrays take the one-thread path even where every host kernel splits (the stand-in
    refuses numpy calls on device data, so a split would fail here)."""
    rng = np.random.default_rng(2)
    a = rng.standard_normal((2, 3, 12, 12)).astype(np.float32)
    w = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    x = eg.tensor(a, device="cuda", requires_grad=True)
    k = eg.tensor(w, device="cuda", requires_grad=True)
    y = eg_F.max_pool2d(eg_F.relu(eg_F.conv2d(x, k, padding=1)), 2)
    y.sum().backward()
    xt, kt = torch.tensor(a, requires_grad=True), torch.tensor(w, requires_grad=True)
    tF = torch.nn.functional
    yt = tF.max_pool2d(torch.relu(tF.conv2d(xt, kt, padding=1)), 2)
    yt.sum().backward()
    np.testing.assert_allclose(y.cpu().detach().numpy(), yt.detach().numpy(), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(x.grad.cpu().numpy(), xt.grad.numpy(), rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(k.grad.cpu().numpy(), kt.grad.numpy(), rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("nan", [False, True])
def test_max_pool_split_matches_torch(nan, forced_split):
    """Tiled max pools split by planes, and their scatter back; a NaN sends the forward to the
    tap loop (PyTorch's NaN propagation) from any share."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal((5, 3, 12, 10)).astype(np.float32)
    a[0, 0, :2, :2] = a[0, 0, 0, 0]  # ties: the first of them is PyTorch's index
    if nan:
        a[4, 2, 5, 5] = np.nan
    g = rng.standard_normal((5, 3, 6, 5)).astype(np.float32)
    x, xt = eg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    y, i = eg_F.max_pool2d(x, 2, return_indices=True)
    yt, it = torch.nn.functional.max_pool2d(xt, 2, return_indices=True)
    np.testing.assert_array_equal(y.detach().numpy(), yt.detach().numpy())
    np.testing.assert_array_equal(i.numpy(), it.numpy())
    y.backward(eg.tensor(g))
    yt.backward(torch.tensor(g))
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())
    # max_unpool puts each value back at its index: the same scatter, as a forward
    u = eg_F.max_unpool2d(y.detach(), i, 2)
    ut = torch.nn.functional.max_unpool2d(yt.detach(), it, 2)
    np.testing.assert_array_equal(u.numpy(), ut.numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_and_erf_split_match_one_thread_and_torch(dtype, monkeypatch):
    """erf-family kernels split into parts of the flat array, gelu's derivative too: the same
    bits as on one thread, and PyTorch's numbers (to the float32 kernel's accuracy)."""
    rng = np.random.default_rng(4)
    a = (rng.standard_normal((9, 7, 113)) * 3).astype(dtype)
    a[0, 0, :2] = [np.nan, -np.inf]
    g = rng.standard_normal(a.shape).astype(dtype)

    def run():
        x = eg.tensor(a, requires_grad=True)
        y = eg_F.gelu(x)
        y.backward(eg.tensor(g))
        erfs = [getattr(eg, name)(eg.tensor(a)).numpy() for name in ("erf", "erfc")]
        return [y.detach().numpy(), x.grad.numpy(), *erfs]

    monkeypatch.setattr(_threads, "_threads", 1)
    alone = run()
    monkeypatch.setattr(_threads, "_threads", 3)
    monkeypatch.setattr(_threads, "MIN_WORK", 0)
    split = run()
    for got, want in zip(split, alone):
        np.testing.assert_array_equal(got, want)
    xt = torch.tensor(a, requires_grad=True)
    yt = torch.nn.functional.gelu(xt)
    yt.backward(torch.tensor(g))
    ref = [yt.detach(), xt.grad, torch.erf(torch.tensor(a)), torch.erfc(torch.tensor(a))]
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == np.float32 else {"rtol": 1e-12, "atol": 1e-12}
    for got, want in zip(split, ref):
        np.testing.assert_allclose(got, want.numpy(), **tol)


@pytest.mark.parametrize("split", [False, True])
def test_relu_gradient_passes_through_nan_as_torch(split, monkeypatch):
    """PyTorch's relu gradient is zero where the output is <= 0, so it passes through a NaN."""
    if split:
        monkeypatch.setattr(_threads, "_threads", 3)
        monkeypatch.setattr(_threads, "MIN_WORK", 0)
    a = np.array([np.nan, -1.0, 2.0, 0.0, -0.0, np.inf, -np.inf] * 300, np.float32)
    x, xt = eg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    eg_F.relu(x).backward(eg.ones(a.shape))
    torch.relu(xt).backward(torch.ones(a.shape))
    np.testing.assert_array_equal(x.grad.numpy(), xt.grad.numpy())
    # and its own gradient again (create_graph keeps it an engine op)
    x.grad = xt.grad = None
    (gx,) = eg.autograd.grad(eg_F.relu(x).sum(), x, create_graph=True)
    (gt,) = torch.autograd.grad(torch.relu(xt).sum(), xt, create_graph=True)
    np.testing.assert_array_equal(gx.detach().numpy(), gt.detach().numpy())


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_softmax_rows_split_match_one_thread_and_torch(dtype, monkeypatch):
    rng = np.random.default_rng(5)
    a = (rng.standard_normal((6, 4, 33, 70)) * 4).astype(dtype)
    a[0, 0, 0, :3] = [np.inf, -np.inf, np.nan]
    a[1, 1, 1, :] = -np.inf  # a row of -inf: NaN, as in PyTorch

    def run():
        return eg.softmax(eg.tensor(a), -1).numpy()

    alone = run()
    monkeypatch.setattr(_threads, "_threads", 3)
    monkeypatch.setattr(_threads, "MIN_WORK", 0)
    split = run()
    np.testing.assert_array_equal(split, alone)
    want = torch.softmax(torch.tensor(a), -1).numpy()
    np.testing.assert_allclose(split, want, rtol=1e-6 if dtype == np.float32 else 1e-12, atol=1e-7)


def test_shares_follow_the_callers_floating_point_error_handling(forced_split):
    """numpy's error handling is per thread: a share on a helper thread gets the caller's."""
    import time

    a = -np.ones(100)
    names = set()

    def share(i):
        time.sleep(0.005)  # long enough that the helpers take shares too
        names.add(threading.current_thread().name)
        return np.log(a)

    with np.errstate(invalid="ignore"):  # no warning, in any thread
        assert all(np.isnan(r).all() for r in _threads.run(share, 6, work=1))
    assert len(names) > 1
    with np.errstate(invalid="raise"), pytest.raises(FloatingPointError):
        _threads.run(share, 6, work=1)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_layer_norm_rows_split_match_one_thread_and_torch(dtype, monkeypatch):
    rng = np.random.default_rng(6)
    a = (rng.standard_normal((5, 33, 48)) * 3 + 1).astype(dtype)
    w, b = rng.standard_normal(48).astype(dtype), rng.standard_normal(48).astype(dtype)
    g = rng.standard_normal(a.shape).astype(dtype)

    def run(lib, F):
        ins = [lib.tensor(v, requires_grad=True) for v in (a, w, b)]
        y = F.layer_norm(ins[0], (48,), ins[1], ins[2])
        y.backward(lib.tensor(g))
        return [y.detach().numpy()] + [t.grad.numpy() for t in ins]

    alone = run(eg, eg_F)
    monkeypatch.setattr(_threads, "_threads", 3)
    monkeypatch.setattr(_threads, "MIN_WORK", 0)
    split = run(eg, eg_F)
    for got, want in zip(split, alone):
        np.testing.assert_array_equal(got, want)
    tol = 1e-4 if dtype == np.float32 else 1e-10
    for got, want in zip(split, run(torch, torch.nn.functional)):
        np.testing.assert_allclose(got, want, rtol=tol, atol=tol)


def test_group_norm_rows_split_match_one_thread(monkeypatch):
    """group_norm takes its statistics over the last axis of an (N, G, -1) view: split too."""
    rng = np.random.default_rng(7)
    a = rng.standard_normal((4, 6, 9, 10)).astype(np.float32)
    g = rng.standard_normal(a.shape).astype(np.float32)

    def run(lib, F):
        x = lib.tensor(a, requires_grad=True)
        y = F.group_norm(x, 3)
        y.backward(lib.tensor(g))
        return [y.detach().numpy(), x.grad.numpy()]

    alone = run(eg, eg_F)
    monkeypatch.setattr(_threads, "_threads", 3)
    monkeypatch.setattr(_threads, "MIN_WORK", 0)
    split = run(eg, eg_F)
    for got, want in zip(split, alone):
        np.testing.assert_array_equal(got, want)
    for got, want in zip(split, run(torch, torch.nn.functional)):
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-4)
