"""Limiting the BLAS thread count around an encode call.

The numpy encoder runs two Python threads, each multiplying small matrices;
one OpenBLAS thread per caller scales 1.84x on two cores, while letting each
call fan out to two BLAS threads as well only adds contention. Setting
``OPENBLAS_NUM_THREADS`` works only before numpy is first imported, and in a
long-lived process (the MCP server, or anything that imported zvec) numpy is
usually loaded already. So the limit is applied at run time instead, through
the ``openblas_set_num_threads`` entry point of the OpenBLAS copy that the
numpy wheel bundles (found by its file name next to numpy and opened with
ctypes, which returns the already-loaded library), and restored afterwards.
When numpy uses another BLAS, ``threadpoolctl`` is used if it is installed;
otherwise the limit is skipped, which costs speed, never correctness.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib.util
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

_SET_NAMES = (
    "scipy_openblas_set_num_threads64_",
    "scipy_openblas_set_num_threads",
    "openblas_set_num_threads64_",
    "openblas_set_num_threads",
)
_GET_NAMES = tuple(name.replace("_set_", "_get_") for name in _SET_NAMES)
_LIB_PATTERNS = ("libscipy_openblas*", "libopenblas*")

# The thread count is process-wide, so overlapping limits must not interleave.
_lock = threading.Lock()


def _openblas_controls() -> tuple[Callable[[], int], Callable[[int], None]] | None:
    numpy_module = sys.modules.get("numpy")
    if numpy_module is None or numpy_module.__file__ is None:
        return None  # not cached: numpy may still be imported later
    return _find_controls(numpy_module.__file__)


@functools.lru_cache(maxsize=4)
def _find_controls(numpy_init: str) -> tuple[Callable[[], int], Callable[[int], None]] | None:
    package_dir = Path(numpy_init).parent
    # Linux wheels keep bundled libraries in numpy.libs/, macOS wheels in numpy/.dylibs/.
    search_dirs = (package_dir.parent / "numpy.libs", package_dir / ".dylibs")
    for directory in search_dirs:
        for pattern in _LIB_PATTERNS:
            for candidate in sorted(directory.glob(pattern)):
                controls = _controls_from(candidate)
                if controls is not None:
                    return controls
    return None


def _controls_from(path: Path) -> tuple[Callable[[], int], Callable[[int], None]] | None:
    try:
        lib = ctypes.CDLL(str(path))
    except OSError:
        return None
    for set_name, get_name in zip(_SET_NAMES, _GET_NAMES, strict=True):
        setter = getattr(lib, set_name, None)
        getter = getattr(lib, get_name, None)
        if setter is not None and getter is not None:
            return _bind(getter, setter)
    return None


def _bind(getter: Any, setter: Any) -> tuple[Callable[[], int], Callable[[int], None]]:
    getter.restype = ctypes.c_int
    getter.argtypes = []
    setter.restype = None
    setter.argtypes = [ctypes.c_int]

    def get() -> int:
        return int(getter())

    def set_(count: int) -> None:
        setter(count)

    return get, set_


@contextlib.contextmanager
def blas_threads(limit: int) -> Iterator[str]:
    """Run the body with at most ``limit`` BLAS threads; yields the method used."""
    with _lock:
        controls = _openblas_controls()
        if controls is not None:
            get, set_ = controls
            previous = get()
            set_(limit)
            try:
                yield "openblas"
            finally:
                set_(previous)
            return
        if importlib.util.find_spec("threadpoolctl") is not None:
            import threadpoolctl  # type: ignore[import-not-found,unused-ignore]

            with threadpoolctl.threadpool_limits(limits=limit, user_api="blas"):
                yield "threadpoolctl"
            return
        yield "none"
