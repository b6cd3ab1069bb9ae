"""apply and results that leave the run: the submit record and every lifecycle event reach a real
``srtctl status-server`` collector; re-running a lockfile writes a reproduction report.

Each test runs a real local job (``apply --local`` with the real runtime) of the smallest recipe:
one terminal service that prints and exits.
"""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import yaml
from cli_testkit import Invoke
from collector_testkit import WRITE, serving, settings

from srt_runtime.reporting.lock_sections import build_integrity

#: (status, stage, message) of every event the collector keeps for the hello job, in order.
EXPECTED = [
    ("submitted", None, None),
    ("starting", "starting", "Job started on node-01"),
    ("frontend", "frontend", "Starting after_frontend services"),
    ("frontend", "frontend", "waiting for terminal services"),
    ("frontend", "cleanup", "Cleaning up"),
    ("completed", "cleanup", "Benchmark completed successfully"),
]


def _run(invoke: Invoke, recipe: Path, env: dict[str, str]) -> tuple[Path, str]:
    result = invoke("apply", "-f", str(recipe), "--local", "--json", env=env)
    assert result.exit_code == 0, result.output
    (record,) = [json.loads(line) for line in result.stdout.splitlines()]
    return Path(record["output_dir"]), result.stderr


def test_the_collector_gets_the_submit_record_and_every_event(
    invoke: Invoke, data: Path, tmp_path: Path, no_slurm_path: dict[str, str]
) -> None:
    with serving(settings(tmp_path, write=WRITE)) as collector:
        recipe = data / "hello-service.yaml"
        doc = yaml.safe_load(recipe.read_text())
        doc["reporting"] = {"status": {"endpoint": collector.url, "token_env": "LAB_TOKEN"}}
        recipe.write_text(yaml.safe_dump(doc))
        job_dir, stderr = _run(invoke, recipe, {**no_slurm_path, "LAB_TOKEN": WRITE})
        answer = httpx.get(
            f"{collector.url}/api/jobs/{job_dir.name}",
            headers={"Authorization": f"Bearer {WRITE}"},
            timeout=5,
        )
    assert "warning" not in stderr
    # The token went to the collector, and into no file of the job.
    for path in job_dir.rglob("*"):
        assert not path.is_file() or WRITE.encode() not in path.read_bytes(), path
    assert answer.status_code == 200
    job = answer.json()
    assert (job["job_name"], job["status"], job["exit_code"]) == ("hello", "completed", 0)
    assert job["recipe"] == str(recipe)
    # The submit record's metadata (<job_id>.json) merged with the run's started metadata.
    assert job["metadata"]["version"] == "2.0"
    assert job["metadata"]["job_id"] == job_dir.name
    assert job["metadata"]["head_node"] == "node-01"
    assert job["metadata"]["log_dir"] == str(job_dir / "logs")
    events = [(e["status"], e["stage"], e["message"]) for e in job["events"]]
    assert events == EXPECTED, events


def test_a_collector_that_is_down_costs_one_warning(
    invoke: Invoke, data: Path, no_slurm_path: dict[str, str]
) -> None:
    recipe = data / "hello-service.yaml"
    doc = yaml.safe_load(recipe.read_text())
    doc["reporting"] = {"status": {"endpoint": "http://127.0.0.1:9"}}
    recipe.write_text(yaml.safe_dump(doc))
    job_dir, stderr = _run(invoke, recipe, no_slurm_path)
    warnings = [line for line in stderr.splitlines() if line.startswith("warning: ")]
    assert warnings == [
        "warning: job record POST to http://127.0.0.1:9/api/jobs failed after 2 attempts: "
        "ConnectError: [Errno 111] Connection refused; the run will still appear when it starts"
    ]
    assert json.loads((job_dir / "status.json").read_text())["exit_code"] == 0


def _fingerprint(driver: str) -> dict[str, object]:
    return {
        "hostname": "gpu-07",
        "arch": "x86_64",
        "os": "Linux",
        "gpu": {"available": True, "driver": driver, "gpus": [{"name": "H100", "driver": driver}]},
        "python_version": "3.11.7",
        "frameworks": {"sglang": "0.5.1"},
        "env": {},
        "pip_packages": {"/usr/bin/python3": ["sglang==0.5.1"]},
    }


def _lockfile_with_fingerprints(job_dir: Path, *, keep_integrity: bool) -> Path:
    """The finished job's lockfile, as if its workers had captured fingerprints."""
    path = job_dir / "recipe.lock.yaml"
    doc = yaml.safe_load(path.read_text())
    doc["lock"]["fingerprints"] = {"agg_w0": _fingerprint("550.54")}
    if keep_integrity:
        doc["lock"]["integrity"] = build_integrity(doc["lock"])
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def test_rerunning_a_lockfile_writes_a_reproduction_report(
    invoke: Invoke, data: Path, no_slurm_path: dict[str, str]
) -> None:
    first, _ = _run(invoke, data / "hello-service.yaml", no_slurm_path)
    lock = _lockfile_with_fingerprints(first, keep_integrity=True)
    again, stderr = _run(invoke, lock, no_slurm_path)
    assert (
        f"{lock}: lock integrity verified; the run's fingerprints will be compared with it "
        "(logs/reproduction-report.txt)"
    ) in stderr
    reference = json.loads((again / "reproduce_from.json").read_text())
    assert (reference["source"], reference["integrity_ok"]) == (str(lock), True)
    assert reference["job_id"] == first.name
    report = (again / "logs" / "reproduction-report.txt").read_text()
    # This run has no workers, so the locked worker is reported missing.
    assert report.splitlines() == [
        f"Reproduction report: this run against {lock}",
        "!! workers in the lock but not in this run: agg_w0",
        "ISSUES: 1",
        "  - agg_w0: not in this run",
    ]
    # The new job's own lock is a plain recipe again plus its own lock section.
    relock = yaml.safe_load((again / "recipe.lock.yaml").read_text())
    assert "fingerprints" not in relock["lock"]


def test_an_edited_lock_section_is_flagged(
    invoke: Invoke, data: Path, no_slurm_path: dict[str, str]
) -> None:
    first, _ = _run(invoke, data / "hello-service.yaml", no_slurm_path)
    lock = _lockfile_with_fingerprints(first, keep_integrity=False)
    again, stderr = _run(invoke, lock, no_slurm_path)
    assert (
        f"warning: {lock}: lock integrity check FAILED (the lock section may have been "
        "edited); the run is still compared with it"
    ) in stderr
    report = (again / "logs" / "reproduction-report.txt").read_text()
    assert report.splitlines()[1] == (
        "  !! the lock section failed its integrity check (it may have been edited)"
    )


def test_a_lock_section_of_the_wrong_shape_is_refused_before_the_run(
    invoke: Invoke, data: Path, no_slurm_path: dict[str, str]
) -> None:
    first, _ = _run(invoke, data / "hello-service.yaml", no_slurm_path)
    lock = _lockfile_with_fingerprints(first, keep_integrity=True)
    doc = yaml.safe_load(lock.read_text())
    doc["lock"]["exit_code"] = "zero"
    lock.write_text(yaml.safe_dump(doc, sort_keys=False))
    result = invoke("apply", "-f", str(lock), "--local", "--json", env=no_slurm_path)
    assert result.exit_code == 2, result.output
    assert f"{lock}: the lock section is not a recipe lock" in result.stderr
    assert "$.exit_code" in result.stderr
    (record,) = [json.loads(line) for line in result.stdout.splitlines()]
    assert record["status"] == "error" and "output_dir" not in record
