"""The store's keyword index (``ragit-terms.sqlite``) and per-snapshot BM25 (docs/store.md, "The
keyword index")."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
from tests.snapshot._kit import RagitRepo, indexed_repo, private_cache, tree_state  # noqa: F401

from ragit.retrieve.keyword import best, bm25, snapshot_terms
from ragit.store.copies import copy_path
from ragit.store.rows import ChunkRow
from ragit.store.terms import MERGE_BLOCKS, TERMS_NAME, TermReader, TermWriter, chunk_key
from ragit.text.terms import cjk_terms, en_terms, query_terms

QUESTION = "idempotency keys retry"
REBUILD = "ragit repair --apply --action store-rebuild"


def _row(cid: str, text: str) -> ChunkRow:
    from ragit.text.scripts import cjk_runs

    return ChunkRow(
        chunk_id=cid,
        text=text,
        search_en=text,
        search_cjk=cjk_runs(text),
        section_title="",
        heading_path="",
        token_count=len(text.split()),
        vector=(),
    )


def _cid(n: int) -> str:
    return f"{n:016x}"


def test_words_follow_unicode_word_segmentation() -> None:
    assert en_terms("Our claim's speed, I'm on v1.28 of kubernetes.io") == [
        "our", "claim", "speed", "i'm", "on", "v1.28", "of", "kubernetes.io",
        "v1", "28", "kubernet", "io",
    ]  # fmt: skip
    assert en_terms("feature_gate kube-apiserver Queries") == [
        "feature_g",
        "kube",
        "apiserv",
        "queri",
        "featur",
        "gate",
    ]
    assert en_terms("x" * 41) == []
    # A word ends where a Hangul run begins: the particle is not part of the API name.
    assert en_terms("React.lazy로 state를 useFormStatus의") == [
        "react.lazi",
        "state",
        "useformstatus",
        "react",
        "lazi",
    ]
    assert cjk_terms("커밋을 작성 a 한") == ["커밋", "밋을", "작성"]
    assert query_terms(["a", "b", "a"]) == [("a", 2), ("b", 1)]


def test_a_joined_word_is_found_by_its_parts() -> None:
    """Implementation choice: words joined by ``.`` or ``_`` (``React.lazy``,
    ``generic_associated_types``, a ``Feature Name:`` line) are terms whole and by part, so
    a question naming the parts finds the identifier and the reverse."""
    assert en_terms("- Feature Name: generic_associated_types")[-3:] == [
        "generic",
        "associ",
        "type",
    ]
    assert set(en_terms("generic associated types")) <= set(en_terms("generic_associated_types"))
    assert {"react", "lazi"} <= set(en_terms("React.lazy"))
    assert en_terms("a_b x.y") == ["a_b", "x.i"]  # one-letter parts are no terms


def test_chunk_keys_are_the_ids_themselves() -> None:
    assert chunk_key("0000000000000001") == 1
    assert chunk_key("ffffffffffffffff") == -1
    assert chunk_key("not-a-hex-id") == chunk_key("not-a-hex-id")
    assert chunk_key("not-a-hex-id") != chunk_key("not-a-hex-id2")


def test_postings_are_written_once_and_readers_write_nothing(tmp_path: Path) -> None:
    writer = TermWriter.open(tmp_path)
    assert writer.add([_row(_cid(1), "alpha beta beta"), _row(_cid(2), "beta gamma")]) == 2
    assert writer.add([_row(_cid(1), "alpha beta beta")]) == 0  # already held
    writer.remove([_cid(2)])
    assert writer.missing([_cid(1), _cid(2)]) == [_cid(2)]
    assert writer.add([_row(_cid(2), "beta gamma")]) == 1  # live again, postings not repeated
    for n in range(3, 3 + MERGE_BLOCKS):  # enough writes of "beta" to merge its blocks
        writer.add([_row(_cid(n), f"beta filler{n}")])
    writer.remove([_cid(3)])
    assert writer.count() == 1 + MERGE_BLOCKS
    writer.close()

    before = tree_state(tmp_path)
    reader = TermReader.open(tmp_path)
    index = reader.chunks()
    by_ord = dict(zip(index.ords.tolist(), index.keys.tolist(), strict=True))
    post = reader.postings("en", "beta")
    keys = [by_ord[o] for o in post["ord"].tolist()]
    assert sorted(keys) == [1, 2, *range(3, 3 + MERGE_BLOCKS)]  # one posting per chunk
    assert dict(zip(keys, post["tf"].tolist(), strict=True))[1] == 2
    assert reader.missing(_cid(n) for n in range(1, 3 + MERGE_BLOCKS)) == [_cid(3)]
    reader.close()
    assert tree_state(tmp_path) == before


def test_one_write_of_many_rows_has_every_posting_once_in_ordinal_order(tmp_path: Path) -> None:
    """Implementation choice: a large write is split in slices of rows; each term still gets
    one block per write, its postings in ordinal order with their counts, across slices."""
    from ragit.store import terms as terms_module

    texts = [f"shared word{n % 7} 커밋을 {'again ' * (n % 3)}row{n}" for n in range(9000)]
    writer = TermWriter.open(tmp_path)
    assert writer.add([_row(_cid(n + 1), t) for n, t in enumerate(texts)]) == 9000
    writer.close()
    assert terms_module._INDEX_SLICE < 9000
    reader = TermReader.open(tmp_path)
    index = reader.chunks()
    ord_of = dict(zip(index.keys.tolist(), index.ords.tolist(), strict=True))
    for field, split in (("en", en_terms), ("cjk", cjk_terms)):
        want: dict[str, list[tuple[int, int]]] = {}
        for n, text in enumerate(texts):
            words = split(text)
            for term in dict.fromkeys(words):
                want.setdefault(term, []).append((ord_of[n + 1], words.count(term)))
        for term in ("shared", "word3", "again", "row8999", "커밋"):
            if term not in want:
                continue
            post = reader.postings(field, term)
            assert list(zip(post["ord"].tolist(), post["tf"].tolist(), strict=True)) == want[term]
    assert list(index.len_en[index.keys.argsort()][:3]) == [len(en_terms(t)) for t in texts[:3]]
    reader.close()


def test_bm25_depends_only_on_the_snapshot(tmp_path: Path) -> None:
    """The same snapshot scores identically whatever else the index holds, in any order."""
    docs = {_cid(n): f"writer lock {'store ' * (n % 3)}snapshot {n}" for n in range(1, 9)}
    small = tmp_path / "small"
    large = tmp_path / "large"
    for root, extra in ((small, 0), (large, 200)):
        root.mkdir()
        writer = TermWriter.open(root)
        writer.add([_row(_cid(1000 + n), "writer writer lock other") for n in range(extra)])
        writer.add([_row(cid, text) for cid, text in reversed(docs.items())])
        writer.close()

    def scores(root: Path) -> list[tuple[str, float]]:
        reader = TermReader.open(root)
        st = snapshot_terms(reader, frozenset(docs), object(), "sha")
        s = bm25(reader, st, "en", query_terms(en_terms("writer lock store"))).chunk
        ranked = best(st, s, 5)
        out = [(cid, s[list(st.ids).index(cid)]) for cid in ranked]
        reader.close()
        return out

    assert scores(small) == scores(large)


def test_a_store_without_a_keyword_index_is_a_typed_error_and_doctor_names_the_rebuild(
    tmp_path: Path,
) -> None:
    """A store written before the keyword index existed: never an empty ``ok``."""
    repo = indexed_repo(tmp_path, "docs-basic")
    before = repo.ragit("query", QUESTION, "--format", "json").data["hits"]
    meta = json.loads((repo.ws.store_dir / "meta.json").read_text(encoding="utf-8"))
    (copy_path(repo.ws, meta["storeId"], meta["generation"]) / TERMS_NAME).unlink()
    (repo.ws.store_dir / "chunks" / TERMS_NAME).unlink()

    run = repo.ragit("query", QUESTION, "--format", "json")
    assert run.code == 3, run.output
    assert run.error["code"] == "SNAPSHOT_STORE_UNAVAILABLE"
    assert REBUILD in json.dumps(run.error)

    report, error = repo.doctor()
    failed = {c["name"]: c.get("recovery") for c in report["checks"] if not c["ok"]}
    assert failed.get("store.keyword-index") == REBUILD, failed
    assert error is not None and error.recovery == REBUILD
    fix = repo.ragit(*shlex.split(REBUILD)[1:])
    assert fix.code == 0, fix.output
    report, error = repo.doctor()
    assert error is None, [c for c in report["checks"] if not c["ok"]]
    after = repo.ragit("query", QUESTION, "--format", "json").data["hits"]
    assert after == before


def test_the_next_writer_indexes_what_the_keyword_index_lacks(tmp_path: Path) -> None:
    """A store published by a RAGit without the keyword index (its fingerprint names no
    index file): the next ingest indexes every stored row."""
    from ragit.store.meta import read_meta, write_meta
    from ragit.store.publishing import canonical_digest

    repo = indexed_repo(tmp_path, "docs-basic")
    s = repo.head()
    before = repo.query(QUESTION, top_k=5)["hits"]
    (repo.ws.store_dir / "chunks" / TERMS_NAME).unlink()
    meta = read_meta(repo.ws)
    assert meta is not None
    write_meta(
        repo.ws, meta.evolve(extra={**meta.extra, "canonicalDigest": canonical_digest(repo.ws)})
    )
    repo.commit({"docs/notes/extra.md": "# Extra\n\nAn unrelated note about tea.\n"}, "extra")
    repo.ingest()
    assert repo.query(QUESTION, at=s, top_k=5)["hits"] == before
    report, error = repo.doctor()
    assert error is None, [c for c in report["checks"] if not c["ok"]]


@pytest.mark.parametrize("field", ["en", "cjk", "ko"])
def test_an_unknown_term_scores_nothing(tmp_path: Path, field: str) -> None:
    writer = TermWriter.open(tmp_path)
    writer.add([_row(_cid(1), "alpha 커밋")])
    writer.close()
    reader = TermReader.open(tmp_path)
    assert len(reader.postings(field, "zzz")) == 0
    reader.close()


def _stamp_other_rules(path: Path) -> None:
    import sqlite3

    con = sqlite3.connect(path)
    con.execute("UPDATE info SET value='layout-1/terms-1' WHERE key='version'")
    con.commit()
    con.close()


def test_an_index_of_other_rules_is_refused_by_readers_and_emptied_by_writers(
    tmp_path: Path,
) -> None:
    """Readers never score with statistics of text split another way; the writer starts the
    index over (its store writer then indexes every stored row again)."""
    from ragit.contract.errors import SnapshotStoreUnavailable

    writer = TermWriter.open(tmp_path)
    writer.add([_row(_cid(1), "alpha")])
    writer.close()
    _stamp_other_rules(tmp_path / TERMS_NAME)
    with pytest.raises(SnapshotStoreUnavailable, match="version 'layout-1/terms-1'"):
        TermReader.open(tmp_path)
    writer = TermWriter.open(tmp_path)
    assert writer.count() == 0
    assert writer.missing([_cid(1)]) == [_cid(1)]
    writer.add([_row(_cid(1), "alpha")])
    writer.close()
    reader = TermReader.open(tmp_path)
    assert len(reader.postings("en", "alpha")) == 1
    reader.close()


def test_a_store_indexed_under_older_term_rules_is_reindexed_by_the_next_ingest(
    tmp_path: Path,
) -> None:
    """An upgrade that changes how text is split into terms (``state를`` is ``state`` +
    a particle since terms-2): queries name the recovery until a writer re-indexes; the next
    ingest re-indexes every stored row and the answers are the ones a fresh index gives."""
    repo = indexed_repo(tmp_path, "docs-basic")
    s = repo.head()
    fresh = repo.query(QUESTION, top_k=5)["hits"]
    meta = json.loads((repo.ws.store_dir / "meta.json").read_text(encoding="utf-8"))
    for where in (
        copy_path(repo.ws, meta["storeId"], meta["generation"]),
        repo.ws.store_dir / "chunks",
    ):
        _stamp_other_rules(where / TERMS_NAME)
    # As the older RAGit published it: its fingerprint names the files as they are.
    from ragit.store.meta import read_meta, write_meta
    from ragit.store.publishing import canonical_digest

    meta_now = read_meta(repo.ws)
    assert meta_now is not None
    write_meta(
        repo.ws,
        meta_now.evolve(extra={**meta_now.extra, "canonicalDigest": canonical_digest(repo.ws)}),
    )
    run = repo.ragit("query", QUESTION, "--format", "json")
    assert run.code == 3 and run.error["code"] == "SNAPSHOT_STORE_UNAVAILABLE", run.output
    assert REBUILD in json.dumps(run.error)
    repo.commit({"docs/notes/extra.md": "# Extra\n\nAn unrelated note about tea.\n"}, "extra")
    repo.ingest()
    assert repo.query(QUESTION, at=s, top_k=5)["hits"] == fresh
    report, error = repo.doctor()
    assert error is None, [c for c in report["checks"] if not c["ok"]]


def test_a_damaged_index_is_a_typed_error(tmp_path: Path) -> None:
    from ragit.contract.errors import SnapshotStoreUnavailable

    (tmp_path / TERMS_NAME).write_bytes(b"not a database" * 100)
    for opener in (TermReader.open, TermWriter.open):
        with pytest.raises(SnapshotStoreUnavailable, match="store-rebuild"):
            opener(tmp_path)


def test_weak_evidence_needs_both_signals_weak() -> None:
    from ragit.retrieve.engine import Hit
    from ragit.retrieve.query import assess_evidence

    def hit(coverage: float, cosine: float | None) -> Hit:
        raw: dict[str, object] = {"coverage": coverage, "keyword": {}}
        if cosine is not None:
            raw["vector"] = {"cosine": cosine, "max": cosine}
        return Hit(
            "c", "d", "v", "p", "adr", "s", "h", "t", 1, 0.0, 0.0, 0.0, 1.0, 1.0, 0.2,
            "hybrid", 0.3, raw=raw,
        )  # fmt: skip

    assert assess_evidence([])["weak"]
    assert assess_evidence([hit(0.0, 0.9)])["weak"]  # none of the question's words
    assert assess_evidence([hit(0.2, 0.1)])["weak"]
    assert not assess_evidence([hit(0.2, 0.1), hit(0.2, 0.4)])["weak"]  # one close hit
    assert not assess_evidence([hit(0.5, 0.1)])["weak"]
    assert assess_evidence([hit(0.2, None)])["weak"]  # keyword mode
    assert assess_evidence([hit(0.5, None)]) == {"weak": False, "coverage": 0.5, "cosine": None}


def test_a_document_scores_its_chunks_together(tmp_path: Path) -> None:
    """Document-level BM25: a document whose chunks hold the question between them scores
    above one that holds part of it, and each chunk carries its document's score."""
    writer = TermWriter.open(tmp_path)
    writer.add(
        [
            _row(_cid(1), "alpha filler"),
            _row(_cid(2), "beta filler"),
            _row(_cid(3), "alpha gamma"),
            _row(_cid(4), "delta"),
        ]
    )
    writer.close()
    reader = TermReader.open(tmp_path)
    documents = [[_cid(1), _cid(2)], [_cid(3)], [_cid(4)]]
    st = snapshot_terms(reader, frozenset(_cid(n) for n in range(1, 5)), object(), "sha", documents)
    ks = bm25(reader, st, "en", query_terms(en_terms("alpha beta")))
    at = {str(cid): i for i, cid in enumerate(st.ids)}
    doc = {n: float(ks.document[at[_cid(n)]]) for n in range(1, 5)}
    assert doc[1] == doc[2] > doc[3] > doc[4] == 0.0
    chunk = {n: float(ks.chunk[at[_cid(n)]]) for n in range(1, 5)}
    assert chunk[4] == 0.0 and chunk[1] > 0 and chunk[2] > 0
    reader.close()


def _same_chunks(a: object, b: object) -> bool:
    import numpy as np

    fields = ("keys", "ords", "len_en", "len_cjk", "len_ko", "live")
    return all(np.array_equal(getattr(a, f), getattr(b, f)) for f in fields) and (
        getattr(a, "size") == getattr(b, "size")  # noqa: B009
    )


def test_a_reader_copy_carries_its_chunk_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Implementation choice: a reader copy is made with its chunk table beside the index, and
    readers load it instead of reading every chunk row from SQLite — the same table."""
    from ragit.store.terms import CHUNKS_NAME

    repo = indexed_repo(tmp_path, "docs-basic")
    meta = json.loads((repo.ws.store_dir / "meta.json").read_text(encoding="utf-8"))
    copy = copy_path(repo.ws, meta["storeId"], meta["generation"])
    assert (copy / CHUNKS_NAME).is_file()
    fresh = TermReader.open(copy)
    from_sql = fresh._read_table()
    fresh.close()

    def no_sql(_self: TermReader) -> object:
        raise AssertionError("the chunk table was read from SQLite")

    before = tree_state(copy)
    monkeypatch.setattr(TermReader, "_read_table", no_sql)
    reader = TermReader.open(copy)
    loaded = reader.chunks()
    reader.close()
    monkeypatch.undo()
    import numpy as np

    table = np.stack(
        [loaded.keys, loaded.ords, loaded.len_en, loaded.len_cjk, loaded.len_ko, loaded.live], 1
    )
    assert np.array_equal(table, from_sql)
    assert tree_state(copy) == before  # readers write nothing
    assert repo.query(QUESTION, top_k=3)["hits"]


def test_a_chunk_table_that_does_not_match_its_index_is_not_used(tmp_path: Path) -> None:
    """Implementation choice: a chunk table stamped for another index (size, rules) is ignored."""
    import numpy as np

    from ragit.store.terms import CHUNKS_NAME

    writer = TermWriter.open(tmp_path)
    writer.add([_row(_cid(n), f"alpha beta {n}") for n in range(1, 6)])
    writer.close()
    reader = TermReader.open(tmp_path)
    reader.save_table()
    expected = reader.chunks()
    reader.close()
    path = tmp_path / CHUNKS_NAME
    data = np.load(path)
    data[1:, 2] += 7  # wrong lengths...
    data[0, 2] += 1  # ...under a stamp of another index size
    with open(path, "wb") as handle:
        np.save(handle, data)
    reader = TermReader.open(tmp_path)
    assert _same_chunks(reader.chunks(), expected)
    reader.close()


@pytest.mark.parametrize("told", ["all", "not-the-revived"])
def test_a_copys_chunk_table_is_derived_from_the_previous_copys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, told: str
) -> None:
    """Implementation choice: after a write that only inserted, the new copy's chunk table is the
    previous copy's with the inserted rows read again (a chunk indexed before and live again, new
    ones) — equal to reading every row. Told too little (a revived id left out), the counts
    disagree and every row is read."""
    import shutil

    import numpy as np

    from ragit.store.terms import CHUNKS_NAME

    before, after = tmp_path / "g1", tmp_path / "g2"
    before.mkdir()
    writer = TermWriter.open(before)
    writer.add([_row(_cid(n), f"alpha beta {n}") for n in range(1, 6)])
    writer.remove([_cid(3)])
    writer.close()
    reader = TermReader.open(before)
    reader.save_table()
    reader.close()
    shutil.copytree(before, after)
    (after / CHUNKS_NAME).unlink()
    writer = TermWriter.open(after)
    writer.add([_row(_cid(n), f"gamma {n}") for n in (3, 6, 7)])
    writer.close()

    reads: list[int] = []
    whole = TermReader._read_table

    def counted(self: TermReader) -> object:
        reads.append(1)
        return whole(self)

    monkeypatch.setattr(TermReader, "_read_table", counted)
    touched = [_cid(n) for n in ((3, 6, 7) if told == "all" else (6, 7))]
    reader = TermReader.open(after)
    reader.save_table(base=before, touched=touched)
    reader.close()
    assert reads == ([] if told == "all" else [1])
    monkeypatch.undo()
    reader = TermReader.open(after)
    loaded = reader._load_table()
    expected = reader._read_table()
    reader.close()
    assert loaded is not None
    assert np.array_equal(loaded, expected)
    assert expected[:, -1].tolist() == [1] * 7  # chunk 3 live again


def test_korean_morphemes_are_a_field_of_the_index(tmp_path: Path) -> None:
    """Implementation choice: the ``ko`` field holds a chunk's Korean morphemes beside its
    bigrams; a question word with another ending finds them by prefix, counted only where
    the snapshot's own chunks hold them."""
    from ragit.retrieve.keyword import held_by
    from ragit.text.morphemes import question_morphemes

    writer = TermWriter.open(tmp_path)
    writer.add([_row(_cid(1), "스레드가 종료됐다"), _row(_cid(2), "커밋을 작성했습니다")])
    writer.close()
    reader = TermReader.open(tmp_path)
    assert reader.postings("ko", "스레드").tolist() != []
    assert reader.postings("ko", "스레드가").tolist() == []  # the particle is not indexed
    both = snapshot_terms(reader, frozenset({_cid(1), _cid(2)}), object(), "sha")
    assert both.lengths["ko"].tolist() == [2.0, 2.0]
    only_second = snapshot_terms(reader, frozenset({_cid(2)}), object(), "sha")
    question = "스레드는 언제 종료되나요"
    assert question_morphemes(question, held_by(reader, both, "ko")) == ["스레드", "종료"]
    # The first chunk is not in this snapshot: its morphemes do not count.
    assert question_morphemes(question, held_by(reader, only_second, "ko")) == []
    ks = bm25(reader, both, "ko", query_terms(["스레드", "종료"]))
    assert best(both, ks.chunk, 5) == [_cid(1)]
    reader.close()


def test_an_index_of_the_previous_layout_is_made_again_by_the_next_writer(
    tmp_path: Path,
) -> None:
    """Implementation choice: an index written before the ``ko`` field (layout 1, terms-2)
    is refused by readers and made again, with every field, by the next writer."""
    import sqlite3

    from ragit.contract.errors import SnapshotStoreUnavailable

    con = sqlite3.connect(tmp_path / TERMS_NAME)
    con.executescript(
        "CREATE TABLE info(key TEXT PRIMARY KEY, value TEXT NOT NULL);"
        "CREATE TABLE chunk(ord INTEGER PRIMARY KEY, key INTEGER NOT NULL UNIQUE,"
        " len_en INTEGER NOT NULL, len_cjk INTEGER NOT NULL, live INTEGER NOT NULL);"
        "CREATE TABLE block(field INTEGER NOT NULL, term TEXT NOT NULL, seq INTEGER NOT NULL,"
        " data BLOB NOT NULL, PRIMARY KEY(field, term, seq)) WITHOUT ROWID;"
        "INSERT INTO info VALUES('version', 'layout-1/terms-2');"
        "INSERT INTO info VALUES('seq', '1');"
        f"INSERT INTO chunk VALUES(0, {chunk_key(_cid(1))}, 1, 0, 1);"
    )
    con.commit()
    con.close()
    with pytest.raises(SnapshotStoreUnavailable, match="version 'layout-1/terms-2'"):
        TermReader.open(tmp_path)
    writer = TermWriter.open(tmp_path)
    assert writer.count() == 0
    assert writer.add([_row(_cid(1), "커밋을 작성했습니다")]) == 1
    writer.close()
    reader = TermReader.open(tmp_path)
    assert reader.chunks().len_ko.tolist() == [2]
    assert len(reader.postings("ko", "커밋")) == 1
    reader.close()


def test_an_index_of_another_analyzer_is_emptied_by_writers(tmp_path: Path) -> None:
    """Implementation choice: morphemes of two analyzer versions are never mixed in one
    index; readers still read it (questions are not analysed)."""
    import sqlite3

    writer = TermWriter.open(tmp_path)
    writer.add([_row(_cid(1), "커밋을 작성했습니다")])
    writer.close()
    con = sqlite3.connect(tmp_path / TERMS_NAME)
    con.execute("UPDATE info SET value='kiwipiepy-0.1/model-0.1' WHERE key='analyzer'")
    con.commit()
    con.close()
    TermReader.open(tmp_path).close()
    writer = TermWriter.open(tmp_path)
    assert writer.count() == 0
    writer.close()
