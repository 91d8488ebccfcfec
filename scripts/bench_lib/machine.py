"""What the figures were measured on: CPU, memory, kernel, interpreter, zvec, load."""

from __future__ import annotations

import importlib.metadata
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any


def _lscpu() -> dict[str, str]:
    try:
        text = subprocess.run(
            ["lscpu"],
            capture_output=True,
            text=True,
            check=False,
            env={"LC_ALL": "C", "PATH": os.defpath},
        ).stdout
    except OSError:
        return {}
    fields = {}
    for line in text.splitlines():
        key, sep, value = line.partition(":")
        if sep:
            fields[key.strip()] = value.strip()
    return fields


def _mem_total_gib() -> float | None:
    try:
        with open("/proc/meminfo", encoding="utf-8") as fh:
            for line in fh:
                if line.startswith("MemTotal:"):
                    return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        return None
    return None


def _version(dist: str) -> str | None:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return None


def _fs_type(path: Path) -> str | None:
    """The mounted file system type (``findmnt``; ``stat -f`` says "ext2/ext3" for ext4)."""
    for argv in (
        ["findmnt", "-n", "-o", "FSTYPE", "--target", str(path)],
        ["stat", "-f", "-c", "%T", str(path)],
    ):
        try:
            out = subprocess.run(argv, capture_output=True, text=True, check=False).stdout
        except OSError:
            continue
        if out.strip():
            return out.strip()
    return None


def loadavg() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def describe(workdir: Path, impl: list[str], impl_version: str | None) -> dict[str, Any]:
    cpu = _lscpu()
    return {
        "cpuModel": cpu.get("Model name"),
        "cpus": cpu.get("CPU(s)"),
        "threadsPerCore": cpu.get("Thread(s) per core"),
        "hypervisor": cpu.get("Hypervisor vendor"),
        "nproc": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else None,
        "memTotalGiB": _mem_total_gib(),
        "kernel": platform.release(),
        "python": platform.python_version(),
        "pythonExecutable": sys.executable,
        "zvec": _version("zvec"),
        "pygit2": _version("pygit2"),
        "ragitVersion": impl_version,
        "impl": impl,
        "workdirFs": _fs_type(workdir),
        "loadavgAtStart": loadavg(),
    }
