"""Recall and false masks of secret masking, per rule, on the table of secret forms.

The table (``tests/security/data/secret_forms.json``) holds positives — a text, the
secrets in it and the rule label expected to mask them — and negatives: lines of real
prose and code (the RFC, KEP and Korean documentation corpora under ``../shared/``)
and hand-written look-alikes, which must come out unchanged.

A positive is *recalled* when every one of its secrets is gone from the masked text:
neither the secret nor any 7-character run of it past its first character remains
(a rule may keep a short recognizable prefix, never more). A negative is a *false
mask* when masking changes it at all.

    python scripts/secret_table.py                        # RAGit's rules
    python scripts/secret_table.py --detector detect-secrets
    python scripts/secret_table.py --corpora              # also: every line of the corpora
    python scripts/secret_table.py --json report.json

``--detector detect-secrets`` runs Yelp's detect-secrets (every plugin of its default
settings, with its default filters) over each case written to a markdown file — what
RAGit indexes — and masks every value it reports, so both are judged the same way.
``--corpora`` masks every line of the corpora and lists the lines that changed (with
RAGit's rules): the table's negatives are a sample of those lines.
Exit status 1 when RAGit's rules miss a positive or mask a negative.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
TABLE = ROOT / "tests" / "security" / "data" / "secret_forms.json"
SHARED = ROOT.parent / "shared"
CORPORA = (
    SHARED / "corpora" / "rust-rfcs" / "text",
    SHARED / "benchmarks" / "kep-dev-v1" / "corpus",
    SHARED / "benchmarks" / "ko-react-dev-v1" / "corpus",
    SHARED / "benchmarks" / "ko-rustbook-dev-v1" / "corpus",
)

# A masker returns the masked text and the labels of what it replaced.
Masker = Callable[[str], tuple[str, list[str]]]


def load_table(path: Path = TABLE) -> dict[str, list[dict[str, Any]]]:
    with path.open(encoding="utf-8") as fh:
        table: dict[str, list[dict[str, Any]]] = json.load(fh)
    return table


def leaked(masked: str, secret: str) -> bool:
    """Whether ``secret`` (or a 7-character run of it past its first character) survives."""
    if secret in masked:
        return True
    run = 7 if len(secret) >= 8 else max(2, len(secret) - 1)
    return any(secret[k : k + run] in masked for k in range(1, len(secret) - run + 1))


def ragit_masker() -> Masker:
    from ragit.security.masking import mask_text

    def mask(text: str) -> tuple[str, list[str]]:
        result = mask_text(text)
        return result.text, list(result.labels)

    return mask


def detect_secrets_masker() -> Masker:
    """detect-secrets' default plugins and filters over each case as a markdown file.

    A regex plugin reports only its pattern's first group (``ghp`` of a GitHub token),
    so each of its findings masks the whole match of the plugin's patterns on that
    line; the keyword and entropy plugins' values are masked as reported.
    """
    import re

    from detect_secrets import SecretsCollection
    from detect_secrets.core.plugins.util import get_mapping_from_secret_type_to_class
    from detect_secrets.settings import default_settings

    classes = get_mapping_from_secret_type_to_class()
    scratch = Path(tempfile.mkdtemp(prefix="secret-table-"))

    def mask(text: str) -> tuple[str, list[str]]:
        path = scratch / "case.md"
        path.write_text(text + "\n", encoding="utf-8")
        with default_settings():
            found = SecretsCollection()
            found.scan_file(str(path))
            secrets = [s for _, s in found]
        lines = text.split("\n")
        spans: list[tuple[int, int]] = []
        offsets = [0]
        for line in lines:
            offsets.append(offsets[-1] + len(line) + 1)
        for secret in secrets:
            line = lines[secret.line_number - 1]
            base = offsets[secret.line_number - 1]
            value = secret.secret_value or ""
            patterns: list[re.Pattern[str]] = list(
                getattr(classes.get(secret.type), "denylist", None) or []
            )
            matched = False
            for pattern in patterns:
                for match in pattern.finditer(line):
                    if value in match.group(0):
                        spans.append((base + match.start(), base + match.end()))
                        matched = True
            if not matched and value:
                index = line.find(value)
                while index != -1:
                    spans.append((base + index, base + index + len(value)))
                    index = line.find(value, index + 1)
        masked, pos = [], 0
        for begin, end in sorted(spans):
            if end <= pos:
                continue
            masked.append(text[pos : max(begin, pos)] + "***")
            pos = end
        masked.append(text[pos:])
        return "".join(masked), sorted({s.type for s in secrets})

    return mask


def evaluate(table: dict[str, list[dict[str, Any]]], mask: Masker) -> dict[str, Any]:
    """Recall per expected rule and per form, false masks per fired label, and the misses."""
    by_rule: dict[str, Counter[str]] = defaultdict(Counter)
    by_form: dict[str, Counter[str]] = defaultdict(Counter)
    missed: list[dict[str, Any]] = []
    for case in table["positives"]:
        masked, labels = mask(case["text"])
        hit = not any(leaked(masked, secret) for secret in case["secrets"])
        for bucket in (by_rule[case["rule"]], by_form[case["form"]]):
            bucket["cases"] += 1
            bucket["recalled"] += int(hit)
        if not hit:
            missed.append({"id": case["id"], "labels": labels, "masked": masked})
    false_by_label: Counter[str] = Counter()
    false_masks: list[dict[str, Any]] = []
    for case in table["negatives"]:
        masked, labels = mask(case["text"])
        if masked != case["text"] or labels:
            false_by_label.update(set(labels) or {"?"})
            false_masks.append({"id": case["id"], "labels": labels, "text": case["text"]})
    positives = len(table["positives"])
    recalled = positives - len(missed)
    return {
        "positives": positives,
        "recalled": recalled,
        "recall": recalled / positives if positives else 1.0,
        "negatives": len(table["negatives"]),
        "falseMasks": len(false_masks),
        "perRule": {rule: dict(c) for rule, c in sorted(by_rule.items())},
        "perForm": {form: dict(c) for form, c in sorted(by_form.items())},
        "falseMasksPerLabel": dict(sorted(false_by_label.items())),
        "missed": missed,
        "falseMaskCases": false_masks,
    }


def corpus_lines() -> Iterator[tuple[str, str]]:
    for root in CORPORA:
        if not root.is_dir():
            continue
        for path in sorted(root.rglob("*.md")):
            text = path.read_text(encoding="utf-8", errors="replace")
            for number, line in enumerate(text.splitlines(), 1):
                yield f"{root.parent.name}/{path.relative_to(root)}:{number}", line


def scan_corpora(mask: Masker) -> dict[str, Any]:
    lines = 0
    changed: list[dict[str, Any]] = []
    for source, line in corpus_lines():
        lines += 1
        masked, labels = mask(line)
        if masked != line:
            changed.append({"source": source, "labels": labels, "text": line.strip()[:160]})
    return {"lines": lines, "masked": changed}


def _print_report(name: str, report: dict[str, Any]) -> None:
    print(f"{name}: recall {report['recalled']}/{report['positives']} ({report['recall']:.1%}),")
    print(f"  false masks {report['falseMasks']}/{report['negatives']}")
    print(f"  {'rule':24} {'cases':>5} {'recalled':>8}")
    for rule, counts in report["perRule"].items():
        print(f"  {rule:24} {counts['cases']:5d} {counts.get('recalled', 0):8d}")
    print(f"  {'form':24} {'cases':>5} {'recalled':>8}")
    for form, counts in report["perForm"].items():
        print(f"  {form:24} {counts['cases']:5d} {counts.get('recalled', 0):8d}")
    for label, count in report["falseMasksPerLabel"].items():
        print(f"  false masks by {label}: {count}")
    for miss in report["missed"]:
        print(f"  missed {miss['id']}: {miss['labels']}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", type=Path, default=TABLE)
    parser.add_argument(
        "--detector",
        choices=["detect-secrets"],
        action="append",
        default=[],
        help="also evaluate a maintained detector library on the same table",
    )
    parser.add_argument("--corpora", action="store_true", help="mask every line of the corpora")
    parser.add_argument("--json", type=Path, help="write the full report here")
    args = parser.parse_args(argv)
    table = load_table(args.table)
    reports: dict[str, Any] = {"ragit": evaluate(table, ragit_masker())}
    _print_report("ragit", reports["ragit"])
    for detector in args.detector:
        reports[detector] = evaluate(table, detect_secrets_masker())
        _print_report(detector, reports[detector])
    if args.corpora:
        reports["corpora"] = scan_corpora(ragit_masker())
        print(
            f"corpora: {len(reports['corpora']['masked'])} of {reports['corpora']['lines']} "
            "lines masked"
        )
        for item in reports["corpora"]["masked"]:
            print(f"  {item['source']}: {item['labels']} {item['text']}")
    if args.json:
        args.json.write_text(
            json.dumps(reports, ensure_ascii=False, indent=2) + "\n", encoding="utf-8"
        )
    ours = reports["ragit"]
    return 0 if ours["recalled"] == ours["positives"] and ours["falseMasks"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
