"""Run the samples of a convolution's or pool's raw kernel on several threads at once.

numpy releases the GIL inside its copies, ufunc loops and BLAS calls, so threads that each take
a share of a batch's samples run in parallel. PyTorch runs its CPU ops on intra-op threads; this
is the engine's counterpart, for the kernels whose work divides by sample with no overlap in
what they write (each share writes its own samples' slice of the result, or returns a partial
sum that the caller adds in share order, which keeps results deterministic).

The calling thread takes shares too, pulling them from the same counter as the helpers: on a
busy machine where a helper gets no core, the caller does the remaining shares itself, so this is
never much slower than one thread. Threads: OMP_NUM_THREADS or OPENBLAS_NUM_THREADS when set
(as for PyTorch and numpy's BLAS), else the cores this process may run on, at most _MAX_THREADS.
"""

import itertools
import os
import threading

_MAX_THREADS = 8
_MIN_WORK = 1 << 16  # cells a call must touch before it is worth waking helpers for
_lock = threading.Lock()
_helpers = []  # (thread, event) of each started helper
_job = None  # the job being run: (fn, counter, n_shares, results, pending, errors, done)


def num_threads():
    for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        v = os.environ.get(var, "")
        if v.isdigit() and int(v) > 0:
            return min(int(v), _MAX_THREADS)
    try:
        n = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        n = os.cpu_count() or 1
    return max(1, min(n, _MAX_THREADS))


_THREADS = num_threads()


def _take(job):
    """Run shares of job until none is left; return whether this thread ran the last one."""
    fn, counter, n_shares, results, state, errors, done = job
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
    global _job
    while True:
        event.wait()
        event.clear()
        job = _job
        if job is not None:
            _take(job)


def _start_helpers(n):
    while len(_helpers) < n:
        event = threading.Event()
        t = threading.Thread(target=_helper, args=(event,), daemon=True, name="engine-conv")
        t.start()
        _helpers.append((t, event))


def split(n, per_sample, limit, work):
    """Shares (start, count) of n samples: two a thread for balance when work (cells touched)
    is worth threads, each share needing at most limit bytes of scratch (per_sample a sample)."""
    cap = max(1, limit // max(per_sample, 1))
    want = -(-n // (2 * _THREADS)) if _THREADS > 1 and work >= _MIN_WORK else n
    step = max(1, min(cap, want))
    return [(s0, min(step, n - s0)) for s0 in range(0, n, step)]


def run(fn, n_shares, work):
    """[fn(0), ..., fn(n_shares - 1)], the calls spread over the threads when work (cells the
    call touches) is large enough. fn must only write memory no other share writes. Give work 0
    for device arrays: cupy's current device and stream are per thread."""
    threads = min(_THREADS, n_shares)
    if threads <= 1 or work < _MIN_WORK or threading.current_thread().name == "engine-conv":
        return [fn(i) for i in range(n_shares)]
    global _job
    results = [None] * n_shares
    state = [n_shares, threading.Lock()]
    done = threading.Event()
    errors = []
    job = (fn, itertools.count(), n_shares, results, state, errors, done)
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
