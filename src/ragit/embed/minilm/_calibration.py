"""Texts whose activations size the int8 smoothing scales.

Activation outliers in BERT-style models sit in the same few channels for
almost any input, so a small, varied, fixed set is enough: it keeps the
build deterministic and needs no data from the user. The set mixes what a
knowledge repository holds: decision records, specs, code, Korean, short
queries and degenerate inputs. Changing it changes the int8 numerics, so
bump ``BUILDER_VERSION`` with it.
"""

from __future__ import annotations

CALIBRATION_TEXTS: tuple[str, ...] = (
    "",
    "x",
    "How do I roll back a failed deploy?",
    "why does the index rebuild after every commit",
    "# ADR 0007: Bind every index snapshot to a commit\n\n"
    "## Status\n\nAccepted.\n\n## Context\n\n"
    "Agents ask the retrieval tool the same question at different times and get different "
    "answers, because the index follows the working tree rather than history. Reviewers "
    "cannot reproduce what an agent saw when it made a change, and a stale index silently "
    "returns documents that were deleted two weeks ago. We considered rebuilding on every "
    "query, which is too slow for large repositories, and a file watcher, which misses "
    "changes made while the machine sleeps and cannot say which version it indexed.\n\n"
    "## Decision\n\n"
    "Each snapshot is built from the tree of one commit and stored under that commit's "
    "identifier. A query names a commit, or HEAD, and is answered from that snapshot or "
    "fails with a clear error naming the nearest indexed ancestor. Chunks are keyed by "
    "content, so unchanged documents are neither re-embedded nor stored twice.\n\n"
    "## Consequences\n\n"
    "Answers become reproducible and auditable. Ingest must run after commits, which a "
    "post-commit hook does; uncommitted edits are invisible until they are committed.",
    "Requirements for the export feature. The service MUST stream results larger than "
    "10 MB instead of buffering them; it SHOULD resume an interrupted transfer from the "
    "last acknowledged offset; it MAY compress payloads when the client advertises gzip. "
    "Latency budget: p95 under 300 ms for the first byte, measured at the load balancer. "
    "Out of scope: scheduled exports, per-field redaction, and formats other than CSV and "
    "JSON Lines. Open questions: do we need per-tenant rate limits, and who owns retention?",
    "fn publish(store: &mut Store, snapshot: Snapshot) -> Result<(), StoreError> {\n"
    "    let staged = store.stage(&snapshot)?;\n"
    "    if staged.rows() == 0 {\n"
    "        return Err(StoreError::Empty(snapshot.id.clone()));\n"
    "    }\n"
    "    store.swap(staged)?; // atomic rename of the staged directory\n"
    "    Ok(())\n"
    "}",
    "def chunk(text: str, limit: int = 256) -> list[str]:\n"
    '    """Split on headings, then on paragraphs that fit the limit."""\n'
    "    parts = re.split(r'^#{1,6} ', text, flags=re.MULTILINE)\n"
    "    return [p.strip() for p in parts if p.strip()][:limit]\n"
    "\n"
    "for i, piece in enumerate(chunk(open('README.md').read())):\n"
    "    print(f'{i:03d} {len(piece):5d} {piece[:40]!r}')",
    "이 문서는 검색 색인을 커밋에 고정하는 이유를 설명합니다. 에이전트가 같은 커밋에서 "
    "같은 질문을 하면 항상 같은 답을 받아야 합니다. 색인은 커밋이 만들어진 뒤에 훅이 "
    "갱신하며, 아직 커밋하지 않은 변경은 보이지 않습니다.",
    "RAGit의 query 명령은 --at HEAD 옵션과 --top-k 5를 받으며, 결과는 JSON envelope로 "
    "stdout에 출력됩니다. 오류는 stderr가 아니라 envelope의 error 필드에 담깁니다.",
    "- [x] migrate the settings table (owner: dana, due 2024-03-01)\n"
    "- [ ] remove the legacy `v1/export` endpoint after 3 releases\n"
    "- [ ] p99 > 2s on /search: investigate N+1 queries in `load_related()`\n"
    "| flag | default | effect |\n|---|---|---|\n| `--dry-run` | off | print the plan only |",
    "Error: connection refused (os error 111) while contacting http://127.0.0.1:11434/api/embed "
    "after 3 attempts; retry in 2.5 s. Caused by: tcp connect timed out. HINT: is the server up?",
)
