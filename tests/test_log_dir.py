"""``output.log_dir`` moves a job's logs: a real local run writes every log there, and the job
folder's ``logs`` links to it, so ``srtctl status`` and ``srtctl logs`` still find them."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def _srtctl() -> str:
    srtctl = shutil.which("srtctl")
    assert srtctl is not None, "srtctl is not installed in this environment (make sync)"
    return srtctl


def test_output_log_dir_receives_the_logs(tmp_path: Path) -> None:
    out, elsewhere = tmp_path / "out", tmp_path / "scratch"
    template = f"{elsewhere}/{{run_name}}/logs"
    argv = [_srtctl(), "apply", "--local", "-f", "examples/quickstart.yaml", "-o", str(out)]
    argv += ["--set", f"output.log_dir={template}", "--set", "benchmark.concurrencies=[4]"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [job_dir] = [p for p in out.iterdir() if p.is_dir() and p.name.startswith("local-")]
    plan = json.loads((job_dir / "plan.json").read_text())
    [moved] = list(elsewhere.iterdir())
    assert moved.name == f"quickstart_{job_dir.name}"  # {run_name} = <name>_<job_id>
    logs = moved / "logs"
    assert (job_dir / "logs").resolve() == logs.resolve()
    for name in ("node-01_agg_w0.out", "node-01_frontend_0.out", "benchmark.out"):
        assert (logs / name).stat().st_size > 0, name
    assert (logs / "benchmark-rollup.json").is_file()
    # Every process was told the moved folder (the plan is what ran).
    benchmark = next(p for p in plan["processes"] if p["name"] == "benchmark")
    assert f"{logs.resolve()}/bench.json" in benchmark["argv"]
    shown = subprocess.run(
        [_srtctl(), "logs", "-o", str(out), job_dir.name],
        capture_output=True,
        text=True,
        check=False,
    )
    assert shown.returncode == 0, shown.stderr
    assert "benchmark.out" in shown.stdout
    tail = subprocess.run(
        [_srtctl(), "logs", "-o", str(out), job_dir.name, "-p", "benchmark"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert tail.returncode == 0, tail.stderr
    assert tail.stdout.strip()


def test_a_log_dir_that_holds_another_jobs_files_is_refused(tmp_path: Path) -> None:
    taken = tmp_path / "logs"
    taken.mkdir()
    (taken / "old.out").write_text("x\n")
    argv = [_srtctl(), "apply", "--local", "-f", "examples/quickstart.yaml"]
    argv += ["-o", str(tmp_path / "out"), "--set", f"output.log_dir={taken}"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 2, done.stdout + done.stderr
    assert f"output.log_dir {taken} already holds files" in done.stderr
