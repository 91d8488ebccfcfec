"""The manifests `ragit log` reads: document records decoded once across a window.

A manifest as the writer emits it (compact JSON, its key order) is cut into document
records without a JSON parse; records shared byte for byte by consecutive snapshots are
decoded once (docs/history.md). Anything else is read the strict way
(:func:`ragit.ops.status.report.shared_manifest`), which raises the typed errors.

A decoded record is ``{path, documentId, versionId, docType, blobSha, chunkIds}`` with
``chunkIds`` a tuple of ids; a snapshot's chunks are the distinct ids of its records
plus ``chunkScopes.durable`` (docs/contract.md, "Snapshots and manifests"). In an
``indexVersion`` 2 manifest the entries of ``chunkIds`` name a chunk-id pack and positions in
it (:mod:`ragit.snapshot.chunk_packs`): the same bytes mean the same ids in every manifest, so
records are shared across versions-2 manifests as across version-1 ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragit import _json
from ragit.ops.status.report import shared_manifest
from ragit.snapshot.chunk_packs import Packs
from ragit.workspace import Workspace

if TYPE_CHECKING:
    from ragit.ops.status.report import SharedStore


@dataclass(frozen=True)
class Summary:
    """What `log` needs of a manifest: its document records, as keys of the shared decoder."""

    created_at: str
    keys: frozenset[bytes]
    # chunkScopes.durable: durable chunks of the snapshot that belong to no document entry
    loose: frozenset[str] = frozenset()


_HEAD = re.compile(
    rb'\{"indexVersion":([12]),"commitSha":"([0-9a-f]{40})",.*?"createdAt":"([^"\\]*)",'
    rb'.*?"docs":\[',
    re.DOTALL,
)
# One record of docs[] as the writer emits it, after its opening {"path": and with the
# separator that follows it.
_DOC = re.compile(
    rb'("(?:[^"\\]|\\.)*"),"documentId":"([^"\\]*)","versionId":"([^"\\]*)",'
    rb'"docType":"([^"\\]*)","blobSha":"([^"\\]*)","chunkIds":\[([^\]]*)\]\},'
)
_OPEN = b'{"path":'
# A content-defined cut between two records: after a last chunk id that ends in 0.
_GROUP_END = b'0"]},'
_GROUP_CUT = _GROUP_END + _OPEN
# Where docs[] ends (no JSON string can hold an unescaped quote).
_DOCS_END = b'],"chunkScopes":'
_LOOSE = re.compile(rb'\],"chunkScopes":\{"durable":\[([^\]]*)\]')


class Records:
    """Document records decoded once each, keyed by their bytes in the manifest.

    Consecutive snapshots share almost every document record byte for byte, so a window
    of 100 snapshots of 1,000 documents decodes about 2,000 records, not 100,000, and
    what changed between two snapshots is a difference of two sets of keys. A manifest is
    first cut into groups of about 16 records at content-defined points (a record whose
    last chunk id ends in ``0``); only groups not seen before are cut into records, so an
    unchanged stretch of documents costs one dictionary lookup.
    """

    def __init__(self) -> None:
        self.decoded: dict[bytes, dict[str, Any]] = {}
        self._groups: dict[bytes, tuple[bytes, ...]] = {}
        self._synthetic = 0
        # Where the chunk-id packs of local manifests are (None: the shared store's, which
        # never name packs), and the packs read from there.
        self.packs_dir: Path | None = None
        self._packs: Packs | None = None

    def parse(self, raw: bytes, sha: str) -> Summary:
        """The summary of one manifest's bytes (compact JSON in the writer's key order).

        Raises:
            ValueError: the bytes are not in that form; the caller reads the manifest
                the validated way.
        """
        head = _HEAD.match(raw)
        if head is None or head.group(2).decode() != sha:
            raise ValueError(sha)
        created = head.group(3).decode()
        packs: Packs | None = None
        if head.group(1) == b"2":
            if self.packs_dir is None:
                raise ValueError(sha)
            if self._packs is None or self._packs.directory != self.packs_dir:
                self._packs = Packs(self.packs_dir)
            packs = self._packs
        if raw.startswith(_DOCS_END, head.end()):
            return Summary(created, frozenset(), _loose(raw, head.end(), sha))
        groups = raw.split(_GROUP_CUT)
        last = len(groups) - 1
        cut = groups[last].find(_DOCS_END)
        if cut < 0:
            raise ValueError(sha)  # docs[] is not where the writer puts it: read it strictly
        parts: list[tuple[bytes, ...]] = []
        for i, group in enumerate(groups):
            if 0 < i < last:
                records = self._groups.get(group)
                if records is None:
                    text = _OPEN + group + _GROUP_END
                    records = self._groups[group] = self._cut(text, sha, packs)
            else:  # the first and last groups hold the header and the tail: never shared
                text = group[head.end() if i == 0 else 0 : cut if i == last else len(group)]
                text = (text if i == 0 else _OPEN + text) + (b"," if i == last else _GROUP_END)
                records = self._cut(text, sha, packs)
            parts.append(records)
        keys = frozenset(chain.from_iterable(parts))
        if len(keys) != sum(map(len, parts)):
            raise ValueError(sha)  # the same record twice: let the strict reader judge
        tail = raw.find(_DOCS_END, head.end())
        return Summary(created, keys, _loose(raw, tail, sha))

    def _cut(self, text: bytes, sha: str, packs: Packs | None) -> tuple[bytes, ...]:
        """``{"path":…]},{"path":…]},`` → its record keys, each decoded once."""
        pieces = text.split(_OPEN)
        if pieces[0] != b"":
            raise ValueError(sha)
        del pieces[0]
        for key in pieces:
            if key not in self.decoded:
                self.decoded[key] = _decode_doc(key, sha, packs)
        return tuple(pieces)

    def add(self, docs: list[dict[str, Any]]) -> frozenset[bytes]:
        """Keys for records read the strict way (never equal to a key of raw bytes)."""
        keys = []
        for doc in docs:
            self._synthetic += 1
            key = b"\0%d" % self._synthetic
            self.decoded[key] = doc
            keys.append(key)
        return frozenset(keys)


def _loose(raw: bytes, at: int, sha: str) -> frozenset[str]:
    """``chunkScopes.durable`` of a manifest whose ``docs[]`` ends at ``at``."""
    match = _LOOSE.match(raw, at)
    if match is None:
        raise ValueError(sha)
    return frozenset(_ids(match.group(1)))


def _ids(raw: bytes) -> tuple[str, ...]:
    """``"a","b"`` (chunk ids are hex: no escapes) → ``("a", "b")``."""
    return tuple(raw.decode().replace('"', "").split(",")) if raw.strip() else ()


def _decode_doc(key: bytes, sha: str, packs: Packs | None = None) -> dict[str, Any]:
    """One record; ``packs`` resolves the ``chunkIds`` entries of a version-2 manifest
    (ValueError when they do not resolve)."""
    match = _DOC.fullmatch(key)
    if match is None:
        raise ValueError(sha)
    path_raw, doc_id, version, doc_type, blob, ids = match.groups()
    path = _json.loads(path_raw) if b"\\" in path_raw else path_raw[1:-1].decode()
    return {
        "path": path,
        "documentId": doc_id.decode(),
        "versionId": version.decode(),
        "docType": doc_type.decode(),
        "blobSha": blob.decode(),
        "chunkIds": _ids(ids) if packs is None else tuple(packs.expand(_ids(ids))),
    }


def read_summary(
    ws: Workspace, sha: str, records: Records, shared: SharedStore | None = None
) -> Summary:
    """One manifest read for counting; its new records decoded.

    Anything unexpected falls back to :func:`load_manifest` (or the server's manifest
    parsed in full), which raises the typed error.
    """
    try:
        raw = shared.manifest(sha) if shared else ws.manifest_path(sha).read_bytes()
        if raw is None:
            raise ValueError(sha)
        records.packs_dir = None if shared else ws.chunk_packs_dir
        return records.parse(raw, sha)
    except (OSError, ValueError, UnicodeDecodeError):
        manifest = shared_manifest(ws, sha, shared)
        docs = [
            {
                "path": d.path,
                "documentId": d.document_id,
                "versionId": d.version_id,
                "docType": d.doc_type,
                "blobSha": d.blob_sha,
                "chunkIds": tuple(d.chunk_ids),
            }
            for d in manifest.docs
        ]
        loose = frozenset(manifest.chunk_scopes.durable)
        return Summary(manifest.created_at, records.add(docs), loose)
