"""Fingerprint capture, model identity metadata, identity verification and lock sections."""

from __future__ import annotations

import importlib.metadata
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from srt_runtime.reporting.fingerprint import (
    REDACTED,
    capture_fingerprint,
    capture_script,
    read_model_identity,
    redact_env,
    write_fingerprint,
)
from srt_runtime.reporting.identity import (
    ObservedIdentity,
    canonical_framework,
    observed_from_fingerprint,
    read_framework_versions,
    render_banner,
    verify_identity,
)
from srt_runtime.reporting.lock_sections import (
    build_integrity,
    build_lock_sections,
    first_fingerprint,
    order_lock,
    read_fingerprints,
)
from srt_schema.recipe import IdentityConfig, IdentityContainerConfig, IdentityModelConfig

SHA = "0123456789abcdef0123456789abcdef01234567"
CANARY = "canary-hf-token-1234567890"

TOP_KEYS = [
    "hostname",
    "timestamp",
    "arch",
    "os",
    "cpu",
    "gpu",
    "python_version",
    "cuda_version",
    "nccl_version",
    "frameworks",
    "model",
    "env",
    "pip_packages",
]


def test_env_capture_is_filtered_sorted_and_redacted() -> None:
    environ = {
        "HF_TOKEN": CANARY,
        "HF_HOME": "/hf",
        "NCCL_DEBUG": "INFO",
        "DYN_LOG": "debug",
        "DYN_COPY": f"x{CANARY}y",  # a secret copied into a harmless-looking name
        "CUDA_VISIBLE_DEVICES": "0,1",
        "NVIDIA_API_KEY": "abc",
        "PATH": "/bin",
        "SRTCTL_STATUS_TOKEN": "other-secret-value",
    }
    assert redact_env(environ) == {
        "CUDA_VISIBLE_DEVICES": "0,1",
        "DYN_COPY": REDACTED,
        "DYN_LOG": "debug",
        "HF_HOME": "/hf",
        "HF_TOKEN": REDACTED,
        "NCCL_DEBUG": "INFO",
        "NVIDIA_API_KEY": REDACTED,
    }


def test_model_identity_from_the_hugging_face_cache_layout(tmp_path: Path) -> None:
    repo = tmp_path / "hub" / "models--Qwen--Qwen3-0.6B"
    snapshot = repo / "snapshots" / SHA
    snapshot.mkdir(parents=True)
    (repo / "refs").mkdir()
    (repo / "refs" / "main").write_text(SHA + "\n")
    (snapshot / "config.json").write_text(json.dumps({"_name_or_path": "Qwen/Qwen3-0.6B"}))
    assert read_model_identity(snapshot) == {
        "hf_revision": SHA,
        "hf_repo": "Qwen/Qwen3-0.6B",
        "model_id": "Qwen/Qwen3-0.6B",
    }


def test_model_identity_from_local_dir_download_metadata(tmp_path: Path) -> None:
    model = tmp_path / "model"
    meta = model / ".cache" / "huggingface" / "download"
    meta.mkdir(parents=True)
    (meta / "config.json.metadata").write_text(f'{SHA}\n"etag"\n1700000000.0\n')
    (model / "download_metadata.json").write_text(json.dumps({"repo_id": "org/name"}))
    assert read_model_identity(model) == {
        "hf_revision": SHA,
        "hf_repo": "org/name",
        "model_id": None,
    }
    assert read_model_identity(tmp_path / "missing") == {
        "hf_revision": None,
        "hf_repo": None,
        "model_id": None,
    }


def test_capture_has_the_documented_keys_and_no_secret(tmp_path: Path) -> None:
    fp = capture_fingerprint(
        {"HF_TOKEN": CANARY, "SLURM_CPUS_ON_NODE": "8"}, model_dir=None, now=0.0
    )
    assert list(fp) == TOP_KEYS
    assert fp["timestamp"] == "1970-01-01T00:00:00Z"
    assert list(fp["frameworks"]) == ["vllm", "sglang", "tensorrt_llm", "dynamo"]
    assert fp["frameworks"]["dynamo"] == importlib.metadata.version("ai-dynamo")
    assert fp["cpu"]["slurm"] == {"SLURM_CPUS_ON_NODE": "8"}
    assert fp["env"] == {"HF_TOKEN": REDACTED}
    path = tmp_path / "fingerprint_agg_w0.json"
    write_fingerprint(path, fp)
    assert CANARY not in path.read_text()
    assert list(json.loads(path.read_text())) == TOP_KEYS


def test_capture_script_runs_alone_in_an_isolated_interpreter(tmp_path: Path) -> None:
    script = tmp_path / "capture.py"
    script.write_text(capture_script())
    out = tmp_path / "fingerprint_decode_w0.json"
    env = {"PATH": "/usr/bin:/bin", "HF_TOKEN": CANARY, "NCCL_DEBUG": "WARN"}
    subprocess.run(
        [sys.executable, "-I", str(script), str(out), str(tmp_path)],
        env=env,
        check=True,
        timeout=60,
    )
    doc = json.loads(out.read_text())
    assert list(doc) == TOP_KEYS
    assert doc["env"] == {"HF_TOKEN": REDACTED, "NCCL_DEBUG": "WARN"}


def test_framework_names_are_canonical() -> None:
    assert canonical_framework("ai-dynamo") == "dynamo"
    assert canonical_framework("dynamo") == "dynamo"
    assert canonical_framework("TensorRT-LLM") == "tensorrt_llm"
    assert canonical_framework("tensorrt_llm") == "tensorrt_llm"
    assert canonical_framework("Some_Pkg") == "some-pkg"
    assert read_framework_versions(["ai-dynamo", "surely-not-installed-pkg"]) == {
        "dynamo": importlib.metadata.version("ai-dynamo"),
        "surely-not-installed-pkg": None,
    }


SEEN = ObservedIdentity(
    hf_repo="Qwen/Qwen3-0.6B",
    hf_revision=SHA,
    model_id="/model",
    frameworks={"dynamo": "1.6.1", "sglang": "0.5.3", "vllm": None},
)


@pytest.mark.parametrize(
    ("model", "status", "message"),
    [
        (IdentityModelConfig(repo="Qwen/Qwen3-0.6B"), "OK", "Qwen/Qwen3-0.6B"),
        (IdentityModelConfig(repo="/model"), "OK", "/model"),
        (IdentityModelConfig(repo="other/x"), "FAIL", "declared other/x, found Qwen/Qwen3-0.6B"),
        (IdentityModelConfig(revision=SHA[:7]), "OK", SHA),
        (IdentityModelConfig(revision="abcdef0"), "FAIL", f"declared abcdef0, found {SHA}"),
        (
            IdentityModelConfig(revision="0123"),
            "DECLARED",
            "0123 (shorter than 7 characters, not verified)",
        ),
    ],
)
def test_model_rules(model: IdentityModelConfig, status: str, message: str) -> None:
    result = verify_identity(IdentityConfig(model=model), SEEN)
    assert result is not None
    (check,) = result.checks
    assert (check.status, check.message) == (status, message)


def test_model_rules_without_metadata() -> None:
    blind = ObservedIdentity()
    config = IdentityConfig(model=IdentityModelConfig(repo="a/b", revision=SHA))
    result = verify_identity(config, blind)
    assert result is not None
    assert [(c.field, c.status, c.message) for c in result.checks] == [
        ("model.repo", "DECLARED", "a/b (declared, not verifiable at runtime)"),
        ("model.revision", "FAIL", f"declared {SHA}, but the model has no revision metadata"),
    ]


def test_full_verification_banner_and_summary() -> None:
    config = IdentityConfig(
        model=IdentityModelConfig(repo="Qwen/Qwen3-0.6B"),
        container=IdentityContainerConfig(image="nvcr.io/x:1"),
        frameworks={"ai-dynamo": "1.6.1", "sglang": "0.5.4", "vllm": "0.11.0"},
    )
    result = verify_identity(config, SEEN)
    assert result is not None
    assert (result.verified, result.declared, result.failed) == (2, 1, 2)
    assert render_banner(result) == [
        "Identity verification:",
        "  OK model.repo: Qwen/Qwen3-0.6B",
        "  -- container.image: nvcr.io/x:1 (declared, not verifiable at runtime)",
        "  OK frameworks.ai-dynamo: 1.6.1",
        "  !! frameworks.sglang: declared 0.5.4, found 0.5.3",
        "  !! frameworks.vllm: declared 0.11.0, not installed",
        "  2 verified, 1 declared, 2 FAILED",
    ]
    assert verify_identity(IdentityConfig(), SEEN) is None
    assert verify_identity(None, SEEN) is None


def test_observed_identity_from_a_fingerprint() -> None:
    fp = {
        "model": {"hf_revision": SHA, "hf_repo": None, "model_id": "Qwen/Qwen3-0.6B"},
        "frameworks": {"vllm": None, "dynamo": "1.6.1", "tensorrt_llm": ""},
    }
    assert observed_from_fingerprint(fp) == ObservedIdentity(
        hf_revision=SHA,
        model_id="Qwen/Qwen3-0.6B",
        frameworks={"vllm": None, "dynamo": "1.6.1", "tensorrt_llm": None},
    )
    assert observed_from_fingerprint({}) == ObservedIdentity()


def test_lock_sections_order_and_integrity(tmp_path: Path) -> None:
    log_dir = tmp_path / "logs"
    (log_dir / "fingerprints").mkdir(parents=True)
    (log_dir / "fingerprint_prefill_w0.json").write_text(json.dumps({"hostname": "n1"}))
    (log_dir / "fingerprints" / "fingerprint_decode_w1.json").write_text(
        json.dumps({"hostname": "n2"})
    )
    (log_dir / "fingerprint_decode_w0.json").write_text("{not json")
    prints = read_fingerprints(log_dir)
    assert list(prints) == ["decode_w0", "decode_w1", "prefill_w0"]
    assert prints["decode_w0"]["unreadable"].startswith("JSONDecodeError: ")
    assert first_fingerprint(prints) == {"hostname": "n2"}
    verification = verify_identity(
        IdentityConfig(container=IdentityContainerConfig(image="i")), SEEN
    )
    sections = build_lock_sections(
        verification=verification,
        fingerprints=prints,
        resolved={"model_path": "/m", "container_path": None, "log_dir": "/o/logs"},
        results={"benchmark_type": "sa-bench"},
    )
    assert list(sections) == ["resolved", "verification", "fingerprints", "results"]
    assert sections["resolved"] == {"model_path": "/m", "log_dir": "/o/logs"}
    assert sections["verification"]["result"] == "0 verified, 1 declared, 0 FAILED"
    lock = order_lock({"results": 1, "job_id": "7", "integrity": "stale", **sections, "version": 2})
    assert list(lock) == [
        "version",
        "resolved",
        "verification",
        "fingerprints",
        "results",
        "job_id",
        "integrity",
    ]
    assert lock["integrity"] == build_integrity(lock)
    assert len(lock["integrity"]) == 64
    reloaded = yaml.safe_load(yaml.safe_dump(lock, sort_keys=False))
    assert build_integrity(reloaded) == lock["integrity"]
    reloaded["results"] = 2
    assert build_integrity(reloaded) != lock["integrity"]
