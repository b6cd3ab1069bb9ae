"""srt-telemetry installed alone: a fresh virtual environment with only this package, its
`--help`, and a real scrape that imports no other `srt_*` module
(docs/design.md#packages-and-imports)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import polars as pl
import pytest
from telemetry_fakes.replay import replay_server
from telemetry_testkit import DATA, HERE

PACKAGE = HERE.parent
WORKSPACE = ["srt_schema", "srt_planner", "srt_runtime", "srt_bench", "srt_cli"]

# Runs `srt-telemetry scrape` in-process, stops it with a real SIGTERM ~1 s after it starts, reports
# which srt_* modules were imported and which other workspace packages are installed at all.
PROBE = r"""
import importlib.util, json, os, signal, sys, threading, time
from srt_telemetry.cli import main
cfg = json.load(open(sys.argv[1]))

def stop_later():
    # the SIGTERM handler is installed before the scraper creates its storage directory
    while not os.path.isdir(cfg["storage"]):
        time.sleep(0.05)
    time.sleep(1.0)
    os.kill(os.getpid(), signal.SIGTERM)

threading.Thread(target=stop_later, daemon=True).start()
code = main(["scrape", "--config", sys.argv[1]])
loaded = sorted({m.split(".")[0] for m in sys.modules if m.startswith("srt_")})
installed = [m for m in WORKSPACE if importlib.util.find_spec(m)]
print(json.dumps({"code": code, "loaded": loaded, "installed": installed}), file=sys.stderr)
""".replace("WORKSPACE", repr(WORKSPACE))


@pytest.fixture(scope="module")
def alone_python(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The interpreter of an environment holding srt-telemetry and nothing else of ours."""
    if os.environ.get("SRT_ALONE") == "1":  # .ci/test-alone.sh already is that environment
        return Path(sys.executable)
    uv = shutil.which("uv")
    assert uv is not None, "uv is needed to build the fresh virtual environment"
    venv = tmp_path_factory.mktemp("alone") / "venv"
    subprocess.run([uv, "venv", "--quiet", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [uv, "pip", "install", "--quiet", "--python", str(python), str(PACKAGE)], check=True
    )
    return python


@pytest.mark.slow
def test_help_and_a_real_scrape_alone(alone_python: Path, tmp_path: Path) -> None:
    script = alone_python.parent / "srt-telemetry"
    helped = subprocess.run([str(script), "--help"], capture_output=True, text=True, check=True)
    for command in ("scrape", "power", "cpu-power", "dashboard", "compact"):
        assert command in helped.stdout
    body = (DATA / "dcgm-excerpt.txt").read_text()
    with replay_server({"/metrics": body}) as srv:
        cfg = tmp_path / "scrape.json"
        cfg.write_text(
            json.dumps(
                {
                    "storage": str(tmp_path / "raw" / "scrape"),
                    "local_dir": str(tmp_path / "local"),
                    "save_interval_secs": 0.5,
                    "endpoints": [
                        {
                            "name": "dcgm_n1",
                            "url": srv.url("/metrics"),
                            "filter": "dcgm",
                            "collect_interval_ms": 100,
                        }
                    ],
                }
            )
        )
        res = subprocess.run(
            [str(alone_python), "-c", PROBE, str(cfg)],
            check=False,
            capture_output=True,
            text=True,
            timeout=120,
        )
    assert res.returncode == 0, res.stderr
    report = json.loads(res.stderr.strip().splitlines()[-1])
    assert report == {"code": 0, "loaded": ["srt_telemetry"], "installed": []}
    summary = json.loads(res.stdout)
    df = pl.read_parquet(tmp_path / "raw" / "scrape" / "final.parquet")
    assert df.height == summary["final_rows"] == 12 * summary["scrapes"]["dcgm_n1"] > 0
