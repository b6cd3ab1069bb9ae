"""The reproduction report: a lockfile's fingerprints against a new run's."""

from __future__ import annotations

import copy
from typing import Any

from srt_runtime.reporting.reproduce import ReproductionReference, build_report


def _fp(**changes: Any) -> dict[str, Any]:
    base: dict[str, Any] = {
        "hostname": "gpu-01",
        "timestamp": "2026-12-01T00:00:00Z",
        "arch": "x86_64",
        "os": "Linux-6.8",
        "gpu": {
            "available": True,
            "driver": "550.54",
            "gpus": [{"name": "H100", "driver": "550.54"}, {"name": "H100", "driver": "550.54"}],
        },
        "python_version": "3.12.3",
        "cuda_version": "12.8",
        "nccl_version": "2.26",
        "frameworks": {"sglang": "0.5.1", "dynamo": "1.6.1"},
        "env": {"NCCL_DEBUG": "WARN", "DYN_FILE_KV": "/out/100/logs/kv"},
        "pip_packages": {"/usr/bin/python3": ["sglang==0.5.1", "torch==2.8.0"]},
    }
    fp = copy.deepcopy(base)
    fp.update(changes)
    return fp


def _ref(**fingerprints: Any) -> ReproductionReference:
    return ReproductionReference(
        source="old/recipe.lock.yaml", integrity_ok=True, job_id="100", fingerprints=fingerprints
    )


def test_the_same_environment_on_other_hosts_matches() -> None:
    other = _fp(hostname="gpu-09", timestamp="2026-12-02T00:00:00Z")
    other["env"]["DYN_FILE_KV"] = "/out/200/logs/kv"  # this run's own folder
    report = build_report(_ref(decode_w0=_fp()), {"decode_w0": other}, job_id="200")
    assert report.issues == ()
    assert report.text.splitlines() == [
        "Reproduction report: this run against old/recipe.lock.yaml",
        "decode_w0:",
        "  OK arch: x86_64",
        "  OK os: Linux-6.8",
        "  OK python_version: 3.12.3",
        "  OK cuda_version: 12.8",
        "  OK nccl_version: 2.26",
        "  OK gpu: H100 x2 (driver 550.54)",
        "  OK frameworks.dynamo: 1.6.1",
        "  OK frameworks.sglang: 0.5.1",
        "  OK env.DYN_FILE_KV: /out/<job_id>/logs/kv",
        "  OK env.NCCL_DEBUG: WARN",
        "  OK pip_packages: 2 packages, identical",
        "ISSUES: none (every compared fact matches the lock)",
    ]


def test_every_difference_is_a_line_and_an_issue() -> None:
    new = _fp(
        gpu={"available": True, "driver": "560.1", "gpus": [{"name": "H100", "driver": "560.1"}]},
        frameworks={"sglang": "0.5.2", "dynamo": "1.6.1"},
        env={"DYN_FILE_KV": "/out/200/logs/kv"},
        pip_packages={"/opt/venv/bin/python": ["sglang==0.5.2", "flashinfer==0.4"]},
    )
    report = build_report(
        _ref(prefill_w0=_fp(), decode_w0=_fp()), {"prefill_w0": new, "agg_w0": _fp()}, job_id="200"
    )
    lines = report.text.splitlines()
    assert "  !! gpu: H100 x2 (driver 550.54) -> H100 x1 (driver 560.1)" in lines
    assert "  !! frameworks.sglang: 0.5.1 -> 0.5.2" in lines
    assert "  !! env.NCCL_DEBUG: WARN -> (none)" in lines
    assert (
        "  !! pip_packages: 3 differences: sglang 0.5.1 -> 0.5.2; +flashinfer 0.4; -torch 2.8.0"
        in lines
    )
    assert "!! workers in the lock but not in this run: decode_w0" in lines
    assert "!! workers in this run but not in the lock: agg_w0" in lines
    assert report.issues == (
        "prefill_w0: gpu",
        "prefill_w0: frameworks.sglang",
        "prefill_w0: env.NCCL_DEBUG",
        "prefill_w0: pip_packages",
        "decode_w0: not in this run",
        "agg_w0: not in the lock",
    )
    assert lines[-7] == "ISSUES: 6"


def test_an_edited_lock_and_an_unreadable_fingerprint_are_reported() -> None:
    reference = ReproductionReference(
        source="l.yaml", integrity_ok=False, fingerprints={"agg_w0": {"unreadable": "x"}}
    )
    report = build_report(reference, {"agg_w0": "not a mapping"})
    assert report.text.splitlines()[1] == (
        "  !! the lock section failed its integrity check (it may have been edited)"
    )
    assert report.issues == ("agg_w0: fingerprint",)


def test_many_package_changes_are_summarised() -> None:
    before = _fp(pip_packages={"p": [f"pkg{i}==1" for i in range(12)]})
    after = _fp(pip_packages={"p": [f"pkg{i}==2" for i in range(12)]})
    report = build_report(_ref(agg_w0=before), {"agg_w0": after})
    line = next(x for x in report.text.splitlines() if "pip_packages" in x)
    assert line.startswith("  !! pip_packages: 12 differences: pkg0 1 -> 2; pkg1 1 -> 2;")
    assert line.endswith("; ... 4 more")
