"""The engine's intra-op threads: large kernels split their work over a small pool.

numpy releases the GIL inside its copies, ufunc loops and BLAS calls, so threads that each take
a share of a large kernel's work run in parallel; PyTorch runs its CPU ops on intra-op threads
the same way. Shares never overlap in what they write (each writes its own slice of the result,
or returns a partial that the caller combines in share order), so results do not depend on the
thread count or on which thread ran which share.

The calling thread takes shares too, pulling them from the same counter as the helpers: on a
busy machine where a helper gets no core, the caller does the remaining shares itself, so a
split call is never much slower than one thread. Calls below a size threshold run directly on
the caller (no locking, no wake-ups), and so does any call with device (cupy) arrays, whose
current device and stream belong to the calling thread.

The thread count follows PyTorch's: ``set_num_threads`` / ``get_num_threads``, and at import
OMP_NUM_THREADS or MKL_NUM_THREADS when set, else the cores this process may run on (at most
_MAX_DEFAULT). ``set_num_threads`` also sets numpy's BLAS threads (through threadpoolctl), as
torch.set_num_threads sets its own BLAS's.
"""

import itertools
import os
import threading

import numpy as np

_MAX_DEFAULT = 8
# cells (elements read or written) a call must touch before waking helpers is worth it. A
# share's numpy calls release the GIL, but the Python between them holds it, and waking a
# helper then handing the GIL back and forth costs 50-100 us on the VMs we measure on, while a
# cell costs 0.1 ns (relu) to about 1 ns (a max pool's taps) of one core. Measured at 2
# threads (bench/engine.py's LeNet-5 and encoder steps, docs/benchmarks.md): at 2**16 cells
# LeNet's relu went from 23 to 55-109 us and its pool from 253 to 430-695 us; at 2**22 neither
# model is slower than at one thread, and the encoder keeps its gain.
MIN_WORK = 1 << 22
_HELPER_NAME = "engine-intraop"

_lock = threading.Lock()
_helpers = []  # (thread, event) of each started helper
_job = None  # the job being run: (fn, counter, n_shares, results, state, errors, done, err)


def _from_env():
    for var in ("OMP_NUM_THREADS", "MKL_NUM_THREADS"):
        v = os.environ.get(var, "").strip()
        if v.isdigit() and int(v) > 0:
            return int(v)
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(n, _MAX_DEFAULT))


_threads = _from_env()


def get_num_threads():
    """The number of threads the engine's large kernels use (PyTorch's get_num_threads)."""
    return _threads


def set_num_threads(n):
    """Use n threads for the engine's large kernels and for numpy's BLAS (PyTorch's
    set_num_threads)."""
    global _threads
    if isinstance(n, bool) or not isinstance(n, (int, np.integer)):
        raise RuntimeError(f"set_num_threads expects an int, but got {type(n).__name__}")
    if n <= 0:
        raise RuntimeError("set_num_threads expects a positive integer")
    _threads = int(n)
    _set_blas_threads(_threads)


def _set_blas_threads(n):
    # threadpoolctl (scikit-learn's) knows every BLAS numpy may be built with; its limits hold
    # for the process until set again
    from threadpoolctl import threadpool_limits

    threadpool_limits(limits=n, user_api="blas")


def is_host(*arrays):
    """Whether every array is a numpy array (threads never touch device arrays)."""
    return all(a.__class__ is np.ndarray for a in arrays)


def worth(work):
    """Whether a call touching `work` cells is split over threads at the current count."""
    return _threads > 1 and work >= MIN_WORK and threading.current_thread().name != _HELPER_NAME


def ranges(n, work, grain=1):
    """[(start, stop), ...]: n items (multiples of grain, but the last) in two shares a thread
    when `work` is worth threads, else [(0, n)]."""
    if not worth(work) or n < 2 * grain:
        return [(0, n)]
    shares = min(2 * _threads, n // grain)
    step = -(-n // shares)
    step = -(-step // grain) * grain
    return [(s, min(s + step, n)) for s in range(0, n, step)]


def _take(job):
    """Run shares of job until none is left."""
    fn, counter, n_shares, results, state, errors, done, _ = job
    while True:
        i = next(counter)
        if i >= n_shares:
            return
        try:
            results[i] = fn(i)
        except BaseException as exc:  # noqa: BLE001 - handed to the caller, which raises it
            errors.append(exc)
        with state[1]:
            state[0] -= 1
            if state[0] == 0:
                done.set()


def _helper(event):
    while True:
        event.wait()
        event.clear()
        job = _job
        if job is not None:
            # numpy's floating-point error handling is per thread: the caller's holds (the
            # engine ignores overflow and invalid values, as PyTorch does)
            with np.errstate(**job[7]):
                _take(job)


def _start_helpers(n):
    while len(_helpers) < n:
        event = threading.Event()
        t = threading.Thread(target=_helper, args=(event,), daemon=True, name=_HELPER_NAME)
        t.start()
        _helpers.append((t, event))


def run(fn, n_shares, work):
    """[fn(0), ..., fn(n_shares - 1)], the calls spread over the threads when work (cells the
    call touches) is large enough. fn must only write memory no other share writes. Give work 0
    for device arrays."""
    threads = min(_threads, n_shares)
    if threads <= 1 or not worth(work):
        return [fn(i) for i in range(n_shares)]
    global _job
    results = [None] * n_shares
    state = [n_shares, threading.Lock()]
    done = threading.Event()
    errors = []
    job = (fn, itertools.count(), n_shares, results, state, errors, done, np.geterr())
    with _lock:  # one parallel job at a time; other callers run theirs alone
        busy = _job is not None
        if not busy:
            _job = job
            _start_helpers(threads - 1)
    if busy:
        return [fn(i) for i in range(n_shares)]
    try:
        for _, event in _helpers[: threads - 1]:
            event.set()
        _take(job)
        done.wait()
    finally:
        with _lock:
            _job = None
    if errors:
        raise errors[0]
    return results


def over_rows(fn, n, work, grain=1):
    """fn(start, stop) for shares of range(n), on the threads when work is large enough; the
    list of the results in share order."""
    parts = ranges(n, work, grain)
    if len(parts) == 1:
        return [fn(0, n)]
    return run(lambda i: fn(*parts[i]), len(parts), work)


def elementwise(kernel, out, *arrays):
    """kernel(out_part, *array_parts) over matching flat parts of C-contiguous numpy arrays of
    out's shape (scalars are passed whole), on the threads when large enough; returns out.
    kernel must write out_part only."""
    n = out.size
    work = n
    if not worth(work):
        kernel(out, *arrays)
        return out
    flat_out = out.reshape(-1)
    # arrays are split along with out; 0-d arrays and scalars go whole to every share
    flats = [a.reshape(-1) if isinstance(a, np.ndarray) and a.ndim else a for a in arrays]
    split = [isinstance(a, np.ndarray) and a.ndim > 0 for a in arrays]

    def share(s, e):
        kernel(flat_out[s:e], *(a[s:e] if cut else a for a, cut in zip(flats, split)))

    over_rows(share, n, work, grain=1024)
    return out


def can_split(*arrays):
    """Whether elementwise() may split these: numpy arrays, C-contiguous, of one shape."""
    shape = arrays[0].shape
    for a in arrays:
        if a.__class__ is not np.ndarray or a.shape != shape or not a.flags.c_contiguous:
            return False
    return True
