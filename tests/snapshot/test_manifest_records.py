"""Manifests are read without pydantic when they are exactly what RAGit writes, and as
pydantic reads them otherwise: the two paths agree."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragit.contract.errors import SnapshotManifestInvalid, SnapshotSchemaUnsupported
from ragit.snapshot._manifest_check import CheckedManifest
from ragit.snapshot.manifest import _NOT_EXACT, INDEX_VERSION, Manifest, _exact, parse_manifest

SHA = "a" * 40
_BASE: dict[str, Any] = {
    "indexVersion": 1,
    "commitSha": SHA,
    "parentSha": "b" * 40,
    "createdAt": "2026-01-01T00:00:00.000Z",
    "embedding": {
        "namespaceId": "ns",
        "provider": "local-placeholder",
        "model": "placeholder-v1",
        "dimensions": 256,
    },
    "docs": [
        {
            "path": "docs/a.md",
            "documentId": "d1",
            "versionId": "v1",
            "docType": "adr",
            "blobSha": "c" * 40,
            "chunkIds": ["0123456789abcdef", "fedcba9876543210"],
        }
    ],
    "chunkScopes": {"durable": [], "session": ["s1"], "harness": [], "evidence": []},
    "artifactEntries": [{"artifactId": "x", "chunkIds": ["s1"]}],
}

# Paths into the manifest and the odd values put there: other JSON types, numeric
# strings, nulls, extra keys.
_PATHS = [
    ("indexVersion",),
    ("commitSha",),
    ("parentSha",),
    ("createdAt",),
    ("embedding",),
    ("embedding", "dimensions"),
    ("embedding", "provider"),
    ("docs",),
    ("docs", 0),
    ("docs", 0, "path"),
    ("docs", 0, "chunkIds"),
    ("docs", 0, "chunkIds", 0),
    ("chunkScopes",),
    ("chunkScopes", "session"),
    ("artifactEntries",),
    ("artifactEntries", 0),
]
_ODD = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-3, 300),
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from(["", "1", "256", "1.0", "x", SHA]),
    st.lists(st.sampled_from(["a", 1, None]), max_size=2),
    st.dictionaries(st.sampled_from(["k", "path"]), st.sampled_from(["v", 2]), max_size=2),
    st.just("<delete>"),
)


def _mutated(path: tuple[Any, ...], value: Any) -> dict[str, Any]:
    data = copy.deepcopy(_BASE)
    node: Any = data
    for step in path[:-1]:
        node = node[step]
    if value == "<delete>":
        if isinstance(node, dict):
            node.pop(path[-1], None)
        else:
            del node[path[-1]]
    else:
        node[path[-1]] = value
    return data


@settings(max_examples=400, deadline=None)
@given(path=st.sampled_from(_PATHS), value=_ODD, extra=st.booleans())
def test_a_manifest_read_without_pydantic_is_what_pydantic_reads(
    path: tuple[Any, ...], value: Any, extra: bool
) -> None:
    """Implementation choice: a manifest whose every value has exactly the JSON type RAGit
    writes is read without pydantic, and only then; the result equals pydantic's."""
    data = _mutated(path, value)
    if extra:
        data["futureKey"] = {"kept": True}
    fast = _exact(Manifest, data)
    if fast is _NOT_EXACT:
        return
    checked = CheckedManifest.model_validate(data).model_dump(mode="json", by_alias=True)
    assert fast.model_dump(by_alias=True) == checked


@settings(max_examples=200, deadline=None)
@given(path=st.sampled_from(_PATHS), value=_ODD)
def test_every_manifest_gets_pydantics_verdict(path: tuple[Any, ...], value: Any) -> None:
    """Contract-mandated (§5): a manifest missing a required field or holding a wrong type
    is SNAPSHOT_MANIFEST_INVALID; one pydantic accepts is read as pydantic reads it."""
    raw = json.dumps(_mutated(path, value)).encode()
    try:
        expected: Any = CheckedManifest.model_validate(json.loads(raw)).model_dump(
            mode="json", by_alias=True
        )
    except Exception:  # pydantic.ValidationError
        expected = SnapshotManifestInvalid
    try:
        got: Any = parse_manifest(SHA, raw, "m.json").model_dump(by_alias=True)
    except SnapshotManifestInvalid:
        got = SnapshotManifestInvalid
    except SnapshotSchemaUnsupported:  # a future indexVersion, however it is written
        assert (isinstance(value, int) and value > INDEX_VERSION) or (
            expected is not SnapshotManifestInvalid and expected["indexVersion"] > INDEX_VERSION
        )
        return
    if got is not SnapshotManifestInvalid and expected is not SnapshotManifestInvalid:
        assert got == expected
    elif expected is SnapshotManifestInvalid:
        assert got is SnapshotManifestInvalid
    else:  # parse_manifest adds its own rules (positive indexVersion, commitSha = the file,
        # and version 2 names chunk-id packs, which a read without a pack directory lacks)
        assert (
            expected["indexVersion"] < 1
            or expected["commitSha"] != SHA
            or expected["indexVersion"] == 2
        )


def test_what_ragit_writes_reads_back_byte_for_byte() -> None:
    """Implementation choice: parse then serialize is the identity on RAGit's own bytes."""
    raw = Manifest.to_json_bytes(parse_manifest(SHA, json.dumps(_BASE).encode(), "m.json"))
    assert parse_manifest(SHA, raw, "m.json").to_json_bytes() == raw


def test_reading_a_manifest_imports_no_pydantic(tmp_path: Path) -> None:
    """Implementation choice: a manifest RAGit wrote is read without importing pydantic."""
    path = tmp_path / "m.json"
    path.write_text(json.dumps(_BASE), encoding="utf-8")
    code = (
        "import sys; from pathlib import Path; "
        "from ragit.snapshot.manifest import parse_manifest; "
        f"m = parse_manifest({SHA!r}, Path({str(path)!r}).read_bytes(), 'm'); "
        "print(len(m.all_chunk_ids()), 'pydantic' in sys.modules)"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout
    assert out.split() == ["3", "False"]


def test_records_are_immutable() -> None:
    """Implementation choice: a parsed manifest is shared by every reader of the process."""
    manifest = parse_manifest(SHA, json.dumps(_BASE).encode(), "m.json")
    with pytest.raises(AttributeError):
        manifest.docs[0].path = "other.md"  # type: ignore[misc]
