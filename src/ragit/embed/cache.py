"""The embedding cache: ``<cache_dir>/v1/<namespaceId>/`` (contract §10, docs/embeddings.md).

Layout, one namespace per :class:`~ragit.embed.profile.EmbeddingProfile`::

    <cache_dir>/v1/<namespaceId>/namespace.json
    <cache_dir>/v1/<namespaceId>/entries/<sha1(normalized text)>.json

Entries use the original's flat layout and JSON shape, so a cache the original
RAGit filled for the same profile (same namespace id) is read, not duplicated.
A full-hit pass over 18k entries costs about as much in one flat directory as in
256 sharded ones (measured; ext4/xfs/APFS index large directories), and nothing
ever lists the directory: ``entryCount`` is kept in ``namespace.json``, recounted from the file
and written under the flock ``namespace.lock`` together with the entries (concurrent writers
neither lose nor double-count a creation).

The cache key is the SHA-1 of the text with CRLF turned into LF; no text is
stored. A valid entry is never rewritten (no hit counters: updating a hit would
rewrite a vector-sized file on every query); an unreadable one is replaced on
the next miss in ``readwrite`` mode. Writes are atomic (temp file
in the same directory, then rename) but not fsynced: a torn entry after a crash
is an unreadable entry, which is a miss.

Modes: ``readwrite`` (CLI), ``readonly`` (dry-runs, MCP: nothing is created,
touched or updated — not even ``namespace.json``), ``disabled``. Reading never
fails the caller: a corrupt entry, or one of another profile, another size or
with non-finite numbers, is a miss. A ``namespace.json`` written for another
profile makes the whole namespace foreign: every lookup misses and nothing is
written into it. A cache dir that resolves outside the repository (symlinks
followed) disables the cache; :meth:`EmbeddingCache.health` reports it.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
from array import array
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Literal

from ragit import _json
from ragit._fs import atomic_write_bytes
from ragit._lock import flocked
from ragit.embed.profile import EmbeddingProfile

CacheMode = Literal["readwrite", "readonly", "disabled"]

CACHE_LAYOUT = "v1"
SCHEMA_VERSION = 1
DEFAULT_CACHE_DIR = ".ragit/cache/embeddings"
PURGE_COMMAND = "ragit security purge --target cache"

LOCK_NAME = "namespace.lock"
LOCK_WAIT_S = 10.0

NamespaceState = Literal["absent", "ok", "foreign", "unreadable"]


def normalize_text(text: str) -> str:
    """The text a cache key and a provider see: CRLF line ends become LF."""
    return text.replace("\r\n", "\n")


def text_key(text: str) -> str:
    """The cache key of a text: SHA-1 hex of its normalized UTF-8 bytes."""
    return hashlib.sha1(normalize_text(text).encode("utf-8"), usedforsecurity=False).hexdigest()


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")


@dataclass(frozen=True)
class CacheCheck:
    """One ``doctor`` check about the cache."""

    name: str
    ok: bool
    detail: str
    recovery: str | None = None

    def as_dict(self) -> dict[str, Any]:
        return {"name": self.name, "ok": self.ok, "detail": self.detail, "recovery": self.recovery}


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _resolves_inside(paths: Iterable[Path], root: Path) -> bool:
    try:
        return all(_inside(p.resolve(), root) for p in paths)
    except (OSError, RuntimeError):  # a symlink loop
        return False


def _nearest_existing(path: Path) -> Path:
    probe = path
    while not probe.exists() and probe != probe.parent:
        probe = probe.parent
    return probe


class EmbeddingCache:
    """Vectors of one profile stored under the repository's cache dir."""

    def __init__(
        self,
        repo_root: Path,
        profile: EmbeddingProfile,
        mode: CacheMode,
        *,
        cache_dir: str | Path = DEFAULT_CACHE_DIR,
    ) -> None:
        self.profile = profile
        self.requested_mode: CacheMode = mode
        self.write_errors = 0
        self._cache_dir_raw = str(cache_dir)
        self._root = repo_root.resolve()
        base = Path(cache_dir)
        self.dir = base if base.is_absolute() else repo_root / base
        self.namespace_dir = self.dir / CACHE_LAYOUT / profile.namespace_id
        self.entries_dir = self.namespace_dir / "entries"
        self.namespace_file = self.namespace_dir / "namespace.json"
        self.dir_valid = _resolves_inside(
            (self.dir, self.namespace_dir, self.entries_dir), self._root
        )
        self.mode: CacheMode = mode if self.dir_valid else "disabled"
        self._namespace: dict[str, Any] | None = None
        self.namespace_state: NamespaceState = "absent"
        if self.mode != "disabled":
            self._load_namespace()
        self._dirs_ready = False

    # ------------------------------------------------------------ namespace

    def _expected_namespace(self) -> dict[str, Any]:
        p = self.profile
        return {
            "namespaceId": p.namespace_id,
            "provider": p.provider,
            "model": p.model,
            "version": p.version,
            "dimensions": p.dimensions,
            "baseUrl": p.base_url,
        }

    def _load_namespace(self) -> None:
        try:
            raw = self.namespace_file.read_bytes()
        except FileNotFoundError:
            self.namespace_state = "absent"
            return
        except OSError:
            self.namespace_state = "unreadable"
            return
        try:
            data = _json.loads(raw)
        except ValueError:
            self.namespace_state = "unreadable"
            return
        if not isinstance(data, dict) or data.get("schemaVersion") != SCHEMA_VERSION:
            self.namespace_state = "unreadable"
            return
        expected = self._expected_namespace()
        if any(data.get(k) != v for k, v in expected.items()):
            self.namespace_state = "foreign"
            return
        self._namespace = data
        self.namespace_state = "ok"

    @property
    def active(self) -> bool:
        """Whether lookups can hit at all."""
        return self.mode != "disabled" and self.namespace_state != "foreign"

    @property
    def writable(self) -> bool:
        """Whether this cache will store new vectors."""
        if self.mode != "readwrite" or self.namespace_state == "foreign":
            return False
        return os.access(_nearest_existing(self.entries_dir), os.W_OK)

    @property
    def entry_count(self) -> int:
        """Entries recorded in ``namespace.json`` (kept on write; never a directory listing)."""
        if self._namespace is None:
            return 0
        count = self._namespace.get("entryCount")
        return count if isinstance(count, int) and not isinstance(count, bool) else 0

    # ------------------------------------------------------------ entries

    def entry_path(self, key: str) -> Path:
        return self.entries_dir / f"{key}.json"

    def get(self, key: str) -> list[float] | None:
        """The cached vector for a text key, or None for any kind of miss."""
        if not self.active:
            return None
        try:
            with open(self.entries_dir / f"{key}.json", "rb") as handle:
                raw = handle.read()
            entry = _json.loads(raw)
        except (OSError, ValueError):
            return None
        return self._valid_vector(entry, key)

    def get_many(self, keys: Sequence[str]) -> dict[str, list[float]]:
        """Cached vectors by key; keys that miss are absent from the result."""
        out: dict[str, list[float]] = {}
        if not self.active:
            return out
        for key in keys:
            vector = self.get(key)
            if vector is not None:
                out[key] = vector
        return out

    def _valid_vector(self, entry: object, key: str) -> list[float] | None:
        if not isinstance(entry, dict):
            return None
        p = self.profile
        if (
            entry.get("schemaVersion") != SCHEMA_VERSION
            or entry.get("textHash") != key
            or entry.get("provider") != p.provider
            or entry.get("model") != p.model
            or entry.get("version") != p.version
            or entry.get("dimensions") != p.dimensions
            or entry.get("baseUrl") != p.base_url
        ):
            return None
        vector = entry.get("embedding")
        if not isinstance(vector, list) or len(vector) != p.dimensions:
            return None
        # array("d") converts in C and rejects anything but numbers; sum() then
        # propagates NaN and infinities.
        try:
            values = array("d", vector)
        except TypeError:
            return None
        if not math.isfinite(sum(values)):
            return None
        return values.tolist()

    def put_many(self, items: Iterable[tuple[str, list[float]]]) -> int:
        """Store vectors by key (readwrite only); returns how many entries were created.

        Best effort: an OSError stops writing for this call and is counted in
        ``write_errors``; it never reaches the caller.
        """
        if not self.writable:
            return 0
        items = list(items)
        if not items:
            return 0
        try:
            if not self._dirs_ready:
                self.entries_dir.mkdir(parents=True, exist_ok=True)
                self._dirs_ready = True
            # Entries and entryCount change under one lock, so concurrent writers (an ingest
            # and a query) neither lose nor double-count a creation.
            with flocked(self.namespace_dir / LOCK_NAME, wait_s=LOCK_WAIT_S):
                return self._put_locked(items)
        except (OSError, TimeoutError):
            self.write_errors += 1
            return 0

    def _put_locked(self, items: list[tuple[str, list[float]]]) -> int:
        created = 0
        now = _now()
        p = self.profile
        try:
            for key, vector in items:
                # Only misses are put, so an existing file is corrupt or of another
                # profile and is replaced; it was already counted.
                path = self.entries_dir / f"{key}.json"
                existed = path.exists()
                entry = {
                    "schemaVersion": SCHEMA_VERSION,
                    "cacheKey": f"{p.namespace_id}:{key}",
                    "provider": p.provider,
                    "model": p.model,
                    "version": p.version,
                    "dimensions": p.dimensions,
                    "baseUrl": p.base_url,
                    "textHash": key,
                    "embedding": vector,
                    "createdAt": now,
                    "updatedAt": now,
                    "lastHitAt": None,
                    "hitCount": 0,
                }
                self._write_atomic(path, json.dumps(entry, separators=(",", ":")).encode())
                created += not existed
        except OSError:
            self.write_errors += 1
        if created or self.namespace_state != "ok":
            self._write_namespace(created, now)
        return created

    def _write_namespace(self, created: int, now: str) -> None:
        # Under the lock: count from what is on disk now, not from what was read at open.
        self._load_namespace()
        if self.namespace_state == "ok" and self._namespace is not None:
            data = dict(self._namespace)
            count = self.entry_count + created
        else:
            # A new namespace, or an unreadable namespace.json of this profile:
            # count the entries once (rare, and only ever on write).
            data = {"createdAt": now}
            try:
                count = sum(1 for n in os.listdir(self.entries_dir) if n.endswith(".json"))
            except OSError:
                return
        data.update(self._expected_namespace())
        data["schemaVersion"] = SCHEMA_VERSION
        data["entryCount"] = count
        data["updatedAt"] = now
        try:
            self._write_atomic(
                self.namespace_file, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode()
            )
        except OSError:
            self.write_errors += 1
            return
        self._namespace = data
        self.namespace_state = "ok"

    @staticmethod
    def _write_atomic(path: Path, data: bytes) -> None:
        # Not fsynced: a torn entry after a crash is a miss. Mode as open() creates files.
        atomic_write_bytes(path, data, fsync=False, mode=0o666)

    # ------------------------------------------------------------ reporting

    def relative_dir(self) -> str:
        try:
            return self.dir.resolve().relative_to(self._root).as_posix()
        except ValueError:
            return self._cache_dir_raw

    def summary(self, *, timeout_ms: int | None = None) -> dict[str, Any]:
        """``status.embedding.cache`` (docs/embeddings.md); never lists entries."""
        spec = self.profile.spec
        return {
            "enabled": self.active and spec.cacheable,
            "mode": self.mode,
            "dir": self.relative_dir(),
            "namespaceId": self.profile.namespace_id,
            "entryCount": self.entry_count,
            "batchPolicy": spec.batch.as_dict(),
            "retryPolicy": spec.retry.as_dict(timeout_ms),
            "writable": self.writable and spec.cacheable,
            "namespaceReadable": self.namespace_state in ("ok", "absent"),
        }

    def health(self) -> list[CacheCheck]:
        """``doctor`` checks ``embedding.cache-dir`` and ``embedding.cache-namespace``.

        Reads only; never creates the cache.
        """
        checks: list[CacheCheck] = []
        if not self.dir_valid:
            checks.append(
                CacheCheck(
                    "embedding.cache-dir",
                    False,
                    f"invalid cache_dir: {self._cache_dir_raw} resolves outside the repository",
                    f"ragit config set embedding.cache_dir {DEFAULT_CACHE_DIR}",
                )
            )
        elif self.requested_mode == "disabled":
            checks.append(
                CacheCheck("embedding.cache-dir", True, "cache disabled by embedding.cache_enabled")
            )
        elif not os.access(_nearest_existing(self.entries_dir), os.W_OK):
            checks.append(
                CacheCheck(
                    "embedding.cache-dir",
                    False,
                    f"cache dir {self.relative_dir()} is not writable",
                    f"chmod -R u+w {self.relative_dir()}",
                )
            )
        else:
            checks.append(CacheCheck("embedding.cache-dir", True, f"{self.relative_dir()}"))

        state = self.namespace_state if self.dir_valid else "absent"
        if state == "foreign":
            checks.append(
                CacheCheck(
                    "embedding.cache-namespace",
                    False,
                    f"namespace {self.profile.namespace_id} holds another profile's namespace.json",
                    PURGE_COMMAND,
                )
            )
        elif state == "unreadable":
            checks.append(
                CacheCheck(
                    "embedding.cache-namespace",
                    False,
                    f"namespace {self.profile.namespace_id}: namespace.json is unreadable",
                    PURGE_COMMAND,
                )
            )
        elif state == "ok":
            checks.append(
                CacheCheck(
                    "embedding.cache-namespace",
                    True,
                    f"namespace {self.profile.namespace_id}: {self.entry_count} entries",
                )
            )
        else:
            checks.append(
                CacheCheck(
                    "embedding.cache-namespace",
                    True,
                    f"namespace {self.profile.namespace_id}: no entries yet",
                )
            )
        return checks
