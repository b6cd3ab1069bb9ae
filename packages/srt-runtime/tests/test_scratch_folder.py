"""Issue 32 item 6: the job's scratch (``JobPlan.scratch``) is a private folder of the job, made
before anything starts and removed at the end; a path that is not a folder of its own (a
symlink planted there) is refused, never followed."""

from __future__ import annotations

import stat
from pathlib import Path

from rt_plans import execute, plan, spec


def _bench(script: str) -> object:
    return spec("bench", ("sh", "-c", script), kind="benchmark", phase="benchmark")


def test_the_scratch_is_private_while_the_job_runs_and_gone_after(job_dir: Path) -> None:
    scratch = job_dir / "logs" / "scratch"
    seen = job_dir / "seen"
    script = f'stat -c %a "{scratch}" > "{seen}" && echo x > "{scratch}/buffer"'
    run = execute(plan(_bench(script), scratch="scratch"), job_dir)  # type: ignore[arg-type]
    assert run.exit_code == 0, run.diagnosis
    assert seen.read_text().strip() == "700"
    assert not scratch.exists()


def test_a_scratch_left_by_an_earlier_run_is_emptied_and_said(job_dir: Path) -> None:
    scratch = job_dir / "logs" / "scratch"
    scratch.mkdir(mode=0o777)
    (scratch / "old").write_text("stale")
    script = f'test ! -e "{scratch}/old" && test "$(stat -c %a "{scratch}")" = 700'
    run = execute(plan(_bench(script), scratch="scratch"), job_dir)  # type: ignore[arg-type]
    assert run.exit_code == 0, run.diagnosis
    assert "was left by an earlier run of this job: emptied" in run.log("sweep_4242.log")


def test_a_symlink_in_place_of_the_scratch_is_refused_and_not_followed(
    job_dir: Path, tmp_path: Path
) -> None:
    target = tmp_path / "elsewhere"
    target.mkdir()
    (target / "keep").write_text("mine")
    (job_dir / "logs" / "scratch").symlink_to(target)
    ran = job_dir / "ran"
    run = execute(plan(_bench(f'touch "{ran}"'), scratch="scratch"), job_dir)  # type: ignore[arg-type]
    assert run.exit_code == 1
    assert "exists and is not a folder (a symlink or a file)" in run.diagnosis
    assert not ran.exists()
    assert (target / "keep").read_text() == "mine"
    assert stat.S_ISLNK((job_dir / "logs" / "scratch").lstat().st_mode)


def test_a_plan_without_a_scratch_makes_none(job_dir: Path) -> None:
    run = execute(plan(_bench("true")), job_dir)  # type: ignore[arg-type]
    assert run.exit_code == 0
    assert not (job_dir / "logs" / "scratch").exists()
