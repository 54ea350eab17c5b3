"""Keep freed array memory in the process between steps (glibc's malloc settings).

numpy takes every array's memory from malloc. With glibc's defaults a training step's large
temporaries (a few MB each) come from the heap, and when the step frees them the heap's top is
given back to the kernel as soon as more than twice the largest freed block lies free there; the
next step then faults every page in again, zero-filled. For the encoder layer of
bench/engine.py that was about 3,500 page faults and 7 ms of kernel time a step, a quarter of the
step. Raising the trim threshold (and fixing the mmap threshold at glibc's own ceiling, which
setting any threshold by hand requires, as it turns glibc's sliding thresholds off) keeps that
memory mapped for the next step: the process holds up to _TRIM_BYTES of freed heap.

Applied once at import, on glibc only, and only when the user has set none of glibc's own
MALLOC_*_ variables for these thresholds (those then decide). Values are never affected.
"""

import ctypes
import os
import sys

_M_TRIM_THRESHOLD = -1  # glibc's mallopt parameter numbers (malloc.h)
_M_MMAP_THRESHOLD = -3
_TRIM_BYTES = 256 << 20
# arrays from this size on still get their own mapping, returned when freed (glibc refuses a
# larger mmap threshold on 64-bit: HEAP_MAX_SIZE / 2)
_MMAP_BYTES = 32 << 20
_USER_VARS = ("MALLOC_TRIM_THRESHOLD_", "MALLOC_MMAP_THRESHOLD_", "MALLOC_TOP_PAD_")

applied = False  # whether the thresholds were set (read by tests and benches)


def _apply():
    global applied
    if not sys.platform.startswith("linux") or any(v in os.environ for v in _USER_VARS):
        return
    try:
        libc = ctypes.CDLL(None)
        libc.gnu_get_libc_version  # noqa: B018 - glibc only (musl's mallopt does nothing)
        mallopt = libc.mallopt
    except (OSError, AttributeError):
        return
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    applied = bool(mallopt(_M_MMAP_THRESHOLD, _MMAP_BYTES)) and bool(
        mallopt(_M_TRIM_THRESHOLD, _TRIM_BYTES)
    )


_apply()
