"""Manifests of indexVersion 2: chunk ids as runs of positions in chunk-id packs (docs/store.md,
"Manifests"). A written manifest reads back as exactly the chunk ids it was given, reuses its
parent's packs, starts over when reuse grows too long, and fails typed, never resolving to
other ids, when a pack is missing or damaged. Version 1 still reads, and ``log`` decodes both
forms to the same records."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from ragit.contract.errors import SnapshotManifestInvalid
from ragit.ops.history.records import Records
from ragit.snapshot import chunk_packs
from ragit.snapshot.manifest import (
    ChunkScopes,
    Manifest,
    ManifestDoc,
    ManifestEmbedding,
    load_manifest,
    parse_manifest,
    write_manifest,
)
from ragit.workspace import Workspace


def _cid(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _sha(n: int) -> str:
    return f"{n:040x}"


def _manifest(n: int, docs: dict[str, list[str]], parent: int | None = None) -> Manifest:
    return Manifest(
        index_version=2,
        commit_sha=_sha(n),
        parent_sha=None if parent is None else _sha(parent),
        created_at="2026-01-01T00:00:00.00Z",
        embedding=ManifestEmbedding(
            namespace_id="ns", provider="local-placeholder", model="m", dimensions=8
        ),
        docs=[
            ManifestDoc(
                path=path,
                document_id=_cid("doc" + path),
                version_id=_cid("ver" + path + ",".join(ids)),
                doc_type="adr",
                blob_sha=hashlib.sha1(path.encode()).hexdigest(),
                chunk_ids=ids,
            )
            for path, ids in docs.items()
        ],
        chunk_scopes=ChunkScopes(durable=[_cid("loose")]),
        artifact_entries=[],
    )


def _corpus(docs: int = 40, chunks: int = 6) -> dict[str, list[str]]:
    out = {f"docs/{d:03}.md": [_cid(f"{d}/{c}") for c in range(chunks)] for d in range(docs)}
    out["docs/000.md"].append(out["docs/001.md"][0])  # a chunk shared by two documents
    out["docs/002.md"].append(out["docs/002.md"][0])  # and one a document holds twice
    out["docs/empty.md"] = []
    return out


def _raw(ws: Workspace, n: int) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(ws.manifest_path(_sha(n)).read_bytes())
    return data


def _packs(data: dict[str, Any]) -> list[str]:
    """The packs a version-2 manifest names, in order of first use."""
    return list(dict.fromkeys(r.split(":")[0] for d in data["docs"] for r in d["chunkIds"]))


@pytest.fixture
def ws(tmp_path: Path) -> Workspace:
    return Workspace(tmp_path)


def test_a_written_manifest_reads_back_as_its_chunk_ids(ws: Workspace) -> None:
    manifest = _manifest(1, _corpus())
    write_manifest(ws, manifest)
    data = _raw(ws, 1)
    assert data["indexVersion"] == 2 and set(data) == set(json.loads(manifest.to_json_bytes()))
    [pack] = _packs(data)
    # doc 0 gives six ids and then doc 1's first: one run; doc 1 starts on that position
    assert [d["chunkIds"] for d in data["docs"][:3]] == [
        [f"{pack}:0-6"],
        [f"{pack}:6-11"],
        [f"{pack}:12-17", f"{pack}:12"],
    ]
    assert load_manifest(ws, _sha(1)).model_dump() == manifest.model_dump()


def test_the_self_contained_form_is_version_1_and_reads_as_the_same_snapshot(
    ws: Workspace,
) -> None:
    manifest = _manifest(1, _corpus())
    raw = manifest.to_json_bytes()
    assert json.loads(raw)["indexVersion"] == 1
    assert json.loads(raw)["docs"][0]["chunkIds"] == manifest.docs[0].chunk_ids
    ws.manifest_dir.mkdir(parents=True)
    ws.manifest_path(_sha(1)).write_bytes(raw)
    read = load_manifest(ws, _sha(1))
    assert [d.chunk_ids for d in read.docs] == [d.chunk_ids for d in manifest.docs]
    assert read.all_chunk_ids() == manifest.all_chunk_ids()


def test_a_child_manifest_reuses_its_parents_pack_and_adds_only_new_ids(ws: Workspace) -> None:
    docs = _corpus()
    write_manifest(ws, _manifest(1, docs))
    changed = dict(docs)
    changed["docs/005.md"] = [*docs["docs/005.md"][:3], _cid("new"), *docs["docs/005.md"][3:]]
    write_manifest(ws, child := _manifest(2, changed, parent=1))
    first, second = _raw(ws, 1), _raw(ws, 2)
    packs = _packs(second)
    assert packs[:1] == _packs(first) and len(packs) == 2
    assert (ws.chunk_packs_dir / f"{packs[1]}.ids").stat().st_size == 8
    unchanged = [d for d in second["docs"] if d["path"] != "docs/005.md"]
    assert unchanged == [d for d in first["docs"] if d["path"] != "docs/005.md"]
    assert load_manifest(ws, _sha(2)).model_dump() == child.model_dump()


def test_a_manifest_starts_over_when_reuse_would_name_too_many_packs(ws: Workspace) -> None:
    docs = _corpus(docs=3)
    write_manifest(ws, _manifest(1, docs))
    for n in range(2, chunk_packs.MAX_PACKS + 3):
        docs = {**docs, f"docs/00{n % 3}.md": [*docs[f"docs/00{n % 3}.md"], _cid(f"more {n}")]}
        write_manifest(ws, manifest := _manifest(n, docs, parent=n - 1))
        assert 1 <= len(_packs(_raw(ws, n))) <= chunk_packs.MAX_PACKS
        assert load_manifest(ws, _sha(n)).model_dump() == manifest.model_dump()
    assert len(_packs(_raw(ws, chunk_packs.MAX_PACKS + 1))) == 1


@pytest.mark.parametrize("damage", ["missing", "flipped", "truncated", "position"])
def test_a_missing_or_damaged_pack_is_invalid_never_other_chunks(
    ws: Workspace, damage: str
) -> None:
    write_manifest(ws, _manifest(1, _corpus()))
    path = ws.manifest_path(_sha(1))
    [name] = _packs(_raw(ws, 1))
    pack = ws.chunk_packs_dir / f"{name}.ids"
    if damage == "missing":
        pack.unlink()
    elif damage == "flipped":
        data = bytearray(pack.read_bytes())
        data[9] ^= 1
        pack.write_bytes(bytes(data))
    elif damage == "truncated":
        pack.write_bytes(pack.read_bytes()[:-3])
    else:
        path.write_bytes(
            path.read_bytes().replace(f'"{name}:0-6"'.encode(), f'"{name}:0-999"'.encode())
        )
    with pytest.raises(SnapshotManifestInvalid):
        load_manifest(ws, _sha(1))


def test_version_2_read_without_a_pack_directory_is_invalid(ws: Workspace) -> None:
    """The shared store's manifests never name packs: one that does is refused."""
    write_manifest(ws, _manifest(1, _corpus()))
    with pytest.raises(SnapshotManifestInvalid, match="chunk-id packs"):
        parse_manifest(_sha(1), ws.manifest_path(_sha(1)).read_bytes(), "postgres:x")


def test_log_records_of_version_2_decode_as_the_strict_read_does(ws: Workspace) -> None:
    """The fast path of `log` (records looked up under prefixes of a manifest's pack list)
    gives each manifest exactly the documents the validated read gives, across a chain of
    children, a start-over, a sibling with other new ids, and a version-1 manifest."""
    docs = _corpus(docs=60)
    chain = [(1, None, docs)]
    for n in range(2, 14):
        docs = {**docs, f"docs/{n:03}.md": [*docs[f"docs/{n:03}.md"][:2], _cid(f"edit {n}")]}
        chain.append((n, n - 1, docs))
    sibling = {**chain[4][2], "docs/030.md": [_cid("sibling")]}
    chain.append((20, 5, sibling))
    for n, parent, these in chain:
        write_manifest(ws, _manifest(n, these, parent))
    ws.manifest_path(_sha(21)).write_bytes(_manifest(21, docs, 13).to_json_bytes())
    records = Records()
    records.packs_dir = ws.chunk_packs_dir
    for n in [*(n for n, _p, _d in chain), 21]:
        summary = records.parse(ws.manifest_path(_sha(n)).read_bytes(), _sha(n))
        got = sorted(
            (d["path"], d["versionId"], tuple(d["chunkIds"]))
            for d in (records.decoded[k] for k in summary.keys)
        )
        strict = load_manifest(ws, _sha(n))
        assert got == sorted((d.path, d.version_id, tuple(d.chunk_ids)) for d in strict.docs)
        assert summary.loose == frozenset(strict.chunk_scopes.durable)
