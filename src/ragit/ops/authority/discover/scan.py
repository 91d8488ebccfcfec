"""`ragit init`'s read-only scan of the working tree (docs/authority.md, step 1).

One walk of the tree (:func:`ragit.ops.authority.tree.list_tree`: .gitignore honoured,
symlinks listed but never followed), then small reads: the first 4 KiB of each markdown
file (enough for the frontmatter and the first heading, which decide its type) and the
build files that name frameworks and workspaces (each at most 256 KiB).
"""

from __future__ import annotations

import fnmatch
import os
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ragit import _json, _toml
from ragit.ingest.doctype import UNKNOWN
from ragit.ops.authority.contracts import detect, detect_head
from ragit.ops.authority.tree import list_tree

HEAD_BYTES = 1536
BUILD_FILE_BYTES = 256 * 1024
EXISTING_DOCS_SHOWN = 200

LANGUAGES: dict[str, str] = {
    ".py": "python",
    ".pyi": "python",
    ".ts": "typescript",
    ".tsx": "typescript",
    ".mts": "typescript",
    ".cts": "typescript",
    ".js": "javascript",
    ".jsx": "javascript",
    ".mjs": "javascript",
    ".cjs": "javascript",
    ".rs": "rust",
    ".go": "go",
    ".java": "java",
    ".kt": "kotlin",
    ".kts": "kotlin",
    ".rb": "ruby",
    ".php": "php",
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".cs": "csharp",
    ".swift": "swift",
    ".scala": "scala",
    ".sh": "shell",
    ".bash": "shell",
    ".ex": "elixir",
    ".exs": "elixir",
    ".dart": "dart",
    ".lua": "lua",
    ".vue": "vue",
    ".svelte": "svelte",
}
DOC_SUFFIXES = (".md", ".mdx", ".markdown", ".rst", ".adoc", ".txt")

BUILD_FILES = frozenset(
    {
        "package.json",
        "pnpm-workspace.yaml",
        "pnpm-lock.yaml",
        "yarn.lock",
        "package-lock.json",
        "bun.lockb",
        "bun.lock",
        "turbo.json",
        "nx.json",
        "lerna.json",
        "deno.json",
        "pyproject.toml",
        "setup.py",
        "setup.cfg",
        "requirements.txt",
        "uv.lock",
        "poetry.lock",
        "Pipfile",
        "Cargo.toml",
        "Cargo.lock",
        "go.mod",
        "go.work",
        "pom.xml",
        "build.gradle",
        "build.gradle.kts",
        "settings.gradle",
        "settings.gradle.kts",
        "Gemfile",
        "composer.json",
        "mix.exs",
        "Makefile",
        "CMakeLists.txt",
        "pubspec.yaml",
    }
)
MONOREPO_FILES = ("pnpm-workspace.yaml", "turbo.json", "nx.json", "lerna.json", "go.work")
CI_PATTERNS = (
    ".github/workflows/*.yml",
    ".github/workflows/*.yaml",
    ".gitlab-ci.yml",
    ".circleci/config.yml",
    "azure-pipelines.yml",
    "Jenkinsfile",
    ".travis.yml",
    "bitbucket-pipelines.yml",
    ".buildkite/*",
    ".woodpecker.yml",
    ".drone.yml",
    ".ci/*",
)
INFRA_PATTERNS = (
    "Dockerfile",
    "*/Dockerfile",
    "Dockerfile.*",
    "docker-compose*.yml",
    "docker-compose*.yaml",
    "compose.yml",
    "compose.yaml",
    "*.tf",
    "Chart.yaml",
    "kustomization.yaml",
    "Procfile",
    "fly.toml",
    "vercel.json",
    "netlify.toml",
    "serverless.yml",
    ".devcontainer/*",
    "k8s/*",
    "deploy/*",
    "infra/*",
)
JS_FRAMEWORKS = {
    "react": "react",
    "next": "next",
    "vue": "vue",
    "nuxt": "nuxt",
    "svelte": "svelte",
    "@sveltejs/kit": "sveltekit",
    "@angular/core": "angular",
    "express": "express",
    "fastify": "fastify",
    "@nestjs/core": "nestjs",
    "vite": "vite",
    "@remix-run/react": "remix",
    "astro": "astro",
    "electron": "electron",
    "hono": "hono",
}
PY_FRAMEWORKS = (
    "django",
    "flask",
    "fastapi",
    "click",
    "typer",
    "pydantic",
    "sqlalchemy",
    "starlette",
    "celery",
    "pytest",
)
RUST_FRAMEWORKS = ("tokio", "axum", "actix-web", "rocket", "clap", "serde")
GO_FRAMEWORKS = {"gin-gonic/gin": "gin", "labstack/echo": "echo", "gofiber/fiber": "fiber"}


@dataclass
class ExistingDoc:
    path: str
    doc_type: str
    size: int
    headings: list[str] = field(default_factory=list)


@dataclass
class Scan:
    """What the scan found (the ``scan`` block of the report, plus what assessment needs)."""

    git_detected: bool
    files: list[str]
    symlinks: list[str]
    truncated: bool
    package_manager: str | None
    package_managers: list[str]
    languages: list[str]
    frameworks: list[str]
    monorepo: bool
    workspace_files: list[str]
    apps: list[str]
    packages: list[str]
    code_file_count: int
    doc_file_count: int
    docs: list[ExistingDoc]
    ci_files: list[str]
    infra_files: list[str]
    build_files: list[str]
    elapsed_ms: int = 0

    def has(self, path: str) -> bool:
        return path in self._fileset

    def __post_init__(self) -> None:
        self._fileset = frozenset(self.files)

    def doc(self, path: str) -> ExistingDoc | None:
        return next((d for d in self.docs if d.path == path), None)

    def wire(self) -> dict[str, Any]:
        typed = Counter(d.doc_type for d in self.docs if d.doc_type != UNKNOWN)
        shown = sorted(self.docs, key=lambda d: (d.doc_type == UNKNOWN, d.path))
        return {
            "gitDetected": self.git_detected,
            "packageManager": self.package_manager,
            "packageManagers": self.package_managers,
            "languages": self.languages,
            "frameworks": self.frameworks,
            "monorepo": self.monorepo,
            "workspaceFiles": self.workspace_files,
            "apps": self.apps,
            "packages": self.packages,
            "fileCount": len(self.files),
            "codeFileCount": self.code_file_count,
            "docFileCount": self.doc_file_count,
            "docTypes": dict(sorted(typed.items())),
            "existingDocs": [
                {"path": d.path, "docType": d.doc_type} for d in shown[:EXISTING_DOCS_SHOWN]
            ],
            "existingDocsTruncated": len(shown) > EXISTING_DOCS_SHOWN,
            "ciFiles": self.ci_files,
            "infraFiles": self.infra_files,
            "buildFiles": self.build_files,
            "symlinksSkipped": len(self.symlinks),
            "truncated": self.truncated,
            "elapsedMs": self.elapsed_ms,
        }


_HEADING = re.compile(r"^ {0,3}#{1,6}[ \t]+(.+?)[ \t#]*$", re.MULTILINE)


def _head(root: Path, rel: str, limit: int = HEAD_BYTES) -> str:
    try:
        with open(os.path.join(root, rel), "rb") as handle:
            raw = handle.read(limit)
    except OSError:
        return ""
    return raw.decode("utf-8", errors="ignore")


def _size(root: Path, rel: str) -> int:
    try:
        return os.stat(os.path.join(root, rel)).st_size
    except OSError:
        return 0


def _pattern_set(patterns: tuple[str, ...]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{fnmatch.translate(p)})" for p in patterns))


_CI = _pattern_set(CI_PATTERNS)
_INFRA = _pattern_set(INFRA_PATTERNS)


def _load_json(root: Path, rel: str) -> dict[str, Any]:
    text = _head(root, rel, BUILD_FILE_BYTES)
    try:
        data = _json.loads(text)
    except ValueError:
        return {}
    return data if isinstance(data, dict) else {}


def _load_toml(root: Path, rel: str) -> dict[str, Any]:
    try:
        return _toml.loads(_head(root, rel, BUILD_FILE_BYTES))
    except Exception:
        return {}


def _frameworks(root: Path, build_files: list[str]) -> list[str]:
    found: set[str] = set()
    for rel in build_files[:200]:
        name = rel.rsplit("/", 1)[-1]
        if name == "package.json":
            data = _load_json(root, rel)
            for key in ("dependencies", "devDependencies", "peerDependencies"):
                deps = data.get(key)
                if isinstance(deps, dict):
                    found.update(v for k, v in JS_FRAMEWORKS.items() if k in deps)
        elif name in ("pyproject.toml", "requirements.txt", "setup.cfg", "setup.py", "Pipfile"):
            text = _head(root, rel, BUILD_FILE_BYTES).lower()
            for fw in PY_FRAMEWORKS:
                if re.search(rf"(?<![\w-]){re.escape(fw)}(?![\w-])", text):
                    found.add(fw)
        elif name == "Cargo.toml":
            text = _head(root, rel, BUILD_FILE_BYTES)
            for fw in RUST_FRAMEWORKS:
                if re.search(rf"^\s*{re.escape(fw)}\s*=", text, re.MULTILINE):
                    found.add(fw)
        elif name == "go.mod":
            text = _head(root, rel, BUILD_FILE_BYTES)
            found.update(v for k, v in GO_FRAMEWORKS.items() if k in text)
    return sorted(found)


def _package_managers(has: set[str], root_pkg: dict[str, Any]) -> list[str]:
    out: list[str] = []
    declared = str(root_pkg.get("packageManager", "")).split("@", 1)[0]
    if "pnpm-lock.yaml" in has or "pnpm-workspace.yaml" in has or declared == "pnpm":
        out.append("pnpm")
    elif "yarn.lock" in has or declared == "yarn":
        out.append("yarn")
    elif "bun.lockb" in has or "bun.lock" in has or declared == "bun":
        out.append("bun")
    elif "package-lock.json" in has or "package.json" in has:
        out.append("npm")
    if "uv.lock" in has:
        out.append("uv")
    elif "poetry.lock" in has:
        out.append("poetry")
    elif has & {"pyproject.toml", "requirements.txt", "setup.py", "Pipfile"}:
        out.append("pip")
    if "Cargo.toml" in has:
        out.append("cargo")
    if "go.mod" in has or "go.work" in has:
        out.append("go")
    if "pom.xml" in has:
        out.append("maven")
    if has & {"build.gradle", "build.gradle.kts"}:
        out.append("gradle")
    return out


def _member_dirs(patterns: list[str], dirs: set[str]) -> list[str]:
    out: set[str] = set()
    for raw in patterns:
        pattern = raw.strip().strip("/")
        pattern = pattern[2:] if pattern.startswith("./") else pattern
        if not pattern or pattern.startswith("!"):
            continue
        depth = None if "**" in pattern else pattern.count("/")
        out.update(
            d
            for d in dirs
            if (depth is None or d.count("/") == depth) and fnmatch.fnmatchcase(d, pattern)
        )
    return sorted(out)


def _workspace_members(
    root: Path, has: set[str], root_pkg: dict[str, Any], dirs: set[str]
) -> list[str]:
    patterns: list[str] = []
    if "pnpm-workspace.yaml" in has:
        text = _head(root, "pnpm-workspace.yaml", BUILD_FILE_BYTES)
        patterns += re.findall(r"^\s*-\s*['\"]?([^'\"\n#]+?)['\"]?\s*$", text, re.MULTILINE)
    workspaces = root_pkg.get("workspaces")
    if isinstance(workspaces, dict):
        workspaces = workspaces.get("packages")
    if isinstance(workspaces, list):
        patterns += [w for w in workspaces if isinstance(w, str)]
    if "Cargo.toml" in has:
        members = _load_toml(root, "Cargo.toml").get("workspace", {}).get("members", [])
        patterns += [m for m in members if isinstance(m, str)]
    if "pyproject.toml" in has:
        tool = _load_toml(root, "pyproject.toml").get("tool", {})
        members = tool.get("uv", {}).get("workspace", {}).get("members", [])
        patterns += [m for m in members if isinstance(m, str)]
    if "go.work" in has:
        text = _head(root, "go.work", BUILD_FILE_BYTES)
        patterns += [m for m in re.findall(r"^\s*(?:use\s+)?(\./[^\s()]+)\s*$", text, re.MULTILINE)]
    return _member_dirs(patterns, dirs)


def scan_repository(root: Path, *, git_detected: bool) -> Scan:
    """Scan the working tree under ``root`` (reads only)."""
    import time

    started = time.perf_counter()
    listing = list_tree(root)
    files = listing.files
    top = {f for f in files if "/" not in f}
    dirs: set[str] = set()
    for f in files:
        parts = f.split("/")[:-1]
        for i in range(1, min(len(parts), 3) + 1):
            dirs.add("/".join(parts[:i]))
    build_files = [f for f in files if f.rsplit("/", 1)[-1] in BUILD_FILES]
    root_pkg = _load_json(root, "package.json") if "package.json" in top else {}
    managers = _package_managers(top, root_pkg)
    members = _workspace_members(root, top, root_pkg, dirs)
    apps = sorted(d for d in dirs if d.count("/") == 1 and d.startswith("apps/"))
    packages = sorted(
        {d for d in dirs if d.count("/") == 1 and d.startswith("packages/")}
        | {m for m in members if not m.startswith("apps/")}
    )
    cargo_workspace = "Cargo.toml" in top and "workspace" in _load_toml(root, "Cargo.toml")
    uv_workspace = bool(members) and "pyproject.toml" in top
    workspace_files = [f for f in MONOREPO_FILES if f in top]
    if cargo_workspace:
        workspace_files.append("Cargo.toml")
    if isinstance(root_pkg.get("workspaces"), (list, dict)):
        workspace_files.append("package.json")
    if uv_workspace and "pyproject.toml" not in workspace_files and not cargo_workspace:
        workspace_files.append("pyproject.toml")
    monorepo = bool(workspace_files) or len(apps) + len(packages) >= 2
    counts: Counter[str] = Counter()
    code = 0
    doc_files: list[str] = []
    for f in files:
        name = f.rsplit("/", 1)[-1]
        suffix = name[name.rfind(".") :].lower() if "." in name else ""
        if suffix in LANGUAGES:
            counts[LANGUAGES[suffix]] += 1
            code += 1
        elif suffix in DOC_SUFFIXES and suffix != ".txt":
            doc_files.append(f)
    docs: list[ExistingDoc] = []
    for f in doc_files:
        if not f.lower().endswith((".md", ".mdx", ".markdown")):
            docs.append(ExistingDoc(f, UNKNOWN, _size(root, f)))
            continue
        head = _head(root, f)
        if "/" in f:  # only root documents need their size and headings (project overview)
            docs.append(ExistingDoc(f, detect_head(f, head), 0))
            continue
        docs.append(
            ExistingDoc(
                f,
                detect(f, head),
                _size(root, f),
                [h.strip() for h in _HEADING.findall(head)][:40],
            )
        )
    scan = Scan(
        git_detected=git_detected,
        files=files,
        symlinks=listing.symlinks,
        truncated=listing.truncated,
        package_manager=managers[0] if managers else None,
        package_managers=managers,
        languages=[lang for lang, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))],
        frameworks=_frameworks(root, build_files),
        monorepo=monorepo,
        workspace_files=workspace_files,
        apps=apps,
        packages=packages,
        code_file_count=code,
        doc_file_count=len(doc_files),
        docs=docs,
        ci_files=[f for f in files if _CI.match(f)][:100],
        infra_files=[f for f in files if _INFRA.match(f)][:100],
        build_files=build_files[:200],
    )
    scan.elapsed_ms = int((time.perf_counter() - started) * 1000)
    return scan
