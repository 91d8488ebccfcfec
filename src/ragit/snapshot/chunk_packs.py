"""Chunk-id packs: the chunk ids of ``indexVersion`` 2 manifests (docs/store.md, "Manifests").

A pack is an immutable file ``.ragit/manifest/packs/<name>.ids`` holding chunk ids as 8-byte
big-endian integers back to back; ``<name>`` is the first 32 hex digits of the SHA-256 of its
bytes, so a pack is never rewritten with other content and a damaged or replaced pack is
detected on read. Each ``docs[].chunkIds`` entry of a version-2 manifest names a pack and a
position in it (``"<name>:17"``) or an inclusive run of positions (``"<name>:17-40"``): the
same entry means the same ids in every manifest. A new manifest reuses the packs its parent
commit's manifest names and adds one pack of the ids they lack, so an ingest that changes one
document writes a few bytes of ids; it starts from a single pack of its own ids when it would
name more than :data:`MAX_PACKS` packs or packs more than twice as long as its distinct ids.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from ragit._fs import atomic_write_bytes

MAX_PACKS = 8
ID_BYTES = 8
_REF = re.compile(r"([0-9a-f]{32}):(0|[1-9][0-9]*)(?:-(0|[1-9][0-9]*))?")
_REF_NAMES = re.compile(rb'"([0-9a-f]{32}):')


def pack_name(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def pack_path(directory: Path, name: str) -> Path:
    return directory / f"{name}.ids"


def read_pack(directory: Path, name: str) -> list[str]:
    """The ids of the pack ``name`` in ``directory``, as 16-hex-digit ids.

    Raises:
        ValueError: the pack is missing, unreadable, or not the bytes its name commits to.
    """
    try:
        data = pack_path(directory, name).read_bytes()
    except FileNotFoundError:
        raise ValueError(f"chunk-id pack {name} is missing") from None
    except OSError as exc:
        raise ValueError(f"chunk-id pack {name} is unreadable ({type(exc).__name__})") from exc
    if len(data) % ID_BYTES or pack_name(data) != name:
        raise ValueError(f"chunk-id pack {name} does not hold the ids its name commits to")
    text = data.hex()
    return [text[i : i + 16] for i in range(0, len(text), 16)]


class Packs:
    """Packs of one directory, each read and checked once."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._ids: dict[str, list[str]] = {}

    def ids(self, name: str) -> list[str]:
        """Raises ValueError as :func:`read_pack`."""
        ids = self._ids.get(name)
        if ids is None:
            ids = self._ids[name] = read_pack(self.directory, name)
        return ids

    def expand(self, refs: Sequence[object]) -> list[str]:
        """The chunk ids of one document's ``chunkIds`` entries.

        Raises:
            ValueError: a malformed entry, a position outside its pack, or a pack that does
                not read.
        """
        out: list[str] = []
        for ref in refs:
            match = _REF.fullmatch(ref) if type(ref) is str else None
            if match is None:
                raise ValueError(f"chunkIds entry {ref!r} is not a pack position or run")
            ids = self.ids(match[1])
            first = int(match[2])
            last = first if match[3] is None else int(match[3])
            if not first <= last < len(ids):
                raise ValueError(f"chunkIds entry {ref!r} is outside its pack")
            if first == last:
                out.append(ids[first])
            else:
                out.extend(ids[first : last + 1])
        return out


def base_packs(directory: Path, parent_raw: bytes | None) -> dict[str, list[str]]:
    """The packs a parent manifest's bytes name, with their ids; nothing when it is no
    version-2 manifest or one of its packs does not read."""
    if parent_raw is None:
        return {}
    packs = Packs(directory)
    try:
        return {
            name: packs.ids(name)
            for name in dict.fromkeys(m.decode() for m in _REF_NAMES.findall(parent_raw))
        }
    except ValueError:
        return {}


def _runs(refs: Iterable[tuple[str, int]]) -> list[str]:
    out: list[str] = []
    name, start, prev = "", -2, -2
    for pack, pos in refs:
        if pack == name and pos == prev + 1:
            prev = pos
            continue
        if start >= 0:
            out.append(f"{name}:{start}" if start == prev else f"{name}:{start}-{prev}")
        name, start, prev = pack, pos, pos
    if start >= 0:
        out.append(f"{name}:{start}" if start == prev else f"{name}:{start}-{prev}")
    return out


def pack_docs(
    directory: Path, docs: Sequence[Sequence[str]], base: dict[str, list[str]]
) -> list[list[str]]:
    """Write the pack ``docs`` need beyond the packs ``base`` (:func:`base_packs`); returns
    each document's ``chunkIds`` entries.

    The new pack is written (fsynced, renamed into place) before this returns, so a manifest
    published afterwards never names a pack that is not on disk.
    """
    distinct = dict.fromkeys(cid for chunk_ids in docs for cid in chunk_ids)
    index: dict[str, tuple[str, int]] = {}
    for name, ids in base.items():
        for pos, cid in enumerate(ids):
            index.setdefault(cid, (name, pos))
    fresh = [cid for cid in distinct if cid not in index]
    used = {index[cid][0] for cid in distinct if cid in index}
    if len(used) + bool(fresh) > MAX_PACKS or (
        sum(len(base[name]) for name in used) + len(fresh) > 2 * len(distinct) + 1024
    ):
        index, fresh = {}, list(distinct)
    if fresh:
        data = bytes.fromhex("".join(fresh))
        name = pack_name(data)
        path = pack_path(directory, name)
        try:
            present = path.read_bytes() == data
        except OSError:
            present = False
        if not present:
            directory.mkdir(parents=True, exist_ok=True)
            atomic_write_bytes(path, data)
        for pos, cid in enumerate(fresh):
            index[cid] = (name, pos)
    return [_runs(index[cid] for cid in chunk_ids) for chunk_ids in docs]
