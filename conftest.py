"""Set-up shared by the test suite and the conformance suite, once per run.

Both suites start thousands of ``ragit`` processes. Each one loads RAGit's modules from their
cached bytecode when it exists; in an environment that sets ``PYTHONDONTWRITEBYTECODE`` (common
in containers and CI images) nothing ever writes that cache for an editable install, and every
process compiles every module it imports from source again (about 0.1 s of CPU per cold
command). The controller compiles the package once, before any worker starts; Python reads a
valid cache whatever that variable says.

Many tests wait rather than compute: on a paused or killed writer, a server restart, a
fixed-length soak. With one xdist worker per CPU those waits leave a core idle, so
``-n auto``/``-n logical`` (what ``hatch test`` passes) start one worker more than there are
CPUs. Not more: each worker builds its own setup templates and PostgreSQL server, and on the
2-core machine four workers took 16% more CPU and 5% more time than two, three at least 4%
less time (docs/benchmarks.md, "The test suite").
"""

from __future__ import annotations

import compileall
import importlib.util
import os
from pathlib import Path

import pytest


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):  # an xdist worker: the controller has done it
        return
    spec = importlib.util.find_spec("ragit")
    if spec is None or spec.origin is None:  # nothing of RAGit installed here
        return
    compileall.compile_dir(Path(spec.origin).parent, quiet=1)


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return (cpus or 1) + 1
