"""The ingest surface: repo path/glob validation and glob matching."""

from __future__ import annotations

import pytest

from ragit.contract.errors import InputInvalid
from ragit.snapshot.surface import (
    GlobSet,
    SurfaceMatcher,
    expand_braces,
    is_markdown,
    split_globs,
    validate_repo_glob,
    validate_repo_path,
)

DEFAULT_DOC_GLOBS = ["**/*.md", "**/*.mdx", "**/*.markdown"]
DEFAULT_INCLUDE = ["README.md", "docs/**"]
DEFAULT_EXCLUDE = [
    "**/.git/**",
    "**/.ragit/**",
    "**/node_modules/**",
    "**/dist/**",
    "**/coverage/**",
    "**/.next/**",
]


@pytest.mark.parametrize(
    ("value", "reason_part"),
    [
        ("", "empty"),
        ("   ", "empty"),
        ("/etc/passwd", "absolute"),
        ("C:/docs/a.md", "absolute"),
        ("~/notes.md", "home-relative"),
        ("docs/../secret.md", "'..'"),
        ("../outside.md", "'..'"),
        ("docs\\adr\\a.md", "backslash"),
        ("docs/a\x00.md", "control"),
        ("docs/a\n.md", "control"),
        ("docs/a\x7f.md", "control"),
        (".", "inside the repository"),
        ("./", "inside the repository"),
    ],
)
def test_invalid_repo_paths_are_input_invalid(value: str, reason_part: str) -> None:
    """Contract-mandated (contract §4: repo-relative, no '..', no control characters)."""
    with pytest.raises(InputInvalid) as caught:
        validate_repo_path(value, "paths[0]")
    assert caught.value.code == "INPUT_INVALID"
    assert caught.value.details["field"] == "paths[0]"
    assert reason_part in caught.value.details["reason"]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("docs/a.md", "docs/a.md"),
        ("./docs//adr/./a.md", "docs/adr/a.md"),
        ("docs/", "docs"),
        ("문서/용어집.md", "문서/용어집.md"),
        ("docs/..hidden/a.md", "docs/..hidden/a.md"),
    ],
)
def test_valid_repo_paths_are_normalized(value: str, expected: str) -> None:
    """Implementation choice: '.' and empty segments are dropped."""
    assert validate_repo_path(value, "path") == expected


@pytest.mark.parametrize(
    ("value", "reason_part"),
    [
        ("/docs/**", "absolute"),
        ("docs/**/../x.md", "'..'"),
        ("{docs,..}/x.md", "'..'"),
        ("docs\\*.md", "backslash"),
        ("docs/[a-z.md", "unclosed '['"),
        ("docs/{adr,prd.md", "unclosed '{'"),
        ("docs/adr}.md", "unmatched '}'"),
        ("docs/[a/b].md", "'/'"),
        ("!docs/drafts/**", "negated"),
        ("", "empty"),
        ("docs/\t*.md", "control"),
    ],
)
def test_invalid_globs_are_input_invalid(value: str, reason_part: str) -> None:
    """Contract-mandated (contract §4; docs/contract.md §6: invalid/unsafe globs rejected)."""
    with pytest.raises(InputInvalid) as caught:
        validate_repo_glob(value, "files")
    assert caught.value.details["field"] == "files"
    assert reason_part in caught.value.details["reason"]


def test_too_many_brace_expansions_are_rejected() -> None:
    """Implementation choice: brace expansion is bounded."""
    with pytest.raises(InputInvalid, match="expands"):
        validate_repo_glob("{a,b,c,d}{a,b,c,d}{a,b,c,d}{a,b,c,d,e}/*.md", "files")


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("docs/**/*.md", "docs/**/*.md"),
        ("./docs//*.md", "docs/*.md"),
        ("docs/", "docs/**"),
        ("docs/**/", "docs/**"),
    ],
)
def test_valid_globs_are_normalized(value: str, expected: str) -> None:
    """Implementation choice: a trailing '/' means everything below."""
    assert validate_repo_glob(value, "files") == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("docs/**/*.md", ["docs/**/*.md"]),
        ("docs/adr/*.md, docs/prd/*.md", ["docs/adr/*.md", "docs/prd/*.md"]),
        ("a.md,,b.md, ", ["a.md", "b.md"]),
        ("docs/{adr,prd}/*.md,README.md", ["docs/{adr,prd}/*.md", "README.md"]),
        ("", []),
    ],
)
def test_split_globs_splits_on_commas_outside_braces(value: str, expected: list[str]) -> None:
    """Contract-mandated (docs/contract.md §6: comma-separated --files); brace awareness is a
    choice."""
    assert split_globs(value) == expected


def test_expand_braces_handles_nesting() -> None:
    """Implementation choice: bash-style brace expansion."""
    assert expand_braces("docs/{adr,{prd,srs}/v1}/*.md") == [
        "docs/adr/*.md",
        "docs/prd/v1/*.md",
        "docs/srs/v1/*.md",
    ]


@pytest.mark.parametrize(
    ("glob", "path", "expected"),
    [
        ("**/*.md", "README.md", True),
        ("**/*.md", "docs/a/b/c.md", True),
        ("**/*.md", "docs/a.mdx", False),
        ("**/*.md", ".github/notes.md", True),
        ("docs/**", "docs/a.md", True),
        ("docs/**", "docs/a/b/c.png", True),
        ("docs/**", "docsx/a.md", False),
        ("docs/**", "other/docs/a.md", False),
        ("README.md", "README.md", True),
        ("README.md", "pkg/README.md", False),
        ("**/README.md", "pkg/README.md", True),
        ("docs/*.md", "docs/a.md", True),
        ("docs/*.md", "docs/sub/a.md", False),
        ("docs/**/adr/*.md", "docs/adr/1.md", True),
        ("docs/**/adr/*.md", "docs/x/y/adr/1.md", True),
        ("docs/**/adr/*.md", "docs/x/adr/sub/1.md", False),
        ("docs/?.md", "docs/a.md", True),
        ("docs/?.md", "docs/ab.md", False),
        ("docs/[ab].md", "docs/a.md", True),
        ("docs/[ab].md", "docs/c.md", False),
        ("docs/[!ab].md", "docs/c.md", True),
        ("docs/[^ab].md", "docs/a.md", False),
        ("docs/[a-c]*.md", "docs/beta.md", True),
        ("docs/**.md", "docs/a.md", True),
        ("docs/**.md", "docs/x/a.md", False),
        ("docs/{adr,prd}/*.md", "docs/prd/a.md", True),
        ("docs/{adr,prd}/*.md", "docs/srs/a.md", False),
        ("**", "anything/at/all.md", True),
        ("**/node_modules/**", "node_modules/pkg/README.md", True),
        ("**/node_modules/**", "web/node_modules/pkg/README.md", True),
        ("docs/a+b (1).md", "docs/a+b (1).md", True),
        ("문서/*.md", "문서/용어집.md", True),
    ],
)
def test_glob_semantics(glob: str, path: str, expected: bool) -> None:
    """Implementation choice: root-anchored globs with gitignore-style `**` (module docstring)."""
    assert GlobSet([glob], field="files").matches(path) is expected


def test_default_surface_is_root_readme_and_docs() -> None:
    """Contract-mandated (contract §6: doc_globs ∩ include − exclude, docs/config.md defaults)."""
    matcher = SurfaceMatcher(DEFAULT_DOC_GLOBS, DEFAULT_INCLUDE, DEFAULT_EXCLUDE)
    on = ["README.md", "docs/adr/0001.md", "docs/guide/x.mdx", "docs/memory/plans/q1.md"]
    off = [
        "pkg/README.md",
        "src/notes.md",
        "docs/image.png",
        "docs/node_modules/x/README.md",
        "docs/dist/a.md",
        "CHANGELOG.md",
    ]
    assert matcher.filter(on + off) == on


@pytest.mark.parametrize(
    "path",
    [".ragit/memory/working/state.md", ".ragit/x.md", "docs/.ragit/notes.md", ".ragit"],
)
def test_ragit_directory_is_never_on_the_surface(path: str) -> None:
    """Contract-mandated (contract §6: `.ragit/**` is never ingested)."""
    assert not SurfaceMatcher(["**"], [], []).matches(path)
    assert not SurfaceMatcher(["**/*.md"], ["**"], []).matches(path)


def test_empty_lists_mean_no_restriction_or_markdown() -> None:
    """Implementation choice: empty include = unrestricted; empty doc_globs = markdown."""
    matcher = SurfaceMatcher([], [], [])
    assert matcher.matches("src/notes.md")
    assert matcher.matches("a/b.markdown")
    assert not matcher.matches("src/app.py")


def test_surface_errors_name_the_config_key() -> None:
    """Contract-mandated (contract §3: INPUT_INVALID details.field)."""
    with pytest.raises(InputInvalid) as caught:
        SurfaceMatcher(DEFAULT_DOC_GLOBS, ["../x/**"], [])
    assert caught.value.details["field"] == "ingest.include"


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("a.md", True),
        ("a.MD", True),
        ("a.mdx", True),
        ("a.markdown", True),
        ("a.txt", False),
        ("md", False),
        ("a.md.bak", False),
    ],
)
def test_is_markdown(path: str, expected: bool) -> None:
    """Contract-mandated (contract §6: markdown documents)."""
    assert is_markdown(path) is expected


def test_ten_thousand_paths_filter_with_compiled_patterns() -> None:
    """Implementation choice: one compiled regex per list (speed measured separately)."""
    matcher = SurfaceMatcher(DEFAULT_DOC_GLOBS, DEFAULT_INCLUDE, DEFAULT_EXCLUDE)
    paths = [f"docs/area{i % 50}/doc{i}.md" for i in range(5000)]
    paths += [f"src/pkg{i % 50}/mod{i}.py" for i in range(4000)]
    paths += [f"docs/node_modules/p{i}/README.md" for i in range(1000)]
    assert len(matcher.filter(paths)) == 5000
