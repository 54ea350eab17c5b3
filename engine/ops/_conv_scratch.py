"""Per-thread scratch buffers for the large temporaries of convolutions and pools.

On the machines we measured (VMs), a page touched for the first time costs about 2 us, so a
fresh 5 MB temporary costs milliseconds before any arithmetic, and glibc's allocator hands such
sizes back to the system when they are freed, so every call pays again. A scratch array is
reused by later calls instead. Callers must never return one (or a view of one) to their own
callers, nor keep one past the call: results are always fresh arrays.
"""

import threading

_LOCAL = threading.local()
# larger arrays are not kept: their work outweighs the page faults, and memory held for good
# should stay small
_KEEP_BYTES = 64 << 20


def scratch(m, name, shape, dtype):
    """An uninitialised array of this shape, shared with later calls asking for the same name
    (numpy only: cupy's memory pool already reuses device memory, so it gets a fresh array)."""
    if m.__name__ != "numpy":
        return m.empty(shape, dtype)
    bufs = getattr(_LOCAL, "bufs", None)
    if bufs is None:
        bufs = _LOCAL.bufs = {}
    size = 1
    for v in shape:
        size *= v
    if size * m.dtype(dtype).itemsize > _KEEP_BYTES:
        return m.empty(shape, dtype)
    key = (name, m.dtype(dtype).str)
    buf = bufs.get(key)
    if buf is None or buf.size < size:
        buf = bufs[key] = m.empty(size, dtype)
    return buf[:size].reshape(shape)
