"""pygit2's import without parsing the system's CA bundle, which RAGit never uses.

Importing pygit2 initialises libgit2's OpenSSL stream, which loads the default CA bundle
(about 150 certificates), and then ``pygit2.settings`` points libgit2 at the bundle again:
two full parses, a quarter of the import's instructions (about 105 of 410 million, 25–30 ms
of CPU) in every cold process that reads git. RAGit reads repositories on disk only; libgit2
never opens a TLS connection for it.

So, while pygit2 is imported, the CA file is named as absent and the CA directory of the
system (where OpenSSL looks certificates up one by one, by subject hash, when it verifies a
peer) is named instead: both initialisations then record the directory and read no
certificate. The environment is restored as soon as the import is done; a TLS connection
made through libgit2 later would verify against the certificates of that directory. Where
the system has no such directory the import runs unchanged.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator

_FILE = "SSL_CERT_FILE"
_DIR = "SSL_CERT_DIR"
_NO_FILE = "/dev/null/no-ca-bundle"  # never a file: /dev/null is no directory


@contextlib.contextmanager
def ca_bundle_unread() -> Iterator[None]:
    """Run the body (pygit2's first import) with the CA directory in place of the CA file."""
    if "pygit2" in sys.modules:
        yield
        return
    import ssl  # pygit2.settings imports it in any case

    capath = ssl.get_default_verify_paths().capath
    if not capath:
        yield
        return
    saved = {name: os.environ.get(name) for name in (_FILE, _DIR)}
    os.environ[_FILE] = _NO_FILE
    os.environ[_DIR] = capath
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
