"""The C allocator's settings the commands start with: big buffers kept for reuse.

Each camera frame allocates and frees the same few arrays of a few megabytes
(the rectified canvases, the change masks, the networks' blobs). glibc's
malloc gives freed blocks of that size back to the kernel and maps new ones
for the next frame, whose pages then fault in one by one, zeroed: on a
2-core machine that was about 45% of the referee's change mask (47 -> 26 ms)
and 15% of a decision (158 -> 133 ms, median). Blocks are served from the heap instead, and the
heap is trimmed only once far more is free than one frame uses; the peak
memory stays the same (the same buffers, reused).
"""

from __future__ import annotations

import ctypes

#: ``mallopt`` parameters (glibc's malloc.h)
_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
#: blocks up to this size come from the heap (glibc's own upper bound on 64-bit)
MMAP_THRESHOLD = 32 << 20
#: the heap is given back to the kernel only with this much free at its top
TRIM_THRESHOLD = 128 << 20


def keep_freed_memory() -> bool:
    """Keep freed frame buffers in the process for the next frame (see the module).

    Called once by each command's entry point, before any frame. False where the
    C library has no ``mallopt`` (not glibc: nothing changes, frames are just slower).
    """
    try:
        # the process's own symbols, the C library's among them (no search for its file)
        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes = (ctypes.c_int, ctypes.c_int)
    mallopt.restype = ctypes.c_int
    # (mallopt answers 1 when it took the value)
    mmap = int(mallopt(_M_MMAP_THRESHOLD, MMAP_THRESHOLD)) == 1
    trim = int(mallopt(_M_TRIM_THRESHOLD, TRIM_THRESHOLD)) == 1
    return mmap and trim
