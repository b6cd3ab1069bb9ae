"""``srtctl apply --resume`` against the fake sbatch: the earlier jobs' folders say what happened
(status.json and benchmark-rollup.json as the runtime writes them), and exactly the points without
a valid result are submitted again."""

from __future__ import annotations

import json
from pathlib import Path

import msgspec
import pytest
import yaml
from cli_testkit import FAKES, Invoke

from srt_runtime.status import StatusEvent
from srt_schema.sweep_record import SWEEP_FILE, decode_sweep_record


@pytest.fixture
def slurm_env(tmp_path: Path) -> dict[str, str]:
    slurm = tmp_path / "slurm"
    slurm.mkdir()
    return {
        "PATH": f"{FAKES}:/usr/bin:/bin",
        "FAKE_SBATCH_DIR": str(tmp_path / "sbatch"),
        "FAKE_SLURM_DIR": str(slurm),
        "USER": "tester",
    }


def _recipe(data: Path, tmp_path: Path, values: list[object]) -> Path:
    model = tmp_path / "model"
    model.mkdir(exist_ok=True)
    doc = yaml.safe_load((data / "mocker-agg.yaml").read_text())
    doc["name"] = "rs"
    doc["model"]["path"] = str(model)
    doc["sweep"] = {"bs": values}
    doc["roles"]["agg"]["args"] = {"block-size": "{bs}"}
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _submitted(env: dict[str, str]) -> list[str]:
    """The job names sbatch was given, in order (from the scripts it was handed)."""
    log = Path(env["FAKE_SBATCH_DIR"]) / "calls.jsonl"
    calls = [json.loads(line) for line in log.read_text().splitlines()] if log.exists() else []
    names = []
    for call in calls:
        script = Path(str(call["args"][-1])).read_text()
        (line,) = [x for x in script.splitlines() if x.startswith("#SBATCH --job-name=")]
        names.append(line.split("=", 1)[1])
    return names


def _records(stdout: str) -> list[dict[str, object]]:
    return [json.loads(line) for line in stdout.splitlines()]


def _ended(job: Path, status: str, code: int, message: str = "") -> None:
    event = StatusEvent(
        job_id=job.name,
        status=status,  # type: ignore[arg-type]
        stage="cleanup",
        message=message,
        exit_code=code,
        at="2026-12-02T10:00:00Z",
    )
    (job / "status.json").write_bytes(msgspec.json.encode(event))


def _rollup(job: Path, tokens: int, validity: dict[str, object] | None = None) -> None:
    run: dict[str, object] = {"concurrency": 1, "total_output_tokens": tokens}
    doc: dict[str, object] = {"benchmark_type": "sa-bench", "runs": [run]}
    if validity is not None:
        doc["validity"] = validity
    (job / "logs" / "benchmark-rollup.json").write_text(json.dumps(doc))


def _sweep_folder(output: str) -> Path:
    """The sweep folder apply names (``sweep of N jobs: <folder>``)."""
    (line,) = [x for x in output.splitlines() if x.startswith("sweep of ")]
    return Path(line.split(": ", 1)[1])


def test_resume_submits_exactly_the_points_without_a_valid_result(
    invoke: Invoke, data: Path, tmp_path: Path, slurm_env: dict[str, str]
) -> None:
    recipe = _recipe(data, tmp_path, [8, 16, 32, 64, 128, 256])
    out = tmp_path / "out"
    first = invoke("apply", "-f", str(recipe), "-o", str(out), "--json", env=slurm_env)
    assert first.exit_code == 0, first.output
    ids = {r["job_name"]: r["slurm_job_id"] for r in _records(first.stdout)}
    assert list(ids) == ["rs_bs8", "rs_bs16", "rs_bs32", "rs_bs64", "rs_bs128", "rs_bs256"]
    folder = _sweep_folder(first.stderr)
    job = {name: out / str(job_id) for name, job_id in ids.items()}
    point = json.loads((job["rs_bs8"] / f"{ids['rs_bs8']}.json").read_text())["sweep_point"]
    assert point["params"] == {"bs": 8}
    # What happened to each job: bs8 completed with results; bs16 failed; bs32 completed with an
    # invalid verdict; bs64 is still in Slurm's queue; bs128 completed, no tokens and no verdict;
    # bs256's folder is gone (as if it never started).
    _ended(job["rs_bs8"], "completed", 0)
    _rollup(job["rs_bs8"], 100)
    _ended(job["rs_bs16"], "failed", 1, "agg_w0 exited with 2")
    _ended(job["rs_bs32"], "completed", 0)
    invalid = {"verdict": "invalid", "reasons": [{"code": "window_too_short", "detail": "0.2 s"}]}
    _rollup(job["rs_bs32"], 100, validity=invalid)
    queue = [{"id": ids["rs_bs64"], "state": "RUNNING", "name": "rs_bs64", "user": "tester"}]
    (Path(slurm_env["FAKE_SLURM_DIR"]) / "jobs.json").write_text(json.dumps(queue))
    _ended(job["rs_bs128"], "completed", 0)
    _rollup(job["rs_bs128"], 0)
    for path in sorted(job["rs_bs256"].iterdir(), reverse=True):
        if path.is_dir():
            for inner in path.iterdir():
                inner.unlink()
            path.rmdir()
        else:
            path.unlink()
    job["rs_bs256"].rmdir()

    again = invoke("apply", "--resume", str(folder), "--json", env=slurm_env)
    assert again.exit_code == 0, again.output
    assert _submitted(slurm_env)[6:] == ["rs_bs16", "rs_bs32", "rs_bs128", "rs_bs256"]
    lines = again.stderr.splitlines()
    start = lines.index(f"resume {recipe}: 6 points: 1 reused, 4 to run, 1 still running")
    table = lines[start + 3 : start + 9]
    rows = [line.split() for line in table]
    assert [(r[0], r[1], r[2], r[3]) for r in rows] == [
        ("rs_bs8", "bs=8", ids["rs_bs8"], "reuse"),
        ("rs_bs16", "bs=16", ids["rs_bs16"], "run"),
        ("rs_bs32", "bs=32", ids["rs_bs32"], "run"),
        ("rs_bs64", "bs=64", ids["rs_bs64"], "wait"),
        ("rs_bs128", "bs=128", ids["rs_bs128"], "run"),
        ("rs_bs256", "bs=256", "-", "run"),
    ]
    reasons = [" ".join(r[4:]) for r in rows]
    assert reasons == [
        "valid, reused",
        "failed: exit 1 (agg_w0 exited with 2)",
        "invalid: window_too_short",
        f"running: job {ids['rs_bs64']} has not ended (not submitted again)",
        "invalid: no run with output tokens",
        "no rollup: never started",
    ]
    records = _records(again.stdout)
    assert [(r["status"], r["job_name"]) for r in records] == [
        ("reused", "rs_bs8"),
        ("running", "rs_bs64"),
        ("submitted", "rs_bs16"),
        ("submitted", "rs_bs32"),
        ("submitted", "rs_bs128"),
        ("submitted", "rs_bs256"),
    ]
    # The sweep folder goes on: the reused and waited-for jobs stay its points' jobs, the new
    # ones replace the rest; the reused job counts as done for the sweep report.
    record = decode_sweep_record((folder / SWEEP_FILE).read_bytes())
    now = {r["job_name"]: r.get("slurm_job_id") or r["job_id"] for r in records}
    assert {p.job_name: p.job_id for p in record.points} == now
    assert (folder / "done" / ids["rs_bs8"]).is_file()


def test_points_are_matched_by_their_recipe_not_by_position(
    invoke: Invoke, data: Path, tmp_path: Path, slurm_env: dict[str, str]
) -> None:
    out = tmp_path / "out"
    recipe = _recipe(data, tmp_path, [8, 16])
    first = invoke("apply", "-f", str(recipe), "-o", str(out), "--json", env=slurm_env)
    for record in _records(first.stdout):
        job = out / str(record["slurm_job_id"])
        _ended(job, "completed", 0)
        _rollup(job, 50)
    # The same sweep with its values reordered and one added; with -f and no SWEEP_DIR the
    # earlier jobs are found in the output folder.
    recipe = _recipe(data, tmp_path, [32, 16, 8])
    again = invoke("apply", "-f", str(recipe), "-o", str(out), "--resume", env=slurm_env)
    assert again.exit_code == 0, again.output
    assert _submitted(slurm_env) == ["rs_bs8", "rs_bs16", "rs_bs32"]
    assert f"resume {recipe}: 3 points: 2 reused, 1 to run, 0 still running" in again.stdout
    # A different --set makes every point a new one: nothing is reused.
    changed = ("apply", "-f", str(recipe), "-o", str(out), "--resume", "--set", "benchmark.isl=64")
    third = invoke(*changed, env=slurm_env)
    assert third.exit_code == 0, third.output
    assert "3 points: 0 reused, 3 to run, 0 still running" in third.stdout
    assert _submitted(slurm_env)[3:] == ["rs_bs32", "rs_bs16", "rs_bs8"]


def test_resume_usage_errors(
    invoke: Invoke, data: Path, tmp_path: Path, slurm_env: dict[str, str]
) -> None:
    missing = invoke("apply", "--resume", str(tmp_path), env=slurm_env)
    assert missing.exit_code == 2
    assert f"--resume {tmp_path}: no sweep.json there; name a sweep folder" in missing.stderr
    no_file = invoke("apply", "--resume", env=slurm_env)
    assert no_file.exit_code == 2
    assert "missing -f/--file: name a recipe (or --resume SWEEP_DIR" in no_file.stderr
    out = tmp_path / "out"
    first = invoke("apply", "-f", str(_recipe(data, tmp_path, [8])), "-o", str(out), env=slurm_env)
    folder = _sweep_folder(first.stdout)
    other = invoke("apply", "--resume", str(folder), "-o", str(tmp_path / "x"), env=slurm_env)
    assert other.exit_code == 2
    assert f"its jobs are in {out.resolve()}, not in -o {tmp_path / 'x'}; drop -o" in other.stderr
    setting = invoke("apply", "--resume", str(folder), "--set", "a=1", env=slurm_env)
    assert setting.exit_code == 2
    assert "without -f applies the sweep as it was" in setting.stderr


def test_credentials_are_never_stored_for_a_resume(
    invoke: Invoke, data: Path, tmp_path: Path, slurm_env: dict[str, str]
) -> None:
    recipe = _recipe(data, tmp_path, [8])
    out = tmp_path / "out"
    secret = "environment.HF_TOKEN=hunter2"
    first = invoke("apply", "-f", str(recipe), "-o", str(out), "--set", secret, env=slurm_env)
    assert first.exit_code == 0, first.output
    folder = _sweep_folder(first.stdout)
    stored = json.loads((folder / "sweep-source.json").read_text())
    assert stored["sets"] is None and stored["text"] is not None
    assert "hunter2" not in (folder / "sweep-source.json").read_text()
    again = invoke("apply", "--resume", str(folder), env=slurm_env)
    assert again.exit_code == 2
    assert "a --set value of the sweep holds credentials, which srtctl does not store" in (
        again.stderr
    )
    # With the recipe and the --set given again, the resume runs (and reuses nothing: the
    # job never ended).
    given = ("apply", "-f", str(recipe), "--set", secret, "--resume", str(folder))
    resumed = invoke(*given, env=slurm_env)
    assert resumed.exit_code == 0, resumed.output
    assert "1 points: 0 reused, 1 to run, 0 still running" in resumed.stdout
