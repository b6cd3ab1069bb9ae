"""``observability.tachometer.extra_metadata``: a real local run's scraper writes the recipe's
static key/value pairs as columns of every row it saves (every endpoint: workers, frontend)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import polars as pl
import pytest

ROOT = Path(__file__).resolve().parents[1]

pytestmark = pytest.mark.slow


def test_extra_metadata_lands_in_every_row(tmp_path: Path) -> None:
    srtctl = shutil.which("srtctl")
    assert srtctl is not None, "srtctl is not installed in this environment (make sync)"
    argv = [srtctl, "apply", "--local", "-f", "examples/quickstart.yaml", "-o", str(tmp_path)]
    argv += ["--set", "observability.tachometer.extra_metadata.sweep_tag=s1"]
    argv += ["--set", "observability.tachometer.extra_metadata.node=not-mine"]
    done = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [job_dir] = [p for p in tmp_path.iterdir() if p.is_dir() and p.name.startswith("local-")]
    logs = job_dir / "logs"
    final = logs / "tachometer" / "final.parquet"
    if not final.exists():
        tails = [(logs / n) for n in ("tachometer.out", f"sweep_{job_dir.name}.log")]
        shown = "\n".join(f"--- {t.name}\n{t.read_text()[-3000:]}" for t in tails if t.exists())
        raise AssertionError(f"no {final}\n{shown}")
    rows = pl.read_parquet(final)
    assert rows.height > 0
    assert rows["sweep_tag"].to_list() == ["s1"] * rows.height
    # srt's own column is not replaced by a recipe key of the same name.
    assert set(rows["hostname"].unique()) == {"node-01"}
    endpoints = set(rows["scraper_endpoint"].unique())
    assert {"frontend_0", "agg_0_node-01", "agg_1_node-01"} <= endpoints
