"""The recipe surface of issue 20 in real local jobs (`srtctl apply --local`: the Dynamo frontend,
two Dynamo mocker workers, the sa-bench client): `benchmark.capacity` searches for the highest
concurrency (or request rate) meeting a latency target and prints it with every point it
measured; `benchmark.workload` sends multi-turn conversations whose prompt tokens the server's
usage counts exactly as the client does.

Jobs bind fixed ports: run under `flock /tmp/srt-jobs.lock`.
"""

from __future__ import annotations

import json
import math
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from replay_power import NODE_POWER_W, replayed_power

ROOT = Path(__file__).resolve().parents[1]
MODEL = ROOT / "examples" / "models" / "tiny-word"

pytestmark = pytest.mark.slow


def _apply(
    tmp_path: Path, telemetry: dict[str, Any] | None = None, **bench: Any
) -> tuple[Path, str]:
    doc = yaml.safe_load((ROOT / "examples" / "quickstart.yaml").read_text())
    if telemetry is not None:
        doc["telemetry"] = telemetry
    doc["model"]["path"] = str(MODEL)
    doc["benchmark"].pop("concurrencies")
    doc["benchmark"].update(bench)
    recipe = tmp_path / "recipe.yaml"
    recipe.write_text(yaml.safe_dump(doc, sort_keys=False))
    srtctl = shutil.which("srtctl")
    assert srtctl is not None, "srtctl is not installed in this environment (make sync)"
    out = tmp_path / "out"
    done = subprocess.run(
        [srtctl, "apply", "--local", "-f", str(recipe), "-o", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-4000:]
    [job_dir] = [p for p in out.iterdir() if p.is_dir() and p.name.startswith("local-")]
    return job_dir / "logs", output


def test_a_mocker_job_with_a_latency_target_prints_its_capacity_and_points(
    tmp_path: Path,
) -> None:
    capacity = {"targets": {"ttft_p99_ms": 200}, "max_concurrency": 128, "max_points": 6}
    logs, output = _apply(
        tmp_path,
        isl=64,
        osl=32,
        num_prompts_mult=4,
        num_warmup_mult=1,
        stream_output=True,
        capacity=capacity,
    )
    rollup = json.loads((logs / "benchmark-rollup.json").read_text())
    found = rollup["capacity"]
    points = {p["concurrency"]: p for p in found["points"]}
    measured = [p["concurrency"] for p in found["points"]]
    assert measured[0] == 1 and len(measured) <= 6 and max(measured) <= 128
    assert found["status"] in ("found", "at_max", "max_points"), found["stopped"]
    assert found["capacity"] is not None and points[found["capacity"]]["meets"]
    if found["next_up"] is not None:
        assert not points[found["next_up"]]["meets"]
    # every measured point is a run of the rollup (with its verdict) and has its result file
    assert sorted(r["concurrency"] for r in rollup["runs"]) == sorted(measured)
    assert all("validity" in r for r in rollup["runs"])
    for point in found["points"]:
        assert (logs / point["result_path"]).is_file()
        assert point["readings"][0]["target"] == "ttft_p99_ms"
    # the benchmark log (mirrored to srtctl's output by stream_output) says it in plain words
    log = (logs / "benchmark.out").read_text()
    summary = (
        f"capacity: {found['status']}: capacity {found['capacity']} ({len(measured)} points "
        f"measured: {', '.join(map(str, measured))})"
    )
    for text in (log, output):
        assert summary in text
        assert f"capacity: {found['statement']}" in text
        for i, c in enumerate(measured, start=1):
            assert f"capacity: point {i}: concurrency {c}: " in text


def test_a_mocker_job_searching_the_request_rate_prints_its_capacity_and_points(
    tmp_path: Path,
) -> None:
    capacity = {
        "axis": "request_rate",
        "targets": {"ttft_p99_ms": 200},
        "min_request_rate": 2,
        "max_request_rate": 32,
        "request_rate_step": 0.5,
        "seconds_per_point": 4,
        "max_points": 5,
    }
    logs, output = _apply(
        tmp_path,
        isl=64,
        osl=32,
        num_warmup_mult=1,
        stream_output=True,
        capacity=capacity,
    )
    rollup = json.loads((logs / "benchmark-rollup.json").read_text())
    found = rollup["capacity"]
    assert found["axis"] == "request_rate"
    assert found["status"] in ("found", "at_max", "max_points"), found["stopped"]
    rates = [p["request_rate"] for p in found["points"]]
    assert rates[0] == 2.0 and len(rates) == len(set(rates)) <= 5 and max(rates) <= 32
    # every rate is on the grid of request_rate_step 0.5 (the search never measures between)
    assert all(r * 2 == int(r * 2) for r in rates), rates
    points = {p["request_rate"]: p for p in found["points"]}
    assert found["capacity_request_rate"] is not None
    assert points[found["capacity_request_rate"]]["meets"]
    if found["next_up_request_rate"] is not None:
        assert not points[found["next_up_request_rate"]]["meets"]
    # every point is a run of the rollup (with its verdict), with its own result file whose
    # request_rate is the point's and whose requests are ceil(rate x 4 s)
    assert sorted(r["concurrency"] for r in rollup["runs"]) == sorted(
        p["concurrency"] for p in found["points"]
    )
    assert all("validity" in r for r in rollup["runs"])
    for point in found["points"]:
        result = json.loads((logs / point["result_path"]).read_text())
        assert result["request_rate"] == point["request_rate"]
        assert result["completed"] + result["failed"] == math.ceil(point["request_rate"] * 4)
        assert point["result_path"].endswith(f"_rate_{point['request_rate']:g}.json")
    log = (logs / "benchmark.out").read_text()
    shown = ", ".join(f"{r:g} req/s" for r in rates)
    summary = (
        f"capacity: {found['status']}: capacity {found['capacity_request_rate']:g} req/s "
        f"({len(rates)} points measured: {shown})"
    )
    for text in (log, output):
        assert summary in text
        assert f"capacity: {found['statement']}" in text
        for i, r in enumerate(rates, start=1):
            assert f"capacity: point {i}: request rate {r:g} req/s: " in text


def test_a_multi_turn_job_sends_what_the_server_counts(tmp_path: Path) -> None:
    workload = {"type": "multi-turn", "turns": 3, "think_time_s": 0.01, "conversations": 6}
    logs, _ = _apply(
        tmp_path,
        isl=32,
        osl=16,
        random_range_ratio=1.0,
        num_warmup_mult=1,
        concurrencies=[4],
        workload=workload,
    )
    (path,) = logs.glob("sa-bench_multi-turn_isl_32_osl_16/results_concurrency_4_gpus_2.json")
    doc = json.loads(path.read_text())
    assert doc["failed"] == 0 and doc["completed"] == 6 * 3
    # every output token count came from the server's usage
    assert doc["output_token_sources"] == {"usage": 18}
    assert doc["total_output_tokens"] == sum(doc["output_lens"]) > 0
    w = doc["workload"]
    assert (w["kind"], w["conversations"], w["turns"]) == ("multi-turn", 6, 3)
    # the prompt tokens the client built (history included) are the ones the server counted
    assert w["prompt_token_mismatches"] == 0
    assert w["client_prompt_tokens"] == w["server_prompt_tokens"] == sum(doc["input_lens"])
    # turn k carries the k earlier user texts and answers: prompts grow within a conversation
    lens = doc["input_lens"]
    assert all(lens[i] < lens[i + 1] < lens[i + 2] for i in range(0, 18, 3))
    rollup = json.loads((logs / "benchmark-rollup.json").read_text())
    (run,) = rollup["runs"]
    assert run["workload"] == "multi-turn" and run["prompt_token_mismatches"] == 0


@pytest.mark.parametrize(
    "search",
    [
        {
            "num_prompts_mult": 4,
            "capacity": {"targets": {"ttft_p99_ms": 200}, "max_concurrency": 32, "max_points": 3},
        },
        {
            "capacity": {
                "axis": "request_rate",
                "targets": {"ttft_p99_ms": 200},
                "min_request_rate": 4,
                "max_request_rate": 32,
                "request_rate_step": 1,
                "seconds_per_point": 4,
                "max_points": 3,
            }
        },
    ],
    ids=["concurrency", "request-rate"],
)
def test_power_is_measured_at_every_point_the_search_chose(
    tmp_path: Path, search: dict[str, Any]
) -> None:
    """The plan cannot list a search's windows: the power finalize takes the ones it stamped, so
    each measured point has its energy and the capture is publishable (on the rate axis too,
    where a point's window is keyed by its request count)."""
    logs, _ = _apply(
        tmp_path, telemetry=replayed_power(), isl=64, osl=32, num_warmup_mult=1, **search
    )
    rollup = json.loads((logs / "benchmark-rollup.json").read_text())
    measured = sorted(p["concurrency"] for p in rollup["capacity"]["points"])
    assert len(measured) >= 2
    manifest = json.loads((logs / "power" / "manifest.json").read_text())
    assert [w["concurrency"] for w in manifest["expected_windows"]] == measured
    assert manifest["publication_valid"] is True, manifest["reason_codes"]
    assert rollup["power"]["publication_valid"] is True
    for run in rollup["runs"]:
        energy = run["energy"]
        assert energy["gpu_avg_power_w"] == pytest.approx(NODE_POWER_W, rel=0.02), run
        assert energy["joules_per_output_token"] > 0
