"""gradcheck: compare the engine's analytical Jacobian with central finite differences."""

import warnings

import numpy as np

from .. import _device, _tensor


class GradcheckError(RuntimeError):
    pass


def _host(array):
    """The Jacobians are numpy arrays whatever device the inputs are on (cupy refuses to be
    copied into numpy implicitly)."""
    return _device.move(array, _device.CPU)


def _outputs(fn, inputs):
    out = fn(*inputs)
    return (out,) if isinstance(out, _tensor.Tensor) else tuple(out)


def _numerical(fn, inputs, k, out_index, eps):
    x = inputs[k]
    d = x._data  # perturbed in place at each element (a reshape of it may be a copy)
    n_out = _outputs(fn, inputs)[out_index]._data.size
    jac = np.zeros((d.size, n_out))
    # evaluated in the caller's grad mode, as PyTorch does: fn may depend on it (an in-place
    # write through a view makes its base require grad only with grad mode on)
    for i in range(d.size):
        at = np.unravel_index(i, d.shape)
        orig = d[at].item()
        d[at] = orig + eps
        plus = _host(_outputs(fn, inputs)[out_index]._data).astype(np.float64).reshape(-1)
        d[at] = orig - eps
        minus = _host(_outputs(fn, inputs)[out_index]._data).astype(np.float64).reshape(-1)
        d[at] = orig
        jac[i] = (plus - minus) / (2 * eps)
    return jac


def _analytical(fn, inputs, diff_idx, out_index):
    from . import grad  # at call time: this package's __init__ imports this module

    out = _outputs(fn, inputs)[out_index]
    n_out = out._data.size
    jacs = [np.zeros((inputs[k]._data.size, n_out)) for k in diff_idx]
    if not out._requires_grad:
        return jacs
    for j in range(n_out):
        seed = np.zeros(n_out, out._data.dtype)
        seed[j] = 1
        gs = grad(
            out,
            [inputs[k] for k in diff_idx],
            _tensor.wrap(_device.move(seed.reshape(out._data.shape), out.device)),
            retain_graph=True,
            allow_unused=True,
        )
        for col, g in zip(jacs, gs):
            if g is not None:
                col[:, j] = _host(g._data).astype(np.float64).reshape(-1)
    return jacs


def gradcheck(fn, inputs, *, eps=1e-6, atol=1e-5, rtol=1e-3, raise_exception=True, **_ignored):
    """True when every input's analytical gradient matches finite differences within tolerance."""
    inputs = (inputs,) if isinstance(inputs, _tensor.Tensor) else tuple(inputs)
    diff_idx = [
        k for k, x in enumerate(inputs) if isinstance(x, _tensor.Tensor) and x._requires_grad
    ]
    if not diff_idx:
        raise ValueError(
            "gradcheck expects at least one input tensor to require gradient, but "
            "none of the them have requires_grad=True."
        )
    for k in diff_idx:
        if inputs[k]._data.dtype != np.float64:
            warnings.warn(
                f"Input #{k} requires gradient and is not a double precision floating "
                "point. This check will likely fail if all the inputs are not of "
                "double precision floating point. ",
                UserWarning,
                stacklevel=2,
            )
    n_outputs = len(_outputs(fn, inputs))
    for o in range(n_outputs):
        analytical = _analytical(fn, inputs, diff_idx, o)
        for k, a in zip(diff_idx, analytical):
            numerical = _numerical(fn, inputs, k, o, eps)
            if not np.allclose(a, numerical, rtol=rtol, atol=atol):
                if not raise_exception:
                    return False
                raise GradcheckError(
                    f"Jacobian mismatch for output {o} with respect to input "
                    f"{k},\nnumerical:{numerical}\nanalytical:{a}\n"
                )
    return True


def gradgradcheck(
    fn,
    inputs,
    grad_outputs=None,
    *,
    eps=1e-6,
    atol=1e-5,
    rtol=1e-3,
    raise_exception=True,
    **_ignored,
):
    """gradcheck of the first derivatives: the gradient of fn's outputs (with `grad_outputs`,
    random ones that require grad when not given) with respect to its inputs, differentiated
    again by a create_graph backward."""
    from . import grad as autograd_grad  # at call time: as in _analytical

    inputs = (inputs,) if isinstance(inputs, _tensor.Tensor) else tuple(inputs)
    outputs = _outputs(fn, inputs)
    if grad_outputs is None:
        rng = np.random.default_rng(0)
        grad_outputs = tuple(
            _tensor.wrap(
                _device.move(rng.standard_normal(o._data.shape).astype(o._data.dtype), o.device),
                True,
            )
            for o in outputs
        )
    else:
        grad_outputs = (
            (grad_outputs,) if isinstance(grad_outputs, _tensor.Tensor) else tuple(grad_outputs)
        )
    n = len(inputs)
    diff = [k for k, x in enumerate(inputs) if isinstance(x, _tensor.Tensor) and x._requires_grad]

    def first_derivatives(*args):
        outs = _outputs(fn, args[:n])
        needed = [args[k] for k in diff]
        grads = autograd_grad(outs, needed, args[n:], create_graph=True, allow_unused=True)
        return tuple(g if g is not None else needed[i] * 0 for i, g in enumerate(grads))

    return gradcheck(
        first_derivatives,
        inputs + grad_outputs,
        eps=eps,
        atol=atol,
        rtol=rtol,
        raise_exception=raise_exception,
    )
