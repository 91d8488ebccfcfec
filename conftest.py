"""Set-up shared by the test suite and the conformance suite, once per run.

Both suites start thousands of ``ragit`` processes. Each one loads RAGit's modules from their
cached bytecode when it exists; in an environment that sets ``PYTHONDONTWRITEBYTECODE`` (common
in containers and CI images) nothing ever writes that cache for an editable install, and every
process compiles every module it imports from source again (about 0.1 s of CPU per cold
command). The controller compiles the package once, before any worker starts; Python reads a
valid cache whatever that variable says.
"""

from __future__ import annotations

import compileall
import importlib.util
from pathlib import Path

import pytest


def pytest_configure(config: pytest.Config) -> None:
    if hasattr(config, "workerinput"):  # an xdist worker: the controller has done it
        return
    spec = importlib.util.find_spec("ragit")
    if spec is None or spec.origin is None:  # nothing of RAGit installed here
        return
    compileall.compile_dir(Path(spec.origin).parent, quiet=1)
