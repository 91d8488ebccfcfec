"""The zvec adapter: the one module that imports zvec (lazily, on first use).

One collection, ``chunks``, one row per unique chunk id. Its schema (measured on zvec 0.8.0,
2-core box, 17,800 chunks of the generator corpus x 256 dims; figures in docs/store.md):

========================  ==========================================================
``chunk_id``              the zvec primary key (document id), a string
``text``                  STRING, no index — the display text, returned by fetch
``search_en``             STRING, no index — the text the keyword index
                          (:mod:`ragit.store.terms`) splits into words; kept so the index
                          can be rebuilt from the rows
``search_cjk``            STRING, no index — the CJK runs the keyword index splits into
                          bigrams
``section_title``         STRING, no index
``heading_path``          STRING, no index
``token_count``           INT32, no index
``emb``                   VECTOR_FP32, FLAT index, COSINE metric
========================  ==========================================================

FLAT, not HNSW: zvec builds an HNSW graph only in ``optimize()`` (after ``flush`` the index
completeness is 0 and queries are brute force anyway); ``optimize`` costs 6.0 s at the default
m=50/ef=500 and 1.5 s at m=16/ef=100, while an exact FLAT query over 17.8k x 256 takes ~1 ms.
FLAT is exact (no recall loss) and adds no build time.

No zvec full-text index: its BM25 statistics are per segment of the whole store (so a
snapshot's scores moved as other commits were indexed), and building it was half of a full
ingest. Stores created before carry FTS indexes on the two search fields; nothing reads them,
and rows insert the same way into both.

Facts this module relies on (zvec 0.8.0): vector search returns cosine *distance* in
``Doc.score`` (smaller is closer; a zero vector has distance 1); one insert batch holds at
most 1,024 docs; ``topk`` is capped at 100,000; a read-only
open rewrites the ``*.proxima`` file (mtime every time); zvec's console logger writes to
*stdout*, so its log goes to a per-process file in the user cache instead (level from
``RAGIT_ZVEC_LOG``, default ``error``) and is summarised on stderr at exit — a count and the
first lines, never thousands of lines.

Every zvec exception is turned into :class:`SnapshotStoreUnavailable` here; messages of search
failures carry only the exception type, never the query text.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import re
import signal
import sys
from array import array
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

from ragit._lock import pid_alive
from ragit.contract.errors import RagitError, SnapshotStoreUnavailable
from ragit.contract.fs_errors import FilesystemUnusable
from ragit.store.rows import ChunkRow, StoredChunk
from ragit.store.space import nearly_full

MAX_BATCH = 1024
MAX_TOPK = 100_000
COLLECTION_NAME = "chunks"
VECTOR_FIELD = "emb"

_STORED_FIELDS = ["text", "section_title", "heading_path", "token_count"]
_SEARCH_FIELDS = ["search_en", "search_cjk"]
_lib: Any = None


def _zv() -> Any:
    """Import and initialize zvec once per process."""
    global _lib  # noqa: PLW0603 - a process-wide lazy import
    if _lib is None:
        from ragit._guard import check_zvec

        check_zvec()  # a zvec that cannot load ends the process cleanly, never natively
        import zvec  # noqa: TID251 - this is the zvec adapter

        level = os.environ.get("RAGIT_ZVEC_LOG", "error").upper()
        options: dict[str, Any] = {"log_level": getattr(zvec.LogLevel, level, zvec.LogLevel.ERROR)}
        log_dir = _log_dir()
        if log_dir is not None:
            # zvec's console logger writes to stdout (the envelope's and JSON-RPC's stream);
            # its own lines go to a per-process file, summarised at exit (zvec_log_summary).
            options.update(
                log_type=zvec.LogType.FILE,
                log_dir=str(log_dir),
                log_basename=_LOG_BASENAME.format(pid=os.getpid()),
                log_overdue_days=None,  # given, zvec prints it on stdout; RAGit prunes
            )
            atexit.register(_report_log)
        with contextlib.suppress(RuntimeError):  # already initialized in this process
            zvec.init(**options)
        _lib = zvec
    return _lib


_LOG_BASENAME = "zvec-{pid}.log"
LOG_SUMMARY_LINES = 3
_LOG_LINE = re.compile(r"^[IWEF]\d{8} ")


def _log_dir() -> Path | None:
    """Where this process's zvec log goes (user cache ``zvec-logs``); None: unwritable,
    zvec keeps its console logger. Logs of processes that are gone are removed here."""
    from ragit.workspace import user_cache_dir

    directory = user_cache_dir() / "zvec-logs"
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for old in directory.iterdir():
            match = re.match(r"zvec-(\d+)\.log", old.name)
            if match and not pid_alive(int(match.group(1))):
                old.unlink(missing_ok=True)
    except OSError:
        return None
    return directory


def _log_files() -> list[Path]:
    from ragit.workspace import user_cache_dir

    base = _LOG_BASENAME.format(pid=os.getpid())
    try:
        return sorted(
            p for p in (user_cache_dir() / "zvec-logs").iterdir() if p.name.startswith(base)
        )
    except OSError:
        return []


def zvec_log_summary() -> tuple[int, list[str]]:
    """How many lines zvec logged in this process, and the first :data:`LOG_SUMMARY_LINES`.

    zvec logs through glog: one file per severity, each holding its own and the higher
    severities' lines, so the fullest file holds them all."""
    best: tuple[int, list[str]] = (0, [])
    for path in _log_files():
        if path.is_symlink():
            continue
        count = 0
        first: list[str] = []
        try:
            with open(path, encoding="utf-8", errors="replace") as handle:
                for line in handle:
                    if not _LOG_LINE.match(line):
                        continue  # the file's own header
                    count += 1
                    if len(first) < LOG_SUMMARY_LINES:
                        first.append(line.rstrip()[:300])
        except OSError:
            continue
        if count > best[0]:
            best = (count, first)
    return best


def _report_log() -> None:
    """At exit: one summary on stderr when zvec logged anything, then drop the log."""
    count, first = zvec_log_summary()
    if count:
        shown = "; ".join(first)
        with contextlib.suppress(OSError, ValueError):
            sys.stderr.write(f"[ragit] zvec logged {count} line(s); first: {shown}\n")
            sys.stderr.flush()
    for path in _log_files():
        with contextlib.suppress(OSError):
            path.unlink()


PROBE_TIMEOUT_S = 300
_PROBE_PREFIX = "ragit-probe: "


def _probe_child(path: str) -> None:
    """The child of :meth:`Collection.probe`: exit 0 when the collection opens and counts."""
    try:
        collection = Collection.open(Path(path), read_only=False)
        try:
            collection.count()
        finally:
            collection.close()
    except SnapshotStoreUnavailable as exc:
        sys.stderr.write(f"{_PROBE_PREFIX}{exc.details.get('reason', exc.message)}\n")
        raise SystemExit(3) from None


def _fail(
    what: str, exc: BaseException | None = None, *, detail: bool = True, path: Path | None = None
) -> RagitError:
    """zvec's failure as ``SNAPSHOT_STORE_UNAVAILABLE``; when the file system of ``path`` is
    nearly full, as ``FILESYSTEM_UNUSABLE`` (``no-space``): zvec reports a full disk as a
    failed write of its own files."""
    if path is not None and nearly_full(path):
        return FilesystemUnusable(
            str(path), FilesystemUnusable.NO_SPACE, errno_name="ENOSPC", failed=f"zvec {what}"
        )
    reason = f"zvec {what} failed"
    if exc is not None:
        reason += f": {exc}" if detail else f" ({type(exc).__name__})"
    return SnapshotStoreUnavailable(None, reason)


def _schema(dimensions: int) -> Any:
    zv = _zv()
    return zv.CollectionSchema(
        COLLECTION_NAME,
        fields=[
            zv.FieldSchema("text", zv.DataType.STRING),
            zv.FieldSchema("search_en", zv.DataType.STRING),
            zv.FieldSchema("search_cjk", zv.DataType.STRING),
            zv.FieldSchema("section_title", zv.DataType.STRING),
            zv.FieldSchema("heading_path", zv.DataType.STRING),
            zv.FieldSchema("token_count", zv.DataType.INT32),
        ],
        vectors=[
            zv.VectorSchema(
                VECTOR_FIELD,
                zv.DataType.VECTOR_FP32,
                dimension=dimensions,
                index_param=zv.FlatIndexParam(metric_type=zv.MetricType.COSINE),
            )
        ],
    )


def _as_list(vector: Sequence[float]) -> Any:
    """A vector as zvec takes it: a list or a float ``array`` passes through uncopied (zvec
    narrows its items to float32 the way a C cast does), a numpy array via ``tolist``."""
    if isinstance(vector, list) or (isinstance(vector, array) and vector.typecode in "fd"):
        return vector
    tolist = getattr(vector, "tolist", None)
    return list(tolist()) if callable(tolist) else [float(x) for x in vector]


def _batches(items: Sequence[Any], size: int = MAX_BATCH) -> Iterable[Sequence[Any]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


class Collection:
    """An open zvec collection (read-write for the canonical store, read-only for copies)."""

    def __init__(self, handle: Any, path: Path, *, read_only: bool) -> None:
        self._c = handle
        self.path = path
        self.read_only = read_only

    def _fail(self, what: str, exc: BaseException, *, detail: bool = True) -> RagitError:
        return _fail(what, exc, detail=detail, path=self.path)

    # ------------------------------------------------------------ lifecycle

    @classmethod
    def create(cls, path: Path, dimensions: int) -> Collection:
        """Create a new collection at ``path`` (which must not exist) and open it read-write.

        Raises:
            SnapshotStoreUnavailable: zvec refused.
        """
        zv = _zv()
        try:
            handle = zv.create_and_open(str(path), _schema(dimensions), zv.CollectionOption())
        except Exception as exc:
            raise _fail("create", exc, path=path) from exc
        return cls(handle, path, read_only=False)

    @staticmethod
    def probe(path: Path) -> str | None:
        """Open the collection at ``path`` read-write in a child process, count its rows and
        close it: None when that works, else what went wrong. zvec can crash the process that
        opens damaged files (SIGSEGV during its journal recovery, SIGBUS on a full disk); in
        the child that ends the child only. Costs one interpreter start and zvec's import
        (0.3-0.5 s of CPU), so writers probe only a collection an interrupted write left
        behind (docs/faults.md).
        """
        import subprocess  # only here: a cold read never starts a child

        code = "import sys; from ragit.store._zvec import _probe_child; _probe_child(sys.argv[1])"
        env = {k: v for k, v in os.environ.items() if not k.startswith("RAGIT_FAULT_")}
        try:
            proc = subprocess.run(
                [sys.executable, "-c", code, str(path)],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                text=True,
                errors="replace",
                env=env,
                timeout=PROBE_TIMEOUT_S,
                check=False,
            )
        except subprocess.TimeoutExpired:
            return f"opening it did not finish within {PROBE_TIMEOUT_S} s"
        except OSError as exc:
            return f"the probe could not start ({exc.__class__.__name__})"
        if proc.returncode == 0:
            return None
        if proc.returncode < 0:
            try:
                name = signal.Signals(-proc.returncode).name
            except ValueError:
                name = f"signal {-proc.returncode}"
            return f"zvec crashed opening it ({name})"
        lines = [line for line in proc.stderr.splitlines() if line.startswith(_PROBE_PREFIX)]
        said = lines[-1][len(_PROBE_PREFIX) :] if lines else f"exit {proc.returncode}"
        return f"zvec cannot open it ({said[:300]})"

    @classmethod
    def open(cls, path: Path, *, read_only: bool) -> Collection:
        """Open an existing collection.

        Raises:
            SnapshotStoreUnavailable: missing, locked by another process, or unreadable.
        """
        zv = _zv()
        try:
            handle = zv.open(str(path), zv.CollectionOption(read_only=read_only))
        except Exception as exc:
            raise _fail("open", exc, path=path) from exc
        return cls(handle, path, read_only=read_only)

    def dimensions(self) -> int:
        """The vector dimensions fixed in the collection schema."""
        try:
            return int(self._c.schema.vector(VECTOR_FIELD).dimension)
        except Exception as exc:
            raise self._fail("schema", exc) from exc

    def flush(self) -> None:
        """Make every accepted write durable in the collection files."""
        try:
            self._c.flush()
        except Exception as exc:
            raise self._fail("flush", exc) from exc

    def optimize(self) -> None:
        """Merge the collection's segments into one (zvec keeps BM25 statistics per segment)."""
        try:
            self._c.optimize(_zv().OptimizeOption())
        except Exception as exc:
            raise self._fail("optimize", exc) from exc

    def segment_count(self) -> int:
        """Sealed data segments on disk: numbered directories holding a scalar column file."""
        try:
            return sum(
                1
                for p in self.path.iterdir()
                if p.is_dir() and p.name.isdigit() and any(p.glob("scalar.*.ipc"))
            )
        except OSError:
            return 0

    def close(self) -> None:
        """Flush (read-write) and release the collection's file lock; idempotent."""
        if self._c is None:
            return
        handle, self._c = self._c, None
        try:
            handle.close()
        except Exception as exc:
            raise self._fail("close", exc) from exc

    # ------------------------------------------------------------ writes

    def insert(self, rows: Sequence[ChunkRow]) -> None:
        """Insert one batch (≤1,024 rows); an id that already exists is left as it is.

        Raises:
            SnapshotStoreUnavailable: zvec rejected a row for another reason.
        """
        assert len(rows) <= MAX_BATCH
        zv = _zv()
        fast = self._fast_insert(rows)
        if fast is not None:
            statuses = fast
            for row, status in zip(rows, statuses, strict=True):
                if not status.ok() and "already exists" not in str(status):
                    raise self._fail(f"insert of {row.chunk_id}", RuntimeError(str(status)))
            return
        docs = [
            zv.Doc(
                id=row.chunk_id,
                vectors={VECTOR_FIELD: _as_list(row.vector)},
                fields={
                    "text": row.text,
                    "search_en": row.search_en,
                    "search_cjk": row.search_cjk,
                    "section_title": row.section_title,
                    "heading_path": row.heading_path,
                    "token_count": int(row.token_count),
                },
            )
            for row in rows
        ]
        try:
            statuses = self._c.insert(docs)
        except Exception as exc:
            raise self._fail("insert", exc) from exc
        for row, status in zip(rows, statuses, strict=True):
            if not status.ok() and "already exists" not in str(status):
                raise self._fail(f"insert of {row.chunk_id}", RuntimeError(str(status)))

    def _fast_insert(self, rows: Sequence[ChunkRow]) -> list[Any] | None:
        """Insert through zvec's native document type, as ``Collection.insert`` does after
        its Python conversion, without that conversion (a ``Doc`` per row whose vector is
        copied into a list by ``tolist``, a schema lookup per field and row: 40% of the
        insert's CPU at 17.8k rows, more than half of it at 176k). The field objects are
        looked up once per batch. None when this zvec lacks the pieces (the caller then
        takes the public path).

        Raises:
            SnapshotStoreUnavailable: zvec rejected the batch.
        """
        try:
            from zvec._zvec import _Doc  # noqa: TID251 - this is the zvec adapter

            native = self._c._obj
            schema = self._c.schema
            fields = {
                name: schema.field(name)._get_object()
                for name in ("text", "search_en", "search_cjk", "section_title", "heading_path")
            }
            count_field = schema.field("token_count")._get_object()
            vector_field = schema.vector(VECTOR_FIELD)._get_object()
        except (ImportError, AttributeError):
            return None
        docs = []
        try:
            for row in rows:
                doc = _Doc()
                doc.set_pk(row.chunk_id)
                doc.set_any("text", fields["text"], row.text)
                doc.set_any("search_en", fields["search_en"], row.search_en)
                doc.set_any("search_cjk", fields["search_cjk"], row.search_cjk)
                doc.set_any("section_title", fields["section_title"], row.section_title)
                doc.set_any("heading_path", fields["heading_path"], row.heading_path)
                doc.set_any("token_count", count_field, int(row.token_count))
                doc.set_any(VECTOR_FIELD, vector_field, _as_list(row.vector))
                docs.append(doc)
            return list(native.Insert(docs))
        except Exception as exc:
            raise self._fail("insert", exc) from exc

    def delete(self, ids: Sequence[str]) -> None:
        """Delete rows by id; ids that do not exist are ignored."""
        for batch in _batches(list(ids)):
            try:
                self._c.delete(list(batch))
            except Exception as exc:
                raise self._fail("delete", exc) from exc

    # ------------------------------------------------------------ reads

    def count(self) -> int:
        """Live rows (deleted rows excluded)."""
        try:
            return int(self._c.stats.doc_count)
        except Exception as exc:
            raise self._fail("stats", exc) from exc

    def all_ids(self) -> set[str]:
        """Every live chunk id (a streaming scan; ~40 ms for 18k rows)."""
        try:
            with self._c.iter_docs(output_fields=[], include_vector=False) as docs:
                return {str(doc.id) for doc in docs}
        except Exception as exc:
            raise self._fail("scan", exc) from exc

    def present(self, ids: Sequence[str]) -> set[str]:
        """Which of ``ids`` exist."""
        found: set[str] = set()
        for batch in _batches(list(ids)):
            try:
                found.update(
                    str(k)
                    for k in self._c.fetch(list(batch), output_fields=[], include_vector=False)
                )
            except Exception as exc:
                raise self._fail("fetch", exc) from exc
        return found

    def fetch(self, ids: Sequence[str]) -> dict[str, StoredChunk]:
        """Stored chunks by id; missing ids are absent from the result."""
        out: dict[str, StoredChunk] = {}
        for batch in _batches(list(ids)):
            try:
                docs = self._c.fetch(
                    list(batch), output_fields=_STORED_FIELDS, include_vector=False
                )
            except Exception as exc:
                raise self._fail("fetch", exc) from exc
            for key, doc in docs.items():
                fields = doc.fields or {}
                out[str(key)] = StoredChunk(
                    chunk_id=str(key),
                    text=str(fields.get("text", "")),
                    section_title=str(fields.get("section_title", "")),
                    heading_path=str(fields.get("heading_path", "")),
                    token_count=int(fields.get("token_count", 0)),
                )
        return out

    def fetch_rows(self, ids: Sequence[str]) -> list[ChunkRow]:
        """Stored rows by id, without their vectors (missing ids are left out)."""
        out: list[ChunkRow] = []
        for batch in _batches(list(ids)):
            try:
                docs = self._c.fetch(
                    list(batch),
                    output_fields=[*_STORED_FIELDS, *_SEARCH_FIELDS],
                    include_vector=False,
                )
            except Exception as exc:
                raise self._fail("fetch", exc) from exc
            for key, doc in docs.items():
                fields = doc.fields or {}
                out.append(
                    ChunkRow(
                        chunk_id=str(key),
                        text=str(fields.get("text", "")),
                        search_en=str(fields.get("search_en", "")),
                        search_cjk=str(fields.get("search_cjk", "")),
                        section_title=str(fields.get("section_title", "")),
                        heading_path=str(fields.get("heading_path", "")),
                        token_count=int(fields.get("token_count", 0)),
                        vector=(),
                    )
                )
        return out

    def fetch_vectors(self, ids: Sequence[str]) -> dict[str, list[float]]:
        """Stored (unit-normalized by zvec's cosine metric) vectors by id."""
        out: dict[str, list[float]] = {}
        for batch in _batches(list(ids)):
            try:
                docs = self._c.fetch(list(batch), output_fields=[], include_vector=True)
            except Exception as exc:
                raise self._fail("fetch", exc) from exc
            for key, doc in docs.items():
                vec = (doc.vectors or {}).get(VECTOR_FIELD)
                if vec is not None:
                    # zvec's Doc already holds a list of Python floats.
                    out[str(key)] = vec if isinstance(vec, list) else [float(x) for x in vec]
        return out

    def vector_search(self, vector: Sequence[float], topk: int) -> list[tuple[str, float]]:
        """Nearest chunks as ``(chunk_id, cosine distance)``, closest first."""
        zv = _zv()
        try:
            docs = self._c.query(
                zv.Query(field_name=VECTOR_FIELD, vector=_as_list(vector)),
                topk=min(topk, MAX_TOPK),
                output_fields=[],
            )
        except Exception as exc:
            raise self._fail("vector search", exc, detail=False) from exc
        return [(str(d.id), float(d.score)) for d in docs]
