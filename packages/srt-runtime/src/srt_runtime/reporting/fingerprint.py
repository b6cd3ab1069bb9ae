"""Per-worker runtime fingerprint (docs/telemetry-and-bench.md#identity-and-fingerprints).

This module imports only the standard library so that its source can run on its own inside a
worker container that does not have srt installed::

    python3 fingerprint.py /logs/fingerprint_decode_w0.json /model

(``capture_script()`` returns the source for the runtime to drop next to the logs, with the
source of ``srt_schema.secrets`` above it so the script redacts as every other writer does.)
Values of environment variables whose *name* says credential (``srt_schema.secrets``) are
redacted, so is any other captured value that contains one of those secret values, and a
password inside a URL in any value.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import platform
import re
import socket
import subprocess
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

# capture_script() drops this line: the script carries srt_schema.secrets' source instead.
from srt_schema.secrets import REDACTED, is_secret_name, redact_url_credentials

__all__ = [
    "ENV_PREFIXES",
    "FRAMEWORK_PACKAGES",
    "REDACTED",
    "capture_fingerprint",
    "capture_script",
    "read_model_identity",
    "redact_env",
    "write_fingerprint",
]

ENV_PREFIXES = (
    "CUDA_",
    "NCCL_",
    "HF_",
    "DYN_",
    "UCX_",
    "NVIDIA_",
    "VLLM_",
    "SGLANG_",
    "TRTLLM_",
    "TLLM_",
    "TORCH_",
    "PYTORCH_",
    "OMP_",
    "MOONCAKE_",
)
#: fingerprint ``frameworks`` key -> distribution name.
FRAMEWORK_PACKAGES = {
    "vllm": "vllm",
    "sglang": "sglang",
    "tensorrt_llm": "tensorrt-llm",
    "dynamo": "ai-dynamo",
}
_SLURM_CPU_VARS = (
    "SLURM_CPUS_ON_NODE",
    "SLURM_CPUS_PER_TASK",
    "SLURM_CPUS_PER_GPU",
    "SLURM_JOB_CPUS_PER_NODE",
    "SLURM_CPU_BIND",
)
_SHA = re.compile(r"^[0-9a-f]{7,64}$")


def _secret_values(environ: Mapping[str, str]) -> list[str]:
    return sorted(
        {v for k, v in environ.items() if is_secret_name(k) and len(v) >= 6}, key=len, reverse=True
    )


def redact_env(
    environ: Mapping[str, str], prefixes: tuple[str, ...] = ENV_PREFIXES
) -> dict[str, str]:
    """The variables with one of ``prefixes``, sorted, secrets replaced by ``<redacted>``
    and URL passwords by ``:<redacted>@``."""
    secrets = _secret_values(environ)
    out: dict[str, str] = {}
    for name in sorted(environ):
        if not name.startswith(prefixes):
            continue
        value = environ[name]
        if is_secret_name(name) or any(secret in value for secret in secrets):
            value = REDACTED
        out[name] = redact_url_credentials(value)
    return out


def _first_line(path: Path) -> str | None:
    try:
        with path.open() as handle:
            line = handle.readline().strip()
    except OSError:
        return None
    return line or None


def _repo_from_cache_dir(name: str) -> str | None:
    if name.startswith("models--"):
        return name[len("models--") :].replace("--", "/")
    return None


def read_model_identity(model_dir: Path) -> dict[str, str | None]:
    """``{hf_revision, hf_repo, model_id}`` of a downloaded model (values None when unknown).

    Sources, first found wins: ``refs/main`` (Hugging Face cache layout, also from a snapshot
    directory), ``.cache/huggingface/download/*.metadata`` (first line: the commit),
    ``download_metadata.json`` (``repo_id``/``repo``/``hf_repo`` and ``revision``/``commit``),
    the cache directory name ``models--org--name``, ``config.json`` ``_name_or_path``.
    """
    revision: str | None = None
    repo: str | None = None
    model_id: str | None = None
    resolved = model_dir.resolve() if model_dir.exists() else model_dir
    candidates = [resolved]
    if resolved.parent.name == "snapshots":
        candidates.append(resolved.parent.parent)
        if _SHA.match(resolved.name):
            revision = resolved.name
    for root in candidates:
        revision = revision or _first_line(root / "refs" / "main")
        repo = repo or _repo_from_cache_dir(root.name)
    download = resolved / ".cache" / "huggingface" / "download"
    if revision is None and download.is_dir():
        for meta in sorted(download.rglob("*.metadata")):
            line = _first_line(meta)
            if line and _SHA.match(line):
                revision = line
                break
    try:
        doc = json.loads((resolved / "download_metadata.json").read_text())
    except (OSError, ValueError):
        doc = None
    if isinstance(doc, dict):
        repo = repo or next(
            (str(doc[k]) for k in ("repo_id", "repo", "hf_repo") if doc.get(k)), None
        )
        revision = revision or next(
            (str(doc[k]) for k in ("revision", "commit", "sha") if doc.get(k)), None
        )
    try:
        config = json.loads((resolved / "config.json").read_text())
    except (OSError, ValueError):
        config = None
    if isinstance(config, dict) and isinstance(config.get("_name_or_path"), str):
        model_id = config["_name_or_path"] or None
    return {"hf_revision": revision, "hf_repo": repo, "model_id": model_id}


def _version(distribution: str) -> str | None:
    try:
        return importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None


def _cpu_model() -> str | None:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        return None
    return platform.processor() or None


def _gpus() -> dict[str, Any]:
    query = "--query-gpu=name,driver_version,memory.total"
    try:
        done = subprocess.run(
            ["nvidia-smi", query, "--format=csv,noheader"],
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return {"available": False, "driver": None, "gpus": []}
    gpus = []
    for line in done.stdout.splitlines():
        parts = [p.strip() for p in line.split(",")]
        if len(parts) == 3:
            gpus.append({"name": parts[0], "driver": parts[1], "memory": parts[2]})
    driver = gpus[0]["driver"] if gpus else None
    return {"available": bool(gpus), "driver": driver, "gpus": gpus}


def _pip_packages() -> list[str]:
    lines = {
        f"{dist.metadata['Name']}=={dist.version}"
        for dist in importlib.metadata.distributions()
        if dist.metadata["Name"]
    }
    return sorted(lines, key=str.lower)


def capture_fingerprint(
    environ: Mapping[str, str], *, model_dir: Path | None, now: float
) -> dict[str, Any]:
    """The fingerprint of this host and interpreter, keys in the documented order."""
    affinity = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    return {
        "hostname": socket.gethostname(),
        # srt_schema.timestamps.iso_seconds_z's format, written out: this module also runs as a
        # self-contained script (capture_script) that imports nothing of ours but secrets.
        "timestamp": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now)),
        "arch": platform.machine(),
        "os": platform.platform(),
        "cpu": {
            "model": _cpu_model(),
            "logical_cpus": os.cpu_count(),
            "affinity_cpus": len(affinity),
            "affinity_list": affinity,
            "slurm": {k: environ[k] for k in _SLURM_CPU_VARS if k in environ},
        },
        "gpu": _gpus(),
        "python_version": platform.python_version(),
        "cuda_version": environ.get("CUDA_VERSION") or None,
        "nccl_version": environ.get("NCCL_VERSION") or _version("nvidia-nccl-cu12"),
        "frameworks": {key: _version(dist) for key, dist in FRAMEWORK_PACKAGES.items()},
        "model": read_model_identity(model_dir)
        if model_dir is not None
        else {"hf_revision": None, "hf_repo": None, "model_id": None},
        "env": redact_env(environ),
        "pip_packages": {sys.executable: _pip_packages()},
    }


def write_fingerprint(path: Path, fingerprint: Mapping[str, Any]) -> None:
    """Write the fingerprint as indented JSON (keys kept in their order)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_text(json.dumps(fingerprint, indent=2) + "\n")
    tmp.replace(path)


_FUTURE = "from __future__ import annotations\n"
_SHARED = "from srt_schema.secrets import REDACTED, is_secret_name, redact_url_credentials\n"


def capture_script() -> str:
    """A self-contained capture script for worker preambles: ``srt_schema.secrets``' source
    (standard library only), then this module's (its ``__future__`` import goes first)."""
    from srt_schema import secrets

    shared = Path(secrets.__file__).read_text()
    own = Path(__file__).read_text()
    own = own.replace(_FUTURE, "").replace(_SHARED, "")
    return _FUTURE + shared.replace(_FUTURE, "") + "\n\n" + own


if __name__ == "__main__":  # the worker-preamble entry point: writes a file, never prints
    _target = Path(sys.argv[1])
    _model = Path(sys.argv[2]) if len(sys.argv) > 2 else None
    write_fingerprint(_target, capture_fingerprint(os.environ, model_dir=_model, now=time.time()))
