"""Worker fingerprints and identity verification in a real run (LocalLauncher, real capture).

The worker's preamble runs the capture script the runtime writes into the log folder (as the
planner renders it for every worker leader); after the health gate the recipe's ``identity`` is
checked against that fingerprint, the banner goes to the sweep log and the result to
``recipe.lock.yaml``. A failed check only warns: the job's exit code is unchanged.
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import shlex
from collections.abc import Callable
from pathlib import Path

import yaml
from rt_plans import execute, fake, plan, spec, sweep_log

from srt_planner.plan import LogProbe
from srt_runtime.postrun import record_results
from srt_schema.recipe import IdentityConfig, IdentityContainerConfig, IdentityModelConfig

DYNAMO = importlib.metadata.version("ai-dynamo")
REVISION = "0123456789abcdef0123456789abcdef01234567"


def _record(job_dir: Path) -> Callable[[int], None]:
    """What ``python -m srt_runtime`` does after the run: results and fingerprints to the lock."""
    return lambda _code: record_results(job_dir, job_dir / "logs", log=logging.getLogger("t"))


def _model(tmp_path: Path) -> Path:
    model = tmp_path / "model"
    model.mkdir()
    (model / "download_metadata.json").write_text(
        json.dumps({"repo_id": "acme/tiny", "revision": REVISION})
    )
    return model


def _run(tmp_path: Path, job_dir: Path, identity: IdentityConfig) -> tuple[int, dict[str, object]]:
    logs = job_dir / "logs"
    capture = shlex.join(
        [
            "python3",
            str(logs / "srt_fingerprint.py"),
            str(logs / "fingerprint_agg_w0.json"),
            str(_model(tmp_path)),
        ]
    )
    up = LogProbe(pattern="^up$", timeout_seconds=30, interval_seconds=0.05)
    job_plan = plan(
        spec("agg_0_node-01", fake("say", "up", "forever"), preamble=(capture,), readiness=up),
        spec("benchmark", fake("exit", 0), kind="benchmark", phase="benchmark", oneshot=True),
        identity=identity,
        fingerprint_script="srt_fingerprint.py",
    )
    run = execute(job_plan, job_dir, before_final=_record(job_dir))
    lock = yaml.safe_load((job_dir / "recipe.lock.yaml").read_text())["lock"]
    return run.exit_code, lock


def test_the_fingerprint_is_captured_and_a_matching_identity_verifies(
    tmp_path: Path, job_dir: Path
) -> None:
    identity = IdentityConfig(
        model=IdentityModelConfig(repo="acme/tiny", revision=REVISION[:12]),
        container=IdentityContainerConfig(image="nvcr.io/acme/engine:1.0"),
        frameworks={"ai-dynamo": DYNAMO},
    )
    code, lock = _run(tmp_path, job_dir, identity)
    assert code == 0
    fingerprint = json.loads((job_dir / "logs" / "fingerprint_agg_w0.json").read_text())
    assert fingerprint["model"] == {
        "hf_revision": REVISION,
        "hf_repo": "acme/tiny",
        "model_id": None,
    }
    assert fingerprint["frameworks"]["dynamo"] == DYNAMO
    assert lock["fingerprints"] == {"agg_w0": fingerprint}
    assert lock["verification"] == {
        "result": "3 verified, 1 declared, 0 FAILED",
        "verified": 3,
        "declared": 1,
        "failed": 0,
        "checks": [
            {"field": "model.repo", "status": "OK", "message": "acme/tiny"},
            {"field": "model.revision", "status": "OK", "message": REVISION},
            {
                "field": "container.image",
                "status": "DECLARED",
                "message": "nvcr.io/acme/engine:1.0 (declared, not verifiable at runtime)",
            },
            {"field": "frameworks.ai-dynamo", "status": "OK", "message": DYNAMO},
        ],
    }
    text = sweep_log(job_dir).read_text()
    assert "INFO Identity verification:" in text
    assert "INFO   OK model.revision: " + REVISION in text
    assert "INFO   3 verified, 1 declared, 0 FAILED" in text
    # Verification comes after the health gate and before the benchmark.
    assert text.index("Identity verification:") < text.index("Starting benchmark")


def test_a_mismatch_is_reported_as_failed_and_the_job_still_succeeds(
    tmp_path: Path, job_dir: Path
) -> None:
    identity = IdentityConfig(
        model=IdentityModelConfig(repo="acme/other", revision="fedcba9"),
        frameworks={"dynamo": "0.0.1"},
    )
    code, lock = _run(tmp_path, job_dir, identity)
    assert code == 0
    verification = lock["verification"]
    assert isinstance(verification, dict)
    assert verification["result"] == "0 verified, 0 declared, 3 FAILED"
    text = sweep_log(job_dir).read_text()
    assert "WARNING   !! model.repo: declared acme/other, found acme/tiny" in text
    assert f"WARNING   !! model.revision: declared fedcba9, found {REVISION}" in text
    assert f"WARNING   !! frameworks.dynamo: declared 0.0.1, found {DYNAMO}" in text


def test_no_identity_declared_means_no_check_and_no_verification_section(
    tmp_path: Path, job_dir: Path
) -> None:
    logs = job_dir / "logs"
    capture = f"python3 {logs}/srt_fingerprint.py {logs}/fingerprint_decode_w1.json"
    up = LogProbe(pattern="^up$", timeout_seconds=30, interval_seconds=0.05)
    job_plan = plan(
        spec("decode_1_node-01", fake("say", "up", "forever"), preamble=(capture,), readiness=up),
        spec("benchmark", fake("exit", 0), kind="benchmark", phase="benchmark", oneshot=True),
        fingerprint_script="srt_fingerprint.py",
    )
    assert execute(job_plan, job_dir, before_final=_record(job_dir)).exit_code == 0
    lock = yaml.safe_load((job_dir / "recipe.lock.yaml").read_text())["lock"]
    assert "verification" not in lock
    assert list(lock["fingerprints"]) == ["decode_w1"]
    assert "Identity verification" not in sweep_log(job_dir).read_text()


def test_the_local_launcher_runs_the_preamble_first_with_the_plan_env(job_dir: Path) -> None:
    """The LocalLauncher runs a step's preamble (setup script, capture, mkdir) first."""
    marker = job_dir / "made-by-preamble"
    job_plan = plan(
        spec(
            "agg_0_node-01",
            fake("say", "up", "exit", 0),
            preamble=(
                f'test "$SRT_FAKE_NAME" = agg_0_node-01 && touch {shlex.quote(str(marker))}',
            ),
            kind="service",
            phase="before_workers",
            oneshot=True,
        ),
    )
    assert execute(job_plan, job_dir).exit_code == 0
    assert marker.exists()
    assert "up" in (job_dir / "logs" / "agg_0_node-01.out").read_text()
