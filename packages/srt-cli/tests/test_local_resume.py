"""A real 6-point local sweep stopped in the middle, then resumed (issue 19 item 5).

``srtctl apply --local`` of a Dynamo mocker sweep over the workers' ``--block-size``: one value
the mocker refuses (that point fails), SIGTERM to apply while the fifth point runs (it ends
``cancelled``, the sixth never starts). One of the completed points is then given the verdict
the validity step writes for an invalid window (``window_too_short``). ``srtctl apply --resume
SWEEP_DIR`` must print the table and run again exactly the failed, invalid, cancelled and missing
points: four new job folders, for those points, and none for the two valid ones.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

import pytest
import yaml
from local_jobs import MARKER, ROOT, SRTCTL
from local_jobs import job_status as _status
from local_jobs import wait_for as _wait_for

pytestmark = pytest.mark.slow

VALUES = [16, 32, "bad", 64, 128, 256]
NAMES = [f"rs_bs{v}" for v in VALUES]


def _recipe(folder: Path) -> Path:
    doc = yaml.safe_load((ROOT / "examples" / "quickstart.yaml").read_text())
    doc["name"] = "rs"
    doc["model"]["path"] = str(ROOT / "examples" / "models" / "tiny-word")
    doc["roles"]["agg"] = {"nodes": 1, "workers": 1, "args": {"block-size": "{bs}"}}
    doc["benchmark"]["concurrencies"] = [2]
    doc["health_check"] = {"max_attempts": 30, "interval_seconds": 1}
    doc["sweep"] = {"bs": VALUES}
    path = folder / "sweep.yaml"
    path.write_text(yaml.safe_dump(doc, sort_keys=False))
    return path


def _jobs(out: Path) -> dict[str, list[Path]]:
    """Job folders by job name, oldest first. A folder whose job record is not written yet (apply
    makes the folder first) is left out until it is."""
    found: dict[str, list[Path]] = {}
    for job_dir in sorted(p for p in out.iterdir() if p.name.startswith("local-")):
        try:
            record = json.loads((job_dir / f"{job_dir.name}.json").read_text())
        except (FileNotFoundError, json.JSONDecodeError):
            continue
        found.setdefault(record["job_name"], []).append(job_dir)
    return found


def _point_id(job_dir: Path) -> str:
    record = json.loads((job_dir / f"{job_dir.name}.json").read_text())
    return str(record["sweep_point"]["id"])


def _make_invalid(job_dir: Path) -> None:
    """What `srt-bench validity` writes for a window shorter than the minimum."""
    path = job_dir / "logs" / "benchmark-rollup.json"
    rollup = json.loads(path.read_text())
    reason = {"code": "window_too_short", "detail": "window 0.4 s < 1 s"}
    rollup["validity"] = {"verdict": "invalid", "reasons": [reason]}
    for run in rollup["runs"]:
        run["validity"] = {"verdict": "invalid", "reasons": [reason]}
    path.write_text(json.dumps(rollup, indent=2))


def test_a_stopped_sweep_resumes_only_its_missing_failed_and_invalid_points(
    tmp_path: Path, marker: str
) -> None:
    recipe = _recipe(tmp_path)
    out = tmp_path / "out"
    env = {**os.environ, MARKER: marker}
    child = subprocess.Popen(
        [*SRTCTL, "apply", "--local", "-f", str(recipe), "-o", str(out)],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    try:

        def fifth_running() -> bool:
            jobs = _jobs(out) if out.is_dir() else {}
            fifth = jobs.get(NAMES[4])
            return bool(fifth) and _status(fifth[0]).get("status") == "running"

        _wait_for(fifth_running, "the fifth point's job", 300, child)
        child.send_signal(signal.SIGTERM)
        first, _ = child.communicate(timeout=120)
    finally:
        if child.poll() is None:
            child.kill()
            child.communicate()
    assert child.returncode == 4, first[-3000:]
    jobs = _jobs(out)
    assert sorted(jobs) == sorted(NAMES[:5]), first[-3000:]  # the sixth never started
    outcome = {name: _status(dirs[0])["status"] for name, dirs in jobs.items()}
    assert outcome == {
        "rs_bs16": "completed",
        "rs_bs32": "completed",
        "rs_bsbad": "failed",
        "rs_bs64": "completed",
        "rs_bs128": "cancelled",
    }, first[-3000:]
    (sweep_line,) = [x for x in first.splitlines() if x.startswith("sweep of 6 jobs: ")]
    sweep_dir = Path(sweep_line.split(": ", 1)[1])
    assert f"1 of 6 jobs of {recipe} not started; srtctl apply --resume {sweep_dir}" in first
    _make_invalid(jobs["rs_bs32"][0])
    before = {name: dirs[0] for name, dirs in jobs.items()}

    again = subprocess.run(
        [*SRTCTL, "apply", "--local", "--resume", str(sweep_dir)],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    said = again.stdout + again.stderr
    assert again.returncode == 4, said[-3000:]  # bs=bad fails again
    start = said.index(f"resume {recipe}: 6 points: 2 reused, 4 to run, 0 still running\n")
    rows = said[start:].splitlines()[3:9]
    table = {row.split()[0]: row for row in rows}
    assert list(table) == NAMES
    for name in ("rs_bs16", "rs_bs64"):
        assert f"{before[name].name}  reuse   valid, reused" in table[name]
    assert f"{before['rs_bs32'].name}  run     invalid: window_too_short" in table["rs_bs32"]
    assert f"{before['rs_bsbad'].name}  run     failed: exit 1 (" in table["rs_bsbad"]
    cancelled = f"{before['rs_bs128'].name}  run     cancelled: exit 1 (stopped: received SIGTERM"
    assert cancelled in table["rs_bs128"]
    assert table["rs_bs256"].split()[1:] == [
        "bs=256",
        "-",
        "run",
        "no",
        "rollup:",
        "never",
        "started",
    ]

    after = _jobs(out)
    new = {name: [d for d in dirs if d not in before.values()] for name, dirs in after.items()}
    assert {name: len(dirs) for name, dirs in new.items()} == {
        "rs_bs16": 0,
        "rs_bs32": 1,
        "rs_bsbad": 1,
        "rs_bs64": 0,
        "rs_bs128": 1,
        "rs_bs256": 1,
    }
    for name in ("rs_bs32", "rs_bs128"):
        # the same point (its identity), run again
        assert _point_id(new[name][0]) == _point_id(before[name])
        assert _status(new[name][0])["status"] == "completed"
    assert _status(new["rs_bsbad"][0])["status"] == "failed"
    assert _status(new["rs_bs256"][0])["status"] == "completed"
    # The sweep folder now names the reused jobs and the new ones.
    record = json.loads((sweep_dir / "sweep.json").read_text())
    expected = {n: (new[n] or [before[n]])[0].name for n in NAMES}
    assert {p["job_name"]: p["job_id"] for p in record["points"]} == expected
